//! Queue disciplines (AQMs) at a bottleneck: the `qdisc` key of the `dumbbell` topology, and
//! `qdisc` / `up_qdisc` / `down_qdisc` of the `access` and `rtt_fair` presets.
//!
//! Contract: [`resolve`] turns the key as written into `None` (the drop-tail FIFO, sized by the
//! topology's `buffer`) or a checked [`AqmConfig`]. Two spellings: a name with Linux's defaults
//! (`qdisc = "fq_codel"`, or `"fifo"`), or a table with `kind` and any of that discipline's
//! parameters in the file's usual units (a parameter left out keeps Linux's default). Every
//! problem is an error naming the file, line and field: an unknown `kind` lists the valid ones
//! (with a suggestion), a parameter of another discipline says which disciplines have it, and
//! out-of-range values are reported by [`AqmConfig::validate`] at the qdisc's table.
//!
//! ```toml
//! [topology.qdisc]                # or: qdisc = "fq_codel" (Linux defaults)
//! kind = "fq_codel"               # fifo | codel | fq_codel | pie | red | dualpi2
//! target = "5ms"                  # codel, fq_codel, pie, dualpi2
//! interval = "100ms"              # codel, fq_codel
//! limit = 10240                   # packets (red: bytes, e.g. "400KB")
//! ecn = true                      # codel, fq_codel, pie, red
//! ce_threshold = "1ms"            # codel, fq_codel
//! flows = 1024                    # fq_codel; also memory_limit ("32MiB"), quantum ("1514B"),
//!                                 # drop_batch (64)
//! # pie: tupdate, alpha, beta, bytemode, max_burst, dq_rate_estimator
//! # red: min_th, max_th (bytes), max_p, wlog, avpkt, harddrop
//! # dualpi2: tupdate, alpha, beta, coupling, step_thresh, c_protection (percent),
//! #          drop_overload, drop_early, l_dscp (DSCP numbers or names, e.g. [46, "CS5"])
//! ```

use std::fmt::Write as _;
use std::ops::Range;

use cclab_sim::AqmConfig;
use cclab_sim::queue::{CodelParams, DualPi2Params, FqCodelParams, PieParams, RedParams};
use toml::Spanned;

use super::ScenarioError;
use super::error::{Source, unknown_choice};
use super::params::{Entry, Kind, Param};
use super::raw::{RawDscp, RawLimit, RawQdisc, RawQdiscTable};
use crate::units::{
    BufferSpec, ByteSize, TimeValue, fmt_dur, fmt_number, parse_buffer, parse_size,
};

/// The drop-tail FIFO's name (the default: sized by the topology's `buffer`).
pub const FIFO: &str = "fifo";

/// Names a `qdisc` key accepts: `fifo` and [`AqmConfig::NAMES`].
pub const QDISC_NAMES: [&str; 6] = [
    FIFO,
    AqmConfig::NAMES[0],
    AqmConfig::NAMES[1],
    AqmConfig::NAMES[2],
    AqmConfig::NAMES[3],
    AqmConfig::NAMES[4],
];

const fn dur(
    name: &'static str,
    default: &'static str,
    doc: &'static str,
    source: &'static str,
) -> Param {
    Param {
        name,
        kind: Kind::Duration {
            max: cclab_sim::Dur::MAX,
        },
        unit: "",
        default,
        doc,
        source,
    }
}

const fn flag(
    name: &'static str,
    default: &'static str,
    doc: &'static str,
    source: &'static str,
) -> Param {
    Param {
        name,
        kind: Kind::Bool,
        unit: "",
        default,
        doc,
        source,
    }
}

const fn number(
    name: &'static str,
    default: &'static str,
    doc: &'static str,
    source: &'static str,
) -> Param {
    Param {
        name,
        kind: Kind::Float {
            min: 0.0,
            min_open: false,
            max: f64::INFINITY,
            max_open: true,
        },
        unit: "",
        default,
        doc,
        source,
    }
}

const fn count(
    name: &'static str,
    max: i64,
    unit: &'static str,
    default: &'static str,
    doc: &'static str,
    source: &'static str,
) -> Param {
    Param {
        name,
        kind: Kind::Int { min: 0, max },
        unit,
        default,
        doc,
        source,
    }
}

