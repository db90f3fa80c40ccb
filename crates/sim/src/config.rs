//! The simulator's input: a fully resolved, plain-data description of one run.
//!
//! Contract: a [`SimConfig`] names nodes, unidirectional links, flows, probes and UDP sources by
//! index; it holds no files, units or presets (the `cclab-lab` crate turns scenario files into
//! this). Every value is already in simulator units (bits per second, nanoseconds, bytes).
//! [`SimConfig::validate`] checks
//! internal consistency and returns a [`ConfigError`] instead of panicking; `Simulation::new` calls
//! it. Routes are static and computed from the links (fewest hops, ties broken by lower link index).

use cclab_cc::{CcSpec, Dur, EcnMode, Time};
use thiserror::Error;

pub use crate::ids::{FlowId, LinkId, NodeId, ProbeId, UdpId};
pub use crate::net::loss::{LossConfig, ScriptedDrop};
pub use crate::queue::AqmConfig;
pub use crate::udp::{Periods, UdpConfig, UdpPattern};

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
    /// UDP sources without congestion control (cross traffic).
    pub udp: Vec<UdpConfig>,
    /// Middlebox elements on nodes' forwarding paths, in order (a node's elements run in the
    /// order they are listed here).
    pub elements: Vec<ElementConfig>,
    /// Wi-Fi BSSs: each makes some links the hops of a shared channel (see [`WifiConfig`]).
    pub wifi: Vec<WifiConfig>,
}

/// A Wi-Fi BSS: an access point and its stations sharing one channel, modelled by
/// [`crate::wifi::mac::Mac`]. Each station reaches the AP over its `uplink` and the AP reaches it
/// over its `downlink`: ordinary links of [`SimConfig::links`] (so routes cross them) that carry
/// no rate, delay, queue or loss of their own; a packet that takes one is queued in the MAC and
/// comes out at the far end when the MAC delivers it. A station that is a host sends through
/// the MAC as its NIC: its TX completions (TCP Small Queues) come with the Block Ack.
#[derive(Clone, Debug, PartialEq)]
pub struct WifiConfig {
    /// Name used in outputs.
    pub name: String,
    /// The channel, the stations' PHYs and the MAC's parameters (`mac.stations[i]` is
    /// `stations[i]`).
    pub mac: crate::wifi::mac::MacConfig,
    /// The access point's node.
    pub ap: NodeId,
    /// The stations, in `mac.stations` order.
    pub stations: Vec<WifiStation>,
}

/// A station of a [`WifiConfig`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WifiStation {
    /// Its node.
    pub node: NodeId,
    /// Its link to the AP (`node → ap`).
    pub uplink: LinkId,
    /// The AP's link to it (`ap → node`).
    pub downlink: LinkId,
}

/// A middlebox element on a node: every packet that reaches `node` over a link passes through
/// it (see [`crate::net`]).
#[derive(Clone, Debug, PartialEq)]
pub struct ElementConfig {
    /// Where it sits.
    pub node: NodeId,
    /// What it is.
    pub spec: crate::net::ElementSpec,
    /// Which packets it acts on (the others pass it by; default: all).
    pub select: crate::net::Selector,
}

/// A node.
#[derive(Clone, Debug)]
pub struct NodeConfig {
    /// Name used in outputs.
    pub name: String,
    /// Host (ends flows) or router (forwards only).
    pub kind: NodeKind,
    /// What the host does below TCP (ignored for routers).
    pub host: HostConfig,
}

/// Linux `sysctl_tcp_limit_output_bytes` default since ≈4.20/5.0: 1 MiB (`tcp_sk_init` in
/// `net/ipv4/tcp_ipv4.c`; unpaced sockets only since commit `c73e5807e4f6`, "tcp: tsq: no longer
/// use limit_output_bytes for paced flows"). Kernels from ≈6.16 use 4 MiB
/// ([`LIMIT_OUTPUT_BYTES_NEW`]).
pub const LIMIT_OUTPUT_BYTES: u64 = 1 << 20;
/// Linux `sysctl_tcp_limit_output_bytes` default from ≈6.16 (May 2025): 4 MiB.
pub const LIMIT_OUTPUT_BYTES_NEW: u64 = 4 << 20;

/// The Linux sender host model: sockets → TSQ gate → host qdisc → NIC (the host's egress link,
/// whose rate is the line rate and whose queue is the driver queue) → wire. TX completions on the
/// NIC release TSQ budget. Defaults are Linux's (`tcp_small_queue_check` and `tcp_tso_autosize`
/// in `net/ipv4/tcp_output.c`, `fq_init` in `net/sched/sch_fq.c`).
#[derive(Clone, Debug, PartialEq)]
pub struct HostConfig {
    /// TCP Small Queues (`tcp_small_queue_check`); Linux always has it.
    pub tsq: bool,
    /// The host's / driver's `sk_pacing_shift` for its sockets (Linux 10; Wi-Fi drivers 7 or 8).
    /// A controller may override it per socket (BBR-TAS).
    pub pacing_shift: u8,
    /// `sysctl_tcp_limit_output_bytes`: caps the TSQ budget of unpaced sockets only.
    pub limit_output_bytes: u64,
    /// Host queueing discipline between TCP and the NIC.
    pub qdisc: HostQdisc,
    /// TSO/GSO autosizing.
    pub tso: TsoConfig,
    /// Hypervisor CPU schedule (`None` = always running).
    pub cpu: Option<CpuSchedule>,
    /// A CFS bandwidth quota charged by the guest's work ([`crate::host::cpu::CfsClock`]);
    /// not together with `cpu`.
    pub cfs: Option<CfsBandwidth>,
    /// How a host with `cpu` or `cfs` works off what waited while it was descheduled
    /// ([`ResumeWork`]; default: all of it at the instant it runs again).
    pub resume: ResumeWork,
    /// Receive-side timing ([`crate::host::timing`]; `None` = ideal: every packet is processed
    /// the instant it arrives).
    pub timing: Option<crate::host::timing::HostTiming>,
    /// The host is a virtual machine whose NIC is virtio-net over vhost-net and a tap device
    /// ([`crate::host::virtio`]; `None` = the NIC is the first link itself).
    pub virtio: Option<VirtioConfig>,
}

