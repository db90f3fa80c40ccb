//! One emulated run of a scenario: hosts, kernel TCP flows, ping probes and commands through the
//! emulated network, observed into the simulator's [`Results`].
//!
//! Contract: [`emulate`] takes the same [`SimConfig`] a simulation takes. Every host node
//! becomes a namespace ([`crate::ns`]); every flow becomes a kernel TCP connection from its
//! source host to a built-in receiver on its destination host (port [`FLOW_PORT_BASE`] + flow
//! index), with the flow's controller mapped to the kernel's (`TCP_CONGESTION` per socket,
//! [`kernel_cc`]), started at the flow's start and sending until its stop, the end of the run
//! or its size (a connection not established by then is given up, with a warning); every ICMP
//! probe becomes `ping` on its source host; every [`HostCommand`] runs on its host in a PID
//! namespace of its own ([`Host::spawn_command`]), in [`EmuOptions::workdir`], its output
//! captured within bounds ([`crate::capture`]), and is stopped with everything it started at the
//! end ([`ns::stop_command`]). Nothing is written to disk. Every wait of the run looks at the
//! stop flag at least every 50 ms, so Ctrl-C ends it at once. Each sample interval the
//! run reads the senders' `tcp_info` (`ss -tin` in their namespaces) and the receivers' byte
//! counts; the forwarder samples the monitored queues. The result has the shape of a simulated
//! run's: goodput and the socket's cwnd, ssthresh, srtt, pacing and delivery rate, packets in
//! flight and retransmissions per flow, BBR's bandwidth and min_rtt where the kernel reports
//! them, the queues' backlog, sojourn, drops and marks, and the probes' RTTs. Differences of
//! definition: a flow's RTT statistics are over the sampled srtt (the simulator's are over
//! every RTT sample), and a flow's state column says `kernel` (the kernel does not report its
//! congestion state through `ss`). [`EmuReport`] holds what only an emulation has: the
//! forwarder's lateness, CPU use and own drops, the kernel's settings in the namespaces, and
//! warnings.
//!
//! What is refused, with a message: QUIC and UDP sources, UDP probes, request/response flows,
//! controllers the kernel does not have, L4S ECN, Wi-Fi, elements at nodes.

use std::collections::BTreeMap;
use std::io::Read;
use std::net::{SocketAddrV4, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cclab_cc::{CcSpec, Dur, EcnMode, Time};
use cclab_sim::config::Transport;
use cclab_sim::results::{
    EngineStats, FlowResult, FlowSeries, FlowSummary, ProbeResult, ProbeSummary, QueueResult,
    QueueSeries, QueueSummary, Results,
};
use cclab_sim::{NodeKind, ProbeKind, SimConfig};

use crate::capture::{self, Captured};
use crate::forward::{Forwarder, Wait};
use crate::net::EmuNet;
use crate::ns::{self, Host, NsError};
use crate::observe::ping::{PingLog, parse_reply_line, parse_transmitted_line};
use crate::observe::ss::{SockStats, parse_ss};

/// The port of flow 0's receiver; flow `i` listens on `FLOW_PORT_BASE + i`.
pub const FLOW_PORT_BASE: u16 = 20_000;

/// Highest rate (bit/s) of a monitored link the emulator accepts without `--force`: at 1 Gbit/s
/// the forwarder used 96 % of a core on a 2-core machine and the TUN queues dropped packets
/// before it read them; at 500 Mbit/s it used 88 % and lost nothing (`BENCHMARKS.md`,
/// "emulator").
pub const MAX_RATE_BPS: u64 = 500_000_000;

/// Rate above which the emulator warns that its lateness may distort the results.
pub const WARN_RATE_BPS: u64 = 200_000_000;

/// Why an emulation cannot run or failed.
#[derive(Debug, thiserror::Error)]
pub enum EmuError {
    /// Missing privileges or tools, or a namespace could not be made.
    #[error(transparent)]
    Ns(#[from] NsError),
    /// The scenario asks for something the emulator does not do.
    #[error("the emulator cannot run this scenario: {0}")]
    Unsupported(String),
    /// Something failed during the run.
    #[error("{0}")]
    Run(String),
}

/// A command to run on a host during an emulation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostCommand {
    /// The host's name (a node of the scenario).
    pub host: String,
    /// When it starts, after the run's start.
    pub start: Dur,
    /// Program and arguments (`sh -c LINE` for a scenario's `[[commands]]` and `--exec`);
    /// `{NAME}` is replaced by the address of host `NAME`.
    pub argv: Vec<String>,
}

/// How long a command still running at the end of the run has to end after `SIGTERM` before
/// it is killed (`SIGKILL`): enough for a capture or a measurement tool to flush its output
/// (`tcpdump -w` writes its buffer, `iperf3` prints its summary, in milliseconds), short
/// against a run's seconds.
pub const COMMAND_GRACE: Duration = Duration::from_secs(1);

/// How long the end of a run waits for a command's output to close after the command ended.
const OUTPUT_WAIT: Duration = Duration::from_secs(1);

/// The longest a wait of the run sleeps before it looks at the stop flags again: Ctrl-C or
/// SIGTERM ends a run within about this time plus [`COMMAND_GRACE`].
const POLL: Duration = Duration::from_millis(50);

/// How to emulate.
#[derive(Clone, Debug, Default)]
pub struct EmuOptions {
    /// How the forwarder waits between events.
    pub wait: Wait,
    /// Commands to run on hosts.
    pub commands: Vec<HostCommand>,
    /// Set to end the run early (Ctrl-C); what was measured so far is kept.
    pub stop: Arc<AtomicBool>,
    /// Run above [`MAX_RATE_BPS`] anyway.
    pub force: bool,
    /// The commands' working directory (`None`: this process's).
    pub workdir: Option<std::path::PathBuf>,
}

/// The kernel's settings in one host's namespace.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct HostSetup {
    /// The host.
    pub host: String,
    /// Its address.
    pub addr: String,
    /// The inode of its network namespace (to check that it is gone after the run).
    pub netns_inode: u64,
    /// The TUN device's queueing discipline (`tc qdisc show`).
    pub qdisc: String,
    /// The TUN device's GSO/TSO limits and queue length (`ip -d link show`).
    pub link: String,
    /// TSQ's limit (`net.ipv4.tcp_limit_output_bytes`), bytes.
    pub limit_output_bytes: String,
}

/// A command's fate.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct CommandReport {
    /// The command as given.
    pub command: String,
    /// Its host.
    pub host: String,
    /// Its exit status (`None`: still running at the end, then stopped; or it did not start).
    pub status: Option<i32>,
    /// Its standard output: the first and last 32 KiB ([`crate::capture`]).
    pub stdout: String,
    /// Its standard error, likewise.
    pub stderr: String,
    /// Bytes of its standard output left out of `stdout`.
    pub stdout_dropped_bytes: u64,
    /// Bytes of its standard error left out of `stderr`.
    pub stderr_dropped_bytes: u64,
}

