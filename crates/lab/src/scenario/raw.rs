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
    /// A Flent-equivalent test (presets `access` and `rtt_fair`).
    pub test: Option<Spanned<RawTest>>,
    /// The template of every TCP flow of a test.
    pub tcp: Option<Spanned<RawFlow>>,
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

/// `[[flows]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawFlow {
    pub name: Option<Spanned<String>>,
    pub controller: Spanned<String>,
    pub slow_start: Option<Spanned<String>>,
    pub fast_convergence: Option<Spanned<bool>>,
    pub tcp_friendliness: Option<Spanned<bool>>,
    pub start: Option<Spanned<TimeValue>>,
    pub stop: Option<Spanned<TimeValue>>,
    pub size: Option<Spanned<ByteSize>>,
    pub access_delay: Option<Spanned<TimeValue>>,
    pub mss: Option<Spanned<i64>>,
    pub pacing: Option<RawPacing>,
    pub initial_window: Option<Spanned<i64>>,
    pub ack_every: Option<Spanned<i64>>,
    pub delayed_ack: Option<Spanned<TimeValue>>,
    pub count: Option<Spanned<i64>>,
    pub trace: Option<Spanned<bool>>,
    pub robust: Option<Spanned<bool>>,
    pub robust_rounds: Option<Spanned<i64>>,
    pub robust_alpha: Option<Spanned<f64>>,
    pub startup_shift: Option<Spanned<i64>>,
    pub steady_shift: Option<Spanned<i64>>,
    pub host: Option<Spanned<RawHost>>,
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
    pub rate: Spanned<Rate>,
    pub delay: Spanned<TimeValue>,
    pub buffer: Option<Spanned<BufferSpec>>,
    pub loss: Option<Spanned<Probability>>,
    pub reverse_rate: Option<Spanned<Rate>>,
    pub access_rate: Option<Spanned<Rate>>,
    pub nic_rate: Option<Spanned<Rate>>,
    pub driver_queue: Option<Spanned<i64>>,
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
