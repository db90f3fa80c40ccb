//! Statistics across the repetitions of a study: summaries for tables, CSV and JSON, tests
//! that mark a configuration as significantly different from a baseline, and the ratio of two
//! configurations' values with the confidence interval that inverts that test (the effect of a
//! study's claims).
//!
//! Contract:
//! - Inputs are plain slices of `f64`, one value per repetition (or per flow, for [`jain`]).
//!   Order does not matter except for [`percentile`], which expects its input sorted ascending.
//! - Empty input, or input holding any NaN or infinite value, gives `None`: no function here
//!   guesses what a missing or broken measurement should have been. Each function documents the
//!   further cases where it gives `None` (for example fewer than two values for [`welch_t`]).
//! - No function panics, whatever its input. Finite but huge values are handled without
//!   intermediate overflow where the result is representable; a result that truly exceeds the
//!   `f64` range (say the standard deviation of `[-f64::MAX, f64::MAX]`) comes out as infinite,
//!   never as NaN.
//! - The definitions follow scipy and numpy (named on each item) so that numbers printed here
//!   can be checked against, and mixed with, an analysis done in Python.

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

/// The conventional significance level: a p-value below 0.05 is reported as significant.
pub const ALPHA: f64 = 0.05;

/// Descriptive statistics of one metric over the repetitions of a study.
///
/// Produced by [`summarize`]; every field is finite for ordinary data (see the module contract
/// for data near the `f64` range).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of values.
    pub n: usize,
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation (divisor `n - 1`, Bessel's correction); 0 when `n = 1`.
    pub std_dev: f64,
    /// Smallest value.
    pub min: f64,
    /// 5th percentile (see [`percentile`]).
    pub p5: f64,
    /// 25th percentile (first quartile).
    pub p25: f64,
    /// 50th percentile (median).
    pub median: f64,
    /// 75th percentile (third quartile).
    pub p75: f64,
    /// 95th percentile.
    pub p95: f64,
    /// Largest value.
    pub max: f64,
    /// Lower end of the 95 % confidence interval of the mean; equals `mean` when `n = 1`.
    pub ci95_low: f64,
    /// Upper end of the 95 % confidence interval of the mean; equals `mean` when `n = 1`.
    pub ci95_high: f64,
}

impl Summary {
    /// This summary for a metric whose true mean lies in `[lo, hi]` by definition (say a
    /// goodput or a delay, never negative; or Jain's index, at most 1): the confidence
    /// interval cut to `[lo, hi]`.
    ///
    /// Student's interval is symmetric about the mean and can reach below 0 for a small,
    /// spread sample of a non-negative quantity. Intersecting a confidence interval with the
    /// parameter's domain keeps its coverage (the true value always lies in the domain, so the
    /// cut interval holds it whenever the uncut one does; Mandelkern 2002, "Setting Confidence
    /// Intervals for Bounded Parameters", Statistical Science 17(2)) and only drops values
    /// the mean cannot take. The interval never ends short of the mean itself (should values
    /// outside the domain have been recorded), so `ci95_low ≤ mean ≤ ci95_high` still holds.
    /// Nothing else changes.
    #[must_use]
    pub fn clipped_to(mut self, lo: f64, hi: f64) -> Self {
        self.ci95_low = self.ci95_low.max(lo.min(self.mean));
        self.ci95_high = self.ci95_high.min(hi.max(self.mean));
        self
    }
}

/// Summarize a sample: mean, sample standard deviation, percentiles and the 95 % confidence
/// interval of the mean.
///
/// The interval is `mean ± t(0.975, n-1) · s / √n`, with `t` the quantile of Student's t
/// distribution with `n - 1` degrees of freedom and `s` the sample standard deviation; this is
/// `scipy.stats.t.interval(0.95, df=n-1, loc=mean, scale=scipy.stats.sem(xs))`
/// (Student 1908, "The probable error of a mean", Biometrika 6(1)). With one value there is no
/// estimate of spread: the standard deviation is reported as 0 and the interval as
/// `[mean, mean]`, which must not be read as certainty. The interval is not cut to any
/// domain here; [`Summary::clipped_to`] does that for metrics with one.
///
/// Percentiles use [`percentile`] (numpy's default `linear` method).
///
/// Returns `None` if `xs` is empty or holds any value that is not finite (NaN or ±∞).
pub fn summarize(xs: &[f64]) -> Option<Summary> {
    if xs.is_empty() || xs.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let n = xs.len();
    let mut sorted = xs.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mean = mean(xs);
    let std_dev = if n > 1 { sample_std_dev(xs, mean) } else { 0.0 };
    let (ci95_low, ci95_high) = if n > 1 {
        let half = t_quantile_975(n as f64 - 1.0) * (std_dev / (n as f64).sqrt());
        if half.is_finite() {
            (mean - half, mean + half)
        } else {
            (f64::NEG_INFINITY, f64::INFINITY)
        }
    } else {
        (mean, mean)
    };
    let pct = |p: f64| percentile(&sorted, p).unwrap_or(mean);
    Some(Summary {
        n,
        mean,
        std_dev,
        min: sorted[0],
        p5: pct(5.0),
        p25: pct(25.0),
        median: pct(50.0),
        p75: pct(75.0),
        p95: pct(95.0),
        max: sorted[n - 1],
        ci95_low,
        ci95_high,
    })
}

/// The `p`-th percentile (`p` in `[0, 100]`) of a sample sorted ascending.
///
/// Linear interpolation between closest ranks: with `h = (n - 1) · p / 100`, the result is
/// `x[⌊h⌋] + (h - ⌊h⌋) · (x[⌊h⌋ + 1] - x[⌊h⌋])` (0-based). This is definition 7 of Hyndman &
/// Fan (1996), "Sample quantiles in statistical packages", The American Statistician 50(4),
/// and the default (`method='linear'`) of `numpy.percentile`, whose interpolation formula is
/// used here so results agree to the last bits.
///
/// Returns `None` if `sorted` is empty or `p` is NaN or outside `[0, 100]`. The input is not
/// checked for order: unsorted input gives a meaningless value, but no panic.
pub fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() || !(0.0..=100.0).contains(&p) {
        return None;
    }
    let last = sorted.len() - 1;
    let h = last as f64 * (p / 100.0);
    // h is in [0, last]; the float-to-int conversion saturates, and min() guards the index.
    let lo = (h.floor() as usize).min(last);
    let hi = (lo + 1).min(last);
    let t = h - lo as f64;
    let (a, b) = (sorted[lo], sorted[hi]);
    // numpy's `_lerp`: a + (b - a)·t, computed from the nearer end for t ≥ 0.5.
    let v = if t >= 0.5 {
        b - (b - a) * (1.0 - t)
    } else {
        a + (b - a) * t
    };
    if v.is_finite() || !(a.is_finite() && b.is_finite()) {
        Some(v)
    } else {
        // b - a overflowed; this form cannot overflow for finite a and b.
        Some(a * (1.0 - t) + b * t)
    }
}

/// The mean over positions of the median over runs: `runs[r][i]` is the value at position `i`
/// (e.g. the `i`-th flow in start order) in run `r`; each position's median over the runs that
/// have it, then the mean of those medians (the ABBA evaluation's "mean of the flow-order
/// medians" for ten stock flows against one ABBA flow). `None` without any value.
#[must_use]
pub fn mean_of_position_medians(runs: &[Vec<f64>]) -> Option<f64> {
    let positions = runs.iter().map(Vec::len).max()?;
    let medians: Vec<f64> = (0..positions)
        .filter_map(|i| {
            let mut xs: Vec<f64> = runs.iter().filter_map(|r| r.get(i).copied()).collect();
            xs.sort_by(f64::total_cmp);
            percentile(&xs, 50.0)
        })
        .collect();
    (!medians.is_empty()).then(|| medians.iter().sum::<f64>() / medians.len() as f64)
}

