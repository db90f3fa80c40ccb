//! The TCP sender: SACK scoreboard, RACK-TLP loss detection, PRR recovery, RTO with backoff,
//! delivery-rate sampling, internal EDT pacing, and the congestion-controller hooks.
//!
//! Contract: the engine calls [`Sender::start`], [`Sender::on_ack`], [`Sender::on_timer`] and
//! [`Sender::stop_app`] with `now`; each appends the data segments to transmit to an output
//! buffer (as [`Payload`]s with their wire size) and leaves its next deadline in
//! [`Sender::next_wakeup`]. Per-ACK work is O(newly acknowledged segments + SACK blocks), never
//! O(window): the SACK blocks of the previous ACK are cached (Linux `recv_sack_cache`), and RACK
//! walks a send-time-ordered list from its old end (Linux `tsorted_sent_queue`). The application
//! is bulk (everything, or `size` bytes, handed over at the start), responding (a response
//! written when its request arrives, [`Sender::write_response`]) or rate-limited
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
//!   is lost once `now ≥ xmit_ts + rack_rtt + reo_wnd`; reo_wnd = min_rtt/4 × `reo_wnd_steps`
//!   capped at SRTT, and 0 when no reordering was seen and the sender is in Recovery/Loss or
//!   ≥ 3 segments are SACKed; `reo_wnd_steps` grows by one per round trip with a DSACK (once
//!   reordering was seen, not for a loss probe's DSACK) and returns to 1 after 16 recoveries
//!   without (`tcp_rack_update_reo_wnd`, RFC 8985 §6.2 step 4);
//!   (simplification: the reordering timer is armed for the earliest pending deadline, Linux
//!   arms it for the latest plus 2 ms);
//! - recovery starts when a segment is marked lost (`tcp_time_to_recover`), ends when SND.UNA
//!   reaches the recovery point; PRR (RFC 6937, `tcp_cwnd_reduction`) meters cwnd meanwhile;
//! - TLP (RFC 8985 §7, `tcp_schedule_loss_probe`/`tcp_send_loss_probe`) in Open state:
//!   PTO = 2·SRTT (+200 ms if one segment is out, else +2 ms), capped by the RTO time left;
//!   a probe sends new data if any, else retransmits the highest segment; a repaired tail loss
//!   (an ACK beyond the probe without DSACK) reduces cwnd once (`tcp_process_tlp_ack`), and
//!   entering recovery ends the probe episode (`tcp_init_cwnd_reduction`);
//! - undo (`tcp_init_undo`, `tcp_try_undo_recovery`/`_partial`/`_dsack`/`_loss`): each
//!   reduction opens an episode at SND.UNA; retransmissions count up `undo_retrans`, DSACKs of
//!   retransmitted data of the episode count it down (`tcp_check_dsack`, `tcp_sacktag_one`);
//!   when it reaches 0, or nothing was retransmitted, the reduction is undone through the
//!   controller's `undo_cwnd` (timestamps, Eifel detection, are not used: TSecr here is the
//!   last segment's TSval, not RFC 7323's `ts_recent`); an old ACK's DSACK counts but undoes
//!   only on the next ACK (Linux also runs the state machine for it);
//! - F-RTO (RFC 5682 §3, `tcp_frto` = 2): after a timeout outside a recovery, the first ACK
//!   advancing SND.UNA sends new data instead of retransmissions; delivery of never-retransmitted
//!   data sent before the timeout then undoes it (`tcp_try_undo_loss(sk, true)`), a SACK or
//!   duplicate ACK ends F-RTO. A segment whose loss mark an undo cancels has left RACK's
//!   send-ordered list if RACK marked it (as in Linux) or walked past it after a timeout
//!   marked it (Linux keeps those): only a timeout can find it lost again (deviation);
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
//!   EDT; under the fq qdisc (`SK_PACING_FQ`) TCP hands the skb over at once and fq holds it.
//!   While the controller asks for pacing (`paces_now`: Jump Start's first flight, SUSS's paced
//!   part of a round, Paced Chirping's chirps), an unpaced socket paces internally at the
//!   controller's rate, every segment from the first; a controller that sets the gap per
//!   segment (`sets_gap_per_segment`, Paced Chirping) has its rate re-read after each skb, and
//!   that gap is kept whole (no lateness credit);
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
//! - receive window (`tcp_snd_wnd_test`): new data only up to SND.UNA + the flow's fixed
//!   advertised window (whole segments); retransmissions are inside it already. A sender held
//!   by the receive window is not cwnd-limited (Linux `is_rwnd_limited`);
//! - restart after idle (`tcp_cwnd_restart`, `tcp_slow_start_after_idle` = 1, off with
//!   [`FlowConfig::slow_start_after_idle`]): when new data leaves with nothing outstanding
//!   and the socket sent nothing for longer than the RTO, cwnd halves once per RTO of
//!   idleness, not below min(IW, cwnd).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use cclab_cc::kit::{AckSignals, RateAck, RateSampler, Recovery, Transition, TxRecord, Undo};
use cclab_cc::num::{saturating_u32, u64_to_f64};
use cclab_cc::{
    AckInfo, CaState, CongestionControl, CwndState, Dur, EcnMode, INFINITE_SSTHRESH, SentInfo, Time,
};

