//! Study files: a base scenario, a factorial grid over any of its fields, repetitions with
//! derived seeds, and what to analyse.
//!
//! Contract: [`parse`] / [`load`] either return a [`Study`] whose every configuration has already
//! been checked as a scenario (so running it cannot fail on input), or a [`ScenarioError`] naming
//! the file, line and field of the problem — for a problem inside one configuration, the grid
//! level that caused it. The configurations are counted before anything is expanded and checked
//! one at a time; a [`Study`] holds only the base scenario and the axes, and resolves
//! configuration `c` ([`Study::config`]) and run `i` ([`Study::run`]) from their index over the
//! grid's mixed radix when asked, so no caller needs every configuration in memory at once.
//! [`Study::run_specs`] yields the runs in a fixed order (configuration-major, then
//! repetition), each with its id: the hex SHA-256 of the canonical spec (the configuration's
//! scenario table with keys sorted, without `name`/`description`, with the run's seed), the
//! record format and the model version ([`crate::record::model_version`]), so neither a changed
//! definition nor a build whose results differ ever reuses a result. A run resolves its
//! configuration with its own seed ([`Study::run_config`]): what a scenario draws when it is
//! resolved (Poisson arrivals, `size_cdf` sizes) differs between repetitions like everything the
//! simulator draws.
//!
//! # File format
//!
//! ```toml
//! name = "bbr_tas"                 # names the output directory
//! description = "…"
//! seed = 1                         # study seed; run seeds derive from it and the repetition
//! repetitions = 10                 # ≥ 1
//! measure_last = "50s"             # optional: the `window_*` metrics cover the last 50 s of
//!                                  # each run (at most every configuration's duration)
//! backend = "simulate"             # or "emulate": the kernel's TCP through the same elements in
//!                                  # real time (`cclab emulate`), one run at a time
//!
//! [base]                           # a scenario (any preset; see `scenario`), or
//! # base = "other.toml"            # a scenario file, relative to the study file
//!
//! [grid]                           # axes; every combination of levels is a configuration
//! test.name = ["tcp_upload", "rrul"]          # a field path and its values
//! tcp = [                                      # a table path: each level replaces the table
//!   { controller = "cubic" },
//!   { controller = "bbr_tas", startup_shift = 8, steady_shift = 8, label = "tas 8/8" },
//! ]
//!
//! [analysis]
//! baseline = { tcp = "bbr3" }      # the level (by label) others are compared with, per axis
//! metrics = ["upload_mbps", "ping_p50_ms"]     # default: all (`cclab list metrics`)
//! plots = ["box", "cdf", "ellipse", "qq", "fairness", "timeseries"]   # default: all
//! split_by = "test.name"           # one figure per level of this axis (default: first axis
//!                                  # when there are several)
//! flent = true                     # a .flent.gz per run of a Flent-equivalent test
//! png = true                       # PNG next to every SVG plot
//! # a table of "baseline → treatment" cells (`pairs.md` and the report): rows = levels of
//! # `rows`, columns = the other axes' level combinations, one table per level of `split`
//! pair = { axis = "flows.0.controller", from = "reno", to = "cubic", rows = "topology.profile",
//!          split = "topology.aqm", metric = "window_goodput_pct", statistic = "median" }
//! pairs = [ { … }, { … } ]         # more paired tables, after `pair`'s; `statistic` may also be
//!                                  # "mean" or, for window_others_pct / window_first_pct,
//!                                  # "mean_of_position_medians"
//! # metric against a numeric axis (`curves.md`, `curves.csv`, `plots/curve<i>_*` and the
//! # report): x = the level's value (numbers, or strings that parse as numbers), y = the median
//! # over the repetitions with a 25th–75th percentile band, one line per level of `series`;
//! # `compare` (optional): its levels side by side (separate figures, columns of the threshold
//! # table); every other axis: one figure per combination of its levels; `threshold`
//! # (optional): per line, the smallest x from which the median stays ≥ threshold at every
//! # larger x (a dashed line in the figure, a table in curves.md)
//! curves = [ { x = "flows.0.host.cpu_share", metric = "window_goodput_pct",
//!              series = "flows.0.controller", threshold = 90.0, compare = "topology.rate" } ]
//! ```
//!
//! A level's label is its value as written (`rrul`, `25Mbit`), or for a table level its `label`
//! key (removed before the table is applied) or else `key=value` pairs. Array elements are
//! addressed by index in paths (`flows.0.controller`), or all at once by `*`
//! (`flows."*".controller = ["cubic", "bbr3"]`: every flow's controller). Seeds: repetition `r` uses
//! [`derive_seed`]`(seed, r)` in every configuration (common random numbers: differences
//! between configurations are not confounded with seed differences).

pub mod claim;
pub mod curve;
pub mod run;
pub mod store;

use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use cclab_sim::Dur;
use serde::Deserialize;
use sha2::{Digest, Sha256};
use toml::Spanned;

use crate::record::RECORD_FORMAT;
use crate::scenario::error::{FileKind, Source, clip, span_of, unknown_choice};
use crate::scenario::{self, Overrides, Scenario, ScenarioError};
use crate::suite::METRICS;
pub use claim::Claim;
pub use curve::Curve;

/// Most repetitions a study may ask for (a guard against typos).
pub const MAX_REPETITIONS: u32 = 10_000;
/// Most configurations a grid may expand to.
pub const MAX_CONFIGS: usize = 100_000;
/// Most runs a study may have (configurations × repetitions): every run is a record file in
/// the store, an entry of the manifest and a spec held in memory while the study runs, so a
/// typo in a grid could otherwise ask for billions. 100 000 runs of one second each are more
/// than a day of CPU time.
pub const MAX_RUNS: usize = 100_000;
/// Plot kinds `analysis.plots` may name.
pub const PLOTS: &[&str] = &["box", "cdf", "ellipse", "qq", "fairness", "timeseries"];

/// One axis of the grid.
#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    /// Dotted path of the field (or table) it sets.
    pub path: String,
    /// Its levels, in file order.
    pub levels: Vec<Level>,
}

/// One level of an axis.
#[derive(Clone, Debug, PartialEq)]
pub struct Level {
    /// Label used in tables, plots and file names.
    pub label: String,
    /// The value set at the axis path.
    pub value: toml::Value,
}

/// Where a configuration sits in the grid (cheap: nothing is resolved).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigKey {
    /// `axis=label` pairs joined by spaces (`base` when there is no grid).
    pub label: String,
    /// (axis path, level label) per axis, in axis order.
    pub levels: Vec<(String, String)>,
    /// Index of the level per axis.
    pub level_index: Vec<usize>,
}

/// One configuration: a combination of levels, checked as a scenario.
#[derive(Clone, Debug)]
pub struct Config {
    /// `axis=label` pairs joined by spaces (`base` when there is no grid).
    pub label: String,
    /// (axis path, level label) per axis, in axis order.
    pub levels: Vec<(String, String)>,
    /// Index of the level per axis.
    pub level_index: Vec<usize>,
    /// The scenario table with the levels applied.
    pub table: toml::Table,
    /// The checked scenario.
    pub scenario: Scenario,
}

