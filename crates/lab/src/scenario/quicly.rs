//! The `quicly` preset: the network model of quicly's simulator (h2o/quicly `t/simulator.c`).
//!
//! Contract: per flow, the sender's packets go through a delay line of their own that holds
//! every packet for the flow's whole base RTT (`net_delay`, one per flow, `-d` per flow block),
//! then through one shared bottleneck (`net_bottleneck`: a byte capacity of rate × buffer
//! seconds, serialisation at the rate), then optionally through random loss that sits after
//! the bottleneck (`net_random_loss`, fed by the bottleneck: a lost packet has used its link
//! time), to the receiver. The receiver's packets (ACKs) go straight back: no delay, no queue,
//! no loss. So `rtt` is the whole base RTT of a flow, and a flow's `access_delay` lengthens
//! its RTT by twice itself (as on the dumbbell, where the access delay is one-way), all of it
//! on the way out: flows may have different RTTs.
//!
//! It is a preset of its own rather than options on the dumbbell because a preset is the
//! builder of one topology and this one differs from the dumbbell in where the delay sits (all
//! on the data path, per flow), in the ACK path (none) and in its queue (quicly's, not a
//! Linux qdisc), while it keeps the dumbbell's node and link layout so the outputs, the
//! `[[elements]]` nodes and the analysis read it the same way. It is built by the simulator's
//! dumbbell builder ([`cclab_sim::topology::Dumbbell`]) and then adjusted:
//!
//! - link `bottleneck` (`left→right`, link 0, monitored): the rate, no propagation delay, the
//!   queue [`cclab_sim::queue::QuiclyQueue`] (tail drop with the chosen admission rule, or
//!   CoDel 5 ms / 100 ms with its 1514-byte standing rule) and the loss (`loss` per packet or
//!   `loss_per_rtt`), which the link decides when a packet's serialisation ends;
//! - `s{i}->left`: no rate (no NIC serialisation), delay = `rtt` + 2 · the flow's
//!   `access_delay`; `left->s{i}`, `right->r{i}`, `r{i}->right` and `bottleneck_reverse`: no
//!   rate and no delay. Probes get the same treatment.
//!
//! Differences from quicly's simulator, by construction: a packet reaches the receiver when
//! its serialisation at the bottleneck ends (quicly hands it on when its emission starts and
//! keeps the link busy for the serialisation time after), so cclab's base RTT is `rtt` plus
//! one serialisation of the packet; the queue is the same (the packet in service has left it in
//! both). quicly's random loss draws `rand() % 65536 < p·65536`, so its loss rates are
//! multiples of 1/65536; cclab draws `p` exactly. The loss-per-RTT model's N (a full flight,
//! BDP + buffer) counts packets of `flight_packet` bytes (1280, quicly's datagram), the BDP at
//! `rate` × `rtt` (the path's, not a flow's own longer RTT).

use cclab_sim::queue::{Admission, QuiclyCodel, QuiclyQueueParams};
use cclab_sim::topology;
use cclab_sim::{AqmConfig, Dur, LossConfig, QueueConfig, QueueLimit, SimConfig};
use serde::Deserialize;
use toml::Spanned;

use super::error::{Source, unknown_choice};
use super::params::{Entry, Kind, Param};
use super::presets::{BUFFER, DURATION, Network, PROBABILITY, Preset, RATE, key};
use super::profiles::{self, Profile};
use super::raw::RawScenario;
use super::{Overrides, ResolvedFlow, RunPlan, Scenario, ScenarioError, Topology, wire_bytes};
use crate::record::SeriesKind;
use crate::units::{BufferSpec, Probability, Rate, TimeValue, fmt_dur, fmt_number, fmt_rate};

/// The profiles of quicly's simulator (the first seventeen of [`profiles::NAMES`]; a test
/// checks they are exactly the profiles whose source is [`profiles::QUICLY`]).
pub const PROFILES: &[&str] = profiles::NAMES.split_at(17).0;

/// quicly's datagram size (UDP payload bytes), the packet of a full flight.
pub const DATAGRAM_BYTES: u32 = 1280;

