//! A-MSDU and A-MPDU sizing, and the limits that bound the next A-MPDU.
//!
//! Contract: byte lengths follow the frame formats of IEEE 802.11-2020 clause 9: an MPDU is the
//! QoS data MAC header (26 B, 30 B with HT Control) + optional CCMP header and MIC + LLC/SNAP +
//! MSDU + FCS; an A-MSDU subframe is a 14-B subheader + LLC/SNAP + MSDU padded to 4 B except the
//! last; an A-MPDU subframe is a 4-B delimiter + MPDU padded to 4 B, the last one unpadded.
//! [`next_ampdu`] takes the lengths of the MPDUs queued for one receiver/TID, in order, and the
//! [`AmpduLimits`], and returns how many go into the next A-MPDU, its PSDU length and airtime,
//! and which limit stopped it ([`Bound`]), so a caller can report it. The first MPDU always goes
//! (alone it is an S-MPDU; the caller keeps single MPDUs within the limits). [`AmpduBuilder`]
//! applies the same rules one MPDU at a time, for a driver that pulls frames from its queues
//! while they fit. Time-free and pure; used by the MAC model ([`super::mac`]).

use std::fmt;

use super::phy::{Phy, Standard};
use crate::Dur;

/// QoS data MAC header without Address 4: frame control 2 + duration 2 + 3 addresses 18 +
/// sequence control 2 + QoS control 2 (802.11-2020 9.3.2.1, Figure 9-61).
pub const QOS_DATA_HEADER: u32 = 26;
/// HT Control field (802.11-2020 9.2.4.6), present in +HTC frames.
pub const HT_CONTROL: u32 = 4;
/// LLC/SNAP encapsulation of an IP packet (IEEE 802.2 LLC + SNAP per RFC 1042).
pub const LLC_SNAP: u32 = 8;
/// CCMP header 8 + MIC 8 (802.11-2020 12.5.3.2, Figure 12-16).
pub const CCMP_OVERHEAD: u32 = 16;
/// Frame check sequence (802.11-2020 9.2.4.8).
pub const FCS: u32 = 4;
/// MPDU delimiter (802.11-2020 9.7.1, Figure 9-1017; ns-3 `MpduAggregator`).
pub const MPDU_DELIMITER: u32 = 4;
/// A-MSDU subframe header: DA 6 + SA 6 + length 2 (802.11-2020 9.3.2.2.2).
pub const AMSDU_SUBHEADER: u32 = 14;

/// Maximum A-MSDU length, HT, short and long (802.11-2020 9.4.2.55.2 HT Capabilities "Maximum
/// A-MSDU Length"; Linux `include/linux/ieee80211.h` `IEEE80211_MAX_MPDU_LEN_HT_3839`/`_7935`).
pub const MAX_AMSDU_HT_3839: u32 = 3839;
/// See [`MAX_AMSDU_HT_3839`].
pub const MAX_AMSDU_HT_7935: u32 = 7935;
/// Maximum A-MSDU for VHT/HE: the 11,454-B maximum MPDU (`IEEE80211_MAX_MPDU_LEN_VHT_11454`) less
/// MAC header and FCS overheads, as ns-3 `WifiMac` caps it (11,398 B).
pub const MAX_AMSDU_VHT: u32 = 11_398;

/// Block Ack window in MPDUs: 64 for HT/VHT, 256 for HE (Linux `IEEE80211_MAX_AMPDU_BUF_HT`
/// 0x40, `IEEE80211_MAX_AMPDU_BUF_HE` 0x100; 802.11ax-2021 10.25.4).
pub const BA_WINDOW_HT: u16 = 64;
/// See [`BA_WINDOW_HT`].
pub const BA_WINDOW_HE: u16 = 256;
/// aPPDUMaxTime for HT-mixed, VHT and HE PPDUs, 5.484 ms (802.11-2020 Tables 19-25 and 21-29;
/// 802.11ax-2021 Table 27-54; ns-3 `GetPpduMaxTime`).
pub const PPDU_MAX_TIME: Dur = Dur::from_micros(5_484);
/// aPSDUMaxLength: HT 65,535 B, VHT 4,692,480 B, HE 6,500,631 B (802.11-2020 Tables 19-25 and
/// 21-29; 802.11ax-2021 Table 27-54; ns-3 `VhtPhy::GetMaxPsduSize`, `HePhy::GetMaxPsduSize`).
pub const PSDU_MAX_HT: u64 = 65_535;
/// See [`PSDU_MAX_HT`].
pub const PSDU_MAX_VHT: u64 = 4_692_480;
/// See [`PSDU_MAX_HT`].
pub const PSDU_MAX_HE: u64 = 6_500_631;

