//! A piecewise-constant rate schedule: the transmitter's rate steps at given times, once or
//! repeating with a period (a square or sampled sine oscillation, a CSV of steps).
//!
//! Contract: [`Schedule`] is the description (steps `(time, bps)`, the first at time 0, times
//! strictly increasing; with a period every step lies inside it and the pattern repeats);
//! [`ScheduleCursor::serialization`] returns how long `bytes` take when their transmission
//! starts at `start`: the bits are sent at the rate in force at each instant, so a packet
//! that straddles a step is sent partly at the old and partly at the new rate, and a step at
//! time `T` changes the rate at exactly nanosecond `T`. The end is rounded up to the
//! nanosecond, as [`Dur::serialization`] does for a constant rate (a one-step schedule gives
//! its answers bit for bit). A zero rate is an outage: nothing is sent until the next step.
//! Starts are normally non-decreasing (a FIFO transmitter); the cursor follows them forward in
//! O(1) per step crossed and seeks when a start goes back.

use cclab_cc::{Dur, Time};

/// Nanoseconds per second: a rate in bit/s sends `bps · Δns / NS` bits in `Δns`.
const NS: u128 = 1_000_000_000;

/// A piecewise-constant rate over time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schedule {
    /// (start time, bits per second); the first starts at 0, times strictly increasing.
    steps: Vec<(Time, u64)>,
    /// Repeat every `period` (all step times below it); `None`: the last rate holds forever.
    period: Option<Dur>,
    /// Per step: the bits (times 10⁹) the steps before it send, from 0 to its start, so that
    /// the capacity over any interval is two lookups, not a walk over every step (a CSV of
    /// millions of steps, sampled a million times).
    sent_before: Vec<u128>,
}

impl Schedule {
    /// A schedule of `steps` (time, bit/s), repeating every `period` if given. Errors: no
    /// steps, a first step after 0, times not strictly increasing, a step at or after the
    /// period, or a schedule that ends in a zero rate (it would never send again).
    pub fn new(steps: Vec<(Time, u64)>, period: Option<Dur>) -> Result<Self, String> {
        let Some(&(first, _)) = steps.first() else {
            return Err("a rate schedule needs at least one step".into());
        };
        if first != Time::ZERO {
            return Err(format!(
                "the first step of a rate schedule must be at time 0, not {} s",
                first.as_secs_f64()
            ));
        }
        if let Some(w) = steps.windows(2).find(|w| w[1].0 <= w[0].0) {
            return Err(format!(
                "rate schedule step times must increase strictly ({} s follows {} s)",
                w[1].0.as_secs_f64(),
                w[0].0.as_secs_f64()
            ));
        }
        match period {
            Some(p) => {
                if p == Dur::ZERO {
                    return Err("a rate schedule's period must be positive".into());
                }
                if steps.iter().any(|&(t, _)| t.0 >= p.0) {
                    return Err(
                        "every step of a periodic rate schedule lies inside its period".into(),
                    );
                }
                if steps.iter().all(|&(_, r)| r == 0) {
                    return Err("a periodic rate schedule needs a positive rate somewhere".into());
                }
            }
            None => {
                if steps.last().is_some_and(|&(_, r)| r == 0) {
                    return Err("a rate schedule must not end with a zero rate".into());
                }
            }
        }
        let mut sent_before = Vec::with_capacity(steps.len());
        let mut sum = 0u128;
        for (i, &(s, r)) in steps.iter().enumerate() {
            sent_before.push(sum);
            if let Some(&(next, _)) = steps.get(i + 1) {
                sum += u128::from(r) * u128::from(next.0 - s.0);
            }
        }
        Ok(Schedule {
            steps,
            period,
            sent_before,
        })
    }

    /// The steps (time, bit/s).
    #[must_use]
    pub fn steps(&self) -> &[(Time, u64)] {
        &self.steps
    }

    /// The period, if the schedule repeats.
    #[must_use]
    pub fn period(&self) -> Option<Dur> {
        self.period
    }

