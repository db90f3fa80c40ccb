//! 802.11 PHY rates and airtimes: HT (802.11n), VHT (802.11ac), HE (802.11ax) single-user PPDUs,
//! and non-HT OFDM (802.11a/g) control frames.
//!
//! Contract: [`Phy::new`] checks a standard, band, MCS, spatial-stream count, channel width and
//! guard interval and returns a [`PhyError`] naming the invalid combination; a valid [`Phy`]
//! never panics. [`Phy::data_rate_bps`] is computed from the modulation parameters
//! (data subcarriers × bits per subcarrier × coding rate × streams ÷ symbol duration), not read
//! from a table. [`Phy::ppdu_airtime`] is the TXTIME of an SU PPDU carrying a PSDU of the given
//! length, to the nanosecond:
//! - HT-mixed (IEEE 802.11-2020 19.4.3): preamble + N_SYM·T_SYM (long GI) or
//!   4 µs·⌈N_SYM·T_SYMS/4 µs⌉ (short GI), + 6 µs signal extension at 2.4 GHz;
//! - VHT (802.11-2020 21.4.3): the same, 5 GHz only, so no signal extension;
//! - HE SU (802.11ax-2021 27.4.3): preamble + N_SYM·T_SYM + packet extension (0 here) + signal
//!   extension at 2.4 GHz.
//!
//! N_SYM = ⌈(16 service + 8·bytes + 6·N_ES tail)/N_DBPS⌉ for BCC (HT, VHT; 802.11-2016 eq. 19-32
//! as ns-3 `HtPhy::GetPayloadDuration` cites it, and 21.4.3). HE is modelled with LDPC, which has no tail bits: N_SYM = ⌈(16 + 8·bytes)/N_DBPS⌉;
//! the pre-FEC padding factor, the LDPC extra symbol segment and the packet extension
//! (802.11ax-2021 27.3.12) are left out (each adds at most one symbol or 16 µs to a PPDU).
//! Single-user PPDUs only, no STBC, no HT-greenfield, no MU/OFDMA. Clause and table numbers
//! name where a rule sits in the standard (as ns-3 cites them); the ns-3 and Linux functions named
//! beside them were read to confirm the values. Used by the MAC model ([`super::mac`]); nothing
//! here is wired into the engine or the scenario keys yet.

use std::fmt;

use cclab_cc::num::u64_to_f64;

use crate::Dur;

/// Short interframe space at 5/6 GHz (OFDM PHY, IEEE 802.11-2020 Table 17-21 aSIFSTime; ns-3
/// `WifiPhy::Configure80211a`).
pub const SIFS_5GHZ: Dur = Dur::from_micros(16);
/// SIFS at 2.4 GHz for ERP/HT/HE (802.11-2020 Table 18-5 aSIFSTime 10 µs; ns-3
/// `WifiPhy::Configure80211g`); frames there end with a 6 µs [`SIGNAL_EXTENSION_2_4GHZ`].
pub const SIFS_2_4GHZ: Dur = Dur::from_micros(10);
/// Short slot (802.11-2020 Table 17-21 aSlotTime 9 µs; ERP short slot, Table 18-5).
pub const SLOT: Dur = Dur::from_micros(9);
/// Signal extension of ERP-OFDM/HT/HE PPDUs at 2.4 GHz (802.11-2020 Table 19-6
/// aSignalExtension; ns-3 `PhyEntity::GetSignalExtension`).
pub const SIGNAL_EXTENSION_2_4GHZ: Dur = Dur::from_micros(6);

/// Legacy preamble L-STF 8 µs + L-LTF 8 µs + L-SIG 4 µs (802.11-2020 Table 17-5 T_PREAMBLE 16 µs,
/// T_SIGNAL 4 µs; Table 19-6 T_L-STF, T_L-LTF, T_L-SIG).
pub const LEGACY_PREAMBLE: Dur = Dur::from_micros(20);
/// Non-HT OFDM symbol, 3.2 µs + 0.8 µs GI (802.11-2020 Table 17-5 T_SYM).
pub const LEGACY_SYMBOL: Dur = Dur::from_micros(4);
/// OFDM SERVICE field bits (802.11-2020 17.3.5.2, 19.3.11.2, 21.3.10.2; 802.11ax-2021 27.3.12.2).
pub const SERVICE_BITS: u64 = 16;
/// Tail bits per BCC encoder (802.11-2020 17.3.5.3, eq. 19-32).
pub const TAIL_BITS: u64 = 6;

