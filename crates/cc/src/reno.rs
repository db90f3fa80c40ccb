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

    fn ssthresh(&mut self, _now: Time, st: &CwndState, ack: &AckInfo) -> u32 {
        if let Some(ss) = self.slow_start.on_congestion(st, ack) {
            return ss; // Careful Resume's Safe Retreat
        }
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

    crate::slowstart::forward_slow_start_hooks!();

    fn state(&self) -> &'static str {
        self.ca_state
            .state_name(self.in_slow_start.then(|| self.slow_start.state()))
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
    use crate::driver::Pipe;

    const MSS: u32 = 1448;

    /// A sender on the crate's test pipe with `cwnd` segments in flight and ssthresh
    /// `ssthresh`.
    fn sender<C: CongestionControl>(cc: C, cwnd: u32, ssthresh: u32) -> Pipe<C> {
        let mut st = CwndState::new(cwnd, MSS);
        st.ssthresh = ssthresh;
        let mut p = Pipe::new(cc, st);
        p.nxt = u64::from(cwnd);
        p
    }

    /// Deliver one full window of single-segment ACKs (RTT 40 ms, one per ms).
    fn window_of_acks<C: CongestionControl>(p: &mut Pipe<C>) {
        for _ in 0..p.st.cwnd {
            p.ack(1, Dur::from_millis(40), Dur::from_millis(1));
        }
    }

    /// In congestion avoidance each window of ACKs adds exactly one segment
    /// (`cong_avoid_ai(cwnd, 1)` per ACK: the counter reaches cwnd after cwnd ACKs).
    #[test]
    fn congestion_avoidance_adds_one_segment_per_window() {
        fn check<C: CongestionControl>(cc: C) {
            let mut p = sender(cc, 100, 50);
            for k in 1..=10 {
                window_of_acks(&mut p);
                assert_eq!(p.st.cwnd, 100 + k, "{} after {k} windows", p.cc.name());
            }
            assert_eq!(p.cc.state(), "cong_avoid");
        }
        check(Reno::new(SlowStartKind::Standard));
        check(NewReno::new(SlowStartKind::Standard));
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
        // ACKs 3 ms apart: no ACK train. A one-segment first round at 40 ms (SND.NXT 2 when it
        // starts) sets delay_min; the next round (opened by SND.UNA 3 > 2) sees only 46 ms.
        let mut p = sender(Reno::new(SlowStartKind::HyStart), 32, INFINITE_SSTHRESH);
        p.nxt = 2;
        p.ack(1, Dur::from_millis(40), Dur::from_millis(3));
        for _ in 2..=12 {
            p.ack(1, Dur::from_millis(46), Dur::from_millis(3));
        }
        assert_ne!(p.st.ssthresh, INFINITE_SSTHRESH);
        assert_eq!(p.st.ssthresh, p.st.cwnd);
    }
}
