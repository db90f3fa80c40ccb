//! Rates that change over time on a preset's links (`[[links]]`): a piecewise-constant schedule
//! (steps, a square or sine oscillation, a CSV of steps) or a mahimahi trace, in place of the
//! link's constant rate; their declarations, listed by `cclab list rates`.
//!
//! Contract: each kind is declared once, in its own file under this module, as a [`RateKind`]
//! (name, doc, source, keys, `build`) listed in [`ALL`]. A `[[links]]` entry names one
//! directed `link` of the preset (`bottleneck`, `bottleneck_reverse`, `uplink`, `downlink`, a
//! host's NIC such as `s0->left`; an unknown name is answered with the preset's links) and its
//! `rate` kind; the other keys are the kind's, checked like an element's. A file (`csv`,
//! `trace`) is read relative to the scenario file, at most [`crate::input::MAX_INPUT_BYTES`]; a
//! malformed line is an error at the `file` key whose message starts with the file and line
//! (`traces/x.up:12: …`). The link keeps its queue, delay and loss; its rate becomes the
//! model's (`LinkConfig::rate_shape`), and its nominal rate (a mean, or a one-shot schedule's
//! peak) stands for it where a single number is needed (an AQM's parameters). A periodic
//! schedule makes at most [`MAX_RATE_CHANGES`] rate changes in a run.

mod csv;
mod oscillation;
mod steps;
mod trace;

use std::ops::Range;
use std::path::{Path, PathBuf};

use cclab_sim::net::ElementSpec;
use cclab_sim::net::rate::RateShape;
use cclab_sim::{Dur, LinkJitter, QueueConfig, SimConfig};
use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use toml::Spanned;

use super::ScenarioError;
use super::elements::Element;
use super::error::{Source, unknown_choice};
use super::params::{self, Component, Given, RawValue};
use crate::units::fmt_dur;

/// A rate model a `[[links]]` entry can name; `build` makes its [`RateSpec`].
pub type RateKind = Component<RateSpec>;

/// Every rate model, in the order `cclab list rates` prints them.
pub const ALL: &[&RateKind] = &[
    &steps::STEPS,
    &oscillation::SQUARE,
    &oscillation::SINE,
    &csv::CSV,
    &trace::TRACE,
];

/// Most rate changes a periodic schedule may make in a run (`duration / period`, rounded up,
/// times its steps per period): a transmitter walks every change it passes, so a 2 ns square
/// wave kept a one-day run busy for days. The bound is the one on PIE's and DualPI2's updates
/// ([`super::MAX_TIMER_FIRINGS`]), about as many events as a 100 Mbit/s flow makes in 10 s.
pub const MAX_RATE_CHANGES: u64 = super::MAX_TIMER_FIRINGS;

/// What a kind's keys describe: the shape itself, or a file to read it from.
#[derive(Clone, Debug)]
pub enum RateSpec {
    /// Built from the keys alone.
    Shape(RateShape),
    /// Read from `path` (relative to the scenario file) by `parse`.
    File {
        /// The file as written.
        path: String,
        /// Text to shape, or (1-based line, what is wrong).
        parse: fn(&str) -> Result<RateShape, (usize, String)>,
    },
}

/// The `file` key of a kind read from a file (`csv`, `trace`), with its meaning and source.
const fn file_param(doc: &'static str, source: &'static str) -> params::Param {
    params::Param {
        name: "file",
        kind: params::Kind::Other {
            ty: "path",
            range: "a file relative to the scenario file",
            quoted: true,
        },
        unit: "",
        default: "—",
        doc,
        source,
    }
}

/// The [`RateSpec`] of a kind read from the file its `file` key names, by `parse`.
fn file_spec(
    v: &params::Resolved,
    parse: fn(&str) -> Result<RateShape, (usize, String)>,
) -> Result<RateSpec, params::Conflict> {
    match v.raw("file") {
        Some(RawValue::Str(path)) => Ok(RateSpec::File {
            path: path.clone(),
            parse,
        }),
        Some(other) => Err((
            "file",
            format!("expected a file name, got {}", other.describe()),
        )),
        None => Err(("file", "`file` is required".into())),
    }
}

/// One resolved `[[links]]` entry.
#[derive(Clone, Debug, PartialEq)]
pub struct ShapedLink {
    /// Name of the link.
    pub link: String,
    /// Its rate over time.
    pub shape: RateShape,
}

