//! Analysis of a completed study: statistics across repetitions, CSV/JSON tables, plots, the
//! HTML report and the Flent files.
//!
//! Contract: [`analyse`] reads every run of the study from the store (all must be valid: the
//! caller runs the study first), and writes into the study directory `runs.csv` (one row per
//! run), `stats.csv` and `stats.json` (one row per configuration and metric: [`stats::Summary`]
//! of the repetitions with the confidence interval cut to the metric's domain
//! ([`metric_domain`]), and the two-sided Mann-Whitney U test against the configuration's
//! baseline, [`stats::mann_whitney_u`], significant only where its sample sizes can reach
//! [`stats::ALPHA`]), `plots/*.svg` (and `.png`), `flent/*.flent.gz` for Flent-equivalent tests,
//! `pairs.md` for paired tables, `curves.md` and `curves.csv` for curves ([`crate::curves`];
//! their figures are `plots/curve<i>_*`), `claims.md` and `claims.json` for the study's claims
//! ([`crate::study::claim`]; their table also ends the terminal table), and `report.html`. Every output depends only on the
//! records, which depend only on the study, so an interrupted and resumed study writes
//! byte-identical files. Numbers are written in Rust's shortest round-trip form. A study
//! with too few repetitions for its test to reach the significance level says so
//! ([`study_warnings`]) under the terminal table and in `report.html`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use sha2::{Digest, Sha256};

use crate::flent;
use crate::plot::{self, Labels};
use crate::record::{RunRecord, SeriesKind};
pub use crate::report::{Figure, StatRow};
use crate::stats;
use crate::study::store::{RunState, Store, write_atomic};
use crate::study::{Study, hex};
use crate::suite::METRICS;

/// What [`analyse`] wrote.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// A plain-text table of the main metrics (for the terminal).
    pub table: String,
    /// Files written.
    pub files: Vec<PathBuf>,
    /// Figures that could not be drawn from the records' data, each with the reason (say a
    /// value beyond the range a plot can show, from a damaged or crafted record); they are
    /// named in `report.html` too.
    pub not_drawn: Vec<String>,
}

/// Why the analysis could not be done.
#[derive(Debug, thiserror::Error)]
pub enum AnalysisError {
    /// A run has no valid result.
    #[error("run {id} ({config} #{rep}) has no valid result ({why}): run the study first")]
    Incomplete {
        /// Run id.
        id: String,
        /// Its configuration.
        config: String,
        /// Its repetition.
        rep: u32,
        /// What is wrong with its file.
        why: String,
    },
    /// An output could not be written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
}