/// A guest's virtio-net device, its host-side vhost-net worker and tap device
/// ([`crate::host::virtio`] has the model and its sources).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VirtioConfig {
    /// Descriptors of the TX virtqueue, one per skb (QEMU `tx_queue_size`, default 256).
    pub tx_ring: u32,
    /// Descriptors of the RX virtqueue, one per packet (QEMU `rx_queue_size`, default 256).
    pub rx_ring: u32,
    /// `napi_tx` (virtio_net module parameter, default on): TX completions are processed by
    /// the guest's TX NAPI after vhost has used the descriptor; off: `start_xmit` orphans the
    /// skb at the hand-off, so TSQ is released at once.
    pub napi_tx: bool,
    /// The tap device's queue, packets (its `tx_queue_len`: `TUN_READQ_SIZE` = 500 in
    /// `include/uapi/linux/if_tun.h`). Towards the guest, packets wait there while the RX
    /// virtqueue is full (`tun_net_xmit` drops beyond it); from the guest, vhost hands a
    /// packet on only while fewer than this many it handed on have not left the host's NIC.
    pub tap_queue: u32,
    /// From the guest's kick until an idle vhost worker takes the TX virtqueue's descriptors
    /// (the worker thread's wake-up on another host CPU).
    pub vhost_wakeup: Dur,
}

impl Default for VirtioConfig {
    fn default() -> Self {
        VirtioConfig {
            tx_ring: 256,
            rx_ring: 256,
            napi_tx: true,
            tap_queue: 500,
            vhost_wakeup: Dur::from_micros(20),
        }
    }
}

impl VirtioConfig {
    /// The longest `vhost_wakeup` accepted (exclusive).
    pub const MAX_VHOST_WAKEUP: Dur = Dur::from_secs(1);

    /// Check the values (rings and tap queue of at least one entry, wake-up below 1 s).
    ///
    /// # Errors
    /// A description of the first invalid value.
    pub fn validate(&self) -> Result<(), String> {
        if self.tx_ring == 0 || self.rx_ring == 0 {
            return Err("virtio rings need at least one descriptor".into());
        }
        if self.tap_queue == 0 {
            return Err("the tap queue needs room for at least one packet".into());
        }
        if self.vhost_wakeup >= Self::MAX_VHOST_WAKEUP {
            return Err(format!(
                "vhost wake-up must be below 1 s, got {} ns",
                self.vhost_wakeup.as_nanos()
            ));
        }
        Ok(())
    }
}

impl Default for HostConfig {
    fn default() -> Self {
        HostConfig {
            tsq: true,
            pacing_shift: cclab_cc::DEFAULT_PACING_SHIFT,
            limit_output_bytes: LIMIT_OUTPUT_BYTES,
            qdisc: HostQdisc::PfifoFast,
            tso: TsoConfig::default(),
            cpu: None,
            cfs: None,
            resume: ResumeWork::Instant,
            timing: None,
            virtio: None,
        }
    }
}

/// Largest accepted `sk_pacing_shift`: 2^-31 s is half a nanosecond, below one byte at any rate
/// a link can have, so larger shifts only ever leave the two-packet floor.
pub const MAX_PACING_SHIFT: u8 = 31;

/// `MAX_TCP_HEADER` on x86-64 Linux (`L1_CACHE_ALIGN(128 + MAX_HEADER)` = 320 bytes): the header
/// room TSO autosizing keeps free below `gso_max_size` (`sk_setup_caps` subtracts
/// `MAX_TCP_HEADER + 1`).
pub const MAX_TCP_HEADER: u32 = 320;

impl HostConfig {
    /// Check the values; the message names the field and the valid range.
    ///
    /// # Errors
    /// A description of the first invalid value.
    pub fn validate(&self) -> Result<(), String> {
        if self.pacing_shift > MAX_PACING_SHIFT {
            return Err(format!(
                "pacing_shift must be within 0..={MAX_PACING_SHIFT}, got {}",
                self.pacing_shift
            ));
        }
        if self.limit_output_bytes == 0 {
            return Err("limit_output_bytes must be positive".into());
        }
        let t = &self.tso;
        if t.gso_max_size <= MAX_TCP_HEADER + 1 || t.gso_max_size > 1 << 24 {
            return Err(format!(
                "tso.gso_max_size must be within {}..={} bytes, got {}",
                MAX_TCP_HEADER + 2,
                1 << 24,
                t.gso_max_size
            ));
        }
        if !(1..=65_535).contains(&t.min_tso_segs) {
            return Err(format!(
                "tso.min_tso_segs must be within 1..=65535, got {}",
                t.min_tso_segs
            ));
        }
        if let HostQdisc::Fq(fq) = &self.qdisc {
            if fq.limit == 0 || fq.flow_limit == 0 {
                return Err("fq limit and flow_limit must be positive".into());
            }
            if fq.quantum == 0 || fq.quantum > 1 << 20 {
                return Err(format!(
                    "fq quantum must be within 1..=1048576 bytes, got {}",
                    fq.quantum
                ));
            }
            if fq.initial_quantum > 1 << 24 {
                return Err(format!(
                    "fq initial_quantum must be at most 16 MiB, got {}",
                    fq.initial_quantum
                ));
            }
            if fq.horizon == Dur::ZERO {
                return Err("fq horizon must be positive".into());
            }
        }
        if let Some(c) = &self.cpu {
            c.validate()?;
        }
        if let Some(v) = &self.virtio {
            v.validate()?;
        }
        if let Some(c) = &self.cfs {
            if self.cpu.is_some() {
                return Err("a host has either a CPU schedule or a CFS quota, not both".into());
            }
            c.validate()?;
        }
        if let ResumeWork::Softirq { cost } = self.resume {
            let Some(slice) = self.cpu.map(|c| c.timeslice).or(self.cfs.map(|c| c.quota)) else {
                return Err("resume work needs a CPU schedule or a CFS quota".into());
            };
            if cost == Dur::ZERO || cost >= slice {
                return Err(format!(
                    "a packet's CPU time at resume must be positive and below the timeslice \
                     ({} ns), got {} ns",
                    slice.as_nanos(),
                    cost.as_nanos()
                ));
            }
        }
        Ok(())
    }
}

