//! The simulator's output: summaries and time series of one run.
//!
//! Contract: [`Results`] is plain data, serialisable with serde, in SI-ish output units (seconds,
//! milliseconds, bits per second, segments, bytes) chosen for readers, not for the engine. Series
//! are sampled every `sample_interval`; sample `i` covers `(t[i] − interval, t[i]]` for rates and
//! is an instantaneous reading at `t[i]` for levels (cwnd, backlog). Results of the same config are
//! bit-identical on every machine.

use std::collections::BTreeMap;

use serde::Serialize;

/// Everything one run produced.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Results {
    /// Seed the run used.
    pub seed: u64,
    /// Simulated seconds.
    pub duration_s: f64,
    /// Per TCP flow.
    pub flows: Vec<FlowResult>,
    /// Per monitored queue.
    pub queues: Vec<QueueResult>,
    /// Per latency probe.
    pub probes: Vec<ProbeResult>,
    /// Per UDP source (left out of serialised output when there is none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub udp: Vec<UdpResult>,
    /// Per Wi-Fi BSS (left out of serialised output when there is none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub wifi: Vec<WifiResult>,
    /// Engine counters.
    pub engine: EngineStats,
}

/// One Wi-Fi BSS: what each of its nodes did on the channel.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct WifiResult {
    /// The BSS's name.
    pub name: String,
    /// The AP first, then the stations in order.
    pub nodes: Vec<WifiNodeResult>,
    /// Share of the run the channel carried exchanges (a collision counted once).
    pub busy_share: f64,
    /// Sample times, seconds (the end of each interval).
    pub t_s: Vec<f64>,
}

/// One node of a Wi-Fi BSS ([`crate::wifi::mac::NodeStats`], over the whole run).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct WifiNodeResult {
    /// The node's name.
    pub node: String,
    /// `ap` or `station`.
    pub role: &'static str,
    /// Channel accesses won with something to send (A-MPDUs sent, collided ones included).
    pub accesses: u64,
    /// Of which collided.
    pub collisions: u64,
    /// Accesses of a lower access category lost to a higher one of the same node.
    pub internal_collisions: u64,
    /// Mean MPDUs per A-MPDU.
    pub mean_ampdu: f64,
    /// A-MPDU size histogram: `ampdu_sizes[k]` A-MPDUs carried k MPDUs.
    pub ampdu_sizes: Vec<u64>,
    /// A-MPDUs by the limit that bound them: backlog, Block Ack window, length, PPDU time, TXOP.
    pub ampdu_bounds: [u64; 5],
    /// MPDU transmissions, retransmissions included.
    pub mpdus_sent: u64,
    /// MPDU retransmissions.
    pub retries: u64,
    /// MPDUs acknowledged.
    pub acked: u64,
    /// MPDUs dropped at the retry limit (queue drops are `txq_drops`).
    pub dropped: u64,
    /// Airtime of its exchanges, seconds.
    pub airtime_s: f64,
    /// Its airtime divided by the run's duration.
    pub airtime_share: f64,
    /// Idle time (AIFS and backoff) before its accesses, seconds.
    pub access_wait_s: f64,
    /// Mean idle time before an access, microseconds (0 with none).
    pub mean_access_wait_us: f64,
    /// MCS histogram: `mcs_counts[m]` A-MPDUs (collided ones included) went at per-stream MCS
    /// `m`; sums to `accesses`.
    pub mcs_counts: Vec<u64>,
    /// MSDUs dropped in its transmit queues (CoDel, fq limit) before any transmission.
    pub txq_drops: u64,
    /// Airtime of its collided accesses, seconds.
    pub collision_airtime_s: f64,
    /// Per sample interval (the times are [`WifiResult::t_s`]).
    pub series: WifiNodeSeries,
}

/// One Wi-Fi node's activity per sample interval.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct WifiNodeSeries {
    /// Mean MPDUs per A-MPDU of the interval's accesses (`None`: no access).
    pub mean_ampdu: Vec<Option<f64>>,
    /// Airtime of the interval's exchanges divided by the interval.
    pub airtime_share: Vec<f64>,
    /// MPDU retransmissions in the interval.
    pub retries: Vec<u64>,
    /// Collided accesses in the interval.
    pub collisions: Vec<u64>,
}

