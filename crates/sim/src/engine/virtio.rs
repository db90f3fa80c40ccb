//! The virtio-net path of virtual machines ([`crate::host::virtio`]): the guest posts packets
//! to its TX virtqueue, the host's vhost worker hands them to the host's NIC (the first link
//! of the route) whether the guest runs or not, and TX completions reach the guest's sockets
//! at the hand-off (`napi_tx` off) or when vhost has used the descriptor (`napi_tx` on).
//!
//! Contract: a host with a virtio device sends every packet through [`Simulation::virtio_xmit`]
//! (pfifo_fast: `Egress::Virtio`; fq: `fq_service` dequeues while the ring has a free
//! descriptor); each data skb's completion is reported exactly once (posted without `napi_tx`,
//! taken by vhost with it, or dropped by the guest qdisc); the NIC link reports none. The
//! vhost worker has at most one pending `Event::Vhost`, at `VirtioTx::wake`. Refilling the
//! ring from the guest qdisc is the guest's work: it waits for a descheduled guest
//! (`Deferred::VirtioRefill`, at most one in the inbox). Packets for a descheduled guest are
//! bounded by its RX virtqueue and tap queue (`Simulation::defer`).

use cclab_cc::Time;

use super::{Deferred, Event, Simulation, id32};
use crate::config::FlowId;
use crate::host::virtio::Xmit;
use crate::packet::{Owner, Packet, Payload};

/// The flow and bytes of `p` if it ends a TCP data skb whose completion its sender tracks.
#[inline]
fn skb_end(sim: &Simulation, p: &Packet) -> Option<(usize, u32)> {
    match (p.owner, &p.payload) {
        (Owner::Flow(FlowId(f)), Payload::Data { .. })
            if p.skb_bytes > 0 && sim.flows[f as usize].track_tx =>
        {
            Some((f as usize, p.skb_bytes))
        }
        _ => None,
    }
}

impl Simulation {
    /// Guest `h` transmits `pkt` (its `start_xmit`, or its qdisc when the ring is full).
    pub(super) fn virtio_xmit(&mut self, h: usize, pkt: Packet) {
        let now = self.now;
        let v = self.hosts[h].vio.as_mut().expect("a virtio host");
        match v.guest_xmit(now, pkt) {
            Xmit::Posted { kick } => self.virtio_posted(h, &pkt, kick),
            Xmit::Queued => {}
            Xmit::Dropped => {
                self.stats.virtio_qdisc_drops += 1;
                if pkt.is_data() {
                    self.vio_data_drops += 1;
                }
                if let Some((f, bytes)) = skb_end(self, &pkt) {
                    self.tx_complete(f, now, bytes);
                }
            }
        }
    }

    /// `pkt` is in guest `h`'s TX virtqueue now; `kick`: wake the idle vhost worker then.
    fn virtio_posted(&mut self, h: usize, pkt: &Packet, kick: Option<Time>) {
        if let Some(t) = kick {
            self.schedule(t, Event::Vhost(id32(h)));
        }
        let napi_tx = self.hosts[h]
            .vio
            .as_ref()
            .is_some_and(|v| v.config().napi_tx);
        if !napi_tx && let Some((f, bytes)) = skb_end(self, pkt) {
            // `start_xmit` orphans the skb: `tcp_wfree` runs now.
            self.tx_complete(f, self.now, bytes);
        }
    }

    /// Guest `h` (running) posts from its qdisc while descriptors are free.
    pub(super) fn virtio_refill(&mut self, h: usize) {
        if self.hosts[h].fq.is_some() {
            self.fq_service(h);
            return;
        }
        let now = self.now;
        while let Some((p, kick)) = self.hosts[h].vio.as_mut().and_then(|v| v.refill(now)) {
            self.virtio_posted(h, &p, kick);
        }
    }

    /// Guest `h`'s vhost worker runs: hands posted packets to the host's NIC while the host
    /// queue has room, reports the used descriptors' completions (`napi_tx`), and wakes the
    /// guest's device queue if its qdisc waits.
    pub(super) fn vhost_run(&mut self, h: usize) {
        let now = self.now;
        if self.hosts[h].vio.as_ref().and_then(|v| v.wake()) != Some(now) {
            return; // stale
        }
        self.stats.vhost_runs += 1;
        let napi_tx = self.hosts[h]
            .vio
            .as_ref()
            .is_some_and(|v| v.config().napi_tx);
        let mut took = false;
        loop {
            let v = self.hosts[h].vio.as_mut().expect("a virtio host");
            match v.vhost_take(now) {
                Ok(p) => {
                    took = true;
                    let l = self.routes[p.route as usize].nic;
                    self.nic_offer(l, false, &p);
                    let left = self.links[l as usize].busy_until().max(now);
                    self.hosts[h]
                        .vio
                        .as_mut()
                        .expect("a virtio host")
                        .sent(left);
                    if napi_tx && let Some((f, bytes)) = skb_end(self, &p) {
                        self.tx_complete(f, now, bytes);
                    }
                }
                Err(Some(t)) => {
                    self.schedule(t, Event::Vhost(id32(h)));
                    break;
                }
                Err(None) => break,
            }
        }
        let waits = self.hosts[h]
            .vio
            .as_ref()
            .is_some_and(|v| v.qdisc_packets() > 0)
            || self.hosts[h].fq.is_some();
        if took && waits {
            if self.runs(id32(h)) {
                self.virtio_refill(h);
            } else if !self.hosts[h].refill_deferred {
                self.hosts[h].refill_deferred = true;
                self.defer(id32(h), Deferred::VirtioRefill);
            }
        }
    }
}
