//! Careful Resume: a new connection reuses the capacity an earlier connection on the same path
//! observed, after checking that the path still looks the same, and validates it before keeping
//! it (RFC 9959, "Convergence of Congestion Control from Retained State", published from
//! draft-ietf-tsvwg-careful-resume-24; section numbers below are the draft's, which the RFC
//! keeps).
//!
//! Contract: [`CarefulResume`] is a [`crate::SlowStart`] variant of the loss-based hosts (Reno,
//! NewReno, CUBIC). The saved CC parameters of the earlier connection (§3.1: `saved_cwnd`,
//! `saved_rtt`; §2.4: `max_jump`) are given as [`CarefulResumeConfig`]; the observation that
//! produced them and their Lifetime (§3.1, §4.3.1) are the scenario's business. The host calls
//! it where it calls every slow start (`on_ack` from `pkts_acked`, `grow` from `cong_avoid`,
//! `on_congestion` from `ssthresh`, `on_rto` from `set_state(Loss)`), plus four hooks only this
//! variant uses: [`CarefulResume::on_connection_start`] (the initial window and the handshake
//! RTT), [`CarefulResume::on_packet_sent`] (the host says `wants_packet_sent`),
//! [`CarefulResume::hold_cwnd`] from `cong_control` (the host owns cwnd during Safe Retreat) and
//! the pacing pair [`CarefulResume::pacing_rate`] / [`CarefulResume::paces_now`].
//!
//! Phases (§3, Figure 1), windows in segments:
//! - *Reconnaissance* (§3.2): cwnd starts at the IW and grows by standard slow start
//!   (RFC 5681 §3.1). Congestion (loss, ECN-CE) ends Careful Resume; the host reacts as usual.
//!   Once an ACK has acknowledged all the initial data (the IW) the path is confirmed and the
//!   sender may jump; it defers the jump while it is not cwnd-limited (§3.2, §4.2: a
//!   rate-limited sender stays here). Confirmation (§3.2 "Minimum RTT too small", §4.2.1): the
//!   minimum RTT over the phase (the handshake's sample included) must be more than
//!   `saved_rtt / 2`, and the current RTT (the latest sample) at most `10 · saved_rtt`;
//!   otherwise Careful Resume ends without touching cwnd (§3.2 Note). A jump that would not
//!   raise cwnd (`jump_cwnd ≤ cwnd`) also ends it (nothing to resume).
//! - *Unvalidated* (§3.3): PipeSize = flight_size; cwnd = jump_cwnd = min(`max_jump`,
//!   `saved_cwnd / 2`); every segment is paced at jump_cwnd · MSS per current RTT (§4.3.2:
//!   ITT = current RTT · MPS / jump_cwnd; MSS here, as the transport paces payload bytes);
//!   cwnd does not grow (Appendix A); PipeSize grows by every newly acknowledged or SACKed
//!   segment. It ends (§3.3) when the flight reaches cwnd (checked per segment sent), when an
//!   ACK acknowledges the first unvalidated segment, or when more than one (pacing) RTT has
//!   passed (checked per ACK). Then "check flight_size": if flight_size < IW or flight_size
//!   ≤ PipeSize, cwnd = max(PipeSize, IW) and Careful Resume ends; otherwise cwnd =
//!   flight_size and the sender validates.
//! - *Validating* (§3.4): cwnd grows by standard slow start; PipeSize keeps growing; Careful
//!   Resume ends when an ACK reaches the last segment sent in the Unvalidated Phase.
//! - *Safe Retreat* (§3.5): congestion in Unvalidated or Validating, or (§3.3 "Confirming the
//!   path during transmission") a current RTT above `10 · saved_rtt` in Unvalidated: cwnd =
//!   max(PipeSize / 2, 2) (the floor: RFC 9002 §7.2's two-packet minimum, which §3.5 cites;
//!   RFC 5681 eq. (4)'s 2·SMSS), not more than the cwnd in force; no Proportional Rate
//!   Reduction (§4.5: "PRR is therefore not appropriate"), so the host owns cwnd through
//!   `cong_control` and the transport neither runs PRR nor sets cwnd = ssthresh at the
//!   recovery point; cwnd does not grow; PipeSize keeps growing. The host's `ssthresh` answers
//!   the retreat window. When an ACK reaches the last segment sent before the retreat (the
//!   Unvalidated and Validating data, §3.5 "Loss Recovery") and the transport's loss recovery
//!   is over, ssthresh = max(⌊PipeSize · β⌋, 2) (β = `beta`, default 0.5, §2.4 and §3.5) and
//!   Careful Resume ends; cwnd < ssthresh, so the host slow-starts towards it (§3.7,
//!   Appendix B.4).
//! - *Normal* (§3.7): the host's own slow start (standard) and congestion avoidance. A
//!   retransmission timeout in any phase ends Careful Resume (§3.6, persistent congestion).
//!
//! Choices where the draft leaves the transport open: the first retransmission of a Safe
//! Retreat waits until the flight has drained below the retreat window (§3.5 allows, but does
//! not require, one packet before the reduction); the jump is not deferred for lack of data
//! beyond `is_cwnd_limited`; the saved parameters are used by exactly this connection
//! (§3.2 "Using saved_cwnd" is the scenario's responsibility).
//!
//! Units: windows and PipeSize in segments, rates in bytes per second.

