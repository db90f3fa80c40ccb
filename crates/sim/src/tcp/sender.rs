//! The TCP sender: SACK scoreboard, RACK-TLP loss detection, PRR recovery, RTO with backoff,
//! delivery-rate sampling, internal EDT pacing, and the congestion-controller hooks.
//!
//! Contract: the engine calls [`Sender::start`], [`Sender::on_ack`], [`Sender::on_timer`] and
//! [`Sender::stop_app`] with `now`; each appends the data segments to transmit to an output
//! buffer (as [`Payload`]s with their wire size) and leaves its next deadline in
//! [`Sender::next_wakeup`]. Per-ACK work is O(newly acknowledged segments + SACK blocks), never
//! O(window): the SACK blocks of the previous ACK are cached (Linux `recv_sack_cache`), and RACK
//! walks a send-time-ordered list from its old end (Linux `tsorted_sent_queue`). The application
//! is bulk (everything, or `size` bytes, handed over at the start) or rate-limited
//! (`FlowConfig::app_rate_bps`, one MSS per write): then the sender's next wakeup includes the
//! next write whenever it has sent everything written so far, and running dry below cwnd marks
//! the flow app-limited as for any application.
//!
//! Delivery-rate sampling and the congestion state machine (CWR/Recovery/Loss, PRR, the order of
//! the controller hooks) are the transport kit of `cclab-cc` ([`cclab_cc::kit`]): this sender
//! keeps a [`TxRecord`] with every segment, detects losses (SACK, RACK-TLP, RTO) and reports
//! them to the kit, which calls the controller.
//!
//! Linux rules followed (v6.x `net/ipv4/`):
//! - in-flight = packets_out − (sacked_out + lost_out) + retrans_out (`tcp_packets_in_flight`);
//! - RACK (RFC 8985 §6, `tcp_recovery.c`): a segment sent before the most recently delivered one
//!   is lost once `now ≥ xmit_ts + rack_rtt + reo_wnd`; reo_wnd = min_rtt/4 capped at SRTT, and 0
//!   when no reordering was seen and the sender is in Recovery/Loss or ≥ 3 segments are SACKed;
//!   (simplification: the reordering timer is armed for the earliest pending deadline, Linux
//!   arms it for the latest plus 2 ms);
//! - recovery starts when a segment is marked lost (`tcp_time_to_recover`), ends when SND.UNA
//!   reaches the recovery point; PRR (RFC 6937, `tcp_cwnd_reduction`) meters cwnd meanwhile;
//! - TLP (RFC 8985 §7, `tcp_schedule_loss_probe`/`tcp_send_loss_probe`) in Open state:
//!   PTO = 2·SRTT (+200 ms if one segment is out, else +2 ms), capped by the RTO time left;
//!   a probe sends new data if any, else retransmits the highest segment; a repaired tail loss
//!   (an ACK beyond the probe without DSACK) reduces cwnd once (`tcp_process_tlp_ack`), and
//!   entering recovery ends the probe episode (`tcp_init_cwnd_reduction`);
//! - cwnd grows only on ACKs that advance SND.UNA unless reordering was seen
//!   (`tcp_may_raise_cwnd`);
//! - RTO (`tcp_retransmit_timer`/`tcp_enter_loss`): a new ssthresh from the controller only for a
//!   new episode (Open/Disorder, recovery point reached, or progress since the last RTO), cwnd =
//!   1, every un-SACKed segment marked lost, exponential backoff, reset on an ACK with an RTT
//!   sample;
//! - RTT (`tcp_ack_update_rtt`): SRTT from the oldest newly acknowledged never-retransmitted
//!   segment, the windowed minimum from the newest, none from a cumulative ACK that covers
//!   retransmitted data (Karn); the timestamp echo serves retransmitted data;
//! - delivery-rate samples (`tcp_rate.c`): interval = max(send elapsed, ACK elapsed), samples
//!   shorter than min_rtt are invalid, app-limited marking when the application runs dry;
//! - pacing (`tcp_update_skb_after_send`): once 10 data segments were sent, each skb
//!   advances the earliest departure time (EDT, `tcp_wstamp_ns`) by its payload length / rate,
//!   claiming back at most half of it from lateness; default rate for controllers without one:
//!   200 % (cwnd < ssthresh/2) or 120 % of mss·max(cwnd, packets_out)/srtt
//!   (`tcp_update_pacing_rate`), computed for every socket that uses it (TSQ, TSO, pacing) as
//!   Linux computes `sk_pacing_rate` for every socket. Each skb is stamped max(EDT, now)
//!   (`tcp_transmit_skb`), and its segments carry that stamp as their send time (RTT, RACK,
//!   delivery rate) and TSval. Internal pacing (`SK_PACING_NEEDED`) holds the next skb until the
//!   EDT; under the fq qdisc (`SK_PACING_FQ`) TCP hands the skb over at once and fq holds it;
//! - TSO (`tcp_write_xmit`): new data leaves in skbs of min(TSO goal, `tcp_cwnd_test` quota =
//!   min(max(cwnd/2, 1), cwnd − in_flight), data left) segments; the goal is the controller's
//!   `tso_segs` or `tcp_tso_autosize` ([`super::output`]). Retransmissions and loss probes stay
//!   single-segment skbs (Linux may retransmit multi-segment skbs; deviation);
//! - TSQ (`tcp_small_queue_check`, in `tcp_write_xmit` and `tcp_xmit_retransmit_queue`): before
//!   each skb, if the bytes below TCP (handed over, TX completion not yet reported) exceed
//!   max(2 · skb bytes, pacing_rate >> shift) (capped by `tcp_limit_output_bytes` for unpaced
//!   sockets, doubled for retransmissions) the socket is throttled, unless nothing is
//!   outstanding (`tcp_rtx_queue_empty`; kernels from 6.7 also pass with a single skb in the
//!   retransmit queue, not modelled). A throttled socket resumes when TX completions bring it
//!   back within its limit (`tcp_wfree` → `tcp_tsq_handler`): the sender asks to be woken at the
//!   earliest completion that does, which gives the same sends as retrying at every completion
//!   (a retry that fails changes nothing) with one event instead of many. An skb is freed
//!   whole when its last segment leaves the NIC (one completion, as a TSO device frees the
//!   skb). A socket held back by TSQ below its window is not cwnd-limited (Linux
//!   `is_cwnd_limited`, cleared at once here rather than at the end of the window). Loss probes
//!   bypass the check (Linux retransmits the probe with `__tcp_retransmit_skb`, which has
//!   none); TSO deferral (`tcp_tso_should_defer`) is not modelled;
//! - restart after idle (`tcp_cwnd_restart`, `tcp_slow_start_after_idle` = 1): cwnd halves per
//!   RTO of idleness, not below min(IW, cwnd).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use cclab_cc::kit::{AckSignals, RateAck, RateSampler, Recovery, Transition, TxRecord};
use cclab_cc::{
    AckInfo, CaState, CongestionControl, CwndState, Dur, EcnMode, INFINITE_SSTHRESH, LostInfo,
    SentInfo, Time,
};

use super::output::{GSO_MAX_SEGS, PacingStatus, cwnd_quota, tso_autosize, tsq_limit};
use super::rtt::{RTO_MAX, RTO_MIN, RttEstimator};
use crate::config::{
    FlowConfig, HostConfig, HostQdisc, LIMIT_OUTPUT_BYTES, PacingMode, TCP_IP_HEADER_BYTES,
    TsoConfig,
};
use crate::histogram::Histogram;
use crate::packet::{Ecn, MAX_SACK_BLOCKS, Payload, SeqRange};
use crate::results::TracePoint;

/// RFC 8985 §7.2 / Linux `tcp_schedule_loss_probe`: extra PTO time when one segment is out
/// (worst-case delayed ACK, `TCP_RTO_MIN`).
const TLP_SINGLE_EXTRA: Dur = RTO_MIN;
/// Linux `TCP_TIMEOUT_MIN` (2 jiffies ≈ 2 ms) added to the PTO otherwise.
const TLP_EXTRA: Dur = Dur::from_millis(2);
/// Linux: pacing starts after this many data segments (`tcp_update_skb_after_send`).
const PACING_MIN_SEGS: u64 = 10;
/// Linux `sysctl_tcp_pacing_ss_ratio` (percent).
const PACING_SS_RATIO: u64 = 200;
/// Linux `sysctl_tcp_pacing_ca_ratio` (percent).
const PACING_CA_RATIO: u64 = 120;
/// RFC 6675 DupThresh / Linux `tcp_reordering` default.
const DUP_THRESH: u32 = 3;

const F_SACKED: u8 = 1;
const F_LOST: u8 = 2;
const F_RETRANS: u8 = 4;
const F_EVER_RETRANS: u8 = 8;

/// Per-segment scoreboard entry (Linux `tcp_skb_cb` fields used by SACK, RACK and tcp_rate).
#[derive(Clone, Copy, Debug, Default)]
struct Seg {
    /// The delivery-rate record of the latest transmission; its send time is the one RACK
    /// and the RTT samples use.
    rec: TxRecord,
    tx_count: u32,
    flags: u8,
}

impl Seg {
    fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }
}

/// Which timer a deadline belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Timer {
    Rto,
    Probe,
}

/// Counters exported to the results.
#[derive(Clone, Copy, Debug, Default)]
pub struct SenderCounters {
    /// Data segments sent (including retransmissions).
    pub segments_sent: u64,
    /// Retransmissions.
    pub retransmits: u64,
    /// Segments marked lost.
    pub lost: u64,
    /// Fast-recovery episodes.
    pub fast_recoveries: u64,
    /// Retransmission timeouts.
    pub rtos: u64,
    /// Tail-loss probes.
    pub tlps: u64,
    /// Smallest cwnd ever.
    pub min_cwnd: u32,
    /// ACKs that carried an ECN echo (ECE, or a rise of the Accurate ECN CE counter).
    pub ce_echoes: u64,
    /// ECN-triggered window reductions (CWR episodes).
    pub ecn_reductions: u64,
    /// Times TSQ throttled the socket (`TSQ_THROTTLED` set).
    pub tsq_throttles: u64,
    /// skbs handed below TCP (a TSO burst is one skb).
    pub skbs: u64,
}

