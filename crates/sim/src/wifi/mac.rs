//! The MAC of one 802.11n/ac/ax BSS: an AP and N stations sharing one channel, with the
//! transmit queues Linux builds, EDCA contention, A-MSDU and A-MPDU aggregation, optional
//! RTS/CTS, per-MPDU errors (a fixed rate, an SNR curve, or both) and retransmissions, Block
//! Ack, and a fixed MCS per link or Minstrel-like rate adaptation.
//!
//! Contract: [`Mac`] is sans-IO. Frames enter with [`Mac::enqueue`] (an opaque `u64` id of the
//! caller's choice, the MSDU length in bytes, the access category and the frame's flow hash;
//! between the AP and one station). The caller asks [`Mac::poll_at`] when to call next and
//! calls [`Mac::on_time`] at that time; it returns the [`MacEvent`]s due by then, in time
//! order. Time is always passed in; the random streams derive from `(seed, component)` (see
//! [`crate::rng`]), so a run is deterministic. Per receiver and AC there is one Block Ack
//! agreement; a frame's TID is its AC's first user priority ([`Tid::of_ac`]: BE 0, BK 1, VI 4,
//! VO 6, Linux `ieee802_1d_to_ac`).
//!
//! Queues ([`MacConfig::queues`]):
//! - [`Queues::Mac80211`] (the default): as Linux mac80211 builds them, with [`Txqs`]: the AP
//!   has one interface with a station per client, each client one with a single station, the
//!   AP. Frames enter the txq of their station and TID (fq flows by hash, packet limit 8192);
//!   the driver pulls them when its AC wins the channel, the AP first asking
//!   [`Txqs::next_txq`] which station to serve (deficit round robin on airtime, AQL). The
//!   driver keeps the MPDUs awaiting retransmission (ath9k's per-TID `retry_q`) and sends them
//!   first, then dequeues new frames (CoDel runs at dequeue) while they still fit the
//!   aggregate under every limit; a frame that no longer fits stays with the driver for the
//!   next aggregate (ath9k `ath_tx_form_aggr`), so the aggregate depends on what is queued.
//!   Each MPDU's estimated airtime ([`expected_tx_airtime`], at the link's estimate rate: see
//!   Rates below) is registered as pending when it
//!   leaves the txq (`ieee80211_tx_dequeue`); at the end of each exchange every MPDU of the
//!   aggregate is charged an equal share of the exchange's airtime
//!   (`ieee80211_sta_register_airtime`) and its estimate leaves the pending airtime when its
//!   fate is final, received or given up (`ieee80211_tx_status`). A txq whose station has
//!   MPDUs with the driver stays scheduled while empty (`ieee80211_return_txq(…, force)`).
//!   Frames dropped in the txqs (CoDel at dequeue, the fq limit at enqueue) come out as
//!   [`MacEvent::Dropped`] with `attempts` 0. CoDel parameters follow each link's expected
//!   throughput (`sta_update_codel_params`), for which the PHY rate of the estimate rate stands
//!   in.
//! - [`Queues::Fifo`]: one unbounded FIFO per link and AC, the AP serving its stations of the
//!   winning AC in turn (round robin, `ieee80211_next_txq` without airtime fairness), no drops:
//!   the queue the aggregation theory assumes.
//! - [`Queues::Firmware`]: a consumer AP's vendor firmware: the FIFOs of [`Queues::Fifo`], each
//!   holding at most its AC's depth of frames ([`FIRMWARE_DEPTH`] by default); a frame that
//!   finds its FIFO full is dropped at once ([`MacEvent::Dropped`], `attempts` 0). No fq, no
//!   CoDel, no AQL, no airtime fairness.
//!
//! The AP may queue otherwise than its stations ([`MacConfig::ap_queues`]: a vendor AP with
//! Linux clients). Each side puts a frame in the AC of its DSCP ([`Mac::access_category`],
//! [`ac_of_dscp`]) or, where it does not map DSCP ([`MacConfig::ap_dscp_to_ac`],
//! [`MacConfig::sta_dscp_to_ac`]), in AC_BE.
//!
//! Either way the winner's aggregate is built MPDU by MPDU ([`AmpduBuilder`]), bounded by the
//! Block Ack window counted in free sequence numbers (MPDUs awaiting retransmission hold
//! theirs: the window starts at the oldest unacknowledged one, IEEE 802.11-2020 §10.25.2; ns-3
//! `BlockAckManager`), the recipient's maximum A-MPDU length, aPPDUMaxTime and the AC's TXOP
//! limit with the response (and RTS/CTS when it may be used). One aggregate per access:
//! several exchanges in one TXOP are not modelled.
//!
//! A-MSDU ([`MacConfig::amsdu_max`]): a frame joins the last queued frame of its flow as one
//! more A-MSDU subframe while the A-MSDU stays within the limit, at enqueue, as mac80211's
//! `ieee80211_amsdu_aggregate` does (the tail of the fq flow the hash selects; in
//! [`Queues::Fifo`] the tail of the FIFO if its hash is the same). Only frames still queued
//! are packed: a frame arriving when its flow's queue is empty starts a new one. The A-MSDU is
//! one MPDU ([`MpduFormat::amsdu_mpdu_len`]): one sequence number, one error draw, one retry
//! counter; CoDel and the fq count and drop it whole. An HT MPDU inside an A-MPDU is at most
//! [`MAX_MPDU_HT_BA`] bytes (the delimiter's 12-bit length, IEEE 802.11-2020 §9.7.1; Linux
//! `IEEE80211_MAX_MPDU_LEN_HT_BA`), a VHT/HE MPDU at most [`MAX_MPDU_VHT_11454`], which caps the
//! A-MSDU below `amsdu_max`. mac80211's other caps (minstrel's rate-dependent
//! `max_rc_amsdu_len`, the driver's subframe and fragment counts) are not modelled.
//!
//! One exchange (rules and sources):
//! - Who transmits is [`Contention`]'s decision (EDCA, §10.22.2), with the AP's and the
//!   stations' default parameters ([`AccessCategory::ap_params`],
//!   [`AccessCategory::station_params`]). The contention's "has a frame" is the node's txq
//!   backlog plus what its driver holds.
//! - With A-MPDU ([`MacConfig::ampdu`], the default) the exchange is PPDU + SIFS + Block Ack at
//!   the basic rate (§10.25.6; a compressed Block Ack with a 64-bit bitmap, or 256-bit when the
//!   agreement's window exceeds 64, 802.11ax-2021 §9.3.1.8.2). Without it each PPDU carries one
//!   MPDU (an A-MSDU or not; HT sends it bare, VHT and HE as a single-MPDU A-MPDU with its
//!   delimiter, an S-MPDU with the EOF bit set, §9.7.1) answered by a 14-B Ack (§9.3.1.4): the same window rules with a window
//!   of one, i.e. stop-and-wait with per-frame retries, and the same retry limit.
//! - RTS/CTS ([`MacConfig::rts_threshold`], §10.3.2.6): an exchange whose PSDU is longer than
//!   the threshold starts with RTS (20 B) + SIFS + CTS (14 B) + SIFS at the basic rate
//!   (§10.6.5). Control frames are never lost to errors.
//! - Two or more transmitters in one slot collide: every MPDU of every unprotected collider is
//!   lost, and the medium is busy for the longest collider: PPDU + SIFS + Block Ack (the
//!   colliders' response timeout; [`Contention::finish`]) unprotected, RTS + SIFS + CTS (the
//!   CTS timeout, the same approximation) protected. A collided RTS counts no MPDU attempt;
//!   the contention window doubles either way.
//! - Without a collision each MPDU is lost independently with the link's packet error rate (one
//!   random stream per station and direction, one draw per MPDU). With an SNR
//!   ([`StationConfig::uplink_snr_db`], [`StationConfig::downlink_snr_db`]) the probability is
//!   1 − (1 − per)·(1 − PER_snr), PER_snr = [`mpdu_error_rate`] of the rate the A-MPDU went at,
//!   the SNR and the MPDU's length (ns-3 `NistErrorRateModel`: AWGN bit error rates under the
//!   union bound of the 802.11 convolutional code; see [`super::error_model`]). The SNR is per
//!   data subcarrier and stream in the link's configured width, which every candidate rate of
//!   the link shares; it is constant (no fading, no interference between the BSS's
//!   transmitters). The Block Ack reports every MPDU; it comes back
//!   if at least one MPDU arrived, and that is the success that resets the contention window;
//!   otherwise the window doubles (§10.22.2.4; ns-3 `QosFrameExchangeManager`).
//! - A lost MPDU stays with the driver and goes again first in a later aggregate; after
//!   `retry_limit` transmissions it is dropped ([`DRIVER_RETRY_LIMIT`] by default, the
//!   driver's software retries of A-MPDU subframes; the standard's dot11LongRetryLimit,
//!   [`LONG_RETRY_LIMIT`](super::edca::LONG_RETRY_LIMIT), §10.23.2.12, is the alternative) and
//!   the recipient is told with a Block Ack Request (its airtime is not modelled). The EDCA
//!   functions have no retry limit of their own: the contention window resets only on a
//!   received Block Ack, not when MPDUs are dropped; RTS failures have no short retry limit.
//!   Internal collisions (§10.22.2.4) send nothing and count no MPDU attempt. Window and
//!   retries: [`Originator`].
//! - The recipient releases frames in sequence order ([`Reorder`]), the MSDUs of an A-MSDU
//!   together.
//!
//! Rates ([`MacConfig::rate_control`]):
//! - [`RateControl::Fixed`] (the default): every A-MPDU of a link at its configured PHY.
//! - [`RateControl::Minstrel`]: each link (a station's uplink, the AP's downlink to it) has its
//!   own [`Minstrel`] over [`rate_set`] of its configured PHY's standard, band, stream count,
//!   width and guard interval (every MCS of the standard, 1 to `nss` streams; Linux keeps one
//!   `minstrel_ht_sta` per station, and the AP one per client). Before each A-MPDU is built the
//!   controller picks its rate ([`Minstrel::rate_for_next`], Linux `minstrel_ht_get_rate`),
//!   and the A-MPDU is sized for that rate (its airtime, aPPDUMaxTime, the TXOP limit). After
//!   the exchange the controller learns how many of its MPDUs were attempted and acknowledged
//!   at that rate ([`Minstrel::report`]; `minstrel_ht_tx_status` reads `ampdu_len` and
//!   `ampdu_ack_len`); a collided A-MPDU counts as wholly failed, as the missing Block Ack
//!   tells the driver (an RTS that collided likewise, though its MPDUs never went on air).
//!   Retransmitted MPDUs go at whatever rate their next A-MPDU gets: there are no multi-rate
//!   retry chains.
//! - The estimate rate of a link is its configured PHY, or its controller's max-throughput
//!   rate, at which every A-MPDU but the samples goes: the airtime estimates of AQL and the
//!   expected throughput of CoDel use its PHY rate, the latter updated after every report.
//!   Approximations: mac80211 estimates airtime at the station's last reported TX rate
//!   (`sta->tx_stats.last_rate` in `ieee80211_calc_expected_tx_airtime`), a sample's rate now
//!   and then, and takes the expected throughput from minstrel's estimate of the
//!   max-throughput rate (`minstrel_ht_get_expected_throughput`: the rate weighted by its
//!   success probability), lower than its PHY rate.
//! - [`NodeStats::mcs_counts`] counts the A-MPDUs of each MCS, and [`MacEvent::Transmit`]
//!   names the rate, in either mode.
//!
//! Events: [`MacEvent::Delivered`] when the recipient releases the frame in order: at the end of
//! the PPDU, or at the end of the exchange for frames held behind an MPDU given up then;
//! [`MacEvent::TxComplete`] after the Block Ack, when the transmitter's driver learns the
//! outcome and frees the buffer (mac80211 `ieee80211_tx_status`): the instant TCP Small Queues
//! releases budget; [`MacEvent::Dropped`] at the end of the exchange in which the last attempt
//! failed, or with `attempts` 0 when the transmit queues drop the frame (the buffer is freed
//! then too). [`MacEvent::Transmit`] describes each aggregate (under RTS protection a collided
//! one never went on air: only the RTS did).
//!
//! Approximations: [`Contention`] only knows whether a queue has frames. When the last MPDUs of
//! a queue are dropped in a failed exchange, or AQL holds back every txq with frames, its EDCA
//! function may win the channel with nothing to send: the access is void (no airtime; the
//! channel is idle again from that slot, which delays the others by one AIFS). When AQL holds
//! back every txq of an AC, the driver still sends the MPDUs it holds (retransmissions and a
//! frame that did not fit), as hardware finishes what it was given: otherwise the pending
//! airtime of failed aggregates could block every station for good.

