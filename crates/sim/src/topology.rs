//! Programmatic topology builders: the one place that knows how a dumbbell is wired. The
//! scenario presets of `cclab-lab`, its benchmarks and the simulator's own tests all build their
//! [`SimConfig`] through [`Dumbbell::build`].
//!
//! Contract: [`Dumbbell`] describes N flows (and M ping probes) sharing one bottleneck and turns
//! it into a [`SimConfig`] with this fixed layout, so outputs of different runs are comparable:
//!
//! - nodes: routers `left` = [`LEFT`] (0) and `right` = [`RIGHT`] (1), then for each flow `i` (in
//!   [`Dumbbell::flows`] order) hosts `s{i}`, `r{i}`, then for each probe `j` hosts `ps{j}`,
//!   `pr{j}`; flow `i` runs `s{i}` → `r{i}`, probe `j` runs `ps{j}` → `pr{j}`;
//! - links: `bottleneck` `left→right` = [`BOTTLENECK`] (link 0: rate, delay, queue, loss; the only
//!   monitored link), `bottleneck_reverse` `right→left` = [`BOTTLENECK_REVERSE`] (link 1: carries
//!   the ACKs and echo replies; reverse rate, same delay, [`Dumbbell::uncongested_queue`], no
//!   loss); both bottleneck directions take [`Dumbbell::bottleneck_delay_changes`]; then per
//!   host pair, in node order, `{s}->left` and `left->{s}` (the pair's own access delay) and
//!   `right->{r}` and `{r}->right` (zero delay); no link but the bottleneck loses packets;
//! - the host→router links `{s}->left` and `{r}->right` are the hosts' NICs: their rate is
//!   [`Dumbbell::nic_rate_bps`] (for `{s}->left` the lower of it and
//!   [`Dumbbell::access_rate_bps`] when both are set: one link stands for NIC and access line)
//!   and their queue is [`Dumbbell::driver_queue`]; the router→host links `left->{s}` (rate
//!   [`Dumbbell::access_rate_bps`]) and `right->{r}` (infinitely fast) and the reverse
//!   bottleneck have [`Dumbbell::uncongested_queue`];
//! - with [`BottleneckAt::Sender`] ([`Dumbbell::bottleneck_at`]) the bottleneck moves to each
//!   flow's sending host: `{s}->left` has the bottleneck rate and queue and is the monitored
//!   link, and `left→right` keeps its delay and loss but has no rate and an uncongested queue
//!   (probe senders' NICs are unchanged, so probes do not cross the flows' queues);
//! - hosts `s{i}` run [`Dumbbell::sender_host`] (or flow `i`'s override,
//!   [`Dumbbell::set_flow_host`]), hosts `r{i}` run [`Dumbbell::receiver_host`]; probe hosts
//!   `ps{j}` and `pr{j}` run the sender and receiver host model likewise;
//! - flows and probes keep their order and every field except `src`/`dst`, which are set to the
//!   hosts above; seed, duration and sample interval are copied.
//!
//! So an endpoint pair with access delay `a` has base (propagation) RTT `2·(delay + a)`, plus
//! the serialisation of each packet on the NICs it crosses.

use std::collections::BTreeMap;

use cclab_cc::{CcSpec, Dur, Time};

use crate::config::{
    AqmConfig, FlowConfig, HostConfig, LinkConfig, LinkId, LossConfig, NodeConfig, NodeId,
    NodeKind, ProbeConfig, QueueConfig, QueueLimit, SimConfig,
};

/// The left (sender-side) router of a built dumbbell.
pub const LEFT: NodeId = NodeId(0);
/// The right (receiver-side) router of a built dumbbell.
pub const RIGHT: NodeId = NodeId(1);
/// The bottleneck link (`left→right`) of a built dumbbell.
pub const BOTTLENECK: LinkId = LinkId(0);
/// The reverse (ACK) link (`right→left`) of a built dumbbell.
pub const BOTTLENECK_REVERSE: LinkId = LinkId(1);

/// Default queue limit, in packets, of the links that are not meant to be bottlenecks (the
/// reverse path and the router→host links): large enough never to drop in the runs cclab makes.
pub const UNCONGESTED_QUEUE_PACKETS: u32 = 100_000;

