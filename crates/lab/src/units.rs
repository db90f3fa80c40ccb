//! Human-readable quantities in scenario files: rates, durations, sizes, probabilities and
//! buffer limits.
//!
//! Contract: every `parse_*` function accepts a number followed by an optional unit (whitespace
//! between them is allowed, `_` digit separators are ignored) and returns the value in simulator
//! units — bits per second, [`Dur`] nanoseconds, bytes — or a [`UnitError`] whose message lists the
//! accepted units. Nothing here panics on any input. The wrapper types ([`Rate`], [`TimeValue`],
//! [`ByteSize`], [`Probability`], [`BufferSpec`]) implement `serde::Deserialize` for both forms a
//! scenario file may use: a string with a unit (`"100Mbit"`, `"20ms"`, `"64KiB"`) or a plain number
//! in the base unit (bits/s, seconds, bytes).
//!
//! Units (case-sensitive where case carries meaning):
//! - rates: `bit`, `kbit`, `Mbit`, `Gbit`, `Tbit` (decimal prefixes, as `tc`), optionally with
//!   `/s`; the prefix letter is case-insensitive. `bps` forms are rejected because `tc` reads them
//!   as *bytes* per second while most people mean bits.
//! - durations: `ns`, `us`, `µs`, `ms`, `s`, `min`.
//! - sizes: `B`, `kB`/`KB`, `MB`, `GB`, `TB` (powers of 1000) and `KiB`, `MiB`, `GiB`, `TiB`
//!   (powers of 1024).
//! - buffers: `p` / `pkt` / `pkts` / `packets` (a packet count), any duration unit (the bytes the
//!   link sends in that time), any size unit (bytes), or `bdp` (multiples of the path's
//!   bandwidth-delay product), e.g. `"333p"`, `"50ms"`, `"500KB"`, `"1bdp"`, `"0.5bdp"`.

use std::fmt;

use cclab_sim::{Dur, QueueLimit};
use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use thiserror::Error;

/// A quantity that could not be parsed. The message says what was expected.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{0}")]
pub struct UnitError(pub String);

fn err(msg: impl Into<String>) -> UnitError {
    UnitError(msg.into())
}

/// Largest duration accepted anywhere: 10⁶ s (11.6 days) of simulated time.
pub const MAX_SECONDS: f64 = 1e6;

/// Split `"1.5 Gbit"` into the number `1.5` and the unit `"Gbit"`.
fn split_number(s: &str) -> Result<(f64, &str), UnitError> {
    let s = s.trim();
    let bytes = s.as_bytes();
    let mut end = 0;
    while end < bytes.len() {
        let c = bytes[end];
        let exponent = (c == b'e' || c == b'E')
            && end > 0
            && bytes
                .get(end + 1)
                .is_some_and(|n| n.is_ascii_digit() || *n == b'-' || *n == b'+');
        if c.is_ascii_digit() || matches!(c, b'.' | b'_' | b'+' | b'-') || exponent {
            end += 1;
        } else {
            break;
        }
    }
    // `end` stops at an ASCII byte or the end, so it is a char boundary.
    let (num, unit) = s.split_at(end);
    let num: String = num.chars().filter(|c| *c != '_').collect();
    if num.is_empty() {
        return Err(err(format!("`{s}` does not start with a number")));
    }
    let value: f64 = num
        .parse()
        .map_err(|_| err(format!("`{num}` is not a number")))?;
    if !value.is_finite() {
        return Err(err(format!("`{num}` is not a finite number")));
    }
    Ok((value, unit.trim()))
}

/// Multiplier of a rate unit to bits per second.
fn rate_unit(unit: &str) -> Option<f64> {
    let unit = unit.strip_suffix("/s").unwrap_or(unit);
    let lower = unit.to_ascii_lowercase();
    match lower.as_str() {
        "" | "bit" => Some(1.0),
        "kbit" => Some(1e3),
        "mbit" => Some(1e6),
        "gbit" => Some(1e9),
        "tbit" => Some(1e12),
        _ => None,
    }
}

