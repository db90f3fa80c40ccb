//! Reordering as RFC 4737 defines it, measured at a receiver over one flow's original
//! transmissions.
//!
//! Contract: [`ReorderMeter::on_arrival`] takes the sequence numbers of packets in the order
//! they arrive; the sequence numbers must increase in send order (a TCP sender's new segments
//! do; retransmissions, which repeat a number, are left out by the caller). A packet is
//! *reordered* (RFC 4737 §3, Type-P-Reordered) when its number is below the next expected one,
//! i.e. some packet sent after it arrived before it. Its *extent* (§4.2) is `i − j`, where `i`
//! is its arrival position and `j` the earliest arrival position of a packet with a larger
//! number: how many places late it is. The meter keeps the arrivals that raised the next
//! expected number as runs (consecutive positions carrying consecutive numbers), the last
//! [`HISTORY`] runs; a packet later than that gets the extent to the oldest run kept (a lower
//! bound), and is counted in [`ReorderMeter::extent_capped`].
//! A copy of the largest number so far (a network duplicate right behind its original) is not
//! reordered; a copy of an older number counts as reordered (the meter keeps no per-number
//! history to tell it from a late original).

use std::collections::VecDeque;

/// Runs of in-order arrivals kept for the extent (the extent of a packet late by more than this
/// many runs is a lower bound).
pub const HISTORY: usize = 4096;

/// A run of raising arrivals: arrival positions `first..` carried the numbers `start..=last`,
/// one each, consecutively.
#[derive(Clone, Copy, Debug, Default)]
struct Run {
    first: u64,
    start: u64,
    last: u64,
}

/// RFC 4737 reordering counters of one stream of packets.
///
/// The arrivals that raised the next expected number are kept as runs of consecutive positions
/// and numbers. While the current run goes on (each arrival the next number) only the number
/// that would continue it moves: the in-order case costs a comparison and an addition, and
/// stores nothing; the arrival count and `NextExp` follow from the run when asked.
#[derive(Clone, Debug)]
pub struct ReorderMeter {
    /// The number that continues the current run, or [`NO_RUN`] when the next arrival cannot
    /// (nothing arrived yet, or the last arrival did not raise `NextExp`). While it is not
    /// [`NO_RUN`], `arrivals` and `next_exp` are stale and `synced` gives them.
    continues: u64,
    /// Packets that arrived (up to date when `continues` is [`NO_RUN`]).
    arrivals: u64,
    /// RFC 4737 `NextExp`: one more than the largest number that arrived (up to date when
    /// `continues` is [`NO_RUN`]).
    next_exp: u64,
    /// The current run (its `last` is `NextExp − 1`, kept up to date only when it closes),
    /// valid once something arrived.
    run: Run,
    /// Earlier runs, oldest first (their numbers increase), at most [`HISTORY`].
    closed: VecDeque<Run>,
    /// Reordered packets.
    reordered: u64,
    /// Sum and largest of their extents.
    extent_sum: u64,
    extent_max: u64,
    /// Reordered packets whose extent is a lower bound (their predecessor fell out of the
    /// history).
    extent_capped: u64,
}

/// `continues` when no arrival can continue the current run (no sequence number reaches it).
const NO_RUN: u64 = u64::MAX;

impl Default for ReorderMeter {
    fn default() -> Self {
        ReorderMeter {
            continues: NO_RUN,
            arrivals: 0,
            next_exp: 0,
            run: Run::default(),
            closed: VecDeque::new(),
            reordered: 0,
            extent_sum: 0,
            extent_max: 0,
            extent_capped: 0,
        }
    }
}

impl ReorderMeter {
    /// A meter that has seen nothing.
    #[must_use]
    pub fn new() -> Self {
        ReorderMeter::default()
    }

    /// Packet number `seq` arrives.
    #[inline]
    pub fn on_arrival(&mut self, seq: u64) {
        if seq == self.continues {
            self.continues += 1;
            return;
        }
        self.other_arrival(seq);
    }

