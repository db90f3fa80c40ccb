//! BBRv3 as google/bbr branch `v3` implements it in `net/ipv4/tcp_bbr.c` (`BBR_VERSION` 3),
//! with the BBR-TAS pacing-shift selection and the 2BRobust pacing boost as options.
//!
//! Contract: [`Bbr3`] is a model-based controller. It returns `true` from `cong_control` and
//! then owns `st.cwnd` completely, also during loss recovery (the transport runs neither PRR
//! nor `cong_avoid`, and does not set cwnd = ssthresh at recovery exit). It asks for pacing
//! ([`CongestionControl::wants_pacing`]) and publishes its rate through
//! [`CongestionControl::pacing_rate`], its TSO burst size through
//! [`CongestionControl::tso_segs`] (the v3 `tso_segs` hook, `bbr_tso_segs`) and, with BBR-TAS,
//! its TSQ shift through [`CongestionControl::pacing_shift`]. Hooks map to Linux as follows:
//! `init` = `bbr_init`, `cong_control` = `bbr_main`, `on_packet_lost` = `bbr_skb_marked_lost`,
//! `ssthresh` = `bbr_ssthresh` (saves cwnd and the undo state, returns `st.ssthresh` unchanged),
//! `undo_cwnd` = `bbr_undo_cwnd`, `set_state` = `bbr_set_state`, `cwnd_event` =
//! `bbr_cwnd_event`. Each rule below names the Linux function it renders; the Rust is written
//! from reading the v3 source and draft-ietf-ccwg-bbr, not copied. The transport supplies what
//! Linux's BBRv3 reads from the socket and the skb: `tx.lost` of a lost segment
//! ([`LostInfo::tx_lost`]) and `tp->delivered_ce` ([`AckInfo::total_delivered_ce`]); an ACK that
//! raises the latter carried ECE (`rs->is_ece`).
//!
//! Arithmetic: Linux's integer fixed point throughout. Bandwidth is packets per µs scaled by
//! 2^24 ([`BW_UNIT`]); gains and fractions are in 1/256 ([`BBR_UNIT`]), so the "decimal"
//! constants are the integers Linux computes: Startup pacing gain 2.77 → 710/256 (2.773), Drain
//! 88/256 (0.344), ProbeBW_DOWN 232/256 (0.906), ProbeBW_UP 320/256, loss threshold 5/256
//! (1.95 %), β 76/256 (cut to 180/256 = 0.703), headroom 38/256 (0.148), ECN α gain 16/256,
//! ECN factor 85/256, ECN threshold 128/256, full-bw threshold 320/256. Times are nanoseconds
//! ([`Time`]); Linux keeps RTTs in µs, so RTT samples and min_rtt are truncated to whole µs and
//! every µs expression (BDP, epoch lengths, EDT distance) is converted explicitly. The per-ACK
//! shortcuts give Linux's results bit for bit: 64-bit arithmetic where the 128-bit intermediate
//! is not needed (checked, falling back to 128 bits), the TSO goal and the pacing rate memoised
//! on all their inputs, and terms left uncomputed where they cannot change the outcome (the Reno
//! probe bound below the BDP, the cwnd target when its BDP term already reaches the inflight
//! cap, `bbr_packets_in_net_at_edt` where it is not read).
//!
//! Where Linux v3 and the IETF draft differ, this follows **Linux v3**: Drain gain 88/256 (draft
//! 0.5), no Drain round timer (draft: leave Drain after 3 rounds), loss threshold 5/256 (draft
//! 2 %), the v3 Startup cwnd rule (grow while cwnd < target or cwnd < 2·init_cwnd), the per-ACK
//! sample in the Startup plateau test, cwnd restore only at the end of RTO recovery
//! (`bbr_exit_loss_recovery`; v3 has no `bbr_set_cwnd_to_recover_or_restore`), ECN response.
//!
//! ECN response ([`EcnResponse`], `cfg.ecn_response`): google's by default; `PerMark` models
//! the L4S-style response of the ns-3 BBRv3 port (no 5 ms min_rtt gate, any CE in the round
//! is "inflight too high", inflight_lo cut by α instead of α/3 per CE round).
//!
//! Deliberate deviations from Linux v3 (each forced by the sans-IO interface or the simulator):
//! - No fast path (`bbr_run_fast_path`): every ACK takes the full model and control update.
//!   Linux's fast path is a CPU saving for app-limited ACKs; the only visible difference is that
//!   Linux skips the ACK-aggregation update on such ACKs.
//! - No PLB, no TLP-repair event (`CA_EVENT_TLP_RECOVERY` is not a [`CwndEvent`]), no
//!   `is_acking_tlp_retrans_seq` (treated as false), no receiver-side CE state
//!   (`dctcp_ece_ack_update`).
//! - Linux marks the socket app-limited on every ProbeRTT ACK (`tp->app_limited = delivered +
//!   in_flight`). The transport owns that flag here, so the controller emulates it: a sample
//!   (or lost segment) whose `prior_delivered` lies between the delivered count at ProbeRTT
//!   entry and the last such mark is treated as app-limited, exactly the segments Linux's
//!   transport would have flagged.
//! - Rate samples with an interval shorter than 1 µs are invalid (Linux's `interval_us` is an
//!   integer µs count); the v3 sample rounds up (`bbr_calculate_bw_sample`, `DIV_ROUND_UP`),
//!   unlike v1's truncating [`super::bw_from_sample`].
//! - 2BRobust's "not app-limited" is read as: neither the sample (`rs.is_app_limited`, with
//!   the ProbeRTT emulation) nor the transport at this ACK (`st.app_limited`) is
//!   application-limited. The sample alone would let the boost act for one round after the
//!   application runs dry (those samples come from bulk-sent packets), pacing faster with no
//!   data to send.
//!
//! BBR-TAS ([`super::Tas`]): the shift in force is `startup_shift` in Startup and Drain and
//! `steady_shift` in ProbeBW (every phase) and ProbeRTT; the TSO hook and the quantization
//! budget use it (in Linux TAS overwrites `sk_pacing_shift`, which both read). Nothing else
//! changes. 2BRobust ([`super::Robust`]): in ProbeBW, on an ACK when not app-limited (above),
//! at least `rounds` packet-timed rounds after the model's BDP last stepped up (after the flow
//! began if it never did) and with in flight after the ACK < α·BDP (BDP of the model bw at
//! gain 1, without the quantization budget; α in 1/256 units), the pacing gain is the Startup
//! gain 710/256 instead of the phase's; cwnd is unchanged, and the boost ends on the first ACK
//! that no longer meets the conditions.
//!
//! **Decision** (2BRobust on v3): the source waits `rounds` rounds after ProbeRTT ends, because
//! leaving ProbeRTT raises the BDP target above what is in flight. In BBRv3 two more events do
//! the same without a ProbeRTT: min_rtt rising when its 10 s window expires (an RTT increase;
//! in BBRv1 that expiry *is* ProbeRTT entry), and ProbeBW_REFILL resetting bw_lo/inflight_lo
//! (the model bw steps up to max_bw). The gate restarts at all three
//! (`robust_gate_round`); without that, 2BRobust activated on an uncontended host after an
//! RTT rise and against a BBRv3 competitor (`crates/sim/tests/robust.rs`), which the source
//! requires it not to.

use std::fmt;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::{
    BBR_SCALE, BBR_UNIT, BW_SCALE, BW_UNIT, Bbr3Config, EcnResponse, GSO_MAX_SIZE, MAX_TCP_HEADER,
    PACING_MARGIN_PERCENT, SYSCTL_MIN_TSO_SEGS, rate_bytes_per_sec,
};
use crate::{
    AckInfo, CaState, CongestionControl, CwndEvent, CwndState, Dur, INFINITE_SSTHRESH, LostInfo,
    RateSample, StatSink, Time,
    num::{saturating_u32, u64_to_f64},
};

