//! Queue disciplines (AQMs) at a bottleneck: the `qdisc` key of the `dumbbell` topology, and
//! `qdisc` / `up_qdisc` / `down_qdisc` of the `access` and `rtt_fair` presets.
//!
//! Contract: [`resolve`] turns the key as written into `None` (the drop-tail FIFO, sized by the
//! topology's `buffer`) or a checked [`AqmConfig`]. Two spellings: a name with Linux's defaults
//! (`qdisc = "fq_codel"`, or `"fifo"`), or a table with `kind` and any of that discipline's
//! parameters in the file's usual units (a parameter left out keeps Linux's default). Each
//! discipline is one [`Qdisc`] declaration in its own file (its keys, a `build` from the checked
//! values, and how `describe` prints it), listed once in [`QDISCS`]; the generic resolver
//! (`params::resolve_component`) checks the keys. Every problem is an error naming the file, line
//! and field: an unknown `kind` lists the valid ones (with a suggestion), a parameter of another
//! discipline says which disciplines have it, and values the simulator rejects are reported by
//! [`AqmConfig::validate`] at the qdisc's table. Adding a discipline is one file here and one
//! line in [`QDISCS`].
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

use cclab_sim::AqmConfig;
use toml::Spanned;

use super::ScenarioError;
use super::error::Source;
use super::params::{self, Component, Conflict, Kind, Param, Resolved};
use super::raw::RawQdisc;
use crate::units::{BufferSpec, ByteSize, fmt_dur, fmt_number, parse_buffer};

mod codel;
mod dualpi2;
mod fifo;
mod fq_codel;
mod pie;
mod red;

/// The drop-tail FIFO's name (the default: sized by the topology's `buffer`).
pub const FIFO: &str = "fifo";

/// A queue discipline a `qdisc` key may name: its declaration, whose `build` makes its
/// [`AqmConfig`] (`None` for the drop-tail FIFO), and how [`describe`] prints a config of it.
pub struct Qdisc {
    /// Name, description, source, keys and `build`.
    pub decl: Component<Option<AqmConfig>>,
    /// The discipline's main parameters and every other one that differs from Linux's default,
    /// e.g. `["target 5 ms", "limit 1000 packets", "ecn"]`.
    pub describe: fn(&AqmConfig) -> Vec<String>,
}

params::declared_by_decl!(Qdisc);

impl params::Builds<Option<AqmConfig>> for Qdisc {
    fn build(&self, values: &Resolved) -> Result<Option<AqmConfig>, Conflict> {
        (self.decl.build)(values)
    }
}

/// Every queue discipline a `qdisc` key may name, in the order `cclab list qdiscs` prints
/// them. A test checks that every declared default is the simulator's (Linux's) default.
pub const QDISCS: &[&Qdisc] = &[
    &fifo::DROP_TAIL,
    &codel::CODEL,
    &fq_codel::FQ_CODEL,
    &pie::PIE,
    &red::RED,
    &dualpi2::DUALPI2,
];

/// Names a `qdisc` key accepts, in [`QDISCS`] order.
#[must_use]
pub fn names() -> Vec<&'static str> {
    QDISCS.iter().map(|q| q.decl.name).collect()
}

/// The unit of `aqm`'s own `limit`, from its declaration: `bytes` for a size (RED), else
/// `packets`.
#[must_use]
pub fn limit_unit(aqm: &AqmConfig) -> &'static str {
    let limit = QDISCS
        .iter()
        .find(|q| q.decl.name == aqm.name())
        .and_then(|q| q.decl.params.iter().find(|p| p.name == "limit"));
    match limit.map(|p| p.kind.type_name()) {
        Some("size") => "bytes",
        _ => "packets",
    }
}

/// The disciplines that take parameter `param`, in [`QDISCS`] order.
fn owners(param: &str) -> Vec<&'static str> {
    QDISCS
        .iter()
        .filter(|q| q.decl.params.iter().any(|p| p.name == param))
        .map(|q| q.decl.name)
        .collect()
}