impl CpuSchedule {
    /// A CFS quota of a guest that always has work: `quota` at the start of every `period`
    /// (both positive, `quota` ≤ `period` ≤ 2^53 ns). [`CpuSchedule::period`] gives `period`
    /// back exactly.
    #[must_use]
    pub fn from_quota(quota: Dur, period: Dur) -> Self {
        #[expect(
            clippy::cast_precision_loss,
            reason = "both are below 2^53 ns (104 days), exact in f64"
        )]
        let share = quota.as_nanos() as f64 / period.as_nanos() as f64;
        CpuSchedule {
            timeslice: quota,
            share,
            offset: Dur::ZERO,
        }
    }

    /// Check the values (share in (0, 1], positive timeslice, a period that fits in time).
    ///
    /// # Errors
    /// A description of the first invalid value.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.share > 0.0 && self.share <= 1.0) {
            return Err(format!(
                "cpu share must be within (0, 1], got {}",
                self.share
            ));
        }
        if self.timeslice == Dur::ZERO {
            return Err("cpu timeslice must be positive".into());
        }
        #[expect(
            clippy::cast_precision_loss,
            reason = "the timeslice is exact in f64 below 2^53 ns (104 days); a larger one is rejected as a too-long period all the same"
        )]
        let period = self.timeslice.as_nanos() as f64 / self.share;
        if period.is_nan() || period >= 1e18 {
            return Err(format!(
                "cpu period timeslice/share = {period:e} ns is too long (share too small)"
            ));
        }
        Ok(())
    }

    /// The period `timeslice / share` in nanoseconds, rounded to the nearest nanosecond (never
    /// below the timeslice). The host runs for exactly `timeslice` of each period, so its
    /// effective share is `timeslice / period`, which differs from `share` by less than one
    /// nanosecond per period. Share 1.0 gives period = timeslice: always running.
    #[must_use]
    #[expect(
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "validation keeps share positive and the period below 1e18 ns, so the rounded quotient is a non-negative value that fits a u64; a timeslice is exact in f64 below 2^53 ns (104 days)"
    )]
    pub fn period(&self) -> Dur {
        let ts = self.timeslice.as_nanos();
        let p = (ts as f64 / self.share).round() as u64;
        Dur(p.max(ts))
    }
}

/// Host queueing discipline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum HostQdisc {
    /// `pfifo_fast`: one FIFO, which merges with the driver queue (the egress link's queue).
    /// Pacing controllers pace inside TCP (`SK_PACING_NEEDED`), others are unpaced.
    #[default]
    PfifoFast,
    /// `sch_fq`: per-flow queues released at max(EDT stamp, flow's rate time), round robin with
    /// a quantum between flows. Every socket is paced (fq sets `SK_PACING_FQ`).
    Fq(FqConfig),
}

/// `sch_fq` parameters (Linux `net/sched/sch_fq.c` `fq_init` defaults).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FqConfig {
    /// Packets in the whole qdisc (`limit`, 10000). fq counts skbs: a TSO burst is one.
    pub limit: u32,
    /// Packets (skbs) per flow (`flow_limit`, 100).
    pub flow_limit: u32,
    /// Bytes a flow may send per round-robin turn (`quantum`, 2·MTU).
    pub quantum: u32,
    /// Quantum of a new flow (`initial_quantum`, 10·MTU).
    pub initial_quantum: u32,
    /// Packets with an EDT stamp further than this in the future are dropped (`horizon`, 10 s).
    pub horizon: Dur,
}

impl Default for FqConfig {
    fn default() -> Self {
        FqConfig {
            limit: 10_000,
            flow_limit: 100,
            quantum: 2 * 1514,
            initial_quantum: 10 * 1514,
            horizon: Dur::from_secs(10),
        }
    }
}

/// Which Linux TSO autosizing rule (`tcp_tso_autosize` in `net/ipv4/tcp_output.c`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum TsoRule {
    /// Before 5.18: bytes = min(pacing_rate >> shift, gso_max_size − 1 − MAX_TCP_HEADER).
    Pre518,
    /// Since 5.18 (commit `65466904b015`): also + gso_max_size >> ⌊min_rtt_µs / 512⌋.
    #[default]
    Post518,
}

/// TSO/GSO autosizing (`tcp_tso_autosize`, `tcp_tso_segs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TsoConfig {
    /// TSO/GSO on (Linux default on virtually every NIC).
    pub enabled: bool,
    /// Autosizing rule.
    pub rule: TsoRule,
    /// `sk_gso_max_size` (64 KiB without BIG TCP).
    pub gso_max_size: u32,
    /// `sysctl_tcp_min_tso_segs` (2).
    pub min_tso_segs: u32,
}

