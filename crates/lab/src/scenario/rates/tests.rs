//! Tests of `[[links]]`: keys, files, errors and the resulting link configuration.

use std::path::PathBuf;

use cclab_sim::net::rate::RateShape;
use cclab_sim::{Dur, Time};

use super::super::{Overrides, Scenario, parse};

const BASE: &str = r#"
name = "t"
[topology]
preset = "dumbbell"
rate = "12Mbit"
delay = "10ms"
[[flows]]
controller = "cubic"
"#;

fn parse_at(text: &str, origin: &str) -> Result<Scenario, String> {
    parse(text, origin, &Overrides::default()).map_err(|e| e.to_string())
}

fn ok(extra: &str) -> Scenario {
    parse_at(&format!("{BASE}{extra}"), "t.toml").unwrap_or_else(|e| panic!("{e}"))
}

fn err(extra: &str) -> String {
    parse_at(&format!("{BASE}{extra}"), "t.toml").expect_err("expected an error")
}

/// A fresh directory under the system's temporary directory.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("cclab-rates-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn shape_of(s: &Scenario, link: &str) -> (Option<u64>, Option<RateShape>) {
    let cfg = s.to_sim_config();
    let l = cfg.links.iter().find(|l| l.name == link).unwrap();
    (l.rate_bps, l.rate_shape.clone())
}

