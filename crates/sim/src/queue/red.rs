//! RED (Floyd & Jacobson 1993; Linux `include/net/red.h`, `net/sched/sch_red.c`).
//!
//! Contract: decisions at enqueue, in bytes. Each arrival first updates the average backlog
//! (Linux `red_calc_qavg`: qavg ← qavg + W·(backlog − qavg), W = 2^-`wlog`, kept like Linux in
//! fixed point scaled by 2^`wlog`, with the backlog before the arrival). Below `min_th` the
//! packet passes; at or above `max_th` it is dropped — or CE-marked if `ecn` is on, `harddrop`
//! off and it is ECN-capable (Linux `RED_HARD_MARK`); in between it is dropped or marked with
//! Linux `red_action`'s count-based spacing: after each mark a uniform qR in [0, Δ/max_p) is
//! drawn (Δ = max_th − min_th) and the count-th packet since is marked once
//! (qavg − min_th)·count ≥ qR, i.e. count·p_b ≥ U with p_b = max_p·(qavg − min_th)/Δ. Gaps
//! between marks are then uniform on 1..1/p_b (Floyd & Jacobson §7), so about 2·p_b of the
//! packets are marked. Those drops are AQM drops; a packet that passes (or was marked) is
//! then tail-dropped as an overflow if it does not fit under the byte `limit` (Linux's bfifo
//! child). One class, "all".
//!
//! Idle time: the queue is idle from a dequeue that finds it empty (Linux `red_dequeue`:
//! `red_start_of_idle_period`) — and from creation — until the next arrival, whose average is
//! then aged instead of updated (Linux `red_calc_qavg_from_idle_time`) as if
//! m = idle / (`avpkt` at the link rate) empty-queue samples had been taken:
//! qavg ← qavg·(1 − W)^m, the rule Floyd & Jacobson propose. Linux approximates that factor with
//! the `Stab` table `tc` computes from the same quantities (a right shift by ⌊m·ln(1/(1−W))⌋,
//! linear for short idles); we compute it exactly (by repeated squaring, so deterministic).
//! Other differences: the probability is Linux's Q0.32 `max_P` with its integer
//! `max_P / Δ` divisor, taken from `max_p` as `tc` does; Adaptive RED and `nodrop` are not
//! modelled.

use cclab_cc::{Dur, Time};
use rand_chacha::ChaCha8Rng;

use super::{Dequeued, Qdisc, Tally, TimedFifo};
use crate::net::NetPacket;
use crate::packet::Packet;
use crate::rng::unit_f64;

/// RED parameters. Linux has no defaults for the thresholds (`tc-red(8)` requires them); these
/// follow its recommendations: max = 3 × min (Floyd), probability 0.02, EWMA weight 2^-9.
#[derive(Clone, Debug, PartialEq)]
pub struct RedParams {
    /// Hard limit in bytes (wire bytes).
    pub limit: u64,
    /// Average queue size, bytes, below which nothing is dropped.
    pub min_th: u64,
    /// Average queue size, bytes, above which everything is dropped (or marked).
    pub max_th: u64,
    /// Drop probability at `max_th` (`tc` `probability`).
    pub max_p: f64,
    /// The EWMA weight of the average queue is 2^-`wlog` (Linux `Wlog`).
    pub wlog: u8,
    /// Average packet size, bytes (`tc` `avpkt`), for the idle-time decay.
    pub avpkt: u32,
    /// Mark ECN-capable packets instead of dropping them below `max_th` (`tc` `ecn`).
    pub ecn: bool,
    /// Drop (never mark) above `max_th` even with `ecn` (`tc` `harddrop`).
    pub harddrop: bool,
}

impl Default for RedParams {
    fn default() -> Self {
        RedParams {
            limit: 400_000,
            min_th: 30_000,
            max_th: 90_000,
            max_p: 0.02,
            wlog: 9,
            avpkt: 1000,
            ecn: false,
            harddrop: false,
        }
    }
}

/// What `red_action` decided for an arrival (Linux `RED_DONT_MARK` / `RED_PROB_MARK` /
/// `RED_HARD_MARK`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Action {
    Pass,
    Prob,
    Hard,
}

