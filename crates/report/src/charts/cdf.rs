//! The distribution of downtime episodes per protocol run as empirical CDFs on a log time axis.
//! Episodes come from the ownership rows ([`data::downtime_episodes_ms`]), so the chart can be
//! redrawn from `ownership.csv` alone.
//!
//! As in the lag chart, the legend has a band of its own above the plot and the y axis leaves
//! a few pixels below 0 so the lines along 0 stay above the x axis. Distributions cross rather
//! than coincide, so lines are 2 px; only runs with equal distributions are drawn as nested
//! lines (the first widest, [`common::group_widths_px`]) and say "(same as ...)".

use crate::charts::common::{self, num, HEAD_PX};
use crate::charts::data::{self, run_label};
use crate::charts::font::text;
use crate::charts::palette;
use crate::charts::render::{Chart, DrawResult};
use metrics::RunReport;
use plotters::coord::Shift;
use plotters::prelude::*;

const WIDTH_PX: u32 = 1400;
const HEIGHT_PX: u32 = 820;
const MARGIN_PX: u32 = 16;
const Y_LABELS_PX: u32 = 80;
const X_LABELS_PX: u32 = 56;

/// The CDF chart of a run.
pub(crate) struct CdfChart {
    /// Per report: legend label and sorted episode durations (ms).
    runs: Vec<(String, Vec<f64>)>,
    subtitle: String,
}

impl CdfChart {
    /// Prepares the CDF of `reports`.
    pub(crate) fn new(reports: &[RunReport]) -> Self {
        let runs = reports
            .iter()
            .enumerate()
            .map(|(i, r)| (run_label(r, i), data::downtime_episodes_ms(&r.ownership)))
            .collect();
        CdfChart { runs, subtitle: common::scenario_line(reports) }
    }

