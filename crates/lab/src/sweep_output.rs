//! The final files of a sweep: `runs.csv`, `aggregate.csv`, `cells/<id>.toml` and
//! `manifest.json`, all written atomically (`report::csv_out::write_atomic`), and the reader
//! of `runs.csv` that `merge` uses.
//!
//! `runs.csv`: `cell,replication,<grid keys>...,<summary columns of DESIGN section 7>`.
//! `aggregate.csv`: per cell and protocol, `cell,<grid keys>...,protocol,assignor,
//! static_membership,runs`, then `<metric>_mean,<metric>_std,<metric>_ci95_lo,<metric>_ci95_hi`
//! for every numeric summary column except `seed`, `duration_s` and `partitions` (Student's t;
//! std and CI are empty with a single replication). Rows are in run-key order.

use crate::stats::{estimate, Estimate};
use crate::sweep::{key_of, LabError, RunKey};
use crate::sweep_manifest::{Manifest, MANIFEST_JSON};
use metrics::{Columns, SummaryRow};
use std::path::{Path, PathBuf};

/// One run's file name.
pub const RUNS_CSV: &str = "runs.csv";
/// Per cell and protocol statistics.
pub const AGGREGATE_CSV: &str = "aggregate.csv";
/// Folder of the cells' scenario files.
pub const CELLS_DIR: &str = "cells";
/// Summary columns that describe the run rather than measure it.
const NOT_METRICS: &[&str] = &[
    "scenario",
    "protocol",
    "assignor",
    "static_membership",
    "seed",
    "duration_s",
    "partitions",
    "measure_from_s",
];

/// One finished run.
#[derive(Clone, Debug, PartialEq)]
pub struct RunRecord {
    /// Its position in the plan.
    pub key: RunKey,
    /// Its summary row.
    pub summary: SummaryRow,
}

/// A cell's scenario file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CellFile {
    /// Cell id (file `cells/<id>.toml`).
    pub id: String,
    /// TOML bytes.
    pub bytes: Vec<u8>,
}

/// The metric columns aggregated, in summary column order.
pub fn metric_columns() -> Vec<&'static str> {
    SummaryRow::COLUMNS.iter().copied().filter(|c| !NOT_METRICS.contains(c)).collect()
}

/// The summary row's fields as CSV text, in column order.
pub fn summary_fields(summary: &SummaryRow) -> Vec<String> {
    let mut w = csv::WriterBuilder::new().has_headers(false).from_writer(Vec::new());
    w.serialize(summary).expect("a summary row serialises");
    let bytes = w.into_inner().expect("in-memory writer");
    let mut r = csv::ReaderBuilder::new().has_headers(false).from_reader(bytes.as_slice());
    let record = r.records().next().expect("one record").expect("own output parses");
    record.iter().map(str::to_string).collect()
}

fn csv_bytes(header: &[String], rows: &[Vec<String>]) -> Result<Vec<u8>, LabError> {
    let mut w = csv::WriterBuilder::new().has_headers(false).from_writer(Vec::new());
    let fail = |e: csv::Error| LabError::Io(format!("cannot format CSV: {e}"));
    w.write_record(header).map_err(fail)?;
    for row in rows {
        w.write_record(row).map_err(fail)?;
    }
    w.into_inner().map_err(|e| LabError::Io(format!("cannot format CSV: {e}")))
}

fn runs_header(manifest: &Manifest) -> Vec<String> {
    let mut h = vec!["cell".to_string(), "replication".to_string()];
    h.extend(manifest.grid_keys.iter().cloned());
    h.extend(SummaryRow::COLUMNS.iter().map(|c| c.to_string()));
    h
}

fn params(manifest: &Manifest, cell: usize) -> Vec<String> {
    let c = &manifest.cells[cell];
    manifest.grid_keys.iter().map(|k| c.params.get(k).cloned().unwrap_or_default()).collect()
}

/// `runs.csv` bytes of `records` (in run-key order).
pub fn runs_csv(manifest: &Manifest, records: &[RunRecord]) -> Result<Vec<u8>, LabError> {
    let rows: Vec<Vec<String>> = records
        .iter()
        .map(|r| {
            let mut row =
                vec![manifest.cells[r.key.cell].cell.clone(), r.key.replication.to_string()];
            row.extend(params(manifest, r.key.cell));
            row.extend(summary_fields(&r.summary));
            row
        })
        .collect();
    csv_bytes(&runs_header(manifest), &rows)
}

/// `aggregate.csv` bytes of `records` (in run-key order).
pub fn aggregate_csv(manifest: &Manifest, records: &[RunRecord]) -> Result<Vec<u8>, LabError> {
    let metrics = metric_columns();
    let mut header = vec!["cell".to_string()];
    header.extend(manifest.grid_keys.iter().cloned());
    header.extend(["protocol", "assignor", "static_membership", "runs"].map(String::from));
    for m in &metrics {
        header.extend(["mean", "std", "ci95_lo", "ci95_hi"].map(|s| format!("{m}_{s}")));
    }
    let mut groups: std::collections::BTreeMap<(usize, usize), Vec<&RunRecord>> =
        Default::default();
    for r in records {
        groups.entry((r.key.cell, r.key.protocol)).or_default().push(r);
    }
    let rows: Vec<Vec<String>> = groups
        .into_iter()
        .map(|((cell, _), runs)| aggregate_row(manifest, cell, &runs, &metrics))
        .collect();
    csv_bytes(&header, &rows)
}

