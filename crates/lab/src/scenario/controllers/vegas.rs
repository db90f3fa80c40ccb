//! TCP Vegas (Linux `tcp_vegas.c`): α, β and γ, in segments queued at the bottleneck.

use cclab_cc::{CcSpec, VegasConfig, vegas};

use super::{Controller, Kind, Param};

/// Vegas.
pub(super) const VEGAS: Controller = Controller {
    name: "vegas",
    doc: "TCP Vegas: delay-based, keeps α..β segments queued",
    source: "Brakmo & Peterson 1995; Linux tcp_vegas.c",
    params: &[
        Param {
            name: "alpha",
            kind: Kind::Int {
                min: 0,
                max: 10_000,
            },
            unit: "segments",
            default: "2",
            doc: "below this many segments queued, cwnd grows by one per RTT",
            source: "Linux tcp_vegas.c `alpha` = 2",
        },
        Param {
            name: "beta",
            kind: Kind::Int {
                min: 0,
                max: 10_000,
            },
            unit: "segments",
            default: "4",
            doc: "above this many segments queued, cwnd shrinks by one per RTT",
            source: "Linux tcp_vegas.c `beta` = 4",
        },
        Param {
            name: "gamma",
            kind: Kind::Int {
                min: 0,
                max: 10_000,
            },
            unit: "segments",
            default: "1",
            doc: "above this many segments queued, slow start ends",
            source: "Linux tcp_vegas.c `gamma` = 1",
        },
    ],
    build: |v| {
        let cfg = VegasConfig {
            alpha: v.u32("alpha").unwrap_or(vegas::ALPHA),
            beta: v.u32("beta").unwrap_or(vegas::BETA),
            gamma: v.u32("gamma").unwrap_or(vegas::GAMMA),
            ..VegasConfig::default()
        };
        if cfg.alpha > cfg.beta {
            let key = if v.has("alpha") { "alpha" } else { "beta" };
            return Err((
                key,
                format!(
                    "Vegas needs alpha ≤ beta (segments queued), got alpha {} and beta {}",
                    cfg.alpha, cfg.beta
                ),
            ));
        }
        Ok(CcSpec::Vegas(cfg))
    },
};
