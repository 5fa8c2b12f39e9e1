//! The performance scaling chart (docs/performance.md, `scripts/perf-scaling.sh`): the time of
//! a short protocol run (`run_s`, without reading the scenario and writing the files) against
//! the number of members and against the number of partitions, one line per protocol, log-log,
//! with a dashed linear reference through each line's largest point: where a line falls below
//! its reference towards the smaller sizes, its cost grew faster than linearly up to that
//! point; above it, slower (fixed costs).
//!
//! Input: the CSV the script writes, columns
//! `sweep,protocol,members,partitions,sim_s,events,records,wall_s,run_s,max_rss_kb` (`sweep` is
//! `members` or `partitions`: which size varies).

use crate::charts::common::{self, num, HEAD_PX};
use crate::charts::font::text;
use crate::charts::palette;
use crate::charts::render::{to_png, to_svg, Chart, DrawResult};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::io;

const WIDTH_PX: u32 = 1400;
const HEIGHT_PX: u32 = 700;

/// One measured run of the sweep.
#[derive(Clone, Debug, PartialEq, serde::Deserialize)]
pub struct ScalingRow {
    /// `members` or `partitions`: the size that varies.
    pub sweep: String,
    /// Protocol run (`eager:range`).
    pub protocol: String,
    /// Group size.
    pub members: u64,
    /// Partitions in all.
    pub partitions: u64,
    /// Simulated seconds.
    pub sim_s: f64,
    /// Simulation events handled.
    pub events: u64,
    /// Records processed.
    pub records: u64,
    /// Wall time of the process in seconds.
    pub wall_s: f64,
    /// Wall time of the protocol run alone in seconds (`run --timing`).
    pub run_s: f64,
    /// Peak resident memory in KiB.
    pub max_rss_kb: u64,
}

/// Parses the sweep CSV; the error names the line.
pub fn parse_rows(csv_text: &str) -> io::Result<Vec<ScalingRow>> {
    let mut reader = csv::Reader::from_reader(csv_text.as_bytes());
    reader
        .deserialize()
        .enumerate()
        .map(|(i, r)| r.map_err(|e| io::Error::other(format!("scaling CSV row {}: {e}", i + 2))))
        .collect()
}

/// The chart as SVG.
pub fn scaling_svg(rows: &[ScalingRow]) -> io::Result<String> {
    to_svg(&ScalingChart { rows: rows.to_vec() })
}

/// The chart as PNG bytes.
pub fn scaling_png(rows: &[ScalingRow]) -> io::Result<Vec<u8>> {
    to_png(&ScalingChart { rows: rows.to_vec() })
}

struct ScalingChart {
    rows: Vec<ScalingRow>,
}

