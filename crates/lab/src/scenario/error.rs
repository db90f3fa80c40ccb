//! Scenario errors that point at the file, line, column and field they are about.
//!
//! Contract: every problem found in a scenario — TOML syntax, wrong types, unknown fields or
//! values, semantic checks — becomes a [`ScenarioError`] whose `Display` reads
//! `FILE:LINE:COLUMN: FIELD: MESSAGE` (line and column 1-based, column counted in characters;
//! `FIELD` is a path such as `flows[0].controller` and is left out when the problem is the whole
//! document). Errors about a name from a fixed list say which names are valid and, when one is
//! close, suggest it. Text from the input is quoted at most [`MAX_QUOTED_CHARS`] characters
//! long, with control characters escaped ([`clip`]): in the field path (each segment) and in
//! every `` `…` `` or `"…"` quotation of the message, so a message stays short whatever the file
//! holds. Building an error never panics, whatever the span, and takes time linear in the
//! input.

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
            field: clip_field(&field.into()),
            message: clip_quotes(&message.into()),
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
    /// Messages that would only make sense to a Rust programmer (`as i128`, `invalid type:
    /// map` for a date-time, a duplicate key without its name, a nesting limit without a
    /// position) are rewritten to name the key and the value's problem.
    pub(crate) fn toml_error(&self, e: &toml::de::Error) -> ScenarioError {
        let message = e.message();
        let span = e.span();
        if message == "recursion limit" && span.is_none() {
            return self.nesting_error();
        }
        if message == "duplicate key"
            && let Some(span) = &span
        {
            return self.duplicate_key(span);
        }
        let found = span.as_ref().and_then(|s| field_at(self.text, s));
        let (field, kind) = found.map_or((String::new(), None), |(f, k)| (f, Some(k)));
        let span = span.or(Some(0..0));
        self.error(span, field, rewrite_serde_message(message, kind))
    }

    /// "duplicate key" at the key `span`: name the key, its table and where it was first set.
    fn duplicate_key(&self, span: &Range<usize>) -> ScenarioError {
        let key = self
            .text
            .get(span.clone())
            .unwrap_or_default()
            .trim()
            .trim_matches(|c| c == '"' || c == '\'');
        let (line, _) = line_column(self.text, span.start);
        let lines: Vec<&str> = self.text.lines().collect();
        let this = lines
            .get(line.saturating_sub(1))
            .copied()
            .unwrap_or_default();
        if let Some(header) = table_header(this) {
            let first = lines[..line.saturating_sub(1)]
                .iter()
                .position(|l| table_header(l) == Some(header));
            let earlier = first.map_or_else(String::new, |i| format!(" (first on line {})", i + 1));
            return self.error(
                Some(span.clone()),
                header,
                format!(
                    "the table `[{header}]` is defined twice{earlier}: put its keys under one \
                     header"
                ),
            );
        }
        // The enclosing table: the nearest header above, with the index of an array of tables.
        let section_start = lines[..line.saturating_sub(1)]
            .iter()
            .rposition(|l| table_header(l).is_some());
        let mut field = String::new();
        if let Some(h) = section_start {
            let header = table_header(lines[h]).unwrap_or_default();
            field.push_str(header);
            if lines[h].trim_start().starts_with("[[") {
                let n = lines[..h]
                    .iter()
                    .filter(|l| l.trim_start().starts_with("[[") && table_header(l) == Some(header))
                    .count();
                field.push_str(&format!("[{n}]"));
            }
        }
        // A key inside an inline table on this line: the line's own key leads to it.
        let column_byte = span.start - self.text[..span.start].rfind('\n').map_or(0, |i| i + 1);
        let before = this.get(..column_byte).unwrap_or_default();
        if before.contains('{')
            && let Some((outer, _)) = before.split_once('=')
        {
            push_segment(&mut field, outer.trim());
        }
        push_segment(&mut field, key);
        let from = section_start.map_or(0, |h| h + 1);
        let first = lines[from..line.saturating_sub(1)].iter().position(|l| {
            l.trim_start()
                .strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with('='))
        });
        let earlier = first.map_or_else(String::new, |i| {
            format!(" (first on line {})", from + i + 1)
        });
        self.error(
            Some(span.clone()),
            field,
            format!("duplicate key `{key}`: it is already set in this table{earlier}"),
        )
    }

    /// The TOML reader refused a dotted key nested too deeply and gave no position: find the
    /// line with the most dotted parts.
    fn nesting_error(&self) -> ScenarioError {
        let (offset, parts) = dotted_parts_per_line(self.text)
            .max_by_key(|&(offset, parts)| (parts, std::cmp::Reverse(offset)))
            .unwrap_or((0, 0));
        self.error(
            Some(offset..offset),
            "",
            format!(
                "a key or table header of {parts} dotted parts nests tables deeper than the \
                 TOML reader accepts ({MAX_NESTING} levels)"
            ),
        )
    }
}