/// One segment to put on the wire.
#[derive(Clone, Copy, Debug)]
pub struct Outgoing {
    /// The data payload.
    pub payload: Payload,
    /// Wire bytes.
    pub wire_bytes: u32,
    /// The skb's departure stamp (EDT, Linux `skb->skb_mstamp_ns`): max(`tcp_wstamp_ns`, now).
    /// The fq qdisc releases the skb no earlier; it equals the hand-off time unless the socket
    /// is paced through fq.
    pub tstamp: Time,
    /// On the first segment of an skb: how many segments the skb has (a TSO/GSO burst); 0 on
    /// the others. The segments of one skb are consecutive in the output.
    pub skb_segs: u32,
    /// On the last segment of an skb: the skb's wire bytes (what its TX completion frees); 0
    /// on the others.
    pub skb_bytes: u32,
    /// ECN field of the segment's IP header.
    pub ecn: Ecn,
}

/// What the sending host does below one socket, from its [`HostConfig`]: the socket's part of
/// the host model (TSQ, TSO, who paces).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SocketHost {
    /// TCP Small Queues on.
    pub tsq: bool,
    /// The host's `sk_pacing_shift` (a controller may override it).
    pub pacing_shift: u8,
    /// `tcp_limit_output_bytes`.
    pub limit_output_bytes: u64,
    /// TSO autosizing.
    pub tso: TsoConfig,
    /// The host's qdisc is fq: the socket is `SK_PACING_FQ` (unless its flow never paces).
    pub fq: bool,
    /// Every hand-off completes at once (no device holds packets: a rate-less NIC without fq),
    /// so nothing is ever below TCP and the engine reports no completions.
    pub instant_completion: bool,
}

impl SocketHost {
    /// A socket without a host model: one segment per skb, no TSQ, completions at once (the
    /// sender on its own, as in unit tests).
    #[must_use]
    pub fn bare() -> Self {
        SocketHost {
            tsq: false,
            pacing_shift: cclab_cc::DEFAULT_PACING_SHIFT,
            limit_output_bytes: LIMIT_OUTPUT_BYTES,
            tso: TsoConfig {
                enabled: false,
                ..TsoConfig::default()
            },
            fq: false,
            instant_completion: true,
        }
    }

    /// The socket's view of `host`; `instant_completion` as the engine determined it.
    #[must_use]
    pub fn new(host: &HostConfig, instant_completion: bool) -> Self {
        SocketHost {
            tsq: host.tsq,
            pacing_shift: host.pacing_shift,
            limit_output_bytes: host.limit_output_bytes,
            tso: host.tso,
            fq: matches!(host.qdisc, HostQdisc::Fq(_)),
            instant_completion,
        }
    }
}

/// TX completions reported ahead of time, in time order: a vector read from `head`, so the
/// common pattern (append in order; everything due by the next look) costs a store and a reset.
#[derive(Debug, Default)]
struct Completions {
    q: Vec<(Time, u32)>,
    head: usize,
    /// Sum of the pending bytes.
    bytes: u64,
}

impl Completions {
    /// Add a completion; returns whether it came in time order.
    #[inline]
    fn push(&mut self, at: Time, bytes: u32) -> bool {
        self.bytes += u64::from(bytes);
        if self.q.last().is_none_or(|&(t, _)| t <= at) {
            self.q.push((at, bytes));
            return true;
        }
        let i = self.head + self.q[self.head..].partition_point(|&(t, _)| t <= at);
        self.q.insert(i, (at, bytes));
        false
    }

    /// Remove the completions due by `now`; returns their bytes.
    #[inline]
    fn settle(&mut self, now: Time) -> u64 {
        match self.q.last() {
            None => 0,
            Some(&(t, _)) if t <= now => {
                let b = self.bytes;
                self.q.clear();
                self.head = 0;
                self.bytes = 0;
                b
            }
            Some(_) => {
                let mut b = 0;
                while let Some(&(t, n)) = self.q.get(self.head) {
                    if t > now {
                        break;
                    }
                    b += u64::from(n);
                    self.head += 1;
                }
                self.bytes -= b;
                b
            }
        }
    }

    fn iter(&self) -> impl Iterator<Item = &(Time, u32)> {
        self.q[self.head..].iter()
    }
}

/// What the engine must do after reporting a TX completion ([`Sender::tx_completed`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxNote {
    /// Nothing.
    None,
    /// The sender's wakeup moved earlier ([`Sender::next_wakeup`]): re-arm it.
    Rearm,
    /// A throttled socket is back within its TSQ limit now: run [`Sender::tsq_kick`].
    Kick,
}

/// The sending side of one flow.
#[derive(Debug)]
pub struct Sender {
    cc: Box<dyn CongestionControl>,
    st: CwndState,
    mss: u32,
    /// Segments the application has handed over so far (`u64::MAX` = unlimited bulk).
    app_end: u64,
    /// Rate-limited application (`FlowConfig::app_rate_bps`), bit/s; `None` = bulk.
    app_rate: Option<u64>,
    /// When the rate-limited application started writing.
    app_t0: Time,
    /// Segments the application will hand over in all (size, or what it had written when it
    /// stopped; `u64::MAX` = no limit).
    app_cap: u64,
    /// When the application hands over segment `app_end` (`Time::MAX` = never: bulk, finished
    /// or stopped).
    app_next: Time,
    /// Total segments of a sized transfer.
    total_segs: Option<u64>,
    last_len: u32,
    initial_window: u32,
    snd_una: u64,
    snd_nxt: u64,
    segs: VecDeque<Seg>,
    sacked_out: u32,
    lost_out: u32,
    retrans_out: u32,
    tsorted: VecDeque<(u64, Time)>,
    lost_q: BinaryHeap<Reverse<u64>>,
    sack_cache: [SeqRange; MAX_SACK_BLOCKS],
    n_sack_cache: usize,
    rtt: RttEstimator,
    backoff: u32,
    rack_xmit: Time,
    rack_end: u64,
    rack_rtt: Dur,
    rack_advanced: bool,
    fack: u64,
    reordering_seen: bool,
    /// The congestion state machine (CWR, Recovery, Loss; PRR).
    rec: Recovery,
    /// ECN use of the connection (the controller's requirement, else the flow's setting).
    ecn: EcnMode,
    /// The last CE counter an ACK carried (Accurate ECN).
    last_ce_count: u8,
    /// The next new data segment carries CWR (Linux `TCP_ECN_QUEUE_CWR`).
    cwr_pending: bool,
    tlp_high_seq: Option<u64>,
    tlp_retrans: bool,
    /// Delivery-rate sampling (`tcp_rate.c`) and the counters it snapshots: delivered, lost,
    /// CE-delivered (Linux `tp->delivered_ce`: with classic ECN every segment an ECE-flagged
    /// ACK delivers, `tcp_count_delivered`; with Accurate ECN the change of the receiver's CE
    /// counter, `tcp_accecn_process`), and the app-limited mark.
    rate: RateSampler,
    pacing: PacingStatus,
    host: SocketHost,
    /// `sk_pacing_rate` is computed (some rule uses it: pacing, TSQ or TSO).
    need_rate: bool,
    /// Bytes handed below TCP whose TX completion is not yet accounted (`sk_wmem_alloc`).
    below_tcp: u64,
    /// Reported future TX completions.
    completions: Completions,
    /// `TSQ_THROTTLED`: the last TSQ check failed.
    tsq_throttled: bool,
    /// The limit of that check.
    tsq_limit_now: u64,
    /// The earliest reported completion that brings the socket back within `tsq_limit_now`.
    tsq_wake: Option<Time>,
    trace_tx: bool,
    wstamp: Time,
    data_segs_out: u64,
    pacing_rate: Option<u64>,
    cwnd_limited: bool,
    last_send: Time,
    timer: Option<(Timer, Time)>,
    reo_at: Option<Time>,
    pace_at: Option<Time>,
    started: bool,
    /// Exported counters.
    pub counters: SenderCounters,
    /// Every RTT sample taken from ACKs (Linux `ca_rtt`: newest delivered segment).
    pub rtt_hist: Histogram,
    /// When each RTO fired.
    pub rto_times: Vec<Time>,
    trace: Option<Vec<TracePoint>>,
    /// Time the whole sized transfer was acknowledged.
    pub completed_at: Option<Time>,
}

impl Sender {
    /// A sender for `cfg` without a host model ([`SocketHost::bare`]); `cc_seed` seeds the
    /// controller's own random choices.
    #[must_use]
    pub fn new(cfg: &FlowConfig, cc_seed: u64) -> Self {
        Self::with_host(cfg, cc_seed, SocketHost::bare())
    }

