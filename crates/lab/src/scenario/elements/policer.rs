//! `policer`: a token-bucket policer (rate, burst) that drops packets above its rate
//! (`tc … action police`), as in Pantheon's policer scenarios.

use cclab_sim::net::ElementSpec;

use super::super::params::{Conflict, Kind, Param, RawValue, Resolved};
use super::Element;

pub(super) const RATE: Kind = Kind::Other {
    ty: "rate",
    range: "bit/s, or e.g. \"12Mbit\"",
    quoted: true,
};
pub(super) const SIZE: Kind = Kind::Other {
    ty: "size",
    range: "bytes, or e.g. \"15KB\", \"64KiB\"",
    quoted: true,
};

/// Default bucket: ten full-size (1500-byte) packets, cclab's choice (tc requires one).
pub(super) const DEFAULT_BURST: u64 = 15_000;

/// Token-bucket policer.
pub(super) const POLICER: Element = Element {
    name: "policer",
    doc: "token bucket: a packet passes if the bucket holds its size, else it is dropped",
    source: "Linux `act_police` (`tcf_police_act`); tc-police(8); Pantheon policer scenarios",
    params: &[
        Param {
            name: "rate",
            kind: RATE,
            unit: "",
            default: "—",
            doc: "token rate: the long-run rate that passes",
            source: "tc-police(8) `rate`",
        },
        Param {
            name: "burst",
            kind: SIZE,
            unit: "",
            default: "15000",
            doc: "bucket size (full at the start)",
            source: "tc-police(8) `burst`",
        },
    ],
    build: |v| {
        Ok(ElementSpec::Policer {
            rate_bps: rate(v)?,
            burst_bytes: size(v, "burst")?.unwrap_or(DEFAULT_BURST),
        })
    },
};

/// The required `rate` key.
pub(crate) fn rate(v: &Resolved) -> Result<u64, Conflict> {
    match v.raw("rate") {
        None => Err(("rate", "`rate` is required".into())),
        Some(RawValue::Str(s)) => crate::units::parse_rate(s).map_err(|e| ("rate", e.0)),
        Some(RawValue::Int(n)) if *n > 0 => Ok(n.unsigned_abs()),
        Some(other) => Err((
            "rate",
            format!(
                "expected a positive rate such as \"12Mbit\", got {}",
                other.describe()
            ),
        )),
    }
}

/// An optional size key, in bytes.
pub(super) fn size(v: &Resolved, key: &'static str) -> Result<Option<u64>, Conflict> {
    match v.raw(key) {
        None => Ok(None),
        Some(RawValue::Str(s)) => crate::units::parse_size(s)
            .map(Some)
            .map_err(|e| (key, e.0)),
        Some(RawValue::Int(n)) if *n > 0 => Ok(Some(n.unsigned_abs())),
        Some(other) => Err((
            key,
            format!(
                "expected a positive size such as \"15KB\", got {}",
                other.describe()
            ),
        )),
    }
}
