//! Scenario files: TOML in, a checked [`Scenario`] and the simulator's [`SimConfig`] out.
//!
//! Contract: [`parse`] (or [`load`] / [`load_with`] for files) either returns a [`Scenario`] in
//! which every value is resolved to simulator units and checked, or a [`ScenarioError`] naming the
//! file, line, column and field of the first problem found. It never panics on any input.
//! [`Scenario::to_sim_config`] is then infallible.
//!
//! # File format
//!
//! ```toml
//! name = "two_cubic"              # required; letters, digits, `-`, `_`, `.` (used as a directory name)
//! description = "…"               # optional
//! seed = 1                        # default 1
//! duration = "30s"                # default 30 s
//! sample_interval = "200ms"       # default 0.2 s
//!
//! [topology]
//! preset = "dumbbell"             # see PRESETS
//! rate = "100Mbit"                # bottleneck rate (bit/s number or string with unit)
//! delay = "10ms"                  # bottleneck one-way propagation delay
//! buffer = "1bdp"                 # default 1 BDP; "333p", "50ms", "500KB", {packets = 333}, …
//! loss = 0.001                    # optional Bernoulli loss on the bottleneck (data direction)
//! reverse_rate = "100Mbit"        # default = rate (carries the ACKs; large buffer, no loss)
//! access_rate = "1Gbit"           # default: none, access links are pure delay lines
//! nic_rate = "10Gbit"             # every host's NIC line rate (default 10 Gbit/s)
//! driver_queue = 1000             # NIC driver queue, packets (default 1000 = txqueuelen)
//! # [[topology.drops]]            # scripted drops instead of `loss`:
//! # flow = "cubic0"  seq = 100  nth = 0   (flow by name or index, segment number, transmission)
//!
//! [[flows]]
//! controller = "cubic"            # see cclab_cc::CONTROLLERS
//! slow_start = "hystart"          # optional, see cclab_cc::SLOW_STARTS
//! fast_convergence = true         # cubic only
//! tcp_friendliness = true         # cubic only
//! start = "0s"   stop = "20s"     # optional; stop > start
//! size = "10MB"                   # optional; absent = bulk
//! access_delay = "5ms"            # one-way, default 0: base RTT = 2·(delay + access_delay)
//! mss = 1448                      # 536..=9000
//! pacing = "auto"                 # auto | on | off
//! ecn = "off"                     # off | classic (RFC 3168) | l4s (ECT(1), Accurate ECN)
//! initial_window = 10             # segments, 1..=1000; default 10 (TCP_INIT_CWND, RFC 6928)
//! ack_every = 2                   # 1..=64; default 2 (RFC 5681 §4.2), after 16 quick ACKs
//! delayed_ack = "40ms"            # 0 ≤ t < 500 ms (RFC 1122); default 40 ms (TCP_DELACK_MIN)
//! count = 2                       # replicate; names get -1, -2, … (unnamed: <controller><index>)
//! name = "bulk"                   # optional, default <controller><index>
//! trace = true                    # optional, default false: per-ACK sender trace in trace.csv
//! robust = true                   # BBR only: 2BRobust on (default on for bbr1_2brobust, bbr3_2brobust)
//! robust_rounds = 2               # 2BRobust: rounds after ProbeRTT before it may act (r)
//! robust_alpha = 0.84             # 2BRobust: boost while in flight < alpha·BDP
//! startup_shift = 8               # bbr_tas only: TSQ pacing shift in Startup/Drain, 6..=12
//! steady_shift = 8                # bbr_tas only: TSQ pacing shift in ProbeBW/ProbeRTT, 6..=12
//! [flows.host]                    # optional: this flow's sending host, on top of [host]
//! qdisc = "fq"                    # see the `host` module for every key
//!
//! [host]                          # optional: every sending host (TSQ, qdisc, TSO, CPU schedule)
//! pacing_shift = 10  qdisc = "pfifo_fast"  tso = "post-5.18"  cpu_share = 0.3  cpu_timeslice = "10ms"
//!
//! [[probes]]                      # optional ping probes on their own host pair
//! name = "Ping (ms) ICMP"  interval = "200ms"  size = 64  access_delay = "0ms"  start = 0  stop = 30
//! ```
//!
//! **BDP** (for `buffer = "…bdp"`): the bottleneck rate × the base RTT of the flow with the
//! *shortest* base RTT, `2·(delay + access_delay)`, i.e. the propagation RTT without
//! serialisation. Buffers given as a time are the bytes the bottleneck sends in that time. Both
//! resolve to a byte limit; packet counts stay packet limits.
//!
//! **Receiver** (`ack_every`, `delayed_ack`): after quick-ACK mode (the first 16 ACKs, one per
//! segment) the receiver ACKs every `ack_every` in-order segments, or when the delayed-ACK timer,
//! armed by the first unACKed segment, expires; out-of-order, hole-filling and duplicate segments
//! are ACKed at once. `delayed_ack = 0` arms that timer for the arrival instant itself, so each
//! in-order segment is ACKed separately at once, as with `ack_every = 1` (only segments arriving in
//! the same nanosecond could share an ACK). The file bound on `initial_window` (1000) is tighter
//! than the simulator's (1 000 000) to catch typos.

