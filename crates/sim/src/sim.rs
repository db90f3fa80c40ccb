//! The discrete-event engine: one event queue, links, hosts, routers, TCP flows, probes and the
//! sampler.
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
//! waits while its CPU schedule has it descheduled. TSQ kicks (a throttled socket freed by a
//! completion reported at once) run after the event that caused them, at the same instant.

use std::collections::{BTreeMap, VecDeque};

use cclab_cc::{Dur, INFINITE_SSTHRESH, Time};

use crate::config::{
    ACK_WIRE_BYTES, ConfigError, FlowId, HostQdisc, LossConfig, MAX_LINK_DELAY, NodeId, NodeKind,
    ProbeId, QueueConfig, QueueLimit, SimConfig,
};
use crate::events::EventQueue;
use crate::histogram::Histogram;
use crate::host::cpu::CpuClock;
use crate::host::fq::{Dequeued, Fq};
use crate::link::{Enqueued, IntervalStats, Link};
use crate::packet::{Ecn, Owner, Packet, Payload};
use crate::queue::Qdisc;
use crate::results::{
    ClassSummary, EngineStats, FlowResult, FlowSeries, FlowSummary, ProbeResult, ProbeSummary,
    QueueResult, QueueSeries, QueueSummary, Results,
};
use crate::rng;
use crate::tcp::receiver::Receiver;
use crate::tcp::sender::{Outgoing, Sender, SocketHost, TxNote};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Event {
    LinkTx(u32),
    LinkArrive(u32),
    FlowStart(u32),
    FlowStop(u32),
    SenderWake(u32),
    ReceiverWake(u32),
    ProbeSend(u32),
    /// A host's fq may release a packet (stale unless it matches `HostRt::fq_wake`).
    FqRelease(u32),
    /// A descheduled host with work waiting runs again.
    HostResume(u32),
    /// A link's next propagation-delay change is due (see `link.rs`).
    LinkDelay(u32),
    Sample,
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
    series: FlowSeries,
    last_bytes: u64,
    last_retrans: u64,
    last_lost: u64,
}

impl FlowRt {
    fn bytes_delivered(&self) -> u64 {
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

#[derive(Debug)]
struct QueueMon {
    link: usize,
    last_tx_bytes: u64,
    series: QueueSeries,
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
}

/// `RouteInfo::nic` of a route without a NIC that holds packets.
const NO_NIC: u32 = u32::MAX;

/// Work that waits for a descheduled host, in the order it came due.
#[derive(Clone, Copy, Debug)]
enum Deferred {
    Packet(Packet),
    SenderWake(u32, Time),
    ReceiverWake(u32, Time),
    FlowStart(u32),
    FlowStop(u32),
    ProbeSend(u32),
    FqRelease(Time),
    TsqKick(u32),
}

/// A node's host model at run time (routers have the defaults and never use them).
#[derive(Debug, Default)]
struct HostRt {
    cpu: Option<CpuClock>,
    fq: Option<Box<Fq>>,
    /// The egress link fq feeds (None: infinitely fast).
    nic: Option<u32>,
    fq_wake: Option<Time>,
    inbox: VecDeque<Deferred>,
    resume_at: Option<Time>,
}

/// Engine choices that do not change what is simulated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EngineOptions {
    /// Schedule drop-tail FIFOs analytically at enqueue time (no per-packet transmission events).
    /// This only saves work: it simulates the same system as the evented mode, except that a
    /// departure and an arrival at the same nanosecond are ordered departure-first (see
    /// `link.rs`).
    pub analytic_fifo: bool,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            analytic_fifo: true,
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
    /// follow the flows.
    paths: Vec<Box<[u32]>>,
    /// Per route: NIC, consuming host, fq flow, cut-through.
    routes: Vec<RouteInfo>,
    /// End of the run.
    end: Time,
    hosts: Vec<HostRt>,
    flows: Vec<FlowRt>,
    probes: Vec<ProbeRt>,
    monitors: Vec<QueueMon>,
    out: Vec<Outgoing>,
    fq_buf: Vec<Packet>,
    /// Senders to kick after the current event (TSQ), in order.
    kicks: Vec<u32>,
    /// Data segments refused by fq qdiscs.
    fq_data_drops: u64,
    stats: EngineStats,
}

impl Simulation {
    /// Validate `cfg` and build the run.
    ///
    /// # Errors
    /// A [`ConfigError`] naming what is inconsistent.
    pub fn new(cfg: SimConfig) -> Result<Simulation, ConfigError> {
        Self::with_options(cfg, EngineOptions::default())
    }

