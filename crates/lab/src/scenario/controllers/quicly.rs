//! quicly's Reno and CUBIC (`cclab_cc::quicly`; h2o/quicly `lib/cc-reno.c`, `lib/cc-cubic.c`,
//! `lib/cc-pico.c`): β on loss and on ECN-CE; CUBIC's engine (pico or legacy) and MTU
//! normalisation; ABBA on quicly's CUBIC.

use cclab_cc::{CcSpec, CubicEngine, QuiclyConfig, QuiclyKind};

use super::cuback::permille;
use super::{ABBA, Controller, Kind, Param, Resolved, abba_of, beta};

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
/// `engine`: which of quicly's CUBIC implementations.
const ENGINE: Param = Param {
    name: "engine",
    kind: Kind::Choice(&CubicEngine::NAMES),
    unit: "",
    default: "pico",
    doc: "quicly's CUBIC: pico (RFC 9438 on the pico engine, quicly since PR #678, the CUBIC \
          ABBA was evaluated against: W_est from the reduced window, growth per byte \
          acknowledged) or legacy (RFC 8312, lib/cc-cubic.c: W_est from β·W_max, growth per \
          ACK frame)",
    source: "h2o/quicly lib/cc-pico.c at 01aa5e7c (`cubic`, `cubic_legacy`)",
};

/// `normalize_mtu`: the pico engine's growth in reference MTUs.
const NORMALIZE_MTU: Param = Param {
    name: "normalize_mtu",
    kind: Kind::Bool,
    unit: "",
    default: "true",
    doc: "pico engine: grow W_est and the cubic curve in units of quicly's reference MTU \
          (1462 bytes of datagram, against the flow's datagram: 1280 → × 1.142) instead of \
          the packet",
    source: "h2o/quicly lib/cc-pico.c QUICLY_CC_REFERENCE_MTU, `normalize_mtu`",
};

const CUBIC_PARAMS: [Param; 5] = {
    let [b, e] = params("0.85");
    [b, e, ENGINE, NORMALIZE_MTU, ABBA]
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
        engine: v
            .choice("engine")
            .and_then(CubicEngine::from_name)
            .unwrap_or(d.engine),
        normalize_mtu: v.bool("normalize_mtu").unwrap_or(d.normalize_mtu),
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
    doc: "quicly's CUBIC: RFC 9438 on the pico engine (default) or RFC 8312, on a byte window",
    source: "h2o/quicly lib/cc-pico.c, lib/cc-cubic.c",
    params: &CUBIC_PARAMS,
    build: |v| Ok(build(v, QuiclyKind::Cubic)),
};
