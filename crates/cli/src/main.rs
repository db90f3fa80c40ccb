//! The `cclab` command: argument parsing and terminal output only.
//!
//! Contract: every subcommand delegates to `cclab-lab` (scenario files, outputs) and `cclab-sim`
//! (the run). Bad input never panics: errors are printed as `error: …` on stderr (scenario errors
//! name file, line, column and field) and the process exits with status 1; usage errors exit
//! with status 2 (clap's convention). Files are written before anything is printed on stdout,
//! and a standard output closed by its reader (`cclab … | head`) ends the command quietly with
//! status 0: the results are on disk, nobody is left to read the rest of the table. A panic
//! would be a bug: it is caught, reported as an internal error and exits with status 3
//! ([`EXIT_INTERNAL`]), never with Rust's 101.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use cclab_lab::catalog::Target;
use cclab_lab::scenario::{Overrides, Scenario};
use cclab_lab::{output, units};
use cclab_sim::{Dur, Simulation};
use clap::{Parser, Subcommand, ValueEnum};

/// `eprintln!` that ignores a closed standard error (`cclab … 2>&1 | head`): messages are a
/// courtesy, and `eprintln!` would panic on the broken pipe.
macro_rules! note {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// `eprint!` that ignores a closed standard error, as `note!` does.
macro_rules! note_raw {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stderr(), $($arg)*);
    }};
}

mod study;

const EXAMPLES: &str = "\
Examples:
  cclab demo                                   run the built-in demo study, write ./cclab-out/demo/
  cclab run scenarios/cubic_single.toml        run a scenario, write ./cclab-out/run-cubic_single/
  cclab run scenarios/two_cubic.toml --seed 7 --duration 20s --out /tmp/two
  cclab check scenarios/rtt_unfairness.toml    validate a scenario and show what it resolves to
  cclab list controllers                       names accepted for `controller` in scenarios
  cclab list qdiscs --params                   every queue discipline with its keys, defaults, sources

Output files: summary.json (summaries), flows.csv, queues.csv, probes.csv, cc_stats.csv (time series, long format);
trace.csv (per-ACK sender trace) only when a flow sets `trace = true`; links.csv (capacity and
delay over time) only when a monitored link's rate or delay changes.";

