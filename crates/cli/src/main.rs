//! The `cclab` command: argument parsing and terminal output only.
//!
//! Contract: every subcommand delegates to `cclab-lab` (scenario files, outputs) and `cclab-sim`
//! (the run). Bad input never panics: errors are printed as `error: …` on stderr (scenario errors
//! name file, line, column and field) and the process exits with status 1; usage errors exit
//! with status 2 (clap's convention).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use cclab_lab::scenario::{Overrides, PRESETS, Scenario};
use cclab_lab::{output, units};
use cclab_sim::{Dur, Simulation};
use clap::{Parser, Subcommand, ValueEnum};

const EXAMPLES: &str = "\
Examples:
  cclab demo                                   run the built-in demo, write ./cclab-demo/
  cclab run scenarios/cubic_single.toml        run a scenario, write ./cclab-out/cubic_single/
  cclab run scenarios/two_cubic.toml --seed 7 --duration 20s --out /tmp/two
  cclab check scenarios/rtt_unfairness.toml    validate a scenario and show what it resolves to
  cclab list controllers                       names accepted for `controller` in scenarios

Output files: summary.json (summaries), flows.csv, queues.csv, probes.csv, cc_stats.csv (time series, long format);
trace.csv (per-ACK sender trace) only when a flow sets `trace = true`.";

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
        /// when a flow sets `trace = true`, trace.csv [default: ./cclab-out/<scenario name>].
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
    /// Run the built-in demo scenario and write the results.
    ///
    /// The demo (scenarios/demo.toml, embedded in the binary): 2 CUBIC + 1 NewReno flows at base
    /// RTTs of 20, 30 and 50 ms over 100 Mbit/s with a 1 BDP drop-tail buffer and a ping probe,
    /// for 20 s.
    Demo {
        /// Output directory.
        #[arg(long, value_name = "DIR", default_value = "cclab-demo")]
        out: PathBuf,
    },
    /// List the names a scenario file may use.
    #[command(after_help = "Example:\n  cclab list slow-starts")]
    List {
        /// What to list.
        #[arg(value_enum)]
        what: ListWhat,
    },
    /// Measure simulator speed on the fixed benchmark scenarios.
    ///
    /// (a) 8 NewReno flows, 100 Mbit/s, 40 ms RTT, 333-packet FIFO, 60 s;
    /// (b) 1 CUBIC flow, 1 Gbit/s, 40 ms RTT, 3333-packet FIFO, 30 s; (c) (a) with 8 BBRv3 flows;
    /// (d) (b) with one BBRv3 flow on an fq + TSO host; (e) (a) with 8 CUBIC flows.
    /// Prints delivered data packets and events per CPU-second, CPU ns per packet and peak
    /// memory. Build with --release for meaningful numbers.
    #[command(after_help = "Example:\n  cargo run --release -- bench --repeat 3")]
    Bench {
        /// Only this scenario (`a` … `e`).
        #[arg(long)]
        only: Option<String>,
        /// Run each scenario at least this many times (and for at least one CPU-second); report
        /// the mean CPU time per run.
        #[arg(long, default_value_t = 1)]
        repeat: u32,
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
    /// Slow-start variants (`slow_start = …`).
    SlowStarts,
}

fn parse_duration_arg(s: &str) -> Result<Dur, String> {
    let d = units::parse_duration(s).map_err(|e| e.to_string())?;
    if d == Dur::ZERO {
        return Err("the duration must be positive".to_owned());
    }
    Ok(d)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
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
            let out = out.unwrap_or_else(|| Path::new("cclab-out").join(&sc.name));
            simulate_and_report(&sc, &out)
        }
        Command::Demo { out } => {
            let sc = cclab_lab::demo(&Overrides::default())?;
            simulate_and_report(&sc, &out)
        }
        Command::List { what } => {
            let names: &[&str] = match what {
                ListWhat::Controllers => cclab_cc::CONTROLLERS,
                ListWhat::Presets => PRESETS,
                ListWhat::SlowStarts => cclab_cc::SLOW_STARTS,
            };
            for n in names {
                println!("{n}");
            }
            Ok(())
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
                eprintln!("warning: this is a debug build; use `cargo run --release -- bench`");
            }
            let results = cclab_lab::bench::run(only.as_deref(), repeat);
            print!("{}", cclab_lab::bench::render(&results));
            Ok(())
        }
        Command::Check { scenario } => {
            let (sc, _) = cclab_lab::load(&scenario)?;
            print!("{}", sc.describe());
            println!("ok: {} is a valid scenario", scenario.display());
            Ok(())
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
    eprintln!(
        "running `{}`: {}, {}, {} simulated, seed {}",
        sc.name,
        count(sc.flows.len(), "flow"),
        count(sc.probes.len(), "probe"),
        units::fmt_dur(sc.duration),
        sc.seed
    );
    let sim = Simulation::new(sc.to_sim_config())
        .with_context(|| format!("{}: the simulator rejected the scenario", sc.origin))?;
    let results = sim.run();
    print!("{}", output::render_table(&results));
    let written = output::write_outputs(out, &sc.name, &results)
        .with_context(|| format!("cannot write the results to {}", out.display()))?;
    eprintln!("wrote {} files to {}", written.len(), out.display());
    Ok(())
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
}
