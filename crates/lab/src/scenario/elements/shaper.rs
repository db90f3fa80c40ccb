//! `shaper`: a token-bucket shaper (rate, burst, limit) that holds packets above its rate in a
//! byte-limited FIFO instead of dropping them (the `tbf` qdisc).

use cclab_sim::net::ElementSpec;

use super::super::params::Param;
use super::Element;
use super::policer::{DEFAULT_BURST, RATE, SIZE, rate, size};

/// Default FIFO limit: 100 full-size packets, cclab's choice (tc-tbf(8) requires a limit).
const DEFAULT_LIMIT: u64 = 150_000;

/// Token-bucket shaper.
pub(super) const SHAPER: Element = Element {
    name: "shaper",
    doc: "token bucket with a FIFO: a packet waits until the bucket holds its size; drops only when the FIFO is full",
    source: "Linux `sch_tbf.c` (`tbf_enqueue`, `tbf_dequeue`); tc-tbf(8)",
    params: &[
        Param {
            name: "rate",
            kind: RATE,
            unit: "",
            default: "—",
            doc: "token rate: the long-run rate that leaves",
            source: "tc-tbf(8) `rate`",
        },
        Param {
            name: "burst",
            kind: SIZE,
            unit: "",
            default: "15000",
            doc: "bucket size (full at the start); larger packets are dropped",
            source: "tc-tbf(8) `burst`",
        },
        Param {
            name: "limit",
            kind: SIZE,
            unit: "",
            default: "150000",
            doc: "bytes that may wait",
            source: "tc-tbf(8) `limit`",
        },
    ],
    build: |v| {
        Ok(ElementSpec::Shaper {
            rate_bps: rate(v)?,
            burst_bytes: size(v, "burst")?.unwrap_or(DEFAULT_BURST),
            limit_bytes: size(v, "limit")?.unwrap_or(DEFAULT_LIMIT),
        })
    },
};
