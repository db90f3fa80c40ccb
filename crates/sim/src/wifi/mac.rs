//! The MAC of one 802.11n/ac/ax BSS: an AP and N stations sharing one channel, with EDCA
//! contention, A-MPDU aggregation, per-MPDU errors and retransmissions, and Block Ack.
//!
//! Contract: [`Mac`] is sans-IO. Frames enter with [`Mac::enqueue`] (an opaque `u64` id of the
//! caller's choice, the MSDU length in bytes, the access category; between the AP and one
//! station). The caller asks [`Mac::poll_at`] when to call next and calls [`Mac::on_time`] at
//! that time; it returns the [`MacEvent`]s due by then, in time order. Time is always passed in;
//! the random streams derive from `(seed, component)` (see [`crate::rng`]), so a run is
//! deterministic. Every node (AP and stations) has one transmit queue per access category, and
//! per receiver and AC one Block Ack agreement (the TID is the AC: one TID per AC).
//!
//! One channel access (rules and sources):
//! - Who transmits is [`Contention`]'s decision (EDCA, IEEE 802.11-2020 §10.22.2), with the AP's
//!   and the stations' default parameters ([`AccessCategory::ap_params`],
//!   [`AccessCategory::station_params`]). An AP whose AC wins serves its stations' queues of that
//!   AC in turn (round robin, as mac80211's `ieee80211_next_txq` without airtime fairness).
//! - The winner sends one A-MPDU to one receiver, the head of that queue built by
//!   [`ampdu::next_ampdu`]: bounded by the Block Ack window counted in free sequence numbers
//!   (MPDUs awaiting retransmission hold theirs: the window starts at the oldest unacknowledged
//!   one, §10.25.2; ns-3 `BlockAckManager`), the recipient's maximum A-MPDU length,
//!   aPPDUMaxTime and the AC's TXOP limit with the Block Ack response. One A-MPDU per access:
//!   several exchanges in one TXOP are not modelled.
//! - The exchange lasts PPDU + SIFS + Block Ack at the basic rate (§10.25.6; a compressed Block
//!   Ack with a 64-bit bitmap, or 256-bit when the agreement's window exceeds 64,
//!   802.11ax-2021 §9.3.1.8.2). Two or more transmitters in one slot collide: every MPDU of every
//!   collider is lost, and the medium is busy for the longest PPDU + SIFS + Block Ack (the
//!   colliders' Block Ack timeout; [`Contention::finish`]).
//! - Without a collision each MPDU is lost independently with the link's packet error rate (one
//!   random stream per station and direction). The Block Ack reports every MPDU; it comes back
//!   if at least one MPDU arrived, and that is the success that resets the contention window;
//!   otherwise the window doubles (§10.22.2.4; ns-3 `QosFrameExchangeManager`).
//! - A lost MPDU stays at the head of its queue and goes again in a later A-MPDU; after
//!   `retry_limit` transmissions it is dropped ([`LONG_RETRY_LIMIT`] by default; §10.23.2.12) and
//!   the recipient is told with a Block Ack Request (its airtime is not modelled). The EDCA
//!   functions have no retry limit of their own: the contention window resets only on a
//!   received Block Ack, not when MPDUs are dropped. Internal collisions (§10.22.2.4) send
//!   nothing and count no MPDU attempt. Window and retries: [`Originator`].
//! - The recipient releases frames in sequence order ([`Reorder`]).
//!
//! Events: [`MacEvent::Delivered`] when the recipient releases the frame in order: at the end of
//! the PPDU, or at the end of the exchange for frames held behind an MPDU given up then; [`MacEvent::TxComplete`] after the Block Ack, when the transmitter's driver learns
//! the outcome and frees the buffer (mac80211 `ieee80211_tx_status`): the instant TCP Small
//! Queues releases budget; [`MacEvent::Dropped`] at the end of the exchange in which the last
//! attempt failed (the buffer is freed then too). [`MacEvent::Transmit`] describes each A-MPDU.
//!
//! Approximation: [`Contention`] only knows whether a queue has frames. When the last MPDUs of a
//! queue are dropped in a failed exchange, its EDCA function still believes it has a frame; if it
//! then wins the channel with nothing to send, the access is void (no airtime; the channel is
//! idle again from that slot, which delays the others by one AIFS).

