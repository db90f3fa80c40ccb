//! Error messages that point at the problem: each case is an input that once got a message
//! naming the wrong place (or no place), checked for the file, line, key and — in a study — the
//! grid level that caused it.

use std::path::Path;

use cclab_lab::scenario::{Overrides, parse};
use cclab_lab::study;

/// A valid dumbbell scenario; tests append keys to its flow or replace lines.
const SCENARIO: &str = r#"name = "t"
[topology]
preset = "dumbbell"
rate = "10Mbit"
delay = "10ms"
[[flows]]
controller = "cubic"
"#;

fn scenario_error(text: &str) -> String {
    match parse(text, "t.toml", &Overrides::default()) {
        Ok(_) => panic!("expected an error for:\n{text}"),
        Err(e) => e.to_string(),
    }
}

fn study_error(text: &str) -> String {
    study_error_in(text, Path::new("."))
}

fn study_error_in(text: &str, dir: &Path) -> String {
    match study::parse(text, "s.toml", dir) {
        Ok(_) => panic!("expected an error for:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn an_empty_file_says_it_is_empty_and_what_belongs_in_it() {
    for text in ["", "\n\n", "# only a comment\n"] {
        let e = scenario_error(text);
        assert!(
            e.starts_with("t.toml: the file is empty: a scenario file needs `name`, a [topology]"),
            "{e}"
        );
        let e = study_error(text);
        assert!(
            e.starts_with("s.toml: the file is empty: a study file needs `name` and a `base`"),
            "{e}"
        );
    }
}

#[test]
fn a_zero_delay_is_blamed_for_a_default_buffer_of_zero_bytes() {
    let e = scenario_error(&SCENARIO.replace("delay = \"10ms\"", "delay = 0"));
    assert!(
        e.starts_with("t.toml:5:9: topology.delay: the default buffer"),
        "{e}"
    );
    assert!(
        e.contains("is 0 bytes") && e.contains("set `topology.buffer`"),
        "{e}"
    );
    // A rate too small for a packet in one RTT is blamed on the rate.
    let e = scenario_error(&SCENARIO.replace("\"10Mbit\"", "\"100kbit\""));
    assert!(
        e.starts_with("t.toml:4:8: topology.rate: the default buffer"),
        "{e}"
    );
    // A buffer the file does give is still the one blamed.
    let e = scenario_error(&SCENARIO.replace("delay = \"10ms\"", "delay = 0\nbuffer = \"1bdp\""));
    assert!(
        e.starts_with("t.toml:6:10: topology.buffer: `1bdp` resolves to 0"),
        "{e}"
    );
}

#[test]
fn integers_beyond_64_bits_are_out_of_range() {
    let e = scenario_error(&format!("{SCENARIO}size = 99999999999999999999\n"));
    assert_eq!(
        e,
        "t.toml:8:8: flows[0].size: `99999999999999999999` is out of range, expected a size \
         such as \"64KiB\" or a number of bytes"
    );
    let e = scenario_error(&format!("{SCENARIO}mss = 99999999999999999999\n"));
    assert!(e.contains("flows[0].mss: `99999999999999999999` is out of range, expected a whole number in -9223372036854775808..=9223372036854775807"), "{e}");
    let e = scenario_error(&format!("{SCENARIO}beta = 99999999999999999999\n"));
    assert!(e.contains("flows[0].beta: `99999999999999999999` is out of range, expected a number that fits in 64 bits"), "{e}");
    let e = scenario_error(&SCENARIO.replace("name = \"t\"", "name = \"t\"\nseed = -1"));
    assert_eq!(
        e,
        "t.toml:2:8: seed: `-1` is out of range, expected a whole number in \
         0..=18446744073709551615"
    );
    let e = scenario_error(&format!("{SCENARIO}size = \"99999999999999999999\"\n"));
    assert!(e.contains("flows[0].size: a size is out of range"), "{e}");
}

#[test]
fn a_date_time_where_a_duration_belongs_is_named() {
    let e = scenario_error(&SCENARIO.replace(
        "name = \"t\"",
        "name = \"t\"\nduration = 1979-05-27T07:32:00Z",
    ));
    assert_eq!(
        e,
        "t.toml:2:12: duration: a date-time is not accepted here, expected a duration such as \
         \"20ms\" or a number of seconds"
    );
}

#[test]
fn a_duplicate_key_is_named_with_its_table_and_first_line() {
    let e = scenario_error(
        &SCENARIO.replace("delay = \"10ms\"", "delay = \"10ms\"\nrate = \"20Mbit\""),
    );
    assert_eq!(
        e,
        "t.toml:6:1: topology.rate: duplicate key `rate`: it is already set in this table (first \
         on line 4)"
    );
    let e = scenario_error(&format!(
        "{SCENARIO}[[flows]]\ncontroller = \"reno\"\ncontroller = \"cubic\"\n"
    ));
    assert!(
        e.starts_with("t.toml:10:1: flows[1].controller: duplicate key `controller`"),
        "{e}"
    );
    let e = scenario_error(&format!("{SCENARIO}[topology]\nloss = 0.1\n"));
    assert!(
        e.starts_with(
            "t.toml:8:2: topology: the table `[topology]` is defined twice (first on line 2)"
        ),
        "{e}"
    );
    let e = scenario_error(&SCENARIO.replace(
        "delay = \"10ms\"",
        "delay = \"10ms\"\nqdisc = { kind = \"codel\", kind = \"pie\" }",
    ));
    assert!(
        e.contains("topology.qdisc.kind: duplicate key `kind`"),
        "{e}"
    );
}

#[test]
fn fractional_bytes_are_refused() {
    let e = scenario_error(&format!("{SCENARIO}size = \"1.5B\"\n"));
    assert_eq!(
        e,
        "t.toml:8:8: flows[0].size: a size must be a whole number of bytes: `1.5B` is 1.5 bytes"
    );
    let e = scenario_error(&format!("{SCENARIO}size = 2.5\n"));
    assert!(
        e.contains("flows[0].size: a size must be a whole number of bytes"),
        "{e}"
    );
    let e = scenario_error(
        &SCENARIO.replace("delay = \"10ms\"", "delay = \"10ms\"\nbuffer = \"2999.5B\""),
    );
    assert!(
        e.contains("topology.buffer: a buffer size must be a whole number of bytes"),
        "{e}"
    );
}

#[test]
fn a_header_nested_too_deeply_is_found_on_its_line() {
    let deep = vec!["a"; 2000].join(".");
    let text = format!("{SCENARIO}\n\n\n[{deep}]\nx = 1\n");
    let e = scenario_error(&text);
    assert!(
        e.starts_with(
            "t.toml:11:1: a key or table header of 2000 dotted parts nests tables deeper"
        ),
        "{e}"
    );
    let text = format!("{SCENARIO}{deep} = 1\n");
    let e = scenario_error(&text);
    assert!(
        e.starts_with("t.toml:8:1: a key or table header of 2000"),
        "{e}"
    );
}

#[test]
fn each_kind_of_file_says_when_it_is_given_the_other() {
    let st = include_str!("../../../scenarios/demo_study.toml");
    let e = scenario_error(st);
    assert!(
        e.contains(": this is a study file, not a scenario: it has `base`"),
        "{e}"
    );
    let sc = include_str!("../../../scenarios/cubic_single.toml");
    let e = study_error(sc);
    assert!(
        e.contains(": this is a scenario file, not a study: it has `topology` and no `base`"),
        "{e}"
    );
}

/// A study on the access preset with a grid over `axis` (TOML after `=`).
fn access_study(axis: &str) -> String {
    format!(
        r#"name = "s"
[base]
name = "s"
[base.test]
name = "tcp_upload"
length = "2s"
[base.tcp]
controller = "cubic"
[base.topology]
preset = "access"
rate = "20Mbit"
delay = "5ms"
[grid]
{axis}
"#
    )
}

#[test]
fn a_grid_level_that_makes_a_default_buffer_too_small_is_named() {
    let e = study_error(&access_study("topology.rate = [\"1kbit\", \"10Mbit\"]"));
    assert!(
        e.starts_with("s.toml:14:18: grid.topology.rate[0]: level `1kbit`: the default buffer"),
        "{e}"
    );
    assert!(e.contains("set `topology.up_buffer`"), "{e}");
}

#[test]
fn a_base_field_invalid_in_some_configurations_names_one_of_them() {
    // The base's buffer is fine at 20 Mbit/s and too small at 1 kbit/s; the grid sets the
    // rate through a whole table, so the field is the base's.
    let text = access_study(
        "topology = [\n  { preset = \"access\", rate = \"20Mbit\", delay = \"5ms\", buffer = \"1bdp\" },\n  { preset = \"access\", rate = \"20Mbit\", delay = \"5ms\", buffer = \"1B\", label = \"tiny\" },\n]",
    );
    let e = study_error(&text);
    assert!(
        e.contains("grid.topology[1]") && e.contains("level `tiny`"),
        "{e}"
    );
    let text = access_study("test.name = [\"tcp_upload\", \"rtt_fair\"]").replace(
        "rate = \"20Mbit\"",
        "rate = \"20Mbit\"\nserver_delays = [\"1ms\"]",
    );
    let e = study_error(&text);
    assert!(e.contains("topology.server_delays"), "{e}");
    assert!(
        e.ends_with("(in configuration `test.name=rtt_fair`)"),
        "{e}"
    );
}

#[test]
fn every_invalid_configuration_is_counted() {
    // 1000 levels, each invalid in its own way: the count is 1000, ten are shown.
    let levels: Vec<String> = (1..=1000).map(|i| format!("\"{i}bit\"")).collect();
    let e = study_error(&access_study(&format!(
        "topology.rate = [{}]",
        levels.join(", ")
    )));
    assert!(
        e.starts_with("s.toml: 1000 of 1000 configurations of the grid are invalid:"),
        "{e}"
    );
    assert_eq!(e.matches("\n  s.toml:").count(), 10, "{e}");
    assert!(
        e.ends_with("and 990 more configurations with other problems"),
        "{e}"
    );
    // The same problem in several configurations is listed once, with its count.
    let e = study_error(&access_study(
        "topology.rate = [\"1kbit\", \"10Mbit\"]\ntcp.controller = [\"cubic\", \"reno\", \"bbr3\"]",
    ));
    assert!(
        e.contains("level `1kbit`") && e.ends_with("(3 configurations)"),
        "{e}"
    );
}

#[test]
fn an_unreadable_base_file_gives_the_reason() {
    let dir = std::env::temp_dir().join(format!("cclab-messages-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("binary.toml"), [0xff, 0xfe, 0x00, 0x80]).unwrap();
    let e = study_error_in("name = \"s\"\nbase = \"binary.toml\"\n", &dir);
    assert!(
        e.contains("base: cannot read the base scenario") && e.contains("not UTF-8"),
        "{e}"
    );
    let e = study_error_in("name = \"s\"\nbase = \"missing.toml\"\n", &dir);
    assert!(e.contains("missing.toml`: No such file"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A scenario of preset `preset` with `keys` in its `[topology]` and one CUBIC flow.
fn with_topology(preset: &str, keys: &str) -> String {
    format!(
        "name = \"x\"\nduration = \"5s\"\n[topology]\npreset = \"{preset}\"\n{keys}\n[[flows]]\n\
         controller = \"cubic\"\n"
    )
}

#[test]
fn bounds_the_simulator_also_checks_name_the_key_and_line_as_written() {
    // PIE's update timer, inline or as a table, is blamed on the `tupdate` the file wrote.
    let e = scenario_error(&with_topology(
        "dumbbell",
        "rate = \"20Mbit\"\ndelay = \"10ms\"\nqdisc = { kind = \"pie\", tupdate = \"1ns\" }",
    ));
    assert!(
        e.starts_with("t.toml:7:35: topology.qdisc.tupdate: link `bottleneck`"),
        "{e}"
    );
    let e = scenario_error(&with_topology(
        "dumbbell",
        "rate = \"20Mbit\"\ndelay = \"10ms\"\n[topology.qdisc]\nkind = \"dualpi2\"\n\
         tupdate = \"100ns\"",
    ));
    assert!(
        e.starts_with("t.toml:9:11: topology.qdisc.tupdate: link `bottleneck`"),
        "{e}"
    );
    // quicly's per-flight loss and the Wi-Fi error rate: [0, 1), at their keys.
    let e = scenario_error(&with_topology(
        "quicly",
        "profile = \"DSL\"\nloss_per_rtt = 1",
    ));
    assert!(
        e.starts_with("t.toml:6:16: topology.loss_per_rtt: must be in [0, 1)"),
        "{e}"
    );
    assert!(!e.contains("p_flight") && !e.contains("simulator"), "{e}");
    let e = scenario_error(&with_topology("wifi", "per = 1"));
    assert!(
        e.starts_with("t.toml:5:7: topology.per: must be in [0, 1)"),
        "{e}"
    );
    assert!(!e.contains("simulator") && !e.contains("wifi 0"), "{e}");
}

#[test]
fn messages_use_the_files_words_not_rust_debug_forms() {
    let e = scenario_error(&with_topology("wifi", "band = \"6GHz\"\nstandard = \"ht\""));
    assert!(
        e.starts_with("t.toml:5:8: topology.band: HT is not defined in the 6GHz band"),
        "{e}"
    );
    let e = scenario_error(&with_topology("wifi", "mcs = -1"));
    assert!(
        e.starts_with(
            "t.toml:5:7: topology.mcs: HE MCS -1 is out of range: per-stream MCS is \
             0..=11"
        ),
        "{e}"
    );
    let e = scenario_error(&with_topology(
        "dumbbell",
        "rate = \"20Mbit\"\ndelay = \"10ms\"\nbuffer = \"100p\"\n[[links]]\nlink = \
         \"bottleneck\"\nrate = \"steps\"\nsteps = [[\"1s\",\"10Mbit\"]]",
    ));
    assert!(
        e.contains("links[0].steps: the first step of a rate schedule must be at time 0, not 1 s"),
        "{e}"
    );
    let e = scenario_error("name = \"x\"\ntopology = \"dumbbell\"\n");
    assert!(
        e.starts_with(
            "t.toml:2:12: topology: invalid type: string \"dumbbell\", expected a \
             table"
        ),
        "{e}"
    );
    assert!(!e.contains("struct"), "{e}");
}

#[test]
fn a_start_made_invalid_by_the_duration_override_names_the_override() {
    let text = format!("{SCENARIO}start = \"4s\"\n");
    let o = Overrides {
        seed: None,
        duration: Some(cclab_sim::Dur::from_secs(2)),
    };
    let e = parse(&text, "t.toml", &o).unwrap_err().to_string();
    assert!(
        e.starts_with(
            "t.toml:8:9: flows[0].start: starts at 4 s, not before the end of the run \
             (2 s) (the run lasts 2 s as `--duration` asks"
        ),
        "{e}"
    );
    // Without the override the file is valid; a problem of the file itself is not blamed on it.
    assert!(parse(&text, "t.toml", &Overrides::default()).is_ok());
    let e = parse(&format!("{text}stop = \"1s\"\n"), "t.toml", &o)
        .unwrap_err()
        .to_string();
    assert!(!e.contains("--duration"), "{e}");
}

#[test]
fn check_lists_the_hosts_commands_may_name() {
    let sc = parse(SCENARIO, "t.toml", &Overrides::default()).unwrap();
    assert!(
        sc.describe().contains("\n  hosts: s0, r0\n"),
        "{}",
        sc.describe()
    );
}

/// `cclab emulate` on a Wi-Fi preset names Wi-Fi as the reason, before anything that follows
/// from it (the stations' pacing shift).
#[test]
fn the_emulator_refuses_wi_fi_for_being_wi_fi() {
    let sc = parse(&with_topology("wifi", ""), "t.toml", &Overrides::default()).unwrap();
    let e = cclab_emu::run::check_config(&sc.to_sim_config(), false)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("the emulator cannot run this scenario: the emulator does not run Wi-Fi"),
        "{e}"
    );
}
