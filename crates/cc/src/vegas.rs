//! TCP Vegas as Linux implements it in `net/ipv4/tcp_vegas.c` (Brakmo & Peterson, "TCP Vegas:
//! End to end congestion avoidance on a global internet", IEEE JSAC 13(8), 1995).
//!
//! Sources: the Linux file as stored in the `Kingxukai/linux` mirror (commit `9b44fff`, the same
//! mirror `cubic.rs` follows). Rules are paraphrased and
//! re-implemented here; no code is copied.
//!
//! Contract: delay-based window growth (`cong_avoid`) on top of Reno's loss response. The hooks and
//! what each does (Linux function in brackets):
//! - `init` [`tcp_vegas_init`]: forget baseRTT, start the first Vegas round at SND.NXT = 0.
//! - `pkts_acked` [`tcp_vegas_pkts_acked`]: every ACK with an RTT sample feeds
//!   `vrtt = rtt_us + 1` (the +1 µs guard against a zero RTT) into baseRTT (minimum ever, until
//!   the next `init`) and into the round's `minRTT` and sample count `cntRTT`.
//! - `cong_avoid` [`tcp_vegas_cong_avoid`]: while Vegas is switched off, plain Reno
//!   (`tcp_reno_cong_avoid`). Otherwise, once per round — when the cumulative ACK passes
//!   `beg_snd_nxt`, the SND.NXT recorded when the round began — the round's samples decide:
//!   with `cntRTT <= 2` the ACKs are probably delayed, so Reno; else with `rtt = minRTT`,
//!   `target = cwnd·baseRTT/rtt` and `diff = cwnd·(rtt − baseRTT)/baseRTT` (segments queued):
//!   - slow start and `diff > γ`: `cwnd = min(cwnd, target + 1)`, `ssthresh = min(ssthresh, cwnd)`
//!     (leaves slow start);
//!   - slow start otherwise: `tcp_slow_start(acked)`;
//!   - congestion avoidance: `diff > β` → `cwnd − 1` and `ssthresh = min(ssthresh, cwnd)`;
//!     `diff < α` → `cwnd + 1`; else hold;
//!   - then cwnd is clamped to `[2, cwnd_clamp]` and `ssthresh = max(ssthresh, ¾·cwnd)`
//!     (`tcp_current_ssthresh` outside a cwnd reduction, which is always the case here because
//!     the transport calls `cong_avoid` only in Open/Disorder);
//!   - the round's `minRTT`/`cntRTT` restart. ACKs inside a round only run `tcp_slow_start`
//!     while in slow start (no growth in congestion avoidance between decisions).
//! - `set_state` [`tcp_vegas_state`]: Vegas is on only in `Open`; any other state switches it off
//!   (Reno until the next `Open`), and returning to `Open` restarts the round.
//! - `cwnd_event` [`tcp_vegas_cwnd_event`]: `CwndRestart` and `TxStart` (restart after idle) redo
//!   `init`, which also forgets baseRTT.
//! - `ssthresh` / `undo_cwnd`: Reno's (`tcp_reno_ssthresh`: `max(cwnd/2, 2)`;
//!   `tcp_reno_undo_cwnd`, the trait default).
//!
//! Mapping to the sans-IO hooks: Linux reads `tp->snd_nxt` when Vegas is (re)enabled; the hooks
//! that do so here have no `AckInfo`. So (a) `init` uses SND.NXT = 0, the start of the transport's
//! segment numbering; (b) `TxStart`/`CwndRestart` fire only when nothing is outstanding, so
//! SND.NXT = the last ACK's SND.UNA, which is used; (c) `set_state(Open)` is called by the
//! transport while it processes an ACK, before `pkts_acked` of the same ACK: the restart is
//! completed in that `pkts_acked` with its SND.NXT. Linux runs `pkts_acked` before the state
//! change, so that ACK's sample updates baseRTT but is wiped from the new round; the same is done
//! here.
//!
//! Arithmetic: microseconds as in Linux; `diff` and `target` in `u64` (Linux multiplies in `u32`,
//! which could overflow for cwnd·ΔRTT > 2^32 µs; not reproduced).
//!
//! ns-3 ([`VegasConfig::for_ns3`], what `CcSpec::for_ns3` sets): the rules where ns-3.37's
//! `TcpVegas` (`src/internet/model/tcp-vegas.cc`) differs from Linux are fields of
//! [`VegasConfig`], Linux's by default: the smoothed RTT without the 1 µs guard
//! (`TcpVegas::PktsAcked`), ns-3 NewReno's per-ACK byte growth where Vegas does not decide
//! (`TcpNewReno::IncreaseWindow`, `SlowStart`), the decision arithmetic of
//! `TcpVegas::IncreaseWindow` (round end at SND.UNA ≥ `m_begSndNxt`, diff = cwnd −
//! ⌊cwnd·baseRTT/minRTT⌋, no floor of 2 segments), `TcpVegas::GetSsThresh` = max(min(ssthresh,
//! cwnd − 1 MSS), 2 MSS) on decreases and on loss, ssthresh ≥ ¾ cwnd in bytes, and no restart
//! after idle (ns-3's `TcpVegas` has no `CwndEvent`). RTTs are kept in µs here; ns-3 divides
//! its nanosecond times in floating point (the floor of `cwnd·baseRTT/minRTT` can differ when it
//! falls within cwnd·10⁻⁵ of an integer).

use crate::Dur;
use crate::cubic::RttSource;
use crate::num::{f64_to_u64, u64_to_f64};
use crate::reno::{ByteWindow, RENO_MIN_SSTHRESH};
use crate::{
    AckInfo, CaState, CongestionControl, CwndEvent, CwndState, INFINITE_SSTHRESH, StatSink, Time,
};

