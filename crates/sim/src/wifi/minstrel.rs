//! Minstrel-HT-like rate adaptation for one link (Linux `net/mac80211/rc80211_minstrel_ht.c`).
//!
//! Contract: sans-IO and deterministic. The caller asks [`Minstrel::rate_for_next`] which rate
//! (an index into the candidate [`Phy`] list) to send the next A-MPDU at, sends it, and reports
//! with [`Minstrel::report`] how many MPDUs were attempted and acknowledged at that rate. The
//! time is passed in; the only randomness is the sampling decision, drawn from the
//! `(seed, component)` stream of [`crate::rng::stream`], so the same seed and the same reports
//! give the same choices. Bad input (no rates, a rate index out of range, more successes than
//! attempts, a configuration out of range) is a [`MinstrelError`], never a panic. The MAC
//! ([`super::mac`]) runs one per link with [`super::mac::RateControl::Minstrel`].
//!
//! What is modelled, with its Linux source:
//! - **Statistics per rate**: attempts and successes since the last update; at each update the
//!   window's success ratio enters an EWMA with weight 96/128 = 75 % on the old value
//!   (`minstrel_ewma`, `EWMA_LEVEL` 96 / `EWMA_DIV` 128 in `rc80211_minstrel_ht.h`); a rate's
//!   first measured window sets the average directly (the `!att_hist` branch of
//!   `minstrel_calc_rate_ewma`). Rates without attempts in a window keep their average.
//!   Linux replaced this EWMA in 2020 by a second-order low-pass filter
//!   (`minstrel_filter_avg_add`; commit "mac80211: minstrel_ht: remove old ewma based rate
//!   average code"); the EWMA is kept here because its step response has a closed form
//!   (after n windows without success the average is 0.75ⁿ of where it was), which the tests
//!   use.
//! - **Untested rates** of one stream count below a tested one take the highest average of the
//!   faster tested rates of that stream count (`minstrel_ht_update_stats`, the `last_prob` rule:
//!   untested lower rates become fallback candidates without random probing).
//! - **Update interval** 50 ms: `mp->update_interval = HZ / 20` in `minstrel_ht_alloc` (older
//!   kernels set 100 ms and updated every `update_interval / 2`, also 50 ms). As in
//!   `minstrel_ht_tx_status`, the update runs on the first report at least one interval after the
//!   previous update.
//! - **Expected throughput** = PHY rate × success probability, zero below 10 % and with the
//!   probability capped at 90 % (`minstrel_ht_get_tp_avg`: "do not account throughput if success
//!   prob is below 10%", "limit the probability value to 90% to account for collision related
//!   packet error rate fluctuation"). Linux divides by the airtime of an MPDU in an average
//!   A-MPDU including the per-exchange overhead; with the same overhead for every rate that only
//!   rescales the rates, so the PHY rate stands for it here.
//! - **Max-throughput rates** (the best and second best by throughput, ties to the higher
//!   probability: `minstrel_ht_sort_best_tp_rates`) and the **max-probability rate**
//!   (`minstrel_ht_set_best_prob_rate`: among rates above 75 % the one with the highest
//!   throughput, otherwise the one with the highest probability). The A-MPDU goes at the best
//!   max-throughput rate; the other two are for a retry chain the caller may build.
//! - **Sampling**: each A-MPDU is a sample with probability `sample_fraction` (10 % by default:
//!   the `lookaround_rate_mrr` of 10 % in `minstrel_alloc`, `rc80211_minstrel.c`), sent at a rate
//!   drawn uniformly among the candidates other than the max-throughput rate. Linux's
//!   minstrel_ht instead samples one A-MPDU per `MINSTREL_SAMPLE_INTERVAL` (20 ms) from lists of
//!   faster (`MINSTREL_SAMPLE_TYPE_INC`, `_JUMP`) and slower (`_SLOW`) rates
//!   (`minstrel_ht_refill_sample_rates`), and skips rates above 95 %; a fixed fraction with a
//!   uniform pick is the simpler rule the original Minstrel used and keeps the sampling share
//!   exact.
//!
//! Not modelled: multi-rate retry chains and retry counts (`minstrel_calc_retransmit`), the
//! "sudden death" downgrade of a failing multi-stream rate before the next update
//! (`minstrel_downgrade_rate`), the reduce-streams rule for the max-probability rate, legacy
//! CCK/OFDM groups, A-MSDU limits (`minstrel_ht_get_max_amsdu_len`).