/// What a file given to cclab is meant to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FileKind {
    /// A scenario file (`cclab run`, `cclab check`).
    Scenario,
    /// A study file (`cclab study`).
    Study,
}

impl Source<'_> {
    /// For a document that did not read as an `expected` file: an error saying that it is
    /// empty or that it is the other kind of file, when it is; `None` otherwise (the reader's
    /// own error is then the right one).
    pub(crate) fn wrong_kind(&self, expected: FileKind) -> Option<ScenarioError> {
        let doc = DeTable::parse(self.text).ok()?;
        let table = doc.get_ref();
        let key_span = |name: &str| {
            table
                .iter()
                .find(|(k, _)| k.get_ref().as_ref() == name)
                .map(|(k, _)| k.span())
        };
        if table.is_empty() {
            let what = match expected {
                FileKind::Scenario => {
                    "the file is empty: a scenario file needs `name`, a [topology] table with a \
                     `preset`, and [[flows]] tables (or a [test]); see scenarios/*.toml"
                }
                FileKind::Study => {
                    "the file is empty: a study file needs `name` and a `base` scenario (a \
                     [base] table or the path of a scenario file), usually with a [grid] and \
                     `repetitions`; see scenarios/*_study.toml"
                }
            };
            return Some(self.error(None, "", what));
        }
        match expected {
            FileKind::Scenario if key_span("topology").is_none() => {
                let (key, span) = ["base", "grid", "repetitions", "analysis"]
                    .iter()
                    .find_map(|k| key_span(k).map(|s| (*k, s)))?;
                Some(self.error(
                    Some(span),
                    "",
                    format!(
                        "this is a study file, not a scenario: it has `{key}`, which only \
                         studies have (studies run with `cclab study`; `cclab run` and \
                         `cclab check` take scenario files)"
                    ),
                ))
            }
            FileKind::Study if key_span("base").is_none() => {
                let (key, span) = ["topology", "flows", "test", "tcp", "probes"]
                    .iter()
                    .find_map(|k| key_span(k).map(|s| (*k, s)))?;
                Some(self.error(
                    Some(span),
                    "",
                    format!(
                        "this is a scenario file, not a study: it has `{key}` and no `base` \
                         (scenarios run with `cclab run`; a study names its scenario in `base`, \
                         see scenarios/*_study.toml)"
                    ),
                ))
            }
            _ => None,
        }
    }
}

/// Nesting depth at which the `toml` crate stops reading (its parser's `LIMIT`).
const MAX_NESTING: usize = 80;

/// The name inside a `[table]` or `[[array]]` header line, if `line` is one.
fn table_header(line: &str) -> Option<&str> {
    let t = line.trim();
    let t = t.split_once('#').map_or(t, |(h, _)| h).trim_end();
    let inner = t
        .strip_prefix("[[")
        .and_then(|r| r.strip_suffix("]]"))
        .or_else(|| t.strip_prefix('[').and_then(|r| r.strip_suffix(']')))?;
    Some(inner.trim())
}

fn push_segment(path: &mut String, seg: &str) {
    if !path.is_empty() {
        path.push('.');
    }
    path.push_str(seg);
}

