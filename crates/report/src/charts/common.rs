//! Drawing helpers shared by the charts: the title block, legend swatches, the legend band
//! (a reserved strip between the title and the plots, so a legend never covers data), line
//! widths that keep equal lines visible, text placed in pixels, number formatting and the
//! "no data" note.

use crate::charts::font::text;
use crate::charts::render::DrawResult;
use metrics::RunReport;
use plotters::coord::{CoordTranslate, Shift};
use plotters::prelude::{
    Circle, DrawingArea, DrawingBackend, EmptyElement, PathElement, Polygon, Rectangle, Text,
};
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{Color, RGBColor, BLACK, WHITE};

/// Height of the title block (title and subtitle) in pixels.
pub(crate) const HEAD_PX: u32 = 64;
/// Grey for secondary text.
pub(crate) const MUTED: RGBColor = RGBColor(80, 80, 80);

/// Draws a title and a subtitle at the top left of `area`.
pub(crate) fn head<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    subtitle: &str,
) -> DrawResult {
    area.draw(&Text::new(title.to_string(), (16, 10), text(22).color(&BLACK)))?;
    area.draw(&Text::new(subtitle.to_string(), (16, 40), text(14).color(&MUTED)))?;
    Ok(())
}

/// Draws `s` with its anchor `(h, v)` at pixel `(x, y)` of `area`.
pub(crate) fn label<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    s: &str,
    (x, y): (i32, i32),
    size_px: u32,
    (h, v): (HPos, VPos),
) -> DrawResult {
    let style = text(size_px).color(&BLACK).pos(Pos::new(h, v));
    area.draw(&Text::new(s.to_string(), (x, y), style))?;
    Ok(())
}

/// Draws a 14 px colour swatch at `(x, y)` and `s` to its right; returns the next line's y.
pub(crate) fn swatch<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    (x, y): (i32, i32),
    color: RGBColor,
    s: &str,
) -> Result<i32, crate::charts::render::ChartError> {
    area.draw(&Rectangle::new([(x, y), (x + 14, y + 14)], color.filled()))?;
    area.draw(&Rectangle::new([(x, y), (x + 14, y + 14)], RGBColor(60, 60, 60).stroke_width(1)))?;
    label(area, s, (x + 22, y + 7), 13, (HPos::Left, VPos::Center))?;
    Ok(y + 20)
}

/// Height of one legend row in pixels.
pub(crate) const LEGEND_ROW_PX: u32 = 20;
/// Width of a legend entry's sample (line or marker) and the gap before its text.
const LEGEND_SAMPLE_PX: u32 = 30;
/// Space between legend columns.
const LEGEND_GAP_PX: u32 = 24;

/// One legend entry: a line sample of `width_px` in `color` (none if 0) and an optional
/// marker on it, then `text`.
pub(crate) struct LegendEntry {
    /// Line colour.
    pub(crate) color: RGBColor,
    /// Line width of the sample in pixels (the width the series is drawn with; 0: no line).
    pub(crate) width_px: u32,
    /// The series' marker, if it has one.
    pub(crate) marker: Option<Marker>,
    /// The entry's text.
    pub(crate) text: String,
}

/// Marker shapes, one per series (in this order), so equal points of different series can
/// still be told apart by shape as well as colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Marker {
    /// Filled circle.
    Circle,
    /// Filled square.
    Square,
    /// Filled triangle, point up.
    Triangle,
    /// Filled diamond.
    Diamond,
    /// Filled triangle, point down.
    TriangleDown,
    /// A diagonal cross (no fill).
    Cross,
}

/// The marker of series number `index`.
pub(crate) fn marker(index: usize) -> Marker {
    const ALL: [Marker; 6] = [
        Marker::Circle,
        Marker::Square,
        Marker::Triangle,
        Marker::Diamond,
        Marker::TriangleDown,
        Marker::Cross,
    ];
    ALL[index % ALL.len()]
}