    /// A sender for `cfg` on a host described by `host`.
    #[must_use]
    pub fn with_host(cfg: &FlowConfig, cc_seed: u64, host: SocketHost) -> Self {
        let mss = cfg.mss;
        let (total_segs, last_len) = match cfg.size {
            Some(bytes) => {
                let n = bytes.div_ceil(u64::from(mss)).max(1);
                let last = bytes - (n - 1) * u64::from(mss);
                (Some(n), last.max(1) as u32)
            }
            None => (None, mss),
        };
        let cc = cfg.cc.with_ecn(cfg.ecn).build(cc_seed);
        let ecn = cc.ecn_requirement().unwrap_or(cfg.ecn);
        let cc_wants_pacing = cc.wants_pacing();
        let mut st = CwndState::new(cfg.initial_window, mss);
        st.pacing_shift = host.pacing_shift;
        // Linux `sk_pacing_status`: fq marks every socket it sees SK_PACING_FQ; without fq a
        // controller that needs pacing (or a flow forced to pace) paces inside TCP.
        let pacing = match (cfg.pacing, host.fq) {
            (PacingMode::Off, _) => PacingStatus::None,
            (_, true) => PacingStatus::Fq,
            (PacingMode::On, false) => PacingStatus::Internal,
            (PacingMode::Auto, false) if cc_wants_pacing => PacingStatus::Internal,
            (PacingMode::Auto, false) => PacingStatus::None,
        };
        let need_rate = pacing != PacingStatus::None || host.tsq || host.tso.enabled;
        Sender {
            ecn,
            last_ce_count: 0,
            cwr_pending: false,
            cc,
            st,
            mss,
            app_end: 0,
            app_rate: cfg.app_rate_bps,
            app_t0: Time::ZERO,
            app_cap: 0,
            app_next: Time::MAX,
            total_segs,
            last_len,
            initial_window: cfg.initial_window,
            snd_una: 0,
            snd_nxt: 0,
            segs: VecDeque::new(),
            sacked_out: 0,
            lost_out: 0,
            retrans_out: 0,
            tsorted: VecDeque::new(),
            lost_q: BinaryHeap::new(),
            sack_cache: [SeqRange::default(); MAX_SACK_BLOCKS],
            n_sack_cache: 0,
            rtt: RttEstimator::default(),
            backoff: 0,
            rack_xmit: Time::ZERO,
            rack_end: 0,
            rack_rtt: Dur::ZERO,
            rack_advanced: false,
            fack: 0,
            reordering_seen: false,
            rec: Recovery::new(cfg.initial_window),
            tlp_high_seq: None,
            tlp_retrans: false,
            rate: RateSampler::new(),
            pacing,
            host,
            need_rate,
            below_tcp: 0,
            completions: Completions::default(),
            tsq_throttled: false,
            tsq_limit_now: 0,
            tsq_wake: None,
            trace_tx: cfg.trace && cfg.trace_tx,
            wstamp: Time::ZERO,
            data_segs_out: 0,
            pacing_rate: None,
            cwnd_limited: false,
            last_send: Time::ZERO,
            timer: None,
            reo_at: None,
            pace_at: None,
            started: false,
            counters: SenderCounters {
                min_cwnd: cfg.initial_window,
                ..SenderCounters::default()
            },
            rtt_hist: Histogram::new(),
            rto_times: Vec::new(),
            trace: cfg.trace.then(Vec::new),
            completed_at: None,
        }
    }

    // ----- observation -----

    /// The connection's ECN use (the controller's requirement, else the flow's setting).
    #[must_use]
    pub fn ecn_mode(&self) -> EcnMode {
        self.ecn
    }

    /// Segments delivered CE-marked so far (Linux `tp->delivered_ce`).
    #[must_use]
    pub fn delivered_ce(&self) -> u64 {
        self.rate.delivered_ce()
    }

