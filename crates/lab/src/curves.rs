//! The curves of a study ([`crate::study::Curve`], `analysis.curves`): a metric's median and
//! quartiles over the repetitions at every level of a numeric axis, one line per level of the
//! series axis, and the level from which the median stays at or above the threshold; as
//! Markdown and HTML tables, CSV rows and figures.
//!
//! Contract: [`curve_groups`] is a pure function of the study, the curve and each
//! configuration's values, so every output here depends only on the run records. Groups are
//! the combinations of the other axes' levels (file order, the last axis fastest); in each,
//! one panel per level of `compare` (or one), in each one line per level of `series`, whose
//! points run in ascending x. A point's statistics are [`stats::summarize`]'s (median, 25th
//! and 75th percentiles, linear interpolation) of the metric over the configuration's
//! repetitions; a point no repetition has a value for has none, is left out of the figure and
//! counts as below the threshold. The threshold level is [`sustained_from`]'s: the smallest x
//! whose median and every larger x's median are at least the threshold.

use std::fmt::Write as _;

use crate::analysis::{csv_field, num, slug};
use crate::plot::{self, BandPoint, Labels};
use crate::report::{Figure, escape};
use crate::stats::{self, Summary};
use crate::study::curve::sustained_from;
use crate::study::{Curve, Study};

/// One point of a line: the x level and the metric's statistics over its repetitions.
#[derive(Clone, Debug, PartialEq)]
pub struct CurvePoint {
    /// The x level's label.
    pub label: String,
    /// Its numeric value.
    pub x: f64,
    /// The metric over the repetitions (`None`: no repetition has it).
    pub summary: Option<Summary>,
}

/// One line: a level of the series axis.
#[derive(Clone, Debug, PartialEq)]
pub struct CurveLine {
    /// The series level's label.
    pub series: String,
    /// Its points in ascending x.
    pub points: Vec<CurvePoint>,
    /// With a threshold: the index in `points` from which the median stays at or above it
    /// (`None`: never, or no threshold).
    pub from: Option<usize>,
}

/// The lines of one level of the compare axis (or all of them without one).
#[derive(Clone, Debug, PartialEq)]
pub struct CurvePanel {
    /// The compare level's label (`None` without a compare axis).
    pub compare: Option<String>,
    /// One line per series level, in file order.
    pub lines: Vec<CurveLine>,
}

/// One combination of the other axes' levels.
#[derive(Clone, Debug, PartialEq)]
pub struct CurveGroup {
    /// (axis path, level label) of every axis that is not `x`, `series` or `compare`.
    pub others: Vec<(String, String)>,
    /// One panel per compare level, in file order.
    pub panels: Vec<CurvePanel>,
}

