//! Careful Resume (RFC 9959, draft-ietf-tsvwg-careful-resume-24) end to end: the jump in the
//! second round paced over one RTT, the rounds a 1 MB transfer takes against slow start's, the
//! resume abandoned when the RTT does not confirm the path, and Safe Retreat after a loss in
//! the Unvalidated Phase.
//!
//! Paths are `Dumbbell`s with a deep drop-tail buffer; packets are 1448-byte payloads in
//! 1500-byte IP packets; the connections open with a handshake (Careful Resume's first RTT
//! sample) and TSO is off, so every skb is one segment and pacing shows per packet. Every test
//! states its tolerance and why.

#![warn(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss
)]

mod common;
use cclab_cc::num::u64_to_f64;
use cclab_cc::{CarefulResumeConfig, CcSpec, Dur, SlowStartKind};
use cclab_sim::topology::Dumbbell;
use cclab_sim::{FlowId, LossConfig, QueueLimit, Results, ScriptedDrop, Simulation, TracePoint};
use common::new_sends;

const MSS: u64 = 1448;
const RTT: Dur = Dur::from_millis(40);
/// 1 Gbit/s: the 40 ms path holds 3 333 packets, so neither the jump nor slow start's rounds
/// queue, and each round lasts one RTT.
const RATE: u64 = 1_000_000_000;
/// The transfer: 1 MB, ⌈10⁶ / 1448⌉ = 691 segments.
const SIZE: u64 = 1_000_000;
const IW: u64 = 10;

fn run(d: &Dumbbell) -> Results {
    Simulation::new(d.build()).expect("valid config").run()
}

fn newreno(ss: SlowStartKind) -> CcSpec {
    CcSpec::NewReno {
        slow_start: ss,
        rules: cclab_cc::RenoRules::LINUX,
    }
}

fn resume(saved_cwnd: u32, saved_rtt: Dur) -> CcSpec {
    newreno(SlowStartKind::CarefulResume(CarefulResumeConfig::saved(
        saved_cwnd, saved_rtt,
    )))
}

/// The 1 Gbit/s, 40 ms path with one traced 1 MB flow after a handshake.
fn path(cc: CcSpec) -> Dumbbell {
    let mut d = Dumbbell::new(RATE, Dur(RTT.0 / 2), QueueLimit::Packets(100_000));
    d.duration = Dur::from_secs(5);
    d.sender_host.tso.enabled = false;
    let f = d.add_flow(cc, Dur::ZERO);
    f.size = Some(SIZE);
    f.handshake = true;
    f.trace = true;
    f.trace_tx = true;
    d
}

/// When the first data segment left (the handshake's round trip before it).
fn data_start(tr: &[TracePoint]) -> f64 {
    tr.iter()
        .find(|p| p.event == "xmit")
        .expect("data sent")
        .t_s
}

/// Rounds slow start needs for `f` segments from `w` segments in its first round, the window
/// doubling per round: the least n with w·(2ⁿ − 1) ≥ f, i.e. ⌈log₂(f/w + 1)⌉.
fn rounds(f: u64, w: u64) -> u32 {
    let mut n = 0;
    while w * ((1 << n) - 1) < f {
        n += 1;
    }
    n
}

