//! `analysis.curves`: a metric against a numeric grid axis, one line per level of another axis.
//!
//! Contract: `resolve` checks one `analysis.curves[i]` table against the grid and either
//! returns a [`Curve`] or a [`ScenarioError`] naming the file, line and field
//! (`analysis.curves[i].x`, `.metric`, …) and listing the valid values: `x`, `series` and
//! `compare` must be different grid axes, every level of `x` must be a number (or a string that
//! parses as one; distinct values), `metric` a known metric, `threshold` a finite number. The
//! curve's levels of `x` are kept in ascending numeric order ([`Curve::x_levels`]), which is
//! the order "from a level on" ([`sustained_from`]) refers to.

use toml::Spanned;

use super::Axis;
use crate::scenario::ScenarioError;
use crate::scenario::error::{Source, unknown_choice};

/// One `analysis.curves` entry, checked.
#[derive(Clone, Debug, PartialEq)]
pub struct Curve {
    /// The numeric axis on the x axis (path).
    pub x: String,
    /// Its levels in ascending numeric order: (level index on the axis, value).
    pub x_levels: Vec<(usize, f64)>,
    /// The metric on the y axis (from [`crate::suite::METRICS`]).
    pub metric: String,
    /// The axis with one line per level (path).
    pub series: String,
    /// The axis whose levels are shown side by side (path), if any.
    pub compare: Option<String>,
    /// The level the median must reach and keep, if any.
    pub threshold: Option<f64>,
}

/// `analysis.curves[i]` as written.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCurve {
    x: Spanned<String>,
    metric: Spanned<String>,
    series: Spanned<String>,
    compare: Option<Spanned<String>>,
    threshold: Option<Spanned<f64>>,
}

/// The numeric value of a level: an integer, a float, or a string that parses as a finite
/// number (`"0.5"`).
#[must_use]
pub fn numeric_level(v: &toml::Value) -> Option<f64> {
    let x = match v {
        toml::Value::Integer(i) => *i as f64,
        toml::Value::Float(f) => *f,
        toml::Value::String(s) => s.trim().parse().ok()?,
        _ => return None,
    };
    x.is_finite().then_some(x)
}