/// Engine work counters (for benchmarks and conservation checks).
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq)]
pub struct EngineStats {
    /// Events processed.
    pub events: u64,
    /// Data segments delivered to receivers (including duplicates).
    pub data_packets_delivered: u64,
    /// Data segments transmitted by senders (including retransmissions).
    pub data_packets_sent: u64,
    /// Data segments dropped anywhere (queue overflow, link loss, a host's fq, or a network
    /// element: a loss model, policer, outage).
    pub data_packets_dropped: u64,
    /// Data segments still inside the network (queues and links) at the end.
    pub data_packets_in_network: u64,
    /// Largest number of pending events at any time.
    pub peak_pending_events: u64,
    /// Times a TCP socket was throttled by TCP Small Queues (all flows).
    pub tsq_throttles: u64,
    /// skbs handed below TCP by senders (a TSO burst is one skb); data segments sent divided
    /// by this is the mean burst.
    pub skbs_sent: u64,
    /// Packets the hosts' fq qdiscs dropped (limit, flow_limit or horizon).
    pub fq_drops: u64,
    /// Packets, timers and releases that waited for a descheduled host (CPU schedule).
    pub cpu_deferred: u64,
    /// Times a descheduled host resumed with work waiting.
    pub cpu_resumes: u64,
    /// Packets for a descheduled virtual machine dropped by its tap device (RX virtqueue and
    /// tap queue full).
    #[serde(skip_serializing_if = "is_zero")]
    pub virtio_rx_drops: u64,
    /// Packets a virtual machine's pfifo_fast dropped while its TX virtqueue was full.
    #[serde(skip_serializing_if = "is_zero")]
    pub virtio_qdisc_drops: u64,
    /// Times a virtual machine's vhost worker ran.
    #[serde(skip_serializing_if = "is_zero")]
    pub vhost_runs: u64,
    /// The most wire bytes any virtual machine's TX virtqueue held at once.
    #[serde(skip_serializing_if = "is_zero")]
    pub virtio_ring_peak_bytes: u64,
    /// Times a virtual machine's pfifo_fast found every TX descriptor in use (device queue
    /// stopped; fq just stops dequeuing, uncounted).
    #[serde(skip_serializing_if = "is_zero")]
    pub virtio_queue_stops: u64,
    /// CPU time charged to hosts' CFS quotas, ns.
    #[serde(skip_serializing_if = "is_zero")]
    pub cfs_runtime_ns: u64,
    /// Times a CFS quota throttled its host.
    #[serde(skip_serializing_if = "is_zero")]
    pub cfs_throttles: u64,
    /// The most any period's charges exceeded a CFS quota, ns ([`crate::host::cpu::CfsClock::max_overrun`]).
    #[serde(skip_serializing_if = "is_zero")]
    pub cfs_max_overrun_ns: u64,
    /// Per-event trace rows not kept: made by a traced flow after it held its share of
    /// [`crate::tcp::sender::MAX_TRACE_ROWS`].
    #[serde(skip_serializing_if = "is_zero")]
    pub trace_rows_dropped: u64,
}

/// Counters of models a run may not have (virtual machines) are left out of serialised
/// results while zero, so that runs without them write what they always wrote.
#[expect(
    clippy::trivially_copy_pass_by_ref,
    reason = "serde's skip_serializing_if signature"
)]
fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// One TCP flow.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FlowResult {
    /// Flow name.
    pub name: String,
    /// Controller name as a scenario names it (`CcSpec::name`, e.g. `bbr_tas`, `bbr3_2brobust`).
    pub controller: String,
    /// Summary.
    pub summary: FlowSummary,
    /// Time series.
    pub series: FlowSeries,
    /// Per-event sender trace (empty unless `FlowConfig::trace` is set).
    pub trace: Vec<TracePoint>,
    /// The completed exchanges of a request/response flow, in order (empty otherwise).
    pub exchanges: Vec<ExchangeResult>,
}

