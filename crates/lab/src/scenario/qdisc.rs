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

/// Every parameter of the table form and the disciplines that have it.
pub const PARAMS: &[(&str, &[&str])] = &[
    ("target", &["codel", "fq_codel", "pie", "dualpi2"]),
    ("interval", &["codel", "fq_codel"]),
    ("limit", &["codel", "fq_codel", "pie", "red", "dualpi2"]),
    ("ecn", &["codel", "fq_codel", "pie", "red"]),
    ("ce_threshold", &["codel", "fq_codel"]),
    ("flows", &["fq_codel"]),
    ("memory_limit", &["fq_codel"]),
    ("quantum", &["fq_codel"]),
    ("drop_batch", &["fq_codel"]),
    ("tupdate", &["pie", "dualpi2"]),
    ("alpha", &["pie", "dualpi2"]),
    ("beta", &["pie", "dualpi2"]),
    ("bytemode", &["pie"]),
    ("max_burst", &["pie"]),
    ("dq_rate_estimator", &["pie"]),
    ("min_th", &["red"]),
    ("max_th", &["red"]),
    ("max_p", &["red"]),
    ("wlog", &["red"]),
    ("avpkt", &["red"]),
    ("harddrop", &["red"]),
    ("coupling", &["dualpi2"]),
    ("step_thresh", &["dualpi2"]),
    ("c_protection", &["dualpi2"]),
    ("drop_overload", &["dualpi2"]),
    ("drop_early", &["dualpi2"]),
    ("l_dscp", &["dualpi2"]),
];

/// The parameters discipline `kind` accepts, in [`PARAMS`] order.
#[must_use]
pub fn params_of(kind: &str) -> Vec<&'static str> {
    PARAMS
        .iter()
        .filter(|(_, kinds)| kinds.contains(&kind))
        .map(|(p, _)| *p)
        .collect()
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
        let kinds = PARAMS
            .iter()
            .find(|(p, _)| p == param)
            .map_or(&[][..], |(_, k)| *k);
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
            .filter(|p| PARAMS.iter().any(|(x, _)| x == p));
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

/// The parameters set in `t`, with their spans, in [`PARAMS`] order.
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