/// Check `analysis.curves[i]` (`at`) against the grid's `axes` and the metric names.
pub(super) fn resolve(
    src: &Source<'_>,
    at: &str,
    r: &RawCurve,
    axes: &[Axis],
    metric_names: &[&str],
) -> Result<Curve, ScenarioError> {
    let axis_names: Vec<&str> = axes.iter().map(|a| a.path.as_str()).collect();
    let axis_of = |key: &str, v: &Spanned<String>| {
        axes.iter().find(|a| a.path == *v.get_ref()).ok_or_else(|| {
            let msg = if axis_names.is_empty() {
                format!("`{}`: the study has no grid", v.get_ref())
            } else {
                unknown_choice("grid axis", v.get_ref(), &axis_names)
            };
            src.error(Some(v.span()), format!("{at}.{key}"), msg)
        })
    };
    let x = axis_of("x", &r.x)?;
    let series = axis_of("series", &r.series)?;
    let compare = r
        .compare
        .as_ref()
        .map(|c| axis_of("compare", c))
        .transpose()?;
    let mut named: Vec<(&str, &Spanned<String>, &Axis)> = vec![("x", &r.x, x)];
    named.push(("series", &r.series, series));
    if let (Some(v), Some(a)) = (&r.compare, compare) {
        named.push(("compare", v, a));
    }
    for (i, (key, v, a)) in named.iter().enumerate() {
        if let Some((other, ..)) = named[..i].iter().find(|(_, _, b)| b.path == a.path) {
            return Err(src.error(
                Some(v.span()),
                format!("{at}.{key}"),
                format!(
                    "`{}` is already `{other}`: `x`, `series` and `compare` must be different \
                     axes",
                    a.path
                ),
            ));
        }
    }
    let mut x_levels: Vec<(usize, f64)> = Vec::with_capacity(x.levels.len());
    for (i, l) in x.levels.iter().enumerate() {
        let Some(v) = numeric_level(&l.value) else {
            return Err(src.error(
                Some(r.x.span()),
                format!("{at}.x"),
                format!(
                    "axis `{}` must have numeric levels (numbers, or strings that parse as \
                     numbers, e.g. 0.5 or \"0.5\"), but its level {i} is `{}`",
                    x.path, l.label
                ),
            ));
        };
        if let Some((j, _)) = x_levels.iter().find(|(_, w)| *w == v) {
            return Err(src.error(
                Some(r.x.span()),
                format!("{at}.x"),
                format!(
                    "axis `{}` has the value {v} twice (levels `{}` and `{}`): an x level \
                     must be a distinct number",
                    x.path, x.levels[*j].label, l.label
                ),
            ));
        }
        x_levels.push((i, v));
    }
    x_levels.sort_by(|a, b| a.1.total_cmp(&b.1));
    if !metric_names.contains(&r.metric.get_ref().as_str()) {
        return Err(src.error(
            Some(r.metric.span()),
            format!("{at}.metric"),
            unknown_choice("metric", r.metric.get_ref(), metric_names),
        ));
    }
    let threshold = match &r.threshold {
        None => None,
        Some(t) if t.get_ref().is_finite() => Some(*t.get_ref()),
        Some(t) => {
            return Err(src.error(
                Some(t.span()),
                format!("{at}.threshold"),
                format!(
                    "must be a finite number (a value of `{}`), got {}",
                    r.metric.get_ref(),
                    t.get_ref()
                ),
            ));
        }
    };
    Ok(Curve {
        x: x.path.clone(),
        x_levels,
        metric: r.metric.get_ref().clone(),
        series: series.path.clone(),
        compare: compare.map(|a| a.path.clone()),
        threshold,
    })
}