use std::collections::VecDeque;

use cclab_cc::num::u64_to_f64;
use cclab_cc::{Dur, Time};
use rand_chacha::ChaCha8Rng;

use super::ampdu::{self, AmpduLimits, Bound, MpduFormat, Txop};
use super::blockack::{Originator, Reorder};
use super::edca::{
    AccessCategory, Contention, EdcaError, EdcaParams, LONG_RETRY_LIMIT, QueueId, Timing,
};
use super::phy::{self, Band, Phy, Standard};
use crate::rng;

/// A node of the BSS.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Node {
    /// The access point.
    Ap,
    /// Station `i` (0-based, in [`MacConfig::stations`] order).
    Sta(u32),
}

/// One station's links with the AP.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StationConfig {
    /// The station's PHY toward the AP (fixed MCS).
    pub uplink_phy: Phy,
    /// The AP's PHY toward this station.
    pub downlink_phy: Phy,
    /// Packet error rate of each uplink MPDU, in \[0, 1).
    pub uplink_per: f64,
    /// Packet error rate of each downlink MPDU, in \[0, 1).
    pub downlink_per: f64,
    /// Block Ack window (buffer size) of the agreements in both directions.
    pub ba_window: u16,
    /// Maximum A-MPDU length in bytes in both directions ([`ampdu::max_ampdu_len`]).
    pub max_ampdu_len: u64,
}

impl StationConfig {
    /// The same PHY both ways, no errors, the standard's widest aggregation
    /// ([`AmpduLimits::widest`]).
    #[must_use]
    pub fn new(phy: Phy) -> Self {
        let widest = AmpduLimits::widest(phy.standard());
        StationConfig {
            uplink_phy: phy,
            downlink_phy: phy,
            uplink_per: 0.0,
            downlink_per: 0.0,
            ba_window: widest.ba_window,
            max_ampdu_len: widest.max_len,
        }
    }
}

/// The BSS.
#[derive(Clone, Debug, PartialEq)]
pub struct MacConfig {
    /// The band (slot, SIFS, control-frame signal extension).
    pub band: Band,
    /// Rate of the Block Ack, in Mbit/s (an OFDM rate).
    pub basic_rate_mbps: u32,
    /// MPDU framing of every frame.
    pub format: MpduFormat,
    /// Transmissions of an MPDU before it is dropped.
    pub retry_limit: u32,
    /// The AP's EDCA parameters, by AC (BK, BE, VI, VO).
    pub ap_edca: [EdcaParams; 4],
    /// The stations' EDCA parameters, by AC.
    pub sta_edca: [EdcaParams; 4],
    /// The stations.
    pub stations: Vec<StationConfig>,
}

impl MacConfig {
    /// A 5 GHz BSS of `stations` with the defaults: Block Ack at 24 Mbit/s
    /// ([`phy::DEFAULT_BASIC_RATE_MBPS`]), CCMP QoS data, [`LONG_RETRY_LIMIT`], EDCA defaults.
    #[must_use]
    pub fn new(stations: Vec<StationConfig>) -> Self {
        MacConfig {
            band: Band::Ghz5,
            basic_rate_mbps: phy::DEFAULT_BASIC_RATE_MBPS,
            format: MpduFormat::QOS_CCMP,
            retry_limit: LONG_RETRY_LIMIT,
            ap_edca: AccessCategory::ALL.map(AccessCategory::ap_params),
            sta_edca: AccessCategory::ALL.map(AccessCategory::station_params),
            stations,
        }
    }
}

