//! The run store: one file per run, written atomically with a checksum, and a manifest.
//!
//! Contract: `<dir>/runs/<id>.json` holds one [`RunRecord`]: a header line
//! `cclab-run <format> sha256=<hex>` followed by the record as JSON; the checksum covers exactly
//! the bytes after the header line. Files are written to a temporary name in the same directory
//! and renamed, so a reader (or a study interrupted by Ctrl-C or `kill -9`) only ever sees
//! complete files. There is no fsync: a process that dies leaves its written data to the kernel,
//! and a file that a power failure empties or cuts short fails its checksum and is redone;
//! leftover temporary files of processes that no longer run are removed by [`Store::open`]
//! (another cclab writing into the same store keeps its own). Reading verifies header, checksum,
//! format, JSON, id and the record's consistency ([`RunRecord::check`]), and reports what is
//! wrong instead of panicking. A record is at most [`MAX_STORE_FILE_BYTES`], the most a read
//! accepts: [`Store::write`] refuses a larger one (an error that stops the study, not a record
//! that every resume would find unreadable and redo). [`merge`] copies every valid run of shard
//! stores into one store.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::hex;
use crate::input::{MAX_STORE_FILE_BYTES, read_bytes};
use crate::record::{RECORD_FORMAT, RunRecord};

/// First word of a run file's header line.
pub const HEADER: &str = "cclab-run";

/// A study's output directory.
#[derive(Clone, Debug)]
pub struct Store {
    dir: PathBuf,
}

/// What a run file holds.
#[derive(Clone, Debug, PartialEq)]
pub enum RunState {
    /// A valid record.
    Valid,
    /// No file.
    Missing,
    /// A file that is not a valid record of this run; the reason.
    Corrupt(String),
}

/// Write `bytes` to `path` atomically: a temporary file in the same directory, then rename (no
/// fsync; see the module documentation).
///
/// # Errors
/// Any I/O error; the temporary file is removed on failure.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomic_with(path, |w| w.write_all(bytes))
}

