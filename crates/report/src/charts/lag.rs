//! Lag and down partitions over time for every protocol run of a `run`, on one chart (two
//! stacked panels sharing the time axis), from the timeline rows. Runs with many samples are
//! thinned to the minimum and maximum per time bucket, which keeps every peak.
//!
//! Readability rules: the legend sits in a band of its own between the title and the panels
//! (never over data); runs are drawn in order, each 2 px narrower than the one before
//! ([`common::ladder_width_px`]), so a run equal to an earlier one shows as a thin line inside
//! the earlier one's wider line, and the legend says "(same as ...)" when two runs are equal
//! point for point; the value axes start at 0 with a few pixels of room below 0
//! ([`common::y_floor`]), so a line at 0 is drawn above the x axis, not on or below it.

use crate::charts::common::{self, num, HEAD_PX};
use crate::charts::data::{self, run_label};
use crate::charts::font::text;
use crate::charts::palette;
use crate::charts::render::{Chart, DrawResult};
use metrics::RunReport;
use plotters::coord::Shift;
use plotters::prelude::*;

const WIDTH_PX: u32 = 1400;
const HEIGHT_PX: u32 = 900;
/// Runs with more samples than this are thinned to min/max per bucket.
const MAX_POINTS: usize = 4000;

/// One run's series.
struct Series {
    label: String,
    lag: Vec<(f64, f64)>,
    down: Vec<(f64, f64)>,
}

/// The lag chart of a run.
pub(crate) struct LagChart {
    series: Vec<Series>,
    t_end_s: f64,
    subtitle: String,
}

impl LagChart {
    /// Prepares the lag chart of `reports`.
    pub(crate) fn new(reports: &[RunReport]) -> Self {
        let series = reports
            .iter()
            .enumerate()
            .map(|(i, r)| Series {
                label: run_label(r, i),
                lag: steps(&thin(r.timeline.iter().map(|t| (t.t_s, t.lag as f64)).collect())),
                down: steps(&thin(
                    r.timeline.iter().map(|t| (t.t_s, f64::from(t.down_partitions))).collect(),
                )),
            })
            .collect();
        let t_end_s = reports.iter().map(data::run_end_s).fold(0.0, f64::max);
        LagChart { series, t_end_s, subtitle: common::scenario_line(reports) }
    }
}

/// The samples as a step line: each value holds until the next sample, then the line goes
/// straight up or down. Only horizontal and vertical segments, never a slope between two
/// samples (the series are counts sampled at instants) and never a sharp turn, whose mitred
/// corner a wide line would draw far past the point (below the x axis, above the peak).
fn steps(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64)> = Vec::with_capacity(points.len() * 2);
    for &(t, v) in points {
        if let Some(&(_, held)) = out.last() {
            if held != v {
                out.push((t, held));
            }
        }
        out.push((t, v));
    }
    // Drop the middle of three points on one horizontal or vertical line.
    let mut kept: Vec<(f64, f64)> = Vec::with_capacity(out.len());
    for p in out {
        let n = kept.len();
        if n >= 2 {
            let (a, b) = (kept[n - 2], kept[n - 1]);
            if (a.1 == b.1 && b.1 == p.1) || (a.0 == b.0 && b.0 == p.0) {
                kept[n - 1] = p;
                continue;
            }
        }
        kept.push(p);
    }
    kept
}

/// Keeps at most about [`MAX_POINTS`] points: per time bucket its minimum and maximum, in order.
fn thin(points: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    if points.len() <= MAX_POINTS {
        return points;
    }
    let per_bucket = points.len().div_ceil(MAX_POINTS / 2);
    let mut out = Vec::with_capacity(MAX_POINTS + 2);
    for chunk in points.chunks(per_bucket) {
        let lo = chunk.iter().min_by(|a, b| a.1.total_cmp(&b.1)).copied();
        let hi = chunk.iter().max_by(|a, b| a.1.total_cmp(&b.1)).copied();
        if let (Some(lo), Some(hi)) = (lo, hi) {
            let (a, b) = if lo.0 <= hi.0 { (lo, hi) } else { (hi, lo) };
            out.push(a);
            if b != a {
                out.push(b);
            }
        }
    }
    out
}

impl Chart for LagChart {
    fn size_px(&self) -> (u32, u32) {
        (WIDTH_PX, HEIGHT_PX + self.legend_px())
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult {
        common::head(root, "Consumer lag and down partitions over time", &self.subtitle)?;
        let (_, rest) = root.split_vertically(HEAD_PX);
        let entries = self.legend();
        let (legend, body) = rest.split_vertically(self.legend_px());
        common::legend_band(&legend, &entries, PLOT_LEFT_PX as i32)?;
        let (upper, lower) = body.split_vertically((HEIGHT_PX - HEAD_PX) * 3 / 5);
        self.panel(&upper, "lag (records)", |s| &s.lag)?;
        self.panel(&lower, "down partitions", |s| &s.down)
    }
}

/// Lag and down partitions are counts: a tick at 2.5 gets no label, nor one below 0.
fn whole_number(v: &f64) -> String {
    if v.abs() < 1e-9 {
        "0".to_string()
    } else if v.fract() == 0.0 && *v > 0.0 {
        num(*v)
    } else {
        String::new()
    }
}

/// Left edge of the plotting areas (margin and y label area), where the legend starts.
const PLOT_LEFT_PX: u32 = MARGIN_PX + Y_LABELS_PX;
const MARGIN_PX: u32 = 12;
const Y_LABELS_PX: u32 = 90;
const X_LABELS_PX: u32 = 50;

impl LagChart {
    fn width_px(&self, index: usize) -> u32 {
        common::ladder_width_px(index, self.series.len())
    }

