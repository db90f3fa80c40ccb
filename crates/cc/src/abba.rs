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
//!    Checked against the source text: PR #689's description gives the threshold
//!    as `(minRTT + previous_period_min) / 2`, floored at `minRTT + 2 ms`, as here; it is kept
//!    (**decision**). The author's later draft (kazuho/draft-kazuho-ccwg-abba, "Per-Period
//!    Minima") is a different design, not a reading of this one: an estimator over the
//!    completed periods' minima (smoothed − variance/2) in place of previous_period_min, the
//!    full_rtt guard measured from that floor instead of min_rtt, and samples taken during
//!    recovery left out of the period's minimum. With ten CUBIC flows on DSL the standing
//!    queue keeps every sample above this threshold (the gate opens in 6 of 800 samples of
//!    160 s; threshold 66.9 ms on average, RTT median 76.8 ms, full_rtt 79.2 ms), and the
//!    draft's guard, full_rtt more than 10 ms above its floor, would need period minima below
//!    69.2 ms, 7.6 ms under the median: in both designs a crowd without a drained queue
//!    leaves ABBA at stock CUBIC, which the draft states as intended ("the sender behaves as
//!    CUBIC throughout").
//! 2. **Gate on confirmed queue existence.** `full_rtt` is the smoothed RTT when the first
//!    recovery (a Recovery or CWR episode) ends, i.e. on `set_state` from Recovery/CWR to
//!    Open/Disorder while `full_rtt` is unknown. Unless policy 0x1 is set, acceleration also
//!    needs `full_rtt > min_rtt + 10 ms` and `full_rtt > 1.05 × latest RTT`.
//! 3. **Recalibration** (policy 0x2). `last_high_queue_at` is refreshed when the smoothed RTT
//!    reaches (min_rtt + full_rtt)/2 and whenever a CE mark arrives. A smoothed RTT within
//!    the floor band (at most min_rtt + 2 ms, [`THRESHOLD_MARGIN`]) is never a high-queue
//!    observation (**decision**): when a recovery that ended with an empty queue (a random
//!    loss cut slow start short) leaves full_rtt within 2 ms of min_rtt, the midpoint is at
//!    the floor, every sample would reach it, the full_rtt guard stays shut and recalibration
//!    would never come to learn full_rtt again; with the band, it does after 2 × K. `high_rtt_interval` is
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
//! whose growth is faster anyway), only on cwnd-limited ACKs (the ABBA draft's
//! `abba_cwnd` and recalibration test both require "congestion-window limited"). The inner
//! controller's own rule is kept: quicly's CUBIC grows on every ACK, cwnd-limited or not
//! ([`CongestionControl::grows_when_not_cwnd_limited`], forwarded), ABBA's term does not.

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
            ("quicly_cubic", 1) => "quicly_cubic_abba0x1",
            ("quicly_cubic", 2) => "quicly_cubic_abba",
            ("quicly_cubic", 3) => "quicly_cubic_abba0x3",
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

