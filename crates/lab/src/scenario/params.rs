//! Parameter declarations and the one resolver that checks a table of values against them.
//!
//! Contract: a component that a scenario file can configure (a controller, a queue discipline, a
//! topology preset) declares each of its keys once as a [`Param`]: name, type and range
//! ([`Kind`]), unit, default, a one-line description and the primary source of the default.
//! `resolve` checks the keys a file gives against those declarations and returns the typed
//! values ([`Resolved`]) or a [`ScenarioError`] that names the file, line, column and key: an
//! unknown key lists the valid ones (with a suggestion), a key of another component says which
//! components take it, a wrong type or an out-of-range value quotes the declared range. The same
//! declarations print `cclab list … --params` and the README's key tables ([`table`],
//! [`markdown`]), so documentation and checks cannot drift apart.

use std::fmt::Write as _;
use std::ops::Range;

use cclab_sim::Dur;
use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};
use toml::Spanned;

use super::ScenarioError;
use super::error::{Source, suggest, unknown_choice};
use crate::units::{TimeValue, fmt_dur};

/// One key a component accepts.
#[derive(Clone, Copy, Debug)]
pub struct Param {
    /// The key as written in the file.
    pub name: &'static str,
    /// Type and accepted range.
    pub kind: Kind,
    /// Unit of the value ("" when it has none).
    pub unit: &'static str,
    /// The default, as a file would write it.
    pub default: &'static str,
    /// One line: what it sets.
    pub doc: &'static str,
    /// Where the default comes from (RFC section, Linux function or module parameter, paper).
    pub source: &'static str,
}

/// The type of a parameter and the values it accepts.
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    /// `true` or `false`.
    Bool,
    /// A whole number in `min..=max`.
    Int {
        /// Smallest accepted value.
        min: i64,
        /// Largest accepted value.
        max: i64,
    },
    /// A number in the interval from `min` to `max`, each end open or closed.
    Float {
        /// Lower end.
        min: f64,
        /// Whether `min` itself is excluded.
        min_open: bool,
        /// Upper end.
        max: f64,
        /// Whether `max` itself is excluded.
        max_open: bool,
    },
    /// A duration ("25ms", or a number of seconds) of at most `max`.
    Duration {
        /// Largest accepted duration.
        max: Dur,
    },
    /// One name from a fixed list.
    Choice(&'static [&'static str]),
    /// An array whose every item `item` checks (an item's error names its index).
    List {
        /// Type name in tables.
        ty: &'static str,
        /// What each item may be.
        range: &'static str,
        /// The checked value of one item, or what is wrong with it.
        item: fn(&RawValue) -> Result<Value, String>,
    },
    /// A value with its own syntax (a rate, a size, a buffer), checked by the component's own
    /// code (its `build`, from [`Resolved::raw`]): `ty` names the type, `range` says what is
    /// accepted, `quoted` whether the default is written as a TOML string.
    Other {
        /// Type name in tables.
        ty: &'static str,
        /// What is accepted.
        range: &'static str,
        /// The default is a string in TOML.
        quoted: bool,
    },
}

impl Kind {
    /// The type's name in tables.
    #[must_use]
    pub fn type_name(&self) -> &'static str {
        match self {
            Kind::Bool => "bool",
            Kind::Int { .. } => "integer",
            Kind::Float { .. } => "number",
            Kind::Duration { .. } => "duration",
            Kind::Choice(_) => "name",
            Kind::List { ty, .. } | Kind::Other { ty, .. } => ty,
        }
    }

    /// The accepted values, e.g. `6..=12`, `(0, 4]`, `hystart | hystart++`.
    #[must_use]
    pub fn range(&self) -> String {
        match self {
            Kind::Bool => "true, false".to_owned(),
            Kind::Int { min, max } => format!("{min}..={max}"),
            Kind::Float {
                min,
                min_open,
                max,
                max_open,
            } => format!(
                "{}{min}, {max}{}",
                if *min_open { '(' } else { '[' },
                if *max_open { ')' } else { ']' }
            ),
            Kind::Duration { max } if *max == Dur::MAX => "≥ 0".to_owned(),
            Kind::Duration { max } => format!("0..={}", fmt_dur(*max)),
            Kind::Choice(names) => names.join(" | "),
            Kind::List { range, .. } | Kind::Other { range, .. } => (*range).to_owned(),
        }
    }
}