    /// Like [`Simulation::new`] with explicit engine options.
    ///
    /// # Errors
    /// A [`ConfigError`] naming what is inconsistent.
    pub fn with_options(cfg: SimConfig, opts: EngineOptions) -> Result<Simulation, ConfigError> {
        validate(&cfg)?;
        let paths = compute_paths(&cfg)?;
        let links: Vec<Link> = cfg
            .links
            .iter()
            .enumerate()
            .map(|(i, l)| Link::new(l, i as u32, cfg.seed, opts.analytic_fifo))
            .collect();
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
                nic: route_nic[r].unwrap_or(NO_NIC),
                dst,
                fq: route_fq[r],
                cut: nic_only[src as usize] && paths[r].len() > 1,
                dst_sched: hosts[dst as usize].cpu.is_some(),
                egress: if hosts[src as usize].fq.is_some() {
                    Egress::Fq
                } else if route_nic[r].is_some() {
                    Egress::Nic
                } else {
                    Egress::Direct
                },
            })
            .collect();
        let flows = cfg
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let h = &cfg.nodes[f.src.0 as usize].host;
                let fq = matches!(h.qdisc, HostQdisc::Fq(_));
                let instant = !fq && route_nic[2 * i].is_none();
                let sender = Sender::with_host(
                    f,
                    rng::cc_seed(cfg.seed, i as u32),
                    SocketHost::new(h, instant),
                );
                let ecn = sender.ecn_mode();
                FlowRt {
                    sender,
                    receiver: Receiver::new(f.ack_every, f.delack_timeout).with_ecn(ecn),
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
                    series: FlowSeries::default(),
                    last_bytes: 0,
                    last_retrans: 0,
                    last_lost: 0,
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
        let monitors = cfg
            .links
            .iter()
            .enumerate()
            .filter(|(_, l)| l.monitor && l.rate_bps.is_some())
            .map(|(i, _)| QueueMon {
                link: i,
                last_tx_bytes: 0,
                series: QueueSeries::default(),
            })
            .collect();
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
            monitors,
            out: Vec::new(),
            fq_buf: Vec::new(),
            kicks: Vec::new(),
            fq_data_drops: 0,
            stats: EngineStats::default(),
            cfg,
        };
        // One event per delay change, each scheduling the next of its link.
        for l in 0..sim.links.len() {
            if let Some(t) = sim.links[l].next_delay_change() {
                sim.schedule(t, Event::LinkDelay(l as u32));
            }
        }
        let flow_times: Vec<_> = sim.cfg.flows.iter().map(|f| (f.start, f.stop)).collect();
        for (i, (start, stop)) in flow_times.into_iter().enumerate() {
            sim.schedule(start, Event::FlowStart(i as u32));
            if let Some(s) = stop {
                sim.schedule(s, Event::FlowStop(i as u32));
            }
        }
        let probe_starts: Vec<_> = sim.cfg.probes.iter().map(|p| p.start).collect();
        for (i, start) in probe_starts.into_iter().enumerate() {
            sim.schedule(start, Event::ProbeSend(i as u32));
        }
        let first_sample = Time::ZERO + sim.cfg.sample_interval;
        sim.schedule(first_sample, Event::Sample);
        Ok(sim)
    }

    fn schedule(&mut self, time: Time, ev: Event) {
        self.events.push(time, ev);
    }

    /// Run to the end and return the results.
    #[must_use]
    pub fn run(mut self) -> Results {
        let end = Time::ZERO + self.cfg.duration;
        while let Some(&e) = self.events.peek() {
            if e.time() > end {
                break;
            }
            self.now = e.time();
            self.stats.events += 1;
            if let Event::LinkArrive(l) = e.ev {
                // The commonest event: reuse its heap slot for the link's next arrival (one
                // sift-down instead of a pop and a push).
                let l = l as usize;
                let pkt = self.links[l].wake(self.now);
                match self.links[l].next_wake() {
                    Some(t) => self.events.replace_top(t, e.ev),
                    None => {
                        self.events.pop();
                    }
                }
                if let Some(pkt) = pkt {
                    self.forward(&pkt, pkt.hop);
                }
            } else {
                self.events.pop();
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
            Event::FqRelease(h) => self.fq_release(h as usize, self.now),
            Event::HostResume(h) => self.resume(h as usize),
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
        }
    }

    // ----- hosts: CPU schedule -----

    /// Whether host `h` runs now.
    #[inline]
    fn runs(&self, h: u32) -> bool {
        self.hosts[h as usize]
            .cpu
            .is_none_or(|c| c.running(self.now))
    }

    /// Keep `item` until descheduled host `h` runs again.
    #[cold]
    #[inline(never)]
    fn defer(&mut self, h: u32, item: Deferred) {
        self.stats.cpu_deferred += 1;
        let now = self.now;
        let hr = &mut self.hosts[h as usize];
        hr.inbox.push_back(item);
        if hr.resume_at.is_none() {
            let at = hr.cpu.expect("only scheduled hosts defer").next_run(now);
            hr.resume_at = Some(at);
            self.schedule(at, Event::HostResume(h));
        }
    }

    /// Host `h` runs again: process what waited, in order, now.
    #[inline(never)]
    fn resume(&mut self, h: usize) {
        self.hosts[h].resume_at = None;
        self.stats.cpu_resumes += 1;
        let mut inbox = std::mem::take(&mut self.hosts[h].inbox);
        for item in inbox.drain(..) {
            match item {
                Deferred::Packet(p) => self.consume(&p),
                Deferred::SenderWake(f, due) => self.sender_wake(f as usize, due),
                Deferred::ReceiverWake(f, due) => self.receiver_wake(f as usize, due),
                Deferred::FlowStart(f) => self.flow_start(f as usize),
                Deferred::FlowStop(f) => self.flow_stop(f as usize),
                Deferred::ProbeSend(p) => self.on_probe_send(p as usize),
                Deferred::FqRelease(due) => self.fq_release(h, due),
                Deferred::TsqKick(f) => self.sender_kick(f as usize),
            }
        }
        if self.hosts[h].inbox.is_empty() {
            self.hosts[h].inbox = inbox; // keep the allocation
        }
    }

    // ----- flows -----

    fn flow_start(&mut self, f: usize) {
        let h = self.flows[f].src;
        if !self.runs(h) {
            self.defer(h, Deferred::FlowStart(f as u32));
            return;
        }
        self.run_sender(f, Sender::start);
    }

    /// Run one sender operation at `now`, put what it sends on the network and rearm its timer.
    #[inline]
    fn run_sender(&mut self, f: usize, op: impl FnOnce(&mut Sender, Time, &mut Vec<Outgoing>)) {
        let mut out = std::mem::take(&mut self.out);
        op(&mut self.flows[f].sender, self.now, &mut out);
        self.flush(f, &mut out);
        self.out = out;
        self.rearm_sender(f);
    }

    fn flow_stop(&mut self, f: usize) {
        let h = self.flows[f].src;
        if !self.runs(h) {
            self.defer(h, Deferred::FlowStop(f as u32));
            return;
        }
        self.flows[f].sender.stop_app(self.now);
    }

    /// The sender's wakeup that was due at `due` (stale if it was re-armed since).
    fn sender_wake(&mut self, f: usize, due: Time) {
        if self.flows[f].snd_wake != Some(due) {
            return; // stale
        }
        let h = self.flows[f].src;
        if !self.runs(h) {
            self.defer(h, Deferred::SenderWake(f as u32, due));
            return;
        }
        self.flows[f].snd_wake = None;
        self.run_sender(f, Sender::on_timer);
    }

    fn receiver_wake(&mut self, f: usize, due: Time) {
        if self.flows[f].rcv_wake != Some(due) {
            return;
        }
        let h = self.flows[f].dst;
        if !self.runs(h) {
            self.defer(h, Deferred::ReceiverWake(f as u32, due));
            return;
        }
        self.flows[f].rcv_wake = None;
        if let Some(ack) = self.flows[f].receiver.on_delack_timer(self.now) {
            self.send_ack(f, ack);
        }
        self.rearm_receiver(f);
    }

    fn rearm_sender(&mut self, f: usize) {
        if let Some(w) = self.flows[f].sender.next_wakeup() {
            let w = w.max(self.now);
            if self.flows[f].snd_wake.is_none_or(|p| w < p) {
                self.flows[f].snd_wake = Some(w);
                self.schedule(w, Event::SenderWake(f as u32));
            }
        }
    }

    fn rearm_receiver(&mut self, f: usize) {
        if let Some(w) = self.flows[f].receiver.delack_deadline() {
            let w = w.max(self.now);
            if self.flows[f].rcv_wake.is_none_or(|p| w < p) {
                self.flows[f].rcv_wake = Some(w);
                self.schedule(w, Event::ReceiverWake(f as u32));
            }
        }
    }

    // ----- TX completions and TSQ -----

    /// The device reports that `bytes` of flow `f`'s data complete at `at` (see `host/`).
    #[inline]
    fn tx_complete(&mut self, f: usize, at: Time, bytes: u32) {
        match self.flows[f].sender.tx_completed(at, bytes, self.now) {
            TxNote::None => {}
            TxNote::Rearm => self.rearm_sender(f),
            TxNote::Kick => {
                if !self.flows[f].kick_queued {
                    self.flows[f].kick_queued = true;
                    self.kicks.push(f as u32);
                }
            }
        }
    }

    #[cold]
    #[inline(never)]
    fn run_kicks(&mut self) {
        let mut i = 0;
        while i < self.kicks.len() {
            let f = self.kicks[i] as usize;
            self.flows[f].kick_queued = false;
            self.sender_kick(f);
            i += 1;
        }
        self.kicks.clear();
    }

    /// The TSQ tasklet of flow `f`'s socket.
    fn sender_kick(&mut self, f: usize) {
        let h = self.flows[f].src;
        if !self.runs(h) {
            self.defer(h, Deferred::TsqKick(f as u32));
            return;
        }
        self.run_sender(f, Sender::tsq_kick);
    }

    // ----- hosts: egress -----

    /// Put a flow's outgoing segments into its host's qdisc.
    fn flush(&mut self, f: usize, out: &mut Vec<Outgoing>) {
        let route = 2 * f as u32;
        let r = self.routes[route as usize];
        let owner = Owner::Flow(FlowId(f as u32));
        let dscp = self.flows[f].dscp;
        match r.egress {
            Egress::Direct => {
                for o in out.drain(..) {
                    self.stats.data_packets_sent += 1;
                    let pkt = data_packet(route, owner, dscp, &o);
                    self.forward(&pkt, 0);
                }
            }
            Egress::Nic => {
                // One TX completion per skb, when its last segment is done (`skb_done`: the
                // latest completion known among its segments).
                let mut skb_done = None;
                for o in out.drain(..) {
                    self.stats.data_packets_sent += 1;
                    let pkt = data_packet(route, owner, dscp, &o);
                    skb_done = skb_done.max(self.nic_offer(r.nic, r.cut, &pkt));
                    if o.skb_bytes > 0 {
                        if let Some(at) = skb_done {
                            self.tx_complete(f, at, o.skb_bytes);
                        }
                        skb_done = None;
                    }
                }
            }
            Egress::Fq => self.flush_fq(f, self.flows[f].src as usize, out),
        }
    }

    /// [`Simulation::flush`] into an fq qdisc.
    #[inline(never)]
    fn flush_fq(&mut self, f: usize, h: usize, out: &mut Vec<Outgoing>) {
        let route = 2 * f as u32;
        let track = self.flows[f].track_tx;
        let dscp = self.flows[f].dscp;
        let qf = self.routes[route as usize].fq;
        for o in out.drain(..) {
            self.stats.data_packets_sent += 1;
            let pkt = data_packet(route, Owner::Flow(FlowId(f as u32)), dscp, &o);
            let fq = self.hosts[h].fq.as_mut().expect("fq host");
            if fq.enqueue(self.now, qf, o.tstamp, pkt, o.skb_segs).is_err() {
                // fq refuses whole skbs: the skb is freed now.
                self.stats.fq_drops += 1;
                self.fq_data_drops += 1;
                if track && o.skb_bytes > 0 {
                    self.tx_complete(f, self.now, o.skb_bytes);
                }
            }
        }
        self.fq_service(h);
    }

    /// A packet created on host `h` that is not TCP data (ACK, probe): through the host's
    /// qdisc, stamped with its hand-off time.
    #[inline]
    fn host_send(&mut self, h: u32, pkt: Packet) {
        let r = self.routes[pkt.route as usize];
        match r.egress {
            Egress::Direct => self.forward(&pkt, 0),
            Egress::Nic => {
                self.nic_offer(r.nic, r.cut, &pkt);
            }
            Egress::Fq => self.fq_send(h as usize, r.fq, pkt),
        }
    }

    /// A packet that is not TCP data into host `h`'s fq (flow `qf`).
    #[inline(never)]
    fn fq_send(&mut self, h: usize, qf: u32, pkt: Packet) {
        let fq = self.hosts[h].fq.as_mut().expect("fq host");
        // A refused ACK or probe is simply lost.
        if fq.enqueue(self.now, qf, self.now, pkt, 1).is_ok() {
            self.fq_service(h);
        } else {
            self.stats.fq_drops += 1;
        }
    }

    /// Hand `pkt` (at the start of its route) to its host's NIC. Returns when its TX completes
    /// if that is known now: the end of its serialisation (analytic FIFO), now (dropped, or an
    /// infinitely fast NIC); `None` when the evented FIFO will report it at the end of the
    /// transmission.
    #[inline(always)]
    fn nic_send(&mut self, pkt: &Packet) -> Option<Time> {
        let route = self.routes[pkt.route as usize];
        if route.nic == NO_NIC {
            self.forward(pkt, 0);
            return Some(self.now);
        }
        self.nic_offer(route.nic, route.cut, pkt)
    }

    /// Hand `pkt` (at the start of its route) to NIC link `l`; `cut`: the route allows
    /// cut-through. Returns when its TX completes, as [`Simulation::nic_send`].
    ///
    /// Cut-through: when the packet reaches the far end of the NIC before every pending event
    /// (and the run's end), its arrival event would be the next one processed; the NIC hands it
    /// to the next link now, at that time, without an event. Only the rest of this event comes
    /// in between, and an event only ever runs one host (its timers, arrivals, qdisc and TSQ
    /// kicks); that host can only reach the next link through this NIC (every route of the
    /// host starts there), whose FIFO puts anything later behind this packet. The schedule is
    /// the same (only the tie order of events at one nanosecond can differ, as between the FIFO
    /// modes); this saves an event on the hop every packet takes.
    #[inline(always)]
    fn nic_offer(&mut self, l: u32, cut: bool, pkt: &Packet) -> Option<Time> {
        let horizon = if cut {
            self.events
                .peek_time()
                .min(Time(self.end.0.saturating_add(1)))
        } else {
            Time::ZERO
        };
        if let Some((arrival, tx_end)) =
            self.links[l as usize].try_cut(self.now, pkt.wire_bytes, horizon)
        {
            let now = self.now;
            self.now = arrival;
            self.forward(pkt, 1);
            self.now = now;
            return Some(tx_end);
        }
        match self.links[l as usize].offer(self.now, pkt, 1, horizon) {
            Enqueued::CutThrough { arrival, tx_end } => {
                let now = self.now;
                self.now = arrival;
                self.forward(pkt, 1);
                self.now = now;
                Some(tx_end)
            }
            Enqueued::InFlight {
                arrival,
                was_empty,
                tx_end,
            } => {
                if was_empty {
                    self.schedule(arrival, Event::LinkArrive(l));
                }
                Some(tx_end)
            }
            Enqueued::LostOnWire(tx_end) => Some(tx_end),
            Enqueued::Dropped => Some(self.now),
            Enqueued::Queued => None,
            Enqueued::StartedTx(t) => {
                self.schedule(t, Event::LinkTx(l));
                None
            }
        }
    }

    /// Release what host `h`'s fq has due while its NIC is free; arm the next release.
    #[inline(never)]
    fn fq_service(&mut self, h: usize) {
        let mut buf = std::mem::take(&mut self.fq_buf);
        loop {
            if let Some(l) = self.hosts[h].nic {
                let free = self.links[l as usize].busy_until();
                if free > self.now {
                    self.fq_arm(h, free);
                    break;
                }
            }
            let fq = self.hosts[h].fq.as_mut().expect("fq host");
            match fq.dequeue(self.now, &mut buf) {
                Dequeued::Skb => {
                    let mut skb_done = None;
                    for pkt in buf.drain(..) {
                        let done = self.nic_send(&pkt);
                        skb_done = skb_done.max(done);
                        if let (Owner::Flow(FlowId(f)), true, Some(at)) =
                            (pkt.owner, pkt.skb_bytes > 0 && pkt.is_data(), skb_done)
                            && self.flows[f as usize].track_tx
                        {
                            self.tx_complete(f as usize, at, pkt.skb_bytes);
                        }
                    }
                }
                Dequeued::Later(t) => {
                    self.fq_arm(h, t);
                    break;
                }
                Dequeued::Empty => break,
            }
        }
        self.fq_buf = buf;
    }

    fn fq_arm(&mut self, h: usize, t: Time) {
        let hr = &mut self.hosts[h];
        if hr.fq_wake.is_none_or(|w| t < w) {
            hr.fq_wake = Some(t);
            self.schedule(t, Event::FqRelease(h as u32));
        }
    }

    fn fq_release(&mut self, h: usize, due: Time) {
        if self.hosts[h].fq_wake != Some(due) {
            return; // stale
        }
        if !self.runs(h as u32) {
            self.defer(h as u32, Deferred::FqRelease(due));
            return;
        }
        self.hosts[h].fq_wake = None;
        self.fq_service(h);
    }

    #[inline]
    fn send_ack(&mut self, f: usize, ack: Payload) {
        let pkt = Packet {
            route: 2 * f as u32 + 1,
            hop: 0,
            wire_bytes: ACK_WIRE_BYTES,
            owner: Owner::Flow(FlowId(f as u32)),
            skb_bytes: 0,
            dscp: self.flows[f].dscp,
            // Pure ACKs are not ECN-capable (RFC 3168 §6.1.4).
            ecn: Ecn::NotEct,
            payload: ack,
        };
        self.host_send(self.flows[f].dst, pkt);
    }

    /// Route of probe `p`'s requests (`+ 1`: its replies).
    fn probe_route(&self, p: usize) -> u32 {
        (2 * (self.flows.len() + p)) as u32
    }

    /// Move a packet on (just created, or just arrived at the end of a link; `hop` = index of
    /// its next link on its route): consume it at the end of its route, or enqueue it on that
    /// link (which keeps it with `hop + 1`).
    #[inline]
    fn forward(&mut self, pkt: &Packet, hop: u32) {
        let path = &self.paths[pkt.route as usize];
        let Some(&l) = path.get(hop as usize) else {
            self.consume(pkt);
            return;
        };
        let l = l as usize;
        match self.links[l].offer(self.now, pkt, hop + 1, Time::ZERO) {
            Enqueued::Queued
            | Enqueued::Dropped
            | Enqueued::LostOnWire(_)
            | Enqueued::CutThrough { .. } => {}
            Enqueued::StartedTx(t) => self.schedule(t, Event::LinkTx(l as u32)),
            Enqueued::InFlight {
                arrival, was_empty, ..
            } => {
                if was_empty {
                    self.schedule(arrival, Event::LinkArrive(l as u32));
                }
            }
        }
    }

    fn on_link_tx(&mut self, l: usize) {
        let (next, pipe_was_empty, pkt) = self.links[l].finish_tx(self.now);
        if pipe_was_empty && let Some(t) = self.links[l].next_arrival() {
            self.schedule(t, Event::LinkArrive(l as u32));
        }
        if let Some(t) = next {
            self.schedule(t, Event::LinkTx(l as u32));
        }
        // Evented FIFO: a NIC reports an skb's completion at the end of the transmission of
        // its last segment.
        if let (Owner::Flow(FlowId(f)), true) = (pkt.owner, pkt.skb_bytes > 0 && pkt.is_data())
            && self.routes[pkt.route as usize].nic == l as u32
            && self.flows[f as usize].track_tx
        {
            self.tx_complete(f as usize, self.now, pkt.skb_bytes);
        }
    }

    #[inline]
    fn consume(&mut self, pkt: &Packet) {
        let route = &self.routes[pkt.route as usize];
        let h = route.dst;
        if route.dst_sched && !self.runs(h) {
            self.defer(h, Deferred::Packet(*pkt));
            return;
        }
        match (pkt.owner, &pkt.payload) {
            (
                Owner::Flow(FlowId(f)),
                &Payload::Data {
                    seq, tsval, cwr, ..
                },
            ) => {
                let f = f as usize;
                self.stats.data_packets_delivered += 1;
                let now = self.now;
                let ack = self.flows[f]
                    .receiver
                    .on_data(now, seq, tsval, pkt.ecn, cwr);
                let fr = &mut self.flows[f];
                if fr.completed_at.is_none()
                    && let Some(n) = fr.sender.total_segments()
                    && fr.receiver.segments_delivered >= n
                {
                    fr.completed_at = Some(now);
                }
                if let Some(a) = ack {
                    self.send_ack(f, a);
                }
                self.rearm_receiver(f);
            }
            (Owner::Flow(FlowId(f)), payload @ Payload::Ack { .. }) => {
                self.run_sender(f as usize, |s, now, out| s.on_ack(now, payload, out));
            }
            (Owner::Probe(ProbeId(p)), &Payload::ProbeRequest { seq, sent }) => {
                let reply = Packet {
                    route: self.probe_route(p as usize) + 1,
                    hop: 0,
                    wire_bytes: self.probes[p as usize].size,
                    owner: pkt.owner,
                    skb_bytes: 0,
                    dscp: pkt.dscp,
                    ecn: Ecn::NotEct,
                    payload: Payload::ProbeReply { seq, sent },
                };
                self.host_send(h, reply);
            }
            (Owner::Probe(ProbeId(p)), &Payload::ProbeReply { seq, sent }) => {
                let rtt = self.now.saturating_since(sent);
                let pr = &mut self.probes[p as usize];
                pr.t_s.push(sent.as_secs_f64());
                pr.seq.push(seq);
                pr.rtt_ms.push(rtt.as_millis_f64());
                pr.hist.record(rtt.as_nanos());
            }
            _ => {}
        }
    }

    fn on_probe_send(&mut self, p: usize) {
        let h = self.probes[p].src;
        if !self.runs(h) {
            self.defer(h, Deferred::ProbeSend(p as u32));
            return;
        }
        let now = self.now;
        let pr = &mut self.probes[p];
        if pr.stop.is_some_and(|s| now >= s) {
            return;
        }
        let seq = pr.next_seq;
        pr.next_seq += 1;
        let (size, dscp, next) = (pr.size, pr.dscp, now + pr.interval);
        let pkt = Packet {
            route: self.probe_route(p),
            hop: 0,
            wire_bytes: size,
            owner: Owner::Probe(ProbeId(p as u32)),
            skb_bytes: 0,
            dscp,
            ecn: Ecn::NotEct,
            payload: Payload::ProbeRequest { seq, sent: now },
        };
        self.host_send(h, pkt);
        self.schedule(next, Event::ProbeSend(p as u32));
    }

    fn sample(&mut self) {
        let t = self.now.as_secs_f64();
        let secs = self.cfg.sample_interval.as_secs_f64();
        for fr in &mut self.flows {
            let bytes = fr.bytes_delivered();
            let s = &fr.sender;
            let st = s.cwnd_state();
            let c = s.counters;
            let series = &mut fr.series;
            series.t_s.push(t);
            series
                .goodput_bps
                .push((bytes - fr.last_bytes) as f64 * 8.0 / secs);
            series.cwnd.push(st.cwnd);
            series
                .ssthresh
                .push((st.ssthresh < INFINITE_SSTHRESH).then_some(st.ssthresh));
            series.srtt_ms.push(s.srtt().map(Dur::as_millis_f64));
            series
                .pacing_rate_bps
                .push(s.pacing_rate().map(|r| r as f64 * 8.0));
            series.in_flight.push(s.in_flight());
            series.delivery_rate_bps.push(s.last_delivery_rate_bps());
            series
                .retransmits
                .push((c.retransmits - fr.last_retrans) as u32);
            series.losses.push((c.lost - fr.last_lost) as u32);
            series.state.push(if fr.start > self.now {
                "not_started"
            } else {
                s.cc().state()
            });
            series.tsq_budget.push(s.tsq_budget());
            series.tsq_shift.push(s.tsq_shift());
            series.below_tcp.push(s.below_tcp(self.now));
            let n = series.t_s.len();
            let cc_stats = &mut series.cc_stats;
            s.cc().stats(&mut |k, v| {
                let col = cc_stats.entry(k).or_default();
                col.resize(n - 1, None);
                col.push(Some(v));
            });
            for col in cc_stats.values_mut() {
                col.resize(n, None);
            }
            fr.last_bytes = bytes;
            fr.last_retrans = c.retransmits;
            fr.last_lost = c.lost;
        }
        for m in &mut self.monitors {
            let link = &mut self.links[m.link];
            let tx_done = link.tx_bytes_done(self.now);
            let tx_bytes = tx_done - m.last_tx_bytes;
            m.last_tx_bytes = tx_done;
            let iv = std::mem::take(&mut link.interval);
            let s = &mut m.series;
            s.t_s.push(t);
            s.backlog_packets.push(link.backlog_packets());
            s.backlog_bytes.push(link.backlog_bytes());
            let IntervalStats {
                sojourn_sum,
                sojourn_max,
                dequeued,
                drops,
                ce_marks,
                class_sojourn,
            } = iv;
            s.ce_marks.push(ce_marks);
            if let Some(aqm) = &link.aqm {
                let names = aqm.qdisc.class_names();
                s.class_sojourn_mean_ms.resize(names.len(), Vec::new());
                for (c, col) in s.class_sojourn_mean_ms.iter_mut().enumerate() {
                    let (sum, n) = class_sojourn[c];
                    col.push((n > 0).then(|| sum as f64 / n as f64 * 1e-6));
                }
                s.class_backlog_packets.resize(names.len(), Vec::new());
                for (c, col) in s.class_backlog_packets.iter_mut().enumerate() {
                    col.push(aqm.qdisc.class_backlog(c));
                }
            }
            s.sojourn_mean_ms
                .push((dequeued > 0).then(|| sojourn_sum as f64 / dequeued as f64 * 1e-6));
            s.sojourn_max_ms
                .push((dequeued > 0).then_some(sojourn_max as f64 * 1e-6));
            s.drops.push(drops);
            s.throughput_bps.push(tx_bytes as f64 * 8.0 / secs);
        }
    }

    fn finish(mut self) -> Results {
        let end = self.now;
        let duration = self.cfg.duration.as_secs_f64();
        let mut flows = Vec::with_capacity(self.flows.len());
        for (fr, fc) in self.flows.iter_mut().zip(&self.cfg.flows) {
            let bytes = fr.bytes_delivered();
            let stop = fr
                .completed_at
                .unwrap_or_else(|| fr.stop.map_or(end, |s| s.min(end)));
            let active = stop.saturating_since(fr.start).as_secs_f64();
            let s = &fr.sender;
            let h = &s.rtt_hist;
            let ms = |v: Option<u64>| v.map(|x| x as f64 * 1e-6);
            let summary = FlowSummary {
                goodput_bps: if active > 0.0 {
                    bytes as f64 * 8.0 / active
                } else {
                    0.0
                },
                bytes_delivered: bytes,
                segments_sent: s.counters.segments_sent,
                retransmits: s.counters.retransmits,
                segments_lost: s.counters.lost,
                fast_recoveries: s.counters.fast_recoveries,
                rto_count: s.counters.rtos,
                tlp_count: s.counters.tlps,
                rto_times_s: s.rto_times.iter().map(|t| t.as_secs_f64()).collect(),
                rtt_mean_ms: h.mean().map(|x| x * 1e-6),
                rtt_p50_ms: ms(h.quantile(0.5)),
                rtt_p95_ms: ms(h.quantile(0.95)),
                rtt_p99_ms: ms(h.quantile(0.99)),
                fct_s: fr
                    .completed_at
                    .map(|t| t.saturating_since(fr.start).as_secs_f64()),
                complete: fr.size.is_none() || fr.completed_at.is_some(),
                min_cwnd: s.counters.min_cwnd,
                ecn: s.ecn_mode().name(),
                ce_delivered: s.delivered_ce(),
                ce_echoes: s.counters.ce_echoes,
                ecn_reductions: s.counters.ecn_reductions,
            };
            flows.push(FlowResult {
                name: fc.name.clone(),
                controller: fc.cc.name().to_owned(),
                summary,
                series: std::mem::take(&mut fr.series),
                trace: fr.sender.take_trace(),
            });
        }
        for m in &self.monitors {
            self.links[m.link].settle(end);
        }
        let queues = self
            .monitors
            .iter_mut()
            .map(|m| {
                let link = &mut self.links[m.link];
                let tx_bytes = link.tx_bytes_done(end);
                let h = &link.sojourn;
                let ms = |v: Option<u64>| v.map(|x| x as f64 * 1e-6);
                QueueResult {
                    name: self.cfg.links[m.link].name.clone(),
                    summary: QueueSummary {
                        enqueued: link.enqueued,
                        drops: link.drops,
                        link_losses: link.link_losses,
                        delay_mean_ms: h.mean().map(|x| x * 1e-6),
                        delay_p95_ms: ms(h.quantile(0.95)),
                        delay_max_ms: ms(h.max()),
                        throughput_bps: tx_bytes as f64 * 8.0 / duration.max(1e-9),
                        max_backlog_packets: link.max_backlog,
                        discipline: link.aqm.as_ref().map_or("fifo", |a| a.qdisc.name()),
                        aqm_drops: link
                            .aqm
                            .as_ref()
                            .map_or(0, |a| a.tally.class.iter().map(|c| c.aqm_drops).sum()),
                        ce_marks: link.aqm.as_ref().map_or(0, |a| a.ce_marks()),
                        delay_p50_ms: ms(h.quantile(0.5)),
                        delay_p99_ms: ms(h.quantile(0.99)),
                        classes: link.aqm.as_ref().map_or_else(Vec::new, |a| {
                            a.qdisc
                                .class_names()
                                .iter()
                                .enumerate()
                                .map(|(c, &name)| {
                                    let t = &a.tally.class[c];
                                    let h = link.class_sojourn(c);
                                    ClassSummary {
                                        name,
                                        enqueued: t.enqueued,
                                        overflow_drops: t.overflow_drops,
                                        aqm_drops: t.aqm_drops,
                                        ce_marks: t.ce_marks,
                                        delay_mean_ms: h.mean().map(|x| x * 1e-6),
                                        delay_p50_ms: ms(h.quantile(0.5)),
                                        delay_p95_ms: ms(h.quantile(0.95)),
                                        delay_p99_ms: ms(h.quantile(0.99)),
                                        delay_max_ms: ms(h.max()),
                                    }
                                })
                                .collect()
                        }),
                    },
                    series: std::mem::take(&mut m.series),
                }
            })
            .collect();
        let probes = self
            .probes
            .iter_mut()
            .zip(&self.cfg.probes)
            .map(|(p, pc)| {
                let ms = |v: Option<u64>| v.map(|x| x as f64 * 1e-6);
                ProbeResult {
                    name: pc.name.clone(),
                    kind: pc.kind.name(),
                    dscp: pc.dscp,
                    seq: std::mem::take(&mut p.seq),
                    sent: p.next_seq,
                    summary: ProbeSummary {
                        answered: p.hist.len(),
                        rtt_mean_ms: p.hist.mean().map(|x| x * 1e-6),
                        rtt_p50_ms: ms(p.hist.quantile(0.5)),
                        rtt_p95_ms: ms(p.hist.quantile(0.95)),
                        rtt_p99_ms: ms(p.hist.quantile(0.99)),
                    },
                    t_s: std::mem::take(&mut p.t_s),
                    rtt_ms: std::mem::take(&mut p.rtt_ms),
                }
            })
            .collect();
        for l in &mut self.links {
            l.settle(end);
        }
        let mut stats = self.stats;
        stats.peak_pending_events = self.events.peak_len() as u64;
        stats.data_packets_dropped =
            self.links.iter().map(|l| l.data_dropped).sum::<u64>() + self.fq_data_drops;
        // Inside the network: links, host qdiscs, and arrivals waiting for a descheduled host.
        stats.data_packets_in_network = self.links.iter().map(Link::data_inside).sum::<u64>()
            + self
                .hosts
                .iter()
                .map(|h| {
                    let waiting = h
                        .inbox
                        .iter()
                        .filter(|d| matches!(d, Deferred::Packet(p) if p.is_data()))
                        .count() as u64;
                    waiting + h.fq.as_ref().map_or(0, |q| q.data_inside())
                })
                .sum::<u64>();
        for fr in &self.flows {
            stats.tsq_throttles += fr.sender.counters.tsq_throttles;
            stats.skbs_sent += fr.sender.counters.skbs;
        }
        Results {
            seed: self.cfg.seed,
            duration_s: duration,
            flows,
            queues,
            probes,
            engine: stats,
        }
    }
}

