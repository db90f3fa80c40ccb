//! The event queue: a binary min-heap of `(time, insertion sequence)` keys, plus armed timer
//! slots.
//!
//! Contract: [`EventQueue::pop`] returns entries in increasing time, and entries with equal time
//! in the order they were pushed or armed (the sequence number breaks ties), so a run is
//! deterministic. Besides push and pop it offers [`EventQueue::replace_top`], which reschedules
//! the earliest event in one sift-down. The sift moves a "hole" and keeps the entry being placed
//! in registers, so it never reads back a slot it has just written. The standard library's
//! `PeekMut` does read it back, and that stalls store-to-load forwarding on the engine's
//! commonest operation.
//!
//! A timer slot ([`EventQueue::arm`]) holds at most one pending entry: arming it again replaces
//! that entry in place (an indexed heap with the slot's position), instead of leaving a stale
//! entry behind to be popped and ignored. A paced sender re-arms its wake-up on every skb, each
//! time earlier than its retransmission timer; with plain pushes every re-arm left an entry
//! behind, and the heap held hundreds of them. An armed entry gets a fresh sequence number, as a
//! push at that moment would, so the order of the entries that fire is the one of pushes.
use cclab_cc::Time;

/// One scheduled entry: the key packs (time, sequence) into one integer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry<E> {
    key: u128,
    /// The event.
    pub ev: E,
}

impl<E> Entry<E> {
    /// When the event is due.
    #[must_use]
    pub fn time(&self) -> Time {
        Time((self.key >> 64) as u64)
    }
}

/// An armed timer slot in the timer heap (its event is kept by slot, apart, so that sifts move
/// small entries).
#[derive(Clone, Copy, Debug)]
struct Armed {
    key: u128,
    slot: u32,
}

/// Position of a slot that is not armed.
const DISARMED: u32 = u32::MAX;