fn aggregate_row(
    manifest: &Manifest,
    cell: usize,
    runs: &[&RunRecord],
    metrics: &[&str],
) -> Vec<String> {
    let first = &runs[0].summary;
    let mut row = vec![manifest.cells[cell].cell.clone()];
    row.extend(params(manifest, cell));
    row.extend([
        first.protocol.clone(),
        first.assignor.clone(),
        first.static_membership.to_string(),
    ]);
    row.push(runs.len().to_string());
    let fields: Vec<Vec<String>> = runs.iter().map(|r| summary_fields(&r.summary)).collect();
    for m in metrics {
        let col = SummaryRow::COLUMNS.iter().position(|c| c == m).expect("metric is a column");
        let values: Vec<f64> =
            fields.iter().map(|f| f[col].parse::<f64>().unwrap_or(f64::NAN)).collect();
        row.extend(estimate_fields(&estimate(&values)));
    }
    row
}

fn estimate_fields(e: &Estimate) -> [String; 4] {
    let opt = |x: Option<f64>| x.map(|v| v.to_string()).unwrap_or_default();
    [e.mean.to_string(), opt(e.std), opt(e.ci95.map(|c| c.0)), opt(e.ci95.map(|c| c.1))]
}

/// Writes the cell files, `runs.csv`, `aggregate.csv` (unless `manifest.shard` is set) and
/// `manifest.json` into `dir`, each atomically. Returns the paths written.
pub fn write_outputs(
    dir: &Path,
    manifest: &Manifest,
    records: &[RunRecord],
    cells: &[CellFile],
) -> Result<Vec<PathBuf>, LabError> {
    let mut written = Vec::new();
    let mut put = |name: PathBuf, bytes: &[u8]| -> Result<(), LabError> {
        let path = dir.join(&name);
        report::csv_out::write_atomic(&path, bytes).map_err(|e| LabError::io(&path, e))?;
        written.push(path);
        Ok(())
    };
    for c in cells {
        put(Path::new(CELLS_DIR).join(format!("{}.toml", c.id)), &c.bytes)?;
    }
    put(RUNS_CSV.into(), &runs_csv(manifest, records)?)?;
    if manifest.shard.is_none() {
        put(AGGREGATE_CSV.into(), &aggregate_csv(manifest, records)?)?;
    }
    put(MANIFEST_JSON.into(), &manifest.to_bytes())?;
    Ok(written)
}

/// Reads `runs.csv` written for `manifest` back into records (in file order).
pub fn read_runs_csv(path: &Path, manifest: &Manifest) -> Result<Vec<RunRecord>, LabError> {
    let mut reader =
        csv::ReaderBuilder::new().from_path(path).map_err(|e| LabError::io(path, e))?;
    let header = reader.headers().map_err(|e| LabError::io(path, e))?.clone();
    let expected = runs_header(manifest);
    if header.iter().ne(expected.iter().map(String::as_str)) {
        return Err(LabError::input(format!(
            "{}: columns differ from its manifest's",
            path.display()
        )));
    }
    let skip = 2 + manifest.grid_keys.len();
    let summary_header = csv::StringRecord::from(SummaryRow::COLUMNS.to_vec());
    let mut out = Vec::new();
    for (line, record) in reader.records().enumerate() {
        let at = || format!("{}: row {}", path.display(), line + 1);
        let record = record.map_err(|e| LabError::input(format!("{}: {e}", at())))?;
        let sub: csv::StringRecord = record.iter().skip(skip).collect();
        let summary: SummaryRow = sub
            .deserialize(Some(&summary_header))
            .map_err(|e| LabError::input(format!("{}: {e}", at())))?;
        let replication: u32 =
            record[1].parse().map_err(|_| LabError::input(format!("{}: bad replication", at())))?;
        let label = protocol_label(&summary);
        let key =
            key_of(manifest, &record[0], replication, &label, summary.seed).ok_or_else(|| {
                LabError::input(format!(
                    "{}: run not in the manifest (cell {}, {label})",
                    at(),
                    &record[0]
                ))
            })?;
        out.push(RunRecord { key, summary });
    }
    Ok(out)
}

/// The protocol label of a summary row, as `ProtocolSpec` prints it: `eager:range+static`.
pub fn protocol_label(s: &SummaryRow) -> String {
    format!("{}:{}{}", s.protocol, s.assignor, if s.static_membership { "+static" } else { "" })
}

/// Folder of a sweep's charts inside its output folder.
pub const CHARTS_DIR: &str = "charts";

/// Draws the charts of a finished sweep folder (from its `aggregate.csv`) into `dir/charts/`.
pub fn write_charts(dir: &Path, grid_keys: &[String]) -> Result<Vec<PathBuf>, LabError> {
    let path = dir.join(AGGREGATE_CSV);
    let bytes = std::fs::read(&path).map_err(|e| LabError::io(&path, e))?;
    let charts = dir.join(CHARTS_DIR);
    report::sweep_charts::draw_sweep(&charts, &bytes, grid_keys)
        .map_err(|e| LabError::io(&charts, e))
}
