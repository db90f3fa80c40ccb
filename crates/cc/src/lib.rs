//! cclab-cc: sans-IO congestion controllers.
//!
//! Contract: every controller implements [`CongestionControl`], a sans-IO rendering of Linux's
//! `struct tcp_congestion_ops` (include/net/tcp.h). The transport (the simulator's TCP sender, or a
//! QUIC stack through an adapter) owns the window state [`CwndState`] and calls the hooks at the
//! same points as Linux does; every hook receives `now`, no hook reads a clock, a global or does
//! I/O. Windows are counted in **segments** (MSS-sized packets), as Linux counts `snd_cwnd`;
//! multiply by [`CwndState::mss`] for bytes.
//!
//! Two styles of controller are supported, exactly as in Linux:
//! - *Loss-based* controllers (Reno, CUBIC, …) implement [`CongestionControl::cong_avoid`] and
//!   [`CongestionControl::ssthresh`]. The transport calls `cong_avoid` on ACKs outside loss
//!   recovery; during recovery it runs Proportional Rate Reduction (RFC 6937) towards the
//!   `ssthresh` the controller returned at recovery entry, and sets `cwnd = ssthresh` at exit.
//! - *Model-based* controllers (BBR) implement [`CongestionControl::cong_control`], return `true`
//!   from it, and then own `cwnd` completely (Linux `cong_control` hook, `tcp_cong_control()`).
//!
//! Outputs the transport reads after every call: `CwndState::cwnd`, `ssthresh`,
//! [`CongestionControl::pacing_rate`], [`CongestionControl::tso_segs`] and
//! [`CongestionControl::pacing_shift`].
//!
//! Controllers are `Send + Sync` plain data (no interior mutability) and clonable as trait
//! objects ([`CloneController::clone_box`]); [`CongestionControl::on_packet_sent`] reports every
//! transmitted segment. The transport side of the contract — delivery-rate sampling (Linux
//! `tcp_rate.c`) and the congestion state machine (Open/Disorder/CWR/Recovery/Loss, PRR, the
//! order of the hooks) — is the transport kit in [`kit`], shared by every transport and by the
//! controller tests, so that a controller sees the same calls everywhere.
//!
//! Controllers (built by name through [`CcSpec::build`]): [`Reno`] and [`NewReno`] (`reno.rs`),
//! [`Cubic`] (`cubic.rs`, Linux `tcp_cubic.c` integer arithmetic). Their slow start is pluggable
//! ([`SlowStart`], `slowstart.rs`): standard, Linux HyStart (`hystart.rs`) or HyStart++
//! (`hystart_pp.rs`, RFC 9406), SUSS (`suss.rs`, SIGCOMM 2024: HyStart with ×4 rounds), or
//! replaced by Jump Start (`jumpstart.rs`, Liu et al. 2007), Careful Resume
//! (`careful_resume.rs`, RFC 9959: a validated jump to half a saved window) or Paced Chirping
//! (`chirping.rs`, Misund and Briscoe 2019).
//! [`Vegas`] (`vegas.rs`, Linux `tcp_vegas.c`): delay-based growth
//! on Reno's loss response. [`Prague`] (`prague.rs`, L4STeam `tcp_prague.c` v0.6): the L4S
//! scalable controller, which requires [`EcnMode::L4s`], answers CE marks itself
//! ([`CongestionControl::handles_ce`]) and owns cwnd through `cong_control`. BBRv1 and BBRv3 are
//! in `bbr/`. [`Cuback`] (`cuback.rs`): CUBIC driven by acknowledged segments instead of time,
//! with quicly's conventions (β 0.7 on loss, 0.85 on ECN-CE, halving at the first loss out of
//! slow start); [`Abba`] (`abba.rs`): ABBA's extra growth on CUBIC or Cuback (parameter
//! `abba` of both). [`Quicly`] (`quicly.rs`): quicly's own Reno and CUBIC (`quicly_reno`,
//! `quicly_cubic`: byte windows, β 0.7, halving out of slow start, time-based float CUBIC).

#![warn(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss
)]

pub mod time;

