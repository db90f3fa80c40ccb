//! Wi-Fi BSSs in the engine: the links a [`WifiConfig`] names are the hops of a shared channel,
//! and a packet that takes one waits in the BSS's MAC ([`Mac`]) instead of a link queue.
//!
//! Contract: a packet offered to a Wi-Fi hop becomes one frame of the MAC (from the hop's
//! transmitter to its receiver, in the access category `Mac::access_category` gives its DSCP
//! on that side) and is kept
//! here until the MAC is done with it. The MAC is called at the times it asks for (one
//! `Event::Wifi` per BSS, stale ones skipped) and its events act at their own times:
//! [`MacEvent::Delivered`] hands the packet to the next hop of its route (or consumes it),
//! [`MacEvent::TxComplete`] and [`MacEvent::Dropped`] free the frame and, when the hop was the
//! first of the packet's route (the host's NIC is the MAC), report the data segment's TX
//! completion to its sender (TCP Small Queues: mac80211 frees the skb in
//! `ieee80211_tx_status` after the Block Ack, or when it gives up). A station host therefore
//! sends through the MAC as through a NIC whose completions come with the Block Ack: the TSQ
//! budget bounds the frames it holds, and so the aggregates it can build.
//!
//! Determinism: each BSS's MAC draws from its own streams (`rng::WIFI + index`).

use cclab_cc::{Dur, Time};

use super::{Event, Simulation, id32};
use crate::config::{ConfigError, SimConfig};
use crate::packet::{Owner, Packet};
use crate::results::{WifiNodeResult, WifiNodeSeries, WifiResult};
use crate::wifi::mac::{Mac, MacEvent, Node, NodeStats};

/// The MAC's name of node `i` of a BSS (0 the AP, then the stations).
fn mac_node(i: usize) -> Node {
    if i == 0 {
        Node::Ap
    } else {
        Node::Sta(u32::try_from(i - 1).unwrap_or(u32::MAX))
    }
}

/// A Wi-Fi hop: which BSS, and who sends to whom over it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Hop {
    bss: u32,
    from: Node,
    to: Node,
}

/// A frame in a MAC: the packet (its `hop` already the next one of its route) and what the MAC
/// has reported of it.
#[derive(Clone, Copy, Debug)]
struct Slot {
    pkt: Packet,
    delivered: bool,
    completed: bool,
}

/// One BSS at run time.
#[derive(Debug)]
pub(super) struct BssRt {
    mac: Mac,
    /// Frames by id (ids are slot indexes, reused through `free`).
    slots: Vec<Slot>,
    free: Vec<u32>,
    /// The pending `Event::Wifi` (others are stale).
    wake: Option<Time>,
    events: Vec<MacEvent>,
    /// Node index of the AP, then of each station.
    nodes: Vec<u32>,
    /// Data segments the MAC dropped.
    data_dropped: u64,
    /// Time the channel carried exchanges, and the start of the last one counted (colliders
    /// share one).
    busy: Dur,
    last_access: Option<Time>,
    /// Sample times and, per node (AP first), the series and the counters at the last sample.
    t_s: Vec<f64>,
    series: Vec<WifiNodeSeries>,
    last: Vec<NodeStats>,
}

impl BssRt {
    fn slot(&mut self, frame: u64) -> &mut Slot {
        let i = usize::try_from(frame).unwrap_or(usize::MAX);
        &mut self.slots[i]
    }

    fn release(&mut self, frame: u64) {
        self.free.push(u32::try_from(frame).unwrap_or(u32::MAX));
    }

    /// Data segments in the MAC, not yet delivered.
    fn data_inside(&self) -> u64 {
        let mut free = vec![false; self.slots.len()];
        for &i in &self.free {
            free[i as usize] = true;
        }
        self.slots
            .iter()
            .zip(free)
            .filter(|(s, f)| !f && !s.delivered && s.pkt.is_data())
            .count() as u64
    }
}

