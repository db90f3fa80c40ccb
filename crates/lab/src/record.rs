//! What one run of a study leaves behind: a [`RunRecord`], plain data that the run store writes
//! (one file per run, with a checksum), the statistics read, the plots draw and the Flent export
//! turns into a `.flent.gz`.
//!
//! Contract: a record holds only values derived from the run's spec and seed, never wall-clock
//! times or host names, so the same spec and seed give a byte-identical record on every machine.
//! Series use Flent's names and units (`flent-format.md` §2.2): throughput series in Mbit/s sampled
//! on the [`RunRecord::x_values`] grid, latency series in ms with one raw sample per probe. Times
//! are seconds from the start of the run (Flent's `T0`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Version of the record layout; a store holding another version is recomputed, not misread.
/// Bump it when the way a record is made from a run's results changes (a metric's definition),
/// which the model version below does not see.
pub const RECORD_FORMAT: u32 = 1;

/// The golden table: the hash of every shipped scenario's, study configuration's and benchmark's
/// output (`crates/lab/tests/golden.rs`).
const GOLDEN_TABLE: &str = include_str!("../tests/golden/hashes.txt");

/// The model's version: the first 16 hex digits of the SHA-256 of the golden table's hash lines
/// (its `#` comment lines left out). The golden test fails whenever a change alters any
/// shipped result, and recording it again rewrites the table, so the version changes whenever
/// results can change, and only then: a change that keeps every result (a refactor, a faster
/// path, a message) keeps it. Study run ids carry it, so a store never mixes results of two
/// models (see [`crate::study`]).
#[must_use]
pub fn model_version() -> &'static str {
    static VERSION: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    VERSION.get_or_init(|| table_version(GOLDEN_TABLE))
}

/// The version of a golden table's text (see [`model_version`]).
fn table_version(table: &str) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for line in table
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
    {
        h.update(line.trim_end().as_bytes());
        h.update(b"\n");
    }
    crate::study::hex(&h.finalize()[..8])
}

/// One run of one configuration of a study.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// [`RECORD_FORMAT`] at the time of writing.
    pub format: u32,
    /// The run id: hex SHA-256 of the canonical spec and the seed.
    pub id: String,
    /// Study name.
    pub study: String,
    /// Label of the configuration (the grid levels, e.g. `test=rrul cc=bbr3`).
    pub config: String,
    /// The grid levels of this configuration, in the study's axis order: (axis, level label).
    pub levels: Vec<(String, String)>,
    /// Repetition index, 0-based.
    pub rep: u32,
    /// The run's seed (derived from the study seed, the configuration and the repetition).
    pub seed: u64,
    /// The canonical spec the run was built from (the base with the grid levels applied).
    pub spec: serde_json::Value,
    /// The Flent-equivalent test, when the run is one.
    pub test: Option<TestInfo>,
    /// Scalar metrics of the run (see [`crate::metrics`] for their names and definitions).
    pub metrics: BTreeMap<String, f64>,
    /// Sample times of the stepped series, s from the start of the run (Flent's `x_values`).
    pub x_values: Vec<f64>,
    /// The run's series, in a fixed order: TCP series first (in flow order), then latency
    /// probes (in probe order).
    pub series: Vec<SeriesRecord>,
    /// The capacity of each monitored link whose rate changes over time (`[[links]]`), to draw
    /// under the throughput; empty (and left out of the file) otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub capacity: Vec<CapacityRecord>,
    /// The one-way delay of each monitored link whose delay changes during the run (its own
    /// delay changes, or a delay schedule or reroute behind it), to draw with the RTT; empty
    /// (and left out of the file) otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub delay: Vec<DelayRecord>,
    /// Each sized flow's completion, in flow order (for FCT and slowdown plots); empty (and
    /// left out of the file) when the run has no sized flow.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fct: Vec<FctRecord>,
    /// Each Wi-Fi BSS node's channel counters over the run (AP first, then the stations);
    /// empty (and left out of the file) without Wi-Fi.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wifi: Vec<WifiRecord>,
    /// Simulator work.
    pub sim: SimInfo,
}