impl Default for TsoConfig {
    fn default() -> Self {
        TsoConfig {
            enabled: true,
            rule: TsoRule::Post518,
            gso_max_size: 65_536,
            min_tso_segs: 2,
        }
    }
}

/// A host that a hypervisor runs for `timeslice` out of every `timeslice / share`
/// (the hypervisor model of the 2BRobust study of BBR under sender CPU contention). While descheduled nothing runs on it: timers wait, arriving packets
/// queue in the NIC, nothing is handed to the NIC; all of it is processed when it runs again.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CpuSchedule {
    /// How long the host runs in each period.
    pub timeslice: Dur,
    /// Fraction of time the host runs, in (0, 1].
    pub share: f64,
    /// Where in its period the host is at time 0 (0 = just starting to run).
    pub offset: Dur,
}

/// How a descheduled host works off, when it runs again, what waited for it (the engine's
/// `resume`, `engine/mod.rs`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ResumeWork {
    /// All of it, in the order it came due, at the instant the host runs again: its work takes
    /// no time (the source's model).
    #[default]
    Instant,
    /// As Linux's softirqs do (`net/core/dev.c` `net_rx_action`, `kernel/softirq.c`
    /// `__do_softirq`, which runs the pending softirqs in order of their number,
    /// `include/linux/interrupt.h`: HI 0, TIMER 1, NET_TX 2, NET_RX 3, …, TASKLET 6, …,
    /// HRTIMER 8): the timer wheel's timers that expired (TIMER: the retransmission, loss
    /// probe, reordering and delayed-ACK timers, `timer_list`s) run first; then the packets
    /// that waited are received one after another, each taking `cost` of CPU time, in NET_RX
    /// rounds of at most [`NETDEV_BUDGET`] packets or [`NETDEV_BUDGET_USECS`]; what each packet
    /// triggers (an ACK's sends, `tcp_data_snd_check`) happens as it is received, and the
    /// pacing hrtimer, TSQ's tasklet and qdisc wake-ups that waited run at the end of a round
    /// (HRTIMER and TASKLET come after NET_RX). Every data segment the host sends, at resume
    /// or not (an ACK's, a timer's, TSQ's), takes `cost` of CPU time too: the host is busy
    /// for it. Work that comes due meanwhile joins the backlog.
    Softirq {
        /// CPU time one packet of the backlog, or one data segment sent, takes.
        cost: Dur,
    },
}

/// Packets a NET_RX softirq round receives at most (`net.core.netdev_budget`, default 300,
/// `net/core/dev.c` `net_rx_action`; each NAPI poll takes at most its weight, 64,
/// `NAPI_POLL_WEIGHT`, but a guest with one RX queue is polled again within the round).
pub const NETDEV_BUDGET: u64 = 300;
/// Longest NET_RX softirq round (`net.core.netdev_budget_usecs`, default 2000 µs = 2 ms /
/// `HZ`, `net/core/dev.c` `net_rx_action`'s `time_limit`).
pub const NETDEV_BUDGET_USECS: Dur = Dur::from_micros(2000);

impl ResumeWork {
    /// Packets one NET_RX round takes at `cost` each: the budget, or fewer when they would
    /// take longer than the round's time limit (at least one).
    #[must_use]
    pub fn round_packets(cost: Dur) -> u64 {
        (NETDEV_BUDGET_USECS.as_nanos() / cost.as_nanos().max(1)).clamp(1, NETDEV_BUDGET)
    }
}

/// A CFS bandwidth quota (cgroup v2 `cpu.max`) of a guest that runs only when it has work:
/// each packet it receives and each data segment it sends costs `cost` of CPU time, charged
/// against `quota` per `period` ([`crate::host::cpu::CfsClock`]). A guest that always has
/// work is a [`CpuSchedule`] of `quota` every `period` instead.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CfsBandwidth {
    /// CPU time per period.
    pub quota: Dur,
    /// The period.
    pub period: Dur,
    /// CPU time per packet received and per data segment sent.
    pub cost: Dur,
}

impl CfsBandwidth {
    /// The longest period (Linux `max_cfs_quota_period`, kernel/sched/core.c).
    pub const MAX_PERIOD: Dur = Dur::from_secs(1);

    /// The schedule of a guest that always has work under this quota: the quota at the start
    /// of every period.
    #[must_use]
    pub fn schedule(&self) -> CpuSchedule {
        CpuSchedule::from_quota(self.quota, self.period)
    }

    /// Check the values (a positive quota up to the period, a period up to 1 s).
    ///
    /// # Errors
    /// A description of the first invalid value.
    pub fn validate(&self) -> Result<(), String> {
        if self.quota == Dur::ZERO || self.quota > self.period {
            return Err("a CFS quota must be positive and at most its period".into());
        }
        if self.period > Self::MAX_PERIOD {
            return Err("a CFS period must be at most 1 s".into());
        }
        Ok(())
    }
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
    /// A rate that changes over time (a schedule or a mahimahi trace, `net/rate/`) instead of
    /// the constant `rate_bps`, which then holds its nominal rate
    /// ([`crate::net::rate::RateShape::nominal_bps`], e.g. for an AQM's parameters). Needs
    /// `rate_bps`. `None`: the constant rate.
    pub rate_shape: Option<crate::net::rate::RateShape>,
    /// One-way propagation delay (from time 0 until the first of `delay_changes`).
    pub delay: Dur,
    /// Changes of the propagation delay during the run: from each time on, the delay is the
    /// given value (a change applies to the packets whose serialisation ends at or after its
    /// time; the delay line stays FIFO, see `link.rs`). Times strictly increasing and within
    /// the run, delays at most [`MAX_LINK_DELAY`]. Empty: the delay never changes.
    pub delay_changes: Vec<(Time, Dur)>,
    /// A random extra delay per packet on top of the propagation delay (netem's `delay TIME
    /// JITTER` on the link), drawn when the packet's serialisation ends; `None`: none. Needs a
    /// rate and a drop-tail queue.
    pub jitter: Option<LinkJitter>,
    /// Queue in front of the link (ignored when `rate_bps` is `None`).
    pub queue: QueueConfig,
    /// Loss applied to packets as they leave the link's queue (before propagation).
    pub loss: LossConfig,
    /// Whether the link's queue is reported in the results (time series and summary).
    pub monitor: bool,
}