use rand_chacha::ChaCha8Rng;

use super::phy::{Band, Phy, PhyError, Standard};
use crate::rng::{stream, unit_f64};
use crate::{Dur, Time};

/// Statistics update interval (Linux `minstrel_ht_alloc`: `update_interval = HZ / 20`).
pub const UPDATE_INTERVAL: Dur = Dur::from_millis(50);
/// EWMA weight of the old average, `EWMA_LEVEL / EWMA_DIV` = 96/128 (`rc80211_minstrel_ht.h`).
pub const EWMA_WEIGHT_OLD: f64 = 96.0 / 128.0;
/// Share of A-MPDUs sent at a sample rate (`lookaround_rate_mrr` = 10 %, `rc80211_minstrel.c`).
pub const SAMPLE_FRACTION: f64 = 0.10;
/// Below this success probability a rate has no throughput (`minstrel_ht_get_tp_avg`).
pub const MIN_PROB: f64 = 0.10;
/// Probability cap in the throughput estimate (`minstrel_ht_get_tp_avg`).
pub const PROB_CAP: f64 = 0.90;
/// Above this probability the max-probability rate is chosen by throughput
/// (`minstrel_ht_set_best_prob_rate`).
pub const GOOD_PROB: f64 = 0.75;

/// Tunables; [`MinstrelConfig::default`] is Linux's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MinstrelConfig {
    /// Statistics update interval, > 0.
    pub update_interval: Dur,
    /// EWMA weight of the old average, in \[0, 1).
    pub ewma_weight_old: f64,
    /// Share of A-MPDUs sent at a sample rate, in \[0, 1\].
    pub sample_fraction: f64,
}

impl Default for MinstrelConfig {
    fn default() -> Self {
        MinstrelConfig {
            update_interval: UPDATE_INTERVAL,
            ewma_weight_old: EWMA_WEIGHT_OLD,
            sample_fraction: SAMPLE_FRACTION,
        }
    }
}

/// Why a rate controller cannot be built or a report is refused.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum MinstrelError {
    /// The candidate list is empty.
    #[error("minstrel: no candidate rates")]
    NoRates,
    /// The update interval is zero.
    #[error("minstrel: the update interval must be positive")]
    UpdateInterval,
    /// The EWMA weight is outside \[0, 1).
    #[error("minstrel: EWMA weight {0} is outside [0, 1)")]
    EwmaWeight(f64),
    /// The sampling share is outside \[0, 1\].
    #[error("minstrel: sample fraction {0} is outside [0, 1]")]
    SampleFraction(f64),
    /// A report names a rate that does not exist.
    #[error("minstrel: rate index {index} is out of range (0..{len})")]
    Rate {
        /// The index reported.
        index: usize,
        /// Number of candidate rates.
        len: usize,
    },
    /// A report has more successes than attempts.
    #[error("minstrel: {succeeded} successes out of {attempted} attempts")]
    Counts {
        /// Attempts reported.
        attempted: u32,
        /// Successes reported.
        succeeded: u32,
    },
    /// A PHY of the rate set is invalid.
    #[error(transparent)]
    Phy(#[from] PhyError),
}

/// Which rate to send the next A-MPDU at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateChoice {
    /// Index into the candidate rates.
    pub index: usize,
    /// Whether this is a sample (a rate other than the max-throughput one, to measure it).
    pub sample: bool,
}

