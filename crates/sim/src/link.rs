//! A unidirectional link: a queue discipline (drop-tail or an AQM from `queue/`), a transmitter
//! with a rate model, a loss model and a delay model, composed from the elements of `net/`
//! ([`RateModel`], [`LossModel`], [`DelayModel`]) with the analytic drop-tail FIFO as its fast
//! path.
//!
//! Contract: [`Link::offer`] accepts a packet at `now` and tells the caller whether it was
//! dropped or whether the transmitter must be started (or, for a lean link with a horizon,
//! that the packet cut through: see [`Link::offer`]); [`Link::finish_tx`] is called when the
//! packet in service has been serialised and returns it (unless the loss model ate it) with its
//! arrival time at the far end; the delay line holds packets in arrival order (it is FIFO, also
//! when the delay changes: see below), so the engine needs only one pending event per link for
//! transmissions and one for arrivals, whatever the number of packets in flight. A link without
//! a rate is a pure delay line. Statistics (sojourn, backlog, drops) are kept here.
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
//! order. Aggregates agree closely (tested in `engine/tests.rs` and `tests/properties.rs`).
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
//!
//! A link whose queue is an AQM ([`QueueConfig::Aqm`], `queue/`) decides at dequeue time: an
//! arriving packet is offered to the discipline, and whenever the transmitter is free the
//! discipline hands over its next packet (it may drop or CE-mark on the way). It needs no
//! transmission events either: the moment the transmitter frees is known (the end of the
//! serialisation in progress), and a dequeue at that moment depends only on what was enqueued
//! before it, so the link runs every dequeue that fell due lazily, in time order, whenever it
//! is touched ([`Link::catch_up`]: at an offer, at a wake-up, before a sample). The engine
//! keeps one wake-up per link pending at [`Link::next_wake`]: the delay line's head, or, with
//! the line empty, the arrival the packet in service will have (if the loss model eats it,
//! the wake-up finds nothing, catches up and re-arms). The discipline's verdicts are counted
//! per class (DualPI2's C and L queues) and the link records each dequeued packet's sojourn in
//! its class's histogram. On a host's NIC ([`Link::report_tx_completions`]) the AQM runs
//! evented instead, one transmission event per packet like the evented FIFO, so that each
//! transmission end is reported as the packet's TX completion; skbs the discipline frees by
//! dropping their last segment are logged and reported at the drop ([`Link::drain_freed`]).
//!
//! The rate may change over time (`LinkConfig::rate_shape`: a schedule or a mahimahi trace,
//! `net/rate/`). The rate model answers a packet's serialisation by its start time and keeps a
//! read position, so it must see each packet once, in start order. The analytic FIFO does
//! exactly that (a packet's start is the previous one's end or its arrival, known at enqueue,
//! whatever the rate does later), so a drop-tail link with a changing rate is always analytic;
//! an AQM link dequeues one packet at a time and asks at each start; only the evented FIFO
//! (which asks twice) is never used for it. [`Link::try_cut`], which may compute a
//! serialisation and then decline, serves constant rates only. [`Link::capacity_bits`] is what
//! the transmitter could have sent over an interval (the capacity series).
//!
//! The propagation delay may change during the run (`LinkConfig::delay_changes`, e.g. an RTT
//! change): a change at time `T` applies to every packet whose serialisation ends at or after
//! `T` (on a rate-less link: that is handed to it at or after `T`); the delay counts from the
//! end of the serialisation, as always. The engine schedules one event per change, which makes
//! the new delay the link's current one ([`Link::apply_delay_change`]). The analytic FIFO
//! schedules a packet at enqueue time, possibly before `T` for a serialisation that ends after
//! it, so every path that computes an arrival asks [`Link::delay_at`] for the delay at the end
//! of the serialisation: the current delay unless that end reaches the next change (one
//! comparison; the look-ahead is read-only, so [`Link::try_cut`] stays free of side effects
//! when it declines). Both FIFO modes therefore give a packet the same delay. The delay line
//! stays FIFO: when the delay drops, a packet would overtake the ones that left before it, so
//! its arrival is clamped to be no earlier than the previous arrival on the link (it arrives
//! right behind it). The link never reorders packets unless its own jitter allows it
//! (`LinkConfig::jitter`): each packet's extra delay is drawn when it is scheduled; kept in
//! order, it goes to the tail of the same FIFO; allowed to overtake, it goes into a
//! [`SortedLine`] held by the jitter, which hands packets on by (arrival, insertion).

use std::collections::VecDeque;

use cclab_cc::{Dur, Time};
use rand_chacha::ChaCha8Rng;

use crate::config::FlowId;
use crate::config::{LinkConfig, QueueConfig, QueueLimit};
use crate::histogram::Histogram;
use crate::net::rate::{self, RateShape};
use crate::net::{DelayModel, JitterDraw, LossModel, RateModel, SortedLine};
use crate::packet::Packet;
use crate::queue::{AnyQdisc, MAX_CLASSES, Qdisc, Tally};
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
    /// Drops (queue overflow, and AQM drops on an AQM link).
    pub drops: u32,
    /// CE marks (AQM links).
    pub ce_marks: u32,
    /// Per class of an AQM link: (sojourn sum ns, packets dequeued).
    pub class_sojourn: [(u64, u64); MAX_CLASSES],
}

/// An AQM in front of a link, with its random stream and statistics.
#[derive(Debug)]
pub struct AqmState {
    /// The discipline.
    pub qdisc: AnyQdisc,
    rng: ChaCha8Rng,
    /// Verdicts per class over the run.
    pub tally: Tally,
    /// Sojourn histogram per class (monitored links with more than one class; a one-class
    /// discipline's is the link's).
    pub class_sojourn: [Histogram; MAX_CLASSES],
    /// The discipline reports more than one class.
    multi_class: bool,
    /// Data segments handed to the discipline.
    data_in: u64,
    /// Data segments it handed back.
    data_out: u64,
    /// Tally totals at the last sync (drops, marks, data drops), for the link's counters.
    last_drops: u64,
    last_marks: u64,
    last_data: u64,
}

