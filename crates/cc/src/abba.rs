//! ABBA (Accelerated Bottleneck Bandwidth Adaptation) on CUBIC and on Cuback: a wrapper
//! [`Abba`] around a loss-based controller that only ever adds growth.
//!
//! Contract: every hook is forwarded to the inner controller first; the wrapper never changes
//! the answer of `ssthresh` nor touches cwnd in `ssthresh`, `set_state`, `cwnd_event` or
//! `undo_cwnd`, so every loss and every ECN-CE mark gets exactly the inner controller's
//! multiplicative decrease, whatever ABBA's state or policy (a property test checks it under
//! both calling orders: the Linux kit's, with PRR and cwnd = ssthresh at recovery end, and
//! RFC 9002's, with cwnd = ssthresh at once). ABBA acts only in `cong_avoid` (congestion
//! avoidance, cwnd-limited ACKs): it may raise cwnd above the inner controller's answer, or
//! recalibrate (below). With the policy off the wrapper is never built ([`crate::CcSpec::build`]
//! returns the bare controller).
//!
//! Mechanism (the project's reference `seed-systems.md` §3, a paraphrase of h2o/quicly PR #689;
//! the C code is not public, so every choice below is a documented decision):
//!
//! 1. **Acceleration while the RTT sits at its floor.** On each cwnd-limited ACK in
//!    congestion avoidance, ABBA keeps its own window `W_abba` (starting from cwnd) grown by
//!    `g · acked` with `g = max(2 ms / rtt_threshold, 2.5 %)`, i.e. `g · cwnd` per RTT, and
//!    cwnd becomes max(inner's cwnd, ⌊W_abba⌋): the larger of the two growth terms. It runs
//!    only while the latest RTT sample is below `rtt_threshold` = (min_rtt + previous
//!    period's minimum)/2, floored at min_rtt + 2 ms and capped at the current period's
//!    minimum + 2 ms. "At its floor and being driven down" is read as exactly this
//!    comparison (**decision**): the newest sample is within the threshold band above the
//!    floor. A **period** is one congestion epoch, from one `ssthresh` call to the next
//!    (**decision**, from the reference). min_rtt is the minimum RTT sample since the
//!    connection began (the wrapper's own, not reset by recalibration).
//! 2. **Gate on confirmed queue existence.** `full_rtt` is the smoothed RTT when the first
//!    recovery (a Recovery or CWR episode) ends, i.e. on `set_state` from Recovery/CWR to
//!    Open/Disorder while `full_rtt` is unknown. Unless policy 0x1 is set, acceleration also
//!    needs `full_rtt > min_rtt + 10 ms` and `full_rtt > 1.05 × latest RTT`.
//! 3. **Recalibration** (policy 0x2). `last_high_queue_at` is refreshed when the smoothed RTT
//!    reaches (min_rtt + full_rtt)/2 and whenever a CE mark arrives. `high_rtt_interval` is
//!    CUBIC's K at the current window, K = ∛(cwnd·(1 − β)/C) with the inner controller's β and
//!    C ([`CubicCurve`]; **decision**: the time a non-losing CUBIC flow needs to climb back
//!    from a reduction at this window). On a cwnd-limited ACK in congestion avoidance with
//!    `full_rtt` known, if now − `last_high_queue_at` > 2 × `high_rtt_interval`, cwnd is kept,
//!    the inner controller is re-initialised (its congestion-avoidance trajectory is
//!    discarded), ssthresh becomes infinite (slow start again), and `full_rtt` is forgotten so
//!    that the next recovery end learns it again.
//! 4. A CE mark (a rise of `AckInfo::total_delivered_ce` seen in `pkts_acked`, which the
//!    transport calls in every state, recovery included; or an `ssthresh` call with
//!    `ce_reduction`) counts as a high-queue observation.
//! 5. Policy ([`AbbaPolicy`]): 0x1 INCREASE_ALWAYS (no full_rtt guard; the RTT floor test
//!    still applies), 0x2 RECALIBRATE (recalibration, and the full_rtt guard unless 0x1),
//!    0x3 both; `on` = 0x2. full_rtt and the high-queue observations are kept whatever the
//!    policy.
//!
//! Acceleration and recalibration happen only in congestion avoidance (not in slow start,
//! whose growth is faster anyway), only on cwnd-limited ACKs.

