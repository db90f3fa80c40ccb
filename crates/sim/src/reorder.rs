//! Reordering as RFC 4737 defines it, measured at a receiver over one flow's original
//! transmissions.
//!
//! Contract: [`ReorderMeter::on_arrival`] takes the sequence numbers of packets in the order
//! they arrive; the sequence numbers must increase in send order (a TCP sender's new segments
//! do; retransmissions, which repeat a number, are left out by the caller). A packet is
//! *reordered* (RFC 4737 §3, Type-P-Reordered) when its number is below the next expected one,
//! i.e. some packet sent after it arrived before it. Its *extent* (§4.2) is `i − j`, where `i`
//! is its arrival position and `j` the earliest arrival position of a packet with a larger
//! number: how many places late it is. The meter keeps the arrivals that raised the next
//! expected number, the last [`HISTORY`] of them; a packet later than that gets the extent to
//! the oldest one kept (a lower bound), and is counted in [`ReorderMeter::extent_capped`].
//! A copy of the largest number so far (a network duplicate right behind its original) is not
//! reordered; a copy of an older number counts as reordered (the meter keeps no per-number
//! history to tell it from a late original).

use std::collections::VecDeque;

/// Arrivals that raised the next expected number kept for the extent (the extent of a packet
/// more than this many such arrivals late is a lower bound).
pub const HISTORY: usize = 4096;

/// RFC 4737 reordering counters of one stream of packets.
#[derive(Clone, Debug, Default)]
pub struct ReorderMeter {
    /// Packets that arrived.
    arrivals: u64,
    /// RFC 4737 `NextExp`: one more than the largest number that arrived.
    next_exp: u64,
    /// (arrival position, number) of the arrivals that raised `next_exp`, oldest first; their
    /// numbers increase.
    raised: VecDeque<(u64, u64)>,
    /// Reordered packets.
    reordered: u64,
    /// Sum and largest of their extents.
    extent_sum: u64,
    extent_max: u64,
    /// Reordered packets whose extent is a lower bound (their predecessor fell out of the
    /// history).
    extent_capped: u64,
}

impl ReorderMeter {
    /// A meter that has seen nothing.
    #[must_use]
    pub fn new() -> Self {
        ReorderMeter::default()
    }

    /// Packet number `seq` arrives.
    #[inline]
    pub fn on_arrival(&mut self, seq: u64) {
        let i = self.arrivals;
        self.arrivals += 1;
        if seq >= self.next_exp {
            self.next_exp = seq + 1;
            if self.raised.len() == HISTORY {
                self.raised.pop_front();
            }
            self.raised.push_back((i, seq));
            return;
        }
        if seq + 1 == self.next_exp {
            // A copy of the largest number so far (a duplicate right behind its original):
            // nothing sent later arrived before it.
            return;
        }
        self.reordered_arrival(i, seq);
    }

    #[cold]
    fn reordered_arrival(&mut self, i: u64, seq: u64) {
        self.reordered += 1;
        // The earliest arrival with a larger number is the first that raised `next_exp`
        // above `seq` (raising arrivals are the running maxima, in order).
        let k = self.raised.partition_point(|&(_, s)| s <= seq);
        let j = match self.raised.get(k) {
            Some(&(j, _)) if k > 0 || self.raised.len() < HISTORY => j,
            Some(&(j, _)) => {
                // The raising arrival just before it may have been dropped from the history.
                self.extent_capped += 1;
                j
            }
            None => unreachable!("seq + 1 < next_exp: the last raising arrival is larger"),
        };
        let e = i - j;
        self.extent_sum += e;
        self.extent_max = self.extent_max.max(e);
    }

    /// Packets that arrived.
    #[must_use]
    pub fn arrivals(&self) -> u64 {
        self.arrivals
    }

    /// Reordered packets (RFC 4737 §3).
    #[must_use]
    pub fn reordered(&self) -> u64 {
        self.reordered
    }

    /// Reordered ÷ arrived (RFC 4737 §4.1.1, reordered ratio); 0 before any arrival.
    #[must_use]
    #[expect(
        clippy::cast_precision_loss,
        reason = "packet counts are far below 2^53"
    )]
    pub fn ratio(&self) -> f64 {
        if self.arrivals == 0 {
            0.0
        } else {
            self.reordered as f64 / self.arrivals as f64
        }
    }

    /// Largest extent (RFC 4737 §4.2.1), 0 when nothing was reordered.
    #[must_use]
    pub fn extent_max(&self) -> u64 {
        self.extent_max
    }

    /// Mean extent of the reordered packets; `None` when nothing was reordered.
    #[must_use]
    #[expect(
        clippy::cast_precision_loss,
        reason = "packet counts are far below 2^53"
    )]
    pub fn extent_mean(&self) -> Option<f64> {
        (self.reordered > 0).then(|| self.extent_sum as f64 / self.reordered as f64)
    }

    /// Reordered packets whose extent is only a lower bound.
    #[must_use]
    pub fn extent_capped(&self) -> u64 {
        self.extent_capped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meter(seqs: &[u64]) -> ReorderMeter {
        let mut m = ReorderMeter::new();
        for &s in seqs {
            m.on_arrival(s);
        }
        m
    }

    /// In order: nothing reordered.
    #[test]
    fn in_order_is_not_reordered() {
        let m = meter(&[0, 1, 2, 3, 5, 9]);
        assert_eq!((m.arrivals(), m.reordered(), m.extent_max()), (6, 0, 0));
        assert_eq!(m.ratio(), 0.0);
        assert_eq!(m.extent_mean(), None);
    }

    /// RFC 4737 §4.2.1's way of counting: in 1, 2, 4, 5, 3 packet 3 (position 4) is late behind
    /// 4 (position 2): extent 2; only 3 is reordered (4 and 5 are not: nothing later came
    /// before them).
    #[test]
    fn one_late_packet() {
        let m = meter(&[1, 2, 4, 5, 3]);
        assert_eq!(m.reordered(), 1);
        assert_eq!(m.extent_max(), 2);
        assert_eq!(m.extent_mean(), Some(2.0));
        assert!((m.ratio() - 0.2).abs() < 1e-12);
    }

    /// Several late packets, each measured against the first arrival with a larger number:
    /// in 4, 1, 2, 3, 8, 5 the packets 1, 2, 3 are 1, 2, 3 places behind 4, and 5 is 1 place
    /// behind 8.
    #[test]
    fn extents_against_the_earliest_larger_arrival() {
        let m = meter(&[4, 1, 2, 3, 8, 5]);
        assert_eq!(m.reordered(), 4);
        assert_eq!(m.extent_max(), 3);
        assert_eq!(m.extent_mean(), Some(7.0 / 4.0));
    }

    /// A copy right behind its original is not reordered; a copy of an older packet is.
    #[test]
    fn duplicates() {
        let m = meter(&[1, 2, 2, 3, 1]);
        assert_eq!((m.arrivals(), m.reordered(), m.extent_max()), (5, 1, 3));
    }

    /// A packet later than the history holds is counted with a lower-bound extent.
    #[test]
    fn extent_beyond_the_history_is_a_lower_bound() {
        let late = u64::try_from(HISTORY).expect("small") + 10;
        let mut seqs: Vec<u64> = (1..=late).collect();
        seqs.push(0);
        let m = meter(&seqs);
        assert_eq!(m.reordered(), 1);
        assert_eq!(m.extent_capped(), 1);
        assert_eq!(m.extent_max(), u64::try_from(HISTORY).expect("small"));
    }
}
