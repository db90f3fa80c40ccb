//! Per-MPDU error probability of an HT/VHT/HE MCS in AWGN, from the SNR.
//!
//! Contract: pure functions, no state, no randomness. [`mpdu_error_rate`] gives the probability
//! that an MPDU of `mpdu_bytes` sent with a [`Phy`] is received in error at a given SNR; it is
//! in \[0, 1\], non-decreasing in the MCS at a fixed SNR (for MCS 0–11 of one standard, checked
//! by a test) and non-increasing in the SNR. A NaN SNR counts as no signal (error rate 1); an
//! empty MPDU is never in error. The MAC ([`super::mac`]) draws each MPDU's loss from it when a
//! station's link has an SNR ([`super::mac::StationConfig::uplink_snr_db`]).
//!
//! The model is the one ns-3's `NistErrorRateModel` (`src/wifi/model/nist-error-rate-model.cc`)
//! uses, after Pei and Henderson, "Validation of OFDM error rate model in ns-3" (Boeing, 2010):
//! 1. **Uncoded bit error rate in AWGN** of the MCS's constellation with Gray mapping, the SNR
//!    being the symbol energy over the noise density (Es/N0) of one data subcarrier (Proakis and
//!    Salehi, *Digital Communications*, 5th ed., ch. 4: BPSK ½·erfc(√γ); QPSK ½·erfc(√(γ/2)); square
//!    M-QAM (2/log2 M)·(1 − 1/√M)·erfc(√(3γ/(2(M − 1)))), the nearest-neighbour approximation).
//! 2. **Coded bit error bound** of the 802.11 binary convolutional code (K = 7, generators
//!    133/171 octal, IEEE 802.11-2020 17.3.5.6, punctured to 2/3, 3/4 and 5/6 as in Figure 17-9
//!    and 19.3.11.6 for 5/6) under hard-decision Viterbi decoding: the union bound
//!    P_b ≤ (1/(2k))·Σ_d c_d·D^d over the code's free distance spectrum, with the Bhattacharyya
//!    parameter D = √(4p(1 − p)) of the uncoded error rate p and k the puncturing period's input
//!    bits (1 for rate 1/2). The information-weight spectra c_d (ten terms from the free
//!    distance d_free = 10, 6, 5, 4 for rates 1/2, 2/3, 3/4, 5/6) are the ones ns-3
//!    `NistErrorRateModel::CalculatePe` lists, which follow the tables of punctured codes of
//!    Haccoun and Bégin, "High-rate punctured convolutional codes for Viterbi and sequential
//!    decoding", IEEE Trans. Commun. 37(11), 1989 (rate 5/6: its Table V). The bound is capped
//!    at 1.
//! 3. **MPDU error rate** with independent bit errors after decoding:
//!    PER = 1 − (1 − P_b)^(8·bytes) (ns-3 `NistErrorRateModel::DoGetChunkSuccessRate`).
//!
//! HE data is LDPC-coded (802.11ax-2021 27.3.12.5.2; [`Phy`] models HE with LDPC); ns-3 applies
//! the same BCC bound to HE MCSs, and so does this model: LDPC gains 1–2 dB over BCC, which
//! shifts every HE threshold by about the same amount and keeps their order.
//!
//! **What the SNR is.** `snr_db` is the post-detection SNR of one spatial stream on one data
//! subcarrier: the received signal power over the noise power in the channel width (ns-3's
//! convention: thermal noise kTB over the whole channel, B = the width). All streams and
//! subcarriers see the same SNR (no fading, no inter-stream interference; MIMO detection loss is
//! left to whoever computes the SNR), so the error rate depends on the modulation, the coding
//! rate and the MPDU length, not on the stream count or the width. At a fixed transmit power a
//! channel twice as wide spreads the power over twice the noise: [`snr_over_width_db`] converts an
//! SNR measured in 20 MHz to the SNR in a wider channel (−3 dB per doubling; the receiver minimum
//! sensitivities of IEEE 802.11-2020 Tables 19-23 and 21-25 rise 3 dB per doubling likewise).
//!
//! **Against the standard.** The minimum input sensitivities (HT: 802.11-2020 19.3.19.2 and Table
//! 19-23; VHT: 21.3.18.2 and Table 21-25; HE: 802.11ax-2021 27.3.19.2 and Table 27-51) give, for
//! 20 MHz, the input level at which a receiver must reach 10 % PER with 4096-byte PSDUs:
//! MCS 0–11 at −82, −79, −77, −74, −70, −66, −65, −64, −59, −57, −54, −52 dBm ([`SENSITIVITY_20MHZ_DBM`]).
//! They assume one fixed noise figure and implementation margin for every MCS, so the *spacing*
//! between two MCSs is the SNR difference the standard expects; the tests compare the spacing of
//! [`snr_for_per`] thresholds with it.

