//! Startup algorithms end to end against their sources: Jump Start (Liu, Allman, Jin, Wang,
//! PFLDnet 2007) and the receive window that bounds it (RFC 9293 §3.8.6).
//!
//! Paths are `Dumbbell`s with a deep drop-tail buffer and no loss; packets are 1448-byte
//! payloads in 1500-byte IP packets. The simulator models no handshake, so Jump Start paces
//! over its configured `fallback_rtt`, set to the path's base RTT. Every test states its
//! tolerance and why.

#![warn(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss
)]

use cclab_cc::num::u64_to_f64;
use cclab_cc::{CcSpec, CubicConfig, Dur, SlowStartKind};
use cclab_sim::topology::Dumbbell;
use cclab_sim::{QueueLimit, Results, Simulation, TracePoint};

mod common;
use common::goodput_between;

const MSS: u64 = 1448;
const RATE: u64 = 100_000_000;
const RTT: Dur = Dur::from_millis(40);

fn run(d: &Dumbbell) -> Results {
    Simulation::new(d.build()).expect("valid config").run()
}

fn jumpstart_reno() -> CcSpec {
    CcSpec::NewReno {
        slow_start: SlowStartKind::JumpStart {
            fallback_rtt: Some(RTT),
        },
    }
}

/// A 100 Mbit/s, 40 ms dumbbell (one-way 20 ms, 10 000-packet buffer) with one traced flow of
/// `size` bytes; TSO off so that every skb is one segment and pacing shows per packet.
fn path(cc: CcSpec, size: Option<u64>, rcv_wnd: Option<u64>) -> Dumbbell {
    let mut d = Dumbbell::new(RATE, Dur(RTT.0 / 2), QueueLimit::Packets(10_000));
    d.duration = Dur::from_secs(5);
    d.sender_host.tso.enabled = false;
    let f = d.add_flow(cc, Dur::ZERO);
    f.size = size;
    f.rcv_wnd = rcv_wnd;
    f.trace = true;
    f.trace_tx = true;
    d
}

/// Send times of new segments in order, from the `xmit` rows (one segment per skb: TSO off;
/// a retransmission does not advance SND.NXT and is skipped).
fn new_sends(tr: &[TracePoint]) -> Vec<(u64, f64)> {
    let mut nxt = 0;
    let mut out = Vec::new();
    for p in tr.iter().filter(|p| p.event == "xmit") {
        for seq in nxt..p.snd_nxt {
            out.push((seq, p.t_s));
        }
        nxt = nxt.max(p.snd_nxt);
    }
    out
}

/// Time of the first ACK the sender processed.
fn first_ack(tr: &[TracePoint]) -> f64 {
    tr.iter().find(|p| p.event == "ack").expect("an ACK").t_s
}

/// Jump Start's first flight is the whole transfer up to the receive window, W =
/// min(⌈size/mss⌉, ⌊rwnd/mss⌋), sent before the first ACK, paced evenly over one RTT: segment
/// k leaves at k·RTT/W. Tolerance: half a pacing gap (RTT/W) per segment — the EDT is kept in
/// whole nanoseconds (a truncation of < 1 ns per segment) and the sender runs at the pacing
/// timer exactly, so anything near a gap would be a pacing error.
#[test]
fn jumpstart_first_flight_is_min_of_transfer_and_rwnd_paced_over_one_rtt() {
    for (size_segs, rwnd_segs) in [(200u64, None), (200, Some(120u64)), (60, Some(120))] {
        let w = rwnd_segs.map_or(size_segs, |r| r.min(size_segs));
        let d = path(
            jumpstart_reno(),
            Some(size_segs * MSS),
            rwnd_segs.map(|r| r * MSS + 100),
        );
        let r = run(&d);
        let f = &r.flows[0];
        assert!(f.summary.complete);
        assert_eq!(f.summary.retransmits, 0);
        let sends = new_sends(&f.trace);
        let t_ack = first_ack(&f.trace);
        let flight: Vec<_> = sends.iter().filter(|(_, t)| *t < t_ack).collect();
        eprintln!(
            "size {size_segs}, rwnd {rwnd_segs:?}: first flight {} segments, last at {:.4} s, first ACK {t_ack:.4} s",
            flight.len(),
            flight.last().unwrap().1
        );
        assert_eq!(u64::try_from(flight.len()).unwrap(), w, "first flight");
        let gap = RTT.as_secs_f64() / u64_to_f64(w);
        for &&(seq, t) in &flight {
            let want = u64_to_f64(seq) * gap;
            assert!(
                (t - want).abs() <= gap / 2.0,
                "segment {seq} left at {t:.6} s, paced schedule {want:.6} s"
            );
        }
    }
}