/// What the analysis computes and draws.
#[derive(Clone, Debug, PartialEq)]
pub struct Analysis {
    /// (axis path, level label): configurations are compared with the one that has these
    /// levels and the same levels on the other axes. Empty: no comparisons.
    pub baseline: Vec<(String, String)>,
    /// Metrics reported (names from [`METRICS`]).
    pub metrics: Vec<String>,
    /// Plot kinds drawn (names from [`PLOTS`]).
    pub plots: Vec<String>,
    /// Axis whose levels get separate figures.
    pub split_by: Option<String>,
    /// Write a `.flent.gz` per run of a Flent-equivalent test.
    pub flent: bool,
    /// Write PNG next to every SVG.
    pub png: bool,
    /// The paired tables ("baseline → treatment" per row and column), in file order:
    /// `analysis.pair` (one table) then `analysis.pairs` (a list).
    pub pairs: Vec<Pair>,
    /// `analysis.curves`, in file order.
    pub curves: Vec<Curve>,
}

/// `analysis.pair`: a table whose cells pair the value of `metric` at level `from` of axis
/// `axis` with its value at level `to`, the other levels being equal; rows are the levels of
/// axis `rows`, columns the combinations of the remaining axes' levels (in file order), one
/// table per level of axis `split` (if given). Each value is the `statistic` of the metric over
/// the configuration's repetitions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pair {
    /// The axis whose two levels are paired.
    pub axis: String,
    /// Its baseline level (label).
    pub from: String,
    /// Its treatment level (label).
    pub to: String,
    /// The axis laid out as rows.
    pub rows: String,
    /// The axis with one table per level.
    pub split: Option<String>,
    /// The metric (from [`METRICS`]).
    pub metric: String,
    /// One of [`PAIR_STATISTICS`].
    pub statistic: String,
}

/// Statistics a paired table may show: over the repetitions, the median or the mean of the
/// metric, or for a per-flow metric ([`POSITION_METRICS`]) [`POSITION_MEDIANS`].
pub const PAIR_STATISTICS: &[&str] = &["median", "mean", POSITION_MEDIANS];
/// The mean over flow positions of each position's median over the repetitions
/// ([`crate::stats::mean_of_position_medians`]; the ABBA evaluation's summary of a crowd of
/// flows): with `window_others_pct` the positions are flows 1, 2, … (their
/// `window_flow_pct.<i>`), with `window_first_pct` flow 0 alone (its median).
pub const POSITION_MEDIANS: &str = "mean_of_position_medians";
/// The metrics [`POSITION_MEDIANS`] applies to.
pub const POSITION_METRICS: &[&str] = &["window_others_pct", "window_first_pct"];

/// A checked study.
#[derive(Clone, Debug)]
pub struct Study {
    /// Study name (a directory name).
    pub name: String,
    /// Free text.
    pub description: Option<String>,
    /// Where it came from.
    pub origin: String,
    /// The study file as written.
    pub text: String,
    /// Study seed.
    pub seed: u64,
    /// Repetitions per configuration.
    pub repetitions: u32,
    /// The measurement window: the `window_*` metrics cover the last this much of each run
    /// (none: no window metrics).
    pub measure_last: Option<Dur>,
    /// What runs the study: the simulator, or the emulator (real time, kernel TCP).
    pub backend: Backend,
    /// Grid axes in file order (read them with [`Study::axes`]; private so that every
    /// configuration stays the checked one).
    axes: Vec<Axis>,
    /// The base scenario table the levels are applied to.
    base: toml::Table,
    /// Where files the scenario names (rate traces) are found: the base file's directory.
    dir: Option<PathBuf>,
    /// Analysis settings.
    pub analysis: Analysis,
    /// `[[claims]]`, in file order ([`claim`]).
    pub claims: Vec<Claim>,
    /// The model version its run ids carry ([`crate::record::model_version`]): results of
    /// another model are never reused (a test may set another to stand for an older build).
    pub model: String,
}

/// What runs a study's runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Backend {
    /// The simulator (deterministic, in parallel).
    #[default]
    Simulate,
    /// The emulator: the kernel's TCP through the simulator's elements in real time
    /// (`cclab_emu::emulate`), one run at a time.
    Emulate,
}

