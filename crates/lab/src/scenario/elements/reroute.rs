//! `reroute`: a router sending packets over one of several paths, each with its own delay and
//! optional rate, switching on a period or a schedule (route changes; by default packets
//! already on a path keep it, so a switch to a shorter path reorders; `switch` makes a switch
//! lose the old path's queue, everything on the old path, or what arrives during a blackout).

use cclab_sim::net::{ElementSpec, PathSpec, SwitchMode, Switching};
use cclab_sim::{Dur, QueueLimit, Time};

use super::super::params::{Kind, Param, RawValue, Value};
use super::Element;
use crate::units::{BufferSpec, TimeValue, parse_buffer, parse_rate};

/// Default buffer of a path with a rate: Linux's default `txqueuelen` (1000 packets).
const DEFAULT_BUFFER_PACKETS: u32 = 1000;

/// A duration as written (a string with a unit, or seconds).
fn duration(raw: &RawValue) -> Result<Dur, String> {
    raw.parse::<TimeValue>().map(|t| t.0)
}

/// One item of `delays`.
fn delay_item(raw: &RawValue) -> Result<Value, String> {
    duration(raw).map(Value::Duration)
}

/// One item of `rates`: bit/s, or `"none"` for a pure delay line (0).
fn rate_item(raw: &RawValue) -> Result<Value, String> {
    match raw {
        RawValue::Str(s) if s == "none" => Ok(Value::Int(0)),
        RawValue::Str(s) => parse_rate(s)
            .map(|r| Value::Int(i64::try_from(r).unwrap_or(i64::MAX)))
            .map_err(|e| e.to_string()),
        RawValue::Int(n) if *n > 0 => Ok(Value::Int(*n)),
        other => Err(format!(
            "expected a rate such as \"10Mbit\" or \"none\", got {}",
            other.describe()
        )),
    }
}

/// One item of `schedule`: `[time, path]`.
fn switch_item(raw: &RawValue) -> Result<Value, String> {
    let wrong = || {
        format!(
            "expected [time, path] such as [\"5s\", 1], got {}",
            raw.describe()
        )
    };
    let RawValue::Array(pair) = raw else {
        return Err(wrong());
    };
    let [t, p] = pair.as_slice() else {
        return Err(wrong());
    };
    let t = duration(t.get_ref())?;
    match p.get_ref() {
        RawValue::Int(i) if *i >= 0 => Ok(Value::List(vec![Value::Duration(t), Value::Int(*i)])),
        _ => Err(wrong()),
    }
}