/// Draws `shape` in `color` centred on `at` (a coordinate of `area`), about 11 px across,
/// with a white outline so touching markers stay apart.
pub(crate) fn draw_marker<DB: DrawingBackend, CT: CoordTranslate>(
    area: &DrawingArea<DB, CT>,
    at: CT::From,
    shape: Marker,
    color: RGBColor,
) -> DrawResult
where
    CT::From: Clone,
{
    let (fill, edge) = (color.filled(), WHITE.stroke_width(1));
    let r = 5;
    let outline = |points: Vec<(i32, i32)>| {
        let mut closed = points.clone();
        closed.push(points[0]);
        (Polygon::new(points, fill), PathElement::new(closed, edge))
    };
    let e = || EmptyElement::at(at.clone());
    match shape {
        Marker::Circle => {
            area.draw(&(e() + Circle::new((0, 0), r, fill) + Circle::new((0, 0), r, edge)))?;
        }
        Marker::Cross => {
            let style = color.stroke_width(3);
            let a = PathElement::new(vec![(-r, -r), (r, r)], style);
            area.draw(&(e() + a + PathElement::new(vec![(-r, r), (r, -r)], style)))?;
        }
        _ => {
            let points = match shape {
                Marker::Square => {
                    vec![(-r + 1, -r + 1), (r - 1, -r + 1), (r - 1, r - 1), (-r + 1, r - 1)]
                }
                Marker::Triangle => vec![(0, -r - 1), (r + 1, r - 1), (-r - 1, r - 1)],
                Marker::TriangleDown => vec![(0, r + 1), (r + 1, -r + 1), (-r - 1, -r + 1)],
                _ => vec![(0, -r - 1), (r + 1, 0), (0, r + 1), (-r - 1, 0)],
            };
            let (body, line) = outline(points);
            area.draw(&(e() + body + line))?;
        }
    }
    Ok(())
}

/// The width of `s` in the legend font, in pixels (the embedded font's metrics).
pub(crate) fn text_width_px(s: &str, size_px: u32) -> u32 {
    crate::charts::font::ensure_registered();
    text(size_px).font.box_size(s).map_or(s.chars().count() as u32 * size_px, |(w, _)| w)
}

/// Columns and rows of a legend of `entries` laid out in `width_px`: every column as wide as
/// the widest entry, as many columns as fit (at least one), filled row by row.
pub(crate) fn legend_grid(entries: &[LegendEntry], width_px: u32) -> (u32, u32, u32) {
    let widest = entries.iter().map(|e| text_width_px(&e.text, 13)).max().unwrap_or(0);
    let column_px = widest + LEGEND_SAMPLE_PX + LEGEND_GAP_PX;
    let columns = (width_px / column_px.max(1)).clamp(1, entries.len().max(1) as u32);
    let rows = (entries.len() as u32).div_ceil(columns);
    (columns, rows, column_px)
}

/// The height of the legend band of `entries` in `width_px` (0 with no entries).
pub(crate) fn legend_height_px(entries: &[LegendEntry], width_px: u32) -> u32 {
    if entries.is_empty() {
        return 0;
    }
    let (_, rows, _) = legend_grid(entries, width_px);
    rows * LEGEND_ROW_PX + 8
}

/// Draws the legend band of `entries` on `area` (as tall as [`legend_height_px`]), with its
/// left edge at `x0_px`.
pub(crate) fn legend_band<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[LegendEntry],
    x0_px: i32,
) -> DrawResult {
    let (w, _) = area.dim_in_pixel();
    let (columns, _, column_px) = legend_grid(entries, w.saturating_sub(x0_px.max(0) as u32));
    for (i, e) in entries.iter().enumerate() {
        let (col, row) = (i as u32 % columns, i as u32 / columns);
        let x = x0_px + (col * column_px) as i32;
        let y = (row * LEGEND_ROW_PX + LEGEND_ROW_PX / 2 + 4) as i32;
        if e.width_px > 0 {
            let line = vec![(x, y), (x + LEGEND_SAMPLE_PX as i32 - 8, y)];
            area.draw(&PathElement::new(line, e.color.stroke_width(e.width_px)))?;
        }
        if let Some(shape) = e.marker {
            draw_marker(area, (x + (LEGEND_SAMPLE_PX as i32 - 8) / 2, y), shape, e.color)?;
        }
        label(area, &e.text, (x + LEGEND_SAMPLE_PX as i32, y), 13, (HPos::Left, VPos::Center))?;
    }
    Ok(())
}

/// Line widths for `n` series drawn in order, each on top of the one before: the first is
/// the widest and every later one 2 px narrower (2 px at least), so a line drawn exactly over
/// an earlier one leaves the earlier one showing on both sides.
pub(crate) fn ladder_width_px(index: usize, n: usize) -> u32 {
    let from_top = n.saturating_sub(index + 1).min(4) as u32;
    2 + 2 * from_top
}

