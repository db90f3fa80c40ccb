//! PIE (RFC 8033; Linux `include/net/pie.h`, `net/sched/sch_pie.c`).
//!
//! Contract: a FIFO with a packet limit (tail drop, counted as overflow, Linux
//! `pie_qdisc_enqueue`). Each arrival may be dropped early with the drop probability p (an AQM
//! drop), or CE-marked instead when `ecn` is on, the packet is ECN-capable and p ≤ 10 %. p is
//! updated every `tupdate` by the PI controller of Linux `pie_calculate_probability` from the
//! queue delay, which is the sojourn of the last dequeued packet (default) or, with
//! `dq_rate_estimator`, backlog / departure rate (Little's law, Linux `pie_process_dequeue`).
//! Updates run lazily: every call first performs the updates that fell due (an update reads
//! only PIE's variables and the backlog, which do not change between calls). One class, "all".
//!
//! Linux behaviour kept (where it differs from or refines RFC 8033):
//! - the first update is half a second after creation (`pie_init`: `jiffies + HZ / 2`), then
//!   every `tupdate`;
//! - Δp = α·(qdelay − target) + β·(qdelay − qdelay_old), with α and β halved below p = 10 % and
//!   divided by 4 more per decade below 1 % down to 10⁻⁶ (RFC 8033 §4.2's table); an increase
//!   is capped at 2 % once p ≥ 10 % (§5.5); +2 % when qdelay > 250 ms; when qdelay and the
//!   previous one are both 0, p −= p/64 (Linux; the RFC's decay is p·0.98);
//! - p is not clamped at 1: Linux keeps p in u64 units of 2⁻⁵⁶ and only guards against
//!   wrap-around (at 256), so p above 1 stays "certain drop" for longer; we keep that;
//! - early drop (`pie_drop_early`): none while the burst allowance lasts, none when the current
//!   qdelay < target/2 and p < 20 %, none when fewer than two MTUs are queued; bytemode scales p
//!   by size/MTU; then Linux's de-randomisation (RFC 8033 §5.4): p accumulates per arrival,
//!   no drop below 0.85, certain drop at 8.5, else a draw with p; a drop resets the sum;
//! - the burst allowance (`max_burst`) is consumed by the time between dequeues (timestamp
//!   mode) or per completed rate measurement (rate mode), not per update as in the RFC, and is
//!   restored by `pie_vars_init` when both delays are below target/2 and p is 0.
//!
//! Differences: p and the delays are floating point (seconds, nanoseconds) where Linux uses
//! 2⁻⁵⁶ units and 64 ns psched ticks; the MTU is `codel::MTU` wire bytes.

use cclab_cc::{Dur, Time};
use rand_chacha::ChaCha8Rng;

use super::codel::MTU;
use super::{Dequeued, Qdisc, Tally, TimedFifo};
use crate::net::NetPacket;
use crate::packet::Packet;
use crate::rng::unit_f64;

/// Delay until the first probability update (Linux `pie_init`: `mod_timer(..., jiffies + HZ / 2)`).
const FIRST_UPDATE: Dur = Dur::from_millis(500);

/// Queue delay above which p rises by a further 2 % per update (Linux
/// `pie_calculate_probability`, "250ms is derived through experiments"; RFC 8033 §4.2).
const HIGH_DELAY: Dur = Dur::from_millis(250);

/// Bytes of backlog (and of a measurement) for the departure-rate estimator (Linux
/// `QUEUE_THRESHOLD` = 16384; RFC 8033 §5.2 uses 16 KB too).
const QUEUE_THRESHOLD: u64 = 16_384;

/// Linux's u64 probability wraps at 2⁶⁴ = 256 × `MAX_PROB`; its overflow guard resets p to 1 there.
const PROB_WRAP: f64 = 256.0;

