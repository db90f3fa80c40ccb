//! Every controller key a scenario file sets reaches the controller: the parsed spec carries the
//! value, and for Vegas' α/β and CUBIC's β the simulated flow behaves as the value says.

use cclab_cc::{
    CarefulResumeConfig, CcSpec, CubicConfig, Dur, PragueConfig, SlowStartKind, VegasConfig,
};
use cclab_lab::scenario::{self, Overrides, Scenario};
use cclab_sim::{Results, Simulation};

fn parse(topology: &str, flow: &str) -> Scenario {
    let text = format!(
        "name = \"t\"\nduration = \"10s\"\n[topology]\npreset = \"dumbbell\"\n{topology}\n\
         [[flows]]\n{flow}\n"
    );
    scenario::parse(&text, "t.toml", &Overrides::default()).unwrap_or_else(|e| panic!("{e}"))
}

fn run(s: &Scenario) -> Results {
    Simulation::new(s.to_sim_config())
        .expect("valid config")
        .run()
}

const PATH: &str = "rate = \"10Mbit\"\ndelay = \"20ms\"\nbuffer = \"400p\"";

/// The error a dumbbell scenario with one flow table of `flow`'s lines gives (it must be
/// invalid); the flow's first line is line 9 of the file.
fn flow_error(flow: &str) -> String {
    let text = format!(
        "name = \"t\"\nduration = \"10s\"\n[topology]\npreset = \"dumbbell\"\n{PATH}\n\
         [[flows]]\n{flow}\n"
    );
    scenario::parse(&text, "t.toml", &Overrides::default())
        .expect_err("invalid")
        .to_string()
}

#[test]
fn every_controller_key_is_in_the_spec() {
    let s = parse(
        PATH,
        "controller = \"vegas\"\nalpha = 6\nbeta = 9\ngamma = 3",
    );
    assert_eq!(
        s.flows[0].cc,
        CcSpec::Vegas(VegasConfig {
            alpha: 6,
            beta: 9,
            gamma: 3,
            ..VegasConfig::default()
        })
    );
    let s = parse(
        PATH,
        "controller = \"prague\"\nrtt_target = \"10ms\"\nrtt_independence = false\n\
         rtt_transition = 20",
    );
    assert_eq!(
        s.flows[0].cc,
        CcSpec::Prague(PragueConfig {
            rtt_target: Dur::from_millis(10),
            rtt_independence: false,
            rtt_transition: 20
        })
    );
    let s = parse(
        PATH,
        "controller = \"cubic\"\nbeta = 0.5\nc = 0.8\nslow_start = \"standard\"\n\
         fast_convergence = false\ntcp_friendliness = false",
    );
    assert_eq!(
        s.flows[0].cc,
        CcSpec::Cubic(CubicConfig {
            slow_start: SlowStartKind::Standard,
            fast_convergence: false,
            tcp_friendliness: false,
            beta: 512,
            bic_scale: 82,
            ..CubicConfig::default()
        })
    );
}

#[test]
fn controller_key_errors_quote_the_declaration() {
    let text = |flow: &str| {
        format!("name = \"t\"\n[topology]\npreset = \"dumbbell\"\n{PATH}\n[[flows]]\n{flow}\n")
    };
    let err = |flow: &str| {
        scenario::parse(&text(flow), "t.toml", &Overrides::default())
            .expect_err("invalid")
            .to_string()
    };
    assert_eq!(
        err("controller = \"vegas\"\nalpha = 5\nbeta = 3"),
        "t.toml:9:9: flows[0].alpha: Vegas needs alpha ≤ beta (segments queued), got alpha 5 and \
         beta 3"
    );
    assert_eq!(
        err("controller = \"cubic\"\nbeta = 1.5"),
        "t.toml:9:8: flows[0].beta: must be in (0, 1), got 1.5"
    );
    assert_eq!(
        err("controller = \"prague\"\nrtt_target = true"),
        "t.toml:9:14: flows[0].rtt_target: expected a duration such as \"20ms\" or a number of \
         seconds, got true"
    );
    assert_eq!(
        err("controller = \"vegas\"\nalpha = \"2\""),
        "t.toml:9:9: flows[0].alpha: expected an integer in 0..=10000 segments, got \"2\""
    );
    assert_eq!(
        err("controller = \"reno\"\nalpha = 2"),
        "t.toml:9:9: flows[0].alpha: `alpha` is a vegas parameter; controller `reno` has no such \
         parameter (it takes: slow_start, jumpstart_rtt, cr_saved_cwnd, cr_saved_rtt, cr_max_jump, \
         cr_beta, chirp_size, chirp_initial_gap, chirp_geometry, chirp_gain, chirp_excursion)"
    );
}

