//! Random draws as Linux netem makes them: correlated uniforms and distribution tables.
//!
//! Contract: [`Correlated`] is netem's `get_crandom` (`net/sched/sch_netem.c`): with correlation
//! ρ, the next uniform is `(1 − ρ)·v + ρ·last`, `v` a fresh draw; ρ = 0 returns the fresh draw
//! itself (so an uncorrelated model draws exactly as before correlation existed). As in netem,
//! this makes successive draws an AR(1) series with lag-1 correlation ρ but also narrows them
//! (variance `(1 − ρ)/(1 + ρ)` times that of a fresh draw); netem has the same property.
//!
//! [`Distribution`] names netem's delay distributions. A table distribution is netem's inverse
//! CDF table: [`TABLE_SIZE`] `i16` entries scaled by [`DIST_SCALE`] (`NETEM_DIST_SCALE`), an
//! entry picked by a uniform draw, and the delay `μ + σ·entry/DIST_SCALE` computed with netem's
//! integer rounding ([`table_delay`], `tabledist`). The tables are generated here from the
//! mathematics of iproute2's generators (`netem/normal.c`, `netem/pareto.c`,
//! `netem/paretonormal.c`); where they differ from the shipped `.dist` files it is by the
//! rounding of single entries:
//! - normal: entry `k` is the standard normal quantile at `(4k + ½)/16384` (normal.c tabulates
//!   the CDF on a grid of 16384 and keeps every fourth value, each the largest `x` that rounds
//!   to its slot), clamped to the `i16` range;
//! - pareto: shape `a = 3`, scale 1, centred on its mean 1.5 and scaled by 4/3 (pareto.c):
//!   entry `k` is `(q^(−1/3) − 1.5)·4/3` with `q = 1 − k/4096`, clamped above at `i16::MAX`;
//! - paretonormal: `(normal_k + 3·pareto_k)/4` in integers (paretonormal.c), a quarter normal and
//!   three quarters Pareto, quantile by quantile.

use std::sync::OnceLock;

use rand_chacha::ChaCha8Rng;

use crate::rng;

/// Entries of a netem distribution table (iproute2 `maketable.c` `TABLESIZE` = 16384/4).
pub const TABLE_SIZE: usize = 4096;
/// Scale of a table entry: one standard unit is 8192 (`NETEM_DIST_SCALE`,
/// `include/uapi/linux/pkt_sched.h`).
pub const DIST_SCALE: i64 = 8192;

/// The shape of a random delay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Distribution {
    /// Uniform (netem's default, no table).
    Uniform,
    /// Normal (iproute2 `normal.dist`).
    Normal,
    /// Pareto with shape 3 (iproute2 `pareto.dist`).
    Pareto,
    /// A quarter normal, three quarters Pareto (iproute2 `paretonormal.dist`).
    ParetoNormal,
}

impl Distribution {
    /// Every distribution, by its netem name.
    pub const ALL: [(&'static str, Distribution); 4] = [
        ("uniform", Distribution::Uniform),
        ("normal", Distribution::Normal),
        ("pareto", Distribution::Pareto),
        ("paretonormal", Distribution::ParetoNormal),
    ];

    /// The inverse-CDF table (`None` for uniform), built once per process.
    #[must_use]
    pub fn table(self) -> Option<&'static [i16; TABLE_SIZE]> {
        static NORMAL: OnceLock<Box<[i16; TABLE_SIZE]>> = OnceLock::new();
        static PARETO: OnceLock<Box<[i16; TABLE_SIZE]>> = OnceLock::new();
        static PARETONORMAL: OnceLock<Box<[i16; TABLE_SIZE]>> = OnceLock::new();
        match self {
            Distribution::Uniform => None,
            Distribution::Normal => Some(NORMAL.get_or_init(|| build(normal_entry))),
            Distribution::Pareto => Some(PARETO.get_or_init(|| build(pareto_entry))),
            Distribution::ParetoNormal => Some(PARETONORMAL.get_or_init(|| {
                build(|k| {
                    let (n, p) = (i32::from(normal_entry(k)), i32::from(pareto_entry(k)));
                    i16::try_from((n + 3 * p) / 4).expect("a mean of two i16 values")
                })
            })),
        }
    }