    /// The x range: whole decades around the shortest and longest episode (plotters puts the
    /// log-axis ticks from the first power of ten on), or 1..1000 ms if there are none.
    fn x_range_ms(&self) -> (f64, f64) {
        let all = self.runs.iter().flat_map(|(_, e)| e.iter().copied()).filter(|v| *v > 0.0);
        let (lo, hi) = all.fold((f64::INFINITY, 0.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
        if hi <= 0.0 {
            return (1.0, 1000.0);
        }
        let lo = 10f64.powf((lo / 1.2).log10().floor());
        let hi = 10f64.powf((hi * 1.2).log10().ceil());
        (lo, hi.max(lo * 10.0))
    }
}

/// The steps of an empirical CDF of sorted positive `values`, from `lo` to `hi`.
fn steps(values: &[f64], lo: f64, hi: f64) -> Vec<(f64, f64)> {
    let n = values.len() as f64;
    let mut points = vec![(lo, 0.0)];
    for (i, v) in values.iter().filter(|v| **v > 0.0).enumerate() {
        points.push((*v, i as f64 / n));
        points.push((*v, (i + 1) as f64 / n));
    }
    if !values.is_empty() {
        points.push((hi, 1.0));
    }
    points
}

/// Whether `v` is 1, 2 or 5 times a power of ten (the labelled ticks of the log axis).
fn is_1_2_5(v: f64) -> bool {
    if v <= 0.0 || !v.is_finite() {
        return false;
    }
    let mantissa = v / 10f64.powf(v.log10().floor());
    [1.0, 2.0, 5.0, 10.0].iter().any(|m| (mantissa - m).abs() < 1e-6)
}

fn legend_label(label: &str, episodes: &[f64]) -> String {
    if episodes.is_empty() {
        return format!("{label} (no episodes)");
    }
    let median = episodes[(episodes.len() - 1) / 2];
    let max = episodes[episodes.len() - 1];
    format!("{label}: n={}, median {} ms, max {} ms", episodes.len(), num(median), num(max))
}

impl CdfChart {
    /// 2 px, wider for a run that later runs equal (so the equal ones show inside it).
    fn width_px(&self, index: usize) -> u32 {
        let same = common::same_as(&self.runs.iter().map(|(_, e)| e).collect::<Vec<_>>());
        common::group_widths_px(&same)[index]
    }

    fn legend(&self) -> Vec<common::LegendEntry> {
        let same = common::same_as(&self.runs.iter().map(|(_, e)| e).collect::<Vec<_>>());
        let entry = |(i, (label, episodes)): (usize, &(String, Vec<f64>))| {
            let mut text = legend_label(label, episodes);
            if let Some(j) = same[i].filter(|_| !episodes.is_empty()) {
                text.push_str(&format!(" (same as {})", self.runs[j].0));
            }
            common::LegendEntry {
                color: palette::run(i),
                width_px: self.width_px(i),
                marker: None,
                text,
            }
        };
        self.runs.iter().enumerate().map(entry).collect()
    }

    fn legend_px(&self) -> u32 {
        common::legend_height_px(&self.legend(), WIDTH_PX - MARGIN_PX * 2 - Y_LABELS_PX)
    }
}

impl Chart for CdfChart {
    fn size_px(&self) -> (u32, u32) {
        (WIDTH_PX, HEIGHT_PX + self.legend_px())
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult {
        common::head(root, "Downtime episodes: cumulative distribution", &self.subtitle)?;
        let (_, rest) = root.split_vertically(HEAD_PX);
        let (legend, body) = rest.split_vertically(self.legend_px());
        common::legend_band(&legend, &self.legend(), (MARGIN_PX + Y_LABELS_PX) as i32)?;
        let (lo, hi) = self.x_range_ms();
        let plot_px = body.dim_in_pixel().1.saturating_sub(2 * MARGIN_PX + X_LABELS_PX);
        let widest = (0..self.runs.len()).map(|i| self.width_px(i)).max().unwrap_or(2);
        let y_low = common::y_floor(1.02, plot_px, widest / 2 + 2);
        let mut chart = ChartBuilder::on(&body)
            .margin(MARGIN_PX)
            .margin_right(48)
            .set_label_area_size(LabelAreaPosition::Left, Y_LABELS_PX)
            .set_label_area_size(LabelAreaPosition::Bottom, X_LABELS_PX)
            .build_cartesian_2d((lo..hi).log_scale(), y_low..1.02)?;
        chart
            .configure_mesh()
            .x_desc("episode duration (ms, log scale)")
            .y_desc("fraction of episodes ≤ duration")
            .x_labels(40)
            .x_label_formatter(&|v| if is_1_2_5(*v) { num(*v) } else { String::new() })
            .y_label_formatter(&|v| if *v < -1e-9 { String::new() } else { num(v.abs()) })
            .label_style(text(13))
            .axis_desc_style(text(15))
            .light_line_style(TRANSPARENT)
            .bold_line_style(RGBColor(225, 225, 225))
            .draw()?;
        // Widest first: every later run is drawn on top, narrower.
        for (i, (_, episodes)) in self.runs.iter().enumerate() {
            let style = palette::run(i).stroke_width(self.width_px(i));
            chart.draw_series(LineSeries::new(steps(episodes, lo, hi), style))?;
        }
        if self.runs.iter().all(|(_, e)| e.is_empty()) {
            common::note(&chart.plotting_area().strip_coord_spec(), "no downtime episodes")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cdf_steps_climb_by_one_over_n() {
        // Episodes 10 and 40 ms: the CDF is 0 below 10, 1/2 from 10, 1 from 40.
        let s = steps(&[10.0, 40.0], 5.0, 80.0);
        assert_eq!(
            s,
            vec![(5.0, 0.0), (10.0, 0.0), (10.0, 0.5), (40.0, 0.5), (40.0, 1.0), (80.0, 1.0)]
        );
        assert_eq!(steps(&[], 1.0, 1000.0), vec![(1.0, 0.0)]);
        assert!(is_1_2_5(0.2) && is_1_2_5(500.0) && is_1_2_5(1000.0));
        assert!(!is_1_2_5(300.0) && !is_1_2_5(0.0));
        // Lower median of [10, 40] is 10.
        assert_eq!(
            legend_label("eager:range", &[10.0, 40.0]),
            "eager:range: n=2, median 10 ms, max 40 ms"
        );
    }
}
