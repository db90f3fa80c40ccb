//! PIE (RFC 8033; Linux `include/net/pie.h`, `net/sched/sch_pie.c`).
//!
//! Contract: PLACEHOLDER until implemented.

use cclab_cc::{Dur, Time};
use rand_chacha::ChaCha8Rng;

use super::{Dequeued, Qdisc, Tally};
use crate::packet::Packet;

/// PIE parameters; defaults are Linux `pie_params_init` (target and tupdate since commits
/// `abde7920de06` and `29daa8553866`).
#[derive(Clone, Debug, PartialEq)]
pub struct PieParams {
    /// Target queueing delay QDELAY_REF: 15 ms.
    pub target: Dur,
    /// Update period T_UPDATE: 15 ms.
    pub tupdate: Dur,
    /// Proportional gain α, Hz (Linux 2/16 = 0.125).
    pub alpha: f64,
    /// Derivative gain β, Hz (Linux 20/16 = 1.25).
    pub beta: f64,
    /// Queue limit in packets (Linux 1000).
    pub limit: u32,
    /// Mark ECN-capable packets while the probability is at most 10 % (Linux default: off).
    pub ecn: bool,
    /// Scale the drop probability by packet size (Linux `bytemode`, off).
    pub bytemode: bool,
    /// Burst allowance MAX_BURST: 150 ms.
    pub max_burst: Dur,
    /// Estimate the queue delay from the departure rate (Little's law) instead of per-packet
    /// timestamps (Linux `dq_rate_estimator`, off: timestamps).
    pub dq_rate_estimator: bool,
}

impl Default for PieParams {
    fn default() -> Self {
        PieParams {
            target: Dur::from_millis(15),
            tupdate: Dur::from_millis(15),
            alpha: 0.125,
            beta: 1.25,
            limit: 1000,
            ecn: false,
            bytemode: false,
            max_burst: Dur::from_millis(150),
            dq_rate_estimator: false,
        }
    }
}

/// A Pie queue.
#[derive(Debug)]
pub struct Pie {
    p: PieParams,
}

impl Pie {
    /// An empty queue.
    #[must_use]
    pub fn new(p: &PieParams) -> Self {
        Pie { p: p.clone() }
    }
}

impl Qdisc for Pie {
    fn enqueue(
        &mut self,
        _now: Time,
        _pkt: Packet,
        _rng: &mut ChaCha8Rng,
        _tally: &mut Tally,
    ) -> bool {
        let _ = &self.p;
        unimplemented!("pie")
    }
    fn dequeue(
        &mut self,
        _now: Time,
        _rng: &mut ChaCha8Rng,
        _tally: &mut Tally,
    ) -> Option<Dequeued> {
        unimplemented!("pie")
    }
    fn backlog_packets(&self) -> u32 {
        0
    }
    fn backlog_bytes(&self) -> u64 {
        0
    }
    fn class_names(&self) -> &'static [&'static str] {
        &["all"]
    }
    fn class_backlog(&self, _class: usize) -> u32 {
        0
    }
}
