//! ACK thinning: forward only every k-th pure ACK of a flow.
//!
//! Contract: [`AckThin`] counts the pure ACKs ([`NetPacket::pure_ack`]) of each flow
//! ([`NetPacket::flow_key`]) and forwards the k-th, 2k-th, … at once, withholding the others: a
//! cumulative ACK acknowledges everything the withheld ones did (RFC 3449, "ACK
//! filtering"; RFC 9293 §3.4), so what is lost is ACK clocking, not information. Everything
//! else (data, probes) passes at once and is never dropped.
//!
//! ACKs that carry more than a cumulative acknowledgement are treated as an ACK-suppressing
//! middlebox treats them when `keep_signals` is on (the default): an ACK with SACK blocks
//! (which includes a DSACK) or ECE is always forwarded and does not count towards k, because
//! dropping it would lose the loss, duplicate or congestion signal it carries (Linux `sch_cake`'s ACK
//! filter, `cake_ack_filter`, keeps an ACK whose flags or SACK blocks a later one does not
//! cover; cable modems' ACK suppression likewise drops only ACKs a later one supersedes). So with `keep_signals` exactly one in k of the pure cumulative ACKs is forwarded;
//! with it off, one in k of all pure ACKs.
//!
//! The last ACK is never stranded (with `hold` > 0, the default [`DEFAULT_HOLD`]): a withheld
//! ACK is only ever dropped when a newer ACK of its flow supersedes it. The latest withheld ACK
//! is kept and is dropped when a newer one is forwarded (the k-th, or a signal-carrying one) or
//! withheld in its place; if no newer ACK of the flow arrives within `hold`, it is released and
//! the count starts again. This is what deployed thinners do: `cake_ack_filter` drops a queued
//! ACK only when a newer ACK of the flow that covers it is enqueued, so the newest ACK always
//! leaves, and DOCSIS ACK suppression likewise removes only queued ACKs a newer one supersedes.
//! `hold` = 0 withholds without release (every ACK but the k-th is dropped at once and the
//! one-in-k holds exactly); a flow whose ACKs stop before the k-th then waits for its sender's
//! probe or retransmission timer. Deterministic: no randomness, flows kept in key order.

use std::collections::{BTreeMap, VecDeque};

use cclab_cc::{Dur, Time};

use super::{Element, FlowKey, NetPacket, Output};

/// Default `hold`: how long the latest withheld ACK of a flow waits for a newer one before it is
/// released. Not a Linux or RFC constant (cake's ACK filter holds an ACK only as long as it is
/// queued, DOCSIS ACK suppression as long as it waits for an upstream grant); chosen so that
/// (a) the one-in-k thinning holds for any flow whose ACKs come closer than this (delayed ACKs
/// every two 1500-byte segments: any flow above 2.4 Mbit/s), and (b) the release comes well
/// before the sender's timers: Linux's minimum RTO is 200 ms (`TCP_RTO_MIN`) and its tail-loss
/// probe waits 2·srtt + 2 ms (`tcp_schedule_loss_probe`, `TCP_TIMEOUT_MIN`), more than 10 ms
/// on any path with an RTT of 4 ms or more.
pub const DEFAULT_HOLD: Dur = Dur::from_millis(10);

/// One flow's state.
#[derive(Debug)]
struct FlowState<P> {
    /// Pure ACKs counted since the last one forwarded.
    count: u32,
    /// The latest withheld ACK and its release time (`hold` > 0 only).
    withheld: Option<(Time, P)>,
}

/// Forwards one pure ACK in `k` per flow.
#[derive(Debug)]
pub struct AckThin<P> {
    k: u32,
    keep_signals: bool,
    hold: Dur,
    flows: BTreeMap<FlowKey, FlowState<P>>,
    out: VecDeque<P>,
    /// Pure ACKs forwarded (kept signal-carrying ones and released held ones included).
    pub forwarded: u64,
    /// Pure ACKs dropped (withheld ones superseded or not yet released included).
    pub thinned: u64,
}

impl<P: NetPacket> AckThin<P> {
    /// Forward every `k`-th pure ACK (k ≥ 1; 1 forwards all); keep SACK/ECE ACKs if
    /// `keep_signals`; release the latest withheld ACK when no newer one arrives within `hold`
    /// (zero: never; [`DEFAULT_HOLD`] is the scenario default).
    #[must_use]
    pub fn new(k: u32, keep_signals: bool, hold: Dur) -> Self {
        AckThin {
            k: k.max(1),
            keep_signals,
            hold,
            flows: BTreeMap::new(),
            out: VecDeque::new(),
            forwarded: 0,
            thinned: 0,
        }
    }