/// One run of a study.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSpec {
    /// Position in [`Study::run_specs`] (and the argument of [`Study::run`]).
    pub index: usize,
    /// Its configuration's index (see [`Study::config`]).
    pub config: usize,
    /// Repetition, 0-based.
    pub rep: u32,
    /// The run's seed.
    pub seed: u64,
    /// Hex SHA-256 of the canonical spec (see the module documentation).
    pub id: String,
    /// The canonical spec.
    pub spec: serde_json::Value,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStudy {
    name: Spanned<String>,
    description: Option<String>,
    seed: Option<u64>,
    repetitions: Option<Spanned<i64>>,
    measure_last: Option<Spanned<crate::units::TimeValue>>,
    backend: Option<Spanned<String>>,
    base: Spanned<toml::Value>,
    grid: Option<Spanned<toml::Table>>,
    analysis: Option<Spanned<RawAnalysis>>,
    claims: Option<Vec<Spanned<claim::RawClaim>>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAnalysis {
    baseline: Option<Spanned<toml::Table>>,
    metrics: Option<Vec<Spanned<String>>>,
    plots: Option<Vec<Spanned<String>>>,
    split_by: Option<Spanned<String>>,
    flent: Option<bool>,
    png: Option<bool>,
    pair: Option<Spanned<RawPair>>,
    pairs: Option<Vec<Spanned<RawPair>>>,
    curves: Option<Vec<Spanned<curve::RawCurve>>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPair {
    axis: Spanned<String>,
    from: Spanned<String>,
    to: Spanned<String>,
    rows: Spanned<String>,
    split: Option<Spanned<String>>,
    metric: Spanned<String>,
    statistic: Option<Spanned<String>>,
}

/// Read and check the study file at `path`.
///
/// # Errors
/// [`ScenarioError::Read`] if it (or its base file) cannot be read, [`ScenarioError::Invalid`]
/// for anything wrong in it.
pub fn load(path: impl AsRef<Path>) -> Result<Study, ScenarioError> {
    let path = path.as_ref();
    let text = crate::input::read_text(path).map_err(|source| ScenarioError::Read {
        path: path.to_owned(),
        source,
    })?;
    parse(
        &text,
        &path.display().to_string(),
        path.parent().unwrap_or(Path::new(".")),
    )
}

/// Where a configuration's scenario table came from, to point errors at it.
struct BaseSource {
    text: String,
    origin: String,
    /// Path of the base table inside `text` (`["base"]` inline, empty for a file).
    prefix: Vec<String>,
}

/// Check study text. `origin` names it in messages; `dir` resolves a `base` file path.
///
/// # Errors
/// A [`ScenarioError`] for the first problem found; for problems inside configurations, how
/// many configurations are invalid and up to ten distinct problems in one message (e.g. every
/// controller the grid names that does not exist), each at the grid level that caused it or,
/// for a base field that only some levels make invalid, with a configuration that has it.
pub fn parse(text: &str, origin: &str, dir: &Path) -> Result<Study, ScenarioError> {
    let src = Source { text, origin };
    let raw: RawStudy = toml::from_str(text).map_err(|e| {
        src.wrong_kind(FileKind::Study)
            .unwrap_or_else(|| src.toml_error(&e))
    })?;
    let name = raw.name.get_ref().clone();
    if !scenario::valid_name(&name) {
        return Err(src.error(
            Some(raw.name.span()),
            "name",
            scenario::name_problem("study", &name),
        ));
    }
    let repetitions = match &raw.repetitions {
        None => 1,
        Some(r) => match u32::try_from(*r.get_ref()) {
            Ok(n) if (1..=MAX_REPETITIONS).contains(&n) => n,
            _ => {
                return Err(src.error(
                    Some(r.span()),
                    "repetitions",
                    format!(
                        "must be between 1 and {MAX_REPETITIONS}, got {}",
                        r.get_ref()
                    ),
                ));
            }
        },
    };
    let (base_table, base_src) = match raw.base.get_ref() {
        toml::Value::Table(t) => (
            t.clone(),
            BaseSource {
                text: text.to_owned(),
                origin: origin.to_owned(),
                prefix: vec!["base".to_owned()],
            },
        ),
        toml::Value::String(file) => {
            let path: PathBuf = dir.join(file);
            let btext = crate::input::read_text(&path).map_err(|e| {
                src.error(
                    Some(raw.base.span()),
                    "base",
                    format!("cannot read the base scenario `{}`: {e}", path.display()),
                )
            })?;
            let bsrc = Source {
                text: &btext,
                origin: &path.display().to_string(),
            };
            let t: toml::Table = toml::from_str(&btext).map_err(|e| bsrc.toml_error(&e))?;
            (
                t,
                BaseSource {
                    origin: path.display().to_string(),
                    text: btext,
                    prefix: Vec::new(),
                },
            )
        }
        _ => {
            return Err(src.error(
                Some(raw.base.span()),
                "base",
                "must be a table (an inline scenario) or a string (a scenario file)",
            ));
        }
    };
    let axes = match &raw.grid {
        None => Vec::new(),
        Some(g) => {
            let mut axes = Vec::new();
            collect_axes(&src, g.get_ref(), &mut Vec::new(), &mut axes)?;
            count_configs(&src, &raw, &axes, repetitions)?;
            let axes = axes
                .into_iter()
                .map(|a| a.levels(&src))
                .collect::<Result<Vec<Axis>, _>>()?;
            if axes.is_empty() {
                return Err(src.error(
                    Some(g.span()),
                    "grid",
                    "the grid is empty: give at least one axis, e.g. `tcp.controller = [\"cubic\", \
                     \"bbr3\"]` (or leave [grid] out to run the base alone)",
                ));
            }
            if let Some(a) = axes.iter().find(|a| a.path == "seed") {
                return Err(src.error(
                    span_of(src.text, &["grid", "seed"]),
                    format!("grid.{}", a.path),
                    "`seed` cannot be a grid axis: every run's seed derives from the study's \
                     `seed` and its repetition (common random numbers across configurations); \
                     use `repetitions` for more seeds, or the study's `seed` for other ones",
                ));
            }
            axes
        }
    };
    check_configs(&src, &base_src, &base_table, &axes)?;
    let analysis = resolve_analysis(&src, raw.analysis.as_ref(), &axes)?;
    let metric_names: Vec<&str> = METRICS.iter().map(|(m, _)| *m).collect();
    let claims = claim::resolve_all(
        &src,
        raw.claims.as_deref().unwrap_or(&[]),
        &axes,
        &metric_names,
    )?;
    let backend = match raw
        .backend
        .as_ref()
        .map(|b| (b.get_ref().as_str(), b.span()))
    {
        None | Some(("simulate", _)) => Backend::Simulate,
        Some(("emulate", _)) => Backend::Emulate,
        Some((other, span)) => {
            return Err(src.error(
                Some(span),
                "backend",
                format!("unknown backend `{other}`, expected `simulate` or `emulate`"),
            ));
        }
    };
    let study = Study {
        name,
        description: raw.description,
        origin: origin.to_owned(),
        text: text.to_owned(),
        seed: raw.seed.unwrap_or(1),
        repetitions,
        measure_last: raw.measure_last.as_ref().map(|w| w.get_ref().0),
        backend,
        axes,
        base: base_table,
        dir: Path::new(&base_src.origin).parent().map(Path::to_path_buf),
        analysis,
        claims,
        model: crate::record::model_version().to_owned(),
    };
    if let Some(w) = &raw.measure_last {
        check_window(&src, &study, w)?;
    }
    Ok(study)
}

/// `measure_last` must be positive and no longer than any configuration's run.
fn check_window(
    src: &Source<'_>,
    study: &Study,
    w: &Spanned<crate::units::TimeValue>,
) -> Result<(), ScenarioError> {
    let window = w.get_ref().0;
    if window == Dur::ZERO {
        return Err(src.error(Some(w.span()), "measure_last", "must be positive"));
    }
    for c in 0..study.config_count() {
        let cfg = study.config(c)?;
        if window > cfg.scenario.duration {
            return Err(src.error(
                Some(w.span()),
                "measure_last",
                format!(
                    "the window ({}) is longer than the run of configuration `{}` ({})",
                    crate::units::fmt_dur(window),
                    cfg.label,
                    crate::units::fmt_dur(cfg.scenario.duration)
                ),
            ));
        }
    }
    Ok(())
}

/// An axis as the file writes it: its dotted path and its levels, not yet checked.
struct RawAxis<'a> {
    path: String,
    /// Where the axis is in the document (`grid`, then the path's segments); looked up only
    /// for an error, as each look-up reads the whole document.
    span_path: Vec<String>,
    levels: &'a [toml::Value],
}

impl RawAxis<'_> {
    /// The checked axis: every level labelled, no two labels alike (one hash-set look-up per
    /// level, so a long axis costs time in proportion to its length).
    fn levels(self, src: &Source<'_>) -> Result<Axis, ScenarioError> {
        let path = self.path;
        let mut seen: HashSet<String> = HashSet::with_capacity(self.levels.len());
        let mut out_levels = Vec::with_capacity(self.levels.len());
        for (i, v) in self.levels.iter().enumerate() {
            let (label, value) = level_label(v).map_err(|m| {
                let mut p: Vec<&str> = self.span_path.iter().map(String::as_str).collect();
                let idx = i.to_string();
                p.push(&idx);
                src.error(span_of(src.text, &p), format!("grid.{path}[{i}]"), m)
            })?;
            if !seen.insert(label.clone()) {
                let p: Vec<&str> = self.span_path.iter().map(String::as_str).collect();
                return Err(src.error(
                    span_of(src.text, &p),
                    format!("grid.{path}[{i}]"),
                    format!(
                        "two levels have the label `{}`: give them distinct labels",
                        clip(&label)
                    ),
                ));
            }
            out_levels.push(Level { label, value });
        }
        Ok(Axis {
            path,
            levels: out_levels,
        })
    }
}

