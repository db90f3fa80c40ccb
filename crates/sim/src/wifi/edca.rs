//! EDCA channel access: the contention of 802.11 transmit queues for one shared channel.
//!
//! Contract: [`Contention`] holds the EDCA functions (one per station and access category) of
//! one channel and decides, slot by slot, which of them transmit and when. It is sans-IO: it has
//! no clock and no PHY. The caller asks [`Contention::poll_at`] for the next access time, calls
//! [`Contention::access`] at that time to learn which queues transmit, and calls
//! [`Contention::finish`] with the instant the medium becomes idle again (it knows the airtime of
//! the exchange; see [`Contention::finish`] for what that airtime should contain). Frames enter
//! with [`Contention::enqueue`] at any time. Outcomes (delivered, retried, dropped) are returned.
//!
//! Rules (IEEE 802.11-2020 §10.3 DCF and §10.22.2 EDCA):
//! - AIFS\[AC\] = aSIFSTime + AIFSN\[AC\]·aSlotTime (§10.3.2.3.6).
//! - A backoff counter is drawn uniformly in \[0, CW\] (§10.3.3, §10.22.2.4), from the queue's
//!   own random stream (derived from the seed and the channel's component id, see
//!   [`crate::rng`]), so adding a station never changes another's draws.
//! - Slot boundaries of a queue fall at AIFS\[AC\] + k·aSlotTime after the medium became idle. At
//!   each boundary the EDCA function either decrements a nonzero counter or, with the counter at
//!   0 and a frame queued, transmits (§10.22.2.4). A boundary at which another queue starts to
//!   transmit still counts; after that the counter is frozen until the medium is idle again.
//!   This is also the process of Bianchi's Markov chain (one decrement per virtual slot).
//! - Two or more stations transmitting at the same boundary collide. Within one station, the
//!   highest AC transmits and each lower AC that reached 0 at the same boundary behaves as if it
//!   had collided ("internal collision", §10.22.2.4).
//! - After a failure CW ← min(2·(CW+1) − 1, CWmax); after a success, or when the retry limit is
//!   reached and the frame is dropped, CW ← CWmin (§10.22.2.4, §10.23.2.12). A new backoff is
//!   drawn after every transmission attempt, even with an empty queue ("post-backoff").
//! - A frame arriving at a queue whose counter is 0 while the medium is busy, or has been idle
//!   for less than its AIFS, draws a new backoff (§10.3.4.3). Otherwise it is sent at the
//!   queue's next slot boundary (the standard allows starting at once; this rounds to the slot
//!   grid, an error below one slot).
//!
//! Clause numbers are those of IEEE 802.11-2020 as the implementations cited here give them
//! (Linux mac80211, hostapd, ns-3); the values were checked against those implementations.
//!
//! The TXOP limit is carried in [`EdcaParams`] for the caller, who decides how many frames one
//! access carries; this module decides only who gets the channel.

use cclab_cc::num::u64_to_f64;
use cclab_cc::{Dur, Time};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::cell::Cell;

use crate::rng;

/// The four EDCA access categories, ordered by priority (BK lowest, VO highest), as in
/// IEEE 802.11-2020 Table 10-1 and Linux `enum ieee80211_ac_numbers`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AccessCategory {
    /// Background (AC_BK).
    Bk,
    /// Best effort (AC_BE).
    Be,
    /// Video (AC_VI).
    Vi,
    /// Voice (AC_VO).
    Vo,
}

impl AccessCategory {
    /// All categories, lowest priority first.
    pub const ALL: [AccessCategory; 4] = [Self::Bk, Self::Be, Self::Vi, Self::Vo];

    /// Position in [`AccessCategory::ALL`] (BK 0 … VO 3), for per-AC arrays.
    #[must_use]
    pub fn index(self) -> usize {
        match self {
            Self::Bk => 0,
            Self::Be => 1,
            Self::Vi => 2,
            Self::Vo => 3,
        }
    }

    /// The AC of an 802.1D user priority (0–7; higher bits ignored): Linux `ieee802_1d_to_ac`
    /// (net/mac80211/wme.c), IEEE 802.11-2020 Table 10-1: 1, 2 → BK; 0, 3 → BE; 4, 5 → VI;
    /// 6, 7 → VO.
    #[must_use]
    pub fn of_user_priority(up: u8) -> AccessCategory {
        match up & 7 {
            1 | 2 => Self::Bk,
            0 | 3 => Self::Be,
            4 | 5 => Self::Vi,
            _ => Self::Vo,
        }
    }