use super::phy::Phy;
use crate::net::dist::erfc;

/// Receiver minimum input sensitivity at 20 MHz for per-stream MCS 0–11, dBm, 10 % PER at a
/// 4096-byte PSDU: IEEE 802.11-2020 Table 19-23 (HT MCS 0–7), Table 21-25 (VHT MCS 8–9),
/// 802.11ax-2021 Table 27-51 (HE MCS 10–11; HE MCS 0–9 repeat the VHT values). 40/80/160 MHz
/// add 3/6/9 dB.
pub const SENSITIVITY_20MHZ_DBM: [f64; 12] = [
    -82.0, -79.0, -77.0, -74.0, -70.0, -66.0, -65.0, -64.0, -59.0, -57.0, -54.0, -52.0,
];

/// The PSDU length of the standard's sensitivity test, bytes (802.11-2020 19.3.19.2, 21.3.18.2).
pub const SENSITIVITY_PSDU_BYTES: u32 = 4096;

/// Information-weight spectrum of the K = 7 code at rate 1/2 for d = 10, 12, …, 26 (module docs).
const SPECTRUM_1_2: [f64; 9] = [
    36.0,
    211.0,
    1_404.0,
    11_633.0,
    77_433.0,
    502_690.0,
    3_322_763.0,
    21_292_910.0,
    134_365_911.0,
];
/// Rate 2/3 (punctured), d = 6, 7, …, 15 (Haccoun and Bégin 1989).
const SPECTRUM_2_3: [f64; 10] = [
    3.0,
    70.0,
    285.0,
    1_276.0,
    6_160.0,
    27_128.0,
    117_019.0,
    498_860.0,
    2_103_891.0,
    8_784_123.0,
];
/// Rate 3/4 (punctured), d = 5, 6, …, 14 (Haccoun and Bégin 1989).
const SPECTRUM_3_4: [f64; 10] = [
    42.0,
    201.0,
    1_492.0,
    10_469.0,
    62_935.0,
    379_644.0,
    2_253_373.0,
    13_073_811.0,
    75_152_755.0,
    428_005_675.0,
];
/// Rate 5/6 (punctured), d = 4, 5, …, 13 (Haccoun and Bégin 1989, Table V).
const SPECTRUM_5_6: [f64; 10] = [
    92.0,
    528.0,
    8_694.0,
    79_453.0,
    792_114.0,
    7_375_573.0,
    67_884_974.0,
    610_875_423.0,
    5_427_275_376.0,
    47_664_215_639.0,
];

/// Uncoded bit error rate in AWGN of a Gray-mapped constellation with `bits` bits per symbol
/// (1 BPSK, 2 QPSK, 4/6/8/10 square QAM) at a linear symbol SNR `snr` (Es/N0); formulas in the
/// module docs. Other `bits` are treated as the square QAM with that many bits.
#[must_use]
pub fn uncoded_ber(bits: u64, snr: f64) -> f64 {
    let snr = snr.max(0.0);
    match bits {
        1 => 0.5 * erfc(snr.sqrt()),
        2 => 0.5 * erfc((snr / 2.0).sqrt()),
        _ => {
            let b = f64::from(u32::try_from(bits.min(30)).unwrap_or(30));
            let m = b.exp2();
            (2.0 / b) * (1.0 - 1.0 / m.sqrt()) * erfc((3.0 * snr / (2.0 * (m - 1.0))).sqrt())
        }
    }
}

/// Union bound on the decoded bit error rate of the 802.11 BCC at `rate` (numerator,
/// denominator: 1/2, 2/3, 3/4, 5/6) for a channel bit error rate `p`, capped at 1 (module docs).
/// A rate outside those four is bounded with the 5/6 spectrum, the weakest.
#[must_use]
pub fn coded_ber_bound(p: f64, rate: (u64, u64)) -> f64 {
    let p = p.clamp(0.0, 0.5);
    let d = (4.0 * p * (1.0 - p)).sqrt();
    // (spectrum, first distance, distance step, puncturing period k)
    let (spectrum, d_free, step, k): (&[f64], i32, i32, f64) = match rate {
        (1, 2) => (&SPECTRUM_1_2, 10, 2, 1.0),
        (2, 3) => (&SPECTRUM_2_3, 6, 1, 2.0),
        (3, 4) => (&SPECTRUM_3_4, 5, 1, 3.0),
        _ => (&SPECTRUM_5_6, 4, 1, 5.0),
    };
    let mut sum = 0.0;
    let mut dist = d_free;
    for c in spectrum {
        sum += c * d.powi(dist);
        dist += step;
    }
    (sum / (2.0 * k)).min(1.0)
}

