//! Jitter: a delay that varies per packet, with or without reordering.
//!
//! Contract: [`Jitter`] gives each packet arriving at `now` the delay `base + U[0, spread)`,
//! drawn from its own stream (seeded from the scenario seed and the element's component id).
//! With `reorder`, packets leave when their own delay is over, so a later packet may overtake an
//! earlier one (netem's behaviour with a jitter larger than the gap between packets); without,
//! a packet never leaves before the one ahead of it (it leaves right behind it). Packets wait in
//! a heap ordered by (leave time, arrival order), so equal leave times keep arrival order, and
//! the element asks to be called at the earliest leave time.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use cclab_cc::{Dur, Time};
use rand_chacha::ChaCha8Rng;

use super::{Element, NetPacket, Output};
use crate::rng;

/// A packet waiting to leave.
#[derive(Debug)]
struct Held<P> {
    at: Time,
    seq: u64,
    pkt: P,
}

impl<P> PartialEq for Held<P> {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}
impl<P> Eq for Held<P> {}
impl<P> PartialOrd for Held<P> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<P> Ord for Held<P> {
    /// Reversed, so that the max-heap yields the earliest (leave time, arrival order).
    fn cmp(&self, other: &Self) -> Ordering {
        (other.at, other.seq).cmp(&(self.at, self.seq))
    }
}

/// A delay of `base` plus a uniform random part below `spread`.
#[derive(Debug)]
pub struct Jitter<P> {
    base: Dur,
    spread: Dur,
    reorder: bool,
    rng: ChaCha8Rng,
    line: BinaryHeap<Held<P>>,
    seq: u64,
    last: Time,
}

impl<P> Jitter<P> {
    /// Delay `base + U[0, spread)`; `reorder`: packets may overtake each other. Draws from the
    /// stream of `component` in a run seeded with `seed` (element `i` of a scenario:
    /// `rng::ELEMENT + i`).
    #[must_use]
    pub fn new(base: Dur, spread: Dur, reorder: bool, seed: u64, component: u64) -> Self {
        Jitter {
            base,
            spread,
            reorder,
            rng: rng::stream(seed, component),
            line: BinaryHeap::new(),
            seq: 0,
            last: Time::ZERO,
        }
    }
}

impl<P: NetPacket> Element<P> for Jitter<P> {
    fn process(&mut self, now: Time, pkt: Option<P>) -> Output<P> {
        if let Some(p) = pkt {
            #[expect(
                clippy::cast_precision_loss,
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                reason = "a uniform draw in [0, 1) times the spread is non-negative and below the spread, a u64; spreads are exact in f64 below 2^53 ns"
            )]
            let extra = (rng::unit_f64(&mut self.rng) * self.spread.0 as f64) as u64;
            let mut at = now + self.base + Dur(extra);
            if !self.reorder {
                at = at.max(self.last);
            }
            self.last = self.last.max(at);
            self.line.push(Held {
                at,
                seq: self.seq,
                pkt: p,
            });
            self.seq += 1;
        }
        match self.line.peek() {
            Some(h) if h.at <= now => Output::Packet(self.line.pop().expect("head").pkt),
            Some(h) => Output::Wake(h.at),
            None => Output::Idle,
        }
    }

    fn held(&self) -> usize {
        self.line.len()
    }

    fn held_data(&self) -> usize {
        self.line.iter().filter(|h| h.pkt.is_data()).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::test_packet;
    use crate::packet::Packet;

    const MS: u64 = 1_000_000;

    /// Drive `j` with 1,000 packets 1 ms apart and collect (leave time, seq) in leave order.
    fn drive(mut j: Jitter<Packet>) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        let mut wake: Option<Time> = None;
        let take =
            |j: &mut Jitter<Packet>, now: Time, pkt: Option<Packet>, out: &mut Vec<(u64, u64)>| {
                let mut r = j.process(now, pkt);
                loop {
                    match r {
                        Output::Packet(p) => out.push((now.0, p.data_segment().unwrap().1)),
                        Output::Wake(t) => return Some(t),
                        Output::Idle => return None,
                    }
                    r = j.process(now, None);
                }
            };
        for i in 0..1_000u64 {
            let now = Time(i * MS);
            while let Some(t) = wake.filter(|&t| t < now) {
                wake = take(&mut j, t, None, &mut out);
            }
            wake = take(&mut j, now, Some(test_packet(i, 0)), &mut out);
        }
        while let Some(t) = wake {
            wake = take(&mut j, t, None, &mut out);
        }
        out
    }

    /// 10 ms + U[0, 5 ms) on packets 1 ms apart: every packet leaves once, 10–15 ms after it
    /// came. With reordering many overtake (a packet is overtaken when its draw exceeds the next
    /// one's by more than 1 ms: probability 0.32 for two uniform draws over 5 ms; at least 200
    /// of 999 pairs, far below the expected ≈ 320); without, none do and each leaves no earlier
    /// than its own delay.
    #[test]
    fn jitter_reorders_only_when_allowed() {
        for reorder in [true, false] {
            let out = drive(Jitter::new(Dur(10 * MS), Dur(5 * MS), reorder, 1, 9));
            assert_eq!(out.len(), 1_000);
            let mut seen: Vec<u64> = out.iter().map(|&(_, s)| s).collect();
            let inversions = seen.windows(2).filter(|w| w[0] > w[1]).count();
            for &(t, s) in &out {
                let d = t - s * MS;
                assert!(d >= 10 * MS, "{d}");
                if reorder {
                    assert!(d < 15 * MS, "{d}");
                }
            }
            if reorder {
                assert!(inversions > 200, "{inversions} inversions");
            } else {
                assert_eq!(inversions, 0);
            }
            seen.sort_unstable();
            assert_eq!(seen, (0..1_000).collect::<Vec<_>>());
        }
    }
}
