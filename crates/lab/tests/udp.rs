//! `[[udp]]` in a scenario file: sources reach the simulator with their defaults (client →
//! server), run deterministically, appear in `summary.json`, and mistakes are located errors.

use cclab_lab::output;
use cclab_lab::{Overrides, parse};
use cclab_sim::packet::Ecn;
use cclab_sim::udp::{Periods, UdpPattern};
use cclab_sim::{Dur, Simulation};

const BASE: &str = "name = \"u\"\nduration = \"2s\"\n[topology]\npreset = \"dumbbell\"\n\
                    rate = \"20Mbit\"\ndelay = \"10ms\"\n[[flows]]\ncontroller = \"cubic\"\n";

fn with(udp: &str) -> Result<cclab_lab::Scenario, String> {
    parse(&format!("{BASE}{udp}"), "u.toml", &Overrides::default()).map_err(|e| e.to_string())
}

fn err(udp: &str) -> String {
    match with(udp) {
        Ok(_) => panic!("expected an error for:\n{udp}"),
        Err(e) => e,
    }
}

/// Defaults: the client → server direction of the dumbbell (the first flow's `s0` → `r0`),
/// 1500-byte datagrams, best effort, Not-ECT, exponential on/off periods of 1 s; `reverse`
/// swaps the ends; every key reaches the simulator.
#[test]
fn sources_reach_the_simulator_with_their_defaults() {
    let sc = with(
        "[[udp]]\nkind = \"cbr\"\nrate = \"5Mbit\"\n\
         [[udp]]\nname = \"burst\"\nkind = \"onoff\"\nrate = 8000000\nperiods = \"fixed\"\n\
         on = \"100ms\"\nsize = 1000\ndscp = 46\necn = \"ect1\"\nstart = \"0.5s\"\nstop = \"1.5s\"\n\
         [[udp]]\nkind = \"poisson\"\nrate = \"1Mbit\"\nreverse = true\n",
    )
    .unwrap();
    let cfg = sc.to_sim_config();
    let node = |i: usize| cfg.nodes[cfg.udp[i].src.0 as usize].name.clone();
    let dst = |i: usize| cfg.nodes[cfg.udp[i].dst.0 as usize].name.clone();
    assert_eq!(cfg.udp.len(), 3);
    assert_eq!((node(0), dst(0)), ("s0".to_owned(), "r0".to_owned()));
    assert_eq!((node(2), dst(2)), ("r0".to_owned(), "s0".to_owned()));
    let u = &cfg.udp[0];
    assert_eq!(u.name, "udp0");
    assert_eq!(
        u.pattern,
        UdpPattern::Cbr {
            rate_bps: 5_000_000
        }
    );
    assert_eq!((u.size, u.dscp, u.ecn), (1500, 0, Ecn::NotEct));
    let b = &cfg.udp[1];
    assert_eq!(
        b.pattern,
        UdpPattern::OnOff {
            rate_bps: 8_000_000,
            on: Dur::from_millis(100),
            off: Dur::from_secs(1),
            periods: Periods::Fixed,
        }
    );
    assert_eq!((b.size, b.dscp, b.ecn), (1000, 46, Ecn::Ect1));
    assert_eq!(b.start.0, 500_000_000);
    assert_eq!(b.stop.map(|t| t.0), Some(1_500_000_000));
    assert_eq!(cfg.udp[2].name, "udp2");
}

/// The same scenario and seed give byte-identical `summary.json` files, with one `udp` entry
/// per source; a scenario without `[[udp]]` has no `udp` key at all (the output of every
/// existing scenario is unchanged).
#[test]
fn same_seed_identical_summary() {
    let sc = with("[[udp]]\nkind = \"poisson\"\nrate = \"4Mbit\"\nsize = 1000\n").unwrap();
    let summary = |cfg| {
        let r = Simulation::new(cfg).unwrap().run();
        let mut buf = Vec::new();
        output::write_summary_json(&mut buf, "u", &r).unwrap();
        String::from_utf8(buf).unwrap()
    };
    let a = summary(sc.to_sim_config());
    assert_eq!(a, summary(sc.to_sim_config()));
    for key in [
        "\"udp\"",
        "\"sent\"",
        "\"received\"",
        "\"lost\"",
        "\"loss_rate\"",
        "\"bytes_received\"",
        "\"goodput_mbps\"",
        "\"owd_mean_ms\"",
        "\"owd_p50_ms\"",
        "\"owd_p99_ms\"",
    ] {
        assert!(a.contains(key), "{key} missing from\n{a}");
    }
    let other = parse(
        &format!("{BASE}\n[[udp]]\nkind = \"poisson\"\nrate = \"4Mbit\"\nsize = 1000\n")
            .replace("name = \"u\"", "name = \"u\"\nseed = 2"),
        "u.toml",
        &Overrides::default(),
    )
    .unwrap();
    assert_ne!(a, summary(other.to_sim_config()));
    let plain = with("").unwrap();
    assert!(!summary(plain.to_sim_config()).contains("\"udp\""));
}

