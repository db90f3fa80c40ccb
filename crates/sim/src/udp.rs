//! UDP cross traffic: sources without congestion control that send on a schedule of their own.
//!
//! Contract: a [`UdpSource`] is a sans-IO generator of send times. [`UdpSource::first`] gives the
//! time of the first packet and [`UdpSource::next`], called at the send time of the packet just
//! sent, the time of the one after; both return `None` once the source is done (at or after
//! `stop`, which no packet reaches). It never reads a clock; its only randomness is the stream
//! it is built with (the engine derives it from the scenario seed and `rng::UDP + index`). Three
//! patterns, all with fixed-size packets of `size` wire bytes:
//!
//! - **CBR** at `rate`: packet `k` leaves `⌊k·size·8/rate⌋` (in ns) after `start`, computed from
//!   `k` so rounding never accumulates: exactly `⌈(stop − start)·rate/(8·size)⌉` packets fall in
//!   `[start, stop)` up to one nanosecond of rounding (iperf3 `-u -b`, ns-2 `CBR_Traffic`).
//! - **On/off**: an on period (fixed length `on`, or exponential with mean `on`) sends CBR at
//!   `rate` from its beginning, packet `k` of the burst `⌊k·size·8/rate⌋` after it, as long as
//!   that is before the period ends; an off period (fixed or exponential with mean `off`)
//!   follows, and so on, starting with an on period at `start`. The long-run mean rate is
//!   `E[⌈T_on/g⌉]·size·8 / (E[T_on] + E[T_off])` with `g` the gap at `rate`; for on periods long
//!   against `g` it is `rate·on/(on + off)` (the exponential on/off source of ns-2,
//!   `EXPOO_Traffic`, draws its bursts in packets instead; here they are times).
//! - **Poisson** at mean `rate`: gaps are exponential with mean `size·8/rate` (inversion of a
//!   uniform draw, rounded to the nanosecond), so arrivals form a Poisson process (ns-2's
//!   `POO`/exponential traffic with zero off time; RFC 2330 §11.1.1 Poisson sampling).

use cclab_cc::num::{f64_to_u64, u64_to_f64};
use cclab_cc::{Dur, Time};
use rand_chacha::ChaCha8Rng;

use crate::ids::NodeId;
use crate::packet::Ecn;
use crate::rng;

/// Length distribution of on/off periods.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Periods {
    /// Every period has its mean length.
    Fixed,
    /// Lengths are exponential with the given mean (ns-2 `EXPOO_Traffic`).
    #[default]
    Exponential,
}

impl Periods {
    /// Lower-case name used in outputs (`fixed`, `exponential`).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Periods::Fixed => "fixed",
            Periods::Exponential => "exponential",
        }
    }
}

/// When a UDP source sends.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum UdpPattern {
    /// Constant bit rate.
    Cbr {
        /// Rate, bit/s (wire bytes).
        rate_bps: u64,
    },
    /// Bursts at `rate_bps` during on periods, silence during off periods.
    OnOff {
        /// Rate while on, bit/s.
        rate_bps: u64,
        /// Mean on period.
        on: Dur,
        /// Mean off period.
        off: Dur,
        /// Fixed or exponential period lengths.
        periods: Periods,
    },
    /// Exponential gaps at a mean rate.
    Poisson {
        /// Mean rate, bit/s.
        rate_bps: u64,
    },
}

impl UdpPattern {
    /// Lower-case name used in outputs (`cbr`, `onoff`, `poisson`).
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            UdpPattern::Cbr { .. } => "cbr",
            UdpPattern::OnOff { .. } => "onoff",
            UdpPattern::Poisson { .. } => "poisson",
        }
    }

    /// The rate (CBR, Poisson) or the rate while on (on/off), bit/s.
    #[must_use]
    pub fn rate_bps(&self) -> u64 {
        match *self {
            UdpPattern::Cbr { rate_bps }
            | UdpPattern::OnOff { rate_bps, .. }
            | UdpPattern::Poisson { rate_bps } => rate_bps,
        }
    }
}

