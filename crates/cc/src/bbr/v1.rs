//! BBRv1 as Linux mainline implements it in `net/ipv4/tcp_bbr.c`, with the optional 2BRobust
//! pacing boost (Elmenhorst & Aschenbruck, arXiv:2601.05665, 2026; see [`super::Robust`]).
//!
//! Contract: a model-based controller. [`Bbr1`] implements `cong_control` (Linux `bbr_main`),
//! returns `true` from it and then owns `st.cwnd` completely; it asks the transport to pace
//! ([`CongestionControl::wants_pacing`]) at [`CongestionControl::pacing_rate`]. The other hooks
//! are Linux's: `init` (`bbr_init`), `ssthresh` (`bbr_ssthresh`: save cwnd, return the current
//! ssthresh unchanged), `set_state` (`bbr_set_state`: an RTO ends the round and feeds the
//! long-term sampler), `cwnd_event` (`bbr_cwnd_event`: restart from idle), `undo_cwnd`
//! (`bbr_undo_cwnd`) and `min_tso_segs` (`bbr_min_tso_segs`). Written from the Linux source (not
//! copied); each rule names the Linux function it reproduces.
//!
//! Arithmetic: Linux's fixed point throughout — bandwidth in packets/µs << 24 (`BW_SCALE`),
//! gains in 1/256 (`BBR_SCALE`), min_rtt in whole µs, `delivered_mstamp` stamps in µs, the
//! min_rtt and ProbeRTT timers in jiffies (HZ = 1000 assumed, i.e. 1 ms, as `cubic.rs` does).
//! Widths are widened (bandwidth, round and packet counters are `u64`, `extra_acked` is `u32`)
//! so nothing wraps; for values that fit Linux's `u32`/`u16` the results are identical.
//!
//! Model (Linux `tcp_bbr.c`): windowed max-bw over 10 packet-timed rounds (a Rust rendering of
//! `lib/win_minmax.c`'s `minmax_running_max`, [`WindowedMax`]); min_rtt over 10 s; Startup at
//! `high_gain` 2.885 until 3 rounds grow max-bw by < 25 %; Drain at 1/2.885 until the packets in
//! the network at the next departure time are ≤ one BDP (+ quantization); ProbeBW cycling
//! [5/4, 3/4, 1 × 6] from a random phase other than 3/4; ProbeRTT at cwnd 4 for ≥ 200 ms and
//! ≥ 1 round when min_rtt is 10 s old; the long-term (policer) model `lt_bw`; the ACK-aggregation
//! allowance `extra_acked`; packet conservation in the first round of recovery.
//!
//! 2BRobust ([`super::Robust`], `cfg.robust`): on an ACK in ProbeBW, when (1) the rate sample is
//! not app-limited, (2) the socket is not app-limited now (`st.app_limited`, or Linux's ProbeRTT
//! mark still set), (3) at least `rounds` rounds have passed since ProbeRTT ended (since the flow
//! started if there was none) and (4) in-flight after the ACK < α·BDP (BDP at gain 1 from the
//! model bw, α in 1/256 via [`super::Robust::alpha_unit`]), the pacing rate uses `high_gain`
//! instead of the gain cycle's gain. Decisions:
//! - condition (2) is added to the sample test: a flow that has just become app-limited still
//!   receives a round of full-rate samples while its in-flight falls, and the 2BRobust paper asks
//!   for no activation on an app-limited socket;
//! - the boost replaces only the gain handed to the pacing rate: `bbr->pacing_gain`, which
//!   `bbr_is_next_cycle_phase` and `bbr_packets_in_net_at_edt` read, keeps the cycle's value, so
//!   the cycle advances exactly as without the boost, and cwnd sizing is unchanged;
//! - the boost also applies while `lt_bw` is in use (none of the conditions excludes it).
//!
//! With `robust: None` the controller is plain v1.
//!
//! Deliberate deviations from Linux (each because the sans-IO interface differs):
//! - *Handshake RTT.* `bbr_init` reads `tcp_min_rtt` and srtt from the SYN exchange; `init`
//!   reads them from [`CwndState::srtt`] and [`CwndState::min_rtt`], which a transport that
//!   opened the connection with a handshake sets. Without one, min_rtt starts unknown (BDP =
//!   `TCP_INIT_CWND` until the first sample) and the initial pacing rate uses the nominal 1 ms
//!   RTT, as Linux does without a sample.
//! - *ProbeRTT's app-limited mark.* Linux sets `tp->app_limited = delivered + in_flight` on every
//!   ACK in ProbeRTT so that the low-rate samples of packets sent then are app-limited. The
//!   controller cannot write the transport's mark, so it records the range of `delivered` values
//!   over which Linux's mark would be in force and treats a rate sample whose `prior_delivered`
//!   falls in it as app-limited (and `st.app_limited` as set on `TxStart` while the mark lives).
//! - *Timers.* Jiffy stamps are `u64` milliseconds with no wrap; Linux's "0 = unset" for
//!   `probe_rtt_done_stamp` is an `Option`.
//! - *Counters.* `tp->delivered` is `rs.total_delivered`; `tp->lost` is `ack.total_lost` and
//!   [`LostInfo::total_lost`] (so losses marked by an RTO count before `set_state(Loss)`);
//!   `tp->delivered_mstamp` is `now` of the last ACK that delivered data.
//! - *Randomness.* The ProbeBW starting phase draws from a ChaCha8 stream seeded by `seed`
//!   (Linux `get_random_u32_below`), with the same distribution.
//! - *Pacing cap.* `sk_max_pacing_rate` is unlimited.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::{
    BBR_SCALE, BBR_UNIT, BW_SCALE, BW_UNIT, Bbr1Config, GSO_MAX_SIZE, MAX_TCP_HEADER,
    bw_from_sample, rate_bytes_per_sec,
};
use crate::{
    AckInfo, CaState, CongestionControl, CwndEvent, CwndState, INFINITE_SSTHRESH, LostInfo,
    RateSample, StatSink, Time,
    num::{u64_to_f64, u128_to_f64, usize_to_f64},
};