/// Default NIC line rate of every host: 10 Gbit/s.
pub const NIC_RATE_BPS: u64 = 10_000_000_000;

/// Default driver queue of every host's NIC: Linux's default `txqueuelen`, 1000 packets (the
/// `pfifo_fast` qdisc merges with it).
pub const DRIVER_QUEUE_PACKETS: u32 = 1000;

/// Where a dumbbell's bottleneck (its rate, queue and monitoring) is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BottleneckAt {
    /// On the `left→right` link, behind the senders' NICs: a switch's queue.
    #[default]
    Switch,
    /// On each flow's sending host: its NIC link `{s}->left` runs at the bottleneck rate with
    /// the bottleneck's queue, monitored (for a virtual machine, the host's queue its vhost
    /// worker fills, which drains while the guest is descheduled); `left→right` is a pure
    /// delay line with the bottleneck's loss. Probe senders keep their NICs.
    Sender,
}

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
    /// One-way access delay of the probe's sender (both directions).
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
    /// Changes of the bottleneck one-way delay during the run, applied to both directions
    /// (`LinkConfig::delay_changes`): from each time on the delay is the given value.
    pub bottleneck_delay_changes: Vec<(Time, Dur)>,
    /// Bottleneck queue (drop-tail capacity; unused when [`Dumbbell::aqm`] is set).
    pub queue: QueueLimit,
    /// Where the bottleneck is ([`BottleneckAt::Switch`] unless set).
    pub bottleneck_at: BottleneckAt,
    /// An AQM at the bottleneck instead of the drop-tail FIFO (its own limits apply).
    pub aqm: Option<AqmConfig>,
    /// Loss on the bottleneck (data direction).
    pub loss: LossConfig,
    /// Reverse (ACK) path rate; `None` = same as `rate_bps`.
    pub reverse_rate_bps: Option<u64>,
    /// Access link rate; `None` = infinitely fast (pure delay).
    pub access_rate_bps: Option<u64>,
    /// Line rate of every host's NIC, the rate of its host→router link (default
    /// [`NIC_RATE_BPS`]); `None` = infinitely fast NICs (no TX completions to wait for, so TSQ
    /// never binds).
    pub nic_rate_bps: Option<u64>,
    /// Queue of every host's NIC (the driver queue; default [`DRIVER_QUEUE_PACKETS`] packets).
    pub driver_queue: QueueLimit,
    /// Queue of every other link except the bottleneck (default
    /// [`UNCONGESTED_QUEUE_PACKETS`] packets).
    pub uncongested_queue: QueueLimit,
    /// Host model of every sending host (flow senders and probe senders).
    pub sender_host: HostConfig,
    /// Host model of every receiving host (flow receivers and probe echoers).
    pub receiver_host: HostConfig,
    /// Per-flow sending-host models replacing [`Dumbbell::sender_host`], by flow index.
    pub flow_hosts: BTreeMap<usize, HostConfig>,
    /// Flows.
    pub flows: Vec<DumbbellFlow>,
    /// Probes.
    pub probes: Vec<DumbbellProbe>,
}

impl Dumbbell {
    /// A dumbbell without flows or probes: `rate_bps`, one-way `delay`, a bottleneck queue of
    /// `queue`; seed 1, 30 s, samples every 200 ms, no loss, reverse rate = `rate_bps`, infinitely
    /// fast access links, 10 Gbit/s NICs with 1000-packet driver queues, Linux default hosts,
    /// [`UNCONGESTED_QUEUE_PACKETS`] elsewhere.
    #[must_use]
    pub fn new(rate_bps: u64, delay: Dur, queue: QueueLimit) -> Self {
        Dumbbell {
            seed: 1,
            duration: Dur::from_secs(30),
            sample_interval: Dur::from_millis(200),
            rate_bps,
            delay,
            bottleneck_delay_changes: Vec::new(),
            queue,
            bottleneck_at: BottleneckAt::Switch,
            aqm: None,
            loss: LossConfig::None,
            reverse_rate_bps: None,
            access_rate_bps: None,
            nic_rate_bps: Some(NIC_RATE_BPS),
            driver_queue: QueueLimit::Packets(DRIVER_QUEUE_PACKETS),
            uncongested_queue: QueueLimit::Packets(UNCONGESTED_QUEUE_PACKETS),
            sender_host: HostConfig::default(),
            receiver_host: HostConfig::default(),
            flow_hosts: BTreeMap::new(),
            flows: Vec::new(),
            probes: Vec::new(),
        }
    }

