//! CUBIC (RFC 9438 as Linux `tcp_cubic.c` implements it): slow start, fast convergence, the
//! Reno-friendly region, β and C (Linux module parameters `beta` and `bic_scale`), and ABBA.

use cclab_cc::cubic::BICTCP_BETA_SCALE;
use cclab_cc::{CcSpec, CubicConfig};

use super::{
    ABBA, Controller, Kind, Param, abba_of, beta, cubic_c, fast_convergence, slow_start_of,
    slow_start_params,
};

/// CUBIC's slow-start keys: HyStart by default, as Linux.
const SLOW_START: [Param; 11] = slow_start_params("hystart", "Linux tcp_cubic.c `hystart` = 1");

/// CUBIC.
pub(super) const CUBIC: Controller = Controller {
    name: "cubic",
    doc: "CUBIC with Linux's integer arithmetic",
    source: "RFC 9438; Linux tcp_cubic.c",
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
        fast_convergence("RFC 9438 §4.7; Linux `fast_convergence` = 1"),
        Param {
            name: "tcp_friendliness",
            kind: Kind::Bool,
            unit: "",
            default: "true",
            doc: "grow at least as fast as Reno would (Reno-friendly region)",
            source: "RFC 9438 §4.3; Linux `tcp_friendliness` = 1",
        },
        beta(
            "beta",
            "0.7",
            "window after a loss as a fraction of cwnd (rounded to 1/1024)",
            "RFC 9438 §4.6; Linux `beta` = 717/1024",
        ),
        cubic_c(
            "aggressiveness C of the cubic function (rounded to Linux's bic_scale = C·102.4)",
            "RFC 9438 §5; Linux `bic_scale` = 41",
        ),
        ABBA,
    ],
    build: |v| {
        let d = CubicConfig::default();
        Ok(CcSpec::Cubic(CubicConfig {
            slow_start: slow_start_of(v, d.slow_start)?,
            fast_convergence: v.bool("fast_convergence").unwrap_or(d.fast_convergence),
            tcp_friendliness: v.bool("tcp_friendliness").unwrap_or(d.tcp_friendliness),
            beta: v.float("beta").map_or(d.beta, beta_units),
            bic_scale: v.float("c").map_or(d.bic_scale, bic_scale),
            abba: abba_of(v),
            ..d
        }))
    },
};

/// β in Linux's 1/1024 units, kept inside 1..=1023 (the declaration keeps β in (0, 1)).
fn beta_units(beta: f64) -> u32 {
    let scale = f64::from(BICTCP_BETA_SCALE);
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "rounded and clamped to 1..=1023 first"
    )]
    let units = (beta * scale).round().clamp(1.0, scale - 1.0) as u32;
    units
}

/// C in Linux's `bic_scale` units (C = bic_scale · 10 / 1024), at least 1.
fn bic_scale(c: f64) -> u32 {
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "rounded and clamped to 1..=1024 first (the declaration keeps C ≤ 10)"
    )]
    let units = (c * 1024.0 / 10.0).round().clamp(1.0, 1024.0) as u32;
    units
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The declared defaults give Linux's integers.
    #[test]
    fn defaults_round_to_linux_units() {
        assert_eq!(beta_units(0.7), cclab_cc::cubic::BETA);
        assert_eq!(u64::from(bic_scale(0.4)), cclab_cc::cubic::BIC_SCALE);
        assert_eq!(beta_units(0.5), 512);
    }
}
