//! `delay`: a constant extra one-way delay on a node, packets kept in order (netem `delay`
//! without jitter).

use cclab_sim::Dur;
use cclab_sim::net::ElementSpec;

use super::super::params::{Kind, Param};
use super::Element;

/// Constant delay.
pub(super) const DELAY: Element = Element {
    name: "delay",
    doc: "delays every packet by a constant time, in order",
    source: "Linux netem `delay`; tc-netem(8)",
    params: &[Param {
        name: "delay",
        kind: Kind::Duration {
            max: Dur::from_secs(100),
        },
        unit: "",
        default: "0ms",
        doc: "the added one-way delay",
        source: "tc-netem(8) `delay TIME`",
    }],
    build: |v| {
        Ok(ElementSpec::Delay {
            delay: v.duration("delay").unwrap_or(Dur::ZERO),
        })
    },
};
