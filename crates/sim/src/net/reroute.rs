//! Route changes: a router that sends packets over one of several paths and switches between
//! them on a period or a schedule, as an SDN rule update or a route change does.
//!
//! Contract: [`Reroute`] holds N ≥ 2 [`PathSpec`]s, each a one-way `delay` and an optional
//! `rate`: a path with a rate is a FIFO transmitter serialising at that rate
//! ([`Dur::serialization`]) behind a tail-drop buffer of `limit` (packets or bytes queued, not
//! counting the one being serialised, as the links' [`QueueLimit`]); a path without a rate is a
//! pure delay line. A packet takes the path that is active when it arrives and keeps it: it
//! leaves at the end of its serialisation on that path plus the path's delay. Each path is
//! FIFO, so packets reorder only across paths: after a switch from a long path to a shorter
//! one, the first packets on the new path overtake the last ones on the old path for as long as
//! the delay difference lasts; a switch from a short path to a longer one never reorders (its
//! first packets arrive after the old path's last ones, with a gap of the delay difference). Of
//! packets leaving at the same instant, the lower path index goes first.
//!
//! The active path is a function of time alone ([`Switching`]): on a period, path 0 until
//! `offset + period`, then the next path every `period`, cycling through the paths in order
//! (route flaps, e.g. every 3, 5 or 10 s); or a schedule of (time, path) entries, path 0
//! before the first. A *switch* is an instant after 0 at which the active path changes (a
//! schedule entry naming the path already active is none). Nothing is random, so runs are
//! deterministic without a seed. On a node the element sees both directions of every flow
//! through the node (data and ACKs alike take the active path).
//!
//! What a switch does to packets is the [`SwitchMode`]; at a switch at `s` a packet of the old
//! path is *queued* if its serialisation has not begun (it begins after `s`), *on the wire* if
//! it is being serialised or propagating (begun at or before `s`, leaving after `s`):
//! - [`SwitchMode::Drain`] (default): nothing is lost; queued and on-the-wire packets leave by
//!   the old path as if nothing had happened (make-before-break: an OpenFlow flow-mod changes
//!   the lookup of packets that arrive after it, not packets already switched to an output
//!   queue).
//! - [`SwitchMode::DropQueue`]: the old path's queued packets are lost at `s`; those on the wire
//!   arrive (the old egress interface taken down: Linux flushes its qdisc).
//! - [`SwitchMode::DropPath`]: everything still on the old path at `s` is lost, queued and on
//!   the wire (the old link fails, or ns-3's `Ipv4::SetDown` on its far end, which drops every
//!   packet that then arrives over it).
//! - [`SwitchMode::Blackout`]: every packet arriving in `[s, s + gap)` is lost (the old rule is
//!   deleted and the new one installed `gap` later: a controller round trip, or a delete and an
//!   add ordered by a barrier); the old path drains.
//!
//! Losses are counted per kind ([`Reroute::queue_dropped`], [`Reroute::wire_dropped`],
//! [`Reroute::blackout_dropped`], besides [`Reroute::dropped`] at a full buffer); the engine
//! counts the data segments among them in `data_packets_dropped`, as every element's drops.
//! The drop modes are applied lazily, at the first call at or after a switch (the lane's state
//! at `s` follows from its departure times), and the element asks to be woken at the next
//! switch while it holds packets, so nothing it will lose is counted as held after the switch.

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

/// What a switch does to packets (see the module documentation for the cases it models).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SwitchMode {
    /// Lossless, make-before-break: packets on the old path leave by it.
    #[default]
    Drain,
    /// Packets queued on the old path (serialisation not begun) are lost at the switch.
    DropQueue,
    /// Packets queued, being serialised or propagating on the old path are lost at the switch.
    DropPath,
    /// Packets arriving within this long after the switch are lost (> 0, shorter than the
    /// time between switches); the old path drains.
    Blackout(Dur),
}