/// A UDP source from `src` to `dst`.
#[derive(Clone, Debug, PartialEq)]
pub struct UdpConfig {
    /// Name used in outputs.
    pub name: String,
    /// Sending host.
    pub src: NodeId,
    /// Receiving host.
    pub dst: NodeId,
    /// When it sends.
    pub pattern: UdpPattern,
    /// Wire size of each packet (IP packet), bytes.
    pub size: u32,
    /// DSCP code point of its packets (RFC 2474; 0 = best effort).
    pub dscp: u8,
    /// ECN codepoint of its packets (RFC 3168 §5; Not-ECT by default). A UDP source has no
    /// feedback loop: a CE mark is counted at the receiver, nothing reacts to it.
    pub ecn: Ecn,
    /// First packet.
    pub start: Time,
    /// No packet at or after this time (`None` = until the end of the run).
    pub stop: Option<Time>,
}

impl UdpConfig {
    /// A CBR source of `size`-byte packets at `rate_bps` from time 0, best effort, Not-ECT.
    #[must_use]
    pub fn cbr(name: &str, src: NodeId, dst: NodeId, rate_bps: u64, size: u32) -> Self {
        UdpConfig {
            name: name.to_owned(),
            src,
            dst,
            pattern: UdpPattern::Cbr { rate_bps },
            size,
            dscp: 0,
            ecn: Ecn::NotEct,
            start: Time::ZERO,
            stop: None,
        }
    }

    /// Check the values; the message names the field and the valid range.
    ///
    /// # Errors
    /// A description of the first invalid value.
    pub fn validate(&self) -> Result<(), String> {
        if self.pattern.rate_bps() == 0 {
            return Err("rate must be positive".into());
        }
        if self.size == 0 {
            return Err("size must be positive".into());
        }
        if self.dscp > 63 {
            return Err(format!(
                "dscp must be within 0..=63 (6 bits, RFC 2474), got {}",
                self.dscp
            ));
        }
        if let UdpPattern::OnOff { on, off, .. } = self.pattern
            && (on == Dur::ZERO || off == Dur::ZERO)
        {
            return Err("on and off periods must be positive".into());
        }
        if self.stop.is_some_and(|s| s <= self.start) {
            return Err("stop must be after start".into());
        }
        Ok(())
    }
}

/// Offset of packet `k` of a burst at `rate_bps`: `⌊k·bits·10⁹/rate⌋` ns.
fn cbr_offset(k: u64, bits: u64, rate_bps: u64) -> Dur {
    let ns = u128::from(k) * u128::from(bits) * 1_000_000_000 / u128::from(rate_bps.max(1));
    Dur(u64::try_from(ns).unwrap_or(u64::MAX))
}

/// An exponential draw with mean `mean_ns`, rounded to the nanosecond (inversion:
/// `−mean·ln(1 − U)`, `U` uniform in [0, 1)).
fn exp_draw(rng: &mut ChaCha8Rng, mean_ns: f64) -> Dur {
    let u = rng::unit_f64(rng);
    Dur(f64_to_u64((-(1.0 - u).ln() * mean_ns).round()))
}

/// The send schedule of one UDP source (see the module documentation).
#[derive(Clone, Debug)]
pub struct UdpSource {
    pattern: UdpPattern,
    /// Bits per packet.
    bits: u64,
    start: Time,
    stop: Time,
    rng: ChaCha8Rng,
    /// Start of the current burst (CBR: `start`).
    burst: Time,
    /// End of the current on period (CBR, Poisson: never).
    burst_end: Time,
    /// Index of the next packet in the current burst.
    k: u64,
}

