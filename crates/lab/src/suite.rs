//! Flent-equivalent tests: `tcp_upload`, `tcp_8up`, `rrul`, `rrul_be` and `rtt_fair` as functions
//! that add Flent's flows and latency probes, with Flent's series names, DSCP markings and timing,
//! to an access topology; and the conversion of a run's [`Results`] into Flent-style series and
//! scalar metrics.
//!
//! Contract (`flent-format.md` §2.1–2.2, Flent's `tests/*.conf`):
//! - bulk transfers start at `delay` (plus a per-flow start offset below `start_jitter`, drawn
//!   from the run seed: netperf processes never start in the same microsecond, and without it the
//!   repetitions of a deterministic controller would be identical) and stop at `delay + length`;
//!   latency probes run every `step` from 0 to the end of the run, `length + 2·delay`;
//! - uploads are client → server, downloads server → client; every TCP flow uses the test's flow
//!   template (controller and parameters, so both ends use the configured controller);
//! - series: TCP series in Flent's order, then the UDP probes, then the ICMP probe(s); [`populate`]
//!   returns them in the order of the flows and probes it added, which is also their order in the
//!   simulator's results;
//! - metrics ([`metrics`]) are computed over Flent's plot cut-off, the bulk-transfer period
//!   `(delay, delay + length]`.

use std::collections::BTreeMap;

use cclab_sim::access::{Access, Direction};
use cclab_sim::{Dur, FlowConfig, ProbeConfig, ProbeKind, QueueSeries, Results, Time};
use sha2::{Digest, Sha256};

use crate::record::{
    CapacityRecord, DelayRecord, LinkRecord, RawSamples, SeriesKind, SeriesRecord,
};
use crate::stats;

/// DSCP class selector 0, best effort (RFC 2474 §4.2.2.1).
pub const DSCP_CS0: u8 = 0;
/// DSCP CS1, "background" / lower effort (RFC 4594 §4.10, RFC 8622).
pub const DSCP_CS1: u8 = 8;
/// DSCP CS5 (RFC 4594: signaling / broadcast video).
pub const DSCP_CS5: u8 = 40;
/// DSCP EF, expedited forwarding (RFC 3246).
pub const DSCP_EF: u8 = 46;

/// Flent's default test length `-l`, 60 s (flent/settings.py).
pub const DEFAULT_LENGTH: Dur = Dur::from_secs(60);
/// Flent's default start delay of the bulk transfers `-d`, 5 s.
pub const DEFAULT_DELAY: Dur = Dur::from_secs(5);
/// Flent's default step `-s`, 0.2 s.
pub const DEFAULT_STEP: Dur = Dur::from_millis(200);
/// Default spread of the bulk transfers' start times (see the module documentation).
pub const DEFAULT_START_JITTER: Dur = Dur::from_millis(10);
/// Wire size of a UDP latency probe: IPv4 20 + UDP 8 + a 56-byte payload, the same 84 bytes as
/// an ICMP echo, so both kinds of probe see the same serialisation.
pub const UDP_PROBE_BYTES: u32 = 84;

/// The Flent tests cclab reproduces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FlentTest {
    /// One upload and an ICMP ping.
    TcpUpload,
    /// Eight uploads and an ICMP ping.
    Tcp8Up,
    /// Realtime Response Under Load: 4 uploads + 4 downloads in four DSCP classes, 3 UDP probes,
    /// an ICMP ping.
    Rrul,
    /// `rrul` with every flow and probe best effort.
    RrulBe,
    /// Four servers at different RTTs: per server one upload, one download and an ICMP ping.
    RttFair,
}

/// The test names, as Flent spells them.
pub const TESTS: &[&str] = &["tcp_upload", "tcp_8up", "rrul", "rrul_be", "rtt_fair"];

impl FlentTest {
    /// The test called `name` (Flent's spelling).
    #[must_use]
    pub fn from_name(name: &str) -> Option<FlentTest> {
        Some(match name {
            "tcp_upload" => FlentTest::TcpUpload,
            "tcp_8up" => FlentTest::Tcp8Up,
            "rrul" => FlentTest::Rrul,
            "rrul_be" => FlentTest::RrulBe,
            "rtt_fair" => FlentTest::RttFair,
            _ => return None,
        })
    }

    /// Flent's name of the test.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            FlentTest::TcpUpload => "tcp_upload",
            FlentTest::Tcp8Up => "tcp_8up",
            FlentTest::Rrul => "rrul",
            FlentTest::RrulBe => "rrul_be",
            FlentTest::RttFair => "rtt_fair",
        }
    }

    /// How many servers the test talks to (`rtt_fair`: `min_host_count(4)`).
    #[must_use]
    pub fn servers(self) -> usize {
        if self == FlentTest::RttFair { 4 } else { 1 }
    }
}

/// Flent's timing of a test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timing {
    /// Length of the bulk transfers (`-l`).
    pub length: Dur,
    /// Start delay of the bulk transfers (`-d`).
    pub delay: Dur,
    /// Sampling step and probe interval (`-s`).
    pub step: Dur,
    /// Bulk transfers start within `[delay, delay + start_jitter)`.
    pub start_jitter: Dur,
}

impl Default for Timing {
    fn default() -> Self {
        Timing {
            length: DEFAULT_LENGTH,
            delay: DEFAULT_DELAY,
            step: DEFAULT_STEP,
            start_jitter: DEFAULT_START_JITTER,
        }
    }
}

