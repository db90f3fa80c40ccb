//! Synthetic mahimahi link traces: the generator of the traces shipped under `traces/`.
//!
//! Contract: each function returns the text of a trace (one delivery opportunity per line, its
//! time in whole milliseconds, non-decreasing, the last positive; see
//! `cclab_sim::net::rate::trace`), the same text for the same arguments on every platform
//! (random draws come from a ChaCha8 stream seeded with `seed`, [`cclab_sim::rng::stream`]).
//! An opportunity carries 1500 bytes, so `r` bit/s is `r / 12,000` opportunities per second.
//! [`SHIPPED`] lists the shipped files with the call that made each; a test checks that they
//! are unchanged (`CCLAB_WRITE_TRACES=1` writes them again).

use std::fmt::Write as _;

use cclab_sim::rng;

/// Bits one opportunity carries (1500 bytes).
const OPPORTUNITY_BITS: f64 = 12_000.0;

/// `rate_bps` as evenly spaced opportunities over `period_ms`: opportunity `k` (1-based) at
/// `floor(k · period / n)` ms, `n = rate · period / 12,000` (a whole number for the rates
/// used), so the mean over the period is exactly the rate.
#[must_use]
pub fn constant(rate_bps: u64, period_ms: u64) -> String {
    let n = rate_bps * period_ms / 12_000_000;
    let mut s = String::new();
    for k in 1..=n {
        let _ = writeln!(s, "{}", k * period_ms / n);
    }
    s
}

/// A Poisson process of opportunities at `rate_bps` on average over `period_ms`: exponential
/// gaps of mean 12,000 / rate seconds, each time rounded up to the millisecond (so none is at
/// 0), the last opportunity placed at `period_ms` so that the trace loops with that period.
/// Pantheon's calibrated emulators use such traces at 0.57, 2.64 and 3.04 Mbit/s (Yan et al.,
/// USENIX ATC 2018, calibrated scenarios 1–3).
#[must_use]
pub fn poisson(rate_bps: u64, period_ms: u64, seed: u64) -> String {
    let mut r = rng::stream(seed, 0);
    #[expect(clippy::cast_precision_loss, reason = "a rate below 2^53 bit/s")]
    let per_ms = rate_bps as f64 / OPPORTUNITY_BITS / 1000.0;
    let mut t = 0.0;
    let mut s = String::new();
    #[expect(clippy::cast_precision_loss, reason = "a period below 2^53 ms")]
    let end = period_ms as f64;
    loop {
        t += -(1.0 - rng::unit_f64(&mut r)).ln() / per_ms;
        if t >= end {
            break;
        }
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "0 < t < period"
        )]
        let ms = t.ceil() as u64;
        let _ = writeln!(s, "{ms}");
    }
    let _ = writeln!(s, "{period_ms}");
    s
}

/// A cellular-like on/off link: alternating on and off periods with exponential durations of
/// means `on_ms` and `off_ms` (the two-state outage model of mahimahi's `mm-onoff`), a Poisson
/// process of opportunities at `rate_bps` during the on periods and none during the off
/// ones, over `period_ms` (the last line at `period_ms`).
#[must_use]
pub fn on_off(rate_bps: u64, on_ms: f64, off_ms: f64, period_ms: u64, seed: u64) -> String {
    let mut r = rng::stream(seed, 0);
    #[expect(clippy::cast_precision_loss, reason = "a rate below 2^53 bit/s")]
    let per_ms = rate_bps as f64 / OPPORTUNITY_BITS / 1000.0;
    #[expect(clippy::cast_precision_loss, reason = "a period below 2^53 ms")]
    let end = period_ms as f64;
    let mut exp = |mean: f64| -(1.0 - rng::unit_f64(&mut r)).ln() * mean;
    let mut s = String::new();
    let mut t = 0.0;
    let mut on_until = exp(on_ms);
    loop {
        t += exp(1.0 / per_ms);
        if t >= on_until {
            // Off, then on again: the next opportunity comes after the off period.
            t = on_until + exp(off_ms);
            on_until = t + exp(on_ms);
            continue;
        }
        if t >= end {
            break;
        }
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "0 < t < period"
        )]
        let ms = t.ceil() as u64;
        let _ = writeln!(s, "{ms}");
    }
    let _ = writeln!(s, "{period_ms}");
    s
}

/// A shipped trace: its file name under `traces/` and its text.
pub type Shipped = (&'static str, fn() -> String);

/// The traces shipped under `traces/`, with how each is made.
pub const SHIPPED: &[Shipped] = &[
    ("constant-12mbit.trace", || constant(12_000_000, 100)),
    ("poisson-0.57mbit.trace", || poisson(570_000, 5_000, 1)),
    ("poisson-2.64mbit.trace", || poisson(2_640_000, 5_000, 2)),
    ("poisson-3.04mbit.trace", || poisson(3_040_000, 5_000, 3)),
    ("onoff-cellular.trace", || {
        on_off(3_600_000, 2_000.0, 500.0, 6_000, 4)
    }),
];

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_sim::net::rate::Trace;

    /// The shipped files are what the generator makes (write them again with
    /// `CCLAB_WRITE_TRACES=1`), each a valid trace of a few kB.
    #[test]
    fn shipped_traces_are_the_generator_output() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../traces");
        for (name, make) in SHIPPED {
            let text = make();
            let path = dir.join(name);
            if std::env::var_os("CCLAB_WRITE_TRACES").is_some() {
                std::fs::write(&path, &text).unwrap();
            }
            let shipped = std::fs::read_to_string(&path).unwrap_or_default();
            assert!(shipped == text, "{name} differs from its generator");
            assert!(text.len() < 16_000, "{name}: {} bytes", text.len());
            Trace::parse(&text).unwrap();
        }
    }

    /// The means: exact for the constant trace; a Poisson count with mean n has σ = √n, so
    /// the realised count is within 4σ of the target count.
    #[test]
    fn means_match_the_targets() {
        let t = Trace::parse(&constant(12_000_000, 100)).unwrap();
        assert_eq!(t.mean_bps(), 12_000_000);
        assert_eq!(t.timestamps().len(), 100);
        for (rate, seed) in [(570_000u64, 1), (2_640_000, 2), (3_040_000, 3)] {
            let t = Trace::parse(&poisson(rate, 5_000, seed)).unwrap();
            let n = cclab_cc::num::u64_to_f64(t.timestamps().len() as u64);
            let want = cclab_cc::num::u64_to_f64(rate) * 5.0 / OPPORTUNITY_BITS;
            assert!(
                (n - want).abs() < 4.0 * want.sqrt(),
                "{rate}: {n} vs {want}"
            );
            assert_eq!(t.period().as_millis_f64(), 5_000.0);
        }
        // On/off: on 2/(2+0.5) = 80 % of the time on average at 3.6 Mbit/s ≈ 2.88 Mbit/s;
        // over 6 s only a few on/off cycles happen, so only "some capacity, clearly below
        // the on rate, with gaps of at least 100 ms" is a claim the theory supports.
        let t = Trace::parse(&on_off(3_600_000, 2_000.0, 500.0, 6_000, 4)).unwrap();
        assert!(
            t.mean_bps() < 3_600_000 && t.mean_bps() > 1_000_000,
            "{}",
            t.mean_bps()
        );
        let gaps = t
            .timestamps()
            .windows(2)
            .filter(|w| w[1] - w[0] >= 100)
            .count();
        assert!(gaps >= 1, "no outage");
    }
}