/// cclab: a congestion-control laboratory.
///
/// Runs deterministic packet-level simulations of Linux-like TCP flows described by TOML scenario
/// files, prints a summary table and writes the results as JSON and CSV.
#[derive(Debug, Parser)]
#[command(name = "cclab", version, after_help = EXAMPLES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a scenario file, print the summary table and write the results.
    #[command(
        after_help = "Example:\n  cclab run scenarios/cubic_single.toml --duration 10s --out out/cubic"
    )]
    Run {
        /// The scenario file (TOML).
        scenario: PathBuf,
        /// Directory for summary.json, flows.csv, queues.csv, probes.csv, cc_stats.csv and, only
        /// when a flow sets `trace = true`, trace.csv [default: ./cclab-out/run-<scenario name>].
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Use this seed instead of the scenario's.
        #[arg(long, value_name = "N")]
        seed: Option<u64>,
        /// Simulate this long instead of the scenario's duration: seconds (`20`) or with a unit
        /// (`1.5s`, `500ms`, `2min`).
        #[arg(long, value_name = "S", value_parser = parse_duration_arg)]
        duration: Option<Dur>,
    },
    /// Run the built-in demo study and write its report.
    ///
    /// The demo (scenarios/demo_study.toml, embedded in the binary): Flent's tcp_upload and
    /// rrul tests with CUBIC and BBRv3 at both ends on a 20 Mbit/s access line with a deep
    /// buffer, 5 repetitions of 20 s; statistics, plots, Flent files and report.html in
    /// <OUT>/demo/.
    Demo {
        /// Parent directory of the demo's output directory.
        #[arg(long, value_name = "DIR", default_value = "cclab-out")]
        out: PathBuf,
        /// Worker threads, at least 1 [default: all cores]; never more than the runs to do.
        #[arg(short = 'j', long, value_name = "N", value_parser = parse_jobs)]
        jobs: Option<usize>,
    },
    /// List the names a scenario file may use.
    #[command(
        after_help = "Examples:\n  cclab list slow-starts\n  cclab list qdiscs --params\n  \
        cclab list controllers --params --markdown"
    )]
    List {
        /// What to list.
        #[arg(value_enum)]
        what: ListWhat,
        /// Print every entry's parameters: key, type, default, range, meaning and source.
        #[arg(long)]
        params: bool,
        /// With --params: Markdown tables (the README's key tables are this output).
        #[arg(long, requires = "params")]
        markdown: bool,
    },
    /// Measure simulator speed on the fixed benchmark scenarios.
    ///
    /// (a) 8 NewReno flows, 100 Mbit/s, 40 ms RTT, 333-packet FIFO, 60 s;
    /// (b) 1 CUBIC flow, 1 Gbit/s, 40 ms RTT, 3333-packet FIFO, 30 s; (c) (a) with 8 BBRv3 flows;
    /// (d) (b) with one BBRv3 flow on an fq + TSO host; (e) (a) with 8 CUBIC flows; (f) (e)
    /// through FQ-CoDel; (g) (e) through DualPI2.
    /// Prints delivered data packets and events per CPU-second, CPU ns per packet and peak
    /// memory. Build with --release for meaningful numbers.
    #[command(after_help = "Example:\n  cargo run --release -- bench --repeat 3")]
    Bench {
        /// Only this scenario (`a` … `g`).
        #[arg(long)]
        only: Option<String>,
        /// Run each scenario at least this many times (and for at least one CPU-second); report
        /// the mean CPU time per run.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
        repeat: u32,
    },
    /// Run a study: every configuration of its grid, repeated; then statistics, plots, report.
    ///
    /// Results go to <OUT>/<study name>/: runs/<id>.json (one per run, checksummed),
    /// manifest.json, and after the analysis stats.csv, stats.json, runs.csv, plots/, flent/
    /// and report.html. Re-running skips valid results and redoes missing or corrupt ones.
    #[command(
        after_help = "Examples:\n  cclab study scenarios/aqm_study.toml -j 2\n  \
        cclab study scenarios/bbr_tas_study.toml --shard 3/10 --out /scratch/tas\n  \
        cclab study scenarios/abba_*_study.toml -j 2\n  \
        cclab merge --into out/bbr_tas out/shard*/bbr_tas"
    )]
    Study {
        /// The study file (TOML); several run one after the other, each into its own
        /// directory (`cclab study scenarios/abba_*_study.toml`).
        #[arg(required = true, num_args = 1..)]
        study: Vec<PathBuf>,
        /// Parent directory of the study's output directory.
        #[arg(long, value_name = "DIR", default_value = "cclab-out")]
        out: PathBuf,
        /// Worker threads, at least 1 [default: all cores]; never more than the runs to do.
        #[arg(short = 'j', long, value_name = "N", value_parser = parse_jobs)]
        jobs: Option<usize>,
        /// Run only shard I of N (1-based): runs whose index is I-1 modulo N.
        #[arg(long, value_name = "I/N", value_parser = parse_shard)]
        shard: Option<(usize, usize)>,
        /// Show the design and the state of the store, run nothing.
        #[arg(long)]
        dry_run: bool,
        /// Stop after this many runs of each study (the rest stays missing; re-run to resume).
        #[arg(long, value_name = "K", value_parser = parse_positive)]
        max_runs: Option<usize>,
        /// No progress bar.
        #[arg(long)]
        quiet: bool,
    },
    /// Copy the valid runs of shard stores into one store (then `cclab study` analyses it).
    #[command(
        after_help = "Example:\n  cclab merge --into cclab-out/bbr_tas shard1/bbr_tas shard2/bbr_tas"
    )]
    Merge {
        /// The study directory to fill.
        #[arg(long, value_name = "DIR")]
        into: PathBuf,
        /// Study directories of the shards.
        #[arg(required = true)]
        shards: Vec<PathBuf>,
    },
    /// Run a scenario in real time with the kernel's TCP instead of the simulator's.
    ///
    /// Every host of the scenario becomes a network namespace attached to cclab by a TUN
    /// device; cclab does the queueing, rate, delay, loss, jitter and AQM itself with the
    /// simulator's element code. Flows are kernel TCP connections with the kernel's controller
    /// of the same name (cubic, reno, bbr1 → bbr, ...), probes are `ping`. Needs root (or
    /// CAP_NET_ADMIN and CAP_SYS_ADMIN) and /dev/net/tun; leaves nothing behind, even when
    /// killed. Writes the files of `cclab run` plus emulator.json (the forwarder's lateness, CPU
    /// use and own drops, the kernel's settings, the commands' output).
    #[command(after_help = "Examples:
  sudo cclab emulate scenarios/cubic_single.toml --duration 10s
          sudo cclab emulate scenarios/two_cubic.toml --exec 'r0@0s:iperf3 -s -1' \
              --exec 's0@1s:iperf3 -c {r0} -t 5'")]
    Emulate {
        /// The scenario file (TOML).
        scenario: PathBuf,
        /// Output directory [default: ./cclab-out/emulate-<scenario name>].
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Run this long instead of the scenario's duration (`20`, `1.5s`, `2min`).
        #[arg(long, value_name = "S", value_parser = parse_duration_arg)]
        duration: Option<Dur>,
        /// Use this seed (for the elements' random streams) instead of the scenario's.
        #[arg(long, value_name = "N")]
        seed: Option<u64>,
        /// Run a command on a host: `HOST@START:COMMAND`, a shell line run with `sh -c` in the
        /// output directory, as a scenario's `[[commands]]` (`{NAME}` in the command is the
        /// address of host NAME); repeatable. `cclab check` lists the hosts.
        #[arg(long = "exec", value_name = "HOST@START:CMD", value_parser = parse_exec)]
        exec: Vec<cclab_emu::HostCommand>,
        /// Spin instead of sleeping between packets: lower lateness, one core busy.
        #[arg(long)]
        busy_poll: bool,
        /// Run even above the rate the emulator is known to hold.
        #[arg(long)]
        force: bool,
    },
    /// Run the reference scenarios with the kernel's TCP (emulated) and the simulator, side by
    /// side.
    ///
    /// One flow at 20 and 50 Mbit/s with a 1-BDP buffer (CUBIC, NewReno/reno, BBRv1/bbr), two
    /// flows sharing, 1 % random loss, an 8-BDP buffer, FQ-CoDel; 30 s each (about 8 min), or
    /// with --quick three of 10 s. Prints and writes validation.md and validation.json: goodput,
    /// srtt, queue delay, retransmissions, cwnd, CUBIC's reduction period, BBR's ProbeRTT, data
    /// segments per ACK, slow-start exit, with ratios, targets (10 % / 15 %) and the
    /// emulator's timing. Needs what `cclab emulate` needs.
    #[command(after_help = "Example:\n  sudo cclab validate --quick")]
    Validate {
        /// Three short cases instead of all.
        #[arg(long)]
        quick: bool,
        /// Runs per case each way; the figures compared are the medians [default: 1 with
        /// --quick, else 3].
        #[arg(long, value_name = "N", value_parser = parse_positive)]
        reps: Option<usize>,
        /// Output directory.
        #[arg(long, value_name = "DIR", default_value = "cclab-out/validate")]
        out: PathBuf,
        /// The simulated hosts' timing model: `emulated` (the emulator's own timing, which the
        /// kernel's packets go through, as measured on an idle machine: a wake-up latency and
        /// stalls of up to a scheduler tick), `measured` (the `emulated` model with the packet
        /// latency's median and the stall rate that give the p50 and p99 lateness the emulator
        /// measured in the case's kernel runs), `linux` (a physical host) or `ideal`.
        #[arg(long, value_name = "MODEL", default_value = "emulated",
              value_parser = ["emulated", "measured", "linux", "ideal"])]
        sim_timing: String,
    },
    /// Check a scenario file without running it.
    ///
    /// Prints what the scenario resolves to: base RTT of every flow, BDP and buffer in bytes.
    #[command(after_help = "Example:\n  cclab check scenarios/demo.toml")]
    Check {
        /// The scenario file (TOML).
        scenario: PathBuf,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum ListWhat {
    /// Congestion controllers (`controller = …`).
    Controllers,
    /// Topology presets (`topology.preset = …`).
    Presets,
    /// Network elements on a node's forwarding path (`[[elements]] kind = …`).
    Elements,
    /// Rates that change over time on a link (`[[links]] rate = …`).
    Rates,
    /// UDP sources without congestion control (`[[udp]] kind = …`).
    Udp,
    /// Slow-start variants (`slow_start = …`).
    SlowStarts,
    /// Workloads of a flow (`requests = …` and its keys in `[[flows]]`).
    Workloads,
    /// Flent-equivalent tests (`test.name = …`).
    Tests,
    /// Study metrics (`analysis.metrics = […]`), with their definitions.
    Metrics,
    /// Bottleneck queue disciplines (`topology.qdisc = …`; access: also `up_qdisc`,
    /// `down_qdisc`): `fifo` (the drop-tail `buffer`) and the AQMs.
    Qdiscs,
    /// ECN modes of a flow (`ecn = …` in `[[flows]]` or `[tcp]`).
    Ecn,
    /// Named paths (`topology.profile = …` of the dumbbell): rate, RTT and buffer.
    Profiles,
    /// TCP stacks of a flow (`stack = …`): Linux or ns-3, with the keys of their rules.
    Stacks,
}

fn parse_shard(s: &str) -> Result<(usize, usize), String> {
    let err = || format!("`{s}`: expected I/N with 1 ≤ I ≤ N, e.g. 2/8");
    let (i, n) = s.split_once('/').ok_or_else(err)?;
    let i: usize = i.trim().parse().map_err(|_| err())?;
    let n: usize = n.trim().parse().map_err(|_| err())?;
    if n == 0 || i == 0 || i > n {
        return Err(err());
    }
    Ok((i, n))
}

fn parse_jobs(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(0) => Err("must be at least 1 (leave -j out to use every core)".to_owned()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("`{s}`: expected a number of threads, e.g. 4")),
    }
}

