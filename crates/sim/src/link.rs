//! A unidirectional link: a drop-tail queue, a transmitter of fixed rate, a loss model, and a
//! propagation delay line.
//!
//! Contract: [`Link::offer`] accepts a packet at `now` and tells the caller whether it was
//! dropped or whether the transmitter must be started (or, for a lean link with a horizon,
//! that the packet cut through: see [`Link::offer`]); [`Link::finish_tx`] is called when the
//! packet in service has been serialised and returns it (unless the loss model ate it) with its
//! arrival time at the far end; the delay line holds packets in arrival order (constant delay keeps
//! FIFO order), so the engine needs only one pending event per link for transmissions and one for
//! arrivals, whatever the number of packets in flight. A link without a rate is a pure delay line.
//! Statistics (sojourn, backlog, drops) are kept here.
//!
//! A drop-tail FIFO with a constant rate is deterministic once a packet is accepted: its
//! transmission starts when the one before it ends. In *analytic* mode (the default) the link
//! therefore schedules each accepted packet at enqueue time — start, end, loss decision and
//! arrival — and puts it straight into the delay line; no transmission events are needed, and
//! the backlog is the set of packets whose start lies in the future. Sojourn statistics are
//! recorded when the start time is reached and losses counted when the transmission ends (lazily,
//! at the next enqueue or sample). The *evented* mode (one event per transmission end) is kept
//! for disciplines that decide at dequeue time (AQMs) and as a reference. Both modes simulate the
//! same system; they differ only in how a departure and an arrival at the same nanosecond are
//! ordered: analytic lets the departure free its slot first, evented follows event insertion
//! order. Aggregates agree closely (tested in `sim.rs` and `tests/properties.rs`).
//!
//! For the host model every accepted packet's end of serialisation is reported back
//! (`Enqueued::InFlight::tx_end`, or the finished packet from [`Link::finish_tx`]): on a host's
//! NIC that is the TX completion. A *lean* link (analytic, unmonitored, lossless: NICs, reverse
//! paths) keeps no statistics, and when the caller passes a horizon (the next pending event)
//! a packet that would reach the far end before it, with nothing ahead of it in the delay
//! line, is not stored: the caller hands it on at once ([`Enqueued::CutThrough`],
//! [`Link::try_cut`]). The schedule is the one the link would have produced. In both modes the
//! link knows when its transmitter drains ([`Link::busy_until`]), which the fq qdisc uses to
//! feed it one skb at a time.

use std::collections::VecDeque;

use cclab_cc::{Dur, Time};
use rand_chacha::ChaCha8Rng;

use crate::config::{LinkConfig, LossConfig, QueueConfig, QueueLimit, ScriptedDrop};
use crate::histogram::Histogram;
use crate::packet::{Owner, Packet, Payload};
use crate::rng;

/// Outcome of offering a packet to a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Enqueued {
    /// Queued behind others; nothing to do.
    Queued,
    /// The transmitter was idle: the packet is in service; schedule `finish_tx` at this time.
    StartedTx(Time),
    /// Dropped because the queue is full.
    Dropped,
    /// Scheduled (analytic FIFO) or on a rate-less link: the packet will arrive at this time
    /// (schedule if it is the head).
    InFlight {
        /// Arrival time at the far end.
        arrival: Time,
        /// The delay line was empty before: the caller must schedule an arrival event.
        was_empty: bool,
        /// When its serialisation ends (the hand-off time on a rate-less link).
        tx_end: Time,
    },
    /// Analytic FIFO: accepted, but the loss model will lose it when its serialisation ends at
    /// this time.
    LostOnWire(Time),
    /// Accepted and scheduled, but not stored: it reaches the far end at `arrival`, before the
    /// horizon the caller gave, and the caller hands it on itself ([`Link::offer`]).
    CutThrough {
        /// Arrival time at the far end.
        arrival: Time,
        /// When its serialisation ends.
        tx_end: Time,
    },
}

