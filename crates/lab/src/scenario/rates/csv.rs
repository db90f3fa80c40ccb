//! `csv`: a one-shot schedule read from a two-column CSV file.
//!
//! Contract: each line is `time,rate`: the time in seconds from the start of the run (the
//! first 0, then strictly increasing) and the rate in Mbit/s from then on (0: an outage; the
//! last must be positive). Blank lines and lines starting with `#` are skipped, and the first
//! other line may be a header (it is skipped when its first field is not a number). A
//! malformed line is an error naming its line; it quotes a field only after a good line.

use cclab_sim::Time;
use cclab_sim::net::rate::{RateShape, Schedule};

use super::RateKind;

/// Bits per second in one Mbit/s (the file's rate unit).
const MBIT: f64 = 1e6;

/// A schedule from a CSV file.
pub(super) const CSV: RateKind = RateKind {
    name: "csv",
    doc: "the rate steps as a two-column CSV file says: `time_s,rate_mbit` per line, the last rate holding",
    source: "piecewise-constant rate from a file",
    params: &[super::file_param("the CSV file: seconds, Mbit/s", "—")],
    build: |v| super::file_spec(v, parse),
};

/// Parse the file's text.
fn parse(text: &str) -> Result<RateShape, (usize, String)> {
    let mut steps: Vec<(Time, u64)> = Vec::new();
    let mut seen_data = false;
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let s = line.trim();
        if s.is_empty() || s.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = s.split(',').map(str::trim).collect();
        let first = fields[0].parse::<f64>();
        if first.is_err() && !seen_data && steps.is_empty() {
            seen_data = true;
            continue;
        }
        seen_data = true;
        if fields.len() != 2 {
            return Err((
                n,
                format!(
                    "expected two fields `time_s,rate_mbit`, got {}",
                    fields.len()
                ),
            ));
        }
        // A field is quoted only once a line has read as a step: a file of another kind
        // named by mistake (`/etc/shadow`) is never shown.
        let quoted = |f: &str| {
            if steps.is_empty() {
                "the field".to_owned()
            } else {
                format!("`{}`", crate::scenario::error::clip(f))
            }
        };
        let t = first
            .ok()
            .filter(|t| t.is_finite() && *t >= 0.0 && *t <= 1e6)
            .ok_or_else(|| {
                (
                    n,
                    format!("{} is not a time in seconds in [0, 10⁶]", quoted(fields[0])),
                )
            })?;
        let r = fields[1]
            .parse::<f64>()
            .ok()
            .filter(|r| r.is_finite() && *r >= 0.0 && *r <= 1e7)
            .ok_or_else(|| {
                (
                    n,
                    format!("{} is not a rate in Mbit/s in [0, 10⁷]", quoted(fields[1])),
                )
            })?;
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "checked finite and in range above"
        )]
        let step = (Time::from_secs_f64(t), (r * MBIT).round() as u64);
        match steps.last() {
            None if step.0 != Time::ZERO => {
                return Err((n, "the first time must be 0".into()));
            }
            Some(last) if step.0 <= last.0 => {
                return Err((n, "times must increase strictly".into()));
            }
            _ => steps.push(step),
        }
    }
    Schedule::new(steps, None)
        .map(|s| RateShape::Schedule(s.into()))
        .map_err(|e| (0, e))
}
