//! The discrete-event engine: one event queue, links, hosts, routers, TCP flows, probes, UDP
//! sources and the sampler.
//!
//! The engine is split along its seams: the event loop, the CPU schedule and the hand-off of
//! packets between links are here; the endpoints (flows, probes) are in `endpoints.rs`, the
//! host egress (qdisc, NIC, TX completions) in `egress.rs`, middlebox elements on nodes'
//! forwarding paths in `nodes.rs`, sampling and results in `observe.rs`, configuration checks in
//! `validate.rs` and route computation in `routing.rs`.
//!
//! Contract: [`Simulation::new`] validates a [`SimConfig`] (never panics on it) and
//! [`Simulation::run`] processes events in (time, insertion sequence) order until the configured
//! duration, then returns [`Results`]. Events are small `Copy` values naming an entity by index.
//! Each link keeps at most one pending transmission event and one pending arrival event (its
//! delay line is FIFO) and, if its delay changes during the run, one event for its next change;
//! each flow endpoint and each host at most one useful pending timer event (stale ones are
//! recognised and skipped), so the queue stays small however many packets are in flight.
//! Packets follow source routes computed once per flow and direction (fewest hops), so routing
//! costs an index per hop and memory grows with the number of flows, not nodes squared.
//!
//! Every packet a host creates goes through its host model (`host/`): the qdisc (pfifo_fast:
//! straight to the NIC, the first link of the route; fq: per-flow queues released when due and
//! when the NIC is free), and the NIC reports each data segment's TX completion to its sender
//! (TSQ). Everything a host does (timers, packet arrivals, application events, fq releases)
//! waits while its CPU schedule has it descheduled, and (`ResumeWork::Softirq`) while it works
//! off what waited, one packet per CPU cost, or spends the CPU time of the data segments it
//! sent, one cost each. TSQ kicks (a throttled socket freed by a
//! completion reported at once) run after the event that caused them, at the same instant.

use std::collections::VecDeque;

use cclab_cc::{Dur, Time};

use crate::config::{ConfigError, FlowId, HostQdisc, NodeKind, SimConfig, Transport};
use crate::events::EventQueue;
use crate::histogram::Histogram;
use crate::host::cpu::CpuCap;
use crate::host::fq::Fq;
use crate::link::{Enqueued, Link};
use crate::packet::{Owner, Packet};
use crate::reorder::ReorderMeter;
use crate::results::{EngineStats, FlowSeries, QueueSeries, Results, UdpSeries};
use crate::rng;
use crate::tcp::receiver::Receiver;
use crate::tcp::sender::{MAX_TRACE_ROWS, Outgoing, Sender, SocketHost};

mod egress;
mod endpoints;
mod exchanges;
mod ideal;
mod nodes;
mod observe;
mod quic;
mod routing;
pub use routing::Router;
mod rx;
mod slack;
#[cfg(test)]
mod tests;
mod validate;
mod virtio;
mod wifi;

use egress::build_hosts;
use routing::compute_paths;
use validate::validate;

pub use nodes::ElementId;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Event {
    LinkTx(u32),
    LinkArrive(u32),
    FlowStart(u32),
    FlowStop(u32),
    /// Flow `f`'s sender timers (armed in event-queue slot 2f, re-armed in place).
    SenderWake(u32),
    /// Flow `f`'s delayed-ACK timer (slot 2f + 1).
    ReceiverWake(u32),
    ProbeSend(u32),
    /// UDP source `u` sends its next datagram.
    UdpSend(u32),
    /// A host's fq may release a packet (stale unless it matches `HostRt::fq_wake`).
    FqRelease(u32),
    /// A descheduled host with work waiting runs again.
    HostResume(u32),
    /// A link's next propagation-delay change is due (see `link.rs`).
    LinkDelay(u32),
    /// A middlebox element asked to be called now (stale unless it matches its `wake`).
    Element(u32),
    /// The client timer of request/response flow `f` (stale unless it matches its `wake`).
    ClientWake(u32),
    /// Wi-Fi BSS `b`'s MAC asked to be called (stale unless it matches its `wake`).
    Wifi(u32),
    Sample,
    /// QUIC flow `f`'s sender timer (slot 2f, like `SenderWake`).
    QuicSenderWake(u32),
    /// QUIC flow `f`'s delayed-ACK timer (slot 2f + 1).
    QuicReceiverWake(u32),
    /// Host `h`'s NAPI poll (`rx.rs`).
    HostRx(u32),
    /// Virtual machine `h`'s vhost worker runs (stale unless it matches its wake time).
    Vhost(u32),
}

