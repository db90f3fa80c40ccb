//! Export of a [`RunRecord`] as a Flent data file (`.flent.gz`), so that Flent itself can re-plot
//! and summarise a simulated run (`flent -i FILE -p all_scaled`, `flent -i FILE -f summary`).
//!
//! Contract (every rule cites `flent-format.md` §2.4, which summarises Flent's
//! `doc/data-format.rst` and `flent/resultset.py`):
//!
//! - Only runs of a Flent-equivalent test can be exported: a record whose `test` is `None` is a
//!   [`FlentError::NotAFlentTest`], never a panic. Every other inconsistency Flent would trip over
//!   (a series not as long as `x_values`, raw columns of unequal length, duplicate series names,
//!   no series at all) is an error too, found before anything is written.
//! - The JSON is file format version 4 (`FILEFORMAT_VERSION` in `flent/resultset.py`), with the
//!   top-level keys `version`, `x_values`, `results`, `raw_values` and `metadata`
//!   (`doc/data-format.rst`, "The top-level object keys").
//! - `results` holds each series on the `x_values` grid, `null` for gaps, and is exactly as long
//!   as `x_values` (Flent asserts this on load; `flent-format.md` §2.4).
//! - `raw_values` holds per series one object per sample: `t` in absolute epoch seconds
//!   (`T0 + t`), `val`, plus `seq` for probes (as Flent's ping runner records) and the socket
//!   statistics `tcp_cwnd` (segments), `tcp_rtt` (ms), `tcp_pacing_rate` and `tcp_delivery_rate`
//!   for TCP series (the raw keys Flent's `tcp_stats.inc` plots read). Flent's `SsRunner.parse_val`
//!   (`flent/runners.py`) stores both rates in **Mbit/s** (it parses `ss`'s `…Mbps`/`…Kbps`/`…bps`
//!   into Mbit/s, and the `tcp_pacing` plot labels its axis `Mbps`), so the record's bit/s are
//!   divided by 10⁶. A socket statistic that is `None` in the record is left out of its sample
//!   (Flent's `raw_series` skips samples without the key), and so is a non-finite `val`.
//!   Non-finite grid values become `null`.
//! - `metadata` carries the keys Flent requires to exist (`NAME`, `TITLE`, `LENGTH`, `STEP_SIZE`,
//!   `HOST`, `LOCAL_HOST`; `flent-format.md` §2.4 item 2) and the recommended ones (`TIME`, `T0`,
//!   `TOTAL_LENGTH`, `HOSTS`, `IP_VERSION` 4, `FLENT_VERSION`, `NOTE`, `TEST_PARAMETERS`,
//!   `DATA_FILENAME` = [`flent_file_name`], which Flent's combine plots group by), plus
//!   `SERIES_META` with each series' `UNITS` (and `CONG_CONTROL` of TCP series, the key Flent's
//!   netperf runner records in `flent/runners.py`). Times are ISO-8601 UTC strings
//!   `YYYY-MM-DDTHH:MM:SS.ffffffZ`, the form Flent's `util.parse_date` reads as UTC.
//! - `TIME` and `T0` both equal the chosen start time; [`DEFAULT_T0_EPOCH_S`] (a fixed date) keeps
//!   the output a function of the record alone, in line with the record's own contract.
//! - [`write_flent_gz`] writes the JSON with sorted keys and an indent of 2 (Flent's own
//!   `json.dumps(..., indent=2, sort_keys=True)` in `flent/resultset.py`), gzip-compressed with a
//!   zero header mtime and no file name, so the bytes depend on the record only; the file appears
//!   atomically (a temporary file in the same directory, then a rename).

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use flate2::{Compression, GzBuilder};
use serde_json::{Map, Value, json};

use crate::record::{RawSamples, RunRecord, SeriesRecord};

/// The default start time of an exported run: 2026-01-01T00:00:00Z, in s since the Unix epoch.
/// Fixed so that the same record always gives the same file.
pub const DEFAULT_T0_EPOCH_S: f64 = 1_767_225_600.0;

