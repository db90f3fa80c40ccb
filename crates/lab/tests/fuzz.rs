//! Fuzzing every file format cclab reads, on stable Rust, as ordinary tests.
//!
//! Contract: each target mutates a corpus — the shipped `scenarios/*.toml` (scenario and study
//! files) and run records written by a small study — with a seeded mutator (byte edits, TOML-
//! and JSON-aware edits, splices between corpus files, values from a dictionary of edge cases
//! and of every declared name) and feeds the result to the reader: the scenario parser (and, for
//! a valid scenario, everything `cclab check` and a study derive from it, including the
//! simulator's constructor — no simulation is run), the study parser (with `base` files resolved
//! in `scenarios/`), the run-record reader (and the Flent export and study analysis of a record
//! that passes it), and the quantity parsers behind every unit-carrying key and command-line
//! option. A fifth target generates scenarios near the bounds on what costs memory or time per
//! packet (element chains, queue sizes, rate schedules; [`generate_scenario`]), without text
//! edits, and runs the short ones. No input may panic, take longer than [`MAX_INPUT_TIME`], or
//! raise the process's peak memory above [`MAX_PEAK_RSS`].
//!
//! Inputs that reach new outcomes (a valid file, or an error message not seen before) join the
//! corpus, so the mutator climbs past the first syntax error. Each target runs for its share of
//! `CCLAB_FUZZ_SECS` seconds (default 30 in total; the targets run in parallel) from seed
//! `CCLAB_FUZZ_SEED` (default 1). A failing input is saved under the test's temporary directory
//! and named in the failure; saved as `tests/fuzz/<target>/<name>` it is replayed first on every
//! run, as are the inputs already there.
//!
//! A longer run: `CCLAB_FUZZ_SECS=1800 CCLAB_FUZZ_SEED=$RANDOM cargo test -p cclab-lab --test
//! fuzz -- --nocapture` (the test profile is optimised).

use std::collections::HashSet;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cclab_lab::catalog::{self, Target};
use cclab_lab::scenario::elements::MAX_ELEMENTS_PER_NODE;
use cclab_lab::scenario::{Overrides, parse};
use cclab_lab::study::run::{self, Options};
use cclab_lab::study::store::{self, Store};
use cclab_lab::{analysis, flent, study, units};
use cclab_sim::{Dur, Simulation};
use sha2::{Digest, Sha256};

/// Longest time one input may take (parsing and checking only: valid inputs take milliseconds;
/// generous for a loaded machine).
const MAX_INPUT_TIME: Duration = Duration::from_secs(10);
/// Highest peak resident memory of the test process.
const MAX_PEAK_RSS: u64 = 1 << 30;
/// Largest input the mutator produces (the file-size limit is not what is fuzzed here).
const MAX_INPUT_BYTES: usize = 64 * 1024;
/// Most inputs kept in a corpus (the shipped files stay; newer finds replace older ones).
const MAX_CORPUS: usize = 2_000;
/// Total budget in seconds when `CCLAB_FUZZ_SECS` is not set.
const DEFAULT_SECS: f64 = 30.0;

/// splitmix64 (Steele, Lea, Flood: "Fast splittable pseudorandom number generators", 2014).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn scenarios_dir() -> PathBuf {
    workspace().join("scenarios")
}

fn budget(share: f64) -> Duration {
    let total = std::env::var("CCLAB_FUZZ_SECS")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .unwrap_or(DEFAULT_SECS);
    Duration::from_secs_f64(total * share)
}

