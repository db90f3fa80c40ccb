//! CoDel (RFC 8289; Linux `include/net/codel.h`, `include/net/codel_impl.h`, `sch_codel.c`).
//!
//! Contract: a single FIFO with a packet limit (an arrival beyond it is tail-dropped and counted
//! as an overflow drop, Linux `codel_qdisc_enqueue`). At dequeue the CoDel control law looks at
//! the head packet's sojourn time and drops it (an AQM drop) or, when `ecn` is on and the packet
//! is ECN-capable, sets CE and sends it; with `ce_threshold` every ECN-capable packet whose
//! sojourn exceeds the threshold leaves with CE. One class, "all".
//!
//! The control law lives in `codel_dequeue` over a `CodelVars`, so FQ-CoDel runs one per
//! flow. It follows Linux `codel_dequeue`/`codel_should_drop` step for step, including the
//! integer Newton iteration Linux uses for 1/√count (`codel_Newton_step`, Q0.16 kept in a u16):
//! it is exact to the bit, so the drop schedule is Linux's (one Newton step per count increment,
//! which gives 0.5 rather than 1/√2 at count 2 and is within 1 % of 1/√count from count 5 on).
//! Differences from Linux: time is kept in nanoseconds rather than Linux's 1.024 µs
//! `codel_time_t`, and the device MTU Linux compares the backlog with (`params->mtu` =
//! `psched_mtu`, 1514 bytes with the Ethernet header) is `MTU` = 1500 wire bytes, or the
//! largest packet seen if larger (our wire bytes are IP bytes, without the 14-byte header).
//! Linux's newest `CODEL_MAX_DROPS_PER_DEQUEUE` cap (256) is not modelled.

use cclab_cc::{Dur, Time};
use rand_chacha::ChaCha8Rng;

use super::{Dequeued, Qdisc, Tally, TimedFifo};
use crate::net::NetPacket;
use crate::packet::Packet;

/// The device MTU in wire bytes (IP packet size) that the AQMs compare backlogs with where
/// Linux uses `psched_mtu(dev)` (1514 bytes on a 1500-byte Ethernet, counting the 14-byte
/// header our wire bytes leave out).
pub(crate) const MTU: u64 = 1500;

/// CoDel parameters; defaults are Linux `sch_codel` (`codel_params_init`, `codel_change`).
#[derive(Clone, Debug, PartialEq)]
pub struct CodelParams {
    /// Acceptable standing queue delay (RFC 8289 §4.3, Linux `MS2TIME(5)`): 5 ms.
    pub target: Dur,
    /// Sliding window over which the minimum sojourn must exceed `target` (RFC 8289 §4.2,
    /// Linux `MS2TIME(100)`): 100 ms.
    pub interval: Dur,
    /// Queue limit in packets (Linux `sch->limit = DEFAULT_CODEL_LIMIT` = 1000).
    pub limit: u32,
    /// Mark ECN-capable packets instead of dropping them (Linux default: off).
    pub ecn: bool,
    /// Mark every ECN-capable packet whose sojourn exceeds this (Linux `ce_threshold`, off by
    /// default).
    pub ce_threshold: Option<Dur>,
}

impl Default for CodelParams {
    fn default() -> Self {
        CodelParams {
            target: Dur::from_millis(5),
            interval: Dur::from_millis(100),
            limit: 1000,
            ecn: false,
            ce_threshold: None,
        }
    }
}

/// The constants of one control law (Linux `struct codel_params` without `mtu`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct CodelLaw {
    /// Target sojourn.
    pub target: Dur,
    /// Interval.
    pub interval: Dur,
    /// Mark ECN-capable packets instead of dropping them.
    pub ecn: bool,
    /// CE-mark ECN-capable packets whose sojourn exceeds this.
    pub ce_threshold: Option<Dur>,
    /// The backlog (without the head) at or below which the sojourn never counts as standing:
    /// `None` is Linux's device MTU rule (`MTU`, or the largest packet seen if larger); the
    /// quicly simulator's CoDel uses a fixed 1514 bytes (`super::quicly`).
    pub standing_bytes: Option<u64>,
}