/// Lower bound of segments queued in the network, α (Linux module parameter `alpha` = 2).
pub const ALPHA: u32 = 2;
/// Upper bound of segments queued in the network, β (Linux module parameter `beta` = 4).
pub const BETA: u32 = 4;
/// Slow-start exit threshold of segments queued, γ (Linux module parameter `gamma` = 1).
pub const GAMMA: u32 = 1;
/// A round with at most this many RTT samples falls back to Reno: "if we only had 2 samples
/// total … they're almost certainly delayed ACKs" (Linux `tcp_vegas_cong_avoid`:
/// `if (vegas->cntRTT <= 2)`).
pub const RENO_FALLBACK_MAX_SAMPLES: u32 = 2;
/// cwnd never drops below this after a Vegas decision (Linux `tcp_vegas_cong_avoid`:
/// `if (tcp_snd_cwnd(tp) < 2) tcp_snd_cwnd_set(tp, 2)`).
pub const VEGAS_MIN_CWND: u32 = 2;
/// Added to every RTT sample so that neither baseRTT nor minRTT is ever zero (Linux
/// `tcp_vegas_pkts_acked`: `vrtt = sample->rtt_us + 1`).
pub const RTT_GUARD_US: u64 = 1;
/// "No sample yet" value of baseRTT and minRTT (Linux `0x7fffffff`).
const RTT_UNSET: u64 = 0x7fff_ffff;

/// Vegas parameters (Linux module parameters; the fields of [`crate::CcSpec::Vegas`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VegasConfig {
    /// α, segments: below this many queued, cwnd grows by one per RTT.
    pub alpha: u32,
    /// β, segments: above this many queued, cwnd shrinks by one per RTT.
    pub beta: u32,
    /// γ, segments: above this many queued, slow start ends.
    pub gamma: u32,
    /// RTT that feeds baseRTT and the round's minRTT: Linux the ACK's sample
    /// (`tcp_vegas_pkts_acked`, `sample->rtt_us`); ns-3 the smoothed RTT on every ACK
    /// (`TcpVegas::PktsAcked` receives `m_lastRtt`, the estimator's smoothed value; see
    /// [`RttSource`]).
    pub rtt_source: RttSource,
    /// Added to every RTT, µs: Linux [`RTT_GUARD_US`] = 1 (`tcp_vegas_pkts_acked`); ns-3 0
    /// (`TcpVegas::PktsAcked` takes the RTT as it is and ignores a zero one).
    pub rtt_guard_us: u64,
    /// Reno growth where Vegas does not decide (Vegas off, ≤ 2 samples in the round, slow
    /// start inside a round): `false` = Linux `tcp_reno_cong_avoid`/`tcp_slow_start`; `true` =
    /// ns-3 `TcpNewReno::IncreaseWindow`/`SlowStart`, per ACK in bytes
    /// ([`crate::RenoRules::per_ack_growth`]).
    pub per_ack_growth: bool,
    /// ns-3 `TcpVegas::IncreaseWindow`'s decision arithmetic: a round ends when SND.UNA ≥
    /// `m_begSndNxt` (Linux: after it), diff = cwnd − ⌊cwnd·baseRTT/minRTT⌋ (floating point;
    /// Linux ⌊cwnd·(minRTT − baseRTT)/baseRTT⌋), and cwnd has no floor of 2 segments (Linux
    /// [`VEGAS_MIN_CWND`]); a changed cwnd is whole segments (`segCwnd · m_segmentSize`).
    pub ns3_decision: bool,
    /// ns-3 `TcpVegas::GetSsThresh` = max(min(ssthresh, cwnd − 1 MSS), 2 MSS), at the
    /// decision's decreases (Linux min(ssthresh, cwnd)) and at a loss (Linux
    /// `tcp_reno_ssthresh` = max(cwnd/2, 2)); and the decision's ssthresh ≥ ¾ cwnd counted in
    /// bytes (`3 * m_cWnd / 4`; Linux `tcp_current_ssthresh`'s (cwnd>>1) + (cwnd>>2) segments).
    pub ns3_ssthresh: bool,
    /// Restart Vegas (forget baseRTT) when sending restarts after idle (Linux
    /// `tcp_vegas_cwnd_event`); ns-3's `TcpVegas` has no `CwndEvent`: off.
    pub idle_restart: bool,
}

impl Default for VegasConfig {
    fn default() -> Self {
        VegasConfig {
            alpha: ALPHA,
            beta: BETA,
            gamma: GAMMA,
            rtt_source: RttSource::Sample,
            rtt_guard_us: RTT_GUARD_US,
            per_ack_growth: false,
            ns3_decision: false,
            ns3_ssthresh: false,
            idle_restart: true,
        }
    }
}

impl VegasConfig {
    /// This configuration as ns-3.37's `TcpVegas` (`src/internet/model/tcp-vegas.cc`) runs it;
    /// α, β and γ are kept (ns-3's defaults are Linux's 2, 4, 1).
    #[must_use]
    pub fn for_ns3(self) -> Self {
        VegasConfig {
            rtt_source: RttSource::Smoothed,
            rtt_guard_us: 0,
            per_ack_growth: true,
            ns3_decision: true,
            ns3_ssthresh: true,
            idle_restart: false,
            ..self
        }
    }

    /// Whether cwnd and ssthresh are counted in bytes (ns-3's rules).
    fn bytes(&self) -> bool {
        self.per_ack_growth || self.ns3_ssthresh
    }
}

/// The Vegas controller (Linux `struct vegas` plus what the hooks cannot read from `tcp_sock`).
#[derive(Clone, Debug)]
pub struct Vegas {
    cfg: VegasConfig,
    /// Vegas decisions are on (`doing_vegas_now`); off = Reno.
    doing_vegas_now: bool,
    /// SND.NXT when the current round began (`beg_snd_nxt`), in segments.
    beg_snd_nxt: u64,
    /// RTT samples in the current round (`cntRTT`).
    cnt_rtt: u32,
    /// Minimum `vrtt` of the current round, µs (`minRTT`).
    min_rtt_us: u64,
    /// Minimum `vrtt` since `init`, µs (`baseRTT`).
    base_rtt_us: u64,
    /// `set_state(Open)` asked for a restart that the next ACK completes (see module doc).
    enable_pending: bool,
    /// SND.UNA of the latest ACK (SND.NXT when a `TxStart` fires).
    last_snd_una: u64,
    /// `diff` of the latest Vegas decision, segments.
    last_diff: Option<u64>,
    ca_state: CaState,
    /// Whether cwnd < ssthresh at the last hook (for [`CongestionControl::state`]).
    in_slow_start: bool,
    /// ns-3's byte ssthresh (with [`VegasConfig::bytes`]).
    bytes: ByteWindow,
}