    /// Default EDCA parameters of a non-AP station on an OFDM PHY (aCWmin 15, aCWmax 1023):
    /// IEEE 802.11-2020 Table 9-155 (dot11EDCATable defaults), as Linux
    /// `ieee80211_set_wmm_default` (net/mac80211/util.c) sets them. TXOP limits are those for
    /// OFDM/HT/VHT/HE PHYs (3.008 ms VI, 1.504 ms VO; 0 = one exchange per access).
    #[must_use]
    pub fn station_params(self) -> EdcaParams {
        match self {
            Self::Bk => EdcaParams::new(7, 15, 1023, Dur::ZERO),
            Self::Be => EdcaParams::new(3, 15, 1023, Dur::ZERO),
            Self::Vi => EdcaParams::new(2, 7, 15, Dur::from_micros(3008)),
            Self::Vo => EdcaParams::new(2, 3, 7, Dur::from_micros(1504)),
        }
    }

    /// Default EDCA parameters of an AP for its own transmissions: IEEE 802.11-2020 Table 9-155
    /// (dot11QAPEDCATable defaults: AIFSN 1 for VI/VO, CWmax 63 for BE), the same values as
    /// hostapd's `tx_queue_data0..3_*` defaults in hostapd.conf (which writes the bursts as
    /// 3.0 / 1.5 ms).
    #[must_use]
    pub fn ap_params(self) -> EdcaParams {
        match self {
            Self::Bk => EdcaParams::new(7, 15, 1023, Dur::ZERO),
            Self::Be => EdcaParams::new(3, 15, 63, Dur::ZERO),
            Self::Vi => EdcaParams::new(1, 7, 15, Dur::from_micros(3008)),
            Self::Vo => EdcaParams::new(1, 3, 7, Dur::from_micros(1504)),
        }
    }
}

/// The AC Linux puts a packet with DSCP `dscp` (0–63) in, without a QoS Map from the AP:
/// `cfg80211_classify8021d` (net/wireless/util.c) takes the user priority from the DSCP's three
/// high bits, with the RFC 8325 §4 exceptions (AF1x and CS2 → UP 0; AF2x → 3; CS3, AF3x → 4;
/// VA (44), EF (46) → 6; CS6 → 7), then maps UP → AC with `ieee802_1d_to_ac`.
#[must_use]
pub fn ac_of_dscp(dscp: u8) -> AccessCategory {
    let dscp = dscp & 0x3f;
    let up = match dscp {
        10 | 12 | 14 | 16 => 0,
        18 | 20 | 22 => 3,
        24 | 26 | 28 | 30 => 4,
        44 | 46 => 6,
        48 => 7,
        _ => dscp >> 3,
    };
    AccessCategory::of_user_priority(up)
}

/// The EDCA parameters of one access category (IEEE 802.11-2020 §9.4.2.28 EDCA Parameter Set).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EdcaParams {
    /// Arbitration interframe space number (slots after SIFS; ≥ 1 for an AP, ≥ 2 for a station).
    pub aifsn: u8,
    /// Minimum contention window (2^k − 1).
    pub cw_min: u16,
    /// Maximum contention window (2^k − 1, ≥ `cw_min`).
    pub cw_max: u16,
    /// TXOP limit (0: one frame exchange, or one A-MPDU, per access).
    pub txop_limit: Dur,
}

impl EdcaParams {
    /// Parameters with the given AIFSN, CWmin, CWmax and TXOP limit.
    #[must_use]
    pub const fn new(aifsn: u8, cw_min: u16, cw_max: u16, txop_limit: Dur) -> Self {
        EdcaParams {
            aifsn,
            cw_min,
            cw_max,
            txop_limit,
        }
    }
}

/// Short retry limit (dot11ShortRetryLimit default 7, IEEE 802.11-2020 Annex C; Linux
/// `wiphy_new_nm` sets `retry_short = 7`): attempts of a frame not protected by RTS/CTS.
pub const SHORT_RETRY_LIMIT: u32 = 7;
/// Long retry limit (dot11LongRetryLimit default 4; Linux `retry_long = 4`): attempts of a
/// frame longer than dot11RTSThreshold.
pub const LONG_RETRY_LIMIT: u32 = 4;

/// Slot and SIFS of the PHY.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timing {
    /// aSlotTime.
    pub slot: Dur,
    /// aSIFSTime.
    pub sifs: Dur,
}

impl Timing {
    /// OFDM PHYs at 5 GHz (802.11a/n/ac/ax): slot 9 µs, SIFS 16 µs ([`super::phy::SLOT`],
    /// [`super::phy::SIFS_5GHZ`]).
    pub const OFDM_5GHZ: Timing = Timing {
        slot: super::phy::SLOT,
        sifs: super::phy::SIFS_5GHZ,
    };

    /// The slot and SIFS of `band` (OFDM PHYs; SIFS 10 µs at 2.4 GHz).
    #[must_use]
    pub fn of(band: super::phy::Band) -> Timing {
        Timing {
            slot: super::phy::SLOT,
            sifs: band.sifs(),
        }
    }

