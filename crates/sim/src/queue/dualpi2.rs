//! DualPI2 (RFC 9332; Linux `net/sched/sch_dualpi2.c`, mainline since 6.18).
//!
//! Contract: two FIFOs. An arrival goes to the L queue (class 1, "l") if its ECN field is ECT(1)
//! or CE (Linux `ecn_mask` = ECT(1), RFC 9331 §5.1) or its DSCP is in `l_dscp` (standing in for
//! Linux's tc filters, as class `DUALPI2_C_L4S`), else to the C queue (class 0, "c"). An arrival
//! beyond `limit` packets (both queues) is dropped as an overflow. Every `tupdate` the PI2
//! controller (Linux `calculate_probability`) updates the base probability p′ from the larger
//! of the two head sojourns (Linux `get_queue_delays`; not only the C queue's):
//! p′ += α·(qdelay − target) + β·(qdelay − qdelay_prev), clamped to [0, 1] (and to 1/k when
//! `drop_overload` is off). Updates run lazily when the queue is next called.
//!
//! Dequeue (Linux `dualpi2_qdisc_dequeue`): a WRR scheduler picks the queue — the L queue while
//! the credit is ≤ 0 or C is empty; serving L (with C backlogged) adds `c_protection`·bytes to
//! the credit, serving C (with L backlogged) subtracts (100 − `c_protection`)·bytes; the credit
//! restarts at MTU·(wc − wl) when both are empty — so C gets at least `c_protection` % of the
//! bytes while both are backlogged. Then, unless `drop_early` moved it to enqueue, the AQM
//! (Linux `must_drop`), skipped while the whole qdisc holds less than two MTUs: a C packet is
//! dropped, or CE-marked if ECT(0), with p_C = p′² (two draws); an L packet is marked with
//! p_CL = k·p′ (dropped if not ECN-capable). On overload (k·p′ > 1) ECN is ignored in C (drop
//! with p′²) and, with `drop_overload`, L packets are dropped with p′² and marked otherwise.
//! Finally L packets whose sojourn exceeds `step_thresh` are CE-marked (the native step AQM;
//! Linux `min_qlen_step` = 0: always applies), or dropped if not ECN-capable. Dropped packets
//! are AQM drops of their class and the next packet is tried. A packet keeps its class in
//! [`Dequeued::class`].
//!
//! Differences: probabilities are floating point (Linux: u32 with `MAX_PROB` = 2³² − 1 and
//! α, β in 64 ns units), draws are U < p (Linux `get_random_u32() <= p`); the MTU is
//! `codel::MTU` wire bytes; Linux's memory limit (`limit` · 2 · MTU bytes of `truesize`, which
//! binds before the packet limit only if packets average more than 2 MTUs of truesize) and GSO
//! splitting are not modelled; the first update is `tupdate` after creation (Linux's hrtimer
//! start).

use std::collections::VecDeque;

use cclab_cc::{Dur, Time};
use rand_chacha::ChaCha8Rng;

use super::codel::MTU;
use super::{Dequeued, Qdisc, Tally};
use crate::net::NetPacket;
use crate::packet::{Ecn, Packet};
use crate::rng::unit_f64;

/// Linux `MAX_WC`: the weights are percentages.
const MAX_WC: u8 = 100;

/// Class indices.
const C: usize = 0;
const L: usize = 1;

/// DualPI2 parameters; defaults are Linux `dualpi2_reset_default` where it and RFC 9332
/// differ (Tupdate 16 ms, α 0.16, β 3.2; a 1 ms step instead of the RFC's ramp).
#[derive(Clone, Debug, PartialEq)]
pub struct DualPi2Params {
    /// Packet limit over both queues (Linux 10000).
    pub limit: u32,
    /// PI2 target queue delay of the C queue: 15 ms.
    pub target: Dur,
    /// PI2 update period: 16 ms (Linux; RFC 9332 Figure 2 derives 15 ms).
    pub tupdate: Dur,
    /// Integral gain α, Hz: 0.16 (Linux 41/256).
    pub alpha: f64,
    /// Proportional gain β, Hz: 3.2 (Linux 819/256).
    pub beta: f64,
    /// Coupling factor k: 2 (RFC 9332 §2.4).
    pub coupling: f64,
    /// L-queue step threshold on sojourn: 1 ms (Linux `step_thresh`).
    pub step_thresh: Dur,
    /// Classic queue's share of the scheduler when both are backlogged, percent (Linux
    /// `c_protection` = 10).
    pub c_protection: u8,
    /// On overload (p_C above its cap) drop instead of marking (Linux `drop_overload`, on).
    pub drop_overload: bool,
    /// Decide drops at enqueue instead of dequeue (Linux `drop_early`, off).
    pub drop_early: bool,
    /// DSCP values classified into the L queue whatever their ECN field (empty by default;
    /// Linux classifies with `tc` filters).
    pub l_dscp: Vec<u8>,
}

