//! An AQM on a host's NIC (`engine/egress.rs`, `link.rs`): the NIC runs the discipline with a
//! transmission event per packet, so every transmitted skb's last segment reports its TX
//! completion, and every skb the discipline frees by dropping its last segment reports one at
//! the drop. TSQ, which holds a socket until completions come back, keeps working.

#![warn(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss
)]

use cclab_cc::{CcSpec, Dur};
use cclab_sim::queue::{CodelParams, FqCodelParams};
use cclab_sim::topology::Dumbbell;
use cclab_sim::{AqmConfig, QueueConfig, QueueLimit, Results, SimConfig, Simulation};

/// A 100 Mbit/s NIC in front of a 1 Gbit/s, 40 ms path: the NIC is the bottleneck and TSQ
/// throttles the one CUBIC flow all the time; the NIC's queue is `queue`.
fn nic_bound(queue: QueueConfig) -> SimConfig {
    let mut d = Dumbbell::new(
        1_000_000_000,
        Dur::from_millis(20),
        QueueLimit::Packets(500),
    );
    d.duration = Dur::from_secs(10);
    d.nic_rate_bps = Some(100_000_000);
    d.add_flow(CcSpec::default_for("cubic").unwrap(), Dur::ZERO);
    let mut cfg = d.build();
    let nic = cfg
        .links
        .iter()
        .position(|l| l.name == "s0->left")
        .expect("the sender's NIC");
    cfg.links[nic].queue = queue;
    cfg
}

fn run(cfg: SimConfig) -> Results {
    Simulation::new(cfg)
        .expect("an AQM on a NIC is valid")
        .run()
}

/// Mean goodput of the samples from `from_s` on.
fn goodput_after(r: &Results, from_s: f64) -> f64 {
    let s = &r.flows[0].series;
    let v: Vec<f64> = s
        .t_s
        .iter()
        .zip(&s.goodput_bps)
        .filter(|&(&t, _)| t > from_s)
        .map(|(_, &g)| g)
        .collect();
    v.iter().sum::<f64>() / cclab_cc::num::usize_to_f64(v.len())
}

/// CoDel and FQ-CoDel (Linux defaults) on the NIC: TSQ keeps a few skbs in the NIC, far below
/// CoDel's 5 ms target, so nothing is dropped, the socket is throttled thousands of times and
/// released by the completions each time, and the flow runs at the NIC's line rate (≥ 95 %
/// after slow start; CUBIC's losses are at the 500-packet bottleneck only if it overruns it,
/// which a 100 Mbit/s NIC cannot do at 1 Gbit/s).
#[test]
fn tsq_is_released_by_an_aqm_nics_completions() {
    for aqm in [
        AqmConfig::Codel(CodelParams::default()),
        AqmConfig::FqCodel(FqCodelParams::default()),
    ] {
        let name = aqm.name();
        let r = run(nic_bound(QueueConfig::Aqm(aqm)));
        assert!(r.engine.tsq_throttles > 1000, "{name}: {:?}", r.engine);
        let g = goodput_after(&r, 2.0);
        assert!(g > 95e6, "{name}: {g} bit/s");
        assert_eq!(r.engine.data_packets_dropped, 0, "{name}");
    }
}

/// CoDel with a 4-packet limit on the NIC drops segments (TSQ lets more than 4 packets below
/// TCP in slow start). Each dropped last segment frees its skb, and that must be reported like
/// a transmission: every skb handed below TCP (an `xmit` trace row) is completed exactly once
/// (a `tx_done` row), but for the few still in the NIC at the end; were a freed skb not
/// reported, its bytes would stay below TCP for good and shrink the TSQ budget until the flow
/// stalls. It keeps sending to the end instead.
#[test]
fn skbs_freed_by_aqm_drops_release_tsq() {
    let mut cfg = nic_bound(QueueConfig::Aqm(AqmConfig::Codel(CodelParams {
        limit: 4,
        ..CodelParams::default()
    })));
    cfg.flows[0].trace = true;
    cfg.flows[0].trace_tx = true;
    let r = run(cfg);
    assert!(
        r.engine.data_packets_dropped >= 5,
        "the NIC drops: {:?}",
        r.engine
    );
    assert!(r.engine.tsq_throttles > 0);
    let tr = &r.flows[0].trace;
    let xmit = tr.iter().filter(|p| p.event == "xmit").count();
    let done = tr.iter().filter(|p| p.event == "tx_done").count();
    assert!(xmit > 5000, "{xmit} skbs");
    assert!(
        done <= xmit && xmit - done <= 5,
        "{xmit} skbs, {done} completions"
    );
    let last = tr.last().unwrap();
    assert!(last.below_tcp <= 5 * 2 * 1500, "{last:?}");
    let g = goodput_after(&r, 8.0);
    assert!(g > 5e6, "still sending in the last 2 s: {g} bit/s");
    assert!(r.flows[0].summary.retransmits > 0);
}
