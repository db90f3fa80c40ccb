//! The `access` and `rtt_fair` presets with a `[test]`: a Flent-equivalent test between a client
//! behind a bidirectional access bottleneck and one or more servers.
//!
//! Contract: [`resolve`] checks the `[topology]`, `[test]` and `[tcp]` tables and returns an
//! [`AccessTest`]; [`AccessTest::sim_config`] builds the run with
//! [`cclab_sim::access::Access`] (layout documented there) and [`crate::suite::populate`]. A
//! scenario with one of these presets must have a `[test]` and a `[tcp]` table and no
//! `[[flows]]`, `[[probes]]`, `duration` or `sample_interval` (the test defines them).
//!
//! ```toml
//! [test]
//! name = "rrul"            # tcp_upload | tcp_8up | rrul | rrul_be | rtt_fair
//! length = "60s"           # Flent -l (default 60 s)
//! delay = "5s"             # Flent -d (default 5 s)
//! step = "200ms"           # Flent -s (default 0.2 s)
//! start_jitter = "10ms"    # bulk transfers start within [delay, delay + start_jitter)
//!
//! [tcp]                    # every TCP flow of the test, both directions
//! controller = "bbr_tas"   # and any controller parameter, mss, pacing, initial_window, …
//!
//! [topology]
//! preset = "access"        # or "rtt_fair" (default server_delays 0, 10, 30, 70 ms)
//! rate = "25Mbit"          # both directions, or up_rate / down_rate
//! delay = "5ms"            # one-way delay of the access line
//! buffer = "1bdp"          # both directions, or up_buffer / down_buffer; BDP at the
//!                          # shortest base RTT of the test's servers
//! qdisc = "fq_codel"       # both directions, or up_qdisc / down_qdisc (which win over
//!                          # qdisc); a name or a table, see the `qdisc` module; default fifo
//! loss = 0.0               # uplink; down_loss for the downlink
//! server_delays = ["0ms"]  # one-way delay behind the access line, per server
//! server_rate = "1Gbit"    # servers' links (default: their NICs only)
//! nic_rate = "10Gbit"      # every host's NIC
//! driver_queue = 1000
//! ```

use cclab_sim::access::Access;
use cclab_sim::{AqmConfig, Dur, LossConfig, NodeId, QueueLimit, SimConfig};
use toml::Spanned;

use super::dumbbell::{
    DefaultBuffer, buffer_with_aqm, default_buffer_too_large, default_buffer_too_small,
};
use super::error::{Source, unknown_choice};
use super::params::{Entry, Kind, Param};
use super::presets::{
    BUFFER, DRIVER_QUEUE, DURATION, NIC_RATE, Network, PROBABILITY, Preset, QDISC, RATE, key,
};
use super::raw::{RawAccess, RawFlow, RawQdisc, RawScenario, RawTest};
use super::{Flow, Overrides, RunPlan, Scenario, ScenarioError, qdisc, wire_bytes};
use crate::record::TestInfo;
use crate::suite::{self, FlentTest, TESTS, Timing};
use crate::units::{BufferSpec, TimeValue, fmt_dur, fmt_rate};

/// Keys of the `access` preset (`rtt_fair` has the same, with four servers by default).
pub(super) const ACCESS_KEYS: &[Param] = &[
    key(
        "rate",
        RATE,
        "none",
        "access rate, both directions (required unless up_rate and down_rate are given)",
        "Flent test setups",
    ),
    key("up_rate", RATE, "rate", "uplink rate", "—"),
    key("down_rate", RATE, "rate", "downlink rate", "—"),
    key(
        "delay",
        DURATION,
        "required",
        "one-way delay of the access line",
        "—",
    ),
    key(
        "buffer",
        BUFFER,
        "1bdp",
        "both directions' buffers; BDP at the shortest base RTT of the servers",
        "the BDP rule of thumb",
    ),
    key("up_buffer", BUFFER, "buffer", "uplink buffer", "—"),
    key("down_buffer", BUFFER, "buffer", "downlink buffer", "—"),
    key(
        "qdisc",
        QDISC,
        "fifo",
        "both directions' queue discipline",
        "—",
    ),
    key("up_qdisc", QDISC, "qdisc", "uplink queue discipline", "—"),
    key(
        "down_qdisc",
        QDISC,
        "qdisc",
        "downlink queue discipline",
        "—",
    ),
    key(
        "loss",
        PROBABILITY,
        "0",
        "Bernoulli loss on the uplink",
        "—",
    ),
    key(
        "down_loss",
        PROBABILITY,
        "0",
        "Bernoulli loss on the downlink",
        "—",
    ),
    key(
        "server_delays",
        Kind::Other {
            ty: "list",
            range: "durations, one per server",
            quoted: false,
        },
        "[\"0ms\"]",
        "one-way delay behind the access line, per server (rtt_fair: 0, 10, 30, 70 ms)",
        "Flent rtt_fair",
    ),
    key(
        "server_rate",
        RATE,
        "none",
        "servers' link rate (default: their NICs only)",
        "—",
    ),
    NIC_RATE,
    DRIVER_QUEUE,
];

