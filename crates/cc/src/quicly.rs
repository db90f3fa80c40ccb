//! quicly's Reno and CUBIC (h2o/quicly `lib/cc-reno.c`, `lib/cc-cubic.c`): the QUIC stack's
//! conventions where they differ from Linux, as their own controllers `quicly_reno` and
//! `quicly_cubic` (**decision**: separate names rather than options of `reno`/`cubic`, so that
//! the Linux controllers keep their exact integer arithmetic and results, and a scenario states
//! which stack it models).
//!
//! Contract: window growth (`cong_avoid`) and the reduction (`ssthresh`); loss detection, "one
//! response per recovery episode" (quicly's `recovery_end` test) and setting cwnd = ssthresh
//! are the transport's (RFC 9002 order, or the Linux kit's with PRR).
//!
//! Differences from Linux, each from the quicly source named:
//! - The window is kept in bytes internally (`f64`, growth in fractions of an MTU); the
//!   transport sees whole segments: `st.cwnd = ⌊bytes / mss⌋` (rounded down, at least 1).
//!   When the transport changes `st.cwnd` itself (a reduction, PRR, an idle restart), the byte
//!   window restarts from `st.cwnd · mss`. The MTU of the growth rules is the segment (`mss`);
//!   quicly's 1472-byte cap on the initial window is the transport's business.
//! - Reduction (`cc_on_lost` of both files): cwnd × 0.5 at the first congestion event out of
//!   slow start (ssthresh still infinite: "without HyStart++, we overshoot by 2x"), else × β:
//!   0.7 for both Reno (`QUICLY_RENO_BETA`; note: quicly's Reno uses 0.7, not RFC 5681's
//!   0.5) and CUBIC (`QUICLY_CUBIC_BETA`); at least 2 segments (`QUICLY_MIN_CWND`). quicly
//!   master has no separate ECN response; here an ECN-CE reduction (`AckInfo::ce_reduction`)
//!   uses `beta_ecn`, default 0.85 (ABE, RFC 8511 §3) for CUBIC and 0.8 (RFC 8511's Reno
//!   value) for Reno; set it equal to `beta` for quicly master's behaviour.
//! - Reno growth (`reno_on_acked`): slow start adds the acknowledged bytes; congestion
//!   avoidance adds one MTU per cwnd of acknowledged bytes (a byte stash), i.e. Linux's
//!   `cong_avoid_ai(cwnd, acked)` in segments.
//! - CUBIC growth (`cubic_on_acked`, RFC 8312 in floating point): t = time since the congestion
//!   event (quicly's `avoidance_start`; the recovery period is included), W_cubic(t) =
//!   C·(t − K)³·MTU + W_max with K = ∛(W_max/MTU · (1 − β)/C) (note: K from W_max·(1−β), the
//!   RFC 8312 form, not from W_max − cwnd_epoch); W_est(t) = β·W_max + 3(1 − β)/(1 + β) · t/srtt ·
//!   MTU. If W_cubic(t) < W_est(t), cwnd = max(cwnd, W_est); else, with the target
//!   W_cubic(t + srtt), cwnd += (target/cwnd − 1) · MTU when target > cwnd. This increment is
//!   **per ACK** (quicly calls `cc_on_acked` once per ACK frame whatever it acknowledges), so
//!   the growth rate depends on the ACK frequency, as in quicly. Fast convergence: W_max =
//!   cwnd·(1 + β)/2 when cwnd is below the previous (unreduced) W_max (`w_last_max`).
//!   Idle (`cubic_on_sent`): when a segment leaves with nothing else in flight, the epoch
//!   start moves forward by the time since the previous send.
//! - quicly's `cc_on_persistent_congestion` is a no-op; here an RTO (`set_state(Loss)`) ends
//!   the CUBIC epoch (W_max kept), so that growth restarts from the transport's window.
//!
//! - ABBA (`abba`, quicly PR #689) wraps quicly's CUBIC as it wraps Linux's ([`crate::abba`]):
//!   the source's own pairing. Its K(cwnd) uses this controller's β and C.
//!
//! Not modelled: Jump Start and Rapid Start (quicly's own startup variants), and quicly's
//! growth of CUBIC's window when not cwnd-limited (its "TODO: respect cc_limited"): the
//! transports here call `cong_avoid` only when cwnd-limited.

use crate::{
    AckInfo, CaState, CongestionControl, CwndEvent, CwndState, INFINITE_SSTHRESH, SentInfo,
    StatSink, Time,
};

/// quicly `QUICLY_MIN_CWND`: the smallest window after a reduction, segments.
pub const QUICLY_MIN_CWND: u32 = 2;
/// quicly `QUICLY_CUBIC_C`.
pub const QUICLY_CUBIC_C: f64 = 0.4;

