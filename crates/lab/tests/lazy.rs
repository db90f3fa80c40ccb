//! Studies are expanded lazily: a parsed study holds its base scenario and its axes, and
//! resolves a configuration or a run from its index when asked. Walking every run of a study
//! at the size limit — what `cclab study --dry-run` does, and the runner before it runs
//! anything (the store's state of every run, the manifest) — must not hold the runs or the
//! configurations in memory: the process's peak resident set may grow by far less than they
//! would take (several hundred bytes of spec per run, a checked scenario per configuration).
//! The only test of this file, so that no other test allocates while it measures.

use std::path::Path;

use cclab_lab::study::run::{in_shard, write_manifest};
use cclab_lab::study::store::{RunState, Store};
use cclab_lab::study::{self, MAX_RUNS};

/// The process's peak resident set (`VmHWM`) in bytes, where Linux reports it.
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// A study of `delays × durations` configurations × `repetitions` of a one-flow dumbbell.
fn study_text(delays: usize, durations: usize, repetitions: usize) -> String {
    let list = |n: usize, unit: &str| {
        (1..=n)
            .map(|i| format!("\"{i}{unit}\""))
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "name = \"big\"\nrepetitions = {repetitions}\n[base]\nname = \"b\"\n\
         [base.topology]\npreset = \"dumbbell\"\nrate = \"10Mbit\"\ndelay = \"10ms\"\n\
         [[base.flows]]\ncontroller = \"cubic\"\n\
         [grid]\ntopology.delay = [{}]\nduration = [{}]\n",
        list(delays, "ms"),
        list(durations, "s")
    )
}

/// Parse the study, then walk its runs in shard 1/1 as the dry run does and write its
/// manifest as the runner does; the number of runs seen.
fn walk(text: &str, dir: &Path) -> usize {
    let st = study::parse(text, "big.toml", Path::new(".")).unwrap_or_else(|e| panic!("{e}"));
    let store = Store::open(dir).unwrap();
    let mut n = 0;
    for r in st.run_specs() {
        assert!(in_shard(r.index, Some((1, 1))).unwrap());
        assert_eq!(store.state(&r.id), RunState::Missing);
        n += 1;
    }
    write_manifest(&st, &store).unwrap();
    assert_eq!(st.run(n - 1).index, n - 1);
    n
}

#[test]
fn a_study_at_the_size_limit_is_walked_without_holding_its_runs() {
    let dir = std::env::temp_dir().join(format!("cclab-lazy-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // Warm up (allocator arenas, lazily built tables) on a small study.
    assert_eq!(walk(&study_text(2, 2, 1), &dir), 4);
    let before = peak_rss();
    // 20 000 configurations × 5 repetitions = 100 000 runs, the most a study may have.
    assert_eq!(walk(&study_text(100, 200, 5), &dir), MAX_RUNS);
    let manifest = std::fs::metadata(dir.join("manifest.json")).unwrap().len();
    std::fs::remove_dir_all(&dir).unwrap();
    let (Some(before), Some(after)) = (before, peak_rss()) else {
        return; // no /proc: the walk above still checked every run
    };
    // Eager expansion held every run's spec (hundreds of MB here) and every configuration's
    // scenario; the manifest alone is larger than the bound.
    let grown = after.saturating_sub(before);
    assert!(manifest > 16 << 20, "manifest of {manifest} bytes");
    assert!(
        grown < 16 << 20,
        "peak resident set grew by {} MiB walking {MAX_RUNS} runs",
        grown >> 20
    );
}