/// Which optional fields an MPDU carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MpduFormat {
    /// +HTC: 4-B HT Control field.
    pub ht_control: bool,
    /// CCMP (WPA2) encryption: 16 B.
    pub ccmp: bool,
}

impl MpduFormat {
    /// QoS data with CCMP and no HT Control: a 1500-B IP packet makes a 1554-B MPDU and a 1560-B
    /// A-MPDU subframe.
    pub const QOS_CCMP: MpduFormat = MpduFormat {
        ht_control: false,
        ccmp: true,
    };

    /// Bytes of an MPDU around its frame body, not counting LLC/SNAP.
    pub fn overhead(self) -> u32 {
        QOS_DATA_HEADER
            + if self.ht_control { HT_CONTROL } else { 0 }
            + if self.ccmp { CCMP_OVERHEAD } else { 0 }
            + FCS
    }

    /// An MPDU carrying one MSDU (an IP packet of `msdu` bytes).
    pub fn mpdu_len(self, msdu: u32) -> u32 {
        self.overhead() + LLC_SNAP + msdu
    }

    /// An MPDU carrying an A-MSDU of `amsdu` bytes (from [`amsdu_len`]).
    pub fn amsdu_mpdu_len(self, amsdu: u32) -> u32 {
        self.overhead() + amsdu
    }
}

fn pad4(x: u64) -> u64 {
    x.next_multiple_of(4)
}

/// Length of an A-MSDU holding `msdus` (each subframe padded to 4 B except the last).
pub fn amsdu_len(msdus: &[u32]) -> u32 {
    let mut len: u32 = 0;
    for (i, &m) in msdus.iter().enumerate() {
        if i > 0 {
            len = len.next_multiple_of(4);
        }
        len += AMSDU_SUBHEADER + LLC_SNAP + m;
    }
    len
}

/// How many of the leading `msdus` fit in one A-MSDU of at most `max_amsdu` bytes. At least 1
/// when `msdus` is not empty: a lone MSDU goes as a plain MPDU.
pub fn pack_amsdu(msdus: &[u32], max_amsdu: u32) -> usize {
    let mut n = 0;
    while n < msdus.len() && (n == 0 || amsdu_len(&msdus[..=n]) <= max_amsdu) {
        n += 1;
    }
    n
}

/// Length an MPDU takes in an A-MPDU when it is not the last: delimiter + MPDU + padding.
pub fn ampdu_subframe_len(mpdu: u32) -> u64 {
    pad4(u64::from(MPDU_DELIMITER + mpdu))
}

/// A bad A-MPDU parameter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AmpduError {
    /// The maximum A-MPDU length exponent is out of the standard's range.
    Exponent {
        /// The standard.
        standard: Standard,
        /// Exponent asked for.
        exponent: u8,
        /// Largest valid exponent.
        max: u8,
    },
}

impl fmt::Display for AmpduError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AmpduError::Exponent {
                standard,
                exponent,
                max,
            } => write!(
                f,
                "{standard} maximum A-MPDU length exponent {exponent} is out of range \
                 (valid 0..={max}: length 2^(13 + exponent) − 1 bytes)"
            ),
        }
    }
}

impl std::error::Error for AmpduError {}

