//! A unidirectional link: a drop-tail queue, a transmitter of fixed rate, a loss model, and a
//! propagation delay line.
//!
//! Contract: [`Link::enqueue`] accepts a packet at `now` and tells the caller whether it was
//! dropped or whether the transmitter must be started; [`Link::finish_tx`] is called when the
//! packet in service has been serialised and returns it (unless the loss model ate it) with its
//! arrival time at the far end; the delay line holds packets in arrival order (constant delay keeps
//! FIFO order), so the engine needs only one pending event per link for transmissions and one for
//! arrivals, whatever the number of packets in flight. A link without a rate is a pure delay line.
//! Statistics (sojourn, backlog, drops) are kept here.

use std::collections::VecDeque;

use cclab_cc::{Dur, Time};
use rand_chacha::ChaCha8Rng;

use crate::config::{LinkConfig, LossConfig, NodeId, QueueConfig, QueueLimit, ScriptedDrop};
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
    /// Pure delay line: the packet will arrive at this time (schedule if it is the head).
    InFlight {
        /// Arrival time at the far end.
        arrival: Time,
        /// The delay line was empty before: the caller must schedule an arrival event.
        was_empty: bool,
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
    /// Wire bytes that finished transmission.
    pub tx_bytes: u64,
}

/// Link state.
#[derive(Debug)]
pub struct Link {
    /// Receiving node.
    pub to: NodeId,
    rate_bps: Option<u64>,
    delay: Dur,
    limit: QueueLimit,
    queue: VecDeque<Packet>,
    queued_bytes: u64,
    in_service: Option<Packet>,
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
    /// Wire bytes transmitted.
    pub tx_bytes: u64,
    /// Largest backlog in packets.
    pub max_backlog: u32,
    /// Data segments lost here (overflow or loss model).
    pub data_dropped: u64,
}

#[derive(Debug)]
enum LossModel {
    None,
    Bernoulli { p: f64, rng: Box<ChaCha8Rng> },
    Scripted(Vec<ScriptedDrop>),
}

impl Link {
    /// Build link `index` of a run seeded with `seed`.
    #[must_use]
    pub fn new(cfg: &LinkConfig, index: u32, seed: u64) -> Self {
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
        Link {
            to: cfg.to,
            rate_bps: cfg.rate_bps,
            delay: cfg.delay,
            limit,
            queue: VecDeque::new(),
            queued_bytes: 0,
            in_service: None,
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
        }
    }

    /// True for a rate-less delay line with zero delay (the engine hands packets straight on).
    #[must_use]
    pub fn is_instant(&self) -> bool {
        self.rate_bps.is_none() && self.delay == Dur::ZERO
    }

    /// Offer a packet at `now`.
    pub fn enqueue(&mut self, now: Time, mut pkt: Packet) -> Enqueued {
        let Some(rate) = self.rate_bps else {
            let was_empty = self.pipe.is_empty();
            let arrival = now + self.delay;
            self.pipe.push_back((arrival, pkt));
            return Enqueued::InFlight { arrival, was_empty };
        };
        pkt.enqueued = now;
        if self.in_service.is_none() {
            debug_assert!(self.queue.is_empty());
            self.enqueued += 1;
            self.record_dequeue(0);
            self.in_service = Some(pkt);
            return Enqueued::StartedTx(now + Dur::serialization(u64::from(pkt.wire_bytes), rate));
        }
        let full = match self.limit {
            QueueLimit::Packets(n) => self.queue.len() >= n as usize,
            QueueLimit::Bytes(b) => self.queued_bytes + u64::from(pkt.wire_bytes) > b,
        };
        if full {
            self.drops += 1;
            self.interval.drops += 1;
            if pkt.is_data() {
                self.data_dropped += 1;
            }
            return Enqueued::Dropped;
        }
        self.enqueued += 1;
        self.queued_bytes += u64::from(pkt.wire_bytes);
        self.queue.push_back(pkt);
        self.max_backlog = self.max_backlog.max(self.queue.len() as u32);
        Enqueued::Queued
    }

    fn record_dequeue(&mut self, sojourn: u64) {
        self.sojourn.record(sojourn);
        self.interval.sojourn_sum += sojourn;
        self.interval.sojourn_max = self.interval.sojourn_max.max(sojourn);
        self.interval.dequeued += 1;
    }

    /// The packet in service finished serialisation at `now`. Returns the next transmission end
    /// (if another packet was waiting) and whether the delay line was empty before (then the
    /// caller schedules an arrival at [`Link::next_arrival`]).
    pub fn finish_tx(&mut self, now: Time) -> (Option<Time>, bool) {
        let pkt = self
            .in_service
            .take()
            .expect("finish_tx without a packet in service");
        self.tx_bytes += u64::from(pkt.wire_bytes);
        self.interval.tx_bytes += u64::from(pkt.wire_bytes);
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
        let next = self.queue.pop_front().map(|p| {
            self.queued_bytes -= u64::from(p.wire_bytes);
            self.record_dequeue(now.saturating_since(p.enqueued).as_nanos());
            self.in_service = Some(p);
            let rate = self.rate_bps.expect("queued packet on a rate-less link");
            now + Dur::serialization(u64::from(p.wire_bytes), rate)
        });
        (next, pipe_was_empty)
    }

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

    /// Packets waiting (not counting the one in service).
    #[must_use]
    pub fn backlog_packets(&self) -> u32 {
        self.queue.len() as u32
    }

    /// Bytes waiting (not counting the one in service).
    #[must_use]
    pub fn backlog_bytes(&self) -> u64 {
        self.queued_bytes
    }

    /// Data segments inside this link (queue, transmitter, delay line).
    #[must_use]
    pub fn data_inside(&self) -> u64 {
        let q = self.queue.iter().filter(|p| p.is_data()).count();
        let s = usize::from(self.in_service.is_some_and(|p| p.is_data()));
        let d = self.pipe.iter().filter(|(_, p)| p.is_data()).count();
        (q + s + d) as u64
    }
}
