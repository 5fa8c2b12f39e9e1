//! Lag and down partitions over time for every protocol run of a `run`, on one chart (two
//! stacked panels sharing the time axis), from the timeline rows. Runs with many samples are
//! thinned to the minimum and maximum per time bucket, which keeps every peak.

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
                lag: thin(r.timeline.iter().map(|t| (t.t_s, t.lag as f64)).collect()),
                down: thin(
                    r.timeline.iter().map(|t| (t.t_s, f64::from(t.down_partitions))).collect(),
                ),
            })
            .collect();
        let t_end_s = reports.iter().map(data::run_end_s).fold(0.0, f64::max);
        LagChart { series, t_end_s, subtitle: common::scenario_line(reports) }
    }
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
        (WIDTH_PX, HEIGHT_PX)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult {
        common::head(root, "Consumer lag and down partitions over time", &self.subtitle)?;
        let (_, body) = root.split_vertically(HEAD_PX);
        let (upper, lower) = body.split_vertically((HEIGHT_PX - HEAD_PX) * 3 / 5);
        self.panel(&upper, "lag (records)", |s| &s.lag, true)?;
        self.panel(&lower, "down partitions", |s| &s.down, false)
    }
}

/// Lag and down partitions are counts: a tick at 2.5 gets no label.
fn whole_number(v: &f64) -> String {
    if v.fract() == 0.0 {
        num(*v)
    } else {
        String::new()
    }
}

impl LagChart {
    fn panel<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        y_desc: &str,
        pick: impl Fn(&Series) -> &Vec<(f64, f64)>,
        with_legend: bool,
    ) -> DrawResult {
        let y_max =
            self.series.iter().flat_map(|s| pick(s).iter().map(|p| p.1)).fold(0.0, f64::max);
        let y_top = if y_max > 0.0 { y_max * 1.08 } else { 1.0 };
        let x_end = if self.t_end_s > 0.0 { self.t_end_s } else { 1.0 };
        let mut chart = ChartBuilder::on(area)
            .margin(12)
            .set_label_area_size(LabelAreaPosition::Left, 90)
            .set_label_area_size(LabelAreaPosition::Bottom, 50)
            .build_cartesian_2d(0f64..x_end, 0f64..y_top)?;
        chart
            .configure_mesh()
            .x_desc("time (s)")
            .y_desc(y_desc)
            .x_label_formatter(&|v| num(*v))
            .y_label_formatter(&whole_number)
            .label_style(text(13))
            .axis_desc_style(text(15))
            .light_line_style(TRANSPARENT)
            .bold_line_style(RGBColor(225, 225, 225))
            .draw()?;
        for (i, s) in self.series.iter().enumerate() {
            let color = palette::run(i);
            let points = pick(s).clone();
            let name = if points.is_empty() {
                format!("{} (no samples)", s.label)
            } else {
                s.label.clone()
            };
            chart
                .draw_series(LineSeries::new(points, color.mix(0.8).stroke_width(2)))?
                .label(name)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 22, y)], color.stroke_width(3))
                });
        }
        if with_legend && !self.series.is_empty() {
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperRight)
                .label_font(text(14))
                .background_style(WHITE.mix(0.9))
                .border_style(palette::FRAME)
                .draw()?;
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
}
