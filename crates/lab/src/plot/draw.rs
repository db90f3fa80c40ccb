//! Shared drawing machinery of the plots: page frame with title, palette and line/marker looks,
//! legend column, axis mesh and a categorical x axis with labels that fit.
//!
//! Contract: private to [`super`]; all sizes are in SVG pixels of the 800×500 page. Text widths
//! are estimated (the SVG viewer picks the real font), generously, so labels do not collide.

use plotters::coord::CoordTranslate;
use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{HEIGHT, Labels, PlotError, WIDTH};

/// A drawing area on the SVG page.
pub(super) type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
/// A chart with two `f64` axes on the SVG page.
pub(super) type Chart<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// Font family of all text; the PNG renderer maps it to its embedded font.
pub(super) const FONT: &str = "sans-serif";
/// Font sizes in plotters units (the SVG gets `size / 1.24` px).
pub(super) const TITLE_SIZE: f64 = 26.0;
pub(super) const DESC_SIZE: f64 = 19.0;
pub(super) const TICK_SIZE: f64 = 16.0;
pub(super) const LEGEND_SIZE: f64 = 16.0;
pub(super) const NOTE_SIZE: f64 = 15.0;

/// Okabe & Ito (2008) colour-blind-safe palette.
pub(super) const PALETTE: [RGBColor; 8] = [
    RGBColor(0xE6, 0x9F, 0x00),
    RGBColor(0x56, 0xB4, 0xE9),
    RGBColor(0x00, 0x9E, 0x73),
    RGBColor(0xF0, 0xE4, 0x42),
    RGBColor(0x00, 0x72, 0xB2),
    RGBColor(0xD5, 0x5E, 0x00),
    RGBColor(0xCC, 0x79, 0xA7),
    RGBColor(0x00, 0x00, 0x00),
];
/// Dark grey for outlines, medians and reference lines.
pub(super) const INK: RGBColor = RGBColor(0x33, 0x33, 0x33);

/// A drawing error as a [`PlotError`].
pub(super) fn draw_err<E: std::fmt::Display>(e: E) -> PlotError {
    PlotError::Draw(e.to_string())
}

/// Line pattern of a series.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Dash {
    Solid,
    /// Dash length and gap, pixels.
    Dashed(u32, u32),
}

/// Marker shape of a series.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Marker {
    Circle,
    Triangle,
    Square,
    Cross,
}

/// How series number `i` looks: colour cycles through the palette, and each further round of 8
/// gets another dash pattern and marker shape.
#[derive(Debug, Clone, Copy)]
pub(super) struct Look {
    pub color: RGBColor,
    pub dash: Dash,
    pub marker: Marker,
}

/// The look of series number `i`.
pub(super) fn look(i: usize) -> Look {
    const DASHES: [Dash; 4] = [
        Dash::Solid,
        Dash::Dashed(9, 5),
        Dash::Dashed(2, 4),
        Dash::Dashed(16, 5),
    ];
    const MARKERS: [Marker; 4] = [
        Marker::Circle,
        Marker::Triangle,
        Marker::Square,
        Marker::Cross,
    ];
    let round = (i / PALETTE.len()) % 4;
    Look {
        color: PALETTE[i % PALETTE.len()],
        dash: DASHES[round],
        marker: MARKERS[round],
    }
}

/// Draw a marker of radius about `size` px at `at` on `area` (a page area or a chart's
/// plotting area).
pub(super) fn draw_marker<DB, CT>(
    area: &DrawingArea<DB, CT>,
    at: CT::From,
    shape: Marker,
    color: RGBColor,
    size: i32,
) -> Result<(), PlotError>
where
    DB: DrawingBackend,
    CT: CoordTranslate,
    CT::From: Clone,
{
    let style = color.filled();
    match shape {
        Marker::Circle => area.draw(&(EmptyElement::at(at) + Circle::new((0, 0), size, style))),
        Marker::Triangle => {
            area.draw(&(EmptyElement::at(at) + TriangleMarker::new((0, 0), size + 1, style)))
        }
        Marker::Square => area.draw(
            &(EmptyElement::at(at)
                + Rectangle::new([(-size + 1, -size + 1), (size - 1, size - 1)], style)),
        ),
        Marker::Cross => {
            area.draw(&(EmptyElement::at(at) + Cross::new((0, 0), size, color.stroke_width(3))))
        }
    }
    .map_err(draw_err)
}

