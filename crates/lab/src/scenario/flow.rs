//! Flows and probes: from `[[flows]]`, `[tcp]` and `[[probes]]` as written to checked values.
//!
//! Contract: [`resolve_flows`] turns the raw flow tables into [`Flow`]s (controller and its keys
//! through [`super::controllers`], transport keys, `count` expansion, unique names, the sending
//! host through [`super::host`]); [`resolve_probes`] does the same for probes. Both check every
//! value against the run's duration and report the first problem at its file position. Parsing
//! the document and the topology presets are [`super`]'s job.

use std::collections::HashSet;

use cclab_cc::{CcSpec, EcnMode};
use cclab_sim::{
    DEFAULT_MSS, Dur, HostConfig, INITIAL_WINDOW, PacingMode, QuicConfig, Time, Transport,
};
use toml::Spanned;

use super::error::{Source, unknown_choice};
use super::raw::{RawFlow, RawPacing, RawProbe};
use super::workload::{
    Arrivals, BUILT_IN, DEFAULT_REQUEST_SIZE, MAX_REQUESTS, MAX_THINK_TIME, SizeCdf,
};
use super::{
    ACK_EVERY_RANGE, DEFAULT_ACK_EVERY, DEFAULT_PROBE_INTERVAL, DEFAULT_PROBE_NAME,
    DEFAULT_PROBE_SIZE, DELAYED_ACK_LIMIT, INITIAL_WINDOW_RANGE, MAX_FLOWS, MAX_PROBE_PACKETS,
    MAX_PROBE_PACKETS_TOTAL, MAX_PROBES, MSS_RANGE, PROBE_SIZE_RANGE, ScenarioError, controllers,
    host,
};
use crate::units::{ByteSize, TimeValue, fmt_dur};

/// Whether a flow of a scenario file opens with a handshake when the file does not say: yes,
/// as every real TCP connection does. (The simulator's own [`cclab_sim::FlowConfig`] and the
/// scenarios built in code, the benchmarks, leave it off.)
pub const DEFAULT_HANDSHAKE: bool = true;

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
    /// The receiver's fixed advertised window, bytes (`None` = unlimited).
    pub rcv_wnd: Option<u64>,
    /// A receiving application reading at a limited rate from a modelled receive buffer
    /// (`read_rate`, `read_chunk`, `rcvbuf`; [`cclab_sim::ReaderConfig`]).
    pub reader: Option<cclab_sim::ReaderConfig>,
    /// The receiver ACKs every `ack_every` in-order segments (after quick-ACK mode).
    pub ack_every: u32,
    /// Receiver delayed-ACK timer (`Dur::ZERO`: an in-order segment not ACKed at once is ACKed
    /// by a timer that fires at the same instant, so every segment gets its own ACK).
    pub delayed_ack: Dur,
    /// Undo of spurious window reductions (Linux `tcp_try_undo_*`).
    pub undo: bool,
    /// F-RTO (RFC 5682, Linux `tcp_frto`).
    pub frto: bool,
    /// RACK's reordering window adapts to DSACKs (RFC 8985 §6.2, Linux
    /// `tcp_rack_update_reo_wnd`).
    pub rack_reo_adapt: bool,
    /// Record a per-event sender trace (every ACK, timeout and probe; written to `trace.csv`).
    pub trace: bool,
    /// Open the connection with a three-way handshake (SYN, SYN-ACK; data with the ACK), so
    /// the completion time counts from the SYN ([`cclab_sim::tcp::handshake`]).
    pub handshake: bool,
    /// TCP Fast Open (RFC 7413) on the handshake: a transfer of one segment that fits in the
    /// SYN rides on it ([`cclab_sim::FlowConfig::fast_open`]).
    pub fast_open: bool,
    /// Restart after idle (Linux `tcp_slow_start_after_idle`).
    pub slow_start_after_idle: bool,
    /// A request/response workload (`requests` > 0): the responses' sizes and the request
    /// keys; `size` is then `None`.
    pub requests: Option<cclab_sim::RequestConfig>,
    /// The transport: TCP or QUIC with its options.
    pub transport: Transport,
    /// The sending host's model (TSQ, qdisc, TSO, CPU schedule).
    pub host: HostConfig,
    /// The TCP implementation the flow's endpoints follow (`stack`).
    pub stack: super::stack::Stack,
    /// The stack's rules, with the file's per-rule keys applied.
    pub tcp: cclab_sim::TcpRules,
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
        flow.rcv_wnd = self.rcv_wnd;
        flow.reader = self.reader;
        flow.ack_every = self.ack_every;
        flow.delack_timeout = self.delayed_ack;
        flow.undo = self.undo;
        flow.frto = self.frto;
        flow.rack_reo_adapt = self.rack_reo_adapt;
        flow.trace = self.trace;
        flow.handshake = self.handshake;
        flow.fast_open = self.fast_open;
        flow.slow_start_after_idle = self.slow_start_after_idle;
        flow.requests.clone_from(&self.requests);
        flow.transport = self.transport;
        flow.tcp = self.tcp;
        if matches!(self.transport, Transport::Quic(_)) {
            // QUIC starts with 1-RTT keys (cclab_sim::quic): no TCP handshake.
            flow.handshake = false;
        }
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

