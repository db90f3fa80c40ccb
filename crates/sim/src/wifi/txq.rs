//! The transmit queues of one 802.11 interface as Linux mac80211 builds them: one txq per
//! station and TID, each an fq_codel instance, Airtime Queue Limits (AQL) and the airtime
//! fairness scheduler that picks the station to serve when the driver wins the channel.
//!
//! Contract: [`Txqs`] is sans-IO and generic over a frame handle ([`TxqFrame`]: its length and
//! a flow hash). The caller (a driver model) enqueues frames with [`Txqs::enqueue`]; when an AC
//! wins the channel it asks [`Txqs::next_txq`] for the txq to serve and pulls frames with
//! [`Txqs::dequeue`] (CoDel runs there, with the time passed in) for as long as it wants to grow
//! the aggregate, registers each frame handed to the hardware with [`Txqs::tx_pending`] (its
//! estimated airtime, e.g. [`expected_tx_airtime`]) and reports its completion with
//! [`Txqs::tx_completed`] (the estimate again, and the airtime actually used). The aggregate
//! therefore depends on what is queued. [`Txqs::enqueue_or_merge`] packs a frame into the last
//! frame of its flow as an A-MSDU (`ieee80211_amsdu_aggregate`), and [`Txqs::return_txq`] keeps
//! a txq scheduled while the driver holds frames of it. The BSS MAC ([`super::mac`]) drives it. Frames dropped inside (CoDel, the packet limit) are
//! reported, never lost silently. No randomness; the same calls give the same results.
//!
//! The AP has one [`Txqs`] with a station per associated client; a client has one with a single
//! station, the AP. Rules and sources:
//! - fq (`include/net/fq.h`, `include/net/fq_impl.h`, set up by `ieee80211_txq_setup_flows` in
//!   `net/mac80211/tx.c`): `fq_init(&local->fq, 4096)` gives 4096 flows shared by all txqs, a
//!   quantum of 300 bytes and a limit of 8192 packets (`fq->limit`). A frame goes to flow
//!   `reciprocal_scale(hash, 4096)`; if that flow is busy in another txq it goes to the txq's own
//!   default flow (`fq_flow_classify`). A flow that becomes non-empty joins its txq's
//!   new-flows list with a deficit of one quantum; dequeue serves new flows first, then old
//!   ones, in deficit round robin (`fq_tin_dequeue`). Above the limit the head of the fattest
//!   flow of the whole interface (most bytes; the first such on ties) is dropped
//!   (`fq_tin_enqueue`, `fq_find_fattest_flow`, `fq_flow_drop`). The memory limit
//!   (`fq->memory_limit`, skb truesize) is not modelled.
//! - CoDel per flow at dequeue (`fq_tin_dequeue_func` → `codel_dequeue` in `tx.c`), with the
//!   control law of [`crate::queue::codel`]. Parameters per station (`__sta_info_alloc`,
//!   `net/mac80211/sta_info.c`): target 20 ms, interval 100 ms; `sta_update_codel_params`
//!   switches a station whose expected throughput is below `STA_SLOW_THRESHOLD` (6000 kbit/s)
//!   times the number of stations to target 50 ms, interval 300 ms
//!   ([`Txqs::set_expected_throughput`]). mac80211 never sets `cparams.mtu`, so the backlog
//!   guard of `codel_should_drop` is `flow backlog ≤ 0`: CoDel drops unless the head is the
//!   flow's last frame. Frames are not ECN-capable here (mac80211 enables ECN marking; a frame
//!   handle carries no ECN field), so CoDel drops.
//! - AQL (`ieee80211_txq_airtime_check`, `tx.c`; defaults
//!   `IEEE80211_DEFAULT_AQL_TXQ_LIMIT_L`/`_H`, 5000/12000 µs per station and AC, and
//!   `IEEE80211_AQL_THRESHOLD`, 24000 µs per interface, `include/net/cfg80211.h`): a txq may be
//!   served while its station's pending airtime in that AC is below the low limit, or below the
//!   high limit while the interface's pending airtime is below the threshold. Pending airtime
//!   is the estimate of every frame handed to the hardware and not yet completed
//!   (`ieee80211_sta_update_pending_airtime`, `sta_info.c`).
//! - Airtime fairness (`ieee80211_next_txq`, `tx.c`, the deficit round robin of Linux 6.0 on:
//!   commits 942741dabcb4 "wifi: mac80211: switch airtime fairness back to deficit round-robin
//!   scheduling", which replaced the virtual-time scheduler, and 9c1be3cde004 "consider
//!   aql_tx_pending when checking airtime deficit", Felix Fietkau 2022): per AC, the txqs with
//!   frames form a list; the head's station is served if its deficit minus its pending
//!   airtime is not negative and AQL allows it; otherwise a negative deficit is refilled by the
//!   station's `airtime_weight` (`IEEE80211_DEFAULT_AIRTIME_WEIGHT`, 256 µs) and the txq moves
//!   to the tail. The txq served stays at the head (`__ieee80211_schedule_txq` re-adds it at
//!   the head with airtime accounting on), so it is served until its deficit goes negative.
//!   The airtime reported at TX completion is charged to the deficit
//!   (`ieee80211_sta_register_airtime`).
//!   Not modelled: `AIRTIME_ACTIVE_DURATION` (8ccc07028cb7: a txq emptied with a negative
//!   deficit stays listed for 100 ms), the per-PHY AQL limit of 8e4bac067105, the schedule
//!   rounds of `ieee80211_txq_schedule_start`, RX airtime, and txqs without a station
//!   (multicast, management).

