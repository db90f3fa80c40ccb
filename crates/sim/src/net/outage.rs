//! Outages and loss bursts: intervals during which a node delivers nothing.
//!
//! Contract: [`Outage`] is given intervals `[start, start + duration)` (sorted, not
//! overlapping). A packet that arrives outside them leaves at once. One that arrives inside is
//! either lost ([`OutageMode::Drop`]: a loss burst at a given time, or a link that is down) or
//! held until the interval ends and then handed on in arrival order, before anything that
//! arrives later ([`OutageMode::Hold`]: a handover in which the radio buffers what it cannot
//! send, as 3GPP TS 36.300 §10.1.2.1 data forwarding does, with an unbounded buffer). Packets
//! already past the node when an outage begins are not affected. No randomness.

use cclab_cc::{Dur, Time};

use super::jitter::Line;
use super::{Element, NetPacket, Output};

/// What an outage does with the packets that arrive during it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutageMode {
    /// They are lost.
    Drop,
    /// They wait for the end of the outage.
    Hold,
}

/// Intervals during which nothing is delivered.
#[derive(Debug)]
pub struct Outage<P> {
    intervals: Box<[(Time, Dur)]>,
    /// First interval that has not ended yet.
    next: usize,
    mode: OutageMode,
    line: Line<P>,
    /// Packets lost so far.
    pub lost: u64,
}

impl<P: NetPacket> Outage<P> {
    /// Outages over `intervals` (`(start, duration)`, sorted by start, not overlapping).
    #[must_use]
    pub fn new(intervals: &[(Time, Dur)], mode: OutageMode) -> Self {
        Outage {
            intervals: intervals.into(),
            next: 0,
            mode,
            line: Line::new(false),
            lost: 0,
        }
    }

    /// The end of the outage `now` falls in, if any.
    fn outage_end(&mut self, now: Time) -> Option<Time> {
        while let Some(&(s, d)) = self.intervals.get(self.next) {
            if s + d <= now {
                self.next += 1;
            } else {
                return (s <= now).then_some(s + d);
            }
        }
        None
    }
}

/// What is wrong with a list of outage intervals, if anything: unsorted or overlapping ones.
#[must_use]
pub fn intervals_problem(intervals: &[(Time, Dur)]) -> Option<String> {
    intervals.windows(2).find_map(|w| {
        (w[1].0 < w[0].0 + w[0].1).then(|| {
            format!(
                "interval at {} starts before the one at {} ends",
                w[1].0, w[0].0
            )
        })
    })
}

impl<P: NetPacket> Element<P> for Outage<P> {
    fn process(&mut self, now: Time, pkt: Option<P>) -> Output<P> {
        if let Some(p) = pkt {
            match (self.outage_end(now), self.mode) {
                (Some(_), OutageMode::Drop) => self.lost += 1,
                (Some(end), OutageMode::Hold) => {
                    self.line.push(end, p);
                }
                (None, _) => {
                    self.line.push(now, p);
                }
            }
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

    /// Packets every millisecond for 100 ms through an outage over [20 ms, 50 ms): with `Drop`
    /// exactly the 30 packets inside it are lost and the others leave at once; with `Hold` the
    /// 30 leave together at 50 ms, in order, before the packet that arrives at 50 ms, and
    /// nothing leaves inside the interval.
    #[test]
    fn outages_deliver_nothing_inside_the_interval() {
        for mode in [OutageMode::Drop, OutageMode::Hold] {
            let mut o: Outage<crate::packet::Packet> =
                Outage::new(&[(Time(20 * MS), Dur(30 * MS))], mode);
            let mut out = Vec::new();
            let mut wake = None;
            for i in 0..100u64 {
                let now = Time(i * MS);
                let mut r = match wake {
                    Some(t) if t <= now => o.process(t, None),
                    _ => Output::Idle,
                };
                while let Output::Packet(p) = r {
                    out.push((wake.unwrap().0, p.data_segment().unwrap().1));
                    r = o.process(wake.unwrap(), None);
                }
                let mut r = o.process(now, Some(test_packet(i, 0)));
                wake = None;
                loop {
                    match r {
                        Output::Packet(p) => out.push((now.0, p.data_segment().unwrap().1)),
                        Output::Wake(t) => {
                            wake = Some(t);
                            break;
                        }
                        Output::Idle => break,
                    }
                    r = o.process(now, None);
                }
            }
            assert!(out.iter().all(|&(t, _)| !(20 * MS..50 * MS).contains(&t)));
            match mode {
                OutageMode::Drop => {
                    assert_eq!(o.lost, 30);
                    assert_eq!(out.len(), 70);
                    assert!(out.iter().all(|&(t, s)| t == s * MS));
                }
                OutageMode::Hold => {
                    assert_eq!(o.lost, 0);
                    let seqs: Vec<u64> = out.iter().map(|&(_, s)| s).collect();
                    assert_eq!(seqs, (0..100).collect::<Vec<_>>());
                    assert!(out[20..=50].iter().all(|&(t, _)| t == 50 * MS));
                }
            }
        }
        assert!(
            intervals_problem(&[(Time(0), Dur(10)), (Time(5), Dur(1))])
                .unwrap()
                .contains("starts before")
        );
    }
}
