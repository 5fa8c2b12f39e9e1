//! The ownership timeline of one protocol run: partitions (or bands of partitions) as rows,
//! time across, a colour per owner, down time coloured by cause, a rebalance track above and
//! a "fraction of partitions down" heat strip. The ownership rows are first rasterised to a
//! [`OwnershipGrid`] of one column per pixel, then equal neighbouring cells are merged into
//! rectangles, so the cost is bounded by the picture size.
//!
//! Owners: every member has its own colour up to [`palette::MEMBER_COLORS`] members, ordered
//! so that members next to each other (who own neighbouring partitions under range and
//! round-robin assignment) differ strongly; the legend lists every member, in as many columns
//! as fit, and the picture grows to fit the legend. Beyond that many members the colours
//! repeat and the legend lists, per colour, the members that share it. Where a row is tall
//! enough and an ownership stretch wide enough, the owner's name is also written inside it.

use crate::charts::common::{self, clip, num, HEAD_PX};
use crate::charts::data::{self, Category, DownCause, OwnershipGrid, RunKey};
use crate::charts::font::text;
use crate::charts::palette;
use crate::charts::render::{Chart, ChartError, DrawResult};
use metrics::{RebalanceRow, RunReport};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};
use std::collections::BTreeSet;

const WIDTH_PX: u32 = 1600;
const LEGEND_PX: u32 = 300;
const LEFT_LABELS_PX: u32 = 120;
const RIGHT_MARGIN_PX: u32 = 16;
const TRACK_PX: u32 = 56;
const STRIP_PX: u32 = 36;
const X_AXIS_PX: u32 = 56;
/// Time columns of the grid: one per pixel of the plotting area.
const COLS: usize = (WIDTH_PX - LEGEND_PX - LEFT_LABELS_PX - RIGHT_MARGIN_PX) as usize;
/// Rebalance labels are written above the track when there are at most this many.
const MAX_REBALANCE_LABELS: usize = 40;
/// Rebalance start lines cross the main panel when there are at most this many.
const MAX_REBALANCE_LINES: usize = 200;
/// Rows at least this tall get owner names written inside wide enough stretches.
const MIN_NAMED_ROW_PX: u32 = 12;
/// Only stretches of ownership at least this wide get the owner's name (fewer, calmer labels).
const MIN_NAMED_STRETCH_PX: u32 = 200;
/// Height of one legend line.
const LEGEND_LINE_PX: i32 = 20;

type Plot<'a, DB> = ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// Everything the timeline of one report needs, computed once and drawn twice (PNG, SVG).
pub(crate) struct TimelineChart {
    label: String,
    subtitle: String,
    partitions: Vec<(String, u32)>,
    members: Vec<String>,
    causes: Vec<DownCause>,
    grid: OwnershipGrid,
    rebalances: Vec<RebalanceRow>,
    row_px: u32,
}

impl TimelineChart {
    /// Prepares the timeline of `report`.
    pub(crate) fn new(report: &RunReport) -> Self {
        let partitions = data::partitions(report);
        let members = data::members(&report.ownership);
        let t_end_s = data::run_end_s(report);
        let grid = data::build_grid(&report.ownership, &partitions, &members, t_end_s, COLS);
        let causes: BTreeSet<DownCause> =
            report.ownership.iter().filter_map(|r| DownCause::of_state(r.state)).collect();
        let causes: Vec<DownCause> = causes.into_iter().collect();
        let row_px = (720 / grid.rows.max(1) as u32).clamp(3, 28);
        TimelineChart {
            label: RunKey::of(report).map_or_else(|| "run".to_string(), |k| k.label()),
            subtitle: subtitle(report, &partitions, &members, &grid),
            partitions,
            members,
            causes,
            grid,
            rebalances: report.rebalances.clone(),
            row_px,
        }
    }

    fn main_px(&self) -> u32 {
        (self.grid.rows as u32 * self.row_px).max(160)
    }
}

