//! The `sch_fq` qdisc (Linux `net/sched/sch_fq.c`): per-flow queues, EDT release, deficit round
//! robin between flows.
//!
//! Contract: [`Fq::enqueue`] takes one segment of an skb, stamped with the skb's earliest
//! departure time (EDT; the hand-off time for unpaced packets), for flow `flow` (the engine uses
//! one flow per socket: a route). It refuses the whole skb when the qdisc holds `limit` skbs,
//! the flow holds `flow_limit` skbs, or the stamp lies beyond `now + horizon` (the `fq_enqueue`
//! checks, in that order; `horizon_drop` is on by default). [`Fq::dequeue`] hands out the next
//! skb, all its segments at once, as `fq_dequeue` does:
//! - flows wait in a `new` and an `old` list; the head flow of `new` (else `old`) is served;
//! - a flow whose credit is used up gets `quantum` more and moves to the tail of `old`;
//! - a flow whose head skb is not yet due (stamp, or the flow's `time_next_packet`, in the
//!   future) is throttled until then; throttled flows return to the tail of `old` in time order
//!   once due (`fq_check_throttled`);
//! - a flow found empty leaves its list (it moves to `old` first if it was in `new` and `old`
//!   is not empty, so new flows cannot starve old ones); served skbs cost their wire bytes of
//!   credit;
//! - a new flow starts with `initial_quantum` of credit; a flow returning after more than
//!   `flow_refill_delay` (40 ms) idle gets at least `quantum`.
//!
//! Not modelled: the priority band and the `internal` flow for control packets, `maxrate` /
//! per-flow rate limits (with EDT stamps `fq` does not pace TCP itself, so `time_next_packet`
//! only ever holds the stamp that throttled a flow), CE marking, the 10 µs `timer_slack` (the
//! release happens exactly when due) and garbage collection of idle flows.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use cclab_cc::{Dur, Time};

use crate::config::FqConfig;
use crate::packet::Packet;

/// Linux `fq_init`: `flow_refill_delay` = 40 ms.
pub const FLOW_REFILL_DELAY: Dur = Dur::from_millis(40);

/// Why fq refused an skb.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FqDrop {
    /// The qdisc holds `limit` skbs.
    Limit,
    /// The flow holds `flow_limit` skbs (`stat_flows_plimit`).
    FlowLimit,
    /// The stamp lies beyond `now + horizon` (`stat_horizon_drops`).
    Horizon,
}

/// What [`Fq::dequeue`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dequeued {
    /// One skb; its segments were appended to the output.
    Skb,
    /// Nothing due now; the earliest throttled flow is due at this time.
    Later(Time),
    /// Nothing queued.
    Empty,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum List {
    Detached,
    New,
    Old,
    Throttled,
}

#[derive(Clone, Copy, Debug)]
struct Seg {
    stamp: Time,
    pkt: Packet,
    /// Segments of the skb on its first segment, 0 on the others.
    skb_segs: u32,
}

#[derive(Debug)]
struct Flow {
    q: VecDeque<Seg>,
    skbs: u32,
    credit: i64,
    list: List,
    age: Time,
    time_next_packet: Time,
}

/// One fq instance (one per host).
#[derive(Debug)]
pub struct Fq {
    cfg: FqConfig,
    flows: Vec<Flow>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    /// (due time, insertion order, flow): Linux's rb-tree keeps equal times in insertion order.
    throttled: BinaryHeap<Reverse<(Time, u64, u32)>>,
    throttle_seq: u64,
    skbs: u32,
    /// The skb being enqueued segment by segment was refused, and why.
    dropping: Option<FqDrop>,
    /// skbs refused, by reason: limit, flow_limit, horizon.
    pub drops: [u64; 3],
}

impl Fq {
    /// An empty qdisc for flows `0..flows`.
    #[must_use]
    pub fn new(cfg: FqConfig, flows: usize) -> Self {
        Fq {
            cfg,
            flows: (0..flows)
                .map(|_| Flow {
                    q: VecDeque::new(),
                    skbs: 0,
                    credit: i64::from(cfg.initial_quantum),
                    list: List::Detached,
                    age: Time::ZERO,
                    time_next_packet: Time::ZERO,
                })
                .collect(),
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            throttled: BinaryHeap::new(),
            throttle_seq: 0,
            skbs: 0,
            dropping: None,
            drops: [0; 3],
        }
    }

