//! Scenario errors that point at the file, line, column and field they are about.
//!
//! Contract: every problem found in a scenario — TOML syntax, wrong types, unknown fields or
//! values, semantic checks — becomes a [`ScenarioError`] whose `Display` reads
//! `FILE:LINE:COLUMN: FIELD: MESSAGE` (line and column 1-based, column counted in characters;
//! `FIELD` is a path such as `flows[0].controller` and is left out when the problem is the whole
//! document). Errors about a name from a fixed list say which names are valid and, when one is
//! close, suggest it. Building an error never panics, whatever the span.

use std::fmt;
use std::ops::Range;
use std::path::PathBuf;

use thiserror::Error;
use toml::de::{DeTable, DeValue};

/// Why a scenario could not be loaded.
#[derive(Debug, Error)]
pub enum ScenarioError {
    /// The file could not be read.
    #[error("{}: cannot read the scenario file", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file was read but is not a valid scenario.
    #[error("{0}")]
    Invalid(Box<Invalid>),
}

/// A problem at a place in a scenario file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    /// The file (as given by the caller, e.g. `scenarios/x.toml`).
    pub origin: String,
    /// 1-based line, or 0 when the problem has no position (e.g. a command-line override).
    pub line: usize,
    /// 1-based column in characters (0 when `line` is 0).
    pub column: usize,
    /// Path of the field, e.g. `flows[0].controller`; empty for the whole document.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.origin)?;
        if self.line > 0 {
            write!(f, ":{}:{}", self.line, self.column)?;
        }
        if !self.field.is_empty() {
            write!(f, ": {}", self.field)?;
        }
        write!(f, ": {}", self.message)
    }
}

impl ScenarioError {
    /// The positioned problem, if this is not an I/O error.
    #[must_use]
    pub fn invalid(&self) -> Option<&Invalid> {
        match self {
            ScenarioError::Invalid(i) => Some(i),
            ScenarioError::Read { .. } => None,
        }
    }
}

/// The source text being checked; turns spans into positioned errors.
#[derive(Clone, Copy)]
pub(crate) struct Source<'a> {
    pub text: &'a str,
    pub origin: &'a str,
}

impl Source<'_> {
    /// An error about `field` located at byte span `span` (`None`: no position).
    pub(crate) fn error(
        &self,
        span: Option<Range<usize>>,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> ScenarioError {
        let (line, column) = span.map_or((0, 0), |s| line_column(self.text, s.start));
        ScenarioError::Invalid(Box::new(Invalid {
            origin: self.origin.to_owned(),
            line,
            column,
            field: field.into(),
            message: message.into(),
        }))
    }

    /// An optional integer key that must lie in `range` (`unit` names it in the message);
    /// `default` when absent.
    pub(crate) fn ranged_u32(
        &self,
        value: Option<&toml::Spanned<i64>>,
        field: String,
        range: std::ops::RangeInclusive<u32>,
        unit: &str,
        default: u32,
    ) -> Result<u32, ScenarioError> {
        let Some(v) = value else { return Ok(default) };
        match u32::try_from(*v.get_ref()) {
            Ok(x) if range.contains(&x) => Ok(x),
            _ => Err(self.error(
                Some(v.span()),
                field,
                format!(
                    "must be in {}..={} {unit}, got {}",
                    range.start(),
                    range.end(),
                    v.get_ref()
                ),
            )),
        }
    }

    /// Convert a TOML/serde error, naming the field by looking the span up in the document.
    pub(crate) fn toml_error(&self, e: &toml::de::Error) -> ScenarioError {
        let span = e.span();
        let field = span
            .as_ref()
            .and_then(|s| field_at(self.text, s))
            .unwrap_or_default();
        let span = span.or(Some(0..0));
        self.error(span, field, rewrite_serde_message(e.message()))
    }
}

/// 1-based line and character column of byte `offset` in `text` (clamped to the text).
pub(crate) fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    (line, column)
}

/// The path of the innermost key or value of the document whose span contains `span`.
fn field_at(text: &str, span: &Range<usize>) -> Option<String> {
    let doc = DeTable::parse(text).ok()?;
    let mut best: Option<(usize, String)> = None;
    visit_table(doc.get_ref(), "", span, &mut best);
    best.map(|(_, path)| path)
}

fn contains(outer: &Range<usize>, inner: &Range<usize>) -> bool {
    if inner.is_empty() {
        outer.start < inner.start && inner.start < outer.end
    } else {
        outer.start <= inner.start && inner.end <= outer.end
    }
}

fn consider(
    candidate: &Range<usize>,
    path: &str,
    span: &Range<usize>,
    best: &mut Option<(usize, String)>,
) {
    if contains(candidate, span) {
        let len = candidate.len();
        if best.as_ref().is_none_or(|(l, _)| len <= *l) {
            *best = Some((len, path.to_owned()));
        }
    }
}

fn visit_table(
    table: &DeTable<'_>,
    prefix: &str,
    span: &Range<usize>,
    best: &mut Option<(usize, String)>,
) {
    for (key, value) in table {
        let path = if prefix.is_empty() {
            key.get_ref().to_string()
        } else {
            format!("{prefix}.{}", key.get_ref())
        };
        consider(&key.span(), &path, span, best);
        visit_value(value.get_ref(), &value.span(), &path, span, best);
    }
}

fn visit_value(
    value: &DeValue<'_>,
    value_span: &Range<usize>,
    path: &str,
    span: &Range<usize>,
    best: &mut Option<(usize, String)>,
) {
    consider(value_span, path, span, best);
    match value {
        DeValue::Table(t) => visit_table(t, path, span, best),
        DeValue::Array(a) => {
            for (i, item) in a.iter().enumerate() {
                let item_path = format!("{path}[{i}]");
                visit_value(item.get_ref(), &item.span(), &item_path, span, best);
            }
        }
        _ => {}
    }
}

