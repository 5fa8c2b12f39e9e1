//! `rebalance-sim diff BEFORE AFTER`: two runs side by side, the way a user compares before
//! and after a config change. Each side is a run's output folder (its `summary.csv`) or a
//! scenario file, run here with every protocol it lists at its own seed. Rows are matched on
//! protocol, assignor and static membership; every metric of `summary.csv` is shown with the
//! change and whether it is better or worse by the metric's default rule (`check_rules`:
//! higher is worse, except the input's own figures, which are only `changed`, and the
//! bookkeeping ones, which get no verdict).

use crate::check::TextTable;
use crate::check_rules::{judge, Rules, Verdict, Worse, METRIC_NAMES};
use crate::sweep::{LabError, RunFn};
use crate::sweep_output::summary_fields;
use metrics::{Columns, SummaryRow};
use scenario::Scenario;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// The columns that match a row of one side with a row of the other.
pub const KEY_COLUMNS: [&str; 3] = ["protocol", "assignor", "static_membership"];

/// One metric of one row, before and after.
#[derive(Clone, Debug, PartialEq)]
pub struct DiffLine {
    /// `eager:range` (with `+static` for static membership).
    pub row: String,
    /// The `summary.csv` column.
    pub metric: String,
    /// Its value before.
    pub before: String,
    /// Its value after.
    pub after: String,
    /// `after - before`, and the relative change when `before` is not 0 (empty: unchanged).
    pub change: String,
    /// `better`, `worse`, `changed` (a change with no better side) or empty (unchanged, or a
    /// bookkeeping column).
    pub verdict: &'static str,
}

/// Two runs compared.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Diff {
    /// Every metric of every row both sides have, in row then column order.
    pub lines: Vec<DiffLine>,
    /// Rows only the first side has.
    pub only_before: Vec<String>,
    /// Rows only the second side has.
    pub only_after: Vec<String>,
}

impl Diff {
    /// The lines whose value changed.
    pub fn changed(&self) -> impl Iterator<Item = &DiffLine> {
        self.lines.iter().filter(|l| l.before != l.after)
    }
}

/// The summary table of one side: `path`'s `summary.csv` when it is a folder, else the
/// scenario file at `path` run with `run` (every protocol it lists, its seed).
pub fn summary_of<L, F>(path: &Path, load: &L, run: &F) -> Result<TextTable, LabError>
where
    L: Fn(&Path) -> Result<Scenario, Vec<String>>,
    F: RunFn,
{
    if path.is_dir() {
        let file = path.join("summary.csv");
        let bytes = std::fs::read(&file).map_err(|e| {
            LabError::input(format!(
                "{}: {e} (a side of `diff` is a run's output folder with a summary.csv, or a \
                 scenario file)",
                file.display()
            ))
        })?;
        let table = TextTable::parse(&bytes, &file.display().to_string())?;
        let header: Vec<String> = SummaryRow::COLUMNS.iter().map(|c| c.to_string()).collect();
        table.require_complete(&file.display().to_string(), &header, &KEY_COLUMNS)?;
        return Ok(table);
    }
    let scenario = load(path).map_err(LabError::Input)?;
    let mut rows = Vec::new();
    for spec in &scenario.protocols {
        let report = run(&scenario, *spec, scenario.seed)
            .map_err(|e| LabError::Run(format!("{}: {spec}: {e}", path.display())))?;
        let summary = report.summary.ok_or_else(|| {
            LabError::Run(format!("{}: {spec}: the run reported no summary row", path.display()))
        })?;
        rows.push(summary_fields(&summary));
    }
    let header = SummaryRow::COLUMNS.iter().map(|c| c.to_string()).collect();
    Ok(TextTable { header, rows })
}

/// Compares `after` with `before`, row by row and metric by metric.
pub fn diff_tables(before: &TextTable, after: &TextTable) -> Diff {
    let (old, new) = (keyed(before), keyed(after));
    let rules = Rules::default();
    let mut diff = Diff::default();
    for (key, (label, cols)) in &old {
        let Some((_, now_cols)) = new.get(key) else {
            diff.only_before.push(label.clone());
            continue;
        };
        for metric in METRIC_NAMES {
            let (Some(was), Some(now)) = (cols.get(*metric), now_cols.get(*metric)) else {
                continue;
            };
            diff.lines.push(DiffLine {
                row: label.clone(),
                metric: metric.to_string(),
                before: was.clone(),
                after: now.clone(),
                change: change_text(was, now),
                verdict: verdict(&rules, metric, was, now),
            });
        }
    }
    diff.only_after =
        new.iter().filter(|(k, _)| !old.contains_key(*k)).map(|(_, (l, _))| l.clone()).collect();
    diff
}

/// Rows by key, each with its label (`eager:range+static`) and its columns by name.
type Keyed = BTreeMap<Vec<String>, (String, BTreeMap<String, String>)>;

fn keyed(table: &TextTable) -> Keyed {
    let mut out = BTreeMap::new();
    for row in &table.rows {
        let cols: BTreeMap<String, String> =
            table.header.iter().cloned().zip(row.iter().cloned()).collect();
        let field = |k: &str| cols.get(k).cloned().unwrap_or_default();
        let key: Vec<String> = KEY_COLUMNS.iter().map(|k| field(k)).collect();
        let suffix = if field("static_membership") == "true" { "+static" } else { "" };
        let label = format!("{}:{}{suffix}", field("protocol"), field("assignor"));
        out.insert(key, (label, cols));
    }
    out
}

