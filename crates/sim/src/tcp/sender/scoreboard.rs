//! The SACK scoreboard (Linux `tcp_sacktag_write_queue`, `tcp_clean_rtx_queue`,
//! `tcp_mark_skb_lost`): one entry per segment from SND.UNA to SND.NXT with its flags (SACKed,
//! lost, retransmitted) and its delivery-rate record.
//!
//! Contract: per ACK, [`Sender::sacktag`] takes in the SACK blocks (minus the previous ACK's,
//! the `recv_sack_cache`), then [`Sender::clean_rtx_queue`] removes what is cumulatively
//! acknowledged; each newly delivered segment goes to the rate sampler and to RACK. The
//! counters `sacked_out`, `lost_out`, `retrans_out` follow every flag change, so in-flight is
//! O(1). Lost segments wait in a min-heap for retransmission, lowest first.

use super::*;
use crate::packet::SackBlocks;

/// RTT evidence gathered while the scoreboard takes in an ACK (for `tcp_ack_update_rtt`).
#[derive(Clone, Copy, Debug)]
pub(super) struct AckedTimes {
    /// Earliest send time of a never-retransmitted, cumulatively acknowledged segment.
    pub(super) rtt_first: Option<Time>,
    /// Latest send time of a never-retransmitted delivered segment.
    pub(super) rtt_last: Option<Time>,
    /// Earliest send time of a never-retransmitted SACKed segment.
    pub(super) sack_first: Option<Time>,
    /// Some retransmitted segment was delivered.
    pub(super) any_retrans_acked: bool,
    /// Some retransmitted segment was cumulatively acknowledged (Linux
    /// `FLAG_RETRANS_DATA_ACKED`).
    pub(super) retrans_cum_acked: bool,
    /// Lowest end of a never-retransmitted segment newly SACKed (F-RTO's
    /// `FLAG_ORIG_SACK_ACKED` when at most `high_seq`; the cumulatively acknowledged ones:
    /// [`Sender::orig_cum_end`]); `u64::MAX`: none.
    pub(super) orig_first_end: u64,
    /// Some segment was newly SACKed (Linux `FLAG_DATA_SACKED`).
    pub(super) newly_sacked: bool,
}

impl Default for AckedTimes {
    fn default() -> Self {
        Self {
            rtt_first: None,
            rtt_last: None,
            sack_first: None,
            any_retrans_acked: false,
            retrans_cum_acked: false,
            orig_first_end: u64::MAX,
            newly_sacked: false,
        }
    }
}

