//! Duplication, as netem's `duplicate`: some packets arrive twice.
//!
//! Contract: [`Duplicate`] hands every packet on at once and, with probability `p` drawn
//! independently per packet from its own stream (seeded from the scenario seed and the
//! element's component id, `rng::ELEMENT + i`), hands on a copy right behind it, at the same
//! time (Linux `netem_enqueue` clones the skb and enqueues the clone at the root qdisc). A copy
//! is never duplicated again.

use cclab_cc::Time;
use rand_chacha::ChaCha8Rng;

use super::{Element, NetPacket, Output};
use crate::rng;

/// Duplicates packets with probability `p`.
#[derive(Debug)]
pub struct Duplicate<P> {
    p: f64,
    rng: ChaCha8Rng,
    copy: Option<P>,
    /// Copies made.
    pub duplicated: u64,
    /// Of them, copies of transport data segments.
    data_duplicated: u64,
}

impl<P> Duplicate<P> {
    /// Duplicate with probability `p` (in [0, 1]), drawing from the stream of `component` in a
    /// run seeded with `seed`.
    #[must_use]
    pub fn new(p: f64, seed: u64, component: u64) -> Self {
        Duplicate {
            p,
            rng: rng::stream(seed, component),
            copy: None,
            duplicated: 0,
            data_duplicated: 0,
        }
    }
}

impl<P: NetPacket> Element<P> for Duplicate<P> {
    fn process(&mut self, _now: Time, pkt: Option<P>) -> Output<P> {
        match pkt {
            Some(p) => {
                if rng::unit_f64(&mut self.rng) < self.p {
                    self.copy = Some(p);
                    self.duplicated += 1;
                    self.data_duplicated += u64::from(p.is_data());
                }
                Output::Packet(p)
            }
            None => self.copy.take().map_or(Output::Idle, Output::Packet),
        }
    }

    fn held(&self) -> usize {
        usize::from(self.copy.is_some())
    }

    fn held_data(&self) -> usize {
        usize::from(self.copy.is_some_and(|p| p.is_data()))
    }

    fn data_made(&self) -> u64 {
        self.data_duplicated
    }
}