/// Mistakes name the file, the line, the key and the valid values.
#[test]
fn mistakes_are_located_errors() {
    let e = err("[[udp]]\nrate = \"5Mbit\"\n");
    assert!(
        e.contains("u.toml") && e.contains("udp[0].kind") && e.contains("cbr, onoff, poisson"),
        "{e}"
    );
    let e = err("[[udp]]\nkind = \"cbrr\"\nrate = \"5Mbit\"\n");
    assert!(e.contains("udp[0].kind") && e.contains("cbr"), "{e}");
    let e = err("[[udp]]\nkind = \"cbr\"\nrate = \"5Mbit\"\nszie = 100\n");
    assert!(
        e.contains("udp[0].szie") && e.contains("did you mean `size`"),
        "{e}"
    );
    let e = err("[[udp]]\nkind = \"cbr\"\nrate = \"5Mbit\"\non = \"1s\"\n");
    assert!(e.contains("udp[0].on") && e.contains("onoff"), "{e}");
    let e = err("[[udp]]\nkind = \"cbr\"\n");
    assert!(e.contains("udp[0].rate") && e.contains("required"), "{e}");
    let e = err("[[udp]]\nkind = \"cbr\"\nrate = \"5Mbit\"\ndscp = 64\n");
    assert!(e.contains("udp[0].dscp") && e.contains("0..=63"), "{e}");
    let e = err("[[udp]]\nkind = \"cbr\"\nrate = \"5Mbit\"\nsize = 10\n");
    assert!(e.contains("udp[0].size") && e.contains("28..=65535"), "{e}");
    let e = err("[[udp]]\nkind = \"cbr\"\nrate = \"5Mbit\"\necn = \"ect2\"\n");
    assert!(
        e.contains("udp[0].ecn") && e.contains("not-ect, ect0, ect1, ce"),
        "{e}"
    );
    let e = err("[[udp]]\nkind = \"cbr\"\nrate = \"5Mbit\"\nsrc = \"left\"\n");
    assert!(e.contains("udp[0].src") && e.contains("s0, r0"), "{e}");
    let e = err("[[udp]]\nkind = \"cbr\"\nrate = \"5Mbit\"\ndst = \"s0\"\n");
    assert!(e.contains("udp[0].dst") && e.contains("same host"), "{e}");
    let e = err("[[udp]]\nkind = \"onoff\"\nrate = \"5Mbit\"\noff = 0\n");
    assert!(e.contains("udp[0].off") && e.contains("positive"), "{e}");
    let e = err("[[udp]]\nkind = \"cbr\"\nrate = \"5Mbit\"\nstart = \"3s\"\n");
    assert!(
        e.contains("udp[0].start") && e.contains("before the end"),
        "{e}"
    );
    let e = err("[[udp]]\nkind = \"cbr\"\nrate = \"5Mbit\"\nstart = 1\nstop = 1\n");
    assert!(
        e.contains("udp[0].stop") && e.contains("after `start`"),
        "{e}"
    );
    let e = err("[[udp]]\nkind = \"cbr\"\nrate = \"100Tbit\"\nsize = 28\n");
    assert!(e.contains("udp[0].rate") && e.contains("at most"), "{e}");
    let e = err(
        "[[udp]]\nkind = \"cbr\"\nrate = \"1Mbit\"\n[[udp]]\nkind = \"cbr\"\nrate = \"1Mbit\"\nname = \"udp0\"\n",
    );
    assert!(
        e.contains("udp[1].name") && e.contains("already exists"),
        "{e}"
    );
    // The line of the offending key.
    let e = err("[[udp]]\nkind = \"cbr\"\nrate = \"5Mbit\"\ndscp = 99\n");
    assert!(e.contains("u.toml:12:"), "line of `dscp` (12): {e}");
}

/// On/off periods of a nanosecond would make a datagram per burst, billions of them: refused
/// like a rate that makes too many datagrams.
#[test]
fn tiny_on_off_periods_are_refused() {
    let e = err("[[udp]]\nkind = \"onoff\"\nrate = \"1kbit\"\non = \"1ns\"\noff = \"1ns\"\n");
    assert!(
        e.contains("udp[0].rate") && e.contains("on/off periods"),
        "{e}"
    );
}

/// In an `access` test the default direction is the client's upload to its first server, and
/// `reverse` makes it a download; the test's own flows are unchanged and the source runs.
#[test]
fn access_defaults_are_client_to_server() {
    let text = "name = \"t\"\n[test]\nname = \"tcp_upload\"\nlength = \"2s\"\n[tcp]\n\
                controller = \"cubic\"\n[topology]\npreset = \"access\"\n\
                rate = \"10Mbit\"\ndelay = \"5ms\"\n\
                [[udp]]\nkind = \"cbr\"\nrate = \"1Mbit\"\n\
                [[udp]]\nkind = \"cbr\"\nrate = \"1Mbit\"\nreverse = true\n";
    let sc = parse(text, "t.toml", &Overrides::default()).unwrap_or_else(|e| panic!("{e}"));
    let cfg = sc.to_sim_config();
    let name = |n: cclab_sim::NodeId| cfg.nodes[n.0 as usize].name.as_str();
    assert_eq!(
        (name(cfg.udp[0].src), name(cfg.udp[0].dst)),
        ("client", "server0")
    );
    assert_eq!(
        (name(cfg.udp[1].src), name(cfg.udp[1].dst)),
        ("server0", "client")
    );
    let plan = sc.run_plan(1, "x");
    assert_eq!(plan.sim.udp.len(), 2);
    let r = Simulation::new(plan.sim).unwrap().run();
    assert!(r.udp.iter().all(|u| u.summary.received > 0));
}
