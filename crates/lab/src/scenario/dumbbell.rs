//! The `dumbbell` preset: N senders share one bottleneck link to N receivers.
//!
//! Contract: `resolve` checks the `[topology]` table against the already-resolved flows (the
//! BDP needs their RTTs, scripted drops name them) and fills the simulator's own builder,
//! [`cclab_sim::topology::Dumbbell`], with the network ([`DumbbellPreset::net`]);
//! [`DumbbellPreset::builder`] adds the scenario's flows and probes, and the builder's `build`
//! lays out nodes and links. This module neither mirrors the builder's fields nor wires
//! anything itself; the layout (fixed so outputs are comparable, documented in
//! [`cclab_sim::topology`]) is:
//!
//! - nodes: `left` (0) and `right` (1) routers, then for each flow `i` hosts `s{i}`, `r{i}`, then
//!   for each probe `j` hosts `ps{j}`, `pr{j}`;
//! - links: `bottleneck` `left→right` (rate, delay, buffer or AQM, loss, monitored) = link 0 =
//!   [`BOTTLENECK`], `bottleneck_reverse` `right→left` (reverse rate, delay,
//!   [`UNCONGESTED_QUEUE_PACKETS`], no loss, not monitored) = link 1, then per host pair `s→left`
//!   and `left→s` (access delay), `right→r` and `r→right` (no delay), no loss;
//! - the host→router links `s→left` and `r→right` are the hosts' NICs: line rate `nic_rate`
//!   (default 10 Gbit/s; for `s→left` the lower of it and `access_rate`) and a driver queue of
//!   `driver_queue` packets (default 1000, Linux `txqueuelen`); `left→s` has the access rate;
//! - each flow's sending host runs that flow's host model (`[host]` / `[flows.host]`);
//! - with `bottleneck_at = "sender"` (one flow, no probes, no profile) the rate, buffer or AQM
//!   and the monitoring move from `bottleneck` to `s0→left` ([`topology::BottleneckAt`]); a
//!   virtual machine's sender needs a packet buffer holding its tap queue.
//!
//! So a flow's base RTT is `2·(delay + access_delay)` plus the serialisation on the NICs.

use std::ops::Range;

use cclab_sim::net::{ElementSpec, PacketKind, Selector};
use cclab_sim::topology::{self, BottleneckAt, DumbbellFlow, DumbbellProbe};
use cclab_sim::{AqmConfig, Dur, FlowId, LossConfig, ProbeConfig, QueueLimit, ScriptedDrop};
use toml::Spanned;

use super::elements::{self, PlacedElement};
use super::error::{Source, unknown_choice};
use super::params::{Entry, Kind};
use super::presets::{
    BUFFER, DRIVER_QUEUE, DURATION, NIC_RATE, Network, PROBABILITY, Preset, QDISC, RATE, key,
};
use super::profiles::{self, Profile};
use super::rates::{self, ShapedLink};
use super::raw::{FlowRef, RawDumbbell, RawQdisc, RawScenario};
use super::{
    Overrides, ResolvedFlow, RunPlan, Scenario, ScenarioError, Topology, qdisc, wire_bytes,
};
use crate::record::SeriesKind;
use crate::units::{BufferSpec, fmt_dur, fmt_number, fmt_rate};

/// Queue limit of links that are not meant to be bottlenecks (the reverse path, access and
/// egress links): large enough never to drop in the scenarios cclab runs.
pub use cclab_sim::topology::UNCONGESTED_QUEUE_PACKETS;

/// The link id of the bottleneck in a built dumbbell.
pub use cclab_sim::topology::BOTTLENECK;

/// Buffer used when a dumbbell scenario gives none.
pub const DEFAULT_BUFFER: BufferSpec = BufferSpec::Bdp(1.0);

/// `topology.bottleneck_at` values.
pub const BOTTLENECK_SITES: &[&str] = &["switch", "sender"];

