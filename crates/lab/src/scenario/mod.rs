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
//! controller = "cubic"            # see `controllers::ALL`
//! beta = 0.7                      # and any key the controller declares (`controllers`):
//!                                 # slow_start, c, fast_convergence, … for cubic
//! start = "0s"   stop = "20s"     # optional; stop > start
//! size = "10MB"                   # optional; absent = bulk
//! access_delay = "5ms"            # one-way, default 0: base RTT = 2·(delay + access_delay)
//! mss = 1448                      # 536..=9000
//! pacing = "auto"                 # auto | on | off
//! ecn = "off"                     # off | classic (RFC 3168) | l4s (ECT(1), Accurate ECN)
//! initial_window = 10             # segments, 1..=1000; default 10 (TCP_INIT_CWND, RFC 6928)
//! rcv_wnd = "64KiB"               # receiver's fixed advertised window; default unlimited
//! read_rate = "10Mbit"            # receiving application reads at this rate; default: at once
//! read_chunk = "128KiB"           # with read_rate: largest read; default 128 KiB (iperf3)
//! rcvbuf = "1MiB"                 # with read_rate: sk_rcvbuf, window = half; default tcp_rmem[1]
//! ack_every = 2                   # 1..=64; default 2 (RFC 5681 §4.2), after 16 quick ACKs
//! delayed_ack = "40ms"            # 0 ≤ t < 500 ms (RFC 1122); default 40 ms (TCP_DELACK_MIN)
//! undo = true  frto = true  rack_reo_adapt = true   # spurious-reduction undo, F-RTO (RFC 5682),
//!                                 # RACK's DSACK-adaptive reordering window; Linux: all on
//! count = 2                       # replicate; names get -1, -2, … (unnamed: <controller><index>)
//! name = "bulk"                   # optional, default <controller><index>
//! trace = true                    # optional, default false: per-ACK sender trace in trace.csv
//! handshake = true                # optional, default true: SYN, SYN-ACK, then data (fct_s from the SYN)
//! fast_open = false               # optional, default false: TCP Fast Open (needs handshake)
//! requests = 0                    # optional: request/response exchanges, each response `size`
//! request_size = "200B"           # optional (with requests): one segment of at most mss
//! think_time = "0ms"              # optional (with requests): pause before the next request
//! persistent = true               # optional (with requests): false = a connection per request
//! slow_start_after_idle = true    # optional: Linux restart after idle (tcp_cwnd_restart)
//! [flows.host]                    # optional: this flow's sending host, on top of [host]
//! qdisc = "fq"                    # see the `host` module for every key
//!
//! [host]                          # optional: every sending host (TSQ, qdisc, TSO, CPU schedule)
//! pacing_shift = 10  qdisc = "pfifo_fast"  tso = "post-5.18"  cpu_share = 0.3  cpu_timeslice = "10ms"
//!
//! [[probes]]                      # optional ping probes on their own host pair
//! name = "Ping (ms) ICMP"  interval = "200ms"  size = 64  access_delay = "0ms"  start = 0  stop = 30
//!
//! [[udp]]                         # optional UDP sources without congestion control (`udp`)
//! kind = "cbr"  rate = "5Mbit"  size = 1200  dscp = 46  src = "s0"  dst = "r0"  reverse = false
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
pub mod commands;
pub mod controllers;
pub mod dumbbell;
pub mod elements;
pub mod error;
mod flow;
pub mod host;
pub mod params;
pub mod presets;
pub mod profiles;
pub mod qdisc;
pub mod quicly;
pub mod rates;
mod raw;
pub mod stack;
mod timing;
pub mod udp;
pub mod wifi;
pub mod workload;

use std::fmt::Write as _;
use std::path::Path;

use cclab_cc::EcnMode;
use cclab_sim::{Dur, HostConfig, INITIAL_WINDOW, SimConfig, TCP_IP_HEADER_BYTES};
use toml::Spanned;

pub use access::AccessTest;
pub use dumbbell::DumbbellPreset;
pub use error::{Invalid, ScenarioError};
pub(crate) use flow::ResolvedFlow;
pub use flow::{Flow, Probe};
use flow::{resolve_flows, resolve_probes};

use crate::record::TestInfo;
use crate::suite::{SeriesSpec, Timing};
use crate::units::fmt_dur;
use error::{FileKind, Source, unknown_choice};
use raw::{PresetOnly, RawAccess, RawScenario};