pub mod abba;
pub mod bbr;
pub mod careful_resume;
pub mod chirping;
pub mod cuback;
pub mod cubic;
mod factory;
pub mod hystart;
pub mod hystart_pp;
pub mod jumpstart;
pub mod kit;
pub mod num;

#[cfg(test)]
mod driver;
pub mod prague;
pub mod quicly;
pub mod reno;
pub mod slowstart;
pub mod suss;
pub mod vegas;

pub use abba::{Abba, AbbaPolicy};
pub use bbr::{Bbr1, Bbr1Config, Bbr3, Bbr3Config, EcnResponse, Robust, Tas};
pub use careful_resume::{CarefulResume, CarefulResumeConfig};
pub use chirping::{Chirping, ChirpingConfig};
pub use cuback::{Cuback, CubackConfig};
pub use cubic::{Cubic, CubicConfig, RttSource};
pub use factory::{
    CONTROLLER_ALIASES, CONTROLLERS, CcSpec, SLOW_STARTS, SlowStartKind, canonical_controller,
};
pub use hystart::{HyStart, HyStartRules};
pub use hystart_pp::HyStartPlusPlus;
pub use jumpstart::JumpStart;
pub use prague::{Prague, PragueConfig};
pub use quicly::{CubicEngine, Quicly, QuiclyConfig, QuiclyKind};
pub use reno::{ByteWindow, NewReno, Reno, RenoFamily, RenoRules};
pub use slowstart::SlowStart;
pub use suss::Suss;
pub use vegas::{Vegas, VegasConfig};

pub use time::{Dur, Time};

/// Default TSQ pacing shift: 2^-10 s ≈ 1 ms of data at the pacing rate (Linux `sock_init_data`,
/// net/core/sock.c: `sk->sk_pacing_shift = 10`).
pub const DEFAULT_PACING_SHIFT: u8 = 10;

/// "Infinite" slow-start threshold, Linux `TCP_INFINITE_SSTHRESH` (include/net/tcp.h).
pub const INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

/// The transport-owned window state handed to the controller (Linux: fields of `tcp_sock`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CwndState {
    /// Congestion window in segments (`snd_cwnd`).
    pub cwnd: u32,
    /// Slow-start threshold in segments (`snd_ssthresh`).
    pub ssthresh: u32,
    /// Linear-increase counter (`snd_cwnd_cnt`), used by `cong_avoid_ai`.
    pub cwnd_cnt: u32,
    /// Upper bound on `cwnd` (`snd_cwnd_clamp`).
    pub cwnd_clamp: u32,
    /// Sender maximum segment size in payload bytes.
    pub mss: u32,
    /// The transport is application-limited right now (Linux `tp->app_limited != 0`): kept
    /// current by the transport before every hook call. BBR reads it on `TxStart`.
    pub app_limited: bool,
    /// The socket's TSQ pacing shift set by the host or its driver (Linux `sk_pacing_shift`,
    /// default 10 from `sock_init_data`). A controller's own override is
    /// [`CongestionControl::pacing_shift`]; TSO sizing uses the override if there is one.
    pub pacing_shift: u8,
    /// The transport's smoothed RTT when it calls [`CongestionControl::init`] (Linux
    /// `tp->srtt_us`, which `bbr_init` reads): after a three-way handshake, the handshake's
    /// round trip; `None` without a sample. Later hooks get the current value in
    /// [`AckInfo::srtt`]; this field is not kept current after `init`.
    pub srtt: Option<Dur>,
    /// The transport's windowed minimum RTT when it calls `init` (Linux `tcp_min_rtt`, which
    /// `bbr_init` reads), like [`CwndState::srtt`].
    pub min_rtt: Option<Dur>,
}

impl CwndState {
    /// A fresh connection: IW `iw` segments, infinite ssthresh.
    #[must_use]
    pub fn new(iw: u32, mss: u32) -> Self {
        CwndState {
            cwnd: iw,
            ssthresh: INFINITE_SSTHRESH,
            cwnd_cnt: 0,
            cwnd_clamp: 1 << 24,
            mss,
            app_limited: false,
            pacing_shift: DEFAULT_PACING_SHIFT,
            srtt: None,
            min_rtt: None,
        }
    }

