//! A study over a link whose rate follows a trace: the trace is read relative to the study
//! file, every run record carries the link's capacity on the sampling grid, and the throughput
//! time-series plot draws it with the goodput.

use std::fs;
use std::path::PathBuf;

use cclab_lab::analysis;
use cclab_lab::study::run::{self, Options};
use cclab_lab::study::store::Store;
use cclab_lab::study::{self};

const STUDY: &str = r#"
name = "shaped"
seed = 3
repetitions = 1

[base]
name = "shaped"
[base.test]
name = "tcp_upload"
length = "4s"
delay = "1s"
[base.tcp]
controller = "cubic"
[base.topology]
preset = "access"
rate = "12Mbit"
delay = "5ms"
buffer = "1bdp"
[[base.links]]
link = "uplink"
rate = "trace"
file = "traces/t.up"

[analysis]
png = false
"#;

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("cclab-rates-test-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

/// Trace: 2 opportunities in every ms but none in the second half of each 100 ms (loop 100 ms:
/// 100 opportunities = 12 Mbit/s mean). Each 200 ms sample step holds two loops: a capacity of
/// exactly 12 Mbit/s at every grid point after the first, and the goodput never above it.
#[test]
fn a_study_records_and_draws_the_capacity() {
    let dir = tmp("study");
    fs::create_dir_all(dir.join("traces")).unwrap();
    let mut trace = String::new();
    for ms in 1..=49 {
        trace.push_str(&format!("{ms}\n{ms}\n"));
    }
    trace.push_str("100\n100\n");
    fs::write(dir.join("traces/t.up"), trace).unwrap();
    let path = dir.join("s_study.toml");
    fs::write(&path, STUDY).unwrap();
    let st = study::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let out = dir.join("out");
    let store = Store::open(&out).unwrap();
    run::execute(&st, &store, &Options::default(), &|_| {}).unwrap();
    let r = store.read(&st.runs()[0].id).unwrap();
    assert_eq!(r.capacity.len(), 1);
    let c = &r.capacity[0];
    assert_eq!(c.link, "uplink");
    assert_eq!(c.values.len(), r.x_values.len());
    for v in c.values.iter().skip(1) {
        let v = v.expect("sampled");
        assert!((v - 12.0).abs() < 1e-9, "{v}");
    }
    let upload = &r.series[0];
    for (g, c) in upload.values.iter().zip(&c.values) {
        if let (Some(g), Some(c)) = (g, c) {
            assert!(g <= c, "goodput {g} above capacity {c}");
        }
    }
    let report = analysis::analyse(&st, &store).unwrap();
    let svg = report
        .files
        .iter()
        .find(|f| f.to_string_lossy().contains("ts_throughput"))
        .expect("a throughput time series");
    assert!(fs::read_to_string(svg).unwrap().contains("capacity uplink"));
    fs::remove_dir_all(&dir).unwrap();
}

/// A run id counts the trace by its content: the same content under the study gives the same
/// ids (run by run and through the lazy walk), an edited trace new ones.
#[test]
fn run_ids_follow_the_traces_content() {
    let dir = tmp("ids");
    fs::create_dir_all(dir.join("traces")).unwrap();
    let path = dir.join("s_study.toml");
    fs::write(&path, STUDY).unwrap();
    let ids = |trace: &str| {
        fs::write(dir.join("traces/t.up"), trace).unwrap();
        let st = study::load(&path).unwrap_or_else(|e| panic!("{e}"));
        let walked: Vec<String> = st.run_specs().map(|r| r.id).collect();
        let one_by_one: Vec<String> = (0..st.run_count()).map(|i| st.run(i).id).collect();
        assert_eq!(walked, one_by_one);
        walked
    };
    let a = ids("1\n2\n3\n4\n");
    assert_eq!(a, ids("1\n2\n3\n4\n"));
    assert_ne!(a, ids("1\n2\n3\n5\n"));
}