/// The Flent data file format version written (`FILEFORMAT_VERSION` in `flent/resultset.py`).
pub const FILE_FORMAT_VERSION: u32 = 4;

/// The `FLENT_VERSION` recorded in the metadata: a released Flent version whose files current
/// Flent reads without conversion.
pub const FLENT_VERSION: &str = "2.1.1";

/// The IP version recorded in the metadata (`IP_VERSION`).
pub const IP_VERSION: u32 = 4;

/// Flent's data file suffix (`SUFFIX` in `flent/resultset.py`).
pub const FLENT_SUFFIX: &str = ".flent.gz";

/// Seconds in a day.
const DAY_S: i64 = 86_400;

/// First epoch second Flent's (Python's) date parser cannot read: 10000-01-01T00:00:00Z.
const YEAR_10000_EPOCH_S: f64 = 253_402_300_800.0;

/// Why a record could not be exported.
#[derive(Debug, thiserror::Error)]
pub enum FlentError {
    /// The run is not a run of a Flent test (`RunRecord::test` is `None`).
    #[error("run {id} is not a Flent-equivalent test run (it has no test info); nothing to export")]
    NotAFlentTest {
        /// The run id.
        id: String,
    },
    /// The record's contents cannot form a valid Flent file.
    #[error("run {id}: {problem}")]
    Invalid {
        /// The run id.
        id: String,
        /// What is wrong, naming the series or column.
        problem: String,
    },
    /// The start time is not a finite time in years 1970..=9999.
    #[error("start time {0} s is not a finite epoch time between 1970 and 9999")]
    BadStartTime(f64),
    /// Writing the file failed.
    #[error("cannot write {path}: {source}")]
    Io {
        /// The file (or temporary file) being written.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
}

/// The record as a Flent version-4 data file (the JSON inside a `.flent.gz`), with its run
/// starting at `t0_epoch_s` (Flent's `T0`, s since the Unix epoch; normally
/// [`DEFAULT_T0_EPOCH_S`]). See the module documentation for the layout and units.
///
/// # Errors
/// [`FlentError::NotAFlentTest`] when the record has no test info, [`FlentError::Invalid`] when
/// its series are inconsistent, [`FlentError::BadStartTime`] for an unusable `t0_epoch_s`.
pub fn to_flent_json(rec: &RunRecord, t0_epoch_s: f64) -> Result<Value, FlentError> {
    let test = rec
        .test
        .as_ref()
        .ok_or_else(|| FlentError::NotAFlentTest { id: rec.id.clone() })?;
    let t0_iso = iso8601_utc(t0_epoch_s)?;
    validate(rec)?;

    let mut results = Map::new();
    let mut raw_values = Map::new();
    let mut series_meta = Map::new();
    for s in &rec.series {
        let grid: Vec<Value> = s.values.iter().map(|v| num_or_null(*v)).collect();
        results.insert(s.name.clone(), Value::Array(grid));
        raw_values.insert(s.name.clone(), raw_samples(s, t0_epoch_s));
        let mut meta = Map::new();
        meta.insert("UNITS".into(), Value::String(s.units.clone()));
        if let (true, Some(cc)) = (s.kind.is_tcp(), &s.controller) {
            meta.insert("CONG_CONTROL".into(), Value::String(cc.clone()));
        }
        series_meta.insert(s.name.clone(), Value::Object(meta));
    }

    let metadata = json!({
        "NAME": test.name,
        "TITLE": test.title,
        "TIME": t0_iso,
        "T0": t0_iso,
        "LENGTH": test.length_s,
        "TOTAL_LENGTH": test.total_length_s,
        "STEP_SIZE": test.step_s,
        "HOST": test.hosts.first(),
        "HOSTS": test.hosts,
        "LOCAL_HOST": test.local_host,
        "IP_VERSION": IP_VERSION,
        "FLENT_VERSION": FLENT_VERSION,
        "DATA_FILENAME": flent_file_name(rec),
        "NOTE": format!(
            "cclab study {} config '{}' rep {} seed {} run {}",
            rec.study, rec.config, rec.rep, rec.seed, rec.id
        ),
        "TEST_PARAMETERS": {},
        "SERIES_META": series_meta,
    });

    Ok(json!({
        "version": FILE_FORMAT_VERSION,
        "x_values": rec.x_values,
        "results": results,
        "raw_values": raw_values,
        "metadata": metadata,
    }))
}

/// Write the record as a gzip-compressed Flent data file at `path`, starting at
/// [`DEFAULT_T0_EPOCH_S`]: sorted keys, indent 2, gzip mtime 0 and no file name in the header, so
/// equal records give equal bytes. The file is written to a temporary file in the same
/// directory and renamed into place.
///
/// # Errors
/// Those of [`to_flent_json`], and [`FlentError::Io`] when the file cannot be written.
pub fn write_flent_gz(rec: &RunRecord, path: &Path) -> Result<(), FlentError> {
    let doc = sorted(to_flent_json(rec, DEFAULT_T0_EPOCH_S)?);
    let json = serde_json::to_vec_pretty(&doc).map_err(|e| FlentError::Invalid {
        id: rec.id.clone(),
        problem: format!("cannot serialise the Flent JSON: {e}"),
    })?;

    let io_err = |p: &Path| {
        let p = p.to_path_buf();
        move |source| FlentError::Io { path: p, source }
    };
    // Created exclusively, never through a file or link planted at its name.
    let (tmp, file) = crate::output::create_temp_beside(path).map_err(io_err(path))?;

    let written = (|| -> io::Result<()> {
        let mut gz = GzBuilder::new()
            .mtime(0)
            .write(file, Compression::default());
        gz.write_all(&json)?;
        let file = gz.finish()?;
        file.sync_all()
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(io_err(&tmp)(e));
    }
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io_err(path)(e)
    })
}

