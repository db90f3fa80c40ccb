//! Delay models: how long a packet takes from the end of its serialisation to the far end.
//!
//! Contract: [`DelayModel`] is a constant propagation delay that may change at given times
//! (`LinkConfig::delay_changes`). A change at time `T` applies to every packet whose
//! serialisation ends at or after `T`; the owner applies changes as they fall due
//! ([`DelayModel::apply_change`]), and [`DelayModel::delay_at`] looks ahead, read-only, for a
//! packet scheduled before a change that ends after it. The model keeps a delay line FIFO: when
//! the delay drops, a packet would overtake the ones that left before it, so its arrival is
//! clamped to be no earlier than the previous one ([`DelayModel::take_arrival`]).
//!
//! [`Delay`] is the same model as a stand-alone [`Element`] holding its delay line: packets
//! leave in arrival order, and the element asks to be called at the head's arrival. It does not
//! assume the order of arrivals: a jitter model that reorders becomes one more source of
//! arrival times whose line is a heap instead of a FIFO.

use std::collections::VecDeque;

use cclab_cc::{Dur, Time};

use super::{Element, NetPacket, Output};

/// A propagation delay with scheduled changes, keeping packets in order.
#[derive(Clone, Debug)]
pub struct DelayModel {
    /// The delay in force now (for serialisations ending before `until`).
    delay: Dur,
    /// Time of the next change not yet applied (`Time::MAX`: none).
    until: Time,
    /// The changes of the run, and how many of them have been applied.
    changes: Box<[(Time, Dur)]>,
    applied: usize,
    /// Latest arrival time given to a packet so far (FIFO clamp).
    last_arrival: Time,
}

impl DelayModel {
    /// A delay of `delay`, changing to `d` at each `(t, d)` of `changes` (strictly increasing
    /// times).
    #[must_use]
    pub fn new(delay: Dur, changes: &[(Time, Dur)]) -> Self {
        let changes: Box<[(Time, Dur)]> = changes.into();
        DelayModel {
            delay,
            until: changes.first().map_or(Time::MAX, |&(t, _)| t),
            changes,
            applied: 0,
            last_arrival: Time::ZERO,
        }
    }

    /// The delay of a packet whose serialisation ends at `end`: the current one, unless `end`
    /// reaches a change not applied yet.
    #[inline(always)]
    #[must_use]
    pub fn delay_at(&self, end: Time) -> Dur {
        if end < self.until {
            self.delay
        } else {
            self.delay_ahead(end)
        }
    }

    #[cold]
    #[inline(never)]
    fn delay_ahead(&self, end: Time) -> Dur {
        self.changes[self.applied..]
            .iter()
            .take_while(|&&(t, _)| t <= end)
            .last()
            .map_or(self.delay, |&(_, d)| d)
    }

    /// The arrival time of a packet whose serialisation ends at `end`, without recording it:
    /// `end` plus the delay at `end`, but not before the previous arrival (FIFO).
    #[inline(always)]
    #[must_use]
    pub fn arrival_for(&self, end: Time) -> Time {
        (end + self.delay_at(end)).max(self.last_arrival)
    }

    /// [`DelayModel::arrival_for`], recorded as the latest arrival.
    #[inline(always)]
    pub fn take_arrival(&mut self, end: Time) -> Time {
        let arrival = self.arrival_for(end);
        self.last_arrival = arrival;
        arrival
    }

    /// The arrival time of a packet whose serialisation ends at `end` and that is held `extra`
    /// longer (a jitter): `in_order`, not before the previous arrival (recorded as the latest);
    /// else exactly `end` plus the delay at `end` plus `extra`, and the packet may overtake.
    #[inline]
    pub fn take_jittered(&mut self, end: Time, extra: Dur, in_order: bool) -> Time {
        let arrival = end + self.delay_at(end) + extra;
        if !in_order {
            return arrival;
        }
        let arrival = arrival.max(self.last_arrival);
        self.last_arrival = arrival;
        arrival
    }

    /// Record `arrival` (computed by [`DelayModel::arrival_for`]) as the latest arrival.
    #[inline(always)]
    pub fn set_last_arrival(&mut self, arrival: Time) {
        self.last_arrival = arrival;
    }

    /// When the next change not yet applied is due.
    #[must_use]
    pub fn next_change(&self) -> Option<Time> {
        (self.until != Time::MAX).then_some(self.until)
    }

    /// The next change is due: make its delay the current one. Returns when the change after it
    /// is due.
    pub fn apply_change(&mut self) -> Option<Time> {
        if let Some(&(_, d)) = self.changes.get(self.applied) {
            self.delay = d;
            self.applied += 1;
        }
        self.until = self
            .changes
            .get(self.applied)
            .map_or(Time::MAX, |&(t, _)| t);
        self.next_change()
    }
}

/// A delay line as an element: each packet leaves `DelayModel` after it arrives.
#[derive(Debug)]
pub struct Delay<P> {
    /// The model.
    pub model: DelayModel,
    line: VecDeque<(Time, P)>,
}

impl<P> Delay<P> {
    /// A delay line following `model`.
    #[must_use]
    pub fn new(model: DelayModel) -> Self {
        Delay {
            model,
            line: VecDeque::new(),
        }
    }
}

impl<P: NetPacket> Element<P> for Delay<P> {
    fn process(&mut self, now: Time, pkt: Option<P>) -> Output<P> {
        while self.model.next_change().is_some_and(|t| t <= now) {
            self.model.apply_change();
        }
        if let Some(p) = pkt {
            let arrival = self.model.take_arrival(now);
            self.line.push_back((arrival, p));
        }
        match self.line.front() {
            Some(&(t, _)) if t <= now => Output::Packet(self.line.pop_front().expect("head").1),
            Some(&(t, _)) => Output::Wake(t),
            None => Output::Idle,
        }
    }

    fn held(&self) -> usize {
        self.line.len()
    }

    fn held_data(&self) -> usize {
        self.line.iter().filter(|(_, p)| p.is_data()).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::test_packet;

    const MS: u64 = 1_000_000;

    /// 10 ms, dropping to 2 ms at 5 ms: packets in at 0 and 4 ms take 10 ms (10, 14 ms); the
    /// one in at 6 ms takes 2 ms, 8 ms, but may not overtake: it leaves right behind, at 14 ms.
    #[test]
    fn delay_element_follows_changes_in_order() {
        let mut d = Delay::new(DelayModel::new(
            Dur(10 * MS),
            &[(Time(5 * MS), Dur(2 * MS))],
        ));
        assert_eq!(
            d.process(Time(0), Some(test_packet(0, 0))),
            Output::Wake(Time(10 * MS))
        );
        assert_eq!(
            d.process(Time(4 * MS), Some(test_packet(1, 0))),
            Output::Wake(Time(10 * MS))
        );
        assert_eq!(
            d.process(Time(6 * MS), Some(test_packet(2, 0))),
            Output::Wake(Time(10 * MS))
        );
        assert_eq!(d.held(), 3);
        let mut out = Vec::new();
        for t in [10 * MS, 14 * MS] {
            while let Output::Packet(p) = d.process(Time(t), None) {
                out.push((t, p.data_segment().unwrap().1));
            }
        }
        assert_eq!(out, vec![(10 * MS, 0), (14 * MS, 1), (14 * MS, 2)]);
        assert_eq!(d.process(Time(20 * MS), None), Output::Idle);
    }
}
