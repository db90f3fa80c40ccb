//! `ack_aggregate`: holds pure ACKs and releases them together every period (ACK
//! compression, as Pantheon's 10-ACKs-every-200-ms path).

use cclab_sim::Dur;
use cclab_sim::net::ElementSpec;

use super::super::params::{Kind, Param};
use super::Element;

/// ACK aggregation in time.
pub(super) const ACK_AGGREGATE: Element = Element {
    name: "ack_aggregate",
    doc: "holds pure ACKs and releases all held at phase + n·period",
    source: "ACK compression (Mogul, SIGCOMM 1992); Pantheon (Yan et al., USENIX ATC 2018)",
    params: &[
        Param {
            name: "period",
            kind: Kind::Duration {
                max: Dur::from_secs(100),
            },
            unit: "",
            default: "required",
            doc: "time between releases (> 0)",
            source: "—",
        },
        Param {
            name: "phase",
            kind: Kind::Duration {
                max: Dur::from_secs(100),
            },
            unit: "",
            default: "0ms",
            doc: "first release instant",
            source: "—",
        },
    ],
    build: |v| {
        let period = v.duration("period").unwrap_or(Dur::ZERO);
        if period == Dur::ZERO {
            return Err((
                "period",
                "ack_aggregate needs a `period` longer than 0".to_owned(),
            ));
        }
        Ok(ElementSpec::AckAggregate {
            period,
            phase: v.duration("phase").unwrap_or(Dur::ZERO),
        })
    },
};
