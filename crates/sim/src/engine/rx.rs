//! The receive side of hosts with a timing model ([`crate::host::timing`]): RX ring, throttled
//! interrupts, NAPI polls after a drawn softirq latency, GRO.
//!
//! Contract: a packet reaching the end of its route at a host with a model goes into the host's
//! ring instead of being consumed at once ([`Simulation::arrive`]); the host's poll
//! (`Event::HostRx`, at the time [`RxClock`] gives) consumes its packets in arrival order through the same
//! `consume` as an ideal host, except that a GRO run of in-order data segments of one TCP flow
//! is delivered to the receiver as one skb and acknowledged once. A host with no model, and
//! every host of a run without one, never comes here: runs without the model are unchanged.
//!
//! Folded polls ([`Simulation::fold_polls`], `EngineOptions::fold_rx`): an event per poll costs
//! more than the rest of a packet's way through the simulator. Where one link carries every
//! packet a timed host receives (the last link of all its routes, which none crosses before
//! its end; in a dumbbell the shared bottleneck, since the receivers' zero-delay hops are left
//! out of the routes), and that link's delay line is a FIFO (analytic, no jitter, no AQM, no
//! host's NIC), the host's packets are admitted to its [`RxClock`] when the link schedules
//! them, in the order they will arrive (the FIFO's order, which is the order the event per
//! poll would admit them in), and each waits in the link's delay line until its poll instead
//! of its arrival
//! ([`crate::link::Link::fold_tail`]: the line is kept sorted by that time). The link's own
//! `LinkArrive` event, re-keyed in place to the line's head as on every link, then hands a
//! poll's packets to the host directly ([`Simulation::rx_link`]); a packet that overtakes the
//! head pushes an event of its own, and an event that finds nothing due while another of the
//! link's is pending is dropped (`Simulation::fold_pending` counts them). Same clock, same draws in the same order, same polls, same
//! batches: the runs are the same as with an event per poll, except for the order of events
//! due at one nanosecond (and a poll split in two when another host's packet is due at the
//! very nanosecond between two of its packets). Runs with middlebox elements or Wi-Fi, and
//! hosts fed by several links, keep the event per poll.

use std::collections::VecDeque;

use cclab_cc::Time;
use rand_chacha::ChaCha8Rng;

use super::{Event, Simulation, id32};
use crate::config::FlowId;
use crate::host::timing::{HostTiming, RxClock};
use crate::packet::{Owner, Packet, Payload};

/// One host's RX ring: each packet with the time of the poll that takes it.
#[derive(Debug)]
pub(super) struct RxRing {
    clock: RxClock,
    gro: bool,
    ring: VecDeque<(Time, Packet)>,
    /// The latest poll an event was scheduled for.
    scheduled: Option<Time>,
    /// Scratch for one poll's packets.
    batch: Vec<Packet>,
}

impl RxRing {
    pub(super) fn new(timing: &HostTiming, rng: ChaCha8Rng) -> Self {
        RxRing {
            clock: RxClock::new(timing, rng),
            gro: timing.gro,
            ring: VecDeque::new(),
            scheduled: None,
            batch: Vec::new(),
        }
    }
}

/// Whether `b` continues GRO run ending with `a`: same flow, next sequence number, same IP ECN
/// field, no CWR (`tcp_gro_receive` flushes on CWR; `inet_gro_receive` on a TOS change).
fn continues(a: &Packet, b: &Packet) -> bool {
    match (a.owner, &a.payload, b.owner, &b.payload) {
        (
            Owner::Flow(fa),
            &Payload::Data { seq: sa, .. },
            Owner::Flow(fb),
            &Payload::Data {
                seq: sb,
                cwr: false,
                ..
            },
        ) => fa == fb && sb == sa + 1 && a.ecn == b.ecn,
        _ => false,
    }
}

/// `Simulation::fold_pending` of a link whose hosts' polls are not folded into it.
pub(super) const NOT_FOLDED: u32 = u32::MAX;

impl Simulation {
    /// `pkt` reached the end of its route: into its host's ring if the host has a timing model,
    /// else consumed now.
    #[inline]
    pub(super) fn arrive(&mut self, pkt: &Packet) {
        let h = self.routes[pkt.route as usize].dst as usize;
        let now = self.now;
        let Some(rx) = self.hosts[h].rx.as_deref_mut() else {
            self.consume(pkt);
            return;
        };
        let at = rx.clock.admit(now);
        rx.ring.push_back((at, *pkt));
        if rx.scheduled != Some(at) {
            rx.scheduled = Some(at);
            self.schedule(at, Event::HostRx(id32(h)));
        }
    }