/// Per-rate statistics (Linux `struct minstrel_rate_stats`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RateStats {
    /// MPDUs attempted since the last update.
    pub attempts: u32,
    /// MPDUs acknowledged since the last update.
    pub success: u32,
    /// Average success probability (`prob_avg`), 0 until measured or inherited.
    pub prob: f64,
    /// MPDUs attempted before the last update (`att_hist`).
    pub att_hist: u64,
    /// MPDUs acknowledged before the last update (`succ_hist`).
    pub succ_hist: u64,
}

/// The rate controller of one link.
#[derive(Clone, Debug)]
pub struct Minstrel {
    phys: Vec<Phy>,
    stats: Vec<RateStats>,
    cfg: MinstrelConfig,
    rng: ChaCha8Rng,
    max_tp: [usize; 2],
    max_prob: usize,
    last_update: Time,
    aggregates: u64,
    samples: u64,
}

/// Every valid rate of `standard` with 1..=`max_nss` streams at one width and guard interval,
/// MCS ascending within each stream count (VHT combinations the standard excludes are left out).
pub fn rate_set(
    standard: Standard,
    band: Band,
    max_nss: u8,
    width_mhz: u16,
    gi_ns: u16,
) -> Result<Vec<Phy>, PhyError> {
    let mut phys = Vec::new();
    for nss in 1..=max_nss.max(1) {
        // MCS 0 is valid for every combination the standard allows: its error names the problem.
        phys.push(Phy::new(standard, band, 0, nss, width_mhz, gi_ns)?);
        phys.extend(
            (1..=11).filter_map(|mcs| Phy::new(standard, band, mcs, nss, width_mhz, gi_ns).ok()),
        );
    }
    Ok(phys)
}

impl Minstrel {
    /// A controller over the candidate rates `phys`, seeded from `(seed, component)`.
    pub fn new(
        phys: Vec<Phy>,
        cfg: MinstrelConfig,
        seed: u64,
        component: u64,
    ) -> Result<Minstrel, MinstrelError> {
        if phys.is_empty() {
            return Err(MinstrelError::NoRates);
        }
        if cfg.update_interval == Dur::ZERO {
            return Err(MinstrelError::UpdateInterval);
        }
        if !(0.0..1.0).contains(&cfg.ewma_weight_old) {
            return Err(MinstrelError::EwmaWeight(cfg.ewma_weight_old));
        }
        if !(0.0..=1.0).contains(&cfg.sample_fraction) {
            return Err(MinstrelError::SampleFraction(cfg.sample_fraction));
        }
        let lowest = lowest_rate(&phys);
        Ok(Minstrel {
            stats: vec![RateStats::default(); phys.len()],
            phys,
            cfg,
            rng: stream(seed, component),
            max_tp: [lowest; 2],
            max_prob: lowest,
            last_update: Time(0),
            aggregates: 0,
            samples: 0,
        })
    }

    /// The candidate rates.
    pub fn phys(&self) -> &[Phy] {
        &self.phys
    }

    /// Statistics of rate `index` (`None` out of range).
    pub fn stats(&self, index: usize) -> Option<&RateStats> {
        self.stats.get(index)
    }

    /// The max-throughput rate (`max_tp_rate[0]`).
    pub fn max_tp_rate(&self) -> usize {
        self.max_tp[0]
    }

    /// The second max-throughput rate (`max_tp_rate[1]`).
    pub fn max_tp_rate2(&self) -> usize {
        self.max_tp[1]
    }

    /// The max-probability rate (`max_prob_rate`).
    pub fn max_prob_rate(&self) -> usize {
        self.max_prob
    }

    /// A-MPDUs chosen so far and how many of them were samples.
    pub fn sample_counts(&self) -> (u64, u64) {
        (self.aggregates, self.samples)
    }

