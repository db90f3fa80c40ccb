//! Queue disciplines (AQMs) in front of a link: CoDel, FQ-CoDel, PIE, RED, DualPI2 and the
//! bottleneck queue of quicly's simulator.
//!
//! Contract: a discipline is a sans-IO value driven by its link. The link calls
//! [`Qdisc::enqueue`] when a packet arrives and [`Qdisc::dequeue`] when its transmitter is free;
//! both get `now`, nothing reads a clock. A discipline may drop the arriving packet, drop other
//! packets (FQ-CoDel's fattest-flow drop, CoDel's and DualPI2's drops at dequeue) or set CE on
//! ECN-capable packets instead of dropping; every such verdict is counted in the [`Tally`] the
//! link passes in, per *class* (a sub-queue the discipline reports separately: DualPI2's C queue
//! is class 0 and its L queue class 1; every other discipline has one class). A dequeued packet
//! comes back with its enqueue time and class, so the link records its sojourn per class.
//! Periodic controllers (PIE, DualPI2) update on their own clock (every `tupdate`) and catch
//! up on every update that fell due before `now` when called, which is what a timer would have
//! done (the updates read only the queue state, which does not change between calls).
//! Random draws come from a ChaCha8 stream the link seeds per link, so runs are deterministic.
//! Disciplines are generic over the packet ([`NetPacket`]: wire size, ECN field, DSCP, flow
//! key), so they run on the simulator's packets and on real IP packets alike; flow queueing
//! classifies by the flow key, DualPI2 by the ECN field and DSCP. A transmitter that sends
//! aggregates takes a batch under a budget ([`Qdisc::dequeue_batch`]).
//!
//! The DropTail FIFO is not here: the link schedules it analytically (`link.rs`).

use std::collections::VecDeque;

use cclab_cc::{Dur, Time};
use rand_chacha::ChaCha8Rng;

use crate::ids::FlowId;
use crate::net::NetPacket;
use crate::packet::Packet;

pub mod codel;
pub mod dualpi2;
pub mod fq_codel;
pub mod pie;
pub mod quicly;
pub mod red;

pub use codel::{Codel, CodelParams};
pub use dualpi2::{DualPi2, DualPi2Params};
pub use fq_codel::{FqCodel, FqCodelParams};
pub use pie::{Pie, PieParams};
pub use quicly::{Admission, QuiclyCodel, QuiclyQueue, QuiclyQueueParams};
pub use red::{Red, RedParams};

/// Most classes (sub-queues) a discipline reports.
pub const MAX_CLASSES: usize = 2;

/// Verdicts of one class.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClassTally {
    /// Packets accepted.
    pub enqueued: u64,
    /// Packets dropped because the queue (or memory) limit was reached.
    pub overflow_drops: u64,
    /// Packets dropped by the AQM's decision (early or at dequeue).
    pub aqm_drops: u64,
    /// Packets marked CE instead of being dropped.
    pub ce_marks: u64,
    /// Of the drops, TCP data segments (the engine checks packet conservation with it).
    pub data_dropped: u64,
}

/// Verdict counters of a discipline, per class, kept by the link. Disciplines count through
/// the methods, which also keep the totals the link polls after every call. On a host's NIC
/// the link also asks for the skbs the discipline frees by dropping their last segment
/// ([`Tally::log_freed_skbs`]), so their TX completions can be reported (TSQ).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Per class.
    pub class: [ClassTally; MAX_CLASSES],
    /// Every drop of every class.
    drops_total: u64,
    /// Every CE mark of every class.
    marks_total: u64,
    /// Every dropped TCP data segment of every class.
    data_dropped_total: u64,
    /// Log the skbs freed by drops in `freed`.
    log_freed: bool,
    /// (flow, skb wire bytes) of each dropped last segment of an skb, while logging.
    freed: Vec<(FlowId, u32)>,
}

impl Tally {
    /// Count an accepted packet of `class`.
    #[inline]
    pub fn enqueue(&mut self, class: usize) {
        self.class[class].enqueued += 1;
    }

    /// Count a drop of `pkt` from `class`: an overflow drop if `overflow`, else an AQM drop.
    #[inline]
    pub fn drop<P: NetPacket>(&mut self, class: usize, pkt: &P, overflow: bool) {
        let c = &mut self.class[class];
        if overflow {
            c.overflow_drops += 1;
        } else {
            c.aqm_drops += 1;
        }
        self.drops_total += 1;
        if pkt.is_data() {
            c.data_dropped += 1;
            self.data_dropped_total += 1;
            if self.log_freed
                && let Some(skb) = pkt.completes_skb()
            {
                self.freed.push(skb);
            }
        }
    }

