//! Delay over time: an added delay that follows a schedule of steps, spikes and an oscillation.
//!
//! Contract: [`DelaySchedule::delay_at`] is the sum of a level (`base` until the first step,
//! then the delay of the latest step at or before `t`), every spike in force at `t` (a
//! rectangle of `height` over `[start, start + width)`) and an oscillation of `amplitude`
//! around the level with period `period` (`sine`: `A·sin(2πt/T)`; `square`: `+A` in the first
//! half of each period, `−A` in the second), clamped at zero. [`ScheduledDelay`] gives each
//! packet the delay in force when it arrives.
//!
//! When the delay drops, a packet could overtake the ones before it. By default it may not: it
//! leaves right behind the previous packet (`reorder = false`, a FIFO delay line as in the
//! link's own delay changes, `link.rs`, and as a path whose delay is queueing behaves). With
//! `reorder = true` every packet keeps its own delay and may overtake, as netem does when its
//! delay is changed (its `tfifo` queue is sorted by time to send, `net/sched/sch_netem.c`
//! `tfifo_enqueue`) and as an ns-3 channel whose `Delay` attribute changes does. No randomness.

use cclab_cc::{Dur, Time};

use super::jitter::Line;
use super::{Element, NetPacket, Output};

/// A rectangular delay spike.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spike {
    /// When it begins.
    pub start: Time,
    /// How long it lasts.
    pub width: Dur,
    /// The delay it adds.
    pub height: Dur,
}

/// The shape of an oscillating delay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wave {
    /// `A·sin(2πt/T)`.
    Sine,
    /// `+A` for the first half of each period, `−A` for the second.
    Square,
}

/// An oscillation around the level.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Oscillation {
    /// Its shape.
    pub wave: Wave,
    /// Half the peak-to-peak swing.
    pub amplitude: Dur,
    /// The period (> 0).
    pub period: Dur,
}

/// A delay that changes over time.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct DelaySchedule {
    /// The level before the first step.
    pub base: Dur,
    /// `(t, d)`: from `t` on, the level is `d` (sorted by time).
    pub steps: Vec<(Time, Dur)>,
    /// Spikes on top of the level (sorted by start).
    pub spikes: Vec<Spike>,
    /// An oscillation on top of the level.
    pub oscillation: Option<Oscillation>,
}

impl DelaySchedule {
    /// The delay at `t`.
    #[must_use]
    #[expect(
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_possible_wrap,
        reason = "delays below 100 s are exact in i64 and f64 nanoseconds; the clamped sum is non-negative"
    )]
    pub fn delay_at(&self, t: Time) -> Dur {
        let level = self
            .steps
            .iter()
            .take_while(|&&(s, _)| s <= t)
            .last()
            .map_or(self.base, |&(_, d)| d);
        let mut d = level.0 as i64;
        for s in &self.spikes {
            if s.start > t {
                break;
            }
            if t < s.start + s.width {
                d += s.height.0 as i64;
            }
        }
        if let Some(o) = self.oscillation {
            let phase = (t.0 % o.period.0) as f64 / o.period.0 as f64;
            let a = o.amplitude.0 as f64;
            d += match o.wave {
                Wave::Sine => (a * (std::f64::consts::TAU * phase).sin()).round() as i64,
                Wave::Square if phase < 0.5 => a as i64,
                Wave::Square => -(a as i64),
            };
        }
        Dur(d.max(0) as u64)
    }

    /// What is wrong with the schedule, if anything: unsorted steps or spikes, a zero period.
    #[must_use]
    pub fn problem(&self) -> Option<String> {
        if self.steps.windows(2).any(|w| w[1].0 <= w[0].0) {
            return Some("step times must increase".to_owned());
        }
        if self.spikes.windows(2).any(|w| w[1].start < w[0].start) {
            return Some("spikes must be sorted by start".to_owned());
        }
        if self.oscillation.is_some_and(|o| o.period == Dur::ZERO) {
            return Some("the oscillation period must be positive".to_owned());
        }
        None
    }
}

/// Each packet delayed by the schedule's delay at its arrival.
#[derive(Debug)]
pub struct ScheduledDelay<P> {
    schedule: DelaySchedule,
    line: Line<P>,
}

