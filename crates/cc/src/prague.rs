//! TCP Prague (L4S), following Linux `net/ipv4/tcp_prague.c` v0.6 from the L4STeam tree.
//!
//! Sources: `L4STeam/linux` `net/ipv4/tcp_prague.c` at commit `02573a2` (`MODULE_VERSION("0.6")`,
//! cited as [P06] below); the later v0.7 at commit `893e147` ([P07]) where v0.6 is unclear;
//! draft-briscoe-iccrg-prague-congestion-control. Every rule is re-implemented from a paraphrase;
//! no code is copied.
//!
//! Contract. Prague is a DCTCP-style scalable controller for L4S: it requires Accurate ECN and
//! ECT(1) ([`CongestionControl::ecn_requirement`] = [`EcnMode::L4s`]), runs its own response to
//! CE marks ([`CongestionControl::handles_ce`] = true, so the transport never enters CWR for it),
//! and, like Linux (`.cong_control = prague_cong_control`), owns cwnd in every state:
//! [`CongestionControl::cong_control`] returns `true`, the transport skips `cong_avoid` and PRR
//! and leaves cwnd alone at the end of a reduction. State:
//! - `frac_cwnd`: the window in 2^-20 segments (`CWND_UNIT` = 20). All increases and reductions
//!   act on it; the integer cwnd follows it by **one segment per ACK** towards
//!   `max(⌈frac_cwnd⌉, 1)`, never decremented below 2 (`MIN_CWND`), and every decrement sets
//!   `ssthresh = cwnd` ([P06] `prague_update_cwnd`, label `adjust`).
//! - α: EWMA of the CE fraction, stored upscaled by 1/g with 20 fractional bits
//!   (`PRAGUE_ALPHA_BITS` = 20, `PRAGUE_SHIFT_G` = 4, g = 1/16), initially 1.0.
//!
//! Per ACK (`cong_control`, in the order Linux's `tcp_ack` runs them):
//! 1. CWR episode, as Linux's transport would run it (`tcp_fastretrans_alert`,
//!    `tcp_try_to_open`): an episode ends at the first ACK with SND.UNA > its `high_seq`; an ACK
//!    that delivers CE-marked segments (`AckInfo::total_delivered_ce` rose) in Open/Disorder with
//!    no episode running starts one (`high_seq` = SND.NXT) and calls `prague_enter_cwr`:
//!    `frac_cwnd −= (α·frac_cwnd + ½) / 2`, i.e. α·cwnd/2 with unbiased rounding. With RTT
//!    independence active the reduction is skipped if the last one is less than the target RTT
//!    old (`cwr_stamp`). So at most one reduction per RTT, or per target RTT.
//! 2. `prague_update_cwnd`: the segments this ACK delivered minus its CE-marked ones are
//!    credited (none while `in_loss` or when not cwnd-limited): in slow start through
//!    `tcp_slow_start`, the rest as additive increase `frac_cwnd += acked·ai_ack_increase/⌈frac⌉`
//!    (`ai_ack_increase` = 1 segment unscaled: +1 segment per RTT); then the one-step adjust.
//! 3. Once per round (SND.UNA ≥ the SND.NXT recorded at the round start), or per target RTT
//!    when RTT independence is active (also ≥ target since the last α update;
//!    `prague_should_update_ewma`): `prague_update_alpha` — only after the first CE mark
//!    (`saw_ce`): F = CE-marked / delivered segments of the round (2^20 scale),
//!    `α ← α − α/16 + F/16` (upscaled form), capped at 1; then a new round, which counts
//!    `round` when not in slow start.
//! 4. `prague_update_pacing_rate`: rate = `frac_cwnd`·MSS/srtt, doubled while
//!    `cwnd < ssthresh/2`; the TSO burst is the rate's 2^-12 s (≈ 244 µs,
//!    `prague_burst_shift` = 12) in segments, at least 1, and `tso_segs` returns
//!    max(burst, 2) (`prague_tso_segs` with `sysctl_tcp_min_tso_segs` = 2, `prague_max_tso_segs`
//!    = 0: no cap).
//!
//! RTT independence (`prague_rtt_scaling` = `RTT_CONTROL_RATE`, the v0.6 default): active when
//! enabled, not in slow start and `round ≥ 500` (`DEFAULT_RTT_TRANSITION`: rounds counted outside
//! slow start since the connection began; v0.7 lowered it to 4). Then, for srtt below the target
//! (`prague_rtt_target` = 25 ms), `ai_ack_increase = (srtt/target)²` segments
//! (`prague_rate_scaled_ai_ack_increase`), so the window grows by (srtt/target)² per srtt and the
//! rate like a 25 ms flow's. RTTs are in Linux's 128 µs units (`RTT_UNIT` = 7): the target is
//! ⌊25 000/128⌋ = 195 units = 24.96 ms, and an srtt below 128 µs (0 units) is unscaled as in
//! Linux. `ai_ack_increase` is recomputed at every round start and cwnd change.
//!
//! Loss. `ssthresh()` returns Reno's `max(cwnd/2, 2)` (the draft's Reno-like halving; Linux
//! v0.6 returns the unchanged `snd_ssthresh` since it owns cwnd anyway). The window reduction is
//! `prague_enter_loss` — `frac_cwnd` halved, `in_loss` set (no increase until `Open`) — run, as in
//! Linux, on `set_state(Recovery)` and `cwnd_event(Loss)` (RTO). A tail loss repaired by a TLP
//! probe is, in Linux, a CWR episode (`tcp_process_tlp_ack`) and so `prague_enter_cwr`; this
//! transport reports it as `ssthresh()` then `CompleteCwr` with no state change, which is
//! recognised and answered with `prague_enter_cwr`. Undo ([P06] `prague_cwnd_undo`):
//! `frac_cwnd = max(frac_cwnd, frac at loss)`, cwnd = max(cwnd at loss, cwnd).
//! There is no proportional rate reduction: as in Linux, whose `tcp_cong_control` hands the ACK
//! to `.cong_control` and returns before `tcp_cwnd_reduction` (PRR), the transport refills
//! cwnd − in_flight in Recovery whatever was delivered, cwnd only steps down one segment per ACK
//! towards the halved `frac_cwnd`, and the pacing rate stays `frac_cwnd`·MSS/srtt. After a
//! slow-start overshoot into an AQM that then drops nearly everything (PIE with p above 1), a
//! window many BDPs large is thus kept, at many times the link rate, for the whole episode
//! (`cclab-sim` tests/aqm.rs, `prague_through_pie_floods_after_slow_start_as_linux_would`).
//!
//! Deviations and what is not modelled:
//! - Slow start: [P06] grows only the integer cwnd in slow start and leaves `frac_cwnd` at the
//!   initial window, so the first CE would collapse cwnd towards IW/2; [P07] re-syncs
//!   `frac_cwnd` to cwnd after `tcp_slow_start`, which would overwrite a reduction made on the
//!   same ACK. Here slow start adds to `frac_cwnd` the growth that takes cwnd above
//!   max(cwnd, ⌈frac_cwnd⌉), and the adjust step always runs: without marks `frac_cwnd` tracks
//!   cwnd exactly ([P07]), and the first CE in slow start halves `frac_cwnd` (α = 1), the adjust
//!   step then lowers cwnd and sets ssthresh = cwnd, which ends slow start ([P06] intent).
//! - Pacing uses the MSS, not the MTU (`tcp_mss_to_mtu`): header bytes are not known here.
//!   `sk_max_pacing_rate` is not modelled (unlimited). Without an srtt the rate is left to the
//!   transport (`None`). As in v0.6 there is no rate floor (v0.7 has 100 kbit/s,
//!   `MINIMUM_RATE`): a collapsed `frac_cwnd` can round the rate to 0, which the transport
//!   treats as "not paced" (as Linux's `tcp_update_skb_after_send` does).
//! - Classic-ECN (bleaching / RFC 3168 AQM) detection and fallback
//!   (`prague_classic_ecn_detection`, `prague_ecn_fallback`) are not modelled: v0.6 ships them
//!   off (`prague_ecn_fallback` = 0). The `prague-reno` fallback when AccECN is not negotiated is
//!   not modelled either (the controller forces L4S).
//! - The RTT-scaling heuristics other than `RTT_CONTROL_RATE` (SCALABLE, ADDITIVE) and the v0.7
//!   additions (rate-based mode for small windows, ±3 % pacing oscillation, MTU reduction,
//!   "halve cwnd at the first mark" alpha mode) are not modelled.

