//! RTT estimation of RFC 9002 §5.
//!
//! Contract: [`RttEstimator::update`] takes one sample (`latest_rtt`, the time from sending the
//! largest newly acknowledged packet to receiving its ACK) and the peer's reported ACK Delay;
//! `min_rtt` is the minimum over the connection's samples, unadjusted (§5.2); the ACK delay is
//! capped at max_ack_delay and subtracted only when the result stays at or above `min_rtt`
//! (§5.3); the first sample sets `smoothed_rtt = latest`, `rttvar = latest / 2`, later ones
//! use the EWMA weights 1/8 and 1/4 (§5.3). Before any sample, `smoothed_rtt` is the initial
//! RTT and `rttvar` half of it (§6.2.2; quicly `quicly_loss_init`).

use cclab_cc::Dur;

/// Timer granularity, kGranularity (RFC 9002 §6.1.2: 1 ms; quicly `QUICLY_DEFAULT_MIN_PTO`).
pub const GRANULARITY: Dur = Dur::from_millis(1);

/// The RTT state of a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RttEstimator {
    /// Most recent sample.
    pub latest: Dur,
    /// Smoothed RTT.
    pub smoothed: Dur,
    /// RTT variation.
    pub var: Dur,
    /// Minimum RTT seen (`None` before the first sample).
    pub min: Option<Dur>,
    /// Whether a sample was taken.
    pub has_sample: bool,
}

impl RttEstimator {
    /// Before the first sample (RFC 9002 §6.2.2).
    #[must_use]
    pub fn new(initial_rtt: Dur) -> Self {
        RttEstimator {
            latest: Dur::ZERO,
            smoothed: initial_rtt,
            var: Dur(initial_rtt.0 / 2),
            min: None,
            has_sample: false,
        }
    }

    /// Take a sample (RFC 9002 §5.3). The handshake is confirmed from the start in this model
    /// (1-RTT only), so the ACK delay is always capped at `max_ack_delay`.
    pub fn update(&mut self, latest: Dur, ack_delay: Dur, max_ack_delay: Dur) {
        self.latest = latest;
        if !self.has_sample {
            self.has_sample = true;
            self.min = Some(latest);
            self.smoothed = latest;
            self.var = Dur(latest.0 / 2);
            return;
        }
        let min = self.min.map_or(latest, |m| m.min(latest));
        self.min = Some(min);
        let ack_delay = ack_delay.min(max_ack_delay);
        let adjusted = if latest >= min + ack_delay {
            latest - ack_delay
        } else {
            latest
        };
        let dev = self.smoothed.0.abs_diff(adjusted.0);
        self.var = Dur((3 * self.var.0 + dev) / 4);
        self.smoothed = Dur((7 * self.smoothed.0 + adjusted.0) / 8);
    }

    /// The PTO period before backoff (RFC 9002 §6.2.1):
    /// `smoothed_rtt + max(4·rttvar, kGranularity) + max_ack_delay`.
    #[must_use]
    pub fn pto_base(&self, max_ack_delay: Dur) -> Dur {
        self.smoothed + Dur((4 * self.var.0).max(GRANULARITY.0)) + max_ack_delay
    }

    /// The time threshold of loss detection (RFC 9002 §6.1.2):
    /// `max(9/8 · max(smoothed_rtt, latest_rtt), kGranularity)`.
    #[must_use]
    pub fn loss_delay(&self) -> Dur {
        let r = self.smoothed.max(self.latest).0;
        Dur((r + r / 8).max(GRANULARITY.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Dur {
        Dur::from_millis(n)
    }

    /// RFC 9002 §5.3: the first sample sets srtt and rttvar = sample/2; the ACK delay is
    /// subtracted only if that keeps the adjusted sample at or above min_rtt, and is capped at
    /// max_ack_delay.
    #[test]
    fn ack_delay_is_subtracted_only_above_min_rtt_and_capped() {
        let mut r = RttEstimator::new(ms(66));
        assert_eq!((r.smoothed, r.var), (ms(66), ms(33)));
        r.update(ms(100), ms(10), ms(25));
        assert_eq!((r.smoothed, r.var, r.min), (ms(100), ms(50), Some(ms(100))));
        // 140 − 30 would undercut nothing, but the delay is capped at 25: adjusted = 115.
        r.update(ms(140), ms(30), ms(25));
        assert_eq!(r.smoothed, Dur((7 * ms(100).0 + ms(115).0) / 8));
        assert_eq!(r.var, Dur((3 * ms(50).0 + ms(15).0) / 4));
        // 105 − 10 = 95 < min_rtt 100: not adjusted.
        let before = r;
        r.update(ms(105), ms(10), ms(25));
        assert_eq!(
            r.smoothed,
            Dur((7 * before.smoothed.0 + ms(105).0) / 8),
            "the ACK delay must not push the sample below min_rtt"
        );
        // min_rtt is the raw minimum, never adjusted by the ACK delay (§5.2).
        r.update(ms(90), ms(20), ms(25));
        assert_eq!(r.min, Some(ms(90)));
    }

    /// The PTO period and loss delay follow their formulas, with kGranularity as the floor.
    #[test]
    fn pto_and_loss_delay_formulas() {
        let mut r = RttEstimator::new(ms(66));
        r.update(ms(80), Dur::ZERO, ms(25));
        // srtt 80, rttvar 40: 80 + 160 + 25.
        assert_eq!(r.pto_base(ms(25)), ms(265));
        assert_eq!(r.loss_delay(), ms(90));
        // A tiny RTT: both floors are the 1 ms granularity.
        let mut t = RttEstimator::new(ms(66));
        t.update(Dur::from_micros(100), Dur::ZERO, Dur::ZERO);
        assert_eq!(t.loss_delay(), GRANULARITY);
        assert_eq!(t.pto_base(Dur::ZERO), Dur::from_micros(100) + GRANULARITY);
    }
}
