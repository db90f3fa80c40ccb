//! Programmatic topology builders (what the scenario presets and the benchmarks use).
//!
//! Contract: [`Dumbbell`] describes N flows sharing one bottleneck and turns it into a
//! [`SimConfig`]. Flow `i` runs from host `s{i}` to host `r{i}`; routers `left` and `right` are
//! joined by the bottleneck `left→right` (rate, delay, queue, loss; monitored) and the reverse
//! link `right→left` that carries ACKs (its own rate, same delay, deep queue). Each flow's sender
//! reaches `left` over an access link with the flow's own one-way delay in both directions, so
//! flow `i`'s base RTT is 2·(delay + access_delay_i). Receivers hang off `right` with zero-delay,
//! infinitely fast links. Probes get their own host pair built the same way.

use cclab_cc::{CcSpec, Dur, Time};

use crate::config::{
    FlowConfig, LinkConfig, LossConfig, NodeConfig, NodeId, NodeKind, ProbeConfig, QueueConfig,
    QueueLimit, SimConfig,
};

/// One flow of a dumbbell.
#[derive(Clone, Debug)]
pub struct DumbbellFlow {
    /// The flow (its `src`/`dst` are filled in by [`Dumbbell::build`]).
    pub flow: FlowConfig,
    /// One-way access delay of the sender (both directions).
    pub access_delay: Dur,
}

/// One probe of a dumbbell.
#[derive(Clone, Debug)]
pub struct DumbbellProbe {
    /// The probe (its `src`/`dst` are filled in by [`Dumbbell::build`]).
    pub probe: ProbeConfig,
    /// One-way access delay of the probe's sender.
    pub access_delay: Dur,
}

/// A single-bottleneck topology.
#[derive(Clone, Debug)]
pub struct Dumbbell {
    /// Master seed.
    pub seed: u64,
    /// Simulated time.
    pub duration: Dur,
    /// Sampling interval.
    pub sample_interval: Dur,
    /// Bottleneck rate, bit/s.
    pub rate_bps: u64,
    /// Bottleneck one-way propagation delay.
    pub delay: Dur,
    /// Bottleneck queue.
    pub queue: QueueLimit,
    /// Loss on the bottleneck (data direction).
    pub loss: LossConfig,
    /// Reverse (ACK) path rate; `None` = same as `rate_bps`.
    pub reverse_rate_bps: Option<u64>,
    /// Access link rate; `None` = infinitely fast (pure delay).
    pub access_rate_bps: Option<u64>,
    /// Flows.
    pub flows: Vec<DumbbellFlow>,
    /// Probes.
    pub probes: Vec<DumbbellProbe>,
}

impl Dumbbell {
    /// A dumbbell without flows: `rate_bps`, one-way `delay`, a queue of `queue`, 30 s.
    #[must_use]
    pub fn new(rate_bps: u64, delay: Dur, queue: QueueLimit) -> Self {
        Dumbbell {
            seed: 1,
            duration: Dur::from_secs(30),
            sample_interval: Dur::from_millis(200),
            rate_bps,
            delay,
            queue,
            loss: LossConfig::None,
            reverse_rate_bps: None,
            access_rate_bps: None,
            flows: Vec::new(),
            probes: Vec::new(),
        }
    }

    /// Bytes in one bandwidth-delay product for a base RTT of `rtt`.
    #[must_use]
    pub fn bdp_bytes(rate_bps: u64, rtt: Dur) -> u64 {
        (u128::from(rate_bps) * u128::from(rtt.as_nanos()) / 8 / 1_000_000_000) as u64
    }

    /// Add a bulk flow with controller `cc` and access delay `access_delay`.
    pub fn add_flow(&mut self, cc: CcSpec, access_delay: Dur) -> &mut FlowConfig {
        let name = format!("flow{}", self.flows.len());
        let flow = FlowConfig::bulk(&name, NodeId(0), NodeId(0), cc);
        self.flows.push(DumbbellFlow { flow, access_delay });
        &mut self.flows.last_mut().expect("just pushed").flow
    }