/// As [`write_atomic`], with the content written by `write` (buffered) instead of held in
/// memory.
///
/// # Errors
/// Any I/O error, also one `write` returns; the temporary file is removed on failure.
pub fn write_atomic_with(
    path: &Path,
    write: impl FnOnce(&mut dyn io::Write) -> io::Result<()>,
) -> io::Result<()> {
    // Created exclusively (`.NAME.tmp-PID-N`), never through a file or link planted at its
    // name.
    let (tmp, file) = crate::output::create_temp_beside(path)?;
    let result = (|| {
        let mut f = io::BufWriter::new(file);
        write(&mut f)?;
        f.into_inner().map_err(io::IntoInnerError::into_error)?;
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Whether `name` is a temporary file (`.NAME.tmp-PID` or `.NAME.tmp-PID-N`, as
/// [`crate::output::create_temp_beside`] makes them for [`write_atomic`], the Flent writer and
/// the result files, and earlier versions did) of a process that no longer runs: such a
/// file is a leftover of an interrupted write and can be removed. Temporary files of a running
/// process (another cclab working on the same directory) are not leftovers.
#[must_use]
pub fn is_dead_leftover(name: &str) -> bool {
    if !name.starts_with('.') {
        return false;
    }
    let Some((_, rest)) = name.rsplit_once(".tmp-") else {
        return false;
    };
    rest.split('-')
        .next()
        .and_then(|p| p.parse::<u32>().ok())
        .is_some_and(|pid| !process_alive(pid))
}

/// Whether process `pid` runs (where `/proc` tells; elsewhere only this process counts).
fn process_alive(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    let proc = Path::new("/proc");
    proc.join("self").exists() && proc.join(pid.to_string()).exists()
}

/// A record as stored: header line + JSON.
#[must_use]
pub fn encode(rec: &RunRecord) -> Vec<u8> {
    encode_within(rec, u64::MAX).expect("records serialise (plain data)")
}

/// [`encode`] if the stored bytes are at most `limit`; else an error
/// ([`io::ErrorKind::InvalidData`]) without ever holding more than `limit` bytes.
///
/// # Errors
/// The record takes more than `limit` bytes.
pub fn encode_within(rec: &RunRecord, limit: u64) -> io::Result<Vec<u8>> {
    /// A buffer that refuses to grow past `cap` bytes.
    struct Capped {
        buf: Vec<u8>,
        cap: u64,
    }
    impl io::Write for Capped {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            if self.buf.len() as u64 + b.len() as u64 > self.cap {
                return Err(io::Error::from(io::ErrorKind::FileTooLarge));
            }
            self.buf.extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let header_len = |sum: &str| format!("{HEADER} {RECORD_FORMAT} sha256={sum}\n").len() as u64;
    // The header's length does not depend on the checksum's value, only on its length.
    let cap = limit.saturating_sub(header_len(&hex(&[0; 32])));
    let mut body = Capped {
        buf: Vec::new(),
        cap,
    };
    serde_json::to_writer(&mut body, rec).map_err(|e| {
        if e.is_io() {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "the record of run {} ({}, repetition {}) is larger than the {limit} bytes a \
                     store may hold: its series are too long; use a longer `sample_interval`, \
                     fewer flows or fewer probes",
                    rec.id, rec.config, rec.rep
                ),
            )
        } else {
            io::Error::new(io::ErrorKind::InvalidData, e.to_string())
        }
    })?;
    let body = body.buf;
    let sum = hex(&Sha256::digest(&body));
    let mut out = format!("{HEADER} {RECORD_FORMAT} sha256={sum}\n").into_bytes();
    out.extend_from_slice(&body);
    Ok(out)
}

/// Parse and verify stored bytes of run `id`.
///
/// # Errors
/// Why the bytes are not a valid record of that run.
pub fn decode(bytes: &[u8], id: &str) -> Result<RunRecord, String> {
    let nl = bytes
        .iter()
        .position(|&b| b == b'\n')
        .ok_or(if bytes.is_empty() {
            "the file is empty"
        } else {
            "no header line"
        })?;
    let header = std::str::from_utf8(&bytes[..nl]).map_err(|_| "header is not text")?;
    let body = &bytes[nl + 1..];
    let mut words = header.split(' ');
    if words.next() != Some(HEADER) {
        return Err(format!("header does not start with `{HEADER}`"));
    }
    let format = words.next().ok_or("header has no format")?;
    if format != RECORD_FORMAT.to_string() {
        return Err(format!(
            "record format {format}, this cclab writes {RECORD_FORMAT}"
        ));
    }
    let sum = words
        .next()
        .and_then(|w| w.strip_prefix("sha256="))
        .ok_or("header has no checksum")?;
    let actual = hex(&Sha256::digest(body));
    if actual != sum {
        return Err("checksum mismatch (the file was altered or cut short)".into());
    }
    let rec: RunRecord =
        serde_json::from_slice(body).map_err(|e| format!("not a run record: {e}"))?;
    if rec.id != id {
        return Err(format!("holds run {} instead", rec.id));
    }
    rec.check()
        .map_err(|e| format!("not a consistent run record: {e}"))?;
    Ok(rec)
}

impl Store {
    /// Open (creating) the store at `dir` and remove the temporary files of `runs/` left by
    /// processes that no longer run ([`is_dead_leftover`]): a temporary file of a running
    /// process (another cclab filling the same store) is a write in progress and stays.
    ///
    /// # Errors
    /// If the directories cannot be created or listed.
    pub fn open(dir: impl Into<PathBuf>) -> io::Result<Store> {
        let dir = dir.into();
        fs::create_dir_all(dir.join("runs"))?;
        for e in fs::read_dir(dir.join("runs"))? {
            let e = e?;
            let name = e.file_name();
            let name = name.to_string_lossy();
            if is_dead_leftover(&name) {
                let _ = fs::remove_file(e.path());
            }
        }
        Ok(Store { dir })
    }

    /// The store's directory.
    #[must_use]
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Path of run `id`'s file.
    #[must_use]
    pub fn run_path(&self, id: &str) -> PathBuf {
        self.dir.join("runs").join(format!("{id}.json"))
    }

    /// Store a record (atomically), if it is at most [`MAX_STORE_FILE_BYTES`]: a larger one
    /// could not be read back, and its run would be redone on every resume.
    ///
    /// # Errors
    /// Any I/O error; [`io::ErrorKind::InvalidData`] for a record too large to store.
    pub fn write(&self, rec: &RunRecord) -> io::Result<()> {
        write_atomic(
            &self.run_path(&rec.id),
            &encode_within(rec, MAX_STORE_FILE_BYTES)?,
        )
    }

    /// Read and verify run `id`.
    ///
    /// # Errors
    /// [`RunState::Missing`] or [`RunState::Corrupt`] with the reason.
    pub fn read(&self, id: &str) -> Result<RunRecord, RunState> {
        match read_bytes(&self.run_path(id), MAX_STORE_FILE_BYTES) {
            Ok(bytes) => decode(&bytes, id).map_err(RunState::Corrupt),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Err(RunState::Missing),
            Err(e) => Err(RunState::Corrupt(format!("cannot read: {e}"))),
        }
    }

    /// The state of run `id`'s file.
    #[must_use]
    pub fn state(&self, id: &str) -> RunState {
        match self.read(id) {
            Ok(_) => RunState::Valid,
            Err(s) => s,
        }
    }
}

/// What [`merge`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MergeReport {
    /// Runs copied into the target.
    pub copied: usize,
    /// Runs the target already had with identical bytes.
    pub identical: usize,
    /// Files skipped because they are not valid records: (path, reason).
    pub invalid: Vec<(PathBuf, String)>,
    /// Runs present in two stores with different bytes (a determinism violation): the first
    /// copy is kept.
    pub conflicts: Vec<String>,
}

/// What [`merge`] compares between stores: the study's name and its runs (their ids hash each
/// configuration's spec and seed, so equal lists mean the same design whatever the comments or
/// layout of the study file).
#[derive(serde::Deserialize)]
struct ManifestHead {
    study: String,
    runs: Vec<ManifestRunId>,
}

#[derive(serde::Deserialize)]
struct ManifestRunId {
    id: String,
}

/// The model version a manifest names (`None` in a manifest of a cclab that wrote none).
#[derive(serde::Deserialize)]
struct ManifestModel {
    #[serde(default)]
    model: Option<String>,
}

impl Store {
    /// The cclab whose results the store holds when it is another model than `model`: `model
    /// X`, or `a cclab that wrote no model version` (a manifest without one); `None` for a
    /// new store (no readable manifest) or one of `model`.
    #[must_use]
    pub fn other_model(&self, model: &str) -> Option<String> {
        let bytes = read_bytes(&self.dir.join("manifest.json"), MAX_STORE_FILE_BYTES).ok()?;
        match serde_json::from_slice::<ManifestModel>(&bytes).ok()?.model {
            Some(m) if m == model => None,
            Some(m) => Some(format!("model {m}")),
            None => Some("a cclab that wrote no model version".to_owned()),
        }
    }
}

fn read_manifest(dir: &Path) -> Result<ManifestHead, String> {
    let path = dir.join("manifest.json");
    let bytes = read_bytes(&path, MAX_STORE_FILE_BYTES).map_err(|e| {
        format!(
            "{} is not a study store written by `cclab study` ({}: {e})",
            dir.display(),
            path.display()
        )
    })?;
    serde_json::from_slice(&bytes)
        .map_err(|e| format!("{}: not a study manifest: {e}", path.display()))
}

/// Why `path`, named like a run, cannot be one, by what it is: a directory, a link to a device,
/// FIFO or socket, a link that leads nowhere; `None` for a regular file (its contents decide).
fn not_a_run_file(path: &Path) -> Option<String> {
    let target = fs::read_link(path).ok();
    let what = match fs::metadata(path) {
        Err(e) if target.is_some() => format!("leads nowhere: {e}"),
        Err(e) => return Some(format!("cannot read: {e}")),
        Ok(m) if m.is_file() => return None,
        Ok(m) if m.is_dir() => "a directory".to_owned(),
        Ok(_) => "a device, FIFO or socket".to_owned(),
    };
    let what = match target {
        Some(t) => format!("a link to {} ({what})", t.display()),
        None => what,
    };
    Some(format!("{what}, not a run file (runs are regular files)"))
}

/// Copy every valid run of the `shards` stores (and their manifest) into `into`.
///
/// Every shard (and `into`, if it already holds a study) must be a store of the same study
/// definition, judged by the manifest's study name and run ids; run files that are not runs of
/// that study are skipped and reported in [`MergeReport::invalid`] with the reason.
///
/// # Errors
/// I/O errors on the directories themselves; a shard without a readable manifest or of another
/// study ([`io::ErrorKind::InvalidData`], nothing copied). Invalid run files are reported, not
/// fatal; conflicts are reported in [`MergeReport::conflicts`] for the caller to fail on.
pub fn merge(into: &Path, shards: &[PathBuf]) -> io::Result<MergeReport> {
    let invalid = |m: String| io::Error::new(io::ErrorKind::InvalidData, m);
    let mut reference: Option<(PathBuf, ManifestHead)> = if into.join("manifest.json").exists() {
        Some((into.to_owned(), read_manifest(into).map_err(invalid)?))
    } else {
        None
    };
    for shard in shards {
        let m = read_manifest(shard).map_err(invalid)?;
        match &reference {
            None => reference = Some((shard.clone(), m)),
            Some((rdir, r)) => {
                let same_runs = r.runs.len() == m.runs.len()
                    && r.runs.iter().zip(&m.runs).all(|(a, b)| a.id == b.id);
                if r.study != m.study || !same_runs {
                    return Err(invalid(format!(
                        "{} holds study `{}` with {} runs, {} study `{}` with {} runs of another \
                         definition: only shards of one study definition can be merged",
                        shard.display(),
                        m.study,
                        m.runs.len(),
                        rdir.display(),
                        r.study,
                        r.runs.len()
                    )));
                }
            }
        }
    }
    let Some((_, study)) = &reference else {
        return Ok(MergeReport::default());
    };
    let ids: std::collections::HashSet<&str> = study.runs.iter().map(|r| r.id.as_str()).collect();
    let target = Store::open(into)?;
    let mut report = MergeReport::default();
    for shard in shards {
        let runs = shard.join("runs");
        let mut entries: Vec<PathBuf> = fs::read_dir(&runs)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", runs.display())))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        entries.sort();
        for path in entries {
            let Some(id) = path.file_stem().and_then(|s| s.to_str()) else {
                continue;
            };
            if !ids.contains(id) {
                report.invalid.push((
                    path.clone(),
                    format!("not a run of study `{}`", study.study),
                ));
                continue;
            }
            if let Some(why) = not_a_run_file(&path) {
                report.invalid.push((path.clone(), why));
                continue;
            }
            let bytes = match read_bytes(&path, MAX_STORE_FILE_BYTES) {
                Ok(b) => b,
                Err(e) => {
                    report
                        .invalid
                        .push((path.clone(), format!("cannot read: {e}")));
                    continue;
                }
            };
            if let Err(why) = decode(&bytes, id) {
                report.invalid.push((path.clone(), why));
                continue;
            }
            let dest = target.run_path(id);
            match read_bytes(&dest, MAX_STORE_FILE_BYTES) {
                Ok(existing) if existing == bytes => report.identical += 1,
                Ok(existing) if decode(&existing, id).is_ok() => {
                    report.conflicts.push(id.to_owned());
                }
                _ => {
                    write_atomic(&dest, &bytes)?;
                    report.copied += 1;
                }
            }
        }
        let manifest = shard.join("manifest.json");
        let dest = into.join("manifest.json");
        if manifest.exists() && !dest.exists() {
            write_atomic(&dest, &read_bytes(&manifest, MAX_STORE_FILE_BYTES)?)?;
        }
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::RECORD_BYTES_PER_SAMPLE_ROW;
    use crate::scenario::MAX_SAMPLE_ROWS;

    /// A record of `flows` TCP series of `n` samples, every number the longest JSON `f64`.
    fn worst_record(flows: usize, n: usize) -> RunRecord {
        let v = f64::from_bits(0x8010_0000_0000_0000); // -2.2250738585072014e-308
        let col = || vec![v; n];
        let opt = || vec![Some(v); n];
        let series: Vec<serde_json::Value> = (0..flows)
            .map(|i| {
                serde_json::json!({
                    "name": format!("TCP upload {i}"), "kind": "tcp_upload", "dscp": 0,
                    "controller": "cubic", "units": "Mbits/s", "values": opt(),
                    "raw": {"t": col(), "val": col(), "tcp_cwnd": opt(), "tcp_rtt": opt(),
                            "tcp_pacing_rate": opt(), "tcp_delivery_rate": opt()}
                })
            })
            .collect();
        let rec = serde_json::json!({
            "format": RECORD_FORMAT, "id": "r", "study": "s", "config": "c", "levels": [],
            "rep": 0, "seed": 1, "spec": {}, "test": null, "metrics": {}, "x_values": col(),
            "series": series,
            "capacity": [{"link": "bottleneck", "values": opt()}],
            "sim": {"duration_s": 1.0, "events": 1, "data_packets_sent": 1}
        });
        let rec: RunRecord = serde_json::from_value(rec).unwrap();
        assert_eq!(rec.check(), Ok(()));
        rec
    }

    /// The sample-row bound and the store's file bound agree: a row takes at most
    /// `RECORD_BYTES_PER_SAMPLE_ROW` bytes (measured on the longest numbers JSON writes), so
    /// `MAX_SAMPLE_ROWS` rows fit in `MAX_STORE_FILE_BYTES` (with room for the rest of a record).
    #[test]
    fn the_sample_row_bound_fits_the_store() {
        let len = |flows, n| encode(&worst_record(flows, n)).len() as u64;
        // A sample time adds `flows + 1` rows (the flows and the monitored queue).
        for flows in [1, 3, 50] {
            let rows = 1000 * (flows as u64 + 1);
            let per_row = (len(flows, 1001) - len(flows, 1)).div_ceil(rows);
            assert!(
                per_row <= RECORD_BYTES_PER_SAMPLE_ROW,
                "{flows} flows: {per_row} B"
            );
        }
        let rows_bytes = MAX_SAMPLE_ROWS * RECORD_BYTES_PER_SAMPLE_ROW;
        assert!(rows_bytes <= MAX_STORE_FILE_BYTES);
        // Not needlessly strict either: within one row of the bound.
        assert!(MAX_STORE_FILE_BYTES - rows_bytes < RECORD_BYTES_PER_SAMPLE_ROW);
    }

    /// A record larger than the limit is refused with a message that says why, before more
    /// than the limit is held; one at the limit is written as `encode` writes it.
    #[test]
    fn a_record_over_the_bound_is_refused_before_it_is_built() {
        let rec = worst_record(2, 500);
        let full = encode(&rec);
        let exact = full.len() as u64;
        assert_eq!(encode_within(&rec, exact).unwrap(), full);
        let e = encode_within(&rec, exact - 1).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        let msg = e.to_string();
        assert!(
            msg.contains("larger than the") && msg.contains("sample_interval"),
            "{msg}"
        );
        assert!(encode_within(&rec, 10).is_err());
    }

    #[test]
    fn leftovers_of_dead_processes_only() {
        let me = std::process::id();
        assert!(!is_dead_leftover(&format!(".a.flent.gz.tmp-{me}")));
        assert!(!is_dead_leftover(&format!(".r.json.tmp-{me}-ThreadId(2)")));
        // Above Linux's largest pid (2^22): never a running process.
        assert!(is_dead_leftover(".a.flent.gz.tmp-999999999"));
        assert!(is_dead_leftover(".r.json.tmp-999999999-ThreadId(2)"));
        for not_tmp in ["a.flent.gz.tmp-999999999", ".a.svg", ".a.tmp-x", "plot.svg"] {
            assert!(!is_dead_leftover(not_tmp), "{not_tmp}");
        }
    }

    /// Opening a store removes the temporary files of dead processes only: those of this
    /// process and of another running one (the parent, e.g. cargo) are writes in progress.
    #[cfg(unix)]
    #[test]
    fn open_keeps_temporary_files_of_running_processes() {
        let dir = std::env::temp_dir().join(format!("cclab-store-open-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("runs")).unwrap();
        let parent = std::os::unix::process::parent_id();
        let me = std::process::id();
        let live = [
            format!(".a.json.tmp-{parent}-ThreadId(3)"),
            format!(".b.json.tmp-{me}-ThreadId(1)"),
        ];
        let dead = ".c.json.tmp-999999999-ThreadId(2)";
        for name in live.iter().map(String::as_str).chain([dead]) {
            fs::write(dir.join("runs").join(name), b"partial").unwrap();
        }
        Store::open(&dir).unwrap();
        for name in &live {
            assert!(dir.join("runs").join(name).exists(), "{name} was removed");
        }
        assert!(!dir.join("runs").join(dead).exists(), "{dead} was kept");
        fs::remove_dir_all(&dir).unwrap();
    }
}