impl UdpSource {
    /// The schedule of `cfg`, drawing from `rng`.
    #[must_use]
    pub fn new(cfg: &UdpConfig, rng: ChaCha8Rng) -> Self {
        UdpSource {
            pattern: cfg.pattern,
            bits: u64::from(cfg.size) * 8,
            start: cfg.start,
            stop: cfg.stop.unwrap_or(Time::MAX),
            rng,
            burst: cfg.start,
            burst_end: Time::MAX,
            k: 0,
        }
    }

    fn before_stop(&self, t: Time) -> Option<Time> {
        (t < self.stop).then_some(t)
    }

    /// Draw one period of mean `mean`.
    fn period(&mut self, mean: Dur, periods: Periods) -> Dur {
        match periods {
            Periods::Fixed => mean,
            Periods::Exponential => exp_draw(&mut self.rng, u64_to_f64(mean.as_nanos())),
        }
    }

    /// Time of the first packet.
    pub fn first(&mut self) -> Option<Time> {
        match self.pattern {
            UdpPattern::Cbr { .. } | UdpPattern::Poisson { .. } => self.before_stop(self.start),
            UdpPattern::OnOff { on, periods, .. } => {
                self.burst = self.start;
                self.burst_end = self.start + self.period(on, periods);
                self.k = 0;
                self.next_in_bursts()
            }
        }
    }

    /// Time of the packet after the one sent at `now`.
    pub fn next(&mut self, now: Time) -> Option<Time> {
        match self.pattern {
            UdpPattern::Cbr { rate_bps } => {
                self.k += 1;
                self.before_stop(self.start + cbr_offset(self.k, self.bits, rate_bps))
            }
            UdpPattern::Poisson { rate_bps } => {
                let mean_ns = u64_to_f64(self.bits) * 1e9 / u64_to_f64(rate_bps);
                let gap = exp_draw(&mut self.rng, mean_ns);
                self.before_stop(now + gap)
            }
            UdpPattern::OnOff { .. } => {
                self.k += 1;
                self.next_in_bursts()
            }
        }
    }