    /// True while `cwnd < ssthresh` (Linux `tcp_in_slow_start`).
    #[must_use]
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// Linux `tcp_slow_start`: grow cwnd by `acked` segments, at most up to ssthresh; return the
    /// part of `acked` left over once ssthresh is reached.
    pub fn slow_start(&mut self, acked: u32) -> u32 {
        let cwnd = self.cwnd.saturating_add(acked).min(self.ssthresh);
        let left = acked - (cwnd - self.cwnd).min(acked);
        self.cwnd = cwnd.min(self.cwnd_clamp);
        left
    }

    /// Linux `tcp_cong_avoid_ai`: increase cwnd by one segment per `w` acked segments, carrying
    /// the remainder in `cwnd_cnt`.
    pub fn cong_avoid_ai(&mut self, w: u32, acked: u32) {
        let w = w.max(1);
        if self.cwnd_cnt >= w {
            self.cwnd_cnt = 0;
            self.cwnd += 1;
        }
        self.cwnd_cnt += acked;
        if self.cwnd_cnt >= w {
            let delta = self.cwnd_cnt / w;
            self.cwnd_cnt -= delta * w;
            self.cwnd += delta;
        }
        self.cwnd = self.cwnd.min(self.cwnd_clamp);
    }
}

/// Linux `tcp_ca_state`: where the sender's loss-recovery state machine is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CaState {
    /// Nothing unusual (`TCP_CA_Open`).
    Open,
    /// SACKs or dupACKs seen, no loss marked yet (`TCP_CA_Disorder`).
    Disorder,
    /// Window reduced because of ECN (`TCP_CA_CWR`).
    Cwr,
    /// Fast recovery after a loss (`TCP_CA_Recovery`).
    Recovery,
    /// Recovery after a retransmission timeout (`TCP_CA_Loss`).
    Loss,
}

impl CaState {
    /// The state name a loss-based controller reports ([`CongestionControl::state`]): the
    /// recovery state's own name, or in Open/Disorder the slow-start phase while in slow start
    /// (`slow_start_phase`) and `"cong_avoid"` after it.
    #[must_use]
    pub fn state_name(self, slow_start_phase: Option<&'static str>) -> &'static str {
        match self {
            CaState::Recovery => "recovery",
            CaState::Loss => "loss",
            CaState::Cwr => "cwr",
            CaState::Open | CaState::Disorder => slow_start_phase.unwrap_or("cong_avoid"),
        }
    }
}

/// Events the transport reports through [`CongestionControl::cwnd_event`] (Linux `tcp_ca_event`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CwndEvent {
    /// First transmission after the connection was idle (`CA_EVENT_TX_START`).
    TxStart,
    /// cwnd restarted after idle longer than an RTO (`CA_EVENT_CWND_RESTART`).
    CwndRestart,
    /// End of a CWR/recovery cwnd reduction (`CA_EVENT_COMPLETE_CWR`).
    CompleteCwr,
    /// Retransmission timeout: the sender enters `Loss` (`CA_EVENT_LOSS`).
    Loss,
    /// An ACK echoed ECN-CE (`CA_EVENT_ECN_IS_CE`).
    EcnIsCe,
    /// An ACK without ECN-CE echo (`CA_EVENT_ECN_NO_CE`).
    EcnNoCe,
}

/// How a connection uses ECN.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum EcnMode {
    /// Not ECN-capable: packets are sent Not-ECT and a queue drops instead of marking.
    #[default]
    Off,
    /// Classic ECN (RFC 3168): data sent ECT(0); the receiver latches ECE until CWR; the
    /// sender reduces its window at most once per RTT (`tcp_enter_cwr`).
    Classic,
    /// L4S (RFC 9331): data sent ECT(1) with Accurate ECN feedback (RFC 9768), so every CE
    /// mark reaches the sender's `delivered_ce`.
    L4s,
}

