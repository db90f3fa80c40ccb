//! The recipient's side of a Block Ack agreement: the receive reorder buffer of one
//! (originator, recipient, TID).
//!
//! Contract: [`Reorder`] takes MPDUs as they arrive (any order, within the originator's window)
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

use std::collections::BTreeMap;

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
        self.held.insert(seq, item);
        self.release_in_order(out);
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