/// PIE parameters; defaults are Linux `pie_params_init` (target and tupdate since commits
/// `abde7920de06` and `29daa8553866`).
#[derive(Clone, Debug, PartialEq)]
pub struct PieParams {
    /// Target queueing delay QDELAY_REF: 15 ms.
    pub target: Dur,
    /// Update period T_UPDATE: 15 ms.
    pub tupdate: Dur,
    /// Proportional gain α, Hz (Linux 2/16 = 0.125).
    pub alpha: f64,
    /// Derivative gain β, Hz (Linux 20/16 = 1.25).
    pub beta: f64,
    /// Queue limit in packets (Linux 1000).
    pub limit: u32,
    /// Mark ECN-capable packets while the probability is at most 10 % (Linux default: off).
    pub ecn: bool,
    /// Scale the drop probability by packet size (Linux `bytemode`, off).
    pub bytemode: bool,
    /// Burst allowance MAX_BURST: 150 ms.
    pub max_burst: Dur,
    /// Estimate the queue delay from the departure rate (Little's law) instead of per-packet
    /// timestamps (Linux `dq_rate_estimator`, off: timestamps).
    pub dq_rate_estimator: bool,
}

impl Default for PieParams {
    fn default() -> Self {
        PieParams {
            target: Dur::from_millis(15),
            tupdate: Dur::from_millis(15),
            alpha: 0.125,
            beta: 1.25,
            limit: 1000,
            ecn: false,
            bytemode: false,
            max_burst: Dur::from_millis(150),
            dq_rate_estimator: false,
        }
    }
}

/// PIE's variables (Linux `struct pie_vars`).
#[derive(Clone, Debug, PartialEq)]
struct PieVars {
    /// Current queue delay estimate.
    qdelay: Dur,
    /// The previous one.
    qdelay_old: Dur,
    /// Burst allowance left.
    burst_time: Dur,
    /// Timestamp mode: last dequeue; rate mode: start of the measurement (Linux `dq_tstamp`,
    /// `DTIME_INVALID` = None).
    dq_tstamp: Option<Time>,
    /// Drop probability (1.0 = Linux `MAX_PROB`).
    prob: f64,
    /// De-randomisation sum.
    accu_prob: f64,
    /// Bytes dequeued in the current rate measurement (Linux `DQCOUNT_INVALID` = None).
    dq_count: Option<u64>,
    /// Average departure rate, bytes per nanosecond (0 = none yet).
    avg_dq_rate: f64,
}

impl PieVars {
    fn new(max_burst: Dur) -> Self {
        let mut v = PieVars {
            qdelay: Dur::ZERO,
            qdelay_old: Dur::ZERO,
            burst_time: Dur::ZERO,
            dq_tstamp: None,
            prob: 0.0,
            accu_prob: 0.0,
            dq_count: None,
            avg_dq_rate: 0.0,
        };
        v.reset(max_burst);
        v
    }

    /// Linux `pie_vars_init` (keeps p and the delays).
    fn reset(&mut self, max_burst: Dur) {
        self.burst_time = max_burst;
        self.dq_tstamp = None;
        self.accu_prob = 0.0;
        self.dq_count = None;
        self.avg_dq_rate = 0.0;
    }

    fn reduce_burst(&mut self, dtime: Dur) {
        self.burst_time = self.burst_time - dtime;
    }
}

/// A PIE queue.
#[derive(Debug)]
pub struct Pie<P = Packet> {
    p: PieParams,
    fifo: TimedFifo<P>,
    vars: PieVars,
    next_update: Time,
}

impl<P: NetPacket> Pie<P> {
    /// An empty queue (created at time 0).
    #[must_use]
    pub fn new(p: &PieParams) -> Self {
        Pie {
            p: p.clone(),
            fifo: TimedFifo::default(),
            vars: PieVars::new(p.max_burst),
            next_update: Time::ZERO + FIRST_UPDATE,
        }
    }

    /// Run every update due at or before `now`. When an update leaves the variables unchanged
    /// the following ones would too (they depend on nothing else), so those are skipped.
    fn catch_up(&mut self, now: Time) {
        let period = self.p.tupdate.as_nanos();
        while now >= self.next_update {
            let before = self.vars.clone();
            self.calculate_probability();
            if period == 0 {
                // Linux `pie_timer` re-arms only while tupdate is non-zero.
                self.next_update = Time::MAX;
                break;
            }
            self.next_update += Dur(period);
            if self.vars == before && now >= self.next_update {
                let skip = (now.as_nanos() - self.next_update.as_nanos()) / period + 1;
                self.next_update += Dur(skip * period);
            }
        }
    }

