//! Test helpers for queue disciplines.
//!
//! Contract: [`drive`] runs a discipline in front of a fixed-rate link the way the simulator's
//! link does — `enqueue` at each arrival, `dequeue` whenever the transmitter is free (at the end
//! of each serialisation, or at an arrival to an idle link) — and records every departure and,
//! by diffing the tally around each call, when drops and marks happened. Arrivals at the same
//! instant as a transmission end are enqueued first. Everything is deterministic.

use cclab_cc::{Dur, Time};
use rand_chacha::ChaCha8Rng;

use super::{Dequeued, Qdisc, Tally};
use crate::ids::{FlowId, ProbeId};
use crate::packet::{Ecn, Owner, Packet, Payload};

/// The random stream tests use.
pub(crate) fn rng() -> ChaCha8Rng {
    crate::rng::stream(1, 0xAA)
}

/// Owner of flow `i`.
pub(crate) fn flow(i: u32) -> Owner {
    Owner::Flow(FlowId(i))
}

/// Owner of probe `i`.
pub(crate) fn probe(i: u32) -> Owner {
    Owner::Probe(ProbeId(i))
}

/// A data segment of `owner` (segment number `seq`) with `bytes` on the wire.
pub(crate) fn data_seq(owner: Owner, seq: u64, bytes: u32, ecn: Ecn) -> Packet {
    Packet {
        route: 0,
        hop: 0,
        wire_bytes: bytes,
        owner,
        skb_bytes: 0,
        dscp: 0,
        ecn,
        payload: Payload::Data {
            seq,
            tx_count: 0,
            tsval: Time::ZERO,
            cwr: false,
        },
    }
}

/// A data segment (segment 0).
pub(crate) fn data(owner: Owner, bytes: u32, ecn: Ecn) -> Packet {
    data_seq(owner, 0, bytes, ecn)
}

/// A packet arriving at the queue.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Arrival {
    /// When.
    pub at: Time,
    /// What.
    pub pkt: Packet,
}

/// `count` packets of `owner`, one every `gap` from `start`, numbered 0.. in `seq`.
pub(crate) fn cbr(
    owner: Owner,
    start: Time,
    gap: Dur,
    bytes: u32,
    ecn: Ecn,
    count: u64,
) -> Vec<Arrival> {
    (0..count)
        .map(|i| Arrival {
            at: Time(start.0 + i * gap.0),
            pkt: data_seq(owner, i, bytes, ecn),
        })
        .collect()
}

/// Several arrival sequences merged in time order (stable: ties keep the order of `parts`).
pub(crate) fn merge(parts: Vec<Vec<Arrival>>) -> Vec<Arrival> {
    let mut all: Vec<Arrival> = parts.into_iter().flatten().collect();
    all.sort_by_key(|a| a.at);
    all
}

/// A verdict seen during a run (from the tally's change across one call).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Event {
    /// `n` AQM drops of `class`.
    AqmDrop { at: Time, class: usize, n: u64 },
    /// `n` overflow drops of `class`.
    Overflow { at: Time, class: usize, n: u64 },
    /// `n` CE marks in `class`.
    Mark { at: Time, class: usize, n: u64 },
}

/// What a run produced.
#[derive(Debug, Default)]
pub(crate) struct Run {
    /// Departures: when the packet started serialisation, and the packet.
    pub departures: Vec<(Time, Dequeued)>,
    /// Drops and marks in time order.
    pub events: Vec<Event>,
    /// The final tally.
    pub tally: Tally,
    /// Packets left in the queue at the end.
    pub backlog: u64,
}

impl Run {
    /// The largest sojourn of a departure.
    pub(crate) fn max_sojourn(&self) -> Dur {
        self.departures
            .iter()
            .map(|(t, d)| t.saturating_since(d.enqueued))
            .max()
            .unwrap_or(Dur::ZERO)
    }

    /// Departures of `owner`.
    pub(crate) fn of(&self, owner: Owner) -> impl Iterator<Item = &(Time, Dequeued)> {
        self.departures
            .iter()
            .filter(move |(_, d)| d.pkt.owner == owner)
    }
}

fn record(events: &mut Vec<Event>, at: Time, before: &Tally, after: &Tally) {
    for (class, (b, a)) in before.class.iter().zip(after.class.iter()).enumerate() {
        if a.overflow_drops > b.overflow_drops {
            events.push(Event::Overflow {
                at,
                class,
                n: a.overflow_drops - b.overflow_drops,
            });
        }
        if a.aqm_drops > b.aqm_drops {
            events.push(Event::AqmDrop {
                at,
                class,
                n: a.aqm_drops - b.aqm_drops,
            });
        }
        if a.ce_marks > b.ce_marks {
            events.push(Event::Mark {
                at,
                class,
                n: a.ce_marks - b.ce_marks,
            });
        }
    }
}

/// Run `q` in front of a link of `rate_bps` fed with `arrivals` (in time order) until `until`
/// (no call at a later time).
pub(crate) fn drive<Q: Qdisc>(q: &mut Q, arrivals: &[Arrival], rate_bps: u64, until: Time) -> Run {
    let mut rng = rng();
    let mut run = Run::default();
    let mut next = 0;
    // When the transmitter is free and will ask for a packet; None while idle.
    let mut tx_free: Option<Time> = None;
    loop {
        let arrival = arrivals.get(next).filter(|a| a.at <= until);
        let dequeue_first = match (tx_free, arrival) {
            (Some(t), Some(a)) => t < a.at,
            (Some(_), None) => true,
            (None, _) => false,
        };
        if dequeue_first {
            let t = tx_free.expect("transmitter is free");
            if t > until {
                break;
            }
            let before = run.tally.clone();
            let out = q.dequeue(t, &mut rng, &mut run.tally);
            record(&mut run.events, t, &before, &run.tally);
            tx_free = out.map(|d| {
                run.departures.push((t, d));
                t + Dur::serialization(u64::from(d.pkt.wire_bytes), rate_bps)
            });
        } else if let Some(a) = arrival {
            let before = run.tally.clone();
            q.enqueue(a.at, a.pkt, &mut rng, &mut run.tally);
            record(&mut run.events, a.at, &before, &run.tally);
            tx_free.get_or_insert(a.at);
            next += 1;
        } else {
            break;
        }
    }
    run.backlog = u64::from(q.backlog_packets());
    run
}
