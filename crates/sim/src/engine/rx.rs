//! The receive side of hosts with a timing model ([`crate::host::timing`]): RX ring, throttled
//! interrupts, NAPI polls after a drawn softirq latency, GRO.
//!
//! Contract: a packet reaching the end of its route at a host with a model goes into the host's
//! ring instead of being consumed at once ([`Simulation::arrive`]); the host's poll
//! (`Event::HostRx`, at the time [`RxClock`] gives) consumes its packets in arrival order through the same
//! `consume` as an ideal host, except that a GRO run of in-order data segments of one TCP flow
//! is delivered to the receiver as one skb and acknowledged once. A host with no model, and
//! every host of a run without one, never comes here: runs without the model are unchanged.

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
        batch.clear();
        if let Some(rx) = self.hosts[h].rx.as_deref_mut() {
            rx.batch = batch;
        }
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