    /// (arrivals, `NextExp`) as of now: while a run goes on, its first position plus its
    /// length, and the number that would continue it.
    fn synced(&self) -> (u64, u64) {
        if self.continues == NO_RUN {
            (self.arrivals, self.next_exp)
        } else {
            (
                self.run.first + (self.continues - self.run.start),
                self.continues,
            )
        }
    }

    /// An arrival that does not continue the current run: a new run, or a reordered packet.
    #[cold]
    fn other_arrival(&mut self, seq: u64) {
        let (i, next_exp) = self.synced();
        self.arrivals = i + 1;
        self.next_exp = next_exp;
        self.continues = NO_RUN;
        if seq >= next_exp {
            if i > 0 {
                if self.closed.len() == HISTORY {
                    self.closed.pop_front();
                }
                self.run.last = next_exp - 1;
                self.closed.push_back(self.run);
            }
            self.run = Run {
                first: i,
                start: seq,
                last: seq,
            };
            self.next_exp = seq + 1;
            self.continues = seq + 1;
            return;
        }
        if seq + 1 == next_exp {
            // A copy of the largest number so far (a duplicate right behind its original):
            // nothing sent later arrived before it.
            return;
        }
        self.reordered += 1;
        // The earliest arrival with a larger number: in the first run that reaches above
        // `seq` (raising arrivals are the running maxima, in order), its first position or the
        // one that carried `seq + 1`.
        let k = self.closed.partition_point(|r| r.last <= seq);
        let run = self.closed.get(k).copied().unwrap_or(Run {
            last: next_exp - 1,
            ..self.run
        });
        if k == 0 && self.closed.len() == HISTORY && run.start > seq {
            // The run before it may have been dropped from the history.
            self.extent_capped += 1;
        }
        let j = if run.start > seq {
            run.first
        } else {
            run.first + (seq + 1 - run.start)
        };
        let e = i - j;
        self.extent_sum += e;
        self.extent_max = self.extent_max.max(e);
    }

    /// Packets that arrived.
    #[must_use]
    pub fn arrivals(&self) -> u64 {
        self.synced().0
    }

    /// Reordered packets (RFC 4737 §3).
    #[must_use]
    pub fn reordered(&self) -> u64 {
        self.reordered
    }