#[derive(Debug)]
struct FlowRt {
    sender: Sender,
    receiver: Receiver,
    start: Time,
    stop: Option<Time>,
    size: Option<u64>,
    mss: u32,
    /// Sending and receiving host (node index).
    src: u32,
    dst: u32,
    /// The sender's NIC holds packets: report TX completions to it.
    track_tx: bool,
    /// DSCP of the flow's packets.
    dscp: u8,
    kick_queued: bool,
    snd_wake: Option<Time>,
    rcv_wake: Option<Time>,
    completed_at: Option<Time>,
    /// RFC 4737 reordering of the flow's original transmissions at the receiver.
    reorder: ReorderMeter,
    series: FlowSeries,
    /// The controller's own series while the run goes on, in the order it first reported them
    /// (moved into `series.cc_stats` at the end: a sorted map costs a search per value).
    cc_cols: Vec<(&'static str, Vec<Option<f64>>)>,
    last_bytes: u64,
    last_retrans: u64,
    last_lost: u64,
    /// The client of a request/response flow (`exchanges.rs`); `None` for other flows.
    client: Option<Box<exchanges::ClientRt>>,
    /// The endpoints of a QUIC flow (`quic.rs`); `None` for TCP flows.
    quic: Option<Box<quic::QuicRt>>,
}

impl FlowRt {
    fn bytes_delivered(&self) -> u64 {
        if let Some(c) = &self.client {
            return c.client.bytes_done;
        }
        if let Some(q) = &self.quic {
            return q.sender.stream_bytes(q.receiver.chunks_delivered);
        }
        let b = self.receiver.segments_delivered * u64::from(self.mss);
        self.size.map_or(b, |s| b.min(s))
    }
}

#[derive(Debug)]
struct ProbeRt {
    interval: Dur,
    size: u32,
    dscp: u8,
    seq: Vec<u64>,
    stop: Option<Time>,
    src: u32,
    next_seq: u64,
    t_s: Vec<f64>,
    rtt_ms: Vec<f64>,
    hist: Histogram,
}

/// A UDP source and its receiver's counters.
#[derive(Debug)]
struct UdpRt {
    source: crate::udp::UdpSource,
    /// Sending host.
    src: u32,
    /// Its route.
    route: u32,
    size: u32,
    dscp: u8,
    ecn: crate::packet::Ecn,
    /// Datagrams sent (= the next sequence number).
    sent: u64,
    received: u64,
    bytes_received: u64,
    ce_received: u64,
    /// Highest sequence number received.
    max_seq: Option<u64>,
    owd: Histogram,
    series: UdpSeries,
    last_sent: u64,
    last_bytes: u64,
    /// One-way delays received since the last sample: sum (ns) and count.
    owd_sum: u64,
    owd_n: u64,
}

#[derive(Debug)]
struct QueueMon {
    link: usize,
    last_tx_bytes: u64,
    series: QueueSeries,
    /// Indexes (in `SimConfig::elements`) of the elements whose configured delay counts in the
    /// link's delay series, if the link has one (`QueueSeries::delay_ms`).
    delay_elements: Option<Vec<usize>>,
}

/// What the engine needs per route besides its links (one cache line for the per-packet
/// decisions).
#[derive(Clone, Copy, Debug)]
struct RouteInfo {
    /// The source host's NIC: the first link, if it leaves that host and has a rate; its
    /// serialisation ends are the TX completions. `NO_NIC` = infinitely fast.
    nic: u32,
    /// The host that consumes the route's packets.
    dst: u32,
    /// The route's flow index in its source host's fq (unused without fq).
    fq: u32,
    /// A packet leaving the NIC may be handed to the next link at once when nothing else can
    /// happen before (see `nic_send`): the route continues past the NIC and every route of its
    /// source host starts at that host's NIC.
    cut: bool,
    /// `dst` has a CPU schedule.
    dst_sched: bool,
    /// How packets leave the source host (decided once).
    egress: Egress,
    /// The source host is a virtual machine: its virtio device reports the TX completions
    /// (`virtio.rs`), not the NIC.
    vio: bool,
}

/// How a route's packets leave their host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Egress {
    /// No fq and no NIC that holds packets: straight onto the route, complete at once.
    Direct,
    /// pfifo_fast: into the NIC (`RouteInfo::nic`).
    Nic,
    /// Through the host's fq.
    Fq,
    /// pfifo_fast of a virtual machine: into its virtio device (`virtio.rs`).
    Virtio,
}

/// `RouteInfo::nic` of a route without a NIC that holds packets.
const NO_NIC: u32 = u32::MAX;
/// `RouteInfo::nic` of a route whose first hop is Wi-Fi: the host's NIC is the MAC, which
/// reports TX completions itself (`wifi.rs`).
const WIFI_NIC: u32 = u32::MAX - 1;

/// The `u32` id that events, routes and deferred work carry for the flow, probe, link, host or
/// element at index `i` of the engine's tables.
#[expect(
    clippy::cast_possible_truncation,
    reason = "every table is built from the configuration, one entry (hundreds of bytes) per item, \
              so it cannot reach 2^32 entries in memory"
)]
#[inline]
const fn id32(i: usize) -> u32 {
    i as u32
}

/// Work that waits for a descheduled host, in the order it came due.
#[derive(Clone, Copy, Debug)]
enum Deferred {
    Packet(Packet),
    SenderWake(u32, Time),
    ReceiverWake(u32, Time),
    FlowStart(u32),
    FlowStop(u32),
    ProbeSend(u32),
    UdpSend(u32),
    FqRelease(Time),
    TsqKick(u32),
    ClientWake(u32, Time),
    QuicSenderWake(u32, Time),
    QuicReceiverWake(u32, Time),
    /// A virtual machine's device queue was woken: post from its qdisc (`virtio.rs`).
    VirtioRefill,
}

/// A node's host model at run time (routers have the defaults and never use them).
#[derive(Debug, Default)]
struct HostRt {
    /// The hypervisor's CPU cap (`None`: always running).
    cpu: Option<CpuCap>,
    /// How the host works off its inbox when it runs again (`None`: at one instant).
    drain: Option<Drain>,
    fq: Option<Box<Fq>>,
    /// The egress link fq feeds (None: infinitely fast).
    nic: Option<u32>,
    fq_wake: Option<Time>,
    inbox: VecDeque<Deferred>,
    resume_at: Option<Time>,
    /// RX ring of a host with a timing model (`rx.rs`).
    rx: Option<Box<rx::RxRing>>,
    /// Kernel timers of a host whose timing model has timer slack (`slack.rs`).
    timers: Option<Box<crate::host::timing::TimerClock>>,
    /// The virtio device of a virtual machine (`virtio.rs`).
    vio: Option<Box<crate::host::virtio::VirtioTx>>,
    /// Packets waiting in the inbox (a virtual machine's RX virtqueue and tap queue).
    rx_waiting: u32,
    /// A `Deferred::VirtioRefill` is in the inbox.
    refill_deferred: bool,
}

/// A host working off its inbox in softirq rounds ([`crate::config::ResumeWork::Softirq`]).
#[derive(Clone, Copy, Debug)]
struct Drain {
    /// CPU time of one packet.
    cost: Dur,
    /// Packets per NET_RX round.
    round: u64,
    /// Packets left in the current round.
    left: u64,
    /// Working off the inbox, or spending the CPU time of its sends: the host's other work
    /// waits behind it.
    busy: bool,
    /// Inside a step of [`Simulation::drain_step`]: the sends made now are paid for by the
    /// step (it comes this much later), not by a busy period of their own.
    stepping: bool,
    /// Data segments sent whose CPU time is still to be spent ([`Simulation::owe_sends`]).
    owed: u64,
}

