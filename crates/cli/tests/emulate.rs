//! `cclab emulate` end to end: a run that ends, is killed with SIGKILL or is stopped with Ctrl-C
//! (SIGINT) leaves no process (not even one a command forked or daemonised) and no network
//! namespace behind, and Ctrl-C keeps what was measured; a lossy path or Ctrl-C never holds a
//! run past its end; commands run as shell lines in the output directory, their output is
//! bounded and their exit status printed.
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

/// The lock that runs emulations one at a time, or `None` (the reason printed) where test
/// `test` cannot emulate here.
fn emulation(test: &str) -> Option<std::sync::MutexGuard<'static, ()>> {
    can_emulate(test).then(|| {
        ONE_AT_A_TIME
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    })
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

/// The processes (pid, command name) whose command line contains `marker`: the program and
/// the shells and wrappers that started it.
fn with_cmdline(marker: &str) -> Vec<(u32, String)> {
    processes()
        .into_iter()
        .filter(|p| {
            std::fs::read(format!("/proc/{}/cmdline", p.0)).is_ok_and(|c| {
                String::from_utf8_lossy(&c)
                    .replace('\0', " ")
                    .contains(marker)
            }) && p.3 != 'Z'
        })
        .map(|p| (p.0, p.2))
        .collect()
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

/// Start `cclab emulate` and wait until its hosts run their commands (a `sleep` the shell
/// forks, one that left its session with `setsid`, `tcpdump` where it is installed) and its
/// ping; returns the child, the pids of the processes it started and the namespaces of its
/// hosts.
#[expect(
    clippy::zombie_processes,
    reason = "the child is returned to the caller, which waits for it"
)]
fn start(dir: &Path) -> (Child, Vec<u32>, BTreeSet<u64>) {
    std::fs::write(dir.join("s.toml"), SCENARIO).unwrap();
    let tcpdump = cclab_emu::ns::find_command("tcpdump").is_some();
    let mut args = vec![
        "emulate",
        "s.toml",
        "--out",
        "out",
        "--exec",
        "r0@0s:sleep 600.17; true",
        "--exec",
        "s0@0s:(setsid sleep 600.18 &); sleep 600.19",
    ];
    if tcpdump {
        args.extend(["--exec", "s0@0s:tcpdump -n -i cclab0 -w t.pcap"]);
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_cclab"))
        .args(args)
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
        let mut programs = vec![
            ("sleep 600.17", "sleep"),
            ("sleep 600.18", "sleep"),
            ("sleep 600.19", "sleep"),
        ];
        if tcpdump {
            programs.push(("tcpdump -n -i cclab0", "tcpdump"));
        }
        let found: Vec<Vec<(u32, String)>> =
            programs.iter().map(|(m, _)| with_cmdline(m)).collect();
        let all_run = programs
            .iter()
            .zip(&found)
            .all(|((_, comm), f)| f.iter().any(|p| p.1 == *comm));
        if all_run && kids.iter().any(|k| k.2 == "ping") {
            let mut started: Vec<u32> = found.iter().flatten().map(|p| p.0).collect();
            let ns: BTreeSet<u64> = namespaces(Some(child.id()))
                .difference(&root_ns)
                .copied()
                .collect();
            started.extend(kids.iter().map(|k| k.0));
            return (child, started, ns);
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
    let Some(_one) = emulation("a_killed_emulation_leaves_nothing_behind") else {
        return;
    };
    let dir = temp_dir("emulate", "kill");
    let (mut child, pids, ns) = start(&dir);
    assert_eq!(
        ns.len(),
        4,
        "four hosts (flow and probe, each a sender and a receiver)"
    );
    let pid = child.id();
    child.kill().unwrap();
    child.wait().unwrap();
    assert_nothing_left(&pids, &ns);
    // Nothing on disk either (earlier versions kept the commands' output in a directory of
    // the temporary directory, left behind by a kill).
    assert!(
        !std::env::temp_dir()
            .join(format!("cclab-emu-{pid}"))
            .exists()
    );
}

/// At the normal end of a run every command still running is stopped with everything it
/// started, also what it forked, put in the background, detached with `setsid` or `nohup`
/// (`tcpdump` too, and it writes its capture out on SIGTERM), and no namespace is left. The
/// commands are shell lines (`--exec` too) run in the output directory; `yes` fills
/// `emulator.json` with 64 KiB, not gigabytes, and says how much it left out; each command's
/// exit status is printed. A temporary directory an earlier version left is removed.
#[test]
fn commands_end_with_the_run_and_their_output_is_bounded() {
    let Some(_one) = emulation("commands_end_with_the_run_and_their_output_is_bounded") else {
        return;
    };
    let dir = temp_dir("emulate", "end");
    let stale = std::env::temp_dir().join("cclab-emu-999999999");
    std::fs::create_dir_all(&stale).unwrap();
    std::fs::write(stale.join("cmd0.out"), "y\n").unwrap();
    let tcpdump = cclab_emu::ns::find_command("tcpdump").is_some();
    let mut scenario = r#"
name = "emu_end"
duration = "2s"
[topology]
preset = "dumbbell"
rate = "20Mbit"
delay = "5ms"
[[flows]]
controller = "cubic"
[[commands]]
host = "s0"
run = "sleep 301.11; true"
[[commands]]
host = "r0"
run = "sleep 301.12 & echo started"
[[commands]]
host = "s0"
start = "0.5s"
run = "(setsid sleep 301.13 &); echo ok"
[[commands]]
host = "r0"
run = "nohup sh -c 'sleep 301.14' >/dev/null 2>&1 &"
[[commands]]
host = "s0"
run = "yes cclabyes"
[[commands]]
host = "r0"
run = "pwd; echo here > made_here.txt; exit 3"
"#
    .to_owned();
    if tcpdump {
        scenario
            .push_str("[[commands]]\nhost = \"r0\"\nrun = \"tcpdump -n -i cclab0 -w cap.pcap\"\n");
    }
    std::fs::write(dir.join("s.toml"), scenario).unwrap();
    let before = namespaces(None);
    let t0 = Instant::now();
    let out = common::cclab_in(
        &dir,
        &[
            "emulate",
            "s.toml",
            "--out",
            "out",
            "--exec",
            "s0@0s:echo a; echo 'b c' > exec.txt",
        ],
    );
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(t0.elapsed() < Duration::from_secs(15), "{:?}", t0.elapsed());
    for m in [
        "sleep 301.11",
        "sleep 301.12",
        "sleep 301.13",
        "sleep 301.14",
        "yes cclabyes",
        "cap.pcap",
    ] {
        let left = with_cmdline(m);
        assert!(left.is_empty(), "`{m}` still runs: {left:?}");
    }
    let left: Vec<u64> = namespaces(None).difference(&before).copied().collect();
    assert!(left.is_empty(), "namespaces left: {left:?}");
    assert!(!stale.exists(), "a dead run's temporary directory is left");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/emulator.json")).unwrap())
            .unwrap();
    let cmds = report["commands"].as_array().unwrap();
    let find = |c: &str| cmds.iter().find(|x| x["command"] == c).unwrap();
    let yes = find("yes cclabyes");
    assert!(yes["status"].is_null(), "{}", yes["status"]);
    let kept = yes["stdout"].as_str().unwrap();
    assert!(kept.len() < 70 * 1024, "{} bytes kept", kept.len());
    assert!(kept.contains("bytes left out"));
    assert!(
        yes["stdout_dropped_bytes"].as_u64().unwrap() > 1_000_000,
        "{yes}"
    );
    let pwd = find("pwd; echo here > made_here.txt; exit 3");
    assert_eq!(pwd["status"], 3);
    let out_dir = std::fs::canonicalize(dir.join("out")).unwrap();
    assert_eq!(
        pwd["stdout"].as_str().unwrap().trim(),
        out_dir.to_str().unwrap()
    );
    assert!(dir.join("out/made_here.txt").exists());
    assert_eq!(find("(setsid sleep 301.13 &); echo ok")["status"], 0);
    assert_eq!(find("sleep 301.12 & echo started")["stdout"], "started\n");
    assert_eq!(
        std::fs::read_to_string(dir.join("out/exec.txt")).unwrap(),
        "b c\n"
    );
    assert!(
        err.contains("`pwd; echo here > made_here.txt; exit 3`: exit status 3"),
        "{err}"
    );
    assert!(
        err.contains("`yes cclabyes`: still running at the end (stopped)"),
        "{err}"
    );
    if tcpdump {
        // Stopped with SIGTERM, tcpdump closed its capture: a pcap header (24 bytes) at least.
        let pcap = std::fs::metadata(dir.join("out/cap.pcap")).unwrap();
        assert!(pcap.len() >= 24, "{} bytes", pcap.len());
    }
    // A simulation into the same directory removes the emulation's emulator.json (cclab wrote
    // it there), and keeps the commands' files and a user's file of an output's name.
    std::fs::write(dir.join("out/udp.csv"), "mine\n").unwrap();
    let run = common::cclab_in(&dir, &["run", "s.toml", "--out", "out"]);
    let err = text(&run.stderr);
    assert!(run.status.success(), "{err}");
    assert!(!dir.join("out/emulator.json").exists());
    assert!(dir.join("out/made_here.txt").exists());
    assert_eq!(
        std::fs::read_to_string(dir.join("out/udp.csv")).unwrap(),
        "mine\n"
    );
    assert!(err.contains("udp.csv is not this run's"), "{err}");
}

/// A path that loses 95 % of the packets (the SYNs too) or a command that takes the interface
/// down cannot hold a run past its end: a blocking connect() waited for the kernel's SYN
/// retries (over two minutes). Ctrl-C ends such a run, and one whose flow starts late, at once.
#[test]
fn a_lossy_path_ends_on_time_and_ctrl_c_ends_it_at_once() {
    let Some(_one) = emulation("a_lossy_path_ends_on_time_and_ctrl_c_ends_it_at_once") else {
        return;
    };
    let dir = temp_dir("emulate", "loss");
    let scenario = |duration: &str| {
        // A flow that starts late: its sender sleeps until then.
        let late = if duration == "2s" { "1.5s" } else { "40s" };
        format!(
            "name = \"eloss\"\nduration = \"{duration}\"\n[topology]\npreset = \"dumbbell\"\n\
             rate = \"20Mbit\"\ndelay = \"10ms\"\nloss = 0.95\n\
             [[flows]]\ncontroller = \"cubic\"\ncount = 3\n\
             [[flows]]\ncontroller = \"cubic\"\nstart = \"{late}\"\n\
             [[commands]]\nhost = \"s1\"\nstart = \"0.2s\"\nrun = \"ip link set cclab0 down\"\n"
        )
    };
    std::fs::write(dir.join("short.toml"), scenario("2s")).unwrap();
    std::fs::write(dir.join("s.toml"), scenario("60s")).unwrap();
    let t0 = Instant::now();
    let out = common::cclab_in(&dir, &["emulate", "short.toml", "--out", "o"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        t0.elapsed() < Duration::from_secs(10),
        "a 2 s run took {:?}",
        t0.elapsed()
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_cclab"))
        .args(["emulate", "s.toml", "--out", "o2"])
        .current_dir(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(2500));
    let st = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let t0 = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed() > Duration::from_secs(5) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("no exit 5 s after Ctrl-C");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(dir.join("o2/emulator.json").exists());
}

#[test]
fn ctrl_c_ends_an_emulation_and_keeps_what_it_measured() {
    let Some(_one) = emulation("ctrl_c_ends_an_emulation_and_keeps_what_it_measured") else {
        return;
    };
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
    let Some(_one) = emulation("scenario_commands_run_on_their_hosts") else {
        return;
    };
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
    let Some(_one) = emulation("quick_validation_agrees_on_goodput_and_rtt") else {
        return;
    };
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
    let Some(_one) = emulation("ctrl_c_ends_a_validation_and_keeps_the_finished_cases") else {
        return;
    };
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