/// A bad [`MacConfig`] or [`Mac::enqueue`] argument.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum MacError {
    /// A packet error rate outside \[0, 1).
    #[error("station {station}: packet error rate {per} is outside [0, 1)")]
    Per {
        /// The station.
        station: u32,
        /// The rate given.
        per: f64,
    },
    /// A Block Ack window of 0 or above the standard's.
    #[error("station {station}: Block Ack window {window} is outside 1..={max} ({standard:?})")]
    BaWindow {
        /// The station.
        station: u32,
        /// The window given.
        window: u16,
        /// The standard's largest window.
        max: u16,
        /// The station's standard.
        standard: Standard,
    },
    /// A maximum A-MPDU length of 0.
    #[error("station {0}: the maximum A-MPDU length must be at least 1 byte")]
    MaxAmpduLen(u32),
    /// A station PHY in another band than the BSS.
    #[error("station {station}: PHY in {phy:?}, the BSS is in {bss:?}")]
    Band {
        /// The station.
        station: u32,
        /// The PHY's band.
        phy: Band,
        /// The BSS's band.
        bss: Band,
    },
    /// Not an OFDM rate.
    #[error("basic rate {0} Mbit/s is not an OFDM rate (6, 9, 12, 18, 24, 36, 48, 54)")]
    BasicRate(u32),
    /// A retry limit of 0.
    #[error("the retry limit must be at least 1 transmission")]
    RetryLimit,
    /// Invalid EDCA parameters.
    #[error(transparent)]
    Edca(#[from] EdcaError),
    /// No such station.
    #[error("no station {0} in the BSS")]
    UnknownStation(u32),
    /// Frames go between the AP and a station.
    #[error("a frame goes between the AP and a station, not {from:?} -> {to:?}")]
    NotInfrastructure {
        /// Sender given.
        from: Node,
        /// Receiver given.
        to: Node,
    },
}

/// What the MAC reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MacEvent {
    /// An A-MPDU went on air.
    Transmit {
        /// Sender.
        from: Node,
        /// Receiver.
        to: Node,
        /// Access category.
        ac: AccessCategory,
        /// Start of the PPDU (the slot boundary of the access).
        start: Time,
        /// MPDUs in it.
        mpdus: usize,
        /// Of which retransmissions.
        retransmissions: usize,
        /// The limit that stopped it.
        bound: Bound,
        /// PPDU airtime.
        ppdu: Dur,
        /// End of the exchange (after the Block Ack, or the colliders' timeout).
        end: Time,
        /// Lost in a collision.
        collided: bool,
    },
    /// The recipient released a frame in order.
    Delivered {
        /// Sender.
        from: Node,
        /// Receiver.
        to: Node,
        /// The caller's frame id.
        frame: u64,
        /// MSDU length in bytes.
        len: u32,
        /// Release time.
        at: Time,
    },
    /// The sender learnt from the Block Ack that the frame arrived.
    TxComplete {
        /// Sender.
        from: Node,
        /// Receiver.
        to: Node,
        /// The caller's frame id.
        frame: u64,
        /// End of the Block Ack.
        at: Time,
    },
    /// The frame failed its last allowed transmission.
    Dropped {
        /// Sender.
        from: Node,
        /// Receiver.
        to: Node,
        /// The caller's frame id.
        frame: u64,
        /// Transmissions made.
        attempts: u32,
        /// End of the exchange of the last attempt.
        at: Time,
    },
}

impl MacEvent {
    /// When the event happens.
    #[must_use]
    pub fn at(&self) -> Time {
        match *self {
            MacEvent::Transmit { start, .. } => start,
            MacEvent::Delivered { at, .. }
            | MacEvent::TxComplete { at, .. }
            | MacEvent::Dropped { at, .. } => at,
        }
    }
}

/// Per-node counters of its transmissions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeStats {
    /// Channel accesses won with something to send (A-MPDUs sent, collided ones included).
    pub accesses: u64,
    /// Of which collided.
    pub collisions: u64,
    /// Accesses of a lower AC lost to a higher one of the same node.
    pub internal_collisions: u64,
    /// A-MPDU size histogram: `ampdu_sizes[k]` A-MPDUs carried k MPDUs.
    pub ampdu_sizes: Vec<u64>,
    /// A-MPDUs by the limit that bound them, in [`Bound`] order (backlog, Block Ack window,
    /// length, PPDU time, TXOP).
    pub bounds: [u64; 5],
    /// MPDU transmissions, retransmissions included.
    pub mpdus_sent: u64,
    /// MPDU retransmissions.
    pub retries: u64,
    /// MPDUs acknowledged.
    pub acked: u64,
    /// MPDUs dropped at the retry limit.
    pub dropped: u64,
    /// Airtime of its exchanges (PPDU + SIFS + Block Ack, or the collision's duration).
    pub airtime: Dur,
    /// Idle time before its accesses: from the later of the end of the previous exchange and the
    /// queue's first frame to the access (AIFS + backoff slots counted in that idle period).
    pub access_wait: Dur,
}

