//! The ACK frame (RFC 9000 §19.3) as a small `Copy` value carried inline in a packet.
//!
//! Contract: an [`AckFrame`] names the largest packet number acknowledged, the ACK Delay, the
//! receiver's ECN-CE count (RFC 9000 §19.3.2, modulo 2¹⁶) and up to [`MAX_ACK_RANGES`] ranges
//! of acknowledged packet numbers, highest first, disjoint and separated by at least one
//! missing packet. [`AckFrame::ranges`] yields them as inclusive `(smallest, largest)` pairs.
//!
//! Deviation from quicly (whose ACK frames carry up to `QUICLY_MAX_ACK_BLOCKS` = 64 ranges):
//! the frame holds the first range (up to 2³² packets) and at most
//! [`MAX_ACK_RANGES`] − 1 = 6 further ranges whose gap and length are below 2¹⁶ packets each,
//! so that a packet stays within the simulator's 88-byte budget. Ranges that do not fit are left
//! out, which RFC 9000 §13.2.4 allows (the sender learns of them from a later ACK or declares
//! the packets lost); with the packet threshold of 3 only the highest ranges matter to loss
//! detection.

use crate::quic::SeqSet;

/// Most ranges one ACK frame reports (the first included).
pub const MAX_ACK_RANGES: usize = 7;

/// An ACK frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckFrame {
    /// Largest Acknowledged.
    pub largest: u64,
    /// ACK Delay in microseconds (RFC 9000 §19.3 encodes it in units of 2^ack_delay_exponent
    /// µs, default 8 µs; this keeps 1 µs).
    pub ack_delay_us: u32,
    /// Packets in the first range below `largest` (RFC 9000's First ACK Range).
    first: u32,
    /// ECN-CE count (ECN Counts of an ACK frame of type 0x03), modulo 2¹⁶.
    pub ce_count: u16,
    /// Further ranges in use.
    n: u8,
    /// Per further range: unacknowledged packets between it and the range above, minus one
    /// (RFC 9000's Gap).
    gap: [u16; MAX_ACK_RANGES - 1],
    /// Per further range: its packets minus one (RFC 9000's ACK Range Length).
    len: [u16; MAX_ACK_RANGES - 1],
}

impl AckFrame {
    /// The frame reporting the highest ranges of `received` (which must not be empty).
    #[must_use]
    pub fn from_ranges(received: &SeqSet, ack_delay_us: u32, ce_count: u16) -> AckFrame {
        let mut it = received.ranges_desc();
        let (lo, hi) = it.next().expect("an ACK frame acknowledges something");
        let mut f = AckFrame {
            largest: hi,
            ack_delay_us,
            first: u32::try_from(hi - lo).unwrap_or(u32::MAX),
            ce_count,
            ..AckFrame::default()
        };
        // A first range longer than 2³² packets is cut (no further range then).
        let mut prev_lo = hi - u64::from(f.first);
        if prev_lo != lo {
            return f;
        }
        for (lo, hi) in it.take(MAX_ACK_RANGES - 1) {
            let (Ok(gap), Ok(len)) = (u16::try_from(prev_lo - hi - 2), u16::try_from(hi - lo))
            else {
                break;
            };
            let i = usize::from(f.n);
            f.gap[i] = gap;
            f.len[i] = len;
            f.n += 1;
            prev_lo = lo;
        }
        f
    }

    /// Number of ranges (the first included).
    #[must_use]
    pub fn range_count(&self) -> usize {
        1 + usize::from(self.n)
    }

    /// The acknowledged ranges, highest first, as inclusive `(smallest, largest)`.
    pub fn ranges(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        let first = (self.largest - u64::from(self.first), self.largest);
        let mut lo = first.0;
        std::iter::once(first).chain((0..usize::from(self.n)).map(move |i| {
            let hi = lo - u64::from(self.gap[i]) - 2;
            let l = hi - u64::from(self.len[i]);
            lo = l;
            (l, hi)
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ranges round-trip through the frame, highest first; only the highest
    /// `MAX_ACK_RANGES` are kept.
    #[test]
    fn ranges_round_trip_and_are_capped() {
        let mut s = SeqSet::default();
        // 10 ranges: [10k, 10k + 3] for k = 0..10.
        for k in 0..10u64 {
            for p in 10 * k..10 * k + 4 {
                s.insert(p);
            }
        }
        let f = AckFrame::from_ranges(&s, 7, 3);
        let got: Vec<_> = f.ranges().collect();
        let want: Vec<_> = (0..10u64)
            .rev()
            .take(MAX_ACK_RANGES)
            .map(|k| (10 * k, 10 * k + 3))
            .collect();
        assert_eq!(got, want);
        assert_eq!((f.largest, f.ack_delay_us, f.ce_count), (93, 7, 3));
    }

    /// A range whose gap does not fit 16 bits ends the frame there.
    #[test]
    fn a_range_beyond_sixteen_bits_is_left_out() {
        let mut s = SeqSet::default();
        s.insert(0);
        s.insert(100_000);
        s.insert(100_001);
        let f = AckFrame::from_ranges(&s, 0, 0);
        assert_eq!(f.ranges().collect::<Vec<_>>(), vec![(100_000, 100_001)]);
    }
}