impl CommandReport {
    /// `exit status N`, or `still running at the end (stopped)` (a command that did not start
    /// has its own warning).
    #[must_use]
    pub fn fate(&self) -> String {
        match self.status {
            Some(s) => format!("exit status {s}"),
            None => "still running at the end (stopped)".to_owned(),
        }
    }
}

/// Prefix of the directories that earlier versions of the emulator kept the commands' output
/// in (`cclab-emu-PID` in the temporary directory).
const OLD_TEMP_PREFIX: &str = "cclab-emu-";

/// Remove the directories `cclab-emu-PID` in `dir` that an earlier version of the emulator left
/// when it was killed: those of this user whose process no longer runs. The emulator itself
/// keeps nothing on disk (its commands' and probes' output is read from pipes), so nothing is
/// left to clean after it.
pub fn remove_stale_temp_dirs(dir: &std::path::Path) {
    use std::os::unix::fs::MetadataExt;
    let me = nix::unistd::geteuid().as_raw();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(OLD_TEMP_PREFIX))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        let ours = std::fs::symlink_metadata(e.path()).is_ok_and(|m| m.is_dir() && m.uid() == me);
        let running = pid == std::process::id()
            || std::path::Path::new("/proc").join(pid.to_string()).exists();
        if ours && !running {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// What only an emulation measures.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct EmuReport {
    /// `uname -r` of the kernel whose TCP ran.
    pub kernel: String,
    /// The kernel controller of each flow.
    pub kernel_cc: Vec<String>,
    /// Lateness of the forwarder's releases (actual minus intended), ms: p50, p99, p99.9, max.
    pub lateness_ms: [f64; 4],
    /// Packets the forwarder released.
    pub packets: u64,
    /// Packets the forwarder lost itself.
    pub self_drops: u64,
    /// Packets the kernels dropped at the TUN devices before the forwarder read them (the
    /// devices' TX drop counters): the forwarder did not keep up.
    pub tun_drops: u64,
    /// Packets the forwarder could not route (an address of no host) or that were not IPv4.
    pub unroutable: u64,
    /// CPU time of the forwarder's thread over its wall time.
    pub forwarder_cpu_share: f64,
    /// Whether the forwarder spun (busy-poll) instead of sleeping.
    pub busy_poll: bool,
    /// Each host's kernel settings.
    pub hosts: Vec<HostSetup>,
    /// The commands run.
    pub commands: Vec<CommandReport>,
    /// Each flow's sender `tcp_info` at its last sample.
    pub last_stats: Vec<Option<SockStats>>,
    /// What may make the results differ from what the scenario describes.
    pub warnings: Vec<String>,
}

/// A run: results in the simulator's shape, and the emulator's own figures.
#[derive(Debug)]
pub struct EmuRun {
    /// The results.
    pub results: Results,
    /// The emulator's figures.
    pub report: EmuReport,
}

/// The kernel controllers this machine offers (`net.ipv4.tcp_available_congestion_control`).
#[must_use]
pub fn kernel_controllers() -> Vec<String> {
    std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control")
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

/// The kernel's controller for a scenario's: Reno and NewReno → `reno` (Linux `tcp_cong.c`'s
/// Reno, whose recovery is NewReno's with SACK), CUBIC → `cubic`, BBRv1 → `bbr` (mainline
/// `tcp_bbr.c` is v1), Vegas → `vegas`, Prague → `prague`. `None` for controllers the kernel
/// has no counterpart of (BBRv3 unless the kernel's `bbr` is v3, Cuback, quicly's, ABBA,
/// 2BRobust, BBR-TAS).
#[must_use]
pub fn kernel_cc(spec: &CcSpec) -> Option<&'static str> {
    match spec.name() {
        "reno" | "newreno" => Some("reno"),
        "cubic" => Some("cubic"),
        "bbr1" => Some("bbr"),
        "vegas" => Some("vegas"),
        "prague" => Some("prague"),
        _ => None,
    }
}

/// Check what the emulator can run of `cfg`, before anything is set up.
///
/// # Errors
/// [`EmuError::Unsupported`] naming the first thing it cannot.
pub fn check_config(cfg: &SimConfig, force: bool) -> Result<Vec<String>, EmuError> {
    let unsupported = |s: String| Err(EmuError::Unsupported(s));
    // The medium first: a Wi-Fi scenario is refused for being Wi-Fi, not for a setting of its
    // stations (their pacing shift) that follows from it.
    if !cfg.wifi.is_empty() {
        return unsupported(
            "the emulator does not run Wi-Fi media yet (the scenario has a Wi-Fi BSS)".into(),
        );
    }
    if let Some(u) = cfg.udp.first() {
        return unsupported(format!(
            "UDP source `{}`: the emulator runs TCP flows, ping probes and commands \
             (run a UDP generator such as iperf3 -u as a command instead)",
            u.name
        ));
    }
    if let Some(p) = cfg.probes.iter().find(|p| p.kind != ProbeKind::Icmp) {
        return unsupported(format!(
            "probe `{}` is a UDP probe; the emulator runs ICMP ping probes (run irtt as a \
             command instead)",
            p.name
        ));
    }
    for n in cfg.nodes.iter().filter(|n| n.kind == NodeKind::Host) {
        if n.host.cpu.is_some() {
            return unsupported(format!(
                "host `{}` has a CPU schedule; the emulator's hosts run on this machine's own \
                 CPUs (limit a command with a cgroup's cpu.max instead)",
                n.name
            ));
        }
        if n.host.pacing_shift != cclab_cc::DEFAULT_PACING_SHIFT {
            return unsupported(format!(
                "host `{}` sets pacing_shift = {}; the kernel's sk_pacing_shift is {} unless a \
                 driver or the congestion control changes it, and no setting reaches it",
                n.name,
                n.host.pacing_shift,
                cclab_cc::DEFAULT_PACING_SHIFT
            ));
        }
    }
    let available = kernel_controllers();
    for f in &cfg.flows {
        if !matches!(f.transport, Transport::Tcp) {
            return unsupported(format!(
                "flow `{}` is a QUIC flow; the emulator's built-in flows are kernel TCP \
                 (run a QUIC client and server as commands instead)",
                f.name
            ));
        }
        if f.requests.is_some() {
            return unsupported(format!(
                "flow `{}` is a request/response flow; the emulator's built-in flows are bulk \
                 or sized transfers",
                f.name
            ));
        }
        if f.ecn == EcnMode::L4s && f.cc.name() != "prague" {
            return unsupported(format!(
                "flow `{}` asks for L4S ECN, which the kernel's TCP offers only with prague",
                f.name
            ));
        }
        let Some(k) = kernel_cc(&f.cc) else {
            return unsupported(format!(
                "flow `{}` uses `{}`, which the kernel does not have; kernel counterparts \
                 exist for reno, newreno, cubic, bbr1, vegas and prague",
                f.name,
                f.cc.name()
            ));
        };
        if !available.iter().any(|a| a == k) {
            return unsupported(format!(
                "flow `{}` needs the kernel's `{k}`, which this kernel does not offer \
                 (available: {}; try `modprobe tcp_{k}`)",
                f.name,
                available.join(" ")
            ));
        }
    }
    let mut warnings = Vec::new();
    if cfg.nodes.iter().any(|n| n.host.timing.is_some()) {
        warnings.push(
            "the scenario's [timing] model is ignored: the emulated hosts are the kernel's, with \
             their own timing"
                .to_owned(),
        );
    }
    let fastest = cfg
        .links
        .iter()
        .filter(|l| l.monitor)
        .filter_map(|l| l.rate_bps)
        .max()
        .unwrap_or(0);
    if fastest > MAX_RATE_BPS && !force {
        return unsupported(format!(
            "a monitored link runs at {:.0} Mbit/s; the emulator holds its schedule up to {} \
             Mbit/s on a small machine (pass --force to run anyway)",
            fastest as f64 / 1e6,
            MAX_RATE_BPS / 1_000_000
        ));
    }
    if fastest > WARN_RATE_BPS {
        warnings.push(format!(
            "a monitored link runs at {:.0} Mbit/s: check the lateness figures, above {} \
             Mbit/s the forwarder may not keep up",
            fastest as f64 / 1e6,
            WARN_RATE_BPS / 1_000_000
        ));
    }
    Ok(warnings)
}