/// The BSSs' run-time state and, per link, the Wi-Fi hop it is (empty without BSSs).
pub(super) fn build_wifi(cfg: &SimConfig) -> Result<(Vec<BssRt>, Vec<Option<Hop>>), ConfigError> {
    if cfg.wifi.is_empty() {
        return Ok((Vec::new(), Vec::new()));
    }
    let mut hops = vec![None; cfg.links.len()];
    let mut bsss = Vec::with_capacity(cfg.wifi.len());
    for (b, w) in (0u64..).zip(&cfg.wifi) {
        let mac = Mac::new(w.mac.clone(), cfg.seed, crate::rng::WIFI + b).map_err(|e| {
            ConfigError::Invalid {
                what: format!("wifi `{}`", w.name),
                problem: e.to_string(),
            }
        })?;
        let bss = u32::try_from(b).unwrap_or(u32::MAX);
        for (i, s) in (0u32..).zip(&w.stations) {
            hops[s.uplink.0 as usize] = Some(Hop {
                bss,
                from: Node::Sta(i),
                to: Node::Ap,
            });
            hops[s.downlink.0 as usize] = Some(Hop {
                bss,
                from: Node::Ap,
                to: Node::Sta(i),
            });
        }
        bsss.push(BssRt {
            mac,
            slots: Vec::new(),
            free: Vec::new(),
            wake: None,
            events: Vec::new(),
            nodes: std::iter::once(w.ap.0)
                .chain(w.stations.iter().map(|s| s.node.0))
                .collect(),
            data_dropped: 0,
            busy: Dur::ZERO,
            last_access: None,
            t_s: Vec::new(),
            series: vec![WifiNodeSeries::default(); w.stations.len() + 1],
            last: vec![NodeStats::default(); w.stations.len() + 1],
        });
    }
    Ok((bsss, hops))
}

/// The flow hash of a packet for the transmit queues' fq (mac80211 hashes the 5-tuple): its
/// route, one per flow and direction, probe or UDP source, spread over the 32 bits by Knuth's
/// multiplicative hash (the fq uses the top bits).
fn flow_hash(pkt: &Packet) -> u32 {
    pkt.route.wrapping_add(1).wrapping_mul(0x9E37_79B1)
}

impl Simulation {
    /// `pkt` takes Wi-Fi hop `l` (index `hop - 1` of its route): into the MAC.
    #[cold]
    #[inline(never)]
    pub(super) fn wifi_offer(&mut self, l: usize, pkt: &Packet, hop: u32) {
        let Some(h) = self.wifi_hop[l] else {
            return;
        };
        let b = h.bss as usize;
        let bss = &mut self.wifi[b];
        let slot = Slot {
            pkt: Packet { hop, ..*pkt },
            delivered: false,
            completed: false,
        };
        let id = if let Some(i) = bss.free.pop() {
            bss.slots[i as usize] = slot;
            i
        } else {
            bss.slots.push(slot);
            id32(bss.slots.len() - 1)
        };
        // Validated nodes: the MAC accepts every frame between the AP and one of its stations.
        let ac = bss.mac.access_category(h.from, pkt.dscp);
        let queued = bss.mac.enqueue(
            self.now,
            h.from,
            h.to,
            ac,
            u64::from(id),
            pkt.wire_bytes,
            flow_hash(pkt),
        );
        debug_assert!(queued.is_ok(), "{queued:?}");
        // The MAC's next time moves only when a queue begins to contend or a drop is reported.
        if bss.mac.take_poll_moved() {
            self.wifi_arm(b);
        }
    }

    /// Keep one `Event::Wifi` at BSS `b`'s next time.
    fn wifi_arm(&mut self, b: usize) {
        let bss = &mut self.wifi[b];
        if let Some(t) = bss.mac.poll_at()
            && bss.wake.is_none_or(|w| t < w)
        {
            bss.wake = Some(t);
            self.schedule(t, Event::Wifi(id32(b)));
        }
    }

    /// BSS `b`'s MAC asked to be called now.
    pub(super) fn wifi_wake(&mut self, b: usize) {
        if self.wifi[b].wake != Some(self.now) {
            return; // stale
        }
        self.wifi[b].wake = None;
        let mut events = std::mem::take(&mut self.wifi[b].events);
        self.wifi[b].mac.on_time(self.now, &mut events);
        for e in events.drain(..) {
            debug_assert!(e.at() <= self.now);
            match e {
                MacEvent::Transmit { start, end, .. } => {
                    let bss = &mut self.wifi[b];
                    if bss.last_access != Some(start) {
                        bss.last_access = Some(start);
                        bss.busy += end - start;
                    }
                }
                MacEvent::Delivered { frame, .. } => {
                    let bss = &mut self.wifi[b];
                    let s = bss.slot(frame);
                    debug_assert!(!s.delivered, "frame {frame} delivered twice");
                    s.delivered = true;
                    let pkt = s.pkt;
                    if s.completed {
                        bss.release(frame);
                    }
                    self.forward(&pkt, pkt.hop);
                }
                MacEvent::TxComplete { frame, .. } => {
                    let bss = &mut self.wifi[b];
                    let s = bss.slot(frame);
                    s.completed = true;
                    let pkt = s.pkt;
                    if s.delivered {
                        bss.release(frame);
                    }
                    self.wifi_tx_done(&pkt);
                }
                MacEvent::Dropped { frame, .. } => {
                    let bss = &mut self.wifi[b];
                    let pkt = bss.slot(frame).pkt;
                    bss.release(frame);
                    if pkt.is_data() {
                        bss.data_dropped += 1;
                    }
                    self.wifi_tx_done(&pkt);
                }
            }
        }
        self.wifi[b].events = events;
        self.wifi_arm(b);
    }