impl Default for DualPi2Params {
    fn default() -> Self {
        DualPi2Params {
            limit: 10_000,
            target: Dur::from_millis(15),
            tupdate: Dur::from_millis(16),
            alpha: 0.16,
            beta: 3.2,
            coupling: 2.0,
            step_thresh: Dur::from_millis(1),
            c_protection: 10,
            drop_overload: true,
            drop_early: false,
            l_dscp: Vec::new(),
        }
    }
}

/// A queued packet (Linux `struct dualpi2_skb_cb`).
#[derive(Clone, Copy, Debug)]
struct Entry<P> {
    pkt: P,
    ts: Time,
    /// ECN field on arrival (Linux `cb->ect`, which later marks do not change).
    ect: Ecn,
}

/// The AQM's verdict on one packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    Pass,
    Mark,
    Drop,
}

/// A DualPI2 queue.
#[derive(Debug)]
pub struct DualPi2<P = Packet> {
    p: DualPi2Params,
    queues: [VecDeque<Entry<P>>; 2],
    bytes: u64,
    /// Base probability p′ (Linux `pi2_prob` / `MAX_PROB`).
    prob: f64,
    /// Queue delay at the last update (Linux `last_qdelay`).
    last_qdelay: Dur,
    next_update: Time,
    /// WRR credit (Linux `c_protection_credit`; ≤ 0 serves L).
    credit: i64,
    credit_init: i64,
    wc: i64,
    wl: i64,
}

impl<P: NetPacket> DualPi2<P> {
    /// An empty queue (created at time 0).
    #[must_use]
    pub fn new(p: &DualPi2Params) -> Self {
        // Linux `dualpi2_calculate_c_protection`.
        let wc = i64::from(p.c_protection.min(MAX_WC));
        let wl = i64::from(MAX_WC) - wc;
        let credit_init = MTU as i64 * (wc - wl);
        DualPi2 {
            p: p.clone(),
            queues: [VecDeque::new(), VecDeque::new()],
            bytes: 0,
            prob: 0.0,
            last_qdelay: Dur::ZERO,
            next_update: Time::ZERO + p.tupdate,
            credit: credit_init,
            credit_init,
            wc,
            wl,
        }
    }

    fn classify(&self, pkt: &P) -> usize {
        if pkt.ecn().is_l4s() || self.p.l_dscp.contains(&pkt.dscp()) {
            L
        } else {
            C
        }
    }

    fn len(&self) -> usize {
        self.queues[C].len() + self.queues[L].len()
    }

    /// Run every update due at or before `now`; with both queues empty and the state unchanged
    /// by an update, the later ones are no-ops and are skipped.
    #[inline]
    fn catch_up(&mut self, now: Time) {
        if now >= self.next_update {
            self.run_updates(now);
        }
    }

    /// The loop of [`DualPi2::catch_up`], once an update is due.
    #[inline(never)]
    fn run_updates(&mut self, now: Time) {
        // Linux accepts a tupdate of at least 1 µs (`NLA_POLICY_MIN(NLA_U32, 1)`, in µs).
        let period = self.p.tupdate.as_nanos().max(1_000);
        while now >= self.next_update {
            let before = (self.prob, self.last_qdelay);
            self.update(self.next_update);
            self.next_update += Dur(period);
            if self.len() == 0 && (self.prob, self.last_qdelay) == before && now >= self.next_update
            {
                let skip = (now.as_nanos() - self.next_update.as_nanos()) / period + 1;
                self.next_update += Dur(skip * period);
            }
        }
    }

