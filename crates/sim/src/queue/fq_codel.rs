//! FQ-CoDel (RFC 8290; Linux `net/sched/sch_fq_codel.c`).
//!
//! Contract: packets are hashed by their flow key ([`crate::net::FlowKey`]: addresses, ports and
//! protocol; the hash is keyed by the seed given to [`FqCodel::new`]) into `flows` buckets (at
//! most [`FqCodelParams::MAX_FLOWS`], Linux's bound), each a FIFO with its own CoDel state (the
//! control law of [`super::codel`]) and DRR deficit. A bucket's state is made when its first
//! packet arrives (a bucket no packet reaches costs 4 bytes, an index), so the number of
//! buckets costs no memory up front. Dequeue is Linux `fq_codel_dequeue`: new (sparse)
//! flows are served before old ones; a flow whose deficit is spent gets a quantum more and goes
//! to the tail of the old list; a flow found empty leaves the new list for the tail of the old
//! one if the old list is not empty (so a flow cannot stay "new" by emptying itself), and
//! leaves the old list altogether. CoDel's drops at dequeue are AQM drops; with `ecn` (the
//! Linux default) ECN-capable packets are CE-marked instead. When the packet count exceeds
//! `limit` or the bytes held exceed `memory_limit`, Linux `fq_codel_drop` drops from the head of
//! the bucket with the largest byte backlog until half of that backlog, or `drop_batch` packets,
//! are gone (overflow drops), and adds the number dropped to that flow's CoDel count. The
//! arriving packet has been queued first, so it is lost only if its own bucket was the fattest
//! and got emptied; `enqueue` returns false exactly then. One class, "all".
//!
//! As in Linux the CoDel of every flow compares the whole qdisc's backlog with the MTU and
//! shares one largest-packet statistic. Differences: the hash is SplitMix64 of the flow key rather
//! than Linux's flow-dissector hash of the 5-tuple (which is symmetric, so a flow's data and its
//! ACKs share a bucket in both; the simulator's flow key is the endpoint's, so they share one
//! here too); memory is counted in wire bytes
//! where Linux counts `skb->truesize`; there are no tc filters or `skb->priority` overrides.

use std::collections::VecDeque;

use cclab_cc::{Dur, Time};
use rand_chacha::ChaCha8Rng;

use super::codel::{CodelLaw, CodelQueue, CodelVars, codel_dequeue};
use super::{Dequeued, Qdisc, Tally, TimedFifo};
use crate::net::{FlowKey, NetPacket};
use crate::packet::Packet;

/// FQ-CoDel parameters; defaults are Linux `fq_codel_init`.
#[derive(Clone, Debug, PartialEq)]
pub struct FqCodelParams {
    /// Flow buckets (Linux `flows` = 1024), 1 to [`FqCodelParams::MAX_FLOWS`].
    pub flows: u32,
    /// Packet limit over all flows (Linux `limit` = 10240).
    pub limit: u32,
    /// Memory limit in bytes (Linux `memory_limit` = 32 MB); counted here as wire bytes.
    pub memory_limit: u64,
    /// DRR quantum in bytes (Linux `quantum` = MTU + 14 = 1514).
    pub quantum: u32,
    /// Packets dropped at once from the fattest flow on overflow (Linux `drop_batch_size` = 64).
    pub drop_batch: u32,
    /// CoDel target (5 ms).
    pub target: Dur,
    /// CoDel interval (100 ms).
    pub interval: Dur,
    /// Mark ECN-capable packets instead of dropping (Linux default: on).
    pub ecn: bool,
    /// Mark every ECN-capable packet whose sojourn exceeds this (Linux `ce_threshold`, off).
    pub ce_threshold: Option<Dur>,
}

impl FqCodelParams {
    /// Most flow buckets: Linux `fq_codel_change` refuses `flows_cnt > 65536` (EINVAL,
    /// `net/sched/sch_fq_codel.c`).
    pub const MAX_FLOWS: u32 = 65_536;
}

impl Default for FqCodelParams {
    fn default() -> Self {
        FqCodelParams {
            flows: 1024,
            limit: 10240,
            memory_limit: 32 << 20,
            quantum: 1514,
            drop_batch: 64,
            target: Dur::from_millis(5),
            interval: Dur::from_millis(100),
            ecn: true,
            ce_threshold: None,
        }
    }
}