    /// skbs queued.
    #[must_use]
    pub fn len(&self) -> u32 {
        self.skbs
    }

    /// True when nothing is queued.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.skbs == 0
    }

    /// All drops.
    #[must_use]
    pub fn total_drops(&self) -> u64 {
        self.drops.iter().sum()
    }

    /// TCP data segments queued.
    #[must_use]
    pub fn data_inside(&self) -> u64 {
        self.flows
            .iter()
            .flat_map(|f| f.q.iter())
            .filter(|s| s.pkt.is_data())
            .count() as u64
    }

    /// Offer one segment of an skb at `now`. `skb_segs` > 0 marks the skb's first segment (the
    /// drop decision is taken there and applies to the whole skb); `stamp` is the skb's EDT.
    ///
    /// # Errors
    /// The reason the skb is refused (reported on every segment of a refused skb; the caller
    /// counts a drop per segment).
    pub fn enqueue(
        &mut self,
        now: Time,
        flow: u32,
        stamp: Time,
        pkt: Packet,
        skb_segs: u32,
    ) -> Result<(), FqDrop> {
        let f = flow as usize;
        if skb_segs > 0 {
            let verdict = if self.skbs >= self.cfg.limit {
                Err(FqDrop::Limit)
            } else if stamp > now + self.cfg.horizon {
                Err(FqDrop::Horizon)
            } else if self.flows[f].skbs >= self.cfg.flow_limit {
                Err(FqDrop::FlowLimit)
            } else {
                Ok(())
            };
            self.dropping = verdict.err();
            if let Err(why) = verdict {
                self.drops[why as usize] += 1;
                return Err(why);
            }
            let fl = &mut self.flows[f];
            if fl.list == List::Detached {
                fl.list = List::New;
                self.new_flows.push_back(flow);
                if now > fl.age + FLOW_REFILL_DELAY {
                    fl.credit = fl.credit.max(i64::from(self.cfg.quantum));
                }
            }
            fl.skbs += 1;
            self.skbs += 1;
        } else if let Some(why) = self.dropping {
            return Err(why);
        }
        // TCP stamps are monotone per socket, so a flow's queue stays in stamp order.
        self.flows[f].q.push_back(Seg {
            stamp,
            pkt,
            skb_segs,
        });
        Ok(())
    }

    /// Move throttled flows that are due by `now` to the tail of `old` (`fq_check_throttled`).
    fn check_throttled(&mut self, now: Time) {
        while let Some(&Reverse((t, _, f))) = self.throttled.peek() {
            if t > now {
                break;
            }
            self.throttled.pop();
            self.flows[f as usize].list = List::Old;
            self.old_flows.push_back(f);
        }
    }

    /// Release the next skb due at `now` into `out` (`fq_dequeue`).
    pub fn dequeue(&mut self, now: Time, out: &mut Vec<Packet>) -> Dequeued {
        if self.skbs == 0 {
            return Dequeued::Empty;
        }
        self.check_throttled(now);
        loop {
            let (f, from_new) = match self.new_flows.front() {
                Some(&f) => (f, true),
                None => match self.old_flows.front() {
                    Some(&f) => (f, false),
                    None => {
                        return match self.throttled.peek() {
                            Some(&Reverse((t, _, _))) => Dequeued::Later(t),
                            None => Dequeued::Empty,
                        };
                    }
                },
            };
            let list = if from_new {
                &mut self.new_flows
            } else {
                &mut self.old_flows
            };
            let fl = &mut self.flows[f as usize];
            if fl.credit <= 0 {
                fl.credit += i64::from(self.cfg.quantum);
                list.pop_front();
                fl.list = List::Old;
                self.old_flows.push_back(f);
                continue;
            }
            let Some(head) = fl.q.front() else {
                list.pop_front();
                if from_new && !self.old_flows.is_empty() {
                    fl.list = List::Old;
                    self.old_flows.push_back(f);
                } else {
                    fl.list = List::Detached;
                    fl.age = now;
                }
                continue;
            };
            let due = head.stamp.max(fl.time_next_packet);
            if now < due {
                list.pop_front();
                fl.time_next_packet = due;
                fl.list = List::Throttled;
                self.throttle_seq += 1;
                self.throttled.push(Reverse((due, self.throttle_seq, f)));
                continue;
            }
            let n = head.skb_segs.max(1);
            let mut plen = 0i64;
            for _ in 0..n {
                let s =
                    fl.q.pop_front()
                        .expect("an skb's segments are queued together");
                plen += i64::from(s.pkt.wire_bytes);
                out.push(s.pkt);
            }
            fl.credit -= plen;
            fl.skbs -= 1;
            self.skbs -= 1;
            return Dequeued::Skb;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Payload;

    fn pkt(flow: u32, seq: u64, bytes: u32) -> Packet {
        Packet::test_segment(flow, seq, bytes, bytes)
    }

    fn drain(q: &mut Fq, now: Time) -> Vec<(u32, u64)> {
        let mut out = Vec::new();
        while q.dequeue(now, &mut out) == Dequeued::Skb {}
        out.iter()
            .map(|p| match p.payload {
                Payload::Data { seq, .. } => (p.route, seq),
                _ => unreachable!(),
            })
            .collect()
    }

    /// Two backlogged flows alternate by quantum (2 × 1514 bytes) once their initial quantum
    /// (10 × 1514) is spent: the first flow sends 10 packets, then the second 10, then 2 each.
    #[test]
    fn deficit_round_robin_by_quantum() {
        let mut q = Fq::new(FqConfig::default(), 2);
        for s in 0..20 {
            for f in 0..2 {
                q.enqueue(Time::ZERO, f, Time::ZERO, pkt(f, s, 1514), 1)
                    .unwrap();
            }
        }
        let order = drain(&mut q, Time::ZERO);
        let flows: Vec<u32> = order.iter().map(|&(f, _)| f).collect();
        assert_eq!(&flows[..10], &[0; 10]);
        assert_eq!(&flows[10..20], &[1; 10]);
        assert_eq!(&flows[20..24], &[0, 0, 1, 1]);
        assert_eq!(order.len(), 40);
    }

    /// A future stamp throttles the flow until then; others pass meanwhile.
    #[test]
    fn edt_stamps_hold_packets_until_due() {
        let mut q = Fq::new(FqConfig::default(), 2);
        let t1 = Time(1_000_000);
        q.enqueue(Time::ZERO, 0, t1, pkt(0, 0, 1514), 1).unwrap();
        q.enqueue(Time::ZERO, 1, Time::ZERO, pkt(1, 0, 100), 1)
            .unwrap();
        let mut out = Vec::new();
        assert_eq!(q.dequeue(Time::ZERO, &mut out), Dequeued::Skb);
        assert_eq!(out[0].route, 1);
        assert_eq!(q.dequeue(Time::ZERO, &mut out), Dequeued::Later(t1));
        assert_eq!(q.dequeue(Time(999_999), &mut out), Dequeued::Later(t1));
        assert_eq!(q.dequeue(t1, &mut out), Dequeued::Skb);
        assert_eq!(q.dequeue(t1, &mut out), Dequeued::Empty);
    }

    /// An skb leaves whole; drops apply to whole skbs; limits and horizon refuse.
    #[test]
    fn skbs_are_atomic_and_limits_refuse_them() {
        let cfg = FqConfig {
            flow_limit: 2,
            ..FqConfig::default()
        };
        let mut q = Fq::new(cfg, 1);
        for skb in 0..3u64 {
            for s in 0..3u64 {
                let r = q.enqueue(
                    Time::ZERO,
                    0,
                    Time::ZERO,
                    pkt(0, skb * 3 + s, 1514),
                    if s == 0 { 3 } else { 0 },
                );
                assert_eq!(r.is_ok(), skb < 2, "skb {skb} segment {s}");
            }
        }
        assert_eq!(q.drops, [0, 1, 0]);
        let mut out = Vec::new();
        assert_eq!(q.dequeue(Time::ZERO, &mut out), Dequeued::Skb);
        assert_eq!(out.len(), 3);
        let far = Time::ZERO + FqConfig::default().horizon + Dur(1);
        assert_eq!(
            q.enqueue(Time::ZERO, 0, far, pkt(0, 99, 100), 1),
            Err(FqDrop::Horizon)
        );
    }
}
