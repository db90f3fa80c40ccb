//! cclab-lab: experiments on top of the simulator — scenario files, result output and reports.
//!
//! Contract: this crate turns human-written inputs (TOML scenario files, see [`scenario`]) into the
//! simulator's plain [`cclab_sim::SimConfig`], and the simulator's [`cclab_sim::Results`] into
//! files and tables for humans and analysis tools (see [`output`]). It does no simulation itself
//! and never panics on user input; every problem is an error value that names where it is.

pub mod analysis;
pub mod bench;
pub mod catalog;
pub mod curves;
pub mod flent;
pub mod input;
pub mod output;
pub mod plot;
pub mod record;
pub mod report;
pub mod scenario;
pub mod stats;
pub mod study;
pub mod suite;
pub mod tracegen;
pub mod units;
pub mod validate;

pub use scenario::{Overrides, Scenario, ScenarioError, load, load_with, parse};

/// The built-in demo scenario (`scenarios/demo.toml`), embedded at build time.
pub const DEMO_TOML: &str = include_str!("../../../scenarios/demo.toml");

/// The origin used in error messages for [`DEMO_TOML`].
pub const DEMO_ORIGIN: &str = "builtin:scenarios/demo.toml";

/// Parse the built-in demo scenario.
///
/// # Errors
/// Only if the embedded file is broken (a test checks it is not).
pub fn demo(overrides: &Overrides) -> Result<Scenario, ScenarioError> {
    parse(DEMO_TOML, DEMO_ORIGIN, overrides)
}

/// The built-in demo study (`scenarios/demo_study.toml`), embedded at build time.
pub const DEMO_STUDY_TOML: &str = include_str!("../../../scenarios/demo_study.toml");

/// The origin used in error messages for [`DEMO_STUDY_TOML`].
pub const DEMO_STUDY_ORIGIN: &str = "builtin:scenarios/demo_study.toml";

/// Parse the built-in demo study.
///
/// # Errors
/// Only if the embedded file is broken (a test checks it is not).
pub fn demo_study() -> Result<study::Study, ScenarioError> {
    study::parse(
        DEMO_STUDY_TOML,
        DEMO_STUDY_ORIGIN,
        std::path::Path::new("."),
    )
}
