//! The event queue: a binary min-heap of `(time, insertion sequence)` keys.
//!
//! Contract: [`EventQueue::pop`] returns entries in increasing time, and entries with equal time
//! in the order they were pushed (the sequence number breaks ties), so a run is deterministic.
//! Besides push and pop it offers [`EventQueue::replace_top`], which reschedules the earliest
//! event in one sift-down. The sift moves a "hole" and keeps the entry being placed in
//! registers, so it never reads back a slot it has just written. The standard library's
//! `PeekMut` does read it back, and that stalls store-to-load forwarding on the engine's
//! commonest operation.

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

/// A deterministic priority queue of events.
#[derive(Debug)]
pub struct EventQueue<E> {
    heap: Vec<Entry<E>>,
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

    /// Number of pending entries.
    #[must_use]
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Largest number of entries ever pending at once.
    #[must_use]
    pub fn peak_len(&self) -> usize {
        self.peak
    }

    /// True when nothing is pending.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// The earliest entry.
    #[must_use]
    pub fn peek(&self) -> Option<&Entry<E>> {
        self.heap.first()
    }

    /// Time of the earliest entry (`Time::MAX` when empty).
    #[inline]
    #[must_use]
    pub fn peek_time(&self) -> Time {
        self.heap.first().map_or(Time::MAX, Entry::time)
    }

    /// Schedule `ev` at `time`.
    pub fn push(&mut self, time: Time, ev: E) {
        let e = self.entry(time, ev);
        let mut pos = self.heap.len();
        self.heap.push(e);
        self.peak = self.peak.max(self.heap.len());
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

    /// Remove and return the earliest entry.
    pub fn pop(&mut self) -> Option<Entry<E>> {
        let last = self.heap.pop()?;
        if self.heap.is_empty() {
            return Some(last);
        }
        let top = self.heap[0];
        self.sift_down_from_root(last);
        Some(top)
    }

    /// Replace the earliest entry by `ev` at `time` (the queue must not be empty).
    pub fn replace_top(&mut self, time: Time, ev: E) {
        let e = self.entry(time, ev);
        self.sift_down_from_root(e);
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
            let right = left + 1;
            let child = if right < n && self.heap[right].key < self.heap[left].key {
                right
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
        /// Pops come out sorted by (time, push order) whatever the mix of pushes, pops and
        /// replacements of the top.
        #[test]
        fn pops_are_ordered_by_time_then_insertion(ops in proptest::collection::vec((0u8..3, 0u64..50), 1..300)) {
            let mut q = EventQueue::new();
            let mut model: Vec<(u64, u64, u32)> = Vec::new(); // (time, seq, id)
            let mut seq = 0u64;
            let mut peak = 0usize;
            for (id, (op, t)) in ops.into_iter().enumerate() {
                let id = u32::try_from(id).expect("at most 300 operations");
                match op {
                    0 => {
                        q.push(Time(t), id);
                        model.push((t, seq, id));
                        seq += 1;
                    }
                    1 => {
                        model.sort_unstable();
                        let want = (!model.is_empty()).then(|| model.remove(0));
                        let got = q.pop().map(|e| (e.time().0, e.ev));
                        prop_assert_eq!(got, want.map(|(t, _, id)| (t, id)));
                    }
                    _ => {
                        model.sort_unstable();
                        if !model.is_empty() {
                            model.remove(0);
                            q.replace_top(Time(t), id);
                            model.push((t, seq, id));
                            seq += 1;
                        }
                    }
                }
                prop_assert_eq!(q.len(), model.len());
                peak = peak.max(model.len());
                prop_assert_eq!(q.peak_len(), peak);
            }
            model.sort_unstable();
            for (t, _, id) in model {
                let e = q.pop().unwrap();
                prop_assert_eq!((e.time().0, e.ev), (t, id));
            }
            prop_assert!(q.is_empty());
        }
    }
}