use std::collections::VecDeque;

use cclab_cc::{Dur, Time};

use super::edca::AccessCategory;
use super::phy::Phy;
use crate::net::{FlowKey, NetPacket};
use crate::packet::Ecn;
use crate::queue::Tally;
use crate::queue::codel::{CodelLaw, CodelQueue, CodelVars, codel_dequeue};

/// Flows of the interface's fq (`fq_init(&local->fq, 4096)` in `ieee80211_txq_setup_flows`).
pub const FLOWS_CNT: u32 = 4096;
/// DRR quantum in bytes (`fq_init`: `fq->quantum = 300`).
pub const QUANTUM: u32 = 300;
/// Packet limit of the whole interface (`fq_init`: `fq->limit = 8192`).
pub const LIMIT: u32 = 8192;
/// Per station and AC AQL low limit (`IEEE80211_DEFAULT_AQL_TXQ_LIMIT_L`, µs).
pub const AQL_LIMIT_LOW: Dur = Dur::from_micros(5000);
/// Per station and AC AQL high limit (`IEEE80211_DEFAULT_AQL_TXQ_LIMIT_H`, µs).
pub const AQL_LIMIT_HIGH: Dur = Dur::from_micros(12000);
/// Interface pending airtime above which stations get the low limit (`IEEE80211_AQL_THRESHOLD`).
pub const AQL_THRESHOLD: Dur = Dur::from_micros(24000);
/// Default airtime weight, the DRR quantum of the scheduler
/// (`IEEE80211_DEFAULT_AIRTIME_WEIGHT`, µs).
pub const AIRTIME_WEIGHT: Dur = Dur::from_micros(256);
/// Expected throughput below which (times the station count) a station gets the slow CoDel
/// parameters (`STA_SLOW_THRESHOLD`, kbit/s, `net/mac80211/sta_info.c`).
pub const STA_SLOW_THRESHOLD_KBPS: u32 = 6000;
/// TIDs with QoS data (IEEE 802.11-2020 §9.2.4.5.2: TIDs 0–7 are user priorities).
pub const NUM_TIDS: usize = 8;

/// The CoDel law of a station (`__sta_info_alloc`: 20 ms / 100 ms).
const CODEL_NORMAL: (Dur, Dur) = (Dur::from_millis(20), Dur::from_millis(100));
/// The CoDel law of a slow station (`sta_update_codel_params`: 50 ms / 300 ms).
const CODEL_SLOW: (Dur, Dur) = (Dur::from_millis(50), Dur::from_millis(300));

/// A frame handle: what the queues need to know of a frame.
pub trait TxqFrame: Copy + std::fmt::Debug {
    /// MSDU length in bytes (`skb->len`: DRR and the fattest-flow choice count these).
    fn bytes(&self) -> u32;
    /// The flow hash (`skb_get_hash`), from which fq picks the flow.
    fn flow_hash(&self) -> u32;
}

/// The plain frame handle: an id of the caller's choice (as the MAC's `u64` frame id), its
/// length and its flow hash.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame {
    /// The caller's id.
    pub id: u64,
    /// Length in bytes.
    pub len: u32,
    /// Flow hash.
    pub flow_hash: u32,
}

impl TxqFrame for Frame {
    fn bytes(&self) -> u32 {
        self.len
    }
    fn flow_hash(&self) -> u32 {
        self.flow_hash
    }
}

/// A station of the interface, as returned by [`Txqs::add_station`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StaId(u32);