    /// One entry per run: its label, "(no samples)" or what it is the same as.
    fn legend(&self) -> Vec<common::LegendEntry> {
        let lags: Vec<&Vec<(f64, f64)>> = self.series.iter().map(|s| &s.lag).collect();
        let downs: Vec<&Vec<(f64, f64)>> = self.series.iter().map(|s| &s.down).collect();
        let (same_lag, same_down) = (common::same_as(&lags), common::same_as(&downs));
        let name = |j: usize| self.series[j].label.as_str();
        let entry = |(i, s): (usize, &Series)| {
            let note = match (same_lag[i], same_down[i]) {
                _ if s.lag.is_empty() => " (no samples)".to_string(),
                (Some(a), Some(b)) if a == b => format!(" (same as {})", name(a)),
                (Some(a), _) => format!(" (lag same as {})", name(a)),
                (_, Some(b)) => format!(" (down partitions same as {})", name(b)),
                (None, None) => String::new(),
            };
            let text = format!("{}{note}", s.label);
            common::LegendEntry {
                color: palette::run(i),
                width_px: self.width_px(i),
                marker: None,
                text,
            }
        };
        self.series.iter().enumerate().map(entry).collect()
    }

    fn legend_px(&self) -> u32 {
        common::legend_height_px(&self.legend(), WIDTH_PX - PLOT_LEFT_PX - MARGIN_PX)
    }

    fn panel<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        y_desc: &str,
        pick: impl Fn(&Series) -> &Vec<(f64, f64)>,
    ) -> DrawResult {
        let y_max =
            self.series.iter().flat_map(|s| pick(s).iter().map(|p| p.1)).fold(0.0, f64::max);
        let y_top = if y_max > 0.0 { y_max * 1.08 } else { 1.0 };
        let x_end = if self.t_end_s > 0.0 { self.t_end_s } else { 1.0 };
        let plot_px = area.dim_in_pixel().1.saturating_sub(2 * MARGIN_PX + X_LABELS_PX);
        let pad_px = self.width_px(0) / 2 + 2;
        let y_low = common::y_floor(y_top, plot_px, pad_px);
        // The same room left of t = 0 and right of the end, so a wide line stays inside.
        let plot_w_px = area.dim_in_pixel().0.saturating_sub(2 * MARGIN_PX + Y_LABELS_PX);
        let x_pad = -common::y_floor(x_end, plot_w_px.saturating_sub(pad_px), pad_px);
        let mut chart = ChartBuilder::on(area)
            .margin(MARGIN_PX)
            .set_label_area_size(LabelAreaPosition::Left, Y_LABELS_PX)
            .set_label_area_size(LabelAreaPosition::Bottom, X_LABELS_PX)
            .build_cartesian_2d(-x_pad..x_end + x_pad, y_low..y_top)?;
        chart
            .configure_mesh()
            .x_desc("time (s)")
            .y_desc(y_desc)
            .x_label_formatter(&|v| if *v < -1e-9 { String::new() } else { num(v.abs()) })
            .y_label_formatter(&whole_number)
            .label_style(text(13))
            .axis_desc_style(text(15))
            .light_line_style(TRANSPARENT)
            .bold_line_style(RGBColor(225, 225, 225))
            .draw()?;
        // Widest first: every later run is drawn on top, narrower.
        for (i, s) in self.series.iter().enumerate() {
            let style = palette::run(i).stroke_width(self.width_px(i));
            chart.draw_series(LineSeries::new(pick(s).clone(), style))?;
        }
        if self.series.iter().all(|s| pick(s).is_empty()) {
            common::note(&chart.plotting_area().strip_coord_spec(), "no timeline samples")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thinning_keeps_peaks_and_bounds_size() {
        // 10,000 points, value 0 except a spike of 99 at t = 5000: buckets of
        // ceil(10000 / 2000) = 5 points; the spike's bucket keeps (5000, 99).
        let points: Vec<(f64, f64)> =
            (0..10_000).map(|i| (f64::from(i), if i == 5000 { 99.0 } else { 0.0 })).collect();
        let out = thin(points);
        assert!(out.len() <= MAX_POINTS);
        assert!(out.contains(&(5000.0, 99.0)));
        assert!(out.windows(2).all(|w| w[0].0 <= w[1].0));
    }

    #[test]
    fn steps_hold_each_value_until_the_next_sample() {
        let s = steps(&[(0.0, 0.0), (1.0, 0.0), (2.0, 4.0), (3.0, 4.0), (4.0, 0.0), (5.0, 0.0)]);
        assert_eq!(s, [(0.0, 0.0), (2.0, 0.0), (2.0, 4.0), (4.0, 4.0), (4.0, 0.0), (5.0, 0.0)]);
        // Every segment is horizontal or vertical.
        let s = steps(&[(0.0, 1.0), (0.5, 7.0), (1.0, 2.0), (1.5, 9.0)]);
        assert!(s.windows(2).all(|w| w[0].0 == w[1].0 || w[0].1 == w[1].1), "{s:?}");
        assert!(steps(&[]).is_empty());
    }
}
