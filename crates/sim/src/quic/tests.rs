//! Scripted-trace tests of the QUIC sender: one test per RFC 9002 loss-detection rule, the
//! congestion responses, and delivery of every byte through a small lossy, reordering network.

use cclab_cc::{CaState, CcSpec, Dur, Time};
use proptest::prelude::*;

use super::{AckFrame, PING, Receiver, Sender, Sent, SeqSet};
use crate::config::{FlowConfig, NodeId, QuicConfig};
use crate::packet::Ecn;

fn ms(n: u64) -> Time {
    Time::ZERO + Dur::from_millis(n)
}

fn flow(cc: &str, iw: u32, size: Option<u64>) -> FlowConfig {
    let mut f = FlowConfig::bulk("q", NodeId(0), NodeId(1), CcSpec::default_for(cc).unwrap());
    f.initial_window = iw;
    f.size = size;
    f
}

fn sender_with(cc: &str, iw: u32, q: &QuicConfig) -> (Sender, Vec<Sent>) {
    let mut s = Sender::new(&flow(cc, iw, None), q, 1);
    let mut out = Vec::new();
    s.start(Time::ZERO, &mut out);
    (s, out)
}

fn sender(iw: u32) -> (Sender, Vec<Sent>) {
    sender_with("reno", iw, &QuicConfig::default())
}

/// An ACK frame for the packet numbers `pns`.
fn ack(pns: &[u64], delay_us: u32, ce: u16) -> AckFrame {
    let mut s = SeqSet::default();
    for &p in pns {
        s.insert(p);
    }
    AckFrame::from_ranges(&s, delay_us, ce)
}

/// The initial window goes out at once, one chunk per packet, numbered from 0.
#[test]
fn the_initial_window_goes_out_at_start() {
    let (s, out) = sender(10);
    assert_eq!(out.len(), 10);
    assert!(
        out.iter()
            .enumerate()
            .all(|(i, p)| p.pn == i as u64 && p.chunk == i as u64)
    );
    assert_eq!(out[0].wire_bytes, 1280);
    assert_eq!(s.in_flight(), 10);
}

/// RFC 9002 §6.1.1: a packet is lost once a packet 3 numbers above it is acknowledged, not
/// before; its data goes out again in a new packet number (RFC 9000 §13.3).
#[test]
fn packet_threshold_declares_loss_three_packets_later() {
    let (mut s, _) = sender(10);
    let mut out = Vec::new();
    s.on_ack(ms(100), &ack(&[1, 2], 0, 0), &mut out);
    assert_eq!(s.counters.lost, 0, "largest 2 < 0 + 3");
    out.clear();
    s.on_ack(ms(100), &ack(&[1, 2, 3], 0, 0), &mut out);
    assert_eq!(s.counters.lost, 1, "largest 3 ≥ 0 + 3");
    // Reno halved the window (12 after slow start) to 6 with 10 packets in flight: nothing
    // goes out yet. Once the window has room the retransmission comes first, with a fresh
    // packet number.
    assert!(out.is_empty());
    assert_eq!(s.cwnd_state().cwnd, 6);
    s.on_ack(
        ms(101),
        &ack(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 0, 0),
        &mut out,
    );
    assert_eq!(out[0].chunk, 0);
    let retx: Vec<_> = out.iter().filter(|p| p.chunk == 0).collect();
    assert_eq!(retx.len(), 1);
    assert!(retx[0].pn >= 10);
    assert_eq!(s.counters.retransmits, 1);
}

/// RFC 9002 §6.1.2: a packet below the largest acknowledged but within the packet threshold
/// is lost 9/8·max(srtt, latest_rtt) after it was sent; the loss timer fires then.
#[test]
fn time_threshold_declares_loss_after_nine_eighths_rtt() {
    let (mut s, _) = sender(10);
    let mut out = Vec::new();
    // Packets 0..10 sent at 0; packet 1 acknowledged at 80 ms: srtt = latest = 80 ms.
    s.on_ack(ms(80), &ack(&[1], 0, 0), &mut out);
    assert_eq!(s.counters.lost, 0);
    // 9/8 · 80 ms = 90 ms after packet 0 was sent.
    assert_eq!(s.next_wakeup(), Some(ms(90)));
    s.on_wake(Time(ms(90).0 - 1), &mut out);
    assert_eq!(s.counters.lost, 0, "not before the threshold");
    s.on_wake(ms(90), &mut out);
    assert_eq!(s.counters.lost, 1);
}