impl Param {
    /// The default as a TOML value (strings quoted).
    #[must_use]
    pub fn default_toml(&self) -> String {
        match self.kind {
            Kind::Choice(_) | Kind::Duration { .. } | Kind::Other { quoted: true, .. } => {
                format!("\"{}\"", self.default)
            }
            _ => self.default.to_owned(),
        }
    }
}

/// A declared component that is only named and documented here (its keys, if any, are checked
/// by its own module): a queue discipline, a preset, a test, an ECN mode, a slow start.
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    /// The name a file uses.
    pub name: &'static str,
    /// One line: what it is.
    pub doc: &'static str,
    /// Where it comes from.
    pub source: &'static str,
    /// Its keys.
    pub params: &'static [Param],
}

impl Declared for Entry {
    fn name(&self) -> &'static str {
        self.name
    }
    fn doc(&self) -> &'static str {
        self.doc
    }
    fn source(&self) -> &'static str {
        self.source
    }
    fn params(&self) -> &'static [Param] {
        self.params
    }
}

/// A checked value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// [`Kind::Bool`].
    Bool(bool),
    /// [`Kind::Int`], inside the declared range.
    Int(i64),
    /// [`Kind::Float`], inside the declared interval.
    Float(f64),
    /// [`Kind::Duration`].
    Duration(Dur),
    /// [`Kind::Choice`]: the declared name.
    Choice(&'static str),
    /// [`Kind::List`]: the checked items, in file order.
    List(Vec<Value>),
    /// [`Kind::Other`]: the value as written, for the component's `build` to read.
    Raw(RawValue),
}

/// A value as written in the file, before it is checked against a declaration.
#[derive(Clone, Debug, PartialEq)]
pub enum RawValue {
    /// A boolean.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A string.
    Str(String),
    /// An array, each item with its place in the file.
    Array(Vec<Spanned<RawValue>>),
    /// A table (no declared parameter takes one).
    Other(&'static str),
}

impl RawValue {
    /// The value as an error message quotes it.
    #[must_use]
    pub fn describe(&self) -> String {
        match self {
            RawValue::Bool(b) => format!("{b}"),
            RawValue::Int(i) => format!("{i}"),
            RawValue::Float(f) => format!("{f}"),
            RawValue::Str(s) => format!("\"{s}\""),
            RawValue::Array(_) => "an array".to_owned(),
            RawValue::Other(what) => (*what).to_owned(),
        }
    }

