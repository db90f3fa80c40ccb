//! The HTML report of a study: one self-contained file (inline CSS and SVG, no scripts, no
//! external resources) with the design, the statistics tables and every figure.
//!
//! Contract: [`html`] is a pure function of the study, its statistics rows, its figures, its
//! Wi-Fi section (per-node channel counters, empty without Wi-Fi), the figures that could not
//! be drawn (named with the reason at the top of the figures) and its claims' outcomes (a
//! "Claims" section at the top, before the design, when the study has claims), so
//! the same study gives the same bytes. Every text from the study file is HTML-escaped.
//! Significant differences from the baseline (two-sided Mann-Whitney U, p < 0.05, never where
//! the numbers of values cannot reach 0.05) are marked in bold with a ★ and the p-value is shown
//! in every compared row; a † marks p-values that cannot go below 0.05 with so few values, and
//! the warnings of [`crate::analysis::study_warnings`] (too few repetitions) stand at the top of
//! the design and statistics sections. Confidence intervals are cut to each metric's domain
//! ([`crate::analysis::metric_domain`]).

use std::fmt::Write as _;

use serde::Serialize;

use crate::stats::{ALPHA, Summary};
use crate::study::Study;
use crate::study::claim::{self, Outcome, Verdict};
use crate::suite::METRICS;

/// One row of `stats.csv` / `stats.json`.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct StatRow {
    /// Configuration label.
    pub config: String,
    /// Level per axis.
    pub levels: Vec<(String, String)>,
    /// Metric name.
    pub metric: String,
    /// Summary over repetitions (`None` when no repetition has the metric).
    pub summary: Option<Summary>,
    /// The baseline configuration's label, if compared.
    pub baseline: Option<String>,
    /// Mann-Whitney U of this configuration against the baseline.
    pub mw_u: Option<f64>,
    /// Its two-sided p-value.
    pub mw_p: Option<f64>,
    /// Whether that p-value is exact (otherwise the normal approximation).
    pub mw_exact: Option<bool>,
    /// The smallest p-value the test can give with these numbers of values.
    pub mw_min_p: Option<f64>,
    /// p < [`ALPHA`] (never when the smallest attainable p is not below [`ALPHA`]).
    pub significant: Option<bool>,
}

/// One figure of the report.
#[derive(Clone, Debug)]
pub struct Figure {
    /// File stem under `plots/`.
    pub file: String,
    /// Caption.
    pub caption: String,
    /// Section it belongs to (the split level, or empty).
    pub group: String,
    /// The SVG document.
    pub svg: String,
}

/// Escape text for HTML element content and attribute values.
#[must_use]
pub fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

const STYLE: &str = "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;max-width:1100px;\
margin:2em auto;padding:0 1em;color:#222;line-height:1.45}h1{margin-bottom:.2em}\
h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}\
table{border-collapse:collapse;margin:1em 0;font-size:.9em}\
th,td{border:1px solid #ccc;padding:.25em .6em;text-align:right}\
th{background:#f3f3f3}td.l,th.l{text-align:left}tr.sig td{font-weight:bold;background:#fff4d6}\
figure{margin:1.5em 0}figure svg{max-width:100%;height:auto;border:1px solid #eee}\
figcaption{font-size:.9em;color:#444}pre{background:#f7f7f7;padding:.8em;overflow-x:auto;\
font-size:.85em}.note{color:#555;font-size:.9em}nav a{margin-right:1em}\
.warn{background:#fdecea;border-left:4px solid #c62828;padding:.5em .8em}";

fn fmt(x: f64) -> String {
    if x.abs() >= 100.0 {
        format!("{x:.1}")
    } else if x.abs() >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}

/// Strip the XML declaration of an SVG document so it can be inlined.
fn inline_svg(svg: &str) -> &str {
    let s = svg.trim_start();
    if s.starts_with("<?xml")
        && let Some(end) = s.find("?>")
    {
        return s[end + 2..].trim_start();
    }
    s
}

