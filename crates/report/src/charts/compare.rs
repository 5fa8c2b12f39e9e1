//! The protocol comparison: small multiples, one panel per metric (their units differ), one
//! horizontal bar per protocol run, values from the summary rows.

use crate::charts::common::{self, clip, num, HEAD_PX};
use crate::charts::data::run_label;
use crate::charts::font::text;
use crate::charts::palette;
use crate::charts::render::{Chart, DrawResult};
use metrics::{RunReport, SummaryRow};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

const WIDTH_PX: u32 = 1400;

/// A metric panel: title with unit, and how to read the value.
struct Metric {
    title: &'static str,
    value: fn(&SummaryRow) -> f64,
}

const METRICS: [Metric; 4] = [
    Metric { title: "Records reprocessed (records)", value: |s| s.records_reprocessed as f64 },
    Metric { title: "Records lost (records)", value: |s| s.records_lost as f64 },
    Metric { title: "Downtime (partition-seconds)", value: |s| s.downtime_partition_s },
    Metric { title: "Stop-the-world (seconds)", value: |s| s.stop_the_world_s },
];

/// The comparison chart of a run.
pub(crate) struct CompareChart {
    /// (label, summary) of every report that has a summary, in report order; the index is the
    /// report's position (its colour).
    runs: Vec<(usize, String, SummaryRow)>,
    subtitle: String,
}

impl CompareChart {
    /// Prepares the comparison of `reports`.
    pub(crate) fn new(reports: &[RunReport]) -> Self {
        let runs = reports
            .iter()
            .enumerate()
            .filter_map(|(i, r)| r.summary.clone().map(|s| (i, run_label(r, i), s)))
            .collect();
        CompareChart { runs, subtitle: common::scenario_line(reports) }
    }

    fn panel_px(&self) -> u32 {
        (self.runs.len() as u32 * 36 + 110).max(240)
    }

    fn labels_px(&self) -> u32 {
        let longest = self.runs.iter().map(|(_, l, _)| l.chars().count()).max().unwrap_or(0);
        (longest.min(36) as u32 * 8 + 24).clamp(80, 320)
    }
}

impl Chart for CompareChart {
    fn size_px(&self) -> (u32, u32) {
        (WIDTH_PX, HEAD_PX + 2 * self.panel_px() + 8)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult {
        common::head(root, "Protocol comparison (lower is better)", &self.subtitle)?;
        let (_, body) = root.split_vertically(HEAD_PX);
        if self.runs.is_empty() {
            return common::note(&body, "no summary rows");
        }
        for (area, metric) in body.split_evenly((2, 2)).iter().zip(&METRICS) {
            self.panel(area, metric)?;
        }
        Ok(())
    }
}

impl CompareChart {
    fn panel<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        metric: &Metric,
    ) -> DrawResult {
        let n = self.runs.len();
        let values: Vec<f64> = self.runs.iter().map(|(_, _, s)| (metric.value)(s)).collect();
        let max = values.iter().copied().fold(0.0, f64::max);
        let x_top = if max > 0.0 { max * 1.2 } else { 1.0 };
        let labels: Vec<String> = self.runs.iter().map(|(_, l, _)| clip(l, 36)).collect();
        let mut chart = ChartBuilder::on(area)
            .margin(12)
            .caption(metric.title, text(17))
            .set_label_area_size(LabelAreaPosition::Left, self.labels_px())
            .set_label_area_size(LabelAreaPosition::Bottom, 30)
            .build_cartesian_2d(0f64..x_top, (0..n - 1).into_segmented())?;
        // `0..n - 1` is inclusive in plotters: n segments. Row 0 is drawn at the top: run i sits in segment n - 1 - i.
        let label_of = |v: &SegmentValue<usize>| match v {
            SegmentValue::CenterOf(k) if *k < n => labels[n - 1 - *k].clone(),
            _ => String::new(),
        };
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(n)
            .y_label_formatter(&label_of)
            .x_label_formatter(&|v| num(*v))
            .x_labels(6)
            .label_style(text(13))
            .light_line_style(TRANSPARENT)
            .bold_line_style(RGBColor(225, 225, 225))
            .draw()?;
        for (i, v) in values.iter().enumerate() {
            let seg = n - 1 - i;
            let color = palette::run(self.runs[i].0);
            let mut bar = Rectangle::new(
                [(0.0, SegmentValue::Exact(seg)), (*v, SegmentValue::Exact(seg + 1))],
                color.filled(),
            );
            bar.set_margin(7, 7, 0, 0);
            chart.plotting_area().draw(&bar)?;
            let style = text(13).color(&BLACK).pos(Pos::new(HPos::Left, VPos::Center));
            let value = EmptyElement::at((*v, SegmentValue::CenterOf(seg)))
                + Text::new(num(*v), (6, 0), style);
            chart.plotting_area().draw(&value)?;
        }
        Ok(())
    }
}