impl CubicCurve for crate::quicly::Quicly {
    fn k_at(&self, cwnd: u32) -> f64 {
        // quicly `cc-cubic.c`: C = QUICLY_CUBIC_C segments/s³, β = QUICLY_CUBIC_BETA.
        let cfg = self.config();
        let beta = crate::cuback::beta_of(cfg.beta_permille, cfg.beta_ecn_permille, false);
        (f64::from(cwnd) * (1.0 - beta) / crate::quicly::QUICLY_CUBIC_C).cbrt()
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
    /// The last (cwnd, K(cwnd)) computed: K is asked for on every cwnd-limited ACK and cwnd
    /// changes far less often, so the cube root is taken once per window.
    k_memo: Option<(u32, f64)>,
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
            k_memo: None,
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
    fn recalibration_due(&mut self, now: Time, st: &CwndState) -> bool {
        if !self.policy.recalibrate() || self.full_rtt.is_none() || st.in_slow_start() {
            return false;
        }
        let Some(last) = self.last_high_queue_at else {
            return false;
        };
        let k = match self.k_memo {
            Some((w, k)) if w == st.cwnd => k,
            _ => {
                let k = self.inner.k_at(st.cwnd);
                self.k_memo = Some((st.cwnd, k));
                k
            }
        };
        let interval = k * RECALIBRATE_INTERVALS;
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
            let s = u128::from(s.as_nanos());
            if s >= mid && s > u128::from((min + THRESHOLD_MARGIN).as_nanos()) {
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

    fn grows_when_not_cwnd_limited(&self) -> bool {
        self.inner.grows_when_not_cwnd_limited()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::Pipe;
    use crate::{Cuback, CubackConfig, CubicConfig, SlowStartKind};
    use proptest::prelude::*;

    const MSS: u32 = 1448;

    fn cubic() -> Cubic {
        Cubic::new(CubicConfig {
            slow_start: SlowStartKind::Standard,
            ..CubicConfig::default()
        })
    }

    /// A transport that calls the hooks in RFC 9002's order (the QUIC transport's): on a
    /// congestion event `ssthresh` once, cwnd = ssthresh at once, `set_state(Recovery)` (or
    /// `Cwr` for CE); `set_state(Open)` when the episode ends; per ACK `pkts_acked`, then
    /// `cong_avoid` in Open. The smoothed RTT follows RFC 6298 (α = 1/8).
    struct Quic<C> {
        cc: C,
        st: CwndState,
        now: Time,
        state: CaState,
        srtt: Option<Dur>,
        min_rtt: Option<Dur>,
        ce: u64,
        cwnd_limited: bool,
    }

    impl<C: CongestionControl> Quic<C> {
        fn new(mut cc: C, cwnd: u32, ssthresh: u32) -> Self {
            let mut st = CwndState::new(cwnd, MSS);
            st.ssthresh = ssthresh;
            cc.init(Time::ZERO, &mut st);
            Quic {
                cc,
                st,
                now: Time::ZERO,
                state: CaState::Open,
                srtt: None,
                min_rtt: None,
                ce: 0,
                cwnd_limited: true,
            }
        }

        fn info(&self, acked: u32, rtt: Option<Dur>) -> AckInfo {
            AckInfo {
                acked_sacked: acked,
                pkts_acked: acked,
                rtt,
                srtt: self.srtt,
                min_rtt: self.min_rtt,
                in_flight: self.st.cwnd,
                prior_in_flight: self.st.cwnd,
                is_cwnd_limited: self.cwnd_limited,
                ca_state: Some(self.state),
                total_delivered_ce: self.ce,
                ..AckInfo::default()
            }
        }

        /// An ACK `gap` after the last event, of `acked` segments with RTT `rtt`, `ce` of
        /// them CE-marked.
        fn ack(&mut self, acked: u32, rtt: Dur, gap: Dur, ce: u32) {
            self.now += gap;
            self.srtt = Some(self.srtt.map_or(rtt, |s| {
                Dur::from_nanos((s.as_nanos() * 7 + rtt.as_nanos()) / 8)
            }));
            self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
            self.ce += u64::from(ce);
            let a = self.info(acked, Some(rtt));
            self.cc.pkts_acked(self.now, &mut self.st, &a);
            if self.state == CaState::Open {
                self.cc.cong_avoid(self.now, &mut self.st, acked, &a);
            }
        }

        /// One window of single-segment ACKs spread over `rtt`.
        fn round(&mut self, rtt: Dur) {
            let n = self.st.cwnd;
            let gap = Dur::from_nanos(rtt.as_nanos() / u64::from(n));
            for _ in 0..n {
                self.ack(1, rtt, gap, 0);
            }
        }

        /// A congestion event (a loss, or a CE-count increase when `ce`): returns the
        /// controller's ssthresh.
        fn event(&mut self, ce: bool) -> u32 {
            let a = AckInfo {
                ce_reduction: ce,
                ..self.info(0, None)
            };
            let ss = self.cc.ssthresh(self.now, &self.st, &a);
            self.st.ssthresh = ss.max(2);
            self.st.cwnd = self.st.ssthresh;
            self.st.cwnd_cnt = 0;
            self.state = if ce { CaState::Cwr } else { CaState::Recovery };
            self.cc.set_state(self.now, &mut self.st, self.state);
            ss
        }

        /// The episode ends (a packet sent after it began is acknowledged).
        fn end(&mut self) {
            self.state = CaState::Open;
            self.cc.set_state(self.now, &mut self.st, CaState::Open);
        }
    }

    /// In congestion avoidance at 1000 segments: `before` rounds at `before_rtt` (the epoch
    /// the first loss ends: its minimum RTT becomes the previous period's), a loss with the
    /// smoothed RTT there (full_rtt ≈ `before_rtt` when the recovery ends), then `after` rounds
    /// at `after_rtt`. Returns the driver.
    fn scenario<C: CongestionControl>(
        cc: C,
        floor: Dur,
        before_rtt: Dur,
        after_rtt: Dur,
        after: u32,
    ) -> Quic<C> {
        let mut q = Quic::new(cc, 1000, 1000);
        q.cwnd_limited = true;
        q.ack(1, floor, Dur::ZERO, 0);
        for _ in 0..3 {
            q.round(before_rtt);
        }
        q.event(false);
        q.end();
        for _ in 0..after {
            q.round(after_rtt);
        }
        q
    }

    /// Acceleration needs (a) the latest RTT below the threshold (the floor band) and (b)
    /// unless 0x1, full_rtt > min_rtt + 10 ms and > 1.05 × latest RTT. Each case runs ABBA and
    /// the bare CUBIC on identical inputs and compares the windows: with a gate closed they
    /// must be identical (ABBA adds nothing); with both open ABBA must be ahead.
    #[test]
    fn acceleration_only_at_the_floor_and_with_the_full_rtt_gate() {
        let ms = Dur::from_millis;
        // (policy, before RTT, after RTT, accelerates)
        let cases = [
            // full_rtt 80 ms > 40 + 10 and > 42: open at the floor.
            (AbbaPolicy::ON, 80, 40, true),
            (AbbaPolicy(0x3), 80, 40, true),
            // Above the floor: period minimum 50, threshold min(max(40, 42), 52) = 42 ≤ 50.
            (AbbaPolicy::ON, 80, 50, false),
            (AbbaPolicy(0x1), 80, 50, false),
            // full_rtt 45 ms ≤ 40 + 10: the guard is closed, except under 0x1.
            (AbbaPolicy::ON, 45, 40, false),
            (AbbaPolicy(0x1), 45, 40, true),
            (AbbaPolicy(0x3), 45, 40, true),
        ];
        for (policy, before, after, accelerates) in cases {
            let abba = scenario(
                Abba::new(cubic(), policy),
                ms(40),
                ms(before),
                ms(after),
                20,
            );
            let bare = scenario(cubic(), ms(40), ms(before), ms(after), 20);
            let full = abba
                .cc
                .full_rtt()
                .expect("full_rtt learned at recovery end");
            assert!(full >= ms(before) - ms(1) && full <= ms(before), "{full:?}");
            if accelerates {
                assert!(
                    abba.st.cwnd > bare.st.cwnd + 100,
                    "{policy:?} {before}/{after}: {} vs {}",
                    abba.st.cwnd,
                    bare.st.cwnd
                );
            } else {
                assert_eq!(abba.st.cwnd, bare.st.cwnd, "{policy:?} {before}/{after}");
                assert_eq!(abba.cc.added(), 0);
            }
        }
        // Before any recovery full_rtt is unknown: the guard is closed unless 0x1.
        for (policy, accelerates) in [(AbbaPolicy::ON, false), (AbbaPolicy(0x1), true)] {
            let mut q = Quic::new(Abba::new(cubic(), policy), 1000, 1000);
            for _ in 0..10 {
                q.round(ms(40));
            }
            assert_eq!(q.cc.full_rtt(), None);
            // CUBIC before its first loss grows ≥ 5 % per RTT (`cnt` ≤ 20), more than ABBA's
            // 4.76 %, so the gate is what is checked here.
            assert_eq!(q.cc.gate_open(), accelerates, "{policy:?}");
        }
    }

    /// The extra growth is max(2 ms / rtt_threshold, 2.5 %) per RTT. RTT 40 ms after the loss
    /// (threshold = min_rtt + 2 ms = 42 ms, g = 4.76 %) and RTT 200 ms (threshold 202 ms,
    /// 2 ms/202 ms = 0.99 % < 2.5 %, so g = 2.5 %). The growth per round is measured on rounds
    /// 3–12 after the loss, against the same run of bare CUBIC: ABBA's rate must lie in
    /// [g − 0.2 %, g + r_cubic + 0.2 %], where r_cubic is bare CUBIC's own rate on those rounds
    /// (the two terms are combined by taking the larger window per ACK, so the combination is
    /// at least g and at most their sum) and 0.2 % covers the integer window (1 segment in
    /// 700–1500). The same for ABBA on quicly's CUBIC against bare quicly CUBIC.
    #[test]
    fn extra_growth_per_rtt_is_max_of_2ms_over_threshold_and_2_5_percent() {
        fn rate<C: CongestionControl>(q: &mut Quic<C>, rtt: Dur, rounds: u32) -> f64 {
            let w0 = f64::from(q.st.cwnd);
            for _ in 0..rounds {
                q.round(rtt);
            }
            (f64::from(q.st.cwnd) / w0).powf(1.0 / f64::from(rounds)) - 1.0
        }
        fn check<C: CongestionControl + CubicCurve + Clone + 'static>(
            mk: &dyn Fn() -> C,
            inner: Inner,
        ) {
            let ms = Dur::from_millis;
            for (floor, full, g) in [(40, 80, 2.0 / 42.0), (200, 260, MIN_GROWTH)] {
                let mut a = scenario(
                    Abba::new(mk(), AbbaPolicy::ON),
                    ms(floor),
                    ms(full),
                    ms(floor),
                    3,
                );
                let mut b = scenario(mk(), ms(floor), ms(full), ms(floor), 3);
                let thr = a.cc.rtt_threshold().unwrap();
                assert_eq!(thr, ms(floor + 2));
                let ra = rate(&mut a, ms(floor), 10);
                let rb = rate(&mut b, ms(floor), 10);
                eprintln!(
                    "{inner:?} floor {floor} ms: g {g:.4}, ABBA {ra:.4}/round, stock {rb:.4}/round"
                );
                assert!(
                    ra >= g - 0.002 && ra <= g + rb + 0.002,
                    "{inner:?}: {ra} vs g {g}"
                );
                // While accelerating (far above the bare controller's window), a loss and then
                // a CE mark still get the stock decrease of the window they find.
                assert!(a.cc.added() > 0 && a.cc.gate_open());
                for ce in [false, true] {
                    let pre = a.st;
                    let (lo, hi) = stock_range(inner, &pre, ce);
                    let ss = a.event(ce);
                    assert!(
                        lo <= ss && ss <= hi && a.st.cwnd == ss,
                        "{inner:?}: {ss} vs {lo}..={hi}"
                    );
                    a.end();
                }
            }
        }
        check(&cubic, Inner::Cubic);
        check(
            &|| {
                crate::quicly::Quicly::new(crate::quicly::QuiclyConfig::new(
                    crate::quicly::QuiclyKind::Cubic,
                ))
            },
            Inner::QuiclyCubic,
        );
    }

    /// The acceleration stops near 4.5 ms of standing queue (seed-systems.md §3.1: 2 ms of extra
    /// queue per round, and the RTT feedback lags one round). Pipe: base RTT 40 ms, a
    /// bottleneck of 10 000 segments/s (0.1 ms per segment, BDP 400); CUBIC, started at 500 in
    /// congestion avoidance (it grows ≥ 5 % per RTT before its first loss), loses at ≈ 550
    /// (a ≈ 15 ms queue, so full_rtt > min_rtt + 10 ms opens the guard) and restarts below
    /// the BDP (0.7 × 550 ≈ 385), with an empty queue. The queue is measured at every ACK on which ABBA added a
    /// segment, as (segments in flight − BDP) × 0.1 ms. Theory: ABBA grows while samples are
    /// below min_rtt + 2 ms; a sample reports the queue one RTT old, and one round at
    /// g = 2/42 adds 2 ms·(cwnd/BDP) ≈ 2.1 ms, so the last acceleration sees at most
    /// 2 + 2.1 ms ≈ 4.1 ms; bound 4.5 ms + 0.3 ms (3 segments: CUBIC's own growth in that round
    /// and the integer window). It must also have reached 2 ms (the gate closes only there).
    #[test]
    fn acceleration_self_limits_near_4_5_ms_of_queue() {
        let base = Dur::from_millis(40);
        let gap = Dur::from_micros(100);
        let mut st = CwndState::new(500, MSS);
        st.ssthresh = 500;
        let mut p = Pipe::new(Abba::new(cubic(), AbbaPolicy::ON), st);
        p.ack_gap = gap;
        p.prime(Dur::ZERO);
        let f = move |_t: Time| base;
        for _ in 0..1000 {
            p.step(&f);
        }
        p.fast_loss();
        assert!(p.cc.full_rtt().unwrap() > Dur::from_millis(52));
        let bdp = 400u64;
        let restart = p.st.cwnd;
        assert!(u64::from(restart) < bdp, "restart {restart}");
        let mut last_added = 0;
        let mut peak_at_accel = 0.0f64;
        let mut last_accel_t = None;
        p.run_until(p.now + Dur::from_secs(3), &f, &mut |p| {
            if p.cc.added() > last_added {
                last_added = p.cc.added();
                let q = (p.nxt - p.una).saturating_sub(bdp);
                let qd = crate::num::u64_to_f64(q) * gap.as_secs_f64() * 1000.0;
                peak_at_accel = peak_at_accel.max(qd);
                last_accel_t = Some(p.now);
            }
        });
        let end_queue =
            crate::num::u64_to_f64((p.nxt - p.una).saturating_sub(bdp)) * gap.as_secs_f64() * 1e3;
        eprintln!(
            "ABBA added {last_added} segments; queue at the last acceleration {peak_at_accel:.2} \
             ms (at {last_accel_t:?}); queue after 3 s {end_queue:.2} ms"
        );
        assert!(
            last_added > bdp - u64::from(restart),
            "ABBA must at least fill the gap to the BDP"
        );
        assert!((2.0..=4.8).contains(&peak_at_accel), "{peak_at_accel} ms");
    }

    /// Recalibration (policy 0x2): with the smoothed RTT below (min_rtt + full_rtt)/2 and no CE,
    /// after more than 2 × K(cwnd) since the last high-queue observation, cwnd is kept,
    /// ssthresh becomes infinite (slow start) and full_rtt is forgotten. The time is checked
    /// to the ACK: not before 2K, and on the first ACK after it (ACKs are ≤ 1 ms apart). With a
    /// CE mark every second (< 2K ≈ 12 s at 1000 segments), or without flag 0x2, it never
    /// happens.
    #[test]
    fn recalibration_after_two_high_rtt_intervals_without_a_high_queue() {
        let ms = Dur::from_millis;
        for (policy, ce_every_second, expect) in [
            (AbbaPolicy::ON, false, true),
            (AbbaPolicy::ON, true, false),
            (AbbaPolicy(0x1), false, false),
        ] {
            let mut q = scenario(Abba::new(cubic(), policy), ms(40), ms(80), ms(40), 0);
            let t_full = q.now;
            assert_eq!(q.cc.last_high_queue_at(), Some(t_full));
            let mut next_ce = t_full + Dur::from_secs(1);
            let mut fired = None;
            while q.now < t_full + Dur::from_secs(40) && fired.is_none() {
                let ce = u32::from(ce_every_second && q.now >= next_ce);
                if ce > 0 {
                    next_ce = q.now + Dur::from_secs(1);
                }
                let (w, last) = (q.st.cwnd, q.cc.last_high_queue_at().unwrap());
                let due = q.now + ms(1) - last;
                let k2 = 2.0 * q.cc.inner().k_at(w);
                q.ack(1, ms(40), ms(1), ce);
                if q.cc.recalibrations() > 0 {
                    fired = Some((w, due.as_secs_f64(), k2));
                    assert_eq!(q.st.ssthresh, INFINITE_SSTHRESH);
                    assert_eq!(q.cc.full_rtt(), None);
                    assert_eq!(q.cc.state(), "slow_start");
                    assert!(q.st.cwnd >= w, "cwnd kept: {w} -> {}", q.st.cwnd);
                } else if policy == AbbaPolicy::ON && !ce_every_second {
                    assert!(due.as_secs_f64() <= k2 + 0.001 || q.st.in_slow_start());
                }
            }
            if let Some((w, since, k2)) = fired {
                eprintln!(
                    "recalibrated at cwnd {w}: {since:.3} s after the last high queue, 2K = {k2:.3} s"
                );
                assert!(since > k2 && since <= k2 + 0.001 + 1e-9);
            }
            assert_eq!(fired.is_some(), expect, "{policy:?} ce={ce_every_second}");
        }
    }

    /// The floor band is never a high queue: a recovery that ends with the queue empty leaves
    /// full_rtt at 41 ms on a 40 ms floor, so the midpoint (40.5 ms) is inside the floor band
    /// and a flow running at 41 ms reaches it on every ACK. Counting that as a high queue
    /// would keep recalibration away for ever while the full_rtt guard (41 ≤ 40 + 10) stays
    /// shut. Without a sample above min_rtt + 2 ms recalibration comes after 2K, and the next
    /// recovery learns full_rtt again; a flow running at 43 ms (above the band and the
    /// midpoint) keeps refreshing and is never recalibrated.
    #[test]
    fn a_full_rtt_at_the_floor_does_not_lock_recalibration_out() {
        let ms = Dur::from_millis;
        for (running, expect) in [(ms(41), true), (ms(43), false)] {
            let mut q = scenario(
                Abba::new(cubic(), AbbaPolicy::ON),
                ms(40),
                ms(41),
                running,
                0,
            );
            let full = q.cc.full_rtt().unwrap();
            assert!(full <= ms(41) && full > ms(40), "{full:?}");
            let t_full = q.now;
            while q.now < t_full + Dur::from_secs(40) && q.cc.recalibrations() == 0 {
                q.ack(1, running, ms(1), 0);
                assert!(!q.cc.gate_open(), "the guard is shut at full_rtt {full:?}");
            }
            assert_eq!(q.cc.recalibrations() > 0, expect, "running at {running:?}");
            if expect {
                assert_eq!(q.cc.full_rtt(), None);
                q.round(ms(60));
                q.event(false);
                q.end();
                assert!(q.cc.full_rtt().unwrap() > ms(55), "learned again");
            }
        }
    }

    /// CE marks count as high-queue observations, also inside recovery: an ACK with a CE mark
    /// while the state is Recovery refreshes `last_high_queue_at`; so does an ECN-CE
    /// reduction.
    #[test]
    fn ce_marks_are_high_queue_observations_also_in_recovery() {
        let ms = Dur::from_millis;
        let mut q = scenario(
            Abba::new(cubic(), AbbaPolicy::ON),
            ms(40),
            ms(80),
            ms(40),
            2,
        );
        let before = q.cc.last_high_queue_at().unwrap();
        q.event(false);
        assert_eq!(q.state, CaState::Recovery);
        q.ack(1, ms(40), ms(500), 0);
        assert_eq!(
            q.cc.last_high_queue_at(),
            Some(before),
            "no CE, srtt low: no refresh"
        );
        q.ack(1, ms(40), ms(500), 1);
        assert_eq!(
            q.cc.last_high_queue_at(),
            Some(q.now),
            "CE in recovery refreshes"
        );
        q.end();
        q.ack(1, ms(40), ms(700), 0);
        let t = q.now;
        q.event(true);
        assert_eq!(
            q.cc.last_high_queue_at(),
            Some(t),
            "an ECN-CE reduction refreshes"
        );
    }

    /// Which inner controller a property run wraps (for its stock decrease).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum Inner {
        Cubic,
        Cuback,
        QuiclyCubic,
    }

    /// The stock decrease of the inner controllers, from the pre-event window alone: Linux
    /// CUBIC max(⌊cwnd·717/1024⌋, 2); Cuback and quicly's CUBIC max(⌊cwnd/2⌋, 2) out of slow
    /// start (ssthresh infinite), else max(⌊cwnd·β⌋, 2) with β 0.7, or 0.85 for CE.
    fn stock(inner: Inner, st: &CwndState, ce: bool) -> u32 {
        let w = u64::from(st.cwnd);
        let s = if inner == Inner::Cubic {
            w * 717 / 1024
        } else if st.ssthresh == INFINITE_SSTHRESH {
            w / 2
        } else if ce {
            w * 850 / 1000
        } else {
            w * 700 / 1000
        };
        u32::try_from(s).unwrap().max(2)
    }

    /// The range the stock answer may take: exactly [`stock`], except quicly's CUBIC, which
    /// reduces its byte window (up to one segment above cwnd · mss, the fraction its growth
    /// has not yet published) in f64 (β = 0.7 is a hair below 7/10, so an exact product may
    /// floor one segment lower): one segment either side.
    fn stock_range(inner: Inner, st: &CwndState, ce: bool) -> (u32, u32) {
        let s = stock(inner, st, ce);
        if inner != Inner::QuiclyCubic {
            return (s, s);
        }
        let up = CwndState {
            cwnd: st.cwnd + 1,
            ..*st
        };
        (s.saturating_sub(1).max(2), stock(inner, &up, ce))
    }

    /// Around the wrapper: each `ssthresh` answer is compared with a clone of the inner
    /// controller asked the same question and with [`stock`]; the result is recorded.
    #[derive(Clone, Debug)]
    struct Probe<C> {
        abba: Abba<C>,
        inner: Inner,
        /// (answer, clone's answer, the formula's range) of every ssthresh call since the
        /// last check.
        answers: Vec<(u32, u32, (u32, u32))>,
        /// The last answer.
        last: Option<u32>,
    }

    impl<C: CongestionControl + CubicCurve + Clone + 'static> Probe<C> {
        fn new(inner: C, kind: Inner, policy: AbbaPolicy) -> Self {
            Probe {
                abba: Abba::new(inner, policy),
                inner: kind,
                answers: Vec::new(),
                last: None,
            }
        }
    }

    impl<C: CongestionControl + CubicCurve + Clone + 'static> CongestionControl for Probe<C> {
        fn name(&self) -> &'static str {
            self.abba.name()
        }
        fn init(&mut self, now: Time, st: &mut CwndState) {
            self.abba.init(now, st);
        }
        fn pkts_acked(&mut self, now: Time, st: &mut CwndState, ack: &AckInfo) {
            self.abba.pkts_acked(now, st, ack);
        }
        fn cong_avoid(&mut self, now: Time, st: &mut CwndState, acked: u32, ack: &AckInfo) {
            self.abba.cong_avoid(now, st, acked, ack);
        }
        fn grows_when_not_cwnd_limited(&self) -> bool {
            self.abba.grows_when_not_cwnd_limited()
        }
        fn ssthresh(&mut self, now: Time, st: &CwndState, ack: &AckInfo) -> u32 {
            let clone = self.abba.inner().clone().ssthresh(now, st, ack);
            let formula = stock_range(self.inner, st, ack.ce_reduction);
            let got = self.abba.ssthresh(now, st, ack);
            self.answers.push((got, clone, formula));
            self.last = Some(got);
            got
        }
        fn set_state(&mut self, now: Time, st: &mut CwndState, new: CaState) {
            self.abba.set_state(now, st, new);
        }
        fn cwnd_event(&mut self, now: Time, st: &mut CwndState, ev: CwndEvent) {
            self.abba.cwnd_event(now, st, ev);
        }
        fn undo_cwnd(&mut self, now: Time, st: &CwndState, prior_cwnd: u32) -> u32 {
            self.abba.undo_cwnd(now, st, prior_cwnd)
        }
        fn state(&self) -> &'static str {
            self.abba.state()
        }
    }

    #[derive(Clone, Debug)]
    enum Ev {
        Ack {
            rtt_ms: u64,
            gap_us: u64,
            ce: bool,
            limited: bool,
        },
        Loss,
        Ce,
        End,
        Rto,
        Undo,
    }

    fn ev() -> impl Strategy<Value = Ev> {
        prop_oneof![
            // RTTs mostly at the floor band (40–42 ms) or a queue above it, so that ABBA's
            // gates open and close often.
            12 => (
                prop_oneof![6 => 40u64..=42, 3 => 43u64..=100, 1 => 1u64..=300],
                0u64..=200_000,
                proptest::bool::weighted(0.05),
                proptest::bool::weighted(0.9),
            )
                .prop_map(|(rtt_ms, gap_us, ce, limited)| Ev::Ack { rtt_ms, gap_us, ce, limited }),
            1 => Just(Ev::Loss),
            1 => Just(Ev::Ce),
            2 => Just(Ev::End),
            1 => Just(Ev::Rto),
            1 => Just(Ev::Undo),
        ]
    }

    fn check_answers<C>(p: &mut Probe<C>) -> Result<(), TestCaseError> {
        for &(got, clone, (lo, hi)) in &p.answers {
            prop_assert_eq!(got, clone, "wrapper vs inner clone");
            prop_assert!(
                lo <= got && got <= hi,
                "wrapper {} vs stock formula {}..={}",
                got,
                lo,
                hi
            );
        }
        p.answers.clear();
        Ok(())
    }

    /// Linux kit order (Pipe: PRR, cwnd = ssthresh at the recovery point, CWR on ECE, RTO,
    /// undo): every reduction's ssthresh is the stock answer, and when a Recovery or CWR
    /// episode ends cwnd equals that ssthresh.
    fn run_linux<C: CongestionControl + CubicCurve + Clone + 'static>(
        inner: C,
        kind: Inner,
        policy: AbbaPolicy,
        iw: u32,
        events: &[Ev],
    ) -> Result<(), TestCaseError> {
        let mut p = Pipe::new(Probe::new(inner, kind, policy), CwndState::new(iw, MSS));
        let mut rtt = Dur::from_millis(40);
        for e in events {
            let before = p.rec.state();
            match *e {
                Ev::Ack {
                    rtt_ms,
                    gap_us,
                    ce,
                    limited,
                } => {
                    rtt = Dur::from_millis(rtt_ms);
                    p.cwnd_limited = limited;
                    p.ack_ce(2, u32::from(ce), rtt, Dur::from_micros(gap_us));
                }
                Ev::Loss => p.loss(),
                Ev::Ce => p.ack_ce(1, 1, rtt, Dur::ZERO),
                Ev::End if before != CaState::Open => {
                    // The recovery point reached without an ACK of data (so no growth on
                    // the same ACK): the kit sets cwnd = ssthresh.
                    p.end_reduction();
                    if matches!(before, CaState::Recovery | CaState::Cwr) {
                        let ss = p.cc.last.expect("a reduction answered ssthresh");
                        prop_assert_eq!(p.st.cwnd, ss);
                    }
                }
                Ev::Rto => p.rto(),
                Ev::Undo if before != CaState::Open => p.undo(),
                _ => {}
            }
            check_answers(&mut p.cc)?;
            prop_assert!(p.st.cwnd >= 1 && p.st.ssthresh >= 2);
        }
        Ok(())
    }

    /// RFC 9002 order (the QUIC transport): cwnd = ssthresh at once; checked right after the
    /// event.
    fn run_quic<C: CongestionControl + CubicCurve + Clone + 'static>(
        inner: C,
        kind: Inner,
        policy: AbbaPolicy,
        iw: u32,
        events: &[Ev],
    ) -> Result<(), TestCaseError> {
        let mut q = Quic::new(Probe::new(inner, kind, policy), iw, INFINITE_SSTHRESH);
        for e in events {
            match *e {
                Ev::Ack {
                    rtt_ms,
                    gap_us,
                    ce,
                    limited,
                } => {
                    q.cwnd_limited = limited;
                    q.ack(
                        2,
                        Dur::from_millis(rtt_ms),
                        Dur::from_micros(gap_us),
                        u32::from(ce),
                    );
                }
                Ev::Loss | Ev::Ce if q.state == CaState::Open => {
                    let pre = q.st;
                    let ce = matches!(e, Ev::Ce);
                    let ss = q.event(ce);
                    let (lo, hi) = stock_range(kind, &pre, ce);
                    prop_assert!(lo <= ss && ss <= hi, "{} vs {}..={}", ss, lo, hi);
                    prop_assert_eq!(q.st.cwnd, ss);
                }
                Ev::End if q.state != CaState::Open => q.end(),
                _ => {}
            }
            check_answers(&mut q.cc)?;
        }
        Ok(())
    }

    use proptest::test_runner::TestCaseError;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        /// Every loss and every CE mark gets exactly the stock multiplicative decrease,
        /// whatever ABBA's state and policy, for CUBIC, Cuback and quicly's CUBIC, in both
        /// calling orders.
        #[test]
        fn every_decrease_is_the_stock_one(
            bits in 0u8..=3,
            which in 0u8..=2,
            iw in 2u32..=2000,
            events in proptest::collection::vec(ev(), 1..600),
        ) {
            let policy = AbbaPolicy::from_bits(bits).unwrap();
            match which {
                0 => {
                    run_linux(cubic(), Inner::Cubic, policy, iw, &events)?;
                    run_quic(cubic(), Inner::Cubic, policy, iw, &events)?;
                }
                1 => {
                    let c = || Cuback::new(CubackConfig::default());
                    run_linux(c(), Inner::Cuback, policy, iw, &events)?;
                    run_quic(c(), Inner::Cuback, policy, iw, &events)?;
                }
                _ => {
                    let c = || {
                        crate::quicly::Quicly::new(crate::quicly::QuiclyConfig::new(
                            crate::quicly::QuiclyKind::Cubic,
                        ))
                    };
                    run_linux(c(), Inner::QuiclyCubic, policy, iw, &events)?;
                    run_quic(c(), Inner::QuiclyCubic, policy, iw, &events)?;
                }
            }
        }
    }
}
