//! Both sides of a Block Ack agreement of one (originator, recipient, TID): the originator's
//! queue with its transmit window, and the recipient's receive reorder buffer.
//!
//! Contract: [`Originator`] holds the MPDUs queued for the recipient, those awaiting
//! retransmission first (in sequence order), then new ones. A sequence number is assigned at an
//! MPDU's first transmission. The window starts at the oldest sequence number neither
//! acknowledged nor given up (WinStartO, IEEE 802.11-2020 §10.25.2; ns-3 `BlockAckManager`), so
//! an aggregate may carry the MPDUs awaiting retransmission plus as many new ones as there are
//! free sequence numbers below WinStartO + WinSize ([`Originator::window_limit`]). After an
//! aggregate, [`Originator::transmitted`] applies each MPDU's outcome: received ones leave, lost
//! ones stay at the head for a later aggregate, and after the retry limit they are given up.
//!
//! [`Reorder`] takes MPDUs as they arrive (any order, within the originator's window)
//! and releases them to the upper layer in sequence-number order: a frame is released only when
//! every earlier sequence number was released or given up. The originator gives sequence numbers
//! up with a Block Ack Request whose starting sequence number (SSN) is its new window start
//! ([`Reorder::release_before`]): everything below the SSN that is held is released, the holes
//! are skipped. Rules: IEEE 802.11-2020 §10.25.6 (HT-immediate Block Ack, recipient's reordering
//! buffer: release in order, advance on BlockAckReq), as Linux mac80211 implements them in
//! `ieee80211_sta_manage_reorder_buf` / `ieee80211_sta_reorder_release` and
//! `ieee80211_release_reorder_frames` (net/mac80211/rx.c). Sequence numbers are counted here
//! without the standard's 12-bit wrap (modulo 4096): windows of at most 256 never straddle an
//! ambiguity, so the wrap changes nothing that is modelled. The mac80211 reorder timeout
//! (`HT_RX_REORDER_BUF_TIMEOUT`, 100 ms) is not modelled: the originator always tells the
//! recipient what it gave up. Pure and time-free.

use std::collections::{BTreeMap, VecDeque};

/// An MPDU queued at the originator.
#[derive(Clone, Copy, Debug)]
struct Queued<T> {
    item: T,
    seq: Option<u64>,
    attempts: u32,
}

/// The originator's queue and window of one agreement, holding items of type `T`.
#[derive(Clone, Debug)]
pub struct Originator<T> {
    frames: VecDeque<Queued<T>>,
    next_seq: u64,
}

impl<T> Default for Originator<T> {
    fn default() -> Self {
        Originator {
            frames: VecDeque::new(),
            next_seq: 0,
        }
    }
}

/// What became of the MPDUs of one aggregate.
#[derive(Clone, Debug)]
pub struct Transmitted<T> {
    /// Received: (sequence number, item), in sequence order.
    pub received: Vec<(u64, T)>,
    /// Given up at the retry limit: (item, transmissions made).
    pub dropped: Vec<(T, u32)>,
    /// MPDUs of the aggregate that had been sent before.
    pub retransmissions: u64,
    /// The window start after the aggregate (the SSN of a Block Ack Request).
    pub win_start: u64,
}

impl<T> Originator<T> {
    /// Queues a new MPDU.
    pub fn push(&mut self, item: T) {
        self.frames.push_back(Queued {
            item,
            seq: None,
            attempts: 0,
        });
    }

    /// Nothing queued.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// The queued items, head first.
    pub fn items(&self) -> impl Iterator<Item = &T> {
        self.frames.iter().map(|q| &q.item)
    }

    /// Queued MPDUs awaiting retransmission (they are at the head).
    #[must_use]
    pub fn awaiting_retransmission(&self) -> usize {
        self.frames.iter().take_while(|q| q.seq.is_some()).count()
    }

    /// WinStartO: the oldest sequence number neither acknowledged nor given up.
    #[must_use]
    pub fn win_start(&self) -> u64 {
        self.frames
            .front()
            .and_then(|q| q.seq)
            .unwrap_or(self.next_seq)
    }

    /// MPDUs the next aggregate may carry under a window of `win_size`: those awaiting
    /// retransmission plus the free sequence numbers below WinStartO + `win_size`.
    #[must_use]
    pub fn window_limit(&self, win_size: u16) -> usize {
        let in_use = self.next_seq - self.win_start();
        let free = u64::from(win_size).saturating_sub(in_use);
        self.awaiting_retransmission() + usize::try_from(free).unwrap_or(usize::MAX)
    }