/// Which of quicly's controllers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum QuiclyKind {
    /// `lib/cc-reno.c`.
    Reno,
    /// `lib/cc-cubic.c`.
    Cubic,
}

/// Parameters of [`Quicly`] (the fields of [`crate::CcSpec::Quicly`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct QuiclyConfig {
    /// Reno or CUBIC.
    pub kind: QuiclyKind,
    /// β on a loss, per mille (700: `QUICLY_RENO_BETA`, `QUICLY_CUBIC_BETA`).
    pub beta_permille: u32,
    /// β on an ECN-CE reduction, per mille (CUBIC 850, Reno 800: RFC 8511 §3).
    pub beta_ecn_permille: u32,
    /// ABBA on top (CUBIC only; read by [`crate::CcSpec::build`], the controller itself
    /// ignores it).
    pub abba: crate::AbbaPolicy,
}

impl QuiclyConfig {
    /// The defaults of `kind`.
    #[must_use]
    pub fn new(kind: QuiclyKind) -> Self {
        QuiclyConfig {
            kind,
            beta_permille: 700,
            beta_ecn_permille: match kind {
                QuiclyKind::Reno => 800,
                QuiclyKind::Cubic => 850,
            },
            abba: crate::AbbaPolicy::OFF,
        }
    }
}

/// quicly's Reno or CUBIC.
#[derive(Clone, Debug)]
pub struct Quicly {
    cfg: QuiclyConfig,
    /// The window in bytes; `published` is what was last written to `st.cwnd`.
    cwnd_bytes: f64,
    published: u32,
    /// Reno's congestion-avoidance stash, bytes.
    stash: f64,
    /// CUBIC: W_max and the previous W_max (unreduced), bytes; K, seconds.
    w_max: f64,
    w_last_max: f64,
    k: f64,
    /// CUBIC: time of the last congestion event (`avoidance_start`).
    avoidance_start: Option<Time>,
    last_sent: Option<Time>,
    ca_state: CaState,
    in_slow_start: bool,
}

impl Quicly {
    /// A fresh controller.
    #[must_use]
    pub fn new(cfg: QuiclyConfig) -> Self {
        Quicly {
            cfg,
            cwnd_bytes: 0.0,
            published: 0,
            stash: 0.0,
            w_max: 0.0,
            w_last_max: 0.0,
            k: 0.0,
            avoidance_start: None,
            last_sent: None,
            ca_state: CaState::Open,
            in_slow_start: true,
        }
    }

    /// The byte window (before rounding to segments).
    #[must_use]
    pub fn cwnd_bytes(&self) -> f64 {
        self.cwnd_bytes
    }

    /// CUBIC's W_max in bytes.
    #[must_use]
    pub fn w_max_bytes(&self) -> f64 {
        self.w_max
    }

    /// CUBIC's K in seconds.
    #[must_use]
    pub fn k(&self) -> f64 {
        self.k
    }

    /// The parameters it was built with.
    #[must_use]
    pub fn config(&self) -> QuiclyConfig {
        self.cfg
    }

    fn beta(&self, ecn: bool) -> f64 {
        crate::cuback::beta_of(self.cfg.beta_permille, self.cfg.beta_ecn_permille, ecn)
    }

    /// Adopt the transport's window if it changed it since the last publication.
    fn sync(&mut self, st: &CwndState) {
        if st.cwnd != self.published {
            self.cwnd_bytes = f64::from(st.cwnd) * f64::from(st.mss);
            self.published = st.cwnd;
        }
    }

    /// Write the byte window to `st.cwnd` in whole segments (rounded down, ≥ 1, ≤ clamp).
    fn publish(&mut self, st: &mut CwndState) {
        let clamp = f64::from(st.cwnd_clamp);
        // The byte window never runs ahead of the clamp: a reduction from an unpublished byte
        // window above it would answer an ssthresh above the clamp.
        self.cwnd_bytes = self.cwnd_bytes.min(clamp * f64::from(st.mss.max(1)));
        let segs = (self.cwnd_bytes / f64::from(st.mss.max(1))).floor();
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "floor of a non-negative window clamped to cwnd_clamp first"
        )]
        let segs = segs.clamp(1.0, clamp) as u32;
        st.cwnd = segs;
        self.published = segs;
    }

    fn cubic_avoid(&mut self, now: Time, st: &CwndState, ack: &AckInfo) {
        let mtu = f64::from(st.mss);
        let start = *self.avoidance_start.get_or_insert(now);
        let t = now.saturating_since(start).as_secs_f64();
        let rtt = ack.srtt.map_or(0.0, |d| d.as_secs_f64());
        let beta = self.beta(false);
        let w_cubic = |t: f64| QUICLY_CUBIC_C * (t - self.k).powi(3) * mtu + self.w_max;
        let w_est = if rtt > 0.0 {
            self.w_max * beta + 3.0 * (1.0 - beta) / (1.0 + beta) * (t / rtt) * mtu
        } else {
            0.0
        };
        if w_cubic(t) < w_est {
            self.cwnd_bytes = self.cwnd_bytes.max(w_est);
        } else {
            let target = w_cubic(t + rtt);
            if target > self.cwnd_bytes {
                self.cwnd_bytes += (target / self.cwnd_bytes - 1.0) * mtu;
            }
        }
    }
}

