//! Flow-completion time and its slowdown (FCT ÷ the ideal FCT of the transfer alone on the
//! empty path, `engine/ideal.rs`): a flow whose initial window holds the whole transfer meets
//! the ideal, and no flow beats it.

use cclab_cc::{CcSpec, Dur};
use cclab_sim::topology::Dumbbell;
use cclab_sim::{FlowSummary, QueueLimit, Simulation};

/// One sized flow of `size` bytes with initial window `iw` on an empty 100 Mbit/s dumbbell
/// (10 ms bottleneck delay, 1 ms access delay, a 1000-packet buffer).
fn alone(cc: &str, size: u64, iw: u32) -> FlowSummary {
    alone_with(cc, size, iw, false, false)
}

/// [`alone`] with or without a three-way handshake and TCP Fast Open.
fn alone_with(cc: &str, size: u64, iw: u32, handshake: bool, fast_open: bool) -> FlowSummary {
    let mut d = Dumbbell::new(100_000_000, Dur::from_millis(10), QueueLimit::Packets(1000));
    d.duration = Dur::from_secs(20);
    let f = d.add_flow(
        CcSpec::default_for(cc).expect("a controller"),
        Dur::from_millis(1),
    );
    f.size = Some(size);
    f.initial_window = iw;
    f.handshake = handshake;
    f.fast_open = fast_open;
    let r = Simulation::new(d.build()).expect("a valid scenario").run();
    r.flows[0].summary.clone()
}

/// An initial window larger than the transfer sends it all at once: the FCT is the ideal one.
/// The tolerance (1 %) covers what the ideal leaves out: the last segment being shorter and
/// the sender's TSO splitting the burst into skbs that leave the NIC back to back (both
/// microseconds against a ≥ 11 ms transfer).
#[test]
fn a_transfer_within_the_initial_window_completes_in_the_ideal_time() {
    for size in [10_000, 100_000, 400_000] {
        let s = alone("cubic", size, 1000);
        let slowdown = s.fct_slowdown.expect("the flow completes");
        assert!(
            (1.0..1.01).contains(&slowdown),
            "{size} B: FCT {:?} s, ideal {:?} s, slowdown {slowdown}",
            s.fct_s,
            s.ideal_fct_s
        );
        assert_eq!(s.size_bytes, Some(size));
    }
}

/// With a handshake the ideal adds its round trip (SYN out, SYN-ACK back, each link's delay and
/// serialisation), and the FCT counts from the SYN: still the ideal exactly. A Fast Open
/// transfer that fits in the SYN does not wait for the round trip, and its ideal does not
/// include it (the SYN's 20 option bytes and cookie are the only difference: under 1 %).
#[test]
fn the_handshake_round_trip_is_part_of_the_ideal() {
    for size in [10_000, 400_000] {
        let plain = alone_with("cubic", size, 1000, false, false);
        let s = alone_with("cubic", size, 1000, true, false);
        let slowdown = s.fct_slowdown.expect("the flow completes");
        assert!(
            (1.0..1.01).contains(&slowdown),
            "{size} B: slowdown {slowdown}"
        );
        // One base round trip more (2 × 11 ms plus two 60-byte serialisations): at least 22 ms.
        let extra = s.fct_s.unwrap() - plain.fct_s.unwrap();
        assert!((0.022..0.0221).contains(&extra), "{size} B: +{extra} s");
    }
    let tfo = alone_with("cubic", 1000, 10, true, true);
    let slowdown = tfo.fct_slowdown.expect("the flow completes");
    assert!((1.0..1.01).contains(&slowdown), "TFO slowdown {slowdown}");
}

/// The ideal is a lower bound whatever the controller and window: slow start from ten
/// segments needs several round trips for a megabyte (RFC 5681 §3.1: the window at most
/// doubles per round trip, so 691 segments take at least ⌈log2(691 / 10 + 1)⌉ = 7 rounds,
/// while the ideal is about 4 round trips' worth at 100 Mbit/s), so its slowdown is well above 1.
#[test]
fn no_flow_beats_the_ideal_and_slow_start_costs_round_trips() {
    for cc in ["reno", "cubic", "bbr3"] {
        for size in [20_000, 1_000_000] {
            let s = alone(cc, size, 10);
            let slowdown = s.fct_slowdown.expect("the flow completes");
            assert!(slowdown >= 1.0, "{cc} {size} B: slowdown {slowdown}");
        }
    }
    let s = alone("reno", 1_000_000, 10);
    // RTT ≈ 22 ms; ideal ≈ 11 ms + 83 ms; seven rounds ≈ 154 ms + 11 ms at least.
    let slowdown = s.fct_slowdown.expect("the flow completes");
    assert!(slowdown > 1.5, "slowdown {slowdown}");
}

/// A bulk flow has no size, no ideal and no slowdown.
#[test]
fn bulk_flows_have_no_slowdown() {
    let mut d = Dumbbell::new(100_000_000, Dur::from_millis(10), QueueLimit::Packets(100));
    d.duration = Dur::from_secs(1);
    d.add_flow(CcSpec::default_for("cubic").expect("cubic"), Dur::ZERO);
    let r = Simulation::new(d.build()).expect("a valid scenario").run();
    let s = &r.flows[0].summary;
    assert_eq!(
        (s.size_bytes, s.ideal_fct_s, s.fct_slowdown),
        (None, None, None)
    );
}
