//! The sender's own tests: EDT pacing, idle restart, TSQ, TSO sizing and ECN at the sender.

use super::rack::RACK_RECOVERY_THRESH;
use super::*;
use crate::config::NodeId;
use crate::packet::SackBlocks;
use cclab_cc::CcSpec;

/// Linux `tcp_update_skb_after_send`: after the first 10 data segments, each departure moves
/// the earliest departure time on by *payload* length / pacing rate (headers are not
/// counted), claiming back at most half of it from lateness. With one RTT sample of 40 ms,
/// cwnd 20 after slow start and Linux's 200 % slow-start ratio, the rate is
/// 2·1448·20/0.04 = 1,448,000 B/s, so paced segments leave exactly 1 ms apart (1.036 ms if
/// the 52 header bytes were counted); the first paced one claims half its slot back.
#[test]
fn edt_pacing_spaces_departures_by_payload_length() {
    let mut cfg = FlowConfig::bulk(
        "f",
        NodeId(0),
        NodeId(1),
        CcSpec::default_for("newreno").unwrap(),
    );
    cfg.pacing = PacingMode::On;
    let mut s = Sender::new(&cfg, 1);
    let mut out = Vec::new();
    s.start(Time::ZERO, &mut out);
    assert_eq!(out.len(), 10, "the initial window leaves unpaced");
    let t0 = Time::ZERO + Dur::from_millis(40);
    let ack = Payload::Ack {
        ack: 10,
        sack: SackBlocks::default(),
        dsack: false,
        tsecr: Time::ZERO,
        ece: false,
        ce_count: 0,
    };
    out.clear();
    s.on_ack(t0, &ack, &mut out);
    assert_eq!(s.pacing_rate(), Some(1_448_000));
    let mut departures = vec![t0; out.len()];
    for _ in 0..4 {
        let next = s
            .next_wakeup()
            .expect("paced sender waits for its departure time");
        out.clear();
        s.on_timer(next, &mut out);
        departures.extend(std::iter::repeat_n(next, out.len()));
    }
    assert_eq!(departures[0], t0);
    assert_eq!(
        departures[1] - departures[0],
        Dur::from_micros(500),
        "half claimed back"
    );
    for w in departures[1..].windows(2) {
        assert_eq!(w[1] - w[0], Dur::from_millis(1), "{departures:?}");
    }
}

/// cwnd after an idle period longer than the RTO (`tcp_cwnd_restart`): a loss-based
/// controller restarts: cwnd halves per RTO idle, not below min(IW, cwnd) (NewReno: 20 →
/// 10); a controller that owns cwnd (BBR, `cong_control`) keeps it, as Linux `tcp_slow_start_after_idle_check` returns early for it. The application
/// writes one segment every 2 s (`app_rate_bps`), so the second write finds the connection
/// idle for 1.96 s, far above the RTO.
#[test]
fn idle_restart_shrinks_cwnd_only_for_loss_based_controllers() {
    let after_idle = |cc: &str| {
        let mut cfg = FlowConfig::bulk("f", NodeId(0), NodeId(1), CcSpec::default_for(cc).unwrap());
        cfg.app_rate_bps = Some(1448 * 8 / 2);
        let mut s = Sender::new(&cfg, 1);
        let mut out = Vec::new();
        s.start(Time::ZERO, &mut out);
        assert_eq!(out.len(), 1, "one segment written so far");
        let ack = Payload::Ack {
            ack: 1,
            sack: SackBlocks::default(),
            dsack: false,
            tsecr: Time::ZERO,
            ece: false,
            ce_count: 0,
        };
        out.clear();
        s.on_ack(Time::ZERO + Dur::from_millis(40), &ack, &mut out);
        // An app-limited flow does not grow cwnd; set it above IW by hand.
        s.st.cwnd = 20;
        let before = s.cwnd_state().cwnd;
        let next = s.next_wakeup().expect("the next write wakes the sender");
        assert_eq!(next, Time::ZERO + Dur::from_secs(2));
        out.clear();
        s.on_timer(next, &mut out);
        assert_eq!(out.len(), 1, "the second write is sent");
        (before, s.cwnd_state().cwnd)
    };
    assert_eq!(after_idle("newreno"), (20, 10));
    assert_eq!(after_idle("bbr3"), (20, 20));
    assert_eq!(after_idle("bbr1"), (20, 20));
}