/// Topology presets a scenario may name in `topology.preset` (declared in [`presets::ALL`]).
pub const PRESETS: &[&str] = &[
    "dumbbell",
    "access",
    "rtt_fair",
    "wifi_hybrid",
    "wifi",
    "quicly",
];
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
/// Most samples one time series may have: `duration / sample_interval` (or
/// `test.length + 2·test.delay` over `test.step`). Every sample is kept in memory until the run
/// ends; a million is over five hours at Flent's 20 ms minimum step.
pub const MAX_SAMPLES: u64 = 1_000_000;
/// Most sample rows a run may record: samples × (flows + 1 monitored queue), 5,368,709: as many
/// as a study's run record can hold within the store's file bound at the most bytes a row can
/// take ([`crate::input::MAX_STORE_FILE_BYTES`] / [`crate::input::RECORD_BYTES_PER_SAMPLE_ROW`]),
/// so a run that `check` accepts is never one whose record the store cannot read.
pub const MAX_SAMPLE_ROWS: u64 =
    crate::input::MAX_STORE_FILE_BYTES / crate::input::RECORD_BYTES_PER_SAMPLE_ROW;
/// Most packets one probe may send (`(stop − start) / interval`); every answered one is kept.
pub const MAX_PROBE_PACKETS: u64 = 1_000_000;
/// Most packets all probes of a scenario may send together.
pub const MAX_PROBE_PACKETS_TOTAL: u64 = 10_000_000;
/// Most firings of one periodic AQM timer in a run (`duration / tupdate` of PIE and DualPI2):
/// each is an event, so `tupdate = "1ns"` would otherwise keep a run busy for hours.
pub const MAX_TIMER_FIRINGS: u64 = 10_000_000;
/// Largest drop-tail buffer in bytes (1 GiB, about 740 000 full-size packets). A full queue
/// and the window that fills it (a loss-based sender's scoreboard holds every packet in flight)
/// live in memory: a 1000 TB buffer let a Reno flow grow to gigabytes and 30 s of RTT.
pub const MAX_BUFFER_BYTES: u64 = 1 << 30;
/// Largest drop-tail buffer in packets.
pub const MAX_BUFFER_PACKETS: u64 = 1_000_000;
/// Longest simulated duration of a run (`duration`, `--duration`, and a test's `length + 2·delay`):
/// one day. Sample counts have their own bounds, but a run's events (so its CPU time: a 100
/// Mbit/s flow is about a million events per simulated second), the RTO times `summary.json`
/// lists and a traced flow's `trace.csv` (a row per ACK) grow with simulated time, and so does
/// every byte and packet counter.
pub const MAX_DURATION: Dur = Dur::from_secs(86_400);
/// Longest scenario or study name: it names a directory, and file systems stop at 255 bytes.
pub const MAX_NAME_LEN: usize = 128;

/// Command-line overrides applied while checking a scenario.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Overrides {
    /// Replace the file's `seed`.
    pub seed: Option<u64>,
    /// Replace the file's `duration` (must be positive).
    pub duration: Option<Dur>,
}

/// A checked scenario, every value in simulator units.
#[derive(Clone, Debug)]
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
    /// Middlebox elements (`[[elements]]`), in file order.
    pub elements: Vec<elements::PlacedElement>,
    /// Links whose rate changes over time (`[[links]]` with `rate`).
    pub shaped_links: Vec<rates::ShapedLink>,
    /// Links with a jitter in their delay line (`[[links]]` with `delay_model`).
    pub jittered_links: Vec<rates::JitteredLink>,
    /// UDP sources without congestion control (`[[udp]]`), in file order.
    pub udp: Vec<udp::UdpSource>,
    /// Programs an emulated run starts on hosts (`[[commands]]`; the simulator ignores them).
    pub commands: Vec<cclab_emu::HostCommand>,
    /// The hosts' timing model (`[timing]`; `None`: ideal timing).
    pub timing: Option<cclab_sim::host::timing::HostTiming>,
}

/// A resolved topology preset: one value of the preset's own type behind
/// [`presets::Network`], so nothing outside the preset's file matches on which preset it is.
#[derive(Debug)]
pub struct Topology(Box<dyn presets::Network>);

impl Clone for Topology {
    fn clone(&self) -> Self {
        Topology(self.0.clone_box())
    }
}