/// `[topology]` with `preset = "quicly"`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawQuicly {
    /// Already checked in the first pass.
    #[allow(dead_code, reason = "kept so that deny_unknown_fields accepts the key")]
    pub preset: String,
    pub profile: Option<Spanned<String>>,
    pub rate: Option<Spanned<Rate>>,
    pub rtt: Option<Spanned<TimeValue>>,
    pub buffer: Option<Spanned<BufferSpec>>,
    pub aqm: Option<Spanned<String>>,
    pub admission: Option<Spanned<String>>,
    pub ecn: Option<Spanned<bool>>,
    pub loss: Option<Spanned<Probability>>,
    pub loss_per_rtt: Option<Spanned<Probability>>,
    pub flight_packet: Option<Spanned<i64>>,
}

const SOURCE: &str = "h2o/quicly t/simulator.c";

/// The `quicly` preset.
pub(super) const QUICLY: Preset = Preset {
    decl: Entry {
        name: "quicly",
        doc: "quicly's simulator: per-flow delay of the whole RTT → one shared bottleneck → \
              random loss → receiver; ACKs return at once; takes [[flows]]",
        source: SOURCE,
        params: &[
            key(
                "profile",
                Kind::Choice(PROFILES),
                "none",
                "a quicly profile (`cclab list profiles`): sets rate, rtt and buffer, each \
                 unless given",
                profiles::QUICLY,
            ),
            key(
                "rate",
                RATE,
                "required (or profile)",
                "bottleneck rate",
                "simulator `-b`",
            ),
            key(
                "rtt",
                DURATION,
                "required (or profile)",
                "base RTT, all of it on the data path before the bottleneck (a flow's \
                 `access_delay` adds twice itself)",
                "simulator `-d`",
            ),
            key(
                "buffer",
                BUFFER,
                "100ms (or profile)",
                "bottleneck capacity: a time at the rate (bytes = rate/8 × time, truncated), \
                 bytes, packets of `flight_packet` bytes, or BDPs at `rtt`",
                "simulator `-q` (default 0.1 s)",
            ),
            key(
                "aqm",
                Kind::Choice(&["tail_drop", "codel"]),
                "tail_drop",
                "tail drop, or CoDel (target 5 ms, interval 100 ms, standing only with more \
                 than 1514 bytes queued) within the same capacity",
                "later simulator `-A`",
            ),
            key(
                "admission",
                Kind::Choice(&["largest", "arrival"]),
                "largest",
                "tail-drop rule: `largest` drops when queued bytes + the flows' largest packet \
                 exceed the capacity (size-neutral, the later simulator); `arrival` when \
                 queued bytes + the arrival's size do (the 2026-04 simulator)",
                "net_bottleneck_forward",
            ),
            key(
                "ecn",
                Kind::Bool,
                "false",
                "CoDel CE-marks ECN-capable packets instead of dropping them",
                "later simulator (off in the ABBA evaluation)",
            ),
            key(
                "loss",
                PROBABILITY,
                "0",
                "random loss of each packet after the bottleneck (it used its link time)",
                "simulator `-r`, net_random_loss",
            ),
            key(
                "loss_per_rtt",
                PROBABILITY,
                "0",
                "instead of `loss`: probability P that a full flight (N = BDP at rate × rtt + \
                 buffer, in packets of `flight_packet` bytes) sees a loss; p = 1 − (1 − P)^(1/N)",
                "the ABBA evaluation's loss per RTT",
            ),
            Param {
                unit: "bytes",
                ..key(
                    "flight_packet",
                    Kind::Int {
                        min: 1,
                        max: 65_535,
                    },
                    "1280",
                    "packet size of N in `loss_per_rtt` (and of a `per_rtt` loss element's \
                     default `flight`) and of a buffer given in packets",
                    "quicly's 1280-byte datagrams",
                )
            },
        ],
    },
    parse: parse_scenario,
};

/// The resolved `quicly` preset.
#[derive(Clone, Debug)]
pub struct QuiclyPreset {
    /// Bottleneck rate, bit/s.
    pub rate_bps: u64,
    /// Base RTT of a flow without access delay.
    pub rtt: Dur,
    /// The buffer as written (or the profile's).
    pub buffer: BufferSpec,
    /// The bottleneck queue.
    pub queue: QuiclyQueueParams,
    /// The loss after the bottleneck.
    pub loss: LossConfig,
    /// Packet size of a full flight, bytes.
    pub flight_packet: u32,
    /// The profile, if any.
    pub profile: Option<&'static str>,
}

