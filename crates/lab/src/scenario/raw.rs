//! The scenario file exactly as written: serde structs with `deny_unknown_fields`, spans kept on
//! every value that is checked after parsing.
//!
//! Contract: these types only describe syntax and units; nothing here checks ranges or
//! cross-field consistency (that is [`super::resolve`]'s job, which needs the spans). Topology
//! presets are separate structs; the file is deserialised as `RawScenario<PresetStruct>` once the
//! `topology.preset` name is known.

use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};
use toml::Spanned;

use std::sync::LazyLock;

use super::params::{Given, RawValue};
use crate::units::{BufferSpec, ByteSize, Probability, Rate, TimeValue};

fn default_seed() -> u64 {
    1
}

/// The top level of a scenario file, with the topology table of type `T`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawScenario<T> {
    pub name: Spanned<String>,
    pub description: Option<String>,
    #[serde(default = "default_seed")]
    pub seed: u64,
    pub duration: Option<Spanned<TimeValue>>,
    pub sample_interval: Option<Spanned<TimeValue>>,
    pub topology: Spanned<T>,
    #[serde(default)]
    pub flows: Vec<Spanned<RawFlow>>,
    #[serde(default)]
    pub probes: Vec<Spanned<RawProbe>>,
    pub host: Option<Spanned<RawHost>>,
    /// A Flent-equivalent test (presets `access`, `rtt_fair` and `wifi_hybrid`).
    pub test: Option<Spanned<RawTest>>,
    /// The template of every TCP flow of a test.
    pub tcp: Option<Spanned<RawFlow>>,
    /// `[[elements]]`, read by `elements::resolve` once the preset's nodes are known.
    #[serde(default, rename = "elements")]
    pub _elements: serde::de::IgnoredAny,
    /// `[[links]]`, read by `rates::resolve` once the preset's links are known.
    #[serde(default, rename = "links")]
    pub _links: serde::de::IgnoredAny,
    /// `[[udp]]`, read by `udp::resolve` once the preset's hosts are known.
    #[serde(default, rename = "udp")]
    pub _udp: serde::de::IgnoredAny,
    /// `[[commands]]`, read by `commands::resolve` once the preset's hosts are known.
    #[serde(default, rename = "commands")]
    pub _commands: serde::de::IgnoredAny,
    /// `[timing]`, read by `timing::resolve`.
    #[serde(default, rename = "timing")]
    pub _timing: serde::de::IgnoredAny,
}

/// `[test]`: which Flent test and its timing.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawTest {
    pub name: Spanned<String>,
    pub length: Option<Spanned<TimeValue>>,
    pub delay: Option<Spanned<TimeValue>>,
    pub step: Option<Spanned<TimeValue>>,
    pub start_jitter: Option<Spanned<TimeValue>>,
}

/// `[topology]` with `preset = "access"` or `"rtt_fair"`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawAccess {
    /// Already checked in the first pass.
    #[allow(dead_code, reason = "kept so that deny_unknown_fields accepts the key")]
    pub preset: String,
    pub rate: Option<Spanned<Rate>>,
    pub up_rate: Option<Spanned<Rate>>,
    pub down_rate: Option<Spanned<Rate>>,
    pub delay: Spanned<TimeValue>,
    pub buffer: Option<Spanned<BufferSpec>>,
    pub up_buffer: Option<Spanned<BufferSpec>>,
    pub down_buffer: Option<Spanned<BufferSpec>>,
    pub qdisc: Option<Spanned<RawQdisc>>,
    pub up_qdisc: Option<Spanned<RawQdisc>>,
    pub down_qdisc: Option<Spanned<RawQdisc>>,
    pub loss: Option<Spanned<Probability>>,
    pub down_loss: Option<Spanned<Probability>>,
    pub server_delays: Option<Spanned<Vec<Spanned<TimeValue>>>>,
    pub server_rate: Option<Spanned<Rate>>,
    pub nic_rate: Option<Spanned<Rate>>,
    pub driver_queue: Option<Spanned<i64>>,
}

/// First pass: only the preset name (all other keys ignored).
#[derive(Debug, Deserialize)]
pub(crate) struct PresetOnly {
    pub topology: Spanned<PresetName>,
}

/// The `preset` key of the topology table.
#[derive(Debug, Deserialize)]
pub(crate) struct PresetName {
    pub preset: Spanned<String>,
}