/// Window of the min_rtt filter (Linux `bbr_min_rtt_win_sec` = 10).
pub const MIN_RTT_WIN: Dur = Dur::from_secs(10);
/// Minimum time spent at the ProbeRTT cwnd (Linux `bbr_probe_rtt_mode_ms` = 200).
pub const PROBE_RTT_MODE: Dur = Dur::from_millis(200);
/// Window of the `probe_rtt_min` filter, i.e. the ProbeRTT period (Linux
/// `bbr_probe_rtt_win_ms` = 5000).
pub const PROBE_RTT_WIN: Dur = Dur::from_millis(5000);
/// cwnd in ProbeRTT as a fraction of the BDP: 128/256 = 0.5 (Linux `bbr_probe_rtt_cwnd_gain`).
pub const PROBE_RTT_CWND_GAIN: u32 = BBR_UNIT / 2;
/// The min_rtt-based TSO allowance halves per 2^9 µs of min_rtt (Linux `bbr_tso_rtt_shift`).
pub const TSO_RTT_SHIFT: u32 = 9;
/// Startup pacing gain 4·ln 2 ≈ 2.77: 256·277/100 + 1 = 710 (Linux `bbr_startup_pacing_gain`).
pub const STARTUP_PACING_GAIN: u32 = BBR_UNIT * 277 / 100 + 1;
/// Startup cwnd gain 2 (Linux `bbr_startup_cwnd_gain`).
pub const STARTUP_CWND_GAIN: u32 = BBR_UNIT * 2;
/// Drain pacing gain 1/2.885: 256·1000/2885 = 88 (Linux `bbr_drain_gain`; the draft uses 0.5).
pub const DRAIN_GAIN: u32 = BBR_UNIT * 1000 / 2885;
/// Steady-state cwnd gain 2 (Linux `bbr_cwnd_gain`).
pub const CWND_GAIN: u32 = BBR_UNIT * 2;
/// ProbeBW_UP pacing gain 5/4 = 320 (Linux `bbr_pacing_gain[BBR_BW_PROBE_UP]`).
pub const PACING_GAIN_UP: u32 = BBR_UNIT * 5 / 4;
/// ProbeBW_DOWN pacing gain 256·91/100 = 232 (Linux `bbr_pacing_gain[BBR_BW_PROBE_DOWN]`).
pub const PACING_GAIN_DOWN: u32 = BBR_UNIT * 91 / 100;
/// ProbeBW_CRUISE and ProbeBW_REFILL pacing gain 1 (Linux `bbr_pacing_gain[]`).
pub const PACING_GAIN_CRUISE: u32 = BBR_UNIT;
/// Extra cwnd gain in ProbeBW_UP in units of 1/4 (Linux `bbr_bw_probe_cwnd_gain` = 1: 2.25).
pub const BW_PROBE_CWND_GAIN: u32 = 1;
/// Minimum cwnd and inflight target, packets (Linux `bbr_cwnd_min_target`).
pub const CWND_MIN_TARGET: u32 = 4;
/// A bandwidth sample ≥ 1.25 × `full_bw` means the pipe may not be full: 320
/// (Linux `bbr_full_bw_thresh`).
pub const FULL_BW_THRESH: u32 = BBR_UNIT * 5 / 4;
/// Rounds without such growth before the pipe is deemed full (Linux `bbr_full_bw_cnt`).
pub const FULL_BW_CNT: u32 = 3;
/// Gain on the ACK-aggregation cwnd term: 1.0 (Linux `bbr_extra_acked_gain`).
pub const EXTRA_ACKED_GAIN: u32 = BBR_UNIT;
/// Rounds per slot of the two-slot extra_acked max filter (Linux `bbr_extra_acked_win_rtts`).
pub const EXTRA_ACKED_WIN_RTTS: u32 = 5;
/// An ACK epoch that has counted this many packets restarts (Linux
/// `bbr_ack_epoch_acked_reset_thresh` = 2^20).
pub const ACK_EPOCH_ACKED_RESET_THRESH: u32 = 1 << 20;
/// The aggregation term is capped at bw × 100 ms (Linux `bbr_extra_acked_max_us`).
pub const EXTRA_ACKED_MAX_US: u64 = 100 * 1000;
/// ECN logic only when min_rtt ≤ 5000 µs (Linux `bbr_ecn_max_rtt_us`).
pub const ECN_MAX_RTT_US: u32 = 5000;
/// Multiplicative decrease β = 256·30/100 = 76: bounds are cut to (256 − 76)/256 ≈ 0.703
/// (Linux `bbr_beta`).
pub const BETA: u32 = BBR_UNIT * 30 / 100;
/// EWMA gain of the ECN mark ratio α: 256/16 = 16 (Linux `bbr_ecn_alpha_gain`).
pub const ECN_ALPHA_GAIN: u32 = BBR_UNIT / 16;
/// Initial α = 1.0 (Linux `bbr_ecn_alpha_init`).
pub const ECN_ALPHA_INIT: u32 = BBR_UNIT;
/// On ECN, inflight_lo is cut by α·85/256 ≈ α/3 (Linux `bbr_ecn_factor`).
pub const ECN_FACTOR: u32 = BBR_UNIT / 3;
/// With [`EcnResponse::PerMark`], inflight_lo is cut by α·256/256 = α per CE round (the ns-3
/// port's `bbr_ecn_cut`: 1 − α·`ecn_factor` with `ecn_factor` = 1.0).
pub const PER_MARK_ECN_FACTOR: u32 = BBR_UNIT;
/// A CE ratio above 128/256 = 0.5 means inflight is too high (Linux `bbr_ecn_thresh`).
pub const ECN_THRESH: u32 = BBR_UNIT / 2;
/// After an ECN-only cycle the first probe round adds inflight_hi·128/256 (Linux
/// `bbr_ecn_reprobe_gain`).
pub const ECN_REPROBE_GAIN: u32 = BBR_UNIT / 2;
/// A loss rate above 256·2/100 = 5/256 ≈ 1.95 % means inflight is too high (Linux
/// `bbr_loss_thresh`; the draft's LossThresh is 2 %).
pub const LOSS_THRESH: u32 = BBR_UNIT * 2 / 100;
/// Loss events in a Startup recovery round needed for the loss exit (Linux
/// `bbr_full_loss_cnt`).
pub const FULL_LOSS_CNT: u32 = 6;
/// Consecutive Startup rounds with CE ratio ≥ 0.5 for the ECN exit (Linux `bbr_full_ecn_cnt`).
pub const FULL_ECN_CNT: u32 = 2;
/// Headroom left below inflight_hi: 256·15/100 = 38 (Linux `bbr_inflight_headroom`).
pub const INFLIGHT_HEADROOM: u32 = BBR_UNIT * 15 / 100;
/// Reno-coexistence bound on rounds between probes (Linux `bbr_bw_probe_max_rounds`).
pub const BW_PROBE_MAX_ROUNDS: u32 = 63;
/// The round counter starts at a random value in [0, 2) (Linux `bbr_bw_probe_rand_rounds`).
pub const BW_PROBE_RAND_ROUNDS: u32 = 2;
/// Wall-clock wait before probing: 2 s … (Linux `bbr_bw_probe_base_us`).
pub const BW_PROBE_BASE_US: u64 = 2_000_000;
/// … plus uniform [0, 1 s) (Linux `bbr_bw_probe_rand_us`).
pub const BW_PROBE_RAND_US: u64 = 1_000_000;
/// The inflight_hi growth exponent is capped at 30 (Linux `bbr_raise_inflight_hi_slope`).
pub const BW_PROBE_UP_ROUNDS_MAX: u32 = 30;
/// Largest initial cwnd Linux remembers (`bbr_init`: 7-bit `init_cwnd`, `min(0x7F, cwnd)`).
const INIT_CWND_MAX: u32 = 0x7F;
/// Saturation of the rounds-since-probe counter (8-bit field in Linux).
const ROUNDS_SINCE_PROBE_MAX: u32 = 0xFF;
/// Saturation of the extra_acked round counter (5-bit field in Linux).
const EXTRA_ACKED_WIN_RTTS_MAX: u32 = 0x1F;
/// Saturation of the ACK-epoch packet counter (20-bit field in Linux).
const ACK_EPOCH_ACKED_MAX: u32 = 0xF_FFFF;
/// Saturation of the Startup loss-event counter (4-bit field in Linux).
const LOSS_EVENTS_MAX: u32 = 0xF;

/// "Unset" inflight bound (Linux `~0U`).
const INFLIGHT_UNSET: u32 = u32::MAX;
/// "Unset" bandwidth bound (Linux `~0U`).
const BW_UNSET: u64 = u64::MAX;
/// No RTT sample yet (Linux `~0U` from `tcp_min_rtt`).
const RTT_UNSET: u32 = u32::MAX;

/// Linux `enum bbr_mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

/// Linux `enum bbr_pacing_gain_phase` (`cycle_idx`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Up,
    Down,
    Cruise,
    Refill,
}

impl Phase {
    /// Linux `bbr_pacing_gain[]`.
    fn pacing_gain(self) -> u32 {
        match self {
            Phase::Up => PACING_GAIN_UP,
            Phase::Down => PACING_GAIN_DOWN,
            Phase::Cruise | Phase::Refill => PACING_GAIN_CRUISE,
        }
    }
}

/// Linux `enum bbr_ack_phase`: what the incoming ACKs say about bandwidth probing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AckPhase {
    Init,
    Refilling,
    ProbeStarting,
    ProbeFeedback,
    ProbeStopping,
}

/// `bbr_tso_segs_goal` as last computed, with everything it read: a hit returns exactly what
/// the computation would (the controller's own state can also be set directly by tests, so the
/// memo checks its inputs instead of being invalidated at each write). It is refreshed where
/// the pacing rate is set (`set_pacing_rate`, `&mut self`), which is where its inputs change on
/// an ACK; a read-only lookup that misses computes the value without storing it.
#[derive(Clone, Copy, Debug, Default)]
struct TsoMemo {
    pacing_rate: u64,
    min_rtt_us: u32,
    mss: u32,
    shift: u8,
    /// 0: nothing memoised (a real result is at least `SYSCTL_MIN_TSO_SEGS`).
    segs: u32,
}

/// Memoised derived values: speed only, never state (hidden from `Debug`). Most ACKs leave
/// every input of these unchanged.
#[derive(Clone, Default)]
struct Cache {
    tso: TsoMemo,
    /// `bbr_bw_to_pacing_rate` for (bw, gain, mss).
    rate: Option<(u64, u32, u32, u64)>,
}

impl fmt::Debug for Cache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("_")
    }
}

/// BBRv3 (google/bbr v3), with optional BBR-TAS, 2BRobust and ECN response. See the module doc.
#[derive(Clone, Debug)]
pub struct Bbr3 {
    cfg: Bbr3Config,
    rng: ChaCha8Rng,
    /// `bbr_init` has run (Linux `initialized`).
    initialized: bool,

    // --- State machine (Linux `mode`, `cycle_idx`, `ack_phase`).
    mode: Mode,
    phase: Phase,
    ack_phase: AckPhase,
    /// Pacing and cwnd gains in force (1/256); `pacing_gain` includes the 2BRobust boost.
    pacing_gain: u32,
    cwnd_gain: u32,
    /// Pacing rate in bytes per second (Linux `sk_pacing_rate`).
    pacing_rate: u64,
    has_seen_rtt: bool,
    /// Last smoothed RTT the transport reported (for `bbr_init_pacing_rate_from_rtt`).
    srtt: Option<Dur>,
    /// Segment size and host pacing shift last seen (for `stats`).
    mss: u32,
    host_shift: u8,

    // --- Rounds (Linux `next_rtt_delivered`, `round_start`).
    /// `tp->delivered` as last reported.
    delivered: u64,
    next_rtt_delivered: u64,
    round_start: bool,
    /// Packet-timed rounds since the flow began (for 2BRobust and tests).
    round_count: u64,
    /// `round_count` when the model's BDP last stepped up: ProbeRTT ended, min_rtt rose (its
    /// window expired), or ProbeBW_REFILL reset the lower bounds. 2BRobust waits `rounds`
    /// rounds after it.
    robust_gate_round: Option<u64>,

    // --- RTT (Linux `min_rtt_us`, `probe_rtt_*`).
    min_rtt_us: u32,
    min_rtt_stamp: Time,
    probe_rtt_min_us: u32,
    probe_rtt_min_stamp: Time,
    probe_rtt_done_stamp: Option<Time>,
    probe_rtt_round_done: bool,
    idle_restart: bool,
    /// Emulated `tp->app_limited` marking by ProbeRTT: (delivered at entry, last mark).
    probe_rtt_app_limited: Option<(u64, u64)>,