impl Vegas {
    /// A fresh Vegas controller.
    #[must_use]
    pub fn new(cfg: VegasConfig) -> Self {
        let mut v = Vegas {
            cfg,
            doing_vegas_now: false,
            beg_snd_nxt: 0,
            cnt_rtt: 0,
            min_rtt_us: RTT_UNSET,
            base_rtt_us: RTT_UNSET,
            enable_pending: false,
            last_snd_una: 0,
            last_diff: None,
            ca_state: CaState::Open,
            in_slow_start: true,
            bytes: ByteWindow::default(),
        };
        v.vegas_init(0);
        v
    }

    /// The configuration.
    #[must_use]
    pub fn config(&self) -> VegasConfig {
        self.cfg
    }

    /// baseRTT (minimum RTT sample + 1 µs since the last (re)start), if any.
    #[must_use]
    pub fn base_rtt_us(&self) -> Option<u64> {
        (self.base_rtt_us != RTT_UNSET).then_some(self.base_rtt_us)
    }

    /// `diff` (segments queued) of the latest once-per-RTT Vegas decision.
    #[must_use]
    pub fn diff(&self) -> Option<u64> {
        self.last_diff
    }

    /// Whether Vegas decisions are on (`doing_vegas_now`).
    #[must_use]
    pub fn enabled(&self) -> bool {
        self.doing_vegas_now && !self.enable_pending
    }

    /// `vegas_enable`: decisions on, a new round from `snd_nxt`, empty round statistics.
    fn vegas_enable(&mut self, snd_nxt: u64) {
        self.doing_vegas_now = true;
        self.enable_pending = false;
        self.beg_snd_nxt = snd_nxt;
        self.cnt_rtt = 0;
        self.min_rtt_us = RTT_UNSET;
    }

    /// `tcp_vegas_init`: forget baseRTT and enable.
    fn vegas_init(&mut self, snd_nxt: u64) {
        self.base_rtt_us = RTT_UNSET;
        self.vegas_enable(snd_nxt);
    }

    /// Whether cwnd < ssthresh (in bytes with ns-3's rules).
    fn slow_starting(&self, st: &CwndState) -> bool {
        if self.cfg.bytes() {
            self.bytes.in_slow_start(st)
        } else {
            st.in_slow_start()
        }
    }

    /// Slow start inside a round: `tcp_slow_start`, or ns-3 `TcpNewReno::SlowStart`.
    fn slow_start(&self, st: &mut CwndState, acked: u32) {
        if self.cfg.per_ack_growth {
            ByteWindow::slow_start(st, acked);
        } else {
            st.slow_start(acked);
        }
    }

    /// `tcp_reno_cong_avoid`, or ns-3 `TcpNewReno::IncreaseWindow`.
    fn reno_cong_avoid(&self, st: &mut CwndState, acked: u32, ack: &AckInfo) {
        if !ack.is_cwnd_limited {
            return;
        }
        if self.cfg.per_ack_growth {
            self.bytes.increase_window(st, acked);
            return;
        }
        let mut acked = acked;
        if st.in_slow_start() {
            acked = st.slow_start(acked);
            if acked == 0 {
                return;
            }
        }
        st.cong_avoid_ai(st.cwnd, acked);
    }

    /// ssthresh in bytes (ns-3), `u64::MAX` while infinite.
    fn set_ssthresh_bytes(&mut self, st: &mut CwndState, bytes: u64) {
        st.ssthresh = if bytes == u64::MAX {
            INFINITE_SSTHRESH
        } else {
            self.bytes.ssthresh_segments(st, bytes)
        };
    }

    /// ns-3 `TcpVegas::GetSsThresh` in bytes: max(min(ssthresh, cwnd − MSS), 2·MSS).
    fn ns3_get_ssthresh(&self, st: &CwndState) -> u64 {
        let mss = u64::from(st.mss);
        self.bytes
            .ssthresh_bytes(st)
            .min(ByteWindow::cwnd_bytes(st).saturating_sub(mss))
            .max(2 * mss)
    }

    /// After a decrease: ssthresh = min(ssthresh, cwnd) (Linux) or `GetSsThresh` (ns-3).
    fn lower_ssthresh(&mut self, st: &mut CwndState) {
        if self.cfg.ns3_ssthresh {
            let b = self.ns3_get_ssthresh(st);
            self.set_ssthresh_bytes(st, b);
        } else {
            st.ssthresh = st.ssthresh.min(st.cwnd);
        }
    }

    /// A decision sets cwnd to `segs` segments (ns-3: `segCwnd · m_segmentSize`, whole
    /// segments).
    fn set_cwnd_segments(&self, st: &mut CwndState, segs: u32) {
        st.cwnd = segs;
        if self.cfg.bytes() {
            st.cwnd_cnt = 0;
        }
    }