    /// On/off: packet `k` of the current burst, or the first of a later burst.
    fn next_in_bursts(&mut self) -> Option<Time> {
        let UdpPattern::OnOff {
            rate_bps,
            on,
            off,
            periods,
        } = self.pattern
        else {
            unreachable!("only on/off sources have bursts")
        };
        loop {
            let t = self.burst + cbr_offset(self.k, self.bits, rate_bps);
            if t < self.burst_end {
                return self.before_stop(t);
            }
            if self.burst_end >= self.stop {
                return None;
            }
            let gap = self.period(off, periods);
            self.burst = self.burst_end + gap;
            self.burst_end = self.burst + self.period(on, periods);
            self.k = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn times(cfg: &UdpConfig, seed: u64) -> Vec<Time> {
        let mut s = UdpSource::new(cfg, rng::stream(seed, rng::UDP));
        let mut out = Vec::new();
        let mut next = s.first();
        while let Some(t) = next {
            out.push(t);
            next = s.next(t);
        }
        out
    }

    fn source(pattern: UdpPattern, size: u32, stop_s: u64) -> UdpConfig {
        UdpConfig {
            pattern,
            stop: Some(Time(Dur::from_secs(stop_s).as_nanos())),
            ..UdpConfig::cbr("u", NodeId(0), NodeId(1), 1, size)
        }
    }

    /// CBR sends rate·time/(8·size) packets: 10 Mbit/s of 1250-byte packets (10 000 bits) is
    /// 1000 packets per second, so 10 s hold 10 000 packets; an awkward rate (7 Mbit/s of
    /// 1337-byte packets: 654.45 per second) gives ⌈6544.5⌉ = 6545 over 10 s. Gaps stay within
    /// one nanosecond of the exact gap (no accumulated rounding).
    #[test]
    fn cbr_sends_rate_times_time_over_size() {
        for (rate, size, want) in [(10_000_000u64, 1250u32, 10_000u64), (7_000_000, 1337, 6545)] {
            let cfg = source(UdpPattern::Cbr { rate_bps: rate }, size, 10);
            let t = times(&cfg, 1);
            let exact = 10.0 * u64_to_f64(rate) / (8.0 * f64::from(size));
            assert!(
                (u64_to_f64(t.len() as u64) - exact).abs() <= 1.0,
                "{} packets, theory {exact}",
                t.len()
            );
            assert_eq!(t.len() as u64, want);
            let gap = u64_to_f64(u64::from(size) * 8) * 1e9 / u64_to_f64(rate);
            for w in t.windows(2) {
                let g = u64_to_f64((w[1] - w[0]).as_nanos());
                assert!((g - gap).abs() <= 1.0, "gap {g} vs {gap}");
            }
        }
    }

    /// Poisson at 12 Mbit/s of 1500-byte packets: λ = 1000 packets/s. Over T = 50 s the count
    /// N is Poisson(λT = 50 000), standard deviation √50 000 ≈ 224; 5σ = 1118. The gaps are
    /// exponential, coefficient of variation 1; the sample standard deviation of n ≈ 50 000
    /// exponential gaps has relative standard error √((μ₄/σ⁴ − 1)/4n) = √(8/4n) = √(2/n) ≈
    /// 0.0063 (μ₄ = 9σ⁴ for the exponential), so 5σ ≈ 0.032. Two seeds give different
    /// schedules.
    #[test]
    fn poisson_rate_and_cv() {
        let cfg = source(
            UdpPattern::Poisson {
                rate_bps: 12_000_000,
            },
            1500,
            50,
        );
        for seed in [1, 2, 3] {
            let t = times(&cfg, seed);
            let n = u64_to_f64(t.len() as u64);
            assert!((n - 50_000.0).abs() < 5.0 * 50_000f64.sqrt(), "{n} packets");
            let gaps: Vec<f64> = t
                .windows(2)
                .map(|w| u64_to_f64((w[1] - w[0]).as_nanos()))
                .collect();
            let m = gaps.iter().sum::<f64>() / u64_to_f64(gaps.len() as u64);
            let var = gaps.iter().map(|g| (g - m) * (g - m)).sum::<f64>()
                / u64_to_f64(gaps.len() as u64 - 1);
            let cv = var.sqrt() / m;
            let tol = 5.0 * (2.0 / n).sqrt();
            eprintln!("poisson seed {seed}: {n} packets (theory 50000 ± 224), cv {cv} ± {tol}");
            assert!((cv - 1.0).abs() < tol, "cv {cv}, tolerance {tol}");
        }
        assert_ne!(times(&cfg, 1), times(&cfg, 2));
        assert_eq!(times(&cfg, 1), times(&cfg, 1));
    }

    /// Fixed on/off: 100 ms on at 10 Mbit/s of 1250-byte packets (1 ms gap: exactly 100
    /// packets per burst), 300 ms off: every 400 ms cycle sends 100 packets, so 20 s send
    /// exactly 50 cycles · 100 = 5000 packets = rate·on/(on + off)·T/(8·size).
    #[test]
    fn fixed_on_off_sends_its_duty_cycle_exactly() {
        let cfg = source(
            UdpPattern::OnOff {
                rate_bps: 10_000_000,
                on: Dur::from_millis(100),
                off: Dur::from_millis(300),
                periods: Periods::Fixed,
            },
            1250,
            20,
        );
        let t = times(&cfg, 1);
        assert_eq!(t.len(), 5000);
        // The first burst is [0, 100 ms), the next starts at 400 ms.
        assert_eq!(t[99], Time(Dur::from_millis(99).as_nanos()));
        assert_eq!(t[100], Time(Dur::from_millis(400).as_nanos()));
    }

    /// Exponential on/off, means on = 50 ms, off = 150 ms, 10 Mbit/s of 1250-byte packets
    /// (gap g = 1 ms) over T = 400 s. Renewal-reward: the packets of a burst are
    /// R = ⌈T_on/g⌉, E[R] = 1/(1 − e^(−g/on)) = 50.50 (geometric), against on/g = 50 in
    /// `rate·on/(on + off)`: the exact mean rate is E[R]/(on + off) = 252.5 packets/s, so N ≈
    /// 101 000 over 400 s. CLT for renewal-reward processes: Var N ≈ (T/E[C])·Var(R − λC), C
    /// the cycle; with R = T_on/g + D (D = ⌈x⌉ − x in [0, 1), standard deviation ≤ 1/2) and
    /// exponential T_on, T_off (variance = mean²), σ(R − λC) ≤ √((1/g − λ)²·on² + λ²·off²) +
    /// 1/2 = √((0.7475·50)² + (0.2525·150)²) + 0.5 ≈ 53.7, so σ_N ≈ √(2000)·53.7 ≈ 2400;
    /// 5σ ≈ 12 000 (12 % of N). Seeds are checked together, so the mean of 5 runs has a 5σ band
    /// of 5·2400/√5 ≈ 5400, and it must also lie within 5σ of rate·on/(on + off)·T/(8·size) =
    /// 100 000 (the approximation differs by 1 %).
    #[test]
    fn exponential_on_off_mean_rate_matches_renewal_theory() {
        let cfg = source(
            UdpPattern::OnOff {
                rate_bps: 10_000_000,
                on: Dur::from_millis(50),
                off: Dur::from_millis(150),
                periods: Periods::Exponential,
            },
            1250,
            400,
        );
        let counts: Vec<f64> = (1..=5)
            .map(|seed| u64_to_f64(times(&cfg, seed).len() as u64))
            .collect();
        let er = 1.0 / (1.0 - (-1.0f64 / 50.0).exp());
        let exact = er / 0.2 * 400.0;
        let lambda = er / 200.0; // packets per ms
        let sd_cycle = (((1.0 - lambda) * 50.0).powi(2) + (lambda * 150.0).powi(2)).sqrt() + 0.5;
        let sigma = (400_000.0f64 / 200.0).sqrt() * sd_cycle;
        for &n in &counts {
            assert!((n - exact).abs() < 5.0 * sigma, "{n} vs {exact} ± {sigma}");
        }
        let mean = counts.iter().sum::<f64>() / 5.0;
        let band = 5.0 * sigma / 5f64.sqrt();
        eprintln!("on/off counts {counts:?}, renewal theory {exact} ± {sigma} (1σ)");
        assert!(
            (mean - exact).abs() < band,
            "mean {mean} vs {exact} ± {band}"
        );
        assert!(
            (mean - 100_000.0).abs() < band,
            "mean {mean} vs duty-cycle 100000"
        );
    }

    #[test]
    fn no_packet_at_or_after_stop_and_none_before_start() {
        let mut cfg = source(UdpPattern::Cbr { rate_bps: 8_000 }, 1, 1);
        cfg.start = Time(500_000_000);
        let t = times(&cfg, 1);
        // 1000 packets/s over [0.5 s, 1 s): 500.
        assert_eq!(t.len(), 500);
        assert_eq!(t[0], cfg.start);
        assert!(t.iter().all(|&x| x < Time(1_000_000_000)));
    }

    #[test]
    fn invalid_configs_are_named() {
        let mut c = UdpConfig::cbr("u", NodeId(0), NodeId(1), 0, 100);
        assert!(c.validate().unwrap_err().contains("rate"));
        c.pattern = UdpPattern::Cbr { rate_bps: 1 };
        c.dscp = 64;
        assert!(c.validate().unwrap_err().contains("dscp"));
        c.dscp = 46;
        c.pattern = UdpPattern::OnOff {
            rate_bps: 1,
            on: Dur::ZERO,
            off: Dur(1),
            periods: Periods::Fixed,
        };
        assert!(c.validate().unwrap_err().contains("on and off"));
    }
}