impl QuiclyPreset {
    /// N of the loss-per-RTT model: (BDP at rate × rtt + capacity) / `flight_packet`, as one
    /// division of exact integers.
    #[must_use]
    pub fn full_flight(&self) -> f64 {
        let scale = 8 * 1_000_000_000_u128;
        let bdp = u128::from(self.rate_bps) * u128::from(self.rtt.0);
        let buffer = u128::from(self.queue.capacity_bytes) * scale;
        #[expect(
            clippy::cast_precision_loss,
            reason = "a ratio of two integers, rounded once each to the nearest f64"
        )]
        let n = (bdp + buffer) as f64 / (scale * u128::from(self.flight_packet)) as f64;
        n
    }

    /// The base RTT of an endpoint pair with access delay `access_delay` (before
    /// serialisation).
    #[must_use]
    pub fn base_rtt(&self, access_delay: Dur) -> Dur {
        self.rtt + access_delay + access_delay
    }

    /// The simulator input for `scenario` with `seed` (layout: see the module doc).
    #[must_use]
    pub fn build(&self, scenario: &Scenario, seed: u64) -> SimConfig {
        let mut d = topology::Dumbbell::new(self.rate_bps, Dur::ZERO, QueueLimit::Packets(1));
        d.aqm = Some(AqmConfig::Quicly(self.queue.clone()));
        d.loss = self.loss.clone();
        d.nic_rate_bps = None;
        d.access_rate_bps = None;
        d.uncongested_queue = QueueLimit::Packets(topology::UNCONGESTED_QUEUE_PACKETS);
        d.seed = seed;
        d.duration = scenario.duration;
        d.sample_interval = scenario.sample_interval;
        for (i, f) in scenario.flows.iter().enumerate() {
            if f.host != d.sender_host {
                d.set_flow_host(i, f.host.clone());
            }
        }
        d.flows = scenario
            .flows
            .iter()
            .map(|f| topology::DumbbellFlow {
                flow: f.flow_config(topology::LEFT, topology::RIGHT),
                access_delay: f.access_delay,
            })
            .collect();
        d.probes = scenario
            .probes
            .iter()
            .map(|p| topology::DumbbellProbe {
                probe: cclab_sim::ProbeConfig {
                    size: p.size,
                    start: p.start,
                    stop: p.stop,
                    ..cclab_sim::ProbeConfig::ping(
                        &p.name,
                        topology::LEFT,
                        topology::RIGHT,
                        p.interval,
                    )
                },
                access_delay: p.access_delay,
            })
            .collect();
        let mut cfg = d.build();
        // The dumbbell's layout with quicly's delays: every link but the bottleneck loses its
        // rate; the sender's link holds the whole RTT, every other link none.
        let senders: Vec<(String, Dur)> = scenario
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| (format!("s{i}->left"), self.base_rtt(f.access_delay)))
            .chain(
                scenario
                    .probes
                    .iter()
                    .enumerate()
                    .map(|(j, p)| (format!("ps{j}->left"), self.base_rtt(p.access_delay))),
            )
            .collect();
        for l in cfg.links.iter_mut().skip(1) {
            l.rate_bps = None;
            l.delay = senders
                .iter()
                .find(|(name, _)| *name == l.name)
                .map_or(Dur::ZERO, |(_, d)| *d);
            l.queue = QueueConfig::DropTail {
                limit: QueueLimit::Packets(topology::UNCONGESTED_QUEUE_PACKETS),
            };
        }
        cfg
    }

    fn describe(&self) -> String {
        let queue = match &self.queue.codel {
            Some(c) => format!(
                "CoDel target {} interval {} (standing above {} bytes, ECN {})",
                fmt_dur(c.target),
                fmt_dur(c.interval),
                c.standing_bytes,
                if c.ecn { "on" } else { "off" }
            ),
            None => "tail drop".to_owned(),
        };
        let admission = match self.queue.admission {
            Admission::Arrival => "by the arrival's size".to_owned(),
            Admission::Largest(m) => format!("by the largest packet ({m} bytes)"),
        };
        let loss = match &self.loss {
            LossConfig::Bernoulli { p } => format!("p = {}", fmt_number(*p)),
            LossConfig::PerRtt { p_flight, flight } => format!(
                "P = {} per flight of {} packets",
                fmt_number(*p_flight),
                fmt_number(*flight)
            ),
            _ => "none".to_owned(),
        };
        format!(
            "topology quicly{}: bottleneck {}, base RTT {} (on the data path), capacity {} = {} \
             bytes admitted {admission}, {queue}, loss after the bottleneck {loss}; ACKs return \
             without delay",
            self.profile
                .map_or_else(String::new, |p| format!(" (profile {p})")),
            fmt_rate(self.rate_bps),
            fmt_dur(self.rtt),
            self.buffer,
            self.queue.capacity_bytes,
        )
    }
}

