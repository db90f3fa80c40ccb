//! Jitter: a delay that varies per packet, with or without reordering.
//!
//! Contract: [`Jitter`] gives each packet arriving at `now` a random delay drawn from its own
//! stream (seeded from the scenario seed and the element's component id), in one of two forms
//! ([`JitterDist`]): `base + U[0, spread)` (one draw per packet, the element's original form),
//! or netem's `delay μ σ [ρ] distribution D` (`net/sched/sch_netem.c` `tabledist`): `μ + σ·X`,
//! `X` read from the distribution's table ([`super::dist`]) at a uniform draw that may be
//! correlated with the previous one (`get_crandom`, ρ = `correlation`), negative results
//! leaving at once (netem schedules them in the past). Netem's uniform is `U[μ − σ, μ + σ)`.
//!
//! With `reorder`, packets leave when their own delay is over, so a later packet may overtake an
//! earlier one (netem's behaviour with a jitter larger than the gap between packets); without,
//! a packet never leaves before the one ahead of it (it leaves right behind it). Packets wait in
//! a [`Line`] ordered by (leave time, arrival order), so equal leave times keep arrival
//! order, and the element asks to be called at the earliest leave time.

use std::collections::VecDeque;

use cclab_cc::{Dur, Time};
use rand_chacha::ChaCha8Rng;

use super::dist::{self, Correlated, Distribution};
use super::{Element, NetPacket, Output};
use crate::events::EventQueue;
use crate::rng;

/// Packets waiting for their leave times: in leave-time order (`reorder`), or never leaving
/// before a packet that came earlier (each leave time raised to the latest one given so far).
///
/// Packets stay in arrival order in a ring of slots; with `reorder` a min-heap of (leave time,
/// arrival number) keys, the engine's event queue (`events.rs`), says which slot leaves next (equal times leave in arrival order), and a
/// slot it empties out of order stays a hole until the ones before it have left. Without
/// `reorder` leave times never decrease, so the ring alone is the line.
#[derive(Debug)]
pub struct Line<P> {
    slots: VecDeque<Option<(Time, P)>>,
    /// Arrival number of `slots[0]`.
    head: u64,
    keys: EventQueue<u64>,
    last: Time,
    reorder: bool,
    len: usize,
}

impl<P: NetPacket> Line<P> {
    /// An empty line; `reorder`: a packet may leave before one that came earlier.
    #[must_use]
    pub fn new(reorder: bool) -> Self {
        Line {
            slots: VecDeque::new(),
            head: 0,
            keys: EventQueue::new(),
            last: Time::ZERO,
            reorder,
            len: 0,
        }
    }

    /// Hold `pkt` until `at` (later, without reordering, if an earlier packet leaves later);
    /// returns the leave time given.
    #[inline]
    pub fn push(&mut self, mut at: Time, pkt: P) -> Time {
        if self.reorder {
            let seq = self.head + self.slots.len() as u64;
            self.keys.push(at, seq);
        } else {
            at = at.max(self.last);
        }
        self.last = self.last.max(at);
        self.slots.push_back(Some((at, pkt)));
        self.len += 1;
        at
    }

    /// The next packet due at `now`, or when to call again.
    #[inline]
    pub fn pop(&mut self, now: Time) -> Output<P> {
        if !self.reorder {
            return match self.slots.front() {
                Some(&Some((at, _))) if at <= now => {
                    self.head += 1;
                    self.len -= 1;
                    let (_, p) = self.slots.pop_front().flatten().expect("head");
                    Output::Packet(p)
                }
                Some(&Some((at, _))) => Output::Wake(at),
                _ => Output::Idle,
            };
        }
        match self.keys.peek() {
            Some(e) if e.time() <= now => {
                self.keys.pop();
                #[expect(
                    clippy::cast_possible_truncation,
                    reason = "a held packet's slot index is below the number of slots"
                )]
                let slot = (e.ev - self.head) as usize;
                let (_, p) = self.slots[slot].take().expect("a key has its packet");
                while matches!(self.slots.front(), Some(None)) {
                    self.slots.pop_front();
                    self.head += 1;
                }
                self.len -= 1;
                Output::Packet(p)
            }
            Some(e) => Output::Wake(e.time()),
            None => Output::Idle,
        }
    }

    /// Packets held.
    #[must_use]
    pub fn len(&self) -> usize {
        self.len
    }

    /// No packet held.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Transport data segments held.
    #[must_use]
    pub fn held_data(&self) -> usize {
        self.slots
            .iter()
            .flatten()
            .filter(|(_, p)| p.is_data())
            .count()
    }
}