/// (protocol, points (size, run s)) of one sweep, protocols in first-seen order.
fn series(rows: &[ScalingRow], sweep: &str) -> Vec<(String, Vec<(f64, f64)>)> {
    let mut out: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for r in rows.iter().filter(|r| r.sweep == sweep) {
        let size = if sweep == "members" { r.members } else { r.partitions } as f64;
        let point = (size, r.run_s.max(1e-3));
        match out.iter_mut().find(|(p, _)| *p == r.protocol) {
            Some((_, points)) => points.push(point),
            None => out.push((r.protocol.clone(), vec![point])),
        }
    }
    for (_, points) in &mut out {
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    out
}

/// The linear growth into the largest of `points` (sorted by size), at each of their sizes.
fn linear_reference(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let Some(&(x_max, y_max)) = points.last() else { return Vec::new() };
    points.iter().map(|(x, _)| (*x, y_max * x / x_max)).collect()
}

/// Powers of ten around `[lo, hi]`.
fn decades(lo: f64, hi: f64) -> (f64, f64) {
    (10f64.powf(lo.log10().floor()), 10f64.powf(hi.log10().ceil()).max(lo * 10.0))
}

fn panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    rows: &[ScalingRow],
    sweep: &str,
    x_desc: &str,
) -> DrawResult {
    let lines = series(rows, sweep);
    let references: Vec<Vec<(f64, f64)>> = lines.iter().map(|(_, p)| linear_reference(p)).collect();
    let all = lines
        .iter()
        .flat_map(|(_, p)| p.iter().copied())
        .chain(references.iter().flatten().copied());
    let (xl, xh, yl, yh) = all.fold((f64::MAX, 0f64, f64::MAX, 0f64), |a, (x, y)| {
        (a.0.min(x), a.1.max(x), a.2.min(y), a.3.max(y))
    });
    let (x_lo, x_hi) = if xh > 0.0 { decades(xl, xh) } else { (1.0, 10.0) };
    let (y_lo, y_hi) = if yh > 0.0 { decades(yl, yh) } else { (0.01, 10.0) };
    let mut chart = ChartBuilder::on(area)
        .margin(16)
        .margin_right(40)
        .caption(format!("run time against {sweep}"), text(16))
        .set_label_area_size(LabelAreaPosition::Left, 80)
        .set_label_area_size(LabelAreaPosition::Bottom, 56)
        .build_cartesian_2d((x_lo..x_hi).log_scale(), (y_lo..y_hi).log_scale())?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc("protocol run time (s, log scale)")
        .x_label_formatter(&|v| num(*v))
        .y_label_formatter(&|v| num(*v))
        .label_style(text(13))
        .axis_desc_style(text(15))
        .light_line_style(TRANSPARENT)
        .bold_line_style(RGBColor(225, 225, 225))
        .draw()?;
    for (i, (protocol, points)) in lines.iter().enumerate() {
        let color = palette::run(i);
        chart
            .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))?
            .label(protocol.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 22, y)], color.stroke_width(3))
            });
        chart.draw_series(points.iter().map(|p| Circle::new(*p, 4, color.filled())))?;
        chart.draw_series(DashedLineSeries::new(
            references[i].clone(),
            6,
            4,
            color.mix(0.5).stroke_width(1),
        ))?;
    }
    if !lines.is_empty() {
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .label_font(text(14))
            .background_style(WHITE.mix(0.9))
            .border_style(palette::FRAME)
            .draw()?;
    }
    Ok(())
}

impl Chart for ScalingChart {
    fn size_px(&self) -> (u32, u32) {
        (WIDTH_PX, HEIGHT_PX)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult {
        let sim_s = self.rows.first().map_or(0.0, |r| r.sim_s);
        let subtitle = format!(
            "runs of {} simulated s each; dashed: linear growth into the largest size (a line below it grew faster than linearly)",
            num(sim_s)
        );
        common::head(root, "rebalance-sim: run time against size", &subtitle)?;
        let (_, body) = root.split_vertically(HEAD_PX);
        let (left, right) = body.split_horizontally(WIDTH_PX / 2);
        panel(&left, &self.rows, "members", "members (log scale)")?;
        panel(&right, &self.rows, "partitions", "partitions (log scale)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CSV: &str =
        "sweep,protocol,members,partitions,sim_s,events,records,wall_s,run_s,max_rss_kb\n\
        members,eager:range,10,1000,10,500,9000,0.6,0.5,1000\n\
        members,eager:range,100,1000,10,5000,9000,2.1,2.0,2000\n\
        partitions,eager:range,100,100,10,50,900,0.2,0.1,900\n";

    #[test]
    fn rows_split_into_sorted_series_per_sweep() {
        let rows = parse_rows(CSV).expect("valid CSV");
        assert_eq!(rows.len(), 3);
        let members = series(&rows, "members");
        assert_eq!(members, vec![("eager:range".to_string(), vec![(10.0, 0.5), (100.0, 2.0)])]);
        assert_eq!(series(&rows, "partitions")[0].1, vec![(100.0, 0.1)]);
        // Linear into the largest point: 2.0 s at 100 members is 0.2 s at 10.
        assert_eq!(linear_reference(&members[0].1), vec![(10.0, 0.2), (100.0, 2.0)]);
        // 7 to 300 spans the decades 1..1000.
        assert_eq!(decades(7.0, 300.0), (1.0, 1000.0));
        let svg = scaling_svg(&rows).expect("draws");
        assert!(svg.contains("run time against members"));
        assert!(parse_rows("sweep\nx\n").is_err());
    }
}