/// Per configuration, the data the plots need (pooled over repetitions).
#[derive(Default)]
struct Pooled {
    /// Per step in the transfer period: summed upload goodput, Mbit/s.
    upload: Vec<f64>,
    /// Per step: summed download goodput.
    download: Vec<f64>,
    /// Probe RTTs in the transfer period, ms.
    ping: Vec<f64>,
    /// Per step: (mean ping of the step, upload sum) and (…, upload + download).
    ellipse_up: Vec<(f64, f64)>,
    ellipse_sum: Vec<(f64, f64)>,
    /// Completed sized flows: (size in bytes, FCT in s, slowdown).
    fct: Vec<(u64, f64, f64)>,
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> AnalysisError + '_ {
    move |source| AnalysisError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// Analyse the study (see the module contract).
///
/// # Errors
/// [`AnalysisError::Incomplete`] when a run has no valid result; I/O errors.
pub fn analyse(study: &Study, store: &Store) -> Result<Report, AnalysisError> {
    // Only what finds and names a run's record (the records hold their specs).
    let runs: Vec<(String, usize, u32)> =
        study.run_specs().map(|r| (r.id, r.config, r.rep)).collect();
    let mut by_config: Vec<Vec<RunRecord>> = vec![Vec::new(); study.config_count()];
    // Read and verify in parallel; results come back in run order.
    let read: Vec<_> = runs.par_iter().map(|(id, ..)| store.read(id)).collect();
    for ((id, config, rep), result) in runs.into_iter().zip(read) {
        match result {
            Ok(rec) => by_config[config].push(rec),
            Err(state) => {
                return Err(AnalysisError::Incomplete {
                    id,
                    config: study.config_key(config).label,
                    rep,
                    why: match state {
                        RunState::Missing => "missing".into(),
                        RunState::Corrupt(w) => w,
                        RunState::Valid => "unreadable".into(),
                    },
                });
            }
        }
    }
    let dir = store.dir();
    let mut report = Report::default();
    let write = |name: &str, bytes: &[u8], files: &mut Vec<PathBuf>| {
        let p = dir.join(name);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).map_err(io_err(parent))?;
        }
        write_atomic(&p, bytes).map_err(io_err(&p))?;
        files.push(p);
        Ok::<(), AnalysisError>(())
    };
    let mut files = Vec::new();
    write(
        "runs.csv",
        runs_csv(study, &by_config).as_bytes(),
        &mut files,
    )?;
    let rows = stat_rows(study, &by_config);
    write("stats.csv", stats_csv(study, &rows).as_bytes(), &mut files)?;
    let mut json = serde_json::to_vec_pretty(&rows).expect("rows serialise");
    json.push(b'\n');
    write("stats.json", &json, &mut files)?;
    report.table = text_table(study, &rows);
    let (mut figures, mut not_drawn) = plots(study, &by_config);
    // Curves: their tables and rows now, their figures with the others (PNG below).
    let mut curves_md = String::new();
    let mut curves_csv = String::from(crate::curves::CSV_HEADER);
    let mut curves_html = String::new();
    for (k, curve) in study.analysis.curves.iter().enumerate() {
        let groups =
            crate::curves::curve_groups(study, curve, &|c| values(&by_config[c], &curve.metric));
        if !curves_md.is_empty() {
            curves_md.push('\n');
        }
        curves_md.push_str(&crate::curves::markdown(k, curve, &groups));
        curves_csv.push_str(&crate::curves::csv_rows(k, curve, &groups));
        curves_html.push_str(&crate::curves::html(k, curve, &groups));
        figures.extend(crate::curves::figures(k, curve, &groups, &mut not_drawn));
    }
    // PNG rasterising and the Flent files dominate the analysis: both run in parallel (the
    // bytes do not depend on the order; files are listed in a fixed order).
    let pngs: Vec<Option<Vec<u8>>> = figures
        .par_iter()
        .map(|f| {
            study
                .analysis
                .png
                .then(|| plot::svg_to_png(&f.svg).ok())
                .flatten()
        })
        .collect();
    for (f, png) in figures.iter().zip(&pngs) {
        write(
            &format!("plots/{}.svg", f.file),
            f.svg.as_bytes(),
            &mut files,
        )?;
        if let Some(png) = png {
            write(&format!("plots/{}.png", f.file), png, &mut files)?;
        }
    }
    if study.analysis.flent {
        let fdir = dir.join("flent");
        std::fs::create_dir_all(&fdir).map_err(io_err(&fdir))?;
        let recs: Vec<&RunRecord> = by_config
            .iter()
            .flatten()
            .filter(|r| r.test.is_some())
            .collect();
        let written: Vec<Result<PathBuf, AnalysisError>> = recs
            .par_iter()
            .map(|rec| {
                let p = fdir.join(flent::flent_file_name(rec));
                flent::write_flent_gz(rec, &p).map_err(|e| AnalysisError::Io {
                    path: p.display().to_string(),
                    source: std::io::Error::other(e.to_string()),
                })?;
                Ok(p)
            })
            .collect();
        for w in written {
            files.push(w?);
        }
    }
    let mut extra = wifi_table(study, &by_config);
    if !study.analysis.pairs.is_empty() {
        let mut md = String::new();
        for pair in &study.analysis.pairs {
            let tables = if pair.statistic == crate::study::POSITION_MEDIANS {
                crate::report::pair_tables_of(study, pair, &|c| {
                    position_medians(&by_config[c], &pair.metric)
                })
            } else {
                crate::report::pair_tables(study, pair, &|c| values(&by_config[c], &pair.metric))
            };
            if !md.is_empty() {
                md.push('\n');
            }
            md.push_str(&crate::report::pair_markdown(pair, &tables));
            extra.push_str(&crate::report::pair_html(pair, &tables));
        }
        write("pairs.md", md.as_bytes(), &mut files)?;
    }
    if !study.analysis.curves.is_empty() {
        write("curves.md", curves_md.as_bytes(), &mut files)?;
        write("curves.csv", curves_csv.as_bytes(), &mut files)?;
        extra.push_str(&curves_html);
    }
    let claims = crate::study::claim::evaluate(study, &|c, m| values(&by_config[c], m));
    if !study.claims.is_empty() {
        let md = crate::study::claim::markdown(study, &claims);
        write("claims.md", md.as_bytes(), &mut files)?;
        write(
            "claims.json",
            &crate::study::claim::json(study, &claims),
            &mut files,
        )?;
        report
            .table
            .push_str(&crate::study::claim::text_table(study, &claims));
    }
    let html = crate::report::html(study, &rows, &figures, &extra, &not_drawn, &claims);
    write("report.html", html.as_bytes(), &mut files)?;
    remove_stale(dir, &files)?;
    report.files = files;
    report.not_drawn = not_drawn;
    Ok(report)
}

/// Remove what earlier analyses left and this one did not write: plots (`plots/*.svg`,
/// `plots/*.png`) and Flent files (`flent/*.flent.gz`) of configurations no longer in the
/// study, and temporary files (`.NAME.tmp-PID…`) of processes that no longer run. Only those
/// kinds of files, which cclab itself writes there, are touched.
fn remove_stale(dir: &Path, written: &[PathBuf]) -> Result<(), AnalysisError> {
    for (sub, owned) in [
        ("", &[][..]),
        ("plots", &[".svg", ".png"][..]),
        ("flent", &[flent::FLENT_SUFFIX][..]),
    ] {
        let d = dir.join(sub);
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let path = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            let stale = if name.starts_with('.') {
                crate::study::store::is_dead_leftover(&name)
            } else {
                owned.iter().any(|x| name.ends_with(x)) && !written.contains(&path)
            };
            if stale && e.file_type().is_ok_and(|t| t.is_file()) {
                match std::fs::remove_file(&path) {
                    Err(err) if err.kind() != std::io::ErrorKind::NotFound => {
                        return Err(io_err(&path)(err));
                    }
                    _ => {}
                }
            }
        }
    }
    Ok(())
}

/// A file-name-safe form of a label.
#[must_use]
pub fn slug(label: &str) -> String {
    let mut s: String = label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.len() > 80 {
        // Keep names short but unique.
        let h = hex(&Sha256::digest(label.as_bytes()));
        s.truncate(60);
        s.push('-');
        s.push_str(&h[..12]);
    }
    s
}

/// A CSV field, quoted when it holds a comma, a quote or a newline (RFC 4180).
pub(crate) fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

/// A number in Rust's shortest round-trip form, empty where there is none.
pub(crate) fn num(x: Option<f64>) -> String {
    x.map_or_else(String::new, |v| format!("{v}"))
}

