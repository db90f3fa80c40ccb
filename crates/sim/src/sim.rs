//! The discrete-event engine: one event queue, links, hosts, routers, TCP flows, probes and the
//! sampler.
//!
//! Contract: [`Simulation::new`] validates a [`SimConfig`] (never panics on it) and
//! [`Simulation::run`] processes events in (time, insertion sequence) order until the configured
//! duration, then returns [`Results`]. Events are small `Copy` values naming an entity by index.
//! Each link keeps at most one pending transmission event and one pending arrival event (its
//! delay line is FIFO), and each flow endpoint at most one useful pending timer event (stale
//! ones are recognised and skipped), so the queue stays small however many packets are in flight.
//! Packets follow source routes computed once per flow and direction (fewest hops), so routing
//! costs an index per hop and memory grows with the number of flows, not nodes squared.

use std::collections::{BTreeMap, VecDeque};

use cclab_cc::{Dur, INFINITE_SSTHRESH, Time};

use crate::config::{
    ACK_WIRE_BYTES, ConfigError, FlowId, LossConfig, NodeId, NodeKind, ProbeId, QueueConfig,
    QueueLimit, SimConfig,
};
use crate::events::EventQueue;
use crate::histogram::Histogram;
use crate::link::{Enqueued, IntervalStats, Link};
use crate::packet::{Owner, Packet, Payload};
use crate::results::{
    EngineStats, FlowResult, FlowSeries, FlowSummary, ProbeResult, ProbeSummary, QueueResult,
    QueueSeries, QueueSummary, Results,
};
use crate::tcp::receiver::Receiver;
use crate::tcp::sender::{Outgoing, Sender};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Event {
    LinkTx(u32),
    LinkArrive(u32),
    FlowStart(u32),
    FlowStop(u32),
    SenderWake(u32),
    ReceiverWake(u32),
    ProbeSend(u32),
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
    stop: Option<Time>,
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
    /// links with neither rate nor delay (they hand packets straight on). Route `2f` is flow
    /// `f`'s data direction and `2f + 1` its ACK direction; probes follow the flows.
    paths: Vec<Box<[u32]>>,
    flows: Vec<FlowRt>,
    probes: Vec<ProbeRt>,
    monitors: Vec<QueueMon>,
    out: Vec<Outgoing>,
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
        let flows = cfg
            .flows
            .iter()
            .map(|f| FlowRt {
                sender: Sender::new(f),
                receiver: Receiver::new(f.ack_every, f.delack_timeout),
                start: f.start,
                stop: f.stop,
                size: f.size,
                mss: f.mss,
                snd_wake: None,
                rcv_wake: None,
                completed_at: None,
                series: FlowSeries::default(),
                last_bytes: 0,
                last_retrans: 0,
                last_lost: 0,
            })
            .collect();
        let probes = cfg
            .probes
            .iter()
            .map(|p| ProbeRt {
                interval: p.interval,
                size: p.size,
                stop: p.stop,
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
            flows,
            probes,
            monitors,
            out: Vec::new(),
            stats: EngineStats::default(),
            cfg,
        };
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
                let pkt = self.links[l].pop_arrival();
                match self.links[l].next_arrival() {
                    Some(t) => self.events.replace_top(t, e.ev),
                    None => {
                        self.events.pop();
                    }
                }
                if let Some(pkt) = pkt {
                    self.forward(pkt);
                }
                continue;
            }
            self.events.pop();
            self.dispatch(e.ev);
        }
        self.now = end;
        self.finish()
    }

    fn dispatch(&mut self, ev: Event) {
        match ev {
            Event::LinkTx(l) => self.on_link_tx(l as usize),
            Event::LinkArrive(_) => unreachable!("handled in run"),
            Event::FlowStart(f) => {
                let f = f as usize;
                let mut out = std::mem::take(&mut self.out);
                self.flows[f].sender.start(self.now, &mut out);
                self.flush(f, &mut out);
                self.out = out;
                self.rearm_sender(f);
            }
            Event::FlowStop(f) => self.flows[f as usize].sender.stop_app(self.now),
            Event::SenderWake(f) => {
                let f = f as usize;
                if self.flows[f].snd_wake != Some(self.now) {
                    return; // stale
                }
                self.flows[f].snd_wake = None;
                let mut out = std::mem::take(&mut self.out);
                self.flows[f].sender.on_timer(self.now, &mut out);
                self.flush(f, &mut out);
                self.out = out;
                self.rearm_sender(f);
            }
            Event::ReceiverWake(f) => {
                let f = f as usize;
                if self.flows[f].rcv_wake != Some(self.now) {
                    return;
                }
                self.flows[f].rcv_wake = None;
                if let Some(ack) = self.flows[f].receiver.on_delack_timer(self.now) {
                    self.send_ack(f, ack);
                }
                self.rearm_receiver(f);
            }
            Event::ProbeSend(p) => self.on_probe_send(p as usize),
            Event::Sample => {
                self.sample();
                let next = self.now + self.cfg.sample_interval;
                self.schedule(next, Event::Sample);
            }
        }
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

    /// Put a flow's outgoing segments on the network.
    fn flush(&mut self, f: usize, out: &mut Vec<Outgoing>) {
        for o in out.drain(..) {
            self.stats.data_packets_sent += 1;
            let pkt = Packet {
                route: 2 * f as u32,
                hop: 0,
                wire_bytes: o.wire_bytes,
                owner: Owner::Flow(FlowId(f as u32)),
                payload: o.payload,
            };
            self.forward(pkt);
        }
    }

    fn send_ack(&mut self, f: usize, ack: Payload) {
        let pkt = Packet {
            route: 2 * f as u32 + 1,
            hop: 0,
            wire_bytes: ACK_WIRE_BYTES,
            owner: Owner::Flow(FlowId(f as u32)),
            payload: ack,
        };
        self.forward(pkt);
    }

    /// Route of probe `p`'s requests (`+ 1`: its replies).
    fn probe_route(&self, p: usize) -> u32 {
        (2 * (self.flows.len() + p)) as u32
    }

    /// Move a packet on (just created, or just arrived at the end of a link): consume it at the
    /// end of its route, or enqueue it on the route's next link.
    fn forward(&mut self, mut pkt: Packet) {
        let path = &self.paths[pkt.route as usize];
        let Some(&l) = path.get(pkt.hop as usize) else {
            self.consume(pkt);
            return;
        };
        pkt.hop += 1;
        let l = l as usize;
        match self.links[l].enqueue(self.now, pkt) {
            Enqueued::Queued | Enqueued::Dropped => {}
            Enqueued::StartedTx(t) => self.schedule(t, Event::LinkTx(l as u32)),
            Enqueued::InFlight { arrival, was_empty } => {
                if was_empty {
                    self.schedule(arrival, Event::LinkArrive(l as u32));
                }
            }
        }
    }

    fn on_link_tx(&mut self, l: usize) {
        let (next, pipe_was_empty) = self.links[l].finish_tx(self.now);
        if pipe_was_empty && let Some(t) = self.links[l].next_arrival() {
            self.schedule(t, Event::LinkArrive(l as u32));
        }
        if let Some(t) = next {
            self.schedule(t, Event::LinkTx(l as u32));
        }
    }

    fn consume(&mut self, pkt: Packet) {
        match (pkt.owner, pkt.payload) {
            (Owner::Flow(FlowId(f)), Payload::Data { seq, tsval, .. }) => {
                let f = f as usize;
                self.stats.data_packets_delivered += 1;
                let now = self.now;
                let ack = self.flows[f].receiver.on_data(now, seq, tsval);
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
                let f = f as usize;
                let mut out = std::mem::take(&mut self.out);
                self.flows[f].sender.on_ack(self.now, &payload, &mut out);
                self.flush(f, &mut out);
                self.out = out;
                self.rearm_sender(f);
            }
            (Owner::Probe(ProbeId(p)), Payload::ProbeRequest { seq, sent }) => {
                let reply = Packet {
                    route: self.probe_route(p as usize) + 1,
                    hop: 0,
                    wire_bytes: self.probes[p as usize].size,
                    owner: pkt.owner,
                    payload: Payload::ProbeReply { seq, sent },
                };
                self.forward(reply);
            }
            (Owner::Probe(ProbeId(p)), Payload::ProbeReply { sent, .. }) => {
                let rtt = self.now.saturating_since(sent);
                let pr = &mut self.probes[p as usize];
                pr.t_s.push(sent.as_secs_f64());
                pr.rtt_ms.push(rtt.as_millis_f64());
                pr.hist.record(rtt.as_nanos());
            }
            _ => {}
        }
    }

    fn on_probe_send(&mut self, p: usize) {
        let now = self.now;
        let pr = &mut self.probes[p];
        if pr.stop.is_some_and(|s| now >= s) {
            return;
        }
        let seq = pr.next_seq;
        pr.next_seq += 1;
        let (size, next) = (pr.size, now + pr.interval);
        let pkt = Packet {
            route: self.probe_route(p),
            hop: 0,
            wire_bytes: size,
            owner: Owner::Probe(ProbeId(p as u32)),
            payload: Payload::ProbeRequest { seq, sent: now },
        };
        self.forward(pkt);
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
            } = iv;
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
            };
            flows.push(FlowResult {
                name: fc.name.clone(),
                controller: s.cc().name().to_owned(),
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
        stats.data_packets_dropped = self.links.iter().map(|l| l.data_dropped).sum();
        stats.data_packets_in_network = self.links.iter().map(Link::data_inside).sum();
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
    for (i, l) in cfg.links.iter().enumerate() {
        let what = format!("link {i} `{}`", l.name);
        node(what.clone(), l.from)?;
        node(what.clone(), l.to)?;
        if l.rate_bps == Some(0) {
            return Err(invalid(what, "rate must be positive"));
        }
        let QueueConfig::DropTail { limit } = l.queue;
        if matches!(limit, QueueLimit::Packets(0) | QueueLimit::Bytes(0)) {
            return Err(invalid(what, "queue limit must be positive"));
        }
        if let LossConfig::Bernoulli { p } = l.loss
            && !(0.0..=1.0).contains(&p)
        {
            return Err(invalid(what, "loss probability must be within [0, 1]"));
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

/// Source routes of every flow and probe, both directions (see `Simulation::paths`): a
/// fewest-hops path, found by breadth-first search over outgoing links in index order (so ties
/// go to the lower link index), with links that have neither rate nor delay left out. A node with
/// a single outgoing link (a host on an access link) is walked through directly, and search trees
/// are cached per starting node, so a dumbbell with thousands of hosts needs two searches, not
/// one per flow.
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
            l.rate_bps.is_some() || l.delay != Dur::ZERO
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
