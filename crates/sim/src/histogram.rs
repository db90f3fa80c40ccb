//! A fixed-memory log-linear histogram for latency percentiles.
//!
//! Contract: values are `u64` nanoseconds. Each power-of-two range is split into 128 linear
//! sub-buckets, so a reported percentile is within 1/128 (< 0.8 %) of an exact order statistic;
//! values below 128 ns are exact. Memory is constant (64 × 128 counters, allocated at the first
//! value, so unused histograms cost nothing), recording is a few integer operations, and the
//! mean is exact (kept as a sum).

const SUB_BITS: u32 = 7;
const SUB: usize = 1 << SUB_BITS;

/// Log-linear histogram of nanosecond values.
#[derive(Clone, Debug)]
pub struct Histogram {
    counts: Vec<u64>,
    n: u64,
    sum: u128,
    max: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

impl Histogram {
    /// An empty histogram.
    #[must_use]
    pub fn new() -> Self {
        Histogram {
            counts: Vec::new(),
            n: 0,
            sum: 0,
            max: 0,
        }
    }

    #[expect(
        clippy::cast_possible_truncation,
        reason = "both casts take values below 2 * SUB (a value under SUB, a sub-bucket masked to SUB - 1)"
    )]
    fn index(v: u64) -> usize {
        if v < SUB as u64 {
            return v as usize;
        }
        let msb = 63 - v.leading_zeros(); // ≥ SUB_BITS
        let shift = msb - SUB_BITS;
        let sub = (v >> shift) as usize & (SUB - 1);
        ((shift as usize + 1) << SUB_BITS) + sub
    }

    /// Lower edge of bucket `i` (inverse of `index`).
    fn value_of(i: usize) -> u64 {
        if i < SUB {
            return i as u64;
        }
        let shift = (i >> SUB_BITS) - 1;
        let sub = (i & (SUB - 1)) as u64;
        (SUB as u64 + sub) << shift
    }

    /// Record one value.
    #[inline]
    pub fn record(&mut self, v: u64) {
        if self.counts.is_empty() {
            self.counts = vec![0; 64 * SUB];
        }
        self.counts[Self::index(v)] += 1;
        self.n += 1;
        self.sum += u128::from(v);
        self.max = self.max.max(v);
    }

    /// Number of values.
    #[must_use]
    pub fn len(&self) -> u64 {
        self.n
    }

    /// True when nothing was recorded.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Exact mean, if any value was recorded.
    #[must_use]
    #[expect(
        clippy::cast_precision_loss,
        reason = "the mean of nanosecond samples needs no more than the 53 bits f64 keeps"
    )]
    pub fn mean(&self) -> Option<f64> {
        (self.n > 0).then(|| self.sum as f64 / self.n as f64)
    }

    /// Largest value recorded.
    #[must_use]
    pub fn max(&self) -> Option<u64> {
        (self.n > 0).then_some(self.max)
    }

    /// The `q`-quantile (0 ≤ q ≤ 1): the midpoint of the bucket holding the ⌈q·n⌉-th value,
    /// clamped to the maximum.
    #[must_use]
    #[expect(
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "the rank is a non-negative product of q in [0, 1] and the count, so it is at most the count; counts stay far below 2^53"
    )]
    pub fn quantile(&self, q: f64) -> Option<u64> {
        if self.n == 0 {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.n as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let lo = Self::value_of(i);
                let hi = Self::value_of(i + 1);
                return Some((lo + (hi - lo) / 2).min(self.max));
            }
        }
        Some(self.max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_and_value_are_inverse_on_bucket_edges() {
        for i in 0..(40 * SUB) {
            assert_eq!(Histogram::index(Histogram::value_of(i)), i, "bucket {i}");
        }
    }

    #[test]
    #[expect(clippy::cast_precision_loss, reason = "test values are far below 2^53")]
    fn quantiles_are_within_one_percent() {
        let mut h = Histogram::new();
        for v in 1..=100_000u64 {
            h.record(v * 1_000);
        }
        for (q, exact) in [
            (0.5, 50_000_000.0),
            (0.95, 95_000_000.0),
            (0.99, 99_000_000.0),
        ] {
            let got = h.quantile(q).unwrap() as f64;
            assert!(
                (got - exact).abs() / exact < 0.008,
                "q{q}: {got} vs {exact}"
            );
        }
        assert!((h.mean().unwrap() - 50_000_500.0).abs() < 1e-6);
        assert_eq!(h.max(), Some(100_000_000));
    }
}
