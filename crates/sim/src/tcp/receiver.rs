//! The TCP receiver: in-order delivery, out-of-order ranges, SACK/DSACK generation and delayed
//! ACKs.
//!
//! Contract: [`Receiver::on_data`] takes one data segment and returns an ACK to send now, if any;
//! otherwise a delayed-ACK deadline may be armed ([`Receiver::delack_deadline`]) and
//! [`Receiver::on_delack_timer`] produces the ACK when it fires.
//!
//! Rules:
//! - ACK every `ack_every` (2) full segments (RFC 5681 §4.2, RFC 1122 §4.2.3.2) or when the
//!   delayed-ACK timer (Linux `TCP_DELACK_MIN` 40 ms) expires.
//! - ACK immediately on out-of-order data, on a segment that fills (part of) a hole, and on a
//!   duplicate (RFC 5681 §4.2).
//! - Quick-ACK mode at connection start: the first 16 ACKs are sent for every segment (Linux
//!   `tcp_incr_quickack`, `TCP_MAX_QUICKACKS` = 16).
//! - SACK blocks (RFC 2018 §4): the first block holds the segment that triggered the ACK, the
//!   others the most recently changed ranges; a duplicate is reported as a DSACK block first
//!   (RFC 2883 §4). At most [`MAX_SACK_BLOCKS`].
//! - The ACK echoes the TSval of the segment that triggered it (RFC 7323 TSecr, simplified to the
//!   latest segment).
//! - ECN feedback ([`Receiver::with_ecn`]). Classic (RFC 3168 §6.1.3): a CE arrival latches ECE
//!   on every ACK until a segment with CWR arrives; the first CE of an episode is acknowledged
//!   at once with two quick ACKs (Linux `tcp_ecn_check_ce`: `tcp_enter_quickack_mode(sk, 2)`).
//!   Accurate ECN (RFC 9768): every ACK carries the count of CE-marked segments received
//!   (`r.cep`), and a CE arrival after a non-CE one is acknowledged at once (§3.2.2.5.1,
//!   change-triggered ACKs).

use cclab_cc::{Dur, EcnMode, Time};

use crate::packet::{Ecn, Payload, SackBlocks, SeqRange};

/// Linux `TCP_MAX_QUICKACKS`.
pub const MAX_QUICKACKS: u32 = 16;

/// Receiver state of one flow.
#[derive(Debug)]
pub struct Receiver {
    rcv_nxt: u64,
    /// Out-of-order ranges above `rcv_nxt`, most recently changed first.
    ooo: Vec<SeqRange>,
    unacked: u32,
    quickacks: u32,
    ack_every: u32,
    delack: Dur,
    delack_at: Option<Time>,
    last_tsval: Time,
    ecn: EcnMode,
    /// Classic ECN: ECE is set until CWR arrives (Linux `TCP_ECN_DEMAND_CWR`).
    demand_cwr: bool,
    /// Accurate ECN: CE-marked segments received, modulo 256.
    ce_count: u8,
    /// The previous segment was CE-marked.
    last_ce: bool,
    /// Segments received CE-marked.
    pub ce_received: u64,
    /// Segments (payload) delivered in order to the application.
    pub segments_delivered: u64,
    /// Data segments received, including duplicates.
    pub segments_received: u64,
    /// Duplicate segments reported back with a DSACK block (RFC 2883 §4).
    pub dsacks_sent: u64,
}

impl Receiver {
    /// A receiver acking every `ack_every` segments with a `delack` timer.
    #[must_use]
    pub fn new(ack_every: u32, delack: Dur) -> Self {
        Receiver {
            rcv_nxt: 0,
            ooo: Vec::new(),
            unacked: 0,
            quickacks: MAX_QUICKACKS,
            ack_every: ack_every.max(1),
            delack,
            delack_at: None,
            last_tsval: Time::ZERO,
            ecn: EcnMode::Off,
            demand_cwr: false,
            ce_count: 0,
            last_ce: false,
            ce_received: 0,
            segments_delivered: 0,
            segments_received: 0,
            dsacks_sent: 0,
        }
    }

    /// The same receiver giving `ecn` feedback.
    #[must_use]
    pub fn with_ecn(self, ecn: EcnMode) -> Self {
        Receiver { ecn, ..self }
    }

