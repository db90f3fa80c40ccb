//! Workloads: flows that arrive as a Poisson process, with sizes drawn from an empirical CDF.
//!
//! Contract: [`SizeCdf::parse`] reads a flow-size CDF (`<bytes> <cumulative probability>` per
//! line, `#` comments, both columns non-decreasing, the last probability 1, no positive
//! probability below 1 byte) and names the line of any error, quoting the file only once it
//! has read as a CDF; [`SizeCdf::sample`] maps a uniform draw in [0, 1) to a size by inverse-CDF
//! sampling with linear interpolation between the points (ns-3 `EmpiricalRandomVariable`
//! with interpolation; the pFabric and HPCC traffic generators). [`Arrivals`] draws the start
//! times of a Poisson process of a given rate (exponential gaps, inverse transform) and the
//! sizes, from one random stream per `[[flows]]` table, seeded from the scenario seed and the
//! table's position, so the same seed gives the same workload. [`REQUESTS`] declares the keys
//! of a request/response workload (`requests = N` on a `[[flows]]` table,
//! [`cclab_sim::tcp::exchange`]).

use cclab_sim::{Dur, Time, rng};

use super::params::{Entry, Kind, Param};

/// Most exchanges one flow may make.
pub const MAX_REQUESTS: i64 = 100_000;
/// Longest think time.
pub const MAX_THINK_TIME: Dur = Dur::from_secs(3600);
/// `request_size` when the file does not say: a small HTTP/1.1 GET (request line and a few
/// headers), one segment.
pub const DEFAULT_REQUEST_SIZE: u32 = 200;

/// The request/response workload's keys of a `[[flows]]` table.
pub const REQUESTS: Entry = Entry {
    name: "requests",
    doc: "request/response exchanges: the flow's receiving host sends requests, its sender answers each with a response of `size` bytes (or drawn from `size_cdf` per response)",
    source: "closed-loop request/response; HTTP/1.1 persistence, RFC 9112 §9.3",
    params: &[
        Param {
            name: "requests",
            kind: Kind::Int {
                min: 0,
                max: MAX_REQUESTS,
            },
            unit: "exchanges",
            default: "0",
            doc: "exchanges one after another (0: the flow sends `size`, or bulk); the response size comes from `size` or `size_cdf`",
            source: "—",
        },
        Param {
            name: "request_size",
            kind: Kind::Other {
                ty: "size",
                range: "1 B..=mss (one segment)",
                quoted: true,
            },
            unit: "",
            default: "200B",
            doc: "payload bytes of each request, sent on the ACK path with the client's pending ACK",
            source: "a small HTTP/1.1 GET",
        },
        Param {
            name: "think_time",
            kind: Kind::Duration {
                max: MAX_THINK_TIME,
            },
            unit: "",
            default: "0ms",
            doc: "pause between a response's last byte and the next request",
            source: "—",
        },
        Param {
            name: "persistent",
            kind: Kind::Bool,
            unit: "",
            default: "true",
            doc: "every exchange on one connection (window carried over); false: a new connection, with its handshake, per exchange (needs `handshake = true`)",
            source: "RFC 9112 §9.3 (persistent by default)",
        },
        Param {
            name: "slow_start_after_idle",
            kind: Kind::Bool,
            unit: "",
            default: "true",
            doc: "restart after idle (any flow): after more than an RTO without sending, cwnd halves per RTO idle, not below min(IW, cwnd); not for BBR",
            source: "Linux `tcp_slow_start_after_idle` = 1, `tcp_cwnd_restart`; RFC 5681 §4.1",
        },
    ],
};

/// The workloads `cclab list workloads` shows.
pub const WORKLOADS: &[&Entry] = &[&REQUESTS];
use rand_chacha::ChaCha8Rng;

/// Built-in CDFs: name, text (the files under `workloads/`).
pub const BUILT_IN: &[(&str, &str)] = &[
    (
        "websearch",
        include_str!("../../../../workloads/websearch.cdf"),
    ),
    (
        "datamining",
        include_str!("../../../../workloads/datamining.cdf"),
    ),
];