/// `tcp_small_queue_check` on its own. An unpaced NewReno socket (TSO off, so an skb is one
/// 1500-byte segment) with `tcp_limit_output_bytes` = 4000 and no RTT sample yet (rate
/// unlimited, so the cap rules): segments 0–2 pass (below TCP ≤ 2 · 1500 each time),
/// segment 3 finds 4500 > 4000 bytes below TCP with data outstanding and is held. The
/// completions, reported ahead of time 1 µs apart, wake the socket at the first one that
/// brings it back within 4000 (the first: 3000); it sends one segment and is held again.
#[test]
fn tsq_throttles_above_the_limit_and_wakes_at_the_freeing_completion() {
    let cfg = FlowConfig::bulk(
        "f",
        NodeId(0),
        NodeId(1),
        CcSpec::default_for("newreno").unwrap(),
    );
    let host = SocketHost {
        tsq: true,
        limit_output_bytes: 4000,
        instant_completion: false,
        ..SocketHost::bare()
    };
    let mut s = Sender::with_host(&cfg, 1, host);
    let mut out = Vec::new();
    s.start(Time::ZERO, &mut out);
    assert_eq!(out.len(), 3);
    assert!(s.tsq_throttled());
    assert_eq!(s.below_tcp(Time::ZERO), 4500);
    assert_eq!(
        s.next_wakeup().map(|t| t > Time::ZERO),
        Some(true),
        "RTO only"
    );
    let rto = s.next_wakeup();
    let notes: Vec<TxNote> = (1..=3)
        .map(|i| s.tx_completed(Time(1000 * i), 1500, Time::ZERO))
        .collect();
    assert_eq!(notes, [TxNote::Rearm, TxNote::None, TxNote::None]);
    assert_eq!(s.next_wakeup(), Some(Time(1000)));
    assert!(rto > Some(Time(1000)));
    out.clear();
    s.on_timer(Time(1000), &mut out);
    assert_eq!(out.len(), 1, "one segment, then held again");
    assert!(s.tsq_throttled());
    assert_eq!(s.below_tcp(Time(1000)), 4500);
    assert_eq!(s.below_tcp(Time(3000)), 1500);
    // A completion reported as happening now frees at once and asks for a kick.
    assert_eq!(s.tx_completed(Time(1000), 1500, Time(1000)), TxNote::Kick);
}

/// TSO: a new-data skb is min(TSO goal, `tcp_cwnd_test` quota, data left) segments, handed
/// over together, the first carrying the skb's segment count and the last its bytes; EDT
/// pacing would advance per skb. The initial window of 10 leaves as two skbs of 5 (quota
/// min(cwnd/2, cwnd − in flight)); a 3-segment transfer as one skb of 3.
#[test]
fn tso_skbs_follow_the_cwnd_quota() {
    let mut cfg = FlowConfig::bulk(
        "f",
        NodeId(0),
        NodeId(1),
        CcSpec::default_for("newreno").unwrap(),
    );
    let host = SocketHost {
        tso: TsoConfig::default(),
        ..SocketHost::bare()
    };
    let mut s = Sender::with_host(&cfg, 1, host);
    let mut out = Vec::new();
    s.start(Time::ZERO, &mut out);
    let firsts: Vec<u32> = out.iter().map(|o| o.skb_segs).collect();
    assert_eq!(firsts, [5, 0, 0, 0, 0, 5, 0, 0, 0, 0]);
    let lasts: Vec<u32> = out.iter().map(|o| o.skb_bytes).collect();
    assert_eq!(lasts, [0, 0, 0, 0, 7500, 0, 0, 0, 0, 7500]);
    assert_eq!(s.counters.skbs, 2);
    cfg.size = Some(3 * 1448 - 100);
    let mut s = Sender::with_host(&cfg, 1, host);
    out.clear();
    s.start(Time::ZERO, &mut out);
    assert_eq!(out.len(), 3);
    assert_eq!(out[0].skb_segs, 3);
    assert_eq!(out[2].skb_bytes, 3 * 1500 - 100);
}

/// Classic ECN at the sender (RFC 3168 §6.1.2, Linux `tcp_enter_cwr`): the first ECE halves
/// ssthresh through the controller and enters CWR; further ECEs in the same window do not
/// reduce again; the next new segment carries CWR and is ECT(0); CWR ends once an ACK
/// covers more than high_seq, with cwnd = ssthresh. Retransmissions would be Not-ECT.
#[test]
fn classic_ece_reduces_once_per_window_and_sends_cwr() {
    let mut cfg = FlowConfig::bulk(
        "f",
        NodeId(0),
        NodeId(1),
        CcSpec::default_for("newreno").unwrap(),
    );
    cfg.ecn = EcnMode::Classic;
    let mut s = Sender::new(&cfg, 1);
    let mut out = Vec::new();
    s.start(Time::ZERO, &mut out);
    assert_eq!(out.len(), 10);
    assert!(out.iter().all(|o| o.ecn == Ecn::Ect0));
    let ack = |n: u64, ece: bool| Payload::Ack {
        ack: n,
        sack: SackBlocks::default(),
        dsack: false,
        tsecr: Time::ZERO,
        ece,
        ce_count: 0,
    };
    let mut t = Time::ZERO + Dur::from_millis(40);
    out.clear();
    s.on_ack(t, &ack(2, true), &mut out);
    assert_eq!(s.ca_state(), CaState::Cwr);
    assert_eq!(s.st.ssthresh, 5, "NewReno: half of the flight of 10");
    assert_eq!(s.counters.ecn_reductions, 1);
    assert_eq!(
        s.delivered_ce(),
        2,
        "every segment an ECE ACK delivers counts"
    );
    let high = s.rec.high_seq();
    let cwr: Vec<bool> = out
        .iter()
        .map(|o| matches!(o.payload, Payload::Data { cwr: true, .. }))
        .collect();
    assert_eq!(cwr.iter().filter(|c| **c).count(), 1, "{cwr:?}");
    assert!(cwr[0], "CWR rides on the first new segment");
    // More ECE within the window: no new reduction.
    for n in 3..=high {
        t += Dur::from_millis(1);
        out.clear();
        s.on_ack(t, &ack(n, true), &mut out);
    }
    assert_eq!(s.counters.ecn_reductions, 1);
    assert_eq!(s.ca_state(), CaState::Cwr, "held until above high_seq");
    out.clear();
    s.on_ack(t + Dur::from_millis(1), &ack(high + 1, false), &mut out);
    assert_eq!(s.ca_state(), CaState::Open);
    assert_eq!(s.st.cwnd, s.st.ssthresh);
}

