//! A token-bucket shaper, as the `tbf` qdisc (Linux `net/sched/sch_tbf.c`; tc-tbf(8)): packets
//! above the rate wait in a byte-limited FIFO instead of being dropped.
//!
//! Contract: the bucket holds at most `burst` bytes of tokens, starts full, and accrues them at
//! `rate` bit/s, counted exactly in bit·ns. The head of the FIFO leaves as soon as the bucket
//! holds its size in tokens (`tbf_dequeue`), taking them; packets leave in arrival order. An
//! arriving packet is dropped when the bytes waiting plus its own would exceed `limit`
//! (`tbf_enqueue` → `qdisc_drop` at the child's limit) or when it is larger than the bucket
//! (`tbf_enqueue`: `qdisc_pkt_len(skb) > q->max_size`). Over a long run with more offered than
//! `rate`, what leaves is `rate · T + burst` within one packet: the rate.

use std::collections::VecDeque;

use cclab_cc::Time;

use super::policer::refill;
use super::{Element, NetPacket, Output};

/// Nanoseconds per second: tokens are kept in bit·ns so that `rate · Δt` is exact.
const NS: u128 = 1_000_000_000;

/// A token-bucket shaper.
#[derive(Debug)]
pub struct Shaper<P> {
    rate_bps: u64,
    cap: u128,
    tokens: u128,
    last: Time,
    limit_bytes: u64,
    queue: VecDeque<P>,
    queued_bytes: u64,
    /// Packets dropped (queue full or larger than the bucket).
    pub dropped: u64,
}

impl<P> Shaper<P> {
    /// A shaper at `rate_bps` (positive) with a bucket of `burst_bytes` (full at time 0) and a
    /// FIFO of at most `limit_bytes` waiting.
    #[must_use]
    pub fn new(rate_bps: u64, burst_bytes: u64, limit_bytes: u64) -> Self {
        let cap = u128::from(burst_bytes) * 8 * NS;
        Shaper {
            rate_bps,
            cap,
            tokens: cap,
            last: Time::ZERO,
            limit_bytes,
            queue: VecDeque::new(),
            queued_bytes: 0,
            dropped: 0,
        }
    }
}

impl<P: NetPacket> Shaper<P> {
    /// Hand on the head if its tokens are there, else say when they will be.
    fn head(&mut self, now: Time) -> Output<P> {
        let Some(p) = self.queue.front() else {
            return Output::Idle;
        };
        let need = u128::from(p.wire_bytes()) * 8 * NS;
        if self.tokens >= need {
            self.tokens -= need;
            self.queued_bytes -= u64::from(p.wire_bytes());
            return self.queue.pop_front().map_or(Output::Idle, Output::Packet);
        }
        let wait = (need - self.tokens).div_ceil(u128::from(self.rate_bps));
        Output::Wake(Time(
            now.0
                .saturating_add(u64::try_from(wait).unwrap_or(u64::MAX)),
        ))
    }
}

impl<P: NetPacket> Element<P> for Shaper<P> {
    fn process(&mut self, now: Time, pkt: Option<P>) -> Output<P> {
        refill(
            &mut self.tokens,
            self.cap,
            self.rate_bps,
            &mut self.last,
            now,
        );
        if let Some(p) = pkt {
            let bytes = u64::from(p.wire_bytes());
            if u128::from(bytes) * 8 * NS > self.cap || self.queued_bytes + bytes > self.limit_bytes
            {
                self.dropped += 1;
            } else {
                self.queued_bytes += bytes;
                self.queue.push_back(p);
            }
        }
        self.head(now)
    }

    fn held(&self) -> usize {
        self.queue.len()
    }

    fn held_data(&self) -> usize {
        self.queue.iter().filter(|p| p.is_data()).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::test_packet;
    use crate::packet::Packet;

    /// Drive the shaper as the engine does: offer at each arrival, call again at each wake-up.
    fn run(s: &mut Shaper<Packet>, arrivals: &[u64]) -> Vec<u64> {
        let mut out = Vec::new();
        let mut wake: Option<u64> = None;
        let mut next = arrivals.iter().copied().peekable();
        loop {
            let a = next.peek().copied();
            let (now, pkt) = match (a, wake) {
                (Some(a), Some(w)) if w < a => (w, None),
                (Some(a), _) => {
                    next.next();
                    (a, Some(test_packet(0, 0)))
                }
                (None, Some(w)) => (w, None),
                (None, None) => return out,
            };
            wake = None;
            let mut o = s.process(Time(now), pkt);
            while let Output::Packet(_) = o {
                out.push(now);
                o = s.process(Time(now), None);
            }
            if let Output::Wake(t) = o {
                wake = Some(t.0);
            }
        }
    }

    /// 1500-byte packets offered at 24 Mbit/s for 10 s to a 12 Mbit/s shaper with a 3 kB
    /// bucket and room for the whole excess: the first two leave at once (the burst), then one
    /// per ms exactly; none is dropped, and the throughput is the rate within 1 %.
    #[test]
    fn holds_packets_and_sends_at_the_rate() {
        let mut s = Shaper::new(12_000_000, 3_000, 100_000_000);
        let arrivals: Vec<u64> = (0..20_000).map(|i| i * 500_000).collect();
        let out = run(&mut s, &arrivals);
        assert_eq!(s.dropped, 0);
        assert_eq!(out.len(), 20_000);
        assert_eq!(&out[..4], &[0, 500_000, 1_000_000, 2_000_000]);
        assert!(out.windows(2).skip(2).all(|w| w[1] - w[0] == 1_000_000));
        let secs = cclab_cc::num::u64_to_f64(out[out.len() - 1]) * 1e-9;
        let rate = 20_000.0 * 12_000.0 / secs;
        assert!((rate / 12e6 - 1.0).abs() < 0.01, "{rate}");
    }

    /// The FIFO's byte limit drops what does not fit, and a packet larger than the bucket.
    #[test]
    fn limit_and_oversized_packets_drop() {
        let mut s = Shaper::new(12_000_000, 1_500, 3_000);
        let out = run(&mut s, &[0, 0, 0, 0, 0]);
        // One leaves at once, two wait, two are dropped.
        assert_eq!(out, vec![0, 1_000_000, 2_000_000]);
        assert_eq!(s.dropped, 2);
        let mut small = Shaper::<Packet>::new(12_000_000, 1_000, 1_000_000);
        assert!(matches!(
            small.process(Time(0), Some(test_packet(0, 0))),
            Output::Idle
        ));
        assert_eq!(small.dropped, 1);
    }
}
