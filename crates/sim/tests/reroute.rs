//! The `reroute` element (`net/reroute.rs`) in front of a TCP receiver and in a simulated run:
//! a switch from a long path to a short one reorders by what the delay difference predicts and
//! a switch back reorders nothing; the receiver's DSACKs and the sender's spurious
//! retransmissions appear in the flow's results.

#![warn(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss
)]

use cclab_cc::num::u64_to_f64;
use cclab_cc::{CcSpec, Dur, Time};
use cclab_sim::net::{AnyElement, Element, Output, PathSpec, Reroute, SwitchMode, Switching};
use cclab_sim::packet::{Ecn, Owner, Packet, Payload};
use cclab_sim::tcp::receiver::Receiver;
use cclab_sim::topology::{Dumbbell, RIGHT};
use cclab_sim::{FlowId, FlowSummary, QueueLimit, Results, Simulation};

const WIRE: u64 = 1514;

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

fn delay_path(ms: u64) -> PathSpec {
    PathSpec {
        delay: Dur::from_millis(ms),
        rate_bps: None,
        limit: QueueLimit::Packets(1000),
    }
}

fn at_ms(ms: u64) -> Time {
    Time(ms * 1_000_000)
}

/// Segment `i` sent every 1 ms through a 60 ms and a 10 ms path (Δ = 50 ms), switching
/// long → short at 200 ms, short → long at 400 ms and long → short at 600 ms, into a TCP
/// receiver. Each long → short switch delivers out of order exactly the segments that
/// entered the long path in the last Δ before it (the 49 in (t − 50 ms, t); the one at
/// t − 50 ms ties with the first short-path one and goes first), each overtaken by up to 49
/// segments; the short → long switch reorders nothing. The receiver (ACKing every segment)
/// sends SACK blocks exactly while a hole is open: at each switch + 10 ms the first short-path
/// segment opens it (1 ACK), for the next 48 ms each long-path arrival leaves a smaller hole
/// and each short-path one a bigger one (2 ACKs a millisecond), and the last late segment
/// closes it, so 97 per long → short switch. Its in-order delivery ends complete.
#[test]
fn reorder_extent_is_the_delay_difference() {
    let mut r: Reroute<Packet> = Reroute::new(
        &[delay_path(60), delay_path(10)],
        Switching::Schedule(vec![(at_ms(200), 1), (at_ms(400), 0), (at_ms(600), 1)]),
    );
    let mut rcv = Receiver::new(1, Dur::from_millis(40));
    let mut arrivals: Vec<u64> = Vec::new();
    let mut sacked_acks = 0;
    let mut deliver = |p: Packet, now: Time, arrivals: &mut Vec<u64>| {
        let Payload::Data { seq, tsval, .. } = p.payload else {
            unreachable!()
        };
        arrivals.push(seq);
        if let Some(Payload::Ack { sack, .. }) = rcv.on_data(now, seq, tsval, p.ecn, false)
            && !sack.is_empty()
        {
            sacked_acks += 1;
        }
    };
    let mut wake: Option<Time> = None;
    let n = 800;
    let step = |r: &mut Reroute<Packet>,
                now: Time,
                pkt,
                arrivals: &mut Vec<u64>,
                deliver: &mut dyn FnMut(Packet, Time, &mut Vec<u64>)| {
        let mut o = r.process(now, pkt);
        while let Output::Packet(p) = o {
            deliver(p, now, arrivals);
            o = r.process(now, None);
        }
        match o {
            Output::Wake(t) => Some(t),
            _ => None,
        }
    };
    for i in 0..n {
        let now = at_ms(i);
        while let Some(w) = wake.filter(|&w| w < now) {
            wake = step(&mut r, w, None, &mut arrivals, &mut deliver);
        }
        wake = step(&mut r, now, Some(segment(i)), &mut arrivals, &mut deliver);
    }
    while let Some(w) = wake {
        wake = step(&mut r, w, None, &mut arrivals, &mut deliver);
    }
    assert_eq!(arrivals.len() as u64, n);
    // Late arrivals (after a higher segment) and by how many segments each was overtaken.
    let mut highest = 0;
    let mut late = Vec::new();
    let mut extent = 0;
    for &seq in &arrivals {
        if seq < highest {
            late.push(seq);
            extent = extent.max(highest - seq);
        }
        highest = highest.max(seq);
    }
    let expected: Vec<u64> = (151..200).chain(551..600).collect();
    assert_eq!(late, expected);
    assert_eq!(extent, 49);
    assert_eq!(sacked_acks, 2 * (1 + 2 * 48));
    assert_eq!(rcv.segments_delivered, n);
}

/// The flow of the simulated runs: CUBIC at an application rate of 10 Mbit/s through a
/// 20 Mbit/s, 10 ms dumbbell with a 1000-packet buffer, so the bottleneck never queues and
/// nothing is lost; a reroute on the right router (data and ACKs cross it) with paths of
/// 40 ms and 10 ms (Δ = 30 ms).
fn run(schedule: Vec<(Time, usize)>) -> FlowSummary {
    let r = run_all(schedule);
    assert_eq!(r.engine.data_packets_dropped, 0);
    r.flows[0].summary.clone()
}

