//! Reno and NewReno (RFC 5681, RFC 6582) as Linux implements them (`tcp_cong.c`).
//!
//! Contract: window growth and the loss response only; loss detection and recovery belong to the
//! transport. Growth (`tcp_reno_cong_avoid`): nothing unless cwnd-limited; below ssthresh, slow
//! start through the pluggable [`SlowStart`] (standard, Linux HyStart, HyStart++); above it,
//! `cong_avoid_ai(cwnd, acked)`, i.e. one segment per window of acknowledged segments
//! (RFC 5681 §3.1, "cwnd += SMSS*SMSS/cwnd"). Loss response (`tcp_reno_ssthresh`):
//! `ssthresh = max(cwnd / 2, 2)`. Undo: the trait default `max(cwnd, prior_cwnd)`
//! (`tcp_reno_undo_cwnd`).
//!
//! The two controllers differ only in when fast recovery ends, which the transport implements:
//! [`Reno`] ends it on the first ACK that advances SND.UNA (RFC 5681 §3.2 step 6;
//! `exit_recovery_on_partial_ack` = true), [`NewReno`] at the recovery point (RFC 6582).
//!
//! Slow start: with `hystart`, the host's `delay_min` is the minimum RTT sample since the start
//! or the last RTO (mirroring CUBIC's `delay_min`, which `bictcp_reset` clears on RTO).

use crate::slowstart::SlowStart;
use crate::{AckInfo, CaState, CongestionControl, CwndState, Dur, SlowStartKind, StatSink, Time};

/// Lower bound of ssthresh after a reduction, in segments (Linux `tcp_reno_ssthresh`:
/// `max(snd_cwnd >> 1, 2)`; RFC 5681 §3.1 eq. (4): `max(FlightSize / 2, 2*SMSS)`).
pub const RENO_MIN_SSTHRESH: u32 = 2;

/// Reno-family controller; `PARTIAL_ACK_EXIT` selects Reno (`true`) or NewReno (`false`).
#[derive(Clone, Debug)]
pub struct RenoFamily<const PARTIAL_ACK_EXIT: bool> {
    slow_start: SlowStart,
    /// Minimum RTT sample since start or the last RTO (for HyStart).
    delay_min: Option<Dur>,
    ca_state: CaState,
    /// Whether cwnd < ssthresh at the last hook (for [`CongestionControl::state`]).
    in_slow_start: bool,
}

/// Classic Reno: fast recovery ends on the first partial ACK (RFC 5681).
pub type Reno = RenoFamily<true>;
/// NewReno: fast recovery ends at the recovery point (RFC 6582).
pub type NewReno = RenoFamily<false>;

impl<const PARTIAL_ACK_EXIT: bool> RenoFamily<PARTIAL_ACK_EXIT> {
    /// A fresh controller with the given slow start.
    #[must_use]
    pub fn new(slow_start: SlowStartKind) -> Self {
        RenoFamily {
            slow_start: SlowStart::new(slow_start),
            delay_min: None,
            ca_state: CaState::Open,
            in_slow_start: true,
        }
    }

    /// The slow start in use.
    #[must_use]
    pub fn slow_start(&self) -> &SlowStart {
        &self.slow_start
    }
}