use crate::cubic::{BICTCP_BETA_SCALE, Cubic};
use crate::num::u64_to_f64;
use crate::{
    AckInfo, CaState, CongestionControl, ConnStart, CwndEvent, CwndState, Dur, EcnMode,
    INFINITE_SSTHRESH, LostInfo, RateSample, SentInfo, StatSink, Time,
};

/// Extra queue ABBA aims to add per RTT: the growth term is 2 ms / rtt_threshold per RTT
/// (seed-systems.md §3.1).
pub const QUEUE_STEP: Dur = Dur::from_millis(2);
/// Minimum growth of the acceleration term per RTT (seed-systems.md §3.1: 2.5 %).
pub const MIN_GROWTH: f64 = 0.025;
/// The RTT threshold is at least min_rtt plus this, and at most the current period's minimum
/// plus this (seed-systems.md §3.1).
pub const THRESHOLD_MARGIN: Dur = Dur::from_millis(2);
/// full_rtt must exceed min_rtt by more than this for acceleration (seed-systems.md §3.2).
pub const FULL_RTT_MARGIN: Dur = Dur::from_millis(10);
/// full_rtt must exceed the latest RTT by this factor, in percent (seed-systems.md §3.2: 1.05).
pub const FULL_RTT_RATIO_PERCENT: u64 = 105;
/// Recalibration after this many `high_rtt_interval`s without a high-queue observation
/// (seed-systems.md §3.3).
pub const RECALIBRATE_INTERVALS: f64 = 2.0;

/// ABBA's policy flags (seed-systems.md §3.5); `OFF` (0) disables ABBA.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct AbbaPolicy(u8);

impl AbbaPolicy {
    /// ABBA disabled (the default).
    pub const OFF: AbbaPolicy = AbbaPolicy(0);
    /// Flag 0x1: bypass the full_rtt guard (the RTT floor test still applies).
    pub const INCREASE_ALWAYS: u8 = 0x1;
    /// Flag 0x2: observe full_rtt, recalibrate, and use full_rtt as the guard unless 0x1.
    pub const RECALIBRATE: u8 = 0x2;
    /// The recommended setting, 0x2.
    pub const ON: AbbaPolicy = AbbaPolicy(Self::RECALIBRATE);
    /// Names accepted in scenario files.
    pub const NAMES: [&'static str; 5] = ["off", "on", "0x1", "0x2", "0x3"];

    /// The policy with flags `bits` (0..=3), if valid.
    #[must_use]
    pub fn from_bits(bits: u8) -> Option<AbbaPolicy> {
        (bits <= 3).then_some(AbbaPolicy(bits))
    }

    /// The policy by scenario name (`on` = 0x2).
    #[must_use]
    pub fn from_name(name: &str) -> Option<AbbaPolicy> {
        match name {
            "off" => Some(Self::OFF),
            "on" | "0x2" => Some(Self::ON),
            "0x1" => Some(AbbaPolicy(0x1)),
            "0x3" => Some(AbbaPolicy(0x3)),
            _ => None,
        }
    }

    /// The flags.
    #[must_use]
    pub fn bits(self) -> u8 {
        self.0
    }

    /// ABBA is enabled.
    #[must_use]
    pub fn is_on(self) -> bool {
        self.0 != 0
    }

    /// Flag 0x1 is set.
    #[must_use]
    pub fn increase_always(self) -> bool {
        self.0 & Self::INCREASE_ALWAYS != 0
    }

    /// Flag 0x2 is set.
    #[must_use]
    pub fn recalibrate(self) -> bool {
        self.0 & Self::RECALIBRATE != 0
    }

    /// The canonical scenario name: `off`, `0x1`, `on` (0x2) or `0x3`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self.0 {
            0 => "off",
            1 => "0x1",
            2 => "on",
            _ => "0x3",
        }
    }

    /// The name a controller `base` shows in results with this policy: `base` when off,
    /// `base_abba` for 0x2, `base_abba0x1` / `base_abba0x3` otherwise (only for `cubic` and
    /// `cuback`; other names are returned unchanged).
    #[must_use]
    pub fn controller_name(self, base: &'static str) -> &'static str {
        match (base, self.0) {
            ("cubic", 1) => "cubic_abba0x1",
            ("cubic", 2) => "cubic_abba",
            ("cubic", 3) => "cubic_abba0x3",
            ("cuback", 1) => "cuback_abba0x1",
            ("cuback", 2) => "cuback_abba",
            ("cuback", 3) => "cuback_abba0x3",
            _ => base,
        }
    }
}

