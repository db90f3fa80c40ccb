//! Curve plot: lines with markers through a central value per x, a band around each line, and
//! an optional horizontal threshold line.
//!
//! Contract: [`curve_plot`] follows the module contract of [`super`] (a standalone SVG or a
//! [`PlotError`], never a panic): every series needs at least one point, every coordinate must
//! be finite and every band must have `lo ≤ hi`. Points are drawn in ascending x whatever their
//! order. What the central value and the band are (median and quartiles, mean and CI, …) is
//! the caller's to say in the caption.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::draw::{
    self, Dash, INK, LegendKind, NOTE_SIZE, chart, draw_err, draw_marker, draw_path, fmt_value,
    look, padded_range, page, x_label_area_numeric,
};
use super::{Labels, PlotError, check_values, min_max, need_some};

/// One point of a [`curve_plot`] line: its x, the central value `y` and the band `lo..=hi`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BandPoint {
    /// Position on the x axis.
    pub x: f64,
    /// The central value (the line and marker).
    pub y: f64,
    /// Lower edge of the band.
    pub lo: f64,
    /// Upper edge of the band.
    pub hi: f64,
}

/// One line of [`curve_plot`]: its name (legend) and points.
pub type BandSeries = (String, Vec<BandPoint>);

/// One coloured line with markers per series through its points' central values, over a
/// translucent band from `lo` to `hi`, and a dashed horizontal line at `threshold` (labelled
/// with its value) if given. The legend names the series; the y axis starts at 0 when no
/// value is negative.
///
/// # Errors
/// [`PlotError::Empty`] without series or for a series without points,
/// [`PlotError::NonFinite`] for a NaN or infinite coordinate or threshold,
/// [`PlotError::Invalid`] for a band with `lo > hi`.
pub fn curve_plot(
    spec: &Labels,
    series: &[BandSeries],
    threshold: Option<f64>,
) -> Result<String, PlotError> {
    need_some("curve plot", series)?;
    let mut lines: Vec<Vec<BandPoint>> = Vec::with_capacity(series.len());
    for (name, pts) in series {
        let coords: Vec<f64> = pts.iter().flat_map(|p| [p.x, p.y, p.lo, p.hi]).collect();
        check_values("curve plot", name, &coords)?;
        if let Some(p) = pts.iter().find(|p| p.lo > p.hi) {
            return Err(PlotError::Invalid(format!(
                "curve plot: `{name}` has the band {}..{} with low > high at x = {}",
                p.lo, p.hi, p.x
            )));
        }
        let mut sorted = pts.clone();
        sorted.sort_by(|a, b| a.x.total_cmp(&b.x));
        lines.push(sorted);
    }
    if let Some(t) = threshold {
        check_values("curve plot", "threshold", &[t])?;
    }
    let (xl, xh) = min_max(lines.iter().flatten().map(|p| p.x));
    let x = padded_range(xl, xh, false, false)?;
    let (yl, yh) = min_max(
        lines
            .iter()
            .flatten()
            .flat_map(|p| [p.y, p.lo, p.hi])
            .chain(threshold),
    );
    let y = padded_range(yl, yh, true, true)?;
    let names: Vec<String> = series.iter().map(|s| s.0.clone()).collect();
    page(
        spec,
        Some((names.as_slice(), LegendKind::LineMarker)),
        |root, area| {
            let mut ch = chart(
                area,
                &spec.x_label,
                &spec.y_label,
                x,
                y,
                x_label_area_numeric(),
                false,
            )?;
            for (i, pts) in lines.iter().enumerate() {
                let lk = look(i);
                let band = lk.color.mix(0.18);
                if pts.len() >= 2 {
                    let mut outline: Vec<(f64, f64)> = pts.iter().map(|p| (p.x, p.hi)).collect();
                    outline.extend(pts.iter().rev().map(|p| (p.x, p.lo)));
                    ch.draw_series([Polygon::new(outline, band.filled())])
                        .map_err(draw_err)?;
                } else {
                    let p = pts[0];
                    ch.draw_series([PathElement::new(
                        vec![(p.x, p.lo), (p.x, p.hi)],
                        lk.color.mix(0.5).stroke_width(6),
                    )])
                    .map_err(draw_err)?;
                }
            }
            if let Some(t) = threshold {
                draw_path(
                    &mut ch,
                    vec![(x.0, t), (x.1, t)],
                    Dash::Dashed(8, 5),
                    INK.stroke_width(1),
                )?;
                // Labelled at the left end, where curves that rise with x are below it.
                let (px, py) = ch.backend_coord(&(x.0, t));
                root.draw(&Text::new(
                    fmt_value(t),
                    (px + 4, py - 3),
                    TextStyle::from((draw::FONT, NOTE_SIZE))
                        .color(&INK)
                        .pos(Pos::new(HPos::Left, VPos::Bottom)),
                ))
                .map_err(draw_err)?;
            }
            for (i, pts) in lines.iter().enumerate() {
                let lk = look(i);
                if pts.len() >= 2 {
                    let line: Vec<(f64, f64)> = pts.iter().map(|p| (p.x, p.y)).collect();
                    draw_path(&mut ch, line, lk.dash, lk.color.stroke_width(2))?;
                }
                for p in pts {
                    draw_marker(ch.plotting_area(), (p.x, p.y), lk.marker, INK, 5)?;
                    draw_marker(ch.plotting_area(), (p.x, p.y), lk.marker, lk.color, 4)?;
                }
            }
            Ok(())
        },
    )
}
