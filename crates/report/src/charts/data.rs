//! Pure data preparation for the charts, with no drawing: the identity and label of a protocol
//! run, the time span of a run, the down-time episodes of ownership rows (so the CDF can be
//! redrawn from `ownership.csv` alone), and the ownership grid that the timeline paints.
//!
//! The grid rasterises ownership intervals to `rows x columns` cells before anything is drawn:
//! the work and the size of the SVG are then bounded by the picture, not by the number of
//! intervals, and a 10,000-partition run is drawn as bands of partitions.

use metrics::{OwnershipLog, OwnershipRowRef, OwnershipSegment, RunReport};
use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

/// Up to this many partitions, each partition gets its own timeline row.
pub const MAX_SINGLE_ROWS: usize = 300;
/// Beyond [`MAX_SINGLE_ROWS`], partitions are grouped into about this many bands.
pub const BAND_ROWS: usize = 200;
/// Two ownership intervals closer than this (seconds) count as adjacent.
const ADJACENT_S: f64 = 1e-9;

/// What identifies one protocol run inside a `run`'s output.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct RunKey {
    /// Protocol name.
    pub protocol: String,
    /// Assignor name.
    pub assignor: String,
    /// Static membership.
    pub static_membership: bool,
}

impl RunKey {
    /// The key of a report: from its summary row, else from its first row of any kind.
    pub fn of(report: &RunReport) -> Option<RunKey> {
        let key = |p: &str, a: &str, s: bool| RunKey {
            protocol: p.to_string(),
            assignor: a.to_string(),
            static_membership: s,
        };
        if let Some(s) = &report.summary {
            return Some(key(&s.protocol, &s.assignor, s.static_membership));
        }
        let o = report.ownership.first().map(|r| key(r.protocol, r.assignor, r.static_membership));
        let t =
            || report.timeline.first().map(|r| key(&r.protocol, &r.assignor, r.static_membership));
        let b = || {
            report.rebalances.first().map(|r| key(&r.protocol, &r.assignor, r.static_membership))
        };
        let p = || {
            report.partitions.first().map(|r| key(&r.protocol, &r.assignor, r.static_membership))
        };
        o.or_else(t).or_else(b).or_else(p)
    }

    /// The command-line spelling: `eager:range`, `eager:range+static`.
    pub fn label(&self) -> String {
        let suffix = if self.static_membership { "+static" } else { "" };
        format!("{}:{}{suffix}", self.protocol, self.assignor)
    }

    /// A file-name part: `eager-range`, `eager-range-static`; characters other than ASCII
    /// letters, digits, `.`, `_` and `-` become `_`.
    pub fn file_stem(&self) -> String {
        let suffix = if self.static_membership { "-static" } else { "" };
        let raw = format!("{}-{}{suffix}", self.protocol, self.assignor);
        raw.chars()
            .map(|c| if c.is_ascii_alphanumeric() || "._-".contains(c) { c } else { '_' })
            .collect()
    }
}

/// The label of a report for legends: its key's label, or `run N` when it has no rows at all.
pub fn run_label(report: &RunReport, index: usize) -> String {
    RunKey::of(report).map_or_else(|| format!("run {}", index + 1), |k| k.label())
}

/// The end of a run in seconds: the largest of the summary's duration and every row's time.
/// Zero for a report with no data.
pub fn run_end_s(report: &RunReport) -> f64 {
    let duration = report.summary.as_ref().map_or(0.0, |s| s.duration_s);
    let ends = report.ownership.iter().map(|r| r.end_s);
    let samples = report.timeline.iter().map(|r| r.t_s);
    let rebalances = report.rebalances.iter().map(|r| r.end_s.max(r.start_s));
    ends.chain(samples)
        .chain(rebalances)
        .filter(|t| t.is_finite())
        .fold(duration.max(0.0), f64::max)
}

/// Orders member names naturally: `c2` before `c10`, then by the whole string.
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    let split = |s: &str| {
        let digits_at = s.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        let (head, tail) = s.split_at(digits_at);
        (
            head.to_string(),
            tail.trim_start_matches('0').len(),
            tail.trim_start_matches('0').to_string(),
        )
    };
    split(a).cmp(&split(b)).then_with(|| a.cmp(b))
}

/// The distinct owners named in ownership rows, in natural order.
pub fn members(log: &OwnershipLog) -> Vec<String> {
    let distinct: BTreeSet<&str> = log.iter().map(|r| r.owner).filter(|o| !o.is_empty()).collect();
    let mut names: Vec<String> = distinct.into_iter().map(str::to_string).collect();
    names.sort_by(|a, b| natural_cmp(a, b));
    names
}