impl Sender {
    /// Take in the SACK blocks of an ACK for `ack` (Linux `tcp_sacktag_write_queue`), skipping
    /// the DSACK block and what the previous ACK already reported (`recv_sack_cache`): every
    /// newly SACKed segment is delivered.
    #[expect(
        clippy::too_many_arguments,
        reason = "the ACK's fields and the per-ACK accumulators, each a plain value"
    )]
    #[inline]
    pub(super) fn sacktag(
        &mut self,
        now: Time,
        ack: u64,
        packed: &SackBlocks,
        dsack: bool,
        rs: &mut RateAck,
        prior_fack: u64,
        t: &mut AckedTimes,
    ) {
        let n_blocks = packed.len();
        if n_blocks == 0 {
            // The common ACK: nothing to tag, and nothing reported for the next one to skip.
            self.n_sack_cache = 0;
            return;
        }
        // SACK blocks (skipping the DSACK block), minus what the previous ACK already reported.
        let mut sack = [SeqRange::default(); MAX_SACK_BLOCKS];
        for (i, b) in sack.iter_mut().enumerate().take(n_blocks) {
            *b = packed.get(ack, i);
        }
        let first = usize::from(dsack).min(n_blocks);
        let blocks = &sack[first..n_blocks];
        for b in blocks {
            let lo = b.start.max(ack);
            let hi = b.end.min(self.snd_nxt);
            if lo >= hi {
                continue;
            }
            let mut pieces = [(lo, hi); 1 + MAX_SACK_BLOCKS];
            let mut np = 1;
            for c in &self.sack_cache[..self.n_sack_cache] {
                let mut next = [(0, 0); 1 + MAX_SACK_BLOCKS];
                let mut nn = 0;
                for &(s, e) in &pieces[..np] {
                    // subtract [c.start, c.end) from [s, e)
                    if c.end <= s || c.start >= e {
                        next[nn] = (s, e);
                        nn += 1;
                    } else {
                        if c.start > s {
                            next[nn] = (s, c.start);
                            nn += 1;
                        }
                        if c.end < e && nn < next.len() {
                            next[nn] = (c.end, e);
                            nn += 1;
                        }
                    }
                }
                pieces = next;
                np = nn;
            }
            for &(s, e) in &pieces[..np] {
                for seq in s..e {
                    let i = slot(seq - self.snd_una);
                    let seg = self.segs[i];
                    if seg.has(F_SACKED) {
                        continue;
                    }
                    self.segs[i].flags |= F_SACKED;
                    self.sacked_out += 1;
                    t.newly_sacked = true;
                    self.on_sacked(now, seq, seg, rs, prior_fack);
                    let sent = seg.rec.sent_time;
                    if seg.tx_count == 0 {
                        t.sack_first = Some(t.sack_first.map_or(sent, |t| t.min(sent)));
                        t.rtt_last = Some(t.rtt_last.map_or(sent, |t| t.max(sent)));
                        t.orig_first_end = t.orig_first_end.min(seq + 1);
                    } else {
                        t.any_retrans_acked = true;
                    }
                    self.fack = self.fack.max(seq + 1);
                }
            }
        }
        self.n_sack_cache = blocks.len();
        // Element by element: a slice copy of a run-time length is a `memcpy` call.
        for (cached, b) in self.sack_cache.iter_mut().zip(blocks) {
            *cached = *b;
        }
    }

    /// Remove the cumulatively acknowledged segments below `ack` (Linux `tcp_clean_rtx_queue`):
    /// those not SACKed before are delivered now.
    #[inline]
    pub(super) fn clean_rtx_queue(
        &mut self,
        now: Time,
        ack: u64,
        rs: &mut RateAck,
        prior_fack: u64,
        t: &mut AckedTimes,
    ) {
        while self.snd_una < ack {
            let seg = self
                .segs
                .pop_front()
                .expect("scoreboard shorter than window");
            let seq = self.snd_una;
            self.snd_una += 1;
            if seg.has(F_SACKED) {
                self.sacked_out -= 1;
                continue;
            }
            if seg.has(F_LOST) {
                self.lost_out -= 1;
            }
            if seg.has(F_RETRANS) {
                self.retrans_out -= 1;
            }
            // The entry is gone: the bookkeeping below works on a copy.
            let mut s = seg;
            self.on_delivered(now, seq, &mut s, rs, prior_fack);
            let sent = seg.rec.sent_time;
            if seg.tx_count == 0 {
                t.rtt_first = Some(t.rtt_first.map_or(sent, |t| t.min(sent)));
                t.rtt_last = Some(t.rtt_last.map_or(sent, |t| t.max(sent)));
            } else {
                t.any_retrans_acked = true;
                t.retrans_cum_acked = true;
            }
            self.fack = self.fack.max(seq + 1);
        }
    }

    /// End of the lowest never-retransmitted segment below `ack` not SACKed (F-RTO's
    /// `FLAG_ORIG_SACK_ACKED` from `tcp_clean_rtx_queue`), `u64::MAX` if none; called before
    /// [`Sender::clean_rtx_queue`] removes them, and only while F-RTO runs (its only reader),
    /// so that the cumulative ACK's loop does no work for it.
    #[cold]
    pub(super) fn orig_cum_end(&self, ack: u64) -> u64 {
        (self.snd_una..ack)
            .find(|&q| {
                let s = &self.segs[slot(q - self.snd_una)];
                !s.has(F_SACKED) && s.tx_count == 0
            })
            .map_or(u64::MAX, |q| q + 1)
    }

    /// A segment was newly SACKed (still in the scoreboard; `seg` is a copy taken before).
    pub(super) fn on_sacked(
        &mut self,
        now: Time,
        seq: u64,
        seg: Seg,
        rs: &mut RateAck,
        prior_fack: u64,
    ) {
        let i = slot(seq - self.snd_una);
        if seg.has(F_LOST) {
            self.lost_out -= 1;
            self.segs[i].flags &= !F_LOST;
        }
        if seg.has(F_RETRANS) {
            self.retrans_out -= 1;
            self.segs[i].flags &= !F_RETRANS;
        }
        // The rate record in the scoreboard is marked used, so the later cumulative ACK of
        // this segment does not sample it again.
        self.rate.on_delivered(rs, &mut self.segs[i].rec, seq);
        self.on_delivered_rack(now, seq, seg, prior_fack);
    }

    /// A segment was newly acknowledged cumulatively (`seg`: its entry, already removed).
    pub(super) fn on_delivered(
        &mut self,
        now: Time,
        seq: u64,
        seg: &mut Seg,
        rs: &mut RateAck,
        prior_fack: u64,
    ) {
        self.rate.on_delivered(rs, &mut seg.rec, seq);
        self.on_delivered_rack(now, seq, *seg, prior_fack);
    }

    pub(super) fn mark_lost(&mut self, now: Time, seq: u64) {
        let i = slot(seq - self.snd_una);
        let seg = &mut self.segs[i];
        if seg.has(F_RETRANS) {
            seg.flags &= !F_RETRANS;
            self.retrans_out -= 1;
        }
        if !seg.has(F_LOST) {
            seg.flags |= F_LOST;
            self.lost_out += 1;
        }
        let rec = seg.rec;
        let info = self.rate.on_lost(&rec);
        self.counters.lost += 1;
        self.lost_q.push(Reverse(seq));
        self.cc.on_packet_lost(now, &mut self.st, &info);
    }

    pub(super) fn next_lost(&mut self) -> Option<u64> {
        while let Some(&Reverse(seq)) = self.lost_q.peek() {
            if seq >= self.snd_una {
                let s = &self.segs[slot(seq - self.snd_una)];
                if s.has(F_LOST) && !s.has(F_RETRANS) && !s.has(F_SACKED) {
                    return Some(seq);
                }
            }
            self.lost_q.pop();
        }
        None
    }
}
