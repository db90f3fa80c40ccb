//! A virtual machine's NIC: virtio-net in the guest, vhost-net and a tap device on the host.
//!
//! Data path of a guest's packet (the engine, `engine/virtio.rs`, wires it):
//!
//! ```text
//! guest TCP ──TSQ──▶ guest qdisc ──start_xmit──▶ TX virtqueue ──vhost handle_tx──▶ host queue ──▶ wire
//!  (runs only while the guest runs)   (tx_ring skbs)    (vhost thread: runs     (tap_queue packets,
//!                                                         while the guest is      the NIC's line rate)
//!                                                         descheduled)
//! wire ──▶ tap queue (tap_queue) ──vhost handle_rx──▶ RX virtqueue (rx_ring) ──guest NAPI──▶ TCP
//! ```
//!
//! Contract of [`VirtioTx`] (the TX side; all times are the caller's):
//! - The guest's `start_xmit` (`drivers/net/virtio_net.c`) puts each skb into the TX virtqueue,
//!   one descriptor per skb (a TSO skb is one descriptor; a packet that is not TCP data is an
//!   skb of its own). With every descriptor in use the device queue is stopped
//!   (`netif_stop_subqueue`): the guest's pfifo_fast keeps the packets, in order, up to its
//!   limit (beyond it they are dropped, as `pfifo_fast_enqueue` does), and an fq qdisc does
//!   not dequeue. [`VirtioTx::guest_xmit`] / [`VirtioTx::refill`].
//! - Only a running guest hands packets over and refills the ring from its qdisc; the caller
//!   guarantees that.
//! - An idle vhost worker is kicked by the guest and takes the virtqueue's descriptors
//!   `vhost_wakeup` later; a busy one keeps taking without a kick (`handle_tx` in
//!   `drivers/vhost/net.c` loops until the queue is empty, with notifications disabled). It
//!   runs on a host CPU of its own, so it goes on while the guest is descheduled. It hands a
//!   packet on only while the host queue (tap and host NIC) has room for it: the packets it
//!   handed on that have not left the host's NIC number below `tap_queue`. No packet is
//!   dropped between the guest and the wire. [`VirtioTx::vhost_take`].
//! - When vhost has used a descriptor the guest frees the skb (`free_old_xmit_skbs`), and
//!   `tcp_wfree` releases its bytes from TSQ (`tcp_small_queue_check`): with `napi_tx` in the
//!   guest's TX NAPI poll, which only runs while the guest runs (as everything of the guest
//!   does, the engine defers the TSQ wake-up until then); without `napi_tx`, `start_xmit`
//!   orphans the skb (`skb_orphan`) as it posts it, so TSQ counts only the bytes in the guest
//!   qdisc. (vhost copies the data, `experimental_zcopytx` being off by default, so the guest's
//!   skb does not wait for the wire.)
//! - The RX side is the engine's: packets for a descheduled guest wait in the RX virtqueue
//!   and, once it is full, in the tap's queue (`tun_net_xmit` drops beyond its `ptr_ring` of
//!   `tx_queue_len` entries); the guest processes them when it runs again.

use std::collections::VecDeque;

use cclab_cc::Time;

use crate::config::VirtioConfig;
use crate::packet::{Packet, Payload};

/// Packets the guest's pfifo_fast keeps while its device queue is stopped (the `txqueuelen`
/// of a virtio-net device, 1000, `ether_setup`).
pub const GUEST_QDISC_LIMIT: usize = 1000;

/// What became of a packet the guest transmitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Xmit {
    /// Posted to the TX virtqueue; `kick`: the vhost worker must be woken at that time.
    Posted {
        /// When to wake the idle vhost worker (`None`: it is awake).
        kick: Option<Time>,
    },
    /// The ring is full: kept in the guest qdisc.
    Queued,
    /// The guest qdisc is full too: dropped.
    Dropped,
}

/// The TX side of one guest's virtio-net device and its vhost worker.
#[derive(Clone, Debug)]
pub struct VirtioTx {
    cfg: VirtioConfig,
    /// Posted packets vhost has not taken yet, in order.
    ring: VecDeque<Packet>,
    /// Descriptors those packets use.
    ring_skbs: u32,
    /// Their wire bytes, and the most there ever were.
    ring_bytes: u64,
    peak_ring_bytes: u64,
    /// The guest qdisc's packets waiting for a descriptor (pfifo_fast).
    qdisc: VecDeque<Packet>,
    /// Times the device queue stopped (a packet found every descriptor in use).
    stops: u64,
    /// When the vhost worker runs next (`None`: idle, waiting for a kick).
    wake: Option<Time>,
    /// When each packet vhost handed to the host queue has left the host's NIC, in order.
    host_queue: VecDeque<Time>,
}