fn validate(cfg: &SimConfig) -> Result<(), ConfigError> {
    let n = cfg.nodes.len();
    let node = |what: String, id: NodeId| -> Result<(), ConfigError> {
        if (id.0 as usize) < n {
            Ok(())
        } else {
            Err(ConfigError::NoSuchNode {
                what,
                node: id.0,
                count: n,
            })
        }
    };
    let invalid = |what: String, problem: &str| ConfigError::Invalid {
        what,
        problem: problem.into(),
    };
    if cfg.duration == Dur::ZERO {
        return Err(invalid("duration".into(), "must be positive"));
    }
    if cfg.sample_interval == Dur::ZERO {
        return Err(invalid("sample_interval".into(), "must be positive"));
    }
    for (i, nd) in cfg.nodes.iter().enumerate() {
        if nd.kind == NodeKind::Host
            && let Err(problem) = nd.host.validate()
        {
            return Err(invalid(format!("node {i} `{}` host", nd.name), &problem));
        }
    }
    for (i, l) in cfg.links.iter().enumerate() {
        let what = format!("link {i} `{}`", l.name);
        node(what.clone(), l.from)?;
        node(what.clone(), l.to)?;
        if l.rate_bps == Some(0) {
            return Err(invalid(what, "rate must be positive"));
        }
        match &l.queue {
            QueueConfig::DropTail { limit } => {
                if matches!(limit, QueueLimit::Packets(0) | QueueLimit::Bytes(0)) {
                    return Err(invalid(what, "queue limit must be positive"));
                }
            }
            QueueConfig::Aqm(a) => {
                if let Err(problem) = a.validate() {
                    return Err(invalid(format!("{what} {}", a.name()), &problem));
                }
                if cfg
                    .nodes
                    .get(l.from.0 as usize)
                    .is_some_and(|n| n.kind == NodeKind::Host)
                {
                    return Err(invalid(
                        what,
                        "an AQM on a host's NIC is not modelled (it reports no TX completions); \
                         put it on a router's link",
                    ));
                }
            }
        }
        if let LossConfig::Bernoulli { p } = l.loss
            && !(0.0..=1.0).contains(&p)
        {
            return Err(invalid(what, "loss probability must be within [0, 1]"));
        }
        let end = Time::ZERO + cfg.duration;
        let mut prev: Option<Time> = None;
        for &(t, d) in &l.delay_changes {
            if prev.is_some_and(|p| t <= p) {
                return Err(invalid(
                    what,
                    "delay change times must be strictly increasing",
                ));
            }
            if t > end {
                return Err(invalid(
                    what,
                    &format!(
                        "delay change at {:.9} s is after the end of the run ({:.9} s)",
                        t.as_secs_f64(),
                        end.as_secs_f64()
                    ),
                ));
            }
            if d > MAX_LINK_DELAY {
                return Err(invalid(
                    what,
                    &format!(
                        "delay change to {:.9} s exceeds the maximum of {} s",
                        d.as_secs_f64(),
                        MAX_LINK_DELAY.as_secs_f64()
                    ),
                ));
            }
            prev = Some(t);
        }
    }
    for (i, f) in cfg.flows.iter().enumerate() {
        let what = format!("flow {i} `{}`", f.name);
        node(what.clone(), f.src)?;
        node(what.clone(), f.dst)?;
        if f.src == f.dst {
            return Err(invalid(what, "source and destination are the same node"));
        }
        for id in [f.src, f.dst] {
            if cfg.nodes[id.0 as usize].kind != NodeKind::Host {
                return Err(invalid(what, "flows must start and end at hosts"));
            }
        }
        if !(64..=65_000).contains(&f.mss) {
            return Err(invalid(what, "mss must be within 64..=65000 bytes"));
        }
        if !(1..=1_000_000).contains(&f.initial_window) {
            return Err(invalid(
                what,
                "initial window must be within 1..=1000000 segments",
            ));
        }
        if f.ack_every == 0 {
            return Err(invalid(what, "ack_every must be at least 1"));
        }
        if f.size == Some(0) {
            return Err(invalid(what, "size must be positive"));
        }
        if f.app_rate_bps == Some(0) {
            return Err(invalid(what, "app_rate_bps must be positive"));
        }
        if f.stop.is_some_and(|s| s <= f.start) {
            return Err(invalid(what, "stop must be after start"));
        }
    }
    for (i, p) in cfg.probes.iter().enumerate() {
        let what = format!("probe {i} `{}`", p.name);
        node(what.clone(), p.src)?;
        node(what.clone(), p.dst)?;
        if p.interval == Dur::ZERO {
            return Err(invalid(what, "interval must be positive"));
        }
        if p.src == p.dst {
            return Err(invalid(what, "source and destination are the same node"));
        }
    }
    Ok(())
}