/// A link's jitter ([`LinkConfig::jitter`]): the same draws as the `jitter` element
/// ([`crate::net::Jitter`]), applied in the link's delay line, so a jittered link needs no
/// event per packet beyond its arrivals.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkJitter {
    /// What each packet's extra delay is drawn from.
    pub dist: crate::net::JitterDist,
    /// Correlation of successive uniform draws, in [0, 1] (netem's `CORRELATION`).
    pub correlation: f64,
    /// Packets may overtake each other (netem's default); `false`: a packet never arrives
    /// before the one sent ahead of it.
    pub reorder: bool,
}

impl LinkConfig {
    /// A link of constant rate and delay behind `queue`, with no rate shape, delay changes,
    /// jitter or loss, not monitored: what the presets build and then adjust field by field.
    #[must_use]
    pub fn plain(
        name: String,
        from: NodeId,
        to: NodeId,
        rate_bps: Option<u64>,
        delay: Dur,
        queue: QueueConfig,
    ) -> Self {
        LinkConfig {
            name,
            from,
            to,
            rate_bps,
            rate_shape: None,
            delay,
            delay_changes: Vec::new(),
            jitter: None,
            queue,
            loss: LossConfig::None,
            monitor: false,
        }
    }

    /// The propagation delay in force at `t`: `delay` before the first of `delay_changes`,
    /// then the latest change at or before `t`.
    #[must_use]
    pub fn delay_at(&self, t: Time) -> Dur {
        self.delay_changes
            .iter()
            .take_while(|&&(c, _)| c <= t)
            .last()
            .map_or(self.delay, |&(_, d)| d)
    }
}

/// Largest propagation delay a [`LinkConfig::delay_changes`] entry may set: 10 s.
pub const MAX_LINK_DELAY: Dur = Dur::from_secs(10);

/// Queue discipline in front of a link.
#[derive(Clone, Debug, PartialEq)]
pub enum QueueConfig {
    /// Drop-tail FIFO.
    DropTail {
        /// Capacity.
        limit: QueueLimit,
    },
    /// An active queue management discipline (`queue/`), with its own limits.
    Aqm(AqmConfig),
}

/// Capacity of a drop-tail queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueLimit {
    /// At most this many packets queued (not counting the one being transmitted).
    Packets(u32),
    /// At most this many bytes queued (wire bytes).
    Bytes(u64),
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

/// How a TCP sender decides that a segment is lost before its retransmission timer fires.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LossDetection {
    /// RACK (RFC 8985 §6; Linux `tcp_rack_detect_loss`, on by default since 4.18): a segment
    /// sent more than RACK RTT + reordering window before one already delivered is lost.
    #[default]
    Rack,
    /// RFC 6675 as ns-3 implements it: a segment is lost once `DupThresh` (3) segments above
    /// it are SACKed (§4 `IsLost`, ns-3 `TcpTxBuffer::IsLost`); outside a recovery the third
    /// duplicate ACK (an ACK that SACKs new data, §2) marks the first unacknowledged segment
    /// lost (§5 step 1, `TcpSocketBase::DupAck`). A retransmission is never
    /// found lost again before the timeout (`NextSeg` rule 1 takes segments not yet
    /// retransmitted).
    DupThresh,
}

/// How the retransmission timeout is computed from SRTT and RTTVAR.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RtoRule {
    /// Linux `tcp_set_rto`: RTO = SRTT + max(4·RTTVAR, `rto_min`), at most 120 s.
    #[default]
    Linux,
    /// RFC 6298 §2.3–2.5 as ns-3 computes it: RTO = max(SRTT + max(G, 4·RTTVAR), `rto_min`)
    /// with the clock granularity G = 1 ms (`TcpSocketBase::EstimateRtt`, attribute
    /// `ClockGranularity`); each timeout doubles it up to 60 s (`TcpSocketBase::ReTxTimeout`),
    /// and every ACK of new data recomputes it from the estimate, ending the backoff, and
    /// restarts the timer, which an ACK that only SACKs does not (`TcpSocketBase::NewAck`).
    Rfc6298,
}