/// Whether `p` closes a descriptor: the last segment of a data skb, or any other packet.
#[inline]
fn closes_skb(p: &Packet) -> bool {
    !matches!(p.payload, Payload::Data { .. }) || p.skb_bytes > 0
}

impl VirtioTx {
    /// A device with `cfg`'s rings and queues, empty.
    #[must_use]
    pub fn new(cfg: VirtioConfig) -> Self {
        VirtioTx {
            cfg,
            ring: VecDeque::new(),
            ring_skbs: 0,
            ring_bytes: 0,
            peak_ring_bytes: 0,
            qdisc: VecDeque::new(),
            stops: 0,
            wake: None,
            host_queue: VecDeque::new(),
        }
    }

    /// The configuration.
    #[must_use]
    pub fn config(&self) -> &VirtioConfig {
        &self.cfg
    }

    /// Whether every descriptor of the TX virtqueue is in use (the device queue is stopped).
    #[must_use]
    pub fn ring_full(&self) -> bool {
        self.ring_skbs >= self.cfg.tx_ring
    }

    /// Descriptors in use.
    #[must_use]
    pub fn ring_skbs(&self) -> u32 {
        self.ring_skbs
    }

    /// Times the device queue stopped with every descriptor in use (pfifo_fast).
    #[must_use]
    pub fn stops(&self) -> u64 {
        self.stops
    }

    /// The most wire bytes the TX virtqueue ever held.
    #[must_use]
    pub fn peak_ring_bytes(&self) -> u64 {
        self.peak_ring_bytes
    }

    /// Packets posted and not yet taken by vhost.
    #[must_use]
    pub fn ring_packets(&self) -> usize {
        self.ring.len()
    }

    /// Packets in the guest qdisc waiting for a descriptor.
    #[must_use]
    pub fn qdisc_packets(&self) -> usize {
        self.qdisc.len()
    }

    /// Posted and queued packets, for counting what is inside the device.
    pub fn packets(&self) -> impl Iterator<Item = &Packet> {
        self.ring.iter().chain(self.qdisc.iter())
    }

    /// When the vhost worker runs next, if it is not idle.
    #[must_use]
    pub fn wake(&self) -> Option<Time> {
        self.wake
    }

    /// Post `p` now, or keep it behind the ring's earlier packets in the guest qdisc.
    pub fn guest_xmit(&mut self, now: Time, p: Packet) -> Xmit {
        if !self.qdisc.is_empty() || self.ring_full() {
            if self.qdisc.is_empty() {
                self.stops += 1;
            }
            if self.qdisc.len() >= GUEST_QDISC_LIMIT {
                return Xmit::Dropped;
            }
            self.qdisc.push_back(p);
            return Xmit::Queued;
        }
        Xmit::Posted {
            kick: self.post(now, p),
        }
    }

    /// Post one packet of the guest qdisc if a descriptor is free; returns it with the kick
    /// time as [`Xmit::Posted`] (the caller reports its completion as for a posted packet).
    pub fn refill(&mut self, now: Time) -> Option<(Packet, Option<Time>)> {
        if self.ring_full() {
            return None;
        }
        let p = self.qdisc.pop_front()?;
        let kick = self.post(now, p);
        Some((p, kick))
    }

    fn post(&mut self, now: Time, p: Packet) -> Option<Time> {
        if closes_skb(&p) {
            self.ring_skbs += 1;
        }
        self.ring_bytes += u64::from(p.wire_bytes);
        self.peak_ring_bytes = self.peak_ring_bytes.max(self.ring_bytes);
        self.ring.push_back(p);
        if self.wake.is_none() {
            let at = now + self.cfg.vhost_wakeup;
            self.wake = Some(at);
            return Some(at);
        }
        None
    }

    /// The vhost worker runs at `now` (its wake time): the next packet it hands to the host
    /// queue, if the queue has room. `Err(Some(t))`: none now, run again at `t` (the host queue
    /// is full until then); `Err(None)`: the ring is empty and the worker goes idle. After
    /// handing `p` on, the caller reports when it leaves the host's NIC ([`VirtioTx::sent`]).
    pub fn vhost_take(&mut self, now: Time) -> Result<Packet, Option<Time>> {
        while self.host_queue.front().is_some_and(|&t| t <= now) {
            self.host_queue.pop_front();
        }
        if self.ring.is_empty() {
            self.wake = None;
            return Err(None);
        }
        if self.host_queue.len() >= self.cfg.tap_queue as usize {
            let at = self.host_queue[0];
            self.wake = Some(at);
            return Err(Some(at));
        }
        let p = self.ring.pop_front().expect("not empty");
        if closes_skb(&p) {
            self.ring_skbs -= 1;
        }
        self.ring_bytes -= u64::from(p.wire_bytes);
        Ok(p)
    }