impl StaId {
    /// The station's index, in the order of [`Txqs::add_station`].
    #[must_use]
    pub fn index(self) -> u32 {
        self.0
    }
}

/// A traffic identifier 0–7 (a user priority).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Tid(u8);

impl Tid {
    /// TID `t`, if it is 0–7.
    #[must_use]
    pub fn new(t: u8) -> Option<Tid> {
        (usize::from(t) < NUM_TIDS).then_some(Tid(t))
    }
    /// Its value.
    #[must_use]
    pub fn get(self) -> u8 {
        self.0
    }
    /// Its access category (IEEE 802.11-2020 Table 10-1).
    #[must_use]
    pub fn ac(self) -> AccessCategory {
        AccessCategory::of_user_priority(self.0)
    }
    /// The first user priority of `ac` in the order of Linux `ieee802_1d_to_ac`
    /// (`net/mac80211/wme.c`, IEEE 802.11-2020 Table 10-1): BE 0, BK 1, VI 4, VO 6, the TID
    /// of a frame classified only by its AC.
    #[must_use]
    pub fn of_ac(ac: AccessCategory) -> Tid {
        Tid(match ac {
            AccessCategory::Be => 0,
            AccessCategory::Bk => 1,
            AccessCategory::Vi => 4,
            AccessCategory::Vo => 6,
        })
    }
}

/// One txq: a station and a TID.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TxqId {
    /// The station.
    pub sta: StaId,
    /// The TID.
    pub tid: Tid,
}

/// Why a frame was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// The interface held more than [`LIMIT`] frames: the head of the fattest flow went.
    Overlimit,
    /// CoDel dropped it at dequeue.
    Codel,
    /// The station is not one of this interface's (it was never queued).
    UnknownStation,
}

/// A dropped frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dropped<F> {
    /// The txq it was in.
    pub txq: TxqId,
    /// The frame.
    pub frame: F,
    /// Why.
    pub reason: DropReason,
}

/// The expected airtime of one frame of `len` bytes at `phy`'s rate, the estimate mac80211
/// charges as pending airtime (`ieee80211_calc_expected_tx_airtime`, `net/mac80211/airtime.c`):
/// the PPDU of the frame alone if it is not aggregated, its bits at the PHY data rate if it is
/// (its share of the aggregate's preamble is left out, so the estimate is a lower bound).
#[must_use]
pub fn expected_tx_airtime(phy: &Phy, len: u32, ampdu: bool) -> Dur {
    if ampdu {
        Dur::serialization(u64::from(len), phy_rate_bps(phy))
    } else {
        phy.ppdu_airtime(u64::from(len))
    }
}

/// [`expected_tx_airtime`] of one link's frames, keeping the PHY data rate while the link's
/// estimate rate stays the same (the same results, without the rate computed per frame).
#[derive(Clone, Copy, Debug)]
pub struct AirtimeEstimate {
    phy: Phy,
    rate_bps: u64,
}

impl AirtimeEstimate {
    /// Estimates at `phy`'s rate.
    #[must_use]
    pub fn new(phy: &Phy) -> Self {
        AirtimeEstimate {
            phy: *phy,
            rate_bps: phy_rate_bps(phy),
        }
    }

    /// `expected_tx_airtime(phy, len, ampdu)`.
    pub fn airtime(&mut self, phy: &Phy, len: u32, ampdu: bool) -> Dur {
        if *phy != self.phy {
            *self = Self::new(phy);
        }
        self.airtime_at_last(len, ampdu)
    }

    /// `expected_tx_airtime` at the PHY of the last call (or of [`Self::new`]).
    #[must_use]
    pub fn airtime_at_last(&self, len: u32, ampdu: bool) -> Dur {
        if ampdu {
            Dur::serialization(u64::from(len), self.rate_bps)
        } else {
            self.phy.ppdu_airtime(u64::from(len))
        }
    }
}

/// The PHY data rate in whole bit/s: data bits per symbol over the symbol time.
fn phy_rate_bps(phy: &Phy) -> u64 {
    phy.n_dbps() * 1_000_000_000 / phy.symbol().as_nanos().max(1)
}

/// A queued frame as the CoDel control law sees it (not ECN-capable).
#[derive(Clone, Copy, Debug)]
struct Held<F>(F);