/// Draw a polyline in data coordinates with the series' dash pattern.
pub(super) fn draw_path(
    chart: &mut Chart<'_, '_>,
    points: Vec<(f64, f64)>,
    dash: Dash,
    style: ShapeStyle,
) -> Result<(), PlotError> {
    match dash {
        Dash::Solid => chart
            .draw_series(LineSeries::new(points, style))
            .map(|_| ()),
        Dash::Dashed(len, gap) => chart
            .draw_series(DashedLineSeries::new(points, len, gap, style))
            .map(|_| ()),
    }
    .map_err(draw_err)
}

/// Estimated width in px of `text` at plotters font `size` (DejaVu Sans is wide: ~0.6 em/char).
pub(super) fn text_width(text: &str, size: f64) -> f64 {
    text.chars().count() as f64 * size / 1.24 * 0.6
}

/// Height in px of one text line at plotters font `size`.
pub(super) fn line_height(size: f64) -> f64 {
    size / 1.24 * 1.25
}

/// `text` cut to at most `max_px` estimated width by an ellipsis in the middle, keeping both
/// ends (names of configurations often differ only at the end).
pub(super) fn truncate(text: &str, size: f64, max_px: f64) -> String {
    if text_width(text, size) <= max_px {
        return text.to_string();
    }
    let keep = ((max_px / (size / 1.24 * 0.6)) as usize).saturating_sub(1);
    let chars: Vec<char> = text.chars().collect();
    let tail = keep / 2;
    let head = keep - tail;
    let mut s: String = chars[..head].iter().collect();
    s.push('…');
    s.extend(&chars[chars.len() - tail..]);
    s
}

