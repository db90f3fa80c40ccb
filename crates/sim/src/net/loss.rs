//! Loss models: which packets a link loses on the wire.
//!
//! Contract: [`LossModel::lose`] decides, for each packet at the end of its serialisation, in
//! the order packets leave the transmitter, whether it is lost. Bernoulli loss draws from the
//! stream it was given (one draw per packet, whatever the packet); scripted loss drops exactly
//! the listed transmissions of TCP data segments and needs no randomness. [`Loss`] is the same
//! model as a stand-alone [`Element`] (e.g. on a node's forwarding path).
//!
//! Gilbert–Elliott loss is netem's `loss gemodel p r 1-h 1-k` (`net/sched/sch_netem.c`
//! `loss_gilb_ell`): a good and a bad state; per packet one draw moves good → bad with
//! probability `p` (bad → good with `r`), and a second decides the loss with the probability of
//! the state the packet found (`1 − k` in good, `1 − h` in bad). tc-netem(8)'s defaults are
//! `r = 1 − p`, `1 − h = 1`, `1 − k = 0`. In the long run the bad state holds `p/(p + r)` of
//! the packets.
//!
//! Loss per RTT is Bernoulli loss whose per-packet probability makes a full flight of `N`
//! packets (the path's BDP plus its buffer, in packets, given by the caller) see at least one
//! loss with probability `P`: `p = 1 − (1 − P)^(1/N)` (the quicly simulator's lossy profiles,
//! h2o/quicly `t/simulator.c`).

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
    /// netem's Gilbert–Elliott model (`loss gemodel p r 1-h 1-k`).
    GilbertElliott {
        /// Good → bad transition probability per packet.
        p: f64,
        /// Bad → good transition probability per packet.
        r: f64,
        /// Loss probability in the bad state (netem `1-h`).
        bad_loss: f64,
        /// Loss probability in the good state (netem `1-k`).
        good_loss: f64,
    },
    /// Bernoulli loss such that a flight of `flight` packets sees at least one loss with
    /// probability `p_flight`.
    PerRtt {
        /// Probability of at least one loss per flight, in [0, 1).
        p_flight: f64,
        /// Packets in a full flight (BDP plus buffer), at least 1.
        flight: f64,
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
    /// Gilbert–Elliott: the loss probability depends on a two-state Markov chain.
    GilbertElliott {
        /// Good → bad transition probability.
        p: f64,
        /// Bad → good transition probability.
        r: f64,
        /// Loss probability in the bad state.
        bad_loss: f64,
        /// Loss probability in the good state.
        good_loss: f64,
        /// The chain is in the bad state (it starts good, as netem's `GOOD_STATE`).
        bad: bool,
        /// The model's random stream.
        rng: Box<ChaCha8Rng>,
    },
    /// Exactly the listed transmissions are lost.
    Scripted(Vec<ScriptedDrop>),
}

/// The per-packet loss probability that gives a flight of `flight` packets at least one loss
/// with probability `p_flight`: `1 − (1 − P)^(1/N)`.
#[must_use]
pub fn per_rtt_probability(p_flight: f64, flight: f64) -> f64 {
    1.0 - (1.0 - p_flight).powf(1.0 / flight)
}

impl LossConfig {
    /// What is wrong with the parameters, if anything: probabilities outside [0, 1], a loss per
    /// flight of 1 or more, a flight below one packet.
    #[must_use]
    pub fn problem(&self) -> Option<String> {
        let prob = |name: &str, v: f64| {
            (!(0.0..=1.0).contains(&v)).then(|| format!("{name} {v} is not in [0, 1]"))
        };
        match *self {
            LossConfig::None | LossConfig::Scripted { .. } => None,
            LossConfig::Bernoulli { p } => prob("probability", p),
            LossConfig::GilbertElliott {
                p,
                r,
                bad_loss,
                good_loss,
            } => prob("p", p)
                .or_else(|| prob("r", r))
                .or_else(|| prob("bad_loss", bad_loss))
                .or_else(|| prob("good_loss", good_loss)),
            LossConfig::PerRtt { p_flight, flight } => {
                if !(0.0..1.0).contains(&p_flight) {
                    Some(format!("p_flight {p_flight} is not in [0, 1)"))
                } else if !(flight >= 1.0 && flight.is_finite()) {
                    Some(format!("flight {flight} is not a number of packets ≥ 1"))
                } else {
                    None
                }
            }
        }
    }
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
            LossConfig::GilbertElliott {
                p,
                r,
                bad_loss,
                good_loss,
            } => LossModel::GilbertElliott {
                p: *p,
                r: *r,
                bad_loss: *bad_loss,
                good_loss: *good_loss,
                bad: false,
                rng: Box::new(rng::stream(seed, component)),
            },
            LossConfig::PerRtt { p_flight, flight } => LossModel::new(
                &LossConfig::Bernoulli {
                    p: per_rtt_probability(*p_flight, *flight),
                },
                seed,
                component,
            ),
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
            LossModel::GilbertElliott {
                p,
                r,
                bad_loss,
                good_loss,
                bad,
                rng,
            } => {
                let (to_other, loss) = if *bad {
                    (*r, *bad_loss)
                } else {
                    (*p, *good_loss)
                };
                if rng::unit_f64(rng) < to_other {
                    *bad = !*bad;
                }
                rng::unit_f64(rng) < loss
            }
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

