//! Every file in `scenarios/` parses, converts to a `SimConfig` and documents itself; the demo
//! runs end to end once the engine exists.

use std::path::{Path, PathBuf};

use cclab_lab::output;
use cclab_lab::scenario::{self, Overrides};
use cclab_sim::{Dur, Simulation};

fn scenario_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_scenario_file_parses_and_converts() {
    let files = scenario_files();
    for required in [
        "demo",
        "cubic_single",
        "reno_loss",
        "two_cubic",
        "rtt_unfairness",
    ] {
        assert!(
            files
                .iter()
                .any(|f| f.file_stem().is_some_and(|s| s == required)),
            "scenarios/{required}.toml is missing"
        );
    }
    for file in &files {
        let (sc, cfg) = match scenario::load(file) {
            Ok(x) => x,
            Err(e) => panic!("{e}"),
        };
        assert_eq!(
            Some(sc.name.as_str()),
            file.file_stem().and_then(|s| s.to_str()),
            "{}: the scenario name should match the file name",
            file.display()
        );
        assert!(!cfg.flows.is_empty(), "{}", file.display());
        assert_eq!(cfg.flows.len(), sc.flows.len());
        assert_eq!(cfg.probes.len(), sc.probes.len());
        assert!(cfg.links.iter().any(|l| l.monitor), "{}", file.display());
        let text = std::fs::read_to_string(file).unwrap();
        assert!(
            text.starts_with('#'),
            "{}: start with a comment header explaining what the scenario shows",
            file.display()
        );
    }
}

#[test]
fn the_embedded_demo_is_scenarios_demo_toml() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/demo.toml");
    assert_eq!(std::fs::read_to_string(path).unwrap(), cclab_lab::DEMO_TOML);
}

#[test]
fn a_missing_file_is_an_error_naming_it() {
    let e = scenario::load("no/such/file.toml").unwrap_err();
    assert!(
        e.to_string().starts_with("no/such/file.toml: cannot read"),
        "{e}"
    );
}

#[test]

