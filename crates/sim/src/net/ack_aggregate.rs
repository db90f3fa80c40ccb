//! ACK aggregation in time: pure ACKs are held and released together on a clock.
//!
//! Contract: [`AckAggregate`] holds every pure ACK ([`NetPacket::pure_ack`]) and releases all
//! it holds, in arrival order, at the release instants `phase + n·period` (n = 0, 1, …): an ACK
//! arriving at `t` leaves at the first instant at or after `t`. Everything else (data, probes)
//! passes at once. This is the ACK compression of a shared medium that grants the reverse
//! direction a transmit opportunity periodically (Wi-Fi aggregation, cellular uplink grants;
//! Mogul, "Observing TCP dynamics in real networks", SIGCOMM 1992; Pantheon's calibrated
//! emulators, Yan et al., USENIX ATC 2018, release about 10 ACKs every 200 ms on some paths).
//! Nothing is dropped and nothing is random.

use std::collections::VecDeque;

use cclab_cc::{Dur, Time};

use super::{Element, NetPacket, Output};

/// Holds pure ACKs and releases them every `period`.
#[derive(Debug)]
pub struct AckAggregate<P> {
    period: Dur,
    phase: Dur,
    /// Held ACKs with their release instants (nondecreasing).
    held: VecDeque<(Time, P)>,
    /// Release instants at which at least one ACK left.
    pub releases: u64,
    /// Instant of the last release counted in `releases`.
    last_release: Option<Time>,
}

impl<P: NetPacket> AckAggregate<P> {
    /// Release every `period` (> 0), the first release at `phase`.
    #[must_use]
    pub fn new(period: Dur, phase: Dur) -> Self {
        assert!(
            period > Dur::ZERO,
            "an aggregation period must be longer than 0"
        );
        AckAggregate {
            period,
            phase,
            held: VecDeque::new(),
            releases: 0,
            last_release: None,
        }
    }

    /// The first release instant at or after `now`.
    #[must_use]
    pub fn next_release(&self, now: Time) -> Time {
        let first = Time::ZERO + self.phase;
        if now <= first {
            return first;
        }
        let p = self.period.as_nanos();
        let n = (now.saturating_since(first).as_nanos()).div_ceil(p);
        first + Dur(n.saturating_mul(p))
    }
}

impl<P: NetPacket> Element<P> for AckAggregate<P> {
    fn process(&mut self, now: Time, pkt: Option<P>) -> Output<P> {
        if let Some(p) = pkt {
            if p.pure_ack().is_none() {
                return Output::Packet(p);
            }
            let at = self.next_release(now);
            self.held.push_back((at, p));
        }
        match self.held.front() {
            Some(&(t, p)) if t <= now => {
                self.held.pop_front();
                if self.last_release != Some(t) {
                    self.last_release = Some(t);
                    self.releases += 1;
                }
                Output::Packet(p)
            }
            Some(&(t, _)) => Output::Wake(t),
            None => Output::Idle,
        }
    }

    fn held(&self) -> usize {
        self.held.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::test_packet;
    use crate::packet::{Packet, Payload, SackBlocks};

    fn ack(n: u64) -> Packet {
        Packet {
            payload: Payload::Ack {
                ack: n,
                sack: SackBlocks::default(),
                dsack: false,
                tsecr: Time::ZERO,
                ece: false,
                ce_count: 0,
            },
            ..test_packet(0, 0)
        }
    }

    /// ACKs arriving every 20 ms leave in batches of 10 at 200 ms + n·200 ms (period 200 ms,
    /// phase 200 ms: Pantheon's 10-ACKs-every-200-ms case), in order; data passes at once.
    #[test]
    fn releases_in_batches() {
        let ms = |m: u64| Time(m * 1_000_000);
        let mut a = AckAggregate::new(Dur::from_millis(200), Dur::from_millis(200));
        let mut out: Vec<(Time, u64)> = Vec::new();
        let mut wake = None;
        let mut drain = |now: Time, mut r: Output<Packet>, a: &mut AckAggregate<Packet>| {
            while let Output::Packet(p) = r {
                if let Payload::Ack { ack, .. } = p.payload {
                    out.push((now, ack));
                }
                r = a.process(now, None);
            }
            match r {
                Output::Wake(t) => Some(t),
                _ => None,
            }
        };
        for i in 0..50u64 {
            let now = ms(1 + 20 * i);
            while let Some(w) = wake.filter(|&w| w <= now) {
                let r = a.process(w, None);
                wake = drain(w, r, &mut a);
            }
            assert_eq!(
                a.process(now, Some(test_packet(i, 0))),
                Output::Packet(test_packet(i, 0))
            );
            let r = a.process(now, Some(ack(i)));
            wake = drain(now, r, &mut a).or(wake);
        }
        while let Some(w) = wake {
            let r = a.process(w, None);
            wake = drain(w, r, &mut a);
        }
        assert_eq!(out.len(), 50);
        for (i, &(t, n)) in out.iter().enumerate() {
            assert_eq!(n, i as u64);
            assert_eq!(t, ms(200 * (1 + n / 10)), "ACK {n}");
        }
        assert_eq!(a.releases, 5);
    }
}