/// Vegas holds between α and β segments in the bottleneck queue (Linux `tcp_vegas_cong_avoid`):
/// with α/β = 20/30 instead of 2/4 the standing queue, and with it the RTT, is about ten
/// times larger. At 10 Mbit/s a 1500-byte packet takes 1.2 ms to send.
#[test]
fn vegas_alpha_and_beta_set_the_standing_queue() {
    let queued = |flow: &str| {
        let r = run(&parse(PATH, flow));
        let p50 = r.flows[0].summary.rtt_p50_ms.expect("RTT samples");
        // Queueing delay over the 40 ms base RTT, in packets.
        (p50 - 40.0) / 1.2
    };
    let default = queued("controller = \"vegas\"");
    let deep = queued("controller = \"vegas\"\nalpha = 20\nbeta = 30");
    assert!(
        (1.0..=6.0).contains(&default),
        "default Vegas queues {default} packets"
    );
    assert!(
        (17.0..=33.0).contains(&deep),
        "α/β = 20/30 queues {deep} packets"
    );
}

/// CUBIC's β is the window kept after a loss: one scripted drop, then ssthresh = β·cwnd.
#[test]
fn cubic_beta_sets_the_window_after_a_loss() {
    let after_loss = |beta: &str| {
        let s = parse(
            &format!("{PATH}\n[[topology.drops]]\nflow = 0\nseq = 200"),
            &format!("controller = \"cubic\"\nslow_start = \"standard\"\ntrace = true\n{beta}"),
        );
        let r = run(&s);
        let trace = &r.flows[0].trace;
        let i = trace
            .iter()
            .position(|p| p.ca_state == "recovery")
            .expect("the drop starts a recovery");
        let ssthresh = trace[i].ssthresh.unwrap();
        let cwnd_before = trace[..i].last().expect("ACKs before the loss").cwnd;
        f64::from(ssthresh) / f64::from(cwnd_before)
    };
    let linux = after_loss("");
    let half = after_loss("beta = 0.5");
    assert!((linux - 0.7).abs() < 0.03, "β 0.7 keeps {linux}");
    assert!((half - 0.5).abs() < 0.03, "β 0.5 keeps {half}");
}

/// The `[tcp]` template of a Flent-equivalent test takes the same controller keys.
#[test]
fn test_templates_take_controller_keys() {
    let text = "name = \"t\"\n[test]\nname = \"tcp_upload\"\nlength = \"5s\"\n[tcp]\n\
                controller = \"vegas\"\nalpha = 3\nbeta = 6\n[topology]\npreset = \"access\"\n\
                rate = \"10Mbit\"\ndelay = \"5ms\"\n";
    let s =
        scenario::parse(text, "t.toml", &Overrides::default()).unwrap_or_else(|e| panic!("{e}"));
    let Some(a) = s.topology.get::<scenario::AccessTest>() else {
        panic!("an access test")
    };
    assert_eq!(
        a.tcp.cc,
        CcSpec::Vegas(VegasConfig {
            alpha: 3,
            beta: 6,
            gamma: 1,
            ..VegasConfig::default()
        })
    );
    let e = scenario::parse(
        &text.replace("alpha = 3", "robust = true"),
        "t.toml",
        &Overrides::default(),
    )
    .expect_err("not a Vegas key")
    .to_string();
    assert!(
        e.starts_with("t.toml:7:10: tcp.robust: `robust` is a bbr1/bbr1_2brobust/bbr3/bbr3_2brobust/bbr_tas parameter; controller `vegas` has no such parameter"),
        "{e}"
    );
}

/// `slow_start = "jumpstart"` with `jumpstart_rtt` reaches the controller, `rcv_wnd` the flow,
/// and the run's first flight is the transfer up to the receive window: 40 of 100 segments
/// (57 920 B = 40 · 1448) fill the window, the rest wait for it to open.
#[test]
fn jumpstart_and_the_receive_window_reach_the_flow() {
    let s = parse(
        PATH,
        "controller = \"newreno\"\nslow_start = \"jumpstart\"\njumpstart_rtt = \"40ms\"\n\
         size = 144800\nrcv_wnd = 57920\ntrace = true",
    );
    assert_eq!(
        s.flows[0].cc,
        CcSpec::NewReno {
            slow_start: SlowStartKind::JumpStart {
                fallback_rtt: Some(Dur::from_millis(40))
            },
            rules: cclab_cc::RenoRules::LINUX,
        }
    );
    assert_eq!(s.flows[0].rcv_wnd, Some(57_920));
    let r = run(&s);
    let tr = &r.flows[0].trace;
    let first_ack = tr.iter().find(|p| p.event == "ack").expect("an ACK");
    // The row is taken after the ACK was processed: the window SND.UNA + 40 is full.
    assert_eq!(first_ack.snd_nxt, first_ack.snd_una + 40);
    assert_eq!(tr.iter().map(|p| p.snd_nxt - p.snd_una).max(), Some(40));
    assert!(r.flows[0].summary.complete);
}