/// The delay a [`Jitter`] draws.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum JitterDist {
    /// `base + U[0, spread)`.
    Uniform {
        /// Smallest added delay.
        base: Dur,
        /// Width of the uniform part.
        spread: Dur,
    },
    /// netem's `delay mu sigma distribution`: `max(0, mu + sigma·X)`, `X` from `distribution`
    /// (uniform: `U[mu − sigma, mu + sigma)`).
    Netem {
        /// The distribution of `X`.
        distribution: Distribution,
        /// netem `delay TIME` (the centre).
        mu: Dur,
        /// netem `JITTER` (the scale of `X`).
        sigma: Dur,
    },
}

/// The random delays of a jitter, one per packet, from its own stream: the draw shared by the
/// [`Jitter`] element and a link's jitter (`LinkConfig::jitter`, `link.rs`).
#[derive(Debug)]
pub struct JitterDraw {
    dist: JitterDist,
    table: Option<&'static [i16; dist::TABLE_SIZE]>,
    rng: ChaCha8Rng,
    corr: Correlated,
}

impl JitterDraw {
    /// Delays drawn as `dist` says, successive uniforms correlated by `correlation` (in
    /// [0, 1]), from the stream of `component` in a run seeded with `seed`.
    #[must_use]
    pub fn new(dist: JitterDist, correlation: f64, seed: u64, component: u64) -> Self {
        let mut rng = rng::stream(seed, component);
        let corr = Correlated::new(correlation, &mut rng);
        let table = match dist {
            JitterDist::Netem { distribution, .. } => distribution.table(),
            JitterDist::Uniform { .. } => None,
        };
        JitterDraw {
            dist,
            table,
            rng,
            corr,
        }
    }

    /// The delay of the next packet.
    #[inline]
    #[expect(
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_possible_wrap,
        reason = "a uniform draw in [0, 1) times a spread is non-negative and below the spread; spreads are exact in f64 below 2^53 ns; delays below 100 s fit i64 nanoseconds"
    )]
    pub fn draw(&mut self) -> Dur {
        let u = self.corr.next(&mut self.rng);
        match self.dist {
            JitterDist::Uniform { base, spread } => base + Dur((u * spread.0 as f64) as u64),
            JitterDist::Netem { mu, sigma, .. } => {
                let (mu, sigma) = (mu.0 as i64, sigma.0 as i64);
                let d = match self.table {
                    Some(t) => dist::table_delay(mu, sigma, dist::pick(t, u)),
                    None => mu - sigma + (u * (2 * sigma) as f64) as i64,
                };
                Dur(d.max(0) as u64)
            }
        }
    }
}

impl JitterDist {
    /// The centre of the delays drawn: `base + spread / 2`, or netem's `mu` (what a delay series
    /// reports for a jitter).
    #[must_use]
    pub fn centre(&self) -> Dur {
        match *self {
            JitterDist::Uniform { base, spread } => base + Dur(spread.0 / 2),
            JitterDist::Netem { mu, .. } => mu,
        }
    }
}

/// A random delay per packet.
#[derive(Debug)]
pub struct Jitter<P> {
    draw: JitterDraw,
    line: Line<P>,
}

impl<P: NetPacket> Jitter<P> {
    /// Delay `base + U[0, spread)`; `reorder`: packets may overtake each other. Draws from the
    /// stream of `component` in a run seeded with `seed` (element `i` of a scenario:
    /// `rng::ELEMENT + i`).
    #[must_use]
    pub fn new(base: Dur, spread: Dur, reorder: bool, seed: u64, component: u64) -> Self {
        Self::with(
            JitterDist::Uniform { base, spread },
            0.0,
            reorder,
            seed,
            component,
        )
    }

    /// Delay drawn as `dist` says, successive uniforms correlated by `correlation` (in [0, 1]).
    #[must_use]
    pub fn with(
        dist: JitterDist,
        correlation: f64,
        reorder: bool,
        seed: u64,
        component: u64,
    ) -> Self {
        Jitter {
            draw: JitterDraw::new(dist, correlation, seed, component),
            line: Line::new(reorder),
        }
    }
}

