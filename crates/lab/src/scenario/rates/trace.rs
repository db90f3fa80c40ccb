//! `trace`: a mahimahi link trace, read unchanged (the simulator's
//! `cclab_sim::net::rate::trace` holds the semantics).

use cclab_sim::net::rate::{RateShape, Trace};

use super::super::params::{Kind, Param};
use super::{RateKind, RateSpec};

/// A mahimahi trace.
pub(super) const TRACE: RateKind = RateKind {
    name: "trace",
    doc: "mahimahi delivery opportunities: one line per 1500-byte opportunity, its time in ms; the trace loops with its last time as period",
    source: "mahimahi `mm-link` trace format (`LinkQueue`, Netravali et al., USENIX ATC 2015)",
    params: &[Param {
        name: "file",
        kind: Kind::Other {
            ty: "path",
            range: "a file relative to the scenario file",
            quoted: true,
        },
        unit: "",
        default: "—",
        doc: "the trace file (e.g. `traces/cellular.down`)",
        source: "mm-link(1)",
    }],
    build: |v| match v.raw("file") {
        Some(super::RawValue::Str(path)) => Ok(RateSpec::File {
            path: path.clone(),
            parse,
        }),
        Some(other) => Err((
            "file",
            format!("expected a file name, got {}", other.describe()),
        )),
        None => Err(("file", "`file` is required".into())),
    },
};

/// Parse the file's text.
fn parse(text: &str) -> Result<RateShape, (usize, String)> {
    Trace::parse(text)
        .map(|t| RateShape::Trace(t.into()))
        .map_err(|e| (e.line, e.reason))
}