    /// The value as a typed unit (a size, a probability, a duration) through that type's own
    /// parser, so a key checked here reads exactly as one read by serde elsewhere.
    ///
    /// # Errors
    /// The unit parser's message, or a wrong-type message for an array or a table.
    pub fn parse<T: serde::de::DeserializeOwned>(&self) -> Result<T, String> {
        let value = match self {
            RawValue::Bool(b) => toml::Value::Boolean(*b),
            RawValue::Int(i) => toml::Value::Integer(*i),
            RawValue::Float(f) => toml::Value::Float(*f),
            RawValue::Str(s) => toml::Value::String(s.clone()),
            RawValue::Array(_) | RawValue::Other(_) => {
                return Err(format!("expected a single value, got {}", self.describe()));
            }
        };
        T::deserialize(value).map_err(|e| e.message().to_owned())
    }
}

impl<'de> Deserialize<'de> for RawValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawValue;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a value")
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<RawValue, E> {
                Ok(RawValue::Bool(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawValue, E> {
                Ok(RawValue::Int(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawValue, E> {
                Ok(RawValue::Int(i64::try_from(v).unwrap_or(i64::MAX)))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<RawValue, E> {
                Ok(RawValue::Float(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RawValue, E> {
                Ok(RawValue::Str(v.to_owned()))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<RawValue, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element::<Spanned<RawValue>>()? {
                    items.push(item);
                }
                Ok(RawValue::Array(items))
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<RawValue, A::Error> {
                while map
                    .next_entry::<de::IgnoredAny, de::IgnoredAny>()?
                    .is_some()
                {}
                Ok(RawValue::Other("a table"))
            }
        }
        d.deserialize_any(V)
    }
}

/// The keys of a table that are not the table's own fixed fields, as written.
pub(crate) type Given = Vec<(String, Spanned<RawValue>)>;

/// A component (controller, queue discipline, preset) and its declared parameters.
pub trait Declared {
    /// The name a file uses to select it.
    fn name(&self) -> &'static str;
    /// One line: what it is.
    fn doc(&self) -> &'static str;
    /// Where its behaviour comes from.
    fn source(&self) -> &'static str;
    /// Its parameters.
    fn params(&self) -> &'static [Param];
}

/// `Debug` and [`Declared`] for a registry entry type whose declaration is its `decl` field
/// (a queue discipline, a preset): both forward to the declaration.
macro_rules! declared_by_decl {
    ($ty:ident) => {
        impl std::fmt::Debug for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($ty))
                    .field("name", &self.decl.name)
                    .finish_non_exhaustive()
            }
        }

        impl $crate::scenario::params::Declared for $ty {
            fn name(&self) -> &'static str {
                self.decl.name
            }
            fn doc(&self) -> &'static str {
                self.decl.doc
            }
            fn source(&self) -> &'static str {
                self.decl.source
            }
            fn params(&self) -> &'static [$crate::scenario::params::Param] {
                self.decl.params
            }
        }
    };
}
pub(crate) use declared_by_decl;

/// A component chosen by name whose keys build a typed value `T`: a controller
/// (`T = CcSpec`), and in the same way any other registry (an element, a preset) — one
/// declaration each, listed in one `ALL` slice, resolved by `resolve_component`.
pub struct Component<T: 'static> {
    /// The name a file uses to select it.
    pub name: &'static str,
    /// One line: what it is.
    pub doc: &'static str,
    /// Where its behaviour comes from.
    pub source: &'static str,
    /// Its keys.
    pub params: &'static [Param],
    /// The typed value from the checked keys (a key left out keeps the component's default).
    pub build: fn(&Resolved) -> Result<T, Conflict>,
}

impl<T> std::fmt::Debug for Component<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Component")
            .field("name", &self.name)
            .field("params", &self.params.len())
            .finish_non_exhaustive()
    }
}

/// A declaration that builds a typed value `T` from its checked keys: what
/// `resolve_component` needs of a registry entry.
pub trait Builds<T>: Declared {
    /// The typed value from the checked keys (a key left out keeps the component's default).
    ///
    /// # Errors
    /// A conflict between keys that each passed their own check.
    fn build(&self, values: &Resolved) -> Result<T, Conflict>;
}

impl<T> Builds<T> for Component<T> {
    fn build(&self, values: &Resolved) -> Result<T, Conflict> {
        (self.build)(values)
    }
}

impl<T> Declared for Component<T> {
    fn name(&self) -> &'static str {
        self.name
    }
    fn doc(&self) -> &'static str {
        self.doc
    }
    fn source(&self) -> &'static str {
        self.source
    }
    fn params(&self) -> &'static [Param] {
        self.params
    }
}