impl<P: NetPacket> Element<P> for Jitter<P> {
    fn process(&mut self, now: Time, pkt: Option<P>) -> Output<P> {
        if let Some(p) = pkt {
            let d = self.draw.draw();
            self.line.push(now + d, p);
        }
        self.line.pop(now)
    }

    fn held(&self) -> usize {
        self.line.len()
    }

    fn held_data(&self) -> usize {
        self.line.held_data()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::test_packet;
    use crate::packet::Packet;

    const MS: u64 = 1_000_000;

    /// Drive `j` with 1,000 packets 1 ms apart and collect (leave time, seq) in leave order.
    fn drive(mut j: Jitter<Packet>) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        let mut wake: Option<Time> = None;
        let take =
            |j: &mut Jitter<Packet>, now: Time, pkt: Option<Packet>, out: &mut Vec<(u64, u64)>| {
                let mut r = j.process(now, pkt);
                loop {
                    match r {
                        Output::Packet(p) => out.push((now.0, p.data_segment().unwrap().1)),
                        Output::Wake(t) => return Some(t),
                        Output::Idle => return None,
                    }
                    r = j.process(now, None);
                }
            };
        for i in 0..1_000u64 {
            let now = Time(i * MS);
            while let Some(t) = wake.filter(|&t| t < now) {
                wake = take(&mut j, t, None, &mut out);
            }
            wake = take(&mut j, now, Some(test_packet(i, 0)), &mut out);
        }
        while let Some(t) = wake {
            wake = take(&mut j, t, None, &mut out);
        }
        out
    }

    /// 10 ms + U[0, 5 ms) on packets 1 ms apart: every packet leaves once, 10–15 ms after it
    /// came. With reordering many overtake (a packet is overtaken when its draw exceeds the next
    /// one's by more than 1 ms: probability 0.32 for two uniform draws over 5 ms; at least 200
    /// of 999 pairs, far below the expected ≈ 320); without, none do and each leaves no earlier
    /// than its own delay.
    #[test]
    fn jitter_reorders_only_when_allowed() {
        for reorder in [true, false] {
            let out = drive(Jitter::new(Dur(10 * MS), Dur(5 * MS), reorder, 1, 9));
            assert_eq!(out.len(), 1_000);
            let mut seen: Vec<u64> = out.iter().map(|&(_, s)| s).collect();
            let inversions = seen.windows(2).filter(|w| w[0] > w[1]).count();
            for &(t, s) in &out {
                let d = t - s * MS;
                assert!(d >= 10 * MS, "{d}");
                if reorder {
                    assert!(d < 15 * MS, "{d}");
                }
            }
            if reorder {
                assert!(inversions > 200, "{inversions} inversions");
            } else {
                assert_eq!(inversions, 0);
            }
            seen.sort_unstable();
            assert_eq!(seen, (0..1_000).collect::<Vec<_>>());
        }
    }

    /// The delay of each of `n` packets `gap` apart, in arrival order, and how many packets
    /// left after the next one (adjacent overtakes).
    fn delays(mut j: Jitter<Packet>, n: u64, gap: u64) -> (Vec<u64>, usize) {
        let mut leave = vec![0u64; usize::try_from(n).unwrap()];
        let mut wake: Option<Time> = None;
        let mut take = |j: &mut Jitter<Packet>, now: Time, pkt: Option<Packet>| {
            let mut r = j.process(now, pkt);
            loop {
                match r {
                    Output::Packet(p) => {
                        leave[usize::try_from(p.data_segment().unwrap().1).unwrap()] = now.0;
                    }
                    Output::Wake(t) => return Some(t),
                    Output::Idle => return None,
                }
                r = j.process(now, None);
            }
        };
        for i in 0..n {
            let now = Time(i * gap);
            while let Some(t) = wake.filter(|&t| t < now) {
                wake = take(&mut j, t, None);
            }
            wake = take(&mut j, now, Some(test_packet(i, 0)));
        }
        while let Some(t) = wake {
            wake = take(&mut j, t, None);
        }
        let overtaken = leave.windows(2).filter(|w| w[0] > w[1]).count();
        let d = (0..n)
            .map(|i| leave[usize::try_from(i).unwrap()] - i * gap)
            .collect();
        (d, overtaken)
    }

