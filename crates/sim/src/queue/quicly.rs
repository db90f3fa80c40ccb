//! The bottleneck queue of quicly's simulator (h2o/quicly `t/simulator.c`, `net_bottleneck`):
//! a byte-limited FIFO with one of two admission rules, optionally run by CoDel.
//!
//! Contract: the queue holds the packets waiting for the transmitter (the packet being
//! serialised has left it, as in `net_bottleneck_run`, which dequeues a packet when its
//! emission starts). Its capacity is a byte count (`net_bottleneck_init`: rate × queue depth in
//! seconds, truncated to whole bytes). An arrival is admitted by [`Admission`]:
//! - [`Admission::Arrival`] (the 2026-04 simulator, `net_bottleneck_forward`): dropped when the
//!   bytes waiting plus its own size exceed the capacity;
//! - [`Admission::Largest`] (the later simulator): dropped when the bytes waiting plus the
//!   largest datagram size configured for the run exceed the capacity, whatever its own size,
//!   so small packets are not favoured over full ones (size-neutral). A packet larger than the
//!   configured size (which a consistent configuration never sends) is admitted by its own
//!   size, so the capacity is never exceeded.
//!
//! Without CoDel every admitted packet is sent in order. With CoDel (the later simulator's
//! `-A` option; RFC 8289's control law, run by the same code as [`super::Codel`]) the head's
//! sojourn decides at dequeue: target 5 ms and interval 100 ms by default, and the sojourn
//! counts as standing only while more than `standing_bytes` (1514 in quicly) remain queued
//! behind the head (RFC 8289 §5.2's "less than one MTU queued" guard with quicly's constant;
//! Linux uses its device MTU). With `ecn` on, ECN-capable packets are CE-marked instead of
//! dropped (the later simulator marks ECT packets); the ABBA evaluation ran with ECN off. The
//! capacity applies under CoDel too (a decision: the later simulator keeps the bottleneck's
//! byte capacity as its hard limit; the sources read here do not show otherwise). Overflow
//! drops and CoDel's drops are counted in one class, "all".

use cclab_cc::{Dur, Time};
use rand_chacha::ChaCha8Rng;

use super::codel::{CodelLaw, CodelVars, codel_dequeue};
use super::{Dequeued, Qdisc, Tally, TimedFifo};
use crate::net::NetPacket;
use crate::packet::Packet;

/// quicly's CoDel: the backlog behind the head must exceed this for the sojourn to count as
/// standing (bytes; 1514 = an Ethernet frame of a 1500-byte MTU).
pub const QUICLY_STANDING_BYTES: u64 = 1514;

/// The admission rule of the tail drop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// Drop when waiting bytes + the arrival's size > capacity (quicly 2026-04).
    Arrival,
    /// Drop when waiting bytes + this size (the largest configured datagram, wire bytes) >
    /// capacity (the later quicly simulator).
    Largest(u32),
}

/// CoDel's parameters in quicly's simulator.
#[derive(Clone, Debug, PartialEq)]
pub struct QuiclyCodel {
    /// Target sojourn (5 ms).
    pub target: Dur,
    /// Interval (100 ms).
    pub interval: Dur,
    /// The sojourn is standing only with more than this many bytes behind the head (1514).
    pub standing_bytes: u64,
    /// CE-mark ECN-capable packets instead of dropping them.
    pub ecn: bool,
}

impl Default for QuiclyCodel {
    fn default() -> Self {
        QuiclyCodel {
            target: Dur::from_millis(5),
            interval: Dur::from_millis(100),
            standing_bytes: QUICLY_STANDING_BYTES,
            ecn: false,
        }
    }
}

/// The queue's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct QuiclyQueueParams {
    /// Capacity in bytes (rate × buffer seconds).
    pub capacity_bytes: u64,
    /// How an arrival is admitted.
    pub admission: Admission,
    /// CoDel, or none (tail drop only).
    pub codel: Option<QuiclyCodel>,
}

/// The queue.
#[derive(Debug)]
pub struct QuiclyQueue<P = Packet> {
    p: QuiclyQueueParams,
    law: Option<CodelLaw>,
    fifo: TimedFifo<P>,
    vars: CodelVars,
    maxpacket: u32,
}

impl<P: NetPacket> QuiclyQueue<P> {
    /// An empty queue.
    #[must_use]
    pub fn new(p: &QuiclyQueueParams) -> Self {
        QuiclyQueue {
            p: p.clone(),
            law: p.codel.as_ref().map(|c| CodelLaw {
                target: c.target,
                interval: c.interval,
                ecn: c.ecn,
                ce_threshold: None,
                standing_bytes: Some(c.standing_bytes),
            }),
            fifo: TimedFifo::default(),
            vars: CodelVars::default(),
            maxpacket: 0,
        }
    }
}

