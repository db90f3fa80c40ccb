//! Startup algorithms end to end against their sources: Jump Start (Liu, Allman, Jin, Wang,
//! PFLDnet 2007) and the receive window that bounds it (RFC 9293 §3.8.6), and SUSS (Arghavani
//! et al., SIGCOMM 2024, and its Linux patch), and Paced Chirping (Misund and Briscoe, INFOCOM
//! GI 2019, and its Linux code).
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
use cclab_cc::{CcSpec, ChirpingConfig, CubicConfig, Dur, SlowStartKind};
use cclab_sim::topology::Dumbbell;
use cclab_sim::{QueueLimit, Results, Simulation, TracePoint};

mod common;
use common::{goodput_between, new_sends};

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
        rules: cclab_cc::RenoRules::LINUX,
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

fn cubic(ss: SlowStartKind) -> CcSpec {
    CcSpec::Cubic(CubicConfig {
        slow_start: ss,
        ..CubicConfig::default()
    })
}

/// cwnd just before each round's first ACK, rounds 1.. (round k's ACKs start ≈ k·RTT).
fn cwnd_per_round(tr: &[TracePoint], rtt: f64, rounds: u32) -> Vec<u32> {
    (1..=rounds)
        .map(|k| {
            let t = (f64::from(k) + 0.99) * rtt;
            tr.iter()
                .take_while(|p| p.t_s < t)
                .last()
                .map_or(0, |p| p.cwnd)
        })
        .collect()
}

/// A traced bulk CUBIC flow with slow start `ss` on an empty 1 Gbit/s path of base RTT `rtt`
/// with a 100 000-packet buffer (no loss in 2 s).
fn fast_path(ss: SlowStartKind, rtt: Dur) -> Results {
    let mut d = Dumbbell::new(1_000_000_000, Dur(rtt.0 / 2), QueueLimit::Packets(100_000));
    d.duration = Dur::from_secs(2);
    let f = d.add_flow(cubic(ss), Dur::ZERO);
    f.trace = true;
    run(&d)
}

/// When the trace first leaves slow start: (time, cwnd).
fn exit(tr: &[TracePoint]) -> (f64, u32) {
    tr.iter()
        .find(|p| p.cc_state != "slow_start")
        .map(|p| (p.t_s, p.cwnd))
        .expect("leaves slow start")
}

/// SUSS (SIGCOMM 2024, the patch's `suss_speedup` and `suss_limit`): on an empty path with
/// min RTT 100 ms > 10 ms and ACK trains far shorter than the RTT, every condition holds, so
/// rounds 2, 3 and 4 (`suss_max` = 3) each end at 4× the previous window — IW 10: 40, 160,
/// 640 — and later rounds double as plain slow start (1280, 2560, 5120). Linux HyStart doubles
/// from the start. Exact: the window arithmetic is in whole segments and no detector fires
/// before the window reaches the BDP (8333 segments).
///
/// Exit round: both leave slow start in the round whose window first exceeds the BDP, where
/// the queue (and so HyStart's delay detector, or SUSS's cap) appears: HyStart in round 10
/// (10·2^10 = 10 240), SUSS in round 7 (640·2^4 = 10 240) — three rounds (0.3 s) earlier.
/// Round k's ACKs arrive during [k·RTT, (k+1)·RTT); the exit must fall inside that round.
#[test]
fn suss_grows_four_times_for_three_rounds_and_leaves_three_rounds_earlier() {
    let rtt = Dur::from_millis(100);
    let rtt_s = rtt.as_secs_f64();
    let suss = fast_path(SlowStartKind::Suss, rtt);
    let hystart = fast_path(SlowStartKind::HyStart, rtt);
    let (ts, th) = (&suss.flows[0].trace, &hystart.flows[0].trace);
    let ws = cwnd_per_round(ts, rtt_s, 6);
    let wh = cwnd_per_round(th, rtt_s, 6);
    eprintln!("per-round cwnd: SUSS {ws:?}, HyStart {wh:?}");
    assert_eq!(ws, [40, 160, 640, 1280, 2560, 5120]);
    assert_eq!(wh, [20, 40, 80, 160, 320, 640]);
    let (es, eh) = (exit(ts), exit(th));
    eprintln!("exit: SUSS {es:?}, HyStart {eh:?}");
    assert!(
        (7.0 * rtt_s..8.0 * rtt_s).contains(&es.0),
        "SUSS exit {es:?}"
    );
    assert!(
        (10.0 * rtt_s..11.0 * rtt_s).contains(&eh.0),
        "HyStart exit {eh:?}"
    );
    assert_eq!(suss.flows[0].summary.retransmits, 0);
}