/// The `access` preset.
pub(super) const ACCESS: Preset = Preset {
    decl: Entry {
        name: "access",
        doc: "a client behind an access bottleneck and its servers; runs a Flent [test]",
        source: "Flent test setups",
        params: ACCESS_KEYS,
    },
    parse: |src, text, overrides| parse_scenario(src, text, overrides, "access"),
};

/// The `rtt_fair` preset.
pub(super) const RTT_FAIR: Preset = Preset {
    decl: Entry {
        name: "rtt_fair",
        doc: "`access` with four servers at 0, 10, 30 and 70 ms; runs a Flent [test]",
        source: "Flent rtt_fair",
        params: ACCESS_KEYS,
    },
    parse: |src, text, overrides| parse_scenario(src, text, overrides, "rtt_fair"),
};

/// A whole scenario with `preset = "access"` or `"rtt_fair"`: a `[test]` and a `[tcp]`.
fn parse_scenario(
    src: &Source<'_>,
    text: &str,
    overrides: &Overrides,
    preset: &'static str,
) -> Result<Scenario, ScenarioError> {
    let raw: RawScenario<RawAccess> = toml::from_str(text).map_err(|e| src.toml_error(&e))?;
    super::parse_test(src, &raw, preset, overrides, None)
}

/// Default `server_delays` of the `rtt_fair` preset: one-way delays behind the access line of
/// 0, 10, 30 and 70 ms (with a 5 ms line: base RTTs of 10, 30, 70 and 150 ms, spanning what
/// Flent's default hosts in Fremont, Newark, Europe and Tokyo give from one client).
pub const RTT_FAIR_SERVER_DELAYS_MS: [u64; 4] = [0, 10, 30, 70];

/// Buffer used when none is given.
pub const DEFAULT_BUFFER: BufferSpec = BufferSpec::Bdp(1.0);

/// A resolved Flent-equivalent test on an access topology.
#[derive(Clone, Debug, PartialEq)]
pub struct AccessTest {
    /// `access` or `rtt_fair`.
    pub preset: &'static str,
    /// The test.
    pub test: FlentTest,
    /// Its timing.
    pub timing: Timing,
    /// The template of every TCP flow (name, start, stop and DSCP are set per flow).
    pub tcp: Flow,
    /// Upload rate, bit/s.
    pub up_rate_bps: u64,
    /// Download rate, bit/s.
    pub down_rate_bps: u64,
    /// One-way delay of the access line.
    pub delay: Dur,
    /// Uplink buffer as written and resolved.
    pub up_buffer: (BufferSpec, QueueLimit),
    /// Downlink buffer as written and resolved.
    pub down_buffer: (BufferSpec, QueueLimit),
    /// Uplink AQM (`None`: the drop-tail FIFO sized by `up_buffer`).
    pub up_qdisc: Option<AqmConfig>,
    /// Downlink AQM (`None`: the drop-tail FIFO sized by `down_buffer`).
    pub down_qdisc: Option<AqmConfig>,
    /// Uplink random loss probability.
    pub up_loss: f64,
    /// Downlink random loss probability.
    pub down_loss: f64,
    /// One-way delay behind the access line per server.
    pub server_delays: Vec<Dur>,
    /// Servers' link rate.
    pub server_rate_bps: Option<u64>,
    /// Every host's NIC rate.
    pub nic_rate_bps: Option<u64>,
    /// Driver queue, packets.
    pub driver_queue: u32,
    /// The client on Wi-Fi (preset `wifi_hybrid`, [`super::wifi`]): the BSS of the client and
    /// `cpe` (its AP), and the pacing shift of the client's driver. `None`: a wired client.
    pub wifi: Option<super::wifi::WifiClient>,
}