    /// The `q`-quantile of `v` (sorted in place).
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss,
        reason = "an index into a test vector"
    )]
    fn quantile(v: &mut [u64], q: f64) -> f64 {
        v.sort_unstable();
        v[(q * (v.len() - 1) as f64) as usize] as f64
    }

    /// netem's `delay 20ms 5ms distribution D` over 100,000 packets: the 10th, 50th and 90th
    /// delay percentiles are within 5 % of `μ + σ·X(q)` for every distribution (the sampling
    /// error of a percentile over 1e5 draws is below 0.5 %, the table's step 1/8192 σ).
    #[test]
    #[expect(
        clippy::cast_precision_loss,
        reason = "counts and nanosecond delays of a test, far below 2^53"
    )]
    fn jitter_percentiles_follow_the_distribution() {
        for (name, distribution) in Distribution::ALL {
            let dist = JitterDist::Netem {
                distribution,
                mu: Dur(20 * MS),
                sigma: Dur(5 * MS),
            };
            let (mut d, _) = delays(Jitter::with(dist, 0.0, true, 3, 4), 100_000, MS / 10);
            for q in [0.1, 0.5, 0.9] {
                let want = 20.0 * MS as f64 + 5.0 * MS as f64 * distribution.quantile(q);
                let got = quantile(&mut d, q);
                assert!(
                    (got / want - 1.0).abs() < 0.05,
                    "{name} q{q}: {got} vs {want}"
                );
            }
        }
    }

    /// Uniform jitter over `S` = 5 ms on packets `g` = 1 ms apart: a packet is overtaken by the
    /// next one when its draw exceeds the next one's by more than `g`, with probability
    /// `(S − g)²/(2S²)` = 0.32 for two independent uniforms; over 100,000 packets the measured
    /// fraction is within 10 % of it (its standard error is 0.5 %). Without reordering nobody
    /// overtakes and nobody leaves before its own delay.
    #[test]
    #[expect(
        clippy::cast_precision_loss,
        reason = "counts and nanosecond delays of a test, far below 2^53"
    )]
    fn uniform_reordering_matches_theory() {
        let n = 100_000;
        let (_, overtaken) = delays(Jitter::new(Dur::ZERO, Dur(5 * MS), true, 5, 6), n, MS);
        let p = overtaken as f64 / (n - 1) as f64;
        let want = 4.0_f64.powi(2) / (2.0 * 25.0);
        assert!((p / want - 1.0).abs() < 0.1, "{p} vs {want}");
        let (d, overtaken) = delays(Jitter::new(Dur::ZERO, Dur(5 * MS), false, 5, 6), n, MS);
        assert_eq!(overtaken, 0);
        let (own, _) = delays(Jitter::new(Dur::ZERO, Dur(5 * MS), true, 5, 6), n, MS);
        assert!(d.iter().zip(&own).all(|(a, b)| a >= b));
    }

    /// With correlation ρ, netem's uniforms form an AR(1) series: the lag-1 correlation of
    /// successive (uniform, hence linear) delays is ρ = 0.5 ± 0.02 (standard error 0.003 over
    /// 1e5 draws); with ρ = 0 it is 0 ± 0.02. The same seed gives the same delays; another
    /// seed, other delays.
    #[test]
    #[expect(
        clippy::cast_precision_loss,
        reason = "counts and nanosecond delays of a test, far below 2^53"
    )]
    fn correlation_and_determinism() {
        let lag1 = |d: &[u64]| {
            let x: Vec<f64> = d.iter().map(|&v| v as f64).collect();
            let m = x.iter().sum::<f64>() / x.len() as f64;
            let var = x.iter().map(|v| (v - m).powi(2)).sum::<f64>();
            let cov = x.windows(2).map(|w| (w[0] - m) * (w[1] - m)).sum::<f64>();
            cov / var
        };
        let dist = JitterDist::Netem {
            distribution: Distribution::Uniform,
            mu: Dur(20 * MS),
            sigma: Dur(5 * MS),
        };
        for rho in [0.0, 0.5] {
            let (d, _) = delays(Jitter::with(dist, rho, true, 7, 8), 100_000, MS);
            let r = lag1(&d);
            assert!((r - rho).abs() < 0.02, "rho {rho}: {r}");
        }
        let a = delays(Jitter::with(dist, 0.3, true, 7, 8), 1_000, MS);
        assert_eq!(a, delays(Jitter::with(dist, 0.3, true, 7, 8), 1_000, MS));
        assert_ne!(a, delays(Jitter::with(dist, 0.3, true, 8, 8), 1_000, MS));
    }
}