/// `suss_speedup` turns SUSS off in round 2 when min RTT ≤ 10 ms: the flow is then plain
/// HyStart, bit for bit (same trace) on an 8 ms path.
#[test]
fn suss_is_plain_hystart_below_a_10_ms_rtt() {
    let rtt = Dur::from_millis(8);
    let a = fast_path(SlowStartKind::Suss, rtt);
    let b = fast_path(SlowStartKind::HyStart, rtt);
    let (ta, tb) = (&a.flows[0].trace, &b.flows[0].trace);
    assert_eq!(ta.len(), tb.len());
    if let Some(i) = (0..ta.len()).find(|&i| (ta[i].t_s, ta[i].cwnd) != (tb[i].t_s, tb[i].cwnd)) {
        panic!("row {i}: SUSS {:?}, HyStart {:?}", ta[i], tb[i]);
    }
    assert_eq!(a.flows[0].summary.fct_s, b.flows[0].summary.fct_s);
    assert_eq!(
        a.flows[0].summary.bytes_delivered,
        b.flows[0].summary.bytes_delivered
    );
}

/// SUSS paces the extra (red) segments of an accelerated round over T = min_rtt − min_rtt/2^(r−1)
/// from the blue tail: in round 2 (IW 10) the 20 red segments 30..50 leave at T/20 = 2.5 ms
/// intervals over T = 50 ms (100 ms path), after the 20 blue ones (10..30), which leave
/// ACK-clocked within the IW's ACK train. Tolerance: a tenth of the gap for each interval (the EDT keeps
/// whole nanoseconds). TSO off, so every skb is one segment.
#[test]
fn suss_paces_the_red_segments_over_the_rest_of_the_round() {
    let mut d = Dumbbell::new(
        1_000_000_000,
        Dur::from_millis(50),
        QueueLimit::Packets(100_000),
    );
    d.duration = Dur::from_millis(500);
    d.sender_host.tso.enabled = false;
    let f = d.add_flow(cubic(SlowStartKind::Suss), Dur::ZERO);
    f.trace = true;
    f.trace_tx = true;
    let r = run(&d);
    let sends = new_sends(&r.flows[0].trace);
    let at = |seq: u64| sends.iter().find(|(s, _)| *s == seq).expect("sent").1;
    let gap = 0.050 / 20.0;
    for seq in 31..50 {
        let dt = at(seq) - at(seq - 1);
        assert!(
            (dt - gap).abs() < gap / 10.0,
            "segment {seq}: {dt} s after the previous"
        );
    }
    let blue = at(29) - at(10);
    eprintln!(
        "blue 10..30 over {blue:.5} s; red 30..50 from {:.4} s to {:.4} s",
        at(30),
        at(49)
    );
    // The blue segments leave with the IW's ACK train, before the paced part, and that train
    // is shorter than min_rtt/4 (the round-2 condition that let SUSS accelerate).
    assert!(
        at(29) <= at(30) && blue < 0.1 / 4.0,
        "blue segments over {blue} s"
    );
}