/// Accurate ECN: `delivered_ce` follows the receiver's CE counter (modulo 256), and a
/// controller that answers CE itself (TCP Prague) keeps the transport out of CWR.
#[test]
fn accurate_ecn_counts_ce_and_leaves_the_response_to_the_controller() {
    let mut cfg = FlowConfig::bulk(
        "f",
        NodeId(0),
        NodeId(1),
        CcSpec::default_for("cubic").unwrap(),
    );
    cfg.ecn = EcnMode::L4s;
    let mut s = Sender::new(&cfg, 1);
    let mut out = Vec::new();
    s.start(Time::ZERO, &mut out);
    assert!(out.iter().all(|o| o.ecn == Ecn::Ect1));
    let ack = |n: u64, ce_count: u8| Payload::Ack {
        ack: n,
        sack: SackBlocks::default(),
        dsack: false,
        tsecr: Time::ZERO,
        ece: false,
        ce_count,
    };
    out.clear();
    s.on_ack(Time(40_000_000), &ack(2, 1), &mut out);
    assert_eq!(s.delivered_ce(), 1);
    // CUBIC does not answer CE itself: the transport reduces once (CWR).
    assert_eq!(s.ca_state(), CaState::Cwr);
    out.clear();
    s.on_ack(Time(41_000_000), &ack(4, 3), &mut out);
    assert_eq!(s.delivered_ce(), 3);
    assert_eq!(s.counters.ecn_reductions, 1);

    // TCP Prague answers CE itself: the transport stays out of CWR and counts the marks.
    let cfg = FlowConfig::bulk(
        "p",
        NodeId(0),
        NodeId(1),
        CcSpec::default_for("prague").unwrap(),
    );
    let mut s = Sender::new(&cfg, 1);
    assert_eq!(s.ecn_mode(), EcnMode::L4s, "Prague requires L4S");
    out.clear();
    s.start(Time::ZERO, &mut out);
    assert!(out.iter().all(|o| o.ecn == Ecn::Ect1));
    out.clear();
    s.on_ack(Time(40_000_000), &ack(2, 2), &mut out);
    assert_eq!(s.delivered_ce(), 2);
    assert_eq!(s.ca_state(), CaState::Open);
    assert_eq!(s.counters.ecn_reductions, 0);
}

/// An ACK for `cum` with SACK blocks `sacks` (absolute segment ranges, most recent first), the
/// first of them a DSACK when `dsack`.
fn sack_ack(cum: u64, sacks: &[(u64, u64)], dsack: bool) -> Payload {
    let mut sack = SackBlocks::default();
    for &(start, end) in sacks {
        assert!(sack.push(cum, SeqRange { start, end }));
    }
    Payload::Ack {
        ack: cum,
        sack,
        dsack,
        tsecr: Time::ZERO,
        ece: false,
        ce_count: 0,
    }
}

fn ms(n: u64) -> Time {
    Time::ZERO + Dur::from_millis(n)
}

/// A NewReno sender with 10 segments out at 0 and segment 0 acknowledged at 40 ms (one RTT
/// sample of 40 ms, cwnd 11 after slow start), then SACKs for segments 2, 3 and 4 at 41, 42
/// and 43 ms while segment 1 is missing: the third SACK makes RACK's reordering window 0
/// (RFC 8985 §6.2 step 4: no reordering seen, 3 segments SACKed) and segment 1, sent 43 ms
/// ago, more than RACK's RTT before, is marked lost: fast recovery, ssthresh from NewReno,
/// and the retransmission of segment 1 goes out.
fn into_recovery(cfg: &FlowConfig) -> (Sender, u32) {
    let mut s = Sender::new(cfg, 1);
    let mut out = Vec::new();
    s.start(Time::ZERO, &mut out);
    s.on_ack(ms(40), &sack_ack(1, &[], false), &mut out);
    let prior_cwnd = s.st.cwnd;
    for (k, t) in [(3, 41), (4, 42), (5, 43)] {
        out.clear();
        s.on_ack(ms(t), &sack_ack(1, &[(2, k)], false), &mut out);
    }
    assert_eq!(s.ca_state(), CaState::Recovery);
    assert!(s.st.cwnd < prior_cwnd, "PRR reduces cwnd");
    assert!(
        out.iter().any(|o| matches!(
            o.payload,
            Payload::Data {
                seq: 1,
                tx_count: 1,
                ..
            }
        )),
        "fast retransmit of segment 1: {out:?}"
    );
    (s, prior_cwnd)
}