use crate::{AckInfo, CaState, ConnStart, CwndState, Dur, SentInfo, StatSink, Time};

/// The RTT confirmation's lower factor: a minimum RTT at or below `saved_rtt / 2` is another
/// path (§3.2 "Minimum RTT too small"; §4.2.1: the jump is half the saved window, so the rate
/// may not exceed the observed one).
pub const RTT_MIN_DIVISOR: u64 = 2;
/// The RTT confirmation's upper factor: a current RTT more than `10 · saved_rtt` is another
/// path (§4.2.1: "The value of ten accommodates both increases in latency from buffering on a
/// path and any variation between RTT samples").
pub const RTT_MAX_FACTOR: u64 = 10;
/// jump_cwnd is at most `saved_cwnd / 2` (§3.3 "Setting the jump_cwnd", §4.3).
pub const JUMP_DIVISOR: u32 = 2;
/// Safe Retreat sets cwnd to at most `PipeSize / 2` (§3.5 "Re-initializing CWND").
pub const RETREAT_DIVISOR: u64 = 2;
/// Smallest window a Safe Retreat leaves, segments (§3.5 cites RFC 9002 §7.2's minimum of two
/// packets; RFC 5681 §3.1 eq. (4): 2·SMSS).
pub const MIN_WINDOW: u32 = 2;
/// β in thousandths: default 0.5, allowed from 0.5 to 1 (§2.4 "Beta", §3.5).
pub const BETA_DEFAULT_PERMILLE: u32 = 500;
/// Smallest allowed β, thousandths (§2.4).
pub const BETA_MIN_PERMILLE: u32 = 500;
/// Largest allowed β, thousandths (§2.4).
pub const BETA_MAX_PERMILLE: u32 = 1000;

/// The saved CC parameters of an earlier connection on the path, and the configured limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CarefulResumeConfig {
    /// `saved_cwnd`, segments (§3.1: the capacity the observed connection used, the data
    /// acknowledged in one RTT); 0 = no saved parameters (the connection never resumes).
    pub saved_cwnd: u32,
    /// `saved_rtt`, the observed connection's minimum RTT (§3.1); `None` = no saved
    /// parameters.
    pub saved_rtt: Option<Dur>,
    /// `max_jump`, segments (§2.4: the configured maximum jump_cwnd); `None` = no cap beyond
    /// `saved_cwnd / 2`.
    pub max_jump: Option<u32>,
    /// β in thousandths (§2.4, §3.5; 500..=1000).
    pub beta_permille: u32,
}

impl CarefulResumeConfig {
    /// No saved parameters: Careful Resume ends in Reconnaissance (standard slow start).
    pub const NONE: CarefulResumeConfig = CarefulResumeConfig {
        saved_cwnd: 0,
        saved_rtt: None,
        max_jump: None,
        beta_permille: BETA_DEFAULT_PERMILLE,
    };

    /// Resume from `saved_cwnd` segments observed at minimum RTT `saved_rtt`, no `max_jump`,
    /// β = 0.5.
    #[must_use]
    pub fn saved(saved_cwnd: u32, saved_rtt: Dur) -> Self {
        CarefulResumeConfig {
            saved_cwnd,
            saved_rtt: Some(saved_rtt),
            ..Self::NONE
        }
    }

    /// jump_cwnd = min(`max_jump`, `saved_cwnd / 2`) (§3.3, §4.3.2), segments.
    #[must_use]
    pub fn jump_cwnd(&self) -> u32 {
        (self.saved_cwnd / JUMP_DIVISOR).min(self.max_jump.unwrap_or(u32::MAX))
    }

    /// Whether there are saved parameters to resume from.
    #[must_use]
    pub fn has_saved_state(&self) -> bool {
        self.saved_cwnd > 0 && self.saved_rtt.is_some_and(|r| r > Dur::ZERO)
    }
}

impl Default for CarefulResumeConfig {
    fn default() -> Self {
        Self::NONE
    }
}

/// Why Careful Resume ended (the qlog triggers of draft-ietf-tsvwg-careful-resume-qlog where
/// one exists); reported as `cr_exit`, the number in brackets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// [1] No saved parameters (§3.2).
    NoSavedState,
    /// [2] Congestion in Reconnaissance (§3.2 "Detected congestion").
    CongestionInReconnaissance,
    /// [3] The RTT did not confirm the path (§3.2, §4.2.1; `rtt_not_validated`).
    RttNotValidated,
    /// [4] The jump would not raise cwnd (jump_cwnd ≤ cwnd).
    JumpNotLarger,
    /// [5] "Check flight_size" found the jump unused (§3.3; `rate_limited`).
    RateLimited,
    /// [6] The unvalidated data was acknowledged (§3.4; `last_unvalidated_packet_acknowledged`).
    Validated,
    /// [7] Safe Retreat completed (§3.5; `exit_recovery`).
    Retreated,
    /// [8] A retransmission timeout (§3.6).
    PersistentCongestion,
}