/// Route changes.
pub(super) const REROUTE: Element = Element {
    name: "reroute",
    doc: "sends each packet over the path active when it arrives (own delay and rate); switches on a period or a schedule",
    source: "route changes (Paxson, \"End-to-end routing behavior in the Internet\", SIGCOMM 1996); each path's transmitter as the links' drop-tail FIFO",
    params: &[
        Param {
            name: "delays",
            kind: Kind::List {
                ty: "list",
                range: "durations, one per path (at least 2)",
                item: delay_item,
            },
            unit: "",
            default: "required",
            doc: "one-way delay of each path",
            source: "—",
        },
        Param {
            name: "rates",
            kind: Kind::List {
                ty: "list",
                range: "rates (\"10Mbit\") or \"none\", one per path",
                item: rate_item,
            },
            unit: "",
            default: "none",
            doc: "serialisation rate of each path (default: none, pure delay lines)",
            source: "—",
        },
        Param {
            name: "buffer",
            kind: Kind::Other {
                ty: "buffer",
                range: "\"333p\", \"500KB\", \"50ms\", \"1bdp\"",
                quoted: true,
            },
            unit: "",
            default: "1000p",
            doc: "buffer of each path with a rate (time and BDP forms at the path's rate and twice its delay)",
            source: "Linux default `txqueuelen` (1000 packets)",
        },
        Param {
            name: "period",
            kind: Kind::Duration {
                max: Dur::from_secs(1_000_000),
            },
            unit: "",
            default: "none",
            doc: "switch to the next path (cyclically) every period, the first switch at offset + period",
            source: "—",
        },
        Param {
            name: "offset",
            kind: Kind::Duration {
                max: Dur::from_secs(1_000_000),
            },
            unit: "",
            default: "0s",
            doc: "delay of the first periodic switch",
            source: "—",
        },
        Param {
            name: "schedule",
            kind: Kind::List {
                ty: "list",
                range: "[time, path] pairs in increasing time, e.g. [[\"5s\", 1], [\"10s\", 0]]",
                item: switch_item,
            },
            unit: "",
            default: "none",
            doc: "explicit switches instead of a period (path 0 before the first)",
            source: "—",
        },
        Param {
            name: "switch",
            kind: Kind::Choice(&SwitchMode::NAMES),
            unit: "",
            default: "drain",
            doc: "what a switch does: drain (lossless: packets on the old path leave by it), drop_queue (packets queued on the old path are lost), drop_path (everything still on the old path, queued, being serialised or propagating, is lost), blackout (packets arriving within `blackout` after the switch are lost; the old path drains)",
            source: "drain: OpenFlow 1.3 §6.4 flow-mods change the lookup of later packets, not packets already queued; drop_queue: Linux dev_deactivate → qdisc_reset on an interface going down; drop_path: a failed link, or ns-3 Ipv4L3Protocol::Receive dropping at an interface SetDown (DROP_INTERFACE_DOWN); blackout: OpenFlow 1.3 §5.4 table-miss drop between a delete and an add",
        },
        Param {
            name: "blackout",
            kind: Kind::Duration {
                max: Dur::from_secs(1_000_000),
            },
            unit: "",
            default: "none",
            doc: "with switch = \"blackout\": how long after each switch arrivals are lost (> 0, shorter than the time between switches), e.g. a controller round trip",
            source: "—",
        },
    ],
    build: |v| {
        let delays: Vec<Dur> = v
            .list("delays")
            .ok_or((
                "delays",
                "a reroute needs `delays`, one per path".to_owned(),
            ))?
            .iter()
            .filter_map(|d| match d {
                Value::Duration(d) => Some(*d),
                _ => None,
            })
            .collect();
        if delays.len() < 2 {
            return Err((
                "delays",
                format!("a reroute needs at least 2 paths, got {}", delays.len()),
            ));
        }
        let rates: Vec<Option<u64>> = match v.list("rates") {
            None => vec![None; delays.len()],
            Some(items) => items
                .iter()
                .map(|r| match r {
                    Value::Int(n) if *n > 0 => u64::try_from(*n).ok(),
                    _ => None,
                })
                .collect(),
        };
        if rates.len() != delays.len() {
            return Err((
                "rates",
                format!(
                    "{} rates for {} paths: give one per path (\"none\" for a pure delay line)",
                    rates.len(),
                    delays.len()
                ),
            ));
        }
        let buffer = match v.raw("buffer") {
            None => BufferSpec::Packets(DEFAULT_BUFFER_PACKETS),
            Some(RawValue::Str(s)) => parse_buffer(s).map_err(|e| ("buffer", e.to_string()))?,
            Some(other) => {
                return Err((
                    "buffer",
                    format!(
                        "expected a buffer such as \"100p\" or \"150KB\", got {}",
                        other.describe()
                    ),
                ));
            }
        };
        let paths = delays
            .iter()
            .zip(&rates)
            .map(|(&delay, &rate_bps)| PathSpec {
                delay,
                rate_bps,
                limit: rate_bps.map_or(QueueLimit::Packets(DEFAULT_BUFFER_PACKETS), |r| {
                    buffer.resolve(r, delay + delay)
                }),
            })
            .collect();
        let switching = match (v.duration("period"), v.list("schedule")) {
            (Some(_), Some(_)) => {
                return Err((
                    "schedule",
                    "give either `period` or `schedule`, not both".to_owned(),
                ));
            }
            (None, None) => {
                return Err((
                    "period",
                    "a reroute needs `period` or `schedule`".to_owned(),
                ));
            }
            (Some(period), None) => {
                if period == Dur::ZERO {
                    return Err(("period", "the period must be longer than 0".to_owned()));
                }
                Switching::Period {
                    period,
                    offset: v.duration("offset").unwrap_or(Dur::ZERO),
                }
            }
            (None, Some(items)) => {
                let mut entries = Vec::with_capacity(items.len());
                for item in items {
                    if let Value::List(pair) = item
                        && let [Value::Duration(t), Value::Int(p)] = pair.as_slice()
                    {
                        entries.push((Time::ZERO + *t, usize::try_from(*p).unwrap_or(usize::MAX)));
                    }
                }
                let s = Switching::Schedule(entries);
                if let Some(problem) = s.problem(delays.len()) {
                    return Err(("schedule", problem));
                }
                s
            }
        };
        let mode = match (v.choice("switch"), v.duration("blackout")) {
            (Some("blackout"), Some(gap)) => SwitchMode::Blackout(gap),
            (Some("blackout"), None) => {
                return Err((
                    "switch",
                    "switch = \"blackout\" needs `blackout`, how long after a switch arrivals are lost, e.g. blackout = \"50ms\"".to_owned(),
                ));
            }
            (switch, Some(_)) => {
                return Err((
                    "blackout",
                    format!(
                        "`blackout` applies only with switch = \"blackout\" (this reroute's switch is \"{}\")",
                        switch.unwrap_or("drain")
                    ),
                ));
            }
            (Some("drop_queue"), None) => SwitchMode::DropQueue,
            (Some("drop_path"), None) => SwitchMode::DropPath,
            (_, None) => SwitchMode::Drain,
        };
        if let Some(problem) = mode.problem(&switching, delays.len()) {
            return Err(("blackout", problem));
        }
        Ok(ElementSpec::Reroute {
            paths,
            switching,
            mode,
        })
    },
};
