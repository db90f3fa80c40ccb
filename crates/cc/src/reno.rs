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
//!
//! ns-3 ([`RenoRules::NS3`], what `CcSpec::for_ns3` sets): ns-3.37's `TcpNewReno`
//! (`src/internet/model/tcp-congestion-ops.cc`) counts cwnd and ssthresh in bytes and grows per
//! ACK, not per acknowledged segment: `SlowStart` adds one MSS per ACK that acknowledges
//! anything and hands the other acknowledged segments to congestion avoidance in the same call;
//! `CongestionAvoidance` adds max(1, ⌊MSS²/cwnd⌋) bytes once per ACK; `GetSsThresh` is
//! max(2·MSS, BytesInFlight/2). ns-3 has no classic Reno (its recovery-exit rule is the
//! transport's), so both controllers take these rules. The byte window is kept in the segment
//! window: `cwnd` whole segments plus `cwnd_cnt` bytes ([`ByteWindow`]). With a slow start other
//! than `standard`, the slow start's own growth runs and the ns-3 rules apply after it.
//! Not modelled: ns-3's `TcpNewReno` grows even when the sender is not cwnd-limited (it has no
//! such test); here the transport calls `cong_avoid` only when cwnd-limited.

use crate::slowstart::SlowStart;
use crate::{
    AckInfo, CaState, CongestionControl, CwndEvent, CwndState, Dur, INFINITE_SSTHRESH,
    SlowStartKind, StatSink, Time,
};

/// Lower bound of ssthresh after a reduction, in segments (Linux `tcp_reno_ssthresh`:
/// `max(snd_cwnd >> 1, 2)`; RFC 5681 §3.1 eq. (4): `max(FlightSize / 2, 2*SMSS)`).
pub const RENO_MIN_SSTHRESH: u32 = 2;

/// The rules of Reno's window growth and loss response: Linux's (`tcp_cong.c`, the default) or
/// ns-3.37's `TcpNewReno` (`src/internet/model/tcp-congestion-ops.cc`). ns-3's `TcpVegas`
/// falls back on the same rules when it does not decide.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RenoRules {
    /// Growth per ACK in bytes: ns-3 `TcpNewReno::IncreaseWindow`. `SlowStart` adds one MSS per
    /// ACK that acknowledges at least one segment, whatever their number (not capped at
    /// ssthresh), and returns the others to `CongestionAvoidance` in the same call, which adds
    /// max(1, ⌊MSS²/cwnd⌋) bytes once per ACK (cwnd in bytes), whatever the segments acked.
    /// `false`: Linux `tcp_reno_cong_avoid` (`tcp_slow_start`: +1 segment per acknowledged
    /// segment up to ssthresh; `tcp_cong_avoid_ai`: +1 segment per cwnd acknowledged segments).
    pub per_ack_growth: bool,
    /// ssthresh from the data in flight: ns-3 `TcpNewReno::GetSsThresh` =
    /// max(2·MSS, BytesInFlight/2), where `TcpSocketBase::EnterRecovery` passes the pipe after
    /// the ACK's loss marking and `TcpSocketBase::ReTxTimeout` the pipe before the timeout marks
    /// everything lost (`inFlightBeforeRto`): both are [`AckInfo::in_flight`] at the call.
    /// `false`: Linux `tcp_reno_ssthresh` = max(cwnd/2, 2).
    pub ssthresh_from_flight: bool,
}

impl RenoRules {
    /// Linux `tcp_cong.c`.
    pub const LINUX: RenoRules = RenoRules {
        per_ack_growth: false,
        ssthresh_from_flight: false,
    };
    /// ns-3.37 `TcpNewReno`.
    pub const NS3: RenoRules = RenoRules {
        per_ack_growth: true,
        ssthresh_from_flight: true,
    };
}

impl Default for RenoRules {
    fn default() -> Self {
        RenoRules::LINUX
    }
}