const fn size(
    name: &'static str,
    default: &'static str,
    doc: &'static str,
    source: &'static str,
) -> Param {
    Param {
        name,
        kind: Kind::Other {
            ty: "size",
            range: "bytes, or a size such as \"1514B\", \"32MiB\"",
            quoted: true,
        },
        unit: "",
        default,
        doc,
        source,
    }
}

const fn packet_limit_param(default: &'static str, source: &'static str) -> Param {
    Param {
        name: "limit",
        kind: Kind::Other {
            ty: "packets",
            range: "0..=4294967295, or e.g. \"1000p\"",
            quoted: false,
        },
        unit: "",
        default,
        doc: "most packets queued; arrivals beyond it are dropped",
        source,
    }
}

const U32_MAX: i64 = u32::MAX as i64;
const U8_MAX: i64 = u8::MAX as i64;

/// Every queue discipline a `qdisc` key may name, with its table keys (in the order error
/// messages list them). The values are checked by this module's per-discipline functions and by
/// [`AqmConfig::validate`]; a test checks that every declared default is the simulator's
/// (Linux's) default.
pub const QDISCS: &[&Entry] = &[
    &Entry {
        name: FIFO,
        doc: "drop-tail FIFO sized by the topology's `buffer` (the default)",
        source: "Linux pfifo/bfifo",
        params: &[],
    },
    &Entry {
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
            Param {
                name: "ce_threshold",
                kind: Kind::Duration {
                    max: cclab_sim::Dur::MAX,
                },
                unit: "",
                default: "off",
                doc: "mark every packet whose sojourn exceeds this (unset: off)",
                source: "Linux codel `ce_threshold` (CODEL_DISABLED_THRESHOLD)",
            },
        ],
    },
    &Entry {
        name: "fq_codel",
        doc: "FQ-CoDel: DRR over hashed flow queues, CoDel in each",
        source: "RFC 8290; Linux sch_fq_codel.c",
        params: &[
            dur(
                "target",
                "5ms",
                "CoDel target of each flow queue",
                "RFC 8290 §5.2; Linux fq_codel_init",
            ),
            dur(
                "interval",
                "100ms",
                "CoDel interval of each flow queue",
                "RFC 8290 §5.2; Linux fq_codel_init",
            ),
            packet_limit_param("10240", "Linux fq_codel_init `sch->limit` = 10240"),
            flag(
                "ecn",
                "true",
                "mark ECN-capable packets instead of dropping them",
                "Linux fq_codel_init (on)",
            ),
            Param {
                name: "ce_threshold",
                kind: Kind::Duration {
                    max: cclab_sim::Dur::MAX,
                },
                unit: "",
                default: "off",
                doc: "mark every packet whose sojourn exceeds this (unset: off)",
                source: "Linux fq_codel `ce_threshold` (CODEL_DISABLED_THRESHOLD)",
            },
            count(
                "flows",
                U32_MAX,
                "buckets",
                "1024",
                "number of flow queues (hash buckets)",
                "Linux fq_codel_init `flows_cnt` = 1024",
            ),
            size(
                "memory_limit",
                "32MiB",
                "most bytes of packet memory before drops",
                "Linux fq_codel_init `memory_limit` = 32 MiB",
            ),
            size(
                "quantum",
                "1514B",
                "bytes a flow queue may send per DRR round",
                "Linux fq_codel_init `quantum` = psched_mtu",
            ),
            count(
                "drop_batch",
                U32_MAX,
                "packets",
                "64",
                "packets dropped at once from the fattest queue on overflow",
                "Linux fq_codel_init `drop_batch_size` = 64",
            ),
        ],
    },
    &Entry {
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
    },
    &Entry {
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
                kind: Kind::Float {
                    min: 0.0,
                    min_open: false,
                    max: 1.0,
                    max_open: false,
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
    },
    &Entry {
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
                kind: Kind::Other {
                    ty: "list",
                    range: "DSCP values 0..=63 or names such as \"EF\", \"CS5\"",
                    quoted: false,
                },
                unit: "",
                default: "[]",
                doc: "DSCPs classified into the L4S queue besides ECT(1) and CE",
                source: "RFC 9332 §2.5.1.1",
            },
        ],
    },
];

