//! PIE (RFC 8033; Linux `sch_pie.c`): its keys, its [`AqmConfig`] and its description.

use cclab_sim::AqmConfig;
use cclab_sim::queue::PieParams;

use super::{
    Component, Qdisc, dur, flag, fmt_dur, fmt_number, number, packet_limit, packet_limit_param,
};

/// PIE.
pub(super) const PIE: Qdisc = Qdisc {
    decl: Component {
        name: "pie",
        doc: "PIE: drop probability from a PI controller on the queueing delay",
        source: "RFC 8033; Linux sch_pie.c",
        params: &[
            dur(
                "target",
                "15ms",
                "reference queueing delay",
                "RFC 8033 §5.2; Linux pie_params_init",
            ),
            packet_limit_param("1000", "Linux pie_init `sch->limit` = 1000"),
            flag(
                "ecn",
                "false",
                "mark ECN-capable packets while the probability is low",
                "RFC 8033 §5.1; Linux pie_params_init (off)",
            ),
            dur(
                "tupdate",
                "15ms",
                "interval between probability updates",
                "RFC 8033 §5.2; Linux pie_params_init",
            ),
            number(
                "alpha",
                "0.125",
                "weight of the delay error (Hz)",
                "RFC 8033 §5.2; Linux pie_params_init 2/16",
            ),
            number(
                "beta",
                "1.25",
                "weight of the delay trend (Hz)",
                "RFC 8033 §5.2; Linux pie_params_init 20/16",
            ),
            flag(
                "bytemode",
                "false",
                "scale the drop probability by packet size",
                "Linux pie_params_init (off)",
            ),
            dur(
                "max_burst",
                "150ms",
                "burst allowance before drops start",
                "RFC 8033 §5.2; Linux pie_vars_init",
            ),
            flag(
                "dq_rate_estimator",
                "false",
                "estimate the delay from the departure rate instead of timestamps",
                "RFC 8033 §5.3; Linux pie_params_init (off)",
            ),
        ],
        build: |v| {
            let d = PieParams::default();
            Ok(Some(AqmConfig::Pie(PieParams {
                target: v.duration("target").unwrap_or(d.target),
                tupdate: v.duration("tupdate").unwrap_or(d.tupdate),
                alpha: v.float("alpha").unwrap_or(d.alpha),
                beta: v.float("beta").unwrap_or(d.beta),
                limit: packet_limit(v, "pie", d.limit)?,
                ecn: v.bool("ecn").unwrap_or(d.ecn),
                bytemode: v.bool("bytemode").unwrap_or(d.bytemode),
                max_burst: v.duration("max_burst").unwrap_or(d.max_burst),
                dq_rate_estimator: v.bool("dq_rate_estimator").unwrap_or(d.dq_rate_estimator),
            })))
        },
    },
    describe: |cfg| {
        let AqmConfig::Pie(p) = cfg else {
            return Vec::new();
        };
        let d = PieParams::default();
        let mut parts = vec![
            format!("target {}", fmt_dur(p.target)),
            format!("tupdate {}", fmt_dur(p.tupdate)),
            format!("alpha {}", fmt_number(p.alpha)),
            format!("beta {}", fmt_number(p.beta)),
            format!("limit {} packets", p.limit),
        ];
        if p.max_burst != d.max_burst {
            parts.push(format!("max_burst {}", fmt_dur(p.max_burst)));
        }
        for (on, name) in [
            (p.ecn, "ecn"),
            (p.bytemode, "bytemode"),
            (p.dq_rate_estimator, "dq_rate_estimator"),
        ] {
            if on {
                parts.push(name.to_owned());
            }
        }
        parts
    },
};