impl Timing {
    /// The whole run, Flent's `TOTAL_LENGTH` = length + 2·delay.
    #[must_use]
    pub fn total(&self) -> Dur {
        self.length + self.delay + self.delay
    }
}

/// One series a test produces, in the order of the simulator's flows and probes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeriesSpec {
    /// Flent's series name.
    pub name: String,
    /// What it measures.
    pub kind: SeriesKind,
    /// DSCP of its packets.
    pub dscp: u8,
    /// Which server it talks to.
    pub server: usize,
}

/// The series of `test` against servers named `hosts` (one name per server the test uses):
/// TCP series first, then probes, each group in the order Flent defines them.
#[must_use]
pub fn series(test: FlentTest, hosts: &[String]) -> Vec<SeriesSpec> {
    let tcp = |name: String, kind, dscp, server| SeriesSpec {
        name,
        kind,
        dscp,
        server,
    };
    let mut out = Vec::new();
    let icmp = |name: String, server| SeriesSpec {
        name,
        kind: SeriesKind::PingIcmp,
        dscp: DSCP_CS0,
        server,
    };
    let udp = |name: &str, dscp| SeriesSpec {
        name: name.to_owned(),
        kind: SeriesKind::PingUdp,
        dscp,
        server: 0,
    };
    match test {
        FlentTest::TcpUpload => {
            out.push(tcp("TCP upload".into(), SeriesKind::TcpUpload, DSCP_CS0, 0));
            out.push(icmp("Ping (ms) ICMP".into(), 0));
        }
        FlentTest::Tcp8Up => {
            for i in 1..=8 {
                out.push(tcp(
                    format!("TCP upload::{i}"),
                    SeriesKind::TcpUpload,
                    DSCP_CS0,
                    0,
                ));
            }
            out.push(icmp("Ping (ms) ICMP".into(), 0));
        }
        FlentTest::Rrul | FlentTest::RrulBe => {
            let classes: [(&str, u8); 4] = if test == FlentTest::Rrul {
                [
                    ("BE", DSCP_CS0),
                    ("BK", DSCP_CS1),
                    ("CS5", DSCP_CS5),
                    ("EF", DSCP_EF),
                ]
            } else {
                [
                    ("BE", DSCP_CS0),
                    ("BE2", DSCP_CS0),
                    ("BE3", DSCP_CS0),
                    ("BE4", DSCP_CS0),
                ]
            };
            for (kind, dir) in [
                (SeriesKind::TcpDownload, "download"),
                (SeriesKind::TcpUpload, "upload"),
            ] {
                for (label, dscp) in classes {
                    out.push(tcp(format!("TCP {dir} {label}"), kind, dscp, 0));
                }
            }
            if test == FlentTest::Rrul {
                out.push(udp("Ping (ms) UDP EF", DSCP_EF));
                out.push(udp("Ping (ms) UDP BK", DSCP_CS1));
                out.push(udp("Ping (ms) UDP BE", DSCP_CS0));
            } else {
                out.push(udp("Ping (ms) UDP BE1", DSCP_CS0));
                out.push(udp("Ping (ms) UDP BE2", DSCP_CS0));
                out.push(udp("Ping (ms) UDP BE3", DSCP_CS0));
            }
            out.push(icmp("Ping (ms) ICMP".into(), 0));
        }
        FlentTest::RttFair => {
            // rtt_fair.conf: markings CS0,CS0,CS1,CS1; labels BE1,BE2,BK1,BK2; pings ICMP1..4.
            let per_host = [
                ("BE1", DSCP_CS0),
                ("BE2", DSCP_CS0),
                ("BK1", DSCP_CS1),
                ("BK2", DSCP_CS1),
            ];
            for (i, (label, dscp)) in per_host.iter().enumerate() {
                let h = &hosts[i];
                out.push(tcp(
                    format!("TCP upload {label} {h}"),
                    SeriesKind::TcpUpload,
                    *dscp,
                    i,
                ));
                out.push(tcp(
                    format!("TCP download {label} {h}"),
                    SeriesKind::TcpDownload,
                    *dscp,
                    i,
                ));
            }
            for (i, h) in hosts.iter().enumerate().take(4) {
                out.push(icmp(format!("Ping (ms) ICMP{} {h}", i + 1), i));
            }
        }
    }
    out
}

/// The host name of server `i` (the access topology's node name, Flent's `HOSTS` entry).
#[must_use]
pub fn host_name(i: usize) -> String {
    format!("server{i}")
}

/// Start offset of bulk transfer `index` of a run with seed `seed`: uniform in
/// `[0, jitter)` nanoseconds, from SHA-256 of the seed and the index (stable across machines
/// and releases).
#[must_use]
pub fn start_offset(seed: u64, index: usize, jitter: Dur) -> Dur {
    if jitter == Dur::ZERO {
        return Dur::ZERO;
    }
    let mut h = Sha256::new();
    h.update(b"cclab-suite-start");
    h.update(seed.to_le_bytes());
    h.update((index as u64).to_le_bytes());
    let d = h.finalize();
    let mut b = [0u8; 8];
    b.copy_from_slice(&d[..8]);
    Dur(u64::from_le_bytes(b) % jitter.as_nanos())
}