/// 1.0 in Linux's Q0.16 `rec_inv_sqrt` (`~0U >> REC_INV_SQRT_SHIFT`).
const REC_INV_SQRT_ONE: u16 = u16::MAX;

/// Re-entering the dropping state within this many intervals of the last scheduled drop reuses
/// the previous drop rate (Linux `codel_dequeue`: `16 * params->interval`; RFC 8289 §5.4).
const REENTRY_INTERVALS: u64 = 16;

/// The state of one CoDel instance (Linux `struct codel_vars`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct CodelVars {
    /// Drops (and marks) since entering the dropping state.
    pub count: u32,
    /// `count` when the dropping state was last entered.
    pub lastcount: u32,
    /// In the dropping state.
    pub dropping: bool,
    /// 1/√count in Q0.16 (Linux `rec_inv_sqrt`).
    pub rec_inv_sqrt: u16,
    /// When the sojourn will have been above target for an interval (Linux 0 = unset).
    pub first_above_time: Option<Time>,
    /// When the next drop is due (or when the last was).
    pub drop_next: Time,
    /// Sojourn of the last packet examined (Linux `ldelay`).
    pub ldelay: Dur,
}

impl CodelVars {
    /// One Newton step of 1/√count in Linux's fixed point (`codel_Newton_step`):
    /// x ← x/2 · (3 − count·x²), x in Q0.32 built from the u16.
    #[expect(
        clippy::cast_possible_truncation,
        reason = "Linux codel_Newton_step keeps the top 16 bits of a Q0.32 value below 2^32: val >> 16 fits the u16"
    )]
    pub(crate) fn newton_step(&mut self) {
        let invsqrt = u64::from(self.rec_inv_sqrt) << 16;
        let invsqrt2 = (invsqrt * invsqrt) >> 32;
        let mut val = (3u64 << 32).wrapping_sub(u64::from(self.count).wrapping_mul(invsqrt2));
        val >>= 2; // Linux: avoid overflow in the following multiply
        val = val.wrapping_mul(invsqrt) >> (32 - 2 + 1);
        self.rec_inv_sqrt = (val >> 16) as u16;
    }

    /// `t + interval/√count` with the cached reciprocal (Linux `codel_control_law`, which uses
    /// `reciprocal_scale(interval, rec_inv_sqrt << 16)`).
    #[expect(
        clippy::cast_possible_truncation,
        reason = "interval times a Q0.32 factor below 1 is below interval, a u64"
    )]
    pub(crate) fn control_law(&self, t: Time, interval: Dur) -> Time {
        let scaled =
            (u128::from(interval.as_nanos()) * (u128::from(self.rec_inv_sqrt) << 16)) >> 32;
        t + Dur(scaled as u64)
    }
}

/// A FIFO the control law dequeues from (Linux's `dequeue_func` and `*backlog` of
/// `codel_dequeue`). The control law looks at the head in place and removes it only when it
/// drops it or hands it out, so a packet is copied once, into the [`Dequeued`].
pub(crate) trait CodelQueue {
    /// The packets it holds.
    type Pkt: NetPacket;
    /// Bytes held, the head included. The control law compares the backlog after popping the
    /// head with the MTU: this minus the head's wire bytes (the whole qdisc's backlog in Linux,
    /// `sch->qstats.backlog`, also in FQ-CoDel).
    fn backlog(&self) -> u64;
    /// The head packet with its enqueue time.
    fn head(&mut self) -> Option<&mut (Self::Pkt, Time)>;
    /// Remove the head (which exists), updating the backlog.
    fn drop_head(&mut self);
}