/// Per-interval queue counters, reset by the sampler.
#[derive(Clone, Copy, Debug, Default)]
pub struct IntervalStats {
    /// Sum of sojourn times of packets dequeued, ns.
    pub sojourn_sum: u64,
    /// Largest sojourn, ns.
    pub sojourn_max: u64,
    /// Packets dequeued.
    pub dequeued: u64,
    /// Drops (queue overflow).
    pub drops: u32,
}

/// Link state.
#[derive(Debug)]
pub struct Link {
    rate_bps: Option<u64>,
    delay: Dur,
    limit: QueueLimit,
    /// Evented mode: waiting packets with their enqueue times.
    queue: VecDeque<(Time, Packet)>,
    queued_bytes: u64,
    serving: Option<Packet>,
    pipe: VecDeque<(Time, Packet)>,
    loss: LossModel,
    /// Whole-run sojourn histogram.
    pub sojourn: Histogram,
    /// Counters since the last sample.
    pub interval: IntervalStats,
    /// Packets accepted into the queue.
    pub enqueued: u64,
    /// Queue-overflow drops.
    pub drops: u64,
    /// Packets lost by the loss model.
    pub link_losses: u64,
    /// Wire bytes transmitted (evented mode; see [`Link::tx_bytes_done`]).
    tx_bytes: u64,
    /// Largest backlog in packets.
    pub max_backlog: u32,
    /// Data segments lost here (overflow or loss model).
    pub data_dropped: u64,
    analytic: bool,
    free_at: Time,
    waiting: VecDeque<Scheduled>,
    in_service: Option<Scheduled>,
    scheduled_bytes: u64,
    pending_losses: VecDeque<(Time, bool)>,
    ser_cache: [(u32, Dur); 2],
    /// Sojourn statistics are kept only for monitored links (they are only reported for those).
    monitored: bool,
    /// Analytic, unmonitored and lossless: only the FIFO schedule matters, so enqueue keeps no
    /// statistics ([`Link::offer`]).
    lean: bool,
}

/// A packet scheduled on an analytic FIFO.
#[derive(Clone, Copy, Debug)]
struct Scheduled {
    enqueued: Time,
    start: Time,
    end: Time,
    bytes: u32,
}

#[derive(Debug)]
enum LossModel {
    None,
    Bernoulli { p: f64, rng: Box<ChaCha8Rng> },
    Scripted(Vec<ScriptedDrop>),
}

impl Link {
    /// Build link `index` of a run seeded with `seed`; `analytic` selects the event-free FIFO.
    #[must_use]
    pub fn new(cfg: &LinkConfig, index: u32, seed: u64, analytic: bool) -> Self {
        let QueueConfig::DropTail { limit } = cfg.queue;
        let loss = match &cfg.loss {
            LossConfig::None => LossModel::None,
            LossConfig::Bernoulli { p } if *p <= 0.0 => LossModel::None,
            LossConfig::Bernoulli { p } => LossModel::Bernoulli {
                p: *p,
                rng: Box::new(rng::stream(seed, rng::LINK_LOSS + u64::from(index))),
            },
            LossConfig::Scripted { drops } => LossModel::Scripted(drops.clone()),
        };
        let lean = analytic && !cfg.monitor && matches!(loss, LossModel::None);
        Link {
            rate_bps: cfg.rate_bps,
            delay: cfg.delay,
            limit,
            queue: VecDeque::new(),
            queued_bytes: 0,
            serving: None,
            pipe: VecDeque::new(),
            loss,
            sojourn: Histogram::new(),
            interval: IntervalStats::default(),
            enqueued: 0,
            drops: 0,
            link_losses: 0,
            tx_bytes: 0,
            max_backlog: 0,
            data_dropped: 0,
            analytic,
            free_at: Time::ZERO,
            waiting: VecDeque::new(),
            in_service: None,
            scheduled_bytes: 0,
            pending_losses: VecDeque::new(),
            // Size 0 never occurs on the wire, so the cache starts empty.
            ser_cache: [(0, Dur::ZERO); 2],
            monitored: cfg.monitor,
            lean,
        }
    }

