//! Network elements: the pieces a path is made of (queue disciplines, a transmitter with a rate
//! model, loss models, delay models, middleboxes), behind one small interface.
//!
//! Contract: an [`Element`] is a sans-IO value in the shape of neqo's test-fixture nodes. The
//! caller hands it a packet at `now` (or nothing, when its timer is due) and takes back what
//! leaves it at `now`, one [`Output`] per call, until it answers [`Output::Wake`] (call again
//! at that time) or [`Output::Idle`] (nothing to do until the next packet). Packets may leave
//! in another order than they came (a delay model with jitter), more than once (a duplicator)
//! or not at all (a loss model). Nothing reads a clock; randomness comes from a stream the
//! element is given at construction, seeded from the scenario seed and the element's
//! component id ([`crate::rng::stream`]).
//!
//! Elements that need no transport fields are generic over the packet through [`NetPacket`]
//! (wire size, ECN field, DSCP, a [`FlowKey`]), so the same code can run on real IP packets;
//! the simulator's [`Packet`] implements it. Dispatch is static: the engine holds elements in
//! [`AnyElement`], an enum of the element kinds, so the hot path has neither boxes nor virtual
//! calls.
//!
//! The link (`link.rs`) is a composition of these parts: queue discipline (`queue/`) →
//! transmitter with a [`RateModel`] → [`LossModel`] → [`DelayModel`]. For the commonest case,
//! a drop-tail FIFO, the link keeps its analytic fast path (every packet scheduled at enqueue)
//! and uses the rate (constant, a schedule or a trace: [`rate`]), loss and delay models
//! directly.
//!
//! Adding an element: one file here with a struct implementing [`Element`], a variant in
//! [`AnyElement`] and its arm in the `dispatch!` macro below.

use cclab_cc::{Dur, Time};

use crate::ids::FlowId;
use crate::packet::{Ecn, Owner, Packet, Payload};

pub mod ack_aggregate;
pub mod ack_thin;
pub mod delay;
pub mod delay_schedule;
pub mod dist;
pub mod duplicate;
pub mod jitter;
pub mod loss;
pub mod outage;
pub mod pass;
pub mod policer;
pub mod rate;
pub mod reroute;
pub mod select;
pub mod shaper;
pub mod sorted_line;

pub use ack_aggregate::AckAggregate;
pub use ack_thin::AckThin;
pub use delay::{Delay, DelayModel};
pub use delay_schedule::{DelaySchedule, ScheduledDelay};
pub use dist::Distribution;
pub use duplicate::Duplicate;
pub use jitter::{Jitter, JitterDist, JitterDraw};
pub use loss::{Loss, LossConfig, LossModel};
pub use outage::{Outage, OutageMode};
pub use pass::Pass;
pub use policer::Policer;
pub use rate::RateModel;
pub use reroute::{PathSpec, Reroute, SwitchMode, Switching};
pub use select::{PacketKind, Selector};
pub use shaper::Shaper;
pub use sorted_line::SortedLine;

/// A flow's identity as a queue discipline sees it: a 64-bit code for (addresses, ports,
/// protocol). Flow-queueing disciplines hash this code (keyed per queue), never a simulator id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FlowKey(pub u64);

/// IANA protocol number of TCP (RFC 9293).
pub const PROTO_TCP: u8 = 6;
/// IANA protocol number of UDP (RFC 768).
pub const PROTO_UDP: u8 = 17;