/// Steps become the link's schedule; the other direction keeps its constant rate; a link
/// without `[[links]]` is unchanged.
#[test]
fn steps_attach_to_one_direction() {
    let s = ok(r#"
[[links]]
link = "bottleneck"
rate = "steps"
steps = [["0s", "12Mbit"], ["2s", 0], ["3s", "24Mbit"]]
"#);
    let (bps, shape) = shape_of(&s, "bottleneck");
    let Some(RateShape::Schedule(sched)) = shape else {
        panic!("no schedule")
    };
    assert_eq!(
        sched.steps(),
        &[
            (Time::ZERO, 12_000_000),
            (Time(2_000_000_000), 0),
            (Time(3_000_000_000), 24_000_000)
        ]
    );
    assert_eq!(
        bps,
        Some(24_000_000),
        "a one-shot schedule's nominal rate is its peak"
    );
    assert_eq!(shape_of(&s, "bottleneck_reverse"), (Some(12_000_000), None));
}

/// Square and sine waves average to their mean over a period (theory: two equal halves;
/// a sine sampled at N equally spaced points sums to 0), and start at their phase.
#[test]
fn oscillations_keep_their_mean() {
    let s = ok(r#"
[[links]]
link = "bottleneck"
rate = "square"
mean = "10Mbit"
amplitude = "6Mbit"
period = "1s"
phase = 0.5
[[links]]
link = "bottleneck_reverse"
rate = "sine"
mean = "10Mbit"
amplitude = "10Mbit"
period = "2s"
samples = 7
"#);
    let Some(RateShape::Schedule(sq)) = shape_of(&s, "bottleneck").1 else {
        panic!()
    };
    assert_eq!(sq.nominal_bps(), 10_000_000);
    assert_eq!(
        sq.rate_at(Time(100_000_000)),
        4_000_000,
        "phase ½ starts low"
    );
    assert_eq!(sq.rate_at(Time(600_000_000)), 16_000_000);
    assert_eq!(sq.period(), Some(Dur::from_secs(1)));
    let Some(RateShape::Schedule(sine)) = shape_of(&s, "bottleneck_reverse").1 else {
        panic!()
    };
    assert_eq!(sine.steps().len(), 7);
    // Rounding each of 7 samples to a whole bit/s moves the mean by at most 0.5 bit/s.
    assert!(
        sine.nominal_bps().abs_diff(10_000_000) <= 1,
        "{}",
        sine.nominal_bps()
    );
    assert_eq!(sine.rate_at(Time::ZERO), 10_000_000);
}

/// A trace and a CSV file are read relative to the scenario file.
#[test]
fn files_are_read_relative_to_the_scenario() {
    let dir = scratch("files");
    std::fs::create_dir_all(dir.join("traces")).unwrap();
    std::fs::write(dir.join("traces/t.up"), "1\n1\n2\n").unwrap();
    std::fs::write(
        dir.join("r.csv"),
        "time_s,rate_mbit\n0,12\n1.5,0\n# outage\n2,6\n",
    )
    .unwrap();
    let text = format!(
        r#"{BASE}
[[links]]
link = "bottleneck"
rate = "trace"
file = "traces/t.up"
[[links]]
link = "bottleneck_reverse"
rate = "csv"
file = "r.csv"
"#
    );
    let origin = dir.join("s.toml").display().to_string();
    let s = parse_at(&text, &origin).unwrap();
    let (bps, shape) = shape_of(&s, "bottleneck");
    // Three 1500-byte opportunities per 2 ms: 18 Mbit/s.
    assert_eq!(bps, Some(18_000_000));
    assert!(matches!(shape, Some(RateShape::Trace(_))));
    let Some(RateShape::Schedule(csv)) = shape_of(&s, "bottleneck_reverse").1 else {
        panic!()
    };
    assert_eq!(
        csv.steps(),
        &[
            (Time::ZERO, 12_000_000),
            (Time(1_500_000_000), 0),
            (Time(2_000_000_000), 6_000_000)
        ]
    );
    // A malformed line names the file and the line.
    std::fs::write(dir.join("traces/t.up"), "1\n2\nx\n").unwrap();
    let e = parse_at(&text, &origin).unwrap_err();
    assert!(
        e.contains("links[0].file: ") && e.contains("t.up:3: `x`"),
        "{e}"
    );
    std::fs::write(dir.join("traces/t.up"), "1\n\n2\n").unwrap();
    let e = parse_at(&text, &origin).unwrap_err();
    assert!(e.contains("t.up:2: empty line"), "{e}");
    std::fs::write(dir.join("traces/t.up"), "1\n2\n").unwrap();
    std::fs::write(dir.join("r.csv"), "0,12\n1,x\n").unwrap();
    let e = parse_at(&text, &origin).unwrap_err();
    assert!(
        e.contains("links[1].file: ") && e.contains("r.csv:2: `x`"),
        "{e}"
    );
    std::fs::remove_file(dir.join("r.csv")).unwrap();
    let e = parse_at(&text, &origin).unwrap_err();
    assert!(
        e.contains("links[1].file") && e.contains("cannot read"),
        "{e}"
    );
    // Larger than the input limit.
    let big = vec![b'1'; usize::try_from(crate::input::MAX_INPUT_BYTES).unwrap() + 1];
    std::fs::write(dir.join("r.csv"), big).unwrap();
    let e = parse_at(&text, &origin).unwrap_err();
    assert!(e.contains("links[1].file") && e.contains("limit"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Invalid entries are clear errors naming the key and the valid values.
#[test]
fn invalid_entries_are_errors() {
    let e = err("[[links]]\nlink = \"nowhere\"\nrate = \"steps\"\nsteps = [[0, 1]]\n");
    assert!(
        e.contains("links[0].link") && e.contains("bottleneck_reverse"),
        "{e}"
    );
    let e = err("[[links]]\nlink = \"bottleneck\"\nrate = \"wobble\"\n");
    assert!(e.contains("links[0].rate") && e.contains("square"), "{e}");
    let e = err("[[links]]\nlink = \"bottleneck\"\nrate = \"steps\"\nsteps = [[\"1s\", 5]]\n");
    assert!(e.contains("links[0].steps") && e.contains("time 0"), "{e}");
    let e = err("[[links]]\nlink = \"bottleneck\"\nrate = \"steps\"\nsteps = [[0, \"5Mbat\"]]\n");
    assert!(e.contains("links[0].steps[0]") && e.contains("unit"), "{e}");
    let e = err(
        "[[links]]\nlink = \"bottleneck\"\nrate = \"square\"\nmean = \"1Mbit\"\namplitude = \"2Mbit\"\nperiod = \"1s\"\n",
    );
    assert!(e.contains("links[0].amplitude"), "{e}");
    let e = err(
        "[[links]]\nlink = \"bottleneck\"\nrate = \"sine\"\nmean = \"1Mbit\"\namplitude = 0\nperiod = \"1s\"\nfile = \"x\"\n",
    );
    assert!(
        e.contains("links[0].file") && e.contains("csv/trace"),
        "{e}"
    );
    let e = err(
        "[[links]]\nlink = \"bottleneck\"\nrate = \"steps\"\nsteps = [[0, 1]]\n[[links]]\nlink = \"bottleneck\"\nrate = \"steps\"\nsteps = [[0, 1]]\n",
    );
    assert!(e.contains("links[1].link") && e.contains("already"), "{e}");
    let e = err("[[links]]\nrate = \"steps\"\n");
    assert!(e.contains("links[0].link"), "{e}");
}

/// The access preset's links take rate models too, one per direction.
#[test]
fn access_links_take_a_model_per_direction() {
    let text = r#"
name = "a"
[topology]
preset = "access"
rate = "20Mbit"
delay = "5ms"
[test]
name = "tcp_upload"
length = "5s"
[tcp]
controller = "cubic"
[[links]]
link = "uplink"
rate = "square"
mean = "10Mbit"
amplitude = "5Mbit"
period = "2s"
[[links]]
link = "downlink"
rate = "steps"
steps = [[0, "20Mbit"], ["1s", "2Mbit"]]
"#;
    let s = parse_at(text, "a.toml").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(shape_of(&s, "uplink").0, Some(10_000_000));
    assert_eq!(shape_of(&s, "downlink").0, Some(20_000_000));
    // The run plan (what a study runs) carries them too.
    let plan = s.run_plan(1, "a");
    assert_eq!(
        plan.sim
            .links
            .iter()
            .filter(|l| l.rate_shape.is_some())
            .count(),
        2
    );
}

/// The token-bucket elements: keys with units, defaults, and clear errors.
#[test]
fn token_bucket_elements_take_rate_burst_and_limit() {
    use cclab_sim::net::ElementSpec;
    let s = ok(
        "[[elements]]\nnode = \"left\"\nkind = \"policer\"\nrate = \"12Mbit\"\n\
                [[elements]]\nnode = \"left\"\nkind = \"shaper\"\nrate = 5000000\nburst = \"3000B\"\n\
                limit = \"64KiB\"\n",
    );
    assert_eq!(
        s.elements[0].spec,
        ElementSpec::Policer {
            rate_bps: 12_000_000,
            burst_bytes: 15_000
        }
    );
    assert_eq!(
        s.elements[1].spec,
        ElementSpec::Shaper {
            rate_bps: 5_000_000,
            burst_bytes: 3_000,
            limit_bytes: 65_536
        }
    );
    let e = err("[[elements]]\nnode = \"left\"\nkind = \"policer\"\n");
    assert!(
        e.contains("elements[0].rate") && e.contains("required"),
        "{e}"
    );
    let e = err("[[elements]]\nnode = \"left\"\nkind = \"shaper\"\nrate = \"0Mbit\"\n");
    assert!(
        e.contains("elements[0].rate") && e.contains("positive"),
        "{e}"
    );
    let e = err(
        "[[elements]]\nnode = \"left\"\nkind = \"shaper\"\nrate = \"1Mbit\"\nlimit = \"lots\"\n",
    );
    assert!(e.contains("elements[0].limit"), "{e}");
}

/// `delay_model = "jitter"` puts the `jitter` element's draws into the link's own delay line:
/// netem's form with a distribution and correlation, in order; a rate model on the same link
/// is a second entry, and both attach; the other direction has none.
#[test]
fn a_jitter_entry_attaches_to_its_link() {
    use cclab_sim::LinkJitter;
    use cclab_sim::net::{Distribution, JitterDist};
    let s = ok(r#"
[[links]]
link = "bottleneck"
delay_model = "jitter"
delay = "10ms"
jitter = "2ms"
distribution = "normal"
correlation = 0.25
reorder = false
[[links]]
link = "bottleneck"
rate = "steps"
steps = [["0s", "12Mbit"], ["2s", "6Mbit"]]
"#);
    let cfg = s.to_sim_config();
    let l = cfg.links.iter().find(|l| l.name == "bottleneck").unwrap();
    assert_eq!(
        l.jitter,
        Some(LinkJitter {
            dist: JitterDist::Netem {
                distribution: Distribution::Normal,
                mu: Dur::from_millis(10),
                sigma: Dur::from_millis(2),
            },
            correlation: 0.25,
            reorder: false,
        })
    );
    assert!(l.rate_shape.is_some());
    let back = cfg
        .links
        .iter()
        .find(|l| l.name == "bottleneck_reverse")
        .unwrap();
    assert_eq!(back.jitter, None);
    // The uniform form, reordering by default.
    let s = ok(
        "[[links]]\nlink = \"bottleneck_reverse\"\ndelay_model = \"jitter\"\nspread = \"4ms\"\n",
    );
    let cfg = s.to_sim_config();
    let l = cfg
        .links
        .iter()
        .find(|l| l.name == "bottleneck_reverse")
        .unwrap();
    assert_eq!(
        l.jitter,
        Some(LinkJitter {
            dist: JitterDist::Uniform {
                base: Dur::ZERO,
                spread: Dur::from_millis(4),
            },
            correlation: 0.0,
            reorder: true,
        })
    );
}

/// Invalid jitter entries: both `rate` and `delay_model`, neither, an unknown model, a key the
/// jitter does not take, a second jitter on a link, and a jitter behind an AQM are errors
/// naming the entry's key.
#[test]
fn invalid_jitter_entries_are_errors() {
    let e = err(
        "[[links]]\nlink = \"bottleneck\"\nrate = \"steps\"\nsteps = [[0, 1]]\ndelay_model = \"jitter\"\n",
    );
    assert!(
        e.contains("links[0].delay_model") && e.contains("not both"),
        "{e}"
    );
    let e = err("[[links]]\nlink = \"bottleneck\"\n");
    assert!(
        e.contains("links[0].rate") && e.contains("delay_model"),
        "{e}"
    );
    let e = err("[[links]]\nlink = \"bottleneck\"\ndelay_model = \"jiter\"\n");
    assert!(
        e.contains("links[0].delay_model") && e.contains("jitter"),
        "{e}"
    );
    let e = err("[[links]]\nlink = \"bottleneck\"\ndelay_model = \"jitter\"\nsigma = \"1ms\"\n");
    assert!(e.contains("links[0].sigma"), "{e}");
    let e = err(
        "[[links]]\nlink = \"bottleneck\"\ndelay_model = \"jitter\"\n[[links]]\nlink = \"bottleneck\"\ndelay_model = \"jitter\"\n",
    );
    assert!(e.contains("links[1].link") && e.contains("already"), "{e}");
    let e = parse_at(
        &format!(
            "{}[[links]]\nlink = \"bottleneck\"\ndelay_model = \"jitter\"\n",
            BASE.replace(
                "delay = \"10ms\"\n",
                "delay = \"10ms\"\nqdisc = \"fq_codel\"\n"
            )
        ),
        "t.toml",
    )
    .expect_err("a jitter behind an AQM");
    assert!(
        e.contains("links[0].link") && e.contains("drop-tail"),
        "{e}"
    );
}

/// A periodic schedule makes at most `MAX_RATE_CHANGES` rate changes in a run: a 2 ns square
/// wave, 2 ns steps and a 1 µs sine of 10,000 samples are refused at their `period` with the
/// shortest period allowed (before, a one-day 2 ns square wave passed `check` and would have
/// run for days); at the bound a schedule is accepted.
#[test]
fn rate_changes_are_bounded() {
    use super::MAX_RATE_CHANGES;
    let square = |duration: &str, period: &str| {
        format!(
            "duration = \"{duration}\"\n{}\n[[links]]\nlink = \"bottleneck\"\nrate = \"square\"\n\
             mean = \"10Mbit\"\namplitude = \"5Mbit\"\nperiod = \"{period}\"\n",
            BASE.trim_start()
        )
    };
    let e = parse_at(&square("20s", "2ns"), "t.toml").expect_err("2 ns over 20 s");
    assert!(e.starts_with("t.toml:15:10: links[0].period: "), "{e}");
    assert!(
        e.contains("20000000000 rate changes") && e.contains("10000000") && e.contains("4 us"),
        "{e}"
    );
    assert!(parse_at(&square("86400s", "2ns"), "t.toml").is_err());
    // Exactly at the bound: 20 s / 4 µs = 5 million periods of 2 changes.
    assert_eq!(20_000_000_000 / 4_000 * 2, MAX_RATE_CHANGES);
    parse_at(&square("20s", "4us"), "t.toml").unwrap_or_else(|e| panic!("{e}"));
    let e = err(r#"
[[links]]
link = "bottleneck"
rate = "steps"
steps = [["0s", "10Mbit"], ["1ns", "5Mbit"]]
period = "2ns"
"#);
    assert!(
        e.contains("links[0].period") && e.contains("rate changes"),
        "{e}"
    );
    let e = err(r#"
[[links]]
link = "bottleneck"
rate = "sine"
mean = "10Mbit"
amplitude = "5Mbit"
period = "1us"
samples = 10000
"#);
    assert!(
        e.contains("links[0].period") && e.contains("or fewer steps"),
        "{e}"
    );
}
