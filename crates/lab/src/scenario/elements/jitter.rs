//! `jitter`: a random extra delay per packet that lets packets overtake each other or keeps
//! their order (netem `delay TIME JITTER [CORRELATION] [distribution DIST]`, whose reordering is
//! the default; `rate`/`slot` keep order). Two ways to write it: `base` + `spread` (uniform in
//! `[base, base + spread)`), or netem's own `delay` (μ) + `jitter` (σ) with a `distribution`.

use cclab_sim::Dur;
use cclab_sim::net::{Distribution, ElementSpec, JitterDist};

use super::super::params::{Kind, Param};
use super::Element;

const MAX: Dur = Dur::from_secs(100);

/// Random delay.
pub(super) const JITTER: Element = Element {
    name: "jitter",
    doc: "delays each packet by a random time: base + U[0, spread), or netem's delay ± jitter from a distribution, with correlation; reordering or not",
    source: "Linux netem `delay TIME JITTER CORRELATION distribution DIST` (sch_netem.c tabledist, get_crandom); tc-netem(8)",
    params: &[
        Param {
            name: "base",
            kind: Kind::Duration { max: MAX },
            unit: "",
            default: "0ms",
            doc: "smallest added delay (uniform form)",
            source: "tc-netem(8) `delay TIME`",
        },
        Param {
            name: "spread",
            kind: Kind::Duration { max: MAX },
            unit: "",
            default: "0ms",
            doc: "width of the uniform random delay above base (uniform form)",
            source: "tc-netem(8) `JITTER`",
        },
        Param {
            name: "delay",
            kind: Kind::Duration { max: MAX },
            unit: "",
            default: "0ms",
            doc: "netem form: the centre μ of the delay (instead of base/spread)",
            source: "tc-netem(8) `delay TIME`",
        },
        Param {
            name: "jitter",
            kind: Kind::Duration { max: MAX },
            unit: "",
            default: "0ms",
            doc: "netem form: the scale σ; the delay is max(0, μ + σ·X), X from the distribution's table (uniform: U[−1, 1))",
            source: "tc-netem(8) `JITTER`; sch_netem.c `tabledist`",
        },
        Param {
            name: "distribution",
            kind: Kind::Choice(&["uniform", "normal", "pareto", "paretonormal"]),
            unit: "",
            default: "uniform",
            doc: "distribution of X; all but uniform need the netem form (delay, jitter)",
            source: "tc-netem(8) `distribution`; iproute2 netem/normal.c, pareto.c, paretonormal.c",
        },
        Param {
            name: "correlation",
            kind: Kind::Float {
                min: 0.0,
                min_open: false,
                max: 1.0,
                max_open: false,
            },
            unit: "",
            default: "0",
            doc: "ρ: each uniform draw is (1 − ρ)·fresh + ρ·previous (a fraction, not netem's percent)",
            source: "tc-netem(8) `CORRELATION`; sch_netem.c `get_crandom`",
        },
        Param {
            name: "reorder",
            kind: Kind::Bool,
            unit: "",
            default: "true",
            doc: "whether a packet may overtake an earlier one (netem's default); false: it leaves right behind it",
            source: "tc-netem(8): jitter reorders unless rate or slot is set",
        },
    ],
    build: |v| {
        let netem = v.has("delay") || v.has("jitter");
        let distribution = v.choice("distribution").map_or(Distribution::Uniform, |c| {
            Distribution::ALL
                .iter()
                .find(|(n, _)| *n == c)
                .map(|&(_, d)| d)
                .expect("declared choices are netem's distributions")
        });
        let dist = if netem {
            if let Some(key) = ["base", "spread"].into_iter().find(|k| v.has(k)) {
                return Err((
                    key,
                    "give either base/spread (uniform) or delay/jitter (netem form), not both"
                        .to_owned(),
                ));
            }
            JitterDist::Netem {
                distribution,
                mu: v.duration("delay").unwrap_or(Dur::ZERO),
                sigma: v.duration("jitter").unwrap_or(Dur::ZERO),
            }
        } else {
            if distribution != Distribution::Uniform {
                return Err((
                    "distribution",
                    "a non-uniform distribution takes netem's `delay` (μ) and `jitter` (σ) instead of base/spread"
                        .to_owned(),
                ));
            }
            JitterDist::Uniform {
                base: v.duration("base").unwrap_or(Dur::ZERO),
                spread: v.duration("spread").unwrap_or(Dur::ZERO),
            }
        };
        Ok(ElementSpec::Jitter {
            dist,
            correlation: v.float("correlation").unwrap_or(0.0),
            reorder: v.bool("reorder").unwrap_or(true),
        })
    },
};
