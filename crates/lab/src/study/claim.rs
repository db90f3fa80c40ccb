//! `[[claims]]`: a published finding stated as a testable comparison of two cells of the grid,
//! and its verdict over the study's repetitions.
//!
//! Contract: `resolve` checks one `claims[i]` table against the grid when the study is loaded
//! (before any run) and either returns a [`Claim`] or a [`ScenarioError`] naming the file, line
//! and key (`claims[i].a.flows.0.controller`, `.metric`, …) with the valid values: `metric` a
//! known metric (and `metric_b`, the metric of side `b`, when given), every selector key a grid
//! axis, every selector value a level of it, `a` and `b` different cells unless the metrics
//! differ, `expect` one of [`EXPECTATIONS`], `by` in [`MAX_BY`]'s range, `pool` grid
//! axes that no selector names, `id` a name unique in the file. [`evaluate`] is a pure function
//! of the study and the runs' values: one [`Outcome`] per claim and level combination of the
//! axes the claim leaves free, each with a [`Verdict`] by [`verdict`]'s rule.
//!
//! # Which cells a claim compares
//!
//! `a` and `b` select cells by axis and level label (`{ "flows.0.controller" = "cubic" }`).
//! - An axis named by only one side takes the same level on the other: `b = { elements.0 =
//!   "static" }` against `a = { flows.0.controller = "cubic", elements.0 = "flip 3s" }` is
//!   CUBIC on the static path.
//! - An axis named by neither side nor in `pool` is evaluated per level: one verdict per
//!   combination of those axes' levels (the same claim for the Linux and the ns-3 stack when
//!   the grid has a `flows."*".stack` axis the claim does not name).
//! - An axis in `pool` is merged: each side's sample holds the repetitions of every level of
//!   it (a claim about a set of conditions taken together, say every path of a grid run once
//!   per path).
//!
//! # The verdict
//!
//! The effect is the ratio θ of `a`'s values to `b`'s with its confidence interval
//! ([`stats::ratio_interval`], the interval that inverts the study's Mann-Whitney U test at
//! [`stats::ALPHA`]), reported as the relative difference θ − 1; `by` is the threshold `t` on
//! that scale. [`verdict`] then says:
//! - `lower`: holds when the interval's upper end is at most `1 − t` and the Mann-Whitney test
//!   marks the cells as different (p < 0.05 and reachable with these numbers of values);
//!   fails when its lower end is above `1 − t` (the reduction is certainly smaller than `t`,
//!   or there is none); inconclusive otherwise.
//! - `higher`: holds when the lower end is at least `1 + t` and the test marks a difference;
//!   fails when the upper end is below `1 + t`; inconclusive otherwise.
//! - `within`: holds when the whole interval lies in `[1 − t, 1 + t]` (equivalence: the 95 %
//!   interval inside the margin, stricter than the 90 % of two one-sided tests); fails when it
//!   lies entirely outside (above `1 + t` or below `1 − t`); inconclusive otherwise.
//!
//! With too few repetitions for an interval (fewer than 4 per side at 0.05) every claim is
//! inconclusive, and says why.

use std::fmt::Write as _;

use serde::Serialize;
use toml::Spanned;

use super::{Axis, Study, flatten_baseline};
use crate::scenario::ScenarioError;
use crate::scenario::error::{Source, clip, unknown_choice};
use crate::stats::{self, MannWhitney, RatioEstimate};

/// What `expect` may say: `a` lower than `b`, higher, or within `by` of it.
pub const EXPECTATIONS: &[&str] = &["lower", "higher", "within"];
/// Largest `by` (a relative threshold: 100 = `a` at least 101 times `b` for `higher`); `lower`
/// needs `by` below 1 (a value cannot fall by 100 % or more).
pub const MAX_BY: f64 = 100.0;
/// Most claims a study may have (each is evaluated per level of its free axes, and printed).
pub const MAX_CLAIMS: usize = 1000;

/// The expected direction of `a` against `b`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Expect {
    /// `a` below `b` by at least `by`.
    Lower,
    /// `a` above `b` by at least `by`.
    Higher,
    /// `a` within `±by` of `b`.
    Within,
}

impl Expect {
    /// `lower`, `higher` or `within`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Expect::Lower => "lower",
            Expect::Higher => "higher",
            Expect::Within => "within",
        }
    }
}

/// One checked `[[claims]]` entry.
#[derive(Clone, Debug, PartialEq)]
pub struct Claim {
    /// Short id (a name: letters, digits, `-`, `_`, `.`).
    pub id: String,
    /// The source's finding, in words, with the citation.
    pub source: String,
    /// The metric compared (from [`crate::suite::METRICS`]).
    pub metric: String,
    /// The metric taken on side `b` (`metric` unless `metric_b` says another; then `a` and `b`
    /// may be the same cell: two metrics of the same runs).
    pub metric_b: String,
    /// Cell `a`: (axis, level) for every axis either side names, in axis order.
    pub a: Vec<(String, String)>,
    /// Cell `b`, the same axes.
    pub b: Vec<(String, String)>,
    /// Expected direction of `a` against `b`.
    pub expect: Expect,
    /// Relative threshold (0.1 = 10 %).
    pub by: f64,
    /// Axes whose levels are merged into each side's sample, in axis order.
    pub pool: Vec<String>,
    /// Axes evaluated per level (named by no selector and not pooled), in axis order.
    pub per_level: Vec<String>,
}