/// What ABBA needs from the controller it wraps: CUBIC's K at a window.
pub trait CubicCurve {
    /// K = ∛(cwnd · (1 − β) / C) in seconds: how long the controller's cubic curve takes to
    /// climb back to `cwnd` (segments) after a loss at `cwnd` (RFC 9438 §4.2, eq. 2).
    fn k_at(&self, cwnd: u32) -> f64;
}

impl CubicCurve for Cubic {
    fn k_at(&self, cwnd: u32) -> f64 {
        let cfg = self.config();
        let beta = f64::from(cfg.beta.clamp(1, BICTCP_BETA_SCALE - 1)) / 1024.0;
        // Linux: C = bic_scale · 10 / 1024 segments/s³.
        let c = f64::from(cfg.bic_scale.max(1)) * 10.0 / 1024.0;
        (f64::from(cwnd) * (1.0 - beta) / c).cbrt()
    }
}

/// ABBA around the controller `C`.
#[derive(Clone, Debug)]
pub struct Abba<C> {
    inner: C,
    policy: AbbaPolicy,
    min_rtt: Option<Dur>,
    latest_rtt: Option<Dur>,
    srtt: Option<Dur>,
    /// Minimum RTT sample of the current congestion epoch.
    period_min: Option<Dur>,
    /// Minimum RTT sample of the previous congestion epoch.
    prev_period_min: Option<Dur>,
    full_rtt: Option<Dur>,
    last_high_queue_at: Option<Time>,
    last_ce: u64,
    ca_state: CaState,
    /// ABBA's own window while accelerating (0: not accelerating).
    w_abba: f64,
    /// Whether the last cwnd-limited ACK in congestion avoidance passed the gates.
    gate_open: bool,
    /// Segments ABBA added above the inner controller's window, in total.
    added: u64,
    recalibrations: u64,
}

impl<C: CongestionControl + CubicCurve> Abba<C> {
    /// `inner` with ABBA under `policy`.
    #[must_use]
    pub fn new(inner: C, policy: AbbaPolicy) -> Self {
        Abba {
            inner,
            policy,
            min_rtt: None,
            latest_rtt: None,
            srtt: None,
            period_min: None,
            prev_period_min: None,
            full_rtt: None,
            last_high_queue_at: None,
            last_ce: 0,
            ca_state: CaState::Open,
            w_abba: 0.0,
            gate_open: false,
            added: 0,
            recalibrations: 0,
        }
    }

    /// The wrapped controller.
    #[must_use]
    pub fn inner(&self) -> &C {
        &self.inner
    }

    /// The policy.
    #[must_use]
    pub fn policy(&self) -> AbbaPolicy {
        self.policy
    }

    /// full_rtt, once learned.
    #[must_use]
    pub fn full_rtt(&self) -> Option<Dur> {
        self.full_rtt
    }

    /// The last high-queue observation.
    #[must_use]
    pub fn last_high_queue_at(&self) -> Option<Time> {
        self.last_high_queue_at
    }

    /// Segments ABBA has added above the inner controller's window.
    #[must_use]
    pub fn added(&self) -> u64 {
        self.added
    }

    /// Recalibrations so far.
    #[must_use]
    pub fn recalibrations(&self) -> u64 {
        self.recalibrations
    }

    /// Whether the last cwnd-limited ACK in congestion avoidance passed ABBA's gates.
    #[must_use]
    pub fn gate_open(&self) -> bool {
        self.gate_open
    }

    /// The RTT threshold of the current period (see the module documentation).
    #[must_use]
    pub fn rtt_threshold(&self) -> Option<Dur> {
        let min = self.min_rtt?;
        let cur = self.period_min?;
        let prev = self.prev_period_min.unwrap_or(cur);
        let mid = Dur::from_nanos(
            u64::try_from((u128::from(min.as_nanos()) + u128::from(prev.as_nanos())) / 2)
                .unwrap_or(u64::MAX),
        );
        Some(mid.max(min + THRESHOLD_MARGIN).min(cur + THRESHOLD_MARGIN))
    }