impl<F: TxqFrame> NetPacket for Held<F> {
    fn wire_bytes(&self) -> u32 {
        self.0.bytes()
    }
    fn ecn(&self) -> Ecn {
        Ecn::NotEct
    }
    fn set_ecn(&mut self, _ecn: Ecn) {}
    fn dscp(&self) -> u8 {
        0
    }
    fn flow_key(&self) -> FlowKey {
        FlowKey(u64::from(self.0.flow_hash()))
    }
}

/// One fq flow (`struct fq_flow`) with its CoDel state (`local->cvars[idx]` or the txq's
/// `def_cvars`).
#[derive(Debug)]
struct Flow<F> {
    queue: VecDeque<(Held<F>, Time)>,
    /// Bytes queued (`flow->backlog`).
    bytes: u64,
    /// DRR deficit in bytes.
    deficit: i64,
    /// The txq it serves while it is on a list (`flow->tin`).
    txq: Option<usize>,
    /// On its txq's new or old list (`!list_empty(&flow->flowchain)`).
    listed: bool,
    cvars: CodelVars,
}

impl<F> Flow<F> {
    fn new() -> Self {
        Flow {
            queue: VecDeque::new(),
            bytes: 0,
            deficit: 0,
            txq: None,
            listed: false,
            cvars: CodelVars::default(),
        }
    }
}

/// The flow as [`codel_dequeue`] sees it. mac80211 leaves `cparams.mtu` at 0, so its guard is
/// "nothing behind the head"; the shared control law compares the backlog behind the head with
/// `max(1500, maxpacket)`, so the backlog is reported with `PAD` added and `maxpacket` is `PAD`.
struct CodelFlow<'a, F> {
    queue: &'a mut VecDeque<(Held<F>, Time)>,
    bytes: &'a mut u64,
    dropped: &'a mut Vec<F>,
}

/// The padding of [`CodelFlow`]'s backlog: larger than any frame.
const PAD: u32 = u32::MAX;

impl<F: TxqFrame> CodelQueue for CodelFlow<'_, F> {
    type Pkt = Held<F>;
    fn backlog(&self) -> u64 {
        *self.bytes + u64::from(PAD)
    }
    fn head(&mut self) -> Option<&mut (Held<F>, Time)> {
        self.queue.front_mut()
    }
    fn drop_head(&mut self) {
        if let Some((f, _)) = self.queue.pop_front() {
            *self.bytes -= u64::from(f.0.bytes());
            self.dropped.push(f.0);
        }
    }
}

/// One txq (`struct txq_info` with its `fq_tin`).
#[derive(Debug)]
struct Txq {
    id: TxqId,
    new_flows: VecDeque<usize>,
    old_flows: VecDeque<usize>,
    /// Index of its default flow in `Txqs::flows`.
    default_flow: usize,
    /// Frames queued.
    frames: u32,
    /// On its AC's schedule list.
    scheduled: bool,
    /// The driver holds frames of it (`ieee80211_return_txq(…, force)`): stays scheduled
    /// while empty.
    force: bool,
}

/// Per station state (`struct sta_info`'s `airtime[ac]` and `cparams`).
#[derive(Debug)]
struct Station {
    /// Airtime deficit per AC in ns (`airtime_info.deficit`).
    deficit: [i64; 4],
    /// Pending airtime per AC (`airtime_info.aql_tx_pending`).
    pending: [Dur; 4],
    /// Airtime weight (`sta->airtime_weight`).
    weight: Dur,
    law: CodelLaw,
    /// Airtime used per AC (reported at completion), for statistics.
    airtime: [Dur; 4],
}

/// The txqs of one interface.
#[derive(Debug)]
pub struct Txqs<F> {
    /// `FLOWS_CNT` hashed flows, then one default flow per txq.
    flows: Vec<Flow<F>>,
    txqs: Vec<Txq>,
    stations: Vec<Station>,
    /// Per AC the txqs with frames, in schedule order (`local->active_txqs[ac]`).
    active: [VecDeque<usize>; 4],
    /// Frames queued on the interface (`fq->backlog`).
    backlog: u32,
    /// Pending airtime of the interface (`local->aql_total_pending_airtime`).
    total_pending: Dur,
    /// CoDel drops not yet collected.
    codel_dropped: Vec<Dropped<F>>,
    scratch: Vec<F>,
    tally: Tally,
}

/// A duration in ns as a signed deficit.
fn signed(d: Dur) -> i64 {
    i64::try_from(d.as_nanos()).unwrap_or(i64::MAX)
}

impl<F: TxqFrame> Default for Txqs<F> {
    fn default() -> Self {
        Self::new()
    }
}