/// Make serde's "unknown field `x`, expected one of `a`, `b`" read like our own errors:
/// "unknown field `x`, expected one of: a, b (did you mean `a`?)".
fn rewrite_serde_message(msg: &str) -> String {
    for kind in ["field", "variant"] {
        let lead = format!("unknown {kind} `");
        if !msg.starts_with(&lead) {
            continue;
        }
        let quoted: Vec<&str> = msg.split('`').skip(1).step_by(2).collect();
        let Some((bad, choices)) = quoted.split_first() else {
            break;
        };
        let noun = if kind == "variant" { "value" } else { "field" };
        if choices.is_empty() {
            return format!("unknown {noun} `{bad}`, this table has no fields");
        }
        return unknown_choice(noun, bad, choices);
    }
    msg.to_owned()
}

/// "unknown controller `cubc`, expected one of: reno, newreno, cubic (did you mean `cubic`?)".
pub(crate) fn unknown_choice(noun: &str, bad: &str, choices: &[&str]) -> String {
    let mut msg = format!(
        "unknown {noun} `{bad}`, expected one of: {}",
        choices.join(", ")
    );
    if let Some(s) = suggest(bad, choices) {
        msg.push_str(&format!(" (did you mean `{s}`?)"));
    }
    msg
}

/// The choice closest to `bad` if it is close enough to be a plausible typo.
pub(crate) fn suggest<'a>(bad: &str, choices: &[&'a str]) -> Option<&'a str> {
    let bad_lower = bad.to_lowercase();
    let (dist, best) = choices
        .iter()
        .map(|c| (edit_distance(&bad_lower, &c.to_lowercase()), *c))
        .min_by_key(|(d, _)| *d)?;
    let len = bad.chars().count();
    // A typo, not a different word: at most one edit per three characters, and never a
    // replacement of the whole name.
    (dist <= (len / 3).max(1) && dist < len).then_some(best)
}

/// Optimal-string-alignment distance (Levenshtein plus adjacent transpositions).
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // Keep three rows: i-2, i-1, i.
    let mut prev2: Vec<usize> = vec![0; b.len() + 1];
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur: Vec<usize> = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(prev2[j - 2] + 1);
            }
            cur[j] = d;
        }
        std::mem::swap(&mut prev2, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// The span of the value at `path` (table keys, or array indices written as numbers) in the
/// TOML document `text`, if it exists there.
pub(crate) fn span_of(text: &str, path: &[&str]) -> Option<Range<usize>> {
    let doc = DeTable::parse(text).ok()?;
    let mut table: &DeTable<'_> = doc.get_ref();
    let mut span = doc.span();
    let mut value: Option<&DeValue<'_>> = None;
    for seg in path {
        let next = match value {
            None => table
                .iter()
                .find(|(k, _)| k.get_ref().as_ref() == *seg)
                .map(|(_, v)| v),
            Some(DeValue::Table(t)) => t
                .iter()
                .find(|(k, _)| k.get_ref().as_ref() == *seg)
                .map(|(_, v)| v),
            Some(DeValue::Array(a)) => seg.parse::<usize>().ok().and_then(|i| a.get(i)),
            Some(_) => None,
        }?;
        span = next.span();
        value = Some(next.get_ref());
        if let DeValue::Table(t) = next.get_ref() {
            table = t;
        }
    }
    Some(span)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(edit_distance("cubc", "cubic"), 1);
        assert_eq!(edit_distance("rtae", "rate"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }

    #[test]
    fn suggestions() {
        let c = ["reno", "newreno", "cubic"];
        assert_eq!(suggest("cubc", &c), Some("cubic"));
        assert_eq!(suggest("CUBIC", &c), Some("cubic"));
        assert_eq!(suggest("bbr", &c), None);
        assert_eq!(suggest("c", &["a", "b"]), None);
        assert_eq!(suggest("new_reno", &c), Some("newreno"));
    }

    #[test]
    fn serde_messages_are_rewritten() {
        assert_eq!(
            rewrite_serde_message("unknown field `rtae`, expected one of `preset`, `rate`"),
            "unknown field `rtae`, expected one of: preset, rate (did you mean `rate`?)"
        );
        assert_eq!(
            rewrite_serde_message("unknown variant `fast`, expected `on` or `off`"),
            "unknown value `fast`, expected one of: on, off"
        );
        assert_eq!(
            rewrite_serde_message("missing field `x`"),
            "missing field `x`"
        );
    }

    #[test]
    fn positions_are_one_based_and_clamped() {
        let t = "a = 1\nbé = 2\n";
        assert_eq!(line_column(t, 0), (1, 1));
        assert_eq!(line_column(t, 6), (2, 1));
        assert_eq!(line_column(t, 9), (2, 3)); // after "bé" (é is two bytes)
        assert_eq!(line_column(t, 8), (2, 2)); // inside é: clamped back
        assert_eq!(line_column(t, 999), (3, 1));
    }

    #[test]
    fn field_paths() {
        let t = "[topology]\nrate = 5\n[[flows]]\nx = 1\n[[flows]]\ncontroller = 'c'\n";
        let at = |needle: &str| {
            let s = t.find(needle).unwrap();
            field_at(t, &(s..s + needle.len()))
        };
        assert_eq!(at("rate").as_deref(), Some("topology.rate"));
        assert_eq!(at("'c'").as_deref(), Some("flows[1].controller"));
        assert_eq!(field_at(t, &(0..0)), None);
    }
}
