//! Running a study: each run simulated and turned into a [`RunRecord`], runs in parallel across
//! threads, results kept in the [`Store`], resumable.
//!
//! Contract: [`execute`] writes the manifest, checks every run of the study (or of its shard)
//! in the store, runs exactly the missing and corrupt ones (in parallel on `jobs` threads; each
//! record is written as soon as its run ends) and reports what it skipped and redid. A run's
//! record depends only on its spec and seed, never on the thread count or order, so an
//! interrupted and resumed study ends with the same store as an uninterrupted one. Shard `i` of
//! `n` (1-based) holds the runs whose index is `i − 1` modulo `n`. Runs are resolved from their
//! index one at a time ([`Study::run`], [`Study::config`]): the manifest is streamed to its file
//! and the runs to do are kept as indices, so memory does not grow with the study's size beyond
//! a word per run to do.

use std::time::{Duration, Instant};

use cclab_sim::Simulation;
use rayon::prelude::*;
use serde::Serialize;

use super::store::{RunState, Store, write_atomic_with};
use super::{RunSpec, Study};
use crate::record::{FctRecord, RECORD_FORMAT, RunRecord, SimInfo};
use crate::scenario::RunPlan;
use crate::suite;

/// How to run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// Worker threads (`None`: all cores); capped at the number of runs to do. `Some(0)` is
    /// taken as one thread (the command line refuses it).
    pub jobs: Option<usize>,
    /// Run only shard `(i, n)`, 1-based `i`.
    pub shard: Option<(usize, usize)>,
    /// Stop after this many runs have been done (to test interruption).
    pub max_runs: Option<usize>,
}

/// Progress events.
#[derive(Clone, Debug)]
pub enum Event {
    /// Runs are about to start.
    Start {
        /// Runs to do now.
        pending: usize,
    },
    /// A run ended and its record is stored.
    Done {
        /// Its configuration's label.
        config: String,
        /// Its repetition.
        rep: u32,
        /// Wall time it took.
        wall: Duration,
    },
}

/// What [`execute`] did.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// Runs in the study.
    pub total: usize,
    /// Runs in this shard (= total without sharding).
    pub selected: usize,
    /// Valid results reused.
    pub skipped: usize,
    /// Runs that had no result.
    pub missing: usize,
    /// Runs whose result was corrupt: (id, reason); they were redone.
    pub corrupt: Vec<(String, String)>,
    /// Runs done now.
    pub ran: usize,
    /// Wall time of the whole execution.
    pub wall: Duration,
    /// Time spent inside the simulator, summed over runs.
    pub sim_time: Duration,
    /// Time spent per run outside the simulator (building, converting, storing), summed.
    pub overhead_time: Duration,
    /// Runs not done because `max_runs` was reached.
    pub left: usize,
    /// Worker threads used: `jobs` (or the number of cores), but never more than the runs to
    /// do, and at least one.
    pub threads: usize,
    /// The cclab whose results the store held before, when it was another model than this
    /// study's ([`Store::other_model`]): none of them was reused, their files stay in `runs/`.
    pub replaced_model: Option<String>,
}

/// An error that stops a study.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The store could not be written.
    #[error("{path}: {source}")]
    Io {
        /// What was being written.
        path: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// The simulator, or the check of its scenario, refused a configuration (a bug: studies
    /// are checked when parsed).
    #[error("run {id} ({config}): {message}")]
    Sim {
        /// Run id.
        id: String,
        /// Its configuration.
        config: String,
        /// The simulator's message.
        message: String,
    },
    /// Bad shard selection.
    #[error("shard {0}/{1}: shards are numbered 1..=N with N ≥ 1")]
    Shard(usize, usize),
}

/// The manifest: the study definition and its runs.
#[derive(Serialize)]
struct Manifest<'a> {
    study: &'a str,
    model: &'a str,
    origin: &'a str,
    definition: &'a str,
    record_format: u32,
    repetitions: u32,
    runs: ManifestRuns<'a>,
}

/// The manifest's runs, serialised one at a time as the study resolves them.
struct ManifestRuns<'a>(&'a Study);

impl Serialize for ManifestRuns<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let study = self.0;
        s.collect_seq(study.run_specs().map(|r| ManifestRun {
            index: r.index,
            config: study.config_key(r.config).label,
            id: r.id,
            rep: r.rep,
            seed: r.seed,
        }))
    }
}

#[derive(Serialize)]
struct ManifestRun {
    index: usize,
    id: String,
    config: String,
    rep: u32,
    seed: u64,
}

