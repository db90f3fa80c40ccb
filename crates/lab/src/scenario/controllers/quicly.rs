//! quicly's Reno and CUBIC (`cclab_cc::quicly`; h2o/quicly `lib/cc-reno.c`, `lib/cc-cubic.c`):
//! β on loss and on ECN-CE; ABBA on quicly's CUBIC.

use cclab_cc::{CcSpec, QuiclyConfig, QuiclyKind};

use super::cuback::permille;
use super::{ABBA, Controller, Param, Resolved, abba_of, beta};

/// The keys of both (`beta_ecn`'s default differs).
const fn params(beta_ecn_default: &'static str) -> [Param; 2] {
    [
        beta(
            "beta",
            "0.7",
            "window after a loss as a fraction of cwnd (rounded to 1/1000); the first loss \
             out of slow start halves it whatever this is",
            "quicly QUICLY_RENO_BETA, QUICLY_CUBIC_BETA = 0.7",
        ),
        beta(
            "beta_ecn",
            beta_ecn_default,
            "window after an ECN-CE reduction as a fraction of cwnd (rounded to 1/1000); \
             quicly master has no separate ECN response (set it equal to beta)",
            "RFC 8511 §3 (ABE: 0.85 for CUBIC, 0.8 for Reno)",
        ),
    ]
}

const RENO_PARAMS: [Param; 2] = params("0.8");
const CUBIC_PARAMS: [Param; 3] = {
    let [b, e] = params("0.85");
    [b, e, ABBA]
};

fn build(v: &Resolved, kind: QuiclyKind) -> CcSpec {
    let d = QuiclyConfig::new(kind);
    CcSpec::Quicly(QuiclyConfig {
        kind,
        beta_permille: v.float("beta").map_or(d.beta_permille, permille),
        beta_ecn_permille: v.float("beta_ecn").map_or(d.beta_ecn_permille, permille),
        abba: match kind {
            QuiclyKind::Cubic => abba_of(v),
            QuiclyKind::Reno => d.abba,
        },
    })
}

/// quicly's Reno.
pub(super) const QUICLY_RENO: Controller = Controller {
    name: "quicly_reno",
    doc: "quicly's Reno: byte window, β 0.7, halving out of slow start",
    source: "h2o/quicly lib/cc-reno.c",
    params: &RENO_PARAMS,
    build: |v| Ok(build(v, QuiclyKind::Reno)),
};

/// quicly's CUBIC.
pub(super) const QUICLY_CUBIC: Controller = Controller {
    name: "quicly_cubic",
    doc: "quicly's CUBIC: RFC 8312 in floating point on a byte window",
    source: "h2o/quicly lib/cc-cubic.c",
    params: &CUBIC_PARAMS,
    build: |v| Ok(build(v, QuiclyKind::Cubic)),
};