    /// Expected throughput of rate `index` in bit/s: PHY rate × min(prob, 90 %), 0 below 10 %
    /// (`minstrel_ht_get_tp_avg`); 0 out of range.
    pub fn expected_throughput_bps(&self, index: usize) -> f64 {
        match (self.phys.get(index), self.stats.get(index)) {
            (Some(phy), Some(s)) => throughput(phy, s.prob),
            _ => 0.0,
        }
    }

    /// The rate for the next A-MPDU: a sample with probability `sample_fraction`, otherwise the
    /// max-throughput rate. Draws two uniforms from the stream per call, so the draws do not
    /// depend on the statistics.
    pub fn rate_for_next(&mut self, _now: Time) -> RateChoice {
        let is_sample = unit_f64(&mut self.rng) < self.cfg.sample_fraction;
        let pick = unit_f64(&mut self.rng);
        self.aggregates += 1;
        let n = self.phys.len();
        if !is_sample || n < 2 {
            return RateChoice {
                index: self.max_tp[0],
                sample: false,
            };
        }
        self.samples += 1;
        // Uniform among the n − 1 rates other than max_tp[0].
        let others = cclab_cc::num::usize_to_f64(n - 1);
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "pick·(n − 1) is in [0, n − 1) and n is a small count"
        )]
        let k = ((pick * others) as usize).min(n - 2);
        let index = if k < self.max_tp[0] { k } else { k + 1 };
        RateChoice {
            index,
            sample: true,
        }
    }

    /// Reports an A-MPDU sent at rate `rate` at `now`: `attempted` MPDUs, `succeeded` of them
    /// acknowledged. Runs the statistics update when an interval has passed since the last.
    pub fn report(
        &mut self,
        now: Time,
        rate: usize,
        attempted: u32,
        succeeded: u32,
    ) -> Result<(), MinstrelError> {
        let len = self.phys.len();
        let s = self
            .stats
            .get_mut(rate)
            .ok_or(MinstrelError::Rate { index: rate, len })?;
        if succeeded > attempted {
            return Err(MinstrelError::Counts {
                attempted,
                succeeded,
            });
        }
        s.attempts = s.attempts.saturating_add(attempted);
        s.success = s.success.saturating_add(succeeded);
        if now.saturating_since(self.last_update) >= self.cfg.update_interval {
            self.update_stats(now);
        }
        Ok(())
    }

    /// `minstrel_ht_update_stats`: folds each rate's window into its average, lets untested
    /// rates inherit, and picks the max-throughput and max-probability rates.
    fn update_stats(&mut self, now: Time) {
        let w = self.cfg.ewma_weight_old;
        for s in &mut self.stats {
            if s.attempts > 0 {
                let cur = f64::from(s.success) / f64::from(s.attempts);
                s.prob = if s.att_hist == 0 {
                    cur
                } else {
                    w * s.prob + (1.0 - w) * cur
                };
                s.att_hist += u64::from(s.attempts);
                s.succ_hist += u64::from(s.success);
            }
            s.attempts = 0;
            s.success = 0;
        }
        // Untested rates below tested ones, per stream count, from the fastest down.
        let mut order: Vec<usize> = (0..self.phys.len()).collect();
        order.sort_by(|&a, &b| {
            let (pa, pb) = (&self.phys[a], &self.phys[b]);
            pa.nss()
                .cmp(&pb.nss())
                .then(pb.data_rate_bps().total_cmp(&pa.data_rate_bps()))
                .then(a.cmp(&b))
        });
        let mut group = 0;
        let mut last_prob = 0.0_f64;
        for &i in &order {
            if self.phys[i].nss() != group {
                group = self.phys[i].nss();
                last_prob = 0.0;
            }
            let s = &mut self.stats[i];
            if s.att_hist > 0 {
                last_prob = last_prob.max(s.prob);
            } else {
                s.prob = s.prob.max(last_prob);
            }
        }
        // Max-throughput pair: strictly better throughput, ties to the higher probability,
        // then to the lower index; rates without throughput are skipped, as in Linux.
        let lowest = lowest_rate(&self.phys);
        let mut best = [lowest; 2];
        let mut have = [false; 2];
        let key = |m: &Minstrel, i: usize| (m.expected_throughput_bps(i), m.stats[i].prob);
        for i in 0..self.phys.len() {
            let (tp, p) = key(self, i);
            if tp <= 0.0 {
                continue;
            }
            let beats = |j: usize| {
                let (tpj, pj) = key(self, j);
                tp > tpj || (tp == tpj && p > pj)
            };
            if !have[0] || beats(best[0]) {
                if have[0] {
                    best[1] = best[0];
                    have[1] = true;
                }
                best[0] = i;
                have[0] = true;
            } else if !have[1] || beats(best[1]) {
                best[1] = i;
                have[1] = true;
            }
        }
        if !have[1] {
            best[1] = best[0];
        }
        self.max_tp = best;
        // Max-probability rate (minstrel_ht_set_best_prob_rate).
        let mut max_prob = lowest;
        for i in 0..self.phys.len() {
            let p = self.stats[i].prob;
            if p > GOOD_PROB {
                if self.expected_throughput_bps(i) > self.expected_throughput_bps(max_prob) {
                    max_prob = i;
                }
            } else if p > self.stats[max_prob].prob {
                max_prob = i;
            }
        }
        self.max_prob = max_prob;
        self.last_update = now;
    }
}

