//! Charts of a sweep, drawn from its `aggregate.csv`: one chart per metric, the metric's mean
//! against the first swept parameter, one series per protocol (and per value of the other
//! grid keys), each mean a marker with its 95% confidence interval as a whisker. Written as
//! PNG and SVG, atomically.
//!
//! What is drawn, and why:
//!
//! - Points, not lines. A sweep runs the simulator at the grid values only; between two of
//!   them nothing was measured, and many metrics move in steps there (a timeout crossing a
//!   heartbeat, a member count). A line joining two points would draw a slope the sweep never
//!   saw, so no line joins them, on a numeric axis or a categorical one. A categorical x (text
//!   values such as commit modes) puts each value in its own slot, in the order of the
//!   aggregate rows.
//! - Equal series stay visible: every series has its own marker shape (as well as colour), the
//!   series at one x are offset sideways by a few pixels ([`DODGE_PX`]) so equal means sit side
//!   by side instead of on top of each other, and the legend says "(same as ...)" when a
//!   series equals an earlier one at every point.
//! - The legend has a band of its own between the title and the plot, so it never covers data.
//! - Metrics that are never negative (every mean at least 0: counts, durations) have their
//!   intervals cut at 0, where the normal approximation of the interval would reach below a
//!   value the metric cannot take; the y axis then starts at 0, with a few pixels of room so a
//!   marker at 0 is drawn above the x axis.
//!
//! Text uses the embedded DejaVu Sans of `charts/font`. Deterministic: the same aggregate
//! bytes give the same chart bytes.

use crate::charts::common::{self, LegendEntry};
use crate::charts::font::{ensure_registered, text};
use crate::csv_out::write_atomic;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::RGBColor;
use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

const WIDTH_PX: u32 = 1100;
const HEIGHT_PX: u32 = 640;
const TITLE_PX: u32 = 48;
const MARGIN_PX: u32 = 16;
const Y_LABELS_PX: u32 = 72;
const X_LABELS_PX: u32 = 48;
/// Sideways distance between the points of neighbouring series at one x, in pixels.
pub const DODGE_PX: f64 = 9.0;
/// File name prefix of the sweep charts (`sweep-<metric>.png/.svg`).
pub const SWEEP_CHART_PREFIX: &str = "sweep-";
/// Line colours, in series order (Okabe-Ito, readable by colour-blind viewers).
const COLORS: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(120, 120, 120),
    RGBColor(0, 0, 0),
];

/// One point of a series: x, mean, CI low, CI high (the CI collapses to the mean when absent).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SweepPoint {
    /// Position on the x axis.
    pub x: f64,
    /// Mean.
    pub mean: f64,
    /// Lower end of the 95% CI.
    pub lo: f64,
    /// Upper end of the 95% CI.
    pub hi: f64,
}

/// The data of one metric's chart.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepChartData {
    /// Metric name (`records_reprocessed`).
    pub metric: String,
    /// The x parameter (the first grid key).
    pub x_key: String,
    /// Tick labels when x is categorical (text values), else empty.
    pub x_labels: Vec<String>,
    /// Series label -> points sorted by x.
    pub series: BTreeMap<String, Vec<SweepPoint>>,
}