/// A tick label: at most 5 significant digits, no float noise, no trailing zeros; scientific
/// notation (`1.5e12`) from 10⁹ up and below 10⁻⁶, so a label stays short whatever the value.
pub(super) fn fmt_tick(v: &f64) -> String {
    let v = *v;
    if v == 0.0 || !v.is_finite() {
        return "0".to_string();
    }
    let mag = v.abs().log10().floor() as i32;
    if !(-6..9).contains(&mag) {
        let s = format!("{v:.4e}");
        return match s.split_once('e') {
            Some((m, e)) if m.contains('.') => {
                format!("{}e{e}", m.trim_end_matches('0').trim_end_matches('.'))
            }
            _ => s,
        };
    }
    let prec = (4 - mag).clamp(0, 10) as usize;
    let s = format!("{v:.prec$}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    if s == "-0" { "0".to_string() } else { s }
}

/// A value printed on a chart: three decimals below 1, fewer above.
pub(super) fn fmt_value(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// Largest magnitude a plotted value or axis end may have.
///
/// plotters (0.3.7, `compute_f64_key_points` in `coord/ranged1d/types/numeric.rs`) places the
/// ticks with a loop that ends only once the tick count exceeds its target; when the axis width
/// or its scale `10^⌊log10 width⌋` overflows to ∞ (values near `f64::MAX` ≈ 1.8·10³⁰⁸, padded)
/// the count is NaN and the loop never ends. No cclab quantity comes near 10³⁰⁰; a value beyond
/// it is refused, leaving room for the padding and for plotters' own arithmetic.
pub(super) const MAX_AXIS_MAGNITUDE: f64 = 1e300;

/// Narrowest axis width: below, plotters' tick scale `10^⌊log10 width⌋` (divided further while
/// it looks for ticks) underflows towards 0 and the same loop never ends.
pub(super) const MIN_AXIS_SPAN: f64 = 1e-300;

/// Error unless `lo..hi` is an axis plotters can draw and place ticks on: finite ends within
/// ±[`MAX_AXIS_MAGNITUDE`], `lo < hi`, and a width of at least [`MIN_AXIS_SPAN`] and of more
/// than a few units in the last place of its ends (so ticks can be told apart).
pub(super) fn check_axis(axis: &str, (lo, hi): (f64, f64)) -> Result<(), PlotError> {
    let width = hi - lo;
    let magnitude = lo.abs().max(hi.abs());
    let why = if !(lo.is_finite() && hi.is_finite()) {
        Some("an end is not finite".to_owned())
    } else if magnitude > MAX_AXIS_MAGNITUDE {
        Some(format!(
            "values beyond ±{MAX_AXIS_MAGNITUDE:e} are not drawn (a measurement that large is \
             broken)"
        ))
    } else if !(width >= MIN_AXIS_SPAN && width > 4.0 * f64::EPSILON * magnitude) {
        Some("it is empty or too narrow to place ticks on".to_owned())
    } else {
        None
    };
    match why {
        Some(why) => Err(PlotError::Range {
            what: format!("the {axis} axis {lo:e}..{hi:e}: {why}"),
        }),
        None => Ok(()),
    }
}

/// A drawable range from the data's `lo..hi`: widened when empty, padded by 5 % each side.
///
/// With `floor_at_zero`, a range of non-negative data starts at 0 when the padding would cross
/// it; with `from_zero`, non-negative data always starts at 0. Data beyond
/// ±[`MAX_AXIS_MAGNITUDE`] is refused ([`PlotError::Range`]).
pub(super) fn padded_range(
    lo: f64,
    hi: f64,
    floor_at_zero: bool,
    from_zero: bool,
) -> Result<(f64, f64), PlotError> {
    if !(lo.is_finite() && hi.is_finite() && (hi - lo).is_finite()) {
        return Err(PlotError::NonFinite {
            what: format!("data range {lo}..{hi} is too wide to draw"),
        });
    }
    if lo.abs().max(hi.abs()) > MAX_AXIS_MAGNITUDE {
        return Err(PlotError::Range {
            what: format!(
                "data range {lo:e}..{hi:e}: values beyond ±{MAX_AXIS_MAGNITUDE:e} are not drawn \
                 (a measurement that large is broken)"
            ),
        });
    }
    let (mut lo, mut hi) = (lo.min(hi), lo.max(hi));
    if from_zero && lo >= 0.0 {
        lo = 0.0;
    }
    if hi - lo <= f64::EPSILON * hi.abs().max(lo.abs()).max(1e-300) {
        let d = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
        let nonneg = lo >= 0.0;
        lo -= d;
        hi += d;
        if nonneg && (floor_at_zero || from_zero) {
            lo = lo.max(0.0);
        }
        return Ok((lo, hi));
    }
    let pad = (hi - lo) * 0.05;
    let nonneg = lo >= 0.0;
    let mut out_lo = if from_zero && lo == 0.0 {
        0.0
    } else {
        lo - pad
    };
    if nonneg && floor_at_zero {
        out_lo = out_lo.max(0.0);
    }
    Ok((out_lo, hi + pad))
}

/// Where the legend goes, if any, and how its samples look.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum LegendKind {
    /// A line sample in the series' look.
    Line,
    /// A line with the marker on it.
    LineMarker,
}

/// Width of the legend column for these names.
fn legend_width(names: &[String]) -> u32 {
    let w = names
        .iter()
        .map(|n| text_width(n, LEGEND_SIZE))
        .fold(0.0, f64::max);
    (w + 62.0).clamp(110.0, 230.0) as u32
}

/// Draw the legend column: one row per name, sample then name, from the top.
fn draw_legend(area: &Area<'_>, names: &[String], kind: LegendKind) -> Result<(), PlotError> {
    let (w, h) = area.dim_in_pixel();
    let top = 18;
    let row = ((h as i32 - top - 10) / names.len().max(1) as i32).clamp(12, 24);
    let text_max = w as f64 - 58.0;
    for (i, name) in names.iter().enumerate() {
        let y = top + row * i as i32;
        if y > h as i32 - row {
            let rest = names.len() - i;
            area.draw(&Text::new(
                format!("… {rest} more"),
                (10, y),
                TextStyle::from((FONT, LEGEND_SIZE))
                    .color(&INK)
                    .pos(Pos::new(HPos::Left, VPos::Center)),
            ))
            .map_err(draw_err)?;
            break;
        }
        let lk = look(i);
        let style = lk.color.stroke_width(3);
        let (x0, x1) = (8, 40);
        match lk.dash {
            Dash::Solid => area
                .draw(&PathElement::new(vec![(x0, y), (x1, y)], style))
                .map_err(draw_err)?,
            Dash::Dashed(len, gap) => {
                let mut x = x0;
                while x < x1 {
                    let end = (x + len as i32).min(x1);
                    area.draw(&PathElement::new(vec![(x, y), (end, y)], style))
                        .map_err(draw_err)?;
                    x = end + gap as i32;
                }
            }
        }
        if kind == LegendKind::LineMarker {
            draw_marker(area, (24, y), lk.marker, lk.color, 5)?;
        }
        area.draw(&Text::new(
            truncate(name, LEGEND_SIZE, text_max),
            (48, y),
            TextStyle::from((FONT, LEGEND_SIZE))
                .color(&BLACK)
                .pos(Pos::new(HPos::Left, VPos::Center)),
        ))
        .map_err(draw_err)?;
    }
    Ok(())
}

/// Draw a page: white background, title, optional legend column on the right, and the chart
/// that `draw` puts into the remaining area (it also gets the whole page for free text).
pub(super) fn page<F>(
    spec: &Labels,
    legend: Option<(&[String], LegendKind)>,
    draw: F,
) -> Result<String, PlotError>
where
    F: FnOnce(&Area<'_>, &Area<'_>) -> Result<(), PlotError>,
{
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_err)?;
        let body = root
            .titled(&spec.title, (FONT, TITLE_SIZE))
            .map_err(draw_err)?;
        match legend {
            Some((names, kind)) if !names.is_empty() => {
                let lw = legend_width(names);
                let (w, _) = body.dim_in_pixel();
                let (chart_area, legend_area) = body.split_horizontally(w - lw);
                draw(&root, &chart_area)?;
                draw_legend(&legend_area, names, kind)?;
            }
            _ => draw(&root, &body)?,
        }
        root.present().map_err(draw_err)?;
    }
    Ok(svg)
}