    /// Linux `calculate_probability` at time `t`.
    fn update(&mut self, t: Time) {
        let head =
            |q: &VecDeque<Entry<P>>| q.front().map_or(Dur::ZERO, |e| t.saturating_since(e.ts));
        let qdelay = head(&self.queues[C]).max(head(&self.queues[L]));
        let secs = |d: Dur| d.as_secs_f64();
        let delta = self.p.alpha * (secs(qdelay) - secs(self.p.target))
            + self.p.beta * (secs(qdelay) - secs(self.last_qdelay));
        self.last_qdelay = qdelay;
        self.prob = (self.prob + delta).clamp(0.0, 1.0);
        if !self.p.drop_overload {
            // Keep p_CL ≤ 100 % for window fairness when not dropping on overload.
            self.prob = self.prob.min(1.0 / self.p.coupling);
        }
    }

    /// Linux `must_drop` (with `dualpi2_classic_marking` / `dualpi2_scalable_marking`) for a
    /// packet of `class` while `backlog` bytes are queued; marks `pkt` when it decides so.
    /// Takes the parameters and p′ rather than `self` so that `pkt` can be the head of a queue.
    #[inline(always)]
    fn must_drop(
        p: &DualPi2Params,
        prob: f64,
        pkt: &mut P,
        ect: Ecn,
        class: usize,
        backlog: u64,
        rng: &mut ChaCha8Rng,
    ) -> Verdict {
        if backlog < 2 * MTU {
            return Verdict::Pass;
        }
        let l_prob = prob * p.coupling;
        let overload = l_prob > 1.0;
        let mut roll = |p: f64| unit_f64(rng) < p;
        let mark = |pkt: &mut P| {
            if pkt.mark_ce() {
                Verdict::Mark
            } else {
                Verdict::Pass
            }
        };
        if class == C {
            // p_C = p′²: two independent draws.
            if roll(prob) && roll(prob) {
                if overload || ect == Ecn::NotEct {
                    return Verdict::Drop;
                }
                return mark(pkt);
            }
            Verdict::Pass
        } else if overload {
            if p.drop_overload && roll(prob) && roll(prob) {
                Verdict::Drop
            } else {
                mark(pkt)
            }
        } else if roll(l_prob) {
            if ect == Ecn::NotEct {
                Verdict::Drop
            } else {
                mark(pkt)
            }
        } else {
            Verdict::Pass
        }
    }

    /// Linux `dequeue_packet`: the WRR choice. Returns the class to serve and the credit weight
    /// per byte to apply if its head is sent; `None` (with the credit reset) if both are empty.
    #[inline]
    fn pick(&mut self) -> Option<(usize, i64)> {
        let (c_len, l_len) = (self.queues[C].len(), self.queues[L].len());
        if l_len > 0 && (c_len == 0 || self.credit <= 0) {
            Some((L, if c_len > 0 { self.wc } else { 0 }))
        } else if c_len > 0 {
            Some((C, if l_len > 0 { -self.wl } else { 0 }))
        } else {
            self.credit = self.credit_init;
            None
        }
    }

    fn probs(&self) -> (f64, f64, f64) {
        (
            self.prob,
            self.prob * self.prob,
            (self.prob * self.p.coupling).min(1.0),
        )
    }
}

impl<P: NetPacket> Qdisc<P> for DualPi2<P> {
    #[inline]
    fn enqueue(&mut self, now: Time, mut pkt: P, rng: &mut ChaCha8Rng, tally: &mut Tally) -> bool {
        self.catch_up(now);
        let class = self.classify(&pkt);
        // Linux `dualpi2_enqueue_skb`.
        if self.len() >= self.p.limit as usize {
            tally.drop(class, &pkt, true);
            return false;
        }
        let ect = pkt.ecn();
        if self.p.drop_early {
            match Self::must_drop(&self.p, self.prob, &mut pkt, ect, class, self.bytes, rng) {
                Verdict::Drop => {
                    tally.drop(class, &pkt, false);
                    return false;
                }
                Verdict::Mark => tally.mark(class),
                Verdict::Pass => {}
            }
        }
        self.bytes += u64::from(pkt.wire_bytes());
        self.queues[class].push_back(Entry { pkt, ts: now, ect });
        tally.enqueue(class);
        true
    }

