//! A delay line whose packets leave in order of arrival time, equal times in the order they
//! were put in: the line of a link whose jitter lets packets overtake (`LinkConfig::jitter`
//! with `reorder`, `link.rs`).
//!
//! Contract: [`SortedLine::push`] puts a packet with its arrival time at the far end;
//! [`SortedLine::front_time`] and [`SortedLine::pop_arrived`] see them in (arrival time,
//! insertion) order, exactly as a sequence kept sorted by a stable insert behind every entry
//! arriving no later (netem's `tfifo_enqueue` in `net/sched/sch_netem.c` queues a packet behind
//! those with an equal time to send, the same rule). Iteration ([`SortedLine::packets`]) visits
//! every packet held, in no particular order.
//!
//! Cost: packets stay put in slots (a `Vec` with a free list); the order is a ring of 16-byte
//! (arrival, slot) keys. A packet that arrives no earlier than every packet held is appended. One
//! that overtakes `k` others moves their keys one place back: a short scan from the tail when `k`
//! is small (a jitter spanning a few packet gaps, the common case), a binary search and one
//! block move beyond [`SCAN`] keys. Taking the head is a ring pop. Neither moves a packet, so the
//! cost does not grow with the packet's size.

use std::collections::VecDeque;

use cclab_cc::Time;

/// How many keys an insert moves one at a time before it searches for its place instead.
/// Beyond a few keys a binary search and one `copy_within` are cheaper than a compare and a
/// move per key; below, the scan wins (most overtaking packets pass one to three others in
/// `tests/link_jitter.rs::jitter_cost_udp_run`). Any value gives the same order.
const SCAN: usize = 8;

/// Packets in (arrival time, insertion) order.
#[derive(Debug, Clone)]
pub struct SortedLine<P> {
    /// Packets by slot; the slots listed in `free` hold packets that have left.
    slots: Vec<P>,
    free: Vec<usize>,
    /// (arrival, slot), sorted by arrival; equal arrivals in insertion order.
    order: VecDeque<(Time, usize)>,
}

impl<P> Default for SortedLine<P> {
    fn default() -> Self {
        SortedLine {
            slots: Vec::new(),
            free: Vec::new(),
            order: VecDeque::new(),
        }
    }
}

impl<P: Copy> SortedLine<P> {
    /// An empty line.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Put `pkt`, arriving at `at`, behind every packet arriving at or before `at`.
    #[inline]
    pub fn push(&mut self, at: Time, pkt: P) {
        let slot = if let Some(s) = self.free.pop() {
            self.slots[s] = pkt;
            s
        } else {
            self.slots.push(pkt);
            self.slots.len() - 1
        };
        let overtakes = self.order.back().is_some_and(|&(t, _)| t > at);
        self.order.push_back((at, slot));
        if overtakes {
            self.sift_back(at, slot);
        }
    }

    /// The last key (the one just pushed, arriving at `at`) goes behind every key arriving at
    /// or before `at`.
    fn sift_back(&mut self, at: Time, slot: usize) {
        let (a, b) = self.order.as_mut_slices();
        if b.is_empty() {
            let i = open_place(a, at);
            a[i] = (at, slot);
            return;
        }
        let i = open_place(b, at);
        let last_a = a.len() - 1;
        if i > 0 || a[last_a].0 <= at {
            b[i] = (at, slot);
            return;
        }
        // The place is in the ring's first part: its last key moves over to the second.
        b[0] = a[last_a];
        let i = open_place(a, at);
        a[i] = (at, slot);
    }

    /// Arrival time of the head.
    #[inline]
    #[must_use]
    pub fn front_time(&self) -> Option<Time> {
        self.order.front().map(|&(t, _)| t)
    }

    /// Take the head if it has arrived by `now`.
    #[inline]
    pub fn pop_arrived(&mut self, now: Time) -> Option<P> {
        match self.order.front() {
            Some(&(t, _)) if t <= now => self.pop().map(|(_, p)| p),
            _ => None,
        }
    }

    /// Take the head, with its arrival time.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, P)> {
        let (t, slot) = self.order.pop_front()?;
        self.free.push(slot);
        Some((t, self.slots[slot]))
    }

    /// Packets held.
    #[must_use]
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// No packet held.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// Every packet held, in no particular order.
    pub fn packets(&self) -> impl Iterator<Item = &P> {
        self.order.iter().map(|&(_, s)| &self.slots[s])
    }
}