/// The report (see the module contract).
#[must_use]
pub fn html(
    study: &Study,
    rows: &[StatRow],
    figures: &[Figure],
    wifi: &str,
    not_drawn: &[String],
    claims: &[Outcome],
) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <title>cclab study {}</title><style>{STYLE}</style></head><body>\n",
        escape(&study.name)
    );
    let _ = writeln!(h, "<h1>Study <code>{}</code></h1>", escape(&study.name));
    if let Some(d) = &study.description {
        let _ = writeln!(h, "<p>{}</p>", escape(d.trim()));
    }
    h.push_str("<nav>");
    if !study.claims.is_empty() {
        h.push_str("<a href=\"#claims\">Claims</a>");
    }
    h.push_str(
        "<a href=\"#design\">Design</a><a href=\"#statistics\">Statistics</a>\
         <a href=\"#figures\">Figures</a></nav>\n",
    );
    h.push_str(&claims_html(study, claims));

    // Design.
    let runs = study.run_count();
    let _ = writeln!(
        h,
        "<h2 id=\"design\">Design</h2><p>{} configurations × {} repetitions = {runs} runs. \
         Study seed {}; repetition <i>r</i> runs with the same derived seed in every \
         configuration.</p>",
        study.config_count(),
        study.repetitions,
        study.seed
    );
    if !study.axes().is_empty() {
        h.push_str(
            "<table><tr><th class=\"l\">axis (field)</th><th class=\"l\">levels</th></tr>\n",
        );
        for a in study.axes() {
            let levels: Vec<String> = a.levels.iter().map(|l| escape(&l.label)).collect();
            let _ = writeln!(
                h,
                "<tr><td class=\"l\"><code>{}</code></td><td class=\"l\">{}</td></tr>",
                escape(&a.path),
                levels.join(", ")
            );
        }
        h.push_str("</table>\n");
    }
    if study.analysis.baseline.is_empty() {
        h.push_str("<p>No baseline: configurations are not compared.</p>\n");
    } else {
        let b: Vec<String> = study
            .analysis
            .baseline
            .iter()
            .map(|(p, l)| format!("<code>{}</code> = {}", escape(p), escape(l)))
            .collect();
        let _ = writeln!(
            h,
            "<p>Baseline: {}. Each configuration is compared with the configuration that has \
             the baseline level on that axis and its own levels on the others, by a two-sided \
             Mann-Whitney U test over the repetitions; rows with p &lt; {ALPHA} are marked ★.</p>",
            b.join(", ")
        );
    }
    let warnings = crate::analysis::study_warnings(study);
    for w in &warnings {
        let _ = writeln!(h, "<p class=\"warn\">Warning: {}.</p>", escape(w));
    }
    let _ = writeln!(
        h,
        "<details><summary>Study file <code>{}</code></summary><pre>{}</pre></details>",
        escape(&study.origin),
        escape(&study.text)
    );

    // Statistics.
    let _ = writeln!(
        h,
        "<h2 id=\"statistics\">Statistics</h2>\n<p class=\"note\">Per configuration and metric, \
         over the repetitions: mean, 95 % confidence interval of the mean (Student's t, cut at 0 \
         since no metric can be negative, and at 1 for Jain's indices and goodput shares), \
         median, 5th and 95th percentiles. The p-value of the two-sided Mann-Whitney U test \
         against the baseline is exact (the permutation distribution given the ranks, ties \
         included) up to {} pairs of values and from the normal approximation beyond; † marks \
         a p-value that cannot go below {ALPHA} with that many values.</p>",
        crate::stats::MWU_EXACT_MAX_PAIRS
    );
    for w in &warnings {
        let _ = writeln!(h, "<p class=\"warn\">Warning: {}.</p>", escape(w));
    }
    for m in &study.analysis.metrics {
        let mrows: Vec<&StatRow> = rows
            .iter()
            .filter(|r| &r.metric == m && r.summary.is_some())
            .collect();
        if mrows.is_empty() {
            continue;
        }
        let meaning = METRICS.iter().find(|(n, _)| n == m).map_or("", |(_, d)| *d);
        let _ = writeln!(
            h,
            "<h3><code>{}</code></h3><p class=\"note\">{}</p>",
            escape(m),
            escape(meaning)
        );
        h.push_str(
            "<table><tr><th class=\"l\">configuration</th><th>n</th><th>mean</th>\
             <th>95 % CI</th><th>median</th><th>p5</th><th>p95</th><th class=\"l\">baseline</th>\
             <th>p (MWU)</th></tr>\n",
        );
        for r in mrows {
            let s = r.summary.expect("filtered");
            let sig = r.significant == Some(true);
            let _ = writeln!(
                h,
                "<tr{}><td class=\"l\">{}{}</td><td>{}</td><td>{}</td><td>[{}, {}]</td>\
                 <td>{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td><td>{}</td></tr>",
                if sig { " class=\"sig\"" } else { "" },
                escape(&r.config),
                if sig { " ★" } else { "" },
                s.n,
                fmt(s.mean),
                fmt(s.ci95_low),
                fmt(s.ci95_high),
                fmt(s.median),
                fmt(s.p5),
                fmt(s.p95),
                r.baseline.as_deref().map_or_else(String::new, escape),
                r.mw_p.map_or_else(String::new, |p| {
                    let dagger = r.mw_min_p.is_some_and(|m| m >= ALPHA);
                    format!("{p:.3}{}", if dagger { " †" } else { "" })
                }),
            );
        }
        h.push_str("</table>\n");
    }

    // Wi-Fi (a section of its own, already HTML, when the runs have Wi-Fi).
    h.push_str(wifi);

    // Figures.
    h.push_str("<h2 id=\"figures\">Figures</h2>\n");
    for n in not_drawn {
        let _ = writeln!(h, "<p class=\"warn\">{}</p>", escape(n));
    }
    let mut group: Option<&str> = None;
    for (i, f) in figures.iter().enumerate() {
        if group != Some(f.group.as_str()) && !f.group.is_empty() {
            let _ = writeln!(h, "<h3>{}</h3>", escape(&f.group));
        }
        group = Some(f.group.as_str());
        let _ = writeln!(
            h,
            "<figure id=\"fig{i}\">{}<figcaption>Figure {}: {} <span class=\"note\">(plots/{}.svg)</span></figcaption></figure>",
            inline_svg(&f.svg),
            i + 1,
            escape(&f.caption),
            escape(&f.file)
        );
    }
    h.push_str("<p class=\"note\">Written by cclab. Every number above is recomputed from the run records by <code>cclab study</code>.</p>\n</body></html>\n");
    h
}