/// The completion of one sized flow of a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FctRecord {
    /// The flow's name.
    pub flow: String,
    /// Its transfer, payload bytes.
    pub size_bytes: u64,
    /// Its flow-completion time, s (`None`: it did not complete within the run).
    pub fct_s: Option<f64>,
    /// FCT ÷ the ideal FCT of the transfer alone on the empty path (`None`: not completed).
    pub slowdown: Option<f64>,
}

impl FctRecord {
    /// The sized flows of `results`, in flow order.
    #[must_use]
    pub fn of(results: &cclab_sim::Results) -> Vec<FctRecord> {
        results
            .flows
            .iter()
            .filter_map(|f| {
                Some(FctRecord {
                    flow: f.name.clone(),
                    size_bytes: f.summary.size_bytes?,
                    fct_s: f.summary.fct_s,
                    slowdown: f.summary.fct_slowdown,
                })
            })
            .collect()
    }
}

/// One series of a link on the [`RunRecord::x_values`] grid (`None` at a point the run did not
/// sample): its capacity ([`CapacityRecord`]) or its delay ([`DelayRecord`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinkRecord {
    /// The link's name.
    pub link: String,
    /// The value at each grid point.
    pub values: Vec<Option<f64>>,
}

/// What a link could have sent over the step ending at each grid point, Mbit/s.
pub type CapacityRecord = LinkRecord;

/// A link's one-way delay plus what the delay elements behind it add, ms
/// (`cclab_sim::QueueSeries::delay_ms`: the value scheduled at each grid point).
pub type DelayRecord = LinkRecord;

/// The Flent test a run reproduces, and its timing (Flent `-l`, `-d`, `-s`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TestInfo {
    /// Flent test name (`tcp_upload`, `tcp_8up`, `rrul`, `rrul_be`, `rtt_fair`).
    pub name: String,
    /// Length of the bulk transfers, s (Flent `LENGTH`, 60).
    pub length_s: f64,
    /// Start delay of the bulk transfers, s (Flent `DELAY`, 5).
    pub delay_s: f64,
    /// Sampling step, s (Flent `STEP_SIZE`, 0.2).
    pub step_s: f64,
    /// The whole run, s (Flent `TOTAL_LENGTH` = length + 2·delay).
    pub total_length_s: f64,
    /// Names of the server hosts (Flent `HOSTS`), in test order.
    pub hosts: Vec<String>,
    /// Name of the client host (Flent `LOCAL_HOST`).
    pub local_host: String,
    /// A one-line title (Flent `TITLE`): test, controller, topology.
    pub title: String,
}

/// What a series measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SeriesKind {
    /// A TCP bulk transfer from the client to a server (Flent `TCP_STREAM`), goodput in Mbit/s.
    TcpUpload,
    /// A TCP bulk transfer from a server to the client (Flent `TCP_MAERTS`), goodput in Mbit/s.
    TcpDownload,
    /// An ICMP-echo-like latency probe, RTT in ms.
    PingIcmp,
    /// A UDP round-trip latency probe (Flent `udp_rtt`), RTT in ms.
    PingUdp,
}

/// One Wi-Fi BSS node of a run ([`cclab_sim::WifiNodeResult`], over the whole run).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct WifiRecord {
    /// The BSS's name.
    pub bss: String,
    /// The node's name.
    pub node: String,
    /// `ap` or `station`.
    pub role: String,
    /// Channel accesses won with something to send.
    pub accesses: u64,
    /// Of which collided.
    pub collisions: u64,
    /// MPDU transmissions, retransmissions included.
    pub mpdus_sent: u64,
    /// MPDU retransmissions.
    pub retries: u64,
    /// MPDUs dropped.
    pub dropped: u64,
    /// Share of the run its exchanges took the channel.
    pub airtime_share: f64,
    /// Idle time (AIFS and backoff) before its accesses, s.
    pub access_wait_s: f64,
    /// A-MPDU size histogram: `ampdu_sizes[k]` A-MPDUs carried k MPDUs.
    pub ampdu_sizes: Vec<u64>,
}

