//! BBR congestion control: BBRv1 (Linux mainline `net/ipv4/tcp_bbr.c`, [`v1`]) and BBRv3
//! (google/bbr branch `v3`, [`v3`]), plus the variants built on them by composition: BBR-TAS
//! ([`Tas`], a state-dependent TSQ pacing shift on BBRv3) and 2BRobust ([`Robust`], a pacing-gain
//! boost in ProbeBW for a CPU-starved sender, on BBRv1 and BBRv3).
//!
//! Contract: this module holds what both versions share — Linux's fixed-point units, the
//! bandwidth-sample and pacing-rate arithmetic and the variant parameters. Both versions use
//! **Linux's integer-scaled constants** (gains in units of 1/256, bandwidth in packets per µs
//! scaled by 2^24), so a gain written "2.77" below is the integer 710/256 = 2.773. The
//! controllers own `cwnd` through `cong_control` and ask the transport to pace.

pub mod v1;
pub mod v3;

pub use v1::Bbr1;
pub use v3::Bbr3;

use crate::Dur;

/// Bandwidth scale: bandwidth is packets per µs << 24 (Linux `BW_SCALE`, tcp_bbr.c).
pub const BW_SCALE: u32 = 24;
/// One packet per µs in bandwidth units (Linux `BW_UNIT`).
pub const BW_UNIT: u64 = 1 << BW_SCALE;
/// Gain scale: gains are in units of 1/256 (Linux `BBR_SCALE`).
pub const BBR_SCALE: u32 = 8;
/// A gain of 1.0 (Linux `BBR_UNIT`).
pub const BBR_UNIT: u32 = 1 << BBR_SCALE;

/// Pacing below the estimated bandwidth by this many percent, to drain queues slowly (Linux
/// `bbr_pacing_margin_percent` = 1, in both mainline v1 and v3; draft `PacingMarginPercent`).
pub const PACING_MARGIN_PERCENT: u64 = 1;

/// Minimum TSO segments (Linux `sysctl_tcp_min_tso_segs` default 2, `tcp_sk_init`).
pub const SYSCTL_MIN_TSO_SEGS: u32 = 2;
/// Legacy GSO maximum packet size, 64 KiB (Linux `GSO_LEGACY_MAX_SIZE`, the default
/// `sk_gso_max_size` without BIG TCP).
pub const GSO_MAX_SIZE: u32 = 65_536;
/// Room Linux keeps for headers below `gso_max_size` (`MAX_TCP_HEADER` =
/// `L1_CACHE_ALIGN(128 + MAX_HEADER)`, 320 bytes on a typical x86-64 build).
pub const MAX_TCP_HEADER: u32 = 320;

/// A delivery-rate sample in BBR bandwidth units (Linux `bbr_update_bw`:
/// `delivered * BW_UNIT / interval_us`, interval truncated to whole µs as Linux measures it).
/// Returns `None` for an empty interval.
#[must_use]
pub fn bw_from_sample(delivered: u64, interval: Dur) -> Option<u64> {
    let us = interval.as_nanos() / 1_000;
    (us > 0).then(|| delivered.saturating_mul(BW_UNIT) / us)
}

/// Pacing rate in bytes per second for bandwidth `bw` (BBR units) at `gain` (1/256 units) and
/// segment size `mss` (Linux `bbr_rate_bytes_per_sec`: `bw·mss·gain >> 8`, times
/// 10^6/100·(100 − margin), >> 24).
#[must_use]
pub fn rate_bytes_per_sec(bw: u64, gain: u32, mss: u32) -> u64 {
    let rate = (u128::from(bw) * u128::from(mss) * u128::from(gain)) >> BBR_SCALE;
    let rate = (rate * u128::from(1_000_000 / 100 * (100 - PACING_MARGIN_PERCENT))) >> BW_SCALE;
    u64::try_from(rate).unwrap_or(u64::MAX)
}

/// BBR-TAS, the TSQ-adaptive pacing shift for BBRv3 over Wi-Fi 6: the socket's TSQ pacing shift
/// (Linux `sk_pacing_shift`, read by `tcp_small_queue_check`) is `startup_shift` while BBRv3 is
/// in Startup or Drain and `steady_shift` in ProbeBW and ProbeRTT. Everything else is BBRv3.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Tas {
    /// Shift in force during Startup and Drain.
    pub startup_shift: u8,
    /// Shift in force during ProbeBW and ProbeRTT.
    pub steady_shift: u8,
}

impl Tas {
    /// The best pair the BBR-TAS evaluation reports (startup 8, steady 8).
    pub const DEFAULT: Tas = Tas {
        startup_shift: 8,
        steady_shift: 8,
    };
    /// Shifts the scenario layer accepts (6 ≈ 15.6 ms … 12 ≈ 0.24 ms of data).
    pub const RANGE: std::ops::RangeInclusive<u8> = 6..=12;
}