/// Phases in the ProbeBW pacing-gain cycle (Linux `CYCLE_LEN`).
pub const CYCLE_LEN: usize = 8;
/// Window of the max-bw filter in packet-timed rounds (Linux `bbr_bw_rtts` = `CYCLE_LEN` + 2).
pub const BW_FILTER_ROUNDS: u64 = CYCLE_LEN as u64 + 2;
/// Jiffies per second: HZ = 1000 is assumed (the common `CONFIG_HZ_1000`), 1 jiffy = 1 ms.
pub const HZ: u64 = 1000;
/// Window of the min_rtt filter in seconds (Linux `bbr_min_rtt_win_sec`).
pub const MIN_RTT_WIN_SEC: u64 = 10;
/// Minimum time in ProbeRTT at the minimum cwnd, in ms (Linux `bbr_probe_rtt_mode_ms`).
pub const PROBE_RTT_MODE_MS: u64 = 200;
/// Below this pacing rate (bit/s) TSO bursts are single segments (Linux `bbr_min_tso_rate`).
pub const MIN_TSO_RATE: u64 = 1_200_000;
/// Startup pacing and cwnd gain 2/ln 2: 256·2885/1000 + 1 = 739 ≈ 2.887 (Linux `bbr_high_gain`).
pub const HIGH_GAIN: u32 = BBR_UNIT * 2885 / 1000 + 1;
/// Drain pacing gain 1/2.885: 256·1000/2885 = 88 ≈ 0.344 (Linux `bbr_drain_gain`).
pub const DRAIN_GAIN: u32 = BBR_UNIT * 1000 / 2885;
/// ProbeBW cwnd gain 2 (Linux `bbr_cwnd_gain`).
pub const CWND_GAIN: u32 = BBR_UNIT * 2;
/// The ProbeBW pacing-gain cycle: 5/4 to probe, 3/4 to drain, then 1 × 6 to cruise (Linux
/// `bbr_pacing_gain[]`: 320, 192, 256 × 6).
pub const PACING_GAIN: [u32; CYCLE_LEN] = [
    BBR_UNIT * 5 / 4,
    BBR_UNIT * 3 / 4,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
];
/// The random starting phase is drawn among this many phases (Linux `bbr_cycle_rand`).
pub const CYCLE_RAND: u32 = 7;
/// Minimum cwnd, and the cwnd in ProbeRTT (Linux `bbr_cwnd_min_target`).
pub const CWND_MIN_TARGET: u32 = 4;
/// Growth of max-bw that counts as "still growing": 5/4 (Linux `bbr_full_bw_thresh`).
pub const FULL_BW_THRESH: u64 = BBR_UNIT as u64 * 5 / 4;
/// Rounds without such growth that mean the pipe is full (Linux `bbr_full_bw_cnt`).
pub const FULL_BW_CNT: u32 = 3;
/// Minimum rounds in a long-term sampling interval (Linux `bbr_lt_intvl_min_rtts`); the maximum
/// is 4 times this (`bbr_lt_bw_sampling`).
pub const LT_INTVL_MIN_RTTS: u32 = 4;
/// Loss ratio of a "lossy" interval, 50/256 ≈ 19.5 % (Linux `bbr_lt_loss_thresh`).
pub const LT_LOSS_THRESH: u64 = 50;
/// Two intervals agree if their bw differ by ≤ 1/8 (Linux `bbr_lt_bw_ratio` = 32/256) …
pub const LT_BW_RATIO: u64 = BBR_UNIT as u64 / 8;
/// … or by ≤ 4 kbit/s = 500 bytes/s (Linux `bbr_lt_bw_diff`).
pub const LT_BW_DIFF: u64 = 4000 / 8;
/// Rounds to use `lt_bw` once a policer is detected (Linux `bbr_lt_bw_max_rtts`).
pub const LT_BW_MAX_RTTS: u32 = 48;
/// Gain on the ACK-aggregation allowance, 1.0 (Linux `bbr_extra_acked_gain`).
pub const EXTRA_ACKED_GAIN: u32 = BBR_UNIT;
/// Rounds per `extra_acked` slot; two slots give a 5–10 round window (Linux
/// `bbr_extra_acked_win_rtts`).
pub const EXTRA_ACKED_WIN_RTTS: u32 = 5;
/// An ACK epoch holding this many packets is restarted (Linux
/// `bbr_ack_epoch_acked_reset_thresh`).
pub const ACK_EPOCH_ACKED_RESET_THRESH: u32 = 1 << 20;
/// The aggregation allowance is at most bw × 100 ms (Linux `bbr_extra_acked_max_us`).
pub const EXTRA_ACKED_MAX_US: u64 = 100_000;
/// Initial window Linux assumes before any RTT sample (`TCP_INIT_CWND`, include/net/tcp.h).
pub const TCP_INIT_CWND: u32 = 10;
/// Largest TSO goal in segments (Linux `bbr_tso_segs_goal`: `min(segs, 0x7F)`).
pub const TSO_SEGS_MAX: u32 = 0x7F;
/// `ack_epoch_acked` is a 20-bit field (Linux `struct bbr`), saturating at this value.
const ACK_EPOCH_ACKED_MAX: u32 = 0xF_FFFF;
/// `extra_acked_win_rtts` is a 5-bit field (Linux `struct bbr`), saturating at this value.
const EXTRA_ACKED_WIN_RTTS_MAX: u32 = 0x1F;

/// BBR's modes (Linux `enum bbr_mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Ramp up quickly to fill the pipe (`BBR_STARTUP`).
    Startup,
    /// Drain the queue Startup built (`BBR_DRAIN`).
    Drain,
    /// Cycle the pacing gain around the estimated bw (`BBR_PROBE_BW`).
    ProbeBw,
    /// Cut in-flight to 4 packets to re-measure min_rtt (`BBR_PROBE_RTT`).
    ProbeRtt,
}

impl Mode {
    /// The name [`CongestionControl::state`] reports.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Mode::Startup => "Startup",
            Mode::Drain => "Drain",
            Mode::ProbeBw => "ProbeBW",
            Mode::ProbeRtt => "ProbeRTT",
        }
    }
}

/// One sample of a [`WindowedMax`] (Linux `struct minmax_sample`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct MinmaxSample {
    /// When it was taken (here: the round count).
    t: u64,
    /// The value.
    v: u64,
}

/// Kathleen Nichols' windowed running maximum with Linux `lib/win_minmax.c` semantics: the best,
/// second-best and third-best values of the window, each at least as recent as the one before,
/// kept spread out over the window so that the estimate expires smoothly.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WindowedMax {
    s: [MinmaxSample; 3],
}

impl WindowedMax {
    /// The current maximum (`minmax_get`).
    #[must_use]
    pub fn get(&self) -> u64 {
        self.s[0].v
    }

    /// Forget everything: all three choices become `(t, v)` (`minmax_reset`).
    pub fn reset(&mut self, t: u64, v: u64) -> u64 {
        let s = MinmaxSample { t, v };
        self.s = [s; 3];
        v
    }

