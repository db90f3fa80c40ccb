//! TCP Prague (L4STeam `tcp_prague.c`): the RTT-independence settings. Prague requires L4S ECN.

use cclab_cc::{CcSpec, Dur, PragueConfig};

use super::{Controller, Kind, Param};

/// Prague.
pub(super) const PRAGUE: Controller = Controller {
    name: "prague",
    doc: "TCP Prague: scalable L4S response to CE marks (ecn = \"l4s\" required)",
    source: "L4STeam tcp_prague.c v0.6; RFC 9331",
    params: &[
        Param {
            name: "rtt_target",
            kind: Kind::Duration {
                max: Dur::from_secs(1),
            },
            unit: "",
            default: "25ms",
            doc: "RTT that RTT independence emulates (0 turns RTT independence off)",
            source: "tcp_prague.c `prague_rtt_target` = 25 ms",
        },
        Param {
            name: "rtt_independence",
            kind: Kind::Bool,
            unit: "",
            default: "true",
            doc: "RTT independence with the rate heuristic",
            source: "tcp_prague.c `prague_rtt_scaling` = RTT_CONTROL_RATE",
        },
        Param {
            name: "rtt_transition",
            kind: Kind::Int {
                min: 0,
                max: 1_000_000,
            },
            unit: "rounds",
            default: "500",
            doc: "rounds outside slow start before RTT independence starts",
            source: "tcp_prague.c `prague_rtt_transition` = 500",
        },
    ],
    build: |v| {
        let d = PragueConfig::default();
        Ok(CcSpec::Prague(PragueConfig {
            rtt_target: v.duration("rtt_target").unwrap_or(d.rtt_target),
            rtt_independence: v.bool("rtt_independence").unwrap_or(d.rtt_independence),
            rtt_transition: v.u32("rtt_transition").unwrap_or(d.rtt_transition),
        }))
    },
};
