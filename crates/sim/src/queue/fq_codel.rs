//! FQ-CoDel (RFC 8290; Linux `net/sched/sch_fq_codel.c`).
//!
//! Contract: PLACEHOLDER until implemented.

use cclab_cc::{Dur, Time};
use rand_chacha::ChaCha8Rng;

use super::{Dequeued, Qdisc, Tally};
use crate::packet::Packet;

/// FQ-CoDel parameters; defaults are Linux `fq_codel_init`.
#[derive(Clone, Debug, PartialEq)]
pub struct FqCodelParams {
    /// Flow buckets (Linux `flows` = 1024).
    pub flows: u32,
    /// Packet limit over all flows (Linux `limit` = 10240).
    pub limit: u32,
    /// Memory limit in bytes (Linux `memory_limit` = 32 MB); counted here as wire bytes.
    pub memory_limit: u64,
    /// DRR quantum in bytes (Linux `quantum` = MTU + 14 = 1514).
    pub quantum: u32,
    /// Packets dropped at once from the fattest flow on overflow (Linux `drop_batch_size` = 64).
    pub drop_batch: u32,
    /// CoDel target (5 ms).
    pub target: Dur,
    /// CoDel interval (100 ms).
    pub interval: Dur,
    /// Mark ECN-capable packets instead of dropping (Linux default: on).
    pub ecn: bool,
    /// Mark every ECN-capable packet whose sojourn exceeds this (Linux `ce_threshold`, off).
    pub ce_threshold: Option<Dur>,
}

impl Default for FqCodelParams {
    fn default() -> Self {
        FqCodelParams {
            flows: 1024,
            limit: 10240,
            memory_limit: 32 << 20,
            quantum: 1514,
            drop_batch: 64,
            target: Dur::from_millis(5),
            interval: Dur::from_millis(100),
            ecn: true,
            ce_threshold: None,
        }
    }
}

/// A FqCodel queue.
#[derive(Debug)]
pub struct FqCodel {
    p: FqCodelParams,
}

impl FqCodel {
    /// An empty queue.
    #[must_use]
    pub fn new(p: &FqCodelParams, _seed: u64) -> Self {
        FqCodel { p: p.clone() }
    }
}

impl Qdisc for FqCodel {
    fn enqueue(
        &mut self,
        _now: Time,
        _pkt: Packet,
        _rng: &mut ChaCha8Rng,
        _tally: &mut Tally,
    ) -> bool {
        let _ = &self.p;
        unimplemented!("fq_codel")
    }
    fn dequeue(
        &mut self,
        _now: Time,
        _rng: &mut ChaCha8Rng,
        _tally: &mut Tally,
    ) -> Option<Dequeued> {
        unimplemented!("fq_codel")
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
