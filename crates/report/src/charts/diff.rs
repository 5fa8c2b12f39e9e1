//! The chart of `rebalance-sim diff`: one horizontal bar per protocol and metric that changed,
//! its relative change in percent from the first run to the second, red where it is worse and
//! green where it is better (by the metric's rule, `lab::check_rules`). The axis reaches
//! [`CLAMP_PERCENT`] at most: a larger change is drawn to the edge, labelled with its value. A
//! metric that was 0 before has no relative change and is listed under the chart instead.

use crate::charts::common::{self, clip, num, HEAD_PX};
use crate::charts::font::text;
use crate::charts::render::{to_png, Chart, DrawResult};
use crate::csv_out::write_atomic;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::io;
use std::path::Path;

const WIDTH_PX: u32 = 1400;
const BAR_PX: u32 = 30;
const WORSE: RGBColor = RGBColor(214, 39, 40);
const BETTER: RGBColor = RGBColor(44, 160, 44);
/// The widest change the axis shows, in percent (larger ones are drawn to the edge).
pub const CLAMP_PERCENT: f64 = 200.0;

/// One changed metric of one protocol run.
#[derive(Clone, Debug, PartialEq)]
pub struct Bar {
    /// Protocol run (`eager:range`).
    pub row: String,
    /// Metric (`downtime_partition_s`).
    pub metric: String,
    /// Relative change in percent (`None`: it was 0 before).
    pub percent: Option<f64>,
    /// Worse by its rule (else better).
    pub worse: bool,
}

/// Writes the chart as PNG to `path` (atomically); `before` and `after` name the two runs.
pub fn draw(bars: &[Bar], before: &str, after: &str, path: &Path) -> io::Result<()> {
    let chart = DiffChart { bars: bars.to_vec(), before: before.into(), after: after.into() };
    write_atomic(path, &to_png(&chart)?)
}

struct DiffChart {
    bars: Vec<Bar>,
    before: String,
    after: String,
}

impl DiffChart {
    fn with_percent(&self) -> Vec<&Bar> {
        self.bars.iter().filter(|b| b.percent.is_some()).collect()
    }

    fn were_zero(&self) -> Vec<&Bar> {
        self.bars.iter().filter(|b| b.percent.is_none()).collect()
    }
}

impl Chart for DiffChart {
    fn size_px(&self) -> (u32, u32) {
        let rows = self.with_percent().len().max(1) as u32;
        let notes = self.were_zero().len() as u32;
        (WIDTH_PX, HEAD_PX + rows * BAR_PX + 90 + notes * 20)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult {
        let title = format!("Change from {} to {} (%)", self.before, self.after);
        let subtitle = "red: worse, green: better, by each metric's rule (docs/check.md)";
        common::head(root, &title, subtitle)?;
        let (_, body) = root.split_vertically(HEAD_PX);
        let bars = self.with_percent();
        let notes = self.were_zero();
        let (plot, below) = body.split_vertically(bars.len().max(1) as u32 * BAR_PX + 70);
        if bars.is_empty() {
            common::note(&plot, "no relative change to draw")?;
        } else {
            draw_bars(&plot, &bars)?;
        }
        for (i, b) in notes.iter().enumerate() {
            let line = format!(
                "{} {}: was 0 ({})",
                b.row,
                b.metric,
                if b.worse { "worse" } else { "better" }
            );
            below.draw(&Text::new(line, (24, 4 + 20 * i as i32), text(14)))?;
        }
        Ok(())
    }
}

fn draw_bars<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, bars: &[&Bar]) -> DrawResult {
    let n = bars.len();
    let largest = bars.iter().filter_map(|b| b.percent).map(f64::abs).fold(1.0, f64::max);
    let edge = largest.min(CLAMP_PERCENT);
    let reach = edge * 1.25;
    let labels: Vec<String> =
        bars.iter().map(|b| clip(&format!("{} {}", b.row, b.metric), 60)).collect();
    let mut chart = ChartBuilder::on(area)
        .margin(12)
        .set_label_area_size(LabelAreaPosition::Left, 470)
        .set_label_area_size(LabelAreaPosition::Bottom, 30)
        .build_cartesian_2d(-reach..reach, (0..n - 1).into_segmented())?;
    // `0..n - 1` is inclusive in plotters: n segments; bar i sits in segment n - 1 - i (top).
    let label_of = |v: &SegmentValue<usize>| match v {
        SegmentValue::CenterOf(k) if *k < n => labels[n - 1 - *k].clone(),
        _ => String::new(),
    };
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(n)
        .y_label_formatter(&label_of)
        .x_label_formatter(&|v| format!("{}%", num(*v)))
        .x_labels(9)
        .label_style(text(13))
        .light_line_style(TRANSPARENT)
        .bold_line_style(RGBColor(225, 225, 225))
        .draw()?;
    for (i, b) in bars.iter().enumerate() {
        let seg = n - 1 - i;
        let percent = b.percent.unwrap_or(0.0);
        let v = percent.clamp(-edge, edge);
        let color = if b.worse { WORSE } else { BETTER };
        let mut bar = Rectangle::new(
            [(0.0, SegmentValue::Exact(seg)), (v, SegmentValue::Exact(seg + 1))],
            color.filled(),
        );
        bar.set_margin(5, 5, 0, 0);
        chart.plotting_area().draw(&bar)?;
        let (hpos, dx) = if v >= 0.0 { (HPos::Left, 6) } else { (HPos::Right, -6) };
        let style = text(13).color(&BLACK).pos(Pos::new(hpos, VPos::Center));
        let value = EmptyElement::at((v, SegmentValue::CenterOf(seg)))
            + Text::new(format!("{percent:+.1}%"), (dx, 0), style);
        chart.plotting_area().draw(&value)?;
    }
    chart.plotting_area().draw(&PathElement::new(
        vec![(0.0, SegmentValue::Exact(0)), (0.0, SegmentValue::Exact(n))],
        BLACK.stroke_width(1),
    ))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Same bars, same bytes; a worse and a better bar and a from-zero note draw without error.
    #[test]
    fn the_chart_is_deterministic() {
        let bars = vec![
            Bar {
                row: "eager:range".into(),
                metric: "downtime_partition_s".into(),
                percent: Some(25.0),
                worse: true,
            },
            Bar {
                row: "cooperative:cooperative-sticky".into(),
                metric: "stop_the_world_s".into(),
                percent: Some(-50.0),
                worse: false,
            },
            Bar {
                row: "eager:range".into(),
                metric: "records_lost".into(),
                percent: None,
                worse: true,
            },
        ];
        let chart = DiffChart { bars, before: "a".into(), after: "b".into() };
        let png = to_png(&chart).expect("drawn");
        assert_eq!(png, to_png(&chart).expect("drawn again"));
        assert_eq!(chart.size_px(), (WIDTH_PX, HEAD_PX + 2 * BAR_PX + 90 + 20));
    }
}
