//! Loss models: which packets a link loses on the wire.
//!
//! Contract: [`LossModel::lose`] decides, for each packet at the end of its serialisation, in
//! the order packets leave the transmitter, whether it is lost. Bernoulli loss draws from the
//! stream it was given (one draw per packet, whatever the packet); scripted loss drops exactly
//! the listed transmissions of TCP data segments and needs no randomness. [`Loss`] is the same
//! model as a stand-alone [`Element`] (e.g. on a node's forwarding path).

use cclab_cc::Time;
use rand_chacha::ChaCha8Rng;

use super::{Element, NetPacket, Output};
use crate::ids::FlowId;
use crate::rng;

/// Loss model of a link.
#[derive(Clone, Debug, PartialEq, Default)]
pub enum LossConfig {
    /// No random loss.
    #[default]
    None,
    /// Each packet is lost independently with probability `p` (data and ACKs alike).
    Bernoulli {
        /// Loss probability in [0, 1].
        p: f64,
    },
    /// Drop exactly the listed transmissions (for scripted recovery tests).
    Scripted {
        /// The drops.
        drops: Vec<ScriptedDrop>,
    },
}

/// One scripted drop: the `nth` transmission (0 = first) of data segment `seq` of `flow`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScriptedDrop {
    /// Flow whose segment is dropped.
    pub flow: FlowId,
    /// Segment number (0 = first segment of the flow).
    pub seq: u64,
    /// Which transmission of that segment (0 = original, 1 = first retransmission, …).
    pub nth: u32,
}

/// A loss model.
#[derive(Debug)]
pub enum LossModel {
    /// Nothing is lost.
    None,
    /// Each packet is lost with probability `p`, independently.
    Bernoulli {
        /// Loss probability.
        p: f64,
        /// The model's random stream.
        rng: Box<ChaCha8Rng>,
    },
    /// Exactly the listed transmissions are lost.
    Scripted(Vec<ScriptedDrop>),
}

impl LossModel {
    /// The model `cfg` describes, drawing from the stream of `component` in a run seeded with
    /// `seed` (a link uses `rng::LINK_LOSS + link index`).
    #[must_use]
    pub fn new(cfg: &LossConfig, seed: u64, component: u64) -> Self {
        match cfg {
            LossConfig::None => LossModel::None,
            LossConfig::Bernoulli { p } if *p <= 0.0 => LossModel::None,
            LossConfig::Bernoulli { p } => LossModel::Bernoulli {
                p: *p,
                rng: Box::new(rng::stream(seed, component)),
            },
            LossConfig::Scripted { drops } => LossModel::Scripted(drops.clone()),
        }
    }

    /// True when the model never loses anything.
    #[must_use]
    pub fn is_none(&self) -> bool {
        matches!(self, LossModel::None)
    }

    /// Whether `pkt` is lost.
    #[inline]
    pub fn lose<P: NetPacket>(&mut self, pkt: &P) -> bool {
        match self {
            LossModel::None => false,
            LossModel::Bernoulli { p, rng } => rng::unit_f64(rng) < *p,
            LossModel::Scripted(drops) => pkt.data_segment().is_some_and(|(f, seq, n)| {
                drops
                    .iter()
                    .any(|d| d.flow == f && d.seq == seq && d.nth == n)
            }),
        }
    }
}

/// A loss model as an element: a packet leaves at once unless the model loses it.
#[derive(Debug)]
pub struct Loss {
    /// The model.
    pub model: LossModel,
    /// Packets lost so far.
    pub lost: u64,
}

impl Loss {
    /// An element losing packets as `model` decides.
    #[must_use]
    pub fn new(model: LossModel) -> Self {
        Loss { model, lost: 0 }
    }
}

impl<P: NetPacket> Element<P> for Loss {
    fn process(&mut self, _now: Time, pkt: Option<P>) -> Output<P> {
        match pkt {
            Some(p) if !self.model.lose(&p) => Output::Packet(p),
            Some(_) => {
                self.lost += 1;
                Output::Idle
            }
            None => Output::Idle,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::FlowId;
    use crate::net::test_packet;

    /// Bernoulli loss at p = 0.1 over 100,000 packets loses 10,000 ± 4σ (σ ≈ 95); scripted
    /// loss drops exactly the listed transmission.
    #[test]
    fn bernoulli_and_scripted() {
        let mut l = Loss::new(LossModel::new(&LossConfig::Bernoulli { p: 0.1 }, 1, 2));
        let mut passed = 0;
        for i in 0..100_000 {
            if let Output::Packet(_) = l.process(Time::ZERO, Some(test_packet(i, 0))) {
                passed += 1;
            }
        }
        assert_eq!(passed + l.lost, 100_000);
        assert!((l.lost as i64 - 10_000).abs() < 380, "{} lost", l.lost);
        let drops = vec![ScriptedDrop {
            flow: FlowId(0),
            seq: 3,
            nth: 1,
        }];
        let mut s = LossModel::new(&LossConfig::Scripted { drops }, 1, 2);
        assert!(!s.lose(&test_packet(3, 0)));
        assert!(s.lose(&test_packet(3, 1)));
        assert!(!s.lose(&test_packet(4, 1)));
        assert!(LossModel::new(&LossConfig::Bernoulli { p: 0.0 }, 1, 2).is_none());
    }
}
