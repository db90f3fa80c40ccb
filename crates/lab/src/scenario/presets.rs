//! Topology presets: what `topology.preset` accepts, each preset's `[topology]` keys, and how a
//! scenario that names it is parsed.
//!
//! Contract: a preset is one [`Preset`] value, declared in its own module ([`super::dumbbell`],
//! [`super::access`]) next to the code that checks its table, and listed once in [`ALL`];
//! `parse` dispatches on the name, and `cclab list presets --params` and the README's preset
//! tables print the declarations. A test keeps each preset's declared keys and its raw table's
//! keys in step. The key types shared by the presets are here.

use super::error::Source;
use super::params::{Declared, Entry, Kind, Param};
use super::{Overrides, Scenario, ScenarioError};

/// A topology preset: its declaration and its parser.
pub struct Preset {
    /// Name, description, source and `[topology]` keys.
    pub decl: Entry,
    /// Parse and check a whole scenario file that names this preset.
    pub(crate) parse: fn(&Source<'_>, &str, &Overrides) -> Result<Scenario, ScenarioError>,
}

impl std::fmt::Debug for Preset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Preset")
            .field("name", &self.decl.name)
            .finish_non_exhaustive()
    }
}

impl Declared for Preset {
    fn name(&self) -> &'static str {
        self.decl.name
    }
    fn doc(&self) -> &'static str {
        self.decl.doc
    }
    fn source(&self) -> &'static str {
        self.decl.source
    }
    fn params(&self) -> &'static [Param] {
        self.decl.params
    }
}

/// Every topology preset, in the order `cclab list presets` prints them.
pub const ALL: &[&Preset] = &[
    &super::dumbbell::PRESET,
    &super::access::ACCESS,
    &super::access::RTT_FAIR,
];

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