/// What a Flent-equivalent test needs from a topology: a client and numbered servers it can put
/// flows and probes between, and the run's seed and timing. Any preset that names a client and
/// servers implements it; the tests know nothing else about the topology.
pub trait TestBed {
    /// How many servers the topology has.
    fn servers(&self) -> usize;
    /// Set the run's seed, duration and sampling interval.
    fn set_run(&mut self, seed: u64, duration: Dur, sample_interval: Dur);
    /// A TCP flow between the client and server `server` (`src`/`dst` of `flow` are filled in).
    fn add_flow(&mut self, flow: FlowConfig, server: usize, direction: Direction);
    /// A latency probe from the client to server `server`, echoed back.
    fn add_probe(&mut self, probe: ProbeConfig, server: usize);
}

impl TestBed for Access {
    fn servers(&self) -> usize {
        self.server_delays.len()
    }
    fn set_run(&mut self, seed: u64, duration: Dur, sample_interval: Dur) {
        self.seed = seed;
        self.duration = duration;
        self.sample_interval = sample_interval;
    }
    fn add_flow(&mut self, flow: FlowConfig, server: usize, direction: Direction) {
        Access::add_flow(self, flow, server, direction);
    }
    fn add_probe(&mut self, probe: ProbeConfig, server: usize) {
        Access::add_probe(self, probe, server);
    }
}

/// Add `test`'s flows and probes to `bed` (whose servers must number at least
/// [`FlentTest::servers`]) and set its duration and sample interval from `timing`. Every TCP flow
/// is `template` with Flent's name, DSCP, start and stop. Returns the series in the order of the
/// added flows and then probes.
#[must_use]
pub fn populate<B: TestBed + ?Sized>(
    bed: &mut B,
    test: FlentTest,
    timing: &Timing,
    template: &FlowConfig,
    seed: u64,
) -> Vec<SeriesSpec> {
    debug_assert!(
        bed.servers() >= test.servers(),
        "the preset checks its servers"
    );
    let hosts: Vec<String> = (0..test.servers()).map(host_name).collect();
    let specs = series(test, &hosts);
    bed.set_run(seed, timing.total(), timing.step);
    let start = Time::ZERO + timing.delay;
    let stop = start + timing.length;
    for (k, s) in specs.iter().filter(|s| s.kind.is_tcp()).enumerate() {
        let mut f = template.clone();
        f.name.clone_from(&s.name);
        f.dscp = s.dscp;
        f.start = start + start_offset(seed, k, timing.start_jitter);
        f.stop = Some(stop);
        f.size = None;
        let dir = if s.kind == SeriesKind::TcpUpload {
            Direction::Upload
        } else {
            Direction::Download
        };
        bed.add_flow(f, s.server, dir);
    }
    for s in specs.iter().filter(|s| !s.kind.is_tcp()) {
        let mut p = ProbeConfig::ping(
            &s.name,
            cclab_sim::NodeId(0),
            cclab_sim::NodeId(0),
            timing.step,
        );
        if s.kind == SeriesKind::PingUdp {
            p.kind = ProbeKind::Udp;
            p.size = UDP_PROBE_BYTES;
        }
        p.dscp = s.dscp;
        bed.add_probe(p, s.server);
    }
    specs
}

/// Flent's sample grid: `0, step, 2·step, …, total` in seconds.
#[must_use]
pub fn x_values(timing: &Timing) -> Vec<f64> {
    let n = timing.total().as_nanos() / timing.step.as_nanos().max(1);
    (0..=n)
        .map(|k| Dur(k * timing.step.as_nanos()).as_secs_f64())
        .collect()
}

/// The capacity series of the monitored links whose rate changes over time, on the
/// [`x_values`] grid (sample `j` at time `t` covers `(t − step, t]`, as the goodput's), Mbit/s.
#[must_use]
pub fn capacity_records(results: &Results, timing: &Timing) -> Vec<CapacityRecord> {
    link_records(results, timing, |s| &s.capacity_bps, 1e6)
}

/// The delay series of the monitored links whose delay changes during the run, on the
/// [`x_values`] grid (the value scheduled at each grid point, `QueueSeries::delay_ms`), ms.
#[must_use]
pub fn delay_records(results: &Results, timing: &Timing) -> Vec<DelayRecord> {
    link_records(results, timing, |s| &s.delay_ms, 1.0)
}

/// The series `pick` of every monitored link that has one, divided by `unit`, placed on the
/// [`x_values`] grid by sample time.
#[expect(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "a sample time divided by the step: a small non-negative grid index"
)]
fn link_records(
    results: &Results,
    timing: &Timing,
    pick: fn(&QueueSeries) -> &Vec<f64>,
    unit: f64,
) -> Vec<LinkRecord> {
    let n = x_values(timing).len();
    let step = timing.step.as_secs_f64();
    results
        .queues
        .iter()
        .filter(|q| !pick(&q.series).is_empty())
        .map(|q| {
            let mut values = vec![None; n];
            for (&t, &v) in q.series.t_s.iter().zip(pick(&q.series)) {
                if let Some(slot) = values.get_mut((t / step).round() as usize) {
                    *slot = Some(v / unit);
                }
            }
            LinkRecord {
                link: q.name.clone(),
                values,
            }
        })
        .collect()
}