/// `[[flows]]` (and the `[tcp]` template of a test): the transport keys every flow has, and the
/// controller's own keys (declared in [`super::controllers`]) kept as written in `params`.
#[derive(Debug)]
pub(crate) struct RawFlow {
    pub name: Option<Spanned<String>>,
    pub controller: Spanned<String>,
    pub start: Option<Spanned<TimeValue>>,
    pub stop: Option<Spanned<TimeValue>>,
    pub size: Option<Spanned<ByteSize>>,
    pub access_delay: Option<Spanned<TimeValue>>,
    pub mss: Option<Spanned<i64>>,
    pub pacing: Option<RawPacing>,
    pub ecn: Option<Spanned<String>>,
    pub initial_window: Option<Spanned<i64>>,
    pub rcv_wnd: Option<Spanned<ByteSize>>,
    pub read_rate: Option<Spanned<Rate>>,
    pub read_chunk: Option<Spanned<ByteSize>>,
    pub rcvbuf: Option<Spanned<ByteSize>>,
    pub ack_every: Option<Spanned<i64>>,
    pub delayed_ack: Option<Spanned<TimeValue>>,
    pub undo: Option<Spanned<bool>>,
    pub frto: Option<Spanned<bool>>,
    pub rack_reo_adapt: Option<Spanned<bool>>,
    pub stack: Option<Spanned<String>>,
    pub loss_detection: Option<Spanned<String>>,
    pub tlp: Option<Spanned<bool>>,
    pub rto_min: Option<Spanned<TimeValue>>,
    pub rto_rule: Option<Spanned<String>>,
    pub ts_clock: Option<Spanned<TimeValue>>,
    pub cc_rtt: Option<Spanned<String>>,
    pub quickack: Option<Spanned<bool>>,
    pub sack_compression: Option<Spanned<bool>>,
    pub host_offloads: Option<Spanned<bool>>,
    pub count: Option<Spanned<i64>>,
    pub arrivals: Option<Spanned<f64>>,
    pub size_cdf: Option<Spanned<String>>,
    pub trace: Option<Spanned<bool>>,
    pub handshake: Option<Spanned<bool>>,
    pub fast_open: Option<Spanned<bool>>,
    pub requests: Option<Spanned<i64>>,
    pub request_size: Option<Spanned<ByteSize>>,
    pub think_time: Option<Spanned<TimeValue>>,
    pub persistent: Option<Spanned<bool>>,
    pub slow_start_after_idle: Option<Spanned<bool>>,
    pub transport: Option<Spanned<String>>,
    pub quic_datagram: Option<Spanned<i64>>,
    pub quic_framing: Option<Spanned<i64>>,
    pub quic_ip_udp_overhead: Option<Spanned<i64>>,
    pub quic_max_ack_delay: Option<Spanned<TimeValue>>,
    pub quic_clock: Option<Spanned<TimeValue>>,
    pub host: Option<Spanned<RawHost>>,
    /// Keys some controller declares, in file order; checked against the flow's controller.
    pub params: Given,
}

/// The transport keys of a flow, in the order error messages list them (the controllers' keys
/// come after `controller`).
const FLOW_KEYS: [&str; 47] = [
    "name",
    "controller",
    "start",
    "stop",
    "size",
    "access_delay",
    "mss",
    "pacing",
    "ecn",
    "initial_window",
    "rcv_wnd",
    "read_rate",
    "read_chunk",
    "rcvbuf",
    "ack_every",
    "delayed_ack",
    "undo",
    "frto",
    "rack_reo_adapt",
    "stack",
    "loss_detection",
    "tlp",
    "rto_min",
    "rto_rule",
    "ts_clock",
    "cc_rtt",
    "quickack",
    "sack_compression",
    "host_offloads",
    "count",
    "arrivals",
    "size_cdf",
    "trace",
    "handshake",
    "fast_open",
    "requests",
    "request_size",
    "think_time",
    "persistent",
    "slow_start_after_idle",
    "transport",
    "quic_datagram",
    "quic_framing",
    "quic_ip_udp_overhead",
    "quic_max_ack_delay",
    "quic_clock",
    "host",
];

/// Every key a flow table accepts: the transport keys and every controller's keys.
fn flow_keys() -> &'static [&'static str] {
    static KEYS: LazyLock<&'static [&'static str]> = LazyLock::new(|| {
        let mut keys: Vec<&'static str> = FLOW_KEYS[..2].to_vec();
        keys.extend(super::controllers::all_param_names());
        keys.extend(&FLOW_KEYS[2..]);
        keys.leak()
    });
    &KEYS
}

