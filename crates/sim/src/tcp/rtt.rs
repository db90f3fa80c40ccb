//! RTT estimation: RFC 6298 smoothed RTT and RTO with Linux's bounds, and a windowed minimum.
//!
//! Contract: feed every Karn-safe RTT sample to [`RttEstimator::sample`]; read `srtt`, `rto`
//! and `min_rtt`. Constants: α = 1/8, β = 1/4, K = 4 (RFC 6298 §2); initial RTO 1 s (RFC 6298
//! §2.1, Linux `TCP_TIMEOUT_INIT`); minimum 200 ms (Linux `TCP_RTO_MIN`, applied to the variance
//! term as Linux `tcp_set_rto` does: RTO = SRTT + max(4·RTTVAR, 200 ms)); maximum 120 s (Linux
//! `TCP_RTO_MAX`). The minimum RTT is kept over a 300 s window (Linux `sysctl_tcp_min_rtt_wlen`).
//!
//! With [`RtoRule::Rfc6298`] (ns-3's `TcpSocketBase::EstimateRtt`) the RTO is instead
//! max(SRTT + max(G, 4·RTTVAR), `rto_min`) with G = 1 ms ([`NS3_CLOCK_GRANULARITY`]), and backs
//! off to at most 60 s ([`NS3_RTO_MAX`]); the initial RTO and the smoothing are the same.

use cclab_cc::{Dur, Time};

use crate::config::{RtoRule, TcpRules};

/// Linux `TCP_RTO_MIN`.
pub const RTO_MIN: Dur = Dur::from_millis(200);
/// Linux `TCP_RTO_MAX`.
pub const RTO_MAX: Dur = Dur::from_secs(120);
/// RFC 6298 §2.1 / Linux `TCP_TIMEOUT_INIT`.
pub const RTO_INIT: Dur = Dur::from_secs(1);
/// ns-3 `TcpSocketBase::ClockGranularity` default, the G of RFC 6298 §2.
pub const NS3_CLOCK_GRANULARITY: Dur = Dur::from_millis(1);
/// ns-3 `TcpSocketBase::ReTxTimeout`: the doubled RTO is capped at 60 s (RFC 6298 §2.5 allows
/// a maximum of at least 60 s).
pub const NS3_RTO_MAX: Dur = Dur::from_secs(60);
/// Linux `sysctl_tcp_min_rtt_wlen` default, 300 s.
pub const MIN_RTT_WINDOW: Dur = Dur::from_secs(300);

/// Smoothed RTT, variance, RTO and windowed minimum RTT of one connection.
#[derive(Clone, Copy, Debug)]
pub struct RttEstimator {
    srtt: Option<Dur>,
    rttvar: Dur,
    rto: Dur,
    min_rtt: Option<(Dur, Time)>,
    latest: Option<Dur>,
    /// RTO = min(max(SRTT + max(4·RTTVAR, `var_floor`), `floor`), `cap`): Linux floors the
    /// variance term at `rto_min` and caps at 120 s; RFC 6298 (ns-3) floors the variance term
    /// at the clock granularity and the whole RTO at `rto_min` (one rule, no branch per sample).
    var_floor: Dur,
    floor: Dur,
    cap: Dur,
    /// The largest RTO after backoff.
    backoff_cap: Dur,
}

impl Default for RttEstimator {
    fn default() -> Self {
        RttEstimator::new(&TcpRules::LINUX)
    }
}

impl RttEstimator {
    /// An estimator computing the RTO as `rules` say.
    #[must_use]
    pub fn new(rules: &TcpRules) -> Self {
        RttEstimator {
            srtt: None,
            rttvar: Dur::ZERO,
            rto: RTO_INIT,
            min_rtt: None,
            latest: None,
            var_floor: match rules.rto_rule {
                RtoRule::Linux => rules.rto_min,
                RtoRule::Rfc6298 => NS3_CLOCK_GRANULARITY,
            },
            floor: match rules.rto_rule {
                RtoRule::Linux => Dur::ZERO,
                RtoRule::Rfc6298 => rules.rto_min,
            },
            cap: match rules.rto_rule {
                RtoRule::Linux => RTO_MAX,
                RtoRule::Rfc6298 => Dur(u64::MAX),
            },
            backoff_cap: match rules.rto_rule {
                RtoRule::Linux => RTO_MAX,
                RtoRule::Rfc6298 => NS3_RTO_MAX,
            },
        }
    }

    /// The largest RTO after backoff.
    #[must_use]
    pub fn rto_max(&self) -> Dur {
        self.backoff_cap
    }

    /// Add a sample `r` taken at `now` (RFC 6298 §2.2–2.3).
    pub fn sample(&mut self, now: Time, r: Dur) {
        self.smooth(r);
        self.min_sample(now, r.max(Dur(1)));
    }

