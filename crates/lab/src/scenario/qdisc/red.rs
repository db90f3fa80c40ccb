//! RED (Floyd & Jacobson 1993; Linux `sch_red.c`): its keys, its [`AqmConfig`] and its
//! description. Its `limit` is in bytes, unlike the other disciplines' packet counts.

use cclab_sim::AqmConfig;
use cclab_sim::queue::RedParams;

use super::{
    Component, Kind, Param, Qdisc, U8_MAX, count, flag, fmt_number, size, size_u32, size_u64,
};
use crate::scenario::params::RawValue;
use crate::units::{Probability, parse_size};

/// RED.
pub(super) const RED: Qdisc = Qdisc {
    decl: Component {
        name: "red",
        doc: "RED: drop probability from the averaged queue length in bytes",
        source: "Floyd & Jacobson 1993; Linux sch_red.c",
        params: &[
            Param {
                name: "limit",
                kind: Kind::Other {
                    ty: "size",
                    range: "bytes, or a size such as \"400KB\"",
                    quoted: true,
                },
                unit: "",
                default: "400KB",
                doc: "most bytes queued (must hold one full-size packet)",
                source: "tc-red(8) example `limit 400000`",
            },
            flag(
                "ecn",
                "false",
                "mark ECN-capable packets instead of dropping them",
                "Linux TC_RED_ECN (off)",
            ),
            size(
                "min_th",
                "30KB",
                "average queue where marking starts",
                "tc-red(8) example `min 30000`",
            ),
            size(
                "max_th",
                "90KB",
                "average queue where the probability reaches max_p",
                "tc-red(8) example `max 90000`",
            ),
            Param {
                name: "max_p",
                kind: Kind::Other {
                    ty: "probability",
                    range: "[0, 1], or a percentage such as \"2%\"",
                    quoted: false,
                },
                unit: "",
                default: "0.02",
                doc: "drop probability at max_th",
                source: "tc-red(8) example `probability 0.02`",
            },
            count(
                "wlog",
                U8_MAX,
                "(EWMA weight 2^-wlog)",
                "9",
                "averaging weight of the queue length",
                "Linux red_set_parms `Wlog`; tc-red(8)",
            ),
            size(
                "avpkt",
                "1000B",
                "average packet size, for the idle-time decay",
                "tc-red(8) example `avpkt 1000`",
            ),
            flag(
                "harddrop",
                "false",
                "drop above max_th even when ECN could mark",
                "Linux TC_RED_HARDDROP (off)",
            ),
        ],
        build: |v| {
            let d = RedParams::default();
            let limit = match v.raw("limit") {
                None => d.limit,
                Some(raw) => {
                    let text = match raw {
                        RawValue::Int(i) => format!("{i}"),
                        RawValue::Float(f) => format!("{f}"),
                        RawValue::Str(s) => s.clone(),
                        other => {
                            return Err((
                                "limit",
                                format!(
                                    "qdisc `red` counts its limit in bytes: expected a size \
                                     such as \"400KB\", got {}",
                                    other.describe()
                                ),
                            ));
                        }
                    };
                    parse_size(&text).map_err(|e| {
                        (
                            "limit",
                            format!("qdisc `red` counts its limit in bytes: {e}"),
                        )
                    })?
                }
            };
            let max_p = match v.raw("max_p") {
                None => d.max_p,
                Some(raw) => raw.parse::<Probability>().map_err(|e| ("max_p", e))?.0,
            };
            Ok(Some(AqmConfig::Red(RedParams {
                limit,
                min_th: size_u64(v, "min_th", d.min_th)?,
                max_th: size_u64(v, "max_th", d.max_th)?,
                max_p,
                wlog: v.u8("wlog").unwrap_or(d.wlog),
                avpkt: size_u32(v, "avpkt", d.avpkt)?,
                ecn: v.bool("ecn").unwrap_or(d.ecn),
                harddrop: v.bool("harddrop").unwrap_or(d.harddrop),
            })))
        },
    },
    describe: |cfg| {
        let AqmConfig::Red(p) = cfg else {
            return Vec::new();
        };
        let d = RedParams::default();
        let mut parts = vec![
            format!("limit {} bytes", p.limit),
            format!("min_th {} bytes", p.min_th),
            format!("max_th {} bytes", p.max_th),
            format!("max_p {}", fmt_number(p.max_p)),
        ];
        if p.wlog != d.wlog {
            parts.push(format!("wlog {}", p.wlog));
        }
        if p.avpkt != d.avpkt {
            parts.push(format!("avpkt {} bytes", p.avpkt));
        }
        for (on, name) in [(p.ecn, "ecn"), (p.harddrop, "harddrop")] {
            if on {
                parts.push(name.to_owned());
            }
        }
        parts
    },
};
