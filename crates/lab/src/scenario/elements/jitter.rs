//! `jitter`: a random extra delay per packet, uniform in `[base, base + spread)`, that lets
//! packets overtake each other or keeps their order (netem `delay TIME JITTER`, whose
//! reordering is the default; `rate`/`slot` keep order).

use cclab_sim::Dur;
use cclab_sim::net::ElementSpec;

use super::super::params::{Kind, Param};
use super::Element;

/// Random delay.
pub(super) const JITTER: Element = Element {
    name: "jitter",
    doc: "delays each packet by base + U[0, spread), reordering or not",
    source: "Linux netem `delay TIME JITTER`; tc-netem(8)",
    params: &[
        Param {
            name: "base",
            kind: Kind::Duration {
                max: Dur::from_secs(100),
            },
            unit: "",
            default: "0ms",
            doc: "smallest added delay",
            source: "tc-netem(8) `delay TIME`",
        },
        Param {
            name: "spread",
            kind: Kind::Duration {
                max: Dur::from_secs(100),
            },
            unit: "",
            default: "0ms",
            doc: "width of the uniform random delay above base",
            source: "tc-netem(8) `JITTER`",
        },
        Param {
            name: "reorder",
            kind: Kind::Bool,
            unit: "",
            default: "true",
            doc: "whether a packet may overtake an earlier one (netem's default)",
            source: "tc-netem(8): jitter reorders unless rate or slot is set",
        },
    ],
    build: |v| {
        Ok(ElementSpec::Jitter {
            dist: cclab_sim::net::JitterDist::Uniform {
                base: v.duration("base").unwrap_or(Dur::ZERO),
                spread: v.duration("spread").unwrap_or(Dur::ZERO),
            },
            correlation: 0.0,
            reorder: v.bool("reorder").unwrap_or(true),
        })
    },
};