impl SwitchMode {
    /// The names scenario files use, in the order of the variants.
    pub const NAMES: [&'static str; 4] = ["drain", "drop_queue", "drop_path", "blackout"];

    /// What is wrong with this mode for `switching`, if anything.
    #[must_use]
    pub fn problem(self, switching: &Switching, paths: usize) -> Option<String> {
        let SwitchMode::Blackout(gap) = self else {
            return None;
        };
        if gap == Dur::ZERO {
            return Some(
                "a blackout must be longer than 0 (switch = \"drain\" has none)".to_owned(),
            );
        }
        match switching.min_interval(paths) {
            Some(between) if gap >= between => Some(format!(
                "a blackout of {} s must be shorter than the {} s between switches",
                gap.as_secs_f64(),
                between.as_secs_f64()
            )),
            _ => None,
        }
    }
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

    /// Whether schedule entry `i` is a switch: after 0 and naming another path than the one
    /// active before it.
    fn entry_switches(entries: &[(Time, usize)], i: usize) -> bool {
        let before = i.checked_sub(1).map_or(0, |j| entries[j].1);
        entries[i].0 > Time::ZERO && entries[i].1 != before
    }

    /// The last switch at or before `now`, if any.
    #[must_use]
    pub fn last_switch(&self, now: Time, paths: usize) -> Option<Time> {
        match self {
            Switching::Period { period, offset } => {
                let period = period.as_nanos().max(1);
                let since = now.saturating_since(Time::ZERO + *offset).as_nanos();
                let k = since / period;
                (k >= 1).then(|| Time::ZERO + *offset + Dur(k * period))
            }
            Switching::Schedule(entries) => {
                let passed = entries.partition_point(|&(t, _)| t <= now);
                (0..passed)
                    .rev()
                    .find(|&i| Self::entry_switches(entries, i))
                    .map(|i| entries[i].0)
            }
        }
        .filter(|_| paths >= 2)
    }

    /// The first switch after `t`, if any.
    #[must_use]
    pub fn next_switch(&self, t: Time, paths: usize) -> Option<Time> {
        match self {
            Switching::Period { period, offset } => {
                let period = period.as_nanos().max(1);
                let since = t.saturating_since(Time::ZERO + *offset).as_nanos();
                let k = (since / period + 1).max(1);
                Some(Time::ZERO + *offset + Dur(k.saturating_mul(period)))
            }
            Switching::Schedule(entries) => {
                let passed = entries.partition_point(|&(e, _)| e <= t);
                (passed..entries.len())
                    .find(|&i| Self::entry_switches(entries, i))
                    .map(|i| entries[i].0)
            }
        }
        .filter(|_| paths >= 2)
    }

    /// The shortest time between two successive switches (`None` with fewer than two).
    #[must_use]
    pub fn min_interval(&self, paths: usize) -> Option<Dur> {
        match self {
            Switching::Period { period, .. } => Some(*period),
            Switching::Schedule(entries) => {
                let times: Vec<Time> = (0..entries.len())
                    .filter(|&i| Self::entry_switches(entries, i))
                    .map(|i| entries[i].0)
                    .collect();
                times.windows(2).map(|w| w[1] - w[0]).min()
            }
        }
        .filter(|_| paths >= 2)
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
    /// Time to serialise `bytes` on this path (zero on a delay line).
    fn serialization(&self, bytes: u32) -> Dur {
        self.spec
            .rate_bps
            .map_or(Dur::ZERO, |r| Dur::serialization(u64::from(bytes), r))
    }

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

    /// Lose, as the path stood at `at`, its queued packets (serialisation begun after `at`)
    /// and, with `wire`, also those being serialised or propagating (leaving after `at`);
    /// packets that left by `at` are not touched. Returns (queued, on the wire) lost. A
    /// packet's serialisation began at its departure less the delay and its serialisation
    /// time (exact: `accept` computed the departure from them).
    fn cut(&mut self, at: Time, wire: bool) -> (u64, u64) {
        let (mut queued, mut on_wire) = (0, 0);
        let delay = self.spec.delay;
        let rate = self.spec.rate_bps;
        self.flight.retain(|&(depart, ref p)| {
            let ser = rate.map_or(Dur::ZERO, |r| {
                Dur::serialization(u64::from(p.wire_bytes()), r)
            });
            if depart > at + delay + ser {
                queued += 1;
                false
            } else if wire && depart > at {
                on_wire += 1;
                false
            } else {
                true
            }
        });
        // The transmitter keeps what finished by `at` and, unless the wire is cut, the packet
        // it is serialising.
        while let Some(&(done, bytes)) = self.backlog.back() {
            let keep = if wire {
                done <= at
            } else {
                done <= at + self.serialization(bytes)
            };
            if keep {
                break;
            }
            self.backlog.pop_back();
            self.backlog_bytes -= u64::from(bytes);
        }
        self.busy_until = self
            .backlog
            .back()
            .map_or(self.busy_until.min(at), |&(done, _)| done);
        (queued, on_wire)
    }
}

/// A router switching between paths.
#[derive(Debug)]
pub struct Reroute<P> {
    lanes: Vec<Lane<P>>,
    switching: Switching,
    mode: SwitchMode,
    /// The path active after the last switch applied (drop modes).
    current: usize,
    /// When the last switch applied happened (drop modes).
    applied: Time,
    /// Packets taken per path.
    pub carried: Vec<u64>,
    /// Packets dropped at a full path buffer.
    pub dropped: u64,
    /// Packets lost at a switch while queued on the old path ([`SwitchMode::DropQueue`],
    /// [`SwitchMode::DropPath`]).
    pub queue_dropped: u64,
    /// Packets lost at a switch while being serialised or propagating on the old path
    /// ([`SwitchMode::DropPath`]).
    pub wire_dropped: u64,
    /// Packets lost for arriving during a blackout ([`SwitchMode::Blackout`]).
    pub blackout_dropped: u64,
}

impl<P: NetPacket> Reroute<P> {
    /// A lossless router ([`SwitchMode::Drain`]) over `paths` (at least 2) switching by
    /// `switching`.
    ///
    /// # Panics
    /// With fewer than 2 paths or a switching [`Switching::problem`] rejects (a configuration
    /// is checked before it is built: `ElementSpec::problem`).
    #[must_use]
    pub fn new(paths: &[PathSpec], switching: Switching) -> Self {
        Self::with_mode(paths, switching, SwitchMode::Drain)
    }

    /// A router over `paths` (at least 2) switching by `switching`, a switch doing what
    /// `mode` says.
    ///
    /// # Panics
    /// With fewer than 2 paths, or a switching or mode that [`Switching::problem`] or
    /// [`SwitchMode::problem`] rejects.
    #[must_use]
    pub fn with_mode(paths: &[PathSpec], switching: Switching, mode: SwitchMode) -> Self {
        assert!(paths.len() >= 2, "a reroute needs at least 2 paths");
        let problem = switching
            .problem(paths.len())
            .or_else(|| mode.problem(&switching, paths.len()));
        assert!(problem.is_none(), "{problem:?}");
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
            current: switching.active(Time::ZERO, paths.len()),
            switching,
            mode,
            applied: Time::ZERO,
            carried: vec![0; paths.len()],
            dropped: 0,
            queue_dropped: 0,
            wire_dropped: 0,
            blackout_dropped: 0,
        }
    }

    /// The path a packet arriving at `now` takes.
    #[must_use]
    pub fn active(&self, now: Time) -> usize {
        self.switching.active(now, self.lanes.len())
    }

    /// Apply the drop mode to every switch in (`applied`, `now`], in order.
    fn apply_switches(&mut self, now: Time) {
        let wire = match self.mode {
            SwitchMode::DropQueue => false,
            SwitchMode::DropPath => true,
            SwitchMode::Drain | SwitchMode::Blackout(_) => return,
        };
        let n = self.lanes.len();
        while let Some(s) = self
            .switching
            .next_switch(self.applied, n)
            .filter(|&s| s <= now)
        {
            let (queued, on_wire) = self.lanes[self.current].cut(s, wire);
            self.queue_dropped += queued;
            self.wire_dropped += on_wire;
            self.current = self.switching.active(s, n);
            self.applied = s;
        }
    }

    /// Whether a packet arriving at `now` falls in a blackout.
    fn blacked_out(&self, now: Time) -> bool {
        let SwitchMode::Blackout(gap) = self.mode else {
            return false;
        };
        self.switching
            .last_switch(now, self.lanes.len())
            .is_some_and(|s| now < s + gap)
    }
}

impl<P: NetPacket> Element<P> for Reroute<P> {
    fn process(&mut self, now: Time, pkt: Option<P>) -> Output<P> {
        self.apply_switches(now);
        if let Some(p) = pkt {
            let i = self.active(now);
            if self.blacked_out(now) {
                self.blackout_dropped += 1;
            } else if self.lanes[i].accept(now, p) {
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
            Some((t, _)) => {
                // A drop mode loses packets at the next switch: be there to count them.
                let cut = match self.mode {
                    SwitchMode::DropQueue | SwitchMode::DropPath => {
                        self.switching.next_switch(now, self.lanes.len())
                    }
                    SwitchMode::Drain | SwitchMode::Blackout(_) => None,
                };
                Output::Wake(cut.map_or(t, |s| s.min(t)))
            }
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

    fn ms(x: f64) -> Time {
        Time::from_secs_f64(x / 1000.0)
    }

    /// Path 0 serialises 1500-byte packets in 1 ms each (12 Mbit/s) before 10 ms of delay;
    /// path 1 is a 10 ms delay line.
    fn slow_and_line() -> [PathSpec; 2] {
        [
            PathSpec {
                delay: Dur::from_millis(10),
                rate_bps: Some(12_000_000),
                limit: QueueLimit::Packets(100),
            },
            path(10),
        ]
    }

    /// A burst of 10 at 0 ms onto path 0 (serialised over [i, i + 1) ms, leaving at
    /// 11 + i ms), a switch to path 1 at `switch_ms` and back at 3.7 ms, then one packet (10)
    /// at 3.8 ms, on path 0 again.
    fn burst_then_switch(mode: SwitchMode, switch_ms: f64) -> (Vec<(Time, u64)>, Reroute<Packet>) {
        let mut r = Reroute::with_mode(
            &slow_and_line(),
            Switching::Schedule(vec![(ms(switch_ms), 1), (ms(3.7), 0)]),
            mode,
        );
        let mut arrivals: Vec<(Time, u64)> = (0..10).map(|i| (Time::ZERO, i)).collect();
        arrivals.push((ms(3.8), 10));
        let out = run(&mut r, &arrivals);
        (out, r)
    }

    use crate::packet::Packet;

    /// Drain loses nothing: the burst leaves by path 0 at 11..=20 ms although the route
    /// moved away at 3.5 ms, and packet 10 queues behind it on path 0 (serialised over
    /// [10, 11) ms, leaving at 21 ms).
    #[test]
    fn drain_keeps_every_packet() {
        let (out, r) = burst_then_switch(SwitchMode::Drain, 3.5);
        let mut expect: Vec<(Time, u64)> =
            (0..10).map(|i| (Time((11 + i) * 1_000_000), i)).collect();
        expect.push((ms(21.0), 10));
        assert_eq!(out, expect);
        assert_eq!(
            (
                r.dropped,
                r.queue_dropped,
                r.wire_dropped,
                r.blackout_dropped
            ),
            (0, 0, 0, 0)
        );
    }

    /// At the switch at 3.5 ms packets 0–2 are propagating, 3 is being serialised (over
    /// [3, 4) ms) and 4–9 wait in the buffer. `drop_queue` loses exactly those 6; 0–3 leave at
    /// 11–14 ms, and packet 10, back on path 0, waits only for packet 3's serialisation: over
    /// [4, 5) ms, leaving at 15 ms. `drop_path` loses all 10; the transmitter stopped at the
    /// switch, so packet 10 is serialised at once, over [3.8, 4.8) ms, leaving at 14.8 ms.
    #[test]
    fn drop_modes_lose_exactly_the_old_paths_packets() {
        let (out, r) = burst_then_switch(SwitchMode::DropQueue, 3.5);
        let mut expect: Vec<(Time, u64)> =
            (0..4).map(|i| (Time((11 + i) * 1_000_000), i)).collect();
        expect.push((ms(15.0), 10));
        assert_eq!(out, expect);
        assert_eq!((r.queue_dropped, r.wire_dropped, r.dropped), (6, 0, 0));
        let (out, r) = burst_then_switch(SwitchMode::DropPath, 3.5);
        assert_eq!(out, vec![(ms(14.8), 10)]);
        assert_eq!((r.queue_dropped, r.wire_dropped, r.dropped), (6, 4, 0));
        // A switch at 3 ms, the instant packet 2 finishes and 3 begins: 3 is on the wire.
        let (_, r) = burst_then_switch(SwitchMode::DropQueue, 3.0);
        assert_eq!((r.queue_dropped, r.wire_dropped), (6, 0));
        let (_, r) = burst_then_switch(SwitchMode::DropPath, 3.0);
        assert_eq!((r.queue_dropped, r.wire_dropped), (6, 4));
        // Pure delay lines have no queue: drop_queue loses nothing, drop_path what propagates.
        let mut r: Reroute<Packet> = Reroute::with_mode(
            &[path(50), path(20)],
            Switching::Schedule(vec![(ms(100.0), 1)]),
            SwitchMode::DropQueue,
        );
        let arrivals: Vec<(Time, u64)> = (0..200).map(|i| (Time(i * 1_000_000), i)).collect();
        assert_eq!(run(&mut r, &arrivals).len(), 200);
        let mut r: Reroute<Packet> = Reroute::with_mode(
            &[path(50), path(20)],
            Switching::Schedule(vec![(ms(100.0), 1)]),
            SwitchMode::DropPath,
        );
        // Left by 100 ms: arrivals 0..=50 (the one at 50 ms leaves at the switch instant).
        let out = run(&mut r, &arrivals);
        assert_eq!((out.len(), r.wire_dropped, r.queue_dropped), (151, 49, 0));
        assert!(out.iter().all(|&(_, seq)| seq <= 50 || seq >= 100));
    }

    /// The state at the switch is reconstructed when the element is next called, however
    /// late: asked first at 12 ms (its wake-up at the switch skipped), `drop_queue` still
    /// hands on packets 0 (due at 11 ms) and 1 (12 ms) and has lost 4–9.
    #[test]
    fn drop_applies_at_the_switch_even_if_called_later() {
        let mut r: Reroute<Packet> = Reroute::with_mode(
            &slow_and_line(),
            Switching::Schedule(vec![(ms(3.5), 1)]),
            SwitchMode::DropQueue,
        );
        for i in 0..10 {
            let o = r.process(Time::ZERO, Some(test_packet(i, 0)));
            assert_eq!(o, Output::Wake(ms(3.5)), "woken at the switch");
        }
        let mut got = Vec::new();
        let mut o = r.process(ms(12.0), None);
        while let Output::Packet(p) = o {
            got.push(p.data_segment().unwrap().1);
            o = r.process(ms(12.0), None);
        }
        assert_eq!((got, o), (vec![0, 1], Output::Wake(ms(13.0))));
        assert_eq!((r.queue_dropped, r.held()), (6, 2));
    }

    /// A packet every 1 ms over paths of 50 and 20 ms flipping every 100 ms with a 10 ms
    /// blackout: exactly the arrivals in [100, 110) and [200, 210) ms are lost (the one at
    /// 110 ms goes on); the old path drains, so everything else arrives.
    #[test]
    fn blackout_drops_exactly_the_arrivals_in_the_gap() {
        let mut r: Reroute<Packet> = Reroute::with_mode(
            &[path(50), path(20)],
            Switching::Period {
                period: Dur::from_millis(100),
                offset: Dur::ZERO,
            },
            SwitchMode::Blackout(Dur::from_millis(10)),
        );
        let arrivals: Vec<(Time, u64)> = (0..300).map(|i| (Time(i * 1_000_000), i)).collect();
        let out = run(&mut r, &arrivals);
        let mut seqs: Vec<u64> = out.iter().map(|&(_, s)| s).collect();
        seqs.sort_unstable();
        let expect: Vec<u64> = (0..300)
            .filter(|s| !(100..110).contains(s) && !(200..210).contains(s))
            .collect();
        assert_eq!(seqs, expect);
        assert_eq!((r.blackout_dropped, r.carried.clone()), (20, vec![190, 90]));
    }

    /// Same configuration, same arrivals: the same departures and counters, every mode.
    #[test]
    fn deterministic() {
        let arrivals: Vec<(Time, u64)> = (0..400).map(|i| (Time(i * 700_000), i % 7)).collect();
        for mode in [
            SwitchMode::Drain,
            SwitchMode::DropQueue,
            SwitchMode::DropPath,
            SwitchMode::Blackout(Dur::from_millis(3)),
        ] {
            let go = || {
                let mut r: Reroute<Packet> = Reroute::with_mode(
                    &slow_and_line(),
                    Switching::Period {
                        period: Dur::from_millis(20),
                        offset: Dur::from_millis(5),
                    },
                    mode,
                );
                let out = run(&mut r, &arrivals);
                (
                    out,
                    r.carried,
                    r.queue_dropped,
                    r.wire_dropped,
                    r.blackout_dropped,
                )
            };
            let a = go();
            assert_eq!(a, go(), "{mode:?}");
            assert_eq!(
                a.0.len() as u64 + a.2 + a.3 + a.4,
                400,
                "{mode:?}: every packet delivered or counted"
            );
        }
    }

    /// Switch instants: a period's, from `offset + period` on; a schedule's entries that
    /// change the path after 0 (not one naming the active path, nor one at 0).
    #[test]
    fn switch_instants() {
        let s = Switching::Period {
            period: Dur::from_secs(5),
            offset: Dur::from_secs(1),
        };
        let t = Time::from_secs_f64;
        assert_eq!(s.last_switch(t(5.9), 2), None);
        assert_eq!(s.last_switch(t(6.0), 2), Some(t(6.0)));
        assert_eq!(s.last_switch(t(12.0), 2), Some(t(11.0)));
        assert_eq!(s.next_switch(t(0.0), 2), Some(t(6.0)));
        assert_eq!(s.next_switch(t(6.0), 2), Some(t(11.0)));
        assert_eq!(s.min_interval(2), Some(Dur::from_secs(5)));
        let s = Switching::Schedule(vec![(t(0.0), 1), (t(2.0), 1), (t(3.0), 0), (t(3.5), 1)]);
        assert_eq!(s.last_switch(t(2.9), 2), None);
        assert_eq!(s.last_switch(t(3.2), 2), Some(t(3.0)));
        assert_eq!(s.next_switch(t(0.0), 2), Some(t(3.0)));
        assert_eq!(s.next_switch(t(3.5), 2), None);
        assert_eq!(s.min_interval(2), Some(Dur::from_millis(500)));
        let gap = |ms| SwitchMode::Blackout(Dur::from_millis(ms));
        assert!(gap(0).problem(&s, 2).is_some());
        assert!(gap(500).problem(&s, 2).is_some());
        assert!(gap(499).problem(&s, 2).is_none());
        assert!(SwitchMode::DropPath.problem(&s, 2).is_none());
    }
}
