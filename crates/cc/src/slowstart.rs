//! Pluggable slow start for the loss-based controllers (Reno, NewReno, CUBIC).
//!
//! Contract: a host controller owns one [`SlowStart`] and calls it at three points:
//! - [`SlowStart::on_ack`] from `pkts_acked`, on every ACK, with the RTT sample the host accepts
//!   and the host's `delay_min`; detectors may set `ssthresh = cwnd` here (never touch `cwnd`);
//! - [`SlowStart::grow`] from `cong_avoid` while `cwnd < ssthresh`, instead of
//!   `CwndState::slow_start`; it returns the segments left over for congestion avoidance;
//! - [`SlowStart::on_congestion`] from `ssthresh` (loss, ECN, RTO) and
//!   [`SlowStart::on_rto`] from `set_state(Loss)`.
//!
//! Variants ([`SlowStartKind`]):
//! - `standard`: RFC 5681 §3.1 slow start (Linux `tcp_slow_start`); leaves at ssthresh or loss.
//! - `hystart`: Linux HyStart ([`HyStart`]). In Linux it is part of CUBIC only; here it may also
//!   be plugged into Reno/NewReno (the host then tracks `delay_min` as the minimum RTT sample
//!   since start or the last RTO, like CUBIC). Growth is standard slow start; HyStart re-arms
//!   after an RTO as in CUBIC (`bictcp_state`).
//! - `hystart++`: RFC 9406 ([`HyStartPlusPlus`]), initial slow start only, with the CSS phase.
//! - `jumpstart`: Jump Start ([`JumpStart`], Liu et al. 2007): no slow start; the first window
//!   is the transfer up to the receive window, paced over the first RTT. It needs the host to
//!   forward [`SlowStart::on_connection_start`], [`SlowStart::pacing_rate`] and
//!   [`SlowStart::paces_now`].
//! - `suss`: SUSS ([`Suss`], SIGCOMM 2024): Linux HyStart whose early rounds grow ×4 when the
//!   ACK train predicts room, the extra segments paced (same forwarding as Jump Start).
//! - `careful_resume`: Careful Resume ([`CarefulResume`], RFC 9959): standard slow start until
//!   the initial window is acknowledged, then a paced jump to half a saved window, validated or
//!   retreated from. Besides Jump Start's forwarding it needs the host to forward
//!   [`SlowStart::on_packet_sent`] (with [`SlowStart::wants_packet_sent`]) and to answer
//!   `cong_control` with [`SlowStart::hold_cwnd`], and it may set the host's ssthresh
//!   ([`SlowStart::on_congestion`] returns it).
//! - `chirping`: Paced Chirping ([`Chirping`], Misund and Briscoe 2019): chirps of paced
//!   packets estimate the capacity from their queueing delay; it owns cwnd until it hands over
//!   to congestion avoidance. Besides Jump Start's forwarding it needs
//!   [`SlowStart::on_packet_sent`] (the gap after each segment, with
//!   [`SlowStart::sets_gap_per_segment`]) and [`SlowStart::tso_segs`].

use crate::careful_resume::CarefulResume;
use crate::chirping::Chirping;
use crate::hystart::HyStart;
use crate::hystart_pp::HyStartPlusPlus;
use crate::jumpstart::JumpStart;
use crate::suss::Suss;
use crate::{AckInfo, ConnStart, CwndState, Dur, SentInfo, SlowStartKind, StatSink, Time};

