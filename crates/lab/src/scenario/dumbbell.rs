//! The `dumbbell` preset: N senders share one bottleneck link to N receivers.
//!
//! Contract: [`resolve`] checks the `[topology]` table against the already-resolved flows (the
//! BDP needs their RTTs, scripted drops name them) and returns a [`Dumbbell`];
//! [`Dumbbell::build`] lays out nodes and links. The layout, fixed so outputs are comparable:
//!
//! - nodes: `left` (0) and `right` (1) routers, then for each flow `i` hosts `s{i}`, `r{i}`, then
//!   for each probe `j` hosts `ps{j}`, `pr{j}`;
//! - links: `bottleneck` `left→right` (rate, delay, buffer, loss, monitored) = link 0,
//!   `bottleneck_reverse` `right→left` (reverse rate, delay, [`UNCONGESTED_QUEUE_PACKETS`], no
//!   loss, not monitored) = link 1, then per host pair `s→left` and `left→s` (access delay, access
//!   rate), `right→r` and `r→right` (no rate, no delay).
//!
//! So a flow's base RTT is `2·(delay + access_delay)`.

use std::ops::Range;

use cclab_sim::{
    Dur, FlowId, LinkConfig, LinkId, LossConfig, NodeConfig, NodeId, NodeKind, QueueConfig,
    QueueLimit, ScriptedDrop,
};
use toml::Spanned;

use super::error::{Source, unknown_choice};
use super::raw::{FlowRef, RawDumbbell};
use super::{Flow, Probe, ResolvedFlow, ScenarioError, wire_bytes};
use crate::units::{BufferSpec, fmt_dur, fmt_number, fmt_rate};

/// Queue limit of links that are not meant to be bottlenecks (the reverse path and rate-limited
/// access links): large enough never to drop in the scenarios cclab runs.
pub const UNCONGESTED_QUEUE_PACKETS: u32 = 100_000;

/// Buffer used when a dumbbell scenario gives none.
pub const DEFAULT_BUFFER: BufferSpec = BufferSpec::Bdp(1.0);

/// A resolved dumbbell.
#[derive(Clone, Debug, PartialEq)]
pub struct Dumbbell {
    /// Bottleneck rate, bit/s.
    pub rate_bps: u64,
    /// Bottleneck one-way propagation delay (both directions).
    pub delay: Dur,
    /// The buffer as written.
    pub buffer: BufferSpec,
    /// The buffer resolved against the rate and [`Dumbbell::bdp_rtt`].
    pub queue_limit: QueueLimit,
    /// The RTT the BDP is computed from: the shortest base RTT of any flow.
    pub bdp_rtt: Dur,
    /// Bottleneck loss model (data direction only).
    pub loss: LossConfig,
    /// Rate of the reverse (ACK) path, bit/s.
    pub reverse_rate_bps: u64,
    /// Rate of the access links (`None`: pure delay lines).
    pub access_rate_bps: Option<u64>,
}

/// Nodes and links of a built topology, and the (src, dst) hosts of each flow and probe.
pub(crate) struct Layout {
    pub nodes: Vec<NodeConfig>,
    pub links: Vec<LinkConfig>,
    pub flow_hosts: Vec<(NodeId, NodeId)>,
    pub probe_hosts: Vec<(NodeId, NodeId)>,
}

impl Dumbbell {
    /// Base RTT of an endpoint pair whose access links have one-way delay `access_delay`.
    #[must_use]
    pub fn base_rtt(&self, access_delay: Dur) -> Dur {
        let one_way = self.delay + access_delay;
        one_way + one_way
    }

    /// Bandwidth-delay product in bytes: rate × [`Dumbbell::bdp_rtt`] / 8.
    #[must_use]
    pub fn bdp_bytes(&self) -> u64 {
        match BufferSpec::Bdp(1.0).resolve(self.rate_bps, self.bdp_rtt) {
            QueueLimit::Bytes(b) => b,
            QueueLimit::Packets(p) => u64::from(p),
        }
    }

    /// One line for `cclab check`.
    pub(crate) fn describe(&self) -> String {
        let limit = match self.queue_limit {
            QueueLimit::Packets(p) => format!("{p} packets"),
            QueueLimit::Bytes(b) => format!("{b} bytes"),
        };
        let loss = match &self.loss {
            LossConfig::None => "none".to_owned(),
            LossConfig::Bernoulli { p } => format!("Bernoulli p = {}", fmt_number(*p)),
            LossConfig::Scripted { drops } => format!("{} scripted drops", drops.len()),
        };
        format!(
            "topology dumbbell: bottleneck {} one-way {} (reverse {}), buffer {} = {limit} \
             (BDP {} bytes at RTT {}), loss {loss}, access links {}",
            fmt_rate(self.rate_bps),
            fmt_dur(self.delay),
            fmt_rate(self.reverse_rate_bps),
            self.buffer,
            self.bdp_bytes(),
            fmt_dur(self.bdp_rtt),
            self.access_rate_bps
                .map_or_else(|| "unlimited".to_owned(), fmt_rate),
        )
    }

