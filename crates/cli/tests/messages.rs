//! The command line's messages for hostile or mistaken input: each case names the file, line,
//! key or path at fault, and exits with a documented status (0 success, 1 error, 2 usage
//! error, 3 internal error) — never with a panic's 101 or an abort's 134.

mod common;

use std::path::{Path, PathBuf};

use common::{cclab_in, workspace};

fn temp_dir(tag: &str) -> PathBuf {
    common::temp_dir("messages", tag)
}

/// Run cclab in `dir`, expect exit status `code` and return stderr.
fn fails(dir: &Path, args: &[&str], code: i32) -> String {
    let o = cclab_in(dir, args);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(code), "{args:?}:\n{err}");
    err
}

const SCENARIO: &str = r#"name = "t"
[topology]
preset = "dumbbell"
rate = "10Mbit"
delay = "10ms"
[[flows]]
controller = "cubic"
"#;

/// Every scenario example of the issue on hostile input, through `cclab check`.
#[test]
fn scenario_messages_name_file_line_and_key() {
    let dir = temp_dir("scenarios");
    let cases: &[(&str, String, &str)] = &[
        (
            "empty.toml",
            String::new(),
            "error: empty.toml: the file is empty: a scenario file needs `name`",
        ),
        (
            "delay0.toml",
            SCENARIO.replace("delay = \"10ms\"", "delay = 0"),
            "error: delay0.toml:5:9: topology.delay: the default buffer",
        ),
        (
            "huge.toml",
            format!("{SCENARIO}size = 99999999999999999999\n"),
            "error: huge.toml:8:8: flows[0].size: `99999999999999999999` is out of range",
        ),
        (
            "date.toml",
            SCENARIO.replace(
                "name = \"t\"",
                "name = \"t\"\nduration = 1979-05-27T07:32:00Z",
            ),
            "error: date.toml:2:12: duration: a date-time is not accepted here, expected a \
             duration",
        ),
        (
            "dup.toml",
            SCENARIO.replace("delay = \"10ms\"", "delay = \"10ms\"\nrate = \"1Mbit\""),
            "error: dup.toml:6:1: topology.rate: duplicate key `rate`",
        ),
        (
            "frac.toml",
            format!("{SCENARIO}size = \"1.5B\"\n"),
            "error: frac.toml:8:8: flows[0].size: a size must be a whole number of bytes",
        ),
        (
            "deep.toml",
            format!("{SCENARIO}\n\n\n[{}]\n", vec!["a"; 2000].join(".")),
            "error: deep.toml:11:1: a key or table header of 2000 dotted parts",
        ),
    ];
    for (file, text, want) in cases {
        std::fs::write(dir.join(file), text).unwrap();
        let err = fails(&dir, &["check", file], 1);
        assert!(err.starts_with(want), "{file}: want {want:?} in\n{err}");
        assert!(
            !err.contains("i128") && !err.contains("invalid type: map"),
            "{err}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Study files: the grid level, the count of invalid configurations, a garbage base, and each
/// command given the other kind of file.
#[test]
fn study_messages_name_the_grid_level_and_the_kind_of_file() {
    let dir = temp_dir("studies");
    let study = |axis: &str| {
        format!(
            "name = \"s\"\n[base]\nname = \"s\"\n[base.test]\nname = \"tcp_upload\"\n\
             length = \"2s\"\n[base.tcp]\ncontroller = \"cubic\"\n[base.topology]\n\
             preset = \"access\"\nrate = \"20Mbit\"\ndelay = \"5ms\"\n[grid]\n{axis}\n"
        )
    };
    std::fs::write(
        dir.join("level.toml"),
        study("topology.rate = [\"1kbit\", \"10Mbit\"]"),
    )
    .unwrap();
    let err = fails(&dir, &["study", "level.toml", "--dry-run"], 1);
    assert!(
        err.contains("error: level.toml:14:18: grid.topology.rate[0]: level `1kbit`: the default"),
        "{err}"
    );
    let levels: Vec<String> = (1..=1000).map(|i| format!("\"{i}bit\"")).collect();
    std::fs::write(
        dir.join("many.toml"),
        study(&format!("topology.rate = [{}]", levels.join(", "))),
    )
    .unwrap();
    let err = fails(&dir, &["study", "many.toml", "--dry-run"], 1);
    assert!(
        err.contains("1000 of 1000 configurations of the grid are invalid"),
        "{err}"
    );

    std::fs::write(dir.join("garbage.toml"), [0xde, 0xad, 0xbe, 0xef, 0xff]).unwrap();
    std::fs::write(
        dir.join("g.toml"),
        "name = \"g\"\nbase = \"garbage.toml\"\n",
    )
    .unwrap();
    let err = fails(&dir, &["study", "g.toml", "--dry-run"], 1);
    assert!(
        err.contains("g.toml:2:8: base: cannot read the base scenario")
            && err.contains("not UTF-8"),
        "{err}"
    );

    let ws = workspace();
    let err = fails(&ws, &["check", "scenarios/demo_study.toml"], 1);
    assert!(
        err.contains("this is a study file, not a scenario"),
        "{err}"
    );
    let err = fails(&ws, &["study", "scenarios/demo.toml", "--dry-run"], 1);
    assert!(
        err.contains("this is a scenario file, not a study"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn merge_names_the_path_that_is_not_a_store() {
    let dir = temp_dir("merge");
    std::fs::create_dir_all(dir.join("notastore")).unwrap();
    let err = fails(&dir, &["merge", "--into", "out", "notastore"], 1);
    assert!(
        err.contains("notastore: not a study directory (it has no runs/)"),
        "{err}"
    );
    // A shard's --out instead of its study directory: the study directory is suggested.
    std::fs::create_dir_all(dir.join("shard1/st/runs")).unwrap();
    let err = fails(&dir, &["merge", "--into", "out", "shard1"], 1);
    assert!(err.contains("did you mean shard1/st?"), "{err}");
    let err = fails(&dir, &["merge", "--into", "out", "missing"], 1);
    assert!(err.contains("missing: no such directory"), "{err}");
    std::fs::write(dir.join("afile"), "x").unwrap();
    let err = fails(&dir, &["merge", "--into", "afile", "shard1/st"], 1);
    assert!(err.contains("--into afile: not a directory"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn counts_of_zero_are_usage_errors() {
    let ws = workspace();
    let err = fails(
        &ws,
        &["study", "scenarios/demo_study.toml", "--max-runs", "0"],
        2,
    );
    assert!(
        err.contains("--max-runs") && err.contains("at least 1"),
        "{err}"
    );
    let err = fails(&ws, &["bench", "--repeat", "0"], 2);
    assert!(err.contains("--repeat"), "{err}");
}

/// An internal error (a panic, forced in a debug build by `CCLAB_TEST_PANIC_AFTER_RUNS`) exits
/// with status 3 and says it is a bug; the run stored before it is kept, and the study resumes
/// from it.
#[test]
fn an_internal_error_exits_with_status_3_and_keeps_the_stored_runs() {
    let dir = temp_dir("internal");
    let study = format!(
        "name = \"st\"\n[grid]\ntopology.delay = [\"5ms\", \"10ms\"]\n[base]\n\
         duration = \"1s\"\n{}",
        SCENARIO
            .replace("[topology]", "[base.topology]")
            .replace("[[flows]]", "[[base.flows]]")
    );
    std::fs::write(dir.join("s.toml"), study).unwrap();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_cclab"))
        .args(["study", "s.toml", "--out", "o", "-j", "1", "--quiet"])
        .env("CCLAB_TEST_PANIC_AFTER_RUNS", "1")
        .current_dir(&dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    for words in [
        "deliberate internal error after 1 stored runs",
        "error: internal error: this is a bug in cclab",
    ] {
        assert!(err.contains(words), "missing {words:?} in: {err}");
    }
    let runs = std::fs::read_dir(dir.join("o/st/runs")).unwrap().count();
    assert_eq!(runs, 1, "{err}");
    let err = fails(&dir, &["study", "s.toml", "--out", "o", "--dry-run"], 0);
    assert!(
        err.contains("1 valid, 1 missing, 0 corrupt of 2 runs"),
        "{err}"
    );
    let err = fails(&dir, &["study", "s.toml", "--out", "o", "--quiet"], 0);
    assert!(err.contains("1 valid results reused"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A study of `levels` one-second configurations in `dir`/s.toml.
fn small_study(dir: &Path, levels: &str) {
    let study = format!(
        "name = \"st\"\n[grid]\ntopology.delay = [{levels}]\n[base]\nduration = \"1s\"\n{}",
        SCENARIO
            .replace("[topology]", "[base.topology]")
            .replace("[[flows]]", "[[base.flows]]")
    );
    std::fs::write(dir.join("s.toml"), study).unwrap();
}

/// A directory, a link to /dev/zero and an empty file in the place of runs are each named for
/// what they are.
#[cfg(unix)]
#[test]
fn merge_says_what_each_skipped_file_is() {
    let dir = temp_dir("merge_kinds");
    small_study(&dir, "\"5ms\", \"10ms\", \"15ms\"");
    fails(&dir, &["study", "s.toml", "--out", "o", "--quiet"], 0);
    let runs = dir.join("o/st/runs");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&runs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert_eq!(files.len(), 3);
    for f in &files {
        std::fs::remove_file(f).unwrap();
    }
    std::fs::create_dir(&files[0]).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &files[1]).unwrap();
    std::fs::write(&files[2], "").unwrap();
    let err = fails(&dir, &["merge", "--into", "m", "o/st"], 1);
    for want in [
        ": a directory, not a run file",
        ": a link to /dev/zero (a device, FIFO or socket), not a run file",
        ": the file is empty",
    ] {
        assert!(err.contains(want), "{want:?} in\n{err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--out` naming a file (or a path below one) says so, not "File exists".
#[test]
fn an_output_directory_that_is_a_file_is_named() {
    let dir = temp_dir("out_file");
    std::fs::write(dir.join("t.toml"), SCENARIO).unwrap();
    std::fs::write(dir.join("afile"), "x").unwrap();
    for out in ["afile", "afile/sub"] {
        let err = fails(
            &dir,
            &["run", "t.toml", "--duration", "1s", "--out", out],
            1,
        );
        assert!(
            err.contains(&format!(
                "cannot write the results to {out}: afile is a file, not a directory"
            )),
            "{err}"
        );
        assert!(!err.contains("os error"), "{err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every shipped file a `--help` text cites exists.
#[test]
fn help_texts_cite_shipped_files() {
    let ws = workspace();
    for sub in ["run", "study", "check", "emulate", "demo", "merge", "list"] {
        let o = cclab_in(&ws, &[sub, "--help"]);
        let help = String::from_utf8_lossy(&o.stdout).into_owned();
        for word in help.split(|c: char| c.is_whitespace() || c == '(' || c == ')' || c == '`') {
            let word = word.trim_end_matches([',', '.', ';', ':']);
            if let Some(path) = word.strip_prefix("scenarios/")
                && !path.contains('*')
            {
                assert!(
                    ws.join("scenarios").join(path).is_file(),
                    "`cclab {sub} --help` cites scenarios/{path}, which is not shipped"
                );
            }
        }
    }
}

/// A Flent test's flows and probes are counted although its file has no [[flows]].
#[test]
fn a_test_run_counts_the_flows_the_test_makes() {
    let dir = temp_dir("test_counts");
    std::fs::write(
        dir.join("t.toml"),
        "name = \"t8\"\n[test]\nname = \"tcp_8up\"\nlength = \"1s\"\ndelay = \"0s\"\n[tcp]\n\
         controller = \"cubic\"\n[topology]\npreset = \"access\"\nrate = \"20Mbit\"\n\
         delay = \"5ms\"\n",
    )
    .unwrap();
    let err = fails(&dir, &["run", "t.toml", "--out", "o"], 0);
    assert!(err.contains("running `t8`: 8 flows, 1 probe,"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--dry-run` estimates the time of the runs to do, labelled as an estimate with its basis.
#[test]
fn a_dry_run_estimates_the_time_of_the_runs_to_do() {
    let dir = temp_dir("dry_estimate");
    small_study(&dir, "\"5ms\", \"10ms\"");
    let err = fails(&dir, &["study", "s.toml", "--out", "o", "--dry-run"], 0);
    assert!(
        err.contains("estimate: about ") && err.contains("for the 2 runs to do"),
        "{err}"
    );
    assert!(err.contains("benchmark (a) in BENCHMARKS.md"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Ctrl-C during a study says how many runs are stored and how to resume, and exits with 130.
#[cfg(unix)]
#[test]
fn an_interrupted_study_says_how_to_resume() {
    let dir = temp_dir("sigint");
    let levels: Vec<String> = (1..=40).map(|i| format!("\"{i}ms\"")).collect();
    small_study(&dir, &levels.join(", "));
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_cclab"))
        .args(["study", "s.toml", "--out", "o", "-j", "1", "--quiet"])
        .current_dir(&dir)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let runs = dir.join("o/st/runs");
    let start = std::time::Instant::now();
    while std::fs::read_dir(&runs).map_or(0, Iterator::count) == 0 {
        assert!(start.elapsed().as_secs() < 60, "no run stored");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let kill = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{err}");
    assert!(
        err.contains("interrupted: ") && err.contains("run the same command again to resume"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
