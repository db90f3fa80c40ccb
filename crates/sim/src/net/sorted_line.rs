//! A delay line whose packets leave in order of arrival time, equal times in the order they
//! were put in: the line of a link whose jitter lets packets overtake (`LinkConfig::jitter`
//! with `reorder`, `link.rs`).
//!
//! Contract: [`SortedLine::push`] puts a packet with its arrival time at the far end;
//! [`SortedLine::front_time`] and [`SortedLine::pop`] see them in (arrival time,
//! insertion) order, exactly as a sequence kept sorted by a stable insert behind every entry
//! arriving no later (netem's `tfifo_enqueue` in `net/sched/sch_netem.c` queues a packet behind
//! those with an equal time to send, the same rule). Iteration ([`SortedLine::packets`]) visits
//! every packet held, in no particular order.
//!
//! Cost: packets stay put in slots (a `Vec` with a free list); the order is a ring of 16-byte
//! (arrival, slot) keys (a power-of-two capacity, so a position is a mask away). A packet that
//! arrives no earlier than every packet held is appended. One that overtakes `k` others moves
//! their keys one place back: one at a time while `k` is small (a jitter spanning a few packet
//! gaps, the common case), after a binary search with one block move per contiguous part of the
//! ring beyond [`SCAN`] keys. Taking the head is a ring pop. Neither moves a packet, so the cost
//! does not grow with the packet's size.

use cclab_cc::Time;

/// How many keys an insert moves one at a time before it searches for its place instead.
/// Beyond a few keys a binary search and a `copy_within` are cheaper than a compare and a move
/// per key; below, the scan wins (an overtaking packet passes about four others in
/// `tests/link_jitter.rs::jitter_cost_udp_run`). Any value gives the same order.
const SCAN: usize = 8;

/// Packets in (arrival time, insertion) order.
#[derive(Debug, Clone)]
pub struct SortedLine<P> {
    /// Packets by slot; the slots listed in `free[..n_free]` hold packets that have left.
    slots: Vec<P>,
    /// A stack of free slots, as long as `slots` (so that freeing one never allocates).
    free: Vec<usize>,
    n_free: usize,
    /// A ring of (arrival, slot) keys, sorted by arrival, equal arrivals in insertion order:
    /// `len` keys from `head`, wrapping. Its length is 0 or a power of two.
    keys: Vec<(Time, usize)>,
    head: usize,
    len: usize,
}

impl<P> Default for SortedLine<P> {
    fn default() -> Self {
        SortedLine {
            slots: Vec::new(),
            free: Vec::new(),
            n_free: 0,
            keys: Vec::new(),
            head: 0,
            len: 0,
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
        let slot = if self.n_free > 0 {
            self.n_free -= 1;
            let s = self.free[self.n_free];
            self.slots[s] = pkt;
            s
        } else {
            self.slots.push(pkt);
            self.free.push(0);
            self.slots.len() - 1
        };
        if self.len == self.keys.len() {
            self.grow();
        }
        let mask = self.keys.len() - 1;
        let hole = (self.head + self.len) & mask;
        let overtakes = self.len > 0 && self.keys[hole.wrapping_sub(1) & mask].0 > at;
        self.len += 1;
        if overtakes {
            self.insert_behind(hole, at, slot);
        } else {
            self.keys[hole] = (at, slot);
        }
    }

    /// Put the key (`at`, `slot`), which overtakes the tail, in its place: the ring's free
    /// position `hole` (just after the tail) moves back past every key arriving after `at`.
    #[inline]
    fn insert_behind(&mut self, hole: usize, at: Time, slot: usize) {
        if hole > self.head {
            // The keys and the hole are contiguous.
            let s = &mut self.keys[self.head..=hole];
            let i = open_place(s, at);
            s[i] = (at, slot);
            return;
        }
        // The ring wraps: the keys run from `head` to its end, then from 0 to the hole.
        let (low, high) = self.keys.split_at_mut(self.head);
        let s = &mut low[..=hole];
        let i = open_place(s, at);
        let last = high.len() - 1;
        if i > 0 || high[last].0 <= at {
            s[i] = (at, slot);
            return;
        }
        // The place is in the high part: its last key moves over to position 0.
        s[0] = high[last];
        let i = open_place(high, at);
        high[i] = (at, slot);
    }

    /// Double the ring (at least 16 keys), unwrapping it.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let cap = (self.keys.len() * 2).max(16);
        let mut keys = Vec::with_capacity(cap);
        keys.extend((0..self.len).map(|i| self.keys[(self.head + i) % self.keys.len()]));
        keys.resize(cap, (Time::ZERO, 0));
        self.keys = keys;
        self.head = 0;
    }

    /// Arrival time of the head.
    #[inline]
    #[must_use]
    pub fn front_time(&self) -> Option<Time> {
        (self.len > 0).then(|| self.keys[self.head].0)
    }

    /// Take the head, with its arrival time.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, P)> {
        if self.len == 0 {
            return None;
        }
        let (t, slot) = self.keys[self.head];
        self.head = (self.head + 1) & (self.keys.len() - 1);
        self.len -= 1;
        self.free[self.n_free] = slot;
        self.n_free += 1;
        Some((t, self.slots[slot]))
    }

    /// Packets held.
    #[must_use]
    pub fn len(&self) -> usize {
        self.len
    }

    /// No packet held.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Every packet held, in no particular order.
    pub fn packets(&self) -> impl Iterator<Item = &P> {
        (0..self.len).map(|i| &self.slots[self.keys[(self.head + i) & (self.keys.len() - 1)].1])
    }
}

/// Move every key of `s` arriving after `at` one place towards the end, over the last place
/// (free: the key being inserted goes there or before), and return the place opened: behind
/// the last key arriving at or before `at`, or 0. Past [`SCAN`] keys, a binary search finds it
/// and one `copy_within` moves the keys.
#[inline]
fn open_place(s: &mut [(Time, usize)], at: Time) -> usize {
    let last = s.len() - 1;
    if last > SCAN && s[last - 1 - SCAN].0 > at {
        let p = s[..last].partition_point(|&(t, _)| t <= at);
        s.copy_within(p..last, p + 1);
        return p;
    }
    let mut i = last;
    while i > 0 {
        let k = s[i - 1];
        if k.0 <= at {
            break;
        }
        s[i] = k;
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

    /// The head's time is the earliest; slots freed by pops are used again, and `packets` sees
    /// exactly what is held.
    #[test]
    fn slots_are_reused_and_packets_sees_what_is_held() {
        let mut line = SortedLine::new();
        line.push(Time(30), 3);
        line.push(Time(10), 1);
        line.push(Time(20), 2);
        assert_eq!(line.front_time(), Some(Time(10)));
        assert_eq!(line.pop(), Some((Time(10), 1)));
        assert_eq!(line.pop(), Some((Time(20), 2)));
        line.push(Time(5), 4);
        assert_eq!(line.slots.len(), 3, "a freed slot is reused");
        let mut held: Vec<u32> = line.packets().copied().collect();
        held.sort_unstable();
        assert_eq!(held, vec![3, 4]);
        assert_eq!(line.pop(), Some((Time(5), 4)));
        assert_eq!(line.pop(), Some((Time(30), 3)));
        assert_eq!(line.pop(), None);
        assert_eq!(line.front_time(), None);
    }
}