/// A deterministic priority queue of events.
#[derive(Debug)]
pub struct EventQueue<E> {
    heap: Vec<Entry<E>>,
    /// Armed timer slots: a binary min-heap by key.
    timers: Vec<Armed>,
    /// Key of the earliest armed slot (`u128::MAX` when none is armed).
    timer_min: u128,
    /// Position of each slot in `timers`, [`DISARMED`] when it holds nothing.
    pos: Vec<u32>,
    /// The event of each armed slot.
    slot_ev: Vec<Option<E>>,
    /// The slot whose entry is being fired ([`EventQueue::begin_fire`]), [`DISARMED`] if none.
    firing: u32,
    next_seq: u64,
    peak: usize,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> {
    /// An empty queue.
    #[must_use]
    pub fn new() -> Self {
        EventQueue {
            heap: Vec::new(),
            timers: Vec::new(),
            timer_min: u128::MAX,
            pos: Vec::new(),
            slot_ev: Vec::new(),
            firing: DISARMED,
            next_seq: 0,
            peak: 0,
        }
    }

    fn entry(&mut self, time: Time, ev: E) -> Entry<E> {
        let seq = self.next_seq;
        self.next_seq += 1;
        Entry {
            key: (u128::from(time.0) << 64) | u128::from(seq),
            ev,
        }
    }

    /// Number of pending entries (armed slots included; an entry being fired is gone).
    #[must_use]
    pub fn len(&self) -> usize {
        self.heap.len() + self.timers.len() - usize::from(self.firing != DISARMED)
    }

    /// Largest number of entries ever pending at once.
    #[must_use]
    pub fn peak_len(&self) -> usize {
        self.peak
    }

    /// True when nothing is pending.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The earliest entry, pushed or armed.
    #[inline]
    #[must_use]
    pub fn peek(&self) -> Option<Entry<E>> {
        match self.heap.first() {
            Some(h) if h.key < self.timer_min => Some(*h),
            _ => self.timer_entry(),
        }
    }

    /// The earliest entry and whether it is an armed slot's (then [`EventQueue::pop_armed`]
    /// removes it, else [`EventQueue::pop_pushed`] or [`EventQueue::replace_top`]).
    #[inline]
    #[must_use]
    pub fn peek_source(&self) -> Option<(Entry<E>, bool)> {
        match self.heap.first() {
            Some(h) if h.key < self.timer_min => Some((*h, false)),
            _ => self.timer_entry().map(|e| (e, true)),
        }
    }

    /// Remove the earliest entry, known to be a pushed one.
    #[inline]
    pub fn pop_pushed(&mut self) {
        if let Some(last) = self.heap.pop()
            && !self.heap.is_empty()
        {
            self.sift_down_from_root(last);
        }
    }

    /// Remove the earliest entry, known to be an armed slot's.
    #[inline]
    pub fn pop_armed(&mut self) {
        self.pop_timer();
    }

    /// Fire the earliest entry, known to be an armed slot's: it counts as removed, but stays in
    /// the timer heap until [`EventQueue::end_fire`]. If its slot is armed again meanwhile (a
    /// paced sender's wake-up re-arms itself for the next skb), the entry is updated in place:
    /// one sift instead of a removal and an insertion. Between the two calls the queue must not be
    /// popped or peeked (but for `peek_time`), and nothing may be armed earlier than the fired entry; pushes, arms and
    /// [`EventQueue::peek_time`] behave as after a pop.
    #[inline]
    pub fn begin_fire(&mut self) {
        debug_assert_eq!(self.firing, DISARMED, "one entry fires at a time");
        self.firing = self.timers[0].slot;
        self.update_timer_min();
    }

    /// Recompute `timer_min`, the earliest counted armed entry: a firing entry is at the root
    /// (nothing armed while it fires is earlier) and does not count, so the earliest is then
    /// one of the root's children. [`EventQueue::peek_time`] stays right while an entry fires
    /// (the engine reads it then to decide whether a packet can skip an event).
    #[inline]
    fn update_timer_min(&mut self) {
        self.timer_min = if self.firing == DISARMED {
            self.timers.first().map_or(u128::MAX, |t| t.key)
        } else {
            debug_assert_eq!(
                self.timers[0].slot, self.firing,
                "a firing entry stays the root"
            );
            let a = self.timers.get(1).map_or(u128::MAX, |t| t.key);
            let b = self.timers.get(2).map_or(u128::MAX, |t| t.key);
            a.min(b)
        };
    }

    /// End what [`EventQueue::begin_fire`] began: remove the fired entry unless its slot was
    /// armed again.
    #[inline]
    pub fn end_fire(&mut self) {
        let s = self.firing;
        if s != DISARMED {
            self.firing = DISARMED;
            self.disarm(s as usize);
        }
    }

    /// Remove armed slot `s`'s entry from wherever it is in the timer heap.
    fn disarm(&mut self, s: usize) {
        let at = self.pos[s] as usize;
        self.pos[s] = DISARMED;
        self.slot_ev[s] = None;
        let last = self.timers.pop().expect("an armed slot");
        if at < self.timers.len() {
            if at > 0 && last.key < self.timers[(at - 1) / 2].key {
                self.timer_sift_up(at, last);
            } else {
                self.timer_sift_down(at, last);
            }
        }
        self.update_timer_min();
    }

    /// The earliest armed slot's entry.
    fn timer_entry(&self) -> Option<Entry<E>> {
        let t = self.timers.first()?;
        Some(Entry {
            key: t.key,
            ev: self.slot_ev[t.slot as usize].expect("an armed slot has its event"),
        })
    }

    /// Time of the earliest entry (`Time::MAX` when empty).
    #[inline]
    #[must_use]
    pub fn peek_time(&self) -> Time {
        let h = self.heap.first().map_or(u128::MAX, |e| e.key);
        let k = h.min(self.timer_min);
        if k == u128::MAX {
            Time::MAX
        } else {
            Time((k >> 64) as u64)
        }
    }

    /// Schedule `ev` at `time`.
    pub fn push(&mut self, time: Time, ev: E) {
        let e = self.entry(time, ev);
        let mut pos = self.heap.len();
        self.heap.push(e);
        self.peak = self.peak.max(self.len());
        while pos > 0 {
            let parent = (pos - 1) / 2;
            if self.heap[parent].key <= e.key {
                break;
            }
            self.heap[pos] = self.heap[parent];
            pos = parent;
        }
        self.heap[pos] = e;
    }

    /// Remove and return the earliest entry (an armed slot's entry disarms the slot).
    pub fn pop(&mut self) -> Option<Entry<E>> {
        if self.heap.first().is_none_or(|h| h.key > self.timer_min) {
            return self.pop_timer();
        }
        let last = self.heap.pop()?;
        if self.heap.is_empty() {
            return Some(last);
        }
        let top = self.heap[0];
        self.sift_down_from_root(last);
        Some(top)
    }

    /// Replace the earliest entry by `ev` at `time`. The earliest entry must be a pushed one
    /// (not an armed slot's): the caller has just seen it from [`EventQueue::peek`].
    #[inline(always)]
    pub fn replace_top(&mut self, time: Time, ev: E) {
        let e = self.entry(time, ev);
        self.sift_down_from_root(e);
    }

    /// Arm timer slot `slot` for `ev` at `time`, replacing what it held (slots are small dense
    /// numbers chosen by the caller).
    #[inline(never)]
    pub fn arm(&mut self, slot: u32, time: Time, ev: E) {
        let key = self.entry(time, ev).key;
        let e = Armed { key, slot };
        let s = slot as usize;
        if s >= self.pos.len() {
            self.pos.resize(s + 1, DISARMED);
            self.slot_ev.resize(s + 1, None);
        }
        self.slot_ev[s] = Some(ev);
        if slot == self.firing {
            // Armed again while it fires: its entry is still in the heap (not counted), and
            // counts again from now on, as an insertion after a removal would.
            self.firing = DISARMED;
            self.peak = self.peak.max(self.len());
        }
        debug_assert!(
            self.firing == DISARMED || key > self.timers[0].key,
            "nothing armed while an entry fires is earlier than it"
        );
        let at = self.pos[s];
        if at == DISARMED {
            self.timers.push(e);
            self.peak = self.peak.max(self.len());
            self.timer_sift_up(self.timers.len() - 1, e);
        } else {
            let at = at as usize;
            if at > 0 && key < self.timers[(at - 1) / 2].key {
                self.timer_sift_up(at, e);
            } else {
                self.timer_sift_down(at, e);
            }
        }
        self.update_timer_min();
    }

    /// Remove the earliest armed entry (`None` when nothing is armed).
    fn pop_timer(&mut self) -> Option<Entry<E>> {
        let top = self.timer_entry()?;
        let slot = self.timers[0].slot as usize;
        self.pos[slot] = DISARMED;
        self.slot_ev[slot] = None;
        let last = self.timers.pop().expect("an armed slot");
        if self.timers.is_empty() {
            self.timer_min = u128::MAX;
        } else {
            self.timer_sift_down(0, last);
            self.timer_min = self.timers[0].key;
        }
        Some(top)
    }

    /// Place `e` in the timer heap from the hole at `at`, moving up.
    #[allow(
        clippy::cast_possible_truncation,
        reason = "a position in the timer heap is below the number of slots, which are u32"
    )]
    fn timer_sift_up(&mut self, mut at: usize, e: Armed) {
        while at > 0 {
            let parent = (at - 1) / 2;
            let p = self.timers[parent];
            if p.key <= e.key {
                break;
            }
            self.timers[at] = p;
            self.pos[p.slot as usize] = at as u32;
            at = parent;
        }
        self.timers[at] = e;
        self.pos[e.slot as usize] = at as u32;
    }

    /// Place `e` in the timer heap from the hole at `at`, moving down.
    #[allow(
        clippy::cast_possible_truncation,
        reason = "a position in the timer heap is below the number of slots, which are u32"
    )]
    fn timer_sift_down(&mut self, mut at: usize, e: Armed) {
        let n = self.timers.len();
        loop {
            let left = 2 * at + 1;
            if left >= n {
                break;
            }
            // The smaller child without a data-dependent branch (the comparison is as likely
            // either way, so a branch on it mispredicts half the time).
            let child = if left + 1 < n {
                left + usize::from(self.timers[left + 1].key < self.timers[left].key)
            } else {
                left
            };
            let c = self.timers[child];
            if e.key <= c.key {
                break;
            }
            self.timers[at] = c;
            self.pos[c.slot as usize] = at as u32;
            at = child;
        }
        self.timers[at] = e;
        self.pos[e.slot as usize] = at as u32;
    }

    /// Place `e` starting from an empty root slot.
    fn sift_down_from_root(&mut self, e: Entry<E>) {
        let n = self.heap.len();
        let mut pos = 0;
        loop {
            let left = 2 * pos + 1;
            if left >= n {
                break;
            }
            let child = if left + 1 < n {
                left + usize::from(self.heap[left + 1].key < self.heap[left].key)
            } else {
                left
            };
            if e.key <= self.heap[child].key {
                break;
            }
            self.heap[pos] = self.heap[child];
            pos = child;
        }
        self.heap[pos] = e;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Pops come out sorted by (time, push or arm order) whatever the mix of pushes, pops,
        /// replacements of the top and (re-)armings of timer slots; an armed slot holds one
        /// entry, the last armed.
        #[test]
        fn pops_are_ordered_by_time_then_insertion(ops in proptest::collection::vec((0u8..6, 0u64..50), 1..300)) {
            let mut q = EventQueue::new();
            // (time, seq, id, slot)
            let mut model: Vec<(u64, u64, u32, Option<u32>)> = Vec::new();
            let mut seq = 0u64;
            let mut peak = 0usize;
            for (id, (op, t)) in ops.into_iter().enumerate() {
                let id = u32::try_from(id).expect("at most 300 operations");
                match op {
                    0 => {
                        q.push(Time(t), id);
                        model.push((t, seq, id, None));
                        seq += 1;
                    }
                    1 => {
                        model.sort_unstable();
                        let want = (!model.is_empty()).then(|| model.remove(0));
                        // Half the pops go through `pop`, half through `peek_source` and
                        // the matching `pop_armed` / `pop_pushed`, as the engine does.
                        let got = if t % 2 == 0 {
                            q.pop()
                        } else {
                            q.peek_source().map(|(e, armed)| {
                                if armed { q.pop_armed() } else { q.pop_pushed() }
                                e
                            })
                        };
                        let got = got.map(|e| (e.time().0, e.ev));
                        prop_assert_eq!(got, want.map(|(t, _, id, _)| (t, id)));
                        if let (Some((_, armed)), Some(w)) = (q.peek_source(), model.iter().min()) {
                            prop_assert_eq!(armed, w.3.is_some());
                        }
                    }
                    2 => {
                        model.sort_unstable();
                        if model.first().is_some_and(|m| m.3.is_none()) {
                            model.remove(0);
                            q.replace_top(Time(t), id);
                            model.push((t, seq, id, None));
                            seq += 1;
                        }
                    }
                    5 => {
                        // Fire the earliest entry if it is a slot's, as the engine does; half
                        // the time arm a slot (maybe the firing one) while it fires.
                        model.sort_unstable();
                        if let Some(&(fired_t, _, _, Some(fired))) = model.first() {
                            prop_assert!(q.peek_source().is_some_and(|(_, armed)| armed));
                            model.remove(0);
                            q.begin_fire();
                            prop_assert_eq!(q.len(), model.len());
                            if t % 2 == 0 {
                                // As in the engine: never earlier than the fired entry;
                                // peek_time meanwhile ignores the fired entry.
                                let t = t.max(fired_t);
                                prop_assert_eq!(q.peek_time(), model.first().map_or(Time::MAX, |m| Time(m.0)));
                                if t % 3 == 0 {
                                    // An event the handler schedules before it re-arms.
                                    q.push(Time(t), id);
                                    model.push((t, seq, id, None));
                                    seq += 1;
                                    peak = peak.max(model.len());
                                }
                                let slot = if t % 4 == 0 { fired } else { u32::try_from(t % 3).expect("small") };
                                model.retain(|m| m.3 != Some(slot));
                                q.arm(slot, Time(t), id);
                                model.push((t, seq, id, Some(slot)));
                                model.sort_unstable();
                                prop_assert_eq!(q.peek_time(), model.first().map_or(Time::MAX, |m| Time(m.0)));
                                seq += 1;
                                peak = peak.max(model.len());
                            }
                            q.end_fire();
                        }
                    }
                    _ => {
                        let slot = u32::from(op == 4) + u32::try_from(t % 3).expect("small");
                        model.retain(|m| m.3 != Some(slot));
                        q.arm(slot, Time(t), id);
                        model.push((t, seq, id, Some(slot)));
                        seq += 1;
                    }
                }
                prop_assert_eq!(q.len(), model.len());
                model.sort_unstable();
                prop_assert_eq!(q.peek().map(|e| (e.time().0, e.ev)), model.first().map(|m| (m.0, m.2)));
                prop_assert_eq!(q.peek_time(), model.first().map_or(Time::MAX, |m| Time(m.0)));
                peak = peak.max(model.len());
                prop_assert_eq!(q.peak_len(), peak);
            }
            model.sort_unstable();
            for (t, _, id, _) in model {
                let e = q.pop().unwrap();
                prop_assert_eq!((e.time().0, e.ev), (t, id));
            }
            prop_assert!(q.is_empty());
        }
    }
}
