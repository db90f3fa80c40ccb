//! Rate models of a transmitter: how long a packet of a given size occupies the wire.
//!
//! Contract: [`RateModel::serialization`] returns the serialisation time of `bytes` starting
//! at `start`. Only the constant rate exists today; a rate schedule or a trace (mahimahi
//! delivery opportunities) becomes one more variant whose answer depends on `start`. The
//! link's analytic FIFO needs a constant rate ([`RateModel::constant_bps`]) and falls back to
//! evented transmission for any other model.

use cclab_cc::{Dur, Time};

/// A transmitter's rate.
#[derive(Clone, Copy, Debug)]
pub enum RateModel {
    /// A fixed line rate, bits per second, with the serialisation times of the last two packet
    /// sizes (data and ACK sizes repeat, and a division per packet is a visible cost).
    Constant {
        /// Bits per second.
        bps: u64,
        /// (bytes, time) of the last two sizes; size 0 never occurs on the wire, so the cache
        /// starts empty.
        cache: [(u32, Dur); 2],
    },
}

impl RateModel {
    /// A constant rate of `bps` bits per second.
    #[must_use]
    pub fn constant(bps: u64) -> Self {
        RateModel::Constant {
            bps,
            cache: [(0, Dur::ZERO); 2],
        }
    }

    /// The rate if it is constant.
    #[must_use]
    pub fn constant_bps(&self) -> Option<u64> {
        match self {
            RateModel::Constant { bps, .. } => Some(*bps),
        }
    }

    /// Serialisation time of `bytes` starting at `start`.
    #[inline]
    pub fn serialization(&mut self, bytes: u32, _start: Time) -> Dur {
        match self {
            RateModel::Constant { bps, cache } => {
                if cache[0].0 == bytes {
                    return cache[0].1;
                }
                if cache[1].0 == bytes {
                    return cache[1].1;
                }
                let d = Dur::serialization(u64::from(bytes), *bps);
                *cache = [(bytes, d), cache[0]];
                d
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1500 bytes at 12 Mbit/s take 1 ms; the cache answers repeated and alternating sizes
    /// exactly as the division does.
    #[test]
    fn constant_rate_serialises_and_caches_exactly() {
        let mut r = RateModel::constant(12_000_000);
        for bytes in [1500, 1500, 52, 1500, 52, 64, 1500, 52] {
            assert_eq!(
                r.serialization(bytes, Time::ZERO),
                Dur::serialization(u64::from(bytes), 12_000_000)
            );
        }
        assert_eq!(r.serialization(1500, Time(7)), Dur(1_000_000));
        assert_eq!(r.constant_bps(), Some(12_000_000));
    }
}