/// The distinct (topic, partition) pairs of a report's partition and ownership rows, sorted.
pub fn partitions(report: &RunReport) -> Vec<(String, u32)> {
    let mut all: Vec<(String, u32)> = report
        .partitions
        .iter()
        .map(|r| (r.topic.clone(), r.partition))
        .chain(report.ownership.segments().map(|s| (s.topic().to_string(), s.partition())))
        .collect();
    all.sort();
    all.dedup();
    all
}

/// Why a partition is down (the `state` column of `ownership.csv`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum DownCause {
    /// Eager rebalance: every partition paused.
    StopTheWorld,
    /// No owner.
    Unassigned,
    /// Revoked, not yet reassigned.
    Revoked,
    /// Owner dead but not yet evicted.
    OwnerDead,
    /// Owner frozen (GC, VM pause).
    OwnerPaused,
    /// Owner cut off from the coordinator or brokers.
    OwnerDisconnected,
    /// A state this version does not know.
    Other,
}

impl DownCause {
    /// Every cause, in legend order.
    pub const ALL: [DownCause; 7] = [
        DownCause::StopTheWorld,
        DownCause::Unassigned,
        DownCause::Revoked,
        DownCause::OwnerDead,
        DownCause::OwnerPaused,
        DownCause::OwnerDisconnected,
        DownCause::Other,
    ];

    /// The cause of a down `state`; `None` for the up states `consuming` and `idle`.
    pub fn of_state(state: &str) -> Option<DownCause> {
        match state {
            "consuming" | "idle" => None,
            "stop-the-world" => Some(DownCause::StopTheWorld),
            "unassigned" => Some(DownCause::Unassigned),
            "revoked" => Some(DownCause::Revoked),
            "owner-dead" => Some(DownCause::OwnerDead),
            "owner-paused" => Some(DownCause::OwnerPaused),
            "owner-disconnected" => Some(DownCause::OwnerDisconnected),
            _ => Some(DownCause::Other),
        }
    }

    /// The legend text.
    pub fn label(self) -> &'static str {
        match self {
            DownCause::StopTheWorld => "stop-the-world (eager rebalance)",
            DownCause::Unassigned => "unassigned",
            DownCause::Revoked => "revoked, not yet reassigned",
            DownCause::OwnerDead => "owner dead, not yet evicted",
            DownCause::OwnerPaused => "owner paused",
            DownCause::OwnerDisconnected => "owner disconnected",
            DownCause::Other => "down (other state)",
        }
    }
}

/// What one timeline cell shows. The order matters: on equal weight the smaller wins, so a
/// down cause beats an owner.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Category {
    /// Down, by cause.
    Down(DownCause),
    /// No owner and nothing waiting (not down).
    Unowned,
    /// Owned by member number `member` (in [`members`] order); `idle` when nothing waits.
    Owned {
        /// Index into the member list.
        member: usize,
        /// Nothing waiting.
        idle: bool,
    },
}

impl Category {
    /// The category of an ownership row; `members` is the sorted member list.
    pub fn of_row(row: &OwnershipRowRef<'_>, members: &[String]) -> Category {
        if let Some(cause) = DownCause::of_state(row.state) {
            return Category::Down(cause);
        }
        let idle = row.state == "idle";
        match members.binary_search_by(|m| natural_cmp(m, row.owner)) {
            Ok(member) if !row.owner.is_empty() => Category::Owned { member, idle },
            _ => Category::Unowned,
        }
    }

    /// Whether the cell counts as down.
    pub fn is_down(self) -> bool {
        matches!(self, Category::Down(_))
    }
}

/// The durations in milliseconds of the down episodes in ownership rows, sorted ascending. An
/// episode is a maximal run of adjacent down intervals of one partition (causes may change
/// inside it, the rows of a partition are taken by start then end); zero-length rows neither
/// start nor end one. Only one partition's intervals are copied at a time (a spilled log,
/// which has one segment per partition, is read one segment at a time).
pub fn downtime_episodes_ms(log: &OwnershipLog) -> Vec<f64> {
    let mut episodes = Vec::new();
    let mut order: Vec<(f64, f64, bool)> = Vec::new();
    if log.is_spilled() {
        for segment in log.segments() {
            partition_episodes(std::slice::from_ref(&segment), &mut order, &mut episodes);
        }
    } else {
        let mut by_partition: BTreeMap<(&str, u32), Vec<OwnershipSegment<'_>>> = BTreeMap::new();
        for segment in log.segments() {
            by_partition.entry((segment.topic(), segment.partition())).or_default().push(segment);
        }
        for segments in by_partition.values() {
            partition_episodes(segments, &mut order, &mut episodes);
        }
    }
    episodes.sort_by(f64::total_cmp);
    episodes
}