/// Jain's fairness index `(Σx)² / (n · Σx²)` of a set of allocations (for example the
/// throughputs of competing flows).
///
/// It is 1 when all shares are equal and `1/n` when one of `n` takes everything
/// (R. Jain, D.-M. Chiu, W. Hawe, "A Quantitative Measure of Fairness and Discrimination for
/// Resource Allocation in Shared Computer Systems", DEC-TR-301, 1984).
///
/// Returns `None` for empty input, all zeros, any value that is not finite, or any negative
/// value (the index is defined for non-negative allocations).
pub fn jain(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() || xs.iter().any(|x| !x.is_finite() || *x < 0.0) {
        return None;
    }
    let max = xs.iter().copied().fold(0.0_f64, f64::max);
    if max == 0.0 {
        return None;
    }
    // The index is scale-invariant; dividing by the largest value keeps the squares in range.
    let (sum, sum_sq) = xs.iter().fold((0.0, 0.0), |(s, q), x| {
        let y = x / max;
        (s + y, q + y * y)
    });
    Some((sum * sum / (xs.len() as f64 * sum_sq)).clamp(0.0, 1.0))
}

/// Largest `n1 · n2` (pairs of values compared) for which [`mann_whitney_u`] uses the exact
/// conditional distribution of the rank sum; above it, the normal approximation.
///
/// R's `wilcox.test` computes exactly below 50 values per side (without ties), scipy ≥ 1.7
/// whenever a side has at most 8 values (without ties); Hollander & Wolfe (Nonparametric
/// Statistical Methods, 2nd ed. 1999, §4.1) use the large-sample approximation once both
/// samples exceed about 10 values. 400 covers 20 against 20 (studies rarely repeat more), and
/// bounds the work: with `k = min(n1, n2)` and `n = n1 + n2`, the counting pass of
/// [`rank_sum_counts`] does at most `n · k · 2kn` additions, 1.3 M at 20 against 20 (about a
/// millisecond), and its counts, at most `C(40, 20)` ≈ 1.4·10¹¹ under this bound, are exact in
/// `u64` and in `f64`.
pub const MWU_EXACT_MAX_PAIRS: usize = 400;

/// Result of [`mann_whitney_u`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct MannWhitney {
    /// The U statistic of the first sample `a`: the number of pairs `(x in a, y in b)` with
    /// `x > y`, ties counting one half (scipy's `statistic`).
    pub u: f64,
    /// Two-sided p-value, in `[0, 1]`.
    pub p_value: f64,
    /// Whether the p-value comes from the exact (conditional) distribution of U (otherwise
    /// from the normal approximation).
    pub exact: bool,
    /// The smallest two-sided p-value any data could give with these sample sizes,
    /// [`mwu_min_p`]: when it is not below the significance level, no outcome is significant.
    pub min_p: f64,
}

impl MannWhitney {
    /// Whether the test marks a significant difference at level `alpha`: `p < alpha`, and
    /// never when the sample sizes cannot reach `alpha` at all (`min_p ≥ alpha`).
    #[must_use]
    pub fn significant(&self, alpha: f64) -> bool {
        is_significant(self.p_value, alpha) && is_significant(self.min_p, alpha)
    }
}

/// The smallest two-sided p-value of the exact Mann-Whitney U test with `n1` and `n2` values:
/// `2 / C(n1 + n2, n1)` (capped at 1), the p of two fully separated samples.
///
/// With ties the exact conditional test of [`mann_whitney_u`] cannot go lower: each one-sided
/// tail holds at least one of the `C(n1 + n2, n1)` equally likely arrangements, and the
/// two-sided p doubles the smaller tail. 3 against 3 gives 2/20 = 0.1, 4 against 4 gives
/// 2/70 ≈ 0.029, 5 against 5 gives 2/252 ≈ 0.0079. 1 when a sample is empty.
#[must_use]
pub fn mwu_min_p(n1: usize, n2: usize) -> f64 {
    if n1 == 0 || n2 == 0 {
        return 1.0;
    }
    // C(n1 + n2, k) with k = min(n1, n2), as a running product that stays exact while small
    // and only loses precision (never overflows to NaN) when huge.
    let k = n1.min(n2);
    let n = n1 + n2;
    let mut c = 1.0_f64;
    for i in 1..=k {
        c = c * (n - k + i) as f64 / i as f64;
    }
    (2.0 / c).min(1.0)
}

/// The fewest repetitions per side with which a two-sided Mann-Whitney U test of equal
/// samples can reach `p < alpha`: the smallest `n` with [`mwu_min_p`]`(n, n) < alpha`
/// (4 at `alpha = 0.05`). `None` when no `n` up to 10 000 can (`alpha` of 0 or less, NaN).
#[must_use]
pub fn mwu_min_repetitions(alpha: f64) -> Option<usize> {
    (1..=10_000).find(|&n| is_significant(mwu_min_p(n, n), alpha))
}

/// Two-sided Mann–Whitney U test (Wilcoxon rank-sum test) of `a` against `b`.
///
/// Mann & Whitney (1947), "On a Test of Whether one of Two Random Variables is Stochastically
/// Larger than the Other", Ann. Math. Statist. 18(1). Ranks of the pooled sample, ties getting
/// the average rank (midrank); `W` = the sum of `a`'s ranks, `U1 = W - n1(n1+1)/2`.
/// - Small samples (`n1 · n2 ≤` [`MWU_EXACT_MAX_PAIRS`]): the exact distribution of `W`
///   conditional on the observed midranks, i.e. its permutation distribution over the
///   `C(n1 + n2, n1)` equally likely ways to pick `a`'s ranks from the pooled ones (Lehmann,
///   Nonparametrics: Statistical Methods Based on Ranks, 1975, §1.4; Hollander & Wolfe,
///   Nonparametric Statistical Methods, 1999, §4.1 on ties; the exact distribution of R's
///   `coin::wilcox_test(distribution = "exact")`). Without ties this is Mann and Whitney's
///   own distribution of U. Two-sided `p = min(1, 2 · min(P(W ≤ w), P(W ≥ w)))`, doubling the
///   smaller tail as R's `wilcox.test(exact = TRUE)` does; without ties, or with equal sample
///   sizes, the distribution is symmetric and this equals `P(|W - E W| ≥ |w - E W|)`. Doubling
///   keeps the smallest attainable p at [`mwu_min_p`] with or without ties. All values equal
///   give `p = 1`.
/// - Larger samples: the normal approximation of scipy's `method='asymptotic'` with
///   `use_continuity=True`: `μ = n1·n2/2`, `σ² = n1·n2/12 · ((n+1) - Σ(t³-t)/(n(n-1)))` (tie
///   correction over tie-group sizes `t`), `z = (max(U1, U2) - μ - 1/2) / σ`,
///   `p = 2 · (1 - Φ(z))`, capped at 1.
///
/// Returns `None` if either sample is empty or holds a value that is not finite.
pub fn mann_whitney_u(a: &[f64], b: &[f64]) -> Option<MannWhitney> {
    if a.is_empty() || b.is_empty() || a.iter().chain(b).any(|x| !x.is_finite()) {
        return None;
    }
    let (n1, n2) = (a.len(), b.len());
    let (ranks, tie_sizes) = average_ranks(a.iter().chain(b).copied().collect());
    let r1: f64 = ranks[..n1].iter().sum();
    let (f1, f2) = (n1 as f64, n2 as f64);
    let u1 = r1 - f1 * (f1 + 1.0) / 2.0;
    let exact = n1.saturating_mul(n2) <= MWU_EXACT_MAX_PAIRS;
    let p = if exact {
        // Midranks are multiples of 1/2 below n: twice them are exact small integers.
        let scores: Vec<usize> = ranks.iter().map(|r| (2.0 * r).round() as usize).collect();
        let w: usize = scores[..n1].iter().sum();
        let counts = rank_sum_counts(&scores, n1);
        let total: u64 = counts.iter().sum();
        let below: u64 = counts[..=w].iter().sum();
        let above: u64 = counts[w..].iter().sum();
        2.0 * below.min(above) as f64 / total as f64
    } else {
        let u = u1.max(f1 * f2 - u1);
        let n = f1 + f2;
        let mu = f1 * f2 / 2.0;
        let tie_term: f64 = tie_sizes.iter().map(|&t| t * t * t - t).sum();
        let sigma = (f1 * f2 / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)))).sqrt();
        if sigma > 0.0 {
            2.0 * normal_sf((u - mu - 0.5) / sigma)
        } else {
            // All values equal: no evidence of any difference.
            1.0
        }
    };
    Some(MannWhitney {
        u: u1,
        p_value: clip_p(p),
        exact,
        min_p: mwu_min_p(n1, n2),
    })
}