use super::handshake::Handshake;
use super::output::{GSO_MAX_SEGS, PacingStatus, cwnd_quota, tso_autosize, tsq_limit};
use super::rtt::{RTO_MIN, RttEstimator};
use crate::config::{
    CcRtt, FlowConfig, HostConfig, HostQdisc, LIMIT_OUTPUT_BYTES, LossDetection, PacingMode,
    RtoRule, TCP_IP_HEADER_BYTES, TcpRules, TsoConfig,
};
use crate::histogram::Histogram;
use crate::packet::{Ecn, MAX_SACK_BLOCKS, Payload, SeqRange};
use crate::results::TracePoint;

mod app;
mod connect;
mod dupthresh;
mod persist;
mod rack;
mod recovery;
mod scoreboard;
#[cfg(test)]
mod tests;
mod tsq;
mod xmit;

use scoreboard::AckedTimes;
use tsq::Completions;
pub use tsq::TxNote;

/// The index in `segs` of the segment `offset` places past SND.UNA.
#[inline]
#[expect(
    clippy::cast_possible_truncation,
    reason = "every caller indexes `segs` with it: the offset is below segs.len(), a usize"
)]
fn slot(offset: u64) -> usize {
    offset as usize
}

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
    /// The handshake's SYN retransmission timer while the connection opens: its deadline
    /// mirrors [`Handshake::deadline`], so that the wake-up needs no test of its own.
    Syn,
    /// The persist timer (Linux `ICSK_TIME_PROBE0`): the peer's window is closed and nothing
    /// is outstanding ([`persist`]).
    Probe0,
}