    /// Move SRTT, RTTVAR and the RTO only (Linux `tcp_rtt_estimator`); the windowed minimum is
    /// fed separately (`tcp_update_rtt_min` takes the newest segment's RTT).
    pub fn smooth(&mut self, r: Dur) {
        let r = r.max(Dur(1));
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = Dur(r.0 / 2);
            }
            Some(s) => {
                let err = s.0.abs_diff(r.0);
                // RTTVAR ← 3/4·RTTVAR + 1/4·|SRTT − R'|; SRTT ← 7/8·SRTT + 1/8·R'.
                self.rttvar = Dur((3 * self.rttvar.0 + err) / 4);
                self.srtt = Some(Dur((7 * s.0 + r.0) / 8));
            }
        }
        let srtt = self.srtt.unwrap_or(r);
        self.rto = (srtt + Dur(4 * self.rttvar.0).max(self.var_floor))
            .max(self.floor)
            .min(self.cap);
        self.latest = Some(r);
    }

    /// Update only the windowed minimum (for samples that must not move SRTT).
    pub fn min_sample(&mut self, now: Time, r: Dur) {
        match self.min_rtt {
            Some((m, at)) if r > m && now.saturating_since(at) < MIN_RTT_WINDOW => {}
            _ => self.min_rtt = Some((r, now)),
        }
    }

    /// Smoothed RTT, once a sample exists.
    #[must_use]
    pub fn srtt(&self) -> Option<Dur> {
        self.srtt
    }

    /// Current RTO before backoff.
    #[must_use]
    pub fn rto(&self) -> Dur {
        self.rto
    }

    /// Windowed minimum RTT.
    #[must_use]
    pub fn min_rtt(&self) -> Option<Dur> {
        self.min_rtt.map(|(m, _)| m)
    }

    /// The most recent sample.
    #[must_use]
    pub fn latest(&self) -> Option<Dur> {
        self.latest
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn follows_rfc6298_with_the_linux_floor() {
        let mut e = RttEstimator::default();
        assert_eq!(e.rto(), Dur::from_secs(1));
        e.sample(Time(0), Dur::from_millis(100));
        assert_eq!(e.srtt(), Some(Dur::from_millis(100)));
        // RTTVAR = 50 ms → RTO = 100 + max(200, 200) = 300 ms.
        assert_eq!(e.rto(), Dur::from_millis(300));
        for _ in 0..200 {
            e.sample(Time(0), Dur::from_millis(100));
        }
        // Variance decays to ~0; the 200 ms floor holds the RTO at SRTT + 200 ms.
        assert_eq!(e.rto(), Dur::from_millis(300));
        e.sample(Time(0), Dur::from_millis(20));
        assert_eq!(e.min_rtt(), Some(Dur::from_millis(20)));
        // SRTT = 7/8·100 + 1/8·20 = 90 ms.
        assert_eq!(e.srtt(), Some(Dur::from_millis(90)));
    }

    #[test]
    fn ns3_rto_is_floored_as_a_whole_at_one_second() {
        // ns-3 `EstimateRtt`: RTO = max(SRTT + max(1 ms, 4·RTTVAR), MinRto = 1 s).
        let mut e = RttEstimator::new(&TcpRules::NS3);
        e.sample(Time(0), Dur::from_millis(100));
        // 100 + max(1, 200) = 300 ms, below the 1 s floor.
        assert_eq!(e.rto(), Dur::from_secs(1));
        let mut big = RttEstimator::new(&TcpRules::NS3);
        big.sample(Time(0), Dur::from_millis(900));
        // 900 + 1800 = 2.7 s (Linux would give the same here: the floor is on the variance).
        assert_eq!(big.rto(), Dur::from_millis(2700));
        for _ in 0..300 {
            big.sample(Time(0), Dur::from_millis(1200));
        }
        // RTTVAR decays to 0: 1.2 s + max(1 ms, ~0) ≈ 1.201 s; Linux gives 1.4 s.
        assert!(big.rto() >= Dur::from_millis(1200) && big.rto() <= Dur::from_millis(1202));
        assert_eq!(big.rto_max(), Dur::from_secs(60));
    }

    #[test]
    fn min_rtt_expires_after_the_window() {
        let mut e = RttEstimator::default();
        e.sample(Time(0), Dur::from_millis(10));
        e.sample(Time(0) + Dur::from_secs(1), Dur::from_millis(50));
        assert_eq!(e.min_rtt(), Some(Dur::from_millis(10)));
        e.sample(Time(0) + Dur::from_secs(301), Dur::from_millis(50));
        assert_eq!(e.min_rtt(), Some(Dur::from_millis(50)));
    }
}