/// A count of at least 1.
fn parse_positive(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(0) => Err("must be at least 1".to_owned()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("`{s}` is not a whole number")),
    }
}

fn parse_duration_arg(s: &str) -> Result<Dur, String> {
    let d = units::parse_duration(s).map_err(|e| e.to_string())?;
    if d == Dur::ZERO {
        return Err("the duration must be positive".to_owned());
    }
    Ok(d)
}

/// Standard output was closed by its reader: a normal end of the command, not an error.
#[derive(Debug)]
struct StdoutClosed;

impl std::fmt::Display for StdoutClosed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("standard output was closed")
    }
}

impl std::error::Error for StdoutClosed {}

/// Print `text` on stdout (instead of `print!`, which panics on a closed pipe). A closed pipe
/// becomes [`StdoutClosed`], which `main` turns into a quiet exit with status 0.
pub(crate) fn emit(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(StdoutClosed.into()),
        Err(e) => Err(anyhow::Error::new(e).context("cannot write to standard output")),
    }
}

/// Exit status of an internal error (a panic: a bug in cclab, not in the input).
const EXIT_INTERNAL: u8 = 3;

fn main() -> ExitCode {
    let cli = Cli::parse();
    // The default hook has already printed the panic's message and place.
    match std::panic::catch_unwind(move || run(cli.command)) {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(e)) if e.is::<StdoutClosed>() => ExitCode::SUCCESS,
        Ok(Err(e)) => {
            note!("error: {}", error_chain(&e));
            ExitCode::FAILURE
        }
        Err(_) => {
            note!(
                "error: internal error: this is a bug in cclab, not in the input; please report \
                 it with the command line and the files it read"
            );
            ExitCode::from(EXIT_INTERNAL)
        }
    }
}