impl<F: TxqFrame> Txqs<F> {
    /// An interface without stations.
    #[must_use]
    pub fn new() -> Self {
        Txqs {
            flows: (0..FLOWS_CNT).map(|_| Flow::new()).collect(),
            txqs: Vec::new(),
            stations: Vec::new(),
            active: Default::default(),
            backlog: 0,
            total_pending: Dur::ZERO,
            codel_dropped: Vec::new(),
            scratch: Vec::new(),
            tally: Tally::default(),
        }
    }

    /// Adds a station with the default airtime weight and CoDel parameters.
    pub fn add_station(&mut self) -> StaId {
        let sta = StaId(u32::try_from(self.stations.len()).unwrap_or(u32::MAX));
        self.stations.push(Station {
            deficit: [0; 4],
            pending: [Dur::ZERO; 4],
            weight: AIRTIME_WEIGHT,
            law: law(CODEL_NORMAL),
            airtime: [Dur::ZERO; 4],
        });
        for t in 0..NUM_TIDS {
            let tid = Tid(u8::try_from(t).unwrap_or(0));
            self.flows.push(Flow::new());
            self.txqs.push(Txq {
                id: TxqId { sta, tid },
                new_flows: VecDeque::new(),
                old_flows: VecDeque::new(),
                default_flow: self.flows.len() - 1,
                frames: 0,
                scheduled: false,
                force: false,
            });
        }
        sta
    }

    /// Sets a station's airtime weight (`sta->airtime_weight`, `NL80211_STA_INFO_AIRTIME_WEIGHT`):
    /// the airtime it is given per scheduling round. Long-run airtime shares of backlogged
    /// stations are proportional to their weights.
    pub fn set_airtime_weight(&mut self, sta: StaId, weight: Dur) {
        if let Some(s) = self.station_mut(sta) {
            s.weight = weight.max(Dur::from_micros(1));
        }
    }

    /// A station's expected throughput changed (`sta_update_codel_params`, from
    /// `ieee80211_sta_set_expected_throughput`): below [`STA_SLOW_THRESHOLD_KBPS`] times the
    /// number of stations (and not 0) it gets CoDel target 50 ms / interval 300 ms, else
    /// 20 ms / 100 ms.
    pub fn set_expected_throughput(&mut self, sta: StaId, kbps: u32) {
        let n = u32::try_from(self.stations.len()).unwrap_or(u32::MAX);
        let slow = kbps != 0 && kbps < STA_SLOW_THRESHOLD_KBPS.saturating_mul(n);
        if let Some(s) = self.station_mut(sta) {
            s.law = law(if slow { CODEL_SLOW } else { CODEL_NORMAL });
        }
    }

    /// A station's CoDel (target, interval).
    #[must_use]
    pub fn codel_params(&self, sta: StaId) -> Option<(Dur, Dur)> {
        self.station(sta).map(|s| (s.law.target, s.law.interval))
    }

    fn station(&self, sta: StaId) -> Option<&Station> {
        self.stations.get(usize::try_from(sta.0).ok()?)
    }

    fn station_mut(&mut self, sta: StaId) -> Option<&mut Station> {
        self.stations.get_mut(usize::try_from(sta.0).ok()?)
    }

    fn txq_index(sta: StaId, tid: Tid) -> usize {
        usize::try_from(sta.0).unwrap_or(usize::MAX) * NUM_TIDS + usize::from(tid.0)
    }

    /// Queues `frame` on the txq of `sta` and `tid` at `now` (`ieee80211_txq_enqueue` →
    /// `fq_tin_enqueue`). The frame is always queued; if the interface then holds more than
    /// [`LIMIT`] frames, the head of the fattest flow is dropped and returned as the error
    /// (it may be this frame's flow or another station's).
    ///
    /// # Errors
    /// The frame dropped to respect the limit (the arriving one is queued first), or the
    /// arriving frame itself if `sta` is not one of this interface's stations.
    pub fn enqueue(&mut self, now: Time, sta: StaId, tid: Tid, frame: F) -> Result<(), Dropped<F>> {
        let t = Self::txq_index(sta, tid);
        if t >= self.txqs.len() {
            return Err(Dropped {
                txq: TxqId { sta, tid },
                frame,
                reason: DropReason::UnknownStation,
            });
        }
        // fq_flow_classify: reciprocal_scale(hash, flows_cnt); a flow busy elsewhere → default.
        let idx = Self::flow_index(&frame);
        let f = match self.flows[idx].txq {
            Some(other) if other != t => self.txqs[t].default_flow,
            _ => idx,
        };
        let flow = &mut self.flows[f];
        flow.txq = Some(t);
        flow.bytes += u64::from(frame.bytes());
        flow.queue.push_back((Held(frame), now));
        let txq = &mut self.txqs[t];
        if !flow.listed {
            flow.listed = true;
            flow.deficit = i64::from(QUANTUM);
            txq.new_flows.push_back(f);
        }
        txq.frames += 1;
        self.backlog += 1;
        self.schedule(t);
        if self.backlog > LIMIT {
            return self.drop_fattest().map_or(Ok(()), Err);
        }
        Ok(())
    }