/// `claims[i]` as written.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawClaim {
    id: Spanned<String>,
    source: Spanned<String>,
    metric: Spanned<String>,
    metric_b: Option<Spanned<String>>,
    a: Spanned<toml::Table>,
    b: Spanned<toml::Table>,
    expect: Spanned<String>,
    by: Option<Spanned<f64>>,
    pool: Option<Vec<Spanned<String>>>,
}

/// Check `claims` against the grid's `axes` and the metric names.
pub(super) fn resolve_all(
    src: &Source<'_>,
    raw: &[Spanned<RawClaim>],
    axes: &[Axis],
    metric_names: &[&str],
) -> Result<Vec<Claim>, ScenarioError> {
    if raw.len() > MAX_CLAIMS {
        return Err(src.error(
            Some(raw[MAX_CLAIMS].span()),
            format!("claims[{MAX_CLAIMS}]"),
            format!(
                "a study may have at most {MAX_CLAIMS} claims, this one has {}",
                raw.len()
            ),
        ));
    }
    let mut claims: Vec<Claim> = Vec::with_capacity(raw.len());
    for (i, r) in raw.iter().enumerate() {
        let at = format!("claims[{i}]");
        let c = resolve(src, &at, r.get_ref(), axes, metric_names)?;
        if let Some(j) = claims.iter().position(|o| o.id == c.id) {
            return Err(src.error(
                Some(r.get_ref().id.span()),
                format!("{at}.id"),
                format!(
                    "`{}` is already the id of claims[{j}]: give each claim its own",
                    c.id
                ),
            ));
        }
        claims.push(c);
    }
    Ok(claims)
}

fn resolve(
    src: &Source<'_>,
    at: &str,
    r: &RawClaim,
    axes: &[Axis],
    metric_names: &[&str],
) -> Result<Claim, ScenarioError> {
    let id = r.id.get_ref();
    if !crate::scenario::valid_name(id) {
        return Err(src.error(
            Some(r.id.span()),
            format!("{at}.id"),
            format!(
                "`{}` is not a usable claim id: use letters, digits, `-`, `_` and `.` (at most \
                 {} bytes)",
                clip(id),
                crate::scenario::MAX_NAME_LEN
            ),
        ));
    }
    if r.source.get_ref().trim().is_empty() {
        return Err(src.error(
            Some(r.source.span()),
            format!("{at}.source"),
            "must state the source's finding and cite it",
        ));
    }
    if !metric_names.contains(&r.metric.get_ref().as_str()) {
        return Err(src.error(
            Some(r.metric.span()),
            format!("{at}.metric"),
            unknown_choice("metric", r.metric.get_ref(), metric_names),
        ));
    }
    if let Some(m) = &r.metric_b
        && !metric_names.contains(&m.get_ref().as_str())
    {
        return Err(src.error(
            Some(m.span()),
            format!("{at}.metric_b"),
            unknown_choice("metric", m.get_ref(), metric_names),
        ));
    }
    let metric_b = r
        .metric_b
        .as_ref()
        .map_or(r.metric.get_ref(), Spanned::get_ref)
        .clone();
    let expect = match r.expect.get_ref().as_str() {
        "lower" => Expect::Lower,
        "higher" => Expect::Higher,
        "within" => Expect::Within,
        other => {
            return Err(src.error(
                Some(r.expect.span()),
                format!("{at}.expect"),
                unknown_choice("expectation", other, EXPECTATIONS),
            ));
        }
    };
    let by = match &r.by {
        None => 0.0,
        Some(b) => {
            let v = *b.get_ref();
            let max_ok = if expect == Expect::Lower {
                v < 1.0
            } else {
                v <= MAX_BY
            };
            if !(v.is_finite() && v >= 0.0 && max_ok) {
                let range = if expect == Expect::Lower {
                    "at least 0 and below 1 for `lower` (a value cannot fall by 100 % or more)"
                        .to_owned()
                } else {
                    format!("between 0 and {MAX_BY}")
                };
                return Err(src.error(
                    Some(b.span()),
                    format!("{at}.by"),
                    format!("must be a relative threshold {range} (0.1 = 10 %), got {v}"),
                ));
            }
            v
        }
    };
    if expect == Expect::Within && by == 0.0 {
        return Err(src.error(
            r.by.as_ref()
                .map_or(Some(r.expect.span()), |b| Some(b.span())),
            format!("{at}.by"),
            "`within` needs a margin above 0 (0.1 = within ±10 %): no interval lies within ±0",
        ));
    }
    let axis_names: Vec<&str> = axes.iter().map(|a| a.path.as_str()).collect();
    let mut sides: [Vec<(usize, String)>; 2] = [Vec::new(), Vec::new()];
    for (k, (key, sel)) in [("a", &r.a), ("b", &r.b)].into_iter().enumerate() {
        let mut flat = Vec::new();
        flatten_baseline(sel.get_ref(), &mut Vec::new(), &mut flat);
        for (path, level) in flat {
            let field = format!("{at}.{key}.{path}");
            let Some(ax) = axes.iter().position(|x| x.path == path) else {
                let msg = if axis_names.is_empty() {
                    format!(
                        "`{}`: the study has no grid, so no cells to compare",
                        clip(&path)
                    )
                } else {
                    unknown_choice("grid axis", &path, &axis_names)
                };
                return Err(src.error(Some(sel.span()), field, msg));
            };
            let labels: Vec<&str> = axes[ax].levels.iter().map(|l| l.label.as_str()).collect();
            let Some(level) = level else {
                return Err(src.error(
                    Some(sel.span()),
                    field,
                    format!(
                        "must be a level label of axis `{path}`: one of {}",
                        labels.join(", ")
                    ),
                ));
            };
            if !labels.contains(&level.as_str()) {
                return Err(src.error(
                    Some(sel.span()),
                    field,
                    format!(
                        "{} (axis `{path}`): the selector matches no cell",
                        unknown_choice("level", &level, &labels)
                    ),
                ));
            }
            sides[k].push((ax, level));
        }
    }
    // Complete each side with the other's axes; keep axis order.
    let mut named: Vec<usize> = sides.iter().flatten().map(|(ax, _)| *ax).collect();
    named.sort_unstable();
    named.dedup();
    let level_on = |k: usize, ax: usize| -> String {
        let own = sides[k].iter().find(|(x, _)| *x == ax);
        let other = sides[1 - k].iter().find(|(x, _)| *x == ax);
        own.or(other).map(|(_, l)| l.clone()).unwrap_or_default()
    };
    let a: Vec<(String, String)> = named
        .iter()
        .map(|&ax| (axes[ax].path.clone(), level_on(0, ax)))
        .collect();
    let b: Vec<(String, String)> = named
        .iter()
        .map(|&ax| (axes[ax].path.clone(), level_on(1, ax)))
        .collect();
    if a == b && metric_b == *r.metric.get_ref() {
        return Err(src.error(
            Some(r.b.span()),
            format!("{at}.b"),
            if named.is_empty() {
                "`a` and `b` name no grid axis: a claim compares two cells, e.g. a = { \
                 \"flows.0.controller\" = \"cubic\" } and b = { \"flows.0.controller\" = \"bbr3\" }"
                    .to_owned()
            } else {
                "`a` and `b` select the same cell: a claim compares two different levels of at \
                 least one axis"
                    .to_owned()
            },
        ));
    }
    let mut pool: Vec<usize> = Vec::new();
    for (j, p) in r.pool.iter().flatten().enumerate() {
        let field = format!("{at}.pool[{j}]");
        let Some(ax) = axes.iter().position(|x| x.path == *p.get_ref()) else {
            return Err(src.error(
                Some(p.span()),
                field,
                unknown_choice("grid axis", p.get_ref(), &axis_names),
            ));
        };
        if named.contains(&ax) {
            return Err(src.error(
                Some(p.span()),
                field,
                format!(
                    "`{}` is named in `a` or `b`: a pooled axis merges its levels, so it cannot \
                     also be fixed",
                    p.get_ref()
                ),
            ));
        }
        if !pool.contains(&ax) {
            pool.push(ax);
        }
    }
    pool.sort_unstable();
    let per_level: Vec<String> = (0..axes.len())
        .filter(|ax| !named.contains(ax) && !pool.contains(ax))
        .map(|ax| axes[ax].path.clone())
        .collect();
    Ok(Claim {
        id: id.clone(),
        source: r.source.get_ref().trim().to_owned(),
        metric: r.metric.get_ref().clone(),
        metric_b,
        a,
        b,
        expect,
        by,
        pool: pool.into_iter().map(|ax| axes[ax].path.clone()).collect(),
        per_level,
    })
}

