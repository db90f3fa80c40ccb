//! `cclab emulate` end to end: a run killed with SIGKILL or stopped with Ctrl-C (SIGINT) leaves
//! no process and no network namespace behind, and Ctrl-C keeps what was measured.
//!
//! Needs root (or CAP_NET_ADMIN and CAP_SYS_ADMIN) and /dev/net/tun; without them each test
//! says why it is skipped and passes.

mod common;

use std::collections::BTreeSet;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::{temp_dir, text};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

const SCENARIO: &str = r#"
name = "emu_kill"
duration = "60s"

[topology]
preset = "dumbbell"
rate = "10Mbit"
delay = "5ms"
buffer = "1bdp"

[[flows]]
controller = "cubic"

[[probes]]
interval = "100ms"
"#;

fn can_emulate(test: &str) -> bool {
    match cclab_emu::ns::check_privileges() {
        Ok(()) => true,
        Err(e) => {
            eprintln!("skipped {test}: {e}");
            false
        }
    }
}

/// (pid, parent pid, command name, state) of every process.
fn processes() -> Vec<(u32, u32, String, char)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ppid …`; comm may hold spaces, so split at the last ')'.
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let comm = stat[open + 1..close].to_owned();
        let mut rest = stat[close + 1..].split_whitespace();
        let state = rest.next().and_then(|s| s.chars().next()).unwrap_or('?');
        let ppid = rest.next().and_then(|s| s.parse().ok()).unwrap_or(0);
        out.push((pid, ppid, comm, state));
    }
    out
}

/// Network namespace inodes of the tasks of `pid` (or of every process).
fn namespaces(pid: Option<u32>) -> BTreeSet<u64> {
    let mut out = BTreeSet::new();
    let pids: Vec<u32> = match pid {
        Some(p) => vec![p],
        None => processes().iter().map(|p| p.0).collect(),
    };
    for p in pids {
        let tasks = Path::new("/proc").join(p.to_string()).join("task");
        for t in std::fs::read_dir(tasks).into_iter().flatten().flatten() {
            if let Ok(m) = std::fs::metadata(t.path().join("ns/net")) {
                out.insert(m.ino());
            }
        }
    }
    out
}

/// Start `cclab emulate` and wait until its hosts run their commands; returns the child, the
/// pids of the processes it started and the namespaces of its hosts.
#[expect(
    clippy::zombie_processes,
    reason = "the child is returned to the caller, which waits for it"
)]
fn start(dir: &Path) -> (Child, Vec<u32>, BTreeSet<u64>) {
    std::fs::write(dir.join("s.toml"), SCENARIO).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_cclab"))
        .args([
            "emulate",
            "s.toml",
            "--out",
            "out",
            "--exec",
            "r0@0s:sleep 600",
        ])
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let root_ns = namespaces(Some(std::process::id()));
    let t0 = Instant::now();
    loop {
        let kids: Vec<_> = processes()
            .into_iter()
            .filter(|p| p.1 == child.id())
            .collect();
        if kids.iter().any(|k| k.2 == "sleep") && kids.iter().any(|k| k.2 == "ping") {
            let ns: BTreeSet<u64> = namespaces(Some(child.id()))
                .difference(&root_ns)
                .copied()
                .collect();
            return (child, kids.iter().map(|k| k.0).collect(), ns);
        }
        if t0.elapsed() > Duration::from_secs(15) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the emulation did not start its commands");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Wait until none of `pids` runs (gone or a zombie) and no task is in any of `ns`.
fn assert_nothing_left(pids: &[u32], ns: &BTreeSet<u64>) {
    let t0 = Instant::now();
    loop {
        let alive: Vec<u32> = processes()
            .into_iter()
            .filter(|p| pids.contains(&p.0) && p.3 != 'Z')
            .map(|p| p.0)
            .collect();
        let used: Vec<u64> = namespaces(None).intersection(ns).copied().collect();
        if alive.is_empty() && used.is_empty() {
            return;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "left behind: processes {alive:?}, namespaces {used:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_killed_emulation_leaves_nothing_behind() {
    if !can_emulate("a_killed_emulation_leaves_nothing_behind") {
        return;
    }
    let _one = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let dir = temp_dir("emulate", "kill");
    let (mut child, pids, ns) = start(&dir);
    assert_eq!(
        ns.len(),
        4,
        "four hosts (flow and probe, each a sender and a receiver)"
    );
    child.kill().unwrap();
    child.wait().unwrap();
    assert_nothing_left(&pids, &ns);
}

#[test]
fn ctrl_c_ends_an_emulation_and_keeps_what_it_measured() {
    if !can_emulate("ctrl_c_ends_an_emulation_and_keeps_what_it_measured") {
        return;
    }
    let _one = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let dir = temp_dir("emulate", "int");
    let (mut child, pids, ns) = start(&dir);
    std::thread::sleep(Duration::from_secs(2));
    let st = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "no exit after Ctrl-C"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status:?}");
    assert_nothing_left(&pids, &ns);
    let summary = std::fs::read_to_string(dir.join("out/summary.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&summary).unwrap();
    let d = v["duration_s"].as_f64().unwrap();
    assert!(
        d > 1.5 && d < 10.0,
        "duration {d}: {}",
        text(summary.as_bytes())
    );
    let flows = std::fs::read_to_string(dir.join("out/flows.csv")).unwrap();
    assert!(flows.lines().count() > 10, "flow samples were written");
    assert!(dir.join("out/emulator.json").exists());
}

/// A `[[commands]]` entry runs in its host's namespace, `{NAME}` is the other host's address,
/// and its output lands in emulator.json: a ping from r0 to s0 crosses the emulated path
/// (2 × 5 ms one way) both ways.
#[test]
fn scenario_commands_run_on_their_hosts() {
    if !can_emulate("scenario_commands_run_on_their_hosts") {
        return;
    }
    let _one = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let dir = temp_dir("emulate", "cmd");
    let scenario = r#"
name = "emu_cmd"
duration = "2s"
[topology]
preset = "dumbbell"
rate = "10Mbit"
delay = "5ms"
[[flows]]
controller = "cubic"
size = "10kB"
[[commands]]
host = "r0"
start = "0.2s"
run = "ping -c 3 -i 0.2 -n {s0}"
"#;
    std::fs::write(dir.join("s.toml"), scenario).unwrap();
    let out = common::cclab_in(&dir, &["emulate", "s.toml", "--out", "out"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/emulator.json")).unwrap())
            .unwrap();
    let cmd = &report["commands"][0];
    assert_eq!(cmd["host"], "r0");
    assert_eq!(cmd["status"], 0, "{cmd}");
    let stdout = cmd["stdout"].as_str().unwrap();
    assert!(stdout.contains("3 received"), "{stdout}");
    let rtts: Vec<f64> = stdout
        .lines()
        .filter_map(|l| l.split("time=").nth(1))
        .filter_map(|t| t.trim_end_matches(" ms").parse().ok())
        .collect();
    assert_eq!(rtts.len(), 3, "{stdout}");
    assert!(rtts.iter().all(|&r| (10.0..12.0).contains(&r)), "{rtts:?}");
}

/// `cclab validate --quick` runs its three cases both ways and writes the side-by-side table
/// with the simulated hosts' packet latency; goodput agrees within its 10 % target in every case, and the mean srtt in the CUBIC cases
/// (one kernel BBR run differs from the next: its srtt moved by 10 % between runs here, see
/// VALIDATION.md).
#[test]
fn quick_validation_agrees_on_goodput_and_rtt() {
    if !can_emulate("quick_validation_agrees_on_goodput_and_rtt") {
        return;
    }
    let _one = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let dir = temp_dir("emulate", "validate");
    let out = common::cclab_in(&dir, &["validate", "--quick", "--out", "v"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let md = std::fs::read_to_string(dir.join("v/validation.md")).unwrap();
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("v/validation.json")).unwrap())
            .unwrap();
    let cases = v.as_array().unwrap();
    assert_eq!(cases.len(), 3, "{md}");
    for c in cases {
        // The simulated hosts' packet latency is reported (the default `emulated` model's).
        assert!(
            c["sim_latency"]["median_us"].as_f64().unwrap() > 0.0
                && c["sim_latency"]["stall_rate"].as_f64().unwrap() > 0.0,
            "{}",
            c["sim_latency"]
        );
        let bbr = c["name"].as_str().unwrap().starts_with("bbr");
        assert!(
            md.contains("simulated hosts: packet latency median"),
            "{md}"
        );
        let metrics: &[&str] = if bbr {
            &["goodput, Mbit/s"]
        } else {
            &["goodput, Mbit/s", "srtt mean, ms"]
        };
        for &metric in metrics {
            let row = c["rows"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["metric"] == metric)
                .unwrap();
            assert_eq!(row["within"], true, "{}: {metric} off\n{md}", c["name"]);
        }
    }
}

/// Without the privileges, `cclab emulate` says what is missing and exits with status 1
/// (checked by dropping root's privileges with `setpriv` where the test runs as root).
#[test]
fn without_privileges_the_message_says_what_is_missing() {
    use std::os::unix::fs::PermissionsExt;
    let dir = temp_dir("emulate", "unprivileged");
    std::fs::write(dir.join("s.toml"), SCENARIO).unwrap();
    // An output directory the unprivileged user may write.
    std::fs::create_dir_all(dir.join("o")).unwrap();
    std::fs::set_permissions(dir.join("o"), std::fs::Permissions::from_mode(0o777)).unwrap();
    let bin = env!("CARGO_BIN_EXE_cclab");
    let root = std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"));
    let mut cmd = if root {
        let Some(setpriv) = cclab_emu::ns::find_command("setpriv") else {
            eprintln!("skipped: no setpriv to drop root's privileges");
            return;
        };
        let mut c = Command::new(setpriv);
        c.args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--inh-caps=-all",
            "--",
            bin,
        ]);
        c
    } else {
        Command::new(bin)
    };
    let out = cmd
        .args(["emulate", "s.toml", "--out", "o"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let err = text(&out.stderr);
    if root && err.contains("Permission denied") && !err.contains("cannot run here") {
        eprintln!("skipped: the unprivileged user cannot read the test files here: {err}");
        return;
    }
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("the emulator cannot run here"), "{err}");
    assert!(err.contains("CAP_NET_ADMIN"), "{err}");
}

/// Ctrl-C during `cclab validate` ends the kernel's run under way, exits with an error, and
/// keeps the cases finished before it: `validation.md` and `validation.json` are written after
/// every case (the first of `--quick`'s three is done about 11 s in), and no namespace of the
/// run is left. A previous run's report in the directory is replaced before the first case.
/// It runs with `--sim-timing measured`: the finished case's simulated hosts have the stall
/// rate whose lateness p99 is the one the emulator measured in its kernel run.
#[test]
fn ctrl_c_ends_a_validation_and_keeps_the_finished_cases() {
    if !can_emulate("ctrl_c_ends_a_validation_and_keeps_the_finished_cases") {
        return;
    }
    let _one = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let dir = temp_dir("emulate", "validate-int");
    // A previous run's report, which the new run must replace before its first case.
    std::fs::create_dir_all(dir.join("v")).unwrap();
    std::fs::write(dir.join("v/validation.md"), "Cases: 14 of 14. (stale)\n").unwrap();
    let before = namespaces(None);
    let mut child = Command::new(env!("CARGO_BIN_EXE_cclab"))
        .args([
            "validate",
            "--quick",
            "--sim-timing",
            "measured",
            "--out",
            "v",
        ])
        .current_dir(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let md = dir.join("v/validation.md");
    let t0 = Instant::now();
    // The report is replaced at the start ("Cases: 0 of 3", seen while the first case's
    // kernel run takes its 10 s); wait for the first case in it.
    let mut empty_seen = false;
    while !std::fs::read_to_string(&md).is_ok_and(|t| t.contains("Cases: 1 of 3")) {
        empty_seen |= std::fs::read_to_string(&md).is_ok_and(|t| t.contains("Cases: 0 of 3"));
        if let Some(s) = child.try_wait().unwrap() {
            panic!("validate ended before its first case was written: {s:?}");
        }
        assert!(t0.elapsed() < Duration::from_secs(90), "no case written");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        empty_seen,
        "the stale report was not replaced before the first case"
    );
    // Into the second case's kernel run.
    std::thread::sleep(Duration::from_secs(3));
    let st = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let t0 = Instant::now();
    while child.try_wait().unwrap().is_none() {
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "no exit after Ctrl-C"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    let err = text(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(md.contains("Cases: 1 of 3"), "{md}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("v/validation.json")).unwrap())
            .unwrap();
    assert_eq!(v.as_array().unwrap().len(), 1);
    assert!(md.contains("`measured`"), "{md}");
    let case = &v[0];
    let measured_p99 = case["emulator"][0]["lateness_ms"][1].as_f64().unwrap();
    let model_p99 = case["sim_latency"]["quantiles_ms"][1].as_f64().unwrap();
    let rate = case["sim_latency"]["stall_rate"].as_f64().unwrap();
    // The rate solves p99 = measured, unless the measured p99 lies within the wake-up
    // latency's own tail (no stalls) or beyond the longest stall (the rate's cap): a loaded
    // machine can do either.
    if rate == 0.0 {
        assert!(model_p99 >= measured_p99, "{}", case["sim_latency"]);
    } else if measured_p99 < 3.5 {
        assert!(
            (model_p99 / measured_p99 - 1.0).abs() < 0.01,
            "model p99 {model_p99} ms, measured {measured_p99} ms"
        );
    }
    let left: Vec<u64> = namespaces(None).difference(&before).copied().collect();
    assert!(left.is_empty(), "namespaces left: {left:?}");
}