    /// Host `h`'s NAPI poll: the packets it takes, GRO runs merged.
    pub(super) fn host_rx(&mut self, h: usize) {
        let now = self.now;
        let Some(rx) = self.hosts[h].rx.as_deref_mut() else {
            return;
        };
        let mut batch = std::mem::take(&mut rx.batch);
        while let Some(&(t, p)) = rx.ring.front() {
            if t > now {
                break;
            }
            batch.push(p);
            rx.ring.pop_front();
        }
        let gro = rx.gro;
        self.consume_polled(&batch, gro);
        batch.clear();
        if let Some(rx) = self.hosts[h].rx.as_deref_mut() {
            rx.batch = batch;
        }
    }

    /// One poll's packets, in arrival order: GRO runs merged (with `gro`), the rest one by one.
    fn consume_polled(&mut self, batch: &[Packet], gro: bool) {
        let mut i = 0;
        while i < batch.len() {
            let mut j = i + 1;
            if gro {
                while j < batch.len() && continues(&batch[j - 1], &batch[j]) {
                    j += 1;
                }
            }
            if j - i >= 2 && self.gro_eligible(&batch[i]) {
                self.consume_gro(&batch[i..j]);
            } else {
                for p in &batch[i..j] {
                    self.consume(p);
                }
            }
            i = j;
        }
    }

    /// Fold the polls of every timed host that one FIFO link feeds into that link (the module
    /// documentation).
    pub(super) fn fold_polls(&mut self) {
        if !self.has_rx_timing || self.has_hooks || self.has_elements {
            return;
        }
        const NONE: u32 = u32::MAX;
        // Links packets enter from a host's NIC path (`nic_offer` may cut through them).
        let mut nic = vec![false; self.links.len()];
        for r in &self.routes {
            if let Some(n) = nic.get_mut(r.nic as usize) {
                *n = true;
            }
        }
        for h in &self.hosts {
            if let Some(n) = h.nic.and_then(|l| nic.get_mut(l as usize)) {
                *n = true;
            }
        }
        // Per host: the last link of all its routes (`NONE`: none, not one link, or a route
        // that crosses it before its end).
        let mut last: Vec<Option<u32>> = vec![None; self.hosts.len()];
        for (r, route) in self.routes.iter().enumerate() {
            let h = route.dst as usize;
            if self.hosts[h].rx.is_none() {
                continue;
            }
            let path = &self.paths[r];
            let cand = match path.len() {
                0 | 1 => NONE,
                n if path[..n - 1].contains(&path[n - 1]) => NONE,
                n => path[n - 1],
            };
            last[h] = match last[h] {
                None => Some(cand),
                Some(x) if x == cand => Some(x),
                Some(_) => Some(NONE),
            };
        }
        let mut pending = vec![NOT_FOLDED; self.links.len()];
        let mut folded = vec![false; self.hosts.len()];
        let mut any = false;
        for (h, l) in last.into_iter().enumerate() {
            let Some(l) = l.filter(|&l| l != NONE) else {
                continue;
            };
            let li = l as usize;
            if nic[li] || !self.links[li].can_fold() || self.links[li].next_arrival().is_some() {
                continue;
            }
            pending[li] = 0;
            folded[h] = true;
            any = true;
        }
        if any {
            // A folded host's routes all end at its folded link.
            self.route_fold = self
                .routes
                .iter()
                .zip(&self.paths)
                .map(|(route, path)| match path.last() {
                    Some(&l) if folded[route.dst as usize] => (l, route.dst),
                    _ => (NOT_FOLDED, route.dst),
                })
                .collect();
            self.fold_pending = pending;
        }
    }

    /// Whether link `l`'s hosts' polls are folded into it.
    #[inline(always)]
    pub(super) fn is_folded(&self, l: usize) -> bool {
        !self.fold_pending.is_empty() && self.fold_pending[l] != NOT_FOLDED
    }

    /// `pkt`, offered to link `l` in a run with folded links, is at the tail of its delay line,
    /// arriving at `arrival`. On a folded link: if that ends its route at a folded host, admit
    /// it to the host's clock and let it wait for its poll; keep the line sorted, with an event
    /// pending no later than its head. Nothing on a link that is not folded (the caller
    /// schedules the arrival of a packet alone in such a line).
    #[inline]
    pub(super) fn fold_in(&mut self, l: usize, pkt: &Packet, arrival: Time) {
        let (fold, h) = self.route_fold[pkt.route as usize];
        // A route's folded link is its last: a packet on it is at its last hop (and the link
        // is folded).
        let at = if fold == id32(l)
            && let Some(rx) = self.hosts[h as usize].rx.as_deref_mut()
        {
            rx.clock.admit(arrival)
        } else if self.fold_pending[l] != NOT_FOLDED {
            arrival
        } else {
            return;
        };
        // A new head: either the line was empty, or it overtook the head, whose event stays
        // pending and will find nothing due (`rx_link` drops it then).
        if self.links[l].fold_tail(at) {
            self.fold_pending[l] += 1;
            self.schedule(at, Event::LinkArrive(id32(l)));
        }
    }

