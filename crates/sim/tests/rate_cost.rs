//! What a link whose rate changes over time costs: one CUBIC flow for 60 s on a 12 Mbit/s
//! dumbbell, the bottleneck at a constant rate or with a rate model of the same mean, run under
//! `valgrind --tool=callgrind` to count instructions per bottleneck packet:
//!
//! ```text
//! CCLAB_RATE_COST=trace valgrind --tool=callgrind target/debug/deps/rate_cost-… \
//!     --ignored --exact cost_of_one_run --nocapture
//! ```
//!
//! (`constant`, `steps` — a one-step schedule of 12 Mbit/s, `trace` — a mahimahi file of one
//! opportunity per ms, `square` — 6 and 18 Mbit/s, 1 s each.) Ignored by default: it measures,
//! it does not check.

use std::sync::Arc;

use cclab_cc::{CcSpec, CubicConfig, Dur, Time};
use cclab_sim::net::rate::{RateShape, Schedule, Trace};
use cclab_sim::topology::Dumbbell;
use cclab_sim::{QueueLimit, Simulation};

#[test]
#[ignore = "a measurement to run under callgrind"]
fn cost_of_one_run() {
    let kind = std::env::var("CCLAB_RATE_COST").unwrap_or_else(|_| "constant".into());
    let mut d = Dumbbell::new(12_000_000, Dur::from_millis(20), QueueLimit::Packets(100));
    d.duration = Dur::from_secs(60);
    d.add_flow(CcSpec::Cubic(CubicConfig::default()), Dur::ZERO);
    let mut cfg = d.build();
    let schedule = |steps: Vec<(Time, u64)>, period: Option<Dur>| {
        RateShape::Schedule(Arc::new(Schedule::new(steps, period).unwrap()))
    };
    let shape = match kind.as_str() {
        "constant" => None,
        "steps" => Some(schedule(vec![(Time::ZERO, 12_000_000)], None)),
        "trace" => Some(RateShape::Trace(Arc::new(Trace::new(vec![1]).unwrap()))),
        "square" => Some(schedule(
            vec![(Time::ZERO, 6_000_000), (Time(1_000_000_000), 18_000_000)],
            Some(Dur::from_secs(2)),
        )),
        other => panic!("unknown CCLAB_RATE_COST `{other}`"),
    };
    cfg.links[0].rate_shape = shape;
    let r = Simulation::new(cfg).unwrap().run();
    let q = &r.queues[0].summary;
    println!(
        "{kind}: {} packets through the bottleneck, {} events, throughput {:.3} Mbit/s",
        q.enqueued,
        r.engine.events,
        q.throughput_bps / 1e6
    );
}
