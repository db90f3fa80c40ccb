//! DualPI2 (RFC 9332; Linux `net/sched/sch_dualpi2.c`, mainline since 6.18).
//!
//! Contract: PLACEHOLDER until implemented.

use cclab_cc::{Dur, Time};
use rand_chacha::ChaCha8Rng;

use super::{Dequeued, Qdisc, Tally};
use crate::packet::Packet;

/// DualPI2 parameters; defaults are Linux `dualpi2_reset_default` where it and RFC 9332
/// differ (Tupdate 16 ms, α 0.16, β 3.2; a 1 ms step instead of the RFC's ramp).
#[derive(Clone, Debug, PartialEq)]
pub struct DualPi2Params {
    /// Packet limit over both queues (Linux 10000).
    pub limit: u32,
    /// PI2 target queue delay of the C queue: 15 ms.
    pub target: Dur,
    /// PI2 update period: 16 ms (Linux; RFC 9332 Figure 2 derives 15 ms).
    pub tupdate: Dur,
    /// Integral gain α, Hz: 0.16 (Linux 41/256).
    pub alpha: f64,
    /// Proportional gain β, Hz: 3.2 (Linux 819/256).
    pub beta: f64,
    /// Coupling factor k: 2 (RFC 9332 §2.4).
    pub coupling: f64,
    /// L-queue step threshold on sojourn: 1 ms (Linux `step_thresh`).
    pub step_thresh: Dur,
    /// Classic queue's share of the scheduler when both are backlogged, percent (Linux
    /// `c_protection` = 10).
    pub c_protection: u8,
    /// On overload (p_C above its cap) drop instead of marking (Linux `drop_overload`, on).
    pub drop_overload: bool,
    /// Decide drops at enqueue instead of dequeue (Linux `drop_early`, off).
    pub drop_early: bool,
    /// DSCP values classified into the L queue whatever their ECN field (empty by default;
    /// Linux classifies with `tc` filters).
    pub l_dscp: Vec<u8>,
}

impl Default for DualPi2Params {
    fn default() -> Self {
        DualPi2Params {
            limit: 10_000,
            target: Dur::from_millis(15),
            tupdate: Dur::from_millis(16),
            alpha: 0.16,
            beta: 3.2,
            coupling: 2.0,
            step_thresh: Dur::from_millis(1),
            c_protection: 10,
            drop_overload: true,
            drop_early: false,
            l_dscp: Vec::new(),
        }
    }
}

/// A DualPi2 queue.
#[derive(Debug)]
pub struct DualPi2 {
    p: DualPi2Params,
}

impl DualPi2 {
    /// An empty queue.
    #[must_use]
    pub fn new(p: &DualPi2Params) -> Self {
        DualPi2 { p: p.clone() }
    }
}

impl Qdisc for DualPi2 {
    fn enqueue(
        &mut self,
        _now: Time,
        _pkt: Packet,
        _rng: &mut ChaCha8Rng,
        _tally: &mut Tally,
    ) -> bool {
        let _ = &self.p;
        unimplemented!("dualpi2")
    }
    fn dequeue(
        &mut self,
        _now: Time,
        _rng: &mut ChaCha8Rng,
        _tally: &mut Tally,
    ) -> Option<Dequeued> {
        unimplemented!("dualpi2")
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