/// One completed request/response exchange ([`crate::tcp::exchange`]).
#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
pub struct ExchangeResult {
    /// Which exchange (0 = the flow's first).
    pub index: u32,
    /// When it began (its SYN when it opened a connection, else its request), s.
    pub start_s: f64,
    /// Response time: from its start until the client held the response's last byte, s.
    pub response_time_s: f64,
    /// The same exchange alone on the empty path, s (`engine/ideal.rs`).
    pub ideal_s: f64,
    /// `response_time_s` ÷ `ideal_s`.
    pub slowdown: f64,
    /// Response payload bytes.
    pub response_bytes: u64,
    /// It opened a connection (handshake included in its response time).
    pub opened_connection: bool,
    /// Transmissions of its request (1 = never lost).
    pub request_transmissions: u32,
}

/// The response times of a request/response flow's completed exchanges.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ExchangeSummary {
    /// Exchanges the flow was to make.
    pub requests: u32,
    /// Exchanges completed.
    pub completed: u32,
    /// Mean response time, s.
    pub response_time_mean_s: Option<f64>,
    /// Median response time (nearest rank), s.
    pub response_time_p50_s: Option<f64>,
    /// 99th percentile response time (nearest rank), s.
    pub response_time_p99_s: Option<f64>,
    /// Mean slowdown (response time ÷ ideal response time).
    pub slowdown_mean: Option<f64>,
    /// Median slowdown (nearest rank).
    pub slowdown_p50: Option<f64>,
    /// 99th percentile slowdown (nearest rank).
    pub slowdown_p99: Option<f64>,
    /// Requests sent again after a timeout.
    pub request_retransmits: u64,
}

impl ExchangeSummary {
    /// The summary of `done` out of `requests` exchanges.
    #[must_use]
    #[expect(
        clippy::cast_precision_loss,
        reason = "exchange counts are far below 2^53"
    )]
    pub fn of(requests: u32, done: &[ExchangeResult]) -> Self {
        // Nearest-rank quantile (Hyndman & Fan definition 1) of sorted values.
        fn quantile(sorted: &[f64], q: f64) -> Option<f64> {
            let n = sorted.len();
            if n == 0 {
                return None;
            }
            let rank = cclab_cc::num::f64_to_u64((q * n as f64).ceil()).max(1);
            let i = usize::try_from(rank).unwrap_or(n).min(n) - 1;
            Some(sorted[i])
        }
        let mut times: Vec<f64> = done.iter().map(|e| e.response_time_s).collect();
        let mut slow: Vec<f64> = done.iter().map(|e| e.slowdown).collect();
        times.sort_by(f64::total_cmp);
        slow.sort_by(f64::total_cmp);
        let mean = |v: &[f64]| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
        ExchangeSummary {
            requests,
            completed: u32::try_from(done.len()).unwrap_or(u32::MAX),
            response_time_mean_s: mean(&times),
            response_time_p50_s: quantile(&times, 0.5),
            response_time_p99_s: quantile(&times, 0.99),
            slowdown_mean: mean(&slow),
            slowdown_p50: quantile(&slow, 0.5),
            slowdown_p99: quantile(&slow, 0.99),
            request_retransmits: done
                .iter()
                .map(|e| u64::from(e.request_transmissions.saturating_sub(1)))
                .sum(),
        }
    }
}