/// A flow table key, checked against [`flow_keys`] while it is read (so that the TOML layer
/// reports an unknown key at the key, as `deny_unknown_fields` does).
struct FlowKey(String);

impl<'de> Deserialize<'de> for FlowKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = FlowKey;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a flow key")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<FlowKey, E> {
                if flow_keys().contains(&v) {
                    Ok(FlowKey(v.to_owned()))
                } else {
                    Err(E::unknown_field(v, flow_keys()))
                }
            }
        }
        d.deserialize_identifier(V)
    }
}

impl<'de> Deserialize<'de> for RawFlow {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawFlow;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a flow table")
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<RawFlow, A::Error> {
                fn set<'de, A: de::MapAccess<'de>, T: Deserialize<'de>>(
                    map: &mut A,
                    slot: &mut Option<T>,
                    key: &'static str,
                ) -> Result<(), A::Error> {
                    if slot.is_some() {
                        return Err(de::Error::duplicate_field(key));
                    }
                    *slot = Some(map.next_value()?);
                    Ok(())
                }
                let mut controller = None;
                let mut f = RawFlow {
                    name: None,
                    controller: Spanned::new(0..0, String::new()),
                    start: None,
                    stop: None,
                    size: None,
                    access_delay: None,
                    mss: None,
                    pacing: None,
                    ecn: None,
                    initial_window: None,
                    rcv_wnd: None,
                    read_rate: None,
                    read_chunk: None,
                    rcvbuf: None,
                    ack_every: None,
                    delayed_ack: None,
                    undo: None,
                    frto: None,
                    rack_reo_adapt: None,
                    stack: None,
                    loss_detection: None,
                    tlp: None,
                    rto_min: None,
                    rto_rule: None,
                    ts_clock: None,
                    cc_rtt: None,
                    quickack: None,
                    sack_compression: None,
                    host_offloads: None,
                    count: None,
                    arrivals: None,
                    size_cdf: None,
                    trace: None,
                    handshake: None,
                    fast_open: None,
                    requests: None,
                    request_size: None,
                    think_time: None,
                    persistent: None,
                    slow_start_after_idle: None,
                    transport: None,
                    quic_datagram: None,
                    quic_framing: None,
                    quic_ip_udp_overhead: None,
                    quic_max_ack_delay: None,
                    quic_clock: None,
                    host: None,
                    params: Vec::new(),
                };
                while let Some(FlowKey(key)) = map.next_key()? {
                    match key.as_str() {
                        "name" => set(&mut map, &mut f.name, "name")?,
                        "controller" => set(&mut map, &mut controller, "controller")?,
                        "start" => set(&mut map, &mut f.start, "start")?,
                        "stop" => set(&mut map, &mut f.stop, "stop")?,
                        "size" => set(&mut map, &mut f.size, "size")?,
                        "access_delay" => set(&mut map, &mut f.access_delay, "access_delay")?,
                        "mss" => set(&mut map, &mut f.mss, "mss")?,
                        "pacing" => set(&mut map, &mut f.pacing, "pacing")?,
                        "ecn" => set(&mut map, &mut f.ecn, "ecn")?,
                        "initial_window" => {
                            set(&mut map, &mut f.initial_window, "initial_window")?;
                        }
                        "rcv_wnd" => set(&mut map, &mut f.rcv_wnd, "rcv_wnd")?,
                        "read_rate" => set(&mut map, &mut f.read_rate, "read_rate")?,
                        "read_chunk" => set(&mut map, &mut f.read_chunk, "read_chunk")?,
                        "rcvbuf" => set(&mut map, &mut f.rcvbuf, "rcvbuf")?,
                        "ack_every" => set(&mut map, &mut f.ack_every, "ack_every")?,
                        "delayed_ack" => set(&mut map, &mut f.delayed_ack, "delayed_ack")?,
                        "undo" => set(&mut map, &mut f.undo, "undo")?,
                        "frto" => set(&mut map, &mut f.frto, "frto")?,
                        "rack_reo_adapt" => {
                            set(&mut map, &mut f.rack_reo_adapt, "rack_reo_adapt")?;
                        }
                        "stack" => set(&mut map, &mut f.stack, "stack")?,
                        "loss_detection" => set(&mut map, &mut f.loss_detection, "loss_detection")?,
                        "tlp" => set(&mut map, &mut f.tlp, "tlp")?,
                        "rto_min" => set(&mut map, &mut f.rto_min, "rto_min")?,
                        "rto_rule" => set(&mut map, &mut f.rto_rule, "rto_rule")?,
                        "ts_clock" => set(&mut map, &mut f.ts_clock, "ts_clock")?,
                        "cc_rtt" => set(&mut map, &mut f.cc_rtt, "cc_rtt")?,
                        "quickack" => set(&mut map, &mut f.quickack, "quickack")?,
                        "sack_compression" => {
                            set(&mut map, &mut f.sack_compression, "sack_compression")?;
                        }
                        "host_offloads" => set(&mut map, &mut f.host_offloads, "host_offloads")?,
                        "count" => set(&mut map, &mut f.count, "count")?,
                        "arrivals" => set(&mut map, &mut f.arrivals, "arrivals")?,
                        "size_cdf" => set(&mut map, &mut f.size_cdf, "size_cdf")?,
                        "trace" => set(&mut map, &mut f.trace, "trace")?,
                        "handshake" => set(&mut map, &mut f.handshake, "handshake")?,
                        "fast_open" => set(&mut map, &mut f.fast_open, "fast_open")?,
                        "requests" => set(&mut map, &mut f.requests, "requests")?,
                        "request_size" => set(&mut map, &mut f.request_size, "request_size")?,
                        "think_time" => set(&mut map, &mut f.think_time, "think_time")?,
                        "persistent" => set(&mut map, &mut f.persistent, "persistent")?,
                        "slow_start_after_idle" => {
                            set(
                                &mut map,
                                &mut f.slow_start_after_idle,
                                "slow_start_after_idle",
                            )?;
                        }
                        "transport" => set(&mut map, &mut f.transport, "transport")?,
                        "quic_datagram" => set(&mut map, &mut f.quic_datagram, "quic_datagram")?,
                        "quic_framing" => set(&mut map, &mut f.quic_framing, "quic_framing")?,
                        "quic_ip_udp_overhead" => {
                            set(
                                &mut map,
                                &mut f.quic_ip_udp_overhead,
                                "quic_ip_udp_overhead",
                            )?;
                        }
                        "quic_max_ack_delay" => {
                            set(&mut map, &mut f.quic_max_ack_delay, "quic_max_ack_delay")?;
                        }
                        "quic_clock" => set(&mut map, &mut f.quic_clock, "quic_clock")?,
                        "host" => set(&mut map, &mut f.host, "host")?,
                        _ => {
                            let value: Spanned<RawValue> = map.next_value()?;
                            f.params.push((key, value));
                        }
                    }
                }
                f.controller = controller.ok_or_else(|| de::Error::missing_field("controller"))?;
                Ok(f)
            }
        }
        d.deserialize_map(V)
    }
}