/// The `dumbbell` preset.
pub(super) const PRESET: Preset = Preset {
    decl: Entry {
        name: "dumbbell",
        doc: "senders → left router → bottleneck → right router → receivers; takes [[flows]]",
        source: "the classic congestion-control test bed",
        params: &[
            key(
                "profile",
                Kind::Choice(profiles::NAMES),
                "none",
                "a named path (`cclab list profiles`): sets rate, delay (half its RTT) and \
                 buffer, each unless given, and a Pantheon profile's trace, loss, policer or \
                 ACK-path model",
                profiles::SOURCE,
            ),
            key(
                "rate",
                RATE,
                "required (or profile)",
                "bottleneck rate",
                "—",
            ),
            key(
                "delay",
                DURATION,
                "required (or profile)",
                "bottleneck one-way propagation delay",
                "—",
            ),
            key(
                "buffer",
                BUFFER,
                "1bdp (or profile)",
                "bottleneck buffer; BDP at the shortest base RTT of the flows",
                "the BDP rule of thumb",
            ),
            key("qdisc", QDISC, "fifo", "bottleneck queue discipline", "—"),
            key(
                "loss",
                PROBABILITY,
                "0",
                "Bernoulli loss on the bottleneck (data direction)",
                "—",
            ),
            key(
                "reverse_rate",
                RATE,
                "rate",
                "rate of the ACK direction (large buffer, no loss)",
                "—",
            ),
            key(
                "access_rate",
                RATE,
                "none",
                "access links' rate (default: pure delay lines)",
                "—",
            ),
            NIC_RATE,
            DRIVER_QUEUE,
            key(
                "bottleneck_at",
                Kind::Choice(BOTTLENECK_SITES),
                "switch",
                "where rate and buffer are: `switch` (left→right, behind the senders' NICs) or \
                 `sender` (the one flow's sending host's NIC: a VM host's queue, which drains \
                 while the guest is descheduled)",
                "—",
            ),
            key(
                "drops",
                Kind::Other {
                    ty: "tables",
                    range: "[[topology.drops]] flow = name or index, seq, nth",
                    quoted: false,
                },
                "none",
                "scripted drops instead of `loss`",
                "—",
            ),
        ],
    },
    parse: parse_scenario,
};

/// A whole scenario with `preset = "dumbbell"`: `[[flows]]` and `[[probes]]`, no `[test]`.
fn parse_scenario(
    src: &Source<'_>,
    text: &str,
    overrides: &Overrides,
) -> Result<Scenario, ScenarioError> {
    let raw: RawScenario<RawDumbbell> = toml::from_str(text).map_err(|e| src.toml_error(&e))?;
    super::refuse_test_sections(src, &raw, super::TEST_PRESETS, "a dumbbell")?;
    let common = super::resolve_common(src, &raw, overrides)?;
    let topology = resolve(src, &raw.topology, &common.flows)?;
    if let (Some(at), false) = (&raw.topology.get_ref().bottleneck_at, raw.probes.is_empty())
        && topology.net.bottleneck_at == BottleneckAt::Sender
    {
        return Err(src.error(
            Some(at.span()),
            "topology.bottleneck_at",
            "`sender` puts the queue in the flow's sending host, which `[[probes]]` do not \
             cross: remove the probes, or keep the bottleneck at the `switch`",
        ));
    }
    Ok(common.finish(Topology::new(topology)))
}

/// A resolved `dumbbell` preset: the simulator's own builder, holding the network as resolved,
/// and the two things only the description needs (the buffer as written, the RTT its BDP is
/// taken at). The builder is the one place the dumbbell's parameters live; this module fills it
/// and does not mirror its fields.
#[derive(Clone, Debug)]
pub struct DumbbellPreset {
    /// The bottleneck (rate, delay, queue or AQM, loss), reverse path, access links and NICs;
    /// no flows or probes (the scenario's are added by [`DumbbellPreset::builder`]).
    pub net: topology::Dumbbell,
    /// The buffer as written (resolved into `net.queue`; unused with an AQM).
    pub buffer: BufferSpec,
    /// The RTT the BDP is computed from: the shortest base RTT of any flow.
    pub bdp_rtt: Dur,
    /// The rate the path delivers in the long run: the bottleneck's (nominal) rate, or a
    /// profile's policer rate when that is lower.
    pub path_rate_bps: u64,
    /// Elements the profile places (`policer`, `ack_aggregate`), before the file's own.
    pub profile_elements: Vec<PlacedElement>,
    /// Links whose rate the profile takes from a trace (a file's `[[links]]` entry for the
    /// same link replaces it).
    pub profile_links: Vec<ShapedLink>,
}

