//! Tests of scenario parsing, checking and the dumbbell layout.

use super::*;
use cclab_cc::{Bbr1Config, Bbr3Config, CcSpec, CubicConfig, EcnMode, Robust, SlowStartKind, Tas};
use cclab_sim::{FlowId, NodeId};
use cclab_sim::{LinkConfig, LossConfig, NodeKind, QueueConfig, QueueLimit, ScriptedDrop};
use cclab_sim::{PacingMode, Time};

const BASE: &str = r#"
name = "t"
[topology]
preset = "dumbbell"
rate = "100Mbit"
delay = "10ms"
"#;

fn ok(text: &str) -> Scenario {
    match parse(text, "t.toml", &Overrides::default()) {
        Ok(s) => s,
        Err(e) => panic!("unexpected error: {e}"),
    }
}

fn err(text: &str) -> String {
    match parse(text, "t.toml", &Overrides::default()) {
        Ok(_) => panic!("expected an error for:\n{text}"),
        Err(e) => e.to_string(),
    }
}

fn with_flows(extra_topology: &str, flows: &str) -> String {
    let nl = if extra_topology.is_empty() { "" } else { "\n" };
    format!("{BASE}{extra_topology}{nl}{flows}")
}

#[test]
fn minimal_scenario_gets_defaults() {
    let s = ok(&with_flows("", "[[flows]]\ncontroller = \"cubic\"\n"));
    assert_eq!(s.name, "t");
    assert_eq!(s.seed, 1);
    assert_eq!(s.duration, Dur::from_secs(30));
    assert_eq!(s.sample_interval, Dur::from_millis(200));
    assert_eq!(s.flows.len(), 1);
    let f = &s.flows[0];
    assert_eq!(f.name, "cubic0");
    assert_eq!(f.cc, CcSpec::default_for("cubic").unwrap());
    assert_eq!(f.mss, 1448);
    assert_eq!(f.start, Time::ZERO);
    assert_eq!(f.stop, None);
    assert_eq!(f.size, None);
    assert_eq!(f.pacing, PacingMode::Auto);
    assert!(!f.trace);
    assert!(!s.to_sim_config().flows[0].trace);
    // A scenario file's flow opens with a handshake unless it says otherwise; the
    // simulator's own default (code-built configurations) is without.
    assert!(f.handshake && s.to_sim_config().flows[0].handshake);
    let linux = cclab_sim::FlowConfig::bulk("x", NodeId(0), NodeId(1), f.cc.clone());
    assert!(!linux.handshake);
    let off = ok(&with_flows(
        "",
        "[[flows]]\ncontroller = \"cubic\"\nhandshake = false\n",
    ));
    assert!(!off.flows[0].handshake && !off.to_sim_config().flows[0].handshake);
    assert!(!f.fast_open && !s.to_sim_config().flows[0].fast_open);
    let tfo = ok(&with_flows(
        "",
        "[[flows]]\ncontroller = \"cubic\"\nfast_open = true\n",
    ));
    assert!(tfo.to_sim_config().flows[0].fast_open);
    let e = err(&with_flows(
        "",
        "[[flows]]\ncontroller = \"cubic\"\nhandshake = false\nfast_open = true\n",
    ));
    assert_eq!(
        e,
        "t.toml:10:13: flows[0].fast_open: TCP Fast Open sends data on the SYN: it needs \
         `handshake = true`"
    );
    // Window and receiver defaults: IW 10 (RFC 6928), an ACK per 2 segments (RFC 5681 §4.2),
    // a 40 ms delayed-ACK timer (TCP_DELACK_MIN), the same as the simulator's own defaults.
    assert_eq!(
        (f.initial_window, f.ack_every, f.delayed_ack),
        (10, 2, Dur::from_millis(40))
    );
    let linux = cclab_sim::FlowConfig::bulk("x", NodeId(0), NodeId(1), f.cc.clone());
    let cfg = &s.to_sim_config().flows[0];
    assert_eq!(
        (cfg.initial_window, cfg.ack_every, cfg.delack_timeout),
        (linux.initial_window, linux.ack_every, linux.delack_timeout)
    );
    // Undo, F-RTO and RACK's adaptive window: on, as in Linux and the simulator.
    assert_eq!(
        (cfg.undo, cfg.frto, cfg.rack_reo_adapt),
        (linux.undo, linux.frto, linux.rack_reo_adapt)
    );
    assert!(f.undo && f.frto && f.rack_reo_adapt);
    let Some(d) = s.topology.get::<DumbbellPreset>() else {
        panic!("dumbbell expected")
    };
    assert_eq!(d.net.rate_bps, 100_000_000);
    assert_eq!(d.net.reverse_rate_bps, Some(100_000_000));
    assert_eq!(d.net.access_rate_bps, None);
    assert_eq!(d.net.loss, LossConfig::None);
    // Default buffer: 1 BDP = 100 Mbit/s × 20 ms / 8.
    assert_eq!(d.net.queue, QueueLimit::Bytes(250_000));
}

#[test]
fn all_fields_are_read() {
    let s = ok(r#"
name = "full"
description = "everything"
seed = 42
duration = 12.5
sample_interval = "100ms"
[topology]
preset = "dumbbell"
rate = 1e9
delay = "5ms"
buffer = { packets = 100 }
loss = "0.1%"
reverse_rate = "10Mbit"
access_rate = "10Gbit"
[[flows]]
name = "a"
controller = "cubic"
slow_start = "hystart++"
fast_convergence = false
tcp_friendliness = false
start = "1s"
stop = "10s"
size = "10MB"
access_delay = "2.5ms"
mss = 9000
pacing = "on"
initial_window = 32
ack_every = 1
delayed_ack = "0ms"
count = 2
trace = true
[[flows]]
controller = "reno"
slow_start = "standard"
pacing = "off"
initial_window = 1000
ack_every = 64
delayed_ack = 0.2
trace = false
[[probes]]
name = "ping"
interval = 0.5
size = "1KiB"
access_delay = "1ms"
start = "2s"
stop = "3s"
"#);
    assert_eq!(s.description.as_deref(), Some("everything"));
    assert_eq!((s.seed, s.duration), (42, Dur::from_millis(12_500)));
    assert_eq!(s.sample_interval, Dur::from_millis(100));
    let Some(d) = s.topology.get::<DumbbellPreset>() else {
        panic!("dumbbell expected")
    };
    assert_eq!(d.net.rate_bps, 1_000_000_000);
    assert_eq!(d.net.queue, QueueLimit::Packets(100));
    assert_eq!(d.net.loss, LossConfig::Bernoulli { p: 0.001 });
    assert_eq!(d.net.reverse_rate_bps, Some(10_000_000));
    assert_eq!(d.net.access_rate_bps, Some(10_000_000_000));
    let names: Vec<&str> = s.flows.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["a-1", "a-2", "reno2"]);
    let a = &s.flows[1];
    assert_eq!(
        a.cc,
        CcSpec::Cubic(CubicConfig {
            slow_start: SlowStartKind::HyStartPlusPlus,
            fast_convergence: false,
            tcp_friendliness: false,
            ..CubicConfig::default()
        })
    );
    assert_eq!(a.start, Time::from_secs_f64(1.0));
    assert_eq!(a.stop, Some(Time::from_secs_f64(10.0)));
    assert_eq!(a.size, Some(10_000_000));
    assert_eq!(a.access_delay, Dur::from_micros(2500));
    assert_eq!((a.mss, a.pacing), (9000, PacingMode::On));
    assert_eq!(s.flows[2].pacing, PacingMode::Off);
    // `trace` is copied to every `count` copy and into the simulator's flow config.
    let traced: Vec<bool> = s.flows.iter().map(|f| f.trace).collect();
    assert_eq!(traced, [true, true, false]);
    let cfg = s.to_sim_config();
    let traced: Vec<bool> = cfg.flows.iter().map(|f| f.trace).collect();
    assert_eq!(traced, [true, true, false]);
    // So are the initial window, `ack_every` and `delayed_ack`.
    let tcp: Vec<(u32, u32, Dur)> = s
        .flows
        .iter()
        .map(|f| (f.initial_window, f.ack_every, f.delayed_ack))
        .collect();
    let want = [
        (32, 1, Dur::ZERO),
        (32, 1, Dur::ZERO),
        (1000, 64, Dur::from_millis(200)),
    ];
    assert_eq!(tcp, want);
    let tcp: Vec<(u32, u32, Dur)> = cfg
        .flows
        .iter()
        .map(|f| (f.initial_window, f.ack_every, f.delack_timeout))
        .collect();
    assert_eq!(tcp, want);
    // `cclab check` shows the non-default values.
    let d = s.describe();
    assert!(
        d.contains("mss 9000  initial window 32  ack every 1  delayed ACK 0 s  traced"),
        "{d}"
    );
    assert!(
        d.contains("initial window 1000  ack every 64  delayed ACK 200 ms\n"),
        "{d}"
    );
    assert_eq!(
        s.probes,
        vec![Probe {
            name: "ping".to_owned(),
            interval: Dur::from_millis(500),
            size: 1024,
            access_delay: Dur::from_millis(1),
            start: Time::from_secs_f64(2.0),
            stop: Some(Time::from_secs_f64(3.0)),
        }]
    );
}

#[test]
fn wrong_controller_names_line_field_and_choices() {
    let text = with_flows("", "[[flows]]\nname = \"x\"\ncontroller = \"cubc\"\n");
    // Line 9 of the text, column 14 is the opening quote of "cubc".
    assert_eq!(
        err(&text),
        "t.toml:9:14: flows[0].controller: unknown controller `cubc`, expected one of: reno, \
         newreno, cubic, cuback, quicly_reno, quicly_cubic, bbr1, bbr1_2brobust, bbr3, \
         bbr3_2brobust, bbr_tas, vegas, prague (did you mean `cubic`?)"
    );
    let text = with_flows("", "[[flows]]\ncontroller = \"bbr2\"\n");
    assert!(
        err(&text).starts_with("t.toml:8:14: flows[0].controller: unknown controller `bbr2`"),
        "{}",
        err(&text)
    );
    // `bbr`, Linux's name for BBRv1, is BBRv1 with its keys.
    let text = with_flows("", "[[flows]]\ncontroller = \"bbr\"\n");
    assert_eq!(ok(&text).flows[0].cc, CcSpec::default_for("bbr1").unwrap());
    let text = with_flows("", "[[flows]]\ncontroller = \"bbr\"\nrobust_alpha = 2.0\n");
    assert!(
        err(&text).contains("flows[0].robust_alpha"),
        "{}",
        err(&text)
    );
}

#[test]
fn unknown_field_lists_valid_fields() {
    let text = format!("{BASE}rtae = 5\n[[flows]]\ncontroller = \"reno\"\n");
    assert_eq!(
        err(&text),
        "t.toml:7:1: topology.rtae: unknown field `rtae`, expected one of: preset, profile, rate, \
         delay, buffer, qdisc, loss, reverse_rate, access_rate, nic_rate, driver_queue, \
         bottleneck_at, drops (did you mean `rate`?)"
    );
    let text = with_flows(
        "",
        "[[flows]]\ncontroller = \"reno\"\n[[flows]]\ncontroler = \"reno\"\n",
    );
    let e = err(&text);
    assert!(
        e.starts_with("t.toml:10:1: flows[1].controler: unknown field `controler`, expected one of: name, controller,"),
        "{e}"
    );
    assert!(e.ends_with("(did you mean `controller`?)"), "{e}");
    // The full list of flow fields, in declaration order, includes `trace` and the window and
    // receiver keys.
    let e = err(&with_flows(
        "",
        "[[flows]]\ncontroller = \"reno\"\ntrcae = true\n",
    ));
    assert_eq!(
        e,
        "t.toml:9:1: flows[0].trcae: unknown field `trcae`, expected one of: name, controller, \
         slow_start, jumpstart_rtt, cr_saved_cwnd, cr_saved_rtt, cr_max_jump, cr_beta, \
         chirp_size, chirp_initial_gap, chirp_geometry, chirp_gain, chirp_excursion, \
         fast_convergence, tcp_friendliness, beta, c, abba, beta_ecn, engine, normalize_mtu, \
         robust, robust_rounds, robust_alpha, ecn_response, startup_shift, steady_shift, alpha, gamma, rtt_target, \
         rtt_independence, rtt_transition, start, stop, size, access_delay, mss, pacing, ecn, \
         initial_window, rcv_wnd, read_rate, read_chunk, rcvbuf, ack_every, delayed_ack, undo, frto, rack_reo_adapt, \
         stack, loss_detection, tlp, rto_min, rto_rule, ts_clock, cc_rtt, quickack, \
         sack_compression, host_offloads, count, \
         arrivals, size_cdf, trace, handshake, fast_open, requests, request_size, think_time, \
         persistent, slow_start_after_idle, transport, quic_datagram, quic_framing, \
         quic_ip_udp_overhead, quic_max_ack_delay, quic_clock, host (did you mean `trace`?)"
    );
    let e = err(&with_flows(
        "",
        "[[flows]]\ncontroller = \"reno\"\ntrace = \"yes\"\n",
    ));
    assert!(e.starts_with("t.toml:9:9: flows[0].trace: "), "{e}");
    let e = err(&with_flows(
        "",
        "[[flows]]\ncontroller = \"reno\"\nhandshake = \"yes\"\n",
    ));
    assert!(
        e.starts_with(
            "t.toml:9:13: flows[0].handshake: invalid type: string \"yes\", expected a boolean"
        ),
        "{e}"
    );
    let e = err(&format!("nmae = 1\n{BASE}"));
    assert!(
        e.starts_with("t.toml:1:1: nmae: unknown field `nmae`"),
        "{e}"
    );
}