pub(super) const fn dur(
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

pub(super) const fn flag(
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

pub(super) const fn number(
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

pub(super) const fn count(
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

pub(super) const fn size(
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

pub(super) const fn packet_limit_param(default: &'static str, source: &'static str) -> Param {
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

pub(super) const U32_MAX: i64 = u32::MAX as i64;
pub(super) const U8_MAX: i64 = u8::MAX as i64;

/// `ce_threshold` of the CoDel family (unset: off).
pub(super) const fn ce_threshold(source: &'static str) -> Param {
    Param {
        name: "ce_threshold",
        kind: Kind::Duration {
            max: cclab_sim::Dur::MAX,
        },
        unit: "",
        default: "off",
        doc: "mark every packet whose sojourn exceeds this (unset: off)",
        source,
    }
}

/// A packet-count `limit` of discipline `kind`: a whole number, or a string in packets
/// (`"1000p"`); `default` when unset.
pub(super) fn packet_limit(v: &Resolved, kind: &str, default: u32) -> Result<u32, Conflict> {
    let Some(raw) = v.raw("limit") else {
        return Ok(default);
    };
    let bad = || {
        (
            "limit",
            format!(
                "qdisc `{kind}` counts its limit in packets: a whole number 0..={} or e.g. \
                 \"1000p\"",
                u32::MAX
            ),
        )
    };
    match raw {
        params::RawValue::Int(n) => u32::try_from(*n).map_err(|_| bad()),
        params::RawValue::Float(n) => {
            if n.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(n) {
                #[expect(
                    clippy::cast_possible_truncation,
                    clippy::cast_sign_loss,
                    reason = "a whole number inside u32's range, checked above"
                )]
                Ok(*n as u32)
            } else {
                Err(bad())
            }
        }
        params::RawValue::Str(t) => match parse_buffer(t) {
            Ok(BufferSpec::Packets(n)) => Ok(n),
            _ => Err(bad()),
        },
        _ => Err(bad()),
    }
}

/// A size parameter in bytes (`"32MiB"` or a number); `default` when unset.
pub(super) fn size_u64(v: &Resolved, key: &'static str, default: u64) -> Result<u64, Conflict> {
    v.raw(key).map_or(Ok(default), |raw| {
        raw.parse::<ByteSize>().map(|b| b.0).map_err(|e| (key, e))
    })
}

/// A size parameter stored as `u32` bytes; `default` when unset.
pub(super) fn size_u32(v: &Resolved, key: &'static str, default: u32) -> Result<u32, Conflict> {
    let bytes = size_u64(v, key, u64::from(default))?;
    u32::try_from(bytes).map_err(|_| {
        (
            key,
            format!("must be at most {} bytes, got {bytes}", u32::MAX),
        )
    })
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
    let (kind, given) = match raw.get_ref() {
        RawQdisc::Name(name) => (Spanned::new(raw.span(), name.clone()), &Vec::new()),
        RawQdisc::Table {
            kind: Some(kind),
            params,
        } => (kind.clone(), params),
        RawQdisc::Table { kind: None, .. } => {
            return Err(src.error(
                Some(raw.span()),
                format!("{field}.kind"),
                format!("a qdisc table needs `kind`, one of: {}", names().join(", ")),
            ));
        }
    };
    let name = kind.get_ref().as_str();
    if name == FIFO
        && let Some((param, value)) = given.first()
    {
        return Err(src.error(
            Some(value.span()),
            format!("{field}.{param}"),
            "qdisc `fifo` (the drop-tail buffer) has no parameters; the topology's `buffer` \
             sets its limit",
        ));
    }
    // A bare name is reported at the key itself (`topology.qdisc`), a table's at its `kind`.
    let kind_key = if matches!(raw.get_ref(), RawQdisc::Name(_)) {
        None
    } else {
        Some("kind")
    };
    let Some(cfg) = params::resolve_component(src, field, "qdisc", kind_key, QDISCS, &kind, given)?
    else {
        return Ok(None);
    };
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

/// "fq_codel (target 5 ms, interval 100 ms, limit 10240 packets, ecn)": the discipline with its
/// main parameters, and every other one that differs from Linux's default.
#[must_use]
pub fn describe(cfg: &AqmConfig) -> String {
    let parts = QDISCS
        .iter()
        .find(|q| q.decl.name == cfg.name())
        .map_or_else(Vec::new, |q| (q.describe)(cfg));
    format!("{} ({})", cfg.name(), parts.join(", "))
}