    /// From now on, log every skb freed by a drop (its last segment dropped).
    pub fn log_freed_skbs(&mut self) {
        self.log_freed = true;
    }

    /// Take the skbs freed since the last call, as (flow, skb wire bytes), in drop order.
    pub fn drain_freed(&mut self) -> std::vec::Drain<'_, (FlowId, u32)> {
        self.freed.drain(..)
    }

    /// Count a CE mark in `class`.
    #[inline]
    pub fn mark(&mut self, class: usize) {
        self.class[class].ce_marks += 1;
        self.marks_total += 1;
    }

    /// All drops of all classes (overflow and AQM).
    #[inline]
    #[must_use]
    pub fn drops(&self) -> u64 {
        self.drops_total
    }

    /// All CE marks of all classes.
    #[inline]
    #[must_use]
    pub fn marks(&self) -> u64 {
        self.marks_total
    }

    /// All TCP data segments dropped, of all classes.
    #[inline]
    #[must_use]
    pub fn data_dropped(&self) -> u64 {
        self.data_dropped_total
    }
}

/// A FIFO of packets with their enqueue times that counts its wire bytes: the queue of CoDel,
/// PIE, RED and of each FQ-CoDel flow.
#[derive(Debug)]
pub(crate) struct TimedFifo<P> {
    /// Packets with their enqueue times, head first.
    pub(crate) q: VecDeque<(P, Time)>,
    /// Wire bytes held.
    pub(crate) bytes: u64,
}

impl<P> Default for TimedFifo<P> {
    fn default() -> Self {
        TimedFifo {
            q: VecDeque::new(),
            bytes: 0,
        }
    }
}

impl<P: NetPacket> TimedFifo<P> {
    /// Append `pkt`, enqueued at `now`.
    #[inline]
    pub(crate) fn push(&mut self, pkt: P, now: Time) {
        self.bytes += u64::from(pkt.wire_bytes());
        self.q.push_back((pkt, now));
    }

    /// Remove the head.
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<(P, Time)> {
        let e = self.q.pop_front()?;
        self.bytes -= u64::from(e.0.wire_bytes());
        Some(e)
    }

    /// Packets held.
    #[inline]
    #[expect(
        clippy::cast_possible_truncation,
        reason = "the FIFO holds packets in memory, far fewer than 2^32"
    )]
    pub(crate) fn len(&self) -> u32 {
        self.q.len() as u32
    }
}

/// A packet leaving a discipline.
#[derive(Clone, Copy, Debug)]
pub struct Dequeued<P = Packet> {
    /// The packet (possibly CE-marked).
    pub pkt: P,
    /// When it was enqueued.
    pub enqueued: Time,
    /// Its class (index into [`Tally::class`]).
    pub class: u8,
}

/// The interface every discipline implements, for any packet type ([`NetPacket`]: the
/// simulator's packets by default, real IP packets in an emulator).
pub trait Qdisc<P: NetPacket = Packet>: std::fmt::Debug {
    /// A packet arrives at `now`. Returns false if this packet was dropped (counted in `tally`);
    /// the discipline may also drop others (counted too).
    fn enqueue(&mut self, now: Time, pkt: P, rng: &mut ChaCha8Rng, tally: &mut Tally) -> bool;

    /// The transmitter is free at `now`: the next packet to send, or `None` if the discipline
    /// holds none (it may have dropped some on the way, counted in `tally`).
    fn dequeue(
        &mut self,
        now: Time,
        rng: &mut ChaCha8Rng,
        tally: &mut Tally,
    ) -> Option<Dequeued<P>>;

    /// Packets held.
    fn backlog_packets(&self) -> u32;

    /// Bytes held (wire bytes).
    fn backlog_bytes(&self) -> u64;