/// RFC 9002 §6.2: without acknowledgements the PTO fires srtt + max(4·rttvar, 1 ms) +
/// max_ack_delay after the last ack-eliciting packet, sends two probes without touching the
/// window, and doubles for each consecutive PTO; an acknowledgement resets the backoff.
#[test]
fn pto_fires_sends_two_probes_and_backs_off() {
    let (mut s, _) = sender(4);
    let mut out = Vec::new();
    s.on_ack(ms(50), &ack(&[0], 0, 0), &mut out);
    // srtt 50, rttvar 25: PTO period 50 + 100 + 25 = 175 ms from the last packet sent (50 ms,
    // the two packets the ACK let out).
    let last = ms(50);
    assert_eq!(s.next_wakeup(), Some(last + Dur::from_millis(175)));
    let cwnd = s.cwnd_state().cwnd;
    out.clear();
    s.on_wake(ms(225), &mut out);
    assert_eq!(out.len(), 2, "two probes");
    assert_eq!(s.counters.ptos, 1);
    assert_eq!(s.cwnd_state().cwnd, cwnd, "a PTO changes no window (§7.5)");
    // Backoff: 2 × 175 ms after the probes.
    assert_eq!(s.next_wakeup(), Some(ms(225 + 350)));
    out.clear();
    s.on_wake(ms(575), &mut out);
    assert_eq!(s.counters.ptos, 2);
    assert_eq!(s.next_wakeup(), Some(ms(575 + 700)));
    // An ACK resets the backoff: the next PTO is one period after the last packet sent.
    let pn = out[0].pn;
    out.clear();
    s.on_ack(ms(600), &ack(&[0, pn], 0, 0), &mut out);
    let period = s.rtt.pto_base(Dur::from_millis(25));
    let last_sent = if out.is_empty() { ms(575) } else { ms(600) };
    assert_eq!(
        s.next_wakeup().unwrap(),
        (last_sent + period).max(s.next_wakeup().unwrap())
    );
    assert!(s.next_wakeup().unwrap() <= last_sent + period);
}

/// RFC 9002 §7.6: packets lost over more than 3 PTO periods with nothing acknowledged between
/// them (and sent after the first RTT sample) collapse the window to 2 packets.
#[test]
fn persistent_congestion_collapses_the_window() {
    let (mut s, _) = sender(4);
    let mut out = Vec::new();
    // RTT sample at 50 ms: PTO period 175 ms, persistent-congestion span 525 ms.
    s.on_ack(ms(50), &ack(&[0], 0, 0), &mut out);
    let mut pns: Vec<u64> = out.iter().map(|p| p.pn).collect();
    // Nothing acknowledged while PTOs fire: probes at 225, 575, 1275, 2675 ms.
    let mut t = 0;
    for _ in 0..4 {
        out.clear();
        let w = s.next_wakeup().unwrap();
        t = w.0;
        s.on_wake(w, &mut out);
        pns.extend(out.iter().map(|p| p.pn));
    }
    assert_eq!(s.counters.ptos, 4);
    // The last probe is acknowledged 50 ms later: everything sent up to 1275 ms is lost, the
    // packets sent after the first sample (at 50 ms) spanning 225 .. 1275 ms, more than 3 PTO
    // periods (3 × (50 + 4 · 18.75 + 25) ms = 450 ms after the new sample).
    let last = *pns.last().unwrap();
    out.clear();
    s.on_ack(
        Time(t) + Dur::from_millis(50),
        &ack(&[0, last], 0, 0),
        &mut out,
    );
    assert!(s.counters.lost >= 4, "{:?} {pns:?}", s.counters);
    assert_eq!(
        s.counters.persistent_congestions, 1,
        "{:?} {pns:?}",
        s.counters
    );
    assert_eq!(s.cwnd_state().cwnd, 2, "kMinimumWindow");
    assert_eq!(s.ca_state(), CaState::Loss);
}