use std::collections::VecDeque;

use cclab_cc::num::u64_to_f64;
use cclab_cc::{Dur, Time};
use rand_chacha::ChaCha8Rng;

use super::ampdu::{self, AmpduBuilder, AmpduLimits, Bound, MpduFormat, Txop};
use super::blockack::{Originator, Reorder, Transmitted};
use super::edca::{AccessCategory, Contention, EdcaError, EdcaParams, QueueId, Timing, ac_of_dscp};
use super::error_model::mpdu_error_rate;
use super::minstrel::{Minstrel, MinstrelConfig, MinstrelError, rate_set};
use super::phy::{self, Band, Phy, Standard};
use super::txq::{AirtimeEstimate, Dropped, StaId, Tid, TxqFrame, Txqs};
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
    /// The station's PHY toward the AP: its MCS with [`RateControl::Fixed`]; with
    /// [`RateControl::Minstrel`] its standard, stream count, width and guard interval bound the
    /// candidate rates.
    pub uplink_phy: Phy,
    /// The AP's PHY toward this station (as `uplink_phy`).
    pub downlink_phy: Phy,
    /// Packet error rate of each uplink MPDU, in \[0, 1).
    pub uplink_per: f64,
    /// Packet error rate of each downlink MPDU, in \[0, 1).
    pub downlink_per: f64,
    /// SNR of the uplink in dB, per data subcarrier and spatial stream in the link's configured
    /// width (`uplink_phy`'s, which every candidate rate shares), as
    /// [`super::error_model`] defines it. `Some`: each uplink MPDU also fails with
    /// [`mpdu_error_rate`] of the rate its A-MPDU went at, independently of `uplink_per`;
    /// `None`: only `uplink_per`.
    pub uplink_snr_db: Option<f64>,
    /// SNR of the downlink in dB (as `uplink_snr_db`).
    pub downlink_snr_db: Option<f64>,
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
            uplink_snr_db: None,
            downlink_snr_db: None,
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
    /// Transmissions of an MPDU before it is dropped ([`DRIVER_RETRY_LIMIT`] by default).
    pub retry_limit: u32,
    /// The AP's EDCA parameters, by AC (BK, BE, VI, VO).
    pub ap_edca: [EdcaParams; 4],
    /// The stations' EDCA parameters, by AC.
    pub sta_edca: [EdcaParams; 4],
    /// The stations.
    pub stations: Vec<StationConfig>,
    /// How the stations queue their frames (and the AP, unless [`MacConfig::ap_queues`]).
    pub queues: Queues,
    /// How the AP queues its frames: `None` as the stations ([`MacConfig::queues`]); a vendor
    /// AP runs [`Queues::Firmware`] while its Linux clients run [`Queues::Mac80211`].
    pub ap_queues: Option<Queues>,
    /// Whether the AP puts a frame in the AC of its DSCP ([`ac_of_dscp`]); `false`: every
    /// frame it sends goes in AC_BE (DSCP ignored, as by an AP that does not classify, or a
    /// DSCP bleached on the way).
    pub ap_dscp_to_ac: bool,
    /// Whether the stations put a frame in the AC of its DSCP; `false`: AC_BE.
    pub sta_dscp_to_ac: bool,
    /// Maximum A-MSDU length in bytes: `None` sends every MSDU in an MPDU of its own.
    /// At most [`ampdu::MAX_AMSDU_HT_7935`] for an HT link, the 11,454-B maximum MPDU length
    /// ([`MAX_MPDU_VHT_11454`]) for VHT and HE (IEEE 802.11-2020 §9.4.2.55.2 HT Capabilities
    /// "Maximum A-MSDU Length" 3839/7935, §9.4.2.157.2 VHT Capabilities "Maximum MPDU Length"
    /// 3895/7991/11454, which 802.11ax-2021 keeps for HE).
    pub amsdu_max: Option<u32>,
    /// A-MPDU aggregation under a Block Ack agreement; without it each PPDU carries one MPDU
    /// answered by an Ack.
    pub ampdu: bool,
    /// A-MPDU aggregation also for AC_VO (when [`MacConfig::ampdu`] is on). Linux's mac80211
    /// starts no Block Ack session for a frame mapped to AC_VO (`ieee80211_aggr_check`,
    /// `net/mac80211/tx.c`, before that minstrel_ht's `minstrel_aggr_check`), so voice
    /// frames go one MPDU per exchange with an Ack: off by default.
    pub ampdu_vo: bool,
    /// RTS/CTS precedes an exchange whose PSDU is longer than this many bytes
    /// (dot11RTSThreshold, IEEE 802.11-2020 §10.3.2.6); `None` never.
    pub rts_threshold: Option<u32>,
    /// How each link picks the rate of its A-MPDUs.
    pub rate_control: RateControl,
}