pub mod access;
pub mod controllers;
pub mod dumbbell;
pub mod error;
pub mod host;
pub mod params;
pub mod presets;
pub mod qdisc;
mod raw;

use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::Path;

use cclab_cc::{CcSpec, EcnMode};
use cclab_sim::{
    DEFAULT_MSS, Dur, HostConfig, INITIAL_WINDOW, PacingMode, SimConfig, TCP_IP_HEADER_BYTES, Time,
};
use toml::Spanned;

pub use access::AccessTest;
pub use dumbbell::Dumbbell;
pub use error::{Invalid, ScenarioError};

use crate::units::{ByteSize, TimeValue, fmt_dur};
use error::{Source, unknown_choice};
use raw::{PresetOnly, RawAccess, RawFlow, RawPacing, RawProbe, RawScenario};

/// Topology presets a scenario may name in `topology.preset` (declared in [`presets::PRESETS`]).
pub const PRESETS: &[&str] = &["dumbbell", "access", "rtt_fair"];
/// Default simulated duration.
pub const DEFAULT_DURATION: Dur = Dur::from_secs(30);
/// Default sampling interval of the time series (Flent's default step).
pub const DEFAULT_SAMPLE_INTERVAL: Dur = Dur::from_millis(200);
/// Default probe name (Flent's ping series name).
pub const DEFAULT_PROBE_NAME: &str = "Ping (ms) ICMP";
/// Default probe interval.
pub const DEFAULT_PROBE_INTERVAL: Dur = Dur::from_millis(200);
/// Default probe wire size in bytes (a 64-byte ICMP echo, as `ping -s 36`; close to Flent's).
pub const DEFAULT_PROBE_SIZE: u32 = 64;
/// Smallest and largest MSS accepted (RFC 1122 default 536; jumbo frames 9000).
pub const MSS_RANGE: std::ops::RangeInclusive<u32> = 536..=9000;
/// Initial windows (segments) a scenario file accepts. The simulator takes up to 1 000 000; files
/// stop at 1000, well above any deployed value (Linux default 10, RFC 6928), to catch typos.
pub const INITIAL_WINDOW_RANGE: std::ops::RangeInclusive<u32> = 1..=1000;
/// `ack_every` values a scenario file accepts (segments per ACK once quick-ACK mode is over).
pub const ACK_EVERY_RANGE: std::ops::RangeInclusive<u32> = 1..=64;
/// Default `ack_every`: an ACK for every second full segment (RFC 5681 §4.2).
pub const DEFAULT_ACK_EVERY: u32 = 2;
/// Default delayed-ACK timer: Linux `TCP_DELACK_MIN` = 40 ms.
pub const DEFAULT_DELAYED_ACK: Dur = Dur::from_millis(40);
/// `delayed_ack` must be below this (RFC 1122 §4.2.3.2: "MUST be less than 0.5 seconds").
pub const DELAYED_ACK_LIMIT: Dur = Dur::from_millis(500);
/// Smallest and largest probe wire size (IP + ICMP headers = 28 bytes; IPv4 maximum).
pub const PROBE_SIZE_RANGE: std::ops::RangeInclusive<u32> = 28..=65_535;
/// Most flows (after `count` expansion) a scenario may have; a guard against typos like
/// `count = 1000000`.
pub const MAX_FLOWS: usize = 10_000;
/// Most probes a scenario may have.
pub const MAX_PROBES: usize = 1_000;

/// Command-line overrides applied while checking a scenario.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Overrides {
    /// Replace the file's `seed`.
    pub seed: Option<u64>,
    /// Replace the file's `duration` (must be positive).
    pub duration: Option<Dur>,
}