impl<P: NetPacket> Qdisc<P> for QuiclyQueue<P> {
    fn enqueue(&mut self, now: Time, pkt: P, _rng: &mut ChaCha8Rng, tally: &mut Tally) -> bool {
        let size = pkt.wire_bytes();
        let counted = match self.p.admission {
            Admission::Arrival => size,
            Admission::Largest(m) => m.max(size),
        };
        if self.fifo.bytes + u64::from(counted) > self.p.capacity_bytes {
            tally.drop(0, &pkt, true);
            return false;
        }
        self.fifo.push(pkt, now);
        tally.enqueue(0);
        true
    }

    fn dequeue(
        &mut self,
        now: Time,
        _rng: &mut ChaCha8Rng,
        tally: &mut Tally,
    ) -> Option<Dequeued<P>> {
        if let Some(law) = &self.law
            && !codel_dequeue(
                &mut self.fifo,
                now,
                law,
                &mut self.vars,
                &mut self.maxpacket,
                tally,
            )
        {
            return None;
        }
        self.fifo.pop().map(|(pkt, enqueued)| Dequeued {
            pkt,
            enqueued,
            class: 0,
        })
    }

    fn backlog_packets(&self) -> u32 {
        self.fifo.len()
    }

    fn backlog_bytes(&self) -> u64 {
        self.fifo.bytes
    }

