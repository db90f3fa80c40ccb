//! Plots of a study report, from plain data, as SVG documents and PNG images.
//!
//! Contract:
//! - Inputs are plain numbers and names (no other cclab types). Every plot function returns a
//!   complete, standalone SVG document of [`WIDTH`]×[`HEIGHT`] px as a `String`, fit to embed
//!   inline in an HTML page, or a [`PlotError`]; none panics.
//! - Empty input (no series, or a series/group without values) and non-finite values (NaN, ±∞)
//!   are errors, and so are values beyond ±10³⁰⁰ and axes too narrow for ticks
//!   ([`PlotError::Range`]): every axis is checked before the drawing library places its ticks,
//!   whose loop would not end on them. No plot function loops without bound on any input. A group with a single value or point still draws (a flat box; a centroid
//!   without an ellipse).
//! - Every plot has the title and both axis labels of its [`Labels`] (axis labels carry units,
//!   e.g. "Ping RTT (ms)"). Series and groups take the Okabe & Ito colour-blind-safe palette in
//!   order; from the ninth on the colours repeat with another dash pattern and marker shape.
//!   Plots of several series have a legend in a column right of the chart, so it hides no data.
//! - [`svg_to_png`] rasterises any of these SVGs to PNG in pure Rust with an embedded font
//!   (DejaVu Sans): no system fonts or libraries needed.
//! - [`curve_plot`] draws lines with markers over bands (e.g. the median and quartiles of a
//!   metric against a numeric study axis) with an optional dashed threshold.
//! - The statistics behind the plots are public pure functions: [`box_stats`] (Tukey box with
//!   linear-interpolation quartiles), [`ecdf_steps`], [`covariance_ellipse`], [`qq_points`].

mod curve;
mod draw;
mod geometry;
mod png;

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

pub use curve::{BandPoint, BandSeries, curve_plot};
use draw::{
    Dash, INK, LegendKind, NOTE_SIZE, chart, draw_categories, draw_err, draw_marker, draw_path,
    fmt_value, layout_categories, look, padded_range, page, plot_width, x_label_area_categories,
    x_label_area_numeric,
};
pub use geometry::{
    BoxStats, Ellipse, box_stats, covariance_ellipse, ecdf_steps, percentile_sorted, qq_points,
};
pub use png::{svg_to_png, svg_to_png_scaled};

/// Width of every plot, px.
pub const WIDTH: u32 = 800;
/// Height of every plot, px.
pub const HEIGHT: u32 = 500;

/// Title and axis labels of a plot; axis labels should carry units, e.g. "Throughput (Mbit/s)".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Labels {
    /// Title above the chart.
    pub title: String,
    /// Label of the x axis.
    pub x_label: String,
    /// Label of the y axis.
    pub y_label: String,
}

impl Labels {
    /// Labels from string slices.
    pub fn new(title: &str, x_label: &str, y_label: &str) -> Self {
        Self {
            title: title.to_string(),
            x_label: x_label.to_string(),
            y_label: y_label.to_string(),
        }
    }
}

/// One bar of [`bar_plot`]: name, value and an optional `(low, high)` whisker (e.g. a 95 %
/// confidence interval).
pub type Bar = (String, f64, Option<(f64, f64)>);

/// One series of [`timeseries_plot`]: name and `(time, value)` points; `None` is a gap.
pub type TimeSeries = (String, Vec<(f64, Option<f64>)>);

/// Why a plot could not be made.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlotError {
    /// No data to plot, or a series or group without values.
    #[error("nothing to plot: {what}")]
    Empty {
        /// What is empty.
        what: String,
    },
    /// A value is NaN or infinite, or the data's range is too wide to draw.
    #[error("cannot plot non-finite data: {what}")]
    NonFinite {
        /// Which value.
        what: String,
    },
    /// An axis plotters cannot draw or place ticks on: values beyond ±10³⁰⁰, or a range too
    /// narrow (see `draw::check_axis`).
    #[error("cannot draw {what}")]
    Range {
        /// Which axis or data, and why.
        what: String,
    },
    /// An argument is out of its domain.
    #[error("invalid plot argument: {0}")]
    Invalid(String),
    /// The drawing library failed.
    #[error("drawing failed: {0}")]
    Draw(String),
    /// Rasterising the SVG to PNG failed.
    #[error("PNG rendering failed: {0}")]
    Png(String),
}