/// Largest flow size a CDF may give: 1 TB.
pub const MAX_SIZE: f64 = 1e12;

/// A piecewise-linear flow-size CDF.
#[derive(Clone, Debug, PartialEq)]
pub struct SizeCdf {
    /// (bytes, cumulative probability), both non-decreasing, the last probability 1.
    points: Vec<(f64, f64)>,
}

impl SizeCdf {
    /// Parse a CDF file's text; an error names the 1-based line and what is wrong. It quotes
    /// the file only once a line has read as a CDF point (a clipped, escaped token), so a file
    /// of another kind named by mistake (`/etc/shadow`) is never shown.
    ///
    /// # Errors
    /// A line that is not two numbers, a size outside 0..=1 TB, a probability outside [0, 1],
    /// a size below 1 byte with a positive probability, a column that decreases, no point, or
    /// a last probability other than 1.
    pub fn parse(text: &str) -> Result<Self, (usize, String)> {
        let mut points: Vec<(f64, f64)> = Vec::new();
        let mut last_line = 0;
        for (i, line) in text.lines().enumerate() {
            let n = i + 1;
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            last_line = n;
            // `, got `…``: only in a file recognised as a CDF.
            let got = |t: &str| {
                if points.is_empty() {
                    String::new()
                } else {
                    format!(", got `{}`", super::error::clip(t))
                }
            };
            let cols: Vec<&str> = line.split_whitespace().collect();
            let [x, p] = cols[..] else {
                return Err((
                    n,
                    format!(
                        "expected `<bytes> <probability>` (two numbers), the line has {} \
                         fields{}",
                        cols.len(),
                        got(line)
                    ),
                ));
            };
            let num = |s: &str, what: &str| {
                s.parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite())
                    .ok_or_else(|| (n, format!("the {what} is not a number{}", got(s))))
            };
            let (x, p) = (num(x, "size")?, num(p, "probability")?);
            if !(0.0..=MAX_SIZE).contains(&x) {
                return Err((n, format!("size {x} is not in 0..=1e12 bytes")));
            }
            if !(0.0..=1.0).contains(&p) {
                return Err((n, format!("probability {p} is not in [0, 1]")));
            }
            // A flow carries at least a byte: below 1 byte only a point of probability 0 (the
            // usual `0 0` anchor, from which sizes rise linearly) is a CDF of flow sizes.
            if x < 1.0 && p > 0.0 {
                return Err((
                    n,
                    format!(
                        "the point ({x}, {p}) gives flows of less than 1 byte probability {p}: \
                         every size with a positive probability must be at least 1 byte"
                    ),
                ));
            }
            if let Some(&(px, pp)) = points.last()
                && (x < px || p < pp)
            {
                return Err((
                    n,
                    format!("the point ({x}, {p}) is below the one before ({px}, {pp})"),
                ));
            }
            points.push((x, p));
        }
        match points.last() {
            None => Err((1, "no points".to_owned())),
            Some(&(_, p)) if p < 1.0 => Err((
                last_line,
                format!("the last probability is {p}; a CDF ends at 1"),
            )),
            Some(_) => Ok(SizeCdf { points }),
        }
    }

    /// The built-in CDF called `name`.
    #[must_use]
    pub fn built_in(name: &str) -> Option<Self> {
        BUILT_IN
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, text)| SizeCdf::parse(text).expect("built-in CDFs parse"))
    }

    /// The size at cumulative probability `u` in [0, 1): linear between the two points around
    /// it (the smallest size if `u` is below the first point's probability), rounded up to a
    /// whole byte, at least 1.
    #[must_use]
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "sizes are at most MAX_SIZE = 1e12 and not negative"
    )]
    pub fn sample(&self, u: f64) -> u64 {
        let k = self.points.partition_point(|&(_, p)| p <= u);
        let x = match (k.checked_sub(1).map(|j| self.points[j]), self.points.get(k)) {
            (Some((x0, p0)), Some(&(x1, p1))) if p1 > p0 => x0 + (x1 - x0) * (u - p0) / (p1 - p0),
            (_, Some(&(x1, _))) => x1,
            (Some((x0, _)), None) => x0,
            (None, None) => unreachable!("a CDF has points"),
        };
        (x.ceil() as u64).max(1)
    }

    /// Mean size of the piecewise-linear distribution, bytes (a point mass at the first
    /// point's size for its probability, then uniform between neighbouring points).
    #[must_use]
    pub fn mean(&self) -> f64 {
        let (x0, p0) = self.points[0];
        let mut m = x0 * p0;
        for w in self.points.windows(2) {
            let ((a, pa), (b, pb)) = (w[0], w[1]);
            m += (pb - pa) * (a + b) / 2.0;
        }
        m
    }
}

