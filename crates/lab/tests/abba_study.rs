//! The study machinery of the ABBA evaluation: a measurement window (`measure_last`) and its
//! metrics, the paired "baseline → treatment" table, and a demonstration grid of the
//! standalone part over the quicly preset (CUBIC and Reno standing in for the controllers
//! under test).

use std::path::Path;

use cclab_lab::report::{pair_markdown, pair_tables};
use cclab_lab::study::{self, Study, run::run_one};

fn parse(text: &str) -> Result<Study, String> {
    study::parse(text, "s.toml", Path::new(".")).map_err(|e| e.to_string())
}

/// The standalone part of the evaluation, written with controllers that exist today: 17
/// profiles × 2 AQMs × 2 controllers × 3 loss levels, 7 repetitions of 100 s, the last 50 s
/// measured, and the paired table of its form (here Reno → CUBIC).
const DEMO: &str = r#"
name = "abba_demo"
seed = 1
repetitions = 7
measure_last = "50s"

[base]
name = "abba_demo"
duration = "100s"
[base.topology]
preset = "quicly"
profile = "DSL"
[[base.flows]]
controller = "reno"

[grid]
topology.profile = ["DSL", "Home_WiFi", "Public", "Corporate_WiFi", "LTE", "5G", "LEO", "GEO",
    "DoCoMo@Office", "au@Office", "WiFi@Office", "DoCoMo@mall", "congested", "bdp20", "bdp40",
    "queue5ms", "queue2.5ms"]
topology.aqm = ["tail_drop", "codel"]
topology.loss_per_rtt = [0.0, 0.05, 0.1]
flows.0.controller = ["reno", "cubic"]

[analysis]
metrics = ["window_goodput_pct", "window_utilisation_pct"]
pair = { axis = "flows.0.controller", from = "reno", to = "cubic", rows = "topology.profile", split = "topology.aqm", metric = "window_goodput_pct" }
"#;

#[test]
fn the_demonstration_grid_parses_with_its_size() {
    let s = parse(DEMO).unwrap();
    assert_eq!(s.config_count(), 17 * 2 * 3 * 2);
    assert_eq!(s.run_count(), 17 * 2 * 3 * 2 * 7);
    assert_eq!(s.measure_last, Some(cclab_sim::Dur::from_secs(50)));
    let p = &s.analysis.pairs[0];
    assert_eq!((p.from.as_str(), p.to.as_str()), ("reno", "cubic"));
    assert_eq!(p.statistic, "median");
}

/// The paired table lays the grid out as the source's table: one table per AQM, a row per
/// profile, a column per remaining combination (here the loss level), each cell the median
/// over repetitions at `from` and at `to` with every other level equal. Synthetic values
/// (one per repetition, a known function of the levels) make every cell checkable.
#[test]
fn pair_table_pairs_baseline_and_treatment_cells() {
    let s = parse(DEMO).unwrap();
    let axes = s.axes();
    let value = |c: usize| -> Vec<f64> {
        let li = s.config_key(c).level_index;
        // profile·1000 + aqm·100 + loss·10 + controller, three repetitions around it.
        let v = (li[0] * 1000 + li[1] * 100 + li[2] * 10 + li[3]) as f64;
        vec![v - 1.0, v, v + 5.0]
    };
    let pair = s.analysis.pairs[0].clone();
    let tables = pair_tables(&s, &pair, &value);
    assert_eq!(tables.len(), 2);
    assert_eq!(tables[1].title, "topology.aqm = codel");
    assert_eq!(tables[0].columns, vec!["0", "0.05", "0.1"]);
    assert_eq!(tables[0].rows.len(), 17);
    assert_eq!(axes[0].levels[3].label, "Corporate_WiFi");
    for (t, table) in tables.iter().enumerate() {
        for (r, (label, cells)) in table.rows.iter().enumerate() {
            assert_eq!(*label, axes[0].levels[r].label);
            for (k, cell) in cells.iter().enumerate() {
                let base = (r * 1000 + t * 100 + k * 10) as f64;
                // The median of (v − 1, v, v + 5) is v: reno is level 0, cubic level 1.
                assert_eq!(*cell, Some((base, base + 1.0)), "{label} {k}");
            }
        }
    }
    let md = pair_markdown(&pair, &tables);
    assert!(
        md.contains("| DSL | 0.0 → 1.0 | 10.0 → 11.0 | 20.0 → 21.0 |"),
        "{md}"
    );
    assert!(md.contains("### topology.aqm = tail_drop"), "{md}");
    // Values within ±1 (shares) get two decimals.
    let small = |c: usize| value(c).iter().map(|v| v / 20_000.0).collect::<Vec<_>>();
    let md_small = pair_markdown(&pair, &pair_tables(&s, &pair, &small));
    assert!(
        md_small.contains("| Corporate_WiFi | 0.15 → 0.15 | 0.15 → 0.15 |"),
        "{md_small}"
    );
    // The mean instead of the median: (3v + 4)/3 per side.
    let mean = cclab_lab::study::Pair {
        statistic: "mean".into(),
        ..pair
    };
    let t = pair_tables(&s, &mean, &value);
    let (a, b) = t[0].rows[0].1[0].unwrap();
    assert!((a - 4.0 / 3.0).abs() < 1e-12 && (b - (1.0 + 4.0 / 3.0)).abs() < 1e-12);
}

