//! `ack_thin`: forwards one pure ACK in k per flow (ACK thinning; cumulative ACKs make the
//! others redundant).

use cclab_sim::Dur;
use cclab_sim::net::ElementSpec;
use cclab_sim::net::ack_thin::DEFAULT_HOLD;

use super::super::params::{Kind, Param};
use super::Element;

/// ACK thinning.
pub(super) const ACK_THIN: Element = Element {
    name: "ack_thin",
    doc: "forwards one pure ACK in k per flow; data is never dropped",
    source: "RFC 3449 (ACK filtering); Linux sch_cake `ack-filter`",
    params: &[
        Param {
            name: "k",
            kind: Kind::Int {
                min: 1,
                max: 1_000_000,
            },
            unit: "",
            default: "2",
            doc: "one in this many pure ACKs of a flow goes on (the k-th, 2k-th, …)",
            source: "—",
        },
        Param {
            name: "keep_signals",
            kind: Kind::Bool,
            unit: "",
            default: "true",
            doc: "ACKs with SACK blocks (DSACK included) or ECE always go on and do not count",
            source: "Linux sch_cake `cake_ack_filter` keeps ACKs whose SACK or flags a later ACK does not cover",
        },
        Param {
            name: "hold",
            kind: Kind::Duration {
                max: Dur::from_secs(100),
            },
            unit: "",
            default: "10ms",
            doc: "release a flow's latest withheld ACK when no newer ACK of the flow arrives within this long, so the newest ACK is never stranded (0: never release; a flow whose ACKs stop before the k-th then waits for its probe or retransmission timer)",
            source: "sch_cake `cake_ack_filter` and DOCSIS ACK suppression drop an ACK only when a newer one supersedes it; 10 ms: below Linux's minimum RTO (200 ms) and loss-probe timeout on RTTs ≥ 4 ms",
        },
    ],
    build: |v| {
        Ok(ElementSpec::AckThin {
            k: v.u32("k").unwrap_or(2),
            keep_signals: v.bool("keep_signals").unwrap_or(true),
            hold: v.duration("hold").unwrap_or(DEFAULT_HOLD),
        })
    },
};