fn newreno() -> FlowConfig {
    FlowConfig::bulk(
        "f",
        NodeId(0),
        NodeId(1),
        CcSpec::default_for("newreno").unwrap(),
    )
}

/// A fast retransmit caused by reordering is undone by the DSACK of its retransmission
/// (RFC 2883 §4; Linux `tcp_check_dsack` counts `undo_retrans` down to 0, then
/// `tcp_try_undo_dsack` → `tcp_undo_cwnd_reduction` → the controller's `undo_cwnd`, Reno's
/// max(cwnd, prior_cwnd)): the late original fills the hole (cumulative ACK to 5), then the
/// receiver reports the retransmission as a duplicate; cwnd returns to its value before the
/// recovery and ssthresh to its value before (infinite: still in slow start), and the sender
/// leaves Recovery counting one `TCPDSACKUndo`.
#[test]
fn a_dsack_for_the_only_retransmission_undoes_the_recovery() {
    let (mut s, prior_cwnd) = into_recovery(&newreno());
    assert!(s.st.ssthresh < INFINITE_SSTHRESH);
    assert_eq!(s.rec.undo_retrans(), 1);
    let mut out = Vec::new();
    s.on_ack(ms(44), &sack_ack(5, &[], false), &mut out);
    assert_eq!(
        s.ca_state(),
        CaState::Recovery,
        "5 is below the recovery point"
    );
    assert_eq!(s.counters.dsack_undos, 0, "no DSACK yet");
    out.clear();
    s.on_ack(ms(60), &sack_ack(5, &[(1, 2)], true), &mut out);
    assert_eq!(s.rec.undo_retrans(), 0);
    assert_eq!(s.counters.spurious_retransmits, 1);
    assert_eq!(s.counters.dsack_undos, 1);
    assert_eq!(s.counters.full_undos + s.counters.loss_undos, 0);
    assert!(matches!(s.ca_state(), CaState::Open | CaState::Disorder));
    assert!(s.st.cwnd >= prior_cwnd, "{} < {prior_cwnd}", s.st.cwnd);
    assert_eq!(s.st.ssthresh, INFINITE_SSTHRESH);
    assert_eq!(s.rec.undo_marker(), None, "one undo per episode");
}

/// The same DSACK arriving after the recovery point was reached (the episode ended with
/// cwnd = ssthresh) still undoes it: Linux keeps `undo_marker` past the episode and
/// `tcp_fastretrans_alert` tries `tcp_try_undo_dsack` in Open and Disorder.
#[test]
fn a_late_dsack_undoes_a_finished_recovery() {
    let (mut s, prior_cwnd) = into_recovery(&newreno());
    let high = s.rec.high_seq();
    let mut out = Vec::new();
    s.on_ack(ms(44), &sack_ack(high, &[], false), &mut out);
    assert_eq!(s.ca_state(), CaState::Open);
    assert_eq!(
        s.counters.full_undos, 0,
        "a retransmission is unaccounted for"
    );
    assert!(s.st.cwnd < prior_cwnd);
    out.clear();
    s.on_ack(ms(60), &sack_ack(high, &[(1, 2)], true), &mut out);
    assert_eq!(s.counters.dsack_undos, 1);
    assert!(s.st.cwnd >= prior_cwnd);
}

/// A real loss is not undone: the retransmission fills the hole and no DSACK comes, so
/// `undo_retrans` stays 1 and `tcp_may_undo` is false at the recovery point; ssthresh keeps
/// its reduced value and cwnd restarts from it (`tcp_end_cwnd_reduction`). With undo off (`FlowConfig::undo`) even the DSACK of
/// the previous test changes nothing.
#[test]
fn a_real_loss_is_not_undone() {
    let (mut s, prior_cwnd) = into_recovery(&newreno());
    let high = s.rec.high_seq();
    let mut out = Vec::new();
    let ssthresh = s.st.ssthresh;
    s.on_ack(ms(85), &sack_ack(high, &[], false), &mut out);
    assert_eq!(s.ca_state(), CaState::Open);
    assert_eq!(s.st.ssthresh, ssthresh, "the reduction stands");
    // cwnd = ssthresh at the recovery point, then NewReno's growth on the same ACK.
    assert!(s.st.cwnd >= ssthresh && s.st.cwnd < prior_cwnd);
    let c = s.counters;
    assert_eq!(
        (c.full_undos, c.partial_undos, c.dsack_undos, c.loss_undos),
        (0, 0, 0, 0)
    );

    let mut cfg = newreno();
    cfg.undo = false;
    let (mut s, prior_cwnd) = into_recovery(&cfg);
    s.on_ack(ms(44), &sack_ack(5, &[], false), &mut out);
    s.on_ack(ms(60), &sack_ack(5, &[(1, 2)], true), &mut out);
    assert_eq!(s.counters.spurious_retransmits, 1);
    assert_eq!(s.counters.dsack_undos, 0);
    assert!(s.st.cwnd < prior_cwnd);
}