impl Topology {
    /// Wrap a preset's resolved network.
    pub fn new(network: impl presets::Network + 'static) -> Self {
        Topology(Box::new(network))
    }

    /// The preset's name, as written in `topology.preset`.
    #[must_use]
    pub fn preset(&self) -> &'static str {
        self.0.preset()
    }

    /// The resolved network as its preset's own type (`DumbbellPreset`, `AccessTest`), if it is
    /// one.
    #[must_use]
    pub fn get<T: presets::Network + 'static>(&self) -> Option<&T> {
        self.0.as_any().downcast_ref()
    }
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
    let text = crate::input::read_text(path).map_err(|source| ScenarioError::Read {
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
    parse_in(text, origin, None, overrides)
}

/// [`parse`], with the files the scenario names (a `[[links]]` trace) read relative to `dir`
/// instead of the directory of `origin` (a study's configurations: the study's directory).
///
/// # Errors
/// As [`parse`].
pub fn parse_in(
    text: &str,
    origin: &str,
    dir: Option<&Path>,
    overrides: &Overrides,
) -> Result<Scenario, ScenarioError> {
    match parse_checked(text, origin, dir, overrides) {
        // A problem only the `--duration` override makes (a start, a step or a command after
        // the shorter end): the message names the override, not only the key it moved past.
        Err(ScenarioError::Invalid(mut e))
            if let Some(d) = overrides.duration
                && e.field != "--duration"
                && parse_checked(
                    text,
                    origin,
                    dir,
                    &Overrides {
                        duration: None,
                        ..*overrides
                    },
                )
                .is_ok() =>
        {
            let _ = write!(
                e.message,
                " (the run lasts {} as `--duration` asks, instead of the file's duration)",
                fmt_dur(d)
            );
            Err(ScenarioError::Invalid(e))
        }
        r => r,
    }
}

/// [`parse_in`] without naming the `--duration` override in its errors.
fn parse_checked(
    text: &str,
    origin: &str,
    dir: Option<&Path>,
    overrides: &Overrides,
) -> Result<Scenario, ScenarioError> {
    let src = Source { text, origin };
    let head: PresetOnly = toml::from_str(text).map_err(|e| {
        src.wrong_kind(FileKind::Scenario)
            .unwrap_or_else(|| src.toml_error(&e))
    })?;
    let preset = head.topology.get_ref().preset.clone();
    let mut scenario = match presets::find(preset.get_ref()) {
        Some(p) => (p.parse)(&src, text, overrides)?,
        None => {
            return Err(src.error(
                Some(preset.span()),
                "topology.preset",
                unknown_choice("preset", preset.get_ref(), PRESETS),
            ));
        }
    };
    // Elements sit on the preset's nodes, known once the network is built.
    let flight = scenario.topology.0.full_flight_packets(&scenario);
    scenario.elements = elements::resolve(&src, &scenario.to_sim_config(), &flight)?;
    (scenario.shaped_links, scenario.jittered_links) =
        rates::resolve(&src, dir, &scenario.to_sim_config())?;
    // UDP sources run between the preset's hosts, known once the network is built.
    scenario.udp = udp::resolve(&src, &scenario.to_sim_config())?;
    scenario.commands = commands::resolve(&src, &scenario.to_sim_config())?;
    scenario.timing = timing::resolve(&src)?;
    let cfg = scenario.to_sim_config();
    // Periodic AQM timers (PIE's and DualPI2's probability update every `tupdate`) are events
    // of their own: bounded like the samples.
    for l in &cfg.links {
        let tupdate = match &l.queue {
            cclab_sim::QueueConfig::Aqm(cclab_sim::AqmConfig::Pie(p)) => p.tupdate,
            cclab_sim::QueueConfig::Aqm(cclab_sim::AqmConfig::DualPi2(p)) => p.tupdate,
            _ => Dur::ZERO,
        };
        let n = count_in(cfg.duration, tupdate);
        if tupdate > Dur::ZERO && n > MAX_TIMER_FIRINGS {
            let (span, field) = tupdate_key(text, tupdate);
            return Err(src.error(
                span,
                field,
                format!(
                    "link `{}`: a probability update every {} for {} makes {n} updates; at \
                     most {MAX_TIMER_FIRINGS} are allowed: use a longer `tupdate`",
                    l.name,
                    fmt_dur(tupdate),
                    fmt_dur(cfg.duration)
                ),
            ));
        }
    }
    // Whatever the simulator would refuse at the start of a run is refused here, so `check`
    // and a study's parse find it before any run.
    if let Err(e) = cclab_sim::Simulation::check(&cfg) {
        return Err(src.error(None, "", format!("the simulator rejects the scenario: {e}")));
    }
    Ok(scenario)
}

/// Where the file sets the PIE or DualPI2 `tupdate` of value `tupdate`: the span and path of the
/// first qdisc key (`topology.qdisc`, `up_qdisc` or `down_qdisc`) whose `tupdate` is that value.
/// A default `tupdate` (15 ms, 16 ms) never exceeds [`MAX_TIMER_FIRINGS`] in a day, so one is
/// written; failing that (a file that cannot be parsed again), `topology.qdisc.tupdate`.
fn tupdate_key(text: &str, tupdate: Dur) -> (Option<std::ops::Range<usize>>, String) {
    let written = ["qdisc", "up_qdisc", "down_qdisc"].iter().find_map(|key| {
        let span = error::span_of(text, &["topology", key, "tupdate"])?;
        let value = text
            .get(span.clone())?
            .trim()
            .trim_matches(|c| c == '"' || c == '\'');
        (crate::units::parse_duration(value).ok() == Some(tupdate))
            .then(|| (Some(span), format!("topology.{key}.tupdate")))
    });
    written.unwrap_or_else(|| (None, "topology.qdisc.tupdate".to_owned()))
}

/// A scenario with a `[test]` (presets `access`, `rtt_fair` and `wifi_hybrid`, see [`access`]).
pub(super) fn parse_test(
    src: &Source<'_>,
    raw: &RawScenario<RawAccess>,
    preset: &'static str,
    overrides: &Overrides,
    wifi: Option<wifi::WifiClient>,
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
            "--duration",
            "a test lasts test.length + 2·test.delay; change `test.length` instead of the \
             duration",
        ));
    }
    let name = raw.name.get_ref().clone();
    if !valid_name(&name) {
        return Err(src.error(
            Some(raw.name.span()),
            "name",
            name_problem("scenario", &name),
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
        overrides.seed.unwrap_or(raw.seed),
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
    let mut t = access::resolve(src, preset, &raw.topology, test, tcp, tcp_raw)?;
    t.wifi = wifi;
    Ok(Scenario {
        name,
        description: raw.description.clone(),
        origin: src.origin.to_owned(),
        seed: overrides.seed.unwrap_or(raw.seed),
        duration: t.timing.total(),
        sample_interval: t.timing.step,
        topology: Topology::new(t),
        flows: Vec::new(),
        probes: Vec::new(),
        elements: Vec::new(),
        shaped_links: Vec::new(),
        jittered_links: Vec::new(),
        udp: Vec::new(),
        commands: Vec::new(),
        timing: None,
    })
}

/// Everything but the topology.
pub(super) struct Common {
    name: String,
    description: Option<String>,
    origin: String,
    seed: u64,
    duration: Dur,
    sample_interval: Dur,
    flows: Vec<ResolvedFlow>,
    probes: Vec<Probe>,
}

impl Common {
    pub(super) fn finish(self, topology: Topology) -> Scenario {
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
            elements: Vec::new(),
            shaped_links: Vec::new(),
            jittered_links: Vec::new(),
            udp: Vec::new(),
            commands: Vec::new(),
            timing: None,
        }
    }
}

/// How many instants spaced `interval` apart fall in `span` (rounded up): the samples or probe
/// packets a duration makes.
pub(crate) fn count_in(span: Dur, interval: Dur) -> u64 {
    span.as_nanos().div_ceil(interval.as_nanos().max(1))
}

/// A usable scenario or study name: a directory name of letters, digits, `-`, `_` and `.`, not
/// hidden, at most [`MAX_NAME_LEN`] bytes.
pub(crate) fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME_LEN
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// Why a drop-tail buffer that resolves to `limit` is too large, if it is.
pub(crate) fn buffer_too_large(limit: cclab_sim::QueueLimit) -> Option<String> {
    match limit {
        cclab_sim::QueueLimit::Bytes(b) if b > MAX_BUFFER_BYTES => Some(format!(
            "resolves to {b} bytes; a buffer may hold at most {MAX_BUFFER_BYTES} bytes (1 GiB)"
        )),
        cclab_sim::QueueLimit::Packets(p) if u64::from(p) > MAX_BUFFER_PACKETS => Some(format!(
            "{p} packets; a buffer may hold at most {MAX_BUFFER_PACKETS} packets"
        )),
        _ => None,
    }
}

/// Why `name` is not a usable `what` (scenario, study) name.
pub(crate) fn name_problem(what: &str, name: &str) -> String {
    if name.len() > MAX_NAME_LEN {
        let head: String = name.chars().take(20).collect();
        return format!(
            "a {what} name names the output directory and may have at most {MAX_NAME_LEN} \
             bytes; `{head}…` has {}",
            name.len()
        );
    }
    format!(
        "`{name}` is not a usable {what} name: use letters, digits, `-`, `_` and `.` (it names \
         the output directory)"
    )
}

/// Where a Flent-equivalent `[test]` runs (the message for presets that take `[[flows]]`).
pub(super) const TEST_PRESETS: &str =
    "a Flent-equivalent [test] runs on topology preset `access`, `rtt_fair` or `wifi_hybrid`";

/// Refuse a Flent `[test]` (message `test_message`) and its `[tcp]` flow template in a preset
/// that takes `[[flows]]` (`who`, e.g. "a dumbbell", names the preset in the message).
pub(super) fn refuse_test_sections<T>(
    src: &Source<'_>,
    raw: &RawScenario<T>,
    test_message: &str,
    who: &str,
) -> Result<(), ScenarioError> {
    if let Some(t) = &raw.test {
        return Err(src.error(Some(t.span()), "test", test_message));
    }
    if let Some(t) = &raw.tcp {
        return Err(src.error(
            Some(t.span()),
            "tcp",
            format!("[tcp] is the flow template of a [test]; {who} takes [[flows]]"),
        ));
    }
    Ok(())
}

pub(super) fn resolve_common<T>(
    src: &Source<'_>,
    raw: &RawScenario<T>,
    overrides: &Overrides,
) -> Result<Common, ScenarioError> {
    let name = raw.name.get_ref().clone();
    if !valid_name(&name) {
        return Err(src.error(
            Some(raw.name.span()),
            "name",
            name_problem("scenario", &name),
        ));
    }
    let duration = match (overrides.duration, &raw.duration) {
        (Some(d), _) => {
            if d == Dur::ZERO {
                return Err(src.error(
                    None,
                    "--duration",
                    "the duration override must be positive",
                ));
            }
            if d > MAX_DURATION {
                return Err(src.error(
                    None,
                    "--duration",
                    format!(
                        "the duration override {} is longer than the {} (one day) a run may \
                         simulate",
                        fmt_dur(d),
                        fmt_dur(MAX_DURATION)
                    ),
                ));
            }
            d
        }
        (None, Some(d)) => {
            let v = d.get_ref().0;
            if v == Dur::ZERO {
                return Err(src.error(Some(d.span()), "duration", "must be positive"));
            }
            if v > MAX_DURATION {
                return Err(src.error(
                    Some(d.span()),
                    "duration",
                    format!(
                        "must be at most {} (one day), got {}",
                        fmt_dur(MAX_DURATION),
                        fmt_dur(v)
                    ),
                ));
            }
            v
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
            let n = count_in(duration, v);
            if n > MAX_SAMPLES {
                return Err(src.error(
                    Some(s.span()),
                    "sample_interval",
                    format!(
                        "{} over {} makes {n} samples per series; at most {MAX_SAMPLES} are \
                         allowed: use a longer interval",
                        fmt_dur(v),
                        fmt_dur(duration)
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
    let flows = resolve_flows(
        src,
        &raw.flows,
        &raw.topology,
        duration,
        &base_host,
        overrides.seed.unwrap_or(raw.seed),
    )?;
    let probes = resolve_probes(src, &raw.probes, duration)?;
    // The flows as declared, not as drawn: a scenario valid with one seed is valid with all.
    let declared = flow::declared_flows(&raw.flows);
    let rows = count_in(duration, sample_interval).saturating_mul(declared + 1);
    if rows > MAX_SAMPLE_ROWS {
        return Err(src.error(
            raw.sample_interval.as_ref().map(Spanned::span),
            "sample_interval",
            format!(
                "{declared} flows sampled every {} for {} make {rows} sample rows; at most \
                 {MAX_SAMPLE_ROWS} (samples × (flows + 1)) are allowed: use a longer interval or \
                 fewer flows",
                fmt_dur(sample_interval),
                fmt_dur(duration)
            ),
        ));
    }
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

/// One run of a scenario, as a study records it (see [`Scenario::run_plan`]).
#[derive(Clone, Debug)]
pub struct RunPlan {
    /// The simulator input.
    pub sim: SimConfig,
    /// The series of the run's flows, then probes.
    pub series: Vec<SeriesSpec>,
    /// Sampling grid and transfer period.
    pub timing: Timing,
    /// Flent metadata of a test (`None` for a dumbbell).
    pub test: Option<TestInfo>,
}

impl Scenario {
    /// Base (propagation) RTT of flow `i`, or `None` if there is no such flow (or the preset
    /// places flows itself).
    #[must_use]
    pub fn flow_base_rtt(&self, i: usize) -> Option<Dur> {
        let f = self.flows.get(i)?;
        self.topology.0.endpoint_base_rtt(f.access_delay)
    }

    /// The simulator input for this scenario, laid out by the simulator's topology builder for
    /// the preset (see [`cclab_sim::topology`] for the layout); flow `i` of [`Scenario::flows`]
    /// is `FlowId(i)` and probe `j` is `ProbeId(j)`.
    #[must_use]
    pub fn to_sim_config(&self) -> SimConfig {
        let mut cfg = self.topology.0.sim_config(self, self.seed);
        elements::attach(&self.elements, &mut cfg);
        rates::attach(&self.shaped_links, &mut cfg);
        rates::attach_jitter(&self.jittered_links, &mut cfg);
        udp::attach(&self.udp, &mut cfg);
        timing::attach(self.timing, &mut cfg);
        cfg
    }

    /// What a run of this scenario with `seed` simulates and records: the simulator input, the
    /// series of its flows and probes (a Flent test's names and kinds; a dumbbell's flows as
    /// uploads and probes as ICMP pings), the sampling timing and, for a test, its Flent
    /// metadata (`label` names the configuration in the title).
    #[must_use]
    pub fn run_plan(&self, seed: u64, label: &str) -> RunPlan {
        let mut plan = self.topology.0.run_plan(self, seed, label);
        elements::attach(&self.elements, &mut plan.sim);
        rates::attach(&self.shaped_links, &mut plan.sim);
        rates::attach_jitter(&self.jittered_links, &mut plan.sim);
        udp::attach(&self.udp, &mut plan.sim);
        timing::attach(self.timing, &mut plan.sim);
        plan
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
        let _ = writeln!(s, "{}", self.topology.0.describe());
        // The names `[[commands]]` and `cclab emulate --exec HOST@…` take.
        let cfg = self.to_sim_config();
        let hosts: Vec<&str> = cfg
            .nodes
            .iter()
            .filter(|n| n.kind == cclab_sim::NodeKind::Host)
            .map(|n| n.name.as_str())
            .collect();
        let _ = writeln!(s, "  hosts: {}", hosts.join(", "));
        for e in &self.elements {
            let _ = writeln!(s, "  element on {}: {:?}", e.node, e.spec);
        }
        for l in &self.shaped_links {
            let _ = writeln!(s, "  {}", rates::describe(l));
        }
        for j in &self.jittered_links {
            let _ = writeln!(s, "  link {}: jitter {:?}", j.link, j.jitter);
        }
        for u in &self.udp {
            let stop = u
                .stop
                .map_or_else(String::new, |t| format!(" until {}", fmt_dur(t)));
            let _ = writeln!(
                s,
                "  udp {:<14} {:<7} {} bit/s  {} → {}  {} bytes  dscp {}  from {}{stop}",
                u.name,
                u.pattern.name(),
                u.pattern.rate_bps(),
                u.src,
                u.dst,
                u.size,
                u.dscp,
                fmt_dur(u.start)
            );
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
            if let Some(w) = f.rcv_wnd {
                let _ = write!(tcp, "  rcv_wnd {w} bytes");
            }
            if let Some(r) = &f.reader {
                let _ = write!(tcp, "  reads {} bit/s", r.rate_bps);
                if let Some(b) = r.rcvbuf {
                    let _ = write!(tcp, " rcvbuf {b} bytes");
                }
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
            let rtt = self
                .topology
                .0
                .endpoint_base_rtt(p.access_delay)
                .unwrap_or_default();
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