/// The hosts' run-time models (CPU clocks, fq instances) and each route's flow index in its
/// source host's fq. An fq host must send everything through one egress link (fq sits in front
/// of one device).
fn build_hosts(
    cfg: &SimConfig,
    paths: &[Box<[u32]>],
    ends: &[(u32, u32)],
    route_nic: &[Option<u32>],
) -> Result<(Vec<HostRt>, Vec<u32>), ConfigError> {
    let mut hosts: Vec<HostRt> = cfg
        .nodes
        .iter()
        .map(|nd| HostRt {
            cpu: (nd.kind == NodeKind::Host)
                .then(|| nd.host.cpu.as_ref().map(CpuClock::new))
                .flatten(),
            ..HostRt::default()
        })
        .collect();
    let mut route_fq = vec![0u32; paths.len()];
    let mut fq_flows = vec![0u32; cfg.nodes.len()];
    let mut egress: Vec<Option<Option<u32>>> = vec![None; cfg.nodes.len()];
    for (r, &(src, _)) in ends.iter().enumerate() {
        let nd = &cfg.nodes[src as usize];
        if nd.kind != NodeKind::Host || !matches!(nd.host.qdisc, HostQdisc::Fq(_)) {
            continue;
        }
        let s = src as usize;
        route_fq[r] = fq_flows[s];
        fq_flows[s] += 1;
        // The device this route leaves through: its first link if that leaves the host
        // (rate-less: never busy), else an instant egress link left out of the route.
        let first = paths[r]
            .first()
            .copied()
            .filter(|&l| cfg.links[l as usize].from.0 == src);
        match egress[s] {
            None => egress[s] = Some(first),
            Some(e) if e == first => {}
            Some(_) => {
                return Err(ConfigError::Invalid {
                    what: format!("node {s} `{}` host", nd.name),
                    problem: "a host with the fq qdisc must send all its traffic through one \
                              egress link"
                        .into(),
                });
            }
        }
        hosts[s].nic = route_nic[r];
    }
    for (s, nd) in cfg.nodes.iter().enumerate() {
        if let HostQdisc::Fq(c) = nd.host.qdisc
            && nd.kind == NodeKind::Host
        {
            hosts[s].fq = Some(Box::new(Fq::new(c, fq_flows[s] as usize)));
        }
    }
    Ok((hosts, route_fq))
}

