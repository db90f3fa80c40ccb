//! `[[commands]]`: programs an emulated run starts on the scenario's hosts (`cclab emulate`;
//! the simulator has no programs to run and ignores them).
//!
//! Contract: [`resolve`] reads every `[[commands]]` entry, `host` (a host of the built network,
//! with a suggestion when misspelt), `start` (a time within the run, default 0) and `run` (a
//! shell command line, run with `sh -c`; `{NAME}` stands for host NAME's address), and refuses
//! anything else with the file, line and field. The emulator runs each line in the output
//! directory, and keeps the first and last 32 KiB of its output (`cclab_emu::capture`).
//!
//! ```toml
//! [[commands]]
//! host = "r0"
//! run = "iperf3 -s -1"
//!
//! [[commands]]
//! host = "s0"
//! start = "1s"
//! run = "iperf3 -c {r0} -t 5 -J > iperf3.json"
//! ```

use cclab_emu::HostCommand;
use cclab_sim::{Dur, NodeKind, SimConfig};
use serde::Deserialize;
use toml::Spanned;

use super::ScenarioError;
use super::error::{Source, suggest};
use crate::units::TimeValue;

/// Most commands a scenario may start.
pub const MAX_COMMANDS: usize = 64;

#[derive(Debug, Deserialize)]
struct CommandsOnly {
    #[serde(default)]
    commands: Vec<Spanned<RawCommand>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCommand {
    host: Option<Spanned<String>>,
    start: Option<Spanned<TimeValue>>,
    run: Option<Spanned<String>>,
}

/// The `[[commands]]` of the scenario `src`, whose network is `cfg`.
///
/// # Errors
/// A located [`ScenarioError`] for a missing or unknown host, a start after the run's end, an
/// empty command, an unknown key or too many commands.
pub(crate) fn resolve(
    src: &Source<'_>,
    cfg: &SimConfig,
) -> Result<Vec<HostCommand>, ScenarioError> {
    let raw: CommandsOnly = toml::from_str(src.text).map_err(|e| src.toml_error(&e))?;
    if raw.commands.len() > MAX_COMMANDS {
        return Err(src.error(
            Some(raw.commands[MAX_COMMANDS].span()),
            format!("commands[{MAX_COMMANDS}]"),
            format!("too many commands: a scenario may start at most {MAX_COMMANDS}"),
        ));
    }
    let hosts: Vec<&str> = cfg
        .nodes
        .iter()
        .filter(|n| n.kind == NodeKind::Host)
        .map(|n| n.name.as_str())
        .collect();
    let mut out = Vec::with_capacity(raw.commands.len());
    for (i, entry) in raw.commands.iter().enumerate() {
        let field = format!("commands[{i}]");
        let c = entry.get_ref();
        let Some(host) = &c.host else {
            return Err(src.error(
                Some(entry.span()),
                format!("{field}.host"),
                format!("a command needs `host`, one of: {}", hosts.join(", ")),
            ));
        };
        if !hosts.contains(&host.get_ref().as_str()) {
            let mut m = format!(
                "no host `{}` in this network; hosts: {}",
                host.get_ref(),
                hosts.join(", ")
            );
            if let Some(s) = suggest(host.get_ref(), &hosts) {
                m.push_str(&format!(" (did you mean `{s}`?)"));
            }
            return Err(src.error(Some(host.span()), format!("{field}.host"), m));
        }
        let Some(run) = c.run.as_ref().filter(|r| !r.get_ref().trim().is_empty()) else {
            return Err(src.error(
                Some(c.run.as_ref().map_or(entry.span(), Spanned::span)),
                format!("{field}.run"),
                "a command needs `run`, a command line (run with `sh -c`; `{NAME}` is host \
                 NAME's address)",
            ));
        };
        let start = c.start.as_ref().map_or(Dur::ZERO, |s| s.get_ref().0);
        if start > cfg.duration {
            return Err(src.error(
                c.start.as_ref().map(Spanned::span),
                format!("{field}.start"),
                format!(
                    "starts after the run ends ({})",
                    crate::units::fmt_dur(cfg.duration)
                ),
            ));
        }
        out.push(HostCommand {
            host: host.get_ref().clone(),
            start,
            argv: vec!["sh".into(), "-c".into(), run.get_ref().clone()],
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use crate::scenario::{Overrides, parse};

    const BASE: &str = r#"
name = "c"
duration = "10s"
[topology]
preset = "dumbbell"
rate = "10Mbit"
delay = "5ms"
[[flows]]
controller = "cubic"
"#;

    fn err(extra: &str) -> String {
        match parse(&format!("{BASE}{extra}"), "t.toml", &Overrides::default()) {
            Ok(_) => panic!("accepted: {extra}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn commands_resolve_to_shell_lines_on_hosts() {
        let sc = parse(
            &format!(
                "{BASE}[[commands]]\nhost = \"r0\"\nrun = \"iperf3 -s -1\"\n\
                 [[commands]]\nhost = \"s0\"\nstart = \"1s\"\nrun = \"iperf3 -c {{r0}}\"\n"
            ),
            "t.toml",
            &Overrides::default(),
        )
        .unwrap();
        assert_eq!(sc.commands.len(), 2);
        assert_eq!(sc.commands[1].host, "s0");
        assert_eq!(sc.commands[1].start, cclab_sim::Dur::from_secs(1));
        assert_eq!(sc.commands[1].argv, ["sh", "-c", "iperf3 -c {r0}"]);
    }

    #[test]
    fn a_wrong_command_names_line_field_and_choices() {
        let e = err("[[commands]]\nhost = \"r9\"\nrun = \"true\"\n");
        assert!(e.contains("commands[0].host"), "{e}");
        assert!(e.contains("hosts: s0, r0"), "{e}");
        assert!(e.contains("did you mean `r0`"), "{e}");
        assert!(e.contains("t.toml:"), "{e}");
        let e = err("[[commands]]\nhost = \"r0\"\n");
        assert!(e.contains("commands[0].run"), "{e}");
        let e = err("[[commands]]\nhost = \"r0\"\nrun = \"true\"\nstart = \"20s\"\n");
        assert!(e.contains("starts after the run ends"), "{e}");
        let e = err("[[commands]]\nhost = \"r0\"\nrun = \"true\"\nwhen = \"1s\"\n");
        assert!(e.contains("when"), "{e}");
    }
}