impl<const PARTIAL_ACK_EXIT: bool> CongestionControl for RenoFamily<PARTIAL_ACK_EXIT> {
    fn name(&self) -> &'static str {
        if PARTIAL_ACK_EXIT { "reno" } else { "newreno" }
    }

    fn init(&mut self, _now: Time, st: &mut CwndState) {
        self.slow_start = SlowStart::new(self.slow_start.kind());
        self.delay_min = None;
        self.ca_state = CaState::Open;
        self.in_slow_start = st.in_slow_start();
    }

    fn pkts_acked(&mut self, now: Time, st: &mut CwndState, ack: &AckInfo) {
        if let Some(rtt) = ack.rtt {
            self.delay_min = Some(self.delay_min.map_or(rtt, |m| m.min(rtt)));
        }
        self.slow_start
            .on_ack(now, st, ack, ack.rtt, self.delay_min);
        self.in_slow_start = st.in_slow_start();
    }

    fn cong_avoid(&mut self, _now: Time, st: &mut CwndState, acked: u32, ack: &AckInfo) {
        // `tcp_reno_cong_avoid`: `if (!tcp_is_cwnd_limited(sk)) return;`
        if !ack.is_cwnd_limited {
            return;
        }
        let mut acked = acked;
        if st.in_slow_start() {
            acked = self.slow_start.grow(st, acked, ack);
        }
        if acked > 0 && !st.in_slow_start() {
            st.cong_avoid_ai(st.cwnd, acked);
        }
        self.in_slow_start = st.in_slow_start();
    }

    fn ssthresh(&mut self, _now: Time, st: &CwndState, _ack: &AckInfo) -> u32 {
        self.slow_start.on_congestion();
        (st.cwnd / 2).max(RENO_MIN_SSTHRESH)
    }

    fn set_state(&mut self, _now: Time, st: &mut CwndState, new: CaState) {
        if new == CaState::Loss {
            self.slow_start.on_rto();
            self.delay_min = None;
        }
        self.ca_state = new;
        self.in_slow_start = st.in_slow_start();
    }

    fn exit_recovery_on_partial_ack(&self) -> bool {
        PARTIAL_ACK_EXIT
    }

    fn state(&self) -> &'static str {
        match self.ca_state {
            CaState::Recovery => "recovery",
            CaState::Loss => "loss",
            CaState::Cwr => "cwr",
            CaState::Open | CaState::Disorder => {
                if self.in_slow_start {
                    self.slow_start.state()
                } else {
                    "cong_avoid"
                }
            }
        }
    }

    fn stats(&self, sink: StatSink<'_>) {
        if let Some(d) = self.delay_min {
            sink("delay_min_ms", d.as_millis_f64());
        }
        self.slow_start.stats(sink);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::INFINITE_SSTHRESH;

    const MSS: u32 = 1448;

    fn one_seg_ack() -> AckInfo {
        AckInfo {
            acked_sacked: 1,
            pkts_acked: 1,
            rtt: Some(Dur::from_millis(40)),
            is_cwnd_limited: true,
            ..AckInfo::default()
        }
    }

    /// Deliver one full window of single-segment ACKs.
    fn window_of_acks(cc: &mut dyn CongestionControl, st: &mut CwndState) {
        let n = st.cwnd;
        for _ in 0..n {
            let a = one_seg_ack();
            cc.pkts_acked(Time::ZERO, st, &a);
            cc.cong_avoid(Time::ZERO, st, 1, &a);
        }
    }

    /// In congestion avoidance each window of ACKs adds exactly one segment
    /// (`cong_avoid_ai(cwnd, 1)` per ACK: the counter reaches cwnd after cwnd ACKs).
    #[test]
    fn congestion_avoidance_adds_one_segment_per_window() {
        for mut cc in [
            Box::new(Reno::new(SlowStartKind::Standard)) as Box<dyn CongestionControl>,
            Box::new(NewReno::new(SlowStartKind::Standard)),
        ] {
            let mut st = CwndState::new(100, MSS);
            st.ssthresh = 50;
            for k in 1..=10 {
                window_of_acks(cc.as_mut(), &mut st);
                assert_eq!(st.cwnd, 100 + k, "{} after {k} windows", cc.name());
            }
            assert_eq!(cc.state(), "cong_avoid");
        }
    }

    /// ssthresh = max(cwnd/2, 2): halving, with the floor of 2 segments.
    #[test]
    fn ssthresh_halves_with_a_floor_of_two() {
        let mut cc = NewReno::new(SlowStartKind::Standard);
        for (cwnd, expect) in [(100, 50), (101, 50), (5, 2), (3, 2), (1, 2)] {
            let mut st = CwndState::new(cwnd, MSS);
            st.cwnd = cwnd;
            assert_eq!(
                cc.ssthresh(Time::ZERO, &st, &AckInfo::default()),
                expect,
                "cwnd {cwnd}"
            );
        }
    }

    /// Slow start grows by the acknowledged segments up to ssthresh; the remainder feeds the
    /// linear increase (`tcp_slow_start` leftover → `tcp_cong_avoid_ai`).
    #[test]
    fn slow_start_grows_by_acked_and_hands_the_rest_to_ca() {
        let mut cc = Reno::new(SlowStartKind::Standard);
        let mut st = CwndState::new(10, MSS);
        st.ssthresh = 14;
        let a = AckInfo {
            acked_sacked: 6,
            is_cwnd_limited: true,
            ..AckInfo::default()
        };
        assert_eq!(cc.state(), "slow_start");
        cc.cong_avoid(Time::ZERO, &mut st, 6, &a);
        // 4 segments to reach 14, 2 left over: cwnd_cnt = 2 of 14.
        assert_eq!(st.cwnd, 14);
        assert_eq!(st.cwnd_cnt, 2);
        assert_eq!(cc.state(), "cong_avoid");
    }

    /// No growth when the sender is not cwnd-limited (`tcp_is_cwnd_limited`).
    #[test]
    fn no_growth_when_not_cwnd_limited() {
        let mut cc = Reno::new(SlowStartKind::Standard);
        let mut st = CwndState::new(10, MSS);
        let a = AckInfo {
            acked_sacked: 5,
            is_cwnd_limited: false,
            ..AckInfo::default()
        };
        cc.cong_avoid(Time::ZERO, &mut st, 5, &a);
        assert_eq!(st.cwnd, 10);
    }

    /// The two variants differ only in names and the recovery-exit rule.
    #[test]
    fn reno_and_newreno_recovery_exit_rule_and_names() {
        let reno = Reno::new(SlowStartKind::Standard);
        let newreno = NewReno::new(SlowStartKind::Standard);
        assert!(reno.exit_recovery_on_partial_ack());
        assert!(!newreno.exit_recovery_on_partial_ack());
        assert_eq!(reno.name(), "reno");
        assert_eq!(newreno.name(), "newreno");
    }

    /// Reno with Linux HyStart: a 46 ms round after a 40 ms delay_min ends slow start with
    /// ssthresh = cwnd (threshold 40 + 5 ms), and an RTO re-arms HyStart.
    #[test]
    fn reno_with_hystart_leaves_slow_start_on_delay() {
        let mut cc = Reno::new(SlowStartKind::HyStart);
        let mut st = CwndState::new(32, MSS);
        let mut now = Time::ZERO;
        let mut send = |una: u64, nxt: u64, rtt_ms: u64, now: Time, st: &mut CwndState| {
            let a = AckInfo {
                acked_sacked: 1,
                pkts_acked: 1,
                rtt: Some(Dur::from_millis(rtt_ms)),
                is_cwnd_limited: true,
                snd_una: una,
                snd_nxt: nxt,
                ..AckInfo::default()
            };
            cc.pkts_acked(now, st, &a);
            if st.in_slow_start() {
                cc.cong_avoid(now, st, 1, &a);
            }
        };
        // ACKs 3 ms apart: no ACK train. A one-segment first round at 40 ms sets delay_min; the
        // next round (opened by snd_una 3 > end_seq 2) sees only 46 ms.
        now += Dur::from_millis(3);
        send(1, 2, 40, now, &mut st);
        for una in 2..=12 {
            now += Dur::from_millis(3);
            send(una, 100, 46, now, &mut st);
        }
        assert_ne!(st.ssthresh, INFINITE_SSTHRESH);
        assert_eq!(st.ssthresh, st.cwnd);
    }
}