/// Lost packets spanning less than the persistent-congestion duration only halve (Reno).
#[test]
fn short_loss_bursts_are_not_persistent_congestion() {
    let (mut s, _) = sender(10);
    let mut out = Vec::new();
    s.on_ack(ms(50), &ack(&[0], 0, 0), &mut out);
    s.on_ack(ms(60), &ack(&[0, 5, 6, 7, 8, 9], 0, 0), &mut out);
    assert_eq!(s.counters.lost, 4);
    assert_eq!(s.counters.persistent_congestions, 0);
    assert_eq!(s.ca_state(), CaState::Recovery);
}

/// RFC 9002 §7.3.2: losses of packets sent before the episode began do not reduce again; a
/// loss of a packet sent after it starts a new episode.
#[test]
fn one_reduction_per_recovery_episode() {
    let (mut s, _) = sender(20);
    let mut out = Vec::new();
    // Packets 0 and 4 lost, detected by two different ACKs.
    s.on_ack(ms(50), &ack(&[1, 2, 3], 0, 0), &mut out);
    assert_eq!(s.counters.recoveries, 1);
    let cwnd = s.cwnd_state().cwnd;
    assert_eq!(cwnd, 10, "Reno halves 20");
    s.on_ack(ms(51), &ack(&[1, 2, 3, 5, 6, 7], 0, 0), &mut out);
    assert_eq!(s.counters.lost, 2);
    assert_eq!(
        s.counters.recoveries, 1,
        "packet 4 was sent before the episode"
    );
    assert_eq!(s.cwnd_state().cwnd, cwnd);
    // The window opens as more is acknowledged (no growth in recovery: still 10).
    let acked: Vec<u64> = (1..14).filter(|&p| p != 4).collect();
    s.on_ack(ms(52), &ack(&acked, 0, 0), &mut out);
    assert_eq!(s.cwnd_state().cwnd, cwnd);
    assert_eq!(s.counters.recoveries, 1);
    // A packet sent after the episode began is acknowledged: recovery ends.
    let after = out
        .iter()
        .find(|p| p.chunk != 0 && p.chunk != 4)
        .unwrap()
        .pn;
    let mut acked: Vec<u64> = (1..20).filter(|&p| p != 4).collect();
    acked.push(after);
    s.on_ack(ms(100), &ack(&acked, 0, 0), &mut out);
    assert_eq!(s.ca_state(), CaState::Open);
    // Now a loss of a packet sent after the episode began reduces again.
    let later: Vec<u64> = out.iter().map(|p| p.pn).filter(|&p| p > after).collect();
    let mut acked2 = acked.clone();
    acked2.extend(&later[1..4]);
    s.on_ack(ms(150), &ack(&acked2, 0, 0), &mut out);
    assert_eq!(s.counters.recoveries, 2);
}

/// RFC 9002 §5.3 through the sender: the reported ACK Delay is subtracted from the sample
/// (capped at max_ack_delay) once a minimum exists, and the raw sample feeds min_rtt.
#[test]
fn ack_delay_is_used_in_rtt_estimation() {
    let (mut s, _) = sender(10);
    let mut out = Vec::new();
    s.on_ack(ms(40), &ack(&[0], 0, 0), &mut out);
    assert_eq!(s.rtt.smoothed, Dur::from_millis(40));
    // Packet 1 (sent at 0) acknowledged at 70 ms after a reported 20 ms delay: adjusted 50.
    s.on_ack(ms(70), &ack(&[0, 1], 20_000, 0), &mut out);
    assert_eq!(s.rtt.latest, Dur::from_millis(70));
    assert_eq!(s.rtt.smoothed, Dur((7 * 40_000_000 + 50_000_000) / 8));
    assert_eq!(s.rtt.min, Some(Dur::from_millis(40)));
    // A 100 ms delay is capped at max_ack_delay (25 ms): packet 2 at 100 ms → adjusted 75.
    let before = s.rtt.smoothed;
    s.on_ack(ms(100), &ack(&[0, 1, 2], 100_000, 0), &mut out);
    assert_eq!(s.rtt.smoothed, Dur((7 * before.0 + 75_000_000) / 8));
}

