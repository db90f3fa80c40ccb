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
//! The 4-state model is netem's `loss state p13 p31 p32 p23 p14` as tc-netem(8) and Salsano et
//! al. ("Definition of a general and intuitive loss model for packet networks and its
//! implementation in the Netem module", 2012) define it: state 1 good reception, 2 good
//! reception within a burst, 3 burst loss, 4 isolated loss; per packet one draw moves the chain
//! (1→3 `p13`, 1→4 `p14`, 2→3 `p23`, 3→1 `p31`, 3→2 `p32`, 4→1 always) and the packet is lost
//! when the state it moves to is 3 or 4.
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
    /// netem's 4-state Markov model (`loss state p13 p31 p32 p23 p14`).
    FourState {
        /// Transition probabilities `[p13, p31, p32, p23, p14]`.
        p: [f64; 5],
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
    /// The 4-state Markov model.
    FourState {
        /// `[p13, p31, p32, p23, p14]`.
        p: [f64; 5],
        /// The state (1..=4; it starts in 1, good reception).
        state: u8,
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
            LossConfig::FourState { p } => {
                let names = ["p13", "p31", "p32", "p23", "p14"];
                names
                    .iter()
                    .zip(p)
                    .find_map(|(n, v)| prob(n, v))
                    .or_else(|| (p[0] + p[4] > 1.0).then(|| "p13 + p14 exceeds 1".to_owned()))
                    .or_else(|| (p[1] + p[2] > 1.0).then(|| "p31 + p32 exceeds 1".to_owned()))
            }
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
            LossConfig::FourState { p } => LossModel::FourState {
                p: *p,
                state: 1,
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

    /// Whether `pkt` is lost. The commonest model, none, is answered inline; the others out of
    /// line, so the link's per-packet path stays small.
    #[inline(always)]
    pub fn lose<P: NetPacket>(&mut self, pkt: &P) -> bool {
        if let LossModel::None = self {
            return false;
        }
        self.lose_random(pkt)
    }

    #[inline(never)]
    fn lose_random<P: NetPacket>(&mut self, pkt: &P) -> bool {
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
            LossModel::FourState { p, state, rng } => {
                let [p13, p31, p32, p23, p14] = *p;
                let u = rng::unit_f64(rng);
                *state = match *state {
                    1 if u < p13 => 3,
                    1 if u < p13 + p14 => 4,
                    2 if u < p23 => 3,
                    3 if u < p31 => 1,
                    3 if u < p31 + p32 => 2,
                    4 => 1,
                    s => s,
                };
                *state >= 3
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

    /// The 4-state model over 10⁶ packets: its stationary distribution (π3 = π1·p13/p31,
    /// π2 = π3·p32/p23, π4 = π1·p14, normalised) gives the loss rate π3 + π4, within 5 %
    /// (sampling error about 1 %); with only p13 and p31 = 1 − p13 it is Bernoulli at p13.
    #[test]
    #[expect(
        clippy::cast_precision_loss,
        reason = "counts of a test, far below 2^53"
    )]
    fn four_state_matches_its_stationary_loss() {
        for p in [[0.02, 0.3, 0.2, 0.1, 0.01], [0.05, 0.95, 0.0, 1.0, 0.0]] {
            let [p13, p31, p32, p23, p14] = p;
            let cfg = LossConfig::FourState { p };
            assert!(cfg.problem().is_none());
            let lost = pattern(&cfg, 1_000_000, 13);
            let rate = lost.iter().filter(|&&l| l).count() as f64 / lost.len() as f64;
            let (pi1, pi3) = (1.0, p13 / p31);
            let (pi2, pi4) = (pi3 * p32 / p23, pi1 * p14);
            let want = (pi3 + pi4) / (pi1 + pi2 + pi3 + pi4);
            assert!((rate / want - 1.0).abs() < 0.05, "{p:?}: {rate} vs {want}");
            assert_eq!(lost, pattern(&cfg, 1_000_000, 13));
        }
        let bad = LossConfig::FourState {
            p: [0.6, 0.5, 0.0, 1.0, 0.5],
        };
        assert!(bad.problem().unwrap().contains("p13 + p14"));
    }
}