    /// ECN bookkeeping of one arriving segment; true when it must be acknowledged at once.
    fn on_ecn(&mut self, ecn: Ecn, cwr: bool) -> bool {
        let ce = ecn == Ecn::Ce;
        if ce {
            self.ce_received += 1;
        }
        let prev_ce = std::mem::replace(&mut self.last_ce, ce);
        match self.ecn {
            EcnMode::Off => false,
            EcnMode::Classic => {
                // Linux `tcp_ecn_accept_cwr` before `tcp_ecn_check_ce`.
                if cwr {
                    self.demand_cwr = false;
                }
                if ce && !self.demand_cwr {
                    self.demand_cwr = true;
                    self.quickacks = self.quickacks.max(2);
                    return true;
                }
                false
            }
            EcnMode::L4s => {
                if ce {
                    self.ce_count = self.ce_count.wrapping_add(1);
                }
                ce && !prev_ce
            }
        }
    }

    /// Next segment expected.
    #[must_use]
    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }

    /// The ACK a data segment leaving now would carry, if one is pending (a delayed ACK not
    /// yet sent): Linux sends it on the segment and cancels the timer (`tcp_event_ack_sent`).
    /// Used by the client of a request/response workload ([`super::exchange`]).
    pub fn take_pending_ack(&mut self) -> Option<Payload> {
        self.delack_at?;
        self.delack_at = None;
        (self.unacked > 0).then(|| self.make_ack(None))
    }

    /// A new connection whose initial sequence number continues this one's sequence space
    /// (so segments of the old connection still in the network are old duplicates to it): the
    /// connection state (out-of-order ranges, delayed and quick ACKs, ECN feedback) starts
    /// afresh, the counters and `rcv_nxt` stay.
    pub fn reopen(&mut self) {
        self.ooo.clear();
        self.unacked = 0;
        self.quickacks = MAX_QUICKACKS;
        self.delack_at = None;
        self.demand_cwr = false;
        self.ce_count = 0;
        self.last_ce = false;
    }

    /// Pending delayed-ACK deadline.
    #[must_use]
    pub fn delack_deadline(&self) -> Option<Time> {
        self.delack_at
    }

    /// Process data segment `seq` sent at `tsval`, with IP ECN field `ecn` and TCP flag `cwr`.
    /// Returns an ACK payload to send now, if any.
    #[inline(always)]
    pub fn on_data(
        &mut self,
        now: Time,
        seq: u64,
        tsval: Time,
        ecn: Ecn,
        cwr: bool,
    ) -> Option<Payload> {
        self.segments_received += 1;
        let ecn_now = self.on_ecn(ecn, cwr);
        self.last_tsval = tsval;
        if seq < self.rcv_nxt || self.ooo.iter().any(|r| r.start <= seq && seq < r.end) {
            // Duplicate: DSACK it at once (RFC 2883 §4).
            return Some(self.make_ack(Some(SeqRange {
                start: seq,
                end: seq + 1,
            })));
        }
        if seq == self.rcv_nxt {
            let filled_hole = !self.ooo.is_empty();
            self.rcv_nxt += 1;
            // Absorb a range that now continues the in-order data.
            if let Some(i) = self.ooo.iter().position(|r| r.start == self.rcv_nxt) {
                self.rcv_nxt = self.ooo[i].end;
                self.ooo.remove(i);
            }
            let newly = self.rcv_nxt - (seq);
            self.segments_delivered += newly;
            self.unacked += 1;
            if filled_hole || ecn_now || self.quickacks > 0 || self.unacked >= self.ack_every {
                return Some(self.make_ack(None));
            }
            if self.delack_at.is_none() {
                self.delack_at = Some(now + self.delack);
            }
            return None;
        }
        // Out of order: extend or merge ranges, move the touched one to the front.
        let below = self.ooo.iter().position(|r| r.end == seq);
        let above = self.ooo.iter().position(|r| r.start == seq + 1);
        let merged = match (below, above) {
            (Some(b), Some(a)) => {
                let r = SeqRange {
                    start: self.ooo[b].start,
                    end: self.ooo[a].end,
                };
                let (hi, lo) = if a > b { (a, b) } else { (b, a) };
                self.ooo.remove(hi);
                self.ooo.remove(lo);
                r
            }
            (Some(b), None) => {
                let r = SeqRange {
                    start: self.ooo[b].start,
                    end: seq + 1,
                };
                self.ooo.remove(b);
                r
            }
            (None, Some(a)) => {
                let r = SeqRange {
                    start: seq,
                    end: self.ooo[a].end,
                };
                self.ooo.remove(a);
                r
            }
            (None, None) => SeqRange {
                start: seq,
                end: seq + 1,
            },
        };
        self.ooo.insert(0, merged);
        Some(self.make_ack(None))
    }

    /// The delayed-ACK timer fired at `now`.
    pub fn on_delack_timer(&mut self, now: Time) -> Option<Payload> {
        match self.delack_at {
            Some(t) if t <= now => {
                self.delack_at = None;
                (self.unacked > 0).then(|| self.make_ack(None))
            }
            _ => None,
        }
    }

    #[inline(always)]
    fn make_ack(&mut self, dsack: Option<SeqRange>) -> Payload {
        self.unacked = 0;
        self.delack_at = None;
        self.quickacks = self.quickacks.saturating_sub(1);
        let mut sack = SackBlocks::default();
        if let Some(d) = dsack {
            sack.push(self.rcv_nxt, d);
            self.dsacks_sent += 1;
        }
        for r in &self.ooo {
            if !sack.push(self.rcv_nxt, *r) {
                break;
            }
        }
        Payload::Ack {
            ack: self.rcv_nxt,
            sack,
            dsack: dsack.is_some(),
            tsecr: self.last_tsval,
            ece: self.ecn == EcnMode::Classic && self.demand_cwr,
            ce_count: self.ce_count,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack_of(p: Option<Payload>) -> (u64, Vec<(u64, u64)>, bool) {
        match p {
            Some(Payload::Ack {
                ack, sack, dsack, ..
            }) => (
                ack,
                (0..sack.len())
                    .map(|i| {
                        let r = sack.get(ack, i);
                        (r.start, r.end)
                    })
                    .collect(),
                dsack,
            ),
            other => panic!("expected an ACK, got {other:?}"),
        }
    }

    #[test]
    fn quickacks_then_every_second_segment_then_timer() {
        let mut r = Receiver::new(2, Dur::from_millis(40));
        for s in 0..MAX_QUICKACKS as u64 {
            assert!(
                r.on_data(Time(s), s, Time(0), Ecn::NotEct, false).is_some(),
                "quick-ack {s}"
            );
        }
        let s = u64::from(MAX_QUICKACKS);
        assert!(
            r.on_data(Time(100), s, Time(0), Ecn::NotEct, false)
                .is_none()
        );
        assert_eq!(r.delack_deadline(), Some(Time(100) + Dur::from_millis(40)));
        assert_eq!(
            ack_of(r.on_data(Time(101), s + 1, Time(0), Ecn::NotEct, false)).0,
            s + 2
        );
        assert!(
            r.on_data(Time(200), s + 2, Time(0), Ecn::NotEct, false)
                .is_none()
        );
        assert!(r.on_delack_timer(Time(201)).is_none(), "timer not due yet");
        let t = Time(200) + Dur::from_millis(40);
        assert_eq!(ack_of(r.on_delack_timer(t)).0, s + 3);
    }

    #[test]
    fn out_of_order_data_is_sacked_most_recent_first_and_hole_fill_acks_at_once() {
        let mut r = Receiver::new(2, Dur::from_millis(40));
        r.quickacks = 0;
        assert!(r.on_data(Time(0), 0, Time(0), Ecn::NotEct, false).is_none());
        // Segment 1 lost; 2, 3 arrive, then 5.
        assert_eq!(
            ack_of(r.on_data(Time(1), 2, Time(0), Ecn::NotEct, false)),
            (1, vec![(2, 3)], false)
        );
        assert_eq!(
            ack_of(r.on_data(Time(2), 3, Time(0), Ecn::NotEct, false)),
            (1, vec![(2, 4)], false)
        );
        assert_eq!(
            ack_of(r.on_data(Time(3), 5, Time(0), Ecn::NotEct, false)),
            (1, vec![(5, 6), (2, 4)], false)
        );
        // 4 joins both ranges.
        assert_eq!(
            ack_of(r.on_data(Time(4), 4, Time(0), Ecn::NotEct, false)),
            (1, vec![(2, 6)], false)
        );
        // Retransmitted 1 fills the hole: cumulative ACK jumps, sent immediately.
        assert_eq!(
            ack_of(r.on_data(Time(5), 1, Time(0), Ecn::NotEct, false)),
            (6, vec![], false)
        );
        assert_eq!(r.segments_delivered, 6);
        // A duplicate is DSACKed.
        assert_eq!(
            ack_of(r.on_data(Time(6), 3, Time(0), Ecn::NotEct, false)),
            (6, vec![(3, 4)], true)
        );
    }

    // ----- ECN feedback -----

    /// Classic ECN (RFC 3168 §6.1.3): ECE from the first CE until CWR, and the CE segment is
    /// acknowledged at once although delayed ACKs would hold it.
    #[test]
    fn classic_ece_latches_until_cwr_and_ce_is_acked_at_once() {
        let mut r = Receiver::new(2, Dur::from_millis(40)).with_ecn(EcnMode::Classic);
        r.quickacks = 0;
        let ece = |p: Option<Payload>| match p {
            Some(Payload::Ack { ece, .. }) => Some(ece),
            _ => None,
        };
        assert_eq!(ece(r.on_data(Time(0), 0, Time(0), Ecn::Ect0, false)), None);
        // CE: immediate ACK with ECE, although one segment is unacknowledged.
        assert_eq!(
            ece(r.on_data(Time(1), 1, Time(0), Ecn::Ce, false)),
            Some(true)
        );
        // Quick-ACK mode of 2: the next segment is acknowledged at once too, still with ECE.
        assert_eq!(
            ece(r.on_data(Time(2), 2, Time(0), Ecn::Ect0, false)),
            Some(true)
        );
        assert_eq!(ece(r.on_data(Time(3), 3, Time(0), Ecn::Ect0, false)), None);
        assert_eq!(
            ece(r.on_data(Time(4), 4, Time(0), Ecn::Ect0, false)),
            Some(true)
        );
        // CWR clears the latch.
        assert_eq!(ece(r.on_data(Time(5), 5, Time(0), Ecn::Ect0, true)), None);
        assert_eq!(
            ece(r.on_data(Time(6), 6, Time(0), Ecn::Ect0, false)),
            Some(false)
        );
        assert_eq!(r.ce_received, 1);
    }

    /// Accurate ECN: the ACK counts CE segments; a CE after a non-CE is acknowledged at once
    /// (RFC 9768 §3.2.2.5.1), a run of CE segments follows the normal every-2 rule.
    #[test]
    fn accurate_ecn_counts_every_ce_segment() {
        let mut r = Receiver::new(2, Dur::from_millis(40)).with_ecn(EcnMode::L4s);
        r.quickacks = 0;
        let cnt = |p: Option<Payload>| match p {
            Some(Payload::Ack { ce_count, ece, .. }) => {
                assert!(!ece, "no classic ECE under AccECN");
                Some(ce_count)
            }
            _ => None,
        };
        assert_eq!(cnt(r.on_data(Time(0), 0, Time(0), Ecn::Ect1, false)), None);
        assert_eq!(cnt(r.on_data(Time(1), 1, Time(0), Ecn::Ce, false)), Some(1));
        assert_eq!(cnt(r.on_data(Time(2), 2, Time(0), Ecn::Ce, false)), None);
        assert_eq!(cnt(r.on_data(Time(3), 3, Time(0), Ecn::Ce, false)), Some(3));
        // 300 more CE segments: the counter wraps modulo 256.
        for s in 4..304 {
            r.on_data(Time(s), s, Time(0), Ecn::Ce, false);
        }
        assert_eq!(cnt(r.on_delack_timer(Time(1_000_000_000))), None);
        assert_eq!(
            cnt(r.on_data(Time(400), 304, Time(0), Ecn::Ect1, false)),
            None
        );
        assert_eq!(
            cnt(r.on_data(Time(401), 305, Time(0), Ecn::Ect1, false)),
            Some(u8::try_from(303 % 256).unwrap())
        );
        assert_eq!(r.ce_received, 303);
    }

    /// ECN off: CE is ignored in the feedback.
    #[test]
    fn no_feedback_without_ecn() {
        let mut r = Receiver::new(1, Dur::from_millis(40));
        match r.on_data(Time(0), 0, Time(0), Ecn::Ce, false) {
            Some(Payload::Ack { ece, ce_count, .. }) => assert!(!ece && ce_count == 0),
            other => panic!("{other:?}"),
        }
    }
}