impl<P: NetPacket> ScheduledDelay<P> {
    /// Delay packets by `schedule`; `reorder`: a packet may overtake earlier ones when the
    /// delay drops.
    #[must_use]
    pub fn new(schedule: DelaySchedule, reorder: bool) -> Self {
        ScheduledDelay {
            schedule,
            line: Line::new(reorder),
        }
    }

    /// The delay a packet arriving at `now` is given (the element's added delay over time).
    #[must_use]
    pub fn delay_at(&self, now: Time) -> Dur {
        self.schedule.delay_at(now)
    }
}

impl<P: NetPacket> Element<P> for ScheduledDelay<P> {
    fn process(&mut self, now: Time, pkt: Option<P>) -> Output<P> {
        if let Some(p) = pkt {
            let d = self.schedule.delay_at(now);
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

    const MS: u64 = 1_000_000;

    /// Steps, a spike and both oscillations give the delays their definitions give at chosen
    /// instants: level 10 ms, 30 ms from 100 ms, a 20 ms spike over [50, 60) ms; a sine of
    /// 5 ms over 40 ms peaks at 10 ms (a quarter period) and is zero at 20 ms; a square is +A
    /// then −A.
    #[test]
    fn schedule_values() {
        let mut s = DelaySchedule {
            base: Dur(10 * MS),
            steps: vec![(Time(100 * MS), Dur(30 * MS))],
            spikes: vec![Spike {
                start: Time(50 * MS),
                width: Dur(10 * MS),
                height: Dur(20 * MS),
            }],
            oscillation: None,
        };
        assert_eq!(s.delay_at(Time(0)), Dur(10 * MS));
        assert_eq!(s.delay_at(Time(55 * MS)), Dur(30 * MS));
        assert_eq!(s.delay_at(Time(60 * MS)), Dur(10 * MS));
        assert_eq!(s.delay_at(Time(100 * MS)), Dur(30 * MS));
        s.oscillation = Some(Oscillation {
            wave: Wave::Sine,
            amplitude: Dur(5 * MS),
            period: Dur(40 * MS),
        });
        assert_eq!(s.delay_at(Time(10 * MS)), Dur(15 * MS));
        assert_eq!(s.delay_at(Time(20 * MS)), Dur(10 * MS));
        assert_eq!(s.delay_at(Time(30 * MS)), Dur(5 * MS));
        s.oscillation = Some(Oscillation {
            wave: Wave::Square,
            amplitude: Dur(15 * MS),
            period: Dur(40 * MS),
        });
        assert_eq!(s.delay_at(Time(19 * MS)), Dur(25 * MS));
        assert_eq!(s.delay_at(Time(21 * MS)), Dur::ZERO);
        assert!(s.problem().is_none());
        s.steps.push((Time(50 * MS), Dur::ZERO));
        assert!(s.problem().unwrap().contains("increase"));
    }

    /// The delay drops from 50 ms to 10 ms at 20 ms: packets sent every 10 ms. In order, the
    /// packets after the drop leave right behind the last slow one (at 60 ms); with
    /// `reorder` they keep their own 10 ms and overtake it.
    #[test]
    fn a_delay_drop_reorders_only_when_allowed() {
        for reorder in [false, true] {
            let s = DelaySchedule {
                base: Dur(50 * MS),
                steps: vec![(Time(20 * MS), Dur(10 * MS))],
                ..DelaySchedule::default()
            };
            let mut e = ScheduledDelay::new(s, reorder);
            let mut leave = Vec::new();
            for t in (0..=60).step_by(10) {
                let mut pkt = (t < 40).then(|| test_packet(t / 10, 0));
                while let Output::Packet(p) = e.process(Time(t * MS), pkt.take()) {
                    leave.push((t, p.data_segment().unwrap().1));
                }
            }
            if reorder {
                assert_eq!(leave, vec![(30, 2), (40, 3), (50, 0), (60, 1)]);
            } else {
                assert_eq!(leave, vec![(50, 0), (60, 1), (60, 2), (60, 3)]);
            }
        }
    }
}