impl WifiRecord {
    /// Every node of every BSS of `results`, in order.
    #[must_use]
    pub fn of(results: &cclab_sim::Results) -> Vec<WifiRecord> {
        results
            .wifi
            .iter()
            .flat_map(|b| {
                b.nodes.iter().map(|n| WifiRecord {
                    bss: b.name.clone(),
                    node: n.node.clone(),
                    role: n.role.to_owned(),
                    accesses: n.accesses,
                    collisions: n.collisions,
                    mpdus_sent: n.mpdus_sent,
                    retries: n.retries,
                    dropped: n.dropped,
                    airtime_share: n.airtime_share,
                    access_wait_s: n.access_wait_s,
                    ampdu_sizes: n.ampdu_sizes.clone(),
                })
            })
            .collect()
    }
}

impl RunRecord {
    /// Check what readers of a record rely on: the format, a finite sampling grid, one value
    /// per grid point in every series and capacity, and raw sample columns as long as their times (the
    /// optional ones may be empty). A record that passes its checksum but not this was not
    /// written by cclab.
    ///
    /// # Errors
    /// What is inconsistent.
    pub fn check(&self) -> Result<(), String> {
        if self.format != RECORD_FORMAT {
            return Err(format!(
                "record format {}, this cclab writes {RECORD_FORMAT}",
                self.format
            ));
        }
        if let Some(x) = self.x_values.iter().find(|x| !x.is_finite()) {
            return Err(format!("x_values holds the non-finite value {x}"));
        }
        for s in &self.series {
            if s.values.len() != self.x_values.len() {
                return Err(format!(
                    "series `{}` has {} values on a grid of {} x_values",
                    s.name,
                    s.values.len(),
                    self.x_values.len()
                ));
            }
            if let Some((column, len)) = s.raw.mismatched_column() {
                return Err(format!(
                    "series `{}` has {len} raw `{column}` samples for {} times",
                    s.name,
                    s.raw.len()
                ));
            }
        }
        let links = self
            .capacity
            .iter()
            .map(|c| ("capacity", &c.link, c.values.len()))
            .chain(
                self.delay
                    .iter()
                    .map(|d| ("delay", &d.link, d.values.len())),
            );
        for (what, link, len) in links {
            if len != self.x_values.len() {
                return Err(format!(
                    "the {what} of link `{link}` has {len} values on a grid of {} x_values",
                    self.x_values.len()
                ));
            }
        }
        for f in &self.fct {
            let bad = |v: Option<f64>| v.is_some_and(|x| !x.is_finite() || x <= 0.0);
            if bad(f.fct_s) || bad(f.slowdown) {
                return Err(format!(
                    "flow `{}` has a completion time or slowdown that is not a positive number",
                    f.flow
                ));
            }
        }
        Ok(())
    }
}

impl SeriesKind {
    /// True for the TCP kinds.
    #[must_use]
    pub fn is_tcp(self) -> bool {
        matches!(self, SeriesKind::TcpUpload | SeriesKind::TcpDownload)
    }
}

/// One series of a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeriesRecord {
    /// Flent series name (e.g. `TCP upload BE`, `Ping (ms) UDP EF`).
    pub name: String,
    /// What it measures.
    pub kind: SeriesKind,
    /// DSCP code point carried by its packets (0 = best effort / CS0).
    pub dscp: u8,
    /// Controller of a TCP series (as the scenario names it), `None` for probes.
    pub controller: Option<String>,
    /// Units of the values (`Mbits/s` or `ms`, Flent's spelling).
    pub units: String,
    /// Values on the [`RunRecord::x_values`] grid; `None` where the series has no value (before
    /// a transfer starts, after it ends, or a step without an answered probe).
    pub values: Vec<Option<f64>>,
    /// Raw samples (Flent `raw_values`).
    pub raw: RawSamples,
}

/// Raw samples as parallel columns (one entry per sample in each column). TCP series carry one
/// sample per step with socket statistics; probes one sample per answered probe.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RawSamples {
    /// Sample time, s from the start of the run (a probe's send time).
    pub t: Vec<f64>,
    /// The value (Mbit/s or ms).
    pub val: Vec<f64>,
    /// Probe sequence number (probes only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub seq: Vec<u64>,
    /// Congestion window, segments (TCP only; Flent `tcp_cwnd`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tcp_cwnd: Vec<Option<f64>>,
    /// Smoothed RTT, ms (TCP only; Flent `tcp_rtt`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tcp_rtt: Vec<Option<f64>>,
    /// Pacing rate, bit/s (TCP only; Flent `tcp_pacing_rate`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tcp_pacing_rate: Vec<Option<f64>>,
    /// Delivery rate, bit/s (TCP only; Flent `tcp_delivery_rate`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tcp_delivery_rate: Vec<Option<f64>>,
}