    // --- Recovery (Linux `prior_cwnd`, `prev_ca_state`, undo state).
    prior_cwnd: u32,
    prev_ca_state: CaState,
    init_cwnd: u32,
    undo_bw_lo: u64,
    undo_inflight_lo: u32,
    undo_inflight_hi: u32,

    // --- Startup plateau (Linux `full_bw*`).
    full_bw_reached: bool,
    full_bw_now: bool,
    full_bw_cnt: u32,
    full_bw: u64,

    // --- ACK aggregation (Linux `ack_epoch_*`, `extra_acked*`).
    ack_epoch_mstamp: Time,
    ack_epoch_acked: u32,
    extra_acked: [u32; 2],
    extra_acked_win_rtts: u32,
    extra_acked_win_idx: usize,

    // --- Model bounds.
    bw_hi: [u64; 2],
    bw_lo: u64,
    bw_latest: u64,
    inflight_lo: u32,
    inflight_hi: u32,
    inflight_latest: u32,

    // --- Probing (Linux `bw_probe_*`, `probe_wait_us`, `cycle_mstamp`, …).
    cycle_mstamp: Time,
    probe_wait: Dur,
    rounds_since_probe: u32,
    bw_probe_up_cnt: u32,
    bw_probe_up_acks: u32,
    bw_probe_up_rounds: u32,
    bw_probe_samples: bool,
    prev_probe_too_high: bool,
    stopped_risky_probe: bool,

    // --- Congestion signals.
    loss_round_delivered: u64,
    loss_round_start: bool,
    loss_in_round: bool,
    loss_in_cycle: bool,
    loss_events_in_round: u32,
    ecn_in_round: bool,
    ecn_in_cycle: bool,
    ecn_eligible: bool,
    ecn_alpha: u32,
    startup_ecn_rounds: u32,
    alpha_last_delivered: u64,
    alpha_last_delivered_ce: u64,
    /// Cumulative CE-marked deliveries (`tp->delivered_ce`) as last reported.
    delivered_ce: u64,

    // --- 2BRobust.
    robust_active: bool,
    robust_activations: u64,
    robust_acks: u64,

    cache: Cache,
}

/// The quantities of one (real or constructed) rate sample that `bbr_is_inflight_too_high`
/// and `bbr_handle_inflight_too_high` read.
#[derive(Clone, Copy, Debug, Default)]
struct Sample {
    lost: u64,
    tx_in_flight: u32,
    delivered: u64,
    delivered_ce: u64,
    is_app_limited: bool,
}

impl Bbr3 {
    /// A BBRv3 controller; `seed` drives the probe-timing randomness (`bbr_pick_probe_wait`).
    #[must_use]
    pub fn new(cfg: Bbr3Config, seed: u64) -> Self {
        Bbr3 {
            cfg,
            rng: ChaCha8Rng::seed_from_u64(seed),
            initialized: false,
            mode: Mode::Startup,
            phase: Phase::Up,
            ack_phase: AckPhase::Init,
            pacing_gain: STARTUP_PACING_GAIN,
            cwnd_gain: STARTUP_CWND_GAIN,
            pacing_rate: 0,
            has_seen_rtt: false,
            srtt: None,
            mss: 0,
            host_shift: crate::DEFAULT_PACING_SHIFT,
            delivered: 0,
            next_rtt_delivered: 0,
            round_start: false,
            round_count: 0,
            robust_gate_round: None,
            min_rtt_us: RTT_UNSET,
            min_rtt_stamp: Time::ZERO,
            probe_rtt_min_us: RTT_UNSET,
            probe_rtt_min_stamp: Time::ZERO,
            probe_rtt_done_stamp: None,
            probe_rtt_round_done: false,
            idle_restart: false,
            probe_rtt_app_limited: None,
            prior_cwnd: 0,
            prev_ca_state: CaState::Open,
            init_cwnd: 10,
            undo_bw_lo: 0,
            undo_inflight_lo: 0,
            undo_inflight_hi: 0,
            full_bw_reached: false,
            full_bw_now: false,
            full_bw_cnt: 0,
            full_bw: 0,
            ack_epoch_mstamp: Time::ZERO,
            ack_epoch_acked: 0,
            extra_acked: [0; 2],
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
            bw_hi: [0; 2],
            bw_lo: BW_UNSET,
            bw_latest: 0,
            inflight_lo: INFLIGHT_UNSET,
            inflight_hi: INFLIGHT_UNSET,
            inflight_latest: 0,
            cycle_mstamp: Time::ZERO,
            probe_wait: Dur::ZERO,
            rounds_since_probe: 0,
            bw_probe_up_cnt: u32::MAX,
            bw_probe_up_acks: 0,
            bw_probe_up_rounds: 0,
            bw_probe_samples: false,
            prev_probe_too_high: false,
            stopped_risky_probe: false,
            loss_round_delivered: 1,
            loss_round_start: false,
            loss_in_round: false,
            loss_in_cycle: false,
            loss_events_in_round: 0,
            ecn_in_round: false,
            ecn_in_cycle: false,
            ecn_eligible: false,
            ecn_alpha: ECN_ALPHA_INIT,
            startup_ecn_rounds: 0,
            alpha_last_delivered: 0,
            alpha_last_delivered_ce: 0,
            delivered_ce: 0,
            robust_active: false,
            robust_activations: 0,
            robust_acks: 0,
            cache: Cache::default(),
        }
    }

    // ----- Model accessors -----

    /// Linux `bbr_max_bw`: max of the two filter slots.
    fn max_bw(&self) -> u64 {
        self.bw_hi[0].max(self.bw_hi[1])
    }

    /// Linux `bbr_bw`: the bandwidth used for control, min(max_bw, bw_lo).
    fn bw(&self) -> u64 {
        self.max_bw().min(self.bw_lo)
    }

    /// Linux `bbr_extra_acked`.
    fn extra_acked(&self) -> u32 {
        self.extra_acked[0].max(self.extra_acked[1])
    }

    /// Linux `bbr_is_probing_bandwidth`: Startup, ProbeBW_REFILL or ProbeBW_UP.
    fn is_probing_bandwidth(&self) -> bool {
        self.mode == Mode::Startup
            || (self.mode == Mode::ProbeBw && matches!(self.phase, Phase::Refill | Phase::Up))
    }

    /// The TSQ shift in force: BBR-TAS's choice for the current mode, else the host's.
    fn shift_in_force(&self, host: u8) -> u8 {
        match self.cfg.tas {
            Some(t) if matches!(self.mode, Mode::Startup | Mode::Drain) => t.startup_shift,
            Some(t) => t.steady_shift,
            None => host,
        }
    }

    /// Linux `bbr_bdp`: ⌈bw · min_rtt · gain⌉ packets, or the initial cwnd without an RTT.
    fn bdp(&self, bw: u64, gain: u32) -> u32 {
        if self.min_rtt_us == RTT_UNSET {
            return self.init_cwnd;
        }
        // In 64 bits when nothing overflows (then < 2^32 packets, no saturation needed).
        if let Some(w) = bw
            .checked_mul(u64::from(self.min_rtt_us))
            .and_then(|w| w.checked_mul(u64::from(gain)))
        {
            return u32::try_from((w >> BBR_SCALE).div_ceil(BW_UNIT)).unwrap_or(u32::MAX);
        }
        let w = u128::from(bw) * u128::from(self.min_rtt_us);
        let bdp = ((w * u128::from(gain)) >> BBR_SCALE).div_ceil(u128::from(BW_UNIT));
        u32::try_from(bdp).unwrap_or(u32::MAX)
    }

    /// Linux `bbr_tso_segs_generic`: segments per TSO burst from the pacing rate at the shift in
    /// force plus a min_rtt-based allowance (64 KB halved per 512 µs of min_rtt), capped below
    /// `gso_max_size`, at least `sysctl_tcp_min_tso_segs`.
    fn tso_segs_generic(&self, shift: u8, mss: u32, gso_max_size: u32) -> u32 {
        let mut bytes = self.pacing_rate >> shift;
        if self.min_rtt_us != RTT_UNSET {
            let r = self.min_rtt_us >> TSO_RTT_SHIFT;
            if r < u32::BITS {
                bytes += u64::from(GSO_MAX_SIZE >> r);
            }
        }
        let bytes = bytes.min(u64::from(gso_max_size - 1 - MAX_TCP_HEADER));
        let segs = u32::try_from(bytes / u64::from(mss.max(1))).unwrap_or(u32::MAX);
        segs.max(SYSCTL_MIN_TSO_SEGS)
    }

    /// Linux `bbr_tso_segs_goal`: the TSO size at the legacy 64 KB GSO limit.
    fn tso_segs_goal(&self, st: &CwndState) -> u32 {
        let shift = self.shift_in_force(st.pacing_shift);
        let m = &self.cache.tso;
        if m.pacing_rate == self.pacing_rate
            && m.min_rtt_us == self.min_rtt_us
            && m.mss == st.mss
            && m.shift == shift
            && m.segs != 0
        {
            return m.segs;
        }
        self.tso_segs_generic(shift, st.mss, GSO_MAX_SIZE)
    }

    /// Store `bbr_tso_segs_goal` for the current inputs, so that the lookups until they next
    /// change (the rest of this ACK, and the transport's per-skb `tso_segs` calls) hit.
    fn refresh_tso_memo(&mut self, st: &CwndState) {
        let shift = self.shift_in_force(st.pacing_shift);
        let segs = self.tso_segs_goal(st);
        self.cache.tso = TsoMemo {
            pacing_rate: self.pacing_rate,
            min_rtt_us: self.min_rtt_us,
            mss: st.mss,
            shift,
            segs,
        };
    }

    /// Linux `bbr_quantization_budget`: room for 3 TSO bursts, at least 4 packets, +2 in UP.
    fn quantization_budget(&self, cwnd: u32, st: &CwndState) -> u32 {
        let mut cwnd = cwnd.max(3 * self.tso_segs_goal(st)).max(CWND_MIN_TARGET);
        if self.mode == Mode::ProbeBw && self.phase == Phase::Up {
            cwnd += 2;
        }
        cwnd
    }