    /// Take a pure ACK of `flow` at `now`: whether it goes on now.
    fn thin(&mut self, now: Time, flow: FlowKey, pkt: P) -> bool {
        let st = self.flows.entry(flow).or_insert(FlowState {
            count: 0,
            withheld: None,
        });
        st.count += 1;
        if st.count >= self.k {
            st.count = 0;
            if st.withheld.take().is_some() {
                self.thinned += 1;
            }
            self.forwarded += 1;
            return true;
        }
        if self.hold > Dur::ZERO {
            if st.withheld.replace((now + self.hold, pkt)).is_some() {
                self.thinned += 1;
            }
        } else {
            self.thinned += 1;
        }
        false
    }

    /// Release withheld ACKs due at `now` into `out`; the next release time.
    fn release(&mut self, now: Time) -> Option<Time> {
        let mut next: Option<Time> = None;
        for st in self.flows.values_mut() {
            match st.withheld {
                Some((t, p)) if t <= now => {
                    st.withheld = None;
                    st.count = 0;
                    self.out.push_back(p);
                    self.forwarded += 1;
                }
                Some((t, _)) => next = Some(next.map_or(t, |n| n.min(t))),
                None => {}
            }
        }
        next
    }
}

impl<P: NetPacket> Element<P> for AckThin<P> {
    fn process(&mut self, now: Time, pkt: Option<P>) -> Output<P> {
        if let Some(p) = pkt {
            match p.pure_ack() {
                Some(a) if self.keep_signals && (a.sack || a.ece) => {
                    // It supersedes the flow's withheld ACK (cumulative ACKs only grow).
                    if let Some(st) = self.flows.get_mut(&p.flow_key())
                        && st.withheld.take().is_some()
                    {
                        self.thinned += 1;
                    }
                    self.forwarded += 1;
                    self.out.push_back(p);
                }
                Some(_) => {
                    if self.thin(now, p.flow_key(), p) {
                        self.out.push_back(p);
                    }
                }
                None => self.out.push_back(p),
            }
        }
        let next = if self.hold > Dur::ZERO {
            self.release(now)
        } else {
            None
        };
        if let Some(p) = self.out.pop_front() {
            return Output::Packet(p);
        }
        next.map_or(Output::Idle, Output::Wake)
    }

    fn held(&self) -> usize {
        self.out.len() + self.flows.values().filter(|s| s.withheld.is_some()).count()
    }