/// Jump Start leaves startup at once (its source has no startup phase): the window is W from
/// the first segment and the controller is in congestion avoidance at the first ACK. On the
/// same path standard slow start is still in slow start after its first round.
#[test]
fn jumpstart_has_no_startup_phase() {
    let r = run(&path(jumpstart_reno(), Some(200 * MSS), None));
    let tr = &r.flows[0].trace;
    let first = tr.iter().find(|p| p.event == "xmit").unwrap();
    assert_eq!(first.cwnd, 200);
    let ack = tr.iter().find(|p| p.event == "ack").unwrap();
    assert_eq!(ack.cc_state, "cong_avoid");
    assert_eq!(ack.ssthresh, Some(200));
    let r = run(&path(
        CcSpec::default_for("newreno").unwrap(),
        Some(200 * MSS),
        None,
    ));
    let ack = r.flows[0].trace.iter().find(|p| p.event == "ack").unwrap();
    assert_eq!(ack.cc_state, "slow_start");
}

/// FCT of a transfer ≤ rwnd on an empty deep-buffered path (no handshake modelled; FCT is
/// measured at the receiver, last byte in order). Jump Start: the last of W segments leaves at
/// (W−1)·RTT/W (paced below the bottleneck rate here: 200 · 1500 B / 40 ms = 60 Mbit/s <
/// 100 Mbit/s, so no queue) and arrives half an RTT plus its serialisations (NIC and bottleneck,
/// 0.12 ms each) later: FCT = (W−1)/W·RTT + RTT/2 + 0.24 ms ≈ 1.5 RTT; tolerance 0.5 ms for
/// the access-link model. Standard slow start with IW = 10 cannot have sent segment n before
/// j·RTT, j = ⌈log₂(n/IW + 1)⌉ − 1 = 4, so its FCT ≥ 4.5 RTT (the bound of the FCT property
/// test) — at least three times Jump Start's.
#[test]
fn jumpstart_fct_is_one_and_a_half_rtt_where_slow_start_needs_log2_rounds() {
    let n = 200u64;
    let rtt = RTT.as_secs_f64();
    let js = run(&path(jumpstart_reno(), Some(n * MSS), Some(1 << 20))).flows[0]
        .summary
        .fct_s
        .expect("completes");
    let want = (u64_to_f64(n) - 1.0) / u64_to_f64(n) * rtt + rtt / 2.0 + 0.00024;
    eprintln!("Jump Start FCT {js:.5} s, theory {want:.5} s");
    assert!((js - want).abs() < 0.0005, "Jump Start FCT {js} vs {want}");
    for ss in [SlowStartKind::Standard, SlowStartKind::HyStart] {
        let cc = CcSpec::Cubic(CubicConfig {
            slow_start: ss,
            ..CubicConfig::default()
        });
        let fct = run(&path(cc, Some(n * MSS), Some(1 << 20))).flows[0]
            .summary
            .fct_s
            .expect("completes");
        let j = ((u64_to_f64(n) / 10.0 + 1.0).log2().ceil() - 1.0) * rtt + rtt / 2.0;
        eprintln!("{}: FCT {fct:.5} s (bound {j:.3} s)", ss.name());
        assert!(fct >= j && fct >= 3.0 * js, "{}: {fct}", ss.name());
    }
}

/// A bulk flow limited by a fixed receive window W below the BDP sends a window per round
/// trip. The receiver ACKs every second segment, so the window's right edge (SND.UNA + W) moves
/// in two-segment steps and on average W − ½ segments are in flight: goodput =
/// (⌊rwnd/mss⌋ − ½) · mss / RTT, never more than ⌊rwnd/mss⌋ segments out. Tolerance 1.5 %: the
/// round trip of the window is 40 ms plus the serialisations of its segments and ACKs at the NIC
/// and the bottleneck (≈ 0.5 ms, 1.2 %). Measured over 1–5 s, after slow start reached W.
#[test]
fn a_receive_window_caps_the_flight_and_the_rate() {
    let rwnd = 65_535u64;
    let w = rwnd / MSS; // 45 segments
    let mut d = path(CcSpec::default_for("cubic").unwrap(), None, Some(rwnd));
    d.sender_host.tso.enabled = true;
    let r = run(&d);
    let f = &r.flows[0];
    let max_flight = f.trace.iter().map(|p| p.snd_nxt - p.snd_una).max().unwrap();
    assert_eq!(max_flight, w);
    let goodput = goodput_between(f, 1.0, 5.0);
    let want = (u64_to_f64(w) - 0.5) * u64_to_f64(MSS) * 8.0 / RTT.as_secs_f64();
    eprintln!("rwnd-limited goodput {goodput:.0} bit/s, (W - 1/2)/RTT {want:.0}");
    assert!(
        goodput <= want && goodput / want > 0.985,
        "{goodput} vs {want}"
    );
    // Without a receive window the same flow fills the 100 Mbit/s link.
    let mut d = path(CcSpec::default_for("cubic").unwrap(), None, None);
    d.sender_host.tso.enabled = true;
    let g = goodput_between(&run(&d).flows[0], 1.0, 5.0);
    assert!(g > 5.0 * want, "unlimited {g}");
}