/// Margins around the chart inside its area, px.
const MARGIN: u32 = 10;
const MARGIN_RIGHT: u32 = 20;

/// Width of the y label area for a y range: tick labels plus the axis description.
fn y_label_area(y: (f64, f64)) -> u32 {
    let widest = (0..=10)
        .map(|k| y.0 + (y.1 - y.0) * k as f64 / 10.0)
        .map(|v| text_width(&fmt_tick(&v), TICK_SIZE))
        .fold(0.0, f64::max);
    (widest + 12.0 + line_height(DESC_SIZE) + 10.0) as u32
}

/// Height of the x label area for numeric tick labels plus the axis description.
pub(super) fn x_label_area_numeric() -> u32 {
    (line_height(TICK_SIZE) + 10.0 + line_height(DESC_SIZE) + 12.0) as u32
}

/// Width in px that the plotting area will get inside `area` for this y range.
pub(super) fn plot_width(area: &Area<'_>, y: (f64, f64)) -> f64 {
    area.dim_in_pixel().0 as f64 - (y_label_area(y) + MARGIN + MARGIN_RIGHT) as f64
}

/// Build a chart with `f64` axes over `x` and `y` and draw its mesh with the axis labels.
/// `categorical` leaves the x axis without ticks, for [`draw_categories`].
pub(super) fn chart<'a, 'b>(
    area: &'a Area<'b>,
    x_desc: &str,
    y_desc: &str,
    x: (f64, f64),
    y: (f64, f64),
    x_label_area: u32,
    categorical: bool,
) -> Result<Chart<'a, 'b>, PlotError> {
    // Every plot comes through here: no range reaches plotters' tick loop unchecked.
    check_axis("x", x)?;
    check_axis("y", y)?;
    let mut chart = ChartBuilder::on(area)
        .margin(MARGIN)
        .margin_right(MARGIN_RIGHT)
        .x_label_area_size(x_label_area)
        .y_label_area_size(y_label_area(y))
        .build_cartesian_2d(x.0..x.1, y.0..y.1)
        .map_err(draw_err)?;
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(x_desc)
        .y_desc(y_desc)
        .axis_desc_style((FONT, DESC_SIZE))
        .label_style((FONT, TICK_SIZE))
        .bold_line_style(RGBColor(0xDD, 0xDD, 0xDD))
        .light_line_style(RGBColor(0xF3, 0xF3, 0xF3))
        .axis_style(INK)
        .x_label_formatter(&fmt_tick)
        .y_label_formatter(&fmt_tick)
        .x_labels(9)
        .y_labels(8);
    if categorical {
        mesh.disable_x_mesh().x_labels(0);
    }
    mesh.draw().map_err(draw_err)?;
    Ok(chart)
}