    /// AIFS = SIFS + AIFSN·slot (IEEE 802.11-2020 §10.3.2.3.6); AIFSN 2 gives DIFS.
    #[must_use]
    pub fn aifs(&self, aifsn: u8) -> Dur {
        self.sifs + Dur(self.slot.0 * u64::from(aifsn))
    }
}

/// One EDCA function: a station's queue of one access category.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct QueueId {
    /// The station (any number the caller chooses).
    pub station: u32,
    /// The access category.
    pub ac: AccessCategory,
}

/// What became of a queue's head frame after an attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutcomeKind {
    /// Delivered; `access_delay` runs from the frame reaching the head of its queue to the end
    /// of its successful exchange.
    Delivered {
        /// Head-of-line time to the end of the exchange.
        access_delay: Dur,
    },
    /// Failed (collision, internal collision or loss); the frame stays for another attempt.
    Retry,
    /// Failed for the last time allowed by the retry limit; the frame is dropped.
    Dropped,
}

/// The result of one attempt of one queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// The queue.
    pub queue: QueueId,
    /// Attempts of this frame so far, this one included.
    pub attempts: u32,
    /// What happened.
    pub kind: OutcomeKind,
}

/// A channel access: the queues that start transmitting at `at`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Access {
    /// The slot boundary at which they transmit.
    pub at: Time,
    /// One queue per transmitting station; more than one is a collision.
    pub transmitters: Vec<QueueId>,
    /// Lower ACs that lost an internal collision to a transmitter of their station.
    pub internal: Vec<Outcome>,
}

/// Errors of [`Contention`]'s set-up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EdcaError {
    /// The queue was added twice.
    #[error("queue of station {} {:?} already exists", .0.station, .0.ac)]
    DuplicateQueue(QueueId),
    /// CWmin > CWmax, or AIFSN 0.
    #[error("invalid EDCA parameters {0:?}: need AIFSN >= 1 and CWmin <= CWmax")]
    InvalidParams(EdcaParams),
}

#[derive(Debug)]
struct Queue {
    id: QueueId,
    params: EdcaParams,
    retry_limit: Option<u32>,
    cw: u16,
    /// Backoff counter at the instant the medium last became idle.
    backoff: u32,
    /// Failed attempts of the head frame.
    failures: u32,
    /// Frames queued; `None` = saturated (always one more).
    frames: Option<u64>,
    /// When the head frame reached the head of the queue (and may first be sent).
    head_since: Time,
    rng: ChaCha8Rng,
}

impl Queue {
    fn has_frame(&self) -> bool {
        self.frames != Some(0)
    }

    fn draw(&mut self) {
        // Lemire's multiply-shift: uniform over [0, CW] up to a bias below (CW+1)/2^64.
        let range = u128::from(self.cw) + 1;
        self.backoff =
            u32::try_from((u128::from(self.rng.next_u64()) * range) >> 64).unwrap_or(u32::MAX);
    }

    /// A failed attempt: CW doubles, or the frame is dropped at the retry limit.
    fn fail(&mut self, now: Time) -> Outcome {
        self.failures += 1;
        let attempts = self.failures;
        let kind = if self.retry_limit.is_some_and(|l| self.failures >= l) {
            self.depart(now);
            OutcomeKind::Dropped
        } else {
            let doubled = 2 * (u32::from(self.cw) + 1) - 1;
            self.cw = u16::try_from(doubled.min(u32::from(self.params.cw_max))).unwrap_or(u16::MAX);
            OutcomeKind::Retry
        };
        self.draw();
        Outcome {
            queue: self.id,
            attempts,
            kind,
        }
    }

    /// The head frame leaves (delivered or dropped): CW back to CWmin, next frame at the head.
    fn depart(&mut self, now: Time) {
        self.cw = self.params.cw_min;
        self.failures = 0;
        if let Some(n) = self.frames.as_mut() {
            *n = n.saturating_sub(1);
        }
        self.head_since = now;
    }
}

/// The EDCA functions contending for one channel. See the module documentation.
#[derive(Debug)]
pub struct Contention {
    timing: Timing,
    key: u64,
    queues: Vec<Queue>,
    /// When the medium last became idle.
    idle_since: Time,
    /// Indices of the queues transmitting now (the medium is busy while this is `Some`).
    busy: Option<Vec<usize>>,
    /// The buffers of an access, kept from one to the next (the queues due; `busy`'s).
    scratch_due: Vec<usize>,
    scratch_busy: Vec<usize>,
    /// [`Self::poll_at`]'s answer while nothing changed (`None`: to be computed); every
    /// method that changes a queue or the medium clears it.
    next: Cell<Option<Option<Time>>>,
}

impl Contention {
    /// An idle channel with no queues; queue random streams derive from `(seed, component)`.
    #[must_use]
    pub fn new(timing: Timing, seed: u64, component: u64) -> Self {
        Contention {
            timing,
            key: rng::stream(seed, component).next_u64(),
            queues: Vec::new(),
            idle_since: Time::ZERO,
            busy: None,
            scratch_due: Vec::new(),
            scratch_busy: Vec::new(),
            next: Cell::new(None),
        }
    }

