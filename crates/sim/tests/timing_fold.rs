//! Folded polls (`engine/rx.rs`, `EngineOptions::fold_rx`) only save work: a run with the
//! hosts' NAPI polls folded into the delay line of the link that feeds them gives the same
//! flows, queues and probes, bit for bit, as the same run with an event per poll, and takes
//! fewer events.

use cclab_cc::{CcSpec, Dur, Time};
use cclab_sim::host::timing::HostTiming;
use cclab_sim::topology::Dumbbell;
use cclab_sim::{EngineOptions, NodeKind, QueueLimit, Results, SimConfig, Simulation};

fn run(cfg: SimConfig, fold_rx: bool) -> Results {
    let opts = EngineOptions {
        fold_rx,
        ..EngineOptions::default()
    };
    Simulation::with_options(cfg, opts).unwrap().run()
}

fn timed(mut cfg: SimConfig, timing: HostTiming) -> SimConfig {
    for n in cfg.nodes.iter_mut().filter(|n| n.kind == NodeKind::Host) {
        n.host.timing = Some(timing);
    }
    cfg
}

/// Everything a run reports except the engine's own counters.
fn outcome(r: &Results) -> String {
    format!("{:?} {:?} {:?} {:?}", r.flows, r.queues, r.probes, r.udp)
}

fn same_either_way(cfg: &SimConfig) {
    let folded = run(cfg.clone(), true);
    let evented = run(cfg.clone(), false);
    assert_eq!(outcome(&folded), outcome(&evented));
    assert!(
        folded.engine.events < evented.engine.events,
        "events {} folded, {} with an event per poll",
        folded.engine.events,
        evented.engine.events
    );
    assert!(folded.engine.data_packets_delivered > 1000);
}

/// Eight NewReno flows at 100 Mbit/s (the shape of bench (a)): the bottleneck feeds eight
/// receivers, the reverse bottleneck eight senders; Linux timing (throttling, GRO).
#[test]
fn eight_flows_through_one_bottleneck_are_the_same_run_folded() {
    let mut d = Dumbbell::new(100_000_000, Dur::from_millis(20), QueueLimit::Packets(333));
    d.duration = Dur::from_secs(4);
    for i in 0..8u64 {
        d.add_flow(CcSpec::default_for("newreno").unwrap(), Dur::ZERO)
            .start = Time::ZERO + Dur::from_millis(37 * i);
    }
    same_either_way(&timed(d.build(), HostTiming::linux()));
}

/// Heavy-tailed latencies reorder polls of different hosts on the shared link (a packet's poll
/// can come after the next packet's): a log-normal with σ 1.37 and a 200 µs median, and the
/// emulated model's stalls, which hold a poll and everything arriving in it; BBR and CUBIC
/// together, with a ping.
#[test]
fn heavy_tailed_latencies_and_probes_are_the_same_run_folded() {
    let mut d = Dumbbell::new(20_000_000, Dur::from_millis(20), QueueLimit::Packets(67));
    d.duration = Dur::from_secs(6);
    d.add_flow(CcSpec::default_for("bbr1").unwrap(), Dur::ZERO);
    d.add_flow(CcSpec::default_for("cubic").unwrap(), Dur::ZERO)
        .start = Time::ZERO + Dur::from_secs(1);
    d.add_ping(Dur::from_millis(100));
    let mut t = HostTiming::emulated();
    t.softirq_median = Dur::from_micros(200);
    t.softirq_sigma = 1.37;
    t.stall_rate = 0.0;
    same_either_way(&timed(d.build(), t));
    same_either_way(&timed(d.build(), HostTiming::emulated()));
}