/// One bucket (Linux `struct fq_codel_flow` with its `backlogs[]` entry).
#[derive(Debug)]
struct Flow<P> {
    /// Its index among the `flows` buckets (the hash's value).
    bucket: u32,
    /// Its packets; the byte count is Linux `q->backlogs[idx]`.
    fifo: TimedFifo<P>,
    /// DRR deficit, bytes.
    deficit: i64,
    /// On the new or the old list (Linux `!list_empty(&flow->flowchain)`).
    listed: bool,
    cvars: CodelVars,
}

impl<P> Flow<P> {
    fn new(bucket: u32) -> Self {
        Flow {
            bucket,
            fifo: TimedFifo::default(),
            deficit: 0,
            listed: false,
            cvars: CodelVars::default(),
        }
    }
}

/// Which scheduler list a flow was taken from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum List {
    New,
    Old,
}

/// The qdisc-wide counters a flow's CoDel updates when it pops.
#[derive(Debug, Default)]
struct Totals {
    packets: u32,
    bytes: u64,
}

/// One flow's FIFO as its CoDel sees it: pops update the flow's and the qdisc's backlogs, and
/// the backlog compared with the MTU is the whole qdisc's (Linux `&sch->qstats.backlog`).
struct FlowView<'a, P> {
    fifo: &'a mut TimedFifo<P>,
    totals: &'a mut Totals,
}

impl<P: NetPacket> CodelQueue for FlowView<'_, P> {
    type Pkt = P;
    #[inline]
    fn backlog(&self) -> u64 {
        self.totals.bytes
    }
    #[inline]
    fn head(&mut self) -> Option<&mut (P, Time)> {
        self.fifo.q.front_mut()
    }
    #[inline]
    fn drop_head(&mut self) {
        if let Some((pkt, _)) = self.fifo.pop() {
            self.totals.bytes -= u64::from(pkt.wire_bytes());
            self.totals.packets -= 1;
        }
    }
}

/// SplitMix64 finaliser (Steele, Lea, Flood 2014).
fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// An FQ-CoDel queue.
#[derive(Debug)]
pub struct FqCodel<P = Packet> {
    p: FqCodelParams,
    law: CodelLaw,
    seed: u64,
    /// Number of buckets (`flows`, at least 1).
    buckets: u32,
    /// Per bucket: its index in `flows`, `NO_SLOT` until its first packet.
    slot: Vec<u32>,
    /// The buckets that have had a packet, in the order of their first; the scheduler lists
    /// and `last` hold indexes into this.
    flows: Vec<Flow<P>>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    totals: Totals,
    /// Largest packet seen, shared by all flows (Linux `q->cstats.maxpacket`).
    maxpacket: u32,
    /// The owner code and flow (index in `flows`) of the last arrival (arrivals come in
    /// bursts per owner); `u64::MAX` is no owner's code.
    last: (u64, usize),
}

/// `FqCodel::slot` of a bucket without state.
const NO_SLOT: u32 = u32::MAX;

impl<P: NetPacket> FqCodel<P> {
    /// An empty queue whose flow hash is keyed by `seed`.
    #[must_use]
    pub fn new(p: &FqCodelParams, seed: u64) -> Self {
        let n = p.flows.clamp(1, FqCodelParams::MAX_FLOWS);
        FqCodel {
            p: p.clone(),
            law: CodelLaw {
                target: p.target,
                interval: p.interval,
                ecn: p.ecn,
                ce_threshold: p.ce_threshold,
                standing_bytes: None,
            },
            seed,
            buckets: n,
            slot: vec![NO_SLOT; n as usize],
            flows: Vec::new(),
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            totals: Totals::default(),
            maxpacket: 0,
            last: (u64::MAX, 0),
        }
    }

    /// The bucket of `owner`: a keyed hash scaled to `flows` (Linux `fq_codel_hash`:
    /// `reciprocal_scale(skb_get_hash(skb), flows_cnt)`).
    fn bucket(&self, key: FlowKey) -> usize {
        let h = splitmix64(self.seed ^ splitmix64(key.0)) >> 32;
        ((h * u64::from(self.buckets)) >> 32) as usize
    }

