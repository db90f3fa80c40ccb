//! The QUIC sender: the stream, packet numbers, the sent-packet record, the send loop and
//! pacing. Acknowledgement processing and the controller hooks are in `sender/ack.rs`, loss
//! detection, PTO and persistent congestion in `sender/loss.rs` (see the module doc of
//! [`crate::quic`] for the rules and the hook order).
//!
//! Contract: [`Sender::start`], [`Sender::on_ack`] and [`Sender::on_wake`] take `now` and append
//! the packets to send to `out`; [`Sender::next_wakeup`] is the one deadline the engine must
//! call [`Sender::on_wake`] at (loss timer, PTO or pacing). Windows are in packets: the
//! controller's `mss` is the stream payload of a full packet, and every packet in flight counts
//! one whatever its size.

use std::collections::VecDeque;

use cclab_cc::kit::{RateSampler, TxRecord};
use cclab_cc::{CaState, CongestionControl, ConnStart, CwndState, Dur, EcnMode, SentInfo, Time};

use super::rtt::RttEstimator;
use super::{ACK_PACKET_BYTES, PING, quantise, quantise_up};
use crate::config::{FlowConfig, PacingMode, QuicConfig};
use crate::histogram::Histogram;

mod ack;
mod loss;

/// Packets sent back to back after an idle pacer (quicly `QUICLY_PACER_BURST_LOW`).
pub const PACER_BURST: u64 = 8;

/// What became of a sent packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PktState {
    Outstanding,
    Acked,
    Lost,
}

/// The record of a sent packet (RFC 9002 §A.1.1 `sent_packets`), kept until acknowledged or,
/// when lost, for a while longer to recognise a late acknowledgement (a spurious loss).
#[derive(Clone, Copy, Debug)]
struct SentPacket {
    chunk: u64,
    sent: Time,
    rec: TxRecord,
    state: PktState,
}

/// A packet the sender hands to the network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sent {
    /// Packet number.
    pub pn: u64,
    /// Stream chunk carried ([`PING`]: none).
    pub chunk: u64,
    /// Bytes on the wire.
    pub wire_bytes: u32,
}

/// Event counters of a QUIC sender.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QuicCounters {
    /// Packets sent (data, retransmissions and probes).
    pub packets_sent: u64,
    /// Packets that carried a chunk sent before (after a loss or as a probe).
    pub retransmits: u64,
    /// Packets declared lost.
    pub lost: u64,
    /// Packets declared lost and acknowledged later.
    pub spurious_losses: u64,
    /// Congestion episodes entered on loss (one window reduction each).
    pub recoveries: u64,
    /// Congestion episodes entered on an ECN-CE count increase.
    pub ecn_reductions: u64,
    /// CE marks the receiver echoed.
    pub ce_echoed: u64,
    /// Probe timeouts.
    pub ptos: u64,
    /// Probe packets sent on PTOs.
    pub probes_sent: u64,
    /// Persistent congestion declared (RFC 9002 §7.6).
    pub persistent_congestions: u64,
    /// ACK frames received.
    pub acks_received: u64,
}

/// Set of acknowledged stream chunks: everything below `below`, and a bitmap above it.
#[derive(Clone, Debug, Default)]
struct ChunkBits {
    below: u64,
    bits: VecDeque<bool>,
}

impl ChunkBits {
    fn mark(&mut self, c: u64) {
        if c < self.below {
            return;
        }
        let i = usize::try_from(c - self.below).expect("chunks in flight fit memory");
        if self.bits.len() <= i {
            self.bits.resize(i + 1, false);
        }
        self.bits[i] = true;
        while self.bits.front() == Some(&true) {
            self.bits.pop_front();
            self.below += 1;
        }
    }

    fn contains(&self, c: u64) -> bool {
        c < self.below
            || usize::try_from(c - self.below)
                .ok()
                .and_then(|i| self.bits.get(i).copied())
                .unwrap_or(false)
    }
}

