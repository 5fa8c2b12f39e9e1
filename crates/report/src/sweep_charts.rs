//! Charts of a sweep, drawn from its `aggregate.csv`: one chart per metric, the metric's mean
//! against the first swept parameter, one line per protocol (and per value of the other grid
//! keys), with the 95% confidence band shaded around it. Written as PNG and SVG, atomically.
//!
//! Text uses the embedded DejaVu Sans of `charts/font` (registered here too, under the same
//! family name, so this module does not depend on a chart of a `run` having been drawn first).
//! Deterministic: the same aggregate bytes give the same chart bytes.

use crate::csv_out::write_atomic;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::{FontStyle, RGBColor, TextStyle};
use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Once;

const WIDTH_PX: u32 = 1000;
const HEIGHT_PX: u32 = 640;
const FAMILY: &str = "sans-serif";
static DEJAVU_SANS_TTF: &[u8] = include_bytes!("charts/font/DejaVuSans.ttf");
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
    register_font();
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

fn register_font() {
    static REGISTER: Once = Once::new();
    REGISTER.call_once(|| {
        let ok = plotters::style::register_font(FAMILY, FontStyle::Normal, DEJAVU_SANS_TTF).is_ok();
        assert!(ok, "the embedded DejaVu Sans font failed to parse");
    });
}

fn text(size_px: u32) -> TextStyle<'static> {
    TextStyle::from((FAMILY, f64::from(size_px)))
}

fn to_png(chart: &SweepChartData) -> io::Result<Vec<u8>> {
    let mut rgb = vec![255u8; WIDTH_PX as usize * HEIGHT_PX as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (WIDTH_PX, HEIGHT_PX)).into_drawing_area();
        draw(chart, &root).map_err(io::Error::other)?;
        root.present().map_err(|e| io::Error::other(e.to_string()))?;
    }
    let mut out = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut out, WIDTH_PX, HEIGHT_PX);
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
        let root = SVGBackend::with_string(&mut svg, (WIDTH_PX, HEIGHT_PX)).into_drawing_area();
        draw(chart, &root).map_err(io::Error::other)?;
        root.present().map_err(|e| io::Error::other(e.to_string()))?;
    }
    Ok(svg)
}

/// The x and y ranges covering every point and band, with a little margin.
fn ranges(chart: &SweepChartData) -> ((f64, f64), (f64, f64)) {
    let points = chart.series.values().flatten();
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, 0.0_f64, f64::MIN);
    for p in points {
        (x0, x1) = (x0.min(p.x), x1.max(p.x));
        (y0, y1) = (y0.min(p.lo), y1.max(p.hi));
    }
    if x0 > x1 {
        return ((0.0, 1.0), (0.0, 1.0));
    }
    let xpad = if x1 > x0 { (x1 - x0) * 0.04 } else { 0.5 };
    let ypad = if y1 > y0 { (y1 - y0) * 0.08 } else { 1.0 };
    ((x0 - xpad, x1 + xpad), (y0, y1 + ypad))
}

fn draw<DB: DrawingBackend>(
    chart: &SweepChartData,
    root: &DrawingArea<DB, Shift>,
) -> Result<(), String> {
    let e = |e: plotters::drawing::DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    root.fill(&WHITE).map_err(e)?;
    let ((x0, x1), (y0, y1)) = ranges(chart);
    let title = format!("{} vs {}", chart.metric, chart.x_key);
    let mut c = ChartBuilder::on(root)
        .caption(title, text(22))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(72)
        .build_cartesian_2d(x0..x1, y0..y1)
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
    c.configure_mesh()
        .x_desc(chart.x_key.as_str())
        .y_desc(format!("{} (mean, 95% CI)", chart.metric))
        .label_style(text(13))
        .axis_desc_style(text(15))
        .x_label_formatter(&fmt_x)
        .draw()
        .map_err(e)?;
    for (i, (label, points)) in chart.series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let mut band: Vec<(f64, f64)> = points.iter().map(|p| (p.x, p.hi)).collect();
        band.extend(points.iter().rev().map(|p| (p.x, p.lo)));
        c.draw_series(std::iter::once(Polygon::new(band, color.mix(0.18).filled()))).map_err(e)?;
        c.draw_series(LineSeries::new(points.iter().map(|p| (p.x, p.mean)), color.stroke_width(2)))
            .map_err(e)?
            .label(label.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(3))
            });
        c.draw_series(points.iter().map(|p| Circle::new((p.x, p.mean), 4, color.filled())))
            .map_err(e)?;
    }
    c.configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .label_font(text(13))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(e)?;
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
        assert!(svg.contains("cooperative:cooperative-sticky"));
        let first = std::fs::read(&files[0]).unwrap();
        draw_sweep(dir.path(), AGG.as_bytes(), &keys).unwrap();
        assert_eq!(first, std::fs::read(&files[0]).unwrap());
    }
}