    /// The flow (index in `flows`) of `key`'s bucket, made on its first packet; the last
    /// owner's is remembered.
    #[inline]
    fn flow_of(&mut self, key: FlowKey) -> usize {
        if key.0 != self.last.0 {
            let b = self.bucket(key);
            if self.slot[b] == NO_SLOT {
                #[expect(
                    clippy::cast_possible_truncation,
                    reason = "at most MAX_FLOWS buckets, so indexes fit in u32"
                )]
                {
                    self.slot[b] = self.flows.len() as u32;
                    self.flows.push(Flow::new(b as u32));
                }
            }
            self.last = (key.0, self.slot[b] as usize);
        }
        self.last.1
    }

    /// Linux `fq_codel_drop`: drop from the head of the fattest bucket (the first in bucket
    /// order with the largest byte backlog; buckets without state hold nothing) until half its
    /// backlog or `max_packets` are gone; tell its CoDel. Returns its flow.
    fn drop_fattest(&mut self, max_packets: u32, tally: &mut Tally) -> usize {
        let mut idx = 0;
        let mut max = 0;
        for (i, f) in self.flows.iter().enumerate() {
            if f.fifo.bytes > max
                || (f.fifo.bytes == max && max > 0 && f.bucket < self.flows[idx].bucket)
            {
                max = f.fifo.bytes;
                idx = i;
            }
        }
        let threshold = max >> 1;
        let flow = &mut self.flows[idx];
        let mut len = 0;
        let mut i = 0u32;
        // Linux's do-while: at least one packet, then until half the backlog or the batch.
        while let Some((pkt, _)) = flow.fifo.pop() {
            let b = u64::from(pkt.wire_bytes());
            len += b;
            self.totals.bytes -= b;
            self.totals.packets -= 1;
            tally.drop(0, &pkt, true);
            i += 1;
            if i >= max_packets || len >= threshold {
                break;
            }
        }
        // Linux: "Tell codel to increase its signal strength also".
        flow.cvars.count = flow.cvars.count.wrapping_add(i);
        idx
    }

    /// Over a limit after queueing a packet in flow `idx`: drop from the fattest bucket.
    /// The arriving packet is dropped only if the batch empties its own bucket (it is that
    /// bucket's tail). Returns whether it was accepted.
    #[cold]
    #[inline(never)]
    fn overflow(&mut self, idx: usize, tally: &mut Tally) -> bool {
        let fat = self.drop_fattest(self.p.drop_batch.max(1), tally);
        if fat == idx && self.flows[idx].fifo.q.is_empty() {
            // `drop_fattest` counted it as an overflow drop, and it was never accepted.
            false
        } else {
            tally.enqueue(0);
            true
        }
    }
}

