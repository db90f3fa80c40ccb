//! The per-flow observations of reordering and its cost: RFC 4737 reordering of original
//! transmissions at the receiver, DSACKs sent and received (RFC 2883), spurious retransmissions
//! and the loss rate, on a dumbbell with and without a reordering element on its right router.

#![warn(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss
)]

use cclab_cc::num::u64_to_f64;
use cclab_cc::{CcSpec, Dur};
use cclab_sim::net::{AnyElement, Jitter};
use cclab_sim::results::FlowSummary;
use cclab_sim::topology::{Dumbbell, RIGHT};
use cclab_sim::{QueueLimit, Simulation, rng};

/// One CUBIC flow, 20 Mbit/s, 24 ms base RTT, 10 s; with a jitter element of `spread` on the
/// right router (data towards the receiver and ACKs towards the sender pass it) when given.
fn run(jitter: Option<(Dur, bool)>) -> FlowSummary {
    let mut d = Dumbbell::new(20_000_000, Dur::from_millis(10), QueueLimit::Packets(50));
    d.duration = Dur::from_secs(10);
    d.add_flow(CcSpec::default_for("cubic").unwrap(), Dur::from_millis(2));
    let mut sim = Simulation::new(d.build()).unwrap();
    if let Some((spread, reorder)) = jitter {
        sim.add_element(
            RIGHT,
            AnyElement::Jitter(Box::new(Jitter::new(
                Dur::ZERO,
                spread,
                reorder,
                3,
                rng::ELEMENT,
            ))),
        );
    }
    sim.run().flows[0].summary.clone()
}

/// Without reordering in the path nothing is reordered, nothing is DSACKed and no
/// retransmission is spurious; the loss rate is lost ÷ sent.
#[test]
fn a_plain_path_reorders_nothing() {
    let s = run(None);
    assert!(s.segments_lost > 0, "the 50-packet FIFO overflows");
    assert_eq!(
        (
            s.reordered,
            s.reorder_extent_max,
            s.dsacks_sent,
            s.dsacks_received,
            s.spurious_retransmits
        ),
        (0, 0, 0, 0, 0)
    );
    assert_eq!(s.reorder_ratio, 0.0);
    assert_eq!(s.reorder_extent_mean, None);
    assert_eq!(
        s.loss_rate,
        u64_to_f64(s.segments_lost) / u64_to_f64(s.segments_sent)
    );
}

/// Jitter that keeps packets in order reorders nothing, however large.
#[test]
fn in_order_jitter_reorders_nothing() {
    let s = run(Some((Dur::from_millis(8), false)));
    assert_eq!((s.reordered, s.reorder_extent_max), (0, 0));
}

/// Jitter of up to 8 ms with overtaking, against packets 0.6 ms apart at the link rate:
/// original transmissions arrive reordered, by up to about 8 / 0.6 ≈ 13 places. The reordering
/// makes the sender retransmit segments that were not lost; the receiver DSACKs the second
/// copies, and the sender counts what reaches it (the DSACK ACKs themselves pass the jitter
/// element but are never dropped on this path, so all of them arrive). Spurious
/// retransmissions are retransmissions, so there are no more of them than retransmissions.
#[test]
fn reordering_jitter_is_measured_with_its_spurious_retransmissions() {
    let s = run(Some((Dur::from_millis(8), true)));
    assert!(s.reordered > 100, "{s:?}");
    assert!(s.reorder_ratio > 0.0 && s.reorder_ratio < 1.0, "{s:?}");
    // Extent: the packets arriving between the first later-sent one and the late packet all
    // arrive within one jitter spread of it, so they were sent at most one spread before or
    // after it: at most twice the packets that fit in the spread at the bottleneck's
    // 1500-byte packet time of 0.6 ms, plus the segments of one skb arriving together. (Once
    // the flow keeps the link busy, as it does with RACK's adaptive window, the largest
    // extent exceeds one spread's worth.)
    assert!(
        (1..=2 * 8 * 20_000 / 12 / 1000 + 2).contains(&s.reorder_extent_max),
        "{s:?}"
    );
    assert!(s.reorder_extent_mean.is_some_and(|m| m >= 1.0));
    assert!(s.dsacks_sent > 0, "{s:?}");
    assert_eq!(s.dsacks_received, s.dsacks_sent, "{s:?}");
    assert!(s.spurious_retransmits > 0, "{s:?}");
    assert!(s.spurious_retransmits <= s.retransmits, "{s:?}");
}