    /// Add the measurement `v` taken at `t` to a window of length `win` (`minmax_running_max`).
    pub fn running_max(&mut self, win: u64, t: u64, v: u64) -> u64 {
        let val = MinmaxSample { t, v };
        // A new maximum, or nothing left in the window: restart from this sample.
        if v >= self.s[0].v || t.saturating_sub(self.s[2].t) > win {
            return self.reset(t, v);
        }
        if v >= self.s[1].v {
            self.s[2] = val;
            self.s[1] = val;
        } else if v >= self.s[2].v {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }

    /// Age the three choices as time passes (`minmax_subwin_update`).
    fn subwin_update(&mut self, win: u64, val: MinmaxSample) -> u64 {
        let dt = val.t.saturating_sub(self.s[0].t);
        if dt > win {
            // The best choice left the window: promote the others; the second may be out too.
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = val;
            if val.t.saturating_sub(self.s[0].t) > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = val;
            }
        } else if self.s[1].t == self.s[0].t && dt > win / 4 {
            // A quarter of the window without a second choice: take one from the 2nd quarter.
            self.s[2] = val;
            self.s[1] = val;
        } else if self.s[2].t == self.s[1].t && dt > win / 2 {
            // Half the window without a third choice: take one from the second half.
            self.s[2] = val;
        }
        self.s[0].v
    }
}

/// Whole microseconds since the start (Linux `tcp_clock_us`/`tp->tcp_mstamp` granularity).
fn us(t: Time) -> u64 {
    t.as_nanos() / 1_000
}

/// Jiffies since the start at HZ = 1000 (Linux `tcp_jiffies32`).
fn jiffies(t: Time) -> u64 {
    t.as_nanos() / (1_000_000_000 / HZ)
}

/// The sample's interval in whole µs, `None` if the sample is invalid (Linux `bbr_update_bw`:
/// `rs->delivered < 0 || rs->interval_us <= 0`).
fn interval_us(rs: &RateSample) -> Option<u64> {
    rs.interval.map(|d| d.as_micros()).filter(|&u| u > 0)
}

/// The BBRv1 controller (Linux `struct bbr` plus the `tcp_sock` fields it reads).
#[derive(Clone, Debug)]
pub struct Bbr1 {
    cfg: Bbr1Config,
    rng: ChaCha8Rng,

    /// Current mode (`mode`).
    mode: Mode,
    /// Windowed min RTT in µs (`min_rtt_us`; `None` = Linux `~0U`, no sample yet).
    min_rtt_us: Option<u64>,
    /// Jiffies of the last min_rtt update (`min_rtt_stamp`).
    min_rtt_stamp: u64,
    /// Jiffy after which ProbeRTT may end (`probe_rtt_done_stamp`; `None` = Linux 0).
    probe_rtt_done_stamp: Option<u64>,
    /// A round has passed at the ProbeRTT cwnd (`probe_rtt_round_done`).
    probe_rtt_round_done: bool,
    /// Max recent delivery rate, packets/µs << 24 (`bw`).
    bw: WindowedMax,
    /// Packet-timed rounds so far (`rtt_cnt`).
    rtt_cnt: u64,
    /// `tp->delivered` at which the current round ends (`next_rtt_delivered`).
    next_rtt_delivered: u64,
    /// µs stamp of the start of the current gain-cycle phase (`cycle_mstamp`).
    cycle_mstamp: u64,
    /// CA state on the previous delivering ACK (`prev_ca_state`).
    prev_ca_state: CaState,
    /// In the first round of recovery (`packet_conservation`).
    packet_conservation: bool,
    /// This ACK started a new round (`round_start`).
    round_start: bool,
    /// Restarting after idle (`idle_restart`).
    idle_restart: bool,
    /// Long-term sampling in progress (`lt_is_sampling`).
    lt_is_sampling: bool,
    /// Rounds in the long-term interval (`lt_rtt_cnt`).
    lt_rtt_cnt: u32,
    /// Using `lt_bw` as the bw estimate (`lt_use_bw`).
    lt_use_bw: bool,
    /// Long-term delivery rate, packets/µs << 24 (`lt_bw`).
    lt_bw: u64,
    /// `tp->delivered` at the start of the long-term interval (`lt_last_delivered`).
    lt_last_delivered: u64,
    /// `delivered_mstamp` in ms at the start of the long-term interval (`lt_last_stamp`).
    lt_last_stamp: u64,
    /// `tp->lost` at the start of the long-term interval (`lt_last_lost`).
    lt_last_lost: u64,
    /// Pacing gain, 1/256 (`pacing_gain`), as Linux keeps it (without the 2BRobust boost).
    pacing_gain: u32,
    /// cwnd gain, 1/256 (`cwnd_gain`).
    cwnd_gain: u32,
    /// Startup has filled the pipe (`full_bw_reached`).
    full_bw_reached: bool,
    /// Rounds without significant max-bw growth (`full_bw_cnt`).
    full_bw_cnt: u32,
    /// Index into [`PACING_GAIN`] (`cycle_idx`).
    cycle_idx: usize,
    /// The pacing rate has been set from a real srtt (`has_seen_rtt`).
    has_seen_rtt: bool,
    /// cwnd saved at recovery or ProbeRTT entry (`prior_cwnd`).
    prior_cwnd: u32,
    /// max-bw baseline of the full-pipe detector (`full_bw`).
    full_bw: u64,
    /// µs stamp of the start of the ACK-aggregation epoch (`ack_epoch_mstamp`).
    ack_epoch_mstamp: u64,
    /// Max excess ACKed in each of two slots (`extra_acked[2]`).
    extra_acked: [u32; 2],
    /// Packets (S)ACKed in the aggregation epoch (`ack_epoch_acked`).
    ack_epoch_acked: u32,
    /// Age of the current `extra_acked` slot in rounds (`extra_acked_win_rtts`).
    extra_acked_win_rtts: u32,
    /// Current `extra_acked` slot (`extra_acked_win_idx`).
    extra_acked_win_idx: usize,

    /// `sk_pacing_rate` in bytes/s (`~0` before `init`, as `sock_init_data` leaves it).
    pacing_rate: u64,
    /// `tp->mss_cache`, read from `st.mss` on every hook.
    mss: u32,
    /// `sk_pacing_shift`, stored at `init` and re-read on every hook (Linux reads it live).
    pacing_shift: u8,
    /// `tp->srtt_us >> 3`, once the transport has a sample.
    srtt_us: Option<u64>,
    /// `tp->delivered`.
    delivered: u64,
    /// `tp->delivered_mstamp` in µs.
    delivered_mstamp: u64,
    /// `tp->lost`.
    lost: u64,
    /// `icsk_ca_state`.
    ca_state: CaState,

    /// Emulated ProbeRTT app-limited mark: packets sent while `tp->delivered` was in
    /// `lo..=hi` would carry Linux's mark (see the module documentation).
    probe_rtt_mark: Option<(u64, u64)>,
    /// Last cwnd target computed by `bbr_set_cwnd` (observation only).
    target_cwnd: u32,