    /// Serialisation time of `bytes` at `rate`, remembering the last two sizes (data and ACK
    /// sizes repeat, and a division per packet is a visible cost).
    #[inline]
    fn serialization(&mut self, bytes: u32, rate: u64) -> Dur {
        if self.ser_cache[0].0 == bytes {
            return self.ser_cache[0].1;
        }
        if self.ser_cache[1].0 == bytes {
            return self.ser_cache[1].1;
        }
        let d = Dur::serialization(u64::from(bytes), rate);
        self.ser_cache = [(bytes, d), self.ser_cache[0]];
        d
    }

    /// Analytic mode: account for every scheduled packet whose transmission has started by
    /// `now` (it leaves the backlog; its sojourn is recorded).
    pub fn settle(&mut self, now: Time) {
        while let Some(&(end, data)) = self.pending_losses.front() {
            if end > now {
                break;
            }
            self.pending_losses.pop_front();
            self.link_losses += 1;
            if data {
                self.data_dropped += 1;
            }
        }
        while let Some(s) = self.waiting.front().copied() {
            if s.start > now {
                break;
            }
            self.waiting.pop_front();
            self.queued_bytes -= u64::from(s.bytes);
            self.record_dequeue(s.start.saturating_since(s.enqueued).as_nanos());
            self.in_service = Some(s);
        }
    }

    /// Wire bytes whose transmission had ended by `now`.
    #[must_use]
    pub fn tx_bytes_done(&mut self, now: Time) -> u64 {
        if !self.analytic {
            return self.tx_bytes;
        }
        self.settle(now);
        let in_progress = self
            .in_service
            .filter(|s| s.end > now)
            .map_or(0, |s| u64::from(s.bytes));
        self.scheduled_bytes - self.queued_bytes - in_progress
    }

    #[inline]
    fn enqueue_analytic(&mut self, now: Time, rate: u64, pkt: Packet) -> Enqueued {
        self.settle(now);
        let bytes = pkt.wire_bytes;
        if self.free_at > now && self.tail_drop(self.waiting.len(), &pkt) {
            return Enqueued::Dropped;
        }
        self.enqueued += 1;
        let start = self.free_at.max(now);
        let end = start + self.serialization(bytes, rate);
        self.free_at = end;
        self.scheduled_bytes += u64::from(bytes);
        let sched = Scheduled {
            enqueued: now,
            start,
            end,
            bytes,
        };
        if start > now {
            self.queued_bytes += u64::from(bytes);
            self.waiting.push_back(sched);
            self.max_backlog = self.max_backlog.max(self.waiting.len() as u32);
        } else {
            self.record_dequeue(0);
            self.in_service = Some(sched);
        }
        if self.lose(&pkt) {
            // Lost on the wire: counted when its transmission ends (see `settle`).
            self.pending_losses.push_back((end, pkt.is_data()));
            return Enqueued::LostOnWire(end);
        }
        let was_empty = self.pipe.is_empty();
        let arrival = end + self.delay;
        self.pipe.push_back((arrival, pkt));
        Enqueued::InFlight {
            arrival,
            was_empty,
            tx_end: end,
        }
    }

    /// The commonest case of [`Link::offer`] with a horizon, in a few instructions: a lean link
    /// whose transmitter is idle and whose delay line is empty takes a `bytes`-byte packet at
    /// `now` and returns (arrival, end of serialisation) if it arrives before `horizon`, without
    /// storing it. `None`: nothing was changed; offer it normally.
    #[inline(always)]
    pub fn try_cut(&mut self, now: Time, bytes: u32, horizon: Time) -> Option<(Time, Time)> {
        if !self.lean || self.free_at > now || !self.pipe.is_empty() {
            return None;
        }
        let rate = self.rate_bps?;
        let end = now + self.serialization(bytes, rate);
        let arrival = end + self.delay;
        if arrival >= horizon {
            return None;
        }
        // Idle: every scheduled packet has started (see `enqueue_lean`).
        if !self.waiting.is_empty() {
            self.waiting.clear();
        }
        self.queued_bytes = 0;
        self.free_at = end;
        self.enqueued += 1;
        Some((arrival, end))
    }

    /// When the transmitter finishes everything accepted so far (at or before `now`: idle).
    #[must_use]
    pub fn busy_until(&self) -> Time {
        self.free_at
    }