    #[inline]
    fn dequeue(
        &mut self,
        now: Time,
        rng: &mut ChaCha8Rng,
        tally: &mut Tally,
    ) -> Option<Dequeued<P>> {
        self.catch_up(now);
        // Linux `__dualpi2_qdisc_dequeue`. The head is judged in place and popped straight into
        // the result; Linux pops it first, so the AQM sees the backlog without it.
        let (class, weight) = loop {
            let (class, weight) = self.pick()?;
            let q = &mut self.queues[class];
            let Some(e) = q.front_mut() else {
                unreachable!("pick chose an empty queue")
            };
            let bytes = u64::from(e.pkt.wire_bytes());
            let backlog = self.bytes - bytes;
            let mut marked = false;
            let mut dropped = false;
            if !self.p.drop_early {
                match Self::must_drop(&self.p, self.prob, &mut e.pkt, e.ect, class, backlog, rng) {
                    Verdict::Drop => dropped = true,
                    Verdict::Mark => marked = true,
                    Verdict::Pass => {}
                }
            }
            // Linux `do_step_aqm`: the L queue's native step marking on sojourn.
            if !dropped && class == L && now.saturating_since(e.ts) > self.p.step_thresh {
                if e.ect == Ecn::NotEct {
                    dropped = true;
                } else {
                    marked |= e.pkt.mark_ce();
                }
            }
            if dropped {
                tally.drop(class, &e.pkt, false);
                q.pop_front();
                self.bytes = backlog;
                continue;
            }
            if marked {
                tally.mark(class);
            }
            break (class, weight);
        };
        let e = self.queues[class].pop_front()?;
        let bytes = e.pkt.wire_bytes();
        self.bytes -= u64::from(bytes);
        self.credit += weight * i64::from(bytes);
        Some(Dequeued {
            pkt: e.pkt,
            enqueued: e.ts,
            #[expect(
                clippy::cast_possible_truncation,
                reason = "DualPI2 has two classes, 0 and 1"
            )]
            class: class as u8,
        })
    }

    #[expect(
        clippy::cast_possible_truncation,
        reason = "the queues hold packets in memory, far fewer than 2^32"
    )]
    fn backlog_packets(&self) -> u32 {
        self.len() as u32
    }

    fn backlog_bytes(&self) -> u64 {
        self.bytes
    }

    fn class_names(&self) -> &'static [&'static str] {
        &["c", "l"]
    }

    #[expect(
        clippy::cast_possible_truncation,
        reason = "the queues hold packets in memory, far fewer than 2^32"
    )]
    fn class_backlog(&self, class: usize) -> u32 {
        self.queues.get(class).map_or(0, |q| q.len() as u32)
    }

    fn state(&self, sink: &mut dyn FnMut(&'static str, f64)) {
        let (p_prime, p_c, p_cl) = self.probs();
        sink("p_prime", p_prime);
        sink("p_c", p_c);
        sink("p_cl", p_cl);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::testkit::{self, data, flow};

    const MS: u64 = 1_000_000;

    fn pkt(ecn: Ecn) -> Packet {
        data(flow(1), 1500, ecn)
    }

    /// A queue whose controller never moves during a test (first update far away) and with
    /// the step out of the way, set to p′ = `prob`.
    fn frozen(prob: f64, p: DualPi2Params) -> DualPi2 {
        let mut q = DualPi2::new(&DualPi2Params {
            tupdate: Dur::from_secs(1_000),
            step_thresh: Dur::from_secs(1_000),
            limit: 1_000_000,
            ..p
        });
        q.prob = prob;
        q
    }

    fn state(q: &DualPi2) -> Vec<(&'static str, f64)> {
        let mut v = Vec::new();
        q.state(&mut |k, x| v.push((k, x)));
        v
    }

    #[test]
    #[expect(clippy::cast_possible_truncation, reason = "the class index is 0 or 1")]
    fn classifies_l4s_codepoints_and_listed_dscps_into_l() {
        let p = DualPi2Params {
            l_dscp: vec![46],
            ..DualPi2Params::default()
        };
        let mut q = DualPi2::new(&p);
        assert_eq!(q.class_names(), &["c", "l"]);
        let mut rng = testkit::rng();
        let mut tally = Tally::default();
        let mut ef = pkt(Ecn::NotEct);
        ef.dscp = 46;
        for (pk, class) in [
            (pkt(Ecn::NotEct), 0u8),
            (pkt(Ecn::Ect0), 0),
            (pkt(Ecn::Ect1), 1),
            (pkt(Ecn::Ce), 1),
            (ef, 1),
        ] {
            assert!(q.enqueue(Time::ZERO, pk, &mut rng, &mut tally));
            assert_eq!(q.classify(&pk) as u8, class, "{pk:?}");
        }
        assert_eq!((q.class_backlog(0), q.class_backlog(1)), (2, 3));
        assert_eq!((tally.class[0].enqueued, tally.class[1].enqueued), (2, 3));
        // Dequeued packets carry their class.
        let classes: Vec<u8> = std::iter::from_fn(|| q.dequeue(Time::ZERO, &mut rng, &mut tally))
            .map(|d| d.class)
            .collect();
        assert_eq!(classes.iter().filter(|&&c| c == 1).count(), 3);
        assert_eq!(classes.iter().filter(|&&c| c == 0).count(), 2);
    }

    #[test]
    fn l_packets_are_step_marked_above_one_millisecond_sojourn() {
        let mut q = DualPi2::new(&DualPi2Params {
            l_dscp: vec![46],
            ..DualPi2Params::default()
        });
        let mut rng = testkit::rng();
        let mut tally = Tally::default();
        for _ in 0..4 {
            q.enqueue(Time::ZERO, pkt(Ecn::Ect1), &mut rng, &mut tally);
        }
        let mut ef = pkt(Ecn::NotEct);
        ef.dscp = 46;
        q.enqueue(Time::ZERO, ef, &mut rng, &mut tally);
        q.enqueue(Time::ZERO, pkt(Ecn::Ect1), &mut rng, &mut tally);
        let mut at = |us: u64| {
            q.dequeue(Time(us * 1_000), &mut rng, &mut tally)
                .map(|d| d.pkt.ecn)
        };
        // p′ is 0 before the first update (16 ms): only the step acts.
        assert_eq!(at(500), Some(Ecn::Ect1));
        assert_eq!(at(1_000), Some(Ecn::Ect1)); // not above 1 ms (Linux `qdelay > step_thresh`)
        assert_eq!(at(1_001), Some(Ecn::Ce));
        assert_eq!(at(2_000), Some(Ecn::Ce));
        // The Not-ECT packet in L is dropped by the step, and the next one is sent marked.
        assert_eq!(at(2_000), Some(Ecn::Ce));
        assert_eq!(tally.class[1].ce_marks, 3);
        assert_eq!(tally.class[1].aqm_drops, 1);
        assert_eq!(tally.class[0], Default::default());
    }

    #[test]
    fn pi2_update_matches_hand_computed_values() {
        // One C packet enqueued at 0 and left there: updates at 16, 32, 48 ms see 16, 32 and
        // 48 ms of delay. Δp′ = 0.16·(q − 0.015) + 3.2·(q − q_prev):
        // 0.05136, then 0.05392 (0.10528), then 0.05648 (0.16176).
        let mut q = DualPi2::new(&DualPi2Params::default());
        let mut rng = testkit::rng();
        let mut tally = Tally::default();
        q.enqueue(Time::ZERO, pkt(Ecn::NotEct), &mut rng, &mut tally);
        q.catch_up(Time(16 * MS));
        assert!((q.prob - 0.051_36).abs() < 1e-12, "{}", q.prob);
        q.catch_up(Time(50 * MS));
        let st = state(&q);
        assert_eq!(
            st.iter().map(|s| s.0).collect::<Vec<_>>(),
            ["p_prime", "p_c", "p_cl"]
        );
        assert!((st[0].1 - 0.161_76).abs() < 1e-12, "{st:?}");
        assert!((st[1].1 - 0.161_76 * 0.161_76).abs() < 1e-12, "p_C = p′²");
        assert!((st[2].1 - 2.0 * 0.161_76).abs() < 1e-12, "p_CL = k·p′");
        // Emptied at 50 ms: the next update sees 0 delay after 48 ms: Δ = −0.0024 − 0.1536.
        q.dequeue(Time(50 * MS), &mut rng, &mut tally);
        q.catch_up(Time(64 * MS));
        assert!((q.prob - (0.161_76 - 0.156)).abs() < 1e-12, "{}", q.prob);
        // Then −0.0024 per update down to 0.
        q.catch_up(Time(112 * MS));
        assert_eq!(q.prob, 0.0);
    }

    #[test]
    fn the_controller_follows_the_larger_of_the_two_queue_delays() {
        // Linux `calculate_probability` uses max(C delay, L delay): an L-only standing queue
        // drives p′ exactly as a C one.
        let mut rng = testkit::rng();
        let mut tally = Tally::default();
        let mut l_only = DualPi2::new(&DualPi2Params::default());
        l_only.enqueue(Time::ZERO, pkt(Ecn::Ect1), &mut rng, &mut tally);
        l_only.catch_up(Time(50 * MS));
        assert!((l_only.prob - 0.161_76).abs() < 1e-12);
        let mut both = DualPi2::new(&DualPi2Params::default());
        both.enqueue(Time::ZERO, pkt(Ecn::NotEct), &mut rng, &mut tally);
        both.enqueue(Time(10 * MS), pkt(Ecn::Ect1), &mut rng, &mut tally);
        both.catch_up(Time(50 * MS));
        assert!((both.prob - 0.161_76).abs() < 1e-12);
    }

    #[test]
    fn p_prime_is_capped_at_one_over_k_without_drop_overload() {
        let mut rng = testkit::rng();
        let mut tally = Tally::default();
        for (drop_overload, cap) in [(true, 1.0), (false, 0.5)] {
            let mut q = DualPi2::new(&DualPi2Params {
                drop_overload,
                ..DualPi2Params::default()
            });
            q.enqueue(Time::ZERO, pkt(Ecn::NotEct), &mut rng, &mut tally);
            q.catch_up(Time(2_000 * MS));
            assert_eq!(q.prob, cap);
        }
    }

    /// Dequeue everything from a frozen queue holding `n` packets of each of `ecns`; tally.
    fn drain(q: &mut DualPi2, ecns: &[Ecn], n: usize) -> Tally {
        let mut rng = testkit::rng();
        let mut tally = Tally::default();
        for _ in 0..n {
            for &e in ecns {
                q.enqueue(Time::ZERO, pkt(e), &mut rng, &mut tally);
            }
        }
        while q.dequeue(Time::ZERO, &mut rng, &mut tally).is_some() {}
        tally
    }

    #[test]
    #[expect(
        clippy::cast_precision_loss,
        reason = "counts of a few thousand are exact in f64"
    )]
    fn coupled_probabilities_are_p_squared_in_c_and_k_p_in_l() {
        let n = 20_000;
        let mut q = frozen(0.2, DualPi2Params::default());
        let t = drain(&mut q, &[Ecn::Ect0, Ecn::Ect1], n);
        // C (ECT(0)) is marked with p′² = 0.04: 800 ± 28 (s.d.); L with 2p′ = 0.4: 8000 ± 69.
        // Bounds at 5 s.d.
        let (c, l) = (t.class[0], t.class[1]);
        assert!((c.ce_marks as f64 - 800.0).abs() < 140.0, "{c:?}");
        assert!((l.ce_marks as f64 - 8_000.0).abs() < 350.0, "{l:?}");
        assert_eq!(t.drops(), 0);
        // Not-ECT C packets are dropped instead, at the same rate.
        let mut q = frozen(0.2, DualPi2Params::default());
        let t = drain(&mut q, &[Ecn::NotEct], n);
        assert!((t.class[0].aqm_drops as f64 - 800.0).abs() < 140.0, "{t:?}");
        assert_eq!(t.class[0].ce_marks, 0);
    }

    #[test]
    #[expect(
        clippy::cast_precision_loss,
        reason = "counts of a few thousand are exact in f64"
    )]
    fn overload_drops_in_both_queues_with_p_squared() {
        // k·p′ = 1.2 > 1: C ignores ECN and drops with p′² = 0.36; L drops with 0.36 and marks
        // the rest. 0.36 of 20 000 = 7200 ± 68 (s.d.), bounds at 5 s.d.
        let n = 20_000;
        let mut q = frozen(0.6, DualPi2Params::default());
        let t = drain(&mut q, &[Ecn::Ect0, Ecn::Ect1], n);
        let (c, l) = (t.class[0], t.class[1]);
        assert!((c.aqm_drops as f64 - 7_200.0).abs() < 340.0, "{c:?}");
        assert_eq!(c.ce_marks, 0);
        assert!((l.aqm_drops as f64 - 7_200.0).abs() < 340.0, "{l:?}");
        // L (90 % of the scheduler) drains while C still holds more than two MTUs, so every L
        // packet faced the AQM.
        assert_eq!(l.ce_marks + l.aqm_drops, n as u64);
        // Without drop_overload, L keeps ECN's no-loss property: everything is marked.
        let mut q = frozen(
            0.6,
            DualPi2Params {
                drop_overload: false,
                ..DualPi2Params::default()
            },
        );
        let t = drain(&mut q, &[Ecn::Ect1], n);
        assert_eq!(t.class[1].aqm_drops, 0);
        // Alone, the last two packets leave less than two MTUs behind: exempt.
        assert_eq!(t.class[1].ce_marks, n as u64 - 2);
    }

    #[test]
    fn nothing_is_dropped_or_marked_below_two_mtus() {
        let mut q = frozen(1.0, DualPi2Params::default());
        let t = drain(&mut q, &[Ecn::NotEct, Ecn::Ect1], 1);
        assert_eq!(t.drops() + t.class[0].ce_marks + t.class[1].ce_marks, 0);
    }

    #[test]
    #[expect(
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation,
        reason = "counts of a few thousand are exact in f64 and fit a usize"
    )]
    fn drop_early_decides_at_enqueue() {
        let mut q = frozen(
            0.6,
            DualPi2Params {
                drop_early: true,
                ..DualPi2Params::default()
            },
        );
        let mut rng = testkit::rng();
        let mut tally = Tally::default();
        let accepted = (0..2_000)
            .filter(|_| q.enqueue(Time::ZERO, pkt(Ecn::NotEct), &mut rng, &mut tally))
            .count();
        // 0.36 dropped: 720 ± 21 (s.d.) of 2000.
        assert!((2_000 - accepted) as f64 > 600.0 && ((2_000 - accepted) as f64) < 840.0);
        assert_eq!(tally.class[0].aqm_drops as usize, 2_000 - accepted);
        while q.dequeue(Time::ZERO, &mut rng, &mut tally).is_some() {}
        assert_eq!(
            tally.class[0].aqm_drops as usize,
            2_000 - accepted,
            "no second decision"
        );
    }

    /// Packets of each class in the first `n` dequeues with both queues backlogged.
    fn shares(c_bytes: u32, l_bytes: u32, n: usize) -> (u64, u64, usize) {
        let mut q = frozen(0.0, DualPi2Params::default());
        let mut rng = testkit::rng();
        let mut tally = Tally::default();
        for _ in 0..3_000 {
            q.enqueue(
                Time::ZERO,
                data(flow(1), c_bytes, Ecn::NotEct),
                &mut rng,
                &mut tally,
            );
            q.enqueue(
                Time::ZERO,
                data(flow(2), l_bytes, Ecn::Ect1),
                &mut rng,
                &mut tally,
            );
        }
        let (mut c, mut l, mut c_pkts) = (0, 0, 0);
        for _ in 0..n {
            let d = q.dequeue(Time::ZERO, &mut rng, &mut tally).unwrap();
            if d.class == 0 {
                c += u64::from(d.pkt.wire_bytes());
                c_pkts += 1;
            } else {
                l += u64::from(d.pkt.wire_bytes());
            }
        }
        (c, l, c_pkts)
    }

    #[test]
    #[expect(
        clippy::cast_precision_loss,
        reason = "counts of a few thousand are exact in f64"
    )]
    fn the_scheduler_gives_c_its_protected_share_when_both_are_backlogged() {
        // Equal sizes: the credit starts at 1500·(10 − 90) and L adds 10·1500, C takes
        // 90·1500: exactly nine L packets, then one C, repeatedly.
        let (_, _, c_pkts) = shares(1500, 1500, 1_000);
        assert_eq!(c_pkts, 100);
        // Unequal sizes: the weights apply to bytes, so C gets 10 % of the bytes to within a
        // packet of either size over the window.
        let (c, l) = {
            let (c, l, _) = shares(1500, 300, 2_000);
            (c as f64, l as f64)
        };
        let share = c / (c + l);
        assert!((share - 0.1).abs() < 1500.0 / (c + l), "C share {share}");
        let (c, l, _) = shares(300, 1500, 2_000);
        let share = c as f64 / (c + l) as f64;
        assert!(
            (share - 0.1).abs() < 1500.0 / (c + l) as f64,
            "C share {share}"
        );
    }

    #[test]
    fn a_lone_queue_gets_the_whole_link_and_the_credit_resets_when_empty() {
        let mut q = frozen(0.0, DualPi2Params::default());
        let mut rng = testkit::rng();
        let mut tally = Tally::default();
        for _ in 0..20 {
            q.enqueue(Time::ZERO, pkt(Ecn::NotEct), &mut rng, &mut tally);
        }
        for _ in 0..20 {
            assert_eq!(
                q.dequeue(Time::ZERO, &mut rng, &mut tally).unwrap().class,
                0
            );
        }
        assert_eq!(q.credit, q.credit_init, "unchanged while L is empty");
        q.credit = 12_345;
        assert!(q.dequeue(Time::ZERO, &mut rng, &mut tally).is_none());
        assert_eq!(q.credit, q.credit_init);
    }

    #[test]
    fn overflow_at_the_packet_limit_is_counted_per_class() {
        let mut q = DualPi2::new(&DualPi2Params {
            limit: 3,
            ..DualPi2Params::default()
        });
        let mut rng = testkit::rng();
        let mut tally = Tally::default();
        for e in [Ecn::NotEct, Ecn::Ect1, Ecn::Ect0] {
            assert!(q.enqueue(Time::ZERO, pkt(e), &mut rng, &mut tally));
        }
        assert!(!q.enqueue(Time::ZERO, pkt(Ecn::Ect1), &mut rng, &mut tally));
        assert!(!q.enqueue(Time::ZERO, pkt(Ecn::NotEct), &mut rng, &mut tally));
        assert_eq!(tally.class[0].overflow_drops, 1);
        assert_eq!(tally.class[1].overflow_drops, 1);
        assert_eq!(q.backlog_packets(), 3);
        assert_eq!(q.backlog_bytes(), 4_500);
    }

    #[test]
    fn lazy_catch_up_equals_ticking_every_update() {
        let p = DualPi2Params::default();
        let mut rng = testkit::rng();
        let mut tally = Tally::default();
        let mut lazy = DualPi2::new(&p);
        let mut ticked = DualPi2::new(&p);
        for q in [&mut lazy, &mut ticked] {
            q.enqueue(Time::ZERO, pkt(Ecn::NotEct), &mut rng, &mut tally);
            q.catch_up(Time(200 * MS));
            q.dequeue(Time(200 * MS), &mut rng, &mut tally);
        }
        assert!(lazy.prob > 0.5);
        let end = Time(30_000 * MS);
        let mut t = ticked.next_update;
        while t <= end {
            ticked.catch_up(t);
            t += p.tupdate;
        }
        lazy.catch_up(end);
        assert_eq!(
            (lazy.prob, lazy.last_qdelay),
            (ticked.prob, ticked.last_qdelay)
        );
        assert_eq!(lazy.next_update, ticked.next_update);
        assert_eq!(lazy.prob, 0.0);
    }
}
