//! The run store: one file per run, written atomically with a checksum, and a manifest.
//!
//! Contract: `<dir>/runs/<id>.json` holds one [`RunRecord`]: a header line
//! `cclab-run <format> sha256=<hex>` followed by the record as JSON; the checksum covers exactly
//! the bytes after the header line. Files are written to a temporary name in the same directory
//! and renamed, so a reader (or a study interrupted by Ctrl-C or `kill -9`) only ever sees
//! complete files. There is no fsync: a process that dies leaves its written data to the kernel,
//! and a file that a power failure empties or cuts short fails its checksum and is redone;
//! leftover temporary files are removed by [`Store::open`]. Reading verifies header, checksum,
//! format, JSON, id and the record's consistency ([`RunRecord::check`]), and reports what is
//! wrong instead of panicking. [`merge`] copies every valid run of shard stores into one store.

use std::fs;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::hex;
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
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let tmp = dir.join(format!(
        ".{name}.tmp-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let result = (|| {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        drop(f);
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// A record as stored: header line + JSON.
#[must_use]
pub fn encode(rec: &RunRecord) -> Vec<u8> {
    let body = serde_json::to_vec(rec).expect("records serialise (plain data)");
    let sum = hex(&Sha256::digest(&body));
    let mut out = format!("{HEADER} {RECORD_FORMAT} sha256={sum}\n").into_bytes();
    out.extend_from_slice(&body);
    out
}

/// Parse and verify stored bytes of run `id`.
///
/// # Errors
/// Why the bytes are not a valid record of that run.
pub fn decode(bytes: &[u8], id: &str) -> Result<RunRecord, String> {
    let nl = bytes
        .iter()
        .position(|&b| b == b'\n')
        .ok_or("no header line")?;
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
    /// Open (creating) the store at `dir` and remove temporary files left by an interrupted
    /// run.
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
            if name.starts_with('.') && name.contains(".tmp-") {
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

    /// Store a record (atomically).
    ///
    /// # Errors
    /// Any I/O error.
    pub fn write(&self, rec: &RunRecord) -> io::Result<()> {
        write_atomic(&self.run_path(&rec.id), &encode(rec))
    }

    /// Read and verify run `id`.
    ///
    /// # Errors
    /// [`RunState::Missing`] or [`RunState::Corrupt`] with the reason.
    pub fn read(&self, id: &str) -> Result<RunRecord, RunState> {
        match fs::read(self.run_path(id)) {
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

/// Copy every valid run of the `shards` stores (and the first manifest found) into `into`.
///
/// # Errors
/// I/O errors on the directories themselves; invalid run files are reported, not fatal.
pub fn merge(into: &Path, shards: &[PathBuf]) -> io::Result<MergeReport> {
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
            let bytes = fs::read(&path)?;
            if let Err(why) = decode(&bytes, id) {
                report.invalid.push((path.clone(), why));
                continue;
            }
            let dest = target.run_path(id);
            match fs::read(&dest) {
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
            write_atomic(&dest, &fs::read(&manifest)?)?;
        }
    }
    Ok(report)
}
