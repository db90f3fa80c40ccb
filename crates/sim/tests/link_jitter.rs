//! A link's own jitter (`LinkConfig::jitter`): each packet's extra delay is drawn when its
//! serialisation ends and kept in the link's delay line, ordered by arrival, so packets may
//! overtake each other (`reorder`) or not. Checked against the distribution and the overtaking
//! probability of uniform delays, on pings whose only variable delay is the jitter; with TCP,
//! for reordering, conservation and determinism.

#![warn(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss
)]

use std::collections::BTreeMap;

use cclab_cc::{CcSpec, Dur};
use cclab_sim::net::{Distribution, JitterDist};
use cclab_sim::topology::Dumbbell;
use cclab_sim::{LinkJitter, QueueConfig, QueueLimit, Results, SimConfig, Simulation};

/// A 20 Mbit/s, 10 ms dumbbell for 10 s with a ping every `interval` and nothing else.
fn ping_path(interval: Dur) -> SimConfig {
    let mut d = Dumbbell::new(20_000_000, Dur::from_millis(10), QueueLimit::Packets(100));
    d.duration = Dur::from_secs(10);
    d.add_ping(interval);
    d.build()
}

/// `cfg` with `jitter` on the bottleneck's forward direction (the pings' requests).
fn jittered(mut cfg: SimConfig, jitter: LinkJitter) -> SimConfig {
    let l = cfg
        .links
        .iter_mut()
        .find(|l| l.name == "bottleneck")
        .expect("the dumbbell has a bottleneck");
    l.jitter = Some(jitter);
    cfg
}

fn uniform(base_ms: u64, spread_ms: u64, reorder: bool) -> LinkJitter {
    LinkJitter {
        dist: JitterDist::Uniform {
            base: Dur::from_millis(base_ms),
            spread: Dur::from_millis(spread_ms),
        },
        correlation: 0.0,
        reorder,
    }
}

fn run(cfg: SimConfig) -> Results {
    Simulation::new(cfg).unwrap().run()
}

/// Each answered probe's RTT by sequence number.
fn rtts(r: &Results) -> BTreeMap<u64, f64> {
    let p = &r.probes[0];
    p.seq
        .iter()
        .copied()
        .zip(p.rtt_ms.iter().copied())
        .collect()
}

/// The `q` quantile of sorted `xs` (nearest rank).
#[expect(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss,
    reason = "small sample counts and a quantile in [0, 1]"
)]
fn quantile(xs: &[f64], q: f64) -> f64 {
    xs[((xs.len() - 1) as f64 * q).round() as usize]
}

/// netem's uniform `delay 10ms 5ms` on the requests: each RTT grows by its draw, in
/// [5 ms, 15 ms), and the 10th, 50th and 90th percentiles of the 1,000 growths are within 5 %
/// of the uniform's 6, 10 and 14 ms (the sampling error of a quantile of 1,000 uniform draws
/// is at most 0.16 ms here, so 5 % is more than 2σ at 6 ms and 3σ at 10 ms). Probes 10 ms
/// apart never interact (the pipe holds a few at a time, none in a queue).
#[test]
fn the_link_adds_each_packets_draw() {
    let interval = Dur::from_millis(10);
    let plain = rtts(&run(ping_path(interval)));
    let jitter = LinkJitter {
        dist: JitterDist::Netem {
            distribution: Distribution::Uniform,
            mu: Dur::from_millis(10),
            sigma: Dur::from_millis(5),
        },
        correlation: 0.0,
        reorder: true,
    };
    let with = rtts(&run(jittered(ping_path(interval), jitter)));
    let mut growth: Vec<f64> = with
        .iter()
        .filter_map(|(s, r)| plain.get(s).map(|p| r - p))
        .collect();
    assert!(growth.len() > 950, "{} probes", growth.len());
    for &g in &growth {
        assert!((5.0 - 1e-9..15.0).contains(&g), "{g} ms");
    }
    growth.sort_by(f64::total_cmp);
    for (q, want) in [(0.1, 6.0), (0.5, 10.0), (0.9, 14.0)] {
        let got = quantile(&growth, q);
        assert!(
            (got - want).abs() <= 0.05 * want,
            "p{q}: {got} ms, not {want}"
        );
    }
}

/// Uniform delays over W = 10 ms on requests g = 2 ms apart: request i + 1 overtakes request i
/// when X_i − X_{i+1} > g, with probability (W − g)² / (2 W²) = 0.32 for independent uniforms.
/// With `reorder`, the share of such neighbours among about 5,000 is within 10 % of 0.32; the
/// link really lets them overtake (a delay line kept in order would show none). Without, no
/// request arrives before the one sent ahead of it.
#[test]
fn overtaking_follows_the_uniform_theory_and_only_when_allowed() {
    let interval = Dur::from_millis(2);
    let g_ms = 2.0;
    for reorder in [true, false] {
        let r = rtts(&run(jittered(ping_path(interval), uniform(0, 10, reorder))));
        let pairs: Vec<(f64, f64)> = r
            .iter()
            .filter_map(|(s, a)| r.get(&(s + 1)).map(|b| (*a, *b)))
            .collect();
        assert!(pairs.len() > 4_500, "{} pairs", pairs.len());
        let overtaken = pairs.iter().filter(|(a, b)| a - b > g_ms + 1e-9).count();
        #[expect(clippy::cast_precision_loss, reason = "small counts")]
        let share = overtaken as f64 / pairs.len() as f64;
        if reorder {
            let theory = (10.0 - g_ms) * (10.0 - g_ms) / (2.0 * 100.0);
            assert!(
                (share - theory).abs() <= 0.1 * theory,
                "{share} vs {theory}"
            );
        } else {
            assert_eq!(overtaken, 0, "in order, yet {overtaken} overtook");
        }
    }
}