#[test]
fn unknown_enum_values_list_choices() {
    let e = err(&with_flows(
        "",
        "[[flows]]\ncontroller = \"reno\"\npacing = \"fast\"\n",
    ));
    assert_eq!(
        e,
        "t.toml:9:10: flows[0].pacing: unknown value `fast`, expected one of: auto, on, off"
    );
    let e = err(&with_flows(
        "",
        "[[flows]]\ncontroller = \"reno\"\nslow_start = \"hystrat\"\n",
    ));
    assert_eq!(
        e,
        "t.toml:9:14: flows[0].slow_start: unknown slow start `hystrat`, expected one of: \
         standard, hystart, hystart++, jumpstart, suss, careful_resume, chirping (did you mean `hystart`?)"
    );
    let e = err("name = \"t\"\n[topology]\npreset = \"dumbell\"\n");
    assert_eq!(
        e,
        "t.toml:3:10: topology.preset: unknown preset `dumbell`, expected one of: dumbbell, \
         access, rtt_fair, wifi_hybrid, wifi, quicly (did you mean `dumbbell`?)"
    );
}

#[test]
fn unit_errors_point_at_the_value() {
    let e = err(&format!(
        "{BASE}buffer = 100\n[[flows]]\ncontroller = \"reno\"\n"
    ));
    assert!(
        e.starts_with("t.toml:7:10: topology.buffer: a buffer needs a unit"),
        "{e}"
    );
    let text = BASE.replace("\"100Mbit\"", "\"100Mbps\"");
    let e = err(&format!("{text}[[flows]]\ncontroller = \"reno\"\n"));
    assert!(
        e.starts_with("t.toml:5:8: topology.rate: ambiguous rate unit `Mbps`"),
        "{e}"
    );
    let e = err(&with_flows(
        "",
        "[[flows]]\ncontroller = \"reno\"\nstart = \"1 fortnight\"\n",
    ));
    assert!(
        e.starts_with("t.toml:9:9: flows[0].start: unknown duration unit `fortnight`"),
        "{e}"
    );
}

#[test]
fn syntax_errors_have_a_position() {
    let e = err("name = \"t\"\n[topology\n");
    assert!(e.starts_with("t.toml:2:"), "{e}");
    let e = err("name = \n");
    assert!(e.starts_with("t.toml:1:"), "{e}");
}

#[test]
fn missing_fields() {
    let e = err("[topology]\npreset = \"dumbbell\"\nrate = 1\ndelay = 1\n");
    assert_eq!(e, "t.toml:1:1: missing field `name`");
    let e = err("name = \"t\"\n");
    assert_eq!(e, "t.toml:1:1: missing field `topology`");
    let e = err(
        "name = \"t\"\n[topology]\npreset = \"dumbbell\"\nrate = 1\n[[flows]]\ncontroller = \"reno\"\n",
    );
    assert_eq!(
        e,
        "t.toml:2:1: topology.delay: missing `delay`: give `delay`, or a `profile` that sets it \
         (`cclab list profiles`)"
    );
    let e = err(&format!("{BASE}[[flows]]\nstart = 1\n"));
    assert_eq!(e, "t.toml:7:1: flows[0]: missing field `controller`");
    let e = err(BASE);
    assert_eq!(
        e,
        "t.toml:3:1: flows: a scenario needs at least one flow: add a [[flows]] table with a \
         `controller`"
    );
}

#[test]
fn semantic_checks() {
    let flow = "[[flows]]\ncontroller = \"reno\"\n";
    let cases: &[(&str, &str)] = &[
        ("duration = 0\n", "duration: must be positive"),
        (
            "duration = -1\n",
            "duration: a duration must not be negative",
        ),
        (
            "sample_interval = \"0s\"\n",
            "sample_interval: must be positive",
        ),
        (
            "sample_interval = \"40s\"\n",
            "sample_interval: must be positive and at most",
        ),
        (
            "name = \"a/b\"\n",
            "name: `a/b` is not a usable scenario name",
        ),
        (
            "name = \"..\"\n",
            "name: `..` is not a usable scenario name",
        ),
        (
            "seed = -3\n",
            "seed: `-3` is out of range, expected a whole number in 0..=18446744073709551615",
        ),
    ];
    for (top, want) in cases {
        // Top-level keys must come before the first table; `name` may appear once.
        let base = if top.starts_with("name") {
            BASE.replacen("name = \"t\"\n", "", 1)
        } else {
            BASE.to_owned()
        };
        let e = err(&format!("{top}{base}{flow}"));
        assert!(e.contains(want), "want {want:?} in {e:?}");
    }
    let topo: &[(&str, &str)] = &[
        (
            "loss = 1.5\n",
            "topology.loss: a probability must be in [0, 1], got 1.5",
        ),
        (
            "loss = -0.1\n",
            "topology.loss: a probability must be in [0, 1]",
        ),
        (
            "reverse_rate = 0\n",
            "topology.reverse_rate: a rate must be positive",
        ),
        (
            "buffer = \"0p\"\n",
            "topology.buffer: a buffer of 0 packets",
        ),
        (
            "buffer = \"0.001bdp\"\n",
            "topology.buffer: `0.001bdp` resolves to 250 bytes, less than one full-size packet (1500 bytes)",
        ),
        (
            "buffer = { packets = 1, bytes = 5 }\n",
            "topology.buffer: a buffer table needs exactly one of",
        ),
        ("buffer = { pakets = 1 }\n", "unknown field `pakets`"),
    ];
    for (extra, want) in topo {
        let e = err(&format!("{BASE}{extra}{flow}"));
        assert!(e.contains(want), "want {want:?} in {e:?}");
    }
    let flows: &[(&str, &str)] = &[
        (
            "stop = 5\nstart = 5\n",
            "flows[0].stop: stop (5 s) must be after start (5 s)",
        ),
        (
            "start = \"30s\"\n",
            "flows[0].start: starts at 30 s, not before the end of the run (30 s)",
        ),
        (
            "mss = 100\n",
            "flows[0].mss: must be in 536..=9000 bytes, got 100",
        ),
        (
            "mss = 9001\n",
            "flows[0].mss: must be in 536..=9000 bytes, got 9001",
        ),
        (
            "initial_window = 0\n",
            "flows[0].initial_window: must be in 1..=1000 segments, got 0",
        ),
        (
            "initial_window = 1001\n",
            "flows[0].initial_window: must be in 1..=1000 segments, got 1001",
        ),
        (
            "initial_window = -3\n",
            "flows[0].initial_window: must be in 1..=1000 segments, got -3",
        ),
        (
            "initial_window = \"10\"\n",
            "flows[0].initial_window: invalid type: string \"10\", expected a whole number",
        ),
        (
            "ack_every = 0\n",
            "flows[0].ack_every: must be in 1..=64 segments, got 0",
        ),
        (
            "ack_every = 65\n",
            "flows[0].ack_every: must be in 1..=64 segments, got 65",
        ),
        (
            "ack_every = 99999999999\n",
            "flows[0].ack_every: must be in 1..=64 segments, got 99999999999",
        ),
        (
            "delayed_ack = \"500ms\"\n",
            "flows[0].delayed_ack: must be less than 500 ms (RFC 1122 §4.2.3.2), got 500 ms",
        ),
        (
            "delayed_ack = 2\n",
            "flows[0].delayed_ack: must be less than 500 ms (RFC 1122 §4.2.3.2), got 2 s",
        ),
        (
            "delayed_ack = \"-1ms\"\n",
            "flows[0].delayed_ack: a duration must not be negative",
        ),
        (
            "count = 0\n",
            "flows: every [[flows]] table has `count = 0`: a scenario needs at least one flow",
        ),
        (
            "count = 99999999999\n",
            "flows[0].count: must be between 0 and 10000",
        ),
        ("size = 0\n", "flows[0].size: must be positive"),
        (
            "fast_convergence = true\n",
            "flows[0].fast_convergence: `fast_convergence` is a cubic/cuback parameter; controller `reno` has no such parameter",
        ),
        ("name = \"\"\n", "flows[0].name: must not be empty"),
    ];
    for (extra, want) in flows {
        let e = err(&format!("{BASE}{flow}{extra}"));
        assert!(e.contains(want), "want {want:?} in {e:?}");
    }
    let e = err(&format!("{BASE}{flow}name = \"x\"\n{flow}name = \"x\"\n"));
    assert!(
        e.contains("flows[1].name: a flow named `x` already exists"),
        "{e}"
    );
    let e = err(&format!(
        "{BASE}{flow}[[probes]]\nname = \"p\"\n[[probes]]\nname = \"p\"\n"
    ));
    assert!(
        e.contains("probes[1].name: a probe named `p` already exists"),
        "{e}"
    );
    let e = err(&format!("{BASE}{flow}[[probes]]\ninterval = 0\n"));
    assert!(e.contains("probes[0].interval: must be positive"), "{e}");
    let e = err(&format!("{BASE}{flow}[[probes]]\nsize = 10\n"));
    assert!(
        e.contains("probes[0].size: must be in 28..=65535 bytes"),
        "{e}"
    );
    // One out-of-range value with its full location: line 9 is `ack_every = 0`, column 13 the
    // value.
    assert_eq!(
        err(&format!("{BASE}{flow}ack_every = 0\n")),
        "t.toml:9:13: flows[0].ack_every: must be in 1..=64 segments, got 0"
    );
    assert_eq!(
        err(&format!("{BASE}{flow}initial_window = 1001\n")),
        "t.toml:9:18: flows[0].initial_window: must be in 1..=1000 segments, got 1001"
    );
    assert_eq!(
        err(&format!("{BASE}{flow}delayed_ack = \"0.5s\"\n")),
        "t.toml:9:15: flows[0].delayed_ack: must be less than 500 ms (RFC 1122 §4.2.3.2), \
         got 500 ms"
    );
    let e = err(&format!("{BASE}{flow}count = 6000\n{flow}count = 6000\n"));
    assert!(e.contains("flows[1]: too many flows"), "{e}");
}

#[test]
fn overrides_replace_seed_and_duration() {
    let text = with_flows("", "[[flows]]\ncontroller = \"reno\"\nstart = \"5s\"\n");
    let o = Overrides {
        seed: Some(9),
        duration: Some(Dur::from_secs(10)),
    };
    let s = parse(&text, "t.toml", &o).unwrap();
    assert_eq!((s.seed, s.duration), (9, Dur::from_secs(10)));
    let o = Overrides {
        seed: None,
        duration: Some(Dur::from_secs(2)),
    };
    let e = parse(&text, "t.toml", &o).unwrap_err().to_string();
    assert_eq!(
        e,
        "t.toml:9:9: flows[0].start: starts at 5 s, not before the end of the run (2 s) (the \
         run lasts 2 s as `--duration` asks, instead of the file's duration)"
    );
    let o = Overrides {
        seed: None,
        duration: Some(Dur::ZERO),
    };
    let e = parse(&text, "t.toml", &o).unwrap_err().to_string();
    assert_eq!(
        e,
        "t.toml: --duration: the duration override must be positive"
    );
    // The default sample interval shrinks to fit a very short run.
    let o = Overrides {
        seed: None,
        duration: Some(Dur::from_millis(100)),
    };
    let text = with_flows("", "[[flows]]\ncontroller = \"reno\"\n");
    assert_eq!(
        parse(&text, "t", &o).unwrap().sample_interval,
        Dur::from_millis(100)
    );
}

#[test]
fn one_bdp_uses_the_shortest_rtt_flow() {
    let text = with_flows(
        "buffer = \"1bdp\"",
        "[[flows]]\ncontroller = \"reno\"\naccess_delay = \"30ms\"\n\
         [[flows]]\ncontroller = \"reno\"\naccess_delay = \"10ms\"\n",
    );
    let s = ok(&text);
    let Some(d) = s.topology.get::<DumbbellPreset>() else {
        panic!("dumbbell expected")
    };
    // Shortest base RTT = 2 × (10 + 10) ms = 40 ms; 100 Mbit/s × 40 ms / 8 = 500 000 bytes.
    assert_eq!(d.bdp_rtt, Dur::from_millis(40));
    assert_eq!(d.bdp_bytes(), 500_000);
    assert_eq!(d.net.queue, QueueLimit::Bytes(500_000));
    let s = ok(&with_flows(
        "buffer = \"2bdp\"",
        "[[flows]]\ncontroller = \"reno\"\n",
    ));
    let Some(d) = s.topology.get::<DumbbellPreset>() else {
        panic!("dumbbell expected")
    };
    assert_eq!(d.net.queue, QueueLimit::Bytes(500_000));
    let s = ok(&with_flows(
        "buffer = \"50ms\"",
        "[[flows]]\ncontroller = \"reno\"\n",
    ));
    let Some(d) = s.topology.get::<DumbbellPreset>() else {
        panic!("dumbbell expected")
    };
    assert_eq!(d.net.queue, QueueLimit::Bytes(625_000));
    let s = ok(&with_flows(
        "buffer = \"500KB\"",
        "[[flows]]\ncontroller = \"reno\"\n",
    ));
    let Some(d) = s.topology.get::<DumbbellPreset>() else {
        panic!("dumbbell expected")
    };
    assert_eq!(d.net.queue, QueueLimit::Bytes(500_000));
}