/// A sender with 12 segments out and cwnd 12 (segments 0 and 1 acknowledged at 40 ms), whose
/// path then stalls: the probe timeout fires (a new segment as probe, RFC 8985 §7.3), then the
/// RTO (cwnd 1, every segment marked lost, segment 2 retransmitted). Returns the sender, cwnd
/// and ssthresh before the RTO, and SND.NXT at the RTO.
fn into_loss(cfg: &FlowConfig) -> (Sender, u32, u32, u64) {
    let mut s = Sender::new(cfg, 1);
    let mut out = Vec::new();
    s.start(Time::ZERO, &mut out);
    s.on_ack(ms(40), &sack_ack(2, &[], false), &mut out);
    let before = (s.st.cwnd, s.st.ssthresh);
    while s.counters.rtos == 0 {
        let t = s.next_wakeup().expect("a timer is armed");
        out.clear();
        s.on_timer(t, &mut out);
    }
    assert_eq!(s.counters.tlps, 1);
    assert_eq!(s.ca_state(), CaState::Loss);
    assert_eq!(s.st.cwnd, 1);
    assert_eq!(out.len(), 1);
    assert!(matches!(
        out[0].payload,
        Payload::Data {
            seq: 2,
            tx_count: 1,
            ..
        }
    ));
    let nxt = s.snd_nxt();
    (s, before.0, before.1, nxt)
}

/// F-RTO detects a spurious timeout (RFC 5682 §3.1, SACK-enhanced; Linux `tcp_process_loss`).
/// Step 2.b: the first ACK after the RTO advances SND.UNA by the retransmitted segment only
/// (it may be the original's ACK): new data leaves instead of the next retransmission. Step
/// 3.b: the next ACK acknowledges segments that were never retransmitted and were sent before
/// the RTO, so the timeout was spurious: `tcp_try_undo_loss(sk, true)` restores cwnd to at
/// least its value before the RTO (Reno's `undo_cwnd`) and ssthresh to its value before,
/// counts `TCPLossUndo` and `TCPSpuriousRTOs`, and the sender is Open with nothing marked
/// lost.
#[test]
fn frto_undoes_a_spurious_timeout() {
    let (mut s, cwnd, ssthresh, nxt) = into_loss(&newreno());
    let mut out = Vec::new();
    let t = s.rto_times[0];
    s.on_ack(t + Dur::from_millis(5), &sack_ack(3, &[], false), &mut out);
    assert_eq!(s.ca_state(), CaState::Loss);
    assert!(!out.is_empty());
    for o in &out {
        assert!(
            matches!(o.payload, Payload::Data { seq, tx_count: 0, .. } if seq >= nxt),
            "step 2.b sends new data only: {out:?}"
        );
    }
    out.clear();
    s.on_ack(t + Dur::from_millis(6), &sack_ack(6, &[], false), &mut out);
    assert_eq!(s.counters.spurious_rtos, 1);
    assert_eq!(s.counters.loss_undos, 1);
    assert_eq!(s.ca_state(), CaState::Open);
    assert!(s.st.cwnd >= cwnd, "{} < {cwnd}", s.st.cwnd);
    assert_eq!(s.st.ssthresh, ssthresh);
    assert_eq!(s.lost_out, 0);
    assert_eq!(s.counters.retransmits, 1, "only the RTO's retransmission");
}

/// F-RTO with a real loss (RFC 5682 §3.1 step 3.a): after the new data of step 2.b, a
/// duplicate ACK SACKing it shows that segment 3 was lost, so F-RTO ends without undo and the
/// lost segments are retransmitted; the RTO's reduction stands.
#[test]
fn frto_keeps_the_reduction_of_a_real_timeout() {
    let (mut s, cwnd, _, nxt) = into_loss(&newreno());
    let mut out = Vec::new();
    let t = s.rto_times[0];
    s.on_ack(t + Dur::from_millis(5), &sack_ack(3, &[], false), &mut out);
    out.clear();
    s.on_ack(
        t + Dur::from_millis(40),
        &sack_ack(3, &[(nxt, nxt + 1)], false),
        &mut out,
    );
    assert!(!s.rec.frto());
    assert_eq!(s.ca_state(), CaState::Loss);
    assert!(
        out.iter().any(|o| matches!(
            o.payload,
            Payload::Data {
                seq: 3,
                tx_count: 1,
                ..
            }
        )),
        "segment 3 retransmitted: {out:?}"
    );
    assert_eq!((s.counters.spurious_rtos, s.counters.loss_undos), (0, 0));
    assert!(s.st.cwnd < cwnd);
}