/// A claim's verdict in one level combination.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// The data support the claim (see the module documentation for the rule).
    Holds,
    /// The data contradict it.
    Fails,
    /// Neither.
    Inconclusive,
}

impl Verdict {
    /// `holds`, `fails` or `inconclusive`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Holds => "holds",
            Verdict::Fails => "fails",
            Verdict::Inconclusive => "inconclusive",
        }
    }
}

/// The verdict of a claim expecting `expect` by `by` given the ratio estimate of `a` to `b`
/// and the Mann-Whitney test of `a` against `b` (see the module documentation), with the reason
/// in words.
#[must_use]
pub fn verdict(
    expect: Expect,
    by: f64,
    ratio: Option<&RatioEstimate>,
    test: Option<&MannWhitney>,
) -> (Verdict, String) {
    let Some(r) = ratio else {
        return (
            Verdict::Inconclusive,
            "no ratio: a side has no values of the metric (or a negative one)".to_owned(),
        );
    };
    if r.high.is_infinite() && r.low == 0.0 {
        return (
            Verdict::Inconclusive,
            format!(
                "too few values for a {} % interval (at least {} per side)",
                100.0 * (1.0 - stats::ALPHA),
                stats::mwu_min_repetitions(stats::ALPHA).unwrap_or(0)
            ),
        );
    }
    let significant = test.is_some_and(|t| t.significant(stats::ALPHA));
    let p = test.map_or_else(|| "none".to_owned(), |t| format!("{:.3}", t.p_value));
    let pct = |x: f64| format!("{:+}", round3(100.0 * (x - 1.0)));
    let lo = 1.0 - by;
    let hi = 1.0 + by;
    match expect {
        Expect::Lower => {
            if r.high <= lo && significant {
                (
                    Verdict::Holds,
                    format!(
                        "interval at or below {} % and p = {p} < {}",
                        pct(lo),
                        stats::ALPHA
                    ),
                )
            } else if r.low > lo {
                (
                    Verdict::Fails,
                    format!("interval entirely above {} %", pct(lo)),
                )
            } else if r.high <= lo {
                (
                    Verdict::Inconclusive,
                    format!(
                        "interval at or below {} % but p = {p} is not significant",
                        pct(lo)
                    ),
                )
            } else {
                (
                    Verdict::Inconclusive,
                    format!("interval reaches across {} %", pct(lo)),
                )
            }
        }
        Expect::Higher => {
            if r.low >= hi && significant {
                (
                    Verdict::Holds,
                    format!(
                        "interval at or above {} % and p = {p} < {}",
                        pct(hi),
                        stats::ALPHA
                    ),
                )
            } else if r.high < hi {
                (
                    Verdict::Fails,
                    format!("interval entirely below {} %", pct(hi)),
                )
            } else if r.low >= hi {
                (
                    Verdict::Inconclusive,
                    format!(
                        "interval at or above {} % but p = {p} is not significant",
                        pct(hi)
                    ),
                )
            } else {
                (
                    Verdict::Inconclusive,
                    format!("interval reaches across {} %", pct(hi)),
                )
            }
        }
        Expect::Within => {
            if r.low >= lo && r.high <= hi {
                (
                    Verdict::Holds,
                    format!("interval within [{}, {}] %", pct(lo), pct(hi)),
                )
            } else if r.low > hi || r.high < lo {
                (
                    Verdict::Fails,
                    format!("interval entirely outside [{}, {}] %", pct(lo), pct(hi)),
                )
            } else {
                (
                    Verdict::Inconclusive,
                    format!("interval reaches beyond [{}, {}] %", pct(lo), pct(hi)),
                )
            }
        }
    }
}