/// Receiver-side counters of one flow.
#[derive(Debug, Default)]
struct Received {
    bytes: AtomicU64,
    /// When the sender closed (EOF), ns since the start; 0: not yet.
    eof_ns: AtomicU64,
}

fn ms(ns: Option<u64>) -> Option<f64> {
    #[expect(clippy::cast_precision_loss, reason = "ns fit a double exactly")]
    ns.map(|v| v as f64 * 1e-6)
}

fn quantile(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss,
        reason = "an index into a short vector"
    )]
    let i = ((sorted.len() - 1) as f64 * q).round() as usize;
    Some(sorted[i.min(sorted.len() - 1)])
}

fn mean(v: &[f64]) -> Option<f64> {
    #[expect(clippy::cast_precision_loss, reason = "sample counts are small")]
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// Emulate `cfg` in real time.
///
/// # Errors
/// [`EmuError`] if the emulator cannot run here or cannot run the scenario, or the setup fails.
#[expect(
    clippy::too_many_lines,
    reason = "one sequence: set up, run, collect; each part is a few lines"
)]
pub fn emulate(cfg: &SimConfig, opts: &EmuOptions) -> Result<EmuRun, EmuError> {
    ns::check_privileges()?;
    let mut warnings = check_config(cfg, opts.force)?;
    remove_stale_temp_dirs(&std::env::temp_dir());
    let net = EmuNet::new(cfg).map_err(|e| EmuError::Unsupported(e.0))?;
    let host_nodes = net.hosts.clone();
    let host_index = |node: cclab_sim::NodeId| -> u16 {
        let i = host_nodes.iter().position(|&n| n == node).unwrap_or(0);
        u16::try_from(i).unwrap_or(u16::MAX)
    };
    // Hosts.
    let mut hosts = Vec::new();
    let mut devices = Vec::new();
    for (i, &node) in host_nodes.iter().enumerate() {
        let name = &cfg.nodes[node.0 as usize].name;
        let (h, d) = Host::new(name, u16::try_from(i).unwrap_or(u16::MAX))?;
        hosts.push(h);
        devices.push(d);
    }
    let find_host = |name: &str| hosts.iter().find(|h| h.name == name);
    for c in &opts.commands {
        if find_host(&c.host).is_none() {
            return Err(EmuError::Unsupported(format!(
                "command `{}` is for host `{}`, which the scenario does not have (hosts: {})",
                c.argv.join(" "),
                c.host,
                hosts
                    .iter()
                    .map(|h| h.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    }
    // Kernel settings: ECN where a flow asks for it; report qdisc and offloads.
    for f in &cfg.flows {
        if f.ecn != EcnMode::Off {
            for n in [f.src, f.dst] {
                hosts[usize::from(host_index(n))]
                    .run(|| std::fs::write("/proc/sys/net/ipv4/tcp_ecn", "1"))
                    .map_err(|e| EmuError::Run(format!("enabling ECN: {e}")))?;
            }
        }
    }
    // The kernel's settings below TCP, set explicitly from each host's model: the qdisc on the
    // TUN device (the simulator's `pfifo_fast` or `fq` with its parameters), the GSO size
    // limit, and TSQ's `tcp_limit_output_bytes` (per namespace since Linux 4.20).
    for (h, &node) in hosts.iter().zip(&host_nodes) {
        let model = &cfg.nodes[node.0 as usize].host;
        let qdisc: Vec<String> = match model.qdisc {
            cclab_sim::HostQdisc::PfifoFast => vec!["pfifo_fast".into()],
            cclab_sim::HostQdisc::Fq(p) => vec![
                "fq".into(),
                "limit".into(),
                p.limit.to_string(),
                "flow_limit".into(),
                p.flow_limit.to_string(),
                "quantum".into(),
                p.quantum.to_string(),
                "initial_quantum".into(),
                p.initial_quantum.to_string(),
                "horizon".into(),
                format!("{}us", p.horizon.as_micros()),
            ],
        };
        let mut args: Vec<String> = ["qdisc", "replace", "dev", ns::TUN_NAME, "root"]
            .map(String::from)
            .to_vec();
        args.extend(qdisc.iter().cloned());
        if let Err(e) = h.output("tc", args) {
            warnings.push(format!(
                "host {}: the kernel refused qdisc `{}` ({e}); it runs the default",
                h.name, qdisc[0]
            ));
        }
        let (gso, segs) = if model.tso.enabled {
            (model.tso.gso_max_size, 65_535)
        } else {
            (model.tso.gso_max_size, 1)
        };
        let args = [
            "link",
            "set",
            ns::TUN_NAME,
            "gso_max_size",
            &gso.to_string(),
            "gso_max_segs",
            &segs.to_string(),
        ]
        .map(String::from)
        .to_vec();
        if let Err(e) = h.output("ip", args) {
            warnings.push(format!("host {}: cannot set the GSO limits: {e}", h.name));
        }
        let lob = model.limit_output_bytes.to_string();
        if let Err(e) =
            h.run(move || std::fs::write("/proc/sys/net/ipv4/tcp_limit_output_bytes", lob))
        {
            warnings.push(format!(
                "host {}: cannot set tcp_limit_output_bytes: {e}",
                h.name
            ));
        }
    }
    let mut setups = Vec::new();
    for h in &hosts {
        let qdisc = h
            .output(
                "tc",
                ["qdisc", "show", "dev", ns::TUN_NAME]
                    .map(String::from)
                    .to_vec(),
            )
            .unwrap_or_else(|e| format!("unknown ({e})"));
        let link = h
            .output(
                "ip",
                ["-d", "link", "show", ns::TUN_NAME]
                    .map(String::from)
                    .to_vec(),
            )
            .unwrap_or_default();
        let pick = |key: &str| {
            link.split_whitespace()
                .skip_while(|w| *w != key)
                .nth(1)
                .map(|v| format!("{key} {v}"))
        };
        let link = ["qlen", "gso_max_size", "gso_max_segs", "tso_max_size"]
            .iter()
            .filter_map(|k| pick(k))
            .collect::<Vec<_>>()
            .join(", ");
        setups.push(HostSetup {
            host: h.name.clone(),
            addr: h.addr.to_string(),
            netns_inode: h.ns_inode,
            qdisc: qdisc.trim().to_owned(),
            link,
            limit_output_bytes: h
                .run(|| std::fs::read_to_string("/proc/sys/net/ipv4/tcp_limit_output_bytes"))
                .unwrap_or_default()
                .trim()
                .to_owned(),
        });
    }
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .unwrap_or_default()
        .trim()
        .to_owned();
    // Receivers.
    let received: Vec<Arc<Received>> = cfg.flows.iter().map(|_| Arc::default()).collect();
    let run_stop = Arc::new(AtomicBool::new(false));
    let mut threads = Vec::new();
    let start = Instant::now();
    for (i, f) in cfg.flows.iter().enumerate() {
        let port = FLOW_PORT_BASE + u16::try_from(i).unwrap_or(0);
        let listener = hosts[usize::from(host_index(f.dst))]
            .run(move || TcpListener::bind(("0.0.0.0", port)))
            .map_err(|e| EmuError::Run(format!("receiver of flow {i}: {e}")))?;
        listener
            .set_nonblocking(true)
            .map_err(|e| EmuError::Run(e.to_string()))?;
        let (rx, stop) = (Arc::clone(&received[i]), Arc::clone(&run_stop));
        threads.push(std::thread::spawn(move || {
            let mut conn = loop {
                if stop.load(Ordering::Relaxed) {
                    return;
                }
                match listener.accept() {
                    Ok((c, _)) => break c,
                    Err(_) => std::thread::sleep(Duration::from_millis(2)),
                }
            };
            let _ = conn.set_nonblocking(false);
            let _ = conn.set_read_timeout(Some(Duration::from_millis(50)));
            let mut buf = vec![0u8; 1 << 16];
            loop {
                match conn.read(&mut buf) {
                    Ok(0) => {
                        let ns = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
                        rx.eof_ns.store(ns.max(1), Ordering::Relaxed);
                        return;
                    }
                    Ok(n) => {
                        rx.bytes.fetch_add(n as u64, Ordering::Relaxed);
                    }
                    Err(e)
                        if matches!(
                            e.kind(),
                            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                        ) =>
                    {
                        if stop.load(Ordering::Relaxed) {
                            return;
                        }
                    }
                    Err(_) => return,
                }
            }
        }));
    }
    // The forwarder.
    let until = Time::ZERO + cfg.duration;
    let mut fw = Forwarder::new(net, devices, cfg.sample_interval);
    fw.wait = opts.wait;
    let user_stop = Arc::clone(&opts.stop);
    let fw_stop = Arc::new(AtomicBool::new(false));
    let fw_stop2 = Arc::clone(&fw_stop);
    let forwarder = std::thread::Builder::new()
        .name("forwarder".into())
        .spawn(move || {
            fw.run(start, until, &fw_stop2);
            fw
        })
        .map_err(|e| EmuError::Run(e.to_string()))?;
    // Senders.
    let sender_errors: Arc<Mutex<Vec<String>>> = Arc::default();
    for (i, f) in cfg.flows.iter().enumerate() {
        let k = kernel_cc(&f.cc).unwrap_or("cubic");
        let dst = SocketAddrV4::new(
            hosts[usize::from(host_index(f.dst))].addr,
            FLOW_PORT_BASE + u16::try_from(i).unwrap_or(0),
        );
        let sock = hosts[usize::from(host_index(f.src))]
            .run(move || open_socket(k))
            .map_err(|e| EmuError::Run(format!("flow {i}: socket with `{k}`: {e}")))?;
        let (stop, errors) = (Arc::clone(&run_stop), Arc::clone(&sender_errors));
        let (begin, end, size) = (f.start, f.stop.map_or(until, |s| s.min(until)), f.size);
        let name = f.name.clone();
        threads.push(std::thread::spawn(move || {
            let at = |t: Time| start + Duration::from_nanos(t.as_nanos());
            if !sleep_until(at(begin), &stop) {
                return;
            }
            if let Err(e) = send(sock, dst, at(end), size, &stop)
                && !stop.load(Ordering::Relaxed)
            {
                errors
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .push(format!("flow `{name}`: {e}"));
            }
        }));
    }
    // Probes and commands (output read from pipes, by threads).
    let mut pings = Vec::new();
    for p in &cfg.probes {
        let src = &hosts[usize::from(host_index(p.src))];
        let dst = hosts[usize::from(host_index(p.dst))].addr;
        let payload = p.size.saturating_sub(28).max(16);
        let args = vec![
            "-D".to_owned(),
            "-n".to_owned(),
            "-i".to_owned(),
            format!("{:.3}", p.interval.as_secs_f64().max(0.002)),
            "-s".to_owned(),
            payload.to_string(),
            "-Q".to_owned(),
            (u32::from(p.dscp) << 2).to_string(),
            "-w".to_owned(),
            (cfg.duration.as_nanos().div_ceil(1_000_000_000) + 1).to_string(),
            dst.to_string(),
        ];
        let mut child = src.spawn("ping", &args, Stdio::piped(), Stdio::null())?;
        let out = child.stdout.take();
        let reader = std::thread::spawn(move || read_ping(out));
        pings.push((child, reader));
    }
    let addr_of: BTreeMap<String, String> = hosts
        .iter()
        .map(|h| (h.name.clone(), h.addr.to_string()))
        .collect();
    let mut pending: Vec<(usize, &HostCommand)> = opts.commands.iter().enumerate().collect();
    pending.sort_by_key(|(_, c)| c.start);
    let mut commands = Vec::new();
    // Sampling.
    let interval = cfg.sample_interval;
    let flow_src: Vec<u16> = cfg.flows.iter().map(|f| host_index(f.src)).collect();
    let mut series: Vec<FlowSeries> = cfg.flows.iter().map(|_| FlowSeries::default()).collect();
    let mut srtts: Vec<Vec<f64>> = cfg.flows.iter().map(|_| Vec::new()).collect();
    let mut last: Vec<Option<SockStats>> = cfg.flows.iter().map(|_| None).collect();
    let mut prev_bytes = vec![0u64; cfg.flows.len()];
    let mut prev_retrans = vec![0u64; cfg.flows.len()];
    let mut k: u64 = 1;
    loop {
        let t = Time::ZERO + Dur(interval.as_nanos() * k);
        if t > until || user_stop.load(Ordering::Relaxed) {
            break;
        }
        let due = start + Duration::from_nanos(t.as_nanos());
        // Start the commands due before this sample.
        while let Some(&(_, c)) = pending.first() {
            if Time::ZERO + c.start > t {
                break;
            }
            pending.remove(0);
            if !sleep_until(start + Duration::from_nanos(c.start.as_nanos()), &user_stop) {
                break;
            }
            let argv: Vec<String> = c.argv.iter().map(|a| substitute(a, &addr_of)).collect();
            let host = find_host(&c.host).expect("checked above");
            let child = host
                .spawn_command(&argv, opts.workdir.as_deref())
                .map(|mut ch| {
                    let out = capture::capture(ch.stdout.take());
                    let err = capture::capture(ch.stderr.take());
                    (ch, out, err)
                });
            commands.push((c, command_line(&argv), child));
        }
        if !sleep_until(due, &user_stop) {
            break;
        }
        // Receivers' goodput.
        for (i, r) in received.iter().enumerate() {
            let b = r.bytes.load(Ordering::Relaxed);
            #[expect(
                clippy::cast_precision_loss,
                reason = "bytes per interval fit a double"
            )]
            let g = (b - prev_bytes[i]) as f64 * 8.0 / interval.as_secs_f64();
            prev_bytes[i] = b;
            series[i].t_s.push(t.as_secs_f64());
            series[i].goodput_bps.push(g);
        }
        // Senders' tcp_info, one `ss` per sending host.
        let mut by_host: BTreeMap<u16, Vec<SockStats>> = BTreeMap::new();
        for &h in &flow_src {
            if let std::collections::btree_map::Entry::Vacant(e) = by_host.entry(h) {
                let text = hosts[usize::from(h)]
                    .output("ss", ["-tinH"].map(String::from).to_vec())
                    .unwrap_or_default();
                e.insert(parse_ss(&text));
            }
        }
        for (i, f) in cfg.flows.iter().enumerate() {
            let port = FLOW_PORT_BASE + u16::try_from(i).unwrap_or(0);
            let dst_addr = hosts[usize::from(host_index(f.dst))].addr;
            let s = by_host[&flow_src[i]]
                .iter()
                .find(|s| {
                    s.peer.port() == port
                        && s.peer.ip().to_canonical() == std::net::IpAddr::V4(dst_addr)
                })
                .cloned();
            let se = &mut series[i];
            se.cwnd.push(s.as_ref().and_then(|s| s.cwnd).unwrap_or(0));
            se.ssthresh.push(s.as_ref().and_then(|s| s.ssthresh));
            se.srtt_ms.push(s.as_ref().and_then(|s| s.srtt_ms));
            se.pacing_rate_bps
                .push(s.as_ref().and_then(|s| s.pacing_rate_bps));
            se.in_flight
                .push(s.as_ref().and_then(|s| s.unacked).unwrap_or(0));
            se.delivery_rate_bps
                .push(s.as_ref().and_then(|s| s.delivery_rate_bps));
            let retrans = s
                .as_ref()
                .and_then(|s| s.retrans_total)
                .unwrap_or(prev_retrans[i]);
            se.retransmits
                .push(u32::try_from(retrans.saturating_sub(prev_retrans[i])).unwrap_or(u32::MAX));
            prev_retrans[i] = prev_retrans[i].max(retrans);
            se.losses.push(s.as_ref().and_then(|s| s.lost).unwrap_or(0));
            se.state.push("kernel");
            se.tsq_budget.push(None);
            se.tsq_shift.push(0);
            se.below_tcp
                .push(s.as_ref().and_then(|s| s.notsent_bytes).unwrap_or(0));
            // The simulator's names for BBR's figures (`cc_stats.csv`), in its units.
            let stats: [(&'static str, Option<f64>); 5] = [
                ("bw_bps", s.as_ref().and_then(|s| s.bbr_bw_bps)),
                (
                    "min_rtt_us",
                    s.as_ref().and_then(|s| s.bbr_min_rtt_ms).map(|m| m * 1e3),
                ),
                ("pacing_gain", s.as_ref().and_then(|s| s.bbr_pacing_gain)),
                ("cwnd_gain", s.as_ref().and_then(|s| s.bbr_cwnd_gain)),
                (
                    "tcp_min_rtt_us",
                    s.as_ref().and_then(|s| s.min_rtt_ms).map(|m| m * 1e3),
                ),
            ];
            for (key, v) in stats {
                se.cc_stats.entry(key).or_default().push(v);
            }
            if let Some(r) = s.as_ref().and_then(|s| s.srtt_ms) {
                srtts[i].push(r);
            }
            if s.is_some() {
                last[i] = s;
            }
        }
        k += 1;
    }
    // Stop everything.
    fw_stop.store(true, Ordering::Relaxed);
    run_stop.store(true, Ordering::Relaxed);
    let fw = forwarder
        .join()
        .map_err(|_| EmuError::Run("the forwarder failed".into()))?;
    for t in threads {
        let _ = t.join();
    }
    // The commands still running: asked to end, then killed with everything they started.
    let mut running: Vec<&mut std::process::Child> = commands
        .iter_mut()
        .filter_map(|(_, _, c)| c.as_mut().ok().map(|(ch, _, _)| ch))
        .filter_map(|ch| matches!(ch.try_wait(), Ok(None)).then_some(ch))
        .collect();
    let stopped: Vec<u32> = running.iter().map(|c| c.id()).collect();
    ns::stop_command(&mut running, COMMAND_GRACE);
    let mut probes = Vec::new();
    for ((mut child, reader), p) in pings.into_iter().zip(&cfg.probes) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap_or(0)),
            nix::sys::signal::Signal::SIGINT,
        );
        let _ = child.wait();
        let log = match reader.join() {
            Ok(Ok(log)) => log,
            Ok(Err(e)) => {
                warnings.push(format!("probe `{}`: reading ping's output: {e}", p.name));
                PingLog::default()
            }
            Err(_) => PingLog::default(),
        };
        let first_seq = log.replies.first().map_or(1, |r| r.seq);
        let mut rtts: Vec<f64> = log.replies.iter().map(|r| r.rtt_ms).collect();
        let interval_s = p.interval.as_secs_f64().max(0.002);
        #[expect(clippy::cast_precision_loss, reason = "sequence numbers are small")]
        let t_s: Vec<f64> = log
            .replies
            .iter()
            .map(|r| (r.seq - first_seq.min(r.seq)) as f64 * interval_s)
            .collect();
        let seq: Vec<u64> = log.replies.iter().map(|r| r.seq).collect();
        let rtt_ms: Vec<f64> = rtts.clone();
        rtts.sort_by(f64::total_cmp);
        probes.push(ProbeResult {
            name: p.name.clone(),
            kind: p.kind.name(),
            dscp: p.dscp,
            seq,
            t_s,
            rtt_ms,
            sent: log
                .transmitted
                .unwrap_or_else(|| log.replies.iter().map(|r| r.seq).max().unwrap_or(0)),
            summary: ProbeSummary {
                answered: log.replies.len() as u64,
                rtt_mean_ms: mean(&rtts),
                rtt_p50_ms: quantile(&rtts, 0.5),
                rtt_p95_ms: quantile(&rtts, 0.95),
                rtt_p99_ms: quantile(&rtts, 0.99),
            },
        });
    }
    let mut command_reports = Vec::new();
    for (c, line, child) in commands {
        let (status, out, err) = match child {
            Ok((mut ch, out, err)) => {
                let st = ch.wait().ok();
                let status = if stopped.contains(&ch.id()) {
                    None
                } else {
                    st.and_then(|s| {
                        use std::os::unix::process::ExitStatusExt;
                        // `unshare` dies of the signal that killed the command.
                        s.code().or_else(|| s.signal().map(|g| 128 + g))
                    })
                };
                (status, out.finish(OUTPUT_WAIT), err.finish(OUTPUT_WAIT))
            }
            Err(e) => {
                warnings.push(format!("command `{line}` did not start: {e}"));
                (None, Captured::default(), Captured::default())
            }
        };
        for (what, cap) in [("output", &out), ("error output", &err)] {
            if let Some(e) = &cap.error {
                warnings.push(format!(
                    "command `{line}`: reading its {what} failed after {} bytes: {e}",
                    cap.total
                ));
            }
        }
        command_reports.push(CommandReport {
            command: line,
            host: c.host.clone(),
            status,
            stdout: out.text(),
            stderr: err.text(),
            stdout_dropped_bytes: out.dropped(),
            stderr_dropped_bytes: err.dropped(),
        });
    }
    warnings.extend(
        sender_errors
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .drain(..),
    );
    let mut tun_drops = 0;
    for h in &hosts {
        let text = h
            .output(
                "ip",
                ["-s", "link", "show", ns::TUN_NAME]
                    .map(String::from)
                    .to_vec(),
            )
            .unwrap_or_default();
        tun_drops += tx_dropped(&text).unwrap_or(0);
    }
    drop(hosts);
    // Results.
    let end = if user_stop.load(Ordering::Relaxed) {
        Time(u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX)).min(until)
    } else {
        until
    };
    let mut flows = Vec::new();
    for (i, f) in cfg.flows.iter().enumerate() {
        let bytes = received[i].bytes.load(Ordering::Relaxed);
        let eof = received[i].eof_ns.load(Ordering::Relaxed);
        let complete = f.size.is_some() && eof > 0 && Some(bytes) >= f.size;
        let stop = if complete {
            Time(eof)
        } else {
            f.stop.map_or(end, |s| s.min(end))
        };
        let active = stop.saturating_since(f.start).as_secs_f64();
        let mut r = srtts[i].clone();
        r.sort_by(f64::total_cmp);
        let st = last[i].as_ref();
        let segs = st.and_then(|s| s.data_segs_out).unwrap_or(0);
        let retrans = st.and_then(|s| s.retrans_total).unwrap_or(0);
        #[expect(
            clippy::cast_precision_loss,
            reason = "byte and segment counts fit a double"
        )]
        let summary = FlowSummary {
            goodput_bps: if active > 0.0 {
                bytes as f64 * 8.0 / active
            } else {
                0.0
            },
            bytes_delivered: bytes,
            segments_sent: segs,
            retransmits: retrans,
            segments_lost: retrans,
            fast_recoveries: 0,
            rto_count: 0,
            tlp_count: 0,
            rto_times_s: Vec::new(),
            rtt_mean_ms: mean(&r),
            rtt_p50_ms: quantile(&r, 0.5),
            rtt_p95_ms: quantile(&r, 0.95),
            rtt_p99_ms: quantile(&r, 0.99),
            fct_s: complete.then(|| Time(eof).saturating_since(f.start).as_secs_f64()),
            size_bytes: f.size,
            ideal_fct_s: None,
            fct_slowdown: None,
            complete,
            min_cwnd: series[i]
                .cwnd
                .iter()
                .copied()
                .filter(|&c| c > 0)
                .min()
                .unwrap_or(0),
            ecn: match f.ecn {
                EcnMode::Off => "off",
                EcnMode::Classic => "classic",
                EcnMode::L4s => "l4s",
            },
            ce_delivered: 0,
            ce_echoes: 0,
            ecn_reductions: 0,
            loss_rate: if segs > 0 {
                retrans as f64 / segs as f64
            } else {
                0.0
            },
            dsacks_sent: 0,
            dsacks_received: 0,
            dsack_dups: 0,
            spurious_retransmits: 0,
            full_undos: 0,
            partial_undos: 0,
            dsack_undos: 0,
            loss_undos: 0,
            spurious_rtos: 0,
            reordered: 0,
            reorder_ratio: 0.0,
            reorder_extent_max: 0,
            reorder_extent_mean: None,
            exchanges: None,
            quic: None,
        };
        flows.push(FlowResult {
            name: f.name.clone(),
            controller: format!("{} (kernel)", kernel_cc(&f.cc).unwrap_or("?")),
            summary,
            series: std::mem::take(&mut series[i]),
            trace: Vec::new(),
            exchanges: Vec::new(),
        });
    }
    let queues = queue_results(&fw, end);
    let t = &fw.timing;
    let q = |p: f64| ms(t.lateness.quantile(p)).unwrap_or(0.0);
    let report = EmuReport {
        kernel,
        kernel_cc: cfg
            .flows
            .iter()
            .map(|f| kernel_cc(&f.cc).unwrap_or("?").to_owned())
            .collect(),
        lateness_ms: [
            q(0.5),
            q(0.99),
            q(0.999),
            ms(t.lateness.max()).unwrap_or(0.0),
        ],
        packets: t.packets_out,
        self_drops: t.self_drops,
        tun_drops,
        unroutable: fw.net.unroutable + t.not_ipv4,
        forwarder_cpu_share: if t.wall_s > 0.0 {
            t.cpu_s / t.wall_s
        } else {
            0.0
        },
        busy_poll: opts.wait == Wait::BusyPoll,
        hosts: setups,
        commands: command_reports,
        last_stats: last,
        warnings,
    };
    let mut report = report;
    if report.lateness_ms[1] > 1.0 {
        report.warnings.push(format!(
            "the forwarder's p99 lateness was {:.2} ms: delays and rates below that scale are \
             not held (try --busy-poll, or a lighter machine load)",
            report.lateness_ms[1]
        ));
    }
    if report.tun_drops > 0 {
        report.warnings.push(format!(
            "{} packets were dropped at the TUN devices before the forwarder read them: it did \
             not keep up, and the results include losses the scenario does not have",
            report.tun_drops
        ));
    }
    if report.self_drops > 0 {
        report.warnings.push(format!(
            "the forwarder lost {} packets itself",
            report.self_drops
        ));
    }
    Ok(EmuRun {
        results: Results {
            seed: cfg.seed,
            duration_s: end.as_secs_f64(),
            flows,
            queues,
            probes,
            udp: Vec::new(),
            wifi: Vec::new(),
            engine: EngineStats::default(),
        },
        report,
    })
}