/// A 1 MB transfer with saved state matching the path (saved_rtt = the path's 40 ms,
/// saved_cwnd = 690 segments, below its 3 333-packet BDP): the IW is acknowledged one RTT after
/// the first segment, and the window jumps there, in the second round, to jump_cwnd =
/// saved_cwnd/2 = 345 (§3.3); the unvalidated segments leave paced at one per RTT/345 =
/// 116 µs (§4.3.2: ITT = current RTT · MPS / jump_cwnd), all of them (J less the flight at the
/// jump) within one RTT.
///
/// Rounds (round k's segments leave in [t₀ + (k−1)·RTT, t₀ + k·RTT), t₀ the first segment):
/// round 1 is the IW, round 2 the jump window J = 345, and from round 3 on the window doubles
/// (Validating and then Normal run slow start, §3.4, §3.7), so the transfer needs 1 + ⌈log₂((F
/// − IW)/J + 1)⌉ = 3 rounds for F = 691; standard slow start needs ⌈log₂(F/IW + 1)⌉ = 7. The
/// last segment, sent in round n, arrives RTT/2 plus its serialisations later, so FCT − t₀
/// lies in [(n − ½)·RTT, (n + ½)·RTT + 1 ms] (1 ms: the serialisations at the NIC and the
/// bottleneck and the pacing of a round's head, a few tens of µs; FCT is counted from the
/// flow's start, before the handshake, hence the t₀).
#[test]
fn the_jump_comes_in_the_second_round_paced_and_saves_four_rounds_of_a_1_mb_transfer() {
    let rtt = RTT.as_secs_f64();
    let segs = SIZE.div_ceil(MSS);
    let r = run(&path(resume(690, RTT)));
    let f = &r.flows[0];
    assert!(f.summary.complete);
    assert_eq!(f.summary.retransmits, 0);
    let tr = &f.trace;
    let t0 = data_start(tr);
    let jump = tr.iter().find(|p| p.cwnd == 345).expect("a jump to 345");
    eprintln!(
        "data from {t0:.5} s; jump at {:.5} s (snd_una {}, snd_nxt {}, in flight {})",
        jump.t_s, jump.snd_una, jump.snd_nxt, jump.in_flight
    );
    assert!(
        (t0 + rtt..t0 + 2.0 * rtt).contains(&jump.t_s),
        "the jump falls in round 2"
    );
    assert!(
        tr.iter()
            .take_while(|p| p.t_s < jump.t_s)
            .all(|p| p.cwnd < 345)
    );
    assert_eq!(jump.cc_state, "cr_unvalidated");
    // The unvalidated segments: from the first sent after the jump until the flight is full.
    let sends = new_sends(tr);
    let unval: Vec<&(u64, f64)> = sends
        .iter()
        .filter(|(_, t)| *t >= jump.t_s && *t < jump.t_s + rtt)
        .collect();
    let gap = rtt / 345.0;
    let gaps: Vec<f64> = unval.windows(2).map(|w| w[1].1 - w[0].1).collect();
    // The first segment leaves with the ACK that jumped and the second one pacing interval
    // after the EDT, less the lateness credit (`tcp_update_skb_after_send`): skip that gap.
    let paced = gaps[1..]
        .iter()
        .take_while(|g| (**g - gap).abs() < gap * 0.01)
        .count();
    eprintln!(
        "{} segments within one RTT of the jump, {} gaps after the first within 1 % of {:.1} µs",
        unval.len(),
        paced,
        gap * 1e6
    );
    // The jump fills cwnd: J − (flight at the jump) segments, every gap one RTT/J (1 %: the
    // current RTT the pacing uses is the base RTT plus the serialisations of one segment and
    // its ACK, 0.12 ms of 40). `snd_nxt` of the row already counts the first unvalidated
    // segment.
    let to_send = 345 - usize::try_from(jump.snd_nxt - 1 - jump.snd_una).unwrap();
    assert!(
        paced + 2 >= to_send - 1,
        "{paced} paced gaps of {to_send} segments"
    );
    // FCT in rounds.
    let fct = f.summary.fct_s.expect("completes") - t0;
    let n_cr = 1 + rounds(segs - IW, 345);
    let n_ss = rounds(segs, IW);
    assert_eq!((n_cr, n_ss), (3, 7));
    let within = |fct: f64, n: u32| {
        let n = f64::from(n);
        ((n - 0.5) * rtt..=(n + 0.5) * rtt + 0.001).contains(&fct)
    };
    let ss = run(&path(newreno(SlowStartKind::Standard)));
    let fct_ss = ss.flows[0].summary.fct_s.expect("completes") - data_start(&ss.flows[0].trace);
    eprintln!(
        "FCT after the handshake: Careful Resume {fct:.4} s ({:.2} RTT), slow start {fct_ss:.4} s \
         ({:.2} RTT)",
        fct / rtt,
        fct_ss / rtt
    );
    assert!(within(fct, n_cr), "Careful Resume: {fct} s");
    assert!(within(fct_ss, n_ss), "slow start: {fct_ss} s");
}