/// Source routes of every flow and probe, both directions (see `Simulation::paths`): a
/// fewest-hops path, found by breadth-first search over outgoing links in index order (so ties
/// go to the lower link index), with links that have neither rate nor delay (nor a nonzero delay
/// change) left out. A node with a single outgoing link (a host on an access link) is walked
/// through directly, and search trees are cached per starting node, so a dumbbell with thousands
/// of hosts needs two searches, not one per flow.
fn compute_paths(cfg: &SimConfig) -> Result<Vec<Box<[u32]>>, ConfigError> {
    let n = cfg.nodes.len();
    let mut out_links: Vec<Vec<u32>> = vec![Vec::new(); n];
    for (i, l) in cfg.links.iter().enumerate() {
        out_links[l.from.0 as usize].push(i as u32);
    }
    // BFS tree from `root`: the link that first reached each node (u32::MAX: unreached).
    let bfs = |root: usize| -> Vec<u32> {
        let mut via = vec![u32::MAX; n];
        let mut seen = vec![false; n];
        let mut queue = VecDeque::from([root]);
        seen[root] = true;
        while let Some(u) = queue.pop_front() {
            for &li in &out_links[u] {
                let v = cfg.links[li as usize].to.0 as usize;
                if !seen[v] {
                    seen[v] = true;
                    via[v] = li;
                    queue.push_back(v);
                }
            }
        }
        via
    };
    let mut trees: BTreeMap<usize, Vec<u32>> = BTreeMap::new();
    let mut path = |from: NodeId, to: NodeId, what: &str| -> Result<Box<[u32]>, ConfigError> {
        let no_route = || ConfigError::NoRoute {
            what: what.to_owned(),
            from: cfg.nodes[from.0 as usize].name.clone(),
            to: cfg.nodes[to.0 as usize].name.clone(),
        };
        let to = to.0 as usize;
        let mut links = Vec::new();
        let mut cur = from.0 as usize;
        // Forced moves first: a node with one way out has no choice to make.
        while cur != to && out_links[cur].len() == 1 && links.len() <= n {
            let li = out_links[cur][0];
            links.push(li);
            cur = cfg.links[li as usize].to.0 as usize;
        }
        if cur != to {
            let via = trees.entry(cur).or_insert_with(|| bfs(cur));
            if via[to] == u32::MAX {
                return Err(no_route());
            }
            let start = links.len();
            let mut v = to;
            while v != cur {
                let li = via[v];
                links.push(li);
                v = cfg.links[li as usize].from.0 as usize;
            }
            links[start..].reverse();
        }
        links.retain(|&li| {
            let l = &cfg.links[li as usize];
            l.rate_bps.is_some()
                || l.delay != Dur::ZERO
                || l.delay_changes.iter().any(|&(_, d)| d != Dur::ZERO)
        });
        Ok(links.into_boxed_slice())
    };
    let mut paths = Vec::with_capacity(2 * (cfg.flows.len() + cfg.probes.len()));
    // A round trip without any rate or delay would take no time at all: packets would bounce
    // between the hosts within one instant, forever.
    let instant = |what: String| ConfigError::Invalid {
        what,
        problem: "the round trip crosses no link with a rate or a delay".into(),
    };
    for f in &cfg.flows {
        let what = format!("flow `{}`", f.name);
        let (fwd, rev) = (path(f.src, f.dst, &what)?, path(f.dst, f.src, &what)?);
        if fwd.is_empty() && rev.is_empty() {
            return Err(instant(what));
        }
        paths.push(fwd);
        paths.push(rev);
    }
    for p in &cfg.probes {
        let what = format!("probe `{}`", p.name);
        let (fwd, rev) = (path(p.src, p.dst, &what)?, path(p.dst, p.src, &what)?);
        if fwd.is_empty() && rev.is_empty() {
            return Err(instant(what));
        }
        paths.push(fwd);
        paths.push(rev);
    }
    Ok(paths)
}