    /// A lean link's analytic enqueue: settle only what the drop-tail decision needs (nothing
    /// when the transmitter is idle, since then every scheduled packet has started), and cut
    /// the packet through when it arrives before `horizon` with nothing ahead of it in the
    /// delay line.
    #[inline]
    fn enqueue_lean(
        &mut self,
        now: Time,
        rate: u64,
        pkt: &Packet,
        next_hop: u32,
        horizon: Time,
    ) -> Enqueued {
        let bytes = pkt.wire_bytes;
        let start = if self.free_at <= now {
            if !self.waiting.is_empty() {
                self.waiting.clear();
            }
            self.queued_bytes = 0;
            now
        } else {
            while let Some(s) = self.waiting.front() {
                if s.start > now {
                    break;
                }
                self.queued_bytes -= u64::from(s.bytes);
                self.waiting.pop_front();
            }
            if self.tail_drop(self.waiting.len(), pkt) {
                return Enqueued::Dropped;
            }
            self.free_at
        };
        self.enqueued += 1;
        let end = start + self.serialization(bytes, rate);
        self.free_at = end;
        if start > now {
            self.queued_bytes += u64::from(bytes);
            self.waiting.push_back(Scheduled {
                enqueued: now,
                start,
                end,
                bytes,
            });
        }
        let arrival = end + self.delay;
        let was_empty = self.pipe.is_empty();
        if was_empty && arrival < horizon {
            return Enqueued::CutThrough {
                arrival,
                tx_end: end,
            };
        }
        self.pipe.push_back((
            arrival,
            Packet {
                hop: next_hop,
                ..*pkt
            },
        ));
        Enqueued::InFlight {
            arrival,
            was_empty,
            tx_end: end,
        }
    }

    /// Offer a packet at `now`; the link keeps it with `hop` = `next_hop` (the index of the
    /// route's next link). A lean link (analytic, unmonitored, lossless) whose delay line is
    /// empty does not store it if it reaches the far end before `horizon`
    /// ([`Enqueued::CutThrough`]), and the caller hands it on. The schedule is the same.
    #[inline]
    pub fn offer(&mut self, now: Time, pkt: &Packet, next_hop: u32, horizon: Time) -> Enqueued {
        let Some(rate) = self.rate_bps else {
            let was_empty = self.pipe.is_empty();
            let arrival = now + self.delay;
            self.pipe.push_back((
                arrival,
                Packet {
                    hop: next_hop,
                    ..*pkt
                },
            ));
            return Enqueued::InFlight {
                arrival,
                was_empty,
                tx_end: now,
            };
        };
        if self.lean {
            return self.enqueue_lean(now, rate, pkt, next_hop, horizon);
        }
        self.enqueue_full(
            now,
            rate,
            Packet {
                hop: next_hop,
                ..*pkt
            },
        )
    }

    /// Enqueue on a link that keeps statistics or has a loss model, or is evented.
    #[inline]
    fn enqueue_full(&mut self, now: Time, rate: u64, pkt: Packet) -> Enqueued {
        if self.analytic {
            return self.enqueue_analytic(now, rate, pkt);
        }
        if self.serving.is_none() {
            debug_assert!(self.queue.is_empty());
            self.enqueued += 1;
            self.record_dequeue(0);
            self.serving = Some(pkt);
            let ser = self.serialization(pkt.wire_bytes, rate);
            self.free_at = now + ser;
            return Enqueued::StartedTx(now + ser);
        }
        if self.tail_drop(self.queue.len(), &pkt) {
            return Enqueued::Dropped;
        }
        // Keep the time the FIFO drains in the evented mode too (the fq qdisc asks for it).
        self.free_at = self.free_at.max(now) + self.serialization(pkt.wire_bytes, rate);
        self.enqueued += 1;
        self.queued_bytes += u64::from(pkt.wire_bytes);
        self.queue.push_back((now, pkt));
        self.max_backlog = self.max_backlog.max(self.queue.len() as u32);
        Enqueued::Queued
    }