impl Network for QuiclyPreset {
    fn preset(&self) -> &'static str {
        QUICLY.decl.name
    }

    fn describe(&self) -> String {
        QuiclyPreset::describe(self)
    }

    fn endpoint_base_rtt(&self, access_delay: Dur) -> Option<Dur> {
        Some(self.base_rtt(access_delay))
    }

    fn sim_config(&self, scenario: &Scenario, seed: u64) -> SimConfig {
        self.build(scenario, seed)
    }

    fn run_plan(&self, scenario: &Scenario, seed: u64, _label: &str) -> RunPlan {
        super::presets::scenario_run_plan(scenario, self.sim_config(scenario, seed), |_| {
            SeriesKind::TcpUpload
        })
    }

    fn full_flight_packets(&self, _scenario: &Scenario) -> Result<f64, String> {
        Ok(self.full_flight())
    }

    fn clone_box(&self) -> Box<dyn Network> {
        Box::new(self.clone())
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// A whole scenario with `preset = "quicly"`: `[[flows]]` and `[[probes]]`, no `[test]`.
fn parse_scenario(
    src: &Source<'_>,
    text: &str,
    overrides: &Overrides,
) -> Result<Scenario, ScenarioError> {
    let raw: RawScenario<RawQuicly> = toml::from_str(text).map_err(|e| src.toml_error(&e))?;
    super::refuse_test_sections(src, &raw, super::TEST_PRESETS, "the quicly preset")?;
    let common = super::resolve_common(src, &raw, overrides)?;
    let topology = resolve(src, &raw.topology, &common.flows)?;
    Ok(common.finish(Topology::new(topology)))
}

/// Bytes in `d` at `rate_bps`, truncated (quicly: `(size_t)(bytes_per_sec * capacity_in_sec)`).
fn bytes_in(rate_bps: u64, d: Dur) -> u64 {
    let bits = u128::from(rate_bps) * u128::from(d.as_nanos());
    u64::try_from(bits / 8_000_000_000).unwrap_or(u64::MAX)
}

fn resolve(
    src: &Source<'_>,
    raw: &Spanned<RawQuicly>,
    flows: &[ResolvedFlow],
) -> Result<QuiclyPreset, ScenarioError> {
    let t = raw.get_ref();
    let profile: Option<(&Profile, std::ops::Range<usize>)> = match &t.profile {
        Some(name) => {
            let p = PROFILES
                .contains(&name.get_ref().as_str())
                .then(|| profiles::find(name.get_ref()))
                .flatten()
                .ok_or_else(|| {
                    src.error(
                        Some(name.span()),
                        "topology.profile",
                        unknown_choice("quicly profile", name.get_ref(), PROFILES),
                    )
                })?;
            Some((p, name.span()))
        }
        None => None,
    };
    let missing = |k: &str| {
        src.error(
            Some(raw.span()),
            format!("topology.{k}"),
            format!(
                "missing `{k}`: give `{k}`, or a `profile` that sets it (`cclab list profiles`)"
            ),
        )
    };
    let rate_bps = match (&t.rate, &profile) {
        (Some(r), _) => r.get_ref().0,
        (None, Some((p, _))) => p.rate_bps,
        (None, None) => return Err(missing("rate")),
    };
    if rate_bps == 0 {
        return Err(src.error(
            t.rate.as_ref().map(Spanned::span),
            "topology.rate",
            "must be positive",
        ));
    }
    let rtt = match (&t.rtt, &profile) {
        (Some(d), _) => d.get_ref().0,
        (None, Some((p, _))) => p.rtt,
        (None, None) => return Err(missing("rtt")),
    };
    let flight_packet = src.ranged_u32(
        t.flight_packet.as_ref(),
        "topology.flight_packet".to_owned(),
        1..=65_535,
        "bytes",
        DATAGRAM_BYTES,
    )?;
    let (buffer, buffer_span) = match (&t.buffer, &profile) {
        (Some(b), _) => (*b.get_ref(), Some(b.span())),
        (None, Some((p, span))) => (p.buffer, Some(span.clone())),
        (None, None) => (BufferSpec::Time(Dur::from_millis(100)), None),
    };
    let capacity_bytes = match buffer {
        BufferSpec::Time(d) => bytes_in(rate_bps, d),
        BufferSpec::Bytes(b) => b,
        BufferSpec::Packets(n) => u64::from(n) * u64::from(flight_packet),
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss,
            reason = "a BDP multiple of a byte count, truncated like quicly's capacity"
        )]
        BufferSpec::Bdp(k) => (k * bytes_in(rate_bps, rtt) as f64) as u64,
    };
    let largest = flows
        .iter()
        .map(|f| wire_bytes(f.flow.mss))
        .max()
        .unwrap_or(u64::from(DATAGRAM_BYTES));
    if capacity_bytes < largest {
        return Err(src.error(
            buffer_span,
            "topology.buffer",
            format!(
                "`{buffer}` is {capacity_bytes} bytes at {}, less than one full-size packet \
                 ({largest} bytes)",
                fmt_rate(rate_bps)
            ),
        ));
    }
    let admission = match t
        .admission
        .as_ref()
        .map(|a| (a.get_ref().as_str(), a.span()))
    {
        None | Some(("largest", _)) => {
            Admission::Largest(u32::try_from(largest).unwrap_or(u32::MAX))
        }
        Some(("arrival", _)) => Admission::Arrival,
        Some((other, span)) => {
            return Err(src.error(
                Some(span),
                "topology.admission",
                unknown_choice("admission rule", other, &["largest", "arrival"]),
            ));
        }
    };
    let ecn = t.ecn.as_ref().is_some_and(|e| *e.get_ref());
    let codel = match t.aqm.as_ref().map(|a| (a.get_ref().as_str(), a.span())) {
        None | Some(("tail_drop", _)) => {
            if let Some(e) = &t.ecn
                && *e.get_ref()
            {
                return Err(src.error(
                    Some(e.span()),
                    "topology.ecn",
                    "`ecn` makes CoDel mark instead of drop; it needs `aqm = \"codel\"` (tail \
                     drop never marks)",
                ));
            }
            None
        }
        Some(("codel", _)) => Some(QuiclyCodel {
            ecn,
            ..QuiclyCodel::default()
        }),
        Some((other, span)) => {
            return Err(src.error(
                Some(span),
                "topology.aqm",
                unknown_choice("aqm", other, &["tail_drop", "codel"]),
            ));
        }
    };
    let queue = QuiclyQueueParams {
        capacity_bytes,
        admission,
        codel,
    };
    let mut preset = QuiclyPreset {
        rate_bps,
        rtt,
        buffer,
        queue,
        loss: LossConfig::None,
        flight_packet,
        profile: profile.map(|(p, _)| p.name),
    };
    preset.loss = match (&t.loss, &t.loss_per_rtt) {
        (Some(_), Some(l)) => {
            return Err(src.error(
                Some(l.span()),
                "topology.loss_per_rtt",
                "give either `loss` (per packet) or `loss_per_rtt` (per full flight), not both",
            ));
        }
        (Some(l), None) if l.get_ref().0 > 0.0 => LossConfig::Bernoulli { p: l.get_ref().0 },
        // A flight lost with certainty would never deliver: the simulator's per-flight model
        // takes [0, 1) (`LossConfig::PerRtt`).
        (None, Some(l)) if l.get_ref().0 >= 1.0 => {
            return Err(src.error(
                Some(l.span()),
                "topology.loss_per_rtt",
                format!(
                    "must be in [0, 1): the probability that a full flight loses a packet, got \
                     {}",
                    fmt_number(l.get_ref().0)
                ),
            ));
        }
        (None, Some(l)) if l.get_ref().0 > 0.0 => LossConfig::PerRtt {
            p_flight: l.get_ref().0,
            flight: preset.full_flight().max(1.0),
        },
        _ => LossConfig::None,
    };
    Ok(preset)
}