/// Engine choices that do not change what is simulated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EngineOptions {
    /// Schedule drop-tail FIFOs analytically at enqueue time (no per-packet transmission events).
    /// This only saves work: it simulates the same system as the evented mode, except that a
    /// departure and an arrival at the same nanosecond are ordered departure-first (see
    /// `link.rs`).
    pub analytic_fifo: bool,
    /// Fold the NAPI polls of hosts with a timing model into the delay line of the one link
    /// that feeds them, where the run allows it (`rx.rs`): no event per poll. This only saves
    /// work; the polls, their times and their packets are the same as with an event per poll
    /// (only the order of events due at one nanosecond can differ).
    pub fold_rx: bool,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            analytic_fifo: true,
            fold_rx: true,
        }
    }
}

/// One simulation run.
#[derive(Debug)]
pub struct Simulation {
    cfg: SimConfig,
    now: Time,
    events: EventQueue<Event>,
    links: Vec<Link>,
    /// Source routes: `paths[r]` lists the links a packet on route `r` crosses, leaving out
    /// links with neither rate nor delay, now or after a change (they hand packets straight
    /// on). Route `2f` is flow `f`'s data direction and `2f + 1` its ACK direction; probes
    /// follow the flows (two routes each) and UDP sources the probes (one route each).
    paths: Vec<Box<[u32]>>,
    /// Per route: NIC, consuming host, fq flow, cut-through.
    routes: Vec<RouteInfo>,
    /// End of the run.
    end: Time,
    hosts: Vec<HostRt>,
    flows: Vec<FlowRt>,
    probes: Vec<ProbeRt>,
    udp: Vec<UdpRt>,
    monitors: Vec<QueueMon>,
    out: Vec<Outgoing>,
    fq_buf: Vec<Packet>,
    /// Senders to kick after the current event (TSQ), in order.
    kicks: Vec<u32>,
    /// Data segments refused by fq qdiscs.
    /// Data segments virtual machines dropped (guest qdisc, tap towards the guest).
    vio_data_drops: u64,
    fq_data_drops: u64,
    /// Middlebox elements on nodes' forwarding paths (`nodes.rs`).
    elements: Vec<nodes::NodeElement>,
    /// Per node: its first element (`nodes::NO_ELEMENT`: none).
    node_first: Vec<u32>,
    /// Per node: its last element (where [`Simulation::add_element`] appends).
    node_last: Vec<u32>,
    /// The elements of node chains that are handing packets on, innermost last, with the
    /// packet each is given next (`nodes.rs`: a chain is walked with this stack, not recursion).
    element_stack: Vec<(u32, Option<Packet>)>,
    /// Some node holds an element.
    has_elements: bool,
    /// `has_elements`, or the run has Wi-Fi: packets go through `hooked` first.
    has_hooks: bool,
    /// Some host has a timing model: packets at the end of their route go through `arrive`.
    has_rx_timing: bool,
    /// Per link whose hosts' polls are folded into it (`rx.rs`): how many `LinkArrive` events
    /// it has pending; `NOT_FOLDED` for the other links; empty when no link is folded.
    fold_pending: Vec<u32>,
    /// Per route, with folded links: the link its packets wait in for their poll (its last,
    /// when its host is folded), else `u32::MAX`; and the route's host.
    route_fold: Vec<(u32, u32)>,
    /// Scratch for the packets a folded link hands on at once.
    fold_buf: Vec<Packet>,
    /// Wi-Fi BSSs (`wifi.rs`), and per link the Wi-Fi hop it is (empty without BSSs).
    wifi: Vec<wifi::BssRt>,
    wifi_hop: Vec<Option<wifi::Hop>>,
    stats: EngineStats,
    /// Per flow, its `timer_list` timers as armed (`slack.rs`); empty when no host has timer
    /// slack.
    slack: Vec<slack::FlowSlack>,
    /// Per link, how it reports TX completions (`slack.rs`); empty when every link reports
    /// them at the end of serialisation.
    tx_polls: Vec<slack::TxPoll>,
}

impl Simulation {
    /// Validate `cfg` and build the run.
    ///
    /// # Errors
    /// A [`ConfigError`] naming what is inconsistent.
    pub fn new(cfg: SimConfig) -> Result<Simulation, ConfigError> {
        Self::with_options(cfg, EngineOptions::default())
    }

    /// Check `cfg` as [`Simulation::new`] does, without building the run.
    ///
    /// # Errors
    /// The [`ConfigError`] that [`Simulation::new`] would return.
    pub fn check(cfg: &SimConfig) -> Result<(), ConfigError> {
        validate(cfg)?;
        compute_paths(cfg)?;
        Ok(())
    }