fn runs_csv(study: &Study, by_config: &[Vec<RunRecord>]) -> String {
    let mut s = String::from("config");
    for a in study.axes() {
        let _ = write!(s, ",{}", csv_field(&a.path));
    }
    s.push_str(",rep,seed,id");
    for (m, _) in METRICS {
        let _ = write!(s, ",{m}");
    }
    s.push('\n');
    for (c, recs) in by_config.iter().enumerate() {
        let cfg = study.config_key(c);
        for r in recs {
            s.push_str(&csv_field(&cfg.label));
            for (_, l) in &cfg.levels {
                let _ = write!(s, ",{}", csv_field(l));
            }
            let _ = write!(s, ",{},{},{}", r.rep, r.seed, r.id);
            for (m, _) in METRICS {
                let _ = write!(s, ",{}", num(r.metrics.get(*m).copied()));
            }
            s.push('\n');
        }
    }
    s
}

fn values(recs: &[RunRecord], metric: &str) -> Vec<f64> {
    recs.iter()
        .filter_map(|r| r.metrics.get(metric).copied())
        .collect()
}

/// [`crate::study::POSITION_MEDIANS`] of a per-flow window metric over `recs`: each run's
/// `window_flow_pct.<i>` for the metric's positions (flow 0 for `window_first_pct`, flows 1…
/// for `window_others_pct`), each position's median over the runs, their mean.
fn position_medians(recs: &[RunRecord], metric: &str) -> Option<f64> {
    let first = usize::from(metric != "window_first_pct");
    let runs: Vec<Vec<f64>> = recs
        .iter()
        .map(|r| {
            (first..)
                .map_while(|i| {
                    r.metrics
                        .get(&format!("{}{i}", crate::suite::WINDOW_FLOW_PCT))
                        .copied()
                })
                .take(if first == 0 { 1 } else { usize::MAX })
                .collect()
        })
        .collect();
    stats::mean_of_position_medians(&runs)
}

/// The interval a metric's true mean lies in by definition, to which its confidence interval
/// is cut ([`stats::Summary::clipped_to`]).
///
/// Every metric of [`METRICS`] (and every `window_flow_pct.<i>`) is a count, a rate, a time,
/// a ratio of non-negative amounts or a percentage of one: never negative. Jain's indices are
/// at most 1 (Jain, Chiu & Hawe 1984, §3: the index lies in `[1/n, 1]`), and the goodput
/// shares (`l4s_share`, `first_cc_share`, `window_first_share`) are a part of a sum of
/// non-negative parts over the whole, at most 1. Other upper bounds are left open.
#[must_use]
pub fn metric_domain(metric: &str) -> (f64, f64) {
    const AT_MOST_ONE: &[&str] = &[
        "upload_jain",
        "download_jain",
        "window_jain",
        "l4s_share",
        "first_cc_share",
        "window_first_share",
    ];
    if AT_MOST_ONE.contains(&metric) {
        (0.0, 1.0)
    } else {
        (0.0, f64::INFINITY)
    }
}

/// A metric's summary over `xs` with its confidence interval cut to the metric's domain.
fn summarize_metric(metric: &str, xs: &[f64]) -> Option<stats::Summary> {
    let (lo, hi) = metric_domain(metric);
    stats::summarize(xs).map(|s| s.clipped_to(lo, hi))
}

/// What a reader of the study's statistics must know before trusting them, one sentence
/// each (empty when nothing): a study that compares configurations with too few repetitions
/// for its test to ever reach the significance level. `cclab study` prints these before the
/// first run; the terminal table and `report.html` repeat them.
#[must_use]
pub fn study_warnings(study: &Study) -> Vec<String> {
    let mut out = Vec::new();
    let n = study.repetitions as usize;
    if compares(study)
        && let Some(need) = stats::mwu_min_repetitions(stats::ALPHA)
        && n < need
    {
        let min_p = (stats::mwu_min_p(n, n) * 1000.0).round() / 1000.0;
        out.push(format!(
            "study `{}` has {n} repetition{} per configuration: a two-sided Mann-Whitney U test \
             of {n} against {n} values cannot reach p < {} (its smallest p is {min_p}), so no \
             configuration can be marked as differing from its baseline; use repetitions = \
             {need} or more",
            study.name,
            if n == 1 { "" } else { "s" },
            stats::ALPHA,
        ));
    }
    out
}

/// Whether any configuration of the study is compared with a baseline.
fn compares(study: &Study) -> bool {
    (0..study.config_count()).any(|c| study.baseline_of(c).is_some())
}

fn stat_rows(study: &Study, by_config: &[Vec<RunRecord>]) -> Vec<StatRow> {
    let mut rows = Vec::new();
    for (c, recs) in by_config.iter().enumerate() {
        let cfg = study.config_key(c);
        let base = study.baseline_of(c);
        for m in &study.analysis.metrics {
            let xs = values(recs, m);
            let summary = summarize_metric(m, &xs);
            let test = base.and_then(|b| stats::mann_whitney_u(&xs, &values(&by_config[b], m)));
            rows.push(StatRow {
                config: cfg.label.clone(),
                levels: cfg.levels.clone(),
                metric: m.clone(),
                summary,
                baseline: base.map(|b| study.config_key(b).label),
                mw_u: test.map(|t| t.u),
                mw_p: test.map(|t| t.p_value),
                mw_exact: test.map(|t| t.exact),
                mw_min_p: test.map(|t| t.min_p),
                significant: test.map(|t| t.significant(stats::ALPHA)),
            });
        }
    }
    rows
}