/// A flow as resolved so far (topology presets check it against their own fields).
pub(crate) struct ResolvedFlow {
    pub flow: Flow,
}

/// Start/stop of a flow or probe: start before the end of the run, stop after start.
pub(super) fn resolve_window(
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

pub(super) fn resolve_flows<T>(
    src: &Source<'_>,
    raw: &[Spanned<RawFlow>],
    topology: &Spanned<T>,
    duration: Dur,
    base_host: &HostConfig,
    seed: u64,
) -> Result<Vec<ResolvedFlow>, ScenarioError> {
    if raw.is_empty() {
        return Err(src.error(
            Some(topology.span()),
            "flows",
            "a scenario needs at least one flow: add a [[flows]] table with a `controller`",
        ));
    }
    let mut out: Vec<ResolvedFlow> = Vec::new();
    let mut declared = 0usize;
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
        let rcv_wnd = match &f.rcv_wnd {
            Some(w) if w.get_ref().0 < u64::from(mss) => {
                return Err(src.error(
                    Some(w.span()),
                    format!("{what}.rcv_wnd"),
                    format!(
                        "must hold at least one segment ({mss} bytes, the flow's mss), got {} bytes",
                        w.get_ref().0
                    ),
                ));
            }
            Some(w) => Some(w.get_ref().0),
            None => None,
        };
        let reader = resolve_reader(src, &what, f, mss)?;
        let ack_every = src.ranged_u32(
            f.ack_every.as_ref(),
            format!("{what}.ack_every"),
            ACK_EVERY_RANGE,
            "segments",
            DEFAULT_ACK_EVERY,
        )?;
        let stack = super::stack::resolve(src, &what, f)?;
        let given: Vec<&str> = f.params.iter().map(|(k, _)| k.as_str()).collect();
        let cc = stack.stack.controller(&cc, &given);
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
            None => stack.stack.delayed_ack(),
        };
        let count = match &f.count {
            Some(c) => {
                let v = *c.get_ref();
                match usize::try_from(v) {
                    Ok(n) if n <= MAX_FLOWS => n,
                    _ => {
                        return Err(src.error(
                            Some(c.span()),
                            format!("{what}.count"),
                            format!("must be between 0 and {MAX_FLOWS}, got {v}"),
                        ));
                    }
                }
            }
            None => 1,
        };
        // Counted as declared, not as drawn: a bound that holds for every seed.
        declared += count;
        if declared > MAX_FLOWS {
            return Err(src.error(
                Some(spanned.span()),
                what,
                format!("too many flows: a scenario may have at most {MAX_FLOWS}"),
            ));
        }
        let access_delay = f.access_delay.as_ref().map_or(Dur::ZERO, |d| d.get_ref().0);
        let trace = f.trace.as_ref().is_some_and(|t| *t.get_ref());
        // Linux's defaults: undo, F-RTO (`tcp_frto` = 2) and RACK's adaptive window on; ns-3
        // has no undo and no F-RTO.
        let on = |b: &Option<Spanned<bool>>| b.as_ref().is_none_or(|v| *v.get_ref());
        let or = |b: &Option<Spanned<bool>>, d: bool| b.as_ref().map_or(d, |v| *v.get_ref());
        let (undo, frto, rack_reo_adapt) = (
            or(&f.undo, stack.stack.undo()),
            or(&f.frto, stack.stack.undo()),
            on(&f.rack_reo_adapt),
        );
        let handshake = f
            .handshake
            .as_ref()
            .map_or(DEFAULT_HANDSHAKE, |h| *h.get_ref());
        let fast_open = match &f.fast_open {
            Some(t) if *t.get_ref() && !handshake => {
                return Err(src.error(
                    Some(t.span()),
                    format!("{what}.fast_open"),
                    "TCP Fast Open sends data on the SYN: it needs `handshake = true`",
                ));
            }
            Some(t) => *t.get_ref(),
            None => false,
        };
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
        let mut workload = resolve_workload(src, &what, f, seed, i)?;
        if let Some(w) = &workload
            && w.rate.is_some()
            && f.count.is_none()
        {
            return Err(src.error(
                f.arrivals.as_ref().map(Spanned::span),
                format!("{what}.count"),
                "`arrivals` needs `count`: how many flows arrive",
            ));
        }
        if size.is_some() && f.size_cdf.is_some() {
            return Err(src.error(
                f.size_cdf.as_ref().map(Spanned::span),
                format!("{what}.size_cdf"),
                "give `size` (every flow the same size) or `size_cdf` (sizes drawn), not both",
            ));
        }
        let requests = resolve_requests(src, &what, f, handshake, mss)?;
        if let Some(r) = &requests
            && size.is_none()
            && f.size_cdf.is_none()
        {
            return Err(src.error(
                f.requests.as_ref().map(Spanned::span),
                format!("{what}.requests"),
                format!(
                    "{} request/response exchanges need the response size: `size` (every \
                     response) or `size_cdf` (drawn per response)",
                    r.count
                ),
            ));
        }
        let slow_start_after_idle = on(&f.slow_start_after_idle);
        let transport = resolve_transport(src, &what, f)?;
        if matches!(transport, Transport::Quic(_))
            && (requests.is_some()
                || rcv_wnd.is_some()
                || reader.is_some()
                || f.fast_open.is_some())
        {
            return Err(src.error(
                f.transport.as_ref().map(Spanned::span),
                format!("{what}.transport"),
                "a QUIC flow has no `requests`, `rcv_wnd`, `read_rate` or `fast_open` (TCP \
                 features)",
            ));
        }
        if let Some(r) = &f.read_rate
            && (rcv_wnd.is_some() || requests.is_some())
        {
            return Err(src.error(
                Some(r.span()),
                format!("{what}.read_rate"),
                "the receive buffer sets the window: no `rcv_wnd` or `requests` with `read_rate`",
            ));
        }
        let mut arrival = start;
        for k in 0..count {
            let index = out.len();
            let (start, size) = match &mut workload {
                None => (start, size),
                Some(w) => {
                    let start = match w.rate {
                        Some(rate) => {
                            arrival = w.draws.next_after(arrival, rate);
                            arrival
                        }
                        None => start,
                    };
                    let size = match &w.cdf {
                        // A request/response flow draws one size per response, below.
                        Some(_) if requests.is_some() => None,
                        Some(cdf) => Some(w.draws.size(cdf)),
                        None => size,
                    };
                    (start, size)
                }
            };
            let flow_requests = requests.as_ref().map(|r| cclab_sim::RequestConfig {
                responses: (0..r.count)
                    .map(|_| match &mut workload {
                        Some(Workload {
                            cdf: Some(cdf),
                            draws,
                            ..
                        }) => draws.size(cdf),
                        _ => size.unwrap_or(1),
                    })
                    .collect(),
                request_size: r.request_size,
                think_time: r.think_time,
                persistent: r.persistent,
            });
            let size = if requests.is_some() { None } else { size };
            if stop.is_some_and(|s| start >= s) || start >= Time::ZERO + duration {
                // Poisson arrivals past the table's stop or the run's end never start.
                break;
            }
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
                    rcv_wnd,
                    reader,
                    ack_every,
                    delayed_ack,
                    undo,
                    frto,
                    rack_reo_adapt,
                    trace,
                    handshake,
                    fast_open,
                    slow_start_after_idle,
                    requests: flow_requests,
                    transport,
                    host: host.clone(),
                    stack: stack.stack,
                    tcp: stack.rules,
                },
            });
        }
    }
    if out.is_empty() && declared > 0 {
        return Err(src.error(
            Some(raw[0].span()),
            "flows",
            format!(
                "with seed {seed}, every flow's Poisson arrival falls after the run's end ({}): \
                 a scenario needs at least one flow; raise `arrivals`, start earlier or run \
                 longer",
                fmt_dur(duration)
            ),
        ));
    }
    if out.is_empty() {
        return Err(src.error(
            Some(raw[0].span()),
            "flows",
            "every [[flows]] table has `count = 0`: a scenario needs at least one flow",
        ));
    }
    Ok(out)
}

