//! A mahimahi link trace: the transmitter sends only at delivery opportunities read from a
//! trace, each worth one MTU of bytes.
//!
//! Contract: a [`Trace`] is the list of opportunity times in milliseconds, non-decreasing,
//! the last one positive; several equal times are several opportunities in that millisecond.
//! It repeats with its last timestamp as the period, so opportunity `i` of loop `k` is at
//! `t_i + k · t_last` (mahimahi `LinkQueue::next_delivery_time`, which adds the last timestamp
//! to its base when it wraps; a trace starting at 0 thus has two opportunities at each
//! multiple of the period). Each opportunity carries [`OPPORTUNITY_BYTES`]; the accounting is
//! in bytes: one opportunity can carry several small packets, a large packet uses the rest of
//! one opportunity and part of the next, and an opportunity (or its rest) that finds nothing
//! to send is lost, never banked (mahimahi `LinkQueue::use_a_delivery_opportunity`).
//!
//! [`TraceCursor::serialization`] answers how long `bytes` starting at `start` take: the
//! packet ends at the opportunity that carries its last byte. It continues the rest of the
//! opportunity the previous packet ended at when it starts at that same instant (it was
//! waiting), and otherwise uses the opportunities at or after `start` (an opportunity at the
//! nanosecond a packet reaches an idle transmitter serves it). A packet may therefore take no
//! time at all. Starts must be non-decreasing apart from a seek (a start before the previous
//! one restarts the accounting there, with no rest carried).

use std::sync::Arc;

use cclab_cc::{Dur, Time};

/// Bytes one delivery opportunity carries: one MTU-sized packet, 1500 bytes as mahimahi's
/// documentation states (`mm-link(1)`; its code uses `PACKET_SIZE = 1504`, the 1500-byte
/// packet plus the 4-byte TUN header it reads).
pub const OPPORTUNITY_BYTES: u32 = 1500;

/// Nanoseconds per millisecond (trace timestamps are milliseconds).
const MS: u64 = 1_000_000;

/// A delivery-opportunity trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trace {
    /// Opportunity times in ms, non-decreasing, the last positive.
    ms: Vec<u64>,
}

/// Why a trace file was refused, with its 1-based line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceError {
    /// Line of the file (0: the file as a whole).
    pub line: usize,
    /// What is wrong.
    pub reason: String,
}

/// Longest part of a bad line an error quotes, in characters.
pub const MAX_QUOTED: usize = 32;