fn verdict(rules: &Rules, metric: &str, was: &str, now: &str) -> &'static str {
    let Some(rule) = rules.rule(metric, 0.0, 0.0) else { return "" };
    match judge(was, now, &rule) {
        Verdict::Same => "",
        _ if rule.worse == Worse::Any => "changed",
        Verdict::Better => "better",
        Verdict::Worse | Verdict::Limit(_) => "worse",
    }
}

fn change_text(was: &str, now: &str) -> String {
    if was == now {
        String::new()
    } else {
        crate::check::change_text(was, now)
    }
}

/// The terminal table: one block per row, its changed metrics (every metric with `all`), then
/// the rows only one side has and a count line.
pub fn format_diff(diff: &Diff, before: &str, after: &str, all: bool) -> String {
    let shown: Vec<&DiffLine> = diff.lines.iter().filter(|l| all || l.before != l.after).collect();
    let width = |f: &dyn Fn(&DiffLine) -> usize, title: &str| {
        shown.iter().map(|l| f(l)).chain([title.chars().count()]).max().unwrap_or(0)
    };
    let w_metric = width(&|l| l.metric.len(), "metric");
    let w_before = width(&|l| l.before.len(), before);
    let w_after = width(&|l| l.after.len(), after);
    let w_change = width(&|l| l.change.len(), "change");
    let mut out = String::new();
    let mut row = None;
    for l in &shown {
        if row != Some(&l.row) {
            row = Some(&l.row);
            let _ = writeln!(out, "{}", l.row);
            let _ = writeln!(
                out,
                "  {:<w_metric$}  {:>w_before$}  {:>w_after$}  {:>w_change$}",
                "metric", before, after, "change"
            );
        }
        let _ = writeln!(
            out,
            "  {:<w_metric$}  {:>w_before$}  {:>w_after$}  {:>w_change$}  {}",
            l.metric, l.before, l.after, l.change, l.verdict
        );
    }
    for label in &diff.only_before {
        let _ = writeln!(out, "{label}: only in {before}");
    }
    for label in &diff.only_after {
        let _ = writeln!(out, "{label}: only in {after}");
    }
    let count = |v: &str| diff.lines.iter().filter(|l| l.verdict == v).count();
    let _ = writeln!(
        out,
        "diff: {} values compared, {} changed ({} worse, {} better, {} changed inputs)",
        diff.lines.len(),
        diff.changed().count(),
        count("worse"),
        count("better"),
        count("changed")
    );
    out
}

/// `diff.csv`: `row,metric,before,after,change,verdict`, every line.
pub fn diff_csv(diff: &Diff) -> Result<Vec<u8>, LabError> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let io = |e: csv::Error| LabError::Io(format!("diff.csv: {e}"));
    w.write_record(["row", "metric", "before", "after", "change", "verdict"]).map_err(io)?;
    for l in &diff.lines {
        w.write_record([&l.row, &l.metric, &l.before, &l.after, &l.change, l.verdict])
            .map_err(io)?;
    }
    w.into_inner().map_err(|e| LabError::Io(format!("diff.csv: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(rows: &[(&str, &str, &str, &str)]) -> TextTable {
        let header = ["protocol", "assignor", "static_membership", "downtime_partition_s"];
        let header = header.iter().map(|c| c.to_string()).collect();
        let rows = rows
            .iter()
            .map(|(p, a, s, d)| vec![p.to_string(), a.to_string(), s.to_string(), d.to_string()])
            .collect();
        TextTable { header, rows }
    }

    /// Downtime 12 -> 6 under cooperative is better (-6, -50%), 4 -> 5 under eager worse
    /// (+1, +25%); a row on one side only is listed, not compared.
    #[test]
    fn changes_are_judged_by_the_metric_rule() {
        let before = table(&[
            ("eager", "range", "false", "4"),
            ("cooperative", "cooperative-sticky", "false", "12"),
            ("eager", "range", "true", "3"),
        ]);
        let after = table(&[
            ("eager", "range", "false", "5"),
            ("cooperative", "cooperative-sticky", "false", "6"),
            ("consumer", "uniform", "false", "1"),
        ]);
        let diff = diff_tables(&before, &after);
        let line = |row: &str| diff.lines.iter().find(|l| l.row == row).expect("a line").clone();
        let coop = line("cooperative:cooperative-sticky");
        assert_eq!((coop.change.as_str(), coop.verdict), ("-6 (-50.0%)", "better"));
        let eager = line("eager:range");
        assert_eq!((eager.change.as_str(), eager.verdict), ("+1 (+25.0%)", "worse"));
        assert_eq!(diff.only_before, vec!["eager:range+static".to_string()]);
        assert_eq!(diff.only_after, vec!["consumer:uniform".to_string()]);
        let text = format_diff(&diff, "before", "after", false);
        assert!(
            text.ends_with(
                "diff: 2 values compared, 2 changed (1 worse, 1 better, 0 changed inputs)\n"
            ),
            "{text}"
        );
    }

    /// The input's own figures have no better side, bookkeeping columns no verdict.
    #[test]
    fn inputs_are_changed_and_bookkeeping_is_not_judged() {
        let rules = Rules::default();
        assert_eq!(verdict(&rules, "partitions", "6", "12"), "changed");
        assert_eq!(verdict(&rules, "events", "100", "200"), "");
        assert_eq!(verdict(&rules, "records_lost", "0", "0"), "");
        assert_eq!(change_text("0", "3"), "+3");
    }
}