/// How many flows the `[[flows]]` tables declare (their `count`s, each 1 by default), whatever
/// their Poisson arrivals draw: a bound on the flows of every seed. Counts that
/// [`resolve_flows`] refuses count as 0.
pub(super) fn declared_flows(raw: &[Spanned<RawFlow>]) -> u64 {
    raw.iter()
        .map(|f| {
            f.get_ref()
                .count
                .as_ref()
                .map_or(1, |c| u64::try_from(*c.get_ref()).unwrap_or(0))
        })
        .sum()
}

/// The request keys of a `[[flows]]` table with `requests` > 0.
struct RequestKeys {
    count: usize,
    request_size: u32,
    think_time: Dur,
    persistent: bool,
}

/// `requests` and its keys (`request_size`, `think_time`, `persistent`); `None` without
/// exchanges. The keys need `requests`; a new connection per exchange needs the handshake; a
/// request is one segment; Fast Open is not modelled with requests.
fn resolve_requests(
    src: &Source<'_>,
    what: &str,
    f: &RawFlow,
    handshake: bool,
    mss: u32,
) -> Result<Option<RequestKeys>, ScenarioError> {
    let Some(n) = &f.requests else {
        let keys = [
            ("request_size", f.request_size.as_ref().map(Spanned::span)),
            ("think_time", f.think_time.as_ref().map(Spanned::span)),
            ("persistent", f.persistent.as_ref().map(Spanned::span)),
        ];
        if let Some((key, span)) = keys.into_iter().find(|(_, s)| s.is_some()) {
            return Err(src.error(
                span,
                format!("{what}.{key}"),
                format!(
                    "`{key}` belongs to a request/response workload: add `requests = N` (the \
                     number of exchanges)"
                ),
            ));
        }
        return Ok(None);
    };
    let count = match usize::try_from(*n.get_ref()) {
        Ok(c) if *n.get_ref() <= MAX_REQUESTS => c,
        _ => {
            return Err(src.error(
                Some(n.span()),
                format!("{what}.requests"),
                format!(
                    "must be between 0 and {MAX_REQUESTS} exchanges, got {}",
                    n.get_ref()
                ),
            ));
        }
    };
    if count == 0 {
        return Ok(None);
    }
    let request_size = match &f.request_size {
        Some(r) => match u32::try_from(r.get_ref().0) {
            Ok(b) if (1..=mss).contains(&b) => b,
            _ => {
                return Err(src.error(
                    Some(r.span()),
                    format!("{what}.request_size"),
                    format!(
                        "must be within 1..={mss} bytes (a request is one segment of at most \
                         the flow's mss), got {} bytes",
                        r.get_ref().0
                    ),
                ));
            }
        },
        None => DEFAULT_REQUEST_SIZE.min(mss),
    };
    let think_time = match &f.think_time {
        Some(t) if t.get_ref().0 > MAX_THINK_TIME => {
            return Err(src.error(
                Some(t.span()),
                format!("{what}.think_time"),
                format!(
                    "must be at most {}, got {}",
                    fmt_dur(MAX_THINK_TIME),
                    fmt_dur(t.get_ref().0)
                ),
            ));
        }
        Some(t) => t.get_ref().0,
        None => Dur::ZERO,
    };
    let persistent = f.persistent.as_ref().is_none_or(|p| *p.get_ref());
    if !persistent && !handshake {
        return Err(src.error(
            f.persistent.as_ref().map(Spanned::span),
            format!("{what}.persistent"),
            "a new connection per exchange opens with a handshake: `persistent = false` needs \
             `handshake = true`",
        ));
    }
    if let Some(t) = &f.fast_open
        && *t.get_ref()
    {
        return Err(src.error(
            Some(t.span()),
            format!("{what}.fast_open"),
            "TCP Fast Open is not modelled with `requests` (the client's request would ride on \
             its SYN): leave `fast_open` out",
        ));
    }
    Ok(Some(RequestKeys {
        count,
        request_size,
        think_time,
        persistent,
    }))
}

