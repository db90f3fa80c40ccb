//! The Flent-equivalent tests: series names, markings and timing as Flent defines them
//! (`flent-format.md` §2.1–2.2), and the measurements they produce checked against the path.

use cclab_lab::record::SeriesKind;
use cclab_lab::scenario::{AccessTest, Overrides, parse};
use cclab_lab::study::run::run_one;
use cclab_lab::suite::{self, FlentTest, TESTS, Timing};

fn names(test: FlentTest) -> Vec<String> {
    let hosts: Vec<String> = (0..4).map(suite::host_name).collect();
    suite::series(test, &hosts)
        .into_iter()
        .map(|s| s.name)
        .collect()
}

#[test]
fn series_names_and_markings_are_flents() {
    assert_eq!(
        names(FlentTest::TcpUpload),
        ["TCP upload", "Ping (ms) ICMP"]
    );
    let up8 = names(FlentTest::Tcp8Up);
    assert_eq!(up8.len(), 9);
    assert_eq!(up8[0], "TCP upload::1");
    assert_eq!(up8[7], "TCP upload::8");
    let rrul = suite::series(FlentTest::Rrul, &[]);
    let find = |n: &str| {
        rrul.iter()
            .find(|s| s.name == n)
            .unwrap_or_else(|| panic!("{n}"))
    };
    for (label, dscp) in [("BE", 0), ("BK", 8), ("CS5", 40), ("EF", 46)] {
        assert_eq!(find(&format!("TCP upload {label}")).dscp, dscp);
        assert_eq!(
            find(&format!("TCP download {label}")).kind,
            SeriesKind::TcpDownload
        );
    }
    assert_eq!(find("Ping (ms) UDP EF").dscp, 46);
    assert_eq!(find("Ping (ms) UDP BK").dscp, 8);
    assert_eq!(find("Ping (ms) UDP BE").kind, SeriesKind::PingUdp);
    assert_eq!(find("Ping (ms) ICMP").kind, SeriesKind::PingIcmp);
    assert_eq!(rrul.len(), 12);
    let be = names(FlentTest::RrulBe);
    for n in ["TCP upload BE4", "TCP download BE2", "Ping (ms) UDP BE3"] {
        assert!(be.iter().any(|x| x == n), "{n}");
    }
    let fair = suite::series(
        FlentTest::RttFair,
        &(0..4).map(suite::host_name).collect::<Vec<_>>(),
    );
    assert_eq!(fair.len(), 12);
    assert_eq!(fair[0].name, "TCP upload BE1 server0");
    assert_eq!(fair[7].name, "TCP download BK2 server3");
    assert_eq!(fair[7].dscp, 8);
    assert_eq!(fair[11].name, "Ping (ms) ICMP4 server3");
    assert_eq!(fair[11].server, 3);
    for t in TESTS {
        assert_eq!(FlentTest::from_name(t).unwrap().name(), *t);
    }
}

#[test]
fn flent_timing_defaults() {
    let t = Timing::default();
    assert_eq!(t.total().as_secs_f64(), 70.0);
    let xs = suite::x_values(&t);
    assert_eq!(xs.len(), 351);
    assert!((xs[350] - 70.0).abs() < 1e-9);
}

fn study_of(test: &str, controller: &str, rate: &str, buffer: &str) -> cclab_lab::study::Study {
    let text = format!(
        r#"
name = "s"
[base]
name = "s"
[base.test]
name = "{test}"
length = "20s"
delay = "2s"
start_jitter = "0s"
[base.tcp]
controller = "{controller}"
[base.topology]
preset = "rtt_fair"
rate = "{rate}"
delay = "5ms"
buffer = "{buffer}"
"#
    );
    cclab_lab::study::parse(&text, "s.toml", std::path::Path::new(".")).unwrap()
}

/// A single CUBIC upload through a 2-BDP buffer fills the line: goodput is the line rate times
/// the payload share of a packet (1448/1500), within 5 % (slow start and the loss-recovery
/// dips). Its ping sees the standing queue: between the base RTT and base RTT + the buffer's
/// drain time. No series has data outside the transfer period.
#[test]
fn tcp_upload_measures_the_line() {
    let st = study_of("tcp_upload", "cubic", "20Mbit", "2bdp");
    let runs = st.runs();
    let (rec, _) = run_one(&st, &runs[0]).unwrap();
    let up = rec.metrics["upload_mbps"];
    let want = 20.0 * 1448.0 / 1500.0;
    assert!(
        (up - want).abs() < 0.05 * want,
        "upload {up} Mbit/s, want ≈ {want}"
    );
    assert!(!rec.metrics.contains_key("download_mbps"));
    let p50 = rec.metrics["ping_p50_ms"];
    // base 10 ms; 2 BDP of 20 Mbit/s × 10 ms drains in 20 ms.
    assert!(p50 > 10.0 && p50 < 10.0 + 20.0 + 2.0, "ping p50 {p50} ms");
    let s = &rec.series[0];
    for (x, v) in rec.x_values.iter().zip(&s.values) {
        if *x <= 2.0 || *x > 22.0 + 1e-9 {
            assert!(v.is_none(), "value at {x} s outside the transfer");
        }
    }
    assert_eq!(s.raw.len(), 100); // 20 s / 0.2 s
    assert!(s.raw.tcp_cwnd.iter().all(Option::is_some));
}