use crate::num::u64_to_f64;
use crate::reno::RENO_MIN_SSTHRESH;
use crate::{
    AckInfo, CaState, CongestionControl, CwndEvent, CwndState, Dur, EcnMode, RateSample, StatSink,
    Time,
};

/// Smallest integer cwnd the adjust step decrements to ([P06] `MIN_CWND` = 2).
pub const MIN_CWND: u32 = 2;
/// Fractional bits of α ([P06] `PRAGUE_ALPHA_BITS` = 20).
pub const PRAGUE_ALPHA_BITS: u32 = 20;
/// α = 1.0 in fixed point ([P06] `PRAGUE_MAX_ALPHA`).
pub const PRAGUE_MAX_ALPHA: u64 = 1 << PRAGUE_ALPHA_BITS;
/// Fractional bits of `frac_cwnd` ([P06] `CWND_UNIT` = 20).
pub const CWND_UNIT: u32 = 20;
/// One segment of `frac_cwnd` ([P06] `ONE_CWND`).
pub const ONE_CWND: u64 = 1 << CWND_UNIT;
/// EWMA gain g = 2^-4 = 1/16 ([P06] `PRAGUE_SHIFT_G` = 4).
pub const PRAGUE_SHIFT_G: u32 = 4;
/// Rounds outside slow start before RTT independence starts ([P06] `DEFAULT_RTT_TRANSITION` =
/// 500, module parameter `prague_rtt_transition`).
pub const DEFAULT_RTT_TRANSITION: u32 = 500;
/// RTT-independence target ([P06] `prague_rtt_target` = 25 ms).
pub const DEFAULT_RTT_TARGET: Dur = Dur::from_millis(25);
/// RTTs are kept in units of 2^7 µs = 128 µs ([P06] `RTT_UNIT` = 7, `US2RTT`, `RTT2US`).
pub const RTT_UNIT: u32 = 7;
/// Largest TSO/GSO burst: 2^-12 s ≈ 244 µs at the pacing rate ([P06] `prague_burst_shift` =
/// 12).
pub const PRAGUE_BURST_SHIFT: u32 = 12;
/// Floor of `tso_segs` ([P06] `prague_tso_segs`: max with `sysctl_tcp_min_tso_segs`, Linux
/// default 2).
pub const MIN_TSO_SEGS: u32 = 2;

/// Prague parameters (the fields of [`crate::CcSpec::Prague`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PragueConfig {
    /// RTT-independence target ([P06] `prague_rtt_target`, 25 ms); zero disables RTT
    /// independence as in Linux (`rtt_indep = rtt_target ? prague_rtt_scaling : NONE`).
    pub rtt_target: Dur,
    /// RTT independence with the rate heuristic ([P06] `prague_rtt_scaling` =
    /// `RTT_CONTROL_RATE`: on by default).
    pub rtt_independence: bool,
    /// Rounds outside slow start before RTT independence starts ([P06]
    /// `prague_rtt_transition`, 500).
    pub rtt_transition: u32,
}

impl Default for PragueConfig {
    fn default() -> Self {
        PragueConfig {
            rtt_target: DEFAULT_RTT_TARGET,
            rtt_independence: true,
            rtt_transition: DEFAULT_RTT_TRANSITION,
        }
    }
}