impl EcnMode {
    /// Names accepted in scenario files, in variant order.
    pub const NAMES: [&'static str; 3] = ["off", "classic", "l4s"];

    /// The mode's name, as in [`EcnMode::NAMES`].
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            EcnMode::Off => "off",
            EcnMode::Classic => "classic",
            EcnMode::L4s => "l4s",
        }
    }

    /// The mode by name.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "off" => Some(EcnMode::Off),
            "classic" => Some(EcnMode::Classic),
            "l4s" => Some(EcnMode::L4s),
            _ => None,
        }
    }
}

/// What the transport knows at each ACK (Linux: `struct ack_sample` plus `tcp_sock` fields).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AckInfo {
    /// Segments newly cumulatively acknowledged or SACKed by this ACK.
    pub acked_sacked: u32,
    /// Segments newly cumulatively acknowledged (`pkts_acked` in Linux `ack_sample`).
    pub pkts_acked: u32,
    /// RTT sample from this ACK (Karn-safe: only from never-retransmitted segments).
    pub rtt: Option<Dur>,
    /// Smoothed RTT (RFC 6298), if any sample exists.
    pub srtt: Option<Dur>,
    /// Windowed minimum RTT (Linux `tcp_min_rtt`, 300 s window), if any sample exists.
    pub min_rtt: Option<Dur>,
    /// Segments in flight after processing this ACK (Linux `tcp_packets_in_flight`).
    pub in_flight: u32,
    /// Segments in flight before this ACK (Linux `prior_in_flight`).
    pub prior_in_flight: u32,
    /// Whether the sender used its whole cwnd recently (Linux `tcp_is_cwnd_limited`).
    pub is_cwnd_limited: bool,
    /// Whether the transport paces (internally or through fq): HyStart++ uses L = ∞ then.
    pub paced: bool,
    /// Sender's SND.NXT in segments after this ACK (for round tracking).
    pub snd_nxt: u64,
    /// Cumulative ACK point in segments after this ACK (SND.UNA).
    pub snd_una: u64,
    /// Recovery state of the sender when the ACK arrived.
    pub ca_state: Option<CaState>,
    /// Total segments marked lost so far (`tp->lost`).
    pub total_lost: u64,
    /// Total segments delivered with ECN-CE so far (`tp->delivered_ce`); an ACK that raises it
    /// carried ECE. Zero while the path does not mark.
    pub total_delivered_ce: u64,
    /// Earliest departure time of the next segment (Linux `tp->tcp_wstamp_ns`); BBR's
    /// `bbr_packets_in_net_at_edt` uses max(wstamp, now).
    pub wstamp: Time,
    /// Set only on the [`CongestionControl::ssthresh`] call that starts a reduction answering
    /// an ECN-CE echo (RFC 3168 CWR, or a QUIC ECN-CE count increase, RFC 9002 §7.1), not a
    /// loss: controllers with a separate ECN response (ABE, RFC 8511: β = 0.85 instead of 0.7)
    /// read it there. False on every other call.
    pub ce_reduction: bool,
}

/// A delivery-rate sample with Linux `tcp_rate` semantics (net/ipv4/tcp_rate.c, `rate_sample`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RateSample {
    /// Segments delivered over `interval`; zero when there is no valid sample.
    pub delivered: u64,
    /// max(send elapsed, ack elapsed); `None` when the sample is invalid.
    pub interval: Option<Dur>,
    /// Total delivered count when the sampled segment was sent (`prior_delivered`).
    pub prior_delivered: u64,
    /// Total delivered count now (`tp->delivered`).
    pub total_delivered: u64,
    /// Segments in flight when the sampled segment was sent (`tx_in_flight`).
    pub tx_in_flight: u32,
    /// Segments newly marked lost by this ACK (`rs->losses`).
    pub losses: u32,
    /// Segments delivered (acked or SACKed) by this ACK (`rs->acked_sacked`).
    pub acked_sacked: u32,
    /// Segments delivered with ECN-CE over `interval` (`rs->delivered_ce`).
    pub delivered_ce: u64,
    /// The sample was taken while application-limited (`rs->is_app_limited`).
    pub is_app_limited: bool,
    /// RTT of the most recently sent segment acked by this ACK (`rs->rtt_us`), if Karn-safe.
    pub rtt: Option<Dur>,
    /// The newest segment of the sample was a retransmission (`rs->is_retrans`).
    pub is_retrans: bool,
    /// Segments marked lost over the sample's interval: `tp->lost` now minus `tp->lost` when
    /// the sampled segment was sent (BBRv3's `rs->lost`, google/bbr v3 `tcp_rate.c`).
    pub lost: u64,
    /// The ACK may have been delayed by the receiver (Linux `rs->is_ack_delayed`, from
    /// `FLAG_ACK_MAYBE_DELAYED`: it newly acknowledged a single segment cumulatively).
    pub is_ack_delayed: bool,
}