/// Without F-RTO (`FlowConfig::frto` = false, Linux `tcp_frto` = 0) the first ACK after the
/// RTO retransmits the next lost segment (conventional recovery, RFC 6298 §5), and the same
/// ACKs undo nothing.
#[test]
fn without_frto_the_timeout_retransmits() {
    let mut cfg = newreno();
    cfg.frto = false;
    let (mut s, cwnd, _, _) = into_loss(&cfg);
    let mut out = Vec::new();
    let t = s.rto_times[0];
    s.on_ack(t + Dur::from_millis(5), &sack_ack(3, &[], false), &mut out);
    assert!(
        out.iter().any(|o| matches!(
            o.payload,
            Payload::Data {
                seq: 3,
                tx_count: 1,
                ..
            }
        )),
        "{out:?}"
    );
    s.on_ack(t + Dur::from_millis(6), &sack_ack(6, &[], false), &mut out);
    assert_eq!(s.counters.spurious_rtos, 0);
    assert!(s.st.cwnd < cwnd);
}

/// RACK's reordering window (RFC 8985 §6.2 step 4, Linux `tcp_rack_update_reo_wnd` and
/// `tcp_rack_reo_wnd`): min_RTT/4 per step; a DSACK (with reordering seen) widens it by one
/// step, at most once per round trip (a DSACK on an ACK whose newest delivered segment was
/// sent before the last widening is ignored); the widened window is kept for 16 recoveries
/// without DSACK (`TCP_RACK_RECOVERY_THRESH`), then returns to one step; it never exceeds
/// SRTT.
#[test]
fn rack_reordering_window_grows_per_round_trip_with_dsacks_and_is_capped_by_srtt() {
    let mut s = Sender::new(&newreno(), 1);
    let mut out = Vec::new();
    s.start(Time::ZERO, &mut out);
    s.on_ack(ms(40), &sack_ack(10, &[], false), &mut out);
    assert_eq!(s.rate.delivered(), 10);
    let (min_rtt, srtt) = (s.min_rtt().unwrap(), s.srtt().unwrap());
    assert_eq!(
        (min_rtt, srtt),
        (Dur::from_millis(40), Dur::from_millis(40))
    );
    s.reordering_seen = true;
    assert_eq!(s.reo_wnd(), Dur::from_millis(10));
    // A DSACK, then an ACK whose newest delivered segment was sent at delivered count 5.
    s.rack_dsack_seen = true;
    s.rack_update_reo_wnd(Some(5));
    assert_eq!(s.reo_wnd(), Dur::from_millis(20));
    assert_eq!(s.reo_wnd_persist, RACK_RECOVERY_THRESH);
    // Another DSACK within the same round trip (newest delivered sent before count 10, the
    // count at the widening).
    s.rack_dsack_seen = true;
    s.rack_update_reo_wnd(Some(9));
    assert_eq!(s.reo_wnd(), Dur::from_millis(20), "once per round trip");
    // One round trip later.
    s.rack_dsack_seen = true;
    s.rack_update_reo_wnd(Some(10));
    assert_eq!(s.reo_wnd(), Dur::from_millis(30));
    for _ in 0..3 {
        s.rack_dsack_seen = true;
        s.rack_update_reo_wnd(Some(10));
    }
    assert_eq!(s.reo_wnd_steps, 6);
    assert_eq!(s.reo_wnd(), srtt, "6 · 10 ms capped at SRTT = 40 ms");
    // 16 recoveries without DSACK, then the window returns to one step.
    s.reo_wnd_persist = 1;
    s.note_transition(Transition {
        recovered_without_undo: true,
        ..Transition::default()
    });
    s.rack_update_reo_wnd(Some(s.rate.delivered()));
    assert_eq!(s.reo_wnd(), Dur::from_millis(10));
}

fn ns3_newreno() -> FlowConfig {
    FlowConfig {
        tcp: TcpRules::NS3,
        undo: false,
        frto: false,
        ..newreno()
    }
}

/// The data segments' sequence numbers in `out`, in order.
pub(super) fn data_seqs(out: &[Outgoing]) -> Vec<u64> {
    out.iter()
        .filter_map(|o| match o.payload {
            Payload::Data { seq, .. } => Some(seq),
            _ => None,
        })
        .collect()
}

/// RFC 6675 §4 `IsLost` (ns-3 `TcpTxBuffer::IsLost`): one ACK SACKing three segments above
/// segments 1 and 2 makes both lost at once (each has 3 SACKed segments above it), although
/// it is a single duplicate ACK (ns-3 `DupAck` step 2: `IsLost(HighACK + 1)` enters recovery).
#[test]
fn ns3_islost_marks_every_segment_with_three_sacked_above() {
    let mut s = Sender::new(&ns3_newreno(), 1);
    let mut out = Vec::new();
    s.start(Time::ZERO, &mut out);
    s.on_ack(ms(40), &sack_ack(1, &[], false), &mut out);
    out.clear();
    s.on_ack(ms(41), &sack_ack(1, &[(3, 6)], false), &mut out);
    assert_eq!(s.ca_state(), CaState::Recovery);
    assert_eq!(s.counters.lost, 2, "segments 1 and 2");
    let sent = data_seqs(&out);
    assert!(sent.starts_with(&[1, 2]), "{sent:?}");
}