/// `[host]` (defaults for every sending host) and `[flows.host]` (one flow's sending host).
#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawHost {
    pub tsq: Option<Spanned<bool>>,
    pub pacing_shift: Option<Spanned<i64>>,
    pub limit_output_bytes: Option<Spanned<ByteSize>>,
    pub qdisc: Option<Spanned<String>>,
    pub fq_limit: Option<Spanned<i64>>,
    pub fq_flow_limit: Option<Spanned<i64>>,
    pub fq_quantum: Option<Spanned<ByteSize>>,
    pub fq_initial_quantum: Option<Spanned<ByteSize>>,
    pub tso: Option<Spanned<String>>,
    pub gso_max_size: Option<Spanned<ByteSize>>,
    pub min_tso_segs: Option<Spanned<i64>>,
    pub cpu_share: Option<Spanned<f64>>,
    pub cpu_timeslice: Option<Spanned<TimeValue>>,
    pub cpu_offset: Option<Spanned<TimeValue>>,
    pub cpu_max: Option<Spanned<String>>,
    pub cpu_load: Option<Spanned<String>>,
    pub cpu_cost: Option<Spanned<TimeValue>>,
    pub cpu_resume: Option<Spanned<String>>,
    pub preset: Option<Spanned<String>>,
    pub tx_ring: Option<Spanned<i64>>,
    pub rx_ring: Option<Spanned<i64>>,
    pub napi_tx: Option<Spanned<bool>>,
    pub tap_queue: Option<Spanned<i64>>,
    pub vhost_wakeup: Option<Spanned<TimeValue>>,
}

