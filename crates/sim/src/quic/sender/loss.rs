//! Loss detection of the QUIC sender (RFC 9002 §6, §A.9–A.10), the PTO and persistent
//! congestion (§7.6).
//!
//! Contract: `detect_lost` declares lost every outstanding packet below the largest
//! acknowledged that is [`PACKET_THRESHOLD`] packets older than it (§6.1.1) or was sent at
//! least the loss delay 9/8·max(srtt, latest_rtt) (floor 1 ms, §6.1.2) ago, arms the loss
//! timer for the earliest packet not yet old enough, queues lost stream chunks for
//! retransmission in new packets and reports each loss to the rate sampler and the controller;
//! a loss starts a congestion episode unless the newest lost packet predates the current one
//! (§7.3.2). Persistent congestion (§7.6.2): among the packets declared lost in one pass and
//! sent after the first RTT sample, two whose send times lie more than
//! (srtt + max(4·rttvar, 1 ms) + max_ack_delay) × 3 apart with no packet sent between them
//! acknowledged → cwnd = the minimum window. [`Sender::on_wake`] runs the loss timer or the
//! PTO (§6.2: no window change, two probes, the period doubling per consecutive PTO).

use cclab_cc::{CaState, Dur, Time};

use super::ack::MIN_WINDOW;
use super::{PING, PktState, Sender, Sent};
use crate::quic::quantise;

/// kPacketThreshold (RFC 9002 §6.1.1; quicly `QUICLY_LOSS_DEFAULT_PACKET_THRESHOLD`).
pub const PACKET_THRESHOLD: u64 = 3;

/// kPersistentCongestionThreshold (RFC 9002 §7.6.1).
pub const PERSISTENT_CONGESTION_THRESHOLD: u64 = 3;

/// Probe packets sent per PTO (RFC 9002 §6.2.4 allows up to two; quicly sends two).
pub const PTO_PROBES: u32 = 2;

impl Sender {
    /// RFC 9002 §A.10 `DetectAndRemoveLostPackets` plus `OnPacketsLost`: returns the number of
    /// packets declared lost now.
    pub(super) fn detect_lost(&mut self, now: Time) -> u32 {
        self.loss_time = None;
        let Some(largest) = self.largest_acked else {
            return 0;
        };
        let loss_delay = self.rtt.loss_delay();
        let pc_duration =
            Dur(self.rtt.pto_base(self.max_ack_delay).0 * PERSISTENT_CONGESTION_THRESHOLD);
        let mut lost = 0u32;
        let mut newest_lost: Option<Time> = None;
        // Persistent-congestion run: send time of its first lost packet.
        let mut run_start: Option<Time> = None;
        let mut persistent = false;
        // Packets below `first_outstanding` are acknowledged or lost already: skipping them
        // changes nothing (no run has started before the first newly lost packet).
        let mut first = usize::try_from(self.first_outstanding.saturating_sub(self.base))
            .expect("within the sent window");
        while first < self.sent.len() && self.sent[first].state != PktState::Outstanding {
            first += 1;
        }
        self.first_outstanding = self.base + first as u64;
        for i in first..self.sent.len() {
            let pn = self.base + i as u64;
            if pn > largest {
                break;
            }
            let p = self.sent[i];
            match p.state {
                PktState::Acked => {
                    run_start = None;
                    continue;
                }
                PktState::Lost => continue,
                PktState::Outstanding => {}
            }
            let by_time = p.sent + loss_delay <= now;
            let by_count = largest >= pn + PACKET_THRESHOLD;
            if !(by_time || by_count) {
                // Packet numbers and send times only grow, so no later packet is lost by
                // either threshold, and this one has the earliest deadline (RFC 9002 §A.10's
                // minimum over the unlost packets).
                self.loss_time = Some(p.sent + loss_delay);
                break;
            }
            self.sent[i].state = PktState::Lost;
            self.in_flight -= 1;
            self.counters.lost += 1;
            lost += 1;
            if p.chunk != PING && !self.acked.contains(p.chunk) {
                self.retx.push_back(p.chunk);
            }
            let li = self.rate.on_lost(&p.rec);
            self.cc.on_packet_lost(now, &mut self.st, &li);
            newest_lost = Some(newest_lost.map_or(p.sent, |t| t.max(p.sent)));
            if self.first_rtt_sample.is_some_and(|t0| p.sent > t0) {
                let start = *run_start.get_or_insert(p.sent);
                if p.sent.saturating_since(start) > pc_duration {
                    persistent = true;
                }
            }
        }
        if lost > 0 {
            self.congestion_event(now, newest_lost, false);
        }
        if persistent {
            // RFC 9002 §7.6.2: collapse to the minimum window; the episode is over.
            self.counters.persistent_congestions += 1;
            self.st.cwnd = MIN_WINDOW;
            self.episode = None;
            self.ca = CaState::Loss;
            self.state_since = now;
            self.cc.set_state(now, &mut self.st, CaState::Loss);
            self.min_cwnd = self.min_cwnd.min(self.st.cwnd);
        }
        lost
    }

    /// The sender's timer (see [`Sender::next_wakeup`]) at `now`.
    pub fn on_wake(&mut self, now: Time, out: &mut Vec<Sent>) {
        let now = quantise(now, self.granularity);
        if let Some(t) = self.loss_time {
            if t <= now {
                self.detect_lost(now);
                self.pop_done(now);
            }
        } else if self.pto_deadline().is_some_and(|t| t <= now) {
            self.pto_count += 1;
            self.counters.ptos += 1;
            self.probes_due = PTO_PROBES;
        }
        self.send(now, out);
    }
}
