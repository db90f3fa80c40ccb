//! The hypervisor CPU schedule of a host, as the 2BRobust study of BBR under sender CPU
//! contention models it.
//!
//! Contract: a [`CpuClock`] answers, for any instant, whether the host is running and when it
//! runs next. The host runs for `timeslice` at the start of every period of `timeslice / share`
//! (rounded to the nanosecond, [`CpuSchedule::period`]); `offset` is where in its period the
//! host is at time 0. Running is the half-open phase `[0, timeslice)`: at the instant a
//! timeslice ends the host is already descheduled, at the instant the next begins it runs.

use cclab_cc::Time;

use crate::config::CpuSchedule;

/// A host's run/deschedule pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuClock {
    period: u64,
    run: u64,
    offset: u64,
}

impl CpuClock {
    /// The clock of a (validated) schedule.
    #[must_use]
    pub fn new(s: &CpuSchedule) -> Self {
        let period = s.period().as_nanos().max(1);
        CpuClock {
            period,
            run: s.timeslice.as_nanos().min(period),
            offset: s.offset.as_nanos() % period,
        }
    }

    /// Position of `t` within its period, ns.
    #[inline]
    fn phase(&self, t: Time) -> u64 {
        let p = t.as_nanos() % self.period + self.offset;
        if p >= self.period { p - self.period } else { p }
    }

    /// Whether the host runs at `t`.
    #[inline]
    #[must_use]
    pub fn running(&self, t: Time) -> bool {
        self.phase(t) < self.run
    }

    /// The first instant at or after `t` at which the host runs.
    #[must_use]
    pub fn next_run(&self, t: Time) -> Time {
        let ph = self.phase(t);
        if ph < self.run {
            t
        } else {
            Time(t.as_nanos().saturating_add(self.period - ph))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_cc::Dur;

    #[test]
    fn runs_for_the_timeslice_of_every_period() {
        // 10 ms at 30 %: period round(33.333… ms) = 33,333,333 ns.
        let c = CpuClock::new(&CpuSchedule {
            timeslice: Dur::from_millis(10),
            share: 0.3,
            offset: Dur::ZERO,
        });
        let ms = |m: u64| Time(m * 1_000_000);
        assert!(c.running(ms(0)));
        assert!(c.running(Time(9_999_999)));
        assert!(!c.running(ms(10)));
        assert_eq!(c.next_run(ms(10)), Time(33_333_333));
        assert!(c.running(Time(33_333_333)));
        assert!(!c.running(Time(43_333_333)));
        assert_eq!(c.next_run(ms(5)), ms(5));
        // An offset of 25 ms puts t = 0 in the descheduled part: it runs from 8.333 ms.
        let o = CpuClock::new(&CpuSchedule {
            timeslice: Dur::from_millis(10),
            share: 0.3,
            offset: Dur::from_millis(25),
        });
        assert!(!o.running(Time::ZERO));
        assert_eq!(o.next_run(Time::ZERO), Time(8_333_333));
    }

    #[test]
    fn full_share_always_runs() {
        let c = CpuClock::new(&CpuSchedule {
            timeslice: Dur::from_millis(10),
            share: 1.0,
            offset: Dur::from_millis(3),
        });
        for t in [0, 7_000_000, 10_000_000, 123_456_789] {
            assert!(c.running(Time(t)));
            assert_eq!(c.next_run(Time(t)), Time(t));
        }
    }
}