impl Exit {
    fn code(self) -> f64 {
        match self {
            Exit::NoSavedState => 1.0,
            Exit::CongestionInReconnaissance => 2.0,
            Exit::RttNotValidated => 3.0,
            Exit::JumpNotLarger => 4.0,
            Exit::RateLimited => 5.0,
            Exit::Validated => 6.0,
            Exit::Retreated => 7.0,
            Exit::PersistentCongestion => 8.0,
        }
    }
}

/// Where Careful Resume is (§3, Figure 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Sending under the IW and slow start; the path is being confirmed (§3.2).
    Reconnaissance,
    /// cwnd = jump_cwnd, paced (§3.3).
    Unvalidated {
        /// When the phase began.
        entered: Time,
        /// The first unvalidated segment (SND.NXT at entry).
        first: u64,
        /// The current RTT the jump is paced over.
        rtt: Dur,
        /// Pacing rate, bytes/s.
        rate: u64,
    },
    /// Waiting for the unvalidated data to be acknowledged (§3.4).
    Validating {
        /// SND.NXT after the last unvalidated segment: the phase ends when SND.UNA reaches it.
        end: u64,
    },
    /// Draining the unvalidated data under a halved PipeSize (§3.5).
    SafeRetreat {
        /// SND.NXT at entry: the phase ends when SND.UNA reaches it.
        end: u64,
        /// The retreat window, segments.
        cwnd: u32,
    },
    /// Careful Resume is over (§3.7).
    Normal(Exit),
}

/// Careful Resume state of one connection.
#[derive(Clone, Debug)]
pub struct CarefulResume {
    cfg: CarefulResumeConfig,
    phase: Phase,
    /// The initial window, segments (0 until known).
    iw: u32,
    /// Minimum RTT seen in Reconnaissance (the handshake's sample included).
    min_rtt: Option<Dur>,
    /// The most recent RTT sample (§2.4 "current RTT").
    latest_rtt: Option<Dur>,
    /// PipeSize, segments (§2.4).
    pipe: u64,
    /// The jump window used, segments (0 before a jump).
    jumped: u32,
    /// The Safe Retreat window, segments (0 without a retreat).
    retreat_cwnd: u32,
    /// cwnd to set at the next ACK: "check flight_size" ran at a send, where cwnd is read-only.
    pending_cwnd: Option<u32>,
}

impl CarefulResume {
    /// Careful Resume from the saved parameters `cfg`, in Reconnaissance.
    #[must_use]
    pub fn new(cfg: CarefulResumeConfig) -> Self {
        CarefulResume {
            cfg,
            phase: Phase::Reconnaissance,
            iw: 0,
            min_rtt: None,
            latest_rtt: None,
            pipe: 0,
            jumped: 0,
            retreat_cwnd: 0,
            pending_cwnd: None,
        }
    }

    /// The saved parameters.
    #[must_use]
    pub fn config(&self) -> CarefulResumeConfig {
        self.cfg
    }

    /// The current phase.
    #[must_use]
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// PipeSize, segments.
    #[must_use]
    pub fn pipe_size(&self) -> u64 {
        self.pipe
    }

    /// The connection starts sending: the IW is the cwnd now (§3.2: "the CWND is initialised
    /// to the IW"), and the handshake's RTT is the first sample of the phase.
    pub fn on_connection_start(&mut self, st: &CwndState, info: &ConnStart) {
        self.iw = st.cwnd;
        if let Some(r) = info.first_rtt.filter(|r| *r > Dur::ZERO) {
            self.sample(r);
        }
        if !self.cfg.has_saved_state() {
            self.phase = Phase::Normal(Exit::NoSavedState);
        }
    }

    fn sample(&mut self, rtt: Dur) {
        self.latest_rtt = Some(rtt);
        if matches!(self.phase, Phase::Reconnaissance) {
            self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
        }
    }

    /// §3.2, §4.2.1: the path is confirmed unless min RTT ≤ saved_rtt / 2 or the current RTT
    /// > 10 · saved_rtt. `None` while no RTT is known.
    fn rtt_confirmed(&self) -> Option<bool> {
        let saved = self.cfg.saved_rtt?.as_nanos();
        let (min, latest) = (self.min_rtt?.as_nanos(), self.latest_rtt?.as_nanos());
        Some(
            u128::from(min) * u128::from(RTT_MIN_DIVISOR) > u128::from(saved)
                && !self.path_changed_rtt(latest),
        )
    }

    /// A current RTT above `10 · saved_rtt` (§4.2.1).
    fn path_changed_rtt(&self, rtt_ns: u64) -> bool {
        self.cfg.saved_rtt.is_some_and(|s| {
            u128::from(rtt_ns) > u128::from(s.as_nanos()) * u128::from(RTT_MAX_FACTOR)
        })
    }