/// The deadlines of [`Sender::next_wakeup`] by the kernel mechanism behind them
/// ([`Sender::wakeup_parts`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WakeupParts {
    /// The retransmission timer (RTO, loss probe, SYN): Linux `icsk_retransmit_timer`, a
    /// `timer_list`.
    pub retransmit: Option<Time>,
    /// RACK's reordering timer (`ICSK_TIME_REO_TIMEOUT`, on the same `timer_list`).
    pub reorder: Option<Time>,
    /// The internal pacing timer: `tp->pacing_timer`, a soft hrtimer.
    pub pacing: Option<Time>,
    /// No kernel timer: the TX completion that ends a TSQ throttle, the application's next
    /// write.
    pub other: Option<Time>,
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
    /// ACKs that carried an ECN echo (ECE, or a rise of the Accurate ECN CE counter).
    pub ce_echoes: u64,
    /// ECN-triggered window reductions (CWR episodes).
    pub ecn_reductions: u64,
    /// Times TSQ throttled the socket (`TSQ_THROTTLED` set).
    pub tsq_throttles: u64,
    /// skbs handed below TCP (a TSO burst is one skb).
    pub skbs: u64,
    /// ACKs that carried a DSACK block (Linux `LINUX_MIB_TCPDSACKRECV`, `tcp_check_dsack`).
    pub dsacks: u64,
    /// Segments reported by DSACKs (Linux `tp->dsack_dups`, `tcpi_dsack_dups`).
    pub dsack_dups: u64,
    /// Retransmissions found spurious: DSACKed segments while the DSACKed total does not
    /// exceed the retransmissions sent (Linux `tcp_dsack_seen`: "a spurious retransmission is
    /// delivered"; a DSACK beyond that is a network duplicate, not a retransmission).
    pub spurious_retransmits: u64,
    /// Recoveries undone at their recovery point (Linux `TCPFullUndo`).
    pub full_undos: u64,
    /// Recoveries undone on a partial ACK (Linux `TCPPartialUndo`).
    pub partial_undos: u64,
    /// Reductions undone because DSACKs reported every retransmission (Linux `TCPDSACKUndo`).
    pub dsack_undos: u64,
    /// Timeout reductions undone (Linux `TCPLossUndo`, F-RTO's included).
    pub loss_undos: u64,
    /// Timeouts F-RTO found spurious (Linux `TCPSpuriousRTOs`).
    pub spurious_rtos: u64,
    /// Zero-window probes sent (Linux `LINUX_MIB_TCPWINPROBE`, `TcpExtTCPWinProbe`).
    pub window_probes: u64,
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
    /// Payload bytes of a sized transfer (`FlowConfig::size`).
    size: Option<u64>,
    /// The receiver's advertised window, bytes (`FlowConfig::rcv_wnd`), and in whole segments
    /// (at least one); `None` = unlimited.
    rcv_wnd: Option<u64>,
    rcv_wnd_segs: Option<u64>,
    /// The receiver advertises its window on every ACK ([`FlowConfig::reader`]): the window
    /// scale to apply to the ACK's window field, and the send window `snd_wnd` in bytes
    /// (`rcv_wnd_segs` is then `snd_wnd / mss`); `None`: the fixed `rcv_wnd`.
    adv_wnd: Option<persist::AdvWnd>,
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
    /// RACK's reordering window in units of min_RTT/4 (Linux `rack.reo_wnd_steps`).
    reo_wnd_steps: u32,
    /// Recoveries left before `reo_wnd_steps` returns to 1 (Linux `rack.reo_wnd_persist`).
    reo_wnd_persist: u32,
    /// A DSACK was seen since the window last grew (Linux `rack.dsack_seen`).
    rack_dsack_seen: bool,
    /// `rack_update_reo_wnd` has work on the next ACK: a DSACK is pending or a widened window
    /// has outlived its recoveries (one flag tested per ACK; [`Sender::rack_reo_refresh`]).
    rack_reo_due: bool,
    /// Delivered count when the window last grew (Linux `rack.last_delivered`).
    rack_last_delivered: u64,
    /// RACK's window adapts to DSACKs ([`FlowConfig::rack_reo_adapt`]).
    rack_reo_adapt: bool,
    /// The congestion state machine (CWR, Recovery, Loss; PRR).
    rec: Recovery,
    /// ECN use of the connection (the controller's requirement, else the flow's setting).
    ecn: EcnMode,
    /// The last CE counter an ACK carried (Accurate ECN).
    last_ce_count: u8,
    /// The next new data segment carries CWR (Linux `TCP_ECN_QUEUE_CWR`).
    cwr_pending: bool,
    /// The controller wants `on_packet_sent` (read once from it).
    cc_wants_sent: bool,
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
    /// The controller may ask for pacing itself ([`CongestionControl::may_pace_itself`], fixed
    /// per controller): only then is [`CongestionControl::paces_now`] asked per segment.
    cc_may_pace: bool,
    /// The controller wants pacing or may pace itself (fixed per controller): only then are
    /// its `pacing_rate`, `tso_segs` and `min_tso_segs` asked (the trait lets a transport skip
    /// them otherwise).
    cc_rate: bool,
    /// The controller sets the gap after each segment
    /// ([`CongestionControl::sets_gap_per_segment`], read once): the pacing rate is re-read
    /// after every skb.
    cc_gap_per_seg: bool,
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
    /// The flow opens with a three-way handshake.
    handshake: bool,
    /// With the handshake: TCP Fast Open (RFC 7413) with a cookie from an earlier connection.
    fast_open: bool,
    /// The SYN carries the transfer's only segment.
    syn_data: bool,
    /// The connection being opened (`SYN-SENT`); `None` before `start` and once open.
    connecting: Option<Handshake>,
    /// A SYN to put on the wire ([`Sender::take_control`]).
    control_out: Option<Payload>,
    /// The application stopped before the connection opened: nothing is ever written.
    stopped_before_open: bool,
    /// The handshake's RTT sample, once the connection is open (with a handshake).
    pub handshake_rtt: Option<Dur>,
    /// Exported counters.
    pub counters: SenderCounters,
    /// Every RTT sample taken from ACKs (Linux `ca_rtt`: newest delivered segment).
    pub rtt_hist: Histogram,
    /// When each RTO fired.
    pub rto_times: Vec<Time>,
    trace: Option<TraceLog>,
    /// Time the whole sized transfer was acknowledged.
    pub completed_at: Option<Time>,
    /// The application answers requests ([`FlowConfig::requests`]): it writes one response
    /// per request ([`Sender::write_response`]) and nothing else.
    reqresp: bool,
    /// Restart after idle is on ([`FlowConfig::slow_start_after_idle`]).
    slow_start_after_idle: bool,
    /// The smallest cwnd of the flow's earlier connections ([`Sender::reopen`]; `u32::MAX`:
    /// none).
    min_cwnd_before: u32,
    /// The TCP implementation's rules ([`FlowConfig::tcp`]).
    rules: TcpRules,
    /// Duplicate ACKs counted outside a recovery ([`LossDetection::DupThresh`]; ns-3
    /// `m_dupAckCount`).
    dupacks: u32,
    /// How far [`LossDetection::DupThresh`] has judged the segments (`dupthresh`).
    dt_cursor: u64,
}