/// Line widths for series of which some are equal (`same`, from [`same_as`]): 2 px for a
/// series equal to no later one; within a group of equal series, the first is the widest and
/// every later one 2 px narrower, so each shows inside the one before.
pub(crate) fn group_widths_px(same: &[Option<usize>]) -> Vec<u32> {
    (0..same.len())
        .map(|i| {
            let root = same[i].unwrap_or(i);
            let later = (i + 1..same.len()).filter(|&j| same[j] == Some(root)).count();
            2 + 2 * later.min(4) as u32
        })
        .collect()
}

/// For each series, the first earlier series it equals point for point (same as ...).
pub(crate) fn same_as<T: PartialEq>(series: &[T]) -> Vec<Option<usize>> {
    (0..series.len()).map(|i| (0..i).find(|&j| series[j] == series[i])).collect()
}

/// The lowest y of a value axis that starts at 0: a little below 0, so a line of up to
/// `pad_px` - 1 pixels at 0 is drawn wholly above the x axis, not on it. `plot_px` is the
/// height of the plotting area and `top` the highest y.
pub(crate) fn y_floor(top: f64, plot_px: u32, pad_px: u32) -> f64 {
    let usable = plot_px.saturating_sub(pad_px).max(1);
    -top * f64::from(pad_px) / f64::from(usable)
}

/// A centred grey note such as "no data", in the middle of `area`.
pub(crate) fn note<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, s: &str) -> DrawResult {
    let (w, h) = area.dim_in_pixel();
    let style = text(16).color(&MUTED).pos(Pos::new(HPos::Center, VPos::Center));
    area.draw(&Text::new(s.to_string(), (w as i32 / 2, h as i32 / 2), style))?;
    Ok(())
}

/// A number for a label: integers plainly, others with 3 significant digits at most.
pub(crate) fn num(v: f64) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    let a = v.abs();
    let s = if a >= 100.0 || v.fract() == 0.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    };
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// "scenario 'x', seed N" from the first report with a summary, or "" if none has one.
pub(crate) fn scenario_line(reports: &[RunReport]) -> String {
    reports
        .iter()
        .find_map(|r| r.summary.as_ref())
        .map_or_else(String::new, |s| format!("scenario '{}', seed {}", s.scenario, s.seed))
}

/// Shortens `s` to at most `max` characters, marking a cut with an ellipsis.
pub(crate) fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_short_and_plain() {
        assert_eq!(num(0.0), "0");
        assert_eq!(num(1234.0), "1234");
        assert_eq!(num(152.49), "152");
        assert_eq!(num(12.34), "12.3");
        assert_eq!(num(2.5), "2.5");
        assert_eq!(num(0.0421), "0.042");
        assert_eq!(clip("abcdef", 4), "abc…");
        assert_eq!(clip("abc", 4), "abc");
    }

    #[test]
    fn ladder_widths_shrink_by_two_and_equal_series_are_named() {
        let widths: Vec<u32> = (0..4).map(|i| ladder_width_px(i, 4)).collect();
        assert_eq!(widths, [8, 6, 4, 2]);
        assert_eq!(ladder_width_px(0, 1), 2);
        assert_eq!(ladder_width_px(0, 9), 10, "capped");
        assert_eq!(same_as(&[1, 2, 1, 2, 3]), [None, None, Some(0), Some(1), None]);
        assert_eq!(same_as(&[5, 5, 5]), [None, Some(0), Some(0)]);
        assert_eq!(group_widths_px(&same_as(&[5, 5, 5, 6])), [6, 4, 2, 2]);
        // 4 px of a 204 px plot below 0 for a top of 100: 100 * 4 / 200.
        assert_eq!(y_floor(100.0, 204, 4), -2.0);
    }

    #[test]
    fn legend_grid_fills_columns_that_fit() {
        let e = |s: &str| LegendEntry { color: BLACK, width_px: 2, marker: None, text: s.into() };
        let entries: Vec<LegendEntry> = (0..5).map(|i| e(&format!("run {i}"))).collect();
        let (columns, rows, column_px) = legend_grid(&entries, 10_000);
        assert_eq!((columns, rows), (5, 1), "all in one row when wide enough");
        let (columns, rows, _) = legend_grid(&entries, column_px * 2 + 1);
        assert_eq!((columns, rows), (2, 3));
        assert_eq!(legend_grid(&entries, 1).0, 1, "at least one column");
        assert_eq!(legend_height_px(&[], 500), 0);
    }
}