/// The clock granularity: with 1 ms, RTT samples and deadlines are whole milliseconds (the
/// sender sees the times it is given rounded down, its deadlines rounded up).
#[test]
fn a_millisecond_clock_quantises_samples_and_timers() {
    let q = QuicConfig {
        clock_granularity: Dur::from_millis(1),
        ..QuicConfig::default()
    };
    let mut s = Sender::new(&flow("reno", 10, None), &q, 1);
    let mut out = Vec::new();
    s.start(Time(300_000), &mut out); // 0.3 ms: seen as 0
    s.on_ack(Time(10_700_000), &ack(&[1], 0, 0), &mut out); // 10.7 ms: seen as 10
    assert_eq!(s.rtt.latest, Dur::from_millis(10));
    let w = s.next_wakeup().unwrap();
    assert_eq!(w.0 % 1_000_000, 0, "deadline {w:?} on the millisecond grid");
    // Loss delay 9/8 · 10 ms = 11.25 ms after packet 0 (sent at 0): rounded up to 12 ms.
    assert_eq!(w, ms(12));
}

/// RFC 9002 §7.1 / RFC 9000 §13.4.2: an increase of the echoed CE count is a congestion event
/// (one `ssthresh` with `ce_reduction`, state CWR); a further increase within the episode
/// does not reduce again.
#[test]
fn ce_count_increase_reduces_once_per_episode() {
    let mut f = flow("reno", 20, None);
    f.ecn = cclab_cc::EcnMode::Classic;
    let mut s = Sender::new(&f, &QuicConfig::default(), 1);
    let mut out = Vec::new();
    s.start(Time::ZERO, &mut out);
    s.on_ack(ms(50), &ack(&[0, 1], 0, 1), &mut out);
    assert_eq!(s.counters.ecn_reductions, 1);
    assert_eq!(s.ca_state(), CaState::Cwr);
    assert_eq!(s.cwnd_state().cwnd, 10);
    s.on_ack(ms(51), &ack(&[0, 1, 2, 3], 0, 3), &mut out);
    assert_eq!(s.counters.ecn_reductions, 1, "same episode");
    assert_eq!(s.counters.ce_echoed, 3);
    assert_eq!(s.delivered_ce(), 3);
}

/// A tiny network for end-to-end checks: a fixed one-way delay each way, data packets dropped
/// or delayed extra by a script, ACKs delivered intact.
fn run_network(size: u64, drop: &[bool], extra_ms: &[u8], cc: &str) -> (Receiver, Sender, Time) {
    let q = QuicConfig::default();
    let mut s = Sender::new(&flow(cc, 10, Some(size)), &q, 1);
    let mut r = Receiver::new(&q);
    // (arrival time, sequence, to_receiver, pn, chunk, ack)
    let mut wire: std::collections::BTreeMap<(Time, u64), Msg> = std::collections::BTreeMap::new();
    #[derive(Clone, Copy)]
    enum Msg {
        Data(u64, u64),
        Ack(AckFrame),
    }
    let owd = Dur::from_millis(10);
    let mut seq = 0u64;
    let mut out = Vec::new();
    let mut now = Time::ZERO;
    s.start(now, &mut out);
    let mut sent_count = 0usize;
    let total = s.total_chunks().unwrap();
    for _ in 0..1_000_000 {
        for p in out.drain(..) {
            let i = sent_count % drop.len();
            sent_count += 1;
            if drop[i] {
                continue;
            }
            let extra = Dur::from_millis(u64::from(extra_ms[i % extra_ms.len()]));
            wire.insert((now + owd + extra, seq), Msg::Data(p.pn, p.chunk));
            seq += 1;
        }
        if r.chunks_delivered >= total {
            return (r, s, now);
        }
        // Next event: a packet arrival, the sender's timer or the receiver's.
        let next_pkt = wire.keys().next().map(|k| k.0);
        let cands = [next_pkt, s.next_wakeup(), r.ack_deadline()];
        let Some(t) = cands.iter().flatten().min().copied() else {
            panic!(
                "stalled at {now:?} with {} of {total} chunks",
                r.chunks_delivered
            );
        };
        now = t.max(now);
        if next_pkt == Some(t) {
            let (k, m) = wire.pop_first().unwrap();
            debug_assert_eq!(k.0, t);
            match m {
                Msg::Data(pn, chunk) => {
                    if let Some(a) = r.on_packet(now, pn, chunk, Ecn::NotEct) {
                        wire.insert((now + owd, seq), Msg::Ack(a));
                        seq += 1;
                    }
                }
                Msg::Ack(a) => s.on_ack(now, &a, &mut out),
            }
        } else if s.next_wakeup() == Some(t) {
            s.on_wake(now, &mut out);
        } else if let Some(a) = r.on_timer(now) {
            wire.insert((now + owd, seq), Msg::Ack(a));
            seq += 1;
        }
    }
    panic!("did not finish");
}