    /// The MAC is done with `pkt` (acknowledged or given up): if its host handed it to the MAC
    /// (the hop was the first of its route), the data segment's bytes leave the socket's TSQ
    /// budget now.
    fn wifi_tx_done(&mut self, pkt: &Packet) {
        if pkt.hop == 1
            && pkt.is_data()
            && let Owner::Flow(f) = pkt.owner
            && self.flows[f.0 as usize].track_tx
        {
            self.tx_complete(f.0 as usize, self.now, pkt.wire_bytes);
        }
    }

    /// One sample of every BSS: each node's activity since the last sample.
    pub(super) fn wifi_sample(&mut self) {
        let t = self.now.as_secs_f64();
        let secs = self.cfg.sample_interval.as_secs_f64();
        for b in &mut self.wifi {
            b.t_s.push(t);
            for (i, (series, last)) in b.series.iter_mut().zip(&mut b.last).enumerate() {
                let now = b.mac.stats(mac_node(i)).cloned().unwrap_or_default();
                let accesses = now.accesses - last.accesses;
                series.mean_ampdu.push((accesses > 0).then(|| {
                    cclab_cc::num::u64_to_f64(now.mpdus_sent - last.mpdus_sent)
                        / cclab_cc::num::u64_to_f64(accesses)
                }));
                series
                    .airtime_share
                    .push((now.airtime - last.airtime).as_secs_f64() / secs);
                series.retries.push(now.retries - last.retries);
                series.collisions.push(now.collisions - last.collisions);
                *last = now;
            }
        }
    }

    /// Data segments the BSSs dropped.
    pub(super) fn wifi_data_dropped(&self) -> u64 {
        self.wifi.iter().map(|b| b.data_dropped).sum()
    }

    /// Data segments inside the BSSs' MACs.
    pub(super) fn wifi_data_inside(&self) -> u64 {
        self.wifi.iter().map(BssRt::data_inside).sum()
    }

    /// The BSSs' results.
    pub(super) fn wifi_results(&self) -> Vec<WifiResult> {
        let duration = self.cfg.duration.as_secs_f64();
        let share = |d: Dur| {
            if duration > 0.0 {
                d.as_secs_f64() / duration
            } else {
                0.0
            }
        };
        self.wifi
            .iter()
            .zip(&self.cfg.wifi)
            .map(|(b, w)| {
                let nodes: Vec<WifiNodeResult> = b
                    .nodes
                    .iter()
                    .enumerate()
                    .map(|(i, &n)| {
                        let st = b.mac.stats(mac_node(i)).cloned().unwrap_or_default();
                        let accesses = st.accesses;
                        WifiNodeResult {
                            node: self.cfg.nodes[n as usize].name.clone(),
                            role: if i == 0 { "ap" } else { "station" },
                            accesses,
                            collisions: st.collisions,
                            internal_collisions: st.internal_collisions,
                            mean_ampdu: st.mean_ampdu(),
                            ampdu_bounds: st.bounds,
                            mpdus_sent: st.mpdus_sent,
                            retries: st.retries,
                            acked: st.acked,
                            dropped: st.dropped,
                            airtime_s: st.airtime.as_secs_f64(),
                            airtime_share: share(st.airtime),
                            access_wait_s: st.access_wait.as_secs_f64(),
                            mean_access_wait_us: if accesses > 0 {
                                st.access_wait.as_secs_f64() * 1e6
                                    / cclab_cc::num::u64_to_f64(accesses)
                            } else {
                                0.0
                            },
                            ampdu_sizes: st.ampdu_sizes,
                            txq_drops: st.txq_drops,
                            collision_airtime_s: st.collision_airtime.as_secs_f64(),
                            mcs_counts: st.mcs_counts,
                            series: b.series[i].clone(),
                        }
                    })
                    .collect();
                WifiResult {
                    name: w.name.clone(),
                    busy_share: share(b.busy),
                    t_s: b.t_s.clone(),
                    nodes,
                }
            })
            .collect()
    }
}