    /// Add a ping probe of 64-byte packets every `interval`.
    pub fn add_ping(&mut self, interval: Dur) -> &mut ProbeConfig {
        let probe = ProbeConfig {
            name: "Ping (ms) ICMP".into(),
            src: NodeId(0),
            dst: NodeId(0),
            interval,
            size: 64,
            start: Time::ZERO,
            stop: None,
        };
        self.probes.push(DumbbellProbe {
            probe,
            access_delay: Dur::ZERO,
        });
        &mut self.probes.last_mut().expect("just pushed").probe
    }

    /// The simulator configuration.
    #[must_use]
    pub fn build(&self) -> SimConfig {
        let mut nodes = vec![
            NodeConfig {
                name: "left".into(),
                kind: NodeKind::Router,
            },
            NodeConfig {
                name: "right".into(),
                kind: NodeKind::Router,
            },
        ];
        let (left, right) = (NodeId(0), NodeId(1));
        let deep = QueueConfig::DropTail {
            limit: QueueLimit::Packets(1 << 20),
        };
        let mut links = vec![
            LinkConfig {
                name: "bottleneck".into(),
                from: left,
                to: right,
                rate_bps: Some(self.rate_bps),
                delay: self.delay,
                queue: QueueConfig::DropTail { limit: self.queue },
                loss: self.loss.clone(),
                monitor: true,
            },
            LinkConfig {
                name: "bottleneck_reverse".into(),
                from: right,
                to: left,
                rate_bps: Some(self.reverse_rate_bps.unwrap_or(self.rate_bps)),
                delay: self.delay,
                queue: deep.clone(),
                loss: LossConfig::None,
                monitor: false,
            },
        ];
        let mut attach =
            |nodes: &mut Vec<NodeConfig>, tag: &str, access: Dur| -> (NodeId, NodeId) {
                let s = NodeId(nodes.len() as u32);
                nodes.push(NodeConfig {
                    name: format!("s_{tag}"),
                    kind: NodeKind::Host,
                });
                let r = NodeId(nodes.len() as u32);
                nodes.push(NodeConfig {
                    name: format!("r_{tag}"),
                    kind: NodeKind::Host,
                });
                let mk = |name: String, from, to, rate, delay| LinkConfig {
                    name,
                    from,
                    to,
                    rate_bps: rate,
                    delay,
                    queue: deep.clone(),
                    loss: LossConfig::None,
                    monitor: false,
                };
                links.push(mk(
                    format!("access_{tag}"),
                    s,
                    left,
                    self.access_rate_bps,
                    access,
                ));
                links.push(mk(
                    format!("access_{tag}_reverse"),
                    left,
                    s,
                    self.access_rate_bps,
                    access,
                ));
                links.push(mk(format!("egress_{tag}"), right, r, None, Dur::ZERO));
                links.push(mk(
                    format!("egress_{tag}_reverse"),
                    r,
                    right,
                    None,
                    Dur::ZERO,
                ));
                (s, r)
            };
        let mut flows = Vec::new();
        for f in &self.flows {
            let (s, r) = attach(&mut nodes, &f.flow.name, f.access_delay);
            let mut fc = f.flow.clone();
            fc.src = s;
            fc.dst = r;
            flows.push(fc);
        }
        let mut probes = Vec::new();
        for (i, p) in self.probes.iter().enumerate() {
            let (s, r) = attach(&mut nodes, &format!("probe{i}"), p.access_delay);
            let mut pc = p.probe.clone();
            pc.src = s;
            pc.dst = r;
            probes.push(pc);
        }
        SimConfig {
            seed: self.seed,
            duration: self.duration,
            sample_interval: self.sample_interval,
            nodes,
            links,
            flows,
            probes,
        }
    }
}