/// The disciplines that take parameter `param`, in [`QDISCS`] order.
fn owners(param: &str) -> Vec<&'static str> {
    QDISCS
        .iter()
        .filter(|q| q.params.iter().any(|p| p.name == param))
        .map(|q| q.name)
        .collect()
}

/// The parameters discipline `kind` accepts, in its declaration's order.
#[must_use]
pub fn params_of(kind: &str) -> Vec<&'static str> {
    QDISCS
        .iter()
        .find(|q| q.name == kind)
        .map_or_else(Vec::new, |q| q.params.iter().map(|p| p.name).collect())
}

/// DSCP names accepted in `l_dscp` (case-insensitive): class selectors (RFC 2474), assured
/// forwarding (RFC 2597), EF (RFC 3246), VOICE-ADMIT (RFC 5865), LE (RFC 8622) and BE (= CS0).
pub const DSCP_NAMES: &[(&str, u8)] = &[
    ("BE", 0),
    ("CS0", 0),
    ("LE", 1),
    ("CS1", 8),
    ("AF11", 10),
    ("AF12", 12),
    ("AF13", 14),
    ("CS2", 16),
    ("AF21", 18),
    ("AF22", 20),
    ("AF23", 22),
    ("CS3", 24),
    ("AF31", 26),
    ("AF32", 28),
    ("AF33", 30),
    ("CS4", 32),
    ("AF41", 34),
    ("AF42", 36),
    ("AF43", 38),
    ("CS5", 40),
    ("VA", 44),
    ("EF", 46),
    ("CS6", 48),
    ("CS7", 56),
];

/// Resolve a `qdisc` key at `field` (e.g. `topology.qdisc`): `None` for the FIFO.
/// `largest_packet` is the largest wire packet of the flows (a byte limit must hold one).
pub(crate) fn resolve(
    src: &Source<'_>,
    field: &str,
    raw: &Spanned<RawQdisc>,
    largest_packet: u64,
) -> Result<Option<AqmConfig>, ScenarioError> {
    let table = match raw.get_ref() {
        RawQdisc::Name(name) => return by_name(src, field, name, raw.span()),
        RawQdisc::Table(t) => t,
    };
    let Some(kind) = &table.kind else {
        return Err(src.error(
            Some(raw.span()),
            format!("{field}.kind"),
            format!(
                "a qdisc table needs `kind`, one of: {}",
                QDISC_NAMES.join(", ")
            ),
        ));
    };
    let name = kind.get_ref().as_str();
    let given = given(table);
    if name == FIFO {
        if let Some((param, span)) = given.first() {
            return Err(src.error(
                Some(span.clone()),
                format!("{field}.{param}"),
                "qdisc `fifo` (the drop-tail buffer) has no parameters; the topology's \
                 `buffer` sets its limit",
            ));
        }
        return Ok(None);
    }
    let Some(mut cfg) = AqmConfig::default_for(name) else {
        return Err(src.error(
            Some(kind.span()),
            format!("{field}.kind"),
            unknown_choice("qdisc", name, &QDISC_NAMES),
        ));
    };
    for (param, span) in &given {
        let kinds = owners(param);
        if !kinds.contains(&name) {
            return Err(src.error(
                Some(span.clone()),
                format!("{field}.{param}"),
                format!(
                    "`{param}` is a {} parameter; qdisc `{name}` has no such parameter (it \
                     takes: {})",
                    kinds.join("/"),
                    params_of(name).join(", ")
                ),
            ));
        }
    }
    let t = table.as_ref();
    let at = |p: &str| format!("{field}.{p}");
    match &mut cfg {
        AqmConfig::Codel(p) => codel(src, &at, t, p)?,
        AqmConfig::FqCodel(p) => fq_codel(src, &at, t, p)?,
        AqmConfig::Pie(p) => pie(src, &at, t, p)?,
        AqmConfig::Red(p) => red(src, &at, t, p)?,
        AqmConfig::DualPi2(p) => dualpi2(src, &at, t, p)?,
    }
    if let Err(msg) = cfg.validate() {
        // The message names the parameter first (`target` must be positive).
        let param = msg
            .strip_prefix('`')
            .and_then(|m| m.split_once('`'))
            .map(|(p, _)| p)
            .filter(|p| !owners(p).is_empty());
        let field = param.map_or_else(|| field.to_owned(), |p| format!("{field}.{p}"));
        return Err(src.error(Some(raw.span()), field, format!("qdisc `{name}`: {msg}")));
    }
    if let AqmConfig::Red(p) = &cfg
        && p.limit < largest_packet
    {
        return Err(src.error(
            Some(raw.span()),
            format!("{field}.limit"),
            format!(
                "qdisc `red`: a limit of {} bytes cannot hold one full-size packet ({largest_packet} \
                 bytes)",
                p.limit
            ),
        ));
    }
    Ok(Some(cfg))
}

