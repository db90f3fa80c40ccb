//! `loss`: independent (Bernoulli) random loss on a node, data and ACKs alike (netem `loss
//! random`).

use cclab_sim::net::ElementSpec;

use super::super::params::{Kind, Param};
use super::Element;

/// Bernoulli loss.
pub(super) const LOSS: Element = Element {
    name: "loss",
    doc: "loses each packet independently with a probability",
    source: "Linux netem `loss random`; tc-netem(8)",
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
        doc: "loss probability of each packet",
        source: "tc-netem(8) `loss random PERCENT`",
    }],
    build: |v| {
        Ok(ElementSpec::Loss {
            model: cclab_sim::LossConfig::Bernoulli {
                p: v.float("p").unwrap_or(0.0),
            },
        })
    },
};