    /// Bytes in one bandwidth-delay product for a base RTT of `rtt`.
    #[must_use]
    pub fn bdp_bytes(rate_bps: u64, rtt: Dur) -> u64 {
        // rate·rtt/8, rounded to the nearest byte: (bits + 4e9) / 8e9 with bits = rate·ns.
        let bits = u128::from(rate_bps) * u128::from(rtt.as_nanos());
        u64::try_from((bits + 4_000_000_000) / 8_000_000_000).unwrap_or(u64::MAX)
    }

    /// Add a bulk flow with controller `cc` and access delay `access_delay`.
    pub fn add_flow(&mut self, cc: CcSpec, access_delay: Dur) -> &mut FlowConfig {
        let name = format!("flow{}", self.flows.len());
        let flow = FlowConfig::bulk(&name, NodeId(0), NodeId(0), cc);
        self.flows.push(DumbbellFlow { flow, access_delay });
        &mut self.flows.last_mut().expect("just pushed").flow
    }

    /// Give flow `flow`'s sending host its own model instead of [`Dumbbell::sender_host`].
    pub fn set_flow_host(&mut self, flow: usize, host: HostConfig) -> &mut Self {
        self.flow_hosts.insert(flow, host);
        self
    }

    /// The model of flow `flow`'s sending host.
    #[must_use]
    pub fn flow_host(&self, flow: usize) -> &HostConfig {
        self.flow_hosts.get(&flow).unwrap_or(&self.sender_host)
    }

    /// Add a ping probe of 64-byte packets every `interval`.
    pub fn add_ping(&mut self, interval: Dur) -> &mut ProbeConfig {
        let probe = ProbeConfig {
            size: 64,
            ..ProbeConfig::ping("Ping (ms) ICMP", NodeId(0), NodeId(0), interval)
        };
        self.probes.push(DumbbellProbe {
            probe,
            access_delay: Dur::ZERO,
        });
        &mut self.probes.last_mut().expect("just pushed").probe
    }