fn by_name(
    src: &Source<'_>,
    field: &str,
    name: &str,
    span: Range<usize>,
) -> Result<Option<AqmConfig>, ScenarioError> {
    if name == FIFO {
        return Ok(None);
    }
    match AqmConfig::default_for(name) {
        Some(cfg) => Ok(Some(cfg)),
        None => Err(src.error(
            Some(span),
            field.to_owned(),
            unknown_choice("qdisc", name, &QDISC_NAMES),
        )),
    }
}

/// The parameters set in `t`, with their spans.
fn given(t: &RawQdiscTable) -> Vec<(&'static str, Range<usize>)> {
    fn s<T>(v: Option<&Spanned<T>>) -> Option<Range<usize>> {
        v.map(Spanned::span)
    }
    let all = [
        ("target", s(t.target.as_ref())),
        ("interval", s(t.interval.as_ref())),
        ("limit", s(t.limit.as_ref())),
        ("ecn", s(t.ecn.as_ref())),
        ("ce_threshold", s(t.ce_threshold.as_ref())),
        ("flows", s(t.flows.as_ref())),
        ("memory_limit", s(t.memory_limit.as_ref())),
        ("quantum", s(t.quantum.as_ref())),
        ("drop_batch", s(t.drop_batch.as_ref())),
        ("tupdate", s(t.tupdate.as_ref())),
        ("alpha", s(t.alpha.as_ref())),
        ("beta", s(t.beta.as_ref())),
        ("bytemode", s(t.bytemode.as_ref())),
        ("max_burst", s(t.max_burst.as_ref())),
        ("dq_rate_estimator", s(t.dq_rate_estimator.as_ref())),
        ("min_th", s(t.min_th.as_ref())),
        ("max_th", s(t.max_th.as_ref())),
        ("max_p", s(t.max_p.as_ref())),
        ("wlog", s(t.wlog.as_ref())),
        ("avpkt", s(t.avpkt.as_ref())),
        ("harddrop", s(t.harddrop.as_ref())),
        ("coupling", s(t.coupling.as_ref())),
        ("step_thresh", s(t.step_thresh.as_ref())),
        ("c_protection", s(t.c_protection.as_ref())),
        ("drop_overload", s(t.drop_overload.as_ref())),
        ("drop_early", s(t.drop_early.as_ref())),
        ("l_dscp", s(t.l_dscp.as_ref())),
    ];
    all.into_iter()
        .filter_map(|(p, span)| span.map(|s| (p, s)))
        .collect()
}

type At<'a> = dyn Fn(&str) -> String + 'a;

fn set_dur(v: Option<&Spanned<TimeValue>>, slot: &mut cclab_sim::Dur) {
    if let Some(v) = v {
        *slot = v.get_ref().0;
    }
}

fn set_bool(v: Option<&Spanned<bool>>, slot: &mut bool) {
    if let Some(v) = v {
        *slot = *v.get_ref();
    }
}

fn set_f64(v: Option<&Spanned<f64>>, slot: &mut f64) {
    if let Some(v) = v {
        *slot = *v.get_ref();
    }
}

/// An integer parameter that must fit `max` (the parameter's type); range checks beyond the
/// type are [`AqmConfig::validate`]'s.
fn int(
    src: &Source<'_>,
    v: Option<&Spanned<i64>>,
    field: String,
    max: u32,
    unit: &str,
    default: u32,
) -> Result<u32, ScenarioError> {
    src.ranged_u32(v, field, 0..=max, unit, default)
}