    /// Per ACK, from the host's `pkts_acked` (before any window growth).
    pub fn on_ack(&mut self, now: Time, st: &mut CwndState, ack: &AckInfo) {
        if self.iw == 0 {
            self.iw = st.cwnd.max(1);
        }
        if let Some(c) = self.pending_cwnd.take() {
            st.cwnd = c.min(st.cwnd_clamp);
        }
        if let Some(r) = ack.rtt {
            self.sample(r);
        }
        match self.phase {
            Phase::Reconnaissance => {
                if ack.snd_una >= u64::from(self.iw) && ack.is_cwnd_limited {
                    self.try_jump(now, st, ack);
                }
            }
            Phase::Unvalidated {
                entered,
                first,
                rtt,
                ..
            } => {
                self.pipe += u64::from(ack.acked_sacked);
                if ack.rtt.is_some_and(|r| self.path_changed_rtt(r.as_nanos())) {
                    self.enter_retreat(st, ack.snd_nxt);
                } else if ack.snd_una > first || now.saturating_since(entered) > rtt {
                    let cwnd = self.leave_unvalidated(u64::from(ack.in_flight), ack.snd_nxt);
                    st.cwnd = cwnd.min(st.cwnd_clamp);
                }
            }
            Phase::Validating { end } => {
                self.pipe += u64::from(ack.acked_sacked);
                if ack.snd_una >= end {
                    self.phase = Phase::Normal(Exit::Validated);
                }
            }
            Phase::SafeRetreat { end, .. } => {
                self.pipe += u64::from(ack.acked_sacked);
                let recovering = matches!(
                    ack.ca_state,
                    Some(CaState::Recovery | CaState::Cwr | CaState::Loss)
                );
                if ack.snd_una >= end && !recovering {
                    let ss = self.pipe * u64::from(self.cfg.beta_permille) / 1000;
                    st.ssthresh = u32::try_from(ss)
                        .unwrap_or(u32::MAX)
                        .max(MIN_WINDOW)
                        .min(st.cwnd_clamp);
                    self.phase = Phase::Normal(Exit::Retreated);
                }
            }
            Phase::Normal(_) => {}
        }
    }

    /// Reconnaissance → Unvalidated, or Normal when the path is not confirmed (§3.2, §3.3).
    fn try_jump(&mut self, now: Time, st: &mut CwndState, ack: &AckInfo) {
        let (Some(confirmed), Some(rtt)) = (self.rtt_confirmed(), self.latest_rtt) else {
            return; // no RTT yet: stay until there is one
        };
        if !confirmed {
            self.phase = Phase::Normal(Exit::RttNotValidated);
            return;
        }
        let jump = self.cfg.jump_cwnd().min(st.cwnd_clamp);
        if jump <= st.cwnd || rtt.as_nanos() == 0 {
            self.phase = Phase::Normal(Exit::JumpNotLarger);
            return;
        }
        self.pipe = u64::from(ack.in_flight);
        self.jumped = jump;
        st.cwnd = jump;
        // jump_cwnd · MSS bytes per current RTT (§4.3.2): bytes/s = jump · mss · 1e9 / rtt_ns.
        let bytes = u128::from(jump) * u128::from(st.mss);
        let rate = bytes * 1_000_000_000 / u128::from(rtt.as_nanos());
        self.phase = Phase::Unvalidated {
            entered: now,
            first: ack.snd_nxt,
            rtt,
            rate: u64::try_from(rate).unwrap_or(u64::MAX).max(1),
        };
    }

    /// §3.3 "Check flight_size" with `flight` segments in flight and SND.NXT `snd_nxt`: the
    /// new cwnd, and the next phase.
    fn leave_unvalidated(&mut self, flight: u64, snd_nxt: u64) -> u32 {
        if flight < u64::from(self.iw) || flight <= self.pipe {
            self.phase = Phase::Normal(Exit::RateLimited);
            let c = self.pipe.max(u64::from(self.iw));
            return u32::try_from(c).unwrap_or(u32::MAX);
        }
        self.phase = Phase::Validating { end: snd_nxt };
        u32::try_from(flight).unwrap_or(u32::MAX)
    }

    /// Enter Safe Retreat: cwnd = max(PipeSize / 2, 2), at most the cwnd in force (§3.5).
    fn enter_retreat(&mut self, st: &mut CwndState, snd_nxt: u64) {
        let cwnd = self.retreat_window(st);
        st.cwnd = cwnd;
        self.retreat_cwnd = cwnd;
        self.phase = Phase::SafeRetreat { end: snd_nxt, cwnd };
    }

    fn retreat_window(&self, st: &CwndState) -> u32 {
        let half = u32::try_from(self.pipe / RETREAT_DIVISOR).unwrap_or(u32::MAX);
        half.min(st.cwnd).max(MIN_WINDOW)
    }

    /// A segment left (the host's `on_packet_sent`): in Unvalidated, a flight that reached
    /// cwnd ends the phase (§3.3 "Completed sending all unvalidated packets"). cwnd is
    /// read-only here; a change "check flight_size" asks for is made at the next ACK (the
    /// window is full, so nothing can leave before it).
    pub fn on_packet_sent(&mut self, st: &CwndState, sent: &SentInfo) {
        if let Phase::Unvalidated { .. } = self.phase
            && !sent.is_retrans
            && sent.in_flight >= st.cwnd
        {
            let cwnd = self.leave_unvalidated(u64::from(sent.in_flight), sent.seq + 1);
            if cwnd != st.cwnd {
                self.pending_cwnd = Some(cwnd);
            }
        }
    }