/// `e` and its causes joined by `: ` (anyhow's `{:#}`), leaving out a cause whose text the
/// message before it already ends with: an error that quotes its source (`PATH: No space left
/// on device`) and also returns it as its source would otherwise say it twice.
fn error_chain(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        let c = cause.to_string();
        if text.is_empty() {
            text = c;
        } else if !text.ends_with(&c) {
            text.push_str(": ");
            text.push_str(&c);
        }
    }
    text
}

fn run(command: Command) -> Result<()> {
    match command {
        Command::Run {
            scenario,
            out,
            seed,
            duration,
        } => {
            let (sc, _) = cclab_lab::load_with(&scenario, &Overrides { seed, duration })?;
            // `run-` keeps a scenario's outputs apart from a study of the same name (the
            // demo scenario and the demo study are both `demo`).
            let out =
                out.unwrap_or_else(|| Path::new("cclab-out").join(format!("run-{}", sc.name)));
            simulate_and_report(&sc, &out)
        }
        Command::Demo { out, jobs } => {
            let st = cclab_lab::demo_study()?;
            study::run_loaded(
                &st,
                Path::new("scenarios/demo_study.toml"),
                &out,
                jobs,
                None,
                None,
                false,
            )
        }
        Command::List {
            what,
            params,
            markdown,
        } => {
            let target = match what {
                ListWhat::Controllers => Target::Controllers,
                ListWhat::Presets => Target::Presets,
                ListWhat::Elements => Target::Elements,
                ListWhat::Rates => Target::Rates,
                ListWhat::Udp => Target::Udp,
                ListWhat::SlowStarts => Target::SlowStarts,
                ListWhat::Workloads => Target::Workloads,
                ListWhat::Tests => Target::Tests,
                ListWhat::Qdiscs => Target::Qdiscs,
                ListWhat::Ecn => Target::Ecn,
                ListWhat::Metrics => Target::Metrics,
                ListWhat::Profiles => Target::Profiles,
                ListWhat::Stacks => Target::Stacks,
            };
            emit(&cclab_lab::catalog::render(target, params, markdown))
        }
        Command::Bench { only, repeat } => {
            let ids: Vec<&str> = cclab_lab::bench::scenarios().iter().map(|s| s.id).collect();
            if let Some(o) = &only
                && !ids.contains(&o.as_str())
            {
                anyhow::bail!(
                    "unknown benchmark `{o}`, expected one of: {}",
                    ids.join(", ")
                );
            }
            if cfg!(debug_assertions) {
                note!("warning: this is a debug build; use `cargo run --release -- bench`");
            }
            let results = cclab_lab::bench::run(only.as_deref(), repeat);
            emit(&cclab_lab::bench::render(&results))
        }
        Command::Study {
            study,
            out,
            jobs,
            shard,
            dry_run,
            max_runs,
            quiet,
        } => study::run_study(&study, &out, jobs, shard, dry_run, max_runs, quiet),
        Command::Merge { into, shards } => study::merge(&into, &shards),
        Command::Emulate {
            scenario,
            out,
            duration,
            seed,
            exec,
            busy_poll,
            force,
        } => {
            let (sc, _) = cclab_lab::load_with(&scenario, &Overrides { seed, duration })?;
            let out =
                out.unwrap_or_else(|| Path::new("cclab-out").join(format!("emulate-{}", sc.name)));
            let mut commands = sc.commands.clone();
            commands.extend(exec);
            emulate_and_report(&sc, &out, commands, busy_poll, force)
        }
        Command::Validate {
            quick,
            reps,
            out,
            sim_timing,
        } => {
            use cclab_lab::validate::SimTiming;
            use cclab_sim::host::timing::HostTiming;
            let timing = match sim_timing.as_str() {
                "measured" => SimTiming::Measured,
                "emulated" => SimTiming::Model(Some(HostTiming::emulated())),
                "linux" => SimTiming::Model(Some(HostTiming::linux())),
                _ => SimTiming::Model(None),
            };
            let reps = reps.unwrap_or(if quick { 1 } else { 3 });
            validate(quick, reps, (&sim_timing, timing), &out)
        }
        Command::Check { scenario } => {
            let (sc, _) = cclab_lab::load(&scenario)?;
            emit(&format!(
                "{}ok: {} is a valid scenario\n",
                sc.describe(),
                scenario.display()
            ))
        }
    }
}