/// A segment the transport has just marked lost (Linux passes the `skb` to BBRv3's
/// `skb_marked_lost` hook; these are the fields it reads).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LostInfo {
    /// Segments in flight when the lost segment was sent.
    pub tx_in_flight: u32,
    /// Total delivered count when it was sent.
    pub prior_delivered: u64,
    /// Total segments marked lost so far (`tp->lost`), including this one.
    pub total_lost: u64,
    /// Total delivered count now.
    pub total_delivered: u64,
    /// The segment was sent while application-limited.
    pub is_app_limited: bool,
    /// Total segments marked lost when it was sent (`tcp_skb_cb.tx.lost`, google/bbr v3).
    pub tx_lost: u64,
}

/// What the transport knows when a connection starts sending, reported once through
/// [`CongestionControl::on_connection_start`] (after `init`, before the first segment). Each
/// field is `None` when the transport does not know it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConnStart {
    /// RTT measured by the connection's handshake (SYN → SYN-ACK, RFC 6298 §2's first
    /// sample); `None` when the transport models no handshake.
    pub first_rtt: Option<Dur>,
    /// Payload bytes the application will send in all (a sized transfer); `None` for an
    /// open-ended one.
    pub transfer_bytes: Option<u64>,
    /// The receiver's advertised window in bytes (RFC 9293 §3.8.6, SND.WND); `None` when the
    /// receiver does not limit the sender.
    pub rcv_wnd_bytes: Option<u64>,
}

/// Key/value statistics for socket-stats style traces (`ss -i`).
pub type StatSink<'a> = &'a mut dyn FnMut(&'static str, f64);

/// One segment the transport has just put on the wire, as reported to
/// [`CongestionControl::on_packet_sent`] (quinn's `Controller::on_sent`, s2n-quic's
/// `on_packet_sent`; Linux has no per-segment hook and reports only `CA_EVENT_TX_START`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SentInfo {
    /// Sequence number of the segment, in segments.
    pub seq: u64,
    /// Payload bytes of the segment.
    pub bytes: u32,
    /// Segments in flight including this one (the record's `tx_in_flight`).
    pub in_flight: u32,
    /// The segment is a retransmission.
    pub is_retrans: bool,
    /// The transport was application-limited when it sent the segment.
    pub is_app_limited: bool,
}

/// Cloning a boxed controller: implemented for every `Clone` controller, so
/// `clone_box` needs no code in the controllers.
pub trait CloneController {
    /// A copy of this controller in its current state, boxed.
    fn clone_box(&self) -> Box<dyn CongestionControl>;
}

impl<T: CongestionControl + Clone + 'static> CloneController for T {
    fn clone_box(&self) -> Box<dyn CongestionControl> {
        Box::new(self.clone())
    }
}

impl Clone for Box<dyn CongestionControl> {
    fn clone(&self) -> Self {
        self.as_ref().clone_box()
    }
}

/// A congestion controller: one instance per connection. See the crate documentation for the
/// calling contract. Default methods do what Linux does when an ops hook is absent.
///
/// Controllers are plain data: `Send + Sync`, no interior mutability, and clonable through
/// [`CloneController::clone_box`] (a connection can be forked, a controller moved to another
/// thread or shared read-only with an observer).
pub trait CongestionControl: std::fmt::Debug + Send + Sync + CloneController {
    /// Short algorithm name, e.g. `"cubic"` (Linux `tcp_congestion_ops.name`).
    fn name(&self) -> &'static str;

    /// Called once when the connection starts (Linux `init`); may adjust the initial state.
    fn init(&mut self, _now: Time, _st: &mut CwndState) {}