    /// The controller.
    #[must_use]
    pub fn cc(&self) -> &dyn CongestionControl {
        self.cc.as_ref()
    }
    /// Window state.
    #[must_use]
    pub fn cwnd_state(&self) -> CwndState {
        self.st
    }
    /// Smoothed RTT.
    #[must_use]
    pub fn srtt(&self) -> Option<Dur> {
        self.rtt.srtt()
    }
    /// Minimum RTT.
    #[must_use]
    pub fn min_rtt(&self) -> Option<Dur> {
        self.rtt.min_rtt()
    }
    /// Segments in flight (Linux `tcp_packets_in_flight`).
    #[must_use]
    pub fn in_flight(&self) -> u32 {
        let packets_out = (self.snd_nxt - self.snd_una) as u32;
        packets_out - (self.sacked_out + self.lost_out) + self.retrans_out
    }
    /// Pacing rate in force, bytes/s, if the flow paces.
    #[must_use]
    pub fn pacing_rate(&self) -> Option<u64> {
        if self.is_paced() {
            self.pacing_rate
        } else {
            None
        }
    }
    /// Last valid delivery-rate sample, bit/s.
    #[must_use]
    pub fn last_delivery_rate_bps(&self) -> Option<f64> {
        self.rate
            .last_sample()
            .map(|(segs, dt)| segs as f64 * f64::from(self.mss) * 8.0 / dt.as_secs_f64())
    }
    /// Recovery state.
    #[must_use]
    pub fn ca_state(&self) -> CaState {
        self.rec.state()
    }
    /// SND.UNA in segments.
    #[must_use]
    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }
    /// SND.NXT in segments.
    #[must_use]
    pub fn snd_nxt(&self) -> u64 {
        self.snd_nxt
    }
    /// Total segments of a sized transfer.
    #[must_use]
    pub fn total_segments(&self) -> Option<u64> {
        self.total_segs
    }
    /// Payload bytes of segment `seq`.
    #[must_use]
    pub fn seg_len(&self, seq: u64) -> u32 {
        match self.total_segs {
            Some(n) if seq + 1 == n => self.last_len,
            _ => self.mss,
        }
    }

    /// Earliest time the sender needs to run again (timers, internal pacing, the TX
    /// completion that ends a TSQ throttle, and the next write of a rate-limited application
    /// when everything written has been sent).
    #[must_use]
    pub fn next_wakeup(&self) -> Option<Time> {
        // Time::MAX stands for "none" so the minimum is branch-free.
        let t = self.timer.map_or(Time::MAX, |(_, t)| t);
        // A rate-limited application wakes the sender once per write, and only when the
        // sender has sent all it was given (otherwise ACKs, pacing or TSQ wake it and it takes
        // the writes made meanwhile). Bulk flows have `app_next` = MAX.
        let app = if self.snd_nxt >= self.app_end {
            self.app_next
        } else {
            Time::MAX
        };
        let t = t
            .min(self.reo_at.unwrap_or(Time::MAX))
            .min(self.pace_at.unwrap_or(Time::MAX))
            .min(self.tsq_wake.unwrap_or(Time::MAX))
            .min(app);
        (t != Time::MAX).then_some(t)
    }

    fn is_paced(&self) -> bool {
        self.pacing != PacingStatus::None
    }

    /// Who paces this socket (Linux `sk_pacing_status`).
    #[must_use]
    pub fn pacing_status(&self) -> PacingStatus {
        self.pacing
    }

    /// The socket's pacing rate, bytes/s (Linux `sk_pacing_rate`), paced or not: the
    /// controller's, or Linux's default once an RTT sample exists; `None` = unlimited.
    #[must_use]
    pub fn sk_pacing_rate(&self) -> Option<u64> {
        self.pacing_rate
    }

    /// The TSQ shift in force: the controller's override, else the host's.
    #[must_use]
    pub fn tsq_shift(&self) -> u8 {
        self.cc.pacing_shift().unwrap_or(self.st.pacing_shift)
    }

    /// Segments per skb the socket would build now (1 without TSO).
    #[must_use]
    pub fn tso_goal(&self) -> u32 {
        if !self.host.tso.enabled {
            return 1;
        }
        if let Some(n) = self.cc.tso_segs(&self.st) {
            return n.clamp(1, GSO_MAX_SEGS);
        }
        let min_segs = self
            .cc
            .min_tso_segs()
            .unwrap_or(self.host.tso.min_tso_segs)
            .max(1);
        tso_autosize(
            self.pacing_rate,
            self.tsq_shift(),
            self.rtt.min_rtt(),
            self.mss,
            min_segs,
            &self.host.tso,
        )
    }

    /// `segs` (> 1) limited to the TSO goal; the autosizing is skipped when `segs` is within
    /// its floor (the goal is never below it), as it is for most ACK-clocked skbs.
    #[inline]
    fn tso_limit(&self, segs: u32) -> u32 {
        if !self.host.tso.enabled {
            return 1;
        }
        if let Some(n) = self.cc.tso_segs(&self.st) {
            return segs.min(n.clamp(1, GSO_MAX_SEGS));
        }
        let floor = self
            .cc
            .min_tso_segs()
            .unwrap_or(self.host.tso.min_tso_segs)
            .max(1);
        if segs <= floor {
            return segs;
        }
        segs.min(tso_autosize(
            self.pacing_rate,
            self.tsq_shift(),
            self.rtt.min_rtt(),
            self.mss,
            floor,
            &self.host.tso,
        ))
    }

    fn tsq_limit_for(&self, skb_bytes: u64) -> u64 {
        tsq_limit(
            skb_bytes,
            self.pacing_rate,
            self.tsq_shift(),
            self.pacing == PacingStatus::None,
            self.host.limit_output_bytes,
        )
    }

    /// The TSQ budget in force, bytes: the limit a full-size skb of the current TSO goal would
    /// be checked against (`None` when TSQ is off).
    #[must_use]
    pub fn tsq_budget(&self) -> Option<u64> {
        self.host.tsq.then(|| {
            let skb = u64::from(self.tso_goal()) * u64::from(self.mss + TCP_IP_HEADER_BYTES);
            self.tsq_limit_for(skb)
        })
    }

    /// Bytes below TCP at `now`: handed to the qdisc or NIC and not yet completed.
    #[must_use]
    pub fn below_tcp(&self, now: Time) -> u64 {
        let done: u64 = self
            .completions
            .iter()
            .take_while(|&&(t, _)| t <= now)
            .map(|&(_, b)| u64::from(b))
            .sum();
        self.below_tcp - done
    }

    /// Whether the socket is TSQ-throttled.
    #[must_use]
    pub fn tsq_throttled(&self) -> bool {
        self.tsq_throttled
    }

    /// Bookkeeping after the recovery state machine moved: counters, the end of a probe
    /// episode, and the CWR flag a new reduction queues.
    fn note_transition(&mut self, t: Transition) {
        if t.entered_recovery {
            self.counters.fast_recoveries += 1;
            self.tlp_high_seq = None;
        }
        if t.reduction_started {
            // `tcp_init_cwnd_reduction` ends any TLP episode (the reduction answers the
            // signal) and queues CWR on the next new segment (`tcp_ecn_queue_cwr`).
            self.tlp_high_seq = None;
            self.cwr_pending = self.ecn != EcnMode::Off;
        }
        if t.entered_cwr {
            self.counters.ecn_reductions += 1;
        }
        if t.tlp_reduced {
            self.counters.fast_recoveries += 1;
        }
        self.counters.min_cwnd = self.rec.min_cwnd();
    }

    // ----- application -----

    /// The application starts at `now`. A bulk application hands over everything at once
    /// (`size`, or without end); a rate-limited one writes its first segment now and the
    /// following ones at its rate ([`Sender::app_refresh`]).
    pub fn start(&mut self, now: Time, out: &mut Vec<Outgoing>) {
        self.started = true;
        self.app_cap = self.total_segs.unwrap_or(u64::MAX);
        if self.app_rate.is_some() {
            self.app_t0 = now;
            self.app_end = 0;
            self.app_next = now;
            self.app_refresh(now);
        } else {
            self.app_end = self.app_cap;
        }
        self.cc.init(now, &mut self.st);
        self.update_pacing_rate();
        self.try_send(now, out);
    }

    /// The application stops handing data to TCP at `now`; what was handed over is still
    /// delivered. A bulk application counts as having handed over what TCP has sent (its
    /// unsent data is dropped), a rate-limited one what it has written by `now`.
    pub fn stop_app(&mut self, now: Time) {
        if self.app_rate.is_some() {
            self.app_refresh(now);
        } else {
            self.app_end = self.app_end.min(self.snd_nxt);
        }
        self.app_cap = self.app_end;
        self.app_next = Time::MAX;
    }

    /// A rate-limited application's writes up to `now`: segment `k` is written at
    /// `app_t0 + ⌊k·mss·8·10⁹ / rate⌋` ns, so by `now` = `app_t0 + Δ` the written segments are
    /// those with `k·mss·8·10⁹ < (Δ + 1)·rate`, i.e. `⌈(Δ + 1)·rate / (mss·8·10⁹)⌉` of them,
    /// capped by `app_cap`. Returns at once before the next write is due (and always for
    /// bulk applications, whose `app_next` is `Time::MAX`).
    #[inline]
    fn app_refresh(&mut self, now: Time) {
        if now < self.app_next {
            return;
        }
        let Some(rate) = self.app_rate else {
            return;
        };
        let seg_bits_ns = u128::from(self.mss) * 8 * 1_000_000_000;
        let elapsed = u128::from(now.saturating_since(self.app_t0).as_nanos());
        let written = ((elapsed + 1) * u128::from(rate)).div_ceil(seg_bits_ns);
        let written = u64::try_from(written).unwrap_or(u64::MAX).min(self.app_cap);
        self.app_end = written;
        self.app_next = if written < self.app_cap {
            let at = u128::from(written) * seg_bits_ns / u128::from(rate);
            self.app_t0 + Dur(u64::try_from(at).unwrap_or(u64::MAX))
        } else {
            Time::MAX
        };
    }

    // ----- ACK processing -----

    /// Process an ACK arriving at `now`.
    pub fn on_ack(&mut self, now: Time, ack: &Payload, out: &mut Vec<Outgoing>) {
        let Payload::Ack {
            ack,
            sack: packed,
            dsack,
            tsecr,
            ece,
            ce_count,
        } = *ack
        else {
            return;
        };
        if ack > self.snd_nxt || ack < self.snd_una || !self.started {
            return; // old or invalid
        }
        let prior_in_flight = self.in_flight();
        let prior_una = self.snd_una;
        let prior_fack = self.fack;
        let mut rs = self.rate.begin_ack();
        let mut rtt_first: Option<Time> = None; // earliest xmit of never-retransmitted, cum-acked
        let mut rtt_last: Option<Time> = None; // latest xmit of never-retransmitted delivered
        let mut sack_first: Option<Time> = None;
        let mut any_retrans_acked = false;
        let mut retrans_cum_acked = false;

        // SACK blocks (skipping the DSACK block), minus what the previous ACK already reported.
        let mut sack = [SeqRange::default(); MAX_SACK_BLOCKS];
        let n_blocks = packed.len();
        for (i, b) in sack.iter_mut().enumerate().take(n_blocks) {
            *b = packed.get(ack, i);
        }
        let first = usize::from(dsack).min(n_blocks);
        let blocks = &sack[first..n_blocks];
        for b in blocks {
            let lo = b.start.max(ack);
            let hi = b.end.min(self.snd_nxt);
            if lo >= hi {
                continue;
            }
            let mut pieces = [(lo, hi); 1 + MAX_SACK_BLOCKS];
            let mut np = 1;
            for c in &self.sack_cache[..self.n_sack_cache] {
                let mut next = [(0, 0); 1 + MAX_SACK_BLOCKS];
                let mut nn = 0;
                for &(s, e) in &pieces[..np] {
                    // subtract [c.start, c.end) from [s, e)
                    if c.end <= s || c.start >= e {
                        next[nn] = (s, e);
                        nn += 1;
                    } else {
                        if c.start > s {
                            next[nn] = (s, c.start);
                            nn += 1;
                        }
                        if c.end < e && nn < next.len() {
                            next[nn] = (c.end, e);
                            nn += 1;
                        }
                    }
                }
                pieces = next;
                np = nn;
            }
            for &(s, e) in &pieces[..np] {
                for seq in s..e {
                    let i = (seq - self.snd_una) as usize;
                    let seg = self.segs[i];
                    if seg.has(F_SACKED) {
                        continue;
                    }
                    self.segs[i].flags |= F_SACKED;
                    self.sacked_out += 1;
                    self.on_sacked(now, seq, seg, &mut rs, prior_fack);
                    let sent = seg.rec.sent_time;
                    if seg.tx_count == 0 {
                        sack_first = Some(sack_first.map_or(sent, |t| t.min(sent)));
                        rtt_last = Some(rtt_last.map_or(sent, |t| t.max(sent)));
                    } else {
                        any_retrans_acked = true;
                    }
                    self.fack = self.fack.max(seq + 1);
                }
            }
        }
        self.n_sack_cache = blocks.len();
        self.sack_cache[..blocks.len()].copy_from_slice(blocks);

        // Cumulative ACK.
        while self.snd_una < ack {
            let seg = self
                .segs
                .pop_front()
                .expect("scoreboard shorter than window");
            let seq = self.snd_una;
            self.snd_una += 1;
            if seg.has(F_SACKED) {
                self.sacked_out -= 1;
                continue;
            }
            if seg.has(F_LOST) {
                self.lost_out -= 1;
            }
            if seg.has(F_RETRANS) {
                self.retrans_out -= 1;
            }
            // The entry is gone: the bookkeeping below works on a copy.
            let mut s = seg;
            self.on_delivered(now, seq, &mut s, &mut rs, prior_fack);
            let sent = seg.rec.sent_time;
            if seg.tx_count == 0 {
                rtt_first = Some(rtt_first.map_or(sent, |t| t.min(sent)));
                rtt_last = Some(rtt_last.map_or(sent, |t| t.max(sent)));
            } else {
                any_retrans_acked = true;
                retrans_cum_acked = true;
            }
            self.fack = self.fack.max(seq + 1);
        }
        // Karn (Linux FLAG_RETRANS_DATA_ACKED): no sequence RTT from a cumulative ACK that also
        // covers retransmitted data.
        if retrans_cum_acked {
            rtt_first = None;
        }
        let una_advanced = self.snd_una > prior_una;
        let acked_sacked = rs.delivered(&self.rate) as u32;
        // ECN feedback (Linux `tcp_ack`: FLAG_ECE from `tcp_ecn_rcv_ecn_echo`, or the AccECN
        // counter's change from `tcp_accecn_process`).
        let ce_signal = match self.ecn {
            EcnMode::Off => false,
            EcnMode::Classic => {
                if ece {
                    self.rate.add_delivered_ce(u64::from(acked_sacked));
                }
                ece
            }
            EcnMode::L4s => {
                let delta = ce_count.wrapping_sub(self.last_ce_count);
                self.last_ce_count = ce_count;
                self.rate.add_delivered_ce(u64::from(delta));
                delta > 0
            }
        };
        if ce_signal {
            self.counters.ce_echoes += 1;
        }

        // RTT (Linux tcp_ack_update_rtt: cum-acked first, then SACK, then the TS echo).
        let seq_rtt = rtt_first.or(sack_first).map(|t| now.saturating_since(t));
        let ts_rtt = (any_retrans_acked && (una_advanced || acked_sacked > 0))
            .then(|| now.saturating_since(tsecr));
        // Linux `tcp_ack_update_rtt`: the minimum takes the newest segment's RTT (`ca_rtt`), the
        // smoothed RTT the oldest's (`seq_rtt`), both only when a Karn-safe sample exists.
        let mut ca_rtt = None;
        if let Some(r) = seq_rtt.or(ts_rtt) {
            let ca = if seq_rtt.is_some() {
                rtt_last.map_or(r, |t| now.saturating_since(t))
            } else {
                r
            };
            self.rtt.min_sample(now, ca.max(Dur(1)));
            self.rtt.smooth(r);
            self.backoff = 0;
            ca_rtt = Some(ca);
        }
        if let Some(r) = ca_rtt {
            self.rtt_hist.record(r.as_nanos());
        }

        // RACK: loss detection on this ACK.
        let lost_before = self.rate.lost();
        if self.rack_advanced {
            self.rack_advanced = false;
            self.rack_detect_loss(now);
        }

        // TLP outcome (Linux `tcp_process_tlp_ack`): a probe that sent new data, or whose
        // retransmission was reported as a duplicate (DSACK), or a pure duplicate ACK after it,
        // ends the episode; an ACK beyond the probe without DSACK means the probe repaired a
        // loss, which is answered with one cwnd reduction.
        let mut tlp_reduce = false;
        if let Some(h) = self.tlp_high_seq
            && ack >= h
        {
            if !self.tlp_retrans || dsack {
                self.tlp_high_seq = None;
            } else if ack > h {
                self.tlp_high_seq = None;
                tlp_reduce = true;
            } else if !una_advanced && acked_sacked == 0 {
                self.tlp_high_seq = None;
            }
        }

        // Recovery state machine (tcp_fastretrans_alert, simplified to SACK + RACK).
        let newly_lost = (self.rate.lost() - lost_before) as u32;
        let sig = AckSignals {
            snd_una: self.snd_una,
            snd_nxt: self.snd_nxt,
            una_advanced,
            sacked_out: self.sacked_out,
            lost_out: self.lost_out,
            in_flight: self.in_flight(),
            acked_sacked,
            newly_lost,
            ecn_echo: ce_signal,
            tlp_repaired: tlp_reduce,
            cwnd_limited: self.cwnd_limited,
            reordering_seen: self.reordering_seen,
        };
        let ackinfo = self.ack_info(acked_sacked, ca_rtt, prior_in_flight);
        let t = self
            .rec
            .on_ack(now, self.cc.as_mut(), &mut self.st, &sig, &ackinfo);
        self.note_transition(t);

        // Delivery-rate sample (tcp_rate_gen), after loss detection as in Linux `tcp_ack`.
        let mut sample = self.rate.generate(now, &rs, newly_lost, self.rtt.min_rtt());
        sample.rtt = ca_rtt;
        if rs.prior().is_some() {
            // Linux FLAG_ACK_MAYBE_DELAYED (`tcp_clean_rtx_queue`): a lone runt segment newly
            // acknowledged cumulatively, with nothing SACKed or lost on this ACK.
            sample.is_ack_delayed = acked_sacked == 1
                && self.snd_una == prior_una + 1
                && self.seg_len(prior_una) < self.mss
                && newly_lost == 0
                && self.sacked_out == 0;
        }

        // Congestion control (tcp_cong_control).
        self.st.app_limited = self.rate.is_app_limited();
        self.rec
            .cong_control(now, self.cc.as_mut(), &mut self.st, &sample, &sig, &ackinfo);
        self.counters.min_cwnd = self.rec.min_cwnd();
        self.update_pacing_rate();

        if let Some(n) = self.total_segs
            && self.snd_una >= n
            && self.completed_at.is_none()
        {
            self.completed_at = Some(now);
        }

        self.try_send(now, out);
        if una_advanced || acked_sacked > 0 {
            self.rearm_timer(now);
        }
        self.record(now, "ack");
    }

    /// What the controller hooks of this ACK receive (`ca_state` is set by the recovery state
    /// machine at each call).
    fn ack_info(&self, acked_sacked: u32, rtt: Option<Dur>, prior_in_flight: u32) -> AckInfo {
        AckInfo {
            acked_sacked,
            pkts_acked: acked_sacked,
            rtt,
            srtt: self.rtt.srtt(),
            min_rtt: self.rtt.min_rtt(),
            in_flight: self.in_flight(),
            prior_in_flight,
            is_cwnd_limited: self.cwnd_limited,
            paced: self.is_paced(),
            snd_nxt: self.snd_nxt,
            snd_una: self.snd_una,
            ca_state: Some(self.rec.state()),
            total_lost: self.rate.lost(),
            wstamp: self.wstamp,
            total_delivered_ce: self.rate.delivered_ce(),
        }
    }

    /// A segment was newly SACKed (still in the scoreboard; `seg` is a copy taken before).
    fn on_sacked(&mut self, now: Time, seq: u64, seg: Seg, rs: &mut RateAck, prior_fack: u64) {
        let i = (seq - self.snd_una) as usize;
        if seg.has(F_LOST) {
            self.lost_out -= 1;
            self.segs[i].flags &= !F_LOST;
        }
        if seg.has(F_RETRANS) {
            self.retrans_out -= 1;
            self.segs[i].flags &= !F_RETRANS;
        }
        // The rate record in the scoreboard is marked used, so the later cumulative ACK of
        // this segment does not sample it again.
        self.rate.on_delivered(rs, &mut self.segs[i].rec, seq);
        self.on_delivered_rack(now, seq, seg, prior_fack);
    }

    /// A segment was newly acknowledged cumulatively (`seg`: its entry, already removed).
    fn on_delivered(
        &mut self,
        now: Time,
        seq: u64,
        seg: &mut Seg,
        rs: &mut RateAck,
        prior_fack: u64,
    ) {
        self.rate.on_delivered(rs, &mut seg.rec, seq);
        self.on_delivered_rack(now, seq, *seg, prior_fack);
    }

    /// RACK and reordering bookkeeping shared by SACKed and cumulatively acknowledged
    /// segments.
    fn on_delivered_rack(&mut self, now: Time, seq: u64, seg: Seg, prior_fack: u64) {
        // RACK (RFC 8985 §6.2 steps 1–2; Linux tcp_rack_advance).
        let sent = seg.rec.sent_time;
        let rtt = now.saturating_since(sent);
        let min_rtt = self.rtt.min_rtt().unwrap_or(Dur::ZERO);
        if !(seg.tx_count > 0 && rtt < min_rtt) {
            self.rack_rtt = rtt;
            if sent > self.rack_xmit || (sent == self.rack_xmit && seq + 1 > self.rack_end) {
                self.rack_xmit = sent;
                self.rack_end = seq + 1;
            }
            self.rack_advanced = true;
        }
        // Reordering: a never-retransmitted segment below the highest delivered (RFC 8985 §6.2
        // step 3).
        if seg.tx_count == 0 && seq + 1 < prior_fack {
            self.reordering_seen = true;
        }
    }

    /// RFC 8985 §6.2 step 4: the reordering window.
    fn reo_wnd(&self) -> Dur {
        // Linux `tcp_rack_reo_wnd`: `icsk_ca_state >= TCP_CA_Recovery` (Recovery or Loss).
        if !self.reordering_seen
            && (matches!(self.rec.state(), CaState::Recovery | CaState::Loss)
                || self.sacked_out >= DUP_THRESH)
        {
            return Dur::ZERO;
        }
        let min_rtt = self.rtt.min_rtt().unwrap_or(Dur::ZERO);
        let w = Dur(min_rtt.0 / 4);
        match self.rtt.srtt() {
            Some(s) => w.min(s),
            None => w,
        }
    }

    /// RFC 8985 §6.2 step 5 (Linux `tcp_rack_detect_loss`), walking the send-ordered list.
    fn rack_detect_loss(&mut self, now: Time) {
        // Computed only if a segment sent before the RACK segment is still outstanding (rare
        // without loss: the front of the list is usually acknowledged).
        let mut reo = None;
        self.reo_at = None;
        while let Some(&(seq, ts)) = self.tsorted.front() {
            let valid = seq >= self.snd_una && {
                let s = &self.segs[(seq - self.snd_una) as usize];
                // Stale: re-sent since, SACKed, or marked lost and awaiting retransmission.
                s.rec.sent_time == ts && !s.has(F_SACKED) && (s.has(F_RETRANS) || !s.has(F_LOST))
            };
            if !valid {
                self.tsorted.pop_front();
                continue;
            }
            // Only segments sent before the RACK segment can be judged.
            if !(ts < self.rack_xmit || (ts == self.rack_xmit && seq + 1 < self.rack_end)) {
                break;
            }
            let reo = *reo.get_or_insert_with(|| self.reo_wnd());
            let deadline = ts + self.rack_rtt + reo;
            if deadline <= now {
                self.tsorted.pop_front();
                self.mark_lost(now, seq);
            } else {
                self.reo_at = Some(deadline);
                break;
            }
        }
    }

    fn mark_lost(&mut self, now: Time, seq: u64) {
        let i = (seq - self.snd_una) as usize;
        let seg = &mut self.segs[i];
        if seg.has(F_RETRANS) {
            seg.flags &= !F_RETRANS;
            self.retrans_out -= 1;
        }
        if !seg.has(F_LOST) {
            seg.flags |= F_LOST;
            self.lost_out += 1;
        }
        let rec = seg.rec;
        let info = LostInfo {
            tx_in_flight: rec.tx_in_flight,
            prior_delivered: rec.delivered,
            total_lost: self.rate.lost() + 1,
            total_delivered: self.rate.delivered(),
            is_app_limited: rec.is_app_limited,
            tx_lost: rec.lost,
        };
        self.rate.on_lost();
        self.counters.lost += 1;
        self.lost_q.push(Reverse(seq));
        self.cc.on_packet_lost(now, &mut self.st, &info);
    }

    fn update_pacing_rate(&mut self) {
        if !self.need_rate {
            return; // no rule of this socket reads the rate
        }
        if let Some(r) = self.cc.pacing_rate() {
            self.pacing_rate = Some(r);
            return;
        }
        // tcp_update_pacing_rate.
        let Some(srtt) = self.rtt.srtt() else {
            self.pacing_rate = None;
            return;
        };
        let ratio = if self.st.cwnd < self.st.ssthresh / 2 {
            PACING_SS_RATIO
        } else {
            PACING_CA_RATIO
        };
        let packets_out = self.snd_nxt - self.snd_una;
        let segs = u64::from(self.st.cwnd).max(packets_out);
        let num = u64::from(self.mss) * segs * ratio;
        let srtt_ns = srtt.as_nanos().max(1);
        // num · 10^9 / 100 / srtt, exactly; in u64 when it fits (it does for any realistic
        // window), else in u128.
        let bytes_per_s = match num.checked_mul(10_000_000) {
            Some(n) => n / srtt_ns,
            None => (u128::from(num) * 10_000_000 / u128::from(srtt_ns)).min(u128::from(u64::MAX))
                as u64,
        };
        self.pacing_rate = Some(bytes_per_s);
    }

    // ----- timers -----

    fn rearm_timer(&mut self, now: Time) {
        if self.snd_nxt == self.snd_una {
            self.timer = None;
            self.reo_at = None;
            return;
        }
        let rto = self.rto_interval();
        let tlp_ok =
            self.tlp_high_seq.is_none() && matches!(self.rec.state(), CaState::Open | CaState::Cwr);
        if tlp_ok {
            let packets_out = self.snd_nxt - self.snd_una;
            let pto = match self.rtt.srtt() {
                Some(s) => {
                    Dur(2 * s.0)
                        + if packets_out == 1 {
                            TLP_SINGLE_EXTRA
                        } else {
                            TLP_EXTRA
                        }
                }
                None => Dur::from_secs(1),
            };
            self.timer = Some((Timer::Probe, now + pto.min(rto)));
        } else {
            self.timer = Some((Timer::Rto, now + rto));
        }
    }

    fn rto_interval(&self) -> Dur {
        let base = self.rtt.rto();
        let mut r = base;
        for _ in 0..self.backoff {
            r = Dur(r.0.saturating_mul(2));
            if r >= RTO_MAX {
                return RTO_MAX;
            }
        }
        r.min(RTO_MAX)
    }

    /// Run due timers at `now` (including the TSQ wakeup).
    pub fn on_timer(&mut self, now: Time, out: &mut Vec<Outgoing>) {
        let tsq_due = self.tsq_wake.is_some_and(|t| t <= now);
        if let Some(t) = self.pace_at
            && t <= now
        {
            self.pace_at = None;
        }
        if let Some(t) = self.reo_at
            && t <= now
        {
            self.reo_at = None;
            // tcp_rack_reo_timeout.
            let before = self.rate.lost();
            self.rack_detect_loss(now);
            // Linux `tcp_rack_reo_timeout` enters recovery from any state but Recovery.
            if self.rate.lost() > before {
                let in_flight = self.in_flight();
                let sig = AckSignals {
                    snd_una: self.snd_una,
                    snd_nxt: self.snd_nxt,
                    sacked_out: self.sacked_out,
                    lost_out: self.lost_out,
                    in_flight,
                    newly_lost: (self.rate.lost() - before) as u32,
                    ..AckSignals::default()
                };
                let info = self.ack_info(0, None, in_flight);
                let t =
                    self.rec
                        .on_reo_timeout_loss(now, self.cc.as_mut(), &mut self.st, &sig, &info);
                self.note_transition(t);
            }
            if self.timer.is_some_and(|(k, _)| k == Timer::Probe) {
                self.timer = Some((Timer::Rto, now + self.rto_interval()));
            }
            self.record(now, "reorder_timer");
        }
        if let Some((kind, t)) = self.timer
            && t <= now
        {
            self.timer = None;
            match kind {
                Timer::Probe => self.send_loss_probe(now, out),
                Timer::Rto => self.on_rto(now),
            }
            self.try_send(now, out);
            self.record(now, if kind == Timer::Probe { "probe" } else { "rto" });
            return;
        }
        self.try_send(now, out);
        if tsq_due {
            self.record(now, "tsq");
        }
    }

    /// TSQ tasklet (`tcp_tsq_handler`): TX completions brought a throttled socket back within
    /// its limit at `now`; try to send.
    pub fn tsq_kick(&mut self, now: Time, out: &mut Vec<Outgoing>) {
        if !self.tsq_throttled {
            return;
        }
        self.try_send(now, out);
        self.record(now, "tsq");
    }

    /// The device reports that `bytes` of this socket's data finish transmission at `at`
    /// (`tcp_wfree`): at once if `at <= now`, else in advance. Advance reports may come in any
    /// order. Returns what the engine must do.
    #[inline]
    pub fn tx_completed(&mut self, at: Time, bytes: u32, now: Time) -> TxNote {
        if self.host.instant_completion {
            return TxNote::None;
        }
        if self.trace_tx {
            self.record(at, "tx_done");
        }
        if at <= now {
            self.below_tcp -= u64::from(bytes);
            return if self.tsq_throttled && self.below_tcp <= self.tsq_limit_now {
                TxNote::Kick
            } else {
                TxNote::None
            };
        }
        let in_order = self.completions.push(at, bytes);
        if self.tsq_throttled && self.tsq_wake.is_none() {
            // Earlier reports did not suffice; with an in-order report only the total can.
            self.tsq_wake = if in_order {
                (self.below_tcp - self.completions.bytes <= self.tsq_limit_now).then_some(at)
            } else {
                self.tsq_wake_time()
            };
            if self.tsq_wake.is_some() {
                return TxNote::Rearm;
            }
        }
        TxNote::None
    }

    /// Account the completions due by `now`.
    #[inline]
    fn settle_completions(&mut self, now: Time) {
        self.below_tcp -= self.completions.settle(now);
    }

    /// The earliest reported completion after which the bytes below TCP are within
    /// `tsq_limit_now`.
    fn tsq_wake_time(&self) -> Option<Time> {
        let need = self.below_tcp.saturating_sub(self.tsq_limit_now);
        let mut freed = 0;
        for &(t, b) in self.completions.iter() {
            freed += u64::from(b);
            if freed >= need {
                return Some(t);
            }
        }
        None
    }

    /// `tcp_small_queue_check` for an skb of `skb_bytes` (`factor` 1 for retransmissions):
    /// true = throttled.
    fn tsq_blocks(&mut self, skb_bytes: u64, factor: u32) -> bool {
        if !self.host.tsq || self.below_tcp <= (2 * skb_bytes).min(self.host.limit_output_bytes) {
            return false; // below any limit this skb can get, whatever the rate
        }
        let limit = self.tsq_limit_for(skb_bytes) << factor;
        if self.below_tcp <= limit || self.snd_una == self.snd_nxt {
            return false; // within budget, or nothing outstanding (`tcp_rtx_queue_empty`)
        }
        // Linux `tcp_write_xmit` ends with is_cwnd_limited = in_flight >= cwnd: a socket held
        // back by TSQ below its window is not cwnd-limited, so its window stops growing
        // (`tcp_cwnd_validate`, `tcp_is_cwnd_limited`; Linux keeps the flag for the rest of
        // the window in which it was last set, this model clears it at once).
        self.cwnd_limited = false;
        self.tsq_throttled = true;
        self.tsq_limit_now = limit;
        self.tsq_wake = self.tsq_wake_time();
        self.counters.tsq_throttles += 1;
        true
    }

    /// Append a trace row if tracing is on.
    fn record(&mut self, now: Time, event: &'static str) {
        if self.trace.is_none() {
            return;
        }
        let point = TracePoint {
            t_s: now.as_secs_f64(),
            event,
            snd_una: self.snd_una,
            snd_nxt: self.snd_nxt,
            cwnd: self.st.cwnd,
            ssthresh: (self.st.ssthresh < INFINITE_SSTHRESH).then_some(self.st.ssthresh),
            in_flight: self.in_flight(),
            ca_state: match self.rec.state() {
                CaState::Open => "open",
                CaState::Disorder => "disorder",
                CaState::Cwr => "cwr",
                CaState::Recovery => "recovery",
                CaState::Loss => "loss",
            },
            cc_state: self.cc.state(),
            srtt_ms: self.rtt.srtt().map(Dur::as_millis_f64),
            below_tcp: self.below_tcp(now),
            tsq_budget: self.tsq_budget(),
            tsq_shift: self.tsq_shift(),
            tso_segs: self.tso_goal(),
            sk_pacing_rate: self.pacing_rate,
        };
        if let Some(t) = &mut self.trace {
            t.push(point);
        }
    }

    /// The recorded trace (empty unless `FlowConfig::trace` was set), in time order.
    pub fn take_trace(&mut self) -> Vec<TracePoint> {
        let mut t = self.trace.take().unwrap_or_default();
        if self.trace_tx {
            // `tx_done` rows are recorded when the completion is reported, which may be ahead
            // of time; a stable sort keeps the order of rows at equal times.
            t.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
        }
        t
    }

    fn send_loss_probe(&mut self, now: Time, out: &mut Vec<Outgoing>) {
        if self.snd_nxt == self.snd_una {
            return;
        }
        self.counters.tlps += 1;
        let stamp = self.wstamp.max(now);
        if self.snd_nxt < self.app_end {
            let len = self.seg_len(self.snd_nxt);
            self.transmit_new(now, stamp, 1, out);
            self.after_skb(now, stamp, 1, len, out);
            self.tlp_retrans = false;
        } else {
            let seq = self.snd_nxt - 1;
            let i = (seq - self.snd_una) as usize;
            if self.segs[i].has(F_SACKED) {
                self.timer = Some((Timer::Rto, now + self.rto_interval()));
                return;
            }
            self.retransmit(now, stamp, seq, out);
            self.after_skb(now, stamp, 1, self.seg_len(seq), out);
            self.tlp_retrans = true;
        }
        self.tlp_high_seq = Some(self.snd_nxt);
        self.timer = Some((Timer::Rto, now + self.rto_interval()));
    }

    fn on_rto(&mut self, now: Time) {
        if self.snd_nxt == self.snd_una {
            return;
        }
        self.counters.rtos += 1;
        self.rto_times.push(now);
        // tcp_enter_loss: a new congestion event (new ssthresh, CA_EVENT_LOSS) unless this RTO
        // continues a recovery or an earlier RTO that has made no progress since.
        let info = self.ack_info(0, None, self.in_flight());
        self.rec
            .rto_begin(now, self.cc.as_mut(), &mut self.st, self.snd_una, &info);
        // tcp_timeout_mark_lost: every un-SACKed segment is lost, except (with RACK) those sent
        // less than one RACK RTT ago, other than the head; those stay in flight for RACK.
        self.lost_q.clear();
        let una = self.snd_una;
        for i in 0..self.segs.len() {
            let seg = self.segs[i];
            if seg.has(F_SACKED) || (i > 0 && seg.rec.sent_time + self.rack_rtt > now) {
                continue;
            }
            let seq = una + i as u64;
            if seg.has(F_LOST) && !seg.has(F_RETRANS) {
                self.lost_q.push(Reverse(seq)); // already counted, awaiting retransmission
            } else {
                self.mark_lost(now, seq);
            }
        }
        // tcp_enter_loss: cwnd = in flight + 1 (1 unless recently sent segments were spared).
        let in_flight = self.in_flight();
        self.tlp_high_seq = None;
        self.reo_at = None;
        self.rec
            .enter_loss(now, self.cc.as_mut(), &mut self.st, in_flight, self.snd_nxt);
        self.counters.min_cwnd = self.rec.min_cwnd();
        self.backoff += 1;
        self.timer = Some((Timer::Rto, now + self.rto_interval()));
    }

    // ----- transmission -----

    fn next_lost(&mut self) -> Option<u64> {
        while let Some(&Reverse(seq)) = self.lost_q.peek() {
            if seq >= self.snd_una {
                let s = &self.segs[(seq - self.snd_una) as usize];
                if s.has(F_LOST) && !s.has(F_RETRANS) && !s.has(F_SACKED) {
                    return Some(seq);
                }
            }
            self.lost_q.pop();
        }
        None
    }

    fn try_send(&mut self, now: Time, out: &mut Vec<Outgoing>) {
        if !self.started {
            return;
        }
        self.settle_completions(now);
        self.tsq_throttled = false;
        self.tsq_wake = None;
        // Take what a rate-limited application has written by now.
        self.app_refresh(now);
        loop {
            let lost = self.next_lost();
            let has_new = self.snd_nxt < self.app_end;
            if lost.is_none() && !has_new {
                // tcp_rate_check_app_limited. Checked before the pacing gate: with nothing to
                // send there is nothing to pace (Linux arms no pacing timer without data), and
                // a rate-limited application is marked app-limited as soon as TCP has sent
                // all it was given, not one pacing interval later.
                let in_flight = self.in_flight();
                if in_flight < self.st.cwnd {
                    self.rate.mark_app_limited(in_flight);
                    self.cwnd_limited = false;
                }
                break;
            }
            if self.pacing == PacingStatus::Internal && self.wstamp > now {
                self.pace_at = Some(self.wstamp);
                return;
            }
            let in_flight = self.in_flight();
            if in_flight >= self.st.cwnd {
                self.cwnd_limited = true;
                break;
            }
            let stamp = self.wstamp.max(now);
            let hdr = u64::from(TCP_IP_HEADER_BYTES);
            let (segs, payload) = match lost {
                Some(seq) => {
                    // tcp_xmit_retransmit_queue: one segment, TSQ limit doubled.
                    let len = self.seg_len(seq);
                    if self.tsq_blocks(u64::from(len) + hdr, 1) {
                        break;
                    }
                    self.lost_q.pop();
                    self.retransmit(now, stamp, seq, out);
                    (1, len)
                }
                None => {
                    // tcp_write_xmit: an skb of up to the TSO goal, within the cwnd quota.
                    let left = self.app_end - self.snd_nxt;
                    let mut segs = cwnd_quota(self.st.cwnd, in_flight);
                    if u64::from(segs) > left {
                        segs = left as u32;
                    }
                    if segs > 1 {
                        segs = self.tso_limit(segs);
                    }
                    let payload = match self.total_segs {
                        Some(_) => {
                            (segs - 1) * self.mss + self.seg_len(self.snd_nxt + u64::from(segs) - 1)
                        }
                        None => segs * self.mss,
                    };
                    if self.host.tsq && self.below_tcp > 0 {
                        let skb = u64::from(payload) + u64::from(segs) * hdr;
                        if self.tsq_blocks(skb, 0) {
                            break;
                        }
                    }
                    self.transmit_new(now, stamp, segs, out);
                    for _ in 1..segs {
                        self.transmit_new(now, stamp, 0, out);
                    }
                    (segs, payload)
                }
            };
            self.after_skb(now, stamp, segs, payload, out);
            self.rec.on_sent(segs);
        }
    }

    /// `tcp_update_skb_after_send`: after an skb of `segs` segments and `payload` bytes stamped
    /// `stamp` (= max(EDT, now)), a paced socket moves its EDT on by payload / rate, less up to
    /// half of that as credit for lateness, once 10 data segments have been sent. Marks the
    /// skb's last segment in `out` with the skb's wire bytes.
    #[inline]
    fn after_skb(&mut self, now: Time, stamp: Time, segs: u32, payload: u32, out: &mut [Outgoing]) {
        if let Some(last) = out.last_mut() {
            last.skb_bytes = payload + segs * TCP_IP_HEADER_BYTES;
        }
        let prior = self.wstamp;
        self.wstamp = stamp;
        self.counters.skbs += 1;
        if self.is_paced()
            && let Some(rate) = self.pacing_rate
            && rate > 0
            && self.data_segs_out >= PACING_MIN_SEGS
        {
            let credit = self.wstamp.saturating_since(prior);
            // Linux paces the payload length (`skb->len` in `tcp_update_skb_after_send`).
            let len_ns = u64::from(payload) * 1_000_000_000 / rate;
            let len_ns = len_ns - (len_ns / 2).min(credit.0);
            self.wstamp += Dur(len_ns);
        }
        if self.trace_tx {
            self.record(now, "xmit");
        }
    }

    /// Send the next new segment stamped `stamp`; `skb_segs` as in [`Outgoing`].
    #[inline]
    fn transmit_new(&mut self, now: Time, stamp: Time, skb_segs: u32, out: &mut Vec<Outgoing>) {
        let seq = self.snd_nxt;
        if self.snd_nxt == self.snd_una {
            // Restart after idle (tcp_cwnd_restart, Linux `tcp_slow_start_after_idle` = 1), except
            // for controllers that set cwnd themselves (`tcp_slow_start_after_idle_check` returns
            // early when the controller has `cong_control`).
            if self.counters.segments_sent > 0 {
                let idle = now.saturating_since(self.last_send);
                self.rec.on_tx_start(
                    now,
                    self.cc.as_mut(),
                    &mut self.st,
                    idle,
                    self.rtt.rto(),
                    self.initial_window,
                    self.rate.is_app_limited(),
                );
            }
        }
        let fresh = self.snd_nxt == self.snd_una;
        self.snd_nxt += 1;
        self.segs.push_back(Seg::default());
        self.emit(now, stamp, seq, fresh, skb_segs, out);
    }

    fn retransmit(&mut self, now: Time, stamp: Time, seq: u64, out: &mut Vec<Outgoing>) {
        let i = (seq - self.snd_una) as usize;
        self.segs[i].flags |= F_RETRANS | F_EVER_RETRANS;
        self.segs[i].tx_count += 1;
        self.retrans_out += 1;
        self.counters.retransmits += 1;
        self.emit(now, stamp, seq, false, 1, out);
    }

    /// Put segment `seq` on the wire with departure stamp `stamp`. `fresh_flight`: nothing was
    /// outstanding before it.
    #[inline]
    fn emit(
        &mut self,
        now: Time,
        stamp: Time,
        seq: u64,
        fresh_flight: bool,
        skb_segs: u32,
        out: &mut Vec<Outgoing>,
    ) {
        // in_flight already counts this segment, as BBRv3's tx_in_flight does.
        let in_flight = self.in_flight();
        let app_limited = self.rate.is_app_limited();
        let i = (seq - self.snd_una) as usize;
        let tx_count = self.segs[i].tx_count;
        // tcp_rate_skb_sent: a fresh flight restarts the rate clocks (at the skb's stamp).
        self.segs[i].rec = self
            .rate
            .on_sent(stamp, fresh_flight, in_flight, tx_count > 0);
        // RFC 3168 §6.1.5 (Linux `tcp_ecn_send`): classic ECN sends retransmissions Not-ECT;
        // Accurate ECN keeps them ECT (RFC 9768 allows it; Linux for ECN-needing controllers).
        // The CWR flag rides on the next new segment.
        let ecn = match self.ecn {
            EcnMode::Off => Ecn::NotEct,
            EcnMode::Classic if tx_count > 0 => Ecn::NotEct,
            EcnMode::Classic => Ecn::Ect0,
            EcnMode::L4s => Ecn::Ect1,
        };
        let cwr = self.cwr_pending && tx_count == 0;
        if cwr {
            self.cwr_pending = false;
        }
        self.tsorted.push_back((seq, stamp));
        let len = self.seg_len(seq);
        let sent = SentInfo {
            seq,
            bytes: len,
            in_flight,
            is_retrans: tx_count > 0,
            is_app_limited: app_limited,
        };
        self.cc.on_packet_sent(now, &self.st, &sent);
        let wire = len + TCP_IP_HEADER_BYTES;
        out.push(Outgoing {
            payload: Payload::Data {
                seq,
                tx_count,
                tsval: stamp,
                cwr,
            },
            wire_bytes: wire,
            tstamp: stamp,
            skb_segs,
            skb_bytes: 0,
            ecn,
        });
        if !self.host.instant_completion {
            self.below_tcp += u64::from(wire);
        }
        self.counters.segments_sent += 1;
        self.data_segs_out += 1;
        self.last_send = now;
        // Arm the RTO / probe timer if none is pending (tcp_event_new_data_sent / rearm).
        if self.timer.is_none() {
            self.rearm_timer(now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::NodeId;
    use crate::packet::SackBlocks;
    use cclab_cc::CcSpec;

    /// Linux `tcp_update_skb_after_send`: after the first 10 data segments, each departure moves
    /// the earliest departure time on by *payload* length / pacing rate (headers are not
    /// counted), claiming back at most half of it from lateness. With one RTT sample of 40 ms,
    /// cwnd 20 after slow start and Linux's 200 % slow-start ratio, the rate is
    /// 2·1448·20/0.04 = 1,448,000 B/s, so paced segments leave exactly 1 ms apart (1.036 ms if
    /// the 52 header bytes were counted); the first paced one claims half its slot back.
    #[test]
    fn edt_pacing_spaces_departures_by_payload_length() {
        let mut cfg = FlowConfig::bulk(
            "f",
            NodeId(0),
            NodeId(1),
            CcSpec::default_for("newreno").unwrap(),
        );
        cfg.pacing = PacingMode::On;
        let mut s = Sender::new(&cfg, 1);
        let mut out = Vec::new();
        s.start(Time::ZERO, &mut out);
        assert_eq!(out.len(), 10, "the initial window leaves unpaced");
        let t0 = Time::ZERO + Dur::from_millis(40);
        let ack = Payload::Ack {
            ack: 10,
            sack: SackBlocks::default(),
            dsack: false,
            tsecr: Time::ZERO,
            ece: false,
            ce_count: 0,
        };
        out.clear();
        s.on_ack(t0, &ack, &mut out);
        assert_eq!(s.pacing_rate(), Some(1_448_000));
        let mut departures = vec![t0; out.len()];
        for _ in 0..4 {
            let next = s
                .next_wakeup()
                .expect("paced sender waits for its departure time");
            out.clear();
            s.on_timer(next, &mut out);
            departures.extend(std::iter::repeat_n(next, out.len()));
        }
        assert_eq!(departures[0], t0);
        assert_eq!(
            departures[1] - departures[0],
            Dur::from_micros(500),
            "half claimed back"
        );
        for w in departures[1..].windows(2) {
            assert_eq!(w[1] - w[0], Dur::from_millis(1), "{departures:?}");
        }
    }

    /// cwnd after an idle period longer than the RTO (`tcp_cwnd_restart`): a loss-based
    /// controller restarts: cwnd halves per RTO idle, not below min(IW, cwnd) (NewReno: 20 →
    /// 10); a controller that owns cwnd (BBR, `cong_control`) keeps it, as Linux `tcp_slow_start_after_idle_check` returns early for it. The application
    /// writes one segment every 2 s (`app_rate_bps`), so the second write finds the connection
    /// idle for 1.96 s, far above the RTO.
    #[test]
    fn idle_restart_shrinks_cwnd_only_for_loss_based_controllers() {
        let after_idle = |cc: &str| {
            let mut cfg =
                FlowConfig::bulk("f", NodeId(0), NodeId(1), CcSpec::default_for(cc).unwrap());
            cfg.app_rate_bps = Some(1448 * 8 / 2);
            let mut s = Sender::new(&cfg, 1);
            let mut out = Vec::new();
            s.start(Time::ZERO, &mut out);
            assert_eq!(out.len(), 1, "one segment written so far");
            let ack = Payload::Ack {
                ack: 1,
                sack: SackBlocks::default(),
                dsack: false,
                tsecr: Time::ZERO,
                ece: false,
                ce_count: 0,
            };
            out.clear();
            s.on_ack(Time::ZERO + Dur::from_millis(40), &ack, &mut out);
            // An app-limited flow does not grow cwnd; set it above IW by hand.
            s.st.cwnd = 20;
            let before = s.cwnd_state().cwnd;
            let next = s.next_wakeup().expect("the next write wakes the sender");
            assert_eq!(next, Time::ZERO + Dur::from_secs(2));
            out.clear();
            s.on_timer(next, &mut out);
            assert_eq!(out.len(), 1, "the second write is sent");
            (before, s.cwnd_state().cwnd)
        };
        assert_eq!(after_idle("newreno"), (20, 10));
        assert_eq!(after_idle("bbr3"), (20, 20));
        assert_eq!(after_idle("bbr1"), (20, 20));
    }

    /// `tcp_small_queue_check` on its own. An unpaced NewReno socket (TSO off, so an skb is one
    /// 1500-byte segment) with `tcp_limit_output_bytes` = 4000 and no RTT sample yet (rate
    /// unlimited, so the cap rules): segments 0–2 pass (below TCP ≤ 2 · 1500 each time),
    /// segment 3 finds 4500 > 4000 bytes below TCP with data outstanding and is held. The
    /// completions, reported ahead of time 1 µs apart, wake the socket at the first one that
    /// brings it back within 4000 (the first: 3000); it sends one segment and is held again.
    #[test]
    fn tsq_throttles_above_the_limit_and_wakes_at_the_freeing_completion() {
        let cfg = FlowConfig::bulk(
            "f",
            NodeId(0),
            NodeId(1),
            CcSpec::default_for("newreno").unwrap(),
        );
        let host = SocketHost {
            tsq: true,
            limit_output_bytes: 4000,
            instant_completion: false,
            ..SocketHost::bare()
        };
        let mut s = Sender::with_host(&cfg, 1, host);
        let mut out = Vec::new();
        s.start(Time::ZERO, &mut out);
        assert_eq!(out.len(), 3);
        assert!(s.tsq_throttled());
        assert_eq!(s.below_tcp(Time::ZERO), 4500);
        assert_eq!(
            s.next_wakeup().map(|t| t > Time::ZERO),
            Some(true),
            "RTO only"
        );
        let rto = s.next_wakeup();
        let notes: Vec<TxNote> = (1..=3)
            .map(|i| s.tx_completed(Time(1000 * i), 1500, Time::ZERO))
            .collect();
        assert_eq!(notes, [TxNote::Rearm, TxNote::None, TxNote::None]);
        assert_eq!(s.next_wakeup(), Some(Time(1000)));
        assert!(rto > Some(Time(1000)));
        out.clear();
        s.on_timer(Time(1000), &mut out);
        assert_eq!(out.len(), 1, "one segment, then held again");
        assert!(s.tsq_throttled());
        assert_eq!(s.below_tcp(Time(1000)), 4500);
        assert_eq!(s.below_tcp(Time(3000)), 1500);
        // A completion reported as happening now frees at once and asks for a kick.
        assert_eq!(s.tx_completed(Time(1000), 1500, Time(1000)), TxNote::Kick);
    }

    /// TSO: a new-data skb is min(TSO goal, `tcp_cwnd_test` quota, data left) segments, handed
    /// over together, the first carrying the skb's segment count and the last its bytes; EDT
    /// pacing would advance per skb. The initial window of 10 leaves as two skbs of 5 (quota
    /// min(cwnd/2, cwnd − in flight)); a 3-segment transfer as one skb of 3.
    #[test]
    fn tso_skbs_follow_the_cwnd_quota() {
        let mut cfg = FlowConfig::bulk(
            "f",
            NodeId(0),
            NodeId(1),
            CcSpec::default_for("newreno").unwrap(),
        );
        let host = SocketHost {
            tso: TsoConfig::default(),
            ..SocketHost::bare()
        };
        let mut s = Sender::with_host(&cfg, 1, host);
        let mut out = Vec::new();
        s.start(Time::ZERO, &mut out);
        let firsts: Vec<u32> = out.iter().map(|o| o.skb_segs).collect();
        assert_eq!(firsts, [5, 0, 0, 0, 0, 5, 0, 0, 0, 0]);
        let lasts: Vec<u32> = out.iter().map(|o| o.skb_bytes).collect();
        assert_eq!(lasts, [0, 0, 0, 0, 7500, 0, 0, 0, 0, 7500]);
        assert_eq!(s.counters.skbs, 2);
        cfg.size = Some(3 * 1448 - 100);
        let mut s = Sender::with_host(&cfg, 1, host);
        out.clear();
        s.start(Time::ZERO, &mut out);
        assert_eq!(out.len(), 3);
        assert_eq!(out[0].skb_segs, 3);
        assert_eq!(out[2].skb_bytes, 3 * 1500 - 100);
    }

    /// Classic ECN at the sender (RFC 3168 §6.1.2, Linux `tcp_enter_cwr`): the first ECE halves
    /// ssthresh through the controller and enters CWR; further ECEs in the same window do not
    /// reduce again; the next new segment carries CWR and is ECT(0); CWR ends once an ACK
    /// covers more than high_seq, with cwnd = ssthresh. Retransmissions would be Not-ECT.
    #[test]
    fn classic_ece_reduces_once_per_window_and_sends_cwr() {
        let mut cfg = FlowConfig::bulk(
            "f",
            NodeId(0),
            NodeId(1),
            CcSpec::default_for("newreno").unwrap(),
        );
        cfg.ecn = EcnMode::Classic;
        let mut s = Sender::new(&cfg, 1);
        let mut out = Vec::new();
        s.start(Time::ZERO, &mut out);
        assert_eq!(out.len(), 10);
        assert!(out.iter().all(|o| o.ecn == Ecn::Ect0));
        let ack = |n: u64, ece: bool| Payload::Ack {
            ack: n,
            sack: SackBlocks::default(),
            dsack: false,
            tsecr: Time::ZERO,
            ece,
            ce_count: 0,
        };
        let mut t = Time::ZERO + Dur::from_millis(40);
        out.clear();
        s.on_ack(t, &ack(2, true), &mut out);
        assert_eq!(s.ca_state(), CaState::Cwr);
        assert_eq!(s.st.ssthresh, 5, "NewReno: half of the flight of 10");
        assert_eq!(s.counters.ecn_reductions, 1);
        assert_eq!(
            s.delivered_ce(),
            2,
            "every segment an ECE ACK delivers counts"
        );
        let high = s.rec.high_seq();
        let cwr: Vec<bool> = out
            .iter()
            .map(|o| matches!(o.payload, Payload::Data { cwr: true, .. }))
            .collect();
        assert_eq!(cwr.iter().filter(|c| **c).count(), 1, "{cwr:?}");
        assert!(cwr[0], "CWR rides on the first new segment");
        // More ECE within the window: no new reduction.
        for n in 3..=high {
            t += Dur::from_millis(1);
            out.clear();
            s.on_ack(t, &ack(n, true), &mut out);
        }
        assert_eq!(s.counters.ecn_reductions, 1);
        assert_eq!(s.ca_state(), CaState::Cwr, "held until above high_seq");
        out.clear();
        s.on_ack(t + Dur::from_millis(1), &ack(high + 1, false), &mut out);
        assert_eq!(s.ca_state(), CaState::Open);
        assert_eq!(s.st.cwnd, s.st.ssthresh);
    }

    /// Accurate ECN: `delivered_ce` follows the receiver's CE counter (modulo 256), and a
    /// controller that answers CE itself (TCP Prague) keeps the transport out of CWR.
    #[test]
    fn accurate_ecn_counts_ce_and_leaves_the_response_to_the_controller() {
        let mut cfg = FlowConfig::bulk(
            "f",
            NodeId(0),
            NodeId(1),
            CcSpec::default_for("cubic").unwrap(),
        );
        cfg.ecn = EcnMode::L4s;
        let mut s = Sender::new(&cfg, 1);
        let mut out = Vec::new();
        s.start(Time::ZERO, &mut out);
        assert!(out.iter().all(|o| o.ecn == Ecn::Ect1));
        let ack = |n: u64, ce_count: u8| Payload::Ack {
            ack: n,
            sack: SackBlocks::default(),
            dsack: false,
            tsecr: Time::ZERO,
            ece: false,
            ce_count,
        };
        out.clear();
        s.on_ack(Time(40_000_000), &ack(2, 1), &mut out);
        assert_eq!(s.delivered_ce(), 1);
        // CUBIC does not answer CE itself: the transport reduces once (CWR).
        assert_eq!(s.ca_state(), CaState::Cwr);
        out.clear();
        s.on_ack(Time(41_000_000), &ack(4, 3), &mut out);
        assert_eq!(s.delivered_ce(), 3);
        assert_eq!(s.counters.ecn_reductions, 1);

        // TCP Prague answers CE itself: the transport stays out of CWR and counts the marks.
        let cfg = FlowConfig::bulk(
            "p",
            NodeId(0),
            NodeId(1),
            CcSpec::default_for("prague").unwrap(),
        );
        let mut s = Sender::new(&cfg, 1);
        assert_eq!(s.ecn_mode(), EcnMode::L4s, "Prague requires L4S");
        out.clear();
        s.start(Time::ZERO, &mut out);
        assert!(out.iter().all(|o| o.ecn == Ecn::Ect1));
        out.clear();
        s.on_ack(Time(40_000_000), &ack(2, 2), &mut out);
        assert_eq!(s.delivered_ce(), 2);
        assert_eq!(s.ca_state(), CaState::Open);
        assert_eq!(s.counters.ecn_reductions, 0);
    }
}
