//! The hypervisor's CPU cap of a host: the fixed schedule of the 2BRobust study of BBR under
//! sender CPU contention (a guest that always has work: a timeslice per period, or a CFS quota
//! per period spent from the period's start), and a CFS bandwidth quota that a guest spends
//! only on its own work ([`CfsClock`]).
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

    /// When `work` ns of CPU time begun at `t` are done: the host works only while it runs, so
    /// work that does not fit in the rest of the timeslice goes on in the next ones (a vCPU
    /// descheduled in the middle of a softirq finishes it when it runs again).
    #[must_use]
    pub fn after_running(&self, t: Time, work: u64) -> Time {
        let mut t = self.next_run(t);
        let mut left = work;
        loop {
            let avail = self.run - self.phase(t);
            if left <= avail {
                return Time(t.as_nanos().saturating_add(left));
            }
            left -= avail;
            t = self.next_run(Time(t.as_nanos().saturating_add(avail)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_cc::Dur;

    #[test]
    fn work_goes_on_in_the_next_timeslice() {
        // 1 ms of every 3,333,333 ns (30 %).
        let c = CpuClock::new(&CpuSchedule {
            timeslice: Dur::from_millis(1),
            share: 0.3,
            offset: Dur::ZERO,
        });
        assert_eq!(c.after_running(Time(100_000), 200_000), Time(300_000));
        assert_eq!(c.after_running(Time(900_000), 100_000), Time(1_000_000));
        // 100 µs left of the slice, 150 µs in the next one.
        assert_eq!(c.after_running(Time(900_000), 250_000), Time(3_483_333));
        // Begun while descheduled: from the next slice on.
        assert_eq!(c.after_running(Time(2_000_000), 50_000), Time(3_383_333));
        // Over two whole slices.
        assert_eq!(c.after_running(Time(0), 2_500_000), Time(7_166_666));
    }

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

    /// `cpu.max` quotas and periods from 1 µs to 1 s: the schedule's period is the given one
    /// to the nanosecond, and its clock runs exactly the quota of each period.
    #[test]
    fn a_quota_schedule_keeps_its_period_exactly() {
        for period in [
            3_330_000u64,
            100_000_000,
            1_000_000_000,
            33_333_333,
            7,
            999_999_937,
        ] {
            for quota in [1, period / 3, period / 7 + 1, period - 1, period] {
                let s = CpuSchedule::from_quota(Dur(quota), Dur(period));
                assert_eq!(s.period(), Dur(period), "{quota}/{period}");
                let c = CpuClock::new(&s);
                assert!(c.running(Time(period)) && c.running(Time(period + quota - 1)));
                if quota < period {
                    assert_eq!(c.next_run(Time(period + quota)), Time(2 * period));
                } else {
                    assert!(c.running(Time(period + quota)));
                }
            }
        }
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

/// A host's CPU cap at run time: the fixed pattern of a guest that always has work, or a CFS
/// quota its own work spends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CpuCap {
    /// [`CpuSchedule`]: a timeslice (or quota) at the start of every period.
    Fixed(CpuClock),
    /// [`crate::config::CfsBandwidth`]: charged per packet.
    Quota(Box<CfsClock>),
}

impl CpuCap {
    /// The cap of a (validated) host: its schedule, or else its quota, if it has either.
    #[must_use]
    pub fn of(host: &crate::config::HostConfig) -> Option<Self> {
        match (&host.cpu, &host.cfs) {
            (Some(s), _) => Some(CpuCap::Fixed(CpuClock::new(s))),
            (None, Some(q)) => Some(CpuCap::Quota(Box::new(CfsClock::new(q)))),
            (None, None) => None,
        }
    }

    /// Whether the host runs at `t`.
    #[inline]
    #[must_use]
    pub fn running(&self, t: Time) -> bool {
        match self {
            CpuCap::Fixed(c) => c.running(t),
            CpuCap::Quota(q) => q.running(t),
        }
    }

    /// The first instant at or after `t` at which the host runs.
    #[must_use]
    pub fn next_run(&self, t: Time) -> Time {
        match self {
            CpuCap::Fixed(c) => c.next_run(t),
            CpuCap::Quota(q) => q.next_run(t),
        }
    }

    /// When `work` ns of CPU time begun at `t` are done ([`CpuClock::after_running`]; under a
    /// quota, which the work itself is charged against, `work` later).
    #[must_use]
    pub fn after_running(&self, t: Time, work: u64) -> Time {
        match self {
            CpuCap::Fixed(c) => c.after_running(t, work),
            CpuCap::Quota(_) => Time(t.as_nanos().saturating_add(work)),
        }
    }

    /// The quota, if the host's work spends one.
    #[inline]
    #[must_use]
    pub fn quota(&self) -> Option<&CfsClock> {
        match self {
            CpuCap::Fixed(_) => None,
            CpuCap::Quota(q) => Some(q),
        }
    }
}

/// CFS bandwidth control of a guest that runs only when it has work (the `network` load of
/// [`crate::config::CfsBandwidth`]).
///
/// Contract: the guest's work is charged as it happens ([`CfsClock::charge`]); the charge of a
/// period's quota being spent throttles the guest until the next period starts
/// (`account_cfs_rq_runtime` → `throttle_cfs_rq`; the period timer refills the quota,
/// `sched_cfs_period_timer`, `__refill_cfs_bandwidth_runtime`). An overrun is a debt paid from
/// the next period's quota (the throttled runqueue's negative `runtime_remaining` is covered
/// first when runtime is distributed, `distribute_cfs_runtime`). Periods start at time 0. A
/// guest that idles spends nothing, so it is throttled only when its work exceeds the quota.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CfsClock {
    period: u64,
    quota: u64,
    cost: u64,
    /// Runtime charged against the current period (beyond the quota: the debt).
    used: u64,
    /// Index of the period `used` belongs to.
    period_idx: u64,
    throttled_until: Option<Time>,
    /// Runtime charged over the run, ns, and the times the guest was throttled.
    runtime: u64,
    throttles: u64,
    /// The most `used` ever reached.
    peak_used: u64,
}

impl CfsClock {
    /// The clock of a (validated) quota.
    #[must_use]
    pub fn new(c: &crate::config::CfsBandwidth) -> Self {
        CfsClock {
            period: c.period.as_nanos().max(1),
            quota: c.quota.as_nanos(),
            cost: c.cost.as_nanos(),
            used: 0,
            period_idx: 0,
            throttled_until: None,
            runtime: 0,
            throttles: 0,
            peak_used: 0,
        }
    }

    /// CPU time one packet costs the guest, ns.
    #[inline]
    #[must_use]
    pub fn cost(&self) -> u64 {
        self.cost
    }

    /// Whether the guest may run at `t` (not throttled).
    #[inline]
    #[must_use]
    pub fn running(&self, t: Time) -> bool {
        self.throttled_until.is_none_or(|u| t >= u)
    }

    /// The first instant at or after `t` at which the guest may run.
    #[must_use]
    pub fn next_run(&self, t: Time) -> Time {
        self.throttled_until.map_or(t, |u| u.max(t))
    }

    /// Charge `ns` of work done at `t`; returns whether that throttled the guest.
    pub fn charge(&mut self, t: Time, ns: u64) -> bool {
        let idx = t.as_nanos() / self.period;
        if idx > self.period_idx {
            let refills = self.quota.saturating_mul(idx - self.period_idx);
            self.used = self.used.saturating_sub(refills);
            self.period_idx = idx;
        }
        if self.throttled_until.is_some_and(|u| t >= u) {
            self.throttled_until = None;
        }
        self.used += ns;
        self.runtime += ns;
        self.peak_used = self.peak_used.max(self.used);
        if self.used >= self.quota && self.throttled_until.is_none() {
            self.throttled_until = Some(Time((idx + 1).saturating_mul(self.period)));
            self.throttles += 1;
            return true;
        }
        false
    }

    /// Runtime charged so far, ns.
    #[must_use]
    pub fn runtime(&self) -> u64 {
        self.runtime
    }

    /// The most a period's charges (with the debt it inherited) exceeded its quota, ns: the
    /// work of the one instant at which the quota ran out, since nothing runs after it.
    #[must_use]
    pub fn max_overrun(&self) -> u64 {
        self.peak_used.saturating_sub(self.quota)
    }

    /// Times the guest was throttled so far.
    #[must_use]
    pub fn throttles(&self) -> u64 {
        self.throttles
    }
}

#[cfg(test)]
mod cfs_tests {
    use super::*;
    use crate::config::CfsBandwidth;
    use cclab_cc::Dur;

    fn clock(quota_us: u64, period_us: u64) -> CfsClock {
        CfsClock::new(&CfsBandwidth {
            quota: Dur::from_micros(quota_us),
            period: Dur::from_micros(period_us),
            cost: Dur::from_micros(10),
        })
    }

    #[test]
    fn the_quota_throttles_until_the_next_period_and_an_overrun_is_a_debt() {
        // 1 ms of every 3.33 ms.
        let mut c = clock(1000, 3330);
        let us = |u: u64| Time(u * 1000);
        for i in 0..99 {
            assert!(!c.charge(us(10 * i), 10_000));
        }
        assert!(c.running(us(990)));
        // The 100th 10 µs item spends the quota: throttled until 3.33 ms.
        assert!(c.charge(us(995), 10_000));
        assert!(!c.running(us(996)));
        assert_eq!(c.next_run(us(996)), us(3330));
        assert!(c.running(us(3330)));
        // An overrun of 25 µs at the end of a period is paid from the next one.
        let mut c = clock(1000, 3330);
        assert!(c.charge(us(100), 1_025_000));
        assert_eq!(c.next_run(us(100)), us(3330));
        // 975 µs are left in the second period.
        assert!(!c.charge(us(3330), 974_000));
        assert!(c.charge(us(3400), 1_000));
        assert_eq!(c.next_run(us(3400)), us(6660));
        // A period of idling pays any debt; a fresh period has the whole quota again.
        assert!(!c.charge(us(10_000), 999_000));
        assert_eq!((c.runtime(), c.throttles()), (2_999_000, 2));
        assert_eq!(c.max_overrun(), 25_000);
    }

    #[test]
    fn an_idle_guest_keeps_its_quota() {
        // Work well below the quota is never throttled, however it is spread.
        let mut c = clock(300, 1000);
        for i in 0..10_000u64 {
            assert!(!c.charge(Time(i * 100_000), 20_000));
        }
        assert_eq!(c.throttles(), 0);
    }
}