/// A QUIC sender (one connection, one stream).
#[derive(Debug)]
pub struct Sender {
    payload: u32,
    /// Wire bytes a packet adds to its stream payload (framing and IP/UDP headers).
    overhead: u32,
    last_len: u32,
    max_ack_delay: Dur,
    granularity: Dur,
    pacing: PacingMode,
    cc: Box<dyn CongestionControl>,
    cc_wants_sent: bool,
    /// The controller grows on ACKs that arrive while not cwnd-limited (quicly's CUBIC).
    cc_grows_unlimited: bool,
    st: CwndState,
    rate: RateSampler,
    ecn: EcnMode,
    transfer_bytes: Option<u64>,
    /// RTT estimator (RFC 9002 §5).
    pub rtt: RttEstimator,
    /// When the first RTT sample was taken (RFC 9002 §7.6.2 `first_rtt_sample`).
    first_rtt_sample: Option<Time>,
    /// Sent packets from packet number `base` on.
    sent: VecDeque<SentPacket>,
    base: u64,
    /// No packet below this number is outstanding (a hint loss detection starts from, so it
    /// does not walk the acknowledged and held-lost packets again on every ACK).
    first_outstanding: u64,
    /// The ranges of the last ACK frame processed, highest first: every packet in them (from
    /// `base` on) is acknowledged, so a later frame's ranges skip them.
    prev_ranges: [(u64, u64); crate::quic::frame::MAX_ACK_RANGES],
    prev_n: usize,
    next_pn: u64,
    in_flight: u32,
    largest_acked: Option<u64>,
    /// Time-threshold loss timer (RFC 9002 §A.10 `loss_time`).
    loss_time: Option<Time>,
    pto_count: u32,
    last_eliciting: Option<Time>,
    probes_due: u32,
    /// Start of the current congestion episode (RFC 9002 `congestion_recovery_start_time`).
    episode: Option<Time>,
    /// The controller state and since when.
    ca: CaState,
    state_since: Time,
    ce_seen: u16,
    owns_cwnd: bool,
    cwnd_limited: bool,
    /// The stream: next new chunk, how many in all, whether the application still writes.
    next_chunk: u64,
    total_chunks: Option<u64>,
    writing: bool,
    retx: VecDeque<u64>,
    acked: ChunkBits,
    /// Pacer: earliest departure of the next packet, and whether it held the last send.
    pace_at: Time,
    pace_blocked: bool,
    /// Counters.
    pub counters: QuicCounters,
    /// Every RTT sample, ns.
    pub rtt_hist: Histogram,
    min_cwnd: u32,
}

impl Sender {
    /// A sender for flow `cfg` with QUIC options `q`; `cc_seed` seeds the controller.
    #[must_use]
    pub fn new(cfg: &FlowConfig, q: &QuicConfig, cc_seed: u64) -> Self {
        let payload = q.payload_bytes();
        let (total_chunks, last_len) = match cfg.size {
            Some(bytes) => {
                let n = bytes.div_ceil(u64::from(payload)).max(1);
                let last = bytes - (n - 1) * u64::from(payload);
                (Some(n), u32::try_from(last.max(1)).unwrap_or(payload))
            }
            None => (None, payload),
        };
        let cc = cfg.cc.with_ecn(cfg.ecn).build(cc_seed);
        let ecn = cc.ecn_requirement().unwrap_or(cfg.ecn);
        let st = CwndState::new(cfg.initial_window, payload);
        Sender {
            payload,
            overhead: q.framing_bytes + q.ip_udp_overhead,
            last_len,
            max_ack_delay: q.max_ack_delay,
            granularity: q.clock_granularity,
            pacing: cfg.pacing,
            cc_wants_sent: cc.wants_packet_sent(),
            cc_grows_unlimited: cc.grows_when_not_cwnd_limited(),
            cc,
            st,
            rate: RateSampler::new(),
            ecn,
            transfer_bytes: cfg.size,
            rtt: RttEstimator::new(q.initial_rtt),
            first_rtt_sample: None,
            sent: VecDeque::new(),
            base: 0,
            first_outstanding: 0,
            prev_ranges: [(0, 0); crate::quic::frame::MAX_ACK_RANGES],
            prev_n: 0,
            next_pn: 0,
            in_flight: 0,
            largest_acked: None,
            loss_time: None,
            pto_count: 0,
            last_eliciting: None,
            probes_due: 0,
            episode: None,
            ca: CaState::Open,
            state_since: Time::ZERO,
            ce_seen: 0,
            owns_cwnd: false,
            cwnd_limited: false,
            next_chunk: 0,
            total_chunks,
            writing: false,
            retx: VecDeque::new(),
            acked: ChunkBits::default(),
            pace_at: Time::ZERO,
            pace_blocked: false,
            counters: QuicCounters::default(),
            rtt_hist: Histogram::new(),
            min_cwnd: cfg.initial_window,
        }
    }

    /// The application starts writing at `now`: initialise the controller and send.
    pub fn start(&mut self, now: Time, out: &mut Vec<Sent>) {
        let now = quantise(now, self.granularity);
        self.writing = true;
        self.cc.init(now, &mut self.st);
        let info = ConnStart {
            first_rtt: None,
            transfer_bytes: self.transfer_bytes,
            rcv_wnd_bytes: None,
        };
        self.cc.on_connection_start(now, &mut self.st, &info);
        self.min_cwnd = self.min_cwnd.min(self.st.cwnd);
        self.send(now, out);
    }