/// Adds the down episodes of one partition's `segments` to `episodes` (`order` is scratch).
fn partition_episodes(
    segments: &[OwnershipSegment<'_>],
    order: &mut Vec<(f64, f64, bool)>,
    episodes: &mut Vec<f64>,
) {
    order.clear();
    let rows = segments.iter().flat_map(|s| s.iter()).filter(|r| r.end_s > r.start_s);
    order.extend(rows.map(|r| (r.start_s, r.end_s, DownCause::of_state(r.state).is_some())));
    order.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let mut open: Option<(f64, f64)> = None;
    for &(start_s, end_s, down) in order.iter() {
        let continues = open.is_some_and(|(_, end)| start_s - end <= ADJACENT_S);
        match (down, continues, open) {
            (true, true, Some((start, end))) => open = Some((start, end.max(end_s))),
            (true, _, _) => {
                close(episodes, open);
                open = Some((start_s, end_s));
            }
            (false, _, _) => {
                close(episodes, open);
                open = None;
            }
        }
    }
    close(episodes, open);
}

fn close(episodes: &mut Vec<f64>, open: Option<(f64, f64)>) {
    if let Some((start, end)) = open {
        episodes.push((end - start) * 1000.0);
    }
}

/// The ownership timeline rasterised to `rows x cols` cells.
#[derive(Clone, Debug, PartialEq)]
pub struct OwnershipGrid {
    /// Timeline rows (partitions or bands of partitions), top to bottom.
    pub rows: usize,
    /// Time columns, left to right, each `t_end_s / cols` long.
    pub cols: usize,
    /// Partitions per row (1 unless the run has more than [`MAX_SINGLE_ROWS`]).
    pub partitions_per_row: usize,
    /// The end of the time axis.
    pub t_end_s: f64,
    /// Row-major cells; `None` where no row covers the cell.
    pub cells: Vec<Option<Category>>,
    /// Per column: the fraction of partition-time that is down, in `[0, 1]`.
    pub down_fraction: Vec<f64>,
}

impl OwnershipGrid {
    /// The cell at (`row`, `col`).
    pub fn cell(&self, row: usize, col: usize) -> Option<Category> {
        self.cells[row * self.cols + col]
    }
}

/// Rasterises ownership rows. `partitions` is the row order (see [`partitions`]), `members`
/// the member order (see [`members`]).
///
/// A cell of a one-partition row shows its longest down cause if the partition was down at
/// all during the column (so an episode shorter than a pixel still shows), else its longest
/// owner state. A cell of a band is down (its largest cause) when more than half of its
/// partition-time is down, else it shows the up category with the most partition-time (ties:
/// the first member); the `down_fraction` strip shows how much was down.
pub fn build_grid(
    log: &OwnershipLog,
    partitions: &[(String, u32)],
    members: &[String],
    t_end_s: f64,
    cols: usize,
) -> OwnershipGrid {
    let per_row =
        if partitions.len() <= MAX_SINGLE_ROWS { 1 } else { partitions.len().div_ceil(BAND_ROWS) };
    let grid_rows = partitions.len().div_ceil(per_row);
    let mut grid = OwnershipGrid {
        rows: grid_rows,
        cols,
        partitions_per_row: per_row,
        t_end_s,
        cells: vec![None; grid_rows * cols],
        down_fraction: vec![0.0; cols],
    };
    if cols == 0 || t_end_s <= 0.0 || partitions.is_empty() {
        return grid;
    }
    let col_s = t_end_s / cols as f64;
    let mut down_s = vec![0.0; cols];
    let mut weights: Vec<Vec<(Category, f64)>> = vec![Vec::new(); cols];
    if fill_in_log_order(&mut grid, log, partitions, members, (&mut weights, &mut down_s)) {
        return finish_down_fraction(grid, partitions.len(), col_s, &down_s);
    }
    grid.cells.iter_mut().for_each(|c| *c = None);
    down_s.iter_mut().for_each(|d| *d = 0.0);
    let by_row = segments_by_grid_row(log, partitions, per_row, grid_rows);
    for (r, segments) in by_row.iter().enumerate() {
        weights.iter_mut().for_each(Vec::clear);
        for row in segments.iter().flat_map(|s| s.iter()) {
            let cat = Category::of_row(&row, members);
            add_interval(&mut weights, &mut down_s, cat, row.start_s, row.end_s, col_s);
        }
        for (c, w) in weights.iter().enumerate() {
            grid.cells[r * cols + c] = pick(w, per_row == 1);
        }
    }
    finish_down_fraction(grid, partitions.len(), col_s, &down_s)
}

/// The grid with its `down_fraction` strip from the down time `down_s` of each column.
fn finish_down_fraction(
    mut grid: OwnershipGrid,
    partitions: usize,
    col_s: f64,
    down_s: &[f64],
) -> OwnershipGrid {
    let partition_col_s = partitions as f64 * col_s;
    for (f, d) in grid.down_fraction.iter_mut().zip(down_s) {
        *f = (d / partition_col_s).clamp(0.0, 1.0);
    }
    grid
}

/// A column's time per category in one grid row.
type Weights = Vec<(Category, f64)>;

/// Fills the grid's cells (and the down time per column) walking the log's segments once, if
/// they come in the order of the grid's rows (the collector's log does, when its topics are
/// named in alphabetical order): one grid row is held at a time, and a spilled log is read one
/// segment at a time. The same sums in the same order as the walk of
/// [`segments_by_grid_row`]. Returns false, having filled part of the grid, at the first
/// segment out of order.
fn fill_in_log_order(
    grid: &mut OwnershipGrid,
    log: &OwnershipLog,
    partitions: &[(String, u32)],
    members: &[String],
    (weights, down_s): (&mut [Weights], &mut [f64]),
) -> bool {
    let (cols, per_row) = (grid.cols, grid.partitions_per_row);
    let col_s = grid.t_end_s / cols as f64;
    let index: BTreeMap<(&str, u32), usize> =
        partitions.iter().enumerate().map(|(i, (t, p))| ((t.as_str(), *p), i)).collect();
    // Rows before `next` are filled; `next` is the one being summed.
    let mut next = 0;
    let flush = |grid: &mut OwnershipGrid, weights: &mut [Weights], r: usize| {
        for (c, w) in weights.iter().enumerate() {
            grid.cells[r * cols + c] = pick(w, per_row == 1);
        }
        weights.iter_mut().for_each(Vec::clear);
    };
    weights.iter_mut().for_each(Vec::clear);
    for segment in log.segments() {
        let Some(&i) = index.get(&(segment.topic(), segment.partition())) else { continue };
        let r = i / per_row;
        if r < next {
            return false;
        }
        while next < r {
            flush(grid, weights, next);
            next += 1;
        }
        for row in segment.iter() {
            let cat = Category::of_row(&row, members);
            add_interval(weights, down_s, cat, row.start_s, row.end_s, col_s);
        }
    }
    while next < grid.rows {
        flush(grid, weights, next);
        next += 1;
    }
    true
}

/// The segments of each grid row, in log order (so each grid row sees its rows in log order).
fn segments_by_grid_row<'a>(
    log: &'a OwnershipLog,
    partitions: &[(String, u32)],
    per_row: usize,
    grid_rows: usize,
) -> Vec<Vec<OwnershipSegment<'a>>> {
    let index: BTreeMap<(&str, u32), usize> =
        partitions.iter().enumerate().map(|(i, (t, p))| ((t.as_str(), *p), i)).collect();
    let mut by_row: Vec<Vec<OwnershipSegment<'a>>> = vec![Vec::new(); grid_rows];
    for segment in log.segments() {
        if let Some(i) = index.get(&(segment.topic(), segment.partition())) {
            by_row[i / per_row].push(segment);
        }
    }
    by_row
}

