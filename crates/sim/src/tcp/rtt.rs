//! RTT estimation: RFC 6298 smoothed RTT and RTO with Linux's bounds, and a windowed minimum.
//!
//! Contract: feed every Karn-safe RTT sample to [`RttEstimator::sample`]; read `srtt`, `rto`
//! and `min_rtt`. Constants: α = 1/8, β = 1/4, K = 4 (RFC 6298 §2); initial RTO 1 s (RFC 6298
//! §2.1, Linux `TCP_TIMEOUT_INIT`); minimum 200 ms (Linux `TCP_RTO_MIN`, applied to the variance
//! term as Linux `tcp_set_rto` does: RTO = SRTT + max(4·RTTVAR, 200 ms)); maximum 120 s (Linux
//! `TCP_RTO_MAX`). The minimum RTT is kept over a 300 s window (Linux `sysctl_tcp_min_rtt_wlen`).

use cclab_cc::{Dur, Time};

/// Linux `TCP_RTO_MIN`.
pub const RTO_MIN: Dur = Dur::from_millis(200);
/// Linux `TCP_RTO_MAX`.
pub const RTO_MAX: Dur = Dur::from_secs(120);
/// RFC 6298 §2.1 / Linux `TCP_TIMEOUT_INIT`.
pub const RTO_INIT: Dur = Dur::from_secs(1);
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
}

impl Default for RttEstimator {
    fn default() -> Self {
        RttEstimator {
            srtt: None,
            rttvar: Dur::ZERO,
            rto: RTO_INIT,
            min_rtt: None,
            latest: None,
        }
    }
}

impl RttEstimator {
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
        self.rto = (srtt + Dur(4 * self.rttvar.0).max(RTO_MIN)).min(RTO_MAX);
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
    fn min_rtt_expires_after_the_window() {
        let mut e = RttEstimator::default();
        e.sample(Time(0), Dur::from_millis(10));
        e.sample(Time(0) + Dur::from_secs(1), Dur::from_millis(50));
        assert_eq!(e.min_rtt(), Some(Dur::from_millis(10)));
        e.sample(Time(0) + Dur::from_secs(301), Dur::from_millis(50));
        assert_eq!(e.min_rtt(), Some(Dur::from_millis(50)));
    }
}