fn stats_csv(study: &Study, rows: &[StatRow]) -> String {
    let mut s = String::from("config");
    for a in study.axes() {
        let _ = write!(s, ",{}", csv_field(&a.path));
    }
    s.push_str(
        ",metric,n,mean,std_dev,min,p5,p25,median,p75,p95,max,ci95_low,ci95_high,baseline,\
         mann_whitney_u,p_value,significant,p_exact,p_min\n",
    );
    for r in rows {
        s.push_str(&csv_field(&r.config));
        for (_, l) in &r.levels {
            let _ = write!(s, ",{}", csv_field(l));
        }
        let _ = write!(s, ",{}", r.metric);
        match &r.summary {
            Some(x) => {
                let _ = write!(
                    s,
                    ",{},{},{},{},{},{},{},{},{},{},{},{},{}",
                    x.n,
                    x.mean,
                    x.std_dev,
                    x.min,
                    x.p5,
                    x.p25,
                    x.median,
                    x.p75,
                    x.p95,
                    x.max,
                    x.ci95_low,
                    x.ci95_high,
                    csv_field(r.baseline.as_deref().unwrap_or(""))
                );
            }
            None => {
                let _ = write!(
                    s,
                    ",0,,,,,,,,,,,,{}",
                    csv_field(r.baseline.as_deref().unwrap_or(""))
                );
            }
        }
        let yes_no = |b: Option<bool>| b.map_or("", |b| if b { "yes" } else { "no" });
        let _ = writeln!(
            s,
            ",{},{},{},{},{}",
            num(r.mw_u),
            num(r.mw_p),
            yes_no(r.significant),
            yes_no(r.mw_exact),
            num(r.mw_min_p),
        );
    }
    s
}

/// The metrics shown in the terminal table (when the study reports them).
const TABLE_METRICS: &[&str] = &["upload_mbps", "download_mbps", "ping_p50_ms", "ping_p95_ms"];

fn text_table(study: &Study, rows: &[StatRow]) -> String {
    let shown: Vec<&str> = TABLE_METRICS
        .iter()
        .copied()
        .filter(|m| study.analysis.metrics.iter().any(|x| x == m))
        .filter(|m| rows.iter().any(|r| r.metric == *m && r.summary.is_some()))
        .collect();
    let labels: Vec<String> = (0..study.config_count())
        .map(|c| study.config_key(c).label)
        .collect();
    let width = labels
        .iter()
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(6)
        .max(6);
    // Cells per configuration and shown metric: the mean and the interval (not a ± half
    // width: an interval cut at 0 is not symmetric about the mean).
    let cells: Vec<Vec<String>> = labels
        .iter()
        .map(|label| {
            shown
                .iter()
                .map(|m| {
                    rows.iter()
                        .find(|r| &r.config == label && r.metric == *m)
                        .and_then(|r| {
                            r.summary.map(|x| {
                                let mark = if r.significant == Some(true) {
                                    "*"
                                } else {
                                    " "
                                };
                                format!(
                                    "{:.2} [{:.2}, {:.2}]{mark}",
                                    x.mean, x.ci95_low, x.ci95_high
                                )
                            })
                        })
                        .unwrap_or_else(|| "—".into())
                })
                .collect()
        })
        .collect();
    let col: Vec<usize> = shown
        .iter()
        .enumerate()
        .map(|(k, m)| {
            cells
                .iter()
                .map(|row| row[k].chars().count())
                .chain([m.len(), 22])
                .max()
                .unwrap_or(22)
        })
        .collect();
    let mut s = format!("{:<width$}", "config");
    for (m, w) in shown.iter().zip(&col) {
        let _ = write!(s, "  {m:>w$}");
    }
    s.push('\n');
    for (label, row) in labels.iter().zip(&cells) {
        let _ = write!(s, "{label:<width$}");
        for (cell, w) in row.iter().zip(&col) {
            let _ = write!(s, "  {cell:>w$}");
        }
        s.push('\n');
    }
    if !compares(study) {
        s.push_str("mean [95 % CI] over repetitions\n");
    } else {
        let _ = writeln!(
            s,
            "mean [95 % CI] over repetitions; * = differs from the baseline (two-sided \
             Mann-Whitney U, p < {})",
            stats::ALPHA
        );
    }
    for w in study_warnings(study) {
        let _ = writeln!(s, "warning: {w}");
    }
    s
}

fn pool(recs: &[RunRecord]) -> Pooled {
    let mut p = Pooled::default();
    for r in recs {
        let (from, to) = r.test.as_ref().map_or((0.0, f64::INFINITY), |t| {
            (t.delay_s, t.delay_s + t.length_s)
        });
        let eps = 1e-9;
        let n = r.x_values.len();
        let sum_kind = |kinds: &[SeriesKind]| -> Vec<Option<f64>> {
            let mut out = vec![None; n];
            for s in r.series.iter().filter(|s| kinds.contains(&s.kind)) {
                for (k, v) in s.values.iter().enumerate() {
                    if let Some(v) = v {
                        *out[k].get_or_insert(0.0) += v;
                    }
                }
            }
            out
        };
        let up = sum_kind(&[SeriesKind::TcpUpload]);
        let down = sum_kind(&[SeriesKind::TcpDownload]);
        let ping_steps = {
            let mut sum = vec![0.0; n];
            let mut cnt = vec![0u32; n];
            for s in r.series.iter().filter(|s| !s.kind.is_tcp()) {
                for (k, v) in s.values.iter().enumerate() {
                    if let Some(v) = v {
                        sum[k] += v;
                        cnt[k] += 1;
                    }
                }
            }
            (0..n)
                .map(|k| (cnt[k] > 0).then(|| sum[k] / f64::from(cnt[k])))
                .collect::<Vec<_>>()
        };
        for k in 0..n {
            let x = r.x_values[k];
            if x <= from + eps || x > to + eps {
                continue;
            }
            if let Some(u) = up[k] {
                p.upload.push(u);
            }
            if let Some(d) = down[k] {
                p.download.push(d);
            }
            if let (Some(l), Some(u)) = (ping_steps[k], up[k]) {
                p.ellipse_up.push((l, u));
                p.ellipse_sum.push((l, u + down[k].unwrap_or(0.0)));
            }
        }
        for s in r.series.iter().filter(|s| !s.kind.is_tcp()) {
            for (t, v) in s.raw.t.iter().zip(&s.raw.val) {
                if *t > from - eps && *t <= to + eps {
                    p.ping.push(*v);
                }
            }
        }
        p.fct.extend(
            r.fct
                .iter()
                .filter_map(|f| Some((f.size_bytes, f.fct_s?, f.slowdown?))),
        );
    }
    p
}