impl AqmState {
    /// Data segments held by the discipline.
    fn data_inside(&self) -> u64 {
        self.data_in - self.data_out - self.tally.data_dropped()
    }

    /// CE marks over all classes.
    #[must_use]
    pub fn ce_marks(&self) -> u64 {
        self.tally.marks()
    }
}

/// Link state.
#[derive(Debug)]
pub struct Link {
    /// The transmitter's rate (constant: `rate_bps`), `None` for a pure delay line.
    rate_bps: Option<u64>,
    /// A time-varying rate's model (a schedule or a trace); `None` for a constant rate, which
    /// `ser_cache` answers.
    shaped: Option<Box<RateModel>>,
    /// A constant rate's serialisation times of the last two packet sizes, (bytes, time): data
    /// and ACK sizes repeat, and a division per packet is a visible cost. Size 0 never occurs
    /// on the wire, so the cache starts empty.
    ser_cache: [(u32, Dur); 2],
    /// The propagation delay and its changes.
    delay: DelayModel,
    /// A jitter in the delay line (`LinkConfig::jitter`); `None` on most links.
    jitter: Option<Box<LinkJitterState>>,
    /// On a jittered link, [`Link::next_wake`]'s answer after a wake-up when it is not the
    /// head of `pipe`: `Some(None)` when the arrival event handled was stale (so that the engine
    /// drops it), `Some(head)` on a link that reorders (its delay line is the jitter state's).
    jitter_next: Option<Option<Time>>,
    /// [`Link::wake`] needs more than the delay line's head: a lazy AQM link catches up first,
    /// a jittered link tells stale events apart.
    special_wake: bool,
    limit: QueueLimit,
    /// Evented mode: waiting packets with their enqueue times.
    queue: VecDeque<(Time, Packet)>,
    queued_bytes: u64,
    serving: Option<Packet>,
    pipe: VecDeque<(Time, Packet)>,
    /// On a folded link ([`Link::fold_tail`]), the latest time a packet was given: no packet
    /// in the delay line is due later.
    fold_last: Time,
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
    /// Sojourn statistics are kept only for monitored links (they are only reported for those).
    monitored: bool,
    /// Analytic, unmonitored and lossless: only the FIFO schedule matters, so enqueue keeps no
    /// statistics ([`Link::offer`]).
    lean: bool,
    /// Lean with a constant rate: [`Link::try_cut`] may serve.
    cut: bool,
    /// The time-varying rate, if any (for [`Link::capacity_bits`]).
    shape: Option<RateShape>,
    /// The AQM, if the queue is not a drop-tail FIFO.
    pub aqm: Option<Box<AqmState>>,
    /// The AQM runs lazily, without transmission events ([`Link::catch_up`]); false on a
    /// host's NIC, which reports TX completions ([`Link::report_tx_completions`]).
    lazy: bool,
}

/// A link's jitter: its draws, the delay line of a link that reorders, and the time of the
/// engine's pending arrival event.
#[derive(Debug)]
struct LinkJitterState {
    draw: JitterDraw,
    /// With reordering, the delay line: packets by (arrival, insertion), each kept in place
    /// while the keys that order them move. `None` in order: arrivals never decrease, and the
    /// link's own FIFO `pipe` is the line.
    line: Option<SortedLine<Packet>>,
    /// When the engine's arrival event that counts is due (the head's arrival): an overtaking
    /// packet that becomes the head gets an event of its own, and the one scheduled for the old
    /// head goes stale.
    armed: Option<Time>,
}

/// A packet scheduled on an analytic FIFO.
#[derive(Clone, Copy, Debug)]
struct Scheduled {
    enqueued: Time,
    start: Time,
    end: Time,
    bytes: u32,
}

impl Link {
    /// Build link `index` of a run seeded with `seed`; `analytic` selects the event-free FIFO.
    #[must_use]
    pub fn new(cfg: &LinkConfig, index: u32, seed: u64, analytic: bool) -> Self {
        let (limit, aqm) = match &cfg.queue {
            QueueConfig::DropTail { limit } => (*limit, None),
            QueueConfig::Aqm(a) => (
                QueueLimit::Packets(u32::MAX),
                cfg.rate_bps.map(|rate| {
                    Box::new(AqmState {
                        qdisc: a.build(rng::aqm_hash_key(seed, index), rate),
                        rng: rng::stream(seed, rng::AQM + u64::from(index)),
                        tally: Tally::default(),
                        class_sojourn: Default::default(),
                        multi_class: a.classes() > 1,
                        data_in: 0,
                        data_out: 0,
                        last_drops: 0,
                        last_marks: 0,
                        last_data: 0,
                    })
                }),
            ),
        };
        let shaped = cfg
            .rate_shape
            .as_ref()
            .map(|shape| Box::new(RateModel::of_shape(shape)));
        // An AQM decides at dequeue time: it is never analytic. A drop-tail FIFO with a
        // time-varying rate is always analytic: its model must see each packet once, in the
        // order the packets start, which the evented FIFO does not do (it computes when the
        // FIFO drains at enqueue and each serialisation again when it starts).
        let jitter = cfg.jitter.map(|j| {
            Box::new(LinkJitterState {
                draw: JitterDraw::new(
                    j.dist,
                    j.correlation,
                    seed,
                    rng::LINK_JITTER + u64::from(index),
                ),
                line: j.reorder.then(SortedLine::new),
                armed: None,
            })
        });
        // A jittered delay line is kept by the analytic FIFO's schedule (each packet's arrival
        // drawn once, when it is scheduled).
        let analytic = aqm.is_none() && (analytic || shaped.is_some() || jitter.is_some());
        let loss = LossModel::new(&cfg.loss, seed, rng::LINK_LOSS + u64::from(index));
        let lean = analytic && !cfg.monitor && loss.is_none() && jitter.is_none();
        // `try_cut` computes a serialisation it may then decline: only a constant rate has no
        // read position to disturb.
        let cut = lean && shaped.is_none();
        Link {
            rate_bps: cfg.rate_bps,
            shaped,
            ser_cache: [(0, Dur::ZERO); 2],
            delay: DelayModel::new(cfg.delay, &cfg.delay_changes),
            special_wake: aqm.is_some() || jitter.is_some(),
            jitter_next: None,
            jitter,
            limit,
            queue: VecDeque::new(),
            queued_bytes: 0,
            serving: None,
            pipe: VecDeque::new(),
            fold_last: Time::ZERO,
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
            monitored: cfg.monitor,
            lean,
            cut,
            shape: cfg.rate_shape.clone(),
            lazy: aqm.is_some(),
            aqm,
        }
    }