/// The sender's state right after one event (like a `tcp_probe` / `ss -i` record per ACK).
#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
pub struct TracePoint {
    /// When, s.
    pub t_s: f64,
    /// What happened: `ack`, `rto`, `probe` (TLP sent), `reorder_timer`, `tsq` (TX
    /// completions ended a TSQ throttle); with `FlowConfig::trace_tx` also `xmit` (an skb was
    /// handed below TCP; `t_s` is the hand-off) and `tx_done` (a data segment finished
    /// serialisation on the NIC; `t_s` is that moment, the other fields are the sender's state
    /// when the device reported it, which may be ahead of time).
    pub event: &'static str,
    /// SND.UNA, segments.
    pub snd_una: u64,
    /// SND.NXT, segments.
    pub snd_nxt: u64,
    /// cwnd, segments.
    pub cwnd: u32,
    /// ssthresh, segments (`None` while infinite).
    pub ssthresh: Option<u32>,
    /// Segments in flight.
    pub in_flight: u32,
    /// Loss-recovery state: `open`, `disorder`, `cwr`, `recovery` or `loss`.
    pub ca_state: &'static str,
    /// Controller state (`CongestionControl::state`).
    pub cc_state: &'static str,
    /// Smoothed RTT, ms.
    pub srtt_ms: Option<f64>,
    /// Bytes below TCP: handed to the qdisc/NIC, TX completion not yet reached.
    pub below_tcp: u64,
    /// TSQ budget in force, bytes: the limit a full-size skb of `tso_segs` segments would be
    /// checked against (`None` when TSQ is off).
    pub tsq_budget: Option<u64>,
    /// TSQ pacing shift in force (the controller's override or the host's).
    pub tsq_shift: u8,
    /// TSO goal: segments per skb the socket builds now.
    pub tso_segs: u32,
    /// The socket's pacing rate (Linux `sk_pacing_rate`), bytes/s, paced or not; `None` =
    /// unlimited (no RTT sample yet).
    pub sk_pacing_rate: Option<u64>,
}

/// Summary of a flow over the whole run.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FlowSummary {
    /// Mean goodput from the flow's start to its end (completion, stop or run end), bit/s.
    pub goodput_bps: f64,
    /// Payload bytes delivered in order to the receiving application.
    pub bytes_delivered: u64,
    /// Data segments sent, including retransmissions.
    pub segments_sent: u64,
    /// Retransmitted segments (fast, RACK, TLP and RTO retransmissions).
    pub retransmits: u64,
    /// Segments marked lost by the sender.
    pub segments_lost: u64,
    /// Loss-recovery episodes entered (fast recovery; one cwnd reduction each).
    pub fast_recoveries: u64,
    /// Retransmission timeouts.
    pub rto_count: u64,
    /// Tail-loss probes sent.
    pub tlp_count: u64,
    /// When each retransmission timeout fired, s (RTOs are rare, so this stays small).
    pub rto_times_s: Vec<f64>,
    /// Mean RTT over all ACK RTT samples, ms.
    pub rtt_mean_ms: Option<f64>,
    /// Median RTT, ms.
    pub rtt_p50_ms: Option<f64>,
    /// 95th percentile RTT, ms.
    pub rtt_p95_ms: Option<f64>,
    /// 99th percentile RTT, ms.
    pub rtt_p99_ms: Option<f64>,
    /// Flow-completion time in seconds for sized flows that completed.
    pub fct_s: Option<f64>,
    /// Payload bytes of a sized flow (`None` for a bulk flow).
    pub size_bytes: Option<u64>,
    /// The FCT of the same transfer alone on the empty path, s (`engine/ideal.rs`): sized flows.
    pub ideal_fct_s: Option<f64>,
    /// FCT slowdown: `fct_s` ÷ `ideal_fct_s` (1 = as fast as the path allows), sized flows that
    /// completed.
    pub fct_slowdown: Option<f64>,
    /// Whether the receiver got every byte in order (sized flows that completed; bulk: `true`).
    pub complete: bool,
    /// Smallest cwnd the flow ever had, segments.
    pub min_cwnd: u32,
    /// ECN use of the connection (`off`, `classic`, `l4s`).
    pub ecn: &'static str,
    /// Segments the sender learned were delivered CE-marked (Linux `tp->delivered_ce`).
    pub ce_delivered: u64,
    /// ACKs carrying an ECN echo (ECE, or a rise of the Accurate ECN counter).
    pub ce_echoes: u64,
    /// ECN-triggered window reductions (CWR episodes run by the transport).
    pub ecn_reductions: u64,
    /// Segments marked lost ÷ segments sent.
    pub loss_rate: f64,
    /// Duplicate segments the receiver reported with DSACK (RFC 2883 §4), one ACK each.
    pub dsacks_sent: u64,
    /// ACKs with a DSACK block the sender read, old ACKs included (Linux `TCPDSACKRecv`).
    pub dsacks_received: u64,
    /// Segments the sender saw reported by DSACKs (Linux `tp->dsack_dups`, `tcpi_dsack_dups`).
    pub dsack_dups: u64,
    /// Retransmissions found spurious: DSACKed segments while the DSACKed total does not exceed
    /// the retransmissions sent (Linux `tcp_dsack_seen`; a DSACK beyond that reports a network
    /// duplicate, not a retransmission).
    pub spurious_retransmits: u64,
    /// Recoveries undone at their recovery point, no retransmission having been needed (Linux
    /// `TCPFullUndo`, `tcp_try_undo_recovery`).
    pub full_undos: u64,
    /// Recoveries undone on a partial ACK, no retransmission having been made (Linux
    /// `TCPPartialUndo`, `tcp_try_undo_partial`).
    pub partial_undos: u64,
    /// Reductions undone because DSACKs reported every retransmission of the episode (Linux
    /// `TCPDSACKUndo`, `tcp_try_undo_dsack`).
    pub dsack_undos: u64,
    /// Timeout reductions undone, F-RTO's included (Linux `TCPLossUndo`, `tcp_try_undo_loss`).
    pub loss_undos: u64,
    /// Timeouts F-RTO found spurious (RFC 5682; Linux `TCPSpuriousRTOs`).
    pub spurious_rtos: u64,
    /// Original transmissions that arrived after one sent later (RFC 4737 §3 Type-P-Reordered).
    pub reordered: u64,
    /// Reordered ÷ original transmissions arrived (RFC 4737 §4.1.1).
    pub reorder_ratio: f64,
    /// Largest reordering extent, packets (RFC 4737 §4.2.1).
    pub reorder_extent_max: u64,
    /// Mean reordering extent of the reordered packets, packets.
    pub reorder_extent_mean: Option<f64>,
    /// Request/response flows: their exchanges' response times (absent for other flows).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exchanges: Option<ExchangeSummary>,
    /// QUIC flows: their transport's own counters (absent for TCP flows).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quic: Option<QuicSummary>,
}

