//! End-to-end tests of studies: run, interrupt, corrupt, resume, shard, merge, analyse; and the
//! errors bad study files get.

use std::fs;
use std::path::{Path, PathBuf};

use cclab_lab::analysis;
use cclab_lab::study::run::{self, Options};
use cclab_lab::study::store::{self, Store};
use cclab_lab::study::{self, Study};

/// A small but complete design: two tests (one with downloads), two controllers, two
/// repetitions, 4 s transfers.
const TINY: &str = r#"
name = "tiny"
seed = 7
repetitions = 2

[base]
name = "tiny"
[base.test]
name = "tcp_upload"
length = "4s"
delay = "1s"
[base.tcp]
controller = "cubic"
[base.topology]
preset = "access"
rate = "10Mbit"
delay = "5ms"
buffer = "2bdp"

[grid]
test.name = ["tcp_upload", "rrul_be"]
tcp.controller = ["cubic", "bbr3"]

[analysis]
baseline = { tcp.controller = "bbr3" }
png = false
"#;

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("cclab-study-test-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

fn tiny() -> Study {
    study::parse(TINY, "tiny.toml", Path::new(".")).unwrap()
}

fn quiet(_: run::Event) {}

fn run_all(st: &Study, dir: &Path, opts: Options) -> run::Outcome {
    let store = Store::open(dir).unwrap();
    run::execute(st, &store, &opts, &quiet).unwrap()
}

fn read(dir: &Path, name: &str) -> Vec<u8> {
    fs::read(dir.join(name)).unwrap_or_else(|e| panic!("{}: {e}", dir.join(name).display()))
}

fn run_files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = fs::read_dir(dir.join("runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                fs::read(&p).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn interrupted_corrupted_resumed_and_sharded_studies_equal_the_uninterrupted_one() {
    let st = tiny();
    assert_eq!(st.config_count(), 4);
    let runs = st.runs();
    assert_eq!(runs.len(), 8);

    // Uninterrupted, two threads.
    let a = tmp("a");
    let o = run_all(
        &st,
        &a,
        Options {
            jobs: Some(2),
            ..Options::default()
        },
    );
    assert_eq!((o.ran, o.skipped, o.missing), (8, 0, 8));
    analysis::analyse(&st, &Store::open(&a).unwrap()).unwrap();
    let stats_a = read(&a, "stats.csv");
    assert!(String::from_utf8_lossy(&stats_a).contains("upload_mbps"));

    // Interrupted after 3 runs, on one thread.
    let b = tmp("b");
    let o = run_all(
        &st,
        &b,
        Options {
            jobs: Some(1),
            max_runs: Some(3),
            ..Options::default()
        },
    );
    assert_eq!((o.ran, o.left), (3, 5));
    assert!(analysis::analyse(&st, &Store::open(&b).unwrap()).is_err());
    // A second interruption, then damage: one result cut short, one deleted, one rewritten
    // with a wrong checksum, and a temporary file as `kill -9` leaves it.
    let o = run_all(
        &st,
        &b,
        Options {
            jobs: Some(2),
            max_runs: Some(3),
            ..Options::default()
        },
    );
    assert_eq!((o.skipped, o.ran, o.left), (3, 3, 2));
    let store_b = Store::open(&b).unwrap();
    let p0 = store_b.run_path(&runs[0].id);
    let bytes = fs::read(&p0).unwrap();
    fs::write(&p0, &bytes[..bytes.len() / 2]).unwrap();
    fs::remove_file(store_b.run_path(&runs[1].id)).unwrap();
    let p2 = store_b.run_path(&runs[2].id);
    let mut bytes = fs::read(&p2).unwrap();
    let last = bytes.len() - 2;
    bytes[last] = if bytes[last] == b'1' { b'2' } else { b'1' };
    fs::write(&p2, &bytes).unwrap();
    fs::write(
        b.join("runs").join(".x.json.tmp-999999999-ThreadId(2)"),
        b"partial",
    )
    .unwrap();
    // The analysis reports the damage instead of crashing.
    let err = analysis::analyse(&st, &Store::open(&b).unwrap()).unwrap_err();
    assert!(
        err.to_string().contains("checksum") || err.to_string().contains("missing"),
        "{err}"
    );
    // Resume: the two corrupt ones and every missing one are redone, the rest reused.
    let o = run_all(&st, &b, Options::default());
    assert_eq!(o.corrupt.len(), 2, "{:?}", o.corrupt);
    assert!(
        o.corrupt.iter().all(|(_, why)| why.contains("checksum")),
        "{:?}",
        o.corrupt
    );
    assert_eq!(o.missing, 3); // the deleted one and the two never run
    assert_eq!(o.skipped, 3);
    assert_eq!(o.ran, 5);
    assert!(
        !b.join("runs")
            .join(".x.json.tmp-999999999-ThreadId(2)")
            .exists()
    );
    analysis::analyse(&st, &Store::open(&b).unwrap()).unwrap();
    assert_eq!(run_files(&a), run_files(&b));
    assert_eq!(
        stats_a,
        read(&b, "stats.csv"),
        "stats.csv differs after resume"
    );
    assert_eq!(read(&a, "runs.csv"), read(&b, "runs.csv"));
    assert_eq!(read(&a, "stats.json"), read(&b, "stats.json"));
    assert_eq!(read(&a, "report.html"), read(&b, "report.html"));

    // Shards 1/2 and 2/2 (disjoint, covering), merged, equal the unsharded store.
    let (s1, s2, m) = (tmp("s1"), tmp("s2"), tmp("m"));
    let o1 = run_all(
        &st,
        &s1,
        Options {
            shard: Some((1, 2)),
            ..Options::default()
        },
    );
    let o2 = run_all(
        &st,
        &s2,
        Options {
            shard: Some((2, 2)),
            ..Options::default()
        },
    );
    assert_eq!((o1.selected, o2.selected), (4, 4));
    let r = store::merge(&m, &[s1.clone(), s2.clone()]).unwrap();
    assert_eq!((r.copied, r.identical, r.conflicts.len()), (8, 0, 0));
    assert_eq!(run_files(&a), run_files(&m));
    let o = run_all(&st, &m, Options::default());
    assert_eq!((o.skipped, o.ran), (8, 0));
    analysis::analyse(&st, &Store::open(&m).unwrap()).unwrap();
    assert_eq!(stats_a, read(&m, "stats.csv"));

    // A changed definition shares no run with the old one.
    let changed = study::parse(
        &TINY.replace("\"10Mbit\"", "\"12Mbit\""),
        "t.toml",
        Path::new("."),
    )
    .unwrap();
    let o = run_all(
        &changed,
        &a,
        Options {
            max_runs: Some(0),
            ..Options::default()
        },
    );
    assert_eq!((o.skipped, o.missing), (0, 8));

    for d in [a, b, s1, s2, m] {
        let _ = fs::remove_dir_all(d);
    }
}

#[test]
fn runs_have_stable_distinct_ids_and_common_seeds() {
    let st = tiny();
    let runs = st.runs();
    let mut ids: Vec<&str> = runs.iter().map(|r| r.id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), runs.len());
    assert!(runs.iter().all(|r| r.id.len() == 64));
    // Same repetition, same seed in every configuration; repetitions differ.
    for r in &runs {
        assert_eq!(r.seed, study::derive_seed(7, r.rep));
    }
    assert_ne!(study::derive_seed(7, 0), study::derive_seed(7, 1));
    // Parsing again gives the same ids.
    assert_eq!(runs, tiny().runs());
    // Configurations: first axis slowest, labels from the levels.
    let labels: Vec<String> = st.configs().map(|c| c.unwrap().label).collect();
    assert_eq!(
        labels,
        [
            "test.name=tcp_upload tcp.controller=cubic",
            "test.name=tcp_upload tcp.controller=bbr3",
            "test.name=rrul_be tcp.controller=cubic",
            "test.name=rrul_be tcp.controller=bbr3",
        ]
    );
    assert_eq!(st.baseline_of(0), Some(1));
    assert_eq!(st.baseline_of(1), None);
    assert_eq!(st.baseline_of(2), Some(3));
}

/// The line of `needle`'s first occurrence in `text`, 1-based.
fn line_of(text: &str, needle: &str) -> usize {
    text[..text.find(needle).expect("needle")]
        .matches('\n')
        .count()
        + 1
}

fn error_of(text: &str) -> String {
    study::parse(text, "s.toml", Path::new("."))
        .map(|_| ())
        .unwrap_err()
        .to_string()
}

#[test]
fn bad_studies_are_rejected_with_file_line_and_field() {
    // Unknown field at the top level.
    let t = TINY.replace("repetitions = 2", "repetitions = 2\nrepetitons = 3");
    let e = error_of(&t);
    assert!(
        e.starts_with(&format!("s.toml:{}:", line_of(&t, "repetitons"))),
        "{e}"
    );
    assert!(e.contains("repetitons") && e.contains("repetitions"), "{e}");

    // repetitions = 0.
    let t = TINY.replace("repetitions = 2", "repetitions = 0");
    let e = error_of(&t);
    assert!(
        e.starts_with(&format!("s.toml:{}:", line_of(&t, "repetitions = 0"))),
        "{e}"
    );
    assert!(e.contains("repetitions"), "{e}");

    // Empty grid.
    let t = TINY
        .replace(
            "test.name = [\"tcp_upload\", \"rrul_be\"]\ntcp.controller = [\"cubic\", \"bbr3\"]",
            "",
        )
        .replace("baseline = { tcp.controller = \"bbr3\" }", "");
    let e = error_of(&t);
    assert!(
        e.contains(&format!("s.toml:{}:", line_of(&t, "[grid]"))),
        "{e}"
    );
    assert!(e.contains("grid") && e.contains("empty"), "{e}");

    // An axis without levels.
    let t = TINY.replace(
        "tcp.controller = [\"cubic\", \"bbr3\"]",
        "tcp.controller = []",
    );
    let e = error_of(&t);
    assert!(
        e.contains("grid.tcp.controller") && e.contains("at least one level"),
        "{e}"
    );

    // A grid over a field that does not exist.
    let t = TINY.replace("[grid]\n", "[grid]\ntopology.bogus = [1, 2]\n");
    let e = error_of(&t);
    assert!(
        e.contains(&format!("s.toml:{}:", line_of(&t, "topology.bogus"))),
        "{e}"
    );
    assert!(
        e.contains("grid.topology.bogus") && e.contains("unknown field `bogus`"),
        "{e}"
    );

    // Controllers that do not exist: every one is named, with its grid line.
    let t = TINY.replace("[\"cubic\", \"bbr3\"]", "[\"cubic\", \"bbr2\", \"bbr4\"]");
    let e = error_of(&t);
    assert!(e.contains("`bbr2`") && e.contains("`bbr4`"), "{e}");
    assert!(
        e.contains(&format!("s.toml:{}:", line_of(&t, "tcp.controller ="))),
        "{e}"
    );

    // A bad value in the base points into the base.
    let t = TINY.replace("rate = \"10Mbit\"", "rate = \"10 parsecs\"");
    let e = error_of(&t);
    assert!(
        e.starts_with(&format!("s.toml:{}:", line_of(&t, "10 parsecs"))),
        "{e}"
    );

    // A baseline naming a missing level, a metric that does not exist.
    let t = TINY.replace("tcp.controller = \"bbr3\" }", "tcp.controller = \"bbr9\" }");
    let e = error_of(&t);
    assert!(e.contains("analysis.baseline") && e.contains("bbr9"), "{e}");
    let t = TINY.replace("png = false", "png = false\nmetrics = [\"goodput\"]");
    let e = error_of(&t);
    assert!(
        e.contains(&format!("s.toml:{}:", line_of(&t, "\"goodput\""))),
        "{e}"
    );
}

#[test]
fn the_builtin_demo_study_parses() {
    let st = cclab_lab::demo_study().unwrap();
    assert_eq!(st.config_count() * st.repetitions as usize, 20);
}

/// A run or a configuration resolved alone from its index equals the one the in-order walk
/// gives; indices decode over the grid's mixed radix, the first axis slowest.
#[test]
fn runs_and_configurations_resolve_from_their_index() {
    let st = tiny();
    let runs = st.runs();
    assert_eq!(runs.len(), st.run_count());
    for (i, r) in runs.iter().enumerate() {
        assert_eq!(r.index, i);
        assert_eq!(&st.run(i), r);
        assert_eq!(r.config, i / st.repetitions as usize);
        let cfg = st.config(r.config).unwrap();
        assert_eq!(cfg.label, st.config_key(r.config).label);
        assert_eq!(cfg.table, st.config_table(r.config));
        assert_eq!(
            r.spec["tcp"]["controller"].as_str(),
            cfg.table["tcp"]["controller"].as_str()
        );
    }
    let key = st.config_key(2);
    assert_eq!(key.level_index, [1, 0]);
    assert_eq!(
        key.levels,
        [
            ("test.name".to_owned(), "rrul_be".to_owned()),
            ("tcp.controller".to_owned(), "cubic".to_owned())
        ]
    );
}

/// A `*` path segment sets the field in every entry of a list: one axis gives every flow the
/// same controller, and the label is the value as written.
#[test]
fn a_star_segment_sets_every_entry_of_a_list() {
    let text = r#"
name = "star"
seed = 1
repetitions = 1
[base]
name = "star"
duration = "2s"
[base.topology]
preset = "dumbbell"
rate = "10Mbit"
delay = "5ms"
[[base.flows]]
controller = "cubic"
stop = "1s"
[[base.flows]]
controller = "cubic"
count = 2
[grid]
flows."*".controller = ["newreno", "bbr3"]
flows.1.count = [2, 1]
"#;
    let st = study::parse(text, "star.toml", Path::new(".")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(st.config_count(), 4);
    for c in 0..4 {
        let cfg = st.config(c).unwrap();
        let want = if c < 2 { "newreno" } else { "bbr3" };
        assert_eq!(
            cfg.levels[0],
            ("flows.*.controller".to_owned(), want.to_owned())
        );
        let flows = cfg.scenario.to_sim_config().flows;
        assert_eq!(flows.len(), if c % 2 == 0 { 3 } else { 2 });
        assert!(flows.iter().all(|f| f.cc.name() == want), "{want}");
    }
    let e = study::parse(
        &text.replace("flows.\"*\".controller", "probes.\"*\".interval"),
        "star.toml",
        Path::new("."),
    )
    .map(|_| ())
    .unwrap_err()
    .to_string();
    assert!(!e.is_empty());
}

/// A study of sized flows: its records keep each flow's completion, its statistics have the
/// FCT metrics, and its report draws FCT and slowdown per size bucket and the slowdown CDF.
#[test]
fn studies_of_sized_flows_plot_fct_and_slowdown() {
    let text = r#"
name = "fcts"
repetitions = 2
[base]
name = "fcts"
duration = "6s"
[base.topology]
preset = "dumbbell"
rate = "50Mbit"
delay = "5ms"
[[base.flows]]
name = "web"
controller = "cubic"
count = 20
arrivals = 5
size_cdf = "websearch"
[grid]
flows.0.controller = ["cubic", "bbr3"]
[analysis]
png = false
"#;
    let st = study::parse(text, "fcts.toml", Path::new(".")).unwrap();
    let dir = tmp("fcts");
    let o = run_all(&st, &dir, Options::default());
    assert_eq!(o.ran, 4);
    analysis::analyse(&st, &Store::open(&dir).unwrap()).unwrap();
    let stats = String::from_utf8(read(&dir, "stats.csv")).unwrap();
    for metric in ["fct_s", "fct_slowdown_p99", "flows_completed"] {
        assert!(stats.contains(metric), "stats.csv lacks {metric}");
    }
    for fig in ["box_fct_size", "box_slowdown_size", "cdf_slowdown"] {
        let svg = String::from_utf8(read(&dir, &format!("plots/{fig}.svg"))).unwrap();
        assert!(svg.contains("<svg"), "{fig}");
    }
    let report = String::from_utf8(read(&dir, "report.html")).unwrap();
    assert!(report.contains("FCT slowdown CDF"));
    // Every run record lists its 20 sized flows.
    let store = Store::open(&dir).unwrap();
    for r in st.runs() {
        let rec = store.read(&r.id).unwrap();
        assert_eq!(rec.fct.len(), 20, "{}", r.id);
    }
    let _ = fs::remove_dir_all(&dir);
}

/// `analysis.curves` end to end: a small dumbbell grid (CPU share × controller × timeslice,
/// two repetitions of 3 s) writes `curves.md`, `curves.csv`, the curve figures and the
/// report's section; every line's `threshold_x` in the CSV is the smallest x from which the
/// CSV's own medians stay at or above the threshold, and the Markdown table says the same.
#[test]
fn curves_write_tables_csv_and_figures_consistent_with_the_medians() {
    let text = r#"
name = "curves"
seed = 5
repetitions = 2
measure_last = "2s"

[base]
name = "curves"
duration = "3s"
[base.topology]
preset = "dumbbell"
rate = "10Mbit"
delay = "5ms"
[[base.flows]]
controller = "cubic"
handshake = false
[base.flows.host]
cpu_share = 1.0
cpu_timeslice = "10ms"

[grid]
flows.0.host.cpu_timeslice = ["1ms", "10ms"]
flows.0.host.cpu_share = [0.6, 0.2, 1.0]
flows.0.controller = ["cubic", "bbr3"]

[analysis]
metrics = ["window_goodput_pct"]
plots = []
png = false
curves = [
    { x = "flows.0.host.cpu_share", metric = "window_goodput_pct", series = "flows.0.controller", threshold = 50 },
    { x = "flows.0.host.cpu_share", metric = "window_goodput_pct", series = "flows.0.controller", compare = "flows.0.host.cpu_timeslice", threshold = 50 },
]
"#;
    let st = study::parse(text, "curves.toml", Path::new(".")).unwrap();
    let dir = tmp("curves");
    run_all(&st, &dir, Options::default());
    analysis::analyse(&st, &Store::open(&dir).unwrap()).unwrap();
    let md = String::from_utf8(read(&dir, "curves.md")).unwrap();
    let csv = String::from_utf8(read(&dir, "curves.csv")).unwrap();
    let html = String::from_utf8(read(&dir, "report.html")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some(cclab_lab::curves::CSV_HEADER.trim_end()));
    // (curve, others, series, compare) → [(x, median)] and the line's threshold_x.
    type Line = (Vec<(f64, Option<f64>)>, String);
    let mut by_line: std::collections::BTreeMap<[String; 4], Line> = Default::default();
    for row in lines {
        let f: Vec<&str> = row.split(',').collect();
        assert_eq!(f.len(), 13, "{row}");
        assert_eq!(f[7], "2", "two repetitions: {row}");
        let key = [f[0], f[2], f[3], f[4]].map(str::to_owned);
        let e = by_line.entry(key).or_default();
        e.0.push((f[6].parse().unwrap(), f[8].parse().ok()));
        e.1 = f[12].to_owned();
    }
    // Curve 0: 2 timeslices × 2 controllers; curve 1: 2 controllers × 2 compare levels.
    assert_eq!(by_line.len(), 8);
    let mut reached = 0;
    for (key, (points, threshold_x)) in &by_line {
        let xs: Vec<f64> = points.iter().map(|p| p.0).collect();
        assert_eq!(xs, vec![0.2, 0.6, 1.0], "{key:?}: ascending x");
        let medians: Vec<Option<f64>> = points.iter().map(|p| p.1).collect();
        let from =
            (0..medians.len()).find(|&i| medians[i..].iter().all(|m| m.is_some_and(|m| m >= 50.0)));
        let want = from.map_or_else(String::new, |i| format!("{}", xs[i]));
        assert_eq!(*threshold_x, want, "{key:?}: {medians:?}");
        reached += usize::from(from.is_some());
        // The Markdown row says the same.
        let cell = match from {
            None => "never".to_owned(),
            Some(0) => "≤ 0.2 (already at the smallest level)".to_owned(),
            Some(i) => format!("{}", xs[i]),
        };
        if key[0] == "0" {
            let slice = key[1].trim_start_matches("flows.0.host.cpu_timeslice=");
            let row = format!("| {slice} | {} | {cell} |", key[2]);
            assert!(md.contains(&row), "{row} not in\n{md}");
        }
    }
    // At full share both controllers fill well over half of a 10 Mbit/s path.
    assert!(reached > 0, "{csv}");
    assert!(md.contains("## curve 1:") && md.contains("| flows.0.controller | 1ms | 10ms |"));
    assert!(html.contains("curve 0: median of window_goodput_pct"));
    for f in [
        "plots/curve0_window_goodput_pct-1ms.svg",
        "plots/curve0_window_goodput_pct-10ms.svg",
        "plots/curve1_window_goodput_pct-1ms.svg",
    ] {
        assert!(dir.join(f).is_file(), "{f}");
    }
    let _ = fs::remove_dir_all(&dir);
}

/// A study of one Poisson workload: 8 flows arriving at 10 per second with websearch sizes.
const POISSON: &str = r#"
name = "poisson"
seed = 3
repetitions = 3
[base]
name = "poisson"
duration = "3s"
[base.topology]
preset = "dumbbell"
rate = "20Mbit"
delay = "5ms"
[[base.flows]]
name = "web"
controller = "cubic"
count = 8
arrivals = 10
size_cdf = "websearch"
"#;

/// Every random draw of a run comes from the run's seed: repetitions of a Poisson workload draw
/// their own start times and sizes (they drew the same ones from the base's seed in every
/// repetition, so a configuration without other randomness had no variance), a run resolved
/// twice is bit-identical, and it is exactly `cclab run --seed S` of its configuration.
#[test]
fn repetitions_redraw_poisson_arrivals_and_sizes_from_their_own_seed() {
    let st = study::parse(POISSON, "poisson.toml", Path::new(".")).unwrap();
    let runs = st.runs();
    let draws = |r: &study::RunSpec| -> Vec<(u64, Option<u64>)> {
        let cfg = st.run_config(r).unwrap();
        assert_eq!(cfg.scenario.seed, r.seed);
        cfg.scenario
            .run_plan(r.seed, &cfg.label)
            .sim
            .flows
            .iter()
            .map(|f| (f.start.0, f.size))
            .collect()
    };
    let d: Vec<_> = runs.iter().map(draws).collect();
    assert_ne!(d[0], d[1]);
    assert_ne!(d[1], d[2]);
    assert_ne!(d[0], d[2]);
    assert_eq!(draws(&runs[1]), d[1]);
    // `cclab run --seed`: the configuration's table resolved with the run's seed.
    let text = toml::to_string(&st.config_table(0)).unwrap();
    let over = cclab_lab::Overrides {
        seed: Some(runs[1].seed),
        ..cclab_lab::Overrides::default()
    };
    let alone = cclab_lab::scenario::parse_in(&text, "alone", None, &over).unwrap();
    let alone: Vec<_> = alone
        .to_sim_config()
        .flows
        .iter()
        .map(|f| (f.start.0, f.size))
        .collect();
    assert_eq!(alone, d[1]);
    // The records: repetitions differ in their flows' sizes, a run done again is identical.
    let (a, _) = run::run_one(&st, &runs[0]).unwrap();
    let (a2, _) = run::run_one(&st, &runs[0]).unwrap();
    assert_eq!(a, a2);
    let (b, _) = run::run_one(&st, &runs[1]).unwrap();
    let sizes = |r: &cclab_lab::record::RunRecord| -> Vec<u64> {
        r.fct.iter().map(|f| f.size_bytes).collect()
    };
    assert_ne!(sizes(&a), sizes(&b));
}

/// Run ids carry the model version: a store filled by a build whose results differ (another
/// model version) is not reused but redone, and the outcome says which model it held; the next
/// resume reuses everything.
#[test]
fn results_of_another_model_are_redone_and_said() {
    let mut old = tiny();
    old.model = "0123456789abcdef".to_owned();
    let st = tiny();
    assert_ne!(old.model, st.model);
    assert!(
        old.runs().iter().zip(st.runs()).all(|(a, b)| a.id != b.id),
        "every run id depends on the model version"
    );
    let dir = tmp("model");
    let o = run_all(&old, &dir, Options::default());
    assert_eq!((o.ran, o.replaced_model), (8, None));
    let o = run_all(&st, &dir, Options::default());
    assert_eq!(o.skipped, 0);
    assert_eq!(o.ran, 8);
    assert_eq!(o.replaced_model.as_deref(), Some("model 0123456789abcdef"));
    let o = run_all(&st, &dir, Options::default());
    assert_eq!((o.skipped, o.ran, o.replaced_model), (8, 0, None));
    let _ = fs::remove_dir_all(&dir);
}

/// Three repetitions, two configurations that differ in every repetition by the same amount:
/// the simulation draws nothing at random here, so each configuration's three values are
/// identical. The normal approximation with tie correction gave p = 0.047 and a star; the exact
/// test gives 0.1, the smallest p three against three can give, so nothing is starred and the
/// table and report say that the study has too few repetitions.
const THREE_REPS: &str = r#"
name = "three"
repetitions = 3
[base]
name = "three"
[base.test]
name = "rrul_be"
length = "2s"
delay = "0.5s"
[base.tcp]
controller = "cubic"
[base.topology]
preset = "access"
rate = "10Mbit"
delay = "5ms"
[grid]
topology.rate = ["10Mbit", "20Mbit"]
[analysis]
baseline = { topology.rate = "10Mbit" }
metrics = ["upload_mbps", "upload_jain"]
plots = ["fairness"]
png = false
"#;

#[test]
fn three_repetitions_star_nothing_and_warn() {
    let st = study::parse(THREE_REPS, "three.toml", Path::new(".")).unwrap();
    let dir = tmp("three");
    run_all(&st, &dir, Options::default());
    let store = Store::open(&dir).unwrap();
    let report = analysis::analyse(&st, &store).unwrap();
    let stats = String::from_utf8(read(&dir, "stats.csv")).unwrap();
    let html = String::from_utf8(read(&dir, "report.html")).unwrap();
    // The compared row: identical values on each side, different across.
    let row = stats
        .lines()
        .find(|l| l.contains("20Mbit") && l.contains(",upload_mbps,"))
        .unwrap();
    assert!(row.ends_with(",0.1,no,yes,0.1"), "{row}");
    assert!(!stats.contains(",yes,yes,") && !stats.contains(",yes,no,"));
    assert!(!html.contains("class=\"sig\"") && !html.contains(" ★</td>"));
    assert!(
        report
            .table
            .lines()
            .filter(|l| l.starts_with("topology"))
            .all(|l| !l.contains('*')),
        "{}",
        report.table
    );
    let warning = "a two-sided Mann-Whitney U test of 3 against 3 values cannot reach p < 0.05";
    assert!(report.table.contains(warning), "{}", report.table);
    assert!(html.contains(&warning.replace('<', "&lt;")));
    assert_eq!(analysis::study_warnings(&st).len(), 1);
    // Confidence intervals of goodput never reach below 0, of Jain's index never above 1.
    for l in stats.lines().skip(1) {
        let f: Vec<&str> = l.split(',').collect();
        // config, rate, metric, n, mean, std_dev, min, p5, p25, median, p75, p95, max, lo, hi
        let (lo, hi): (f64, f64) = (f[13].parse().unwrap(), f[14].parse().unwrap());
        assert!(lo >= 0.0, "{l}");
        if f[2] == "upload_jain" {
            assert!(hi <= 1.0, "{l}");
        }
    }

    // A record with a valid checksum and every metric 1e308 (a crafted or damaged file).
    // Its Jain bar padded to an axis beyond f64::MAX and the tick loop never ended; now the
    // analysis ends at once and names the figure it could not draw.
    let id = st.run_specs().next().unwrap().id;
    let mut rec = store.read(&id).unwrap();
    for v in rec.metrics.values_mut() {
        *v = 1e308;
    }
    store.write(&rec).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let (st2, dir2) = (st.clone(), dir.clone());
    std::thread::spawn(move || {
        let _ = tx.send(analysis::analyse(&st2, &Store::open(&dir2).unwrap()));
    });
    let report = rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the analysis of a crafted record did not end within 60 s")
        .unwrap();
    assert!(
        report
            .not_drawn
            .iter()
            .any(|n| n.contains("fairness_uploads") && n.contains("cannot draw")),
        "{:?}",
        report.not_drawn
    );
    let html = String::from_utf8(read(&dir, "report.html")).unwrap();
    assert!(html.contains("fairness_uploads.svg not drawn"));
    let _ = fs::remove_dir_all(&dir);
}

/// `[[claims]]` end to end: a tiny grid (controller on every flow, as a `flows."*".stack` axis
/// would be, × rate; four repetitions of 1 s, the fewest that can decide) writes `claims.md`
/// and `claims.json`, ends the terminal table with the claims, and opens the report with them.
/// A claim that leaves the controller axis free gets one verdict per controller; one that
/// fixes it in either spelling of the path gets one; a failing claim is a result.
#[test]
fn claims_are_judged_and_written() {
    let text = r#"
name = "claims"
seed = 3
repetitions = 4
[base]
name = "claims"
duration = "1s"
[base.topology]
preset = "dumbbell"
rate = "10Mbit"
delay = "5ms"
[[base.flows]]
controller = "cubic"
[grid]
flows."*".controller = ["cubic", "bbr3"]
topology.rate = ["5Mbit", "20Mbit"]
[analysis]
metrics = ["upload_mbps"]
plots = ["box"]
png = false
flent = false

[[claims]]
id = "more-rate-more-goodput"
source = "a fourfold rate carries at least twice the goodput (test)"
metric = "upload_mbps"
a = { "topology.rate" = "20Mbit" }
b = { "topology.rate" = "5Mbit" }
expect = "higher"
by = 1.0

[[claims]]
id = "cubic-slower-at-more-rate"
source = "a claim the data contradict (test)"
metric = "upload_mbps"
a = { flows."*".controller = "cubic", "topology.rate" = "20Mbit" }
b = { "topology.rate" = "5Mbit" }
expect = "lower"
by = 0.05
"#;
    let st = study::parse(text, "claims.toml", Path::new(".")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(st.claims.len(), 2);
    assert!(st.describe().contains(
        "claim more-rate-more-goodput: upload_mbps of [topology.rate=20Mbit] higher by ≥ 100 % \
         than upload_mbps of [topology.rate=5Mbit], per level of flows.*.controller\n"
    ));
    let dir = tmp("claims");
    let o = run_all(&st, &dir, Options::default());
    assert_eq!(o.ran, 16);
    let report = analysis::analyse(&st, &Store::open(&dir).unwrap()).unwrap();
    let json: serde_json::Value = serde_json::from_slice(&read(&dir, "claims.json")).unwrap();
    let outcomes = |i: usize| json[i]["outcomes"].as_array().unwrap().clone();
    let first = outcomes(0);
    assert_eq!(first.len(), 2, "one verdict per controller: {first:?}");
    for (o, cc) in first.iter().zip(["cubic", "bbr3"]) {
        assert_eq!(o["levels"][0][0], "flows.*.controller");
        assert_eq!(o["levels"][0][1], cc);
        assert_eq!(o["verdict"], "holds", "{o}");
        assert_eq!((o["n_a"].as_u64(), o["n_b"].as_u64()), (Some(4), Some(4)));
        assert!(o["effect_low"].as_f64().unwrap() >= 1.0, "{o}");
    }
    let second = outcomes(1);
    assert_eq!(second.len(), 1);
    assert_eq!(second[0]["verdict"], "fails", "{:?}", second[0]);
    assert_eq!(
        second[0]["b_configs"][0],
        "flows.*.controller=cubic topology.rate=5Mbit"
    );
    let md = String::from_utf8(read(&dir, "claims.md")).unwrap();
    assert!(md.contains("## `cubic-slower-at-more-rate`") && md.contains("**fails**"));
    let table = &report.table;
    let claims_at = table.find("\nclaims\n").expect("claims table");
    assert!(table[..claims_at].contains("upload_mbps"), "{table}");
    let bbr3_row = table[claims_at..]
        .lines()
        .find(|l| l.starts_with("more-rate-more-goodput") && l.contains("controller=bbr3"));
    assert!(bbr3_row.is_some_and(|l| l.ends_with("holds")), "{table}");
    let html = String::from_utf8(read(&dir, "report.html")).unwrap();
    let (c, d) = (
        html.find("<h2 id=\"claims\">").unwrap(),
        html.find("<h2 id=\"design\">").unwrap(),
    );
    assert!(c < d, "the claims open the report");
    assert!(html[c..d].contains("a claim the data contradict (test)"));
    let _ = fs::remove_dir_all(&dir);
}