    /// Serialisation time of `bytes` starting at `start`: a time-varying model answers by
    /// `start`, a constant `rate` (the one the paths checked) by size.
    #[inline(always)]
    fn serialization(&mut self, bytes: u32, start: Time, rate: u64) -> Dur {
        if let Some(model) = self.shaped.as_deref_mut() {
            return model.serialization(bytes, start);
        }
        self.constant_serialization(bytes, rate)
    }

    /// Serialisation time of `bytes` at the constant `rate`, remembering the last two sizes.
    #[inline(always)]
    fn constant_serialization(&mut self, bytes: u32, rate: u64) -> Dur {
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

    /// The propagation delay of a packet whose serialisation ends at `end` (see
    /// [`DelayModel::delay_at`]).
    #[cfg(test)]
    #[must_use]
    pub fn delay_at(&self, end: Time) -> Dur {
        self.delay.delay_at(end)
    }

    /// The arrival time of a packet whose serialisation ends at `end`, without recording it.
    #[inline(always)]
    fn arrival_for(&self, end: Time) -> Time {
        self.delay.arrival_for(end)
    }

    /// [`Link::arrival_for`], recorded as the latest arrival.
    #[inline(always)]
    fn take_arrival(&mut self, end: Time) -> Time {
        self.delay.take_arrival(end)
    }

    /// When the next delay change is due (the engine schedules an event for it).
    #[must_use]
    pub fn next_delay_change(&self) -> Option<Time> {
        self.delay.next_change()
    }

    /// The next delay change is due now: make its delay the current one. Returns when the
    /// change after it is due.
    pub fn apply_delay_change(&mut self) -> Option<Time> {
        // A lazy AQM link first runs the transmissions ending before the change: they keep the
        // old delay.
        if self.lazy
            && let Some(t) = self.delay.next_change()
        {
            self.catch_up(Time(t.0.saturating_sub(1)));
        }
        self.delay.apply_change()
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
            self.catch_up(now);
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
        let end = start + self.serialization(bytes, start, rate);
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
            self.max_backlog = self.max_backlog.max(packets32(self.waiting.len()));
        } else {
            self.record_dequeue(0);
            self.in_service = Some(sched);
        }
        if self.lose(&pkt) {
            // Lost on the wire: counted when its transmission ends (see `settle`).
            self.pending_losses.push_back((end, pkt.is_data()));
            return Enqueued::LostOnWire(end);
        }
        if self.jitter.is_some() {
            return self.enqueue_jittered(end, pkt);
        }
        let was_empty = self.pipe.is_empty();
        let arrival = self.take_arrival(end);
        self.pipe.push_back((arrival, pkt));
        Enqueued::InFlight {
            arrival,
            was_empty,
            tx_end: end,
        }
    }

    /// Put `pkt`, whose serialisation ends at `end`, into a jittered delay line: its arrival is
    /// drawn now, and it goes behind every packet arriving no later (equal times keep their
    /// order). In order, arrivals never decrease and `pipe` takes it at its tail; with
    /// reordering, the jitter state's [`SortedLine`] places it.
    #[cold]
    #[inline(never)]
    fn enqueue_jittered(&mut self, end: Time, pkt: Packet) -> Enqueued {
        let j = self.jitter.as_deref_mut().expect("a jittered link");
        let extra = j.draw.draw();
        let arrival = self.delay.take_jittered(end, extra, j.line.is_none());
        match j.line.as_mut() {
            Some(line) => line.push(arrival, pkt),
            None => {
                debug_assert!(self.pipe.back().is_none_or(|&(t, _)| t <= arrival));
                self.pipe.push_back((arrival, pkt));
            }
        }
        let rearm = j.armed.is_none_or(|a| arrival < a);
        if rearm {
            j.armed = Some(arrival);
        }
        // `was_empty`: the caller schedules an arrival event at `arrival`, as for the head of
        // an empty delay line.
        Enqueued::InFlight {
            arrival,
            was_empty: rearm,
            tx_end: end,
        }
    }

    /// [`Link::wake`] on a jittered link: an event at `now` counts only if it is the armed one
    /// (else it is stale, and [`Link::next_wake`] says `None` so the engine drops it); one that
    /// counts hands on the head if it has arrived and arms the next head's time, which the
    /// engine schedules from [`Link::next_wake`].
    #[cold]
    #[inline(never)]
    fn jitter_wake(&mut self, now: Time) -> Option<Packet> {
        let j = self.jitter.as_deref_mut().expect("a jittered link");
        if j.armed != Some(now) {
            self.jitter_next = Some(None);
            return None;
        }
        if let Some(line) = j.line.as_mut() {
            // The armed time is the head's arrival.
            debug_assert_eq!(line.front_time(), Some(now));
            let pkt = line.pop().map(|(_, p)| p);
            j.armed = line.front_time();
            self.jitter_next = Some(j.armed);
            return pkt;
        }
        self.jitter_next = None;
        let pkt = self.pop_arrived(now);
        let next = self.pipe.front().map(|&(t, _)| t);
        self.jitter.as_deref_mut().expect("a jittered link").armed = next;
        pkt
    }