/// Turn a non-negative float in base units into an integer, rejecting negatives and overflow.
fn to_u64(value: f64, what: &str) -> Result<u64, UnitError> {
    if value < 0.0 {
        return Err(err(format!("{what} must not be negative")));
    }
    // 2^63: comfortably representable as f64 and far above anything meaningful.
    if value >= 9.223_372_036_854_776e18 {
        return Err(err(format!(
            "{what} is out of range: it must be below 2^63"
        )));
    }
    Ok(value.round() as u64)
}

/// A size in bytes: [`to_u64`], and a whole number (`"1.5B"` is refused rather than rounded;
/// `written` is the value as the file wrote it, for the message).
fn to_bytes(value: f64, what: &str, written: &str) -> Result<u64, UnitError> {
    // Tolerate the rounding error of a decimal prefix (`1.1kB` is 1100.0000000000002 in f64).
    let tolerance = (value.abs() * 1e-12).max(1e-6);
    if (value - value.round()).abs() > tolerance {
        return Err(err(format!(
            "{what} must be a whole number of bytes: `{written}` is {} bytes",
            fmt_number(value)
        )));
    }
    to_u64(value, what)
}

const RATE_UNITS: &str = "bit, kbit, Mbit, Gbit, Tbit (optionally followed by /s)";

/// Parse a rate such as `"100Mbit"`, `"1.5Gbit/s"` or `"500kbit"` into bits per second. A number
/// without unit is bits per second. The rate must be positive.
///
/// # Errors
/// Unknown unit, malformed number, zero, negative or absurdly large rate.
pub fn parse_rate(s: &str) -> Result<u64, UnitError> {
    let (value, unit) = split_number(s)?;
    let Some(mult) = rate_unit(unit) else {
        let lower = unit.to_ascii_lowercase();
        if lower.ends_with("bps") || lower.ends_with("b/s") {
            return Err(err(format!(
                "ambiguous rate unit `{unit}` (tc reads it as bytes per second); write bits, e.g. \
                 `{}Mbit`",
                fmt_number(value)
            )));
        }
        return Err(err(format!(
            "unknown rate unit `{unit}`, expected one of: {RATE_UNITS}"
        )));
    };
    rate_from_bps(value * mult)
}

fn rate_from_bps(bps: f64) -> Result<u64, UnitError> {
    let rate = to_u64(bps, "a rate")?;
    if rate == 0 {
        return Err(err("a rate must be positive (at least 1 bit/s)"));
    }
    Ok(rate)
}

/// Nanoseconds per unit of a duration unit.
fn time_unit(unit: &str) -> Option<f64> {
    match unit {
        "ns" => Some(1.0),
        "us" | "µs" | "μs" => Some(1e3),
        "ms" => Some(1e6),
        "" | "s" | "sec" => Some(1e9),
        "min" => Some(60e9),
        _ => None,
    }
}

const TIME_UNITS: &str = "ns, us, ms, s, min";

fn dur_from_secs(secs: f64) -> Result<Dur, UnitError> {
    if secs < 0.0 {
        return Err(err("a duration must not be negative"));
    }
    if secs > MAX_SECONDS {
        return Err(err(format!("a duration must be at most {MAX_SECONDS:e} s")));
    }
    Ok(Dur::from_nanos((secs * 1e9).round() as u64))
}

/// Parse a duration such as `"20ms"`, `"1.5s"` or `"250us"`. A number without unit is seconds.
///
/// # Errors
/// Unknown unit, malformed number, negative or longer than [`MAX_SECONDS`].
pub fn parse_duration(s: &str) -> Result<Dur, UnitError> {
    let (value, unit) = split_number(s)?;
    let Some(ns) = time_unit(unit) else {
        return Err(err(format!(
            "unknown duration unit `{unit}`, expected one of: {TIME_UNITS}"
        )));
    };
    dur_from_secs(value * ns / 1e9)
}

/// Bytes per unit of a size unit.
fn size_unit(unit: &str) -> Option<f64> {
    match unit {
        "" | "B" | "byte" | "bytes" => Some(1.0),
        "kB" | "KB" => Some(1e3),
        "MB" => Some(1e6),
        "GB" => Some(1e9),
        "TB" => Some(1e12),
        "KiB" => Some(1024.0),
        "MiB" => Some(1024.0 * 1024.0),
        "GiB" => Some(1024.0 * 1024.0 * 1024.0),
        "TiB" => Some(1024.0 * 1024.0 * 1024.0 * 1024.0),
        _ => None,
    }
}

