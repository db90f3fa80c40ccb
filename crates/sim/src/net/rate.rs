//! Rate models of a transmitter: how long a packet of a given size occupies the wire.
//!
//! Contract: [`RateModel::serialization`] returns the serialisation time of `bytes` starting
//! at `start` (a constant rate answers by size alone, in the link); a piecewise-constant schedule
//! ([`schedule`]: steps, square and sine oscillations, a CSV of steps) and a mahimahi trace of
//! delivery opportunities ([`trace`]) answer by start time. The time-varying models keep a read
//! position, so a transmitter calls them once per packet, in the order its packets start (a
//! FIFO does; the link makes sure of it). [`RateModel::capacity_bits`] is what the link could
//! have sent over an interval, for the capacity time series.

pub mod schedule;
pub mod trace;

use std::sync::Arc;

use cclab_cc::{Dur, Time};

pub use schedule::{Schedule, ScheduleCursor};
pub use trace::{OPPORTUNITY_BYTES, Trace, TraceCursor, TraceError};

/// A time-varying rate as configured on a link (`LinkConfig::rate_shape`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RateShape {
    /// A piecewise-constant schedule.
    Schedule(Arc<Schedule>),
    /// A mahimahi delivery-opportunity trace.
    Trace(Arc<Trace>),
}

impl RateShape {
    /// The nominal rate: a repeating schedule's or a trace's mean, a one-shot schedule's
    /// highest rate.
    #[must_use]
    pub fn nominal_bps(&self) -> u64 {
        match self {
            RateShape::Schedule(s) => s.nominal_bps(),
            RateShape::Trace(t) => t.mean_bps(),
        }
    }
}

/// A transmitter's time-varying rate (a constant one is a plain division, with a size cache,
/// in the link: `link.rs`).
#[derive(Clone, Debug)]
pub enum RateModel {
    /// A piecewise-constant schedule.
    Schedule(ScheduleCursor),
    /// A delivery-opportunity trace.
    Trace(TraceCursor),
}

impl RateModel {
    /// The model of a configured shape, at time 0.
    #[must_use]
    pub fn of_shape(shape: &RateShape) -> Self {
        match shape {
            RateShape::Schedule(s) => RateModel::Schedule(ScheduleCursor::new(Arc::clone(s))),
            RateShape::Trace(t) => RateModel::Trace(TraceCursor::new(Arc::clone(t))),
        }
    }

    /// Serialisation time of `bytes` starting at `start`.
    #[inline]
    pub fn serialization(&mut self, bytes: u32, start: Time) -> Dur {
        match self {
            RateModel::Schedule(c) => c.serialization(bytes, start),
            RateModel::Trace(c) => c.serialization(bytes, start),
        }
    }
}

/// Bits the transmitter of `shape` (or of the constant `bps`) could send in `(from, to]`.
#[must_use]
pub fn capacity_bits(shape: Option<&RateShape>, bps: u64, from: Time, to: Time) -> u64 {
    let span = to.0.saturating_sub(from.0);
    let bits = match shape {
        None => u128::from(bps) * u128::from(span) / 1_000_000_000,
        Some(RateShape::Schedule(s)) => s.capacity_bits(from, to) / 1_000_000_000,
        Some(RateShape::Trace(t)) => {
            u128::from(t.opportunities(from, to)) * u128::from(OPPORTUNITY_BYTES) * 8
        }
    };
    u64::try_from(bits).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Capacity over an interval: rate × time for a constant rate, the opportunities for a
    /// trace (a file of `1` is 12 Mbit/s: 12,000 bits per ms).
    #[test]
    fn capacity_over_an_interval() {
        let ms = 1_000_000;
        assert_eq!(
            capacity_bits(None, 12_000_000, Time(0), Time(10 * ms)),
            120_000
        );
        let t = RateShape::Trace(Arc::new(Trace::new(vec![1]).unwrap()));
        assert_eq!(capacity_bits(Some(&t), 0, Time(0), Time(10 * ms)), 120_000);
        assert_eq!(t.nominal_bps(), 12_000_000);
    }
}