/// `base^m` by repeated squaring (IEEE products only, so the same on every machine).
fn powu(base: f64, mut m: u64) -> f64 {
    let (mut acc, mut b) = (1.0, base);
    while m > 0 {
        if m & 1 == 1 {
            acc *= b;
        }
        b *= b;
        m >>= 1;
        if b == 0.0 && m > 0 {
            return 0.0;
        }
    }
    acc
}

/// A RED queue.
#[derive(Debug)]
pub struct Red<P = Packet> {
    p: RedParams,
    fifo: TimedFifo<P>,
    /// Average backlog scaled by 2^wlog (Linux `red_vars.qavg`).
    qavg: u64,
    /// Packets since the last mark, −1 below `min_th` (Linux `qcount`).
    qcount: i64,
    /// The cached uniform draw (Linux `qR`).
    q_r: u64,
    /// Start of the current idle period (Linux `qidlestart`, 0 = not idle).
    idle_since: Option<Time>,
    /// Time to send `avpkt` at the link rate.
    avpkt_time: Dur,
    /// Thresholds scaled by 2^wlog.
    qth_min: u64,
    qth_max: u64,
    /// Linux `max_P / qth_delta` (the divisor of the 32-bit draw in `red_random`).
    max_p_delta: u64,
}

impl<P: NetPacket> Red<P> {
    /// An empty queue in front of a link of `rate_bps` (used to age the average over idle
    /// time), idle since time 0 as Linux `red_change` starts it.
    #[must_use]
    pub fn new(p: &RedParams, rate_bps: u64) -> Self {
        let wlog = u32::from(p.wlog);
        // Linux `red_set_parms`: Δ at least 1; `tc` passes max_P = probability · 2^32.
        let delta = p.max_th.saturating_sub(p.min_th).max(1);
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "the value is clamped to [0, u32::MAX] first"
        )]
        let max_p = (p.max_p.clamp(0.0, 1.0) * 4_294_967_296.0).min(f64::from(u32::MAX)) as u64;
        Red {
            p: p.clone(),
            fifo: TimedFifo::default(),
            qavg: 0,
            qcount: -1,
            q_r: 0,
            idle_since: Some(Time::ZERO),
            avpkt_time: Dur::serialization(u64::from(p.avpkt.max(1)), rate_bps),
            qth_min: p.min_th << wlog,
            qth_max: p.max_th << wlog,
            max_p_delta: (max_p / delta).max(1),
        }
    }

    /// The average backlog in bytes.
    #[expect(
        clippy::cast_precision_loss,
        reason = "the scaled average and the power of two 2^Wlog are exact in f64 below 2^53"
    )]
    fn qavg_bytes(&self) -> f64 {
        self.qavg as f64 / (1u64 << self.p.wlog) as f64
    }

    /// Linux `red_calc_qavg` for an arrival at `now`.
    #[expect(
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "qavg times a factor in [0, 1] stays a non-negative value below qavg, a u64; 2^Wlog is exact in f64 and the decayed average needs no more than 53 bits"
    )]
    fn calc_qavg(&self, now: Time) -> u64 {
        match self.idle_since {
            // Linux `red_calc_qavg_no_idle_time`: qavg·(1 − W) + backlog·W, scaled.
            None => self.qavg + self.fifo.bytes - (self.qavg >> self.p.wlog),
            Some(start) => {
                let m = now.saturating_since(start).as_nanos() / self.avpkt_time.as_nanos().max(1);
                let w = 1.0 / (1u64 << self.p.wlog) as f64;
                (self.qavg as f64 * powu(1.0 - w, m)) as u64
            }
        }
    }

    /// Linux `red_random`: a uniform 32-bit draw divided by `max_P / Δ`.
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "a draw in [0, 1) times 2^32 is a non-negative value below 2^32"
    )]
    fn random(&self, rng: &mut ChaCha8Rng) -> u64 {
        let r32 = (unit_f64(rng) * 4_294_967_296.0) as u64;
        r32 / self.max_p_delta
    }

    /// Linux `red_action` with the new average.
    fn action(&mut self, rng: &mut ChaCha8Rng) -> Action {
        if self.qavg < self.qth_min {
            self.qcount = -1;
            Action::Pass
        } else if self.qavg >= self.qth_max {
            self.qcount = -1;
            Action::Hard
        } else {
            self.qcount += 1;
            if self.qcount != 0 {
                // `red_mark_probability`: mark unless (qavg − min)·count < qR.
                let excess = (self.qavg - self.qth_min) >> self.p.wlog;
                #[expect(
                    clippy::cast_sign_loss,
                    reason = "qcount was just incremented from at least -1 and is nonzero here, so it is positive"
                )]
                if excess.saturating_mul(self.qcount as u64) >= self.q_r {
                    self.qcount = 0;
                    self.q_r = self.random(rng);
                    return Action::Prob;
                }
            } else {
                self.q_r = self.random(rng);
            }
            Action::Pass
        }
    }
}