/// The rules of a TCP implementation that differ between the stacks cclab models (the
/// scenario key `stack` picks a set; each rule also has a key of its own for ablations).
/// [`TcpRules::LINUX`] is the default; [`TcpRules::NS3`] is ns-3.37's `TcpSocketBase`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpRules {
    /// Loss detection between timeouts.
    pub loss_detection: LossDetection,
    /// Tail-loss probes (RFC 8985 §7, Linux `tcp_schedule_loss_probe`).
    pub tlp: bool,
    /// How the RTO follows the RTT estimate.
    pub rto_rule: RtoRule,
    /// The RTO's floor (Linux `TCP_RTO_MIN` 200 ms; ns-3 `TcpSocketBase::MinRto` 1 s).
    pub rto_min: Dur,
    /// RTT samples: `Dur::ZERO` takes them from each segment's send time (Linux, microsecond
    /// clock); a positive value takes one sample per ACK of new data from its timestamp echo
    /// on a clock of this granularity, now − (TSecr rounded down to the clock), and none when
    /// the first unacknowledged segment was retransmitted (ns-3: `TcpOptionTS::NowToTsValue`
    /// counts milliseconds; `TcpSocketBase::EstimateRtt` uses the echo whenever timestamps are
    /// on, but only when the oldest entry of its send history was never retransmitted).
    pub ts_clock: Dur,
    /// The receiver starts in quick-ACK mode (Linux `tcp_incr_quickack`: the first 16 ACKs
    /// and after out-of-order data are immediate); ns-3's receiver has no quick-ACK mode
    /// (`TcpSocketBase::ReceivedData` delays every in-order segment that does not complete
    /// `DelAckCount`).
    pub quickack: bool,
    /// The receiver compresses SACKs (Linux `tcp_sack_compress`, since 4.19); ns-3 ACKs every
    /// out-of-order segment at once (`TcpSocketBase::ReceivedData`).
    pub sack_compression: bool,
    /// The socket uses its host's TCP Small Queues and TSO ([`HostConfig::tsq`],
    /// [`HostConfig::tso`]); ns-3 has neither (`TcpSocketBase::SendPendingData` hands each
    /// segment to IP as soon as the window allows).
    pub host_offloads: bool,
    /// What the controller gets as an ACK's RTT and as the connection's minimum RTT.
    pub cc_rtt: CcRtt,
}

/// The RTT a controller sees ([`TcpRules::cc_rtt`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CcRtt {
    /// The ACK's own sample (Linux `ca_rtt_us`), and the windowed minimum of the samples.
    #[default]
    Sample,
    /// The smoothed RTT after the ACK's sample, and the minimum of the smoothed RTT: ns-3.37's
    /// `TcpSocketBase::EstimateRtt` sets `m_lastRtt` (the `rtt` of `PktsAcked`, read by
    /// `TcpBbr`, `TcpVegas` and HyStart) and `m_minRtt` from `m_rtt->GetEstimate()` (ns-3.40
    /// changed `m_lastRtt` to the sample).
    Smoothed,
}

impl TcpRules {
    /// Linux's rules (v6.x `net/ipv4/`).
    pub const LINUX: TcpRules = TcpRules {
        loss_detection: LossDetection::Rack,
        tlp: true,
        rto_rule: RtoRule::Linux,
        rto_min: Dur::from_millis(200),
        ts_clock: Dur::ZERO,
        quickack: true,
        sack_compression: true,
        host_offloads: true,
        cc_rtt: CcRtt::Sample,
    };
    /// ns-3.37's `TcpSocketBase` with its defaults (`src/internet/model/tcp-socket-base.cc`).
    /// Besides these rules an ns-3 flow has no undo and no F-RTO ([`FlowConfig::undo`],
    /// [`FlowConfig::frto`]) and a 200 ms delayed-ACK timer ([`FlowConfig::delack_timeout`],
    /// attribute `DelAckTimeout`), which the scenario's `stack` key sets with these.
    pub const NS3: TcpRules = TcpRules {
        loss_detection: LossDetection::DupThresh,
        tlp: false,
        rto_rule: RtoRule::Rfc6298,
        rto_min: Dur::from_secs(1),
        ts_clock: Dur::from_millis(1),
        quickack: false,
        sack_compression: false,
        host_offloads: false,
        cc_rtt: CcRtt::Smoothed,
    };
}