    /// 2BRobust boost in force on the last ACK.
    robust_active: bool,
    /// Inactive → active transitions.
    robust_activations: u64,
    /// ACKs on which the boost was in force.
    robust_acks: u64,
    /// `rtt_cnt` when ProbeRTT last ended (0: the flow start).
    probe_rtt_exit_round: u64,
}

impl Bbr1 {
    /// A BBRv1 controller; `seed` drives the random ProbeBW starting phase.
    #[must_use]
    pub fn new(cfg: Bbr1Config, seed: u64) -> Self {
        Bbr1 {
            cfg,
            rng: ChaCha8Rng::seed_from_u64(seed),
            mode: Mode::Startup,
            min_rtt_us: None,
            min_rtt_stamp: 0,
            probe_rtt_done_stamp: None,
            probe_rtt_round_done: false,
            bw: WindowedMax::default(),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            cycle_mstamp: 0,
            prev_ca_state: CaState::Open,
            packet_conservation: false,
            round_start: false,
            idle_restart: false,
            lt_is_sampling: false,
            lt_rtt_cnt: 0,
            lt_use_bw: false,
            lt_bw: 0,
            lt_last_delivered: 0,
            lt_last_stamp: 0,
            lt_last_lost: 0,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            full_bw_reached: false,
            full_bw_cnt: 0,
            cycle_idx: 0,
            has_seen_rtt: false,
            prior_cwnd: 0,
            full_bw: 0,
            ack_epoch_mstamp: 0,
            extra_acked: [0; 2],
            ack_epoch_acked: 0,
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
            pacing_rate: u64::MAX,
            mss: 1448, // until `init` reads `st.mss`
            pacing_shift: crate::DEFAULT_PACING_SHIFT,
            srtt_us: None,
            delivered: 0,
            delivered_mstamp: 0,
            lost: 0,
            ca_state: CaState::Open,
            probe_rtt_mark: None,
            target_cwnd: 0,
            robust_active: false,
            robust_activations: 0,
            robust_acks: 0,
            probe_rtt_exit_round: 0,
        }
    }

    /// The configuration.
    #[must_use]
    pub fn config(&self) -> Bbr1Config {
        self.cfg
    }

    /// The current mode.
    #[must_use]
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The bandwidth estimate in use, packets/µs << 24 (Linux `bbr_bw`: `lt_bw` while policed,
    /// else the windowed max).
    #[must_use]
    pub fn bw(&self) -> u64 {
        if self.lt_use_bw {
            self.lt_bw
        } else {
            self.max_bw()
        }
    }

    /// The windowed max-bw, packets/µs << 24 (Linux `bbr_max_bw`).
    #[must_use]
    pub fn max_bw(&self) -> u64 {
        self.bw.get()
    }

    /// The windowed min RTT in µs, if any sample was seen.
    #[must_use]
    pub fn min_rtt_us(&self) -> Option<u64> {
        self.min_rtt_us
    }

    /// Whether Startup has filled the pipe.
    #[must_use]
    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }

    /// Index of the current ProbeBW gain-cycle phase.
    #[must_use]
    pub fn cycle_idx(&self) -> usize {
        self.cycle_idx
    }

    /// Packet-timed rounds so far.
    #[must_use]
    pub fn round_count(&self) -> u64 {
        self.rtt_cnt
    }

    /// The pacing gain applied to the pacing rate, 1/256: `high_gain` while the 2BRobust boost
    /// is in force, else Linux's `pacing_gain`.
    #[must_use]
    pub fn effective_pacing_gain(&self) -> u32 {
        if self.robust_active {
            HIGH_GAIN
        } else {
            self.pacing_gain
        }
    }

    /// Take the socket fields Linux reads live (`mss_cache`, `sk_pacing_shift`).
    fn sync_socket(&mut self, st: &CwndState) {
        self.mss = st.mss.max(1);
        self.pacing_shift = st.pacing_shift;
    }

    /// Pacing rate for `bw` at `gain` (Linux `bbr_bw_to_pacing_rate`; no `sk_max_pacing_rate`).
    fn bw_to_pacing_rate(&self, bw: u64, gain: u32) -> u64 {
        rate_bytes_per_sec(bw, gain, self.mss)
    }

    /// Linux `bbr_init_pacing_rate_from_rtt`: `high_gain` · cwnd / srtt (1 ms without srtt).
    fn init_pacing_rate_from_rtt(&mut self, cwnd: u32) {
        let rtt_us = match self.srtt_us {
            Some(s) => {
                self.has_seen_rtt = true;
                s.max(1)
            }
            None => 1_000,
        };
        let bw = u64::from(cwnd) * BW_UNIT / rtt_us;
        self.pacing_rate = self.bw_to_pacing_rate(bw, HIGH_GAIN);
    }

    /// Linux `bbr_set_pacing_rate`: before the pipe is full the rate only rises.
    fn set_pacing_rate(&mut self, bw: u64, gain: u32, cwnd: u32) {
        let rate = self.bw_to_pacing_rate(bw, gain);
        if !self.has_seen_rtt && self.srtt_us.is_some() {
            self.init_pacing_rate_from_rtt(cwnd);
        }
        if self.full_bw_reached || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    /// Linux `bbr_min_tso_segs`: 1 segment below 1.2 Mbit/s of pacing, else 2.
    fn min_tso(&self) -> u32 {
        if self.pacing_rate < MIN_TSO_RATE >> 3 {
            1
        } else {
            2
        }
    }

    /// Linux `bbr_tso_segs_goal`: about 2^-shift s of data at the pacing rate, within one
    /// legacy-GSO-sized skb, in segments, at least `bbr_min_tso_segs`, at most 127.
    fn tso_segs_goal(&self) -> u32 {
        let bytes = (self.pacing_rate.checked_shr(u32::from(self.pacing_shift)))
            .unwrap_or(0)
            .min(u64::from(GSO_MAX_SIZE - 1 - MAX_TCP_HEADER));
        let segs = u32::try_from(bytes / u64::from(self.mss)).unwrap_or(u32::MAX);
        segs.max(self.min_tso()).min(TSO_SEGS_MAX)
    }

    /// Linux `bbr_save_cwnd`: remember the last good cwnd before recovery or ProbeRTT cut it.
    fn save_cwnd(&mut self, cwnd: u32) {
        if self.prev_ca_state < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(cwnd);
        }
    }

    /// Linux `bbr_bdp`: ⌈bw · min_rtt · gain⌉ packets; `TCP_INIT_CWND` without an RTT sample.
    fn bdp(&self, bw: u64, gain: u32) -> u32 {
        let Some(min_rtt) = self.min_rtt_us else {
            return TCP_INIT_CWND;
        };
        let w = u128::from(bw) * u128::from(min_rtt);
        let bdp = ((w * u128::from(gain)) >> BBR_SCALE).div_ceil(u128::from(BW_UNIT));
        u32::try_from(bdp).unwrap_or(u32::MAX)
    }