/// Which 802.11 amendment's PHY a station uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Standard {
    /// 802.11n High Throughput, IEEE 802.11-2020 clause 19 (HT-mixed format only).
    Ht,
    /// 802.11ac Very High Throughput, IEEE 802.11-2020 clause 21.
    Vht,
    /// 802.11ax High Efficiency, IEEE 802.11ax-2021 clause 27 (HE SU PPDU).
    He,
}

/// The amendment's short name, as the 802.11 documents and a scenario's `standard` write it
/// (`HT`, `VHT`, `HE`).
impl fmt::Display for Standard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Standard::Ht => "HT",
            Standard::Vht => "VHT",
            Standard::He => "HE",
        })
    }
}

/// Frequency band: decides SIFS and the 2.4 GHz signal extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Band {
    /// 2.4 GHz (HT, HE).
    Ghz2_4,
    /// 5 GHz (HT, VHT, HE).
    Ghz5,
    /// 6 GHz (HE only).
    Ghz6,
}

/// The band as a scenario's `band` writes it (`2.4GHz`, `5GHz`, `6GHz`).
impl fmt::Display for Band {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Band::Ghz2_4 => "2.4GHz",
            Band::Ghz5 => "5GHz",
            Band::Ghz6 => "6GHz",
        })
    }
}

impl Band {
    /// SIFS in this band.
    pub fn sifs(self) -> Dur {
        match self {
            Band::Ghz2_4 => SIFS_2_4GHZ,
            Band::Ghz5 | Band::Ghz6 => SIFS_5GHZ,
        }
    }

    /// Signal extension after every OFDM PPDU in this band.
    pub fn signal_extension(self) -> Dur {
        match self {
            Band::Ghz2_4 => SIGNAL_EXTENSION_2_4GHZ,
            Band::Ghz5 | Band::Ghz6 => Dur::ZERO,
        }
    }

    /// AIFS\[AC\] = SIFS + AIFSN·slot (802.11-2020 10.23.2.4, eq. 10-4); AIFSN 2 gives DIFS
    /// (10.3.2.3.5: DIFS = SIFS + 2·slot = 34 µs at 5 GHz).
    pub fn aifs(self, aifsn: u8) -> Dur {
        self.sifs() + Dur(u64::from(aifsn) * SLOT.as_nanos())
    }

    /// DCF interframe space.
    pub fn difs(self) -> Dur {
        self.aifs(2)
    }
}

/// Why a PHY configuration is invalid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PhyError {
    /// The standard has no such channel width.
    Width {
        /// The standard asked for.
        standard: Standard,
        /// Channel width asked for, MHz.
        width_mhz: u16,
        /// The values the standard allows.
        valid: &'static str,
    },
    /// MCS above the standard's per-stream maximum.
    Mcs {
        /// The standard asked for.
        standard: Standard,
        /// Per-stream MCS asked for.
        mcs: u8,
        /// Largest valid per-stream MCS.
        max: u8,
    },
    /// Spatial streams outside 1..=4.
    Nss {
        /// Spatial streams asked for.
        nss: u8,
    },
    /// Guard interval not defined for the standard.
    GuardInterval {
        /// The standard asked for.
        standard: Standard,
        /// Guard interval asked for, ns.
        gi_ns: u16,
        /// The values the standard allows.
        valid: &'static str,
    },
    /// The standard is not defined in this band.
    Band {
        /// The standard asked for.
        standard: Standard,
        /// Band asked for.
        band: Band,
    },
    /// A VHT MCS/width/streams combination the standard excludes because N_CBPS/N_ES or
    /// N_DBPS/N_ES is not an integer (802.11-2020 21.5, the "not valid" rows of its MCS tables).
    VhtCombination {
        /// Channel width asked for, MHz.
        width_mhz: u16,
        /// Per-stream MCS asked for.
        mcs: u8,
        /// Spatial streams asked for.
        nss: u8,
    },
}