impl FlowKey {
    /// The key of a 5-tuple (IPv4 addresses as IPv4-mapped IPv6, RFC 4291 §2.5.5.2): the
    /// fields folded into one code. Two packets of one direction of one connection get the same
    /// key; the directions get different keys.
    #[must_use]
    #[expect(
        clippy::cast_possible_truncation,
        reason = "taking the low 64 bits is intended: each half of an address is folded in separately"
    )]
    pub fn from_tuple(src: u128, dst: u128, sport: u16, dport: u16, proto: u8) -> Self {
        let mut h = fold(0, src as u64);
        h = fold(h, (src >> 64) as u64);
        h = fold(h, dst as u64);
        h = fold(h, (dst >> 64) as u64);
        h = fold(
            h,
            (u64::from(sport) << 24) | (u64::from(dport) << 8) | u64::from(proto),
        );
        FlowKey(h)
    }

    /// The key of a simulator endpoint. The simulator's hosts have one address per endpoint
    /// pair and its flows and probes one port pair each, so the endpoint's index identifies the
    /// 5-tuple; TCP flows, probes and UDP sources get disjoint codes (`probe | 2³²`, `udp | 2³³`).
    #[must_use]
    pub fn of_owner(owner: Owner) -> Self {
        match owner {
            Owner::Flow(f) => FlowKey(u64::from(f.0)),
            Owner::Probe(p) => FlowKey((1 << 32) | u64::from(p.0)),
            Owner::Udp(u) => FlowKey((2 << 32) | u64::from(u.0)),
        }
    }
}

/// One step of the fold in [`FlowKey::from_tuple`] (SplitMix64's finaliser, Steele, Lea and
/// Flood 2014).
fn fold(h: u64, x: u64) -> u64 {
    let mut z = (h ^ x).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// What an element needs to know about a packet: nothing transport-specific.
pub trait NetPacket: Copy + std::fmt::Debug {
    /// Bytes on the wire (the IP packet).
    fn wire_bytes(&self) -> u32;
    /// The ECN field (RFC 3168 §5).
    fn ecn(&self) -> Ecn;
    /// Set the ECN field.
    fn set_ecn(&mut self, ecn: Ecn);
    /// The DSCP (RFC 2474).
    fn dscp(&self) -> u8;
    /// The flow the packet belongs to.
    fn flow_key(&self) -> FlowKey;
    /// A transport data segment (counted apart so the simulator can check that every data
    /// segment is delivered, dropped or still inside the network).
    fn is_data(&self) -> bool {
        false
    }
    /// The last segment of a TCP skb: (its flow, the skb's wire bytes), whose drop frees the
    /// skb (a TX completion for TCP Small Queues); `None` for anything else.
    fn completes_skb(&self) -> Option<(FlowId, u32)> {
        None
    }
    /// The TCP data segment this is, as (flow, segment number, transmission count), for
    /// models scripted per segment; `None` for anything else.
    fn data_segment(&self) -> Option<(FlowId, u64, u32)> {
        None
    }
    /// What an ACK filter sees of a TCP pure ACK (a segment without payload); `None` for
    /// anything else (data, probes, other protocols).
    fn pure_ack(&self) -> Option<PureAck> {
        None
    }
    /// Set CE if the packet is ECN-capable; false (nothing changed) if it is not, and the
    /// queue must drop it instead (RFC 3168 §5).
    #[inline]
    fn mark_ce(&mut self) -> bool {
        if self.ecn().is_ect() {
            self.set_ecn(Ecn::Ce);
            true
        } else {
            false
        }
    }
}

impl NetPacket for Packet {
    #[inline(always)]
    fn wire_bytes(&self) -> u32 {
        self.wire_bytes
    }
    #[inline(always)]
    fn ecn(&self) -> Ecn {
        self.ecn
    }
    #[inline(always)]
    fn set_ecn(&mut self, ecn: Ecn) {
        self.ecn = ecn;
    }
    #[inline(always)]
    fn dscp(&self) -> u8 {
        self.dscp
    }
    #[inline(always)]
    fn flow_key(&self) -> FlowKey {
        FlowKey::of_owner(self.owner)
    }
    #[inline(always)]
    fn is_data(&self) -> bool {
        Packet::is_data(self)
    }
    #[inline]
    fn completes_skb(&self) -> Option<(FlowId, u32)> {
        match self.owner {
            Owner::Flow(f) if self.skb_bytes > 0 && Packet::is_data(self) => {
                Some((f, self.skb_bytes))
            }
            _ => None,
        }
    }
    #[inline]
    fn data_segment(&self) -> Option<(FlowId, u64, u32)> {
        match (self.owner, self.payload) {
            (Owner::Flow(f), Payload::Data { seq, tx_count, .. }) => Some((f, seq, tx_count)),
            _ => None,
        }
    }
    #[inline]
    fn pure_ack(&self) -> Option<PureAck> {
        match self.payload {
            Payload::Ack { ack, sack, ece, .. } => Some(PureAck {
                ack,
                sack: !sack.is_empty(),
                ece,
            }),
            _ => None,
        }
    }
}

/// The fields of a TCP pure ACK that ACK filters look at (ACK filters such as Linux
/// `sch_cake`'s keep ACKs that carry more than a cumulative acknowledgement).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PureAck {
    /// The cumulative acknowledgement (in the transport's sequence units).
    pub ack: u64,
    /// The ACK carries SACK blocks (RFC 2018), a DSACK (RFC 2883) among them.
    pub sack: bool,
    /// The ACK echoes congestion: ECE set (RFC 3168 §6.1.3).
    pub ece: bool,
}