    /// A `LinkArrive` event of folded link `l`, at the top of the event queue: take what is due
    /// now (a folded host's packets at the end of their route: its poll, consumed as
    /// [`Simulation::host_rx`] does; anything else is handed on), re-key the event to the
    /// line's new head, or drop it if nothing was due and another is pending.
    pub(super) fn rx_link(&mut self, l: usize) {
        let now = self.now;
        let ev = Event::LinkArrive(id32(l));
        let Some(p) = self.links[l].pop_arrived(now) else {
            // Overtaken: a later event of this link is pending, or this one re-keys.
            if self.fold_pending[l] > 1 {
                self.fold_pending[l] -= 1;
                self.events.pop_pushed();
            } else if let Some(t) = self.links[l].next_arrival() {
                self.events.replace_top(t, ev);
            } else {
                self.fold_pending[l] = 0;
                self.events.pop_pushed();
            }
            return;
        };
        let host = self.polled_by(l, &p);
        if let Some(h) = host
            && let Some((t, q)) = self.links[l].head()
            && t <= now
            && self.polled_by(l, q) == Some(h)
        {
            self.rx_link_poll(l, p, h);
            return;
        }
        self.rekey_folded(l);
        match host {
            None => self.forward(&p, p.hop),
            Some(_) => self.consume(&p),
        }
    }

    /// Re-key folded link `l`'s event (at the top of the queue) to its line's head, or drop it
    /// when the line is empty.
    #[inline(always)]
    fn rekey_folded(&mut self, l: usize) {
        match self.links[l].next_arrival() {
            Some(t) => self.events.replace_top(t, Event::LinkArrive(id32(l))),
            None => {
                self.fold_pending[l] -= 1;
                self.events.pop_pushed();
            }
        }
    }

    /// A poll of host `h` of more than one packet on folded link `l` (`first`, already taken,
    /// and those due now behind it): GRO may merge them.
    #[inline(never)]
    fn rx_link_poll(&mut self, l: usize, first: Packet, h: usize) {
        let now = self.now;
        let mut buf = std::mem::take(&mut self.fold_buf);
        buf.push(first);
        while let Some((t, q)) = self.links[l].head()
            && t <= now
            && self.polled_by(l, q) == Some(h)
        {
            let q = *q;
            self.links[l].pop_arrived(now);
            buf.push(q);
        }
        self.rekey_folded(l);
        let gro = self.hosts[h].rx.as_deref().is_some_and(|rx| rx.gro);
        self.consume_polled(&buf, gro);
        buf.clear();
        self.fold_buf = buf;
    }

    /// The folded host whose poll `p`, due on folded link `l`, is part of, if it is at the end
    /// of its route there (a route's folded link is its last).
    #[inline]
    fn polled_by(&self, l: usize, p: &Packet) -> Option<usize> {
        let (fold, h) = self.route_fold[p.route as usize];
        (fold == id32(l)).then_some(h as usize)
    }

    /// A GRO run may be merged: a plain TCP flow's data at a host that runs now (a descheduled
    /// host's packets wait one by one, as without GRO).
    fn gro_eligible(&self, first: &Packet) -> bool {
        let Owner::Flow(FlowId(f)) = first.owner else {
            return false;
        };
        let fr = &self.flows[f as usize];
        let route = &self.routes[first.route as usize];
        let runs = !route.dst_sched || self.runs(route.dst);
        fr.client.is_none() && fr.quic.is_none() && runs
    }

    /// Deliver a GRO run (consecutive data segments of one flow) as one skb: each segment to the
    /// receiver, then one ACK for all of them (the last one the receiver made, or the pending
    /// delayed ACK, which covers every segment: more than one full frame was received).
    fn consume_gro(&mut self, run: &[Packet]) {
        let Owner::Flow(FlowId(f)) = run[0].owner else {
            return;
        };
        let f = f as usize;
        if self.routes[run[0].route as usize].dst_sched {
            self.charge(self.flows[f].dst, run.len() as u64);
        }
        let mut held = None;
        for p in run {
            if let Some(a) = self.deliver_data(f, p) {
                held = Some(a);
            }
        }
        let pending = self.flows[f].receiver.take_pending_ack();
        if let Some(a) = pending.or(held) {
            self.send_ack(f, a);
        }
        self.rearm_receiver(f);
    }
}