/// Error unless `items` has at least one element.
fn need_some<T>(plot: &str, items: &[T]) -> Result<(), PlotError> {
    if items.is_empty() {
        return Err(PlotError::Empty {
            what: format!("{plot} without series"),
        });
    }
    Ok(())
}

/// Error unless `values` is non-empty and all finite.
fn check_values(plot: &str, name: &str, values: &[f64]) -> Result<(), PlotError> {
    if values.is_empty() {
        return Err(PlotError::Empty {
            what: format!("{plot}: `{name}` has no values"),
        });
    }
    match values.iter().find(|v| !v.is_finite()) {
        Some(v) => Err(PlotError::NonFinite {
            what: format!("{plot}: `{name}` has the value {v}"),
        }),
        None => Ok(()),
    }
}

/// Smallest and largest of some values (caller ensures there is at least one).
fn min_max(values: impl IntoIterator<Item = f64>) -> (f64, f64) {
    values
        .into_iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        })
}

/// Box plot: one Tukey box per group, group names under the x axis.
///
/// Boxes span the quartiles (linear interpolation) with the median as a bold line; whiskers end
/// at the most extreme values within 1.5·IQR of the box; values beyond are drawn as open
/// circles. Many or long names are shrunk, wrapped at spaces, or written vertically.
///
/// # Errors
/// [`PlotError::Empty`] without groups or for a group without values, [`PlotError::NonFinite`]
/// for a NaN or infinite value.
pub fn box_plot(spec: &Labels, groups: &[(String, Vec<f64>)]) -> Result<String, PlotError> {
    need_some("box plot", groups)?;
    for (name, values) in groups {
        check_values("box plot", name, values)?;
    }
    let stats: Vec<BoxStats> = groups
        .iter()
        .map(|(name, v)| {
            box_stats(v).ok_or_else(|| PlotError::Empty {
                what: format!("box plot: `{name}` has no values"),
            })
        })
        .collect::<Result<_, _>>()?;
    let (lo, hi) = min_max(stats.iter().flat_map(|s| {
        [s.whisker_lo, s.whisker_hi]
            .into_iter()
            .chain(s.outliers.iter().copied())
    }));
    let y = padded_range(lo, hi, true, false)?;
    let names: Vec<String> = groups.iter().map(|g| g.0.clone()).collect();
    page(spec, None, |root, area| {
        let n = groups.len();
        let cats = layout_categories(&names, plot_width(area, y) / n as f64);
        let x = (-0.5, n as f64 - 0.5);
        let mut ch = chart(
            area,
            &spec.x_label,
            &spec.y_label,
            x,
            y,
            x_label_area_categories(&cats),
            true,
        )?;
        draw_categories(root, &ch, &cats, y.0)?;
        let (half, cap) = (0.3, 0.15);
        for (i, s) in stats.iter().enumerate() {
            let lk = look(i);
            let xi = i as f64;
            let rect = [(xi - half, s.q1), (xi + half, s.q3)];
            ch.draw_series([
                Rectangle::new(rect, lk.color.mix(0.75).filled()),
                Rectangle::new(rect, INK.stroke_width(1)),
            ])
            .map_err(draw_err)?;
            let whiskers = [
                vec![(xi, s.q3), (xi, s.whisker_hi)],
                vec![(xi, s.q1), (xi, s.whisker_lo)],
                vec![(xi - cap, s.whisker_hi), (xi + cap, s.whisker_hi)],
                vec![(xi - cap, s.whisker_lo), (xi + cap, s.whisker_lo)],
            ];
            ch.draw_series(
                whiskers
                    .into_iter()
                    .map(|w| PathElement::new(w, INK.stroke_width(1))),
            )
            .map_err(draw_err)?;
            ch.draw_series([PathElement::new(
                vec![(xi - half, s.median), (xi + half, s.median)],
                BLACK.stroke_width(3),
            )])
            .map_err(draw_err)?;
            ch.draw_series(
                s.outliers
                    .iter()
                    .map(|v| Circle::new((xi, *v), 3, INK.stroke_width(1))),
            )
            .map_err(draw_err)?;
        }
        Ok(())
    })
}