    /// Names of the classes the discipline reports (default: one class, `["all"]`).
    fn class_names(&self) -> &'static [&'static str] {
        &["all"]
    }

    /// Packets held in `class` (default: one class holding everything).
    fn class_backlog(&self, class: usize) -> u32 {
        if class == 0 {
            self.backlog_packets()
        } else {
            0
        }
    }

    /// Internal state for time series (e.g. `("p", drop probability)`), at most a few values.
    fn state(&self, _sink: &mut dyn FnMut(&'static str, f64)) {}

    /// The transmitter takes an aggregate at `now` (a Wi-Fi A-MPDU, a bulk dequeue): append
    /// packets to `out` while `budget` is not used up, and return how many. The budget is
    /// checked before each packet, so the last one may overshoot it, as Linux's bulk dequeue
    /// does (`try_bulk_dequeue_skb`, net/sched/sch_generic.c); an aggregate has at least one
    /// packet. The default dequeues one packet at a time, so every discipline's control law
    /// sees each packet as it would one by one.
    fn dequeue_batch(
        &mut self,
        now: Time,
        budget: Budget,
        rng: &mut ChaCha8Rng,
        tally: &mut Tally,
        out: &mut Vec<Dequeued<P>>,
    ) -> usize {
        let mut used = Budget {
            frames: 0,
            bytes: 0,
            airtime: Dur::ZERO,
            phy_rate_bps: budget.phy_rate_bps,
        };
        while used.frames < budget.frames
            && used.bytes < budget.bytes
            && (budget.phy_rate_bps == 0 || used.airtime < budget.airtime)
        {
            let Some(d) = self.dequeue(now, rng, tally) else {
                break;
            };
            used.frames += 1;
            used.bytes += u64::from(d.pkt.wire_bytes());
            if budget.phy_rate_bps > 0 {
                used.airtime +=
                    Dur::serialization(u64::from(d.pkt.wire_bytes()), budget.phy_rate_bps);
            }
            out.push(d);
        }
        used.frames as usize
    }
}

/// What one aggregate may carry ([`Qdisc::dequeue_batch`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// Most packets (frames).
    pub frames: u32,
    /// Most wire bytes.
    pub bytes: u64,
    /// Most airtime at `phy_rate_bps` (ignored when the rate is 0).
    pub airtime: Dur,
    /// The rate airtime is counted at, bits per second; 0: no airtime limit.
    pub phy_rate_bps: u64,
}

impl Budget {
    /// One packet: the budget of a plain transmitter.
    pub const ONE: Budget = Budget {
        frames: 1,
        bytes: u64::MAX,
        airtime: Dur::ZERO,
        phy_rate_bps: 0,
    };
}

/// Which discipline, with its parameters (each defaults to Linux's defaults).
#[derive(Clone, Debug, PartialEq)]
pub enum AqmConfig {
    /// CoDel (RFC 8289, Linux `sch_codel`).
    Codel(CodelParams),
    /// FQ-CoDel (RFC 8290, Linux `sch_fq_codel`).
    FqCodel(FqCodelParams),
    /// PIE (RFC 8033, Linux `sch_pie`).
    Pie(PieParams),
    /// RED (Floyd & Jacobson 1993, Linux `sch_red`).
    Red(RedParams),
    /// DualPI2 (RFC 9332, Linux `sch_dualpi2`).
    DualPi2(DualPi2Params),
    /// The bottleneck queue of quicly's simulator (`quicly`): a byte FIFO, optionally run by
    /// CoDel. Not a `qdisc` name of scenario files: the `quicly` topology preset builds it.
    Quicly(QuiclyQueueParams),
}

