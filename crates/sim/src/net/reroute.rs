//! Route changes: a router that sends packets over one of several paths and switches between
//! them on a period or a schedule.
//!
//! Contract: [`Reroute`] holds N ≥ 2 [`PathSpec`]s, each a one-way `delay` and an optional
//! `rate`: a path with a rate is a FIFO transmitter serialising at that rate
//! ([`Dur::serialization`]) behind a tail-drop buffer of `limit` (packets or bytes queued, not
//! counting the one being serialised, as the links' [`QueueLimit`]); a path without a rate is a
//! pure delay line. A packet takes the path that is active when it arrives and keeps it: it
//! leaves at the end of its serialisation on that path plus the path's delay. A switch changes
//! only where new arrivals go; packets already queued or propagating on the old path drain on it
//! as if nothing had happened. Each path is FIFO, so packets reorder only across paths: after a
//! switch from a long path to a shorter one, the first packets on the new path overtake the last
//! ones on the old path for as long as the delay difference lasts; a switch from a short path to
//! a longer one never reorders (its first packets arrive after the old path's last ones, with a
//! gap of the delay difference). Of packets leaving at the same instant, the lower path index
//! goes first.
//!
//! The active path is a function of time alone ([`Switching`]): on a period, path 0 until
//! `offset + period`, then the next path every `period`, cycling through the paths in order
//! (route flaps, e.g. every 3, 5 or 10 s); or a schedule of (time, path) entries, path 0
//! before the first. Nothing is random, so runs are deterministic without a seed. On a node the element sees both directions of
//! every flow through the node (data and ACKs alike take the active path).

use std::collections::VecDeque;

use cclab_cc::{Dur, Time};

use super::{Element, NetPacket, Output};
use crate::config::QueueLimit;

/// One path of a [`Reroute`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PathSpec {
    /// One-way propagation delay added to every packet on the path.
    pub delay: Dur,
    /// Serialisation rate in bit/s (`None`: no transmitter, a pure delay line).
    pub rate_bps: Option<u64>,
    /// Buffer in front of the transmitter (ignored without a rate).
    pub limit: QueueLimit,
}

/// When a [`Reroute`] switches.
#[derive(Clone, Debug, PartialEq)]
pub enum Switching {
    /// Path 0 until `offset + period`, then the next path (cyclically) every `period`.
    Period {
        /// Time between switches (> 0).
        period: Dur,
        /// Extra time before the first switch.
        offset: Dur,
    },
    /// `(time, path)` entries in increasing time: from each time on, that path; path 0 before
    /// the first.
    Schedule(Vec<(Time, usize)>),
}

impl Switching {
    /// What is wrong with this switching for `paths` paths, if anything.
    #[must_use]
    pub fn problem(&self, paths: usize) -> Option<String> {
        match self {
            Switching::Period { period, .. } if *period == Dur::ZERO => {
                Some("the switching period must be longer than 0".to_owned())
            }
            Switching::Period { .. } => None,
            Switching::Schedule(entries) => {
                if let Some(w) = entries.windows(2).find(|w| w[1].0 <= w[0].0) {
                    return Some(format!(
                        "schedule times must increase: {} s after {} s",
                        w[1].0.as_secs_f64(),
                        w[0].0.as_secs_f64()
                    ));
                }
                entries.iter().find(|e| e.1 >= paths).map(|e| {
                    format!(
                        "schedule names path {} but there are {paths} paths (0..={})",
                        e.1,
                        paths - 1
                    )
                })
            }
        }
    }

    /// The path active at `now` among `paths` paths.
    #[must_use]
    pub fn active(&self, now: Time, paths: usize) -> usize {
        match self {
            Switching::Period { period, offset } => {
                let since = now.saturating_since(Time::ZERO + *offset).as_nanos();
                let switches = since / period.as_nanos().max(1);
                usize::try_from(switches % paths as u64).unwrap_or(0)
            }
            Switching::Schedule(entries) => {
                let passed = entries.partition_point(|&(t, _)| t <= now);
                passed.checked_sub(1).map_or(0, |i| entries[i].1)
            }
        }
    }
}

/// One path's state.
#[derive(Debug)]
struct Lane<P> {
    spec: PathSpec,
    /// When the transmitter finishes what it has accepted.
    busy_until: Time,
    /// End of serialisation and wire bytes of each packet accepted and not yet serialised.
    backlog: VecDeque<(Time, u32)>,
    /// Bytes in `backlog`.
    backlog_bytes: u64,
    /// Packets on the path with their departure times (nondecreasing: FIFO).
    flight: VecDeque<(Time, P)>,
}