impl Default for TcpRules {
    fn default() -> Self {
        TcpRules::LINUX
    }
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
    /// Rate at which the application hands payload to TCP, bit/s, like iperf3 `-b` (`None` =
    /// bulk: everything at once). It writes one MSS at a time: segment `k` becomes available
    /// `k·mss·8/rate` s (whole nanoseconds, rounded down) after the application starts.
    /// Combines with `size` (stop after `size` bytes) and `stop` (what was written by then is
    /// still delivered).
    pub app_rate_bps: Option<u64>,
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
    /// The receiver's advertised window in bytes (RFC 9293 §3.8.6): the sender keeps new data
    /// within SND.UNA + `rcv_wnd` (Linux `tcp_snd_wnd_test`). A fixed window, not auto-tuned
    /// (Linux grows its advertisement with `tcp_rcv_space_adjust`); `None` = the receiver never
    /// limits the sender.
    pub rcv_wnd: Option<u64>,
    /// A receiving application that reads at a limited rate from a receive buffer whose free
    /// space sets the advertised window ([`crate::tcp::receiver::rcvbuf`]); `None`: the
    /// application reads every byte as it arrives and the window is `rcv_wnd`. Exclusive with
    /// `rcv_wnd`.
    pub reader: Option<ReaderConfig>,
    /// DSCP code point carried by the flow's segments and ACKs (RFC 2474; 0 = best effort).
    pub dscp: u8,
    /// ECN use: off (Not-ECT, Linux `tcp_ecn` = 0 towards this peer), classic (RFC 3168,
    /// ECT(0)) or L4S (ECT(1), Accurate ECN). A controller that requires a mode (TCP Prague:
    /// L4S) overrides it ([`cclab_cc::CongestionControl::ecn_requirement`]).
    pub ecn: EcnMode,
    /// Record a per-event sender trace (every ACK, timeout and probe); costs memory
    /// proportional to the number of ACKs, so off by default.
    pub trace: bool,
    /// With `trace`: also record every skb handed below TCP (`xmit` rows) and every data
    /// segment's TX completion on the NIC (`tx_done` rows, at the moment its serialisation
    /// ends). Costs a row per packet, so off by default.
    pub trace_tx: bool,
    /// Undo of spurious window reductions (Linux `tcp_try_undo_*`: DSACKs report every
    /// retransmission of an episode unneeded, or none was made); Linux always has it.
    pub undo: bool,
    /// F-RTO, RFC 5682 (Linux `net.ipv4.tcp_frto`, default 2: on, SACK-enhanced).
    pub frto: bool,
    /// RACK's reordering window grows with DSACKs (RFC 8985 §6.2 step 4, Linux
    /// `tcp_rack_update_reo_wnd`); off = static min_RTT/4 (Linux `net.ipv4.tcp_recovery` bit
    /// `TCP_RACK_STATIC_REO_WND`, default clear).
    pub rack_reo_adapt: bool,
    /// Open the connection with a three-way handshake ([`crate::tcp::handshake`]): data
    /// starts when the SYN-ACK arrives, one round trip after `start`, with SRTT seeded from
    /// that round trip. Off here (the simulator's API keeps the sender that starts sending at
    /// `start`); scenario files turn it on by default.
    pub handshake: bool,
    /// With `handshake`: TCP Fast Open (RFC 7413), the client holding a cookie from an earlier
    /// connection: a transfer of one segment that fits in the SYN's data space
    /// ([`crate::tcp::handshake::syn_data_space`]) rides on the SYN and is acknowledged by the
    /// SYN-ACK.
    pub fast_open: bool,
    /// Restart after idle (Linux `net.ipv4.tcp_slow_start_after_idle`, default 1): when the
    /// application writes after everything sent was acknowledged and the socket sent nothing
    /// for longer than the RTO, cwnd halves once per RTO of idleness, not below the restart
    /// window min(IW, cwnd) (`tcp_cwnd_restart`, the decay of RFC 2861 §3; RFC 5681 §4.1 goes
    /// straight to the restart window). Controllers that set cwnd themselves (BBR) are exempt,
    /// as in `tcp_slow_start_after_idle_check`.
    pub slow_start_after_idle: bool,
    /// A request/response workload ([`crate::tcp::exchange`]): the receiver's host is the
    /// client, sending requests; the sender answers each with a response. `None`: the sender's
    /// application writes as `size`/`app_rate_bps` say.
    pub requests: Option<RequestConfig>,
    /// The transport: Linux-like TCP (the default) or QUIC ([`crate::quic`]). Both run the same
    /// controller through the same transport kit.
    pub transport: Transport,
    /// TCP rules that differ between implementations (loss detection, TLP, RTO, RTT clock,
    /// quick-ACK); Linux's by default.
    pub tcp: TcpRules,
}

/// A flow's transport protocol.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Transport {
    /// The Linux TCP model ([`crate::tcp`]).
    #[default]
    Tcp,
    /// QUIC after RFC 9000/9002 with quicly's defaults ([`crate::quic`]). A QUIC flow ignores
    /// `mss` (its packets are [`QuicConfig::datagram_bytes`] long), `delack_timeout`,
    /// `ack_every`, `undo`, `frto`, `rack_reo_adapt`, `slow_start_after_idle` and `handshake`
    /// (the connection starts with 1-RTT keys, as quicly's simulator does); it does not support
    /// `app_rate_bps`, `rcv_wnd`, `fast_open` or `requests` (the configuration check says so).
    Quic(QuicConfig),
}

impl Transport {
    /// Names accepted in scenario files, in variant order.
    pub const NAMES: [&'static str; 2] = ["tcp", "quic"];

    /// The transport's name, as in [`Transport::NAMES`].
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Transport::Tcp => "tcp",
            Transport::Quic(_) => "quic",
        }
    }
}

/// A QUIC flow's options ([`crate::quic`]); the defaults are quicly's and its simulator's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QuicConfig {
    /// UDP payload bytes of a full packet (quicly's simulator: 1280, the QUIC minimum of
    /// RFC 9000 §14.1).
    pub datagram_bytes: u32,
    /// IP and UDP header bytes added to every datagram on the wire. quicly's simulator counts
    /// none (0, the default); 28 is IPv4 + UDP, 48 IPv6 + UDP.
    pub ip_udp_overhead: u32,
    /// Bytes of every full packet that are not stream payload (header, AEAD tag, STREAM frame
    /// header): [`crate::quic::FRAMING_BYTES`] by default.
    pub framing_bytes: u32,
    /// The receiver's max_ack_delay (RFC 9000 §18.2, quicly `QUICLY_DEFAULT_MAX_ACK_DELAY`:
    /// 25 ms); the sender adds it to the PTO.
    pub max_ack_delay: Dur,
    /// The receiver acknowledges every this many ack-eliciting packets at once (RFC 9000
    /// §13.2.2: 2).
    pub ack_eliciting_threshold: u32,
    /// Granularity of the clock the QUIC endpoints see: every time they are given is rounded
    /// down to a multiple of it and every deadline they set up to one, so RTT samples, timers
    /// and the controller's `now` all move in these steps (1 ms reproduces quicly, whose whole
    /// stack reads a millisecond clock; default 1 ns, the simulator's own resolution).
    pub clock_granularity: Dur,
    /// RTT assumed before the first sample (quicly `QUICLY_DEFAULT_INITIAL_RTT`: 66 ms;
    /// RFC 9002 §6.2.2 suggests 333 ms).
    pub initial_rtt: Dur,
}