/// What an element gives back from one call of [`Element::process`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Output<P> {
    /// A packet leaves now; call again (with no packet) for more.
    Packet(P),
    /// Nothing leaves now; call again at this time.
    Wake(Time),
    /// Nothing leaves and nothing is due until the next packet arrives.
    Idle,
}

/// A network element.
pub trait Element<P: NetPacket> {
    /// `pkt` (if any) arrives at `now`; return the next packet that leaves at or before `now`,
    /// or when to call again. A caller that gets [`Output::Packet`] calls again with `None` at
    /// the same `now` until it gets something else.
    fn process(&mut self, now: Time, pkt: Option<P>) -> Output<P>;

    /// Packets held.
    fn held(&self) -> usize {
        0
    }

    /// Transport data segments held ([`NetPacket::is_data`]).
    fn held_data(&self) -> usize {
        0
    }

    /// Transport data segments the element made (copies), beyond those it was given: with
    /// them, what went in and is neither out nor held was dropped.
    fn data_made(&self) -> u64 {
        0
    }
}

impl<P: NetPacket, E: Element<P> + ?Sized> Element<P> for Box<E> {
    #[inline]
    fn process(&mut self, now: Time, pkt: Option<P>) -> Output<P> {
        (**self).process(now, pkt)
    }
    fn held(&self) -> usize {
        (**self).held()
    }
    fn held_data(&self) -> usize {
        (**self).held_data()
    }
    fn data_made(&self) -> u64 {
        (**self).data_made()
    }
}

/// Every element kind, for dispatch without virtual calls (a large one is boxed, once, when
/// it is built).
#[derive(Debug)]
pub enum AnyElement<P> {
    /// Hands every packet on at once.
    Pass(Pass),
    /// A loss model.
    Loss(Loss),
    /// A delay line.
    Delay(Delay<P>),
    /// A random delay, reordering or not (boxed: it holds its random stream).
    Jitter(Box<Jitter<P>>),
    /// Duplicates packets at random (boxed: it holds its random stream).
    Duplicate(Box<Duplicate<P>>),
    /// Delivers nothing during given intervals.
    Outage(Box<Outage<P>>),
    /// A delay that follows a schedule.
    ScheduledDelay(Box<ScheduledDelay<P>>),
    /// A token-bucket policer.
    Policer(Policer),
    /// A token-bucket shaper (boxed: it holds its FIFO).
    Shaper(Box<Shaper<P>>),
    /// Switches between paths (boxed: it holds its paths).
    Reroute(Box<Reroute<P>>),
    /// Forwards one pure ACK in k per flow (boxed: it holds per-flow state).
    AckThin(Box<AckThin<P>>),
    /// Holds pure ACKs and releases them together on a clock.
    AckAggregate(AckAggregate<P>),
}

