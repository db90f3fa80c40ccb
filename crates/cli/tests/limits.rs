//! Hostile input and resource limits, end to end: a closed stdout, counts derived from
//! durations, study sizes, thread counts, input files that are not files or too large, huge
//! buffers, and `check` finding what `run` refuses. Each test names the bound it exercises.

mod common;

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::{cclab_in, text};

fn temp_dir(tag: &str) -> PathBuf {
    common::temp_dir("limits", tag)
}

fn scenarios() -> PathBuf {
    common::workspace().join("scenarios")
}

/// A one-flow dumbbell scenario lasting `duration`, with extra top-level lines, topology lines
/// and trailing tables.
fn dumbbell(name: &str, top: &str, topology: &str, tail: &str) -> String {
    format!(
        "name = \"{name}\"\n{top}\n[topology]\npreset = \"dumbbell\"\nrate = \"10Mbit\"\n\
         delay = \"10ms\"\n{topology}\n[[flows]]\ncontroller = \"cubic\"\n{tail}\n"
    )
}

/// Exit status 1 and an `error:` line containing every one of `words`; no panic.
fn assert_refused(o: &Output, words: &[&str]) {
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "stderr: {err}");
    assert!(!err.contains("panicked"), "{err}");
    for w in words {
        assert!(err.contains(w), "missing {w:?} in: {err}");
    }
}

/// Write `text` to `dir/file` and check that `cclab check` refuses it as [`assert_refused`] says.
fn check_refuses(dir: &Path, file: &str, text: &str, words: &[&str]) {
    std::fs::write(dir.join(file), text).unwrap();
    assert_refused(&cclab_in(dir, &["check", file]), words);
}

/// Run cclab with stdout and stderr pipes whose read ends are closed before cclab writes
/// anything (`cclab … 2>&1 | head -0`).
fn with_closed_pipes(dir: &Path, args: &[&str]) -> std::process::ExitStatus {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cclab"))
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn cclab");
    drop(child.stdout.take());
    drop(child.stderr.take());
    child.wait().unwrap()
}

/// Run cclab with stdout a pipe whose read end is closed before cclab writes anything.
fn with_closed_stdout(dir: &Path, args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cclab"))
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn cclab");
    drop(child.stdout.take());
    let mut err = Vec::new();
    child.stderr.take().unwrap().read_to_end(&mut err).unwrap();
    let status = child.wait().unwrap();
    Output {
        status,
        stdout: Vec::new(),
        stderr: err,
    }
}