impl CurveGroup {
    /// `axis=label` pairs joined by spaces (empty without other axes).
    #[must_use]
    pub fn label(&self) -> String {
        self.others
            .iter()
            .map(|(p, l)| format!("{p}={l}"))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// The curve's groups over the study's grid; `values(c)` is the metric over configuration
/// `c`'s repetitions.
#[must_use]
pub fn curve_groups(
    study: &Study,
    curve: &Curve,
    values: &dyn Fn(usize) -> Vec<f64>,
) -> Vec<CurveGroup> {
    let axes = study.axes();
    let pos = |path: &str| axes.iter().position(|a| a.path == path);
    let (Some(xa), Some(sa)) = (pos(&curve.x), pos(&curve.series)) else {
        return Vec::new();
    };
    let ca = curve.compare.as_deref().and_then(pos);
    let others: Vec<usize> = (0..axes.len())
        .filter(|&i| i != xa && i != sa && Some(i) != ca)
        .collect();
    let combos: usize = others.iter().map(|&i| axes[i].levels.len()).product();
    let compares: Vec<Option<usize>> = match ca {
        Some(k) => (0..axes[k].levels.len()).map(Some).collect(),
        None => vec![None],
    };
    (0..combos)
        .map(|mut k| {
            let mut li = vec![0; axes.len()];
            for &i in others.iter().rev() {
                li[i] = k % axes[i].levels.len();
                k /= axes[i].levels.len();
            }
            let panels = compares
                .iter()
                .map(|&cl| {
                    if let (Some(ca), Some(cl)) = (ca, cl) {
                        li[ca] = cl;
                    }
                    let lines = (0..axes[sa].levels.len())
                        .map(|s| {
                            li[sa] = s;
                            let points: Vec<CurvePoint> = curve
                                .x_levels
                                .iter()
                                .map(|&(xl, x)| {
                                    li[xa] = xl;
                                    let summary = study
                                        .config_at(&li)
                                        .and_then(|c| stats::summarize(&values(c)));
                                    CurvePoint {
                                        label: axes[xa].levels[xl].label.clone(),
                                        x,
                                        summary,
                                    }
                                })
                                .collect();
                            let medians: Vec<Option<f64>> =
                                points.iter().map(|p| p.summary.map(|s| s.median)).collect();
                            CurveLine {
                                series: axes[sa].levels[s].label.clone(),
                                from: curve.threshold.and_then(|t| sustained_from(&medians, t)),
                                points,
                            }
                        })
                        .collect();
                    CurvePanel {
                        compare: ca.zip(cl).map(|(a, l)| axes[a].levels[l].label.clone()),
                        lines,
                    }
                })
                .collect();
            CurveGroup {
                others: others
                    .iter()
                    .map(|&i| (axes[i].path.clone(), axes[i].levels[li[i]].label.clone()))
                    .collect(),
                panels,
            }
        })
        .collect()
}

/// A line's threshold cell: the x level from which the median holds, `≤ x (already at the
/// smallest level)` when it holds at every level, `never` when not at the largest.
#[must_use]
pub fn threshold_cell(line: &CurveLine) -> String {
    match line.from {
        None => "never".to_owned(),
        Some(0) => format!("≤ {} (already at the smallest level)", line.points[0].label),
        Some(i) => line.points[i].label.clone(),
    }
}

/// What curve `k`'s threshold table shows, in words.
fn heading(k: usize, curve: &Curve) -> String {
    format!(
        "curve {k}: median of {} against {}, one line per {}",
        curve.metric, curve.x, curve.series
    )
}

fn threshold_note(curve: &Curve, t: f64) -> String {
    let mut s = format!(
        "Smallest {x} from which the median over the repetitions of {m} is ≥ {t} at that and \
         every larger level of {x} (\"never\": not at the largest level). Rows: the other axes' \
         levels and {series}",
        x = curve.x,
        m = curve.metric,
        series = curve.series
    );
    match &curve.compare {
        Some(c) => {
            let _ = write!(s, "; columns: the levels of {c}.");
        }
        None => s.push('.'),
    }
    s
}

/// The header cells of the threshold table: other axes, series, then one per compare level.
fn columns(curve: &Curve, groups: &[CurveGroup]) -> Vec<String> {
    let Some(g) = groups.first() else {
        return Vec::new();
    };
    let mut cols: Vec<String> = g.others.iter().map(|(p, _)| p.clone()).collect();
    cols.push(curve.series.clone());
    for p in &g.panels {
        cols.push(
            p.compare
                .clone()
                .unwrap_or_else(|| format!("{} from", curve.x)),
        );
    }
    cols
}

/// The threshold table's rows: per group and series level, its cells.
fn rows(groups: &[CurveGroup]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for g in groups {
        let series = g.panels.first().map_or(0, |p| p.lines.len());
        for s in 0..series {
            let mut row: Vec<String> = g.others.iter().map(|(_, l)| l.clone()).collect();
            row.push(g.panels[0].lines[s].series.clone());
            row.extend(g.panels.iter().map(|p| threshold_cell(&p.lines[s])));
            out.push(row);
        }
    }
    out
}

/// A Markdown table cell (pipes escaped).
fn md_cell(s: &str) -> String {
    s.replace('|', "\\|")
}

/// Curve `k`'s section of `curves.md`: a heading, and with a threshold its table.
#[must_use]
pub fn markdown(k: usize, curve: &Curve, groups: &[CurveGroup]) -> String {
    let mut s = format!("## {}\n\n", heading(k, curve));
    let Some(t) = curve.threshold else {
        s.push_str("No threshold: the medians are in curves.csv and the figures.\n");
        return s;
    };
    let _ = writeln!(s, "{}\n", threshold_note(curve, t));
    let cols = columns(curve, groups);
    let _ = writeln!(
        s,
        "| {} |",
        cols.iter()
            .map(|c| md_cell(c))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    let _ = writeln!(s, "|{}", "---|".repeat(cols.len()));
    for r in rows(groups) {
        let _ = writeln!(
            s,
            "| {} |",
            r.iter().map(|c| md_cell(c)).collect::<Vec<_>>().join(" | ")
        );
    }
    s
}

/// Curve `k`'s section of the report (escaped HTML): a heading, and with a threshold its table.
#[must_use]
pub fn html(k: usize, curve: &Curve, groups: &[CurveGroup]) -> String {
    let mut h = format!("<h2>{}</h2>\n", escape(&heading(k, curve)));
    let Some(t) = curve.threshold else {
        h.push_str(
            "<p class=\"note\">No threshold: the medians are in curves.csv and the figures.</p>\n",
        );
        return h;
    };
    let _ = writeln!(
        h,
        "<p class=\"note\">{}</p>",
        escape(&threshold_note(curve, t))
    );
    h.push_str("<table>\n<tr>");
    for c in columns(curve, groups) {
        let _ = write!(h, "<th class=\"l\">{}</th>", escape(&c));
    }
    h.push_str("</tr>\n");
    for r in rows(groups) {
        h.push_str("<tr>");
        for c in r {
            let _ = write!(h, "<td class=\"l\">{}</td>", escape(&c));
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</table>\n");
    h
}

/// Header of `curves.csv`.
pub const CSV_HEADER: &str =
    "curve,metric,others,series,compare,x_level,x,n,median,p25,p75,threshold,threshold_x\n";

/// Curve `k`'s rows of `curves.csv` ([`CSV_HEADER`]): one per point, `others` the other axes'
/// `axis=label` pairs, `threshold_x` the x from which the median holds (empty: never, or no
/// threshold); numbers in Rust's shortest round-trip form, empty where there is none.
#[must_use]
pub fn csv_rows(k: usize, curve: &Curve, groups: &[CurveGroup]) -> String {
    let mut s = String::new();
    for g in groups {
        let others = g.label();
        for p in &g.panels {
            for l in &p.lines {
                let from = l.from.map(|i| l.points[i].x);
                for pt in &l.points {
                    let _ = writeln!(
                        s,
                        "{k},{},{},{},{},{},{},{},{},{},{},{},{}",
                        csv_field(&curve.metric),
                        csv_field(&others),
                        csv_field(&l.series),
                        csv_field(p.compare.as_deref().unwrap_or("")),
                        csv_field(&pt.label),
                        pt.x,
                        pt.summary.map_or(0, |s| s.n),
                        num(pt.summary.map(|s| s.median)),
                        num(pt.summary.map(|s| s.p25)),
                        num(pt.summary.map(|s| s.p75)),
                        num(curve.threshold),
                        num(from),
                    );
                }
            }
        }
    }
    s
}

/// Curve `k`'s figures: one per group and compare level, x = the level's value, y = the
/// median with a 25th–75th percentile band, a line per series level, the threshold dashed.
/// Files `curve<k>_<metric>[-<other labels>][-<compare label>]`; panels without any value
/// are left out, and a panel that cannot be drawn (values beyond what a plot shows) is named
/// with the reason in `not_drawn`.
#[must_use]
pub fn figures(
    k: usize,
    curve: &Curve,
    groups: &[CurveGroup],
    not_drawn: &mut Vec<String>,
) -> Vec<Figure> {
    let mut figs = Vec::new();
    for g in groups {
        let labels: Vec<&str> = g.others.iter().map(|(_, l)| l.as_str()).collect();
        for p in &g.panels {
            let series: Vec<plot::BandSeries> = p
                .lines
                .iter()
                .filter_map(|l| {
                    let pts: Vec<BandPoint> = l
                        .points
                        .iter()
                        .filter_map(|pt| {
                            let s = pt.summary?;
                            Some(BandPoint {
                                x: pt.x,
                                y: s.median,
                                lo: s.p25,
                                hi: s.p75,
                            })
                        })
                        .collect();
                    (!pts.is_empty()).then(|| (l.series.clone(), pts))
                })
                .collect();
            if series.is_empty() {
                continue;
            }
            let mut parts: Vec<&str> = labels.clone();
            parts.extend(p.compare.as_deref());
            let mut file = format!("curve{k}_{}", slug(&curve.metric));
            if !parts.is_empty() {
                let _ = write!(file, "-{}", slug(&parts.join("_")));
            }
            let title = if parts.is_empty() {
                curve.metric.clone()
            } else {
                format!("{} — {}", curve.metric, parts.join(", "))
            };
            let spec = Labels {
                title,
                x_label: curve.x.clone(),
                y_label: curve.metric.clone(),
            };
            let mut caption = format!(
                "Median over the repetitions of {} at each level of {}, one line per {}; \
                 band: 25th to 75th percentile",
                curve.metric, curve.x, curve.series
            );
            let mut at = g.label();
            if let (Some(c), Some(l)) = (&curve.compare, &p.compare) {
                if !at.is_empty() {
                    at.push(' ');
                }
                let _ = write!(at, "{c}={l}");
            }
            if !at.is_empty() {
                let _ = write!(caption, "; {at}");
            }
            if let Some(t) = curve.threshold {
                let _ = write!(caption, "; dashed: the threshold {t}");
            }
            caption.push('.');
            match plot::curve_plot(&spec, &series, curve.threshold) {
                Ok(svg) => figs.push(Figure {
                    file,
                    caption,
                    group: heading(k, curve),
                    svg,
                }),
                Err(e) => not_drawn.extend(crate::analysis::not_drawn(&file, &e)),
            }
        }
    }
    figs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn study() -> Study {
        let text = r#"
name = "c"
repetitions = 3
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
topology.rate = ["10Mbit", "20Mbit"]
flows.0.host.cpu_share = [1.0, 0.5, 0.25]
flows.0.controller = ["cubic", "bbr3"]
[analysis]
curves = [{ x = "flows.0.host.cpu_share", metric = "window_goodput_pct", series = "flows.0.controller", threshold = 90 }]
"#;
        crate::study::parse(text, "c.toml", std::path::Path::new(".")).unwrap()
    }

    /// Values per configuration: cubic holds 95 % at every share; bbr3 reaches 91 % only from
    /// share 0.5 at 10 Mbit/s and never at 20 Mbit/s; three repetitions around each.
    fn values(st: &Study) -> impl Fn(usize) -> Vec<f64> + '_ {
        |c| {
            let li = st.config_key(c).level_index;
            let (rate, share, ctl) = (li[0], li[1], li[2]);
            let v = match (ctl, rate, share) {
                (0, ..) => 95.0,
                (_, 0, 0 | 1) => 91.0,
                _ => 50.0,
            };
            vec![v - 2.0, v, v + 1.0]
        }
    }

    #[test]
    fn groups_lines_points_and_thresholds() {
        let st = study();
        let c = &st.analysis.curves[0];
        assert_eq!(c.threshold, Some(90.0));
        let g = curve_groups(&st, c, &values(&st));
        assert_eq!(g.len(), 2);
        assert_eq!(g[1].label(), "topology.rate=20Mbit");
        let l = &g[0].panels[0].lines;
        assert_eq!(l.len(), 2);
        // Ascending x whatever the file order: 0.25, 0.5, 1.
        let xs: Vec<f64> = l[1].points.iter().map(|p| p.x).collect();
        assert_eq!(xs, vec![0.25, 0.5, 1.0]);
        assert_eq!(l[1].points[1].label, "0.5");
        let s = l[1].points[1].summary.unwrap();
        assert_eq!((s.n, s.median, s.p25, s.p75), (3, 91.0, 90.0, 91.5));
        assert_eq!(l[0].from, Some(0));
        assert_eq!(l[1].from, Some(1));
        assert_eq!(g[1].panels[0].lines[1].from, None);
        assert_eq!(
            threshold_cell(&l[0]),
            "≤ 0.25 (already at the smallest level)"
        );
        assert_eq!(threshold_cell(&l[1]), "0.5");
        assert_eq!(threshold_cell(&g[1].panels[0].lines[1]), "never");
        let md = markdown(0, c, &g);
        assert!(
            md.contains("| topology.rate | flows.0.controller | flows.0.host.cpu_share from |"),
            "{md}"
        );
        assert!(md.contains("| 10Mbit | bbr3 | 0.5 |"), "{md}");
        assert!(md.contains("| 20Mbit | bbr3 | never |"), "{md}");
        let csv = csv_rows(0, c, &g);
        assert_eq!(csv.lines().count(), 2 * 2 * 3);
        assert!(
            csv.contains(
                "0,window_goodput_pct,topology.rate=10Mbit,bbr3,,0.5,0.5,3,91,90,91.5,90,0.5"
            ),
            "{csv}"
        );
        assert!(
            csv.contains("topology.rate=20Mbit,bbr3,,1,1,3,50,49,50.5,90,\n"),
            "{csv}"
        );
        let figs = figures(0, c, &g, &mut Vec::new());
        assert_eq!(figs.len(), 2);
        assert_eq!(figs[0].file, "curve0_window_goodput_pct-10Mbit");
        assert!(figs[0].caption.contains("25th to 75th percentile"));
    }

    #[test]
    fn compare_levels_are_columns_and_missing_values_never_hold() {
        let st = study();
        let mut c = st.analysis.curves[0].clone();
        c.compare = Some("topology.rate".into());
        // bbr3 has no value at share 1 (the largest): it never holds.
        let v = values(&st);
        let vals = |k: usize| {
            let li = st.config_key(k).level_index;
            if li[2] == 1 && li[1] == 0 {
                Vec::new()
            } else {
                v(k)
            }
        };
        let g = curve_groups(&st, &c, &vals);
        assert_eq!(g.len(), 1);
        assert!(g[0].others.is_empty());
        assert_eq!(g[0].panels.len(), 2);
        assert_eq!(g[0].panels[1].compare.as_deref(), Some("20Mbit"));
        let md = markdown(0, &c, &g);
        assert!(
            md.contains("| flows.0.controller | 10Mbit | 20Mbit |"),
            "{md}"
        );
        assert!(md.contains("| bbr3 | never | never |"), "{md}");
        let figs = figures(0, &c, &g, &mut Vec::new());
        assert_eq!(figs[1].file, "curve0_window_goodput_pct-20Mbit");
        assert!(figs[1].caption.contains("topology.rate=20Mbit"));
        let csv = csv_rows(0, &c, &g);
        assert!(csv.contains(",,bbr3,10Mbit,1,1,0,,,,90,\n"), "{csv}");
        // Without a threshold: no table, no threshold column values.
        c.threshold = None;
        let g = curve_groups(&st, &c, &vals);
        assert!(g[0].panels[0].lines.iter().all(|l| l.from.is_none()));
        assert!(markdown(0, &c, &g).contains("No threshold"));
    }
}