/// The value of component `name` (written under key `kind_key` of table `field`, or as the
/// value of `field` itself when `kind_key` is `None`)
/// from `registry`, with the table's other keys `given` checked against its declaration.
///
/// # Errors
/// An unknown name (listing the valid ones, with a suggestion), a key the component does not
/// take, a value outside its declaration, or a conflict its `build` reports.
pub(crate) fn resolve_component<T, C: Builds<T>>(
    src: &Source<'_>,
    field: &str,
    noun: &str,
    kind_key: Option<&str>,
    registry: &[&C],
    name: &Spanned<String>,
    given: &Given,
) -> Result<T, ScenarioError> {
    let (name, name_span) = (name.get_ref().as_str(), name.span());
    let Some(component) = registry.iter().find(|c| c.name() == name) else {
        let names: Vec<&str> = registry.iter().map(|c| c.name()).collect();
        return Err(src.error(
            Some(name_span),
            kind_key.map_or_else(|| field.to_owned(), |k| format!("{field}.{k}")),
            unknown_choice(noun, name, &names),
        ));
    };
    let values = resolve(src, field, noun, *component, registry, given)?;
    component
        .build(&values)
        .map_err(|(key, message)| src.error(values.span(key), format!("{field}.{key}"), message))
}

/// Checked values of one table, each with the span of its value.
#[derive(Clone, Debug, Default)]
pub struct Resolved {
    values: Vec<(&'static str, Value, Range<usize>)>,
}

impl Resolved {
    fn get(&self, name: &str) -> Option<&Value> {
        self.values
            .iter()
            .find(|(n, _, _)| *n == name)
            .map(|(_, v, _)| v)
    }