/// Maximum A-MPDU length for a length exponent e: 2^(13+e) − 1 bytes, e ≤ 3 for HT
/// (802.11-2020 9.4.2.55.3), e ≤ 7 for VHT (9.4.2.157.2), and for HE e ≤ 10, where e − 7 is the
/// HE extension added to VHT exponent 7 (802.11ax-2021 9.4.2.248.2; Linux
/// `IEEE80211_HE_MAC_CAP3_MAX_AMPDU_LEN_EXP_*`), capped at the standard's aPSDUMaxLength.
pub fn max_ampdu_len(standard: Standard, exponent: u8) -> Result<u64, AmpduError> {
    let (max, psdu_max) = match standard {
        Standard::Ht => (3, PSDU_MAX_HT),
        Standard::Vht => (7, PSDU_MAX_VHT),
        Standard::He => (10, PSDU_MAX_HE),
    };
    if exponent > max {
        return Err(AmpduError::Exponent {
            standard,
            exponent,
            max,
        });
    }
    Ok(((1u64 << (13 + exponent)) - 1).min(psdu_max))
}

/// A TXOP limit: the A-MPDU plus its response (SIFS + BlockAck) must fit in `limit`
/// (802.11-2020 10.23.2.9; ns-3 `QosFrameExchangeManager::IsWithinLimitsIfAddMpdu`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Txop {
    /// TXOP limit (e.g. 1.504 ms for AC_VO, 3.008 ms for AC_VI).
    pub limit: Dur,
    /// SIFS + BlockAck airtime after the A-MPDU.
    pub response: Dur,
}

/// Every limit that bounds one A-MPDU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AmpduLimits {
    /// Sequence numbers free in the originator's Block Ack window.
    pub ba_window: u16,
    /// Maximum A-MPDU length in bytes (the recipient's, from [`max_ampdu_len`]).
    pub max_len: u64,
    /// Maximum PPDU duration.
    pub max_ppdu: Dur,
    /// TXOP limit, if nonzero.
    pub txop: Option<Txop>,
}

impl AmpduLimits {
    /// The largest limits a standard allows: full Block Ack window, largest length exponent,
    /// aPPDUMaxTime, no TXOP limit.
    pub fn widest(standard: Standard) -> AmpduLimits {
        let (ba_window, exponent) = match standard {
            Standard::Ht => (BA_WINDOW_HT, 3),
            Standard::Vht => (BA_WINDOW_HT, 7),
            Standard::He => (BA_WINDOW_HE, 10),
        };
        let max_len = max_ampdu_len(standard, exponent).unwrap_or(PSDU_MAX_HT);
        AmpduLimits {
            ba_window,
            max_len,
            max_ppdu: PPDU_MAX_TIME,
            txop: None,
        }
    }
}

/// What stopped an A-MPDU from growing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// The queue ran out: every queued MPDU went.
    Backlog,
    /// The Block Ack window is full.
    BaWindow,
    /// One more MPDU would exceed the maximum A-MPDU length.
    Length,
    /// One more MPDU would make the PPDU longer than the maximum PPDU duration.
    PpduTime,
    /// One more MPDU would make PPDU + response overrun the TXOP limit.
    Txop,
}

/// The next A-MPDU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Aggregate {
    /// MPDUs in it.
    pub mpdus: usize,
    /// PSDU length in bytes (the last subframe unpadded).
    pub psdu_len: u64,
    /// PPDU airtime.
    pub airtime: Dur,
    /// The limit that stopped it (the first in the order of [`Bound`] when several bind at once).
    pub bound: Bound,
}

/// Builds the next A-MPDU from the queued MPDU lengths `mpdus` (in queue order).
pub fn next_ampdu(
    phy: &Phy,
    mpdus: impl IntoIterator<Item = u32>,
    limits: &AmpduLimits,
) -> Aggregate {
    let mut b = AmpduBuilder::new(phy, limits);
    for mpdu in mpdus {
        if b.push(mpdu).is_err() {
            break;
        }
    }
    b.aggregate()
}