/// One resolved `[[links]]` entry with `delay_model = "jitter"`.
#[derive(Clone, Debug, PartialEq)]
pub struct JitteredLink {
    /// Name of the link.
    pub link: String,
    /// Its jitter.
    pub jitter: LinkJitter,
}

/// Delay models a `[[links]]` entry can name with `delay_model`: a jitter drawn in the link's
/// own delay line, with the `jitter` element's keys (`cclab list elements --params`).
pub const DELAY_MODELS: &[&Element] = &[super::elements::JITTER];

/// One `[[links]]` table as written: `link`, `rate` or `delay_model`, and the kind's keys.
#[derive(Debug)]
struct RawLink {
    link: Option<Spanned<String>>,
    rate: Option<Spanned<String>>,
    delay_model: Option<Spanned<String>>,
    params: Given,
}

impl<'de> Deserialize<'de> for RawLink {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawLink;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a link table with `link` and `rate`")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawLink, A::Error> {
                let mut e = RawLink {
                    link: None,
                    rate: None,
                    delay_model: None,
                    params: Vec::new(),
                };
                while let Some(key) = map.next_key::<String>()? {
                    let slot = match key.as_str() {
                        "link" => &mut e.link,
                        "rate" => &mut e.rate,
                        "delay_model" => &mut e.delay_model,
                        _ => {
                            let value: Spanned<RawValue> = map.next_value()?;
                            e.params.push((key, value));
                            continue;
                        }
                    };
                    if slot.is_some() {
                        return Err(de::Error::custom(format!("duplicate key `{key}`")));
                    }
                    *slot = Some(map.next_value()?);
                }
                Ok(e)
            }
        }
        d.deserialize_map(V)
    }
}

/// The part of a scenario file this module reads.
#[derive(Debug, Deserialize)]
struct LinksOnly {
    #[serde(default)]
    links: Vec<Spanned<RawLink>>,
}