    /// The rate in force at `t`.
    #[must_use]
    pub fn rate_at(&self, t: Time) -> u64 {
        let t = match self.period {
            Some(p) => Time(t.0 % p.0),
            None => t,
        };
        let i = self.steps.partition_point(|&(s, _)| s <= t);
        self.steps[i - 1].1
    }

    /// The nominal rate: the mean over a period when the schedule repeats, else the highest
    /// rate it reaches (positive: a one-shot schedule ends with a positive rate).
    #[must_use]
    pub fn nominal_bps(&self) -> u64 {
        let Some(p) = self.period else {
            return self.steps.iter().map(|&(_, r)| r).max().unwrap_or(0);
        };
        let bits = self.capacity_bits(Time::ZERO, Time(p.0));
        u64::try_from(bits / u128::from(p.0)).unwrap_or(u64::MAX)
    }

    /// Bits the schedule can send in `[from, to)`, times 10⁹ (bit·ns/s: exact in integers).
    #[must_use]
    pub fn capacity_bits(&self, from: Time, to: Time) -> u128 {
        self.sent_by(to).saturating_sub(self.sent_by(from))
    }

    /// Bits (times 10⁹) the schedule can send in `[0, t)`.
    fn sent_by(&self, t: Time) -> u128 {
        // In `[0, off)` of the first period (or of the run without one): the steps before the
        // one in force at `off` in full, and that one up to `off` (steps are sorted, and `off`
        // is at most the period).
        let within = |off: u64| -> u128 {
            let i = self.steps.partition_point(|&(s, _)| s.0 < off);
            if i == 0 {
                return 0;
            }
            let (s, r) = self.steps[i - 1];
            self.sent_before[i - 1] + u128::from(r) * u128::from(off - s.0)
        };
        match self.period {
            Some(p) => u128::from(t.0 / p.0) * within(p.0) + within(t.0 % p.0),
            None => within(t.0),
        }
    }
}

/// A schedule with a read position: where the last start fell.
#[derive(Clone, Debug)]
pub struct ScheduleCursor {
    sched: std::sync::Arc<Schedule>,
    /// Index of the step in force at the last start.
    idx: usize,
    /// Start of the current period (0 without a period), ns.
    base: u64,
    /// (bytes, bps, time) of the last two sizes sent within one step.
    cache: [(u32, u64, Dur); 2],
}

impl ScheduleCursor {
    /// A cursor at time 0.
    #[must_use]
    pub fn new(sched: std::sync::Arc<Schedule>) -> Self {
        ScheduleCursor {
            sched,
            idx: 0,
            base: 0,
            cache: [(0, 0, Dur::ZERO); 2],
        }
    }

    /// Start and end (absolute, ns; `u64::MAX` for the last step without a period) and rate of
    /// the current step.
    #[inline]
    fn step(&self) -> (u64, u64, u64) {
        let steps = &self.sched.steps;
        let (t, r) = steps[self.idx];
        let end = match steps.get(self.idx + 1) {
            Some(&(n, _)) => self.base + n.0,
            None => self
                .sched
                .period
                .map_or(u64::MAX, |p| self.base.saturating_add(p.0)),
        };
        (self.base + t.0, end, r)
    }

    /// Move to the next step (wrapping to the next period).
    #[inline]
    fn advance(&mut self) {
        self.idx += 1;
        if self.idx == self.sched.steps.len() {
            let p = self
                .sched
                .period
                .expect("the last step of a one-shot schedule never ends");
            self.idx = 0;
            self.base = self.base.saturating_add(p.0);
        }
    }

    /// Put the cursor on the step in force at `t`.
    #[inline]
    fn seek(&mut self, t: Time) {
        let (s, mut e, _) = self.step();
        if t.0 < s {
            // Went back: seek from scratch.
            self.base = self.sched.period.map_or(0, |p| t.0 - t.0 % p.0);
            let off = Time(t.0 - self.base);
            self.idx = self.sched.steps.partition_point(|&(s, _)| s <= off) - 1;
            return;
        }
        while t.0 >= e {
            self.advance();
            e = self.step().1;
        }
    }