    /// Called once when the connection starts sending, after [`CongestionControl::init`] and
    /// before the first segment leaves, with what the transport knows of the connection
    /// ([`ConnStart`]: handshake RTT, transfer size, receive window). Startup algorithms that
    /// size their first flight (Jump Start) set `cwnd` here. Default: nothing (Linux has no such
    /// hook; `init` runs before the handshake completes).
    fn on_connection_start(&mut self, _now: Time, _st: &mut CwndState, _info: &ConnStart) {}

    /// Called on every ACK that acknowledges or SACKs something, before any window update, with
    /// the RTT sample (Linux `pkts_acked`). HyStart and HyStart++ sample delay here.
    fn pkts_acked(&mut self, _now: Time, _st: &mut CwndState, _ack: &AckInfo) {}

    /// Window growth outside recovery (Linux `cong_avoid`), called only when the sender is
    /// cwnd-limited (unless [`CongestionControl::grows_when_not_cwnd_limited`]) and in `Open`
    /// or `Disorder`. `acked` = segments delivered by this ACK.
    fn cong_avoid(&mut self, now: Time, st: &mut CwndState, acked: u32, ack: &AckInfo);

    /// Whether the transports must call [`CongestionControl::cong_avoid`] also on ACKs that
    /// arrive while the sender is not cwnd-limited (`AckInfo::is_cwnd_limited` false); the
    /// controller then applies its own rule to that flag. `true` for quicly's CUBIC, which is
    /// handed quicly's `cc_limited` and ignores it (h2o/quicly `lib/cc-cubic.c`,
    /// `cubic_on_acked`: "TODO: respect cc_limited"). Default: `false` (Linux calls the hook
    /// always, but every Linux controller returns at once unless `tcp_is_cwnd_limited`).
    fn grows_when_not_cwnd_limited(&self) -> bool {
        false
    }

    /// New slow-start threshold at a congestion event (Linux `ssthresh`): recovery entry,
    /// ECN CWR and RTO. The transport stores the result in `st.ssthresh`.
    fn ssthresh(&mut self, now: Time, st: &CwndState, ack: &AckInfo) -> u32;

    /// Full per-ACK control (Linux `cong_control`). Return `true` if this controller sets cwnd
    /// itself (BBR); the transport then skips `cong_avoid` and PRR. Default: `false`.
    fn cong_control(
        &mut self,
        _now: Time,
        _st: &mut CwndState,
        _rs: &RateSample,
        _ack: &AckInfo,
    ) -> bool {
        false
    }

    /// Recovery state change (Linux `set_state`), e.g. entering `Loss` on RTO.
    fn set_state(&mut self, _now: Time, _st: &mut CwndState, _new: CaState) {}

    /// Connection event (Linux `cwnd_event`).
    fn cwnd_event(&mut self, _now: Time, _st: &mut CwndState, _ev: CwndEvent) {}

    /// cwnd to restore after a spurious-loss undo (Linux `undo_cwnd`; default
    /// `tcp_reno_undo_cwnd`: max(cwnd, prior_cwnd)).
    fn undo_cwnd(&mut self, _now: Time, st: &CwndState, prior_cwnd: u32) -> u32 {
        st.cwnd.max(prior_cwnd)
    }

    /// A segment left the transport (called for every transmitted segment, new or
    /// retransmitted, after the transport recorded it; the window state is the one it was sent
    /// under). Default: nothing.
    fn on_packet_sent(&mut self, _now: Time, _st: &CwndState, _sent: &SentInfo) {}

    /// Whether this controller uses [`CongestionControl::on_packet_sent`]. A transport reads it
    /// once, when the connection starts, and skips the per-segment call when it is `false` (a
    /// controller that overrides the hook must say `true`, and a wrapper must forward both).
    fn wants_packet_sent(&self) -> bool {
        false
    }

    /// A segment was marked lost (BBRv3's `skb_marked_lost`).
    fn on_packet_lost(&mut self, _now: Time, _st: &mut CwndState, _lost: &LostInfo) {}

