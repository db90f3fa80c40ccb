//! ACK processing of the QUIC sender (RFC 9002 §A.7 `OnAckReceived`) and the controller hooks
//! it drives, in the order the module doc of [`crate::quic`] states.
//!
//! Contract: [`Sender::on_ack`] marks the packets an ACK frame newly acknowledges (feeding the
//! delivery-rate sampler), takes the RTT sample (RFC 9002 §5.1: only when the largest
//! acknowledged packet is newly acknowledged), answers an ECN-CE count increase, runs loss
//! detection, calls the controller and sends what the window then allows. An ACK that
//! acknowledges nothing new changes nothing but the ACK counter.

use cclab_cc::{AckInfo, CaState, Dur, EcnMode, Time};

use super::{PING, PktState, Sender, Sent};
use crate::quic::{AckFrame, quantise};

/// RFC 9002 §7.2 kMinimumWindow: 2 packets.
pub const MIN_WINDOW: u32 = 2;

impl Sender {
    /// An ACK frame arrived at `now`.
    pub fn on_ack(&mut self, now: Time, f: &AckFrame, out: &mut Vec<Sent>) {
        let now = quantise(now, self.granularity);
        self.counters.acks_received += 1;
        if f.largest >= self.next_pn {
            return; // acknowledges a packet never sent: ignored
        }
        let prior_in_flight = self.in_flight;
        let mut ra = self.rate.begin_ack();
        let mut newly = 0u32;
        let mut newest_sent: Option<Time> = None;
        let mut largest_sent: Option<Time> = None;
        let mut next_prev = [(0, 0); crate::quic::frame::MAX_ACK_RANGES];
        let mut next_n = 0;
        for (lo, hi) in f.ranges() {
            if next_n < next_prev.len() {
                next_prev[next_n] = (lo, hi);
                next_n += 1;
            }
            if hi < self.base {
                continue; // ranges come highest first; kept for the next frame only
            }
            // The parts of [lo, hi] the previous frame did not acknowledge, in ascending
            // order (the packets in its ranges are acknowledged already).
            let (parts, np) = uncovered(lo.max(self.base), hi, &self.prev_ranges[..self.prev_n]);
            for &(plo, phi) in parts[..np].iter().rev() {
                for pn in plo..=phi {
                    let i = usize::try_from(pn - self.base).expect("below next_pn");
                    let p = &mut self.sent[i];
                    match p.state {
                        PktState::Acked => continue,
                        PktState::Lost => self.counters.spurious_losses += 1,
                        PktState::Outstanding => self.in_flight -= 1,
                    }
                    p.state = PktState::Acked;
                    self.rate.on_delivered(&mut ra, &mut p.rec, pn);
                    newly += 1;
                    newest_sent = Some(newest_sent.map_or(p.sent, |t| t.max(p.sent)));
                    if pn == f.largest {
                        largest_sent = Some(p.sent);
                    }
                    if p.chunk != PING {
                        self.acked.mark(p.chunk);
                    }
                }
            }
        }
        self.prev_ranges = next_prev;
        self.prev_n = next_n;
        if newly == 0 {
            return;
        }
        let prev_largest = self.largest_acked;
        self.largest_acked = Some(prev_largest.map_or(f.largest, |l| l.max(f.largest)));
        let mut rtt = None;
        if let Some(t) = largest_sent {
            // RFC 9002 §5.1: all packets here are ack-eliciting.
            let latest = now.saturating_since(t);
            let delay = Dur(quantise(
                Time(Dur::from_micros(u64::from(f.ack_delay_us)).0),
                self.granularity,
            )
            .0);
            self.rtt.update(latest, delay, self.max_ack_delay);
            self.first_rtt_sample.get_or_insert(now);
            self.rtt_hist.record(latest.as_nanos());
            rtt = Some(latest);
        }
        // RFC 9002 §6.2.1: the PTO backoff is reset when an acknowledgement arrives.
        self.pto_count = 0;
        // RFC 9000 §13.4.2.1: ECN counts are read from ACKs that raise the largest acknowledged.
        if prev_largest.is_none_or(|l| f.largest > l) {
            let delta = f.ce_count.wrapping_sub(self.ce_seen);
            if delta > 0 && delta < 0x8000 {
                self.ce_seen = f.ce_count;
                self.rate.add_delivered_ce(u64::from(delta));
                self.counters.ce_echoed += u64::from(delta);
                if self.ecn != EcnMode::Off && !self.cc.handles_ce() {
                    self.congestion_event(now, newest_sent, true);
                }
            }
        }
        let losses = self.detect_lost(now);
        let mut rs = self.rate.generate(now, &ra, losses, self.rtt.min);
        rs.rtt = rtt;
        let info = self.ack_info(now, newly, rtt, prior_in_flight);
        self.cc.pkts_acked(now, &mut self.st, &info);
        if self.ca != CaState::Open && newest_sent.is_some_and(|t| t > self.state_since) {
            self.ca = CaState::Open;
            self.cc.set_state(now, &mut self.st, CaState::Open);
        }
        let info = AckInfo {
            ca_state: Some(self.ca),
            ..info
        };
        self.owns_cwnd = self.cc.cong_control(now, &mut self.st, &rs, &info);
        if !self.owns_cwnd
            && !matches!(self.ca, CaState::Recovery | CaState::Cwr)
            && (self.cwnd_limited || self.cc_grows_unlimited)
        {
            self.cc.cong_avoid(now, &mut self.st, newly, &info);
        }
        self.st.cwnd = self.st.cwnd.max(1);
        self.min_cwnd = self.min_cwnd.min(self.st.cwnd);
        self.pop_done(now);
        self.send(now, out);
    }

