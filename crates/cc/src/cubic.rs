//! CUBIC (RFC 9438) as Linux implements it in `net/ipv4/tcp_cubic.c`.
//!
//! Contract: window growth (`cong_avoid`), the loss response (`ssthresh`), RTT sampling for
//! `delay_min` and the slow-start detector (`pkts_acked`), the epoch reset on RTO (`set_state`),
//! the idle epoch shift (`cwnd_event(TxStart)`) and undo (`undo_cwnd`). Loss detection, PRR and
//! `cwnd = ssthresh` at recovery exit are the transport's.
//!
//! Arithmetic: Linux's integer fixed point, reproduced rule by rule (written from Linux
//! `net/ipv4/tcp_cubic.c` and RFC 9438, not copied):
//! - time since the epoch start, plus `delay_min` (the target is one RTT ahead), is expressed in
//!   units of 1/1024 s (`BICTCP_HZ` = 10); Linux counts it in jiffies, here it is computed from
//!   nanoseconds, so there is no jiffy rounding;
//! - `K` (`bic_K`) = ∛(`cube_factor` · (W_max − cwnd)) in 1/1024 s, with
//!   `cube_factor` = 2^40 / (`bic_scale` · 10); Linux evaluates the cube root with a lookup
//!   table and one Newton step (`cubic_root`), here it is the exact integer floor cube root;
//! - target = origin ± (`bic_scale`·10 · |t − K|³) >> 40, i.e. C ≈ 0.4004 segments/s³;
//! - `cnt` (ACKs per +1 segment) = cwnd / (target − cwnd), or 100·cwnd when target ≤ cwnd;
//!   at most 20 before the first loss (`last_max_cwnd` = 0); the Reno estimate grows one segment
//!   per `(cwnd · beta_scale) >> 3` ACKs (`beta_scale` = 15, i.e. α ≈ 8/15 per RTT) and caps
//!   `cnt` at cwnd / (estimate − cwnd); finally `cnt ≥ 2`, so cwnd grows at most 1.5× per RTT;
//! - `cnt` is recomputed at most once per jiffy (HZ = 1000 is assumed: 1 ms), and not at all
//!   while cwnd is unchanged and less than HZ/32 jiffies (31 ms) have passed.
//!
//! Loss response (`bictcp_recalc_ssthresh`): end the epoch; W_max = cwnd, or
//! cwnd · (1 + β)/2 with fast convergence when cwnd is below the previous W_max; return
//! `max(cwnd · 717/1024, 2)`. RTO (`bictcp_state`, `TCP_CA_Loss`): reset all CUBIC state
//! (including W_max and `delay_min`) and re-arm HyStart.
//!
//! Undo: RFC 9438 §4.9 — the CUBIC state saved at the last `ssthresh` call (W_max, K, epoch,
//! Reno estimate, `delay_min`) is restored, and cwnd becomes `max(cwnd, prior_cwnd)` (Linux
//! `tcp_reno_undo_cwnd`). Linux (since 4.13) restores only cwnd; the RFC restore is chosen so that
//! a spurious loss leaves no trace on the curve.
//!
//! Idle (`bictcp_cwnd_event`, `CA_EVENT_TX_START`): the epoch start moves forward by the idle
//! time `now − lsndtime`, but not beyond `now`. The trait gives no `lsndtime`, so the last send
//! time is estimated as the latest `now − rtt` over ACKs with an RTT sample (the send time of the
//! segment that produced the sample), or the last `TxStart`.
//!
//! Samples (`cubictcp_acked`): RTT samples are ignored during the first second of an epoch
//! (right after recovery); `delay_min` is the minimum accepted sample.
//!
//! ns-3 (`CubicConfig::for_ns3`): the rules where ns-3.37's `TcpCubic` (`tcp-cubic.cc`)
//! differs from Linux are fields of [`CubicConfig`], Linux's by default: HyStart's rules,
//! the RTT fed to `delay_min`, the sample discard after an epoch start, the `cnt` update gates,
//! one segment per ACK at most, uncapped slow start, the Reno-friendly region and the idle
//! epoch shift. The same as Linux there: β, C, fast convergence, `cnt` = 100·cwnd on a flat
//! target, the 20 cap before the first loss and the minimum 2, the loss and RTO resets.
//!
//! Slow start: pluggable ([`SlowStartKind`]); Linux's default is HyStart. After a HyStart or
//! HyStart++ exit without loss, W_max is still 0, so the first epoch starts with K = 0 and the
//! origin at the current cwnd (RFC 9438 §4.10).

use crate::abba::AbbaPolicy;
use crate::hystart::HyStartRules;
use crate::num::{f64_to_u64, u64_to_f64};
use crate::slowstart::SlowStart;
use crate::{
    AckInfo, CaState, CongestionControl, CwndEvent, CwndState, Dur, SlowStartKind, StatSink, Time,
};

/// Denominator of β (Linux `BICTCP_BETA_SCALE` = 1024).
pub const BICTCP_BETA_SCALE: u32 = 1024;
/// β = 717/1024 ≈ 0.7002 (Linux module parameter `beta`; RFC 9438 §4.6 β_cubic = 0.7).
pub const BETA: u32 = 717;
/// C = `bic_scale` · 10 / 1024 ≈ 0.4004 (Linux module parameter `bic_scale` = 41; RFC 9438
/// §4.2 C = 0.4).
pub const BIC_SCALE: u64 = 41;
/// log2 of the time unit of the cubic function: 1/1024 s (Linux `BICTCP_HZ` = 10).
pub const BICTCP_HZ: u32 = 10;
/// `cube_rtt_scale` = `bic_scale` · 10 (Linux `cubictcp_register`).
pub const CUBE_RTT_SCALE: u64 = BIC_SCALE * 10;
/// Reno-estimate scale: 8·(1024+717)/3/(1024−717) = 15 in integer arithmetic (Linux
/// `beta_scale`, `cubictcp_register`; RFC 9438 §4.3 α_cubic = 3(1−β)/(1+β)).
pub const BETA_SCALE: u32 = 8 * (BICTCP_BETA_SCALE + BETA) / 3 / (BICTCP_BETA_SCALE - BETA);
/// 2^(10 + 3·BICTCP_HZ) / (`bic_scale` · 10) (Linux `cube_factor`, `cubictcp_register`).
pub const CUBE_FACTOR: u64 = (1u64 << (10 + 3 * BICTCP_HZ)) / CUBE_RTT_SCALE;
/// Shift that turns `cube_rtt_scale · offs³` into segments (Linux `10 + 3*BICTCP_HZ`).
const CUBE_SHIFT: u32 = 10 + 3 * BICTCP_HZ;
/// One jiffy: `cnt` is recomputed at most once per jiffy (Linux `bictcp_update`; HZ = 1000 is
/// assumed, the common `CONFIG_HZ_1000`).
pub const JIFFY: Dur = Dur::from_millis(1);
/// With cwnd unchanged, `bictcp_update` does nothing for HZ/32 jiffies (31 ms at HZ = 1000).
pub const CNT_HOLD: Dur = Dur::from_millis(1000 / 32);
/// Upper bound of `cnt` before the first loss, i.e. ≥ 5 % growth per RTT (Linux
/// `bictcp_update`: `if (ca->last_max_cwnd == 0 && ca->cnt > 20) ca->cnt = 20`).
pub const CNT_MAX_BEFORE_LOSS: u32 = 20;
/// Lower bound of `cnt`: at most 1.5× growth per RTT (Linux `bictcp_update`:
/// `ca->cnt = max(ca->cnt, 2U)`).
pub const CNT_MIN: u32 = 2;
/// `cnt` factor when the target is not above cwnd: one segment per 100 windows (Linux
/// `bictcp_update`: `ca->cnt = 100 * cwnd`).
const CNT_FLAT_FACTOR: u32 = 100;
/// RTT samples are ignored this long after an epoch starts (Linux `cubictcp_acked`: "Discard
/// delay samples right after fast recovery", `HZ` jiffies = 1 s).
pub const DELAY_DISCARD_AFTER_EPOCH: Dur = Dur::from_secs(1);
/// Lower bound of ssthresh after a reduction (Linux `bictcp_recalc_ssthresh`: `max(…, 2U)`;
/// RFC 9438 §4.6).
pub const CUBIC_MIN_SSTHRESH: u32 = 2;
/// Smallest RTT sample used (Linux `cubictcp_acked`: `if (delay == 0) delay = 1` µs).
const MIN_DELAY: Dur = Dur::from_micros(1);
/// |t − K| is clamped here (2^38/1024 s ≈ 8.5 years) so that the cube cannot overflow.
const MAX_OFFS: u64 = 1 << 38;

