//! `outage`: intervals during which a node delivers nothing, either losing what arrives (a loss
//! burst at a given time, a link that is down) or holding it until the interval ends (a
//! handover whose radio buffers what it cannot send).

use cclab_sim::net::{ElementSpec, OutageMode, outage};

use super::super::params::{Kind, Param};
use super::{Element, times};

/// Outages.
pub(super) const OUTAGE: Element = Element {
    name: "outage",
    doc: "delivers nothing during given intervals: loses (loss bursts) or holds (handover) what arrives",
    source: "loss bursts and handover interruptions as in 3GPP TS 36.300 §10.1.2.1 (data forwarding during handover)",
    params: &[
        Param {
            name: "intervals",
            kind: Kind::List {
                ty: "list",
                range: "[start, duration] pairs of durations, sorted, not overlapping",
                item: times::pair,
            },
            unit: "",
            default: "[]",
            doc: "when nothing is delivered: [start, duration] since the start of the run",
            source: "—",
        },
        Param {
            name: "mode",
            kind: Kind::Choice(&["drop", "hold"]),
            unit: "",
            default: "drop",
            doc: "drop: packets arriving during an outage are lost; hold: they leave, in order, when it ends",
            source: "—",
        },
    ],
    build: |v| {
        let intervals: Vec<_> = times::rows(v.list("intervals"))
            .into_iter()
            .map(|r| (times::at(r[0]), r[1]))
            .collect();
        if let Some(problem) = outage::intervals_problem(&intervals) {
            return Err(("intervals", problem));
        }
        let mode = match v.choice("mode") {
            Some("hold") => OutageMode::Hold,
            _ => OutageMode::Drop,
        };
        Ok(ElementSpec::Outage { intervals, mode })
    },
};