    /// Linux `bbr_inflight`: the BDP at `gain` plus the quantization budget.
    fn inflight(&self, bw: u64, gain: u32, st: &CwndState) -> u32 {
        self.quantization_budget(self.bdp(bw, gain), st)
    }

    /// Linux `bbr_target_inflight`: min(inflight at gain 1, cwnd).
    fn target_inflight(&self, st: &CwndState) -> u32 {
        self.inflight(self.bw(), BBR_UNIT, st).min(st.cwnd)
    }

    /// Linux `bbr_packets_in_net_at_edt`: in flight at the next departure time (one TSO burst
    /// more when increasing), minus what the path delivers until then at `bw`; floor 0.
    fn packets_in_net_at_edt(
        &self,
        now: Time,
        wstamp: Time,
        inflight_now: u32,
        st: &CwndState,
    ) -> u32 {
        let edt = wstamp.max(now);
        let interval_us = (edt - now).as_micros();
        let d = match self.bw().checked_mul(interval_us) {
            Some(x) => u32::try_from(x >> BW_SCALE).unwrap_or(u32::MAX),
            None => {
                let x = (u128::from(self.bw()) * u128::from(interval_us)) >> BW_SCALE;
                u32::try_from(x).unwrap_or(u32::MAX)
            }
        };
        let mut inflight_at_edt = inflight_now;
        if self.pacing_gain > BBR_UNIT {
            inflight_at_edt += self.tso_segs_goal(st);
        }
        inflight_at_edt.saturating_sub(d)
    }

    /// Linux `bbr_ack_aggregation_cwnd`: gain · max extra_acked, capped at bw · 100 ms.
    fn ack_aggregation_cwnd(&self) -> u32 {
        let bw = self.bw();
        let aggr = (u64::from(EXTRA_ACKED_GAIN) * u64::from(self.extra_acked())) >> BBR_SCALE;
        let capped = match bw.checked_mul(EXTRA_ACKED_MAX_US) {
            Some(max_aggr) => u128::from(aggr.min(max_aggr / BW_UNIT)),
            None => u128::from(aggr)
                .min(u128::from(bw) * u128::from(EXTRA_ACKED_MAX_US) / u128::from(BW_UNIT)),
        };
        u32::try_from(capped).unwrap_or(u32::MAX)
    }

    /// Linux `bbr_probe_rtt_cwnd`: max(4, BDP · 0.5).
    fn probe_rtt_cwnd(&self) -> u32 {
        CWND_MIN_TARGET.max(self.bdp(self.bw(), PROBE_RTT_CWND_GAIN))
    }

    /// Linux `bbr_inflight_with_headroom`: inflight_hi minus max(1, 15 %), at least 4; unset
    /// while inflight_hi is.
    fn inflight_with_headroom(&self) -> u32 {
        if self.inflight_hi == INFLIGHT_UNSET {
            return INFLIGHT_UNSET;
        }
        // At most inflight_hi, as the headroom fraction is below one.
        let headroom = saturating_u32(
            ((u64::from(self.inflight_hi) * u64::from(INFLIGHT_HEADROOM)) >> BBR_SCALE).max(1),
        );
        self.inflight_hi
            .saturating_sub(headroom)
            .max(CWND_MIN_TARGET)
    }

    /// Whether a sample of a segment sent with delivered count `prior_delivered` is
    /// app-limited: the transport's flag, or the emulated ProbeRTT marking (module doc).
    fn app_limited(&self, transport_flag: bool, prior_delivered: u64) -> bool {
        transport_flag
            || self
                .probe_rtt_app_limited
                .is_some_and(|(from, to)| (from..=to).contains(&prior_delivered))
    }

    // ----- Control outputs -----

    /// Linux `bbr_bw_to_pacing_rate` (no `sk_max_pacing_rate` cap here), at least 1 B/s.
    fn bw_to_pacing_rate(bw: u64, gain: u32, mss: u32) -> u64 {
        // `rate_bytes_per_sec` in 64 bits when nothing overflows.
        const SCALE: u64 = 1_000_000 / 100 * (100 - PACING_MARGIN_PERCENT);
        let rate = bw
            .checked_mul(u64::from(mss))
            .and_then(|r| r.checked_mul(u64::from(gain)))
            .and_then(|r| (r >> BBR_SCALE).checked_mul(SCALE));
        match rate {
            Some(r) => (r >> BW_SCALE).max(1),
            None => rate_bytes_per_sec(bw, gain, mss).max(1),
        }
    }

    /// Linux `bbr_init_pacing_rate_from_rtt`: Startup gain · cwnd / srtt (1 ms without srtt).
    fn init_pacing_rate_from_rtt(&mut self, st: &CwndState) {
        let rtt_us = match self.srtt {
            Some(s) => {
                self.has_seen_rtt = true;
                s.as_micros().max(1)
            }
            None => 1_000,
        };
        let bw = u64::from(st.cwnd) * BW_UNIT / rtt_us;
        self.pacing_rate = Self::bw_to_pacing_rate(bw, STARTUP_PACING_GAIN, st.mss);
    }

    /// Linux `bbr_set_pacing_rate`: before `full_bw_reached` the rate only rises.
    #[inline]
    fn set_pacing_rate(&mut self, bw: u64, gain: u32, st: &CwndState) {
        let rate = match self.cache.rate {
            Some((b, g, m, rate)) if b == bw && g == gain && m == st.mss => rate,
            _ => {
                let rate = Self::bw_to_pacing_rate(bw, gain, st.mss);
                self.cache.rate = Some((bw, gain, st.mss, rate));
                rate
            }
        };
        if !self.has_seen_rtt && self.srtt.is_some() {
            self.init_pacing_rate_from_rtt(st);
        }
        if self.full_bw_reached || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
        self.refresh_tso_memo(st);
    }

    /// Linux `bbr_set_cwnd`: toward BDP·gain + aggregation + quantization; in Startup grow by
    /// `acked` while below target (or below 2·init_cwnd); floor 4; ProbeRTT cap.
    ///
    /// `cap` is the cap `bbr_bound_cwnd_for_inflight_model` applies right after (it reads
    /// nothing this changes). With the pipe full, cwnd = min(cwnd + acked, target), floored at
    /// 4 and then capped; a target at or above the cap (≥ 4) gives the same result as the cap
    /// itself, so when the target's BDP term alone reaches the cap the target is not computed.
    /// (The target is at least its BDP term unless the budget's +2 in UP overflows, which
    /// needs BDP + aggregation ≥ 2^32 − 2; the aggregation term is at most `extra_acked`.)
    fn set_cwnd(&mut self, acked: u32, bw: u64, gain: u32, cap: Option<u32>, st: &mut CwndState) {
        let mut cwnd = st.cwnd;
        if acked > 0 {
            if self.full_bw_reached {
                let bdp_reaches_cap = cap.is_some_and(|cap| {
                    let bdp = self.bdp(bw, gain);
                    bdp >= cap
                        && u64::from(bdp) + u64::from(self.extra_acked()) < u64::from(u32::MAX - 1)
                });
                let target = match cap {
                    Some(cap) if bdp_reaches_cap => cap,
                    _ => self.cwnd_target(bw, gain, st),
                };
                cwnd = cwnd.saturating_add(acked).min(target);
            } else {
                let target = self.cwnd_target(bw, gain, st);
                if cwnd < target || cwnd < 2 * self.init_cwnd {
                    cwnd = cwnd.saturating_add(acked);
                }
            }
            cwnd = cwnd.max(CWND_MIN_TARGET);
        }
        st.cwnd = cwnd.min(st.cwnd_clamp);
        if self.mode == Mode::ProbeRtt {
            st.cwnd = st.cwnd.min(self.probe_rtt_cwnd());
        }
    }

    /// The cwnd target of `bbr_set_cwnd`: BDP·gain + aggregation, with the quantization budget.
    fn cwnd_target(&self, bw: u64, gain: u32, st: &CwndState) -> u32 {
        let target = self
            .bdp(bw, gain)
            .saturating_add(self.ack_aggregation_cwnd());
        self.quantization_budget(target, st)
    }

    /// The cap of Linux `bbr_bound_cwnd_for_inflight_model`: inflight_hi (probing phases of
    /// ProbeBW) or inflight_hi with headroom (CRUISE, ProbeRTT), then inflight_lo; floor 4.
    /// None before `bbr_init` (no cap).
    fn inflight_model_cap(&self) -> Option<u32> {
        if !self.initialized {
            return None;
        }
        let mut cap = INFLIGHT_UNSET;
        if self.mode == Mode::ProbeBw && self.phase != Phase::Cruise {
            cap = self.inflight_hi;
        } else if self.mode == Mode::ProbeRtt
            || (self.mode == Mode::ProbeBw && self.phase == Phase::Cruise)
        {
            cap = self.inflight_with_headroom();
        }
        Some(cap.min(self.inflight_lo).max(CWND_MIN_TARGET))
    }