/// Counters of a QUIC flow ([`crate::quic`]) beyond the fields it shares with TCP flows.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
pub struct QuicSummary {
    /// Probe timeouts (RFC 9002 §6.2).
    pub ptos: u64,
    /// Probe packets sent on them.
    pub probes_sent: u64,
    /// Persistent congestion declared (RFC 9002 §7.6).
    pub persistent_congestions: u64,
    /// Packets declared lost and acknowledged later.
    pub spurious_losses: u64,
    /// ACK frames the sender received.
    pub acks_received: u64,
    /// ACK frames the receiver sent.
    pub acks_sent: u64,
    /// Stream chunks the receiver got more than once.
    pub duplicate_chunks: u64,
}

/// Per-interval samples of a flow (all vectors have the same length as `t_s`).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct FlowSeries {
    /// Sample times, s.
    pub t_s: Vec<f64>,
    /// In-order bytes delivered to the receiver during the interval, as bit/s.
    pub goodput_bps: Vec<f64>,
    /// cwnd, segments.
    pub cwnd: Vec<u32>,
    /// ssthresh, segments (`None` while infinite).
    pub ssthresh: Vec<Option<u32>>,
    /// Smoothed RTT, ms.
    pub srtt_ms: Vec<Option<f64>>,
    /// Pacing rate in force, bit/s (`None` when unpaced).
    pub pacing_rate_bps: Vec<Option<f64>>,
    /// Segments in flight.
    pub in_flight: Vec<u32>,
    /// Last delivery-rate sample, bit/s.
    pub delivery_rate_bps: Vec<Option<f64>>,
    /// Retransmissions during the interval.
    pub retransmits: Vec<u32>,
    /// Segments marked lost during the interval.
    pub losses: Vec<u32>,
    /// Controller state at the sample time.
    pub state: Vec<&'static str>,
    /// TSQ budget in force at the sample time, bytes (see [`TracePoint::tsq_budget`]; `None`
    /// when TSQ is off or the flow has not started).
    pub tsq_budget: Vec<Option<u64>>,
    /// TSQ pacing shift in force (the controller's override or the host's).
    pub tsq_shift: Vec<u8>,
    /// Bytes below TCP at the sample time (qdisc + NIC, not yet TX-completed).
    pub below_tcp: Vec<u64>,
    /// Controller internals from `CongestionControl::stats` (e.g. CUBIC's `w_max`, `k_s`), one
    /// vector per key, aligned with `t_s`; `None` where the controller did not report the key.
    pub cc_stats: BTreeMap<&'static str, Vec<Option<f64>>>,
}

