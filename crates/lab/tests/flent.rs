//! Round trip through the real Flent: synthetic but realistic run records of the five
//! Flent-equivalent tests are written with `write_flent_gz`, then Flent loads them (`-f summary`)
//! and plots them (each test's default plot, `ping_cdf`, and a two-file `box_combine` for rrul).
//! Series names are exactly Flent's (`flent-format.md` §2.2).
//!
//! Flent is found through `CCLAB_FLENT` (path of the `flent` executable), else `flent` on `PATH`.
//! Without Flent the tests are skipped with a message, unless `CCLAB_REQUIRE_FLENT=1`, which makes
//! them fail. Set `CCLAB_FLENT_KEEP=1` to keep the written files and plots (their directory is
//! printed).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use cclab_lab::flent::{flent_file_name, write_flent_gz};
use cclab_lab::record::{
    RECORD_FORMAT, RawSamples, RunRecord, SeriesKind, SeriesRecord, SimInfo, TestInfo,
};

const LENGTH: f64 = 60.0;
const DELAY: f64 = 5.0;
const STEP: f64 = 0.2;
const TOTAL: f64 = LENGTH + 2.0 * DELAY;

/// Deterministic noise in [0, 1).
fn noise(a: u64, b: u64) -> f64 {
    let mut x = a
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(b.wrapping_mul(0xBF58_476D_1CE4_E5B9))
        ^ 0x94D0_49BB_1331_11EB;
    x ^= x >> 31;
    x = x.wrapping_mul(0xD6E8_FEB8_6659_FD93);
    x ^= x >> 29;
    (x % 1_000_000) as f64 / 1_000_000.0
}

fn grid() -> Vec<f64> {
    let n = (TOTAL / STEP).round() as usize;
    (0..=n)
        .map(|i| (i as f64 * STEP * 1e6).round() / 1e6)
        .collect()
}

fn loaded(x: f64) -> bool {
    (DELAY..=DELAY + LENGTH).contains(&x)
}

/// A bulk TCP flow sharing `capacity_mbit` with `n` flows: goodput per step while it runs, one
/// raw sample per step with socket statistics.
fn tcp(
    name: &str,
    kind: SeriesKind,
    k: u64,
    n: usize,
    capacity_mbit: f64,
    base_rtt_ms: f64,
    cc: &str,
) -> SeriesRecord {
    let xs = grid();
    let mut values = Vec::with_capacity(xs.len());
    let mut raw = RawSamples::default();
    for (i, &x) in xs.iter().enumerate() {
        if !loaded(x) {
            values.push(None);
            continue;
        }
        let ramp = ((x - DELAY) / 2.0).min(1.0);
        let share = capacity_mbit / n as f64;
        let v = share * ramp * (0.8 + 0.4 * noise(k, i as u64));
        let rtt = base_rtt_ms + 5.0 + 25.0 * noise(k + 100, i as u64);
        let cwnd = (v * 1e6 * rtt / 1e3 / (1448.0 * 8.0)).max(2.0).round();
        values.push(Some(v));
        raw.t.push(x);
        raw.val.push(v);
        raw.tcp_cwnd.push(Some(cwnd));
        raw.tcp_rtt.push(Some(rtt));
        raw.tcp_pacing_rate.push(Some(v * 1.25e6));
        raw.tcp_delivery_rate.push(Some(v * 1e6));
    }
    SeriesRecord {
        name: name.into(),
        kind,
        dscp: 0,
        controller: Some(cc.into()),
        units: "Mbits/s".into(),
        values,
        raw,
    }
}

/// A latency probe every step for the whole run; RTT rises under load, every 37th probe lost.
fn ping(name: &str, kind: SeriesKind, k: u64, base_rtt_ms: f64) -> SeriesRecord {
    let xs = grid();
    let mut values = Vec::with_capacity(xs.len());
    let mut raw = RawSamples::default();
    for (i, &x) in xs.iter().enumerate() {
        if (i + k as usize).is_multiple_of(37) {
            values.push(None);
            continue;
        }
        let queue = if loaded(x) { 30.0 } else { 0.0 };
        let v = base_rtt_ms + queue * (0.5 + noise(k + 200, i as u64)) + noise(k, i as u64);
        values.push(Some(v));
        raw.t.push(x);
        raw.val.push(v);
        raw.seq.push(i as u64 + 1);
    }
    SeriesRecord {
        name: name.into(),
        kind,
        dscp: 0,
        controller: None,
        units: "ms".into(),
        values,
        raw,
    }
}