impl fmt::Display for PhyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PhyError::Width {
                standard,
                width_mhz,
                valid,
            } => {
                write!(
                    f,
                    "{standard} has no {width_mhz} MHz channel (valid: {valid})"
                )
            }
            PhyError::Mcs { standard, mcs, max } => write!(
                f,
                "{standard} MCS {mcs} is out of range: per-stream MCS is 0..={max} (give the \
                 stream count separately)"
            ),
            PhyError::Nss { nss } => write!(f, "{nss} spatial streams: valid 1..=4"),
            PhyError::GuardInterval {
                standard,
                gi_ns,
                valid,
            } => {
                write!(
                    f,
                    "{standard} has no {gi_ns} ns guard interval (valid: {valid})"
                )
            }
            PhyError::Band { standard, band } => {
                write!(f, "{standard} is not defined in the {band} band")
            }
            PhyError::VhtCombination {
                width_mhz,
                mcs,
                nss,
            } => write!(
                f,
                "VHT MCS {mcs} with {nss} stream(s) at {width_mhz} MHz is not a valid VHT-MCS: \
                 its coded or data bits per symbol do not divide evenly among the BCC encoders \
                 (IEEE 802.11-2020 21.5)"
            ),
        }
    }
}

impl std::error::Error for PhyError {}

/// A validated single-user PHY configuration with a fixed MCS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Phy {
    standard: Standard,
    band: Band,
    mcs: u8,
    nss: u8,
    width_mhz: u16,
    gi_ns: u16,
}

/// Modulation bits per subcarrier and coding rate (numerator, denominator) of per-stream MCS
/// 0..=11: HT MCS 0–7 (802.11-2020 19.5, Tables 19-27..), VHT adds 8–9 (21.5), HE adds 10–11
/// (802.11ax-2021 27.5): BPSK 1/2, QPSK 1/2, QPSK 3/4, 16-QAM 1/2, 16-QAM 3/4, 64-QAM 2/3, 3/4,
/// 5/6, 256-QAM 3/4, 5/6, 1024-QAM 3/4, 5/6.
const MODULATION: [(u64, u64, u64); 12] = [
    (1, 1, 2),
    (2, 1, 2),
    (2, 3, 4),
    (4, 1, 2),
    (4, 3, 4),
    (6, 2, 3),
    (6, 3, 4),
    (6, 5, 6),
    (8, 3, 4),
    (8, 5, 6),
    (10, 3, 4),
    (10, 5, 6),
];

impl Phy {
    /// Validates and builds a PHY. `mcs` is the per-stream MCS (HT MCS index m + 8·(nss − 1)
    /// is given as `mcs = m`, `nss`); `gi_ns` is 800 or 400 for HT/VHT and 800, 1600 or 3200 for
    /// HE.
    pub fn new(
        standard: Standard,
        band: Band,
        mcs: u8,
        nss: u8,
        width_mhz: u16,
        gi_ns: u16,
    ) -> Result<Phy, PhyError> {
        let (widths, widths_text, max_mcs, gis, gis_text): (&[u16], _, u8, &[u16], _) =
            match standard {
                Standard::Ht => (&[20, 40], "20, 40", 7, &[800, 400], "800, 400"),
                Standard::Vht => (
                    &[20, 40, 80, 160],
                    "20, 40, 80, 160",
                    9,
                    &[800, 400],
                    "800, 400",
                ),
                Standard::He => (
                    &[20, 40, 80, 160],
                    "20, 40, 80, 160",
                    11,
                    &[800, 1600, 3200],
                    "800, 1600, 3200",
                ),
            };
        let band_ok = match standard {
            Standard::Ht => band != Band::Ghz6,
            Standard::Vht => band == Band::Ghz5,
            Standard::He => true,
        };
        if !band_ok {
            return Err(PhyError::Band { standard, band });
        }
        if !widths.contains(&width_mhz) {
            return Err(PhyError::Width {
                standard,
                width_mhz,
                valid: widths_text,
            });
        }
        // 2.4 GHz channels carry at most 40 MHz (802.11-2020 19.1.1; 802.11ax-2021 27.1.1).
        if band == Band::Ghz2_4 && width_mhz > 40 {
            return Err(PhyError::Width {
                standard,
                width_mhz,
                valid: "20, 40 at 2.4 GHz",
            });
        }
        if mcs > max_mcs {
            return Err(PhyError::Mcs {
                standard,
                mcs,
                max: max_mcs,
            });
        }
        if !(1..=4).contains(&nss) {
            return Err(PhyError::Nss { nss });
        }
        if !gis.contains(&gi_ns) {
            return Err(PhyError::GuardInterval {
                standard,
                gi_ns,
                valid: gis_text,
            });
        }
        let phy = Phy {
            standard,
            band,
            mcs,
            nss,
            width_mhz,
            gi_ns,
        };
        if standard == Standard::Vht {
            let (n_cbps, n_dbps) = (phy.n_cbps(), phy.n_dbps_exact());
            let n_es = phy.n_es();
            let ok = n_dbps.1 == 1 && n_cbps.is_multiple_of(n_es) && n_dbps.0.is_multiple_of(n_es);
            if !ok {
                return Err(PhyError::VhtCombination {
                    width_mhz,
                    mcs,
                    nss,
                });
            }
        }
        Ok(phy)
    }