const SIZE_UNITS: &str = "B, kB, MB, GB, TB, KiB, MiB, GiB, TiB";

/// Parse a size such as `"10MB"`, `"64KiB"` or `"1500"` into bytes. A number without unit is
/// bytes; the result must be a whole number of bytes (`"1.5kB"` is, `"1.5B"` is not).
///
/// # Errors
/// Unknown unit (including bit-based ones such as `Mb`), malformed number, negative, fractional
/// or too large.
pub fn parse_size(s: &str) -> Result<u64, UnitError> {
    let (value, unit) = split_number(s)?;
    let Some(mult) = size_unit(unit) else {
        return Err(err(format!(
            "unknown size unit `{unit}`, expected one of: {SIZE_UNITS}"
        )));
    };
    to_bytes(value * mult, "a size", s.trim())
}

/// Parse a probability: a number in [0, 1] or a percentage such as `"0.1%"`.
///
/// # Errors
/// Malformed number, unknown suffix or out of range.
pub fn parse_probability(s: &str) -> Result<f64, UnitError> {
    let (value, unit) = split_number(s)?;
    let p = match unit {
        "" => value,
        "%" => value / 100.0,
        _ => {
            return Err(err(format!(
                "unknown probability suffix `{unit}`, expected a number in [0, 1] or a \
                 percentage like `0.1%`"
            )));
        }
    };
    check_probability(p)
}

fn check_probability(p: f64) -> Result<f64, UnitError> {
    if (0.0..=1.0).contains(&p) {
        Ok(p)
    } else {
        Err(err(format!(
            "a probability must be in [0, 1], got {}",
            fmt_number(p)
        )))
    }
}

/// A queue limit as written in a scenario, before the link rate and path RTT are known.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BufferSpec {
    /// A packet count (`"333p"`).
    Packets(u32),
    /// Wire bytes (`"500KB"`).
    Bytes(u64),
    /// What the link sends in this time at its rate (`"50ms"`).
    Time(Dur),
    /// Multiples of the path's bandwidth-delay product (`"1bdp"`).
    Bdp(f64),
}

const BUFFER_FORMS: &str = "packets (`333p`), bytes (`500KB`), time at link rate (`50ms`) or \
                            multiples of the BDP (`1bdp`)";

/// Parse a buffer limit: `"333p"`, `"500KB"`, `"50ms"` or `"1bdp"`.
///
/// # Errors
/// Missing or unknown unit, fractional or negative packet count, negative sizes.
pub fn parse_buffer(s: &str) -> Result<BufferSpec, UnitError> {
    let (value, unit) = split_number(s)?;
    match unit {
        "p" | "pkt" | "pkts" | "packet" | "packets" => packets(value),
        "bdp" | "BDP" => bdp(value),
        "" => Err(err(format!("a buffer needs a unit: {BUFFER_FORMS}"))),
        _ => {
            if let Some(ns) = time_unit(unit) {
                Ok(BufferSpec::Time(dur_from_secs(value * ns / 1e9)?))
            } else if let Some(mult) = size_unit(unit) {
                Ok(BufferSpec::Bytes(to_bytes(
                    value * mult,
                    "a buffer size",
                    s.trim(),
                )?))
            } else {
                Err(err(format!(
                    "unknown buffer unit `{unit}`, expected {BUFFER_FORMS}"
                )))
            }
        }
    }
}

fn packets(value: f64) -> Result<BufferSpec, UnitError> {
    if value < 0.0 || value.fract() != 0.0 || value > f64::from(u32::MAX) {
        return Err(err(format!(
            "a packet count must be a whole number between 0 and {}, got {}",
            u32::MAX,
            fmt_number(value)
        )));
    }
    Ok(BufferSpec::Packets(value as u32))
}

fn bdp(value: f64) -> Result<BufferSpec, UnitError> {
    if !(0.0..=1e6).contains(&value) {
        return Err(err(format!(
            "a BDP multiple must be in [0, 1e6], got {}",
            fmt_number(value)
        )));
    }
    Ok(BufferSpec::Bdp(value))
}