    /// The standardised quantile `X(q)` the table approximates (`q` in (0, 1)), before
    /// clamping to the `i16` range: the delay's `q`-quantile is `μ + σ·X(q)`.
    #[must_use]
    pub fn quantile(self, q: f64) -> f64 {
        match self {
            Distribution::Uniform => 2.0 * q - 1.0,
            Distribution::Normal => normal_quantile(q),
            Distribution::Pareto => pareto_quantile(q),
            Distribution::ParetoNormal => 0.25 * normal_quantile(q) + 0.75 * pareto_quantile(q),
        }
    }
}

fn build(entry: impl Fn(usize) -> i16) -> Box<[i16; TABLE_SIZE]> {
    let v: Vec<i16> = (0..TABLE_SIZE).map(entry).collect();
    v.into_boxed_slice().try_into().expect("TABLE_SIZE entries")
}

#[expect(
    clippy::cast_precision_loss,
    reason = "table indices below 2^12 are exact in f64"
)]
fn normal_entry(k: usize) -> i16 {
    scaled(normal_quantile((4.0 * k as f64 + 0.5) / 16_384.0))
}

#[expect(
    clippy::cast_precision_loss,
    reason = "table indices below 2^12 are exact in f64"
)]
fn pareto_entry(k: usize) -> i16 {
    scaled(pareto_quantile(k as f64 / TABLE_SIZE as f64))
}

/// `x` in table units, rounded and clamped to `i16` as iproute2's generators do.
#[expect(
    clippy::cast_possible_truncation,
    clippy::cast_precision_loss,
    reason = "the value is clamped to the i16 range before the conversion"
)]
fn scaled(x: f64) -> i16 {
    (x * DIST_SCALE as f64)
        .round()
        .clamp(f64::from(i16::MIN), f64::from(i16::MAX)) as i16
}

/// netem's Pareto variate at quantile `q`: shape 3, scale 1 (`(1 − q)^(−1/3)`), minus its mean
/// 1.5, times 4/3 (iproute2 `netem/pareto.c`).
fn pareto_quantile(q: f64) -> f64 {
    ((1.0 - q).powf(-1.0 / 3.0) - 1.5) * (4.0 / 3.0)
}

/// The complementary error function erfc(x) = (2/√π)·∫ₓ^∞ e^(−t²) dt, from Numerical Recipes
/// (Press et al., 2nd ed., §6.2 `erfcc`: a Chebyshev fit with fractional error below 1.2e-7
/// everywhere, so tails stay accurate relative to their size); erfc(−x) = 2 − erfc(x).
#[must_use]
pub fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let tail = t * poly.exp();
    if x >= 0.0 { tail } else { 2.0 - tail }
}

/// The standard normal CDF from [`erfc`].
fn normal_cdf(x: f64) -> f64 {
    let erfc = erfc((x / std::f64::consts::SQRT_2).abs());
    if x >= 0.0 {
        1.0 - 0.5 * erfc
    } else {
        0.5 * erfc
    }
}