/// The "Claims" section: per claim its source, statement and verdicts (empty without claims).
fn claims_html(study: &Study, outcomes: &[Outcome]) -> String {
    if study.claims.is_empty() {
        return String::new();
    }
    let mut h = String::from("<h2 id=\"claims\">Claims</h2>\n");
    let _ = writeln!(
        h,
        "<p class=\"note\">Each claim states a source's finding as a comparison of two cells \
         over the repetitions. Effect: the ratio of a's values to b's (Hodges–Lehmann, the \
         median of all pairwise ratios) minus 1, with its distribution-free confidence interval \
         (the interval that inverts the two-sided Mann-Whitney U test). Holds: the interval \
         lies beyond the threshold in the expected direction (and p &lt; {ALPHA}); fails: it \
         lies entirely on the wrong side; otherwise inconclusive.</p>"
    );
    for (i, c) in study.claims.iter().enumerate() {
        let _ = writeln!(
            h,
            "<h3><code>{}</code></h3><p>{}</p><p class=\"note\">Claim: {}.</p>",
            escape(&c.id),
            escape(&c.source),
            escape(&claim::statement(c))
        );
        h.push_str(
            "<table><tr><th class=\"l\">levels</th><th>n (a, b)</th><th>median a</th>\
             <th>median b</th><th>effect [CI]</th><th>p (MWU)</th><th class=\"l\">verdict</th>\
             <th class=\"l\">why</th></tr>\n",
        );
        for o in outcomes.iter().filter(|o| o.claim == i) {
            let levels = if o.levels.is_empty() {
                "—".to_owned()
            } else {
                o.levels
                    .iter()
                    .map(|(p, l)| format!("{p}={l}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            let style = match o.verdict {
                Verdict::Holds => " style=\"background:#e6f4ea\"",
                Verdict::Fails => " style=\"background:#fdecea\"",
                Verdict::Inconclusive => "",
            };
            let num = |x: Option<f64>| x.map_or_else(|| "—".to_owned(), fmt);
            let _ = writeln!(
                h,
                "<tr{style}><td class=\"l\">{}</td><td>{}, {}</td><td>{}</td><td>{}</td>\
                 <td>{}</td><td>{}</td><td class=\"l\"><b>{}</b></td><td class=\"l\">{}</td></tr>",
                escape(&levels),
                o.n_a,
                o.n_b,
                num(o.median_a),
                num(o.median_b),
                escape(&claim::effect_text(o)),
                o.p_value
                    .map_or_else(|| "—".to_owned(), |p| format!("{p:.3}")),
                o.verdict.name(),
                escape(&o.reason)
            );
        }
        h.push_str("</table>\n");
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup() {
        assert_eq!(
            escape("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }

    #[test]
    fn strips_the_xml_declaration() {
        assert_eq!(inline_svg("<?xml version=\"1.0\"?>\n<svg/>"), "<svg/>");
        assert_eq!(inline_svg("<svg/>"), "<svg/>");
    }
}

/// One paired table ([`crate::study::Pair`]): for each row level and column, the statistic
/// of the metric at the baseline level and at the treatment level.
#[derive(Clone, Debug, PartialEq)]
pub struct PairTable {
    /// `split axis = level`, or empty without a split.
    pub title: String,
    /// The column headings: the other axes' levels, `·`-joined, in file order (one empty
    /// heading when there is no other axis).
    pub columns: Vec<String>,
    /// The rows.
    pub rows: Vec<PairRow>,
}

/// A row of a [`PairTable`]: its label and, per column, (baseline, treatment); `None` where a
/// side has no value.
pub type PairRow = (String, Vec<Option<(f64, f64)>>);

/// The paired tables of `pair` over `study`'s grid; `values(c)` is the metric over
/// configuration `c`'s repetitions.
#[must_use]
pub fn pair_tables(
    study: &Study,
    pair: &crate::study::Pair,
    values: &dyn Fn(usize) -> Vec<f64>,
) -> Vec<PairTable> {
    let stat = |xs: Vec<f64>| -> Option<f64> {
        if xs.is_empty() {
            return None;
        }
        if pair.statistic == "mean" {
            return Some(xs.iter().sum::<f64>() / xs.len() as f64);
        }
        let mut xs = xs;
        xs.sort_by(f64::total_cmp);
        crate::stats::percentile(&xs, 50.0)
    };
    pair_tables_of(study, pair, &|c| stat(values(c)))
}

/// The paired tables of `pair` over `study`'s grid with each configuration's cell value
/// given (`cell(c)`: the statistic over configuration `c`'s repetitions, `None` if it has
/// none), for statistics that are not a function of one value per repetition
/// (`mean_of_position_medians`).
#[must_use]
pub fn pair_tables_of(
    study: &Study,
    pair: &crate::study::Pair,
    cell: &dyn Fn(usize) -> Option<f64>,
) -> Vec<PairTable> {
    use std::collections::BTreeMap;
    let axes = study.axes();
    let pos = |path: &str| axes.iter().position(|a| a.path == path);
    let (Some(pa), Some(ra)) = (pos(&pair.axis), pos(&pair.rows)) else {
        return Vec::new();
    };
    let sa = pair.split.as_deref().and_then(pos);
    let others: Vec<usize> = (0..axes.len())
        .filter(|&i| i != pa && i != ra && Some(i) != sa)
        .collect();
    // Configuration index by its level indices.
    let index: BTreeMap<Vec<usize>, usize> = (0..study.config_count())
        .map(|c| (study.config_key(c).level_index, c))
        .collect();
    let level = |axis: usize, label: &str| {
        axes[axis]
            .levels
            .iter()
            .position(|l| l.label == label)
            .unwrap_or(0)
    };
    let (from, to) = (level(pa, &pair.from), level(pa, &pair.to));
    // Column combinations in mixed radix over `others`, the last axis fastest.
    let combos: usize = others.iter().map(|&i| axes[i].levels.len()).product();
    let combo = |mut k: usize| {
        let mut out = vec![0; others.len()];
        for (j, &i) in others.iter().enumerate().rev() {
            let n = axes[i].levels.len();
            out[j] = k % n;
            k /= n;
        }
        out
    };
    let columns: Vec<String> = (0..combos)
        .map(|k| {
            combo(k)
                .iter()
                .zip(&others)
                .map(|(&l, &i)| axes[i].levels[l].label.clone())
                .collect::<Vec<_>>()
                .join(" · ")
        })
        .collect();
    let splits: Vec<Option<usize>> = match sa {
        Some(s) => (0..axes[s].levels.len()).map(Some).collect(),
        None => vec![None],
    };
    splits
        .into_iter()
        .map(|s| {
            let rows = axes[ra]
                .levels
                .iter()
                .enumerate()
                .map(|(r, rl)| {
                    let cells = (0..combos)
                        .map(|k| {
                            let mut li = vec![0; axes.len()];
                            li[ra] = r;
                            if let (Some(sa), Some(s)) = (sa, s) {
                                li[sa] = s;
                            }
                            for (&i, l) in others.iter().zip(combo(k)) {
                                li[i] = l;
                            }
                            let mut at = |p: usize| {
                                li[pa] = p;
                                index.get(&li).and_then(|&c| cell(c))
                            };
                            Some((at(from)?, at(to)?))
                        })
                        .collect();
                    (rl.label.clone(), cells)
                })
                .collect();
            PairTable {
                title: match (sa, s) {
                    (Some(sa), Some(s)) => {
                        format!("{} = {}", axes[sa].path, axes[sa].levels[s].label)
                    }
                    _ => String::new(),
                },
                columns: columns.clone(),
                rows,
            }
        })
        .collect()
}

/// Decimals of the paired cells: two when every value is within ±1 (shares, Jain's index),
/// else one (percentages, rates).
fn pair_decimals(tables: &[PairTable]) -> usize {
    let small = tables
        .iter()
        .flat_map(|t| t.rows.iter().flat_map(|(_, cells)| cells.iter().flatten()))
        .all(|(a, b)| a.abs() <= 1.0 && b.abs() <= 1.0);
    if small { 2 } else { 1 }
}

/// The paired tables as Markdown: a heading per table (when split), then rows of
/// `from → to` cells with one decimal.
#[must_use]
pub fn pair_markdown(pair: &crate::study::Pair, tables: &[PairTable]) -> String {
    let mut s = format!(
        "{} of `{}`: `{}` = {} → {}\n",
        pair.statistic, pair.metric, pair.axis, pair.from, pair.to
    );
    for t in tables {
        if !t.title.is_empty() {
            let _ = write!(s, "\n### {}\n", t.title);
        }
        let _ = write!(s, "\n| {} |", pair.rows);
        for c in &t.columns {
            let _ = write!(s, " {c} |");
        }
        s.push_str("\n|---|");
        for _ in &t.columns {
            s.push_str("---|");
        }
        s.push('\n');
        for (label, cells) in &t.rows {
            let _ = write!(s, "| {label} |");
            for c in cells {
                match c {
                    Some((a, b)) => {
                        let _ = write!(s, " {a:.p$} → {b:.p$} |", p = pair_decimals(tables));
                    }
                    None => s.push_str(" – |"),
                }
            }
            s.push('\n');
        }
    }
    s
}

/// The paired tables as HTML (escaped).
#[must_use]
pub fn pair_html(pair: &crate::study::Pair, tables: &[PairTable]) -> String {
    let mut h = format!(
        "<h2>{} of {}: {} = {} → {}</h2>\n",
        escape(&pair.statistic),
        escape(&pair.metric),
        escape(&pair.axis),
        escape(&pair.from),
        escape(&pair.to)
    );
    for t in tables {
        if !t.title.is_empty() {
            let _ = writeln!(h, "<h3>{}</h3>", escape(&t.title));
        }
        let _ = write!(h, "<table>\n<tr><th>{}</th>", escape(&pair.rows));
        for c in &t.columns {
            let _ = write!(h, "<th>{}</th>", escape(c));
        }
        h.push_str("</tr>\n");
        for (label, cells) in &t.rows {
            let _ = write!(h, "<tr><td>{}</td>", escape(label));
            for c in cells {
                match c {
                    Some((a, b)) => {
                        let _ = write!(h, "<td>{a:.p$} → {b:.p$}</td>", p = pair_decimals(tables));
                    }
                    None => h.push_str("<td>–</td>"),
                }
            }
            h.push_str("</tr>\n");
        }
        h.push_str("</table>\n");
    }
    h
}