/// Reads `aggregate.csv` bytes into one chart's data per metric (in column order).
pub fn sweep_chart_data(aggregate: &[u8], grid_keys: &[String]) -> io::Result<Vec<SweepChartData>> {
    let mut reader = csv::Reader::from_reader(aggregate);
    let header: Vec<String> =
        reader.headers().map_err(io::Error::other)?.iter().map(String::from).collect();
    let rows: Vec<Vec<String>> = reader
        .records()
        .map(|r| r.map(|r| r.iter().map(String::from).collect()))
        .collect::<Result<_, _>>()
        .map_err(io::Error::other)?;
    let col = |name: &str| header.iter().position(|h| h == name);
    let Some(x_key) = grid_keys.first() else { return Ok(Vec::new()) };
    let x_col = col(x_key)
        .ok_or_else(|| io::Error::other(format!("aggregate.csv has no column {x_key}")))?;
    let x_texts: Vec<String> = rows.iter().map(|r| r[x_col].clone()).collect();
    let numeric = x_texts.iter().all(|t| t.parse::<f64>().is_ok());
    let mut x_labels: Vec<String> = Vec::new();
    for t in &x_texts {
        if !numeric && !x_labels.contains(t) {
            x_labels.push(t.clone());
        }
    }
    let x_of = |t: &str| {
        if numeric {
            t.parse().unwrap_or(0.0)
        } else {
            x_labels.iter().position(|l| l == t).unwrap_or(0) as f64
        }
    };
    let metrics: Vec<String> =
        header.iter().filter_map(|h| h.strip_suffix("_mean").map(String::from)).collect();
    let mut out = Vec::new();
    for metric in metrics {
        let (m, lo, hi) = (
            col(&format!("{metric}_mean")),
            col(&format!("{metric}_ci95_lo")),
            col(&format!("{metric}_ci95_hi")),
        );
        let mut series: BTreeMap<String, Vec<SweepPoint>> = BTreeMap::new();
        for r in &rows {
            let get = |c: Option<usize>| c.and_then(|i| r[i].parse::<f64>().ok());
            let Some(mean) = get(m) else { continue };
            let point = SweepPoint {
                x: x_of(&r[x_col]),
                mean,
                lo: get(lo).unwrap_or(mean),
                hi: get(hi).unwrap_or(mean),
            };
            series.entry(series_label(&header, r, grid_keys)).or_default().push(point);
        }
        for points in series.values_mut() {
            points.sort_by(|a, b| a.x.total_cmp(&b.x));
        }
        let x_labels = x_labels.clone();
        out.push(SweepChartData { metric, x_key: x_key.clone(), x_labels, series });
    }
    Ok(out)
}

/// `protocol:assignor[+static]`, then `key=value` of the grid keys after the first.
fn series_label(header: &[String], row: &[String], grid_keys: &[String]) -> String {
    let get =
        |name: &str| header.iter().position(|h| h == name).map(|i| row[i].as_str()).unwrap_or("");
    let mut label = format!("{}:{}", get("protocol"), get("assignor"));
    if get("static_membership") == "true" {
        label.push_str("+static");
    }
    for k in grid_keys.iter().skip(1) {
        label.push_str(&format!(" {k}={}", get(k)));
    }
    label
}

/// Draws every metric's chart into `dir` as `sweep-<metric>.png` and `.svg`; returns the paths.
pub fn draw_sweep(dir: &Path, aggregate: &[u8], grid_keys: &[String]) -> io::Result<Vec<PathBuf>> {
    ensure_registered();
    let mut written = Vec::new();
    for chart in sweep_chart_data(aggregate, grid_keys)? {
        let stem = format!("{SWEEP_CHART_PREFIX}{}", chart.metric);
        let png = dir.join(format!("{stem}.png"));
        write_atomic(&png, &to_png(&chart)?)?;
        written.push(png);
        let svg = dir.join(format!("{stem}.svg"));
        write_atomic(&svg, to_svg(&chart)?.as_bytes())?;
        written.push(svg);
    }
    Ok(written)
}

fn to_png(chart: &SweepChartData) -> io::Result<Vec<u8>> {
    let (width_px, height_px) = size_px(chart);
    let mut rgb = vec![255u8; width_px as usize * height_px as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (width_px, height_px)).into_drawing_area();
        draw(chart, &root).map_err(io::Error::other)?;
        root.present().map_err(|e| io::Error::other(e.to_string()))?;
    }
    let mut out = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut out, width_px, height_px);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        encoder.set_compression(png::Compression::Fast);
        let mut writer = encoder.write_header().map_err(io::Error::other)?;
        writer.write_image_data(&rgb).map_err(io::Error::other)?;
        writer.finish().map_err(io::Error::other)?;
    }
    Ok(out)
}

fn to_svg(chart: &SweepChartData) -> io::Result<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size_px(chart)).into_drawing_area();
        draw(chart, &root).map_err(io::Error::other)?;
        root.present().map_err(|e| io::Error::other(e.to_string()))?;
    }
    Ok(svg)
}