    /// Serialisation time of `bytes` starting at `start` (see the module contract).
    #[inline(never)]
    pub fn serialization(&mut self, bytes: u32, start: Time) -> Dur {
        self.seek(start);
        let (_, end, rate) = self.step();
        if rate > 0 {
            let d = self.cached(bytes, rate);
            if start.0.saturating_add(d.0) <= end {
                return d;
            }
        }
        self.straddle(bytes, start)
    }

    /// The constant-rate time of `bytes` at `rate`, remembered for the last two sizes.
    #[inline]
    fn cached(&mut self, bytes: u32, rate: u64) -> Dur {
        for &(b, r, d) in &self.cache {
            if b == bytes && r == rate {
                return d;
            }
        }
        let d = Dur::serialization(u64::from(bytes), rate);
        self.cache = [(bytes, rate, d), self.cache[0]];
        d
    }

    /// A transmission that crosses one or more steps: spend the bits step by step.
    #[inline(never)]
    fn straddle(&mut self, bytes: u32, start: Time) -> Dur {
        let mut need = u128::from(bytes) * 8 * NS;
        let mut t = start.0;
        loop {
            let (_, end, rate) = self.step();
            let r = u128::from(rate);
            if end == u64::MAX {
                let d = u64::try_from(need.div_ceil(r)).unwrap_or(u64::MAX);
                return Dur(t.saturating_add(d) - start.0);
            }
            let avail = r * u128::from(end - t);
            if avail >= need {
                let d = u64::try_from(need.div_ceil(r)).unwrap_or(u64::MAX);
                return Dur(t + d - start.0);
            }
            need -= avail;
            t = end;
            self.advance();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    const MS: u64 = 1_000_000;

    /// The capacity over an interval by two lookups equals the step-by-step sum it replaced
    /// (exact integers), with and without a period, at and between step boundaries.
    #[test]
    fn capacity_lookups_equal_the_step_sums() {
        let walk = |s: &Schedule, t: u64| -> u128 {
            let within = |off: u64, end: u64| -> u128 {
                let mut sum = 0;
                for (i, &(st, r)) in s.steps.iter().enumerate() {
                    if st.0 >= off {
                        break;
                    }
                    let next = s.steps.get(i + 1).map_or(end, |n| n.0.0);
                    sum += u128::from(r) * u128::from(next.min(off) - st.0);
                }
                sum
            };
            match s.period {
                Some(p) => u128::from(t / p.0) * within(p.0, p.0) + within(t % p.0, p.0),
                None => within(t, u64::MAX),
            }
        };
        let steps: Vec<(Time, u64)> = [(0, 7_000_001), (3, 0), (1_000, 12_000_000), (1_001, 5)]
            .iter()
            .map(|&(t, r)| (Time(t), r))
            .collect();
        for period in [None, Some(Dur(1_002)), Some(Dur(5_000))] {
            let s = Schedule::new(steps.clone(), period).unwrap();
            for t in [
                0, 1, 2, 3, 4, 999, 1_000, 1_001, 1_002, 1_003, 4_999, 5_000, 123_457,
            ] {
                assert_eq!(s.sent_by(Time(t)), walk(&s, t), "{period:?} at {t}");
            }
        }
    }

    fn cursor(steps: &[(u64, u64)], period: Option<u64>) -> ScheduleCursor {
        let steps = steps.iter().map(|&(t, r)| (Time(t), r)).collect();
        ScheduleCursor::new(Arc::new(Schedule::new(steps, period.map(Dur)).unwrap()))
    }

    /// 12 Mbit/s until 10 ms, then 24 Mbit/s. A 1500-byte packet takes 1 ms before the step
    /// and 0.5 ms after it; one starting at 9.5 ms sends 6000 bits by 10 ms and the other 6000
    /// at 24 Mbit/s in 0.25 ms: it ends at 10.25 ms. The step acts at exactly 10 ms.
    #[test]
    fn a_step_changes_the_rate_at_the_exact_nanosecond() {
        let mut c = cursor(&[(0, 12_000_000), (10 * MS, 24_000_000)], None);
        assert_eq!(c.serialization(1500, Time(0)), Dur(MS));
        assert_eq!(
            c.serialization(1500, Time(9 * MS)),
            Dur(MS),
            "ends exactly at the step"
        );
        assert_eq!(
            c.serialization(1500, Time(9 * MS + MS / 2)),
            Dur(MS / 2 + MS / 4)
        );
        assert_eq!(c.serialization(1500, Time(10 * MS)), Dur(MS / 2));
        // Starting 1 ns before the step: 0.012 bit goes at the old rate in that nanosecond,
        // the other 11,999.988 bits at the new one take 499,999.5 ns, rounded up: 1 + 500,000.
        assert_eq!(c.serialization(1500, Time(10 * MS - 1)), Dur(MS / 2 + 1));
    }

    /// A one-step schedule answers exactly as the constant rate does.
    #[test]
    fn one_step_equals_the_constant_rate() {
        let mut c = cursor(&[(0, 7_000_003)], None);
        for (i, bytes) in [1500u32, 52, 1, 9000, 1500].into_iter().enumerate() {
            let t = Time(u64::try_from(i).unwrap() * 123_457);
            assert_eq!(
                c.serialization(bytes, t),
                Dur::serialization(u64::from(bytes), 7_000_003)
            );
        }
    }

    /// A square wave of 0 and 24 Mbit/s, 10 ms each (period 20 ms): a packet started in the
    /// outage waits for the next on-phase, in every period; the mean is 12 Mbit/s; a start
    /// that goes back is answered as a fresh one.
    #[test]
    fn periodic_schedules_repeat_and_outages_wait() {
        let mut c = cursor(&[(0, 0), (10 * MS, 24_000_000)], Some(20 * MS));
        assert_eq!(c.serialization(1500, Time(0)), Dur(10 * MS + MS / 2));
        assert_eq!(c.serialization(1500, Time(45 * MS)), Dur(5 * MS + MS / 2));
        // Straddles the end of the on-phase at 60 ms: 3000 bits before, the rest at 70 ms.
        assert_eq!(
            c.serialization(1500, Time(60 * MS - MS / 8)),
            Dur(MS / 8 + 10 * MS + 3 * MS / 8)
        );
        assert_eq!(c.serialization(1500, Time(10 * MS)), Dur(MS / 2));
        let s = Schedule::new(
            vec![(Time(0), 0), (Time(10 * MS), 24_000_000)],
            Some(Dur(20 * MS)),
        )
        .unwrap();
        assert_eq!(s.nominal_bps(), 12_000_000);
        assert_eq!(s.rate_at(Time(65 * MS)), 0);
        assert_eq!(s.rate_at(Time(75 * MS)), 24_000_000);
        assert_eq!(
            s.capacity_bits(Time(5 * MS), Time(35 * MS)),
            24_000_000 * 15 * u128::from(MS)
        );
    }

    /// Invalid schedules are refused with a reason.
    #[test]
    fn invalid_schedules_are_errors() {
        let e = |steps: Vec<(u64, u64)>, p: Option<u64>| {
            Schedule::new(
                steps.into_iter().map(|(t, r)| (Time(t), r)).collect(),
                p.map(Dur),
            )
            .unwrap_err()
        };
        assert!(e(vec![], None).contains("at least one"));
        assert!(e(vec![(5, 1)], None).contains("time 0"));
        assert!(e(vec![(0, 1), (5, 2), (5, 3)], None).contains("strictly"));
        assert!(e(vec![(0, 1), (5, 0)], None).contains("zero rate"));
        assert!(e(vec![(0, 1), (5, 2)], Some(5)).contains("inside its period"));
        assert!(e(vec![(0, 0)], Some(5)).contains("positive rate"));
    }
}