    /// The standard.
    pub fn standard(&self) -> Standard {
        self.standard
    }
    /// The band.
    pub fn band(&self) -> Band {
        self.band
    }
    /// Per-stream MCS.
    pub fn mcs(&self) -> u8 {
        self.mcs
    }
    /// Spatial streams.
    pub fn nss(&self) -> u8 {
        self.nss
    }
    /// Channel width in MHz.
    pub fn width_mhz(&self) -> u16 {
        self.width_mhz
    }
    /// Guard interval in ns.
    pub fn gi_ns(&self) -> u16 {
        self.gi_ns
    }

    /// Data subcarriers per stream, N_SD: HT 52/108 (802.11-2020 Table 19-6), VHT 52/108/234/468
    /// (Table 21-5), HE 234/468/980/1960 for the 242-, 484-, 996- and 2×996-tone RU
    /// (802.11ax-2021 27.5; ns-3 `HePhy::GetUsableSubcarriers`).
    pub fn n_sd(&self) -> u64 {
        match (self.standard, self.width_mhz) {
            (Standard::He, 20) => 234,
            (Standard::He, 40) => 468,
            (Standard::He, 80) => 980,
            (Standard::He, _) => 1960,
            (_, 20) => 52,
            (_, 40) => 108,
            (_, 80) => 234,
            _ => 468,
        }
    }

    /// OFDM symbol duration: DFT period 3.2 µs (HT/VHT, 802.11-2020 Tables 19-6 and 21-5) or
    /// 12.8 µs (HE, 802.11ax-2021 Table 27-12 T_DFT), plus the guard interval.
    pub fn symbol(&self) -> Dur {
        let dft = match self.standard {
            Standard::Ht | Standard::Vht => 3_200,
            Standard::He => 12_800,
        };
        Dur::from_nanos(dft + u64::from(self.gi_ns))
    }

    fn modulation(&self) -> (u64, u64, u64) {
        MODULATION[usize::from(self.mcs)]
    }

    /// Coded bits per subcarrier per stream, N_BPSCS: 1 (BPSK), 2 (QPSK), 4, 6, 8, 10 (16- to
    /// 1024-QAM).
    pub fn bits_per_subcarrier(&self) -> u64 {
        self.modulation().0
    }

    /// Convolutional/LDPC coding rate R as (numerator, denominator): 1/2, 2/3, 3/4 or 5/6.
    pub fn coding_rate(&self) -> (u64, u64) {
        let (_, num, den) = self.modulation();
        (num, den)
    }

    /// Coded bits per OFDM symbol over all streams, N_CBPS = N_SD·N_BPSCS·N_SS.
    pub fn n_cbps(&self) -> u64 {
        self.n_sd() * self.modulation().0 * u64::from(self.nss)
    }

    /// N_DBPS = N_CBPS·R as a reduced-enough fraction (numerator, denominator).
    fn n_dbps_exact(&self) -> (u64, u64) {
        let (_, r_num, r_den) = self.modulation();
        let num = self.n_cbps() * r_num;
        if num.is_multiple_of(r_den) {
            (num / r_den, 1)
        } else {
            (num, r_den)
        }
    }

    /// Data bits per OFDM symbol used to count symbols: N_CBPS·R, rounded down where it is not an
    /// integer (only HE MCS 10/11 at 80/160 MHz; 802.11ax-2021 27.5 lists N_DBPS = 8166 for the
    /// 996-tone RU at MCS 11, 1 stream).
    pub fn n_dbps(&self) -> u64 {
        let (num, den) = self.n_dbps_exact();
        num / den
    }