/// `line` as an error may quote it: its first [`MAX_QUOTED`] characters, control characters
/// escaped, `…` when cut.
fn quotable(line: &str) -> String {
    let mut out = String::new();
    for c in line.chars().take(MAX_QUOTED) {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    if line.chars().nth(MAX_QUOTED).is_some() {
        out.push('…');
    }
    out
}

impl Trace {
    /// A trace of opportunity times in ms. Errors: empty, decreasing, or a last time of 0
    /// (mahimahi refuses these too: `LinkQueue::LinkQueue` requires a non-empty schedule
    /// whose last timestamp is positive).
    pub fn new(ms: Vec<u64>) -> Result<Self, TraceError> {
        let Some(&last) = ms.last() else {
            return Err(TraceError {
                line: 0,
                reason: "the trace has no delivery opportunities".into(),
            });
        };
        if let Some(i) = ms.windows(2).position(|w| w[1] < w[0]) {
            return Err(TraceError {
                line: i + 2,
                reason: format!(
                    "timestamps must not decrease ({} ms follows {} ms)",
                    ms[i + 1],
                    ms[i]
                ),
            });
        }
        if last == 0 {
            return Err(TraceError {
                line: ms.len(),
                reason: "the last timestamp (the period) must be positive".into(),
            });
        }
        if last > u64::MAX / MS / 1024 {
            return Err(TraceError {
                line: ms.len(),
                reason: format!("timestamp {last} ms is too large"),
            });
        }
        Ok(Trace { ms })
    }

    /// Parse mahimahi's text format: one non-negative integer (ms) per line; an empty line is
    /// an error, as in mahimahi (a final newline is not a line). An error quotes a bad line only
    /// after a good one (the file is then a trace), at most [`MAX_QUOTED`] characters of it,
    /// control characters escaped.
    pub fn parse(text: &str) -> Result<Self, TraceError> {
        let mut ms = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let s = line.trim();
            if s.is_empty() {
                return Err(TraceError {
                    line: i + 1,
                    reason: "empty line (each line is one timestamp in ms)".into(),
                });
            }
            let v = s.parse::<u64>().map_err(|_| TraceError {
                line: i + 1,
                reason: if ms.is_empty() {
                    // Not a trace (at least not yet): quote nothing of a file of another kind
                    // (`/etc/shadow` named by mistake).
                    "not a non-negative whole number of milliseconds: this is not a trace file"
                        .to_owned()
                } else {
                    format!(
                        "`{}` is not a non-negative whole number of milliseconds",
                        quotable(s)
                    )
                },
            })?;
            ms.push(v);
        }
        Trace::new(ms)
    }

    /// The opportunity times, ms.
    #[must_use]
    pub fn timestamps(&self) -> &[u64] {
        &self.ms
    }

    /// The period: the last timestamp.
    #[must_use]
    pub fn period(&self) -> Dur {
        Dur(self.ms[self.ms.len() - 1] * MS)
    }

    /// Mean rate over a period, bit/s.
    #[must_use]
    pub fn mean_bps(&self) -> u64 {
        let bits = self.ms.len() as u128 * u128::from(OPPORTUNITY_BYTES) * 8 * 1000;
        u64::try_from(bits / u128::from(self.ms[self.ms.len() - 1])).unwrap_or(u64::MAX)
    }

    /// Opportunities in `(from, to]` (each carries [`OPPORTUNITY_BYTES`]).
    #[must_use]
    pub fn opportunities(&self, from: Time, to: Time) -> u64 {
        self.before_or_at(to)
            .saturating_sub(self.before_or_at(from))
    }

    /// Opportunities at times ≤ `t`.
    fn before_or_at(&self, t: Time) -> u64 {
        let p = self.period().0;
        let loops = t.0 / p;
        let off = t.0 % p;
        let within = self.ms.partition_point(|&m| m * MS <= off) as u64;
        loops * self.ms.len() as u64 + within
    }
}

/// A trace with a read position.
#[derive(Clone, Debug)]
pub struct TraceCursor {
    trace: Arc<Trace>,
    /// Next opportunity not yet used or passed.
    idx: usize,
    /// Start of the current loop, ns.
    base: u64,
    /// The opportunity the last packet ended at, and the bytes it had left.
    last: Time,
    left: u32,
}

impl TraceCursor {
    /// A cursor at time 0.
    #[must_use]
    pub fn new(trace: Arc<Trace>) -> Self {
        TraceCursor {
            trace,
            idx: 0,
            base: 0,
            last: Time::ZERO,
            left: 0,
        }
    }

    /// Time of the next opportunity, ns.
    #[inline]
    fn next_time(&self) -> u64 {
        self.base + self.trace.ms[self.idx] * MS
    }

    /// Step past the next opportunity (wrapping to the next loop).
    #[inline]
    fn advance(&mut self) {
        self.idx += 1;
        if self.idx == self.trace.ms.len() {
            self.idx = 0;
            self.base += self.trace.ms[self.trace.ms.len() - 1] * MS;
        }
    }

    /// Serialisation time of `bytes` starting at `start` (see the module contract).
    #[inline(never)]
    pub fn serialization(&mut self, bytes: u32, start: Time) -> Dur {
        let mut need = bytes;
        if start == self.last && self.left > 0 {
            let used = need.min(self.left);
            self.left -= used;
            need -= used;
            if need == 0 {
                return Dur::ZERO;
            }
        } else if start < self.last {
            self.seek(start);
        }
        // Opportunities before the start found nothing to send: lost.
        while self.next_time() < start.0 {
            self.advance();
        }
        loop {
            let t = self.next_time();
            self.advance();
            if need <= OPPORTUNITY_BYTES {
                self.last = Time(t);
                self.left = OPPORTUNITY_BYTES - need;
                return Dur(t - start.0);
            }
            need -= OPPORTUNITY_BYTES;
        }
    }