/// Most per-event trace rows a run keeps ([`FlowConfig::trace`]), shared equally by its traced
/// flows: each keeps its first rows and counts the rest
/// ([`crate::results::EngineStats::trace_rows_dropped`]). The trace lives in memory until the
/// run ends, about 150 bytes a row (so at most about 750 MB); 5 million rows are two minutes of
/// a 1 Gbit/s flow's ACKs, twenty of a 100 Mbit/s flow's.
pub const MAX_TRACE_ROWS: usize = 5_000_000;

/// A flow's trace rows: at most `limit`; rows beyond it are counted, not kept.
#[derive(Debug)]
struct TraceLog {
    rows: Vec<TracePoint>,
    limit: usize,
    dropped: u64,
}

impl TraceLog {
    fn new(limit: usize) -> Self {
        TraceLog {
            rows: Vec::new(),
            limit,
            dropped: 0,
        }
    }

    /// Append a row (below the limit): the vector grows by doubling, but never past the limit.
    fn push(&mut self, point: TracePoint) {
        if self.rows.len() == self.rows.capacity() {
            let more = self.rows.capacity().max(1024);
            self.rows
                .reserve_exact(more.min(self.limit - self.rows.len()).max(1));
        }
        self.rows.push(point);
    }
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
    pub fn with_host(cfg: &FlowConfig, cc_seed: u64, mut host: SocketHost) -> Self {
        let mss = cfg.mss;
        if !cfg.tcp.host_offloads {
            host.tsq = false;
            host.tso.enabled = false;
        }
        let reqresp = cfg.requests.is_some();
        // The window a slow reader's receiver offers in its SYN-ACK, and its scale.
        let adv_wnd = cfg.reader.as_ref().map(|r| persist::AdvWnd::new(r, mss));
        let (total_segs, last_len) = match cfg.size {
            // A responding application: each response sets its end when it is written; until
            // then no segment is the last of a transfer.
            _ if reqresp => (Some(u64::MAX), mss),
            Some(bytes) => {
                let n = bytes.div_ceil(u64::from(mss)).max(1);
                let last = bytes - (n - 1) * u64::from(mss);
                (Some(n), saturating_u32(last.max(1))) // 1 ≤ last ≤ mss
            }
            None => (None, mss),
        };
        let cc = cfg.cc.with_ecn(cfg.ecn).build(cc_seed);
        let ecn = cc.ecn_requirement().unwrap_or(cfg.ecn);
        let cc_wants_pacing = cc.wants_pacing();
        let cc_wants_sent = cc.wants_packet_sent();
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
        let cc_may_pace = cc.may_pace_itself();
        let cc_rate = cc_wants_pacing || cc_may_pace;
        let cc_gap_per_seg = cc.sets_gap_per_segment();
        Sender {
            ecn,
            last_ce_count: 0,
            cwr_pending: false,
            cc_wants_sent,
            cc,
            st,
            mss,
            app_end: 0,
            app_rate: cfg.app_rate_bps,
            app_t0: Time::ZERO,
            app_cap: 0,
            app_next: Time::MAX,
            total_segs,
            size: cfg.size,
            rcv_wnd: adv_wnd.map_or(cfg.rcv_wnd, |a| Some(a.snd_wnd)),
            rcv_wnd_segs: match adv_wnd {
                Some(a) => Some(a.snd_wnd / u64::from(mss)),
                None => cfg.rcv_wnd.map(|b| (b / u64::from(mss)).max(1)),
            },
            adv_wnd,
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
            rtt: RttEstimator::new(&cfg.tcp),
            backoff: 0,
            rack_xmit: Time::ZERO,
            rack_end: 0,
            rack_rtt: Dur::ZERO,
            rack_advanced: false,
            fack: 0,
            reordering_seen: false,
            reo_wnd_steps: 1,
            reo_wnd_persist: 0,
            rack_dsack_seen: false,
            rack_reo_due: false,
            rack_last_delivered: 0,
            rack_reo_adapt: cfg.rack_reo_adapt,
            rec: {
                let mut r = Recovery::new(cfg.initial_window);
                r.set_frto(cfg.frto);
                r.set_undo(cfg.undo);
                r
            },
            tlp_high_seq: None,
            tlp_retrans: false,
            rate: RateSampler::new(),
            pacing,
            host,
            need_rate,
            cc_may_pace,
            cc_rate,
            cc_gap_per_seg,
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
            // A responding server's connection is opened by its client ([`super::exchange`]).
            handshake: cfg.handshake && !reqresp,
            fast_open: cfg.fast_open && !reqresp,
            syn_data: false,
            connecting: None,
            control_out: None,
            stopped_before_open: false,
            handshake_rtt: None,
            counters: SenderCounters::default(),
            rtt_hist: Histogram::new(),
            rto_times: Vec::new(),
            trace: cfg.trace.then(|| TraceLog::new(MAX_TRACE_ROWS)),
            completed_at: None,
            reqresp,
            slow_start_after_idle: cfg.slow_start_after_idle,
            min_cwnd_before: u32::MAX,
            rules: cfg.tcp,
            dupacks: 0,
            dt_cursor: 0,
        }
    }

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