impl Default for QuicConfig {
    fn default() -> Self {
        QuicConfig {
            datagram_bytes: 1280,
            ip_udp_overhead: 0,
            framing_bytes: crate::quic::FRAMING_BYTES,
            max_ack_delay: Dur::from_millis(25),
            ack_eliciting_threshold: 2,
            clock_granularity: Dur(1),
            initial_rtt: Dur::from_millis(66),
        }
    }
}

impl QuicConfig {
    /// Stream payload bytes of a full packet.
    #[must_use]
    pub fn payload_bytes(&self) -> u32 {
        self.datagram_bytes - self.framing_bytes
    }
}

/// Linux `tcp_rmem[1]` (`net.ipv4.tcp_rmem` = 4096 131072 6291456 since v4.19): a socket's
/// initial `sk_rcvbuf` (`tcp_init_sock`).
pub const TCP_RMEM_DEFAULT: u64 = 131_072;
/// Linux `tcp_rmem[2]`: the largest buffer auto-tuning may reach; it sets the window scale of
/// sockets whose buffer is not locked (`tcp_select_initial_window`).
pub const TCP_RMEM_MAX: u64 = 6_291_456;
/// Default read size of a [`ReaderConfig`]: iperf3's TCP block (`DEFAULT_TCP_BLKSIZE`,
/// 128 KiB).
pub const DEFAULT_READ_CHUNK: u64 = 131_072;

/// A receiving application slower than the network ([`FlowConfig::reader`]): it reads at most
/// `chunk` bytes at a time from the receive buffer, then sleeps for as long as those bytes take
/// at `rate_bps`; a read that finds the buffer empty blocks until data arrives (`SO_RCVLOWAT` =
/// 1). The receive buffer's free space sets the advertised window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReaderConfig {
    /// Read rate, bit/s.
    pub rate_bps: u64,
    /// Largest read, bytes (≥ 1).
    pub chunk: u64,
    /// The receive buffer (`sk_rcvbuf`, bytes; `setsockopt(SO_RCVBUF, x)` sets 2·x) and locked
    /// against auto-tuning, as `SO_RCVBUF` does; `None`: Linux's default [`TCP_RMEM_DEFAULT`],
    /// not locked (auto-tuning, `tcp_rcv_space_adjust`, is not modelled, so it stays there).
    pub rcvbuf: Option<u64>,
}

impl ReaderConfig {
    /// A reader at `rate_bps` with the default read size and buffer.
    #[must_use]
    pub fn at_rate(rate_bps: u64) -> Self {
        ReaderConfig {
            rate_bps,
            chunk: DEFAULT_READ_CHUNK,
            rcvbuf: None,
        }
    }
}

/// A request/response workload on one flow ([`crate::tcp::exchange`]).
#[derive(Clone, Debug, PartialEq)]
pub struct RequestConfig {
    /// Payload bytes of each response, one per exchange (so their number is the number of
    /// exchanges).
    pub responses: Vec<u64>,
    /// Payload bytes of a request: 1..=mss (a request is one segment).
    pub request_size: u32,
    /// The client's pause between receiving a whole response and sending the next request.
    pub think_time: Dur,
    /// All exchanges on one connection; `false`: a new connection (with the flow's
    /// `handshake`) per exchange.
    pub persistent: bool,
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
            app_rate_bps: None,
            mss: DEFAULT_MSS,
            pacing: PacingMode::Auto,
            delack_timeout: Dur::from_millis(40),
            ack_every: 2,
            initial_window: INITIAL_WINDOW,
            rcv_wnd: None,
            reader: None,
            dscp: 0,
            ecn: EcnMode::Off,
            trace: false,
            trace_tx: false,
            undo: true,
            frto: true,
            rack_reo_adapt: true,
            handshake: false,
            fast_open: false,
            slow_start_after_idle: true,
            requests: None,
            transport: Transport::Tcp,
            tcp: TcpRules::LINUX,
        }
    }
}

/// A ping-like latency probe: `size`-byte packets every `interval` from `src` to `dst`, echoed back
/// immediately, without congestion control.
#[derive(Clone, Debug)]
pub struct ProbeConfig {
    /// Name used in outputs (Flent: "Ping (ms) ICMP").
    pub name: String,
    /// ICMP echo or UDP round trip (both are answered at once by the destination host; the kind
    /// and the DSCP class are what queues may tell apart).
    pub kind: ProbeKind,
    /// DSCP code point carried by requests and replies (RFC 2474; 0 = best effort).
    pub dscp: u8,
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

/// What a latency probe is on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ProbeKind {
    /// ICMP echo request/reply (`ping`; Flent's "Ping (ms) ICMP").
    #[default]
    Icmp,
    /// UDP request/response (irtt or netperf `UDP_RR`; Flent's "Ping (ms) UDP …").
    Udp,
}

impl ProbeKind {
    /// Lower-case name used in outputs (`icmp`, `udp`).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            ProbeKind::Icmp => "icmp",
            ProbeKind::Udp => "udp",
        }
    }
}

/// Wire size of a default ICMP echo: `ping`'s 56 data bytes + 8 (ICMP) + 20 (IPv4) = 84 bytes
/// (iputils `ping`, `-s 56` default).
pub const ICMP_PROBE_BYTES: u32 = 84;

impl ProbeConfig {
    /// An ICMP probe of [`ICMP_PROBE_BYTES`] every `interval` from time 0, best effort.
    #[must_use]
    pub fn ping(name: &str, src: NodeId, dst: NodeId, interval: Dur) -> Self {
        ProbeConfig {
            name: name.to_owned(),
            kind: ProbeKind::Icmp,
            dscp: 0,
            src,
            dst,
            interval,
            size: ICMP_PROBE_BYTES,
            start: Time::ZERO,
            stop: None,
        }
    }
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
