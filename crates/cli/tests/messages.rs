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