    fn state(&self, sink: &mut dyn FnMut(&'static str, f64)) {
        if self.law.is_some() {
            sink("count", f64::from(self.vars.count));
            sink("dropping", if self.vars.dropping { 1.0 } else { 0.0 });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Ecn;
    use crate::queue::testkit;

    const MS: u64 = 1_000_000;

    fn fifo(capacity_bytes: u64, admission: Admission) -> QuiclyQueue {
        QuiclyQueue::new(&QuiclyQueueParams {
            capacity_bytes,
            admission,
            codel: None,
        })
    }

    fn offer(q: &mut QuiclyQueue, bytes: u32, tally: &mut Tally) -> bool {
        let mut rng = testkit::rng();
        q.enqueue(
            Time::ZERO,
            testkit::data(testkit::flow(0), bytes, Ecn::NotEct),
            &mut rng,
            tally,
        )
    }

    /// quicly 2026-04 `net_bottleneck_forward`: queued + size > capacity drops. With room for
    /// exactly three 1280-byte datagrams (3840 bytes) the fourth is dropped; a 440-byte packet
    /// behind two datagrams fills 3000 bytes exactly and is admitted, one byte more is not.
    #[test]
    fn arrival_rule_admits_up_to_the_capacity_by_the_packet_s_own_size() {
        let mut tally = Tally::default();
        let mut q = fifo(3840, Admission::Arrival);
        for _ in 0..3 {
            assert!(offer(&mut q, 1280, &mut tally));
        }
        assert!(!offer(&mut q, 1280, &mut tally));
        assert_eq!(q.backlog_bytes(), 3840);
        assert_eq!(tally.class[0].overflow_drops, 1);

        let mut q = fifo(3000, Admission::Arrival);
        assert!(offer(&mut q, 1280, &mut tally));
        assert!(offer(&mut q, 1280, &mut tally));
        assert!(!offer(&mut q, 441, &mut tally));
        assert!(offer(&mut q, 440, &mut tally));
        assert_eq!(q.backlog_bytes(), 3000);
    }

    /// The later rule counts every arrival as the largest datagram: with 2560 bytes waiting in
    /// 3000, a 440-byte packet is dropped like a full one (2560 + 1280 > 3000); with room for
    /// exactly three datagrams (3840) the third is admitted and nothing more, small or not.
    #[test]
    fn largest_rule_is_size_neutral() {
        let mut tally = Tally::default();
        let mut q = fifo(3000, Admission::Largest(1280));
        assert!(offer(&mut q, 1280, &mut tally));
        assert!(offer(&mut q, 1280, &mut tally));
        assert!(!offer(&mut q, 440, &mut tally));
        assert!(!offer(&mut q, 1, &mut tally));
        let mut q = fifo(3840, Admission::Largest(1280));
        assert!(offer(&mut q, 100, &mut tally));
        assert!(offer(&mut q, 1280, &mut tally));
        // 1380 + 1280 ≤ 3840: admitted; then 2660 + 1280 > 3840 for any size.
        assert!(offer(&mut q, 1280, &mut tally));
        assert!(!offer(&mut q, 100, &mut tally));
        assert_eq!(q.backlog_bytes(), 2660);
    }

    /// A queue whose head and the packets behind it (`behind`, bytes each) all waited from 0.
    fn standing(behind: &[u32], codel: QuiclyCodel) -> QuiclyQueue {
        let mut q = QuiclyQueue::new(&QuiclyQueueParams {
            capacity_bytes: 1_000_000,
            admission: Admission::Arrival,
            codel: Some(codel),
        });
        let mut rng = testkit::rng();
        let mut tally = Tally::default();
        for &b in std::iter::once(&1280).chain(behind) {
            q.enqueue(
                Time::ZERO,
                testkit::data(testkit::flow(0), b, Ecn::Ect0),
                &mut rng,
                &mut tally,
            );
        }
        q
    }

    /// RFC 8289 §4.2: the sojourn must stay above target for a whole interval, and quicly's
    /// guard needs more than 1514 bytes behind the head. 1510 bytes behind it (which Linux's
    /// 1500-byte MTU rule would count as standing) never lead to a drop; 1520 bytes do, at
    /// the first dequeue more than one interval after the sojourn was first seen above target.
    #[test]
    fn codel_standing_needs_more_than_1514_bytes_queued() {
        for (behind, drops) in [(&[760_u32, 750][..], false), (&[760, 760][..], true)] {
            let mut q = standing(behind, QuiclyCodel::default());
            let mut tally = Tally::default();
            // First look at 10 ms (sojourn 10 ms > 5 ms): first_above = 110 ms.
            assert!(q.vars.first_above_time.is_none());
            let mut t = 10 * MS;
            should_hold(&mut q, t, &mut tally);
            t += 100 * MS + 1;
            should_hold(&mut q, t, &mut tally);
            assert_eq!(tally.drops() > 0, drops, "behind {behind:?}");
        }
        // The same 1510 bytes under Linux's rule (MTU 1500) would be standing: the guard is
        // what made the difference.
        let linux = CodelLaw {
            target: Dur::from_millis(5),
            interval: Dur::from_millis(100),
            ecn: false,
            ce_threshold: None,
            standing_bytes: None,
        };
        let mut q = standing(&[760, 750], QuiclyCodel::default());
        q.law = Some(linux);
        let mut tally = Tally::default();
        should_hold(&mut q, 10 * MS, &mut tally);
        should_hold(&mut q, 110 * MS + 1, &mut tally);
        assert_eq!(tally.drops(), 1);
    }

    /// Look at the head at `t` without sending it: run the control law and put the packet
    /// back at the head, so the backlog stays what the test built.
    fn should_hold(q: &mut QuiclyQueue, t: u64, tally: &mut Tally) {
        let law = q.law.expect("CoDel");
        codel_dequeue(
            &mut q.fifo,
            Time(t),
            &law,
            &mut q.vars,
            &mut q.maxpacket,
            tally,
        );
    }

    /// With ECN on, CoDel's first verdict on an ECT packet is a CE mark and the packet is
    /// sent; with ECN off it is a drop.
    #[test]
    fn codel_marks_ect_packets_when_ecn_is_on() {
        let mut rng = testkit::rng();
        for ecn in [false, true] {
            let mut q = standing(
                &[1280, 1280, 1280],
                QuiclyCodel {
                    ecn,
                    ..QuiclyCodel::default()
                },
            );
            let mut tally = Tally::default();
            should_hold(&mut q, 10 * MS, &mut tally);
            let out = q.dequeue(Time(111 * MS), &mut rng, &mut tally);
            assert!(out.is_some());
            assert_eq!(tally.marks(), u64::from(ecn));
            assert_eq!(tally.drops(), u64::from(!ecn));
            assert_eq!(out.unwrap().pkt.ecn == Ecn::Ce, ecn);
        }
    }

    /// The packet in service has left the queue (quicly dequeues at the start of the
    /// emission): a full queue admits again as soon as its head starts, before it is sent.
    #[test]
    fn the_packet_in_service_does_not_count() {
        let mut tally = Tally::default();
        let mut rng = testkit::rng();
        let mut q = fifo(2560, Admission::Largest(1280));
        assert!(offer(&mut q, 1280, &mut tally));
        assert!(offer(&mut q, 1280, &mut tally));
        assert!(!offer(&mut q, 1280, &mut tally));
        assert!(q.dequeue(Time::ZERO, &mut rng, &mut tally).is_some());
        assert!(offer(&mut q, 1280, &mut tally));
    }
}