/// "1 flow", "3 flows".
fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

fn simulate_and_report(sc: &Scenario, out: &Path) -> Result<()> {
    // Counted in the simulator's input: a Flent test's flows and probes are made by its preset.
    let cfg = sc.to_sim_config();
    note!(
        "running `{}`: {}, {}, {} simulated, seed {}",
        sc.name,
        count(cfg.flows.len(), "flow"),
        count(cfg.probes.len(), "probe"),
        units::fmt_dur(sc.duration),
        sc.seed
    );
    output::check_writable(out)
        .with_context(|| format!("cannot write the results to {}", out.display()))?;
    let sim = Simulation::new(cfg)
        .with_context(|| format!("{}: the simulator rejected the scenario", sc.origin))?;
    let results = sim.run();
    let written = output::write_output_set(out, &sc.name, &results, &[], &[])
        .with_context(|| format!("cannot write the results to {}", out.display()))?;
    note!("wrote {} files to {}", written.files.len(), out.display());
    note_kept(&written);
    emit(&output::render_table(&results))
}

/// Say which files of an output's name cclab left in the directory without having written them.
fn note_kept(written: &output::Written) {
    for k in &written.kept {
        note!(
            "note: {} is not this run's: cclab did not write it there, and leaves it",
            k.display()
        );
    }
}