fn run_all(schedule: Vec<(Time, usize)>) -> Results {
    run_switching(Switching::Schedule(schedule))
}

fn run_switching(switching: Switching) -> Results {
    run_mode(switching, SwitchMode::Drain)
}

fn run_mode(switching: Switching, mode: SwitchMode) -> Results {
    let mut d = Dumbbell::new(20_000_000, Dur::from_millis(10), QueueLimit::Packets(1000));
    d.duration = Dur::from_secs(8);
    d.add_flow(CcSpec::default_for("cubic").unwrap(), Dur::from_millis(2))
        .app_rate_bps = Some(10_000_000);
    let mut sim = Simulation::new(d.build()).unwrap();
    sim.add_element(
        RIGHT,
        AnyElement::Reroute(Box::new(Reroute::with_mode(
            &[delay_path(40), delay_path(10)],
            switching,
            mode,
        ))),
    );
    sim.run()
}

/// Without a long → short switch (none at all, or short → long only) nothing is reordered:
/// no retransmission, no DSACK. With two long → short switches the sender takes the
/// overtaken segments for lost (RACK, RFC 8985, once 3 segments above them are SACKed),
/// retransmits some, and the originals then arrive: the receiver DSACKs each duplicate and the
/// sender counts them as spurious retransmissions. At most the segments that entered the long
/// path in the Δ before each switch can be overtaken: Δ·10 Mbit/s / 1514 B ≈ 24.8 per switch
/// at the application rate (24 or 25 segments, depending on the phase of the 1.21 ms sending
/// clock), so at most 50 over the two switches. Nothing is dropped, so every retransmission
/// delivers a duplicate: retransmissions, DSACKed segments and spurious retransmissions are
/// one number, and the receiver sent a DSACK for each. The same run twice gives identical
/// results, and so does the period that makes the same switches.
#[test]
fn spurious_retransmissions_only_after_long_to_short_switches() {
    for (what, schedule) in [
        ("no switch", vec![]),
        ("short → long", vec![(Time::ZERO, 1), (at_ms(3000), 0)]),
    ] {
        let s = run(schedule);
        assert_eq!(
            (s.retransmits, s.dsacks_sent, s.spurious_retransmits),
            (0, 0, 0),
            "{what}"
        );
        assert!(
            s.bytes_delivered > 9_000_000,
            "{what}: {}",
            s.bytes_delivered
        );
    }
    let schedule = vec![(at_ms(2500), 1), (at_ms(4500), 0), (at_ms(6500), 1)];
    assert_eq!(run_all(schedule.clone()), run_all(schedule.clone()));
    // Switching every 2 s from 2.5 s is the same schedule within the 8 s run.
    let periodic = run_switching(Switching::Period {
        period: Dur::from_secs(2),
        offset: Dur::from_millis(500),
    });
    assert_eq!(periodic, run_all(schedule.clone()));
    let s = run(schedule);
    let per_switch = 0.030 * 10e6 / u64_to_f64(WIRE * 8);
    eprintln!(
        "retransmits {}, DSACKs sent {}, DSACKed {}, spurious {} (≈{per_switch:.1} per switch)",
        s.retransmits, s.dsacks_sent, s.dsack_dups, s.spurious_retransmits
    );
    assert!(s.spurious_retransmits > 0);
    assert!(u64_to_f64(s.spurious_retransmits) <= 2.0 * per_switch.ceil());
    assert_eq!(s.retransmits, s.spurious_retransmits);
    assert_eq!(s.dsack_dups, s.spurious_retransmits);
    assert_eq!(s.dsacks_sent, s.dsack_dups);
}

/// What a lossy switch loses is counted among the run's drops (`data_packets_dropped`, in
/// summary.json's `engine`) and every data segment is accounted for (delivered, dropped or
/// still inside). On these delay lines `drop_queue` has no queue to lose, so it loses nothing,
/// like `drain`; `drop_path` loses what propagates on the old path at each switch, a blackout
/// what arrives in its 50 ms; the flow goes on delivering in every mode.
#[test]
fn switch_losses_are_counted_as_drops() {
    let switching = Switching::Period {
        period: Dur::from_secs(2),
        offset: Dur::from_millis(500),
    };
    for (mode, lossy) in [
        (SwitchMode::Drain, false),
        (SwitchMode::DropQueue, false),
        (SwitchMode::DropPath, true),
        (SwitchMode::Blackout(Dur::from_millis(50)), true),
    ] {
        let r = run_mode(switching.clone(), mode);
        let e = r.engine;
        assert_eq!(e.data_packets_dropped > 0, lossy, "{mode:?}: {e:?}");
        assert_eq!(
            e.data_packets_delivered + e.data_packets_dropped + e.data_packets_in_network,
            e.data_packets_sent,
            "{mode:?}: {e:?}"
        );
        assert!(
            r.flows[0].summary.bytes_delivered > 5_000_000,
            "{mode:?}: {}",
            r.flows[0].summary.bytes_delivered
        );
    }
}