/// Why figure `file` (a stem under `plots/`) was not drawn, for the reader; `None` when the
/// plot simply had no data of its kind (a study without pings has no ping figures).
pub(crate) fn not_drawn(file: &str, e: &plot::PlotError) -> Option<String> {
    match e {
        plot::PlotError::Empty { .. } => None,
        e => Some(format!("plots/{file}.svg not drawn: {e}")),
    }
}

/// The study's figures, and why any of them could not be drawn ([`not_drawn`]).
fn plots(study: &Study, by_config: &[Vec<RunRecord>]) -> (Vec<Figure>, Vec<String>) {
    let split = study
        .analysis
        .split_by
        .as_ref()
        .and_then(|p| study.axes().iter().position(|a| &a.path == p));
    // Groups of configurations (one set of figures each), in level order.
    let mut groups: BTreeMap<usize, (String, Vec<usize>)> = BTreeMap::new();
    for c in 0..study.config_count() {
        let cfg = study.config_key(c);
        let (key, name) = match split {
            Some(k) => (cfg.level_index[k], cfg.levels[k].1.clone()),
            None => (0, String::new()),
        };
        groups
            .entry(key)
            .or_insert_with(|| (name, Vec::new()))
            .1
            .push(c);
    }
    let label_of = |c: usize| -> String {
        let cfg = study.config_key(c);
        let parts: Vec<&str> = cfg
            .levels
            .iter()
            .enumerate()
            .filter(|(k, _)| Some(*k) != split)
            .map(|(_, (_, l))| l.as_str())
            .collect();
        if parts.is_empty() {
            cfg.label.clone()
        } else {
            parts.join(" ")
        }
    };
    let want = |k: &str| study.analysis.plots.iter().any(|p| p == k);
    let mut figs = Vec::new();
    let skipped = std::cell::RefCell::new(Vec::new());
    let push = |figs: &mut Vec<Figure>,
                file: String,
                caption: String,
                group: &str,
                svg: Result<String, plot::PlotError>| {
        match svg {
            Ok(svg) => figs.push(Figure {
                file,
                caption,
                group: group.to_owned(),
                svg,
            }),
            Err(e) => skipped.borrow_mut().extend(not_drawn(&file, &e)),
        }
    };
    for (name, members) in groups.values() {
        let pooled: Vec<(usize, Pooled)> =
            members.iter().map(|&c| (c, pool(&by_config[c]))).collect();
        let pre = if name.is_empty() {
            String::new()
        } else {
            format!("{} ", slug(name))
        };
        let pre = pre.trim().to_owned();
        let stem = |kind: &str| {
            if pre.is_empty() {
                kind.to_owned()
            } else {
                format!("{pre}-{kind}")
            }
        };
        let title = |what: &str| {
            if name.is_empty() {
                what.to_owned()
            } else {
                format!("{what} — {name}")
            }
        };
        let has = |f: fn(&Pooled) -> &Vec<f64>| pooled.iter().any(|(_, p)| !f(p).is_empty());
        if want("box") {
            for (kind, what, f) in [
                (
                    "box_upload",
                    "Upload throughput",
                    (|p: &Pooled| &p.upload) as fn(&Pooled) -> &Vec<f64>,
                ),
                ("box_download", "Download throughput", |p: &Pooled| {
                    &p.download
                }),
            ] {
                if has(f) {
                    let groups: Vec<(String, Vec<f64>)> = pooled
                        .iter()
                        .filter(|(_, p)| !f(p).is_empty())
                        .map(|(c, p)| (label_of(*c), f(p).clone()))
                        .collect();
                    let l = Labels {
                        title: title(what),
                        x_label: "Configuration".into(),
                        y_label: "Throughput (Mbit/s)".into(),
                    };
                    push(
                        &mut figs,
                        stem(kind),
                        format!(
                            "{what} per {} s step over the transfer period, all repetitions pooled (box: quartiles; whiskers: 1.5 IQR).",
                            study_step(by_config)
                        ),
                        name,
                        plot::box_plot(&l, &groups),
                    );
                }
            }
            if has(|p| &p.ping) {
                let groups: Vec<(String, Vec<f64>)> = pooled
                    .iter()
                    .map(|(c, p)| (label_of(*c), p.ping.clone()))
                    .collect();
                let l = Labels {
                    title: title("Latency under load"),
                    x_label: "Configuration".into(),
                    y_label: "Ping RTT (ms)".into(),
                };
                push(&mut figs, stem("box_ping"), "RTT of every latency probe (ICMP and UDP) during the transfer period, all repetitions pooled.".into(), name, plot::box_plot(&l, &groups));
            }
        }
        if want("cdf") && has(|p| &p.ping) {
            let series: Vec<(String, Vec<f64>)> = pooled
                .iter()
                .map(|(c, p)| (label_of(*c), p.ping.clone()))
                .collect();
            let l = Labels {
                title: title("Ping CDF"),
                x_label: "Ping RTT (ms)".into(),
                y_label: "Cumulative probability".into(),
            };
            push(
                &mut figs,
                stem("cdf_ping"),
                "Empirical CDF of the latency probes' RTT during the transfer period.".into(),
                name,
                plot::cdf_plot(&l, &series),
            );
        }
        if want("cdf") {
            for (node, series) in ampdu_cdfs(members, by_config, &label_of) {
                let l = Labels {
                    title: title(&format!("A-MPDU sizes of {node}")),
                    x_label: "MPDUs per A-MPDU".into(),
                    y_label: "Cumulative probability".into(),
                };
                push(
                    &mut figs,
                    stem(&format!("cdf_ampdu_{}", slug(&node))),
                    format!(
                        "Distribution of the A-MPDU sizes of Wi-Fi node {node} (percentiles of \
                         its A-MPDUs, all repetitions pooled)."
                    ),
                    name,
                    plot::cdf_plot(&l, &series),
                );
            }
        }
        if pooled.iter().any(|(_, p)| !p.fct.is_empty()) {
            fct_figures(
                &pooled,
                &label_of,
                &want,
                &mut |file, caption, svg| {
                    push(&mut figs, stem(file), caption, name, svg);
                },
                &title,
            );
        }
        if want("ellipse") {
            for (kind, what, f) in [
                (
                    "ellipse_upload",
                    "Upload throughput vs latency",
                    (|p: &Pooled| &p.ellipse_up) as fn(&Pooled) -> &Vec<(f64, f64)>,
                ),
                (
                    "ellipse_sum",
                    "Upload + download throughput vs latency",
                    |p: &Pooled| &p.ellipse_sum,
                ),
            ] {
                let any_download = pooled.iter().any(|(_, p)| !p.download.is_empty());
                if kind == "ellipse_sum" && !any_download {
                    continue;
                }
                let groups: Vec<(String, Vec<(f64, f64)>)> = pooled
                    .iter()
                    .filter(|(_, p)| !f(p).is_empty())
                    .map(|(c, p)| (label_of(*c), f(p).clone()))
                    .collect();
                if groups.is_empty() {
                    continue;
                }
                let l = Labels {
                    title: title(what),
                    x_label: "Ping RTT (ms)".into(),
                    y_label: "Throughput (Mbit/s)".into(),
                };
                push(
                    &mut figs,
                    stem(kind),
                    format!(
                        "{what}: per step, mean probe RTT against throughput; 1-σ covariance ellipse and centroid per configuration."
                    ),
                    name,
                    plot::ellipse_plot(&l, &groups),
                );
            }
        }
        if want("qq") {
            for (c, p) in &pooled {
                let Some(b) = study.baseline_of(*c) else {
                    continue;
                };
                let Some((_, bp)) = pooled.iter().find(|(x, _)| *x == b) else {
                    continue;
                };
                if p.ping.is_empty() || bp.ping.is_empty() {
                    continue;
                }
                let (la, lb) = (label_of(b), label_of(*c));
                let l = Labels {
                    title: title(&format!("Q-Q of ping RTT: {lb} vs {la}")),
                    x_label: format!("{la} ping RTT quantile (ms)"),
                    y_label: format!("{lb} ping RTT quantile (ms)"),
                };
                push(
                    &mut figs,
                    stem(&format!("qq_{}", slug(&lb))),
                    format!(
                        "Quantiles (1 %…99 %) of the probe RTTs of {lb} against its baseline {la}; points above the line: {lb} has higher latency."
                    ),
                    name,
                    plot::qq_plot(&l, (la.as_str(), &bp.ping), (lb.as_str(), &p.ping), 99),
                );
            }
        }
        if want("fairness") {
            for (metric, what) in [("upload_jain", "uploads"), ("download_jain", "downloads")] {
                let bars: Vec<plot::Bar> = members
                    .iter()
                    .filter_map(|&c| {
                        let s = summarize_metric(metric, &values(&by_config[c], metric))?;
                        Some((label_of(c), s.mean, Some((s.ci95_low, s.ci95_high))))
                    })
                    .collect();
                if bars.is_empty() {
                    continue;
                }
                let l = Labels {
                    title: title(&format!("Fairness between the {what}")),
                    x_label: "Configuration".into(),
                    y_label: "Jain's fairness index".into(),
                };
                push(
                    &mut figs,
                    stem(&format!("fairness_{what}")),
                    format!(
                        "Jain's index over the {what}' mean goodputs; mean and 95 % CI over repetitions."
                    ),
                    name,
                    plot::bar_plot(&l, &bars),
                );
            }
        }
        if want("timeseries") {
            for &c in members {
                let Some(r) = by_config[c].first() else {
                    continue;
                };
                let lab = label_of(c);
                let f = slug(&lab);
                // (name, points) per series of the wanted kind: grid values or cwnd samples.
                let pick = |tcp: bool, cwnd: bool| -> Vec<plot::TimeSeries> {
                    r.series
                        .iter()
                        .filter(|s| s.kind.is_tcp() == tcp)
                        .map(|s| {
                            let pts = if cwnd {
                                s.raw
                                    .t
                                    .iter()
                                    .copied()
                                    .zip(s.raw.tcp_cwnd.iter().copied())
                                    .collect()
                            } else {
                                r.x_values
                                    .iter()
                                    .copied()
                                    .zip(s.values.iter().copied())
                                    .collect()
                            };
                            (s.name.clone(), pts)
                        })
                        .collect()
                };
                let (mut tcp, mut pings, cwnd) =
                    (pick(true, false), pick(false, false), pick(true, true));
                // A link whose delay changes: its one-way delay with the ping RTT (alone when
                // the run has no probe).
                let ping_y = if r.delay.is_empty() {
                    "Ping RTT (ms)"
                } else {
                    "Ping RTT; delay: one-way (ms)"
                };
                for d in &r.delay {
                    pings.push((
                        format!("delay {}", d.link),
                        r.x_values
                            .iter()
                            .copied()
                            .zip(d.values.iter().copied())
                            .collect(),
                    ));
                }
                // A link whose rate changes: its capacity under the goodput.
                if !tcp.is_empty() {
                    for c in &r.capacity {
                        tcp.push((
                            format!("capacity {}", c.link),
                            r.x_values
                                .iter()
                                .copied()
                                .zip(c.values.iter().copied())
                                .collect(),
                        ));
                    }
                }
                for (kind, what, y, data) in [
                    ("ts_throughput", "Throughput", "Goodput (Mbit/s)", tcp),
                    ("ts_ping", "Ping", ping_y, pings),
                    ("ts_cwnd", "Congestion window", "cwnd (segments)", cwnd),
                ] {
                    if data.is_empty() {
                        continue;
                    }
                    let l = Labels {
                        title: title(&format!("{what}: {lab}, repetition 0")),
                        x_label: "Time (s)".into(),
                        y_label: y.into(),
                    };
                    push(
                        &mut figs,
                        stem(&format!("{kind}_{f}")),
                        format!("{what} over time, first repetition of {lab}."),
                        name,
                        plot::timeseries_plot(&l, &data),
                    );
                }
            }
        }
    }
    (figs, skipped.into_inner())
}

