//! The three-way handshake against theory (`crates/sim/src/tcp/handshake.rs`): what it adds to
//! a flow's completion time on an empty path, after a lost SYN or SYN-ACK and after two lost
//! SYNs, and that it is deterministic.
//!
//! The path: a 100 Mbit/s dumbbell, 20 ms one way, 5 ms of access delay each way, so the base
//! RTT is 2·(20 + 5) = 50 ms. A SYN or SYN-ACK (60 bytes) takes 4.8 µs on the bottleneck and
//! 48 ns on a 10 Gbit/s NIC; the handshake's round trip is the base RTT plus one such
//! serialisation per hop and direction: 50 ms + 2·(4.8 µs + 48 ns) = 50.0097 ms. FCT counts
//! from the SYN, so a handshake moves the completion time by exactly that round trip when the
//! transfer behaves the same after it. Tolerance: 10 µs, two serialisations of the small
//! segments at the bottleneck (the prediction is exact up to the nanosecond rounding of the
//! engine; the tolerance bounds what a difference in the data phase could hide).

use cclab_cc::CcSpec;
use cclab_sim::net::{ElementSpec, OutageMode, Selector};
use cclab_sim::topology::{Dumbbell, LEFT, RIGHT};
use cclab_sim::{Dur, ElementConfig, QueueLimit, Results, SimConfig, Simulation, Time};

const RATE: u64 = 100_000_000;
const DELAY_MS: u64 = 20;
const ACCESS_MS: u64 = 5;
/// Two serialisations of a 60-byte control segment at 100 Mbit/s, s.
const TOL: f64 = 10e-6;

/// The handshake's round trip on this path: the base RTT plus the SYN's and the SYN-ACK's
/// serialisation on the bottleneck (each direction at 100 Mbit/s) and on the two NICs.
fn handshake_rtt_s() -> f64 {
    let base = 2.0 * (DELAY_MS + ACCESS_MS) as f64 * 1e-3;
    let bits = 60.0 * 8.0;
    base + 2.0 * (bits / RATE as f64 + bits / 10e9)
}

fn path(size: u64, handshake: bool, cc: &str) -> SimConfig {
    path_tfo(size, handshake, false, cc)
}

fn path_tfo(size: u64, handshake: bool, fast_open: bool, cc: &str) -> SimConfig {
    let mut d = Dumbbell::new(RATE, Dur::from_millis(DELAY_MS), QueueLimit::Packets(1000));
    d.duration = Dur::from_secs(20);
    let f = d.add_flow(
        CcSpec::default_for(cc).unwrap(),
        Dur::from_millis(ACCESS_MS),
    );
    f.size = Some(size);
    f.handshake = handshake;
    f.fast_open = fast_open;
    d.build()
}

/// An outage that loses what `node` receives from `from` during [start, start + len).
fn outage(
    mut cfg: SimConfig,
    node: cclab_sim::NodeId,
    from: cclab_sim::NodeId,
    start_ms: u64,
    len_ms: u64,
) -> SimConfig {
    cfg.elements.push(ElementConfig {
        node,
        spec: ElementSpec::Outage {
            intervals: vec![(
                Time::ZERO + Dur::from_millis(start_ms),
                Dur::from_millis(len_ms),
            )],
            mode: OutageMode::Drop,
        },
        select: Selector {
            from: Some(from),
            ..Selector::default()
        },
    });
    cfg
}

fn run(cfg: SimConfig) -> Results {
    Simulation::new(cfg).unwrap().run()
}

fn fct(r: &Results) -> f64 {
    r.flows[0].summary.fct_s.expect("the transfer completes")
}

/// On an empty path the handshake adds one round trip (of the small segments) to the FCT:
/// for a transfer within the initial window (10 segments) and for 1 MB, which needs slow start
/// (the RTT samples of the data phase are the same with and without the handshake, so is the
/// data phase).
#[test]
fn the_handshake_adds_one_round_trip_on_an_empty_path() {
    for (size, cc) in [(14_480, "cubic"), (1_000_000, "cubic"), (1_000_000, "reno")] {
        let off = run(path(size, false, cc));
        let on = run(path(size, true, cc));
        let added = fct(&on) - fct(&off);
        println!(
            "{cc} {size} B: FCT {} s without, {} s with the handshake",
            fct(&off),
            fct(&on)
        );
        assert!(
            (added - handshake_rtt_s()).abs() <= TOL,
            "{cc} {size} B: the handshake added {added} s, expected {} s",
            handshake_rtt_s()
        );
        assert_eq!(
            off.flows[0].summary.rto_count + on.flows[0].summary.rto_count,
            0
        );
    }
}