/// The TX `dropped` counter of `ip -s link show` output: the fourth number of the line after
/// the one starting with `TX:`.
fn tx_dropped(text: &str) -> Option<u64> {
    let mut lines = text.lines();
    lines.find(|l| l.trim_start().starts_with("TX:"))?;
    lines.next()?.split_whitespace().nth(3)?.parse().ok()
}

/// Sleep until `deadline` or until `stop` is set, looking at it every [`POLL`]; whether the
/// deadline was reached (not stopped).
fn sleep_until(deadline: Instant, stop: &AtomicBool) -> bool {
    loop {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return true;
        }
        std::thread::sleep(left.min(POLL));
    }
}

/// A command as the user wrote it: the line of `sh -c LINE`, else the words joined.
fn command_line(argv: &[String]) -> String {
    match argv {
        [sh, c, line] if sh == "sh" && c == "-c" => line.clone(),
        _ => argv.join(" "),
    }
}

/// Read `ping -D -n`'s output line by line as it comes, keeping the replies and the count sent
/// (a long run's text is never held whole).
fn read_ping(out: Option<std::process::ChildStdout>) -> std::io::Result<PingLog> {
    use std::io::BufRead;
    let mut log = PingLog::default();
    let Some(out) = out else {
        return Ok(log);
    };
    let mut r = std::io::BufReader::new(out);
    let mut line = Vec::new();
    loop {
        line.clear();
        // A line is at most a few hundred bytes; `take` bounds a broken one.
        if (&mut r).take(4096).read_until(b'\n', &mut line)? == 0 {
            return Ok(log);
        }
        let text = String::from_utf8_lossy(&line);
        if let Some(reply) = parse_reply_line(&text) {
            log.replies.push(reply);
        } else if let Some(n) = parse_transmitted_line(&text) {
            log.transmitted = Some(n);
        }
    }
}