/// Decoded bit error rate of `phy`'s MCS at `snr_db` (per stream, per subcarrier; module docs).
#[must_use]
pub fn bit_error_rate(phy: &Phy, snr_db: f64) -> f64 {
    if snr_db.is_nan() {
        return 1.0;
    }
    let snr = 10f64.powf(snr_db / 10.0);
    coded_ber_bound(
        uncoded_ber(phy.bits_per_subcarrier(), snr),
        phy.coding_rate(),
    )
}

/// Probability that an MPDU of `mpdu_bytes` sent with `phy` at `snr_db` is in error:
/// 1 − (1 − P_b)^(8·bytes), P_b from [`bit_error_rate`] (module docs).
#[must_use]
pub fn mpdu_error_rate(phy: &Phy, snr_db: f64, mpdu_bytes: u32) -> f64 {
    per_from_ber(bit_error_rate(phy, snr_db), mpdu_bytes)
}

/// 1 − (1 − ber)^(8·bytes), computed as −expm1(n·ln(1 − ber)) so that tiny error rates keep
/// their precision.
#[must_use]
pub fn per_from_ber(ber: f64, bytes: u32) -> f64 {
    if bytes == 0 {
        return 0.0;
    }
    if ber >= 1.0 {
        return 1.0;
    }
    let bits = 8.0 * f64::from(bytes);
    (-(bits * (-ber.max(0.0)).ln_1p()).exp_m1()).clamp(0.0, 1.0)
}