    fn held_data(&self) -> usize {
        self.out.iter().filter(|p| p.is_data()).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::FlowId;
    use crate::net::test_packet;
    use crate::packet::{Owner, Packet, Payload, SackBlocks, SeqRange};

    fn ack(flow: u32, n: u64, sack: bool, ece: bool) -> Packet {
        let mut blocks = SackBlocks::default();
        if sack {
            blocks.push(
                n,
                SeqRange {
                    start: n + 2,
                    end: n + 3,
                },
            );
        }
        Packet {
            owner: Owner::Flow(FlowId(flow)),
            payload: Payload::Ack {
                ack: n,
                sack: blocks,
                dsack: false,
                tsecr: Time::ZERO,
                ece,
                ce_count: 0,
            },
            ..test_packet(0, 0)
        }
    }

    /// What `t` hands on for `pkt` at `now`.
    fn pass(t: &mut AckThin<Packet>, now: Time, pkt: Packet) -> Vec<Packet> {
        let mut out = Vec::new();
        let mut r = t.process(now, Some(pkt));
        while let Output::Packet(p) = r {
            out.push(p);
            r = t.process(now, None);
        }
        out
    }

    /// Two interleaved flows of pure cumulative ACKs, k = 3: each flow's 3rd, 6th, … ACK goes
    /// on and nothing else; data all goes on.
    #[test]
    fn exactly_one_in_k_per_flow() {
        let mut t = AckThin::new(3, true, Dur::ZERO);
        let mut got = [Vec::new(), Vec::new()];
        for n in 1..=300 {
            for f in 0..2u32 {
                for p in pass(&mut t, Time(n), ack(f, n, false, false)) {
                    let Payload::Ack { ack, .. } = p.payload else {
                        unreachable!()
                    };
                    got[f as usize].push(ack);
                }
            }
            assert_eq!(pass(&mut t, Time(n), test_packet(n, 0)).len(), 1);
        }
        let every_third: Vec<u64> = (1..=100).map(|i| 3 * i).collect();
        assert_eq!(got[0], every_third);
        assert_eq!(got[1], every_third);
        assert_eq!((t.forwarded, t.thinned), (200, 400));
        assert_eq!(t.held(), 0);
    }

    /// With `keep_signals`, SACK and ECE ACKs go on and do not count; without, they are
    /// thinned like the rest.
    #[test]
    fn signals_kept() {
        let mut t = AckThin::new(2, true, Dur::ZERO);
        let seq = [(false, false), (true, false), (false, true), (false, false)];
        let n: usize = seq
            .iter()
            .enumerate()
            .map(|(i, &(s, e))| pass(&mut t, Time::ZERO, ack(0, i as u64, s, e)).len())
            .sum();
        assert_eq!(n, 3); // SACK, ECE, and the 2nd pure one
        let mut t = AckThin::new(2, false, Dur::ZERO);
        let n: usize = seq
            .iter()
            .enumerate()
            .map(|(i, &(s, e))| pass(&mut t, Time::ZERO, ack(0, i as u64, s, e)).len())
            .sum();
        assert_eq!(n, 2);
    }

    /// At the default hold a flow whose ACKs stop before the k-th still gets its newest ACK:
    /// k = 16, five ACKs 1 ms apart, then none. The first four are dropped as each newer one
    /// arrives; the fifth leaves `DEFAULT_HOLD` after it arrived, and nothing else is held.
    /// (With `hold` = 0 nothing would ever leave: the stranded ACK the old default made.)
    #[test]
    fn the_newest_ack_is_never_stranded() {
        let mut t = AckThin::new(16, true, DEFAULT_HOLD);
        let ms = |n: u64| Time::ZERO + Dur::from_millis(n);
        for n in 1..=5 {
            assert!(pass(&mut t, ms(n), ack(0, n, false, false)).is_empty());
        }
        assert_eq!(t.process(ms(5), None), Output::Wake(ms(5) + DEFAULT_HOLD));
        // Data passes meanwhile and releases nothing early.
        let just_before = Time(ms(5).as_nanos() + DEFAULT_HOLD.as_nanos() - 1);
        assert_eq!(pass(&mut t, just_before, test_packet(9, 0)).len(), 1);
        let out = {
            let mut v = Vec::new();
            let mut r = t.process(ms(5) + DEFAULT_HOLD, None);
            while let Output::Packet(p) = r {
                v.push(p);
                r = t.process(ms(5) + DEFAULT_HOLD, None);
            }
            v
        };
        assert_eq!(out, vec![ack(0, 5, false, false)]);
        assert_eq!((t.forwarded, t.thinned, t.held()), (1, 4, 0));
        // The same ACKs with hold = 0: all five dropped, none ever released.
        let mut t = AckThin::new(16, true, Dur::ZERO);
        for n in 1..=5 {
            assert!(pass(&mut t, ms(n), ack(0, n, false, false)).is_empty());
        }
        assert_eq!(t.process(ms(1000), None), Output::Idle);
        assert_eq!((t.forwarded, t.thinned), (0, 5));
    }

    /// A forwarded SACK or ECE ACK supersedes the flow's withheld ACK: it is dropped then, not
    /// released later behind the newer one.
    #[test]
    fn a_forwarded_signal_ack_supersedes_the_withheld_one() {
        let hold = Dur::from_millis(5);
        let mut t = AckThin::new(4, true, hold);
        assert!(pass(&mut t, Time(0), ack(0, 1, false, false)).is_empty());
        assert_eq!(t.held(), 1);
        let out = pass(&mut t, Time(10), ack(0, 1, true, false));
        assert_eq!(out, vec![ack(0, 1, true, false)]);
        assert_eq!(t.held(), 0);
        assert_eq!(t.process(Time(10) + hold, None), Output::Idle);
        assert_eq!((t.forwarded, t.thinned), (1, 1));
    }

    /// With a hold, the latest withheld ACK is released `hold` after it arrived when the k-th
    /// does not come, and superseded (never released) when it does.
    #[test]
    fn hold_releases_the_latest() {
        let hold = Dur::from_millis(5);
        let mut t = AckThin::new(4, true, hold);
        assert!(pass(&mut t, Time(0), ack(0, 1, false, false)).is_empty());
        assert!(pass(&mut t, Time(10), ack(0, 2, false, false)).is_empty());
        assert_eq!(t.process(Time(10), None), Output::Wake(Time(10) + hold));
        let out = pass(&mut t, Time(10) + hold, ack(1, 7, false, false));
        assert_eq!(out, vec![ack(0, 2, false, false)]);
        assert_eq!(t.held(), 1); // flow 1's ACK
        for n in 1..=3 {
            assert!(pass(&mut t, Time(20) + hold, ack(0, 2 + n, false, false)).is_empty());
        }
        let out = pass(&mut t, Time(30) + hold, ack(0, 6, false, false));
        assert_eq!(out, vec![ack(0, 6, false, false)]);
    }
}