/// The `[[links]]` of scenario text `src`, checked against [`ALL`] and the links of `cfg`, with
/// their files read relative to `dir` (default: the directory of `src.origin`).
///
/// # Errors
/// A missing `link` or `rate`, an unknown kind or link (with the valid ones), a link named
/// twice, a key the kind does not take or a value outside its declaration, a file that cannot
/// be read or is too large, and a malformed line of it (the message names the file and the line).
pub(crate) fn resolve(
    src: &Source<'_>,
    dir: Option<&Path>,
    cfg: &SimConfig,
) -> Result<(Vec<ShapedLink>, Vec<JitteredLink>), ScenarioError> {
    let raw: LinksOnly = toml::from_str(src.text).map_err(|e| src.toml_error(&e))?;
    let mut out: Vec<ShapedLink> = Vec::with_capacity(raw.links.len());
    let mut jittered: Vec<JitteredLink> = Vec::new();
    for (i, entry) in raw.links.iter().enumerate() {
        let field = format!("links[{i}]");
        let span: Range<usize> = entry.span();
        let e = entry.get_ref();
        let missing = |key: &str| {
            src.error(
                Some(span.clone()),
                format!("{field}.{key}"),
                format!("a `[[links]]` entry needs `{key}`"),
            )
        };
        if let (Some(_), Some(model)) = (&e.rate, &e.delay_model) {
            return Err(src.error(
                Some(model.span()),
                format!("{field}.delay_model"),
                "an entry gives a `rate` or a `delay_model`, not both: write two entries for the link".to_owned(),
            ));
        }
        if let Some(model) = &e.delay_model {
            let link = e.link.as_ref().ok_or_else(|| missing("link"))?;
            jittered.push(resolve_jitter(
                src, &field, cfg, link, model, &e.params, &jittered,
            )?);
            continue;
        }
        let kind = e.rate.as_ref().ok_or_else(|| {
            src.error(
                Some(span.clone()),
                format!("{field}.rate"),
                "a `[[links]]` entry needs `rate` (a rate model) or `delay_model` (`jitter`)"
                    .to_owned(),
            )
        })?;
        let link = e.link.as_ref().ok_or_else(|| missing("link"))?;
        let spec = params::resolve_component(
            src,
            &field,
            "rate model",
            Some("rate"),
            ALL,
            kind,
            &e.params,
        )?;
        let name = link.get_ref();
        let Some(l) = cfg.links.iter().find(|l| l.name == *name) else {
            let names: Vec<&str> = cfg.links.iter().map(|l| l.name.as_str()).collect();
            return Err(src.error(
                Some(link.span()),
                format!("{field}.link"),
                unknown_choice("link", name, &names),
            ));
        };
        if l.rate_bps.is_none() {
            return Err(src.error(
                Some(link.span()),
                format!("{field}.link"),
                format!(
                    "link `{name}` has no rate (a pure delay line): it cannot take a rate model"
                ),
            ));
        }
        if out.iter().any(|s| s.link == *name) {
            return Err(src.error(
                Some(link.span()),
                format!("{field}.link"),
                format!("link `{name}` already has a rate model (one `[[links]]` entry per link)"),
            ));
        }
        let shape = match spec {
            RateSpec::Shape(s) => s,
            RateSpec::File { path, parse } => {
                let file_span = e
                    .params
                    .iter()
                    .find(|(k, _)| k == "file")
                    .map(|(_, v)| v.span());
                load(src, dir, &field, file_span, &path, parse)?
            }
        };
        if let RateShape::Schedule(sched) = &shape
            && let Some(period) = sched.period()
        {
            let steps = sched.steps().len() as u64;
            let changes = cfg.duration.0.div_ceil(period.0).saturating_mul(steps);
            if changes > MAX_RATE_CHANGES {
                let at = e
                    .params
                    .iter()
                    .find(|(k, _)| k == "period")
                    .map_or_else(|| kind.span(), |(_, v)| v.span());
                let shortest = Dur(cfg.duration.0.div_ceil((MAX_RATE_CHANGES / steps).max(1)));
                return Err(src.error(
                    Some(at),
                    format!("{field}.period"),
                    format!(
                        "{steps} rate changes every {} for {} make {changes} rate changes; at \
                         most {MAX_RATE_CHANGES} are allowed: use a period of at least {}{}",
                        fmt_dur(period),
                        fmt_dur(cfg.duration),
                        fmt_dur(shortest),
                        if steps > 2 { " or fewer steps" } else { "" }
                    ),
                ));
            }
        }
        out.push(ShapedLink {
            link: name.clone(),
            shape,
        });
    }
    Ok((out, jittered))
}

/// A `delay_model = "jitter"` entry: the `jitter` element's keys, on a link with a rate and a
/// drop-tail queue that has no jitter yet.
fn resolve_jitter(
    src: &Source<'_>,
    field: &str,
    cfg: &SimConfig,
    link: &Spanned<String>,
    model: &Spanned<String>,
    given: &Given,
    earlier: &[JitteredLink],
) -> Result<JitteredLink, ScenarioError> {
    let spec = params::resolve_component(
        src,
        field,
        "delay model",
        Some("delay_model"),
        DELAY_MODELS,
        model,
        given,
    )?;
    let ElementSpec::Jitter {
        dist,
        correlation,
        reorder,
    } = spec
    else {
        unreachable!("the only delay model is the jitter")
    };
    let name = link.get_ref();
    let at = |message: String| src.error(Some(link.span()), format!("{field}.link"), message);
    let Some(l) = cfg.links.iter().find(|l| l.name == *name) else {
        let names: Vec<&str> = cfg.links.iter().map(|l| l.name.as_str()).collect();
        return Err(at(unknown_choice("link", name, &names)));
    };
    if l.rate_bps.is_none() || !matches!(l.queue, QueueConfig::DropTail { .. }) {
        return Err(at(format!(
            "link `{name}` has no rate or has an AQM: a jitter in its delay line needs a rate and a drop-tail queue (put a `jitter` element on its far node instead)"
        )));
    }
    if earlier.iter().any(|j| j.link == *name) {
        return Err(at(format!(
            "link `{name}` already has a jitter (one `delay_model` entry per link)"
        )));
    }
    Ok(JitteredLink {
        link: name.clone(),
        jitter: LinkJitter {
            dist,
            correlation,
            reorder,
        },
    })
}