#[test]
fn scripted_drops() {
    let flows = "[[flows]]\nname = \"a\"\ncontroller = \"reno\"\n[[flows]]\nname = \"b\"\ncontroller = \"reno\"\n";
    let drops = "[[topology.drops]]\nflow = \"b\"\nseq = 100\n[[topology.drops]]\nflow = 0\nseq = 7\nnth = 1\n";
    let s = ok(&format!("{BASE}{drops}{flows}"));
    let Some(d) = s.topology.get::<DumbbellPreset>() else {
        panic!("dumbbell expected")
    };
    assert_eq!(
        d.net.loss,
        LossConfig::Scripted {
            drops: vec![
                ScriptedDrop {
                    flow: FlowId(1),
                    seq: 100,
                    nth: 0
                },
                ScriptedDrop {
                    flow: FlowId(0),
                    seq: 7,
                    nth: 1
                },
            ]
        }
    );
    let e = err(&format!("{BASE}loss = 0.01\n{drops}{flows}"));
    assert!(
        e.starts_with("t.toml:8:1: topology.drops: cannot combine scripted `drops` with `loss`"),
        "{e}"
    );
    let e = err(&format!(
        "{BASE}[[topology.drops]]\nflow = \"c\"\nseq = 1\n{flows}"
    ));
    assert_eq!(
        e,
        "t.toml:8:8: topology.drops[0].flow: unknown flow `c`, expected one of: a, b"
    );
    let e = err(&format!(
        "{BASE}[[topology.drops]]\nflow = 2\nseq = 1\n{flows}"
    ));
    assert!(
        e.contains("topology.drops[0].flow: no flow with index 2"),
        "{e}"
    );
    let e = err(&format!(
        "{BASE}[[topology.drops]]\nflow = 1\nseq = -1\n{flows}"
    ));
    assert!(
        e.contains("topology.drops[0].seq: must not be negative"),
        "{e}"
    );
}

/// Sum of link delays along the (unique) path `from → … → to` in a dumbbell.
fn path_delay(links: &[LinkConfig], mut from: NodeId, to: NodeId) -> Dur {
    let mut total = Dur::ZERO;
    let mut hops = 0;
    while from != to {
        // In a dumbbell, the next hop from a host is its router; from a router, the other router
        // unless `to` hangs off this one.
        let next = links
            .iter()
            .find(|l| l.from == from && l.to == to)
            .or_else(|| {
                links
                    .iter()
                    .find(|l| l.from == from && (l.to == NodeId(0) || l.to == NodeId(1)))
            })
            .unwrap();
        total += next.delay;
        from = next.to;
        hops += 1;
        assert!(hops < 5);
    }
    total
}

#[test]
fn dumbbell_layout() {
    let text = with_flows(
        "buffer = \"333p\"\nloss = 0.01\naccess_rate = \"1Gbit\"",
        "[[flows]]\ncontroller = \"cubic\"\n\
         [[flows]]\ncontroller = \"reno\"\naccess_delay = \"5ms\"\ncount = 2\n\
         [[probes]]\naccess_delay = \"1ms\"\n",
    );
    let s = ok(&text);
    let cfg = s.to_sim_config();
    assert_eq!(cfg.flows.len(), 3);
    assert_eq!(cfg.probes.len(), 1);
    assert_eq!(cfg.nodes.len(), 2 + 2 * 4);
    assert_eq!(cfg.links.len(), 2 + 4 * 4);
    assert_eq!(cfg.nodes[0].name, "left");
    assert_eq!(cfg.nodes[1].name, "right");
    assert!(cfg.nodes[..2].iter().all(|n| n.kind == NodeKind::Router));
    assert!(cfg.nodes[2..].iter().all(|n| n.kind == NodeKind::Host));
    let bn = &cfg.links[0];
    assert_eq!(
        (bn.name.as_str(), bn.from, bn.to),
        ("bottleneck", NodeId(0), NodeId(1))
    );
    assert_eq!(bn.rate_bps, Some(100_000_000));
    assert_eq!(bn.delay, Dur::from_millis(10));
    assert_eq!(
        bn.queue,
        QueueConfig::DropTail {
            limit: QueueLimit::Packets(333)
        }
    );
    assert_eq!(bn.loss, LossConfig::Bernoulli { p: 0.01 });
    assert!(bn.monitor);
    let rev = &cfg.links[1];
    assert_eq!(
        (rev.name.as_str(), rev.from, rev.to),
        ("bottleneck_reverse", NodeId(1), NodeId(0))
    );
    assert_eq!(rev.loss, LossConfig::None);
    assert!(!rev.monitor);
    assert_eq!(cfg.links.iter().filter(|l| l.monitor).count(), 1);
    for l in &cfg.links[2..] {
        // Host→router links are NICs (10 Gbit/s, capped by the 1 Gbit/s access rate on the
        // sender side, 1000-packet driver queue); left→sender links have the access rate;
        // right→receiver links are unlimited.
        let (rate, queue) = match (l.from.0, l.to.0) {
            (_, 0) => (Some(1_000_000_000), QueueLimit::Packets(1000)),
            (_, 1) => (Some(10_000_000_000), QueueLimit::Packets(1000)),
            (0, _) => (Some(1_000_000_000), QueueLimit::Packets(100_000)),
            _ => (None, QueueLimit::Packets(100_000)),
        };
        assert_eq!(l.rate_bps, rate, "{}", l.name);
        assert_eq!(
            l.queue,
            QueueConfig::DropTail { limit: queue },
            "{}",
            l.name
        );
    }
    let names: Vec<&str> = cfg.flows.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["cubic0", "reno1", "reno2"]);
    for (i, f) in cfg.flows.iter().enumerate() {
        assert_eq!(cfg.nodes[f.src.0 as usize].name, format!("s{i}"));
        assert_eq!(cfg.nodes[f.dst.0 as usize].name, format!("r{i}"));
        let rtt = path_delay(&cfg.links, f.src, f.dst) + path_delay(&cfg.links, f.dst, f.src);
        let access = if i == 0 {
            Dur::ZERO
        } else {
            Dur::from_millis(5)
        };
        assert_eq!(
            rtt,
            Dur::from_millis(10) + Dur::from_millis(10) + access + access
        );
        assert_eq!(Some(rtt), s.flow_base_rtt(i));
    }
    let p = &cfg.probes[0];
    assert_eq!(p.name, DEFAULT_PROBE_NAME);
    assert_eq!(cfg.nodes[p.src.0 as usize].name, "ps0");
    assert_eq!(cfg.nodes[p.dst.0 as usize].name, "pr0");
    let rtt = path_delay(&cfg.links, p.src, p.dst) + path_delay(&cfg.links, p.dst, p.src);
    assert_eq!(rtt, Dur::from_millis(22));
    assert_eq!((p.interval, p.size), (Dur::from_millis(200), 64));
}

#[test]

fn every_layout_is_accepted_by_the_engine() {
    let text = with_flows(
        "access_rate = \"1Gbit\"",
        "[[flows]]\ncontroller = \"cubic\"\n[[flows]]\ncontroller = \"reno\"\ncount = 3\n[[probes]]\n",
    );
    let cfg = ok(&text).to_sim_config();
    if let Err(e) = cclab_sim::Simulation::new(cfg) {
        panic!("engine rejected the dumbbell: {e}");
    }
}

#[test]
fn unnamed_probes_are_numbered_when_there_are_several() {
    let s = ok(&with_flows(
        "",
        "[[flows]]\ncontroller = \"reno\"\n[[probes]]\n[[probes]]\nname = \"x\"\n[[probes]]\n",
    ));
    let names: Vec<&str> = s.probes.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["Ping (ms) ICMP 1", "x", "Ping (ms) ICMP 2"]);
}

#[test]
fn demo_is_valid() {
    let s = crate::demo(&Overrides::default()).unwrap();
    assert_eq!(s.name, "demo");
    assert_eq!(s.duration, Dur::from_secs(20));
    assert_eq!(s.flows.len(), 3);
    assert_eq!(s.probes.len(), 1);
    assert!(!s.describe().is_empty());
}

mod no_panic {
    use super::*;
    use proptest::prelude::*;

    /// Characters that matter to TOML and to the unit parsers.
    const ALPHABET: &[char] = &[
        '[', ']', '{', '}', '=', '"', '\'', '\n', ',', '.', '-', '+', '_', ' ', '#', '0', '1', '9',
        'e', 'E', 's', 'm', 'p', 'b', 'd', 'M', 'G', 'K', 'i', 'B', '%', 'µ', 'é', '\\', 't',
    ];

    fn mutate(base: &str, edits: &[(usize, u8, usize)]) -> String {
        let mut chars: Vec<char> = base.chars().collect();
        for &(pos, op, c) in edits {
            let c = ALPHABET[c % ALPHABET.len()];
            let pos = if chars.is_empty() {
                0
            } else {
                pos % (chars.len() + 1)
            };
            match op % 3 {
                0 => chars.insert(pos, c),
                1 if pos < chars.len() => {
                    chars.remove(pos);
                }
                _ if pos < chars.len() => chars[pos] = c,
                _ => chars.push(c),
            }
        }
        chars.into_iter().collect()
    }

    fn check(text: &str) {
        if let Ok(s) = parse(text, "fuzz.toml", &Overrides::default()) {
            let cfg = s.to_sim_config();
            let _ = s.describe();
            assert_eq!(cfg.flows.len(), s.flows.len());
        }
    }