impl AccessTest {
    /// The simulator input: the access topology with the test's flows and probes. Returns the
    /// series in the order of the run's flows and then probes.
    #[must_use]
    pub fn sim_config(&self, seed: u64) -> (SimConfig, Vec<suite::SeriesSpec>) {
        let mut a = Access::new(
            self.up_rate_bps,
            self.down_rate_bps,
            self.delay,
            self.up_buffer.1,
            self.down_buffer.1,
        );
        let loss = |p: f64| {
            if p > 0.0 {
                LossConfig::Bernoulli { p }
            } else {
                LossConfig::None
            }
        };
        a.up_aqm.clone_from(&self.up_qdisc);
        a.down_aqm.clone_from(&self.down_qdisc);
        a.up_loss = loss(self.up_loss);
        a.down_loss = loss(self.down_loss);
        a.server_delays.clone_from(&self.server_delays);
        a.server_rate_bps = self.server_rate_bps;
        a.nic_rate_bps = self.nic_rate_bps;
        a.driver_queue = QueueLimit::Packets(self.driver_queue);
        a.client_host = self.tcp.host.clone();
        a.server_host = self.tcp.host.clone();
        if let Some(w) = &self.wifi {
            a.wifi = Some(w.mac.clone());
            a.client_host.pacing_shift = w.pacing_shift;
        }
        // `src`/`dst` are placeholders: the access topology connects each flow.
        let template = self.tcp.flow_config(NodeId(0), NodeId(0));
        let specs = suite::populate(&mut a, self.test, &self.timing, &template, seed);
        let cfg = a
            .build()
            .expect("resolve checked that the topology has the test's servers");
        (cfg, specs)
    }

    /// Base RTT to server `i`.
    #[must_use]
    pub fn base_rtt(&self, i: usize) -> Dur {
        let d = self.delay + self.server_delays[i];
        d + d
    }

    /// A few lines for `cclab check`.
    pub(crate) fn describe(&self) -> String {
        let rtts: Vec<String> = (0..self.server_delays.len())
            .map(|i| fmt_dur(self.base_rtt(i)))
            .collect();
        let queue = |q: &Option<AqmConfig>, b: &(BufferSpec, QueueLimit)| match q {
            Some(aqm) => format!("qdisc {}", qdisc::describe(aqm)),
            None => format!("buffer {}", b.0),
        };
        let ecn = match self.tcp.ecn {
            cclab_cc::EcnMode::Off => String::new(),
            e => format!(" with ECN {}", e.name()),
        };
        format!(
            "test {} (Flent timing: length {}, delay {}, step {}, start spread {}) on topology {}: \
             up {} / down {}, one-way {}, uplink {}, downlink {}, servers at base RTT {}; every \
             TCP flow runs {}{ecn}",
            self.test.name(),
            fmt_dur(self.timing.length),
            fmt_dur(self.timing.delay),
            fmt_dur(self.timing.step),
            fmt_dur(self.timing.start_jitter),
            self.preset,
            fmt_rate(self.up_rate_bps),
            fmt_rate(self.down_rate_bps),
            fmt_dur(self.delay),
            queue(&self.up_qdisc, &self.up_buffer),
            queue(&self.down_qdisc, &self.down_buffer),
            rtts.join(", "),
            self.tcp.cc.name(),
        ) + &self
            .wifi
            .as_ref()
            .map_or_else(String::new, super::wifi::WifiClient::describe)
    }
}