    /// What the controller is told on this ACK (or at a congestion event).
    pub(super) fn ack_info(
        &self,
        now: Time,
        newly: u32,
        rtt: Option<Dur>,
        prior_in_flight: u32,
    ) -> AckInfo {
        AckInfo {
            acked_sacked: newly,
            pkts_acked: newly,
            rtt,
            srtt: self.srtt(),
            min_rtt: self.rtt.min,
            in_flight: self.in_flight,
            prior_in_flight,
            is_cwnd_limited: self.cwnd_limited,
            paced: self.paced(),
            snd_nxt: self.next_pn,
            // Round tracking by packet number: everything up to the largest acknowledged.
            snd_una: self.largest_acked.map_or(0, |l| l + 1),
            ca_state: Some(self.ca),
            total_lost: self.rate.lost(),
            total_delivered_ce: self.rate.delivered_ce(),
            wstamp: self.pace_at.max(now),
            ce_reduction: false,
        }
    }

    /// A congestion signal about a packet sent at `sent` (RFC 9002 §B.6
    /// `OnCongestionEvent`): a new episode unless that packet was sent before the current one
    /// began (§7.3.2), with one `ssthresh` call and cwnd = ssthresh at once.
    pub(super) fn congestion_event(&mut self, now: Time, sent: Option<Time>, ce: bool) {
        let Some(sent) = sent else { return };
        if self.episode.is_some_and(|start| sent <= start) {
            return;
        }
        self.episode = Some(now);
        let info = AckInfo {
            ce_reduction: ce,
            ..self.ack_info(now, 0, None, self.in_flight)
        };
        let ssthresh = self.cc.ssthresh(now, &self.st, &info);
        self.st.ssthresh = ssthresh;
        if !self.owns_cwnd {
            self.st.cwnd = ssthresh.max(MIN_WINDOW);
        }
        self.ca = if ce { CaState::Cwr } else { CaState::Recovery };
        self.state_since = now;
        if ce {
            self.counters.ecn_reductions += 1;
        } else {
            self.counters.recoveries += 1;
        }
        self.cc.set_state(now, &mut self.st, self.ca);
        self.min_cwnd = self.min_cwnd.min(self.st.cwnd);
    }
}

/// The sub-ranges of `[lo, hi]` outside every range of `covered` (disjoint, highest first), in
/// descending order: at most one more than `covered` has.
fn uncovered(
    lo: u64,
    hi: u64,
    covered: &[(u64, u64)],
) -> ([(u64, u64); crate::quic::frame::MAX_ACK_RANGES + 1], usize) {
    let mut out = [(0, 0); crate::quic::frame::MAX_ACK_RANGES + 1];
    let mut n = 0;
    if lo > hi {
        return (out, 0);
    }
    let mut top = hi; // highest value not yet placed
    let mut open = true; // whether [lo, top] still holds values
    for &(clo, chi) in covered {
        if !open || chi < lo {
            break;
        }
        if clo > top {
            continue;
        }
        if chi < top {
            out[n] = (chi + 1, top);
            n += 1;
        }
        if clo <= lo {
            open = false;
        } else {
            top = clo - 1;
        }
    }
    if open {
        out[n] = (lo, top);
        n += 1;
    }
    (out, n)
}

#[cfg(test)]
mod tests {
    use super::uncovered;

    /// The parts of a range outside earlier ranges, checked against a value-by-value count.
    #[test]
    fn uncovered_parts_are_exactly_the_values_outside_the_covered_ranges() {
        let covered = [(40, 45), (20, 30), (5, 8)];
        for lo in 0..50 {
            for hi in lo..50 {
                let (parts, n) = uncovered(lo, hi, &covered);
                let mut got: Vec<u64> = parts[..n].iter().rev().flat_map(|&(a, b)| a..=b).collect();
                let want: Vec<u64> = (lo..=hi)
                    .filter(|v| !covered.iter().any(|&(a, b)| (a..=b).contains(v)))
                    .collect();
                assert_eq!(got, want, "[{lo}, {hi}]");
                got.dedup();
                assert_eq!(got.len(), want.len());
            }
        }
        assert_eq!(uncovered(3, 2, &covered).1, 0);
    }
}