    /// Number of BCC encoders, N_ES (802.11-2020 19.3.11.5 and 21.3.10.5; the MCS tables).
    /// HT: one per 320 Mbit/s of long-GI rate (ns-3 `HtPhy::GetNumberBccEncoders`, read off
    /// 802.11-2016 Tables 19-27..19-41). VHT: one per 540 Mbit/s of long-GI rate (ns-3
    /// `VhtPhy::GetNumberBccEncoders` and its exception map, 802.11-2016 Tables 21-30..21-61) except 160 MHz 4 streams MCS 7,
    /// which uses 6. HE uses LDPC: 1 (no tail bits are added, see the module docs).
    pub fn n_es(&self) -> u64 {
        let (num, den) = self.n_dbps_exact();
        // Long-GI rate in bit/µs = N_DBPS / 4 µs; encoders = ⌈rate / per-encoder rate⌉.
        let per_encoder_mbps = match self.standard {
            Standard::Ht => 320,
            Standard::Vht => {
                if (self.width_mhz, self.nss, self.mcs) == (160, 4, 7) {
                    return 6;
                }
                540
            }
            Standard::He => return 1,
        };
        num.div_ceil(den * 4 * per_encoder_mbps)
    }

    /// PHY data rate in bit/s: N_DBPS (exact) ÷ symbol duration.
    pub fn data_rate_bps(&self) -> f64 {
        let (num, den) = self.n_dbps_exact();
        u64_to_f64(num) * 1e9 / u64_to_f64(den * self.symbol().as_nanos())
    }

    /// Number of HT/VHT/HE long training fields for N_SS streams: 1, 2, 4, 4 (802.11-2020
    /// Table 19-13 N_LTF, Table 21-13 N_VHTLTF; 802.11ax-2021 Table 27-15 N_HE-LTF).
    pub fn n_ltf(&self) -> u64 {
        match self.nss {
            1 => 1,
            2 => 2,
            _ => 4,
        }
    }

    /// Preamble duration up to the first data symbol.
    /// - HT-mixed: legacy 20 + HT-SIG 8 + HT-STF 4 + 4 per HT-LTF (802.11-2020 Table 19-6).
    /// - VHT: legacy 20 + VHT-SIG-A 8 + VHT-STF 4 + 4 per VHT-LTF + VHT-SIG-B 4 (Table 21-5; every
    ///   VHT PPDU carries VHT-SIG-B, Figure 21-4; ns-3 counts it for VHT MU only).
    /// - HE SU: legacy 20 + RL-SIG 4 + HE-SIG-A 8 + HE-STF 4 + N_LTF HE-LTF symbols
    ///   (802.11ax-2021 Table 27-12). An HE-LTF symbol here is 2× LTF (6.4 µs) + GI for GI 0.8 and
    ///   1.6 µs, and 4× LTF (12.8 µs) + 3.2 µs for GI 3.2 µs, the GI/LTF pairs HE SU allows
    ///   (27.3.11.10); ns-3 uses 8 µs for any GI. No packet extension.
    pub fn preamble(&self) -> Dur {
        let us = Dur::from_micros;
        let n_ltf = self.n_ltf();
        match self.standard {
            Standard::Ht => LEGACY_PREAMBLE + us(8 + 4 + 4 * n_ltf),
            Standard::Vht => LEGACY_PREAMBLE + us(8 + 4 + 4 * n_ltf + 4),
            Standard::He => {
                let ltf_ns = match self.gi_ns {
                    3200 => 12_800 + 3_200,
                    gi => 6_400 + u64::from(gi),
                };
                LEGACY_PREAMBLE + us(4 + 8 + 4) + Dur::from_nanos(n_ltf * ltf_ns)
            }
        }
    }

    /// Data symbols for a PSDU of `bytes`.
    pub fn n_sym(&self, bytes: u64) -> u64 {
        let tail = match self.standard {
            Standard::He => 0,
            Standard::Ht | Standard::Vht => TAIL_BITS * self.n_es(),
        };
        (SERVICE_BITS + 8 * bytes + tail).div_ceil(self.n_dbps())
    }