/// Keeps a figure: (file kind, caption, drawn SVG).
type FigureSink<'a> = dyn FnMut(&str, String, Result<String, plot::PlotError>) + 'a;

/// The FCT figures of a group of configurations with sized flows: with `box`, FCT and
/// slowdown per flow-size bucket (`suite::SIZE_BUCKETS`) and configuration; with `cdf`, the
/// slowdown CDF per configuration. `emit(file kind, caption, svg)` keeps each figure.
fn fct_figures(
    pooled: &[(usize, Pooled)],
    label_of: &dyn Fn(usize) -> String,
    want: &dyn Fn(&str) -> bool,
    emit: &mut FigureSink<'_>,
    title: &dyn Fn(&str) -> String,
) {
    if want("box") {
        for (kind, what, unit, pick) in [
            (
                "box_fct_size",
                "Flow-completion time by flow size",
                "FCT (s)",
                (|f: &(u64, f64, f64)| f.1) as fn(&(u64, f64, f64)) -> f64,
            ),
            (
                "box_slowdown_size",
                "FCT slowdown by flow size",
                "FCT ÷ ideal FCT",
                |f: &(u64, f64, f64)| f.2,
            ),
        ] {
            let mut groups: Vec<(String, Vec<f64>)> = Vec::new();
            for &(bucket, _) in crate::suite::SIZE_BUCKETS {
                for (c, p) in pooled {
                    let v: Vec<f64> = p
                        .fct
                        .iter()
                        .filter(|f| crate::suite::size_bucket(f.0) == bucket)
                        .map(pick)
                        .collect();
                    if !v.is_empty() {
                        groups.push((format!("{} {bucket}", label_of(*c)), v));
                    }
                }
            }
            let l = Labels {
                title: title(what),
                x_label: "Configuration and flow size (small ≤ 100 KB < medium ≤ 10 MB < large)"
                    .into(),
                y_label: unit.into(),
            };
            emit(
                kind,
                format!(
                    "{what}: the completed sized flows of all repetitions pooled, per size bucket (box: quartiles; whiskers: 1.5 IQR). The ideal FCT is the transfer's alone on the empty path."
                ),
                plot::box_plot(&l, &groups),
            );
        }
    }
    if want("cdf") {
        let series: Vec<(String, Vec<f64>)> = pooled
            .iter()
            .filter(|(_, p)| !p.fct.is_empty())
            .map(|(c, p)| (label_of(*c), p.fct.iter().map(|f| f.2).collect()))
            .collect();
        let l = Labels {
            title: title("FCT slowdown CDF"),
            x_label: "FCT ÷ ideal FCT".into(),
            y_label: "Cumulative probability".into(),
        };
        emit(
            "cdf_slowdown",
            "Empirical CDF of the FCT slowdown of the completed sized flows, all repetitions pooled.".into(),
            plot::cdf_plot(&l, &series),
        );
    }
}