/// Replace each `{NAME}` in `arg` by the address of host `NAME`.
fn substitute(arg: &str, addr_of: &BTreeMap<String, String>) -> String {
    let mut s = arg.to_owned();
    for (name, addr) in addr_of {
        s = s.replace(&format!("{{{name}}}"), addr);
    }
    s
}

/// A TCP socket using the kernel's controller `cc` (`TCP_CONGESTION`, set before connecting so
/// the whole connection runs it), in the calling thread's namespace.
fn open_socket(cc: &str) -> std::io::Result<std::os::fd::OwnedFd> {
    use nix::sys::socket::{AddressFamily, SockFlag, SockType, setsockopt, socket, sockopt};
    let fd = socket(
        AddressFamily::Inet,
        SockType::Stream,
        SockFlag::SOCK_CLOEXEC | SockFlag::SOCK_NONBLOCK,
        None,
    )?;
    setsockopt(&fd, sockopt::TcpCongestion, &std::ffi::OsString::from(cc))?;
    Ok(fd)
}

/// Connect the non-blocking `sock` to `dst`, waiting at most until `end` or `stop`: whether it
/// connected. A blocking `connect` waits for the kernel's SYN retries (over two minutes,
/// `tcp_syn_retries` = 6, Linux `net/ipv4/tcp_timer.c`), past the run's end and deaf to Ctrl-C.
fn connect_until(
    sock: &std::os::fd::OwnedFd,
    dst: SocketAddrV4,
    end: Instant,
    stop: &AtomicBool,
) -> std::io::Result<bool> {
    use nix::errno::Errno;
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    use nix::sys::socket::{connect, getsockopt, sockopt};
    use std::os::fd::AsFd;
    match connect(sock.as_raw_fd(), &nix::sys::socket::SockaddrIn::from(dst)) {
        Ok(()) => return Ok(true),
        Err(Errno::EINPROGRESS | Errno::EINTR) => {}
        Err(e) => return Err(e.into()),
    }
    loop {
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() || stop.load(Ordering::Relaxed) {
            return Ok(false);
        }
        let ms = u16::try_from(left.min(POLL).as_millis().max(1)).unwrap_or(u16::MAX);
        let mut fds = [PollFd::new(sock.as_fd(), PollFlags::POLLOUT)];
        match poll(&mut fds, PollTimeout::from(ms)) {
            Ok(0) | Err(Errno::EINTR) => {}
            Ok(_) => {
                let err = getsockopt(sock, sockopt::SocketError)?;
                return if err == 0 {
                    Ok(true)
                } else {
                    Err(std::io::Error::from_raw_os_error(err))
                };
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// Connect `sock` to `dst` and send until `end`, `size` bytes or `stop`.
fn send(
    sock: std::os::fd::OwnedFd,
    dst: SocketAddrV4,
    end: Instant,
    size: Option<u64>,
    stop: &AtomicBool,
) -> std::io::Result<()> {
    use std::io::Write;
    if !connect_until(&sock, dst, end, stop)? {
        if stop.load(Ordering::Relaxed) {
            return Ok(());
        }
        return Err(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            "no connection by the flow's end (its SYNs or SYN-ACKs were lost)",
        ));
    }
    let stream = TcpStream::from(sock);
    stream.set_nonblocking(false)?;
    let mut stream = stream;
    stream.set_write_timeout(Some(Duration::from_millis(50)))?;
    let buf = vec![0x5au8; 1 << 16];
    let mut left = size.unwrap_or(u64::MAX);
    while left > 0 && Instant::now() < end && !stop.load(Ordering::Relaxed) {
        let n = usize::try_from(left.min(buf.len() as u64)).unwrap_or(buf.len());
        match stream.write(&buf[..n]) {
            Ok(w) => left -= w as u64,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(e) => return Err(e),
        }
    }
    if size.is_some() && left == 0 {
        stream.shutdown(std::net::Shutdown::Write)?;
        // Keep the socket until the receiver has everything (or the run ends).
        let _ = stream.set_read_timeout(Some(Duration::from_millis(50)));
        let mut b = [0u8; 64];
        while Instant::now() < end && !stop.load(Ordering::Relaxed) {
            if let Ok(0) = (&stream).read(&mut b) {
                break;
            }
        }
    }
    Ok(())
}

/// The monitored links' queues in the simulator's shape.
fn queue_results(fw: &Forwarder, end: Time) -> Vec<QueueResult> {
    let mut out = Vec::new();
    for (li, link) in fw.net.links.iter().enumerate() {
        if !link.cfg.monitor {
            continue;
        }
        let samples = &fw.samples[li];
        let st = &link.stats;
        let h = &st.sojourn;
        #[expect(clippy::cast_precision_loss, reason = "byte counts fit a double")]
        let throughput = if end > Time::ZERO {
            st.bytes_sent as f64 * 8.0 / end.as_secs_f64()
        } else {
            0.0
        };
        #[expect(clippy::cast_precision_loss, reason = "rates fit a double")]
        let capacity = link.cfg.rate_bps.map_or(0.0, |r| r as f64);
        let aqm_drops: u64 = link.tally.class.iter().map(|c| c.aqm_drops).sum();
        out.push(QueueResult {
            name: link.cfg.name.clone(),
            summary: QueueSummary {
                enqueued: st.enqueued,
                drops: st.overflow_drops + link.tally.drops(),
                link_losses: link.link_losses(),
                delay_mean_ms: h.mean().map(|m| m * 1e-6),
                delay_p95_ms: ms(h.quantile(0.95)),
                delay_max_ms: ms(h.max()),
                throughput_bps: throughput,
                max_backlog_packets: samples.iter().map(|s| s.backlog_packets).max().unwrap_or(0),
                discipline: link.discipline(),
                aqm_drops,
                ce_marks: link.tally.marks(),
                delay_p50_ms: ms(h.quantile(0.5)),
                delay_p99_ms: ms(h.quantile(0.99)),
                classes: Vec::new(),
            },
            series: QueueSeries {
                t_s: samples.iter().map(|s| s.t_s).collect(),
                backlog_packets: samples.iter().map(|s| s.backlog_packets).collect(),
                backlog_bytes: samples.iter().map(|s| s.backlog_bytes).collect(),
                sojourn_mean_ms: samples.iter().map(|s| s.sojourn_mean_ms).collect(),
                sojourn_max_ms: samples.iter().map(|s| s.sojourn_max_ms).collect(),
                drops: samples.iter().map(|s| s.drops).collect(),
                ce_marks: samples.iter().map(|s| s.ce_marks).collect(),
                class_sojourn_mean_ms: Vec::new(),
                class_backlog_packets: Vec::new(),
                throughput_bps: samples.iter().map(|s| s.throughput_bps).collect(),
                capacity_bps: samples.iter().map(|_| capacity).collect(),
                delay_ms: Vec::new(),
            },
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ip -s link show` of iproute2 6.1 (counters as the kernel reports them).
    #[test]
    fn tun_tx_drops_are_read() {
        let text = "5: cclab0: <POINTOPOINT,MULTICAST,NOARP,UP,LOWER_UP> mtu 1500 qdisc \
                    pfifo_fast state UNKNOWN mode DEFAULT group default qlen 500\n    \
                    link/none \n    RX:  bytes packets errors dropped  missed   mcast\n     \
                    1234      10      0       0       0       0\n    \
                    TX:  bytes packets errors dropped carrier collsns\n     \
                    99999     77      0      42       0       0\n";
        assert_eq!(tx_dropped(text), Some(42));
        assert_eq!(tx_dropped("garbage"), None);
    }

    #[test]
    fn host_names_become_addresses() {
        let m: BTreeMap<String, String> = [("r0".to_owned(), "10.77.0.2".to_owned())].into();
        assert_eq!(substitute("ping {r0} -c 1", &m), "ping 10.77.0.2 -c 1");
        assert_eq!(substitute("{r1}", &m), "{r1}");
    }

    /// What the emulator cannot run is refused before anything is set up, naming the flow and
    /// what to do instead.
    #[test]
    fn unsupported_scenarios_are_refused_with_a_reason() {
        use cclab_sim::QueueLimit;
        use cclab_sim::topology::Dumbbell;
        let refused = |cc: &str| {
            let mut d = Dumbbell::new(10_000_000, Dur::from_millis(5), QueueLimit::Packets(10));
            d.add_flow(CcSpec::default_for(cc).unwrap(), Dur::ZERO);
            match check_config(&d.build(), false) {
                Err(e) => e.to_string(),
                Ok(_) => String::new(),
            }
        };
        let e = refused("bbr3");
        assert!(e.contains("flow `flow0` uses `bbr3`"), "{e}");
        assert!(e.contains("reno, newreno, cubic, bbr1"), "{e}");
        assert!(refused("cuback").contains("cuback"));
        if kernel_controllers().iter().any(|c| c == "cubic") {
            assert_eq!(refused("cubic"), "");
        }
        let mut d = Dumbbell::new(900_000_000, Dur::from_millis(5), QueueLimit::Packets(10));
        d.add_flow(CcSpec::default_for("reno").unwrap(), Dur::ZERO);
        let cfg = d.build();
        let e = check_config(&cfg, false).unwrap_err().to_string();
        assert!(e.contains("900 Mbit/s") && e.contains("--force"), "{e}");
        if kernel_controllers().iter().any(|c| c == "reno") {
            let warnings = check_config(&cfg, true).unwrap();
            assert!(warnings[0].contains("900 Mbit/s"), "{warnings:?}");
        }
        let mut d = Dumbbell::new(10_000_000, Dur::from_millis(5), QueueLimit::Packets(10));
        d.add_flow(CcSpec::default_for("cubic").unwrap(), Dur::ZERO);
        let mut cfg = d.build();
        let sender = cfg.flows[0].src.0 as usize;
        cfg.nodes[sender].host.pacing_shift = 8;
        let e = check_config(&cfg, false).unwrap_err().to_string();
        assert!(e.contains("pacing_shift = 8"), "{e}");
        cfg.nodes[sender].host.pacing_shift = cclab_cc::DEFAULT_PACING_SHIFT;
        cfg.nodes[sender].host.cpu = Some(cclab_sim::CpuSchedule {
            timeslice: Dur::from_millis(1),
            share: 0.5,
            offset: Dur::ZERO,
        });
        let e = check_config(&cfg, false).unwrap_err().to_string();
        assert!(e.contains("CPU schedule"), "{e}");
    }

    #[test]
    fn kernel_counterparts() {
        let k = |n: &str| kernel_cc(&CcSpec::default_for(n).unwrap());
        assert_eq!(k("cubic"), Some("cubic"));
        assert_eq!(k("newreno"), Some("reno"));
        assert_eq!(k("bbr1"), Some("bbr"));
        assert_eq!(k("bbr3"), None);
        assert_eq!(k("cuback"), None);
    }
}