    /// TXTIME of an SU PPDU carrying a PSDU of `bytes` (see the module docs for the formulas).
    pub fn ppdu_airtime(&self, bytes: u64) -> Dur {
        let n_sym = self.n_sym(bytes);
        let data_ns = match (self.standard, self.gi_ns) {
            // HT/VHT short GI: the data part is counted in whole 4 µs units (eq. 19-88, 21.4.3).
            (Standard::Ht | Standard::Vht, 400) => (n_sym * 3_600).div_ceil(4_000) * 4_000,
            _ => n_sym * self.symbol().as_nanos(),
        };
        self.preamble() + Dur::from_nanos(data_ns) + self.band.signal_extension()
    }
}

/// Non-HT OFDM (802.11a/g) rates in Mbit/s and their data bits per 4 µs symbol (802.11-2020
/// Table 17-4).
pub const LEGACY_RATES: [(u32, u64); 8] = [
    (6, 24),
    (9, 36),
    (12, 48),
    (18, 72),
    (24, 96),
    (36, 144),
    (48, 192),
    (54, 216),
];

/// Default basic rate for control responses (24 Mbit/s: the highest mandatory OFDM rate,
/// 802.11-2020 17.3.5.7 and 10.6.6.5.2, which picks the highest basic rate ≤ the eliciting rate).
pub const DEFAULT_BASIC_RATE_MBPS: u32 = 24;

/// Control frame lengths in bytes including FCS (802.11-2020 9.3.1): RTS 20 (9.3.1.2), CTS 14
/// (9.3.1.3), ACK 14 (9.3.1.4), Compressed BlockAck with a 64-bit bitmap 32 (9.3.1.8: frame
/// control 2 + duration 2 + RA 6 + TA 6 + BA control 2 + starting sequence control 2 + bitmap 8 +
/// FCS 4), and with a 256-bit bitmap 56 (802.11ax-2021 9.3.1.8.2, 32-byte bitmap).
pub const RTS_BYTES: u64 = 20;
/// CTS length, see [`RTS_BYTES`].
pub const CTS_BYTES: u64 = 14;
/// ACK length, see [`RTS_BYTES`].
pub const ACK_BYTES: u64 = 14;
/// Compressed BlockAck, 64-bit bitmap (HT/VHT, and HE sessions up to 64), see [`RTS_BYTES`].
pub const BLOCK_ACK_64_BYTES: u64 = 32;
/// Compressed BlockAck, 256-bit bitmap (HE sessions with a window above 64), see [`RTS_BYTES`].
pub const BLOCK_ACK_256_BYTES: u64 = 56;