/// A `[[flows]]` table's workload: Poisson arrivals and drawn sizes.
struct Workload {
    /// Arrivals per second (`None`: every flow starts at `start`).
    rate: Option<f64>,
    /// Sizes drawn from this CDF (`None`: `size`, or bulk).
    cdf: Option<SizeCdf>,
    draws: Arrivals,
}

/// `arrivals` (flows per second, Poisson) and `size_cdf` (a built-in name or a file relative to
/// the scenario); `None` when the table has neither.
fn resolve_workload(
    src: &Source<'_>,
    what: &str,
    f: &RawFlow,
    seed: u64,
    table: usize,
) -> Result<Option<Workload>, ScenarioError> {
    if f.arrivals.is_none() && f.size_cdf.is_none() {
        return Ok(None);
    }
    let rate = match &f.arrivals {
        Some(a) => {
            let v = *a.get_ref();
            if !(v.is_finite() && v > 0.0 && v <= MAX_ARRIVAL_RATE) {
                return Err(src.error(
                    Some(a.span()),
                    format!("{what}.arrivals"),
                    format!("flows per second must be in (0, {MAX_ARRIVAL_RATE}], got {v}"),
                ));
            }
            Some(v)
        }
        None => None,
    };
    let cdf = match &f.size_cdf {
        Some(c) => Some(load_cdf(src, &format!("{what}.size_cdf"), c)?),
        None => None,
    };
    Ok(Some(Workload {
        rate,
        cdf,
        draws: Arrivals::new(seed, table),
    }))
}

