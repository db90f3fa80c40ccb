//! List items made of durations, for elements scheduled in time: `[start, duration]` pairs and
//! `[start, width, height]` triples, each value a duration such as `"1.5s"` or a number of
//! seconds.

use cclab_sim::{Dur, Time};

use super::super::params::{RawValue, Value};
use crate::units::TimeValue;

/// `n` durations written as an array.
fn durations(raw: &RawValue, n: usize, what: &str) -> Result<Value, String> {
    let RawValue::Array(items) = raw else {
        return Err(format!("expected {what}, got {}", raw.describe()));
    };
    if items.len() != n {
        return Err(format!(
            "expected {what} ({n} durations), got {} values",
            items.len()
        ));
    }
    items
        .iter()
        .map(|it| {
            it.get_ref()
                .parse::<TimeValue>()
                .map(|TimeValue(d)| Value::Duration(d))
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Value::List)
}

/// A `[time, duration]` item.
pub(super) fn pair(raw: &RawValue) -> Result<Value, String> {
    durations(raw, 2, "[time, duration] such as [\"1s\", \"200ms\"]")
}

/// A `[start, width, height]` item.
pub(super) fn triple(raw: &RawValue) -> Result<Value, String> {
    durations(
        raw,
        3,
        "[start, width, height] such as [\"2s\", \"100ms\", \"50ms\"]",
    )
}

/// The checked items of a list of pairs or triples, as rows of durations.
pub(super) fn rows(items: Option<&[Value]>) -> Vec<Vec<Dur>> {
    items
        .unwrap_or(&[])
        .iter()
        .map(|item| match item {
            Value::List(v) => v
                .iter()
                .map(|d| match d {
                    Value::Duration(d) => *d,
                    _ => Dur::ZERO,
                })
                .collect(),
            _ => Vec::new(),
        })
        .collect()
}

/// A duration since the start of the run as a time.
pub(super) fn at(d: Dur) -> Time {
    Time(d.as_nanos())
}
