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