#[test]
fn a_closed_stdout_is_a_normal_end_and_the_files_are_written() {
    let dir = temp_dir("pipe");
    let sc = scenarios().join("cubic_single.toml");
    let sc = sc.to_str().unwrap();
    let o = with_closed_stdout(&dir, &["run", sc, "--duration", "1s", "--out", "o"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(!text(&o.stderr).contains("panicked"));
    assert!(dir.join("o/summary.json").exists());
    assert!(dir.join("o/flows.csv").exists());

    let o = with_closed_stdout(&dir, &["check", sc]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = with_closed_stdout(&dir, &["list", "controllers", "--params"]);
    assert!(o.status.success(), "{}", text(&o.stderr));

    let study = "name = \"piped\"\n[base]\n".to_owned()
        + &dumbbell("b", "duration = \"1s\"", "", "")
            .replace("[topology]", "[base.topology]")
            .replace("[[flows]]", "[[base.flows]]");
    std::fs::write(dir.join("s.toml"), study).unwrap();
    let o = with_closed_stdout(&dir, &["study", "s.toml", "--out", "st", "--quiet"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(dir.join("st/piped/report.html").exists());

    // Standard error closed too: still status 0 and the files.
    let status = with_closed_pipes(&dir, &["run", sc, "--duration", "1s", "--out", "o2"]);
    assert!(status.success(), "{status}");
    assert!(dir.join("o2/summary.json").exists());
    let status = with_closed_pipes(&dir, &["study", "s.toml", "--out", "st2", "--quiet"]);
    assert!(status.success(), "{status}");
    assert!(dir.join("st2/piped/report.html").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The simulated duration is at most one day, in the file, on the command line and as a test's
/// length and delays; `check` refuses what `run` does.
#[test]
fn duration_is_bounded_in_check_and_run() {
    let dir = temp_dir("duration");
    let access = |timing: &str| {
        format!(
            "name = \"t\"\n[topology]\npreset = \"access\"\nrate = \"10Mbit\"\n\
             delay = \"5ms\"\n[test]\nname = \"tcp_upload\"\n{timing}\nstep = \"1s\"\n\
             [tcp]\ncontroller = \"cubic\"\n"
        )
    };
    let cases = [
        (
            dumbbell(
                "d",
                "duration = \"86400.001s\"\nsample_interval = \"1s\"",
                "",
                "",
            ),
            vec!["x.toml:2:12", "duration", "at most 86400 s", "86400.001 s"],
        ),
        (
            access("length = \"1441min\""),
            vec!["x.toml:8:10", "test.length", "86460 s", "at most 86400 s"],
        ),
        (
            access("length = \"1439min\"\ndelay = \"31s\""),
            vec!["x.toml:9:9", "test.delay", "86402 s", "at most 86400 s"],
        ),
    ];
    for (toml, words) in &cases {
        std::fs::write(dir.join("x.toml"), toml).unwrap();
        assert_refused(&cclab_in(&dir, &["check", "x.toml"]), words);
        assert_refused(&cclab_in(&dir, &["run", "x.toml", "--out", "o"]), words);
        assert!(!dir.join("o").exists());
    }
    let ok = dumbbell(
        "ok",
        "duration = \"1440min\"\nsample_interval = \"1s\"",
        "",
        "",
    );
    std::fs::write(dir.join("ok.toml"), ok).unwrap();
    let o = cclab_in(&dir, &["check", "ok.toml"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = cclab_in(
        &dir,
        &["run", "ok.toml", "--duration", "1441min", "--out", "o"],
    );
    assert_refused(&o, &["duration", "86460 s", "86400 s"]);
    assert!(!dir.join("o").exists());
    // A study level beyond the bound is named at its grid level, also in a dry run.
    let grid = "[grid]\nduration = [\"1s\", \"1441min\"]";
    std::fs::write(dir.join("s.toml"), study_file("long", 1, grid)).unwrap();
    assert_refused(
        &cclab_in(&dir, &["study", "s.toml", "--dry-run"]),
        &[
            "s.toml:13:19",
            "grid.duration[1]",
            "1441min",
            "at most 86400 s",
        ],
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn counts_derived_from_intervals_are_bounded_in_check_and_run() {
    let dir = temp_dir("counts");
    let cases = [
        (
            dumbbell(
                "si",
                "duration = \"10s\"\nsample_interval = \"1ns\"",
                "",
                "",
            ),
            vec!["sample_interval", "10000000000 samples", "1000000"],
        ),
        (
            dumbbell(
                "pr",
                "duration = \"10s\"",
                "",
                "[[probes]]\ninterval = \"1ns\"",
            ),
            vec!["probes[0].interval", "10000000000 packets", "1000000"],
        ),
        (
            // 10 000 rows (9999 flows and the queue) × 537 samples: 5 370 000 rows, over the
            // 5 368 709 a run record of the store can hold.
            dumbbell(
                "rows",
                "duration = \"53.7s\"\nsample_interval = \"100ms\"",
                "",
                "count = 9999",
            ),
            vec!["sample_interval", "5370000 sample rows", "at most 5368709"],
        ),
        (
            "name = \"st\"\n[topology]\npreset = \"access\"\nrate = \"10Mbit\"\ndelay = \"5ms\"\n\
             [test]\nname = \"tcp_upload\"\nstep = \"1ns\"\n[tcp]\ncontroller = \"cubic\"\n"
                .to_owned(),
            vec!["test.step", "samples per series", "1000000"],
        ),
        (
            dumbbell(
                "pie",
                "duration = \"2s\"",
                "qdisc = { kind = \"pie\", tupdate = \"1ns\" }",
                "",
            ),
            vec!["tupdate", "2000000000 updates", "10000000"],
        ),
    ];
    for (toml, words) in &cases {
        std::fs::write(dir.join("x.toml"), toml).unwrap();
        assert_refused(&cclab_in(&dir, &["check", "x.toml"]), words);
        assert_refused(&cclab_in(&dir, &["run", "x.toml", "--out", "o"]), words);
        assert!(!dir.join("o").exists());
    }
    // At the bound: exactly 1 000 000 samples are accepted.
    let ok = dumbbell("ok", "duration = \"1s\"\nsample_interval = \"1us\"", "", "");
    std::fs::write(dir.join("ok.toml"), ok).unwrap();
    let o = cclab_in(&dir, &["check", "ok.toml"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    std::fs::remove_dir_all(&dir).unwrap();
}

fn study_file(name: &str, repetitions: u32, grid: &str) -> String {
    format!(
        "name = \"{name}\"\nrepetitions = {repetitions}\n[base]\nname = \"b\"\nduration = \"1s\"\n\
         [base.topology]\npreset = \"dumbbell\"\nrate = \"10Mbit\"\ndelay = \"10ms\"\n\
         [[base.flows]]\ncontroller = \"cubic\"\n{grid}\n"
    )
}

#[test]
fn a_study_is_counted_before_it_is_expanded() {
    let dir = temp_dir("size");
    let levels: Vec<String> = (1..=100).map(|i| format!("\"{i}ms\"")).collect();
    let levels = levels.join(", ");
    // 10 000 configurations × 10 000 repetitions = 10⁸ runs: refused, also under --dry-run,
    // without expanding (which would take minutes and gigabytes).
    let grid = format!("[grid]\ntopology.delay = [{levels}]\nduration = [{levels}]");
    std::fs::write(dir.join("s.toml"), study_file("big", 10_000, &grid)).unwrap();
    for extra in [&["--dry-run"][..], &[]] {
        let mut args = vec!["study", "s.toml", "--out", "o"];
        args.extend_from_slice(extra);
        assert_refused(
            &cclab_in(&dir, &args),
            &[
                "100000000 runs",
                "10000 configurations × 10000 repetitions",
                "at most 100000",
            ],
        );
    }
    // A grid whose configuration count overflows 64 bits is refused with its count.
    let axes: Vec<String> = (0..12)
        .map(|i| {
            format!(
                "a{i} = [{}]",
                (0..100)
                    .map(|j| j.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
        .collect();
    let grid = format!("[grid]\n{}", axes.join("\n"));
    std::fs::write(dir.join("s.toml"), study_file("huge", 1, &grid)).unwrap();
    assert_refused(
        &cclab_in(&dir, &["study", "s.toml", "--dry-run"]),
        &["grid", "configurations", "100 × 100"],
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A long axis costs time in proportion to its length: 200,000 levels (a 2 MB file) are
/// counted and refused before any level is looked at, and a duplicate label at the end of
/// 100,000 levels is found with one hash look-up per level (both took minutes when every level
/// was compared with every other).
#[test]
fn a_long_axis_is_refused_in_linear_time() {
    let dir = temp_dir("axis");
    let levels = |n: usize, dup: bool| {
        let mut l: Vec<String> = (0..n).map(|i| i.to_string()).collect();
        if dup {
            l.push("7".to_owned());
        }
        format!("[grid]\nseed_offset = [{}]", l.join(", "))
    };
    std::fs::write(
        dir.join("s.toml"),
        study_file("long", 1, &levels(200_000, false)),
    )
    .unwrap();
    let t0 = std::time::Instant::now();
    assert_refused(
        &cclab_in(&dir, &["study", "s.toml", "--dry-run"]),
        &[
            "s.toml:12:1",
            "grid",
            "200000 configurations",
            "at most 100000",
        ],
    );
    std::fs::write(
        dir.join("d.toml"),
        study_file("dup", 1, &levels(99_999, true)),
    )
    .unwrap();
    assert_refused(
        &cclab_in(&dir, &["study", "d.toml", "--dry-run"]),
        &["grid.seed_offset[99999]", "two levels have the label `7`"],
    );
    // Debug build, loaded machine: the quadratic check took minutes even optimised.
    assert!(
        t0.elapsed() < std::time::Duration::from_secs(20),
        "{:?}",
        t0.elapsed()
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn jobs_zero_is_refused_and_a_large_pool_is_capped_at_the_runs() {
    let dir = temp_dir("jobs");
    std::fs::write(
        dir.join("s.toml"),
        study_file("j", 2, "[grid]\ntopology.delay = [\"5ms\", \"10ms\"]"),
    )
    .unwrap();
    let o = cclab_in(&dir, &["study", "s.toml", "-j", "0"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("at least 1"),
        "{}",
        text(&o.stderr)
    );
    let t0 = std::time::Instant::now();
    let o = cclab_in(
        &dir,
        &["study", "s.toml", "-j", "100000", "--out", "o", "--quiet"],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(err.contains("on 4 threads"), "{err}");
    assert!(err.contains("warning: -j 100000"), "{err}");
    assert!(t0.elapsed() < std::time::Duration::from_secs(60));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn input_files_must_be_regular_and_small() {
    let dir = temp_dir("files");
    // A directory and a device are not files; 17 MiB is over the 16 MiB bound.
    std::fs::create_dir_all(dir.join("d.toml")).unwrap();
    let mut big = dumbbell("big", "", "", "");
    big.push_str(&"#".repeat(17 << 20));
    std::fs::write(dir.join("big.toml"), big).unwrap();
    for (file, why) in [("d.toml", "not a regular file"), ("big.toml", "16 MiB")] {
        for cmd in ["check", "run", "study"] {
            assert_refused(&cclab_in(&dir, &[cmd, file]), &[file, why]);
        }
    }
    if Path::new("/dev/zero").exists() {
        for cmd in ["check", "run", "study"] {
            assert_refused(
                &cclab_in(&dir, &[cmd, "/dev/zero"]),
                &["not a regular file"],
            );
        }
        let s = "name = \"z\"\nbase = \"/dev/zero\"\n";
        std::fs::write(dir.join("z.toml"), s).unwrap();
        assert_refused(
            &cclab_in(&dir, &["study", "z.toml", "--dry-run"]),
            &["base", "not a regular file"],
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Run cclab in `dir`, killing it if it has not ended within `secs` seconds (then `None`).
fn cclab_within(dir: &Path, args: &[&str], secs: u64) -> Option<Output> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cclab"))
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn cclab");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while std::time::Instant::now() < deadline {
        if child.try_wait().unwrap().is_some() {
            return Some(child.wait_with_output().unwrap());
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

/// A FIFO given as a scenario, a study, a study's `base`, a trace or a CDF file is refused at
/// once (opening a FIFO for reading waits for a writer).
#[cfg(unix)]
#[test]
fn a_fifo_as_any_input_file_is_refused_at_once() {
    let dir = temp_dir("fifo");
    let made = Command::new("mkfifo")
        .arg(dir.join("p"))
        .status()
        .is_ok_and(|s| s.success());
    if !made {
        eprintln!("skipped: no mkfifo");
        return;
    }
    let trace = dumbbell(
        "t",
        "",
        "",
        "[[links]]\nlink = \"bottleneck\"\nrate = \"trace\"\nfile = \"p\"",
    );
    std::fs::write(dir.join("trace.toml"), trace).unwrap();
    let cdf = dumbbell("c", "", "", "count = 2\narrivals = 10\nsize_cdf = \"p\"");
    std::fs::write(dir.join("cdf.toml"), cdf).unwrap();
    std::fs::write(dir.join("base.toml"), "name = \"s\"\nbase = \"p\"\n").unwrap();
    for (args, words) in [
        (&["check", "p"][..], &["p", "not a regular file"][..]),
        (&["run", "p"], &["p", "not a regular file"]),
        (&["study", "p", "--dry-run"], &["p", "not a regular file"]),
        (
            &["study", "base.toml", "--dry-run"],
            &["base.toml:2:8", "base", "not a regular file"],
        ),
        (
            &["check", "trace.toml"],
            &["trace.toml", "links[0].file", "not a regular file"],
        ),
        (
            &["check", "cdf.toml"],
            &["cdf.toml", "flows[0].size_cdf", "not a regular file"],
        ),
    ] {
        let o = cclab_within(&dir, args, 20).unwrap_or_else(|| panic!("{args:?} blocked"));
        assert_refused(&o, words);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn buffers_are_bounded() {
    let dir = temp_dir("buffer");
    for (buffer, words) in [
        ("\"1000TB\"", &["topology.buffer", "1073741824 bytes"][..]),
        (
            "{ packets = 2000000 }",
            &["topology.buffer", "1000000 packets"],
        ),
        (
            "\"100000bdp\"",
            &["topology.buffer", "at most 1073741824 bytes"],
        ),
    ] {
        let s = dumbbell("buf", "", &format!("buffer = {buffer}"), "");
        std::fs::write(dir.join("b.toml"), s).unwrap();
        assert_refused(&cclab_in(&dir, &["check", "b.toml"]), words);
    }
    let s = "name = \"ab\"\n[topology]\npreset = \"access\"\nrate = \"10Mbit\"\ndelay = \"5ms\"\n\
             down_buffer = \"2GB\"\n[test]\nname = \"tcp_upload\"\n[tcp]\ncontroller = \"cubic\"\n";
    check_refuses(
        &dir,
        "a.toml",
        s,
        &["topology.down_buffer", "1073741824 bytes"],
    );
    // 1 GiB itself is accepted.
    let s = dumbbell("buf", "", "buffer = \"1073741824B\"", "");
    std::fs::write(dir.join("b.toml"), s).unwrap();
    let o = cclab_in(&dir, &["check", "b.toml"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn check_refuses_what_run_refuses() {
    let dir = temp_dir("check");
    let long = "a".repeat(1 << 20);
    let cases = [
        (
            dumbbell(&long, "", "", ""),
            vec!["name", "at most 128 bytes"],
        ),
        (
            dumbbell("cpu", "", "", "[flows.host]\ncpu_share = 1e-300"),
            vec!["flows[0].host.cpu_share", "too long"],
        ),
    ];
    for (toml, words) in &cases {
        std::fs::write(dir.join("x.toml"), toml).unwrap();
        assert_refused(&cclab_in(&dir, &["check", "x.toml"]), words);
        assert_refused(&cclab_in(&dir, &["run", "x.toml", "--out", "o"]), words);
    }
    let study = study_file(&long, 1, "");
    std::fs::write(dir.join("s.toml"), study).unwrap();
    assert_refused(
        &cclab_in(&dir, &["study", "s.toml", "--dry-run"]),
        &["name", "at most 128 bytes"],
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn seed_is_not_a_grid_axis() {
    let dir = temp_dir("seed");
    std::fs::write(
        dir.join("s.toml"),
        study_file("sd", 1, "[grid]\nseed = [1, 2]"),
    )
    .unwrap();
    assert_refused(
        &cclab_in(&dir, &["study", "s.toml", "--dry-run"]),
        &[
            "s.toml:",
            "grid.seed",
            "cannot be a grid axis",
            "repetitions",
        ],
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_unwritable_out_is_found_before_simulating() {
    let dir = temp_dir("out");
    std::fs::write(dir.join("file"), "").unwrap();
    let sc = scenarios().join("cubic_single.toml");
    let t0 = std::time::Instant::now();
    // Ten simulated minutes would take long in a debug build: the error must come first.
    let o = cclab_in(
        &dir,
        &[
            "run",
            sc.to_str().unwrap(),
            "--duration",
            "600s",
            "--out",
            "file/o",
        ],
    );
    assert_refused(&o, &["cannot write the results to file/o"]);
    assert!(t0.elapsed() < std::time::Duration::from_secs(20));
    std::fs::write(dir.join("s.toml"), study_file("w", 1, "")).unwrap();
    let o = cclab_in(&dir, &["study", "s.toml", "--out", "file"]);
    assert_refused(&o, &["file/w"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A study of a short Flent test over `levels` delays (Flent files and plots per
/// configuration).
fn access_study(levels: &str) -> String {
    format!(
        "name = \"stale\"\n[base]\nname = \"b\"\n[base.topology]\npreset = \"access\"\n\
         rate = \"10Mbit\"\ndelay = \"5ms\"\n[base.test]\nname = \"tcp_upload\"\nlength = \"2s\"\n\
         delay = \"0s\"\n[base.tcp]\ncontroller = \"cubic\"\n[grid]\ntopology.delay = [{levels}]\n\
         [analysis]\npng = false\n"
    )
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn stale_outputs_and_dead_temporaries_are_removed() {
    let dir = temp_dir("stale");
    std::fs::write(dir.join("s.toml"), access_study("\"5ms\", \"7ms\"")).unwrap();
    let o = cclab_in(&dir, &["study", "s.toml", "--out", "o", "--quiet"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let st = dir.join("o/stale");
    let flent_before = names(&st.join("flent"));
    assert_eq!(flent_before.len(), 2, "{flent_before:?}");
    assert!(names(&st.join("plots")).iter().any(|n| n.contains("7ms")));
    // A temporary file of a process that is gone, one of a live process (this test), and a
    // file cclab does not own.
    std::fs::write(st.join("flent/.x.flent.gz.tmp-999999999"), "").unwrap();
    let live = format!(".y.flent.gz.tmp-{}", std::process::id());
    std::fs::write(st.join("flent").join(&live), "").unwrap();
    std::fs::write(st.join("plots/notes.txt"), "mine").unwrap();

    std::fs::write(dir.join("s.toml"), access_study("\"5ms\"")).unwrap();
    let o = cclab_in(&dir, &["study", "s.toml", "--out", "o", "--quiet"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let flent_after = names(&st.join("flent"));
    assert_eq!(flent_after.len(), 2, "{flent_after:?}");
    assert!(flent_after.contains(&live), "{flent_after:?}");
    assert!(
        flent_after.iter().any(|n| n.contains("5ms")),
        "{flent_after:?}"
    );
    let plots = names(&st.join("plots"));
    assert!(!plots.iter().any(|n| n.contains("7ms")), "{plots:?}");
    assert!(plots.contains(&"notes.txt".to_owned()), "{plots:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn run_demo_and_the_demo_study_have_distinct_directories() {
    let dir = temp_dir("demo");
    let sc = scenarios().join("demo.toml");
    let o = cclab_in(&dir, &["run", sc.to_str().unwrap(), "--duration", "5s"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let st = scenarios().join("demo_study.toml");
    let o = cclab_in(&dir, &["study", st.to_str().unwrap(), "--dry-run"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(names(&dir.join("cclab-out")), ["demo", "run-demo"]);
    assert!(dir.join("cclab-out/run-demo/summary.json").exists());
    assert!(!dir.join("cclab-out/demo/summary.json").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    v.sort();
    v
}

#[test]
fn merge_takes_only_one_study_and_fails_on_conflicts() {
    let dir = temp_dir("merge");
    let grid = "[grid]\ntopology.delay = [\"5ms\", \"10ms\"]";
    std::fs::write(dir.join("a.toml"), study_file("a", 1, grid)).unwrap();
    std::fs::write(dir.join("b.toml"), study_file("a", 2, grid)).unwrap();
    for (file, shard, out) in [
        ("a.toml", "1/2", "a1"),
        ("a.toml", "2/2", "a2"),
        ("b.toml", "1/1", "b"),
    ] {
        let o = cclab_in(
            &dir,
            &["study", file, "--shard", shard, "--out", out, "--quiet"],
        );
        assert!(o.status.success(), "{}", text(&o.stderr));
    }
    // Study `b` has the same name but another definition (two repetitions): refused, nothing
    // copied.
    let o = cclab_in(&dir, &["merge", "--into", "m", "a1/a", "b/a"]);
    assert_refused(&o, &["b/a", "another definition"]);
    assert!(!dir.join("m/runs").exists() || json_files(&dir.join("m/runs")).is_empty());
    // A directory that is not a store.
    std::fs::create_dir_all(dir.join("junk/runs")).unwrap();
    let o = cclab_in(&dir, &["merge", "--into", "m", "a1/a", "junk"]);
    assert_refused(&o, &["junk", "not a study store"]);

    // A run of study `b` slipped into a shard of `a` is skipped with the reason.
    let foreign = json_files(&dir.join("b/a/runs"))
        .into_iter()
        .find(|p| {
            !dir.join("a2/a/runs").join(p.file_name().unwrap()).exists()
                && !dir.join("a1/a/runs").join(p.file_name().unwrap()).exists()
        })
        .expect("b has runs a lacks");
    std::fs::copy(
        &foreign,
        dir.join("a2/a/runs").join(foreign.file_name().unwrap()),
    )
    .unwrap();
    // The valid runs are merged all the same, and the merge fails (status 1).
    let o = cclab_in(&dir, &["merge", "--into", "m", "a1/a", "a2/a"]);
    assert_refused(
        &o,
        &["not a run of study `a`", "2 runs copied", "1 run file was"],
    );
    assert_eq!(json_files(&dir.join("m/runs")).len(), 2);

    std::fs::remove_file(dir.join("a2/a/runs").join(foreign.file_name().unwrap())).unwrap();

    // A valid record that differs from the merged one is a conflict: exit 1.
    let run = json_files(&dir.join("a1/a/runs")).remove(0);
    let id = run.file_stem().unwrap().to_str().unwrap().to_owned();
    let mut rec = cclab_lab::study::store::decode(&std::fs::read(&run).unwrap(), &id).unwrap();
    rec.metrics.insert("upload_mbps".to_owned(), 1.0);
    std::fs::write(&run, cclab_lab::study::store::encode(&rec)).unwrap();
    let o = cclab_in(&dir, &["merge", "--into", "m", "a1/a"]);
    assert_refused(&o, &["conflict", "differ"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A shard whose every run file is invalid (cut short, garbage): each is reported with the
/// reason, the valid runs of the other shard are merged, and the merge exits with status 1.
#[test]
fn merge_of_only_invalid_run_files_fails_after_merging_the_valid_ones() {
    let dir = temp_dir("merge-invalid");
    let grid = "[grid]\ntopology.delay = [\"5ms\", \"10ms\"]";
    std::fs::write(dir.join("a.toml"), study_file("a", 1, grid)).unwrap();
    for (shard, out) in [("1/2", "a1"), ("2/2", "a2")] {
        let o = cclab_in(
            &dir,
            &["study", "a.toml", "--shard", shard, "--out", out, "--quiet"],
        );
        assert!(o.status.success(), "{}", text(&o.stderr));
    }
    let bad = json_files(&dir.join("a2/a/runs"));
    assert_eq!(bad.len(), 1);
    let bytes = std::fs::read(&bad[0]).unwrap();
    std::fs::write(&bad[0], &bytes[..bytes.len() / 2]).unwrap();
    let garbage = dir
        .join("a2/a/runs")
        .join(format!("{}.json", "0".repeat(64)));
    std::fs::write(&garbage, "not a record").unwrap();
    let o = cclab_in(&dir, &["merge", "--into", "m", "a1/a", "a2/a"]);
    let err = text(&o.stderr);
    assert_refused(&o, &["2 run files", "skipped", "1 runs copied"]);
    for (path, why) in [
        (&bad[0], "checksum mismatch"),
        (&garbage, "not a run of study"),
    ] {
        let name = path.file_name().unwrap().to_str().unwrap();
        assert!(
            err.lines()
                .any(|l| l.starts_with("skipped ") && l.contains(name) && l.contains(why)),
            "{name}: {why}: {err}"
        );
    }
    assert_eq!(json_files(&dir.join("m/runs")).len(), 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A 5 MB unknown key is refused at once with a short message: the key is quoted clipped (its
/// first 64 characters and its length), and no suggestion is searched among names it cannot be
/// a typo of.
#[test]
fn a_huge_unknown_key_gives_a_short_message_at_once() {
    let dir = temp_dir("longkey");
    let key = "k".repeat(5_000_000);
    let s = dumbbell("k", "", "", &format!("[host]\n{key} = 1"));
    std::fs::write(dir.join("k.toml"), s).unwrap();
    let t0 = std::time::Instant::now();
    let o = cclab_in(&dir, &["check", "k.toml"]);
    assert_refused(
        &o,
        &[
            "k.toml:11:1",
            &format!("host.{}… (5000000 characters)", "k".repeat(64)),
            "unknown field",
        ],
    );
    assert!(o.stderr.len() < 2000, "{} bytes", o.stderr.len());
    assert!(
        t0.elapsed() < std::time::Duration::from_secs(10),
        "{:?}",
        t0.elapsed()
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The datagrams of all UDP sources together are bounded, not only those of each source.
#[test]
fn udp_datagrams_are_bounded_in_total() {
    let dir = temp_dir("udp");
    // 1000 sources of 10⁷ datagrams each (10 Mbit/s of 125-byte datagrams for 1000 s): each
    // within its own bound, 10¹⁰ together.
    let udp = "[[udp]]\nkind = \"cbr\"\nrate = \"10Mbit\"\nsize = 125\n".repeat(1000);
    let s = dumbbell("u", "duration = \"1000s\"", "", &udp);
    check_refuses(
        &dir,
        "u.toml",
        &s,
        &[
            "u.toml:52:8",
            "udp[10].rate",
            "110000000 datagrams",
            "at most 100000000 are allowed in all",
        ],
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A trace or CDF file that is not one is never quoted: a secret on its first line stays out of
/// the message, which still names the scenario's key and the file's line.
#[test]
fn a_file_of_another_kind_is_not_quoted() {
    let dir = temp_dir("quote");
    std::fs::write(
        dir.join("shadow"),
        "root:$6$SECRETSALT$SECRETHASH:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n",
    )
    .unwrap();
    let trace = dumbbell(
        "t",
        "",
        "",
        "[[links]]\nlink = \"bottleneck\"\nrate = \"trace\"\nfile = \"shadow\"",
    );
    std::fs::write(dir.join("t.toml"), trace).unwrap();
    let cdf = dumbbell("c", "", "", "count = 2\nsize_cdf = \"shadow\"");
    std::fs::write(dir.join("c.toml"), cdf).unwrap();
    for (file, words) in [
        ("t.toml", &["t.toml:", "links[0].file", "shadow:1:"][..]),
        (
            "c.toml",
            &["c.toml:11:12", "flows[0].size_cdf", "shadow:1:"],
        ),
    ] {
        let o = cclab_in(&dir, &["check", file]);
        assert_refused(&o, words);
        let err = text(&o.stderr);
        assert!(!err.contains("SECRET") && !err.contains("root"), "{err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A buffer left at its default (1 BDP) is bounded like a written one, and the message says
/// that it was not set and how to set it.
#[test]
fn the_implicit_default_buffer_is_bounded() {
    let dir = temp_dir("defbuf");
    let s = "name = \"x\"\n[topology]\npreset = \"dumbbell\"\nrate = \"20Mbit\"\n\
             delay = \"1e6s\"\n[[flows]]\ncontroller = \"cubic\"\n";
    check_refuses(
        &dir,
        "d.toml",
        s,
        &[
            "d.toml:2:1",
            "topology.buffer",
            "`buffer` is not set",
            "1bdp at 20 Mbit/s",
            "at most 1073741824 bytes",
            "set `topology.buffer`",
        ],
    );
    let s = "name = \"a\"\n[topology]\npreset = \"access\"\nrate = \"10Gbit\"\ndelay = \"1000s\"\n\
             [test]\nname = \"tcp_upload\"\n[tcp]\ncontroller = \"cubic\"\n";
    check_refuses(
        &dir,
        "a.toml",
        s,
        &[
            "topology.up_buffer",
            "`up_buffer` is not set",
            "set `topology.up_buffer`",
        ],
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A size CDF that gives flows of 0 bytes (they would silently become 1-byte flows) is refused
/// at the CDF's line.
#[test]
fn a_cdf_of_zero_sizes_is_refused_at_its_line() {
    let dir = temp_dir("cdf0");
    std::fs::write(dir.join("zero.cdf"), "# sizes\n0 0\n0 1\n").unwrap();
    let s = dumbbell(
        "z",
        "",
        "",
        "count = 2\narrivals = 10\nsize_cdf = \"zero.cdf\"",
    );
    check_refuses(
        &dir,
        "z.toml",
        &s,
        &[
            "z.toml:12:12",
            "flows[0].size_cdf",
            "zero.cdf:3:",
            "at least 1 byte",
        ],
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