/// Walk `[grid]`: arrays are axes (at the dotted path leading to them), tables are descended.
/// Levels are only counted here: [`count_configs`] bounds the grid before they are checked.
fn collect_axes<'a>(
    src: &Source<'_>,
    table: &'a toml::Table,
    prefix: &mut Vec<String>,
    out: &mut Vec<RawAxis<'a>>,
) -> Result<(), ScenarioError> {
    for (key, value) in table {
        prefix.push(key.clone());
        let path = prefix.join(".");
        let mut span_path: Vec<String> = vec!["grid".to_owned()];
        span_path.extend(prefix.iter().cloned());
        let span = || {
            let p: Vec<&str> = span_path.iter().map(String::as_str).collect();
            span_of(src.text, &p)
        };
        match value {
            toml::Value::Table(t) => collect_axes(src, t, prefix, out)?,
            toml::Value::Array(levels) => {
                if levels.is_empty() {
                    return Err(src.error(
                        span(),
                        format!("grid.{path}"),
                        "an axis needs at least one level",
                    ));
                }
                out.push(RawAxis {
                    path,
                    span_path,
                    levels,
                });
            }
            _ => {
                return Err(src.error(
                    span(),
                    format!("grid.{path}"),
                    "an axis is a list of levels, e.g. `[\"cubic\", \"bbr3\"]`",
                ));
            }
        }
        prefix.pop();
    }
    Ok(())
}