    /// Retransmission timeout before backoff (RFC 6298 §2 with Linux's bounds).
    #[must_use]
    pub fn rto(&self) -> Dur {
        self.rtt.rto()
    }

    /// Minimum RTT.
    #[must_use]
    pub fn min_rtt(&self) -> Option<Dur> {
        self.rtt.min_rtt()
    }

    /// Segments in flight (Linux `tcp_packets_in_flight`).
    #[must_use]
    pub fn in_flight(&self) -> u32 {
        // SND.NXT − SND.UNA ≤ segs.len(), which the u32 cwnd bounds.
        let packets_out = saturating_u32(self.snd_nxt - self.snd_una);
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
            .map(|(segs, dt)| u64_to_f64(segs) * f64::from(self.mss) * 8.0 / dt.as_secs_f64())
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

    /// [`Sender::next_wakeup`] split by the kernel mechanism behind each deadline, for a host
    /// whose timers fire late ([`crate::host::timing`]); the minimum of the parts is
    /// `next_wakeup`.
    #[must_use]
    pub fn wakeup_parts(&self) -> WakeupParts {
        let app = if self.snd_nxt >= self.app_end {
            self.app_next
        } else {
            Time::MAX
        };
        let rest = app.min(self.tsq_wake.unwrap_or(Time::MAX));
        WakeupParts {
            retransmit: self.timer.map(|(_, t)| t),
            reorder: self.reo_at,
            pacing: self.pace_at,
            other: (rest != Time::MAX).then_some(rest),
        }
    }

    /// The socket is paced now: by its status, or because the controller asks for it at this
    /// moment ([`CongestionControl::paces_now`]; an unpaced socket then paces internally).
    fn is_paced(&self) -> bool {
        self.pacing != PacingStatus::None || self.cc_paces_now()
    }

    /// [`CongestionControl::paces_now`], asked only of a controller that may pace itself.
    #[inline]
    pub(super) fn cc_paces_now(&self) -> bool {
        self.cc_may_pace && self.cc.paces_now()
    }

    /// Who paces this socket (Linux `sk_pacing_status`).
    #[must_use]
    pub fn pacing_status(&self) -> PacingStatus {
        self.pacing
    }

    /// Smallest cwnd ever (the congestion state machine keeps it), over the earlier
    /// connections of the flow too.
    #[must_use]
    pub fn min_cwnd(&self) -> u32 {
        self.rec.min_cwnd().min(self.min_cwnd_before)
    }

    /// The socket's pacing rate, bytes/s (Linux `sk_pacing_rate`), paced or not: the
    /// controller's, or Linux's default once an RTT sample exists; `None` = unlimited.
    #[must_use]
    pub fn sk_pacing_rate(&self) -> Option<u64> {
        self.pacing_rate
    }

    /// Append a trace row if tracing is on (the test inline, the row out of line: the call
    /// on every ACK would otherwise cost a function's prologue).
    #[inline(always)]
    fn record(&mut self, now: Time, event: &'static str) {
        if self.trace.is_some() {
            self.record_row(now, event);
        }
    }

    #[cold]
    #[inline(never)]
    fn record_row(&mut self, now: Time, event: &'static str) {
        if let Some(t) = &mut self.trace
            && t.rows.len() >= t.limit
        {
            t.dropped += 1;
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

    /// Keep at most `rows` trace rows (the first ones; default [`MAX_TRACE_ROWS`]).
    pub fn set_trace_limit(&mut self, rows: usize) {
        if let Some(t) = &mut self.trace {
            t.limit = rows;
        }
    }

    /// The most trace rows kept (`None`: the flow is not traced).
    #[must_use]
    pub fn trace_limit(&self) -> Option<usize> {
        self.trace.as_ref().map(|t| t.limit)
    }

    /// Trace rows not kept: made after the trace held its limit.
    #[must_use]
    pub fn trace_dropped(&self) -> u64 {
        self.trace.as_ref().map_or(0, |t| t.dropped)
    }

    /// The recorded trace (empty unless `FlowConfig::trace` was set), in time order.
    pub fn take_trace(&mut self) -> Vec<TracePoint> {
        let mut t = self
            .trace
            .as_mut()
            .map(|t| std::mem::take(&mut t.rows))
            .unwrap_or_default();
        if self.trace_tx {
            // `tx_done` rows are recorded when the completion is reported, which may be ahead
            // of time; a stable sort keeps the order of rows at equal times.
            t.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
        }
        t
    }
}