/// Linux `codel_should_drop`: has the sojourn been at or above target for a whole interval?
/// `None` is an empty queue; `backlog` is the bytes held with `head` still in.
#[inline]
fn should_drop<P: NetPacket>(
    head: Option<&(P, Time)>,
    backlog: u64,
    now: Time,
    law: &CodelLaw,
    vars: &mut CodelVars,
    maxpacket: &mut u32,
) -> bool {
    let Some((pkt, enqueued)) = head else {
        vars.first_above_time = None;
        return false;
    };
    vars.ldelay = now.saturating_since(*enqueued);
    *maxpacket = (*maxpacket).max(pkt.wire_bytes());
    // Linux pops the head first, so it compares the backlog without it.
    let backlog = backlog - u64::from(pkt.wire_bytes());
    // Linux compares with `params->mtu`; see the module doc for the largest-packet guard.
    let mtu = law
        .standing_bytes
        .unwrap_or_else(|| MTU.max(u64::from(*maxpacket)));
    if vars.ldelay < law.target || backlog <= mtu {
        // Went below: stay below for at least an interval.
        vars.first_above_time = None;
        return false;
    }
    match vars.first_above_time {
        None => {
            vars.first_above_time = Some(now + law.interval);
            false
        }
        Some(t) => now > t,
    }
}

/// One CoDel dequeue (Linux `codel_dequeue`): drops packets from the head of `q` (AQM drops of
/// class 0) or CE-marks the head by the control law until one may be sent. Returns true if the
/// head of `q` is then the packet to send (the caller takes it with [`CodelQueue::take_head`]),
/// false if `q` is empty.
#[inline]
pub(crate) fn codel_dequeue<Q: CodelQueue>(
    q: &mut Q,
    now: Time,
    law: &CodelLaw,
    vars: &mut CodelVars,
    maxpacket: &mut u32,
    tally: &mut Tally,
) -> bool {
    let backlog = q.backlog();
    let Some(head) = q.head() else {
        vars.dropping = false;
        return false;
    };
    let drop = should_drop(Some(&*head), backlog, now, law, vars, maxpacket);
    if !vars.dropping && !drop && law.ce_threshold.is_none() {
        // The common case: nothing to do but send the head.
        return true;
    }
    codel_slow(q, drop, now, law, vars, maxpacket, tally)
}

/// The rest of [`codel_dequeue`] once the head has been examined (`drop` is its verdict): the
/// dropping state, the first drop, and `ce_threshold`.
#[inline(never)]
fn codel_slow<Q: CodelQueue>(
    q: &mut Q,
    drop: bool,
    now: Time,
    law: &CodelLaw,
    vars: &mut CodelVars,
    maxpacket: &mut u32,
    tally: &mut Tally,
) -> bool {
    let mut have = true;
    let mut marked = false;
    if vars.dropping {
        if !drop {
            // Sojourn below target: leave the dropping state.
            vars.dropping = false;
        } else {
            // Drop (or mark) every packet whose drop is due; several if the schedule fell
            // behind.
            while vars.dropping && now >= vars.drop_next {
                let Some(c) = q.head() else { break };
                vars.count = vars.count.wrapping_add(1);
                vars.newton_step();
                if law.ecn && c.0.mark_ce() {
                    tally.mark(0);
                    marked = true;
                    vars.drop_next = vars.control_law(vars.drop_next, law.interval);
                    break;
                }
                tally.drop(0, &c.0, false);
                q.drop_head();
                let backlog = q.backlog();
                let next = q.head();
                have = next.is_some();
                if should_drop(next.map(|c| &*c), backlog, now, law, vars, maxpacket) {
                    vars.drop_next = vars.control_law(vars.drop_next, law.interval);
                } else {
                    vars.dropping = false;
                }
            }
        }
    } else if drop {
        let c = q.head().expect("a packet was dequeued");
        if law.ecn && c.0.mark_ce() {
            tally.mark(0);
            marked = true;
        } else {
            tally.drop(0, &c.0, false);
            q.drop_head();
            let backlog = q.backlog();
            let next = q.head();
            have = next.is_some();
            should_drop(next.map(|c| &*c), backlog, now, law, vars, maxpacket);
        }
        vars.dropping = true;
        // If we went above target soon after last leaving the dropping state, resume at the
        // drop rate that controlled the queue then.
        let delta = vars.count.wrapping_sub(vars.lastcount);
        let since_next = i128::from(now.as_nanos()) - i128::from(vars.drop_next.as_nanos());
        let recent = i128::from(REENTRY_INTERVALS * law.interval.as_nanos());
        if delta > 1 && since_next < recent {
            vars.count = delta;
            vars.newton_step();
        } else {
            vars.count = 1;
            vars.rec_inv_sqrt = REC_INV_SQRT_ONE;
        }
        vars.lastcount = vars.count;
        vars.drop_next = vars.control_law(now, law.interval);
    }
    if have
        && let Some(th) = law.ce_threshold
        && vars.ldelay > th
        && let Some(c) = q.head()
        && c.0.mark_ce()
        && !marked
    {
        tally.mark(0);
    }
    have
}