    /// Linux `bbr_quantization_budget`: room for three TSO bursts, rounded up to even, plus 2
    /// in the 5/4 phase so that small BDPs still probe above the BDP.
    fn quantization_budget(&self, cwnd: u32) -> u32 {
        let mut cwnd = cwnd.saturating_add(3 * self.tso_segs_goal());
        cwnd = cwnd.saturating_add(1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            cwnd = cwnd.saturating_add(2);
        }
        cwnd
    }

    /// Linux `bbr_inflight`: BDP at `gain` plus the quantization budget.
    fn inflight(&self, bw: u64, gain: u32) -> u32 {
        self.quantization_budget(self.bdp(bw, gain))
    }

    /// Linux `bbr_packets_in_net_at_edt`: the packets expected in the network when the next
    /// skb departs (at `max(wstamp, now)`), counting that skb when the gain is above 1.
    fn packets_in_net_at_edt(&self, now: Time, wstamp: Time, inflight_now: u32) -> u32 {
        let edt = wstamp.max(now);
        let interval_us = edt.saturating_since(now).as_micros();
        let interval_delivered = (u128::from(self.bw()) * u128::from(interval_us)) >> BW_SCALE;
        let mut at_edt = inflight_now;
        if self.pacing_gain > BBR_UNIT {
            at_edt = at_edt.saturating_add(self.tso_segs_goal());
        }
        match u32::try_from(interval_delivered) {
            Ok(delivered) if delivered < at_edt => at_edt - delivered,
            _ => 0,
        }
    }

    /// Linux `bbr_extra_acked`: the larger of the two aggregation slots.
    fn extra_acked(&self) -> u32 {
        self.extra_acked[0].max(self.extra_acked[1])
    }

    /// Linux `bbr_ack_aggregation_cwnd`: the aggregation allowance, only once the pipe is
    /// full, at most bw × 100 ms.
    fn ack_aggregation_cwnd(&self) -> u32 {
        if EXTRA_ACKED_GAIN == 0 || !self.full_bw_reached {
            return 0;
        }
        let max_aggr = u128::from(self.bw()) * u128::from(EXTRA_ACKED_MAX_US) / u128::from(BW_UNIT);
        let aggr = (u64::from(EXTRA_ACKED_GAIN) * u64::from(self.extra_acked())) >> BBR_SCALE;
        u32::try_from(u128::from(aggr).min(max_aggr)).unwrap_or(u32::MAX)
    }

    /// Linux `bbr_set_cwnd_to_recover_or_restore`. Returns the cwnd to continue with and
    /// whether packet conservation decides it on its own.
    fn set_cwnd_to_recover_or_restore(
        &mut self,
        st: &CwndState,
        rs: &RateSample,
        ack: &AckInfo,
        acked: u32,
    ) -> (u32, bool) {
        let prev = self.prev_ca_state;
        let state = self.ca_state;
        let mut cwnd = st.cwnd;
        // Deduct the newly lost packets; bbr_set_cwnd then grows at most by `acked`.
        if rs.losses > 0 {
            cwnd = cwnd.saturating_sub(rs.losses).max(1);
        }
        let in_flight_plus_acked = ack.in_flight.saturating_add(acked);
        if state == CaState::Recovery && prev != CaState::Recovery {
            // First round of recovery: packet conservation, starting a round now and cutting
            // cwnd left unused by the application, TSQ or TSO deferral.
            self.packet_conservation = true;
            self.next_rtt_delivered = self.delivered;
            cwnd = in_flight_plus_acked;
        } else if prev >= CaState::Recovery && state < CaState::Recovery {
            // Leaving recovery or loss: back to the cwnd saved at entry.
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            return (cwnd.max(in_flight_plus_acked), true);
        }
        (cwnd, false)
    }

    /// Linux `bbr_set_cwnd`: slow-start towards the target (BDP·gain + aggregation allowance +
    /// quantization budget), or snap down to it once the pipe is full; never below 4, and 4 in
    /// ProbeRTT.
    fn set_cwnd(&mut self, st: &mut CwndState, rs: &RateSample, ack: &AckInfo, bw: u64, gain: u32) {
        let acked = rs.acked_sacked;
        let mut cwnd = st.cwnd;
        if acked > 0 {
            let (c, conserving) = self.set_cwnd_to_recover_or_restore(st, rs, ack, acked);
            cwnd = c;
            if !conserving {
                let mut target = self.bdp(bw, gain);
                target = target.saturating_add(self.ack_aggregation_cwnd());
                target = self.quantization_budget(target);
                self.target_cwnd = target;
                if self.full_bw_reached {
                    cwnd = cwnd.saturating_add(acked).min(target);
                } else if cwnd < target || self.delivered < u64::from(TCP_INIT_CWND) {
                    cwnd = cwnd.saturating_add(acked);
                }
                cwnd = cwnd.max(CWND_MIN_TARGET);
            }
        }
        st.cwnd = cwnd.min(st.cwnd_clamp);
        if self.mode == Mode::ProbeRtt {
            st.cwnd = st.cwnd.min(CWND_MIN_TARGET);
        }
    }

    /// Linux `bbr_is_next_cycle_phase`: a phase lasts min_rtt; the 5/4 phase also waits until
    /// in-flight reaches 5/4·BDP (or a loss); the 3/4 phase ends early once in-flight ≤ BDP.
    fn is_next_cycle_phase(&self, now: Time, rs: &RateSample, ack: &AckInfo) -> bool {
        let elapsed = self.delivered_mstamp.saturating_sub(self.cycle_mstamp);
        let is_full_length = self.min_rtt_us.is_some_and(|m| elapsed > m);
        if self.pacing_gain == BBR_UNIT {
            return is_full_length;
        }
        let inflight = self.packets_in_net_at_edt(now, ack.wstamp, ack.prior_in_flight);
        let bw = self.max_bw();
        if self.pacing_gain > BBR_UNIT {
            return is_full_length
                && (rs.losses > 0 || inflight >= self.inflight(bw, self.pacing_gain));
        }
        is_full_length || inflight <= self.inflight(bw, BBR_UNIT)
    }

    /// Linux `bbr_advance_cycle_phase`.
    fn advance_cycle_phase(&mut self) {
        self.cycle_idx = (self.cycle_idx + 1) & (CYCLE_LEN - 1);
        self.cycle_mstamp = self.delivered_mstamp;
    }

    /// Linux `bbr_update_cycle_phase`.
    fn update_cycle_phase(&mut self, now: Time, rs: &RateSample, ack: &AckInfo) {
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(now, rs, ack) {
            self.advance_cycle_phase();
        }
    }