impl AqmConfig {
    /// Names accepted in scenario files, in the order of the variants.
    pub const NAMES: [&'static str; 5] = ["codel", "fq_codel", "pie", "red", "dualpi2"];

    /// The discipline's name, as in [`AqmConfig::NAMES`] (and Linux `tc qdisc` kinds).
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            AqmConfig::Codel(_) => "codel",
            AqmConfig::FqCodel(_) => "fq_codel",
            AqmConfig::Pie(_) => "pie",
            AqmConfig::Red(_) => "red",
            AqmConfig::DualPi2(_) => "dualpi2",
            AqmConfig::Quicly(_) => "quicly",
        }
    }

    /// How many classes the discipline reports (DualPI2: C and L; the others one).
    #[must_use]
    pub fn classes(&self) -> usize {
        match self {
            AqmConfig::DualPi2(_) => 2,
            _ => 1,
        }
    }

    /// The discipline with Linux's defaults, by name.
    #[must_use]
    pub fn default_for(name: &str) -> Option<Self> {
        Some(match name {
            "codel" => AqmConfig::Codel(CodelParams::default()),
            "fq_codel" => AqmConfig::FqCodel(FqCodelParams::default()),
            "pie" => AqmConfig::Pie(PieParams::default()),
            "red" => AqmConfig::Red(RedParams::default()),
            "dualpi2" => AqmConfig::DualPi2(DualPi2Params::default()),
            _ => return None,
        })
    }

    /// Check the parameters; the error names the first bad one.
    pub fn validate(&self) -> Result<(), String> {
        let positive = |what: &str, d: Dur| {
            if d > Dur::ZERO {
                Ok(())
            } else {
                Err(format!("`{what}` must be positive"))
            }
        };
        let nonzero = |what: &str, n: u64| {
            if n > 0 {
                Ok(())
            } else {
                Err(format!("`{what}` must be at least 1"))
            }
        };
        let gain = |what: &str, g: f64| {
            if g.is_finite() && g >= 0.0 {
                Ok(())
            } else {
                Err(format!("`{what}` must be a finite number ≥ 0"))
            }
        };
        match self {
            AqmConfig::Codel(p) => {
                positive("target", p.target)?;
                positive("interval", p.interval)?;
                nonzero("limit", u64::from(p.limit))
            }
            AqmConfig::FqCodel(p) => {
                positive("target", p.target)?;
                positive("interval", p.interval)?;
                nonzero("limit", u64::from(p.limit))?;
                nonzero("flows", u64::from(p.flows))?;
                if p.flows > FqCodelParams::MAX_FLOWS {
                    return Err(format!(
                        "`flows` must be at most {} (Linux's bound), got {}",
                        FqCodelParams::MAX_FLOWS,
                        p.flows
                    ));
                }
                nonzero("quantum", u64::from(p.quantum))?;
                nonzero("drop_batch", u64::from(p.drop_batch))?;
                nonzero("memory_limit", p.memory_limit)
            }
            AqmConfig::Pie(p) => {
                positive("target", p.target)?;
                positive("tupdate", p.tupdate)?;
                gain("alpha", p.alpha)?;
                gain("beta", p.beta)?;
                nonzero("limit", u64::from(p.limit))
            }
            AqmConfig::Red(p) => {
                nonzero("limit", p.limit)?;
                nonzero("avpkt", u64::from(p.avpkt))?;
                if !(p.min_th < p.max_th && p.max_th <= p.limit) {
                    return Err("thresholds must satisfy min_th < max_th ≤ limit".into());
                }
                if !(p.max_p > 0.0 && p.max_p <= 1.0) {
                    return Err("`max_p` must be within (0, 1]".into());
                }
                if !(1..=31).contains(&p.wlog) {
                    return Err("`wlog` must be within 1..=31".into());
                }
                Ok(())
            }
            AqmConfig::DualPi2(p) => {
                positive("target", p.target)?;
                positive("tupdate", p.tupdate)?;
                gain("alpha", p.alpha)?;
                gain("beta", p.beta)?;
                nonzero("limit", u64::from(p.limit))?;
                if !(p.coupling.is_finite() && p.coupling > 0.0) {
                    return Err("`coupling` must be positive".into());
                }
                if p.c_protection > 100 {
                    return Err("`c_protection` is a percentage: 0..=100".into());
                }
                Ok(())
            }
            AqmConfig::Quicly(p) => {
                nonzero("capacity", p.capacity_bytes)?;
                if let Some(c) = &p.codel {
                    positive("target", c.target)?;
                    positive("interval", c.interval)?;
                }
                Ok(())
            }
        }
    }

    /// Build the discipline for a link of `rate_bps`; `seed` keys FQ-CoDel's flow hash (RED
    /// uses the rate to age its average over idle periods).
    #[must_use]
    pub fn build<P: NetPacket>(&self, seed: u64, rate_bps: u64) -> AnyQdisc<P> {
        match self {
            AqmConfig::Codel(p) => AnyQdisc::Codel(Codel::new(p)),
            AqmConfig::FqCodel(p) => AnyQdisc::FqCodel(Box::new(FqCodel::new(p, seed))),
            AqmConfig::Pie(p) => AnyQdisc::Pie(Pie::new(p)),
            AqmConfig::Red(p) => AnyQdisc::Red(Red::new(p, rate_bps)),
            AqmConfig::DualPi2(p) => AnyQdisc::DualPi2(DualPi2::new(p)),
            AqmConfig::Quicly(p) => AnyQdisc::Quicly(QuiclyQueue::new(p)),
        }
    }
}

impl<P> AnyQdisc<P> {
    /// The discipline's name (as [`AqmConfig::name`]).
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            AnyQdisc::Codel(_) => "codel",
            AnyQdisc::FqCodel(_) => "fq_codel",
            AnyQdisc::Pie(_) => "pie",
            AnyQdisc::Red(_) => "red",
            AnyQdisc::DualPi2(_) => "dualpi2",
            AnyQdisc::Quicly(_) => "quicly",
        }
    }
}

/// Any discipline, dispatched by `match` (no virtual call on the per-packet path).
#[derive(Debug)]
pub enum AnyQdisc<P = Packet> {
    /// CoDel.
    Codel(Codel<P>),
    /// FQ-CoDel (boxed: it holds its bucket table).
    FqCodel(Box<FqCodel<P>>),
    /// PIE.
    Pie(Pie<P>),
    /// RED.
    Red(Red<P>),
    /// DualPI2.
    DualPi2(DualPi2<P>),
    /// quicly's bottleneck queue.
    Quicly(QuiclyQueue<P>),
}