/// Losses in the jump round get the host's own response (the paper keeps TCP's AIMD and
/// timeout intact): a 200-segment jump paced at 60 Mbit/s into a 10 Mbit/s, 40 ms path with a
/// 20-packet buffer overflows the queue; NewReno enters recovery with ssthresh = W/2 = 100
/// (`tcp_reno_ssthresh` of the jump window), the jump round's pacing ends, and the transfer
/// completes.
#[test]
fn losses_in_the_jump_round_get_the_hosts_response() {
    let mut d = Dumbbell::new(10_000_000, Dur(RTT.0 / 2), QueueLimit::Packets(20));
    d.duration = Dur::from_secs(10);
    let f = d.add_flow(jumpstart_reno(), Dur::ZERO);
    f.size = Some(200 * MSS);
    f.trace = true;
    let r = run(&d);
    let f = &r.flows[0];
    assert!(f.summary.complete);
    assert!(f.summary.retransmits > 0);
    let rec = f
        .trace
        .iter()
        .find(|p| p.ca_state == "recovery")
        .expect("a recovery");
    eprintln!(
        "recovery at {:.4} s: cwnd {}, ssthresh {:?}",
        rec.t_s, rec.cwnd, rec.ssthresh
    );
    assert_eq!(rec.ssthresh, Some(100));
}

/// With a handshake, Jump Start paces its first flight over the round trip the handshake
/// measured (its `ConnStart::first_rtt`), with no `jumpstart_rtt` configured: the FCT is the
/// handshake's round trip plus the same one and a half round trips as without one (tolerance
/// as above, 0.5 ms, plus the 60-byte SYN and SYN-ACK's serialisations, 10 µs).
#[test]
fn jumpstart_paces_over_the_handshake_rtt() {
    let n = 200u64;
    let rtt = RTT.as_secs_f64();
    let cc = CcSpec::NewReno {
        slow_start: SlowStartKind::JumpStart { fallback_rtt: None },
        rules: cclab_cc::RenoRules::LINUX,
    };
    let mut d = path(cc, Some(n * MSS), Some(1 << 20));
    d.flows[0].flow.handshake = true;
    let r = run(&d);
    let fct = r.flows[0].summary.fct_s.expect("completes");
    let want = rtt + (u64_to_f64(n) - 1.0) / u64_to_f64(n) * rtt + rtt / 2.0 + 0.00024;
    assert!(
        (fct - want).abs() < 0.00051,
        "Jump Start FCT {fct} vs {want}"
    );
    // Without the handshake and without `jumpstart_rtt` it falls back to slow start: rounds.
    let cc = CcSpec::NewReno {
        slow_start: SlowStartKind::JumpStart { fallback_rtt: None },
        rules: cclab_cc::RenoRules::LINUX,
    };
    let slow = run(&path(cc, Some(n * MSS), Some(1 << 20))).flows[0]
        .summary
        .fct_s
        .expect("completes");
    assert!(slow > 3.0 * (want - rtt), "fallback FCT {slow}");
}

fn chirping() -> CcSpec {
    CcSpec::NewReno {
        slow_start: SlowStartKind::Chirping(ChirpingConfig::DEFAULT),
        rules: cclab_cc::RenoRules::LINUX,
    }
}

/// Paced Chirping's path: 100 Mbit/s, base RTT 100 ms (BDP 833 packets of 1500 B), a buffer
/// of `buf` packets, one flow of `size` bytes with a handshake (so the chirps of a round can be
/// spread over the srtt from the start), an ACK per segment (the code's `tcp_delayed_acks`
/// sysctl turns delayed ACKs off: the paper sets them aside), TSO off.
fn chirp_path(cc: CcSpec, buf: u32, size: u64) -> Dumbbell {
    let mut d = Dumbbell::new(RATE, Dur::from_millis(50), QueueLimit::Packets(buf));
    d.duration = Dur::from_secs(10);
    d.sender_host.tso.enabled = false;
    let f = d.add_flow(cc, Dur::ZERO);
    f.ack_every = 1;
    f.handshake = true;
    f.size = Some(size);
    f.trace = true;
    f.trace_tx = true;
    d
}

/// Bottleneck service time of a 1500-byte packet at 100 Mbit/s: 120 µs.
const TAU_S: f64 = 1500.0 * 8.0 / 100e6;