/// Turn a run's results into Flent-style series (see the module contract). `specs` is what
/// [`populate`] returned for the run; `controller` names the TCP flows' controller.
#[must_use]
pub fn series_records(
    results: &Results,
    specs: &[SeriesSpec],
    timing: &Timing,
    controller: &str,
) -> Vec<SeriesRecord> {
    let xs = x_values(timing);
    let step = timing.step.as_secs_f64();
    let from = timing.delay.as_secs_f64();
    let to = (timing.delay + timing.length).as_secs_f64();
    let eps = step * 1e-6;
    let mut out = Vec::with_capacity(specs.len());
    let (tcp, probes): (Vec<&SeriesSpec>, Vec<&SeriesSpec>) =
        specs.iter().partition(|s| s.kind.is_tcp());
    for (s, f) in tcp.iter().zip(&results.flows) {
        let fs = &f.series;
        let mut values = vec![None; xs.len()];
        let mut raw = RawSamples::default();
        for (j, &t) in fs.t_s.iter().enumerate() {
            // Sample j covers (t − step, t]: keep the steps inside the transfer.
            if t <= from + eps || t > to + eps {
                continue;
            }
            let k = (t / step).round() as usize;
            let v = fs.goodput_bps[j] / 1e6;
            if let Some(slot) = values.get_mut(k) {
                *slot = Some(v);
            }
            raw.t.push(t);
            raw.val.push(v);
            raw.tcp_cwnd.push(Some(f64::from(fs.cwnd[j])));
            raw.tcp_rtt.push(fs.srtt_ms[j]);
            raw.tcp_pacing_rate.push(fs.pacing_rate_bps[j]);
            raw.tcp_delivery_rate.push(fs.delivery_rate_bps[j]);
        }
        out.push(SeriesRecord {
            name: s.name.clone(),
            kind: s.kind,
            dscp: s.dscp,
            controller: Some(controller.to_owned()),
            units: "Mbits/s".into(),
            values,
            raw,
        });
    }
    for (s, p) in probes.iter().zip(&results.probes) {
        let mut sum = vec![0.0; xs.len()];
        let mut n = vec![0u32; xs.len()];
        for (&t, &rtt) in p.t_s.iter().zip(&p.rtt_ms) {
            // A probe sent in (x − step, x] belongs to grid point x.
            let k = ((t - eps) / step).ceil().max(0.0) as usize;
            if k < xs.len() {
                sum[k] += rtt;
                n[k] += 1;
            }
        }
        let values = sum
            .iter()
            .zip(&n)
            .map(|(&s, &c)| (c > 0).then(|| s / f64::from(c)))
            .collect();
        out.push(SeriesRecord {
            name: s.name.clone(),
            kind: s.kind,
            dscp: s.dscp,
            controller: None,
            units: "ms".into(),
            values,
            raw: RawSamples {
                t: p.t_s.clone(),
                val: p.rtt_ms.clone(),
                seq: p.seq.clone(),
                ..RawSamples::default()
            },
        });
    }
    out
}