/// Empirical CDF per series, as step functions; y from 0 to 1.
///
/// # Errors
/// [`PlotError::Empty`] without series or for a series without values,
/// [`PlotError::NonFinite`] for a NaN or infinite value.
pub fn cdf_plot(spec: &Labels, series: &[(String, Vec<f64>)]) -> Result<String, PlotError> {
    need_some("CDF plot", series)?;
    for (name, values) in series {
        check_values("CDF plot", name, values)?;
    }
    let (lo, hi) = min_max(series.iter().flat_map(|s| s.1.iter().copied()));
    let x = padded_range(lo, hi, true, false)?;
    let y = (0.0, 1.0);
    let names: Vec<String> = series.iter().map(|s| s.0.clone()).collect();
    let legend = (names.len() > 1).then_some((names.as_slice(), LegendKind::Line));
    page(spec, legend, |_, area| {
        let mut ch = chart(
            area,
            &spec.x_label,
            &spec.y_label,
            x,
            (y.0, y.1 + 0.01),
            x_label_area_numeric(),
            false,
        )?;
        for (i, (_, values)) in series.iter().enumerate() {
            let lk = look(i);
            let mut pts = vec![(x.0, 0.0)];
            pts.extend(ecdf_steps(values));
            pts.push((x.1, 1.0));
            draw_path(&mut ch, pts, lk.dash, lk.color.stroke_width(2))?;
        }
        Ok(())
    })
}

/// Flent's "ellipsis" plot: per group the 1-σ covariance ellipse of its `(x, y)` points (e.g.
/// x = latency, y = throughput) and the centroid marker, with a legend of the groups.
///
/// A group of one point (or of identical points) shows only its centroid.
///
/// # Errors
/// [`PlotError::Empty`] without groups or for a group without points,
/// [`PlotError::NonFinite`] for a NaN or infinite coordinate.
pub fn ellipse_plot(
    spec: &Labels,
    groups: &[(String, Vec<(f64, f64)>)],
) -> Result<String, PlotError> {
    need_some("ellipse plot", groups)?;
    let mut shapes = Vec::with_capacity(groups.len());
    for (name, pts) in groups {
        let xs: Vec<f64> = pts.iter().map(|p| p.0).collect();
        let ys: Vec<f64> = pts.iter().map(|p| p.1).collect();
        check_values("ellipse plot", name, &xs)?;
        check_values("ellipse plot", name, &ys)?;
        let n = pts.len() as f64;
        let centroid = (xs.iter().sum::<f64>() / n, ys.iter().sum::<f64>() / n);
        shapes.push((centroid, covariance_ellipse(pts)));
    }
    let mut xs = Vec::new();
    let mut ys = Vec::new();
    for ((cx, cy), e) in &shapes {
        xs.push(*cx);
        ys.push(*cy);
        if let Some(e) = e {
            let (x0, x1, y0, y1) = e.bounds();
            xs.extend([x0, x1]);
            ys.extend([y0, y1]);
        }
    }
    let (xl, xh) = min_max(xs);
    let (yl, yh) = min_max(ys);
    let x = padded_range(xl, xh, false, false)?;
    let y = padded_range(yl, yh, false, false)?;
    let names: Vec<String> = groups.iter().map(|g| g.0.clone()).collect();
    page(
        spec,
        Some((names.as_slice(), LegendKind::LineMarker)),
        |_, area| {
            let mut ch = chart(
                area,
                &spec.x_label,
                &spec.y_label,
                x,
                y,
                x_label_area_numeric(),
                false,
            )?;
            for (i, (_, e)) in shapes.iter().enumerate() {
                let Some(e) = e else { continue };
                let lk = look(i);
                let outline = e.outline(120);
                ch.draw_series([Polygon::new(outline.clone(), lk.color.mix(0.15).filled())])
                    .map_err(draw_err)?;
                let mut closed = outline;
                closed.push(closed[0]);
                draw_path(&mut ch, closed, lk.dash, lk.color.stroke_width(2))?;
            }
            for (i, (c, _)) in shapes.iter().enumerate() {
                let lk = look(i);
                draw_marker(ch.plotting_area(), *c, lk.marker, INK, 7)?;
                draw_marker(ch.plotting_area(), *c, lk.marker, lk.color, 5)?;
            }
            Ok(())
        },
    )
}

