//! CoDel (RFC 8289; Linux `include/net/codel.h`, `include/net/codel_impl.h`, `sch_codel.c`).
//!
//! Contract: a single FIFO whose head packet is dropped (or CE-marked when `ecn` and the packet
//! is ECN-capable) at dequeue by the CoDel control law. PLACEHOLDER until implemented.

use cclab_cc::{Dur, Time};
use rand_chacha::ChaCha8Rng;

use super::{Dequeued, Qdisc, Tally};
use crate::packet::Packet;

/// CoDel parameters; defaults are Linux `sch_codel` (`codel_params_init`, `codel_change`).
#[derive(Clone, Debug, PartialEq)]
pub struct CodelParams {
    /// Acceptable standing queue delay (RFC 8289 §4.3, Linux `MS2TIME(5)`): 5 ms.
    pub target: Dur,
    /// Sliding window over which the minimum sojourn must exceed `target` (RFC 8289 §4.2,
    /// Linux `MS2TIME(100)`): 100 ms.
    pub interval: Dur,
    /// Queue limit in packets (Linux `sch->limit = DEFAULT_CODEL_LIMIT` = 1000).
    pub limit: u32,
    /// Mark ECN-capable packets instead of dropping them (Linux default: off).
    pub ecn: bool,
    /// Mark every ECN-capable packet whose sojourn exceeds this (Linux `ce_threshold`, off by
    /// default).
    pub ce_threshold: Option<Dur>,
}

impl Default for CodelParams {
    fn default() -> Self {
        CodelParams {
            target: Dur::from_millis(5),
            interval: Dur::from_millis(100),
            limit: 1000,
            ecn: false,
            ce_threshold: None,
        }
    }
}

/// A CoDel queue.
#[derive(Debug)]
pub struct Codel {
    p: CodelParams,
}

impl Codel {
    /// An empty queue.
    #[must_use]
    pub fn new(p: &CodelParams) -> Self {
        Codel { p: p.clone() }
    }
}

impl Qdisc for Codel {
    fn enqueue(
        &mut self,
        _now: Time,
        _pkt: Packet,
        _rng: &mut ChaCha8Rng,
        _tally: &mut Tally,
    ) -> bool {
        let _ = &self.p;
        unimplemented!("codel")
    }
    fn dequeue(
        &mut self,
        _now: Time,
        _rng: &mut ChaCha8Rng,
        _tally: &mut Tally,
    ) -> Option<Dequeued> {
        unimplemented!("codel")
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
