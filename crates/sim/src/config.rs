//! The simulator's input: a fully resolved, plain-data description of one run.
//!
//! Contract: a [`SimConfig`] names nodes, unidirectional links, flows and probes by index; it holds
//! no files, units or presets (the `cclab-lab` crate turns scenario files into this). Every value is
//! already in simulator units (bits per second, nanoseconds, bytes). [`SimConfig::validate`] checks
//! internal consistency and returns a [`ConfigError`] instead of panicking; `Simulation::new` calls
//! it. Routes are static and computed from the links (fewest hops, ties broken by lower link index).

use cclab_cc::{CcSpec, Dur, Time};
use thiserror::Error;

/// Default TCP payload per segment: 1448 bytes = 1500-byte IP packet − 20 (IP) − 20 (TCP) − 12
/// (timestamps option), as Linux sends on an Ethernet path with TCP timestamps.
pub const DEFAULT_MSS: u32 = 1448;
/// IP + TCP header bytes added to each segment's payload on the wire (20 + 20 + 12 timestamps).
pub const TCP_IP_HEADER_BYTES: u32 = 52;
/// Wire size of a pure ACK: IP + TCP + timestamps, plus SACK option space counted as 0 (ACK size
/// hardly matters on an uncongested reverse path).
pub const ACK_WIRE_BYTES: u32 = 52;
/// Linux initial window, `TCP_INIT_CWND` = 10 (include/net/tcp.h; RFC 6928).
pub const INITIAL_WINDOW: u32 = 10;

/// Index of a node in [`SimConfig::nodes`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(pub u32);
/// Index of a link in [`SimConfig::links`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LinkId(pub u32);
/// Index of a flow in [`SimConfig::flows`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FlowId(pub u32);
/// Index of a probe in [`SimConfig::probes`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ProbeId(pub u32);

/// One simulation run.
#[derive(Clone, Debug)]
pub struct SimConfig {
    /// Master seed; every random stream is derived from it and a component id.
    pub seed: u64,
    /// Simulated duration.
    pub duration: Dur,
    /// Sampling interval of the time series (Flent's step, 0.2 s by default).
    pub sample_interval: Dur,
    /// Hosts and routers.
    pub nodes: Vec<NodeConfig>,
    /// Unidirectional links.
    pub links: Vec<LinkConfig>,
    /// TCP flows.
    pub flows: Vec<FlowConfig>,
    /// Latency probes (ping).
    pub probes: Vec<ProbeConfig>,
}

/// A node.
#[derive(Clone, Debug)]
pub struct NodeConfig {
    /// Name used in outputs.
    pub name: String,
    /// Host (ends flows) or router (forwards only).
    pub kind: NodeKind,
}

/// What a node is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// An end host: sources and sinks flows and probes.
    Host,
    /// A router: forwards by static route.
    Router,
}

/// A unidirectional link `from → to` with a queue in front of it.
#[derive(Clone, Debug)]
pub struct LinkConfig {
    /// Name used in outputs (e.g. `"bottleneck"`).
    pub name: String,
    /// Transmitting node.
    pub from: NodeId,
    /// Receiving node.
    pub to: NodeId,
    /// Rate in bits per second; `None` = infinitely fast (a pure delay line, no queue).
    pub rate_bps: Option<u64>,
    /// One-way propagation delay.
    pub delay: Dur,
    /// Queue in front of the link (ignored when `rate_bps` is `None`).
    pub queue: QueueConfig,
    /// Loss applied to packets as they leave the link's queue (before propagation).
    pub loss: LossConfig,
    /// Whether the link's queue is reported in the results (time series and summary).
    pub monitor: bool,
}

/// Queue discipline in front of a link.
#[derive(Clone, Debug, PartialEq)]
pub enum QueueConfig {
    /// Drop-tail FIFO.
    DropTail {
        /// Capacity.
        limit: QueueLimit,
    },
}

