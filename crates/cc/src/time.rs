//! Simulated time as integer nanoseconds.
//!
//! Contract: [`Time`] is an instant (nanoseconds since the start of a simulation), [`Dur`] a
//! non-negative span. Both are `u64` newtypes, so arithmetic is exact and deterministic on every
//! machine. Controllers never read a clock: every call receives `now: Time`.

use std::fmt;

use crate::num::{f64_to_u64, u64_to_f64};
use std::ops::{Add, AddAssign, Sub};

/// An instant, in nanoseconds since the simulation started.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(pub u64);

/// A span of time in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Dur(pub u64);

impl Time {
    /// The start of the simulation.
    pub const ZERO: Time = Time(0);
    /// A time later than any event of a simulation.
    pub const MAX: Time = Time(u64::MAX);

    /// Nanoseconds since the start.
    #[must_use]
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// Seconds since the start, as a float (for output only).
    #[must_use]
    pub fn as_secs_f64(self) -> f64 {
        u64_to_f64(self.0) * 1e-9
    }
    /// From seconds (rounded to the nanosecond).
    #[must_use]
    pub fn from_secs_f64(s: f64) -> Time {
        Time(f64_to_u64((s * 1e9).round()))
    }
    /// `self - earlier`, or zero if `earlier` is later.
    #[must_use]
    pub fn saturating_since(self, earlier: Time) -> Dur {
        Dur(self.0.saturating_sub(earlier.0))
    }
}

impl Dur {
    /// Zero length.
    pub const ZERO: Dur = Dur(0);
    /// Longer than any simulation.
    pub const MAX: Dur = Dur(u64::MAX);

    /// From nanoseconds.
    #[must_use]
    pub const fn from_nanos(n: u64) -> Dur {
        Dur(n)
    }
    /// From microseconds.
    #[must_use]
    pub const fn from_micros(us: u64) -> Dur {
        Dur(us * 1_000)
    }
    /// From milliseconds.
    #[must_use]
    pub const fn from_millis(ms: u64) -> Dur {
        Dur(ms * 1_000_000)
    }
    /// From whole seconds.
    #[must_use]
    pub const fn from_secs(s: u64) -> Dur {
        Dur(s * 1_000_000_000)
    }
    /// From seconds (rounded to the nanosecond; negative or NaN gives zero).
    #[must_use]
    pub fn from_secs_f64(s: f64) -> Dur {
        if s.is_nan() || s <= 0.0 {
            Dur(0)
        } else {
            Dur(f64_to_u64((s * 1e9).round()))
        }
    }
    /// Nanoseconds.
    #[must_use]
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// Whole microseconds (truncated), as Linux keeps RTTs.
    #[must_use]
    pub const fn as_micros(self) -> u64 {
        self.0 / 1_000
    }
    /// Seconds as a float.
    #[must_use]
    pub fn as_secs_f64(self) -> f64 {
        u64_to_f64(self.0) * 1e-9
    }
    /// Milliseconds as a float.
    #[must_use]
    pub fn as_millis_f64(self) -> f64 {
        u64_to_f64(self.0) * 1e-6
    }
    /// Time to serialise `bytes` at `rate_bps` bits per second (rounded up to the nanosecond).
    #[must_use]
    pub fn serialization(bytes: u64, rate_bps: u64) -> Dur {
        if rate_bps == 0 {
            return Dur::MAX;
        }
        // Fast path: any packet-sized value fits u64 arithmetic (bytes < 2.3e9).
        if let Some(bits) = bytes.checked_mul(8_000_000_000) {
            return Dur(bits.div_ceil(rate_bps));
        }
        let bits = u128::from(bytes) * 8 * 1_000_000_000;
        Dur(u64::try_from(bits.div_ceil(u128::from(rate_bps))).unwrap_or(u64::MAX))
    }
}

impl Add<Dur> for Time {
    type Output = Time;
    fn add(self, d: Dur) -> Time {
        Time(self.0.saturating_add(d.0))
    }
}
impl AddAssign<Dur> for Time {
    fn add_assign(&mut self, d: Dur) {
        self.0 = self.0.saturating_add(d.0);
    }
}
impl Sub<Time> for Time {
    type Output = Dur;
    /// Saturating difference.
    fn sub(self, t: Time) -> Dur {
        Dur(self.0.saturating_sub(t.0))
    }
}
impl Add for Dur {
    type Output = Dur;
    fn add(self, d: Dur) -> Dur {
        Dur(self.0.saturating_add(d.0))
    }
}
impl AddAssign for Dur {
    fn add_assign(&mut self, d: Dur) {
        self.0 = self.0.saturating_add(d.0);
    }
}
impl Sub for Dur {
    type Output = Dur;
    /// Saturating difference.
    fn sub(self, d: Dur) -> Dur {
        Dur(self.0.saturating_sub(d.0))
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.6}s", self.as_secs_f64())
    }
}
impl fmt::Display for Dur {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.3}ms", self.as_millis_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialization_of_a_1500_byte_packet_at_100_mbit_is_120_us() {
        assert_eq!(Dur::serialization(1500, 100_000_000), Dur::from_micros(120));
        // Rounds up: 1 byte at 3 bit/s is 8/3 s.
        assert_eq!(Dur::serialization(1, 3), Dur(2_666_666_667));
        // Beyond u64 intermediate range the u128 path gives the same rule.
        assert_eq!(
            Dur::serialization(10_000_000_000, 80_000_000_000),
            Dur::from_secs(1)
        );
    }

    #[test]
    fn arithmetic_saturates() {
        assert_eq!(Time(5) - Time(9), Dur(0));
        assert_eq!(Time::MAX + Dur(1), Time::MAX);
        assert_eq!(Dur(3) - Dur(4), Dur(0));
    }
}