/// ns-3's byte-counted cwnd and ssthresh in the segment-counted [`CwndState`]: cwnd is
/// `cwnd · mss + cwnd_cnt` bytes (`cwnd_cnt` < mss is the part of a segment ns-3's
/// `TcpSocketBase` does not send: it sends whole segments), ssthresh the segments the controller
/// answered plus the remainder it keeps here while the transport keeps that ssthresh.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ByteWindow {
    /// The ssthresh, in segments, of the last byte ssthresh answered.
    ss_seg: u32,
    /// Its bytes beyond `ss_seg` whole segments.
    ss_frac: u32,
}

impl ByteWindow {
    /// cwnd in bytes.
    #[must_use]
    pub fn cwnd_bytes(st: &CwndState) -> u64 {
        u64::from(st.cwnd) * u64::from(st.mss) + u64::from(st.cwnd_cnt)
    }

    /// ssthresh in bytes (`u64::MAX` while infinite).
    #[must_use]
    pub fn ssthresh_bytes(&self, st: &CwndState) -> u64 {
        if st.ssthresh >= INFINITE_SSTHRESH {
            return u64::MAX;
        }
        let frac = if st.ssthresh == self.ss_seg {
            self.ss_frac
        } else {
            0
        };
        u64::from(st.ssthresh) * u64::from(st.mss) + u64::from(frac)
    }

    /// ns-3's slow-start test `m_cWnd < m_ssThresh`, in bytes.
    #[must_use]
    pub fn in_slow_start(&self, st: &CwndState) -> bool {
        Self::cwnd_bytes(st) < self.ssthresh_bytes(st)
    }

    /// Set cwnd to `bytes` (at most the clamp).
    pub fn set_cwnd(st: &mut CwndState, bytes: u64) {
        let mss = u64::from(st.mss.max(1));
        let segs = u32::try_from(bytes / mss).unwrap_or(u32::MAX);
        if segs >= st.cwnd_clamp {
            st.cwnd = st.cwnd_clamp;
            st.cwnd_cnt = 0;
        } else {
            st.cwnd = segs;
            st.cwnd_cnt = u32::try_from(bytes % mss).unwrap_or(0);
        }
    }

    /// An ssthresh of `bytes`: the whole segments to answer, the remainder kept.
    pub fn ssthresh_segments(&mut self, st: &CwndState, bytes: u64) -> u32 {
        let mss = u64::from(st.mss.max(1));
        let segs = u32::try_from(bytes / mss).unwrap_or(INFINITE_SSTHRESH);
        if segs >= INFINITE_SSTHRESH {
            return INFINITE_SSTHRESH;
        }
        self.ss_seg = segs;
        self.ss_frac = u32::try_from(bytes % mss).unwrap_or(0);
        segs
    }

    /// The transport ended a reduction with cwnd = ssthresh in segments (`CompleteCwr`); ns-3
    /// sets `m_cWnd = m_ssThresh` in bytes (`TcpClassicRecovery::ExitRecovery`,
    /// `TcpPrrRecovery::ExitRecovery`), so cwnd gets the ssthresh's remainder.
    pub fn on_complete_cwr(&self, st: &mut CwndState) {
        if st.cwnd == st.ssthresh && st.ssthresh == self.ss_seg {
            st.cwnd_cnt = self.ss_frac;
        }
    }

    /// ns-3 `TcpNewReno::SlowStart`: one MSS if the ACK acknowledged anything; returns the
    /// other acknowledged segments.
    pub fn slow_start(st: &mut CwndState, acked: u32) -> u32 {
        if acked == 0 {
            return 0;
        }
        Self::set_cwnd(st, Self::cwnd_bytes(st) + u64::from(st.mss));
        acked - 1
    }

    /// ns-3 `TcpNewReno::CongestionAvoidance`: max(1, ⌊MSS²/cwnd⌋) bytes if `acked` > 0.
    pub fn congestion_avoidance(st: &mut CwndState, acked: u32) {
        if acked == 0 {
            return;
        }
        let mss = u64::from(st.mss);
        let adder = (mss * mss / Self::cwnd_bytes(st).max(1)).max(1);
        Self::set_cwnd(st, Self::cwnd_bytes(st) + adder);
    }