fn record(
    test: &str,
    cc: &str,
    rep: u32,
    hosts: Vec<String>,
    series: Vec<SeriesRecord>,
) -> RunRecord {
    let id: String = format!("{test}{cc}{rep}")
        .bytes()
        .enumerate()
        .map(|(i, b)| format!("{:02x}", (u64::from(b) * 31 + i as u64) % 256))
        .collect();
    RunRecord {
        format: RECORD_FORMAT,
        id,
        study: "flent-roundtrip".into(),
        config: format!("test={test} cc={cc}"),
        levels: vec![("test".into(), test.into()), ("cc".into(), cc.into())],
        rep,
        seed: 42 + u64::from(rep),
        spec: serde_json::json!({ "test": test, "cc": cc }),
        test: Some(TestInfo {
            name: test.into(),
            length_s: LENGTH,
            delay_s: DELAY,
            step_s: STEP,
            total_length_s: TOTAL,
            hosts,
            local_host: "sim-client".into(),
            title: format!("sim: {cc} 20Mbit 40ms fifo"),
        }),
        metrics: BTreeMap::new(),
        x_values: grid(),
        series,
        capacity: Vec::new(),
        delay: Vec::new(),
        fct: Vec::new(),
        wifi: Vec::new(),
        sim: SimInfo::default(),
    }
}

fn server() -> Vec<String> {
    vec!["sim-server".into()]
}

fn tcp_upload(cc: &str, rep: u32) -> RunRecord {
    let r = 1000 * u64::from(rep);
    let series = vec![
        tcp(
            "TCP upload",
            SeriesKind::TcpUpload,
            r + 1,
            1,
            20.0,
            40.0,
            cc,
        ),
        ping("Ping (ms) ICMP", SeriesKind::PingIcmp, r + 2, 40.0),
    ];
    record("tcp_upload", cc, rep, server(), series)
}

fn tcp_8up(cc: &str, rep: u32) -> RunRecord {
    let r = 1000 * u64::from(rep);
    let mut series: Vec<SeriesRecord> = (1..=8)
        .map(|i| {
            let name = format!("TCP upload::{i}");
            tcp(&name, SeriesKind::TcpUpload, r + i, 8, 20.0, 40.0, cc)
        })
        .collect();
    series.push(ping("Ping (ms) ICMP", SeriesKind::PingIcmp, r + 9, 40.0));
    record("tcp_8up", cc, rep, server(), series)
}

fn rrul_like(
    test: &str,
    cc: &str,
    rep: u32,
    tcp_labels: [&str; 4],
    udp_labels: [&str; 3],
) -> RunRecord {
    let r = 1000 * u64::from(rep);
    let mut series = Vec::new();
    for (i, label) in tcp_labels.iter().enumerate() {
        let name = format!("TCP upload {label}");
        series.push(tcp(
            &name,
            SeriesKind::TcpUpload,
            r + i as u64,
            4,
            20.0,
            40.0,
            cc,
        ));
    }
    for (i, label) in tcp_labels.iter().enumerate() {
        let name = format!("TCP download {label}");
        let k = r + 10 + i as u64;
        series.push(tcp(&name, SeriesKind::TcpDownload, k, 4, 50.0, 40.0, cc));
    }
    for (i, label) in udp_labels.iter().enumerate() {
        let name = format!("Ping (ms) UDP {label}");
        series.push(ping(&name, SeriesKind::PingUdp, r + 20 + i as u64, 40.0));
    }
    series.push(ping("Ping (ms) ICMP", SeriesKind::PingIcmp, r + 30, 40.0));
    record(test, cc, rep, server(), series)
}

fn rrul(cc: &str, rep: u32) -> RunRecord {
    rrul_like(
        "rrul",
        cc,
        rep,
        ["BE", "BK", "CS5", "EF"],
        ["EF", "BK", "BE"],
    )
}

fn rrul_be(cc: &str, rep: u32) -> RunRecord {
    rrul_like(
        "rrul_be",
        cc,
        rep,
        ["BE", "BE2", "BE3", "BE4"],
        ["BE1", "BE2", "BE3"],
    )
}

fn rtt_fair(cc: &str, rep: u32) -> RunRecord {
    let r = 1000 * u64::from(rep);
    let hosts: Vec<String> = (1..=4).map(|i| format!("sim-server-{i}")).collect();
    let labels = ["BE1", "BE2", "BK1", "BK2"];
    let base_rtts = [10.0, 20.0, 40.0, 80.0];
    let mut series = Vec::new();
    for (i, host) in hosts.iter().enumerate() {
        let (label, rtt, k) = (labels[i], base_rtts[i], r + 10 * i as u64);
        series.push(tcp(
            &format!("TCP upload {label} {host}"),
            SeriesKind::TcpUpload,
            k,
            4,
            20.0,
            rtt,
            cc,
        ));
        series.push(tcp(
            &format!("TCP download {label} {host}"),
            SeriesKind::TcpDownload,
            k + 1,
            4,
            50.0,
            rtt,
            cc,
        ));
    }
    for (i, host) in hosts.iter().enumerate() {
        let name = format!("Ping (ms) ICMP{} {host}", i + 1);
        series.push(ping(
            &name,
            SeriesKind::PingIcmp,
            r + 50 + i as u64,
            base_rtts[i],
        ));
    }
    record("rtt_fair", cc, rep, hosts, series)
}