    /// Queues `frame` as [`Self::enqueue`] does, unless it joins the last frame of its flow as
    /// one more A-MSDU subframe (`ieee80211_amsdu_aggregate`, `net/mac80211/tx.c`: the frame's
    /// flow is classified as for enqueue and, if that flow of this txq holds frames, `merge`
    /// is offered its tail; it returns whether it absorbed the frame, and the tail's
    /// [`TxqFrame::bytes`] may grow). A merged frame adds bytes but no packet (the A-MSDU is one
    /// skb) and keeps the tail's enqueue time. Returns whether the frame was merged.
    ///
    /// # Errors
    /// As [`Self::enqueue`] when the frame is queued on its own.
    pub fn enqueue_or_merge(
        &mut self,
        now: Time,
        sta: StaId,
        tid: Tid,
        frame: F,
        merge: impl FnOnce(&mut F, &F) -> bool,
    ) -> Result<bool, Dropped<F>> {
        let t = Self::txq_index(sta, tid);
        if t < self.txqs.len() {
            let idx = Self::flow_index(&frame);
            let f = match self.flows[idx].txq {
                Some(other) if other != t => self.txqs[t].default_flow,
                _ => idx,
            };
            let flow = &mut self.flows[f];
            if flow.txq == Some(t)
                && let Some((tail, _)) = flow.queue.back_mut()
            {
                let before = tail.0.bytes();
                if merge(&mut tail.0, &frame) {
                    flow.bytes = flow.bytes - u64::from(before) + u64::from(tail.0.bytes());
                    return Ok(true);
                }
            }
        }
        self.enqueue(now, sta, tid, frame).map(|()| false)
    }

    /// `reciprocal_scale(hash, FLOWS_CNT)`.
    fn flow_index(frame: &F) -> usize {
        usize::try_from((u64::from(frame.flow_hash()) * u64::from(FLOWS_CNT)) >> 32).unwrap_or(0)
    }

    /// The driver is done with the txq of `sta` and `tid` for now (`ieee80211_return_txq`):
    /// with `force` (frames of it wait in the driver's retry queue) it stays on the schedule
    /// even when empty, so [`Self::next_txq`] keeps offering it; without, it leaves when empty.
    pub fn return_txq(&mut self, sta: StaId, tid: Tid, force: bool) {
        let t = Self::txq_index(sta, tid);
        if t >= self.txqs.len() {
            return;
        }
        self.txqs[t].force = force;
        if force || self.txqs[t].frames > 0 {
            self.schedule(t);
        }
    }

    /// `fq_find_fattest_flow` + `fq_flow_drop`: the head of the flow with the most bytes.
    fn drop_fattest(&mut self) -> Option<Dropped<F>> {
        let mut best: Option<(usize, u64)> = None;
        for (i, fl) in self.flows.iter().enumerate() {
            if fl.bytes > best.map_or(0, |b| b.1) {
                best = Some((i, fl.bytes));
            }
        }
        let (i, _) = best?;
        let t = self.flows[i].txq?;
        let (held, _) = self.flows[i].queue.pop_front()?;
        self.flows[i].bytes -= u64::from(held.0.bytes());
        self.txqs[t].frames -= 1;
        self.backlog -= 1;
        Some(Dropped {
            txq: self.txqs[t].id,
            frame: held.0,
            reason: DropReason::Overlimit,
        })
    }

    /// Puts txq `t` on its AC's schedule list if it is not there.
    fn schedule(&mut self, t: usize) {
        let txq = &mut self.txqs[t];
        if !txq.scheduled {
            txq.scheduled = true;
            self.active[txq.id.tid.ac().index()].push_back(t);
        }
    }

    /// `ieee80211_txq_airtime_check`: may `sta` be served in AC `a`?
    fn airtime_check(&self, s: &Station, a: usize) -> bool {
        s.pending[a] < AQL_LIMIT_LOW
            || (self.total_pending < AQL_THRESHOLD && s.pending[a] < AQL_LIMIT_HIGH)
    }