    /// The commonest case of [`Link::offer`] with a horizon, in a few instructions: a lean link
    /// whose transmitter is idle and whose delay line is empty takes a `bytes`-byte packet at
    /// `now` and returns (arrival, end of serialisation) if it arrives before `horizon`, without
    /// storing it. `None`: nothing was changed; offer it normally.
    #[inline(always)]
    pub fn try_cut(&mut self, now: Time, bytes: u32, horizon: Time) -> Option<(Time, Time)> {
        if !self.cut || self.free_at > now || !self.pipe.is_empty() {
            return None;
        }
        let rate = self.rate_bps?;
        // `cut` holds only for a constant rate.
        let end = now + self.constant_serialization(bytes, rate);
        let arrival = self.arrival_for(end);
        if arrival >= horizon {
            return None;
        }
        self.delay.set_last_arrival(arrival);
        // Idle: every scheduled packet has started (see `enqueue_lean`).
        if !self.waiting.is_empty() {
            self.waiting.clear();
        }
        self.queued_bytes = 0;
        self.free_at = end;
        self.enqueued += 1;
        Some((arrival, end))
    }

    /// Whether the rate changes over time (a schedule or a trace).
    #[must_use]
    pub fn has_rate_shape(&self) -> bool {
        self.shape.is_some()
    }

    /// Bits the transmitter could send in `(from, to]`: its capacity, whether used or not
    /// (0 on a rate-less link).
    #[must_use]
    pub fn capacity_bits(&self, from: Time, to: Time) -> u64 {
        match self.rate_bps {
            Some(bps) => rate::capacity_bits(self.shape.as_ref(), bps, from, to),
            None => 0,
        }
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
        let end = start + self.serialization(bytes, start, rate);
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
        let arrival = self.take_arrival(end);
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
            let arrival = self.take_arrival(now);
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
        if self.aqm.is_some() {
            return if self.lazy {
                self.enqueue_aqm(now, rate, pkt)
            } else {
                self.enqueue_aqm_evented(now, rate, pkt)
            };
        }
        if self.serving.is_none() {
            debug_assert!(self.queue.is_empty());
            self.enqueued += 1;
            self.record_dequeue(0);
            self.serving = Some(pkt);
            let ser = self.serialization(pkt.wire_bytes, now, rate);
            self.free_at = now + ser;
            return Enqueued::StartedTx(now + ser);
        }
        if self.tail_drop(self.queue.len(), &pkt) {
            return Enqueued::Dropped;
        }
        // Keep the time the FIFO drains in the evented mode too (the fq qdisc asks for it).
        let start = self.free_at.max(now);
        self.free_at = start + self.serialization(pkt.wire_bytes, start, rate);
        self.enqueued += 1;
        self.queued_bytes += u64::from(pkt.wire_bytes);
        self.queue.push_back((now, pkt));
        self.max_backlog = self.max_backlog.max(packets32(self.queue.len()));
        Enqueued::Queued
    }

    /// Offer `pkt` to the AQM (after the dequeues due by `now`); start the transmitter if it
    /// is idle. Returns `InFlight` with `was_empty` when the link had nothing pending and now
    /// needs a wake-up at `arrival` ([`Link::next_wake`]).
    fn enqueue_aqm(&mut self, now: Time, rate: u64, pkt: Packet) -> Enqueued {
        self.catch_up(now);
        let was_idle = self.serving.is_none() && self.pipe.is_empty();
        let aqm = self.aqm.as_mut().expect("AQM link");
        if pkt.is_data() {
            aqm.data_in += 1;
        }
        let accepted = aqm.qdisc.enqueue(now, pkt, &mut aqm.rng, &mut aqm.tally);
        self.sync_aqm_drops();
        if accepted {
            self.enqueued += 1;
        }
        if self.serving.is_none() {
            if let Some(end) = self.dequeue_aqm(now, rate)
                && was_idle
            {
                return Enqueued::InFlight {
                    arrival: self.arrival_for(end),
                    was_empty: true,
                    tx_end: end,
                };
            }
        } else {
            let backlog = self.backlog_packets();
            self.max_backlog = self.max_backlog.max(backlog);
        }
        if accepted {
            Enqueued::Queued
        } else {
            Enqueued::Dropped
        }
    }

    /// A host's NIC with an AQM: transmissions run as events, like the evented FIFO, so each
    /// one's end is the TX completion of its packet. Offer `pkt`; start the transmitter if it
    /// is idle (`StartedTx`). A packet the discipline drops is reported with the other freed
    /// skbs ([`Link::drain_freed`]), never as `Dropped`, so its completion is reported once.
    fn enqueue_aqm_evented(&mut self, now: Time, rate: u64, pkt: Packet) -> Enqueued {
        let aqm = self.aqm.as_mut().expect("AQM link");
        if pkt.is_data() {
            aqm.data_in += 1;
        }
        let accepted = aqm.qdisc.enqueue(now, pkt, &mut aqm.rng, &mut aqm.tally);
        self.sync_aqm_drops();
        if accepted {
            self.enqueued += 1;
        }
        if self.serving.is_none() {
            if let Some(end) = self.dequeue_aqm(now, rate) {
                return Enqueued::StartedTx(end);
            }
        } else {
            let backlog = self.backlog_packets();
            self.max_backlog = self.max_backlog.max(backlog);
        }
        Enqueued::Queued
    }