    /// ns-3 `TcpNewReno::IncreaseWindow`: slow start while cwnd < ssthresh, then congestion
    /// avoidance with what slow start left when cwnd ≥ ssthresh (possibly on the same ACK).
    pub fn increase_window(&self, st: &mut CwndState, acked: u32) {
        let mut acked = acked;
        if self.in_slow_start(st) {
            acked = Self::slow_start(st, acked);
        }
        if !self.in_slow_start(st) {
            Self::congestion_avoidance(st, acked);
        }
    }

    /// ns-3 `TcpNewReno::GetSsThresh` = max(2·MSS, BytesInFlight/2), in whole segments (the
    /// remainder kept).
    pub fn newreno_ssthresh(&mut self, st: &CwndState, in_flight: u32) -> u32 {
        let mss = u64::from(st.mss);
        let bytes = (2 * mss).max(u64::from(in_flight) * mss / 2);
        self.ssthresh_segments(st, bytes)
    }
}

/// Reno-family controller; `PARTIAL_ACK_EXIT` selects Reno (`true`) or NewReno (`false`).
#[derive(Clone, Debug)]
pub struct RenoFamily<const PARTIAL_ACK_EXIT: bool> {
    slow_start: SlowStart,
    rules: RenoRules,
    /// ns-3's byte ssthresh (used with `rules.per_ack_growth`).
    bytes: ByteWindow,
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
    /// A fresh controller with the given slow start and Linux's rules.
    #[must_use]
    pub fn new(slow_start: SlowStartKind) -> Self {
        Self::with_rules(slow_start, RenoRules::LINUX)
    }