/// The FIFO of a CoDel queue, as the control law sees it.
impl<P: NetPacket> CodelQueue for TimedFifo<P> {
    type Pkt = P;
    #[inline]
    fn backlog(&self) -> u64 {
        self.bytes
    }
    #[inline]
    fn head(&mut self) -> Option<&mut (P, Time)> {
        self.q.front_mut()
    }
    #[inline]
    fn drop_head(&mut self) {
        self.pop();
    }
}

/// A CoDel queue.
#[derive(Debug)]
pub struct Codel<P = Packet> {
    p: CodelParams,
    law: CodelLaw,
    fifo: TimedFifo<P>,
    vars: CodelVars,
    /// Largest packet seen (Linux `codel_stats.maxpacket`).
    maxpacket: u32,
}

impl<P: NetPacket> Codel<P> {
    /// An empty queue.
    #[must_use]
    pub fn new(p: &CodelParams) -> Self {
        Codel {
            p: p.clone(),
            law: CodelLaw {
                target: p.target,
                interval: p.interval,
                ecn: p.ecn,
                ce_threshold: p.ce_threshold,
                standing_bytes: None,
            },
            fifo: TimedFifo::default(),
            vars: CodelVars::default(),
            maxpacket: 0,
        }
    }
}

impl<P: NetPacket> Qdisc<P> for Codel<P> {
    fn enqueue(&mut self, now: Time, pkt: P, _rng: &mut ChaCha8Rng, tally: &mut Tally) -> bool {
        // Linux `codel_qdisc_enqueue`: tail drop at the packet limit.
        if self.fifo.len() >= self.p.limit {
            tally.drop(0, &pkt, true);
            return false;
        }
        self.fifo.push(pkt, now);
        tally.enqueue(0);
        true
    }

    fn dequeue(
        &mut self,
        now: Time,
        _rng: &mut ChaCha8Rng,
        tally: &mut Tally,
    ) -> Option<Dequeued<P>> {
        if codel_dequeue(
            &mut self.fifo,
            now,
            &self.law,
            &mut self.vars,
            &mut self.maxpacket,
            tally,
        ) {
            self.fifo.pop().map(|(pkt, enqueued)| Dequeued {
                pkt,
                enqueued,
                class: 0,
            })
        } else {
            None
        }
    }

    fn backlog_packets(&self) -> u32 {
        self.fifo.len()
    }

    fn backlog_bytes(&self) -> u64 {
        self.fifo.bytes
    }

