//! RACK-TLP loss detection (RFC 8985; Linux `tcp_recovery.c`, `tcp_schedule_loss_probe`,
//! `tcp_send_loss_probe`, `tcp_process_tlp_ack`) and the retransmission timer arming.
//!
//! Contract: delivered segments advance the RACK state (the most recently sent delivered
//! segment and its RTT); [`Sender::rack_detect_loss`] walks the send-time-ordered list from its
//! old end and marks lost what was sent before the RACK segment more than RACK RTT + reo_wnd
//! ago, arming the reordering timer for the next candidate. [`Sender::rearm_timer`] arms a
//! probe timeout (PTO) in Open/CWR outside a probe episode, else the RTO.

use super::*;

/// RFC 8985 §7.2 / Linux `tcp_schedule_loss_probe`: extra PTO time when one segment is out
/// (worst-case delayed ACK, `TCP_RTO_MIN`).
pub(super) const TLP_SINGLE_EXTRA: Dur = RTO_MIN;
/// Linux `TCP_TIMEOUT_MIN` (2 jiffies ≈ 2 ms) added to the PTO otherwise.
pub(super) const TLP_EXTRA: Dur = Dur::from_millis(2);
/// RFC 6675 DupThresh / Linux `tcp_reordering` default.
pub(super) const DUP_THRESH: u32 = 3;
/// Recoveries a widened reordering window is kept for (Linux `TCP_RACK_RECOVERY_THRESH`,
/// RFC 8985 §6.2 step 4: "after 16 loss recoveries").
pub(super) const RACK_RECOVERY_THRESH: u32 = 16;

impl Sender {
    /// RACK and reordering bookkeeping shared by SACKed and cumulatively acknowledged
    /// segments.
    pub(super) fn on_delivered_rack(&mut self, now: Time, seq: u64, seg: Seg, prior_fack: u64) {
        // RACK (RFC 8985 §6.2 steps 1–2; Linux tcp_rack_advance).
        let sent = seg.rec.sent_time;
        let rtt = now.saturating_since(sent);
        let min_rtt = self.rtt.min_rtt().unwrap_or(Dur::ZERO);
        if !(seg.tx_count > 0 && rtt < min_rtt) {
            self.rack_rtt = rtt;
            if sent > self.rack_xmit || (sent == self.rack_xmit && seq + 1 > self.rack_end) {
                self.rack_xmit = sent;
                self.rack_end = seq + 1;
            }
            self.rack_advanced = true;
        }
        // Reordering: a never-retransmitted segment below the highest delivered (RFC 8985 §6.2
        // step 3).
        if seg.tx_count == 0 && seq + 1 < prior_fack {
            self.reordering_seen = true;
        }
    }

    /// RFC 8985 §6.2 step 4: the reordering window.
    #[must_use]
    pub fn reo_wnd(&self) -> Dur {
        // Linux `tcp_rack_reo_wnd`: `icsk_ca_state >= TCP_CA_Recovery` (Recovery or Loss).
        if !self.reordering_seen
            && (matches!(self.rec.state(), CaState::Recovery | CaState::Loss)
                || self.sacked_out >= DUP_THRESH)
        {
            return Dur::ZERO;
        }
        // Linux `tcp_rack_reo_wnd`: min_RTT/4 per step (`reo_wnd_steps`), at most SRTT.
        let min_rtt = self.rtt.min_rtt().unwrap_or(Dur::ZERO);
        let w = Dur((min_rtt.0 / 4).saturating_mul(u64::from(self.reo_wnd_steps)));
        match self.rtt.srtt() {
            Some(s) => w.min(s),
            None => w,
        }
    }

