//! `rebalance-sim check`: re-runs the committed reference results and reports every metric
//! that moved beyond its tolerance.
//!
//! Baselines are listed in `results/check.toml` (paths relative to that file):
//!
//! ```toml
//! [[run]]                      # a `rebalance-sim run` output folder holding summary.csv
//! scenario = "../sims/crash.toml"
//! dir = "crash"
//! [[sweep]]                    # a `rebalance-sim sweep` output folder
//! sweep = "../sims/sweeps/session-timeout.toml"
//! dir = "sweeps/session-timeout-vs-protocol"
//! relative = 0.05              # optional: else the sweep file's [check] table
//! absolute = 0.001
//! ```
//!
//! A `[metrics]` table (and an entry's own `metrics`) sets per-metric rules: which direction is
//! worse, the tolerated change and limits (crate::check_rules, which also has the defaults:
//! bookkeeping columns such as `events` are not compared).
//!
//! A run baseline is re-run under every protocol its scenario lists, with the summary rows'
//! seed, and compared column by column (default tolerance 0). A sweep baseline is re-run in
//! memory with the baseline's replication count and its `aggregate.csv` means are compared
//! within the tolerance of the check file's entry (or, without one there, of the sweep file):
//! never the tolerance recorded in the baseline's `manifest.json`, which is part of what is
//! checked. A value moved if `|new - old| > absolute + relative * |old|`; it is worse or
//! better by its rule's direction, and only worse values (and rows that appear or disappear)
//! fail. A baseline file without its header, with missing columns or with a row twice is bad
//! input (it cannot be compared).

use crate::check_rules::{describe, judge, parse_rules, Rule, Rules, Verdict};
use crate::sweep::{execute, LabError, RunFn, SweepPlan};
use crate::sweep_manifest::{Manifest, ToleranceJson, MANIFEST_JSON};
use crate::sweep_output::{aggregate_csv, protocol_label, summary_fields, AGGREGATE_CSV};
use metrics::{Columns, SummaryRow};
use scenario::Scenario;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// Default location of the check file, relative to the working directory.
pub const CHECK_TOML: &str = "results/check.toml";
/// The summary file of a run baseline.
pub const SUMMARY_CSV: &str = "summary.csv";

/// What a baseline re-runs.
#[derive(Clone, Debug, PartialEq)]
pub enum BaselineKind {
    /// `rebalance-sim run SCENARIO --seed <row seed> --protocol <row protocol>`.
    Run {
        /// The scenario file.
        scenario: PathBuf,
    },
    /// `rebalance-sim sweep SWEEP --seeds <baseline replications>`.
    Sweep {
        /// The sweep file.
        sweep: PathBuf,
        /// The check file's tolerance for it (`relative`, `absolute`); `None`: the sweep
        /// file's `[check]`.
        tolerance: Option<ToleranceJson>,
    },
}

/// One committed reference result.
#[derive(Clone, Debug, PartialEq)]
pub struct Baseline {
    /// The folder holding the reference output.
    pub dir: PathBuf,
    /// How it is made.
    pub kind: BaselineKind,
    /// The check file's `[metrics]` rules with the entry's `metrics` over them.
    pub rules: Rules,
}

/// A metric that moved (or a row that appeared or disappeared).
#[derive(Clone, Debug, PartialEq)]
pub struct Moved {
    /// Baseline folder.
    pub baseline: String,
    /// Row key (`eager:range` or `<cell> eager:range`).
    pub row: String,
    /// Column name, or `(row)`.
    pub metric: String,
    /// Value in the baseline.
    pub was: String,
    /// Value now.
    pub now: String,
    /// Difference, with percentage when numeric.
    pub change: String,
    /// The tolerance and limits that applied (`+5%`, `exact`, `max 0`).
    pub allowed: String,
    /// Worse, better, or a broken limit.
    pub verdict: Verdict,
}

impl Moved {
    /// Whether this change fails the check.
    pub fn fails(&self) -> bool {
        self.verdict.fails()
    }
}

/// The outcome of a check.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CheckReport {
    /// Baselines re-run.
    pub baselines: usize,
    /// Values compared.
    pub compared: usize,
    /// What moved beyond its tolerance, worse or better.
    pub moved: Vec<Moved>,
    /// Warnings that are not regressions (e.g. an input file changed since the baseline).
    pub notes: Vec<String>,
}