    /// The host's `cong_control`: during Safe Retreat, cwnd is the retreat window and the
    /// host owns it (no PRR, no growth, no `cwnd = ssthresh` at the recovery point; §3.5,
    /// §4.5). Returns whether it owns cwnd.
    #[inline]
    pub fn hold_cwnd(&self, st: &mut CwndState) -> bool {
        if let Phase::SafeRetreat { cwnd, .. } = self.phase {
            st.cwnd = cwnd;
            return true;
        }
        false
    }

    /// Slow-start growth: none in Unvalidated and Safe Retreat (§3.3, Appendix A; §3.5
    /// "Maintaining CWND"), standard otherwise (§3.2, §3.4, §3.7). Returns the leftover.
    pub fn grow(&mut self, st: &mut CwndState, acked: u32) -> u32 {
        match self.phase {
            Phase::Unvalidated { .. } | Phase::SafeRetreat { .. } => 0,
            _ => st.slow_start(acked),
        }
    }

    /// A congestion event (the host's `ssthresh`: loss, ECN-CE, RTO), with the window state
    /// and the ACK it was called with. Returns the ssthresh Careful Resume sets, or `None` for
    /// the host's own: in Reconnaissance the resume ends (§3.2); in Unvalidated or Validating
    /// Safe Retreat begins (§3.3, §3.4) and the answer is the retreat window.
    pub fn on_congestion(&mut self, st: &CwndState, ack: &AckInfo) -> Option<u32> {
        match self.phase {
            Phase::Reconnaissance => {
                self.phase = Phase::Normal(Exit::CongestionInReconnaissance);
                None
            }
            Phase::Unvalidated { .. } | Phase::Validating { .. } => {
                let cwnd = self.retreat_window(st);
                self.retreat_cwnd = cwnd;
                self.phase = Phase::SafeRetreat {
                    end: ack.snd_nxt,
                    cwnd,
                };
                Some(cwnd)
            }
            Phase::SafeRetreat { cwnd, .. } => Some(cwnd),
            Phase::Normal(_) => None,
        }
    }

    /// Retransmission timeout: Careful Resume ends (§3.6); the host's RTO response applies.
    pub fn on_rto(&mut self) {
        if !matches!(self.phase, Phase::Normal(_)) {
            self.phase = Phase::Normal(Exit::PersistentCongestion);
        }
        self.pending_cwnd = None;
    }

    /// The pacing rate of the Unvalidated Phase, bytes/s (§3.3 "Pacing transmission").
    #[must_use]
    pub fn pacing_rate(&self) -> Option<u64> {
        match self.phase {
            Phase::Unvalidated { rate, .. } => Some(rate),
            _ => None,
        }
    }

    /// Whether every segment is to be paced now (the Unvalidated Phase).
    #[must_use]
    pub fn paces_now(&self) -> bool {
        matches!(self.phase, Phase::Unvalidated { .. })
    }