/// Byte offset of each line's start and the number of dot-separated parts on it (dots inside
/// quoted strings and between digits do not count).
fn dotted_parts_per_line(text: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut offset = 0;
    text.split('\n').map(move |line| {
        let start = offset;
        offset += line.len() + 1;
        let bytes = line.as_bytes();
        let mut quote: Option<u8> = None;
        let mut dots = 0;
        for (i, &b) in bytes.iter().enumerate() {
            match quote {
                Some(q) if b == q => quote = None,
                Some(_) => {}
                None if b == b'"' || b == b'\'' => quote = Some(b),
                None if b == b'#' => break,
                None if b == b'.' => {
                    let digit = |j: Option<usize>| {
                        j.and_then(|j| bytes.get(j)).is_some_and(u8::is_ascii_digit)
                    };
                    if !(digit(i.checked_sub(1)) && digit(Some(i + 1))) {
                        dots += 1;
                    }
                }
                None => {}
            }
        }
        (start, dots + 1)
    })
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

/// The path of the innermost key or value of the document whose span contains `span`, and
/// what is there (`key`, `string`, `integer`, `float`, `boolean`, `date-time`, `array`,
/// `table`).
fn field_at(text: &str, span: &Range<usize>) -> Option<(String, &'static str)> {
    let doc = DeTable::parse(text).ok()?;
    let mut best: Option<Best> = None;
    visit_table(doc.get_ref(), "", span, &mut best);
    best.map(|b| (b.path, b.kind))
}

/// The smallest candidate so far: its length, path and kind.
struct Best {
    len: usize,
    path: String,
    kind: &'static str,
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
    kind: &'static str,
    span: &Range<usize>,
    best: &mut Option<Best>,
) {
    if contains(candidate, span) {
        let len = candidate.len();
        if best.as_ref().is_none_or(|b| len <= b.len) {
            *best = Some(Best {
                len,
                path: path.to_owned(),
                kind,
            });
        }
    }
}

fn visit_table(table: &DeTable<'_>, prefix: &str, span: &Range<usize>, best: &mut Option<Best>) {
    for (key, value) in table {
        let path = if prefix.is_empty() {
            key.get_ref().to_string()
        } else {
            format!("{prefix}.{}", key.get_ref())
        };
        consider(&key.span(), &path, "key", span, best);
        visit_value(value.get_ref(), &value.span(), &path, span, best);
    }
}

fn kind_of(value: &DeValue<'_>) -> &'static str {
    match value {
        DeValue::String(_) => "string",
        DeValue::Integer(_) => "integer",
        DeValue::Float(_) => "float",
        DeValue::Boolean(_) => "boolean",
        DeValue::Datetime(_) => "date-time",
        DeValue::Array(_) => "array",
        DeValue::Table(_) => "table",
    }
}

fn visit_value(
    value: &DeValue<'_>,
    value_span: &Range<usize>,
    path: &str,
    span: &Range<usize>,
    best: &mut Option<Best>,
) {
    consider(value_span, path, kind_of(value), span, best);
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

/// Rust's name of an integer type in a serde message, as the range a file may write.
fn integer_range(ty: &str) -> Option<String> {
    let (min, max): (i128, i128) = match ty {
        "u8" => (0, u8::MAX.into()),
        "u16" => (0, u16::MAX.into()),
        "u32" => (0, u32::MAX.into()),
        "u64" | "usize" => (0, u64::MAX.into()),
        "i8" => (i8::MIN.into(), i8::MAX.into()),
        "i16" => (i16::MIN.into(), i16::MAX.into()),
        "i32" => (i32::MIN.into(), i32::MAX.into()),
        "i64" | "isize" => (i64::MIN.into(), i64::MAX.into()),
        _ => return None,
    };
    Some(format!("a whole number in {min}..={max}"))
}

/// Make serde's messages read like our own errors: "unknown field `x`, expected one of `a`,
/// `b`" becomes "unknown field `x`, expected one of: a, b (did you mean `a`?)"; an integer too
/// large for 64 bits or outside a Rust type's range is "out of range" with the range; a
/// date-time where another value belongs is called a date-time (serde sees a map); Rust type
/// names after "expected" become what a file may write. `kind` is what the document holds at
/// the error's position (see [`field_at`]).
fn rewrite_serde_message(msg: &str, kind: Option<&str>) -> String {
    if msg.starts_with("cannot recurse further") {
        return format!(
            "arrays or inline tables nested deeper than the TOML reader accepts ({MAX_NESTING} \
             levels)"
        );
    }
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
    let Some((what, expected)) = msg.split_once(", expected ") else {
        return msg.to_owned();
    };
    let expected_text = match expected {
        _ if integer_range(expected).is_some() => "a whole number",
        "f32" | "f64" => "a number",
        "bool" => "`true` or `false`",
        // serde names the Rust type of a table ("struct PresetName") or of a map.
        other if other.starts_with("struct ") || other == "a map" => "a table",
        other => other,
    };
    // "invalid type: integer `N` as i128": a literal beyond 64 bits.
    if let Some(n) = what
        .strip_prefix("invalid type: integer `")
        .and_then(|r| r.strip_suffix("` as i128"))
    {
        let expected_text = integer_range(expected).unwrap_or_else(|| {
            if expected == "a value" {
                "a number that fits in 64 bits".to_owned()
            } else {
                expected.to_owned()
            }
        });
        return format!("`{n}` is out of range, expected {expected_text}");
    }
    // "invalid value: integer `-1`, expected u64".
    if let Some(n) = what
        .strip_prefix("invalid value: integer `")
        .and_then(|r| r.strip_suffix('`'))
        && let Some(range) = integer_range(expected)
    {
        return format!("`{n}` is out of range, expected {range}");
    }
    if what == "invalid type: map" && kind == Some("date-time") {
        return format!("a date-time is not accepted here, expected {expected_text}");
    }
    format!("{what}, expected {expected_text}")
}

/// Longest quotation of input text in a message, in characters.
pub(crate) const MAX_QUOTED_CHARS: usize = 64;

/// `text` as a message may quote it: control characters escaped (`\n`, `\u{1b}`), and cut to
/// [`MAX_QUOTED_CHARS`] characters with `…` and the full length when it is longer.
pub(crate) fn clip(text: &str) -> String {
    let mut out = String::new();
    for (shown, c) in text.chars().enumerate() {
        if shown == MAX_QUOTED_CHARS {
            let n = text.chars().count();
            out.push_str(&format!("… ({n} characters)"));
            return out;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// Whether `text` is already the output of [`clip`] for a longer text.
fn is_clipped(text: &str) -> bool {
    text.chars().nth(MAX_QUOTED_CHARS) == Some('…')
        && text.ends_with(" characters)")
        && text.chars().count() <= MAX_QUOTED_CHARS + 32
}

/// Every segment of a dotted field path clipped ([`clip`]).
fn clip_field(field: &str) -> String {
    if field.len() <= MAX_QUOTED_CHARS && !field.chars().any(char::is_control) {
        return field.to_owned();
    }
    field.split('.').map(clip).collect::<Vec<_>>().join(".")
}

/// `message` with every quotation between backticks or double quotes clipped ([`clip`]); an
/// unmatched quote quotes to the end.
fn clip_quotes(message: &str) -> String {
    if message.len() <= MAX_QUOTED_CHARS {
        return message.to_owned();
    }
    let mut out = String::with_capacity(message.len().min(4096));
    let mut rest = message;
    while let Some(open) = rest.find(['`', '"']) {
        let q = &rest[open..=open];
        out.push_str(&rest[..=open]);
        let inner = &rest[open + 1..];
        let (quoted, tail) = match inner.find(q) {
            Some(close) => (&inner[..close], &inner[close..]),
            None => (inner, ""),
        };
        if quoted.chars().count() > MAX_QUOTED_CHARS && !is_clipped(quoted) {
            out.push_str(&clip(quoted));
        } else {
            out.push_str(quoted);
        }
        match tail.strip_prefix(q) {
            Some(after) => {
                out.push_str(q);
                rest = after;
            }
            None => rest = tail,
        }
    }
    out.push_str(rest);
    out
}

/// "unknown controller `cubc`, expected one of: reno, newreno, cubic (did you mean `cubic`?)".
pub(crate) fn unknown_choice(noun: &str, bad: &str, choices: &[&str]) -> String {
    let mut msg = format!(
        "unknown {noun} `{}`, expected one of: {}",
        clip(bad),
        choices.join(", ")
    );
    if let Some(s) = suggest(bad, choices) {
        msg.push_str(&format!(" (did you mean `{s}`?)"));
    }
    msg
}

/// The choice closest to `bad` if it is close enough to be a plausible typo.
pub(crate) fn suggest<'a>(bad: &str, choices: &[&'a str]) -> Option<&'a str> {
    let len = bad.chars().count();
    // A typo, not a different word: at most one edit per three characters, and never a
    // replacement of the whole name.
    let max_dist = (len / 3).max(1);
    let bad_lower = bad.to_lowercase();
    let bad_len = bad_lower.chars().count();
    let (dist, best) = choices
        .iter()
        .filter_map(|c| {
            let c_lower = c.to_lowercase();
            // The distance is at least the difference in length: a choice much shorter or
            // longer is not a candidate, and a long string costs no quadratic comparison.
            (bad_len.abs_diff(c_lower.chars().count()) <= max_dist)
                .then(|| (edit_distance(&bad_lower, &c_lower), *c))
        })
        .min_by_key(|(d, _)| *d)?;
    (dist <= max_dist && dist < len).then_some(best)
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

    /// Quoted input is clipped once, escaped, in the field and in the message; suggestions are
    /// not searched for a string far longer than every choice.
    #[test]
    fn quoted_input_is_clipped() {
        let long = "k".repeat(1000);
        let clipped = clip(&long);
        assert_eq!(clipped, format!("{}… (1000 characters)", "k".repeat(64)));
        assert_eq!(clip("a\u{1b}[2Jb"), "a\\u{1b}[2Jb");
        let src = Source {
            text: "x = 1\n",
            origin: "f.toml",
        };
        let e = src.error(
            Some(0..1),
            format!("host.{long}"),
            unknown_choice("field", &long, &["tso", "gso"]),
        );
        let e = e.invalid().unwrap();
        assert_eq!(e.field, format!("host.{clipped}"));
        assert_eq!(
            e.message,
            format!("unknown field `{clipped}`, expected one of: tso, gso")
        );
        let e = src.error(None, "", format!("`{long}` and \"{long}\" and `short`"));
        let m = &e.invalid().unwrap().message;
        assert_eq!(m, &format!("`{clipped}` and \"{clipped}\" and `short`"));
        assert_eq!(suggest(&"cubic".repeat(100_000), &["cubic"]), None);
        assert_eq!(suggest("cubicc", &["cubic"]), Some("cubic"));
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
            rewrite_serde_message(
                "unknown field `rtae`, expected one of `preset`, `rate`",
                None
            ),
            "unknown field `rtae`, expected one of: preset, rate (did you mean `rate`?)"
        );
        assert_eq!(
            rewrite_serde_message("unknown variant `fast`, expected `on` or `off`", None),
            "unknown value `fast`, expected one of: on, off"
        );
        assert_eq!(
            rewrite_serde_message("missing field `x`", None),
            "missing field `x`"
        );
    }

    #[test]
    fn rust_type_names_become_what_a_file_may_write() {
        assert_eq!(
            rewrite_serde_message(
                "invalid type: integer `99999999999999999999` as i128, expected u32",
                Some("integer")
            ),
            "`99999999999999999999` is out of range, expected a whole number in 0..=4294967295"
        );
        assert_eq!(
            rewrite_serde_message(
                "invalid type: integer `99999999999999999999` as i128, expected a value",
                Some("integer")
            ),
            "`99999999999999999999` is out of range, expected a number that fits in 64 bits"
        );
        assert_eq!(
            rewrite_serde_message("invalid value: integer `-1`, expected u64", None),
            "`-1` is out of range, expected a whole number in 0..=18446744073709551615"
        );
        assert_eq!(
            rewrite_serde_message("invalid type: string \"x\", expected i64", None),
            "invalid type: string \"x\", expected a whole number"
        );
        assert_eq!(
            rewrite_serde_message("invalid type: integer `1`, expected bool", None),
            "invalid type: integer `1`, expected `true` or `false`"
        );
        assert_eq!(
            rewrite_serde_message("invalid type: map, expected a duration", Some("date-time")),
            "a date-time is not accepted here, expected a duration"
        );
        assert_eq!(
            rewrite_serde_message("invalid type: map, expected a duration", Some("table")),
            "invalid type: map, expected a duration"
        );
    }

    #[test]
    fn duplicate_keys_and_deep_nesting_are_located() {
        let src = |text: &'static str| Source {
            text,
            origin: "t.toml",
        };
        let text = "[a]\nx = 1\ny = 2\nx = 3\n";
        let e = src(text).duplicate_key(&(16..17));
        assert_eq!(
            e.to_string(),
            "t.toml:4:1: a.x: duplicate key `x`: it is already set in this table (first on line 2)"
        );
        let text = "[[f]]\nx = 1\n[[f]]\nx = { k = 1, k = 2 }\n";
        let k = text.rfind("k =").unwrap();
        let e = src(text).duplicate_key(&(k..k + 1));
        assert!(
            e.to_string()
                .starts_with("t.toml:4:14: f[1].x.k: duplicate key `k`"),
            "{e}"
        );
        let text = "a = 1.5\n\nb.c.d = 'x.y.z'\n";
        let e = src(text).nesting_error();
        assert!(
            e.to_string()
                .starts_with("t.toml:3:1: a key or table header of 3 dotted"),
            "{e}"
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
            field_at(t, &(s..s + needle.len())).map(|(f, _)| f)
        };
        assert_eq!(at("rate").as_deref(), Some("topology.rate"));
        assert_eq!(at("'c'").as_deref(), Some("flows[1].controller"));
        assert_eq!(field_at(t, &(0..0)), None);
    }
}