/// Start times and sizes of one `[[flows]]` table's flows.
pub struct Arrivals {
    rng: ChaCha8Rng,
}

impl Arrivals {
    /// The stream of table `table` in a run seeded with `seed`.
    #[must_use]
    pub fn new(seed: u64, table: usize) -> Self {
        Arrivals {
            rng: rng::stream(seed, rng::WORKLOAD + table as u64),
        }
    }

    /// The next arrival after `t` of a Poisson process of `rate` per second: `t` plus an
    /// exponential gap of mean 1/rate, in whole nanoseconds.
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "the gap is finite and positive (u < 1), and a gap beyond 584 years saturates"
    )]
    pub fn next_after(&mut self, t: Time, rate: f64) -> Time {
        let u = rng::unit_f64(&mut self.rng);
        let gap = -(1.0 - u).ln() / rate;
        t + Dur((gap * 1e9) as u64)
    }

    /// A size drawn from `cdf`.
    pub fn size(&mut self, cdf: &SizeCdf) -> u64 {
        cdf.sample(rng::unit_f64(&mut self.rng))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn websearch_parses_and_interpolates() {
        let c = SizeCdf::built_in("websearch").unwrap();
        assert_eq!(c.sample(0.0), 1);
        assert_eq!(c.sample(0.15), 10_000);
        assert_eq!(c.sample(0.175), 15_000);
        assert_eq!(c.sample(0.999_999), 29_999_334);
        assert!((c.mean() - 1_711_250.0).abs() < 1e-6);
    }

    /// The data-mining CDF: 80 % of flows are at most 10 KB (VL2 §3.1: most flows are small),
    /// and its piecewise-linear mean, summed by hand over the twelve segments as
    /// Σ (p_b − p_a)·(a + b)/2 = 12,658,198.6 bytes, of which the 100 MB – 1 GB segment carries
    /// 0.02 · 550 MB = 11 MB (86.9 % of the bytes: VL2 reports most bytes in flows of
    /// 100 MB – 1 GB).
    #[test]
    fn datamining_parses_and_interpolates() {
        let c = SizeCdf::built_in("datamining").unwrap();
        assert_eq!(c.sample(0.8), 10_000);
        assert_eq!(c.sample(0.85), 205_000);
        assert!((c.mean() - 12_658_198.6).abs() < 1e-3, "{}", c.mean());
        assert!((11e6 / c.mean() - 0.869).abs() < 0.001);
    }

    /// Errors name the line.
    #[test]
    fn bad_files_name_the_line() {
        let e = |t: &str| SizeCdf::parse(t).unwrap_err();
        assert_eq!(e("# c\n0 0\n10 x\n").0, 3);
        assert_eq!(e("0 0\n10 0.5\n5 0.6\n").0, 3);
        assert_eq!(e("0 0\n10 0.5\n").0, 2);
        assert_eq!(e("0 0 1\n").0, 1);
        assert_eq!(e("0 1.5\n").0, 1);
        assert_eq!(e("# nothing\n").0, 1);
        assert!(e("0 0\n10 0.5\n").1.contains("ends at 1"));
    }

    /// Sizes below 1 byte may carry no probability: an all-zero CDF (which `sample` would turn
    /// into 1-byte flows) is refused at its first point of positive probability, while the
    /// usual `0 0` anchor stays valid.
    #[test]
    fn sizes_below_one_byte_carry_no_probability() {
        let e = SizeCdf::parse("0 0\n0 1\n").unwrap_err();
        assert_eq!(e.0, 2);
        assert!(e.1.contains("at least 1 byte"), "{}", e.1);
        assert_eq!(SizeCdf::parse("0.5 0.2\n10 1\n").unwrap_err().0, 1);
        assert_eq!(SizeCdf::parse("0 0\n1 1\n").unwrap().sample(0.5), 1);
    }

    /// A file that is not a CDF is not quoted: a secret on its first line never reaches the
    /// message. Once a line has read as a point, a bad token is quoted, clipped and escaped.
    #[test]
    fn a_file_of_another_kind_is_not_quoted() {
        let secret = "root:$6$SECRETSALT$SECRETHASH:19000:0:99999:7:::";
        for text in [
            format!("{secret}\n"),
            format!("{secret} x\n"),
            format!("1 {secret}\n"),
            "# a comment\nroot: secret\n".to_owned(),
        ] {
            let (line, msg) = SizeCdf::parse(&text).unwrap_err();
            assert!(line >= 1, "{msg}");
            assert!(!msg.contains("SECRET") && !msg.contains("root"), "{msg}");
        }
        let (line, msg) = SizeCdf::parse(&format!("0 0\n10 {}\n", "x".repeat(500))).unwrap_err();
        assert_eq!(line, 2);
        assert!(
            msg.contains("`xxxx") && msg.contains("(500 characters)"),
            "{msg}"
        );
        assert!(msg.len() < 200, "{msg}");
        let (_, msg) = SizeCdf::parse("0 0\n10 \u{1b}[31m\n").unwrap_err();
        assert!(!msg.contains('\u{1b}'), "{msg}");
    }

    /// Drawn sizes: the sample mean of 200,000 draws is within 5 standard errors of the
    /// distribution's mean (σ from the distribution's second moment); the same seed draws the
    /// same sizes, another seed others.
    #[test]
    fn sizes_follow_the_cdf() {
        let c = SizeCdf::built_in("websearch").unwrap();
        // Second moment of the piecewise-uniform distribution.
        let m2: f64 = c
            .points
            .windows(2)
            .map(|w| {
                let ((a, pa), (b, pb)) = (w[0], w[1]);
                (pb - pa) * (a * a + a * b + b * b) / 3.0
            })
            .sum();
        let sigma = (m2 - c.mean() * c.mean()).sqrt();
        let n = 200_000;
        let draw = |seed| {
            let mut a = Arrivals::new(seed, 0);
            (0..n).map(|_| a.size(&c)).collect::<Vec<u64>>()
        };
        let sizes = draw(1);
        #[expect(clippy::cast_precision_loss, reason = "sums far below 2^53")]
        let mean = sizes.iter().sum::<u64>() as f64 / f64::from(n);
        let se = sigma / f64::from(n).sqrt();
        assert!((mean - c.mean()).abs() < 5.0 * se, "{mean} vs {}", c.mean());
        assert_eq!(sizes, draw(1));
        assert_ne!(sizes, draw(2));
    }

    /// Poisson arrivals at 50/s: over 100,000 gaps the mean gap is within 5 standard errors
    /// (1/(rate·√n)) of 20 ms, and the gaps' coefficient of variation is 1 within 2 %.
    #[test]
    fn arrivals_are_poisson() {
        let mut a = Arrivals::new(7, 3);
        let n = 100_000;
        let mut t = Time::ZERO;
        let mut gaps = Vec::with_capacity(n);
        for _ in 0..n {
            let next = a.next_after(t, 50.0);
            gaps.push(next.saturating_since(t).as_secs_f64());
            t = next;
        }
        #[expect(clippy::cast_precision_loss, reason = "small count")]
        let nf = n as f64;
        let mean = gaps.iter().sum::<f64>() / nf;
        let var = gaps.iter().map(|g| (g - mean) * (g - mean)).sum::<f64>() / nf;
        assert!((mean - 0.02).abs() < 5.0 * 0.02 / nf.sqrt(), "{mean}");
        assert!(
            (var.sqrt() / mean - 1.0).abs() < 0.02,
            "{}",
            var.sqrt() / mean
        );
    }
}