/// RFC 6675 §5 step 1 (ns-3 `DupAck`): segments SACKed one per ACK leave segment 1 unmarked
/// after two duplicate ACKs and mark it lost on the third; with only two SACKed segments above
/// it `IsLost` alone would not.
#[test]
fn ns3_third_duplicate_ack_marks_the_head_lost() {
    let mut s = Sender::new(&ns3_newreno(), 1);
    let mut out = Vec::new();
    s.start(Time::ZERO, &mut out);
    s.on_ack(ms(40), &sack_ack(1, &[], false), &mut out);
    s.on_ack(ms(41), &sack_ack(1, &[(2, 3)], false), &mut out);
    s.on_ack(ms(42), &sack_ack(1, &[(2, 4)], false), &mut out);
    assert_eq!(s.ca_state(), CaState::Disorder, "two duplicate ACKs");
    assert_eq!(s.counters.lost, 0);
    // A duplicate ACK that SACKs nothing new is not one (RFC 6675 §2).
    s.on_ack(ms(42), &sack_ack(1, &[(2, 4)], false), &mut out);
    assert_eq!(s.counters.lost, 0);
    out.clear();
    s.on_ack(ms(43), &sack_ack(1, &[(2, 5)], false), &mut out);
    assert_eq!(s.ca_state(), CaState::Recovery);
    assert_eq!(s.counters.lost, 1);
    assert_eq!(data_seqs(&out).first(), Some(&1));
}

/// A partial ACK in recovery does not by itself make the new first unacknowledged segment
/// lost (only `IsLost` does): segment 8, with two SACKed segments above it, stays in flight.
/// (Later ns-3 sources retransmit it in `TcpSocketBase::ProcessAck`; ns-3.37 as measured in
/// the reference case `reroute` retransmits 118 segments, the profile 123 without that rule and
/// 471 with it: VALIDATION.md.)
#[test]
fn ns3_partial_ack_leaves_the_new_head_to_islost() {
    let mut s = Sender::new(&ns3_newreno(), 1);
    let mut out = Vec::new();
    s.start(Time::ZERO, &mut out);
    s.on_ack(ms(40), &sack_ack(1, &[], false), &mut out);
    // Segments 1 and 8 missing: 2..8 and 9..11 SACKed (8 has 2 SACKed above it: 9, 10).
    s.on_ack(ms(41), &sack_ack(1, &[(9, 11), (2, 8)], false), &mut out);
    assert_eq!(s.ca_state(), CaState::Recovery);
    assert_eq!(s.counters.lost, 1, "only segment 1 is lost by IsLost");
    out.clear();
    // The retransmission of 1 arrives: cumulative ACK to 8, below the recovery point.
    s.on_ack(ms(81), &sack_ack(8, &[(9, 11)], false), &mut out);
    assert_eq!(s.counters.lost, 1);
    assert!(!data_seqs(&out).contains(&8), "{out:?}");
    // A third SACKed segment above it makes it lost (RFC 6675 `IsLost`).
    out.clear();
    s.on_ack(ms(82), &sack_ack(8, &[(9, 12)], false), &mut out);
    assert_eq!(s.counters.lost, 2);
    assert_eq!(data_seqs(&out).first(), Some(&8), "{out:?}");
}

/// ns-3 has no tail-loss probe: the timer armed after an ACK is the RTO (1 s floor), where
/// Linux arms a probe at 2·SRTT.
#[test]
fn ns3_arms_the_rto_where_linux_arms_a_probe() {
    let mut out = Vec::new();
    let mut linux = Sender::new(&newreno(), 1);
    linux.start(Time::ZERO, &mut out);
    linux.on_ack(ms(40), &sack_ack(1, &[], false), &mut out);
    assert_eq!(linux.timer, Some((Timer::Probe, ms(40 + 80 + 2))));
    let mut ns3 = Sender::new(&ns3_newreno(), 1);
    ns3.start(Time::ZERO, &mut out);
    ns3.on_ack(ms(40), &sack_ack(1, &[], false), &mut out);
    assert!(matches!(ns3.timer, Some((Timer::Rto, t)) if t == ms(40 + 1000)));
}

