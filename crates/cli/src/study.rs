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
    // One run at a time: a large study is never held in memory.
    for r in st.run_specs() {
        if !run::in_shard(r.index, shard)? {
            continue;
        }
        selected += 1;
        match store.state(&r.id) {
            store::RunState::Valid => valid += 1,
            store::RunState::Missing => missing += 1,
            store::RunState::Corrupt(_) => corrupt += 1,
        }
    }
    note!(
        "store {}: {valid} valid, {missing} missing, {corrupt} corrupt of {selected} runs",
        dir.display(),
    );
    if let Some(old) = store.manifest_model()
        && old.as_deref() != Some(st.model.as_str())
    {
        note!(
            "the store's results come from {} (this cclab is model {}): none would be reused",
            old.map_or_else(
                || "a cclab that wrote no model version".to_owned(),
                |m| format!("model {m}")
            ),
            st.model
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
            "{}: its results come from {}, whose results differ from this cclab's (model {}): \
             none is reused, every run is done again; the old run files stay in {}",
            dir.display(),
            old.as_ref().map_or_else(
                || "a cclab that wrote no model version".to_owned(),
                |m| format!("model {m}")
            ),
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