impl<P: NetPacket> Qdisc<P> for FqCodel<P> {
    #[inline]
    fn enqueue(&mut self, now: Time, pkt: P, _rng: &mut ChaCha8Rng, tally: &mut Tally) -> bool {
        let idx = self.flow_of(pkt.flow_key());
        let flow = &mut self.flows[idx];
        let bytes = u64::from(pkt.wire_bytes());
        flow.fifo.push(pkt, now);
        self.totals.bytes += bytes;
        self.totals.packets += 1;
        if !flow.listed {
            flow.listed = true;
            flow.deficit = i64::from(self.p.quantum);
            #[expect(
                clippy::cast_possible_truncation,
                reason = "idx indexes the flow table, whose size is a u32 parameter"
            )]
            self.new_flows.push_back(idx as u32);
        }
        let memory_limited = self.totals.bytes > self.p.memory_limit;
        if self.totals.packets <= self.p.limit && !memory_limited {
            tally.enqueue(0);
            return true;
        }
        self.overflow(idx, tally)
    }

    #[inline]
    fn dequeue(
        &mut self,
        now: Time,
        _rng: &mut ChaCha8Rng,
        tally: &mut Tally,
    ) -> Option<Dequeued<P>> {
        let idx = loop {
            let (list, idx) = if let Some(&i) = self.new_flows.front() {
                (List::New, i)
            } else if let Some(&i) = self.old_flows.front() {
                (List::Old, i)
            } else {
                return None;
            };
            let head = match list {
                List::New => &mut self.new_flows,
                List::Old => &mut self.old_flows,
            };
            let flow = &mut self.flows[idx as usize];
            if flow.deficit <= 0 {
                flow.deficit += i64::from(self.p.quantum);
                head.pop_front();
                self.old_flows.push_back(idx);
                continue;
            }
            let mut view = FlowView {
                fifo: &mut flow.fifo,
                totals: &mut self.totals,
            };
            if codel_dequeue(
                &mut view,
                now,
                &self.law,
                &mut flow.cvars,
                &mut self.maxpacket,
                tally,
            ) {
                break idx;
            }
            // Empty: force a pass through the old list so that a flow cannot stay new by
            // emptying itself (Linux: "prevent starvation").
            head.pop_front();
            if list == List::New && !self.old_flows.is_empty() {
                self.old_flows.push_back(idx);
            } else {
                flow.listed = false;
            }
        };
        // The control law left the packet to send at the head of the flow: pop it straight
        // into the result.
        let flow = &mut self.flows[idx as usize];
        let (pkt, enqueued) = flow.fifo.pop()?;
        flow.deficit -= i64::from(pkt.wire_bytes());
        self.totals.bytes -= u64::from(pkt.wire_bytes());
        self.totals.packets -= 1;
        Some(Dequeued {
            pkt,
            enqueued,
            class: 0,
        })
    }

    fn backlog_packets(&self) -> u32 {
        self.totals.packets
    }

    fn backlog_bytes(&self) -> u64 {
        self.totals.bytes
    }

    #[expect(
        clippy::cast_precision_loss,
        reason = "list lengths are bounded by the flow table, far below 2^53"
    )]
    fn state(&self, sink: &mut dyn FnMut(&'static str, f64)) {
        // Linux `tc_fq_codel_qd_stats` new_flows_len / old_flows_len.
        sink("new_flows", self.new_flows.len() as f64);
        sink("old_flows", self.old_flows.len() as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Ecn, Owner};

    impl FqCodel {
        /// The bucket of a simulator endpoint's packets.
        fn bucket_of(&self, owner: Owner) -> usize {
            self.bucket(FlowKey::of_owner(owner))
        }

        /// The state of a simulator endpoint's bucket (which its first packet made).
        fn flow_at(&self, owner: Owner) -> &Flow<Packet> {
            &self.flows[self.slot[self.bucket_of(owner)] as usize]
        }
    }
    use crate::queue::testkit::{self, data, data_seq, flow, probe};

    const MS: u64 = 1_000_000;
    const SEED: u64 = 7;

    fn fq(p: &FqCodelParams) -> FqCodel {
        FqCodel::new(p, SEED)
    }

    #[test]
    fn a_light_flow_beside_a_heavy_one_sees_almost_no_queue() {
        let mut q = fq(&FqCodelParams::default());
        assert_ne!(
            q.bucket_of(flow(1)),
            q.bucket_of(flow(2)),
            "the test needs two buckets"
        );
        // 10 Mbit/s: 1.2 ms per 1500-byte packet. Flow 1 arrives at 1.5× the link rate, flow 2
        // at a tenth of that (0.15×), both Not-ECT, for 3 s.
        let heavy = testkit::cbr(flow(1), Time::ZERO, Dur(800_000), 1500, Ecn::NotEct, 3750);
        let light = testkit::cbr(flow(2), Time(100_000), Dur(8 * MS), 1500, Ecn::NotEct, 375);
        let arrivals = testkit::merge(vec![heavy, light]);
        let run = testkit::drive(&mut q, &arrivals, 10_000_000, Time(3_100 * MS));
        // The light flow loses nothing and gets all its arrival rate.
        assert_eq!(run.of(flow(2)).count(), 375);
        // Its packets wait at most for the packet in service and the heavy flow's turn of at
        // most two packets (a deficit in (0, 1514] sends up to two 1500-byte packets): three
        // packet times.
        let light_max = run
            .of(flow(2))
            .map(|(t, d)| t.saturating_since(d.enqueued))
            .max()
            .unwrap();
        assert!(
            light_max <= Dur(3 * 1_200_000),
            "light max sojourn {light_max}"
        );
        // The heavy flow holds the standing queue and takes CoDel's drops.
        let heavy: Vec<Dur> = run
            .of(flow(1))
            .map(|(t, d)| t.saturating_since(d.enqueued))
            .collect();
        let mean = heavy.iter().map(|d| d.0).sum::<u64>() / heavy.len() as u64;
        assert!(
            Dur(mean) > Dur::from_millis(5),
            "heavy mean sojourn {}",
            Dur(mean)
        );
        assert!(run.tally.class[0].aqm_drops > 0);
        // Together they fill the link: 3 s at 833 packets/s.
        assert!(run.departures.len() >= 2_490, "{}", run.departures.len());
    }

    #[test]
    fn two_saturating_flows_share_bytes_within_one_quantum() {
        let p = FqCodelParams::default();
        let mut q = fq(&p);
        assert_ne!(q.bucket_of(flow(1)), q.bucket_of(flow(2)));
        // Both backlogged from the start, with different packet sizes, ECT so that CoDel marks.
        let a = testkit::cbr(flow(1), Time::ZERO, Dur(0), 1500, Ecn::Ect0, 400);
        let b = testkit::cbr(flow(2), Time::ZERO, Dur(0), 300, Ecn::Ect0, 2000);
        let arrivals = testkit::merge(vec![a, b]);
        // 20 Mbit/s for 400 ms: 1 MB of the 1.2 MB leaves; CoDel starts marking after 105 ms.
        let run = testkit::drive(&mut q, &arrivals, 20_000_000, Time(400 * MS));
        // DRR: at every point the byte counts differ by at most a quantum plus a packet.
        let bound = i64::from(p.quantum) + 1500;
        let (mut ba, mut bb) = (0i64, 0i64);
        for (_, d) in &run.departures {
            match d.pkt.owner {
                o if o == flow(1) => ba += i64::from(d.pkt.wire_bytes()),
                _ => bb += i64::from(d.pkt.wire_bytes()),
            }
            assert!((ba - bb).abs() <= bound, "{ba} vs {bb}");
        }
        assert!(ba > 200_000 && bb > 200_000, "{ba} {bb}");
        // ECN is on by default: CoDel marked, never dropped.
        assert_eq!(run.tally.class[0].aqm_drops, 0);
        assert!(run.tally.class[0].ce_marks > 0);
    }

    #[test]
    fn a_new_sparse_flow_is_served_before_a_backlogged_one() {
        let mut q = fq(&FqCodelParams::default());
        assert_ne!(q.bucket_of(flow(1)), q.bucket_of(flow(2)));
        let mut rng = testkit::rng();
        let mut tally = Tally::default();
        for i in 0..10 {
            q.enqueue(
                Time::ZERO,
                data_seq(flow(1), i, 1500, Ecn::NotEct),
                &mut rng,
                &mut tally,
            );
        }
        // Flow 1 uses its first quantum (two packets: 1514 − 1500 = 14 > 0) and moves to the
        // old list with a fresh quantum for the third.
        for _ in 0..3 {
            assert_eq!(
                q.dequeue(Time(MS), &mut rng, &mut tally).unwrap().pkt.owner,
                flow(1)
            );
        }
        assert_eq!((q.new_flows.len(), q.old_flows.len()), (0, 1));
        q.enqueue(
            Time(2 * MS),
            data(flow(2), 100, Ecn::NotEct),
            &mut rng,
            &mut tally,
        );
        assert_eq!(
            q.dequeue(Time(2 * MS), &mut rng, &mut tally)
                .unwrap()
                .pkt
                .owner,
            flow(2)
        );
        assert_eq!((q.new_flows.len(), q.old_flows.len()), (1, 1));
        // Flow 2, found empty at the head of the new list, goes behind flow 1 on the old list
        // (it must not keep new-flow priority); flow 1 gets a quantum and goes behind it; flow 2
        // is found empty at the head of the old list and leaves; flow 1 sends.
        assert_eq!(
            q.dequeue(Time(3 * MS), &mut rng, &mut tally)
                .unwrap()
                .pkt
                .owner,
            flow(1)
        );
        assert_eq!((q.new_flows.len(), q.old_flows.len()), (0, 1));
        assert!(!q.flow_at(flow(2)).listed);
    }

    #[test]
    fn overflow_drops_half_the_fattest_flow_from_its_head() {
        let p = FqCodelParams {
            limit: 20,
            ..FqCodelParams::default()
        };
        let mut q = fq(&p);
        assert_ne!(q.bucket_of(flow(1)), q.bucket_of(flow(2)));
        let (a, b) = (flow(1), flow(2));
        let mut rng = testkit::rng();
        let mut tally = Tally::default();
        for i in 0..18 {
            assert!(q.enqueue(
                Time::ZERO,
                data_seq(flow(1), i, 1500, Ecn::NotEct),
                &mut rng,
                &mut tally
            ));
        }
        for i in 0..2 {
            assert!(q.enqueue(
                Time::ZERO,
                data_seq(flow(2), i, 1500, Ecn::NotEct),
                &mut rng,
                &mut tally
            ));
        }
        // The 21st packet (flow 2) overflows: flow 1 holds 27 000 bytes, so 9 packets
        // (13 500 bytes, half) go from its head; flow 2 and the arrival are untouched.
        assert!(q.enqueue(
            Time::ZERO,
            data_seq(flow(2), 2, 1500, Ecn::NotEct),
            &mut rng,
            &mut tally
        ));
        assert_eq!(tally.class[0].overflow_drops, 9);
        assert_eq!(tally.class[0].enqueued, 21);
        assert_eq!(q.flow_at(a).fifo.len(), 9);
        assert_eq!(q.flow_at(b).fifo.len(), 3);
        let seqs: Vec<u64> = q
            .flow_at(a)
            .fifo
            .q
            .iter()
            .map(|(p, _)| match p.payload {
                crate::packet::Payload::Data { seq, .. } => seq,
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(seqs, (9..18).collect::<Vec<_>>(), "dropped from the head");
        assert_eq!(q.flow_at(a).cvars.count, 9, "CoDel told of the drops");
        assert_eq!(q.backlog_packets(), 12);
        assert_eq!(q.backlog_bytes(), 18_000);
    }

    #[test]
    fn overflow_batch_is_capped_by_drop_batch() {
        let p = FqCodelParams {
            limit: 100,
            drop_batch: 4,
            ..FqCodelParams::default()
        };
        let mut q = fq(&p);
        let mut rng = testkit::rng();
        let mut tally = Tally::default();
        for i in 0..101 {
            q.enqueue(
                Time::ZERO,
                data_seq(flow(1), i, 1500, Ecn::NotEct),
                &mut rng,
                &mut tally,
            );
        }
        assert_eq!(tally.class[0].overflow_drops, 4);
        assert_eq!(q.backlog_packets(), 97);
    }

    #[test]
    fn an_arrival_that_is_its_fat_buckets_only_packet_is_dropped() {
        let p = FqCodelParams {
            limit: 2,
            ..FqCodelParams::default()
        };
        let mut q = fq(&p);
        let buckets = [
            q.bucket_of(flow(1)),
            q.bucket_of(flow(2)),
            q.bucket_of(flow(3)),
        ];
        assert!(buckets[0] != buckets[1] && buckets[1] != buckets[2] && buckets[0] != buckets[2]);
        let mut rng = testkit::rng();
        let mut tally = Tally::default();
        assert!(q.enqueue(
            Time::ZERO,
            data(flow(1), 100, Ecn::NotEct),
            &mut rng,
            &mut tally
        ));
        assert!(q.enqueue(
            Time::ZERO,
            data(flow(2), 100, Ecn::NotEct),
            &mut rng,
            &mut tally
        ));
        // Flow 3's 1500-byte packet makes its bucket the fattest; half of it is 750 bytes, so
        // the batch drops exactly it.
        assert!(!q.enqueue(
            Time::ZERO,
            data(flow(3), 1500, Ecn::NotEct),
            &mut rng,
            &mut tally
        ));
        assert_eq!(tally.class[0].overflow_drops, 1);
        assert_eq!(tally.class[0].enqueued, 2);
        assert_eq!(q.backlog_packets(), 2);
        assert_eq!(q.backlog_bytes(), 200);
        // Its bucket stays on the new list until a dequeue finds it empty (as in Linux).
        let out: Vec<Owner> = std::iter::from_fn(|| q.dequeue(Time(MS), &mut rng, &mut tally))
            .map(|d| d.pkt.owner)
            .collect();
        assert_eq!(out, vec![flow(1), flow(2)]);
        assert_eq!((q.new_flows.len(), q.old_flows.len()), (0, 0));
    }

    #[test]
    fn the_memory_limit_also_triggers_the_fat_flow_drop() {
        let p = FqCodelParams {
            memory_limit: 3000,
            ..FqCodelParams::default()
        };
        let mut q = fq(&p);
        let mut rng = testkit::rng();
        let mut tally = Tally::default();
        for i in 0..3 {
            q.enqueue(
                Time::ZERO,
                data_seq(flow(1), i, 1500, Ecn::NotEct),
                &mut rng,
                &mut tally,
            );
        }
        // 4500 > 3000 bytes: the fat flow (the only one) loses at least half its backlog
        // (2250 bytes): two packets.
        assert_eq!(tally.class[0].overflow_drops, 2);
        assert_eq!(q.backlog_bytes(), 1500);
    }

    #[test]
    fn the_hash_is_keyed_deterministic_and_spreads_owners() {
        let p = FqCodelParams::default();
        let (a, b, c) = (
            FqCodel::new(&p, 1),
            FqCodel::new(&p, 1),
            FqCodel::new(&p, 2),
        );
        let owners: Vec<Owner> = (0..5120).flat_map(|i| [flow(i), probe(i)]).collect();
        let ba: Vec<usize> = owners.iter().map(|&o| a.bucket_of(o)).collect();
        let bb: Vec<usize> = owners.iter().map(|&o| b.bucket_of(o)).collect();
        let bc: Vec<usize> = owners.iter().map(|&o| c.bucket_of(o)).collect();
        assert_eq!(ba, bb, "same seed, same buckets");
        let moved = ba.iter().zip(&bc).filter(|(x, y)| x != y).count();
        // Another seed re-draws every bucket: about 1023/1024 of them move.
        assert!(moved > 10_000, "{moved}");
        // Flow i and probe i are different owners.
        assert!(ba.chunks(2).filter(|pair| pair[0] != pair[1]).count() > 5_000);
        // 10 240 owners in 1024 buckets: 10 per bucket on average. Poisson(10) tails: a bucket
        // with ≥ 30 has probability 2e-7, an empty one 4.5e-5 (0.05 expected over 1024).
        let mut load = vec![0u32; 1024];
        for &i in &ba {
            load[i] += 1;
        }
        assert!(load.iter().all(|&n| n < 30), "max {:?}", load.iter().max());
        assert!(load.iter().filter(|&&n| n > 0).count() >= 1_020);
    }

    /// Linux's most buckets cost no state up front: a bucket's state is made by its first
    /// packet (before, 65 536 buckets were 65 536 FIFOs and 4 294 967 295 aborted the run
    /// allocating 446 GB).
    #[test]
    fn bucket_state_is_made_by_the_first_packet() {
        let p = FqCodelParams {
            flows: FqCodelParams::MAX_FLOWS,
            ..FqCodelParams::default()
        };
        let mut q = fq(&p);
        assert!(q.flows.is_empty());
        assert_eq!(q.slot.len(), 65_536);
        let mut rng = testkit::rng();
        let mut tally = Tally::default();
        for i in 0..3 {
            for o in [flow(1), flow(2), probe(1)] {
                q.enqueue(
                    Time::ZERO,
                    data_seq(o, i, 1500, Ecn::NotEct),
                    &mut rng,
                    &mut tally,
                );
            }
        }
        assert_eq!(q.flows.len(), 3);
        let out = std::iter::from_fn(|| q.dequeue(Time(MS), &mut rng, &mut tally)).count();
        assert_eq!(out, 9);
        // Beyond Linux's bound the queue has Linux's most buckets (validation refuses more).
        let q = fq(&FqCodelParams {
            flows: u32::MAX,
            ..FqCodelParams::default()
        });
        assert_eq!(q.slot.len(), 65_536);
    }

    /// On overflow, of two buckets with the same backlog the one with the lower index loses
    /// packets, whichever was made first (Linux scans the bucket table in order).
    #[test]
    fn overflow_ties_go_to_the_lower_bucket() {
        let p = FqCodelParams {
            limit: 4,
            ..FqCodelParams::default()
        };
        let mut q = fq(&p);
        let (lo, hi) = if q.bucket_of(flow(1)) < q.bucket_of(flow(2)) {
            (flow(1), flow(2))
        } else {
            (flow(2), flow(1))
        };
        let mut rng = testkit::rng();
        let mut tally = Tally::default();
        for o in [hi, lo] {
            for i in 0..2 {
                q.enqueue(
                    Time::ZERO,
                    data_seq(o, i, 1500, Ecn::NotEct),
                    &mut rng,
                    &mut tally,
                );
            }
        }
        assert!(q.enqueue(
            Time::ZERO,
            data(flow(3), 100, Ecn::NotEct),
            &mut rng,
            &mut tally
        ));
        assert_eq!(tally.class[0].overflow_drops, 1);
        assert_eq!(q.flow_at(lo).fifo.len(), 1);
        assert_eq!(q.flow_at(hi).fifo.len(), 2);
    }

    #[test]
    fn owners_that_share_a_bucket_share_one_fifo() {
        // Four buckets, five flows: by pigeonhole two share a bucket; they come out in arrival
        // order as one queue, while other buckets are scheduled separately.
        let p = FqCodelParams {
            flows: 4,
            ..FqCodelParams::default()
        };
        let mut q = fq(&p);
        let (x, y) = (0..5u32)
            .flat_map(|i| (i + 1..5).map(move |j| (i, j)))
            .find(|&(i, j)| q.bucket_of(flow(i)) == q.bucket_of(flow(j)))
            .expect("pigeonhole");
        let mut rng = testkit::rng();
        let mut tally = Tally::default();
        for i in 0..4 {
            q.enqueue(
                Time::ZERO,
                data_seq(flow(x), i, 1500, Ecn::NotEct),
                &mut rng,
                &mut tally,
            );
            q.enqueue(
                Time::ZERO,
                data_seq(flow(y), i, 1500, Ecn::NotEct),
                &mut rng,
                &mut tally,
            );
        }
        let out: Vec<Owner> = std::iter::from_fn(|| q.dequeue(Time(MS), &mut rng, &mut tally))
            .map(|d| d.pkt.owner)
            .collect();
        let want: Vec<Owner> = (0..4).flat_map(|_| [flow(x), flow(y)]).collect();
        assert_eq!(out, want);
    }

    #[test]
    fn not_ect_packets_are_dropped_where_ect_ones_are_marked() {
        let p = FqCodelParams::default();
        let run = |ecn| {
            let mut q = fq(&p);
            let arrivals = testkit::cbr(flow(1), Time::ZERO, Dur(MS / 2), 1500, ecn, 1000);
            testkit::drive(&mut q, &arrivals, 12_000_000, Time(500 * MS))
        };
        let (drop, mark) = (run(Ecn::NotEct), run(Ecn::Ect0));
        assert!(drop.tally.class[0].aqm_drops > 0);
        assert_eq!(drop.tally.class[0].ce_marks, 0);
        assert_eq!(mark.tally.class[0].aqm_drops, 0);
        assert!(mark.tally.class[0].ce_marks > 0);
        // The first signal comes at the same dequeue: one interval after the sojourn passed the
        // target (see the CoDel tests), 111 ms.
        let first = |run: &testkit::Run| match run.events[0] {
            testkit::Event::AqmDrop { at, .. } | testkit::Event::Mark { at, .. } => at,
            testkit::Event::Overflow { .. } => unreachable!(),
        };
        assert_eq!(first(&drop), Time(111 * MS));
        assert_eq!(first(&mark), Time(111 * MS));
    }
}
