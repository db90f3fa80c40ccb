//! RFC 6675 loss detection as ns-3's `TcpSocketBase` does it ([`LossDetection::DupThresh`]),
//! the alternative to RACK.
//!
//! Contract: after the scoreboard has taken an ACK, [`Sender::dupthresh_detect_loss`] marks
//! lost (1) every un-SACKed segment not yet passed that has at least `DupThresh` = 3 SACKed
//! segments above it (RFC 6675 §4 `IsLost`, ns-3 `TcpTxBuffer::IsLost`); (2) outside a
//! recovery, on the third duplicate ACK, the first unacknowledged segment (§5 step 1, ns-3
//! `TcpSocketBase::DupAck`: a duplicate ACK is one that SACKs new data, §2, and they are not
//! counted in Loss). Not modelled: the retransmission of the new first unacknowledged segment
//! on each partial ACK that later ns-3 sources show in `TcpSocketBase::ProcessAck`: with it the
//! ns-3 reference case `reroute` (VALIDATION.md) retransmits 471 segments where ns-3.37 itself
//! retransmits 118 (123 without it). Segments are judged once, in sequence order: a cursor remembers how far rule (1) has walked, so a
//! retransmission is never found lost again (only the timeout finds it, as RFC 6675's
//! `NextSeg` rule 1 retransmits each segment once). The work per ACK is the segments the
//! cursor passes plus the walk down from the highest SACKed segment to the third SACKed one.

use super::rack::DUP_THRESH;
use super::*;

impl Sender {
    /// Loss detection of one ACK; `dupack`: the ACK SACKed new data, `una_advanced`: it
    /// acknowledged new data cumulatively. Runs before the recovery state machine sees the
    /// ACK, so the state is the one the ACK found.
    pub(super) fn dupthresh_detect_loss(&mut self, now: Time, dupack: bool, una_advanced: bool) {
        let state = self.rec.state();
        self.dt_cursor = self.dt_cursor.max(self.snd_una);
        // ns-3 `ProcessAck`: a cumulative ACK that is not also a duplicate resets the count.
        if una_advanced && !dupack {
            self.dupacks = 0;
        }
        if dupack && !matches!(state, CaState::Recovery | CaState::Loss) {
            self.dupacks += 1;
            if self.dupacks == DUP_THRESH {
                self.mark_head_lost(now);
            }
        }
        if self.sacked_out >= DUP_THRESH {
            let bound = self.third_sacked_from_top();
            while self.dt_cursor < bound {
                let seq = self.dt_cursor;
                let s = self.segs[slot(seq - self.snd_una)];
                if !s.has(F_SACKED) && !s.has(F_LOST) && !s.has(F_EVER_RETRANS) {
                    self.mark_lost(now, seq);
                }
                self.dt_cursor += 1;
            }
        }
    }

    /// Mark the first unacknowledged segment lost unless it is SACKed, already marked, or
    /// was retransmitted (ns-3 retransmits it once, then waits for the timeout).
    fn mark_head_lost(&mut self, now: Time) {
        if self.snd_una >= self.snd_nxt {
            return;
        }
        let head = self.segs[0];
        if !head.has(F_SACKED) && !head.has(F_LOST) && !head.has(F_EVER_RETRANS) {
            self.mark_lost(now, self.snd_una);
        }
    }

    /// The sequence number of the third SACKed segment counted down from the highest: every
    /// segment below it has at least `DupThresh` SACKed segments above it.
    fn third_sacked_from_top(&self) -> u64 {
        let mut found = 0;
        let mut seq = self.fack;
        while seq > self.dt_cursor && seq > self.snd_una {
            seq -= 1;
            if self.segs[slot(seq - self.snd_una)].has(F_SACKED) {
                found += 1;
                if found == DUP_THRESH {
                    return seq;
                }
            }
        }
        self.dt_cursor
    }
}