/// Result of [`ratio_interval`]: how many times `b`'s values `a`'s are, with a confidence
/// interval.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct RatioEstimate {
    /// The Hodges–Lehmann estimate of the ratio: the median of the `n1 · n2` ratios `x / y`
    /// (`x` in `a`, `y` in `b`).
    pub estimate: f64,
    /// Lower end of the interval (0 when the samples are too small for one).
    pub low: f64,
    /// Upper end of the interval (`+∞` when the samples are too small for one, or when some
    /// `y` is 0).
    pub high: f64,
    /// The interval's confidence: at least `1 - alpha` when exact (the discrete distribution
    /// of U rarely hits `1 - alpha` itself), 1 for the unbounded interval `[0, ∞]`.
    pub confidence: f64,
}

/// The ratio of `a`'s values to `b`'s (non-negative samples, say the goodputs of two
/// configurations over their repetitions), with the distribution-free confidence interval that
/// inverts the two-sided Mann-Whitney U test of [`mann_whitney_u`].
///
/// Under a scale model (`a` distributed as `θ · b`), the ratios `x / y` of all `n1 · n2` pairs
/// estimate `θ` by their median, the Hodges–Lehmann estimate (Hodges & Lehmann 1963,
/// "Estimates of location based on rank tests", Ann. Math. Statist. 34(2), applied to the
/// logarithms, whose pairwise differences order as the ratios do), and the interval
/// `[R_(k), R_(N+1-k)]` of the sorted ratios (1-based, `N = n1 · n2`) covers `θ` with
/// probability `1 - 2 · P(U ≤ k - 1)`: it is the set of `θ` that the test of `a` against
/// `θ · b` does not reject (Moses' interval: Lehmann, Nonparametrics, 1975, §2.6; Bauer 1972,
/// "Constructing confidence sets using rank statistics", JASA 67(339); R's
/// `wilcox.test(log(a), log(b), conf.int = TRUE)` exponentiated). `k` is the largest integer with
/// `P(U ≤ k - 1) ≤ alpha / 2` under the exact distribution of U without ties (Mann & Whitney
/// 1947; counted as for the test, up to [`MWU_EXACT_MAX_PAIRS`] pairs), beyond it
/// `⌊n1·n2/2 - z(1 - alpha/2) · √(n1·n2·(n1+n2+1)/12)⌋` (the normal approximation of
/// Hollander & Wolfe, Nonparametric Statistical Methods, 1999, §4.3). Where no `k ≥ 1` exists
/// (three values per side at `alpha = 0.05`, the sizes at which the test cannot reach 0.05
/// either, [`mwu_min_repetitions`]) the interval is `[0, ∞]`, confidence 1. Ties in the data
/// make the interval's coverage approximate, as in R.
///
/// A ratio with `y = 0` is `+∞` for `x > 0` and 1 for `x = 0` (the pair shows no change).
/// Returns `None` if either sample is empty or holds a negative or non-finite value, or if
/// `alpha` is not in `(0, 1)`.
pub fn ratio_interval(a: &[f64], b: &[f64], alpha: f64) -> Option<RatioEstimate> {
    if a.is_empty()
        || b.is_empty()
        || a.iter().chain(b).any(|x| !x.is_finite() || *x < 0.0)
        || !(alpha > 0.0 && alpha < 1.0)
    {
        return None;
    }
    let (n1, n2) = (a.len(), b.len());
    let mut ratios: Vec<f64> = Vec::with_capacity(n1 * n2);
    for x in a {
        for y in b {
            ratios.push(if *y > 0.0 {
                x / y
            } else if *x > 0.0 {
                f64::INFINITY
            } else {
                1.0
            });
        }
    }
    ratios.sort_by(f64::total_cmp);
    let n = ratios.len();
    let (lo_mid, hi_mid) = (ratios[(n - 1) / 2], ratios[n / 2]);
    let estimate = if lo_mid == hi_mid || hi_mid.is_infinite() {
        hi_mid
    } else {
        lo_mid + (hi_mid - lo_mid) / 2.0
    };
    let (k, confidence) = if n <= MWU_EXACT_MAX_PAIRS {
        let scores: Vec<usize> = (1..=n1 + n2).map(|r| 2 * r).collect();
        let counts = rank_sum_counts(&scores, n1);
        let total: u64 = counts.iter().sum();
        // Twice W = twice U + n1 (n1 + 1).
        let offset = n1 * (n1 + 1);
        let mut below = 0_u64;
        let mut k = 0;
        for u in 0..=n {
            let next = below + counts.get(offset + 2 * u).copied().unwrap_or(0);
            if next as f64 / total as f64 > alpha / 2.0 {
                break;
            }
            below = next;
            k = u + 1;
        }
        (k, 1.0 - 2.0 * below as f64 / total as f64)
    } else {
        let z = Normal::new(0.0, 1.0).ok()?.inverse_cdf(1.0 - alpha / 2.0);
        let (f1, f2) = (n1 as f64, n2 as f64);
        let c = f1 * f2 / 2.0 - z * (f1 * f2 * (f1 + f2 + 1.0) / 12.0).sqrt();
        (c.floor().max(0.0) as usize, 1.0 - alpha)
    };
    // k ≤ n/2 by the symmetry of U; guard anyway.
    if k == 0 || 2 * k > n + 1 {
        return Some(RatioEstimate {
            estimate,
            low: 0.0,
            high: f64::INFINITY,
            confidence: 1.0,
        });
    }
    Some(RatioEstimate {
        estimate,
        low: ratios[k - 1],
        high: ratios[n - k],
        confidence,
    })
}

/// Result of [`welch_t`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Welch {
    /// The t statistic, `(mean(a) - mean(b)) / √(s_a²/n_a + s_b²/n_b)`.
    pub t: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    /// Two-sided p-value.
    pub p_value: f64,
}

/// Welch's unequal-variances t test of `a` against `b`, two-sided.
///
/// `t = (m_a - m_b) / √(v_a/n_a + v_b/n_b)` with sample variances `v`, and degrees of freedom
/// `ν = (v_a/n_a + v_b/n_b)² / ((v_a/n_a)²/(n_a-1) + (v_b/n_b)²/(n_b-1))`
/// (B. L. Welch 1947, "The generalization of 'Student's' problem when several different
/// population variances are involved", Biometrika 34; F. E. Satterthwaite 1946, Biometrics
/// Bulletin 2(6)); `p = 2 · P(T_ν ≥ |t|)`. Matches
/// `scipy.stats.ttest_ind(a, b, equal_var=False)`.
///
/// Returns `None` if either sample has fewer than 2 values or a value that is not finite, or if
/// both sample variances are zero (the statistic is undefined).
pub fn welch_t(a: &[f64], b: &[f64]) -> Option<Welch> {
    if a.len() < 2 || b.len() < 2 || a.iter().chain(b).any(|x| !x.is_finite()) {
        return None;
    }
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let (ma, mb) = (mean(a), mean(b));
    let (sa, sb) = (sample_std_dev(a, ma), sample_std_dev(b, mb));
    let (qa, qb) = (sa * sa / na, sb * sb / nb);
    let se2 = qa + qb;
    if se2 == 0.0 || !se2.is_finite() {
        return None;
    }
    let t = (ma - mb) / se2.sqrt();
    let df = se2 * se2 / (qa * qa / (na - 1.0) + qb * qb / (nb - 1.0));
    if !t.is_finite() || !df.is_finite() || df <= 0.0 {
        return None;
    }
    let dist = StudentsT::new(0.0, 1.0, df).ok()?;
    let p_value = clip_p(2.0 * dist.sf(t.abs()));
    Some(Welch { t, df, p_value })
}

/// Whether a p-value marks a significant difference at level `alpha`: `p < alpha`.
///
/// A NaN p-value is never significant.
pub fn is_significant(p: f64, alpha: f64) -> bool {
    p < alpha
}