/// CUBIC parameters (the fields of [`crate::CcSpec::Cubic`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CubicConfig {
    /// Slow-start variant (Linux default: HyStart).
    pub slow_start: SlowStartKind,
    /// Fast convergence (Linux `fast_convergence` = 1; RFC 9438 §4.7).
    pub fast_convergence: bool,
    /// Reno-friendly region (Linux `tcp_friendliness` = 1; RFC 9438 §4.3).
    pub tcp_friendliness: bool,
    /// β in 1/1024 (Linux module parameter `beta` = [`BETA`] = 717 ≈ 0.7, RFC 9438 §4.6):
    /// the window after a loss is `cwnd · beta / 1024`.
    pub beta: u32,
    /// C in Linux units (module parameter `bic_scale` = [`BIC_SCALE`] = 41): C =
    /// `bic_scale · 10 / 1024` segments/s³ (0.4004 ≈ RFC 9438 §5's 0.4).
    pub bic_scale: u32,
    /// ABBA on top ([`crate::abba`]; read by [`crate::CcSpec::build`], which wraps the
    /// controller when it is on; the controller itself ignores it). Default off.
    pub abba: AbbaPolicy,
    /// HyStart's rules (Linux, or ns-3.37 `TcpCubic::HystartUpdate`; see
    /// [`HyStartRules`]). Used when `slow_start` is HyStart.
    pub hystart_rules: HyStartRules,
    /// RTT fed to `delay_min` and HyStart: Linux the ACK's own sample (`cubictcp_acked`,
    /// `sample->rtt_us`); ns-3 the smoothed RTT on every ACK (`TcpSocketBase` calls
    /// `PktsAcked(…, m_tcb->m_lastRtt)`, and `m_lastRtt` is `m_rtt->GetEstimate()`, set in
    /// `TcpSocketBase::EstimateRtt`).
    pub rtt_source: RttSource,
    /// RTT samples are ignored this long after an epoch starts: Linux 1 s
    /// ([`DELAY_DISCARD_AFTER_EPOCH`], `cubictcp_acked`); ns-3 10 ms (`TcpCubic::PktsAcked`,
    /// attribute `CubicDelta`).
    pub delay_discard: Dur,
    /// `cnt` recomputation gates of `bictcp_update` (at most once per jiffy, and not while cwnd
    /// is unchanged for 31 ms): Linux on; ns-3 off (`TcpCubic::Update` runs on every ACK).
    pub update_gates: bool,
    /// Congestion-avoidance increase: `false` = Linux `tcp_cong_avoid_ai` (every whole `cnt`
    /// of credit adds a segment, and credit beyond `cnt` at a smaller `cnt` is dropped);
    /// `true` = ns-3 `TcpCubic::IncreaseWindow` (at most one segment per ACK, `m_cWndCnt -=
    /// cnt`, credit kept).
    pub ai_one_per_ack: bool,
    /// Slow start of the `standard`/`hystart` variants: `false` = Linux `tcp_slow_start`
    /// (cwnd + acked up to ssthresh, the rest goes to congestion avoidance); `true` = ns-3
    /// `TcpCubic::IncreaseWindow` (cwnd += acked, not capped at ssthresh; nothing left for
    /// congestion avoidance on that ACK).
    pub slow_start_uncapped: bool,
    /// Shift the epoch by the idle time when sending restarts (Linux `bictcp_cwnd_event`,
    /// `CA_EVENT_TX_START`); ns-3's `TcpCubic` has no `CwndEvent`, so off.
    pub idle_epoch_shift: bool,
}

/// Which RTT a delay-sensitive controller reads on an ACK (see [`CubicConfig::rtt_source`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum RttSource {
    /// The ACK's own RTT sample, when it has one (Linux).
    #[default]
    Sample,
    /// The smoothed RTT after this ACK, on every ACK (ns-3's `m_lastRtt`).
    Smoothed,
}

impl RttSource {
    /// The RTT this source gives for `ack`.
    #[must_use]
    pub fn of(self, ack: &AckInfo) -> Option<Dur> {
        match self {
            RttSource::Sample => ack.rtt,
            RttSource::Smoothed => ack.srtt,
        }
    }
}

impl Default for CubicConfig {
    fn default() -> Self {
        CubicConfig {
            slow_start: SlowStartKind::HyStart,
            fast_convergence: true,
            tcp_friendliness: true,
            beta: BETA,
            bic_scale: u32::try_from(BIC_SCALE).unwrap_or(u32::MAX),
            abba: AbbaPolicy::OFF,
            hystart_rules: HyStartRules::LINUX,
            rtt_source: RttSource::Sample,
            delay_discard: DELAY_DISCARD_AFTER_EPOCH,
            update_gates: true,
            ai_one_per_ack: false,
            slow_start_uncapped: false,
            idle_epoch_shift: true,
        }
    }
}

