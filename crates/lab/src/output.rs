//! Result files and the human summary table.
//!
//! Contract: [`write_outputs`] writes five files into a directory, plus `trace.csv` when a flow
//! was traced, as a set: every file is first written to a temporary file beside it and
//! flushed, and only when all are complete are they renamed over their `NAME`s, so an
//! interrupted run or a full disk leaves the old files (or none), never half a file or a set
//! mixing two runs. Temporary files ([`create_temp_beside`]) are created exclusively under a
//! name no other file has (`.NAME.tmp-PID-N`), never through an existing file or symbolic link,
//! and those of processes that no longer run are removed by the next write.
//! [`check_writable`] finds an unwritable directory before a run instead of after it:
//!
//! - `summary.json` — [`Summary`]: scenario name, seed, duration, per-flow, per-queue and
//!   per-probe summaries and the engine counters, no time series. Keys are in a fixed order
//!   (struct order) and floats are printed by `serde_json` (shortest round-trip form; NaN and
//!   infinities become `null`), so the same results give byte-identical files.
//! - `flows.csv` — one row per flow per sample (long/tidy format): `t_s, flow, goodput_mbps,
//!   cwnd, ssthresh, srtt_ms, pacing_rate_mbps, in_flight, delivery_rate_mbps, retransmits,
//!   losses, state, tsq_budget_bytes, tsq_shift, below_tcp_bytes`.
//! - `queues.csv` — one row per monitored queue per sample: `t_s, queue, backlog_packets,
//!   backlog_bytes, sojourn_mean_ms, sojourn_max_ms, drops, throughput_mbps, discipline,
//!   ce_marks` (`discipline` is `fifo` or the AQM's name; `drops` counts overflow and AQM
//!   drops). A queue whose AQM has several classes (DualPI2: `c` and `l`) is followed by one
//!   block of rows per class, named `QUEUE/CLASS` (e.g. `bottleneck/l`), with only `t_s`,
//!   `queue`, `sojourn_mean_ms` and `discipline` filled (the engine samples only the sojourn
//!   per class). When a monitored link's rate changes over time (`[[links]]`), every row ends
//!   with `capacity_mbps`: what the link could have sent in the interval (empty for a constant
//!   link); without such a link the column is left out.
//! - `links.csv` — only when a monitored link's rate or delay changes during the run: one row
//!   per such link per sample, `t_s, link, capacity_mbps, delay_ms` (what the link could have
//!   sent in the interval, and its one-way delay plus what the delay elements behind it add, at
//!   the sample time: `QueueSeries::capacity_bps`, `QueueSeries::delay_ms`; a cell is empty
//!   when that quantity is constant). A stale `links.csv` is removed like `trace.csv`.
//! - `probes.csv` — one row per answered probe: `t_s, probe, rtt_ms`.
//! - `cc_stats.csv` — controller internals, one row per flow, sample and reported key:
//!   `t_s, flow, key, value`.
//! - `udp.csv` — only if the run has UDP sources (`[[udp]]`; a stale one is removed otherwise):
//!   one row per source per sample: `t_s, udp, sent, goodput_mbps, owd_mean_ms`. Their
//!   summaries are the `udp` entries of `summary.json` (left out when there is none).
//! - `exchanges.csv` — only if some flow is a request/response workload (`requests`; a stale
//!   one is removed otherwise): one row per completed exchange, flows in order:
//!   `flow, exchange, start_s, response_time_s, ideal_s, slowdown, response_bytes,
//!   new_connection, request_transmissions`. Each such flow's summary has an `exchanges` entry
//!   (count, mean, median and 99th percentile of the response times and slowdowns).
//! - `trace.csv` — only if at least one flow has a non-empty per-event trace
//!   (`FlowConfig::trace`): one row per traced sender event the simulator kept (a run keeps
//!   at most `MAX_TRACE_ROWS`; [`render_table`] notes the others), flows in order, events in
//!   time order: `t_s, flow, event, snd_una, snd_nxt, cwnd, ssthresh, in_flight, ca_state, cc_state,
//!   srtt_ms, below_tcp_bytes, tsq_budget_bytes, tsq_shift, tso_segs, sk_pacing_rate_mbps`. When no flow is traced, a `trace.csv` left in the directory by an earlier run is
//!   removed, so a directory never mixes files of two runs.
//!
//! - `wifi.csv` and `wifi_ampdu.csv` — only if the run has Wi-Fi BSSs (stale ones are removed
//!   otherwise): one row per BSS node with its channel counters (`WIFI_HEADER`: accesses,
//!   collisions, mean A-MPDU, MPDUs sent, retries, acknowledged, dropped, airtime and its share
//!   of the run, idle wait before its accesses, A-MPDUs by the limit that ended them), and the
//!   A-MPDU size histograms (`bss, node, size, count`). `summary.json` has the same per BSS
//!   under `wifi` (left out when there is none).
//!
//! CSV: comma-separated, a header line, `\n` line ends, absent values as empty cells, text cells
//! quoted only when they contain a comma, quote or line break (RFC 4180). Rates are in Mbit/s
//! (10⁶ bit/s); times (`t_s`, `*_ms`) are rounded to the nanosecond, the engine's resolution, so
//! float noise such as `0.6000000000000001` does not appear. [`render_table`] renders the summary for a terminal.

use std::fmt::Write as _;
use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use cclab_sim::tcp::sender::MAX_TRACE_ROWS;
use cclab_sim::{
    EngineStats, FlowSummary, ProbeSummary, QueueSummary, Results, UdpSummary, WifiResult,
};
use serde::Serialize;

/// The contents of `summary.json`.
#[derive(Debug, Serialize)]
pub struct Summary<'a> {
    /// Scenario name.
    pub scenario: &'a str,
    /// Seed of the run.
    pub seed: u64,
    /// Simulated seconds.
    pub duration_s: f64,
    /// One entry per flow.
    pub flows: Vec<FlowEntry<'a>>,
    /// One entry per monitored queue.
    pub queues: Vec<QueueEntry<'a>>,
    /// One entry per probe.
    pub probes: Vec<ProbeEntry<'a>>,
    /// One entry per UDP source (the key is left out when there is none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub udp: Vec<UdpEntry<'a>>,
    /// One entry per Wi-Fi BSS (the key is left out when there is none).
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub wifi: &'a [WifiResult],
    /// Engine counters.
    pub engine: &'a EngineStats,
}

/// A flow in [`Summary`].
#[derive(Debug, Serialize)]
pub struct FlowEntry<'a> {
    /// Flow name.
    pub name: &'a str,
    /// Controller name.
    pub controller: &'a str,
    /// The simulator's summary.
    #[serde(flatten)]
    pub summary: &'a FlowSummary,
}

/// A queue in [`Summary`].
#[derive(Debug, Serialize)]
pub struct QueueEntry<'a> {
    /// Link name.
    pub name: &'a str,
    /// The simulator's summary.
    #[serde(flatten)]
    pub summary: &'a QueueSummary,
}

/// A probe in [`Summary`].
#[derive(Debug, Serialize)]
pub struct ProbeEntry<'a> {
    /// Probe name.
    pub name: &'a str,
    /// Probes sent.
    pub sent: u64,
    /// The simulator's summary.
    #[serde(flatten)]
    pub summary: &'a ProbeSummary,
}

/// A UDP source in [`Summary`].
#[derive(Debug, Serialize)]
pub struct UdpEntry<'a> {
    /// Source name.
    pub name: &'a str,
    /// `cbr`, `onoff` or `poisson`.
    pub pattern: &'a str,
    /// DSCP code point of its datagrams.
    pub dscp: u8,
    /// The simulator's summary.
    #[serde(flatten)]
    pub summary: &'a UdpSummary,
}

impl<'a> Summary<'a> {
    /// The summary of `results` for scenario `scenario`.
    #[must_use]
    pub fn new(scenario: &'a str, results: &'a Results) -> Self {
        Summary {
            scenario,
            seed: results.seed,
            duration_s: results.duration_s,
            flows: results
                .flows
                .iter()
                .map(|f| FlowEntry {
                    name: &f.name,
                    controller: &f.controller,
                    summary: &f.summary,
                })
                .collect(),
            queues: results
                .queues
                .iter()
                .map(|q| QueueEntry {
                    name: &q.name,
                    summary: &q.summary,
                })
                .collect(),
            probes: results
                .probes
                .iter()
                .map(|p| ProbeEntry {
                    name: &p.name,
                    sent: p.sent,
                    summary: &p.summary,
                })
                .collect(),
            udp: results
                .udp
                .iter()
                .map(|u| UdpEntry {
                    name: &u.name,
                    pattern: u.pattern,
                    dscp: u.dscp,
                    summary: &u.summary,
                })
                .collect(),
            wifi: &results.wifi,
            engine: &results.engine,
        }
    }
}