/// Arithmetic mean of a non-empty slice of finite values, without intermediate overflow.
fn mean(xs: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let m = xs.iter().sum::<f64>() / n;
    if m.is_finite() {
        m
    } else {
        // The running sum overflowed; each partial sum of x/n is bounded by max |x|.
        xs.iter().map(|x| x / n).sum()
    }
}

/// Sample standard deviation (divisor n - 1) of at least two finite values with mean `m`.
fn sample_std_dev(xs: &[f64], m: f64) -> f64 {
    let dof = xs.len() as f64 - 1.0;
    let ss: f64 = xs.iter().map(|x| (x - m) * (x - m)).sum();
    let sd = (ss / dof).sqrt();
    if sd.is_finite() {
        return sd;
    }
    // Squares overflowed: work in units of the largest magnitude.
    let scale = xs.iter().fold(0.0_f64, |acc, x| acc.max(x.abs()));
    let ms = m / scale;
    let ss: f64 = xs
        .iter()
        .map(|x| {
            let d = x / scale - ms;
            d * d
        })
        .sum();
    scale * (ss / dof).sqrt()
}

/// The 0.975 quantile of Student's t with `dof` degrees of freedom (`dof ≥ 1`).
fn t_quantile_975(dof: f64) -> f64 {
    match StudentsT::new(0.0, 1.0, dof) {
        Ok(dist) => dist.inverse_cdf(0.975),
        Err(_) => f64::INFINITY,
    }
}

/// Upper tail `1 - Φ(z)` of the standard normal distribution.
fn normal_sf(z: f64) -> f64 {
    if z.is_nan() {
        return f64::NAN;
    }
    match Normal::new(0.0, 1.0) {
        Ok(dist) => dist.sf(z),
        Err(_) => f64::NAN,
    }
}

/// Clip a p-value to `[0, 1]`; NaN stays NaN (it cannot arise from finite input).
fn clip_p(p: f64) -> f64 {
    if p.is_nan() { p } else { p.clamp(0.0, 1.0) }
}

