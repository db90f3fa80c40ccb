//! Placeholder: the engine is being written.
use crate::{ConfigError, Results, SimConfig};

/// One simulation run.
#[derive(Debug)]
pub struct Simulation {
    cfg: SimConfig,
}

impl Simulation {
    /// Validate `cfg` and build the run.
    ///
    /// # Errors
    /// A [`ConfigError`] naming what is inconsistent.
    pub fn new(cfg: SimConfig) -> Result<Simulation, ConfigError> {
        Ok(Simulation { cfg })
    }

    /// Run to the end and return the results.
    #[must_use]
    pub fn run(self) -> Results {
        let _ = self.cfg;
        todo!("engine")
    }
}