/// Without loss a sized transfer completes, every chunk once, no loss declared.
#[test]
fn a_clean_transfer_completes_without_loss() {
    let (r, s, _) = run_network(1_000_000, &[false], &[0], "cubic");
    assert_eq!(r.chunks_delivered, s.total_chunks().unwrap());
    assert_eq!(s.counters.lost, 0);
    assert_eq!(r.dup_chunks, 0);
    assert!(s.total_chunks().unwrap() * 1252 >= 1_000_000);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    /// Every byte arrives, in order, whatever packets are dropped (up to 30 %) or delayed
    /// (reordered by up to 30 ms against a 20 ms RTT), for Reno, CUBIC and BBR.
    #[test]
    fn every_byte_is_delivered_in_order(
        drop in prop::collection::vec(prop::bool::weighted(0.3), 1..64),
        extra in prop::collection::vec(0u8..30, 1..64),
        size in 1u64..400_000,
        cc in prop::sample::select(vec!["reno", "cubic", "bbr1"]),
    ) {
        let mut drop = drop;
        // At least one transmission in each cycle gets through.
        drop[0] = false;
        let (r, s, _) = run_network(size, &drop, &extra, cc);
        prop_assert_eq!(r.chunks_delivered, s.total_chunks().unwrap());
        prop_assert_eq!(s.stream_bytes(r.chunks_delivered), size);
    }
}

/// A PING probe carries no chunk and is acknowledged like any packet.
#[test]
fn a_probe_with_nothing_to_send_is_a_ping() {
    let mut s = Sender::new(&flow("reno", 10, Some(1000)), &QuicConfig::default(), 1);
    let mut out = Vec::new();
    s.start(Time::ZERO, &mut out);
    assert_eq!(out.len(), 1);
    out.clear();
    // Chunk 0 acknowledged through... nothing: the PTO re-sends the chunk (still unacknowledged).
    let w = s.next_wakeup().unwrap();
    s.on_wake(w, &mut out);
    assert!(out.iter().all(|p| p.chunk == 0));
    // Once acknowledged, a further probe has no data: a PING.
    let pn = out[0].pn;
    let mut out2 = Vec::new();
    s.on_ack(w + Dur::from_millis(1), &ack(&[pn], 0, 0), &mut out2);
    let w2 = s.next_wakeup().unwrap();
    s.on_wake(w2, &mut out2);
    assert!(out2.iter().all(|p| p.chunk == PING));
}

/// quicly's legacy CUBIC grows its window on ACKs that arrive while the sender is not
/// cwnd-limited (h2o/quicly `lib/cc-cubic.c` `cubic_on_acked` ignores `cc_limited`), so the
/// transport calls it anyway; Linux's CUBIC, quicly's Reno (`reno_on_acked` respects
/// `cc_limited`) and the pico engine's CUBIC (`pico_on_acked` returns in slow start) keep
/// their window. A sized transfer of 4 packets under a window of 10 is never cwnd-limited.
#[test]
fn only_legacy_quicly_cubic_grows_when_not_cwnd_limited() {
    let legacy = CcSpec::Quicly(cclab_cc::QuiclyConfig {
        engine: cclab_cc::CubicEngine::Legacy,
        ..cclab_cc::QuiclyConfig::new(cclab_cc::QuiclyKind::Cubic)
    });
    let named = |n: &str| CcSpec::default_for(n).unwrap();
    let cases = [
        (legacy, 14),
        (named("quicly_cubic"), 10),
        (named("cubic"), 10),
        (named("quicly_reno"), 10),
    ];
    for (spec, cwnd) in cases {
        let q = QuicConfig::default();
        let mut f = flow("reno", 10, Some(4 * 1252));
        f.cc = spec.clone();
        let mut s = Sender::new(&f, &q, 1);
        let mut out = Vec::new();
        s.start(Time::ZERO, &mut out);
        assert_eq!(out.len(), 4);
        s.on_ack(ms(40), &ack(&[0, 1, 2, 3], 0, 0), &mut out);
        assert_eq!(s.cwnd_state().cwnd, cwnd, "{spec:?}");
    }
}