    /// The application stops writing at `now`: chunks not yet sent never will be.
    pub fn stop_app(&mut self, _now: Time) {
        // No new data from now on; a sized transfer keeps its size, so one stopped before its
        // end never counts as complete (as TCP's `total_segments`).
        self.writing = false;
    }

    /// Stream chunks of a sized transfer.
    #[must_use]
    pub fn total_chunks(&self) -> Option<u64> {
        self.total_chunks
    }

    /// Stream bytes of the first `n` chunks.
    #[must_use]
    pub fn stream_bytes(&self, n: u64) -> u64 {
        let full = n * u64::from(self.payload);
        match self.transfer_bytes {
            Some(size) => full.min(size),
            None => full,
        }
    }

    /// Stream payload bytes of a full packet.
    #[must_use]
    pub fn payload_bytes(&self) -> u32 {
        self.payload
    }

    /// The window state.
    #[must_use]
    pub fn cwnd_state(&self) -> CwndState {
        self.st
    }

    /// The controller.
    #[must_use]
    pub fn cc(&self) -> &dyn CongestionControl {
        self.cc.as_ref()
    }

    /// The ECN mode in use.
    #[must_use]
    pub fn ecn_mode(&self) -> EcnMode {
        self.ecn
    }

    /// Packets in flight.
    #[must_use]
    pub fn in_flight(&self) -> u32 {
        self.in_flight
    }

    /// Smoothed RTT, once sampled.
    #[must_use]
    pub fn srtt(&self) -> Option<Dur> {
        self.rtt.has_sample.then_some(self.rtt.smoothed)
    }

    /// The smallest cwnd so far.
    #[must_use]
    pub fn min_cwnd(&self) -> u32 {
        self.min_cwnd
    }

    /// Packets delivered CE-marked, as the receiver echoed.
    #[must_use]
    pub fn delivered_ce(&self) -> u64 {
        self.rate.delivered_ce()
    }