    /// Restart the accounting at `t`: the first opportunity at or after it is next.
    fn seek(&mut self, t: Time) {
        let p = self.trace.period().0;
        self.base = t.0 - t.0 % p;
        let off = t.0 - self.base;
        self.idx = self.trace.ms.partition_point(|&m| m * MS < off);
        if self.idx == self.trace.ms.len() {
            self.idx = 0;
            self.base += p;
        }
        self.last = t;
        self.left = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cursor(ms: &[u64]) -> TraceCursor {
        TraceCursor::new(Arc::new(Trace::new(ms.to_vec()).unwrap()))
    }

    /// Byte accounting: two 700-byte packets share one opportunity; a 1500-byte packet then
    /// uses the last 100 bytes of it and 1400 of the next; an opportunity that finds the
    /// transmitter idle is lost.
    #[test]
    fn opportunities_are_shared_and_split_in_bytes() {
        // Opportunities at 1, 2, 3, 5 ms, looping every 5 ms.
        let mut c = cursor(&[1, 2, 3, 5]);
        assert_eq!(c.serialization(700, Time(0)), Dur(MS));
        assert_eq!(
            c.serialization(700, Time(MS)),
            Dur::ZERO,
            "same opportunity"
        );
        assert_eq!(
            c.serialization(1500, Time(MS)),
            Dur(MS),
            "rest of 1 ms, then 2 ms"
        );
        // Idle until 4 ms: the 3 ms opportunity and the rest of 2 ms are lost.
        assert_eq!(c.serialization(100, Time(4 * MS)), Dur(MS));
        // Loop: the next are at 6, 7, 8, 10 ms.
        assert_eq!(c.serialization(3000, Time(5 * MS)), Dur(2 * MS));
        assert_eq!(c.serialization(1500, Time(9 * MS)), Dur(MS));
        // An idle transmitter reached exactly at an opportunity uses it.
        assert_eq!(c.serialization(1500, Time(11 * MS)), Dur::ZERO);
        // A start that goes back restarts there.
        assert_eq!(c.serialization(1500, Time(MS / 2)), Dur(MS / 2));
    }

    /// Repeated timestamps are several opportunities; a trace starting at 0 has two at each
    /// multiple of its period.
    #[test]
    fn repeated_timestamps_are_several_opportunities() {
        let mut c = cursor(&[0, 2, 2, 2, 4]);
        let ends: Vec<u64> = (0..8)
            .map(|_| {
                let start = Time(c.last.0);
                (start + c.serialization(1500, start)).0 / MS
            })
            .collect();
        assert_eq!(ends, vec![0, 2, 2, 2, 4, 4, 6, 6]);
        let t = Trace::new(vec![0, 2, 2, 2, 4]).unwrap();
        // (0, 4 ms]: the three at 2 ms, the last of loop 0 and the first of loop 1 at 4 ms.
        assert_eq!(t.opportunities(Time::ZERO, Time(4 * MS)), 5);
        assert_eq!(t.opportunities(Time(3 * MS), Time(10 * MS)), 10);
        assert_eq!(t.mean_bps(), 5 * 12_000 * 1000 / 4);
    }

    /// Parse errors name the line.
    #[test]
    fn bad_traces_name_the_line() {
        assert_eq!(Trace::parse("1\n2\n\n3\n").unwrap_err().line, 3);
        let e = Trace::parse("1\n2\nx1\n").unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.reason.contains("`x1`"), "{}", e.reason);
        assert_eq!(Trace::parse("1\n5\n4\n").unwrap_err().line, 3);
        assert_eq!(Trace::parse("0\n0\n").unwrap_err().line, 2);
        assert_eq!(Trace::parse("").unwrap_err().line, 0);
        assert_eq!(Trace::parse("-1\n").unwrap_err().line, 1);
        // The first line of a file of another kind is not quoted; later ones are, clipped.
        let e = Trace::parse("root:$6$SECRET:19000:0:99999:7:::\n").unwrap_err();
        assert_eq!(e.line, 1);
        assert!(!e.reason.contains("SECRET"), "{}", e.reason);
        let e = Trace::parse(&format!("1\n{}\u{1b}\n", "y".repeat(100))).unwrap_err();
        assert!(
            e.reason.contains(&format!("`{}…`", "y".repeat(32))),
            "{}",
            e.reason
        );
        let e = Trace::parse("1\nx\u{1b}\n").unwrap_err();
        assert!(e.reason.contains("`x\\u{1b}`"), "{}", e.reason);
        assert_eq!(Trace::parse("1\n").unwrap().mean_bps(), 12_000_000);
    }
}