    /// A fresh controller with the given slow start and rules.
    #[must_use]
    pub fn with_rules(slow_start: SlowStartKind, rules: RenoRules) -> Self {
        RenoFamily {
            slow_start: SlowStart::new(slow_start),
            rules,
            bytes: ByteWindow::default(),
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

    /// The rules in use.
    #[must_use]
    pub fn rules(&self) -> RenoRules {
        self.rules
    }

    /// Whether cwnd < ssthresh by the rules in use (bytes for ns-3's).
    /// ns-3 `TcpNewReno::IncreaseWindow` ([`RenoRules::per_ack_growth`]); another slow start
    /// than `standard` grows the window its own way first.
    #[cold]
    fn cong_avoid_per_ack(&mut self, st: &mut CwndState, acked: u32, ack: &AckInfo) {
        if matches!(self.slow_start, SlowStart::Standard) {
            self.bytes.increase_window(st, acked);
        } else {
            let mut acked = acked;
            if st.in_slow_start() {
                acked = self.slow_start.grow(st, acked, ack);
            }
            if !self.bytes.in_slow_start(st) {
                ByteWindow::congestion_avoidance(st, acked);
            }
        }
        self.in_slow_start = self.slow_starting(st);
    }

    fn slow_starting(&self, st: &CwndState) -> bool {
        if self.rules.per_ack_growth {
            self.bytes.in_slow_start(st)
        } else {
            st.in_slow_start()
        }
    }
}

impl<const PARTIAL_ACK_EXIT: bool> CongestionControl for RenoFamily<PARTIAL_ACK_EXIT> {
    fn name(&self) -> &'static str {
        if PARTIAL_ACK_EXIT { "reno" } else { "newreno" }
    }

    fn init(&mut self, _now: Time, st: &mut CwndState) {
        self.slow_start = SlowStart::new(self.slow_start.kind());
        self.bytes = ByteWindow::default();
        self.delay_min = None;
        self.ca_state = CaState::Open;
        self.in_slow_start = self.slow_starting(st);
    }

    fn pkts_acked(&mut self, now: Time, st: &mut CwndState, ack: &AckInfo) {
        if let Some(rtt) = ack.rtt {
            self.delay_min = Some(self.delay_min.map_or(rtt, |m| m.min(rtt)));
        }
        self.slow_start
            .on_ack(now, st, ack, ack.rtt, self.delay_min);
        self.in_slow_start = self.slow_starting(st);
    }

    fn cong_avoid(&mut self, _now: Time, st: &mut CwndState, acked: u32, ack: &AckInfo) {
        // `tcp_reno_cong_avoid`: `if (!tcp_is_cwnd_limited(sk)) return;`
        if !ack.is_cwnd_limited {
            return;
        }
        if self.rules.per_ack_growth {
            self.cong_avoid_per_ack(st, acked, ack);
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
        if self.rules.ssthresh_from_flight {
            return self.bytes.newreno_ssthresh(st, ack.in_flight);
        }
        (st.cwnd / 2).max(RENO_MIN_SSTHRESH)
    }

    fn set_state(&mut self, _now: Time, st: &mut CwndState, new: CaState) {
        if new == CaState::Loss {
            self.slow_start.on_rto();
            self.delay_min = None;
        }
        self.ca_state = new;
        self.in_slow_start = self.slow_starting(st);
    }

    fn cwnd_event(&mut self, _now: Time, st: &mut CwndState, ev: CwndEvent) {
        if ev == CwndEvent::CompleteCwr && self.rules.per_ack_growth {
            self.bytes.on_complete_cwr(st);
            self.in_slow_start = self.slow_starting(st);
        }
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

    fn ns3(cwnd: u32, ssthresh: u32) -> (NewReno, CwndState) {
        let mut st = CwndState::new(cwnd, MSS);
        st.ssthresh = ssthresh;
        (
            NewReno::with_rules(SlowStartKind::Standard, RenoRules::NS3),
            st,
        )
    }

    fn acked(n: u32) -> AckInfo {
        AckInfo {
            acked_sacked: n,
            pkts_acked: n,
            is_cwnd_limited: true,
            ..AckInfo::default()
        }
    }

    /// ns-3 `TcpNewReno::SlowStart`: +1 MSS per ACK whatever it acknowledged (an ACK of 2
    /// segments at cwnd 10 gives 11, Linux 12); the other segments go to
    /// `CongestionAvoidance` on the same ACK once cwnd ≥ ssthresh: cwnd 10, ssthresh 11, an ACK
    /// of 3 → 11 segments, then ⌊1448²/(11·1448)⌋ = ⌊1448/11⌋ = 131 bytes (Linux: 11 and
    /// `cwnd_cnt` 2 of 11).
    #[test]
    fn ns3_slow_start_adds_one_segment_per_ack() {
        let (mut cc, mut st) = ns3(10, INFINITE_SSTHRESH);
        cc.cong_avoid(Time::ZERO, &mut st, 2, &acked(2));
        assert_eq!((st.cwnd, st.cwnd_cnt), (11, 0));
        let mut linux = NewReno::new(SlowStartKind::Standard);
        let mut lst = CwndState::new(10, MSS);
        linux.cong_avoid(Time::ZERO, &mut lst, 2, &acked(2));
        assert_eq!(lst.cwnd, 12);

        let (mut cc, mut st) = ns3(10, 11);
        cc.cong_avoid(Time::ZERO, &mut st, 3, &acked(3));
        assert_eq!((st.cwnd, st.cwnd_cnt), (11, 131));
        assert_eq!(cc.state(), "cong_avoid");
        // No growth on an ACK that acknowledged nothing.
        cc.cong_avoid(Time::ZERO, &mut st, 0, &acked(0));
        assert_eq!((st.cwnd, st.cwnd_cnt), (11, 131));
    }

    /// ns-3 `TcpNewReno::CongestionAvoidance`: max(1, ⌊MSS²/cwnd⌋) bytes once per ACK. At
    /// cwnd 20 (28 960 bytes) ten ACKs of two segments each (a window, delayed ACKs) add
    /// 72, 72, 72, 71, 71, 71, 71, 71, 71, 70 = 712 bytes (⌊2 096 704/cwnd⌋ as cwnd grows): about
    /// half a segment per window where Linux adds one. With MSS 100 and cwnd 200 segments,
    /// MSS²/cwnd = 0.5 byte and the floor of 1 byte applies.
    #[test]
    fn ns3_congestion_avoidance_adds_mss_squared_over_cwnd_per_ack() {
        let (mut cc, mut st) = ns3(20, 10);
        let mut linux = NewReno::new(SlowStartKind::Standard);
        let mut lst = CwndState::new(20, MSS);
        lst.ssthresh = 10;
        for _ in 0..10 {
            cc.cong_avoid(Time::ZERO, &mut st, 2, &acked(2));
            linux.cong_avoid(Time::ZERO, &mut lst, 2, &acked(2));
        }
        assert_eq!((st.cwnd, st.cwnd_cnt), (20, 712));
        assert_eq!((lst.cwnd, lst.cwnd_cnt), (21, 0));

        let mut st = CwndState::new(200, 100);
        st.ssthresh = 10;
        cc.cong_avoid(Time::ZERO, &mut st, 5, &acked(5));
        assert_eq!((st.cwnd, st.cwnd_cnt), (200, 1));
    }

    /// ns-3 `TcpNewReno::GetSsThresh` = max(2·MSS, BytesInFlight/2): 15 segments in flight at
    /// cwnd 30 give 10 860 bytes = 7 segments + 724 bytes (Linux: cwnd/2 = 15); 3 in flight
    /// give max(2 896, 2 172) = 2 segments. Through the kit's fast recovery cwnd = ssthresh
    /// keeps the 724 bytes, so the next ACK is congestion avoidance (⌊2 096 704/10 860⌋ = 193
    /// bytes). After an RTO the byte ssthresh still counts: at cwnd 7 (10 136 bytes < 10 860)
    /// slow start adds a segment (Linux would stop at 7), then cwnd 8 = 11 584 bytes grows by
    /// 2 096 704/11 584 = 181 bytes.
    #[test]
    fn ns3_ssthresh_is_half_the_flight_in_bytes() {
        let (mut cc, st) = ns3(30, INFINITE_SSTHRESH);
        let info = |in_flight| AckInfo {
            in_flight,
            ..AckInfo::default()
        };
        assert_eq!(cc.ssthresh(Time::ZERO, &st, &info(15)), 7);
        assert_eq!(cc.ssthresh(Time::ZERO, &st, &info(3)), 2);
        let mut linux = NewReno::new(SlowStartKind::Standard);
        assert_eq!(linux.ssthresh(Time::ZERO, &st, &info(15)), 15);

        let mut p = sender(
            NewReno::with_rules(SlowStartKind::Standard, RenoRules::NS3),
            30,
            100,
        );
        p.window = Some(15);
        p.nxt = 15;
        p.fast_loss();
        assert_eq!((p.st.ssthresh, p.st.cwnd, p.st.cwnd_cnt), (7, 7, 724));
        assert_eq!(p.cc.state(), "cong_avoid");
        p.cc.cong_avoid(Time::ZERO, &mut p.st, 1, &acked(1));
        assert_eq!((p.st.cwnd, p.st.cwnd_cnt), (7, 724 + 193));

        let mut st = p.st;
        st.cwnd = 7;
        st.cwnd_cnt = 0;
        assert_eq!(p.cc.state(), "cong_avoid");
        p.cc.cong_avoid(Time::ZERO, &mut st, 1, &acked(1));
        assert_eq!((st.cwnd, st.cwnd_cnt), (8, 0));
        p.cc.cong_avoid(Time::ZERO, &mut st, 1, &acked(1));
        assert_eq!((st.cwnd, st.cwnd_cnt), (8, 181));
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
