//! The study metrics read from a run's summary (`spurious_retransmits`, `reorder_ratio`,
//! `drops`, the queueing delays per queue and per DualPI2 class, the throughput shares): each
//! is checked against its definition in `suite::METRICS`, recomputed here from the simulator's
//! [`Results`], on a small run that makes every one of them non-trivial, and against what the
//! network should do to them.

use cclab_lab::scenario::{Overrides, parse};
use cclab_lab::suite;
use cclab_sim::{Results, Simulation};
use std::collections::BTreeMap;

/// Run `text` (a dumbbell scenario) and return its metrics and results.
fn run(text: &str) -> (BTreeMap<String, f64>, Results) {
    let sc = parse(text, "m.toml", &Overrides::default()).unwrap();
    let plan = sc.run_plan(sc.seed, "m");
    let results = Simulation::new(plan.sim).unwrap().run();
    let series = suite::series_records(&results, &plan.series, &plan.timing, "");
    (suite::metrics(&series, &results, None), results)
}

/// Equal up to the rounding of a few additions.
fn same(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// TCP Prague (L4S) and two non-ECN CUBIC flows share a 20 Mbit/s DualPI2 bottleneck, behind
/// which a `reroute` element flips the data between a 20 ms and a 5 ms route every 2 s: each
/// switch to the short route lets packets overtake (reordering, DSACK-detected spurious
/// retransmissions), and the CUBIC flows' packets are dropped by the classic queue's PI2.
#[test]
fn summary_metrics_follow_their_definitions() {
    let (m, r) = run(r#"
name = "m"
duration = "12s"
[topology]
preset = "dumbbell"
rate = "20Mbit"
delay = "5ms"
[topology.qdisc]
kind = "dualpi2"
[[flows]]
name = "prague"
controller = "prague"
[[flows]]
name = "cubic"
controller = "cubic"
count = 2
[[probes]]
interval = "100ms"
[[elements]]
node = "right"
kind = "reroute"
from = "left"
delays = ["20ms", "5ms"]
period = "2s"
"#);
    // Spurious retransmissions: the flows' DSACK-detected counts, summed; the route flips
    // make some (each switch reorders about 15 ms of packets, sdn_reroute_study).
    let spurious: u64 = r.flows.iter().map(|f| f.summary.spurious_retransmits).sum();
    assert!(spurious > 0, "no spurious retransmission");
    assert!(same(m["spurious_retransmits"], spurious as f64));
    // Reordering: the mean of the flows' RFC 4737 ratios, a fraction in (0, 1).
    let ratio = r.flows.iter().map(|f| f.summary.reorder_ratio).sum::<f64>() / 3.0;
    assert!(ratio > 0.0 && ratio < 1.0, "reorder ratio {ratio}");
    assert!(same(m["reorder_ratio"], ratio));
    // Drops: data segments; every data drop happens at the bottleneck here (no loss model, the
    // reroute's paths are unlimited), so the engine's count of queue and link drops, at most
    // the queue's drops, which also count pings.
    let drops = r.engine.data_packets_dropped;
    let q = &r.queues[0].summary;
    assert!(drops > 0, "non-ECN CUBIC through PI2 is dropped");
    assert!(drops <= q.drops + q.link_losses, "{drops} > {}", q.drops);
    assert!(same(m["drops"], drops as f64));
    // Queueing delay of the bottleneck, and of its two classes.
    assert!(same(m["queue_delay_p50_ms"], q.delay_p50_ms.unwrap()));
    assert!(same(m["queue_delay_p99_ms"], q.delay_p99_ms.unwrap()));
    let class = |n: &str| q.classes.iter().find(|c| c.name == n).unwrap();
    assert!(same(
        m["l4s_delay_p50_ms"],
        class("l").delay_p50_ms.unwrap()
    ));
    assert!(same(
        m["l4s_delay_p99_ms"],
        class("l").delay_p99_ms.unwrap()
    ));
    assert!(same(
        m["classic_delay_p50_ms"],
        class("c").delay_p50_ms.unwrap()
    ));
    assert!(same(
        m["classic_delay_p99_ms"],
        class("c").delay_p99_ms.unwrap()
    ));
    // DualPI2 (RFC 9332 §2.1, §A.1): the L queue marks from a 1 ms step, the classic queue's
    // PI2 aims at 15 ms, so the L queue's tail sits below the classic queue's median.
    assert!(
        m["l4s_delay_p99_ms"] < m["classic_delay_p50_ms"],
        "L p99 {} ms, C p50 {} ms",
        m["l4s_delay_p99_ms"],
        m["classic_delay_p50_ms"]
    );
    // Shares: the first flow is the one L4S flow, so both shares are its share of the summed
    // goodput, and that times `upload_mbps` is its own mean goodput.
    let l4s = m["l4s_share"];
    assert!(l4s > 0.0 && l4s < 1.0, "L4S share {l4s}");
    assert!(same(m["first_cc_share"], l4s));
    let sample = &r.flows[0].series;
    let prague_mbps =
        sample.goodput_bps.iter().sum::<f64>() / sample.goodput_bps.len() as f64 / 1e6;
    assert!(
        (l4s * m["upload_mbps"] - prague_mbps).abs() < 1e-6 * prague_mbps,
        "{l4s} × {} vs {prague_mbps}",
        m["upload_mbps"]
    );
}

/// On a FIFO with one controller and no ECN, the class delays and shares do not apply and are
/// absent; nothing is reordered, so nothing is retransmitted spuriously.
#[test]
fn metrics_that_do_not_apply_are_absent() {
    let (m, r) = run(r#"
name = "m"
duration = "6s"
[topology]
preset = "dumbbell"
rate = "20Mbit"
delay = "5ms"
[[flows]]
controller = "cubic"
count = 2
"#);
    for key in [
        "l4s_delay_p50_ms",
        "l4s_delay_p99_ms",
        "classic_delay_p50_ms",
        "classic_delay_p99_ms",
        "l4s_share",
        "first_cc_share",
    ] {
        assert!(!m.contains_key(key), "{key} present");
    }
    assert!(same(m["reorder_ratio"], 0.0));
    assert!(same(m["spurious_retransmits"], 0.0));
    assert!(same(
        m["queue_delay_p99_ms"],
        r.queues[0].summary.delay_p99_ms.unwrap()
    ));
}

/// A Bernoulli loss element (p = 1 %) behind the bottleneck drops data segments the queue's
/// counters never see; `drops` counts them too (as the engine's `data_packets_dropped` does): it
/// exceeds the bottleneck queue's drops by a binomial draw over the data that reached the
/// element, p·n within four standard deviations √(n·p·(1 − p)).
#[test]
fn drops_count_element_losses() {
    let (m, r) = run(r#"
name = "m"
duration = "8s"
[topology]
preset = "dumbbell"
rate = "20Mbit"
delay = "5ms"
[[flows]]
controller = "cubic"
[[elements]]
node = "right"
kind = "loss"
from = "left"
packets = "data"
p = 0.01
"#);
    let e = &r.engine;
    assert!(same(m["drops"], e.data_packets_dropped as f64));
    let queue_drops = r.queues[0].summary.drops;
    let by_element = m["drops"] - queue_drops as f64;
    let n = (e.data_packets_sent - queue_drops) as f64;
    let (mean, sd) = (0.01 * n, (n * 0.01 * 0.99).sqrt());
    assert!(
        (by_element - mean).abs() < 4.0 * sd,
        "{by_element} element losses of {n} segments, want {mean} ± {}",
        4.0 * sd
    );
}

/// A web-search workload (Poisson arrivals, sizes from the DCTCP CDF) over a 100 Mbit/s path:
/// the FCT metrics are the completed sized flows' FCT and slowdown statistics, per size
/// bucket, and no completed flow beats its ideal (slowdown ≥ 1: the ideal is the transfer
/// alone on the empty path).
#[test]
fn fct_metrics_follow_their_definitions() {
    let (m, r) = run(r#"
name = "m"
duration = "20s"
[topology]
preset = "dumbbell"
rate = "100Mbit"
delay = "10ms"
[[flows]]
name = "web"
controller = "cubic"
count = 60
arrivals = 4
size_cdf = "websearch"
"#);
    let done: Vec<(u64, f64, f64)> = r
        .flows
        .iter()
        .filter_map(|f| {
            let s = &f.summary;
            Some((s.size_bytes?, s.fct_s?, s.fct_slowdown?))
        })
        .collect();
    let sized = r
        .flows
        .iter()
        .filter(|f| f.summary.size_bytes.is_some())
        .count();
    assert_eq!(sized, 60);
    assert!(done.len() > 30, "{} of 60 completed", done.len());
    assert!(same(m["flows_completed"], done.len() as f64));
    assert!(same(m["flows_incomplete"], (sized - done.len()) as f64));
    for &(size, fct, slowdown) in &done {
        assert!(slowdown >= 1.0, "{size} B: slowdown {slowdown}");
        // fct_slowdown = fct_s / ideal_fct_s.
        let f = r
            .flows
            .iter()
            .find(|f| f.summary.size_bytes == Some(size) && f.summary.fct_s == Some(fct))
            .unwrap();
        assert!(same(slowdown, fct / f.summary.ideal_fct_s.unwrap()));
    }
    // The first sized flow (in flow order; it completes in this seeded run).
    let first = &r.flows[0].summary;
    assert!(same(m["first_fct_s"], first.fct_s.unwrap()));
    assert!(same(m["first_fct_slowdown"], first.fct_slowdown.unwrap()));
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let fcts: Vec<f64> = done.iter().map(|d| d.1).collect();
    assert!(same(m["fct_s"], mean(&fcts)));
    let mut sd: Vec<f64> = done.iter().map(|d| d.2).collect();
    assert!(same(m["fct_slowdown"], mean(&sd)));
    sd.sort_by(f64::total_cmp);
    assert!(same(
        m["fct_slowdown_p50"],
        cclab_lab::stats::percentile(&sd, 50.0).unwrap()
    ));
    assert!(same(
        m["fct_slowdown_p99"],
        cclab_lab::stats::percentile(&sd, 99.0).unwrap()
    ));
    let mut small: Vec<f64> = done
        .iter()
        .filter(|d| d.0 <= 100_000)
        .map(|d| d.2)
        .collect();
    small.sort_by(f64::total_cmp);
    assert!(!small.is_empty());
    assert!(same(
        m["fct_slowdown_p50_small"],
        cclab_lab::stats::percentile(&small, 50.0).unwrap()
    ));
}