    /// Like [`Simulation::new`] with explicit engine options.
    ///
    /// # Errors
    /// A [`ConfigError`] naming what is inconsistent.
    pub fn with_options(cfg: SimConfig, opts: EngineOptions) -> Result<Simulation, ConfigError> {
        validate(&cfg)?;
        let paths = compute_paths(&cfg)?;
        let (wifi, wifi_hop) = wifi::build_wifi(&cfg)?;
        let mut links: Vec<Link> = cfg
            .links
            .iter()
            .enumerate()
            .map(|(i, l)| Link::new(l, id32(i), cfg.seed, opts.analytic_fifo))
            .collect();
        // A host's outgoing links are its NICs: they report TX completions whatever their
        // queue (TSQ).
        for (link, lc) in links.iter_mut().zip(&cfg.links) {
            if cfg.nodes[lc.from.0 as usize].kind == NodeKind::Host {
                link.report_tx_completions();
            }
        }
        // Route endpoints, in the order of `paths`.
        let ends: Vec<(u32, u32)> = cfg
            .flows
            .iter()
            .flat_map(|f| [(f.src.0, f.dst.0), (f.dst.0, f.src.0)])
            .chain(
                cfg.probes
                    .iter()
                    .flat_map(|p| [(p.src.0, p.dst.0), (p.dst.0, p.src.0)]),
            )
            .chain(cfg.udp.iter().map(|u| (u.src.0, u.dst.0)))
            .collect();
        // Routes that leave their host over a Wi-Fi hop: the MAC is the NIC.
        let wifi_first: Vec<bool> = paths
            .iter()
            .zip(&ends)
            .map(|(path, &(src, _))| {
                path.first().is_some_and(|&l| {
                    wifi_hop.get(l as usize).copied().flatten().is_some()
                        && cfg.links[l as usize].from.0 == src
                })
            })
            .collect();
        let route_nic: Vec<Option<u32>> = paths
            .iter()
            .zip(&ends)
            .map(|(path, &(src, _))| {
                path.first().copied().filter(|&l| {
                    let l = &cfg.links[l as usize];
                    l.from.0 == src && l.rate_bps.is_some()
                })
            })
            .collect();
        let (hosts, route_fq) = build_hosts(&cfg, &paths, &ends, &route_nic)?;
        // Hosts all of whose routes start at a NIC with a rate.
        let mut nic_only = vec![true; cfg.nodes.len()];
        for (r, &(src, _)) in ends.iter().enumerate() {
            if route_nic[r].is_none() {
                nic_only[src as usize] = false;
            }
        }
        let routes: Vec<RouteInfo> = ends
            .iter()
            .enumerate()
            .map(|(r, &(src, dst))| RouteInfo {
                nic: route_nic[r].unwrap_or(if wifi_first[r] { WIFI_NIC } else { NO_NIC }),
                dst,
                fq: route_fq[r],
                cut: nic_only[src as usize] && paths[r].len() > 1,
                dst_sched: hosts[dst as usize].cpu.is_some(),
                vio: hosts[src as usize].vio.is_some(),
                egress: if hosts[src as usize].fq.is_some() {
                    Egress::Fq
                } else if hosts[src as usize].vio.is_some() {
                    Egress::Virtio
                } else if route_nic[r].is_some() {
                    Egress::Nic
                } else {
                    Egress::Direct
                },
            })
            .collect();
        // The run's trace rows, shared equally by its traced flows.
        let trace_share = MAX_TRACE_ROWS / cfg.flows.iter().filter(|f| f.trace).count().max(1);
        let flows: Vec<FlowRt> = cfg
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let h = &cfg.nodes[f.src.0 as usize].host;
                let fq = matches!(h.qdisc, HostQdisc::Fq(_));
                let instant = !fq && route_nic[2 * i].is_none() && !wifi_first[2 * i];
                let mut sender = Sender::with_host(
                    f,
                    rng::cc_seed(cfg.seed, id32(i)),
                    SocketHost::new(h, instant),
                );
                sender.set_trace_limit(trace_share);
                let ecn = sender.ecn_mode();
                FlowRt {
                    sender,
                    receiver: match &f.reader {
                        None => Receiver::new(f.ack_every, f.delack_timeout)
                            .with_ecn(ecn)
                            .with_rules(&f.tcp),
                        Some(r) => Receiver::new(f.ack_every, f.delack_timeout)
                            .with_ecn(ecn)
                            .with_rules(&f.tcp)
                            .with_reader(r, f.mss),
                    },
                    start: f.start,
                    stop: f.stop,
                    size: f.size,
                    mss: f.mss,
                    src: f.src.0,
                    dst: f.dst.0,
                    track_tx: !instant,
                    dscp: f.dscp,
                    kick_queued: false,
                    snd_wake: None,
                    rcv_wake: None,
                    completed_at: None,
                    reorder: ReorderMeter::new(),
                    series: FlowSeries::default(),
                    cc_cols: Vec::new(),
                    last_bytes: 0,
                    last_retrans: 0,
                    last_lost: 0,
                    client: f.requests.as_ref().map(|r| {
                        Box::new(exchanges::ClientRt::new(crate::tcp::exchange::Client::new(
                            r,
                            f.handshake,
                            f.stop,
                        )))
                    }),
                    quic: match &f.transport {
                        Transport::Tcp => None,
                        Transport::Quic(q) => Some(Box::new(quic::QuicRt::new(
                            f,
                            q,
                            rng::cc_seed(cfg.seed, id32(i)),
                        ))),
                    },
                }
            })
            .collect();
        let probes = cfg
            .probes
            .iter()
            .map(|p| ProbeRt {
                interval: p.interval,
                size: p.size,
                dscp: p.dscp,
                seq: Vec::new(),
                stop: p.stop,
                src: p.src.0,
                next_seq: 0,
                t_s: Vec::new(),
                rtt_ms: Vec::new(),
                hist: Histogram::new(),
            })
            .collect();
        let udp_base = 2 * (cfg.flows.len() + cfg.probes.len());
        let run_end = Time::ZERO + cfg.duration;
        let udp = (0u64..)
            .zip(&cfg.udp)
            .map(|(i, u)| UdpRt {
                // A source sends in [start, min(stop, end of run)): none at the last instant.
                source: crate::udp::UdpSource::new(
                    &crate::udp::UdpConfig {
                        stop: Some(u.stop.map_or(run_end, |s| s.min(run_end))),
                        ..u.clone()
                    },
                    rng::stream(cfg.seed, rng::UDP + i),
                ),
                src: u.src.0,
                route: id32(udp_base) + u32::try_from(i).unwrap_or(u32::MAX),
                size: u.size,
                dscp: u.dscp,
                ecn: u.ecn,
                sent: 0,
                received: 0,
                bytes_received: 0,
                ce_received: 0,
                max_seq: None,
                owd: Histogram::new(),
                series: UdpSeries::default(),
                last_sent: 0,
                last_bytes: 0,
                owd_sum: 0,
                owd_n: 0,
            })
            .collect();
        let monitors = cfg
            .links
            .iter()
            .enumerate()
            .filter(|(_, l)| l.monitor && l.rate_bps.is_some())
            .map(|(i, l)| QueueMon {
                link: i,
                last_tx_bytes: 0,
                series: QueueSeries::default(),
                delay_elements: observe::delay_elements(&cfg, l),
            })
            .collect();
        let has_rx_timing = hosts.iter().any(|h| h.rx.is_some());
        let slack = if hosts.iter().any(|h| h.timers.is_some()) {
            flows
                .iter()
                .map(|fr| {
                    let timers = |h: u32| hosts[h as usize].timers.as_deref();
                    slack::FlowSlack::new(timers(fr.src), timers(fr.dst))
                })
                .collect()
        } else {
            Vec::new()
        };
        let tx_polls = slack::tx_polls(&cfg);
        let mut sim = Simulation {
            now: Time::ZERO,
            events: EventQueue::new(),
            links,
            paths,
            routes,
            end: Time::ZERO + cfg.duration,
            hosts,
            flows,
            probes,
            udp,
            monitors,
            out: Vec::new(),
            fq_buf: Vec::new(),
            kicks: Vec::new(),
            fq_data_drops: 0,
            vio_data_drops: 0,
            elements: Vec::new(),
            node_first: vec![nodes::NO_ELEMENT; cfg.nodes.len()],
            node_last: vec![nodes::NO_ELEMENT; cfg.nodes.len()],
            element_stack: Vec::new(),
            has_elements: false,
            has_hooks: !wifi.is_empty(),
            has_rx_timing,
            fold_pending: Vec::new(),
            route_fold: Vec::new(),
            fold_buf: Vec::new(),
            wifi,
            wifi_hop,
            stats: EngineStats::default(),
            slack,
            tx_polls,
            cfg,
        };
        // One event per delay change, each scheduling the next of its link.
        for l in 0..sim.links.len() {
            if let Some(t) = sim.links[l].next_delay_change() {
                sim.schedule(t, Event::LinkDelay(id32(l)));
            }
        }
        let flow_times: Vec<_> = sim.cfg.flows.iter().map(|f| (f.start, f.stop)).collect();
        for (i, (start, stop)) in flow_times.into_iter().enumerate() {
            sim.schedule(start, Event::FlowStart(id32(i)));
            if let Some(s) = stop {
                sim.schedule(s, Event::FlowStop(id32(i)));
            }
        }
        let probe_starts: Vec<_> = sim.cfg.probes.iter().map(|p| p.start).collect();
        for (i, start) in probe_starts.into_iter().enumerate() {
            sim.schedule(start, Event::ProbeSend(id32(i)));
        }
        for u in 0..sim.udp.len() {
            if let Some(t) = sim.udp[u].source.first() {
                sim.schedule(t, Event::UdpSend(id32(u)));
            }
        }
        let first_sample = Time::ZERO + sim.cfg.sample_interval;
        sim.schedule(first_sample, Event::Sample);
        let built: Vec<_> = (0u64..)
            .zip(&sim.cfg.elements)
            .map(|(i, e)| {
                let elem = e.spec.build(sim.cfg.seed, crate::rng::ELEMENT + i);
                (e.node, elem, e.select.clone())
            })
            .collect();
        for (node, elem, select) in built {
            let id = sim.add_element(node, elem);
            sim.select_for(id, select);
        }
        if opts.fold_rx {
            sim.fold_polls();
        }
        Ok(sim)
    }

    fn schedule(&mut self, time: Time, ev: Event) {
        self.events.push(time, ev);
    }

    /// Run to the end and return the results.
    #[must_use]
    pub fn run(mut self) -> Results {
        let end = Time::ZERO + self.cfg.duration;
        while let Some((e, armed)) = self.events.peek_source() {
            if e.time() > end {
                break;
            }
            self.now = e.time();
            self.stats.events += 1;
            if armed {
                // A timer slot's wake-up: its entry is updated in place if the handler arms it
                // again (a paced sender's next skb), else removed after.
                self.events.begin_fire();
                self.dispatch(e.ev);
                self.events.end_fire();
            } else if let Event::LinkArrive(l) = e.ev {
                // The commonest event: reuse its heap slot for the link's next arrival (one
                // sift-down instead of a pop and a push).
                let l = l as usize;
                if self.is_folded(l) {
                    self.rx_link(l);
                    if !self.kicks.is_empty() {
                        self.run_kicks();
                    }
                    continue;
                }
                let pkt = self.links[l].wake(self.now);
                match self.links[l].next_wake() {
                    Some(t) => self.events.replace_top(t, e.ev),
                    None => self.events.pop_pushed(),
                }
                if let Some(pkt) = pkt {
                    self.forward(&pkt, pkt.hop);
                }
            } else {
                self.events.pop_pushed();
                self.dispatch(e.ev);
            }
            if !self.kicks.is_empty() {
                self.run_kicks();
            }
        }
        self.now = end;
        self.finish()
    }

    fn dispatch(&mut self, ev: Event) {
        match ev {
            Event::LinkTx(l) => self.on_link_tx(l as usize),
            Event::LinkArrive(_) => unreachable!("handled in run"),
            Event::FlowStart(f) => self.flow_start(f as usize),
            Event::FlowStop(f) => self.flow_stop(f as usize),
            Event::SenderWake(f) => self.sender_wake(f as usize, self.now),
            Event::ReceiverWake(f) => self.receiver_wake(f as usize, self.now),
            Event::ProbeSend(p) => self.on_probe_send(p as usize),
            Event::UdpSend(u) => self.on_udp_send(u as usize),
            Event::FqRelease(h) => self.fq_release(h as usize, self.now),
            Event::HostResume(h) => self.resume(h as usize),
            Event::Element(e) => self.element_wake(e),
            Event::ClientWake(f) => self.client_wake(f as usize, self.now),
            Event::Wifi(b) => self.wifi_wake(b as usize),
            Event::LinkDelay(l) => {
                if let Some(t) = self.links[l as usize].apply_delay_change() {
                    self.schedule(t, Event::LinkDelay(l));
                }
            }
            Event::Sample => {
                self.sample();
                let next = self.now + self.cfg.sample_interval;
                self.schedule(next, Event::Sample);
            }
            Event::QuicSenderWake(f) => self.quic_sender_wake(f as usize, self.now),
            Event::QuicReceiverWake(f) => self.quic_receiver_wake(f as usize, self.now),
            Event::HostRx(h) => self.host_rx(h as usize),
            Event::Vhost(h) => self.vhost_run(h as usize),
        }
    }

    // ----- hosts: CPU schedule -----

    /// Whether host `h` runs now.
    #[inline]
    fn runs(&self, h: u32) -> bool {
        let hr = &self.hosts[h as usize];
        hr.cpu
            .as_ref()
            .is_none_or(|c| c.running(self.now) && hr.drain.is_none_or(|d| !d.busy))
    }

    /// Host `h` did `packets` packets' worth of work now: charge its CFS quota, if it has one.
    #[inline]
    fn charge(&mut self, h: u32, packets: u64) {
        if let Some(CpuCap::Quota(c)) = &mut self.hosts[h as usize].cpu {
            let ns = c.cost().saturating_mul(packets);
            c.charge(self.now, ns);
        }
    }

    /// Keep `item` until descheduled host `h` runs again.
    #[cold]
    #[inline(never)]
    fn defer(&mut self, h: u32, item: Deferred) {
        self.stats.cpu_deferred += 1;
        let now = self.now;
        let hr = &mut self.hosts[h as usize];
        if let (Deferred::Packet(p), Some(v)) = (&item, &hr.vio) {
            // A guest's RX virtqueue, then its tap queue; beyond them the tap drops.
            let c = v.config();
            if hr.rx_waiting >= c.rx_ring + c.tap_queue {
                self.stats.virtio_rx_drops += 1;
                if p.is_data() {
                    self.vio_data_drops += 1;
                }
                return;
            }
            hr.rx_waiting += 1;
        }
        hr.inbox.push_back(item);
        if hr.resume_at.is_none() {
            let at = hr
                .cpu
                .as_ref()
                .expect("only capped hosts defer")
                .next_run(now);
            hr.resume_at = Some(at);
            self.schedule(at, Event::HostResume(h));
        }
    }

    /// Host `h` runs again: process what waited, in order, now (or in softirq rounds,
    /// [`Simulation::drain_step`]).
    #[inline(never)]
    fn resume(&mut self, h: usize) {
        if self.hosts[h].drain.is_some() {
            self.drain_step(h);
            return;
        }
        self.hosts[h].resume_at = None;
        self.hosts[h].rx_waiting = 0;
        self.hosts[h].refill_deferred = false;
        self.stats.cpu_resumes += 1;
        let mut inbox = std::mem::take(&mut self.hosts[h].inbox);
        while let Some(item) = inbox.pop_front() {
            if matches!(self.hosts[h].cpu, Some(CpuCap::Quota(_))) && !self.runs(id32(h)) {
                // The work so far spent the quota: the rest waits for the next period, ahead
                // of what was deferred meanwhile, in one move (each item would otherwise find
                // the host throttled and be deferred again, at every resume).
                inbox.push_front(item);
                let hr = &mut self.hosts[h];
                let later = std::mem::take(&mut hr.inbox);
                inbox.extend(later);
                hr.rx_waiting = u32::try_from(
                    inbox
                        .iter()
                        .filter(|d| matches!(d, Deferred::Packet(_)))
                        .count(),
                )
                .unwrap_or(u32::MAX);
                hr.inbox = inbox;
                if hr.resume_at.is_none() {
                    let at = hr.cpu.as_ref().expect("a quota").next_run(self.now);
                    hr.resume_at = Some(at);
                    self.schedule(at, Event::HostResume(id32(h)));
                }
                return;
            }
            self.run_deferred(h, item);
        }
        if self.hosts[h].inbox.is_empty() {
            self.hosts[h].inbox = inbox; // keep the allocation
        }
    }

    /// Host `h` (with [`crate::config::ResumeWork::Softirq`]) sent `segs` data segments now:
    /// each takes the host's per-packet CPU time. Sent while it works off its inbox (an ACK's
    /// sends, a timer's, a tasklet's), the step that sent them comes that much later; sent by
    /// a host that was idle (a timer or TSQ's tasklet firing while it runs, an ACK received at
    /// once), the host is busy for their CPU time and what comes due meanwhile waits in its
    /// inbox. Segments, not skbs: the cost is measured per segment (vCPU time / segments
    /// sent), and each TSO/GSO skb is segmented on the guest's path (`tcp_gso_segment` or,
    /// behind virtio-net with host TSO, on the host's behalf), so its CPU time grows with
    /// its segments.
    #[inline]
    pub(super) fn owe_sends(&mut self, h: u32, segs: u64) {
        let hr = &mut self.hosts[h as usize];
        let Some(d) = &mut hr.drain else {
            return;
        };
        if segs == 0 {
            return;
        }
        d.owed += segs;
        if d.stepping || d.busy || hr.resume_at.is_some() {
            return; // the step due (or running) pays for them
        }
        d.busy = true;
        d.left = d.round;
        let work = d.cost.as_nanos().saturating_mul(d.owed);
        d.owed = 0;
        self.resume_after(h as usize, work);
    }

    /// Schedules host `h`'s next drain step after `work` ns of CPU time, counted only while
    /// the host runs ([`crate::host::cpu::CpuClock::after_running`]; an uncapped host always
    /// runs).
    fn resume_after(&mut self, h: usize, work: u64) {
        let now = self.now;
        let hr = &mut self.hosts[h];
        let at = hr
            .cpu
            .as_ref()
            .map_or(now + Dur(work), |c| c.after_running(now, work));
        hr.resume_at = Some(at);
        self.schedule(at, Event::HostResume(id32(h)));
    }

    /// Runs `items` one after another as the host's work. When the quota is spent before an
    /// item, that item and the ones after it go back to the front of the inbox, in order, ahead
    /// of what waits there.
    fn run_in_order(&mut self, h: usize, d: &mut Drain, mut items: VecDeque<Deferred>) {
        while let Some(item) = items.pop_front() {
            let mut ran = true;
            self.step_work(h, d, |s| {
                if s.runs(id32(h)) {
                    s.run_deferred(h, item);
                } else {
                    ran = false;
                }
            });
            if !ran {
                items.push_front(item);
                let hr = &mut self.hosts[h];
                for i in items.into_iter().rev() {
                    hr.inbox.push_front(i);
                }
                return;
            }
        }
    }

    /// Run `work` as host `h` inside a step of [`Simulation::drain_step`] (the host runs for
    /// it); the segments it sends are added to `d.owed`.
    fn step_work(&mut self, h: usize, d: &mut Drain, work: impl FnOnce(&mut Self)) {
        self.hosts[h].drain = Some(Drain {
            busy: false,
            stepping: true,
            ..*d
        });
        work(self);
        let hr = &mut self.hosts[h];
        d.owed = hr.drain.expect("a draining host").owed;
        hr.drain = Some(*d);
    }

    /// Whether a waiting item is the work of the TIMER softirq (`run_timer_softirq`, the
    /// `timer_list` wheel): the delayed-ACK timer (`icsk_delack_timer`) and the sender's
    /// retransmission and reordering timers (`icsk_retransmit_timer`,
    /// `net/ipv4/tcp_timer.c` `tcp_init_xmit_timers`). The pacing timer is a soft hrtimer
    /// (HRTIMER softirq) and TSQ's kick a tasklet (TASKLET softirq).
    fn timer_softirq_item(&self, item: &Deferred) -> bool {
        match *item {
            Deferred::ReceiverWake(..) => true,
            Deferred::SenderWake(f, _) => {
                let p = self.flows[f as usize].sender.wakeup_parts();
                let wheel = match (p.retransmit, p.reorder) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
                // The wake-up that waited is the earliest deadline; the wheel's has expired
                // by now if it is due too.
                wheel.is_some_and(|t| t <= self.now)
            }
            _ => false,
        }
    }

    /// One step of host `h` working off its inbox in softirq rounds
    /// ([`crate::config::ResumeWork::Softirq`]). When the host runs again, the timer-wheel
    /// timers that waited run first (`__do_softirq` runs the pending softirqs in order of
    /// their number, `include/linux/interrupt.h`: TIMER 1, NET_RX 3, TASKLET 6, HRTIMER 8).
    /// Then the next waiting packet is received now and the next step comes its CPU time
    /// later, plus that of the segments its processing sent; when the round's budget is spent
    /// or no packet waits, the other work that waited (timers, TSQ and qdisc wake-ups) runs
    /// now, in order, and a new round begins after the CPU time of what it sent. While the
    /// host works off its inbox, everything that comes due for it joins the inbox; once the
    /// inbox is empty and its sends are paid for the host is idle again. CPU time passes only
    /// while the host runs: work that does not fit in its timeslice goes on in the next.
    #[inline(never)]
    fn drain_step(&mut self, h: usize) {
        let now = self.now;
        let hr = &mut self.hosts[h];
        if hr.resume_at != Some(now) {
            return; // stale: a later step or resume is due
        }
        hr.resume_at = None;
        let mut d = hr.drain.expect("a draining host");
        let cpu = hr.cpu.as_ref().expect("only capped hosts defer");
        if !cpu.running(now) {
            // Descheduled while busy: the next running phase begins as a resume (timers first).
            let at = cpu.next_run(now);
            hr.resume_at = Some(at);
            hr.drain = Some(Drain { busy: false, ..d });
            self.schedule(at, Event::HostResume(id32(h)));
            return;
        }
        if !d.busy {
            // The host runs again: the TIMER softirq comes first, then NET_RX.
            self.stats.cpu_resumes += 1;
            d.busy = true;
            d.left = d.round;
            if self.hosts[h]
                .inbox
                .iter()
                .any(|i| self.timer_softirq_item(i))
            {
                let mut rest = std::mem::take(&mut self.hosts[h].inbox);
                let timers: VecDeque<Deferred> = rest
                    .iter()
                    .copied()
                    .filter(|i| self.timer_softirq_item(i))
                    .collect();
                rest.retain(|i| !self.timer_softirq_item(i));
                self.hosts[h].inbox = rest;
                self.run_in_order(h, &mut d, timers);
            }
            if self.pay_or_idle(h, &mut d) {
                return;
            }
        }
        loop {
            let hr = &mut self.hosts[h];
            let packet = if d.left > 0 {
                hr.inbox
                    .iter()
                    .position(|i| matches!(i, Deferred::Packet(_)))
            } else {
                None
            };
            if let Some(i) = packet {
                let Some(Deferred::Packet(p)) = hr.inbox.remove(i) else {
                    unreachable!("a packet was found there")
                };
                hr.rx_waiting = hr.rx_waiting.saturating_sub(1);
                d.left -= 1;
                self.step_work(h, &mut d, |s| s.consume(&p));
                let hr = &mut self.hosts[h];
                // The packet's CPU time, then that of the segments its processing sent.
                let work = d.cost.as_nanos().saturating_mul(1 + d.owed);
                d.owed = 0;
                hr.drain = Some(d);
                if hr.resume_at.is_none() {
                    // (Set already if the packet's work spent the quota and work was deferred.)
                    self.resume_after(h, work);
                }
                return;
            }
            // The round is over: the rest of what waited runs now, in order, then a new round
            // begins with the packets that came meanwhile.
            let mut rest = std::mem::take(&mut hr.inbox);
            hr.inbox.extend(
                rest.iter()
                    .copied()
                    .filter(|i| matches!(i, Deferred::Packet(_))),
            );
            rest.retain(|i| !matches!(i, Deferred::Packet(_)));
            self.run_in_order(h, &mut d, rest);
            d.left = d.round;
            if self.pay_or_idle(h, &mut d) {
                return;
            }
        }
    }

    /// Between two parts of a [`Simulation::drain_step`]: if the segments sent so far are
    /// owed, the step goes on after their CPU time; if nothing waits, the host is idle again;
    /// if a deferral scheduled the next step (the quota ran out) or the host lost the CPU, it
    /// goes on then. Returns whether the step ends here (false: go on now).
    fn pay_or_idle(&mut self, h: usize, d: &mut Drain) -> bool {
        let now = self.now;
        let hr = &mut self.hosts[h];
        if d.owed > 0 {
            let work = d.cost.as_nanos().saturating_mul(d.owed);
            d.owed = 0;
            hr.drain = Some(*d);
            if hr.resume_at.is_none() {
                self.resume_after(h, work);
            }
            return true;
        }
        if hr.inbox.is_empty() {
            hr.drain = Some(Drain {
                busy: false,
                left: 0,
                ..*d
            });
            return true;
        }
        hr.drain = Some(*d);
        if hr.resume_at.is_some() {
            return true; // scheduled by a deferral while the quota ran out
        }
        let cpu = hr.cpu.as_ref().expect("a capped host");
        if !cpu.running(now) {
            let at = cpu.next_run(now);
            hr.resume_at = Some(at);
            self.schedule(at, Event::HostResume(id32(h)));
            return true;
        }
        false
    }

    /// Run one item that waited for host `h`.
    fn run_deferred(&mut self, h: usize, item: Deferred) {
        match item {
            Deferred::Packet(p) => self.consume(&p),
            Deferred::SenderWake(f, due) => self.sender_wake(f as usize, due),
            Deferred::ReceiverWake(f, due) => self.receiver_wake(f as usize, due),
            Deferred::FlowStart(f) => self.flow_start(f as usize),
            Deferred::FlowStop(f) => self.flow_stop(f as usize),
            Deferred::ProbeSend(p) => self.on_probe_send(p as usize),
            Deferred::UdpSend(u) => self.on_udp_send(u as usize),
            Deferred::FqRelease(due) => self.fq_release(h, due),
            Deferred::TsqKick(f) => self.sender_kick(f as usize),
            Deferred::ClientWake(f, due) => self.client_wake(f as usize, due),
            Deferred::QuicSenderWake(f, due) => self.quic_sender_wake(f as usize, due),
            Deferred::QuicReceiverWake(f, due) => self.quic_receiver_wake(f as usize, due),
            Deferred::VirtioRefill => {
                self.hosts[h].refill_deferred = false;
                self.virtio_refill(h);
            }
        }
    }

    /// Move a packet on (just created, or just arrived at the end of a link; `hop` = index of
    /// its next link on its route): consume it at the end of its route, or enqueue it on that
    /// link (which keeps it with `hop + 1`).
    #[inline(always)]
    fn forward(&mut self, pkt: &Packet, hop: u32) {
        if self.has_hooks && self.hooked(pkt, hop) {
            return;
        }
        self.forward_on(pkt, hop);
    }

    /// What takes a packet before [`Simulation::forward_on`] on a run with elements or Wi-Fi:
    /// the elements of the node it reached, or the Wi-Fi MAC when its next hop is Wi-Fi (true:
    /// taken).
    #[inline(never)]
    fn hooked(&mut self, pkt: &Packet, hop: u32) -> bool {
        if self.has_elements && hop > 0 && self.enter_node(pkt, hop) {
            return true;
        }
        self.wifi_taken(pkt, hop)
    }

    /// `pkt`'s next hop (`hop`) is Wi-Fi: into the MAC (true).
    #[inline]
    fn wifi_taken(&mut self, pkt: &Packet, hop: u32) -> bool {
        if self.wifi_hop.is_empty() {
            return false;
        }
        let Some(&l) = self.paths[pkt.route as usize].get(hop as usize) else {
            return false;
        };
        if self.wifi_hop[l as usize].is_none() {
            return false;
        }
        self.wifi_offer(l as usize, pkt, hop + 1);
        true
    }

    /// [`Simulation::forward_on`] after the Wi-Fi check (for packets an element hands on).
    fn forward_past_elements(&mut self, pkt: &Packet, hop: u32) {
        if !self.wifi_taken(pkt, hop) {
            self.forward_on(pkt, hop);
        }
    }

    /// [`Simulation::forward`] past the elements of the node the packet is at and the Wi-Fi
    /// check (a Wi-Fi hop never reaches here).
    #[inline]
    fn forward_on(&mut self, pkt: &Packet, hop: u32) {
        let path = &self.paths[pkt.route as usize];
        let Some(&l) = path.get(hop as usize) else {
            if self.has_rx_timing {
                self.arrive(pkt);
            } else {
                self.consume(pkt);
            }
            return;
        };
        let l = l as usize;
        match self.links[l].offer(self.now, pkt, hop + 1, Time::ZERO) {
            Enqueued::Queued
            | Enqueued::Dropped
            | Enqueued::LostOnWire(_)
            | Enqueued::CutThrough { .. } => {}
            Enqueued::StartedTx(t) => self.schedule(t, Event::LinkTx(id32(l))),
            Enqueued::InFlight {
                arrival, was_empty, ..
            } => {
                if was_empty && !self.is_folded(l) {
                    self.schedule(arrival, Event::LinkArrive(id32(l)));
                } else if !self.fold_pending.is_empty() {
                    self.fold_in(l, pkt, arrival);
                }
            }
        }
    }

    fn on_link_tx(&mut self, l: usize) {
        let (next, pipe_was_empty, pkt) = self.links[l].finish_tx(self.now);
        if pipe_was_empty && let Some(t) = self.links[l].next_arrival() {
            self.schedule(t, Event::LinkArrive(id32(l)));
        }
        if let Some(t) = next {
            self.schedule(t, Event::LinkTx(id32(l)));
        }
        // An AQM on a NIC may have dropped skbs' last segments when it dequeued.
        if self.links[l].aqm.is_some() {
            self.nic_freed(l);
        }
        // Evented FIFO and AQM: a NIC reports an skb's completion at the end of the
        // transmission of its last segment.
        if let (Owner::Flow(FlowId(f)), true) = (pkt.owner, pkt.skb_bytes > 0 && pkt.is_data())
            && self.routes[pkt.route as usize].nic == id32(l)
            && !self.routes[pkt.route as usize].vio
            && self.flows[f as usize].track_tx
        {
            if self.tx_polls.is_empty() {
                self.tx_complete(f as usize, self.now, pkt.skb_bytes);
            } else {
                self.nic_tx_end(f as usize, l, pkt.skb_bytes);
            }
        }
    }
}