impl CongestionControl for Quicly {
    fn name(&self) -> &'static str {
        match self.cfg.kind {
            QuiclyKind::Reno => "quicly_reno",
            QuiclyKind::Cubic => "quicly_cubic",
        }
    }

    fn init(&mut self, _now: Time, st: &mut CwndState) {
        *self = Quicly::new(self.cfg);
        self.sync(st);
        self.in_slow_start = st.in_slow_start();
    }

    fn cong_avoid(&mut self, now: Time, st: &mut CwndState, acked: u32, ack: &AckInfo) {
        if !ack.is_cwnd_limited {
            return;
        }
        self.sync(st);
        let bytes = f64::from(acked) * f64::from(st.mss);
        if st.in_slow_start() {
            // Both files: slow start adds the acknowledged bytes (ssthresh is a byte value in
            // quicly; here it is whole segments, so slow start stops at it).
            let cap = f64::from(st.ssthresh) * f64::from(st.mss);
            self.cwnd_bytes = (self.cwnd_bytes + bytes).min(cap.max(self.cwnd_bytes));
        } else {
            match self.cfg.kind {
                QuiclyKind::Reno => {
                    self.stash += bytes;
                    if self.stash >= self.cwnd_bytes {
                        let count = (self.stash / self.cwnd_bytes).floor();
                        self.stash -= count * self.cwnd_bytes;
                        self.cwnd_bytes += count * f64::from(st.mss);
                    }
                }
                QuiclyKind::Cubic => self.cubic_avoid(now, st, ack),
            }
        }
        self.publish(st);
        self.in_slow_start = st.in_slow_start();
    }

    fn ssthresh(&mut self, now: Time, st: &CwndState, ack: &AckInfo) -> u32 {
        self.sync(st);
        let ecn = ack.ce_reduction;
        let first = st.ssthresh == INFINITE_SSTHRESH;
        if self.cfg.kind == QuiclyKind::Cubic {
            self.avoidance_start = Some(now);
            self.w_max = self.cwnd_bytes;
            if self.w_max < self.w_last_max {
                self.w_last_max = self.w_max;
                self.w_max *= (1.0 + self.beta(ecn)) / 2.0;
            } else {
                self.w_last_max = self.w_max;
            }
            let mss = f64::from(st.mss.max(1));
            self.k = (self.w_max / mss * (1.0 - self.beta(false)) / QUICLY_CUBIC_C).cbrt();
        }
        let factor = if first { 0.5 } else { self.beta(ecn) };
        self.stash = 0.0;
        let bytes = self.cwnd_bytes * factor;
        let segs = (bytes / f64::from(st.mss.max(1))).floor();
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "floor of a non-negative window clamped to u32 first"
        )]
        let segs = segs.clamp(0.0, f64::from(u32::MAX)) as u32;
        let ss = segs.max(QUICLY_MIN_CWND);
        // The reduced byte window, which the transport will publish as `ss` segments.
        self.cwnd_bytes = bytes.max(f64::from(ss) * f64::from(st.mss));
        self.published = ss;
        ss
    }

    fn set_state(&mut self, _now: Time, st: &mut CwndState, new: CaState) {
        if new == CaState::Loss {
            self.avoidance_start = None;
        }
        self.ca_state = new;
        self.in_slow_start = st.in_slow_start();
    }

    fn cwnd_event(&mut self, _now: Time, st: &mut CwndState, _ev: CwndEvent) {
        self.in_slow_start = st.in_slow_start();
    }

    fn wants_packet_sent(&self) -> bool {
        self.cfg.kind == QuiclyKind::Cubic
    }

    /// `cubic_on_sent`: coming out of quiescence (this segment is the only one in flight),
    /// the epoch start moves forward by the time since the previous send.
    fn on_packet_sent(&mut self, now: Time, _st: &CwndState, sent: &SentInfo) {
        if sent.in_flight <= 1
            && let (Some(start), Some(last)) = (self.avoidance_start, self.last_sent)
        {
            let idle = now.saturating_since(last);
            self.avoidance_start = Some(start + idle);
        }
        self.last_sent = Some(now);
    }

    fn state(&self) -> &'static str {
        self.ca_state
            .state_name(self.in_slow_start.then_some("slow_start"))
    }

    fn stats(&self, sink: StatSink<'_>) {
        sink("cwnd_bytes", self.cwnd_bytes);
        if self.cfg.kind == QuiclyKind::Cubic {
            sink("w_max_bytes", self.w_max);
            sink("k_s", self.k);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Dur;

    const MSS: u32 = 1200;

    fn open_ack(srtt_ms: u64) -> AckInfo {
        AckInfo {
            is_cwnd_limited: true,
            srtt: Some(Dur::from_millis(srtt_ms)),
            ..AckInfo::default()
        }
    }

    /// Reductions (`cc_on_lost`): × 0.5 out of slow start, × 0.7 later, × β_ECN on CE (0.85
    /// CUBIC, 0.8 Reno), floor 2 segments.
    #[test]
    fn reductions_follow_quicly() {
        for (kind, ecn) in [(QuiclyKind::Cubic, 850), (QuiclyKind::Reno, 800)] {
            let mut cc = Quicly::new(QuiclyConfig::new(kind));
            let mut st = CwndState::new(100, MSS);
            cc.init(Time::ZERO, &mut st);
            let a = AckInfo::default();
            assert_eq!(cc.ssthresh(Time::ZERO, &st, &a), 50, "first exit halves");
            st.ssthresh = 50;
            st.cwnd = 100;
            assert_eq!(cc.ssthresh(Time::ZERO, &st, &a), 70);
            st.cwnd = 100;
            let ce = AckInfo {
                ce_reduction: true,
                ..a
            };
            assert_eq!(cc.ssthresh(Time::ZERO, &st, &ce), 100 * ecn / 1000);
            st.cwnd = 2;
            assert_eq!(cc.ssthresh(Time::ZERO, &st, &a), 2);
        }
    }

    /// Reno in congestion avoidance: +1 MTU per cwnd of acknowledged bytes (`reno_on_acked`'s
    /// stash), exactly one segment per window of single-segment ACKs.
    #[test]
    fn reno_adds_one_mtu_per_window() {
        let mut cc = Quicly::new(QuiclyConfig::new(QuiclyKind::Reno));
        let mut st = CwndState::new(100, MSS);
        st.ssthresh = 50;
        cc.init(Time::ZERO, &mut st);
        for k in 1..=5 {
            for _ in 0..st.cwnd {
                cc.cong_avoid(Time::ZERO, &mut st, 1, &open_ack(40));
            }
            assert_eq!(st.cwnd, 100 + k);
        }
    }

    /// CUBIC after a loss at W_max = 1000 segments, with a fixed 40 ms srtt and an ACK of 2
    /// segments every 40 µs (frequent ACKs): quicly's K is
    /// ∛(1000 · 0.3 / 0.4) ≈ 9.09 s and the window follows W_cubic(t + srtt) closely, as long
    /// as ACKs are frequent (each ACK closes the fraction (target − cwnd)/cwnd of the gap in
    /// MTUs). Checked: at t = K the window is within 1 % of W_max, and before K it is below
    /// W_cubic(t + srtt) + 1 segment (the target is never overshot by more than one
    /// increment).
    #[test]
    fn cubic_follows_the_curve_in_time() {
        let mut cc = Quicly::new(QuiclyConfig::new(QuiclyKind::Cubic));
        let mut st = CwndState::new(1000, MSS);
        st.ssthresh = 1000;
        cc.init(Time::ZERO, &mut st);
        let t0 = Time::ZERO + Dur::from_secs(1);
        let ss = cc.ssthresh(t0, &st, &AckInfo::default());
        assert_eq!(ss, 700);
        st.ssthresh = ss;
        st.cwnd = ss;
        let k = cc.k();
        assert!((k - (1000.0f64 * 0.3 / 0.4).cbrt()).abs() < 1e-9);
        let mss = f64::from(MSS);
        let mut now = t0;
        let step = Dur::from_micros(40);
        while now < t0 + Dur::from_secs_f64(k) {
            now += step;
            cc.cong_avoid(now, &mut st, 2, &open_ack(40));
            let t = (now - t0).as_secs_f64() + 0.040;
            let target = QUICLY_CUBIC_C * (t - k).powi(3) + 1000.0;
            assert!(cc.cwnd_bytes() / mss <= target.max(700.0) + 1.0, "at {t}");
        }
        let w = cc.cwnd_bytes() / mss;
        assert!((w - 1000.0).abs() / 1000.0 < 0.01, "at K: {w}");
        assert_eq!(
            st.cwnd,
            crate::num::f64_to_u32(cc.cwnd_bytes().div_euclid(mss))
        );
    }
}