/// The controller hooks a host of a pluggable [`SlowStart`] (Reno, NewReno, CUBIC) forwards to
/// it, written once: inside the host's `impl CongestionControl`, with fields `slow_start` and
/// `in_slow_start`. Jump Start sizes the first flight (`on_connection_start`), the pacing
/// startups set the rate (`pacing_rate`, `paces_now`, `may_pace_itself`), Careful Resume and
/// Paced Chirping watch every segment (`on_packet_sent`), Paced Chirping sets the gap after each
/// one and its TSO size, and Careful Resume's Safe Retreat holds cwnd (`cong_control`).
macro_rules! forward_slow_start_hooks {
    () => {
        fn on_connection_start(
            &mut self,
            _now: $crate::Time,
            st: &mut $crate::CwndState,
            info: &$crate::ConnStart,
        ) {
            self.slow_start.on_connection_start(st, info);
            self.in_slow_start = st.in_slow_start();
        }

        fn pacing_rate(&self) -> Option<u64> {
            self.slow_start.pacing_rate()
        }

        fn paces_now(&self) -> bool {
            self.slow_start.paces_now()
        }

        fn may_pace_itself(&self) -> bool {
            self.slow_start.may_pace()
        }

        fn wants_packet_sent(&self) -> bool {
            self.slow_start.wants_packet_sent()
        }

        fn on_packet_sent(
            &mut self,
            _now: $crate::Time,
            st: &$crate::CwndState,
            sent: &$crate::SentInfo,
        ) {
            self.slow_start.on_packet_sent(st, sent);
        }

        fn sets_gap_per_segment(&self) -> bool {
            self.slow_start.sets_gap_per_segment()
        }

        fn tso_segs(&self, _st: &$crate::CwndState) -> Option<u32> {
            self.slow_start.tso_segs()
        }

        fn cong_control(
            &mut self,
            _now: $crate::Time,
            st: &mut $crate::CwndState,
            _rs: &$crate::RateSample,
            _ack: &$crate::AckInfo,
        ) -> bool {
            self.slow_start.hold_cwnd(st)
        }
    };
}
pub(crate) use forward_slow_start_hooks;

/// The slow-start algorithm of one connection.
#[derive(Clone, Debug)]
pub enum SlowStart {
    /// RFC 5681 slow start.
    Standard,
    /// Linux HyStart (`tcp_cubic.c`).
    HyStart(HyStart),
    /// HyStart++ (RFC 9406).
    HyStartPlusPlus(HyStartPlusPlus),
    /// Jump Start (Liu et al. 2007).
    JumpStart(JumpStart),
    /// SUSS (Arghavani et al. 2024).
    Suss(Suss),
    /// Careful Resume (RFC 9959).
    CarefulResume(CarefulResume),
    /// Paced Chirping (Misund and Briscoe 2019).
    Chirping(Chirping),
}

impl SlowStart {
    /// A fresh slow start of the given kind.
    #[must_use]
    pub fn new(kind: SlowStartKind) -> Self {
        match kind {
            SlowStartKind::Standard => SlowStart::Standard,
            SlowStartKind::HyStart => SlowStart::HyStart(HyStart::new()),
            SlowStartKind::HyStartPlusPlus => SlowStart::HyStartPlusPlus(HyStartPlusPlus::new()),
            SlowStartKind::JumpStart { fallback_rtt } => {
                SlowStart::JumpStart(JumpStart::new(fallback_rtt))
            }
            SlowStartKind::Suss => SlowStart::Suss(Suss::new()),
            SlowStartKind::CarefulResume(cfg) => SlowStart::CarefulResume(CarefulResume::new(cfg)),
            SlowStartKind::Chirping(cfg) => SlowStart::Chirping(Chirping::new(cfg)),
        }
    }

    /// Which kind this is.
    #[must_use]
    pub fn kind(&self) -> SlowStartKind {
        match self {
            SlowStart::Standard => SlowStartKind::Standard,
            SlowStart::HyStart(_) => SlowStartKind::HyStart,
            SlowStart::HyStartPlusPlus(_) => SlowStartKind::HyStartPlusPlus,
            SlowStart::JumpStart(j) => SlowStartKind::JumpStart {
                fallback_rtt: j.fallback_rtt(),
            },
            SlowStart::Suss(_) => SlowStartKind::Suss,
            SlowStart::CarefulResume(c) => SlowStartKind::CarefulResume(c.config()),
            SlowStart::Chirping(c) => SlowStartKind::Chirping(c.config()),
        }
    }

    /// The connection starts sending (the host's `on_connection_start`): Jump Start sizes
    /// and paces its first flight, Careful Resume notes the IW and the handshake RTT, Paced
    /// Chirping schedules its first round; the others do nothing.
    pub fn on_connection_start(&mut self, st: &mut CwndState, info: &ConnStart) {
        match self {
            SlowStart::JumpStart(j) => j.on_connection_start(st, info),
            SlowStart::CarefulResume(c) => c.on_connection_start(st, info),
            SlowStart::Chirping(c) => c.on_connection_start(st, info),
            _ => {}
        }
    }