/// The file name for a record's Flent file, also recorded as the metadata's `DATA_FILENAME`:
/// `<test>-<study>-<config>-<rep>.flent.gz`, each part with every character other than an ASCII
/// letter or digit replaced by `_` (Flent's title rule in `_gen_filename`, `flent/resultset.py`,
/// here also applied to `-`), the study cut to 40 and the configuration label to 160 characters
/// (Flent keeps names within 250). A record without test info is named `run-…`.
///
/// Why not Flent's `<test>-<date>.<title>` (`doc/data-format.rst`): with a fixed `T0` the date
/// says nothing, and Flent's `*_combine` plots group files by `DATA_FILENAME` after dropping the
/// longest common prefix (up to a `-`) and the first standalone number (`Combiner.combine` in
/// `flent/combiners.py`). With this scheme that leaves exactly the configuration label, so
/// `flent -i … -p box_combine` over all repetitions of a study draws one box per configuration,
/// labelled by it. Names are unique per (study, configuration, repetition).
#[must_use]
pub fn flent_file_name(rec: &RunRecord) -> String {
    let test = rec.test.as_ref().map_or("run", |t| t.name.as_str());
    let part = |s: &str, max: usize| -> String {
        s.chars()
            .take(max)
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect()
    };
    format!(
        "{}-{}-{}-{}{FLENT_SUFFIX}",
        part(test, 40),
        part(&rec.study, 40),
        part(&rec.config, 160),
        rec.rep
    )
}

