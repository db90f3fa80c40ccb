//! Cuback (CUBIC driven by acknowledged segments, quicly PR #678; `cclab_cc::cuback`): slow
//! start, fast convergence, β on loss and on ECN-CE, C, and ABBA.

use cclab_cc::{CcSpec, CubackConfig};

use super::{
    ABBA, Controller, Param, abba_of, beta, cubic_c, fast_convergence, slow_start_of,
    slow_start_params,
};

/// Cuback's slow-start keys: standard slow start by default, as quicly.
const SLOW_START: [Param; 11] = slow_start_params("standard", "quicly lib/cc-pico.c");

/// A β given in (0, 1), in per mille, kept inside 1..=999.
pub(super) fn permille(beta: f64) -> u32 {
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "rounded and clamped to 1..=999 first"
    )]
    let units = (beta * 1000.0).round().clamp(1.0, 999.0) as u32;
    units
}

/// C in thousandths, kept inside 10..=10000 (the declaration keeps C in [0.01, 10]).
fn milli(c: f64) -> u32 {
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "rounded and clamped to 10..=10000 first"
    )]
    let units = (c * 1000.0).round().clamp(10.0, 10_000.0) as u32;
    units
}

/// Cuback.
pub(super) const CUBACK: Controller = Controller {
    name: "cuback",
    doc: "CUBIC driven by acknowledged data instead of time (quicly conventions)",
    source: "quicly PR #678 (lib/cc-pico.c); RFC 9438",
    params: &[
        SLOW_START[0],
        SLOW_START[1],
        SLOW_START[2],
        SLOW_START[3],
        SLOW_START[4],
        SLOW_START[5],
        SLOW_START[6],
        SLOW_START[7],
        SLOW_START[8],
        SLOW_START[9],
        SLOW_START[10],
        fast_convergence("RFC 9438 §4.7"),
        beta(
            "beta",
            "0.7",
            "window after a loss as a fraction of cwnd (rounded to 1/1000)",
            "RFC 9438 §4.6; quicly QUICLY_CUBIC_BETA",
        ),
        beta(
            "beta_ecn",
            "0.85",
            "window after an ECN-CE reduction as a fraction of cwnd (rounded to 1/1000)",
            "RFC 8511 §3 (ABE)",
        ),
        cubic_c(
            "aggressiveness C of the cubic function (rounded to 1/1000)",
            "RFC 9438 §5; quicly QUICLY_CUBIC_C",
        ),
        ABBA,
    ],
    build: |v| {
        let d = CubackConfig::default();
        Ok(CcSpec::Cuback(CubackConfig {
            slow_start: slow_start_of(v, d.slow_start)?,
            fast_convergence: v.bool("fast_convergence").unwrap_or(d.fast_convergence),
            beta_permille: v.float("beta").map_or(d.beta_permille, permille),
            beta_ecn_permille: v.float("beta_ecn").map_or(d.beta_ecn_permille, permille),
            c_milli: v.float("c").map_or(d.c_milli, milli),
            abba: abba_of(v),
        }))
    },
};

#[cfg(test)]
mod tests {
    use super::*;

    /// The declared defaults give the controller's defaults.
    #[test]
    fn defaults_round_to_the_controller_units() {
        let d = CubackConfig::default();
        assert_eq!(permille(0.7), d.beta_permille);
        assert_eq!(permille(0.85), d.beta_ecn_permille);
        assert_eq!(milli(0.4), d.c_milli);
    }
}