    /// Whether the algorithm wants every sent segment (Careful Resume and Paced Chirping do);
    /// fixed for its lifetime, the host's `wants_packet_sent`.
    #[must_use]
    pub fn wants_packet_sent(&self) -> bool {
        matches!(self, SlowStart::CarefulResume(_) | SlowStart::Chirping(_))
    }

    /// Whether the algorithm sets the pacing gap after each segment (Paced Chirping); fixed
    /// for its lifetime, the host's `sets_gap_per_segment`.
    #[must_use]
    pub fn sets_gap_per_segment(&self) -> bool {
        matches!(self, SlowStart::Chirping(_))
    }

    /// A segment left (the host's `on_packet_sent`): Careful Resume watches the flight, Paced
    /// Chirping sets the gap after it.
    pub fn on_packet_sent(&mut self, st: &CwndState, sent: &SentInfo) {
        match self {
            SlowStart::CarefulResume(c) => c.on_packet_sent(st, sent),
            SlowStart::Chirping(c) => c.on_packet_sent(sent.seq, sent.bytes, sent.is_retrans),
            _ => {}
        }
    }

    /// Segments per skb the algorithm wants now (Paced Chirping: 1 while it chirps).
    #[must_use]
    pub fn tso_segs(&self) -> Option<u32> {
        match self {
            SlowStart::Chirping(c) => c.tso_segs(),
            _ => None,
        }
    }

    /// The host's `cong_control`: whether the startup algorithm sets cwnd itself on this ACK
    /// (Careful Resume's Safe Retreat); then it has set it.
    #[inline]
    pub fn hold_cwnd(&self, st: &mut CwndState) -> bool {
        match self {
            SlowStart::CarefulResume(c) => c.hold_cwnd(st),
            _ => false,
        }
    }

    /// The pacing rate the startup algorithm wants now, bytes/s (Jump Start's first round).
    #[must_use]
    pub fn pacing_rate(&self) -> Option<u64> {
        match self {
            SlowStart::JumpStart(j) => j.pacing_rate(),
            SlowStart::Suss(s) => s.pacing_rate(),
            SlowStart::CarefulResume(c) => c.pacing_rate(),
            SlowStart::Chirping(c) => c.pacing_rate(),
            _ => None,
        }
    }

    /// Whether the algorithm ever asks for pacing (Jump Start, SUSS, Careful Resume and Paced
    /// Chirping do).
    #[must_use]
    pub fn may_pace(&self) -> bool {
        matches!(
            self,
            SlowStart::JumpStart(_)
                | SlowStart::Suss(_)
                | SlowStart::CarefulResume(_)
                | SlowStart::Chirping(_)
        )
    }

    /// Whether the startup algorithm asks for pacing now (Jump Start's first flight).
    #[must_use]
    pub fn paces_now(&self) -> bool {
        match self {
            SlowStart::JumpStart(j) => j.in_jump(),
            SlowStart::Suss(s) => s.paces_now(),
            SlowStart::CarefulResume(c) => c.paces_now(),
            SlowStart::Chirping(c) => c.paces_now(),
            _ => false,
        }
    }

    /// Use `rules` for Linux HyStart (ns-3's `TcpCubic` rules, [`crate::hystart::HyStartRules`]);
    /// other variants are unchanged.
    pub fn set_hystart_rules(&mut self, rules: crate::hystart::HyStartRules) {
        if let SlowStart::HyStart(h) = self {
            h.rules = rules;
        }
    }