impl BufferSpec {
    /// The drop-tail limit for a link of `rate_bps` on a path whose base RTT is `rtt`: packet
    /// counts stay packets; everything else becomes bytes (`Time(t)` = rate·t/8,
    /// `Bdp(k)` = k·rate·rtt/8), rounded to the nearest byte.
    #[must_use]
    pub fn resolve(self, rate_bps: u64, rtt: Dur) -> QueueLimit {
        let bytes_in = |d: Dur| cclab_sim::topology::Dumbbell::bdp_bytes(rate_bps, d);
        match self {
            BufferSpec::Packets(n) => QueueLimit::Packets(n),
            BufferSpec::Bytes(b) => QueueLimit::Bytes(b),
            BufferSpec::Time(d) => QueueLimit::Bytes(bytes_in(d)),
            BufferSpec::Bdp(k) => {
                let bdp = bytes_in(rtt) as f64;
                QueueLimit::Bytes((k * bdp).round() as u64)
            }
        }
    }
}

impl fmt::Display for BufferSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BufferSpec::Packets(n) => write!(f, "{n}p"),
            BufferSpec::Bytes(b) => write!(f, "{b}B"),
            BufferSpec::Time(d) => write!(f, "{}", fmt_dur(*d)),
            BufferSpec::Bdp(k) => write!(f, "{}bdp", fmt_number(*k)),
        }
    }
}

/// A rate in bits per second (deserialised from `"100Mbit"` or a number of bit/s).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rate(pub u64);

/// A duration (deserialised from `"20ms"` or a number of seconds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeValue(pub Dur);

/// A size in bytes (deserialised from `"64KiB"` or a number of bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ByteSize(pub u64);

/// A probability in [0, 1] (deserialised from a number or `"0.1%"`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Probability(pub f64);

/// One visitor for all scalar quantities: strings go through `parse`, numbers through `number`.
struct QuantityVisitor<T> {
    expecting: &'static str,
    parse: fn(&str) -> Result<T, UnitError>,
    number: fn(f64) -> Result<T, UnitError>,
}

impl<'de, T> Visitor<'de> for QuantityVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.expecting)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        (self.parse)(v).map_err(E::custom)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<T, E> {
        (self.number)(v as f64).map_err(E::custom)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
        (self.number)(v as f64).map_err(E::custom)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<T, E> {
        if v.is_finite() {
            (self.number)(v).map_err(E::custom)
        } else {
            Err(E::custom(format!("{v} is not a finite number")))
        }
    }
}

impl<'de> Deserialize<'de> for Rate {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(QuantityVisitor {
            expecting: "a rate such as \"100Mbit\" or a number of bits per second",
            parse: |s| parse_rate(s).map(Rate),
            number: |v| rate_from_bps(v).map(Rate),
        })
    }
}

impl<'de> Deserialize<'de> for TimeValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(QuantityVisitor {
            expecting: "a duration such as \"20ms\" or a number of seconds",
            parse: |s| parse_duration(s).map(TimeValue),
            number: |v| dur_from_secs(v).map(TimeValue),
        })
    }
}

impl<'de> Deserialize<'de> for ByteSize {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(QuantityVisitor {
            expecting: "a size such as \"64KiB\" or a number of bytes",
            parse: |s| parse_size(s).map(ByteSize),
            number: |v| to_bytes(v, "a size", &fmt_number(v)).map(ByteSize),
        })
    }
}

impl<'de> Deserialize<'de> for Probability {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(QuantityVisitor {
            expecting: "a probability in [0, 1] or a percentage such as \"0.1%\"",
            parse: |s| parse_probability(s).map(Probability),
            number: |v| check_probability(v).map(Probability),
        })
    }
}

/// The table form of a buffer: exactly one of the keys.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BufferTable {
    packets: Option<u32>,
    bytes: Option<ByteSize>,
    time: Option<TimeValue>,
    bdp: Option<f64>,
}

struct BufferVisitor;