/// PHY rate × min(prob, cap), zero below [`MIN_PROB`].
fn throughput(phy: &Phy, prob: f64) -> f64 {
    if prob < MIN_PROB {
        0.0
    } else {
        phy.data_rate_bps() * prob.min(PROB_CAP)
    }
}

/// Index of the slowest rate (first on ties).
fn lowest_rate(phys: &[Phy]) -> usize {
    let mut best = 0;
    for (i, p) in phys.iter().enumerate() {
        if p.data_rate_bps() < phys[best].data_rate_bps() {
            best = i;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ht20() -> Vec<Phy> {
        rate_set(Standard::Ht, Band::Ghz5, 1, 20, 800).unwrap()
    }

    fn ms(n: u64) -> Time {
        Time(n * 1_000_000)
    }

    /// The rate set holds exactly the valid MCSs: HT 1SS 8, VHT20 2SS 9 + 9 (MCS 9 excluded,
    /// IEEE 802.11-2020 21.5), HE80 2SS 24.
    #[test]
    fn rate_sets() {
        assert_eq!(ht20().len(), 8);
        assert_eq!(
            rate_set(Standard::Vht, Band::Ghz5, 2, 20, 800)
                .unwrap()
                .len(),
            18
        );
        assert_eq!(
            rate_set(Standard::He, Band::Ghz5, 2, 80, 800)
                .unwrap()
                .len(),
            24
        );
        assert!(rate_set(Standard::Ht, Band::Ghz5, 1, 80, 800).is_err());
    }

    /// EWMA arithmetic: first window sets the average, then p ← 0.75·p + 0.25·cur exactly
    /// (`minstrel_ewma` with weight 96/128).
    #[test]
    fn ewma_follows_the_formula() {
        let mut m = Minstrel::new(ht20(), MinstrelConfig::default(), 1, 1).unwrap();
        m.report(ms(50), 3, 100, 80).unwrap();
        assert_eq!(m.stats(3).unwrap().prob, 0.8);
        m.report(ms(100), 3, 100, 40).unwrap();
        assert!((m.stats(3).unwrap().prob - (0.75 * 0.8 + 0.25 * 0.4)).abs() < 1e-15);
        // No update before an interval has passed: the counts accumulate.
        m.report(ms(120), 3, 10, 0).unwrap();
        assert_eq!(m.stats(3).unwrap().attempts, 10);
        // Untested rates below the tested one inherit its average and keep the highest they
        // inherited (max(last_prob, prob_avg) in `minstrel_ht_update_stats`); faster ones stay 0.
        assert_eq!(m.stats(0).unwrap().prob, 0.8);
        assert_eq!(m.stats(7).unwrap().prob, 0.0);
    }

    /// Throughput rules of `minstrel_ht_get_tp_avg`: zero below 10 %, capped at 90 %.
    #[test]
    fn throughput_rules() {
        let phys = ht20();
        let r = phys[7].data_rate_bps();
        assert_eq!(throughput(&phys[7], 0.099), 0.0);
        assert!((throughput(&phys[7], 0.5) - 0.5 * r).abs() < 1e-6);
        assert!((throughput(&phys[7], 0.99) - 0.9 * r).abs() < 1e-6);
        assert_eq!(throughput(&phys[7], 0.9), throughput(&phys[7], 1.0));
    }

    /// Max-throughput and max-probability picks after measuring HT20 MCS 7 at 50 %
    /// (0.5·65 = 32.5 Mbit/s), MCS 5 at 100 % (0.9·52 = 46.8) and MCS 6 at 0 %: MCS 5 is the
    /// max-throughput rate; max-prob is the fastest rate above 75 %, MCS 5.
    #[test]
    fn best_rates() {
        let mut m = Minstrel::new(ht20(), MinstrelConfig::default(), 1, 1).unwrap();
        m.report(ms(1), 7, 100, 50).unwrap();
        m.report(ms(2), 5, 100, 100).unwrap();
        m.report(ms(60), 6, 100, 0).unwrap();
        assert_eq!(m.max_tp_rate(), 5);
        // MCS 7 at 50 %: 32.5 Mbit/s; MCS 4 inherits 100 % from MCS 5: 0.9·39 = 35.1.
        assert_eq!(m.max_tp_rate2(), 4);
        assert_eq!(m.max_prob_rate(), 5);
    }

    /// Bad input is an error naming the problem.
    #[test]
    fn bad_input() {
        let c = MinstrelConfig::default();
        assert_eq!(
            Minstrel::new(vec![], c, 1, 1).unwrap_err(),
            MinstrelError::NoRates
        );
        let bad = MinstrelConfig {
            sample_fraction: 1.5,
            ..c
        };
        assert!(matches!(
            Minstrel::new(ht20(), bad, 1, 1),
            Err(MinstrelError::SampleFraction(_))
        ));
        let bad = MinstrelConfig {
            ewma_weight_old: 1.0,
            ..c
        };
        assert!(Minstrel::new(ht20(), bad, 1, 1).is_err());
        let bad = MinstrelConfig {
            update_interval: Dur::ZERO,
            ..c
        };
        assert!(Minstrel::new(ht20(), bad, 1, 1).is_err());
        let mut m = Minstrel::new(ht20(), c, 1, 1).unwrap();
        assert_eq!(
            m.report(ms(1), 8, 1, 1),
            Err(MinstrelError::Rate { index: 8, len: 8 })
        );
        assert!(matches!(
            m.report(ms(1), 0, 1, 2),
            Err(MinstrelError::Counts { .. })
        ));
        assert!(
            m.report(ms(1), 0, 1, 2)
                .unwrap_err()
                .to_string()
                .contains("2 successes")
        );
    }

    /// A sample is never the max-throughput rate, and every other rate gets sampled.
    #[test]
    fn samples_avoid_the_max_tp_rate() {
        let mut m = Minstrel::new(ht20(), MinstrelConfig::default(), 3, 9).unwrap();
        let mut seen = [false; 8];
        for _ in 0..5_000 {
            let c = m.rate_for_next(Time(0));
            if c.sample {
                assert_ne!(c.index, m.max_tp_rate());
                seen[c.index] = true;
            } else {
                assert_eq!(c.index, m.max_tp_rate());
            }
        }
        assert_eq!(seen.iter().filter(|&&s| s).count(), 7);
    }
}
