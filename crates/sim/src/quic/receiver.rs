//! The QUIC receiver: packet-number tracking, ACK generation (RFC 9000 §13.2) and in-order
//! delivery of the stream.
//!
//! Contract: [`Receiver::on_packet`] takes every arriving packet (its number, stream chunk and
//! ECN codepoint) at `now` and returns the ACK frame to send at once, if any; otherwise
//! [`Receiver::ack_deadline`] says when the delayed ACK is due and [`Receiver::on_timer`]
//! sends it. ACK policy: every `ack_eliciting_threshold`-th ack-eliciting packet (§13.2.2: 2),
//! at once for a packet that arrives out of order (below the largest received, or above it
//! with a gap, §13.2.1) or carries CE (§13.2.1), else within max_ack_delay (§13.2.1; quicly
//! `QUICLY_DELAYED_ACK_TIMEOUT`, 25 ms). The ACK Delay is the time since the largest
//! acknowledged packet arrived (§13.2.5). The stream's chunks are delivered in order:
//! [`Receiver::chunks_delivered`] is the length of the received prefix. Times are rounded to
//! the flow's clock granularity.

use cclab_cc::{Dur, Time};

use super::{AckFrame, PING, SeqSet, quantise, quantise_up};
use crate::config::QuicConfig;
use crate::packet::Ecn;

/// Ranges of packet numbers the receiver remembers (RFC 9000 §13.2.4 lets it forget old ones;
/// quicly keeps `QUICLY_MAX_ACK_BLOCKS` = 64).
pub const REMEMBERED_RANGES: usize = 64;

/// A QUIC receiver.
#[derive(Clone, Debug)]
pub struct Receiver {
    threshold: u32,
    max_ack_delay: Dur,
    granularity: Dur,
    received: SeqSet,
    /// When the largest received packet arrived.
    largest_at: Time,
    /// Ack-eliciting packets received since the last ACK.
    unacked: u32,
    /// The delayed ACK's deadline.
    deadline: Option<Time>,
    /// CE-marked packets received (RFC 9000 §13.4.1).
    ce_count: u64,
    /// Stream chunks received above the delivered prefix.
    chunks: SeqSet,
    /// Chunks delivered in order (the received prefix `0..chunks_delivered`).
    pub chunks_delivered: u64,
    /// ACK frames sent.
    pub acks_sent: u64,
    /// Packets received more than once (a spurious retransmission's chunk counts in
    /// `dup_chunks` instead).
    pub dup_packets: u64,
    /// Stream chunks received again after they had arrived.
    pub dup_chunks: u64,
}

impl Receiver {
    /// A receiver with `cfg`'s ACK policy.
    #[must_use]
    pub fn new(cfg: &QuicConfig) -> Self {
        Receiver {
            threshold: cfg.ack_eliciting_threshold.max(1),
            max_ack_delay: cfg.max_ack_delay,
            granularity: cfg.clock_granularity,
            received: SeqSet::default(),
            largest_at: Time::ZERO,
            unacked: 0,
            deadline: None,
            ce_count: 0,
            chunks: SeqSet::default(),
            chunks_delivered: 0,
            acks_sent: 0,
            dup_packets: 0,
            dup_chunks: 0,
        }
    }

    /// A packet `pn` carrying `chunk` ([`PING`]: none) arrived with ECN field `ecn`.
    pub fn on_packet(&mut self, now: Time, pn: u64, chunk: u64, ecn: Ecn) -> Option<AckFrame> {
        let now = quantise(now, self.granularity);
        let largest = self.received.max();
        if !self.received.insert(pn) {
            self.dup_packets += 1;
            // RFC 9000 §13.2.1 leaves duplicates to the receiver; answer at once so that a
            // sender whose ACK was lost learns of it (quicly acknowledges them too).
            return Some(self.ack(now));
        }
        self.received.trim(REMEMBERED_RANGES);
        if ecn == Ecn::Ce {
            self.ce_count += 1;
        }
        if largest.is_none_or(|l| pn > l) {
            self.largest_at = now;
        }
        if chunk != PING {
            self.take_chunk(chunk);
        }
        self.unacked += 1;
        let out_of_order = largest.is_some_and(|l| pn < l || pn > l + 1);
        if out_of_order || ecn == Ecn::Ce || self.unacked >= self.threshold {
            return Some(self.ack(now));
        }
        if self.deadline.is_none() {
            self.deadline = Some(quantise_up(now + self.max_ack_delay, self.granularity));
        }
        None
    }