/// A lost SYN is sent again when the initial RTO of 1 s expires (RFC 6298 §2.1): the FCT grows
/// by exactly 1 s. The outage covers the SYN's arrival at the right router (25 ms) and nothing
/// else of the flow's. One timeout is recorded, at 1 s; the window stays the IW (Linux cuts it
/// to 1 only after more than one SYN retransmission).
#[test]
fn a_lost_syn_costs_the_initial_rto() {
    let on = run(path(14_480, true, "cubic"));
    let lost = run(outage(path(14_480, true, "cubic"), RIGHT, LEFT, 0, 100));
    let added = fct(&lost) - fct(&on);
    println!("FCT {} s, {} s with the loss", fct(&on), fct(&lost));
    assert!((added - 1.0).abs() <= TOL, "added {added} s");
    assert_eq!(lost.flows[0].summary.rto_times_s, vec![1.0]);
    assert_eq!(lost.flows[0].summary.min_cwnd, 10);
}

/// A lost SYN-ACK likewise: the client's SYN retransmission at 1 s is answered at once. The
/// outage covers the SYN-ACK's arrival at the left router (about 50 ms).
#[test]
fn a_lost_syn_ack_costs_the_initial_rto() {
    let on = run(path(14_480, true, "cubic"));
    let lost = run(outage(path(14_480, true, "cubic"), LEFT, RIGHT, 0, 100));
    let added = fct(&lost) - fct(&on);
    println!("FCT {} s, {} s with the loss", fct(&on), fct(&lost));
    assert!((added - 1.0).abs() <= TOL, "added {added} s");
    assert_eq!(lost.flows[0].summary.rto_times_s, vec![1.0]);
}

/// Two lost SYNs (the outage lasts until 1.5 s): retransmissions at 1 s and 3 s (the timeout
/// doubles), and the transfer starts with cwnd = 1 (`tcp_init_transfer`). Ten segments then take
/// four rounds of slow start (1 + 2 + 4 + 3, every segment ACKed in quick-ACK mode) instead of
/// one: the FCT grows by 3 s plus three round trips of the data phase. A round trip of a full
/// segment adds its serialisation at 100 Mbit/s (1500 B: 120 µs) to the base RTT, and the
/// rounds of 2 and 4 segments queue behind one another at the bottleneck; the tolerance, 1 ms,
/// covers those serialisations (at most 10 · 120 µs = 1.2 ms over the three rounds, of which
/// the IW run pays part too).
#[test]
fn two_lost_syns_start_the_transfer_with_one_segment() {
    let on = run(path(14_480, true, "reno"));
    let lost = run(outage(path(14_480, true, "reno"), RIGHT, LEFT, 0, 1500));
    assert_eq!(lost.flows[0].summary.rto_times_s, vec![1.0, 3.0]);
    assert_eq!(lost.flows[0].summary.min_cwnd, 1);
    let added = fct(&lost) - fct(&on);
    println!("FCT {} s, {} s with the losses", fct(&on), fct(&lost));
    let expected = 3.0 + 3.0 * 0.050;
    assert!(
        (added - expected).abs() <= 1.2e-3,
        "added {added} s, expected {expected} s"
    );
}

/// TCP Fast Open (RFC 7413): a 1000-byte transfer fits in the SYN (1420 bytes of SYN data with
/// 1448-byte segments), which the receiver delivers at once: the FCT is one handshake round
/// trip shorter than with a plain handshake, and the same as without any handshake up to the
/// 20 bytes the SYN is longer than a data segment (60 + 12 cookie option bytes against 52:
/// 1.6 µs at 100 Mbit/s; tolerance 10 µs as above). A 2000-byte transfer (two segments, the
/// first a full 1448 bytes) does not fit, so Fast Open changes nothing for it.
#[test]
fn fast_open_saves_the_round_trip_of_a_transfer_that_fits_in_the_syn() {
    let hs = fct(&run(path(1000, true, "cubic")));
    let tfo = fct(&run(path_tfo(1000, true, true, "cubic")));
    let off = fct(&run(path(1000, false, "cubic")));
    println!("1000 B: FCT {hs} s with a handshake, {tfo} s with Fast Open, {off} s without");
    assert!(
        (hs - tfo - handshake_rtt_s()).abs() <= TOL,
        "saved {} s",
        hs - tfo
    );
    assert!((tfo - off).abs() <= TOL, "{tfo} vs {off}");
    let two = |tfo| fct(&run(path_tfo(2000, true, tfo, "cubic")));
    assert_eq!(two(true), two(false));
}

/// Same configuration, same results, bit for bit, with a handshake and a lost SYN.
#[test]
fn the_handshake_is_deterministic() {
    let cfg = || outage(path(1_000_000, true, "bbr3"), RIGHT, LEFT, 0, 100);
    assert_eq!(run(cfg()), run(cfg()));
}
