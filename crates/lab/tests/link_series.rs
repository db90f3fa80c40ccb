//! The bottleneck's conditions over time: the capacity series (`QueueSeries::capacity_bps`,
//! what the link could send in each sampling interval) and the delay series
//! (`QueueSeries::delay_ms`, the link's one-way delay plus what the delay elements behind it
//! add, scheduled at each sample time) against the schedules they come from, and both drawn in
//! a study's time-series figures.

use std::fs;
use std::path::PathBuf;

use cclab_lab::study::run::{self, Options};
use cclab_lab::study::store::Store;
use cclab_lab::study::{self};
use cclab_lab::{Overrides, analysis, parse};
use cclab_sim::{QueueResult, Results, Simulation};

/// A 20 Mbit/s dumbbell with one CUBIC flow, sampled every 100 ms, plus `extra`.
fn run(extra: &str) -> Results {
    let text = format!(
        "name = \"s\"\nduration = \"4s\"\nsample_interval = \"100ms\"\n[topology]\n\
         preset = \"dumbbell\"\nrate = \"20Mbit\"\ndelay = \"10ms\"\n[[flows]]\n\
         controller = \"cubic\"\n{extra}"
    );
    let sc = parse(&text, "s.toml", &Overrides::default()).unwrap_or_else(|e| panic!("{e}"));
    Simulation::new(sc.to_sim_config()).unwrap().run()
}

fn bottleneck(r: &Results) -> &QueueResult {
    r.queues
        .iter()
        .find(|q| q.name == "bottleneck")
        .expect("the bottleneck is monitored")
}

/// A step from 12 to 4 Mbit/s at 1.25 s: every interval `(t − 0.1 s, t]` wholly before the step
/// has exactly 12 Mbit/s, every one wholly after it exactly 4, and the interval that holds the
/// step (ending at 1.3 s) the time-weighted mean, (0.05·12 + 0.05·4)/0.1 = 8 Mbit/s. The link
/// counts whole bits over the interval, so the only error is below one bit (1e-5 Mbit/s).
#[test]
fn a_rate_step_shows_in_the_interval_that_holds_it() {
    let r = run("[[links]]\nlink = \"bottleneck\"\nrate = \"steps\"\n\
                 steps = [[\"0s\", \"12Mbit\"], [\"1.25s\", \"4Mbit\"]]\n");
    let q = bottleneck(&r);
    assert_eq!(q.series.capacity_bps.len(), q.series.t_s.len());
    for (&t, &c) in q.series.t_s.iter().zip(&q.series.capacity_bps) {
        let want = if t < 1.2 + 1e-9 {
            12.0
        } else if (t - 1.3).abs() < 1e-9 {
            8.0
        } else {
            4.0
        };
        assert!(
            (c / 1e6 - want).abs() < 1e-5,
            "t = {t}: {c} bit/s, want {want} Mbit/s"
        );
    }
    assert!(q.series.delay_ms.is_empty(), "the delay does not change");
}

/// A sine of mean 10, amplitude 6 Mbit/s and period 1 s, sampled 1,000 times per period. The
/// continuous sine's mean over `(t − Δ, t]` is `m + A·(cos ωt₀ − cos ωt)/(ωΔ)`. The schedule
/// holds each sample for T/1000, and a held value differs from the sine by at most
/// `A·ω·T/1000 = 2πA/1000` (the sine's largest slope times the hold), so each interval's mean
/// lies within 2π·6/1000 ≈ 0.038 Mbit/s of the analytic mean, plus the rounding of each sample to
/// a whole bit/s.
#[test]
fn a_sine_rate_gives_the_analytic_mean_per_interval() {
    let r = run(
        "[[links]]\nlink = \"bottleneck\"\nrate = \"sine\"\nmean = \"10Mbit\"\n\
                 amplitude = \"6Mbit\"\nperiod = \"1s\"\nsamples = 1000\n",
    );
    let q = bottleneck(&r);
    let (m, a, w, dt) = (10.0, 6.0, std::f64::consts::TAU, 0.1);
    let tol = std::f64::consts::TAU * a / 1000.0 + 1e-6;
    let mut worst: f64 = 0.0;
    for (&t, &c) in q.series.t_s.iter().zip(&q.series.capacity_bps) {
        let t0 = t - dt;
        let want = m + a * ((w * t0).cos() - (w * t).cos()) / (w * dt);
        worst = worst.max((c / 1e6 - want).abs());
        assert!(
            (c / 1e6 - want).abs() <= tol,
            "t = {t}: {} Mbit/s, analytic {want}",
            c / 1e6
        );
    }
    assert!(q.series.t_s.len() >= 39);
    eprintln!("sine: largest error {worst:.5} Mbit/s (bound {tol:.5})");
}