    /// The first `n` queued MPDUs went out; `lost()` says, MPDU by MPDU, whether one was lost.
    /// An MPDU lost at its `retry_limit`-th transmission is given up.
    pub fn transmitted(
        &mut self,
        n: usize,
        retry_limit: u32,
        lost: impl FnMut() -> bool,
    ) -> Transmitted<T> {
        let mut out = Transmitted::default();
        self.transmitted_into(n, retry_limit, lost, &mut out);
        out
    }

    /// [`Self::transmitted`] into `out` (cleared first), so a caller can keep its buffers
    /// from one aggregate to the next.
    pub fn transmitted_into(
        &mut self,
        n: usize,
        retry_limit: u32,
        mut lost: impl FnMut() -> bool,
        out: &mut Transmitted<T>,
    ) {
        out.received.clear();
        out.dropped.clear();
        out.retransmissions = 0;
        let n = n.min(self.frames.len());
        // The lost MPDUs that stay go back to the head, in order: the k-th of them to
        // position k (those before it were put back already, the others left).
        let mut kept = 0;
        for _ in 0..n {
            let Some(mut q) = self.frames.pop_front() else {
                break;
            };
            out.retransmissions += u64::from(q.attempts > 0);
            let seq = *q.seq.get_or_insert_with(|| {
                self.next_seq += 1;
                self.next_seq - 1
            });
            q.attempts += 1;
            if !lost() {
                out.received.push((seq, q.item));
            } else if q.attempts >= retry_limit {
                out.dropped.push((q.item, q.attempts));
            } else {
                self.frames.push_back(q);
                kept += 1;
            }
        }
        // The kept ones went to the back; rotate them to the head (the untouched rest keeps
        // its order behind them).
        let len = self.frames.len();
        if kept > 0 && kept < len {
            self.frames.rotate_right(kept);
        }
        out.win_start = self.win_start();
    }
}

impl<T> Default for Transmitted<T> {
    fn default() -> Self {
        Transmitted {
            received: Vec::new(),
            dropped: Vec::new(),
            retransmissions: 0,
            win_start: 0,
        }
    }
}

/// A receive reorder buffer holding items of type `T` (whatever the caller delivers).
#[derive(Clone, Debug)]
pub struct Reorder<T> {
    /// The next sequence number to release (mac80211 `head_seq_num`).
    head: u64,
    /// Frames received beyond a hole, by sequence number.
    held: BTreeMap<u64, T>,
}

impl<T> Default for Reorder<T> {
    fn default() -> Self {
        Reorder {
            head: 0,
            held: BTreeMap::new(),
        }
    }
}

impl<T> Reorder<T> {
    /// The next sequence number the buffer waits for.
    #[must_use]
    pub fn head(&self) -> u64 {
        self.head
    }

    /// Frames held behind a hole.
    #[must_use]
    pub fn held(&self) -> usize {
        self.held.len()
    }

    /// An MPDU with sequence number `seq` arrived; frames that are now in order are appended to
    /// `out`. A duplicate (below the head, or already held) is discarded, as mac80211 does.
    pub fn receive(&mut self, seq: u64, item: T, out: &mut Vec<T>) {
        if seq < self.head || self.held.contains_key(&seq) {
            return;
        }
        if seq == self.head && self.held.is_empty() {
            // In order with nothing held: straight out (the common case).
            out.push(item);
            self.head += 1;
            return;
        }
        self.held.insert(seq, item);
        self.release_in_order(out);
    }

    /// MPDUs with sequence numbers `seqs` arrived, if they are the next ones in order and
    /// nothing is held: the head moves past them and they are released as they are (true, the
    /// same as [`Self::receive`] of each in turn). Otherwise nothing changes (false) and the
    /// caller receives them one by one.
    pub fn receive_in_order(&mut self, seqs: impl Iterator<Item = u64>) -> bool {
        if !self.held.is_empty() {
            return false;
        }
        let mut next = self.head;
        for seq in seqs {
            if seq != next {
                return false;
            }
            next += 1;
        }
        self.head = next;
        true
    }

    /// A Block Ack Request with starting sequence number `ssn`: every held frame below `ssn` is
    /// released (in order, skipping the holes the originator gave up), then the frames in order
    /// from `ssn` on. Nothing happens if `ssn` is not beyond the head.
    pub fn release_before(&mut self, ssn: u64, out: &mut Vec<T>) {
        if ssn <= self.head {
            return;
        }
        let rest = self.held.split_off(&ssn);
        out.extend(std::mem::replace(&mut self.held, rest).into_values());
        self.head = ssn;
        self.release_in_order(out);
    }

