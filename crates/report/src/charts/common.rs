//! Drawing helpers shared by the charts: the title block, legend swatches, text placed in
//! pixels, number formatting and the "no data" note.

use crate::charts::font::text;
use crate::charts::render::DrawResult;
use metrics::RunReport;
use plotters::coord::Shift;
use plotters::prelude::{DrawingArea, DrawingBackend, Rectangle, Text};
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{Color, RGBColor, BLACK};

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
}
