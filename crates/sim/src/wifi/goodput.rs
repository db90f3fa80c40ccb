//! Analytic goodput of one saturated station sending A-MPDUs of N subframes.
//!
//! Contract: one sender, no collisions, no retries, no RTS/CTS; every channel access carries one
//! A-MPDU of `n` equal subframes followed by a BlockAck, so a cycle lasts
//! T(N) = AIFS + E\[backoff\] + TXTIME(N·L_sub) + SIFS + T_BA and goodput is
//! S(N) = N·L_payload·8 / T(N). TXTIME is [`Phy::ppdu_airtime`] (the exact PPDU duration, with
//! BCC tail bits and the HT/VHT short-GI rounding to 4 µs). E\[backoff\] = CWmin/2 slots: the
//! backoff counter is uniform on 0..=CWmin (802.11-2020 10.23.2.2). The cycle accounting of
//! Bianchi (IEEE JSAC 18(3), 2000) without contention; the MAC model ([`super::mac`]) is tested
//! against it. Pure and time-free.

use cclab_cc::num::u64_to_f64;

use super::phy::{Band, Phy, SLOT, legacy_airtime};
use crate::Dur;

/// The fixed parts of one channel access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    /// AIFS of the access category (DIFS for DCF).
    pub aifs: Dur,
    /// Mean initial backoff.
    pub mean_backoff: Dur,
    /// SIFS before the BlockAck.
    pub sifs: Dur,
    /// BlockAck airtime.
    pub block_ack: Dur,
}

impl Access {
    /// AC_BE as a station uses it (AIFSN 3, CWmin 15: mac80211 `ieee80211_set_wmm_default`) with
    /// a BlockAck of `ba_bytes` at `basic_rate_mbps`. `None` if the rate is not an OFDM rate.
    pub fn best_effort(band: Band, ba_bytes: u64, basic_rate_mbps: u32) -> Option<Access> {
        Some(Access {
            aifs: band.aifs(3),
            mean_backoff: mean_backoff(15),
            sifs: band.sifs(),
            block_ack: legacy_airtime(band, basic_rate_mbps, ba_bytes)?,
        })
    }

    /// Everything in a cycle but the PPDU.
    pub fn overhead(&self) -> Dur {
        self.aifs + self.mean_backoff + self.sifs + self.block_ack
    }
}

/// Mean backoff before a first attempt, CWmin/2 slots.
pub fn mean_backoff(cw_min: u16) -> Dur {
    Dur(u64::from(cw_min) * SLOT.as_nanos() / 2)
}

/// One cycle of the model.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cycle {
    /// PPDU airtime of the A-MPDU.
    pub ppdu: Dur,
    /// Whole cycle T(N).
    pub cycle: Dur,
    /// Goodput S(N) in bit/s.
    pub goodput_bps: f64,
}

/// T(N) and S(N) for `n` subframes of `subframe_len` bytes on air, each carrying `payload` bytes
/// of goodput.
pub fn saturated(phy: &Phy, access: &Access, n: u32, subframe_len: u32, payload: u32) -> Cycle {
    let ppdu = phy.ppdu_airtime(u64::from(n) * u64::from(subframe_len));
    let cycle = access.overhead() + ppdu;
    let bits = u64::from(n) * u64::from(payload) * 8;
    let goodput_bps = u64_to_f64(bits) * 1e9 / u64_to_f64(cycle.as_nanos().max(1));
    Cycle {
        ppdu,
        cycle,
        goodput_bps,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wifi::phy::{BLOCK_ACK_64_BYTES, BLOCK_ACK_256_BYTES, Standard};

    /// The reference case: 1560-B subframes carrying 1448-B TCP payloads, AC_BE, BA at 24 Mbit/s.
    const L_SUB: u32 = 1560;
    const L_PAYLOAD: u32 = 1448;

    fn check(phy: &Phy, access: &Access, table: &[(u32, f64, f64)], ppdu_tol_us: f64) {
        for &(n, ppdu_us, mbps) in table {
            let c = saturated(phy, access, n, L_SUB, L_PAYLOAD);
            let got_ppdu = u64_to_f64(c.ppdu.as_nanos()) / 1e3;
            let got = c.goodput_bps / 1e6;
            assert!(
                (got_ppdu - ppdu_us).abs() <= ppdu_tol_us,
                "N={n}: PPDU {got_ppdu} vs {ppdu_us}"
            );
            assert!(
                (got / mbps - 1.0).abs() < 0.03,
                "N={n}: S {got} vs {mbps} Mbit/s"
            );
        }
    }

    /// HE80 2SS MCS11 GI 0.8 with a 256-bit BlockAck (40 µs): fixed overhead
    /// 43 + 67.5 + 16 + 40 = 166.5 µs, preamble 50.4 µs (217 µs by hand). PPDUs agree to the
    /// hand-worked table's 1 µs rounding, goodput within 3 %.
    #[test]
    fn he80_mcs11_matches_the_reference_model() {
        let phy = Phy::new(Standard::He, Band::Ghz5, 11, 2, 80, 800).unwrap();
        let access = Access::best_effort(Band::Ghz5, BLOCK_ACK_256_BYTES, 24).unwrap();
        assert_eq!(access.overhead() + phy.preamble(), Dur::from_nanos(216_900));
        let table = [
            (1, 64.0, 50.0),
            (8, 146.0, 297.0),
            (32, 390.0, 666.0),
            (64, 717.0, 839.0),
            (256, 2716.0, 1029.0),
        ];
        check(&phy, &access, &table, 0.5);
    }

    /// HT40 2SS MCS15 short GI with a 64-bit BlockAck (32 µs): overhead 158.5 µs + preamble
    /// 40 µs (199 µs by hand). The hand-worked table counts N_SYM·3.6 µs without tail bits; the
    /// standard's TXTIME (802.11-2020 eq. 19-88) rounds the short-GI data part up to 4 µs and
    /// adds 6 tail bits, so PPDUs here are up to 4 µs longer (N=1: 84 vs 83.2 µs). N=64 does not
    /// fit the 65,535-B HT limit (see `ampdu::tests::length_binds`); 42 is the largest that does.
    #[test]
    fn ht40_mcs15_matches_the_reference_model() {
        let phy = Phy::new(Standard::Ht, Band::Ghz5, 7, 2, 40, 400).unwrap();
        let access = Access::best_effort(Band::Ghz5, BLOCK_ACK_64_BYTES, 24).unwrap();
        assert_eq!(access.overhead() + phy.preamble(), Dur::from_nanos(198_500));
        let table = [
            (1, 83.0, 48.0),
            (8, 375.0, 174.0),
            (32, 1372.0, 242.0),
            (42, 1790.0, 250.0),
        ];
        check(&phy, &access, &table, 4.0);
    }

    /// As N grows, S(N) approaches R·L_payload/L_sub (the model's asymptote): at N = 10,000
    /// (no limits applied here) within 2 % of it.
    #[test]
    fn goodput_approaches_the_asymptote() {
        let phy = Phy::new(Standard::He, Band::Ghz5, 11, 2, 80, 800).unwrap();
        let access = Access::best_effort(Band::Ghz5, BLOCK_ACK_256_BYTES, 24).unwrap();
        let asymptote = phy.data_rate_bps() * f64::from(L_PAYLOAD) / f64::from(L_SUB);
        let s = saturated(&phy, &access, 10_000, L_SUB, L_PAYLOAD).goodput_bps;
        assert!(s < asymptote && s / asymptote > 0.98, "{s} vs {asymptote}");
    }
}