/// Move every key of `s` arriving after `at` one place towards the end, over the last place
/// (free: the key being inserted), and return the place opened for it: behind the last key
/// arriving at or before `at`, or 0.
#[inline]
fn open_place(s: &mut [(Time, usize)], at: Time) -> usize {
    let last = s.len() - 1;
    let mut i = last;
    while i > 0 && s[i - 1].0 > at {
        if last - i == SCAN {
            let p = s[..i].partition_point(|&(t, _)| t <= at);
            s.copy_within(p..i, p + 1);
            return p;
        }
        s[i] = s[i - 1];
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use rand::Rng;

    use super::*;
    use crate::rng;

    /// What the line must give: the same packets stably sorted by arrival (equal arrivals in
    /// insertion order), which is what a sorted sequence with a stable insert holds.
    fn reference(pushed: &[(Time, u32)]) -> Vec<(Time, u32)> {
        let mut v = pushed.to_vec();
        v.sort_by_key(|&(t, _)| t);
        v
    }

    /// Random arrivals (with many ties: times drawn from a small range), pops interleaved with
    /// pushes at random, and line lengths from a few to thousands so that the ring wraps and
    /// both the short scan and the binary search place keys: every pop gives the head of the
    /// reference order of what is held.
    #[test]
    fn pops_follow_the_stable_sort_by_arrival() {
        let mut r = rng::stream(7, 0);
        for round in 0..200u64 {
            let span: u64 = [3, 50, 1_000, 1_000_000][(round % 4) as usize];
            let n: u32 = [10, 200, 3_000][(round % 3) as usize];
            let pop_share = [0.0, 0.3, 0.5][(round % 5 % 3) as usize];
            let mut line = SortedLine::new();
            let mut held: Vec<(Time, u32)> = Vec::new();
            let mut base = 0u64;
            for id in 0..n {
                if rng::unit_f64(&mut r) < pop_share {
                    let want = reference(&held).first().copied();
                    assert_eq!(line.pop(), want, "round {round}");
                    if let Some(w) = want {
                        let k = held.iter().position(|&e| e == w).unwrap();
                        held.remove(k);
                    }
                }
                // Arrivals move on with time, jittered by up to `span`.
                base += r.next_u64() % 4;
                let at = Time(base + r.next_u64() % span);
                line.push(at, id);
                held.push((at, id));
                assert_eq!(line.len(), held.len());
            }
            let mut rest = Vec::new();
            while let Some(e) = line.pop() {
                rest.push(e);
            }
            assert_eq!(rest, reference(&held), "round {round}");
            assert!(line.is_empty());
        }
    }

    /// Packets with the same arrival time leave in the order they were put in, whether they
    /// came before or after an earlier-arriving packet, and past the short scan.
    #[test]
    fn equal_times_keep_insertion_order() {
        let mut line = SortedLine::new();
        for id in 0..20 {
            line.push(Time(10), id);
        }
        line.push(Time(5), 100);
        for id in 20..40 {
            line.push(Time(10), id);
        }
        line.push(Time(7), 101);
        line.push(Time(10), 40);
        assert_eq!(line.front_time(), Some(Time(5)));
        let order: Vec<u32> = std::iter::from_fn(|| line.pop().map(|(_, p)| p)).collect();
        let mut want = vec![100, 101];
        want.extend(0..41);
        assert_eq!(order, want);
    }

    /// `pop_arrived` takes the head only once its time has come; slots freed by pops are used
    /// again, and `packets` sees exactly what is held.
    #[test]
    fn pop_arrived_waits_for_the_head_and_slots_are_reused() {
        let mut line = SortedLine::new();
        line.push(Time(30), 3);
        line.push(Time(10), 1);
        line.push(Time(20), 2);
        assert_eq!(line.pop_arrived(Time(9)), None);
        assert_eq!(line.pop_arrived(Time(10)), Some(1));
        assert_eq!(line.pop_arrived(Time(25)), Some(2));
        line.push(Time(5), 4);
        assert_eq!(line.slots.len(), 3, "a freed slot is reused");
        let mut held: Vec<u32> = line.packets().copied().collect();
        held.sort_unstable();
        assert_eq!(held, vec![3, 4]);
        assert_eq!(line.pop_arrived(Time(100)), Some(4));
        assert_eq!(line.pop_arrived(Time(100)), Some(3));
        assert_eq!(line.pop_arrived(Time(100)), None);
        assert_eq!(line.front_time(), None);
    }
}