/// Bad `measure_last` and `pair` values are located errors.
#[test]
fn window_and_pair_errors_are_located() {
    for (from, to, key) in [
        (
            "measure_last = \"50s\"",
            "measure_last = \"101s\"",
            "measure_last",
        ),
        ("measure_last = \"50s\"", "measure_last = 0", "measure_last"),
        (
            "rows = \"topology.profile\"",
            "rows = \"topology.profil\"",
            "analysis.pair.rows",
        ),
        (
            "rows = \"topology.profile\"",
            "rows = \"flows.0.controller\"",
            "analysis.pair",
        ),
        ("to = \"cubic\"", "to = \"cuback\"", "analysis.pair.to"),
        (
            "metric = \"window_goodput_pct\"",
            "metric = \"goodput\"",
            "analysis.pair.metric",
        ),
    ] {
        let text = DEMO.replacen(from, to, 1);
        assert_ne!(text, DEMO);
        let e = parse(&text).unwrap_err();
        assert!(e.contains(key) && e.contains("s.toml:"), "{to}: {e}");
    }
}

/// The window covers only the last part of the run: the first flow stops at 8 s (what it has
/// in flight then, at most a BDP plus the 100 ms buffer, drains well within the 2 s before
/// the window) and the second starts at 10 s, so over the last 10 s of 20 the first flow
/// carried nothing (exactly 0 %)
/// and the second filled the bdp40 path (2 Mbit/s, 100 ms, one BDP of buffer: one Reno flow
/// keeps it busy but for the first few RTTs of its slow start); TCP payload is at most
/// 1448/1500 of the wire rate. The other window metrics follow their definitions from the
/// per-flow values.
#[test]
fn window_metrics_cover_the_last_part_of_the_run() {
    let text = r#"
name = "w"
measure_last = "10s"
[base]
name = "w"
duration = "20s"
[base.topology]
preset = "quicly"
profile = "bdp40"
[[base.flows]]
controller = "cubic"
stop = "8s"
[[base.flows]]
controller = "reno"
start = "10s"
"#;
    let s = parse(text).unwrap();
    let spec = s.run_specs().next().unwrap();
    let (rec, _) = run_one(&s, &spec).unwrap();
    let m = &rec.metrics;
    let f0 = m["window_flow_pct.0"];
    let f1 = m["window_flow_pct.1"];
    assert_eq!(f0, 0.0);
    assert_eq!(m["window_first_pct"], 0.0);
    let payload = 100.0 * 1448.0 / 1500.0;
    assert!(f1 > 80.0 && f1 <= payload + 1e-9, "{f1}");
    assert!((m["window_goodput_pct"] - (f0 + f1)).abs() < 1e-9);
    assert!((m["window_others_pct"] - f1).abs() < 1e-9);
    assert_eq!(m["window_first_share"], 0.0);
    // Jain over (0, x): (x)² / (2 x²) = 1/2.
    assert!((m["window_jain"] - 0.5).abs() < 1e-12);
    // Departures carry headers: at least the goodput × 1500/1448, at most the rate.
    let u = m["window_utilisation_pct"];
    assert!(
        u <= 100.0 + 1e-9 && u >= f1 * 1500.0 / 1448.0 - 1e-6,
        "{u} vs {f1}"
    );
    // Without a window there are no window metrics, and the run id is another.
    let plain = parse(&text.replace("measure_last = \"10s\"\n", "")).unwrap();
    let pspec = plain.run_specs().next().unwrap();
    assert_ne!(pspec.id, spec.id);
    let (prec, _) = run_one(&plain, &pspec).unwrap();
    assert!(!prec.metrics.contains_key("window_goodput_pct"));
}