/// The packet carrying one outgoing data segment of a flow, at the start of `route`.
#[inline(always)]
fn data_packet(route: u32, owner: Owner, dscp: u8, o: &Outgoing) -> Packet {
    Packet {
        route,
        hop: 0,
        wire_bytes: o.wire_bytes,
        owner,
        skb_bytes: o.skb_bytes,
        dscp,
        ecn: o.ecn,
        payload: o.payload,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::Dumbbell;
    use cclab_cc::CcSpec;

    /// The analytic FIFO schedules at enqueue what the evented FIFO does at each transmission
    /// end; both must give the same run. Ties between an arrival and a transmission end at the
    /// same nanosecond may be ordered differently, so flows are compared on aggregates with a
    /// tolerance of 0.5 % (a tie changes at most a handful of packets' fates in 10 s).
    #[test]
    fn analytic_and_evented_fifo_agree() {
        let mut d = Dumbbell::new(50_000_000, Dur::from_millis(10), QueueLimit::Packets(80));
        d.duration = Dur::from_secs(10);
        d.loss = LossConfig::Bernoulli { p: 0.002 };
        d.add_flow(CcSpec::default_for("cubic").unwrap(), Dur::from_millis(3));
        d.add_flow(CcSpec::default_for("newreno").unwrap(), Dur::from_millis(7));
        d.add_ping(Dur::from_millis(100));
        let cfg = d.build();
        let a = Simulation::with_options(
            cfg.clone(),
            EngineOptions {
                analytic_fifo: true,
            },
        )
        .unwrap()
        .run();
        let e = Simulation::with_options(
            cfg,
            EngineOptions {
                analytic_fifo: false,
            },
        )
        .unwrap()
        .run();
        for (fa, fe) in a.flows.iter().zip(&e.flows) {
            let (ba, be) = (
                fa.summary.bytes_delivered as f64,
                fe.summary.bytes_delivered as f64,
            );
            assert!((ba / be - 1.0).abs() < 0.005, "{}: {ba} vs {be}", fa.name);
        }
        let (qa, qe) = (&a.queues[0].summary, &e.queues[0].summary);
        assert!((qa.delay_mean_ms.unwrap() / qe.delay_mean_ms.unwrap() - 1.0).abs() < 0.005);
        assert!((qa.throughput_bps / qe.throughput_bps - 1.0).abs() < 0.005);
        assert_eq!(a.probes[0].summary.answered, e.probes[0].summary.answered);
        // Exactness where no ties can occur: the series of the first second (one flow alone in
        // slow start before the second starts) are identical.
        assert_eq!(a.flows[0].series.cwnd[..3], e.flows[0].series.cwnd[..3]);
    }
}

#[cfg(test)]
mod change_tests {
    use super::*;
    use crate::topology::{BOTTLENECK, BOTTLENECK_REVERSE, Dumbbell};
    use cclab_cc::CcSpec;

    const MS: u64 = 1_000_000;

    /// A ping crosses the bottleneck (100 Mbit/s, 64-byte probes: 5120 ns of serialisation)
    /// and its reverse; with infinitely fast NICs and no other traffic nothing else adds
    /// delay, so each RTT is exact. The one-way delay steps 5 → 15 → 5 → 10 ms at 1, 2 and 3 s
    /// on both directions. The expected RTT of every probe is computed here independently:
    /// each direction gives a packet the delay in force when its serialisation ends, but not
    /// an arrival before the previous one (FIFO). Away from the changes RTT = 2·delay +
    /// 2·5120 ns; after the drop at 2 s, probes sent within 10 ms before it arrive right behind
    /// the last one that took the long way (clamped), which the test checks happened.
    #[test]
    fn probe_rtt_follows_delay_changes_exactly() {
        let mut d = Dumbbell::new(100_000_000, Dur(5 * MS), QueueLimit::Packets(100));
        d.nic_rate_bps = None;
        d.duration = Dur::from_secs(4);
        let changes = vec![
            (Time(1_000 * MS), Dur(15 * MS)),
            (Time(2_000 * MS), Dur(5 * MS)),
            (Time(3_000 * MS), Dur(10 * MS)),
        ];
        d.bottleneck_delay_changes = changes.clone();
        d.add_ping(Dur(MS));
        let cfg = d.build();
        for l in [BOTTLENECK, BOTTLENECK_REVERSE] {
            assert_eq!(cfg.links[l.0 as usize].delay_changes, changes);
        }
        let r = Simulation::new(cfg).unwrap().run();
        let p = &r.probes[0];
        let ser = Dur::serialization(64, 100_000_000).0;
        assert_eq!(ser, 5120);
        let delay_at = |t: u64| {
            changes
                .iter()
                .rev()
                .find(|&&(c, _)| c.0 <= t)
                .map_or(5 * MS, |&(_, d)| d.0)
        };
        // Per direction: (transmitter free at, last arrival).
        let mut state = [(0u64, 0u64); 2];
        let mut cross = |dir: usize, t: u64| {
            let (free, last) = &mut state[dir];
            let end = t.max(*free) + ser;
            *free = end;
            *last = (end + delay_at(end)).max(*last);
            *last
        };
        assert!(p.rtt_ms.len() > 3_900, "{} answered", p.rtt_ms.len());
        let (mut clamped, mut plain) = (0, 0);
        for (k, (&t_s, &rtt)) in p.t_s.iter().zip(&p.rtt_ms).enumerate() {
            let sent = k as u64 * MS;
            assert_eq!(t_s, Time(sent).as_secs_f64());
            let there = cross(0, sent);
            let back = cross(1, there);
            let want = back - sent;
            assert_eq!(rtt, Dur(want).as_millis_f64(), "probe sent at {sent} ns");
            let d = delay_at(sent);
            if want == 2 * d + 2 * ser {
                plain += 1;
            } else {
                clamped += 1;
            }
        }
        // Exact RTTs in the steady parts: 10, 30, 10 and 20 ms (+ 10.24 µs).
        let at = |ms: usize| p.rtt_ms[ms];
        let ser_ms = 2.0 * ser as f64 * 1e-6;
        for (ms, base) in [(500, 10.0), (1_500, 30.0), (2_500, 10.0), (3_500, 20.0)] {
            assert!((at(ms) - base - ser_ms).abs() < 1e-9, "{ms} ms: {}", at(ms));
        }
        // Sent in the 15 ms before the changes at 1 s (rise: nothing to clamp, the delay is
        // the one at each end of serialisation) and 2 s (drop: clamped behind the packets
        // still on the long path).
        assert!(clamped >= 10, "{clamped} clamped, {plain} plain");
    }

    /// Both FIFO modes give the same run with delay changes (analytic mode looks ahead to the
    /// end of each serialisation): the tolerance of `analytic_and_evented_fifo_agree`.
    #[test]
    fn fifo_modes_agree_with_delay_changes() {
        let mut d = Dumbbell::new(50_000_000, Dur::from_millis(10), QueueLimit::Packets(80));
        d.duration = Dur::from_secs(10);
        d.bottleneck_delay_changes = vec![
            (Time::from_secs_f64(3.0), Dur::from_millis(2)),
            (Time::from_secs_f64(6.0), Dur::from_millis(20)),
        ];
        d.add_flow(CcSpec::default_for("cubic").unwrap(), Dur::from_millis(3));
        d.add_flow(CcSpec::default_for("bbr3").unwrap(), Dur::from_millis(7));
        d.add_ping(Dur::from_millis(10));
        let cfg = d.build();
        let run = |analytic_fifo| {
            Simulation::with_options(cfg.clone(), EngineOptions { analytic_fifo })
                .unwrap()
                .run()
        };
        let (a, e) = (run(true), run(false));
        for (fa, fe) in a.flows.iter().zip(&e.flows) {
            let (ba, be) = (
                fa.summary.bytes_delivered as f64,
                fe.summary.bytes_delivered as f64,
            );
            assert!((ba / be - 1.0).abs() < 0.005, "{}: {ba} vs {be}", fa.name);
        }
        let (pa, pe) = (&a.probes[0].summary, &e.probes[0].summary);
        assert_eq!(pa.answered, pe.answered);
        let (ma, me) = (pa.rtt_mean_ms.unwrap(), pe.rtt_mean_ms.unwrap());
        assert!((ma / me - 1.0).abs() < 0.005, "{ma} vs {me}");
    }

    /// Bad delay changes and application rates are configuration errors, not panics.
    #[test]
    fn bad_delay_changes_and_app_rates_are_rejected() {
        let mut d = Dumbbell::new(10_000_000, Dur::from_millis(10), QueueLimit::Packets(50));
        d.duration = Dur::from_secs(5);
        d.add_flow(CcSpec::default_for("cubic").unwrap(), Dur::ZERO);
        let s = Time::from_secs_f64;
        let ms = Dur::from_millis;
        for (changes, why) in [
            (
                vec![(s(2.0), ms(5)), (s(1.0), ms(6))],
                "strictly increasing",
            ),
            (
                vec![(s(1.0), ms(5)), (s(1.0), ms(6))],
                "strictly increasing",
            ),
            (vec![(s(6.0), ms(5))], "after the end"),
            (vec![(s(1.0), Dur::from_secs(11))], "exceeds the maximum"),
        ] {
            d.bottleneck_delay_changes = changes;
            match Simulation::new(d.build()) {
                Err(ConfigError::Invalid { problem, .. }) => {
                    assert!(problem.contains(why), "{problem}")
                }
                other => panic!("{why}: expected an error, got {:?}", other.map(|_| ())),
            }
        }
        d.bottleneck_delay_changes = vec![(Time::ZERO, ms(1)), (s(5.0), Dur::from_secs(10))];
        assert!(
            Simulation::new(d.build()).is_ok(),
            "the limits are inclusive"
        );
        d.flows[0].flow.app_rate_bps = Some(0);
        assert!(matches!(
            Simulation::new(d.build()),
            Err(ConfigError::Invalid { .. })
        ));
    }

    fn app_path(secs: u64) -> Dumbbell {
        let rtt = Dur::from_millis(20);
        let bdp = Dumbbell::bdp_bytes(100_000_000, rtt) / 1500;
        let mut d = Dumbbell::new(
            100_000_000,
            Dur::from_millis(10),
            QueueLimit::Packets(bdp as u32),
        );
        d.duration = Dur::from_secs(secs);
        d
    }

    /// Segments a 10 Mbit/s application has written by `t` s: ⌈(t·10⁹ + 1)·10⁷ / (1448·8·10⁹)⌉.
    fn written_10m(t_ns: u64) -> u64 {
        (u128::from(t_ns + 1) * 10_000_000).div_ceil(1448 * 8 * 1_000_000_000) as u64
    }

    /// A 10 Mbit/s application on a 100 Mbit/s path: TCP delivers what it writes, so the
    /// goodput over 10 s is 10 Mbit/s less the last RTT's worth in flight (≈ 0.2 %), within
    /// 1 %, whatever the controller. Nothing is lost (the application never fills the buffer).
    #[test]
    fn rate_limited_application_delivers_its_rate() {
        for cc in ["cubic", "bbr3", "bbr1"] {
            let mut d = app_path(10);
            d.add_flow(CcSpec::default_for(cc).unwrap(), Dur::ZERO)
                .app_rate_bps = Some(10_000_000);
            let r = Simulation::new(d.build()).unwrap().run();
            let s = &r.flows[0].summary;
            assert!(
                (s.goodput_bps / 10e6 - 1.0).abs() < 0.01,
                "{cc}: {} bit/s",
                s.goodput_bps
            );
            let written = written_10m(10_000 * MS);
            assert!(s.segments_sent <= written, "{cc}: sent {}", s.segments_sent);
            assert!(s.bytes_delivered >= (written - 40) * 1448, "{cc}");
            assert_eq!(s.retransmits, 0, "{cc}");
            // Every 200 ms sample after the first second carries 10 Mbit/s ± 2 segments, except
            // that BBRv3's ProbeRTT (cwnd = BDP/2 for 200 ms, every 5 s) holds data back, which
            // leaves in the next sample: that pair averages 10 Mbit/s.
            let (g, state) = (&r.flows[0].series.goodput_bps, &r.flows[0].series.state);
            let tol = 2.0 * 1448.0 * 8.0 / 0.2;
            let mut i = 5;
            while i < g.len() {
                let (v, n) = if state[i] == "ProbeRTT" && i + 1 < g.len() {
                    ((g[i] + g[i + 1]) / 2.0, 2)
                } else {
                    (g[i], 1)
                };
                assert!((v - 10e6).abs() <= tol, "{cc} sample {i}: {v}");
                i += n;
            }
        }
    }

    /// `app_rate_bps` combines with `size` (the transfer ends when `size` bytes are written
    /// and delivered) and with `stop` (what was written by then is delivered, nothing after).
    #[test]
    fn rate_limited_application_with_size_and_stop() {
        let mut d = app_path(10);
        let f = d.add_flow(CcSpec::default_for("cubic").unwrap(), Dur::ZERO);
        f.app_rate_bps = Some(10_000_000);
        f.size = Some(1_000_000);
        let f = d.add_flow(CcSpec::default_for("bbr3").unwrap(), Dur::ZERO);
        f.app_rate_bps = Some(10_000_000);
        f.start = Time::from_secs_f64(1.0);
        f.stop = Some(Time::from_secs_f64(6.0));
        let r = Simulation::new(d.build()).unwrap().run();
        // 1 MB = 691 segments; the last is written at 690·1448·8/10⁷ s = 0.7993 s and arrives
        // one way (10 ms + serialisations) later.
        let s = &r.flows[0].summary;
        assert_eq!(s.bytes_delivered, 1_000_000);
        let fct = s.fct_s.unwrap();
        assert!((0.809..0.812).contains(&fct), "fct {fct}");
        // Stopped after 5 s of writing: exactly what was written by then.
        let s = &r.flows[1].summary;
        assert_eq!(s.bytes_delivered, written_10m(5_000 * MS) * 1448);
        assert_eq!(s.segments_sent, written_10m(5_000 * MS));
    }
}

#[cfg(test)]
mod route_tests {
    use super::*;
    use crate::config::{FlowConfig, LinkConfig, NodeConfig};
    use cclab_cc::CcSpec;

    fn link(from: u32, to: u32, delay_ms: u64) -> LinkConfig {
        LinkConfig {
            name: format!("{from}->{to}"),
            from: NodeId(from),
            to: NodeId(to),
            rate_bps: Some(10_000_000),
            delay: Dur::from_millis(delay_ms),
            queue: QueueConfig::DropTail {
                limit: QueueLimit::Packets(100),
            },
            delay_changes: Vec::new(),
            loss: LossConfig::None,
            monitor: false,
        }
    }

    /// Routes take the fewest hops (not the least delay), links with neither rate nor delay are
    /// left out of the route, and a missing way back is an error.
    #[test]
    fn routes_are_fewest_hops() {
        let node = |name: &str, kind| NodeConfig {
            name: name.into(),
            kind,
            host: crate::config::HostConfig::default(),
        };
        let nodes = vec![
            node("a", NodeKind::Host),
            node("r1", NodeKind::Router),
            node("r2", NodeKind::Router),
            node("r3", NodeKind::Router),
            node("b", NodeKind::Host),
        ];
        let mut links = vec![
            link(0, 1, 1), // 0: a → r1
            link(1, 3, 9), // 1: r1 → r3 (slow but direct)
            link(1, 2, 1), // 2: r1 → r2
            link(2, 3, 1), // 3: r2 → r3
            link(3, 4, 1), // 4: r3 → b
            link(4, 3, 1), // 5: b → r3
            link(3, 2, 1), // 6: r3 → r2
            link(3, 1, 1), // 7: r3 → r1
            link(2, 1, 1), // 8: r2 → r1
            link(1, 0, 0), // 9: r1 → a
        ];
        links[9].rate_bps = None; // instant: left out of routes
        let mut cfg = SimConfig {
            seed: 1,
            duration: Dur::from_secs(1),
            sample_interval: Dur::from_millis(200),
            nodes,
            links,
            flows: vec![FlowConfig::bulk(
                "f",
                NodeId(0),
                NodeId(4),
                CcSpec::default_for("reno").unwrap(),
            )],
            probes: Vec::new(),
        };
        let paths = compute_paths(&cfg).unwrap();
        assert_eq!(&*paths[0], &[0, 1, 4], "fewest hops: a→r1→r3→b");
        assert_eq!(
            &*paths[1],
            &[5, 7],
            "b→r3→r1 (→a instant); r3→r1 is one hop"
        );
        let mut instant = cfg.clone();
        for l in &mut instant.links {
            l.rate_bps = None;
            l.delay = Dur::ZERO;
        }
        assert!(
            matches!(compute_paths(&instant), Err(ConfigError::Invalid { .. })),
            "a round trip that takes no time is rejected"
        );
        cfg.links.truncate(9); // no way back to a
        match compute_paths(&cfg) {
            Err(ConfigError::NoRoute { from, to, .. }) => {
                assert_eq!((from.as_str(), to.as_str()), ("b", "a"))
            }
            other => panic!("expected NoRoute, got {other:?}"),
        }
    }
}