/// Most flows per second a table may start (10⁶: one a microsecond).
const MAX_ARRIVAL_RATE: f64 = 1e6;

/// A built-in CDF by name, else a CDF file relative to the scenario file.
fn load_cdf(
    src: &Source<'_>,
    field: &str,
    value: &Spanned<String>,
) -> Result<SizeCdf, ScenarioError> {
    let name = value.get_ref();
    if let Some(c) = SizeCdf::built_in(name) {
        return Ok(c);
    }
    let path = std::path::Path::new(src.origin)
        .parent()
        .unwrap_or(std::path::Path::new(""))
        .join(name);
    let builtins: Vec<&str> = BUILT_IN.iter().map(|(n, _)| *n).collect();
    let text = crate::input::read_text(&path).map_err(|e| {
        src.error(
            Some(value.span()),
            field,
            format!(
                "`{name}` is neither a built-in CDF ({}) nor a readable file: {}: {e}",
                builtins.join(", "),
                path.display()
            ),
        )
    })?;
    SizeCdf::parse(&text).map_err(|(line, msg)| {
        src.error(
            Some(value.span()),
            field,
            format!("{}:{line}: {msg}", path.display()),
        )
    })
}

/// `read_rate`, `read_chunk`, `rcvbuf`: a receiving application reading at `read_rate` from a
/// modelled receive buffer ([`cclab_sim::ReaderConfig`]); `read_chunk` (default 128 KiB,
/// iperf3's read size) and `rcvbuf` (default Linux `tcp_rmem[1]`, 128 KiB) only with it.
fn resolve_reader(
    src: &Source<'_>,
    what: &str,
    f: &RawFlow,
    mss: u32,
) -> Result<Option<cclab_sim::ReaderConfig>, ScenarioError> {
    let Some(rate) = &f.read_rate else {
        for (key, v) in [("read_chunk", &f.read_chunk), ("rcvbuf", &f.rcvbuf)] {
            if let Some(v) = v {
                return Err(src.error(
                    Some(v.span()),
                    format!("{what}.{key}"),
                    format!("`{key}` needs `read_rate` (the receiving application's read rate)"),
                ));
            }
        }
        return Ok(None);
    };
    let mut reader = cclab_sim::ReaderConfig::at_rate(rate.get_ref().0);
    if let Some(c) = &f.read_chunk {
        if c.get_ref().0 == 0 {
            return Err(src.error(
                Some(c.span()),
                format!("{what}.read_chunk"),
                "must be at least 1 byte",
            ));
        }
        reader.chunk = c.get_ref().0;
    }
    if let Some(b) = &f.rcvbuf {
        let min = 2 * u64::from(mss);
        if b.get_ref().0 < min {
            return Err(src.error(
                Some(b.span()),
                format!("{what}.rcvbuf"),
                format!(
                    "must hold at least two segments ({min} bytes: the window is half the \
                     buffer), got {} bytes",
                    b.get_ref().0
                ),
            ));
        }
        reader.rcvbuf = Some(b.get_ref().0);
    }
    Ok(Some(reader))
}