/// An A-MPDU grown one MPDU at a time, as a driver builds one from frames it pulls from its
/// queues (Linux ath9k `ath_tx_form_aggr`, mt76 `mt76_txq_send_burst`): [`Self::push`] adds an
/// MPDU if it still fits every limit, else reports the limit and leaves the aggregate as it
/// was. The same rules as [`next_ampdu`].
#[derive(Clone, Copy, Debug)]
pub struct AmpduBuilder<'a> {
    phy: &'a Phy,
    limits: &'a AmpduLimits,
    agg: Aggregate,
    padded: u64,
    /// The longest PSDU whose airtime is within both time limits (PPDU time and TXOP): a push
    /// up to it needs no airtime computation (airtime grows with the length). `agg.airtime`
    /// is computed once, when the aggregate is read.
    time_safe_len: u64,
}

impl<'a> AmpduBuilder<'a> {
    /// An empty aggregate.
    #[must_use]
    pub fn new(phy: &'a Phy, limits: &'a AmpduLimits) -> Self {
        Self::with_time_safe_len(phy, limits, Self::time_safe_len(phy, limits))
    }

    /// The longest PSDU whose airtime at `phy` is within both time limits of `limits` (PPDU
    /// time and TXOP), at most `limits.max_len` (0: none). It depends only on `phy`,
    /// `limits.max_len`, `limits.max_ppdu` and `limits.txop`, so a caller building many
    /// aggregates under the same ones may keep it ([`Self::with_time_safe_len`]).
    #[must_use]
    pub fn time_safe_len(phy: &Phy, limits: &AmpduLimits) -> u64 {
        let budget = limits.txop.map_or(limits.max_ppdu, |t| {
            limits.max_ppdu.min(Dur(t
                .limit
                .as_nanos()
                .saturating_sub(t.response.as_nanos())))
        });
        // Largest length with airtime ≤ budget, by bisection over [0, max_len] (0: none known).
        let (mut lo, mut hi) = (0u64, limits.max_len);
        if phy.ppdu_airtime(hi) <= budget {
            lo = hi;
        } else {
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2;
                if phy.ppdu_airtime(mid) <= budget {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            if phy.ppdu_airtime(lo) > budget {
                lo = 0;
            }
        }
        lo
    }

    /// An empty aggregate, given [`Self::time_safe_len`] of the same `phy` and `limits`.
    #[must_use]
    pub fn with_time_safe_len(phy: &'a Phy, limits: &'a AmpduLimits, time_safe_len: u64) -> Self {
        debug_assert_eq!(time_safe_len, Self::time_safe_len(phy, limits));
        AmpduBuilder {
            phy,
            limits,
            agg: Aggregate {
                mpdus: 0,
                psdu_len: 0,
                airtime: Dur::ZERO,
                bound: Bound::Backlog,
            },
            padded: 0,
            time_safe_len,
        }
    }

    /// Adds an MPDU of `mpdu` bytes (the first always goes).
    ///
    /// # Errors
    /// The limit one more MPDU would break (the first in [`Bound`] order); it is also recorded
    /// as the aggregate's bound.
    pub fn push(&mut self, mpdu: u32) -> Result<(), Bound> {
        let limits = self.limits;
        let len = self.padded + u64::from(MPDU_DELIMITER + mpdu);
        if self.agg.mpdus > 0 {
            let stop = if self.agg.mpdus + 1 > usize::from(limits.ba_window) {
                Some(Bound::BaWindow)
            } else if len > limits.max_len {
                Some(Bound::Length)
            } else if len <= self.time_safe_len {
                None
            } else {
                let airtime = self.phy.ppdu_airtime(len);
                if airtime > limits.max_ppdu {
                    Some(Bound::PpduTime)
                } else if limits.txop.is_some_and(|t| airtime + t.response > t.limit) {
                    Some(Bound::Txop)
                } else {
                    None
                }
            };
            if let Some(bound) = stop {
                self.agg.bound = bound;
                return Err(bound);
            }
        }
        self.agg.mpdus += 1;
        self.agg.psdu_len = len;
        self.padded += ampdu_subframe_len(mpdu);
        Ok(())
    }

    /// The aggregate so far (bound [`Bound::Backlog`] unless a push was refused).
    #[must_use]
    pub fn aggregate(&self) -> Aggregate {
        let mut agg = self.agg;
        if agg.mpdus > 0 {
            agg.airtime = self.phy.ppdu_airtime(agg.psdu_len);
        }
        agg
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wifi::phy::{BLOCK_ACK_256_BYTES, Band, legacy_airtime};

    const MPDU_1500: u32 = 1554;

    #[test]
    fn subframe_sizes() {
        // QoS header 26 + CCMP 16 + LLC/SNAP 8 + 1500 + FCS 4 = 1554; + delimiter 4 = 1558 -> 1560.
        assert_eq!(MpduFormat::QOS_CCMP.mpdu_len(1500), MPDU_1500);
        assert_eq!(ampdu_subframe_len(MPDU_1500), 1560);
        let plain = MpduFormat {
            ht_control: true,
            ccmp: false,
        };
        assert_eq!(plain.mpdu_len(1500), 26 + 4 + 8 + 1500 + 4);
        // A-MSDU subframes of 14 + 8 + 1500 = 1522 B, padded to 1524 except the last.
        assert_eq!(amsdu_len(&[1500, 1500]), 1524 + 1522);
        assert_eq!(
            MpduFormat::QOS_CCMP.amsdu_mpdu_len(amsdu_len(&[1500])),
            MPDU_1500 + 14
        );
    }

    /// n full-size MSDUs fit when 1524·(n − 1) + 1522 ≤ limit: 2 in 3839, 5 in 7935, 7 in 11398.
    #[test]
    fn amsdu_packing_limits() {
        let q = [1500; 16];
        assert_eq!(pack_amsdu(&q, MAX_AMSDU_HT_3839), 2);
        assert_eq!(pack_amsdu(&q, MAX_AMSDU_HT_7935), 5);
        assert_eq!(pack_amsdu(&q, MAX_AMSDU_VHT), 7);
        assert_eq!(pack_amsdu(&[9000], MAX_AMSDU_HT_3839), 1);
        assert_eq!(pack_amsdu(&[], MAX_AMSDU_HT_3839), 0);
        // Small MSDUs (TCP ACKs, 52 B): subframes of 74 -> 76 B: ⌊(3839 − 74)/76⌋ + 1 = 50.
        assert_eq!(pack_amsdu(&[52; 100], MAX_AMSDU_HT_3839), 50);
    }

    #[test]
    fn length_exponents() {
        assert_eq!(max_ampdu_len(Standard::Ht, 3), Ok(65_535));
        assert_eq!(max_ampdu_len(Standard::Ht, 0), Ok(8_191));
        assert_eq!(max_ampdu_len(Standard::Vht, 7), Ok(1_048_575));
        assert_eq!(max_ampdu_len(Standard::He, 9), Ok(4_194_303));
        assert_eq!(max_ampdu_len(Standard::He, 10), Ok(PSDU_MAX_HE));
        let err = max_ampdu_len(Standard::Ht, 4).unwrap_err();
        assert_eq!(
            err,
            AmpduError::Exponent {
                standard: Standard::Ht,
                exponent: 4,
                max: 3
            }
        );
        assert!(err.to_string().contains("0..=3"));
    }

    fn phy(standard: Standard, mcs: u8, nss: u8, width: u16, gi: u16) -> Phy {
        Phy::new(standard, Band::Ghz5, mcs, nss, width, gi).unwrap()
    }

    /// HE80 MCS11 2SS: 256 × 1560 B = 399 kB and 2.716 ms fit every other limit, so the 256-MPDU
    /// window binds.
    #[test]
    fn ba_window_binds() {
        let he = phy(Standard::He, 11, 2, 80, 800);
        let a = next_ampdu(&he, [MPDU_1500; 300], &AmpduLimits::widest(Standard::He));
        assert_eq!((a.mpdus, a.bound), (256, Bound::BaWindow));
        assert_eq!(a.psdu_len, 256 * 1560 - 2);
        let vht = phy(Standard::Vht, 9, 2, 80, 400);
        let a = next_ampdu(&vht, [MPDU_1500; 300], &AmpduLimits::widest(Standard::Vht));
        assert_eq!((a.mpdus, a.bound), (64, Bound::BaWindow));
    }

    /// HT40 MCS15: 65,535 B holds n subframes while 1560·(n − 1) + 1558 ≤ 65,535: n = 42
    /// (the HT maximum A-MPDU length, 2^16 − 1, 802.11-2020 9.4.2.55.3).
    #[test]
    fn length_binds() {
        let ht = phy(Standard::Ht, 7, 2, 40, 400);
        let a = next_ampdu(&ht, [MPDU_1500; 64], &AmpduLimits::widest(Standard::Ht));
        assert_eq!((a.mpdus, a.bound), (42, Bound::Length));
        assert_eq!(a.psdu_len, 41 * 1560 + 1558);
    }

    /// HE80 MCS0 1SS (N_DBPS 490, 13.6 µs): 5484 µs − 43.2 µs preamble leaves 400 symbols =
    /// 196,000 bits, i.e. (196,000 − 16)/8 = 24,498 B: 1560·(n − 1) + 1558 ≤ 24,498 gives n = 15.
    #[test]
    fn ppdu_time_binds() {
        let he = phy(Standard::He, 0, 1, 80, 800);
        let a = next_ampdu(&he, [MPDU_1500; 64], &AmpduLimits::widest(Standard::He));
        assert_eq!((a.mpdus, a.bound), (15, Bound::PpduTime));
        assert!(a.airtime <= PPDU_MAX_TIME);
    }

    /// HE80 MCS11 2SS under the AC_VO TXOP limit 1.504 ms with SIFS + 56-B BlockAck (56 µs): the
    /// PPDU may last 1448 µs, i.e. 102 symbols after the 50.4 µs preamble, 102·16333 bits =
    /// 208,243 B: n = 133.
    #[test]
    fn txop_binds() {
        let he = phy(Standard::He, 11, 2, 80, 800);
        let ba = legacy_airtime(Band::Ghz5, 24, BLOCK_ACK_256_BYTES).unwrap();
        let response = Band::Ghz5.sifs() + ba;
        assert_eq!(response, Dur::from_micros(56));
        let limits = AmpduLimits {
            txop: Some(Txop {
                limit: Dur::from_micros(1_504),
                response,
            }),
            ..AmpduLimits::widest(Standard::He)
        };
        let a = next_ampdu(&he, [MPDU_1500; 256], &limits);
        assert_eq!((a.mpdus, a.bound), (133, Bound::Txop));
        assert!(a.airtime + response <= Dur::from_micros(1_504));
    }

    /// Pushing one MPDU at a time gives what [`next_ampdu`] gives, and a refused MPDU leaves the
    /// aggregate as it was (only its bound is set): HT40 MCS15's 65,535-B limit refuses the 43rd
    /// 1554-B MPDU (see `length_binds`) and any after it.
    #[test]
    fn the_builder_matches_next_ampdu_and_refuses_without_change() {
        let ht = phy(Standard::Ht, 7, 2, 40, 400);
        let limits = AmpduLimits::widest(Standard::Ht);
        let mut b = AmpduBuilder::new(&ht, &limits);
        for _ in 0..42 {
            assert_eq!(b.push(MPDU_1500), Ok(()));
        }
        let full = b.aggregate();
        assert_eq!(b.push(MPDU_1500), Err(Bound::Length));
        assert_eq!(b.push(MPDU_1500), Err(Bound::Length));
        assert_eq!(
            b.aggregate(),
            Aggregate {
                bound: Bound::Length,
                ..full
            }
        );
        assert_eq!(
            (full.mpdus, full.psdu_len),
            (
                next_ampdu(&ht, [MPDU_1500; 64], &limits).mpdus,
                41 * 1560 + 1558
            )
        );
    }

    #[test]
    fn backlog_binds() {
        let he = phy(Standard::He, 11, 2, 80, 800);
        let limits = AmpduLimits::widest(Standard::He);
        let a = next_ampdu(&he, [MPDU_1500; 10], &limits);
        assert_eq!((a.mpdus, a.bound), (10, Bound::Backlog));
        let a = next_ampdu(&he, [], &limits);
        assert_eq!((a.mpdus, a.airtime), (0, Dur::ZERO));
    }
}