/// Names of the scalar metrics [`metrics`] computes, with their meaning (for reports and
/// `cclab list metrics`).
pub const METRICS: &[(&str, &str)] = &[
    (
        "upload_mbps",
        "mean of the summed upload goodput over the transfer period, Mbit/s",
    ),
    (
        "download_mbps",
        "mean of the summed download goodput over the transfer period, Mbit/s",
    ),
    ("total_mbps", "upload_mbps + download_mbps, Mbit/s"),
    (
        "ping_mean_ms",
        "mean RTT of every latency probe (ICMP and UDP) sent during the transfer period, ms",
    ),
    ("ping_p50_ms", "median of those probe RTTs, ms"),
    ("ping_p95_ms", "95th percentile of those probe RTTs, ms"),
    ("ping_p99_ms", "99th percentile of those probe RTTs, ms"),
    (
        "upload_jain",
        "Jain's index over the uploads' mean goodputs (tests with several uploads)",
    ),
    (
        "download_jain",
        "Jain's index over the downloads' mean goodputs (tests with several downloads)",
    ),
    (
        "tcp_rtt_mean_ms",
        "mean smoothed RTT of the TCP flows over the transfer period, ms",
    ),
    ("retransmits", "segments retransmitted by all TCP flows"),
    (
        "fill_time_s",
        "after the first flow leaves (its `stop`): time until the remaining flows' summed goodput, averaged over a 1 s window, first reaches 95 % of what all flows carried in the 1 s before the departure, s (runs where a flow stops)",
    ),
    (
        "spurious_retransmits",
        "retransmissions found spurious by DSACK, summed over the TCP flows (each flow's summary `spurious_retransmits`)",
    ),
    (
        "reorder_ratio",
        "mean over the TCP flows of each flow's reordered ratio of its data segments (RFC 4737 §4.1.1, the summary's `reorder_ratio`)",
    ),
    (
        "drops",
        "data segments lost in the network over the run (queue overflow, AQM, link and element losses): sent − delivered − still in the network at the end (a `duplicate` element's copies count against it)",
    ),
    (
        "queue_delay_p50_ms",
        "median sojourn of the packets dequeued at the first monitored queue (the dumbbell's bottleneck) over the run, ms",
    ),
    (
        "queue_delay_p99_ms",
        "99th percentile sojourn at the first monitored queue over the run, ms",
    ),
    (
        "l4s_delay_p50_ms",
        "median sojourn in the L queue (class `l`) of the first monitored queue with one (DualPI2), ms",
    ),
    (
        "l4s_delay_p99_ms",
        "99th percentile sojourn in that L queue, ms",
    ),
    (
        "classic_delay_p50_ms",
        "median sojourn in the classic queue (class `c`) of the first monitored queue with an L queue (DualPI2), ms",
    ),
    (
        "classic_delay_p99_ms",
        "99th percentile sojourn in that classic queue, ms",
    ),
    (
        "l4s_share",
        "share of the TCP flows' summed mean goodput carried by the flows using L4S ECN (runs with an L4S flow)",
    ),
    (
        "first_cc_share",
        "share of the TCP flows' summed mean goodput carried by the flows running the first flow's controller (runs where another flow runs another controller)",
    ),
    (
        "flows_completed",
        "sized flows that completed within the run (runs with sized flows)",
    ),
    (
        "flows_incomplete",
        "sized flows that did not complete within the run: they are left out of the FCT metrics (runs with sized flows)",
    ),
    (
        "fct_s",
        "mean flow-completion time of the sized flows that completed, s (from the flow's start to its last byte at the receiver)",
    ),
    (
        "fct_slowdown",
        "mean FCT slowdown of the sized flows that completed: FCT ÷ the ideal FCT of the transfer alone on the empty path (pFabric, SIGCOMM 2013 §5)",
    ),
    (
        "first_fct_s",
        "flow-completion time of the first sized flow (in flow order), s (runs where it completed)",
    ),
    (
        "first_fct_slowdown",
        "FCT slowdown of the first sized flow (runs where it completed)",
    ),
    (
        "fct_slowdown_p50",
        "median FCT slowdown of the completed sized flows",
    ),
    (
        "fct_slowdown_p99",
        "99th percentile FCT slowdown of the completed sized flows",
    ),
    (
        "fct_slowdown_p50_small",
        "median FCT slowdown of the completed flows of at most 100 KB (the short-flow bucket of pFabric and HPCC)",
    ),
    (
        "fct_slowdown_p99_small",
        "99th percentile FCT slowdown of the completed flows of at most 100 KB",
    ),
    (
        "fct_slowdown_p50_medium",
        "median FCT slowdown of the completed flows of more than 100 KB and at most 10 MB",
    ),
    (
        "fct_slowdown_p50_large",
        "median FCT slowdown of the completed flows of more than 10 MB",
    ),
    (
        "mean_ampdu",
        "mean A-MPDU size of the Wi-Fi client (the first station of the first BSS), MPDUs per A-MPDU over the run (runs with Wi-Fi)",
    ),
    (
        "airtime_share",
        "share of the run the Wi-Fi client's exchanges took the channel (runs with Wi-Fi)",
    ),
    (
        "window_goodput_pct",
        "summed goodput of the flows over the study's measurement window (`measure_last`), % of the bottleneck rate (studies with a window)",
    ),
    (
        "window_first_pct",
        "the first flow's goodput over the measurement window, % of the bottleneck rate",
    ),
    (
        "window_others_pct",
        "mean goodput of the other flows over the measurement window, % of the bottleneck rate (runs with two flows or more)",
    ),
    (
        "window_first_share",
        "the first flow's share of the flows' summed goodput over the measurement window (runs with two flows or more)",
    ),
    (
        "window_jain",
        "Jain's index over the flows' goodputs over the measurement window (runs with two flows or more)",
    ),
    (
        "window_utilisation_pct",
        "departures from the bottleneck queue over the measurement window (packets lost after it included), % of its rate",
    ),
];

/// Prefix of the per-flow metrics of the measurement window: `window_flow_pct.{i}` is flow
/// `i`'s goodput over the window, % of the bottleneck rate (kept in the records for
/// per-flow-position statistics, [`crate::stats::mean_of_position_medians`]; not listed in
/// [`METRICS`]).
pub const WINDOW_FLOW_PCT: &str = "window_flow_pct.";

/// The metrics of a measurement window, the last `window` s of a run of `duration` s, over a
/// bottleneck of `rate_bps` (definitions in [`METRICS`]): means of the samples whose interval
/// ends inside the window (a sample at `t` covers `(t − step, t]`; the window is `(duration −
/// window, duration]`), so they are exact when the window is a whole number of samples.
pub fn window_metrics(
    m: &mut BTreeMap<String, f64>,
    results: &Results,
    rate_bps: u64,
    duration: f64,
    window: f64,
) {
    if rate_bps == 0 {
        return;
    }
    let from = duration - window + 1e-9;
    let mean_in = |t: &[f64], v: &mut dyn Iterator<Item = f64>| {
        let (n, sum) = t
            .iter()
            .zip(v)
            .filter(|(t, _)| **t > from && **t <= duration + 1e-9)
            .fold((0_usize, 0.0), |(n, s), (_, x)| (n + 1, s + x));
        (n > 0).then(|| sum / n as f64)
    };
    let pct = |bps: f64| 100.0 * bps / rate_bps as f64;
    let flows: Vec<f64> = results
        .flows
        .iter()
        .map(|f| mean_in(&f.series.t_s, &mut f.series.goodput_bps.iter().copied()).unwrap_or(0.0))
        .collect();
    if flows.is_empty() {
        return;
    }
    let total: f64 = flows.iter().sum();
    m.insert("window_goodput_pct".to_owned(), pct(total));
    m.insert("window_first_pct".to_owned(), pct(flows[0]));
    for (i, g) in flows.iter().enumerate() {
        m.insert(format!("{WINDOW_FLOW_PCT}{i}"), pct(*g));
    }
    if flows.len() >= 2 {
        let others = flows[1..].iter().sum::<f64>() / (flows.len() - 1) as f64;
        m.insert("window_others_pct".to_owned(), pct(others));
        if total > 0.0 {
            m.insert("window_first_share".to_owned(), flows[0] / total);
        }
        if let Some(j) = stats::jain(&flows) {
            m.insert("window_jain".to_owned(), j);
        }
    }
    if let Some(q) = results.queues.first()
        && let Some(u) = mean_in(&q.series.t_s, &mut q.series.throughput_bps.iter().copied())
    {
        m.insert("window_utilisation_pct".to_owned(), pct(u));
    }
}