/// A checked scenario, every value in simulator units.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    /// Scenario name (safe to use as a directory name).
    pub name: String,
    /// Free-text description.
    pub description: Option<String>,
    /// Where it came from (file path or a label such as `builtin:demo`).
    pub origin: String,
    /// Master seed.
    pub seed: u64,
    /// Simulated duration.
    pub duration: Dur,
    /// Sampling interval of the time series.
    pub sample_interval: Dur,
    /// The network.
    pub topology: Topology,
    /// TCP flows, `count` already expanded (index = flow id in the results).
    pub flows: Vec<Flow>,
    /// Latency probes.
    pub probes: Vec<Probe>,
}

/// A resolved topology preset.
#[derive(Clone, Debug, PartialEq)]
pub enum Topology {
    /// Senders → left router → bottleneck → right router → receivers.
    Dumbbell(Dumbbell),
    /// A Flent-equivalent test: a client behind an access bottleneck, its servers
    /// (presets `access` and `rtt_fair`).
    Access(Box<AccessTest>),
}

impl Topology {
    /// The preset's name, as written in `topology.preset`.
    #[must_use]
    pub fn preset(&self) -> &'static str {
        match self {
            Topology::Dumbbell(_) => "dumbbell",
            Topology::Access(a) => a.preset,
        }
    }
}

/// A resolved TCP flow.
#[derive(Clone, Debug, PartialEq)]
pub struct Flow {
    /// Unique name.
    pub name: String,
    /// Controller and parameters.
    pub cc: CcSpec,
    /// Start time.
    pub start: Time,
    /// Application stop time.
    pub stop: Option<Time>,
    /// Bytes to send (`None` = bulk).
    pub size: Option<u64>,
    /// One-way delay of the flow's own access links (each direction).
    pub access_delay: Dur,
    /// Payload bytes per segment.
    pub mss: u32,
    /// Pacing mode.
    pub pacing: PacingMode,
    /// ECN use (off, classic or L4S; a controller that requires a mode gets it).
    pub ecn: EcnMode,
    /// Initial congestion window, segments.
    pub initial_window: u32,
    /// The receiver ACKs every `ack_every` in-order segments (after quick-ACK mode).
    pub ack_every: u32,
    /// Receiver delayed-ACK timer (`Dur::ZERO`: an in-order segment not ACKed at once is ACKed
    /// by a timer that fires at the same instant, so every segment gets its own ACK).
    pub delayed_ack: Dur,
    /// Record a per-event sender trace (every ACK, timeout and probe; written to `trace.csv`).
    pub trace: bool,
    /// The sending host's model (TSQ, qdisc, TSO, CPU schedule).
    pub host: HostConfig,
}

impl Flow {
    /// The simulator's flow from `src` to `dst` with this flow's settings (the host model is
    /// the node's, set by the topology builder).
    #[must_use]
    pub fn flow_config(
        &self,
        src: cclab_sim::NodeId,
        dst: cclab_sim::NodeId,
    ) -> cclab_sim::FlowConfig {
        let mut flow = cclab_sim::FlowConfig::bulk(&self.name, src, dst, self.cc.clone());
        flow.start = self.start;
        flow.stop = self.stop;
        flow.size = self.size;
        flow.mss = self.mss;
        flow.pacing = self.pacing;
        flow.ecn = self.ecn;
        flow.initial_window = self.initial_window;
        flow.ack_every = self.ack_every;
        flow.delack_timeout = self.delayed_ack;
        flow.trace = self.trace;
        flow
    }
}

/// A resolved ping probe.
#[derive(Clone, Debug, PartialEq)]
pub struct Probe {
    /// Unique name.
    pub name: String,
    /// Interval between probes.
    pub interval: Dur,
    /// Wire size, bytes.
    pub size: u32,
    /// One-way delay of the probe's own access links.
    pub access_delay: Dur,
    /// First probe.
    pub start: Time,
    /// No probe at or after this time.
    pub stop: Option<Time>,
}

/// Read, parse and check the scenario at `path`, and build its [`SimConfig`].
///
/// # Errors
/// [`ScenarioError::Read`] if the file cannot be read, [`ScenarioError::Invalid`] for anything
/// wrong inside it.
pub fn load(path: impl AsRef<Path>) -> Result<(Scenario, SimConfig), ScenarioError> {
    load_with(path, &Overrides::default())
}