    /// Linux `bbr_reset_probe_bw_mode`: enter ProbeBW at a random phase other than 3/4: the
    /// index before the advance is uniform in 1..=7, so the phase is uniform in {2, …, 7, 0}.
    fn reset_probe_bw_mode(&mut self) {
        self.mode = Mode::ProbeBw;
        let r: u32 = self.rng.random_range(0..CYCLE_RAND);
        self.cycle_idx = CYCLE_LEN - 1 - r as usize;
        self.advance_cycle_phase();
    }

    /// Linux `bbr_reset_mode`: Startup if the pipe was never filled, else ProbeBW.
    fn reset_mode(&mut self) {
        if self.full_bw_reached {
            self.reset_probe_bw_mode();
        } else {
            self.mode = Mode::Startup;
        }
    }

    /// Linux `bbr_reset_lt_bw_sampling_interval`.
    fn reset_lt_bw_sampling_interval(&mut self) {
        self.lt_last_stamp = self.delivered_mstamp / 1_000;
        self.lt_last_delivered = self.delivered;
        self.lt_last_lost = self.lost;
        self.lt_rtt_cnt = 0;
    }

    /// Linux `bbr_reset_lt_bw_sampling`.
    fn reset_lt_bw_sampling(&mut self) {
        self.lt_bw = 0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
        self.reset_lt_bw_sampling_interval();
    }

    /// Linux `bbr_lt_bw_interval_done`: two consecutive lossy intervals whose rates agree
    /// within 1/8 or 4 kbit/s mean a policer; use their average with gain 1.
    fn lt_bw_interval_done(&mut self, bw: u64) {
        if self.lt_bw != 0 {
            let diff = bw.abs_diff(self.lt_bw);
            if u128::from(diff) * u128::from(BBR_UNIT) <= u128::from(LT_BW_RATIO * self.lt_bw)
                || rate_bytes_per_sec(diff, BBR_UNIT, self.mss) <= LT_BW_DIFF
            {
                self.lt_bw = (bw + self.lt_bw) >> 1;
                self.lt_use_bw = true;
                self.pacing_gain = BBR_UNIT;
                self.lt_rtt_cnt = 0;
                return;
            }
        }
        self.lt_bw = bw;
        self.reset_lt_bw_sampling_interval();
    }

    /// Linux `bbr_lt_bw_sampling`: intervals of 4–16 rounds that start and end on a loss,
    /// lossy if lost/delivered ≥ 50/256; `lt_bw` is used for 48 rounds once found.
    fn lt_bw_sampling(&mut self, rs: &RateSample) {
        if self.lt_use_bw {
            if self.mode == Mode::ProbeBw && self.round_start {
                self.lt_rtt_cnt += 1;
                if self.lt_rtt_cnt >= LT_BW_MAX_RTTS {
                    self.reset_lt_bw_sampling();
                    self.reset_probe_bw_mode();
                }
            }
            return;
        }
        // Start at the first loss, once the policer's tokens are exhausted.
        if !self.lt_is_sampling {
            if rs.losses == 0 {
                return;
            }
            self.reset_lt_bw_sampling_interval();
            self.lt_is_sampling = true;
        }
        // Running out of data would underestimate the rate.
        if rs.is_app_limited {
            self.reset_lt_bw_sampling();
            return;
        }
        if self.round_start {
            self.lt_rtt_cnt += 1;
        }
        if self.lt_rtt_cnt < LT_INTVL_MIN_RTTS {
            return;
        }
        if self.lt_rtt_cnt > 4 * LT_INTVL_MIN_RTTS {
            self.reset_lt_bw_sampling();
            return;
        }
        // End the interval on a loss (tokens exhausted again).
        if rs.losses == 0 {
            return;
        }
        let lost = self.lost.saturating_sub(self.lt_last_lost);
        let delivered = self.delivered.saturating_sub(self.lt_last_delivered);
        if delivered == 0
            || u128::from(lost) << BBR_SCALE < u128::from(LT_LOSS_THRESH) * u128::from(delivered)
        {
            return;
        }
        let t = (self.delivered_mstamp / 1_000) as i64 - self.lt_last_stamp as i64;
        if t < 1 {
            return; // less than a millisecond: wait
        }
        let t = t.unsigned_abs(); // t ≥ 1 here
        if t >= u64::from(u32::MAX) / 1_000 {
            self.reset_lt_bw_sampling(); // too long to multiply in Linux's u32
            return;
        }
        let bw = u128::from(delivered) * u128::from(BW_UNIT) / u128::from(t * 1_000);
        self.lt_bw_interval_done(u64::try_from(bw).unwrap_or(u64::MAX));
    }

    /// Linux `bbr_update_bw`: packet-timed rounds and the max-bw filter (app-limited samples
    /// only when they do not lower it).
    fn update_bw(&mut self, rs: &RateSample) {
        self.round_start = false;
        let Some(bw) = rs.interval.and_then(|i| bw_from_sample(rs.delivered, i)) else {
            return; // no valid sample
        };
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = self.delivered;
            self.rtt_cnt += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        self.lt_bw_sampling(rs);
        if !rs.is_app_limited || bw >= self.max_bw() {
            self.bw.running_max(BW_FILTER_ROUNDS, self.rtt_cnt, bw);
        }
    }

    /// Linux `bbr_update_ack_aggregation`: the largest excess of ACKed data over bw × epoch in
    /// the last 5–10 rounds, capped at cwnd.
    fn update_ack_aggregation(&mut self, st: &CwndState, rs: &RateSample) {
        if EXTRA_ACKED_GAIN == 0 || rs.acked_sacked == 0 || interval_us(rs).is_none() {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rtts =
                (self.extra_acked_win_rtts + 1).min(EXTRA_ACKED_WIN_RTTS_MAX);
            if self.extra_acked_win_rtts >= EXTRA_ACKED_WIN_RTTS {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        let epoch_us = self.delivered_mstamp.saturating_sub(self.ack_epoch_mstamp);
        let mut expected = u128::from(self.bw()) * u128::from(epoch_us) / u128::from(BW_UNIT);
        // A new epoch when the ACK rate fell to bw or below, or the epoch is very old.
        if u128::from(self.ack_epoch_acked) <= expected
            || self.ack_epoch_acked.saturating_add(rs.acked_sacked) >= ACK_EPOCH_ACKED_RESET_THRESH
        {
            self.ack_epoch_acked = 0;
            self.ack_epoch_mstamp = self.delivered_mstamp;
            expected = 0;
        }
        self.ack_epoch_acked = self
            .ack_epoch_acked
            .saturating_add(rs.acked_sacked)
            .min(ACK_EPOCH_ACKED_MAX);
        let extra = u128::from(self.ack_epoch_acked).saturating_sub(expected);
        let extra = u32::try_from(extra).unwrap_or(u32::MAX).min(st.cwnd);
        if extra > self.extra_acked[self.extra_acked_win_idx] {
            self.extra_acked[self.extra_acked_win_idx] = extra;
        }
    }

    /// Linux `bbr_check_full_bw_reached`: once per non-app-limited round, a max-bw growth below
    /// 25 % counts; three in a row mean the pipe is full.
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        let thresh = (u128::from(self.full_bw) * u128::from(FULL_BW_THRESH)) >> BBR_SCALE;
        if u128::from(self.max_bw()) >= thresh {
            self.full_bw = self.max_bw();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_CNT;
    }

    /// Linux `bbr_check_drain`: Startup → Drain once full (setting ssthresh to the BDP-based
    /// in-flight, as Linux does), Drain → ProbeBW once the packets in the network are ≤ it.
    fn check_drain(&mut self, now: Time, st: &mut CwndState, ack: &AckInfo) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            st.ssthresh = self.inflight(self.max_bw(), BBR_UNIT);
        }
        if self.mode == Mode::Drain
            && self.packets_in_net_at_edt(now, ack.wstamp, ack.in_flight)
                <= self.inflight(self.max_bw(), BBR_UNIT)
        {
            self.reset_probe_bw_mode();
        }
    }

