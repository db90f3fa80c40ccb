//! The emulated network: a scenario's links, built from the simulator's elements, routing real
//! packets between its hosts.
//!
//! Contract: [`EmuNet`] is sans-IO, like the elements it is made of. The forwarder hands it each
//! packet read from a host at the time it was read ([`EmuNet::arrive`]) and asks it, at any
//! time, for the packets due by then ([`EmuNet::advance`]); each comes with the time the
//! elements computed for it, so the forwarder can measure how late it really left. Every link of
//! the scenario is a queue (drop-tail FIFO or one of the simulator's disciplines, `queue/`) in
//! front of a transmitter (the configured constant rate, schedule or trace, `net/rate`), followed
//! by the link's loss model, its propagation delay (with its scheduled changes) and its jitter,
//! each the simulator's element (`net/`), seeded as the simulator seeds them. Packets take the
//! route the simulator would give them ([`cclab_sim::Router`]): the fewest-hop path between the
//! hosts of their source and destination addresses. Events are handled at the times the
//! elements computed, never at the (later) time the forwarder got round to them, so the link's
//! schedule does not drift with the forwarder's lateness.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};

use cclab_cc::{Dur, Time};
use cclab_sim::histogram::Histogram;
use cclab_sim::net::rate::RateModel;
use cclab_sim::net::{AnyElement, Delay, DelayModel, Element, ElementSpec, LossConfig, Output};
use cclab_sim::queue::{AnyQdisc, Qdisc, Tally};
use cclab_sim::{LinkConfig, NodeId, NodeKind, QueueConfig, QueueLimit, Router, SimConfig, rng};
use rand_chacha::ChaCha8Rng;

use crate::packet::EmuPacket;

/// What the network cannot emulate (yet): the reason, for a clear refusal.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Unsupported(pub String);

/// The queue in front of a link's transmitter.
#[derive(Debug)]
enum LinkQueue {
    /// Drop-tail FIFO of (packet, enqueue time).
    Fifo {
        q: VecDeque<(EmuPacket, Time)>,
        bytes: u64,
        limit: QueueLimit,
    },
    /// A discipline of the simulator.
    Aqm(Box<AnyQdisc<EmuPacket>>),
}

/// Counters and samples of one link.
#[derive(Debug, Default)]
pub struct LinkStats {
    /// Packets accepted by the queue.
    pub enqueued: u64,
    /// Packets the drop-tail FIFO refused (the disciplines count theirs in their tally).
    pub overflow_drops: u64,
    /// Bytes that finished serialisation.
    pub bytes_sent: u64,
    /// Sojourn times in the queue (enqueue to start of transmission), nanoseconds.
    pub sojourn: Histogram,
    /// Sojourn sum (ns), count and maximum since the last sample.
    pub interval_sojourn: (u128, u64, u64),
    /// Bytes sent since the last sample.
    pub interval_bytes: u64,
    /// Drops (overflow, AQM, loss) since the last sample.
    pub interval_drops: u64,
    /// CE marks since the last sample.
    pub interval_marks: u64,
}

/// One link: queue → transmitter → loss → delay → jitter.
#[derive(Debug)]
pub struct EmuLink {
    /// The configuration it was built from.
    pub cfg: LinkConfig,
    rate: Option<RateModel>,
    queue: LinkQueue,
    rng: ChaCha8Rng,
    /// The discipline's verdicts.
    pub tally: Tally,
    /// The packet being serialised.
    in_tx: Option<EmuPacket>,
    /// Elements behind the transmitter, and when each asked to be called.
    chain: Vec<AnyElement<EmuPacket>>,
    wake: Vec<Option<Time>>,
    /// Packets handed to the chain and packets that left it (the difference, without
    /// duplication, is what the loss model took or the delay line holds).
    chain_in: u64,
    chain_out: u64,
    /// Counters.
    pub stats: LinkStats,
}