/// The grid's configurations and runs are within [`MAX_CONFIGS`] and [`MAX_RUNS`]: counted
/// from the axes' lengths alone (saturating: a product too large for u128 is still too large),
/// before any level is checked or expanded.
fn count_configs(
    src: &Source<'_>,
    raw: &RawStudy,
    axes: &[RawAxis<'_>],
    repetitions: u32,
) -> Result<(), ScenarioError> {
    let count = axes
        .iter()
        .fold(1u128, |n, a| n.saturating_mul(a.levels.len() as u128));
    if count > MAX_CONFIGS as u128 {
        let lengths: Vec<String> = axes.iter().map(|a| a.levels.len().to_string()).collect();
        return Err(src.error(
            raw.grid.as_ref().map(Spanned::span),
            "grid",
            format!(
                "the grid has {count} configurations ({}); at most {MAX_CONFIGS} are allowed",
                lengths.join(" × ")
            ),
        ));
    }
    let runs = count * u128::from(repetitions);
    if runs > MAX_RUNS as u128 {
        let span = raw
            .repetitions
            .as_ref()
            .map(Spanned::span)
            .or(raw.grid.as_ref().map(Spanned::span));
        return Err(src.error(
            span,
            "repetitions",
            format!(
                "the study has {runs} runs ({count} configurations × {repetitions} \
                 repetitions); at most {MAX_RUNS} are allowed"
            ),
        ));
    }
    Ok(())
}

/// Label of a level and the value to set (a table level loses its `label` key).
fn level_label(v: &toml::Value) -> Result<(String, toml::Value), String> {
    Ok(match v {
        toml::Value::String(s) => (s.clone(), v.clone()),
        toml::Value::Integer(i) => (i.to_string(), v.clone()),
        toml::Value::Float(f) => (f.to_string(), v.clone()),
        toml::Value::Boolean(b) => (b.to_string(), v.clone()),
        toml::Value::Table(t) => {
            let mut t = t.clone();
            let label = match t.remove("label") {
                Some(toml::Value::String(s)) if !s.trim().is_empty() => s,
                Some(_) => return Err("`label` must be a non-empty string".into()),
                None => {
                    let parts: Vec<String> = t
                        .iter()
                        .map(|(k, v)| match v {
                            toml::Value::String(s) => format!("{k}={s}"),
                            other => format!("{k}={other}"),
                        })
                        .collect();
                    if parts.is_empty() {
                        return Err("an empty table sets nothing".into());
                    }
                    parts.join(" ")
                }
            };
            (label, toml::Value::Table(t))
        }
        toml::Value::Array(_) | toml::Value::Datetime(_) => {
            return Err("a level is a value or a table, not a list or a date".into());
        }
    })
}

/// Set `value` at dotted `path` in `table`, creating missing tables; numeric segments index
/// lists, and a `*` segment stands for every entry of a list (`flows.*.controller`: the
/// controller of every flow, so one axis changes several entries together). On error the table is left as it was up to the failing segment.
fn set_path(table: &mut toml::Table, path: &str, value: toml::Value) -> Result<(), String> {
    fn set_in(v: &mut toml::Value, segs: &[&str], value: toml::Value) -> Result<(), String> {
        let Some((first, rest)) = segs.split_first() else {
            return Err("empty path".into());
        };
        match v {
            toml::Value::Table(t) => {
                if rest.is_empty() {
                    t.insert((*first).to_owned(), value);
                    return Ok(());
                }
                let e = t
                    .entry((*first).to_owned())
                    .or_insert_with(|| toml::Value::Table(toml::Table::new()));
                set_in(e, rest, value)
            }
            toml::Value::Array(a) if *first == "*" => {
                if a.is_empty() {
                    return Err(
                        "`*` stands for every entry of a list, but the list is empty".into(),
                    );
                }
                for slot in a.iter_mut() {
                    if rest.is_empty() {
                        *slot = value.clone();
                    } else {
                        set_in(slot, rest, value.clone())?;
                    }
                }
                Ok(())
            }
            toml::Value::Array(a) => {
                let i: usize = first
                    .parse()
                    .map_err(|_| format!("`{first}` indexes a list: use a number"))?;
                let n = a.len();
                let slot = a
                    .get_mut(i)
                    .ok_or_else(|| format!("index {i} is past the end of a list of {n}"))?;
                if rest.is_empty() {
                    *slot = value;
                    Ok(())
                } else {
                    set_in(slot, rest, value)
                }
            }
            _ => Err(format!("`{first}` is inside a value that is not a table")),
        }
    }
    let segs: Vec<&str> = path.split('.').collect();
    let mut root = toml::Value::Table(std::mem::take(table));
    let r = set_in(&mut root, &segs, value);
    if let toml::Value::Table(t) = root {
        *table = t;
    }
    r
}

/// Split a scenario error's field (`flows[0].controller`) into path segments.
fn field_segments(field: &str) -> Vec<String> {
    field
        .replace('[', ".")
        .replace(']', "")
        .split('.')
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Level index per axis of configuration `n`: the digits of `n` in the grid's mixed radix,
/// the first axis the most significant (so it varies slowest).
fn level_index(axes: &[Axis], n: usize) -> Vec<usize> {
    let mut idx = vec![0; axes.len()];
    let mut rest = n;
    for (k, a) in axes.iter().enumerate().rev() {
        idx[k] = rest % a.levels.len();
        rest /= a.levels.len();
    }
    idx
}

/// The configuration with these level indices (the inverse of [`level_index`]).
fn config_index(axes: &[Axis], idx: &[usize]) -> usize {
    axes.iter()
        .zip(idx)
        .fold(0, |n, (a, &i)| n * a.levels.len() + i)
}

/// The key of the configuration with level indices `idx`.
fn config_key(axes: &[Axis], idx: Vec<usize>) -> ConfigKey {
    let levels: Vec<(String, String)> = axes
        .iter()
        .zip(&idx)
        .map(|(a, &i)| (a.path.clone(), a.levels[i].label.clone()))
        .collect();
    let label = if levels.is_empty() {
        "base".to_owned()
    } else {
        levels
            .iter()
            .map(|(p, l)| format!("{p}={l}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    ConfigKey {
        label,
        levels,
        level_index: idx,
    }
}

/// The base table with the levels `idx` applied; on error the axis and level that failed and
/// why.
fn apply_levels(
    base: &toml::Table,
    axes: &[Axis],
    idx: &[usize],
) -> Result<toml::Table, (usize, String)> {
    let mut table = base.clone();
    for (k, (a, &i)) in axes.iter().zip(idx).enumerate() {
        set_path(&mut table, &a.path, a.levels[i].value.clone()).map_err(|m| (k, m))?;
    }
    Ok(table)
}

/// A configuration's table checked as a scenario (its label names it in messages), resolved
/// with the file's seed, or with `seed` when given (a run's: what the scenario draws when it
/// is resolved, such as Poisson arrivals and `size_cdf` sizes, then comes from that seed).
fn check_table(
    table: &toml::Table,
    label: &str,
    dir: Option<&Path>,
    seed: Option<u64>,
) -> Result<Scenario, ScenarioError> {
    let text = toml::to_string(table).map_err(|e| {
        ScenarioError::Invalid(Box::new(scenario::error::Invalid {
            origin: label.to_owned(),
            line: 0,
            column: 0,
            field: String::new(),
            message: format!("the configuration cannot be written as TOML: {e}"),
        }))
    })?;
    let overrides = Overrides {
        seed,
        ..Overrides::default()
    };
    scenario::parse_in(&text, label, dir, &overrides)
}

/// Check every configuration of the grid, one at a time (none is kept).
fn check_configs(
    src: &Source<'_>,
    base_src: &BaseSource,
    base: &toml::Table,
    axes: &[Axis],
) -> Result<(), ScenarioError> {
    let total: usize = axes.iter().map(|a| a.levels.len()).product();
    let dir = Path::new(&base_src.origin).parent();
    // Distinct problems (at most `SHOWN_PROBLEMS`), and how many configurations have others.
    let mut problems: Vec<Problem> = Vec::new();
    let mut invalid = 0usize;
    for n in 0..total {
        let idx = level_index(axes, n);
        let table = match apply_levels(base, axes, &idx) {
            Ok(t) => t,
            Err((k, m)) => return Err(level_error(src, &axes[k], idx[k], &axes[k].path, &m)),
        };
        let label = config_key(axes, idx.clone()).label;
        let text = match toml::to_string(&table) {
            Ok(t) => t,
            Err(e) => {
                return Err(src.error(
                    None,
                    "grid",
                    format!("configuration `{label}` cannot be written as TOML: {e}"),
                ));
            }
        };
        match scenario::parse_in(&text, &label, dir, &Overrides::default()) {
            Ok(_) => {}
            Err(e) => {
                invalid += 1;
                let (error, at_level) = locate(src, base_src, axes, &idx, &e);
                let key = error.to_string();
                if let Some(p) = problems.iter_mut().find(|p| p.key == key) {
                    p.count += 1;
                } else if problems.len() < SHOWN_PROBLEMS {
                    problems.push(Problem {
                        key,
                        error,
                        at_level,
                        label,
                        count: 1,
                    });
                }
            }
        }
    }
    if problems.is_empty() {
        return Ok(());
    }
    // A problem the base causes in only some configurations is named with one of them (the
    // levels that make it invalid); one in every configuration is the base's alone.
    let name_config = |p: &Problem| {
        if axes.is_empty() || p.count == total {
            String::new()
        } else if p.at_level {
            if p.count > 1 {
                format!(" ({} configurations)", p.count)
            } else {
                String::new()
            }
        } else if p.count > 1 {
            format!(" (in configuration `{}` and {} more)", p.label, p.count - 1)
        } else {
            format!(" (in configuration `{}`)", p.label)
        }
    };
    if let [p] = problems.as_slice()
        && p.count == invalid
    {
        let suffix = name_config(p);
        let mut error = problems.remove(0).error;
        if let ScenarioError::Invalid(i) = &mut error {
            i.message.push_str(&suffix);
        }
        return Err(error);
    }
    let mut msg = format!("{invalid} of {total} configurations of the grid are invalid:");
    for p in &problems {
        let _ = write!(msg, "\n  {}{}", p.key, name_config(p));
    }
    let listed: usize = problems.iter().map(|p| p.count).sum();
    if listed < invalid {
        let _ = write!(
            msg,
            "\n  and {} more configurations with other problems",
            invalid - listed
        );
    }
    Err(ScenarioError::Invalid(Box::new(scenario::error::Invalid {
        origin: src.origin.to_owned(),
        line: 0,
        column: 0,
        field: String::new(),
        message: msg,
    })))
}

/// Most distinct problems an invalid grid's message lists.
const SHOWN_PROBLEMS: usize = 10;

/// One distinct problem of a grid's configurations.
struct Problem {
    /// The located error as text (what makes two problems the same).
    key: String,
    error: ScenarioError,
    /// Located at a grid level (not in the base).
    at_level: bool,
    /// The first configuration that has it.
    label: String,
    /// Configurations that have it.
    count: usize,
}

fn level_error(src: &Source<'_>, a: &Axis, i: usize, field: &str, msg: &str) -> ScenarioError {
    let mut p: Vec<&str> = vec!["grid"];
    p.extend(a.path.split('.'));
    let idx = i.to_string();
    p.push(&idx);
    let span = span_of(src.text, &p).or_else(|| span_of(src.text, &p[..p.len() - 1]));
    let label = &a.levels[i].label;
    let field = if field == a.path {
        format!("grid.{}[{i}]", a.path)
    } else {
        format!("grid.{}[{i}] ({field})", a.path)
    };
    src.error(span, field, format!("level `{label}`: {msg}"))
}

/// Point a configuration's scenario error at the grid level that set the field (`true`), or
/// at the base (`false`).
fn locate(
    src: &Source<'_>,
    base_src: &BaseSource,
    axes: &[Axis],
    idx: &[usize],
    e: &ScenarioError,
) -> (ScenarioError, bool) {
    let Some(inv) = e.invalid() else {
        return (src.error(None, "base", e.to_string()), false);
    };
    let segs = field_segments(&inv.field);
    let field = segs.join(".");
    // The deepest axis whose path is a prefix of (or equal to) the field.
    let axis = axes
        .iter()
        .enumerate()
        .filter(|(_, a)| {
            let ap: Vec<&str> = a.path.split('.').collect();
            ap.len() <= segs.len() && ap.iter().zip(&segs).all(|(x, y)| x == y)
        })
        .max_by_key(|(_, a)| a.path.len());
    if let Some((k, a)) = axis {
        return (level_error(src, a, idx[k], &field, &inv.message), true);
    }
    let bsrc = Source {
        text: &base_src.text,
        origin: &base_src.origin,
    };
    let mut p: Vec<&str> = base_src.prefix.iter().map(String::as_str).collect();
    let n = p.len();
    p.extend(segs.iter().map(String::as_str));
    // The field itself, or its nearest enclosing table that is written in the base.
    let span = (n..=p.len())
        .rev()
        .find_map(|k| span_of(&base_src.text, &p[..k]));
    let shown = if base_src.prefix.is_empty() {
        field
    } else {
        format!("base.{field}")
    };
    (bsrc.error(span, shown, inv.message.clone()), false)
}

fn resolve_analysis(
    src: &Source<'_>,
    raw: Option<&Spanned<RawAnalysis>>,
    axes: &[Axis],
) -> Result<Analysis, ScenarioError> {
    let axis_names: Vec<&str> = axes.iter().map(|a| a.path.as_str()).collect();
    let mut a = Analysis {
        baseline: Vec::new(),
        metrics: METRICS.iter().map(|(m, _)| (*m).to_owned()).collect(),
        plots: PLOTS.iter().map(|p| (*p).to_owned()).collect(),
        split_by: (axes.len() > 1).then(|| axes[0].path.clone()),
        flent: true,
        png: true,
        pairs: Vec::new(),
        curves: Vec::new(),
    };
    let Some(raw) = raw else { return Ok(a) };
    let r = raw.get_ref();
    let metric_names: Vec<&str> = METRICS.iter().map(|(m, _)| *m).collect();
    if let Some(ms) = &r.metrics {
        a.metrics.clear();
        for m in ms {
            if !metric_names.contains(&m.get_ref().as_str()) {
                return Err(src.error(
                    Some(m.span()),
                    "analysis.metrics",
                    unknown_choice("metric", m.get_ref(), &metric_names),
                ));
            }
            a.metrics.push(m.get_ref().clone());
        }
    }
    if let Some(ps) = &r.plots {
        a.plots.clear();
        for p in ps {
            if !PLOTS.contains(&p.get_ref().as_str()) {
                return Err(src.error(
                    Some(p.span()),
                    "analysis.plots",
                    unknown_choice("plot", p.get_ref(), PLOTS),
                ));
            }
            a.plots.push(p.get_ref().clone());
        }
    }
    if let Some(s) = &r.split_by {
        if !axis_names.contains(&s.get_ref().as_str()) {
            return Err(src.error(
                Some(s.span()),
                "analysis.split_by",
                unknown_choice("grid axis", s.get_ref(), &axis_names),
            ));
        }
        a.split_by = Some(s.get_ref().clone());
    }
    if let Some(b) = &r.baseline {
        let mut flat = Vec::new();
        flatten_baseline(b.get_ref(), &mut Vec::new(), &mut flat);
        for (path, level) in flat {
            let Some(axis) = axes.iter().find(|x| x.path == path) else {
                let mut msg = unknown_choice("grid axis", &path, &axis_names);
                if axis_names.is_empty() {
                    msg = format!("`{path}`: the study has no grid to compare along");
                }
                return Err(src.error(Some(b.span()), "analysis.baseline", msg));
            };
            let labels: Vec<&str> = axis.levels.iter().map(|l| l.label.as_str()).collect();
            let Some(level) = level else {
                return Err(src.error(
                    Some(b.span()),
                    format!("analysis.baseline.{path}"),
                    "must be a level label (a string)",
                ));
            };
            if !labels.contains(&level.as_str()) {
                let msg = format!(
                    "{} (axis `{path}`)",
                    unknown_choice("level", &level, &labels)
                );
                return Err(src.error(Some(b.span()), format!("analysis.baseline.{path}"), msg));
            }
            a.baseline.push((path, level));
        }
    }
    if let Some(f) = r.flent {
        a.flent = f;
    }
    if let Some(p) = r.png {
        a.png = p;
    }
    if let Some(p) = &r.pair {
        a.pairs.push(resolve_pair(
            src,
            "analysis.pair",
            p.get_ref(),
            axes,
            &metric_names,
        )?);
    }
    for (i, p) in r.pairs.iter().flatten().enumerate() {
        let key = format!("analysis.pairs[{i}]");
        a.pairs
            .push(resolve_pair(src, &key, p.get_ref(), axes, &metric_names)?);
    }
    for (i, c) in r.curves.iter().flatten().enumerate() {
        let key = format!("analysis.curves[{i}]");
        a.curves
            .push(curve::resolve(src, &key, c.get_ref(), axes, &metric_names)?);
    }
    Ok(a)
}

/// Check `analysis.pair` against the grid: every axis named exists and is a different one,
/// `from` and `to` are levels of `axis`, the metric is known.
fn resolve_pair(
    src: &Source<'_>,
    at: &str,
    r: &RawPair,
    axes: &[Axis],
    metric_names: &[&str],
) -> Result<Pair, ScenarioError> {
    let axis_names: Vec<&str> = axes.iter().map(|a| a.path.as_str()).collect();
    let axis_of = |key: &str, v: &Spanned<String>| {
        axes.iter().find(|a| a.path == *v.get_ref()).ok_or_else(|| {
            src.error(
                Some(v.span()),
                format!("{at}.{key}"),
                unknown_choice("grid axis", v.get_ref(), &axis_names),
            )
        })
    };
    let axis = axis_of("axis", &r.axis)?;
    let rows = axis_of("rows", &r.rows)?;
    let split = r.split.as_ref().map(|s| axis_of("split", s)).transpose()?;
    let mut named: Vec<(&Spanned<String>, &Axis)> = vec![(&r.axis, axis), (&r.rows, rows)];
    if let (Some(v), Some(a)) = (&r.split, split) {
        named.push((v, a));
    }
    for (i, (v, a)) in named.iter().enumerate() {
        if named[..i].iter().any(|(_, b)| b.path == a.path) {
            return Err(src.error(
                Some(v.span()),
                at,
                format!(
                    "`{}` is named twice: `axis`, `rows` and `split` must be different axes",
                    a.path
                ),
            ));
        }
    }
    let labels: Vec<&str> = axis.levels.iter().map(|l| l.label.as_str()).collect();
    for (key, v) in [("from", &r.from), ("to", &r.to)] {
        if !labels.contains(&v.get_ref().as_str()) {
            return Err(src.error(
                Some(v.span()),
                format!("{at}.{key}"),
                format!(
                    "{} (axis `{}`)",
                    unknown_choice("level", v.get_ref(), &labels),
                    axis.path
                ),
            ));
        }
    }
    if !metric_names.contains(&r.metric.get_ref().as_str()) {
        return Err(src.error(
            Some(r.metric.span()),
            format!("{at}.metric"),
            unknown_choice("metric", r.metric.get_ref(), metric_names),
        ));
    }
    let statistic = match &r.statistic {
        None => "median".to_owned(),
        Some(v) if PAIR_STATISTICS.contains(&v.get_ref().as_str()) => v.get_ref().clone(),
        Some(v) => {
            return Err(src.error(
                Some(v.span()),
                format!("{at}.statistic"),
                unknown_choice("statistic", v.get_ref(), PAIR_STATISTICS),
            ));
        }
    };
    if statistic == POSITION_MEDIANS && !POSITION_METRICS.contains(&r.metric.get_ref().as_str()) {
        let span = r.statistic.as_ref().map(Spanned::span);
        return Err(src.error(
            span,
            format!("{at}.statistic"),
            format!(
                "`{POSITION_MEDIANS}` needs a per-flow metric: {}, not `{}`",
                POSITION_METRICS.join(" or "),
                r.metric.get_ref()
            ),
        ));
    }
    Ok(Pair {
        axis: axis.path.clone(),
        from: r.from.get_ref().clone(),
        to: r.to.get_ref().clone(),
        rows: rows.path.clone(),
        split: split.map(|a| a.path.clone()),
        metric: r.metric.get_ref().clone(),
        statistic,
    })
}

/// `{ tcp = "bbr3" }` or `{ test.name = "rrul" }` → [("tcp", "bbr3"), ("test.name", "rrul")].
fn flatten_baseline(
    t: &toml::Table,
    prefix: &mut Vec<String>,
    out: &mut Vec<(String, Option<String>)>,
) {
    for (k, v) in t {
        prefix.push(k.clone());
        match v {
            toml::Value::Table(inner) => flatten_baseline(inner, prefix, out),
            toml::Value::String(s) => out.push((prefix.join("."), Some(s.clone()))),
            toml::Value::Integer(i) => out.push((prefix.join("."), Some(i.to_string()))),
            toml::Value::Float(f) => out.push((prefix.join("."), Some(f.to_string()))),
            toml::Value::Boolean(b) => out.push((prefix.join("."), Some(b.to_string()))),
            _ => out.push((prefix.join("."), None)),
        }
        prefix.pop();
    }
}

/// Seed of repetition `rep` of a study with seed `study_seed`: the first 8 bytes (little
/// endian) of SHA-256("cclab-rep-seed", study seed, rep).
#[must_use]
pub fn derive_seed(study_seed: u64, rep: u32) -> u64 {
    let mut h = Sha256::new();
    h.update(b"cclab-rep-seed");
    h.update(study_seed.to_le_bytes());
    h.update(rep.to_le_bytes());
    let d = h.finalize();
    let mut b = [0u8; 8];
    b.copy_from_slice(&d[..8]);
    u64::from_le_bytes(b)
}

/// A TOML value as JSON with object keys sorted at every level (the canonical form hashed into
/// run ids; independent of map implementations).
fn canonical_json(v: &toml::Value) -> serde_json::Value {
    match v {
        toml::Value::String(s) => serde_json::Value::String(s.clone()),
        toml::Value::Integer(i) => serde_json::Value::from(*i),
        toml::Value::Float(f) => serde_json::Number::from_f64(*f).map_or_else(
            || serde_json::Value::String(f.to_string()),
            serde_json::Value::Number,
        ),
        toml::Value::Boolean(b) => serde_json::Value::Bool(*b),
        toml::Value::Datetime(d) => serde_json::Value::String(d.to_string()),
        toml::Value::Array(a) => serde_json::Value::Array(a.iter().map(canonical_json).collect()),
        toml::Value::Table(t) => {
            let mut keys: Vec<&String> = t.keys().collect();
            keys.sort();
            let mut m = serde_json::Map::new();
            for k in keys {
                m.insert(k.clone(), canonical_json(&t[k]));
            }
            serde_json::Value::Object(m)
        }
    }
}

impl Study {
    /// Grid axes in file order.
    #[must_use]
    pub fn axes(&self) -> &[Axis] {
        &self.axes
    }

    /// Number of configurations (the product of the axis lengths; 1 without a grid).
    #[must_use]
    pub fn config_count(&self) -> usize {
        self.axes.iter().map(|a| a.levels.len()).product()
    }

    /// Level index per axis of configuration `c`.
    ///
    /// # Panics
    /// If `c` is not below [`Study::config_count`], like an index out of a slice's bounds.
    fn level_index(&self, c: usize) -> Vec<usize> {
        let n = self.config_count();
        assert!(c < n, "configuration {c} of a study of {n}");
        level_index(&self.axes, c)
    }

    /// Number of runs (configurations × repetitions).
    #[must_use]
    pub fn run_count(&self) -> usize {
        self.config_count() * self.repetitions as usize
    }

    /// The configuration with these level indices (one per axis, as in
    /// [`ConfigKey::level_index`]); `None` if there are not one per axis or one is out of range.
    #[must_use]
    pub fn config_at(&self, level_index: &[usize]) -> Option<usize> {
        let fits = level_index.len() == self.axes.len()
            && self
                .axes
                .iter()
                .zip(level_index)
                .all(|(a, &i)| i < a.levels.len());
        fits.then(|| config_index(&self.axes, level_index))
    }

    /// Label and levels of configuration `c` (`c < config_count()`), without resolving it.
    ///
    /// # Panics
    /// If `c` is out of range.
    #[must_use]
    pub fn config_key(&self, c: usize) -> ConfigKey {
        config_key(&self.axes, self.level_index(c))
    }

    /// The scenario table of configuration `c` (`c < config_count()`): the base with its levels
    /// applied.
    ///
    /// # Panics
    /// If `c` is out of range; otherwise only on a bug: [`parse`] applied the levels of every
    /// configuration without error.
    #[must_use]
    pub fn config_table(&self, c: usize) -> toml::Table {
        apply_levels(&self.base, &self.axes, &self.level_index(c))
            .unwrap_or_else(|(k, m)| panic!("grid level of `{}` checked: {m}", self.axes[k].path))
    }

    /// Configuration `c` (`c < config_count()`), resolved and checked now.
    ///
    /// # Errors
    /// Only on a bug: [`parse`] checked every configuration as a scenario.
    ///
    /// # Panics
    /// If `c` is out of range.
    pub fn config(&self, c: usize) -> Result<Config, ScenarioError> {
        self.config_seeded(c, None)
    }

    /// Run `r`'s configuration resolved with the run's seed: every random draw the scenario
    /// makes when it is resolved (the start times of Poisson `arrivals`, the sizes drawn from a
    /// `size_cdf`) comes from that seed, as in `cclab run --seed`, so repetitions differ in
    /// them as in everything the simulator draws. [`Study::config`] resolves with the base's
    /// seed, which no run uses.
    ///
    /// # Errors
    /// A configuration valid with the base's seed that its draws make invalid with this one
    /// (every Poisson arrival of the run falls after its end).
    pub fn run_config(&self, r: &RunSpec) -> Result<Config, ScenarioError> {
        self.config_seeded(r.config, Some(r.seed))
    }

    fn config_seeded(&self, c: usize, seed: Option<u64>) -> Result<Config, ScenarioError> {
        let ConfigKey {
            label,
            levels,
            level_index,
        } = self.config_key(c);
        let table = self.config_table(c);
        let scenario = check_table(&table, &label, self.dir.as_deref(), seed)?;
        Ok(Config {
            label,
            levels,
            level_index,
            table,
            scenario,
        })
    }

    /// Every configuration in order, each resolved when the iterator reaches it.
    pub fn configs(&self) -> impl Iterator<Item = Result<Config, ScenarioError>> + '_ {
        (0..self.config_count()).map(|c| self.config(c))
    }

    /// Run `i` (`i < run_count()`), with its id.
    ///
    /// # Panics
    /// If `i` is out of range.
    #[must_use]
    pub fn run(&self, i: usize) -> RunSpec {
        let reps = self.repetitions as usize;
        let (c, rep) = (i / reps, i % reps);
        let rep = u32::try_from(rep).expect("a repetition is below `repetitions`, a u32");
        let table = self.config_table(c);
        let rates = self.rate_files_digest(c, &table);
        self.run_of(c, rep, &table, &rates)
    }

    /// Every run, configuration-major then repetition, with ids; each configuration is resolved
    /// when the iterator reaches it.
    pub fn run_specs(&self) -> impl Iterator<Item = RunSpec> + '_ {
        (0..self.config_count()).flat_map(move |c| {
            let table = self.config_table(c);
            let rates = self.rate_files_digest(c, &table);
            (0..self.repetitions).map(move |rep| self.run_of(c, rep, &table, &rates))
        })
    }

    /// Every run at once (see [`Study::run_specs`] for one at a time).
    #[must_use]
    pub fn runs(&self) -> Vec<RunSpec> {
        self.run_specs().collect()
    }

    /// Repetition `rep` of configuration `c`, whose table is `table`.
    /// What configuration `c`'s rate files (`[[links]]`) contain, for its run ids: a rate file
    /// counts by its content, not its name, so editing a trace makes new runs. Only such
    /// configurations are resolved here, once for all their repetitions.
    fn rate_files_digest(&self, c: usize, table: &toml::Table) -> String {
        let mut d = String::new();
        if table.contains_key("links")
            && let Ok(scenario) =
                check_table(table, &self.config_key(c).label, self.dir.as_deref(), None)
        {
            for l in &scenario.shaped_links {
                let _ = write!(d, "\nrate {}={:?}", l.link, l.shape);
            }
        }
        d
    }

    fn run_of(&self, c: usize, rep: u32, table: &toml::Table, rates: &str) -> RunSpec {
        let seed = derive_seed(self.seed, rep);
        let mut t = table.clone();
        t.remove("name");
        t.remove("description");
        t.insert(
            "seed".to_owned(),
            toml::Value::Integer(i64::from_le_bytes(seed.to_le_bytes())),
        );
        let spec = canonical_json(&toml::Value::Table(t));
        let mut h = Sha256::new();
        // The model version, not the package's (0.1.0 at every commit): a build whose results
        // differ makes other ids, so a resumed store never mixes two models' runs.
        h.update(format!("cclab-run/{RECORD_FORMAT}/{}\n", self.model));
        h.update(spec.to_string());
        h.update(format!("\nseed={seed}"));
        h.update(rates);
        // The window's metrics are part of the record: another window is another run (no
        // window leaves the id as it was).
        if let Some(w) = self.measure_last {
            h.update(format!("\nmeasure_last={}", w.as_nanos()));
        }
        // An emulated run is another run than a simulated one (the simulator's ids are as
        // they were).
        if self.backend == Backend::Emulate {
            h.update("\nbackend=emulate");
        }
        let id = hex(&h.finalize());
        RunSpec {
            index: c * self.repetitions as usize + rep as usize,
            config: c,
            rep,
            seed,
            id,
            spec,
        }
    }

    /// A few lines describing the design (for `cclab study --dry-run` and the report).
    #[must_use]
    pub fn describe(&self) -> String {
        let mut s = format!(
            "study `{}`: {} configurations × {} repetitions = {} runs\n",
            self.name,
            self.config_count(),
            self.repetitions,
            self.run_count()
        );
        for a in &self.axes {
            let labels: Vec<&str> = a.levels.iter().map(|l| l.label.as_str()).collect();
            let _ = writeln!(s, "  axis {}: {}", a.path, labels.join(", "));
        }
        if !self.analysis.baseline.is_empty() {
            let b: Vec<String> = self
                .analysis
                .baseline
                .iter()
                .map(|(p, l)| format!("{p}={l}"))
                .collect();
            let _ = writeln!(s, "  baseline: {}", b.join(" "));
        }
        for (i, c) in self.analysis.curves.iter().enumerate() {
            let _ = write!(
                s,
                "  curve {i}: {} against {} by {}",
                c.metric, c.x, c.series
            );
            if let Some(cmp) = &c.compare {
                let _ = write!(s, ", {cmp} side by side");
            }
            if let Some(t) = c.threshold {
                let _ = write!(s, ", threshold {t}");
            }
            s.push('\n');
        }
        for c in &self.claims {
            let _ = write!(s, "  claim {}: {}", c.id, claim::statement(c));
            if !c.per_level.is_empty() {
                let _ = write!(s, ", per level of {}", c.per_level.join(", "));
            }
            s.push('\n');
        }
        s
    }

    /// The baseline configuration of configuration `c` (the same levels but the baseline's on
    /// the baseline axes), if there is a baseline and `c` is not it.
    #[must_use]
    pub fn baseline_of(&self, c: usize) -> Option<usize> {
        if self.analysis.baseline.is_empty() {
            return None;
        }
        let mut want = self.level_index(c);
        for (path, label) in &self.analysis.baseline {
            let k = self.axes.iter().position(|a| &a.path == path)?;
            want[k] = self.axes[k].levels.iter().position(|l| &l.label == label)?;
        }
        let b = config_index(&self.axes, &want);
        (b != c).then_some(b)
    }
}

/// Lower-case hex of bytes.
#[must_use]
pub fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}