/// `x` rounded to three decimals (for messages and tables).
fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// One claim evaluated in one level combination of its per-level axes.
#[derive(Clone, Debug, Serialize)]
pub struct Outcome {
    /// The claim's index in [`Study::claims`].
    #[serde(skip)]
    pub claim: usize,
    /// (axis, level) of the claim's per-level axes (empty when it has none).
    pub levels: Vec<(String, String)>,
    /// Configuration labels of side `a` (several when axes are pooled).
    pub a_configs: Vec<String>,
    /// Configuration labels of side `b`.
    pub b_configs: Vec<String>,
    /// Values on side `a`.
    pub n_a: usize,
    /// Values on side `b`.
    pub n_b: usize,
    /// Median of `a`'s values.
    pub median_a: Option<f64>,
    /// Median of `b`'s values.
    pub median_b: Option<f64>,
    /// The effect: Hodges–Lehmann ratio of `a` to `b` minus 1.
    pub effect: Option<f64>,
    /// Lower end of its interval (θ_low − 1).
    pub effect_low: Option<f64>,
    /// Upper end (θ_high − 1; `None` when unbounded).
    pub effect_high: Option<f64>,
    /// The interval's confidence.
    pub confidence: Option<f64>,
    /// Two-sided Mann-Whitney U p-value of `a` against `b`.
    pub p_value: Option<f64>,
    /// The verdict.
    pub verdict: Verdict,
    /// Why, in words.
    pub reason: String,
}

/// Every claim of the study, per level combination of its per-level axes (claims in file
/// order, combinations in grid order); `values(c, metric)` gives configuration `c`'s values
/// of the metric over its repetitions.
#[must_use]
pub fn evaluate(study: &Study, values: &dyn Fn(usize, &str) -> Vec<f64>) -> Vec<Outcome> {
    let axes = study.axes();
    let pos = |path: &str| axes.iter().position(|a| a.path == path);
    let level = |ax: usize, label: &str| axes[ax].levels.iter().position(|l| l.label == label);
    let mut out = Vec::new();
    for (ci, claim) in study.claims.iter().enumerate() {
        let free: Vec<usize> = claim.per_level.iter().filter_map(|p| pos(p)).collect();
        let pooled: Vec<usize> = claim.pool.iter().filter_map(|p| pos(p)).collect();
        let groups: usize = free.iter().map(|&ax| axes[ax].levels.len()).product();
        for g in 0..groups {
            let mut idx = vec![0usize; axes.len()];
            let mut rest = g;
            for &ax in free.iter().rev() {
                idx[ax] = rest % axes[ax].levels.len();
                rest /= axes[ax].levels.len();
            }
            let cells = |side: &[(String, String)]| -> Vec<usize> {
                let mut base = idx.clone();
                for (path, label) in side {
                    if let Some(ax) = pos(path) {
                        base[ax] = level(ax, label).unwrap_or(0);
                    }
                }
                let n: usize = pooled.iter().map(|&ax| axes[ax].levels.len()).product();
                (0..n)
                    .filter_map(|m| {
                        let mut i = base.clone();
                        let mut rest = m;
                        for &ax in pooled.iter().rev() {
                            i[ax] = rest % axes[ax].levels.len();
                            rest /= axes[ax].levels.len();
                        }
                        study.config_at(&i)
                    })
                    .collect()
            };
            let (ca, cb) = (cells(&claim.a), cells(&claim.b));
            let xs: Vec<f64> = ca.iter().flat_map(|&c| values(c, &claim.metric)).collect();
            let ys: Vec<f64> = cb
                .iter()
                .flat_map(|&c| values(c, &claim.metric_b))
                .collect();
            let ratio = stats::ratio_interval(&xs, &ys, stats::ALPHA);
            let test = stats::mann_whitney_u(&xs, &ys);
            let (v, reason) = verdict(claim.expect, claim.by, ratio.as_ref(), test.as_ref());
            let median = |v: &[f64]| stats::summarize(v).map(|s| s.median);
            out.push(Outcome {
                claim: ci,
                levels: free
                    .iter()
                    .map(|&ax| {
                        (
                            axes[ax].path.clone(),
                            axes[ax].levels[idx[ax]].label.clone(),
                        )
                    })
                    .collect(),
                a_configs: ca.iter().map(|&c| study.config_key(c).label).collect(),
                b_configs: cb.iter().map(|&c| study.config_key(c).label).collect(),
                n_a: xs.len(),
                n_b: ys.len(),
                median_a: median(&xs),
                median_b: median(&ys),
                effect: ratio.map(|r| r.estimate - 1.0).filter(|x| x.is_finite()),
                effect_low: ratio.map(|r| r.low - 1.0),
                effect_high: ratio.map(|r| r.high - 1.0).filter(|x| x.is_finite()),
                confidence: ratio.map(|r| r.confidence),
                p_value: test.map(|t| t.p_value),
                verdict: v,
                reason,
            });
        }
    }
    out
}