/// Flow-size buckets of the FCT metrics and plots, bytes: (name, largest size), the last
/// unbounded (the short / medium / long split of pFabric, SIGCOMM 2013 §5, and HPCC, SIGCOMM
/// 2019 §5.1: ≤ 100 KB, 100 KB – 10 MB, > 10 MB).
pub const SIZE_BUCKETS: &[(&str, u64)] = &[
    ("small", 100_000),
    ("medium", 10_000_000),
    ("large", u64::MAX),
];

/// The [`SIZE_BUCKETS`] name of a flow of `size` bytes.
#[must_use]
pub fn size_bucket(size: u64) -> &'static str {
    SIZE_BUCKETS
        .iter()
        .find(|&&(_, max)| size <= max)
        .map_or("large", |&(n, _)| n)
}

/// Length of the averaging window of [`fill_time_s`], s: long enough to average over one
/// BBR ProbeBW gain cycle (8 phases of one min RTT, 0.8 s at 100 ms; `bbr_pacing_gain`,
/// Linux `net/ipv4/tcp_bbr.c`) and over the sampling noise of a few delayed ACKs, short next
/// to the seconds that additive increase of one segment per RTT needs to fill 25 % of a path of
/// hundreds of segments (RFC 5681 §3.1), so it resolves what the metric is for.
pub const FILL_WINDOW_S: f64 = 1.0;

/// The fraction of the pre-departure goodput that counts as filled, for [`fill_time_s`]: 95 %,
/// the usual "within 5 %" of a settling time; it leaves room for the dips a controller has in
/// steady state too (a loss-based flow's reduction in a shallow buffer, BBR's ProbeRTT), which
/// would otherwise count as not filled, and is well above 80 % and 67 %, where the remaining
/// flows start after one of 5 or one of 3 leaves.
pub const FILL_FRACTION: f64 = 0.95;

/// The first departure of a run, from its configuration: the earliest `stop` of a flow before
/// the end of the run, and the flows that keep running (started before it, not stopping then).
#[derive(Clone, Debug, PartialEq)]
pub struct Departure {
    /// When the flow leaves, s.
    pub at_s: f64,
    /// Indexes of the flows that remain.
    pub remaining: Vec<usize>,
}

impl Departure {
    /// The first departure among `flows` before `end`, if a flow stops then and some other flow
    /// keeps running.
    #[must_use]
    pub fn of(flows: &[FlowConfig], end: Dur) -> Option<Self> {
        let at = flows
            .iter()
            .filter_map(|f| f.stop)
            .filter(|&t| t < Time::ZERO + end)
            .min()?;
        let remaining: Vec<usize> = flows
            .iter()
            .enumerate()
            .filter(|(_, f)| f.start < at && f.stop.is_none_or(|s| s > at))
            .map(|(i, _)| i)
            .collect();
        (!remaining.is_empty()).then(|| Departure {
            at_s: at.as_secs_f64(),
            remaining,
        })
    }
}

/// Time to fill freed capacity. `t_s[i]` ends the sampling interval `(t_s[i] − dt, t_s[i]]`;
/// `all_bps[i]` is the summed goodput of every flow over it, `remaining_bps[i]` that of the
/// flows that remain after the departure at `departure_s`. The reference is the mean of
/// `all_bps` over the [`FILL_WINDOW_S`] of intervals that end at or before the departure (what
/// the saturated link carried; goodput, so headers and each controller's own steady
/// utilisation cancel out). The answer is `s − departure_s` for the earliest start `s` of a
/// window of [`FILL_WINDOW_S`] (whole intervals, all after the departure) over which
/// `remaining_bps` averages at least [`FILL_FRACTION`] of the reference: from then on the
/// remaining flows carried the freed capacity for a whole window. Resolution `dt`; `None` when
/// there is no full window before the departure, the reference is zero, or no window after it
/// qualifies.
#[must_use]
#[expect(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss,
    reason = "a window of a few seconds over a positive sampling interval: a small count"
)]
pub fn fill_time_s(
    t_s: &[f64],
    all_bps: &[f64],
    remaining_bps: &[f64],
    dt: f64,
    departure_s: f64,
) -> Option<f64> {
    if dt <= 0.0 {
        return None;
    }
    let k = ((FILL_WINDOW_S / dt).round() as usize).max(1);
    let eps = 1e-9;
    let before = t_s.iter().take_while(|&&t| t <= departure_s + eps).count();
    if before < k {
        return None;
    }
    let reference = all_bps[before - k..before].iter().sum::<f64>() / k as f64;
    if reference <= 0.0 {
        return None;
    }
    let first = t_s.iter().position(|&t| t - dt >= departure_s - eps)?;
    (first..)
        .take_while(|&j| j + k <= remaining_bps.len().min(t_s.len()))
        .find(|&j| {
            remaining_bps[j..j + k].iter().sum::<f64>() / k as f64 >= FILL_FRACTION * reference
        })
        // To the nanosecond, the engine's resolution (no float noise such as 8.9e-16).
        .map(|j| ((t_s[j] - dt - departure_s).max(0.0) * 1e9).round() / 1e9)
}