    /// `check` for a scenario with a `[test]` (its flows are the test's, not `[[flows]]`).
    fn check_test(text: &str) {
        if let Ok(s) = parse(text, "fuzz.toml", &Overrides::default()) {
            let cfg = s.to_sim_config();
            let _ = s.describe();
            assert!(!cfg.flows.is_empty());
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        #[test]
        fn random_strings_do_not_panic(text in "\\PC{0,200}") {
            check(&text);
        }

        #[test]
        fn mutated_scenarios_do_not_panic(
            which in 0usize..4,
            edits in proptest::collection::vec((any::<usize>(), any::<u8>(), any::<usize>()), 1..8),
        ) {
            let bases = [crate::DEMO_TOML, include_str!("../../../../scenarios/reno_loss.toml"), include_str!("../../../../scenarios/rtt_unfairness.toml"), include_str!("../../../../scenarios/dualpi2_prague_cubic.toml")];
            check(&mutate(bases[which], &edits));
        }

        #[test]
        fn random_values_do_not_panic(
            key in prop::sample::select(vec!["rate", "delay", "buffer", "loss", "reverse_rate", "access_rate", "qdisc"]),
            fkey in prop::sample::select(vec!["start", "stop", "size", "access_delay", "mss", "count", "pacing", "slow_start", "name", "controller", "initial_window", "ack_every", "delayed_ack", "ecn", "handshake"]),
            v1 in value(), v2 in value(),
        ) {
            let text = format!(
                "name = \"f\"\n[topology]\npreset = \"dumbbell\"\nrate = \"10Mbit\"\ndelay = \"1ms\"\n\
                 {key} = {v1}\n[[flows]]\ncontroller = \"cubic\"\n{fkey} = {v2}\n"
            ).replace("rate = \"10Mbit\"\nrate =", "rate =");
            check(&text);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

        /// Qdisc tables of every kind with random parameters and values.
        #[test]
        fn random_qdisc_tables_do_not_panic(
            kind in prop::sample::select(crate::scenario::qdisc::names()),
            params in proptest::collection::vec(
                (prop::sample::select(crate::scenario::qdisc::QDISCS.iter().flat_map(|q| q.decl.params.iter().map(|p| p.name)).collect::<Vec<_>>()), value()),
                0..4,
            ),
            buffer in any::<bool>(),
        ) {
            let mut table = format!("[topology.qdisc]\nkind = \"{kind}\"\n");
            let mut seen = std::collections::HashSet::new();
            for (p, v) in &params {
                if seen.insert(*p) {
                    table.push_str(&format!("{p} = {v}\n"));
                }
            }
            let buffer = if buffer { "buffer = \"1bdp\"\n" } else { "" };
            check(&format!(
                "name = \"f\"\n[topology]\npreset = \"dumbbell\"\nrate = \"10Mbit\"\n\
                 delay = \"1ms\"\n{buffer}[[flows]]\ncontroller = \"cubic\"\n{table}"
            ));
            check_test(&format!(
                "name = \"f\"\n[test]\nname = \"tcp_upload\"\n[tcp]\ncontroller = \"cubic\"\n\
                 [topology]\npreset = \"access\"\nrate = \"10Mbit\"\ndelay = \"1ms\"\n{buffer}\
                 {}", table.replace("topology.qdisc", "topology.up_qdisc")
            ));
        }
    }

    /// TOML values: numbers of all sizes and signs, strings with units, tables.
    fn value() -> impl Strategy<Value = String> {
        let units = prop::sample::select(vec![
            "", "p", "bdp", "ms", "s", "us", "ns", "min", "KB", "KiB", "MB", "Mbit", "Gbit",
            "kbit", "bit", "%", "Mbps", "x",
        ]);
        prop_oneof![
            any::<i64>().prop_map(|v| v.to_string()),
            any::<f64>().prop_map(|v| if v.is_finite() {
                format!("{v:e}")
            } else {
                "nan".to_owned()
            }),
            (any::<f64>(), units).prop_map(|(v, u)| format!("\"{v}{u}\"")),
            (
                0u32..100_000,
                prop::sample::select(vec!["packets", "bytes", "time", "bdp", "x"])
            )
                .prop_map(|(v, k)| format!("{{ {k} = {v} }}")),
            "\\PC{0,12}".prop_map(|s| format!("{s:?}")),
            Just("true".to_owned()),
            Just("[1, 2]".to_owned()),
        ]
    }
}

#[test]
fn bbr_variants_and_their_parameters() {
    let s = ok(&with_flows(
        "",
        r#"
[[flows]]
controller = "bbr3"
[[flows]]
controller = "bbr_tas"
startup_shift = 7
steady_shift = 9
[[flows]]
controller = "bbr3_2brobust"
robust_rounds = 3
robust_alpha = 0.9
[[flows]]
controller = "bbr1"
robust = true
[[flows]]
controller = "bbr_tas"
"#,
    ));
    let cc: Vec<&CcSpec> = s.flows.iter().map(|f| &f.cc).collect();
    assert_eq!(*cc[0], CcSpec::Bbr3(Bbr3Config::default()));
    assert_eq!(
        *cc[1],
        CcSpec::Bbr3(Bbr3Config {
            tas: Some(Tas {
                startup_shift: 7,
                steady_shift: 9
            }),
            ..Bbr3Config::default()
        })
    );
    assert_eq!(
        *cc[2],
        CcSpec::Bbr3(Bbr3Config {
            robust: Some(Robust {
                rounds: 3,
                alpha: 0.9
            }),
            ..Bbr3Config::default()
        })
    );
    assert_eq!(
        *cc[3],
        CcSpec::Bbr1(Bbr1Config {
            robust: Some(Robust::DEFAULT)
        })
    );
    // BBR-TAS defaults to the best startup/steady shift pair its study reports, 8/8.
    assert_eq!(
        *cc[4],
        CcSpec::Bbr3(Bbr3Config {
            tas: Some(Tas::DEFAULT),
            ..Bbr3Config::default()
        })
    );
    assert_eq!(s.flows[1].name, "bbr_tas1");
}

#[test]
fn bbr_parameter_errors_name_the_field() {
    let e = err(&with_flows(
        "",
        "[[flows]]\ncontroller = \"cubic\"\nstartup_shift = 8\n",
    ));
    assert!(e.contains("t.toml:9:"), "{e}");
    assert!(e.contains("flows[0].startup_shift"), "{e}");
    assert!(
        e.contains(
            "`startup_shift` is a bbr_tas parameter; controller `cubic` has no such parameter"
        ),
        "{e}"
    );
    let e = err(&with_flows(
        "",
        "[[flows]]\ncontroller = \"bbr3\"\nsteady_shift = 8\n",
    ));
    assert!(
        e.contains("flows[0].steady_shift") && e.contains("bbr_tas"),
        "{e}"
    );
    let e = err(&with_flows(
        "",
        "[[flows]]\ncontroller = \"bbr_tas\"\nstartup_shift = 13\n",
    ));
    assert!(e.contains("6..=12") && e.contains("got 13"), "{e}");
    let e = err(&with_flows(
        "",
        "[[flows]]\ncontroller = \"bbr3\"\nrobust_alpha = 0.5\n",
    ));
    assert!(
        e.contains("flows[0].robust_alpha") && e.contains("robust = true"),
        "{e}"
    );
    let e = err(&with_flows(
        "",
        "[[flows]]\ncontroller = \"bbr3_2brobust\"\nrobust_alpha = -1.0\n",
    ));
    assert!(e.contains("(0, 4]"), "{e}");
    let e = err(&with_flows(
        "",
        "[[flows]]\ncontroller = \"bbr3\"\nslow_start = \"hystart\"\n",
    ));
    assert!(
        e.contains(
            "flows[0].slow_start: `slow_start` is a reno/newreno/cubic/cuback parameter; controller \
             `bbr3` has no such parameter (it takes: robust, robust_rounds, robust_alpha, \
             ecn_response)"
        ),
        "{e}"
    );
    let e = err(&with_flows("", "[[flows]]\ncontroller = \"bbr2\"\n"));
    assert!(e.contains("bbr3") && e.contains("bbr1"), "{e}");
}

#[test]
fn host_tables_layer_over_linux_defaults() {
    let s = ok(&format!(
        r#"{BASE}
[host]
qdisc = "fq"
pacing_shift = 8
[[flows]]
controller = "cubic"
[[flows]]
controller = "bbr3"
[flows.host]
tso = "pre-5.18"
cpu_share = 0.3
limit_output_bytes = "4MiB"
fq_flow_limit = 50
"#
    ));
    let linux = cclab_sim::HostConfig::default();
    let h0 = &s.flows[0].host;
    assert_eq!(
        h0.qdisc,
        cclab_sim::HostQdisc::Fq(cclab_sim::FqConfig::default())
    );
    assert_eq!(h0.pacing_shift, 8);
    assert_eq!(h0.tso, linux.tso);
    assert_eq!(h0.cpu, None);
    let h1 = &s.flows[1].host;
    assert_eq!(h1.pacing_shift, 8, "a flow's table starts from [host]");
    assert_eq!(
        h1.qdisc,
        cclab_sim::HostQdisc::Fq(cclab_sim::FqConfig {
            flow_limit: 50,
            ..cclab_sim::FqConfig::default()
        })
    );
    assert_eq!(h1.tso.rule, cclab_sim::TsoRule::Pre518);
    assert_eq!(h1.limit_output_bytes, 4 << 20);
    assert_eq!(
        h1.cpu,
        Some(cclab_sim::CpuSchedule {
            timeslice: Dur::from_millis(10),
            share: 0.3,
            offset: Dur::ZERO
        })
    );
    // The simulator's sending host of each flow carries it.
    let cfg = s.to_sim_config();
    // (And every host the scenario's timing model, the default `linux` one here.)
    for (i, f) in cfg.flows.iter().enumerate() {
        let node = &cfg.nodes[f.src.0 as usize].host;
        assert_eq!(
            node.timing,
            Some(cclab_sim::host::timing::HostTiming::linux())
        );
        let flow = &s.flows[i].host;
        assert_eq!(
            cclab_sim::HostConfig {
                timing: flow.timing,
                ..node.clone()
            },
            *flow
        );
    }
    // Without any table: Linux defaults.
    let s = ok(&with_flows("", "[[flows]]\ncontroller = \"cubic\"\n"));
    assert_eq!(s.flows[0].host, linux);
}

#[test]
fn host_errors_name_the_field_and_choices() {
    let flow = "[[flows]]\ncontroller = \"cubic\"\n";
    let e = err(&format!("{BASE}[host]\nqdisc = \"fq_codel\"\n{flow}"));
    assert!(
        e.contains("host.qdisc") && e.contains("pfifo_fast") && e.contains("fq"),
        "{e}"
    );
    let e = err(&format!("{BASE}[host]\ncpu_share = 1.5\n{flow}"));
    assert!(e.contains("host.cpu_share") && e.contains("(0, 1]"), "{e}");
    let e = err(&format!("{BASE}[host]\ncpu_timeslice = \"5ms\"\n{flow}"));
    assert!(e.contains("host.cpu_share"), "{e}");
    let e = err(&format!("{BASE}[host]\nfq_quantum = 3000\n{flow}"));
    assert!(
        e.contains("qdisc = \\\"fq\\\"") || e.contains("qdisc = \"fq\""),
        "{e}"
    );
    let e = err(&format!("{BASE}[host]\npacing_shift = 3\n{flow}"));
    assert!(
        e.contains("host.pacing_shift") && e.contains("6..=12"),
        "{e}"
    );
    let e = err(&format!("{BASE}[host]\ntso = \"on\"\n{flow}"));
    assert!(e.contains("host.tso") && e.contains("post-5.18"), "{e}");
    let e = err(&format!("{BASE}[host]\nqdsic = \"fq\"\n{flow}"));
    assert!(e.contains("qdisc"), "did-you-mean: {e}");
    let e = err(&format!("{BASE}{flow}[flows.host]\ncpu_share = 0\n"));
    assert!(e.contains("flows[0].host.cpu_share"), "{e}");
}

#[test]
fn the_vm_preset_and_cpu_max() {
    let flow = "[[flows]]\ncontroller = \"cubic\"\n";
    // `preset = "vm"`: the default virtio device; its keys override it per flow.
    let s = ok(&format!(
        "{BASE}[host]\npreset = \"vm\"\ncpu_max = \"1ms 3.33ms\"\n{flow}{flow}[flows.host]\n\
         napi_tx = false\ntx_ring = 64\ntap_queue = 1000\nvhost_wakeup = \"50us\"\n\
         [[flows]]\ncontroller = \"bbr3\"\n[flows.host]\npreset = \"plain\"\n"
    ));
    let d = cclab_sim::VirtioConfig::default();
    assert_eq!(s.flows[0].host.virtio, Some(d));
    assert_eq!(
        s.flows[1].host.virtio,
        Some(cclab_sim::VirtioConfig {
            napi_tx: false,
            tx_ring: 64,
            tap_queue: 1000,
            vhost_wakeup: Dur::from_micros(50),
            ..d
        })
    );
    assert_eq!(s.flows[2].host.virtio, None);
    // cpu.max = 1 ms of every 3.33 ms: the period is exact.
    let cpu = s.flows[0].host.cpu.expect("a CPU cap");
    assert_eq!(
        (cpu.timeslice, cpu.period()),
        (Dur::from_millis(1), Dur(3_330_000))
    );
    assert_eq!(
        s.flows[2].host.cpu,
        Some(cpu),
        "[host] is every flow's base"
    );
    let cfg = s.to_sim_config();
    let src = |i: usize| &cfg.nodes[cfg.flows[i].src.0 as usize].host;
    assert_eq!(src(1).virtio, s.flows[1].host.virtio);
    assert_eq!(src(2).virtio, None);
    // A guest that runs only for its packets: a CFS quota charged per packet.
    let s = ok(&format!(
        "{BASE}[host]\ncpu_max = \"30ms 100ms\"\ncpu_load = \"network\"\n{flow}{flow}\
         [flows.host]\ncpu_max = \"1ms 3.33ms\"\ncpu_load = \"network\"\ncpu_cost = \"2us\"\n"
    ));
    assert_eq!(s.flows[0].host.cpu, None);
    assert_eq!(
        s.flows[0].host.cfs,
        Some(cclab_sim::CfsBandwidth {
            quota: Dur::from_millis(30),
            period: Dur::from_millis(100),
            cost: Dur::from_micros(4),
        })
    );
    assert_eq!(
        s.flows[1].host.cfs.map(|c| (c.quota, c.period, c.cost)),
        Some((Dur::from_millis(1), Dur(3_330_000), Dur::from_micros(2)))
    );
    // Work at resume: a busy guest's backlog at `cpu_cost` a packet (default 4 µs), a
    // flow's own table inheriting it, `instant` switching it off.
    let s = ok(&format!(
        "{BASE}[host]\ncpu_share = 0.3\ncpu_resume = \"softirq\"\n{flow}{flow}\
         [flows.host]\ncpu_timeslice = \"1ms\"\ncpu_cost = \"2us\"\n{flow}\
         [flows.host]\ncpu_resume = \"instant\"\n"
    ));
    let soft = |us| cclab_sim::ResumeWork::Softirq {
        cost: Dur::from_micros(us),
    };
    assert_eq!(s.flows[0].host.resume, soft(4));
    assert_eq!(s.flows[1].host.resume, soft(2));
    assert_eq!(s.flows[2].host.resume, cclab_sim::ResumeWork::Instant);
    assert!(s.flows[1].host.cpu.is_some() && s.flows[1].host.cfs.is_none());
    let cfg = s.to_sim_config();
    assert_eq!(cfg.nodes[cfg.flows[1].src.0 as usize].host.resume, soft(2));
    // A flow's own share keeps the load it inherits (here: network, timeslice 30 ms).
    let s = ok(&format!(
        "{BASE}[host]\ncpu_max = \"30ms 100ms\"\ncpu_load = \"network\"\n{flow}\
         [flows.host]\ncpu_share = 0.5\n"
    ));
    assert_eq!(
        s.flows[0].host.cfs.map(|c| (c.quota, c.period)),
        Some((Dur::from_millis(30), Dur::from_millis(60)))
    );
    assert_eq!(s.flows[0].host.cpu, None);
    // The share form with a network load: quota = timeslice per period timeslice/share.
    let s = ok(&format!(
        "{BASE}[host]\ncpu_share = 0.3\ncpu_timeslice = \"10ms\"\ncpu_load = \"network\"\n\
         {flow}{flow}[flows.host]\ncpu_share = 0.5\n{flow}[flows.host]\ncpu_load = \"busy\"\n"
    ));
    let q = |i: usize| s.flows[i].host.cfs.map(|c| (c.quota, c.period, c.cost));
    let ms = Dur::from_millis;
    let cost = host::DEFAULT_CPU_COST;
    assert_eq!(q(0), Some((ms(10), Dur(33_333_333), cost)));
    assert_eq!(q(1), Some((ms(10), ms(20), cost)), "the load is inherited");
    assert_eq!(q(2), None);
    assert_eq!(
        s.flows[2].host.cpu.map(|c| c.period()),
        Some(Dur(33_333_333))
    );
}

#[test]
fn vm_and_cpu_max_errors_name_the_field() {
    let flow = "[[flows]]\ncontroller = \"cubic\"\n";
    let e = err(&format!("{BASE}[host]\npreset = \"kvm\"\n{flow}"));
    assert!(e.contains("host.preset") && e.contains("plain, vm"), "{e}");
    let e = err(&format!("{BASE}[host]\nnapi_tx = false\n{flow}"));
    assert!(e.contains("preset = ") && e.contains("vm"), "{e}");
    let e = err(&format!(
        "{BASE}[host]\npreset = \"vm\"\ntx_ring = 0\n{flow}"
    ));
    assert!(e.contains("host.tx_ring"), "{e}");
    let e = err(&format!("{BASE}[host]\ncpu_max = \"30ms\"\n{flow}"));
    assert!(
        e.contains("host.cpu_max") && e.contains("QUOTA PERIOD"),
        "{e}"
    );
    let e = err(&format!("{BASE}[host]\ncpu_max = \"30ms 10ms\"\n{flow}"));
    assert!(
        e.contains("host.cpu_max") && e.contains("at most the period"),
        "{e}"
    );
    let e = err(&format!("{BASE}[host]\ncpu_max = \"1ms 2s\"\n{flow}"));
    assert!(
        e.contains("host.cpu_max") && e.contains("between 100us and 1s"),
        "{e}"
    );
    let e = err(&format!(
        "{BASE}[host]\npreset = \"vm\"\nvhost_wakeup = \"1s\"\n{flow}"
    ));
    assert!(
        e.contains("host.vhost_wakeup") && e.contains("below 1s"),
        "{e}"
    );
    let e = err(&format!("{BASE}[host]\ncpu_max = \"3x 10ms\"\n{flow}"));
    assert!(e.contains("host.cpu_max") && e.contains("`3x`"), "{e}");
    let e = err(&format!(
        "{BASE}[host]\ncpu_max = \"3ms 10ms\"\ncpu_share = 0.3\n{flow}"
    ));
    assert!(e.contains("host.cpu_max") && e.contains("not both"), "{e}");
    let e = err(&format!("{BASE}[host]\ncpu_load = \"network\"\n{flow}"));
    assert!(e.contains("cpu_max") && e.contains("cpu_share"), "{e}");
    let e = err(&format!(
        "{BASE}[host]\ncpu_share = 0.5\ncpu_offset = \"1ms\"\ncpu_load = \"network\"\n{flow}"
    ));
    assert!(e.contains("host.cpu_offset"), "{e}");
    let e = err(&format!(
        "{BASE}[host]\ncpu_max = \"1ms 2ms\"\ncpu_load = \"idle\"\n{flow}"
    ));
    assert!(
        e.contains("host.cpu_load") && e.contains("busy, network"),
        "{e}"
    );
    let e = err(&format!(
        "{BASE}[host]\ncpu_max = \"1ms 2ms\"\ncpu_cost = \"1us\"\n{flow}"
    ));
    assert!(e.contains("host.cpu_cost") && e.contains("network"), "{e}");
    let e = err(&format!(
        "{BASE}[host]\ncpu_max = \"1ms 2ms\"\ncpu_load = \"network\"\ncpu_cost = \"2ms\"\n{flow}"
    ));
    assert!(
        e.contains("host.cpu_cost") && e.contains("below the quota"),
        "{e}"
    );
    let e = err(&format!("{BASE}[host]\ncpu_resume = \"softirq\"\n{flow}"));
    assert!(
        e.contains("host.cpu_resume") && e.contains("cpu_share"),
        "{e}"
    );
    let e = err(&format!(
        "{BASE}[host]\ncpu_share = 0.5\ncpu_resume = \"later\"\n{flow}"
    ));
    assert!(
        e.contains("host.cpu_resume") && e.contains("instant, softirq"),
        "{e}"
    );
    let e = err(&format!(
        "{BASE}[host]\ncpu_share = 0.5\ncpu_timeslice = \"1ms\"\ncpu_resume = \"softirq\"\n\
         cpu_cost = \"1ms\"\n{flow}"
    ));
    assert!(
        e.contains("host.cpu_cost") && e.contains("below the timeslice 1 ms"),
        "{e}"
    );
    // A line number: the key's line in the file.
    let e = err(&format!("{BASE}[host]\n\ncpu_max = \"1ms\"\n{flow}"));
    assert!(e.contains("t.toml:9"), "{e}");
}

// ---- Queue disciplines (AQM) and ECN ----

use cclab_sim::AqmConfig;
use cclab_sim::queue::{CodelParams, DualPi2Params, FqCodelParams, PieParams, RedParams};

const CUBIC: &str = "[[flows]]\ncontroller = \"cubic\"\n";

/// The dumbbell's resolved qdisc and the bottleneck's queue in the simulator config.
fn bottleneck_qdisc(s: &Scenario) -> (Option<AqmConfig>, QueueConfig) {
    let Some(d) = s.topology.get::<DumbbellPreset>() else {
        panic!("dumbbell expected")
    };
    (d.net.aqm.clone(), s.to_sim_config().links[0].queue.clone())
}

/// A dumbbell whose `[topology]` ends with `qdisc` (a line such as `qdisc = "pie"` or a
/// `[topology.qdisc]` table, which then comes after the flows).
fn with_qdisc(q: &str) -> String {
    if q.starts_with('[') {
        format!("{BASE}{CUBIC}{q}")
    } else {
        format!("{BASE}{q}{CUBIC}")
    }
}

#[test]
fn qdisc_names_resolve_to_linux_defaults() {
    for name in AqmConfig::NAMES {
        let s = ok(&with_qdisc(&format!("qdisc = \"{name}\"\n")));
        let want = AqmConfig::default_for(name).unwrap();
        assert_eq!(
            bottleneck_qdisc(&s),
            (Some(want.clone()), QueueConfig::Aqm(want)),
            "{name}"
        );
    }
    // `fifo`, or no key: the drop-tail buffer (1 BDP by default).
    let fifo = (
        None,
        QueueConfig::DropTail {
            limit: QueueLimit::Bytes(250_000),
        },
    );
    assert_eq!(
        bottleneck_qdisc(&ok(&with_qdisc("qdisc = \"fifo\"\n"))),
        fifo
    );
    assert_eq!(bottleneck_qdisc(&ok(&with_qdisc(""))), fifo);
    let s = ok(&with_qdisc("buffer = \"333p\"\nqdisc = \"fifo\"\n"));
    assert_eq!(
        bottleneck_qdisc(&s).1,
        QueueConfig::DropTail {
            limit: QueueLimit::Packets(333)
        }
    );
    // A table with only `kind` is the same as the name.
    let s = ok(&with_qdisc("[topology.qdisc]\nkind = \"red\"\n"));
    assert_eq!(
        bottleneck_qdisc(&s).0,
        Some(AqmConfig::Red(RedParams::default()))
    );
    let s = ok(&with_qdisc("qdisc = { kind = \"fifo\" }\n"));
    assert_eq!(bottleneck_qdisc(&s).0, None);
}

#[test]
fn qdisc_tables_set_every_parameter_in_file_units() {
    let cases: Vec<(&str, AqmConfig)> = vec![
        (
            "kind = \"codel\"\ntarget = \"2.5ms\"\ninterval = 0.05\nlimit = 500\necn = true\n\
             ce_threshold = \"250us\"\n",
            AqmConfig::Codel(CodelParams {
                target: Dur::from_micros(2500),
                interval: Dur::from_millis(50),
                limit: 500,
                ecn: true,
                ce_threshold: Some(Dur::from_micros(250)),
            }),
        ),
        (
            "kind = \"fq_codel\"\nflows = 2048\nlimit = \"5000p\"\nmemory_limit = \"4MiB\"\n\
             quantum = \"300B\"\ndrop_batch = 32\ntarget = \"1ms\"\ninterval = \"20ms\"\n\
             ecn = false\nce_threshold = \"1ms\"\n",
            AqmConfig::FqCodel(FqCodelParams {
                flows: 2048,
                limit: 5000,
                memory_limit: 4 << 20,
                quantum: 300,
                drop_batch: 32,
                target: Dur::from_millis(1),
                interval: Dur::from_millis(20),
                ecn: false,
                ce_threshold: Some(Dur::from_millis(1)),
            }),
        ),
        (
            "kind = \"pie\"\ntarget = \"20ms\"\ntupdate = \"30ms\"\nalpha = 0.25\nbeta = 2\n\
             limit = 200\necn = true\nbytemode = true\nmax_burst = \"100ms\"\n\
             dq_rate_estimator = true\n",
            AqmConfig::Pie(PieParams {
                target: Dur::from_millis(20),
                tupdate: Dur::from_millis(30),
                alpha: 0.25,
                beta: 2.0,
                limit: 200,
                ecn: true,
                bytemode: true,
                max_burst: Dur::from_millis(100),
                dq_rate_estimator: true,
            }),
        ),
        (
            "kind = \"red\"\nlimit = \"1MB\"\nmin_th = \"50KB\"\nmax_th = 150000\n\
             max_p = \"5%\"\nwlog = 10\navpkt = \"1.5kB\"\necn = true\nharddrop = true\n",
            AqmConfig::Red(RedParams {
                limit: 1_000_000,
                min_th: 50_000,
                max_th: 150_000,
                max_p: 0.05,
                wlog: 10,
                avpkt: 1500,
                ecn: true,
                harddrop: true,
            }),
        ),
        (
            "kind = \"dualpi2\"\nlimit = 2000\ntarget = \"10ms\"\ntupdate = \"8ms\"\n\
             alpha = 0.2\nbeta = 4.5\ncoupling = 1.5\nstep_thresh = \"500us\"\n\
             c_protection = 25\ndrop_overload = false\ndrop_early = true\n\
             l_dscp = [45, \"EF\", \"cs5\", 46]\n",
            AqmConfig::DualPi2(DualPi2Params {
                limit: 2000,
                target: Dur::from_millis(10),
                tupdate: Dur::from_millis(8),
                alpha: 0.2,
                beta: 4.5,
                coupling: 1.5,
                step_thresh: Dur::from_micros(500),
                c_protection: 25,
                drop_overload: false,
                drop_early: true,
                l_dscp: vec![45, 46, 40],
            }),
        ),
    ];
    for (table, want) in cases {
        let s = ok(&with_qdisc(&format!("[topology.qdisc]\n{table}")));
        assert_eq!(
            bottleneck_qdisc(&s),
            (Some(want.clone()), QueueConfig::Aqm(want))
        );
    }
    // Parameters left out keep Linux's defaults; the inline table form works too.
    let s = ok(&with_qdisc(
        "qdisc = { kind = \"fq_codel\", memory_limit = \"32MB\", ce_threshold = \"2ms\" }\n",
    ));
    assert_eq!(
        bottleneck_qdisc(&s).0,
        Some(AqmConfig::FqCodel(FqCodelParams {
            memory_limit: 32_000_000,
            ce_threshold: Some(Dur::from_millis(2)),
            ..FqCodelParams::default()
        }))
    );
    let s = ok(&with_qdisc(
        "[topology.qdisc]\nkind = \"dualpi2\"\nstep_thresh = \"2ms\"\n",
    ));
    assert_eq!(
        bottleneck_qdisc(&s).0,
        Some(AqmConfig::DualPi2(DualPi2Params {
            step_thresh: Dur::from_millis(2),
            ..DualPi2Params::default()
        }))
    );
}

#[test]
fn qdisc_appears_in_the_description_instead_of_the_buffer() {
    let d = ok(&with_qdisc("qdisc = \"fq_codel\"\n")).describe();
    assert!(
        d.contains(
            "qdisc fq_codel (target 5 ms, interval 100 ms, limit 10240 packets, ecn), BDP \
             250000 bytes at RTT 20 ms"
        ),
        "{d}"
    );
    assert!(!d.contains("buffer"), "{d}");
    let d = ok(&with_qdisc(
        "[topology.qdisc]\nkind = \"dualpi2\"\nl_dscp = [\"EF\"]\nc_protection = 30\n",
    ))
    .describe();
    assert!(
        d.contains(
            "qdisc dualpi2 (target 15 ms, tupdate 16 ms, alpha 0.16, beta 3.2, coupling 2, \
             step_thresh 1 ms, limit 10000 packets, c_protection 30 %, l_dscp 46)"
        ),
        "{d}"
    );
    let d = ok(&with_qdisc("")).describe();
    assert!(
        d.contains("buffer 1bdp = 250000 bytes") && !d.contains("qdisc"),
        "{d}"
    );
}

#[test]
fn qdisc_errors_name_file_line_field_and_choices() {
    // Line 7 is the `qdisc` line of `with_qdisc`; a table header is line 9.
    let cases: &[(&str, &str)] = &[
        (
            "qdisc = \"fq_codle\"\n",
            "t.toml:7:9: topology.qdisc: unknown qdisc `fq_codle`, expected one of: fifo, \
             codel, fq_codel, pie, red, dualpi2 (did you mean `fq_codel`?)",
        ),
        (
            "[topology.qdisc]\nkind = \"pei\"\n",
            "t.toml:10:8: topology.qdisc.kind: unknown qdisc `pei`, expected one of: fifo, \
             codel, fq_codel, pie, red, dualpi2 (did you mean `pie`?)",
        ),
        (
            "[topology.qdisc]\nkind = \"pie\"\ninterval = \"5ms\"\n",
            "t.toml:11:12: topology.qdisc.interval: `interval` is a codel/fq_codel parameter; \
             qdisc `pie` has no such parameter (it takes: target, limit, ecn, tupdate, alpha, \
             beta, bytemode, max_burst, dq_rate_estimator)",
        ),
        (
            "qdisc = { kind = \"dualpi2\", ecn = true }\n",
            "t.toml:7:35: topology.qdisc.ecn: `ecn` is a codel/fq_codel/pie/red parameter; \
             qdisc `dualpi2` has no such parameter (it takes: target, limit, tupdate, alpha, \
             beta, coupling, step_thresh, c_protection, drop_overload, drop_early, l_dscp)",
        ),
        (
            "[topology.qdisc]\nkind = \"codel\"\ntarget = \"0ms\"\n",
            "t.toml:9:1: topology.qdisc.target: qdisc `codel`: `target` must be positive",
        ),
        (
            "[topology.qdisc]\nkind = \"red\"\nmin_th = \"100KB\"\n",
            "t.toml:9:1: topology.qdisc: qdisc `red`: thresholds must satisfy min_th < max_th \
             ≤ limit",
        ),
        (
            "[topology.qdisc]\nkind = \"dualpi2\"\nc_protection = 101\n",
            "t.toml:9:1: topology.qdisc.c_protection: qdisc `dualpi2`: `c_protection` is a \
             percentage: 0..=100",
        ),
        (
            "[topology.qdisc]\nkind = \"fq_codel\"\nlimit = 0\n",
            "t.toml:9:1: topology.qdisc.limit: qdisc `fq_codel`: `limit` must be at least 1",
        ),
        (
            "buffer = \"1bdp\"\nqdisc = \"codel\"\n",
            "t.toml:7:10: topology.buffer: `buffer` sizes the drop-tail FIFO, but this queue \
             runs qdisc `codel`, which has its own `limit` (packets); remove `buffer` and write \
             `qdisc = { kind = \"codel\", limit = … }` to change it",
        ),
        (
            "buffer = \"500KB\"\n[topology.qdisc]\nkind = \"red\"\n",
            "t.toml:7:10: topology.buffer: `buffer` sizes the drop-tail FIFO, but this queue \
             runs qdisc `red`, which has its own `limit` (bytes); remove `buffer` and set \
             `limit` in the `qdisc` table to change it",
        ),
        (
            "[topology.qdisc]\ntarget = \"5ms\"\n",
            "t.toml:9:1: topology.qdisc.kind: a qdisc table needs `kind`, one of: fifo, codel, \
             fq_codel, pie, red, dualpi2",
        ),
        (
            "qdisc = { kind = \"fifo\", limit = 5 }\n",
            "t.toml:7:34: topology.qdisc.limit: qdisc `fifo` (the drop-tail buffer) has no \
             parameters; the topology's `buffer` sets its limit",
        ),
        (
            "[topology.qdisc]\nkind = \"codel\"\nlimit = \"100KB\"\n",
            "t.toml:11:9: topology.qdisc.limit: qdisc `codel` counts its limit in packets: a \
             whole number 0..=4294967295 or e.g. \"1000p\"",
        ),
        (
            "[topology.qdisc]\nkind = \"red\"\nlimit = \"1000p\"\n",
            "t.toml:11:9: topology.qdisc.limit: qdisc `red` counts its limit in bytes: unknown \
             size unit `p`, expected one of: B, kB, MB, GB, TB, KiB, MiB, GiB, TiB",
        ),
        (
            "[topology.qdisc]\nkind = \"red\"\nlimit = \"1000B\"\nmin_th = 100\nmax_th = 500\n",
            "t.toml:9:1: topology.qdisc.limit: qdisc `red`: a limit of 1000 bytes cannot hold \
             one full-size packet (1500 bytes)",
        ),
        (
            "[topology.qdisc]\nkind = \"fq_codel\"\nflows = -1\n",
            "t.toml:11:9: topology.qdisc.flows: must be in 0..=65536 buckets, got -1",
        ),
        (
            "[topology.qdisc]\nkind = \"dualpi2\"\nl_dscp = [46, 64]\n",
            "t.toml:11:15: topology.qdisc.l_dscp[1]: a DSCP value is 0..=63 (6 bits), got 64; \
             or a name such as \"EF\"",
        ),
        (
            "qdisc = 5\n",
            "t.toml:7:9: topology.qdisc: invalid type: integer `5`, expected a queue discipline \
             name such as \"fq_codel\", or a table with `kind` and the discipline's parameters",
        ),
        (
            "[topology.qdisc]\nkind = \"codel\"\ntraget = \"1ms\"\n",
            "t.toml:11:10: topology.qdisc.traget: qdisc `codel` has no parameter `traget` (it \
             takes: target, interval, limit, ecn, ce_threshold) (did you mean `target`?)",
        ),
        (
            "[topology.qdisc]\nkind = \"codel\"\ntarget = \"5 parsecs\"\n",
            "t.toml:11:10: topology.qdisc.target: unknown duration unit `parsecs`",
        ),
    ];
    for (q, want) in cases {
        let e = err(&with_qdisc(q));
        assert!(e.starts_with(want), "for {q:?}\nwant {want}\ngot  {e}");
    }
    let e = err(&with_qdisc(
        "[topology.qdisc]\nkind = \"dualpi2\"\nl_dscp = [\"EF\", \"AF14\"]\n",
    ));
    assert!(
        e.starts_with("t.toml:11:17: topology.qdisc.l_dscp[1]: unknown DSCP name `AF14`")
            && e.contains("AF13, CS2")
            && e.contains("(did you mean `AF1"),
        "{e}"
    );
    // The sender host's qdisc is another thing; naming an AQM there points here.
    let e = err(&format!("{BASE}[host]\nqdisc = \"fq_codel\"\n{CUBIC}"));
    assert!(
        e.starts_with(
            "t.toml:8:9: host.qdisc: unknown qdisc `fq_codel`, expected one of: \
             pfifo_fast, fq"
        ) && e.ends_with(
            "`fq_codel` is a bottleneck queue discipline: set it with \
                `topology.qdisc`"
        ),
        "{e}"
    );
}

/// A Flent-equivalent test on the access preset with `topology` lines appended.
fn access_test(topology: &str, tcp: &str) -> String {
    format!(
        "name = \"t\"\n[test]\nname = \"tcp_upload\"\n[tcp]\ncontroller = \"cubic\"\n{tcp}\
         [topology]\npreset = \"access\"\nrate = \"10Mbit\"\ndelay = \"5ms\"\n{topology}"
    )
}

fn access_qdiscs(s: &Scenario) -> (Option<AqmConfig>, Option<AqmConfig>) {
    let Some(a) = s.topology.get::<AccessTest>() else {
        panic!("access expected")
    };
    // The simulator's uplink and downlink carry the same.
    let cfg = s.to_sim_config();
    let queue = |q: &Option<AqmConfig>, limit: QueueLimit| {
        q.clone()
            .map_or(QueueConfig::DropTail { limit }, QueueConfig::Aqm)
    };
    assert_eq!(cfg.links[0].queue, queue(&a.up_qdisc, a.up_buffer.1));
    assert_eq!(cfg.links[1].queue, queue(&a.down_qdisc, a.down_buffer.1));
    (a.up_qdisc.clone(), a.down_qdisc.clone())
}

#[test]
fn access_qdisc_applies_to_both_directions_and_up_down_override_it() {
    let d = |n: &str| AqmConfig::default_for(n);
    type UpDown = (Option<AqmConfig>, Option<AqmConfig>);
    let cases: &[(&str, UpDown)] = &[
        ("", (None, None)),
        ("qdisc = \"fq_codel\"\n", (d("fq_codel"), d("fq_codel"))),
        (
            "qdisc = \"fq_codel\"\ndown_qdisc = \"pie\"\n",
            (d("fq_codel"), d("pie")),
        ),
        ("up_qdisc = \"codel\"\n", (d("codel"), None)),
        ("down_qdisc = \"codel\"\n", (None, d("codel"))),
        (
            "qdisc = \"codel\"\nup_qdisc = \"fifo\"\n",
            (None, d("codel")),
        ),
        (
            "up_qdisc = \"red\"\ndown_qdisc = \"dualpi2\"\nqdisc = \"pie\"\n",
            (d("red"), d("dualpi2")),
        ),
        (
            "qdisc = \"pie\"\n[topology.up_qdisc]\nkind = \"pie\"\nlimit = 50\n",
            (
                Some(AqmConfig::Pie(PieParams {
                    limit: 50,
                    ..PieParams::default()
                })),
                d("pie"),
            ),
        ),
        // A shared buffer sizes the FIFO direction when only one direction has an AQM.
        (
            "buffer = \"2bdp\"\nup_qdisc = \"codel\"\n",
            (d("codel"), None),
        ),
    ];
    for (topo, want) in cases {
        let s = ok(&access_test(topo, ""));
        assert_eq!(&access_qdiscs(&s), want, "{topo}");
    }
    let s = ok(&access_test(
        "buffer = \"2bdp\"\nup_qdisc = \"codel\"\n",
        "",
    ));
    let Some(a) = s.topology.get::<AccessTest>() else {
        panic!()
    };
    assert_eq!(a.down_buffer.1, QueueLimit::Bytes(25_000));
    let desc = s.describe();
    assert!(
        desc.contains(
            "uplink qdisc codel (target 5 ms, interval 100 ms, limit 1000 packets), downlink \
             buffer 2bdp"
        ),
        "{desc}"
    );
}

#[test]
fn access_qdisc_errors_name_the_direction() {
    let cases: &[(&str, &str)] = &[
        (
            "up_qdisc = \"codle\"\n",
            "t.toml:10:12: topology.up_qdisc: unknown qdisc `codle`, expected one of: fifo, \
             codel, fq_codel, pie, red, dualpi2 (did you mean `codel`?)",
        ),
        (
            "qdisc = \"pie\"\n[topology.down_qdisc]\nkind = \"pie\"\ninterval = \"1ms\"\n",
            "t.toml:13:12: topology.down_qdisc.interval: `interval` is a codel/fq_codel \
             parameter; qdisc `pie` has no such parameter",
        ),
        (
            "up_qdisc = \"codel\"\nup_buffer = \"100p\"\n",
            "t.toml:11:13: topology.up_buffer: `up_buffer` sizes the drop-tail FIFO, but this \
             queue runs qdisc `codel`, which has its own `limit` (packets); remove `up_buffer` \
             and write `up_qdisc = { kind = \"codel\", limit = … }` to change it",
        ),
        (
            "qdisc = \"fq_codel\"\nbuffer = \"1bdp\"\n",
            "t.toml:11:10: topology.buffer: `buffer` sizes the drop-tail FIFO, but this queue \
             runs qdisc `fq_codel`",
        ),
        (
            "qdisc = \"fq_codel\"\ndown_buffer = \"1bdp\"\n",
            "t.toml:11:15: topology.down_buffer: `down_buffer` sizes the drop-tail FIFO, but \
             this queue runs qdisc `fq_codel`, which has its own `limit` (packets); remove \
             `down_buffer` and write `qdisc = { kind = \"fq_codel\", limit = … }`",
        ),
        (
            "[topology.qdisc]\nkind = \"codel\"\ninterval = 0\n",
            "t.toml:10:1: topology.qdisc.interval: qdisc `codel`: `interval` must be positive",
        ),
    ];
    for (topo, want) in cases {
        let e = err(&access_test(topo, ""));
        assert!(e.starts_with(want), "for {topo:?}\nwant {want}\ngot  {e}");
    }
}

#[test]
fn flow_ecn_modes() {
    let s = ok(&with_flows(
        "",
        "[[flows]]\ncontroller = \"cubic\"\n\
         [[flows]]\ncontroller = \"bbr3\"\necn = \"l4s\"\ncount = 2\n\
         [[flows]]\ncontroller = \"reno\"\necn = \"classic\"\n\
         [[flows]]\ncontroller = \"reno\"\necn = \"off\"\n",
    ));
    let modes: Vec<EcnMode> = s.flows.iter().map(|f| f.ecn).collect();
    let want = [
        EcnMode::Off,
        EcnMode::L4s,
        EcnMode::L4s,
        EcnMode::Classic,
        EcnMode::Off,
    ];
    assert_eq!(modes, want);
    let cfg = s.to_sim_config();
    let modes: Vec<EcnMode> = cfg.flows.iter().map(|f| f.ecn).collect();
    assert_eq!(modes, want);
    let d = s.describe();
    assert!(d.contains("mss 1448  ecn l4s\n"), "{d}");
    assert!(d.contains("mss 1448  ecn classic\n"), "{d}");
    assert_eq!(d.matches("ecn ").count(), 3, "{d}");
    let e = err(&with_flows(
        "",
        "[[flows]]\ncontroller = \"cubic\"\necn = \"l4\"\n",
    ));
    assert_eq!(
        e,
        "t.toml:9:7: flows[0].ecn: unknown ECN mode `l4`, expected one of: off, classic, l4s \
         (did you mean `l4s`?)"
    );
    let e = err(&with_flows(
        "",
        "[[flows]]\ncontroller = \"cubic\"\necn = true\n",
    ));
    assert!(
        e.starts_with("t.toml:9:7: flows[0].ecn: invalid type"),
        "{e}"
    );
    // TCP Prague requires L4S: it is its default, and another mode is an error.
    let s = ok(&with_flows("", "[[flows]]\ncontroller = \"prague\"\n"));
    assert_eq!(s.flows[0].ecn, EcnMode::L4s);
    let e = err(&with_flows(
        "",
        "[[flows]]\ncontroller = \"prague\"\necn = \"classic\"\n",
    ));
    assert_eq!(
        e,
        "t.toml:9:7: flows[0].ecn: controller `prague` requires ecn = \"l4s\"; remove `ecn` or \
         set it to \"l4s\""
    );
    // The test template: every flow of the test.
    let s = ok(&access_test("", "ecn = \"classic\"\n"));
    let Some(a) = s.topology.get::<AccessTest>() else {
        panic!()
    };
    assert_eq!(a.tcp.ecn, EcnMode::Classic);
    let cfg = s.to_sim_config();
    assert!(!cfg.flows.is_empty());
    assert!(cfg.flows.iter().all(|f| f.ecn == EcnMode::Classic));
    assert!(
        s.describe()
            .contains("every TCP flow runs cubic with ECN classic"),
        "{}",
        s.describe()
    );
    let s = ok(&access_test("", ""));
    assert!(
        s.to_sim_config()
            .flows
            .iter()
            .all(|f| f.ecn == EcnMode::Off)
    );
    let e = err(&access_test("", "ecn = \"clasic\"\n"));
    assert_eq!(
        e,
        "t.toml:6:7: tcp.ecn: unknown ECN mode `clasic`, expected one of: off, classic, l4s \
         (did you mean `classic`?)"
    );
}

/// Every queue-discipline default the declarations print (in `cclab list qdiscs --params` and
/// the README) is the default the simulator uses: writing it explicitly changes nothing.
#[test]
fn declared_qdisc_defaults_are_the_simulators() {
    for q in crate::scenario::qdisc::QDISCS.iter().skip(1) {
        let default = AqmConfig::default_for(q.decl.name).expect("a simulator discipline");
        assert_eq!(
            (q.decl.build)(&crate::scenario::params::Resolved::default()),
            Ok(Some(default.clone())),
            "{} without keys",
            q.decl.name
        );
        for p in q.decl.params.iter().filter(|p| p.default != "off") {
            let table = format!(
                "[topology.qdisc]\nkind = \"{}\"\n{} = {}\n",
                q.decl.name,
                p.name,
                p.default_toml()
            );
            let s = ok(&with_qdisc(&table));
            assert_eq!(
                bottleneck_qdisc(&s).0,
                Some(default.clone()),
                "{}.{} = {}",
                q.decl.name,
                p.name,
                p.default
            );
        }
    }
}

/// `profile = "LTE"`: 30 Mbit/s, half of the 60 ms RTT one way, a buffer of 120 ms at the link
/// rate (450 000 bytes); the flows' RTT is then the profile's.
#[test]
fn a_profile_sets_rate_delay_and_buffer() {
    let s = ok(r#"
name = "p"
[topology]
preset = "dumbbell"
profile = "LTE"
[[flows]]
controller = "cubic"
"#);
    let Some(d) = s.topology.get::<DumbbellPreset>() else {
        panic!("dumbbell expected")
    };
    assert_eq!(d.net.rate_bps, 30_000_000);
    assert_eq!(d.net.delay, Dur::from_millis(30));
    assert_eq!(d.net.queue, QueueLimit::Bytes(450_000));
    assert_eq!(d.bdp_rtt, Dur::from_millis(60));
}

/// What the file gives wins over the profile, key by key.
#[test]
fn keys_given_override_the_profile() {
    let s = ok(r#"
name = "p"
[topology]
preset = "dumbbell"
profile = "GEO"
rate = "10Mbit"
buffer = "100p"
[[flows]]
controller = "cubic"
"#);
    let Some(d) = s.topology.get::<DumbbellPreset>() else {
        panic!("dumbbell expected")
    };
    assert_eq!(d.net.rate_bps, 10_000_000);
    assert_eq!(d.net.delay, Dur::from_millis(300));
    assert_eq!(d.net.queue, QueueLimit::Packets(100));
}

/// An unknown profile names the key, lists the profiles and suggests the closest; without a
/// profile, a missing rate says that a profile could give it.
#[test]
fn profile_errors_point_at_the_key() {
    let e = err(r#"
name = "p"
[topology]
preset = "dumbbell"
profile = "lte"
[[flows]]
controller = "cubic"
"#);
    assert!(e.contains("t.toml:5:"), "{e}");
    assert!(e.contains("topology.profile"), "{e}");
    assert!(e.contains("unknown profile `lte`"), "{e}");
    assert!(e.contains("did you mean `LTE`"), "{e}");
    let e = err(r#"
name = "p"
[topology]
preset = "dumbbell"
delay = "10ms"
[[flows]]
controller = "cubic"
"#);
    assert!(e.contains("topology.rate"), "{e}");
    assert!(e.contains("or a `profile`"), "{e}");
}

/// A workload table: 200 flows arriving as a Poisson process of 50/s from 1 s, sizes from the
/// web-search CDF. Starts increase from after 1 s, their mean gap is 20 ms within 5 standard
/// errors (20 ms/√199), every size lies in the CDF's range, and the same seed draws the same
/// flows while another seed draws others.
#[test]
fn a_poisson_workload_with_drawn_sizes() {
    let text = r#"
name = "w"
duration = "60s"
[topology]
preset = "dumbbell"
rate = "100Mbit"
delay = "10ms"
[[flows]]
name = "web"
controller = "cubic"
count = 200
arrivals = 50
size_cdf = "websearch"
start = "1s"
"#;
    let s = ok(text);
    assert_eq!(s.flows.len(), 200);
    assert_eq!(s.flows[0].name, "web-1");
    let starts: Vec<f64> = s.flows.iter().map(|f| f.start.as_secs_f64()).collect();
    assert!(starts[0] > 1.0);
    assert!(starts.windows(2).all(|w| w[0] <= w[1]));
    let mean_gap = (starts[199] - starts[0]) / 199.0;
    assert!(
        (mean_gap - 0.02).abs() < 5.0 * 0.02 / 199f64.sqrt(),
        "{mean_gap}"
    );
    assert!(
        s.flows
            .iter()
            .all(|f| f.size.is_some_and(|b| (1..=30_000_000).contains(&b)))
    );
    let again = ok(text);
    assert_eq!(
        s.flows
            .iter()
            .map(|f| (f.start, f.size))
            .collect::<Vec<_>>(),
        again
            .flows
            .iter()
            .map(|f| (f.start, f.size))
            .collect::<Vec<_>>()
    );
    let other = crate::scenario::parse(
        text,
        "t.toml",
        &Overrides {
            seed: Some(9),
            ..Overrides::default()
        },
    )
    .unwrap();
    assert_ne!(s.flows[0].start, other.flows[0].start);
}

/// Workload errors: `arrivals` without `count`, `size` with `size_cdf`, an unknown CDF.
#[test]
fn workload_errors_name_the_key() {
    let base = "name = \"w\"\n[topology]\npreset = \"dumbbell\"\nrate = \"10Mbit\"\ndelay = \"10ms\"\n[[flows]]\ncontroller = \"cubic\"\n";
    let e = err(&format!("{base}arrivals = 5\n"));
    assert!(
        e.contains("flows[0].count") && e.contains("needs `count`"),
        "{e}"
    );
    let e = err(&format!(
        "{base}count = 2\nsize = \"1MB\"\nsize_cdf = \"websearch\"\n"
    ));
    assert!(
        e.contains("flows[0].size_cdf") && e.contains("not both"),
        "{e}"
    );
    let e = err(&format!("{base}count = 2\nsize_cdf = \"nosuch.cdf\"\n"));
    assert!(
        e.contains("t.toml:9:") && e.contains("neither a built-in CDF (websearch, datamining)"),
        "{e}"
    );
    let e = err(&format!("{base}count = 2\narrivals = -1\n"));
    assert!(e.contains("flows[0].arrivals"), "{e}");
}

/// What depends on the draws of Poisson arrivals is never a bound: a scenario whose every
/// arrival falls after its end names the seed that drew it, and the sample-row bound counts the
/// flows a table declares (10 here), not the few its draws start within 1 s, so the check holds
/// for every seed.
#[test]
fn poisson_draws_never_decide_a_bound() {
    let base = "name = \"w\"\nduration = \"1s\"\n[topology]\npreset = \"dumbbell\"\n\
                rate = \"10Mbit\"\ndelay = \"10ms\"\n";
    let e = err(&format!(
        "{base}[[flows]]\ncontroller = \"cubic\"\ncount = 1\narrivals = 0.001\n"
    ));
    assert!(
        e.contains("with seed 1") && e.contains("falls after the run's end (1 s)"),
        "{e}"
    );
    let e = err(&format!(
        "sample_interval = \"1us\"\n{base}[[flows]]\ncontroller = \"cubic\"\ncount = 10\n\
         arrivals = 2\n"
    ));
    assert!(e.contains("10 flows sampled every"), "{e}");
}

/// A table with `count = 0` adds no flow (a study level "without competitors"); the others
/// keep their names and order.
#[test]
fn a_flow_table_with_count_zero_adds_nothing() {
    let sc = ok(&format!(
        "{BASE}[[flows]]\nname = \"short\"\ncontroller = \"cubic\"\nsize = \"100KB\"\n\
         [[flows]]\nname = \"long\"\ncontroller = \"bbr3\"\ncount = 0\n"
    ));
    assert_eq!(sc.flows.len(), 1);
    assert_eq!(sc.flows[0].name, "short");
}

/// `undo`, `frto` and `rack_reo_adapt` turn the sender's undo mechanisms off one by one and
/// reach the simulator's flow; a non-boolean value names the key.
#[test]
fn undo_keys_reach_the_sender() {
    let s = ok(&with_flows(
        "",
        "[[flows]]\ncontroller = \"cubic\"\nfrto = false\n\n\
         [[flows]]\ncontroller = \"cubic\"\nundo = false\nrack_reo_adapt = false\n",
    ));
    let cfg = s.to_sim_config();
    let got: Vec<(bool, bool, bool)> = cfg
        .flows
        .iter()
        .map(|f| (f.undo, f.frto, f.rack_reo_adapt))
        .collect();
    assert_eq!(got, [(true, false, true), (false, true, false)]);
    let e = err(&with_flows(
        "",
        "[[flows]]\ncontroller = \"cubic\"\nfrto = 2\n",
    ));
    assert!(e.contains("frto"), "{e}");
}

/// A test's `[tcp]` template carries `handshake` to every flow of the test, on by default.
#[test]
fn a_tests_tcp_template_sets_the_handshake_of_its_flows() {
    for (line, want) in [("", true), ("handshake = false\n", false)] {
        let cfg = ok(&access_test("", line)).to_sim_config();
        assert!(!cfg.flows.is_empty());
        assert!(cfg.flows.iter().all(|f| f.handshake == want), "{line:?}");
    }
}

/// A request/response flow: `requests` exchanges, each response `size` bytes (or drawn from
/// `size_cdf` per response), the request keys with their declared defaults (200 B, no think
/// time, persistent), restart after idle on unless turned off.
#[test]
fn request_response_flows_resolve() {
    let s = ok(&with_flows(
        "",
        "[[flows]]\ncontroller = \"cubic\"\nrequests = 3\nsize = \"10KB\"\n",
    ));
    let f = &s.flows[0];
    assert_eq!(f.size, None);
    let r = f.requests.as_ref().expect("requests");
    assert_eq!(r.responses, vec![10_000; 3]);
    assert_eq!(
        (r.request_size, r.think_time, r.persistent),
        (200, Dur::ZERO, true)
    );
    assert!(f.slow_start_after_idle);
    let cfg = &s.to_sim_config().flows[0];
    assert_eq!(cfg.requests.as_ref(), Some(r));
    assert!(cfg.slow_start_after_idle);
    let s = ok(&with_flows(
        "",
        "[[flows]]\ncontroller = \"cubic\"\nrequests = 50\nsize_cdf = \"websearch\"\n\
         request_size = 500\nthink_time = \"1s\"\npersistent = false\n\
         slow_start_after_idle = false\n",
    ));
    let f = &s.flows[0];
    let r = f.requests.as_ref().unwrap();
    assert_eq!(r.responses.len(), 50);
    // Drawn per response: not all equal.
    assert!(r.responses.iter().any(|&b| b != r.responses[0]));
    assert_eq!(
        (r.request_size, r.think_time, r.persistent),
        (500, Dur::from_secs(1), false)
    );
    assert!(!f.slow_start_after_idle && !s.to_sim_config().flows[0].slow_start_after_idle);
    // requests = 0 is the flow's own application.
    let s = ok(&with_flows(
        "",
        "[[flows]]\ncontroller = \"cubic\"\nrequests = 0\nsize = 1000\nthink_time = 1\n",
    ));
    assert_eq!(
        (s.flows[0].size, s.flows[0].requests.as_ref()),
        (Some(1000), None)
    );
}

#[test]
fn requests_out_of_range_are_an_error() {
    let e = err(&with_flows(
        "",
        "[[flows]]\ncontroller = \"cubic\"\nsize = 1000\nrequests = -1\n",
    ));
    assert_eq!(
        e,
        "t.toml:10:12: flows[0].requests: must be between 0 and 100000 exchanges, got -1"
    );
}

#[test]
fn requests_need_a_response_size() {
    let e = err(&with_flows(
        "",
        "[[flows]]\ncontroller = \"cubic\"\nrequests = 4\n",
    ));
    assert_eq!(
        e,
        "t.toml:9:12: flows[0].requests: 4 request/response exchanges need the response size: \
         `size` (every response) or `size_cdf` (drawn per response)"
    );
}

#[test]
fn a_request_is_one_segment() {
    for v in ["0", "1449", "\"2KB\""] {
        let e = err(&with_flows(
            "",
            &format!(
                "[[flows]]\ncontroller = \"cubic\"\nrequests = 1\nsize = 1000\nrequest_size = {v}\n"
            ),
        ));
        assert!(
            e.starts_with(
                "t.toml:11:16: flows[0].request_size: must be within 1..=1448 bytes \
                 (a request is one segment of at most the flow's mss), got "
            ),
            "{e}"
        );
    }
}

#[test]
fn think_time_has_a_ceiling() {
    let e = err(&with_flows(
        "",
        "[[flows]]\ncontroller = \"cubic\"\nrequests = 1\nsize = 1000\nthink_time = 7200\n",
    ));
    assert!(
        e.starts_with("t.toml:11:14: flows[0].think_time: must be at most "),
        "{e}"
    );
}

#[test]
fn a_new_connection_per_exchange_needs_the_handshake() {
    let e = err(&with_flows(
        "",
        "[[flows]]\ncontroller = \"cubic\"\nrequests = 2\nsize = 1000\nhandshake = false\n\
         persistent = false\n",
    ));
    assert_eq!(
        e,
        "t.toml:12:14: flows[0].persistent: a new connection per exchange opens with a \
         handshake: `persistent = false` needs `handshake = true`"
    );
}

#[test]
fn request_keys_need_requests() {
    for key in [
        "request_size = 100",
        "think_time = \"1s\"",
        "persistent = false",
    ] {
        let e = err(&with_flows(
            "",
            &format!("[[flows]]\ncontroller = \"cubic\"\nsize = 1000\n{key}\n"),
        ));
        let name = key.split(' ').next().unwrap();
        assert!(
            e.starts_with("t.toml:10:")
                && e.contains(&format!(
                    "flows[0].{name}: `{name}` belongs to a request/response workload: add \
                 `requests = N` (the number of exchanges)"
                )),
            "{e}"
        );
    }
}

#[test]
fn fast_open_is_not_modelled_with_requests() {
    let e = err(&with_flows(
        "",
        "[[flows]]\ncontroller = \"cubic\"\nrequests = 2\nsize = 1000\nfast_open = true\n",
    ));
    assert!(
        e.starts_with("t.toml:11:13: flows[0].fast_open: TCP Fast Open is not modelled with"),
        "{e}"
    );
}

/// `transport = "quic"` with its options reaches the simulator's flow (no TCP handshake);
/// QUIC options without it, an unknown transport, out-of-range values and TCP-only features
/// are errors at the key.
#[test]
fn transport_and_quic_keys() {
    let s = ok(&with_flows("", "[[flows]]\ncontroller = \"cubic\"\n"));
    assert_eq!(
        s.to_sim_config().flows[0].transport,
        cclab_sim::Transport::Tcp
    );
    let s = ok(&with_flows(
        "",
        "[[flows]]\ncontroller = \"reno\"\ntransport = \"quic\"\nquic_clock = \"1ms\"\n\
         quic_ip_udp_overhead = 28\nquic_max_ack_delay = \"10ms\"\n",
    ));
    let cfg = &s.to_sim_config().flows[0];
    let cclab_sim::Transport::Quic(q) = cfg.transport else {
        panic!("a QUIC flow");
    };
    assert_eq!(q.clock_granularity, Dur::from_millis(1));
    assert_eq!((q.ip_udp_overhead, q.datagram_bytes), (28, 1280));
    assert_eq!(q.max_ack_delay, Dur::from_millis(10));
    assert!(!cfg.handshake);
    let e = err(&with_flows(
        "",
        "[[flows]]\ncontroller = \"reno\"\ntransport = \"qiuc\"\n",
    ));
    assert!(
        e.contains("flows[0].transport") && e.contains("did you mean `quic`"),
        "{e}"
    );
    let e = err(&with_flows(
        "",
        "[[flows]]\ncontroller = \"reno\"\nquic_clock = \"1ms\"\n",
    ));
    assert!(e.contains("needs `transport = \"quic\"`"), "{e}");
    let e = err(&with_flows(
        "",
        "[[flows]]\ncontroller = \"reno\"\ntransport = \"quic\"\nquic_datagram = 1000\n",
    ));
    assert!(
        e.contains("flows[0].quic_datagram") && e.contains("1200..=65527"),
        "{e}"
    );
    let e = err(&with_flows(
        "",
        "[[flows]]\ncontroller = \"reno\"\ntransport = \"quic\"\nrcv_wnd = \"1MB\"\n",
    ));
    assert!(e.contains("a QUIC flow has no"), "{e}");
}

/// `abba` is a key of `quicly_cubic` (ABBA on quicly's own CUBIC, the source's pairing) and
/// names the controller in results; `quicly_reno` has no such key.
#[test]
fn abba_on_quicly_cubic() {
    for (policy, name) in [
        ("off", "quicly_cubic"),
        ("on", "quicly_cubic_abba"),
        ("0x1", "quicly_cubic_abba0x1"),
    ] {
        let s = ok(&with_flows(
            "",
            &format!("[[flows]]\ncontroller = \"quicly_cubic\"\nabba = \"{policy}\"\n"),
        ));
        let cfg = s.to_sim_config();
        assert_eq!(cfg.flows[0].cc.name(), name);
        assert_eq!(cfg.flows[0].cc.build(1).name(), name);
    }
    let e = err(&with_flows(
        "",
        "[[flows]]\ncontroller = \"quicly_reno\"\nabba = \"on\"\n",
    ));
    assert!(e.contains("abba"), "{e}");
}

/// The presets that take `[[flows]]` refuse a Flent `[test]` and its `[tcp]` template, each
/// with the line of the section and the preset in the message.
#[test]
fn flows_presets_refuse_test_sections() {
    for (topology, who) in [
        (
            "preset = \"dumbbell\"\nrate = \"10Mbit\"\ndelay = \"10ms\"",
            "a dumbbell",
        ),
        (
            "preset = \"quicly\"\nprofile = \"DSL\"",
            "the quicly preset",
        ),
    ] {
        let head = format!("name = \"t\"\n[topology]\n{topology}\n");
        let e = err(&format!(
            "{head}[[flows]]\ncontroller = \"reno\"\n[test]\nname = \"rrul\"\n"
        ));
        assert!(
            e.contains("t.toml:") && e.contains("test") && e.contains("wifi_hybrid"),
            "{e}"
        );
        let e = err(&format!(
            "{head}[[flows]]\ncontroller = \"reno\"\n[tcp]\ncontroller = \"reno\"\n"
        ));
        assert!(e.contains(&format!("{who} takes [[flows]]")), "{e}");
    }
}

/// The slow reader's keys: read into the flow, and every misuse named with its line and key.
#[test]
fn reader_keys_are_read_and_checked() {
    let s = ok(&with_flows(
        "",
        "[[flows]]\ncontroller = \"cubic\"\nread_rate = \"10Mbit\"\nread_chunk = \"64KiB\"\n\
         rcvbuf = \"1MiB\"\n",
    ));
    let r = s.flows[0].reader.expect("a reader");
    assert_eq!(r.rate_bps, 10_000_000);
    assert_eq!(r.chunk, 64 * 1024);
    assert_eq!(r.rcvbuf, Some(1024 * 1024));
    let d = ok(&with_flows(
        "",
        "[[flows]]\ncontroller = \"cubic\"\nread_rate = \"10Mbit\"\n",
    ));
    assert_eq!(
        d.flows[0].reader,
        Some(cclab_sim::ReaderConfig::at_rate(10_000_000))
    );
    assert!(
        ok(&with_flows("", "[[flows]]\ncontroller = \"cubic\"\n")).flows[0]
            .reader
            .is_none()
    );
    let flow = |keys: &str| with_flows("", &format!("[[flows]]\ncontroller = \"cubic\"\n{keys}"));
    for (keys, line, key, says) in [
        (
            "read_chunk = \"64KiB\"\n",
            9,
            "read_chunk",
            "needs `read_rate`",
        ),
        ("rcvbuf = \"1MiB\"\n", 9, "rcvbuf", "needs `read_rate`"),
        (
            "read_rate = \"1Mbit\"\nread_chunk = 0\n",
            10,
            "read_chunk",
            "at least 1 byte",
        ),
        (
            "read_rate = \"1Mbit\"\nrcvbuf = 1000\n",
            10,
            "rcvbuf",
            "at least two segments",
        ),
        (
            "read_rate = \"1Mbit\"\nrcv_wnd = 65535\n",
            9,
            "read_rate",
            "no `rcv_wnd`",
        ),
    ] {
        let e = err(&flow(keys));
        assert!(
            e.contains(&format!("t.toml:{line}")) && e.contains(key) && e.contains(says),
            "{keys}: {e}"
        );
    }
}

/// `stack = "ns3"` sets every rule of ns-3.37's profile and the defaults of `undo`, `frto` and
/// `delayed_ack`; a rule key the flow gives overrides its stack (an ablation), and a bad value
/// names the key and the valid values.
#[test]
fn stack_sets_the_rules_and_keys_override_them() {
    let s = ok(&with_flows(
        "",
        "[[flows]]\ncontroller = \"cubic\"\nstack = \"ns3\"\n\
         [[flows]]\ncontroller = \"cubic\"\nstack = \"ns3\"\nloss_detection = \"rack\"\nundo = true\n\
         [[flows]]\ncontroller = \"cubic\"\nrto_min = \"1s\"\n",
    ));
    let f = &s.flows;
    assert_eq!(f[0].stack, crate::scenario::stack::Stack::Ns3);
    assert_eq!(f[0].tcp, cclab_sim::TcpRules::NS3);
    assert!(!f[0].undo && !f[0].frto);
    assert_eq!(f[0].delayed_ack, cclab_sim::Dur::from_millis(200));
    assert_eq!(f[1].tcp.loss_detection, cclab_sim::LossDetection::Rack);
    assert!(f[1].undo && !f[1].frto);
    assert!(!f[1].tcp.tlp);
    assert_eq!(f[2].tcp.rto_min, cclab_sim::Dur::from_secs(1));
    assert_eq!(f[2].tcp.loss_detection, cclab_sim::LossDetection::Rack);
    assert_eq!(f[2].delayed_ack, cclab_sim::Dur::from_millis(40));
    let e = err(&with_flows(
        "",
        "[[flows]]\ncontroller = \"cubic\"\nstack = \"ns2\"\n",
    ));
    assert!(
        e.contains("flows[0].stack: unknown stack `ns2`, expected one of: linux, ns3"),
        "{e}"
    );
    let e = err(&with_flows(
        "",
        "[[flows]]\ncontroller = \"cubic\"\nrto_min = \"0s\"\n",
    ));
    assert!(
        e.contains("flows[0].rto_min: must be above 0 and at most 60 s, got 0 s"),
        "{e}"
    );
}

/// Under `stack = "ns3"` the controller runs as ns-3 has it (CUBIC without the Reno-friendly
/// region, BBRv3 with the port's per-mark ECN response), unless the flow gives that key itself.
#[test]
fn an_explicit_controller_key_wins_over_the_stacks_variant() {
    let s = ok(&with_flows(
        "",
        "[[flows]]\ncontroller = \"cubic\"\nstack = \"ns3\"\n\
         [[flows]]\ncontroller = \"cubic\"\nstack = \"ns3\"\ntcp_friendliness = true\n\
         [[flows]]\ncontroller = \"bbr3\"\nstack = \"ns3\"\n\
         [[flows]]\ncontroller = \"bbr3\"\nstack = \"ns3\"\necn_response = \"google\"\n",
    ));
    let f = &s.flows;
    assert!(matches!(&f[0].cc, CcSpec::Cubic(c) if !c.tcp_friendliness));
    assert!(matches!(&f[1].cc, CcSpec::Cubic(c) if c.tcp_friendliness));
    assert!(
        matches!(&f[2].cc, CcSpec::Bbr3(c) if c.ecn_response == cclab_cc::EcnResponse::PerMark)
    );
    assert!(matches!(&f[3].cc, CcSpec::Bbr3(c) if c.ecn_response == cclab_cc::EcnResponse::Google));
}

/// `topology.bottleneck_at = "sender"`: the one flow's NIC takes the rate and the 1-BDP
/// buffer and is the monitored link; the switch's link keeps only its delay. Errors name the
/// key and say why.
#[test]
fn the_bottleneck_can_sit_on_the_sending_host() {
    let flow = "[[flows]]\ncontroller = \"cubic\"\n";
    let cfg = ok(&format!("{BASE}bottleneck_at = \"sender\"\n{flow}")).to_sim_config();
    let monitored: Vec<_> = cfg.links.iter().filter(|l| l.monitor).collect();
    assert_eq!(monitored.len(), 1);
    assert_eq!(monitored[0].name, "s0->left");
    assert_eq!(monitored[0].rate_bps, Some(100_000_000));
    // 1 BDP at 20 ms: 250,000 bytes.
    assert_eq!(
        monitored[0].queue,
        cclab_sim::QueueConfig::DropTail {
            limit: QueueLimit::Bytes(250_000)
        }
    );
    assert_eq!(cfg.links[0].rate_bps, None);
    let switch = ok(&format!("{BASE}bottleneck_at = \"switch\"\n{flow}")).to_sim_config();
    assert!(switch.links[0].monitor && switch.links[0].rate_bps == Some(100_000_000));
    let e = err(&format!("{BASE}bottleneck_at = \"sender\"\n{flow}{flow}"));
    assert!(
        e.contains("t.toml:7")
            && e.contains("topology.bottleneck_at")
            && e.contains("exactly one flow")
            && e.contains("got 2"),
        "{e}"
    );
    let e = err(&format!(
        "{BASE}bottleneck_at = \"sender\"\n{flow}[[probes]]\ninterval = \"100ms\"\n"
    ));
    assert!(
        e.contains("topology.bottleneck_at") && e.contains("probes"),
        "{e}"
    );
    // A VM's host queue is the tap queue: the buffer must hold it, in packets.
    let vm = "[flows.host]\npreset = \"vm\"\ntap_queue = 167\n";
    let e = err(&format!("{BASE}bottleneck_at = \"sender\"\n{flow}{vm}"));
    assert!(
        e.contains("topology.bottleneck_at") && e.contains("buffer = \"167p\""),
        "{e}"
    );
    let cfg = ok(&format!(
        "{BASE}bottleneck_at = \"sender\"\nbuffer = \"167p\"\n{flow}{vm}"
    ))
    .to_sim_config();
    assert_eq!(
        cfg.links[2].queue,
        QueueConfig::DropTail {
            limit: QueueLimit::Packets(167)
        }
    );
    let e = err(&format!("{BASE}bottleneck_at = \"host\"\n{flow}"));
    assert!(
        e.contains("topology.bottleneck_at") && e.contains("switch, sender"),
        "{e}"
    );
}