    /// Adds an empty queue (its stream is the `n`-th of the channel, `n` = queues added so far)
    /// and draws its first backoff in \[0, CWmin\]. `retry_limit` `None` never drops a frame.
    ///
    /// # Errors
    /// A queue added twice, or AIFSN 0 or CWmin > CWmax.
    pub fn add_queue(
        &mut self,
        id: QueueId,
        params: EdcaParams,
        retry_limit: Option<u32>,
    ) -> Result<(), EdcaError> {
        if self.queues.iter().any(|q| q.id == id) {
            return Err(EdcaError::DuplicateQueue(id));
        }
        if params.aifsn == 0 || params.cw_min > params.cw_max {
            return Err(EdcaError::InvalidParams(params));
        }
        self.next.set(None);
        let index = u64::try_from(self.queues.len()).unwrap_or(u64::MAX);
        let mut q = Queue {
            id,
            params,
            retry_limit,
            cw: params.cw_min,
            backoff: 0,
            failures: 0,
            frames: Some(0),
            head_since: self.idle_since,
            rng: rng::stream(self.key, index),
        };
        q.draw();
        self.queues.push(q);
        Ok(())
    }

    fn index(&self, id: QueueId) -> Option<usize> {
        // Queues added station by station in AC order sit at `4·station + ac` (ids are unique).
        let guess = usize::try_from(id.station)
            .ok()
            .and_then(|s| s.checked_mul(4))
            .and_then(|s| s.checked_add(id.ac.index()));
        if let Some(g) = guess
            && self.queues.get(g).is_some_and(|q| q.id == id)
        {
            return Some(g);
        }
        self.queues.iter().position(|q| q.id == id)
    }