/// `analysis.pairs` writes every paired table into `pairs.md`, and the
/// `mean_of_position_medians` statistic is the source's summary of a crowd: each crowd
/// position's median over the repetitions, then their mean. Checked on a small crowd (one
/// tested flow and three crowd flows on bdp40, 3 repetitions of 12 s) against the same
/// numbers taken from the stored run records by hand; the first table (median of
/// `window_first_pct`) is checked the same way. A `mean_of_position_medians` on a metric that
/// is not per flow is a located error.
#[test]
fn crowd_tables_use_the_mean_of_position_medians() {
    use cclab_lab::analysis;
    use cclab_lab::study::run::{self, Options};
    use cclab_lab::study::store::Store;
    let text = r#"
name = "crowd"
seed = 3
repetitions = 3
measure_last = "6s"
[base]
name = "crowd"
duration = "12s"
[base.topology]
preset = "quicly"
profile = "bdp40"
[[base.flows]]
name = "tested"
controller = "cubic"
start = "1s"
[[base.flows]]
name = "crowd"
controller = "reno"
count = 3
[grid]
"flows.0.controller" = ["cubic", "reno"]
topology.aqm = ["tail_drop", "codel"]
[analysis]
plots = []
pairs = [
    { axis = "flows.0.controller", from = "cubic", to = "reno", rows = "topology.aqm", metric = "window_first_pct" },
    { axis = "flows.0.controller", from = "cubic", to = "reno", rows = "topology.aqm", metric = "window_others_pct", statistic = "mean_of_position_medians" },
]
"#;
    let s = parse(text).unwrap();
    assert_eq!(s.analysis.pairs.len(), 2);
    let dir = std::env::temp_dir().join(format!("cclab-crowd-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let store = Store::open(&dir).unwrap();
    run::execute(&s, &store, &Options::default(), &|_| {}).unwrap();
    analysis::analyse(&s, &store).unwrap();
    let md = std::fs::read_to_string(dir.join("pairs.md")).unwrap();
    let median = |mut xs: Vec<f64>| {
        xs.sort_by(f64::total_cmp);
        xs[xs.len() / 2]
    };
    // Per configuration: the runs' window_flow_pct.<i>, i = 0..4.
    let flows = |c: usize| -> Vec<Vec<f64>> {
        s.run_specs()
            .filter(|r| r.config == c)
            .map(|r| {
                let rec = store.read(&r.id).unwrap();
                (0..4)
                    .map(|i| rec.metrics[&format!("window_flow_pct.{i}")])
                    .collect()
            })
            .collect()
    };
    // Configurations: controller-major (cubic, reno) × aqm (tail_drop, codel).
    for (row, aqm) in ["tail_drop", "codel"].iter().enumerate() {
        let cells: Vec<(f64, f64)> = [0, 1]
            .iter()
            .map(|&ctl| {
                let runs = flows(ctl * 2 + row);
                let first = median(runs.iter().map(|r| r[0]).collect());
                let crowd = (1..4)
                    .map(|i| median(runs.iter().map(|r| r[i]).collect()))
                    .sum::<f64>()
                    / 3.0;
                (first, crowd)
            })
            .collect();
        let first_row = format!("| {aqm} | {:.1} → {:.1} |", cells[0].0, cells[1].0);
        let crowd_row = format!("| {aqm} | {:.1} → {:.1} |", cells[0].1, cells[1].1);
        assert!(md.contains(&first_row), "{first_row} not in\n{md}");
        assert!(md.contains(&crowd_row), "{crowd_row} not in\n{md}");
        // Both crowd flows' medians are real shares of a busy path.
        assert!(cells.iter().all(|c| c.1 > 5.0 && c.1 < 60.0), "{cells:?}");
    }
    assert!(
        md.contains("mean_of_position_medians of `window_others_pct`"),
        "{md}"
    );
    let _ = std::fs::remove_dir_all(&dir);
    // Only per-flow metrics have positions.
    let bad = text.replace(
        "metric = \"window_others_pct\", statistic",
        "metric = \"window_goodput_pct\", statistic",
    );
    let e = parse(&bad).unwrap_err();
    assert!(
        e.contains("analysis.pairs[1].statistic") && e.contains("s.toml:"),
        "{e}"
    );
}
