//! `cclab study` and `cclab merge`: progress display and messages around `cclab_lab::study`.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use anyhow::{Context, Result};
use cclab_lab::study::{self, run, store};
use indicatif::{ProgressBar, ProgressStyle};

/// Run (or resume) studies one after the other and analyse each when complete. Every file is
/// read and checked before the first run, so a mistake in the last file costs no run time.
pub fn run_study(
    files: &[PathBuf],
    out: &Path,
    jobs: Option<usize>,
    shard: Option<(usize, usize)>,
    dry_run: bool,
    max_runs: Option<usize>,
    quiet: bool,
) -> Result<()> {
    let studies = files
        .iter()
        .map(study::load)
        .collect::<Result<Vec<_>, _>>()?;
    for (i, st) in studies.iter().enumerate() {
        if let Some(j) = studies[..i].iter().position(|o| o.name == st.name) {
            anyhow::bail!(
                "{} and {} are both study `{}`: their results would share {}",
                files[j].display(),
                files[i].display(),
                st.name,
                out.join(&st.name).display()
            );
        }
    }
    let started = std::time::Instant::now();
    for (st, file) in studies.iter().zip(files) {
        if dry_run {
            dry(st, out, shard)?;
        } else {
            run_loaded(st, file, out, jobs, shard, max_runs, quiet)?;
        }
    }
    if studies.len() > 1 && !dry_run {
        note!(
            "{} studies done in {:.1} s wall",
            studies.len(),
            started.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

fn dry(st: &study::Study, out: &Path, shard: Option<(usize, usize)>) -> Result<()> {
    let dir = out.join(&st.name);
    note_raw!("{}", st.describe());
    warn_statistics(st);
    let store = store::Store::open(&dir)
        .with_context(|| format!("cannot create the study directory {}", dir.display()))?;
    run::check_shard(shard)?;
    let (mut selected, mut valid, mut missing, mut corrupt) = (0, 0, 0, 0);
    // Packets of the runs to do, from a sample of their configurations (at most
    // ESTIMATE_SAMPLE are parsed again).
    let step = st.config_count().div_ceil(ESTIMATE_SAMPLE).max(1);
    let (mut sampled_runs, mut sampled_packets) = (0_u64, 0.0_f64);
    let mut last: Option<(usize, f64)> = None;
    // One run at a time: a large study is never held in memory.
    for r in st.run_specs() {
        if !run::in_shard(r.index, shard)? {
            continue;
        }
        selected += 1;
        match store.state(&r.id) {
            store::RunState::Valid => {
                valid += 1;
                continue;
            }
            store::RunState::Missing => missing += 1,
            store::RunState::Corrupt(_) => corrupt += 1,
        }
        if r.config % step == 0 {
            let packets = match last {
                Some((c, p)) if c == r.config => p,
                _ => st
                    .config(r.config)
                    .map_or(0.0, |c| run_packets(&c.scenario)),
            };
            last = Some((r.config, packets));
            sampled_runs += 1;
            sampled_packets += packets;
        }
    }
    note!(
        "store {}: {valid} valid, {missing} missing, {corrupt} corrupt of {selected} runs",
        dir.display(),
    );
    if let Some(old) = store.other_model(&st.model) {
        note!(
            "the store's results come from {old} (this cclab is model {}): none would be reused",
            st.model
        );
    }
    let to_do = missing + corrupt;
    if to_do > 0 && sampled_runs > 0 {
        let cpu_s = sampled_packets / sampled_runs as f64 * to_do as f64 / PACKETS_PER_CPU_SECOND;
        note!(
            "estimate: about {} of CPU time for the {to_do} runs to do ({} wall on {} cores) with \
             a release build; basis: each run delivers its slowest link's rate × duration in \
             1514-byte packets, at the {:.1} M packets per CPU-second of benchmark (a) in \
             BENCHMARKS.md (a debug build is about 10× slower)",
            fmt_seconds(cpu_s),
            fmt_seconds(cpu_s / cores() as f64),
            cores(),
            PACKETS_PER_CPU_SECOND / 1e6
        );
    }
    Ok(())
}

/// Print what makes the study's statistics weak before any run (too few repetitions for a
/// comparison ever to be significant), so a study can be fixed before it costs run time.
fn warn_statistics(st: &study::Study) {
    for w in cclab_lab::analysis::study_warnings(st) {
        note!("warning: {w}");
    }
}

/// Delivered data packets per CPU-second of a release build on which `--dry-run` bases its
/// estimate: benchmark (a) of BENCHMARKS.md (6.9 M on its 2-vCPU machine).
const PACKETS_PER_CPU_SECOND: f64 = 6.9e6;
/// Wire bytes of the full-size packet the estimate counts: a 1460-byte MSS with 40 bytes of
/// TCP/IP and 14 of Ethernet header.
const ESTIMATE_PACKET_BYTES: f64 = 1514.0;
/// Most configurations `--dry-run` parses again for its estimate (evenly spread).
const ESTIMATE_SAMPLE: usize = 200;

/// Packets a run of `sc` delivers by the estimate's basis: its slowest link full for the
/// whole duration (0 when no link has a rate).
fn run_packets(sc: &cclab_lab::scenario::Scenario) -> f64 {
    let cfg = sc.to_sim_config();
    cfg.links
        .iter()
        .filter_map(|l| l.rate_bps)
        .filter(|&r| r > 0)
        .min()
        .map_or(0.0, |r| {
            r as f64 * cfg.duration.as_secs_f64() / (8.0 * ESTIMATE_PACKET_BYTES)
        })
}

/// `42 s`, `12 min`, `3.5 h`.
fn fmt_seconds(s: f64) -> String {
    if s < 120.0 {
        format!("{s:.0} s")
    } else if s < 7200.0 {
        format!("{:.0} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

/// Run (or resume) a parsed study (`file` is only named in messages) and analyse it.
pub fn run_loaded(
    st: &study::Study,
    file: &Path,
    out: &Path,
    jobs: Option<usize>,
    shard: Option<(usize, usize)>,
    max_runs: Option<usize>,
    quiet: bool,
) -> Result<()> {
    let dir = out.join(&st.name);
    note_raw!("{}", st.describe());
    warn_statistics(st);
    if let Some(j) = jobs
        && j > cores()
    {
        note!(
            "warning: -j {j} is more than the {} cores of this machine: the runs will not \
             finish sooner",
            cores()
        );
    }
    let store = store::Store::open(&dir)
        .with_context(|| format!("cannot create the study directory {}", dir.display()))?;
    cclab_lab::output::check_writable(&dir.join("runs"))
        .with_context(|| format!("cannot write the study directory {}", dir.display()))?;
    say_how_to_resume_on_interrupt(&dir);
    let bar = Mutex::new(None::<ProgressBar>);
    let panic_after = panic_after_runs();
    let stored = AtomicUsize::new(0);
    let progress = |e: run::Event| match e {
        run::Event::Start { pending } => {
            if !quiet && pending > 0 {
                let b = ProgressBar::new(pending as u64);
                b.set_style(
                    ProgressStyle::with_template(
                        "{bar:40} {pos}/{len} runs  {elapsed_precise} elapsed, ETA {eta}  {msg}",
                    )
                    .expect("valid template"),
                );
                b.enable_steady_tick(Duration::from_millis(500));
                *bar.lock().expect("bar lock") = Some(b);
            }
        }
        run::Event::Done { config, rep, .. } => {
            if let Some(b) = bar.lock().expect("bar lock").as_ref() {
                b.set_message(format!("{config} #{rep}"));
                b.inc(1);
            }
            let n = stored.fetch_add(1, Ordering::SeqCst) + 1;
            if panic_after == Some(n) {
                panic!("deliberate internal error after {n} stored runs ({PANIC_AFTER_RUNS}={n})");
            }
        }
    };
    let opts = run::Options {
        jobs,
        shard,
        max_runs,
    };
    let o = run::execute(st, &store, &opts, &progress)?;
    if let Some(b) = bar.lock().expect("bar lock").take() {
        b.finish_and_clear();
    }
    if let Some(old) = &o.replaced_model {
        note!(
            "{}: its results come from {old}, whose results differ from this cclab's (model {}): \
             none is reused, every run is done again; the old run files stay in {}",
            dir.display(),
            st.model,
            dir.join("runs").display()
        );
    }
    for (id, why) in &o.corrupt {
        note!("corrupt result {id}: {why}; redone");
    }
    let threads = o.threads;
    note!(
        "{} runs in {}: {} valid results reused, {} missing and {} corrupt redone; ran {} in \
         {:.1} s wall on {threads} threads ({:.1} s simulating, {:.2} s other work per run \
         summed: {:.1} % overhead)",
        o.selected,
        match shard {
            Some((i, n)) => format!("shard {i}/{n}"),
            None => "the study".to_owned(),
        },
        o.skipped,
        o.missing.saturating_sub(o.left),
        o.corrupt.len(),
        o.ran,
        o.wall.as_secs_f64(),
        o.sim_time.as_secs_f64(),
        o.overhead_time.as_secs_f64(),
        100.0 * o.overhead_time.as_secs_f64() / o.sim_time.as_secs_f64().max(1e-9),
    );
    if o.left > 0 {
        note!(
            "stopped after {} runs as asked; {} runs left: run the same command again to resume",
            o.ran,
            o.left
        );
        return Ok(());
    }
    if let Some((i, n)) = shard {
        note!(
            "shard {i}/{n} complete in {}; when every shard is done, `cclab merge --into DIR \
             SHARD_DIRS…` and `cclab study {} --out PARENT_OF_DIR` write the analysis",
            dir.display(),
            file.display()
        );
        return Ok(());
    }
    let report = cclab_lab::analysis::analyse(st, &store)?;
    for n in &report.not_drawn {
        note!("warning: {n}");
    }
    note!(
        "wrote {} files to {} (report: {})",
        report.files.len(),
        dir.display(),
        dir.join("report.html").display()
    );
    crate::emit(&report.table)
}

/// The study directory whose runs an interruption reports (the study under way).
static INTERRUPTED_STUDY: Mutex<Option<PathBuf>> = Mutex::new(None);

/// Exit status after Ctrl-C (SIGINT) or SIGTERM during a study: 128 + SIGINT's number, the
/// shell's convention for a process ended by that signal.
pub const EXIT_INTERRUPTED: i32 = 130;

/// On Ctrl-C (SIGINT) or SIGTERM, say how many runs of the study in `dir` are stored and how to
/// resume, then exit with [`EXIT_INTERRUPTED`]. The store stays valid: every run is written to
/// a temporary file and renamed, and the next `Store::open` removes a dead process's temporary
/// files.
fn say_how_to_resume_on_interrupt(dir: &Path) {
    *INTERRUPTED_STUDY.lock().expect("study lock") = Some(dir.to_owned());
    // One handler per process (several studies run one after the other): a second
    // `set_handler` fails and the first one, which reads INTERRUPTED_STUDY, stays.
    let _ = ctrlc::set_handler(|| {
        let dir = INTERRUPTED_STUDY
            .lock()
            .map(|d| d.clone())
            .unwrap_or_default();
        if let Some(dir) = dir {
            let runs = std::fs::read_dir(dir.join("runs")).map_or(0, |entries| {
                entries
                    .filter_map(Result::ok)
                    .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
                    .count()
            });
            note!(
                "\ninterrupted: {runs} run{} of this study {} stored in {}; run the same command \
                 again to resume (stored runs are reused)",
                if runs == 1 { "" } else { "s" },
                if runs == 1 { "is" } else { "are" },
                dir.join("runs").display()
            );
        }
        std::process::exit(EXIT_INTERRUPTED);
    });
}

/// Environment variable that makes a debug build panic once `K` runs of a study are stored
/// (release builds ignore it): a deliberate internal error, so that tests can check how one
/// ends (exit status 3, the runs stored before it kept for the next attempt).
pub const PANIC_AFTER_RUNS: &str = "CCLAB_TEST_PANIC_AFTER_RUNS";

/// `K` of [`PANIC_AFTER_RUNS`] in a debug build, if set to a number.
fn panic_after_runs() -> Option<usize> {
    if !cfg!(debug_assertions) {
        return None;
    }
    std::env::var(PANIC_AFTER_RUNS).ok()?.trim().parse().ok()
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
}

/// Merge shard stores: every valid run is copied, every skipped file is reported with the
/// reason; an error (exit status 1) after the copy when a file was skipped as invalid or two
/// stores disagree on a run.
pub fn merge(into: &Path, shards: &[PathBuf]) -> Result<()> {
    if into.exists() && !into.is_dir() {
        anyhow::bail!(
            "--into {}: not a directory (give the study directory to fill, e.g. cclab-out/NAME)",
            into.display()
        );
    }
    for shard in shards {
        if !shard.join("runs").is_dir() {
            anyhow::bail!("{}", not_a_store(shard));
        }
    }
    let r = store::merge(into, shards)
        .with_context(|| format!("cannot merge into {}", into.display()))?;
    for (p, why) in &r.invalid {
        note!("skipped {}: {why}", p.display());
    }
    for id in &r.conflicts {
        note!("conflict: run {id} differs between the stores (kept the first copy)");
    }
    note!(
        "merged into {}: {} runs copied, {} already present, {} invalid, {} conflicting",
        into.display(),
        r.copied,
        r.identical,
        r.invalid.len(),
        r.conflicts.len()
    );
    if !r.conflicts.is_empty() {
        anyhow::bail!(
            "{} runs differ between the stores although a run depends only on its spec and \
             seed: the stores were written by different cclab versions or altered; remove the \
             conflicting runs from {} and merge again",
            r.conflicts.len(),
            into.display()
        );
    }
    if !r.invalid.is_empty() {
        let n = r.invalid.len();
        anyhow::bail!(
            "{n} run {} not valid runs of the study and {} skipped (named above with the \
             reason); the valid runs are merged into {}: remove the skipped files or run the \
             study on their shard (it redoes corrupt runs), then merge again",
            if n == 1 { "file was" } else { "files were" },
            if n == 1 { "was" } else { "were" },
            into.display()
        );
    }
    Ok(())
}

/// Why `dir` is not a study directory, with the study directory inside it when there is one
/// (a shard's `--out` given instead of its study directory).
fn not_a_store(dir: &Path) -> String {
    let what = if dir.is_dir() {
        "not a study directory (it has no runs/)"
    } else if dir.exists() {
        "not a directory"
    } else {
        "no such directory"
    };
    let inner = std::fs::read_dir(dir).ok().and_then(|entries| {
        entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .find(|p| p.join("runs").is_dir())
    });
    match inner {
        Some(p) => format!("{}: {what}; did you mean {}?", dir.display(), p.display()),
        None => format!(
            "{}: {what}; give the study directories the shards wrote (OUT/NAME of `cclab study \
             --shard I/N --out OUT`)",
            dir.display()
        ),
    }
}