impl NodeStats {
    /// A-MPDUs bound by `bound`.
    #[must_use]
    pub fn bound_count(&self, bound: Bound) -> u64 {
        self.bounds[bound_index(bound)]
    }

    /// Mean MPDUs per A-MPDU (0 with none sent).
    #[must_use]
    pub fn mean_ampdu(&self) -> f64 {
        if self.accesses == 0 {
            0.0
        } else {
            u64_to_f64(self.mpdus_sent) / u64_to_f64(self.accesses)
        }
    }
}

fn bound_index(b: Bound) -> usize {
    match b {
        Bound::Backlog => 0,
        Bound::BaWindow => 1,
        Bound::Length => 2,
        Bound::PpduTime => 3,
        Bound::Txop => 4,
    }
}

/// One queued MSDU.
#[derive(Clone, Copy, Debug)]
struct Frame {
    frame: u64,
    len: u32,
    mpdu_len: u32,
}

/// One A-MPDU of an access.
struct Tx {
    queue: QueueId,
    link: usize,
    agg: ampdu::Aggregate,
    duration: Dur,
}

/// The BSS MAC. See the module documentation.
#[derive(Debug)]
pub struct Mac {
    cfg: MacConfig,
    contention: Contention,
    /// Per link (`2·station` uplink, `2·station + 1` downlink) and AC.
    txqs: Vec<[Originator<Frame>; 4]>,
    reorder: Vec<[Reorder<(u64, u32)>; 4]>,
    errors: Vec<ChaCha8Rng>,
    /// Per node (AP 0, station i at i + 1) and AC: whether `contention` believes it has a frame.
    has_frame: Vec<[bool; 4]>,
    /// Per node and AC: when the head frame could first be sent (for `access_wait`).
    head_since: Vec<[Time; 4]>,
    /// Next station the AP serves, per AC.
    ap_next: [usize; 4],
    idle_since: Time,
    pending: VecDeque<MacEvent>,
    stats: Vec<NodeStats>,
    released: Vec<(u64, u32)>,
}

impl Mac {
    /// A BSS with empty queues at time 0. Streams: the EDCA functions use
    /// `Contention::new(timing, seed, component)` (AP's four queues first, then each station's,
    /// so adding a station changes nobody's draws); the MPDU errors of link `l` (`2·station`
    /// uplink, `+1` downlink) use a stream keyed by the second draw of `rng::stream(seed,
    /// component)` and `l`.
    ///
    /// # Errors
    /// A [`MacError`] naming the invalid parameter.
    pub fn new(cfg: MacConfig, seed: u64, component: u64) -> Result<Mac, MacError> {
        if phy::legacy_airtime(cfg.band, cfg.basic_rate_mbps, 0).is_none() {
            return Err(MacError::BasicRate(cfg.basic_rate_mbps));
        }
        if cfg.retry_limit == 0 {
            return Err(MacError::RetryLimit);
        }
        for (i, s) in cfg.stations.iter().enumerate() {
            let station = u32::try_from(i).unwrap_or(u32::MAX);
            for per in [s.uplink_per, s.downlink_per] {
                if !(0.0..1.0).contains(&per) {
                    return Err(MacError::Per { station, per });
                }
            }
            for p in [s.uplink_phy, s.downlink_phy] {
                let max = AmpduLimits::widest(p.standard()).ba_window;
                if s.ba_window == 0 || s.ba_window > max {
                    return Err(MacError::BaWindow {
                        station,
                        window: s.ba_window,
                        max,
                        standard: p.standard(),
                    });
                }
                if p.band() != cfg.band {
                    return Err(MacError::Band {
                        station,
                        phy: p.band(),
                        bss: cfg.band,
                    });
                }
            }
            if s.max_ampdu_len == 0 {
                return Err(MacError::MaxAmpduLen(station));
            }
        }
        let mut contention = Contention::new(Timing::of(cfg.band), seed, component);
        let n = cfg.stations.len();
        for node in 0..=n {
            let params = if node == 0 { cfg.ap_edca } else { cfg.sta_edca };
            for ac in AccessCategory::ALL {
                let station = u32::try_from(node).unwrap_or(u32::MAX);
                contention.add_queue(QueueId { station, ac }, params[ac.index()], None)?;
            }
        }
        let mut root = rng::stream(seed, component);
        let _contention_key = rand::Rng::next_u64(&mut root);
        let error_key = rand::Rng::next_u64(&mut root);
        Ok(Mac {
            contention,
            txqs: (0..2 * n).map(|_| Default::default()).collect(),
            reorder: (0..2 * n).map(|_| Default::default()).collect(),
            errors: (0..2 * n)
                .map(|l| rng::stream(error_key, u64::try_from(l).unwrap_or(u64::MAX)))
                .collect(),
            has_frame: vec![[false; 4]; n + 1],
            head_since: vec![[Time::ZERO; 4]; n + 1],
            ap_next: [0; 4],
            idle_since: Time::ZERO,
            pending: VecDeque::new(),
            stats: vec![NodeStats::default(); n + 1],
            released: Vec::new(),
            cfg,
        })
    }