/// The TCP Prague controller (Linux `struct prague` plus the transport's CWR episode).
#[derive(Clone, Debug)]
pub struct Prague {
    cfg: PragueConfig,
    /// Target RTT in 128 µs units (`rtt_target`).
    rtt_target: u64,
    /// RTT independence configured (`rtt_indep != RTT_CONTROL_NONE`).
    rtt_indep: bool,
    /// α / g in 2^-20 units (`upscaled_alpha`).
    upscaled_alpha: u64,
    /// The window in 2^-20 segments (`frac_cwnd`).
    frac_cwnd: u64,
    /// Additive increase per non-CE segment, 2^-20 segments · cwnd (`ai_ack_increase`).
    ai_ack_increase: u64,
    /// cwnd and `frac_cwnd` when the last loss reduction began (`loss_cwnd`, `loss_frac_cwnd`).
    loss_cwnd: u32,
    loss_frac_cwnd: u64,
    /// Time of the last CE reduction (`cwr_stamp`; `None` = never).
    cwr_stamp: Option<Time>,
    /// Time of the last α update (`alpha_stamp`).
    alpha_stamp: Time,
    /// Delivered and CE-delivered totals, and SND.NXT, at the round start (`old_delivered`,
    /// `old_delivered_ce`, `next_seq`).
    old_delivered: u64,
    old_delivered_ce: u64,
    next_seq: u64,
    /// Rounds started outside slow start (`round`).
    round: u32,
    /// A CE mark has been seen: there is an L4S AQM (`saw_ce`).
    saw_ce: bool,
    /// In a loss reduction: no increase until `Open` (`in_loss`).
    in_loss: bool,
    /// `AckInfo::total_delivered_ce` at the previous ACK (for the per-ACK `ece_delta`).
    last_delivered_ce: u64,
    /// `high_seq` of the running CWR episode (Linux: `TCP_CA_CWR` until SND.UNA passes it).
    cwr_high_seq: Option<u64>,
    /// `ssthresh()` was called and no state change has consumed it yet (TLP detection).
    pending_event: bool,
    /// Latest smoothed RTT.
    srtt: Option<Dur>,
    /// Pacing rate, bytes/s (`sk_pacing_rate`).
    pacing_rate: Option<u64>,
    /// Largest TSO burst, segments (`max_tso_burst`).
    max_tso_burst: u32,
    ca_state: CaState,
    /// Whether cwnd < ssthresh at the last hook (for [`CongestionControl::state`]).
    in_slow_start: bool,
}

impl Prague {
    /// A fresh Prague controller.
    #[must_use]
    pub fn new(cfg: PragueConfig) -> Self {
        let rtt_target = cfg.rtt_target.as_micros() >> RTT_UNIT;
        Prague {
            cfg,
            rtt_target,
            rtt_indep: cfg.rtt_independence && rtt_target > 0,
            upscaled_alpha: PRAGUE_MAX_ALPHA << PRAGUE_SHIFT_G,
            frac_cwnd: 0,
            ai_ack_increase: ONE_CWND,
            loss_cwnd: 0,
            loss_frac_cwnd: 0,
            cwr_stamp: None,
            alpha_stamp: Time::ZERO,
            old_delivered: 0,
            old_delivered_ce: 0,
            next_seq: 0,
            round: 0,
            saw_ce: false,
            in_loss: false,
            last_delivered_ce: 0,
            cwr_high_seq: None,
            pending_event: false,
            srtt: None,
            pacing_rate: None,
            max_tso_burst: 1,
            ca_state: CaState::Open,
            in_slow_start: true,
        }
    }

    /// The configuration.
    #[must_use]
    pub fn config(&self) -> PragueConfig {
        self.cfg
    }

    /// α, the EWMA of the CE fraction, in [0, 1].
    #[must_use]
    pub fn alpha(&self) -> f64 {
        u64_to_f64(self.upscaled_alpha >> PRAGUE_SHIFT_G) / u64_to_f64(PRAGUE_MAX_ALPHA)
    }

    /// The fractional window, segments.
    #[must_use]
    pub fn frac_cwnd(&self) -> f64 {
        u64_to_f64(self.frac_cwnd) / u64_to_f64(ONE_CWND)
    }

    /// Additive increase per RTT, segments (1 unless RTT independence scales it).
    #[must_use]
    pub fn ai_per_rtt(&self) -> f64 {
        u64_to_f64(self.ai_ack_increase) / u64_to_f64(ONE_CWND)
    }

    /// Rounds started outside slow start.
    #[must_use]
    pub fn round(&self) -> u32 {
        self.round
    }

    /// Target RTT as Linux applies it (a whole number of 128 µs units).
    fn target(&self) -> Dur {
        Dur::from_micros(self.rtt_target << RTT_UNIT)
    }

    /// `prague_frac_cwnd_to_snd_cwnd`: ⌈frac_cwnd⌉, at least 1.
    fn frac_to_cwnd(&self) -> u32 {
        u32::try_from((self.frac_cwnd + ONE_CWND - 1) >> CWND_UNIT)
            .unwrap_or(u32::MAX)
            .max(1)
    }

    /// `prague_is_rtt_indep`.
    fn is_rtt_indep(&self, st: &CwndState) -> bool {
        self.rtt_indep && !st.in_slow_start() && self.round >= self.cfg.rtt_transition
    }

    /// `prague_ai_ack_increase` with `prague_rate_scaled_ai_ack_increase`.
    fn update_ai_ack_increase(&mut self) {
        let rtt = self.srtt.map_or(0, |s| s.as_micros() >> RTT_UNIT);
        let target = self.rtt_target;
        self.ai_ack_increase =
            if !self.rtt_indep || self.round < self.cfg.rtt_transition || rtt == 0 || rtt >= target
            {
                ONE_CWND
            } else {
                // (rtt/target)² segments, rounded to nearest.
                let divisor = target * target;
                (((rtt * rtt) << CWND_UNIT) + divisor / 2) / divisor
            };
    }

    /// `prague_new_round`.
    fn new_round(&mut self, st: &CwndState, ack: &AckInfo, rs: &RateSample) {
        self.next_seq = ack.snd_nxt;
        self.old_delivered_ce = ack.total_delivered_ce;
        self.old_delivered = rs.total_delivered;
        if !st.in_slow_start() {
            // Linux wraps to `rtt_transition_delay` on overflow.
            self.round = self.round.checked_add(1).unwrap_or(self.cfg.rtt_transition);
        }
        self.update_ai_ack_increase();
    }

    /// `prague_update_alpha`: one EWMA step over the round, then a new round.
    fn update_alpha(&mut self, now: Time, st: &CwndState, ack: &AckInfo, rs: &RateSample) {
        if self.saw_ce {
            let ecn_segs = ack.total_delivered_ce.saturating_sub(self.old_delivered_ce);
            let f = if ecn_segs > 0 {
                let acked = rs.total_delivered.saturating_sub(self.old_delivered).max(1);
                (ecn_segs << PRAGUE_ALPHA_BITS) / acked
            } else {
                0
            };
            let a = self.upscaled_alpha - (self.upscaled_alpha >> PRAGUE_SHIFT_G) + f;
            self.alpha_stamp = now;
            self.upscaled_alpha = a.min(PRAGUE_MAX_ALPHA << PRAGUE_SHIFT_G);
        }
        self.new_round(st, ack, rs);
    }

