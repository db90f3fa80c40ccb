//! `steps`: the rate steps at given times (a one-shot schedule, or repeating with `period`).

use cclab_sim::net::rate::{RateShape, Schedule};
use cclab_sim::{Dur, Time};

use super::super::params::{Kind, Param, RawValue, Value};
use super::{RateKind, RateSpec, rate_value};

/// Steps at given times.
pub(super) const STEPS: RateKind = RateKind {
    name: "steps",
    doc: "the rate changes to each given value at each given time, the last holding (or the whole repeating with `period`)",
    source: "piecewise-constant rate, as an ns-3 script setting a device's `DataRate` at scheduled times",
    params: &[
        Param {
            name: "steps",
            kind: Kind::List {
                ty: "list",
                range: "[time, rate] pairs, times increasing from 0, e.g. [[\"0s\", \"12Mbit\"], [\"10s\", \"3Mbit\"]]",
                item: step,
            },
            unit: "",
            default: "—",
            doc: "the rate in force from each time on (0: an outage)",
            source: "—",
        },
        Param {
            name: "period",
            kind: Kind::Duration { max: Dur::MAX },
            unit: "",
            default: "none",
            doc: "repeat the steps every period (each step inside it)",
            source: "—",
        },
    ],
    build: |v| {
        let Some(items) = v.list("steps") else {
            return Err(("steps", "`steps` is required: [[time, rate], …]".into()));
        };
        let steps = items
            .iter()
            .map(|it| match it {
                Value::List(p) => match (&p[0], &p[1]) {
                    (Value::Duration(t), Value::Int(r)) => {
                        (Time(t.0), u64::try_from(*r).unwrap_or(0))
                    }
                    _ => unreachable!("checked by `step`"),
                },
                _ => unreachable!("checked by `step`"),
            })
            .collect();
        Schedule::new(steps, v.duration("period"))
            .map(|s| RateSpec::Shape(RateShape::Schedule(s.into())))
            .map_err(|e| ("steps", e))
    },
};

/// One `[time, rate]` pair.
fn step(raw: &RawValue) -> Result<Value, String> {
    let RawValue::Array(pair) = raw else {
        return Err(format!(
            "expected a [time, rate] pair, got {}",
            raw.describe()
        ));
    };
    if pair.len() != 2 {
        return Err(format!(
            "expected a [time, rate] pair, got {} items",
            pair.len()
        ));
    }
    let time = match pair[0].get_ref() {
        RawValue::Str(s) => crate::units::parse_duration(s).map_err(|e| e.0)?,
        RawValue::Int(n) => {
            Dur::from_secs(u64::try_from(*n).map_err(|_| "a time is ≥ 0".to_owned())?)
        }
        RawValue::Float(f) if *f >= 0.0 && f.is_finite() => Dur::from_secs_f64(*f),
        other => {
            return Err(format!(
                "expected a time such as \"10s\", got {}",
                other.describe()
            ));
        }
    };
    let rate = rate_value(pair[1].get_ref())?;
    Ok(Value::List(vec![
        Value::Duration(time),
        Value::Int(i64::try_from(rate).map_err(|_| "rate too large".to_owned())?),
    ]))
}