fn subtitle(
    report: &RunReport,
    partitions: &[(String, u32)],
    members: &[String],
    grid: &OwnershipGrid,
) -> String {
    let mut parts = vec![format!("{} partitions", partitions.len())];
    if grid.partitions_per_row > 1 {
        let n = grid.partitions_per_row;
        parts.push(format!("each row: {n} partitions from the one named (majority colour)"));
    }
    parts.push(format!("{} members", members.len()));
    parts.push(format!("{} rebalances", report.rebalances.len()));
    if let Some(s) = &report.summary {
        parts.push(format!("downtime {} partition-s", num(s.downtime_partition_s)));
        parts.push(format!("stop-the-world {} s", num(s.stop_the_world_s)));
        parts.push(format!("scenario '{}', seed {}", s.scenario, s.seed));
    }
    parts.join("  ·  ")
}

impl Chart for TimelineChart {
    fn size_px(&self) -> (u32, u32) {
        let plots_px = TRACK_PX + STRIP_PX + self.main_px() + X_AXIS_PX;
        (WIDTH_PX, HEAD_PX + plots_px.max(self.legend_px()) + 16)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult {
        let title = format!("Ownership timeline: {}", self.label);
        common::head(root, &title, &self.subtitle)?;
        let (_, body) = root.split_vertically(HEAD_PX);
        let (plots, legend) = body.split_horizontally(WIDTH_PX - LEGEND_PX);
        let (track, rest) = plots.split_vertically(TRACK_PX);
        let (strip, main) = rest.split_vertically(STRIP_PX);
        self.draw_track(&track)?;
        self.draw_strip(&strip)?;
        self.draw_main(&main)?;
        self.draw_legend(&legend)
    }
}

fn t_end(grid: &OwnershipGrid) -> f64 {
    if grid.t_end_s > 0.0 {
        grid.t_end_s
    } else {
        1.0
    }
}

fn plot<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    grid: &OwnershipGrid,
    y_max: f64,
    x_axis_px: u32,
) -> Result<Plot<'a, DB>, ChartError> {
    Ok(ChartBuilder::on(area)
        .margin_right(RIGHT_MARGIN_PX)
        .set_label_area_size(LabelAreaPosition::Left, LEFT_LABELS_PX)
        .set_label_area_size(LabelAreaPosition::Bottom, x_axis_px)
        .build_cartesian_2d(0f64..t_end(grid), 0f64..y_max)?)
}

/// Draws the frame of a plotting area and a label to its left, vertically centred.
fn frame_and_label<DB: DrawingBackend>(
    chart: &Plot<'_, DB>,
    name: &str,
    area: &DrawingArea<DB, Shift>,
) -> DrawResult {
    let (xr, yr) = chart.plotting_area().get_pixel_range();
    let (ax, ay) = area.get_base_pixel();
    let y_mid = (yr.start + yr.end) / 2 - ay;
    common::label(area, name, (xr.start - ax - 8, y_mid), 13, (HPos::Right, VPos::Center))?;
    chart.plotting_area().draw(&Rectangle::new(
        [
            (chart.x_range().start, chart.y_range().start),
            (chart.x_range().end, chart.y_range().end),
        ],
        palette::FRAME.stroke_width(1),
    ))?;
    Ok(())
}

impl TimelineChart {
    fn col_s(&self) -> f64 {
        t_end(&self.grid) / self.grid.cols.max(1) as f64
    }

    fn draw_track<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> DrawResult {
        let chart = plot(area, &self.grid, 1.0, 0)?;
        let bars = self.rebalances.iter().map(|r| {
            let end = r.end_s.max(r.start_s + self.col_s());
            Rectangle::new([(r.start_s, 0.08), (end, 0.5)], palette::REBALANCE.filled())
        });
        for bar in bars {
            chart.plotting_area().draw(&bar)?;
        }
        self.draw_rebalance_labels(&chart)?;
        frame_and_label(&chart, "rebalances", area)
    }