/// rrul on a symmetric line: both directions carry about the line rate (the ACKs of the other
/// direction take ~3.5 % of it: 52-byte ACKs for every second 1500-byte segment), and the
/// per-direction Jain index over the four flows is high for four equal CUBIC flows.
#[test]
fn rrul_fills_both_directions() {
    let st = study_of("rrul", "cubic", "20Mbit", "1bdp");
    let (rec, _) = run_one(&st, &st.runs()[0]).unwrap();
    let payload = 20.0 * 1448.0 / 1500.0;
    for key in ["upload_mbps", "download_mbps"] {
        let v = rec.metrics[key];
        assert!(v > 0.88 * payload && v < payload, "{key} {v}");
    }
    for key in ["upload_jain", "download_jain"] {
        assert!(rec.metrics[key] > 0.8, "{key} {}", rec.metrics[key]);
    }
    assert_eq!(rec.series.len(), 12);
}

/// rtt_fair: four servers at base RTTs 10, 30, 70 and 150 ms; each ping measures at least its
/// own base RTT, and the shortest-RTT flow gets the largest share (loss-based RTT unfairness).
#[test]
fn rtt_fair_has_four_rtts() {
    let st = study_of("rtt_fair", "cubic", "20Mbit", "1bdp");
    let cfg = st.config(0).unwrap();
    let Some(a) = cfg.scenario.topology.get::<AccessTest>() else {
        panic!("access")
    };
    let rtts: Vec<f64> = (0..4).map(|i| a.base_rtt(i).as_millis_f64()).collect();
    assert_eq!(rtts, [10.0, 30.0, 70.0, 150.0]);
    let (rec, _) = run_one(&st, &st.runs()[0]).unwrap();
    let pings: Vec<&cclab_lab::record::SeriesRecord> =
        rec.series.iter().filter(|s| !s.kind.is_tcp()).collect();
    assert_eq!(pings.len(), 4);
    for (p, base) in pings.iter().zip(&rtts) {
        let min = p.raw.val.iter().copied().fold(f64::INFINITY, f64::min);
        assert!(
            min >= *base && min < base + 2.0,
            "{}: min {min} ms, base {base}",
            p.name
        );
    }
    let mean = |name: &str| {
        let s = rec.series.iter().find(|s| s.name == name).unwrap();
        s.raw.val.iter().sum::<f64>() / s.raw.len() as f64
    };
    assert!(mean("TCP upload BE1 server0") > mean("TCP upload BK2 server3"));
}

#[test]
fn test_scenarios_reject_what_does_not_apply() {
    let base = r#"
name = "t"
[test]
name = "tcp_upload"
[tcp]
controller = "cubic"
[topology]
preset = "access"
rate = "10Mbit"
delay = "5ms"
"#;
    assert!(parse(base, "t.toml", &Overrides::default()).is_ok());
    let e = parse(
        &base.replace("tcp_upload", "tcp_2up"),
        "t.toml",
        &Overrides::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("t.toml:4:") && e.contains("tcp_upload"), "{e}");
    let e = parse(
        &base.replace("\"tcp_upload\"", "\"rtt_fair\""),
        "t.toml",
        &Overrides::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("server_delays") && e.contains("4 servers"),
        "{e}"
    );
    let e = parse(
        &base.replace(
            "controller = \"cubic\"",
            "controller = \"cubic\"\nstart = \"1s\"",
        ),
        "t.toml",
        &Overrides::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("tcp.start"), "{e}");
    let e = parse(
        &base.replace("[test]\nname = \"tcp_upload\"\n", ""),
        "t.toml",
        &Overrides::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("[test]"), "{e}");
    let e = parse(
        &format!("{base}\n[[flows]]\ncontroller = \"cubic\"\n"),
        "t.toml",
        &Overrides::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("flows"), "{e}");
}