    /// The once-per-round Vegas decision with `cntRTT > 2`.
    fn vegas_decision(&mut self, st: &mut CwndState, acked: u32) {
        let rtt = self.min_rtt_us;
        let base = self.base_rtt_us;
        let cwnd = u64::from(st.cwnd);
        let (target_cwnd, diff) = if self.cfg.ns3_decision {
            // `TcpVegas::IncreaseWindow`: targetCwnd = (uint32) (segCwnd · baseRtt/minRtt) in
            // double, diff = segCwnd − targetCwnd (baseRtt ≤ minRtt: no underflow).
            let target = f64_to_u64(u64_to_f64(cwnd) * (u64_to_f64(base) / u64_to_f64(rtt)));
            (target, cwnd.saturating_sub(target))
        } else {
            // Actual rate × baseRTT, and the segments queued beyond it (the Arizona "Diff").
            (cwnd * base / rtt, cwnd * rtt.saturating_sub(base) / base)
        };
        self.last_diff = Some(diff);
        let slow_start = self.slow_starting(st);
        if diff > u64::from(self.cfg.gamma) && slow_start {
            // Going too fast: match the actual rate (+1 for the truncation) and leave slow start.
            let segs = st
                .cwnd
                .min(u32::try_from(target_cwnd + 1).unwrap_or(u32::MAX));
            self.set_cwnd_segments(st, segs);
            self.lower_ssthresh(st);
        } else if slow_start {
            self.slow_start(st, acked);
        } else if diff > u64::from(self.cfg.beta) {
            self.set_cwnd_segments(st, st.cwnd.saturating_sub(1));
            self.lower_ssthresh(st);
        } else if diff < u64::from(self.cfg.alpha) {
            self.set_cwnd_segments(st, st.cwnd + 1);
        }
        if self.cfg.ns3_decision {
            st.cwnd = st.cwnd.max(1).min(st.cwnd_clamp);
        } else {
            st.cwnd = st.cwnd.max(VEGAS_MIN_CWND).min(st.cwnd_clamp);
        }
        if self.cfg.ns3_ssthresh {
            // `m_ssThresh = max(m_ssThresh, 3 * m_cWnd / 4)`, bytes.
            let floor = 3 * ByteWindow::cwnd_bytes(st) / 4;
            let b = self.bytes.ssthresh_bytes(st).max(floor);
            self.set_ssthresh_bytes(st, b);
        } else {
            // `tcp_current_ssthresh` outside a cwnd reduction: max(ssthresh, ¾·cwnd).
            st.ssthresh = st.ssthresh.max((st.cwnd >> 1) + (st.cwnd >> 2));
        }
    }
}

impl Default for Vegas {
    fn default() -> Self {
        Vegas::new(VegasConfig::default())
    }
}