    fn draw_rebalance_labels<DB: DrawingBackend>(&self, chart: &Plot<'_, DB>) -> DrawResult {
        if self.rebalances.len() > MAX_REBALANCE_LABELS {
            return Ok(());
        }
        let mut next_free_px = i32::MIN;
        for r in &self.rebalances {
            let s = format!("#{} {}", r.index, r.trigger);
            let (x_px, _) = chart.backend_coord(&(r.start_s, 0.0));
            if x_px < next_free_px {
                continue;
            }
            next_free_px = x_px + 7 * s.chars().count() as i32 + 10;
            let style = text(12)
                .color(&BLACK)
                .pos(plotters::style::text_anchor::Pos::new(HPos::Left, VPos::Center));
            chart.plotting_area().draw(&Text::new(s, (r.start_s, 0.76), style))?;
        }
        Ok(())
    }

    fn draw_strip<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> DrawResult {
        let chart = plot(area, &self.grid, 1.0, 0)?;
        let col_s = self.col_s();
        let level = |f: f64| (f * 20.0).round() / 20.0;
        let levels: Vec<f64> = self.grid.down_fraction.iter().map(|f| level(*f)).collect();
        for (start, end, l) in runs(&levels) {
            if l > 0.0 {
                let rect = [(start as f64 * col_s, 0.0), (end as f64 * col_s, 1.0)];
                chart.plotting_area().draw(&Rectangle::new(rect, palette::heat(l).filled()))?;
            }
        }
        frame_and_label(&chart, "partitions down", area)
    }

    fn draw_main<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> DrawResult {
        let rows = self.grid.rows as f64;
        let mut chart = plot(area, &self.grid, rows.max(1.0), X_AXIS_PX)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .disable_x_mesh()
            .y_labels(0)
            .x_labels(12)
            .x_desc("time (s)")
            .x_label_formatter(&|v| num(*v))
            .label_style(text(13))
            .axis_desc_style(text(15))
            .draw()?;
        if self.grid.rows == 0 {
            return common::note(&chart.plotting_area().strip_coord_spec(), "no ownership rows");
        }
        self.draw_cells(&chart)?;
        self.draw_rebalance_lines(&chart)?;
        self.draw_row_labels(&chart, area)?;
        frame_and_label(&chart, "", area)
    }

    fn draw_cells<DB: DrawingBackend>(&self, chart: &Plot<'_, DB>) -> DrawResult {
        let col_s = self.col_s();
        let rows = self.grid.rows;
        let name_px: Vec<u32> = if self.row_px >= MIN_NAMED_ROW_PX {
            self.members.iter().map(|m| common::text_width_px(m, self.name_size_px())).collect()
        } else {
            Vec::new()
        };
        for r in 0..rows {
            let cells = &self.grid.cells[r * self.grid.cols..(r + 1) * self.grid.cols];
            let y0 = (rows - r - 1) as f64;
            for (start, end, cell) in runs(cells) {
                let Some(cat) = cell else { continue };
                let rect = [(start as f64 * col_s, y0), (end as f64 * col_s, y0 + 1.0)];
                chart
                    .plotting_area()
                    .draw(&Rectangle::new(rect, palette::category(cat).filled()))?;
                if let Category::Owned { member, .. } = cat {
                    // One column per pixel: the stretch is `end - start` pixels wide.
                    if name_px
                        .get(member)
                        .is_some_and(|w| (end - start) as u32 >= (w + 12).max(MIN_NAMED_STRETCH_PX))
                    {
                        self.draw_name(
                            chart,
                            member,
                            cat,
                            ((start + end) as f64 / 2.0 * col_s, y0),
                        )?;
                    }
                }
            }
        }
        Ok(())
    }

    fn name_size_px(&self) -> u32 {
        (self.row_px - 2).min(13)
    }

    /// Writes the name of `member` centred at `(t_s, y0 + 0.5)`, black or white by contrast.
    fn draw_name<DB: DrawingBackend>(
        &self,
        chart: &Plot<'_, DB>,
        member: usize,
        cat: Category,
        (t_s, y0): (f64, f64),
    ) -> DrawResult {
        let RGBColor(r, g, b) = palette::category(cat);
        let luma = 0.299 * f64::from(r) + 0.587 * f64::from(g) + 0.114 * f64::from(b);
        let ink = if luma > 140.0 { BLACK } else { WHITE };
        let pos = plotters::style::text_anchor::Pos::new(HPos::Center, VPos::Center);
        let style = text(self.name_size_px()).color(&ink).pos(pos);
        chart.plotting_area().draw(&Text::new(
            self.members[member].clone(),
            (t_s, y0 + 0.5),
            style,
        ))?;
        Ok(())
    }