/// The SNR in dB at which an MPDU of `mpdu_bytes` sent with `phy` has error rate `per`
/// (bisection on [−20, 80] dB to 1e-6 dB; [`mpdu_error_rate`] is non-increasing in the SNR).
/// `per` is clamped to (0, 1); `mpdu_bytes` 0 is treated as 1.
#[must_use]
pub fn snr_for_per(phy: &Phy, per: f64, mpdu_bytes: u32) -> f64 {
    let per = if per.is_nan() {
        0.1
    } else {
        per.clamp(1e-12, 1.0 - 1e-12)
    };
    let bytes = mpdu_bytes.max(1);
    let (mut lo, mut hi) = (-20.0_f64, 80.0_f64);
    while hi - lo > 1e-6 {
        let mid = 0.5 * (lo + hi);
        if mpdu_error_rate(phy, mid, bytes) > per {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi
}

/// The SNR in a channel of `width_mhz` when the same transmit power gives `snr_20mhz_db` in
/// 20 MHz: the noise grows with the width, 10·log10(width/20) dB (module docs).
#[must_use]
pub fn snr_over_width_db(snr_20mhz_db: f64, width_mhz: u16) -> f64 {
    snr_20mhz_db - 10.0 * (f64::from(width_mhz.max(1)) / 20.0).log10()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wifi::phy::{Band, Standard};

    fn he(mcs: u8) -> Phy {
        Phy::new(Standard::He, Band::Ghz5, mcs, 1, 20, 800).unwrap()
    }

    /// Known points of the uncoded curves: BPSK at Eb/N0 = 9.6 dB has BER 1.0e-5 (Proakis,
    /// the textbook 1e-5 point: Q(√(2·9.12)) = 1.0e-5), within 5 %; QPSK at twice the SNR equals
    /// BPSK (Gray QPSK is two BPSKs at half the symbol energy each), and the square-QAM formula
    /// with 2 bits reduces to the QPSK one exactly ((2/2)(1 − 1/2)·erfc(√(γ/2))).
    #[test]
    fn uncoded_curves_match_textbook_points() {
        let g = 10f64.powf(0.96);
        let bpsk = uncoded_ber(1, g);
        assert!((bpsk / 1.0e-5 - 1.0).abs() < 0.05, "BPSK {bpsk}");
        for db in [-3.0, 0.0, 5.0, 10.0] {
            let g = 10f64.powf(db / 10.0);
            let (b, q) = (uncoded_ber(1, g), uncoded_ber(2, 2.0 * g));
            assert!(
                (b - q).abs() <= 1e-12 * b.max(1e-300) + 1e-300,
                "{db} dB: {b} vs {q}"
            );
        }
        // Higher-order constellations are worse at the same SNR (where the nearest-neighbour
        // approximation holds, BER below about 0.1: its prefactor (2/b)(1 − 1/√M) falls with b,
        // so near BER 0.2 the curves cross, an artefact of the approximation).
        for db in [15.0, 25.0, 35.0] {
            let g = 10f64.powf(db / 10.0);
            let bers: Vec<f64> = [1, 2, 4, 6, 8, 10]
                .iter()
                .map(|&b| uncoded_ber(b, g))
                .collect();
            assert!(bers.windows(2).all(|w| w[0] <= w[1]), "{db} dB: {bers:?}");
        }
    }

    /// The coded bound's leading term: for small p, D ≈ 2√p and the bound is
    /// c_dfree·(2√p)^dfree/(2k); at p = 1e-8 (D = 2e-4) the next term is at most
    /// (c_{d+1}/c_d)·D ≈ 5.7·2e-4 ≈ 0.1 % of the first for every rate, so the bound is within
    /// 1 % of the leading term.
    #[test]
    fn coded_bound_leading_term() {
        let p: f64 = 1e-8;
        let d = (4.0 * p * (1.0 - p)).sqrt();
        for (rate, c, dfree, k) in [
            ((1, 2), 36.0, 10, 1.0),
            ((2, 3), 3.0, 6, 2.0),
            ((3, 4), 42.0, 5, 3.0),
            ((5, 6), 92.0, 4, 5.0),
        ] {
            let lead = c * d.powi(dfree) / (2.0 * k);
            let got = coded_ber_bound(p, rate);
            assert!((got / lead - 1.0).abs() < 0.01, "{rate:?}: {got} vs {lead}");
        }
        assert_eq!(coded_ber_bound(0.5, (1, 2)), 1.0);
        assert_eq!(coded_ber_bound(0.0, (5, 6)), 0.0);
    }

    /// PER = 1 − (1 − P_b)^(8·bytes): the direct power agrees to 1e-9 relative (the power of the
    /// rounded 1 − P_b accumulates about 8000 roundings of 1.1e-16, ≈1e-12 absolute on 1 − PER,
    /// ≈5e-11 relative to a PER of 0.02), and 1 − PER(2n) = (1 − PER(n))² to 1e-12.
    #[test]
    fn per_follows_the_bit_formula() {
        let phy = he(4);
        for db in [14.0, 15.0, 16.0, 17.0] {
            let ber = bit_error_rate(&phy, db);
            let per = mpdu_error_rate(&phy, db, 1000);
            let want = 1.0 - (1.0 - ber).powi(8000);
            assert!(
                (per - want).abs() <= 1e-9 * want.max(1e-12),
                "{db}: {per} vs {want}"
            );
            let per2 = mpdu_error_rate(&phy, db, 2000);
            let s = 1.0 - per;
            assert!(((1.0 - per2) - s * s).abs() < 1e-12, "{db}: {per2}");
        }
        assert_eq!(mpdu_error_rate(&phy, 15.0, 0), 0.0);
        assert_eq!(mpdu_error_rate(&phy, f64::NAN, 100), 1.0);
        assert_eq!(mpdu_error_rate(&phy, -30.0, 100), 1.0);
        assert!(mpdu_error_rate(&phy, 60.0, 100) < 1e-15);
    }

    /// Bisection inverts the curve: the PER at the returned SNR is the target within 1e-4.
    #[test]
    fn snr_for_per_inverts() {
        for mcs in 0..=11 {
            let phy = he(mcs);
            let snr = snr_for_per(&phy, 0.1, SENSITIVITY_PSDU_BYTES);
            let per = mpdu_error_rate(&phy, snr, SENSITIVITY_PSDU_BYTES);
            assert!((per - 0.1).abs() < 1e-4, "MCS {mcs}: {per} at {snr}");
        }
    }

    /// Width: −3.01 dB per doubling.
    #[test]
    fn width_scales_noise() {
        assert!((snr_over_width_db(20.0, 40) - (20.0 - 3.0103)).abs() < 1e-3);
        assert!((snr_over_width_db(20.0, 160) - (20.0 - 9.0309)).abs() < 1e-3);
        assert_eq!(snr_over_width_db(20.0, 20), 20.0);
    }
}