    /// Linux `pie_calculate_probability` with the backlog at the update.
    #[expect(
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "a backlog in bytes is exact in f64 below 2^53, and divided by a positive rate (bytes per ns) it gives a non-negative delay that fits a u64 nanoseconds for any real backlog"
    )]
    fn calculate_probability(&mut self) {
        let p = &self.p;
        let v = &mut self.vars;
        let backlog = self.fifo.bytes;
        let (qdelay, qdelay_old) = if p.dq_rate_estimator {
            let old = v.qdelay;
            v.qdelay_old = v.qdelay;
            let q = if v.avg_dq_rate > 0.0 {
                Dur((backlog as f64 / v.avg_dq_rate) as u64)
            } else {
                Dur::ZERO
            };
            (q, old)
        } else {
            (v.qdelay, v.qdelay_old)
        };
        // A zero delay with packets queued means a tiny backlog: no decay this round.
        let mut update_prob = !(qdelay == Dur::ZERO && backlog != 0);
        // RFC 8033 §4.2: smaller steps while p is small.
        let (mut alpha, mut beta) = (p.alpha, p.beta);
        if v.prob < 0.1 {
            alpha /= 2.0;
            beta /= 2.0;
            let mut power = 100.0;
            while v.prob < 1.0 / power && power <= 1e6 {
                alpha /= 4.0;
                beta /= 4.0;
                power *= 10.0;
            }
        }
        let secs = |d: Dur| d.as_secs_f64();
        let mut delta =
            alpha * (secs(qdelay) - secs(p.target)) + beta * (secs(qdelay) - secs(qdelay_old));
        // Increase by at most 2 % per update once p ≥ 10 % (RFC 8033 §5.5).
        if delta > 0.02 && v.prob >= 0.1 {
            delta = 0.02;
        }
        if qdelay > HIGH_DELAY {
            delta += 0.02;
        }
        v.prob += delta;
        if delta > 0.0 {
            if v.prob >= PROB_WRAP {
                v.prob = 1.0;
                update_prob = false;
            }
        } else if v.prob < 0.0 {
            v.prob = 0.0;
        }
        // Decay quickly when the queue has been empty for two updates.
        if qdelay == Dur::ZERO && qdelay_old == Dur::ZERO && update_prob {
            v.prob -= v.prob / 64.0;
        }
        v.qdelay = qdelay;
        let half = Dur(p.target.as_nanos() / 2);
        if v.qdelay < half
            && v.qdelay_old < half
            && v.prob == 0.0
            && (!p.dq_rate_estimator || v.avg_dq_rate > 0.0)
        {
            v.reset(p.max_burst);
        }
        if !p.dq_rate_estimator {
            v.qdelay_old = qdelay;
        }
    }

    /// Linux `pie_drop_early` for an arrival of `size` bytes while `self.fifo.bytes` are queued.
    #[expect(
        clippy::cast_precision_loss,
        reason = "MTU is a small constant, exact in f64"
    )]
    fn drop_early(&mut self, size: u32, rng: &mut ChaCha8Rng) -> bool {
        let v = &mut self.vars;
        if v.burst_time > Dur::ZERO {
            return false;
        }
        if v.qdelay < Dur(self.p.target.as_nanos() / 2) && v.prob < 0.2 {
            return false;
        }
        if self.fifo.bytes < 2 * MTU {
            return false;
        }
        let local_prob = if self.p.bytemode && u64::from(size) <= MTU {
            v.prob * f64::from(size) / MTU as f64
        } else {
            v.prob
        };
        if local_prob == 0.0 {
            v.accu_prob = 0.0;
        } else {
            v.accu_prob += local_prob;
        }
        if v.accu_prob < 0.85 {
            return false;
        }
        if v.accu_prob >= 8.5 {
            return true;
        }
        if unit_f64(rng) < local_prob {
            v.accu_prob = 0.0;
            return true;
        }
        false
    }

    /// Linux `pie_process_dequeue` after a packet of `len` bytes enqueued at `enqueued` left
    /// (`self.fifo.bytes` is the backlog after it).
    #[expect(
        clippy::cast_precision_loss,
        reason = "a byte count and an interval in nanoseconds of one measurement are exact in f64 below 2^53"
    )]
    fn process_dequeue(&mut self, now: Time, len: u32, enqueued: Time) {
        let backlog = self.fifo.bytes;
        let v = &mut self.vars;
        if !self.p.dq_rate_estimator {
            v.qdelay = now.saturating_since(enqueued);
            let dtime = v.dq_tstamp.map_or(Dur::ZERO, |t| now.saturating_since(t));
            v.dq_tstamp = Some(now);
            if backlog == 0 {
                v.qdelay = Dur::ZERO;
            }
            if dtime > Dur::ZERO {
                v.reduce_burst(dtime);
            }
            return;
        }
        // Start a measurement once about ten packets are queued.
        if backlog >= QUEUE_THRESHOLD && v.dq_count.is_none() {
            v.dq_tstamp = Some(now);
            v.dq_count = Some(0);
        }
        let Some(count) = v.dq_count.as_mut() else {
            return;
        };
        *count += u64::from(len);
        if *count < QUEUE_THRESHOLD {
            return;
        }
        let start = v.dq_tstamp.expect("a measurement has a start");
        let dtime = now.saturating_since(start);
        if dtime == Dur::ZERO {
            return;
        }
        let rate = *count as f64 / dtime.as_nanos() as f64;
        v.avg_dq_rate = if v.avg_dq_rate == 0.0 {
            rate
        } else {
            v.avg_dq_rate - v.avg_dq_rate / 8.0 + rate / 8.0
        };
        if backlog < QUEUE_THRESHOLD {
            v.dq_count = None;
        } else {
            v.dq_count = Some(0);
            v.dq_tstamp = Some(now);
        }
        v.reduce_burst(dtime);
    }
}