    fn draw_rebalance_lines<DB: DrawingBackend>(&self, chart: &Plot<'_, DB>) -> DrawResult {
        if self.rebalances.len() > MAX_REBALANCE_LINES {
            return Ok(());
        }
        let top = self.grid.rows as f64;
        let style = palette::REBALANCE.mix(0.55).stroke_width(1);
        for r in &self.rebalances {
            chart
                .plotting_area()
                .draw(&PathElement::new(vec![(r.start_s, 0.0), (r.start_s, top)], style))?;
        }
        Ok(())
    }

    /// Labels rows on the left: every row when they are tall enough, else every k-th.
    fn draw_row_labels<DB: DrawingBackend>(
        &self,
        chart: &Plot<'_, DB>,
        area: &DrawingArea<DB, Shift>,
    ) -> DrawResult {
        let rows = self.grid.rows;
        let every = (16 / self.row_px.max(1) as usize + 1).max(1);
        let every = if self.row_px >= 14 { 1 } else { nice_step(every) };
        let (ax, ay) = area.get_base_pixel();
        let (xr, _) = chart.plotting_area().get_pixel_range();
        for r in (0..rows).step_by(every) {
            let y_mid = (rows - r) as f64 - 0.5;
            let (_, y_px) = chart.backend_coord(&(0.0, y_mid));
            let s = self.row_label(r);
            common::label(
                area,
                &s,
                (xr.start - ax - 6, y_px - ay),
                12,
                (HPos::Right, VPos::Center),
            )?;
        }
        Ok(())
    }

    fn row_label(&self, row: usize) -> String {
        let first = row * self.grid.partitions_per_row;
        let (topic, p) = &self.partitions[first];
        clip(&format!("{topic}-{p}"), 16)
    }

    /// The member entries of the legend: (colour, text), one per member, or one per colour
    /// listing the members that share it when there are more members than colours.
    fn member_entries(&self) -> Vec<(RGBColor, String)> {
        let n = self.members.len();
        if n <= palette::MEMBER_COLORS {
            return self
                .members
                .iter()
                .enumerate()
                .map(|(i, m)| (palette::member(i), clip(m, 28)))
                .collect();
        }
        (0..palette::MEMBER_COLORS)
            .map(|k| {
                let sharing: Vec<&str> = self
                    .members
                    .iter()
                    .skip(k)
                    .step_by(palette::MEMBER_COLORS)
                    .map(String::as_str)
                    .collect();
                (palette::member(k), clip(&sharing.join(", "), 38))
            })
            .collect()
    }

    /// Columns of the member legend and the width of one column, in pixels.
    fn member_columns(entries: &[(RGBColor, String)]) -> (usize, i32) {
        let widest = entries.iter().map(|(_, s)| common::text_width_px(s, 13)).max().unwrap_or(0);
        let column_px = (widest + 22 + 14) as i32;
        let usable = LEGEND_PX as i32 - 24;
        ((usable / column_px.max(1)).clamp(1, 4) as usize, column_px)
    }

    fn member_heading(&self) -> String {
        if self.members.len() > palette::MEMBER_COLORS {
            format!("Owner (consuming): {} colours, shared", palette::MEMBER_COLORS)
        } else {
            "Owner (consuming)".to_string()
        }
    }

    /// The height of the whole legend column (what [`Self::draw_legend`] draws).
    fn legend_px(&self) -> u32 {
        let entries = self.member_entries();
        let (columns, _) = Self::member_columns(&entries);
        let member_lines = entries.len().div_ceil(columns).max(1) as i32;
        let cause_lines = self.causes.len().max(1) as i32;
        let lines = member_lines + 2 + cause_lines + 1;
        let px = TRACK_PX as i32 + 4 + 22 + lines * LEGEND_LINE_PX + 10 + 22 + 10 + 10 + 22 + 14;
        px as u32
    }