/// One monitored queue.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct QueueResult {
    /// Link name.
    pub name: String,
    /// Summary.
    pub summary: QueueSummary,
    /// Time series.
    pub series: QueueSeries,
}

/// Summary of a queue over the run.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct QueueSummary {
    /// Packets accepted into the queue.
    pub enqueued: u64,
    /// Packets dropped on arrival (queue full).
    pub drops: u64,
    /// Packets lost by the link's loss model.
    pub link_losses: u64,
    /// Mean sojourn time of dequeued packets, ms.
    pub delay_mean_ms: Option<f64>,
    /// 95th percentile sojourn time, ms.
    pub delay_p95_ms: Option<f64>,
    /// Largest sojourn time, ms.
    pub delay_max_ms: Option<f64>,
    /// Mean departure rate over the run, bit/s (link utilisation × rate).
    pub throughput_bps: f64,
    /// Largest backlog seen, packets.
    pub max_backlog_packets: u32,
    /// Queue discipline (`fifo`, or an AQM's name).
    pub discipline: &'static str,
    /// Of `drops`, those the AQM decided (early or at dequeue); the rest overflowed.
    pub aqm_drops: u64,
    /// Packets marked CE.
    pub ce_marks: u64,
    /// Median sojourn time, ms.
    pub delay_p50_ms: Option<f64>,
    /// 99th percentile sojourn time, ms.
    pub delay_p99_ms: Option<f64>,
    /// Per class of an AQM (DualPI2: `c` then `l`; one class `all` otherwise); empty on a FIFO.
    pub classes: Vec<ClassSummary>,
}

/// One class (sub-queue) of an AQM.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ClassSummary {
    /// Class name (`all`, or DualPI2's `c` and `l`).
    pub name: &'static str,
    /// Packets accepted.
    pub enqueued: u64,
    /// Overflow drops.
    pub overflow_drops: u64,
    /// AQM drops.
    pub aqm_drops: u64,
    /// CE marks.
    pub ce_marks: u64,
    /// Sojourn of dequeued packets: mean, p50, p95, p99, max, ms.
    pub delay_mean_ms: Option<f64>,
    /// Median sojourn, ms.
    pub delay_p50_ms: Option<f64>,
    /// 95th percentile sojourn, ms.
    pub delay_p95_ms: Option<f64>,
    /// 99th percentile sojourn, ms.
    pub delay_p99_ms: Option<f64>,
    /// Largest sojourn, ms.
    pub delay_max_ms: Option<f64>,
}

/// Per-interval samples of a queue.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct QueueSeries {
    /// Sample times, s.
    pub t_s: Vec<f64>,
    /// Backlog at the sample time, packets.
    pub backlog_packets: Vec<u32>,
    /// Backlog at the sample time, bytes.
    pub backlog_bytes: Vec<u64>,
    /// Mean sojourn of packets dequeued during the interval, ms.
    pub sojourn_mean_ms: Vec<Option<f64>>,
    /// Largest sojourn of packets dequeued during the interval, ms.
    pub sojourn_max_ms: Vec<Option<f64>>,
    /// Drops during the interval (overflow and AQM).
    pub drops: Vec<u32>,
    /// CE marks during the interval (AQM links; zeros on a FIFO).
    pub ce_marks: Vec<u32>,
    /// Per class of an AQM (DualPI2: C then L; one class otherwise): mean sojourn of packets
    /// dequeued during the interval, ms. Empty on a FIFO.
    pub class_sojourn_mean_ms: Vec<Vec<Option<f64>>>,
    /// Per class of an AQM: backlog at the sample time, packets. Empty on a FIFO.
    pub class_backlog_packets: Vec<Vec<u32>>,
    /// Bytes that left the queue during the interval, as bit/s.
    pub throughput_bps: Vec<f64>,
    /// What the link could have sent during the interval, as bit/s: its capacity, on a link
    /// whose rate changes over time (`LinkConfig::rate_shape`). Empty on a constant link.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub capacity_bps: Vec<f64>,
    /// The one-way delay of the link and what the elements behind it add, at each sample time,
    /// ms: the link's propagation delay in force at the sample time
    /// ([`crate::LinkConfig::delay_at`]) plus the centre of its own jitter, if any
    /// ([`crate::net::JitterDist::centre`]), plus the configured delay
    /// ([`crate::net::ElementSpec::scheduled_delay`]) of every element on the link's far node
    /// that takes data segments arriving over this link (its selector names no other
    /// neighbour and does not take only ACKs), as scheduled for a packet reaching it at the
    /// sample time. Queueing (in the link's queue or in an element) is not counted: that is the
    /// queue's sojourn. Filled only on a link whose delay changes during the run (its own
    /// `delay_changes`, or a delay schedule or reroute among those elements); empty otherwise,
    /// the constant being in the configuration.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub delay_ms: Vec<f64>,
}