    /// Linux `bbr_save_cwnd`: remember the last good cwnd (only raise it while recovery or
    /// ProbeRTT has cut cwnd).
    fn save_cwnd(&mut self, st: &CwndState) {
        if self.prev_ca_state < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = st.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(st.cwnd);
        }
    }

    // ----- Per-ACK model update (Linux `bbr_main` and its helpers) -----

    /// Linux `bbr_update_round_start`.
    fn update_round_start(&mut self, rs: &RateSample, valid: bool) {
        self.round_start = false;
        if valid && rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = self.delivered;
            self.round_start = true;
            self.round_count += 1;
        }
    }

    /// Linux `bbr_update_ecn_alpha`: eligibility, then α ← (1 − 1/16)α + ratio/16 over the
    /// deliveries since the last update. Returns the CE ratio (1/256) if computed.
    fn update_ecn_alpha(&mut self, st: &CwndState) -> Option<u32> {
        let rtt_ok =
            self.cfg.ecn_response == EcnResponse::PerMark || self.min_rtt_us <= ECN_MAX_RTT_US;
        if !self.ecn_eligible && self.cfg.ecn_low && rtt_ok {
            self.ecn_eligible = true;
        }
        if !self.ecn_eligible {
            return None;
        }
        let delivered = self.delivered.saturating_sub(self.alpha_last_delivered);
        let delivered_ce = self
            .delivered_ce
            .saturating_sub(self.alpha_last_delivered_ce);
        if delivered == 0 {
            return None;
        }
        let ce_ratio = u32::try_from((delivered_ce << BBR_SCALE) / delivered).unwrap_or(BBR_UNIT);
        let alpha = (((BBR_UNIT - ECN_ALPHA_GAIN) * self.ecn_alpha) >> BBR_SCALE)
            + ((ECN_ALPHA_GAIN * ce_ratio) >> BBR_SCALE);
        self.ecn_alpha = alpha.min(BBR_UNIT);
        self.alpha_last_delivered = self.delivered;
        self.alpha_last_delivered_ce = self.delivered_ce;
        self.check_ecn_too_high_in_startup(ce_ratio, st);
        Some(ce_ratio)
    }

    /// Linux `bbr_check_ecn_too_high_in_startup`: 2 consecutive rounds with CE ratio ≥ 0.5.
    fn check_ecn_too_high_in_startup(&mut self, ce_ratio: u32, st: &CwndState) {
        if self.full_bw_reached || !self.ecn_eligible {
            return;
        }
        if ce_ratio >= ECN_THRESH {
            self.startup_ecn_rounds += 1;
        } else {
            self.startup_ecn_rounds = 0;
        }
        if self.startup_ecn_rounds >= FULL_ECN_CNT {
            self.handle_queue_too_high_in_startup(st);
        }
    }

    /// Linux `bbr_handle_queue_too_high_in_startup`: declare the pipe full and set inflight_hi
    /// to max(BDP with quantization, inflight_latest).
    fn handle_queue_too_high_in_startup(&mut self, st: &CwndState) {
        self.full_bw_reached = true;
        let bdp = self.inflight(self.max_bw(), BBR_UNIT, st);
        self.inflight_hi = bdp.max(self.inflight_latest);
    }

    /// Linux `bbr_calculate_bw_sample`: delivered · 2^24 / interval_us, rounded up.
    fn calculate_bw_sample(rs: &RateSample, interval_us: u64) -> u64 {
        if interval_us == 0 {
            return 0;
        }
        if let Some(x) = rs.delivered.checked_mul(BW_UNIT) {
            return x.div_ceil(interval_us);
        }
        let bw = (u128::from(rs.delivered) * u128::from(BW_UNIT)).div_ceil(u128::from(interval_us));
        u64::try_from(bw).unwrap_or(u64::MAX)
    }

    /// Linux `bbr_update_latest_delivery_signals`: one-round maxima and the loss round.
    fn update_latest_delivery_signals(&mut self, rs: &RateSample, valid: bool, sample_bw: u64) {
        self.loss_round_start = false;
        if !valid || rs.acked_sacked == 0 {
            return;
        }
        self.bw_latest = self.bw_latest.max(sample_bw);
        self.inflight_latest = self
            .inflight_latest
            .max(u32::try_from(rs.delivered).unwrap_or(u32::MAX));
        if rs.prior_delivered >= self.loss_round_delivered {
            self.loss_round_delivered = self.delivered;
            self.loss_round_start = true;
        }
    }

    /// Linux `bbr_advance_latest_delivery_signals`: restart the one-round maxima.
    fn advance_latest_delivery_signals(&mut self, rs: &RateSample, sample_bw: u64) {
        if self.loss_round_start {
            self.bw_latest = sample_bw;
            self.inflight_latest = u32::try_from(rs.delivered).unwrap_or(u32::MAX);
        }
    }

    /// Linux `bbr_update_congestion_signals`: max-bw sample, loss flag, per-round lower bounds.
    fn update_congestion_signals(
        &mut self,
        rs: &RateSample,
        valid: bool,
        sample_bw: u64,
        app_limited: bool,
        st: &CwndState,
    ) {
        if !valid || rs.acked_sacked == 0 {
            return;
        }
        if !app_limited || sample_bw >= self.max_bw() {
            self.bw_hi[1] = self.bw_hi[1].max(sample_bw);
        }
        self.loss_in_round |= rs.losses > 0;
        if !self.loss_round_start {
            return;
        }
        self.adapt_lower_bounds(st);
        self.loss_in_round = false;
        self.ecn_in_round = false;
    }

    /// Linux `bbr_adapt_lower_bounds` (with `bbr_init_lower_bounds`, `bbr_ecn_lower_bounds`,
    /// `bbr_loss_lower_bounds`): outside probing, once per round with loss or ECN, cut
    /// inflight_lo by α·ecn_factor and bw_lo/inflight_lo by β, not below the latest round.
    fn adapt_lower_bounds(&mut self, st: &CwndState) {
        if self.is_probing_bandwidth() {
            return;
        }
        let mut ecn_inflight_lo = INFLIGHT_UNSET;
        if self.ecn_in_round {
            self.init_lower_bounds(false, st);
            let factor = match self.cfg.ecn_response {
                EcnResponse::Google => ECN_FACTOR,
                EcnResponse::PerMark => PER_MARK_ECN_FACTOR,
            };
            let ecn_cut = BBR_UNIT - ((self.ecn_alpha * factor) >> BBR_SCALE).min(BBR_UNIT);
            // At most inflight_lo: ecn_cut ≤ BBR_UNIT.
            ecn_inflight_lo =
                saturating_u32((u64::from(self.inflight_lo) * u64::from(ecn_cut)) >> BBR_SCALE);
        }
        if self.loss_in_round {
            self.init_lower_bounds(true, st);
            let loss_cut = u64::from(BBR_UNIT - BETA);
            let bw_cut =
                u64::try_from((u128::from(self.bw_lo) * u128::from(loss_cut)) >> BBR_SCALE)
                    .unwrap_or(u64::MAX);
            self.bw_lo = self.bw_latest.max(bw_cut);
            let inflight_cut =
                saturating_u32((u64::from(self.inflight_lo) * loss_cut) >> BBR_SCALE);
            self.inflight_lo = self.inflight_latest.max(inflight_cut);
        }
        self.inflight_lo = self.inflight_lo.min(ecn_inflight_lo);
        self.bw_lo = self.bw_lo.max(1);
    }

    /// Linux `bbr_init_lower_bounds`: unset bounds start at (max_bw, cwnd).
    fn init_lower_bounds(&mut self, init_bw: bool, st: &CwndState) {
        if init_bw && self.bw_lo == BW_UNSET {
            self.bw_lo = self.max_bw();
        }
        if self.inflight_lo == INFLIGHT_UNSET {
            self.inflight_lo = st.cwnd;
        }
    }

    /// Linux `bbr_reset_lower_bounds`.
    fn reset_lower_bounds(&mut self) {
        self.bw_lo = BW_UNSET;
        self.inflight_lo = INFLIGHT_UNSET;
    }

    /// Linux `bbr_reset_congestion_signals`.
    fn reset_congestion_signals(&mut self) {
        self.loss_in_round = false;
        self.ecn_in_round = false;
        self.loss_in_cycle = false;
        self.ecn_in_cycle = false;
        self.bw_latest = 0;
        self.inflight_latest = 0;
    }

    /// Linux `bbr_reset_full_bw`.
    fn reset_full_bw(&mut self) {
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.full_bw_now = false;
    }

    /// Linux `bbr_update_ack_aggregation`: the windowed max of data ACKed beyond bw·epoch
    /// (slots of 5 rounds, 1 round before `full_bw_reached`).
    fn update_ack_aggregation(&mut self, now: Time, rs: &RateSample, valid: bool, st: &CwndState) {
        if rs.acked_sacked == 0 || !valid {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rtts =
                (self.extra_acked_win_rtts + 1).min(EXTRA_ACKED_WIN_RTTS_MAX);
            let thresh = if self.full_bw_reached {
                EXTRA_ACKED_WIN_RTTS
            } else {
                1
            };
            if self.extra_acked_win_rtts >= thresh {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        let epoch_us = (now - self.ack_epoch_mstamp).as_micros();
        let bw = self.bw();
        // Saturating at 2^64 changes nothing: the epoch count is below 2^20.
        let mut expected = match bw.checked_mul(epoch_us) {
            Some(x) => x / BW_UNIT,
            None => u64::try_from(u128::from(bw) * u128::from(epoch_us) / u128::from(BW_UNIT))
                .unwrap_or(u64::MAX),
        };
        if u64::from(self.ack_epoch_acked) <= expected
            || self.ack_epoch_acked + rs.acked_sacked >= ACK_EPOCH_ACKED_RESET_THRESH
        {
            self.ack_epoch_acked = 0;
            self.ack_epoch_mstamp = now;
            expected = 0;
        }
        self.ack_epoch_acked = (self.ack_epoch_acked + rs.acked_sacked).min(ACK_EPOCH_ACKED_MAX);
        let extra =
            saturating_u32((u64::from(self.ack_epoch_acked) - expected).min(u64::from(st.cwnd)));
        let slot = &mut self.extra_acked[self.extra_acked_win_idx];
        *slot = (*slot).max(extra);
    }

    /// Linux `bbr_check_loss_too_high_in_startup`: at the end of a Startup round in fast
    /// recovery with ≥ 6 loss events and a loss rate above the threshold, leave Startup.
    fn check_loss_too_high_in_startup(&mut self, rs: &RateSample, ca: CaState, st: &CwndState) {
        if self.full_bw_reached {
            return;
        }
        if rs.losses > 0 && self.loss_events_in_round < LOSS_EVENTS_MAX {
            self.loss_events_in_round += 1;
        }
        if self.loss_round_start
            && ca == CaState::Recovery
            && self.loss_events_in_round >= FULL_LOSS_CNT
            && self.is_inflight_too_high(&Sample::from_rs(rs, false))
        {
            self.handle_queue_too_high_in_startup(st);
            return;
        }
        if self.loss_round_start {
            self.loss_events_in_round = 0;
        }
    }

    /// Linux `bbr_check_full_bw_reached`: a non-app-limited per-ACK sample ≥ 1.25·full_bw
    /// restarts the count; otherwise each round start counts; 3 means the pipe is full.
    fn check_full_bw_reached(&mut self, sample_bw: u64, app_limited: bool) {
        if self.full_bw_now || app_limited {
            return;
        }
        let reached = match self.full_bw.checked_mul(u64::from(FULL_BW_THRESH)) {
            Some(x) => sample_bw >= x >> BBR_SCALE,
            None => {
                u128::from(sample_bw)
                    >= (u128::from(self.full_bw) * u128::from(FULL_BW_THRESH)) >> BBR_SCALE
            }
        };
        if reached {
            self.reset_full_bw();
            self.full_bw = sample_bw;
            return;
        }
        if !self.round_start {
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_now = self.full_bw_cnt >= FULL_BW_CNT;
        self.full_bw_reached |= self.full_bw_now;
    }

    /// Linux `bbr_check_drain`: enter Drain once the pipe is full; leave it for ProbeBW_DOWN
    /// when the packets in the network at the EDT fit inflight(max_bw, 1).
    fn check_drain(&mut self, now: Time, ack: &AckInfo, st: &mut CwndState) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            // For monitoring only, as Linux does: ssthresh is not used by BBR.
            st.ssthresh = self.inflight(self.max_bw(), BBR_UNIT, st);
            self.reset_congestion_signals();
        }
        if self.mode == Mode::Drain
            && self.packets_in_net_at_edt(now, ack.wstamp, ack.in_flight, st)
                <= self.inflight(self.max_bw(), BBR_UNIT, st)
        {
            self.mode = Mode::ProbeBw;
            self.start_bw_probe_down(now);
        }
    }

    /// Linux `bbr_is_inflight_too_high`: loss rate above 5/256 of `tx_in_flight`, or (when
    /// ECN-eligible) CE ratio above 1/2.
    fn is_inflight_too_high(&self, s: &Sample) -> bool {
        if s.lost > 0 && s.tx_in_flight > 0 {
            let loss_thresh = (u64::from(s.tx_in_flight) * u64::from(LOSS_THRESH)) >> BBR_SCALE;
            if s.lost > loss_thresh {
                return true;
            }
        }
        if self.ecn_eligible
            && self.cfg.ecn_response == EcnResponse::PerMark
            && (self.ecn_in_round || s.delivered_ce > 0)
        {
            return true;
        }
        if s.delivered_ce > 0 && s.delivered > 0 && self.ecn_eligible {
            let ecn_thresh = (u128::from(s.delivered) * u128::from(ECN_THRESH)) >> BBR_SCALE;
            if u128::from(s.delivered_ce) > ecn_thresh {
                return true;
            }
        }
        false
    }

    /// Linux `bbr_inflight_hi_from_lost_skb`: the in-flight level at which the loss rate
    /// crossed the threshold inside this (1-segment) lost skb.
    fn inflight_hi_from_lost_skb(s: &Sample) -> u32 {
        let pcount: u32 = 1;
        let Some(inflight_prev) = s.tx_in_flight.checked_sub(pcount) else {
            return INFLIGHT_UNSET;
        };
        let Some(lost_prev) = s.lost.checked_sub(u64::from(pcount)) else {
            return INFLIGHT_UNSET;
        };
        let loss_budget = (u64::from(inflight_prev) * u64::from(LOSS_THRESH) + u64::from(BBR_UNIT)
            - 1)
            >> BBR_SCALE;
        let lost_prefix = if lost_prev >= loss_budget {
            0
        } else {
            ((loss_budget - lost_prev) << BBR_SCALE) / u64::from(BBR_UNIT - LOSS_THRESH)
        };
        u32::try_from(u64::from(inflight_prev) + lost_prefix).unwrap_or(INFLIGHT_UNSET)
    }

    /// Linux `bbr_handle_inflight_too_high`: once per probe, inflight_hi =
    /// max(tx_in_flight, 0.7·target inflight) unless app-limited; UP ends in DOWN.
    fn handle_inflight_too_high(&mut self, now: Time, s: &Sample, st: &CwndState) {
        self.prev_probe_too_high = true;
        self.bw_probe_samples = false;
        if !s.is_app_limited {
            let cut =
                (u64::from(self.target_inflight(st)) * u64::from(BBR_UNIT - BETA)) >> BBR_SCALE;
            self.inflight_hi = s.tx_in_flight.max(saturating_u32(cut));
        }
        if self.mode == Mode::ProbeBw && self.phase == Phase::Up {
            self.start_bw_probe_down(now);
        }
    }

    /// Linux `bbr_raise_inflight_hi_slope`: the UP growth doubles every round (exponent ≤ 30).
    fn raise_inflight_hi_slope(&mut self, st: &CwndState) {
        let growth_this_round = 1u32 << self.bw_probe_up_rounds.min(31);
        self.bw_probe_up_rounds = (self.bw_probe_up_rounds + 1).min(BW_PROBE_UP_ROUNDS_MAX);
        self.bw_probe_up_cnt = (st.cwnd / growth_this_round).max(1);
    }

    /// Linux `bbr_probe_inflight_hi_upward`: while cwnd-limited at inflight_hi in UP, +1 per
    /// `bw_probe_up_cnt` packets delivered.
    fn probe_inflight_hi_upward(&mut self, rs: &RateSample, ack: &AckInfo, st: &CwndState) {
        if !ack.is_cwnd_limited || st.cwnd < self.inflight_hi {
            return;
        }
        self.bw_probe_up_acks += rs.acked_sacked;
        if self.bw_probe_up_acks >= self.bw_probe_up_cnt {
            let delta = self.bw_probe_up_acks / self.bw_probe_up_cnt;
            self.bw_probe_up_acks -= delta * self.bw_probe_up_cnt;
            self.inflight_hi = self.inflight_hi.saturating_add(delta);
        }
        if self.round_start {
            self.raise_inflight_hi_slope(st);
        }
    }

    /// Linux `bbr_adapt_upper_bounds`: track the ACK phase, advance the max-bw filter once per
    /// cycle, react to too-high loss/ECN while the samples reflect probing, else raise
    /// inflight_hi. Returns true when it decided a state transition.
    fn adapt_upper_bounds(
        &mut self,
        now: Time,
        rs: &RateSample,
        ack: &AckInfo,
        app_limited: bool,
        st: &CwndState,
    ) -> bool {
        if self.ack_phase == AckPhase::ProbeStarting && self.round_start {
            self.ack_phase = AckPhase::ProbeFeedback;
        }
        if self.ack_phase == AckPhase::ProbeStopping && self.round_start {
            self.bw_probe_samples = false;
            self.ack_phase = AckPhase::Init;
            if self.mode == Mode::ProbeBw && !app_limited {
                self.advance_max_bw_filter();
            }
            if self.mode == Mode::ProbeBw && self.stopped_risky_probe && !self.prev_probe_too_high {
                self.start_bw_probe_refill(0);
                return true;
            }
        }
        let sample = Sample::from_rs(rs, app_limited);
        if self.is_inflight_too_high(&sample) {
            if self.bw_probe_samples {
                self.handle_inflight_too_high(now, &sample, st);
            }
        } else {
            if self.inflight_hi == INFLIGHT_UNSET {
                return false;
            }
            if rs.tx_in_flight > self.inflight_hi {
                self.inflight_hi = rs.tx_in_flight;
            }
            if self.mode == Mode::ProbeBw && self.phase == Phase::Up {
                self.probe_inflight_hi_upward(rs, ack, st);
            }
        }
        false
    }

    /// Linux `bbr_advance_max_bw_filter`: a new slot per ProbeBW cycle, unless the current
    /// slot is empty.
    fn advance_max_bw_filter(&mut self) {
        if self.bw_hi[1] == 0 {
            return;
        }
        self.bw_hi[0] = self.bw_hi[1];
        self.bw_hi[1] = 0;
    }

    /// Linux `bbr_is_reno_coexistence_probe_time`: rounds since the last probe ≥
    /// min(63, target inflight).
    fn is_reno_coexistence_probe_time(&self, st: &CwndState) -> bool {
        // rounds_since_probe ≥ min(63, inflight(bw, 1), cwnd) when it reaches any of the three.
        // inflight(bw, 1) = max(BDP, 3 TSO bursts of ≥ 2 segments, 4) (+2 in UP), so while the
        // count is below 6 or below the BDP the TSO size need not be computed.
        let rounds = self.rounds_since_probe;
        if rounds >= BW_PROBE_MAX_ROUNDS || rounds >= st.cwnd {
            return true;
        }
        if rounds < 3 * SYSCTL_MIN_TSO_SEGS {
            return false;
        }
        let bdp = self.bdp(self.bw(), BBR_UNIT);
        if rounds < bdp && bdp < u32::MAX - 1 {
            return false;
        }
        rounds >= self.quantization_budget(bdp, st)
    }

    /// Linux `bbr_pick_probe_wait`: random round offset in [0, 2) and wall-clock wait
    /// 2 s + uniform [0, 1 s).
    fn pick_probe_wait(&mut self) {
        self.rounds_since_probe = self.rng.random_range(0..BW_PROBE_RAND_ROUNDS);
        let us = BW_PROBE_BASE_US + self.rng.random_range(0..BW_PROBE_RAND_US);
        self.probe_wait = Dur::from_micros(us);
    }

    /// Linux `bbr_start_bw_probe_refill`.
    fn start_bw_probe_refill(&mut self, bw_probe_up_rounds: u32) {
        if self.bw_lo != BW_UNSET || self.inflight_lo != INFLIGHT_UNSET {
            // The model's bw (and so its BDP) may step up to max_bw: 2BRobust waits again.
            self.robust_gate_round = Some(self.round_count);
        }
        self.reset_lower_bounds();
        self.bw_probe_up_rounds = bw_probe_up_rounds;
        self.bw_probe_up_acks = 0;
        self.stopped_risky_probe = false;
        self.ack_phase = AckPhase::Refilling;
        self.next_rtt_delivered = self.delivered;
        self.phase = Phase::Refill;
    }

    /// Linux `bbr_start_bw_probe_up`.
    fn start_bw_probe_up(&mut self, now: Time, sample_bw: u64, st: &CwndState) {
        self.ack_phase = AckPhase::ProbeStarting;
        self.next_rtt_delivered = self.delivered;
        self.cycle_mstamp = now;
        self.reset_full_bw();
        self.full_bw = sample_bw;
        self.phase = Phase::Up;
        self.raise_inflight_hi_slope(st);
    }

    /// Linux `bbr_start_bw_probe_down`: a new cycle with a new random probe wait.
    fn start_bw_probe_down(&mut self, now: Time) {
        self.reset_congestion_signals();
        self.bw_probe_up_cnt = u32::MAX;
        self.pick_probe_wait();
        self.cycle_mstamp = now;
        self.ack_phase = AckPhase::ProbeStopping;
        self.next_rtt_delivered = self.delivered;
        self.phase = Phase::Down;
    }

    /// Linux `bbr_start_bw_probe_cruise`.
    fn start_bw_probe_cruise(&mut self) {
        if self.inflight_lo != INFLIGHT_UNSET {
            self.inflight_lo = self.inflight_lo.min(self.inflight_hi);
        }
        self.phase = Phase::Cruise;
    }

    /// Linux `bbr_check_time_to_probe_bw`: ECN re-probe, wall-clock wait or Reno bound.
    #[inline]
    fn check_time_to_probe_bw(&mut self, now: Time, ack: &AckInfo, st: &CwndState) -> bool {
        if self.ecn_eligible
            && self.ecn_in_cycle
            && !self.loss_in_cycle
            && ack.ca_state.unwrap_or(CaState::Open) == CaState::Open
        {
            let v = (u64::from(self.inflight_hi) * u64::from(ECN_REPROBE_GAIN)) >> BBR_SCALE;
            self.start_bw_probe_refill(v.checked_ilog2().unwrap_or(0));
            return true;
        }
        if now > self.cycle_mstamp + self.probe_wait || self.is_reno_coexistence_probe_time(st) {
            self.start_bw_probe_refill(0);
            return true;
        }
        false
    }

    /// Linux `bbr_check_time_to_cruise`: inflight within the headroom and ≤ inflight(bw, 1).
    fn check_time_to_cruise(&self, inflight: u32, bw: u64, st: &CwndState) -> bool {
        if inflight > self.inflight_with_headroom() {
            return false;
        }
        inflight <= self.inflight(bw, BBR_UNIT, st)
    }

    /// Linux `bbr_update_cycle_phase`: the ProbeBW state machine.
    fn update_cycle_phase(
        &mut self,
        now: Time,
        rs: &RateSample,
        ack: &AckInfo,
        sample_bw: u64,
        app_limited: bool,
        st: &CwndState,
    ) {
        if !self.full_bw_reached {
            return;
        }
        if self.adapt_upper_bounds(now, rs, ack, app_limited, st) {
            return;
        }
        if self.mode != Mode::ProbeBw {
            return;
        }
        // `bbr_packets_in_net_at_edt` of the prior in flight, computed only where it is read
        // (it reads nothing the branches change before).
        let inflight =
            |cc: &Self| cc.packets_in_net_at_edt(now, ack.wstamp, ack.prior_in_flight, st);
        match self.phase {
            Phase::Cruise => {
                self.check_time_to_probe_bw(now, ack, st);
            }
            Phase::Refill => {
                if self.round_start {
                    self.bw_probe_samples = true;
                    self.start_bw_probe_up(now, sample_bw, st);
                }
            }
            Phase::Up => {
                let mut done = false;
                if self.prev_probe_too_high && inflight(self) >= self.inflight_hi {
                    self.stopped_risky_probe = true;
                    done = true;
                } else if ack.is_cwnd_limited && st.cwnd >= self.inflight_hi {
                    self.reset_full_bw();
                    self.full_bw = sample_bw;
                } else if self.full_bw_now {
                    done = true;
                }
                if done {
                    self.prev_probe_too_high = false;
                    self.start_bw_probe_down(now);
                }
            }
            Phase::Down => {
                if self.check_time_to_probe_bw(now, ack, st) {
                    return;
                }
                if self.check_time_to_cruise(inflight(self), self.max_bw(), st) {
                    self.start_bw_probe_cruise();
                }
            }
        }
    }

    /// Linux `bbr_check_probe_rtt_done`.
    fn check_probe_rtt_done(&mut self, now: Time, st: &mut CwndState) {
        match self.probe_rtt_done_stamp {
            Some(t) if now > t => {}
            _ => return,
        }
        self.probe_rtt_min_stamp = now;
        st.cwnd = st.cwnd.max(self.prior_cwnd);
        self.exit_probe_rtt(now);
    }

    /// Linux `bbr_exit_probe_rtt`: back to ProbeBW (DOWN then at once CRUISE) or Startup.
    fn exit_probe_rtt(&mut self, now: Time) {
        self.reset_lower_bounds();
        self.robust_gate_round = Some(self.round_count);
        if self.full_bw_reached {
            self.mode = Mode::ProbeBw;
            self.start_bw_probe_down(now);
            self.start_bw_probe_cruise();
        } else {
            self.mode = Mode::Startup;
        }
    }

    /// Linux `bbr_update_min_rtt`: the 5 s `probe_rtt_min` filter (delayed-ACK samples cannot
    /// refresh an expired one), the 10 s min_rtt filter, ProbeRTT entry and exit.
    fn update_min_rtt(&mut self, now: Time, rs: &RateSample, ack: &AckInfo, st: &mut CwndState) {
        let probe_rtt_expired = now > self.probe_rtt_min_stamp + PROBE_RTT_WIN;
        if let Some(rtt) = rs.rtt {
            let rtt_us = u32::try_from(rtt.as_micros()).unwrap_or(RTT_UNSET - 1);
            if rtt_us < self.probe_rtt_min_us || (probe_rtt_expired && !rs.is_ack_delayed) {
                self.probe_rtt_min_us = rtt_us;
                self.probe_rtt_min_stamp = now;
            }
        }
        if self.probe_rtt_min_us <= self.min_rtt_us || now > self.min_rtt_stamp + MIN_RTT_WIN {
            if self.probe_rtt_min_us > self.min_rtt_us {
                self.robust_gate_round = Some(self.round_count);
            }
            self.min_rtt_us = self.probe_rtt_min_us;
            self.min_rtt_stamp = self.probe_rtt_min_stamp;
        }

        if probe_rtt_expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd(st);
            self.probe_rtt_done_stamp = None;
            self.ack_phase = AckPhase::ProbeStopping;
            self.next_rtt_delivered = self.delivered;
            self.probe_rtt_app_limited = Some((self.delivered, self.delivered));
        }

        if self.mode == Mode::ProbeRtt {
            // Linux sets tp->app_limited here; emulate the marking (module doc).
            let mark = (self.delivered + u64::from(ack.in_flight)).max(1);
            if let Some((_, to)) = &mut self.probe_rtt_app_limited {
                *to = mark;
            }
            if self.probe_rtt_done_stamp.is_none() && ack.in_flight <= self.probe_rtt_cwnd() {
                self.probe_rtt_done_stamp = Some(now + PROBE_RTT_MODE);
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = self.delivered;
            } else if self.probe_rtt_done_stamp.is_some() {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(now, st);
                }
            }
        }
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
    }

    /// Linux `bbr_update_gains`, plus the 2BRobust boost in ProbeBW.
    fn update_gains(&mut self, ack: &AckInfo, app_limited: bool) {
        let mut boost = false;
        match self.mode {
            Mode::Startup => {
                self.pacing_gain = STARTUP_PACING_GAIN;
                self.cwnd_gain = STARTUP_CWND_GAIN;
            }
            Mode::Drain => {
                self.pacing_gain = DRAIN_GAIN;
                self.cwnd_gain = STARTUP_CWND_GAIN;
            }
            Mode::ProbeBw => {
                self.pacing_gain = self.phase.pacing_gain();
                self.cwnd_gain = CWND_GAIN;
                if self.phase == Phase::Up {
                    self.cwnd_gain += BBR_UNIT * BW_PROBE_CWND_GAIN / 4;
                }
                boost = self.robust_wanted(ack, app_limited);
                if boost {
                    self.pacing_gain = STARTUP_PACING_GAIN;
                }
            }
            Mode::ProbeRtt => {
                self.pacing_gain = BBR_UNIT;
                self.cwnd_gain = BBR_UNIT;
            }
        }
        if boost && !self.robust_active {
            self.robust_activations += 1;
        }
        if boost {
            self.robust_acks += 1;
        }
        self.robust_active = boost;
    }

    /// 2BRobust conditions (Elmenhorst & Aschenbruck 2026, [`super::Robust`]), checked on every
    /// ACK in ProbeBW. `app_limited` is true when the sample or the transport right now is
    /// application-limited.
    fn robust_wanted(&self, ack: &AckInfo, app_limited: bool) -> bool {
        let Some(robust) = self.cfg.robust else {
            return false;
        };
        if app_limited {
            return false;
        }
        let since = self.round_count - self.robust_gate_round.unwrap_or(0);
        if since < u64::from(robust.rounds) {
            return false;
        }
        let bdp = self.bdp(self.bw(), BBR_UNIT);
        u64::from(ack.in_flight) * u64::from(BBR_UNIT)
            < u64::from(robust.alpha_unit()) * u64::from(bdp)
    }
}