/// The gaps inside a chirp are the code's (`dctcp_new_chirp`, `tcp_update_skb_after_send` in
/// the patch): N − 1 gaps from G·g down by step = 2(G−1)·g/N. Chirps 0 and 1 (N = 5, g =
/// 200 µs, G = 2): 400, 320, 240, 160 µs exactly. Every 16-packet chirp (from chirp 4 on,
/// whatever its g): gap i = gap 1 · (1 − (i−1)/16). Chirps are found by their sizes (5, 5, 8,
/// 8, then 16) in sequence order. Tolerance 20 ns: the step is truncated to whole
/// nanoseconds (≤ 1 ns per step, 14 steps) and the pacing rate's rounding adds < 1 ns; the
/// simulated sender leaves exactly at its pacing time, so nothing else moves a gap.
#[test]
fn chirping_gaps_follow_the_chirp_schedule() {
    let r = run(&chirp_path(chirping(), 10_000, 10_000_000));
    let sends = new_sends(&r.flows[0].trace);
    let at = |seq: u64| sends[usize::try_from(seq).unwrap()].1;
    let mut begin = 0u64;
    for k in 0..40u64 {
        let n = match k {
            0 | 1 => 5,
            2 | 3 => 8,
            _ => 16,
        };
        let gaps: Vec<f64> = (begin + 1..begin + n).map(|s| at(s) - at(s - 1)).collect();
        if k < 2 {
            for (i, want) in [400e-6, 320e-6, 240e-6, 160e-6].iter().enumerate() {
                assert!(
                    (gaps[i] - want).abs() < 20e-9,
                    "chirp {k} gap {i}: {gaps:?}"
                );
            }
        }
        if n == 16 {
            for (i, g) in gaps.iter().enumerate() {
                let want = gaps[0] * (1.0 - u64_to_f64(u64::try_from(i).unwrap()) / 16.0);
                assert!((g - want).abs() < 20e-9, "chirp {k} gap {i}: {g} vs {want}");
            }
        }
        // The guard before the next chirp is at least the chirp's average gap g = gap 1 / G.
        let guard = at(begin + n) - at(begin + n - 1);
        assert!(guard >= gaps[0] / 2.0 - 20e-9, "chirp {k} guard {guard}");
        begin += n;
    }
}

/// The capacity estimate (`analyze_chirp`, `update_gap_avg`): on an empty path the first
/// packet that queues behind its predecessor is the first whose gap is below the service time
/// τ, so a chirp's estimate is the gap s[l] just before, τ ≤ s[l] < τ + step with step = g/8
/// (G = 2, N = 16); the EWMA leaves 2^−k of the initial error after k chirps, negligible after
/// the ~100 chirps before the exit. So the exit pacing rate mss/g lies in
/// [mss/(1.125·τ), mss/τ] (tolerance 1 % on each side for the EWMA's remainder and integer
/// nanoseconds). Rounds: M = 2 chirps in rounds 0–2, then doubling (`start_new_round`); the
/// chirps of 16 packets at g ≈ τ last ≈ 16·τ = 1.9 ms, so the first round whose M chirps do not
/// fit in the RTT is M = 64 (100 ms / 64 < 1.9 ms), round 7, and chirping ends when round 8
/// starts, 8 RTTs after the connection opened; the transition then paces at the estimate for
/// min_rtt/g ACKs, one more RTT, and the host takes over ≈ 9 RTTs after the open (window
/// [8.5, 10] RTTs for the serialisations that stretch each round). Standard slow start
/// reaches the BDP (833) after ⌈log₂(833/10)⌉ = 7 rounds.
#[test]
fn chirping_estimates_the_capacity_in_eight_rounds() {
    let rtt = 0.1;
    let r = run(&chirp_path(chirping(), 10_000, 10_000_000));
    let tr = &r.flows[0].trace;
    let open = tr.iter().find(|p| p.event == "xmit").unwrap().t_s;
    let last = tr.iter().rfind(|p| p.cc_state == "chirping").unwrap();
    let rate = u64_to_f64(last.sk_pacing_rate.unwrap());
    let exit = tr.iter().find(|p| p.cc_state == "cong_avoid").unwrap();
    let (lo, hi) = (u64_to_f64(MSS) / (1.125 * TAU_S), u64_to_f64(MSS) / TAU_S);
    eprintln!(
        "estimate {:.3} Mbit/s of payload (theory {:.3}..{:.3}); exit at {:.4} s, {:.2} RTTs after the open, cwnd {}",
        rate * 8e-6,
        lo * 8e-6,
        hi * 8e-6,
        exit.t_s,
        (exit.t_s - open) / rtt,
        exit.cwnd
    );
    assert!(rate >= 0.99 * lo && rate <= 1.01 * hi, "estimate {rate}");
    let rounds = (exit.t_s - open) / rtt;
    assert!(
        (8.5..10.0).contains(&rounds),
        "hand-over after {rounds} RTTs"
    );
    assert_eq!(r.flows[0].summary.retransmits, 0);
}

