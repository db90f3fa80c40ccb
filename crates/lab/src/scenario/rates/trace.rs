//! `trace`: a mahimahi link trace, read unchanged (the simulator's
//! `cclab_sim::net::rate::trace` holds the semantics).

use cclab_sim::net::rate::{RateShape, Trace};

use super::RateKind;

/// A mahimahi trace.
pub(super) const TRACE: RateKind = RateKind {
    name: "trace",
    doc: "mahimahi delivery opportunities: one line per 1500-byte opportunity, its time in ms; the trace loops with its last time as period",
    source: "mahimahi `mm-link` trace format (`LinkQueue`, Netravali et al., USENIX ATC 2015)",
    params: &[super::file_param(
        "the trace file (e.g. `traces/cellular.down`)",
        "mm-link(1)",
    )],
    build: |v| super::file_spec(v, parse),
};

/// Parse the file's text.
fn parse(text: &str) -> Result<RateShape, (usize, String)> {
    Trace::parse(text)
        .map(|t| RateShape::Trace(t.into()))
        .map_err(|e| (e.line, e.reason))
}