/// 2BRobust (K. Elmenhorst, N. Aschenbruck, "2BRobust — Overcoming TCP BBR Performance
/// Degradation in Virtual Machines under CPU Contention", arXiv:2601.05665, 2026): in ProbeBW,
/// when the flow is not app-limited, at least `rounds` round trips after ProbeRTT ended, and in
/// flight < `alpha`·BDP, pace with the Startup gain instead of the cycle's gain. cwnd sizing is
/// unchanged.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Robust {
    /// Round trips that must pass after ProbeRTT before the boost may act (`r`).
    pub rounds: u32,
    /// In-flight threshold as a fraction of the BDP (`α`); converted to 1/256 units by rounding
    /// (0.84 → 215/256 = 0.840).
    pub alpha: f64,
}

impl Robust {
    /// The parameters the 2BRobust paper gives for BBRv3: r = 2, α = 0.84.
    pub const DEFAULT: Robust = Robust {
        rounds: 2,
        alpha: 0.84,
    };

    /// `alpha` in 1/256 units, rounded to nearest.
    #[must_use]
    pub fn alpha_unit(&self) -> u32 {
        crate::num::f64_to_u32((self.alpha * f64::from(BBR_UNIT)).round())
    }
}

/// Parameters of BBRv1.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Bbr1Config {
    /// 2BRobust on top of BBRv1 (boost gain = v1's high gain 2.885).
    pub robust: Option<Robust>,
}

/// Parameters of BBRv3.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Bbr3Config {
    /// BBR-TAS pacing-shift selection.
    pub tas: Option<Tas>,
    /// 2BRobust on top of BBRv3 (boost gain = v3's Startup gain 2.77).
    pub robust: Option<Robust>,
    /// ECN (L4S-style) response enabled: the route is `ecn_low` and ECN is negotiated (Linux v3
    /// eligibility additionally needs min_rtt ≤ 5 ms, checked by the controller).
    pub ecn_low: bool,
    /// How an eligible flow answers CE marks ([`EcnResponse`]; default google's).
    pub ecn_response: EcnResponse,
}

/// BBRv3's response to CE marks (only with [`Bbr3Config::ecn_low`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum EcnResponse {
    /// google/bbr v3 (`tcp_bbr.c`, v3 branch): eligible only while min_rtt ≤ 5 ms
    /// (`bbr_ecn_max_rtt_us`); inflight is "too high" only when the CE ratio of a sample
    /// exceeds 50 % (`bbr_is_inflight_too_high`, `bbr_ecn_thresh`); outside probing a round
    /// with CE cuts inflight_lo by α·85/256 ≈ α/3 (`bbr_ecn_lower_bounds`, `bbr_ecn_factor`).
    #[default]
    Google,
    /// The L4S-style response of the BBRv3 port for ns-3 used with the L4S/Prague ns-3 fork
    /// (AlexandruTabacaru/ns-3-dev-git-rp, commit d6bff3cd5, `src/internet/model/tcp-bbr3.cc`):
    /// always eligible with ECN on, whatever min_rtt (`TcpBbr3::Init` and
    /// `bbr_update_min_rtt` set `m_ecnEligible`); any CE echo in the round makes inflight "too
    /// high" (`bbr_is_inflight_too_high`: `m_ecnInRound && m_ecnEligible`, no 50 % threshold);
    /// outside probing each round with CE cuts inflight_lo by α·1 (`bbr_ecn_lower_bounds` with
    /// `bbr_ecn_cut` = 1 − α·`ecn_factor`, `ecn_factor` = 1.0). α is google's EWMA (gain 1/16
    /// of the round's CE fraction, `bbr_update_ecn_alpha`).
    PerMark,
}

impl EcnResponse {
    /// Scenario-file names, in declaration order.
    pub const NAMES: &'static [&'static str] = &["google", "per_mark"];

    /// Parse a scenario-file name.
    #[must_use]
    pub fn from_name(s: &str) -> Option<Self> {
        match s {
            "google" => Some(Self::Google),
            "per_mark" => Some(Self::PerMark),
            _ => None,
        }
    }

    /// The scenario-file name.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Google => "google",
            Self::PerMark => "per_mark",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bandwidth_sample_is_packets_per_us_scaled() {
        // 100 packets in 10 ms = 0.01 packets/µs = 167772 in BW units (2^24/100, truncated).
        assert_eq!(
            bw_from_sample(100, Dur::from_millis(10)),
            Some((1u64 << 24) / 100)
        );
        assert_eq!(bw_from_sample(5, Dur::from_nanos(999)), None);
    }

    #[test]
    fn pacing_rate_applies_gain_and_one_percent_margin() {
        // 1 packet/µs of 1000-byte packets = 1e9 B/s; gain 1.0; minus 1 % = 990e6 B/s.
        assert_eq!(rate_bytes_per_sec(BW_UNIT, BBR_UNIT, 1000), 990_000_000);
        // Gain 2.0 doubles it.
        assert_eq!(
            rate_bytes_per_sec(BW_UNIT, 2 * BBR_UNIT, 1000),
            1_980_000_000
        );
    }

    #[test]
    fn robust_alpha_rounds_to_linux_units() {
        assert_eq!(Robust::DEFAULT.alpha_unit(), 215);
    }
}