impl RawSamples {
    /// Number of samples.
    #[must_use]
    pub fn len(&self) -> usize {
        self.t.len()
    }

    /// True when there is no sample.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.t.is_empty()
    }

    /// The first column whose length differs from the sample times' (`val` always has one
    /// entry per sample; the other columns may also be empty), with that length.
    #[must_use]
    pub fn mismatched_column(&self) -> Option<(&'static str, usize)> {
        let n = self.t.len();
        [
            ("val", self.val.len(), false),
            ("seq", self.seq.len(), true),
            ("tcp_cwnd", self.tcp_cwnd.len(), true),
            ("tcp_rtt", self.tcp_rtt.len(), true),
            ("tcp_pacing_rate", self.tcp_pacing_rate.len(), true),
            ("tcp_delivery_rate", self.tcp_delivery_rate.len(), true),
        ]
        .into_iter()
        .find(|&(_, len, may_be_empty)| len != n && !(may_be_empty && len == 0))
        .map(|(column, len, _)| (column, len))
    }
}

/// Simulator work of a run (deterministic counters, no wall time).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SimInfo {
    /// Simulated seconds.
    pub duration_s: f64,
    /// Events processed.
    pub events: u64,
    /// Data segments sent.
    pub data_packets_sent: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::study::store::{decode, encode};

    /// The model version follows the golden table's hashes and nothing else: a recorded change
    /// of any one result changes it, a new comment does not.
    #[test]
    fn model_version_follows_the_golden_hashes_only() {
        let table = "# recorded\naaaa scenario_a\nbbbb scenario_b\n";
        let v = table_version(table);
        assert_eq!(v.len(), 16);
        assert!(v.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_eq!(table_version(&format!("# why it changed\n{table}\n")), v);
        assert_ne!(table_version(&table.replace("bbbb", "bbbc")), v);
        assert_ne!(table_version(&format!("{table}cccc scenario_c\n")), v);
        assert_eq!(model_version(), table_version(GOLDEN_TABLE));
    }

    /// A minimal record with one series of `values` on a two-point grid.
    fn record(values: &str, raw: &str) -> RunRecord {
        let json = format!(
            r#"{{"format":1,"id":"r","study":"s","config":"c","levels":[],"rep":0,"seed":1,
            "spec":{{}},"test":null,"metrics":{{}},"x_values":[0.0,0.2],
            "series":[{{"name":"up","kind":"tcp_upload","dscp":0,"controller":null,
            "units":"Mbits/s","values":{values},"raw":{raw}}}],
            "sim":{{"duration_s":1.0,"events":1,"data_packets_sent":1}}}}"#
        );
        serde_json::from_str(&json).unwrap()
    }

    #[test]
    fn records_that_readers_cannot_use_are_refused() {
        let ok = record("[1.0, null]", r#"{"t":[0.1],"val":[5.0]}"#);
        assert_eq!(ok.check(), Ok(()));
        assert!(decode(&encode(&ok), "r").is_ok());
        // Found by fuzzing: a series longer than the grid made the analysis index past it.
        let long = record("[1.0, 2.0, 3.0]", r#"{"t":[],"val":[]}"#);
        assert_eq!(
            long.check(),
            Err("series `up` has 3 values on a grid of 2 x_values".to_owned())
        );
        let e = decode(&encode(&long), "r").unwrap_err();
        assert!(
            e.starts_with("not a consistent run record: series `up`"),
            "{e}"
        );
        let raw = record("[1.0, 2.0]", r#"{"t":[0.1, 0.2],"val":[5.0]}"#);
        assert_eq!(
            raw.check(),
            Err("series `up` has 1 raw `val` samples for 2 times".to_owned())
        );
        let mut other = ok.clone();
        other.format = RECORD_FORMAT + 1;
        assert!(other.check().is_err());
    }
}