/// Adds the overlap of `[start_s, end_s)` with each column to that column's weight of `cat`.
fn add_interval(
    weights: &mut [Vec<(Category, f64)>],
    down_s: &mut [f64],
    cat: Category,
    start_s: f64,
    end_s: f64,
    col_s: f64,
) {
    let cols = weights.len();
    let t_end_s = col_s * cols as f64;
    let (s, e) = (start_s.max(0.0), end_s.min(t_end_s));
    if e <= s || !s.is_finite() || !e.is_finite() {
        return;
    }
    let first = ((s / col_s).floor() as usize).min(cols - 1);
    let last = ((e / col_s).ceil() as usize).clamp(first + 1, cols);
    for (c, w) in weights.iter_mut().enumerate().take(last).skip(first) {
        let overlap = e.min((c + 1) as f64 * col_s) - s.max(c as f64 * col_s);
        if overlap <= 0.0 {
            continue;
        }
        match w.iter_mut().find(|(k, _)| *k == cat) {
            Some((_, total)) => *total += overlap,
            None => w.push((cat, overlap)),
        }
        if cat.is_down() {
            down_s[c] += overlap;
        }
    }
}

/// The category a cell shows (see [`build_grid`]).
fn pick(weights: &[(Category, f64)], single_partition: bool) -> Option<Category> {
    let heaviest = |down_only: bool| {
        weights
            .iter()
            .filter(|(k, _)| !down_only || k.is_down())
            .max_by(|(ka, wa), (kb, wb)| wa.total_cmp(wb).then(kb.cmp(ka)))
            .map(|(k, _)| *k)
    };
    let heaviest_up = || {
        weights
            .iter()
            .filter(|(k, _)| !k.is_down())
            .max_by(|(ka, wa), (kb, wb)| wa.total_cmp(wb).then(kb.cmp(ka)))
            .map(|(k, _)| *k)
    };
    if single_partition {
        return heaviest(true).or_else(|| heaviest(false));
    }
    let total: f64 = weights.iter().map(|(_, w)| w).sum();
    let down: f64 = weights.iter().filter(|(k, _)| k.is_down()).map(|(_, w)| w).sum();
    if down * 2.0 > total {
        heaviest(true)
    } else {
        heaviest_up().or_else(|| heaviest(true))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rows::own;
    use metrics::OwnershipRow;

    fn log(rows: &[OwnershipRow]) -> OwnershipLog {
        OwnershipLog::from_rows(rows.to_vec()).unwrap()
    }

    #[test]
    fn natural_order_puts_c2_before_c10() {
        let rows = [own(0, 0.0, 1.0, "c10", "consuming"), own(0, 1.0, 2.0, "c2", "idle")];
        assert_eq!(members(&log(&rows)), vec!["c2".to_string(), "c10".to_string()]);
        assert_eq!(natural_cmp("c02", "c2"), Ordering::Less); // same number: by the string
    }

    #[test]
    fn adjacent_down_rows_of_one_partition_are_one_episode() {
        // p0: down 1.0..1.5 (revoked) then 1.5..2.25 (unassigned): one episode of 1250 ms.
        // p0: down again 5.0..5.1 after consuming: a second episode of 100 ms.
        // p1: down 0.0..0.5, then a gap (no row) 0.5..0.7, then down 0.7..1.0: two episodes,
        //     500 ms and 300 ms. Zero-length consuming row at 1.5 does not split p0's episode.
        // p1's rows come in two pieces, out of time order: taken by start all the same.
        let rows = [
            own(1, 0.7, 1.0, "", "stop-the-world"),
            own(0, 0.0, 1.0, "c0", "consuming"),
            own(0, 1.0, 1.5, "", "revoked"),
            own(0, 1.5, 1.5, "c0", "consuming"),
            own(0, 1.5, 2.25, "", "unassigned"),
            own(0, 2.25, 5.0, "c1", "consuming"),
            own(0, 5.0, 5.1, "c1", "owner-dead"),
            own(1, 0.0, 0.5, "", "stop-the-world"),
        ];
        let ms = downtime_episodes_ms(&log(&rows));
        let rounded: Vec<i64> = ms.iter().map(|v| v.round() as i64).collect();
        assert_eq!(rounded, vec![100, 300, 500, 1250]);
    }

    #[test]
    fn single_partition_grid_shows_short_down_and_fraction() {
        // 10 s in 10 columns of 1 s. p0 consumed by c0, down (owner-dead) 3.2..3.4: column 3
        // shows the down cause although c0 owns 0.8 s of it. Down fraction of column 3 with
        // 2 partitions: 0.2 s / (2 x 1 s) = 0.1.
        let rows = [
            own(0, 0.0, 3.2, "c0", "consuming"),
            own(0, 3.2, 3.4, "c0", "owner-dead"),
            own(0, 3.4, 10.0, "c1", "idle"),
            own(1, 0.0, 10.0, "c1", "consuming"),
        ];
        let parts = vec![("t".to_string(), 0), ("t".to_string(), 1)];
        let ms = members(&log(&rows));
        let g = build_grid(&log(&rows), &parts, &ms, 10.0, 10);
        assert_eq!((g.rows, g.partitions_per_row), (2, 1));
        assert_eq!(g.cell(0, 2), Some(Category::Owned { member: 0, idle: false }));
        assert_eq!(g.cell(0, 3), Some(Category::Down(DownCause::OwnerDead)));
        assert_eq!(g.cell(0, 4), Some(Category::Owned { member: 1, idle: true }));
        assert_eq!(g.cell(1, 9), Some(Category::Owned { member: 1, idle: false }));
        assert!((g.down_fraction[3] - 0.1).abs() < 1e-12);
        assert_eq!(g.down_fraction[4], 0.0);
    }

    #[test]
    fn bands_take_the_majority_and_count_every_partition() {
        // 1,000 partitions > 300: bands of ceil(1000 / 200) = 5 partitions, 200 rows.
        // In band 0 (p0..p4) p0 is down for the whole run, p1..p4 consume: majority c0.
        let mut rows: Vec<OwnershipRow> =
            (1..1000).map(|p| own(p, 0.0, 4.0, "c0", "consuming")).collect();
        rows.push(own(0, 0.0, 4.0, "", "unassigned"));
        let parts: Vec<(String, u32)> = (0..1000).map(|p| ("t".to_string(), p)).collect();
        let g = build_grid(&log(&rows), &parts, &members(&log(&rows)), 4.0, 4);
        assert_eq!((g.rows, g.partitions_per_row), (200, 5));
        assert_eq!(g.cell(0, 0), Some(Category::Owned { member: 0, idle: false }));
        // One partition of 1,000 down the whole time: 0.001 in every column.
        assert!((g.down_fraction[2] - 0.001).abs() < 1e-12);
    }

    #[test]
    fn a_band_is_down_only_when_most_of_it_is_down() {
        // 400 partitions: bands of ceil(400 / 200) = 2. Band 0 = p0, p1; band 1 = p2, p3.
        // Column 0 (0..1 s): p0 dead, p1 on c0 -> half down, not more: shows c0.
        // Column 1 (1..2 s): p0 dead, p1 dead (revoked 1..2) -> down; owner-dead and revoked
        // tie at 1 s each; the smaller cause in legend order (Revoked) wins.
        // Band 1: p2 dead 0..2 (1 of 2 partitions) while p3 splits c1 idle: shows c1 idle.
        let mut rows = vec![
            own(0, 0.0, 2.0, "c0", "owner-dead"),
            own(1, 0.0, 1.0, "c0", "consuming"),
            own(1, 1.0, 2.0, "", "revoked"),
            own(2, 0.0, 2.0, "c1", "owner-dead"),
            own(3, 0.0, 2.0, "c1", "idle"),
        ];
        rows.extend((4..400).map(|p| own(p, 0.0, 2.0, "c0", "consuming")));
        let parts: Vec<(String, u32)> = (0..400).map(|p| ("t".to_string(), p)).collect();
        let g = build_grid(&log(&rows), &parts, &members(&log(&rows)), 2.0, 2);
        assert_eq!(g.partitions_per_row, 2);
        assert_eq!(g.cell(0, 0), Some(Category::Owned { member: 0, idle: false }));
        assert_eq!(g.cell(0, 1), Some(Category::Down(DownCause::Revoked)));
        assert_eq!(g.cell(1, 0), Some(Category::Owned { member: 1, idle: true }));
    }

    #[test]
    fn empty_and_zero_length_runs_give_empty_grids() {
        let g = build_grid(&OwnershipLog::default(), &[], &[], 0.0, 50);
        assert_eq!((g.rows, g.cells.len()), (0, 0));
        let parts = vec![("t".to_string(), 0)];
        let g = build_grid(&log(&[own(0, 0.0, 0.0, "c0", "consuming")]), &parts, &[], 0.0, 5);
        assert_eq!(g.cells, vec![None; 5]);
    }

    #[test]
    fn keys_label_and_file_stem() {
        let k = RunKey {
            protocol: "cooperative".into(),
            assignor: "cooperative-sticky".into(),
            static_membership: true,
        };
        assert_eq!(k.label(), "cooperative:cooperative-sticky+static");
        assert_eq!(k.file_stem(), "cooperative-cooperative-sticky-static");
        let odd =
            RunKey { protocol: "a/b".into(), assignor: "x y".into(), static_membership: false };
        assert_eq!(odd.file_stem(), "a_b-x_y");
    }
}