/// One Wi-Fi node's counters summed over a configuration's repetitions.
#[derive(Default)]
struct WifiPool {
    role: String,
    runs: u64,
    accesses: u64,
    collisions: u64,
    mpdus: u64,
    retries: u64,
    dropped: u64,
    airtime_share: f64,
    wait_s: f64,
    sizes: Vec<u64>,
}

/// Per Wi-Fi node (`bss/node`, in record order), its counters pooled over `recs`.
fn pool_wifi(recs: &[RunRecord]) -> Vec<(String, WifiPool)> {
    let mut out: Vec<(String, WifiPool)> = Vec::new();
    for r in recs {
        for w in &r.wifi {
            let key = format!("{}/{}", w.bss, w.node);
            let i = match out.iter().position(|(k, _)| *k == key) {
                Some(i) => i,
                None => {
                    out.push((key, WifiPool::default()));
                    out.len() - 1
                }
            };
            let p = &mut out[i].1;
            p.role.clone_from(&w.role);
            p.runs += 1;
            p.accesses += w.accesses;
            p.collisions += w.collisions;
            p.mpdus += w.mpdus_sent;
            p.retries += w.retries;
            p.dropped += w.dropped;
            p.airtime_share += w.airtime_share;
            p.wait_s += w.access_wait_s;
            if p.sizes.len() < w.ampdu_sizes.len() {
                p.sizes.resize(w.ampdu_sizes.len(), 0);
            }
            for (a, b) in p.sizes.iter_mut().zip(&w.ampdu_sizes) {
                *a += b;
            }
        }
    }
    out
}