    /// The ECN mode this controller requires whatever the flow asks for (TCP Prague: L4S, as
    /// Linux's `TCP_CONG_NEEDS_ECN | TCP_CONG_NEEDS_ACCECN`), or `None` to follow the flow's
    /// setting. Default: `None`.
    fn ecn_requirement(&self) -> Option<EcnMode> {
        None
    }

    /// The controller runs its own response to CE feedback (from
    /// [`AckInfo::total_delivered_ce`] and [`RateSample::delivered_ce`]), so the transport must
    /// not enter CWR and reduce cwnd itself on an ECN echo (TCP Prague, DCTCP-style
    /// controllers). Default: `false` (the transport runs RFC 3168's once-per-RTT reduction).
    fn handles_ce(&self) -> bool {
        false
    }

    /// Pacing rate in bytes per second the controller wants, or `None` to let the transport use
    /// Linux's default (`tcp_update_pacing_rate`: 200 % / 120 % of cwnd·mss/srtt). A transport
    /// may skip the call when neither [`CongestionControl::wants_pacing`] nor
    /// [`CongestionControl::may_pace_itself`] says `true`, so a controller that answers `Some`
    /// must say `true` to one of them.
    fn pacing_rate(&self) -> Option<u64> {
        None
    }

    /// Whether this controller needs pacing (Linux: `bbr_init` sets `SK_PACING_NEEDED`).
    fn wants_pacing(&self) -> bool {
        false
    }

    /// Whether the controller asks for pacing at its [`CongestionControl::pacing_rate`] right
    /// now. While it says `true`, a socket that is otherwise unpaced paces internally (SUSS's
    /// Linux patch switches `sk_pacing_status` from `SK_PACING_NONE` to `SK_PACING_NEEDED` for
    /// the paced part of a round and back at the next round), and every segment is paced, the
    /// first ten included (Linux exempts them, `tcp_update_skb_after_send`; Jump Start spreads
    /// its first flight). Read whenever a segment is sent. Default: `false`.
    fn paces_now(&self) -> bool {
        false
    }

    /// Whether [`CongestionControl::paces_now`] can ever say `true` for this controller (fixed
    /// for its lifetime), so that a transport may skip asking per segment. Default: `false`.
    fn may_pace_itself(&self) -> bool {
        false
    }

    /// Whether the controller sets the pacing gap segment by segment (Paced Chirping's chirps),
    /// fixed for its lifetime and read once by the transport. When `true`, the transport reads
    /// [`CongestionControl::pacing_rate`] again after each segment it reported through
    /// [`CongestionControl::on_packet_sent`] and spaces the next segment by exactly that
    /// segment's bytes over the rate (no credit for a late departure). Default: `false`.
    fn sets_gap_per_segment(&self) -> bool {
        false
    }

    /// Segments per TSO burst the controller chooses itself, replacing the transport's
    /// `tcp_tso_autosize` (BBRv3's `tso_segs` hook in `tcp_tso_segs()`). `st` gives the MSS and
    /// the host's pacing shift. Default: `None` (the transport autosizes). Skipped, as
    /// [`CongestionControl::pacing_rate`] is, for a controller that neither wants pacing nor may
    /// pace itself.
    fn tso_segs(&self, _st: &CwndState) -> Option<u32> {
        None
    }

    /// Floor on the transport's TSO autosizing (Linux `min_tso_segs` hook, BBRv1's
    /// `bbr_min_tso_segs`); `None` = `sysctl_tcp_min_tso_segs` (2). Skipped as
    /// [`CongestionControl::tso_segs`] is.
    fn min_tso_segs(&self) -> Option<u32> {
        None
    }

    /// TSQ pacing-shift override (BBR-TAS), or `None` to keep the host's shift.
    fn pacing_shift(&self) -> Option<u8> {
        None
    }

    /// Whether the transport should end loss recovery on the first ACK that advances SND.UNA
    /// (classic Reno, RFC 5681 §3.2 step 6) instead of at the recovery point (NewReno,
    /// RFC 6582; and every SACK-based Linux recovery). Default: `false`.
    fn exit_recovery_on_partial_ack(&self) -> bool {
        false
    }