fn seed(target: &str) -> u64 {
    let base = std::env::var("CCLAB_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or(1);
    let tag = target
        .bytes()
        .fold(0u64, |h, b| h.rotate_left(8) ^ u64::from(b));
    base ^ tag
}

/// The process's peak resident set (`VmHWM`), in bytes, where Linux reports it.
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// The shipped scenario and study files.
fn shipped() -> Vec<String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(scenarios_dir())
        .expect("scenarios/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|p| std::fs::read_to_string(p).expect("a shipped scenario"))
        .collect()
}

/// Edge-case values and every name a file may use (keys, controllers, qdiscs, presets, tests).
fn dictionary(corpus: &[String]) -> Vec<String> {
    let mut words: Vec<String> = [
        "0",
        "-1",
        "1",
        "2",
        "-0.0",
        "0.5",
        "1e308",
        "-1e308",
        "1e-300",
        "nan",
        "inf",
        "-inf",
        "9223372036854775807",
        "-9223372036854775808",
        "18446744073709551615",
        "99999999999999999999",
        "4294967295",
        "4294967296",
        "true",
        "false",
        "\"\"",
        "\"x\"",
        "\"0\"",
        "\"1ns\"",
        "\"0s\"",
        "\"1e6s\"",
        "\"1e7s\"",
        "\"2min\"",
        "\"1.5B\"",
        "\"0B\"",
        "\"1TiB\"",
        "\"1000TB\"",
        "\"0p\"",
        "\"1p\"",
        "\"4294967295p\"",
        "\"1e6bdp\"",
        "\"0bdp\"",
        "\"0.001bdp\"",
        "\"1bit\"",
        "\"1Tbit\"",
        "\"100Mbps\"",
        "\"50%\"",
        "\"101%\"",
        "1979-05-27T07:32:00Z",
        "1979-05-27",
        "07:32:00",
        "[]",
        "[1, 2]",
        "[\"a\", \"b\"]",
        "{}",
        "{ packets = 1 }",
        "{ kind = \"fifo\" }",
        "{ label = \"x\" }",
        "[[flows]]",
        "[[probes]]",
        "[[elements]]",
        "[[topology.drops]]",
        "[topology]",
        "[topology.qdisc]",
        "[host]",
        "[test]",
        "[tcp]",
        "[base]",
        "[grid]",
        "[analysis]",
        "\"../scenarios/cubic_single.toml\"",
        "\"cubic_single.toml\"",
        "\"demo_study.toml\"",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    let mut seen: HashSet<String> = words.iter().cloned().collect();
    let mut add = |w: &str| {
        if w.len() >= 2 && seen.insert(w.to_owned()) {
            words.push(w.to_owned());
        }
    };
    for t in Target::ALL {
        for line in catalog::render(t, true, false).lines() {
            if let Some(w) = line.split_whitespace().next() {
                add(w);
                add(&format!("\"{w}\""));
            }
        }
    }
    for text in corpus {
        for line in text.lines() {
            if let Some((k, _)) = line.split_once('=') {
                add(k.trim());
            }
        }
    }
    words
}

/// One random edit of `text`, kept on char boundaries.
fn mutate_once(rng: &mut Rng, text: &str, corpus: &[String], dict: &[String]) -> String {
    let lines: Vec<&str> = text.split('\n').collect();
    let boundary = |rng: &mut Rng, t: &str| {
        let mut i = rng.below(t.len() + 1);
        while !t.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    match rng.below(11) {
        // Replace the value of a `key = value` line.
        0 | 1 => {
            let i = rng.below(lines.len());
            let mut out: Vec<String> = lines.iter().map(|l| (*l).to_owned()).collect();
            if let Some((k, _)) = lines[i].split_once('=') {
                out[i] = format!("{k}= {}", rng.pick(dict));
            } else {
                out[i] = format!("{} = {}", rng.pick(dict), rng.pick(dict));
            }
            out.join("\n")
        }
        // Insert a new line: a key and a value, or a header.
        2 => {
            let i = rng.below(lines.len() + 1);
            let mut out: Vec<String> = lines.iter().map(|l| (*l).to_owned()).collect();
            let line = if rng.chance(30) {
                (*rng.pick(dict)).clone()
            } else {
                format!("{} = {}", rng.pick(dict), rng.pick(dict))
            };
            out.insert(i, line);
            out.join("\n")
        }
        // Delete, duplicate or swap lines.
        3 => {
            let mut out: Vec<&str> = lines.clone();
            let i = rng.below(out.len());
            match rng.below(3) {
                0 => {
                    out.remove(i);
                }
                1 => out.insert(i, lines[i]),
                _ => {
                    let j = rng.below(out.len());
                    out.swap(i, j);
                }
            }
            out.join("\n")
        }
        // Splice lines of another corpus file in.
        4 => {
            let other: Vec<&str> = rng.pick(corpus).split('\n').collect();
            let a = rng.below(other.len());
            let b = (a + 1 + rng.below(8)).min(other.len());
            let at = rng.below(lines.len() + 1);
            let mut out: Vec<&str> = lines[..at].to_vec();
            out.extend(&other[a..b]);
            out.extend(&lines[at..]);
            out.join("\n")
        }
        // A dictionary word anywhere.
        5 => {
            let i = boundary(rng, text);
            format!("{}{}{}", &text[..i], rng.pick(dict), &text[i..])
        }
        // Delete a range of bytes.
        6 => {
            let a = boundary(rng, text);
            let b = boundary(rng, &text[a..]) + a;
            let b = a + (b - a).min(64);
            let mut b = b;
            while !text.is_char_boundary(b) {
                b -= 1;
            }
            format!("{}{}", &text[..a], &text[b..])
        }
        // A character that matters to TOML.
        7 => {
            const CHARS: &[char] = &[
                '[', ']', '{', '}', '=', '"', '\'', '\n', ',', '.', '-', '+', '_', '#', '\\', '0',
                '9', 'e', 'µ', '\u{0}', '\u{feff}', '\r',
            ];
            let i = boundary(rng, text);
            let c = *rng.pick(CHARS);
            format!("{}{c}{}", &text[..i], &text[i..])
        }
        // Change a number in place.
        8 => {
            let digits: Vec<usize> = text
                .char_indices()
                .filter(|(_, c)| c.is_ascii_digit())
                .map(|(i, _)| i)
                .collect();
            if digits.is_empty() {
                return text.to_owned();
            }
            let i = *rng.pick(&digits);
            let num = [
                "0",
                "00",
                "9",
                "99999",
                "1e9",
                ".5",
                "-1",
                "00000000000000000000",
            ];
            format!("{}{}{}", &text[..i], rng.pick(&num), &text[i + 1..])
        }
        // Repeat a line many times (long arrays, many flows, many levels).
        9 => {
            let i = rng.below(lines.len());
            let n = 2 + rng.below(200);
            let mut out: Vec<&str> = lines[..i].to_vec();
            out.extend(std::iter::repeat_n(lines[i], n));
            out.extend(&lines[i..]);
            out.join("\n")
        }
        // Flip a byte to another ASCII character.
        _ => {
            let i = boundary(rng, text);
            let c = (b' ' + (rng.next() % 95) as u8) as char;
            let end = text[i..].chars().next().map_or(i, |c| i + c.len_utf8());
            format!("{}{c}{}", &text[..i], &text[end..])
        }
    }
}

/// The outcome of one input: `Ok` for an accepted input, or the error message.
type Outcome = Result<(), String>;

/// An error message with digits and quoted parts removed: inputs that reach a new kind of
/// message join the corpus.
fn outcome_class(o: &Outcome) -> String {
    match o {
        Ok(()) => "ok".to_owned(),
        Err(m) => {
            let m = m.split_once(": ").map_or(m.as_str(), |(_, r)| r);
            let mut class = String::new();
            let mut quoted = false;
            for c in m.chars() {
                match c {
                    '`' | '"' => quoted = !quoted,
                    _ if quoted || c.is_ascii_digit() => {}
                    _ => class.push(c),
                }
                if class.len() >= 60 {
                    break;
                }
            }
            class
        }
    }
}

/// What went wrong with one input.
struct Failure {
    what: String,
    saved: PathBuf,
}

/// Run `check` on the replayed inputs of `tests/fuzz/<name>/`, then on mutations of `corpus`
/// for the target's share of the budget; fail the test on any panic, slow input or memory
/// above the bound.
fn fuzz(name: &str, share: f64, corpus: Vec<String>, check: &dyn Fn(&str) -> Outcome) {
    fuzz_with(name, share, corpus, None, false, check);
}

/// A target-specific mutation: a new input made from a corpus entry, or `None` to fall back on
/// the text mutations.
type Mutator<'a> = &'a dyn Fn(&mut Rng, &str) -> Option<String>;

/// [`fuzz`] with a target-specific mutation used for half the inputs (`only_own`: for every
/// input, without text edits).
fn fuzz_with(
    name: &str,
    share: f64,
    corpus: Vec<String>,
    own: Option<Mutator<'_>>,
    only_own: bool,
    check: &dyn Fn(&str) -> Outcome,
) {
    let deadline = Instant::now() + budget(share);
    let mut rng = Rng(seed(name));
    let dict = dictionary(&corpus);
    let shipped = corpus.len();
    let mut corpus = corpus;
    let mut classes: HashSet<String> = HashSet::new();
    let mut failures: Vec<Failure> = Vec::new();
    let save_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuzz-failures");
    let mut replay: Vec<String> = Vec::new();
    if let Ok(entries) = std::fs::read_dir(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fuzz")
            .join(name),
    ) {
        let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        for p in paths {
            if let Ok(bytes) = std::fs::read(&p) {
                replay.push(String::from_utf8_lossy(&bytes).into_owned());
            }
        }
    }
    let replayed = replay.len();
    let mut iterations = 0u64;
    let mut slowest = Duration::ZERO;
    let mut accepted = 0u64;
    loop {
        let input = if let Some(r) = replay.pop() {
            r
        } else {
            if Instant::now() >= deadline && iterations >= replayed as u64 {
                break;
            }
            let mut text = (*rng.pick(&corpus)).clone();
            let mut edits = 1 + rng.below(4);
            if let Some(own) = own
                && (only_own || rng.chance(50))
                && let Some(t) = own(&mut rng, &text)
            {
                text = t;
                edits = if only_own { 0 } else { edits - 1 };
            }
            for _ in 0..edits {
                text = mutate_once(&mut rng, &text, &corpus, &dict);
                if text.len() > MAX_INPUT_BYTES {
                    let mut end = MAX_INPUT_BYTES;
                    while !text.is_char_boundary(end) {
                        end -= 1;
                    }
                    text.truncate(end);
                }
            }
            text
        };
        iterations += 1;
        let start = Instant::now();
        let result = catch_unwind(AssertUnwindSafe(|| check(&input)));
        let took = start.elapsed();
        slowest = slowest.max(took);
        let problem = match &result {
            Err(_) => Some("panicked".to_owned()),
            Ok(_) if took > MAX_INPUT_TIME => Some(format!("took {took:?}")),
            Ok(_) => peak_rss()
                .filter(|&p| p > MAX_PEAK_RSS)
                .map(|p| format!("peak memory {} MiB", p >> 20)),
        };
        if let Some(what) = problem {
            let _ = std::fs::create_dir_all(&save_dir);
            let saved = save_dir.join(format!("{name}-{}-{iterations}.txt", seed(name)));
            let _ = std::fs::write(&saved, &input);
            failures.push(Failure { what, saved });
            if failures.len() >= 10 || result.is_ok() {
                // A slow or memory-hungry input may not be the only one; stop anyway, the
                // next would be measured against the same peak.
                break;
            }
            continue;
        }
        if let Ok(outcome) = result {
            accepted += u64::from(outcome.is_ok());
            if classes.insert(outcome_class(&outcome)) {
                if corpus.len() >= MAX_CORPUS {
                    let i = shipped + rng.below(corpus.len() - shipped);
                    corpus.swap_remove(i);
                }
                corpus.push(input);
            }
        }
    }
    eprintln!(
        "fuzz {name}: {iterations} inputs ({replayed} replayed, {accepted} accepted), {} \
         outcome classes, corpus {}, slowest {slowest:?}, seed {}",
        classes.len(),
        corpus.len(),
        seed(name)
    );
    if !failures.is_empty() {
        let list: Vec<String> = failures
            .iter()
            .map(|f| format!("  {}: {}", f.what, f.saved.display()))
            .collect();
        panic!(
            "fuzz {name}: {} failing inputs:\n{}",
            failures.len(),
            list.join("\n")
        );
    }
}

/// A scenario file: everything `cclab check` and a study derive from a valid one, up to the
/// simulator's constructor.
fn check_scenario(text: &str) -> Outcome {
    let overrides = Overrides::default();
    let sc = parse(text, "fuzz.toml", &overrides).map_err(|e| e.to_string())?;
    let _ = sc.describe();
    let cfg = sc.to_sim_config();
    let _ = sc.run_plan(7, "fuzz");
    Simulation::new(cfg).map_err(|e| format!("simulator: {e}"))?;
    // The command-line overrides on top of a valid file.
    let _ = parse(
        text,
        "fuzz.toml",
        &Overrides {
            seed: Some(u64::MAX),
            duration: Some(Dur::from_millis(1)),
        },
    );
    Ok(())
}

#[test]
fn scenario_files() {
    let mut corpus = shipped();
    // Generated files near the resource bounds, for the text edits to start from.
    let mut rng = Rng(seed("scenario-generated"));
    corpus.extend((0..20).map(|_| generate_scenario(&mut rng)));
    fuzz("scenario", 0.35, corpus, &check_scenario);
}

/// Longest simulated duration of a generated scenario that [`check_generated`] runs.
const RUN_AT_MOST: Dur = Dur::from_millis(200);

/// A dumbbell scenario made to reach the bounds on what costs memory or time per packet: a
/// long and varied chain of elements (up to past [`MAX_ELEMENTS_PER_NODE`]), a queue discipline
/// with extreme sizes (fq_codel `flows`, `limit`, `quantum`, `memory_limit`), a rate schedule
/// with tiny periods or many samples (around
/// [`cclab_lab::scenario::rates::MAX_RATE_CHANGES`]). About half are short and
/// slow enough (at most [`RUN_AT_MOST`], 20 Mbit/s, three flows) for [`check_generated`] to
/// run them; the others last up to a day and are only checked.
fn generate_scenario(rng: &mut Rng) -> String {
    use std::fmt::Write as _;
    let short = rng.chance(50);
    let duration = if short {
        *rng.pick(&["20ms", "100ms", "200ms"])
    } else {
        *rng.pick(&["1s", "30s", "1000s", "86400s"])
    };
    let mut t = format!(
        "name = \"gen\"\nduration = \"{duration}\"\n[topology]\npreset = \"dumbbell\"\n\
         rate = \"{}\"\ndelay = \"{}\"\n",
        rng.pick(&["1Mbit", "10Mbit", "20Mbit"]),
        rng.pick(&["1ms", "10ms"]),
    );
    // The queue discipline of the bottleneck.
    match rng.below(4) {
        0 => {}
        1 => {
            let _ = writeln!(t, "buffer = \"{}\"", rng.pick(&["1p", "100p", "1bdp"]));
        }
        2 => {
            let mut keys = vec!["kind = \"fq_codel\"".to_owned()];
            let mut add = |rng: &mut Rng, key: &str, values: &[&str]| {
                if rng.chance(60) {
                    keys.push(format!("{key} = {}", rng.pick(values)));
                }
            };
            add(
                rng,
                "flows",
                &[
                    "0",
                    "1",
                    "2",
                    "1024",
                    "65535",
                    "65536",
                    "65537",
                    "1000000",
                    "4294967295",
                ],
            );
            add(rng, "limit", &["0", "1", "2", "10240", "4294967295"]);
            add(
                rng,
                "quantum",
                &[
                    "\"0B\"",
                    "\"1B\"",
                    "\"256B\"",
                    "\"1514B\"",
                    "\"1MiB\"",
                    "\"4GiB\"",
                ],
            );
            add(
                rng,
                "memory_limit",
                &["\"0B\"", "\"1B\"", "\"1500B\"", "\"32MiB\"", "\"1TiB\""],
            );
            add(rng, "drop_batch", &["0", "1", "64", "4294967295"]);
            let _ = writeln!(t, "qdisc = {{ {} }}", keys.join(", "));
        }
        _ => {
            let kind = rng.pick(&["codel", "pie", "red", "dualpi2", "fifo"]);
            let limit = rng.pick(&["1", "1000", "4294967295"]);
            let _ = writeln!(t, "qdisc = {{ kind = \"{kind}\", limit = {limit} }}");
        }
    }
    let _ = writeln!(
        t,
        "[[flows]]\ncontroller = \"{}\"\ncount = {}",
        rng.pick(&["cubic", "bbr3", "newreno"]),
        1 + rng.below(3)
    );
    // A rate schedule on the bottleneck.
    if rng.chance(50) {
        let period = *rng.pick(&["1ns", "2ns", "3ns", "1us", "10us", "1ms", "100ms"]);
        match rng.below(3) {
            0 => {
                let _ = writeln!(
                    t,
                    "[[links]]\nlink = \"bottleneck\"\nrate = \"square\"\nmean = \"10Mbit\"\n\
                     amplitude = \"{}\"\nperiod = \"{period}\"",
                    rng.pick(&["0Mbit", "5Mbit", "10Mbit"])
                );
            }
            1 => {
                let _ = writeln!(
                    t,
                    "[[links]]\nlink = \"bottleneck\"\nrate = \"sine\"\nmean = \"10Mbit\"\n\
                     amplitude = \"5Mbit\"\nperiod = \"{period}\"\nsamples = {}",
                    rng.pick(&["2", "32", "1000", "10000", "10001"])
                );
            }
            _ => {
                // `n` steps spread over a period of `p` ns (some at the same time: an error).
                let p = *rng.pick(&[2u64, 3, 1_000, 1_000_000, 100_000_000]);
                let n = 1 + rng.below(40) as u64;
                let steps: Vec<String> = (0..n)
                    .map(|i| {
                        format!(
                            "[\"{}ns\", \"{}\"]",
                            i * p / n,
                            rng.pick(&["0", "1Mbit", "10Mbit", "20Mbit"])
                        )
                    })
                    .collect();
                let _ = writeln!(
                    t,
                    "[[links]]\nlink = \"bottleneck\"\nrate = \"steps\"\nsteps = [{}]\n\
                     period = \"{p}ns\"",
                    steps.join(", ")
                );
            }
        }
    }
    // A chain of elements on each router: mostly short, sometimes at or past the bound.
    for node in ["left", "right"] {
        let n = match rng.below(10) {
            0..=4 => rng.below(4),
            5..=7 => rng.below(60),
            8 => MAX_ELEMENTS_PER_NODE - 1 + rng.below(3),
            _ => 1 + rng.below(2 * MAX_ELEMENTS_PER_NODE),
        };
        // Packets multiply along duplicators (the parser allows four in a scenario): mostly
        // one per chain, sometimes any number.
        let mut duplicated = false;
        let any = rng.chance(10);
        for _ in 0..n {
            let _ = writeln!(t, "[[elements]]\nnode = \"{node}\"");
            let kind = match rng.below(20) {
                0 => "kind = \"delay\"\ndelay = \"1ms\"",
                1 => "kind = \"jitter\"\nbase = \"1ms\"\nspread = \"2ms\"\nreorder = true",
                2 => "kind = \"loss\"\np = 0.01",
                3 if any || !duplicated => {
                    duplicated = true;
                    if rng.chance(50) {
                        "kind = \"duplicate\"\np = 0.05"
                    } else {
                        "kind = \"duplicate\"\np = 1.0"
                    }
                }
                4 => "kind = \"policer\"\nrate = \"5Mbit\"\nburst = \"15000B\"",
                5 => "kind = \"shaper\"\nrate = \"5Mbit\"\nburst = \"3000B\"\nlimit = \"30000B\"",
                6 => "kind = \"ack_thin\"\nk = 4",
                7 => "kind = \"ack_aggregate\"\nperiod = \"1ms\"",
                8 => "kind = \"outage\"\nintervals = [[\"10ms\", \"5ms\"]]\nmode = \"hold\"",
                9 => "kind = \"pass\"\npackets = \"data\"",
                10 => "kind = \"pass\"\npackets = \"acks\"\nflows = [0]",
                _ => "kind = \"pass\"",
            };
            let _ = writeln!(t, "{kind}");
        }
    }
    t
}

/// A generated scenario: as [`check_scenario`], and a short one ([`RUN_AT_MOST`]) is run.
fn check_generated(text: &str) -> Outcome {
    let sc = parse(text, "gen.toml", &Overrides::default()).map_err(|e| e.to_string())?;
    let sim = Simulation::new(sc.to_sim_config()).map_err(|e| format!("simulator: {e}"))?;
    if sc.duration <= RUN_AT_MOST {
        let _ = sim.run();
    }
    Ok(())
}

/// Generated scenarios ([`generate_scenario`]) without text edits: the bounds on element
/// chains, queue sizes and rate schedules, and the short ones run. A stack overflow or a failed
/// allocation aborts the process, which fails the test too.
#[test]
fn generated_scenarios() {
    let generate = |rng: &mut Rng, _: &str| Some(generate_scenario(rng));
    let mut rng = Rng(seed("generated"));
    let corpus = vec![generate_scenario(&mut rng)];
    fuzz_with(
        "generated",
        0.15,
        corpus,
        Some(&generate),
        true,
        &check_generated,
    );
}

/// A study file: its configurations, run ids and description.
fn check_study(text: &str) -> Outcome {
    let st = study::parse(text, "fuzz.toml", &scenarios_dir()).map_err(|e| e.to_string())?;
    let runs = st.runs();
    let _ = st.describe();
    for c in 0..st.config_count() {
        let _ = st.baseline_of(c);
    }
    let _ = run::select(runs, Some((1, 2))).map_err(|e| e.to_string())?;
    Ok(())
}

#[test]
fn study_files() {
    fuzz("study", 0.25, shipped(), &check_study);
}

/// A small study whose run records are the record target's corpus.
const RECORD_STUDY: &str = r#"
name = "fuzz"
[base]
name = "fuzz"
[base.test]
name = "tcp_upload"
length = "1s"
delay = "0.2s"
[base.tcp]
controller = "cubic"
[base.topology]
preset = "access"
rate = "5Mbit"
delay = "5ms"
[grid]
test.name = ["tcp_upload", "rrul_be"]
[analysis]
png = false
plots = ["box", "timeseries"]
"#;

/// One structured edit of a JSON value: a node anywhere is removed, emptied, duplicated or
/// replaced by an edge-case value of another or the same type.
fn mutate_json(rng: &mut Rng, v: &mut serde_json::Value) {
    use serde_json::Value;
    // A random path down the tree, as a JSON pointer.
    let mut pointer = String::new();
    let mut here: &Value = v;
    for _ in 0..rng.below(8) {
        let (token, next) = match here {
            Value::Array(a) if !a.is_empty() => {
                let i = rng.below(a.len());
                (i.to_string(), &a[i])
            }
            Value::Object(o) if !o.is_empty() => {
                let (k, next) = o.iter().nth(rng.below(o.len())).expect("an entry");
                (k.replace('~', "~0").replace('/', "~1"), next)
            }
            _ => break,
        };
        pointer.push('/');
        pointer.push_str(&token);
        here = next;
    }
    let Some(node) = v.pointer_mut(&pointer) else {
        return;
    };
    let edge: [Value; 12] = [
        Value::Null,
        Value::from(0),
        Value::from(-1),
        Value::from(u64::MAX),
        Value::from(1e308),
        Value::from(-1e308),
        Value::from(0.5),
        Value::from(""),
        Value::from("x"),
        Value::Array(Vec::new()),
        Value::Object(serde_json::Map::new()),
        Value::Bool(true),
    ];
    match (rng.below(4), &mut *node) {
        (0, Value::Array(a)) if !a.is_empty() => {
            let i = rng.below(a.len());
            a.remove(i);
        }
        (1, Value::Array(a)) if !a.is_empty() => {
            let i = rng.below(a.len());
            let item = a[i].clone();
            a.insert(i, item);
        }
        (2, Value::Array(a)) => a.truncate(rng.below(a.len() + 1)),
        (0, Value::Object(o)) if !o.is_empty() => {
            let i = rng.below(o.len());
            let key = o.keys().nth(i).cloned().unwrap_or_default();
            o.remove(&key);
        }
        _ => *node = rng.pick(&edge).clone(),
    }
}

/// The JSON body of a stored record (after the header line).
fn corpus_text(bytes: &[u8]) -> Option<&str> {
    let nl = bytes.iter().position(|&b| b == b'\n')?;
    std::str::from_utf8(&bytes[nl + 1..]).ok()
}

/// Header + JSON with a correct checksum, as the store writes it.
fn seal(body: &str) -> String {
    let sum: String = Sha256::digest(body.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!(
        "{} {} sha256={sum}\n{body}",
        store::HEADER,
        cclab_lab::record::RECORD_FORMAT
    )
}

/// Run records: raw byte edits (the reader must say what is wrong) and JSON edits behind a
/// valid checksum (the reader, the Flent export and the analysis must cope).
#[test]
fn run_records() {
    let dir = std::env::temp_dir().join(format!("cclab-fuzz-records-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let st = study::parse(RECORD_STUDY, "fuzz.toml", Path::new(".")).expect("record study");
    let st_store = Store::open(dir.join("fuzz")).expect("store");
    run::execute(
        &st,
        &st_store,
        &Options {
            jobs: Some(1),
            ..Options::default()
        },
        &|_| {},
    )
    .expect("record study runs");
    let runs = st.runs();
    let originals: Vec<Vec<u8>> = runs
        .iter()
        .map(|r| std::fs::read(st_store.run_path(&r.id)).expect("record"))
        .collect();
    let corpus: Vec<String> = originals
        .iter()
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .collect();
    // JSON edits of a record, sealed with a valid checksum: what only cclab itself (or
    // someone editing a store by hand) can write.
    let json_edit = |rng: &mut Rng, text: &str| -> Option<String> {
        // The corpus entry if it is still JSON behind a header, else an original.
        let body = text
            .split_once('\n')
            .map(|(_, b)| b)
            .filter(|b| b.starts_with('{'));
        let mut v: serde_json::Value = match body.and_then(|b| serde_json::from_str(b).ok()) {
            Some(v) => v,
            None => {
                let original: &Vec<u8> = rng.pick(&originals);
                serde_json::from_str(corpus_text(original)?).ok()?
            }
        };
        for _ in 0..1 + rng.below(3) {
            mutate_json(rng, &mut v);
        }
        Some(seal(&serde_json::to_string(&v).ok()?))
    };
    let analyses = std::cell::Cell::new(0u32);
    let check = |text: &str| -> Outcome {
        // The run the record claims to be, if the study has it.
        let claimed = text
            .split_once('\n')
            .and_then(|(_, body)| serde_json::from_str::<serde_json::Value>(body).ok())
            .and_then(|v| v.get("id").and_then(|i| i.as_str()).map(str::to_owned));
        let which = claimed
            .and_then(|id| runs.iter().position(|r| r.id == id))
            .unwrap_or(0);
        let id = &runs[which].id;
        let rec = store::decode(text.as_bytes(), id)?;
        let _ = flent::to_flent_json(&rec, 1.7e9);
        let _ = flent::flent_file_name(&rec);
        // The analysis reads every record of the study; it writes plots, so only the first
        // few hundred accepted records go through it.
        if analyses.get() < 300 {
            analyses.set(analyses.get() + 1);
            std::fs::write(st_store.run_path(id), text).map_err(|e| e.to_string())?;
            let r = analysis::analyse(&st, &st_store).map(|_| ());
            std::fs::write(st_store.run_path(id), &originals[which]).map_err(|e| e.to_string())?;
            r.map_err(|e| e.to_string())?;
        }
        Ok(())
    };
    fuzz_with("record", 0.2, corpus, Some(&json_edit), false, &check);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The quantity parsers behind every rate, duration, size, buffer and probability key (and
/// `--duration`).
fn check_units(text: &str) -> Outcome {
    let s = text.lines().next().unwrap_or_default();
    let mut accepted = false;
    accepted |= units::parse_rate(s).is_ok();
    accepted |= units::parse_duration(s).is_ok();
    accepted |= units::parse_size(s).is_ok();
    accepted |= units::parse_buffer(s).is_ok();
    accepted |= units::parse_probability(s).is_ok();
    if let Ok(b) = units::parse_buffer(s) {
        let _ = b.resolve(u64::MAX, Dur::MAX);
        let _ = b.resolve(1, Dur::ZERO);
        let _ = b.to_string();
    }
    if let Ok(d) = units::parse_duration(s) {
        let _ = units::fmt_dur(d);
    }
    if let Ok(r) = units::parse_rate(s) {
        let _ = units::fmt_rate(r);
    }
    if accepted {
        Ok(())
    } else {
        Err("rejected by every parser".to_owned())
    }
}

#[test]
fn quantities() {
    let corpus: Vec<String> = [
        "100Mbit",
        "1.5 Gbit/s",
        "20ms",
        "1e-3s",
        "250µs",
        "2min",
        "64KiB",
        "10MB",
        "1.5kB",
        "333p",
        "1bdp",
        "0.5BDP",
        "50ms",
        "0.1%",
        "0.25",
        "1_000bit",
        "-1",
        "1e308",
        "",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    fuzz("units", 0.05, corpus, &check_units);
}