/// The 101 percentiles (0, 1, …, 100 %) of the A-MPDU sizes a histogram counts: the smallest
/// size whose cumulative count reaches that fraction of all A-MPDUs.
#[expect(
    clippy::cast_precision_loss,
    reason = "A-MPDU counts and sizes far below 2^53"
)]
fn size_percentiles(sizes: &[u64]) -> Vec<f64> {
    let total: u64 = sizes.iter().sum();
    if total == 0 {
        return Vec::new();
    }
    (0..=100u64)
        .map(|q| {
            let need = (total * q).div_ceil(100).max(1);
            let mut cum = 0;
            let k = sizes
                .iter()
                .position(|&c| {
                    cum += c;
                    cum >= need
                })
                .unwrap_or(sizes.len() - 1);
            k as f64
        })
        .collect()
}

/// Per Wi-Fi station (`bss/node`), one CDF series per configuration: (label, percentiles).
type StationCdfs = Vec<(String, Vec<(String, Vec<f64>)>)>;

/// Per Wi-Fi station, its A-MPDU size percentiles per configuration of `members`.
fn ampdu_cdfs(
    members: &[usize],
    by_config: &[Vec<RunRecord>],
    label_of: &dyn Fn(usize) -> String,
) -> StationCdfs {
    let mut out: StationCdfs = Vec::new();
    for &c in members {
        for (node, p) in pool_wifi(&by_config[c]) {
            if p.role != "station" {
                continue;
            }
            let pct = size_percentiles(&p.sizes);
            if pct.is_empty() {
                continue;
            }
            match out.iter_mut().find(|(n, _)| *n == node) {
                Some((_, v)) => v.push((label_of(c), pct)),
                None => out.push((node, vec![(label_of(c), pct)])),
            }
        }
    }
    out
}

/// The report's Wi-Fi section: per configuration and BSS node, its counters per run (means
/// over the repetitions); empty without Wi-Fi.
#[expect(clippy::cast_precision_loss, reason = "counts far below 2^53")]
fn wifi_table(study: &Study, by_config: &[Vec<RunRecord>]) -> String {
    let mut rows = String::new();
    for (c, recs) in by_config.iter().enumerate() {
        let label = study.config_key(c).label;
        for (node, p) in pool_wifi(recs) {
            let runs = p.runs.max(1) as f64;
            let per = |x: u64| x as f64 / runs;
            let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
            let _ = writeln!(
                rows,
                "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td>\
                 <td>{:.0}</td><td>{:.1} %</td><td>{:.2}</td><td>{:.0}</td><td>{:.0}</td>\
                 <td>{:.3}</td><td>{:.1}</td></tr>",
                crate::report::escape(&label),
                crate::report::escape(&node),
                crate::report::escape(&p.role),
                per(p.accesses),
                100.0 * ratio(p.collisions, p.accesses),
                ratio(p.mpdus, p.accesses),
                per(p.retries),
                per(p.dropped),
                p.airtime_share / runs,
                if p.accesses == 0 {
                    0.0
                } else {
                    p.wait_s * 1e6 / p.accesses as f64
                },
            );
        }
    }
    if rows.is_empty() {
        return String::new();
    }
    format!(
        "<h2 id=\"wifi\">Wi-Fi</h2>\n<p class=\"note\">Per configuration and BSS node, over the \
         repetitions: channel accesses per run, the share of them that collided, the mean A-MPDU \
         size (MPDUs sent ÷ accesses), MPDU retries and drops per run, the share of the run its \
         exchanges took the channel, and the mean idle wait (AIFS and backoff) before an access. \
         The A-MPDU size distributions are among the figures.</p>\n<table><tr>\
         <th class=\"l\">configuration</th><th class=\"l\">node</th><th class=\"l\">role</th>\
         <th>accesses</th><th>collided</th><th>mean A-MPDU</th><th>retries</th><th>dropped</th>\
         <th>airtime share</th><th>access wait µs</th></tr>\n{rows}</table>\n"
    )
}

fn study_step(by_config: &[Vec<RunRecord>]) -> String {
    by_config
        .iter()
        .flatten()
        .find_map(|r| r.test.as_ref().map(|t| t.step_s))
        .map_or_else(|| "sample".into(), |s| format!("{s}"))
}

#[cfg(test)]
mod tests {
    use super::size_percentiles;

    /// Two A-MPDUs of 1 MPDU and two of 3: half of them are at most 1, the rest 3; the 0th
    /// percentile is the smallest size that occurred, the 100th the largest.
    #[test]
    fn percentiles_of_a_histogram() {
        let p = size_percentiles(&[0, 2, 0, 2]);
        assert_eq!(p.len(), 101);
        assert_eq!((p[0], p[50], p[51], p[100]), (1.0, 1.0, 3.0, 3.0));
        assert!(p.windows(2).all(|w| w[0] <= w[1]));
        assert!(size_percentiles(&[0, 0]).is_empty());
        assert_eq!(size_percentiles(&[0, 0, 0, 0, 7]), vec![4.0; 101]);
    }
}
