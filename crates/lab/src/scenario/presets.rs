//! Topology presets: what `topology.preset` accepts, each preset's `[topology]` keys, and how a
//! scenario that names it is parsed.
//!
//! Contract: a preset is one module ([`super::dumbbell`], [`super::access`]) that declares one
//! [`Preset`] value (its name, `[topology]` keys and parser) and whose parser yields a type
//! implementing [`Network`] (what the resolved topology does: describe itself, give endpoint
//! RTTs, build the simulator input and the run plan). It is listed once in [`ALL`]; `parse`
//! dispatches on the name, the scenario calls the [`Network`] methods and never matches on the
//! preset, and `cclab list presets --params` and the README's preset tables print the
//! declarations. A test keeps each preset's declared keys and its raw table's
//! keys in step. The key types shared by the presets are here.

use std::any::Any;

use cclab_sim::{Dur, SimConfig};

use super::error::Source;
use super::params::{Entry, Kind, Param};
use super::{Overrides, RunPlan, Scenario, ScenarioError};

/// A resolved topology preset: what a scenario's topology does once its file is checked.
/// Implemented by one type per preset, in the preset's module.
pub trait Network: std::fmt::Debug + Send + Sync {
    /// The preset's name, as written in `topology.preset`.
    fn preset(&self) -> &'static str;
    /// A few lines for `cclab check`.
    fn describe(&self) -> String;
    /// Base (propagation) RTT of a scenario endpoint pair (a `[[flows]]` or `[[probes]]` entry)
    /// whose access links have one-way delay `access_delay`; `None` when the preset places its
    /// flows itself (a Flent test).
    fn endpoint_base_rtt(&self, access_delay: Dur) -> Option<Dur>;
    /// The simulator input of `scenario` (whose topology is `self`) run with `seed`.
    fn sim_config(&self, scenario: &Scenario, seed: u64) -> SimConfig;
    /// What a run of `scenario` with `seed` simulates and records ([`Scenario::run_plan`]).
    fn run_plan(&self, scenario: &Scenario, seed: u64, label: &str) -> RunPlan;
    /// The packets of a full flight over the preset's bottleneck (its BDP plus its buffer), the
    /// `flight` a `loss` element's `per_rtt` model takes when the file gives none.
    ///
    /// # Errors
    /// Why the preset cannot say (by default: it has no single bottleneck).
    fn full_flight_packets(&self, _scenario: &Scenario) -> Result<f64, String> {
        Err(format!(
            "preset `{}` has no single bottleneck to derive it from",
            self.preset()
        ))
    }
    /// A copy behind a new box.
    fn clone_box(&self) -> Box<dyn Network>;
    /// The value as [`Any`], so tests and tools can reach the preset's own type.
    fn as_any(&self) -> &dyn Any;
}

/// A topology preset: its declaration and its parser.
pub struct Preset {
    /// Name, description, source and `[topology]` keys.
    pub decl: Entry,
    /// Parse and check a whole scenario file that names this preset.
    pub(crate) parse: fn(&Source<'_>, &str, &Overrides) -> Result<Scenario, ScenarioError>,
}

super::params::declared_by_decl!(Preset);

/// Every topology preset, in the order `cclab list presets` prints them.
pub const ALL: &[&Preset] = &[
    &super::dumbbell::PRESET,
    &super::access::ACCESS,
    &super::access::RTT_FAIR,
    &super::wifi::WIFI_HYBRID,
    &super::wifi::WIFI,
    &super::quicly::QUICLY,
];

/// The run plan of a preset that places the scenario's own flows (no Flent test): flow `i` as
/// the series `kind(i)`, the probes as ICMP pings, sampled every `sample_interval` over the
/// whole duration.
pub(super) fn scenario_run_plan(
    scenario: &Scenario,
    sim: SimConfig,
    kind: impl Fn(usize) -> crate::record::SeriesKind,
) -> RunPlan {
    use crate::record::SeriesKind;
    use crate::suite::{SeriesSpec, Timing};
    let mut series: Vec<SeriesSpec> = scenario
        .flows
        .iter()
        .enumerate()
        .map(|(i, f)| SeriesSpec {
            name: f.name.clone(),
            kind: kind(i),
            dscp: 0,
            server: 0,
        })
        .collect();
    series.extend(scenario.probes.iter().map(|p| SeriesSpec {
        name: p.name.clone(),
        kind: SeriesKind::PingIcmp,
        dscp: 0,
        server: 0,
    }));
    RunPlan {
        sim,
        series,
        timing: Timing {
            length: scenario.duration,
            delay: Dur::ZERO,
            step: scenario.sample_interval,
            start_jitter: Dur::ZERO,
        },
        test: None,
    }
}

/// The preset called `name`.
#[must_use]
pub fn find(name: &str) -> Option<&'static Preset> {
    ALL.iter().copied().find(|p| p.decl.name == name)
}

pub(super) const RATE: Kind = Kind::Other {
    ty: "rate",
    range: "bit/s, or e.g. \"100Mbit\", \"1.5Gbit\"",
    quoted: true,
};
pub(super) const DURATION: Kind = Kind::Duration {
    max: cclab_sim::Dur::MAX,
};
pub(super) const BUFFER: Kind = Kind::Other {
    ty: "buffer",
    range: "\"1bdp\", \"333p\", \"50ms\", \"500KB\", {packets = 333}, …",
    quoted: true,
};
pub(super) const QDISC: Kind = Kind::Other {
    ty: "qdisc",
    range: "a name (`cclab list qdiscs`) or a table with `kind` and parameters",
    quoted: true,
};
pub(super) const PROBABILITY: Kind = Kind::Float {
    min: 0.0,
    min_open: false,
    max: 1.0,
    max_open: true,
};
pub(super) const PACKETS: Kind = Kind::Int {
    min: 1,
    max: 1_000_000,
};

pub(super) const fn key(
    name: &'static str,
    kind: Kind,
    default: &'static str,
    doc: &'static str,
    source: &'static str,
) -> Param {
    Param {
        name,
        kind,
        unit: "",
        default,
        doc,
        source,
    }
}

pub(super) const NIC_RATE: Param = key(
    "nic_rate",
    RATE,
    "10Gbit",
    "every host's NIC line rate",
    "a 10 GbE host",
);
pub(super) const DRIVER_QUEUE: Param = Param {
    unit: "packets",
    ..key(
        "driver_queue",
        PACKETS,
        "1000",
        "NIC driver queue of every host",
        "Linux `txqueuelen` = 1000",
    )
};