    /// `n` frames arrive at queue `id` at `now` (ignored for an unknown or saturated queue).
    pub fn enqueue(&mut self, now: Time, id: QueueId, n: u64) {
        let timing = self.timing;
        let idle_since = self.idle_since;
        let busy = self.busy.is_some();
        let Some(i) = self.index(id) else { return };
        let cached = self.next.get();
        let q = &mut self.queues[i];
        let was_empty = q.frames == Some(0);
        if q.frames == Some(0) && n > 0 {
            q.head_since = now;
            // While busy the counters are frozen; before its AIFS has passed nothing counted.
            let idle_enough = !busy && now >= idle_since + timing.aifs(q.params.aifsn);
            let counted = if busy {
                0
            } else {
                Self::counted(timing, idle_since, q, now)
            };
            if !idle_enough && q.backoff.saturating_sub(counted) == 0 {
                q.draw();
            }
        }
        if let Some(f) = q.frames.as_mut() {
            *f = f.saturating_add(n);
        }
        // Only this queue changed, and only if it was empty: the next access is the earlier of
        // the known one and this queue's (while busy there is none either way).
        self.next.set(match cached {
            Some(next) if !was_empty || busy => Some(next),
            Some(next) => {
                let t = self.tx_time(&self.queues[i]);
                Some(match (next, t) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                })
            }
            None => None,
        });
    }

    /// Makes queue `id` saturated: it always has another frame.
    pub fn set_saturated(&mut self, id: QueueId) {
        if let Some(i) = self.index(id) {
            self.next.set(None);
            let q = &mut self.queues[i];
            if q.frames == Some(0) {
                q.head_since = self.idle_since.max(q.head_since);
            }
            q.frames = None;
        }
    }

    /// Slot boundaries of `q` at or before `t` in the current idle period.
    fn counted(timing: Timing, idle_since: Time, q: &Queue, t: Time) -> u32 {
        let first = idle_since + timing.aifs(q.params.aifsn);
        if t < first {
            return 0;
        }
        u32::try_from((t - first).0 / timing.slot.0 + 1).unwrap_or(u32::MAX)
    }

    /// When queue `q` transmits if nothing else happens first.
    fn tx_time(&self, q: &Queue) -> Option<Time> {
        if !q.has_frame() {
            return None;
        }
        let first = self.idle_since + self.timing.aifs(q.params.aifsn);
        let slot = self.timing.slot.0;
        let by_counter = first + Dur(slot * u64::from(q.backoff));
        if q.head_since <= by_counter {
            return Some(by_counter);
        }
        // Counter already at 0 when the frame arrived: the next boundary of the queue.
        let k = (q.head_since - first).0.div_ceil(slot);
        Some(first + Dur(slot * k))
    }

    /// The next slot boundary at which some queue transmits; `None` while the medium is busy or
    /// no queue has a frame.
    #[must_use]
    pub fn poll_at(&self) -> Option<Time> {
        if let Some(next) = self.next.get() {
            return next;
        }
        let next = if self.busy.is_some() {
            None
        } else {
            self.queues.iter().filter_map(|q| self.tx_time(q)).min()
        };
        self.next.set(Some(next));
        next
    }

    /// Runs the contention up to `now`: if `now` has reached [`Self::poll_at`], the queues due
    /// at that boundary transmit (others freeze) and the medium is busy until [`Self::finish`].
    pub fn access(&mut self, now: Time) -> Option<Access> {
        let at = self.poll_at().filter(|&t| t <= now)?;
        self.next.set(None);
        let mut due = std::mem::take(&mut self.scratch_due);
        due.clear();
        due.extend((0..self.queues.len()).filter(|&i| self.tx_time(&self.queues[i]) == Some(at)));
        // Freeze everyone: the boundary at `at` counts for queues that were counting (a
        // counter at 0 stays there).
        for i in 0..self.queues.len() {
            if self.queues[i].backoff == 0 {
                continue;
            }
            let c = Self::counted(self.timing, self.idle_since, &self.queues[i], at);
            let q = &mut self.queues[i];
            q.backoff = q.backoff.saturating_sub(c);
        }
        let mut transmitters = std::mem::take(&mut self.scratch_busy);
        transmitters.clear();
        let mut internal = Vec::new();
        for &i in &due {
            let q = &self.queues[i];
            let wins = !due.iter().any(|&j| {
                let o = &self.queues[j];
                o.id.station == q.id.station && o.id.ac > q.id.ac
            });
            if wins {
                transmitters.push(i);
            } else {
                internal.push(self.queues[i].fail(at));
            }
        }
        let access = Access {
            at,
            transmitters: transmitters.iter().map(|&i| self.queues[i].id).collect(),
            internal,
        };
        self.busy = Some(transmitters);
        self.scratch_due = due;
        Some(access)
    }

    /// Ends the current transmission; the medium is idle again from `idle_at`. A single
    /// transmitter succeeds if `delivered`; two or more always fail. `idle_at` − access time is
    /// the caller's airtime. For a success: the PPDU + SIFS + ACK or Block Ack. For a collision
    /// the recommended choice is the longest colliding PPDU + SIFS + ACK duration: stations that
    /// received a corrupted frame defer EIFS = SIFS + ACK time + DIFS instead of DIFS
    /// (IEEE 802.11-2020 §10.3.2.3.7), i.e. SIFS + ACK beyond the AIFS this module adds, and the
    /// transmitters wait their ACKTimeout (≈ SIFS + slot + PHY-RX-START delay, §10.3.2.11), about
    /// as long. Returns each transmitter's outcome; nothing if no transmission was in progress.
    pub fn finish(&mut self, idle_at: Time, delivered: bool) -> Vec<Outcome> {
        let mut out = Vec::new();
        self.finish_with(idle_at, delivered, Some(&mut out));
        out
    }

    /// [`Self::finish`] for a caller that does not need the outcomes.
    pub fn finish_quietly(&mut self, idle_at: Time, delivered: bool) {
        self.finish_with(idle_at, delivered, None);
    }

    fn finish_with(&mut self, idle_at: Time, delivered: bool, mut out: Option<&mut Vec<Outcome>>) {
        let Some(tx) = self.busy.take() else {
            return;
        };
        self.next.set(None);
        let success = delivered && tx.len() == 1;
        if let Some(out) = out.as_deref_mut() {
            out.reserve(tx.len());
        }
        for &i in &tx {
            let q = &mut self.queues[i];
            let o = if success {
                let attempts = q.failures + 1;
                let access_delay = idle_at - q.head_since;
                q.depart(idle_at);
                q.draw();
                Outcome {
                    queue: q.id,
                    attempts,
                    kind: OutcomeKind::Delivered { access_delay },
                }
            } else {
                q.fail(idle_at)
            };
            if let Some(out) = out.as_deref_mut() {
                out.push(o);
            }
        }
        self.scratch_busy = tx;
        self.idle_since = idle_at;
    }

    /// Current contention window of queue `id`.
    #[must_use]
    pub fn cw(&self, id: QueueId) -> Option<u16> {
        self.index(id).map(|i| self.queues[i].cw)
    }

    /// Current backoff counter of queue `id` (as of the start of the current idle period).
    #[must_use]
    pub fn backoff(&self, id: QueueId) -> Option<u32> {
        self.index(id).map(|i| self.queues[i].backoff)
    }
}

/// A saturation experiment: every queue always has a frame of the same size.
#[derive(Clone, Debug)]
pub struct Saturation {
    /// PHY slot and SIFS.
    pub timing: Timing,
    /// The queues and their parameters.
    pub queues: Vec<(QueueId, EdcaParams)>,
    /// Retry limit of every queue (`None`: never drop).
    pub retry_limit: Option<u32>,
    /// Airtime of a successful exchange (PPDU + SIFS + ACK), excluding AIFS and backoff.
    pub success_airtime: Dur,
    /// Airtime of a collision (see [`Contention::finish`]).
    pub collision_airtime: Dur,
    /// The part of a successful exchange that is payload (for the normalized throughput).
    pub payload_airtime: Dur,
    /// Channel accesses to simulate.
    pub accesses: u64,
    /// Seed of the random streams.
    pub seed: u64,
}