    /// May the txq of `sta` and `tid` be served now under AQL?
    #[must_use]
    pub fn may_transmit(&self, sta: StaId, tid: Tid) -> bool {
        self.station(sta)
            .is_some_and(|s| self.airtime_check(s, tid.ac().index()))
    }

    /// The txq to serve in `ac` (`ieee80211_next_txq`), or `None` if no txq with frames may be
    /// served (all are empty or over their AQL limit). Rotates the schedule list and refills
    /// deficits as it goes; the txq returned stays at the head of the list.
    pub fn next_txq(&mut self, ac: AccessCategory) -> Option<TxqId> {
        let a = ac.index();
        let mut head: Option<usize> = None;
        let mut found_eligible = false;
        loop {
            let &t = self.active[a].front()?;
            if self.txqs[t].frames == 0 && !self.txqs[t].force {
                // Emptied (by dequeue or a drop): off the list.
                self.active[a].pop_front();
                self.txqs[t].scheduled = false;
                if head == Some(t) {
                    head = None;
                }
                continue;
            }
            if head == Some(t) {
                if !found_eligible {
                    return None;
                }
                found_eligible = false;
            }
            head.get_or_insert(t);
            let si = usize::try_from(self.txqs[t].id.sta.0).unwrap_or(usize::MAX);
            let s = &self.stations[si];
            let aql = self.airtime_check(s, a);
            let deficit = s.deficit[a] - signed(s.pending[a]);
            if aql {
                found_eligible = true;
            }
            if deficit < 0 {
                let w = signed(s.weight);
                self.stations[si].deficit[a] += w;
            }
            if deficit < 0 || !aql {
                self.active[a].rotate_left(1);
                continue;
            }
            return Some(self.txqs[t].id);
        }
    }

    /// The next frame of the txq of `sta` and `tid` at `now` (`ieee80211_tx_dequeue` →
    /// `fq_tin_dequeue`, CoDel per flow), or `None` if it is empty or its station is over its
    /// AQL limit. mac80211 applies AQL when it picks a txq (`ieee80211_next_txq`,
    /// `ieee80211_txq_may_transmit`); here it is also checked before each frame, so a driver
    /// pulling greedily stops at the first frame that takes the pending airtime to the limit or
    /// beyond. CoDel drops are collected by [`Self::take_drops`].
    pub fn dequeue(&mut self, now: Time, sta: StaId, tid: Tid) -> Option<F> {
        let t = Self::txq_index(sta, tid);
        if t >= self.txqs.len() || !self.may_transmit(sta, tid) {
            return None;
        }
        let law = &self.stations[usize::try_from(sta.0).unwrap_or(usize::MAX)].law;
        loop {
            let txq = &mut self.txqs[t];
            let (f, from_new) = if let Some(&f) = txq.new_flows.front() {
                (f, true)
            } else {
                (*txq.old_flows.front()?, false)
            };
            let flow = &mut self.flows[f];
            if flow.deficit <= 0 {
                // Each visit adds a quantum and moves the flow to the tail of the old flows. A
                // flow alone on the lists comes back at once: the visits until its deficit is
                // positive are made in one step (the same deficit and list as visit by visit).
                let alone = txq.new_flows.len() + txq.old_flows.len() == 1;
                let visits = if alone {
                    -flow.deficit / i64::from(QUANTUM) + 1
                } else {
                    1
                };
                flow.deficit += visits * i64::from(QUANTUM);
                if from_new {
                    txq.new_flows.pop_front();
                } else {
                    txq.old_flows.pop_front();
                }
                txq.old_flows.push_back(f);
                continue;
            }
            let mut maxpacket = PAD;
            let have = codel_dequeue(
                &mut CodelFlow {
                    queue: &mut flow.queue,
                    bytes: &mut flow.bytes,
                    dropped: &mut self.scratch,
                },
                now,
                law,
                &mut flow.cvars,
                &mut maxpacket,
                &mut self.tally,
            );
            if !self.scratch.is_empty() {
                let n = u32::try_from(self.scratch.len()).unwrap_or(u32::MAX);
                txq.frames -= n;
                self.backlog -= n;
                let id = txq.id;
                self.codel_dropped
                    .extend(self.scratch.drain(..).map(|frame| Dropped {
                        txq: id,
                        frame,
                        reason: DropReason::Codel,
                    }));
            }
            if !have {
                // Empty: a new flow goes behind the old ones if there are any, else it leaves.
                if from_new && !txq.old_flows.is_empty() {
                    txq.new_flows.pop_front();
                    txq.old_flows.push_back(f);
                } else {
                    if from_new {
                        txq.new_flows.pop_front();
                    } else {
                        txq.old_flows.pop_front();
                    }
                    flow.txq = None;
                    flow.listed = false;
                }
                continue;
            }
            let (held, _) = flow.queue.pop_front()?;
            flow.bytes -= u64::from(held.0.bytes());
            flow.deficit -= i64::from(held.0.bytes());
            txq.frames -= 1;
            self.backlog -= 1;
            return Some(held.0);
        }
    }