    fn node_index(node: Node) -> usize {
        match node {
            Node::Ap => 0,
            Node::Sta(i) => usize::try_from(i).unwrap_or(usize::MAX).saturating_add(1),
        }
    }

    /// (sender, receiver) of link `l`.
    fn ends(link: usize) -> (Node, Node) {
        let sta = Node::Sta(u32::try_from(link / 2).unwrap_or(u32::MAX));
        if link.is_multiple_of(2) {
            (sta, Node::Ap)
        } else {
            (Node::Ap, sta)
        }
    }

    /// The station's PHY, packet error rate of link `l`.
    fn link_phy(&self, link: usize) -> (&Phy, f64) {
        let s = &self.cfg.stations[link / 2];
        if link.is_multiple_of(2) {
            (&s.uplink_phy, s.uplink_per)
        } else {
            (&s.downlink_phy, s.downlink_per)
        }
    }

    /// Queues frame `frame` (an MSDU of `len` bytes) from `from` to `to` in `ac` at `now`.
    ///
    /// # Errors
    /// An unknown station, or a frame not between the AP and a station.
    pub fn enqueue(
        &mut self,
        now: Time,
        from: Node,
        to: Node,
        ac: AccessCategory,
        frame: u64,
        len: u32,
    ) -> Result<(), MacError> {
        let (sta, link) = match (from, to) {
            (Node::Sta(s), Node::Ap) => (s, 0),
            (Node::Ap, Node::Sta(s)) => (s, 1),
            _ => return Err(MacError::NotInfrastructure { from, to }),
        };
        let s = usize::try_from(sta).unwrap_or(usize::MAX);
        if s >= self.cfg.stations.len() {
            return Err(MacError::UnknownStation(sta));
        }
        let a = ac.index();
        self.txqs[2 * s + link][a].push(Frame {
            frame,
            len,
            mpdu_len: self.cfg.format.mpdu_len(len),
        });
        let node = Self::node_index(from);
        if !self.has_frame[node][a] {
            self.has_frame[node][a] = true;
            self.head_since[node][a] = now;
            let station = u32::try_from(node).unwrap_or(u32::MAX);
            self.contention.enqueue(now, QueueId { station, ac }, 1);
        }
        Ok(())
    }