/// An element as a configuration names it: its kind and parameters, plain data that can be
/// cloned, compared and hashed into a run id. [`ElementSpec::build`] makes the element; the engine
/// does so for every [`crate::ElementConfig`] of a [`crate::SimConfig`], seeding a random element
/// from the scenario seed and the element's position (`rng::ELEMENT + i`), so adding an element
/// changes no other random stream.
#[derive(Clone, Debug, PartialEq)]
pub enum ElementSpec {
    /// Hands every packet on at once ([`Pass`]).
    Pass,
    /// Loses packets as a loss model decides ([`Loss`]: Bernoulli, Gilbert–Elliott, per RTT).
    Loss {
        /// The model.
        model: LossConfig,
    },
    /// Delays every packet by `delay`, in order ([`Delay`]).
    Delay {
        /// The added one-way delay.
        delay: Dur,
    },
    /// A random delay per packet ([`Jitter`]), reordering or not.
    Jitter {
        /// What is drawn.
        dist: JitterDist,
        /// Correlation of successive uniform draws (netem's ρ), in [0, 1].
        correlation: f64,
        /// Whether a packet may overtake an earlier one.
        reorder: bool,
    },
    /// Nothing is delivered during the intervals ([`Outage`]).
    Outage {
        /// `(start, duration)`, sorted, not overlapping.
        intervals: Vec<(Time, Dur)>,
        /// Lose or hold what arrives during an outage.
        mode: OutageMode,
    },
    /// A delay that follows a schedule ([`ScheduledDelay`]).
    DelaySchedule {
        /// The schedule.
        schedule: DelaySchedule,
        /// Whether a packet may overtake earlier ones when the delay drops.
        reorder: bool,
    },
    /// Sends a copy of each packet right behind it with probability `p` ([`Duplicate`]).
    Duplicate {
        /// Duplication probability in [0, 1].
        p: f64,
    },
    /// Drops packets above a token-bucket rate ([`Policer`]).
    Policer {
        /// Token rate, bit/s (positive).
        rate_bps: u64,
        /// Bucket size, bytes.
        burst_bytes: u64,
    },
    /// Holds packets above a token-bucket rate in a byte-limited FIFO ([`Shaper`]).
    Shaper {
        /// Token rate, bit/s (positive).
        rate_bps: u64,
        /// Bucket size, bytes.
        burst_bytes: u64,
        /// Bytes the FIFO may hold.
        limit_bytes: u64,
    },
    /// Sends each packet over the path active when it arrives ([`Reroute`]).
    Reroute {
        /// The paths (at least 2).
        paths: Vec<PathSpec>,
        /// When the active path changes.
        switching: Switching,
        /// What a switch does to packets on the old path or arriving just after it.
        mode: SwitchMode,
    },
    /// Forwards one pure ACK in `k` per flow ([`AckThin`]).
    AckThin {
        /// One in this many pure ACKs goes on (≥ 1).
        k: u32,
        /// ACKs with SACK blocks or ECE always go on and do not count.
        keep_signals: bool,
        /// Release a withheld ACK after this long (zero: never).
        hold: Dur,
    },
    /// Holds pure ACKs and releases them at `phase + n·period` ([`AckAggregate`]).
    AckAggregate {
        /// Time between releases (> 0).
        period: Dur,
        /// First release instant.
        phase: Dur,
    },
}

impl ElementSpec {
    /// The one-way delay the element is configured to add to a packet that reaches it at `t`,
    /// not counting any queueing in it: a [`Delay`]'s delay, a [`DelaySchedule`]'s
    /// [`DelaySchedule::delay_at`], the propagation delay of the [`Reroute`] path active at `t`
    /// (its serialisation and buffer left out), a [`Jitter`]'s centre (uniform: `base +
    /// spread/2`, its mean; netem: `mu`, the mean unless the clamp at zero bites). `None` for the
    /// elements that add no configured delay (loss, outage, duplication, token buckets, ACK
    /// thinning and aggregation, pass).
    #[must_use]
    pub fn scheduled_delay(&self, t: Time) -> Option<Dur> {
        match self {
            ElementSpec::Delay { delay } => Some(*delay),
            ElementSpec::DelaySchedule { schedule, .. } => Some(schedule.delay_at(t)),
            ElementSpec::Reroute {
                paths, switching, ..
            } => paths.get(switching.active(t, paths.len())).map(|p| p.delay),
            ElementSpec::Jitter { dist, .. } => Some(dist.centre()),
            _ => None,
        }
    }