/// Write `manifest.json` for `study` in `store` (streamed: the runs are resolved one at a
/// time).
///
/// # Errors
/// I/O errors.
pub fn write_manifest(study: &Study, store: &Store) -> Result<(), RunError> {
    let m = Manifest {
        study: &study.name,
        model: &study.model,
        origin: &study.origin,
        definition: &study.text,
        record_format: RECORD_FORMAT,
        repetitions: study.repetitions,
        runs: ManifestRuns(study),
    };
    let path = store.dir().join("manifest.json");
    write_atomic_with(&path, |w| {
        serde_json::to_writer_pretty(&mut *w, &m).map_err(std::io::Error::from)?;
        w.write_all(b"\n")
    })
    .map_err(|source| RunError::Io {
        path: path.display().to_string(),
        source,
    })
}

/// Check a shard selection.
///
/// # Errors
/// [`RunError::Shard`] unless `1 ≤ i ≤ n`.
pub fn check_shard(shard: Option<(usize, usize)>) -> Result<(), RunError> {
    in_shard(0, shard).map(|_| ())
}

/// Whether run `index` belongs to shard `(i, n)` (every run does without sharding).
///
/// # Errors
/// [`RunError::Shard`] unless `1 ≤ i ≤ n`.
pub fn in_shard(index: usize, shard: Option<(usize, usize)>) -> Result<bool, RunError> {
    match shard {
        None => Ok(true),
        Some((i, n)) if n >= 1 && (1..=n).contains(&i) => Ok(index % n == i - 1),
        Some((i, n)) => Err(RunError::Shard(i, n)),
    }
}

/// The runs of shard `(i, n)`.
///
/// # Errors
/// [`RunError::Shard`] unless `1 ≤ i ≤ n`.
pub fn select(runs: Vec<RunSpec>, shard: Option<(usize, usize)>) -> Result<Vec<RunSpec>, RunError> {
    check_shard(shard)?;
    Ok(runs
        .into_iter()
        .filter(|r| in_shard(r.index, shard).unwrap_or(false))
        .collect())
}

/// Run the study's missing and corrupt runs; see the module contract.
///
/// # Errors
/// I/O errors writing the store, a simulator error (a bug), a bad shard.
pub fn execute(
    study: &Study,
    store: &Store,
    opts: &Options,
    progress: &(dyn Fn(Event) + Sync),
) -> Result<Outcome, RunError> {
    let t0 = Instant::now();
    check_shard(opts.shard)?;
    let replaced_model = store.other_model(&study.model);
    write_manifest(study, store)?;
    let mut out = Outcome {
        total: study.run_count(),
        replaced_model,
        ..Outcome::default()
    };
    // Indices of the runs to do.
    let mut pending: Vec<usize> = Vec::new();
    for r in study.run_specs() {
        if !in_shard(r.index, opts.shard)? {
            continue;
        }
        out.selected += 1;
        match store.state(&r.id) {
            RunState::Valid => out.skipped += 1,
            RunState::Missing => {
                out.missing += 1;
                pending.push(r.index);
            }
            RunState::Corrupt(why) => {
                out.corrupt.push((r.id, why));
                pending.push(r.index);
            }
        }
    }
    if let Some(m) = opts.max_runs
        && pending.len() > m
    {
        out.left = pending.len() - m;
        pending.truncate(m);
    }
    progress(Event::Start {
        pending: pending.len(),
    });
    let work = |&i: &usize| -> Result<(Duration, Duration), RunError> {
        let start = Instant::now();
        let r = &study.run(i);
        let (rec, sim) = run_one(study, r)?;
        store.write(&rec).map_err(|source| RunError::Io {
            path: store.run_path(&r.id).display().to_string(),
            source,
        })?;
        let wall = start.elapsed();
        progress(Event::Done {
            config: rec.config,
            rep: r.rep,
            wall,
        });
        Ok((sim, wall.saturating_sub(sim)))
    };
    // No more threads than runs: a pool of idle threads costs time and memory to start.
    // Emulated runs take the machine in real time: one at a time.
    let threads = if study.backend == super::Backend::Emulate {
        1
    } else {
        opts.jobs
            .unwrap_or_else(|| {
                std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
            })
            .min(pending.len())
            .max(1)
    };
    out.threads = threads;
    let results: Vec<Result<(Duration, Duration), RunError>> = match threads {
        1 => pending.iter().map(work).collect(),
        threads => {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .map_err(|e| RunError::Io {
                    path: "thread pool".into(),
                    source: std::io::Error::other(e.to_string()),
                })?;
            pool.install(|| pending.par_iter().map(work).collect())
        }
    };
    for r in results {
        let (sim, overhead) = r?;
        out.ran += 1;
        out.sim_time += sim;
        out.overhead_time += overhead;
    }
    out.wall = t0.elapsed();
    Ok(out)
}