/// ISO-8601 UTC time `YYYY-MM-DDTHH:MM:SS.ffffffZ` of an epoch time, rounded to the microsecond
/// (the form Flent writes and its `util.parse_date` reads as UTC).
///
/// # Errors
/// [`FlentError::BadStartTime`] unless `0 <= epoch_s` and the time is before the year 10000.
pub fn iso8601_utc(epoch_s: f64) -> Result<String, FlentError> {
    if !epoch_s.is_finite() || !(0.0..YEAR_10000_EPOCH_S).contains(&epoch_s) {
        return Err(FlentError::BadStartTime(epoch_s));
    }
    let (days, secs, micros) = split_epoch(epoch_s);
    let (y, m, d) = civil_from_days(days);
    Ok(format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{micros:06}Z",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    ))
}

/// Split an epoch time into (days since 1970-01-01, seconds of the day, microseconds).
fn split_epoch(epoch_s: f64) -> (i64, i64, i64) {
    // i64 µs cover years up to 9999 with room to spare; an f64 epoch time is exact to the
    // microsecond until about 2255 (2^53 µs), later ones are as exact as the f64 itself.
    let total_us = (epoch_s * 1e6).round() as i64;
    let secs = total_us.div_euclid(1_000_000);
    let micros = total_us.rem_euclid(1_000_000);
    (secs.div_euclid(DAY_S), secs.rem_euclid(DAY_S), micros)
}

/// The proleptic Gregorian date (year, month 1..=12, day 1..=31) of a day count since
/// 1970-01-01, by the era-based "days from civil" inverse described by H. Hinnant
/// ("chrono-Compatible Low-Level Date Algorithms").
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    // Shift the epoch to 0000-03-01 so leap days fall at the end of a (March-based) year.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097); // day of era, 0..=146096
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // year of era, 0..=399
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // day of the March-based year, 0..=365
    let mp = (5 * doy + 2) / 153; // March-based month, 0..=11
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = (if mp < 10 { mp + 3 } else { mp - 9 }) as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// Check what Flent relies on: equal lengths, unique names, at least one series.
fn validate(rec: &RunRecord) -> Result<(), FlentError> {
    let bad = |problem: String| FlentError::Invalid {
        id: rec.id.clone(),
        problem,
    };
    if rec.series.is_empty() {
        // Flent treats a file with empty `raw_values` as empty and plots nothing
        // (flent-format.md §2.4 item 3).
        return Err(bad("the run has no series".into()));
    }
    if let Some(x) = rec.x_values.iter().find(|x| !x.is_finite()) {
        return Err(bad(format!("x_values holds the non-finite value {x}")));
    }
    let mut names: Vec<&str> = rec.series.iter().map(|s| s.name.as_str()).collect();
    names.sort_unstable();
    if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
        return Err(bad(format!("two series are named `{}`", w[0])));
    }
    for s in &rec.series {
        if s.values.len() != rec.x_values.len() {
            return Err(bad(format!(
                "series `{}` has {} values on a grid of {} x_values",
                s.name,
                s.values.len(),
                rec.x_values.len()
            )));
        }
        let r = &s.raw;
        let n = r.t.len();
        if let Some(t) = r.t.iter().find(|t| !t.is_finite()) {
            return Err(bad(format!(
                "series `{}` has a raw sample at non-finite time {t}",
                s.name
            )));
        }
        if let Some((column, len)) = r.mismatched_column() {
            return Err(bad(format!(
                "series `{}`: raw column `{column}` has {len} entries for {n} samples",
                s.name
            )));
        }
    }
    Ok(())
}

/// The `raw_values` list of one series (see the module documentation for keys and units).
fn raw_samples(s: &SeriesRecord, t0_epoch_s: f64) -> Value {
    let r: &RawSamples = &s.raw;
    let tcp = s.kind.is_tcp();
    let opt = |col: &[Option<f64>], i: usize, scale: f64| -> Option<Value> {
        col.get(i)
            .copied()
            .flatten()
            .filter(|v| v.is_finite())
            .map(|v| num_or_null(Some(v * scale)))
    };
    let samples = (0..r.len())
        .map(|i| {
            let mut o = Map::new();
            o.insert("t".into(), num_or_null(Some(t0_epoch_s + r.t[i])));
            if r.val[i].is_finite() {
                o.insert("val".into(), num_or_null(Some(r.val[i])));
            }
            if let Some(seq) = r.seq.get(i) {
                o.insert("seq".into(), Value::from(*seq));
            }
            if tcp {
                // Flent keeps cwnd in segments and rtt in ms as `ss` prints them, and both rates
                // in Mbit/s (SsRunner.parse_val in flent/runners.py); the record has bit/s.
                let cols = [
                    ("tcp_cwnd", &r.tcp_cwnd, 1.0),
                    ("tcp_rtt", &r.tcp_rtt, 1.0),
                    ("tcp_pacing_rate", &r.tcp_pacing_rate, 1e-6),
                    ("tcp_delivery_rate", &r.tcp_delivery_rate, 1e-6),
                ];
                for (key, col, scale) in cols {
                    if let Some(v) = opt(col, i, scale) {
                        o.insert(key.into(), v);
                    }
                }
            }
            Value::Object(o)
        })
        .collect();
    Value::Array(samples)
}