impl EmuLink {
    /// The link of `cfg`, the `index`-th of a scenario seeded with `seed`.
    fn new(cfg: &LinkConfig, index: u32, seed: u64) -> Result<Self, Unsupported> {
        let queue = match &cfg.queue {
            QueueConfig::DropTail { limit } => LinkQueue::Fifo {
                q: VecDeque::new(),
                bytes: 0,
                limit: *limit,
            },
            QueueConfig::Aqm(a) => LinkQueue::Aqm(Box::new(a.build(
                rng::aqm_hash_key(seed, index),
                cfg.rate_bps.unwrap_or(u64::MAX),
            ))),
        };
        let mut chain = Vec::new();
        if cfg.loss != LossConfig::None {
            chain.push(
                ElementSpec::Loss {
                    model: cfg.loss.clone(),
                }
                .build(seed, rng::LINK_LOSS + u64::from(index)),
            );
        }
        if cfg.delay > Dur::ZERO || !cfg.delay_changes.is_empty() {
            chain.push(AnyElement::Delay(Delay::new(DelayModel::new(
                cfg.delay,
                &cfg.delay_changes,
            ))));
        }
        if let Some(j) = &cfg.jitter {
            chain.push(
                ElementSpec::Jitter {
                    dist: j.dist,
                    correlation: j.correlation,
                    reorder: j.reorder,
                }
                .build(seed, rng::LINK_JITTER + u64::from(index)),
            );
        }
        Ok(EmuLink {
            rate: cfg.rate_shape.as_ref().map(RateModel::of_shape),
            queue,
            rng: rng::stream(seed, rng::AQM + u64::from(index)),
            tally: Tally::default(),
            in_tx: None,
            wake: vec![None; chain.len()],
            chain,
            chain_in: 0,
            chain_out: 0,
            stats: LinkStats::default(),
            cfg: cfg.clone(),
        })
    }

    /// Packets waiting in the queue.
    #[must_use]
    pub fn backlog_packets(&self) -> u32 {
        match &self.queue {
            LinkQueue::Fifo { q, .. } => u32::try_from(q.len()).unwrap_or(u32::MAX),
            LinkQueue::Aqm(a) => a.backlog_packets(),
        }
    }

    /// Bytes waiting in the queue.
    #[must_use]
    pub fn backlog_bytes(&self) -> u64 {
        match &self.queue {
            LinkQueue::Fifo { bytes, .. } => *bytes,
            LinkQueue::Aqm(a) => a.backlog_bytes(),
        }
    }

    /// Packets the loss model lost after the transmitter: what entered the elements behind the
    /// transmitter, less what left them and what they still hold (none of them duplicates).
    #[must_use]
    pub fn link_losses(&self) -> u64 {
        let held: usize = self.chain.iter().map(Element::<EmuPacket>::held).sum();
        self.chain_in.saturating_sub(self.chain_out + held as u64)
    }

    /// The discipline's name (`fifo` for the drop-tail FIFO, as the simulator reports it).
    #[must_use]
    pub fn discipline(&self) -> &'static str {
        match &self.queue {
            LinkQueue::Fifo { .. } => "fifo",
            LinkQueue::Aqm(a) => a.name(),
        }
    }

    /// Offer `pkt` to the queue at `now`; false if it was dropped.
    fn enqueue(&mut self, now: Time, pkt: EmuPacket) -> bool {
        let ok = match &mut self.queue {
            LinkQueue::Fifo { q, bytes, limit } => {
                let len = u64::from(pkt.len);
                let fits = match *limit {
                    QueueLimit::Packets(n) => q.len() < n as usize,
                    QueueLimit::Bytes(b) => *bytes + len <= b,
                };
                if fits {
                    *bytes += len;
                    q.push_back((pkt, now));
                } else {
                    self.stats.overflow_drops += 1;
                    self.stats.interval_drops += 1;
                }
                fits
            }
            LinkQueue::Aqm(a) => {
                let (drops, marks) = (self.tally.drops(), self.tally.marks());
                let ok = a.enqueue(now, pkt, &mut self.rng, &mut self.tally);
                self.stats.interval_drops += self.tally.drops() - drops;
                self.stats.interval_marks += self.tally.marks() - marks;
                ok
            }
        };
        if ok {
            self.stats.enqueued += 1;
        }
        ok
    }

    /// The next packet to serialise at `now`, with its enqueue time.
    fn dequeue(&mut self, now: Time) -> Option<(EmuPacket, Time)> {
        match &mut self.queue {
            LinkQueue::Fifo { q, bytes, .. } => {
                let (p, t) = q.pop_front()?;
                *bytes -= u64::from(p.len);
                Some((p, t))
            }
            LinkQueue::Aqm(a) => {
                let (drops, marks) = (self.tally.drops(), self.tally.marks());
                let d = a.dequeue(now, &mut self.rng, &mut self.tally);
                self.stats.interval_drops += self.tally.drops() - drops;
                self.stats.interval_marks += self.tally.marks() - marks;
                d.map(|d| (d.pkt, d.enqueued))
            }
        }
    }

    /// Serialisation time of `bytes` starting at `start`.
    fn serialization(&mut self, bytes: u32, start: Time) -> Dur {
        match (&mut self.rate, self.cfg.rate_bps) {
            (Some(m), _) => m.serialization(bytes, start),
            (None, Some(r)) => Dur::serialization(u64::from(bytes), r),
            (None, None) => Dur::ZERO,
        }
    }
}

