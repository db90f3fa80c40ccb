//! Reno and NewReno (RFC 5681, RFC 6582; Linux `tcp_cong.c`): the slow-start variant. Linux's
//! growth and loss rules; the `ns3` stack swaps in ns-3's (`CcSpec::for_ns3`).

use cclab_cc::{CcSpec, RenoRules, SlowStartKind};

use super::{Controller, Param, slow_start_of, slow_start_params};

const PARAMS: &[Param] = &slow_start_params("standard", "RFC 5681 §3.1");

/// Reno: recovery ends on the first partial ACK.
pub(super) const RENO: Controller = Controller {
    name: "reno",
    doc: "Reno, recovery ends on the first partial ACK",
    source: "RFC 5681",
    params: PARAMS,
    build: |v| {
        Ok(CcSpec::Reno {
            slow_start: slow_start_of(v, SlowStartKind::Standard)?,
            rules: RenoRules::LINUX,
        })
    },
};

/// NewReno: recovery ends at the recovery point.
pub(super) const NEWRENO: Controller = Controller {
    name: "newreno",
    doc: "NewReno, recovery ends at the recovery point",
    source: "RFC 5681, RFC 6582",
    params: PARAMS,
    build: |v| {
        Ok(CcSpec::NewReno {
            slow_start: slow_start_of(v, SlowStartKind::Standard)?,
            rules: RenoRules::LINUX,
        })
    },
};