    fn state(&self, sink: &mut dyn FnMut(&'static str, f64)) {
        sink("count", f64::from(self.vars.count));
        sink("dropping", if self.vars.dropping { 1.0 } else { 0.0 });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Ecn;
    use crate::queue::testkit::{self, Event};

    const MS: u64 = 1_000_000;

    /// Linux's Newton iterate from count 1 (x = 0xFFFF/2^16), in floating point: the value the
    /// integer `codel_Newton_step` tracks (to within 2^-16 per step).
    fn newton_float(count: u32) -> f64 {
        let mut x = f64::from(u16::MAX) / 65536.0;
        for c in 2..=count {
            x = x / 2.0 * (3.0 - f64::from(c) * x * x);
        }
        x
    }

    #[test]
    fn newton_step_matches_linux_and_converges_to_inverse_sqrt() {
        let mut v = CodelVars {
            count: 1,
            rec_inv_sqrt: REC_INV_SQRT_ONE,
            ..CodelVars::default()
        };
        for c in 2..=64u32 {
            v.count = c;
            v.newton_step();
            let x = f64::from(v.rec_inv_sqrt) / 65536.0;
            // The integer iterate follows the float recursion to within a few Q0.16 ulps.
            assert!((x - newton_float(c)).abs() < 1e-4, "count {c}: {x}");
            // Linux's single step per increment: 0.5 at count 2 (not 0.707), then within 3 %
            // of 1/√count from count 3 and within 0.5 % from count 9 (computed offline).
            let rel = x * f64::from(c).sqrt() - 1.0;
            if c >= 9 {
                assert!(rel.abs() < 0.005, "count {c}: rel {rel}");
            } else if c >= 3 {
                assert!(rel.abs() < 0.03, "count {c}: rel {rel}");
            }
        }
        v.count = 2;
        v.rec_inv_sqrt = REC_INV_SQRT_ONE;
        v.newton_step();
        assert_eq!(v.rec_inv_sqrt, 32769, "Linux gives 0.50002 at count 2");
    }

    #[test]
    fn control_law_scales_interval_by_rec_inv_sqrt() {
        let v = CodelVars {
            rec_inv_sqrt: 1 << 15, // 0.5
            ..CodelVars::default()
        };
        assert_eq!(
            v.control_law(Time(1_000), Dur::from_millis(100)),
            Time(1_000 + 50 * MS)
        );
    }

    /// Packets of 1500 bytes at 12 Mbit/s take exactly 1 ms; arrivals every 0.5 ms are twice
    /// the service rate, so the packet dequeued at k ms arrived at k/2 ms: its sojourn first
    /// reaches the 5 ms target at the dequeue at 10 ms.
    fn overload_run(ecn_pkts: bool, ecn_on: bool) -> testkit::Run {
        let p = CodelParams {
            ecn: ecn_on,
            ..CodelParams::default()
        };
        let mut q = Codel::new(&p);
        let ecn = if ecn_pkts { Ecn::Ect0 } else { Ecn::NotEct };
        let arrivals = testkit::cbr(testkit::flow(1), Time::ZERO, Dur(MS / 2), 1500, ecn, 1200);
        testkit::drive(&mut q, &arrivals, 12_000_000, Time(600 * MS))
    }

    #[test]
    #[expect(
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation,
        reason = "test times of seconds in nanoseconds and a few drop counts are exact in f64 and u32"
    )]
    fn first_drop_one_interval_after_target_exceeded_then_control_law_spacing() {
        let run = overload_run(false, false);
        let drops: Vec<Time> = run
            .events
            .iter()
            .filter_map(|e| match e {
                Event::AqmDrop { at, .. } => Some(*at),
                _ => None,
            })
            .collect();
        assert!(drops.len() >= 8, "drops {drops:?}");
        // The sojourn reaches 5 ms at the dequeue at 10 ms; CoDel may drop once `now` is
        // strictly after 10 + 100 ms (Linux `codel_time_after`): the dequeue at 111 ms.
        assert_eq!(drops[0], Time(111 * MS));
        // Then drop k+1 is at the first dequeue (a whole millisecond) at or after drop_next,
        // which advances by interval × x(count): 100 × (1.0, 0.5, 0.5625, 0.488, …) ms. The
        // float recursion differs from Linux's Q0.16 integer by < 1 µs over these steps, and
        // dequeues are one packet time (1 ms) apart, hence the bounds.
        let mut drop_next = 111.0 * MS as f64 + 100.0 * MS as f64 * newton_float(1);
        for (k, t) in drops.iter().enumerate().take(8).skip(1) {
            let t = t.0 as f64;
            assert!(
                t + 1e3 >= drop_next && t < drop_next + MS as f64,
                "drop {k} at {t} ns, drop_next {drop_next} ns"
            );
            drop_next += 100.0 * MS as f64 * newton_float(k as u32 + 1);
        }
        // Gaps shrink like interval/√count: 100, 50, 57, 49, 44 ms …
        let gaps: Vec<u64> = drops.windows(2).map(|w| (w[1].0 - w[0].0) / MS).collect();
        assert_eq!(&gaps[..4], &[100, 50, 57, 49], "gaps {gaps:?}");
        assert!(run.tally.class[0].overflow_drops == 0);
        assert_eq!(run.tally.class[0].ce_marks, 0);
    }