/// The picture size: the plot and the legend band above it.
fn size_px(chart: &SweepChartData) -> (u32, u32) {
    (WIDTH_PX, HEIGHT_PX + common::legend_height_px(&legend(chart), legend_width_px()))
}

fn legend_width_px() -> u32 {
    WIDTH_PX - 2 * MARGIN_PX - Y_LABELS_PX
}

/// One entry per series: its marker and label, and "(same as ...)" when every point equals an
/// earlier series' point.
fn legend(chart: &SweepChartData) -> Vec<LegendEntry> {
    let all: Vec<(&String, &Vec<SweepPoint>)> = chart.series.iter().collect();
    let same = common::same_as(&all.iter().map(|(_, p)| *p).collect::<Vec<_>>());
    let entry = |(i, (label, _)): (usize, &(&String, &Vec<SweepPoint>))| {
        let mut text = (*label).clone();
        if let Some(j) = same[i] {
            text.push_str(&format!(" (same as {})", all[j].0));
        }
        LegendEntry { color: color(i), width_px: 0, marker: Some(common::marker(i)), text }
    };
    all.iter().enumerate().map(entry).collect()
}

fn color(index: usize) -> RGBColor {
    COLORS[index % COLORS.len()]
}

/// Whether no mean is negative: the metric is a count or a duration, its intervals are cut
/// at 0.
fn never_negative(chart: &SweepChartData) -> bool {
    chart.series.values().flatten().all(|p| p.mean >= 0.0)
}

/// The interval drawn for `p`: cut at 0 for a metric that is never negative.
fn interval(p: &SweepPoint, floor: f64) -> (f64, f64) {
    (p.lo.max(floor), p.hi.max(floor))
}

/// The x and y ranges covering every point and interval, with a little margin (x) and room
/// above (y); a categorical x has one slot per label, `-0.5..n - 0.5`.
fn ranges(chart: &SweepChartData) -> ((f64, f64), (f64, f64)) {
    let floor = if never_negative(chart) { 0.0 } else { f64::MIN };
    let points = chart.series.values().flatten();
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, 0.0_f64, f64::MIN);
    for p in points {
        let (lo, hi) = interval(p, floor);
        (x0, x1) = (x0.min(p.x), x1.max(p.x));
        (y0, y1) = (y0.min(lo), y1.max(hi));
    }
    if x0 > x1 {
        return ((0.0, 1.0), (0.0, 1.0));
    }
    let x = if chart.x_labels.is_empty() {
        let xpad = if x1 > x0 { (x1 - x0) * 0.04 } else { 0.5 };
        (x0 - xpad, x1 + xpad)
    } else {
        (-0.5, chart.x_labels.len() as f64 - 0.5)
    };
    let ypad = if y1 > y0 { (y1 - y0) * 0.08 } else { 1.0 };
    (x, (y0, y1 + ypad))
}