impl DumbbellPreset {
    /// Base RTT of an endpoint pair whose access links have one-way delay `access_delay`.
    #[must_use]
    pub fn base_rtt(&self, access_delay: Dur) -> Dur {
        let one_way = self.net.delay + access_delay;
        one_way + one_way
    }

    /// Bandwidth-delay product in bytes: rate × [`DumbbellPreset::bdp_rtt`] / 8.
    #[must_use]
    pub fn bdp_bytes(&self) -> u64 {
        topology::Dumbbell::bdp_bytes(self.net.rate_bps, self.bdp_rtt)
    }

    /// N of the `loss` element's `per_rtt` model when the file gives no `flight`: the packets
    /// of a full flight, the path's BDP ([`DumbbellPreset::path_rate_bps`] × the shortest base
    /// RTT of the flows, [`DumbbellPreset::bdp_rtt`]) plus the bottleneck's buffer, in packets
    /// of the largest wire size of the scenario's flows (quicly's simulator: N = BDP + buffer
    /// in packets). Computed as one division of exact integers, so it is the exact ratio
    /// rounded once.
    ///
    /// # Errors
    /// The bottleneck runs an AQM (no fixed buffer), or the scenario has no flows.
    pub fn full_flight(&self, scenario: &Scenario) -> Result<f64, String> {
        if let Some(aqm) = &self.net.aqm {
            return Err(format!(
                "the bottleneck runs qdisc `{}`, which has no fixed buffer",
                aqm.name()
            ));
        }
        let packet = scenario
            .flows
            .iter()
            .map(|f| wire_bytes(f.mss))
            .max()
            .ok_or_else(|| "the scenario has no flows to size its packets".to_owned())?;
        // bits × ns: BDP bytes = rate · rtt_ns / 8e9.
        let scale = 8 * 1_000_000_000_u128;
        let bdp = u128::from(self.path_rate_bps) * u128::from(self.bdp_rtt.0);
        let buffer = match self.net.queue {
            QueueLimit::Bytes(b) => u128::from(b) * scale,
            QueueLimit::Packets(n) => u128::from(n) * scale * u128::from(packet),
        };
        #[expect(
            clippy::cast_precision_loss,
            reason = "a ratio of two integers, rounded once each to the nearest f64"
        )]
        Ok((bdp + buffer) as f64 / (scale * u128::from(packet)) as f64)
    }

    /// One line for `cclab check`.
    pub(crate) fn describe(&self) -> String {
        let n = &self.net;
        let limit = match n.queue {
            QueueLimit::Packets(p) => format!("{p} packets"),
            QueueLimit::Bytes(b) => format!("{b} bytes"),
        };
        let loss = match &n.loss {
            LossConfig::None => "none".to_owned(),
            LossConfig::Bernoulli { p } => format!("Bernoulli p = {}", fmt_number(*p)),
            LossConfig::GilbertElliott { p, r, .. } => format!(
                "Gilbert–Elliott p = {}, r = {}",
                fmt_number(*p),
                fmt_number(*r)
            ),
            LossConfig::FourState { p } => format!(
                "4-state p13 = {}, p31 = {}",
                fmt_number(p[0]),
                fmt_number(p[1])
            ),
            LossConfig::PerRtt { p_flight, flight } => format!(
                "P = {} per flight of {} packets",
                fmt_number(*p_flight),
                fmt_number(*flight)
            ),
            LossConfig::Scripted { drops } => format!("{} scripted drops", drops.len()),
        };
        let queue = match &n.aqm {
            Some(aqm) => format!(
                "qdisc {}, BDP {} bytes at RTT {}",
                qdisc::describe(aqm),
                self.bdp_bytes(),
                fmt_dur(self.bdp_rtt)
            ),
            None => format!(
                "buffer {} = {limit} (BDP {} bytes at RTT {})",
                self.buffer,
                self.bdp_bytes(),
                fmt_dur(self.bdp_rtt)
            ),
        };
        let driver_queue = match n.driver_queue {
            QueueLimit::Packets(p) => format!("{p}-packet"),
            QueueLimit::Bytes(b) => format!("{b}-byte"),
        };
        let mut extras = String::new();
        for e in &self.profile_elements {
            extras.push_str(&format!(
                "\n  element on {} (profile): {:?}",
                e.node, e.spec
            ));
        }
        for l in &self.profile_links {
            extras.push_str(&format!("\n  {} (profile)", rates::describe(l)));
        }
        format!(
            "topology dumbbell: bottleneck {} one-way {} (reverse {}), {queue}, loss {loss}, \
             access links {}, NICs {} with {driver_queue} driver queues{extras}",
            fmt_rate(n.rate_bps),
            fmt_dur(n.delay),
            fmt_rate(n.reverse_rate_bps.unwrap_or(n.rate_bps)),
            n.access_rate_bps
                .map_or_else(|| "unlimited".to_owned(), fmt_rate),
            n.nic_rate_bps
                .map_or_else(|| "unlimited".to_owned(), fmt_rate),
        )
    }

    /// The simulator's topology builder for `scenario` (whose topology is `self`): the network
    /// as resolved, `scenario`'s seed, duration and sample interval, and its flows and probes in
    /// order (flow `i` becomes `FlowId(i)`, probe `j` `ProbeId(j)`). Its `build()` is the
    /// scenario's [`cclab_sim::SimConfig`].
    #[must_use]
    pub fn builder(&self, scenario: &Scenario) -> topology::Dumbbell {
        let mut d = self.net.clone();
        d.seed = scenario.seed;
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
            .map(|f| {
                // `src`/`dst` are placeholders: `build` connects each flow to its own hosts.
                let flow = f.flow_config(topology::LEFT, topology::RIGHT);
                DumbbellFlow {
                    flow,
                    access_delay: f.access_delay,
                }
            })
            .collect();
        d.probes = scenario
            .probes
            .iter()
            .map(|p| DumbbellProbe {
                probe: ProbeConfig {
                    size: p.size,
                    start: p.start,
                    stop: p.stop,
                    ..ProbeConfig::ping(&p.name, topology::LEFT, topology::RIGHT, p.interval)
                },
                access_delay: p.access_delay,
            })
            .collect();
        d
    }
}