/// One latency probe.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ProbeResult {
    /// Probe name.
    pub name: String,
    /// `icmp` or `udp` (`ProbeKind::name`).
    pub kind: &'static str,
    /// DSCP code point of its packets.
    pub dscp: u8,
    /// Sequence number of each answered probe (0 = first sent), aligned with `t_s`.
    pub seq: Vec<u64>,
    /// Send time of each answered probe, s.
    pub t_s: Vec<f64>,
    /// Round-trip time of each answered probe, ms.
    pub rtt_ms: Vec<f64>,
    /// Probes sent.
    pub sent: u64,
    /// Summary.
    pub summary: ProbeSummary,
}

/// Summary of a probe.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ProbeSummary {
    /// Probes answered.
    pub answered: u64,
    /// Mean RTT, ms.
    pub rtt_mean_ms: Option<f64>,
    /// Median RTT, ms.
    pub rtt_p50_ms: Option<f64>,
    /// 95th percentile RTT, ms.
    pub rtt_p95_ms: Option<f64>,
    /// 99th percentile RTT, ms.
    pub rtt_p99_ms: Option<f64>,
}

/// One UDP source.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct UdpResult {
    /// Source name.
    pub name: String,
    /// `cbr`, `onoff` or `poisson` (`UdpPattern::name`).
    pub pattern: &'static str,
    /// DSCP code point of its packets.
    pub dscp: u8,
    /// Summary.
    pub summary: UdpSummary,
    /// Time series.
    pub series: UdpSeries,
}

/// Summary of a UDP source over the run.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct UdpSummary {
    /// Datagrams sent.
    pub sent: u64,
    /// Datagrams received (a duplicate counts again).
    pub received: u64,
    /// Datagrams lost, counted from sequence numbers as iperf3 does (`iperf_udp_recv`): every
    /// datagram below the highest sequence number received that never arrived. Datagrams
    /// sent after the last one received (in flight at the end, or lost at the tail) are not
    /// counted.
    pub lost: u64,
    /// `lost` ÷ (highest sequence number received + 1); 0 when nothing arrived.
    pub loss_rate: f64,
    /// Wire bytes received.
    pub bytes_received: u64,
    /// Received wire bits per second from the source's start to its stop (or the end of the
    /// run), Mbit/s.
    pub goodput_mbps: f64,
    /// Datagrams that arrived with CE set (RFC 3168 §5; nothing reacts to them).
    pub ce_received: u64,
    /// Mean one-way delay (send to arrival at the receiving host), ms.
    pub owd_mean_ms: Option<f64>,
    /// Median one-way delay, ms.
    pub owd_p50_ms: Option<f64>,
    /// 99th percentile one-way delay, ms.
    pub owd_p99_ms: Option<f64>,
}

/// Per-interval samples of a UDP source (all vectors have the same length as `t_s`).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct UdpSeries {
    /// Sample times, s.
    pub t_s: Vec<f64>,
    /// Datagrams sent during the interval.
    pub sent: Vec<u64>,
    /// Wire bytes received during the interval, as bit/s.
    pub goodput_bps: Vec<f64>,
    /// Mean one-way delay of the datagrams received during the interval, ms.
    pub owd_mean_ms: Vec<Option<f64>>,
}