    /// The growth term per RTT for threshold `thr`: max(2 ms / thr, 2.5 %).
    #[must_use]
    pub fn growth_per_rtt(thr: Dur) -> f64 {
        let t = thr.as_secs_f64();
        if t > 0.0 {
            (QUEUE_STEP.as_secs_f64() / t).max(MIN_GROWTH)
        } else {
            MIN_GROWTH
        }
    }

    /// The acceleration gates on the current samples; the threshold when they pass.
    fn gates(&self) -> Option<Dur> {
        let thr = self.rtt_threshold()?;
        let latest = self.latest_rtt?;
        if latest >= thr {
            return None;
        }
        if !self.policy.increase_always() {
            let full = self.full_rtt?;
            let min = self.min_rtt?;
            let ratio_ok = u128::from(full.as_nanos()) * 100
                > u128::from(latest.as_nanos()) * u128::from(FULL_RTT_RATIO_PERCENT);
            if full <= min + FULL_RTT_MARGIN || !ratio_ok {
                return None;
            }
        }
        Some(thr)
    }

    /// Whether recalibration is due at `now` (policy 0x2, full_rtt known, congestion
    /// avoidance, no high-queue observation for 2 × high_rtt_interval).
    fn recalibration_due(&self, now: Time, st: &CwndState) -> bool {
        if !self.policy.recalibrate() || self.full_rtt.is_none() || st.in_slow_start() {
            return false;
        }
        let Some(last) = self.last_high_queue_at else {
            return false;
        };
        let interval = self.inner.k_at(st.cwnd) * RECALIBRATE_INTERVALS;
        now.saturating_since(last).as_secs_f64() > interval
    }

    fn recalibrate(&mut self, now: Time, st: &mut CwndState) {
        let cwnd = st.cwnd;
        st.ssthresh = INFINITE_SSTHRESH;
        self.inner.init(now, st);
        st.cwnd = cwnd;
        self.full_rtt = None;
        self.last_high_queue_at = Some(now);
        self.w_abba = 0.0;
        self.recalibrations += 1;
    }
}