/// Scalar metrics of one run (names and definitions in [`METRICS`]); a metric that does not
/// apply (no download in `tcp_upload`, one flow for Jain) is absent.
#[must_use]
pub fn metrics(
    series: &[SeriesRecord],
    results: &Results,
    departure: Option<&Departure>,
) -> BTreeMap<String, f64> {
    let mut m = BTreeMap::new();
    if let Some(d) = departure
        && let Some(first) = results.flows.first()
    {
        let t = &first.series.t_s;
        let sum = |pick: &mut dyn FnMut(usize) -> bool| -> Vec<f64> {
            (0..t.len())
                .map(|i| {
                    results
                        .flows
                        .iter()
                        .enumerate()
                        .filter(|&(f, _)| pick(f))
                        .map(|(_, f)| f.series.goodput_bps.get(i).copied().unwrap_or(0.0))
                        .sum()
                })
                .collect()
        };
        let all = sum(&mut |_| true);
        let remaining = sum(&mut |f| d.remaining.contains(&f));
        let dt = match t.as_slice() {
            [a, b, ..] => b - a,
            [a] => *a,
            [] => 0.0,
        };
        if let Some(x) = fill_time_s(t, &all, &remaining, dt, d.at_s) {
            m.insert("fill_time_s".to_owned(), x);
        }
    }
    let mean = |xs: &[f64]| (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64);
    for (kind, key, jain_key) in [
        (SeriesKind::TcpUpload, "upload_mbps", "upload_jain"),
        (SeriesKind::TcpDownload, "download_mbps", "download_jain"),
    ] {
        let flows: Vec<&SeriesRecord> = series.iter().filter(|s| s.kind == kind).collect();
        if flows.is_empty() {
            continue;
        }
        // Per-flow mean over the transfer period (raw holds exactly those steps), summed.
        let per_flow: Vec<f64> = flows
            .iter()
            .map(|s| mean(&s.raw.val).unwrap_or(0.0))
            .collect();
        m.insert(key.to_owned(), per_flow.iter().sum());
        if per_flow.len() >= 2
            && let Some(j) = stats::jain(&per_flow)
        {
            m.insert(jain_key.to_owned(), j);
        }
    }
    if m.contains_key("upload_mbps") || m.contains_key("download_mbps") {
        let total = m.get("upload_mbps").unwrap_or(&0.0) + m.get("download_mbps").unwrap_or(&0.0);
        m.insert("total_mbps".to_owned(), total);
    }
    // The transfer period is where the TCP raw samples are.
    let window = series
        .iter()
        .filter(|s| s.kind.is_tcp())
        .flat_map(|s| s.raw.t.iter().copied())
        .fold(None, |acc: Option<(f64, f64)>, t| {
            Some(acc.map_or((t, t), |(a, b)| (a.min(t), b.max(t))))
        });
    let mut pings: Vec<f64> = series
        .iter()
        .filter(|s| !s.kind.is_tcp())
        .flat_map(|s| {
            s.raw
                .t
                .iter()
                .zip(&s.raw.val)
                .filter(move |(t, _)| window.is_none_or(|(a, b)| **t > a - 1e-9 && **t <= b))
                .map(|(_, v)| *v)
        })
        .collect();
    pings.sort_by(f64::total_cmp);
    if let Some(x) = mean(&pings) {
        m.insert("ping_mean_ms".to_owned(), x);
        for (key, p) in [
            ("ping_p50_ms", 50.0),
            ("ping_p95_ms", 95.0),
            ("ping_p99_ms", 99.0),
        ] {
            if let Some(v) = stats::percentile(&pings, p) {
                m.insert(key.to_owned(), v);
            }
        }
    }
    let rtts: Vec<f64> = series
        .iter()
        .filter(|s| s.kind.is_tcp())
        .flat_map(|s| s.raw.tcp_rtt.iter().flatten().copied())
        .collect();
    if let Some(x) = mean(&rtts) {
        m.insert("tcp_rtt_mean_ms".to_owned(), x);
    }
    let retrans: u64 = results.flows.iter().map(|f| f.summary.retransmits).sum();
    m.insert("retransmits".to_owned(), retrans as f64);
    summary_metrics(&mut m, series, results);
    wifi_metrics(&mut m, results);
    m
}