impl<P: NetPacket> Lane<P> {
    /// Take `pkt` at `now`; false if the buffer is full.
    fn accept(&mut self, now: Time, pkt: P) -> bool {
        let Some(rate) = self.spec.rate_bps else {
            self.flight.push_back((now + self.spec.delay, pkt));
            return true;
        };
        while self.backlog.front().is_some_and(|&(done, _)| done <= now) {
            let (_, bytes) = self.backlog.pop_front().expect("checked");
            self.backlog_bytes -= u64::from(bytes);
        }
        // The packet being serialised (the front of the backlog, if its serialisation has
        // started) does not count against the buffer.
        let queued = self.backlog.len().saturating_sub(1);
        let queued_bytes = self
            .backlog_bytes
            .saturating_sub(self.backlog.front().map_or(0, |&(_, b)| u64::from(b)));
        let full = match self.spec.limit {
            QueueLimit::Packets(n) => queued >= n as usize,
            QueueLimit::Bytes(b) => queued_bytes + u64::from(pkt.wire_bytes()) > b,
        };
        if full && !self.backlog.is_empty() {
            return false;
        }
        let start = self.busy_until.max(now);
        let done = start + Dur::serialization(u64::from(pkt.wire_bytes()), rate);
        self.busy_until = done;
        self.backlog.push_back((done, pkt.wire_bytes()));
        self.backlog_bytes += u64::from(pkt.wire_bytes());
        self.flight.push_back((done + self.spec.delay, pkt));
        true
    }
}

/// A router switching between paths.
#[derive(Debug)]
pub struct Reroute<P> {
    lanes: Vec<Lane<P>>,
    switching: Switching,
    /// Packets taken per path.
    pub carried: Vec<u64>,
    /// Packets dropped at a full path buffer.
    pub dropped: u64,
}

impl<P: NetPacket> Reroute<P> {
    /// A router over `paths` (at least 2) switching by `switching`.
    ///
    /// # Panics
    /// With fewer than 2 paths or a switching [`Switching::problem`] rejects (a configuration
    /// is checked before it is built: `ElementSpec::problem`).
    #[must_use]
    pub fn new(paths: &[PathSpec], switching: Switching) -> Self {
        assert!(paths.len() >= 2, "a reroute needs at least 2 paths");
        assert!(
            switching.problem(paths.len()).is_none(),
            "{:?}",
            switching.problem(paths.len())
        );
        Reroute {
            lanes: paths
                .iter()
                .map(|&spec| Lane {
                    spec,
                    busy_until: Time::ZERO,
                    backlog: VecDeque::new(),
                    backlog_bytes: 0,
                    flight: VecDeque::new(),
                })
                .collect(),
            switching,
            carried: vec![0; paths.len()],
            dropped: 0,
        }
    }

    /// The path a packet arriving at `now` takes.
    #[must_use]
    pub fn active(&self, now: Time) -> usize {
        self.switching.active(now, self.lanes.len())
    }
}

impl<P: NetPacket> Element<P> for Reroute<P> {
    fn process(&mut self, now: Time, pkt: Option<P>) -> Output<P> {
        if let Some(p) = pkt {
            let i = self.active(now);
            if self.lanes[i].accept(now, p) {
                self.carried[i] += 1;
            } else {
                self.dropped += 1;
            }
        }
        // The earliest head of line over the paths (lowest index on a tie).
        let mut next: Option<(Time, usize)> = None;
        for (i, lane) in self.lanes.iter().enumerate() {
            if let Some(&(t, _)) = lane.flight.front()
                && next.is_none_or(|(best, _)| t < best)
            {
                next = Some((t, i));
            }
        }
        match next {
            Some((t, i)) if t <= now => {
                let (_, p) = self.lanes[i].flight.pop_front().expect("head exists");
                Output::Packet(p)
            }
            Some((t, _)) => Output::Wake(t),
            None => Output::Idle,
        }
    }

    fn held(&self) -> usize {
        self.lanes.iter().map(|l| l.flight.len()).sum()
    }