/// Airtime of a non-HT OFDM PPDU of `bytes` at `rate_mbps` (802.11-2020 17.4.3 eq. 17-29):
/// 20 µs + 4 µs·⌈(16 + 8·bytes + 6)/N_DBPS⌉, plus the band's signal extension. `None` for a
/// rate that is not an OFDM rate.
pub fn legacy_airtime(band: Band, rate_mbps: u32, bytes: u64) -> Option<Dur> {
    let &(_, n_dbps) = LEGACY_RATES.iter().find(|(r, _)| *r == rate_mbps)?;
    let n_sym = (SERVICE_BITS + 8 * bytes + TAIL_BITS).div_ceil(n_dbps);
    Some(LEGACY_PREAMBLE + Dur(n_sym * LEGACY_SYMBOL.as_nanos()) + band.signal_extension())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phy(standard: Standard, mcs: u8, nss: u8, width: u16, gi: u16) -> Phy {
        Phy::new(standard, Band::Ghz5, mcs, nss, width, gi).expect("valid PHY")
    }

    /// Rates against the published MCS tables (802.11-2020 Tables 19-27.., 21-30..;
    /// 802.11ax-2021 27.5), which print one decimal: equal within 0.05 Mbit/s.
    #[test]
    fn rates_match_the_mcs_tables() {
        use Standard::{He, Ht, Vht};
        let cases = [
            (Ht, 7, 1, 20, 800, 65.0),
            (Ht, 7, 2, 40, 400, 300.0),
            (Ht, 7, 2, 40, 800, 270.0),
            (Ht, 7, 2, 20, 400, 144.4),
            (Ht, 0, 1, 20, 800, 6.5),
            (Ht, 4, 3, 40, 800, 243.0),
            (Vht, 9, 2, 80, 400, 866.7),
            (Vht, 8, 1, 20, 800, 78.0),
            (Vht, 9, 1, 160, 400, 866.7),
            (Vht, 9, 4, 160, 400, 3466.7),
            (He, 11, 2, 80, 800, 1201.0),
            (He, 11, 2, 80, 3200, 1020.8),
            (He, 11, 2, 160, 800, 2402.0),
            (He, 11, 2, 40, 800, 573.5),
            (He, 11, 2, 20, 800, 286.8),
            (He, 0, 1, 20, 800, 8.6),
            (He, 11, 1, 80, 3200, 510.4),
            (He, 7, 1, 80, 1600, 340.3),
        ];
        for (standard, mcs, nss, width, gi, mbps) in cases {
            let got = phy(standard, mcs, nss, width, gi).data_rate_bps() / 1e6;
            assert!(
                (got - mbps).abs() < 0.05,
                "{standard:?} MCS {mcs} {nss}SS {width} MHz GI {gi}: {got} vs {mbps}"
            );
        }
    }

    /// PPDU airtimes worked by hand from the TXTIME formulas (exact to the ns).
    #[test]
    fn ppdu_airtime_matches_hand_computation() {
        // HT40 MCS15 SGI, 1560 B: N_DBPS 1080, N_ES 1, (16 + 12480 + 6)/1080 -> 12 symbols,
        // 12·3.6 = 43.2 µs -> 44 µs in 4 µs units; preamble 20 + 8 + 4 + 2·4 = 40 µs.
        assert_eq!(
            phy(Standard::Ht, 7, 2, 40, 400).ppdu_airtime(1560),
            Dur::from_micros(84)
        );
        // HE80 MCS11 2SS GI 0.8, 1560 B: N_DBPS 16333, 1 symbol of 13.6 µs; preamble
        // 20 + 4 + 8 + 4 + 2·7.2 = 50.4 µs.
        let he80 = phy(Standard::He, 11, 2, 80, 800);
        assert_eq!(he80.ppdu_airtime(1560), Dur::from_nanos(64_000));
        // 256 × 1560 B: (16 + 3,194,880)/16333 -> 196 symbols = 2665.6 µs.
        assert_eq!(he80.ppdu_airtime(256 * 1560), Dur::from_nanos(2_716_000));
        // VHT80 MCS9 2SS long GI, 1500 B: N_DBPS 3120, long-GI rate 780 Mbit/s -> N_ES 2,
        // (16 + 12000 + 12)/3120 -> 4 symbols of 4 µs; preamble 20 + 8 + 4 + 8 + 4 = 44 µs.
        assert_eq!(
            phy(Standard::Vht, 9, 2, 80, 800).ppdu_airtime(1500),
            Dur::from_micros(60)
        );
        // HT20 MCS7 1SS long GI at 2.4 GHz, 100 B: N_DBPS 260, (16 + 800 + 6)/260 -> 4 symbols,
        // preamble 36 µs, + 6 µs signal extension.
        let ht24 = Phy::new(Standard::Ht, Band::Ghz2_4, 7, 1, 20, 800).unwrap();
        assert_eq!(ht24.ppdu_airtime(100), Dur::from_micros(58));
        // HE40 MCS11 2SS GI 3.2, 1000 B: N_DBPS 7800, (16 + 8000)/7800 -> 2 symbols of 16 µs;
        // preamble 20 + 16 + 2·(12.8 + 3.2) = 68 µs.
        assert_eq!(
            phy(Standard::He, 11, 2, 40, 3200).ppdu_airtime(1000),
            Dur::from_micros(100)
        );
    }

    /// Control frames at non-HT OFDM rates (802.11-2020 eq. 17-29 worked by hand).
    #[test]
    fn control_frame_airtimes() {
        let at = |rate, bytes| legacy_airtime(Band::Ghz5, rate, bytes).unwrap();
        // ACK: (16 + 112 + 6)/96 -> 2 symbols: 28 µs; at 6 Mbit/s (·/24) 6 symbols: 44 µs.
        assert_eq!(at(24, ACK_BYTES), Dur::from_micros(28));
        assert_eq!(at(6, ACK_BYTES), Dur::from_micros(44));
        // BlockAck 32 B: 278/96 -> 3 symbols: 32 µs; 56 B: 470/96 -> 5 symbols: 40 µs.
        assert_eq!(at(24, BLOCK_ACK_64_BYTES), Dur::from_micros(32));
        assert_eq!(at(24, BLOCK_ACK_256_BYTES), Dur::from_micros(40));
        assert_eq!(at(24, RTS_BYTES), Dur::from_micros(28));
        assert_eq!(at(24, CTS_BYTES), Dur::from_micros(28));
        assert_eq!(legacy_airtime(Band::Ghz5, 25, 14), None);
        assert_eq!(
            legacy_airtime(Band::Ghz2_4, 24, ACK_BYTES),
            Some(Dur::from_micros(34))
        );
    }

    /// Interframe spaces: DIFS 34 µs and AIFS[BE] 43 µs at 5 GHz (802.11-2020 10.3.2.3.5,
    /// 10.23.2.4).
    #[test]
    fn interframe_spaces() {
        assert_eq!(Band::Ghz5.difs(), Dur::from_micros(34));
        assert_eq!(Band::Ghz5.aifs(3), Dur::from_micros(43));
        assert_eq!(Band::Ghz5.aifs(7), Dur::from_micros(79));
        assert_eq!(Band::Ghz2_4.difs(), Dur::from_micros(28));
    }

    /// The VHT combinations 802.11-2020 21.5 marks "not valid" (for up to 4 streams) are exactly
    /// the ones rejected: 20 MHz MCS 9 with 1, 2, 4 streams; 80 MHz MCS 6 with 3; 160 MHz MCS 9
    /// with 3.
    #[test]
    fn vht_invalid_combinations_match_the_standard() {
        let excluded = [(20, 9, 1), (20, 9, 2), (20, 9, 4), (80, 6, 3), (160, 9, 3)];
        for width in [20, 40, 80, 160] {
            for mcs in 0..=9 {
                for nss in 1..=4 {
                    let r = Phy::new(Standard::Vht, Band::Ghz5, mcs, nss, width, 800);
                    let bad = excluded.contains(&(width, mcs, nss));
                    assert_eq!(r.is_err(), bad, "VHT{width} MCS {mcs} {nss}SS: {r:?}");
                }
            }
        }
    }

    /// Invalid parameters give an error naming the problem, never a panic, for every input in a
    /// wide grid; every accepted PHY has a positive rate and airtime.
    #[test]
    fn invalid_parameters_are_errors() {
        use Standard::{He, Ht, Vht};
        let e = |s, b, m, n, w, g| Phy::new(s, b, m, n, w, g).unwrap_err();
        assert!(matches!(
            e(Ht, Band::Ghz5, 8, 1, 20, 800),
            PhyError::Mcs { max: 7, .. }
        ));
        assert!(matches!(
            e(Ht, Band::Ghz5, 7, 1, 80, 800),
            PhyError::Width { .. }
        ));
        assert!(matches!(
            e(Vht, Band::Ghz5, 9, 1, 20, 400),
            PhyError::VhtCombination { .. }
        ));
        assert!(matches!(
            e(Vht, Band::Ghz2_4, 0, 1, 20, 800),
            PhyError::Band { .. }
        ));
        assert!(matches!(
            e(He, Band::Ghz5, 12, 1, 20, 800),
            PhyError::Mcs { max: 11, .. }
        ));
        assert!(matches!(
            e(He, Band::Ghz5, 0, 1, 20, 400),
            PhyError::GuardInterval { .. }
        ));
        assert!(matches!(
            e(Ht, Band::Ghz5, 0, 5, 20, 800),
            PhyError::Nss { nss: 5 }
        ));
        assert!(matches!(
            e(Ht, Band::Ghz5, 0, 0, 20, 800),
            PhyError::Nss { nss: 0 }
        ));
        assert!(matches!(
            e(He, Band::Ghz2_4, 0, 1, 80, 800),
            PhyError::Width { .. }
        ));
        let msg = e(Vht, Band::Ghz5, 9, 1, 20, 400).to_string();
        assert!(msg.contains("MCS 9") && msg.contains("20 MHz"), "{msg}");
        for s in [Ht, Vht, He] {
            for b in [Band::Ghz2_4, Band::Ghz5, Band::Ghz6] {
                for m in [0, 7, 9, 11, 12, 255] {
                    for n in [0, 1, 2, 3, 4, 5, 255] {
                        for w in [0, 10, 20, 40, 80, 160, 320] {
                            for g in [0, 400, 800, 1600, 3200] {
                                if let Ok(p) = Phy::new(s, b, m, n, w, g) {
                                    assert!(p.data_rate_bps() > 0.0);
                                    assert!(p.ppdu_airtime(u64::from(u16::MAX)) > p.preamble());
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