/// What a [`Saturation`] run measured.
#[derive(Clone, Debug, PartialEq)]
pub struct SaturationResult {
    /// Fraction of the time spent carrying payload (Bianchi's normalized throughput S).
    pub throughput: f64,
    /// Per queue (in [`Saturation::queues`] order), its share of delivered frames.
    pub share: Vec<f64>,
    /// Per queue, frames delivered.
    pub delivered: Vec<u64>,
    /// Per queue, transmission attempts (internal collisions included).
    pub attempts: Vec<u64>,
    /// Failed attempts (collisions, internal ones included) over all attempts.
    pub collision_probability: f64,
    /// Mean head-of-line to end-of-exchange delay of delivered frames, in seconds.
    pub mean_access_delay: f64,
    /// Frames dropped at the retry limit.
    pub dropped: u64,
    /// Simulated time, in seconds.
    pub elapsed: f64,
}

impl Saturation {
    /// Runs the experiment from an idle channel at time 0. The queues' streams derive from
    /// `(seed, rng::ELEMENT)`: the experiment is a channel of its own, element 0.
    ///
    /// # Errors
    /// As [`Contention::add_queue`].
    pub fn run(&self) -> Result<SaturationResult, EdcaError> {
        let mut ch = Contention::new(self.timing, self.seed, rng::ELEMENT);
        for &(id, params) in &self.queues {
            ch.add_queue(id, params, self.retry_limit)?;
            ch.set_saturated(id);
        }
        let mut delivered = vec![0u64; self.queues.len()];
        let mut per_queue = vec![0u64; self.queues.len()];
        let (mut attempts, mut failures, mut dropped) = (0u64, 0u64, 0u64);
        let mut delay_sum = 0.0;
        let mut payload = Dur::ZERO;
        let mut now = Time::ZERO;
        let mut count = |o: &Outcome, delivered: &mut [u64]| {
            attempts += 1;
            let i = self.queues.iter().position(|(id, _)| *id == o.queue);
            if let Some(i) = i {
                per_queue[i] += 1;
            }
            match o.kind {
                OutcomeKind::Delivered { access_delay } => {
                    if let Some(i) = i {
                        delivered[i] += 1;
                    }
                    delay_sum += access_delay.as_secs_f64();
                }
                OutcomeKind::Retry => failures += 1,
                OutcomeKind::Dropped => {
                    failures += 1;
                    dropped += 1;
                }
            }
        };
        for _ in 0..self.accesses {
            let Some(at) = ch.poll_at() else { break };
            let Some(access) = ch.access(at) else { break };
            for o in &access.internal {
                count(o, &mut delivered);
            }
            let collision = access.transmitters.len() > 1;
            let airtime = if collision {
                self.collision_airtime
            } else {
                payload += self.payload_airtime;
                self.success_airtime
            };
            now = at + airtime;
            for o in ch.finish(now, true) {
                count(&o, &mut delivered);
            }
        }
        let total: u64 = delivered.iter().sum();
        let elapsed = now.as_secs_f64();
        let ratio = |a: u64, b: u64| {
            if b == 0 {
                0.0
            } else {
                u64_to_f64(a) / u64_to_f64(b)
            }
        };
        Ok(SaturationResult {
            throughput: if elapsed > 0.0 {
                payload.as_secs_f64() / elapsed
            } else {
                0.0
            },
            share: delivered.iter().map(|&d| ratio(d, total)).collect(),
            collision_probability: ratio(failures, attempts),
            mean_access_delay: if total == 0 {
                0.0
            } else {
                delay_sum / u64_to_f64(total)
            },
            delivered,
            attempts: per_queue,
            dropped,
            elapsed,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Timing = Timing::OFDM_5GHZ;

    fn qid(station: u32, ac: AccessCategory) -> QueueId {
        QueueId { station, ac }
    }

    /// One access of the channel with the given airtime and outcome.
    fn step(ch: &mut Contention, airtime: Dur, delivered: bool) -> (Access, Vec<Outcome>) {
        let at = ch.poll_at().expect("a queue is backlogged");
        let access = ch.access(at).expect("due");
        let out = ch.finish(at + airtime, delivered);
        (access, out)
    }

    #[test]
    fn aifs_follows_sifs_plus_aifsn_slots() {
        // IEEE 802.11-2020 Table 9-155 at 5 GHz: DIFS (AIFSN 2) 34 µs, BE 43 µs, BK 79 µs.
        assert_eq!(T.aifs(2), Dur::from_micros(34));
        assert_eq!(T.aifs(3), Dur::from_micros(43));
        assert_eq!(T.aifs(7), Dur::from_micros(79));
    }

    #[test]
    fn dscp_maps_as_linux_does() {
        use AccessCategory::*;
        // (DSCP, AC): DF, CS1, AF11, CS2, AF21, CS3, AF31, CS4, AF41, CS5, VA, EF, CS6, CS7.
        let cases = [
            (0, Be),
            (8, Bk),
            (10, Be),
            (16, Be),
            (18, Be),
            (24, Vi),
            (26, Vi),
            (32, Vi),
            (34, Vi),
            (40, Vi),
            (44, Vo),
            (46, Vo),
            (48, Vo),
            (56, Vo),
        ];
        for (dscp, ac) in cases {
            assert_eq!(ac_of_dscp(dscp), ac, "DSCP {dscp}");
        }
    }

    #[test]
    fn first_access_is_aifs_plus_backoff_slots() {
        let mut ch = Contention::new(T, 3, 0);
        let id = qid(0, AccessCategory::Be);
        ch.add_queue(id, AccessCategory::Be.station_params(), None)
            .unwrap();
        let b = ch.backoff(id).unwrap();
        assert!(b <= 15);
        ch.set_saturated(id);
        assert_eq!(
            ch.poll_at(),
            Some(Time::ZERO + T.aifs(3) + Dur(T.slot.0 * u64::from(b)))
        );
    }

    #[test]
    fn a_boundary_where_another_queue_transmits_still_counts() {
        // Queue A (AIFSN 2, CW 0) transmits at its first boundary, DIFS after idle. Queue B has
        // AIFSN 2 too: it decrements once at that boundary (§10.22.2.4), then freezes.
        let mut ch = Contention::new(T, 1, 0);
        let a = qid(0, AccessCategory::Be);
        let b = qid(1, AccessCategory::Be);
        ch.add_queue(a, EdcaParams::new(2, 0, 0, Dur::ZERO), None)
            .unwrap();
        ch.add_queue(b, EdcaParams::new(2, 1023, 1023, Dur::ZERO), None)
            .unwrap();
        ch.set_saturated(a);
        ch.set_saturated(b);
        let before = ch.backoff(b).unwrap();
        assert!(before >= 2, "seed gives B a counter ≥ 2, got {before}");
        let (access, _) = step(&mut ch, Dur::from_micros(100), true);
        assert_eq!(access.transmitters, vec![a]);
        assert_eq!(access.at, Time::ZERO + T.aifs(2));
        assert_eq!(ch.backoff(b), Some(before - 1));
    }

    #[test]
    fn cw_doubles_to_cwmax_and_resets_on_success() {
        let mut ch = Contention::new(T, 7, 0);
        let id = qid(0, AccessCategory::Be);
        ch.add_queue(id, AccessCategory::Be.station_params(), None)
            .unwrap();
        ch.set_saturated(id);
        // CW = 2(CW+1) − 1 from 15: 31, 63, 127, 255, 511, 1023, then held at CWmax.
        for want in [31, 63, 127, 255, 511, 1023, 1023, 1023] {
            let (_, out) = step(&mut ch, Dur::from_micros(100), false);
            assert_eq!(out[0].kind, OutcomeKind::Retry);
            assert_eq!(ch.cw(id), Some(want));
        }
        let (_, out) = step(&mut ch, Dur::from_micros(100), true);
        assert!(matches!(out[0].kind, OutcomeKind::Delivered { .. }));
        assert_eq!(out[0].attempts, 9);
        assert_eq!(ch.cw(id), Some(15));
    }

    #[test]
    fn simultaneous_transmissions_collide_and_double_cw() {
        // CW 0 forces both stations to the same boundary.
        let mut ch = Contention::new(T, 1, 0);
        let p = EdcaParams::new(2, 0, 7, Dur::ZERO);
        for s in 0..2 {
            ch.add_queue(qid(s, AccessCategory::Be), p, None).unwrap();
            ch.set_saturated(qid(s, AccessCategory::Be));
        }
        let (access, out) = step(&mut ch, Dur::from_micros(100), true);
        assert_eq!(access.transmitters.len(), 2);
        assert!(out.iter().all(|o| o.kind == OutcomeKind::Retry));
        assert_eq!(ch.cw(qid(0, AccessCategory::Be)), Some(1));
        assert_eq!(ch.cw(qid(1, AccessCategory::Be)), Some(1));
    }

    #[test]
    fn retry_limit_drops_the_frame_and_resets_cw() {
        let mut ch = Contention::new(T, 5, 0);
        let id = qid(0, AccessCategory::Be);
        ch.add_queue(
            id,
            AccessCategory::Be.station_params(),
            Some(SHORT_RETRY_LIMIT),
        )
        .unwrap();
        ch.enqueue(Time::ZERO, id, 2);
        // dot11ShortRetryLimit 7: the 7th failed attempt discards the frame.
        for attempt in 1..=SHORT_RETRY_LIMIT {
            let (_, out) = step(&mut ch, Dur::from_micros(100), false);
            assert_eq!(out[0].attempts, attempt);
            let want = if attempt < SHORT_RETRY_LIMIT {
                OutcomeKind::Retry
            } else {
                OutcomeKind::Dropped
            };
            assert_eq!(out[0].kind, want);
        }
        assert_eq!(ch.cw(id), Some(15));
        // The second frame starts afresh and, delivered, empties the queue.
        let (_, out) = step(&mut ch, Dur::from_micros(100), true);
        assert_eq!(out[0].attempts, 1);
        assert!(matches!(out[0].kind, OutcomeKind::Delivered { .. }));
        assert_eq!(ch.poll_at(), None);
    }

    #[test]
    fn internal_collision_favours_the_higher_ac() {
        // One station, VO and BE both due at the same boundary (same AIFSN, CW 0).
        let mut ch = Contention::new(T, 1, 0);
        let vo = qid(0, AccessCategory::Vo);
        let be = qid(0, AccessCategory::Be);
        ch.add_queue(be, EdcaParams::new(2, 0, 15, Dur::ZERO), None)
            .unwrap();
        ch.add_queue(vo, EdcaParams::new(2, 0, 7, Dur::ZERO), None)
            .unwrap();
        ch.set_saturated(be);
        ch.set_saturated(vo);
        let (access, out) = step(&mut ch, Dur::from_micros(100), true);
        assert_eq!(access.transmitters, vec![vo]);
        assert_eq!(access.internal.len(), 1);
        assert_eq!(access.internal[0].queue, be);
        assert_eq!(access.internal[0].kind, OutcomeKind::Retry);
        assert_eq!(ch.cw(be), Some(1), "the lower AC doubles CW as if collided");
        assert!(matches!(out[0].kind, OutcomeKind::Delivered { .. }));
        assert_eq!(ch.cw(vo), Some(0));
    }

    #[test]
    fn arrival_on_a_busy_medium_draws_a_backoff() {
        let mut ch = Contention::new(T, 2, 0);
        let a = qid(0, AccessCategory::Be);
        let b = qid(1, AccessCategory::Be);
        ch.add_queue(a, EdcaParams::new(2, 0, 0, Dur::ZERO), None)
            .unwrap();
        ch.add_queue(b, EdcaParams::new(2, 0, 0, Dur::ZERO), None)
            .unwrap();
        ch.enqueue(Time::ZERO, a, 1);
        let at = ch.poll_at().unwrap();
        ch.access(at).unwrap();
        // B's frame arrives mid-transmission with its counter at 0; CW 0 redraws 0, and it is
        // sent at the first boundary after the medium is idle again, not during the busy time.
        ch.enqueue(at + Dur::from_micros(10), b, 1);
        assert_eq!(ch.poll_at(), None);
        let end = at + Dur::from_micros(100);
        ch.finish(end, true);
        assert_eq!(ch.poll_at(), Some(end + T.aifs(2)));
        // A late arrival on an idle medium goes at the next boundary of its slot grid.
        let mut ch = Contention::new(T, 2, 0);
        ch.add_queue(a, EdcaParams::new(2, 0, 0, Dur::ZERO), None)
            .unwrap();
        ch.enqueue(Time::ZERO + Dur::from_micros(40), a, 1);
        assert_eq!(ch.poll_at(), Some(Time::ZERO + Dur::from_micros(43)));
    }

    fn saturation(seed: u64) -> Saturation {
        let p = AccessCategory::Be.station_params();
        Saturation {
            timing: T,
            queues: (0..5).map(|s| (qid(s, AccessCategory::Be), p)).collect(),
            retry_limit: Some(SHORT_RETRY_LIMIT),
            success_airtime: Dur::from_micros(300),
            collision_airtime: Dur::from_micros(300),
            payload_airtime: Dur::from_micros(200),
            accesses: 2000,
            seed,
        }
    }

    #[test]
    fn same_seed_same_run_different_seed_different_run() {
        let a = saturation(1).run().unwrap();
        let b = saturation(1).run().unwrap();
        let c = saturation(2).run().unwrap();
        assert_eq!(a, b);
        assert_ne!(a, c);
        // Access sequences too.
        let seq = |seed| {
            let mut ch = Contention::new(T, seed, 9);
            for s in 0..3 {
                let id = qid(s, AccessCategory::Be);
                ch.add_queue(id, AccessCategory::Be.station_params(), None)
                    .unwrap();
                ch.set_saturated(id);
            }
            (0..200)
                .map(|_| step(&mut ch, Dur::from_micros(300), true).0)
                .collect::<Vec<_>>()
        };
        assert_eq!(seq(4), seq(4));
        assert_ne!(seq(4), seq(5));
    }
}