/// Give each jittered link of `cfg` its jitter.
///
/// # Panics
/// If a link does not exist ([`resolve`] checked them against the same preset).
pub(crate) fn attach_jitter(links: &[JitteredLink], cfg: &mut SimConfig) {
    for j in links {
        let l = cfg
            .links
            .iter_mut()
            .find(|l| l.name == j.link)
            .expect("jittered links are checked when the scenario is parsed");
        l.jitter = Some(j.jitter);
    }
}

/// Read and parse the file `path` (relative to the scenario file).
fn load(
    src: &Source<'_>,
    dir: Option<&Path>,
    field: &str,
    span: Option<Range<usize>>,
    path: &str,
    parse: fn(&str) -> Result<RateShape, (usize, String)>,
) -> Result<RateShape, ScenarioError> {
    let full = match dir {
        Some(d) if Path::new(path).is_relative() => d.join(path),
        _ => relative_to(src.origin, path),
    };
    let text = crate::input::read_text(&full).map_err(|e| {
        src.error(
            span.clone(),
            format!("{field}.file"),
            format!("cannot read `{}`: {e}", full.display()),
        )
    })?;
    parse(&text).map_err(|(line, message)| {
        let at = if line > 0 {
            format!("{}:{line}", full.display())
        } else {
            full.display().to_string()
        };
        src.error(span, format!("{field}.file"), format!("{at}: {message}"))
    })
}

/// `path` as seen from the directory of the scenario file `origin`.
fn relative_to(origin: &str, path: &str) -> PathBuf {
    let p = Path::new(path);
    if p.is_absolute() {
        return p.to_owned();
    }
    Path::new(origin)
        .parent()
        .map_or_else(|| p.to_owned(), |dir| dir.join(p))
}

/// Give each shaped link of `cfg` its rate model; its `rate_bps` becomes the nominal rate.
///
/// # Panics
/// If a link does not exist ([`resolve`] checked them against the same preset).
pub(crate) fn attach(links: &[ShapedLink], cfg: &mut SimConfig) {
    for s in links {
        let l = cfg
            .links
            .iter_mut()
            .find(|l| l.name == s.link)
            .expect("shaped links are checked when the scenario is parsed");
        l.rate_bps = Some(s.shape.nominal_bps().max(1));
        l.rate_shape = Some(s.shape.clone());
    }
}

/// One line for `cclab check`: the link and its model.
#[must_use]
pub fn describe(l: &ShapedLink) -> String {
    let what = match &l.shape {
        RateShape::Schedule(s) => format!(
            "a schedule of {} steps{}",
            s.steps().len(),
            s.period().map_or_else(String::new, |p| format!(
                " repeating every {}",
                crate::units::fmt_dur(p)
            ))
        ),
        RateShape::Trace(t) => format!(
            "a trace of {} opportunities over {}",
            t.timestamps().len(),
            crate::units::fmt_dur(t.period())
        ),
    };
    format!(
        "link {}: rate from {what}, nominal {}",
        l.link,
        crate::units::fmt_rate(l.shape.nominal_bps())
    )
}

/// A rate as a key or a file gives it: a number of bit/s or a string with a unit
/// (`"12Mbit"`); zero (`0`, `"0Mbit"`) is an outage.
fn rate_value(raw: &RawValue) -> Result<u64, String> {
    let zero = || "a rate is ≥ 0 bit/s".to_owned();
    match raw {
        RawValue::Int(n) => u64::try_from(*n).map_err(|_| zero()),
        RawValue::Float(f) if *f >= 0.0 && f.is_finite() =>
        {
            #[expect(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                reason = "a non-negative finite rate in bit/s, rounded to whole bits"
            )]
            Ok(f.round() as u64)
        }
        RawValue::Str(s) => {
            let digits = s
                .trim()
                .trim_end_matches(|c: char| c.is_ascii_alphabetic() || c == '/');
            if digits.parse::<f64>().is_ok_and(|v| v == 0.0) {
                return Ok(0);
            }
            crate::units::parse_rate(s).map_err(|e| e.0)
        }
        other => Err(format!(
            "expected a rate such as \"12Mbit\" or a number of bit/s, got {}",
            other.describe()
        )),
    }
}

/// The declared kind of a rate key.
const RATE: params::Kind = params::Kind::Other {
    ty: "rate",
    range: "bit/s, or e.g. \"12Mbit\"",
    quoted: true,
};

#[cfg(test)]
mod tests;
