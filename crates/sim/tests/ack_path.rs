//! The ACK path in simulated runs: ACK aggregation (`net/ack_aggregate.rs`) and ACK thinning
//! (`net/ack_thin.rs`, here in front of a 0.12 Mbit/s ACK link, the dumbbell's reverse rate as
//! in Pantheon's slow-ACK case) keep a flow going, and runs are deterministic.

#![warn(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss
)]

use cclab_cc::num::u64_to_f64;
use cclab_cc::{CcSpec, Dur};
use cclab_sim::net::{AckAggregate, AckThin, AnyElement};
use cclab_sim::topology::{Dumbbell, RIGHT};
use cclab_sim::{QueueLimit, Results, Simulation};

/// A CUBIC flow over a 20 Mbit/s, 10 ms dumbbell whose ACK direction runs at 0.12 Mbit/s
/// behind a buffer that never fills, for 30 s, with `elem` on the right router (which ACKs cross before the slow link).
fn run(elem: Option<AnyElement<cclab_sim::packet::Packet>>) -> Results {
    let mut d = Dumbbell::new(20_000_000, Dur::from_millis(10), QueueLimit::Packets(1000));
    d.duration = Dur::from_secs(30);
    d.reverse_rate_bps = Some(120_000);
    // A reverse buffer that never drops: a dropped ACK would thin the ACKs by itself.
    d.uncongested_queue = QueueLimit::Packets(1_000_000);
    d.add_flow(CcSpec::default_for("cubic").unwrap(), Dur::from_millis(2));
    let mut sim = Simulation::new(d.build()).unwrap();
    if let Some(e) = elem {
        sim.add_element(RIGHT, e);
    }
    sim.run()
}

/// ACKs released together every 200 ms (Pantheon's case): the flow still delivers,
/// below the 20 Mbit/s forward rate; ACK thinning (1 in 3, a withheld ACK released after
/// 50 ms) in front of a slow ACK link too. The same configuration twice gives identical
/// results.
#[test]
fn aggregated_acks_and_determinism() {
    let agg = || {
        let mut d = Dumbbell::new(20_000_000, Dur::from_millis(10), QueueLimit::Packets(1000));
        d.duration = Dur::from_secs(10);
        d.add_flow(CcSpec::default_for("cubic").unwrap(), Dur::from_millis(2));
        let mut sim = Simulation::new(d.build()).unwrap();
        sim.add_element(
            RIGHT,
            AnyElement::AckAggregate(AckAggregate::new(Dur::from_millis(200), Dur::ZERO)),
        );
        sim.run()
    };
    let a = agg();
    let delivered = u64_to_f64(a.flows[0].summary.bytes_delivered);
    eprintln!(
        "aggregated: {:.2} Mbit/s",
        a.flows[0].summary.goodput_bps / 1e6
    );
    assert!(delivered > 0.0);
    assert!(a.flows[0].summary.goodput_bps <= 20e6);
    assert_eq!(a, agg());
    let thin = || {
        run(Some(AnyElement::AckThin(Box::new(AckThin::new(
            3,
            true,
            Dur::from_millis(50),
        )))))
    };
    let t = thin();
    assert!(t.flows[0].summary.bytes_delivered > 0);
    assert_eq!(t, thin());
}

/// Two CUBIC flows on a 20 Mbit/s, 10 ms one-way dumbbell with a 1-BDP buffer (the
/// ack_suppression_wired study's path) for 10 s, their ACKs thinned one in 16 at the right
/// router with `hold`: the RTOs of each flow.
fn thinned_k16(hold: Dur) -> Vec<u64> {
    let rate = 20_000_000;
    let bdp = Dumbbell::bdp_bytes(rate, Dur::from_millis(20));
    let mut d = Dumbbell::new(rate, Dur::from_millis(10), QueueLimit::Bytes(bdp));
    d.duration = Dur::from_secs(10);
    for _ in 0..2 {
        d.add_flow(CcSpec::default_for("cubic").unwrap(), Dur::ZERO);
    }
    let mut sim = Simulation::new(d.build()).unwrap();
    sim.add_element(
        RIGHT,
        AnyElement::AckThin(Box::new(AckThin::new(16, true, hold))),
    );
    let r = sim.run();
    r.flows.iter().map(|f| f.summary.rto_count).collect()
}

/// At k = 16 a loss-based flow's window is often fewer than 16 ACKs' worth. With the default
/// hold the newest withheld ACK is released 10 ms after it arrived, as sch_cake's ACK filter
/// and DOCSIS ACK suppression always let the newest ACK through, so no flow waits for its
/// retransmission timer. Ablation: with `hold` = 0 (withheld ACKs never released, the
/// element's old default) the same runs take retransmission timeouts.
#[test]
fn thinning_one_in_sixteen_never_strands_the_last_ack() {
    let released = thinned_k16(cclab_sim::net::ack_thin::DEFAULT_HOLD);
    let stranded = thinned_k16(Dur::ZERO);
    eprintln!("RTOs: default hold {released:?}, hold 0 {stranded:?}");
    assert_eq!(released, vec![0, 0]);
    assert!(stranded.iter().sum::<u64>() >= 2, "{stranded:?}");
}

/// A sized transfer of 100 segments, ACKs thinned one in 16: its last ACKs are fewer than 16,
/// so they are all withheld. At the default hold the newest is released and the transfer
/// completes without a retransmission timeout; with `hold` = 0 it completes only after one.
#[test]
fn a_transfer_whose_last_acks_are_withheld_completes_without_an_rto() {
    let run = |hold: Dur| {
        let mut d = Dumbbell::new(20_000_000, Dur::from_millis(10), QueueLimit::Packets(1000));
        d.duration = Dur::from_secs(5);
        d.add_flow(CcSpec::default_for("cubic").unwrap(), Dur::ZERO)
            .size = Some(100 * 1448);
        let mut sim = Simulation::new(d.build()).unwrap();
        sim.add_element(
            RIGHT,
            AnyElement::AckThin(Box::new(AckThin::new(16, true, hold))),
        );
        sim.run().flows[0].summary.clone()
    };
    let released = run(cclab_sim::net::ack_thin::DEFAULT_HOLD);
    let stranded = run(Dur::ZERO);
    eprintln!(
        "FCT: default hold {:?} s ({} RTOs), hold 0 {:?} s ({} RTOs)",
        released.fct_s, released.rto_count, stranded.fct_s, stranded.rto_count
    );
    assert!(released.complete && released.rto_count == 0);
    // Five round trips of slow start at 20 ms, plus up to one hold per round.
    assert!(
        released.fct_s.is_some_and(|t| t < 0.2),
        "{:?}",
        released.fct_s
    );
    assert!(stranded.rto_count >= 1);
}