    /// The phase name while `cwnd < ssthresh`.
    #[must_use]
    pub fn state(&self) -> &'static str {
        match self.phase {
            Phase::Unvalidated { .. } => "cr_unvalidated",
            Phase::Validating { .. } => "cr_validating",
            Phase::SafeRetreat { .. } => "cr_safe_retreat",
            Phase::Reconnaissance | Phase::Normal(_) => "slow_start",
        }
    }

    /// Emit `cr_phase` (0 Reconnaissance, 1 Unvalidated, 2 Validating, 3 Safe Retreat,
    /// 4 Normal), `cr_exit` (see [`Exit`], 0 while resuming), `cr_pipesize`, `cr_jump_cwnd`
    /// (0 without a jump), `cr_retreat_cwnd` (0 without a retreat) and `cr_rate` while pacing.
    pub fn stats(&self, sink: StatSink<'_>) {
        let (phase, exit) = match self.phase {
            Phase::Reconnaissance => (0.0, 0.0),
            Phase::Unvalidated { .. } => (1.0, 0.0),
            Phase::Validating { .. } => (2.0, 0.0),
            Phase::SafeRetreat { .. } => (3.0, 0.0),
            Phase::Normal(e) => (4.0, e.code()),
        };
        sink("cr_phase", phase);
        sink("cr_exit", exit);
        sink("cr_pipesize", crate::num::u64_to_f64(self.pipe));
        sink("cr_jump_cwnd", f64::from(self.jumped));
        sink("cr_retreat_cwnd", f64::from(self.retreat_cwnd));
        if let Some(r) = self.pacing_rate() {
            sink("cr_rate", crate::num::u64_to_f64(r));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::Pipe;
    use crate::{CongestionControl, NewReno, SlowStart, SlowStartKind};

    const MSS: u32 = 1448;
    const RTT: Dur = Dur::from_millis(50);

    /// The draft's examples (Appendix B): IW 10, saved_cwnd 300, so jump_cwnd 150.
    fn example() -> CarefulResumeConfig {
        CarefulResumeConfig::saved(300, RTT)
    }

    /// An ACK with SND.UNA `una`, SND.NXT `nxt`, `flight` in flight, `acked` newly delivered,
    /// an RTT sample `rtt`, cwnd-limited, state Open.
    fn ack(una: u64, nxt: u64, flight: u32, acked: u32, rtt: Dur) -> AckInfo {
        AckInfo {
            acked_sacked: acked,
            pkts_acked: acked,
            rtt: Some(rtt),
            in_flight: flight,
            is_cwnd_limited: true,
            snd_una: una,
            snd_nxt: nxt,
            ca_state: Some(CaState::Open),
            ..AckInfo::default()
        }
    }

    /// Started with IW 10 and handshake RTT `hs`.
    fn started(cfg: CarefulResumeConfig, hs: Option<Dur>) -> (CarefulResume, CwndState) {
        let mut cr = CarefulResume::new(cfg);
        let st = CwndState::new(10, MSS);
        cr.on_connection_start(
            &st,
            &ConnStart {
                first_rtt: hs,
                ..ConnStart::default()
            },
        );
        (cr, st)
    }

    /// The Appendix B start: the IW acknowledged with 29 segments in flight (cwnd 29 after
    /// slow start) at t = 1 s: Unvalidated with PipeSize = 29 and cwnd = 150.
    fn jumped() -> (CarefulResume, CwndState) {
        let (mut cr, mut st) = started(example(), Some(RTT));
        st.cwnd = 29;
        cr.on_ack(
            Time::ZERO + Dur::from_secs(1),
            &mut st,
            &ack(10, 39, 29, 1, RTT),
        );
        (cr, st)
    }

    /// §3.3 and §4.3.2: jump_cwnd = min(max_jump, saved_cwnd/2); PipeSize = flight_size at
    /// entry; cwnd = jump_cwnd; paced at jump_cwnd·MSS per current RTT, i.e. one segment every
    /// RTT/jump_cwnd (ITT = current RTT · MPS / jump_cwnd).
    #[test]
    fn the_jump_is_half_the_saved_window_paced_over_the_current_rtt() {
        let (cr, st) = jumped();
        assert_eq!(st.cwnd, 150);
        assert_eq!(cr.pipe_size(), 29);
        assert!(cr.paces_now());
        // 150 · 1448 B / 0.05 s = 4 344 000 B/s: ITT = 1448 / 4 344 000 s = 50 ms / 150.
        assert_eq!(cr.pacing_rate(), Some(4_344_000));
        let mut capped = example();
        capped.max_jump = Some(100);
        assert_eq!(capped.jump_cwnd(), 100);
        capped.max_jump = Some(200);
        assert_eq!(capped.jump_cwnd(), 150);
        // The jump uses the current RTT, not saved_rtt (§4.3.2): 80 ms here.
        let (mut cr, mut st) = started(example(), None);
        st.cwnd = 20;
        let slow = Dur::from_millis(80);
        cr.on_ack(
            Time::ZERO + Dur::from_secs(1),
            &mut st,
            &ack(10, 30, 20, 2, slow),
        );
        assert_eq!(cr.pacing_rate(), Some(150 * 1448 * 1000 / 80));
    }

    /// §3.2 and §4.2.1: the path is confirmed only if the minimum RTT of Reconnaissance (the
    /// handshake's sample included) is more than saved_rtt/2 and the current RTT at most
    /// 10·saved_rtt; otherwise Careful Resume ends and cwnd is untouched (§3.2 Note). Checked
    /// at the boundaries, to the nanosecond.
    #[test]
    fn the_rtt_confirms_the_path_only_between_half_and_ten_times_saved_rtt() {
        let half = Dur::from_nanos(RTT.as_nanos() / 2);
        let ten = Dur::from_nanos(RTT.as_nanos() * 10);
        let one_ns = Dur::from_nanos(1);
        for (hs, sample, jumps) in [
            (Some(half), RTT, false),
            (Some(half + one_ns), RTT, true),
            (None, half, false),
            (None, ten, true),
            (None, ten + one_ns, false),
            (Some(RTT), ten + one_ns, false),
        ] {
            let (mut cr, mut st) = started(example(), hs);
            st.cwnd = 20;
            cr.on_ack(
                Time::ZERO + Dur::from_secs(1),
                &mut st,
                &ack(10, 30, 20, 2, sample),
            );
            assert_eq!(cr.paces_now(), jumps, "handshake {hs:?}, sample {sample:?}");
            if jumps {
                assert_eq!(st.cwnd, 150);
            } else {
                assert_eq!(st.cwnd, 20, "cwnd untouched");
                assert_eq!(cr.phase(), Phase::Normal(Exit::RttNotValidated));
            }
        }
    }

    /// §3.2: the jump waits until all the initial data (the IW) is acknowledged, and (the
    /// deferral a rate-limited sender may use) until the sender is cwnd-limited; a jump that
    /// would not raise cwnd, or no saved parameters, ends Careful Resume with standard slow
    /// start.
    #[test]
    fn reconnaissance_waits_for_the_initial_window_and_a_full_window() {
        let (mut cr, mut st) = started(example(), Some(RTT));
        cr.on_ack(Time::ZERO, &mut st, &ack(9, 18, 9, 2, RTT));
        assert_eq!(cr.phase(), Phase::Reconnaissance);
        let mut limited = ack(10, 20, 10, 1, RTT);
        limited.is_cwnd_limited = false;
        cr.on_ack(Time::ZERO, &mut st, &limited);
        assert_eq!(cr.phase(), Phase::Reconnaissance);
        cr.on_ack(Time::ZERO, &mut st, &ack(11, 21, 10, 1, RTT));
        assert!(cr.paces_now());

        let (mut cr, mut st) = started(example(), Some(RTT));
        st.cwnd = 150;
        cr.on_ack(Time::ZERO, &mut st, &ack(10, 160, 150, 1, RTT));
        assert_eq!(cr.phase(), Phase::Normal(Exit::JumpNotLarger));
        assert_eq!(st.cwnd, 150);

        let (cr, _) = started(CarefulResumeConfig::NONE, Some(RTT));
        assert_eq!(cr.phase(), Phase::Normal(Exit::NoSavedState));
    }

    /// §3.3: the Unvalidated Phase ends on the ACK of the first unvalidated segment, on a
    /// flight that reaches cwnd, or after more than one RTT; "check flight_size" then sets
    /// cwnd = flight_size and validates, or (flight_size ≤ PipeSize or < IW) cwnd =
    /// max(PipeSize, IW) and ends Careful Resume. cwnd does not grow meanwhile.
    #[test]
    fn unvalidated_ends_three_ways_and_checks_the_flight_size() {
        let t0 = Time::ZERO + Dur::from_secs(1);
        // (a) Appendix B.1: the first unvalidated segment (39) acknowledged with 150 in flight.
        let (mut cr, mut st) = jumped();
        assert_eq!(cr.grow(&mut st, 2), 0);
        assert_eq!(st.cwnd, 150);
        cr.on_ack(
            t0 + Dur::from_millis(25),
            &mut st,
            &ack(39, 170, 140, 1, RTT),
        );
        assert!(matches!(cr.phase(), Phase::Unvalidated { first: 39, .. }));
        cr.on_ack(t0 + RTT, &mut st, &ack(40, 179, 139, 1, RTT));
        assert_eq!(cr.phase(), Phase::Validating { end: 179 });
        assert_eq!(st.cwnd, 139);
        assert_eq!(cr.pipe_size(), 29 + 2);
        // Validating: slow start, PipeSize grows; the ACK of the last unvalidated ends it.
        assert_eq!(cr.grow(&mut st, 2), 0);
        assert_eq!(st.cwnd, 141);
        cr.on_ack(
            t0 + Dur::from_millis(100),
            &mut st,
            &ack(179, 320, 141, 139, RTT),
        );
        assert_eq!(cr.phase(), Phase::Normal(Exit::Validated));
        assert_eq!(cr.pipe_size(), 29 + 2 + 139);

        // (b) A full flight: the segment that fills cwnd ends the phase.
        let (mut cr, st) = jumped();
        let sent = |seq, in_flight| SentInfo {
            seq,
            bytes: MSS,
            in_flight,
            ..SentInfo::default()
        };
        cr.on_packet_sent(&st, &sent(100, 149));
        assert!(cr.paces_now());
        cr.on_packet_sent(&st, &sent(101, 150));
        assert_eq!(cr.phase(), Phase::Validating { end: 102 });

        // (c) Appendix B.2: rate-limited, more than one RTT passes with 50 in flight: cwnd = 50.
        let (mut cr, mut st) = jumped();
        cr.on_ack(t0 + RTT, &mut st, &ack(20, 70, 50, 1, RTT));
        assert!(cr.paces_now(), "exactly one RTT is not more than one");
        cr.on_ack(
            t0 + RTT + Dur::from_nanos(1),
            &mut st,
            &ack(21, 71, 50, 1, RTT),
        );
        assert_eq!(cr.phase(), Phase::Validating { end: 71 });
        assert_eq!(st.cwnd, 50);
        // Flight at or below PipeSize: cwnd = PipeSize, Careful Resume ends.
        let (mut cr, mut st) = jumped();
        cr.on_ack(
            t0 + Dur::from_millis(100),
            &mut st,
            &ack(30, 40, 10, 20, RTT),
        );
        assert_eq!(cr.phase(), Phase::Normal(Exit::RateLimited));
        assert_eq!(st.cwnd, 49);
    }

    /// §3.5 with Appendix B.4's numbers: 34 of the unvalidated segments acknowledged (PipeSize
    /// 29 + 34 = 63), then a loss: cwnd = ⌊63/2⌋ = 31 (the example's Max(10, 63/2)), which
    /// is also the ssthresh the host answers; cwnd does not grow in Safe Retreat; once the
    /// remaining 86 segments are acknowledged and recovery is over, ssthresh = ⌊PipeSize·β⌋
    /// (β = 0.5: ⌊149/2⌋ = 74; β = 0.7: ⌊149·0.7⌋ = 104).
    #[test]
    fn safe_retreat_halves_the_pipesize_and_leaves_with_beta_pipesize() {
        for (beta, want) in [(500, 74), (700, 104)] {
            let (mut cr, mut st) = started(
                CarefulResumeConfig {
                    beta_permille: beta,
                    ..example()
                },
                Some(RTT),
            );
            st.cwnd = 29;
            let t0 = Time::ZERO + Dur::from_secs(1);
            cr.on_ack(t0, &mut st, &ack(10, 39, 29, 1, RTT));
            cr.on_ack(
                t0 + Dur::from_millis(25),
                &mut st,
                &ack(38, 160, 150, 34, RTT),
            );
            assert_eq!(cr.pipe_size(), 63);
            let loss = ack(38, 170, 150, 0, RTT);
            assert_eq!(cr.on_congestion(&st, &loss), Some(31));
            assert!(cr.hold_cwnd(&mut st));
            assert_eq!(st.cwnd, 31);
            assert!(!cr.paces_now());
            assert_eq!(cr.grow(&mut st, 5), 0);
            assert_eq!(st.cwnd, 31);
            let mut in_recovery = ack(169, 172, 31, 86, RTT);
            in_recovery.ca_state = Some(CaState::Recovery);
            cr.on_ack(t0 + RTT, &mut st, &in_recovery);
            assert!(matches!(cr.phase(), Phase::SafeRetreat { end: 170, .. }));
            cr.on_ack(
                t0 + Dur::from_millis(100),
                &mut st,
                &ack(172, 180, 8, 0, RTT),
            );
            assert_eq!(cr.phase(), Phase::Normal(Exit::Retreated));
            assert_eq!(st.ssthresh, want, "β {beta}");
            assert!(!cr.hold_cwnd(&mut st));
        }
    }

    /// §3.2: congestion in Reconnaissance ends Careful Resume and the host reacts as usual;
    /// §3.6: a timeout ends it in any phase; §3.3: a current RTT above 10·saved_rtt in the
    /// Unvalidated Phase is a path change and begins Safe Retreat.
    #[test]
    fn congestion_in_reconnaissance_a_timeout_or_a_path_change() {
        let (mut cr, st) = started(example(), Some(RTT));
        assert_eq!(cr.on_congestion(&st, &ack(3, 10, 7, 0, RTT)), None);
        assert_eq!(cr.phase(), Phase::Normal(Exit::CongestionInReconnaissance));
        let (mut cr, _) = jumped();
        cr.on_rto();
        assert_eq!(cr.phase(), Phase::Normal(Exit::PersistentCongestion));
        let (mut cr, mut st) = jumped();
        let far = Dur::from_nanos(RTT.as_nanos() * 10 + 1);
        cr.on_ack(
            Time::ZERO + Dur::from_secs(1),
            &mut st,
            &ack(12, 100, 88, 2, far),
        );
        assert!(matches!(cr.phase(), Phase::SafeRetreat { cwnd: 15, .. }));
        assert_eq!(st.cwnd, 15, "⌊(29 + 2)/2⌋");
    }

    /// Through the transport kit with NewReno: after a loss in the Validating Phase the
    /// window is PipeSize/2 on every ACK of the retreat (the kit runs neither PRR nor
    /// `cwnd = ssthresh`), and once the unvalidated data is acknowledged, ssthresh =
    /// PipeSize/2 (β = 0.5) and slow start resumes from the retreat window.
    #[test]
    fn the_host_holds_the_retreat_window_through_recovery() {
        let mut p = Pipe::new(
            NewReno::new(SlowStartKind::CarefulResume(CarefulResumeConfig::saved(
                400, RTT,
            ))),
            CwndState::new(10, MSS),
        );
        p.cc.on_connection_start(
            Time::ZERO,
            &mut p.st,
            &ConnStart {
                first_rtt: Some(RTT),
                ..ConnStart::default()
            },
        );
        p.prime(Dur::ZERO);
        let rtt = |_| RTT;
        while p.una < 10 {
            p.step(&rtt);
        }
        assert_eq!(
            p.st.cwnd, 200,
            "jump_cwnd = 400/2 once the IW is acknowledged"
        );
        // The pipe sends the whole jump at once (it does not pace), so the flight reaches cwnd
        // at the jump and the sender validates (§3.3); congestion now retreats too (§3.4).
        assert_eq!(p.cc.state(), "cr_validating");
        for _ in 0..6 {
            p.step(&rtt);
        }
        let SlowStart::CarefulResume(cr) = p.cc.slow_start() else {
            panic!("Careful Resume")
        };
        let pipe = cr.pipe_size();
        p.loss();
        p.step(&rtt);
        let SlowStart::CarefulResume(cr) = p.cc.slow_start() else {
            panic!("Careful Resume")
        };
        let half = u32::try_from(pipe / 2).unwrap();
        assert_eq!(p.st.cwnd, half, "cwnd = ⌊PipeSize/2⌋, PipeSize {pipe}");
        let retreat = p.st.cwnd;
        assert_eq!(p.st.ssthresh, retreat);
        let end = match cr.phase() {
            Phase::SafeRetreat { end, .. } => end,
            other => panic!("{other:?}"),
        };
        while p.una < end {
            p.step(&rtt);
            if p.una < end {
                assert_eq!(p.st.cwnd, retreat, "held at {}", p.una);
            }
        }
        let SlowStart::CarefulResume(cr) = p.cc.slow_start() else {
            panic!("Careful Resume")
        };
        assert_eq!(cr.phase(), Phase::Normal(Exit::Retreated));
        let pipe = u32::try_from(cr.pipe_size()).unwrap();
        assert_eq!(p.st.ssthresh, pipe / 2);
        assert!(p.st.cwnd < p.st.ssthresh);
        let before = p.st.cwnd;
        p.step(&rtt);
        assert_eq!(p.st.cwnd, before + 1, "slow start towards ssthresh");
    }
}