    /// The next time [`Self::on_time`] has something to do: an event to report or a channel
    /// access. `None` with nothing queued and nothing to report.
    #[must_use]
    pub fn poll_at(&self) -> Option<Time> {
        let event = self.pending.front().map(MacEvent::at);
        match (event, self.contention.poll_at()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Runs the channel up to `now` and appends the events due by then to `out`, in time order.
    /// Call it at [`Self::poll_at`]: frames the caller queues in response to an event can only
    /// join accesses after the time it calls back.
    pub fn on_time(&mut self, now: Time, out: &mut Vec<MacEvent>) {
        while let Some(at) = self.contention.poll_at().filter(|&t| t <= now) {
            self.access(at);
        }
        while self.pending.front().is_some_and(|e| e.at() <= now) {
            out.extend(self.pending.pop_front());
        }
    }

    /// Counters of `node` (`None` for an unknown station).
    #[must_use]
    pub fn stats(&self, node: Node) -> Option<&NodeStats> {
        self.stats.get(Self::node_index(node))
    }

    /// The link the winner of `node`/`ac` serves: a station's uplink, or the AP's next station
    /// with frames of `ac`.
    fn pick_link(&mut self, node: usize, a: usize) -> Option<usize> {
        if node > 0 {
            let link = 2 * (node - 1);
            return (!self.txqs[link][a].is_empty()).then_some(link);
        }
        let n = self.cfg.stations.len();
        for k in 0..n {
            let s = (self.ap_next[a] + k) % n;
            if !self.txqs[2 * s + 1][a].is_empty() {
                self.ap_next[a] = (s + 1) % n;
                return Some(2 * s + 1);
            }
        }
        None
    }

    /// SIFS + Block Ack of link `link`'s agreement.
    fn response(&self, link: usize) -> Dur {
        let bytes = if self.cfg.stations[link / 2].ba_window > ampdu::BA_WINDOW_HT {
            phy::BLOCK_ACK_256_BYTES
        } else {
            phy::BLOCK_ACK_64_BYTES
        };
        let ba = phy::legacy_airtime(self.cfg.band, self.cfg.basic_rate_mbps, bytes)
            .unwrap_or(Dur::ZERO);
        self.cfg.band.sifs() + ba
    }

    /// The A-MPDU of link `link`, AC index `a` (see the module documentation for the limits).
    fn build(&self, link: usize, ac: AccessCategory, node: usize) -> (ampdu::Aggregate, Dur) {
        let txq = &self.txqs[link][ac.index()];
        let s = &self.cfg.stations[link / 2];
        let window = u16::try_from(txq.window_limit(s.ba_window)).unwrap_or(u16::MAX);
        let params = if node == 0 {
            self.cfg.ap_edca
        } else {
            self.cfg.sta_edca
        }[ac.index()];
        let response = self.response(link);
        let limits = AmpduLimits {
            ba_window: window,
            max_len: s.max_ampdu_len,
            max_ppdu: ampdu::PPDU_MAX_TIME,
            txop: (params.txop_limit > Dur::ZERO).then_some(Txop {
                limit: params.txop_limit,
                response,
            }),
        };
        let (phy, _) = self.link_phy(link);
        let agg = ampdu::next_ampdu(phy, txq.items().map(|m| m.mpdu_len), &limits);
        (agg, agg.airtime + response)
    }

    /// The channel access at `at`: every transmitter's exchange, decided now and reported as
    /// its events fall due.
    fn access(&mut self, at: Time) {
        let Some(access) = self.contention.access(at) else {
            return;
        };
        for o in &access.internal {
            let node = usize::try_from(o.queue.station).unwrap_or(usize::MAX);
            self.stats[node].internal_collisions += 1;
        }
        let mut txs = Vec::with_capacity(access.transmitters.len());
        for &queue in &access.transmitters {
            let node = usize::try_from(queue.station).unwrap_or(usize::MAX);
            if let Some(link) = self.pick_link(node, queue.ac.index()) {
                let (agg, duration) = self.build(link, queue.ac, node);
                txs.push(Tx {
                    queue,
                    link,
                    agg,
                    duration,
                });
            }
        }
        if txs.is_empty() {
            // Void access (see the module documentation).
            self.contention.finish(at, true);
            if let [q] = access.transmitters[..] {
                self.has_frame[usize::try_from(q.station).unwrap_or(usize::MAX)][q.ac.index()] =
                    false;
            }
            self.idle_since = at;
            return;
        }
        let collided = access.transmitters.len() > 1;
        let end = at + txs.iter().map(|t| t.duration).max().unwrap_or(Dur::ZERO);
        let mut success = false;
        for tx in &txs {
            let (from, to) = Self::ends(tx.link);
            let node = Self::node_index(from);
            let retransmissions = self.txqs[tx.link][tx.queue.ac.index()]
                .awaiting_retransmission()
                .min(tx.agg.mpdus);
            let st = &mut self.stats[node];
            st.accesses += 1;
            st.collisions += u64::from(collided);
            if st.ampdu_sizes.len() <= tx.agg.mpdus {
                st.ampdu_sizes.resize(tx.agg.mpdus + 1, 0);
            }
            st.ampdu_sizes[tx.agg.mpdus] += 1;
            st.bounds[bound_index(tx.agg.bound)] += 1;
            st.airtime += if collided { end - at } else { tx.duration };
            let a = tx.queue.ac.index();
            st.access_wait += at - self.idle_since.max(self.head_since[node][a]);
            self.pending.push_back(MacEvent::Transmit {
                from,
                to,
                ac: tx.queue.ac,
                start: at,
                mpdus: tx.agg.mpdus,
                retransmissions,
                bound: tx.agg.bound,
                ppdu: tx.agg.airtime,
                end,
                collided,
            });
        }
        for tx in &txs {
            success |= self.exchange(tx, at, end, collided);
        }
        // The only transmitter keeps contending if it still has frames: one more frame for
        // `Contention` before `finish` takes the delivered one off (no extra backoff draw counts:
        // `finish` draws the post-transmission backoff).
        if success {
            let q = txs[0].queue;
            let node = usize::try_from(q.station).unwrap_or(usize::MAX);
            let a = q.ac.index();
            let more = if node == 0 {
                (0..self.cfg.stations.len()).any(|s| !self.txqs[2 * s + 1][a].is_empty())
            } else {
                !self.txqs[2 * (node - 1)][a].is_empty()
            };
            if more {
                self.contention.enqueue(at, q, 1);
                self.head_since[node][a] = end;
            }
            self.has_frame[node][a] = more;
        }
        self.contention.finish(end, success);
        self.idle_since = end;
    }

    /// The outcome of one A-MPDU: per-MPDU errors, deliveries, retries and drops. Returns
    /// whether the Block Ack came back (a single transmitter and at least one MPDU received).
    fn exchange(&mut self, tx: &Tx, at: Time, end: Time, collided: bool) -> bool {
        let (from, to) = Self::ends(tx.link);
        let node = Self::node_index(from);
        let a = tx.queue.ac.index();
        let (_, per) = self.link_phy(tx.link);
        let limit = self.cfg.retry_limit;
        let ppdu_end = at + tx.agg.airtime;
        let errors = &mut self.errors[tx.link];
        let t = self.txqs[tx.link][a].transmitted(tx.agg.mpdus, limit, || {
            collided || rng::unit_f64(errors) < per
        });
        let st = &mut self.stats[node];
        st.mpdus_sent += u64::try_from(tx.agg.mpdus).unwrap_or(u64::MAX);
        st.retries += t.retransmissions;
        st.acked += u64::try_from(t.received.len()).unwrap_or(u64::MAX);
        st.dropped += u64::try_from(t.dropped.len()).unwrap_or(u64::MAX);
        // Recipient: in-order release at the end of the PPDU, then the Block Ack Request for
        // what the originator gave up (its new window start).
        let reorder = &mut self.reorder[tx.link][a];
        let mut out = std::mem::take(&mut self.released);
        for &(seq, m) in &t.received {
            reorder.receive(seq, (m.frame, m.len), &mut out);
        }
        let in_order = out.len();
        reorder.release_before(t.win_start, &mut out);
        for (i, &(frame, len)) in out.iter().enumerate() {
            let at = if i < in_order { ppdu_end } else { end };
            self.pending.push_back(MacEvent::Delivered {
                from,
                to,
                frame,
                len,
                at,
            });
        }
        out.clear();
        self.released = out;
        for (_, m) in &t.received {
            self.pending.push_back(MacEvent::TxComplete {
                from,
                to,
                frame: m.frame,
                at: end,
            });
        }
        for &(m, attempts) in &t.dropped {
            self.pending.push_back(MacEvent::Dropped {
                from,
                to,
                frame: m.frame,
                attempts,
                at: end,
            });
        }
        !collided && !t.received.is_empty()
    }
}