/// The Flent executable, or `None` (after saying so) when the round trip is to be skipped.
fn flent() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("CCLAB_FLENT").filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        assert!(
            p.is_file(),
            "CCLAB_FLENT={} is not a file; point it at the flent executable",
            p.display()
        );
        return Some(p);
    }
    let on_path = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join("flent"))
            .find(|p| p.is_file())
    });
    if on_path.is_some() {
        return on_path;
    }
    assert!(
        std::env::var("CCLAB_REQUIRE_FLENT").as_deref() != Ok("1"),
        "CCLAB_REQUIRE_FLENT=1 but Flent was not found: set CCLAB_FLENT to the flent executable \
         or put flent on PATH (pip install flent matplotlib)"
    );
    eprintln!("flent not installed; skipping the Flent round-trip (set CCLAB_FLENT)");
    None
}

/// A fresh directory for one test's files.
fn work_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "cclab-flent-{test}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Run Flent with `args`; panic with its output unless it exits 0. Returns stdout.
fn run_flent(flent: &Path, args: &[&str]) -> String {
    let out = Command::new(flent)
        .args(args)
        .env("MPLBACKEND", "Agg")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", flent.display()));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "flent {args:?} failed ({})\nstdout:\n{stdout}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// Plot `plot` from `inputs` into `dir/<name>.png` and check a non-empty PNG appeared.
fn plot(flent: &Path, dir: &Path, inputs: &[&Path], plot: &str, name: &str) {
    let png = dir.join(format!("{name}.png"));
    let mut args: Vec<String> = Vec::new();
    for input in inputs {
        args.push("-i".into());
        args.push(input.display().to_string());
    }
    for a in ["-f", "plot", "-p", plot, "-o"] {
        args.push(a.into());
    }
    args.push(png.display().to_string());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    run_flent(flent, &args);
    let bytes = std::fs::read(&png)
        .unwrap_or_else(|e| panic!("flent -p {plot} wrote no {}: {e}", png.display()));
    assert!(
        bytes.len() > 1000 && bytes.starts_with(b"\x89PNG"),
        "flent -p {plot} wrote an empty or non-PNG file ({} bytes)",
        bytes.len()
    );
}

/// Write `recs`, check Flent's summary of the first names every series, and draw `plots` from
/// the first (plus `combine_plots` from all of them together).
fn round_trip(recs: &[RunRecord], plots: &[&str], combine_plots: &[&str]) {
    let Some(flent) = flent() else { return };
    let test = recs[0].test.as_ref().unwrap().name.clone();
    let dir = work_dir(&test);
    let files: Vec<PathBuf> = recs
        .iter()
        .map(|r| {
            let path = dir.join(flent_file_name(r));
            write_flent_gz(r, &path).unwrap();
            path
        })
        .collect();

    let file = files[0].display().to_string();
    let summary = run_flent(&flent, &["-i", &file, "-f", "summary"]);
    assert!(
        summary.contains(&format!("Summary of {test} test run")),
        "unexpected summary:\n{summary}"
    );
    for s in &recs[0].series {
        let line = summary
            .lines()
            .find(|l| {
                l.trim_start()
                    .strip_prefix(s.name.as_str())
                    .is_some_and(|rest| rest.trim_start().starts_with(':'))
            })
            .unwrap_or_else(|| panic!("summary lacks series `{}`:\n{summary}", s.name));
        assert!(
            !line.contains("No data"),
            "Flent found no data for `{}`:\n{summary}",
            s.name
        );
    }

    for p in plots {
        plot(&flent, &dir, &[&files[0]], p, &format!("{test}-{p}"));
    }
    let all: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    for p in combine_plots {
        plot(&flent, &dir, &all, p, &format!("{test}-{p}"));
    }

    if std::env::var("CCLAB_FLENT_KEEP").as_deref() == Ok("1") {
        eprintln!("Flent files and plots kept in {}", dir.display());
    } else {
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn tcp_upload_round_trip() {
    round_trip(&[tcp_upload("cubic", 0)], &["totals", "ping_cdf"], &[]);
}

#[test]
fn tcp_8up_round_trip() {
    round_trip(&[tcp_8up("cubic", 0)], &["totals", "ping_cdf"], &[]);
}

#[test]
fn rrul_round_trip() {
    round_trip(
        // Two repetitions of two configurations: box_combine draws one box per configuration.
        &[
            rrul("cubic", 0),
            rrul("cubic", 1),
            rrul("bbr3", 0),
            rrul("bbr3", 1),
        ],
        &["all_scaled", "ping_cdf"],
        &["box_combine"],
    );
}

#[test]
fn rrul_be_round_trip() {
    round_trip(&[rrul_be("cubic", 0)], &["all_scaled", "ping_cdf"], &[]);
}

#[test]
fn rtt_fair_round_trip() {
    round_trip(&[rtt_fair("cubic", 0)], &["all_scaled", "ping_cdf"], &[]);
}

#[test]
fn every_series_keeps_its_flent_name() {
    // Independent of Flent: the written files hold Flent's series names and a NAME Flent knows.
    let dir = work_dir("names");
    for rec in [
        tcp_upload("cubic", 0),
        tcp_8up("cubic", 0),
        rrul("cubic", 0),
        rrul_be("cubic", 0),
        rtt_fair("cubic", 0),
    ] {
        let path = dir.join(flent_file_name(&rec));
        write_flent_gz(&rec, &path).unwrap();
        let mut text = String::new();
        std::io::Read::read_to_string(
            &mut flate2::read::GzDecoder::new(std::fs::File::open(&path).unwrap()),
            &mut text,
        )
        .unwrap();
        let j: serde_json::Value = serde_json::from_str(&text).unwrap();
        let test = rec.test.as_ref().unwrap();
        assert_eq!(j["metadata"]["NAME"], test.name.as_str());
        assert_eq!(
            j["metadata"]["HOSTS"].as_array().unwrap().len(),
            test.hosts.len()
        );
        let n = rec.x_values.len();
        for s in &rec.series {
            assert_eq!(j["results"][&s.name].as_array().unwrap().len(), n);
            assert_eq!(
                j["raw_values"][&s.name].as_array().unwrap().len(),
                s.raw.len()
            );
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Records of real simulated runs (not synthetic ones): a small study of `test` with CUBIC and
/// BBRv3, two repetitions each, 4 s transfers.
fn simulated(test: &str) -> Vec<RunRecord> {
    let text = format!(
        r#"
name = "sim"
repetitions = 2
[base]
name = "sim"
[base.test]
name = "{test}"
length = "4s"
delay = "1s"
[base.tcp]
controller = "cubic"
[base.topology]
preset = "rtt_fair"
rate = "10Mbit"
delay = "5ms"
[grid]
tcp.controller = ["cubic", "bbr3"]
"#
    );
    let st = cclab_lab::study::parse(&text, "sim.toml", Path::new(".")).unwrap();
    st.runs()
        .iter()
        .map(|r| cclab_lab::study::run::run_one(&st, r).unwrap().0)
        .collect()
}

#[test]
fn simulated_rrul_round_trip() {
    round_trip(
        &simulated("rrul"),
        &["all_scaled", "ping_cdf", "tcp_cwnd"],
        &["box_combine"],
    );
}

#[test]
fn simulated_rtt_fair_and_tcp_8up_round_trip() {
    round_trip(&simulated("rtt_fair"), &["all_scaled", "ping_cdf"], &[]);
    round_trip(
        &simulated("tcp_8up"),
        &["totals", "ping_cdf"],
        &["box_combine"],
    );
}

/// A Flent test through the emulator (`backend = "emulate"`: the kernel's CUBIC through the
/// simulator's elements in real time), read back and plotted by Flent itself. Skipped, with a
/// message, where the emulator cannot run (no root or no /dev/net/tun).
#[test]
fn emulated_tcp_upload_round_trip() {
    if let Err(e) = cclab_emu::ns::check_privileges() {
        eprintln!("skipped emulated_tcp_upload_round_trip: {e}");
        return;
    }
    let text = r#"
name = "emu"
repetitions = 1
backend = "emulate"
[base]
name = "emu"
[base.test]
name = "tcp_upload"
length = "3s"
delay = "1s"
[base.tcp]
controller = "cubic"
[base.topology]
preset = "access"
rate = "10Mbit"
delay = "5ms"
"#;
    let st = cclab_lab::study::parse(text, "emu.toml", Path::new(".")).unwrap();
    let recs: Vec<RunRecord> = st
        .runs()
        .iter()
        .map(|r| cclab_lab::study::run::run_one(&st, r).unwrap().0)
        .collect();
    // The upload ran at the line's rate: mean over the test's loaded seconds within 15 % of
    // 10 Mbit/s × 1448/1500 (slow start takes part of the first second).
    let up = recs[0].metrics["upload_mbps"];
    assert!((up / 9.653 - 1.0).abs() < 0.15, "upload {up} Mbit/s");
    round_trip(&recs, &["totals", "ping_cdf", "tcp_cwnd"], &[]);
}