    /// The loss pattern of `cfg` over `n` packets.
    fn pattern(cfg: &LossConfig, n: usize, seed: u64) -> Vec<bool> {
        let mut m = LossModel::new(cfg, seed, 2);
        (0..n).map(|i| m.lose(&test_packet(i as u64, 0))).collect()
    }

    /// Long-run loss rate and mean burst length (losses per run of consecutive losses).
    #[expect(
        clippy::cast_precision_loss,
        reason = "counts and nanosecond delays of a test, far below 2^53"
    )]
    fn rate_and_burst(lost: &[bool]) -> (f64, f64) {
        let losses = lost.iter().filter(|&&l| l).count();
        let bursts = lost.windows(2).filter(|w| w[0] && !w[1]).count();
        (
            losses as f64 / lost.len() as f64,
            losses as f64 / bursts as f64,
        )
    }

    /// Gilbert–Elliott over 10⁶ packets: the loss rate is `π_G·(1−k) + π_B·(1−h)` with
    /// `π_B = p/(p+r)`, and the mean burst length is the loss rate over the probability that a
    /// loss is followed by a delivery, `Σ_s π_s ℓ_s Σ_s' T(s,s')(1 − ℓ_s')` (a packet's loss
    /// depends on the state it finds; the chain then moves). Both within 5 % (their sampling
    /// errors are about 1 %). The simple Gilbert case (1−h = 1, 1−k = 0) has bursts of mean
    /// `1/r`. Same seed, same pattern.
    #[test]
    fn gilbert_elliott_matches_theory() {
        for (p, r, lb, lg) in [(0.05, 0.3, 0.8, 0.01), (0.01, 0.25, 1.0, 0.0)] {
            let cfg = LossConfig::GilbertElliott {
                p,
                r,
                bad_loss: lb,
                good_loss: lg,
            };
            let lost = pattern(&cfg, 1_000_000, 11);
            let (rate, burst) = rate_and_burst(&lost);
            let pb = p / (p + r);
            let pg = 1.0 - pb;
            let want_rate = pg * lg + pb * lb;
            let then_kept = pg * lg * ((1.0 - p) * (1.0 - lg) + p * (1.0 - lb))
                + pb * lb * (r * (1.0 - lg) + (1.0 - r) * (1.0 - lb));
            let want_burst = want_rate / then_kept;
            assert!(
                (rate / want_rate - 1.0).abs() < 0.05,
                "{rate} vs {want_rate}"
            );
            assert!(
                (burst / want_burst - 1.0).abs() < 0.05,
                "{burst} vs {want_burst}"
            );
            if lb == 1.0 && lg == 0.0 {
                assert!((want_burst - 1.0 / r).abs() < 1e-12);
            }
            assert_eq!(lost, pattern(&cfg, 1_000_000, 11));
        }
    }

    /// Loss per RTT: the per-packet probability satisfies `(1 − p)^N = 1 − P` (to rounding),
    /// and over 20,000 flights of N packets the fraction with at least one loss is P ± 4σ.
    #[test]
    #[expect(
        clippy::cast_precision_loss,
        reason = "counts and nanosecond delays of a test, far below 2^53"
    )]
    fn loss_per_rtt_follows_the_formula() {
        let (pf, n) = (0.1, 250.0);
        let p = per_rtt_probability(pf, n);
        assert!(((1.0 - p).powf(n) - (1.0 - pf)).abs() < 1e-12);
        let cfg = LossConfig::PerRtt {
            p_flight: pf,
            flight: n,
        };
        let lost = pattern(&cfg, 250 * 20_000, 12);
        let flights = lost.chunks(250).filter(|c| c.iter().any(|&l| l)).count();
        let frac = flights as f64 / 20_000.0;
        let sigma = (pf * (1.0 - pf) / 20_000.0).sqrt();
        assert!((frac - pf).abs() < 4.0 * sigma, "{frac}");
    }

    /// Out-of-range parameters are named.
    #[test]
    fn invalid_parameters_are_named() {
        let ge = LossConfig::GilbertElliott {
            p: 0.1,
            r: 1.5,
            bad_loss: 1.0,
            good_loss: 0.0,
        };
        assert!(ge.problem().unwrap().contains("r 1.5"));
        let per_rtt = LossConfig::PerRtt {
            p_flight: 1.0,
            flight: 10.0,
        };
        assert!(per_rtt.problem().unwrap().contains("p_flight"));
        let per_rtt = LossConfig::PerRtt {
            p_flight: 0.5,
            flight: 0.5,
        };
        assert!(per_rtt.problem().unwrap().contains("flight 0.5"));
        assert!(LossConfig::Bernoulli { p: 0.5 }.problem().is_none());
    }
}