/// A JSON number, or `null` for `None` and non-finite values (JSON has no NaN or infinity).
fn num_or_null(v: Option<f64>) -> Value {
    v.and_then(serde_json::Number::from_f64)
        .map_or(Value::Null, Value::Number)
}

/// The value with every object's keys in sorted order (Flent dumps with `sort_keys=True`),
/// whatever map type `serde_json` was built with.
fn sorted(v: Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut entries: Vec<(String, Value)> = m.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(entries.into_iter().map(|(k, v)| (k, sorted(v))).collect())
        }
        Value::Array(a) => Value::Array(a.into_iter().map(sorted).collect()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{RECORD_FORMAT, SeriesKind, SimInfo, TestInfo};
    use std::collections::BTreeMap;

    fn series(name: &str, kind: SeriesKind, values: Vec<Option<f64>>) -> SeriesRecord {
        let tcp = kind.is_tcp();
        let mut raw = RawSamples::default();
        for (i, v) in values.iter().enumerate() {
            if let Some(v) = v {
                raw.t.push(i as f64 * 0.2);
                raw.val.push(*v);
                if tcp {
                    raw.tcp_cwnd.push(Some(20.0 + i as f64));
                    raw.tcp_rtt.push(Some(41.5));
                    raw.tcp_pacing_rate.push(Some(25_000_000.0));
                    raw.tcp_delivery_rate.push(None);
                } else {
                    raw.seq.push(i as u64 + 1);
                }
            }
        }
        SeriesRecord {
            name: name.into(),
            kind,
            dscp: 0,
            controller: tcp.then(|| "cubic".to_owned()),
            units: if tcp { "Mbits/s" } else { "ms" }.into(),
            values,
            raw,
        }
    }

    fn record() -> RunRecord {
        RunRecord {
            format: RECORD_FORMAT,
            id: "0123456789abcdef0123".into(),
            study: "unit".into(),
            config: "test=tcp_upload cc=cubic".into(),
            levels: vec![],
            rep: 0,
            seed: 7,
            spec: Value::Null,
            test: Some(TestInfo {
                name: "tcp_upload".into(),
                length_s: 0.4,
                delay_s: 0.2,
                step_s: 0.2,
                total_length_s: 0.8,
                hosts: vec!["sim-server".into()],
                local_host: "sim-client".into(),
                title: "sim: cubic".into(),
            }),
            metrics: BTreeMap::new(),
            x_values: vec![0.0, 0.2, 0.4, 0.6, 0.8],
            series: vec![
                series(
                    "TCP upload",
                    SeriesKind::TcpUpload,
                    vec![None, Some(18.5), Some(19.25), None, None],
                ),
                series(
                    "Ping (ms) ICMP",
                    SeriesKind::PingIcmp,
                    vec![Some(40.0), Some(52.0), None, Some(61.0), Some(40.5)],
                ),
            ],
            capacity: Vec::new(),
            delay: Vec::new(),
            fct: Vec::new(),
            wifi: Vec::new(),
            sim: SimInfo::default(),
        }
    }

    #[test]
    fn shape_and_metadata() {
        let j = to_flent_json(&record(), DEFAULT_T0_EPOCH_S).unwrap();
        assert_eq!(j["version"], 4);
        let n = j["x_values"].as_array().unwrap().len();
        assert_eq!(n, 5);
        let results = j["results"].as_object().unwrap();
        assert_eq!(
            results.keys().collect::<Vec<_>>(),
            ["Ping (ms) ICMP", "TCP upload"]
        );
        for v in results.values() {
            assert_eq!(v.as_array().unwrap().len(), n);
        }
        assert_eq!(j["results"]["TCP upload"][0], Value::Null);
        assert_eq!(j["results"]["TCP upload"][1], 18.5);
        assert_eq!(j["results"]["Ping (ms) ICMP"][2], Value::Null);
        let raw = j["raw_values"].as_object().unwrap();
        assert_eq!(raw.len(), 2);
        let m = &j["metadata"];
        for key in [
            "NAME",
            "TITLE",
            "TIME",
            "T0",
            "LENGTH",
            "TOTAL_LENGTH",
            "STEP_SIZE",
            "HOST",
            "HOSTS",
            "LOCAL_HOST",
            "IP_VERSION",
            "FLENT_VERSION",
            "NOTE",
            "TEST_PARAMETERS",
            "SERIES_META",
            "DATA_FILENAME",
        ] {
            assert!(m.get(key).is_some(), "metadata lacks {key}");
        }
        assert_eq!(m["NAME"], "tcp_upload");
        assert_eq!(m["T0"], "2026-01-01T00:00:00.000000Z");
        assert_eq!(m["TIME"], m["T0"]);
        assert_eq!(m["HOST"], "sim-server");
        assert_eq!(m["IP_VERSION"], 4);
        assert_eq!(m["SERIES_META"]["TCP upload"]["UNITS"], "Mbits/s");
        assert_eq!(m["SERIES_META"]["TCP upload"]["CONG_CONTROL"], "cubic");
        assert_eq!(m["SERIES_META"]["Ping (ms) ICMP"]["UNITS"], "ms");
        assert!(m["NOTE"].as_str().unwrap().contains("seed 7"));
    }

    #[test]
    fn raw_samples_are_absolute_and_converted() {
        let j = to_flent_json(&record(), DEFAULT_T0_EPOCH_S).unwrap();
        let tcp = j["raw_values"]["TCP upload"].as_array().unwrap();
        assert_eq!(tcp.len(), 2);
        assert_eq!(tcp[0]["t"], DEFAULT_T0_EPOCH_S + 0.2);
        assert_eq!(tcp[0]["val"], 18.5);
        assert_eq!(tcp[0]["tcp_cwnd"], 21.0);
        assert_eq!(tcp[0]["tcp_rtt"], 41.5);
        assert_eq!(tcp[0]["tcp_pacing_rate"], 25.0);
        assert!(tcp[0].get("tcp_delivery_rate").is_none());
        assert!(tcp[0].get("seq").is_none());
        let ping = j["raw_values"]["Ping (ms) ICMP"].as_array().unwrap();
        assert_eq!(ping.len(), 4);
        assert_eq!(ping[2]["seq"], 4);
        assert_eq!(ping[2]["val"], 61.0);
        assert!(ping[0].get("tcp_rtt").is_none());
    }

    #[test]
    fn errors_instead_of_panics() {
        let mut r = record();
        r.test = None;
        assert!(matches!(
            to_flent_json(&r, DEFAULT_T0_EPOCH_S),
            Err(FlentError::NotAFlentTest { .. })
        ));
        let mut r = record();
        r.series[0].values.pop();
        assert!(matches!(
            to_flent_json(&r, DEFAULT_T0_EPOCH_S),
            Err(FlentError::Invalid { .. })
        ));
        let mut r = record();
        r.series[1].raw.seq.pop();
        assert!(matches!(
            to_flent_json(&r, DEFAULT_T0_EPOCH_S),
            Err(FlentError::Invalid { .. })
        ));
        let mut r = record();
        r.series[1].name = "TCP upload".into();
        assert!(to_flent_json(&r, DEFAULT_T0_EPOCH_S).is_err());
        let mut r = record();
        r.series.clear();
        assert!(to_flent_json(&r, DEFAULT_T0_EPOCH_S).is_err());
        assert!(matches!(
            to_flent_json(&record(), f64::NAN),
            Err(FlentError::BadStartTime(_))
        ));
    }

    #[test]
    fn non_finite_values_become_gaps() {
        let mut r = record();
        r.series[0].values[1] = Some(f64::NAN);
        r.series[0].raw.val[0] = f64::INFINITY;
        let j = to_flent_json(&r, DEFAULT_T0_EPOCH_S).unwrap();
        assert_eq!(j["results"]["TCP upload"][1], Value::Null);
        assert!(j["raw_values"]["TCP upload"][0].get("val").is_none());
    }

    #[test]
    fn iso_times() {
        let cases = [
            (0.0, "1970-01-01T00:00:00.000000Z"),
            (DEFAULT_T0_EPOCH_S, "2026-01-01T00:00:00.000000Z"),
            (951_782_400.0, "2000-02-29T00:00:00.000000Z"),
            (951_868_799.5, "2000-02-29T23:59:59.500000Z"),
            (1_496_158_950.986_169, "2017-05-30T15:42:30.986169Z"),
            (4_107_542_400.0, "2100-03-01T00:00:00.000000Z"),
            (253_402_300_799.0, "9999-12-31T23:59:59.000000Z"),
        ];
        for (t, want) in cases {
            assert_eq!(iso8601_utc(t).unwrap(), want, "epoch {t}");
        }
        assert!(iso8601_utc(-1.0).is_err());
        assert!(iso8601_utc(YEAR_10000_EPOCH_S).is_err());
        assert!(iso8601_utc(f64::INFINITY).is_err());
    }

    #[test]
    fn civil_from_days_matches_a_day_by_day_calendar() {
        let leap = |y: i64| (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
        let (mut y, mut m, mut d) = (1970_i64, 1_u32, 1_u32);
        for days in 0..(400 * 366) {
            assert_eq!(civil_from_days(days), (y, m, d), "day {days}");
            let month_len = match m {
                2 if leap(y) => 29,
                2 => 28,
                4 | 6 | 9 | 11 => 30,
                _ => 31,
            };
            d += 1;
            if d > month_len {
                d = 1;
                m += 1;
                if m > 12 {
                    m = 1;
                    y += 1;
                }
            }
        }
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        assert_eq!(civil_from_days(-719_468), (0, 3, 1));
    }

    #[test]
    fn file_name_groups_by_configuration() {
        assert_eq!(
            flent_file_name(&record()),
            "tcp_upload-unit-test_tcp_upload_cc_cubic-0.flent.gz"
        );
        let mut r = record();
        r.test = None;
        r.rep = 12;
        r.study = "a-b/c".into();
        r.config = "x=10-80 y=.5".into();
        assert_eq!(flent_file_name(&r), "run-a_b_c-x_10_80_y__5-12.flent.gz");
        r.config = "c".repeat(1000);
        assert!(flent_file_name(&r).len() < 250);
        let j = to_flent_json(&record(), DEFAULT_T0_EPOCH_S).unwrap();
        assert_eq!(j["metadata"]["DATA_FILENAME"], flent_file_name(&record()));
    }

    #[test]
    fn written_file_is_deterministic_sorted_gzip() {
        use std::io::Read;
        let dir = std::env::temp_dir().join(format!("cclab-flent-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let a = dir.join("a.flent.gz");
        let b = dir.join("b.flent.gz");
        write_flent_gz(&record(), &a).unwrap();
        write_flent_gz(&record(), &b).unwrap();
        let bytes = std::fs::read(&a).unwrap();
        assert_eq!(bytes, std::fs::read(&b).unwrap());
        // gzip magic, deflate, no FNAME flag, mtime 0.
        assert_eq!(&bytes[..4], &[0x1f, 0x8b, 8, 0]);
        assert_eq!(&bytes[4..8], &[0, 0, 0, 0]);
        let mut text = String::new();
        flate2::read::GzDecoder::new(&bytes[..])
            .read_to_string(&mut text)
            .unwrap();
        assert!(text.starts_with("{\n  \"metadata\": {\n    \"DATA_FILENAME\""));
        let top: Vec<usize> = ["metadata", "raw_values", "results", "version", "x_values"]
            .iter()
            .map(|k| text.find(&format!("\n  \"{k}\":")).unwrap())
            .collect();
        assert!(top.windows(2).all(|w| w[0] < w[1]), "keys not sorted");
        let back: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, to_flent_json(&record(), DEFAULT_T0_EPOCH_S).unwrap());
        let leftovers = std::fs::read_dir(&dir).unwrap().count();
        assert_eq!(leftovers, 2, "temporary file left behind");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