/// `pacing = "auto" | "on" | "off"`.
#[derive(Debug, Deserialize, Clone, Copy)]
#[serde(rename_all = "lowercase")]
pub(crate) enum RawPacing {
    Auto,
    On,
    Off,
}

/// `[[probes]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawProbe {
    pub name: Option<Spanned<String>>,
    pub interval: Option<Spanned<TimeValue>>,
    pub size: Option<Spanned<ByteSize>>,
    pub access_delay: Option<Spanned<TimeValue>>,
    pub start: Option<Spanned<TimeValue>>,
    pub stop: Option<Spanned<TimeValue>>,
}

/// `[topology]` with `preset = "dumbbell"`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawDumbbell {
    /// Already checked in the first pass.
    #[allow(dead_code, reason = "kept so that deny_unknown_fields accepts the key")]
    pub preset: String,
    pub profile: Option<Spanned<String>>,
    pub rate: Option<Spanned<Rate>>,
    pub delay: Option<Spanned<TimeValue>>,
    pub buffer: Option<Spanned<BufferSpec>>,
    pub qdisc: Option<Spanned<RawQdisc>>,
    pub loss: Option<Spanned<Probability>>,
    pub reverse_rate: Option<Spanned<Rate>>,
    pub access_rate: Option<Spanned<Rate>>,
    pub nic_rate: Option<Spanned<Rate>>,
    pub driver_queue: Option<Spanned<i64>>,
    pub bottleneck_at: Option<Spanned<String>>,
    #[serde(default)]
    pub drops: Vec<Spanned<RawDrop>>,
}

/// `[[topology.drops]]`: drop transmission `nth` of segment `seq` of `flow`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawDrop {
    pub flow: Spanned<FlowRef>,
    pub seq: Spanned<i64>,
    #[serde(default)]
    pub nth: Option<Spanned<i64>>,
}

/// A flow named by its (expanded) index or its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FlowRef {
    Index(i64),
    Name(String),
}