/// Capacity of a drop-tail queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueLimit {
    /// At most this many packets queued (not counting the one being transmitted).
    Packets(u32),
    /// At most this many bytes queued (wire bytes).
    Bytes(u64),
}

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

/// Whether a flow paces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PacingMode {
    /// Pace if the controller asks for it (Linux without fq: BBR paces, CUBIC/Reno do not).
    #[default]
    Auto,
    /// Always pace (controller's rate, or Linux's 200 %/120 % of cwnd/srtt).
    On,
    /// Never pace.
    Off,
}

/// A TCP flow from `src` to `dst`.
#[derive(Clone, Debug)]
pub struct FlowConfig {
    /// Name used in outputs.
    pub name: String,
    /// Sending host.
    pub src: NodeId,
    /// Receiving host.
    pub dst: NodeId,
    /// Congestion controller.
    pub cc: CcSpec,
    /// When the sender starts.
    pub start: Time,
    /// When the application stops handing data to TCP (`None` = never).
    pub stop: Option<Time>,
    /// Bytes to transfer (`None` = infinite bulk). The flow-completion time is recorded.
    pub size: Option<u64>,
    /// Payload bytes per segment.
    pub mss: u32,
    /// Pacing.
    pub pacing: PacingMode,
    /// Receiver delayed-ACK timer (Linux `TCP_DELACK_MIN` 40 ms).
    pub delack_timeout: Dur,
    /// Receiver ACKs every `ack_every` full segments (RFC 5681 §4.2: 2).
    pub ack_every: u32,
    /// Initial window in segments (Linux `TCP_INIT_CWND` = 10, RFC 6928; `ip route ... initcwnd`).
    pub initial_window: u32,
    /// Record a per-event sender trace (every ACK, timeout and probe); costs memory
    /// proportional to the number of ACKs, so off by default.
    pub trace: bool,
}

impl FlowConfig {
    /// A bulk flow with Linux defaults.
    #[must_use]
    pub fn bulk(name: &str, src: NodeId, dst: NodeId, cc: CcSpec) -> Self {
        FlowConfig {
            name: name.to_owned(),
            src,
            dst,
            cc,
            start: Time::ZERO,
            stop: None,
            size: None,
            mss: DEFAULT_MSS,
            pacing: PacingMode::Auto,
            delack_timeout: Dur::from_millis(40),
            ack_every: 2,
            initial_window: INITIAL_WINDOW,
            trace: false,
        }
    }
}

/// A ping-like latency probe: `size`-byte packets every `interval` from `src` to `dst`, echoed back
/// immediately, without congestion control.
#[derive(Clone, Debug)]
pub struct ProbeConfig {
    /// Name used in outputs (Flent: "Ping (ms) ICMP").
    pub name: String,
    /// Sending host.
    pub src: NodeId,
    /// Echoing host.
    pub dst: NodeId,
    /// Interval between probes.
    pub interval: Dur,
    /// Wire size of each probe packet in bytes.
    pub size: u32,
    /// First probe.
    pub start: Time,
    /// No probe is sent at or after this time (`None` = until the end).
    pub stop: Option<Time>,
}

/// A configuration that cannot be simulated. Messages name the offending entity.
#[derive(Debug, Error, PartialEq)]
pub enum ConfigError {
    /// A node, link, flow or probe refers to something that does not exist.
    #[error("{what} refers to node {node}, but only {count} nodes exist")]
    NoSuchNode {
        /// Who refers.
        what: String,
        /// The index.
        node: u32,
        /// How many nodes exist.
        count: usize,
    },
    /// No route between two nodes.
    #[error("{what}: no route from node `{from}` to node `{to}`")]
    NoRoute {
        /// Who needs the route.
        what: String,
        /// Source node name.
        from: String,
        /// Destination node name.
        to: String,
    },
    /// A value is out of range.
    #[error("{what}: {problem}")]
    Invalid {
        /// Which entity and field.
        what: String,
        /// What is wrong.
        problem: String,
    },
}