impl CongestionControl for Vegas {
    fn name(&self) -> &'static str {
        "vegas"
    }

    fn init(&mut self, _now: Time, st: &mut CwndState) {
        self.vegas_init(0);
        self.last_snd_una = 0;
        self.last_diff = None;
        self.ca_state = CaState::Open;
        self.bytes = ByteWindow::default();
        self.in_slow_start = self.slow_starting(st);
    }

    fn pkts_acked(&mut self, _now: Time, st: &mut CwndState, ack: &AckInfo) {
        self.last_snd_una = ack.snd_una;
        if let Some(rtt) = self.cfg.rtt_source.of(ack)
            && (self.cfg.rtt_guard_us > 0 || rtt > Dur::ZERO)
        {
            let vrtt = rtt.as_micros() + self.cfg.rtt_guard_us;
            self.base_rtt_us = self.base_rtt_us.min(vrtt);
            self.min_rtt_us = self.min_rtt_us.min(vrtt);
            self.cnt_rtt += 1;
        }
        if self.enable_pending {
            // Linux: the sample above was taken before `tcp_vegas_state(Open)` wiped the round.
            self.vegas_enable(ack.snd_nxt);
        }
        self.in_slow_start = self.slow_starting(st);
    }

    fn cong_avoid(&mut self, _now: Time, st: &mut CwndState, acked: u32, ack: &AckInfo) {
        if self.enable_pending {
            self.vegas_enable(ack.snd_nxt);
        }
        // Linux: `after(ack, beg_snd_nxt)`; ns-3: `m_lastAckedSeq >= m_begSndNxt`.
        let round_over = if self.cfg.ns3_decision {
            ack.snd_una >= self.beg_snd_nxt
        } else {
            ack.snd_una > self.beg_snd_nxt
        };
        if !self.doing_vegas_now {
            self.reno_cong_avoid(st, acked, ack);
        } else if round_over {
            // The round is over: one Vegas decision, then a new round up to today's SND.NXT.
            self.beg_snd_nxt = ack.snd_nxt;
            if self.cnt_rtt <= RENO_FALLBACK_MAX_SAMPLES {
                self.reno_cong_avoid(st, acked, ack);
            } else {
                self.vegas_decision(st, acked);
            }
            self.cnt_rtt = 0;
            self.min_rtt_us = RTT_UNSET;
        } else if self.slow_starting(st) {
            self.slow_start(st, acked);
        }
        self.in_slow_start = self.slow_starting(st);
    }

    fn ssthresh(&mut self, _now: Time, st: &CwndState, _ack: &AckInfo) -> u32 {
        if self.cfg.ns3_ssthresh {
            // `TcpVegas::GetSsThresh` (TcpSocketBase calls it at recovery, CWR and timeout).
            let b = self.ns3_get_ssthresh(st);
            return self.bytes.ssthresh_segments(st, b);
        }
        (st.cwnd / 2).max(RENO_MIN_SSTHRESH)
    }

    fn set_state(&mut self, _now: Time, st: &mut CwndState, new: CaState) {
        if new == CaState::Open {
            self.enable_pending = true;
        } else {
            self.doing_vegas_now = false;
            self.enable_pending = false;
        }
        self.ca_state = new;
        self.in_slow_start = self.slow_starting(st);
    }

    fn cwnd_event(&mut self, _now: Time, st: &mut CwndState, ev: CwndEvent) {
        if matches!(ev, CwndEvent::CwndRestart | CwndEvent::TxStart) && self.cfg.idle_restart {
            // Nothing is outstanding: SND.NXT = the last SND.UNA.
            self.vegas_init(self.last_snd_una);
        }
        if ev == CwndEvent::CompleteCwr && self.cfg.bytes() {
            self.bytes.on_complete_cwr(st);
        }
        self.in_slow_start = self.slow_starting(st);
    }

    fn state(&self) -> &'static str {
        self.ca_state
            .state_name(self.in_slow_start.then_some("slow_start"))
    }

    fn stats(&self, sink: StatSink<'_>) {
        if let Some(b) = self.base_rtt_us() {
            sink("base_rtt_us", u64_to_f64(b));
        }
        if self.min_rtt_us != RTT_UNSET {
            sink("min_rtt_us", u64_to_f64(self.min_rtt_us));
        }
        sink("cnt_rtt", f64::from(self.cnt_rtt));
        if let Some(d) = self.last_diff {
            sink("diff", u64_to_f64(d));
        }
        sink("vegas_enabled", if self.enabled() { 1.0 } else { 0.0 });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SlowStartKind;
    use crate::driver::Pipe;
    use crate::reno::Reno;
    use proptest::prelude::*;

    const MSS: u32 = 1448;

    fn ack(una: u64, nxt: u64, acked: u32, rtt_us: Option<u64>) -> AckInfo {
        AckInfo {
            acked_sacked: acked,
            pkts_acked: acked,
            rtt: rtt_us.map(Dur::from_micros),
            is_cwnd_limited: true,
            snd_una: una,
            snd_nxt: nxt,
            ca_state: Some(CaState::Open),
            ..AckInfo::default()
        }
    }

    /// Feed one ACK the way the transport does (`pkts_acked`, then `cong_avoid`).
    fn feed(cc: &mut Vegas, st: &mut CwndState, a: &AckInfo) {
        cc.pkts_acked(Time::ZERO, st, a);
        cc.cong_avoid(Time::ZERO, st, a.acked_sacked, a);
    }

    /// A controller whose first round (from SND.NXT 0) is over, with baseRTT = `base_us` + 1 and a
    /// new round that ends at SND.NXT `nxt`.
    fn primed(st: &mut CwndState, base_us: u64, nxt: u64) -> Vegas {
        let mut cc = Vegas::default();
        cc.init(Time::ZERO, st);
        let cwnd = st.cwnd;
        let ssthresh = st.ssthresh;
        // One ACK with one sample ends the initial round (cntRTT = 1: Reno step, undone below).
        feed(&mut cc, st, &ack(1, nxt, 1, Some(base_us)));
        st.cwnd = cwnd;
        st.ssthresh = ssthresh;
        st.cwnd_cnt = 0;
        assert_eq!(cc.beg_snd_nxt, nxt);
        assert_eq!(cc.base_rtt_us(), Some(base_us + RTT_GUARD_US));
        cc
    }

    /// Slow start ends when diff > γ: cwnd 20, baseRTT 100 ms, round minimum 120 ms gives
    /// diff = 20·20 000/100 001 = 3 > 1, so cwnd = min(20, 20·100 001/120 001 + 1) = 17 and
    /// ssthresh = 17 (no longer slow start). With a round minimum of 104 ms, diff = 0 ≤ γ and
    /// slow start goes on (cwnd += acked on the round-end ACK).
    #[test]
    fn slow_start_exits_when_diff_exceeds_gamma() {
        let mut st = CwndState::new(20, MSS);
        let mut cc = primed(&mut st, 100_000, 21);
        for una in 2..=4 {
            feed(&mut cc, &mut st, &ack(una, 21, 1, Some(130_000)));
        }
        // Samples do not end the round before SND.UNA passes 21; slow start grew by 1 per ACK.
        assert_eq!(st.cwnd, 23);
        st.cwnd = 20;
        feed(&mut cc, &mut st, &ack(22, 40, 1, Some(120_000)));
        assert_eq!(cc.diff(), Some(3));
        assert_eq!(st.cwnd, 17);
        assert_eq!(st.ssthresh, 17);
        assert!(!st.in_slow_start());
        assert_eq!(cc.state(), "cong_avoid");

        let mut st = CwndState::new(20, MSS);
        let mut cc = primed(&mut st, 100_000, 21);
        for una in 2..=4 {
            feed(&mut cc, &mut st, &ack(una, 21, 0, Some(104_000)));
        }
        feed(&mut cc, &mut st, &ack(22, 40, 2, Some(104_000)));
        assert_eq!(cc.diff(), Some(0));
        assert_eq!(st.cwnd, 22, "slow start by acked = 2");
        assert_eq!(st.ssthresh, INFINITE_SSTHRESH);
    }

    /// A Vegas decision needs three RTT samples in the round (`cntRTT > 2`): with two, the
    /// round-end ACK is Reno's (no decision even though the RTT doubled); with three, Vegas
    /// decides (diff = 20·100 000/100 001 = 19 > β: −1).
    #[test]
    fn three_samples_are_needed_for_a_decision() {
        for (samples, decided, cwnd) in [(2u64, false, 20), (3, true, 19)] {
            let mut st = CwndState::new(20, MSS);
            st.ssthresh = 10;
            let mut cc = primed(&mut st, 100_000, 21);
            for una in 2..=samples {
                feed(&mut cc, &mut st, &ack(una, 21, 1, Some(200_000)));
            }
            feed(&mut cc, &mut st, &ack(22, 40, 1, Some(200_000)));
            assert_eq!(cc.diff().is_some(), decided, "{samples} samples");
            assert_eq!(st.cwnd, cwnd, "{samples} samples");
            if !decided {
                assert_eq!(st.cwnd_cnt, 1, "Reno's linear-increase counter");
            }
        }
    }

    /// Congestion avoidance moves cwnd by one segment per round: −1 above β, +1 below α, hold in
    /// between; baseRTT 100 ms, cwnd 50, ssthresh 10. diff = ⌊50·ΔRTT/100 001⌋ (the +1 µs guard
    /// is in the denominator), so 104 ms gives 1 and 110 ms gives 4.
    #[test]
    fn congestion_avoidance_steps_one_segment_per_round_by_alpha_and_beta() {
        // (round minimum RTT in µs, expected diff, expected cwnd after the round)
        for (rtt, diff, cwnd) in [
            (100_000, 0, 51),
            (103_000, 1, 51),
            (104_000, 1, 51),
            (104_100, 2, 50),
            (108_000, 3, 50),
            (109_000, 4, 50),
            (110_000, 4, 50),
            (110_100, 5, 49),
            (200_000, 49, 49),
        ] {
            let mut st = CwndState::new(50, MSS);
            st.ssthresh = 10;
            let mut cc = primed(&mut st, 100_000, 51);
            for una in 2..=51 {
                feed(&mut cc, &mut st, &ack(una, 51, 1, Some(rtt)));
            }
            assert_eq!(st.cwnd, 50, "no change inside a round (rtt {rtt})");
            feed(&mut cc, &mut st, &ack(52, 100, 1, Some(rtt)));
            assert_eq!(cc.diff(), Some(diff), "rtt {rtt}");
            assert_eq!(st.cwnd, cwnd, "rtt {rtt}");
            // ssthresh = max(10, ¾·cwnd) after every decision (`tcp_current_ssthresh`).
            assert_eq!(st.ssthresh, (cwnd >> 1) + (cwnd >> 2), "rtt {rtt}");
        }
    }

    /// On a bottleneck of C = 50 segments per base RTT (one segment per ms, 50 ms base RTT),
    /// Vegas settles with α ≤ diff ≤ β segments queued. Here RTT = cwnd · 1 ms once the queue
    /// builds, so diff = cwnd·(cwnd − 50)/50 (truncated, +1 µs guard): 51 → 1 (grow), 52..=54 →
    /// 2..=4 (hold), 55 → 5 (shrink). The equilibrium is therefore cwnd ∈ [52, 54], i.e.
    /// 2..=4 segments queued, and it must hold over the last 5 s of a 30 s run.
    ///
    /// Slow start ends on diff > γ without a loss. The round's minimum RTT comes from its first
    /// segments, sent before the queue built, so the exit comes late (here at cwnd 176, where a
    /// 1 ms minimum queue already gives diff = ⌊176·1/50⌋ = 3) and cwnd = min(cwnd, target + 1)
    /// = 173 barely cuts it; congestion avoidance then drains the queue one segment per RTT
    /// (≈ Σ_{W=55}^{173} W ms ≈ 14 s), hence 25 s before the check.
    #[test]
    fn converges_to_between_alpha_and_beta_segments_queued() {
        let mut p = Pipe::new(Vegas::default(), CwndState::new(10, MSS));
        p.ack_gap = Dur::from_millis(1);
        let rtt = |_t: Time| Dur::from_millis(50);
        let mut exit: Option<(u32, u32, u64)> = None;
        let mut last = (p.st.cwnd, p.st.ssthresh);
        p.run_until(Time::from_secs_f64(25.0), &rtt, &mut |p| {
            if exit.is_none() && p.st.ssthresh != INFINITE_SSTHRESH {
                assert_eq!(last.1, INFINITE_SSTHRESH);
                exit = Some((last.0, p.st.cwnd, p.cc.diff().expect("a decision")));
            }
            last = (p.st.cwnd, p.st.ssthresh);
        });
        let (before, after, exit_diff) = exit.expect("slow start ended without loss");
        assert!(exit_diff > u64::from(GAMMA), "exit diff {exit_diff}");
        assert!(
            after <= before,
            "exit never raises cwnd: {before} -> {after}"
        );
        let (mut lo, mut hi) = (u32::MAX, 0);
        p.run_until(Time::from_secs_f64(30.0), &rtt, &mut |p| {
            lo = lo.min(p.st.cwnd);
            hi = hi.max(p.st.cwnd);
            let d = p.cc.diff().expect("decisions");
            assert!((2..=4).contains(&d), "diff {d} at cwnd {}", p.st.cwnd);
        });
        assert!(lo >= 52 && hi <= 54, "cwnd range {lo}..={hi}");
        assert_eq!(p.cc.base_rtt_us(), Some(50_001));
    }

    /// With at most two RTT samples per round (one ACK per round, as with delayed ACKs at a small
    /// window), Vegas must behave exactly as Reno, even while the RTT grows tenfold.
    #[test]
    fn with_two_or_fewer_samples_per_round_it_behaves_as_reno() {
        let mut st_v = CwndState::new(2, MSS);
        st_v.ssthresh = 8;
        let mut st_r = st_v;
        let mut vegas = Vegas::default();
        let mut reno = Reno::new(SlowStartKind::Standard);
        vegas.init(Time::ZERO, &mut st_v);
        reno.init(Time::ZERO, &mut st_r);
        let mut nxt = 2u64;
        for i in 0..200u64 {
            // One ACK per round acknowledging the whole window; nothing new is sent yet, so
            // SND.NXT = SND.UNA and the next ACK passes it (a round per ACK, one sample each).
            let una = nxt;
            let window = st_v.cwnd;
            let a = ack(una, una, window, Some(50_000 + 2_000 * i));
            feed(&mut vegas, &mut st_v, &a);
            reno.pkts_acked(Time::ZERO, &mut st_r, &a);
            reno.cong_avoid(Time::ZERO, &mut st_r, window, &a);
            assert_eq!(st_v, st_r, "after ACK {i}");
            nxt = una + u64::from(st_v.cwnd);
        }
        assert!(st_v.cwnd > 8, "Reno grew past ssthresh: {}", st_v.cwnd);
        assert_eq!(vegas.diff(), None, "no Vegas decision was taken");
    }

    /// Loss: Reno halving (ssthresh = max(cwnd/2, 2)); Vegas is off in recovery and restarts its
    /// round on the return to Open, keeping baseRTT.
    #[test]
    fn loss_halves_and_vegas_restarts_after_recovery() {
        for (cwnd, expect) in [(100, 50), (41, 20), (3, 2), (2, 2)] {
            let st = CwndState::new(cwnd, MSS);
            assert_eq!(
                Vegas::default().ssthresh(Time::ZERO, &st, &AckInfo::default()),
                expect
            );
        }
        let mut p = Pipe::new(Vegas::default(), CwndState::new(10, MSS));
        p.ack_gap = Dur::from_millis(1);
        let rtt = |_t: Time| Dur::from_millis(50);
        p.run_until(Time::from_secs_f64(3.0), &rtt, &mut |_| {});
        let base = p.cc.base_rtt_us();
        let before = p.st.cwnd;
        p.cc.set_state(p.now, &mut p.st, CaState::Recovery);
        assert!(!p.cc.enabled());
        assert_eq!(p.cc.state(), "recovery");
        p.cc.set_state(p.now, &mut p.st, CaState::Open);
        p.fast_loss();
        assert_eq!(p.st.cwnd, before / 2);
        assert_eq!(p.st.ssthresh, before / 2);
        assert_eq!(p.cc.base_rtt_us(), base, "recovery keeps baseRTT");
        // The next ACK restarts the round at its SND.NXT with no samples.
        let nxt = p.nxt;
        p.step(&rtt);
        assert!(p.cc.enabled());
        assert_eq!(p.cc.beg_snd_nxt, nxt, "SND.NXT when the ACK arrived");
        assert_eq!(
            p.cc.cnt_rtt, 0,
            "the restarting ACK's sample is wiped from the round"
        );
    }

    /// Disorder switches Vegas off: Reno growth applies (one segment per window in CA) although
    /// the RTT says the queue is far above β.
    #[test]
    fn outside_open_it_is_reno() {
        let mut st = CwndState::new(20, MSS);
        st.ssthresh = 10;
        let mut cc = primed(&mut st, 10_000, 21);
        cc.set_state(Time::ZERO, &mut st, CaState::Disorder);
        for una in 2..=22 {
            feed(&mut cc, &mut st, &ack(una, 40, 1, Some(100_000)));
        }
        assert_eq!(st.cwnd, 21, "Reno +1 after a window of ACKs");
        assert_eq!(cc.diff(), None);
    }

    /// Restart after idle (`TxStart`, `CwndRestart`) forgets baseRTT and begins a round at the
    /// last SND.UNA (Linux `tcp_vegas_cwnd_event` → `tcp_vegas_init`).
    #[test]
    fn idle_restart_forgets_base_rtt() {
        let mut st = CwndState::new(10, MSS);
        let mut cc = primed(&mut st, 40_000, 11);
        for una in 2..=11 {
            feed(&mut cc, &mut st, &ack(una, 11, 1, Some(40_000)));
        }
        assert_eq!(cc.base_rtt_us(), Some(40_001));
        cc.cwnd_event(Time::ZERO, &mut st, CwndEvent::TxStart);
        assert_eq!(cc.base_rtt_us(), None);
        assert_eq!(cc.beg_snd_nxt, 11);
        assert_eq!(cc.cnt_rtt, 0);
        feed(&mut cc, &mut st, &ack(12, 30, 1, Some(70_000)));
        assert_eq!(
            cc.base_rtt_us(),
            Some(70_001),
            "a new path minimum is learnt"
        );
    }

    /// An ACK as the ns-3 profile's transport gives it: the smoothed RTT (`srtt_us`) on every
    /// ACK, no sample of its own.
    fn ns3_ack(una: u64, nxt: u64, acked: u32, srtt_us: u64) -> AckInfo {
        AckInfo {
            srtt: Some(Dur::from_micros(srtt_us)),
            ..ack(una, nxt, acked, None)
        }
    }

    /// An ns-3 Vegas whose first round is over with baseRTT = `base_us` (no guard) and a new
    /// round that ends at SND.NXT `nxt`; cwnd and ssthresh are then set to `cwnd`, `ssthresh`.
    fn ns3_primed(st: &mut CwndState, base_us: u64, nxt: u64) -> Vegas {
        let mut cc = Vegas::new(VegasConfig::default().for_ns3());
        cc.init(Time::ZERO, st);
        let (cwnd, ssthresh) = (st.cwnd, st.ssthresh);
        feed(&mut cc, st, &ns3_ack(1, nxt, 1, base_us));
        st.cwnd = cwnd;
        st.ssthresh = ssthresh;
        st.cwnd_cnt = 0;
        assert_eq!(
            cc.base_rtt_us(),
            Some(base_us),
            "smoothed RTT, no 1 µs guard"
        );
        cc
    }

    /// ns-3 `TcpVegas::IncreaseWindow` in slow start: cwnd 20, baseRTT 100 ms, round minimum
    /// 120 ms: targetCwnd = ⌊20·100/120⌋ = 16, diff = 20 − 16 = 4 > γ, so cwnd = min(20, 16 + 1)
    /// = 17 and ssthresh = `GetSsThresh` = max(min(∞, 17 − 1), 2) = 16 segments, then
    /// max(16·1448, 3·17·1448/4 = 18 462) bytes = 16 segments. Linux (guarded µs): diff =
    /// ⌊20·20 000/100 001⌋ = 3, cwnd 17, ssthresh min(∞, 17) = 17.
    #[test]
    fn ns3_slow_start_exit_uses_the_target_diff_and_get_ssthresh() {
        let mut st = CwndState::new(20, MSS);
        let mut cc = ns3_primed(&mut st, 100_000, 21);
        for una in 2..=4 {
            feed(&mut cc, &mut st, &ns3_ack(una, 21, 0, 120_000));
        }
        feed(&mut cc, &mut st, &ns3_ack(22, 40, 1, 120_000));
        assert_eq!(cc.diff(), Some(4));
        assert_eq!((st.cwnd, st.ssthresh), (17, 16));
        assert_eq!(cc.state(), "cong_avoid");
    }

    /// ns-3 in congestion avoidance: cwnd 50 = ssthresh, baseRTT 100 ms, round minimum 120 ms:
    /// target ⌊50·5/6⌋ = 41, diff 9 > β: cwnd 49, ssthresh = max(min(50, 49 − 1), 2) = 48,
    /// then max(48·1448, 3·49·1448/4 = 53 214) bytes = 48 (Linux: min(50, 49) = 49). A round
    /// ends at SND.UNA = `m_begSndNxt` already (Linux: after it).
    #[test]
    fn ns3_decrease_sets_get_ssthresh_and_rounds_end_at_beg_snd_nxt() {
        let mut st = CwndState::new(50, MSS);
        st.ssthresh = 50;
        let mut cc = ns3_primed(&mut st, 100_000, 21);
        for una in 2..=4 {
            feed(&mut cc, &mut st, &ns3_ack(una, 21, 1, 120_000));
        }
        assert_eq!(
            st.cwnd, 50,
            "no growth inside a round in congestion avoidance"
        );
        feed(&mut cc, &mut st, &ns3_ack(21, 40, 1, 120_000));
        assert_eq!(cc.diff(), Some(9));
        assert_eq!((st.cwnd, st.ssthresh), (49, 48));
    }

    /// ns-3 `TcpVegas::GetSsThresh` at a loss: max(min(ssthresh, cwnd − 1), 2): cwnd 30 with
    /// ssthresh ∞ gives 29, with ssthresh 20 gives 20, cwnd 2 gives 2 (Linux: cwnd/2 = 15, 15,
    /// 2).
    #[test]
    fn ns3_loss_ssthresh_is_get_ssthresh() {
        let mut cc = Vegas::new(VegasConfig::default().for_ns3());
        let mut linux = Vegas::default();
        for (cwnd, ssthresh, ns3, lx) in [
            (30, INFINITE_SSTHRESH, 29, 15),
            (30, 20, 20, 15),
            (2, INFINITE_SSTHRESH, 2, 2),
        ] {
            let mut st = CwndState::new(cwnd, MSS);
            st.ssthresh = ssthresh;
            let a = AckInfo::default();
            assert_eq!(cc.ssthresh(Time::ZERO, &st, &a), ns3, "cwnd {cwnd}");
            assert_eq!(linux.ssthresh(Time::ZERO, &st, &a), lx, "cwnd {cwnd}");
        }
    }

    /// ns-3 has no floor of 2 segments: cwnd 4 in slow start, baseRTT 100 ms, round minimum
    /// 1 s: target ⌊4·0.1⌋ = 0, diff 4 > γ, cwnd = min(4, 0 + 1) = 1 (Linux clamps to 2).
    #[test]
    fn ns3_cwnd_may_fall_to_one_segment() {
        let mut st = CwndState::new(4, MSS);
        let mut cc = ns3_primed(&mut st, 100_000, 5);
        for una in 2..=4 {
            feed(&mut cc, &mut st, &ns3_ack(una, 5, 0, 1_000_000));
        }
        feed(&mut cc, &mut st, &ns3_ack(5, 9, 1, 1_000_000));
        assert_eq!(cc.diff(), Some(4));
        assert_eq!(st.cwnd, 1);
    }

    /// ns-3's fallback and in-round slow start are `TcpNewReno`'s per ACK: with two samples in
    /// the round, the round-end ACK of 3 segments adds one MSS (Linux 3); and `TcpVegas` has no
    /// `CwndEvent`, so a restart after idle keeps baseRTT.
    #[test]
    fn ns3_reno_fallback_is_per_ack_and_idle_keeps_base_rtt() {
        let mut st = CwndState::new(10, MSS);
        let mut cc = ns3_primed(&mut st, 40_000, 11);
        feed(&mut cc, &mut st, &ns3_ack(2, 11, 0, 40_000));
        assert_eq!(st.cwnd, 10);
        feed(&mut cc, &mut st, &ns3_ack(11, 20, 3, 40_000));
        assert_eq!(cc.diff(), None, "two samples: no decision");
        assert_eq!(st.cwnd, 11);
        cc.cwnd_event(Time::ZERO, &mut st, CwndEvent::TxStart);
        assert_eq!(cc.base_rtt_us(), Some(40_000));
    }

    /// cwnd never goes below 2 however large the queue estimate (diff ≫ β every round).
    #[test]
    fn cwnd_never_below_two() {
        let mut st = CwndState::new(4, MSS);
        st.ssthresh = 2;
        let mut cc = primed(&mut st, 1_000, 5);
        let mut una = 1u64;
        for _ in 0..50 {
            let nxt = una + u64::from(st.cwnd) + 3;
            for _ in 0..4 {
                una += 1;
                feed(&mut cc, &mut st, &ack(una, nxt, 1, Some(500_000)));
                assert!(st.cwnd >= VEGAS_MIN_CWND);
            }
            una = nxt;
            feed(&mut cc, &mut st, &ack(una, nxt + 4, 1, Some(500_000)));
            assert!(st.cwnd >= VEGAS_MIN_CWND);
        }
        assert_eq!(st.cwnd, VEGAS_MIN_CWND);
        assert!(cc.diff().expect("decided") > u64::from(BETA));
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        /// Random ACK streams (RTT samples, ACK sizes, rounds of any length, Disorder episodes):
        /// after every Vegas decision cwnd ≥ 2 and ≤ clamp, ssthresh ≥ ¾·cwnd, no panic.
        #[test]
        fn vegas_decisions_keep_cwnd_in_bounds(
            iw in 2u32..=40,
            acks in proptest::collection::vec(
                (1u32..=4, 1u64..=400_000, proptest::option::of(0u64..=2_000_000), 0u8..=20),
                1..300,
            ),
        ) {
            let mut st = CwndState::new(iw, MSS);
            st.cwnd_clamp = 500;
            let mut cc = Vegas::default();
            cc.init(Time::ZERO, &mut st);
            let (mut una, mut nxt) = (0u64, u64::from(iw));
            for (acked, _, rtt, event) in acks {
                if event == 0 {
                    cc.set_state(Time::ZERO, &mut st, CaState::Disorder);
                } else if event == 1 {
                    cc.set_state(Time::ZERO, &mut st, CaState::Open);
                }
                una = (una + u64::from(acked)).min(nxt);
                let a = ack(una, nxt, acked, rtt);
                let decisions = cc.last_diff;
                feed(&mut cc, &mut st, &a);
                if cc.last_diff != decisions || cc.last_diff.is_some() {
                    prop_assert!(st.cwnd >= VEGAS_MIN_CWND, "cwnd {}", st.cwnd);
                }
                prop_assert!(st.cwnd <= st.cwnd_clamp);
                nxt = nxt.max(una + u64::from(st.cwnd));
                let mut ok = true;
                cc.stats(&mut |_, v| ok &= v.is_finite());
                prop_assert!(ok);
            }
        }
    }
}