/// [`load`] with command-line overrides.
///
/// # Errors
/// As [`load`]; an override that makes the scenario inconsistent (e.g. a duration shorter than a
/// flow's start) is reported against the field it conflicts with.
pub fn load_with(
    path: impl AsRef<Path>,
    overrides: &Overrides,
) -> Result<(Scenario, SimConfig), ScenarioError> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Read {
        path: path.to_owned(),
        source,
    })?;
    let scenario = parse(&text, &path.display().to_string(), overrides)?;
    let cfg = scenario.to_sim_config();
    Ok((scenario, cfg))
}

/// Parse and check scenario text. `origin` names the text in error messages (usually its path).
///
/// # Errors
/// A [`ScenarioError::Invalid`] for the first problem found.
pub fn parse(text: &str, origin: &str, overrides: &Overrides) -> Result<Scenario, ScenarioError> {
    let src = Source { text, origin };
    let head: PresetOnly = toml::from_str(text).map_err(|e| src.toml_error(&e))?;
    let preset = head.topology.get_ref().preset.clone();
    match preset.get_ref().as_str() {
        "dumbbell" => {
            let raw: RawScenario<raw::RawDumbbell> =
                toml::from_str(text).map_err(|e| src.toml_error(&e))?;
            if let Some(t) = &raw.test {
                return Err(src.error(
                    Some(t.span()),
                    "test",
                    "a Flent-equivalent [test] runs on topology preset `access` or `rtt_fair`",
                ));
            }
            if let Some(t) = &raw.tcp {
                return Err(src.error(
                    Some(t.span()),
                    "tcp",
                    "[tcp] is the flow template of a [test]; a dumbbell takes [[flows]]",
                ));
            }
            let common = resolve_common(&src, &raw, overrides)?;
            let topology = dumbbell::resolve(&src, &raw.topology, &common.flows)?;
            Ok(common.finish(Topology::Dumbbell(topology)))
        }
        p @ ("access" | "rtt_fair") => {
            let preset: &'static str = if p == "access" { "access" } else { "rtt_fair" };
            let raw: RawScenario<RawAccess> =
                toml::from_str(text).map_err(|e| src.toml_error(&e))?;
            parse_test(&src, &raw, preset, overrides)
        }
        other => Err(src.error(
            Some(preset.span()),
            "topology.preset",
            unknown_choice("preset", other, PRESETS),
        )),
    }
}

/// A scenario with a `[test]` (presets `access` and `rtt_fair`, see [`access`]).
fn parse_test(
    src: &Source<'_>,
    raw: &RawScenario<RawAccess>,
    preset: &'static str,
    overrides: &Overrides,
) -> Result<Scenario, ScenarioError> {
    let Some(test) = &raw.test else {
        return Err(src.error(
            Some(raw.topology.span()),
            "test",
            format!(
                "preset `{preset}` runs a Flent-equivalent test: add a [test] table with `name` \
                 (one of: {}) and a [tcp] table with the `controller`",
                crate::suite::TESTS.join(", ")
            ),
        ));
    };
    let Some(tcp_raw) = &raw.tcp else {
        return Err(src.error(
            Some(test.span()),
            "tcp",
            "a test needs a [tcp] table: the template of its TCP flows, with at least \
             `controller`",
        ));
    };
    for (key, span) in [
        ("flows", raw.flows.first().map(Spanned::span)),
        ("probes", raw.probes.first().map(Spanned::span)),
        ("duration", raw.duration.as_ref().map(Spanned::span)),
        (
            "sample_interval",
            raw.sample_interval.as_ref().map(Spanned::span),
        ),
    ] {
        if let Some(span) = span {
            return Err(src.error(
                Some(span),
                key,
                format!(
                    "a test defines its own flows, probes and timing; remove `{key}` (the \
                     timing is `test.length`, `test.delay` and `test.step`)"
                ),
            ));
        }
    }
    if overrides.duration.is_some() {
        return Err(src.error(
            None,
            "duration",
            "a test lasts test.length + 2·test.delay; change `test.length` instead of the \
             duration",
        ));
    }
    let name = raw.name.get_ref().clone();
    if !valid_name(&name) {
        return Err(src.error(
            Some(raw.name.span()),
            "name",
            format!("`{name}` is not a usable scenario name: use letters, digits, `-`, `_`, `.`"),
        ));
    }
    let base_host = match &raw.host {
        Some(h) => host::resolve(src, "host", h, &HostConfig::default())?,
        None => HostConfig::default(),
    };
    let tcp = resolve_flows(
        src,
        std::slice::from_ref(tcp_raw),
        &raw.topology,
        Dur::MAX,
        &base_host,
    )
    .map_err(|e| match e {
        ScenarioError::Invalid(mut i) => {
            if let Some(rest) = i.field.strip_prefix("flows[0]") {
                i.field = format!("tcp{rest}");
            }
            ScenarioError::Invalid(i)
        }
        other => other,
    })?
    .remove(0)
    .flow;
    let t = access::resolve(src, preset, &raw.topology, test, tcp, tcp_raw)?;
    Ok(Scenario {
        name,
        description: raw.description.clone(),
        origin: src.origin.to_owned(),
        seed: overrides.seed.unwrap_or(raw.seed),
        duration: t.timing.total(),
        sample_interval: t.timing.step,
        topology: Topology::Access(Box::new(t)),
        flows: Vec::new(),
        probes: Vec::new(),
    })
}