    #[test]
    fn ecn_packets_are_marked_on_the_same_schedule_and_delivered() {
        let dropped = overload_run(false, true); // ECN on but Not-ECT packets: drops
        let marked = overload_run(true, true);
        let times = |run: &testkit::Run, mark: bool| -> Vec<Time> {
            run.events
                .iter()
                .filter_map(|e| match (e, mark) {
                    (Event::Mark { at, .. }, true) | (Event::AqmDrop { at, .. }, false) => {
                        Some(*at)
                    }
                    _ => None,
                })
                .collect()
        };
        let d = times(&dropped, false);
        let m = times(&marked, true);
        assert!(d.len() >= 6 && m.len() >= 6);
        assert_eq!(&d[..6], &m[..6]);
        assert_eq!(marked.tally.class[0].aqm_drops, 0);
        // Every arrival of the marked run within the horizon is delivered or still queued.
        let c = marked.tally.class[0];
        assert_eq!(c.enqueued, marked.departures.len() as u64 + marked.backlog);
        let ce = marked
            .departures
            .iter()
            .filter(|(_, d)| d.pkt.ecn == Ecn::Ce)
            .count() as u64;
        assert_eq!(ce, c.ce_marks);
    }

    #[test]
    fn no_drops_while_sojourn_stays_below_target() {
        // 90 % load of evenly spaced packets: no queue beyond the one in service.
        let mut q = Codel::new(&CodelParams::default());
        let arrivals = testkit::cbr(
            testkit::flow(1),
            Time::ZERO,
            Dur(MS * 10 / 9),
            1500,
            Ecn::NotEct,
            1800,
        );
        let run = testkit::drive(&mut q, &arrivals, 12_000_000, Time(2_000 * MS));
        assert_eq!(run.tally.drops(), 0);
        assert_eq!(run.departures.len(), 1800);
        assert!(run.max_sojourn() < Dur::from_millis(5));
    }

    #[test]
    fn tail_drop_at_the_packet_limit_counts_overflow() {
        let mut q = Codel::new(&CodelParams {
            limit: 10,
            ..CodelParams::default()
        });
        let mut rng = testkit::rng();
        let mut tally = Tally::default();
        let accepted: Vec<bool> = (0..15)
            .map(|_| {
                q.enqueue(
                    Time::ZERO,
                    testkit::data(testkit::flow(1), 1500, Ecn::NotEct),
                    &mut rng,
                    &mut tally,
                )
            })
            .collect();
        assert_eq!(accepted.iter().filter(|a| **a).count(), 10);
        assert!(accepted[10..].iter().all(|a| !a));
        assert_eq!(tally.class[0].overflow_drops, 5);
        assert_eq!(tally.class[0].data_dropped, 5);
        assert_eq!(tally.class[0].enqueued, 10);
        assert_eq!(q.backlog_packets(), 10);
        assert_eq!(q.backlog_bytes(), 15_000);
    }

    /// A queue of `n` 1500-byte packets all enqueued at time 0, so a dequeue at t sees sojourn t.
    fn standing(n: usize, p: &CodelParams) -> Codel {
        let mut q = Codel::new(p);
        let mut rng = testkit::rng();
        let mut tally = Tally::default();
        for _ in 0..n {
            q.enqueue(
                Time::ZERO,
                testkit::data(testkit::flow(1), 1500, Ecn::NotEct),
                &mut rng,
                &mut tally,
            );
        }
        q
    }

    #[test]
    fn leaves_dropping_below_target_and_reuses_count_on_quick_reentry() {
        let mut q = standing(400, &CodelParams::default());
        let mut rng = testkit::rng();
        let mut tally = Tally::default();
        // Above target from 10 ms: ok to drop after 110 ms; drops at 111, 211, 261, 318 ms.
        for t in (10..=320).step_by(1) {
            q.dequeue(Time(t * MS), &mut rng, &mut tally);
        }
        assert!(q.vars.dropping);
        assert_eq!(q.vars.count, 4);
        assert_eq!(tally.class[0].aqm_drops, 4);
        // Fresh packets (sojourn 0) at the head: the next dequeue leaves the dropping state.
        let n = q.backlog_packets();
        for _ in 0..n {
            q.fifo.drop_head();
        }
        for _ in 0..200 {
            q.enqueue(
                Time(320 * MS),
                testkit::data(testkit::flow(1), 1500, Ecn::NotEct),
                &mut rng,
                &mut tally,
            );
        }
        q.dequeue(Time(321 * MS), &mut rng, &mut tally);
        assert!(!q.vars.dropping);
        // Above target again from 326 ms (sojourn 6 ms), ok to drop after 426 ms — within
        // 16 intervals of drop_next — so count restarts at count − lastcount = 4 − 1 = 3.
        for t in 326..=427 {
            q.dequeue(Time(t * MS), &mut rng, &mut tally);
        }
        assert!(q.vars.dropping);
        assert_eq!(q.vars.count, 3);
        assert_eq!(q.vars.lastcount, 3);
    }