/// Q-Q plot: `quantiles` matching quantiles of sample `a` (x) against sample `b` (y), with the
/// y = x reference line. Both axes share one range; axis labels are prefixed by the sample names.
///
/// # Errors
/// [`PlotError::Empty`] if a sample has no values, [`PlotError::NonFinite`] for a NaN or
/// infinite value, [`PlotError::Invalid`] for `quantiles == 0`.
pub fn qq_plot(
    spec: &Labels,
    a: (&str, &[f64]),
    b: (&str, &[f64]),
    quantiles: usize,
) -> Result<String, PlotError> {
    check_values("Q-Q plot", a.0, a.1)?;
    check_values("Q-Q plot", b.0, b.1)?;
    if quantiles == 0 {
        return Err(PlotError::Invalid(
            "Q-Q plot needs quantiles ≥ 1".to_string(),
        ));
    }
    let pts = qq_points(a.1, b.1, quantiles);
    let (lo, hi) = min_max(pts.iter().flat_map(|p| [p.0, p.1]));
    let r = padded_range(lo, hi, true, false)?;
    let x_desc = format!("{}: {}", a.0, spec.x_label);
    let y_desc = format!("{}: {}", b.0, spec.y_label);
    page(spec, None, |root, area| {
        let mut ch = chart(area, &x_desc, &y_desc, r, r, x_label_area_numeric(), false)?;
        draw_path(
            &mut ch,
            vec![(r.0, r.0), (r.1, r.1)],
            Dash::Dashed(8, 5),
            RGBColor(0x88, 0x88, 0x88).stroke_width(1),
        )?;
        let lk = look(4);
        for p in &pts {
            draw_marker(ch.plotting_area(), *p, lk.marker, lk.color, 4)?;
        }
        // Name the reference line near its upper end, below it.
        let at = r.0 + (r.1 - r.0) * 0.93;
        let (px, py) = ch.backend_coord(&(at, at));
        root.draw(&Text::new(
            "y = x",
            (px, py + 10),
            TextStyle::from((draw::FONT, NOTE_SIZE))
                .color(&INK)
                .pos(Pos::new(HPos::Center, VPos::Top)),
        ))
        .map_err(draw_err)?;
        Ok(())
    })
}

/// Bar plot: one bar per entry `(name, value, optional (low, high) whisker)`, names under the x
/// axis and the value printed above each bar.
///
/// The y axis starts at 0 (or below, for negative values). When all values and whiskers lie in
/// `[0, 1]` (e.g. Jain's fairness index) the axis covers 0 to 1 (with room for the labels).
///
/// # Errors
/// [`PlotError::Empty`] without bars, [`PlotError::NonFinite`] for a NaN or infinite value or
/// whisker end, [`PlotError::Invalid`] for a whisker with low > high.
pub fn bar_plot(spec: &Labels, bars: &[Bar]) -> Result<String, PlotError> {
    need_some("bar plot", bars)?;
    for (name, v, w) in bars {
        let mut values = vec![*v];
        if let Some((l, h)) = w {
            values.extend([*l, *h]);
        }
        check_values("bar plot", name, &values)?;
        if let Some((l, h)) = w
            && l > h
        {
            return Err(PlotError::Invalid(format!(
                "bar plot: `{name}` has the whisker {l}..{h} with low > high"
            )));
        }
    }
    let all = bars
        .iter()
        .flat_map(|(_, v, w)| std::iter::once(*v).chain(w.iter().flat_map(|(l, h)| [*l, *h])));
    let (lo, hi) = min_max(all);
    let (lo, hi) = (lo.min(0.0), hi.max(0.0));
    let y = if lo >= 0.0 && hi <= 1.0 {
        (0.0, 1.1)
    } else {
        let (l, h) = padded_range(lo, hi, true, false)?;
        let l = if lo >= 0.0 { 0.0 } else { l };
        (l, h + (h - l) * 0.05)
    };
    let names: Vec<String> = bars.iter().map(|b| b.0.clone()).collect();
    page(spec, None, |root, area| {
        let n = bars.len();
        let cats = layout_categories(&names, plot_width(area, y) / n as f64);
        let x = (-0.5, n as f64 - 0.5);
        let mut ch = chart(
            area,
            &spec.x_label,
            &spec.y_label,
            x,
            y,
            x_label_area_categories(&cats),
            true,
        )?;
        draw_categories(root, &ch, &cats, y.0)?;
        // Narrower bars when there are few, so they do not look like walls.
        let (half, cap) = if n >= 4 { (0.35, 0.12) } else { (0.25, 0.08) };
        let value_size = if n > 12 { 12.0 } else { NOTE_SIZE };
        for (i, (_, v, w)) in bars.iter().enumerate() {
            let lk = look(i);
            let xi = i as f64;
            let rect = [(xi - half, 0.0), (xi + half, *v)];
            ch.draw_series([
                Rectangle::new(rect, lk.color.filled()),
                Rectangle::new(rect, INK.stroke_width(1)),
            ])
            .map_err(draw_err)?;
            let mut top = v.max(0.0);
            if let Some((l, h)) = w {
                let segs = [
                    vec![(xi, *l), (xi, *h)],
                    vec![(xi - cap, *l), (xi + cap, *l)],
                    vec![(xi - cap, *h), (xi + cap, *h)],
                ];
                ch.draw_series(
                    segs.into_iter()
                        .map(|s| PathElement::new(s, BLACK.stroke_width(2))),
                )
                .map_err(draw_err)?;
                top = top.max(*h);
            }
            let (px, py) = ch.backend_coord(&(xi, top));
            root.draw(&Text::new(
                fmt_value(*v),
                (px, py - 4),
                TextStyle::from((draw::FONT, value_size))
                    .color(&BLACK)
                    .pos(Pos::new(HPos::Center, VPos::Bottom)),
            ))
            .map_err(draw_err)?;
        }
        Ok(())
    })
}