/// Something that writes a file's contents.
pub type WriteFn<'a> = dyn Fn(&mut dyn Write) -> io::Result<()> + 'a;

/// The list of the files cclab wrote into an output directory (hidden; one name a line).
pub const MANIFEST: &str = ".cclab-outputs";

/// Names of files that a run writes only sometimes: a file of such a name is removed when the
/// last write into the directory made it ([`MANIFEST`]) and this one does not, else kept.
pub const OPTIONAL_OUTPUTS: [&str; 7] = [
    TRACE_CSV,
    UDP_CSV,
    LINKS_CSV,
    EXCHANGES_CSV,
    WIFI_CSV,
    WIFI_AMPDU_CSV,
    "emulator.json",
];

/// Whether `name` is one cclab writes into an output directory besides the five always written:
/// an [`OPTIONAL_OUTPUTS`] name or a Flent file.
fn optional_output(name: &str) -> bool {
    OPTIONAL_OUTPUTS.contains(&name)
        || (name.ends_with(crate::flent::FLENT_SUFFIX) && !name.contains('/'))
}

/// What [`write_output_set`] did.
#[derive(Debug, Default)]
pub struct Written {
    /// The files written, in order.
    pub files: Vec<PathBuf>,
    /// Files with the name of an optional output that this write did not make and that cclab
    /// did not write there before (not in [`MANIFEST`]): a user's, or an older version's. They
    /// are left as they are, and are not this run's.
    pub kept: Vec<PathBuf>,
}

/// Write `summary.json`, `flows.csv`, `queues.csv`, `probes.csv` and `cc_stats.csv` into `dir`
/// (created if missing), and `trace.csv` if any flow has a non-empty trace. Returns the paths
/// written, in that order. See [`write_output_set`].
///
/// # Errors
/// Any I/O error; then every temporary file is removed and no file of the set is replaced.
pub fn write_outputs(dir: &Path, scenario: &str, results: &Results) -> io::Result<Vec<PathBuf>> {
    write_output_set(dir, scenario, results, &[], &[]).map(|w| w.files)
}

/// Write the result files of `results` and `extra` (name, contents) into `dir` as one set,
/// then record them and `also` (files the caller wrote there itself) in `dir`'s [`MANIFEST`].
///
/// A file named like an optional output ([`OPTIONAL_OUTPUTS`], `*.flent.gz`) that this write
/// does not make is removed only if the manifest says cclab wrote it (a `trace.csv` of an
/// earlier traced run, the `emulator.json` of an earlier `cclab emulate`), so a directory never
/// mixes files of two runs; one that cclab did not write (a user's own `udp.csv`, or an older
/// version's file) is left alone and listed in [`Written::kept`].
///
/// # Errors
/// Any I/O error; then every temporary file is removed and no file of the set is replaced.
pub fn write_output_set(
    dir: &Path,
    scenario: &str,
    results: &Results,
    extra: &[(&str, &WriteFn<'_>)],
    also: &[PathBuf],
) -> io::Result<Written> {
    fs::create_dir_all(dir)?;
    remove_dead_temps(dir);
    let trace = dir.join(TRACE_CSV);
    let traced = has_trace(results);
    let trace_fn: &WriteFn<'_> = &|w| write_trace_csv(w, results);
    let udp_csv = dir.join(UDP_CSV);
    let has_udp = !results.udp.is_empty();
    let udp_fn: &WriteFn<'_> = &|w| write_udp_csv(w, results);
    let exch_csv = dir.join(EXCHANGES_CSV);
    let has_exch = has_exchanges(results);
    let exch_fn: &WriteFn<'_> = &|w| write_exchanges_csv(w, results);
    let wifi_csv = dir.join(WIFI_CSV);
    let wifi_ampdu_csv = dir.join(WIFI_AMPDU_CSV);
    let has_wifi = !results.wifi.is_empty();
    let wifi_fn: &WriteFn<'_> = &|w| write_wifi_csv(w, results);
    let wifi_ampdu_fn: &WriteFn<'_> = &|w| write_wifi_ampdu_csv(w, results);
    let links = dir.join(LINKS_CSV);
    let changing = has_link_series(results);
    let links_fn: &WriteFn<'_> = &|w| write_links_csv(w, results);
    let files: [(&str, &WriteFn<'_>); 5] = [
        ("summary.json", &|w| {
            write_summary_json(w, scenario, results)
        }),
        ("flows.csv", &|w| write_flows_csv(w, results)),
        ("queues.csv", &|w| write_queues_csv(w, results)),
        ("probes.csv", &|w| write_probes_csv(w, results)),
        ("cc_stats.csv", &|w| write_cc_stats_csv(w, results)),
    ];
    let mut set: Vec<(PathBuf, &WriteFn<'_>)> = files
        .iter()
        .map(|&(name, write)| (dir.join(name), write))
        .collect();
    if traced {
        set.push((trace.clone(), trace_fn));
    }
    if has_udp {
        set.push((udp_csv.clone(), udp_fn));
    }
    if changing {
        set.push((links.clone(), links_fn));
    }
    if has_exch {
        set.push((exch_csv.clone(), exch_fn));
    }
    if has_wifi {
        set.push((wifi_csv.clone(), wifi_fn));
        set.push((wifi_ampdu_csv.clone(), wifi_ampdu_fn));
    }
    for &(name, write) in extra {
        set.push((dir.join(name), write));
    }
    // All temporary files first; the renames only once every one is complete.
    let mut tmps = Vec::with_capacity(set.len());
    for (path, write) in &set {
        match write_tmp(path, *write) {
            Ok(tmp) => tmps.push(tmp),
            Err(e) => {
                for t in &tmps {
                    let _ = fs::remove_file(t);
                }
                return Err(e);
            }
        }
    }
    let mut written = Vec::with_capacity(set.len());
    for (i, ((path, _), tmp)) in set.iter().zip(&tmps).enumerate() {
        if let Err(e) = fs::rename(tmp, path) {
            for t in &tmps[i..] {
                let _ = fs::remove_file(t);
            }
            return Err(e);
        }
        written.push(path.clone());
    }
    let ours = read_manifest(dir);
    let name_of = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned());
    let now: Vec<String> = written
        .iter()
        .chain(also)
        .filter_map(|p| name_of(p))
        .collect();
    let mut kept = Vec::new();
    for e in fs::read_dir(dir)?.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !optional_output(&name) || now.contains(&name) {
            continue;
        }
        let path = e.path();
        if !ours.contains(&name) {
            kept.push(path);
        } else if e.file_type().is_ok_and(|t| t.is_file()) {
            match fs::remove_file(&path) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
    }
    kept.sort();
    let manifest = now.join("\n") + "\n";
    write_atomic(&dir.join(MANIFEST), &|w| w.write_all(manifest.as_bytes()))?;
    Ok(Written {
        files: written,
        kept,
    })
}

/// The names in `dir`'s [`MANIFEST`] (none if it is missing or unreadable; at most its first
/// 64 KiB, far more than a set's names).
fn read_manifest(dir: &Path) -> Vec<String> {
    use std::io::Read;
    let mut text = String::new();
    let path = dir.join(MANIFEST);
    let regular = fs::symlink_metadata(&path).is_ok_and(|m| m.is_file());
    if regular && let Ok(f) = File::open(&path) {
        let _ = f.take(64 * 1024).read_to_string(&mut text);
    }
    text.lines().map(str::to_owned).collect()
}

/// Check that files can be created in `dir` (created if missing), by creating and removing an
/// empty hidden file: a run finds an unwritable output directory before it simulates.
///
/// # Errors
/// The I/O error that creating the directory or the file gave.
pub fn check_writable(dir: &Path) -> io::Result<()> {
    // A file where the directory (or one above it) belongs: say so, not "File exists".
    if let Some(file) = dir
        .ancestors()
        .find(|p| !p.as_os_str().is_empty() && p.exists() && !p.is_dir())
    {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!(
                "{} is a file, not a directory: give a directory for the results",
                file.display()
            ),
        ));
    }
    fs::create_dir_all(dir)?;
    let (probe, _) = create_temp_beside(&dir.join("cclab-write-check"))?;
    fs::remove_file(&probe)
}

/// Create a new, empty file to write `path`'s contents to before renaming it over `path`: in
/// the same directory, named `.NAME.tmp-PID-N` (N counts this process's temporary files, and
/// the next is tried while a name is taken). It is created exclusively (`O_CREAT | O_EXCL`,
/// `open(2)`): whatever is at a name already, a file or a symbolic link planted there, is never
/// opened, followed or truncated. [`crate::study::store::is_dead_leftover`] recognises the
/// names of a process that no longer runs.
///
/// # Errors
/// The I/O error of the creation; `AlreadyExists` if 1,000 names in a row are taken.
pub fn create_temp_beside(path: &Path) -> io::Result<(PathBuf, File)> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name = path
        .file_name()
        .map_or_else(|| "file".into(), |n| n.to_string_lossy().into_owned());
    let mut last = None;
    for _ in 0..1000 {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let tmp = path.with_file_name(format!(".{name}.tmp-{}-{n}", std::process::id()));
        #[cfg(test)]
        if FAIL_TEMP_OF.with(|f| f.borrow().as_deref() == Some(name.as_str())) {
            return Err(io::Error::new(
                io::ErrorKind::StorageFull,
                "disk full (test)",
            ));
        }
        match fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
        {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::from(io::ErrorKind::AlreadyExists)))
}