impl CubicConfig {
    /// This configuration as ns-3.37's `TcpCubic` (`src/internet/model/tcp-cubic.cc`) runs it:
    /// ns-3's HyStart rules, smoothed RTTs, a 10 ms sample discard, `cnt` recomputed on every
    /// ACK, at most one segment per ACK, uncapped slow start, no Reno-friendly region (ns-3
    /// has none: `TcpCubic::Update` returns the cubic `cnt` only) and no idle epoch shift.
    /// Slow start, β, C, fast convergence and ABBA are kept. ns-3's β = 0.7 and C = 0.4 are
    /// Linux's 717/1024 and 410/1024 to 0.2 %; its K = ∛((W_max − cwnd)/C) in floating point
    /// is the same curve.
    #[must_use]
    pub fn for_ns3(self) -> Self {
        CubicConfig {
            tcp_friendliness: false,
            hystart_rules: HyStartRules::NS3,
            rtt_source: RttSource::Smoothed,
            delay_discard: NS3_CUBIC_DELTA,
            update_gates: false,
            ai_one_per_ack: true,
            slow_start_uncapped: true,
            idle_epoch_shift: false,
            ..self
        }
    }
}

/// ns-3.37 `TcpCubic` attribute `CubicDelta` = 10 ms: RTT samples are discarded this long after
/// an epoch starts (`TcpCubic::PktsAcked`).
pub const NS3_CUBIC_DELTA: Dur = Dur::from_millis(10);

/// What Linux `cubictcp_register` derives from the module parameters `beta` and `bic_scale`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Derived {
    /// `beta_scale`: ACKs per Reno-estimate segment, ×8 ([`BETA_SCALE`] for the defaults).
    beta_scale: u32,
    /// `cube_rtt_scale` = `bic_scale · 10`.
    cube_rtt_scale: u64,
    /// `cube_factor` = 2^(10 + 3·HZ) / `cube_rtt_scale` ([`CUBE_FACTOR`] for the defaults).
    cube_factor: u64,
}

impl Derived {
    /// `cubictcp_register`. The scenario layer keeps `beta` in 1..1024 and `bic_scale` ≥ 1.
    fn new(cfg: &CubicConfig) -> Self {
        let beta = cfg.beta.clamp(1, BICTCP_BETA_SCALE - 1);
        let cube_rtt_scale = u64::from(cfg.bic_scale.max(1)) * 10;
        Derived {
            beta_scale: 8 * (BICTCP_BETA_SCALE + beta) / 3 / (BICTCP_BETA_SCALE - beta),
            cube_rtt_scale,
            cube_factor: (1u64 << CUBE_SHIFT) / cube_rtt_scale,
        }
    }
}

/// The CUBIC fields of Linux `struct bictcp` that `bictcp_reset` clears.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct BicState {
    /// ACKs per one-segment increase (`cnt`).
    cnt: u32,
    /// W_max in segments (`last_max_cwnd`); 0 before the first loss.
    last_max_cwnd: u32,
    /// cwnd at the last `cnt` computation (`last_cwnd`).
    last_cwnd: u32,
    /// Time of the last `cnt` computation (`last_time`).
    last_time: Time,
    /// Origin (plateau) of the cubic function in segments (`bic_origin_point`).
    origin_point: u32,
    /// K in 1/1024 s (`bic_K`).
    bic_k: u32,
    /// Minimum accepted RTT sample (`delay_min`; `None` = Linux 0).
    delay_min: Option<Dur>,
    /// Start of the current epoch (`epoch_start`; `None` = Linux 0).
    epoch_start: Option<Time>,
    /// ACKs counted towards the Reno estimate (`ack_cnt`).
    ack_cnt: u32,
    /// Reno-friendly estimate W_est in segments (`tcp_cwnd`).
    tcp_cwnd: u32,
}

/// The CUBIC controller.
#[derive(Clone, Debug)]
pub struct Cubic {
    cfg: CubicConfig,
    derived: Derived,
    bic: BicState,
    /// State saved at the last `ssthresh`, for undo (RFC 9438 §4.9).
    saved: Option<BicState>,
    slow_start: SlowStart,
    ca_state: CaState,
    /// Estimate of Linux `lsndtime` (see the module documentation).
    last_send: Time,
    /// Whether cwnd < ssthresh at the last hook (for [`CongestionControl::state`]).
    in_slow_start: bool,
}

impl Cubic {
    /// A fresh CUBIC controller.
    #[must_use]
    pub fn new(cfg: CubicConfig) -> Self {
        Cubic {
            cfg,
            derived: Derived::new(&cfg),
            bic: BicState::default(),
            saved: None,
            slow_start: Self::slow_start_of(&cfg),
            ca_state: CaState::Open,
            last_send: Time::ZERO,
            in_slow_start: true,
        }
    }

    /// The configured slow start, with the configured HyStart rules.
    fn slow_start_of(cfg: &CubicConfig) -> SlowStart {
        let mut ss = SlowStart::new(cfg.slow_start);
        ss.set_hystart_rules(cfg.hystart_rules);
        ss
    }

    /// The configuration.
    #[must_use]
    pub fn config(&self) -> CubicConfig {
        self.cfg
    }

    /// W_max in segments (`last_max_cwnd`), 0 before the first loss.
    #[must_use]
    pub fn w_max(&self) -> u32 {
        self.bic.last_max_cwnd
    }

    /// K of the current epoch (`bic_K`), converted to a duration.
    #[must_use]
    pub fn k(&self) -> Dur {
        Dur::from_nanos((u64::from(self.bic.bic_k) * 1_000_000_000) >> BICTCP_HZ)
    }

    /// Start of the current epoch, if one is running.
    #[must_use]
    pub fn epoch_start(&self) -> Option<Time> {
        self.bic.epoch_start
    }

    /// Current `cnt`: ACKs per one-segment increase.
    #[must_use]
    pub fn cnt(&self) -> u32 {
        self.bic.cnt
    }

    /// Reno-friendly estimate W_est (`tcp_cwnd`).
    #[must_use]
    pub fn reno_estimate(&self) -> u32 {
        self.bic.tcp_cwnd
    }

    /// The minimum accepted RTT sample (`delay_min`).
    #[must_use]
    pub fn delay_min(&self) -> Option<Dur> {
        self.bic.delay_min
    }

    /// The slow start in use.
    #[must_use]
    pub fn slow_start(&self) -> &SlowStart {
        &self.slow_start
    }