impl<P: NetPacket> Qdisc<P> for Red<P> {
    fn enqueue(&mut self, now: Time, mut pkt: P, rng: &mut ChaCha8Rng, tally: &mut Tally) -> bool {
        self.qavg = self.calc_qavg(now);
        self.idle_since = None;
        // Linux `red_enqueue`: mark instead of dropping when allowed and ECN-capable.
        let marked = match self.action(rng) {
            Action::Pass => Some(false),
            Action::Prob => (self.p.ecn && pkt.mark_ce()).then_some(true),
            Action::Hard => (!self.p.harddrop && self.p.ecn && pkt.mark_ce()).then_some(true),
        };
        match marked {
            None => {
                tally.drop(0, &pkt, false);
                return false;
            }
            Some(true) => tally.mark(0),
            Some(false) => {}
        }
        // bfifo: accept while the bytes fit under the limit.
        if self.fifo.bytes + u64::from(pkt.wire_bytes()) > self.p.limit {
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
        _tally: &mut Tally,
    ) -> Option<Dequeued<P>> {
        let Some((pkt, enqueued)) = self.fifo.pop() else {
            self.idle_since.get_or_insert(now);
            return None;
        };
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
        sink("qavg", self.qavg_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Ecn;
    use crate::queue::testkit::{self, data, flow};

    const MS: u64 = 1_000_000;
    const RATE: u64 = 8_000_000; // avpkt 1000 bytes take 1 ms

    fn red(p: &RedParams) -> Red {
        Red::new(p, RATE)
    }

    fn qavg(q: &Red) -> f64 {
        let mut v = 0.0;
        q.state(&mut |k, x| {
            assert_eq!(k, "qavg");
            v = x;
        });
        v
    }

    #[test]
    fn average_is_the_ewma_of_the_backlog_at_arrivals() {
        // W = 1/2: arrivals see backlogs 0 (idle: aged, stays 0), 1000, 2000, 3000 bytes:
        // 0 → 500 → 1250 → 2125.
        let mut q = red(&RedParams {
            wlog: 1,
            ..RedParams::default()
        });
        let mut rng = testkit::rng();
        let mut tally = Tally::default();
        let mut seen = Vec::new();
        for _ in 0..4 {
            q.enqueue(
                Time::ZERO,
                data(flow(1), 1000, Ecn::NotEct),
                &mut rng,
                &mut tally,
            );
            seen.push(qavg(&q));
        }
        assert_eq!(seen, vec![0.0, 500.0, 1250.0, 2125.0]);
        // W = 2^-9 over 40 arrivals against the floating-point EWMA: Linux's fixed point
        // truncates less than 2^-9 byte per step.
        let mut q = red(&RedParams::default());
        let mut avg = 0.0;
        for k in 0..40u32 {
            let backlog = f64::from(k * 1500);
            if k > 0 {
                avg += (backlog - avg) / 512.0;
            }
            q.enqueue(
                Time::ZERO,
                data(flow(1), 1500, Ecn::NotEct),
                &mut rng,
                &mut tally,
            );
            assert!((qavg(&q) - avg).abs() < 0.1, "{k}: {} vs {avg}", qavg(&q));
        }
        assert!(avg > 1_000.0);
    }

    #[test]
    fn idle_time_ages_the_average_by_the_packets_that_could_have_been_sent() {
        let mut q = red(&RedParams::default());
        let mut rng = testkit::rng();
        let mut tally = Tally::default();
        q.idle_since = None;
        q.qavg = 50_000 << 9;
        // The queue is found empty at 10 ms: idle from then (a later empty dequeue does not
        // move the start).
        assert!(q.dequeue(Time(10 * MS), &mut rng, &mut tally).is_none());
        assert!(q.dequeue(Time(20 * MS), &mut rng, &mut tally).is_none());
        // 512 ms idle at 1 ms per avpkt: m = 512, factor (1 − 1/512)^512 = 0.367520 (e^-1.001).
        q.enqueue(
            Time(522 * MS),
            data(flow(1), 1000, Ecn::NotEct),
            &mut rng,
            &mut tally,
        );
        assert!(
            (qavg(&q) - 50_000.0 * 0.367_520).abs() < 1.0,
            "{}",
            qavg(&q)
        );
        // Busy again: the next arrival uses the plain EWMA.
        let before = q.qavg;
        q.enqueue(
            Time(600 * MS),
            data(flow(1), 1000, Ecn::NotEct),
            &mut rng,
            &mut tally,
        );
        assert_eq!(q.qavg, before + 1000 - (before >> 9));
        // Less than one packet time idle: unchanged.
        let mut q = red(&RedParams::default());
        q.qavg = 50_000 << 9;
        q.enqueue(
            Time(900_000),
            data(flow(1), 1000, Ecn::NotEct),
            &mut rng,
            &mut tally,
        );
        assert_eq!(qavg(&q), 50_000.0);
    }

    #[test]
    #[expect(
        clippy::cast_precision_loss,
        reason = "counts of a few thousand are exact in f64"
    )]
    fn marks_between_thresholds_are_uniformly_spaced_with_mean_one_over_two_pb() {
        let mut q = red(&RedParams::default());
        let mut rng = testkit::rng();
        // Average fixed halfway: p_b = 0.02 · (60 000 − 30 000) / 60 000 = 0.01.
        q.qavg = 60_000 << 9;
        let n = 400_000;
        let marks: Vec<usize> = (0..n)
            .filter(|_| q.action(&mut rng) == Action::Prob)
            .collect();
        let gaps: Vec<usize> = marks.windows(2).map(|w| w[1] - w[0]).collect();
        // Count-based spacing: the gap is the first count with count·p_b ≥ U, uniform on
        // 1..1/p_b = 1..100 (101 with Linux's integer divisor max_P/Δ = 1431, which makes
        // 1/p_b = 100.04): mean 50.5, not the 1/p_b = 100 of independent draws.
        assert!(gaps.iter().all(|&g| (1..=101).contains(&g)));
        // The uniform gap's s.d. is 28.9; over ~7900 gaps the mean's s.d. is 0.33: 5σ = 1.6.
        let mean = gaps.iter().sum::<usize>() as f64 / gaps.len() as f64;
        assert!((mean - 50.5).abs() < 1.6, "mean gap {mean}");
        // Uniform: half the gaps are at most 50 (s.d. of the fraction 0.0056; 5σ = 0.03).
        let short = gaps.iter().filter(|&&g| g <= 50).count() as f64 / gaps.len() as f64;
        assert!((short - 0.5).abs() < 0.03, "{short}");
    }

    #[test]
    fn below_min_nothing_above_max_everything() {
        let mut rng = testkit::rng();
        let mut q = red(&RedParams::default());
        q.qavg = 29_999 << 9;
        assert!((0..1000).all(|_| q.action(&mut rng) == Action::Pass));
        q.qavg = 90_000 << 9;
        assert!((0..1000).all(|_| q.action(&mut rng) == Action::Hard));
    }

    /// The verdict on one arrival of `ecn` with the average far above `max_th`.
    fn above_max(p: &RedParams, ecn: Ecn) -> (bool, Ecn, Tally) {
        let mut q = red(p);
        q.idle_since = None;
        q.qavg = 200_000 << 9;
        let mut rng = testkit::rng();
        let mut tally = Tally::default();
        let ok = q.enqueue(Time(MS), data(flow(1), 1500, ecn), &mut rng, &mut tally);
        let out = q.fifo.q.back().map_or(ecn, |(p, _)| p.ecn);
        (ok, out, tally)
    }

    #[test]
    fn above_max_drops_or_marks_per_ecn_and_harddrop() {
        let plain = RedParams::default();
        let ecn = RedParams {
            ecn: true,
            ..RedParams::default()
        };
        let hard = RedParams {
            ecn: true,
            harddrop: true,
            ..RedParams::default()
        };
        let (ok, _, t) = above_max(&plain, Ecn::Ect0);
        assert!(!ok && t.class[0].aqm_drops == 1);
        let (ok, out, t) = above_max(&ecn, Ecn::Ect0);
        assert!(ok && out == Ecn::Ce && t.class[0].ce_marks == 1 && t.drops() == 0);
        let (ok, _, t) = above_max(&ecn, Ecn::NotEct);
        assert!(!ok && t.class[0].aqm_drops == 1);
        let (ok, _, t) = above_max(&hard, Ecn::Ect1);
        assert!(!ok && t.class[0].aqm_drops == 1 && t.class[0].ce_marks == 0);
    }

    #[test]
    fn between_thresholds_ecn_packets_are_marked_not_dropped() {
        let p = RedParams {
            ecn: true,
            limit: 100_000_000,
            ..RedParams::default()
        };
        let mut q = red(&p);
        q.idle_since = None;
        q.qavg = 60_000 << 9;
        q.fifo.bytes = 60_000; // keeps the average where it is
        let mut rng = testkit::rng();
        let mut tally = Tally::default();
        for _ in 0..5_000 {
            assert!(q.enqueue(
                Time(MS),
                data(flow(1), 1500, Ecn::Ect0),
                &mut rng,
                &mut tally
            ));
            q.fifo.q.pop_back();
            q.fifo.bytes -= 1500;
        }
        // ~5000/50.5 ≈ 99 marks (s.d. ≈ 6).
        let m = tally.class[0].ce_marks;
        assert!((70..130).contains(&m), "{m}");
        assert_eq!(tally.drops(), 0);
    }

    #[test]
    fn the_byte_limit_tail_drops_as_overflow() {
        let mut q = red(&RedParams {
            limit: 4_000,
            ..RedParams::default()
        });
        let mut rng = testkit::rng();
        let mut tally = Tally::default();
        let ok: Vec<bool> = (0..3)
            .map(|_| {
                q.enqueue(
                    Time::ZERO,
                    data(flow(1), 1500, Ecn::NotEct),
                    &mut rng,
                    &mut tally,
                )
            })
            .collect();
        assert_eq!(ok, vec![true, true, false]);
        assert_eq!(tally.class[0].overflow_drops, 1);
        assert_eq!(q.backlog_bytes(), 3_000);
    }

    #[test]
    #[expect(
        clippy::cast_precision_loss,
        reason = "sums of test delays are exact in f64"
    )]
    fn settles_where_its_drop_rate_matches_a_small_overload() {
        // 10 Mbit/s, unresponsive arrivals at 1.02× for 20 s: RED must drop 2/102 = 1.96 % of
        // arrivals, i.e. mean gap 51 = (1/p_b + 1)/2 → p_b = 0.0099 → average ≈ 30 000 +
        // 60 000 · 0.495 = 59 700 bytes. The average wanders with the drop noise; we ask for
        // the middle half of the band over the last 10 s.
        let mut q = red(&RedParams::default());
        let arrivals = testkit::cbr(
            flow(1),
            Time::ZERO,
            Dur(1_176_471),
            1500,
            Ecn::NotEct,
            17_000,
        );
        let run = testkit::drive(&mut q, &arrivals, 10_000_000, Time(20_000 * MS));
        let queued: Vec<u64> = run
            .departures
            .iter()
            .filter(|(t, _)| *t >= Time(10_000 * MS))
            .map(|(t, d)| t.saturating_since(d.enqueued).as_nanos())
            .collect();
        // Sojourn ≈ backlog / rate: 59 700 bytes ≈ 48 ms.
        let mean_ms = queued.iter().sum::<u64>() as f64 / queued.len() as f64 / 1e6;
        assert!((36.0..60.0).contains(&mean_ms), "mean sojourn {mean_ms} ms");
        assert!(run.tally.class[0].aqm_drops > 100);
        assert_eq!(run.tally.class[0].overflow_drops, 0);
    }
}