#[cfg(test)]
thread_local! {
    /// The file name whose temporary file fails as on a full disk (tests).
    static FAIL_TEMP_OF: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Remove the temporary files of [`create_temp_beside`] in `dir` whose process no longer runs
/// (a run killed while writing). Regular files only; errors are ignored (a leftover stays).
fn remove_dead_temps(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if crate::study::store::is_dead_leftover(&name) && e.file_type().is_ok_and(|t| t.is_file())
        {
            let _ = fs::remove_file(e.path());
        }
    }
}

/// Write `contents` to a new temporary file beside `path` ([`create_temp_beside`]) and flush
/// it to disk; returns the temporary path. On error the temporary file is removed.
fn write_tmp(path: &Path, contents: &WriteFn<'_>) -> io::Result<PathBuf> {
    let (tmp, file) = create_temp_beside(path)?;
    let result = (|| {
        let mut w = BufWriter::new(file);
        contents(&mut w)?;
        let file = w.into_inner().map_err(io::IntoInnerError::into_error)?;
        file.sync_all()
    })();
    match result {
        Ok(()) => Ok(tmp),
        Err(e) => {
            let _ = fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// File name of the per-node Wi-Fi counters.
pub const WIFI_CSV: &str = "wifi.csv";
/// Column names of `wifi.csv`.
pub const WIFI_HEADER: &str = "bss,node,role,accesses,collisions,internal_collisions,mean_ampdu,\
mpdus_sent,retries,acked,dropped,airtime_s,airtime_share,access_wait_s,mean_access_wait_us,\
bound_backlog,bound_ba_window,bound_length,bound_ppdu_time,bound_txop,txq_drops,\
collision_airtime_s";
/// File name of the A-MPDU size histograms.
pub const WIFI_AMPDU_CSV: &str = "wifi_ampdu.csv";
/// Column names of `wifi_ampdu.csv`.
pub const WIFI_AMPDU_HEADER: &str = "bss,node,size,count";

/// `wifi.csv`: one row per node of every BSS (AP first, then the stations), the whole run's
/// counters of [`cclab_sim::WifiNodeResult`]; `bound_*` count the A-MPDUs each limit ended,
/// `txq_drops` the frames the transmit queues dropped (CoDel, fq limit), `dropped` those the
/// MAC gave up at the retry limit. The MCS histogram is in `summary.json` only.
///
/// # Errors
/// I/O errors of `w`.
pub fn write_wifi_csv(w: &mut dyn Write, results: &Results) -> io::Result<()> {
    let mut out = String::new();
    out.push_str(WIFI_HEADER);
    out.push('\n');
    for b in &results.wifi {
        for n in &b.nodes {
            let mut row = String::new();
            cell(&mut row, b.name.as_str());
            cell(&mut row, n.node.as_str());
            cell(&mut row, n.role);
            for v in [n.accesses, n.collisions, n.internal_collisions] {
                cell(&mut row, v);
            }
            cell(&mut row, n.mean_ampdu);
            for v in [n.mpdus_sent, n.retries, n.acked, n.dropped] {
                cell(&mut row, v);
            }
            for v in [
                n.airtime_s,
                n.airtime_share,
                n.access_wait_s,
                n.mean_access_wait_us,
            ] {
                cell(&mut row, v);
            }
            for v in n.ampdu_bounds {
                cell(&mut row, v);
            }
            cell(&mut row, n.txq_drops);
            cell(&mut row, n.collision_airtime_s);
            out.push_str(&row);
            out.push('\n');
        }
    }
    w.write_all(out.as_bytes())
}

/// `wifi_ampdu.csv`: the A-MPDU size histogram of every node of every BSS, one row per size
/// (MPDUs per A-MPDU) that occurred: `count` A-MPDUs carried `size` MPDUs. A node's counts sum
/// to its `accesses` in `wifi.csv`.
///
/// # Errors
/// I/O errors of `w`.
pub fn write_wifi_ampdu_csv(w: &mut dyn Write, results: &Results) -> io::Result<()> {
    let mut out = String::new();
    out.push_str(WIFI_AMPDU_HEADER);
    out.push('\n');
    for b in &results.wifi {
        for n in &b.nodes {
            for (size, &count) in n.ampdu_sizes.iter().enumerate() {
                if count > 0 {
                    let mut row = String::new();
                    cell(&mut row, b.name.as_str());
                    cell(&mut row, n.node.as_str());
                    cell(&mut row, size as u64);
                    cell(&mut row, count);
                    out.push_str(&row);
                    out.push('\n');
                }
            }
        }
    }
    w.write_all(out.as_bytes())
}

/// File name of the per-event trace.
pub const TRACE_CSV: &str = "trace.csv";
/// File name of the UDP sources' time series.
pub const UDP_CSV: &str = "udp.csv";
/// Column names of `udp.csv`.
pub const UDP_CSV_HEADER: &str = "t_s,udp,sent,goodput_mbps,owd_mean_ms";

/// File name of the per-exchange results of request/response flows.
pub const EXCHANGES_CSV: &str = "exchanges.csv";
/// Column names of `exchanges.csv`.
pub const EXCHANGES_CSV_HEADER: &str = "flow,exchange,start_s,response_time_s,ideal_s,slowdown,\
response_bytes,new_connection,request_transmissions";

/// Whether any flow completed a request/response exchange (then [`write_outputs`] writes
/// `exchanges.csv`).
#[must_use]
pub fn has_exchanges(results: &Results) -> bool {
    results.flows.iter().any(|f| f.summary.exchanges.is_some())
}

/// `exchanges.csv`: one row per completed exchange of every request/response flow.
///
/// # Errors
/// An I/O error of `w`.
pub fn write_exchanges_csv(w: &mut dyn Write, results: &Results) -> io::Result<()> {
    writeln!(w, "{EXCHANGES_CSV_HEADER}")?;
    let mut row = String::new();
    for f in &results.flows {
        for e in &f.exchanges {
            row.clear();
            cell(&mut row, f.name.as_str());
            cell(&mut row, e.index);
            cell(&mut row, secs(e.start_s));
            cell(&mut row, secs(e.response_time_s));
            cell(&mut row, secs(e.ideal_s));
            cell(&mut row, e.slowdown);
            cell(&mut row, e.response_bytes);
            cell(&mut row, u32::from(e.opened_connection));
            cell(&mut row, e.request_transmissions);
            row.push('\n');
            w.write_all(row.as_bytes())?;
        }
    }
    Ok(())
}

/// `udp.csv`: one row per UDP source per sample, sources in order: datagrams sent in the
/// interval, wire bits received in it (Mbit/s) and the mean one-way delay of those received.
///
/// # Errors
/// I/O errors of `w`.
pub fn write_udp_csv(w: &mut dyn Write, results: &Results) -> io::Result<()> {
    writeln!(w, "{UDP_CSV_HEADER}")?;
    let mut row = String::new();
    for u in &results.udp {
        let s = &u.series;
        for (i, &t) in s.t_s.iter().enumerate() {
            row.clear();
            cell(&mut row, secs(t));
            cell(&mut row, u.name.as_str());
            cell(&mut row, at(&s.sent, i));
            cell(&mut row, at(&s.goodput_bps, i).map(mbps));
            cell(
                &mut row,
                s.owd_mean_ms.get(i).copied().flatten().map(millis),
            );
            row.push('\n');
            w.write_all(row.as_bytes())?;
        }
    }
    Ok(())
}

/// Whether any flow recorded a per-event trace (then [`write_outputs`] writes `trace.csv`).
#[must_use]
pub fn has_trace(results: &Results) -> bool {
    results.flows.iter().any(|f| !f.trace.is_empty())
}

/// Write a file atomically: `contents` goes to a temporary file beside `PATH`
/// ([`create_temp_beside`]), which is flushed to disk and renamed to `PATH`. On error the temporary file is removed and `PATH` is untouched.
///
/// # Errors
/// Any I/O error from creating, writing, syncing or renaming.
pub fn write_atomic(path: &Path, contents: &WriteFn<'_>) -> io::Result<()> {
    let tmp = write_tmp(path, contents)?;
    fs::rename(&tmp, path).inspect_err(|_| {
        let _ = fs::remove_file(&tmp);
    })
}

/// `summary.json`: pretty JSON of [`Summary`], with a trailing newline.
///
/// # Errors
/// I/O errors of `w`.
pub fn write_summary_json(w: &mut dyn Write, scenario: &str, results: &Results) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *w, &Summary::new(scenario, results))?;
    w.write_all(b"\n")
}

/// Column names of `flows.csv`.
pub const FLOWS_CSV_HEADER: &str = "t_s,flow,goodput_mbps,cwnd,ssthresh,srtt_ms,\
pacing_rate_mbps,in_flight,delivery_rate_mbps,retransmits,losses,state,tsq_budget_bytes,\
tsq_shift,below_tcp_bytes";
/// Column names of `queues.csv`.
pub const QUEUES_CSV_HEADER: &str = "t_s,queue,backlog_packets,backlog_bytes,sojourn_mean_ms,\
sojourn_max_ms,drops,throughput_mbps,discipline,ce_marks";
/// Column names of `cc_stats.csv`.
pub const CC_STATS_CSV_HEADER: &str = "t_s,flow,key,value";
/// Column names of `probes.csv`.
pub const PROBES_CSV_HEADER: &str = "t_s,probe,rtt_ms";
/// Column names of `trace.csv`.
pub const TRACE_CSV_HEADER: &str = "t_s,flow,event,snd_una,snd_nxt,cwnd,ssthresh,in_flight,ca_state,cc_state,srtt_ms,\
below_tcp_bytes,tsq_budget_bytes,tsq_shift,tso_segs,sk_pacing_rate_mbps";

/// A CSV cell.
fn cell(out: &mut String, v: impl CsvCell) {
    if !out.is_empty() {
        out.push(',');
    }
    v.write(out);
}

trait CsvCell {
    fn write(&self, out: &mut String);
}
impl CsvCell for f64 {
    fn write(&self, out: &mut String) {
        if self.is_finite() {
            let _ = write!(out, "{self}");
        }
    }
}
impl CsvCell for u32 {
    fn write(&self, out: &mut String) {
        let _ = write!(out, "{self}");
    }
}
impl CsvCell for u64 {
    fn write(&self, out: &mut String) {
        let _ = write!(out, "{self}");
    }
}
impl CsvCell for &str {
    fn write(&self, out: &mut String) {
        if self.contains([',', '"', '\n', '\r']) {
            out.push('"');
            out.push_str(&self.replace('"', "\"\""));
            out.push('"');
        } else {
            out.push_str(self);
        }
    }
}
impl<T: CsvCell> CsvCell for Option<T> {
    fn write(&self, out: &mut String) {
        if let Some(v) = self {
            v.write(out);
        }
    }
}

/// Element `i` of a series, `None` if the series is shorter (the engine promises equal lengths;
/// a short series becomes empty cells rather than a panic).
fn at<T: Copy>(v: &[T], i: usize) -> Option<T> {
    v.get(i).copied()
}

fn mbps(bps: f64) -> f64 {
    bps / 1e6
}

/// Seconds rounded to the nanosecond, the engine's resolution: `0.6000000000000001` → `0.6`.
fn secs(t: f64) -> f64 {
    (t * 1e9).round() / 1e9
}

/// Milliseconds rounded to the nanosecond.
fn millis(t: f64) -> f64 {
    (t * 1e6).round() / 1e6
}

/// `flows.csv`.
///
/// # Errors
/// I/O errors of `w`.
pub fn write_flows_csv(w: &mut dyn Write, results: &Results) -> io::Result<()> {
    writeln!(w, "{FLOWS_CSV_HEADER}")?;
    let mut row = String::new();
    for f in &results.flows {
        let s = &f.series;
        for (i, &t) in s.t_s.iter().enumerate() {
            row.clear();
            cell(&mut row, secs(t));
            cell(&mut row, f.name.as_str());
            cell(&mut row, at(&s.goodput_bps, i).map(mbps));
            cell(&mut row, at(&s.cwnd, i));
            cell(&mut row, at(&s.ssthresh, i).flatten());
            cell(&mut row, at(&s.srtt_ms, i).flatten().map(millis));
            cell(&mut row, at(&s.pacing_rate_bps, i).flatten().map(mbps));
            cell(&mut row, at(&s.in_flight, i));
            cell(&mut row, at(&s.delivery_rate_bps, i).flatten().map(mbps));
            cell(&mut row, at(&s.retransmits, i));
            cell(&mut row, at(&s.losses, i));
            cell(&mut row, at(&s.state, i));
            cell(&mut row, at(&s.tsq_budget, i).flatten());
            cell(&mut row, at(&s.tsq_shift, i).map(u32::from));
            cell(&mut row, at(&s.below_tcp, i));
            row.push('\n');
            w.write_all(row.as_bytes())?;
        }
    }
    Ok(())
}

/// `cc_stats.csv`: controller internals (`CongestionControl::stats`) in long format, one row
/// per flow, sample time and key that the controller reported at that time; keys in
/// alphabetical order within a sample.
///
/// # Errors
/// I/O errors of `w`.
pub fn write_cc_stats_csv(w: &mut dyn Write, results: &Results) -> io::Result<()> {
    writeln!(w, "{CC_STATS_CSV_HEADER}")?;
    let mut row = String::new();
    for f in &results.flows {
        let s = &f.series;
        for (i, &t) in s.t_s.iter().enumerate() {
            for (key, col) in &s.cc_stats {
                let Some(v) = at(col, i).flatten() else {
                    continue;
                };
                row.clear();
                cell(&mut row, secs(t));
                cell(&mut row, f.name.as_str());
                cell(&mut row, *key);
                cell(&mut row, v);
                row.push('\n');
                w.write_all(row.as_bytes())?;
            }
        }
    }
    Ok(())
}

/// Name of the optional link-conditions file.
pub const LINKS_CSV: &str = "links.csv";
/// Column names of `links.csv`.
pub const LINKS_CSV_HEADER: &str = "t_s,link,capacity_mbps,delay_ms";

/// Whether some monitored link's rate or delay changes during the run (then `links.csv` is
/// written).
#[must_use]
pub fn has_link_series(results: &Results) -> bool {
    results
        .queues
        .iter()
        .any(|q| !q.series.capacity_bps.is_empty() || !q.series.delay_ms.is_empty())
}

/// `links.csv`: one row per sample of every monitored link whose rate or delay changes:
/// `t_s, link, capacity_mbps, delay_ms` (`QueueSeries::capacity_bps` in Mbit/s, empty on a
/// constant-rate link; `QueueSeries::delay_ms`, empty on a link whose delay does not change).
///
/// # Errors
/// I/O errors of `w`.
pub fn write_links_csv(w: &mut dyn Write, results: &Results) -> io::Result<()> {
    writeln!(w, "{LINKS_CSV_HEADER}")?;
    let mut row = String::new();
    for q in &results.queues {
        let s = &q.series;
        if s.capacity_bps.is_empty() && s.delay_ms.is_empty() {
            continue;
        }
        for (i, &t) in s.t_s.iter().enumerate() {
            row.clear();
            cell(&mut row, secs(t));
            cell(&mut row, q.name.as_str());
            row.push(',');
            if let Some(c) = at(&s.capacity_bps, i) {
                mbps(c).write(&mut row);
            }
            row.push(',');
            if let Some(d) = at(&s.delay_ms, i) {
                millis(d).write(&mut row);
            }
            row.push('\n');
            w.write_all(row.as_bytes())?;
        }
    }
    Ok(())
}

/// `queues.csv`.
///
/// # Errors
/// I/O errors of `w`.
pub fn write_queues_csv(w: &mut dyn Write, results: &Results) -> io::Result<()> {
    // A link whose rate changes over time adds its capacity as a last column (left out when
    // no link has one, so constant-rate runs keep their bytes).
    let capacity = results
        .queues
        .iter()
        .any(|q| !q.series.capacity_bps.is_empty());
    if capacity {
        writeln!(w, "{QUEUES_CSV_HEADER},capacity_mbps")?;
    } else {
        writeln!(w, "{QUEUES_CSV_HEADER}")?;
    }
    let mut row = String::new();
    for q in &results.queues {
        let s = &q.series;
        for (i, &t) in s.t_s.iter().enumerate() {
            row.clear();
            cell(&mut row, secs(t));
            cell(&mut row, q.name.as_str());
            cell(&mut row, at(&s.backlog_packets, i));
            cell(&mut row, at(&s.backlog_bytes, i));
            cell(&mut row, at(&s.sojourn_mean_ms, i).flatten().map(millis));
            cell(&mut row, at(&s.sojourn_max_ms, i).flatten().map(millis));
            cell(&mut row, at(&s.drops, i));
            cell(&mut row, at(&s.throughput_bps, i).map(mbps));
            cell(&mut row, q.summary.discipline);
            cell(&mut row, at(&s.ce_marks, i));
            if capacity {
                cell(&mut row, at(&s.capacity_bps, i).map(mbps));
            }
            row.push('\n');
            w.write_all(row.as_bytes())?;
        }
        if s.class_sojourn_mean_ms.len() < 2 {
            continue;
        }
        for (c, col) in s.class_sojourn_mean_ms.iter().enumerate() {
            let name = format!("{}/{}", q.name, class_name(q, c));
            for (i, &t) in s.t_s.iter().enumerate() {
                row.clear();
                cell(&mut row, secs(t));
                cell(&mut row, name.as_str());
                cell(
                    &mut row,
                    s.class_backlog_packets.get(c).and_then(|b| at(b, i)),
                );
                row.push(',');
                cell(&mut row, at(col, i).flatten().map(millis));
                row.push_str(",,,");
                cell(&mut row, q.summary.discipline);
                row.push_str(",\n");
                w.write_all(row.as_bytes())?;
            }
        }
    }
    Ok(())
}

/// Name of class `c` of queue `q` (from its summary; `class{c}` if the summary lacks it).
fn class_name(q: &cclab_sim::QueueResult, c: usize) -> String {
    q.summary
        .classes
        .get(c)
        .map_or_else(|| format!("class{c}"), |k| k.name.to_owned())
}

/// `probes.csv`.
///
/// # Errors
/// I/O errors of `w`.
pub fn write_probes_csv(w: &mut dyn Write, results: &Results) -> io::Result<()> {
    writeln!(w, "{PROBES_CSV_HEADER}")?;
    let mut row = String::new();
    for p in &results.probes {
        for (i, &t) in p.t_s.iter().enumerate() {
            row.clear();
            cell(&mut row, secs(t));
            cell(&mut row, p.name.as_str());
            cell(&mut row, at(&p.rtt_ms, i).map(millis));
            row.push('\n');
            w.write_all(row.as_bytes())?;
        }
    }
    Ok(())
}

/// `trace.csv`: the per-event sender trace in long format, one row per recorded event; flows in
/// order, each flow's events in time order. Flows without a trace contribute no rows.
///
/// # Errors
/// I/O errors of `w`.
pub fn write_trace_csv(w: &mut dyn Write, results: &Results) -> io::Result<()> {
    writeln!(w, "{TRACE_CSV_HEADER}")?;
    let mut row = String::new();
    for f in &results.flows {
        for p in &f.trace {
            row.clear();
            cell(&mut row, secs(p.t_s));
            cell(&mut row, f.name.as_str());
            cell(&mut row, p.event);
            cell(&mut row, p.snd_una);
            cell(&mut row, p.snd_nxt);
            cell(&mut row, p.cwnd);
            cell(&mut row, p.ssthresh);
            cell(&mut row, p.in_flight);
            cell(&mut row, p.ca_state);
            cell(&mut row, p.cc_state);
            cell(&mut row, p.srtt_ms.map(millis));
            cell(&mut row, p.below_tcp);
            cell(&mut row, p.tsq_budget);
            cell(&mut row, u32::from(p.tsq_shift));
            cell(&mut row, p.tso_segs);
            cell(&mut row, p.sk_pacing_rate.map(|b| mbps(b as f64 * 8.0)));
            row.push('\n');
            w.write_all(row.as_bytes())?;
        }
    }
    Ok(())
}

/// A plain-text table: first column left-aligned, the others right-aligned.
struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    fn new(header: &[&str]) -> Self {
        Table {
            header: header.iter().map(|h| (*h).to_owned()).collect(),
            rows: Vec::new(),
        }
    }

    fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    fn render(&self, out: &mut String) {
        let cols = self.header.len();
        let mut width = vec![0usize; cols];
        for r in std::iter::once(&self.header).chain(&self.rows) {
            for (c, s) in r.iter().enumerate().take(cols) {
                width[c] = width[c].max(s.chars().count());
            }
        }
        for r in std::iter::once(&self.header).chain(&self.rows) {
            let mut line = String::new();
            for (c, s) in r.iter().enumerate().take(cols) {
                if c == 0 {
                    let _ = write!(line, "{s:<w$}", w = width[c]);
                } else if c == 1
                    && self
                        .header
                        .get(1)
                        .is_some_and(|h| h == "controller" || h == "qdisc")
                {
                    let _ = write!(line, "  {s:<w$}", w = width[c]);
                } else {
                    let _ = write!(line, "  {s:>w$}", w = width[c]);
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
    }
}

/// A number with `decimals` decimals, or `-` when absent or not finite.
fn num(v: Option<f64>, decimals: usize) -> String {
    match v {
        Some(x) if x.is_finite() => format!("{x:.decimals$}"),
        _ => "-".to_owned(),
    }
}

/// The human summary: a table of flows (goodput, RTT mean/p50/p95/p99, retransmits, RTOs; when
/// any flow uses ECN also its mode, CE-marked segments delivered and ECN window reductions; when
/// any flow saw reordering or DSACKs also its reordered share and spurious retransmissions), of
/// monitored queues (discipline, mean/p50/p95/p99 sojourn, drops, AQM drops, CE marks; one more
/// row per class of an AQM with several, e.g. `bottleneck/l`) and of probes (RTT p50/p95); a
/// note when traced flows made more rows than the run keeps
/// ([`cclab_sim::tcp::sender::MAX_TRACE_ROWS`]).
#[must_use]
pub fn render_table(results: &Results) -> String {
    let mut out = String::new();
    let ecn = results.flows.iter().any(|f| f.summary.ecn != "off");
    let mut header = vec![
        "flow",
        "controller",
        "goodput Mbit/s",
        "RTT mean ms",
        "p50",
        "p95",
        "p99",
        "retrans",
        "RTOs",
    ];
    if ecn {
        header.extend(["ECN", "CE delivered", "ECN cuts"]);
    }
    let reordering = results
        .flows
        .iter()
        .any(|f| f.summary.reordered > 0 || f.summary.dsacks_received > 0);
    if reordering {
        header.extend(["reordered %", "spurious"]);
    }
    let mut flows = Table::new(&header);
    for f in &results.flows {
        let s = &f.summary;
        let mut row = vec![
            f.name.clone(),
            f.controller.clone(),
            num(Some(mbps(s.goodput_bps)), 2),
            num(s.rtt_mean_ms, 1),
            num(s.rtt_p50_ms, 1),
            num(s.rtt_p95_ms, 1),
            num(s.rtt_p99_ms, 1),
            s.retransmits.to_string(),
            s.rto_count.to_string(),
        ];
        if ecn {
            row.extend([
                s.ecn.to_owned(),
                s.ce_delivered.to_string(),
                s.ecn_reductions.to_string(),
            ]);
        }
        if reordering {
            row.extend([
                num(Some(100.0 * s.reorder_ratio), 2),
                s.spurious_retransmits.to_string(),
            ]);
        }
        flows.row(row);
    }
    flows.render(&mut out);
    if !results.queues.is_empty() {
        out.push('\n');
        let mut queues = Table::new(&[
            "queue",
            "qdisc",
            "delay mean ms",
            "p50",
            "p95",
            "p99",
            "drops",
            "AQM drops",
            "CE marks",
        ]);
        for q in &results.queues {
            let s = &q.summary;
            queues.row(vec![
                q.name.clone(),
                s.discipline.to_owned(),
                num(s.delay_mean_ms, 2),
                num(s.delay_p50_ms, 2),
                num(s.delay_p95_ms, 2),
                num(s.delay_p99_ms, 2),
                s.drops.to_string(),
                s.aqm_drops.to_string(),
                s.ce_marks.to_string(),
            ]);
            if s.classes.len() > 1 {
                for c in &s.classes {
                    queues.row(vec![
                        format!("{}/{}", q.name, c.name),
                        s.discipline.to_owned(),
                        num(c.delay_mean_ms, 2),
                        num(c.delay_p50_ms, 2),
                        num(c.delay_p95_ms, 2),
                        num(c.delay_p99_ms, 2),
                        (c.overflow_drops + c.aqm_drops).to_string(),
                        c.aqm_drops.to_string(),
                        c.ce_marks.to_string(),
                    ]);
                }
            }
        }
        queues.render(&mut out);
    }
    if !results.probes.is_empty() {
        out.push('\n');
        let mut probes = Table::new(&["probe", "RTT p50 ms", "p95"]);
        for p in &results.probes {
            probes.row(vec![
                p.name.clone(),
                num(p.summary.rtt_p50_ms, 1),
                num(p.summary.rtt_p95_ms, 1),
            ]);
        }
        probes.render(&mut out);
    }
    if !results.udp.is_empty() {
        out.push('\n');
        let mut udp = Table::new(&[
            "udp",
            "kind",
            "sent",
            "received",
            "lost",
            "goodput Mbit/s",
            "OWD mean ms",
            "p50",
            "p99",
        ]);
        for u in &results.udp {
            let s = &u.summary;
            udp.row(vec![
                u.name.clone(),
                u.pattern.to_owned(),
                s.sent.to_string(),
                s.received.to_string(),
                s.lost.to_string(),
                format!("{:.2}", s.goodput_mbps),
                num(s.owd_mean_ms, 2),
                num(s.owd_p50_ms, 2),
                num(s.owd_p99_ms, 2),
            ]);
        }
        udp.render(&mut out);
    }
    let dropped = results.engine.trace_rows_dropped;
    if dropped > 0 {
        let kept = results
            .flows
            .iter()
            .map(|f| f.trace.len())
            .max()
            .unwrap_or(0);
        let _ = writeln!(
            out,
            "\nnote: `{TRACE_CSV}` holds the first {kept} rows of a traced flow (a run keeps \
             {MAX_TRACE_ROWS}, shared by its traced flows); {dropped} later rows were not kept: \
             trace a shorter run or fewer flows"
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_sim::{FlowResult, FlowSeries, ProbeResult, QueueResult, QueueSeries, TracePoint};

    /// Hand-made results with two samples per series.
    pub(crate) fn sample_results() -> Results {
        Results {
            wifi: Vec::new(),
            seed: 7,
            duration_s: 0.4,
            flows: vec![FlowResult {
                name: "cubic, \"a\"".to_owned(),
                controller: "cubic".to_owned(),
                summary: FlowSummary {
                    goodput_bps: 94_500_000.0,
                    bytes_delivered: 4_725_000,
                    segments_sent: 3300,
                    retransmits: 12,
                    segments_lost: 12,
                    fast_recoveries: 2,
                    rto_count: 0,
                    tlp_count: 1,
                    rto_times_s: vec![],
                    rtt_mean_ms: Some(61.25),
                    rtt_p50_ms: Some(60.0),
                    rtt_p95_ms: Some(79.5),
                    rtt_p99_ms: Some(80.0),
                    fct_s: None,
                    size_bytes: None,
                    ideal_fct_s: None,
                    fct_slowdown: None,
                    complete: true,
                    min_cwnd: 10,
                    ecn: "off",
                    ce_delivered: 0,
                    ce_echoes: 0,
                    ecn_reductions: 0,
                    loss_rate: 0.001,
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
                },
                series: FlowSeries {
                    t_s: vec![0.2, 0.1 + 0.2 + 0.1],
                    goodput_bps: vec![50e6, 95e6],
                    cwnd: vec![40, 300],
                    ssthresh: vec![None, Some(210)],
                    srtt_ms: vec![Some(40.5), Some(70.0)],
                    pacing_rate_bps: vec![None, None],
                    in_flight: vec![38, 290],
                    delivery_rate_bps: vec![Some(48e6), None],
                    retransmits: vec![0, 12],
                    losses: vec![0, 12],
                    state: vec!["Open", "Recovery"],
                    cc_stats: [("w_max", vec![None, Some(300.0)])].into_iter().collect(),
                    tsq_budget: vec![Some(12_500), None],
                    tsq_shift: vec![10, 8],
                    below_tcp: vec![3000, 0],
                },
                trace: Vec::new(),
                exchanges: Vec::new(),
            }],
            queues: vec![QueueResult {
                name: "bottleneck".to_owned(),
                summary: QueueSummary {
                    enqueued: 3300,
                    drops: 12,
                    link_losses: 0,
                    delay_mean_ms: Some(21.25),
                    delay_p95_ms: Some(39.0),
                    delay_max_ms: Some(40.0),
                    throughput_bps: 95e6,
                    max_backlog_packets: 333,
                    discipline: "fifo",
                    aqm_drops: 0,
                    ce_marks: 0,
                    delay_p50_ms: Some(20.5),
                    delay_p99_ms: Some(39.75),
                    classes: Vec::new(),
                },
                series: QueueSeries {
                    t_s: vec![0.2, 0.4],
                    backlog_packets: vec![3, 333],
                    backlog_bytes: vec![4500, 499_500],
                    sojourn_mean_ms: vec![Some(0.36), None],
                    sojourn_max_ms: vec![Some(0.5), None],
                    drops: vec![0, 12],
                    ce_marks: vec![0, 0],
                    class_sojourn_mean_ms: Vec::new(),
                    class_backlog_packets: Vec::new(),
                    throughput_bps: vec![50e6, 100e6],
                    capacity_bps: Vec::new(),
                    delay_ms: Vec::new(),
                },
            }],
            probes: vec![ProbeResult {
                name: "Ping (ms) ICMP".to_owned(),
                kind: "icmp",
                dscp: 0,
                seq: vec![0, 1],
                t_s: vec![0.0, 0.2],
                rtt_ms: vec![40.0, 72.5],
                sent: 2,
                summary: ProbeSummary {
                    answered: 2,
                    rtt_mean_ms: Some(56.25),
                    rtt_p50_ms: Some(40.0),
                    rtt_p95_ms: Some(72.5),
                    rtt_p99_ms: Some(72.5),
                },
            }],
            udp: Vec::new(),
            engine: EngineStats::default(),
        }
    }

    /// [`sample_results`] with a second flow, of which only the second is traced.
    fn traced_results() -> Results {
        let mut r = sample_results();
        let mut b = r.flows[0].clone();
        b.name = "b".to_owned();
        b.trace = vec![
            TracePoint {
                t_s: 0.1 + 0.2,
                event: "ack",
                snd_una: 10,
                snd_nxt: 20,
                cwnd: 10,
                ssthresh: None,
                in_flight: 10,
                ca_state: "open",
                cc_state: "slow_start",
                srtt_ms: Some(40.000_000_000_1),
                below_tcp: 4500,
                tsq_budget: Some(6000),
                tsq_shift: 10,
                tso_segs: 2,
                sk_pacing_rate: Some(1_250_000),
            },
            TracePoint {
                t_s: 0.5,
                event: "rto",
                snd_una: 12,
                snd_nxt: 30,
                cwnd: 1,
                ssthresh: Some(7),
                in_flight: 0,
                ca_state: "loss",
                cc_state: "loss",
                srtt_ms: None,
                below_tcp: 0,
                tsq_budget: None,
                tsq_shift: 8,
                tso_segs: 1,
                sk_pacing_rate: None,
            },
        ];
        r.flows.push(b);
        r
    }

    fn to_string(f: impl Fn(&mut dyn Write) -> io::Result<()>) -> String {
        let mut buf = Vec::new();
        f(&mut buf).unwrap();
        String::from_utf8(buf).unwrap()
    }

    #[test]
    fn flows_csv_is_long_format_with_empty_cells_for_absent_values() {
        let r = sample_results();
        let csv = to_string(|w| write_flows_csv(w, &r));
        assert_eq!(
            csv,
            format!(
                "{FLOWS_CSV_HEADER}\n\
                 0.2,\"cubic, \"\"a\"\"\",50,40,,40.5,,38,48,0,0,Open,12500,10,3000\n\
                 0.4,\"cubic, \"\"a\"\"\",95,300,210,70,,290,,12,12,Recovery,,8,0\n"
            )
        );
    }

    #[test]
    fn trace_csv_has_one_row_per_event_and_empty_cells_for_absent_values() {
        let r = traced_results();
        assert!(has_trace(&r));
        assert!(!has_trace(&sample_results()));
        let csv = to_string(|w| write_trace_csv(w, &r));
        assert_eq!(
            csv,
            format!(
                "{TRACE_CSV_HEADER}\n\
                 0.3,b,ack,10,20,10,,10,open,slow_start,40,4500,6000,10,2,10\n\
                 0.5,b,rto,12,30,1,7,0,loss,loss,,0,,8,1,\n"
            )
        );
        // Untraced results give the header only.
        let csv = to_string(|w| write_trace_csv(w, &sample_results()));
        assert_eq!(csv, format!("{TRACE_CSV_HEADER}\n"));
    }

    /// Trace rows the simulator did not keep are noted under the summary, with the rows a flow
    /// kept; without dropped rows there is no note.
    #[test]
    fn the_summary_notes_trace_rows_not_kept() {
        let mut r = traced_results();
        assert!(!render_table(&r).contains("note:"));
        r.engine.trace_rows_dropped = 7;
        let kept = r.flows[1].trace.len();
        let table = render_table(&r);
        assert!(
            table.contains(&format!(
                "note: `trace.csv` holds the first {kept} rows of a traced flow (a run keeps \
                 {MAX_TRACE_ROWS}, shared by its traced flows); 7 later rows were not kept"
            )),
            "{table}"
        );
    }

    #[test]
    fn trace_csv_is_written_only_when_a_flow_is_traced() {
        let dir = std::env::temp_dir().join(format!("cclab-trace-test-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let paths = write_outputs(&dir, "demo", &traced_results()).unwrap();
        assert_eq!(paths.len(), 6);
        assert_eq!(paths[5], dir.join(TRACE_CSV));
        let csv = fs::read_to_string(dir.join(TRACE_CSV)).unwrap();
        assert_eq!(csv.lines().count(), 3, "{csv}");
        // A later untraced run into the same directory removes the stale trace.
        let paths = write_outputs(&dir, "demo", &sample_results()).unwrap();
        assert_eq!(paths.len(), 5);
        assert!(!dir.join(TRACE_CSV).exists());
        // And an untraced run into a directory without one is fine too.
        write_outputs(&dir, "demo", &sample_results()).unwrap();
        assert!(!dir.join(TRACE_CSV).exists());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn cc_stats_csv_skips_keys_the_controller_did_not_report() {
        let r = sample_results();
        let csv = to_string(|w| write_cc_stats_csv(w, &r));
        assert_eq!(
            csv,
            format!("{CC_STATS_CSV_HEADER}\n0.4,\"cubic, \"\"a\"\"\",w_max,300\n")
        );
    }

    #[test]
    fn queues_and_probes_csv() {
        let r = sample_results();
        let csv = to_string(|w| write_queues_csv(w, &r));
        assert_eq!(
            csv,
            format!(
                "{QUEUES_CSV_HEADER}\n0.2,bottleneck,3,4500,0.36,0.5,0,50,fifo,0\n\
                 0.4,bottleneck,333,499500,,,12,100,fifo,0\n"
            )
        );
        let csv = to_string(|w| write_probes_csv(w, &r));
        assert_eq!(
            csv,
            format!("{PROBES_CSV_HEADER}\n0,Ping (ms) ICMP,40\n0.2,Ping (ms) ICMP,72.5\n")
        );
    }

    /// [`sample_results`] with an L4S flow and a DualPI2 bottleneck (classes `c` and `l`).
    fn aqm_results() -> Results {
        let mut r = sample_results();
        let f = &mut r.flows[0].summary;
        f.ecn = "l4s";
        f.ce_delivered = 321;
        f.ce_echoes = 300;
        f.ecn_reductions = 17;
        let q = &mut r.queues[0];
        q.summary.discipline = "dualpi2";
        q.summary.aqm_drops = 5;
        q.summary.ce_marks = 654;
        let class = |name, mean, ce| cclab_sim::ClassSummary {
            name,
            enqueued: 1000,
            overflow_drops: 1,
            aqm_drops: 2,
            ce_marks: ce,
            delay_mean_ms: Some(mean),
            delay_p50_ms: Some(mean),
            delay_p95_ms: Some(mean * 2.0),
            delay_p99_ms: Some(mean * 3.0),
            delay_max_ms: Some(mean * 4.0),
        };
        q.summary.classes = vec![class("c", 14.5, 3), class("l", 0.75, 651)];
        q.series.ce_marks = vec![100, 554];
        q.series.class_sojourn_mean_ms = vec![vec![Some(12.0), None], vec![Some(0.5), Some(0.25)]];
        q.series.class_backlog_packets = vec![vec![2, 330], vec![1, 3]];
        r
    }

    #[test]
    fn queues_csv_has_discipline_ce_marks_and_a_block_per_aqm_class() {
        let csv = to_string(|w| write_queues_csv(w, &aqm_results()));
        assert_eq!(
            csv,
            format!(
                "{QUEUES_CSV_HEADER}\n\
                 0.2,bottleneck,3,4500,0.36,0.5,0,50,dualpi2,100\n\
                 0.4,bottleneck,333,499500,,,12,100,dualpi2,554\n\
                 0.2,bottleneck/c,2,,12,,,,dualpi2,\n\
                 0.4,bottleneck/c,330,,,,,,dualpi2,\n\
                 0.2,bottleneck/l,1,,0.5,,,,dualpi2,\n\
                 0.4,bottleneck/l,3,,0.25,,,,dualpi2,\n"
            )
        );
        let columns = QUEUES_CSV_HEADER.split(',').count();
        assert!(
            csv.lines().all(|l| l.split(',').count() == columns),
            "{csv}"
        );
        assert!(QUEUES_CSV_HEADER.ends_with(",discipline,ce_marks"));
    }

    /// Reordering columns appear only when some flow saw reordering or DSACKs.
    #[test]
    fn table_shows_reordering_only_when_there_is_some() {
        let mut r = sample_results();
        assert!(!render_table(&r).contains("reordered %"));
        let s = &mut r.flows[0].summary;
        (
            s.reordered,
            s.reorder_ratio,
            s.dsacks_received,
            s.spurious_retransmits,
        ) = (30, 0.0125, 4, 3);
        let t = render_table(&r);
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[0].ends_with("reordered %  spurious"), "{t}");
        assert!(lines[1].ends_with("1.25         3"), "{t}");
    }

    #[test]
    fn table_shows_qdisc_columns_classes_and_ecn_counters() {
        // A FIFO and no ECN: the queue columns, no ECN columns.
        let t = render_table(&sample_results());
        let queue_header = t.lines().find(|l| l.starts_with("queue")).unwrap();
        for col in ["qdisc", "p50", "p99", "AQM drops", "CE marks"] {
            assert!(queue_header.contains(col), "{t}");
        }
        let row = t.lines().find(|l| l.starts_with("bottleneck")).unwrap();
        assert!(
            row.contains("fifo") && row.contains("20.50") && row.contains("39.75"),
            "{t}"
        );
        assert!(!t.contains("CE delivered"), "{t}");
        // DualPI2 and an L4S flow.
        let t = render_table(&aqm_results());
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[0].ends_with("ECN  CE delivered  ECN cuts"), "{t}");
        assert!(lines[1].ends_with("l4s           321        17"), "{t}");
        let row = |name: &str| {
            *lines
                .iter()
                .find(|l| l.split_whitespace().next() == Some(name))
                .unwrap_or_else(|| panic!("no row {name} in\n{t}"))
        };
        let agg: Vec<&str> = row("bottleneck").split_whitespace().collect();
        assert_eq!(
            agg[1..],
            [
                "dualpi2", "21.25", "20.50", "39.00", "39.75", "12", "5", "654"
            ],
            "{t}"
        );
        let l: Vec<&str> = row("bottleneck/l").split_whitespace().collect();
        assert_eq!(
            l[1..],
            ["dualpi2", "0.75", "0.75", "1.50", "2.25", "3", "2", "651"],
            "{t}"
        );
        let c: Vec<&str> = row("bottleneck/c").split_whitespace().collect();
        assert_eq!(c[2], "14.50", "{t}");
    }

    /// A file of the set that cannot be written (here its temporary file fails as on a full
    /// disk) leaves the earlier set untouched and no temporary files.
    #[test]
    fn a_failed_write_replaces_no_file_of_the_set() {
        let dir = std::env::temp_dir().join(format!("cclab-outset-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let mut r = sample_results();
        write_outputs(&dir, "first", &r).unwrap();
        let before: Vec<Vec<u8>> = ["summary.json", "flows.csv", "queues.csv"]
            .iter()
            .map(|f| fs::read(dir.join(f)).unwrap())
            .collect();
        FAIL_TEMP_OF.with(|f| *f.borrow_mut() = Some("probes.csv".into()));
        r.seed = 8;
        assert!(write_outputs(&dir, "second", &r).is_err());
        FAIL_TEMP_OF.with(|f| *f.borrow_mut() = None);
        for (f, old) in ["summary.json", "flows.csv", "queues.csv"]
            .iter()
            .zip(&before)
        {
            assert_eq!(&fs::read(dir.join(f)).unwrap(), old, "{f} was replaced");
        }
        for e in fs::read_dir(&dir).unwrap() {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            assert!(!name.contains(".tmp"), "{name} left");
        }
        write_outputs(&dir, "second", &r).unwrap();
        assert_ne!(fs::read(dir.join("summary.json")).unwrap(), before[0]);
        let e = check_writable(&dir.join("summary.json").join("sub")).unwrap_err();
        assert_ne!(e.kind(), io::ErrorKind::NotFound, "{e}");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn summary_json_has_fixed_key_order_and_no_series() {
        let r = sample_results();
        let json = to_string(|w| write_summary_json(w, "demo", &r));
        let keys = [
            "\"scenario\"",
            "\"seed\"",
            "\"duration_s\"",
            "\"flows\"",
            "\"queues\"",
            "\"probes\"",
            "\"engine\"",
        ];
        let pos: Vec<usize> = keys.iter().map(|k| json.find(k).unwrap()).collect();
        assert!(pos.windows(2).all(|w| w[0] < w[1]), "{json}");
        assert!(!json.contains("\"series\""));
        assert!(!json.contains("\"t_s\""));
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v["flows"][0]["goodput_bps"], 94_500_000.0);
        assert_eq!(v["flows"][0]["controller"], "cubic");
        assert_eq!(v["probes"][0]["sent"], 2);
        assert_eq!(v["queues"][0]["drops"], 12);
        // Deterministic: same input, same bytes.
        assert_eq!(json, to_string(|w| write_summary_json(w, "demo", &r)));
    }

    #[test]
    fn table_lists_flows_queues_and_probes() {
        let t = render_table(&sample_results());
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[0].starts_with("flow"), "{t}");
        assert!(
            lines[1].contains("cubic") && lines[1].contains("94.50"),
            "{t}"
        );
        assert!(
            lines[1].contains("61.2") && lines[1].contains("79.5"),
            "{t}"
        );
        assert!(t.contains("bottleneck") && t.contains("21.25"), "{t}");
        assert!(t.contains("Ping (ms) ICMP") && t.contains("72.5"), "{t}");
        // Columns line up: every line of a table has the same length up to trailing spaces.
        assert_eq!(lines[0].len(), lines[1].len(), "{t}");
    }

    #[test]
    fn outputs_are_written_atomically() {
        let dir = std::env::temp_dir().join(format!("cclab-output-test-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let r = sample_results();
        let paths = write_outputs(&dir, "demo", &r).unwrap();
        assert_eq!(paths.len(), 5);
        assert!(!dir.join(TRACE_CSV).exists());
        for p in &paths {
            assert!(p.exists());
        }
        let names: Vec<String> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(names.iter().all(|n| !n.contains(".tmp")), "{names:?}");
        // A failing writer leaves the previous file intact and no temporary behind.
        let target = dir.join("summary.json");
        let before = fs::read(&target).unwrap();
        let e = write_atomic(&target, &|w| {
            w.write_all(b"{ half")?;
            Err(io::Error::other("interrupted"))
        });
        assert!(e.is_err());
        assert_eq!(fs::read(&target).unwrap(), before);
        let names: Vec<String> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(names.iter().all(|n| !n.contains(".tmp")), "{names:?}");
        fs::remove_dir_all(&dir).unwrap();
    }

    /// A symbolic link planted at a temporary file's name (the old fixed `NAME.tmp`, or the
    /// names this process will use next) is never written through: the link's target keeps
    /// its contents, and the results are regular files. Without exclusive creation, running as
    /// root, this overwrote any file of the system.
    #[test]
    fn planted_symlinks_at_temporary_names_are_not_followed() {
        use std::os::unix::fs::symlink;
        let dir = std::env::temp_dir().join(format!("cclab-output-link-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("out")).unwrap();
        let victim = dir.join("victim.txt");
        fs::write(&victim, "VICTIM ORIGINAL\n").unwrap();
        let out = dir.join("out");
        let pid = std::process::id();
        symlink(&victim, out.join("summary.json.tmp")).unwrap();
        // The counter is shared by the tests of this process: plant the next names of every
        // file of the set.
        let next = {
            let (p, _) = create_temp_beside(&out.join("probe")).unwrap();
            fs::remove_file(&p).unwrap();
            p.to_string_lossy()
                .rsplit('-')
                .next()
                .unwrap()
                .parse::<u64>()
                .unwrap()
        };
        for n in next + 1..next + 40 {
            for f in [
                "summary.json",
                "flows.csv",
                "emulator.json",
                "cclab-write-check",
            ] {
                let _ = symlink(&victim, out.join(format!(".{f}.tmp-{pid}-{n}")));
            }
        }
        check_writable(&out).unwrap();
        write_outputs(&out, "demo", &sample_results()).unwrap();
        write_atomic(&out.join("emulator.json"), &|w| w.write_all(b"{}\n")).unwrap();
        assert_eq!(fs::read_to_string(&victim).unwrap(), "VICTIM ORIGINAL\n");
        for f in ["summary.json", "flows.csv", "emulator.json"] {
            let m = fs::symlink_metadata(out.join(f)).unwrap();
            assert!(m.is_file(), "{f} is not a regular file");
        }
        fs::remove_dir_all(&dir).unwrap();
    }

    /// Optional outputs cclab wrote (recorded in the manifest) are removed by a later write
    /// that does not make them, as `emulator.json` by a `run` after an `emulate`; files of the
    /// same names that cclab did not write there are kept and reported, never removed.
    #[test]
    fn only_optional_outputs_cclab_wrote_are_removed() {
        let dir = std::env::temp_dir().join(format!("cclab-output-own-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let r = sample_results();
        let report: &WriteFn<'_> = &|w| w.write_all(b"{}\n");
        let flent = dir.join("x-emulate-0-1.flent.gz");
        fs::write(&flent, "gz").unwrap();
        fs::write(dir.join(UDP_CSV), "mine\n").unwrap();
        let w = write_output_set(
            &dir,
            "emu",
            &r,
            &[("emulator.json", report)],
            std::slice::from_ref(&flent),
        )
        .unwrap();
        assert_eq!(w.files.len(), 6);
        assert_eq!(w.kept, [dir.join(UDP_CSV)]);
        let w = write_output_set(&dir, "sim", &r, &[], &[]).unwrap();
        assert!(!dir.join("emulator.json").exists());
        assert!(!flent.exists());
        assert_eq!(fs::read_to_string(dir.join(UDP_CSV)).unwrap(), "mine\n");
        assert_eq!(w.kept, [dir.join(UDP_CSV)]);
        // No manifest (a directory of an older version): nothing is removed.
        fs::remove_file(dir.join(MANIFEST)).unwrap();
        fs::write(dir.join(TRACE_CSV), "old\n").unwrap();
        let w = write_output_set(&dir, "sim", &r, &[], &[]).unwrap();
        assert_eq!(w.kept, [dir.join(TRACE_CSV), dir.join(UDP_CSV)]);
        assert!(dir.join(TRACE_CSV).exists());
        fs::remove_dir_all(&dir).unwrap();
    }

    /// Temporary files of a process that no longer runs (killed mid-write) are removed by the
    /// next write into the directory; those of a running process, and other hidden files, are
    /// kept.
    #[test]
    fn dead_processes_temporary_files_are_removed() {
        let dir = std::env::temp_dir().join(format!("cclab-output-dead-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let dead = dir.join(".flows.csv.tmp-999999999-3");
        let live = dir.join(format!(".flows.csv.tmp-{}-77", std::process::id()));
        let other = dir.join(".keep.me");
        for f in [&dead, &live, &other] {
            fs::write(f, "x").unwrap();
        }
        write_outputs(&dir, "demo", &sample_results()).unwrap();
        assert!(!dead.exists());
        assert!(live.exists() && other.exists());
        fs::remove_dir_all(&dir).unwrap();
    }
}