/// §3.2 and §4.2.1: a saved_rtt the path does not confirm — the path's minimum RTT (40 ms) at
/// most half of it (saved 400 ms), or its current RTT more than ten times it (saved 3 ms) — ends
/// Careful Resume without touching cwnd, so the connection is standard slow start: the same
/// trace row for row and the same FCT, exactly.
#[test]
fn an_unconfirmed_rtt_abandons_the_resume_and_leaves_plain_slow_start() {
    let plain = run(&path(newreno(SlowStartKind::Standard)));
    let p = &plain.flows[0];
    for saved_rtt in [Dur::from_millis(400), Dur::from_millis(3)] {
        let r = run(&path(resume(690, saved_rtt)));
        let f = &r.flows[0];
        assert_eq!(f.summary.fct_s, p.summary.fct_s, "saved_rtt {saved_rtt:?}");
        assert_eq!(f.trace.len(), p.trace.len());
        for (a, b) in f.trace.iter().zip(&p.trace) {
            assert_eq!(
                (a.t_s, a.event, a.cwnd, a.snd_nxt, a.cc_state),
                (b.t_s, b.event, b.cwnd, b.snd_nxt, b.cc_state)
            );
        }
    }
    // Controls: with the confirming saved_rtt the same flow jumps and finishes sooner.
    let r = run(&path(resume(690, RTT)));
    assert!(r.flows[0].summary.fct_s < p.summary.fct_s);
}

/// §3.3 "Detected congestion" and §3.5: a segment sent just before the jump (segment 10, the
/// first of round 2) is lost; its loss is detected about one RTT after the jump, when the
/// segments after it are SACKed, while the sender is still in the Unvalidated Phase (the
/// receive window, 200 segments, keeps the flight below jump_cwnd = 345, so the phase does not
/// end on a full flight, §4.7). Safe Retreat sets cwnd = ⌊PipeSize/2⌋, PipeSize = the flight
/// at the jump plus every segment acknowledged or SACKed since (§3.3). PipeSize is recounted
/// here from the trace: the segments sent before the jump less those acknowledged by then,
/// plus the segments delivered since (SND.UNA's advance and the SACKed ones, SND.NXT −
/// SND.UNA − in flight − the one lost). Tolerance one segment, as the rule is stated to whole
/// segments (⌊PipeSize/2⌋ against the draft's PipeSize/2).
#[test]
fn a_loss_in_the_unvalidated_phase_retreats_to_half_the_pipesize() {
    let mut d = path(resume(690, RTT));
    d.flows[0].flow.rcv_wnd = Some(200 * MSS);
    d.loss = LossConfig::Scripted {
        drops: vec![ScriptedDrop {
            flow: FlowId(0),
            seq: 10,
            nth: 0,
        }],
    };
    let r = run(&d);
    let f = &r.flows[0];
    assert!(f.summary.complete);
    let tr = &f.trace;
    let jump = tr.iter().find(|p| p.cwnd == 345).expect("a jump");
    let rec = tr
        .iter()
        .find(|p| p.ca_state == "recovery")
        .expect("a recovery");
    let before: Vec<_> = tr.iter().take_while(|p| p.t_s < rec.t_s).collect();
    assert_eq!(
        before.last().map(|p| p.cc_state),
        Some("cr_unvalidated"),
        "the loss is detected in the Unvalidated Phase"
    );
    // The row of the jump is written after the ACK's sends, which are the first unvalidated
    // segment only (the rest is paced): the flight before it is SND.NXT − 1 − SND.UNA.
    let flight_at_jump = jump.snd_nxt - 1 - jump.snd_una;
    let sacked = rec.snd_nxt - rec.snd_una - u64::from(rec.in_flight) - 1;
    let delivered = rec.snd_una - jump.snd_una + sacked;
    let pipe = flight_at_jump + delivered;
    eprintln!(
        "jump at {:.5} s (flight {flight_at_jump}), loss detected at {:.5} s: delivered \
         {delivered}, PipeSize {pipe}, cwnd {}, ssthresh {:?}",
        jump.t_s, rec.t_s, rec.cwnd, rec.ssthresh
    );
    let want = u32::try_from(pipe / 2).unwrap();
    assert!(
        rec.cwnd.abs_diff(want) <= 1,
        "cwnd {} vs PipeSize/2 = {want}",
        rec.cwnd
    );
    assert_eq!(rec.ssthresh, Some(rec.cwnd));
    // cwnd does not grow during the retreat (§3.5 "Maintaining CWND").
    let retreat: Vec<_> = tr
        .iter()
        .skip_while(|p| p.t_s < rec.t_s)
        .take_while(|p| p.ca_state == "recovery")
        .collect();
    assert!(retreat.iter().all(|p| p.cwnd == rec.cwnd));
    assert!(u64_to_f64(f.summary.bytes_delivered) >= u64_to_f64(SIZE));
}