/// The standard normal quantile at `q` in (0, 1): [`normal_cdf`] inverted by bisection on
/// [−10, 10] (60 halvings: far below the table's resolution of 1/8192).
#[must_use]
pub fn normal_quantile(q: f64) -> f64 {
    let (mut lo, mut hi) = (-10.0_f64, 10.0_f64);
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if normal_cdf(mid) < q {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// `mu + sigma·entry/DIST_SCALE` in nanoseconds with netem's integer rounding (`tabledist`:
/// the part of σ below one scale unit is multiplied and rounded half away from zero, the rest
/// multiplied exactly).
#[inline]
#[must_use]
pub fn table_delay(mu: i64, sigma: i64, entry: i16) -> i64 {
    let t = i64::from(entry);
    let mut x = (sigma % DIST_SCALE) * t;
    if x >= 0 {
        x += DIST_SCALE / 2;
    } else {
        x -= DIST_SCALE / 2;
    }
    x / DIST_SCALE + (sigma / DIST_SCALE) * t + mu
}

/// netem's correlated uniform generator (`get_crandom`) over draws in [0, 1).
#[derive(Clone, Debug)]
pub struct Correlated {
    rho: f64,
    last: f64,
    /// `rho == 0`, decided once: the draws are independent (the commonest case, on every
    /// jittered packet).
    independent: bool,
}

impl Correlated {
    /// Correlation `rho` in [0, 1]; the first "previous" value is a draw from `rng` when
    /// `rho > 0` (netem `init_crandom`), none otherwise.
    #[must_use]
    pub fn new(rho: f64, rng: &mut ChaCha8Rng) -> Self {
        let last = if rho > 0.0 { rng::unit_f64(rng) } else { 0.0 };
        Correlated {
            rho,
            last,
            independent: rho == 0.0,
        }
    }

    /// The next draw in [0, 1).
    #[inline]
    pub fn next(&mut self, rng: &mut ChaCha8Rng) -> f64 {
        let v = rng::unit_f64(rng);
        if self.independent {
            return v;
        }
        let u = (1.0 - self.rho) * v + self.rho * self.last;
        self.last = u;
        u
    }
}

/// A table entry for a uniform draw `u` in [0, 1) (netem: `table[rnd % size]`).
#[inline]
#[must_use]
#[expect(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss,
    reason = "u·4096 is in [0, 4096) and its integer part is an index"
)]
pub fn pick(table: &[i16; TABLE_SIZE], u: f64) -> i16 {
    table[((u * TABLE_SIZE as f64) as usize).min(TABLE_SIZE - 1)]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Φ(1.959964) = 0.975 and Φ(−1) = 0.158655 (standard tables), to the fit's 1.2e-7; the
    /// quantile inverts them; the normal table's median entries are 0 and its ends clamp at
    /// ±4σ (i16 range over 8192 units).
    #[test]
    fn normal_table_matches_the_distribution() {
        assert!((normal_cdf(1.959_964) - 0.975).abs() < 2e-7);
        assert!((normal_cdf(-1.0) - 0.158_655_25).abs() < 2e-7);
        assert!((normal_quantile(0.975) - 1.959_964).abs() < 1e-5);
        let t = Distribution::Normal.table().unwrap();
        assert_eq!(t[0], i16::MIN);
        assert!(t.windows(2).all(|w| w[0] <= w[1]));
        // Entry 2048 sits at q = (8192.5)/16384, z = 7.6e-5: 0.6 table units.
        assert!(t[2048].abs() <= 1, "{}", t[2048]);
        // Entry 3445 sits at q = 13780.5/16384 = 0.841095 = Φ(1) − 0.000250, so
        // z = 1 − 0.000250/φ(1) = 1 − 0.000250/0.24197 = 0.99897: 8183.5 units.
        assert!((i32::from(t[3445]) - 8184).abs() <= 1, "{}", t[3445]);
    }

    /// pareto.c's first entry is (1 − 1.5)·4/3 = −2/3 of a unit (−5461) and its last entries
    /// clamp at i16::MAX; paretonormal is their integer mix.
    #[test]
    fn pareto_tables() {
        let p = Distribution::Pareto.table().unwrap();
        assert_eq!(p[0], -5461);
        assert_eq!(p[TABLE_SIZE - 1], i16::MAX);
        let n = Distribution::Normal.table().unwrap();
        let pn = Distribution::ParetoNormal.table().unwrap();
        assert_eq!(
            i32::from(pn[100]),
            (i32::from(n[100]) + 3 * i32::from(p[100])) / 4
        );
    }

    /// tabledist's rounding: σ = 10,000 ns (8192 + 1808) at one unit (8192) is exactly σ;
    /// at −1 unit, −σ.
    #[test]
    fn table_delay_rounds_like_netem() {
        assert_eq!(table_delay(50_000, 10_000, 8192), 60_000);
        assert_eq!(table_delay(50_000, 10_000, -8192), 40_000);
        assert_eq!(table_delay(7, 0, 1234), 7);
    }
}