    /// Reordered ÷ arrived (RFC 4737 §4.1.1, reordered ratio); 0 before any arrival.
    #[must_use]
    #[expect(
        clippy::cast_precision_loss,
        reason = "packet counts are far below 2^53"
    )]
    pub fn ratio(&self) -> f64 {
        let arrivals = self.arrivals();
        if arrivals == 0 {
            0.0
        } else {
            self.reordered as f64 / arrivals as f64
        }
    }

    /// Largest extent (RFC 4737 §4.2.1), 0 when nothing was reordered.
    #[must_use]
    pub fn extent_max(&self) -> u64 {
        self.extent_max
    }

    /// Mean extent of the reordered packets; `None` when nothing was reordered.
    #[must_use]
    #[expect(
        clippy::cast_precision_loss,
        reason = "packet counts are far below 2^53"
    )]
    pub fn extent_mean(&self) -> Option<f64> {
        (self.reordered > 0).then(|| self.extent_sum as f64 / self.reordered as f64)
    }

    /// Reordered packets whose extent is only a lower bound.
    #[must_use]
    pub fn extent_capped(&self) -> u64 {
        self.extent_capped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meter(seqs: &[u64]) -> ReorderMeter {
        let mut m = ReorderMeter::new();
        for &s in seqs {
            m.on_arrival(s);
        }
        m
    }

    /// In order: nothing reordered.
    #[test]
    fn in_order_is_not_reordered() {
        let m = meter(&[0, 1, 2, 3, 5, 9]);
        assert_eq!((m.arrivals(), m.reordered(), m.extent_max()), (6, 0, 0));
        assert_eq!(m.ratio(), 0.0);
        assert_eq!(m.extent_mean(), None);
    }

    /// RFC 4737 §4.2.1's way of counting: in 1, 2, 4, 5, 3 packet 3 (position 4) is late behind
    /// 4 (position 2): extent 2; only 3 is reordered (4 and 5 are not: nothing later came
    /// before them).
    #[test]
    fn one_late_packet() {
        let m = meter(&[1, 2, 4, 5, 3]);
        assert_eq!(m.reordered(), 1);
        assert_eq!(m.extent_max(), 2);
        assert_eq!(m.extent_mean(), Some(2.0));
        assert!((m.ratio() - 0.2).abs() < 1e-12);
    }

    /// Several late packets, each measured against the first arrival with a larger number:
    /// in 4, 1, 2, 3, 8, 5 the packets 1, 2, 3 are 1, 2, 3 places behind 4, and 5 is 1 place
    /// behind 8.
    #[test]
    fn extents_against_the_earliest_larger_arrival() {
        let m = meter(&[4, 1, 2, 3, 8, 5]);
        assert_eq!(m.reordered(), 4);
        assert_eq!(m.extent_max(), 3);
        assert_eq!(m.extent_mean(), Some(7.0 / 4.0));
    }

    /// A copy right behind its original is not reordered; a copy of an older packet is.
    #[test]
    fn duplicates() {
        let m = meter(&[1, 2, 2, 3, 1]);
        assert_eq!((m.arrivals(), m.reordered(), m.extent_max()), (5, 1, 3));
    }

    /// In-order runs: the extent counts positions inside a run (packet 3 is late behind 4, the
    /// arrival two places after it), and a gap starts a new run.
    #[test]
    fn extents_inside_runs() {
        // 0 1 2 4 5 6 7 3: 3 arrives at position 7; the first larger number, 4, at position 3.
        let m = meter(&[0, 1, 2, 4, 5, 6, 7, 3]);
        assert_eq!((m.reordered(), m.extent_max()), (1, 4));
        // 0 1 2 5 6 7 8 9 3 4: 3 at position 8 and 4 at position 9 are both behind 5 at
        // position 3 (extents 5 and 6).
        let m = meter(&[0, 1, 2, 5, 6, 7, 8, 9, 3, 4]);
        assert_eq!((m.reordered(), m.extent_max()), (2, 6));
        assert_eq!(m.extent_mean(), Some(5.5));
    }

    /// The extents the run form gives equal those of the definition (a direct search over
    /// every earlier arrival) on random permutations of windows.
    #[test]
    fn runs_give_the_definitions_extents() {
        let mut x: u64 = 7;
        let mut next = || {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            x >> 33
        };
        let mut seqs: Vec<u64> = (0..3000).collect();
        for w in seqs.chunks_mut(8) {
            for k in (1..w.len()).rev() {
                let r = usize::try_from(next()).expect("small") % (k + 1);
                w.swap(k, r);
            }
        }
        let m = meter(&seqs);
        let (mut n, mut sum, mut max) = (0u64, 0u64, 0u64);
        let mut hi = None;
        for (i, &s) in seqs.iter().enumerate() {
            if hi.is_some_and(|h| s < h) {
                let j = seqs
                    .iter()
                    .position(|&t| t > s)
                    .expect("a larger one came before");
                let e = u64::try_from(i - j).expect("small");
                n += 1;
                sum += e;
                max = max.max(e);
            }
            hi = Some(hi.map_or(s, |h: u64| h.max(s)));
        }
        assert!(n > 100);
        assert_eq!(m.arrivals(), 3000);
        assert_eq!((m.reordered(), m.extent_max()), (n, max));
        #[expect(clippy::cast_precision_loss, reason = "small counts")]
        let mean = sum as f64 / n as f64;
        assert_eq!(m.extent_mean(), Some(mean));
    }

    /// A packet later than the history holds is counted with a lower-bound extent.
    #[test]
    fn extent_beyond_the_history_is_a_lower_bound() {
        // Runs of one packet each (every other number), then the missing first number.
        let runs = u64::try_from(HISTORY).expect("small") + 10;
        let mut seqs: Vec<u64> = (1..=runs).map(|k| 2 * k).collect();
        seqs.push(1);
        let m = meter(&seqs);
        assert_eq!(m.reordered(), 1);
        assert_eq!(m.extent_capped(), 1);
        // The oldest run kept is the one HISTORY + 1 places back (the current run is not in
        // the history); the true extent is the whole stream's length.
        assert_eq!(m.extent_max(), u64::try_from(HISTORY).expect("small") + 1);
    }
}
