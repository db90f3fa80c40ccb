//! A token-bucket policer, as `tc … action police rate R burst B` (Linux `net/sched/act_police.c`,
//! `tcf_police_act`): packets within the rate pass at once, packets above it are dropped.
//!
//! Contract: the bucket holds at most `burst` bytes of tokens and starts full
//! (`tcf_police_init` sets the tokens to the burst). Tokens accrue at `rate` bit/s, counted
//! exactly in bit·ns (integers, no rounding drift). A packet of `s` bytes arriving at `now`
//! conforms when the bucket holds at least `s` bytes: it passes and takes them; otherwise it is
//! dropped and takes nothing (tc-police(8) `conform-exceed drop`). Over a long run with more
//! offered than `rate`, what passes is `rate · T + burst` at most and within one packet of it:
//! the long-run throughput is the rate. A packet larger than `burst` never passes.

use cclab_cc::Time;

use super::{Element, NetPacket, Output};

/// Nanoseconds per second: tokens are kept in bit·ns so that `rate · Δt` is exact.
const NS: u128 = 1_000_000_000;

/// A token-bucket policer.
#[derive(Debug)]
pub struct Policer {
    rate_bps: u64,
    /// Bucket size, bit·ns.
    cap: u128,
    /// Tokens, bit·ns.
    tokens: u128,
    last: Time,
    /// Packets dropped.
    pub dropped: u64,
    /// Packets passed.
    pub passed: u64,
}

impl Policer {
    /// A policer at `rate_bps` (positive) with a bucket of `burst_bytes`, full at time 0.
    #[must_use]
    pub fn new(rate_bps: u64, burst_bytes: u64) -> Self {
        let cap = u128::from(burst_bytes) * 8 * NS;
        Policer {
            rate_bps,
            cap,
            tokens: cap,
            last: Time::ZERO,
            dropped: 0,
            passed: 0,
        }
    }
}

/// Refill `tokens` (bit·ns) at `rate_bps` from `last` to `now`, up to `cap`.
#[inline]
pub(super) fn refill(tokens: &mut u128, cap: u128, rate_bps: u64, last: &mut Time, now: Time) {
    let dt = now.0.saturating_sub(last.0);
    *tokens = (*tokens + u128::from(rate_bps) * u128::from(dt)).min(cap);
    *last = (*last).max(now);
}

impl<P: NetPacket> Element<P> for Policer {
    fn process(&mut self, now: Time, pkt: Option<P>) -> Output<P> {
        let Some(p) = pkt else {
            return Output::Idle;
        };
        refill(
            &mut self.tokens,
            self.cap,
            self.rate_bps,
            &mut self.last,
            now,
        );
        let need = u128::from(p.wire_bytes()) * 8 * NS;
        if self.tokens >= need {
            self.tokens -= need;
            self.passed += 1;
            Output::Packet(p)
        } else {
            self.dropped += 1;
            Output::Idle
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::test_packet;

    /// 1500-byte packets offered at 20 Mbit/s (one every 0.6 ms) to a 12 Mbit/s policer with
    /// a 15 kB bucket for 100 s: what passes is at most rate · T + burst and at least that less
    /// one packet, so the long-run throughput is the rate within 1 % (here within 0.01 %).
    #[test]
    fn long_run_throughput_is_the_rate() {
        let mut p = Policer::new(12_000_000, 15_000);
        let mut bytes = 0u64;
        let n = 100_000_000_000 / 600_000;
        for i in 0..n {
            if let Output::Packet(_) = p.process(Time(i * 600_000), Some(test_packet(i, 0))) {
                bytes += 1500;
            }
        }
        let t = (n - 1) * 600_000;
        let most = 12_000_000 * t / 8_000_000_000 + 15_000;
        assert!(bytes <= most && bytes + 1500 >= most, "{bytes} vs {most}");
        let ratio = u64_ratio(bytes * 8, 12_000_000 * t / 1_000_000_000);
        assert!((ratio - 1.0).abs() < 0.01, "{ratio}");
        assert_eq!(p.passed + p.dropped, n);
    }

    /// A burst of back-to-back packets: exactly `burst / size` pass, then one per refill.
    #[test]
    fn burst_passes_then_the_rate() {
        let mut p = Policer::new(12_000_000, 4_500);
        let out: Vec<bool> = (0..5)
            .map(|i| {
                matches!(
                    p.process(Time::ZERO, Some(test_packet(i, 0))),
                    Output::Packet(_)
                )
            })
            .collect();
        assert_eq!(out, vec![true, true, true, false, false]);
        // 1500 bytes at 12 Mbit/s take 1 ms to accrue: not at 0.999999 ms, at 1 ms.
        assert!(matches!(
            p.process(Time(999_999), Some(test_packet(5, 0))),
            Output::Idle
        ));
        assert!(matches!(
            p.process(Time(1_000_000), Some(test_packet(6, 0))),
            Output::Packet(_)
        ));
    }

    fn u64_ratio(a: u64, b: u64) -> f64 {
        cclab_cc::num::u64_to_f64(a) / cclab_cc::num::u64_to_f64(b)
    }
}