/// Time series: one line per series through its `(time, value)` points in the given order, with
/// a gap wherever the value is `None`; an isolated point is drawn as a dot. The y axis starts at
/// 0 when no value is negative.
///
/// # Errors
/// [`PlotError::Empty`] without series, for a series without points, or when no series has a
/// value; [`PlotError::NonFinite`] for a NaN or infinite time or value.
pub fn timeseries_plot(spec: &Labels, series: &[TimeSeries]) -> Result<String, PlotError> {
    need_some("time series plot", series)?;
    for (name, pts) in series {
        let xs: Vec<f64> = pts.iter().map(|p| p.0).collect();
        check_values("time series plot", name, &xs)?;
        let ys: Vec<f64> = pts.iter().filter_map(|p| p.1).collect();
        if !ys.is_empty() {
            check_values("time series plot", name, &ys)?;
        }
    }
    let ys: Vec<f64> = series
        .iter()
        .flat_map(|s| s.1.iter().filter_map(|p| p.1))
        .collect();
    if ys.is_empty() {
        return Err(PlotError::Empty {
            what: "time series plot: no series has a value".to_string(),
        });
    }
    let (xl, xh) = min_max(series.iter().flat_map(|s| s.1.iter().map(|p| p.0)));
    let x = if xh > xl {
        (xl, xh)
    } else {
        padded_range(xl, xh, false, false)?
    };
    let (yl, yh) = min_max(ys);
    let y = padded_range(yl, yh, true, true)?;
    let names: Vec<String> = series.iter().map(|s| s.0.clone()).collect();
    let legend = (names.len() > 1).then_some((names.as_slice(), LegendKind::Line));
    page(spec, legend, |_, area| {
        let mut ch = chart(
            area,
            &spec.x_label,
            &spec.y_label,
            x,
            y,
            x_label_area_numeric(),
            false,
        )?;
        for (i, (_, pts)) in series.iter().enumerate() {
            let lk = look(i);
            let mut segments: Vec<Vec<(f64, f64)>> = vec![Vec::new()];
            for (t, v) in pts {
                match v {
                    Some(v) => segments.last_mut().map_or((), |s| s.push((*t, *v))),
                    None if segments.last().is_some_and(|s| !s.is_empty()) => {
                        segments.push(Vec::new())
                    }
                    None => {}
                }
            }
            for seg in segments {
                match seg.len() {
                    0 => {}
                    1 => {
                        ch.draw_series([Circle::new(seg[0], 3, lk.color.filled())])
                            .map_err(draw_err)?;
                    }
                    _ => draw_path(&mut ch, seg, lk.dash, lk.color.stroke_width(2))?,
                }
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests;