/// Transmissions of an MPDU before the driver gives it up: ath9k retries an A-MPDU subframe
/// the Block Ack did not acknowledge in later aggregates while it has had fewer than
/// `ATH_MAX_SW_RETRIES` = 30 retries (`drivers/net/wireless/ath/ath9k/ath9k.h`,
/// `ath_tx_complete_aggr` in `xmit.c`), so it goes at most 31 times. Drivers retry aggregated
/// frames far more often than the standard's dot11LongRetryLimit ([`LONG_RETRY_LIMIT`](super::edca::LONG_RETRY_LIMIT) = 4),
/// which a Block Ack agreement does not apply per MPDU; a single MPDU outside an A-MPDU
/// (AC_VO, or [`MacConfig::ampdu`] off) gets the same limit here, where ath9k's hardware
/// retries it through minstrel's rate chain instead.
pub const DRIVER_RETRY_LIMIT: u32 = 31;

/// How a link picks the rate (MCS and stream count) of each A-MPDU.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum RateControl {
    /// Every A-MPDU at the link's configured PHY ([`StationConfig::uplink_phy`],
    /// [`StationConfig::downlink_phy`]).
    #[default]
    Fixed,
    /// A [`Minstrel`] per link over [`rate_set`] of the configured PHY's standard, band,
    /// stream count, width and guard interval (every MCS of the standard, 1 to `nss` streams).
    Minstrel(MinstrelConfig),
}

/// How a node queues frames between [`Mac::enqueue`] and the air.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Queues {
    /// One unbounded FIFO per link and AC, the AP serving its stations in round robin: the
    /// idealised queue of the aggregation theory (no drops, no fairness).
    Fifo,
    /// Linux mac80211's transmit queues ([`Txqs`]: per station and TID fq_codel, AQL, airtime
    /// fairness), pulled by a driver that keeps its own retry queue (ath9k, mt76).
    Mac80211,
    /// Vendor firmware's queues: one FIFO per link and AC holding at most `depth[ac]` frames
    /// (BK, BE, VI, VO; an A-MSDU counts as one), tail drop, served as [`Queues::Fifo`]: no
    /// fq, no CoDel, no AQL, no airtime fairness. The depth is a parameter
    /// ([`FIRMWARE_DEPTH`] by default): see there for what it stands for.
    Firmware {
        /// Frames each AC's FIFO holds, by [`AccessCategory::index`]; at least 1.
        depth: [u32; 4],
    },
}

impl Queues {
    /// Vendor firmware's FIFOs with [`FIRMWARE_DEPTH`] frames per AC.
    pub const FIRMWARE: Queues = Queues::Firmware {
        depth: [FIRMWARE_DEPTH; 4],
    };

    /// Whether these are mac80211's transmit queues.
    #[must_use]
    pub fn is_mac80211(self) -> bool {
        self == Queues::Mac80211
    }
}

/// Frames per AC of [`Queues::FIRMWARE`]: the transmit descriptors of Qualcomm's ath10k
/// 10.x firmware (`TARGET_10X_NUM_MSDU_DESC` = 1024 + 400,
/// `drivers/net/wireless/ath/ath10k/hw.h`), the frames the host may push to it before the driver
/// stops mac80211's queues (Linux commit "ath10k: implement push-pull tx", Michal Kazior 2016:
/// "For HTT there was ~1000-1400 msdu queue depth"). The firmware shares that pool among its ACs;
/// **Decision:** each AC gets a FIFO of that depth (what one backlogged AC sees). Broadcom's
/// and MediaTek's vendor firmware do not publish their buffering; this is a parameter
/// (`ap_fifo_depth`).
pub const FIRMWARE_DEPTH: u32 = 1424;