fn demo_runs_and_writes_all_outputs() {
    let o = Overrides {
        seed: None,
        duration: Some(Dur::from_secs(6)),
    };
    let sc = cclab_lab::demo(&o).unwrap();
    let sim = Simulation::new(sc.to_sim_config()).unwrap_or_else(|e| panic!("{e}"));
    let results = sim.run();
    assert_eq!(results.flows.len(), 3);
    assert_eq!(results.probes.len(), 1);
    assert!(results.queues.iter().any(|q| q.name == "bottleneck"));
    let dir = std::env::temp_dir().join(format!("cclab-demo-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let written = output::write_outputs(&dir, &sc.name, &results).unwrap();
    assert_eq!(written.len(), 5);
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["scenario"], "demo");
    assert_eq!(summary["flows"].as_array().unwrap().len(), 3);
    let flows = std::fs::read_to_string(dir.join("flows.csv")).unwrap();
    assert!(flows.starts_with(output::FLOWS_CSV_HEADER));
    // 6 s at 0.2 s per sample, three flows (some start later and may have fewer rows).
    assert!(flows.lines().count() > 10, "{flows}");
    // CUBIC reports its internals; the columns follow the documented header.
    let cc = std::fs::read_to_string(dir.join("cc_stats.csv")).unwrap();
    assert!(cc.starts_with(output::CC_STATS_CSV_HEADER), "{cc}");
    assert!(cc.lines().any(|l| l.contains(",cubic-20ms,w_max,")), "{cc}");
    let probes = std::fs::read_to_string(dir.join("probes.csv")).unwrap();
    assert!(probes.lines().count() > 10, "{probes}");
    let table = output::render_table(&results);
    assert!(
        table.contains("cubic-20ms") && table.contains("bottleneck"),
        "{table}"
    );
    // Deterministic: a second run gives byte-identical output files.
    let again = Simulation::new(sc.to_sim_config()).unwrap().run();
    assert_eq!(again, results);
    let dir2 = std::env::temp_dir().join(format!("cclab-demo-test2-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir2);
    output::write_outputs(&dir2, &sc.name, &again).unwrap();
    for f in [
        "summary.json",
        "flows.csv",
        "queues.csv",
        "probes.csv",
        "cc_stats.csv",
    ] {
        let a = std::fs::read(dir.join(f)).unwrap();
        let b = std::fs::read(dir2.join(f)).unwrap();
        assert!(
            a == b,
            "{f} differs between two runs of the same scenario and seed"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::remove_dir_all(&dir2).unwrap();
}

/// A different seed changes a run that uses randomness (Bernoulli loss), and only such runs.
#[test]
fn the_seed_changes_random_runs_only() {
    let text = |loss: &str| {
        format!(
            "name = \"s\"\nduration = \"5s\"\n[topology]\npreset = \"dumbbell\"\nrate = \"20Mbit\"\n\
             delay = \"10ms\"\nbuffer = \"1bdp\"\n{loss}\n[[flows]]\ncontroller = \"cubic\"\n"
        )
    };
    let summary = |t: &str, seed: u64| {
        let o = Overrides {
            seed: Some(seed),
            duration: None,
        };
        let sc = cclab_lab::parse(t, "test.toml", &o).unwrap();
        let r = Simulation::new(sc.to_sim_config()).unwrap().run();
        let mut buf = Vec::new();
        output::write_summary_json(&mut buf, &sc.name, &r).unwrap();
        buf
    };
    let lossy = text("loss = 0.01");
    assert_ne!(summary(&lossy, 1), summary(&lossy, 2));
    assert_eq!(summary(&lossy, 3), summary(&lossy, 3));
    let clean = text("");
    // Without randomness only the recorded seed differs.
    let (a, b) = (summary(&clean, 1), summary(&clean, 2));
    let strip = |v: Vec<u8>| {
        String::from_utf8(v)
            .unwrap()
            .replace("\"seed\": 1", "")
            .replace("\"seed\": 2", "")
    };
    assert_eq!(strip(a), strip(b));
}

/// `trace = true` on a flow gives `trace.csv` with one row per sender event of that flow only;
/// without it no `trace.csv` is written, and a stale one from an earlier run is removed.
#[test]
fn traced_flows_write_trace_csv() {
    let text = |trace: &str| {
        format!(
            "name = \"tr\"\nduration = \"2s\"\n[topology]\npreset = \"dumbbell\"\n\
             rate = \"20Mbit\"\ndelay = \"10ms\"\n[[flows]]\nname = \"traced\"\n\
             controller = \"cubic\"\n{trace}\n[[flows]]\nname = \"plain\"\ncontroller = \"reno\"\n"
        )
    };
    let run = |t: &str, dir: &Path| {
        let sc = cclab_lab::parse(t, "test.toml", &Overrides::default()).unwrap();
        let r = Simulation::new(sc.to_sim_config()).unwrap().run();
        output::write_outputs(dir, &sc.name, &r).unwrap()
    };
    let dir = std::env::temp_dir().join(format!("cclab-trace-run-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let trace_path = dir.join("trace.csv");

    let written = run(&text("trace = true"), &dir);
    assert_eq!(written.len(), 6);
    assert!(written.contains(&trace_path));
    let csv = std::fs::read_to_string(&trace_path).unwrap();
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some(output::TRACE_CSV_HEADER));
    let columns: Vec<&str> = output::TRACE_CSV_HEADER.split(',').collect();
    let (flow_col, event_col) = (
        columns.iter().position(|c| *c == "flow").unwrap(),
        columns.iter().position(|c| *c == "event").unwrap(),
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    // 2 s at 20 Mbit/s: thousands of ACKs.
    assert!(rows.len() > 100, "{} rows", rows.len());
    assert!(rows.iter().all(|r| r.len() == columns.len()), "{csv}");
    assert!(rows.iter().all(|r| r[flow_col] == "traced"), "{csv}");
    assert!(rows.iter().any(|r| r[event_col] == "ack"), "{csv}");
    let times: Vec<f64> = rows.iter().map(|r| r[0].parse().unwrap()).collect();
    assert!(
        times.windows(2).all(|w| w[0] <= w[1]),
        "rows not in time order"
    );

    // The same directory, no flow traced: no trace.csv any more.
    let written = run(&text(""), &dir);
    assert_eq!(written.len(), 5);
    assert!(!written.contains(&trace_path));
    assert!(!trace_path.exists());
    std::fs::remove_dir_all(&dir).unwrap();
}