/// `a` or `b` as `axis=level` pairs.
fn cell(side: &[(String, String)]) -> String {
    side.iter()
        .map(|(p, l)| format!("{p}={l}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The claim in one line: `upload_mbps: a lower than b by ≥ 10 %`.
#[must_use]
pub fn statement(c: &Claim) -> String {
    let by = round3(100.0 * c.by);
    let what = match c.expect {
        Expect::Lower => format!("lower by ≥ {by} %"),
        Expect::Higher => format!("higher by ≥ {by} %"),
        Expect::Within => format!("within ±{by} %"),
    };
    let joint = if c.expect == Expect::Within {
        "of"
    } else {
        "than"
    };
    let mut s = format!(
        "{} of [{}] {what} {joint} {} of [{}]",
        c.metric,
        cell(&c.a),
        c.metric_b,
        cell(&c.b)
    );
    if !c.pool.is_empty() {
        let _ = write!(s, ", pooled over {}", c.pool.join(", "));
    }
    s
}

/// An effect and its interval in percent: `-12.3 % [-20.1, -5.2]` (`∞` for an unbounded end).
#[must_use]
pub fn effect_text(o: &Outcome) -> String {
    let p = |x: f64| format!("{:+.1}", 100.0 * x);
    match (o.effect, o.effect_low) {
        (None, None) => "—".to_owned(),
        (e, lo) => format!(
            "{} % [{}, {}]",
            e.map_or_else(|| "+∞".to_owned(), p),
            lo.map_or_else(|| "—".to_owned(), p),
            o.effect_high.map_or_else(|| "+∞".to_owned(), p)
        ),
    }
}

fn levels_text(o: &Outcome) -> String {
    if o.levels.is_empty() {
        "—".to_owned()
    } else {
        cell(&o.levels)
    }
}

/// The claims table for the terminal (empty when the study has no claims).
#[must_use]
pub fn text_table(study: &Study, outcomes: &[Outcome]) -> String {
    if study.claims.is_empty() {
        return String::new();
    }
    let rows: Vec<[String; 5]> = outcomes
        .iter()
        .map(|o| {
            [
                study.claims[o.claim].id.clone(),
                levels_text(o),
                effect_text(o),
                o.p_value
                    .map_or_else(|| "—".to_owned(), |p| format!("{p:.3}")),
                o.verdict.name().to_owned(),
            ]
        })
        .collect();
    let head = ["claim", "levels", "effect [95 % CI]", "p", "verdict"];
    let width: Vec<usize> = (0..5)
        .map(|k| {
            rows.iter()
                .map(|r| r[k].chars().count())
                .chain([head[k].chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut s = String::from("\nclaims\n");
    let line = |cells: &[String], s: &mut String| {
        for (k, c) in cells.iter().enumerate() {
            let pad = width[k] - c.chars().count();
            if k > 0 {
                s.push_str("  ");
            }
            s.push_str(c);
            if k + 1 < cells.len() {
                s.push_str(&" ".repeat(pad));
            }
        }
        s.push('\n');
    };
    line(&head.map(str::to_owned), &mut s);
    for r in &rows {
        line(r, &mut s);
    }
    for c in &study.claims {
        let _ = writeln!(s, "{}: {}", c.id, statement(c));
    }
    let _ = writeln!(
        s,
        "effect: a's values over b's (Hodges–Lehmann ratio) minus 1, with its distribution-free \
         interval; verdicts by the rule of README.md's Studies section (two-sided Mann-Whitney \
         U, p < {})",
        stats::ALPHA
    );
    s
}

/// `claims.md`: per claim its source, statement and a table of verdicts.
#[must_use]
pub fn markdown(study: &Study, outcomes: &[Outcome]) -> String {
    let mut s = format!("# Claims of study `{}`\n", study.name);
    let _ = writeln!(
        s,
        "\nEffect: the ratio of a's values to b's (Hodges–Lehmann: the median of all pairwise \
         ratios) minus 1, with its distribution-free confidence interval (the interval that \
         inverts the two-sided Mann-Whitney U test; its confidence is at least {} %). Verdict \
         rule: README.md, section Studies.",
        100.0 * (1.0 - stats::ALPHA)
    );
    for (i, c) in study.claims.iter().enumerate() {
        let _ = writeln!(
            s,
            "\n## `{}`\n\n{}\n\nClaim: {}.",
            c.id,
            c.source,
            statement(c)
        );
        if !c.per_level.is_empty() {
            let _ = writeln!(s, "One verdict per level of: {}.", c.per_level.join(", "));
        }
        s.push_str(
            "\n| levels | n (a, b) | median a | median b | effect [CI] | confidence | p | verdict | why |\n\
             |---|---|---|---|---|---|---|---|---|\n",
        );
        for o in outcomes.iter().filter(|o| o.claim == i) {
            let num =
                |x: Option<f64>| x.map_or_else(|| "—".to_owned(), |v| format!("{}", round3(v)));
            let _ = writeln!(
                s,
                "| {} | {}, {} | {} | {} | {} | {} | {} | **{}** | {} |",
                levels_text(o).replace('|', "\\|"),
                o.n_a,
                o.n_b,
                num(o.median_a),
                num(o.median_b),
                effect_text(o),
                o.confidence
                    .map_or_else(|| "—".to_owned(), |c| format!("{:.1} %", 100.0 * c)),
                o.p_value
                    .map_or_else(|| "—".to_owned(), |p| format!("{p:.3}")),
                o.verdict.name(),
                o.reason.replace('|', "\\|")
            );
        }
    }
    s
}

/// `claims.json`: every claim with its outcomes.
#[must_use]
pub fn json(study: &Study, outcomes: &[Outcome]) -> Vec<u8> {
    #[derive(Serialize)]
    struct Entry<'a> {
        id: &'a str,
        source: &'a str,
        metric: &'a str,
        metric_b: &'a str,
        a: &'a [(String, String)],
        b: &'a [(String, String)],
        expect: Expect,
        by: f64,
        pool: &'a [String],
        per_level: &'a [String],
        outcomes: Vec<&'a Outcome>,
    }
    let entries: Vec<Entry<'_>> = study
        .claims
        .iter()
        .enumerate()
        .map(|(i, c)| Entry {
            id: &c.id,
            source: &c.source,
            metric: &c.metric,
            metric_b: &c.metric_b,
            a: &c.a,
            b: &c.b,
            expect: c.expect,
            by: c.by,
            pool: &c.pool,
            per_level: &c.per_level,
            outcomes: outcomes.iter().filter(|o| o.claim == i).collect(),
        })
        .collect();
    let mut v = serde_json::to_vec_pretty(&entries).expect("claims serialise");
    v.push(b'\n');
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The verdict of `expect` by `by` on samples `a` and `b`, as [`evaluate`] computes it.
    fn judge(expect: Expect, by: f64, a: &[f64], b: &[f64]) -> (Verdict, String) {
        let r = stats::ratio_interval(a, b, stats::ALPHA);
        let t = stats::mann_whitney_u(a, b);
        verdict(expect, by, r.as_ref(), t.as_ref())
    }

    const LOW: [f64; 5] = [78.0, 79.0, 80.0, 81.0, 82.0];
    const HIGH: [f64; 5] = [98.0, 99.0, 100.0, 101.0, 102.0];

    /// About 20 % lower, five against five: every pairwise ratio lies in [0.765, 0.837], the
    /// interval (the 3rd and 23rd of the 25) is [0.7745, 0.8265]; HIGH against LOW: [1.2099,
    /// 1.2911].
    #[test]
    fn lower_holds_fails_or_is_inconclusive_by_the_threshold() {
        assert_eq!(judge(Expect::Lower, 0.1, &LOW, &HIGH).0, Verdict::Holds);
        assert_eq!(judge(Expect::Lower, 0.0, &LOW, &HIGH).0, Verdict::Holds);
        // The interval [R(3), R(23)] of the 25 ratios straddles 0.8.
        let (v, why) = judge(Expect::Lower, 0.2, &LOW, &HIGH);
        assert_eq!(v, Verdict::Inconclusive, "{why}");
        assert!(why.contains("across -20 %"), "{why}");
        // Certainly less than a 30 % reduction.
        let (v, why) = judge(Expect::Lower, 0.3, &LOW, &HIGH);
        assert_eq!(v, Verdict::Fails, "{why}");
        // The other way round: higher, not lower.
        assert_eq!(judge(Expect::Lower, 0.0, &HIGH, &LOW).0, Verdict::Fails);
        assert_eq!(judge(Expect::Higher, 0.2, &HIGH, &LOW).0, Verdict::Holds);
        assert_eq!(
            judge(Expect::Higher, 0.25, &HIGH, &LOW).0,
            Verdict::Inconclusive
        );
        assert_eq!(judge(Expect::Higher, 0.3, &HIGH, &LOW).0, Verdict::Fails);
        assert_eq!(judge(Expect::Higher, 0.4, &HIGH, &LOW).0, Verdict::Fails);
        assert_eq!(judge(Expect::Higher, 0.0, &LOW, &HIGH).0, Verdict::Fails);
    }

    /// Constant samples put the whole interval on one ratio: exactly at the threshold holds
    /// (at least `by`), a hair beyond it fails.
    #[test]
    fn the_threshold_itself_holds() {
        let (a, b) = ([90.0; 5], [100.0; 5]);
        assert_eq!(judge(Expect::Lower, 0.1, &a, &b).0, Verdict::Holds);
        assert_eq!(judge(Expect::Lower, 0.100_001, &a, &b).0, Verdict::Fails);
        let a = [110.0; 5];
        assert_eq!(judge(Expect::Higher, 0.1, &a, &b).0, Verdict::Holds);
        assert_eq!(judge(Expect::Higher, 0.100_001, &a, &b).0, Verdict::Fails);
        assert_eq!(judge(Expect::Within, 0.1, &a, &b).0, Verdict::Holds);
        assert_eq!(judge(Expect::Within, 0.099_999, &a, &b).0, Verdict::Fails);
    }

    #[test]
    fn within() {
        let same = [100.0, 101.0, 102.0, 103.0, 104.0];
        assert_eq!(judge(Expect::Within, 0.1, &same, &same).0, Verdict::Holds);
        assert_eq!(
            judge(Expect::Within, 0.01, &same, &same).0,
            Verdict::Inconclusive
        );
        assert_eq!(
            judge(Expect::Within, 0.1, &[200.0; 5], &same).0,
            Verdict::Fails
        );
        assert_eq!(judge(Expect::Within, 0.1, &LOW, &HIGH).0, Verdict::Fails);
    }

    /// Three values per side cannot give a 95 % interval (nor a Mann-Whitney p below 0.05):
    /// inconclusive however far apart; a side without values is inconclusive too.
    #[test]
    fn too_few_or_no_values_are_inconclusive() {
        let (v, why) = judge(Expect::Lower, 0.1, &[1.0, 2.0, 3.0], &[100.0, 101.0, 102.0]);
        assert_eq!(v, Verdict::Inconclusive);
        assert!(why.contains("at least 4 per side"), "{why}");
        assert_eq!(
            judge(Expect::Within, 0.1, &[], &[1.0; 5]).0,
            Verdict::Inconclusive
        );
        // Four per side can.
        assert_eq!(
            judge(
                Expect::Lower,
                0.5,
                &[1.0, 2.0, 3.0, 4.0],
                &[10.0, 11.0, 12.0, 13.0]
            )
            .0,
            Verdict::Holds
        );
    }

    /// A grid of controller × rate × delay.
    const STUDY: &str = r#"
name = "c"
repetitions = 4
[base]
name = "c"
duration = "1s"
[base.topology]
preset = "dumbbell"
rate = "10Mbit"
delay = "5ms"
[[base.flows]]
controller = "cubic"
[grid]
flows.0.controller = ["cubic", "bbr3"]
topology.rate = ["10Mbit", "20Mbit"]
topology.delay = ["5ms", "10ms", "20ms"]

[[claims]]
id = "bbr-faster"
source = "someone (2020) says BBRv3 beats CUBIC"
metric = "upload_mbps"
a = { "flows.0.controller" = "bbr3" }
b = { flows.0.controller = "cubic" }
expect = "higher"
by = 0.05

[[claims]]
id = "rate-pooled"
source = "more rate, more goodput"
metric = "upload_mbps"
a = { "flows.0.controller" = "cubic", "topology.rate" = "20Mbit" }
b = { "topology.rate" = "10Mbit" }
expect = "higher"
by = 0.5
pool = ["topology.delay"]
"#;

    fn parse(text: &str) -> Result<Study, String> {
        super::super::parse(text, "s.toml", std::path::Path::new(".")).map_err(|e| e.to_string())
    }

    /// `s.toml:LINE:` of the last line containing `needle`.
    fn at_line_of(text: &str, needle: &str) -> String {
        let line = text[..text.rfind(needle).expect("needle")]
            .matches('\n')
            .count()
            + 1;
        format!("s.toml:{line}:")
    }

    /// Axes a claim does not name are evaluated per level; an axis one side names holds the
    /// same level on the other; pooled axes merge their levels into one sample per side.
    #[test]
    fn cells_per_level_completed_and_pooled() {
        let s = parse(STUDY).unwrap();
        let c = &s.claims;
        assert_eq!(c[0].per_level, vec!["topology.rate", "topology.delay"]);
        assert_eq!(c[1].per_level, Vec::<String>::new());
        assert_eq!(
            c[1].b,
            vec![
                ("flows.0.controller".to_owned(), "cubic".to_owned()),
                ("topology.rate".to_owned(), "20Mbit".to_owned()).clone(),
            ]
            .into_iter()
            .map(|(p, l)| if p == "topology.rate" {
                (p, "10Mbit".to_owned())
            } else {
                (p, l)
            })
            .collect::<Vec<_>>()
        );
        // Goodput: the rate's Mbit/s, plus 1 for BBRv3, repetition r adds r / 100.
        let values = |cfg: usize, _: &str| -> Vec<f64> {
            let k = s.config_key(cfg);
            let rate: f64 = if k.levels[1].1 == "20Mbit" {
                20.0
            } else {
                10.0
            };
            let bonus = if k.levels[0].1 == "bbr3" { 1.0 } else { 0.0 };
            (0..4)
                .map(|r| rate + bonus + f64::from(r) / 100.0)
                .collect()
        };
        let out = evaluate(&s, &values);
        assert_eq!(out.len(), 6 + 1);
        assert_eq!(
            out[0].levels,
            vec![
                ("topology.rate".to_owned(), "10Mbit".to_owned()),
                ("topology.delay".to_owned(), "5ms".to_owned())
            ]
        );
        assert_eq!(out[0].a_configs.len(), 1);
        assert!(
            out[0].a_configs[0]
                .contains("flows.0.controller=bbr3 topology.rate=10Mbit topology.delay=5ms")
        );
        // +10 % at 10 Mbit/s holds (≥ 5 %), +5 % at 20 Mbit/s: 21/20 − 1 up to (21.03/20) −
        // 1, the interval's low end is 21/20.03 < 1.05: inconclusive.
        assert_eq!(out[0].verdict, Verdict::Holds, "{:?}", out[0]);
        assert_eq!(out[3].verdict, Verdict::Inconclusive, "{:?}", out[3]);
        let pooled = &out[6];
        assert_eq!((pooled.n_a, pooled.n_b), (12, 12));
        assert_eq!(pooled.a_configs.len(), 3);
        assert!(
            pooled
                .b_configs
                .iter()
                .all(|c| c.contains("cubic topology.rate=10Mbit"))
        );
        assert_eq!(pooled.verdict, Verdict::Holds);
        let table = text_table(&s, &out);
        assert!(
            table.contains("bbr-faster") && table.contains("holds"),
            "{table}"
        );
        let md = markdown(&s, &out);
        assert!(md.contains("## `rate-pooled`") && md.contains("pooled over topology.delay"));
        let j: serde_json::Value = serde_json::from_slice(&json(&s, &out)).unwrap();
        assert_eq!(j[1]["outcomes"][0]["verdict"], "holds");
        assert_eq!(j[0]["outcomes"].as_array().unwrap().len(), 6);
    }

    /// Bad claims are errors at load time with the file, line and key, and the valid values.
    #[test]
    fn bad_claims_are_located_errors() {
        let cases = [
            (
                "metric = \"upload_mbps\"",
                "metric = \"upload_mbs\"",
                "claims[0].metric",
                "did you mean `upload_mbps`",
            ),
            (
                "a = { \"flows.0.controller\" = \"bbr3\" }",
                "a = { \"flows.0.controler\" = \"bbr3\" }",
                "claims[0].a.flows.0.controler",
                "expected one of: flows.0.controller, topology.rate, topology.delay",
            ),
            (
                "a = { \"flows.0.controller\" = \"bbr3\" }",
                "a = { \"flows.0.controller\" = \"bbr2\" }",
                "claims[0].a.flows.0.controller",
                "matches no cell",
            ),
            (
                "b = { flows.0.controller = \"cubic\" }",
                "b = { flows.0.controller = \"bbr3\" }",
                "claims[0].b",
                "the same cell",
            ),
            (
                "expect = \"higher\"\nby = 0.05",
                "expect = \"more\"\nby = 0.05",
                "claims[0].expect",
                "expected one of: lower, higher, within",
            ),
            ("by = 0.05", "by = -1", "claims[0].by", "between 0 and 100"),
            (
                "expect = \"higher\"\nby = 0.05",
                "expect = \"lower\"\nby = 1.5",
                "claims[0].by",
                "below 1",
            ),
            (
                "pool = [\"topology.delay\"]",
                "pool = [\"topology.rate\"]",
                "claims[1].pool[0]",
                "named in `a` or `b`",
            ),
            (
                "pool = [\"topology.delay\"]",
                "pool = [\"topology.dely\"]",
                "claims[1].pool[0]",
                "did you mean `topology.delay`",
            ),
            (
                "id = \"rate-pooled\"",
                "id = \"bbr-faster\"",
                "claims[1].id",
                "already the id of claims[0]",
            ),
            (
                "id = \"rate-pooled\"",
                "id = \"rate pooled\"",
                "claims[1].id",
                "not a usable claim id",
            ),
            ("by = 0.5", "bye = 0.5", "bye", "unknown field"),
        ];
        for (from, to, field, says) in cases {
            let text = STUDY.replacen(from, to, 1);
            assert_ne!(text, STUDY, "{from}");
            let e = parse(&text).unwrap_err();
            // The error is on the line the case changes (the last, when it changes two).
            let changed = to.lines().rfind(|l| !from.lines().any(|f| f == *l));
            assert!(
                e.starts_with(&at_line_of(&text, changed.unwrap())),
                "{to}: {e}"
            );
            assert!(e.contains(field) && e.contains(says), "{to}: {e}");
        }
        let text = STUDY.replacen(
            "metric = \"upload_mbps\"",
            "metric = \"upload_mbps\"\nmetric_b = \"ping_p5_ms\"",
            1,
        );
        let e = parse(&text).unwrap_err();
        assert!(
            e.contains("claims[0].metric_b") && e.contains("ping_p50_ms"),
            "{e}"
        );
        // Two metrics of the same cell are a claim.
        let text = STUDY.replacen(
            "b = { flows.0.controller = \"cubic\" }",
            "b = { }\nmetric_b = \"download_mbps\"",
            1,
        );
        let s = parse(&text).unwrap();
        assert_eq!(
            (s.claims[0].a.clone(), s.claims[0].metric_b.as_str()),
            (s.claims[0].b.clone(), "download_mbps")
        );
        // `within` needs a margin.
        let text = STUDY.replacen("expect = \"higher\"\nby = 0.05", "expect = \"within\"", 1);
        let e = parse(&text).unwrap_err();
        assert!(e.contains("claims[0].by") && e.contains("margin"), "{e}");
    }
}
