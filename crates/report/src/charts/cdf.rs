//! The distribution of downtime episodes per protocol run as empirical CDFs on a log time axis.
//! Episodes come from the ownership rows ([`data::downtime_episodes_ms`]), so the chart can be
//! redrawn from `ownership.csv` alone.

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

impl Chart for CdfChart {
    fn size_px(&self) -> (u32, u32) {
        (WIDTH_PX, HEIGHT_PX)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult {
        common::head(root, "Downtime episodes: cumulative distribution", &self.subtitle)?;
        let (_, body) = root.split_vertically(HEAD_PX);
        let (lo, hi) = self.x_range_ms();
        let mut chart = ChartBuilder::on(&body)
            .margin(16)
            .margin_right(48)
            .set_label_area_size(LabelAreaPosition::Left, 80)
            .set_label_area_size(LabelAreaPosition::Bottom, 56)
            .build_cartesian_2d((lo..hi).log_scale(), 0f64..1.02)?;
        chart
            .configure_mesh()
            .x_desc("episode duration (ms, log scale)")
            .y_desc("fraction of episodes ≤ duration")
            .x_labels(40)
            .x_label_formatter(&|v| if is_1_2_5(*v) { num(*v) } else { String::new() })
            .y_label_formatter(&|v| num(*v))
            .label_style(text(13))
            .axis_desc_style(text(15))
            .light_line_style(TRANSPARENT)
            .bold_line_style(RGBColor(225, 225, 225))
            .draw()?;
        for (i, (label, episodes)) in self.runs.iter().enumerate() {
            let color = palette::run(i);
            chart
                .draw_series(LineSeries::new(
                    steps(episodes, lo, hi),
                    color.mix(0.8).stroke_width(2),
                ))?
                .label(legend_label(label, episodes))
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 22, y)], color.stroke_width(3))
                });
        }
        if !self.runs.is_empty() {
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::LowerRight)
                .label_font(text(14))
                .background_style(WHITE.mix(0.9))
                .border_style(palette::FRAME)
                .draw()?;
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
