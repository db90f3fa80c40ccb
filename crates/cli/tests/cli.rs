//! The `cclab` binary end to end: help, listing, checking, and error reporting without panics.

mod common;

use std::path::PathBuf;
use std::process::Output;

use common::{cclab_in, text, workspace};

fn cclab(args: &[&str]) -> Output {
    cclab_in(&workspace(), args)
}

fn temp_dir(tag: &str) -> PathBuf {
    common::temp_dir("cli", tag)
}

#[test]
fn help_lists_subcommands_and_examples() {
    let o = cclab(&["--help"]);
    assert!(o.status.success());
    let out = text(&o.stdout);
    for word in [
        "run",
        "demo",
        "list",
        "check",
        "Examples:",
        "cclab run scenarios/",
    ] {
        assert!(out.contains(word), "missing {word:?} in:\n{out}");
    }
    let o = cclab(&["run", "--help"]);
    let out = text(&o.stdout);
    for word in ["--out", "--seed", "--duration", "SCENARIO", "trace.csv"] {
        assert!(out.contains(word), "missing {word:?} in:\n{out}");
    }
    let out = text(&cclab(&["--help"]).stdout);
    assert!(
        out.contains("trace.csv") && out.contains("trace = true"),
        "{out}"
    );
}

/// `--params` prints each entry's declaration; `--markdown` the README's tables.
#[test]
fn list_params_prints_the_declarations() {
    let o = cclab(&["list", "controllers", "--params"]);
    assert!(o.status.success());
    let out = text(&o.stdout);
    assert!(out.starts_with("reno "), "{out}");
    assert!(
        out.contains("  alpha              integer  default 2            range 0..=10000 segments"),
        "{out}"
    );
    let o = cclab(&["list", "qdiscs", "--params", "--markdown"]);
    let out = text(&o.stdout);
    assert!(
        out.contains("| `target` | duration | `5ms` | ≥ 0 | acceptable standing sojourn time |"),
        "{out}"
    );
    let o = cclab(&["list", "qdiscs", "--markdown"]);
    assert!(!o.status.success(), "--markdown needs --params");
}