/// One CUBIC flow over a bottleneck jittered by up to 8 ms: with `reorder` its segments arrive
/// reordered (RFC 4737) and it still delivers; without, nothing is reordered. Every data
/// segment sent is delivered, dropped or inside the network, and the same seed gives the same
/// results, another seed others.
#[test]
fn tcp_over_a_jittered_link() {
    let tcp = |seed: u64, reorder: bool| {
        let mut d = Dumbbell::new(20_000_000, Dur::from_millis(10), QueueLimit::Packets(50));
        d.duration = Dur::from_secs(10);
        d.add_flow(CcSpec::default_for("cubic").unwrap(), Dur::from_millis(2));
        let mut cfg = d.build();
        cfg.seed = seed;
        run(jittered(cfg, uniform(0, 8, reorder)))
    };
    let r = tcp(1, true);
    let s = &r.flows[0].summary;
    assert!(s.reordered > 100, "{s:?}");
    // Spurious fast retransmits cost CUBIC most of the link (3.7 Mbit/s of 20 here); it
    // still delivers.
    assert!(s.bytes_delivered > 2_000_000, "{s:?}");
    let e = r.engine;
    assert_eq!(
        e.data_packets_delivered + e.data_packets_dropped + e.data_packets_in_network,
        e.data_packets_sent
    );
    assert_eq!(r, tcp(1, true));
    assert_ne!(r.flows[0].summary, tcp(2, true).flows[0].summary);
    let s = tcp(1, false).flows[0].summary.clone();
    assert_eq!((s.reordered, s.reorder_extent_max), (0, 0), "{s:?}");
}

/// A jitter on a link with an AQM, or a correlation outside [0, 1], is refused.
#[test]
fn invalid_link_jitter_is_refused() {
    let mut cfg = jittered(ping_path(Dur::from_millis(10)), uniform(0, 1, true));
    let l = cfg
        .links
        .iter_mut()
        .find(|l| l.name == "bottleneck")
        .unwrap();
    l.queue = QueueConfig::Aqm(cclab_sim::queue::AqmConfig::default_for("fq_codel").unwrap());
    let Err(e) = Simulation::new(cfg) else {
        panic!("a jitter behind an AQM was accepted")
    };
    assert!(e.to_string().contains("drop-tail"), "{e}");
    let bad = LinkJitter {
        correlation: 1.5,
        ..uniform(0, 1, true)
    };
    let Err(e) = Simulation::new(jittered(ping_path(Dur::from_millis(10)), bad)) else {
        panic!("a correlation of 1.5 was accepted")
    };
    assert!(e.to_string().contains("correlation"), "{e}");
}

/// Cost of a link's jitter without a transport that reacts to it, for measurement under
/// callgrind (not a check): a 90 Mbit/s CBR source of 1500-byte datagrams over a 100 Mbit/s,
/// 10 ms dumbbell for 10 s, with netem's uniform `delay 2ms 1ms` on the bottleneck as
/// `CCLAB_JITTER` says (`none`, `inorder`, `uniform`); prints the datagrams sent. Run with
/// `valgrind --tool=callgrind <test binary> --ignored --exact jitter_cost_udp_run` and divide
/// the instructions by the datagrams.
#[test]
#[ignore = "a measurement, run by hand under callgrind"]
fn jitter_cost_udp_run() {
    use cclab_sim::NodeId;
    use cclab_sim::udp::UdpConfig;
    let mut d = Dumbbell::new(100_000_000, Dur::from_millis(10), QueueLimit::Packets(100));
    d.duration = Dur::from_secs(10);
    d.add_ping(Dur::from_secs(10));
    let mut cfg = d.build();
    // The ping's hosts (the builder's first pair after the routers).
    cfg.udp.push(UdpConfig::cbr(
        "cbr",
        NodeId(2),
        NodeId(3),
        90_000_000,
        1500,
    ));
    let which = std::env::var("CCLAB_JITTER").unwrap_or_else(|_| "none".into());
    let jitter = |reorder| LinkJitter {
        dist: JitterDist::Netem {
            distribution: Distribution::Uniform,
            mu: Dur::from_millis(2),
            sigma: Dur::from_millis(1),
        },
        correlation: 0.0,
        reorder,
    };
    let cfg = match which.as_str() {
        "inorder" => jittered(cfg, jitter(false)),
        "uniform" => jittered(cfg, jitter(true)),
        _ => cfg,
    };
    let r = run(cfg);
    println!("{which} datagrams_sent {}", r.udp[0].summary.sent);
}