/// `jumpstart_rtt` needs Jump Start; `rcv_wnd` must hold a segment.
#[test]
fn jumpstart_rtt_without_jumpstart_and_a_tiny_window_are_located_errors() {
    assert_eq!(
        flow_error("controller = \"cubic\"\njumpstart_rtt = \"40ms\""),
        "t.toml:10:17: flows[0].jumpstart_rtt: `jumpstart_rtt` needs slow_start = \"jumpstart\" \
         (the slow start is `hystart`)"
    );
    assert_eq!(
        flow_error("controller = \"reno\"\nrcv_wnd = 1000"),
        "t.toml:10:11: flows[0].rcv_wnd: must hold at least one segment (1448 bytes, the flow's \
         mss), got 1000 bytes"
    );
}

/// `slow_start = "careful_resume"` with its saved state reaches the controller (RFC 9959 §3.1:
/// saved_cwnd, saved_rtt; §2.4: max_jump, Beta), and the run jumps to min(max_jump,
/// saved_cwnd/2) = 60 once the IW is acknowledged (§3.3).
#[test]
fn careful_resume_keys_reach_the_flow() {
    let s = parse(
        PATH,
        "controller = \"cubic\"\nslow_start = \"careful_resume\"\ncr_saved_cwnd = 300\n\
         cr_saved_rtt = \"40ms\"\ncr_max_jump = 60\ncr_beta = 0.7\nsize = 1000000\ntrace = true",
    );
    assert_eq!(
        s.flows[0].cc.slow_start(),
        Some(SlowStartKind::CarefulResume(CarefulResumeConfig {
            saved_cwnd: 300,
            saved_rtt: Some(Dur::from_millis(40)),
            max_jump: Some(60),
            beta_permille: 700,
        }))
    );
    let r = run(&s);
    let tr = &r.flows[0].trace;
    assert_eq!(tr.iter().map(|p| p.cwnd).find(|&c| c > 20), Some(60));
    // Without saved state the variant is standard slow start (§3.2).
    let s = parse(
        PATH,
        "controller = \"reno\"\nslow_start = \"careful_resume\"",
    );
    assert_eq!(
        s.flows[0].cc.slow_start(),
        Some(SlowStartKind::CarefulResume(CarefulResumeConfig::NONE))
    );
}

/// The `cr_*` keys need Careful Resume, and Careful Resume takes no `jumpstart_rtt`; β stays in
/// [0.5, 1] (§2.4).
#[test]
fn careful_resume_keys_without_careful_resume_are_located_errors() {
    assert_eq!(
        flow_error("controller = \"newreno\"\ncr_saved_rtt = \"40ms\""),
        "t.toml:10:16: flows[0].cr_saved_rtt: `cr_saved_rtt` needs slow_start = \
         \"careful_resume\" (the slow start is `standard`)"
    );
    assert_eq!(
        flow_error(
            "controller = \"cubic\"\nslow_start = \"careful_resume\"\njumpstart_rtt = \"40ms\""
        ),
        "t.toml:11:17: flows[0].jumpstart_rtt: `jumpstart_rtt` needs slow_start = \"jumpstart\" \
         (the slow start is `careful_resume`)"
    );
    assert_eq!(
        flow_error("controller = \"cubic\"\nslow_start = \"careful_resume\"\ncr_beta = 0.4"),
        "t.toml:11:11: flows[0].cr_beta: must be in [0.5, 1], got 0.4"
    );
}

/// Paced Chirping's keys reach the controller (ratios in the code's 1/1024 fixed point), the
/// defaults are the code's, and a chirping key without `slow_start = "chirping"` is a located
/// conflict.
#[test]
fn chirping_keys_reach_the_controller() {
    let s = parse(
        PATH,
        "controller = \"cubic\"\nslow_start = \"chirping\"\nchirp_size = 32\n\
         chirp_initial_gap = \"100us\"\nchirp_geometry = 1.5\nchirp_gain = 3.0\nchirp_excursion = 4",
    );
    let Some(SlowStartKind::Chirping(c)) = s.flows[0].cc.slow_start() else {
        panic!("{:?}", s.flows[0].cc)
    };
    assert_eq!(
        (
            c.chirp_size,
            c.initial_gap,
            c.geometry,
            c.gain,
            c.excursion_len
        ),
        (32, Dur::from_micros(100), 1536, 3072, 4)
    );
    let s = parse(PATH, "controller = \"reno\"\nslow_start = \"chirping\"");
    assert_eq!(
        s.flows[0].cc.slow_start(),
        Some(SlowStartKind::Chirping(cclab_cc::ChirpingConfig::DEFAULT))
    );
    let text = format!(
        "name = \"t\"\nduration = \"10s\"\n[topology]\npreset = \"dumbbell\"\n{PATH}\n\
         [[flows]]\ncontroller = \"cubic\"\nchirp_size = 8\n"
    );
    let e = scenario::parse(&text, "t.toml", &Overrides::default())
        .expect_err("invalid")
        .to_string();
    assert!(
        e.contains("flows[0].chirp_size: `chirp_size` needs slow_start = \"chirping\""),
        "{e}"
    );
}