/// A delay schedule behind the bottleneck (on the right router, for packets from the left)
/// that steps from 5 to 25 ms at 2.05 s: the delay series is the link's 10 ms plus 5 ms at
/// every sample before the step and plus 25 ms from the first sample after it (2.1 s) on. An
/// element that takes only ACKs, or only packets from another neighbour, is not counted.
#[test]
fn a_delay_step_shows_at_the_first_sample_after_it() {
    let r = run(
        "[[elements]]\nnode = \"right\"\nkind = \"delay_schedule\"\nfrom = \"left\"\n\
                 base = \"5ms\"\nsteps = [[\"2.05s\", \"25ms\"]]\n\
                 [[elements]]\nnode = \"right\"\nkind = \"delay\"\ndelay = \"7ms\"\n\
                 packets = \"acks\"\n",
    );
    let q = bottleneck(&r);
    assert_eq!(q.series.delay_ms.len(), q.series.t_s.len());
    for (&t, &d) in q.series.t_s.iter().zip(&q.series.delay_ms) {
        let want = if t < 2.05 { 15.0 } else { 35.0 };
        assert!((d - want).abs() < 1e-9, "t = {t}: {d} ms, want {want}");
    }
    assert!(q.series.capacity_bps.is_empty(), "the rate does not change");
    // The reverse link does not lead into the schedule's selector.
    let rev = r.queues.iter().find(|q| q.name != "bottleneck");
    assert!(rev.is_none_or(|q| q.series.delay_ms.is_empty()));
}

/// The same step with the bottleneck's own jitter (netem `delay 4ms 2ms`, `[[links]]
/// delay_model = "jitter"`): the series adds the jitter's centre, 4 ms, at every sample.
#[test]
fn a_links_own_jitter_counts_with_its_centre() {
    let r = run(
        "[[elements]]\nnode = \"right\"\nkind = \"delay_schedule\"\nfrom = \"left\"\n\
                 base = \"5ms\"\nsteps = [[\"2.05s\", \"25ms\"]]\n\
                 [[links]]\nlink = \"bottleneck\"\ndelay_model = \"jitter\"\n\
                 delay = \"4ms\"\njitter = \"2ms\"\n",
    );
    let q = bottleneck(&r);
    assert_eq!(q.series.delay_ms.len(), q.series.t_s.len());
    for (&t, &d) in q.series.t_s.iter().zip(&q.series.delay_ms) {
        let want = if t < 2.05 { 19.0 } else { 39.0 };
        assert!((d - want).abs() < 1e-9, "t = {t}: {d} ms, want {want}");
    }
}

/// A reroute between a 20 ms and a 5 ms path every second: the series alternates between the
/// link's 10 ms plus each path's delay, switching at the first sample at or after each switch.
#[test]
fn a_reroute_shows_the_active_paths_delay() {
    let r = run(
        "[[elements]]\nnode = \"right\"\nkind = \"reroute\"\nfrom = \"left\"\n\
                 delays = [\"20ms\", \"5ms\"]\nperiod = \"1s\"\n",
    );
    let q = bottleneck(&r);
    for (&t, &d) in q.series.t_s.iter().zip(&q.series.delay_ms) {
        #[expect(clippy::cast_possible_truncation, reason = "t < 4 s")]
        let k = (t + 1e-9).floor() as i64;
        let want = if k % 2 == 0 { 30.0 } else { 15.0 };
        assert!((d - want).abs() < 1e-9, "t = {t}: {d} ms, want {want}");
    }
}

const STUDY: &str = r#"
name = "conditions"
seed = 1
repetitions = 1

[base]
name = "conditions"
duration = "3s"
[base.topology]
preset = "dumbbell"
rate = "20Mbit"
delay = "5ms"
[[base.flows]]
controller = "cubic"
[[base.probes]]
interval = "100ms"
CHANGES
[analysis]
png = false
plots = ["timeseries"]
"#;

const CHANGES: &str = r#"
[[base.links]]
link = "bottleneck"
rate = "steps"
steps = [["0s", "20Mbit"], ["1s", "5Mbit"]]
[[base.elements]]
node = "right"
kind = "delay_schedule"
from = "left"
steps = [["1.5s", "30ms"]]
"#;

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("cclab-series-test-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

/// The study `STUDY` with `changes`, run and analysed: (its throughput figure, its ping figure,
/// its HTML report).
fn figures(name: &str, changes: &str) -> (String, String, String) {
    let dir = tmp(name);
    let path = dir.join("c_study.toml");
    fs::write(&path, STUDY.replace("CHANGES", changes)).unwrap();
    let st = study::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let store = Store::open(dir.join("out")).unwrap();
    run::execute(&st, &store, &Options::default(), &|_| {}).unwrap();
    let report = analysis::analyse(&st, &store).unwrap();
    let read = |pick: &dyn Fn(&str) -> bool| -> String {
        let f = report
            .files
            .iter()
            .find(|f| pick(&f.to_string_lossy()))
            .unwrap_or_else(|| panic!("not among {:?}", report.files));
        fs::read_to_string(f).unwrap()
    };
    let out = (
        read(&|n| n.contains("ts_throughput") && n.ends_with(".svg")),
        read(&|n| n.contains("ts_ping") && n.ends_with(".svg")),
        read(&|n| n.ends_with(".html")),
    );
    fs::remove_dir_all(&dir).unwrap();
    out
}

/// The throughput figure of a run whose rate steps draws the capacity line, its ping figure
/// the delay line, and the HTML report holds both; a run whose link is constant draws neither
/// (its capacity and delay are the configuration's constants, and the run has no such series).
#[test]
fn the_figures_draw_capacity_and_delay_when_they_change() {
    let (tput, ping, html) = figures("changing", CHANGES);
    assert!(tput.contains("capacity bottleneck"));
    assert!(ping.contains("delay bottleneck"));
    assert!(html.contains("capacity bottleneck") && html.contains("delay bottleneck"));
    let (tput, ping, html) = figures("constant", "");
    assert!(!tput.contains("capacity"));
    assert!(!ping.contains("delay bottleneck"));
    assert!(!html.contains("capacity bottleneck") && !html.contains("delay bottleneck"));
}