impl Network for DumbbellPreset {
    fn preset(&self) -> &'static str {
        PRESET.decl.name
    }

    fn describe(&self) -> String {
        DumbbellPreset::describe(self)
    }

    fn endpoint_base_rtt(&self, access_delay: Dur) -> Option<Dur> {
        Some(self.base_rtt(access_delay))
    }

    fn sim_config(&self, scenario: &Scenario, seed: u64) -> cclab_sim::SimConfig {
        let mut d = self.builder(scenario);
        d.seed = seed;
        let mut cfg = d.build();
        elements::attach(&self.profile_elements, &mut cfg);
        rates::attach(&self.profile_links, &mut cfg);
        cfg
    }

    fn full_flight_packets(&self, scenario: &Scenario) -> Result<f64, String> {
        self.full_flight(scenario)
    }

    /// The scenario's flows as uploads and its probes as ICMP pings, sampled every
    /// `sample_interval` over the whole duration.
    fn run_plan(&self, scenario: &Scenario, seed: u64, _label: &str) -> RunPlan {
        super::presets::scenario_run_plan(scenario, self.sim_config(scenario, seed), |_| {
            SeriesKind::TcpUpload
        })
    }

    fn clone_box(&self) -> Box<dyn Network> {
        Box::new(self.clone())
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

pub(crate) fn resolve(
    src: &Source<'_>,
    raw: &Spanned<RawDumbbell>,
    flows: &[ResolvedFlow],
) -> Result<DumbbellPreset, ScenarioError> {
    let t = raw.get_ref();
    let profile = match &t.profile {
        Some(name) => Some((
            profiles::find(name.get_ref()).ok_or_else(|| {
                src.error(
                    Some(name.span()),
                    "topology.profile",
                    unknown_choice("profile", name.get_ref(), &profiles::names()),
                )
            })?,
            name.span(),
        )),
        None => None,
    };
    // A key the file gives wins over the profile's value; the span blamed for a value is its
    // key's, else the profile's.
    let (rate_bps, rate_span) = match (&t.rate, profile.clone()) {
        (Some(r), _) => (r.get_ref().0, r.span()),
        // A policed path's line runs at the hosts' NIC rate: the policer sets the rate.
        (None, Some((p, span))) if p.extras.policer_burst.is_some() => {
            (nic_rate(t.nic_rate.as_ref()), span)
        }
        (None, Some((p, span))) => (p.rate_bps, span),
        (None, None) => return Err(missing_without_profile(src, raw, "rate")),
    };
    let (delay, delay_span) = match (&t.delay, profile.clone()) {
        (Some(d), _) => (d.get_ref().0, d.span()),
        (None, Some((p, span))) => (Dur(p.rtt.0 / 2), span),
        (None, None) => return Err(missing_without_profile(src, raw, "delay")),
    };
    let one_way_min = flows
        .iter()
        .map(|f| f.flow.access_delay)
        .min()
        .unwrap_or(Dur::ZERO);
    let bdp_rtt = {
        let one_way = delay + one_way_min;
        one_way + one_way
    };
    let largest = flows
        .iter()
        .map(|f| wire_bytes(f.flow.mss))
        .max()
        .unwrap_or(0);
    let aqm = match &t.qdisc {
        Some(q) => qdisc::resolve(src, "topology.qdisc", q, largest)?,
        None => None,
    };
    if let (Some(aqm), Some(b), Some(q)) = (&aqm, &t.buffer, &t.qdisc) {
        return Err(buffer_with_aqm(
            src,
            "topology.buffer",
            b.span(),
            aqm,
            q,
            "qdisc",
        ));
    }
    let (buffer, buffer_span) = match (&t.buffer, profile.clone()) {
        (Some(b), _) => (*b.get_ref(), b.span()),
        (_, Some((p, span))) => (p.buffer, span),
        _ => (DEFAULT_BUFFER, raw.span()),
    };
    let queue_limit = buffer.resolve(rate_bps, bdp_rtt);
    if aqm.is_none() {
        if t.buffer.is_some() || profile.is_some() {
            check_buffer(src, buffer, queue_limit, buffer_span, flows)?;
        } else if let Some(e) = default_buffer_too_large(
            src,
            "buffer",
            queue_limit,
            (rate_bps, bdp_rtt),
            buffer_span.clone(),
        ) {
            return Err(e);
        } else if let QueueLimit::Bytes(b) = queue_limit
            && b < largest
        {
            return Err(default_buffer_too_small(
                src,
                DefaultBuffer {
                    buffer_key: "buffer",
                    bytes: b,
                    largest,
                    rate: ("rate", rate_bps, rate_span),
                    rtt: bdp_rtt,
                    delay_span,
                },
            ));
        }
    }
    let loss = match (&t.loss, t.drops.is_empty()) {
        (Some(_), false) => {
            return Err(src.error(
                Some(t.drops[0].span()),
                "topology.drops",
                "cannot combine scripted `drops` with `loss`: the bottleneck has one loss model; \
                 remove one of them",
            ));
        }
        (Some(l), true) if l.get_ref().0 > 0.0 => LossConfig::Bernoulli { p: l.get_ref().0 },
        (None, true) => match profile.clone() {
            Some((p, _)) if p.extras.loss > 0.0 => LossConfig::Bernoulli { p: p.extras.loss },
            _ => LossConfig::None,
        },
        (Some(_), true) => LossConfig::None,
        (None, false) => LossConfig::Scripted {
            drops: resolve_drops(src, t, flows)?,
        },
    };
    let mut net = topology::Dumbbell::new(rate_bps, delay, queue_limit);
    net.aqm = aqm;
    net.loss = loss;
    net.reverse_rate_bps = Some(t.reverse_rate.as_ref().map_or(rate_bps, |r| r.get_ref().0));
    net.access_rate_bps = t.access_rate.as_ref().map(|r| r.get_ref().0);
    net.nic_rate_bps = Some(nic_rate(t.nic_rate.as_ref()));
    net.driver_queue = QueueLimit::Packets(driver_queue(src, t.driver_queue.as_ref())?);
    net.uncongested_queue = QueueLimit::Packets(UNCONGESTED_QUEUE_PACKETS);
    if let Some(at) = &t.bottleneck_at {
        net.bottleneck_at = match at.get_ref().as_str() {
            "switch" => BottleneckAt::Switch,
            "sender" => {
                let why = if flows.len() != 1 {
                    Some(format!(
                        "needs exactly one flow (the queue is that flow's host's own), got {}",
                        flows.len()
                    ))
                } else if t.profile.is_some() {
                    Some(
                        "cannot take a `profile` (its traces and elements shape the switch's link)"
                            .to_owned(),
                    )
                } else if let Some(v) = flows[0].flow.host.virtio {
                    // vhost fills the host queue up to the tap queue and never overfills it
                    // (cclab_sim::host::virtio): the queue must hold that many packets.
                    let fits = match (&net.aqm, net.queue) {
                        (Some(_), _) => false,
                        (None, QueueLimit::Packets(n)) => n >= v.tap_queue,
                        (None, QueueLimit::Bytes(b)) => b >= u64::from(v.tap_queue) * 65_536,
                    };
                    (!fits).then(|| {
                        format!(
                            "with a virtual machine (`preset = \"vm\"`) needs a drop-tail \
                             `buffer` in packets holding the host's tap queue ({} packets): \
                             write e.g. `buffer = \"{}p\"`, or lower the host's `tap_queue`",
                            v.tap_queue, v.tap_queue
                        )
                    })
                } else {
                    None
                };
                if let Some(why) = why {
                    return Err(src.error(
                        Some(at.span()),
                        "topology.bottleneck_at",
                        format!("`sender` {why}"),
                    ));
                }
                BottleneckAt::Sender
            }
            other => {
                return Err(src.error(
                    Some(at.span()),
                    "topology.bottleneck_at",
                    unknown_choice("bottleneck site", other, BOTTLENECK_SITES),
                ));
            }
        };
    }
    let (profile_elements, profile_links) = match &profile {
        Some((p, _)) => profile_extras(p, t),
        None => (Vec::new(), Vec::new()),
    };
    let mut path_rate_bps = profile_links
        .iter()
        .find(|l| l.link == "bottleneck")
        .map_or(rate_bps, |l| l.shape.nominal_bps());
    if let Some((p, _)) = &profile
        && p.extras.policer_burst.is_some()
    {
        path_rate_bps = path_rate_bps.min(p.rate_bps);
    }
    Ok(DumbbellPreset {
        net,
        buffer,
        bdp_rtt,
        path_rate_bps,
        profile_elements,
        profile_links,
    })
}

/// The elements and link traces profile `p` adds to the dumbbell (`t` as written: a trace is
/// left out when the file gives that link's rate itself).
fn profile_extras(p: &Profile, t: &RawDumbbell) -> (Vec<PlacedElement>, Vec<ShapedLink>) {
    let on_left = |spec: ElementSpec, packets: PacketKind| PlacedElement {
        node: "left".to_owned(),
        spec,
        select: Selector {
            packets,
            ..Selector::default()
        },
        from: None,
    };
    let mut placed = Vec::new();
    if let Some(burst_bytes) = p.extras.policer_burst {
        placed.push(on_left(
            ElementSpec::Policer {
                rate_bps: p.rate_bps,
                burst_bytes,
            },
            PacketKind::Data,
        ));
    }
    if let Some(period) = p.extras.ack_release {
        placed.push(on_left(
            ElementSpec::AckAggregate {
                period,
                phase: Dur::ZERO,
            },
            PacketKind::Acks,
        ));
    }
    let mut links = Vec::new();
    if let (Some(trace), None) = (p.extras.trace, &t.rate) {
        links.push(ShapedLink {
            link: "bottleneck".to_owned(),
            shape: trace.shape(),
        });
    }
    if let (Some(trace), None) = (p.extras.reverse_trace, &t.reverse_rate) {
        links.push(ShapedLink {
            link: "bottleneck_reverse".to_owned(),
            shape: trace.shape(),
        });
    }
    (placed, links)
}

/// `topology.KEY` is missing and no profile gives it.
fn missing_without_profile(
    src: &Source<'_>,
    raw: &Spanned<RawDumbbell>,
    key: &str,
) -> ScenarioError {
    src.error(
        Some(raw.span()),
        format!("topology.{key}"),
        format!(
            "missing `{key}`: give `{key}`, or a `profile` that sets it (`cclab list profiles`)"
        ),
    )
}

/// `topology.nic_rate`, default [`topology::NIC_RATE_BPS`].
pub(crate) fn nic_rate(v: Option<&Spanned<crate::units::Rate>>) -> u64 {
    v.map_or(topology::NIC_RATE_BPS, |r| r.get_ref().0)
}

/// `topology.driver_queue` in packets, default [`topology::DRIVER_QUEUE_PACKETS`].
pub(crate) fn driver_queue(
    src: &Source<'_>,
    v: Option<&Spanned<i64>>,
) -> Result<u32, ScenarioError> {
    src.ranged_u32(
        v,
        "topology.driver_queue".to_owned(),
        1..=1_000_000,
        "packets",
        topology::DRIVER_QUEUE_PACKETS,
    )
}

/// The error for a `buffer` (at `field`, `span`) that would size a queue run by `aqm`, set by
/// the key `qdisc_key` (`raw`).
pub(crate) fn buffer_with_aqm(
    src: &Source<'_>,
    field: &str,
    span: Range<usize>,
    aqm: &AqmConfig,
    raw: &Spanned<RawQdisc>,
    qdisc_key: &str,
) -> ScenarioError {
    let unit = qdisc::limit_unit(aqm);
    let how = match raw.get_ref() {
        RawQdisc::Name(n) => {
            format!("write `{qdisc_key} = {{ kind = \"{n}\", limit = … }}` to change it")
        }
        RawQdisc::Table { .. } => format!("set `limit` in the `{qdisc_key}` table to change it"),
    };
    src.error(
        Some(span),
        field.to_owned(),
        format!(
            "`{}` sizes the drop-tail FIFO, but this queue runs qdisc `{}`, which has its own \
             `limit` ({unit}); remove `{}` and {how}",
            field.rsplit('.').next().unwrap_or(field),
            aqm.name(),
            field.rsplit('.').next().unwrap_or(field),
        ),
    )
}

/// A buffer left at its default (1 BDP) that resolves to less than a packet.
pub(crate) struct DefaultBuffer<'a> {
    /// The key that would set it (`buffer`, `up_buffer`, …).
    pub buffer_key: &'a str,
    /// What it resolves to.
    pub bytes: u64,
    /// The largest full-size packet it must hold.
    pub largest: u64,
    /// The rate key that sized it, its value and its span.
    pub rate: (&'a str, u64, Range<usize>),
    /// The RTT the BDP is taken at.
    pub rtt: Dur,
    /// The span of `topology.delay`.
    pub delay_span: Range<usize>,
}

/// The error for a default buffer smaller than a packet. It points at the key that made it
/// small — the delay when the path has none (the BDP is then 0), else the rate — since the
/// file never wrote the buffer.
pub(crate) fn default_buffer_too_small(src: &Source<'_>, d: DefaultBuffer<'_>) -> ScenarioError {
    let (rate_key, rate_bps, rate_span) = d.rate;
    let (field, span, or) = if d.rtt == Dur::ZERO {
        (
            "topology.delay".to_owned(),
            d.delay_span,
            " or give the path a positive `delay`",
        )
    } else {
        (format!("topology.{rate_key}"), rate_span, "")
    };
    src.error(
        Some(span),
        field,
        format!(
            "the default buffer (1 BDP at {} and a base RTT of {}) is {} bytes, less than one \
             full-size packet ({} bytes): set `topology.{}` (e.g. `{} = \"100p\"`){or}",
            fmt_rate(rate_bps),
            fmt_dur(d.rtt),
            d.bytes,
            d.largest,
            d.buffer_key,
            d.buffer_key,
        ),
    )
}

/// The error for a buffer left at its default (1 BDP) that resolves to more than a buffer may
/// hold ([`super::buffer_too_large`]), if it does: located at the table the buffer belongs in
/// (`span`), since the file never wrote it, and saying how to set it. `at` is the rate and the
/// RTT the BDP was taken at.
pub(crate) fn default_buffer_too_large(
    src: &Source<'_>,
    buffer_key: &str,
    limit: QueueLimit,
    at: (u64, Dur),
    span: Range<usize>,
) -> Option<ScenarioError> {
    let problem = super::buffer_too_large(limit)?;
    Some(src.error(
        Some(span),
        format!("topology.{buffer_key}"),
        format!(
            "`{buffer_key}` is not set, and its default ({DEFAULT_BUFFER} at {} and a base RTT \
             of {}) {problem}: set `topology.{buffer_key}` (e.g. `{buffer_key} = \"1000p\"`)",
            fmt_rate(at.0),
            fmt_dur(at.1),
        ),
    ))
}

/// The queue must be able to hold at least one full-size data packet of every flow.
fn check_buffer(
    src: &Source<'_>,
    buffer: BufferSpec,
    limit: QueueLimit,
    span: Range<usize>,
    flows: &[ResolvedFlow],
) -> Result<(), ScenarioError> {
    let largest = flows
        .iter()
        .map(|f| wire_bytes(f.flow.mss))
        .max()
        .unwrap_or(0);
    let problem = match limit {
        QueueLimit::Packets(0) => Some("a buffer of 0 packets cannot queue anything".to_owned()),
        QueueLimit::Bytes(b) if b < largest => Some(format!(
            "`{buffer}` resolves to {b} bytes, less than one full-size packet ({largest} bytes)"
        )),
        _ => super::buffer_too_large(limit).map(|p| format!("`{buffer}` {p}")),
    };
    match problem {
        Some(p) => Err(src.error(Some(span), "topology.buffer", p)),
        None => Ok(()),
    }
}

fn resolve_drops(
    src: &Source<'_>,
    t: &RawDumbbell,
    flows: &[ResolvedFlow],
) -> Result<Vec<ScriptedDrop>, ScenarioError> {
    let names: Vec<&str> = flows.iter().map(|f| f.flow.name.as_str()).collect();
    let mut out = Vec::with_capacity(t.drops.len());
    for (k, d) in t.drops.iter().enumerate() {
        let d = d.get_ref();
        let what = format!("topology.drops[{k}]");
        let flow = match d.flow.get_ref() {
            FlowRef::Index(i) => match usize::try_from(*i) {
                Ok(i) if i < flows.len() => i,
                _ => {
                    return Err(src.error(
                        Some(d.flow.span()),
                        format!("{what}.flow"),
                        format!(
                            "no flow with index {i}: indices run from 0 to {} (after `count` \
                             expansion)",
                            flows.len() - 1
                        ),
                    ));
                }
            },
            FlowRef::Name(n) => match names.iter().position(|x| x == n) {
                Some(i) => i,
                None => {
                    let shown: Vec<&str> = names.iter().take(20).copied().collect();
                    return Err(src.error(
                        Some(d.flow.span()),
                        format!("{what}.flow"),
                        unknown_choice("flow", n, &shown),
                    ));
                }
            },
        };
        let seq = u64::try_from(*d.seq.get_ref()).map_err(|_| {
            src.error(
                Some(d.seq.span()),
                format!("{what}.seq"),
                "must not be negative (0 = the flow's first segment)",
            )
        })?;
        let nth = match &d.nth {
            Some(n) => u32::try_from(*n.get_ref()).map_err(|_| {
                src.error(
                    Some(n.span()),
                    format!("{what}.nth"),
                    "must be between 0 (the original transmission) and 4294967295",
                )
            })?,
            None => 0,
        };
        out.push(ScriptedDrop {
            flow: FlowId(flow as u32),
            seq,
            nth,
        });
    }
    Ok(out)
}