fn validate(
    quick: bool,
    reps: usize,
    (timing_name, timing): (&str, cclab_lab::validate::SimTiming),
    out: &Path,
) -> Result<()> {
    use cclab_lab::validate;
    output::check_writable(out)
        .with_context(|| format!("cannot write the results to {}", out.display()))?;
    cclab_emu::ns::check_privileges()?;
    // Ctrl-C (SIGINT) or SIGTERM ends the kernel's run under way; the finished cases are kept.
    let stop = stop_on_ctrl_c()?;
    let cases = validate::cases(quick);
    let mut results = Vec::new();
    // "Cases: 0 of N" at once, so that a previous run's files never pass for this one's.
    write_validation(out, timing_name, &results, cases.len())?;
    for (i, c) in cases.iter().enumerate() {
        note!(
            "[{}/{}] {}: {} ({} × {} in real time)",
            i + 1,
            cases.len(),
            c.name,
            c.description,
            reps,
            units::fmt_dur(c.cfg.duration)
        );
        match validate::run_case(c, reps, timing, &stop) {
            Ok(r) => {
                for w in &r.warnings {
                    note!("warning: {}: {w}", c.name);
                }
                results.push(r);
            }
            Err(e) => {
                if !results.is_empty() {
                    note!(
                        "stopped at {}; {} {} in {}",
                        c.name,
                        count(results.len(), "finished case"),
                        if results.len() == 1 { "is" } else { "are" },
                        out.display()
                    );
                }
                return Err(anyhow::Error::msg(e));
            }
        }
        // Written after every case, so that a failure or an interruption keeps what is done.
        write_validation(out, timing_name, &results, cases.len())?;
    }
    let md = validation_markdown(timing_name, &results, cases.len());
    note!(
        "wrote {} and {}",
        out.join("validation.md").display(),
        out.join("validation.json").display()
    );
    emit(&md)
}

/// `validation.md`'s text: the timing model, how many of the `total` cases are done, the
/// tables.
fn validation_markdown(
    timing_name: &str,
    results: &[cclab_lab::validate::CaseResult],
    total: usize,
) -> String {
    format!(
        "The simulated hosts' timing model: `{timing_name}` (`--sim-timing`). Cases: {} of \
         {total}.\n\n{}",
        results.len(),
        cclab_lab::validate::render(results)
    )
}