#[test]
fn list_prints_names() {
    let o = cclab(&["list", "controllers"]);
    assert!(o.status.success());
    assert_eq!(
        text(&o.stdout),
        "reno\nnewreno\ncubic\ncuback\nquicly_reno\nquicly_cubic\nbbr1 (alias: bbr)\nbbr1_2brobust\nbbr3\nbbr3_2brobust\nbbr_tas\nvegas\nprague\n"
    );
    let o = cclab(&["list", "presets"]);
    assert_eq!(
        text(&o.stdout),
        "dumbbell\naccess\nrtt_fair\nwifi_hybrid\nwifi\nquicly\n"
    );
    let o = cclab(&["list", "tests"]);
    assert_eq!(
        text(&o.stdout),
        "tcp_upload\ntcp_8up\nrrul\nrrul_be\nrtt_fair\n"
    );
    let o = cclab(&["list", "metrics"]);
    let first: Vec<String> = text(&o.stdout)
        .split_whitespace()
        .take(2)
        .map(str::to_owned)
        .collect();
    assert_eq!(first, ["upload_mbps", "mean"], "{}", text(&o.stdout));
    let o = cclab(&["list", "slow-starts"]);
    assert_eq!(
        text(&o.stdout),
        "standard\nhystart\nhystart++\njumpstart\nsuss\ncareful_resume\nchirping\n"
    );
    let o = cclab(&["list", "qdiscs"]);
    assert_eq!(
        text(&o.stdout),
        "fifo\ncodel\nfq_codel\npie\nred\ndualpi2\n"
    );
    let o = cclab(&["list", "ecn"]);
    assert_eq!(text(&o.stdout), "off\nclassic\nl4s\n");
    let o = cclab(&["list", "elements"]);
    assert_eq!(
        text(&o.stdout),
        "pass\ndelay\njitter\nloss\nduplicate\ndelay_schedule\noutage\npolicer\nshaper\nreroute\nack_thin\nack_aggregate\n"
    );
    let o = cclab(&["list", "rates"]);
    assert_eq!(text(&o.stdout), "steps\nsquare\nsine\ncsv\ntrace\n");
    let o = cclab(&["list", "elements", "--params"]);
    assert!(o.status.success());
    assert!(text(&o.stdout).contains("spread"), "{}", text(&o.stdout));
    let o = cclab(&["list", "widgets"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn check_accepts_every_shipped_scenario() {
    for name in [
        "demo",
        "cubic_single",
        "reno_loss",
        "two_cubic",
        "rtt_unfairness",
        "fq_codel_8up",
        "dualpi2_prague_cubic",
    ] {
        let path = format!("scenarios/{name}.toml");
        let o = cclab(&["check", &path]);
        assert!(o.status.success(), "{path}: {}", text(&o.stderr));
        let out = text(&o.stdout);
        assert!(out.contains("ok: "), "{out}");
        assert!(out.contains("base RTT"), "{out}");
    }
}

#[test]
fn bad_scenarios_fail_with_a_located_message_and_no_panic() {
    let dir = temp_dir("bad");
    let bad = dir.join("x.toml");
    std::fs::write(
        &bad,
        "name = \"x\"\n[topology]\npreset = \"dumbbell\"\nrate = \"10Mbit\"\ndelay = \"5ms\"\n\
         [[flows]]\ncontroller = \"cubc\"\n",
    )
    .unwrap();
    let path = bad.to_str().unwrap();
    for args in [
        vec!["check", path],
        vec!["run", path, "--out", dir.to_str().unwrap()],
    ] {
        let o = cclab(&args);
        assert_eq!(o.status.code(), Some(1));
        let err = text(&o.stderr);
        assert_eq!(
            err,
            format!(
                "error: {path}:7:14: flows[0].controller: unknown controller `cubc`, expected \
                 one of: reno, newreno, cubic, cuback, quicly_reno, quicly_cubic, bbr1, \
                 bbr1_2brobust, bbr3, bbr3_2brobust, bbr_tas, vegas, prague (did you mean \
                 `cubic`?)\n"
            )
        );
    }
    let o = cclab(&["check", "does/not/exist.toml"]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(
        err.starts_with("error: does/not/exist.toml: cannot read the scenario file: "),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    let o = cclab(&["run", "scenarios/demo.toml", "--duration", "0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("the duration must be positive"));
    let o = cclab(&["run", "scenarios/demo.toml", "--duration", "1s"]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(
        err.contains("flows[1].start: starts at 2 s, not before the end of the run (1 s)"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]

fn run_and_demo_write_outputs() {
    let dir = temp_dir("run");
    let out = dir.join("cubic");
    let o = cclab(&[
        "run",
        "scenarios/cubic_single.toml",
        "--duration",
        "2s",
        "--seed",
        "3",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("bottleneck"));
    for f in [
        "summary.json",
        "flows.csv",
        "queues.csv",
        "probes.csv",
        "cc_stats.csv",
    ] {
        assert!(out.join(f).exists(), "{f}");
    }
    let summary = std::fs::read_to_string(out.join("summary.json")).unwrap();
    assert!(summary.contains("\"seed\": 3"), "{summary}");
    let demo = dir.join("demo");
    let o = cclab(&["demo", "--out", demo.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("upload_mbps"),
        "{}",
        text(&o.stdout)
    );
    let demo = demo.join("demo");
    for f in [
        "report.html",
        "stats.csv",
        "stats.json",
        "runs.csv",
        "manifest.json",
    ] {
        assert!(demo.join(f).exists(), "{f}");
    }
    let flent_files = std::fs::read_dir(demo.join("flent")).unwrap().count();
    assert_eq!(flent_files, 20);
    // No flow of these scenarios is traced, so there is no trace.csv.
    assert!(!out.join("trace.csv").exists());

    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_traced_flow_adds_trace_csv() {
    let dir = temp_dir("trace");
    let scenario = dir.join("traced.toml");
    std::fs::write(
        &scenario,
        "name = \"traced\"\nduration = \"1s\"\n[topology]\npreset = \"dumbbell\"\n\
         rate = \"10Mbit\"\ndelay = \"5ms\"\n[[flows]]\ncontroller = \"cubic\"\ntrace = true\n",
    )
    .unwrap();
    let out = dir.join("out");
    let o = cclab(&[
        "run",
        scenario.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("wrote 6 files"),
        "{}",
        text(&o.stderr)
    );
    let csv = std::fs::read_to_string(out.join("trace.csv")).unwrap();
    assert!(csv.starts_with("t_s,flow,event,"), "{csv}");
    assert!(csv.lines().any(|l| l.contains(",cubic0,ack,")), "{csv}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A study from the command line: stop after some runs, resume, shard, merge; every step says
/// what it did, and the merged store analyses to the same statistics.
#[test]
fn study_resume_shard_and_merge() {
    let dir = temp_dir("study");
    let file = dir.join("s_study.toml");
    std::fs::write(
        &file,
        "name = \"s\"\nrepetitions = 2\n[base]\nname = \"s\"\n[base.test]\nname = \"tcp_upload\"\n\
         length = \"3s\"\ndelay = \"1s\"\n[base.tcp]\ncontroller = \"cubic\"\n\
         [base.topology]\npreset = \"access\"\nrate = \"10Mbit\"\ndelay = \"5ms\"\n\
         [grid]\ntcp.controller = [\"cubic\", \"bbr3\"]\n[analysis]\npng = false\n",
    )
    .unwrap();
    let f = file.to_str().unwrap();
    let out = dir.join("full");
    let o = cclab(&[
        "study",
        f,
        "--out",
        out.to_str().unwrap(),
        "--quiet",
        "--max-runs",
        "3",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("1 runs left"),
        "{}",
        text(&o.stderr)
    );
    let o = cclab(&[
        "study",
        f,
        "--out",
        out.to_str().unwrap(),
        "--quiet",
        "-j",
        "1",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let e = text(&o.stderr);
    assert!(
        e.contains("3 valid results reused, 1 missing and 0 corrupt redone"),
        "{e}"
    );
    assert!(out.join("s/report.html").exists());
    let mut shards = Vec::new();
    for i in 1..=2 {
        let d = dir.join(format!("shard{i}"));
        let o = cclab(&[
            "study",
            f,
            "--out",
            d.to_str().unwrap(),
            "--quiet",
            "--shard",
            &format!("{i}/2"),
        ]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        assert!(
            text(&o.stderr).contains(&format!("shard {i}/2 complete")),
            "{}",
            text(&o.stderr)
        );
        shards.push(d.join("s").to_str().unwrap().to_owned());
    }
    let merged = dir.join("merged");
    let into = merged.join("s");
    let mut args = vec!["merge", "--into", into.to_str().unwrap()];
    args.extend(shards.iter().map(String::as_str));
    let o = cclab(&args);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("4 runs copied"),
        "{}",
        text(&o.stderr)
    );
    let o = cclab(&["study", f, "--out", merged.to_str().unwrap(), "--quiet"]);
    assert!(
        text(&o.stderr).contains("4 valid results reused"),
        "{}",
        text(&o.stderr)
    );
    assert_eq!(
        std::fs::read(out.join("s/stats.csv")).unwrap(),
        std::fs::read(into.join("stats.csv")).unwrap()
    );
    // A bad study: exit status 1 and a located message.
    std::fs::write(
        &file,
        std::fs::read_to_string(&file)
            .unwrap()
            .replace("repetitions = 2", "repetitions = 0"),
    )
    .unwrap();
    let o = cclab(&["study", f, "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("s_study.toml:2:"),
        "{}",
        text(&o.stderr)
    );
    assert!(!text(&o.stderr).contains("panicked"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Several study files run one after the other, each into its own directory; every file is
/// checked first, so a bad last file stops the command before any run, and two files naming
/// the same study are refused.
#[test]
fn several_studies_in_one_command() {
    let dir = temp_dir("studies");
    let study = |name: &str, reps: u32| {
        format!(
            "name = \"{name}\"\nrepetitions = {reps}\n[base]\nname = \"{name}\"\nduration = \"2s\"\n\
             [base.topology]\npreset = \"quicly\"\nprofile = \"bdp40\"\n[[base.flows]]\n\
             controller = \"cubic\"\n[analysis]\nplots = []\n"
        )
    };
    let (a, b) = (dir.join("a_study.toml"), dir.join("b_study.toml"));
    std::fs::write(&a, study("first", 1)).unwrap();
    std::fs::write(&b, study("second", 0)).unwrap();
    let out = dir.join("out");
    let args = |files: &[&PathBuf]| {
        let mut v: Vec<String> = vec!["study".into()];
        v.extend(files.iter().map(|f| f.to_str().unwrap().to_owned()));
        v.extend([
            "--out".into(),
            out.to_str().unwrap().into(),
            "--quiet".into(),
        ]);
        v
    };
    let run = |files: &[&PathBuf]| {
        let v = args(files);
        cclab(&v.iter().map(String::as_str).collect::<Vec<_>>())
    };
    // The second file is bad: nothing runs.
    let o = run(&[&a, &b]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("b_study.toml:2:"),
        "{}",
        text(&o.stderr)
    );
    assert!(!out.join("first").exists());
    // Fixed: both run, each into its own directory.
    std::fs::write(&b, study("second", 2)).unwrap();
    let o = run(&[&a, &b]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("2 studies done"),
        "{}",
        text(&o.stderr)
    );
    assert!(out.join("first/stats.csv").exists() && out.join("second/stats.csv").exists());
    // The same study twice.
    let o = run(&[&a, &a]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("are both study `first`"),
        "{}",
        text(&o.stderr)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A study with a baseline and three repetitions cannot mark any comparison as significant
/// (two-sided Mann-Whitney U, smallest p 0.1): `cclab study` says so on standard error before
/// any run (here a dry run, which runs nothing); four repetitions get no warning.
#[test]
fn study_with_too_few_repetitions_warns_up_front() {
    let dir = temp_dir("few_reps");
    let file = dir.join("few.toml");
    let study = |reps: u32| {
        format!(
            "name = \"few\"\nrepetitions = {reps}\n[base]\nname = \"few\"\n[base.test]\n\
             name = \"tcp_upload\"\nlength = \"3s\"\n[base.tcp]\ncontroller = \"cubic\"\n\
             [base.topology]\npreset = \"access\"\nrate = \"10Mbit\"\ndelay = \"5ms\"\n\
             [grid]\ntcp.controller = [\"cubic\", \"bbr3\"]\n\
             [analysis]\nbaseline = {{ tcp.controller = \"cubic\" }}\n"
        )
    };
    let out = dir.join("out");
    let args = [
        "study",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--dry-run",
    ];
    std::fs::write(&file, study(3)).unwrap();
    let o = cclab(&args);
    let err = text(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("warning: study `few` has 3 repetitions per configuration")
            && err.contains("cannot reach p < 0.05 (its smallest p is 0.1)")
            && err.contains("use repetitions = 4 or more"),
        "{err}"
    );
    std::fs::write(&file, study(4)).unwrap();
    let o = cclab(&args);
    assert!(o.status.success() && !text(&o.stderr).contains("warning"));
}