/// Peak queueing delay of the start-up on a deep buffer. Slow start (RFC 5681, NewReno)
/// doubles its window each RTT: the last window below the BDP (833) is W = 640, the next is 2W
/// = 1280, of which 2W − BDP = 447 packets must queue: a peak of at least 447·τ = 53.6 ms
/// (the transfer continues doubling after that, so more). Paced Chirping's chirps sweep
/// through the capacity with at most one chirp queued at a time and the exit paces below C:
/// the peak is below one chirp of N = 16 packets, 16·τ = 1.92 ms (the tail of a sized
/// transfer, fewer than N segments, leaves at once: also < N packets).
#[test]
fn chirping_peak_queue_is_a_chirp_where_slow_start_overshoots_a_bdp() {
    for size in [1_000_000u64, 10_000_000] {
        let c = run(&chirp_path(chirping(), 10_000, size));
        let s = run(&chirp_path(
            CcSpec::default_for("newreno").unwrap(),
            10_000,
            size,
        ));
        let qc = c.queues[0].summary.delay_max_ms.unwrap() / 1e3;
        let qs = s.queues[0].summary.delay_max_ms.unwrap() / 1e3;
        eprintln!(
            "{size} B: peak queue chirping {:.3} ms ({} packets), slow start {:.1} ms ({} packets)",
            qc * 1e3,
            c.queues[0].summary.max_backlog_packets,
            qs * 1e3,
            s.queues[0].summary.max_backlog_packets
        );
        assert!(qc <= 16.0 * TAU_S, "chirping peak {qc}");
        if size == 10_000_000 {
            assert!(qs >= 447.0 * TAU_S, "slow-start peak {qs}");
        }
        assert!(qs >= 10.0 * qc, "{qs} vs {qc}");
    }
}

/// A 1 MB and a 10 MB transfer on the high-BDP path with a buffer of 100 packets (0.12 BDP).
/// Slow start's overshoot (2W − BDP = 447 packets > 100) drops packets and NewReno then
/// halves its window and grows by one segment per RTT; Paced Chirping never queues more than a
/// chirp (16 < 100), so it loses nothing and hands over at its estimate (≥ 0.89 C). So it
/// completes in fewer round trips. (On a deep buffer slow start loses nothing and is 4–7 %
/// faster here: it keeps doubling past the BDP while chirping spends its rounds probing; the
/// price is the queue of the previous test.)
#[test]
fn chirping_completes_in_fewer_rounds_than_slow_start_on_a_shallow_buffer() {
    let rtt = 0.1;
    for size in [1_000_000u64, 10_000_000] {
        let c = run(&chirp_path(chirping(), 100, size));
        let s = run(&chirp_path(
            CcSpec::default_for("newreno").unwrap(),
            100,
            size,
        ));
        let (fc, fs) = (
            c.flows[0].summary.fct_s.unwrap(),
            s.flows[0].summary.fct_s.unwrap(),
        );
        eprintln!(
            "{size} B: FCT chirping {:.2} RTT ({} retransmits), slow start {:.2} RTT ({} retransmits)",
            fc / rtt,
            c.flows[0].summary.retransmits,
            fs / rtt,
            s.flows[0].summary.retransmits
        );
        assert_eq!(c.flows[0].summary.retransmits, 0);
        assert!(s.flows[0].summary.retransmits > 0);
        assert!(fc < fs, "{size}: chirping {fc} vs slow start {fs}");
    }
}