impl CheckReport {
    /// How many moved values fail the check.
    pub fn worse(&self) -> usize {
        self.moved.iter().filter(|m| m.fails()).count()
    }
}

/// The top-level keys of a check file.
const CHECK_FILE_KEYS: &[&str] = &["metrics", "run", "sweep"];

/// Reads a check file; paths in it are relative to its folder.
pub fn read_check_file(path: &Path) -> Result<Vec<Baseline>, LabError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        LabError::input(format!("{}: cannot read the check file: {e}", path.display()))
    })?;
    let table: toml::Table =
        text.parse().map_err(|e| LabError::input(format!("{}: {e}", path.display())))?;
    let dir = path.parent().unwrap_or(Path::new(""));
    let mut out = Vec::new();
    let mut errors = Vec::new();
    let file_rules = match table.get("metrics") {
        None => Rules::default(),
        Some(v) => {
            parse_rules(v, &format!("{}: key `metrics`", path.display())).unwrap_or_else(|e| {
                errors.extend(e);
                Rules::default()
            })
        }
    };
    for (key, value) in &table {
        let field = match key.as_str() {
            "run" => "scenario",
            "sweep" => "sweep",
            "metrics" => continue,
            _ => {
                errors.push(format!(
                    "{}: key `{key}`: unknown; allowed: {}",
                    path.display(),
                    CHECK_FILE_KEYS.join(", ")
                ));
                continue;
            }
        };
        let Some(entries) = value.as_array() else {
            errors.push(format!(
                "{}: key `{key}`: expected [[{key}]] tables with `{field}` and `dir`",
                path.display()
            ));
            continue;
        };
        for (i, entry) in entries.iter().enumerate() {
            let where_ = format!("{}: key `{key}[{i}]`", path.display());
            match baseline_entry(entry, key, field, dir, &where_) {
                Ok(mut b) => {
                    b.rules = file_rules.overridden_by(&b.rules);
                    out.push(b)
                }
                Err(m) => errors.extend(m),
            }
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(LabError::Input(errors))
    }
}

/// One `[[run]]` or `[[sweep]]` entry; `where_` names it in messages.
fn baseline_entry(
    entry: &toml::Value,
    kind: &str,
    field: &str,
    dir: &Path,
    where_: &str,
) -> Result<Baseline, Vec<String>> {
    let one = |m: String| vec![format!("{where_}: {m}")];
    let allowed = format!("a table with `{field}` and `dir` (paths relative to the check file)");
    let t = entry.as_table().ok_or_else(|| one(allowed.clone()))?;
    let keys: &[&str] = if kind == "run" {
        &[field, "dir", "metrics"]
    } else {
        &[field, "dir", "relative", "absolute", "metrics"]
    };
    if let Some(k) = t.keys().find(|k| !keys.contains(&k.as_str())) {
        return Err(one(format!("unknown key `{k}`; allowed: {}", keys.join(", "))));
    }
    let get = |k: &str| {
        t.get(k).and_then(|v| v.as_str()).map(|s| dir.join(s)).ok_or_else(|| one(allowed.clone()))
    };
    let (file, out) = (get(field)?, get("dir")?);
    let rules = match t.get("metrics") {
        None => Rules::default(),
        Some(v) => parse_rules(v, &format!("{where_}.metrics"))?,
    };
    let kind = if kind == "run" {
        BaselineKind::Run { scenario: file }
    } else {
        BaselineKind::Sweep { sweep: file, tolerance: entry_tolerance(t).map_err(one)? }
    };
    Ok(Baseline { dir: out, kind, rules })
}

/// `relative` and `absolute` of a `[[sweep]]` entry: both or neither, numbers >= 0.
fn entry_tolerance(t: &toml::Table) -> Result<Option<ToleranceJson>, String> {
    let number = |k: &str| -> Result<Option<f64>, String> {
        let x = match t.get(k) {
            None => return Ok(None),
            Some(toml::Value::Float(f)) => *f,
            Some(toml::Value::Integer(i)) => *i as f64,
            Some(v) => return Err(format!("`{k}` = {v}: a number >= 0")),
        };
        if x.is_finite() && x >= 0.0 {
            Ok(Some(x))
        } else {
            Err(format!("`{k}` = {x}: a number >= 0"))
        }
    };
    match (number("relative")?, number("absolute")?) {
        (Some(relative), Some(absolute)) => Ok(Some(ToleranceJson { relative, absolute })),
        (None, None) => Ok(None),
        _ => Err("give both `relative` and `absolute`, or neither (then the sweep file's \
                  [check] applies)"
            .into()),
    }
}