    /// Whether [`ElementSpec::scheduled_delay`] changes during a run (a delay schedule, a
    /// reroute between paths of different delay).
    #[must_use]
    pub fn delay_varies(&self) -> bool {
        match self {
            ElementSpec::DelaySchedule { schedule, .. } => {
                !schedule.steps.is_empty()
                    || !schedule.spikes.is_empty()
                    || schedule.oscillation.is_some()
            }
            ElementSpec::Reroute { paths, .. } => {
                paths.windows(2).any(|w| w[0].delay != w[1].delay)
            }
            _ => false,
        }
    }

    /// The element, its random stream (if it has one) seeded from `seed` and `component`, for
    /// any packet type (the simulator's [`Packet`], or real IP packets in the emulator).
    #[must_use]
    pub fn build<P: NetPacket>(&self, seed: u64, component: u64) -> AnyElement<P> {
        match self {
            ElementSpec::Pass => AnyElement::Pass(Pass::default()),
            ElementSpec::Loss { model } => {
                AnyElement::Loss(Loss::new(LossModel::new(model, seed, component)))
            }
            ElementSpec::Delay { delay } => {
                AnyElement::Delay(Delay::new(DelayModel::new(*delay, &[])))
            }
            ElementSpec::Jitter {
                dist,
                correlation,
                reorder,
            } => AnyElement::Jitter(Box::new(Jitter::with(
                *dist,
                *correlation,
                *reorder,
                seed,
                component,
            ))),
            ElementSpec::Duplicate { p } => {
                AnyElement::Duplicate(Box::new(Duplicate::new(*p, seed, component)))
            }
            ElementSpec::Outage { intervals, mode } => {
                AnyElement::Outage(Box::new(Outage::new(intervals, *mode)))
            }
            ElementSpec::DelaySchedule { schedule, reorder } => AnyElement::ScheduledDelay(
                Box::new(ScheduledDelay::new(schedule.clone(), *reorder)),
            ),
            ElementSpec::Policer {
                rate_bps,
                burst_bytes,
            } => AnyElement::Policer(Policer::new(*rate_bps, *burst_bytes)),
            ElementSpec::Shaper {
                rate_bps,
                burst_bytes,
                limit_bytes,
            } => AnyElement::Shaper(Box::new(Shaper::new(*rate_bps, *burst_bytes, *limit_bytes))),
            ElementSpec::Reroute {
                paths,
                switching,
                mode,
            } => AnyElement::Reroute(Box::new(Reroute::with_mode(
                paths,
                switching.clone(),
                *mode,
            ))),
            ElementSpec::AckThin {
                k,
                keep_signals,
                hold,
            } => AnyElement::AckThin(Box::new(AckThin::new(*k, *keep_signals, *hold))),
            ElementSpec::AckAggregate { period, phase } => {
                AnyElement::AckAggregate(AckAggregate::new(*period, *phase))
            }
        }
    }