/// A size parameter stored as `u32` bytes.
fn size_u32(
    src: &Source<'_>,
    v: Option<&Spanned<ByteSize>>,
    field: String,
    default: u32,
) -> Result<u32, ScenarioError> {
    let Some(v) = v else { return Ok(default) };
    u32::try_from(v.get_ref().0).map_err(|_| {
        src.error(
            Some(v.span()),
            field,
            format!("must be at most {} bytes, got {}", u32::MAX, v.get_ref().0),
        )
    })
}

/// A packet-count `limit`: a whole number, or a string in packets (`"1000p"`).
fn packet_limit(
    src: &Source<'_>,
    v: Option<&Spanned<RawLimit>>,
    field: String,
    kind: &str,
    default: u32,
) -> Result<u32, ScenarioError> {
    let Some(v) = v else { return Ok(default) };
    let bad = || {
        src.error(
            Some(v.span()),
            field.clone(),
            format!(
                "qdisc `{kind}` counts its limit in packets: a whole number 0..={} or e.g. \
                 \"1000p\"",
                u32::MAX
            ),
        )
    };
    match v.get_ref() {
        RawLimit::Number(n) => {
            if n.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(n) {
                Ok(*n as u32)
            } else {
                Err(bad())
            }
        }
        RawLimit::Text(t) => match parse_buffer(t) {
            Ok(BufferSpec::Packets(n)) => Ok(n),
            _ => Err(bad()),
        },
    }
}

/// A byte `limit` (RED): a number of bytes or a size with a unit.
fn byte_limit(
    src: &Source<'_>,
    v: Option<&Spanned<RawLimit>>,
    field: String,
    default: u64,
) -> Result<u64, ScenarioError> {
    let Some(v) = v else { return Ok(default) };
    let text = match v.get_ref() {
        RawLimit::Number(n) => format!("{n}"),
        RawLimit::Text(t) => t.clone(),
    };
    parse_size(&text).map_err(|e| {
        src.error(
            Some(v.span()),
            field,
            format!("qdisc `red` counts its limit in bytes: {e}"),
        )
    })
}

fn codel(
    src: &Source<'_>,
    at: &At<'_>,
    t: &RawQdiscTable,
    p: &mut CodelParams,
) -> Result<(), ScenarioError> {
    set_dur(t.target.as_ref(), &mut p.target);
    set_dur(t.interval.as_ref(), &mut p.interval);
    p.limit = packet_limit(src, t.limit.as_ref(), at("limit"), "codel", p.limit)?;
    set_bool(t.ecn.as_ref(), &mut p.ecn);
    if let Some(v) = &t.ce_threshold {
        p.ce_threshold = Some(v.get_ref().0);
    }
    Ok(())
}

fn fq_codel(
    src: &Source<'_>,
    at: &At<'_>,
    t: &RawQdiscTable,
    p: &mut FqCodelParams,
) -> Result<(), ScenarioError> {
    p.flows = int(
        src,
        t.flows.as_ref(),
        at("flows"),
        u32::MAX,
        "buckets",
        p.flows,
    )?;
    p.limit = packet_limit(src, t.limit.as_ref(), at("limit"), "fq_codel", p.limit)?;
    if let Some(v) = &t.memory_limit {
        p.memory_limit = v.get_ref().0;
    }
    p.quantum = size_u32(src, t.quantum.as_ref(), at("quantum"), p.quantum)?;
    p.drop_batch = int(
        src,
        t.drop_batch.as_ref(),
        at("drop_batch"),
        u32::MAX,
        "packets",
        p.drop_batch,
    )?;
    set_dur(t.target.as_ref(), &mut p.target);
    set_dur(t.interval.as_ref(), &mut p.interval);
    set_bool(t.ecn.as_ref(), &mut p.ecn);
    if let Some(v) = &t.ce_threshold {
        p.ce_threshold = Some(v.get_ref().0);
    }
    Ok(())
}

fn pie(
    src: &Source<'_>,
    at: &At<'_>,
    t: &RawQdiscTable,
    p: &mut PieParams,
) -> Result<(), ScenarioError> {
    set_dur(t.target.as_ref(), &mut p.target);
    set_dur(t.tupdate.as_ref(), &mut p.tupdate);
    set_f64(t.alpha.as_ref(), &mut p.alpha);
    set_f64(t.beta.as_ref(), &mut p.beta);
    p.limit = packet_limit(src, t.limit.as_ref(), at("limit"), "pie", p.limit)?;
    set_bool(t.ecn.as_ref(), &mut p.ecn);
    set_bool(t.bytemode.as_ref(), &mut p.bytemode);
    set_dur(t.max_burst.as_ref(), &mut p.max_burst);
    set_bool(t.dq_rate_estimator.as_ref(), &mut p.dq_rate_estimator);
    Ok(())
}