/// An event of the network: a transmitter finishes, or an element asked to be called.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    /// Link `0` finishes serialising its packet.
    TxDone(u32),
    /// Element `1` of link `0` is due.
    Wake(u32, u16),
}

/// The emulated network of a scenario.
#[derive(Debug)]
pub struct EmuNet {
    /// Links, in the scenario's order.
    pub links: Vec<EmuLink>,
    /// The scenario's host nodes, in order: host index → node.
    pub hosts: Vec<NodeId>,
    /// Route id → the links it crosses.
    routes: Vec<Box<[u32]>>,
    /// (source host, destination host) → route id; absent: unreachable.
    route_of: BTreeMap<(u16, u16), u32>,
    events: BinaryHeap<Reverse<(Time, u64, Ev)>>,
    seq: u64,
    /// Packets that found no route (an address of no host, an unreachable host).
    pub unroutable: u64,
}

impl EmuNet {
    /// The network of `cfg`: its links and the routes between all its hosts.
    ///
    /// # Errors
    /// [`Unsupported`] for what the emulator cannot run: Wi-Fi, elements at nodes, more than
    /// 65,000 hosts.
    pub fn new(cfg: &SimConfig) -> Result<Self, Unsupported> {
        if !cfg.wifi.is_empty() {
            return Err(Unsupported(
                "the emulator does not run Wi-Fi media yet (the scenario has a Wi-Fi BSS)".into(),
            ));
        }
        if !cfg.elements.is_empty() {
            return Err(Unsupported(
                "the emulator does not run elements placed at nodes ([[elements]]) yet; \
                 link loss, delay, delay changes, jitter, rate shapes and queues are emulated"
                    .into(),
            ));
        }
        let hosts: Vec<NodeId> = cfg
            .nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.kind == NodeKind::Host)
            .map(|(i, _)| NodeId(u32::try_from(i).unwrap_or(u32::MAX)))
            .collect();
        if hosts.len() > 65_000 {
            return Err(Unsupported(format!(
                "{} hosts: the emulator gives each a namespace, at most 65,000",
                hosts.len()
            )));
        }
        let links = cfg
            .links
            .iter()
            .enumerate()
            .map(|(i, l)| EmuLink::new(l, u32::try_from(i).unwrap_or(u32::MAX), cfg.seed))
            .collect::<Result<Vec<_>, _>>()?;
        let mut router = Router::new(cfg);
        let mut routes = Vec::new();
        let mut route_of = BTreeMap::new();
        for (a, &na) in hosts.iter().enumerate() {
            for (b, &nb) in hosts.iter().enumerate() {
                if a == b {
                    continue;
                }
                if let Ok(path) = router.path(na, nb, "emulated packets") {
                    route_of.insert(
                        (
                            u16::try_from(a).unwrap_or(u16::MAX),
                            u16::try_from(b).unwrap_or(u16::MAX),
                        ),
                        u32::try_from(routes.len()).unwrap_or(u32::MAX),
                    );
                    routes.push(path);
                }
            }
        }
        Ok(EmuNet {
            links,
            hosts,
            routes,
            route_of,
            events: BinaryHeap::new(),
            seq: 0,
            unroutable: 0,
        })
    }

    /// The links from host `a` to host `b`, if `b` can be reached.
    #[must_use]
    pub fn route(&self, a: u16, b: u16) -> Option<&[u32]> {
        self.route_of
            .get(&(a, b))
            .map(|&r| &*self.routes[r as usize])
    }

    fn push(&mut self, t: Time, ev: Ev) {
        self.seq += 1;
        self.events.push(Reverse((t, self.seq, ev)));
    }

    /// When the next event is due, if any.
    #[must_use]
    pub fn next_event(&self) -> Option<Time> {
        self.events.peek().map(|Reverse((t, _, _))| *t)
    }

    /// `pkt` (with `src`, `dst` and `key` set) was read from its host at `now`; packets for
    /// which a route is empty are delivered into `out` at once, with `now`. False (the packet
    /// is not taken) if no route leads from its source to its destination.
    pub fn arrive(
        &mut self,
        now: Time,
        mut pkt: EmuPacket,
        out: &mut Vec<(EmuPacket, Time)>,
    ) -> bool {
        let Some(&r) = self.route_of.get(&(pkt.src, pkt.dst)) else {
            self.unroutable += 1;
            return false;
        };
        pkt.route = r;
        pkt.hop = 0;
        pkt.read_at = now;
        self.enter(now, pkt, out);
        true
    }

    /// `pkt` enters the link of its route's hop `pkt.hop` at `t` (or is delivered).
    fn enter(&mut self, t: Time, pkt: EmuPacket, out: &mut Vec<(EmuPacket, Time)>) {
        let route = &self.routes[pkt.route as usize];
        let Some(&li) = route.get(usize::from(pkt.hop)) else {
            out.push((pkt, t));
            return;
        };
        let link = &mut self.links[li as usize];
        if link.cfg.rate_bps.is_none() {
            self.feed_chain(t, li, 0, Some(pkt), out);
            return;
        }
        if link.enqueue(t, pkt) && link.in_tx.is_none() {
            self.start_tx(t, li);
        }
    }

    /// The transmitter of link `li` is free at `t`: start the next packet.
    fn start_tx(&mut self, t: Time, li: u32) {
        let link = &mut self.links[li as usize];
        let Some((pkt, enq)) = link.dequeue(t) else {
            return;
        };
        link.in_tx = Some(pkt);
        let sojourn = t.saturating_since(enq).as_nanos();
        link.stats.sojourn.record(sojourn);
        let s = &mut link.stats.interval_sojourn;
        *s = (s.0 + u128::from(sojourn), s.1 + 1, s.2.max(sojourn));
        let end = t + link.serialization(u32::from(pkt.len), t);
        self.push(end, Ev::TxDone(li));
    }

    /// Hand `pkt` (or nothing, when the element is due) to element `idx` of link `li` at `t`,
    /// and pass on what leaves it.
    fn feed_chain(
        &mut self,
        t: Time,
        li: u32,
        idx: usize,
        pkt: Option<EmuPacket>,
        out: &mut Vec<(EmuPacket, Time)>,
    ) {
        let link = &mut self.links[li as usize];
        if idx == link.chain.len() {
            if let Some(mut p) = pkt {
                if idx > 0 {
                    link.chain_out += 1;
                }
                p.hop += 1;
                self.enter(t, p, out);
            }
            return;
        }
        if idx == 0 && pkt.is_some() {
            link.chain_in += 1;
        }
        let mut input = pkt;
        let mut left = Vec::new();
        loop {
            match link.chain[idx].process(t, input.take()) {
                Output::Packet(p) => left.push(p),
                Output::Wake(w) => {
                    if link.wake[idx].is_none_or(|cur| w < cur || cur <= t) {
                        link.wake[idx] = Some(w);
                        let idx16 = u16::try_from(idx).unwrap_or(u16::MAX);
                        self.push(w, Ev::Wake(li, idx16));
                    }
                    break;
                }
                Output::Idle => {
                    link.wake[idx] = None;
                    break;
                }
            }
        }
        for p in left {
            self.feed_chain(t, li, idx + 1, Some(p), out);
        }
    }

    /// Handle every event due at or before `now`, appending the packets that reach their
    /// destination host to `out`, each with the time the elements computed for it.
    pub fn advance(&mut self, now: Time, out: &mut Vec<(EmuPacket, Time)>) {
        while let Some(&Reverse((t, _, ev))) = self.events.peek() {
            if t > now {
                break;
            }
            self.events.pop();
            match ev {
                Ev::TxDone(li) => {
                    let link = &mut self.links[li as usize];
                    let Some(pkt) = link.in_tx.take() else {
                        continue;
                    };
                    link.stats.bytes_sent += u64::from(pkt.len);
                    link.stats.interval_bytes += u64::from(pkt.len);
                    self.feed_chain(t, li, 0, Some(pkt), out);
                    self.start_tx(t, li);
                }
                Ev::Wake(li, idx) => {
                    let link = &mut self.links[li as usize];
                    if link.wake[usize::from(idx)] != Some(t) {
                        continue; // superseded by an earlier request
                    }
                    link.wake[usize::from(idx)] = None;
                    self.feed_chain(t, li, usize::from(idx), None, out);
                }
            }
        }
    }

    /// Packets held anywhere in the network (queues, transmitters, delay lines).
    #[must_use]
    pub fn held(&self) -> usize {
        self.links
            .iter()
            .map(|l| {
                l.backlog_packets() as usize
                    + usize::from(l.in_tx.is_some())
                    + l.chain
                        .iter()
                        .map(Element::<EmuPacket>::held)
                        .sum::<usize>()
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_cc::CcSpec;
    use cclab_sim::net::FlowKey;
    use cclab_sim::packet::Ecn;
    use cclab_sim::topology::Dumbbell;

    /// A packet of `len` bytes whose first byte numbers it (`n`).
    fn pkt(n: u32, len: u16, src: u16, dst: u16) -> EmuPacket {
        let mut data = [0u8; crate::packet::MAX_PACKET];
        data[..4].copy_from_slice(&n.to_be_bytes());
        EmuPacket {
            data,
            len,
            ecn: Ecn::NotEct,
            dscp: 0,
            key: FlowKey(u64::from(src)),
            src,
            dst,
            route: 0,
            hop: 0,
            read_at: Time::ZERO,
        }
    }

    fn dumbbell(rate_bps: u64, delay_ms: u64, buffer: u32) -> SimConfig {
        let mut d = Dumbbell::new(
            rate_bps,
            Dur::from_millis(delay_ms),
            QueueLimit::Packets(buffer),
        );
        d.add_flow(CcSpec::default_for("cubic").unwrap(), Dur::ZERO);
        d.build()
    }

    /// Run `net` until no event is left, returning deliveries.
    fn drain(net: &mut EmuNet) -> Vec<(EmuPacket, Time)> {
        let mut out = Vec::new();
        while let Some(t) = net.next_event() {
            net.advance(t, &mut out);
        }
        out
    }

    /// One packet from the sender host to the receiver host of a dumbbell takes the
    /// bottleneck's serialisation plus its propagation delay (the access links have no delay
    /// and, by default, no rate), and the reply the same back.
    #[test]
    fn a_packet_takes_serialisation_plus_propagation() {
        let cfg = dumbbell(10_000_000, 20, 100);
        let mut net = EmuNet::new(&cfg).unwrap();
        assert_eq!(net.hosts.len(), 2);
        let mut out = Vec::new();
        net.arrive(Time::ZERO, pkt(1, 1500, 0, 1), &mut out);
        out.extend(drain(&mut net));
        let ser = Dur::serialization(1500, 10_000_000);
        assert_eq!(out.len(), 1);
        let fwd = out[0].1;
        let expected = Time::ZERO + Dur::from_millis(20) + ser;
        // Access links may add the NIC's serialisation (at most a few µs at their rates).
        assert!(
            fwd >= expected && fwd < expected + Dur::from_micros(20),
            "{fwd:?}"
        );
    }

    /// A burst into a bottleneck of rate R leaves at R exactly: the n-th of n back-to-back
    /// packets is delivered (n) serialisations after the first started.
    #[test]
    fn a_burst_leaves_at_the_configured_rate() {
        let cfg = dumbbell(20_000_000, 0, 1000);
        let mut net = EmuNet::new(&cfg).unwrap();
        let mut out = Vec::new();
        for i in 0..500 {
            net.arrive(Time::ZERO, pkt(i, 1500, 0, 1), &mut out);
        }
        out.extend(drain(&mut net));
        assert_eq!(out.len(), 500);
        let span = out[499].1.saturating_since(out[0].1);
        let expect = Dur::serialization(1500 * 499, 20_000_000);
        let err = span.as_secs_f64() / expect.as_secs_f64() - 1.0;
        assert!(err.abs() < 1e-3, "rate error {err}");
        // In order.
        assert!(out.windows(2).all(|w| w[0].0.data[..4] < w[1].0.data[..4]));
    }

    /// A drop-tail buffer of B packets keeps B waiting plus the one on the wire (the sender's
    /// 10 Gbit/s NIC link hands the burst on far faster than the bottleneck drains it).
    #[test]
    fn drop_tail_keeps_its_limit() {
        let cfg = dumbbell(10_000_000, 5, 10);
        let mut net = EmuNet::new(&cfg).unwrap();
        let mut out = Vec::new();
        for i in 0..50 {
            net.arrive(Time::ZERO, pkt(i, 1500, 0, 1), &mut out);
        }
        out.extend(drain(&mut net));
        let bottleneck = net
            .links
            .iter()
            .position(|l| l.cfg.name == "bottleneck")
            .unwrap();
        assert_eq!(net.links[bottleneck].stats.overflow_drops, 39);
        assert_eq!(out.len(), 11);
    }
}