impl MacConfig {
    /// A 5 GHz BSS of `stations` with the defaults: Block Ack at 24 Mbit/s
    /// ([`phy::DEFAULT_BASIC_RATE_MBPS`]), CCMP QoS data, [`DRIVER_RETRY_LIMIT`], EDCA defaults,
    /// [`Queues::Mac80211`] (the queues Linux builds), A-MPDU without A-MSDU, no RTS/CTS.
    #[must_use]
    pub fn new(stations: Vec<StationConfig>) -> Self {
        MacConfig {
            band: Band::Ghz5,
            basic_rate_mbps: phy::DEFAULT_BASIC_RATE_MBPS,
            format: MpduFormat::QOS_CCMP,
            retry_limit: DRIVER_RETRY_LIMIT,
            ap_edca: AccessCategory::ALL.map(AccessCategory::ap_params),
            sta_edca: AccessCategory::ALL.map(AccessCategory::station_params),
            stations,
            queues: Queues::Mac80211,
            ap_queues: None,
            ap_dscp_to_ac: true,
            sta_dscp_to_ac: true,
            amsdu_max: None,
            ampdu: true,
            ampdu_vo: false,
            rts_threshold: None,
            rate_control: RateControl::Fixed,
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
    #[error("station {station}: Block Ack window {window} is outside 1..={max} ({standard})")]
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
    /// A maximum A-MSDU length of 0 or above the standard's.
    #[error(
        "station {station}: maximum A-MSDU length {given} B is outside 1..={max} ({standard}: \
         HT 3839 or 7935, VHT/HE maximum MPDU 3895, 7991 or 11454)"
    )]
    AmsduMax {
        /// The station.
        station: u32,
        /// The length given.
        given: u32,
        /// The standard's largest.
        max: u32,
        /// The station's standard.
        standard: Standard,
    },
    /// A maximum A-MPDU length of 0.
    #[error("station {0}: the maximum A-MPDU length must be at least 1 byte")]
    MaxAmpduLen(u32),
    /// A station PHY in another band than the BSS.
    #[error("station {station}: PHY in the {phy} band, the BSS is in the {bss} band")]
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
    /// A [`Queues::Firmware`] FIFO of depth 0.
    #[error("the firmware FIFO of {0:?} must hold at least 1 frame")]
    FirmwareDepth(AccessCategory),
    /// An SNR that is not a number.
    #[error("station {station}: the SNR must be a number of dB, not {snr}")]
    Snr {
        /// The station.
        station: u32,
        /// The SNR given.
        snr: f64,
    },
    /// Invalid rate control parameters.
    #[error(transparent)]
    RateControl(#[from] MinstrelError),
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
        /// The rate it went at.
        phy: Phy,
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
    /// The frame failed its last allowed transmission, or (`attempts` 0) was dropped before
    /// any transmission by the transmit queues ([`Queues::Mac80211`]: CoDel at dequeue, the fq
    /// packet limit at enqueue). Either way its buffer is freed.
    Dropped {
        /// Sender.
        from: Node,
        /// Receiver.
        to: Node,
        /// The caller's frame id.
        frame: u64,
        /// Transmissions made: 0 = dropped in the transmit queue before any transmission.
        attempts: u32,
        /// End of the exchange of the last attempt, or the instant of the queue's drop.
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
    /// MSDUs dropped in its transmit queues before any transmission (CoDel, fq limit).
    pub txq_drops: u64,
    /// Airtime of its collided accesses (the whole collision each time).
    pub collision_airtime: Dur,
    /// Idle time before its accesses: from the later of the end of the previous exchange and the
    /// queue's first frame to the access (AIFS + backoff slots counted in that idle period).
    pub access_wait: Dur,
    /// MCS histogram: `mcs_counts[m]` A-MPDUs (collided ones included) went at per-stream MCS
    /// `m`, whatever their stream count.
    pub mcs_counts: Vec<u64>,
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

/// A queued frame as the transmit queues hold it: one MSDU, or an A-MSDU grown from several
/// (their ids and lengths are in `Mac::units` under `key`).
#[derive(Clone, Copy, Debug)]
struct Unit {
    key: u64,
    /// MSDU length, or the A-MSDU length once it holds two or more.
    bytes: u32,
    hash: u32,
}

impl TxqFrame for Unit {
    fn bytes(&self) -> u32 {
        self.bytes
    }
    fn flow_hash(&self) -> u32 {
        self.hash
    }
}

/// An MPDU the driver holds: its MSDUs (frame id, length), its length, and the airtime
/// estimate registered as pending.
#[derive(Clone, Debug)]
struct Mpdu {
    msdus: Msdus,
    mpdu_len: u32,
    est: Dur,
}

/// One A-MPDU (or single MPDU) of an access.
#[derive(Debug)]
struct Tx {
    queue: QueueId,
    link: usize,
    /// The rate it goes at, and its index in the link's [`Minstrel`] if there is one.
    phy: Phy,
    rate: Option<usize>,
    agg: ampdu::Aggregate,
    /// RTS + SIFS + CTS + SIFS before the PPDU, or zero.
    protection: Dur,
    /// The whole exchange without collision.
    duration: Dur,
    /// The channel time it takes if it collides.
    collided_duration: Dur,
}

/// Maximum MPDU length of VHT and HE (IEEE 802.11-2020 §9.4.2.157.2; Linux
/// `IEEE80211_MAX_MPDU_LEN_VHT_11454`).
pub const MAX_MPDU_VHT_11454: u32 = 11_454;
/// Largest MPDU in an HT A-MPDU: the 12-bit MPDU Length of the HT MPDU delimiter (IEEE
/// 802.11-2020 §9.7.1; Linux `IEEE80211_MAX_MPDU_LEN_HT_BA`, "maximal size of an A-MSDU that
/// can be transported in a HT BA session", which `minstrel_ht_get_max_amsdu_len` applies to
/// every non-VHT station).
pub const MAX_MPDU_HT_BA: u32 = 4095;

/// The BSS MAC. See the module documentation.
#[derive(Debug)]
pub struct Mac {
    cfg: MacConfig,
    contention: Contention,
    /// Per link (`2·station` uplink, `2·station + 1` downlink) and AC: the driver's queue of
    /// MPDUs taken from the transmit queue (awaiting retransmission first, then at most one
    /// that did not fit the last aggregate) with the Block Ack window.
    driver: Vec<[Originator<Mpdu>; 4]>,
    /// [`Queues::Fifo`]: per link and AC, the frames not yet given to the driver.
    fifo: Vec<[VecDeque<Unit>; 4]>,
    /// [`Queues::Mac80211`]: per node (AP 0, station i at i + 1) its transmit queues.
    txqs: Vec<Txqs<Unit>>,
    /// Per link: the receiver's station id in the sender's [`Txqs`].
    link_sta: Vec<StaId>,
    /// Per link: the largest A-MSDU (bytes), if A-MSDUs are built.
    /// Per link, the A-MSDU limit of frames sent outside (`[0]`) and inside (`[1]`) A-MPDUs.
    amsdu_limit: Vec<[Option<u32>; 2]>,
    /// The MSDUs of each queued [`Unit`], by key (slots reused through `free_units`).
    units: Vec<Msdus>,
    free_units: Vec<u64>,
    reorder: Vec<[Reorder<Msdus>; 4]>,
    errors: Vec<ChaCha8Rng>,
    /// Per link: its rate controller ([`RateControl::Minstrel`]).
    rc: Vec<Option<Minstrel>>,
    /// Per node (AP 0, station i at i + 1) and AC: whether `contention` believes it has a frame.
    has_frame: Vec<[bool; 4]>,
    /// Per node and AC: when the head frame could first be sent (for `access_wait`).
    head_since: Vec<[Time; 4]>,
    /// Next station the AP serves, per AC ([`Queues::Fifo`]).
    ap_next: [usize; 4],
    idle_since: Time,
    pending: VecDeque<MacEvent>,
    /// Whether [`Self::enqueue`] may have moved [`Self::poll_at`] since
    /// [`Self::take_poll_moved`] last answered.
    poll_moved: bool,
    stats: Vec<NodeStats>,
    released: Vec<Msdus>,
    /// Per link: the last [`AmpduBuilder::time_safe_len`] with what it depends on (the rate
    /// and the limits other than the window), reused while they stay the same.
    time_safe: Vec<Option<(Phy, AmpduLimits, u64)>>,
    /// Per link: the airtime estimate of its MPDUs at its estimate rate.
    estimate: Vec<AirtimeEstimate>,
    /// Buffers of one access, kept from one to the next.
    scratch_txs: Vec<Tx>,
    scratch_transmitted: Transmitted<Mpdu>,
    scratch_pers: Vec<f64>,
}

/// The MSDUs of one MPDU: (frame id, length), in order; one MSDU without an allocation.
#[derive(Clone, Debug, Default)]
enum Msdus {
    /// A slot of `Mac::units` not in use.
    #[default]
    Empty,
    One((u64, u32)),
    Many(Vec<(u64, u32)>),
}

impl Msdus {
    fn as_slice(&self) -> &[(u64, u32)] {
        match self {
            Msdus::Empty => &[],
            Msdus::One(m) => std::slice::from_ref(m),
            Msdus::Many(v) => v,
        }
    }

    fn push(&mut self, m: (u64, u32)) {
        *self = match std::mem::take(self) {
            Msdus::Empty => Msdus::One(m),
            Msdus::One(first) => Msdus::Many(vec![first, m]),
            Msdus::Many(mut v) => {
                v.push(m);
                Msdus::Many(v)
            }
        };
    }
}

impl Mac {
    /// A BSS with empty queues at time 0. Streams: the EDCA functions use
    /// `Contention::new(timing, seed, component)` (AP's four queues first, then each station's,
    /// so adding a station changes nobody's draws); the MPDU errors of link `l` (`2·station`
    /// uplink, `+1` downlink) use a stream keyed by the second draw of `rng::stream(seed,
    /// component)` and `l`; with [`RateControl::Minstrel`] the rate controller of link `l` uses
    /// `Minstrel::new(…, key, l)` with `key` the third draw of that stream (so the other streams
    /// are those of [`RateControl::Fixed`]). The transmit queues draw nothing.
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
        for q in [Some(cfg.queues), cfg.ap_queues].into_iter().flatten() {
            if let Queues::Firmware { depth } = q
                && let Some(a) = depth.iter().position(|&d| d == 0)
            {
                return Err(MacError::FirmwareDepth(AccessCategory::ALL[a]));
            }
        }
        for (i, s) in cfg.stations.iter().enumerate() {
            let station = u32::try_from(i).unwrap_or(u32::MAX);
            for per in [s.uplink_per, s.downlink_per] {
                if !(0.0..1.0).contains(&per) {
                    return Err(MacError::Per { station, per });
                }
            }
            for snr in [s.uplink_snr_db, s.downlink_snr_db].into_iter().flatten() {
                if snr.is_nan() {
                    return Err(MacError::Snr { station, snr });
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
                if let Some(given) = cfg.amsdu_max {
                    let max = match p.standard() {
                        Standard::Ht => ampdu::MAX_AMSDU_HT_7935,
                        Standard::Vht | Standard::He => MAX_MPDU_VHT_11454,
                    };
                    if given == 0 || given > max {
                        return Err(MacError::AmsduMax {
                            station,
                            given,
                            max,
                            standard: p.standard(),
                        });
                    }
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
        let rate_key = rand::Rng::next_u64(&mut root);
        let mut rc = Vec::with_capacity(2 * n);
        for l in 0..2 * n {
            rc.push(match cfg.rate_control {
                RateControl::Fixed => None,
                RateControl::Minstrel(mc) => {
                    let (p, _, _) = Self::configured(&cfg, l);
                    let phys = rate_set(p.standard(), p.band(), p.nss(), p.width_mhz(), p.gi_ns())
                        .map_err(MinstrelError::from)?;
                    let l = u64::try_from(l).unwrap_or(u64::MAX);
                    Some(Minstrel::new(phys, mc, rate_key, l)?)
                }
            });
        }
        // The PHY the estimates use on each link: the configured one, or the max-throughput
        // rate of its controller.
        let estimate = |l: usize| {
            rc[l]
                .as_ref()
                .map_or(Self::configured(&cfg, l).0, |m| m.phys()[m.max_tp_rate()])
        };
        let mut txqs = Vec::new();
        let mut link_sta = Vec::with_capacity(2 * n);
        // mac80211's queues for every node when any node runs them (the others' stay empty).
        if cfg.queues.is_mac80211() || cfg.ap_queues.is_some_and(Queues::is_mac80211) {
            let mut ap = Txqs::new();
            let ap_ids: Vec<StaId> = (0..n).map(|_| ap.add_station()).collect();
            txqs.push(ap);
            for (i, &ap_id) in ap_ids.iter().enumerate() {
                let mut own = Txqs::new();
                let id = own.add_station();
                own.set_expected_throughput(id, expected_kbps(&estimate(2 * i)));
                txqs.push(own);
                txqs[0].set_expected_throughput(ap_id, expected_kbps(&estimate(2 * i + 1)));
                link_sta.extend([id, ap_id]);
            }
        }
        let airtime_estimates = (0..2 * n)
            .map(|l| AirtimeEstimate::new(&estimate(l)))
            .collect();
        let amsdu_limit = (0..2 * n)
            .map(|l| {
                let s = &cfg.stations[l / 2];
                let p = if l.is_multiple_of(2) {
                    s.uplink_phy
                } else {
                    s.downlink_phy
                };
                [false, true].map(|agg| {
                    cfg.amsdu_max
                        .map(|m| m.min(amsdu_cap(p.standard(), agg, cfg.format)))
                })
            })
            .collect();
        Ok(Mac {
            contention,
            driver: (0..2 * n).map(|_| Default::default()).collect(),
            fifo: (0..2 * n).map(|_| Default::default()).collect(),
            txqs,
            link_sta,
            amsdu_limit,
            units: Vec::new(),
            free_units: Vec::new(),
            reorder: (0..2 * n).map(|_| Default::default()).collect(),
            errors: (0..2 * n)
                .map(|l| rng::stream(error_key, u64::try_from(l).unwrap_or(u64::MAX)))
                .collect(),
            rc,
            has_frame: vec![[false; 4]; n + 1],
            head_since: vec![[Time::ZERO; 4]; n + 1],
            ap_next: [0; 4],
            idle_since: Time::ZERO,
            pending: VecDeque::new(),
            poll_moved: true,
            stats: vec![NodeStats::default(); n + 1],
            released: Vec::new(),
            time_safe: vec![None; 2 * n],
            estimate: airtime_estimates,
            scratch_txs: Vec::new(),
            scratch_transmitted: Transmitted::default(),
            scratch_pers: Vec::new(),
            cfg,
        })
    }

    /// How node `node` (AP 0, station i at i + 1) queues its frames.
    fn queues_of(&self, node: usize) -> Queues {
        match self.cfg.ap_queues {
            Some(q) if node == 0 => q,
            _ => self.cfg.queues,
        }
    }

    /// The AC a frame with DSCP `dscp` sent by `from` goes in: [`ac_of_dscp`] where that node
    /// maps DSCP to ACs ([`MacConfig::ap_dscp_to_ac`], [`MacConfig::sta_dscp_to_ac`]), else
    /// AC_BE (user priority 0).
    #[must_use]
    pub fn access_category(&self, from: Node, dscp: u8) -> AccessCategory {
        let maps = match from {
            Node::Ap => self.cfg.ap_dscp_to_ac,
            Node::Sta(_) => self.cfg.sta_dscp_to_ac,
        };
        if maps {
            ac_of_dscp(dscp)
        } else {
            AccessCategory::Be
        }
    }

    fn node_index(node: Node) -> usize {
        match node {
            Node::Ap => 0,
            Node::Sta(i) => usize::try_from(i).unwrap_or(usize::MAX).saturating_add(1),
        }
    }

    /// The sending node of link `l`.
    fn sender(link: usize) -> usize {
        if link.is_multiple_of(2) {
            link / 2 + 1
        } else {
            0
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

    /// The configured PHY, packet error rate and SNR of link `l`.
    fn configured(cfg: &MacConfig, link: usize) -> (Phy, f64, Option<f64>) {
        let s = &cfg.stations[link / 2];
        if link.is_multiple_of(2) {
            (s.uplink_phy, s.uplink_per, s.uplink_snr_db)
        } else {
            (s.downlink_phy, s.downlink_per, s.downlink_snr_db)
        }
    }

    /// The PHY the airtime estimate (AQL) and the expected throughput (CoDel) of link `l` use:
    /// the configured one, or its rate controller's max-throughput rate.
    fn estimate_phy(&self, link: usize) -> Phy {
        match &self.rc[link] {
            Some(m) => m.phys()[m.max_tp_rate()],
            None => Self::configured(&self.cfg, link).0,
        }
    }

    /// The rate controller of the link from `from` to `to` ([`RateControl::Minstrel`]; `None`
    /// with [`RateControl::Fixed`], an unknown station or a link that is not between the AP and
    /// a station).
    #[must_use]
    pub fn rate_controller(&self, from: Node, to: Node) -> Option<&Minstrel> {
        let (sta, dir) = match (from, to) {
            (Node::Sta(s), Node::Ap) => (s, 0),
            (Node::Ap, Node::Sta(s)) => (s, 1),
            _ => return None,
        };
        let link = 2 * usize::try_from(sta).ok()? + dir;
        self.rc.get(link)?.as_ref()
    }

    /// Queues frame `frame` (an MSDU of `len` bytes, flow hash `hash`: frames with the same hash
    /// are one flow for the fq and the A-MSDU packing) from `from` to `to` in `ac` at `now`.
    /// With [`MacConfig::amsdu_max`] the frame joins the last queued frame of its flow as one
    /// more A-MSDU subframe while the A-MSDU stays within the limit. Frames the transmit
    /// queues drop to make room come out as [`MacEvent::Dropped`] with `attempts` 0.
    ///
    /// # Errors
    /// An unknown station, or a frame not between the AP and a station.
    #[expect(
        clippy::too_many_arguments,
        reason = "one frame's addressing and identity"
    )]
    pub fn enqueue(
        &mut self,
        now: Time,
        from: Node,
        to: Node,
        ac: AccessCategory,
        frame: u64,
        len: u32,
        hash: u32,
    ) -> Result<(), MacError> {
        let (sta, dir) = match (from, to) {
            (Node::Sta(s), Node::Ap) => (s, 0),
            (Node::Ap, Node::Sta(s)) => (s, 1),
            _ => return Err(MacError::NotInfrastructure { from, to }),
        };
        let s = usize::try_from(sta).unwrap_or(usize::MAX);
        if s >= self.cfg.stations.len() {
            return Err(MacError::UnknownStation(sta));
        }
        let link = 2 * s + dir;
        let a = ac.index();
        let limit = self.amsdu_limit[link][usize::from(self.aggregates(ac))];
        // The slot the frame's MSDUs take if it does not join a tail A-MSDU.
        let key = match self.free_units.last() {
            Some(&k) => k,
            None => u64::try_from(self.units.len()).unwrap_or(u64::MAX),
        };
        let node = Self::sender(link);
        let queues = self.queues_of(node);
        let units = &mut self.units;
        // ieee80211_amsdu_aggregate: the new MSDU joins the tail frame of its flow if the
        // A-MSDU stays within the limit.
        let mut merge = |tail: &mut Unit, _new: &Unit| {
            let Some(limit) = limit else { return false };
            let Some(msdus) = usize::try_from(tail.key)
                .ok()
                .and_then(|k| units.get_mut(k))
            else {
                return false;
            };
            let mut lens: Vec<u32> = msdus.as_slice().iter().map(|m| m.1).collect();
            lens.push(len);
            let amsdu = ampdu::amsdu_len(&lens);
            if amsdu > limit {
                return false;
            }
            msdus.push((frame, len));
            tail.bytes = amsdu;
            true
        };
        let unit = Unit {
            key,
            bytes: len,
            hash,
        };
        match queues {
            q @ (Queues::Fifo | Queues::Firmware { .. }) => {
                let fifo = &mut self.fifo[link][a];
                let merged = fifo
                    .back_mut()
                    .is_some_and(|t| t.hash == hash && merge(t, &unit));
                let full = match q {
                    Queues::Firmware { depth } => fifo.len() >= depth[a] as usize,
                    _ => false,
                };
                if !merged && full {
                    // Tail drop: the firmware has no descriptor left for the frame.
                    self.report_txq_drop(node, link, frame, now);
                    self.poll_moved = true;
                    return Ok(());
                } else if !merged {
                    fifo.push_back(unit);
                    self.store_unit(key, (frame, len));
                }
            }
            Queues::Mac80211 => {
                let id = self.link_sta[link];
                let r = if limit.is_some() {
                    self.txqs[node].enqueue_or_merge(now, id, Tid::of_ac(ac), unit, merge)
                } else {
                    // Without A-MSDU nothing merges: straight in.
                    self.txqs[node]
                        .enqueue(now, id, Tid::of_ac(ac), unit)
                        .map(|()| false)
                };
                if !matches!(r, Ok(true)) {
                    self.store_unit(key, (frame, len));
                }
                if let Err(d) = r {
                    self.txq_dropped(node, d, now);
                    self.poll_moved = true;
                }
            }
        }
        if !self.has_frame[node][a] {
            self.poll_moved = true;
            self.has_frame[node][a] = true;
            self.head_since[node][a] = now;
            let station = u32::try_from(node).unwrap_or(u32::MAX);
            self.contention.enqueue(now, QueueId { station, ac }, 1);
        }
        Ok(())
    }

    /// Counts and reports frame `frame` dropped by `node`'s transmit queue for `link` at `at`,
    /// before any attempt.
    fn report_txq_drop(&mut self, node: usize, link: usize, frame: u64, at: Time) {
        let (from, to) = Self::ends(link);
        self.stats[node].txq_drops += 1;
        self.push_event(MacEvent::Dropped {
            from,
            to,
            frame,
            attempts: 0,
            at,
        });
    }

    /// A frame `node`'s transmit queues dropped at `at`: its MSDUs are reported.
    fn txq_dropped(&mut self, node: usize, d: Dropped<Unit>, at: Time) {
        let s = usize::try_from(d.txq.sta.index()).unwrap_or(usize::MAX);
        let link = if node == 0 { 2 * s + 1 } else { 2 * (node - 1) };
        for &(frame, _) in self.take_unit(d.frame.key).as_slice() {
            self.report_txq_drop(node, link, frame, at);
        }
    }

    /// Keeps the MSDU of a new unit in slot `key` (the one `enqueue` chose).
    fn store_unit(&mut self, key: u64, msdu: (u64, u32)) {
        let k = usize::try_from(key).unwrap_or(usize::MAX);
        if self.free_units.last() == Some(&key) {
            self.free_units.pop();
            self.units[k] = Msdus::One(msdu);
        } else {
            debug_assert_eq!(k, self.units.len());
            self.units.push(Msdus::One(msdu));
        }
    }

    /// The MSDUs of unit `key`; its slot is free again.
    fn take_unit(&mut self, key: u64) -> Msdus {
        let Some(slot) = usize::try_from(key)
            .ok()
            .and_then(|k| self.units.get_mut(k))
        else {
            return Msdus::Empty;
        };
        self.free_units.push(key);
        std::mem::take(slot)
    }

    /// Adds an event in time order (after those at the same time).
    fn push_event(&mut self, e: MacEvent) {
        if self.pending.back().is_none_or(|b| b.at() <= e.at()) {
            self.pending.push_back(e);
        } else {
            let i = self.pending.partition_point(|x| x.at() <= e.at());
            self.pending.insert(i, e);
        }
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

    /// Whether [`Self::enqueue`] calls since the last answer may have moved [`Self::poll_at`]
    /// (a queue began to contend, or the transmit queues dropped a frame and its event is
    /// due); false means `poll_at` is what it was then, so a caller that re-reads it after
    /// every other call need not after these. Clears the flag.
    pub fn take_poll_moved(&mut self) -> bool {
        std::mem::take(&mut self.poll_moved)
    }

    /// Runs the channel up to `now` and appends the events due by then to `out`, in time order.
    /// Call it at [`Self::poll_at`]: frames the caller queues in response to an event can only
    /// join accesses after the time it calls back.
    pub fn on_time(&mut self, now: Time, out: &mut Vec<MacEvent>) {
        while let Some(at) = self.contention.poll_at().filter(|&t| t <= now) {
            self.access(at);
        }
        let due = self.pending.partition_point(|e| e.at() <= now);
        out.extend(self.pending.drain(..due));
    }

    /// Counters of `node` (`None` for an unknown station).
    #[must_use]
    pub fn stats(&self, node: Node) -> Option<&NodeStats> {
        self.stats.get(Self::node_index(node))
    }

    /// Whether link `link` has frames of AC index `a`: in the driver or in the queue.
    fn link_backlogged(&self, link: usize, a: usize) -> bool {
        if !self.driver[link][a].is_empty() {
            return true;
        }
        match self.queues_of(Self::sender(link)) {
            Queues::Fifo | Queues::Firmware { .. } => !self.fifo[link][a].is_empty(),
            Queues::Mac80211 => {
                let tid = Tid::of_ac(AccessCategory::ALL[a]);
                self.txqs[Self::sender(link)].txq_backlog(self.link_sta[link], tid) > 0
            }
        }
    }

    /// Whether `node` has frames of AC index `a` on any link.
    fn node_backlogged(&self, node: usize, a: usize) -> bool {
        if node > 0 {
            self.link_backlogged(2 * (node - 1), a)
        } else {
            (0..self.cfg.stations.len()).any(|s| self.link_backlogged(2 * s + 1, a))
        }
    }

    /// The link the winner of `node`/`ac` serves: a station's uplink, or the station the AP
    /// serves next (round robin in [`Queues::Fifo`], `ieee80211_next_txq` in
    /// [`Queues::Mac80211`]).
    fn pick_link(&mut self, node: usize, ac: AccessCategory) -> Option<usize> {
        let a = ac.index();
        if self.queues_of(node).is_mac80211() {
            if let Some(id) = self.txqs[node].next_txq(ac) {
                let s = usize::try_from(id.sta.index()).unwrap_or(usize::MAX);
                return Some(if node == 0 { 2 * s + 1 } else { 2 * (node - 1) });
            }
            // Every txq held back by AQL: the driver still sends the MPDUs it holds (see the
            // module documentation), the AP in station order from where it last served.
            let links: Vec<usize> = if node > 0 {
                vec![2 * (node - 1)]
            } else {
                let n = self.cfg.stations.len();
                (0..n)
                    .map(|k| 2 * ((self.ap_next[a] + k) % n) + 1)
                    .collect()
            };
            let link = links.into_iter().find(|&l| !self.driver[l][a].is_empty())?;
            if node == 0 {
                self.ap_next[a] = (link / 2 + 1) % self.cfg.stations.len();
            }
            return Some(link);
        }
        if node > 0 {
            let link = 2 * (node - 1);
            return self.link_backlogged(link, a).then_some(link);
        }
        let n = self.cfg.stations.len();
        for k in 0..n {
            let s = (self.ap_next[a] + k) % n;
            if self.link_backlogged(2 * s + 1, a) {
                self.ap_next[a] = (s + 1) % n;
                return Some(2 * s + 1);
            }
        }
        None
    }

    /// Whether frames of `ac` go in A-MPDUs ([`MacConfig::ampdu`], [`MacConfig::ampdu_vo`]).
    fn aggregates(&self, ac: AccessCategory) -> bool {
        self.cfg.ampdu && (self.cfg.ampdu_vo || ac != AccessCategory::Vo)
    }

    /// SIFS + Block Ack of link `link`'s agreement, or SIFS + Ack without A-MPDU in `ac`.
    fn response(&self, link: usize, ac: AccessCategory) -> Dur {
        let bytes = if !self.aggregates(ac) {
            phy::ACK_BYTES
        } else if self.cfg.stations[link / 2].ba_window > ampdu::BA_WINDOW_HT {
            phy::BLOCK_ACK_256_BYTES
        } else {
            phy::BLOCK_ACK_64_BYTES
        };
        self.cfg.band.sifs() + self.control(bytes)
    }

    /// Airtime of a control frame of `bytes` at the basic rate.
    fn control(&self, bytes: u64) -> Dur {
        phy::legacy_airtime(self.cfg.band, self.cfg.basic_rate_mbps, bytes).unwrap_or(Dur::ZERO)
    }

    /// RTS + SIFS + CTS + SIFS (IEEE 802.11-2020 §10.3.2.6).
    fn protection(&self) -> Dur {
        let sifs = self.cfg.band.sifs();
        self.control(phy::RTS_BYTES) + sifs + self.control(phy::CTS_BYTES) + sifs
    }

    /// The next frame of link `link`'s queue as an MPDU handed to the driver, at `now`.
    fn pull(&mut self, now: Time, link: usize, ac: AccessCategory) -> Option<Mpdu> {
        let a = ac.index();
        let node = Self::sender(link);
        let unit = match self.queues_of(node) {
            Queues::Fifo | Queues::Firmware { .. } => self.fifo[link][a].pop_front(),
            Queues::Mac80211 => {
                let id = self.link_sta[link];
                let u = self.txqs[node].dequeue(now, id, Tid::of_ac(ac));
                if self.txqs[node].has_drops() {
                    for d in self.txqs[node].take_drops() {
                        self.txq_dropped(node, d, now);
                    }
                }
                u
            }
        }?;
        let msdus = self.take_unit(unit.key);
        let f = self.cfg.format;
        let mpdu_len = match msdus.as_slice() {
            &[(_, len)] => f.mpdu_len(len),
            many => f.amsdu_mpdu_len(ampdu::amsdu_len(
                &many.iter().map(|m| m.1).collect::<Vec<_>>(),
            )),
        };
        let aggregated = self.aggregates(ac);
        let est = if self.rc[link].is_some() {
            let phy = self.estimate_phy(link);
            self.estimate[link].airtime(&phy, mpdu_len, aggregated)
        } else {
            // A fixed rate: the estimate's PHY is the configured one it was built with.
            self.estimate[link].airtime_at_last(mpdu_len, aggregated)
        };
        if self.queues_of(node).is_mac80211() {
            // ieee80211_tx_dequeue registers the estimate as pending airtime.
            let id = self.link_sta[link];
            self.txqs[node].tx_pending(id, ac, est);
        }
        Some(Mpdu {
            msdus,
            mpdu_len,
            est,
        })
    }

    /// The PSDU length of a single MPDU sent without A-MPDU: HT sends the bare MPDU, VHT and
    /// HE PPDUs always carry an A-MPDU, here a single MPDU with its delimiter (an S-MPDU, the
    /// delimiter's EOF bit set: IEEE 802.11-2020 §9.7.1).
    fn single_psdu(phy: &Phy, mpdu_len: u32) -> u64 {
        u64::from(mpdu_len)
            + match phy.standard() {
                Standard::Ht => 0,
                Standard::Vht | Standard::He => u64::from(ampdu::MPDU_DELIMITER),
            }
    }

    /// The A-MPDU of link `link` in `ac`, built by pulling frames (see the module
    /// documentation for the limits).
    fn build(&mut self, now: Time, link: usize, ac: AccessCategory, node: usize) -> Tx {
        let a = ac.index();
        let s = &self.cfg.stations[link / 2];
        let aggregates = self.aggregates(ac);
        let window = if aggregates {
            u16::try_from(self.driver[link][a].window_limit(s.ba_window)).unwrap_or(u16::MAX)
        } else {
            1
        };
        let max_len = s.max_ampdu_len;
        let params = if node == 0 {
            self.cfg.ap_edca
        } else {
            self.cfg.sta_edca
        }[a];
        let response = self.response(link, ac);
        let protection = if self.cfg.rts_threshold.is_some() {
            self.protection()
        } else {
            Dur::ZERO
        };
        let limits = AmpduLimits {
            ba_window: window,
            max_len,
            max_ppdu: ampdu::PPDU_MAX_TIME,
            txop: (params.txop_limit > Dur::ZERO).then_some(Txop {
                limit: params.txop_limit,
                response: response + protection,
            }),
        };
        // The rate of this A-MPDU (rate_for_next), before any frame is pulled.
        let (phy, rate) = match &mut self.rc[link] {
            Some(m) => {
                let c = m.rate_for_next(now);
                (m.phys()[c.index], Some(c.index))
            }
            None => (Self::configured(&self.cfg, link).0, None),
        };
        let safe = match self.time_safe[link] {
            Some((p, l, safe))
                if p == phy
                    && l.max_len == limits.max_len
                    && l.max_ppdu == limits.max_ppdu
                    && l.txop == limits.txop =>
            {
                safe
            }
            _ => {
                let safe = AmpduBuilder::time_safe_len(&phy, &limits);
                self.time_safe[link] = Some((phy, limits, safe));
                safe
            }
        };
        let mut b = AmpduBuilder::with_time_safe_len(&phy, &limits, safe);
        let mut full = false;
        for m in self.driver[link][a].items() {
            if b.push(m.mpdu_len).is_err() {
                full = true;
                break;
            }
        }
        while !full {
            let Some(m) = self.pull(now, link, ac) else {
                break;
            };
            full = b.push(m.mpdu_len).is_err();
            self.driver[link][a].push(m);
        }
        let mut agg = b.aggregate();
        if !aggregates && agg.mpdus == 1 {
            let mpdu = self.driver[link][a]
                .items()
                .next()
                .map_or(0, |m| m.mpdu_len);
            agg.psdu_len = Self::single_psdu(&phy, mpdu);
            agg.airtime = phy.ppdu_airtime(agg.psdu_len);
        }
        let rts = self
            .cfg
            .rts_threshold
            .is_some_and(|t| agg.psdu_len > u64::from(t));
        let protection = if rts { protection } else { Dur::ZERO };
        let sifs = self.cfg.band.sifs();
        Tx {
            queue: QueueId {
                station: u32::try_from(node).unwrap_or(u32::MAX),
                ac,
            },
            link,
            phy,
            rate,
            agg,
            protection,
            duration: protection + agg.airtime + response,
            // A collided RTS costs RTS + the CTS timeout; an unprotected PPDU its
            // response timeout (see the module documentation).
            collided_duration: if rts {
                self.control(phy::RTS_BYTES) + sifs + self.control(phy::CTS_BYTES)
            } else {
                agg.airtime + response
            },
        }
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
        let mut txs = std::mem::take(&mut self.scratch_txs);
        txs.clear();
        for &queue in &access.transmitters {
            let node = usize::try_from(queue.station).unwrap_or(usize::MAX);
            if let Some(link) = self.pick_link(node, queue.ac) {
                let tx = self.build(at, link, queue.ac, node);
                if tx.agg.mpdus > 0 {
                    txs.push(tx);
                } else {
                    self.return_txq(link, queue.ac);
                }
            }
        }
        if txs.is_empty() {
            // Void access (see the module documentation).
            self.contention.finish_quietly(at, true);
            if let [q] = access.transmitters[..] {
                let node = usize::try_from(q.station).unwrap_or(usize::MAX);
                self.has_frame[node][q.ac.index()] = self.node_backlogged(node, q.ac.index());
                if self.has_frame[node][q.ac.index()] {
                    self.contention.enqueue(at, q, 1);
                }
            }
            self.idle_since = at;
            self.scratch_txs = txs;
            return;
        }
        let collided = access.transmitters.len() > 1;
        let end = at
            + txs
                .iter()
                .map(|t| {
                    if collided {
                        t.collided_duration
                    } else {
                        t.duration
                    }
                })
                .max()
                .unwrap_or(Dur::ZERO);
        let mut success = false;
        for tx in &txs {
            let (from, to) = Self::ends(tx.link);
            let node = Self::node_index(from);
            let retransmissions = self.driver[tx.link][tx.queue.ac.index()]
                .awaiting_retransmission()
                .min(tx.agg.mpdus);
            let st = &mut self.stats[node];
            st.accesses += 1;
            st.collisions += u64::from(collided);
            if st.ampdu_sizes.len() <= tx.agg.mpdus {
                st.ampdu_sizes.resize(tx.agg.mpdus + 1, 0);
            }
            st.ampdu_sizes[tx.agg.mpdus] += 1;
            let mcs = usize::from(tx.phy.mcs());
            if st.mcs_counts.len() <= mcs {
                st.mcs_counts.resize(mcs + 1, 0);
            }
            st.mcs_counts[mcs] += 1;
            st.bounds[bound_index(tx.agg.bound)] += 1;
            st.airtime += if collided { end - at } else { tx.duration };
            if collided {
                st.collision_airtime += end - at;
            }
            let a = tx.queue.ac.index();
            st.access_wait += at - self.idle_since.max(self.head_since[node][a]);
            self.push_event(MacEvent::Transmit {
                from,
                to,
                ac: tx.queue.ac,
                start: at,
                mpdus: tx.agg.mpdus,
                retransmissions,
                bound: tx.agg.bound,
                ppdu: tx.agg.airtime,
                phy: tx.phy,
                end,
                collided,
            });
        }
        for tx in &txs {
            success |= self.exchange(tx, at, end, collided);
            self.return_txq(tx.link, tx.queue.ac);
        }
        // The only transmitter keeps contending if it still has frames: one more frame for
        // `Contention` before `finish` takes the delivered one off (no extra backoff draw counts:
        // `finish` draws the post-transmission backoff).
        if success {
            let q = txs[0].queue;
            let node = usize::try_from(q.station).unwrap_or(usize::MAX);
            let a = q.ac.index();
            let more = self.node_backlogged(node, a);
            if more {
                self.contention.enqueue(at, q, 1);
                self.head_since[node][a] = end;
            }
            self.has_frame[node][a] = more;
        }
        self.contention.finish_quietly(end, success);
        self.idle_since = end;
        self.scratch_txs = txs;
    }

    /// `ieee80211_return_txq`: the txq stays scheduled while the driver holds frames of it.
    fn return_txq(&mut self, link: usize, ac: AccessCategory) {
        if self.queues_of(Self::sender(link)).is_mac80211() {
            let force = !self.driver[link][ac.index()].is_empty();
            let id = self.link_sta[link];
            self.txqs[Self::sender(link)].return_txq(id, Tid::of_ac(ac), force);
        }
    }

    /// The outcome of one A-MPDU: per-MPDU errors, deliveries, retries and drops. Returns
    /// whether the Block Ack (or Ack) came back (a single transmitter and at least one MPDU
    /// received).
    fn exchange(&mut self, tx: &Tx, at: Time, end: Time, collided: bool) -> bool {
        let (from, to) = Self::ends(tx.link);
        let node = Self::node_index(from);
        let a = tx.queue.ac.index();
        let ac = tx.queue.ac;
        let airtime = if collided { end - at } else { tx.duration };
        if collided && tx.protection > Dur::ZERO {
            // Only the RTS went out: no MPDU was attempted.
            if self.queues_of(node).is_mac80211() {
                let id = self.link_sta[tx.link];
                self.txqs[node].tx_completed(id, ac, Dur::ZERO, airtime);
            }
            // The rate controller sees the A-MPDU fail whole, as without protection.
            self.report_rate(tx, end, 0);
            return false;
        }
        let (_, per, snr) = Self::configured(&self.cfg, tx.link);
        let limit = self.cfg.retry_limit;
        let ppdu_end = at + tx.protection + tx.agg.airtime;
        // Each MPDU's error probability: the fixed PER, combined with the SNR curve's for its
        // length at the rate used (independent losses: 1 − (1 − per)(1 − per_snr)).
        let mut pers = std::mem::take(&mut self.scratch_pers);
        pers.clear();
        if let Some(snr) = snr {
            pers.extend(
                self.driver[tx.link][a]
                    .items()
                    .take(tx.agg.mpdus)
                    .map(|m| 1.0 - (1.0 - per) * (1.0 - mpdu_error_rate(&tx.phy, snr, m.mpdu_len))),
            );
        }
        let lossy = snr.is_some() || per > 0.0;
        let mut t = std::mem::take(&mut self.scratch_transmitted);
        {
            let mut pers = pers.iter();
            let errors = &mut self.errors[tx.link];
            self.driver[tx.link][a].transmitted_into(
                tx.agg.mpdus,
                limit,
                // Without errors (no SNR, a PER of 0) no draw could lose an MPDU: the link's
                // stream, which nothing else reads, is left alone.
                || {
                    collided
                        || (lossy && rng::unit_f64(errors) < pers.next().copied().unwrap_or(per))
                },
                &mut t,
            );
        }
        self.scratch_pers = pers;
        self.report_rate(tx, end, t.received.len());
        let st = &mut self.stats[node];
        st.mpdus_sent += u64::try_from(tx.agg.mpdus).unwrap_or(u64::MAX);
        st.retries += t.retransmissions;
        st.acked += u64::try_from(t.received.len()).unwrap_or(u64::MAX);
        st.dropped += u64::try_from(t.dropped.len()).unwrap_or(u64::MAX);
        if self.queues_of(node).is_mac80211() {
            // Each MPDU's share of the exchange is charged to the station's deficit
            // (`ieee80211_sta_register_airtime`); the estimate leaves the pending airtime when
            // the MPDU's final status is known (`ieee80211_tx_status`), not on a retry.
            let n = u64::try_from(tx.agg.mpdus.max(1)).unwrap_or(1);
            let share = Dur(airtime.as_nanos() / n);
            let rest = airtime - Dur(share.as_nanos() * (n - 1));
            let id = self.link_sta[tx.link];
            let txqs = &mut self.txqs[node];
            let finals = t.received.iter().map(|(_, m)| m.est);
            let finals = finals.chain(t.dropped.iter().map(|(m, _)| m.est));
            // MPDUs kept for a retransmission release no estimate.
            let kept = tx
                .agg
                .mpdus
                .saturating_sub(t.received.len() + t.dropped.len());
            let ests = finals.chain(std::iter::repeat_n(Dur::ZERO, kept));
            txqs.tx_completed_each(id, ac, ests, rest, share);
        }
        // Recipient: in-order release at the end of the PPDU, then the Block Ack Request for
        // what the originator gave up (its new window start).
        let reorder = &mut self.reorder[tx.link][a];
        let mut out = std::mem::take(&mut self.released);
        // The common case: every MPDU received in order with nothing held, released as it is
        // (no copy of its MSDUs through the reorder buffer).
        let straight = reorder.receive_in_order(t.received.iter().map(|(seq, _)| *seq));
        if !straight {
            for (seq, m) in &t.received {
                reorder.receive(*seq, m.msdus.clone(), &mut out);
            }
        }
        let in_order = out.len();
        reorder.release_before(t.win_start, &mut out);
        let pending = &mut self.pending;
        let delivered = |at: Time| {
            move |frame, len| MacEvent::Delivered {
                from,
                to,
                frame,
                len,
                at,
            }
        };
        if straight {
            let msdus = t.received.iter().map(|(_, m)| &m.msdus);
            push_msdus(pending, ppdu_end, msdus, delivered(ppdu_end));
        } else {
            push_msdus(
                pending,
                ppdu_end,
                out[..in_order].iter(),
                delivered(ppdu_end),
            );
        }
        push_msdus(pending, end, out[in_order..].iter(), delivered(end));
        out.clear();
        self.released = out;
        let completed = move |frame, _| MacEvent::TxComplete {
            from,
            to,
            frame,
            at: end,
        };
        let msdus = t.received.iter().map(|(_, m)| &m.msdus);
        push_msdus(pending, end, msdus, completed);
        let dropped = t.dropped.iter().flat_map(|(m, attempts)| {
            m.msdus
                .as_slice()
                .iter()
                .map(move |&(frame, _)| MacEvent::Dropped {
                    from,
                    to,
                    frame,
                    attempts: *attempts,
                    at: end,
                })
        });
        push_all(pending, end, dropped);
        let received = !t.received.is_empty();
        self.scratch_transmitted = t;
        !collided && received
    }

    /// Tells link `tx.link`'s rate controller (if any) that `acked` of the A-MPDU's MPDUs were
    /// acknowledged (`minstrel_ht_tx_status`: `ampdu_len` attempted, `ampdu_ack_len`
    /// acknowledged), at the end of the exchange; the expected throughput behind the link's
    /// CoDel parameters follows the max-throughput rate (`sta_update_codel_params`).
    fn report_rate(&mut self, tx: &Tx, end: Time, acked: usize) {
        let (Some(rate), Some(m)) = (tx.rate, self.rc[tx.link].as_mut()) else {
            return;
        };
        let attempted = u32::try_from(tx.agg.mpdus).unwrap_or(u32::MAX);
        let acked = u32::try_from(acked).unwrap_or(u32::MAX).min(attempted);
        // The rate is one of its own and acked ≤ attempted: the report cannot be refused.
        let reported = m.report(end, rate, attempted, acked);
        debug_assert!(reported.is_ok(), "{reported:?}");
        if self.queues_of(Self::sender(tx.link)).is_mac80211() {
            let kbps = expected_kbps(&self.estimate_phy(tx.link));
            let id = self.link_sta[tx.link];
            self.txqs[Self::sender(tx.link)].set_expected_throughput(id, kbps);
        }
    }
}

/// Adds `events`, all at `at`, in time order after those at the same time (as
/// [`Mac::push_event`] one by one, in one step when they go at the end).
fn push_all(pending: &mut VecDeque<MacEvent>, at: Time, events: impl Iterator<Item = MacEvent>) {
    if pending.back().is_none_or(|b| b.at() <= at) {
        pending.extend(events);
    } else {
        let first = pending.partition_point(|x| x.at() <= at);
        for (i, e) in (first..).zip(events) {
            debug_assert_eq!(e.at(), at);
            pending.insert(i, e);
        }
    }
}

/// Adds `event(frame, len)` for each MSDU of `msdus`, all at `at`, as [`push_all`] of them
/// in turn; in the common case (they go at the end) MPDU by MPDU without a flattening
/// iterator.
fn push_msdus<'a>(
    pending: &mut VecDeque<MacEvent>,
    at: Time,
    msdus: impl Iterator<Item = &'a Msdus>,
    event: impl Fn(u64, u32) -> MacEvent,
) {
    if pending.back().is_none_or(|b| b.at() <= at) {
        for m in msdus {
            match m {
                Msdus::Empty => {}
                &Msdus::One((frame, len)) => pending.push_back(event(frame, len)),
                Msdus::Many(v) => pending.extend(v.iter().map(|&(frame, len)| event(frame, len))),
            }
        }
    } else {
        let events = msdus.flat_map(Msdus::as_slice);
        push_all(pending, at, events.map(|&(frame, len)| event(frame, len)));
    }
}

/// The largest A-MSDU an MPDU may carry on a link: an HT MPDU inside an A-MPDU is limited to
/// [`MAX_MPDU_HT_BA`] (the delimiter's length field), a VHT/HE MPDU to [`MAX_MPDU_VHT_11454`];
/// an HT MPDU outside an A-MPDU only by the A-MSDU limit itself.
fn amsdu_cap(standard: Standard, ampdu: bool, format: MpduFormat) -> u32 {
    let mpdu_max = match standard {
        Standard::Ht if ampdu => MAX_MPDU_HT_BA,
        Standard::Ht => return u32::MAX,
        Standard::Vht | Standard::He => MAX_MPDU_VHT_11454,
    };
    mpdu_max - format.overhead()
}

/// The expected throughput mac80211 gives the CoDel parameters (`sta_update_codel_params`),
/// in kbit/s: the PHY data rate here (minstrel's estimate, lower, is not modelled).
fn expected_kbps(phy: &Phy) -> u32 {
    cclab_cc::num::f64_to_u32(phy.data_rate_bps() / 1000.0)
}