/// A small CSV table kept as text, for comparing files column by column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextTable {
    /// Column names.
    pub header: Vec<String>,
    /// Rows.
    pub rows: Vec<Vec<String>>,
}

impl TextTable {
    /// Parses CSV bytes with a header.
    pub fn parse(bytes: &[u8], what: &str) -> Result<TextTable, LabError> {
        let mut r = csv::ReaderBuilder::new().from_reader(bytes);
        let bad = |e: csv::Error| LabError::input(format!("{what}: {e}"));
        let header = r.headers().map_err(bad)?.iter().map(str::to_string).collect();
        let mut rows = Vec::new();
        for rec in r.records() {
            rows.push(rec.map_err(bad)?.iter().map(str::to_string).collect());
        }
        Ok(TextTable { header, rows })
    }

    /// Checks that a baseline file has every column of `expected` and no row key twice: a
    /// baseline that fails this cannot be compared (an empty, truncated or edited file).
    pub fn require_complete(
        &self,
        what: &str,
        expected: &[String],
        key_cols: &[&str],
    ) -> Result<(), LabError> {
        if self.header.iter().all(|h| h.is_empty()) {
            return Err(LabError::input(format!(
                "{what}: the baseline is empty: expected a header ({}) and its rows; \
                 regenerate it (scripts/regenerate-results.sh)",
                expected.join(",")
            )));
        }
        let missing: Vec<&str> =
            expected.iter().filter(|c| !self.header.contains(c)).map(String::as_str).collect();
        if !missing.is_empty() {
            return Err(LabError::input(format!(
                "{what}: the baseline has no column {}; regenerate it \
                 (scripts/regenerate-results.sh)",
                missing.join(", ")
            )));
        }
        let keyed = self.keyed(key_cols);
        if keyed.len() != self.rows.len() {
            let mut seen = std::collections::BTreeSet::new();
            let twice = self
                .rows
                .iter()
                .map(|r| self.key_of(r, key_cols))
                .find(|k| !seen.insert(k.clone()));
            return Err(LabError::input(format!(
                "{what}: the baseline has the row `{}` twice",
                twice.unwrap_or_default()
            )));
        }
        Ok(())
    }

    fn key_of(&self, row: &[String], key_cols: &[&str]) -> String {
        let idx = key_cols.iter().filter_map(|k| self.header.iter().position(|h| h == k));
        idx.map(|i| row[i].as_str()).collect::<Vec<_>>().join(" ")
    }

    fn keyed(&self, key_cols: &[&str]) -> BTreeMap<String, BTreeMap<String, String>> {
        let idx: Vec<usize> =
            key_cols.iter().filter_map(|k| self.header.iter().position(|h| h == k)).collect();
        let mut out = BTreeMap::new();
        for row in &self.rows {
            let key: Vec<&str> = idx.iter().map(|&i| row[i].as_str()).collect();
            let cols = self.header.iter().cloned().zip(row.iter().cloned()).collect();
            out.insert(key.join(" "), cols);
        }
        out
    }
}

/// The metric column of a row that appeared or disappeared.
const ROW: &str = "(row)";

/// Compares `new` with `old` row by row (rows matched on `key_cols`) over the columns
/// `rule_of` gives a rule for (`None`: not compared), each judged by its rule.
pub fn compare_tables(
    baseline: &str,
    old: &TextTable,
    new: &TextTable,
    key_cols: &[&str],
    rule_of: &dyn Fn(&str) -> Option<Rule>,
) -> (usize, Vec<Moved>) {
    let (old_rows, new_rows) = (old.keyed(key_cols), new.keyed(key_cols));
    let mut moved = Vec::new();
    let mut compared = 0;
    let mk = |row: &str, metric: &str, was: &str, now: &str, allowed: String, verdict| Moved {
        baseline: baseline.to_string(),
        row: row.to_string(),
        metric: metric.to_string(),
        was: was.to_string(),
        now: now.to_string(),
        change: if metric == ROW { String::new() } else { change_text(was, now) },
        allowed,
        verdict,
    };
    let row_fails = |what: &str| Verdict::Limit(what.to_string());
    for (key, cols) in &old_rows {
        let Some(now_cols) = new_rows.get(key) else {
            let verdict = row_fails("row missing");
            moved.push(mk(key, ROW, "present", "missing", String::new(), verdict));
            continue;
        };
        for (metric, was) in cols {
            let Some(rule) = rule_of(metric) else { continue };
            compared += 1;
            let now = now_cols.get(metric).map(String::as_str).unwrap_or("(no column)");
            let verdict = judge(was, now, &rule);
            if verdict != Verdict::Same {
                moved.push(mk(key, metric, was, now, describe(&rule), verdict));
            }
        }
    }
    for key in new_rows.keys().filter(|k| !old_rows.contains_key(*k)) {
        moved.push(mk(key, ROW, "absent", "new", String::new(), row_fails("new row")));
    }
    (compared, moved)
}