/// Simulate (or emulate, as the study's backend says) one run and build its record; also
/// returns the time spent in the simulator.
///
/// # Errors
/// [`RunError::Sim`] if the simulator (or the emulator) refuses the configuration.
pub fn run_one(study: &Study, r: &RunSpec) -> Result<(RunRecord, Duration), RunError> {
    let cfg = study.run_config(r).map_err(|e| RunError::Sim {
        id: r.id.clone(),
        config: study.config_key(r.config).label,
        message: e.to_string(),
    })?;
    let plan = cfg.scenario.run_plan(r.seed, &cfg.label);
    let refused = |e: String| RunError::Sim {
        id: r.id.clone(),
        config: cfg.label.clone(),
        message: e,
    };
    let start = Instant::now();
    let results = match study.backend {
        super::Backend::Simulate => Simulation::new(plan.sim.clone())
            .map_err(|e| refused(e.to_string()))?
            .run(),
        super::Backend::Emulate => {
            cclab_emu::emulate(&plan.sim, &cclab_emu::EmuOptions::default())
                .map_err(|e| refused(e.to_string()))?
                .results
        }
    };
    let sim_time = start.elapsed();
    let rec = record_of(
        plan,
        &results,
        RecordKey {
            id: r.id.clone(),
            study: study.name.clone(),
            config: cfg.label.clone(),
            levels: cfg.levels.clone(),
            rep: r.rep,
            seed: r.seed,
            spec: r.spec.clone(),
        },
        study.measure_last,
    );
    Ok((rec, sim_time))
}

/// What names a record: its run id, study, configuration, levels, repetition, seed and spec.
#[derive(Clone, Debug)]
pub struct RecordKey {
    /// The run id.
    pub id: String,
    /// The study's name.
    pub study: String,
    /// The configuration's label.
    pub config: String,
    /// The configuration's levels.
    pub levels: Vec<(String, String)>,
    /// The repetition.
    pub rep: u32,
    /// The run's seed.
    pub seed: u64,
    /// The canonical spec.
    pub spec: serde_json::Value,
}

/// The record of a run of `plan` that gave `results` (simulated or emulated), with the
/// `window_*` metrics over the last `measure_last` if set.
#[must_use]
pub fn record_of(
    plan: RunPlan,
    results: &cclab_sim::Results,
    key: RecordKey,
    measure_last: Option<cclab_sim::Dur>,
) -> RunRecord {
    let RunPlan {
        sim: sim_cfg,
        series: specs,
        timing,
        test,
    } = plan;
    let controller = sim_cfg
        .flows
        .first()
        .map_or_else(String::new, |f| f.cc.name().to_owned());
    let departure = suite::Departure::of(&sim_cfg.flows, sim_cfg.duration);
    // The rate the window metrics are a percentage of: the first monitored link's (the
    // dumbbell's and the quicly preset's bottleneck).
    let bottleneck_bps = sim_cfg
        .links
        .iter()
        .find(|l| l.monitor)
        .and_then(|l| l.rate_bps)
        .unwrap_or(0);
    let series = suite::series_records(results, &specs, &timing, &controller);
    let mut metrics = suite::metrics(&series, results, departure.as_ref());
    if let Some(w) = measure_last {
        suite::window_metrics(
            &mut metrics,
            results,
            bottleneck_bps,
            results.duration_s,
            w.as_secs_f64(),
        );
    }
    RunRecord {
        format: RECORD_FORMAT,
        id: key.id,
        study: key.study,
        config: key.config,
        levels: key.levels,
        rep: key.rep,
        seed: key.seed,
        spec: key.spec,
        test,
        metrics,
        x_values: suite::x_values(&timing),
        series,
        capacity: suite::capacity_records(results, &timing),
        delay: suite::delay_records(results, &timing),
        fct: FctRecord::of(results),
        wifi: crate::record::WifiRecord::of(results),
        sim: SimInfo {
            duration_s: results.duration_s,
            events: results.engine.events,
            data_packets_sent: results.engine.data_packets_sent,
        },
    }
}
