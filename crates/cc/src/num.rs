//! Numeric conversions that Rust spells with `as` and clippy's cast lints flag.
//!
//! Contract: each function is one conversion with one stated reason why it is sound, so the
//! crates can keep `cast_possible_truncation`, `cast_sign_loss` and `cast_precision_loss` on
//! and every intended cast is named at its call site. The functions compute exactly what the
//! `as` cast they replace computes, so results stay bit-identical.
//!
//! - Integer → `f64` ([`u64_to_f64`], [`u128_to_f64`], [`usize_to_f64`]): for statistics,
//!   reports and test arithmetic. Exact below 2⁵³; above it rounds to the nearest `f64`, a
//!   relative error under 2⁻⁵³ that no statistic can show.
//! - `f64` → integer ([`f64_to_u64`], [`f64_to_u32`]): Rust's saturating float cast, which
//!   truncates toward zero, clamps to the target's range and maps NaN to 0. Callers round first
//!   when they mean rounding.
//! - Integer narrowing ([`saturating_u32`]): lossless where the value fits, `u32::MAX` where it
//!   does not; used for counts that a `u32` window bounds by construction. [`low_u32`] keeps the
//!   low 32 bits on purpose, for counters Linux keeps in a `u32` and compares modulo 2³².

/// `x` as the nearest `f64` (exact below 2⁵³).
#[must_use]
#[inline]
#[expect(
    clippy::cast_precision_loss,
    reason = "statistics and reports: a relative error below 2^-53 past 2^53 does not matter"
)]
pub fn u64_to_f64(x: u64) -> f64 {
    x as f64
}

/// `x` as the nearest `f64` (exact below 2⁵³).
#[must_use]
#[inline]
#[expect(
    clippy::cast_precision_loss,
    reason = "statistics and reports: a relative error below 2^-53 past 2^53 does not matter"
)]
pub fn u128_to_f64(x: u128) -> f64 {
    x as f64
}

/// A length or count as the nearest `f64` (exact below 2⁵³).
#[must_use]
#[inline]
#[expect(
    clippy::cast_precision_loss,
    reason = "lengths and counts for averages: exact below 2^53 elements"
)]
pub fn usize_to_f64(x: usize) -> f64 {
    x as f64
}

/// `x` truncated toward zero and clamped to `[0, u64::MAX]`; NaN gives 0.
#[must_use]
#[inline]
#[expect(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "the documented saturating float-to-integer cast is the intended conversion"
)]
pub fn f64_to_u64(x: f64) -> u64 {
    x as u64
}

/// `x` truncated toward zero and clamped to `[0, u32::MAX]`; NaN gives 0.
#[must_use]
#[inline]
#[expect(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "the documented saturating float-to-integer cast is the intended conversion"
)]
pub fn f64_to_u32(x: f64) -> u32 {
    x as u32
}

/// `x` if it fits a `u32`, else `u32::MAX`.
#[must_use]
#[inline]
pub fn saturating_u32(x: u64) -> u32 {
    u32::try_from(x).unwrap_or(u32::MAX)
}

/// The low 32 bits of `x`: `x` modulo 2³², for counters that Linux keeps in a `u32` and
/// subtracts with wrap-around (e.g. `delivered_ce` in `tcp_rate_skb_sent`).
#[must_use]
#[inline]
#[expect(
    clippy::cast_possible_truncation,
    reason = "dropping the high bits is the point: a u32 counter compared modulo 2^32"
)]
pub fn low_u32(x: u64) -> u32 {
    x as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_to_integer_truncates_saturates_and_maps_nan_to_zero() {
        assert_eq!(f64_to_u64(2.9), 2);
        assert_eq!(f64_to_u64(-3.0), 0);
        assert_eq!(f64_to_u64(f64::NAN), 0);
        assert_eq!(f64_to_u64(1e30), u64::MAX);
        assert_eq!(f64_to_u32(4_294_967_296.0), u32::MAX);
        assert_eq!(f64_to_u32(7.99), 7);
    }

    #[test]
    fn integer_to_float_is_exact_below_two_to_the_53() {
        let x = (1u64 << 53) - 1;
        assert_eq!(f64_to_u64(u64_to_f64(x)), x);
        assert_eq!(u128_to_f64(u128::from(x)), u64_to_f64(x));
        assert_eq!(usize_to_f64(12), 12.0);
    }

    #[test]
    fn narrowing_saturates() {
        assert_eq!(saturating_u32(7), 7);
        assert_eq!(saturating_u32(u64::from(u32::MAX) + 1), u32::MAX);
        assert_eq!(low_u32((1 << 32) + 5), 5);
    }
}
