//! UDP cross traffic end to end: sources without congestion control through a bottleneck, alone
//! and with a TCP flow, against what queueing theory says they receive.
//!
//! Paths are dumbbells built with the `Dumbbell` builder. A UDP source needs a host pair of its
//! own: a ping probe with one packet per run provides it (hosts `ps0` → `pr0`); its single
//! 64-byte request is negligible next to the UDP traffic.

#![warn(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss
)]

use cclab_cc::num::u64_to_f64;
use cclab_cc::{CcSpec, Dur, Time};
use cclab_sim::packet::Ecn;
use cclab_sim::queue::{AqmConfig, DualPi2Params};
use cclab_sim::topology::Dumbbell;
use cclab_sim::{NodeId, QueueLimit, Results, SimConfig, Simulation, UdpConfig, UdpPattern};

fn run(cfg: SimConfig) -> Results {
    Simulation::new(cfg).expect("valid config").run()
}

/// A dumbbell of `mbit` Mbit/s, one-way `delay_ms`, a drop-tail queue of `queue` packets,
/// `secs` long, with `flows` CUBIC flows; its probe host pair comes after the flows' (nodes
/// `2 + 2·flows` and `3 + 2·flows`).
fn dumbbell(
    mbit: u64,
    delay_ms: u64,
    queue: u32,
    secs: u64,
    flows: usize,
) -> (Dumbbell, NodeId, NodeId) {
    let mut d = Dumbbell::new(
        mbit * 1_000_000,
        Dur::from_millis(delay_ms),
        QueueLimit::Packets(queue),
    );
    d.duration = Dur::from_secs(secs);
    for _ in 0..flows {
        d.add_flow(CcSpec::default_for("cubic").unwrap(), Dur::ZERO);
    }
    d.add_ping(Dur::from_secs(secs));
    let base = u32::try_from(2 + 2 * flows).unwrap();
    (d, NodeId(base), NodeId(base + 1))
}

/// CBR at 15 Mbit/s into a 10 Mbit/s drop-tail FIFO (100 packets, 20 ms one way) for 10 s.
/// The source sends exactly 15e6·10/(1500·8) = 12 500 datagrams. The input rate exceeds the
/// output, so the bottleneck stays busy from the first arrival on and delivers its rate: the
/// receiver gets 10 Mbit/s except during the first 20 ms of propagation and the first
/// packet's serialisation (0.2 % of the run), so its goodput over the run is within 1 % of
/// 10 Mbit/s (and not above it). What does not fit is dropped: a third of the datagrams,
/// 1 − 10/15, up to the 100 queued and ~17 propagating at the end (< 1 % of 12 500).
#[test]
fn cbr_above_the_bottleneck_receives_the_link_rate() {
    let (d, s, r) = dumbbell(10, 20, 100, 10, 0);
    let mut cfg = d.build();
    cfg.udp.push(UdpConfig::cbr("cbr", s, r, 15_000_000, 1500));
    let res = run(cfg);
    let u = &res.udp[0].summary;
    eprintln!("cbr over 10 Mbit/s: {u:?}");
    assert_eq!(u.sent, 12_500);
    assert!(
        u.goodput_mbps <= 10.0 && u.goodput_mbps > 9.9,
        "goodput {} Mbit/s",
        u.goodput_mbps
    );
    assert!(
        (u.loss_rate - 1.0 / 3.0).abs() < 0.01,
        "loss rate {}",
        u.loss_rate
    );
    // One-way delay: 20 ms of propagation plus a full queue, 100·1.2 ms = 120 ms, at the median.
    let p50 = u.owd_p50_ms.unwrap();
    assert!((p50 - 140.0).abs() < 2.5, "median one-way delay {p50} ms");
    // Loss is counted below the highest sequence number received (iperf3): what was sent in
    // the last one-way delay before the end (queued, propagating, or dropped behind the last
    // arrival) is neither received nor lost. That is 1250/s · ~142 ms ≈ 178 datagrams, at
    // least the 100 queued.
    let unaccounted = u.sent - u.received - u.lost;
    let window = 1250.0 * (u.owd_p99_ms.unwrap() + 2.0) * 1e-3;
    assert!(
        unaccounted >= 100 && u64_to_f64(unaccounted) <= window,
        "{unaccounted} neither received nor lost, window {window}"
    );
}