impl Sample {
    fn from_rs(rs: &RateSample, app_limited: bool) -> Sample {
        Sample {
            lost: rs.lost,
            tx_in_flight: rs.tx_in_flight,
            delivered: rs.delivered,
            delivered_ce: rs.delivered_ce,
            is_app_limited: app_limited,
        }
    }
}

impl CongestionControl for Bbr3 {
    fn name(&self) -> &'static str {
        "bbr3"
    }

    /// Linux `bbr_init`.
    fn init(&mut self, now: Time, st: &mut CwndState) {
        self.initialized = true;
        self.mss = st.mss;
        self.host_shift = st.pacing_shift;
        self.init_cwnd = st.cwnd.min(INIT_CWND_MAX);
        self.prior_cwnd = 0;
        st.ssthresh = INFINITE_SSTHRESH;
        self.next_rtt_delivered = self.delivered;
        self.prev_ca_state = CaState::Open;
        self.probe_rtt_done_stamp = None;
        self.probe_rtt_round_done = false;
        self.probe_rtt_min_stamp = now;
        self.min_rtt_stamp = now;
        // `bbr_init`: `min_rtt_us = tcp_min_rtt(tp)` and the pacing rate from `tp->srtt_us`,
        // both from the handshake when there was one ([`CwndState::srtt`]).
        if let Some(m) = st.min_rtt {
            self.min_rtt_us = u32::try_from(m.as_micros().max(1)).unwrap_or(RTT_UNSET - 1);
            self.probe_rtt_min_us = self.min_rtt_us;
        }
        if st.srtt.is_some() {
            self.srtt = st.srtt;
        }
        self.has_seen_rtt = false;
        self.init_pacing_rate_from_rtt(st);
        self.ack_epoch_mstamp = now;
        self.loss_round_delivered = self.delivered + 1;
    }

    /// BBR sets cwnd itself; `cong_avoid` is never called while `cong_control` returns true.
    fn cong_avoid(&mut self, _now: Time, _st: &mut CwndState, _acked: u32, _ack: &AckInfo) {}

    /// Linux `bbr_ssthresh`: save cwnd and the loss-adapted bounds for undo; ssthresh unchanged.
    fn ssthresh(&mut self, _now: Time, st: &CwndState, _ack: &AckInfo) -> u32 {
        self.save_cwnd(st);
        self.undo_bw_lo = self.bw_lo;
        self.undo_inflight_lo = self.inflight_lo;
        self.undo_inflight_hi = self.inflight_hi;
        st.ssthresh
    }

    /// Linux `bbr_main`.
    fn cong_control(
        &mut self,
        now: Time,
        st: &mut CwndState,
        rs: &RateSample,
        ack: &AckInfo,
    ) -> bool {
        self.mss = st.mss;
        self.host_shift = st.pacing_shift;
        self.delivered = rs.total_delivered;
        if ack.srtt.is_some() {
            self.srtt = ack.srtt;
        }
        let interval_us = rs.interval.map_or(0, Dur::as_micros);
        let valid = interval_us > 0;
        // `rs->is_ece`: this ACK raised `tp->delivered_ce`.
        let is_ece = ack.total_delivered_ce > self.delivered_ce;
        if is_ece {
            self.delivered_ce = ack.total_delivered_ce;
        }
        let app_limited = self.app_limited(rs.is_app_limited, rs.prior_delivered);
        let ca = ack.ca_state.unwrap_or(CaState::Open);

        self.update_round_start(rs, valid);
        if self.round_start {
            self.rounds_since_probe = (self.rounds_since_probe + 1).min(ROUNDS_SINCE_PROBE_MAX);
            self.update_ecn_alpha(st);
        }
        self.ecn_in_round |= self.ecn_eligible && is_ece;
        let sample_bw = Self::calculate_bw_sample(rs, interval_us);
        self.update_latest_delivery_signals(rs, valid, sample_bw);

        // bbr_update_model.
        self.update_congestion_signals(rs, valid, sample_bw, app_limited, st);
        self.update_ack_aggregation(now, rs, valid, st);
        self.check_loss_too_high_in_startup(rs, ca, st);
        self.check_full_bw_reached(sample_bw, app_limited);
        self.check_drain(now, ack, st);
        self.update_cycle_phase(now, rs, ack, sample_bw, app_limited, st);
        self.update_min_rtt(now, rs, ack, st);

        self.update_gains(ack, app_limited || st.app_limited);
        let bw = self.bw();
        self.set_pacing_rate(bw, self.pacing_gain, st);
        let cap = self.inflight_model_cap();
        self.set_cwnd(rs.acked_sacked, bw, self.cwnd_gain, cap, st);
        // bbr_bound_cwnd_for_inflight_model.
        if let Some(cap) = cap {
            st.cwnd = st.cwnd.min(cap);
        }

        self.advance_latest_delivery_signals(rs, sample_bw);
        self.prev_ca_state = ca;
        self.loss_in_cycle |= rs.lost > 0;
        self.ecn_in_cycle |= rs.delivered_ce > 0;
        true
    }

    /// Linux `bbr_set_state`: on RTO reset the plateau detector and seed inflight_lo with the
    /// pre-RTO cwnd; leaving `Loss` restores cwnd to at least the saved one
    /// (`bbr_exit_loss_recovery`).
    fn set_state(&mut self, _now: Time, st: &mut CwndState, new: CaState) {
        if new == CaState::Loss {
            self.prev_ca_state = CaState::Loss;
            self.reset_full_bw();
            if !self.is_probing_bandwidth() && self.inflight_lo == INFLIGHT_UNSET {
                self.inflight_lo = st.cwnd.max(self.prior_cwnd);
            }
        } else if self.prev_ca_state == CaState::Loss {
            st.cwnd = st.cwnd.max(self.prior_cwnd);
        }
    }

    /// Linux `bbr_cwnd_event`: on `TxStart` while app-limited, restart the ACK epoch, mark the
    /// idle restart, pace at 1.0·bw in ProbeBW, or check whether ProbeRTT is done.
    fn cwnd_event(&mut self, now: Time, st: &mut CwndState, ev: CwndEvent) {
        self.host_shift = st.pacing_shift;
        if ev != CwndEvent::TxStart || !st.app_limited {
            return;
        }
        self.idle_restart = true;
        self.ack_epoch_mstamp = now;
        self.ack_epoch_acked = 0;
        match self.mode {
            Mode::ProbeBw => self.set_pacing_rate(self.bw(), BBR_UNIT, st),
            Mode::ProbeRtt => self.check_probe_rtt_done(now, st),
            Mode::Startup | Mode::Drain => {}
        }
    }

    /// Linux `bbr_undo_cwnd`: the loss episode was spurious; restore the bounds to the max of
    /// current and saved, reset the plateau detector, and return the saved cwnd.
    fn undo_cwnd(&mut self, _now: Time, _st: &CwndState, _prior_cwnd: u32) -> u32 {
        self.reset_full_bw();
        self.loss_in_round = false;
        self.bw_lo = self.bw_lo.max(self.undo_bw_lo);
        self.inflight_lo = self.inflight_lo.max(self.undo_inflight_lo);
        self.inflight_hi = self.inflight_hi.max(self.undo_inflight_hi);
        self.prior_cwnd
    }

    /// Linux `bbr_skb_marked_lost` (with `bbr_note_loss`): mark a loss round; while the samples
    /// reflect probing, test the loss rate up to this segment and, if too high, set
    /// inflight_hi from the crossing point (`bbr_inflight_hi_from_lost_skb`).
    fn on_packet_lost(&mut self, now: Time, st: &mut CwndState, lost: &LostInfo) {
        self.delivered = self.delivered.max(lost.total_delivered);
        if !self.loss_in_round {
            self.loss_round_delivered = self.delivered;
        }
        self.loss_in_round = true;
        self.loss_in_cycle = true;
        if !self.bw_probe_samples {
            return;
        }
        let mut s = Sample {
            lost: lost.total_lost.saturating_sub(lost.tx_lost),
            tx_in_flight: lost.tx_in_flight,
            is_app_limited: self.app_limited(lost.is_app_limited, lost.prior_delivered),
            ..Sample::default()
        };
        if self.is_inflight_too_high(&s) {
            s.tx_in_flight = Self::inflight_hi_from_lost_skb(&s);
            self.handle_inflight_too_high(now, &s, st);
        }
    }

    fn pacing_rate(&self) -> Option<u64> {
        self.initialized.then_some(self.pacing_rate)
    }

    fn wants_pacing(&self) -> bool {
        true
    }

    /// Linux `bbr_tso_segs`: `bbr_tso_segs_generic` at the socket's GSO limit and the shift in
    /// force.
    fn tso_segs(&self, st: &CwndState) -> Option<u32> {
        Some(self.tso_segs_goal(st))
    }

    /// BBR-TAS: the state-dependent shift; `None` without TAS.
    fn pacing_shift(&self) -> Option<u8> {
        self.cfg.tas.map(|_| self.shift_in_force(self.host_shift))
    }

    fn state(&self) -> &'static str {
        match (self.mode, self.phase) {
            (Mode::Startup, _) => "Startup",
            (Mode::Drain, _) => "Drain",
            (Mode::ProbeRtt, _) => "ProbeRTT",
            (Mode::ProbeBw, Phase::Down) => "ProbeBW_DOWN",
            (Mode::ProbeBw, Phase::Cruise) => "ProbeBW_CRUISE",
            (Mode::ProbeBw, Phase::Refill) => "ProbeBW_REFILL",
            (Mode::ProbeBw, Phase::Up) => "ProbeBW_UP",
        }
    }

    fn stats(&self, sink: StatSink<'_>) {
        let bps = |bw: u64| u64_to_f64(bw) * f64::from(self.mss) * 8.0 * 1e6 / u64_to_f64(BW_UNIT);
        let unit = f64::from(BBR_UNIT);
        sink("bw_bps", bps(self.bw()));
        sink("max_bw_bps", bps(self.max_bw()));
        if self.bw_lo != BW_UNSET {
            sink("bw_lo_bps", bps(self.bw_lo));
        }
        if self.min_rtt_us != RTT_UNSET {
            sink("min_rtt_us", f64::from(self.min_rtt_us));
        }
        sink("pacing_gain", f64::from(self.pacing_gain) / unit);
        sink("cwnd_gain", f64::from(self.cwnd_gain) / unit);
        if self.inflight_hi != INFLIGHT_UNSET {
            sink("inflight_hi", f64::from(self.inflight_hi));
        }
        if self.inflight_lo != INFLIGHT_UNSET {
            sink("inflight_lo", f64::from(self.inflight_lo));
        }
        sink("full_bw_reached", f64::from(u8::from(self.full_bw_reached)));
        sink("ecn_alpha", f64::from(self.ecn_alpha) / unit);
        sink("tsq_shift", f64::from(self.shift_in_force(self.host_shift)));
        sink("extra_acked", f64::from(self.extra_acked()));
        sink("pacing_rate_Bps", u64_to_f64(self.pacing_rate));
        sink("rounds", u64_to_f64(self.round_count));
        sink("robust_active", f64::from(u8::from(self.robust_active)));
        sink("robust_activations", u64_to_f64(self.robust_activations));
        sink("robust_acks", u64_to_f64(self.robust_acks));
    }
}

#[cfg(test)]
mod tests;