    /// Make this link (a host's NIC) report TX completions: an AQM runs evented, and the skbs
    /// its discipline frees by dropping are logged for [`Link::drain_freed`].
    pub fn report_tx_completions(&mut self) {
        if let Some(aqm) = self.aqm.as_mut() {
            aqm.tally.log_freed_skbs();
            self.lazy = false;
        }
    }

    /// The skbs the AQM freed by dropping their last segment since the last call, as (flow,
    /// skb wire bytes): their TX completions, due when the drop happened.
    pub fn drain_freed(&mut self) -> Option<std::vec::Drain<'_, (FlowId, u32)>> {
        self.aqm.as_mut().map(|a| a.tally.drain_freed())
    }

    /// The AQM's next packet goes into service at `now`; returns its transmission end.
    fn dequeue_aqm(&mut self, now: Time, rate: u64) -> Option<Time> {
        let aqm = self.aqm.as_mut().expect("AQM link");
        let d = aqm.qdisc.dequeue(now, &mut aqm.rng, &mut aqm.tally);
        self.sync_aqm_drops();
        let d = d?;
        let aqm = self.aqm.as_mut().expect("AQM link");
        if d.pkt.is_data() {
            aqm.data_out += 1;
        }
        let sojourn = now.saturating_since(d.enqueued).as_nanos();
        if self.monitored {
            let c = usize::from(d.class);
            if aqm.multi_class {
                aqm.class_sojourn[c].record(sojourn);
            }
            let iv = &mut self.interval.class_sojourn[c];
            iv.0 += sojourn;
            iv.1 += 1;
        }
        self.record_dequeue(sojourn);
        let end = now + self.serialization(d.pkt.wire_bytes, now, rate);
        self.serving = Some(d.pkt);
        self.free_at = end;
        Some(end)
    }

    /// The sojourn histogram of class `c` of the AQM (the link's own for a one-class
    /// discipline).
    #[must_use]
    pub fn class_sojourn(&self, c: usize) -> &Histogram {
        match &self.aqm {
            Some(a) if a.multi_class => &a.class_sojourn[c],
            _ => &self.sojourn,
        }
    }

    /// AQM link: run, in time order, every transmission end (and the dequeue it triggers) due
    /// by `now`. Other links: nothing.
    #[inline(always)]
    pub fn catch_up(&mut self, now: Time) {
        if self.lazy {
            self.catch_up_aqm(now);
        }
    }

    #[inline(never)]
    fn catch_up_aqm(&mut self, now: Time) {
        while let Some(pkt) = self.serving {
            let t = self.free_at;
            if t > now {
                break;
            }
            self.serving = None;
            self.tx_bytes += u64::from(pkt.wire_bytes);
            if self.lose(&pkt) {
                self.link_losses += 1;
                if pkt.is_data() {
                    self.data_dropped += 1;
                }
            } else {
                let arrival = self.take_arrival(t);
                self.pipe.push_back((arrival, pkt));
            }
            let rate = self.rate_bps.expect("AQM on a rate-less link");
            self.dequeue_aqm(t, rate);
        }
    }

    /// When the engine must next call the link, asked right after [`Link::wake`]: the delay
    /// line's head, or on an AQM link with an empty line the arrival of the packet in service
    /// (on a jittered link, `None` after a stale event).
    #[inline(always)]
    #[must_use]
    pub fn next_wake(&self) -> Option<Time> {
        if let Some(next) = self.jitter_next {
            return next;
        }
        match self.pipe.front() {
            Some(&(t, _)) => Some(t),
            None if self.lazy => self.serving.map(|_| self.arrival_for(self.free_at)),
            None => None,
        }
    }

    /// A wake-up at `now`: catch up, then take the head of the delay line if it has arrived.
    #[inline(always)]
    pub fn wake(&mut self, now: Time) -> Option<Packet> {
        if self.special_wake {
            if self.jitter.is_some() {
                return self.jitter_wake(now);
            }
            return self.wake_aqm(now);
        }
        self.pop_arrived(now)
    }

    /// Whether the delay line is a plain FIFO that [`Link::fold_tail`] may reorder: an analytic
    /// link without jitter or AQM.
    #[must_use]
    pub fn can_fold(&self) -> bool {
        self.analytic && self.jitter.is_none() && self.aqm.is_none()
    }

    /// A link feeding hosts with a timing model whose polls are folded into it
    /// (`engine/rx.rs`): give the packet just put at the tail of the delay line (by
    /// [`Link::offer`], [`Enqueued::InFlight`]) the time `at`, no earlier than its arrival, and
    /// move it behind every packet due no later (equal times keep their order). The line stays
    /// sorted by the time each packet is handed on. Returns whether it is now the head.
    ///
    /// Only for a FIFO delay line (analytic, no jitter, no AQM): the engine checks that.
    #[inline]
    pub fn fold_tail(&mut self, at: Time) -> bool {
        let n = self.pipe.len();
        debug_assert!(n > 0, "fold_tail after an InFlight offer");
        debug_assert!(self.can_fold());
        let Some(last) = self.pipe.back_mut() else {
            return false;
        };
        debug_assert!(at >= last.0);
        last.0 = at;
        if at >= self.fold_last {
            // Nothing in the line is due later (the usual case: a poll's latency is shorter
            // than the gap between packets).
            self.fold_last = at;
            return n == 1;
        }
        // Walk back past the packets due later.
        let mut i = n - 1;
        while i > 0 && self.pipe[i - 1].0 > at {
            self.pipe.swap(i - 1, i);
            i -= 1;
        }
        i == 0
    }

    /// The head of the delay line with the time it is due (a folded link).
    #[inline]
    #[must_use]
    pub fn head(&self) -> Option<(Time, &Packet)> {
        self.pipe.front().map(|(t, p)| (*t, p))
    }

    /// The head of the delay line, if it has arrived by `now` (on a folded link: if it is due,
    /// see [`Link::fold_tail`]).
    #[inline(always)]
    pub fn pop_arrived(&mut self, now: Time) -> Option<Packet> {
        match self.pipe.front() {
            Some(&(t, _)) if t <= now => self.pipe.pop_front().map(|(_, p)| p),
            _ => None,
        }
    }

    /// [`Link::wake`] on an AQM link (a lazy one catches up first).
    #[inline(never)]
    fn wake_aqm(&mut self, now: Time) -> Option<Packet> {
        self.catch_up(now);
        self.pop_arrived(now)
    }

    /// Carry the AQM's new drops and marks into the link's counters.
    #[expect(
        clippy::cast_possible_truncation,
        reason = "the interval counters are u32 and the drops and marks of one sample interval, bounded by the packets it carries, stay far below 2^32"
    )]
    fn sync_aqm_drops(&mut self) {
        let Some(aqm) = self.aqm.as_mut() else {
            return;
        };
        let drops = aqm.tally.drops();
        let marks = aqm.tally.marks();
        if drops != aqm.last_drops || marks != aqm.last_marks {
            let new_drops = drops - aqm.last_drops;
            let new_marks = marks - aqm.last_marks;
            aqm.last_drops = drops;
            aqm.last_marks = marks;
            self.drops += new_drops;
            self.interval.drops += new_drops as u32;
            self.interval.ce_marks += new_marks as u32;
            let data = aqm.tally.data_dropped();
            self.data_dropped += data - aqm.last_data;
            aqm.last_data = data;
        }
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
            let arrival = self.take_arrival(now);
            self.pipe.push_back((arrival, pkt));
        }
        if self.aqm.is_some() {
            let rate = self.rate_bps.expect("AQM on a rate-less link");
            let next = self.dequeue_aqm(now, rate);
            return (next, pipe_was_empty, pkt);
        }
        let next = self.queue.pop_front().map(|(enqueued, p)| {
            self.queued_bytes -= u64::from(p.wire_bytes);
            self.record_dequeue(now.saturating_since(enqueued).as_nanos());
            self.serving = Some(p);
            let rate = self.rate_bps.expect("queued packet on a rate-less link");
            now + self.serialization(p.wire_bytes, now, rate)
        });
        (next, pipe_was_empty, pkt)
    }

    #[inline(always)]
    fn lose(&mut self, pkt: &Packet) -> bool {
        self.loss.lose(pkt)
    }

    /// Arrival time of the head of the delay line.
    #[must_use]
    pub fn next_arrival(&self) -> Option<Time> {
        match self.pipe.front() {
            Some(&(t, _)) => Some(t),
            None => self.reordering_line().and_then(SortedLine::front_time),
        }
    }

    #[cfg(test)]
    /// Take the head of the delay line (the caller checked its arrival time is now).
    pub fn pop_arrival(&mut self) -> Option<Packet> {
        match self.pipe.pop_front() {
            Some((_, p)) => Some(p),
            None => self
                .jitter
                .as_deref_mut()
                .and_then(|j| j.line.as_mut())
                .and_then(|l| l.pop().map(|(_, p)| p)),
        }
    }

    /// The delay line of a link whose jitter reorders (`pipe` stays empty there).
    fn reordering_line(&self) -> Option<&SortedLine<Packet>> {
        self.jitter.as_deref().and_then(|j| j.line.as_ref())
    }

    /// Packets waiting (not counting the one in service). Analytic links must be settled first.
    #[must_use]
    pub fn backlog_packets(&self) -> u32 {
        if let Some(aqm) = &self.aqm {
            aqm.qdisc.backlog_packets()
        } else if self.analytic {
            packets32(self.waiting.len())
        } else {
            packets32(self.queue.len())
        }
    }

    /// Bytes waiting (not counting the one in service).
    #[must_use]
    pub fn backlog_bytes(&self) -> u64 {
        self.aqm
            .as_ref()
            .map_or(self.queued_bytes, |a| a.qdisc.backlog_bytes())
    }

    /// Data segments inside this link (queue, transmitter, delay line).
    #[must_use]
    #[expect(
        clippy::cast_possible_truncation,
        reason = "a count of packets held in memory fits a usize"
    )]
    pub fn data_inside(&self) -> u64 {
        // Analytic links keep accepted packets in the delay line, and packets the loss model
        // will drop in `pending_losses` until their transmission ends.
        let lost_later = self.pending_losses.iter().filter(|(_, data)| *data).count();
        let q = lost_later
            + self.queue.iter().filter(|(_, p)| p.is_data()).count()
            + self.aqm.as_ref().map_or(0, |a| a.data_inside() as usize);
        let s = usize::from(self.serving.is_some_and(|p| p.is_data()));
        let d = self.pipe.iter().filter(|(_, p)| p.is_data()).count()
            + self
                .reordering_line()
                .map_or(0, |l| l.packets().filter(|p| p.is_data()).count());
        (q + s + d) as u64
    }
}