/// Write `validation.md` and `validation.json` of the cases done so far into `out`.
fn write_validation(
    out: &Path,
    timing_name: &str,
    results: &[cclab_lab::validate::CaseResult],
    total: usize,
) -> Result<()> {
    let md = validation_markdown(timing_name, results, total);
    let md_path = out.join("validation.md");
    output::write_atomic(&md_path, &|w| w.write_all(md.as_bytes()))
        .with_context(|| format!("cannot write {}", md_path.display()))?;
    let json_path = out.join("validation.json");
    output::write_atomic(&json_path, &|w| {
        serde_json::to_writer_pretty(&mut *w, results)?;
        writeln!(w)
    })
    .with_context(|| format!("cannot write {}", json_path.display()))
}

/// A flag that Ctrl-C (SIGINT) or SIGTERM sets, for an emulation to end early.
fn stop_on_ctrl_c() -> Result<std::sync::Arc<std::sync::atomic::AtomicBool>> {
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = std::sync::Arc::clone(&stop);
    ctrlc::set_handler(move || flag.store(true, std::sync::atomic::Ordering::Relaxed))
        .context("cannot handle Ctrl-C")?;
    Ok(stop)
}

/// `HOST@START:COMMAND` of `cclab emulate --exec`.
fn parse_exec(s: &str) -> Result<cclab_emu::HostCommand, String> {
    let bad = || format!("`{s}` is not HOST@START:COMMAND (e.g. `r0@1s:iperf3 -s`)");
    let (host, rest) = s.split_once('@').ok_or_else(bad)?;
    let (start, cmd) = rest.split_once(':').ok_or_else(bad)?;
    let start = parse_duration_arg(start).or_else(|e| {
        if start.trim() == "0" || start.trim() == "0s" {
            Ok(Dur::ZERO)
        } else {
            Err(e)
        }
    })?;
    if host.is_empty() || cmd.trim().is_empty() {
        return Err(bad());
    }
    // A shell line, as a scenario's `[[commands]]` `run`.
    Ok(cclab_emu::HostCommand {
        host: host.to_owned(),
        start,
        argv: vec!["sh".into(), "-c".into(), cmd.to_owned()],
    })
}