fn draw<DB: DrawingBackend>(
    chart: &SweepChartData,
    root: &DrawingArea<DB, Shift>,
) -> Result<(), String> {
    let e = |e: plotters::drawing::DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    root.fill(&WHITE).map_err(e)?;
    let title = format!("{} vs {}", chart.metric, chart.x_key);
    let (w, _) = root.dim_in_pixel();
    let centre = plotters::style::text_anchor::Pos::new(
        plotters::style::text_anchor::HPos::Center,
        plotters::style::text_anchor::VPos::Center,
    );
    root.draw(&Text::new(title, (w as i32 / 2, 24), text(22).color(&BLACK).pos(centre)))
        .map_err(e)?;
    let (_, rest) = root.split_vertically(TITLE_PX);
    let entries = legend(chart);
    let (band, body) = rest.split_vertically(common::legend_height_px(&entries, legend_width_px()));
    common::legend_band(&band, &entries, (MARGIN_PX + Y_LABELS_PX) as i32).map_err(|e| e.0)?;
    let ((x0, x1), (y0, y1)) = ranges(chart);
    // Room below 0 for half a marker and its outline, so nothing is drawn on the x axis.
    let plot_px = body.dim_in_pixel().1.saturating_sub(2 * MARGIN_PX + X_LABELS_PX);
    let y_low = if y0 >= 0.0 { common::y_floor(y1, plot_px, 9) } else { y0 - (y1 - y0) * 0.03 };
    let mut c = ChartBuilder::on(&body)
        .margin(MARGIN_PX)
        .x_label_area_size(X_LABELS_PX)
        .y_label_area_size(Y_LABELS_PX)
        .build_cartesian_2d(x0..x1, y_low..y1)
        .map_err(e)?;
    let labels = chart.x_labels.clone();
    let fmt_x = move |x: &f64| {
        if labels.is_empty() {
            short(*x)
        } else {
            let i = x.round();
            if (x - i).abs() < 1e-9 && i >= 0.0 {
                labels.get(i as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        }
    };
    let fmt_y = move |y: &f64| if y0 >= 0.0 && *y < -1e-9 { String::new() } else { short(*y) };
    let mut mesh = c.configure_mesh();
    mesh.x_desc(chart.x_key.as_str())
        .y_desc(format!("{} (mean, 95% CI)", chart.metric))
        .label_style(text(13))
        .axis_desc_style(text(15))
        .x_label_formatter(&fmt_x)
        .y_label_formatter(&fmt_y)
        .light_line_style(RGBColor(245, 245, 245))
        .bold_line_style(RGBColor(215, 215, 215));
    if !chart.x_labels.is_empty() {
        mesh.x_labels(chart.x_labels.len() * 2 + 1);
    }
    mesh.draw().map_err(e)?;
    let plot_w_px = body.dim_in_pixel().0.saturating_sub(2 * MARGIN_PX + Y_LABELS_PX).max(1);
    let x_per_px = (x1 - x0) / f64::from(plot_w_px);
    let floor = if never_negative(chart) { 0.0 } else { f64::MIN };
    let n = chart.series.len();
    for (i, points) in chart.series.values().enumerate() {
        let dodge = (i as f64 - (n as f64 - 1.0) / 2.0) * DODGE_PX * x_per_px;
        let color = color(i);
        let area = c.plotting_area();
        for p in points {
            let (lo, hi) = interval(p, floor);
            let x = p.x + dodge;
            let whisker = PathElement::new(vec![(x, lo), (x, hi)], color.stroke_width(2));
            area.draw(&whisker).map_err(e)?;
            for end in [lo, hi] {
                let cap = PathElement::new(vec![(-4, 0), (4, 0)], color.stroke_width(2));
                area.draw(&(EmptyElement::at((x, end)) + cap)).map_err(e)?;
            }
            common::draw_marker(area, (x, p.mean), common::marker(i), color).map_err(|e| e.0)?;
        }
    }
    Ok(())
}

fn short(x: f64) -> String {
    let s = format!("{x:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    const AGG: &str =
        "cell,consumer.config.session.timeout.ms,protocol,assignor,static_membership,runs,\
records_lost_mean,records_lost_std,records_lost_ci95_lo,records_lost_ci95_hi\n\
a,30000,eager,range,false,3,5,1,2.5,7.5\n\
b,10000,eager,range,false,3,1,,,\n\
a,30000,cooperative,cooperative-sticky,false,3,4,1,3,5\n";

    #[test]
    fn aggregate_rows_become_sorted_series_with_bands() {
        let keys = vec!["consumer.config.session.timeout.ms".to_string()];
        let data = sweep_chart_data(AGG.as_bytes(), &keys).unwrap();
        assert_eq!(data.len(), 1);
        let d = &data[0];
        assert_eq!(d.metric, "records_lost");
        assert!(d.x_labels.is_empty(), "numeric x");
        let eager = &d.series["eager:range"];
        // Sorted by x: 10000 first; its missing CI collapses to the mean.
        assert_eq!(eager[0], SweepPoint { x: 10000.0, mean: 1.0, lo: 1.0, hi: 1.0 });
        assert_eq!(eager[1], SweepPoint { x: 30000.0, mean: 5.0, lo: 2.5, hi: 7.5 });
        assert_eq!(d.series["cooperative:cooperative-sticky"].len(), 1);
        // x from 10000 to 30000 padded by 4% of 20000 = 800; y from 0 to 7.5 + 8% of 7.5.
        assert_eq!(ranges(d), ((9200.0, 30800.0), (0.0, 8.1)));
    }

    /// Two series equal at every point, and a metric at 0 everywhere: no line joins points,
    /// the legend names the equal one, and every marker sits above the x axis.
    #[test]
    fn points_are_not_joined_and_equal_series_are_named() {
        let agg = "cell,group.members,protocol,assignor,static_membership,runs,\
rebalances_mean,rebalances_ci95_lo,rebalances_ci95_hi,records_lost_mean\n\
a,2,eager,range,false,3,5,4,6,0\n\
b,4,eager,range,false,3,9,8,10,0\n\
a,2,cooperative,cooperative-sticky,false,3,5,4,6,0\n\
b,4,cooperative,cooperative-sticky,false,3,9,8,10,0\n";
        let keys = vec!["group.members".to_string()];
        let data = sweep_chart_data(agg.as_bytes(), &keys).unwrap();
        let svg = to_svg(&data[0]).unwrap();
        assert!(svg.contains("eager:range (same as cooperative:cooperative-sticky)"), "{svg}");
        let doc = roxmltree::Document::parse(&svg).unwrap();
        // Whiskers and caps are 2-point lines (marker outlines are white); a line joining
        // points would have more.
        let joined = doc
            .descendants()
            .filter(|n| n.has_tag_name("polyline") && n.attribute("stroke") != Some("#FFFFFF"))
            .filter(|n| n.attribute("points").unwrap_or("").split_whitespace().count() > 2)
            .count();
        assert_eq!(joined, 0, "a line joins the points");
        // records_lost: all 0; the markers (polygons and circles) end above the x axis.
        let svg = to_svg(&data[1]).unwrap();
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let x_axis_y = doc
            .descendants()
            .filter(|n| n.has_tag_name("polyline") && n.attribute("stroke") == Some("#000000"))
            .filter_map(|n| {
                let p: Vec<(f64, f64)> = n
                    .attribute("points")?
                    .split_whitespace()
                    .map(|p| {
                        let (x, y) = p.split_once(',').unwrap();
                        (x.parse().unwrap(), y.parse().unwrap())
                    })
                    .collect();
                (p.len() == 2 && p[0].1 == p[1].1 && p[1].0 - p[0].0 > 300.0).then_some(p[0].1)
            })
            .next()
            .unwrap();
        let lowest = doc
            .descendants()
            .filter(|n| n.has_tag_name("circle"))
            .map(|n| {
                let cy: f64 = n.attribute("cy").unwrap().parse().unwrap();
                cy + n.attribute("r").unwrap().parse::<f64>().unwrap()
            })
            .fold(f64::MIN, f64::max);
        assert!(lowest < x_axis_y - 0.5, "a marker reaches {lowest}, the x axis is at {x_axis_y}");
    }

    #[test]
    fn charts_are_written_and_deterministic() {
        let dir = tempfile::tempdir().unwrap();
        let keys = vec!["consumer.config.session.timeout.ms".to_string()];
        let files = draw_sweep(dir.path(), AGG.as_bytes(), &keys).unwrap();
        let names: Vec<String> =
            files.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
        assert_eq!(names, vec!["sweep-records_lost.png", "sweep-records_lost.svg"]);
        let svg = std::fs::read_to_string(&files[1]).unwrap();
        assert!(svg.contains("records_lost vs consumer.config.session.timeout.ms"));
        // Same bytes for the SVG as well.
        draw_sweep(dir.path(), AGG.as_bytes(), &keys).unwrap();
        assert_eq!(svg, std::fs::read_to_string(&files[1]).unwrap());
        assert!(svg.contains("cooperative:cooperative-sticky"));
        let first = std::fs::read(&files[0]).unwrap();
        draw_sweep(dir.path(), AGG.as_bytes(), &keys).unwrap();
        assert_eq!(first, std::fs::read(&files[0]).unwrap());
    }
}