    /// The last valid delivery-rate sample, bit/s of stream payload.
    #[must_use]
    #[expect(
        clippy::cast_precision_loss,
        reason = "a rate for reporting; counts are far below 2^53"
    )]
    pub fn last_delivery_rate_bps(&self) -> Option<f64> {
        self.rate
            .last_sample()
            .map(|(n, iv)| n as f64 * f64::from(self.payload) * 8.0 / iv.as_secs_f64().max(1e-12))
    }

    /// The current congestion state.
    #[must_use]
    pub fn ca_state(&self) -> CaState {
        self.ca
    }

    /// Whether packets are paced now.
    fn paced(&self) -> bool {
        match self.pacing {
            PacingMode::Off => false,
            PacingMode::On => true,
            PacingMode::Auto => self.cc.wants_pacing() || self.cc.paces_now(),
        }
    }

    /// The pacing rate in bytes of stream payload per second, when paced: the controller's,
    /// else quicly's 2·cwnd/srtt (`quicly_pacer_calc_send_rate` with multiplier 2).
    #[must_use]
    pub fn pacing_rate(&self) -> Option<u64> {
        if !self.paced() {
            return None;
        }
        if let Some(r) = self.cc.pacing_rate() {
            return Some(r.max(1));
        }
        let bytes = 2 * u64::from(self.st.cwnd) * u64::from(self.payload);
        let srtt = self.rtt.smoothed.as_nanos().max(1);
        Some(
            u64::try_from(u128::from(bytes) * 1_000_000_000 / u128::from(srtt))
                .unwrap_or(u64::MAX)
                .max(1),
        )
    }

    /// When [`Sender::on_wake`] must run next: the loss timer, else the PTO, or the pacer's
    /// release when it holds a packet (each rounded up to the clock granularity).
    #[must_use]
    pub fn next_wakeup(&self) -> Option<Time> {
        let timer = self.loss_time.or_else(|| self.pto_deadline());
        let pace = self.pace_blocked.then_some(self.pace_at);
        let t = match (timer, pace) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        t.map(|t| quantise_up(t, self.granularity))
    }

    /// The PTO deadline (RFC 9002 §6.2.1): from the last ack-eliciting packet, the PTO period
    /// times 2^pto_count, while ack-eliciting packets are in flight.
    fn pto_deadline(&self) -> Option<Time> {
        if self.in_flight == 0 {
            return None;
        }
        let base = self.rtt.pto_base(self.max_ack_delay).0;
        let backoff = 1u64 << self.pto_count.min(30);
        Some(self.last_eliciting? + Dur(base.saturating_mul(backoff)))
    }

    fn chunk_len(&self, c: u64) -> u32 {
        if self.transfer_bytes.is_some() && self.total_chunks.is_some_and(|n| c + 1 == n) {
            self.last_len
        } else {
            self.payload
        }
    }

    /// Whether the application has a new chunk to send.
    fn has_new(&self) -> bool {
        self.writing && self.total_chunks.is_none_or(|n| self.next_chunk < n)
    }

    /// The next chunk to send and whether it was sent before: lost chunks first (RFC 9000
    /// §13.3), then new data; a probe with neither repeats the oldest unacknowledged chunk in
    /// flight, else is a PING (RFC 9002 §6.2.4).
    fn pick(&mut self, probe: bool) -> Option<(u64, bool)> {
        while let Some(c) = self.retx.pop_front() {
            if !self.acked.contains(c) {
                return Some((c, true));
            }
        }
        if self.has_new() {
            let c = self.next_chunk;
            self.next_chunk += 1;
            return Some((c, false));
        }
        if !probe {
            return None;
        }
        let old = self.sent.iter().find(|p| {
            p.state == PktState::Outstanding && p.chunk != PING && !self.acked.contains(p.chunk)
        });
        Some(old.map_or((PING, false), |p| (p.chunk, true)))
    }

    /// Send what the window, the pacer and the stream allow (probes ignore window and pacer).
    fn send(&mut self, now: Time, out: &mut Vec<Sent>) {
        self.pace_blocked = false;
        loop {
            let probe = self.probes_due > 0;
            if !probe && self.in_flight >= self.st.cwnd {
                self.cwnd_limited = true;
                return;
            }
            let can_send = probe || !self.retx.is_empty() || self.has_new();
            if !can_send {
                // Application-limited with room in the window (Linux
                // `tcp_rate_check_app_limited`).
                self.cwnd_limited = false;
                self.rate.mark_app_limited(self.in_flight);
                self.st.app_limited = true;
                return;
            }
            if !probe && self.paced() && self.pace_at > now {
                self.pace_blocked = true;
                return;
            }
            let Some((chunk, retrans)) = self.pick(probe) else {
                // Only acknowledged chunks were queued for retransmission.
                continue;
            };
            self.transmit(now, chunk, retrans, probe, out);
        }
    }

    fn transmit(&mut self, now: Time, chunk: u64, retrans: bool, probe: bool, out: &mut Vec<Sent>) {
        let pn = self.next_pn;
        self.next_pn += 1;
        let fresh = self.in_flight == 0;
        self.in_flight += 1;
        self.st.app_limited = self.rate.is_app_limited();
        let rec = self.rate.on_sent(now, fresh, self.in_flight, retrans);
        self.sent.push_back(SentPacket {
            chunk,
            sent: now,
            rec,
            state: PktState::Outstanding,
        });
        self.last_eliciting = Some(now);
        self.counters.packets_sent += 1;
        self.counters.retransmits += u64::from(retrans);
        if probe {
            self.probes_due -= 1;
            self.counters.probes_sent += 1;
        }
        let wire_bytes = if chunk == PING {
            ACK_PACKET_BYTES + (self.overhead - self.overhead.min(super::FRAMING_BYTES))
        } else {
            self.overhead + self.chunk_len(chunk)
        };
        if self.cc_wants_sent {
            let info = SentInfo {
                seq: pn,
                bytes: self.payload,
                in_flight: self.in_flight,
                is_retrans: retrans,
                is_app_limited: rec.is_app_limited,
            };
            self.cc.on_packet_sent(now, &self.st, &info);
        }
        if !probe && self.paced() {
            let rate = self.pacing_rate().unwrap_or(u64::MAX);
            let gap = u64::try_from(u128::from(self.payload) * 1_000_000_000 / u128::from(rate))
                .unwrap_or(u64::MAX);
            let floor = Time(now.0.saturating_sub((PACER_BURST - 1).saturating_mul(gap)));
            self.pace_at = Time(self.pace_at.max(floor).0.saturating_add(gap));
        }
        out.push(Sent {
            pn,
            chunk,
            wire_bytes,
        });
    }

    /// Drop the records no longer needed from the front: acknowledged packets, and lost ones
    /// three PTO periods after they were sent (kept that long only to count a late
    /// acknowledgement as a spurious loss; a cclab choice).
    fn pop_done(&mut self, now: Time) {
        let hold = Dur(3 * self.rtt.pto_base(self.max_ack_delay).0);
        while let Some(p) = self.sent.front() {
            let done = match p.state {
                PktState::Acked => true,
                PktState::Lost => p.sent + hold <= now,
                PktState::Outstanding => false,
            };
            if !done {
                break;
            }
            self.sent.pop_front();
            self.base += 1;
        }
    }
}