    /// Drop-tail decision for `pkt` arriving behind `waiting` queued packets; counts the drop.
    fn tail_drop(&mut self, waiting: usize, pkt: &Packet) -> bool {
        let full = match self.limit {
            QueueLimit::Packets(n) => waiting >= n as usize,
            QueueLimit::Bytes(b) => self.queued_bytes + u64::from(pkt.wire_bytes) > b,
        };
        if full {
            self.drops += 1;
            self.interval.drops += 1;
            if pkt.is_data() {
                self.data_dropped += 1;
            }
        }
        full
    }

    fn record_dequeue(&mut self, sojourn: u64) {
        if !self.monitored {
            return;
        }
        self.sojourn.record(sojourn);
        self.interval.sojourn_sum += sojourn;
        self.interval.sojourn_max = self.interval.sojourn_max.max(sojourn);
        self.interval.dequeued += 1;
    }

    /// The packet in service finished serialisation at `now`. Returns the next transmission end
    /// (if another packet was waiting), whether the delay line was empty before (then the
    /// caller schedules an arrival at [`Link::next_arrival`]), and the finished packet (for TX
    /// completions).
    pub fn finish_tx(&mut self, now: Time) -> (Option<Time>, bool, Packet) {
        let pkt = self
            .serving
            .take()
            .expect("finish_tx without a packet in service");
        self.tx_bytes += u64::from(pkt.wire_bytes);
        let mut pipe_was_empty = false;
        if self.lose(&pkt) {
            self.link_losses += 1;
            if pkt.is_data() {
                self.data_dropped += 1;
            }
        } else {
            pipe_was_empty = self.pipe.is_empty();
            self.pipe.push_back((now + self.delay, pkt));
        }
        let next = self.queue.pop_front().map(|(enqueued, p)| {
            self.queued_bytes -= u64::from(p.wire_bytes);
            self.record_dequeue(now.saturating_since(enqueued).as_nanos());
            self.serving = Some(p);
            let rate = self.rate_bps.expect("queued packet on a rate-less link");
            now + self.serialization(p.wire_bytes, rate)
        });
        (next, pipe_was_empty, pkt)
    }

    #[inline]
    fn lose(&mut self, pkt: &Packet) -> bool {
        match &mut self.loss {
            LossModel::None => false,
            LossModel::Bernoulli { p, rng } => rng::unit_f64(rng) < *p,
            LossModel::Scripted(drops) => match (pkt.owner, pkt.payload) {
                (Owner::Flow(f), Payload::Data { seq, tx_count, .. }) => drops
                    .iter()
                    .any(|d| d.flow == f && d.seq == seq && d.nth == tx_count),
                _ => false,
            },
        }
    }

    /// Arrival time of the head of the delay line.
    #[must_use]
    pub fn next_arrival(&self) -> Option<Time> {
        self.pipe.front().map(|&(t, _)| t)
    }

    /// Take the head of the delay line (the caller checked its arrival time is now).
    pub fn pop_arrival(&mut self) -> Option<Packet> {
        self.pipe.pop_front().map(|(_, p)| p)
    }

    /// Packets waiting (not counting the one in service). Analytic links must be settled first.
    #[must_use]
    pub fn backlog_packets(&self) -> u32 {
        if self.analytic {
            self.waiting.len() as u32
        } else {
            self.queue.len() as u32
        }
    }

    /// Bytes waiting (not counting the one in service).
    #[must_use]
    pub fn backlog_bytes(&self) -> u64 {
        self.queued_bytes
    }

    /// Data segments inside this link (queue, transmitter, delay line).
    #[must_use]
    pub fn data_inside(&self) -> u64 {
        // Analytic links keep accepted packets in the delay line, and packets the loss model
        // will drop in `pending_losses` until their transmission ends.
        let lost_later = self.pending_losses.iter().filter(|(_, data)| *data).count();
        let q = lost_later + self.queue.iter().filter(|(_, p)| p.is_data()).count();
        let s = usize::from(self.serving.is_some_and(|p| p.is_data()));
        let d = self.pipe.iter().filter(|(_, p)| p.is_data()).count();
        (q + s + d) as u64
    }
}
