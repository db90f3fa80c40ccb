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