    fn draw_legend<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> DrawResult {
        let x = 12;
        let mut y = TRACK_PX as i32 + 4;
        common::label(area, &self.member_heading(), (x, y), 14, (HPos::Left, VPos::Top))?;
        y += 22;
        let entries = self.member_entries();
        let (columns, column_px) = Self::member_columns(&entries);
        let rows = entries.len().div_ceil(columns);
        // Column by column, so the member order reads downwards.
        for (i, (color, s)) in entries.iter().enumerate() {
            let (col, row) = (i / rows.max(1), i % rows.max(1));
            let at = (x + col as i32 * column_px, y + row as i32 * LEGEND_LINE_PX);
            common::swatch(area, at, *color, s)?;
        }
        y += rows as i32 * LEGEND_LINE_PX;
        if self.members.is_empty() {
            common::label(area, "(no owners)", (x + 22, y + 7), 13, (HPos::Left, VPos::Center))?;
            y += LEGEND_LINE_PX;
        }
        let idle = palette::category(Category::Owned { member: 0, idle: true });
        y = common::swatch(area, (x, y), idle, "lighter: owner idle (nothing waiting)")?;
        y = common::swatch(area, (x, y), palette::UNOWNED, "no owner, nothing waiting")?;
        y += 10;
        common::label(area, "Down, by cause", (x, y), 14, (HPos::Left, VPos::Top))?;
        y += 22;
        for cause in &self.causes {
            y = common::swatch(area, (x, y), palette::down(*cause), cause.label())?;
        }
        if self.causes.is_empty() {
            common::label(area, "(never down)", (x + 22, y + 7), 13, (HPos::Left, VPos::Center))?;
            y += LEGEND_LINE_PX;
        }
        y += 10;
        y = common::swatch(area, (x, y), palette::REBALANCE, "rebalance (trigger to end)")?;
        self.draw_heat_legend(area, (x, y + 10))
    }

    fn draw_heat_legend<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        (x, y): (i32, i32),
    ) -> DrawResult {
        common::label(area, "Partitions down (strip)", (x, y), 14, (HPos::Left, VPos::Top))?;
        let y = y + 22;
        for (i, f) in [0.25, 0.5, 0.75, 1.0].iter().enumerate() {
            let x0 = x + i as i32 * 64;
            area.draw(&Rectangle::new([(x0, y), (x0 + 14, y + 14)], palette::heat(*f).filled()))?;
            area.draw(&Rectangle::new(
                [(x0, y), (x0 + 14, y + 14)],
                palette::FRAME.stroke_width(1),
            ))?;
            let s = format!("{}%", (f * 100.0) as u32);
            common::label(area, &s, (x0 + 18, y + 7), 12, (HPos::Left, VPos::Center))?;
        }
        Ok(())
    }
}

/// Rounds a label step up to 1, 2, 5, 10, 20, 50, ...
fn nice_step(min_step: usize) -> usize {
    let mut base = 1;
    loop {
        for m in [1, 2, 5] {
            if base * m >= min_step {
                return base * m;
            }
        }
        base *= 10;
    }
}

/// Maximal runs of equal values: `(start, end, value)` with `end` exclusive.
fn runs<T: Copy + PartialEq>(values: &[T]) -> Vec<(usize, usize, T)> {
    let mut out: Vec<(usize, usize, T)> = Vec::new();
    for (i, v) in values.iter().enumerate() {
        match out.last_mut() {
            Some((_, end, last)) if *last == *v => *end = i + 1,
            _ => out.push((i, i + 1, *v)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_merge_equal_neighbours() {
        assert_eq!(runs(&[1, 1, 2, 2, 2, 1]), vec![(0, 2, 1), (2, 5, 2), (5, 6, 1)]);
        assert!(runs::<u8>(&[]).is_empty());
    }

    #[test]
    fn label_steps_are_round() {
        assert_eq!(nice_step(1), 1);
        assert_eq!(nice_step(3), 5);
        assert_eq!(nice_step(6), 10);
        assert_eq!(nice_step(11), 20);
    }
}