    /// Frames CoDel dropped since the last call, in drop order.
    pub fn take_drops(&mut self) -> Vec<Dropped<F>> {
        std::mem::take(&mut self.codel_dropped)
    }

    /// Whether CoDel dropped frames since the last [`Self::take_drops`].
    #[must_use]
    pub fn has_drops(&self) -> bool {
        !self.codel_dropped.is_empty()
    }

    /// A frame of `sta` in `ac` with estimated airtime `est` went to the hardware
    /// (`ieee80211_sta_update_pending_airtime(…, tx_completed = false)`).
    pub fn tx_pending(&mut self, sta: StaId, ac: AccessCategory, est: Dur) {
        let a = ac.index();
        if let Some(s) = self.station_mut(sta) {
            s.pending[a] += est;
            self.total_pending += est;
        }
    }

    /// A frame of `sta` in `ac` registered with estimate `est` completed after using `actual`
    /// airtime: its estimate leaves the pending airtime (saturating at 0, as Linux clamps) and
    /// `actual` is charged to the station's deficit (`ieee80211_sta_register_airtime`).
    pub fn tx_completed(&mut self, sta: StaId, ac: AccessCategory, est: Dur, actual: Dur) {
        let a = ac.index();
        if let Some(s) = self.station_mut(sta) {
            let est = est.min(s.pending[a]);
            s.pending[a] = s.pending[a] - est;
            s.deficit[a] -= signed(actual);
            s.airtime[a] += actual;
            self.total_pending = self.total_pending - est.min(self.total_pending);
        }
    }

    /// [`Self::tx_completed`] for each frame of an aggregate in turn, with estimates `ests`: the
    /// first frame used `first`, the others `each`.
    pub fn tx_completed_each(
        &mut self,
        sta: StaId,
        ac: AccessCategory,
        ests: impl IntoIterator<Item = Dur>,
        first: Dur,
        each: Dur,
    ) {
        let a = ac.index();
        let Some(s) = self
            .stations
            .get_mut(usize::try_from(sta.0).unwrap_or(usize::MAX))
        else {
            return;
        };
        for (k, est) in ests.into_iter().enumerate() {
            let actual = if k == 0 { first } else { each };
            let est = est.min(s.pending[a]);
            s.pending[a] = s.pending[a] - est;
            s.deficit[a] -= signed(actual);
            s.airtime[a] += actual;
            self.total_pending = self.total_pending - est.min(self.total_pending);
        }
    }

    /// A station's pending airtime in `ac`.
    #[must_use]
    pub fn pending_airtime(&self, sta: StaId, ac: AccessCategory) -> Dur {
        self.station(sta)
            .map_or(Dur::ZERO, |s| s.pending[ac.index()])
    }

    /// The interface's pending airtime.
    #[must_use]
    pub fn total_pending_airtime(&self) -> Dur {
        self.total_pending
    }

    /// Airtime charged to a station in `ac` so far (the sum of `actual` at completion).
    #[must_use]
    pub fn airtime_used(&self, sta: StaId, ac: AccessCategory) -> Dur {
        self.station(sta)
            .map_or(Dur::ZERO, |s| s.airtime[ac.index()])
    }

    /// Frames queued on the interface.
    #[must_use]
    pub fn backlog(&self) -> u32 {
        self.backlog
    }

    /// Frames queued on one txq.
    #[must_use]
    pub fn txq_backlog(&self, sta: StaId, tid: Tid) -> u32 {
        self.txqs
            .get(Self::txq_index(sta, tid))
            .map_or(0, |t| t.frames)
    }
}

/// The CoDel law of (target, interval); no ECN (see the module doc), no CE threshold.
fn law((target, interval): (Dur, Dur)) -> CodelLaw {
    CodelLaw {
        target,
        interval,
        ecn: false,
        ce_threshold: None,
        standing_bytes: None,
    }
}