impl<'de> Deserialize<'de> for FlowRef {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = FlowRef;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a flow name or a flow index (0 = first flow)")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<FlowRef, E> {
                Ok(FlowRef::Name(v.to_owned()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<FlowRef, E> {
                Ok(FlowRef::Index(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<FlowRef, E> {
                Ok(FlowRef::Index(i64::try_from(v).unwrap_or(i64::MAX)))
            }
        }
        d.deserialize_any(V)
    }
}

/// `qdisc = "fq_codel"` or a `[topology.qdisc]` table with `kind` and parameters.
#[derive(Debug)]
pub(crate) enum RawQdisc {
    /// A discipline with Linux's defaults (or `fifo`).
    Name(String),
    /// A discipline with parameters: `kind` and the other keys as written, in file order
    /// (`qdisc::resolve` checks them against the discipline's declaration).
    Table {
        kind: Option<Spanned<String>>,
        params: Given,
    },
}

impl<'de> Deserialize<'de> for RawQdisc {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawQdisc;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(
                    "a queue discipline name such as \"fq_codel\", or a table with `kind` and \
                     the discipline's parameters",
                )
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RawQdisc, E> {
                Ok(RawQdisc::Name(v.to_owned()))
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<RawQdisc, A::Error> {
                let mut kind: Option<Spanned<String>> = None;
                let mut params = Given::new();
                while let Some(key) = map.next_key::<String>()? {
                    if key == "kind" {
                        if kind.is_some() {
                            return Err(de::Error::duplicate_field("kind"));
                        }
                        kind = Some(map.next_value()?);
                    } else {
                        let value: Spanned<RawValue> = map.next_value()?;
                        params.push((key, value));
                    }
                }
                Ok(RawQdisc::Table { kind, params })
            }
        }
        d.deserialize_any(V)
    }
}

/// `[topology]` with `preset = "wifi_hybrid"`: the `access` keys without the line rates (the
/// line behind the AP is Ethernet, or `isp_rate`), and the Wi-Fi keys.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawWifiHybrid {
    /// Already checked in the first pass.
    #[allow(dead_code, reason = "kept so that deny_unknown_fields accepts the key")]
    pub preset: String,
    pub isp_rate: Option<Spanned<Rate>>,
    pub delay: Option<Spanned<TimeValue>>,
    pub buffer: Option<Spanned<BufferSpec>>,
    pub up_buffer: Option<Spanned<BufferSpec>>,
    pub down_buffer: Option<Spanned<BufferSpec>>,
    pub qdisc: Option<Spanned<RawQdisc>>,
    pub up_qdisc: Option<Spanned<RawQdisc>>,
    pub down_qdisc: Option<Spanned<RawQdisc>>,
    pub loss: Option<Spanned<Probability>>,
    pub down_loss: Option<Spanned<Probability>>,
    pub server_delays: Option<Spanned<Vec<Spanned<TimeValue>>>>,
    pub server_rate: Option<Spanned<Rate>>,
    pub nic_rate: Option<Spanned<Rate>>,
    pub driver_queue: Option<Spanned<i64>>,
    pub standard: Option<Spanned<String>>,
    pub band: Option<Spanned<String>>,
    pub width: Option<Spanned<i64>>,
    pub mcs: Option<Spanned<i64>>,
    pub nss: Option<Spanned<i64>>,
    pub gi: Option<Spanned<i64>>,
    pub per: Option<Spanned<Probability>>,
    pub ba_window: Option<Spanned<i64>>,
    pub max_ampdu: Option<Spanned<ByteSize>>,
    pub pacing_shift: Option<Spanned<i64>>,
    pub amsdu: Option<Spanned<RawAmsdu>>,
    pub ampdu: Option<Spanned<bool>>,
    pub ampdu_vo: Option<Spanned<bool>>,
    pub retry_limit: Option<Spanned<i64>>,
    pub rts_threshold: Option<Spanned<i64>>,
    pub queues: Option<Spanned<String>>,
    pub rate_control: Option<Spanned<String>>,
    pub ap_queues: Option<Spanned<String>>,
    pub ap_fifo_depth: Option<Spanned<i64>>,
    pub dscp_to_ac: Option<Spanned<String>>,
    pub ap_edca: Option<Spanned<String>>,
    pub snr: Option<Spanned<f64>>,
}

/// `amsdu`: a maximum length in bytes (a number or a size such as `"7935B"`), or `"off"`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum RawAmsdu {
    Bytes(i64),
    Text(String),
}

/// One SNR in dB for every station, or one per station.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum RawSnr {
    One(f64),
    PerStation(Vec<f64>),
}

/// One MCS for every station, or one per station.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum RawMcs {
    One(i64),
    PerStation(Vec<i64>),
}

/// `[topology]` with `preset = "wifi"`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawWifi {
    /// Already checked in the first pass.
    #[allow(dead_code, reason = "kept so that deny_unknown_fields accepts the key")]
    pub preset: String,
    pub stations: Option<Spanned<i64>>,
    pub direction: Option<Spanned<String>>,
    pub standard: Option<Spanned<String>>,
    pub band: Option<Spanned<String>>,
    pub width: Option<Spanned<i64>>,
    pub mcs: Option<Spanned<RawMcs>>,
    pub nss: Option<Spanned<i64>>,
    pub gi: Option<Spanned<i64>>,
    pub per: Option<Spanned<Probability>>,
    pub ba_window: Option<Spanned<i64>>,
    pub max_ampdu: Option<Spanned<ByteSize>>,
    pub pacing_shift: Option<Spanned<i64>>,
    pub amsdu: Option<Spanned<RawAmsdu>>,
    pub ampdu: Option<Spanned<bool>>,
    pub ampdu_vo: Option<Spanned<bool>>,
    pub retry_limit: Option<Spanned<i64>>,
    pub rts_threshold: Option<Spanned<i64>>,
    pub queues: Option<Spanned<String>>,
    pub rate_control: Option<Spanned<String>>,
    pub ap_queues: Option<Spanned<String>>,
    pub ap_fifo_depth: Option<Spanned<i64>>,
    pub dscp_to_ac: Option<Spanned<String>>,
    pub ap_edca: Option<Spanned<String>>,
    pub snr: Option<Spanned<RawSnr>>,
    pub rate: Option<Spanned<Rate>>,
    pub delay: Option<Spanned<TimeValue>>,
    pub buffer: Option<Spanned<BufferSpec>>,
    pub nic_rate: Option<Spanned<Rate>>,
    pub driver_queue: Option<Spanned<i64>>,
}