/// The first index from which every value is at least `threshold`: the smallest `i` such that
/// `values[i..]` are all `Some(v)` with `v ≥ threshold` (a missing value breaks the run).
/// `None` when the last value does not reach it (or there are no values); `Some(0)` when every
/// value does.
#[must_use]
pub fn sustained_from(values: &[Option<f64>], threshold: f64) -> Option<usize> {
    let held = values
        .iter()
        .rev()
        .take_while(|v| v.is_some_and(|v| v >= threshold))
        .count();
    (held > 0).then(|| values.len() - held)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A dumbbell study with a numeric axis (the CPU share, in file order 1, 0.5, 0.25), a
    /// non-numeric one (the rate) and the controller.
    const STUDY: &str = r#"
name = "c"
[base]
name = "c"
duration = "1s"
[base.topology]
preset = "dumbbell"
rate = "10Mbit"
delay = "5ms"
[[base.flows]]
controller = "cubic"
[base.flows.host]
cpu_share = 1.0
[grid]
flows.0.host.cpu_share = [1.0, 0.5, 0.25]
topology.rate = ["10Mbit", "20Mbit"]
flows.0.controller = ["cubic", "bbr3"]
[analysis]
curves = [
    { x = "flows.0.host.cpu_share", metric = "window_goodput_pct", series = "flows.0.controller", threshold = 90 },
    { x = "flows.0.host.cpu_share", metric = "retransmits", series = "flows.0.controller", compare = "topology.rate" },
]
"#;

    fn parse(text: &str) -> Result<super::super::Study, String> {
        super::super::parse(text, "s.toml", std::path::Path::new(".")).map_err(|e| e.to_string())
    }

    /// `s.toml:LINE:` of the first line containing `needle`.
    fn at_line_of(text: &str, needle: &str) -> String {
        let line = text[..text.find(needle).expect("needle")]
            .matches('\n')
            .count()
            + 1;
        format!("s.toml:{line}:")
    }

    #[test]
    fn curves_parse_with_levels_in_ascending_order() {
        let s = parse(STUDY).unwrap();
        let c = &s.analysis.curves;
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].x_levels, vec![(2, 0.25), (1, 0.5), (0, 1.0)]);
        assert_eq!(
            (c[0].threshold, c[0].compare.as_deref()),
            (Some(90.0), None)
        );
        assert_eq!(
            (c[1].threshold, c[1].compare.as_deref()),
            (None, Some("topology.rate"))
        );
        assert_eq!(c[1].metric, "retransmits");
        assert!(s.describe().contains("curve 0: window_goodput_pct against"));
    }

    /// Unknown axes, a non-numeric x, an unknown metric, the same axis twice, an unknown key
    /// and a non-finite threshold: each names the file, the line and the field, and lists the
    /// valid values where there is a list.
    #[test]
    fn bad_curves_are_located_errors() {
        let cases = [
            (
                "series = \"flows.0.controller\", threshold",
                "series = \"flows.0.controler\", threshold",
                "analysis.curves[0].series",
                "flows.0.controller",
            ),
            (
                "compare = \"topology.rate\"",
                "compare = \"topology.delay\"",
                "analysis.curves[1].compare",
                "expected one of: flows.0.host.cpu_share, flows.0.controller, topology.rate",
            ),
            (
                "x = \"flows.0.host.cpu_share\", metric = \"window",
                "x = \"topology.rate\", metric = \"window",
                "analysis.curves[0].x",
                "its level 0 is `10Mbit`",
            ),
            (
                "metric = \"retransmits\"",
                "metric = \"retransmit\"",
                "analysis.curves[1].metric",
                "did you mean `retransmits`",
            ),
            (
                "compare = \"topology.rate\"",
                "compare = \"flows.0.controller\"",
                "analysis.curves[1].compare",
                "is already `series`",
            ),
            (
                "threshold = 90",
                "threshold = nan",
                "analysis.curves[0].threshold",
                "finite",
            ),
            ("threshold = 90", "treshold = 90", "treshold", "threshold"),
        ];
        for (from, to, field, says) in cases {
            let text = STUDY.replacen(from, to, 1);
            assert_ne!(text, STUDY, "{from}");
            let e = parse(&text).unwrap_err();
            assert!(e.starts_with(&at_line_of(&text, to)), "{to}: {e}");
            assert!(e.contains(field) && e.contains(says), "{to}: {e}");
        }
    }

    #[test]
    fn reached_at_the_first_level() {
        assert_eq!(
            sustained_from(&[Some(95.0), Some(96.0), Some(90.0)], 90.0),
            Some(0)
        );
    }

    #[test]
    fn reached_then_lost_then_reached_again_counts_from_the_later_one() {
        let v = [Some(50.0), Some(91.0), Some(89.9), Some(92.0), Some(93.0)];
        assert_eq!(sustained_from(&v, 90.0), Some(3));
    }

    #[test]
    fn never_reached_or_lost_at_the_end() {
        assert_eq!(sustained_from(&[Some(10.0), Some(80.0)], 90.0), None);
        assert_eq!(sustained_from(&[Some(95.0), Some(80.0)], 90.0), None);
        assert_eq!(sustained_from(&[], 90.0), None);
    }

    #[test]
    fn a_missing_value_breaks_the_run() {
        assert_eq!(
            sustained_from(&[Some(95.0), None, Some(95.0)], 90.0),
            Some(2)
        );
        assert_eq!(sustained_from(&[Some(95.0), None], 90.0), None);
    }

    #[test]
    fn numeric_levels() {
        assert_eq!(numeric_level(&toml::Value::Integer(3)), Some(3.0));
        assert_eq!(numeric_level(&toml::Value::Float(0.15)), Some(0.15));
        assert_eq!(
            numeric_level(&toml::Value::String("0.25".into())),
            Some(0.25)
        );
        assert_eq!(numeric_level(&toml::Value::String("10ms".into())), None);
        assert_eq!(numeric_level(&toml::Value::String("inf".into())), None);
        assert_eq!(numeric_level(&toml::Value::Boolean(true)), None);
    }
}