    /// `prague_enter_cwr`: `frac_cwnd −= α·frac_cwnd/2`, at most once per target RTT when RTT
    /// independence is active.
    fn enter_cwr(&mut self, now: Time, st: &CwndState) {
        if self.is_rtt_indep(st)
            && self
                .cwr_stamp
                .is_some_and(|t| now.saturating_since(t) < self.target())
        {
            return;
        }
        self.cwr_stamp = Some(now);
        let alpha = u128::from(self.upscaled_alpha >> PRAGUE_SHIFT_G);
        // (α·frac + ½·2^20) >> 21: α·frac/2 with the rounding unbiased.
        let reduction = (alpha * u128::from(self.frac_cwnd) + u128::from(PRAGUE_MAX_ALPHA))
            >> (PRAGUE_ALPHA_BITS + 1);
        self.frac_cwnd -= u64::try_from(reduction)
            .unwrap_or(u64::MAX)
            .min(self.frac_cwnd);
    }

    /// `prague_enter_loss`: halve `frac_cwnd` and stop increasing until `Open`.
    fn enter_loss(&mut self, st: &CwndState) {
        self.loss_cwnd = st.cwnd;
        self.loss_frac_cwnd = self.frac_cwnd;
        self.frac_cwnd -= self.frac_cwnd >> 1;
        self.in_loss = true;
        self.update_ai_ack_increase();
    }

    /// `prague_update_cwnd`: credit the non-CE segments, then move cwnd one step.
    fn update_cwnd(&mut self, st: &mut CwndState, acked_sacked: u32, ece: u64, ack: &AckInfo) {
        let mut acked = i64::from(acked_sacked);
        if ece > 0 {
            self.saw_ce = true;
            acked -= i64::try_from(ece).unwrap_or(i64::MAX);
        }
        if acked > 0 && !self.in_loss && ack.is_cwnd_limited {
            let mut acked = u32::try_from(acked).unwrap_or(u32::MAX);
            if st.in_slow_start() {
                let before = st.cwnd;
                let base = before.max(self.frac_to_cwnd());
                acked = st.slow_start(acked);
                self.frac_cwnd += u64::from(st.cwnd.saturating_sub(base)) << CWND_UNIT;
                if st.cwnd != before {
                    self.update_ai_ack_increase();
                }
            }
            if acked > 0 {
                let w = u64::from(self.frac_to_cwnd());
                let increase = (u64::from(acked) * self.ai_ack_increase + w / 2) / w;
                self.frac_cwnd += increase.max(u64::from(acked));
            }
        }
        let target = self.frac_to_cwnd();
        if st.cwnd > target && st.cwnd > MIN_CWND {
            st.cwnd -= 1;
            st.ssthresh = st.cwnd;
            self.update_ai_ack_increase();
        } else if st.cwnd < target && st.cwnd < st.cwnd_clamp {
            st.cwnd += 1;
            self.update_ai_ack_increase();
        }
    }

    /// `prague_update_pacing_rate`: `frac_cwnd`·MSS/srtt (×2 while cwnd < ssthresh/2) and the
    /// 2^-12 s TSO burst.
    fn update_pacing_rate(&mut self, st: &CwndState) {
        let Some(srtt) = self.srtt else {
            self.pacing_rate = None;
            return;
        };
        // Linux keeps srtt in 1/8 µs (`srtt_us`) and computes (10^6·8·mtu [·2]) / srtt_us.
        let srtt_us8 = u128::from((srtt.as_nanos() * 8 / 1_000).max(1));
        let mut per_segment = (1_000_000u128 << 3) * u128::from(st.mss);
        if st.cwnd < st.ssthresh / 2 {
            per_segment <<= 1;
        }
        let per_segment = per_segment / srtt_us8;
        let rate =
            (per_segment * u128::from(self.frac_cwnd) + u128::from(ONE_CWND >> 1)) >> CWND_UNIT;
        let rate = u64::try_from(rate).unwrap_or(u64::MAX);
        self.pacing_rate = Some(rate);
        let burst = rate / u64::from(st.mss.max(1));
        self.max_tso_burst = u32::try_from(burst >> PRAGUE_BURST_SHIFT)
            .unwrap_or(u32::MAX)
            .max(1);
    }
}

impl Default for Prague {
    fn default() -> Self {
        Prague::new(PragueConfig::default())
    }
}