/// Average ranks (1-based) of finite values, in input order, and the sizes of the tie groups
/// that have more than one member.
fn average_ranks(xs: Vec<f64>) -> (Vec<f64>, Vec<f64>) {
    let mut order: Vec<usize> = (0..xs.len()).collect();
    // Finite values: partial_cmp is total here and treats -0.0 and 0.0 as equal (tied).
    order.sort_by(|&i, &j| {
        xs[i]
            .partial_cmp(&xs[j])
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let mut ranks = vec![0.0; xs.len()];
    let mut ties = Vec::new();
    let mut start = 0;
    while start < order.len() {
        let mut end = start + 1;
        while end < order.len() && xs[order[end]] == xs[order[start]] {
            end += 1;
        }
        // Positions start..end hold ranks start+1 ..= end; their average:
        let rank = (start + 1 + end) as f64 / 2.0;
        for &i in &order[start..end] {
            ranks[i] = rank;
        }
        if end - start > 1 {
            ties.push((end - start) as f64);
        }
        start = end;
    }
    (ranks, ties)
}

/// The permutation distribution of the sum of `k` of the `scores` (twice the midranks):
/// `counts[s]` is the number of the `C(n, k)` ways to choose `k` of them whose sum is `s`.
///
/// The counting recurrence `c(i, j, s) = c(i-1, j, s) + c(i-1, j-1, s - score_i)` over the
/// scores, `j` picked so far (the shift algorithm of Streitberg & Röhmel 1986, "Exact
/// distributions for permutation and rank tests", Statistical Software Newsletter 12(1), for
/// integer scores; without ties it gives Mann and Whitney's distribution of U). Used under
/// [`MWU_EXACT_MAX_PAIRS`], where every count fits `u64`.
fn rank_sum_counts(scores: &[usize], k: usize) -> Vec<u64> {
    let mut sorted = scores.to_vec();
    sorted.sort_unstable();
    let max_sum: usize = sorted.iter().rev().take(k).sum();
    let width = max_sum + 1;
    // c[j * width + s]: ways to pick j of the scores seen so far with sum s.
    let mut c = vec![0_u64; (k + 1) * width];
    c[0] = 1;
    for (i, &x) in sorted.iter().enumerate() {
        for j in (1..=k.min(i + 1)).rev() {
            let (lower, upper) = c.split_at_mut(j * width);
            let from = &lower[(j - 1) * width..];
            for s in x..width {
                upper[s] += from[s - x];
            }
        }
    }
    c.split_off(k * width)
}

#[cfg(test)]
mod tests {

    /// Each position's median over the runs, then their mean: positions 0 and 1 have medians
    /// 5 (of 0, 5, 6) and 6 (of 10, 0, 6), so 5.5, where the median of the runs' means (5,
    /// 2.5, 6) would be 5; a run missing a position is left out of that position only.
    #[test]
    fn mean_of_position_medians_takes_medians_per_position_first() {
        let runs = vec![vec![0.0, 10.0], vec![5.0, 0.0], vec![6.0, 6.0]];
        assert_eq!(mean_of_position_medians(&runs), Some(5.5));
        let ragged = vec![vec![1.0, 4.0], vec![3.0]];
        assert_eq!(mean_of_position_medians(&ragged), Some((2.0 + 4.0) / 2.0));
        assert_eq!(mean_of_position_medians(&[]), None);
        assert_eq!(mean_of_position_medians(&[vec![]]), None);
    }
    use super::*;

    /// Relative closeness, with an absolute floor for values at or near zero.
    fn close(actual: f64, expected: f64, rel: f64) -> bool {
        (actual - expected).abs() <= rel * expected.abs().max(1e-300)
    }

    #[track_caller]
    fn assert_close(actual: f64, expected: f64, rel: f64) {
        assert!(
            close(actual, expected, rel),
            "actual {actual:e} vs expected {expected:e} (rel tol {rel:e})"
        );
    }

    const EVEN: [f64; 8] = [12.5, 3.0, 7.25, 9.0, 1.5, 20.0, 4.75, 11.0];
    const ODD: [f64; 7] = [2.0, 9.5, 4.0, 7.0, 1.0, 13.0, 5.5];

    fn sorted(xs: &[f64]) -> Vec<f64> {
        let mut v = xs.to_vec();
        v.sort_by(f64::total_cmp);
        v
    }

    #[test]
    fn percentile_even_sample_matches_numpy() {
        // numpy.percentile([1.5, 3.0, 4.75, 7.25, 9.0, 11.0, 12.5, 20.0], p) (method='linear')
        // for p = 0, 5, 25, 50, 75, 95, 100, 33.3
        let s = sorted(&EVEN);
        let cases = [
            (0.0, 1.5),
            (5.0, 2.025),
            (25.0, 4.3125),
            (50.0, 8.125),
            (75.0, 11.375),
            (95.0, 17.374999999999996),
            (100.0, 20.0),
            (33.3, 5.577499999999999),
        ];
        for (p, want) in cases {
            assert_close(percentile(&s, p).unwrap(), want, 1e-12);
        }
    }

    #[test]
    fn percentile_odd_sample_matches_numpy() {
        // numpy.percentile([1.0, 2.0, 4.0, 5.5, 7.0, 9.5, 13.0], p) (method='linear')
        // for p = 0, 5, 25, 50, 75, 95, 100, 33.3
        let s = sorted(&ODD);
        let cases = [
            (0.0, 1.0),
            (5.0, 1.3),
            (25.0, 3.0),
            (50.0, 5.5),
            (75.0, 8.25),
            (95.0, 11.949999999999998),
            (100.0, 13.0),
            (33.3, 3.9959999999999996),
        ];
        for (p, want) in cases {
            assert_close(percentile(&s, p).unwrap(), want, 1e-12);
        }
    }

    #[test]
    fn percentile_rejects_bad_input() {
        assert_eq!(percentile(&[], 50.0), None);
        assert_eq!(percentile(&[1.0], -0.1), None);
        assert_eq!(percentile(&[1.0], 100.1), None);
        assert_eq!(percentile(&[1.0], f64::NAN), None);
        assert_eq!(percentile(&[4.0], 37.0), Some(4.0));
        // Interpolating across the whole f64 range must not overflow.
        let v = percentile(&[-f64::MAX, f64::MAX], 50.0).unwrap();
        assert!(v.is_finite() && v.abs() <= 1e300);
    }

    #[test]
    fn summarize_even_sample_matches_scipy() {
        // numpy.mean / numpy.std(ddof=1) of EVEN -> 8.625, 5.970163912561961;
        // scipy.stats.t.interval(0.95, df=7, loc=8.625, scale=scipy.stats.sem(EVEN))
        //   -> (3.6338180635395068, 13.616181936460492)
        let s = summarize(&EVEN).unwrap();
        assert_eq!(s.n, 8);
        assert_close(s.mean, 8.625, 1e-12);
        assert_close(s.std_dev, 5.970163912561961, 1e-12);
        assert_eq!((s.min, s.max), (1.5, 20.0));
        assert_close(s.p5, 2.025, 1e-12);
        assert_close(s.p25, 4.3125, 1e-12);
        assert_close(s.median, 8.125, 1e-12);
        assert_close(s.p75, 11.375, 1e-12);
        assert_close(s.p95, 17.374999999999996, 1e-12);
        assert_close(s.ci95_low, 3.6338180635395068, 1e-9);
        assert_close(s.ci95_high, 13.616181936460492, 1e-9);
    }

    #[test]
    fn summarize_odd_sample_matches_scipy() {
        // numpy.mean / numpy.std(ddof=1) of ODD -> 6.0, 4.232808366400098;
        // scipy.stats.t.interval(0.95, df=6, loc=6.0, scale=scipy.stats.sem(ODD))
        //   -> (2.085305178889822, 9.914694821110178)
        let s = summarize(&ODD).unwrap();
        assert_eq!(s.n, 7);
        assert_close(s.mean, 6.0, 1e-12);
        assert_close(s.std_dev, 4.232808366400098, 1e-12);
        assert_eq!((s.min, s.max), (1.0, 13.0));
        assert_close(s.median, 5.5, 1e-12);
        assert_close(s.p5, 1.3, 1e-12);
        assert_close(s.p95, 11.949999999999998, 1e-12);
        assert_close(s.ci95_low, 2.085305178889822, 1e-9);
        assert_close(s.ci95_high, 9.914694821110178, 1e-9);
    }

    #[test]
    fn summarize_two_values_uses_one_degree_of_freedom() {
        // scipy.stats.t.interval(0.95, df=1, loc=4.0, scale=scipy.stats.sem([3.0, 5.0]))
        //   -> (-8.706204736174694, 16.706204736174694)
        let s = summarize(&[3.0, 5.0]).unwrap();
        assert_close(s.ci95_low, -8.706204736174694, 1e-9);
        assert_close(s.ci95_high, 16.706204736174694, 1e-9);
    }

    #[test]
    fn summarize_single_value_has_degenerate_interval() {
        let s = summarize(&[42.0]).unwrap();
        assert_eq!(s.n, 1);
        assert_eq!(s.std_dev, 0.0);
        assert_eq!((s.ci95_low, s.mean, s.ci95_high), (42.0, 42.0, 42.0));
        assert_eq!(
            (s.min, s.p5, s.median, s.p95, s.max),
            (42.0, 42.0, 42.0, 42.0, 42.0)
        );
    }

    #[test]
    fn summarize_never_panics_on_odd_inputs() {
        let big = f64::MAX;
        let cases: Vec<Vec<f64>> = vec![
            vec![],
            vec![0.0],
            vec![-0.0, 0.0],
            vec![f64::NAN],
            vec![1.0, f64::NAN, 2.0],
            vec![f64::INFINITY],
            vec![1.0, f64::NEG_INFINITY],
            vec![big, big],
            vec![big, big, big, -big],
            vec![-big, big],
            vec![f64::MIN_POSITIVE, 5e-324, 0.0],
            vec![1e300, -1e300, 1e-300, 7.0],
            vec![1.0; 1000],
        ];
        for xs in &cases {
            let r = summarize(xs);
            let ok_input = !xs.is_empty() && xs.iter().all(|x| x.is_finite());
            assert_eq!(r.is_some(), ok_input, "{xs:?}");
            if let Some(s) = r {
                let fields = [
                    s.mean,
                    s.std_dev,
                    s.min,
                    s.p5,
                    s.p25,
                    s.median,
                    s.p75,
                    s.p95,
                    s.max,
                    s.ci95_low,
                    s.ci95_high,
                ];
                assert!(fields.iter().all(|f| !f.is_nan()), "{xs:?} -> {s:?}");
                assert!(s.min <= s.median && s.median <= s.max, "{xs:?} -> {s:?}");
                assert!(
                    s.ci95_low <= s.mean && s.mean <= s.ci95_high,
                    "{xs:?} -> {s:?}"
                );
                assert!(s.mean.is_finite() && s.std_dev >= 0.0, "{xs:?} -> {s:?}");
            }
        }
        // Huge but representable: the mean and spread are exact.
        let s = summarize(&[big, big]).unwrap();
        assert_eq!((s.mean, s.std_dev), (big, 0.0));
        // Deviations of ±big/2 and 1.5·big: the spread is exactly big, computed without overflow.
        let s = summarize(&[big, big, big, -big]).unwrap();
        assert_close(s.mean, big / 2.0, 1e-15);
        assert_close(s.std_dev, big, 1e-12);
        // The true spread exceeds the f64 range: infinite, not NaN.
        let s = summarize(&[big, -big, big, -big]).unwrap();
        assert_eq!(s.mean, 0.0);
        assert_eq!(s.std_dev, f64::INFINITY);
        assert_eq!(
            (s.ci95_low, s.ci95_high),
            (f64::NEG_INFINITY, f64::INFINITY)
        );
    }

    /// A small spread sample of a non-negative metric: Student's interval reaches below 0
    /// (scipy.stats.t.interval(0.95, df=2, loc=1.0, scale=scipy.stats.sem([0.1, 0.2, 2.7]))
    /// -> (-2.6961…, 4.6961…)); cut to [0, ∞) its low end is 0 and nothing else moves.
    #[test]
    fn confidence_interval_is_clipped_to_the_domain() {
        let s = summarize(&[0.1, 0.2, 2.7]).unwrap();
        assert!(s.ci95_low < 0.0);
        let c = s.clipped_to(0.0, f64::INFINITY);
        assert_eq!(c.ci95_low, 0.0);
        assert_eq!(
            Summary {
                ci95_low: s.ci95_low,
                ..c
            },
            s
        );
        // Jain-like [0, 1]: both ends cut.
        let s = summarize(&[0.1, 0.9, 1.0]).unwrap();
        assert!(s.ci95_low < 0.0 && s.ci95_high > 1.0);
        let c = s.clipped_to(0.0, 1.0);
        assert_eq!((c.ci95_low, c.ci95_high), (0.0, 1.0));
        // Values outside the domain: the interval still holds the mean.
        let c = summarize(&[-3.0, -2.0]).unwrap().clipped_to(0.0, 1.0);
        assert!(c.ci95_low <= c.mean && c.mean <= c.ci95_high);
        assert_eq!((c.ci95_low, c.ci95_high), (c.mean, 1.0));
    }

    #[test]
    fn summary_round_trips_through_json() {
        let s = summarize(&ODD).unwrap();
        let text = serde_json::to_string(&s).unwrap();
        let back: Summary = serde_json::from_str(&text).unwrap();
        assert_eq!(s, back);
    }

    #[test]
    fn jain_known_values() {
        assert_eq!(jain(&[3.0, 3.0, 3.0, 3.0]), Some(1.0));
        assert_eq!(jain(&[5.0]), Some(1.0));
        assert_eq!(jain(&[7.0, 0.0, 0.0, 0.0]), Some(0.25));
        assert_eq!(jain(&[0.0, 0.0, 9.0]), Some(1.0 / 3.0));
        // (1+2+3)² / (3·(1+4+9)) = 36/42
        assert_close(jain(&[1.0, 2.0, 3.0]).unwrap(), 36.0 / 42.0, 1e-15);
        // Scale-invariant, including near the top of the f64 range.
        assert_eq!(jain(&[f64::MAX, f64::MAX]), Some(1.0));
        assert_close(jain(&[f64::MAX, 0.0]).unwrap(), 0.5, 1e-15);
    }

    #[test]
    fn jain_rejects_bad_input() {
        assert_eq!(jain(&[]), None);
        assert_eq!(jain(&[0.0, 0.0]), None);
        assert_eq!(jain(&[1.0, f64::NAN]), None);
        assert_eq!(jain(&[1.0, f64::INFINITY]), None);
        assert_eq!(jain(&[1.0, -1.0]), None);
    }

    /// Mann and Whitney's (1947) recurrence for `P(U ≥ u)` without ties, kept here as an
    /// independent reference for [`rank_sum_counts`]: `c(i, j, k) = c(i-1, j, k-j) + c(i, j-1,
    /// k)`, `c(i, j, k)` the orderings of `i` values of `a` and `j` of `b` with statistic `k`.
    fn mw1947_sf(n1: usize, n2: usize, u: usize) -> f64 {
        if u == 0 {
            return 1.0;
        }
        if u > n1 * n2 {
            return 0.0;
        }
        let mut prev: Vec<Vec<f64>> = (0..=n2).map(|_| vec![1.0]).collect();
        for i in 1..=n1 {
            let mut cur: Vec<Vec<f64>> = vec![vec![1.0]];
            for j in 1..=n2 {
                let mut row = vec![0.0; i * j + 1];
                for (k, &c) in prev[j].iter().enumerate() {
                    row[k + j] += c;
                }
                for (k, &c) in cur[j - 1].iter().enumerate() {
                    row[k] += c;
                }
                cur.push(row);
            }
            prev = cur;
        }
        let dist = &prev[n2];
        dist[u..].iter().sum::<f64>() / dist.iter().sum::<f64>()
    }

    /// The exact two-sided p by brute force: every way to pick `a.len()` of the pooled
    /// midranks, doubling the smaller tail.
    fn brute_force_p(a: &[f64], b: &[f64]) -> f64 {
        let n1 = a.len();
        let (ranks, _) = average_ranks(a.iter().chain(b).copied().collect());
        let n = ranks.len();
        let w: f64 = ranks[..n1].iter().sum();
        let (mut total, mut lo, mut hi) = (0_u64, 0_u64, 0_u64);
        for mask in 0_u32..(1 << n) {
            if mask.count_ones() as usize != n1 {
                continue;
            }
            let s: f64 = (0..n)
                .filter(|i| mask >> i & 1 == 1)
                .map(|i| ranks[i])
                .sum();
            total += 1;
            lo += u64::from(s <= w);
            hi += u64::from(s >= w);
        }
        (2.0 * lo.min(hi) as f64 / total as f64).min(1.0)
    }

    #[test]
    fn mann_whitney_exact_small_without_ties() {
        // scipy.stats.mannwhitneyu([1.1, 2.3, 3.8, 4.2, 5.9], [3.1, 6.4, 7.7, 8.0, 9.3, 10.5],
        //     alternative='two-sided', method='auto') -> U=3.0, p=0.030303030303030304 (exact)
        let r =
            mann_whitney_u(&[1.1, 2.3, 3.8, 4.2, 5.9], &[3.1, 6.4, 7.7, 8.0, 9.3, 10.5]).unwrap();
        assert!(r.exact);
        assert_eq!(r.u, 3.0);
        assert_close(r.p_value, 0.030303030303030304, 1e-12);
        // 5 against 12 is exact too: scipy.stats.mannwhitneyu([3, 5, 9, 16, 17],
        //     [0.5, 1.5, 2.5, 4.5, 6.5, 7.5, 8.5, 10.5, 11.5, 12.5, 13.5, 14.5],
        //     alternative='two-sided', method='exact') -> U=38.0, p=0.4421460892049127
        let a = [3.0, 5.0, 9.0, 16.0, 17.0];
        let b = [
            0.5, 1.5, 2.5, 4.5, 6.5, 7.5, 8.5, 10.5, 11.5, 12.5, 13.5, 14.5,
        ];
        let r = mann_whitney_u(&a, &b).unwrap();
        assert_eq!((r.u, r.exact), (38.0, true));
        assert_close(r.p_value, 0.4421460892049127, 1e-12);
    }

    /// The exact tables: fully separated samples give 2 / C(n1 + n2, n1).
    #[test]
    fn mann_whitney_fully_separated_samples() {
        // 3 against 3: 2/20 = 0.1, the smallest p three repetitions can give.
        let r = mann_whitney_u(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]).unwrap();
        assert_eq!((r.u, r.exact, r.p_value, r.min_p), (0.0, true, 0.1, 0.1));
        assert!(!r.significant(ALPHA));
        // scipy.stats.mannwhitneyu([1,2,3,4,5], [6,7,8,9,10], alternative='two-sided',
        //     method='auto') -> U=0.0, p=0.007936507936507936 (= 2/252, exact)
        let lo = [1.0, 2.0, 3.0, 4.0, 5.0];
        let hi = [6.0, 7.0, 8.0, 9.0, 10.0];
        let r = mann_whitney_u(&lo, &hi).unwrap();
        assert_eq!((r.u, r.exact), (0.0, true));
        assert_close(r.p_value, 2.0 / 252.0, 1e-15);
        assert_close(r.p_value, 0.007936507936507936, 1e-12);
        assert!(r.significant(ALPHA));
        // Swapped: U=25.0, same p.
        let r = mann_whitney_u(&hi, &lo).unwrap();
        assert_eq!(r.u, 25.0);
        assert_close(r.p_value, 2.0 / 252.0, 1e-15);
        // 10 against 10 (100 pairs) is exact now: 2 / C(20, 10) = 2/184756 (scipy's
        // method='exact' gives 1.0825088224469895e-05).
        let a: Vec<f64> = (1..=10).map(f64::from).collect();
        let b: Vec<f64> = (11..=20).map(f64::from).collect();
        let r = mann_whitney_u(&a, &b).unwrap();
        assert_eq!((r.u, r.exact), (0.0, true));
        assert_close(r.p_value, 2.0 / 184_756.0, 1e-12);
    }

    /// The old defect: three repetitions per side, each side's values identical (zero
    /// variance) but different from the other's. The normal approximation with tie correction
    /// gave p = 0.0468 (z = 4/√4.05) and a star; the exact conditional distribution gives 0.1.
    #[test]
    fn three_against_three_constant_samples_are_not_significant() {
        let r = mann_whitney_u(&[1.0, 1.0, 1.0], &[2.0, 2.0, 2.0]).unwrap();
        assert!(r.exact);
        assert_eq!(r.u, 0.0);
        assert_close(r.p_value, 0.1, 1e-15);
        assert!(!r.significant(ALPHA));
        // Identical on both sides: p = 1.
        let r = mann_whitney_u(&[7.0; 3], &[7.0; 3]).unwrap();
        assert_eq!((r.u, r.p_value), (4.5, 1.0));
        assert!(!r.significant(ALPHA));
    }

    /// Whatever the ties, 3 against 3 never goes below 0.1: every tie pattern of six pooled
    /// values (the 32 compositions of 6 into tie groups) and every assignment of them to the
    /// two sides.
    #[test]
    fn three_against_three_never_below_a_tenth_with_any_ties() {
        for pattern in 0_u32..32 {
            // Bit i set: value i + 1 starts a new tie group.
            let mut values = Vec::new();
            let mut v = 0.0;
            for i in 0..6 {
                if i == 0 || pattern >> (i - 1) & 1 == 1 {
                    v += 1.0;
                }
                values.push(v);
            }
            for mask in 0_u32..64 {
                if mask.count_ones() != 3 {
                    continue;
                }
                let side = |on: bool| -> Vec<f64> {
                    (0..6)
                        .filter(|i| (mask >> i & 1 == 1) == on)
                        .map(|i| values[i])
                        .collect()
                };
                let (a, b) = (side(true), side(false));
                let r = mann_whitney_u(&a, &b).unwrap();
                assert!(r.p_value >= 0.1 - 1e-15, "{a:?} {b:?} -> {r:?}");
                assert!(!r.significant(ALPHA));
            }
        }
    }

    /// Ties: the exact conditional distribution given the midranks.
    #[test]
    fn mann_whitney_exact_with_ties() {
        // [1, 2, 2, 3] against [2, 3, 4, 5, 5]: pooled midranks 1; 3, 3, 3 (the 2s);
        // 5.5, 5.5 (the 3s); 7; 8.5, 8.5. W = 1 + 3 + 3 + 5.5 = 12.5 (U = 2.5). Of the
        // C(9, 4) = 126 ways to pick four ranks, by hand: sum 10 = 1+3+3+3 (1 way), sum 12.5 =
        // 1 + two of the 3s + one 5.5 (3 · 2 = 6 ways), and no other sum is ≤ 12.5; so
        // P(W ≤ 12.5) = 7/126 and p = 2 · 7/126 = 1/9. (scipy's normal approximation gave
        // 0.0785.)
        let r = mann_whitney_u(&[1.0, 2.0, 2.0, 3.0], &[2.0, 3.0, 4.0, 5.0, 5.0]).unwrap();
        assert!(r.exact);
        assert_eq!(r.u, 2.5);
        assert_close(r.p_value, 1.0 / 9.0, 1e-14);
        // 10 against 11 with ties: enumerating the C(21, 10) = 352 716 choices of ranks gives
        // P(W ≤ 73.5) = 1377/352716, p = 2754/352716 = 27/3458 (the normal approximation,
        // scipy's 'auto' in 1.7, gave 0.010669300560314204).
        let a = [1.0, 2.0, 2.0, 3.0, 3.0, 3.0, 4.0, 5.0, 6.0, 7.0];
        let b = [3.0, 4.0, 4.0, 5.0, 6.0, 6.0, 7.0, 8.0, 9.0, 9.0, 10.0];
        let r = mann_whitney_u(&a, &b).unwrap();
        assert!(r.exact);
        assert_eq!(r.u, 18.5);
        assert_close(r.p_value, 27.0 / 3458.0, 1e-12);
        assert_close(r.p_value, brute_force_p(&a, &b), 1e-12);
    }

    /// The counting pass against brute-force enumeration on many small tied samples.
    #[test]
    fn mann_whitney_exact_agrees_with_enumeration() {
        // A fixed pseudo-random sequence (64-bit LCG, Knuth MMIX constants) of small integers,
        // so that ties are frequent.
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = |m: u64| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) % m
        };
        for _ in 0..300 {
            let n1 = 1 + next(6) as usize;
            let n2 = 1 + next(7) as usize;
            let spread = 1 + next(8);
            let a: Vec<f64> = (0..n1).map(|_| next(spread) as f64).collect();
            let b: Vec<f64> = (0..n2).map(|_| next(spread) as f64).collect();
            let r = mann_whitney_u(&a, &b).unwrap();
            assert!(r.exact);
            assert_close(r.p_value, brute_force_p(&a, &b), 1e-12);
            assert!(r.p_value >= r.min_p - 1e-15, "{a:?} {b:?} -> {r:?}");
        }
    }

    /// Without ties the counts are Mann and Whitney's distribution of U.
    #[test]
    fn rank_sum_counts_without_ties_match_mann_whitney_1947() {
        for n1 in 1..8 {
            for n2 in 1..8 {
                let scores: Vec<usize> = (1..=n1 + n2).map(|r| 2 * r).collect();
                let counts = rank_sum_counts(&scores, n1);
                let total: u64 = counts.iter().sum();
                // W = U + n1(n1+1)/2; doubled.
                let offset = n1 * (n1 + 1);
                for u in 0..=n1 * n2 {
                    let above: u64 = counts[offset + 2 * u..].iter().sum();
                    let p = above as f64 / total as f64;
                    assert!((p - mw1947_sf(n1, n2, u)).abs() < 1e-12, "{n1} {n2} {u}");
                }
            }
        }
    }

    #[test]
    fn smallest_attainable_p_and_repetitions() {
        assert_eq!(mwu_min_p(3, 3), 0.1);
        assert_close(mwu_min_p(4, 4), 2.0 / 70.0, 1e-15);
        assert_close(mwu_min_p(5, 5), 2.0 / 252.0, 1e-15);
        assert_close(mwu_min_p(3, 4), 2.0 / 35.0, 1e-15);
        assert_eq!(mwu_min_p(1, 1), 1.0);
        assert_eq!(mwu_min_p(0, 5), 1.0);
        assert!(mwu_min_p(5000, 5000) >= 0.0);
        // Two-sided at 0.05: 3 per side cannot (0.1), 4 can (0.029).
        assert_eq!(mwu_min_repetitions(ALPHA), Some(4));
        assert_eq!(mwu_min_repetitions(0.2), Some(3));
        assert_eq!(mwu_min_repetitions(0.0), None);
        assert_eq!(mwu_min_repetitions(f64::NAN), None);
    }

    #[test]
    fn mann_whitney_large_samples_use_the_normal_approximation() {
        // Past MWU_EXACT_MAX_PAIRS: 21 against 20 (420 pairs), with ties within and across the
        // samples (b is 1, 1, 3, 3, 5, 5, …, 19, 19); the p is the formula written out
        // independently below.
        let a: Vec<f64> = (1..=21).map(f64::from).collect();
        let b: Vec<f64> = (0..20).map(|i| f64::from(i / 2 * 2 + 1)).collect();
        let r = mann_whitney_u(&a, &b).unwrap();
        assert!(!r.exact);
        assert_close(r.p_value, mwu_normal_reference(&a, &b), 1e-12);
        // Far apart: tiny p, significant.
        let far: Vec<f64> = (100..121).map(f64::from).collect();
        let r = mann_whitney_u(&far, &b).unwrap();
        assert!(!r.exact && r.significant(ALPHA) && r.p_value < 1e-6);
        // All equal: p = 1.
        let r = mann_whitney_u(&[3.0; 30], &[3.0; 30]).unwrap();
        assert_eq!((r.exact, r.p_value), (false, 1.0));
    }

    /// scipy's asymptotic p (`use_continuity=True`), written out independently.
    fn mwu_normal_reference(a: &[f64], b: &[f64]) -> f64 {
        let (n1, n2) = (a.len() as f64, b.len() as f64);
        let mut u1 = 0.0_f64;
        for x in a {
            for y in b {
                u1 += if x > y {
                    1.0
                } else if x == y {
                    0.5
                } else {
                    0.0
                };
            }
        }
        let mut pooled: Vec<f64> = a.iter().chain(b).copied().collect();
        pooled.sort_by(f64::total_cmp);
        let mut tie_term = 0.0;
        let mut i = 0;
        while i < pooled.len() {
            let j = pooled[i..].iter().take_while(|&&v| v == pooled[i]).count();
            tie_term += (j * j * j - j) as f64;
            i += j;
        }
        let n = n1 + n2;
        let sigma = (n1 * n2 / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)))).sqrt();
        let z = (u1.max(n1 * n2 - u1) - n1 * n2 / 2.0 - 0.5) / sigma;
        (2.0 * normal_sf(z)).min(1.0)
    }

    #[test]
    fn mann_whitney_normal_branch_matches_scipy() {
        // The approximation itself, on scipy's published asymptotic values:
        // scipy.stats.mannwhitneyu([1,2,2,3,3,3,4,5,6,7], [3,4,4,5,6,6,7,8,9,9,10],
        //     alternative='two-sided', method='asymptotic') -> p=0.010669300560314204
        let a = [1.0, 2.0, 2.0, 3.0, 3.0, 3.0, 4.0, 5.0, 6.0, 7.0];
        let b = [3.0, 4.0, 4.0, 5.0, 6.0, 6.0, 7.0, 8.0, 9.0, 9.0, 10.0];
        assert_close(mwu_normal_reference(&a, &b), 0.010669300560314204, 1e-9);
        // scipy.stats.mannwhitneyu(range(1, 11), range(11, 21), alternative='two-sided',
        //     method='asymptotic') -> p=0.00018267179110955002
        let a: Vec<f64> = (1..=10).map(f64::from).collect();
        let b: Vec<f64> = (11..=20).map(f64::from).collect();
        assert_close(mwu_normal_reference(&a, &b), 0.00018267179110955002, 1e-9);
    }

    #[test]
    fn mann_whitney_identical_samples_give_p_one() {
        let x = [1.0, 2.0, 3.0, 4.0, 5.0];
        let r = mann_whitney_u(&x, &x).unwrap();
        assert_eq!((r.u, r.p_value, r.exact), (12.5, 1.0, true));
        let r = mann_whitney_u(&[5.0, 5.0, 5.0], &[5.0, 5.0]).unwrap();
        assert_eq!((r.u, r.p_value), (3.0, 1.0));
        let r = mann_whitney_u(&[1.0], &[2.0]).unwrap();
        assert_eq!((r.u, r.p_value, r.exact), (0.0, 1.0, true));
    }

    #[test]
    fn mann_whitney_rejects_bad_input() {
        assert_eq!(mann_whitney_u(&[], &[1.0]), None);
        assert_eq!(mann_whitney_u(&[1.0], &[]), None);
        assert_eq!(mann_whitney_u(&[1.0, f64::NAN], &[2.0]), None);
        assert_eq!(mann_whitney_u(&[1.0], &[f64::INFINITY]), None);
    }

    #[test]
    fn welch_matches_scipy() {
        // scipy.stats.ttest_ind([20.1, 22.4, 19.8, 25.0, 23.3, 21.7],
        //     [18.2, 17.9, 20.5, 16.4, 19.0, 18.8, 17.1, 21.3], equal_var=False)
        //   -> t=3.4311857844610905, df=9.684465801044837, p=0.006730768993399068
        let a = [20.1, 22.4, 19.8, 25.0, 23.3, 21.7];
        let b = [18.2, 17.9, 20.5, 16.4, 19.0, 18.8, 17.1, 21.3];
        let w = welch_t(&a, &b).unwrap();
        assert_close(w.t, 3.4311857844610905, 1e-9);
        assert_close(w.df, 9.684465801044837, 1e-9);
        assert_close(w.p_value, 0.006730768993399068, 1e-9);
        // scipy.stats.ttest_ind([1.0, 2.0], [1.5, 2.5, 3.5], equal_var=False)
        //   -> t=-1.3093073414159544, df=2.8823529411764697, p=0.28502284001427447
        let w = welch_t(&[1.0, 2.0], &[1.5, 2.5, 3.5]).unwrap();
        assert_close(w.t, -1.3093073414159544, 1e-9);
        assert_close(w.df, 2.8823529411764697, 1e-9);
        assert_close(w.p_value, 0.28502284001427447, 1e-9);
    }

    #[test]
    fn welch_with_one_constant_sample() {
        // scipy.stats.ttest_ind([5.0, 5.0, 5.0], [1.0, 2.0, 3.0, 4.0], equal_var=False)
        //   -> t=3.872983346207417, df=3.0, p=0.030466291662170977
        let w = welch_t(&[5.0, 5.0, 5.0], &[1.0, 2.0, 3.0, 4.0]).unwrap();
        assert_close(w.t, 3.872983346207417, 1e-9);
        assert_close(w.df, 3.0, 1e-12);
        assert_close(w.p_value, 0.030466291662170977, 1e-9);
    }

    #[test]
    fn welch_rejects_degenerate_input() {
        assert_eq!(welch_t(&[1.0], &[1.0, 2.0]), None);
        assert_eq!(welch_t(&[1.0, 2.0], &[3.0]), None);
        assert_eq!(welch_t(&[2.0, 2.0], &[3.0, 3.0, 3.0]), None);
        assert_eq!(welch_t(&[1.0, f64::NAN], &[1.0, 2.0]), None);
    }

    #[test]
    fn significance_helper() {
        assert!(is_significant(0.01, ALPHA));
        assert!(!is_significant(0.05, ALPHA));
        assert!(!is_significant(0.2, ALPHA));
        assert!(!is_significant(f64::NAN, ALPHA));
    }

    /// Five against five without ties: k = 3 (P(U ≤ 2) = 4/252 ≤ 0.025 < P(U ≤ 3) = 7/252,
    /// Mann & Whitney's table), so the interval is the 3rd and the 23rd of the 25 sorted
    /// ratios, with confidence 1 − 8/252; the estimate is the 13th.
    #[test]
    fn ratio_interval_five_against_five() {
        let a = [10.0, 11.0, 12.0, 13.0, 14.0];
        let b = [20.0, 21.0, 22.0, 23.0, 24.0];
        let mut ratios: Vec<f64> = a
            .iter()
            .flat_map(|x| b.iter().map(move |y| x / y))
            .collect();
        ratios.sort_by(f64::total_cmp);
        let r = ratio_interval(&a, &b, ALPHA).unwrap();
        assert_eq!(r.estimate, ratios[12]);
        assert_eq!((r.low, r.high), (ratios[2], ratios[22]));
        assert_close(r.confidence, 1.0 - 8.0 / 252.0, 1e-15);
        // Scale invariance: the ratio of 2a to b is twice that of a to b.
        let a2: Vec<f64> = a.iter().map(|x| 2.0 * x).collect();
        let r2 = ratio_interval(&a2, &b, ALPHA).unwrap();
        assert_close(r2.low, 2.0 * r.low, 1e-15);
        assert_close(r2.high, 2.0 * r.high, 1e-15);
    }

    /// The interval inverts the exact test: for a scale θ strictly inside it the test of `a`
    /// against θ·b does not reject at 0.05, just outside it does (tie-free data).
    #[test]
    fn ratio_interval_inverts_the_mann_whitney_test() {
        let a = [3.1, 4.7, 5.2, 6.9, 7.3, 8.8];
        let b = [2.2, 2.9, 3.4, 4.1, 5.5, 6.0, 6.6];
        let r = ratio_interval(&a, &b, ALPHA).unwrap();
        assert!(r.low < r.estimate && r.estimate < r.high);
        assert!(r.confidence >= 1.0 - ALPHA);
        let p = |theta: f64| {
            let tb: Vec<f64> = b.iter().map(|y| theta * y).collect();
            mann_whitney_u(&a, &tb).unwrap().p_value
        };
        for theta in [r.low * 1.000_001, r.estimate, r.high * 0.999_999] {
            assert!(p(theta) > ALPHA, "θ = {theta}: p = {}", p(theta));
        }
        for theta in [r.low * 0.999_999, r.high * 1.000_001] {
            assert!(p(theta) <= ALPHA, "θ = {theta}: p = {}", p(theta));
        }
    }

    #[test]
    fn ratio_interval_small_zero_and_bad_samples() {
        // Three per side: no interval at 0.05 (the smallest p is 0.1).
        let r = ratio_interval(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0], ALPHA).unwrap();
        assert_eq!((r.low, r.high, r.confidence), (0.0, f64::INFINITY, 1.0));
        // Four per side: the full range of the 16 ratios (k = 1, P(U = 0) = 1/70).
        let r = ratio_interval(&[1.0, 2.0, 3.0, 4.0], &[8.0, 8.0, 8.0, 8.0], ALPHA).unwrap();
        assert_eq!((r.low, r.high), (0.125, 0.5));
        assert_close(r.confidence, 1.0 - 2.0 / 70.0, 1e-15);
        // A zero in b: x / 0 is +∞ for x > 0, 1 for x = 0.
        let r = ratio_interval(&[0.0, 1.0, 1.0, 1.0], &[0.0, 1.0, 1.0, 1.0], ALPHA).unwrap();
        assert_eq!((r.estimate, r.low, r.high), (1.0, 0.0, f64::INFINITY));
        // Large samples use the normal approximation: 21 against 20 values.
        let a: Vec<f64> = (1..=21).map(|i| f64::from(i) * 2.0).collect();
        let b: Vec<f64> = (1..=20).map(f64::from).collect();
        let r = ratio_interval(&a, &b, ALPHA).unwrap();
        assert_eq!(r.confidence, 1.0 - ALPHA);
        assert!(r.low < r.estimate && r.estimate < r.high && r.low > 1.0);
        assert_eq!(ratio_interval(&[], &[1.0], ALPHA), None);
        assert_eq!(ratio_interval(&[-1.0], &[1.0], ALPHA), None);
        assert_eq!(ratio_interval(&[1.0], &[f64::NAN], ALPHA), None);
        assert_eq!(ratio_interval(&[1.0], &[1.0], 0.0), None);
    }
}