    /// RFC 8985 §6.2 step 5 (Linux `tcp_rack_detect_loss`), walking the send-ordered list.
    pub(super) fn rack_detect_loss(&mut self, now: Time) {
        // Computed only if a segment sent before the RACK segment is still outstanding (rare
        // without loss: the front of the list is usually acknowledged).
        let mut reo = None;
        self.reo_at = None;
        while let Some(&(seq, ts)) = self.tsorted.front() {
            let valid = seq >= self.snd_una && {
                let s = &self.segs[slot(seq - self.snd_una)];
                // Stale: re-sent since, SACKed, or marked lost and awaiting retransmission.
                s.rec.sent_time == ts && !s.has(F_SACKED) && (s.has(F_RETRANS) || !s.has(F_LOST))
            };
            if !valid {
                self.tsorted.pop_front();
                continue;
            }
            // Only segments sent before the RACK segment can be judged.
            if !(ts < self.rack_xmit || (ts == self.rack_xmit && seq + 1 < self.rack_end)) {
                break;
            }
            let reo = *reo.get_or_insert_with(|| self.reo_wnd());
            let deadline = ts + self.rack_rtt + reo;
            if deadline <= now {
                self.tsorted.pop_front();
                self.mark_lost(now, seq);
            } else {
                self.reo_at = Some(deadline);
                break;
            }
        }
    }

    pub(super) fn send_loss_probe(&mut self, now: Time, out: &mut Vec<Outgoing>) {
        if self.snd_nxt == self.snd_una {
            return;
        }
        self.counters.tlps += 1;
        let stamp = self.wstamp.max(now);
        if self.snd_nxt < self.app_end {
            let len = self.seg_len(self.snd_nxt);
            self.transmit_new(now, stamp, 1, out);
            self.after_skb(now, stamp, 1, len, out);
            self.tlp_retrans = false;
        } else {
            let seq = self.snd_nxt - 1;
            let i = slot(seq - self.snd_una);
            if self.segs[i].has(F_SACKED) {
                self.timer = Some((Timer::Rto, now + self.rto_interval()));
                return;
            }
            self.retransmit(now, stamp, seq, out);
            self.after_skb(now, stamp, 1, self.seg_len(seq), out);
            self.tlp_retrans = true;
        }
        self.tlp_high_seq = Some(self.snd_nxt);
        self.timer = Some((Timer::Rto, now + self.rto_interval()));
    }

    pub(super) fn rearm_timer(&mut self, now: Time) {
        if self.snd_nxt == self.snd_una {
            self.timer = None;
            self.reo_at = None;
            if self.adv_wnd.is_some() {
                self.check_probe_timer(now);
            }
            return;
        }
        let rto = self.rto_interval();
        let tlp_ok = self.rules.tlp
            && self.tlp_high_seq.is_none()
            && matches!(self.rec.state(), CaState::Open | CaState::Cwr);
        if tlp_ok {
            let packets_out = self.snd_nxt - self.snd_una;
            let pto = match self.rtt.srtt() {
                Some(s) => {
                    Dur(2 * s.0)
                        + if packets_out == 1 {
                            TLP_SINGLE_EXTRA
                        } else {
                            TLP_EXTRA
                        }
                }
                None => Dur::from_secs(1),
            };
            self.timer = Some((Timer::Probe, now + pto.min(rto)));
        } else {
            self.timer = Some((Timer::Rto, now + rto));
        }
    }

    /// TLP outcome (Linux `tcp_process_tlp_ack`) of an ACK for `ack`: a probe that sent new
    /// data, or whose retransmission was reported as a duplicate (DSACK), or a pure duplicate
    /// ACK after it, ends the episode; an ACK beyond the probe without DSACK means the probe
    /// repaired a loss, which is answered with one cwnd reduction (returns true).
    pub(super) fn tlp_ack(
        &mut self,
        ack: u64,
        dsack: bool,
        una_advanced: bool,
        acked_sacked: u32,
    ) -> bool {
        let mut tlp_reduce = false;
        if let Some(h) = self.tlp_high_seq
            && ack >= h
        {
            if !self.tlp_retrans || dsack {
                self.tlp_high_seq = None;
            } else if ack > h {
                self.tlp_high_seq = None;
                tlp_reduce = true;
            } else if !una_advanced && acked_sacked == 0 {
                self.tlp_high_seq = None;
            }
        }
        tlp_reduce
    }
}