/// How the category names fit under the x axis.
pub(super) struct Categories {
    size: f64,
    lines: Vec<Vec<String>>,
    rotated: bool,
    /// Height the labels need below the axis, px.
    pub height: u32,
}

/// Lay out category `names` in slots `slot` px wide: one line if it fits (at shrinking font
/// sizes), else wrapped at spaces into up to three lines, else written vertically.
pub(super) fn layout_categories(names: &[String], slot: f64) -> Categories {
    let room = slot * 0.92;
    for size in [TICK_SIZE, 14.0, 12.0] {
        if names.iter().all(|n| text_width(n, size) <= room) {
            return Categories {
                size,
                lines: names.iter().map(|n| vec![n.clone()]).collect(),
                rotated: false,
                height: (line_height(size) + 10.0) as u32,
            };
        }
    }
    for size in [TICK_SIZE, 14.0, 12.0] {
        let wrapped: Option<Vec<Vec<String>>> =
            names.iter().map(|n| wrap(n, size, room, 3)).collect();
        if let Some(lines) = wrapped {
            let most = lines.iter().map(Vec::len).max().unwrap_or(1);
            return Categories {
                size,
                lines,
                rotated: false,
                height: (most as f64 * line_height(size) + 10.0) as u32,
            };
        }
    }
    let size = 14.0;
    let max_px = 150.0;
    let lines: Vec<Vec<String>> = names
        .iter()
        .map(|n| vec![truncate(n, size, max_px)])
        .collect();
    let widest = lines
        .iter()
        .map(|l| text_width(&l[0], size))
        .fold(0.0, f64::max);
    Categories {
        size,
        lines,
        rotated: true,
        height: (widest + 14.0) as u32,
    }
}