impl Network for AccessTest {
    fn preset(&self) -> &'static str {
        self.preset
    }

    fn describe(&self) -> String {
        AccessTest::describe(self)
    }

    fn endpoint_base_rtt(&self, _access_delay: Dur) -> Option<Dur> {
        None
    }

    fn sim_config(&self, _scenario: &Scenario, seed: u64) -> SimConfig {
        AccessTest::sim_config(self, seed).0
    }

    /// The test's series and Flent timing, and its Flent metadata (`label` names the
    /// configuration in the title).
    fn run_plan(&self, _scenario: &Scenario, seed: u64, label: &str) -> RunPlan {
        let (sim, series) = AccessTest::sim_config(self, seed);
        let hosts = (0..self.test.servers()).map(suite::host_name).collect();
        let title = format!(
            "cclab {} {} | {}",
            self.test.name(),
            self.tcp.cc.name(),
            label
        );
        let test = TestInfo {
            name: self.test.name().to_owned(),
            length_s: self.timing.length.as_secs_f64(),
            delay_s: self.timing.delay.as_secs_f64(),
            step_s: self.timing.step.as_secs_f64(),
            total_length_s: self.timing.total().as_secs_f64(),
            hosts,
            local_host: "client".into(),
            title,
        };
        RunPlan {
            sim,
            series,
            timing: self.timing,
            test: Some(test),
        }
    }

    fn clone_box(&self) -> Box<dyn Network> {
        Box::new(self.clone())
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Check the test scenario's tables (`tcp` is the resolved `[tcp]` template).
pub(crate) fn resolve(
    src: &Source<'_>,
    preset: &'static str,
    raw: &Spanned<RawAccess>,
    test: &Spanned<RawTest>,
    tcp: Flow,
    tcp_raw: &Spanned<RawFlow>,
) -> Result<AccessTest, ScenarioError> {
    let t = raw.get_ref();
    let rt = test.get_ref();
    let Some(flent) = FlentTest::from_name(rt.name.get_ref()) else {
        return Err(src.error(
            Some(rt.name.span()),
            "test.name",
            unknown_choice("test", rt.name.get_ref(), TESTS),
        ));
    };
    let dur = |v: &Option<Spanned<TimeValue>>, d: Dur| v.as_ref().map_or(d, |x| x.get_ref().0);
    let timing = Timing {
        length: dur(&rt.length, suite::DEFAULT_LENGTH),
        delay: dur(&rt.delay, suite::DEFAULT_DELAY),
        step: dur(&rt.step, suite::DEFAULT_STEP),
        start_jitter: dur(&rt.start_jitter, suite::DEFAULT_START_JITTER),
    };
    if timing.length == Dur::ZERO {
        let span = rt.length.as_ref().map(Spanned::span);
        return Err(src.error(span, "test.length", "must be positive"));
    }
    if timing.step == Dur::ZERO || timing.step > timing.length {
        let span = rt.step.as_ref().map(Spanned::span);
        return Err(src.error(
            span,
            "test.step",
            format!(
                "must be positive and at most the length ({}), got {}",
                fmt_dur(timing.length),
                fmt_dur(timing.step)
            ),
        ));
    }
    if timing.total() > super::MAX_DURATION {
        let (key, span) = if timing.length > super::MAX_DURATION {
            ("test.length", rt.length.as_ref().map(Spanned::span))
        } else {
            ("test.delay", rt.delay.as_ref().map(Spanned::span))
        };
        return Err(src.error(
            span,
            key,
            format!(
                "the test lasts {} (length {} + 2 × delay {}); at most {} (one day) are allowed",
                fmt_dur(timing.total()),
                fmt_dur(timing.length),
                fmt_dur(timing.delay),
                fmt_dur(super::MAX_DURATION)
            ),
        ));
    }
    let samples = super::count_in(timing.total(), timing.step);
    if samples > super::MAX_SAMPLES {
        let span = rt.step.as_ref().map(Spanned::span);
        return Err(src.error(
            span,
            "test.step",
            format!(
                "{} over the test's {} makes {samples} samples per series; at most {} are \
                 allowed: use a longer step",
                fmt_dur(timing.step),
                fmt_dur(timing.total()),
                super::MAX_SAMPLES
            ),
        ));
    }
    if timing.start_jitter >= timing.length {
        let span = rt.start_jitter.as_ref().map(Spanned::span);
        return Err(src.error(
            span,
            "test.start_jitter",
            "must be shorter than the test length",
        ));
    }
    for (key, set) in [
        ("name", tcp_raw.get_ref().name.as_ref().map(Spanned::span)),
        ("start", tcp_raw.get_ref().start.as_ref().map(Spanned::span)),
        ("stop", tcp_raw.get_ref().stop.as_ref().map(Spanned::span)),
        ("size", tcp_raw.get_ref().size.as_ref().map(Spanned::span)),
        ("count", tcp_raw.get_ref().count.as_ref().map(Spanned::span)),
        (
            "arrivals",
            tcp_raw.get_ref().arrivals.as_ref().map(Spanned::span),
        ),
        (
            "size_cdf",
            tcp_raw.get_ref().size_cdf.as_ref().map(Spanned::span),
        ),
        (
            "requests",
            tcp_raw.get_ref().requests.as_ref().map(Spanned::span),
        ),
        (
            "access_delay",
            tcp_raw.get_ref().access_delay.as_ref().map(Spanned::span),
        ),
    ] {
        if let Some(span) = set {
            return Err(src.error(
                Some(span),
                format!("tcp.{key}"),
                format!(
                    "`{key}` does not apply to a test's flows: the test names them, times them \
                     (`test.delay`, `test.length`) and places them (`topology.server_delays`)"
                ),
            ));
        }
    }
    let (up, down) = match (&t.rate, &t.up_rate, &t.down_rate) {
        (Some(r), None, None) => (r.get_ref().0, r.get_ref().0),
        (None, Some(u), Some(d)) => (u.get_ref().0, d.get_ref().0),
        (None, Some(u), None) => (u.get_ref().0, u.get_ref().0),
        (None, None, Some(d)) => (d.get_ref().0, d.get_ref().0),
        (None, None, None) => {
            return Err(src.error(
                Some(raw.span()),
                "topology.rate",
                "missing: give `rate` (both directions) or `up_rate` and `down_rate`",
            ));
        }
        (Some(r), _, _) => {
            return Err(src.error(
                Some(r.span()),
                "topology.rate",
                "give either `rate` or `up_rate`/`down_rate`, not both",
            ));
        }
    };
    for (name, v) in [("up_rate", up), ("down_rate", down)] {
        if v == 0 {
            return Err(src.error(
                Some(raw.span()),
                format!("topology.{name}"),
                "must be positive",
            ));
        }
    }
    let server_delays: Vec<Dur> = match &t.server_delays {
        Some(v) => v.get_ref().iter().map(|d| d.get_ref().0).collect(),
        None if preset != "access" => RTT_FAIR_SERVER_DELAYS_MS
            .iter()
            .map(|&ms| Dur::from_millis(ms))
            .collect(),
        None => vec![Dur::ZERO],
    };
    if server_delays.len() < flent.servers() {
        let span = t.server_delays.as_ref().map_or(raw.span(), Spanned::span);
        return Err(src.error(
            Some(span),
            "topology.server_delays",
            format!(
                "test `{}` needs {} servers, the topology has {}: give {} `server_delays` or use \
                 preset `rtt_fair`",
                flent.name(),
                flent.servers(),
                server_delays.len(),
                flent.servers()
            ),
        ));
    }
    let delay = t.delay.get_ref().0;
    // BDP at the shortest base RTT among the servers the test uses.
    let min_rtt = server_delays[..flent.servers()]
        .iter()
        .map(|&d| {
            let one = delay + d;
            one + one
        })
        .min()
        .unwrap_or(Dur::ZERO);
    let largest = wire_bytes(tcp.mss);
    let (up_qdisc, up_key) = direction_qdisc(src, t, &t.up_qdisc, "up_qdisc", largest)?;
    let (down_qdisc, down_key) = direction_qdisc(src, t, &t.down_qdisc, "down_qdisc", largest)?;
    // A buffer must size some FIFO: a direction's own buffer its direction, the shared one
    // at least one of them.
    for (aqm, key, specific, name) in [
        (&up_qdisc, up_key, &t.up_buffer, "up_buffer"),
        (&down_qdisc, down_key, &t.down_buffer, "down_buffer"),
    ] {
        if let (Some(aqm), Some((raw_q, qkey)), Some(b)) = (aqm, key, specific) {
            return Err(buffer_with_aqm(
                src,
                &format!("topology.{name}"),
                b.span(),
                aqm,
                raw_q,
                qkey,
            ));
        }
    }
    if let (Some(aqm), Some((raw_q, qkey)), Some(_), Some(b)) =
        (&up_qdisc, up_key, &down_qdisc, &t.buffer)
    {
        return Err(buffer_with_aqm(
            src,
            "topology.buffer",
            b.span(),
            aqm,
            raw_q,
            qkey,
        ));
    }
    // The key that set a direction's rate, for a default buffer it makes too small.
    let rate_key = |own: &Option<Spanned<crate::units::Rate>>,
                    own_name: &'static str,
                    other: &Option<Spanned<crate::units::Rate>>,
                    other_name: &'static str| {
        [(own, own_name), (&t.rate, "rate"), (other, other_name)]
            .into_iter()
            .find_map(|(r, name)| r.as_ref().map(|r| (name, r.span())))
            .unwrap_or(("rate", raw.span()))
    };
    let buffer = |specific: &Option<Spanned<BufferSpec>>, rate: u64, name: &str, aqm: bool| {
        let (spec, span) = match (specific, &t.buffer) {
            (Some(b), _) | (None, Some(b)) => (*b.get_ref(), b.span()),
            (None, None) => (DEFAULT_BUFFER, raw.span()),
        };
        let limit = spec.resolve(rate, min_rtt);
        let bad = !aqm
            && match limit {
                QueueLimit::Packets(0) => true,
                QueueLimit::Bytes(b) => b < largest,
                QueueLimit::Packets(_) => false,
            };
        if bad
            && specific.is_none()
            && t.buffer.is_none()
            && let QueueLimit::Bytes(bytes) = limit
        {
            let (key, rate_span) = if name == "up_buffer" {
                rate_key(&t.up_rate, "up_rate", &t.down_rate, "down_rate")
            } else {
                rate_key(&t.down_rate, "down_rate", &t.up_rate, "up_rate")
            };
            return Err(default_buffer_too_small(
                src,
                DefaultBuffer {
                    buffer_key: name,
                    bytes,
                    largest,
                    rate: (key, rate, rate_span),
                    rtt: min_rtt,
                    delay_span: t.delay.span(),
                },
            ));
        }
        if bad {
            return Err(src.error(
                Some(span),
                format!("topology.{name}"),
                format!("`{spec}` resolves to less than one full-size packet ({largest} bytes)"),
            ));
        }
        if specific.is_none()
            && t.buffer.is_none()
            && let Some(e) =
                default_buffer_too_large(src, name, limit, (rate, min_rtt), span.clone())
        {
            return Err(e);
        }
        if let Some(p) = super::buffer_too_large(limit) {
            return Err(src.error(
                Some(span),
                format!("topology.{name}"),
                format!("`{spec}` {p}"),
            ));
        }
        Ok((spec, limit))
    };
    let up_buffer = buffer(&t.up_buffer, up, "up_buffer", up_qdisc.is_some())?;
    let down_buffer = buffer(&t.down_buffer, down, "down_buffer", down_qdisc.is_some())?;
    Ok(AccessTest {
        preset,
        test: flent,
        timing,
        tcp,
        up_rate_bps: up,
        down_rate_bps: down,
        delay,
        up_buffer,
        down_buffer,
        up_qdisc,
        down_qdisc,
        up_loss: t.loss.as_ref().map_or(0.0, |l| l.get_ref().0),
        down_loss: t.down_loss.as_ref().map_or(0.0, |l| l.get_ref().0),
        server_delays,
        server_rate_bps: t.server_rate.as_ref().map(|r| r.get_ref().0),
        nic_rate_bps: Some(super::dumbbell::nic_rate(t.nic_rate.as_ref())),
        driver_queue: super::dumbbell::driver_queue(src, t.driver_queue.as_ref())?,
        wifi: None,
    })
}

/// The resolved qdisc of one direction, with the raw key that set it and its name: the
/// direction's own key (`up_qdisc`, `down_qdisc`), else the shared `qdisc`, else the FIFO.
type DirectionQdisc<'a> = (
    Option<AqmConfig>,
    Option<(&'a Spanned<RawQdisc>, &'static str)>,
);

fn direction_qdisc<'a>(
    src: &Source<'_>,
    t: &'a RawAccess,
    specific: &'a Option<Spanned<RawQdisc>>,
    name: &'static str,
    largest: u64,
) -> Result<DirectionQdisc<'a>, ScenarioError> {
    let (raw_q, key) = match (specific, &t.qdisc) {
        (Some(q), _) => (q, name),
        (None, Some(q)) => (q, "qdisc"),
        (None, None) => return Ok((None, None)),
    };
    let aqm = qdisc::resolve(src, &format!("topology.{key}"), raw_q, largest)?;
    Ok((aqm, Some((raw_q, key))))
}