fn emulate_and_report(
    sc: &Scenario,
    out: &Path,
    commands: Vec<cclab_emu::HostCommand>,
    busy_poll: bool,
    force: bool,
) -> Result<()> {
    let cfg = sc.to_sim_config();
    note!(
        "emulating `{}` in real time: {}, {}, {}",
        sc.name,
        count(cfg.flows.len(), "flow"),
        count(cfg.probes.len(), "probe"),
        units::fmt_dur(sc.duration),
    );
    output::check_writable(out)
        .with_context(|| format!("cannot write the results to {}", out.display()))?;
    // Ctrl-C (SIGINT) or SIGTERM ends the run early; what was measured is written.
    let stop = stop_on_ctrl_c()?;
    let opts =
        cclab_emu::EmuOptions {
            stop: std::sync::Arc::clone(&stop),
            wait: if busy_poll {
                cclab_emu::forward::Wait::BusyPoll
            } else {
                cclab_emu::forward::Wait::Sleep
            },
            commands,
            force,
            // Commands write their files next to the results (`iperf3 -J > iperf3.json`).
            workdir: Some(std::fs::canonicalize(out).with_context(|| {
                format!("cannot use {} as the commands' directory", out.display())
            })?),
        };
    let plan = sc.run_plan(sc.seed, &sc.name);
    let run = cclab_emu::emulate(&plan.sim, &opts)
        .with_context(|| format!("{}: cannot emulate", sc.origin))?;
    if stop.load(std::sync::atomic::Ordering::Relaxed) {
        note!(
            "interrupted: writing what was measured in the first {:.1} s",
            run.results.duration_s
        );
    }
    // A Flent-equivalent test also gets its `.flent.gz`, as in a study.
    let mut also = Vec::new();
    if plan.test.is_some() {
        let key = cclab_lab::study::run::RecordKey {
            id: format!("emulate-{}", sc.name),
            study: sc.name.clone(),
            config: "emulate".into(),
            levels: Vec::new(),
            rep: 0,
            seed: sc.seed,
            spec: serde_json::Value::Null,
        };
        let rec = cclab_lab::study::run::record_of(plan, &run.results, key, None);
        let path = out.join(cclab_lab::flent::flent_file_name(&rec));
        cclab_lab::flent::write_flent_gz(&rec, &path)
            .with_context(|| format!("cannot write {}", path.display()))?;
        also.push(path);
    }
    let report: &output::WriteFn<'_> = &|w| {
        serde_json::to_writer_pretty(&mut *w, &run.report)?;
        writeln!(w)
    };
    let written = output::write_output_set(
        out,
        &sc.name,
        &run.results,
        &[("emulator.json", report)],
        &also,
    )
    .with_context(|| format!("cannot write the results to {}", out.display()))?;
    note!(
        "wrote {} files to {}",
        written.files.len() + also.len(),
        out.display()
    );
    note_kept(&written);
    let r = &run.report;
    note!(
        "emulator: kernel {}, lateness p50 {:.3} ms, p99 {:.3} ms, p99.9 {:.3} ms, max {:.3} ms; \
         {} packets, {} lost by the emulator; forwarder CPU {:.0} %",
        r.kernel,
        r.lateness_ms[0],
        r.lateness_ms[1],
        r.lateness_ms[2],
        r.lateness_ms[3],
        r.packets,
        r.self_drops,
        r.forwarder_cpu_share * 100.0
    );
    for c in &r.commands {
        note!("command on {}: `{}`: {}", c.host, c.command, c.fate());
    }
    for w in &r.warnings {
        note!("warning: {w}");
    }
    emit(&output::render_table(&run.results))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn duration_arguments() {
        assert_eq!(parse_duration_arg("20"), Ok(Dur::from_secs(20)));
        assert_eq!(parse_duration_arg("1.5s"), Ok(Dur::from_millis(1500)));
        assert!(parse_duration_arg("0").is_err());
        assert!(parse_duration_arg("soon").is_err());
    }

    #[test]
    fn positive_arguments() {
        assert_eq!(parse_positive("3"), Ok(3));
        assert!(parse_positive("0").is_err());
        assert!(parse_positive("-1").is_err());
        assert!(parse_positive("x").is_err());
    }

    /// `--exec` runs its command with `sh -c`, as `[[commands]]` does: shell syntax (`;`,
    /// redirections, quotes) is the shell's, not split into arguments.
    #[test]
    fn exec_commands_are_shell_lines() {
        let c = parse_exec("s0@1.5s:echo a; echo 'b c' > x.txt").unwrap();
        assert_eq!(c.host, "s0");
        assert_eq!(c.start, Dur::from_millis(1500));
        assert_eq!(c.argv, ["sh", "-c", "echo a; echo 'b c' > x.txt"]);
        assert_eq!(parse_exec("r0@0:iperf3 -s").unwrap().start, Dur::ZERO);
        for bad in ["s0", "s0@1s", "@1s:true", "s0@1s:  ", "s0@soon:true"] {
            assert!(parse_exec(bad).is_err(), "{bad}");
        }
    }

    /// A cause the message already quotes is not repeated (the disk-full message of a study's
    /// manifest once read `PATH: No space left on device: No space left on device`).
    #[test]
    fn a_quoted_cause_is_printed_once() {
        let io = || std::io::Error::from(std::io::ErrorKind::StorageFull);
        let e = anyhow::Error::new(cclab_lab::study::run::RunError::Io {
            path: "st/manifest.json".into(),
            source: io(),
        });
        assert_eq!(error_chain(&e), format!("st/manifest.json: {}", io()));
        let e = anyhow::Error::new(io()).context("cannot write the results to o");
        assert_eq!(
            error_chain(&e),
            format!("cannot write the results to o: {}", io())
        );
    }

    #[test]
    fn shard_arguments() {
        assert_eq!(parse_shard("2/8"), Ok((2, 8)));
        assert_eq!(parse_shard("1/1"), Ok((1, 1)));
        for bad in ["0/2", "3/2", "1/0", "1", "a/b", "1/2/3"] {
            assert!(parse_shard(bad).is_err(), "{bad}");
        }
    }
}