/// Everything but the topology.
struct Common {
    name: String,
    description: Option<String>,
    origin: String,
    seed: u64,
    duration: Dur,
    sample_interval: Dur,
    flows: Vec<ResolvedFlow>,
    probes: Vec<Probe>,
}

/// A flow as resolved so far (topology presets check it against their own fields).
pub(crate) struct ResolvedFlow {
    pub flow: Flow,
}

impl Common {
    fn finish(self, topology: Topology) -> Scenario {
        Scenario {
            name: self.name,
            description: self.description,
            origin: self.origin,
            seed: self.seed,
            duration: self.duration,
            sample_interval: self.sample_interval,
            topology,
            flows: self.flows.into_iter().map(|f| f.flow).collect(),
            probes: self.probes,
        }
    }
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

fn resolve_common<T>(
    src: &Source<'_>,
    raw: &RawScenario<T>,
    overrides: &Overrides,
) -> Result<Common, ScenarioError> {
    let name = raw.name.get_ref().clone();
    if !valid_name(&name) {
        return Err(src.error(
            Some(raw.name.span()),
            "name",
            format!(
                "`{name}` is not a usable scenario name: use letters, digits, `-`, `_` and `.` \
                 (it names the output directory)"
            ),
        ));
    }
    let duration = match (overrides.duration, &raw.duration) {
        (Some(d), _) => {
            if d == Dur::ZERO {
                return Err(src.error(None, "duration", "the duration override must be positive"));
            }
            d
        }
        (None, Some(d)) => {
            if d.get_ref().0 == Dur::ZERO {
                return Err(src.error(Some(d.span()), "duration", "must be positive"));
            }
            d.get_ref().0
        }
        (None, None) => DEFAULT_DURATION,
    };
    let sample_interval = match &raw.sample_interval {
        Some(s) => {
            let v = s.get_ref().0;
            if v == Dur::ZERO || v > duration {
                return Err(src.error(
                    Some(s.span()),
                    "sample_interval",
                    format!(
                        "must be positive and at most the duration ({}), got {}",
                        fmt_dur(duration),
                        fmt_dur(v)
                    ),
                ));
            }
            v
        }
        None => DEFAULT_SAMPLE_INTERVAL.min(duration),
    };
    let base_host = match &raw.host {
        Some(h) => host::resolve(src, "host", h, &HostConfig::default())?,
        None => HostConfig::default(),
    };
    let flows = resolve_flows(src, &raw.flows, &raw.topology, duration, &base_host)?;
    let probes = resolve_probes(src, &raw.probes, duration)?;
    Ok(Common {
        name,
        description: raw.description.clone(),
        origin: src.origin.to_owned(),
        seed: overrides.seed.unwrap_or(raw.seed),
        duration,
        sample_interval,
        flows,
        probes,
    })
}

/// Start/stop of a flow or probe: start before the end of the run, stop after start.
fn resolve_window(
    src: &Source<'_>,
    what: &str,
    start: Option<&Spanned<TimeValue>>,
    stop: Option<&Spanned<TimeValue>>,
    duration: Dur,
    fallback: std::ops::Range<usize>,
) -> Result<(Time, Option<Time>), ScenarioError> {
    let start_dur = start.map_or(Dur::ZERO, |s| s.get_ref().0);
    if start_dur >= duration {
        let span = Some(start.map_or(fallback, Spanned::span));
        return Err(src.error(
            span,
            format!("{what}.start"),
            format!(
                "starts at {}, not before the end of the run ({})",
                fmt_dur(start_dur),
                fmt_dur(duration)
            ),
        ));
    }
    let stop = match stop {
        Some(s) => {
            let v = s.get_ref().0;
            if v <= start_dur {
                return Err(src.error(
                    Some(s.span()),
                    format!("{what}.stop"),
                    format!(
                        "stop ({}) must be after start ({})",
                        fmt_dur(v),
                        fmt_dur(start_dur)
                    ),
                ));
            }
            Some(Time(v.as_nanos()))
        }
        None => None,
    };
    Ok((Time(start_dur.as_nanos()), stop))
}

fn resolve_flows<T>(
    src: &Source<'_>,
    raw: &[Spanned<RawFlow>],
    topology: &Spanned<T>,
    duration: Dur,
    base_host: &HostConfig,
) -> Result<Vec<ResolvedFlow>, ScenarioError> {
    if raw.is_empty() {
        return Err(src.error(
            Some(topology.span()),
            "flows",
            "a scenario needs at least one flow: add a [[flows]] table with a `controller`",
        ));
    }
    let mut out: Vec<ResolvedFlow> = Vec::new();
    let mut names: HashSet<String> = HashSet::new();
    for (i, spanned) in raw.iter().enumerate() {
        let f = spanned.get_ref();
        let what = format!("flows[{i}]");
        let cc = resolve_cc(src, &what, f)?;
        let (start, stop) = resolve_window(
            src,
            &what,
            f.start.as_ref(),
            f.stop.as_ref(),
            duration,
            spanned.span(),
        )?;
        let size = match &f.size {
            Some(s) if s.get_ref().0 == 0 => {
                return Err(src.error(
                    Some(s.span()),
                    format!("{what}.size"),
                    "must be positive (leave `size` out for a bulk flow)",
                ));
            }
            Some(s) => Some(s.get_ref().0),
            None => None,
        };
        let mss = src.ranged_u32(
            f.mss.as_ref(),
            format!("{what}.mss"),
            MSS_RANGE,
            "bytes",
            DEFAULT_MSS,
        )?;
        let pacing = match f.pacing {
            None | Some(RawPacing::Auto) => PacingMode::Auto,
            Some(RawPacing::On) => PacingMode::On,
            Some(RawPacing::Off) => PacingMode::Off,
        };
        let ecn = resolve_ecn(src, &what, f, &cc)?;
        let initial_window = src.ranged_u32(
            f.initial_window.as_ref(),
            format!("{what}.initial_window"),
            INITIAL_WINDOW_RANGE,
            "segments",
            INITIAL_WINDOW,
        )?;
        let ack_every = src.ranged_u32(
            f.ack_every.as_ref(),
            format!("{what}.ack_every"),
            ACK_EVERY_RANGE,
            "segments",
            DEFAULT_ACK_EVERY,
        )?;
        let delayed_ack = match &f.delayed_ack {
            Some(d) if d.get_ref().0 >= DELAYED_ACK_LIMIT => {
                return Err(src.error(
                    Some(d.span()),
                    format!("{what}.delayed_ack"),
                    format!(
                        "must be less than {} (RFC 1122 §4.2.3.2), got {}",
                        fmt_dur(DELAYED_ACK_LIMIT),
                        fmt_dur(d.get_ref().0)
                    ),
                ));
            }
            Some(d) => d.get_ref().0,
            None => DEFAULT_DELAYED_ACK,
        };
        let count = match &f.count {
            Some(c) => {
                let v = *c.get_ref();
                match usize::try_from(v) {
                    Ok(n) if (1..=MAX_FLOWS).contains(&n) => n,
                    _ => {
                        return Err(src.error(
                            Some(c.span()),
                            format!("{what}.count"),
                            format!("must be between 1 and {MAX_FLOWS}, got {v}"),
                        ));
                    }
                }
            }
            None => 1,
        };
        if out.len() + count > MAX_FLOWS {
            return Err(src.error(
                Some(spanned.span()),
                what,
                format!("too many flows: a scenario may have at most {MAX_FLOWS}"),
            ));
        }
        let access_delay = f.access_delay.as_ref().map_or(Dur::ZERO, |d| d.get_ref().0);
        let trace = f.trace.as_ref().is_some_and(|t| *t.get_ref());
        let host = match &f.host {
            Some(h) => host::resolve(src, &format!("{what}.host"), h, base_host)?,
            None => base_host.clone(),
        };
        let explicit = match &f.name {
            Some(n) if n.get_ref().trim().is_empty() => {
                return Err(src.error(Some(n.span()), format!("{what}.name"), "must not be empty"));
            }
            Some(n) => Some(n),
            None => None,
        };
        for k in 0..count {
            let index = out.len();
            let name = match (explicit, count) {
                (Some(n), 1) => n.get_ref().clone(),
                (Some(n), _) => format!("{}-{}", n.get_ref(), k + 1),
                (None, _) => format!("{}{index}", cc.name()),
            };
            if !names.insert(name.clone()) {
                let span = explicit.map_or(spanned.span(), Spanned::span);
                return Err(src.error(
                    Some(span),
                    format!("{what}.name"),
                    format!("a flow named `{name}` already exists; flow names must be unique"),
                ));
            }
            out.push(ResolvedFlow {
                flow: Flow {
                    name,
                    cc: cc.clone(),
                    start,
                    stop,
                    size,
                    access_delay,
                    mss,
                    pacing,
                    ecn,
                    initial_window,
                    ack_every,
                    delayed_ack,
                    trace,
                    host: host.clone(),
                },
            });
        }
    }
    Ok(out)
}

/// `ecn`, default off; a controller that requires a mode (TCP Prague: L4S) gets it by default
/// and rejects any other.
fn resolve_ecn(
    src: &Source<'_>,
    what: &str,
    f: &RawFlow,
    cc: &CcSpec,
) -> Result<EcnMode, ScenarioError> {
    let required = cc.build(0).ecn_requirement();
    let Some(v) = &f.ecn else {
        return Ok(required.unwrap_or_default());
    };
    let Some(mode) = EcnMode::from_name(v.get_ref()) else {
        return Err(src.error(
            Some(v.span()),
            format!("{what}.ecn"),
            unknown_choice("ECN mode", v.get_ref(), &EcnMode::NAMES),
        ));
    };
    match required {
        Some(r) if r != mode => Err(src.error(
            Some(v.span()),
            format!("{what}.ecn"),
            format!(
                "controller `{}` requires ecn = \"{}\"; remove `ecn` or set it to \"{}\"",
                cc.name(),
                r.name(),
                r.name()
            ),
        )),
        _ => Ok(mode),
    }
}

/// The flow's controller with its own keys applied (see [`controllers`]).
fn resolve_cc(src: &Source<'_>, what: &str, f: &RawFlow) -> Result<CcSpec, ScenarioError> {
    controllers::resolve(
        src,
        what,
        f.controller.get_ref(),
        f.controller.span(),
        &f.params,
    )
}

fn resolve_probes(
    src: &Source<'_>,
    raw: &[Spanned<RawProbe>],
    duration: Dur,
) -> Result<Vec<Probe>, ScenarioError> {
    if raw.len() > MAX_PROBES {
        return Err(src.error(
            Some(raw[MAX_PROBES].span()),
            format!("probes[{MAX_PROBES}]"),
            format!("too many probes: a scenario may have at most {MAX_PROBES}"),
        ));
    }
    let unnamed = raw.iter().filter(|p| p.get_ref().name.is_none()).count();
    let mut names: HashSet<String> = HashSet::new();
    let mut out = Vec::with_capacity(raw.len());
    let mut unnamed_seen = 0;
    for (j, spanned) in raw.iter().enumerate() {
        let p = spanned.get_ref();
        let what = format!("probes[{j}]");
        let name = match &p.name {
            Some(n) if n.get_ref().trim().is_empty() => {
                return Err(src.error(Some(n.span()), format!("{what}.name"), "must not be empty"));
            }
            Some(n) => n.get_ref().clone(),
            None if unnamed == 1 => DEFAULT_PROBE_NAME.to_owned(),
            None => {
                unnamed_seen += 1;
                format!("{DEFAULT_PROBE_NAME} {unnamed_seen}")
            }
        };
        if !names.insert(name.clone()) {
            let span = p.name.as_ref().map_or(spanned.span(), Spanned::span);
            return Err(src.error(
                Some(span),
                format!("{what}.name"),
                format!("a probe named `{name}` already exists; probe names must be unique"),
            ));
        }
        let interval = match &p.interval {
            Some(i) if i.get_ref().0 == Dur::ZERO => {
                return Err(src.error(
                    Some(i.span()),
                    format!("{what}.interval"),
                    "must be positive",
                ));
            }
            Some(i) => i.get_ref().0,
            None => DEFAULT_PROBE_INTERVAL,
        };
        let size = match &p.size {
            Some(s) => {
                let ByteSize(v) = *s.get_ref();
                match u32::try_from(v) {
                    Ok(v) if PROBE_SIZE_RANGE.contains(&v) => v,
                    _ => {
                        return Err(src.error(
                            Some(s.span()),
                            format!("{what}.size"),
                            format!(
                                "must be in {}..={} bytes (wire size), got {v}",
                                PROBE_SIZE_RANGE.start(),
                                PROBE_SIZE_RANGE.end()
                            ),
                        ));
                    }
                }
            }
            None => DEFAULT_PROBE_SIZE,
        };
        let (start, stop) = resolve_window(
            src,
            &what,
            p.start.as_ref(),
            p.stop.as_ref(),
            duration,
            spanned.span(),
        )?;
        out.push(Probe {
            name,
            interval,
            size,
            access_delay: p.access_delay.as_ref().map_or(Dur::ZERO, |d| d.get_ref().0),
            start,
            stop,
        });
    }
    Ok(out)
}

impl Scenario {
    /// Base (propagation) RTT of flow `i`, or `None` if there is no such flow.
    #[must_use]
    pub fn flow_base_rtt(&self, i: usize) -> Option<Dur> {
        let f = self.flows.get(i)?;
        match &self.topology {
            Topology::Dumbbell(d) => Some(d.base_rtt(f.access_delay)),
            Topology::Access(_) => None,
        }
    }