    fn take_chunk(&mut self, chunk: u64) {
        if chunk < self.chunks_delivered || !self.chunks.insert(chunk) {
            self.dup_chunks += 1;
            return;
        }
        // The prefix grows when the range starting at it is complete.
        if chunk == self.chunks_delivered
            && let Some((lo, hi)) = self.chunks.ranges_desc().last()
            && lo == self.chunks_delivered
        {
            self.chunks_delivered = hi + 1;
            self.chunks.trim(self.chunks.range_count() - 1);
        }
    }

    /// The delayed ACK's deadline.
    #[must_use]
    pub fn ack_deadline(&self) -> Option<Time> {
        self.deadline
    }

    /// The delayed-ACK timer fired at `now`: the ACK, if one is still pending.
    pub fn on_timer(&mut self, now: Time) -> Option<AckFrame> {
        let now = quantise(now, self.granularity);
        match self.deadline {
            Some(d) if d <= now && self.unacked > 0 => Some(self.ack(now)),
            _ => None,
        }
    }

    fn ack(&mut self, now: Time) -> AckFrame {
        self.unacked = 0;
        self.deadline = None;
        self.acks_sent += 1;
        let delay = now.saturating_since(self.largest_at).as_micros();
        #[expect(
            clippy::cast_possible_truncation,
            reason = "RFC 9000 §19.3.2: ECN counts travel modulo 2^16 here, the sender takes differences"
        )]
        let ce = self.ce_count as u16;
        AckFrame::from_ranges(&self.received, u32::try_from(delay).unwrap_or(u32::MAX), ce)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Time {
        Time::ZERO + Dur::from_millis(n)
    }

    fn rx() -> Receiver {
        Receiver::new(&QuicConfig::default())
    }

    /// RFC 9000 §13.2.2: every second ack-eliciting packet is acknowledged at once; a lone one
    /// waits for max_ack_delay, and the ACK Delay then reports the wait.
    #[test]
    fn acks_every_second_packet_or_after_max_ack_delay() {
        let mut r = rx();
        assert!(r.on_packet(ms(0), 0, 0, Ecn::NotEct).is_none());
        assert_eq!(r.ack_deadline(), Some(ms(25)));
        let a = r
            .on_packet(ms(1), 1, 1, Ecn::NotEct)
            .expect("second packet");
        assert_eq!((a.largest, a.ack_delay_us), (1, 0));
        assert!(r.on_packet(ms(2), 2, 2, Ecn::NotEct).is_none());
        assert!(r.on_timer(ms(26)).is_none(), "not due before 27 ms");
        let a = r.on_timer(ms(27)).expect("delayed ACK");
        assert_eq!((a.largest, a.ack_delay_us), (2, 25_000));
        assert_eq!(r.chunks_delivered, 3);
    }

    /// RFC 9000 §13.2.1: a gap, a packet below the largest, and a CE mark are acknowledged at
    /// once; the stream is delivered only up to the first missing chunk.
    #[test]
    fn out_of_order_and_ce_are_acknowledged_at_once() {
        let mut r = rx();
        assert!(r.on_packet(ms(0), 0, 0, Ecn::NotEct).is_none());
        let a = r.on_packet(ms(1), 2, 2, Ecn::NotEct).expect("gap");
        assert_eq!(a.ranges().collect::<Vec<_>>(), vec![(2, 2), (0, 0)]);
        assert_eq!(r.chunks_delivered, 1);
        // The retransmission of chunk 1 in packet 5 (packets 3, 4 lost too).
        let a = r.on_packet(ms(2), 5, 1, Ecn::NotEct).expect("gap again");
        assert_eq!(a.ranges().collect::<Vec<_>>(), vec![(5, 5), (2, 2), (0, 0)]);
        assert_eq!(r.chunks_delivered, 3);
        let a = r
            .on_packet(ms(3), 4, 4, Ecn::NotEct)
            .expect("below the largest");
        assert_eq!(a.largest, 5);
        assert!(r.on_packet(ms(4), 6, 3, Ecn::NotEct).is_none());
        assert_eq!(r.chunks_delivered, 5);
        let a = r.on_packet(ms(5), 7, 5, Ecn::Ce).expect("CE");
        assert_eq!(a.ce_count, 1);
    }
}