fn red(
    src: &Source<'_>,
    at: &At<'_>,
    t: &RawQdiscTable,
    p: &mut RedParams,
) -> Result<(), ScenarioError> {
    p.limit = byte_limit(src, t.limit.as_ref(), at("limit"), p.limit)?;
    if let Some(v) = &t.min_th {
        p.min_th = v.get_ref().0;
    }
    if let Some(v) = &t.max_th {
        p.max_th = v.get_ref().0;
    }
    if let Some(v) = &t.max_p {
        p.max_p = v.get_ref().0;
    }
    p.wlog = int(
        src,
        t.wlog.as_ref(),
        at("wlog"),
        u32::from(u8::MAX),
        "(EWMA weight 2^-wlog)",
        u32::from(p.wlog),
    )? as u8;
    p.avpkt = size_u32(src, t.avpkt.as_ref(), at("avpkt"), p.avpkt)?;
    set_bool(t.ecn.as_ref(), &mut p.ecn);
    set_bool(t.harddrop.as_ref(), &mut p.harddrop);
    Ok(())
}

fn dualpi2(
    src: &Source<'_>,
    at: &At<'_>,
    t: &RawQdiscTable,
    p: &mut DualPi2Params,
) -> Result<(), ScenarioError> {
    p.limit = packet_limit(src, t.limit.as_ref(), at("limit"), "dualpi2", p.limit)?;
    set_dur(t.target.as_ref(), &mut p.target);
    set_dur(t.tupdate.as_ref(), &mut p.tupdate);
    set_f64(t.alpha.as_ref(), &mut p.alpha);
    set_f64(t.beta.as_ref(), &mut p.beta);
    set_f64(t.coupling.as_ref(), &mut p.coupling);
    set_dur(t.step_thresh.as_ref(), &mut p.step_thresh);
    p.c_protection = int(
        src,
        t.c_protection.as_ref(),
        at("c_protection"),
        u32::from(u8::MAX),
        "percent",
        u32::from(p.c_protection),
    )? as u8;
    set_bool(t.drop_overload.as_ref(), &mut p.drop_overload);
    set_bool(t.drop_early.as_ref(), &mut p.drop_early);
    if let Some(list) = &t.l_dscp {
        let mut out = Vec::with_capacity(list.get_ref().len());
        for (i, d) in list.get_ref().iter().enumerate() {
            let v = dscp(d.get_ref())
                .map_err(|msg| src.error(Some(d.span()), format!("{}[{i}]", at("l_dscp")), msg))?;
            if !out.contains(&v) {
                out.push(v);
            }
        }
        p.l_dscp = out;
    }
    Ok(())
}

/// A DSCP value from a number 0..=63 or a name in [`DSCP_NAMES`].
fn dscp(d: &RawDscp) -> Result<u8, String> {
    match d {
        RawDscp::Number(n) => match u8::try_from(*n) {
            Ok(v) if v <= 63 => Ok(v),
            _ => Err(format!(
                "a DSCP value is 0..=63 (6 bits), got {n}; or a name such as \"EF\""
            )),
        },
        RawDscp::Name(name) => {
            let upper = name.to_ascii_uppercase();
            DSCP_NAMES
                .iter()
                .find(|(n, _)| *n == upper)
                .map(|(_, v)| *v)
                .ok_or_else(|| {
                    let names: Vec<&str> = DSCP_NAMES.iter().map(|(n, _)| *n).collect();
                    unknown_choice("DSCP name", name, &names)
                })
        }
    }
}

