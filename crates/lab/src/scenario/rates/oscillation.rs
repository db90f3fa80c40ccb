//! `square` and `sine`: the rate oscillates around a mean with a period, an amplitude and a
//! phase, held piecewise constant (a square wave has two levels; a sine is sampled at
//! `samples` equal steps per period, each holding the sine's value at its start).
//!
//! Contract: at time `t` the cycle position is `x = frac(t / period + phase)`. The square wave
//! is `mean + amplitude` for `x < 1/2` and `mean − amplitude` after; the sine is
//! `mean + amplitude · sin(2π x)` at the start of each step. Both have exactly `mean` as their
//! average over a period (a sine sampled at N ≥ 2 equally spaced points sums to zero), and
//! `mean − amplitude` must not be negative (0 is an outage).

use cclab_sim::net::rate::{RateShape, Schedule};
use cclab_sim::{Dur, Time};

use super::super::params::{Conflict, Kind, Param, Resolved};
use super::{RATE, RateKind, RateSpec, rate_value};

const MEAN: Param = Param {
    name: "mean",
    kind: RATE,
    unit: "",
    default: "—",
    doc: "the average rate",
    source: "—",
};
const AMPLITUDE: Param = Param {
    name: "amplitude",
    kind: RATE,
    unit: "",
    default: "—",
    doc: "how far the rate swings above and below the mean (at most the mean)",
    source: "—",
};
const PERIOD: Param = Param {
    name: "period",
    kind: Kind::Duration { max: Dur::MAX },
    unit: "",
    default: "—",
    doc: "the oscillation's period",
    source: "—",
};
const PHASE: Param = Param {
    name: "phase",
    kind: Kind::Float {
        min: 0.0,
        min_open: false,
        max: 1.0,
        max_open: true,
    },
    unit: "periods",
    default: "0",
    doc: "where in its cycle the oscillation is at time 0",
    source: "—",
};

/// A square wave.
pub(super) const SQUARE: RateKind = RateKind {
    name: "square",
    doc: "the rate alternates between mean + amplitude and mean − amplitude, half a period each",
    source: "square-wave capacity: a two-level periodic piecewise-constant schedule",
    params: &[MEAN, AMPLITUDE, PERIOD, PHASE],
    build: |v| {
        let w = Wave::of(v)?;
        let half = |x: f64| -> u64 { w.rate(if x < 0.5 { 1.0 } else { -1.0 }) };
        // The level changes where the cycle position crosses 1/2 and 0.
        let mut edges = vec![(0.0, half(w.phase))];
        for at in [0.5, 1.0] {
            let t = (at - w.phase).rem_euclid(1.0);
            if t > 0.0 {
                edges.push((t, half(at.rem_euclid(1.0))));
            }
        }
        edges.sort_by(|a, b| a.0.total_cmp(&b.0));
        w.schedule(&edges)
    },
};

/// A sampled sine.
pub(super) const SINE: RateKind = RateKind {
    name: "sine",
    doc: "the rate follows mean + amplitude · sin(2π(t/period + phase)), held constant over `samples` steps per period",
    source: "sinusoidal capacity, sampled piecewise constant",
    params: &[
        MEAN,
        AMPLITUDE,
        PERIOD,
        PHASE,
        Param {
            name: "samples",
            kind: Kind::Int {
                min: 2,
                max: 10_000,
            },
            unit: "",
            default: "32",
            doc: "steps per period",
            source: "—",
        },
    ],
    build: |v| {
        let w = Wave::of(v)?;
        let n = v.int("samples").unwrap_or(32);
        let edges: Vec<(f64, u64)> = (0..n)
            .map(|k| {
                #[expect(clippy::cast_precision_loss, reason = "k < n ≤ 10,000")]
                let f = k as f64 / n as f64;
                (
                    f,
                    w.rate((2.0 * std::f64::consts::PI * (f + w.phase)).sin()),
                )
            })
            .collect();
        w.schedule(&edges)
    },
};

/// The common keys, checked.
struct Wave {
    mean: u64,
    amplitude: u64,
    period: Dur,
    phase: f64,
}

impl Wave {
    fn of(v: &Resolved) -> Result<Self, Conflict> {
        let rate = |k: &'static str| -> Result<u64, Conflict> {
            let raw = v.raw(k).ok_or((k, format!("`{k}` is required")))?;
            rate_value(raw).map_err(|e| (k, e))
        };
        let mean = rate("mean")?;
        let amplitude = rate("amplitude")?;
        if amplitude > mean {
            return Err((
                "amplitude",
                "the amplitude must not exceed the mean (the rate cannot go below 0)".into(),
            ));
        }
        let period = v
            .duration("period")
            .ok_or(("period", "`period` is required".into()))?;
        if period < Dur(2) {
            return Err(("period", "the period must be at least 2 ns".into()));
        }
        Ok(Wave {
            mean,
            amplitude,
            period,
            phase: v.float("phase").unwrap_or(0.0),
        })
    }

    /// mean + amplitude · `s`, `s` in [−1, 1], in whole bit/s.
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss,
        reason = "a rate in bit/s below 2^53, non-negative since amplitude ≤ mean"
    )]
    fn rate(&self, s: f64) -> u64 {
        (self.mean as f64 + self.amplitude as f64 * s)
            .round()
            .max(0.0) as u64
    }

    /// A periodic schedule from (fraction of the period, rate) edges, the first at 0.
    fn schedule(&self, edges: &[(f64, u64)]) -> Result<RateSpec, Conflict> {
        let mut steps: Vec<(Time, u64)> = Vec::with_capacity(edges.len());
        for &(f, r) in edges {
            #[expect(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                clippy::cast_precision_loss,
                reason = "a fraction in [0, 1) of a period in ns"
            )]
            let t = Time((f * self.period.0 as f64).round() as u64);
            match steps.last_mut() {
                Some(last) if last.0 >= t => last.1 = r,
                _ if t.0 >= self.period.0 => {}
                _ => steps.push((t, r)),
            }
        }
        Schedule::new(steps, Some(self.period))
            .map(|s| RateSpec::Shape(RateShape::Schedule(s.into())))
            .map_err(|e| ("period", e))
    }
}