    /// What is wrong with the parameters, if anything (probabilities outside [0, 1], unsorted
    /// intervals or steps).
    #[must_use]
    pub fn problem(&self) -> Option<String> {
        match self {
            ElementSpec::Duplicate { p } if !(0.0..=1.0).contains(p) => {
                Some(format!("probability {p} is not in [0, 1]"))
            }
            ElementSpec::Loss { model } => model.problem(),
            ElementSpec::Jitter { correlation, .. } if !(0.0..=1.0).contains(correlation) => {
                Some(format!("correlation {correlation} is not in [0, 1]"))
            }
            ElementSpec::Outage { intervals, .. } => outage::intervals_problem(intervals),
            ElementSpec::DelaySchedule { schedule, .. } => schedule.problem(),
            ElementSpec::Policer { rate_bps: 0, .. } | ElementSpec::Shaper { rate_bps: 0, .. } => {
                Some("a token bucket's rate must be positive".into())
            }
            ElementSpec::Reroute {
                paths,
                switching,
                mode,
            } => {
                if paths.len() < 2 {
                    return Some(format!(
                        "a reroute needs at least 2 paths, got {}",
                        paths.len()
                    ));
                }
                if let Some(i) = paths.iter().position(|p| p.rate_bps == Some(0)) {
                    return Some(format!("path {i} has rate 0"));
                }
                switching
                    .problem(paths.len())
                    .or_else(|| mode.problem(switching, paths.len()))
            }
            ElementSpec::AckThin { k: 0, .. } => Some("ack_thin needs k ≥ 1".to_owned()),
            ElementSpec::AckAggregate { period, .. } if *period == Dur::ZERO => {
                Some("the aggregation period must be longer than 0".to_owned())
            }
            _ => None,
        }
    }
}

macro_rules! dispatch {
    ($self:ident, $e:ident => $body:expr) => {
        match $self {
            AnyElement::Pass($e) => $body,
            AnyElement::Loss($e) => $body,
            AnyElement::Delay($e) => $body,
            AnyElement::Jitter($e) => $body,
            AnyElement::Duplicate($e) => $body,
            AnyElement::Outage($e) => $body,
            AnyElement::ScheduledDelay($e) => $body,
            AnyElement::Policer($e) => $body,
            AnyElement::Shaper($e) => $body,
            AnyElement::Reroute($e) => $body,
            AnyElement::AckThin($e) => $body,
            AnyElement::AckAggregate($e) => $body,
        }
    };
}

impl<P: NetPacket> Element<P> for AnyElement<P> {
    #[inline]
    fn process(&mut self, now: Time, pkt: Option<P>) -> Output<P> {
        dispatch!(self, e => e.process(now, pkt))
    }

    fn held(&self) -> usize {
        dispatch!(self, e => Element::<P>::held(e))
    }

    fn held_data(&self) -> usize {
        dispatch!(self, e => Element::<P>::held_data(e))
    }

    fn data_made(&self) -> u64 {
        dispatch!(self, e => Element::<P>::data_made(e))
    }
}

/// A data segment of flow 0 for element tests: segment `seq`, transmission `tx_count`.
#[cfg(test)]
pub(crate) fn test_packet(seq: u64, tx_count: u32) -> Packet {
    Packet {
        route: 0,
        hop: 0,
        wire_bytes: 1500,
        owner: Owner::Flow(FlowId(0)),
        skb_bytes: 0,
        dscp: 0,
        ecn: Ecn::NotEct,
        payload: Payload::Data {
            seq,
            tx_count,
            tsval: Time::ZERO,
            cwr: false,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Simulator packets keep the code FQ-CoDel hashed before flow keys existed, so bucket
    /// assignments (and results) are unchanged; the 5-tuple fold separates directions.
    #[test]
    fn flow_keys() {
        use crate::ids::ProbeId;
        assert_eq!(FlowKey::of_owner(Owner::Flow(FlowId(7))), FlowKey(7));
        assert_eq!(
            FlowKey::of_owner(Owner::Probe(ProbeId(7))),
            FlowKey((1 << 32) | 7)
        );
        let a = FlowKey::from_tuple(1, 2, 1000, 80, PROTO_TCP);
        assert_eq!(a, FlowKey::from_tuple(1, 2, 1000, 80, PROTO_TCP));
        assert_ne!(a, FlowKey::from_tuple(2, 1, 80, 1000, PROTO_TCP));
        assert_ne!(a, FlowKey::from_tuple(1, 2, 1000, 80, PROTO_UDP));
    }
}