    /// Lay out nodes and links (see the module documentation).
    pub(crate) fn build(&self, flows: &[Flow], probes: &[Probe]) -> Layout {
        const LEFT: NodeId = NodeId(0);
        const RIGHT: NodeId = NodeId(1);
        let big = QueueConfig::DropTail {
            limit: QueueLimit::Packets(UNCONGESTED_QUEUE_PACKETS),
        };
        let mut nodes = vec![
            NodeConfig {
                name: "left".to_owned(),
                kind: NodeKind::Router,
            },
            NodeConfig {
                name: "right".to_owned(),
                kind: NodeKind::Router,
            },
        ];
        let mut links = vec![
            LinkConfig {
                name: "bottleneck".to_owned(),
                from: LEFT,
                to: RIGHT,
                rate_bps: Some(self.rate_bps),
                delay: self.delay,
                queue: QueueConfig::DropTail {
                    limit: self.queue_limit,
                },
                loss: self.loss.clone(),
                monitor: true,
            },
            LinkConfig {
                name: "bottleneck_reverse".to_owned(),
                from: RIGHT,
                to: LEFT,
                rate_bps: Some(self.reverse_rate_bps),
                delay: self.delay,
                queue: big.clone(),
                loss: LossConfig::None,
                monitor: false,
            },
        ];
        let mut add_pair = |sender: String, receiver: String, access_delay: Dur| {
            let s = NodeId(nodes.len() as u32);
            let r = NodeId(nodes.len() as u32 + 1);
            let link = |name: String, from, to, rate_bps, delay| LinkConfig {
                name,
                from,
                to,
                rate_bps,
                delay,
                queue: big.clone(),
                loss: LossConfig::None,
                monitor: false,
            };
            let access = self.access_rate_bps;
            links.push(link(
                format!("{sender}->left"),
                s,
                LEFT,
                access,
                access_delay,
            ));
            links.push(link(
                format!("left->{sender}"),
                LEFT,
                s,
                access,
                access_delay,
            ));
            links.push(link(
                format!("right->{receiver}"),
                RIGHT,
                r,
                None,
                Dur::ZERO,
            ));
            links.push(link(
                format!("{receiver}->right"),
                r,
                RIGHT,
                None,
                Dur::ZERO,
            ));
            nodes.push(NodeConfig {
                name: sender,
                kind: NodeKind::Host,
            });
            nodes.push(NodeConfig {
                name: receiver,
                kind: NodeKind::Host,
            });
            (s, r)
        };
        let flow_hosts = flows
            .iter()
            .enumerate()
            .map(|(i, f)| add_pair(format!("s{i}"), format!("r{i}"), f.access_delay))
            .collect();
        let probe_hosts = probes
            .iter()
            .enumerate()
            .map(|(j, p)| add_pair(format!("ps{j}"), format!("pr{j}"), p.access_delay))
            .collect();
        Layout {
            nodes,
            links,
            flow_hosts,
            probe_hosts,
        }
    }
}

/// The link id of the bottleneck in a built dumbbell.
pub const BOTTLENECK: LinkId = LinkId(0);

pub(crate) fn resolve(
    src: &Source<'_>,
    raw: &Spanned<RawDumbbell>,
    flows: &[ResolvedFlow],
) -> Result<Dumbbell, ScenarioError> {
    let t = raw.get_ref();
    let rate_bps = t.rate.get_ref().0;
    let delay = t.delay.get_ref().0;
    let one_way_min = flows
        .iter()
        .map(|f| f.flow.access_delay)
        .min()
        .unwrap_or(Dur::ZERO);
    let bdp_rtt = {
        let one_way = delay + one_way_min;
        one_way + one_way
    };
    let (buffer, buffer_span) = match &t.buffer {
        Some(b) => (*b.get_ref(), b.span()),
        None => (DEFAULT_BUFFER, raw.span()),
    };
    let queue_limit = buffer.resolve(rate_bps, bdp_rtt);
    check_buffer(src, buffer, queue_limit, buffer_span, flows)?;
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
        (_, true) => LossConfig::None,
        (None, false) => LossConfig::Scripted {
            drops: resolve_drops(src, t, flows)?,
        },
    };
    Ok(Dumbbell {
        rate_bps,
        delay,
        buffer,
        queue_limit,
        bdp_rtt,
        loss,
        reverse_rate_bps: t.reverse_rate.as_ref().map_or(rate_bps, |r| r.get_ref().0),
        access_rate_bps: t.access_rate.as_ref().map(|r| r.get_ref().0),
    })
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
        _ => None,
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