impl CongestionControl for Prague {
    fn name(&self) -> &'static str {
        "prague"
    }

    /// `prague_init`: α = 1, `frac_cwnd` = cwnd, a first round from SND.NXT 0.
    fn init(&mut self, now: Time, st: &mut CwndState) {
        *self = Prague::new(self.cfg);
        self.alpha_stamp = now;
        self.frac_cwnd = u64::from(st.cwnd) << CWND_UNIT;
        self.in_slow_start = st.in_slow_start();
    }

    /// Linux feeds the classic-ECN detector's RTT filter here (not modelled); only srtt is kept.
    fn pkts_acked(&mut self, _now: Time, _st: &mut CwndState, ack: &AckInfo) {
        if ack.srtt.is_some() {
            self.srtt = ack.srtt;
        }
    }

    /// Never called by the transport (`cong_control` returns `true`); a no-op.
    fn cong_avoid(&mut self, _now: Time, _st: &mut CwndState, _acked: u32, _ack: &AckInfo) {}

    fn cong_control(
        &mut self,
        now: Time,
        st: &mut CwndState,
        rs: &RateSample,
        ack: &AckInfo,
    ) -> bool {
        if ack.srtt.is_some() {
            self.srtt = ack.srtt;
        }
        let state = ack.ca_state.unwrap_or(self.ca_state);
        let ece = ack
            .total_delivered_ce
            .saturating_sub(self.last_delivered_ce);
        self.last_delivered_ce = self.last_delivered_ce.max(ack.total_delivered_ce);
        let open = matches!(state, CaState::Open | CaState::Disorder);
        if self.cwr_high_seq.is_some_and(|h| ack.snd_una > h || !open) {
            self.cwr_high_seq = None;
        }
        if ece > 0 && open && self.cwr_high_seq.is_none() {
            self.cwr_high_seq = Some(ack.snd_nxt);
            self.enter_cwr(now, st);
        }
        self.update_cwnd(st, rs.acked_sacked, ece, ack);
        let round_over = ack.snd_una >= self.next_seq;
        if round_over
            && (!self.is_rtt_indep(st) || now.saturating_since(self.alpha_stamp) >= self.target())
        {
            self.update_alpha(now, st, ack, rs);
        }
        self.update_pacing_rate(st);
        self.in_slow_start = st.in_slow_start();
        true
    }

    /// Reno's `max(cwnd/2, 2)`; the window itself is reduced by the state change that follows.
    fn ssthresh(&mut self, _now: Time, st: &CwndState, _ack: &AckInfo) -> u32 {
        self.pending_event = true;
        (st.cwnd / 2).max(RENO_MIN_SSTHRESH)
    }

    /// `prague_state`: Recovery → `prague_enter_loss`, CWR → `prague_enter_cwr`, Open → end of
    /// `in_loss`.
    fn set_state(&mut self, now: Time, st: &mut CwndState, new: CaState) {
        if new == self.ca_state {
            return;
        }
        match new {
            CaState::Recovery => self.enter_loss(st),
            CaState::Cwr if self.cwr_high_seq.is_none() => self.enter_cwr(now, st),
            CaState::Open => self.in_loss = false,
            CaState::Cwr | CaState::Loss | CaState::Disorder => {}
        }
        if matches!(new, CaState::Recovery | CaState::Loss | CaState::Cwr) {
            self.pending_event = false;
            self.cwr_high_seq = None;
        }
        self.ca_state = new;
        self.in_slow_start = st.in_slow_start();
    }

    /// `prague_cwnd_event`: RTO (`Loss`) → `prague_enter_loss`. A `CompleteCwr` right after
    /// `ssthresh()` without a state change is a TLP-repaired loss: Linux's CWR episode, so
    /// `prague_enter_cwr` (unless a CE episode already runs).
    fn cwnd_event(&mut self, now: Time, st: &mut CwndState, ev: CwndEvent) {
        match ev {
            CwndEvent::Loss => {
                self.enter_loss(st);
                self.pending_event = false;
                self.cwr_high_seq = None;
            }
            CwndEvent::CompleteCwr if self.pending_event => {
                if self.cwr_high_seq.is_none() {
                    self.enter_cwr(now, st);
                }
                self.pending_event = false;
                self.cwr_high_seq = None;
            }
            _ => {}
        }
        self.in_slow_start = st.in_slow_start();
    }

    /// `prague_cwnd_undo`.
    fn undo_cwnd(&mut self, _now: Time, st: &CwndState, _prior_cwnd: u32) -> u32 {
        self.frac_cwnd = self.frac_cwnd.max(self.loss_frac_cwnd);
        self.loss_cwnd.max(st.cwnd)
    }

    fn ecn_requirement(&self) -> Option<EcnMode> {
        Some(EcnMode::L4s)
    }

    fn handles_ce(&self) -> bool {
        true
    }

    fn pacing_rate(&self) -> Option<u64> {
        self.pacing_rate
    }

    fn wants_pacing(&self) -> bool {
        true
    }

    fn tso_segs(&self, _st: &CwndState) -> Option<u32> {
        Some(self.max_tso_burst.max(MIN_TSO_SEGS))
    }

    fn state(&self) -> &'static str {
        match self.ca_state {
            CaState::Recovery => "recovery",
            CaState::Loss => "loss",
            CaState::Cwr => "cwr",
            CaState::Open | CaState::Disorder => {
                if self.cwr_high_seq.is_some() {
                    "cwr"
                } else if self.in_slow_start {
                    "slow_start"
                } else {
                    "cong_avoid"
                }
            }
        }
    }

    fn stats(&self, sink: StatSink<'_>) {
        sink("alpha", self.alpha());
        sink("frac_cwnd", self.frac_cwnd());
        sink("ai_per_rtt", self.ai_per_rtt());
        sink("round", f64::from(self.round));
        sink("saw_ce", if self.saw_ce { 1.0 } else { 0.0 });
        sink("in_loss", if self.in_loss { 1.0 } else { 0.0 });
        sink("max_tso_burst", f64::from(self.max_tso_burst));
        if let Some(r) = self.pacing_rate {
            sink("pacing_rate_bps", u64_to_f64(r) * 8.0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::INFINITE_SSTHRESH;
    use crate::driver::Pipe;
    use proptest::prelude::*;

    const MSS: u32 = 1448;

    /// A Prague sender on the crate's test pipe with `cwnd` segments in flight, ssthresh
    /// `ssthresh` and srtt `srtt` (every scripted ACK carries that RTT).
    fn flow(cfg: PragueConfig, cwnd: u32, ssthresh: u32, srtt: Dur) -> Pipe<Prague> {
        let mut st = CwndState::new(cwnd, MSS);
        st.ssthresh = ssthresh;
        let mut p = Pipe::new(Prague::new(cfg), st);
        p.nxt = u64::from(cwnd);
        p.paced = true;
        p.srtt = Some(srtt);
        p
    }

    /// The sender keeps a fixed harness window of `w` segments in flight instead of cwnd.
    fn with_window(mut p: Pipe<Prague>, w: u64) -> Pipe<Prague> {
        p.window = Some(w);
        p.nxt = w;
        p
    }

    /// One ACK, `dt` after the previous one, delivering `segs` segments of which `ce` carried
    /// CE. SND.NXT in the ACK is the value before the sender refills its window.
    fn ack(p: &mut Pipe<Prague>, segs: u32, ce: u32, dt: Dur) {
        let srtt = p.srtt.expect("srtt set");
        p.ack_ce(segs, ce, srtt, dt);
    }

    /// One single-segment ACK per srtt/`per_rtt`; `ce` says whether it is CE-marked.
    fn ack1(p: &mut Pipe<Prague>, ce: bool, per_rtt: u64) {
        let dt = Dur::from_nanos(p.srtt.expect("srtt set").as_nanos() / per_rtt.max(1));
        ack(p, 1, u32::from(ce), dt);
    }

    fn frac(p: &Pipe<Prague>) -> f64 {
        p.cc.frac_cwnd()
    }

    fn ms(v: u64) -> Dur {
        Dur::from_millis(v)
    }

    /// α = F + (α₀ − F)·(1 − g)^n after n EWMA steps with a constant CE fraction F. With F = 0.1,
    /// α₀ = 1 and g = 1/16: (15/16)^n·0.9 < 0.01 needs n ≥ 70, so after 80 rounds
    /// |α − 0.1| ≤ 0.9·(15/16)^80 ≈ 0.005 < 0.01. After 40 rounds α must match the closed form
    /// within 10⁻⁴ (fixed-point truncation of F costs < 2^-20 per step), which pins g = 1/16: with
    /// g = 1/8 it would already be 0.104. Rounds are exactly 100 segments (a fixed harness window
    /// of 101 with one segment per ACK), every 10th segment marked, so F = 10/100 per round.
    #[test]
    fn alpha_converges_to_the_marked_fraction() {
        let mut f = with_window(flow(PragueConfig::default(), 100, 50, ms(50)), 101);
        // First ACK: round 0 (from SND.NXT 0) ends; no CE seen yet, so no EWMA step.
        ack1(&mut f, false, 100);
        assert_eq!(f.cc.alpha(), 1.0);
        let mut seg = 1u64;
        for n in 1..=80u32 {
            for _ in 0..100 {
                ack1(&mut f, seg % 10 == 9, 100);
                seg += 1;
            }
            let expect = 0.1 + 0.9 * (15.0f64 / 16.0).powi(n as i32);
            assert!(
                (f.cc.alpha() - expect).abs() < 1e-4,
                "round {n}: alpha {} expected {expect}",
                f.cc.alpha()
            );
            if n == 40 {
                assert!(f.cc.alpha() > 0.15, "g = 1/16, not faster");
            }
        }
        assert!((f.cc.alpha() - 0.1).abs() <= 0.01, "alpha {}", f.cc.alpha());
    }

    /// Before the first CE mark α is not updated (Linux `saw_ce`): it stays 1.0 however many
    /// rounds pass; the first mark then starts the EWMA at the end of its round.
    #[test]
    fn alpha_is_not_updated_before_the_first_ce() {
        let mut f = flow(PragueConfig::default(), 20, 10, ms(20));
        for _ in 0..2_000 {
            ack1(&mut f, false, 20);
        }
        assert_eq!(f.cc.alpha(), 1.0);
        assert!(f.cc.round() > 30, "round {}", f.cc.round());
        ack1(&mut f, true, 20);
        let w = f.st.cwnd;
        let mut acks = 0;
        while f.cc.alpha() == 1.0 {
            ack1(&mut f, false, 20);
            acks += 1;
            assert!(acks <= w, "the marked round ends within a window");
        }
        // One step: α = 15/16 + F/16 with F = 1 mark / the round's ≥ 20 segments.
        let step = f.cc.alpha() - 15.0 / 16.0;
        assert!(
            step > 0.0 && step <= 1.0 / 16.0 / 20.0,
            "alpha {}",
            f.cc.alpha()
        );
    }

    /// A CE mark reduces `frac_cwnd` by α·cwnd/2 — exactly half with α = 1, a quarter with
    /// α = ½ — at most once per RTT: further marks are ignored until SND.UNA passes the SND.NXT
    /// of the reducing ACK (the CWR episode). The integer cwnd follows one segment per ACK with
    /// ssthresh = cwnd. α moves with the EWMA under 100 % marking (it stays 1 from 1), so each
    /// reduction is checked against the α in force when its ACK arrived (to 2^-20 rounding).
    #[test]
    fn ce_reduces_by_alpha_half_once_per_rtt() {
        for (alpha_num, first_keep) in [(2u64, 0.5f64), (1, 0.75)] {
            let mut f = flow(PragueConfig::default(), 100, 50, ms(50));
            f.cc.upscaled_alpha = (PRAGUE_MAX_ALPHA * alpha_num / 2) << PRAGUE_SHIFT_G;
            let mut reductions = Vec::new();
            let mut episode_end: Option<u64> = None;
            for _ in 0..400 {
                let before = frac(&f);
                let alpha = f.cc.alpha();
                let nxt_at_ack = f.nxt;
                ack1(&mut f, true, 100);
                if frac(&f) < before {
                    let expect = before * (1.0 - alpha / 2.0);
                    assert!(
                        (frac(&f) - expect).abs() < 1e-5,
                        "{before} -> {} (alpha {alpha})",
                        frac(&f)
                    );
                    if let Some(h) = episode_end {
                        assert_eq!(f.una, h + 1, "first ACK past the previous episode");
                    } else {
                        assert_eq!(frac(&f), 100.0 * first_keep);
                    }
                    episode_end = Some(nxt_at_ack);
                    reductions.push(f.una);
                } else {
                    assert_eq!(frac(&f), before, "no increase on CE-marked ACKs");
                }
                assert!(f.st.cwnd >= f.cc.frac_to_cwnd());
                assert_eq!(f.st.ssthresh, f.st.cwnd);
            }
            assert_eq!(reductions[0], 1);
            assert!(reductions.len() >= 4, "{reductions:?}");
            assert_eq!(f.cc.state(), "cwr");
        }
    }

    /// Additive increase: a window of unmarked single-segment ACKs adds ≈ 1 segment (exactly
    /// Σ 1/⌈frac⌉; the integer cwnd is ⌈frac⌉, so after the first ACK each adds 1/(W+1):
    /// W/(W+1) ≤ Δ ≤ 1). With α = 0 (so marks cause no reduction) CE-marked segments add
    /// nothing: all-CE windows leave `frac_cwnd` unchanged and half-marked ACKs add half.
    #[test]
    fn additive_increase_is_one_segment_per_rtt_and_none_for_ce() {
        let mut f = flow(PragueConfig::default(), 50, 10, ms(40));
        for _ in 0..10 {
            let w = frac(&f);
            let n = f.st.cwnd;
            for _ in 0..n {
                ack1(&mut f, false, u64::from(n));
            }
            let d = frac(&f) - w;
            let lo = f64::from(n) / f64::from(n + 1);
            assert!(d >= lo - 1e-6 && d <= 1.0 + 1e-6, "window {w}: +{d}");
        }
        assert_eq!(f.st.cwnd, f.cc.frac_to_cwnd());

        // The first mark opens a CWR episode (reduction α·cwnd/2 = 0); the rest of the episode
        // (SND.UNA up to 50) is all marked: nothing may be credited.
        let mut f = flow(PragueConfig::default(), 50, 10, ms(40));
        f.cc.upscaled_alpha = 0;
        for _ in 0..50 {
            ack1(&mut f, true, 50);
        }
        assert_eq!(f.una, 50);
        assert_eq!(frac(&f), 50.0, "CE-marked segments credit nothing");

        let mut half = flow(PragueConfig::default(), 50, 10, ms(40));
        half.cc.upscaled_alpha = 0;
        let mut full = flow(PragueConfig::default(), 50, 10, ms(40));
        for _ in 0..25 {
            ack(&mut half, 2, 1, ms(1));
            ack(&mut full, 1, 0, ms(1));
        }
        let (dh, df) = (frac(&half) - 50.0, frac(&full) - 50.0);
        assert!(
            (dh - df).abs() < 1e-9,
            "2 segments with 1 CE = 1 unmarked: {dh} vs {df}"
        );
        assert!((df - 0.5).abs() < 0.02, "25 of 50: {df}");
    }

    /// The first CE in slow start ends it: α = 1 halves `frac_cwnd`, the adjust step lowers cwnd
    /// and sets ssthresh = cwnd; cwnd then walks down one segment per ACK to ⌈frac_cwnd⌉.
    /// Without marks, slow start grows cwnd and `frac_cwnd` together.
    #[test]
    fn slow_start_ends_at_the_first_ce() {
        let mut f = flow(PragueConfig::default(), 10, INFINITE_SSTHRESH, ms(20));
        for _ in 0..30 {
            ack1(&mut f, false, 10);
        }
        assert_eq!(f.st.cwnd, 40);
        assert_eq!(frac(&f), 40.0);
        assert_eq!(f.cc.state(), "slow_start");
        ack1(&mut f, true, 10);
        assert_eq!(frac(&f), 20.0);
        assert_eq!(f.st.cwnd, 39);
        assert_eq!(f.st.ssthresh, 39);
        assert!(!f.st.in_slow_start());
        for _ in 0..19 {
            ack1(&mut f, false, 10);
        }
        assert_eq!(f.st.cwnd, 21, "one step per ACK down to ⌈frac⌉ = 21");
        assert!(frac(&f) > 20.0 && frac(&f) < 21.0);
    }

    /// RTT independence (`RTT_CONTROL_RATE`): once 500 rounds have passed outside slow start,
    /// an srtt below 25 ms scales the increase by (srtt/target)² in 128 µs units:
    /// 5 ms → ⌊5000/128⌋ = 39, target 195, (39² · 2^20 + ½)/195² = 41 943 (= 0.04 of a segment,
    /// exactly (5/25)²). Not before round 500, not with srtt ≥ target, not when disabled.
    #[test]
    fn rtt_independence_scales_the_increase_below_the_target() {
        let run = |cfg: PragueConfig, srtt: Dur, rounds: u32| {
            // One segment per round: every ACK ends a round.
            let mut f = with_window(flow(cfg, 10, 2, srtt), 1);
            for _ in 0..rounds {
                ack1(&mut f, false, 1);
            }
            f
        };
        let on = PragueConfig::default();
        let f = run(on, ms(5), 499);
        assert_eq!(f.cc.round(), 499);
        assert_eq!(f.cc.ai_ack_increase, ONE_CWND);
        let mut f = run(on, ms(5), 500);
        assert_eq!(f.cc.ai_ack_increase, 41_943);
        assert!((f.cc.ai_per_rtt() - 0.04).abs() < 1e-4);
        // One window of unmarked ACKs now adds ≈ 0.04·W/(W+1) segments instead of ≈ 1.
        f.window = None;
        let w = frac(&f);
        let n = f.st.cwnd;
        for _ in 0..n {
            ack1(&mut f, false, u64::from(n));
        }
        let d = frac(&f) - w;
        assert!(d > 0.035 && d < 0.041, "+{d} per window");
        assert_eq!(run(on, ms(30), 600).cc.ai_ack_increase, ONE_CWND);
        let off = PragueConfig {
            rtt_independence: false,
            ..on
        };
        assert_eq!(run(off, ms(5), 600).cc.ai_ack_increase, ONE_CWND);
        let f = run(on, ms(12), 600);
        let units = 12_000u64 >> RTT_UNIT;
        let expect = (((units * units) << CWND_UNIT) + 195 * 195 / 2) / (195 * 195);
        assert_eq!(f.cc.ai_ack_increase, expect);
    }

    /// With RTT independence active, CE reductions and α updates happen at most once per target
    /// RTT (24.96 ms), however short the real RTT. Here one segment is in flight, so every ACK
    /// (5 ms apart) ends a round and a CWR episode: with every ACK marked for 100 ms (21 ACKs),
    /// reductions and α updates come every 25 ms (5 of them) instead of on every ACK (21).
    #[test]
    fn rtt_independence_limits_reductions_to_one_per_target_rtt() {
        let count = |cfg: PragueConfig| {
            let mut f = with_window(flow(cfg, 10, 2, ms(5)), 1);
            for _ in 0..600 {
                ack1(&mut f, false, 1);
            }
            f.cc.upscaled_alpha = (PRAGUE_MAX_ALPHA / 4) << PRAGUE_SHIFT_G;
            let (mut reductions, mut updates) = (0, 0);
            let mut stamp = f.cc.alpha_stamp;
            for _ in 0..=20 {
                let before = frac(&f);
                ack1(&mut f, true, 1);
                reductions += u32::from(frac(&f) < before);
                updates += u32::from(f.cc.alpha_stamp != stamp);
                stamp = f.cc.alpha_stamp;
            }
            (reductions, updates)
        };
        assert_eq!(count(PragueConfig::default()), (5, 5));
        let off = PragueConfig {
            rtt_independence: false,
            ..PragueConfig::default()
        };
        assert_eq!(count(off), (21, 21));
    }

    /// The integer cwnd never goes below 2 by Prague's own doing, whatever the marking, while
    /// `frac_cwnd` may fall below (Linux `MIN_CWND` bounds only the decrement step).
    #[test]
    fn cwnd_never_below_two_under_marking() {
        let mut f = flow(PragueConfig::default(), 6, 3, ms(10));
        for _ in 0..500 {
            ack1(&mut f, true, 2);
            assert!(f.st.cwnd >= MIN_CWND, "cwnd {}", f.st.cwnd);
        }
        assert_eq!(f.st.cwnd, MIN_CWND);
        assert!(frac(&f) < 1.0, "frac {}", frac(&f));
    }

    /// Pacing: `frac_cwnd`·MSS/srtt, doubled while cwnd < ssthresh/2; TSO burst = the rate's
    /// 2^-12 s in segments, at least 2.
    #[test]
    fn pacing_rate_and_tso_burst() {
        // 20 segments, 10 ms, congestion avoidance: 20·1448/0.01 = 2 896 000 B/s.
        let mut f = flow(PragueConfig::default(), 20, 10, ms(10));
        f.cc.upscaled_alpha = 0;
        ack(&mut f, 1, 1, ms(1));
        assert_eq!(frac(&f), 20.0);
        assert_eq!(f.cc.pacing_rate(), Some(2_896_000));
        assert_eq!(f.cc.tso_segs(&f.st), Some(MIN_TSO_SEGS));
        // Slow start (cwnd < ssthresh/2): twice that.
        let mut f = flow(PragueConfig::default(), 20, INFINITE_SSTHRESH, ms(10));
        f.cc.upscaled_alpha = 0;
        ack(&mut f, 1, 1, ms(1));
        assert_eq!(f.cc.pacing_rate(), Some(5_792_000));
        // 1000 segments at 1 ms: 1.448 GB/s = 10^6 segments/s; 2^-12 s of it is 244 segments.
        let mut f = flow(PragueConfig::default(), 1000, 10, ms(1));
        f.cc.upscaled_alpha = 0;
        ack(&mut f, 1, 1, Dur::from_micros(1));
        assert_eq!(f.cc.pacing_rate(), Some(1_448_000_000));
        assert_eq!(f.cc.tso_segs(&f.st), Some(244));
        assert!(f.cc.wants_pacing());
        assert_eq!(Prague::default().pacing_rate(), None, "no srtt yet");
    }

    /// Prague forces L4S ECN and handles CE itself; it owns cwnd (`cong_control` = true).
    #[test]
    fn requires_l4s_and_handles_ce() {
        let cc = Prague::default();
        assert_eq!(cc.ecn_requirement(), Some(EcnMode::L4s));
        assert!(cc.handles_ce());
        assert_eq!(cc.name(), "prague");
    }

    /// Loss: `ssthresh` = max(cwnd/2, 2); entering Recovery halves `frac_cwnd` once and stops
    /// the increase until Open; an RTO (`Loss` event) halves once; a TLP-repaired loss
    /// (`ssthresh` + `CompleteCwr` without a state change) is an α-reduction; undo restores.
    /// The loss and the RTO go through the kit's state machine as the transport drives it.
    #[test]
    fn loss_is_reno_halving_and_blocks_increase_until_open() {
        let mut f = flow(PragueConfig::default(), 40, 10, ms(20));
        let a = AckInfo::default();
        assert_eq!(f.cc.clone().ssthresh(f.now, &f.st, &a), 20);
        f.loss();
        assert_eq!(f.rec.state(), CaState::Recovery);
        assert_eq!(f.st.ssthresh, 20);
        assert_eq!(frac(&f), 20.0);
        // 39 ACKs stay below the recovery point (SND.NXT = 40 at entry).
        for _ in 0..39 {
            ack1(&mut f, false, 40);
        }
        assert_eq!(frac(&f), 20.0, "no increase in recovery");
        assert_eq!(f.st.cwnd, 20, "cwnd stepped down to frac");
        assert_eq!(f.cc.state(), "recovery");
        // The 40th reaches it: `CompleteCwr` (no new reduction) and Open, then this ACK's
        // additive increase of one segment per ⌈frac⌉ = 20 ACKs, up to one unit of the
        // 2^-20 fixed point (`CWND_UNIT`).
        ack1(&mut f, false, 40);
        assert_eq!(f.rec.state(), CaState::Open);
        assert!(
            frac(&f) > 20.0 && frac(&f) <= 20.0 + 1.0 / 20.0 + 1.0 / 1_048_576.0,
            "recovery end is no new reduction: {}",
            frac(&f)
        );
        assert_eq!(f.cc.undo_cwnd(f.now, &f.st, 0), 40);
        assert_eq!(frac(&f), 40.0);

        // RTO: ssthresh, Loss event (halves), set_state(Loss) (no second halving).
        let mut f = flow(PragueConfig::default(), 40, 10, ms(20));
        f.rto();
        assert_eq!(f.rec.state(), CaState::Loss);
        assert_eq!(frac(&f), 20.0);
        assert_eq!(f.cc.state(), "loss");

        // TLP: α-reduction (α = ¼ → ×7/8).
        let mut f = flow(PragueConfig::default(), 40, 10, ms(20));
        f.cc.upscaled_alpha = (PRAGUE_MAX_ALPHA / 4) << PRAGUE_SHIFT_G;
        let _ = f.cc.ssthresh(f.now, &f.st, &a);
        f.cc.cwnd_event(f.now, &mut f.st, CwndEvent::CompleteCwr);
        assert_eq!(frac(&f), 35.0);
        f.cc.cwnd_event(f.now, &mut f.st, CwndEvent::CompleteCwr);
        assert_eq!(frac(&f), 35.0, "only right after ssthresh");
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        /// Random ACKs (sizes, CE counts, spacing, srtt), recoveries and RTOs driven as the
        /// transport does: Prague never lowers cwnd below 2 itself (the transport's RTO may),
        /// never moves it by more than the slow-start growth + 1 per ACK, keeps cwnd ≤ clamp and
        /// α in [0, 1], and sets a pacing rate once srtt is known.
        #[test]
        fn invariants_under_random_acks_and_losses(
            iw in 2u32..=40,
            events in proptest::collection::vec(
                (1u32..=4, 0u32..=4, 1u64..=20_000, 1u64..=60, 0u8..=30),
                1..400,
            ),
        ) {
            let mut f = flow(PragueConfig { rtt_transition: 3, ..PragueConfig::default() },
                iw, INFINITE_SSTHRESH, ms(10));
            f.st.cwnd_clamp = 1_000;
            for (segs, ce, gap_us, srtt_ms, ev) in events {
                match ev {
                    0 if f.rec.state() == CaState::Open => f.loss(),
                    1 if f.rec.state() != CaState::Open => f.end_reduction(),
                    2 => f.rto(),
                    _ => {}
                }
                f.srtt = Some(ms(srtt_ms));
                let before = f.st.cwnd;
                ack(&mut f, segs, ce.min(segs), Dur::from_micros(gap_us));
                if before >= MIN_CWND {
                    prop_assert!(f.st.cwnd >= MIN_CWND, "{before} -> {}", f.st.cwnd);
                } else {
                    prop_assert!(f.st.cwnd >= before);
                }
                prop_assert!(f.st.cwnd <= before + segs + 1);
                prop_assert!(f.st.cwnd <= f.st.cwnd_clamp);
                prop_assert!((0.0..=1.0).contains(&f.cc.alpha()));
                // Some once srtt is known; it may round to 0 when `frac_cwnd` has collapsed
                // (as in Linux v0.6, which has no rate floor; the transport then does not pace).
                prop_assert!(f.cc.pacing_rate().is_some());
                let mut ok = true;
                f.cc.stats(&mut |_, v| ok &= v.is_finite());
                prop_assert!(ok);
            }
        }
    }
}