impl<P: NetPacket> Qdisc<P> for Pie<P> {
    fn enqueue(&mut self, now: Time, mut pkt: P, rng: &mut ChaCha8Rng, tally: &mut Tally) -> bool {
        self.catch_up(now);
        if self.fifo.len() >= self.p.limit {
            tally.drop(0, &pkt, true);
            self.vars.accu_prob = 0.0;
            return false;
        }
        let accept = if !self.drop_early(pkt.wire_bytes(), rng) {
            true
        } else if self.p.ecn && self.vars.prob <= 0.1 && pkt.mark_ce() {
            tally.mark(0);
            true
        } else {
            false
        };
        if !accept {
            tally.drop(0, &pkt, false);
            self.vars.accu_prob = 0.0;
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
        _tally: &mut Tally,
    ) -> Option<Dequeued<P>> {
        self.catch_up(now);
        let (pkt, enqueued) = self.fifo.pop()?;
        self.process_dequeue(now, pkt.wire_bytes(), enqueued);
        Some(Dequeued {
            pkt,
            enqueued,
            class: 0,
        })
    }

    fn backlog_packets(&self) -> u32 {
        self.fifo.len()
    }

    fn backlog_bytes(&self) -> u64 {
        self.fifo.bytes
    }

    fn state(&self, sink: &mut dyn FnMut(&'static str, f64)) {
        sink("p", self.vars.prob);
        sink("qdelay_ms", self.vars.qdelay.as_millis_f64());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Ecn;
    use crate::queue::testkit::{self, Event, data, flow};

    const MS: u64 = 1_000_000;

    #[test]
    #[expect(
        clippy::cast_precision_loss,
        reason = "counts of a few thousand are exact in f64"
    )]
    fn converges_under_a_ten_percent_overload() {
        let p = PieParams::default();
        let mut q = Pie::new(&p);
        // 10 Mbit/s (1.2 ms per packet), unresponsive arrivals at 1.1× for 20 s.
        let arrivals = testkit::cbr(
            flow(1),
            Time::ZERO,
            Dur(1_090_909),
            1500,
            Ecn::NotEct,
            18_334,
        );
        let run = testkit::drive(&mut q, &arrivals, 10_000_000, Time(20_000 * MS));
        let from = Time(10_000 * MS);
        let arrived = arrivals.iter().filter(|a| a.at >= from).count() as f64;
        let dropped: u64 = run
            .events
            .iter()
            .filter_map(|e| match e {
                Event::AqmDrop { at, n, .. } if *at >= from => Some(*n),
                _ => None,
            })
            .sum();
        let sojourns: Vec<f64> = run
            .departures
            .iter()
            .filter(|(t, _)| *t >= from)
            .map(|(t, d)| t.saturating_since(d.enqueued).as_millis_f64())
            .collect();
        let mean = sojourns.iter().sum::<f64>() / sojourns.len() as f64;
        // Integral control: the mean delay settles at the 15 ms target. The window's mean
        // lies within ±5 ms of it (the controller's oscillation around target is a few ms).
        assert!((10.0..20.0).contains(&mean), "mean sojourn {mean} ms");
        // The link stays busy (10 s at 833 packets/s), and in steady state PIE drops the
        // excess: 1/11 of arrivals, give or take the queue's change over the window (under
        // 100 packets, 100/9167 = 0.011).
        assert!(sojourns.len() >= 8_300, "{}", sojourns.len());
        let fraction = dropped as f64 / arrived;
        assert!(
            (fraction - 1.0 / 11.0).abs() < 0.011,
            "drop fraction {fraction}"
        );
        assert_eq!(run.tally.class[0].overflow_drops, 0);
        let mut p_now = 0.0;
        q.state(&mut |k, v| {
            if k == "p" {
                p_now = v;
            }
        });
        assert!(p_now > 0.05 && p_now < 0.5, "p {p_now}");
    }

    fn pie_with(p: &PieParams, prob: f64, qdelay: Dur, qdelay_old: Dur, bytes: u64) -> Pie {
        let mut q = Pie::new(p);
        q.vars.prob = prob;
        q.vars.qdelay = qdelay;
        q.vars.qdelay_old = qdelay_old;
        q.fifo.bytes = bytes;
        q
    }

    fn updated(prob: f64, qdelay_ms: u64, old_ms: u64, bytes: u64) -> PieVars {
        let mut q = pie_with(
            &PieParams::default(),
            prob,
            Dur::from_millis(qdelay_ms),
            Dur::from_millis(old_ms),
            bytes,
        );
        q.calculate_probability();
        q.vars
    }

    #[test]
    fn probability_update_matches_hand_computed_values() {
        // α = 0.125 Hz, β = 1.25 Hz, target 15 ms. Δp = α·(q − 15 ms) + β·(q − q_old), scaled.
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        // p < 1e-6: α, β / 2048. (0.125·0.005 + 1.25·0.010)/2048.
        let v = updated(0.0, 20, 10, 30_000);
        assert!(close(v.prob, 0.013_125 / 2048.0), "{}", v.prob);
        assert_eq!(
            (v.qdelay, v.qdelay_old),
            (Dur::from_millis(20), Dur::from_millis(20))
        );
        // 1e-3 ≤ p < 1e-2: / 8. (0.125·0.015 + 1.25·0.010)/8 = 0.001796875.
        assert!(close(
            updated(0.005, 30, 20, 30_000).prob,
            0.005 + 0.001_796_875
        ));
        // 1e-2 ≤ p < 0.1: / 2 → 0.0071875.
        assert!(close(updated(0.05, 30, 20, 30_000).prob, 0.057_187_5));
        // Below 10 % a large step is not capped: (0.125·0.085 + 1.25·0.1)/2 = 0.0678125.
        assert!(close(updated(0.05, 100, 0, 30_000).prob, 0.117_812_5));
        // At p ≥ 10 % the same step (0.135625) is capped at 2 %.
        assert!(close(updated(0.5, 100, 0, 30_000).prob, 0.52));
        // Above 250 ms: the capped 2 % plus 2 %.
        assert!(close(updated(0.5, 300, 300, 30_000).prob, 0.54));
        // Both delays 0 with an empty queue: −α·target, then p −= p/64.
        let decayed = (0.5 - 0.125 * 0.015) * 63.0 / 64.0;
        assert!(close(updated(0.5, 0, 0, 0).prob, decayed));
        // A zero delay with a backlog skips the decay.
        assert!(close(updated(0.5, 0, 0, 1_000).prob, 0.498_125));
        // Negative steps clamp at 0.
        assert_eq!(updated(1e-9, 0, 0, 0).prob, 0.0);
    }

    /// As in Linux (u64 p in 2⁻⁵⁶ units, only wrap-around guarded), p does not stop at 1: a delay
    /// above 250 ms keeps adding the capped 2 % plus 2 % per update. Back under target with a
    /// backlog left, p falls only by α·(target − qdelay) per update, with no p/64 decay (that
    /// needs both delays 0): from 1.5 at a 0.5 ms delay, 0.18 % per 15 ms, about 11 s to get
    /// below 10 %, every arrival beyond two MTUs dropped meanwhile (ECN-capable ones too:
    /// marking stops at p > 10 %). This is what makes Prague through PIE lose most of its
    /// segments after a slow-start overshoot (tests/aqm.rs,
    /// `prague_through_pie_floods_after_slow_start_as_linux_would`).
    #[test]
    fn probability_passes_one_and_decays_slowly_while_a_backlog_remains() {
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        assert!(close(updated(0.99, 300, 300, 1_500_000).prob, 1.03));
        assert!(close(updated(1.5, 300, 300, 1_500_000).prob, 1.54));
        let v = updated(1.5, 0, 0, 3_000);
        assert!(close(v.prob, 1.5 - 0.125 * 0.015), "{}", v.prob);
        let mut q = pie_with(
            &PieParams::default(),
            1.5,
            Dur::from_micros(500),
            Dur::from_micros(500),
            3_000,
        );
        q.calculate_probability();
        assert!(close(q.vars.prob, 1.5 - 0.125 * 0.0145), "{}", q.vars.prob);
        // Every ECN-capable arrival is dropped at p = 1.5 (ECN on): none marked.
        let p = PieParams {
            ecn: true,
            limit: 100_000,
            ..PieParams::default()
        };
        let (out, tally) = verdicts(&p, 1.5, Ecn::Ect1, 200);
        assert!(out.iter().all(|a| !*a));
        assert_eq!(
            (tally.class[0].aqm_drops, tally.class[0].ce_marks),
            (200, 0)
        );
    }

    #[test]
    fn calm_queue_with_zero_probability_restores_the_burst_allowance() {
        let mut q = pie_with(&PieParams::default(), 1e-9, Dur::ZERO, Dur::ZERO, 0);
        q.vars.burst_time = Dur::ZERO;
        q.vars.accu_prob = 0.7;
        q.calculate_probability();
        assert_eq!(q.vars.prob, 0.0);
        assert_eq!(q.vars.burst_time, Dur::from_millis(150));
        assert_eq!(q.vars.accu_prob, 0.0);
        // Not while the delay is at or above target/2 (7.5 ms).
        let mut q = pie_with(
            &PieParams::default(),
            0.0,
            Dur::from_millis(8),
            Dur::ZERO,
            0,
        );
        q.vars.burst_time = Dur::ZERO;
        q.calculate_probability();
        assert_eq!(q.vars.burst_time, Dur::ZERO);
    }

    #[test]
    fn no_early_drop_during_the_burst_allowance() {
        // p = 50 % from the start (the first update is at 500 ms, after this run), 12 Mbit/s
        // (1 ms per packet) and two arrivals per millisecond. The 150 ms allowance drains by
        // the time between dequeues from the second dequeue on, so it is gone at the dequeue
        // at 150 ms: the arrival at 150 ms still gets in, later ones face p.
        let mut q = pie_with(
            &PieParams::default(),
            0.5,
            Dur::from_millis(20),
            Dur::ZERO,
            0,
        );
        let arrivals = testkit::cbr(flow(1), Time::ZERO, Dur(MS / 2), 1500, Ecn::NotEct, 600);
        let run = testkit::drive(&mut q, &arrivals, 12_000_000, Time(300 * MS));
        let first = run
            .events
            .iter()
            .find_map(|e| match e {
                Event::AqmDrop { at, .. } => Some(*at),
                _ => None,
            })
            .expect("drops after the allowance");
        // After it, the de-randomised draw at p = 0.5 fires within a few arrivals: no drop in
        // 20 arrivals has probability below 1e-5.
        assert!(
            first > Time(150 * MS) && first <= Time(160 * MS),
            "first drop {first}"
        );
        // De-randomised at p = 0.5: one arrival to reach 0.85, then a draw each: a drop every
        // 3 arrivals on average, ~100 over the remaining 300 arrivals.
        assert!(
            run.tally.class[0].aqm_drops > 50,
            "{}",
            run.tally.class[0].aqm_drops
        );
    }

    /// Outcomes of `n` arrivals at fixed p with the burst allowance spent and a standing queue.
    fn verdicts(p: &PieParams, prob: f64, ecn: Ecn, n: usize) -> (Vec<bool>, Tally) {
        let mut q = pie_with(p, prob, Dur::from_millis(20), Dur::ZERO, 0);
        q.vars.burst_time = Dur::ZERO;
        let mut rng = testkit::rng();
        let mut tally = Tally::default();
        let mut out = Vec::with_capacity(n);
        for _ in 0..3 {
            q.fifo.push(data(flow(1), 1500, Ecn::NotEct), Time::ZERO);
        }
        for _ in 0..n {
            out.push(q.enqueue(Time(MS), data(flow(1), 1500, ecn), &mut rng, &mut tally));
        }
        (out, tally)
    }

    #[test]
    #[expect(
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation,
        reason = "counts of a few thousand are exact in f64 and fit a usize"
    )]
    fn derandomised_drops_are_spaced_by_the_accumulated_probability() {
        let p = PieParams {
            limit: 100_000,
            ..PieParams::default()
        };
        let (out, tally) = verdicts(&p, 0.1, Ecn::NotEct, 40_000);
        let drops: Vec<usize> = (0..out.len()).filter(|&i| !out[i]).collect();
        let gaps: Vec<usize> = drops.windows(2).map(|w| w[1] - w[0]).collect();
        // accu_prob must reach 0.85 (9 arrivals at 0.1) before a draw, and reaching 8.5 (85
        // arrivals; 86 with floating-point sums of 0.1) forces the drop.
        assert!(
            gaps.iter().all(|&g| (9..=86).contains(&g)),
            "{:?}",
            gaps.iter().min()
        );
        // From the 9th arrival on each draws with p = 0.1: mean gap 8 + 1/0.1 = 18. The gap's
        // s.d. is √0.9/0.1 ≈ 9.5; over ~2200 gaps the mean's s.d. is 0.2: 5σ = 1.0.
        let mean = gaps.iter().sum::<usize>() as f64 / gaps.len() as f64;
        assert!((mean - 18.0).abs() < 1.0, "mean gap {mean}");
        assert_eq!(tally.class[0].aqm_drops as usize, drops.len());
    }

    #[test]
    fn ecn_marks_below_ten_percent_and_drops_above() {
        let p = PieParams {
            ecn: true,
            limit: 100_000,
            ..PieParams::default()
        };
        let (out, tally) = verdicts(&p, 0.05, Ecn::Ect0, 2_000);
        assert!(out.iter().all(|a| *a));
        assert_eq!(tally.class[0].aqm_drops, 0);
        assert!(tally.class[0].ce_marks > 50, "{}", tally.class[0].ce_marks);
        // Not-ECT packets are dropped at the same p.
        let (_, tally) = verdicts(&p, 0.05, Ecn::NotEct, 2_000);
        assert!(tally.class[0].aqm_drops > 50 && tally.class[0].ce_marks == 0);
        // Above 10 % ECT packets are dropped too.
        let (_, tally) = verdicts(&p, 0.3, Ecn::Ect0, 2_000);
        assert!(tally.class[0].aqm_drops > 100 && tally.class[0].ce_marks == 0);
    }

    #[test]
    fn no_early_drop_with_less_than_two_mtus_queued_or_low_delay_and_p() {
        let mut q = pie_with(
            &PieParams::default(),
            0.9,
            Dur::from_millis(20),
            Dur::ZERO,
            0,
        );
        q.vars.burst_time = Dur::ZERO;
        let mut rng = testkit::rng();
        let mut tally = Tally::default();
        // 1500 then 3000 bytes queued before the next arrivals: only the third can be dropped.
        for _ in 0..2 {
            assert!(q.enqueue(
                Time::ZERO,
                data(flow(1), 1500, Ecn::NotEct),
                &mut rng,
                &mut tally
            ));
        }
        // Delay below target/2 with p < 20 %: no drop whatever the backlog.
        let mut q = pie_with(
            &PieParams::default(),
            0.19,
            Dur::from_millis(7),
            Dur::ZERO,
            30_000,
        );
        q.vars.burst_time = Dur::ZERO;
        for _ in 0..100 {
            assert!(q.enqueue(
                Time::ZERO,
                data(flow(1), 1500, Ecn::NotEct),
                &mut rng,
                &mut tally
            ));
        }
        assert_eq!(tally.drops(), 0);
    }

    #[test]
    fn tail_drop_at_the_limit_counts_overflow_and_resets_the_sum() {
        let mut q = Pie::new(&PieParams {
            limit: 5,
            ..PieParams::default()
        });
        let mut rng = testkit::rng();
        let mut tally = Tally::default();
        for _ in 0..5 {
            assert!(q.enqueue(
                Time::ZERO,
                data(flow(1), 1500, Ecn::NotEct),
                &mut rng,
                &mut tally
            ));
        }
        q.vars.accu_prob = 0.5;
        assert!(!q.enqueue(
            Time::ZERO,
            data(flow(1), 1500, Ecn::NotEct),
            &mut rng,
            &mut tally
        ));
        assert_eq!(tally.class[0].overflow_drops, 1);
        assert_eq!(q.vars.accu_prob, 0.0);
    }

    #[test]
    #[expect(
        clippy::cast_precision_loss,
        reason = "a delay of milliseconds in nanoseconds is exact in f64"
    )]
    fn departure_rate_estimator_gives_littles_law_delay() {
        let p = PieParams {
            dq_rate_estimator: true,
            ..PieParams::default()
        };
        let mut q = Pie::new(&p);
        let mut rng = testkit::rng();
        let mut tally = Tally::default();
        for _ in 0..400 {
            q.enqueue(
                Time::ZERO,
                data(flow(1), 1500, Ecn::NotEct),
                &mut rng,
                &mut tally,
            );
        }
        // Drain at 10 Mbit/s (a packet every 1.2 ms) for 300 packets, before the first update.
        for k in 0..300u64 {
            q.dequeue(Time(k * 1_200_000), &mut rng, &mut tally);
        }
        // 1500 bytes per 1.2 ms = 0.00125 bytes/ns. The first measurement counts 11 packets over
        // 10 gaps (+10 %, as Linux); the 1/8 EWMA has forgotten all but (7/8)^26 ≈ 3 % of that
        // after the 27 measurements of 11 packets: +0.31 %.
        let rate = q.vars.avg_dq_rate;
        assert!((rate / 0.001_25 - 1.0).abs() < 0.005, "rate {rate}");
        q.calculate_probability();
        // 100 packets left: 150 000 bytes / rate = 120 ms.
        let want = 150_000.0 / rate;
        assert!((q.vars.qdelay.as_nanos() as f64 - want).abs() < 1.0);
        assert!((q.vars.qdelay.as_millis_f64() - 120.0).abs() < 0.5);
    }

    #[test]
    fn lazy_catch_up_equals_ticking_every_update() {
        let p = PieParams::default();
        let mut lazy = pie_with(&p, 0.3, Dur::ZERO, Dur::ZERO, 0);
        let mut ticked = pie_with(&p, 0.3, Dur::ZERO, Dur::ZERO, 0);
        lazy.vars.burst_time = Dur::ZERO;
        ticked.vars.burst_time = Dur::ZERO;
        let end = Time(10_000 * MS);
        let mut t = ticked.next_update;
        while t <= end {
            ticked.catch_up(t);
            t += p.tupdate;
        }
        lazy.catch_up(end);
        assert_eq!(lazy.vars, ticked.vars);
        assert_eq!(lazy.next_update, ticked.next_update);
        // An idle queue decays p to 0 and restores the burst allowance.
        assert_eq!(lazy.vars.prob, 0.0);
        assert_eq!(lazy.vars.burst_time, p.max_burst);
        assert!(lazy.next_update > end && lazy.next_update <= end + p.tupdate);
    }

    #[test]
    fn state_reports_p_and_qdelay() {
        let q = pie_with(
            &PieParams::default(),
            0.25,
            Dur::from_millis(12),
            Dur::ZERO,
            0,
        );
        let mut seen = Vec::new();
        q.state(&mut |k, v| seen.push((k, v)));
        assert_eq!(seen, vec![("p", 0.25), ("qdelay_ms", 12.0)]);
    }
}