/// A CBR source at 8 Mbit/s and one CUBIC flow share a 20 Mbit/s bottleneck (10 ms one way,
/// a 1-BDP drop-tail buffer: 50 000 bytes ≈ 33 packets) for 30 s. UDP does not back off: it
/// loses only what arrives at a full queue, which TCP keeps full a small fraction of the time,
/// so it receives its rate less its loss rate (CUBIC's loss rate at this BDP is ~0.1 %; allow
/// 3 %). TCP takes what is left, 12 Mbit/s: CUBIC cuts its window to 0.7 on a loss, which a
/// buffer of one BDP (of the whole link) absorbs, so the link stays nearly busy; slow start and
/// the first recoveries take a few of the 30 s, so allow 80 %. The two together cannot exceed
/// the link.
#[test]
fn udp_takes_its_rate_and_tcp_the_rest() {
    let (d, s, r) = dumbbell(20, 10, 33, 30, 1);
    let mut cfg = d.build();
    cfg.udp.push(UdpConfig::cbr("cbr", s, r, 8_000_000, 1500));
    let res = run(cfg);
    let u = &res.udp[0].summary;
    let tcp = res.flows[0].summary.goodput_bps * 1e-6;
    eprintln!("udp {} Mbit/s, tcp {tcp} Mbit/s", u.goodput_mbps);
    assert!(
        u.goodput_mbps > 8.0 * 0.97 && u.goodput_mbps <= 8.0,
        "udp {} Mbit/s",
        u.goodput_mbps
    );
    assert!(tcp > 12.0 * 0.8 && tcp < 12.0, "tcp {tcp} Mbit/s");
    let link = res.queues[0].summary.throughput_bps * 1e-6;
    assert!(link <= 20.0 + 1e-9, "link {link}");
}

/// DSCP and ECN travel with every datagram: a DualPI2 bottleneck that classifies DSCP 46 (EF,
/// RFC 3246) into its L queue counts exactly the EF source's datagrams there, and the other
/// source's (plus the single best-effort ping request) in C; an ECT(1) source is classified L
/// by its ECN field alone (RFC 9331 §5.1). Rates far below the link: nothing is dropped.
#[test]
fn dscp_and_ecn_reach_the_classifier() {
    let (mut d, s, r) = dumbbell(100, 5, 1000, 2, 0);
    d.aqm = Some(AqmConfig::DualPi2(DualPi2Params {
        l_dscp: vec![46],
        ..DualPi2Params::default()
    }));
    let mut cfg = d.build();
    let ef = UdpConfig {
        dscp: 46,
        ..UdpConfig::cbr("ef", s, r, 1_000_000, 200)
    };
    let be = UdpConfig::cbr("be", s, r, 2_000_000, 500);
    let l4s = UdpConfig {
        ecn: Ecn::Ect1,
        ..UdpConfig::cbr("l4s", s, r, 1_000_000, 250)
    };
    cfg.udp.extend([ef, be, l4s]);
    let res = run(cfg);
    let classes = &res.queues[0].summary.classes;
    let (c, l) = (&classes[0], &classes[1]);
    assert_eq!((c.name, l.name), ("c", "l"));
    let sent: Vec<u64> = res.udp.iter().map(|u| u.summary.sent).collect();
    // 2 s at 625, 500 and 500 datagrams per second.
    assert_eq!(sent, [1250, 1000, 1000]);
    assert_eq!(l.enqueued, sent[0] + sent[2]);
    assert_eq!(c.enqueued, sent[1] + 1);
    assert_eq!(res.udp[0].dscp, 46);
    // Not dropped, and nothing lost below the highest sequence number received.
    assert!(res.udp.iter().all(|u| u.summary.lost == 0));
}

/// The same configuration twice gives identical results; a Poisson source under another seed
/// sends another schedule.
#[test]
fn same_seed_same_results() {
    let (d, s, r) = dumbbell(10, 10, 50, 3, 1);
    let mut cfg = d.build();
    cfg.udp.push(UdpConfig {
        pattern: UdpPattern::Poisson {
            rate_bps: 4_000_000,
        },
        start: Time(Dur::from_millis(500).as_nanos()),
        ..UdpConfig::cbr("poisson", s, r, 1, 1000)
    });
    let a = run(cfg.clone());
    let b = run(cfg.clone());
    assert_eq!(a, b);
    cfg.seed = 2;
    let c = run(cfg);
    assert_ne!(a.udp[0].summary.sent, 0);
    assert_ne!(a.udp[0].series, c.udp[0].series);
    // The series add up to the summary.
    let sent: u64 = a.udp[0].series.sent.iter().sum();
    assert_eq!(sent, a.udp[0].summary.sent);
    let bits: f64 = a.udp[0].series.goodput_bps.iter().sum::<f64>() * 0.2;
    let want = u64_to_f64(a.udp[0].summary.bytes_received) * 8.0;
    assert!((bits - want).abs() < 1e-6 * want, "{bits} vs {want}");
}

/// A source whose ends are not hosts, or the same node, is refused with its name.
#[test]
fn invalid_udp_sources_are_refused() {
    let (d, s, r) = dumbbell(10, 10, 50, 3, 0);
    let mut cfg = d.build();
    cfg.udp.push(UdpConfig::cbr("x", s, s, 1_000, 100));
    let e = Simulation::new(cfg.clone()).unwrap_err().to_string();
    assert!(
        e.contains("udp source 0 `x`") && e.contains("same node"),
        "{e}"
    );
    cfg.udp[0].dst = NodeId(0);
    let e = Simulation::new(cfg.clone()).unwrap_err().to_string();
    assert!(e.contains("must be hosts"), "{e}");
    cfg.udp[0].dst = r;
    cfg.udp[0].pattern = UdpPattern::Cbr { rate_bps: 0 };
    let e = Simulation::new(cfg).unwrap_err().to_string();
    assert!(e.contains("rate must be positive"), "{e}");
}
