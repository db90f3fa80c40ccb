//! CoDel (RFC 8289; Linux `sch_codel.c`): its keys, its [`AqmConfig`] and its description.

use cclab_sim::AqmConfig;
use cclab_sim::queue::CodelParams;

use super::{Component, Qdisc, ce_threshold, dur, flag, fmt_dur, packet_limit, packet_limit_param};

/// CoDel.
pub(super) const CODEL: Qdisc = Qdisc {
    decl: Component {
        name: "codel",
        doc: "CoDel: drop at the head while the sojourn time stays above target",
        source: "RFC 8289; Linux sch_codel.c",
        params: &[
            dur(
                "target",
                "5ms",
                "acceptable standing sojourn time",
                "RFC 8289 §4.4; Linux codel_params_init",
            ),
            dur(
                "interval",
                "100ms",
                "window in which the sojourn must fall below target",
                "RFC 8289 §4.3; Linux codel_params_init",
            ),
            packet_limit_param("1000", "Linux codel_init `sch->limit` = 1000"),
            flag(
                "ecn",
                "false",
                "mark ECN-capable packets instead of dropping them",
                "Linux codel_params_init (off)",
            ),
            ce_threshold("Linux codel `ce_threshold` (CODEL_DISABLED_THRESHOLD)"),
        ],
        build: |v| {
            let d = CodelParams::default();
            Ok(Some(AqmConfig::Codel(CodelParams {
                target: v.duration("target").unwrap_or(d.target),
                interval: v.duration("interval").unwrap_or(d.interval),
                limit: packet_limit(v, "codel", d.limit)?,
                ecn: v.bool("ecn").unwrap_or(d.ecn),
                ce_threshold: v.duration("ce_threshold").or(d.ce_threshold),
            })))
        },
    },
    describe: |cfg| {
        let AqmConfig::Codel(p) = cfg else {
            return Vec::new();
        };
        let mut parts = vec![
            format!("target {}", fmt_dur(p.target)),
            format!("interval {}", fmt_dur(p.interval)),
            format!("limit {} packets", p.limit),
        ];
        if p.ecn {
            parts.push("ecn".to_owned());
        }
        if let Some(c) = p.ce_threshold {
            parts.push(format!("ce_threshold {}", fmt_dur(c)));
        }
        parts
    },
};