    /// The simulator configuration, laid out as the module documentation states.
    #[must_use]
    pub fn build(&self) -> SimConfig {
        let mut nodes = vec![
            NodeConfig {
                name: "left".into(),
                kind: NodeKind::Router,
                host: HostConfig::default(),
            },
            NodeConfig {
                name: "right".into(),
                kind: NodeKind::Router,
                host: HostConfig::default(),
            },
        ];
        let uncongested = QueueConfig::DropTail {
            limit: self.uncongested_queue,
        };
        let at_switch = self.bottleneck_at == BottleneckAt::Switch;
        let bottleneck_queue = self.aqm.clone().map_or(
            QueueConfig::DropTail { limit: self.queue },
            QueueConfig::Aqm,
        );
        let mut links = vec![
            LinkConfig {
                name: "bottleneck".into(),
                from: LEFT,
                to: RIGHT,
                rate_bps: at_switch.then_some(self.rate_bps),
                rate_shape: None,
                delay: self.delay,
                delay_changes: self.bottleneck_delay_changes.clone(),
                jitter: None,
                queue: if at_switch {
                    bottleneck_queue.clone()
                } else {
                    uncongested.clone()
                },
                loss: self.loss.clone(),
                monitor: at_switch,
            },
            LinkConfig {
                name: "bottleneck_reverse".into(),
                from: RIGHT,
                to: LEFT,
                rate_bps: Some(self.reverse_rate_bps.unwrap_or(self.rate_bps)),
                rate_shape: None,
                delay: self.delay,
                delay_changes: self.bottleneck_delay_changes.clone(),
                jitter: None,
                queue: uncongested.clone(),
                loss: LossConfig::None,
                monitor: false,
            },
        ];
        let driver = QueueConfig::DropTail {
            limit: self.driver_queue,
        };
        let sender_nic = match (self.nic_rate_bps, self.access_rate_bps) {
            (Some(n), Some(a)) => Some(n.min(a)),
            (n, a) => n.or(a),
        };
        let mut attach = |sender: String,
                          receiver: String,
                          access_delay: Dur,
                          sender_host: &HostConfig,
                          flow: bool| {
            #[expect(
                clippy::cast_possible_truncation,
                reason = "a dumbbell has a handful of nodes per flow"
            )]
            let s = NodeId(nodes.len() as u32);
            #[expect(
                clippy::cast_possible_truncation,
                reason = "a dumbbell has a handful of nodes per flow"
            )]
            let r = NodeId(nodes.len() as u32 + 1);
            let link = |name: String, from, to, rate_bps, delay, queue: &QueueConfig| {
                LinkConfig::plain(name, from, to, rate_bps, delay, queue.clone())
            };
            if flow && !at_switch {
                links.push(LinkConfig {
                    monitor: true,
                    ..link(
                        format!("{sender}->left"),
                        s,
                        LEFT,
                        Some(self.rate_bps),
                        access_delay,
                        &bottleneck_queue,
                    )
                });
            } else {
                links.push(link(
                    format!("{sender}->left"),
                    s,
                    LEFT,
                    sender_nic,
                    access_delay,
                    &driver,
                ));
            }
            links.push(link(
                format!("left->{sender}"),
                LEFT,
                s,
                self.access_rate_bps,
                access_delay,
                &uncongested,
            ));
            links.push(link(
                format!("right->{receiver}"),
                RIGHT,
                r,
                None,
                Dur::ZERO,
                &uncongested,
            ));
            links.push(link(
                format!("{receiver}->right"),
                r,
                RIGHT,
                self.nic_rate_bps,
                Dur::ZERO,
                &driver,
            ));
            nodes.push(NodeConfig {
                name: sender,
                kind: NodeKind::Host,
                host: sender_host.clone(),
            });
            nodes.push(NodeConfig {
                name: receiver,
                kind: NodeKind::Host,
                host: self.receiver_host.clone(),
            });
            (s, r)
        };
        let flows = self
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let (src, dst) = attach(
                    format!("s{i}"),
                    format!("r{i}"),
                    f.access_delay,
                    self.flow_host(i),
                    true,
                );
                FlowConfig {
                    src,
                    dst,
                    ..f.flow.clone()
                }
            })
            .collect();
        let probes = self
            .probes
            .iter()
            .enumerate()
            .map(|(j, p)| {
                let (src, dst) = attach(
                    format!("ps{j}"),
                    format!("pr{j}"),
                    p.access_delay,
                    &self.sender_host,
                    false,
                );
                ProbeConfig {
                    src,
                    dst,
                    ..p.probe.clone()
                }
            })
            .collect();
        SimConfig {
            seed: self.seed,
            duration: self.duration,
            sample_interval: self.sample_interval,
            nodes,
            links,
            flows,
            probes,
            udp: Vec::new(),
            elements: Vec::new(),
            wifi: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bottleneck_at_the_sender_is_its_nic() {
        let mut d = Dumbbell::new(100_000_000, Dur::from_millis(10), QueueLimit::Packets(167));
        d.loss = LossConfig::Bernoulli { p: 0.01 };
        d.bottleneck_at = BottleneckAt::Sender;
        d.add_flow(CcSpec::default_for("cubic").unwrap(), Dur::from_millis(1));
        d.add_ping(Dur::from_millis(100));
        let cfg = d.build();
        let (bn, nic, ping_nic) = (&cfg.links[0], &cfg.links[2], &cfg.links[6]);
        assert_eq!(
            (bn.rate_bps, bn.delay, bn.monitor),
            (None, Dur::from_millis(10), false)
        );
        assert_eq!(bn.loss, LossConfig::Bernoulli { p: 0.01 });
        assert_eq!(
            bn.queue,
            QueueConfig::DropTail {
                limit: QueueLimit::Packets(UNCONGESTED_QUEUE_PACKETS)
            }
        );
        assert_eq!(nic.name, "s0->left");
        assert_eq!(
            (nic.rate_bps, nic.delay, nic.monitor),
            (Some(100_000_000), Dur::from_millis(1), true)
        );
        assert_eq!(
            nic.queue,
            QueueConfig::DropTail {
                limit: QueueLimit::Packets(167)
            }
        );
        assert_eq!(ping_nic.name, "ps0->left");
        assert_eq!(
            (ping_nic.rate_bps, ping_nic.monitor),
            (Some(NIC_RATE_BPS), false)
        );
        assert_eq!(cfg.links.iter().filter(|l| l.monitor).count(), 1);
    }

    #[test]
    fn layout_matches_the_module_contract() {
        let mut d = Dumbbell::new(10_000_000, Dur::from_millis(10), QueueLimit::Packets(50));
        d.access_rate_bps = Some(1_000_000_000);
        d.reverse_rate_bps = Some(1_000_000);
        d.add_flow(CcSpec::default_for("reno").unwrap(), Dur::ZERO);
        d.add_flow(CcSpec::default_for("cubic").unwrap(), Dur::from_millis(5));
        d.add_ping(Dur::from_millis(100)).start = Time(7);
        d.probes[0].access_delay = Dur::from_millis(1);
        let cfg = d.build();
        let nodes: Vec<&str> = cfg.nodes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(
            nodes,
            ["left", "right", "s0", "r0", "s1", "r1", "ps0", "pr0"]
        );
        let links: Vec<(&str, u32, u32)> = cfg
            .links
            .iter()
            .map(|l| (l.name.as_str(), l.from.0, l.to.0))
            .collect();
        assert_eq!(
            links[..6],
            [
                ("bottleneck", 0, 1),
                ("bottleneck_reverse", 1, 0),
                ("s0->left", 2, 0),
                ("left->s0", 0, 2),
                ("right->r0", 1, 3),
                ("r0->right", 3, 1),
            ]
        );
        assert_eq!(cfg.links.len(), 2 + 4 * 3);
        let bn = &cfg.links[BOTTLENECK.0 as usize];
        assert!(bn.monitor);
        assert_eq!(
            bn.queue,
            QueueConfig::DropTail {
                limit: QueueLimit::Packets(50)
            }
        );
        assert_eq!(
            cfg.links[BOTTLENECK_REVERSE.0 as usize].rate_bps,
            Some(1_000_000)
        );
        for l in &cfg.links[1..] {
            assert!(!l.monitor);
            assert_eq!(l.loss, LossConfig::None);
            // Host→router links are NICs: driver queue; the NIC of a sender with an access
            // rate runs at the lower of the two.
            let nic = cfg.nodes[l.from.0 as usize].kind == NodeKind::Host;
            let limit = if nic {
                DRIVER_QUEUE_PACKETS
            } else {
                UNCONGESTED_QUEUE_PACKETS
            };
            assert_eq!(
                l.queue,
                QueueConfig::DropTail {
                    limit: QueueLimit::Packets(limit)
                },
                "{}",
                l.name
            );
            let access = l.from == LEFT || l.to == LEFT;
            let expect = if l.name == "bottleneck_reverse" {
                Some(1_000_000)
            } else if access {
                Some(1_000_000_000)
            } else if nic {
                Some(NIC_RATE_BPS)
            } else {
                None
            };
            assert_eq!(l.rate_bps, expect, "{}", l.name);
        }
        // Host models: senders (and probe senders) take the sender model or their flow's
        // override, receivers the receiver model.
        let mut d2 = d.clone();
        d2.sender_host.pacing_shift = 8;
        d2.receiver_host.tsq = false;
        d2.set_flow_host(
            1,
            HostConfig {
                pacing_shift: 7,
                ..HostConfig::default()
            },
        );
        let c2 = d2.build();
        let shifts: Vec<u8> = c2.nodes.iter().map(|n| n.host.pacing_shift).collect();
        assert_eq!(shifts, [10, 10, 8, 10, 7, 10, 8, 10]);
        let tsq: Vec<bool> = c2.nodes.iter().map(|n| n.host.tsq).collect();
        assert_eq!(tsq, [true, true, true, false, true, false, true, false]);
        let hosts: Vec<(u32, u32)> = cfg.flows.iter().map(|f| (f.src.0, f.dst.0)).collect();
        assert_eq!(hosts, [(2, 3), (4, 5)]);
        assert_eq!(cfg.flows[1].name, "flow1");
        let p = &cfg.probes[0];
        assert_eq!((p.src.0, p.dst.0, p.start), (6, 7, Time(7)));
        assert_eq!(cfg.links[2 + 4 * 2].delay, Dur::from_millis(1));
    }
}