impl<C: CongestionControl + CubicCurve + Clone + 'static> CongestionControl for Abba<C> {
    fn name(&self) -> &'static str {
        self.policy.controller_name(self.inner.name())
    }

    fn init(&mut self, now: Time, st: &mut CwndState) {
        self.inner.init(now, st);
        *self = Abba::new(self.inner.clone(), self.policy);
    }

    fn on_connection_start(&mut self, now: Time, st: &mut CwndState, info: &ConnStart) {
        self.inner.on_connection_start(now, st, info);
    }

    fn pkts_acked(&mut self, now: Time, st: &mut CwndState, ack: &AckInfo) {
        self.inner.pkts_acked(now, st, ack);
        if let Some(r) = ack.rtt {
            self.latest_rtt = Some(r);
            self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
            self.period_min = Some(self.period_min.map_or(r, |m| m.min(r)));
        }
        if ack.srtt.is_some() {
            self.srtt = ack.srtt;
        }
        if ack.total_delivered_ce > self.last_ce {
            self.last_ce = ack.total_delivered_ce;
            self.last_high_queue_at = Some(now);
        }
        if let (Some(full), Some(min), Some(s)) = (self.full_rtt, self.min_rtt, self.srtt) {
            let mid = (u128::from(min.as_nanos()) + u128::from(full.as_nanos())) / 2;
            if u128::from(s.as_nanos()) >= mid {
                self.last_high_queue_at = Some(now);
            }
        }
    }

    fn cong_avoid(&mut self, now: Time, st: &mut CwndState, acked: u32, ack: &AckInfo) {
        let before = st.cwnd;
        let was_ca = !st.in_slow_start();
        self.inner.cong_avoid(now, st, acked, ack);
        self.gate_open = false;
        if !self.policy.is_on() || !ack.is_cwnd_limited {
            return;
        }
        if self.recalibration_due(now, st) {
            self.recalibrate(now, st);
            return;
        }
        let thr = if was_ca && !st.in_slow_start() {
            self.gates()
        } else {
            None
        };
        let Some(thr) = thr else {
            self.w_abba = 0.0;
            return;
        };
        self.gate_open = true;
        let g = Self::growth_per_rtt(thr);
        self.w_abba = self.w_abba.max(f64::from(before)) + g * f64::from(acked);
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "floor of a positive window, clamped to cwnd_clamp first"
        )]
        let target = self.w_abba.floor().min(f64::from(st.cwnd_clamp)) as u32;
        if target > st.cwnd {
            self.added += u64::from(target - st.cwnd);
            st.cwnd = target;
        }
    }

    fn ssthresh(&mut self, now: Time, st: &CwndState, ack: &AckInfo) -> u32 {
        let ss = self.inner.ssthresh(now, st, ack);
        if ack.ce_reduction {
            self.last_high_queue_at = Some(now);
        }
        if self.period_min.is_some() {
            self.prev_period_min = self.period_min.take();
        }
        self.w_abba = 0.0;
        ss
    }

    fn cong_control(
        &mut self,
        now: Time,
        st: &mut CwndState,
        rs: &RateSample,
        ack: &AckInfo,
    ) -> bool {
        self.inner.cong_control(now, st, rs, ack)
    }

    fn set_state(&mut self, now: Time, st: &mut CwndState, new: CaState) {
        self.inner.set_state(now, st, new);
        let ended = matches!(self.ca_state, CaState::Recovery | CaState::Cwr)
            && matches!(new, CaState::Open | CaState::Disorder);
        if ended && self.full_rtt.is_none() && self.srtt.is_some() {
            self.full_rtt = self.srtt;
            self.last_high_queue_at = Some(now);
        }
        self.ca_state = new;
    }

    fn cwnd_event(&mut self, now: Time, st: &mut CwndState, ev: CwndEvent) {
        self.inner.cwnd_event(now, st, ev);
    }

    fn undo_cwnd(&mut self, now: Time, st: &CwndState, prior_cwnd: u32) -> u32 {
        self.inner.undo_cwnd(now, st, prior_cwnd)
    }

    fn on_packet_sent(&mut self, now: Time, st: &CwndState, sent: &SentInfo) {
        self.inner.on_packet_sent(now, st, sent);
    }

    fn wants_packet_sent(&self) -> bool {
        self.inner.wants_packet_sent()
    }

    fn on_packet_lost(&mut self, now: Time, st: &mut CwndState, lost: &LostInfo) {
        self.inner.on_packet_lost(now, st, lost);
    }

    fn ecn_requirement(&self) -> Option<EcnMode> {
        self.inner.ecn_requirement()
    }

    fn handles_ce(&self) -> bool {
        self.inner.handles_ce()
    }

    fn pacing_rate(&self) -> Option<u64> {
        self.inner.pacing_rate()
    }

    fn wants_pacing(&self) -> bool {
        self.inner.wants_pacing()
    }

    fn paces_now(&self) -> bool {
        self.inner.paces_now()
    }

    fn may_pace_itself(&self) -> bool {
        self.inner.may_pace_itself()
    }

    fn sets_gap_per_segment(&self) -> bool {
        self.inner.sets_gap_per_segment()
    }

    fn tso_segs(&self, st: &CwndState) -> Option<u32> {
        self.inner.tso_segs(st)
    }

    fn min_tso_segs(&self) -> Option<u32> {
        self.inner.min_tso_segs()
    }

    fn pacing_shift(&self) -> Option<u8> {
        self.inner.pacing_shift()
    }

    fn exit_recovery_on_partial_ack(&self) -> bool {
        self.inner.exit_recovery_on_partial_ack()
    }

    fn state(&self) -> &'static str {
        self.inner.state()
    }

    fn stats(&self, sink: StatSink<'_>) {
        self.inner.stats(sink);
        sink("abba_gate", if self.gate_open { 1.0 } else { 0.0 });
        sink("abba_added", u64_to_f64(self.added));
        sink("abba_recalibrations", u64_to_f64(self.recalibrations));
        if let Some(f) = self.full_rtt {
            sink("abba_full_rtt_ms", f.as_millis_f64());
        }
        if let Some(t) = self.rtt_threshold() {
            sink("abba_rtt_threshold_ms", t.as_millis_f64());
        }
    }
}