/// "fq_codel (target 5 ms, interval 100 ms, limit 10240 packets, ecn)": the discipline with its
/// main parameters, and every other one that differs from Linux's default.
#[must_use]
pub fn describe(cfg: &AqmConfig) -> String {
    let mut parts: Vec<String> = Vec::new();
    let flag = |on: bool, name: &str, parts: &mut Vec<String>| {
        if on {
            parts.push(name.to_owned());
        }
    };
    let bytes = |b: u64| format!("{b} bytes");
    match cfg {
        AqmConfig::Codel(p) => {
            parts.push(format!("target {}", fmt_dur(p.target)));
            parts.push(format!("interval {}", fmt_dur(p.interval)));
            parts.push(format!("limit {} packets", p.limit));
            flag(p.ecn, "ecn", &mut parts);
            if let Some(c) = p.ce_threshold {
                parts.push(format!("ce_threshold {}", fmt_dur(c)));
            }
        }
        AqmConfig::FqCodel(p) => {
            let d = FqCodelParams::default();
            parts.push(format!("target {}", fmt_dur(p.target)));
            parts.push(format!("interval {}", fmt_dur(p.interval)));
            parts.push(format!("limit {} packets", p.limit));
            if p.flows != d.flows {
                parts.push(format!("flows {}", p.flows));
            }
            if p.memory_limit != d.memory_limit {
                parts.push(format!("memory_limit {}", bytes(p.memory_limit)));
            }
            if p.quantum != d.quantum {
                parts.push(format!("quantum {}", bytes(u64::from(p.quantum))));
            }
            if p.drop_batch != d.drop_batch {
                parts.push(format!("drop_batch {}", p.drop_batch));
            }
            flag(p.ecn, "ecn", &mut parts);
            if let Some(c) = p.ce_threshold {
                parts.push(format!("ce_threshold {}", fmt_dur(c)));
            }
        }
        AqmConfig::Pie(p) => {
            let d = PieParams::default();
            parts.push(format!("target {}", fmt_dur(p.target)));
            parts.push(format!("tupdate {}", fmt_dur(p.tupdate)));
            parts.push(format!("alpha {}", fmt_number(p.alpha)));
            parts.push(format!("beta {}", fmt_number(p.beta)));
            parts.push(format!("limit {} packets", p.limit));
            if p.max_burst != d.max_burst {
                parts.push(format!("max_burst {}", fmt_dur(p.max_burst)));
            }
            flag(p.ecn, "ecn", &mut parts);
            flag(p.bytemode, "bytemode", &mut parts);
            flag(p.dq_rate_estimator, "dq_rate_estimator", &mut parts);
        }
        AqmConfig::Red(p) => {
            let d = RedParams::default();
            parts.push(format!("limit {}", bytes(p.limit)));
            parts.push(format!("min_th {}", bytes(p.min_th)));
            parts.push(format!("max_th {}", bytes(p.max_th)));
            parts.push(format!("max_p {}", fmt_number(p.max_p)));
            if p.wlog != d.wlog {
                parts.push(format!("wlog {}", p.wlog));
            }
            if p.avpkt != d.avpkt {
                parts.push(format!("avpkt {}", bytes(u64::from(p.avpkt))));
            }
            flag(p.ecn, "ecn", &mut parts);
            flag(p.harddrop, "harddrop", &mut parts);
        }
        AqmConfig::DualPi2(p) => {
            let d = DualPi2Params::default();
            parts.push(format!("target {}", fmt_dur(p.target)));
            parts.push(format!("tupdate {}", fmt_dur(p.tupdate)));
            parts.push(format!("alpha {}", fmt_number(p.alpha)));
            parts.push(format!("beta {}", fmt_number(p.beta)));
            parts.push(format!("coupling {}", fmt_number(p.coupling)));
            parts.push(format!("step_thresh {}", fmt_dur(p.step_thresh)));
            parts.push(format!("limit {} packets", p.limit));
            if p.c_protection != d.c_protection {
                parts.push(format!("c_protection {} %", p.c_protection));
            }
            if !p.drop_overload {
                parts.push("drop_overload off".to_owned());
            }
            flag(p.drop_early, "drop_early", &mut parts);
            if !p.l_dscp.is_empty() {
                let mut s = "l_dscp ".to_owned();
                for (i, v) in p.l_dscp.iter().enumerate() {
                    let _ = write!(s, "{}{v}", if i == 0 { "" } else { "/" });
                }
                parts.push(s);
            }
        }
    }
    format!("{} ({})", cfg.name(), parts.join(", "))
}
