//! DualPI2 (RFC 9332; Linux `sch_dualpi2.c`): its keys, its [`AqmConfig`] and its description.

use std::fmt::Write as _;

use cclab_sim::AqmConfig;
use cclab_sim::queue::DualPi2Params;

use super::{
    Component, DSCP_NAMES, Kind, Param, Qdisc, U8_MAX, count, dur, flag, fmt_dur, fmt_number,
    number, packet_limit, packet_limit_param,
};
use crate::scenario::error::unknown_choice;
use crate::scenario::params::{RawValue, Value};

/// DualPI2.
pub(super) const DUALPI2: Qdisc = Qdisc {
    decl: Component {
        name: "dualpi2",
        doc: "DualPI2: coupled L4S and classic queues",
        source: "RFC 9332; Linux sch_dualpi2.c",
        params: &[
            dur(
                "target",
                "15ms",
                "classic queue's reference delay",
                "RFC 9332 §A.1; Linux dualpi2_reset_default",
            ),
            packet_limit_param("10000", "Linux dualpi2_reset_default `sch->limit` = 10000"),
            dur(
                "tupdate",
                "16ms",
                "interval between probability updates",
                "RFC 9332 §A.1; Linux dualpi2_reset_default",
            ),
            number(
                "alpha",
                "0.16",
                "weight of the delay error (Hz)",
                "RFC 9332 §A.1; Linux dualpi2_reset_default",
            ),
            number(
                "beta",
                "3.2",
                "weight of the delay trend (Hz)",
                "RFC 9332 §A.1; Linux dualpi2_reset_default",
            ),
            number(
                "coupling",
                "2",
                "coupling factor k between the L4S and classic probabilities",
                "RFC 9332 §2.4.2: k = 2",
            ),
            dur(
                "step_thresh",
                "1ms",
                "L4S sojourn above which every L4S packet is marked",
                "RFC 9332 §A.1; Linux dualpi2_reset_default",
            ),
            count(
                "c_protection",
                U8_MAX,
                "percent",
                "10",
                "classic queue's guaranteed share of the scheduler",
                "Linux dualpi2_reset_default `c_protection` = 10 %",
            ),
            flag(
                "drop_overload",
                "true",
                "drop instead of mark when the probability saturates",
                "RFC 9332 §4.2.1; Linux dualpi2_reset_default (on)",
            ),
            flag(
                "drop_early",
                "false",
                "decide drops at enqueue instead of dequeue",
                "Linux dualpi2_reset_default (off)",
            ),
            Param {
                name: "l_dscp",
                kind: Kind::List {
                    ty: "list",
                    range: "DSCP values 0..=63 or names such as \"EF\", \"CS5\"",
                    item: dscp,
                },
                unit: "",
                default: "[]",
                doc: "DSCPs classified into the L4S queue besides ECT(1) and CE",
                source: "RFC 9332 §2.5.1.1",
            },
        ],
        build: |v| {
            let d = DualPi2Params::default();
            let l_dscp = match v.list("l_dscp") {
                None => d.l_dscp,
                Some(items) => {
                    let mut out: Vec<u8> = Vec::with_capacity(items.len());
                    for item in items {
                        if let Value::Int(code) = item
                            && let Ok(code) = u8::try_from(*code)
                            && !out.contains(&code)
                        {
                            out.push(code);
                        }
                    }
                    out
                }
            };
            Ok(Some(AqmConfig::DualPi2(DualPi2Params {
                limit: packet_limit(v, "dualpi2", d.limit)?,
                target: v.duration("target").unwrap_or(d.target),
                tupdate: v.duration("tupdate").unwrap_or(d.tupdate),
                alpha: v.float("alpha").unwrap_or(d.alpha),
                beta: v.float("beta").unwrap_or(d.beta),
                coupling: v.float("coupling").unwrap_or(d.coupling),
                step_thresh: v.duration("step_thresh").unwrap_or(d.step_thresh),
                c_protection: v.u8("c_protection").unwrap_or(d.c_protection),
                drop_overload: v.bool("drop_overload").unwrap_or(d.drop_overload),
                drop_early: v.bool("drop_early").unwrap_or(d.drop_early),
                l_dscp,
            })))
        },
    },
    describe: |cfg| {
        let AqmConfig::DualPi2(p) = cfg else {
            return Vec::new();
        };
        let d = DualPi2Params::default();
        let mut parts = vec![
            format!("target {}", fmt_dur(p.target)),
            format!("tupdate {}", fmt_dur(p.tupdate)),
            format!("alpha {}", fmt_number(p.alpha)),
            format!("beta {}", fmt_number(p.beta)),
            format!("coupling {}", fmt_number(p.coupling)),
            format!("step_thresh {}", fmt_dur(p.step_thresh)),
            format!("limit {} packets", p.limit),
        ];
        if p.c_protection != d.c_protection {
            parts.push(format!("c_protection {} %", p.c_protection));
        }
        if !p.drop_overload {
            parts.push("drop_overload off".to_owned());
        }
        if p.drop_early {
            parts.push("drop_early".to_owned());
        }
        if !p.l_dscp.is_empty() {
            let mut s = "l_dscp ".to_owned();
            for (i, v) in p.l_dscp.iter().enumerate() {
                let _ = write!(s, "{}{v}", if i == 0 { "" } else { "/" });
            }
            parts.push(s);
        }
        parts
    },
};

/// A DSCP value (RFC 2474 §3: six bits) from a number 0..=63 or a name in [`DSCP_NAMES`].
fn dscp(raw: &RawValue) -> Result<Value, String> {
    match raw {
        RawValue::Int(n) => match u8::try_from(*n) {
            Ok(v) if v <= 63 => Ok(Value::Int(i64::from(v))),
            _ => Err(format!(
                "a DSCP value is 0..=63 (6 bits), got {n}; or a name such as \"EF\""
            )),
        },
        RawValue::Str(name) => {
            let upper = name.to_ascii_uppercase();
            DSCP_NAMES
                .iter()
                .find(|(n, _)| *n == upper)
                .map(|(_, v)| Value::Int(i64::from(*v)))
                .ok_or_else(|| {
                    let names: Vec<&str> = DSCP_NAMES.iter().map(|(n, _)| *n).collect();
                    unknown_choice("DSCP name", name, &names)
                })
        }
        other => Err(format!(
            "expected a DSCP value 0..=63 or a name such as \"EF\", got {}",
            other.describe()
        )),
    }
}