    fn release_in_order(&mut self, out: &mut Vec<T>) {
        while let Some(item) = self.held.remove(&self.head) {
            out.push(item);
            self.head += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_counts_sequence_numbers_held_by_retransmissions() {
        let mut o = Originator::default();
        for i in 0..100 {
            o.push(i);
        }
        assert_eq!(o.window_limit(64), 64);
        // 0..64 sent; 5 and 9 lost: WinStartO = 5, 5..64 in use (59), 2 awaiting.
        let mut k = 0;
        let t = o.transmitted(64, 4, || {
            k += 1;
            k == 6 || k == 10
        });
        assert_eq!(t.received.len(), 62);
        assert_eq!((t.win_start, t.retransmissions), (5, 0));
        assert_eq!(o.items().take(3).copied().collect::<Vec<_>>(), [5, 9, 64]);
        assert_eq!(o.window_limit(64), 2 + 5);
        // Both lost again up to the limit: given up, the window moves on.
        let mut o2 = o.clone();
        let t = o2.transmitted(2, 2, || true);
        assert_eq!(t.dropped, vec![(5, 2), (9, 2)]);
        assert_eq!((t.win_start, t.retransmissions), (64, 2));
        assert_eq!(o2.window_limit(64), 64);
    }

    #[test]
    fn in_order_frames_pass_at_once() {
        let mut r = Reorder::default();
        let mut out = Vec::new();
        for s in 0..3 {
            r.receive(s, s, &mut out);
        }
        assert_eq!(out, vec![0, 1, 2]);
        assert_eq!((r.head(), r.held()), (3, 0));
    }

    #[test]
    fn a_run_in_order_passes_whole_and_anything_else_is_refused_unchanged() {
        // A run from the head with nothing held: released as `receive` one by one would.
        let mut r = Reorder::<u64>::default();
        assert!(r.receive_in_order(0..3));
        assert_eq!((r.head(), r.held()), (3, 0));
        // A gap, a duplicate or a frame held: refused, the buffer as it was.
        assert!(!r.receive_in_order([3, 5].into_iter()));
        assert!(!r.receive_in_order([2, 3].into_iter()));
        assert_eq!((r.head(), r.held()), (3, 0));
        let mut out = Vec::new();
        r.receive(4, 4, &mut out);
        assert!(!r.receive_in_order([3].into_iter()));
        assert_eq!((r.head(), r.held()), (3, 1));
    }

    #[test]
    fn a_reused_output_is_cleared_and_the_lost_stay_at_the_head_in_order() {
        let mut o = Originator::default();
        for i in 0..8 {
            o.push(i);
        }
        let mut out = Transmitted::default();
        // Second and fourth of each aggregate of 5 lost (retry limit 3).
        let losses = [false, true, false, true, false];
        let send = |o: &mut Originator<i32>, out: &mut Transmitted<i32>| {
            let mut k = 0;
            o.transmitted_into(
                5,
                3,
                || {
                    k += 1;
                    losses[k - 1]
                },
                out,
            );
        };
        send(&mut o, &mut out);
        assert_eq!(out.received, vec![(0, 0), (2, 2), (4, 4)]);
        assert_eq!(o.items().copied().collect::<Vec<_>>(), [1, 3, 5, 6, 7]);
        // 1 and 3 go again first (their sequence numbers kept); 3 and the new 6 are lost.
        send(&mut o, &mut out);
        assert_eq!(out.received, vec![(1, 1), (5, 5), (7, 7)]);
        assert!(out.dropped.is_empty());
        assert_eq!((out.retransmissions, out.win_start), (2, 3));
        assert_eq!(o.items().copied().collect::<Vec<_>>(), [3, 6]);
    }

    #[test]
    fn a_hole_holds_later_frames_until_filled() {
        let mut r = Reorder::default();
        let mut out = Vec::new();
        r.receive(0, 0, &mut out);
        r.receive(2, 2, &mut out);
        r.receive(3, 3, &mut out);
        assert_eq!(out, vec![0]);
        assert_eq!(r.held(), 2);
        r.receive(1, 1, &mut out);
        assert_eq!(out, vec![0, 1, 2, 3]);
        // A late duplicate is discarded.
        r.receive(2, 2, &mut out);
        assert_eq!(out.len(), 4);
    }

    #[test]
    fn a_block_ack_request_skips_the_given_up_hole() {
        let mut r = Reorder::default();
        let mut out = Vec::new();
        r.receive(1, 1, &mut out);
        r.receive(3, 3, &mut out);
        r.receive(5, 5, &mut out);
        assert!(out.is_empty());
        // Originator gave up 0 and 2 and its window now starts at 4 (4 still pending).
        r.release_before(4, &mut out);
        assert_eq!(out, vec![1, 3]);
        assert_eq!(r.head(), 4);
        r.receive(4, 4, &mut out);
        assert_eq!(out, vec![1, 3, 4, 5]);
        // An old SSN changes nothing.
        r.release_before(2, &mut out);
        assert_eq!(r.head(), 6);
    }
}