/// ns-3.37's RTT: the echo of a millisecond timestamp clock (`TcpOptionTS::NowToTsValue`), so
/// a segment sent at 0.6 ms and acknowledged at 40.3 ms gives 40.3 ms, and the controller sees
/// the smoothed RTT (`m_lastRtt = m_rtt->GetEstimate()`), as does the minimum.
#[test]
fn ns3_rtt_comes_from_the_millisecond_timestamp_echo() {
    let mut s = Sender::new(&ns3_newreno(), 1);
    let mut out = Vec::new();
    s.start(Time::ZERO, &mut out);
    let at = Time::ZERO + Dur::from_micros(40_300);
    let Payload::Ack {
        ack,
        sack,
        dsack,
        ece,
        ce_count,
        ..
    } = sack_ack(1, &[], false)
    else {
        unreachable!()
    };
    let echo = Time::ZERO + Dur::from_micros(600);
    let a = Payload::Ack {
        ack,
        sack,
        dsack,
        tsecr: echo,
        ece,
        ce_count,
    };
    s.on_ack(at, &a, &mut out);
    assert_eq!(s.rtt.srtt(), Some(Dur::from_micros(40_300)));
    assert_eq!(s.rtt.min_rtt(), Some(Dur::from_micros(40_300)));
    // A second sample of 50.3 ms: the minimum follows SRTT (41.55 ms), not the sample.
    let a2 = Payload::Ack {
        ack: 2,
        sack,
        dsack,
        tsecr: echo,
        ece,
        ce_count,
    };
    s.on_ack(at + Dur::from_millis(10), &a2, &mut out);
    assert_eq!(s.rtt.srtt(), Some(Dur::from_micros(41_550)));
    assert_eq!(s.rtt.min_rtt(), Some(Dur::from_micros(40_300)));
}

/// ns-3 restarts the retransmission timer only when an ACK acknowledges new data
/// (`TcpSocketBase::NewAck`): SACKs arriving while the first segment is missing leave the
/// deadline where the last ACK of new data put it, where Linux re-arms it on each.
#[test]
fn ns3_sacks_do_not_postpone_the_timeout() {
    let mut out = Vec::new();
    let mut ns3 = Sender::new(&ns3_newreno(), 1);
    ns3.start(Time::ZERO, &mut out);
    ns3.on_ack(ms(40), &sack_ack(1, &[], false), &mut out);
    let deadline = ns3.timer;
    ns3.on_ack(ms(50), &sack_ack(1, &[(2, 3)], false), &mut out);
    assert_eq!(ns3.timer, deadline);
    let mut linux = Sender::new(&newreno(), 1);
    linux.start(Time::ZERO, &mut out);
    linux.on_ack(ms(40), &sack_ack(1, &[], false), &mut out);
    let before = linux.timer;
    linux.on_ack(ms(50), &sack_ack(1, &[(2, 3)], false), &mut out);
    assert_ne!(linux.timer, before);
}

/// ns-3 has no TSO or TSQ (`TcpRules::host_offloads` off): on a host with TSO the ns-3 flow
/// still hands each segment below TCP on its own, where the Linux flow builds 5-segment skbs
/// (`tso_skbs_follow_the_cwnd_quota`).
#[test]
fn ns3_flows_ignore_the_hosts_tso() {
    let host = SocketHost {
        tso: TsoConfig::default(),
        tsq: true,
        ..SocketHost::bare()
    };
    let mut s = Sender::with_host(&ns3_newreno(), 1, host);
    let mut out = Vec::new();
    s.start(Time::ZERO, &mut out);
    assert_eq!(out.len(), 10);
    assert!(out.iter().all(|o| o.skb_segs == 1), "{out:?}");
    assert_eq!(s.counters.skbs, 10);
}

/// ns-3 `NewAck`: an ACK of new data recomputes the RTO from the estimate, ending the backoff
/// even without an RTT sample (the head was retransmitted, so `EstimateRtt` takes none).
#[test]
fn ns3_an_ack_of_new_data_ends_the_backoff() {
    let mut s = Sender::new(&ns3_newreno(), 1);
    let mut out = Vec::new();
    s.start(Time::ZERO, &mut out);
    // Nothing comes back: the timeout fires twice.
    let mut t = Time::ZERO;
    while s.counters.rtos < 2 {
        t = s.next_wakeup().expect("a timer armed");
        s.on_timer(t, &mut out);
    }
    assert_eq!(s.backoff, 2);
    s.on_ack(t + Dur::from_millis(10), &sack_ack(1, &[], false), &mut out);
    assert_eq!(s.rtt.srtt(), None, "no RTT sample");
    assert_eq!(s.backoff, 0);
}

/// `cc_rtt = "srtt"` also applies to send-time samples (the Linux stack with ns-3's rule): the
/// controller and the minimum RTT see the smoothed RTT after the sample, not the sample.
#[test]
fn cc_rtt_srtt_feeds_the_smoothed_rtt_to_the_minimum() {
    let mut cfg = newreno();
    cfg.tcp.cc_rtt = crate::config::CcRtt::Smoothed;
    let mut s = Sender::new(&cfg, 1);
    let mut out = Vec::new();
    s.start(Time::ZERO, &mut out);
    s.on_ack(ms(40), &sack_ack(1, &[], false), &mut out);
    s.on_ack(ms(50), &sack_ack(2, &[], false), &mut out);
    // Samples of 40 ms and 50 ms, then segment 2's ACK 30 ms after it was sent: the lowest
    // sample is 30 ms, the smoothed RTT never goes below 39 ms.
    s.on_ack(ms(70), &sack_ack(3, &[], false), &mut out);
    let srtt = s.rtt.srtt().unwrap();
    assert_eq!(s.rtt.min_rtt(), Some(srtt.min(Dur::from_millis(40))));
    assert!(s.rtt.min_rtt() > Some(Dur::from_millis(30)));
}