    /// Linux `bictcp_update`: recompute `cnt` for `cwnd` after `acked` more segments.
    fn update(&mut self, now: Time, cwnd: u32, acked: u32) {
        let d = self.derived;
        let b = &mut self.bic;
        b.ack_cnt = b.ack_cnt.saturating_add(acked);
        let gates = self.cfg.update_gates;
        if gates && b.last_cwnd == cwnd && now.saturating_since(b.last_time) <= CNT_HOLD {
            return;
        }
        let same_jiffy = gates
            && b.epoch_start.is_some()
            && now.as_nanos() / JIFFY.as_nanos() == b.last_time.as_nanos() / JIFFY.as_nanos();
        if !same_jiffy {
            b.last_cwnd = cwnd;
            b.last_time = now;
            let epoch = match b.epoch_start {
                Some(e) => e,
                None => {
                    b.epoch_start = Some(now);
                    b.ack_cnt = acked;
                    b.tcp_cwnd = cwnd;
                    if b.last_max_cwnd <= cwnd {
                        b.bic_k = 0;
                        b.origin_point = cwnd;
                    } else {
                        let x = d
                            .cube_factor
                            .saturating_mul(u64::from(b.last_max_cwnd - cwnd));
                        b.bic_k = u32::try_from(cbrt_floor(x)).unwrap_or(u32::MAX);
                        b.origin_point = b.last_max_cwnd;
                    }
                    now
                }
            };
            // t in 1/1024 s, one delay_min ahead.
            let elapsed = now.saturating_since(epoch) + b.delay_min.unwrap_or(Dur::ZERO);
            let t = u64::try_from((u128::from(elapsed.as_nanos()) << BICTCP_HZ) / 1_000_000_000)
                .unwrap_or(u64::MAX);
            let k = u64::from(b.bic_k);
            let offs = u128::from(t.abs_diff(k).min(MAX_OFFS));
            let delta = (u128::from(d.cube_rtt_scale) * offs * offs * offs) >> CUBE_SHIFT;
            let delta = u32::try_from(delta).unwrap_or(u32::MAX);
            let target = if t < k {
                b.origin_point.saturating_sub(delta)
            } else {
                b.origin_point.saturating_add(delta)
            };
            b.cnt = if target > cwnd {
                cwnd / (target - cwnd)
            } else {
                cwnd.saturating_mul(CNT_FLAT_FACTOR)
            };
            if b.last_max_cwnd == 0 {
                b.cnt = b.cnt.min(CNT_MAX_BEFORE_LOSS);
            }
        }
        if self.cfg.tcp_friendliness {
            // One segment of W_est per (cwnd · beta_scale) >> 3 ACKs.
            let per_seg = cwnd.saturating_mul(d.beta_scale) >> 3;
            if per_seg > 0 && b.ack_cnt > per_seg {
                let n = (b.ack_cnt - 1) / per_seg;
                b.ack_cnt -= n * per_seg;
                b.tcp_cwnd = b.tcp_cwnd.saturating_add(n);
            }
            if b.tcp_cwnd > cwnd {
                let max_cnt = cwnd / (b.tcp_cwnd - cwnd);
                b.cnt = b.cnt.min(max_cnt);
            }
        }
        b.cnt = b.cnt.max(CNT_MIN);
    }
}