    /// The simulator input for this scenario. Nodes, links, flows and probes are laid out by the
    /// simulator's topology builder for the preset (see [`Dumbbell::builder`] and
    /// [`cclab_sim::topology`] for the layout); flow `i` of [`Scenario::flows`] is `FlowId(i)` and
    /// probe `j` is `ProbeId(j)`.
    #[must_use]
    pub fn to_sim_config(&self) -> SimConfig {
        match &self.topology {
            Topology::Dumbbell(d) => d.builder(self).build(),
            Topology::Access(a) => a.sim_config(self.seed).0,
        }
    }

    /// A few lines describing the scenario as resolved (for `cclab check`).
    #[must_use]
    pub fn describe(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "scenario `{}` ({}): seed {}, duration {}, samples every {}",
            self.name,
            self.origin,
            self.seed,
            fmt_dur(self.duration),
            fmt_dur(self.sample_interval)
        );
        if let Some(d) = &self.description {
            let _ = writeln!(s, "  {}", d.trim());
        }
        match &self.topology {
            Topology::Dumbbell(d) => {
                let _ = writeln!(s, "{}", d.describe());
            }
            Topology::Access(a) => {
                let _ = writeln!(s, "{}", a.describe());
            }
        }
        for (i, f) in self.flows.iter().enumerate() {
            let rtt = self.flow_base_rtt(i).unwrap_or_default();
            let what = f
                .size
                .map_or_else(|| "bulk".to_owned(), |b| format!("{b} bytes"));
            let stop = f
                .stop
                .map_or_else(String::new, |t| format!(" until {}", fmt_dur(Dur(t.0))));
            // Receiver and window settings only when they differ from the defaults.
            let mut tcp = String::new();
            if f.initial_window != INITIAL_WINDOW {
                let _ = write!(tcp, "  initial window {}", f.initial_window);
            }
            if f.ack_every != DEFAULT_ACK_EVERY {
                let _ = write!(tcp, "  ack every {}", f.ack_every);
            }
            if f.delayed_ack != DEFAULT_DELAYED_ACK {
                let _ = write!(tcp, "  delayed ACK {}", fmt_dur(f.delayed_ack));
            }
            if f.ecn != EcnMode::Off {
                let _ = write!(tcp, "  ecn {}", f.ecn.name());
            }
            let trace = if f.trace { "  traced" } else { "" };
            let _ = writeln!(
                s,
                "  flow {:<12} {:<8} base RTT {:>9}  from {}{stop}  {what}  mss {}{tcp}{trace}",
                f.name,
                f.cc.name(),
                fmt_dur(rtt),
                fmt_dur(Dur(f.start.0)),
                f.mss
            );
        }
        for p in &self.probes {
            let rtt = match &self.topology {
                Topology::Dumbbell(d) => d.base_rtt(p.access_delay),
                Topology::Access(a) => a.base_rtt(0),
            };
            let _ = writeln!(
                s,
                "  probe {:<16} every {}  {} bytes  base RTT {}",
                p.name,
                fmt_dur(p.interval),
                p.size,
                fmt_dur(rtt)
            );
        }
        s
    }
}

/// Wire bytes of a full-size data segment of `mss` payload bytes.
pub(crate) fn wire_bytes(mss: u32) -> u64 {
    u64::from(mss) + u64::from(TCP_IP_HEADER_BYTES)
}

#[cfg(test)]
mod tests;