/// Greedy word wrap of `text` into lines of at most `room` px; `None` if a word alone is too
/// wide or more than `max_lines` lines are needed.
fn wrap(text: &str, size: f64, room: f64, max_lines: usize) -> Option<Vec<String>> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        if text_width(word, size) > room {
            return None;
        }
        match lines.last_mut() {
            Some(last) if text_width(&format!("{last} {word}"), size) <= room => {
                last.push(' ');
                last.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    if lines.is_empty() {
        lines.push(String::new());
    }
    (lines.len() <= max_lines).then_some(lines)
}

/// Draw the category labels and ticks under the x axis of a categorical chart, category `i` at
/// `x = i`.
pub(super) fn draw_categories(
    root: &Area<'_>,
    chart: &Chart<'_, '_>,
    cats: &Categories,
    y_axis: f64,
) -> Result<(), PlotError> {
    let style = TextStyle::from((FONT, cats.size)).color(&BLACK);
    for (i, lines) in cats.lines.iter().enumerate() {
        let (px, py) = chart.backend_coord(&(i as f64, y_axis));
        root.draw(&PathElement::new(vec![(px, py), (px, py + 5)], INK))
            .map_err(draw_err)?;
        if cats.rotated {
            root.draw(&Text::new(
                lines[0].clone(),
                (px, py + 8),
                style
                    .transform(FontTransform::Rotate270)
                    .pos(Pos::new(HPos::Right, VPos::Center)),
            ))
            .map_err(draw_err)?;
        } else {
            for (k, line) in lines.iter().enumerate() {
                let y = py + 8 + (k as f64 * line_height(cats.size)) as i32;
                root.draw(&Text::new(
                    line.clone(),
                    (px, y),
                    style.pos(Pos::new(HPos::Center, VPos::Top)),
                ))
                .map_err(draw_err)?;
            }
        }
    }
    Ok(())
}

/// Height of the x label area for categories: the labels plus the axis description.
pub(super) fn x_label_area_categories(cats: &Categories) -> u32 {
    cats.height + (line_height(DESC_SIZE) + 14.0) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tick_format_is_short() {
        assert_eq!(fmt_tick(&0.30000000000000004), "0.3");
        assert_eq!(fmt_tick(&1234.5), "1234.5");
        assert_eq!(fmt_tick(&100.0), "100");
        assert_eq!(fmt_tick(&-0.0), "0");
        assert_eq!(fmt_tick(&0.000125), "0.000125");
        assert_eq!(fmt_value(0.9987), "0.999");
        assert_eq!(fmt_value(42.42), "42.4");
    }

    #[test]
    fn truncation_keeps_both_ends() {
        assert_eq!(truncate("short", 16.0, 100.0), "short");
        let t = truncate("bbr3_2brobust_long_name_12", 16.0, 100.0);
        assert!(t.starts_with("bbr3") && t.ends_with("_12") && t.contains('…'));
        assert!(text_width(&t, 16.0) <= 100.0);
    }

    #[test]
    fn ranges_are_padded_and_never_empty() {
        assert_eq!(padded_range(5.0, 5.0, true, false).unwrap(), (4.5, 5.5));
        assert_eq!(padded_range(0.0, 0.0, true, false).unwrap(), (0.0, 1.0));
        assert_eq!(padded_range(0.0, 10.0, true, false).unwrap(), (0.0, 10.5));
        assert_eq!(padded_range(2.0, 10.0, false, true).unwrap(), (0.0, 10.5));
        assert!(padded_range(-f64::MAX, f64::MAX, false, false).is_err());
    }

    #[test]
    fn categories_fit_or_wrap_or_rotate() {
        let names: Vec<String> = (0..11).map(|i| format!("bbr_tas {i}/8")).collect();
        let c = layout_categories(&names, 600.0 / 11.0);
        assert!(!c.rotated);
        assert_eq!(c.lines[3], vec!["bbr_tas".to_string(), "3/8".to_string()]);
        let c = layout_categories(&["a".to_string(), "b".to_string()], 300.0);
        assert_eq!(c.lines[0].len(), 1);
        let long = vec!["averyveryverylongconfigurationname".to_string(); 20];
        assert!(layout_categories(&long, 30.0).rotated);
    }
}