/// `+1.5 (+25.0%)`: the change from `was` to `now` (`changed` when not numeric).
pub(crate) fn change_text(was: &str, now: &str) -> String {
    match (was.parse::<f64>(), now.parse::<f64>()) {
        (Ok(a), Ok(b)) if a != 0.0 => {
            format!("{:+} ({:+.1}%)", round6(b - a), (b - a) / a.abs() * 100.0)
        }
        (Ok(a), Ok(b)) => format!("{:+}", round6(b - a)),
        _ if was == now => String::new(),
        _ => "changed".to_string(),
    }
}

fn round6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

/// Re-runs a run baseline: every summary row with its protocol and seed, compared exactly.
pub fn check_run<L, F>(
    dir: &Path,
    scenario_path: &Path,
    rules: &Rules,
    load: &L,
    run: &F,
) -> Result<CheckReport, LabError>
where
    L: Fn(&Path) -> Result<Scenario, Vec<String>>,
    F: RunFn,
{
    let path = dir.join(SUMMARY_CSV);
    let bytes =
        std::fs::read(&path).map_err(|e| LabError::input(format!("{}: {e}", path.display())))?;
    let old = TextTable::parse(&bytes, &path.display().to_string())?;
    let header: Vec<String> = SummaryRow::COLUMNS.iter().map(|c| c.to_string()).collect();
    let keys = ["protocol", "assignor", "static_membership"];
    old.require_complete(&path.display().to_string(), &header, &keys)?;
    let baseline: Vec<SummaryRow> =
        report::csv_out::read_rows(&path).map_err(|e| LabError::input(e.to_string()))?;
    let scenario = load(scenario_path).map_err(LabError::Input)?;
    let seed = run_seed_of(&baseline, &scenario, &path)?;
    let mut rows = Vec::new();
    let mut report = CheckReport { baselines: 1, ..CheckReport::default() };
    for b in &baseline {
        let label = protocol_label(b);
        if !scenario.protocols.iter().any(|p| p.to_string() == label) {
            report.notes.push(format!(
                "{}: protocol {label} is no longer in {}",
                dir.display(),
                scenario_path.display()
            ));
        }
    }
    // Every protocol the scenario lists, so a row deleted from the baseline shows as new.
    for spec in &scenario.protocols {
        let new = run(&scenario, *spec, seed)
            .map_err(|e| LabError::Run(format!("{spec} seed {seed}: {e}")))?;
        let summary = new.summary.ok_or_else(|| {
            LabError::Run(format!("{spec} seed {seed}: the run reported no summary row"))
        })?;
        rows.push(summary_fields(&summary));
    }
    let new = TextTable { header, rows };
    let rule_of = |c: &str| if keys.contains(&c) { None } else { rules.rule(c, 0.0, 0.0) };
    let (compared, moved) = compare_tables(&dir.display().to_string(), &old, &new, &keys, &rule_of);
    report.compared = compared;
    report.moved = moved;
    Ok(report)
}

/// The seed a run baseline was made with: its rows' (one `run` gives every row the same
/// seed), or the scenario's when it has no rows.
fn run_seed_of(rows: &[SummaryRow], scenario: &Scenario, path: &Path) -> Result<u64, LabError> {
    let Some(first) = rows.first() else { return Ok(scenario.seed) };
    match rows.iter().find(|r| r.seed != first.seed) {
        None => Ok(first.seed),
        Some(other) => Err(LabError::input(format!(
            "{}: rows with seeds {} and {}: a baseline is one `run` (one seed for every row)",
            path.display(),
            first.seed,
            other.seed
        ))),
    }
}