impl<'de> Visitor<'de> for BufferVisitor {
    type Value = BufferSpec;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "a buffer such as \"333p\", \"500KB\", \"50ms\", \"1bdp\" or a table with one of \
             packets, bytes, time, bdp"
        )
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<BufferSpec, E> {
        parse_buffer(v).map_err(E::custom)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<BufferSpec, E> {
        Err(E::custom(format!("a buffer needs a unit: {BUFFER_FORMS}")))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<BufferSpec, E> {
        self.visit_i64(i64::try_from(v).unwrap_or(i64::MAX))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<BufferSpec, E> {
        self.visit_i64(0)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<BufferSpec, A::Error> {
        let t = BufferTable::deserialize(de::value::MapAccessDeserializer::new(map))?;
        let given = [
            t.packets.is_some(),
            t.bytes.is_some(),
            t.time.is_some(),
            t.bdp.is_some(),
        ];
        if given.iter().filter(|g| **g).count() != 1 {
            return Err(de::Error::custom(
                "a buffer table needs exactly one of: packets, bytes, time, bdp",
            ));
        }
        if let Some(p) = t.packets {
            Ok(BufferSpec::Packets(p))
        } else if let Some(b) = t.bytes {
            Ok(BufferSpec::Bytes(b.0))
        } else if let Some(d) = t.time {
            Ok(BufferSpec::Time(d.0))
        } else {
            bdp(t.bdp.unwrap_or(0.0)).map_err(de::Error::custom)
        }
    }
}

impl<'de> Deserialize<'de> for BufferSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(BufferVisitor)
    }
}

/// Shortest decimal form of a float (`1`, `0.5`, `1e-7`).
#[must_use]
pub fn fmt_number(v: f64) -> String {
    format!("{v}")
}

/// A rate for humans: `100 Mbit/s`, `1.5 Gbit/s`, `500 kbit/s`.
#[must_use]
pub fn fmt_rate(bps: u64) -> String {
    let v = bps as f64;
    let (div, unit) = if bps >= 1_000_000_000 {
        (1e9, "Gbit/s")
    } else if bps >= 1_000_000 {
        (1e6, "Mbit/s")
    } else if bps >= 1_000 {
        (1e3, "kbit/s")
    } else {
        (1.0, "bit/s")
    };
    format!("{} {unit}", trim_float(v / div))
}

/// A duration for humans: `20 ms`, `1.5 s`, `250 us`.
#[must_use]
pub fn fmt_dur(d: Dur) -> String {
    let ns = d.as_nanos();
    if ns == 0 {
        "0 s".to_owned()
    } else if ns >= 1_000_000_000 {
        format!("{} s", trim_float(ns as f64 / 1e9))
    } else if ns >= 1_000_000 {
        format!("{} ms", trim_float(ns as f64 / 1e6))
    } else if ns >= 1_000 {
        format!("{} us", trim_float(ns as f64 / 1e3))
    } else {
        format!("{ns} ns")
    }
}

/// At most three decimals, trailing zeros removed.
fn trim_float(v: f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates() {
        assert_eq!(parse_rate("100Mbit"), Ok(100_000_000));
        assert_eq!(parse_rate("1Gbit"), Ok(1_000_000_000));
        assert_eq!(parse_rate("500kbit"), Ok(500_000));
        assert_eq!(parse_rate("1.5 Gbit/s"), Ok(1_500_000_000));
        assert_eq!(parse_rate("100mbit"), Ok(100_000_000));
        assert_eq!(parse_rate("1e8"), Ok(100_000_000));
        assert_eq!(parse_rate("10_000bit"), Ok(10_000));
        assert!(parse_rate("0Mbit").is_err());
        assert!(parse_rate("-1Mbit").is_err());
        assert!(parse_rate("Mbit").is_err());
        assert!(parse_rate("1e30Tbit").is_err());
        let e = parse_rate("100Mbps").unwrap_err();
        assert!(e.0.contains("ambiguous"), "{e}");
        let e = parse_rate("100furlongs").unwrap_err();
        assert!(e.0.contains("expected one of: bit, kbit, Mbit"), "{e}");
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("1.5s"), Ok(Dur::from_millis(1500)));
        assert_eq!(parse_duration("20ms"), Ok(Dur::from_millis(20)));
        assert_eq!(parse_duration("250us"), Ok(Dur::from_micros(250)));
        assert_eq!(parse_duration("250µs"), Ok(Dur::from_micros(250)));
        assert_eq!(parse_duration("7ns"), Ok(Dur::from_nanos(7)));
        assert_eq!(parse_duration("2min"), Ok(Dur::from_secs(120)));
        assert_eq!(parse_duration("0.1"), Ok(Dur::from_millis(100)));
        assert_eq!(parse_duration("1e-3s"), Ok(Dur::from_millis(1)));
        assert!(parse_duration("-1s").is_err());
        assert!(parse_duration("1h").is_err());
        assert!(parse_duration("1e300s").is_err());
        assert!(parse_duration("").is_err());
        assert!(parse_duration("1.2.3s").is_err());
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("10MB"), Ok(10_000_000));
        assert_eq!(parse_size("64KiB"), Ok(65_536));
        assert_eq!(parse_size("1500"), Ok(1500));
        assert_eq!(parse_size("1.5 kB"), Ok(1500));
        assert!(parse_size("10Mb").is_err());
        assert!(parse_size("-5B").is_err());
        // Fractional bytes are refused, not rounded; decimal prefixes may still carry decimals.
        let e = parse_size("1.5B").unwrap_err();
        assert_eq!(
            e.0,
            "a size must be a whole number of bytes: `1.5B` is 1.5 bytes"
        );
        assert!(parse_size("0.1KiB").is_err());
        assert_eq!(parse_size("1.1kB"), Ok(1100));
        assert_eq!(parse_size("2.5MiB"), Ok(2_621_440));
        assert!(parse_buffer("1.5B").is_err());
    }

    #[test]
    fn probabilities() {
        assert_eq!(parse_probability("0.1%"), Ok(0.001));
        assert_eq!(parse_probability("0.25"), Ok(0.25));
        assert!(parse_probability("101%").is_err());
        assert!(parse_probability("-0.1").is_err());
    }

    #[test]
    fn buffers() {
        assert_eq!(parse_buffer("333p"), Ok(BufferSpec::Packets(333)));
        assert_eq!(parse_buffer("333 packets"), Ok(BufferSpec::Packets(333)));
        assert_eq!(parse_buffer("500KB"), Ok(BufferSpec::Bytes(500_000)));
        assert_eq!(
            parse_buffer("50ms"),
            Ok(BufferSpec::Time(Dur::from_millis(50)))
        );
        assert_eq!(parse_buffer("1bdp"), Ok(BufferSpec::Bdp(1.0)));
        assert_eq!(parse_buffer("0.5BDP"), Ok(BufferSpec::Bdp(0.5)));
        assert!(parse_buffer("1.5p").is_err());
        assert!(parse_buffer("333").unwrap_err().0.contains("needs a unit"));
        assert!(parse_buffer("3 furlongs").is_err());
    }

    #[test]
    fn one_bdp_is_rate_times_rtt_over_eight_bytes() {
        // 100 Mbit/s × 40 ms / 8 = 500 000 bytes.
        let limit = BufferSpec::Bdp(1.0).resolve(100_000_000, Dur::from_millis(40));
        assert_eq!(limit, QueueLimit::Bytes(500_000));
        let limit = BufferSpec::Bdp(2.5).resolve(100_000_000, Dur::from_millis(40));
        assert_eq!(limit, QueueLimit::Bytes(1_250_000));
        // 50 ms at 10 Mbit/s = 62 500 bytes, independent of the RTT.
        let limit = BufferSpec::Time(Dur::from_millis(50)).resolve(10_000_000, Dur::ZERO);
        assert_eq!(limit, QueueLimit::Bytes(62_500));
        assert_eq!(
            BufferSpec::Packets(7).resolve(1, Dur::ZERO),
            QueueLimit::Packets(7)
        );
    }

    #[test]
    fn human_formats() {
        assert_eq!(fmt_rate(100_000_000), "100 Mbit/s");
        assert_eq!(fmt_rate(1_500_000_000), "1.5 Gbit/s");
        assert_eq!(fmt_rate(500), "500 bit/s");
        assert_eq!(fmt_dur(Dur::from_millis(20)), "20 ms");
        assert_eq!(fmt_dur(Dur::from_millis(1500)), "1.5 s");
        assert_eq!(fmt_dur(Dur::ZERO), "0 s");
    }
}
