//! `duplicate`: some packets arrive twice (netem `duplicate`).

use cclab_sim::net::ElementSpec;

use super::super::params::{Kind, Param};
use super::Element;

/// Random duplication.
pub(super) const DUPLICATE: Element = Element {
    name: "duplicate",
    doc: "sends a copy of a packet right behind it with a probability",
    source: "Linux netem `duplicate`; tc-netem(8)",
    params: &[Param {
        name: "p",
        kind: Kind::Float {
            min: 0.0,
            min_open: false,
            max: 1.0,
            max_open: false,
        },
        unit: "",
        default: "0",
        doc: "duplication probability of each packet",
        source: "tc-netem(8) `duplicate PERCENT`",
    }],
    build: |v| {
        Ok(ElementSpec::Duplicate {
            p: v.float("p").unwrap_or(0.0),
        })
    },
};