/// Exact ⌊∛x⌋ (Linux approximates it in `cubic_root`).
fn cbrt_floor(x: u64) -> u64 {
    let mut r = f64_to_u64(u64_to_f64(x).cbrt()); // a first guess, corrected below
    let cube = |v: u64| u128::from(v) * u128::from(v) * u128::from(v);
    while r > 0 && cube(r) > u128::from(x) {
        r -= 1;
    }
    while cube(r + 1) <= u128::from(x) {
        r += 1;
    }
    r
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }

    /// `cubictcp_init`: reset CUBIC and HyStart state.
    fn init(&mut self, now: Time, st: &mut CwndState) {
        self.bic = BicState::default();
        self.saved = None;
        self.slow_start = Self::slow_start_of(&self.cfg);
        self.ca_state = CaState::Open;
        self.last_send = now;
        self.in_slow_start = st.in_slow_start();
    }

    /// `cubictcp_acked`: `delay_min` and the slow-start detector.
    fn pkts_acked(&mut self, now: Time, st: &mut CwndState, ack: &AckInfo) {
        if let Some(rtt) = ack.rtt {
            self.last_send = self
                .last_send
                .max(Time(now.as_nanos().saturating_sub(rtt.as_nanos())));
        }
        let fresh_epoch = self
            .bic
            .epoch_start
            .is_some_and(|e| now.saturating_since(e) < self.cfg.delay_discard);
        let sample = self
            .cfg
            .rtt_source
            .of(ack)
            .filter(|_| !fresh_epoch)
            .map(|d| d.max(MIN_DELAY));
        if let Some(d) = sample {
            self.bic.delay_min = Some(self.bic.delay_min.map_or(d, |m| m.min(d)));
        }
        self.slow_start
            .on_ack(now, st, ack, sample, self.bic.delay_min);
        self.in_slow_start = st.in_slow_start();
    }

    /// `cubictcp_cong_avoid`.
    fn cong_avoid(&mut self, now: Time, st: &mut CwndState, acked: u32, ack: &AckInfo) {
        if !ack.is_cwnd_limited {
            return;
        }
        let mut acked = acked;
        if st.in_slow_start() {
            let plain = matches!(
                self.cfg.slow_start,
                SlowStartKind::Standard | SlowStartKind::HyStart
            );
            acked = if self.cfg.slow_start_uncapped && plain {
                // ns-3 `TcpCubic::IncreaseWindow`: cwnd += segmentsAcked, segmentsAcked = 0.
                st.cwnd = st.cwnd.saturating_add(acked).min(st.cwnd_clamp);
                0
            } else {
                self.slow_start.grow(st, acked, ack)
            };
        }
        if acked > 0 && !st.in_slow_start() {
            self.update(now, st.cwnd, acked);
            if self.cfg.ai_one_per_ack {
                // ns-3 `TcpCubic::IncreaseWindow`: one segment once m_cWndCnt ≥ cnt.
                st.cwnd_cnt = st.cwnd_cnt.saturating_add(acked);
                if st.cwnd_cnt >= self.bic.cnt {
                    st.cwnd_cnt -= self.bic.cnt;
                    st.cwnd = st.cwnd.saturating_add(1).min(st.cwnd_clamp);
                }
            } else {
                st.cong_avoid_ai(self.bic.cnt, acked);
            }
        }
        self.in_slow_start = st.in_slow_start();
    }

    /// `bictcp_recalc_ssthresh`.
    fn ssthresh(&mut self, _now: Time, st: &CwndState, ack: &AckInfo) -> u32 {
        self.saved = Some(self.bic);
        let startup = self.slow_start.on_congestion(st, ack);
        let cwnd = st.cwnd;
        let beta = self.cfg.beta.clamp(1, BICTCP_BETA_SCALE - 1);
        self.bic.epoch_start = None;
        self.bic.last_max_cwnd = if self.cfg.fast_convergence && cwnd < self.bic.last_max_cwnd {
            let w = u64::from(cwnd) * u64::from(BICTCP_BETA_SCALE + beta)
                / u64::from(2 * BICTCP_BETA_SCALE);
            u32::try_from(w).unwrap_or(u32::MAX)
        } else {
            cwnd
        };
        if let Some(ss) = startup {
            return ss; // Careful Resume's Safe Retreat (W_max and the epoch as for any loss)
        }
        let ss = u64::from(cwnd) * u64::from(beta) / u64::from(BICTCP_BETA_SCALE);
        u32::try_from(ss)
            .unwrap_or(u32::MAX)
            .max(CUBIC_MIN_SSTHRESH)
    }

    /// `bictcp_state`: on `TCP_CA_Loss`, reset everything and re-arm HyStart.
    fn set_state(&mut self, _now: Time, st: &mut CwndState, new: CaState) {
        if new == CaState::Loss {
            self.bic = BicState::default();
            self.slow_start.on_rto();
        }
        self.ca_state = new;
        self.in_slow_start = st.in_slow_start();
    }

    /// `bictcp_cwnd_event`: after idle, shift the epoch so the curve does not jump.
    fn cwnd_event(&mut self, now: Time, st: &mut CwndState, ev: CwndEvent) {
        if ev == CwndEvent::TxStart {
            if let Some(e) = self.bic.epoch_start.filter(|_| self.cfg.idle_epoch_shift) {
                let idle = now.saturating_since(self.last_send);
                if idle > Dur::ZERO {
                    self.bic.epoch_start = Some((e + idle).min(now));
                }
            }
            self.last_send = now;
        }
        self.in_slow_start = st.in_slow_start();
    }

    crate::slowstart::forward_slow_start_hooks!();

    /// RFC 9438 §4.9 state restore, cwnd per `tcp_reno_undo_cwnd`.
    fn undo_cwnd(&mut self, _now: Time, st: &CwndState, prior_cwnd: u32) -> u32 {
        if let Some(saved) = self.saved.take() {
            self.bic = saved;
        }
        st.cwnd.max(prior_cwnd)
    }

    fn state(&self) -> &'static str {
        self.ca_state
            .state_name(self.in_slow_start.then(|| self.slow_start.state()))
    }

    fn stats(&self, sink: StatSink<'_>) {
        let b = &self.bic;
        sink("w_max", f64::from(b.last_max_cwnd));
        sink("k_s", self.k().as_secs_f64());
        sink("origin_point", f64::from(b.origin_point));
        sink("cnt", f64::from(b.cnt));
        sink("reno_cwnd", f64::from(b.tcp_cwnd));
        sink("ack_cnt", f64::from(b.ack_cnt));
        sink("in_epoch", if b.epoch_start.is_some() { 1.0 } else { 0.0 });
        if let Some(e) = b.epoch_start {
            sink("epoch_start_s", e.as_secs_f64());
        }
        if let Some(d) = b.delay_min {
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
    use crate::num::usize_to_f64;

    const MSS: u32 = 1448;

    fn standard() -> CubicConfig {
        CubicConfig {
            slow_start: SlowStartKind::Standard,
            ..CubicConfig::default()
        }
    }

    /// C in segments/s³ as Linux's integers give it: 410/1024.
    const C: f64 = 410.0 / 1024.0;

    fn ca_state(cwnd: u32) -> CwndState {
        let mut st = CwndState::new(cwnd, MSS);
        st.ssthresh = cwnd;
        st
    }

    #[test]
    fn linux_derived_constants() {
        assert_eq!(BETA_SCALE, 15);
        assert_eq!(CUBE_FACTOR, (1u64 << 40) / 410);
        assert_eq!(
            Derived::new(&CubicConfig::default()),
            Derived {
                beta_scale: BETA_SCALE,
                cube_rtt_scale: CUBE_RTT_SCALE,
                cube_factor: CUBE_FACTOR
            }
        );
        for x in [0u64, 1, 7, 8, 9, 26, 27, 28, 1 << 40, u64::MAX] {
            let r = cbrt_floor(x);
            assert!(u128::from(r).pow(3) <= u128::from(x));
            assert!(u128::from(r + 1).pow(3) > u128::from(x));
        }
    }

    /// Loss at W_max ≈ 1000 with a fixed 40 ms RTT, one ACK per segment, always cwnd-limited.
    /// Theory (RFC 9438 §4.2 with Linux's β and C): cwnd restarts at β·W_max ≈ 700 and returns
    /// to W_max at K = ∛(W_max(1−β)/C) ≈ 9.08 s.
    /// Linux's integer target is origin ∓ ⌊C·|t−K|³⌋, which equals W_max whenever
    /// C·|t−K|³ < 1, i.e. for |t−K| < ∛(1/C) ≈ 1.36 s: cwnd sits on a plateau at W_max centred on
    /// K (shifted by the one-`delay_min` look-ahead, 40 ms, and about one RTT of lag). So the
    /// checks are: the plateau's midpoint is within ±10 % of K (the plateau is symmetric, so the
    /// expected error is ~1 RTT); cwnd first reaches W_max at K − ∛(1/C) − RTT within ±0.25 s
    /// (one RTT of lag plus the 31 ms `cnt` hold, with margin).
    /// Shape: cwnd increments over consecutive 2 s windows shrink before K (concave: theory
    /// 157, 90, 41, 11 segments) and grow after K (convex: 10, 38, 85); the margins between
    /// windows are many segments, far above integer noise. Every round grows at most 1.5×.
    #[test]
    fn returns_to_w_max_at_k_concave_then_convex() {
        let rtt = Dur::from_millis(40);
        let mut p = Pipe::new(Cubic::new(standard()), ca_state(1000));
        p.prime(rtt);
        let f = move |_t: Time| rtt;
        for _ in 0..5 {
            p.step(&f);
        }
        p.fast_loss();
        let w_max = p.cc.w_max();
        let restart = p.st.cwnd;
        assert!((1000..=1001).contains(&w_max));
        assert_eq!(restart, w_max * 717 / 1024);
        let k_theory = (f64::from(w_max - restart) / C).cbrt();
        let t_loss = p.now;

        let mut reached: Option<f64> = None;
        let mut last_at_or_below: f64 = 0.0;
        let mut at_boundaries = vec![f64::from(restart)];
        let mut round_end = p.nxt;
        let mut round_cwnd = p.st.cwnd;
        let mut max_round_ratio = 0.0f64;
        let mut each = |p: &Pipe<Cubic>| {
            let t = (p.now - t_loss).as_secs_f64();
            if reached.is_none() && p.st.cwnd >= w_max {
                reached = Some(t);
            }
            if p.st.cwnd <= w_max {
                last_at_or_below = t;
            }
            if t >= 2.0 * usize_to_f64(at_boundaries.len()) {
                at_boundaries.push(f64::from(p.st.cwnd));
            }
            if p.una >= round_end {
                // cnt ≥ 2 allows cwnd/2 per round, +1 for the carried counter.
                assert!(
                    p.st.cwnd <= round_cwnd + round_cwnd / 2 + 1,
                    "round grew {round_cwnd} -> {}",
                    p.st.cwnd
                );
                max_round_ratio = max_round_ratio.max(f64::from(p.st.cwnd) / f64::from(round_cwnd));
                round_end = p.nxt;
                round_cwnd = p.st.cwnd;
            }
        };
        p.run_until(t_loss + Dur::from_secs(16), &f, &mut each);

        // The controller's own K agrees with theory (floor cube root in 1/1024 s).
        assert!(
            (p.cc.k().as_secs_f64() - k_theory).abs() < 0.002,
            "K {:?}",
            p.cc.k()
        );
        let reached = reached.expect("cwnd never returned to W_max");
        let midpoint = (reached + last_at_or_below) / 2.0;
        assert!(
            (midpoint - k_theory).abs() <= 0.1 * k_theory,
            "W_max plateau [{reached:.2}, {last_at_or_below:.2}] s, K = {k_theory:.2} s"
        );
        let predicted = k_theory - (1.0 / C).cbrt() - rtt.as_secs_f64();
        assert!(
            (reached - predicted).abs() <= 0.25,
            "reached W_max at {reached:.2} s, predicted {predicted:.2} s"
        );
        let inc: Vec<f64> = at_boundaries.windows(2).map(|w| w[1] - w[0]).collect();
        assert_eq!(inc.len(), 8, "{at_boundaries:?}");
        // Windows [0,2) … [6,8) lie before K, [10,12) … [14,16) after it.
        for i in 0..3 {
            assert!(inc[i + 1] < inc[i], "not concave before K: {inc:?}");
        }
        for i in 5..7 {
            assert!(inc[i + 1] > inc[i], "not convex after K: {inc:?}");
        }
        assert!(inc[7] > 30.0, "convex growth too weak: {inc:?}");
        assert!(max_round_ratio <= 1.5 + 1.0 / 700.0);
    }

    /// After a long period in which the sender was not cwnd-limited, the cubic target (measured
    /// from the epoch start) is far above cwnd, so `cnt` would be 0; the clamp `cnt ≥ 2` limits
    /// growth to 1.5× per round (+1 segment for the carried counter). The test also checks that
    /// the clamp actually binds (some round grows by ≥ 1.4×), so it can fail if it is removed.
    #[test]
    fn growth_never_exceeds_one_and_a_half_per_rtt() {
        let rtt = Dur::from_millis(100);
        let f = move |_t: Time| rtt;
        let mut p = Pipe::new(Cubic::new(standard()), ca_state(20));
        p.prime(rtt);
        p.run_until(Time::ZERO + Dur::from_millis(500), &f, &mut |_| {});
        assert!(p.cc.epoch_start().is_some());
        p.cwnd_limited = false;
        p.run_until(Time::ZERO + Dur::from_secs(10), &f, &mut |_| {});
        p.cwnd_limited = true;
        let mut round_end = p.nxt;
        let mut round_cwnd = p.st.cwnd;
        let mut best = 0.0f64;
        p.run_until(Time::ZERO + Dur::from_secs(12), &f, &mut |p| {
            if p.una >= round_end {
                assert!(
                    p.st.cwnd <= round_cwnd + round_cwnd / 2 + 1,
                    "round grew {round_cwnd} -> {}",
                    p.st.cwnd
                );
                best = best.max(f64::from(p.st.cwnd) / f64::from(round_cwnd));
                round_end = p.nxt;
                round_cwnd = p.st.cwnd;
            }
        });
        assert!(
            best >= 1.4,
            "the 1.5x clamp never bound (best round ratio {best:.2})"
        );
    }

    /// Fast convergence (RFC 9438 §4.7; `bictcp_recalc_ssthresh`): a loss below the previous
    /// W_max sets W_max = cwnd·(1+β)/2 = 800·1741/2048 = 680 (integer), else W_max = cwnd.
    #[test]
    fn fast_convergence_lowers_w_max() {
        for (fc, expect) in [(true, 680), (false, 800)] {
            let mut cc = Cubic::new(CubicConfig {
                fast_convergence: fc,
                ..standard()
            });
            let mut st = ca_state(1000);
            let a = AckInfo::default();
            assert_eq!(cc.ssthresh(Time::ZERO, &st, &a), 700);
            assert_eq!(cc.w_max(), 1000);
            st.cwnd = 800;
            assert_eq!(cc.ssthresh(Time::ZERO, &st, &a), 560);
            assert_eq!(cc.w_max(), expect, "fast_convergence={fc}");
            st.cwnd = 2;
            assert_eq!(cc.ssthresh(Time::ZERO, &st, &a), 2, "floor of 2 segments");
        }
    }

    /// RTT 1 ms, loss at W = 20: K = ∛(6/C) ≈ 2.47 s = 2466 RTTs, so the cubic curve alone
    /// stays below 20 for the 200 RTTs simulated (≈ 15.4 segments). The Reno-friendly estimate
    /// grows α = 3(1−β)/(1+β) ≈ 0.53 per RTT, i.e. ≈ 106 segments in 200 RTTs. cwnd must keep
    /// up with it: ≥ 90 % of the estimate's growth (cwnd trails W_est by about one segment, and
    /// Linux's integer `beta_scale` = 15 gives 8/15 ≥ α, so 10 % is ample slack). Without
    /// `tcp_friendliness`, cwnd stays below the old W_max.
    #[test]
    fn reno_friendly_region_dominates_at_small_rtt_and_window() {
        let rtt = Dur::from_millis(1);
        let f = move |_t: Time| rtt;
        let beta = 717.0 / 1024.0;
        let alpha = 3.0 * (1.0 - beta) / (1.0 + beta);
        for friendly in [true, false] {
            let cfg = CubicConfig {
                tcp_friendliness: friendly,
                ..standard()
            };
            let mut p = Pipe::new(Cubic::new(cfg), ca_state(20));
            p.prime(rtt);
            for _ in 0..3 {
                p.step(&f);
            }
            p.fast_loss();
            assert_eq!(p.cc.w_max(), 20);
            let start = p.st.cwnd;
            assert_eq!(start, 14);
            let t0 = p.now;
            let rounds = 200.0;
            p.run_until(t0 + Dur::from_millis(200), &f, &mut |_| {});
            let cwnd = f64::from(p.st.cwnd);
            if friendly {
                let reno = f64::from(start) + alpha * rounds;
                assert!(
                    cwnd >= f64::from(start) + 0.9 * alpha * rounds,
                    "cwnd {cwnd} vs Reno estimate {reno:.1}"
                );
                assert!(
                    cwnd <= reno + 0.1 * alpha * rounds + 2.0,
                    "cwnd {cwnd} above Reno {reno}"
                );
            } else {
                assert!(
                    cwnd < 20.0,
                    "pure cubic should still be below W_max: {cwnd}"
                );
            }
        }
    }

    /// RTO (`bictcp_state`, `TCP_CA_Loss`) clears W_max and `delay_min`; an undo restores the
    /// state saved at the reduction (RFC 9438 §4.9) and returns max(cwnd, prior_cwnd).
    #[test]
    fn rto_resets_state_and_undo_restores_it() {
        let mut cc = Cubic::new(standard());
        let mut st = ca_state(1000);
        let a = AckInfo {
            rtt: Some(Dur::from_millis(30)),
            ..AckInfo::default()
        };
        cc.pkts_acked(Time::ZERO, &mut st, &a);
        assert_eq!(cc.delay_min(), Some(Dur::from_millis(30)));
        st.ssthresh = cc.ssthresh(Time::ZERO, &st, &a);
        cc.cwnd_event(Time::ZERO, &mut st, CwndEvent::Loss);
        cc.set_state(Time::ZERO, &mut st, CaState::Loss);
        st.cwnd = 1;
        assert_eq!(cc.w_max(), 0);
        assert_eq!(cc.delay_min(), None);
        assert_eq!(cc.state(), "loss");
        let restored = cc.undo_cwnd(Time::ZERO, &st, 1000);
        assert_eq!(restored, 1000);
        assert_eq!(cc.w_max(), 0, "state before the first loss had W_max 0");
        assert_eq!(cc.delay_min(), Some(Dur::from_millis(30)));
        // Second reduction, then undo: W_max goes back to the pre-reduction value.
        st.cwnd = 900;
        st.ssthresh = cc.ssthresh(Time::ZERO, &st, &a);
        assert_eq!(cc.w_max(), 900);
        st.cwnd = 1200;
        st.ssthresh = cc.ssthresh(Time::ZERO, &st, &a);
        assert_eq!(cc.w_max(), 1200);
        cc.undo_cwnd(Time::ZERO, &st, 1200);
        assert_eq!(cc.w_max(), 900);
    }

    /// `CA_EVENT_TX_START` moves the epoch start forward by the idle time, never past now.
    /// Last send = ACK time − RTT sample = 2.00 − 0.04 = 1.96 s; TxStart at 7 s: shift 5.04 s.
    #[test]
    fn idle_shifts_the_epoch() {
        let mut cc = Cubic::new(standard());
        let mut st = ca_state(100);
        let a = AckInfo {
            rtt: Some(Dur::from_millis(40)),
            is_cwnd_limited: true,
            ..AckInfo::default()
        };
        let t1 = Time::ZERO + Dur::from_secs(1);
        cc.cong_avoid(t1, &mut st, 1, &a);
        assert_eq!(cc.epoch_start(), Some(t1));
        cc.pkts_acked(Time::ZERO + Dur::from_secs(2), &mut st, &a);
        let t7 = Time::ZERO + Dur::from_secs(7);
        cc.cwnd_event(t7, &mut st, CwndEvent::TxStart);
        assert_eq!(cc.epoch_start(), Some(t1 + Dur::from_millis(5040)));
        // Clamp: with the last send (0 s, at init) before the epoch start (1 s), the shift would
        // put the epoch at 1 + 3 = 4 s, after now (3 s); it stops at now.
        let mut cc = Cubic::new(standard());
        cc.init(Time::ZERO, &mut st);
        cc.cong_avoid(t1, &mut st, 1, &a);
        let t3 = Time::ZERO + Dur::from_secs(3);
        cc.cwnd_event(t3, &mut st, CwndEvent::TxStart);
        assert_eq!(cc.epoch_start(), Some(t3));
    }

    /// Before the first loss `cnt` ≤ 20 (≥ 5 % growth per RTT) even where the curve is flat.
    #[test]
    fn cnt_is_at_most_20_before_the_first_loss() {
        let mut cc = Cubic::new(CubicConfig {
            tcp_friendliness: false,
            ..standard()
        });
        let mut st = ca_state(1000);
        let a = AckInfo {
            is_cwnd_limited: true,
            ..AckInfo::default()
        };
        cc.cong_avoid(Time::ZERO, &mut st, 1, &a);
        assert_eq!(cc.cnt(), 20);
        // After a loss the clamp is gone: just after the reduction to 700 the concave curve is
        // nearly flat (target 701), so cnt = 700 / (701 − 700) = 700.
        st.ssthresh = cc.ssthresh(Time::ZERO, &st, &a);
        st.cwnd = st.ssthresh;
        cc.cong_avoid(Time::ZERO + Dur::from_millis(5), &mut st, 1, &a);
        assert_eq!(cc.cnt(), 700);
    }

    /// CUBIC with HyStart++ under an RTT step (40 → 60 ms at 0.4 s): passes through CSS, then
    /// congestion avoidance with ssthresh = cwnd; with no loss yet, the first epoch has K = 0 and
    /// its origin at the current cwnd (RFC 9438 §4.10).
    #[test]
    fn hystart_pp_exit_starts_the_curve_at_cwnd_with_k_zero() {
        let f = |t: Time| {
            if t < Time::ZERO + Dur::from_millis(400) {
                Dur::from_millis(40)
            } else {
                Dur::from_millis(60)
            }
        };
        let cfg = CubicConfig {
            slow_start: SlowStartKind::HyStartPlusPlus,
            ..standard()
        };
        let mut p = Pipe::new(Cubic::new(cfg), CwndState::new(10, MSS));
        p.prime(Dur::from_millis(40));
        let mut saw_css = false;
        p.run_until(Time::ZERO + Dur::from_secs(2), &f, &mut |p| {
            saw_css |= p.cc.state() == "css";
        });
        assert!(saw_css);
        assert_eq!(p.cc.state(), "cong_avoid");
        assert_ne!(p.st.ssthresh, INFINITE_SSTHRESH);
        assert_eq!(p.cc.w_max(), 0);
        assert_eq!(p.cc.k(), Dur::ZERO);
        assert!(p.cc.epoch_start().is_some());
    }

    /// Default CUBIC (Linux HyStart) behind a 1000 packet/s bottleneck with 40 ms base RTT
    /// (BDP 40 segments) and no loss: HyStart ends slow start within [BDP/2, 2·BDP] (the unpaced
    /// train threshold is delay_min/2, the delay threshold 45 ms = 5 segments of queue), while
    /// standard slow start never stops without a loss.
    #[test]
    fn linux_hystart_ends_slow_start_near_the_bdp() {
        let f = |_t: Time| Dur::from_millis(40);
        for kind in [SlowStartKind::HyStart, SlowStartKind::Standard] {
            let cfg = CubicConfig {
                slow_start: kind,
                ..CubicConfig::default()
            };
            let mut p = Pipe::new(Cubic::new(cfg), CwndState::new(10, MSS));
            p.ack_gap = Dur::from_millis(1);
            p.prime(Dur::ZERO);
            p.run_until(Time::ZERO + Dur::from_secs(1), &f, &mut |_| {});
            if kind == SlowStartKind::HyStart {
                assert!(
                    (20..=80).contains(&p.st.ssthresh),
                    "ssthresh {}",
                    p.st.ssthresh
                );
                assert_eq!(p.cc.state(), "cong_avoid");
            } else {
                assert_eq!(p.st.ssthresh, INFINITE_SSTHRESH);
                assert!(p.st.cwnd > 200, "cwnd {}", p.st.cwnd);
            }
        }
    }

    fn ns3_standard() -> CubicConfig {
        CubicConfig {
            slow_start: SlowStartKind::Standard,
            ..CubicConfig::default().for_ns3()
        }
    }

    fn ack_with(rtt_ms: Option<u64>, srtt_ms: u64) -> AckInfo {
        AckInfo {
            acked_sacked: 1,
            pkts_acked: 1,
            rtt: rtt_ms.map(Dur::from_millis),
            srtt: Some(Dur::from_millis(srtt_ms)),
            is_cwnd_limited: true,
            ..AckInfo::default()
        }
    }

    /// ns-3 `TcpSocketBase` hands `PktsAcked` the smoothed RTT (`m_lastRtt` =
    /// `m_rtt->GetEstimate()`) on every ACK: delay_min is the minimum srtt (50 ms) even when
    /// the ACK's own sample is 40 ms, and an ACK without a sample still counts. Linux takes the
    /// sample (40 ms) and ignores ACKs without one.
    #[test]
    fn ns3_feeds_the_smoothed_rtt_to_delay_min() {
        let mut st = ca_state(20);
        for (cfg, want) in [(standard(), 40u64), (ns3_standard(), 50)] {
            let mut c = Cubic::new(cfg);
            c.pkts_acked(Time::ZERO, &mut st, &ack_with(Some(40), 50));
            assert_eq!(c.delay_min(), Some(Dur::from_millis(want)));
        }
        let mut c = Cubic::new(ns3_standard());
        c.pkts_acked(Time::ZERO, &mut st, &ack_with(None, 60));
        assert_eq!(c.delay_min(), Some(Dur::from_millis(60)));
        let mut c = Cubic::new(standard());
        c.pkts_acked(Time::ZERO, &mut st, &ack_with(None, 60));
        assert_eq!(c.delay_min(), None);
    }

    /// Samples right after an epoch start are discarded for 1 s in Linux (`cubictcp_acked`,
    /// `HZ`) but only 10 ms in ns-3 (`CubicDelta`): a 30 ms sample 20 ms into an epoch lowers
    /// ns-3's delay_min and not Linux's.
    #[test]
    fn ns3_discards_samples_for_10_ms_after_an_epoch_start() {
        for (cfg, want) in [(standard(), 40u64), (ns3_standard(), 30)] {
            let mut c = Cubic::new(cfg);
            let mut st = ca_state(20);
            c.pkts_acked(Time::ZERO, &mut st, &ack_with(Some(40), 40));
            let t0 = Time::ZERO + Dur::from_secs(2);
            c.cong_avoid(t0, &mut st, 1, &ack_with(Some(40), 40)); // starts the epoch
            assert_eq!(c.epoch_start(), Some(t0));
            let t = t0 + Dur::from_millis(20);
            c.pkts_acked(t, &mut st, &ack_with(Some(30), 30));
            assert_eq!(c.delay_min(), Some(Dur::from_millis(want)));
        }
    }

    /// ns-3 `TcpCubic::IncreaseWindow` adds at most one segment per ACK (`m_cWndCnt ≥ cnt` →
    /// +1, `m_cWndCnt -= cnt`), where Linux `tcp_cong_avoid_ai` adds `credit / cnt`. With
    /// cnt = 2 (cwnd 20 before the first loss, far below the target) a stretch ACK of 16
    /// segments: Linux +8, ns-3 +1 with 14 segments of credit kept.
    #[test]
    fn ns3_adds_at_most_one_segment_per_ack() {
        for (cfg, cwnd, cnt) in [(standard(), 28u32, 0u32), (ns3_standard(), 21, 14)] {
            let mut c = Cubic::new(CubicConfig {
                tcp_friendliness: false,
                ..cfg
            });
            let mut st = ca_state(20);
            c.pkts_acked(Time::ZERO, &mut st, &ack_with(Some(3000), 3000));
            // A 3 s delay_min puts the target 0.4·27 ≈ 10.8 above cwnd 20: cnt = 20/10 = 2.
            let mut a = ack_with(Some(3000), 3000);
            a.acked_sacked = 16;
            a.pkts_acked = 16;
            c.cong_avoid(Time::ZERO + Dur::from_secs(2), &mut st, 16, &a);
            assert_eq!(c.cnt(), 2);
            assert_eq!((st.cwnd, st.cwnd_cnt), (cwnd, cnt));
        }
    }

    /// Linux `bictcp_update` recomputes `cnt` at most once per jiffy (and not while cwnd is
    /// unchanged for 31 ms); ns-3 `TcpCubic::Update` recomputes on every ACK. An epoch starts
    /// at cwnd 70 below W_max = 100; half a millisecond later cwnd is 71: Linux keeps the
    /// `cnt` of cwnd 70 (same jiffy), ns-3 computes a new one.
    #[test]
    fn ns3_recomputes_cnt_on_every_ack() {
        let mut changed = Vec::new();
        for cfg in [standard(), ns3_standard()] {
            let mut c = Cubic::new(cfg);
            c.bic.last_max_cwnd = 100;
            let t0 = Time::ZERO + Dur::from_secs(5);
            c.update(t0, 70, 1);
            let first = c.cnt();
            c.update(t0 + Dur::from_micros(500), 71, 1);
            changed.push(first != c.cnt());
        }
        assert_eq!(changed, [false, true]);
    }

    /// ns-3's slow start adds every acked segment, past ssthresh, and leaves nothing for
    /// congestion avoidance on that ACK (`IncreaseWindow`: `m_cWnd += segmentsAcked·MSS;
    /// segmentsAcked = 0`); Linux stops at ssthresh and grows the rest by `cnt`. cwnd 18,
    /// ssthresh 20, 8 segments acked: ns-3 26, Linux 20 plus at most 6/2 = 3.
    #[test]
    fn ns3_slow_start_is_not_capped_at_ssthresh() {
        let mut a = ack_with(Some(40), 40);
        a.acked_sacked = 8;
        a.pkts_acked = 8;
        let run = |cfg: CubicConfig| {
            let mut c = Cubic::new(cfg);
            let mut st = CwndState::new(18, MSS);
            st.ssthresh = 20;
            c.cong_avoid(Time::ZERO + Dur::from_secs(1), &mut st, 8, &a);
            st.cwnd
        };
        assert_eq!(run(ns3_standard()), 26);
        let linux = run(standard());
        assert!((20..=23).contains(&linux), "Linux cwnd {linux}");
    }

    /// ns-3's `TcpCubic` has no `CwndEvent`: after 5 s idle the epoch start stays put (Linux
    /// `bictcp_cwnd_event` moves it forward by the idle time).
    #[test]
    fn ns3_does_not_shift_the_epoch_after_idle() {
        for (cfg, shifted) in [(standard(), true), (ns3_standard(), false)] {
            let mut c = Cubic::new(cfg);
            let mut st = ca_state(20);
            let t0 = Time::ZERO + Dur::from_secs(1);
            c.pkts_acked(t0, &mut st, &ack_with(Some(40), 40));
            c.cong_avoid(t0, &mut st, 1, &ack_with(Some(40), 40));
            let e = c.epoch_start().unwrap();
            c.cwnd_event(t0 + Dur::from_secs(5), &mut st, CwndEvent::TxStart);
            assert_eq!(c.epoch_start().unwrap() > e, shifted);
        }
    }
}
