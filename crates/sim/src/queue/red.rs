//! RED (Floyd & Jacobson 1993; Linux `include/net/red.h`, `net/sched/sch_red.c`).
//!
//! Contract: PLACEHOLDER until implemented.

use cclab_cc::Time;
use rand_chacha::ChaCha8Rng;

use super::{Dequeued, Qdisc, Tally};
use crate::packet::Packet;

/// RED parameters. Linux has no defaults for the thresholds (`tc-red(8)` requires them); these
/// follow its recommendations: max = 3 × min (Floyd), probability 0.02, EWMA weight 2^-9.
#[derive(Clone, Debug, PartialEq)]
pub struct RedParams {
    /// Hard limit in bytes (wire bytes).
    pub limit: u64,
    /// Average queue size, bytes, below which nothing is dropped.
    pub min_th: u64,
    /// Average queue size, bytes, above which everything is dropped (or marked).
    pub max_th: u64,
    /// Drop probability at `max_th` (`tc` `probability`).
    pub max_p: f64,
    /// The EWMA weight of the average queue is 2^-`wlog` (Linux `Wlog`).
    pub wlog: u8,
    /// Average packet size, bytes (`tc` `avpkt`), for the idle-time decay.
    pub avpkt: u32,
    /// Mark ECN-capable packets instead of dropping them below `max_th` (`tc` `ecn`).
    pub ecn: bool,
    /// Drop (never mark) above `max_th` even with `ecn` (`tc` `harddrop`).
    pub harddrop: bool,
}

impl Default for RedParams {
    fn default() -> Self {
        RedParams {
            limit: 400_000,
            min_th: 30_000,
            max_th: 90_000,
            max_p: 0.02,
            wlog: 9,
            avpkt: 1000,
            ecn: false,
            harddrop: false,
        }
    }
}

/// A Red queue.
#[derive(Debug)]
pub struct Red {
    p: RedParams,
}

impl Red {
    /// An empty queue.
    #[must_use]
    pub fn new(p: &RedParams, _rate_bps: u64) -> Self {
        Red { p: p.clone() }
    }
}

impl Qdisc for Red {
    fn enqueue(
        &mut self,
        _now: Time,
        _pkt: Packet,
        _rng: &mut ChaCha8Rng,
        _tally: &mut Tally,
    ) -> bool {
        let _ = &self.p;
        unimplemented!("red")
    }
    fn dequeue(
        &mut self,
        _now: Time,
        _rng: &mut ChaCha8Rng,
        _tally: &mut Tally,
    ) -> Option<Dequeued> {
        unimplemented!("red")
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