/// The metrics read from the run's summary ([`Results`]): spurious retransmissions,
/// reordering, drops, queueing delay per queue and class, and throughput shares of groups of
/// flows (definitions in [`METRICS`]).
fn summary_metrics(m: &mut BTreeMap<String, f64>, series: &[SeriesRecord], results: &Results) {
    let spurious: u64 = results
        .flows
        .iter()
        .map(|f| f.summary.spurious_retransmits)
        .sum();
    m.insert("spurious_retransmits".to_owned(), spurious as f64);
    if !results.flows.is_empty() {
        let ratios: f64 = results.flows.iter().map(|f| f.summary.reorder_ratio).sum();
        m.insert(
            "reorder_ratio".to_owned(),
            ratios / results.flows.len() as f64,
        );
    }
    // Conservation of data segments: the engine counts the drops of queues and links; those of
    // elements (loss models) are what is neither delivered nor still inside.
    let e = &results.engine;
    let lost = e
        .data_packets_sent
        .saturating_sub(e.data_packets_delivered)
        .saturating_sub(e.data_packets_in_network);
    m.insert("drops".to_owned(), lost as f64);
    fct_metrics(m, results);
    if let Some(q) = results.queues.first() {
        for (key, v) in [
            ("queue_delay_p50_ms", q.summary.delay_p50_ms),
            ("queue_delay_p99_ms", q.summary.delay_p99_ms),
        ] {
            if let Some(v) = v {
                m.insert(key.to_owned(), v);
            }
        }
    }
    // DualPI2 names its classes `l` (L4S) and `c` (classic).
    let class = |name: &str| {
        results
            .queues
            .iter()
            .find(|q| q.summary.classes.iter().any(|c| c.name == "l"))
            .and_then(|q| q.summary.classes.iter().find(|c| c.name == name))
    };
    for (class_name, p50_key, p99_key) in [
        ("l", "l4s_delay_p50_ms", "l4s_delay_p99_ms"),
        ("c", "classic_delay_p50_ms", "classic_delay_p99_ms"),
    ] {
        if let Some(c) = class(class_name) {
            for (key, v) in [(p50_key, c.delay_p50_ms), (p99_key, c.delay_p99_ms)] {
                if let Some(v) = v {
                    m.insert(key.to_owned(), v);
                }
            }
        }
    }
    // The TCP series follow the order of `results.flows` (see `series_records`): each flow's
    // mean goodput over the transfer period, as `upload_mbps` sums them.
    let goodput: Vec<f64> = series
        .iter()
        .filter(|s| s.kind.is_tcp())
        .map(|s| {
            if s.raw.val.is_empty() {
                0.0
            } else {
                s.raw.val.iter().sum::<f64>() / s.raw.val.len() as f64
            }
        })
        .collect();
    let total: f64 = goodput.iter().sum();
    if total <= 0.0 || goodput.len() != results.flows.len() {
        return;
    }
    let share = |pick: &dyn Fn(&cclab_sim::FlowResult) -> bool| {
        results
            .flows
            .iter()
            .zip(&goodput)
            .filter(|(f, _)| pick(f))
            .map(|(_, g)| g)
            .sum::<f64>()
            / total
    };
    if results.flows.iter().any(|f| f.summary.ecn == "l4s") {
        m.insert("l4s_share".to_owned(), share(&|f| f.summary.ecn == "l4s"));
    }
    let first = &results.flows[0].controller;
    if results.flows.iter().any(|f| &f.controller != first) {
        m.insert(
            "first_cc_share".to_owned(),
            share(&|f| &f.controller == first),
        );
    }
}

/// The Wi-Fi client's channel metrics (definitions in [`METRICS`]): its node is the first
/// station of the first BSS (`nodes[0]` is the AP); none without Wi-Fi.
fn wifi_metrics(m: &mut BTreeMap<String, f64>, results: &Results) {
    if let Some(sta) = results.wifi.first().and_then(|b| b.nodes.get(1)) {
        m.insert("mean_ampdu".to_owned(), sta.mean_ampdu);
        m.insert("airtime_share".to_owned(), sta.airtime_share);
    }
}

/// The FCT metrics of the run's sized flows (definitions in [`METRICS`]); none without one.
#[expect(clippy::cast_precision_loss, reason = "flow counts are far below 2^53")]
fn fct_metrics(m: &mut BTreeMap<String, f64>, results: &Results) {
    let sized: Vec<_> = results
        .flows
        .iter()
        .filter_map(|f| Some((f.summary.size_bytes?, &f.summary)))
        .collect();
    let Some((_, first)) = sized.first() else {
        return;
    };
    if let (Some(fct), Some(sd)) = (first.fct_s, first.fct_slowdown) {
        m.insert("first_fct_s".to_owned(), fct);
        m.insert("first_fct_slowdown".to_owned(), sd);
    }
    let done: Vec<(u64, f64, f64)> = sized
        .iter()
        .filter_map(|(size, s)| Some((*size, s.fct_s?, s.fct_slowdown?)))
        .collect();
    m.insert("flows_completed".to_owned(), done.len() as f64);
    m.insert(
        "flows_incomplete".to_owned(),
        (sized.len() - done.len()) as f64,
    );
    if done.is_empty() {
        return;
    }
    let n = done.len() as f64;
    m.insert(
        "fct_s".to_owned(),
        done.iter().map(|d| d.1).sum::<f64>() / n,
    );
    m.insert(
        "fct_slowdown".to_owned(),
        done.iter().map(|d| d.2).sum::<f64>() / n,
    );
    let sorted = |pick: &dyn Fn(u64) -> bool| {
        let mut v: Vec<f64> = done.iter().filter(|d| pick(d.0)).map(|d| d.2).collect();
        v.sort_by(f64::total_cmp);
        v
    };
    let all = sorted(&|_| true);
    for (key, p) in [("fct_slowdown_p50", 50.0), ("fct_slowdown_p99", 99.0)] {
        if let Some(v) = stats::percentile(&all, p) {
            m.insert(key.to_owned(), v);
        }
    }
    for (bucket, pcts) in [
        ("small", &[50.0, 99.0][..]),
        ("medium", &[50.0][..]),
        ("large", &[50.0][..]),
    ] {
        let v = sorted(&|size| size_bucket(size) == bucket);
        for &p in pcts {
            if let Some(x) = stats::percentile(&v, p) {
                m.insert(format!("fct_slowdown_p{p:.0}_{bucket}"), x);
            }
        }
    }
}
