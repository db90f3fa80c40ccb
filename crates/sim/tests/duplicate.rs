//! The `duplicate` element (`net/duplicate.rs`): it duplicates at its configured rate, a TCP
//! receiver answers each duplicate with a DSACK (RFC 2883), and a TCP flow through it survives.

#![warn(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss
)]

use cclab_cc::num::u64_to_f64;
use cclab_cc::{CcSpec, Dur, Time};
use cclab_sim::net::{AnyElement, Duplicate, Element, Output};
use cclab_sim::packet::{Ecn, Owner, Packet, Payload};
use cclab_sim::tcp::receiver::Receiver;
use cclab_sim::topology::{Dumbbell, RIGHT};
use cclab_sim::{FlowId, QueueLimit, Simulation, rng};

fn segment(seq: u64) -> Packet {
    Packet {
        route: 0,
        hop: 0,
        wire_bytes: 1500,
        owner: Owner::Flow(FlowId(0)),
        skb_bytes: 0,
        dscp: 0,
        ecn: Ecn::NotEct,
        payload: Payload::Data {
            seq,
            tx_count: 0,
            tsval: Time::ZERO,
            cwr: false,
        },
    }
}

/// Everything `d` hands on for `pkt` at `now`.
fn pass(d: &mut Duplicate<Packet>, now: Time, pkt: Packet) -> Vec<Packet> {
    let mut out = Vec::new();
    let mut r = d.process(now, Some(pkt));
    while let Output::Packet(p) = r {
        out.push(p);
        r = d.process(now, None);
    }
    assert_eq!(r, Output::Idle);
    out
}

/// At p = 0.05 over 100,000 packets the number of copies is binomial (mean 5,000, σ ≈ 69):
/// within ±5σ. Every packet leaves once or twice, at once, a copy right behind its original.
/// The same component id gives the same draws, another one other draws.
#[test]
fn duplicates_at_the_configured_rate() {
    let copied = |component| {
        let mut d = Duplicate::new(0.05, 42, rng::ELEMENT + component);
        let mut seqs = Vec::new();
        for seq in 0..100_000 {
            let out = pass(&mut d, Time(seq), segment(seq));
            assert!(out.iter().all(|p| *p == segment(seq)));
            assert!((1..=2).contains(&out.len()));
            if out.len() == 2 {
                seqs.push(seq);
            }
        }
        assert_eq!(seqs.len() as u64, d.duplicated);
        seqs
    };
    let a = copied(0);
    assert!(a.len().abs_diff(5_000) < 345, "{} copies", a.len());
    assert_eq!(a, copied(0));
    assert_ne!(a, copied(1));
}

/// A receiver fed through the element answers every copy with an ACK whose first block is a
/// DSACK for that segment, and nothing else carries a DSACK.
#[test]
fn the_receiver_dsacks_every_copy() {
    let mut d = Duplicate::new(0.1, 7, rng::ELEMENT);
    let mut rcv = Receiver::new(2, Dur::from_millis(40));
    let mut dsacks = 0;
    for seq in 0..2_000 {
        for p in pass(&mut d, Time(seq * 1_000), segment(seq)) {
            let Payload::Data { seq, tsval, .. } = p.payload else {
                unreachable!()
            };
            if let Some(Payload::Ack {
                dsack, sack, ack, ..
            }) = rcv.on_data(Time(seq * 1_000), seq, tsval, p.ecn, false)
                && dsack
            {
                assert_eq!(sack.get(ack, 0).start, seq);
                dsacks += 1;
            }
        }
    }
    assert!(d.duplicated > 100);
    assert_eq!(dsacks, d.duplicated);
    assert_eq!(rcv.segments_delivered, 2_000);
}

/// A CUBIC flow through a 2 % duplicator on the right router (data and ACKs): it delivers as
/// much as without it within 5 % (duplicate ACKs are not enough to trigger recovery, and the
/// DSACKs tell the sender nothing was lost), and copies of data reach the receiver.
#[test]
fn tcp_survives_duplication() {
    let mut d = Dumbbell::new(20_000_000, Dur::from_millis(10), QueueLimit::Packets(50));
    d.duration = Dur::from_secs(10);
    d.add_flow(CcSpec::default_for("cubic").unwrap(), Dur::from_millis(2));
    let cfg = d.build();
    let plain = Simulation::new(cfg.clone()).unwrap().run();
    let mut sim = Simulation::new(cfg).unwrap();
    let id = sim.add_element(
        RIGHT,
        AnyElement::Duplicate(Box::new(Duplicate::new(0.02, 1, rng::ELEMENT))),
    );
    assert!(matches!(sim.element(id), AnyElement::Duplicate(_)));
    let r = sim.run();
    let (a, b) = (
        u64_to_f64(plain.flows[0].summary.bytes_delivered),
        u64_to_f64(r.flows[0].summary.bytes_delivered),
    );
    assert!((b / a - 1.0).abs() < 0.05, "{a} vs {b}");
    let unique = r.flows[0].summary.bytes_delivered.div_ceil(1448);
    let arrived = r.engine.data_packets_delivered;
    assert!(
        arrived > unique + unique / 100,
        "{arrived} arrivals of {unique} segments"
    );
}
