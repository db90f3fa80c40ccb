//! The host timing model (`HostConfig::timing`, `host/timing.rs`): interrupt throttling, the
//! softirq latency, GRO and its stretch ACKs, checked against what each mechanism implies on
//! paths simple enough to predict; and what it is for: seeds that give different runs, and
//! BBRv1 seeing delivery rates above the link rate (a larger queue, as Linux holds).

#![warn(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss
)]

use cclab_cc::{CcSpec, Dur};
use cclab_sim::host::timing::HostTiming;
use cclab_sim::topology::Dumbbell;
use cclab_sim::{NodeKind, QueueLimit, Results, SimConfig, Simulation};

fn run(cfg: SimConfig) -> Results {
    Simulation::new(cfg).unwrap().run()
}

/// `cfg` with `timing` on every host.
fn timed(mut cfg: SimConfig, timing: HostTiming) -> SimConfig {
    for n in cfg.nodes.iter_mut().filter(|n| n.kind == NodeKind::Host) {
        n.host.timing = Some(timing);
    }
    cfg
}

/// A fixed latency, no throttling, no GRO.
fn fixed(latency: Dur) -> HostTiming {
    HostTiming {
        rx_usecs: Dur::ZERO,
        softirq_median: latency,
        softirq_sigma: 0.0,
        softirq_max: latency,
        napi_budget: 64,
        gro: false,
    }
}

/// A ping on an idle path crosses two hosts' receive paths (the reply at the server, the answer
/// at the client): with a fixed softirq latency every RTT grows by exactly twice it.
#[test]
fn a_fixed_latency_adds_twice_itself_to_every_ping() {
    let mut d = Dumbbell::new(20_000_000, Dur::from_millis(10), QueueLimit::Packets(100));
    d.duration = Dur::from_secs(2);
    d.add_ping(Dur::from_millis(100));
    let ideal = run(d.build());
    let late = run(timed(d.build(), fixed(Dur::from_micros(150))));
    let (a, b) = (&ideal.probes[0].rtt_ms, &late.probes[0].rtt_ms);
    assert_eq!(a.len(), b.len());
    assert!(a.len() >= 19);
    for (x, y) in a.iter().zip(b) {
        assert!(
            (y - x - 0.300).abs() < 1e-6,
            "{x} ms ideal, {y} ms with 150 µs"
        );
    }
}

/// One bulk CUBIC flow over a 1 Gbit/s bottleneck with a standing queue: data reaches the
/// receiver back to back, one segment every 12.1 µs (1514 B at 1 Gbit/s). With interrupts at
/// most every 50 µs and no softirq latency, each poll finds 50 / 12.1 ≈ 4.1 segments and GRO
/// merges them into one skb, acknowledged once: about 4.1 data segments per ACK, against 2
/// (one ACK per two segments, RFC 5681 §4.2) without GRO.
#[test]
fn gro_under_interrupt_throttling_makes_stretch_acks() {
    let segs_per_ack = |gro: bool| {
        let mut d = Dumbbell::new(
            1_000_000_000,
            Dur::from_millis(5),
            QueueLimit::Packets(2000),
        );
        d.duration = Dur::from_secs(3);
        let f = d.add_flow(CcSpec::default_for("cubic").unwrap(), Dur::ZERO);
        f.trace = true;
        let t = HostTiming {
            rx_usecs: Dur::from_micros(50),
            gro,
            ..fixed(Dur::ZERO)
        };
        let r = run(timed(d.build(), t));
        let f = &r.flows[0];
        let acks = f.trace.iter().filter(|p| p.event == "ack").count();
        #[expect(clippy::cast_precision_loss, reason = "counts far below 2^53")]
        let spa = f.summary.segments_sent as f64 / acks as f64;
        (spa, f.summary.goodput_bps)
    };
    let (with, goodput) = segs_per_ack(true);
    let (without, _) = segs_per_ack(false);
    let expected = 50.0 / (1514.0 * 8.0 / 1e3);
    assert!(
        (with / expected - 1.0).abs() < 0.2,
        "{with:.2} segments per ACK with GRO, expected about {expected:.2}"
    );
    assert!((without - 2.0).abs() < 0.2, "{without:.2} without GRO");
    assert!(goodput > 0.8e9, "the flow fills the link: {goodput}");
}

/// The timing model draws from each host's own stream: the same seed gives the same run, bit
/// for bit; other seeds give other runs (ideal timing: every seed the same run, as there is no
/// other randomness on this path).
#[test]
fn seeds_matter_with_the_model_and_runs_repeat_per_seed() {
    let cfg = |seed: u64, timing: Option<HostTiming>| {
        let mut d = Dumbbell::new(20_000_000, Dur::from_millis(20), QueueLimit::Packets(67));
        d.duration = Dur::from_secs(10);
        d.add_flow(CcSpec::default_for("cubic").unwrap(), Dur::ZERO);
        d.add_flow(CcSpec::default_for("cubic").unwrap(), Dur::ZERO)
            .start = cclab_cc::Time::ZERO + Dur::from_secs(1);
        let mut c = d.build();
        c.seed = seed;
        match timing {
            Some(t) => timed(c, t),
            None => c,
        }
    };
    let key = |r: &Results| {
        r.flows
            .iter()
            .map(|f| (f.summary.bytes_delivered, f.summary.retransmits))
            .collect::<Vec<_>>()
    };
    let t = Some(HostTiming::linux());
    let a = run(cfg(1, t));
    assert_eq!(format!("{:?}", run(cfg(1, t))), format!("{a:?}"));
    let others: Vec<_> = (2..5).map(|s| key(&run(cfg(s, t)))).collect();
    assert!(
        others.iter().any(|k| *k != key(&a)),
        "other seeds, same shares: {others:?}"
    );
    assert_eq!(key(&run(cfg(1, None))), key(&run(cfg(2, None))));
}

/// BBRv1 under timing noise. Its bandwidth filter keeps the largest delivery rate of the last
/// ten rounds; with ideal timing no sample exceeds the link rate, with noisy ACK arrivals some
/// do, so BBR paces a little above the link rate and its queue grows towards its cwnd cap.
/// Linux through the emulator held 7.45 ms at 20 Mbit/s, 1 BDP, against the ideal simulator's
/// 4.60 ms (`VALIDATION.md`): the emulated-host timing must give a clearly larger queue
/// (at least 30 % more) with the same goodput (within 2 %).
#[test]
fn timing_noise_raises_bbr_queue_towards_linux() {
    let cfg = |timing: Option<HostTiming>| {
        let mut d = Dumbbell::new(20_000_000, Dur::from_millis(20), QueueLimit::Packets(67));
        d.duration = Dur::from_secs(20);
        d.add_flow(CcSpec::default_for("bbr1").unwrap(), Dur::ZERO);
        let c = d.build();
        match timing {
            Some(t) => timed(c, t),
            None => c,
        }
    };
    let q = |r: &Results| r.queues[0].summary.delay_mean_ms.unwrap();
    let ideal = run(cfg(None));
    let noisy = run(cfg(Some(HostTiming::emulated())));
    assert!(
        q(&noisy) > 1.3 * q(&ideal),
        "queue {:.2} ms with timing noise, {:.2} ms ideal",
        q(&noisy),
        q(&ideal)
    );
    let (g0, g1) = (
        ideal.flows[0].summary.goodput_bps,
        noisy.flows[0].summary.goodput_bps,
    );
    assert!((g1 / g0 - 1.0).abs() < 0.02, "goodput {g1} vs {g0}");
}