    /// Linux `bbr_check_probe_rtt_done`: after the done stamp (and the round) restore the
    /// saved cwnd and leave ProbeRTT.
    fn check_probe_rtt_done(&mut self, now: Time, st: &mut CwndState) {
        match self.probe_rtt_done_stamp {
            Some(done) if jiffies(now) > done => {}
            _ => return,
        }
        self.min_rtt_stamp = jiffies(now);
        st.cwnd = st.cwnd.max(self.prior_cwnd);
        self.reset_mode();
        self.probe_rtt_exit_round = self.rtt_cnt;
    }

    /// Linux `bbr_update_min_rtt`: the 10 s min_rtt filter and ProbeRTT.
    fn update_min_rtt(&mut self, now: Time, st: &mut CwndState, rs: &RateSample, ack: &AckInfo) {
        let j = jiffies(now);
        let filter_expired = j > self.min_rtt_stamp + MIN_RTT_WIN_SEC * HZ;
        if let Some(rtt) = rs.rtt {
            let rtt_us = rtt.as_micros();
            if self.min_rtt_us.is_none_or(|m| rtt_us < m) || (filter_expired && !rs.is_ack_delayed)
            {
                self.min_rtt_us = Some(rtt_us);
                self.min_rtt_stamp = j;
            }
        }
        if PROBE_RTT_MODE_MS > 0
            && filter_expired
            && !self.idle_restart
            && self.mode != Mode::ProbeRtt
        {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd(st.cwnd);
            self.probe_rtt_done_stamp = None;
            self.probe_rtt_mark = Some((self.delivered, self.delivered));
        }
        if self.mode == Mode::ProbeRtt {
            // Linux marks the transport app-limited here (see the module documentation).
            let mark = (self.delivered + u64::from(ack.in_flight)).max(1);
            if let Some((_, hi)) = &mut self.probe_rtt_mark {
                *hi = mark;
            }
            // Hold the minimum in flight for max(200 ms, 1 round).
            if self.probe_rtt_done_stamp.is_none() && ack.in_flight <= CWND_MIN_TARGET {
                self.probe_rtt_done_stamp = Some(j + PROBE_RTT_MODE_MS * HZ / 1_000);
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
        // The idle restart ends with the first ACK that delivers data.
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
    }

    /// Linux `bbr_update_gains`.
    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (HIGH_GAIN, HIGH_GAIN),
            Mode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            Mode::ProbeBw if self.lt_use_bw => (BBR_UNIT, CWND_GAIN),
            Mode::ProbeBw => (PACING_GAIN[self.cycle_idx], CWND_GAIN),
            Mode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
    }

    /// 2BRobust: whether the boost is in force on this ACK, and its counters.
    fn update_robust(&mut self, st: &CwndState, rs: &RateSample, ack: &AckInfo) {
        let active = match self.cfg.robust {
            Some(r) if self.mode == Mode::ProbeBw => {
                !rs.is_app_limited
                    && !st.app_limited
                    && !self.probe_rtt_mark_live()
                    && self.rtt_cnt - self.probe_rtt_exit_round >= u64::from(r.rounds)
                    && u64::from(ack.in_flight) * u64::from(BBR_UNIT)
                        < u64::from(r.alpha_unit()) * u64::from(self.bdp(self.bw(), BBR_UNIT))
            }
            _ => false,
        };
        if active && !self.robust_active {
            self.robust_activations += 1;
        }
        if active {
            self.robust_acks += 1;
        }
        self.robust_active = active;
    }

    /// Linux `bbr_update_model`, then the 2BRobust decision.
    fn update_model(&mut self, now: Time, st: &mut CwndState, rs: &RateSample, ack: &AckInfo) {
        self.update_bw(rs);
        self.update_ack_aggregation(st, rs);
        self.update_cycle_phase(now, rs, ack);
        self.check_full_bw_reached(rs);
        self.check_drain(now, st, ack);
        self.update_min_rtt(now, st, rs, ack);
        self.update_gains();
        self.update_robust(st, rs, ack);
    }

    /// Whether a packet sent when `tp->delivered` was `prior_delivered` would carry Linux's
    /// ProbeRTT app-limited mark.
    fn probe_rtt_marked(&self, prior_delivered: u64) -> bool {
        self.probe_rtt_mark
            .is_some_and(|(lo, hi)| (lo..=hi).contains(&prior_delivered))
    }

    /// Whether Linux's ProbeRTT mark would still be set on the transport now (it is cleared
    /// once `delivered` passes it, `tcp_rate_gen`).
    fn probe_rtt_mark_live(&self) -> bool {
        self.probe_rtt_mark
            .is_some_and(|(_, hi)| self.delivered <= hi)
    }

    /// Linux `bbr_init`.
    fn reset(&mut self, now: Time, st: &mut CwndState) {
        let fresh = Bbr1::new(self.cfg, 0);
        let rng = self.rng.clone();
        *self = Bbr1 { rng, ..fresh };
        self.sync_socket(st);
        st.ssthresh = INFINITE_SSTHRESH;
        // `bbr_init`: `min_rtt_us = tcp_min_rtt(tp)` and the pacing rate from `tp->srtt_us`,
        // both from the handshake when there was one.
        self.min_rtt_us = st.min_rtt.map(|m| m.as_micros().max(1));
        self.srtt_us = st.srtt.map(|s| s.as_micros().max(1));
        self.min_rtt_stamp = jiffies(now);
        self.init_pacing_rate_from_rtt(st.cwnd);
        self.ack_epoch_mstamp = us(now);
        self.reset_lt_bw_sampling();
    }
}

impl CongestionControl for Bbr1 {
    fn name(&self) -> &'static str {
        "bbr1"
    }