/// Re-runs a sweep baseline in memory and compares its aggregate means within `tolerance` (the
/// check file's), or else the sweep file's `[check]`; never the baseline manifest's.
pub fn check_sweep<E, P, F>(
    dir: &Path,
    sweep: &Path,
    tolerance: Option<ToleranceJson>,
    rules: &Rules,
    parse: P,
    run: &F,
    jobs: usize,
) -> Result<CheckReport, LabError>
where
    E: fmt::Display,
    P: Fn(toml::Table, &Path) -> Result<Scenario, Vec<E>>,
    F: RunFn,
{
    let old_manifest = Manifest::read(&dir.join(MANIFEST_JSON)).map_err(LabError::input)?;
    let agg_path = dir.join(AGGREGATE_CSV);
    let old_bytes = std::fs::read(&agg_path)
        .map_err(|e| LabError::input(format!("{}: {e}", agg_path.display())))?;
    let plan =
        SweepPlan::load(sweep, Some(old_manifest.replications), &old_manifest.git_commit, parse)?;
    let mut report = CheckReport { baselines: 1, ..CheckReport::default() };
    for (what, a, b) in [
        ("sweep file", &old_manifest.sweep_sha256, &plan.manifest.sweep_sha256),
        ("base scenario", &old_manifest.base_sha256, &plan.manifest.base_sha256),
    ] {
        if a != b {
            report
                .notes
                .push(format!("{}: the {what} changed since the baseline was made", dir.display()));
        }
    }
    let records = execute(&plan, &plan.runs(), jobs, None, run, &|| {})?;
    let new = TextTable::parse(&aggregate_csv(&plan.manifest, &records)?, "re-run")?;
    let old = TextTable::parse(&old_bytes, &agg_path.display().to_string())?;
    let mut keys = vec!["cell"];
    keys.extend(plan.manifest.grid_keys.iter().map(String::as_str));
    keys.extend(["protocol", "assignor", "static_membership"]);
    old.require_complete(&agg_path.display().to_string(), &new.header, &keys)?;
    let tolerance = tolerance.unwrap_or(plan.manifest.tolerance);
    if old_manifest.tolerance != tolerance {
        report.notes.push(format!(
            "{}: manifest.json records the tolerance relative {} absolute {}; checked with the \
             check file's (or sweep file's) relative {} absolute {}",
            dir.display(),
            old_manifest.tolerance.relative,
            old_manifest.tolerance.absolute,
            tolerance.relative,
            tolerance.absolute
        ));
    }
    let rule_of = |c: &str| {
        let metric = c.strip_suffix("_mean")?;
        rules.rule(metric, tolerance.relative, tolerance.absolute)
    };
    let (compared, moved) = compare_tables(&dir.display().to_string(), &old, &new, &keys, &rule_of);
    report.compared = compared;
    report.moved = moved;
    Ok(report)
}

/// Adds `other` into `total`.
pub fn combine(total: &mut CheckReport, other: CheckReport) {
    total.baselines += other.baselines;
    total.compared += other.compared;
    total.moved.extend(other.moved);
    total.notes.extend(other.notes);
}

/// A readable table of what moved, one line per value: worse ones first, then better ones.
pub fn format_moved(moved: &[Moved]) -> String {
    let head = ["baseline", "row", "metric", "was", "now", "change", "allowed", "verdict"]
        .map(String::from);
    let (worse, better): (Vec<&Moved>, Vec<&Moved>) = moved.iter().partition(|m| m.fails());
    let rows: Vec<[String; 8]> = worse
        .into_iter()
        .chain(better)
        .map(|m| {
            [
                m.baseline.clone(),
                m.row.clone(),
                m.metric.clone(),
                m.was.clone(),
                m.now.clone(),
                m.change.clone(),
                m.allowed.clone(),
                m.verdict.label(),
            ]
        })
        .collect();
    let mut widths = head.clone().map(|h| h.len());
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.len());
        }
    }
    let line = |cells: &[String; 8]| {
        let parts: Vec<String> =
            cells.iter().zip(widths).map(|(c, w)| format!("{c:<w$}")).collect();
        format!("{}\n", parts.join("  ").trim_end())
    };
    let mut out = line(&head);
    for r in &rows {
        out.push_str(&line(r));
    }
    out
}
