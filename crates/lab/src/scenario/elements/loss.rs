//! `loss`: random loss on a node, data and ACKs alike: independent (Bernoulli, netem `loss
//! random`), Gilbert–Elliott bursts (netem `loss gemodel p r 1-h 1-k`), netem's 4-state Markov
//! model (`loss state p13 p31 p32 p23 p14`), or a target of at least one loss per full flight
//! (loss per RTT).

use cclab_sim::LossConfig;
use cclab_sim::net::ElementSpec;

use super::super::params::{Kind, Param};
use super::Element;

const PROBABILITY: Kind = Kind::Float {
    min: 0.0,
    min_open: false,
    max: 1.0,
    max_open: false,
};

/// The `flight` of a `per_rtt` model whose file gives none (no real flight is below one
/// packet): `elements::resolve` replaces it with N derived from the path
/// (`presets::Network::full_flight_packets`).
pub(super) const FLIGHT_FROM_PATH: f64 = 0.0;

/// Which keys each model takes.
const MODEL_KEYS: [(&str, &[&str]); 4] = [
    ("bernoulli", &["p"]),
    ("gilbert_elliott", &["p", "r", "bad_loss", "good_loss"]),
    ("four_state", &["p13", "p31", "p32", "p23", "p14"]),
    ("per_rtt", &["p_flight", "flight"]),
];

/// A transition probability of the 4-state model.
const fn transition(name: &'static str, default: &'static str, doc: &'static str) -> Param {
    Param {
        name,
        kind: PROBABILITY,
        unit: "",
        default,
        doc,
        source: "tc-netem(8) `loss state p13 p31 p32 p23 p14`; p13 alone is the Bernoulli model",
    }
}

/// Random loss.
pub(super) const LOSS: Element = Element {
    name: "loss",
    doc: "loses packets at random: independently, in Gilbert–Elliott bursts, or at a target loss per flight",
    source: "Linux netem `loss random`, `loss gemodel` (sch_netem.c loss_gilb_ell); tc-netem(8); h2o/quicly t/simulator.c (loss per RTT)",
    params: &[
        Param {
            name: "model",
            kind: Kind::Choice(&["bernoulli", "gilbert_elliott", "four_state", "per_rtt"]),
            unit: "",
            default: "bernoulli",
            doc: "the loss model",
            source: "tc-netem(8) `loss random` / `loss gemodel`",
        },
        Param {
            name: "p",
            kind: PROBABILITY,
            unit: "",
            default: "0",
            doc: "bernoulli: loss probability of each packet; gilbert_elliott: good → bad transition probability",
            source: "tc-netem(8) `loss random PERCENT`, `loss gemodel p`",
        },
        Param {
            name: "r",
            kind: PROBABILITY,
            unit: "",
            default: "1 − p",
            doc: "gilbert_elliott: bad → good transition probability (mean bad run 1/r packets)",
            source: "tc-netem(8) `loss gemodel p r` (default 1 − p)",
        },
        Param {
            name: "bad_loss",
            kind: PROBABILITY,
            unit: "",
            default: "1",
            doc: "gilbert_elliott: loss probability in the bad state",
            source: "tc-netem(8) `loss gemodel … 1-h` (default 100 %)",
        },
        Param {
            name: "good_loss",
            kind: PROBABILITY,
            unit: "",
            default: "0",
            doc: "gilbert_elliott: loss probability in the good state",
            source: "tc-netem(8) `loss gemodel … 1-k` (default 0 %)",
        },
        transition(
            "p13",
            "0",
            "four_state: good reception (1) → burst loss (3)",
        ),
        transition(
            "p31",
            "1 − p13",
            "four_state: burst loss (3) → good reception (1)",
        ),
        transition(
            "p32",
            "0",
            "four_state: burst loss (3) → good reception within the burst (2)",
        ),
        transition(
            "p23",
            "1",
            "four_state: good reception within the burst (2) → burst loss (3)",
        ),
        transition(
            "p14",
            "0",
            "four_state: good reception (1) → isolated loss (4, back to 1 after one packet)",
        ),
        Param {
            name: "p_flight",
            kind: Kind::Float {
                min: 0.0,
                min_open: false,
                max: 1.0,
                max_open: true,
            },
            unit: "",
            default: "0",
            doc: "per_rtt: probability P of at least one loss in a full flight; per packet p = 1 − (1 − P)^(1/N)",
            source: "quicly simulator lossy profiles (h2o/quicly t/simulator.c)",
        },
        Param {
            name: "flight",
            kind: Kind::Float {
                min: 1.0,
                min_open: false,
                max: 1e9,
                max_open: false,
            },
            unit: "packets",
            default: "path",
            doc: "per_rtt: N, the packets of a full flight; default (dumbbell): the BDP at the bottleneck's nominal rate (a profile's policer rate) and the flows' shortest base RTT, plus the FIFO buffer, in packets of the flows' largest wire size",
            source: "quicly simulator: N = BDP + buffer packets",
        },
    ],
    build: |v| {
        let model = v.choice("model").unwrap_or("bernoulli");
        let takes = MODEL_KEYS
            .iter()
            .find(|(m, _)| *m == model)
            .map_or(&[][..], |&(_, keys)| keys);
        for (m, keys) in MODEL_KEYS {
            if let Some(key) = keys.iter().find(|k| v.has(k) && !takes.contains(k)) {
                return Err((
                    key,
                    format!(
                        "`{key}` belongs to model {m}; model {model} takes: {}",
                        takes.join(", ")
                    ),
                ));
            }
        }
        let p = v.float("p").unwrap_or(0.0);
        let model = match model {
            "gilbert_elliott" => LossConfig::GilbertElliott {
                p,
                r: v.float("r").unwrap_or(1.0 - p),
                bad_loss: v.float("bad_loss").unwrap_or(1.0),
                good_loss: v.float("good_loss").unwrap_or(0.0),
            },
            "four_state" => {
                let p13 = v.float("p13").unwrap_or(0.0);
                let model = LossConfig::FourState {
                    p: [
                        p13,
                        v.float("p31").unwrap_or(1.0 - p13),
                        v.float("p32").unwrap_or(0.0),
                        v.float("p23").unwrap_or(1.0),
                        v.float("p14").unwrap_or(0.0),
                    ],
                };
                if let Some(problem) = model.problem() {
                    let key = if problem.contains("p31") {
                        "p31"
                    } else {
                        "p14"
                    };
                    return Err((key, problem));
                }
                model
            }
            "per_rtt" => LossConfig::PerRtt {
                p_flight: v.float("p_flight").unwrap_or(0.0),
                flight: v.float("flight").unwrap_or(FLIGHT_FROM_PATH),
            },
            _ => LossConfig::Bernoulli { p },
        };
        Ok(ElementSpec::Loss { model })
    },
};