    /// The packet vhost just handed on leaves the host's NIC at `at` (the end of its
    /// serialisation; the NIC is a FIFO, so these times do not decrease).
    pub fn sent(&mut self, at: Time) {
        self.host_queue.push_back(at);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_cc::Dur;

    fn seg(seq: u64, skb_bytes: u32) -> Packet {
        Packet::test_segment(0, seq, 1500, skb_bytes)
    }

    fn seq(p: Result<Packet, Option<Time>>) -> Result<u64, Option<Time>> {
        p.map(|p| match p.payload {
            Payload::Data { seq, .. } => seq,
            _ => u64::MAX,
        })
    }

    fn cfg(tx_ring: u32, tap_queue: u32) -> VirtioConfig {
        VirtioConfig {
            tx_ring,
            tap_queue,
            vhost_wakeup: Dur::from_micros(20),
            ..VirtioConfig::default()
        }
    }

    #[test]
    fn one_descriptor_per_skb_and_the_qdisc_behind_a_full_ring() {
        let mut v = VirtioTx::new(cfg(2, 10));
        let t = Time(1000);
        // A two-segment skb uses one descriptor; the first post kicks the idle worker.
        assert_eq!(
            v.guest_xmit(t, seg(0, 0)),
            Xmit::Posted {
                kick: Some(Time(21_000))
            }
        );
        assert_eq!(v.guest_xmit(t, seg(1, 3000)), Xmit::Posted { kick: None });
        assert_eq!(v.ring_skbs(), 1);
        assert_eq!(v.guest_xmit(t, seg(2, 1500)), Xmit::Posted { kick: None });
        assert!(v.ring_full());
        assert_eq!(v.guest_xmit(t, seg(3, 1500)), Xmit::Queued);
        assert_eq!(v.refill(t), None);
        // vhost takes in order; a freed descriptor lets the guest post from its qdisc.
        let w = Time(21_000);
        assert_eq!(seq(v.vhost_take(w)), Ok(0));
        v.sent(w);
        assert!(
            v.ring_full(),
            "the descriptor is the skb's, freed with its last segment"
        );
        assert_eq!(seq(v.vhost_take(w)), Ok(1));
        v.sent(w);
        let (p, kick) = v.refill(w).expect("a free descriptor");
        assert_eq!((seq(Ok(p)), kick), (Ok(3), None));
        assert_eq!(v.qdisc_packets(), 0);
    }

    #[test]
    fn the_guest_qdisc_drops_beyond_its_limit() {
        let mut v = VirtioTx::new(cfg(1, 10));
        assert!(matches!(
            v.guest_xmit(Time::ZERO, seg(0, 1500)),
            Xmit::Posted { .. }
        ));
        for s in 1..=GUEST_QDISC_LIMIT as u64 {
            assert_eq!(v.guest_xmit(Time::ZERO, seg(s, 1500)), Xmit::Queued);
        }
        assert_eq!(v.qdisc_packets(), GUEST_QDISC_LIMIT);
        assert_eq!(v.guest_xmit(Time::ZERO, seg(9999, 1500)), Xmit::Dropped);
        assert_eq!(v.stops(), 1, "the queue stopped once");
        assert_eq!(v.packets().count(), GUEST_QDISC_LIMIT + 1);
    }

    #[test]
    fn vhost_waits_for_room_in_the_host_queue_and_idles_when_empty() {
        let mut v = VirtioTx::new(cfg(8, 2));
        for s in 0..4 {
            v.guest_xmit(Time::ZERO, seg(s, 1500));
        }
        let w = Time(20_000);
        // The host NIC sends one packet every 12 µs: two fill the host queue.
        for (i, end) in [(0, 32_000), (1, 44_000)] {
            assert_eq!(seq(v.vhost_take(w)), Ok(i));
            v.sent(Time(end));
        }
        // vhost waits until the first of them has left.
        assert_eq!(v.vhost_take(w), Err(Some(Time(32_000))));
        assert_eq!(v.wake(), Some(Time(32_000)));
        assert_eq!(seq(v.vhost_take(Time(32_000))), Ok(2));
        v.sent(Time(56_000));
        assert_eq!(v.vhost_take(Time(32_000)), Err(Some(Time(44_000))));
        assert_eq!(seq(v.vhost_take(Time(44_000))), Ok(3));
        v.sent(Time(68_000));
        assert_eq!(v.vhost_take(Time(44_000)), Err(None));
        assert_eq!(v.wake(), None);
        assert_eq!(v.ring_skbs(), 0);
    }
}