    fn init(&mut self, now: Time, st: &mut CwndState) {
        self.reset(now, st);
    }

    /// BBR has no `cong_avoid`: the transport never calls it once `cong_control` returned true.
    fn cong_avoid(&mut self, _now: Time, _st: &mut CwndState, _acked: u32, _ack: &AckInfo) {}

    /// Linux `bbr_ssthresh`: save cwnd for the end of recovery; ssthresh is left as it is.
    fn ssthresh(&mut self, _now: Time, st: &CwndState, _ack: &AckInfo) -> u32 {
        self.save_cwnd(st.cwnd);
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
        self.sync_socket(st);
        if let Some(s) = ack.srtt {
            self.srtt_us = Some(s.as_micros().max(1));
        }
        self.delivered = self.delivered.max(rs.total_delivered);
        self.lost = self.lost.max(ack.total_lost);
        if rs.acked_sacked > 0 {
            self.delivered_mstamp = us(now);
        }
        if let Some(s) = ack.ca_state {
            self.ca_state = s;
        }
        let mut rs = *rs;
        rs.is_app_limited |= self.probe_rtt_marked(rs.prior_delivered);

        self.update_model(now, st, &rs, ack);
        let bw = self.bw();
        self.set_pacing_rate(bw, self.effective_pacing_gain(), st.cwnd);
        self.set_cwnd(st, &rs, ack, bw, self.cwnd_gain);
        true
    }

    /// Linux `bbr_set_state`: an RTO ends the round and counts as a loss for `lt_bw`.
    fn set_state(&mut self, _now: Time, st: &mut CwndState, new: CaState) {
        self.sync_socket(st);
        self.ca_state = new;
        if new == CaState::Loss {
            self.prev_ca_state = CaState::Loss;
            self.full_bw = 0;
            self.round_start = true;
            let rs = RateSample {
                losses: 1,
                ..RateSample::default()
            };
            self.lt_bw_sampling(&rs);
        }
    }

    /// Linux `bbr_cwnd_event`: on restart from idle while app-limited, start a new aggregation
    /// epoch, pace at 1·bw in ProbeBW and see whether ProbeRTT is done.
    fn cwnd_event(&mut self, now: Time, st: &mut CwndState, ev: CwndEvent) {
        self.sync_socket(st);
        match ev {
            CwndEvent::TxStart if st.app_limited || self.probe_rtt_mark_live() => {
                self.idle_restart = true;
                self.ack_epoch_mstamp = us(now);
                self.ack_epoch_acked = 0;
                match self.mode {
                    Mode::ProbeBw => self.set_pacing_rate(self.bw(), BBR_UNIT, st.cwnd),
                    Mode::ProbeRtt => self.check_probe_rtt_done(now, st),
                    Mode::Startup | Mode::Drain => {}
                }
            }
            _ => {}
        }
    }

    /// Linux `bbr_undo_cwnd`: a spurious slow-down; restart full-pipe detection and the
    /// long-term sampler, keep cwnd.
    fn undo_cwnd(&mut self, _now: Time, st: &CwndState, _prior_cwnd: u32) -> u32 {
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.reset_lt_bw_sampling();
        st.cwnd
    }

    /// Mirror `tp->lost` (and `tp->delivered`) for the long-term sampler.
    fn on_packet_lost(&mut self, _now: Time, _st: &mut CwndState, lost: &LostInfo) {
        self.lost = self.lost.max(lost.total_lost);
        self.delivered = self.delivered.max(lost.total_delivered);
    }

    fn pacing_rate(&self) -> Option<u64> {
        Some(self.pacing_rate)
    }

    fn wants_pacing(&self) -> bool {
        true
    }

    /// Linux `bbr_min_tso_segs`.
    fn min_tso_segs(&self) -> Option<u32> {
        Some(self.min_tso())
    }

    fn state(&self) -> &'static str {
        self.mode.name()
    }

    /// Keys: `bw_bps` and `max_bw_bps` (bw·mss·8·10^6 / 2^24, bit/s; `bw` is `lt_bw` while
    /// policed), `lt_bw_bps`, `min_rtt_us` (0 before the first sample; Linux shows `~0U`),
    /// `pacing_gain` (as applied, with the 2BRobust boost), `cycle_gain` (Linux's
    /// `pacing_gain`), `cwnd_gain`, `pacing_rate_bps`, `full_bw_reached`, `lt_use_bw`,
    /// `cycle_idx`, `round_count`, `extra_acked`, `prior_cwnd`, `target_cwnd` (last
    /// `bbr_set_cwnd` target), `packet_conservation`, and the 2BRobust counters
    /// `robust_active`, `robust_activations` and `robust_acks`.
    fn stats(&self, sink: StatSink<'_>) {
        let bps = |bw: u64| {
            u128_to_f64((u128::from(bw) * u128::from(self.mss) * 8 * 1_000_000) >> BW_SCALE)
        };
        let gain = |g: u32| f64::from(g) / f64::from(BBR_UNIT);
        sink("bw_bps", bps(self.bw()));
        sink("max_bw_bps", bps(self.max_bw()));
        sink("lt_bw_bps", bps(self.lt_bw));
        sink("min_rtt_us", u64_to_f64(self.min_rtt_us.unwrap_or(0)));
        sink("pacing_gain", gain(self.effective_pacing_gain()));
        sink("cycle_gain", gain(self.pacing_gain));
        sink("cwnd_gain", gain(self.cwnd_gain));
        sink(
            "pacing_rate_bps",
            u64_to_f64(self.pacing_rate.saturating_mul(8)),
        );
        sink("full_bw_reached", f64::from(u8::from(self.full_bw_reached)));
        sink("lt_use_bw", f64::from(u8::from(self.lt_use_bw)));
        sink("cycle_idx", usize_to_f64(self.cycle_idx));
        sink("round_count", u64_to_f64(self.rtt_cnt));
        sink("extra_acked", f64::from(self.extra_acked()));
        sink("prior_cwnd", f64::from(self.prior_cwnd));
        sink("target_cwnd", f64::from(self.target_cwnd));
        sink(
            "packet_conservation",
            f64::from(u8::from(self.packet_conservation)),
        );
        sink("robust_active", f64::from(u8::from(self.robust_active)));
        sink("robust_activations", u64_to_f64(self.robust_activations));
        sink("robust_acks", u64_to_f64(self.robust_acks));
    }
}

#[cfg(test)]
mod tests;
