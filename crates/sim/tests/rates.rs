//! Links whose rate changes over time and token-bucket elements, end to end: a TCP flow over a
//! trace link never gets more than the trace's capacity and its capacity series is the trace's;
//! a shaper on the path caps the flow at its rate; the same seed gives the same results.

use std::sync::Arc;

use cclab_cc::num::u64_to_f64;
use cclab_cc::{CcSpec, CubicConfig, Dur};
use cclab_sim::net::ElementSpec;
use cclab_sim::net::rate::{RateShape, Trace};
use cclab_sim::topology::Dumbbell;
use cclab_sim::{ElementConfig, NodeId, QueueLimit, Results, SimConfig, Simulation};

/// One CUBIC flow for 30 s on a 20 ms one-way dumbbell whose bottleneck follows `trace` (ms).
fn over_trace(trace: &[u64]) -> SimConfig {
    let t = Trace::new(trace.to_vec()).unwrap();
    let mut d = Dumbbell::new(t.mean_bps(), Dur::from_millis(20), QueueLimit::Packets(100));
    d.add_flow(CcSpec::Cubic(CubicConfig::default()), Dur::ZERO);
    let mut cfg = d.build();
    cfg.links[0].rate_shape = Some(RateShape::Trace(Arc::new(t)));
    cfg
}

fn run(cfg: SimConfig) -> Results {
    Simulation::new(cfg).unwrap().run()
}

/// A trace of 3 opportunities every 2 ms from 2 to 34 ms, none until the last at 40 ms
/// (loop 40 ms): 52 opportunities per 40 ms = 15.6 Mbit/s on average. Every sample interval
/// (200 ms: exactly five loops) has exactly that capacity, the link never sends more than its
/// opportunities in an interval (1500-byte packets, one opportunity each), and a saturating
/// flow gets most of it.
#[test]
fn a_flow_over_a_trace_gets_at_most_the_trace() {
    let mut ms = Vec::new();
    for k in 1..=17 {
        ms.extend([2 * k, 2 * k, 2 * k]);
    }
    ms.push(40);
    let cfg = over_trace(&ms);
    let r = run(cfg.clone());
    let q = &r.queues[0];
    let mean = u64_to_f64(Trace::new(ms.clone()).unwrap().mean_bps());
    assert!((mean - 15.6e6).abs() < 1.0, "{mean}");
    assert!(!q.series.capacity_bps.is_empty());
    for (&c, &t) in q.series.capacity_bps.iter().zip(&q.series.throughput_bps) {
        assert!((c - mean).abs() < 1.0, "capacity {c}");
        // Throughput counts packets whose serialisation ended in the interval: at most the
        // opportunities in it.
        assert!(t <= c + 1.0, "throughput {t} above capacity {c}");
    }
    assert!(
        q.summary.throughput_bps > 0.8 * mean,
        "{}",
        q.summary.throughput_bps
    );
    assert_eq!(run(cfg), r, "same seed, same results");
}

/// A 5 Mbit/s shaper (15 kB bucket) on the sender's side of a 20 Mbit/s dumbbell: the flow's
/// long-run goodput is below the shaper's rate and close to it (headers: 1448 of 1500 bytes
/// are payload, 96.5 %), and the bottleneck never queues much.
#[test]
fn a_shaper_caps_a_flow_at_its_rate() {
    let mut d = Dumbbell::new(20_000_000, Dur::from_millis(20), QueueLimit::Packets(100));
    d.add_flow(CcSpec::Cubic(CubicConfig::default()), Dur::ZERO);
    let mut cfg = d.build();
    let left = cfg.nodes.iter().position(|n| n.name == "left").unwrap();
    cfg.elements.push(ElementConfig {
        node: NodeId(u32::try_from(left).unwrap()),
        spec: ElementSpec::Shaper {
            rate_bps: 5_000_000,
            burst_bytes: 15_000,
            limit_bytes: 150_000,
        },
        select: cclab_sim::net::Selector::default(),
    });
    let r = run(cfg.clone());
    let goodput = r.flows[0].summary.goodput_bps;
    assert!(
        goodput < 5_000_000.0 && goodput > 0.9 * 5_000_000.0 * 1448.0 / 1500.0,
        "{goodput}"
    );
    assert_eq!(run(cfg), r, "same seed, same results");
}

/// Invalid token buckets are refused before the run.
#[test]
fn a_token_bucket_without_rate_is_refused() {
    let mut d = Dumbbell::new(20_000_000, Dur::from_millis(20), QueueLimit::Packets(100));
    d.add_flow(CcSpec::Cubic(CubicConfig::default()), Dur::ZERO);
    let mut cfg = d.build();
    cfg.elements.push(ElementConfig {
        node: NodeId(0),
        spec: ElementSpec::Policer {
            rate_bps: 0,
            burst_bytes: 15_000,
        },
        select: cclab_sim::net::Selector::default(),
    });
    let e = Simulation::new(cfg).unwrap_err().to_string();
    assert!(e.contains("rate must be positive"), "{e}");
}
