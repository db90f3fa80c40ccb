//! Results do not change by accident: every shipped scenario (every configuration of every shipped
//! study of up to 100 configurations, an even sample of 24 of a larger one, and every benchmark
//! scenario) is run, shortened, and the SHA-256 of its output files
//! (`summary.json`, `flows.csv`, `queues.csv`, `probes.csv`, `cc_stats.csv`, `trace.csv`,
//! `udp.csv`, and with Wi-Fi `wifi.csv`, `wifi_ampdu.csv`) is compared with the table in `tests/golden/hashes.txt`, recorded before a
//! restructuring.
//!
//! A mismatch is a change of result. It is a finding to explain, not noise: find the commit that
//! changed the result and why, say so in the commit and in the table's comment, and only then
//! record again with `CCLAB_RECORD_GOLDEN=1 cargo test -p cclab-lab --test golden` (which rewrites
//! the table and fails, so that a recording is never mistaken for a pass).
//!
//! To see what changed, `CCLAB_GOLDEN_DUMP=DIR` writes each run's hashed bytes to `DIR/KEY.txt`;
//! dump before and after a change and compare the two directories with `diff -r`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use cclab_lab::{Overrides, output, scenario, study};
use cclab_sim::{Dur, SimConfig, Simulation};
use sha2::{Digest, Sha256};

/// Scenarios are cut to this many simulated seconds (the Flent tests start their transfers at
/// 5 s, so 5 s of transfer remain): long enough for slow start, losses, recovery, BBR's first
/// ProbeBW cycles and the AQMs' control loops, short enough for the whole table to run in a few
/// seconds.
const CUT: Dur = Dur::from_secs(10);

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn table_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/hashes.txt")
}

/// The hex SHA-256 of every output file of `cfg`'s run, in a fixed order (`key`: the run's row
/// in the table).
fn run_hash(key: &str, name: &str, mut cfg: SimConfig) -> String {
    cfg.duration = cfg.duration.min(CUT);
    cfg.sample_interval = cfg.sample_interval.min(cfg.duration);
    let results = Simulation::new(cfg)
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .run();
    let mut h = Sha256::new();
    let mut buf = Vec::new();
    output::write_summary_json(&mut buf, name, &results).unwrap();
    output::write_flows_csv(&mut buf, &results).unwrap();
    output::write_queues_csv(&mut buf, &results).unwrap();
    output::write_probes_csv(&mut buf, &results).unwrap();
    output::write_cc_stats_csv(&mut buf, &results).unwrap();
    if output::has_trace(&results) {
        output::write_trace_csv(&mut buf, &results).unwrap();
    }
    if !results.udp.is_empty() {
        output::write_udp_csv(&mut buf, &results).unwrap();
    }
    if !results.wifi.is_empty() {
        output::write_wifi_csv(&mut buf, &results).unwrap();
        output::write_wifi_ampdu_csv(&mut buf, &results).unwrap();
    }
    h.update(&buf);
    if let Some(dir) = std::env::var_os("CCLAB_GOLDEN_DUMP") {
        let file: String = key
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' {
                    c
                } else {
                    '-'
                }
            })
            .collect();
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(Path::new(&dir).join(format!("{file}.txt")), &buf).unwrap();
    }
    study::hex(&h.finalize())
}

/// Studies of up to this many configurations are hashed whole; larger ones (the startup
/// studies' thousands) by an even sample of [`SAMPLE`] configurations, so the test stays within
/// CI's time.
const WHOLE: usize = 100;
/// Configurations hashed of a larger study.
const SAMPLE: usize = 24;

/// Whether configuration `i` of `n` is hashed: all of a small study, else every
/// ⌈n / SAMPLE⌉-th from the first (spread over every axis, the last varying fastest).
fn sampled(i: usize, n: usize) -> bool {
    n <= WHOLE || i.is_multiple_of(n.div_ceil(SAMPLE))
}

/// Every (key, hash) the shipped scenarios, studies and benchmarks give today.
fn current() -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let dir = root().join("scenarios");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    for file in files {
        let stem = file.file_stem().unwrap().to_string_lossy().into_owned();
        if stem.ends_with("_study") {
            let st = study::load(&file).unwrap_or_else(|e| panic!("{e}"));
            let n = st.config_count();
            for i in (0..n).filter(|&i| sampled(i, n)) {
                // Repetition 0, resolved as the study resolves it: with the run's seed.
                let r = st.run(i * st.repetitions as usize);
                let c = st.run_config(&r).unwrap_or_else(|e| panic!("{e}"));
                let sc = &c.scenario;
                let key = format!("{stem} [{}]", c.label);
                let hash = run_hash(&key, &sc.name, sc.to_sim_config());
                out.insert(key, hash);
            }
        } else {
            let (sc, cfg) =
                scenario::load_with(&file, &Overrides::default()).unwrap_or_else(|e| panic!("{e}"));
            let hash = run_hash(&stem, &sc.name, cfg);
            out.insert(stem, hash);
        }
    }
    for b in cclab_lab::bench::scenarios() {
        let cfg = b.cfg.clone();
        let key = format!("bench {}", b.id);
        let hash = run_hash(&key, b.id, cfg);
        out.insert(key, hash);
    }
    out
}

fn recorded() -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(table_path()).unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (hash, key) = l.split_once(' ').expect("`HASH KEY` per line");
            (key.to_owned(), hash.to_owned())
        })
        .collect()
}

#[test]
fn results_of_shipped_scenarios_are_unchanged() {
    let now = current();
    if std::env::var_os("CCLAB_RECORD_GOLDEN").is_some() {
        let old = std::fs::read_to_string(table_path()).unwrap_or_default();
        let mut text: String =
            old.lines()
                .filter(|l| l.starts_with('#'))
                .fold(String::new(), |mut s, l| {
                    let _ = writeln!(s, "{l}");
                    s
                });
        for (k, h) in &now {
            let _ = writeln!(text, "{h} {k}");
        }
        std::fs::write(table_path(), text).unwrap();
        panic!(
            "recorded {} hashes into {}; unset CCLAB_RECORD_GOLDEN",
            now.len(),
            table_path().display()
        );
    }
    let was = recorded();
    let mut problems = Vec::new();
    for (k, h) in &now {
        match was.get(k) {
            None => problems.push(format!("{k}: not recorded (new scenario? record it)")),
            Some(w) if w != h => problems.push(format!("{k}: result changed ({w} -> {h})")),
            Some(_) => {}
        }
    }
    for k in was.keys() {
        if !now.contains_key(k) {
            problems.push(format!("{k}: recorded but no longer shipped"));
        }
    }
    assert!(
        problems.is_empty(),
        "{} of {} results differ from tests/golden/hashes.txt:\n{}",
        problems.len(),
        now.len(),
        problems.join("\n")
    );
}
