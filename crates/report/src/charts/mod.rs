//! Charts of one `run`, drawn with plotters as PNG and SVG.
//!
//! [`draw_run`] takes the [`RunReport`]s of a run (one per protocol run, as the model produced
//! them or as [`crate::csv_out::read_run_outputs`] read them back) and writes, atomically:
//!
//! - `timeline-<protocol>-<assignor>[-static].png/.svg` per protocol run: partitions down the
//!   side, time across, a colour per owner, down time coloured by cause, rebalances marked
//!   above the time axis, and a strip with the fraction of partitions down. Beyond
//!   [`data::MAX_SINGLE_ROWS`] partitions, each row is a band of partitions (majority colour).
//! - `lag.png/.svg`: lag and down partitions over time, every protocol run on one chart.
//! - `compare.png/.svg`: reprocessed, lost, downtime and stop-the-world per protocol run, one
//!   panel per metric.
//! - `downtime-cdf.png/.svg`: the distribution of downtime episodes per protocol run, derived
//!   from the ownership rows, so it can be redrawn from the CSV files alone.
//!
//! Text uses an embedded font (`font`), so a PNG renders the same on a machine with no
//! fonts; the SVG names the generic `sans-serif` family, which every SVG viewer provides.
//! Everything is deterministic: the same reports give the same bytes.

pub mod data;
pub mod diff;

mod cdf;
pub(crate) mod common;
mod compare;
pub(crate) mod font;
mod lag;
mod palette;
mod render;
pub mod scaling;
mod timeline;

use crate::csv_out::write_atomic;
use metrics::RunReport;
use render::Chart;
use std::collections::BTreeSet;
use std::io;
use std::path::{Path, PathBuf};

/// File name stem of the lag chart.
pub const LAG_STEM: &str = "lag";
/// File name stem of the comparison chart.
pub const COMPARE_STEM: &str = "compare";
/// File name stem of the downtime-episode CDF.
pub const DOWNTIME_CDF_STEM: &str = "downtime-cdf";
/// File name prefix of the per-run ownership timelines.
pub const TIMELINE_PREFIX: &str = "timeline-";

/// Writes every chart of one run into `dir` (created if missing) as PNG and SVG, each file
/// rendered in memory and renamed into place. Returns the written paths in a fixed order:
/// the timelines in report order, then lag, compare and downtime-cdf (PNG before SVG).
///
/// Reports with no rows at all get no timeline. Two reports with the same protocol, assignor
/// and static flag get `-2`, `-3`, ... suffixes rather than overwriting each other.
pub fn draw_run(dir: &Path, reports: &[RunReport]) -> io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut written = Vec::new();
    let mut stems = BTreeSet::new();
    for report in reports {
        let Some(key) = data::RunKey::of(report) else {
            continue;
        };
        let stem = unique_stem(&mut stems, format!("{TIMELINE_PREFIX}{}", key.file_stem()));
        write_chart(dir, &stem, &timeline::TimelineChart::new(report), &mut written)?;
    }
    write_chart(dir, LAG_STEM, &lag::LagChart::new(reports), &mut written)?;
    write_chart(dir, COMPARE_STEM, &compare::CompareChart::new(reports), &mut written)?;
    write_chart(dir, DOWNTIME_CDF_STEM, &cdf::CdfChart::new(reports), &mut written)?;
    Ok(written)
}

fn unique_stem(taken: &mut BTreeSet<String>, stem: String) -> String {
    let mut candidate = stem.clone();
    let mut n = 2;
    while taken.contains(&candidate) {
        candidate = format!("{stem}-{n}");
        n += 1;
    }
    taken.insert(candidate.clone());
    candidate
}

fn write_chart(
    dir: &Path,
    stem: &str,
    chart: &impl Chart,
    written: &mut Vec<PathBuf>,
) -> io::Result<()> {
    let png_path = dir.join(format!("{stem}.png"));
    write_atomic(&png_path, &render::to_png(chart)?)?;
    written.push(png_path);
    let svg_path = dir.join(format!("{stem}.svg"));
    write_atomic(&svg_path, render::to_svg(chart)?.as_bytes())?;
    written.push(svg_path);
    Ok(())
}

/// Renders the ownership timeline of one report to PNG bytes (what [`draw_run`] writes as
/// `timeline-*.png`), for callers that want the picture without files.
pub fn timeline_png(report: &RunReport) -> io::Result<Vec<u8>> {
    render::to_png(&timeline::TimelineChart::new(report))
}

/// Renders the ownership timeline of one report to SVG text.
pub fn timeline_svg(report: &RunReport) -> io::Result<String> {
    render::to_svg(&timeline::TimelineChart::new(report))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicate_stems_get_numbered() {
        let mut taken = BTreeSet::new();
        assert_eq!(unique_stem(&mut taken, "a".into()), "a");
        assert_eq!(unique_stem(&mut taken, "a".into()), "a-2");
        assert_eq!(unique_stem(&mut taken, "a".into()), "a-3");
    }
}
