//! Host egress: how packets leave a host, from the socket through the host qdisc (pfifo_fast
//! or fq) to the NIC, and how the NIC's TX completions come back to the sockets (TSQ).
//!
//! Contract: every packet a host creates enters here (`flush` for a flow's data, `host_send`
//! for ACKs and probes); the NIC is the first link of the packet's route when it leaves the
//! host and has a rate. Each skb is reported complete exactly once, when its last segment's
//! serialisation ends (analytic FIFO: known at enqueue; evented FIFO: at the transmission end,
//! `Simulation::on_link_tx`), or at once when it is dropped or the NIC is infinitely fast.
//! [`build_hosts`] turns the configured host models into their run-time state.

use cclab_cc::Time;

use super::{Deferred, Egress, Event, HostRt, NO_NIC, Simulation, WIFI_NIC, id32};
use crate::config::{ConfigError, FlowId, HostQdisc, NodeKind, SimConfig};
use crate::host::cpu::CpuCap;
use crate::host::fq::{Dequeued, Fq};
use crate::link::Enqueued;
use crate::packet::{Owner, Packet};
use crate::tcp::sender::Outgoing;

impl Simulation {
    // ----- hosts: egress -----

    /// Put a flow's outgoing segments into its host's qdisc.
    pub(super) fn flush(&mut self, f: usize, out: &mut Vec<Outgoing>) {
        self.charge(self.flows[f].src, out.len() as u64);
        self.owe_sends(self.flows[f].src, out.len() as u64);
        let route = 2 * id32(f);
        let r = self.routes[route as usize];
        let owner = Owner::Flow(FlowId(id32(f)));
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
                        self.skb_handed(f, r.nic, skb_done, o.skb_bytes);
                        skb_done = None;
                    }
                }
            }
            Egress::Fq => self.flush_fq(f, self.flows[f].src as usize, out),
            Egress::Virtio => {
                let h = self.flows[f].src as usize;
                for o in out.drain(..) {
                    self.stats.data_packets_sent += 1;
                    let pkt = data_packet(route, owner, dscp, &o);
                    self.virtio_xmit(h, pkt);
                }
            }
        }
    }

    /// [`Simulation::flush`] into an fq qdisc.
    #[inline(never)]
    pub(super) fn flush_fq(&mut self, f: usize, h: usize, out: &mut Vec<Outgoing>) {
        let route = 2 * id32(f);
        let track = self.flows[f].track_tx;
        let dscp = self.flows[f].dscp;
        let qf = self.routes[route as usize].fq;
        for o in out.drain(..) {
            self.stats.data_packets_sent += 1;
            let pkt = data_packet(route, Owner::Flow(FlowId(id32(f))), dscp, &o);
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
    pub(super) fn host_send(&mut self, h: u32, pkt: Packet) {
        let r = self.routes[pkt.route as usize];
        match r.egress {
            Egress::Direct => self.forward(&pkt, 0),
            Egress::Nic => {
                self.nic_offer(r.nic, r.cut, &pkt);
            }
            Egress::Fq => self.fq_send(h as usize, r.fq, pkt),
            Egress::Virtio => self.virtio_xmit(h as usize, pkt),
        }
    }

    /// A packet that is not TCP data into host `h`'s fq (flow `qf`).
    #[inline(never)]
    pub(super) fn fq_send(&mut self, h: usize, qf: u32, pkt: Packet) {
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
    /// transmission, or a Wi-Fi MAC after the Block Ack.
    #[inline(always)]
    pub(super) fn nic_send(&mut self, pkt: &Packet) -> Option<Time> {
        let route = self.routes[pkt.route as usize];
        if route.nic >= WIFI_NIC {
            self.forward(pkt, 0);
            // Infinitely fast: complete now; Wi-Fi: the MAC reports it (`wifi.rs`).
            return (route.nic == NO_NIC).then_some(self.now);
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
    pub(super) fn nic_offer(&mut self, l: u32, cut: bool, pkt: &Packet) -> Option<Time> {
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
            Enqueued::Queued => {
                self.nic_freed(l as usize);
                None
            }
            Enqueued::StartedTx(t) => {
                self.schedule(t, Event::LinkTx(l));
                self.nic_freed(l as usize);
                None
            }
        }
    }

    /// Report the TX completions of the skbs NIC link `l`'s AQM freed by dropping their last
    /// segment (an evented link; nothing on a drop-tail NIC), at the time of the drop.
    #[inline(never)]
    pub(super) fn nic_freed(&mut self, l: usize) {
        if self.links[l].aqm.is_none() {
            return;
        }
        let mut freed = Vec::new();
        if let Some(d) = self.links[l].drain_freed() {
            freed.extend(d);
        }
        // (A virtual machine's NIC never gets here: `check_virtio_nic` refuses an AQM on it.)
        if self.nic_orphans(l) {
            return; // reported at the hand-off
        }
        for (f, bytes) in freed {
            let f = f.0 as usize;
            if self.flows[f].track_tx {
                self.tx_complete(f, self.now, bytes);
            }
        }
    }

    /// Release what host `h`'s fq has due while its NIC is free; arm the next release.
    #[inline(never)]
    pub(super) fn fq_service(&mut self, h: usize) {
        let mut buf = std::mem::take(&mut self.fq_buf);
        let vio = self.hosts[h].vio.is_some();
        loop {
            if vio {
                // A virtual machine's fq dequeues while its device queue is not stopped.
                if self.hosts[h].vio.as_ref().is_some_and(|v| v.ring_full()) {
                    break;
                }
            } else if let Some(l) = self.hosts[h].nic {
                let free = self.links[l as usize].busy_until();
                if free > self.now {
                    self.fq_arm(h, free);
                    break;
                }
            }
            let fq = self.hosts[h].fq.as_mut().expect("fq host");
            match fq.dequeue(self.now, &mut buf) {
                Dequeued::Skb if vio => {
                    for pkt in buf.drain(..) {
                        self.virtio_xmit(h, pkt);
                    }
                }
                Dequeued::Skb => {
                    let mut skb_done = None;
                    for pkt in buf.drain(..) {
                        let done = self.nic_send(&pkt);
                        skb_done = skb_done.max(done);
                        if let (Owner::Flow(FlowId(f)), true) =
                            (pkt.owner, pkt.skb_bytes > 0 && pkt.is_data())
                            && self.flows[f as usize].track_tx
                        {
                            let nic = self.routes[pkt.route as usize].nic;
                            self.skb_handed(f as usize, nic, skb_done, pkt.skb_bytes);
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

    pub(super) fn fq_arm(&mut self, h: usize, t: Time) {
        let hr = &mut self.hosts[h];
        if hr.fq_wake.is_none_or(|w| t < w) {
            hr.fq_wake = Some(t);
            self.schedule(t, Event::FqRelease(id32(h)));
        }
    }

    pub(super) fn fq_release(&mut self, h: usize, due: Time) {
        if self.hosts[h].fq_wake != Some(due) {
            return; // stale
        }
        if !self.runs(id32(h)) {
            self.defer(id32(h), Deferred::FqRelease(due));
            return;
        }
        self.hosts[h].fq_wake = None;
        self.fq_service(h);
    }
}

/// The hosts' run-time models (CPU clocks, fq instances) and each route's flow index in its
/// source host's fq. An fq host must send everything through one egress link (fq sits in front
/// of one device).
pub(super) fn build_hosts(
    cfg: &SimConfig,
    paths: &[Box<[u32]>],
    ends: &[(u32, u32)],
    route_nic: &[Option<u32>],
) -> Result<(Vec<HostRt>, Vec<u32>), ConfigError> {
    let mut hosts: Vec<HostRt> = cfg
        .nodes
        .iter()
        .enumerate()
        .map(|(i, nd)| {
            let host = nd.kind == NodeKind::Host;
            HostRt {
                cpu: host.then(|| CpuCap::of(&nd.host)).flatten(),
                drain: match nd.host.resume {
                    crate::config::ResumeWork::Softirq { cost } if host => Some(super::Drain {
                        cost,
                        round: crate::config::ResumeWork::round_packets(cost),
                        left: 0,
                        busy: false,
                        stepping: false,
                        owed: 0,
                    }),
                    _ => None,
                },
                rx: host.then_some(nd.host.timing).flatten().map(|t| {
                    let rng = crate::rng::stream(cfg.seed, crate::rng::HOST_TIMING + i as u64);
                    Box::new(super::rx::RxRing::new(&t, rng))
                }),
                timers: host
                    .then_some(nd.host.timing)
                    .flatten()
                    .and_then(|t| super::slack::timer_clock(cfg, i, &t)),
                vio: host
                    .then_some(nd.host.virtio)
                    .flatten()
                    .map(|v| Box::new(crate::host::virtio::VirtioTx::new(v))),
                ..HostRt::default()
            }
        })
        .collect();
    for (r, &(src, _)) in ends.iter().enumerate() {
        let nd = &cfg.nodes[src as usize];
        if let (NodeKind::Host, Some(v)) = (nd.kind, nd.host.virtio) {
            check_virtio_nic(cfg, src as usize, route_nic[r], v.tap_queue)?;
        }
    }
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

/// A virtual machine's route must leave it through a NIC link with a rate (the host's NIC)
/// that is a drop-tail FIFO with room for the tap queue: vhost holds back what does not fit,
/// so the link itself never drops a guest's packet.
fn check_virtio_nic(
    cfg: &SimConfig,
    s: usize,
    nic: Option<u32>,
    tap_queue: u32,
) -> Result<(), ConfigError> {
    use crate::config::{QueueConfig, QueueLimit};
    let what = || format!("node {s} `{}` host", cfg.nodes[s].name);
    let Some(l) = nic else {
        return Err(ConfigError::Invalid {
            what: what(),
            problem: "a virtual machine (virtio) must send everything through a first link \
                      with a rate: the host's NIC"
                .into(),
        });
    };
    let fits = match cfg.links[l as usize].queue {
        QueueConfig::DropTail {
            limit: QueueLimit::Packets(n),
        } => n >= tap_queue,
        QueueConfig::DropTail {
            limit: QueueLimit::Bytes(b),
        } => b >= u64::from(tap_queue) * 65_536,
        QueueConfig::Aqm(_) => false,
    };
    if fits {
        Ok(())
    } else {
        Err(ConfigError::Invalid {
            what: what(),
            problem: format!(
                "a virtual machine's NIC link `{}` must be a drop-tail FIFO holding at least the \
                 tap queue ({tap_queue} packets)",
                cfg.links[l as usize].name
            ),
        })
    }
}

/// The packet carrying one outgoing data segment of a flow, at the start of `route`.
#[inline(always)]
pub(super) fn data_packet(route: u32, owner: Owner, dscp: u8, o: &Outgoing) -> Packet {
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