    /// Per-ACK detection. `rtt` is the sample the host accepted (CUBIC filters some),
    /// `delay_min` the host's minimum RTT including `rtt`. Always inlined into the host's
    /// `pkts_acked`: a call per ACK costs more than most arms' work.
    #[inline(always)]
    pub fn on_ack(
        &mut self,
        now: Time,
        st: &mut CwndState,
        ack: &AckInfo,
        rtt: Option<Dur>,
        delay_min: Option<Dur>,
    ) {
        match self {
            SlowStart::Standard => {}
            SlowStart::HyStart(h) => {
                // Linux calls `hystart_update` only with a valid RTT sample.
                if let (Some(d), Some(m)) = (rtt, delay_min) {
                    h.on_ack(now, st, ack, d, m);
                }
            }
            SlowStart::HyStartPlusPlus(h) => h.on_ack(now, st, ack, rtt),
            SlowStart::JumpStart(j) => j.on_ack(ack),
            SlowStart::Suss(s) => s.on_ack(now, st, ack, rtt, delay_min),
            SlowStart::CarefulResume(c) => c.on_ack(now, st, ack),
            SlowStart::Chirping(c) => c.on_ack(st, ack, delay_min),
        }
    }

    /// Slow-start growth while `cwnd < ssthresh`; returns the leftover segments.
    pub fn grow(&mut self, st: &mut CwndState, acked: u32, ack: &AckInfo) -> u32 {
        match self {
            SlowStart::Standard | SlowStart::HyStart(_) | SlowStart::JumpStart(_) => {
                st.slow_start(acked)
            }
            SlowStart::Suss(s) => s.grow(st, acked),
            SlowStart::CarefulResume(c) => c.grow(st, acked),
            SlowStart::Chirping(c) => c.grow(st, acked),
            SlowStart::HyStartPlusPlus(h) => h.grow(st, acked, ack),
        }
    }

    /// A congestion event (the host's `ssthresh` was called with `st` and `ack`). Returns the
    /// ssthresh the startup algorithm sets instead of the host's (Careful Resume's Safe
    /// Retreat), or `None`.
    pub fn on_congestion(&mut self, st: &CwndState, ack: &AckInfo) -> Option<u32> {
        match self {
            SlowStart::HyStartPlusPlus(h) => h.on_congestion(),
            SlowStart::JumpStart(j) => j.on_congestion(),
            SlowStart::Suss(s) => s.on_congestion(),
            SlowStart::CarefulResume(c) => return c.on_congestion(st, ack),
            SlowStart::Chirping(c) => c.on_congestion(),
            SlowStart::Standard | SlowStart::HyStart(_) => {}
        }
        None
    }

    /// Retransmission timeout (`set_state(Loss)`): Linux HyStart re-arms (`bictcp_state`);
    /// HyStart++ stays done (RFC 9406 §4.3, initial slow start only).
    pub fn on_rto(&mut self) {
        match self {
            SlowStart::Standard => {}
            SlowStart::HyStart(h) => h.restart(),
            SlowStart::HyStartPlusPlus(h) => h.on_congestion(),
            SlowStart::JumpStart(j) => j.on_congestion(),
            SlowStart::Suss(s) => s.on_rto(),
            SlowStart::CarefulResume(c) => c.on_rto(),
            SlowStart::Chirping(c) => c.on_congestion(),
        }
    }

    /// True while HyStart++ is in Conservative Slow Start.
    #[must_use]
    pub fn in_css(&self) -> bool {
        matches!(self, SlowStart::HyStartPlusPlus(h) if h.in_css())
    }

    /// The phase name while `cwnd < ssthresh`: `"css"`, Careful Resume's `"cr_unvalidated"`,
    /// `"cr_validating"`, `"cr_safe_retreat"`, `"chirping"` (Paced Chirping owns the window) or
    /// `"slow_start"`.
    #[must_use]
    pub fn state(&self) -> &'static str {
        match self {
            SlowStart::CarefulResume(c) => c.state(),
            SlowStart::Chirping(c) if c.is_active() => "chirping",
            _ if self.in_css() => "css",
            _ => "slow_start",
        }
    }

    /// Emit the detector's internals.
    pub fn stats(&self, sink: StatSink<'_>) {
        match self {
            SlowStart::Standard => {}
            SlowStart::HyStart(h) => h.stats(sink),
            SlowStart::HyStartPlusPlus(h) => h.stats(sink),
            SlowStart::JumpStart(j) => j.stats(sink),
            SlowStart::Suss(s) => s.stats(sink),
            SlowStart::CarefulResume(c) => c.stats(sink),
            SlowStart::Chirping(c) => c.stats(sink),
        }
    }
}