/// `ecn`, default off; a controller that requires a mode (TCP Prague: L4S) gets it by default
/// and rejects any other.
fn resolve_ecn(
    src: &Source<'_>,
    what: &str,
    f: &RawFlow,
    cc: &CcSpec,
) -> Result<EcnMode, ScenarioError> {
    let required = cc.ecn_requirement();
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
    controllers::resolve(src, what, &f.controller, &f.params)
}

pub(super) fn resolve_probes(
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
    let mut total_packets = 0;
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
        let end = stop.map_or(duration.as_nanos(), |t| t.0.min(duration.as_nanos()));
        let packets = super::count_in(Dur(end.saturating_sub(start.0)), interval);
        let limit = MAX_PROBE_PACKETS.min(MAX_PROBE_PACKETS_TOTAL - total_packets);
        if packets > limit {
            let span = p.interval.as_ref().map_or(spanned.span(), Spanned::span);
            return Err(src.error(
                Some(span),
                format!("{what}.interval"),
                format!(
                    "probing every {} makes {packets} packets; at most {MAX_PROBE_PACKETS} per \
                     probe and {MAX_PROBE_PACKETS_TOTAL} for all probes are allowed: use a \
                     longer interval",
                    fmt_dur(interval)
                ),
            ));
        }
        total_packets += packets;
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

/// `transport` and the `quic_*` keys: TCP (the default) or QUIC with its options; the QUIC
/// keys need `transport = "quic"`.
fn resolve_transport(
    src: &Source<'_>,
    what: &str,
    f: &RawFlow,
) -> Result<Transport, ScenarioError> {
    let quic = match &f.transport {
        None => false,
        Some(t) => match t.get_ref().as_str() {
            "tcp" => false,
            "quic" => true,
            other => {
                return Err(src.error(
                    Some(t.span()),
                    format!("{what}.transport"),
                    unknown_choice("transport", other, &Transport::NAMES),
                ));
            }
        },
    };
    let given = [
        ("quic_datagram", f.quic_datagram.as_ref().map(Spanned::span)),
        ("quic_framing", f.quic_framing.as_ref().map(Spanned::span)),
        (
            "quic_ip_udp_overhead",
            f.quic_ip_udp_overhead.as_ref().map(Spanned::span),
        ),
        (
            "quic_max_ack_delay",
            f.quic_max_ack_delay.as_ref().map(Spanned::span),
        ),
        ("quic_clock", f.quic_clock.as_ref().map(Spanned::span)),
    ];
    if !quic {
        if let Some((key, span)) = given.iter().find(|(_, s)| s.is_some()) {
            return Err(src.error(
                span.clone(),
                format!("{what}.{key}"),
                format!("`{key}` is a QUIC option: it needs `transport = \"quic\"`"),
            ));
        }
        return Ok(Transport::Tcp);
    }
    let d = QuicConfig::default();
    let datagram = src.ranged_u32(
        f.quic_datagram.as_ref(),
        format!("{what}.quic_datagram"),
        QUIC_DATAGRAM_RANGE,
        "bytes",
        d.datagram_bytes,
    )?;
    let framing = src.ranged_u32(
        f.quic_framing.as_ref(),
        format!("{what}.quic_framing"),
        0..=datagram - 1,
        "bytes (below quic_datagram)",
        d.framing_bytes,
    )?;
    let ip_udp_overhead = src.ranged_u32(
        f.quic_ip_udp_overhead.as_ref(),
        format!("{what}.quic_ip_udp_overhead"),
        0..=QUIC_MAX_HEADER,
        "bytes",
        d.ip_udp_overhead,
    )?;
    let dur = |v: Option<&Spanned<crate::units::TimeValue>>,
               key: &str,
               min: Dur,
               max: Dur,
               default: Dur|
     -> Result<Dur, ScenarioError> {
        match v {
            None => Ok(default),
            Some(x) if (min..=max).contains(&x.get_ref().0) => Ok(x.get_ref().0),
            Some(x) => Err(src.error(
                Some(x.span()),
                format!("{what}.{key}"),
                format!(
                    "must be within {}..={}, got {}",
                    fmt_dur(min),
                    fmt_dur(max),
                    fmt_dur(x.get_ref().0)
                ),
            )),
        }
    };
    let max_ack_delay = dur(
        f.quic_max_ack_delay.as_ref(),
        "quic_max_ack_delay",
        Dur::ZERO,
        QUIC_MAX_ACK_DELAY_LIMIT,
        d.max_ack_delay,
    )?;
    let clock = dur(
        f.quic_clock.as_ref(),
        "quic_clock",
        Dur(1),
        Dur::from_secs(1),
        d.clock_granularity,
    )?;
    Ok(Transport::Quic(QuicConfig {
        datagram_bytes: datagram,
        framing_bytes: framing,
        ip_udp_overhead,
        max_ack_delay,
        clock_granularity: clock,
        ..d
    }))
}

/// `quic_datagram`: RFC 9000 §14 (at least 1200 bytes) up to the largest UDP payload.
pub const QUIC_DATAGRAM_RANGE: std::ops::RangeInclusive<u32> = 1200..=65_527;
/// Largest `quic_ip_udp_overhead`.
pub const QUIC_MAX_HEADER: u32 = 1000;
/// `quic_max_ack_delay` must be below 2^14 ms (RFC 9000 §18.2).
pub const QUIC_MAX_ACK_DELAY_LIMIT: Dur = Dur::from_millis(16_383);
