//! `delay_schedule`: an added delay that changes over time: steps, spikes of a given height and
//! width, and a sine or square oscillation, packets kept in order unless `reorder`.

use cclab_sim::Dur;
use cclab_sim::net::ElementSpec;
use cclab_sim::net::delay_schedule::{DelaySchedule, Oscillation, Spike, Wave};

use super::super::params::{Kind, Param};
use super::{Element, times};

const MAX: Dur = Dur::from_secs(100);

/// Delay over time.
pub(super) const DELAY_SCHEDULE: Element = Element {
    name: "delay_schedule",
    doc: "adds a delay that follows steps, spikes and an oscillation over time",
    source: "netem `delay` changed over time (tc qdisc change); ns-3 channel Delay attribute",
    params: &[
        Param {
            name: "base",
            kind: Kind::Duration { max: MAX },
            unit: "",
            default: "0ms",
            doc: "the delay before the first step",
            source: "—",
        },
        Param {
            name: "steps",
            kind: Kind::List {
                ty: "list",
                range: "[time, delay] pairs of durations, times increasing",
                item: times::pair,
            },
            unit: "",
            default: "[]",
            doc: "from each time on, the delay is the step's (until the next step)",
            source: "—",
        },
        Param {
            name: "spikes",
            kind: Kind::List {
                ty: "list",
                range: "[start, width, height] triples of durations, sorted by start",
                item: times::triple,
            },
            unit: "",
            default: "[]",
            doc: "extra delay of height over [start, start + width), on top of the steps",
            source: "—",
        },
        Param {
            name: "wave",
            kind: Kind::Choice(&["none", "sine", "square"]),
            unit: "",
            default: "none",
            doc: "an oscillation on top: sine A·sin(2πt/T), square +A then −A each half period (total clamped at 0)",
            source: "—",
        },
        Param {
            name: "amplitude",
            kind: Kind::Duration { max: MAX },
            unit: "",
            default: "0ms",
            doc: "A, half the oscillation's peak-to-peak swing",
            source: "—",
        },
        Param {
            name: "period",
            kind: Kind::Duration {
                max: Dur::from_secs(100_000),
            },
            unit: "",
            default: "1s",
            doc: "T, the oscillation's period",
            source: "—",
        },
        Param {
            name: "reorder",
            kind: Kind::Bool,
            unit: "",
            default: "false",
            doc: "false: when the delay drops a packet leaves right behind the previous one (FIFO, as link delay changes); true: each keeps its own delay and may overtake (netem tfifo, ns-3)",
            source: "sch_netem.c tfifo_enqueue (netem overtakes)",
        },
    ],
    build: |v| {
        let steps = times::rows(v.list("steps"))
            .into_iter()
            .map(|r| (times::at(r[0]), r[1]))
            .collect();
        let spikes = times::rows(v.list("spikes"))
            .into_iter()
            .map(|r| Spike {
                start: times::at(r[0]),
                width: r[1],
                height: r[2],
            })
            .collect();
        let wave = match v.choice("wave") {
            Some("sine") => Some(Wave::Sine),
            Some("square") => Some(Wave::Square),
            _ => None,
        };
        if wave.is_none()
            && let Some(key) = ["amplitude", "period"].into_iter().find(|k| v.has(k))
        {
            return Err((
                key,
                "an oscillation needs `wave = \"sine\"` or `\"square\"`".to_owned(),
            ));
        }
        let schedule = DelaySchedule {
            base: v.duration("base").unwrap_or(Dur::ZERO),
            steps,
            spikes,
            oscillation: wave.map(|wave| Oscillation {
                wave,
                amplitude: v.duration("amplitude").unwrap_or(Dur::ZERO),
                period: v.duration("period").unwrap_or(Dur::from_secs(1)),
            }),
        };
        if let Some(problem) = schedule.problem() {
            let key = if problem.contains("step") {
                "steps"
            } else if problem.contains("spike") {
                "spikes"
            } else {
                "period"
            };
            return Err((key, problem));
        }
        Ok(ElementSpec::DelaySchedule {
            schedule,
            reorder: v.bool("reorder").unwrap_or(false),
        })
    },
};