macro_rules! dispatch {
    ($self:expr, $q:ident => $e:expr) => {
        match $self {
            AnyQdisc::Codel($q) => $e,
            AnyQdisc::FqCodel($q) => $e,
            AnyQdisc::Pie($q) => $e,
            AnyQdisc::Red($q) => $e,
            AnyQdisc::DualPi2($q) => $e,
            AnyQdisc::Quicly($q) => $e,
        }
    };
}

impl<P: NetPacket> Qdisc<P> for AnyQdisc<P> {
    #[inline]
    fn enqueue(&mut self, now: Time, pkt: P, rng: &mut ChaCha8Rng, tally: &mut Tally) -> bool {
        dispatch!(self, q => q.enqueue(now, pkt, rng, tally))
    }
    #[inline]
    fn dequeue(
        &mut self,
        now: Time,
        rng: &mut ChaCha8Rng,
        tally: &mut Tally,
    ) -> Option<Dequeued<P>> {
        dispatch!(self, q => q.dequeue(now, rng, tally))
    }
    fn backlog_packets(&self) -> u32 {
        dispatch!(self, q => q.backlog_packets())
    }
    fn backlog_bytes(&self) -> u64 {
        dispatch!(self, q => q.backlog_bytes())
    }
    fn class_names(&self) -> &'static [&'static str] {
        dispatch!(self, q => q.class_names())
    }
    fn class_backlog(&self, class: usize) -> u32 {
        dispatch!(self, q => q.class_backlog(class))
    }
    fn state(&self, sink: &mut dyn FnMut(&'static str, f64)) {
        dispatch!(self, q => q.state(sink));
    }
}

#[cfg(test)]
pub(crate) mod testkit;

#[cfg(test)]
mod batch_tests {
    use super::*;
    use crate::net::test_packet;

    /// Ten 1500-byte packets behind CoDel (far below its target, so it never acts): the frame,
    /// byte and airtime budgets each end the aggregate where they are used up (the last packet
    /// may overshoot the byte and airtime budgets), and the packets come in FIFO order, each
    /// counted once.
    #[test]
    fn batch_dequeue_respects_frames_bytes_and_airtime() {
        let mut q = Codel::new(&CodelParams::default());
        let mut rng = crate::rng::stream(1, 2);
        let mut tally = Tally::default();
        for seq in 0..10 {
            assert!(q.enqueue(Time::ZERO, test_packet(seq, 0), &mut rng, &mut tally));
        }
        let mut out = Vec::new();
        let frames = Budget {
            frames: 3,
            ..Budget::ONE
        };
        assert_eq!(
            q.dequeue_batch(Time(1), frames, &mut rng, &mut tally, &mut out),
            3
        );
        // 3000 bytes: two packets reach it exactly.
        let bytes = Budget {
            frames: u32::MAX,
            bytes: 3000,
            ..Budget::ONE
        };
        assert_eq!(
            q.dequeue_batch(Time(1), bytes, &mut rng, &mut tally, &mut out),
            2
        );
        // 2001 bytes: the second packet overshoots and is the last.
        let bytes = Budget {
            frames: u32::MAX,
            bytes: 2001,
            ..Budget::ONE
        };
        assert_eq!(
            q.dequeue_batch(Time(1), bytes, &mut rng, &mut tally, &mut out),
            2
        );
        // 1.5 ms of airtime at 12 Mbit/s (1 ms per packet): two packets.
        let air = Budget {
            frames: u32::MAX,
            bytes: u64::MAX,
            airtime: Dur(1_500_000),
            phy_rate_bps: 12_000_000,
        };
        assert_eq!(
            q.dequeue_batch(Time(1), air, &mut rng, &mut tally, &mut out),
            2
        );
        // What is left, and then nothing.
        let all = Budget {
            frames: u32::MAX,
            ..Budget::ONE
        };
        assert_eq!(
            q.dequeue_batch(Time(1), all, &mut rng, &mut tally, &mut out),
            1
        );
        assert_eq!(
            q.dequeue_batch(Time(1), all, &mut rng, &mut tally, &mut out),
            0
        );
        let seqs: Vec<u64> = out
            .iter()
            .map(|d| crate::net::NetPacket::data_segment(&d.pkt).unwrap().1)
            .collect();
        assert_eq!(seqs, (0..10).collect::<Vec<_>>());
        assert_eq!(q.backlog_packets(), 0);
        assert_eq!(tally.drops() + tally.marks(), 0);
    }
}