/// A packet count held in memory as the `u32` the queue statistics report.
#[expect(
    clippy::cast_possible_truncation,
    reason = "2^32 queued packets would need hundreds of gigabytes; no run holds that many"
)]
#[inline]
const fn packets32(n: usize) -> u32 {
    n as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::LossConfig;
    use crate::packet::Payload;

    const MS: u64 = 1_000_000;

    /// 1500-byte packets at 12 Mbit/s: 1 ms of serialisation each.
    fn cfg(rate_bps: Option<u64>, monitor: bool, changes: &[(u64, u64)]) -> LinkConfig {
        LinkConfig {
            name: "l".into(),
            from: crate::config::NodeId(0),
            to: crate::config::NodeId(1),
            rate_bps,
            rate_shape: None,
            delay: Dur(10 * MS),
            delay_changes: changes.iter().map(|&(t, d)| (Time(t), Dur(d))).collect(),
            jitter: None,
            queue: QueueConfig::DropTail {
                limit: QueueLimit::Packets(100),
            },
            loss: LossConfig::None,
            monitor,
        }
    }

    /// 1500 bytes at 12 Mbit/s take 1 ms; the constant rate's size cache answers repeated and
    /// alternating sizes exactly as the division does.
    #[test]
    fn constant_rate_serialises_and_caches_exactly() {
        let mut link = Link::new(&cfg(Some(12_000_000), false, &[]), 0, 1, true);
        for bytes in [1500, 1500, 52, 1500, 52, 64, 1500, 52] {
            assert_eq!(
                link.serialization(bytes, Time::ZERO, 12_000_000),
                Dur::serialization(u64::from(bytes), 12_000_000)
            );
        }
        assert_eq!(
            link.serialization(1500, Time(7), 12_000_000),
            Dur(1_000_000)
        );
    }

    fn pkt(seq: u64) -> Packet {
        Packet::test_segment(0, seq, 1500, 0)
    }

    /// Drive `link` as the engine does: offer `offers` (time, seq), run transmission ends
    /// (evented mode) and apply delay changes at their times; returns (arrival, seq) in the
    /// order the delay line delivers them.
    fn drive(mut link: Link, offers: &[(u64, u64)]) -> Vec<(u64, u64)> {
        let mut tx_end: Option<Time> = None;
        let mut change = link.next_delay_change();
        let mut offers = offers.iter().copied().peekable();
        loop {
            let next_offer = offers.peek().map_or(Time::MAX, |&(t, _)| Time(t));
            let next_tx = tx_end.unwrap_or(Time::MAX);
            let next_change = change.unwrap_or(Time::MAX);
            let now = next_offer.min(next_tx).min(next_change);
            if now == Time::MAX {
                break;
            }
            // Ties: transmission ends first, then offers, then the change (the link's
            // look-ahead makes the order irrelevant, which this order exercises).
            if next_tx == now {
                let (next, _, _) = link.finish_tx(now);
                tx_end = next;
            } else if next_offer == now {
                let (_, seq) = offers.next().unwrap();
                match link.offer(now, &pkt(seq), 1, Time::ZERO) {
                    Enqueued::StartedTx(t) => tx_end = Some(t),
                    Enqueued::Queued | Enqueued::InFlight { .. } => {}
                    other => panic!("unexpected {other:?}"),
                }
            } else {
                change = link.apply_delay_change();
            }
        }
        // An AQM link runs its transmissions lazily: let it finish everything.
        link.catch_up(Time::MAX);
        let mut out = Vec::new();
        while let Some(t) = link.next_arrival() {
            let p = link.pop_arrival().unwrap();
            let Payload::Data { seq, .. } = p.payload else {
                unreachable!()
            };
            out.push((t.0, seq));
        }
        out
    }

    /// Three packets offered together at 0 end their serialisation at 1, 2 and 3 ms; the delay
    /// drops from 10 ms to 2 ms at 2.5 ms. The first two take 10 ms (11, 12 ms); the third
    /// ends after the change, so it takes 2 ms (5 ms), clamped behind the second (12 ms). A
    /// fourth offered at 20 ms arrives at 21 + 2 = 23 ms; at 30 ms the delay rises to 4 ms.
    /// The analytic FIFO (monitored and lean) schedules the third at time 0, before the
    /// change is applied, and must still give it the new delay: all modes agree exactly.
    #[test]
    fn delay_changes_apply_at_the_end_of_serialisation_and_keep_fifo_order() {
        let changes = [(2 * MS + MS / 2, 2 * MS), (30 * MS, 4 * MS)];
        let offers = [(0, 0), (0, 1), (0, 2), (20 * MS, 3), (29 * MS + MS / 2, 4)];
        let want = vec![
            (11 * MS, 0),
            (12 * MS, 1),
            (12 * MS, 2),
            (23 * MS, 3),
            // Ends at 30.5 ms, after the second change: 4 ms.
            (34 * MS + MS / 2, 4),
        ];
        for (analytic, monitor) in [(true, true), (true, false), (false, true)] {
            let link = Link::new(&cfg(Some(12_000_000), monitor, &changes), 0, 1, analytic);
            assert_eq!(link.lean, analytic && !monitor);
            assert_eq!(
                drive(link, &offers),
                want,
                "analytic {analytic} monitor {monitor}"
            );
        }
        // An AQM link that never acts (CoDel below its target: sojourns ≤ 3 ms < 5 ms), run
        // lazily without transmission events, gives the FIFO's schedule too.
        let mut codel = cfg(Some(12_000_000), true, &changes);
        codel.queue = QueueConfig::Aqm(crate::queue::AqmConfig::Codel(
            crate::queue::CodelParams::default(),
        ));
        let link = Link::new(&codel, 0, 1, true);
        assert!(link.aqm.is_some() && !link.analytic);
        assert_eq!(drive(link, &offers), want, "lazy AQM link");
        // A rate-less link: the hand-off time counts as the end of serialisation.
        let link = Link::new(&cfg(None, false, &changes), 0, 1, true);
        let offers = [(0, 0), (2 * MS, 1), (3 * MS, 2), (30 * MS, 3)];
        assert_eq!(
            drive(link, &offers),
            vec![(10 * MS, 0), (12 * MS, 1), (12 * MS, 2), (34 * MS, 3)]
        );
    }

    /// The cut-through path applies the change and the clamp, and declines without changing
    /// anything.
    #[test]
    fn try_cut_respects_delay_changes_and_is_pure_when_it_declines() {
        let mut link = Link::new(&cfg(Some(12_000_000), false, &[(5 * MS, MS)]), 0, 1, true);
        let far = Time(1_000 * MS);
        assert_eq!(
            link.try_cut(Time::ZERO, 1500, far),
            Some((Time(11 * MS), Time(MS)))
        );
        // Ends at 6 ms, after the change: 1 ms of delay would arrive at 7 ms, before the
        // packet cut through earlier (11 ms): clamped.
        let before = format!("{link:?}");
        assert_eq!(link.try_cut(Time(5 * MS), 1500, Time(11 * MS)), None);
        assert_eq!(
            format!("{link:?}"),
            before,
            "a declined cut changes nothing"
        );
        assert_eq!(
            link.try_cut(Time(5 * MS), 1500, far),
            Some((Time(11 * MS), Time(6 * MS)))
        );
        // The change was never applied by the engine here; the look-ahead serves it.
        assert_eq!(
            link.try_cut(Time(20 * MS), 1500, far),
            Some((Time(22 * MS), Time(21 * MS)))
        );
        assert_eq!(link.next_delay_change(), Some(Time(5 * MS)));
        assert_eq!(link.apply_delay_change(), None);
        assert_eq!(link.delay_at(Time::ZERO), Dur(MS));
    }

    /// A link of `shape` (nominal rate from it), a queue that never fills, unmonitored or not.
    fn shaped(shape: RateShape, monitor: bool) -> Link {
        let mut c = cfg(Some(shape.nominal_bps()), monitor, &[]);
        c.rate_shape = Some(shape);
        c.queue = QueueConfig::DropTail {
            limit: QueueLimit::Packets(1_000_000),
        };
        // `analytic = false` is overridden: a shaped FIFO is always analytic.
        Link::new(&c, 0, 1, false)
    }

    fn trace(ms: &[u64]) -> RateShape {
        RateShape::Trace(std::sync::Arc::new(rate::Trace::new(ms.to_vec()).unwrap()))
    }

    /// A saturated trace link sends exactly the trace's opportunities: with 1500-byte packets
    /// one per opportunity, so the bytes done by the end of each loop are the opportunities so
    /// far × 1500 (within one packet in flight, which is 0 % here), including repeated
    /// timestamps and the two opportunities at each loop boundary of a trace starting at 0;
    /// with 1000-byte packets the byte accounting carries the rest of an opportunity, so the
    /// bytes stay within one packet of the opportunities' (well within 0.1 % over the period).
    #[test]
    fn a_trace_link_delivers_exactly_the_trace_opportunities() {
        let ms = [0, 3, 3, 3, 7, 8, 8, 20];
        let shape = trace(&ms);
        let t = rate::Trace::new(ms.to_vec()).unwrap();
        for monitor in [false, true] {
            let mut link = shaped(shape.clone(), monitor);
            assert!(link.analytic && link.lean != monitor && !link.cut);
            let ends: Vec<Time> = (0..100)
                .map(
                    |seq| match link.offer(Time::ZERO, &pkt(seq), 1, Time::ZERO) {
                        Enqueued::InFlight { tx_end, .. } => tx_end,
                        other => panic!("{other:?}"),
                    },
                )
                .collect();
            for loops in 1..=4u64 {
                let end = Time(loops * 20 * MS);
                // Opportunities in [0, end]: those in (0, end] and the one at 0.
                let opps = t.opportunities(Time::ZERO, end) + 1;
                let sent = ends.iter().filter(|&&e| e <= end).count() as u64;
                assert_eq!(sent, opps, "loop {loops}");
                if monitor {
                    assert_eq!(link.tx_bytes_done(end), opps * 1500, "loop {loops}");
                }
                assert_eq!(link.capacity_bits(Time::ZERO, end), (opps - 1) * 12_000);
            }
        }
        let mut link = shaped(shape, true);
        let mut small = pkt(0);
        small.wire_bytes = 1000;
        for _ in 0..1000 {
            link.offer(Time::ZERO, &small, 1, Time::ZERO);
        }
        let end = Time(200 * MS);
        let opp_bytes = (t.opportunities(Time::ZERO, end) + 1) * 1500;
        let done = link.tx_bytes_done(end);
        assert!(
            done <= opp_bytes && done + 1000 > opp_bytes,
            "{done} vs {opp_bytes}"
        );
    }

    /// A schedule link changes its rate at the exact nanosecond of a step, for packets that
    /// straddle it too: 12 Mbit/s, then 24 Mbit/s from 2.5 ms. Back-to-back 1500-byte packets
    /// end at 1, 2 ms; the third sends 6000 bits by 2.5 ms and 6000 more in 0.25 ms (2.75 ms);
    /// then one every 0.5 ms.
    #[test]
    fn a_schedule_link_changes_rate_at_the_exact_nanosecond() {
        let steps = vec![
            (Time::ZERO, 12_000_000),
            (Time(2 * MS + MS / 2), 24_000_000),
        ];
        let shape = RateShape::Schedule(std::sync::Arc::new(
            rate::Schedule::new(steps, None).unwrap(),
        ));
        let mut link = shaped(shape, true);
        let ends: Vec<u64> = (0..5)
            .map(
                |seq| match link.offer(Time::ZERO, &pkt(seq), 1, Time::ZERO) {
                    Enqueued::InFlight { tx_end, .. } => tx_end.0,
                    other => panic!("{other:?}"),
                },
            )
            .collect();
        assert_eq!(
            ends,
            vec![
                MS,
                2 * MS,
                2 * MS + 3 * MS / 4,
                3 * MS + MS / 4,
                3 * MS + 3 * MS / 4
            ]
        );
    }
}
