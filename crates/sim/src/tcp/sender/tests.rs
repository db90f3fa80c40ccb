//! The sender's own tests: EDT pacing, idle restart, TSQ, TSO sizing and ECN at the sender.

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