    #[test]
    fn reentry_after_sixteen_intervals_restarts_at_count_one() {
        let mut q = standing(400, &CodelParams::default());
        let mut rng = testkit::rng();
        let mut tally = Tally::default();
        for t in 10..=320 {
            q.dequeue(Time(t * MS), &mut rng, &mut tally);
        }
        assert_eq!(q.vars.count, 4);
        // Drain: the last dequeue sees an empty backlog, which ends the dropping state (Linux
        // `*backlog <= params->mtu` clears first_above_time).
        let n = q.backlog_packets();
        for _ in 1..n {
            q.fifo.drop_head();
        }
        q.dequeue(Time(321 * MS), &mut rng, &mut tally);
        assert!(!q.vars.dropping);
        // Idle until 2.5 s (more than 16 × 100 ms after drop_next), then a standing queue.
        for _ in 0..300 {
            q.enqueue(
                Time(2_500 * MS),
                testkit::data(testkit::flow(1), 1500, Ecn::NotEct),
                &mut rng,
                &mut tally,
            );
        }
        for t in 2_510..=2_612 {
            q.dequeue(Time(t * MS), &mut rng, &mut tally);
        }
        assert!(q.vars.dropping);
        assert_eq!(q.vars.count, 1);
    }

    #[test]
    fn ce_threshold_marks_ect_packets_above_it_and_leaves_others() {
        let p = CodelParams {
            ce_threshold: Some(Dur::from_millis(1)),
            ..CodelParams::default()
        };
        let mut q = Codel::new(&p);
        let mut rng = testkit::rng();
        let mut tally = Tally::default();
        for ecn in [Ecn::Ect0, Ecn::Ect1, Ecn::NotEct, Ecn::Ect0] {
            q.enqueue(
                Time::ZERO,
                testkit::data(testkit::flow(1), 1500, ecn),
                &mut rng,
                &mut tally,
            );
        }
        let mut out = |ms_tenths: u64| {
            q.dequeue(Time(ms_tenths * MS / 10), &mut rng, &mut tally)
                .unwrap()
                .pkt
                .ecn
        };
        assert_eq!(out(5), Ecn::Ect0); // 0.5 ms: below
        assert_eq!(out(10), Ecn::Ect1); // 1 ms: not above (Linux `codel_time_after`)
        assert_eq!(out(15), Ecn::NotEct); // above, but not ECN-capable
        assert_eq!(out(20), Ecn::Ce);
        assert_eq!(tally.class[0].ce_marks, 1);
        assert_eq!(tally.drops(), 0);
    }

    #[test]
    fn no_drop_while_backlog_is_at_most_one_mtu() {
        // Two packets with a huge sojourn: after the head is popped one MTU remains, so CoDel
        // never drops (Linux `*backlog <= params->mtu`).
        let mut q = standing(2, &CodelParams::default());
        let mut rng = testkit::rng();
        let mut tally = Tally::default();
        assert!(q.dequeue(Time(500 * MS), &mut rng, &mut tally).is_some());
        assert!(q.dequeue(Time(700 * MS), &mut rng, &mut tally).is_some());
        assert_eq!(tally.drops(), 0);
    }

    #[test]
    fn state_reports_count_and_dropping() {
        let q = Codel::<Packet>::new(&CodelParams::default());
        let mut seen = Vec::new();
        q.state(&mut |k, v| seen.push((k, v)));
        assert_eq!(seen, vec![("count", 0.0), ("dropping", 0.0)]);
    }
}