    /// Small human-readable state, e.g. `"slow_start"`, `"css"`, `"cong_avoid"`, `"ProbeBW_UP"`.
    fn state(&self) -> &'static str;

    /// Emit key/value internals (e.g. `w_max`, `k_s`, `bw_bps`).
    fn stats(&self, _sink: StatSink<'_>) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_start_stops_at_ssthresh_and_returns_the_rest() {
        let mut st = CwndState::new(10, 1448);
        st.ssthresh = 12;
        assert_eq!(st.slow_start(5), 3);
        assert_eq!(st.cwnd, 12);
        assert!(!st.in_slow_start());
    }

    /// The trait's object-safety and thread bounds: a boxed controller is `Send + Sync`.
    #[test]
    fn boxed_controllers_are_send_and_sync() {
        fn assert_send_sync<T: Send + Sync + ?Sized>() {}
        assert_send_sync::<dyn CongestionControl>();
        assert_send_sync::<Box<dyn CongestionControl>>();
    }

    /// `clone_box` copies the state: a controller cloned mid-connection and the original
    /// answer the same later calls identically, and the clone does not share state with it.
    #[test]
    fn clone_box_forks_the_controller_state() {
        for name in CONTROLLERS {
            let mut a = CcSpec::default_for(name).unwrap().build(3);
            let mut st = CwndState::new(10, 1448);
            a.init(Time::ZERO, &mut st);
            let ack = |i: u64, cwnd: u32| AckInfo {
                acked_sacked: 1,
                pkts_acked: 1,
                rtt: Some(Dur::from_millis(20)),
                srtt: Some(Dur::from_millis(20)),
                min_rtt: Some(Dur::from_millis(20)),
                in_flight: cwnd,
                prior_in_flight: cwnd,
                is_cwnd_limited: true,
                snd_nxt: 20 + i,
                snd_una: i,
                ca_state: Some(CaState::Open),
                ..AckInfo::default()
            };
            let rs = |i: u64| RateSample {
                delivered: 10,
                interval: Some(Dur::from_millis(20)),
                prior_delivered: i.saturating_sub(10),
                total_delivered: i,
                tx_in_flight: 10,
                acked_sacked: 1,
                rtt: Some(Dur::from_millis(20)),
                ..RateSample::default()
            };
            let step = |cc: &mut dyn CongestionControl, st: &mut CwndState, i: u64| {
                let now = Time::ZERO + Dur::from_millis(i);
                let a = ack(i, st.cwnd);
                cc.pkts_acked(now, st, &a);
                if !cc.cong_control(now, st, &rs(i), &a) {
                    cc.cong_avoid(now, st, 1, &a);
                }
                (st.cwnd, cc.pacing_rate(), cc.state())
            };
            for i in 1..50 {
                step(a.as_mut(), &mut st, i);
            }
            let mut b = a.clone_box();
            let mut st_b = st;
            for i in 50..200 {
                assert_eq!(
                    step(a.as_mut(), &mut st, i),
                    step(b.as_mut(), &mut st_b, i),
                    "{name} at ACK {i}"
                );
            }
            // Independent: driving only the clone leaves the original where it was.
            let before = format!("{a:?}");
            for i in 200..260 {
                step(b.as_mut(), &mut st_b, i);
            }
            assert_eq!(format!("{a:?}"), before, "{name}");
        }
    }

    #[test]
    fn state_names_follow_the_recovery_state_then_the_phase() {
        assert_eq!(CaState::Recovery.state_name(Some("css")), "recovery");
        assert_eq!(CaState::Loss.state_name(None), "loss");
        assert_eq!(CaState::Cwr.state_name(Some("slow_start")), "cwr");
        assert_eq!(CaState::Disorder.state_name(Some("css")), "css");
        assert_eq!(CaState::Open.state_name(None), "cong_avoid");
    }

    #[test]
    fn cong_avoid_ai_adds_one_segment_per_window() {
        let mut st = CwndState::new(10, 1448);
        for _ in 0..10 {
            st.cong_avoid_ai(10, 1);
        }
        assert_eq!(st.cwnd, 11);
        assert_eq!(st.cwnd_cnt, 0);
    }
}