    /// Whether the file set `name`.
    #[must_use]
    pub fn has(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// The span of the value of `name`, if set.
    #[must_use]
    pub fn span(&self, name: &str) -> Option<Range<usize>> {
        self.values
            .iter()
            .find(|(n, _, _)| *n == name)
            .map(|(_, _, s)| s.clone())
    }

    /// A boolean parameter, if set.
    #[must_use]
    pub fn bool(&self, name: &str) -> Option<bool> {
        match self.get(name)? {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// An integer parameter, if set (inside its declared range).
    #[must_use]
    pub fn int(&self, name: &str) -> Option<i64> {
        match self.get(name)? {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }

    /// An integer parameter whose declared range fits `u32`, if set.
    #[must_use]
    pub fn u32(&self, name: &str) -> Option<u32> {
        self.int(name).and_then(|i| u32::try_from(i).ok())
    }

    /// An integer parameter whose declared range fits `u8`, if set.
    #[must_use]
    pub fn u8(&self, name: &str) -> Option<u8> {
        self.int(name).and_then(|i| u8::try_from(i).ok())
    }

    /// A number parameter, if set.
    #[must_use]
    pub fn float(&self, name: &str) -> Option<f64> {
        match self.get(name)? {
            Value::Float(f) => Some(*f),
            _ => None,
        }
    }

    /// A duration parameter, if set.
    #[must_use]
    pub fn duration(&self, name: &str) -> Option<Dur> {
        match self.get(name)? {
            Value::Duration(d) => Some(*d),
            _ => None,
        }
    }

    /// The items of a list parameter, if set.
    #[must_use]
    pub fn list(&self, name: &str) -> Option<&[Value]> {
        match self.get(name)? {
            Value::List(items) => Some(items),
            _ => None,
        }
    }

    /// A parameter of [`Kind::Other`] as written, if set.
    #[must_use]
    pub fn raw(&self, name: &str) -> Option<&RawValue> {
        match self.get(name)? {
            Value::Raw(raw) => Some(raw),
            _ => None,
        }
    }

    /// A choice parameter, if set.
    #[must_use]
    pub fn choice(&self, name: &str) -> Option<&'static str> {
        match self.get(name)? {
            Value::Choice(c) => Some(c),
            _ => None,
        }
    }
}

/// A problem that involves more than one value, found after every value passed its own check:
/// the key to point at and the message.
pub type Conflict = (&'static str, String);

/// Check `given` (the keys of table `field` that belong to component `owner` of kind `noun`)
/// against `owner`'s declarations. A key that `owner` does not declare but another component
/// in `all` does is reported as belonging to those.
///
/// # Errors
/// The first key that is not declared or whose value does not fit its declaration.
pub(crate) fn resolve<D: Declared + ?Sized>(
    src: &Source<'_>,
    field: &str,
    noun: &str,
    owner: &D,
    all: &[&D],
    given: &Given,
) -> Result<Resolved, ScenarioError> {
    let mut out = Resolved::default();
    for (key, value) in given {
        let at = format!("{field}.{key}");
        let Some(param) = owner.params().iter().find(|p| p.name == key) else {
            let owners: Vec<&str> = all
                .iter()
                .filter(|d| d.params().iter().any(|p| p.name == key))
                .map(|d| d.name())
                .collect();
            let takes: Vec<&str> = owner.params().iter().map(|p| p.name).collect();
            let takes = if takes.is_empty() {
                "it takes none".to_owned()
            } else {
                format!("it takes: {}", takes.join(", "))
            };
            let message = if owners.is_empty() {
                let mut m = format!(
                    "{noun} `{}` has no parameter `{key}` ({takes})",
                    owner.name()
                );
                let names: Vec<&str> = owner.params().iter().map(|p| p.name).collect();
                if let Some(s) = suggest(key, &names) {
                    let _ = write!(m, " (did you mean `{s}`?)");
                }
                m
            } else {
                format!(
                    "`{key}` is a {} parameter; {noun} `{}` has no such parameter ({takes})",
                    owners.join("/"),
                    owner.name()
                )
            };
            return Err(src.error(Some(value.span()), at, message));
        };
        let v = match (param.kind, value.get_ref()) {
            (Kind::List { item, .. }, RawValue::Array(items)) => {
                let mut checked = Vec::with_capacity(items.len());
                for (i, it) in items.iter().enumerate() {
                    let v = item(it.get_ref())
                        .map_err(|m| src.error(Some(it.span()), format!("{at}[{i}]"), m))?;
                    checked.push(v);
                }
                Value::List(checked)
            }
            (_, raw) => check(param, raw).map_err(|m| src.error(Some(value.span()), at, m))?,
        };
        out.values.push((param.name, v, value.span()));
    }
    Ok(out)
}

/// One value against its declaration.
fn check(param: &Param, raw: &RawValue) -> Result<Value, String> {
    let unit = if param.unit.is_empty() {
        String::new()
    } else {
        format!(" {}", param.unit)
    };
    let wrong = || {
        format!(
            "expected {} {}, got {}",
            match param.kind {
                Kind::Int { .. } => "an",
                _ => "a",
            },
            match param.kind {
                Kind::Bool => "boolean (true or false)".to_owned(),
                Kind::Int { min, max } => format!("integer in {min}..={max}{unit}"),
                Kind::Float { .. } => format!("number in {}{unit}", param.kind.range()),
                Kind::Duration { .. } => {
                    "duration such as \"20ms\" or a number of seconds".to_owned()
                }
                Kind::Choice(names) => format!("name, one of: {}", names.join(", ")),
                Kind::List { range, .. } => format!("list of {range}"),
                Kind::Other { ty, range, .. } => format!("{ty} ({range})"),
            },
            raw.describe()
        )
    };
    match (param.kind, raw) {
        (Kind::Bool, RawValue::Bool(b)) => Ok(Value::Bool(*b)),
        (Kind::Int { min, max }, RawValue::Int(i)) => {
            if (min..=max).contains(i) {
                Ok(Value::Int(*i))
            } else {
                Err(format!("must be in {min}..={max}{unit}, got {i}"))
            }
        }
        (
            Kind::Float {
                min,
                min_open,
                max,
                max_open,
            },
            RawValue::Float(_) | RawValue::Int(_),
        ) => {
            let v = match raw {
                RawValue::Float(f) => *f,
                #[expect(clippy::cast_precision_loss, reason = "a number written in a file")]
                RawValue::Int(i) => *i as f64,
                _ => unreachable!("matched above"),
            };
            let above = if min_open { v > min } else { v >= min };
            let below = if max_open { v < max } else { v <= max };
            if above && below {
                Ok(Value::Float(v))
            } else {
                Err(format!("must be in {}{unit}, got {v}", param.kind.range()))
            }
        }
        (Kind::Duration { max }, RawValue::Int(_) | RawValue::Float(_) | RawValue::Str(_)) => {
            let as_toml = match raw {
                RawValue::Int(i) => toml::Value::Integer(*i),
                RawValue::Float(f) => toml::Value::Float(*f),
                RawValue::Str(s) => toml::Value::String(s.clone()),
                _ => unreachable!("matched above"),
            };
            let TimeValue(d) =
                TimeValue::deserialize(as_toml).map_err(|e| e.message().to_owned())?;
            if d > max {
                Err(format!(
                    "must be at most {}, got {}",
                    fmt_dur(max),
                    fmt_dur(d)
                ))
            } else {
                Ok(Value::Duration(d))
            }
        }
        (Kind::Choice(names), RawValue::Str(s)) => names
            .iter()
            .find(|n| **n == s.as_str())
            .map(|n| Value::Choice(n))
            .ok_or_else(|| unknown_choice(param.doc_noun(), s, names)),
        (Kind::Other { .. }, raw) => Ok(Value::Raw(raw.clone())),
        _ => Err(wrong()),
    }
}

impl Param {
    /// The noun for an unknown choice: the parameter's name in words (`slow start`).
    fn doc_noun(&self) -> &'static str {
        match self.name {
            "slow_start" => "slow start",
            "ecn" => "ECN mode",
            n => n,
        }
    }
}

/// Plain-text listing of `decls` and their parameters (`cclab list … --params`).
#[must_use]
pub fn table<D: Declared + ?Sized>(decls: &[&D]) -> String {
    let mut s = String::new();
    for d in decls {
        let _ = writeln!(s, "{:<16} {}  [{}]", d.name(), d.doc(), d.source());
        for p in d.params() {
            let unit = if p.unit.is_empty() {
                String::new()
            } else {
                format!(" {}", p.unit)
            };
            let _ = writeln!(
                s,
                "  {:<18} {:<8} default {:<12} range {}{unit}",
                p.name,
                p.kind.type_name(),
                p.default,
                p.kind.range()
            );
            let _ = writeln!(s, "  {:<18} {}  [{}]", "", p.doc, p.source);
        }
    }
    s
}

/// Markdown listing of `decls` (the README's key tables): one heading line per component and
/// one table row per parameter; a list without parameters is one table of names.
#[must_use]
pub fn markdown<D: Declared + ?Sized>(decls: &[&D]) -> String {
    let mut s = String::new();
    if decls.iter().all(|d| d.params().is_empty()) {
        // Names only (ECN modes, slow starts, metrics): one table.
        let _ = writeln!(s, "| name | meaning | source |");
        let _ = writeln!(s, "|---|---|---|");
        for d in decls {
            let _ = writeln!(s, "| `{}` | {} | {} |", d.name(), d.doc(), d.source());
        }
        return s;
    }
    for d in decls {
        let _ = writeln!(s, "**`{}`**: {} ({}).", d.name(), d.doc(), d.source());
        if d.params().is_empty() {
            let _ = writeln!(s, "No parameters.");
            let _ = writeln!(s);
            continue;
        }
        let _ = writeln!(s);
        let _ = writeln!(s, "| key | type | default | range | meaning | source |");
        let _ = writeln!(s, "|---|---|---|---|---|---|");
        for p in d.params() {
            let unit = if p.unit.is_empty() {
                String::new()
            } else {
                format!(" {}", p.unit)
            };
            let _ = writeln!(
                s,
                "| `{}` | {} | `{}` | {}{unit} | {} | {} |",
                p.name,
                p.kind.type_name(),
                p.default,
                p.kind.range().replace('|', "\\|"),
                p.doc,
                p.source
            );
        }
        let _ = writeln!(s);
    }
    s
}