    fn held_data(&self) -> usize {
        self.lanes
            .iter()
            .map(|l| l.flight.iter().filter(|(_, p)| p.is_data()).count())
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::test_packet;
    use crate::packet::Payload;

    fn path(delay_ms: u64) -> PathSpec {
        PathSpec {
            delay: Dur::from_millis(delay_ms),
            rate_bps: None,
            limit: QueueLimit::Packets(100),
        }
    }

    /// Every packet `r` hands on by `until`, with its departure time, stepping through its
    /// wake-ups; packets arrive at the given times.
    fn run(r: &mut Reroute<crate::packet::Packet>, arrivals: &[(Time, u64)]) -> Vec<(Time, u64)> {
        let mut out = Vec::new();
        let mut take = |now: Time, mut o: Output<crate::packet::Packet>, r: &mut Reroute<_>| {
            while let Output::Packet(p) = o {
                let Payload::Data { seq, .. } = p.payload else {
                    unreachable!()
                };
                out.push((now, seq));
                o = r.process(now, None);
            }
            o
        };
        let mut wake = None;
        for &(t, seq) in arrivals {
            while let Some(w) = wake.filter(|&w| w <= t) {
                let o = r.process(w, None);
                wake = match take(w, o, r) {
                    Output::Wake(w) => Some(w),
                    _ => None,
                };
            }
            let o = r.process(t, Some(test_packet(seq, 0)));
            wake = match take(t, o, r) {
                Output::Wake(w) => Some(w),
                _ => None,
            };
        }
        while let Some(w) = wake {
            let o = r.process(w, None);
            wake = match take(w, o, r) {
                Output::Wake(w) => Some(w),
                _ => None,
            };
        }
        out
    }

    /// The period alternates 0, 1, 2, 0, … from `offset + period`; a schedule holds path 0
    /// before its first entry.
    #[test]
    fn active_path() {
        let s = Switching::Period {
            period: Dur::from_secs(5),
            offset: Dur::from_secs(1),
        };
        let at = |secs: f64| s.active(Time::from_secs_f64(secs), 3);
        assert_eq!(
            [at(0.0), at(5.9), at(6.0), at(10.9), at(11.0), at(16.0)],
            [0, 0, 1, 1, 2, 0]
        );
        let s = Switching::Schedule(vec![
            (Time::from_secs_f64(2.0), 1),
            (Time::from_secs_f64(3.0), 0),
        ]);
        let at = |secs: f64| s.active(Time::from_secs_f64(secs), 2);
        assert_eq!([at(1.9), at(2.0), at(2.9), at(3.0)], [0, 1, 1, 0]);
        assert!(
            Switching::Schedule(vec![(Time(2), 0), (Time(2), 1)])
                .problem(2)
                .is_some()
        );
        assert!(Switching::Schedule(vec![(Time(2), 2)]).problem(2).is_some());
        assert!(
            Switching::Period {
                period: Dur::ZERO,
                offset: Dur::ZERO
            }
            .problem(2)
            .is_some()
        );
    }

    /// Packets every 1 ms over paths of 50 ms and 20 ms switching long → short at 100 ms and
    /// short → long at 200 ms. Each leaves exactly its path's delay after arriving; the long →
    /// short switch lets the first packets on the short path overtake the ones that arrived on
    /// the long one less than the delay difference (30 ms) before the switch, i.e. in
    /// (70 ms, 100 ms): 29 packets (the one at 70 ms leaves together with the first short-path
    /// one, at 120 ms, and first, by path index); the short → long switch reorders nothing.
    #[test]
    fn long_to_short_reorders_by_the_delay_difference() {
        let mut r = Reroute::new(
            &[path(50), path(20)],
            Switching::Schedule(vec![
                (Time::from_secs_f64(0.1), 1),
                (Time::from_secs_f64(0.2), 0),
            ]),
        );
        let arrivals: Vec<(Time, u64)> = (0..300).map(|i| (Time(i * 1_000_000), i)).collect();
        let out = run(&mut r, &arrivals);
        assert_eq!(out.len(), 300);
        for &(t, seq) in &out {
            let delay = if (100..200).contains(&seq) { 20 } else { 50 };
            assert_eq!(t, Time((seq + delay) * 1_000_000), "segment {seq}");
        }
        // Packets that leave after a higher-numbered one: exactly those sent on the long path
        // in the last 30 ms before the long → short switch (71..100); none around the switch
        // back.
        let mut highest = 0;
        let mut late = Vec::new();
        for (i, &(_, seq)) in out.iter().enumerate() {
            if i > 0 && seq < highest {
                late.push(seq);
            }
            highest = highest.max(seq);
        }
        assert_eq!(late, (71..100).collect::<Vec<_>>());
        assert_eq!(r.carried, vec![200, 100]);
    }

    /// A path with a rate serialises: 1500-byte packets at 12 Mbit/s take 1 ms each, so a
    /// burst of 10 leaves 1 ms apart after the delay; the buffer of 3 (plus the one on the
    /// wire) drops the rest of a burst. A pure delay line never drops.
    #[test]
    fn rate_and_buffer() {
        let slow = PathSpec {
            delay: Dur::from_millis(10),
            rate_bps: Some(12_000_000),
            limit: QueueLimit::Packets(3),
        };
        let mut r = Reroute::new(&[slow, path(10)], Switching::Schedule(Vec::new()));
        let arrivals: Vec<(Time, u64)> = (0..10).map(|i| (Time::ZERO, i)).collect();
        let out = run(&mut r, &arrivals);
        assert_eq!(r.dropped, 6);
        let expect: Vec<(Time, u64)> = (0..4).map(|i| (Time((11 + i) * 1_000_000), i)).collect();
        assert_eq!(out, expect);
        let bytes = PathSpec {
            limit: QueueLimit::Bytes(4_500),
            ..slow
        };
        let mut r = Reroute::new(&[bytes, path(10)], Switching::Schedule(Vec::new()));
        assert_eq!(run(&mut r, &arrivals).len(), 4);
    }
}
