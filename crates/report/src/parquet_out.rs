//! `--format parquet`: the CSV tables of a run (summary, partitions, rebalances, timeline,
//! ownership) and of a sweep (runs, aggregate) as Parquet files beside or instead of them,
//! with typed columns, for pandas, polars and duckdb (written with the `arrow-array` and
//! `parquet` crates, snappy-compressed).
//!
//! Column types, the same for every table ([`column_kind`]): names (`scenario`, `protocol`,
//! `assignor`, `topic`, `owner`, `state`, `trigger`, `cell`) are strings, `static_membership`
//! a boolean, `seed` an unsigned 64-bit integer, times and other real numbers (`*_s`, `*_ms*`, and a sweep's `*_mean`, `*_std`,
//! `*_ci95_lo`, `*_ci95_hi`) 64-bit floats, counts and indices 64-bit integers; a sweep's grid
//! columns take the type all their values have (integer, float, boolean, else string). Every
//! value is the value of the CSV cell: the small tables are converted from the very CSV text
//! the CSV writer produces, so the two cannot differ; `ownership` (tens of millions of rows)
//! is written from the run's ownership log in batches of [`OWNERSHIP_BATCH_ROWS`] rows, its
//! times the same `f64`s the CSV prints. An empty CSV cell is null in a float column (a
//! sweep's `*_std` of one run), and the empty string in a string column (`owner` of an
//! unowned interval), as in the CSV.

use crate::csv_out::{
    self, OWNERSHIP_CSV, PARTITIONS_CSV, REBALANCES_CSV, SUMMARY_CSV, TIMELINE_CSV,
};
use arrow_array::builder::{
    BooleanBuilder, Float64Builder, Int64Builder, StringBuilder, UInt64Builder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use metrics::{Columns, OwnershipRow, RunReport};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Rows per record batch of the ownership table (bounded memory while writing).
pub const OWNERSHIP_BATCH_ROWS: usize = 1 << 16;

/// The type of a column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnKind {
    /// UTF-8 text.
    Text,
    /// `true` / `false`.
    Boolean,
    /// A signed 64-bit integer.
    Integer,
    /// An unsigned 64-bit integer (`seed`: a sweep's run seeds use all 64 bits).
    Unsigned,
    /// A 64-bit float (empty cells null).
    Float,
}

impl ColumnKind {
    fn data_type(self) -> DataType {
        match self {
            ColumnKind::Text => DataType::Utf8,
            ColumnKind::Boolean => DataType::Boolean,
            ColumnKind::Integer => DataType::Int64,
            ColumnKind::Unsigned => DataType::UInt64,
            ColumnKind::Float => DataType::Float64,
        }
    }
}

const TEXT_COLUMNS: [&str; 8] =
    ["cell", "scenario", "protocol", "assignor", "topic", "owner", "state", "trigger"];
const INTEGER_COLUMNS: [&str; 22] = [
    "replication",
    "partitions",
    "records_produced",
    "records_processed",
    "records_reprocessed",
    "records_lost",
    "final_lag",
    "rebalances",
    "startup_rebalances",
    "partitions_moved",
    "events",
    "partition",
    "produced",
    "processed",
    "reprocessed",
    "lost",
    "episodes",
    "moves",
    "index",
    "rounds",
    "members",
    "runs",
];
const FLOAT_SUFFIXES: [&str; 5] = ["_s", "_mean", "_std", "_ci95_lo", "_ci95_hi"];

/// The type of the column `name` whose CSV cells are `values` (see the module doc).
pub fn column_kind<'a>(name: &str, values: impl Iterator<Item = &'a str> + Clone) -> ColumnKind {
    if TEXT_COLUMNS.contains(&name) {
        return ColumnKind::Text;
    }
    if name == "static_membership" {
        return ColumnKind::Boolean;
    }
    if name == "seed" {
        return ColumnKind::Unsigned;
    }
    if FLOAT_SUFFIXES.iter().any(|s| name.ends_with(s)) || name.contains("_ms") {
        return ColumnKind::Float;
    }
    if INTEGER_COLUMNS.contains(&name) {
        return ColumnKind::Integer;
    }
    let mut values = values.peekable();
    if values.peek().is_none() {
        return ColumnKind::Text;
    }
    if values.clone().all(|v| v.parse::<i64>().is_ok()) {
        ColumnKind::Integer
    } else if values.clone().all(|v| v.parse::<f64>().is_ok()) {
        ColumnKind::Float
    } else if values.all(|v| v == "true" || v == "false") {
        ColumnKind::Boolean
    } else {
        ColumnKind::Text
    }
}

/// The Parquet writer settings of every file: snappy, and the default row groups.
fn properties() -> WriterProperties {
    WriterProperties::builder().set_compression(Compression::SNAPPY).build()
}

fn to_io(e: impl std::fmt::Display) -> io::Error {
    io::Error::other(e.to_string())
}

/// Converts a CSV table (header and rows, as the CSV writers write it) into Parquet bytes
/// with the column types of [`column_kind`]. A cell that does not parse as its column's type
/// is an error naming the column and row.
pub fn csv_to_parquet(csv_bytes: &[u8], out: impl Write + Send) -> io::Result<()> {
    let mut reader = csv::ReaderBuilder::new().from_reader(csv_bytes);
    let header: Vec<String> = reader.headers()?.iter().map(str::to_string).collect();
    let records: Vec<csv::StringRecord> = reader.records().collect::<Result<_, _>>()?;
    let mut fields = Vec::with_capacity(header.len());
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(header.len());
    for (c, name) in header.iter().enumerate() {
        let cells = records.iter().map(|r| r.get(c).unwrap_or(""));
        let kind = column_kind(name, cells.clone());
        let array = column_array(kind, cells).map_err(|(row, cell)| {
            to_io(format!("column `{name}`, row {}: `{cell}` is not {kind:?}", row + 1))
        })?;
        fields.push(Field::new(name, kind.data_type(), kind == ColumnKind::Float));
        columns.push(array);
    }
    let schema = Arc::new(Schema::new(fields));
    let batch = RecordBatch::try_new(Arc::clone(&schema), columns).map_err(to_io)?;
    let mut writer = ArrowWriter::try_new(out, schema, Some(properties())).map_err(to_io)?;
    writer.write(&batch).map_err(to_io)?;
    writer.close().map_err(to_io)?;
    Ok(())
}

/// One column's cells as an array of `kind`; a cell that does not parse: `(row, cell)`.
fn column_array<'a>(
    kind: ColumnKind,
    cells: impl Iterator<Item = &'a str>,
) -> Result<ArrayRef, (usize, String)> {
    let bad = |row: usize, cell: &str| (row, cell.to_string());
    Ok(match kind {
        ColumnKind::Text => {
            let mut b = StringBuilder::new();
            cells.for_each(|cell| b.append_value(cell));
            Arc::new(b.finish())
        }
        ColumnKind::Boolean => {
            let mut b = BooleanBuilder::new();
            for (row, cell) in cells.enumerate() {
                b.append_value(cell.parse::<bool>().map_err(|_| bad(row, cell))?);
            }
            Arc::new(b.finish())
        }
        ColumnKind::Integer => {
            let mut b = Int64Builder::new();
            for (row, cell) in cells.enumerate() {
                b.append_value(cell.parse::<i64>().map_err(|_| bad(row, cell))?);
            }
            Arc::new(b.finish())
        }
        ColumnKind::Unsigned => {
            let mut b = UInt64Builder::new();
            for (row, cell) in cells.enumerate() {
                b.append_value(cell.parse::<u64>().map_err(|_| bad(row, cell))?);
            }
            Arc::new(b.finish())
        }
        ColumnKind::Float => {
            let mut b = Float64Builder::new();
            for (row, cell) in cells.enumerate() {
                if cell.is_empty() {
                    b.append_null();
                } else {
                    b.append_value(cell.parse::<f64>().map_err(|_| bad(row, cell))?);
                }
            }
            Arc::new(b.finish())
        }
    })
}

/// The Parquet file name beside a CSV file name (`runs.csv` -> `runs.parquet`).
pub fn parquet_name(csv_name: &str) -> String {
    format!("{}.parquet", csv_name.strip_suffix(".csv").unwrap_or(csv_name))
}

/// Writes `csv_bytes` as Parquet to `path` atomically (a temporary file renamed into place).
pub fn write_csv_as_parquet_atomic(path: &Path, csv_bytes: &[u8]) -> io::Result<()> {
    let mut bytes = Vec::new();
    csv_to_parquet(csv_bytes, &mut bytes)?;
    csv_out::write_atomic(path, &bytes)?;
    readable_by_all(path)
}

/// Writes the five tables of `reports` as Parquet into `dir` (`summary.parquet`, ...,
/// `ownership.parquet`). Returns the paths written.
pub fn write_run_parquet(dir: &Path, reports: &[RunReport]) -> io::Result<Vec<PathBuf>> {
    let summaries: Vec<_> = reports.iter().filter_map(|r| r.summary.as_ref()).collect();
    let partitions: Vec<_> = reports.iter().flat_map(|r| &r.partitions).collect();
    let rebalances: Vec<_> = reports.iter().flat_map(|r| &r.rebalances).collect();
    let timeline: Vec<_> = reports.iter().flat_map(|r| &r.timeline).collect();
    let tables = [
        (SUMMARY_CSV, csv_out::to_csv_bytes(&summaries)?),
        (PARTITIONS_CSV, csv_out::to_csv_bytes(&partitions)?),
        (REBALANCES_CSV, csv_out::to_csv_bytes(&rebalances)?),
        (TIMELINE_CSV, csv_out::to_csv_bytes(&timeline)?),
    ];
    let mut written = Vec::new();
    for (name, bytes) in tables {
        let path = dir.join(parquet_name(name));
        write_csv_as_parquet_atomic(&path, &bytes)?;
        written.push(path);
    }
    let path = dir.join(parquet_name(OWNERSHIP_CSV));
    let tmp = tempfile::NamedTempFile::new_in(dir)?;
    write_ownership_parquet(io::BufWriter::new(tmp.reopen()?), reports)?;
    tmp.persist(&path).map_err(|e| e.error)?;
    written.push(path);
    for path in &written {
        readable_by_all(path)?;
    }
    Ok(written)
}

/// Outputs are ordinary files (0644), not the temporary files' owner-only mode.
#[cfg(unix)]
fn readable_by_all(path: &Path) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644))
}

#[cfg(not(unix))]
fn readable_by_all(_path: &Path) -> io::Result<()> {
    Ok(())
}

/// The ownership rows of all `reports` as Parquet (the columns of `ownership.csv`), written
/// batch by batch.
pub fn write_ownership_parquet(out: impl Write + Send, reports: &[RunReport]) -> io::Result<()> {
    let kinds = [
        ColumnKind::Text,
        ColumnKind::Text,
        ColumnKind::Boolean,
        ColumnKind::Text,
        ColumnKind::Integer,
        ColumnKind::Float,
        ColumnKind::Float,
        ColumnKind::Text,
        ColumnKind::Text,
    ];
    let fields: Vec<Field> = OwnershipRow::COLUMNS
        .iter()
        .zip(kinds)
        .map(|(name, kind)| Field::new(*name, kind.data_type(), false))
        .collect();
    let schema = Arc::new(Schema::new(fields));
    let mut writer =
        ArrowWriter::try_new(out, Arc::clone(&schema), Some(properties())).map_err(to_io)?;
    let mut batch = OwnershipBatch::default();
    for row in reports.iter().flat_map(|r| r.ownership.iter()) {
        batch.push(&row);
        if batch.rows == OWNERSHIP_BATCH_ROWS {
            writer.write(&batch.finish(&schema)?).map_err(to_io)?;
        }
    }
    if batch.rows > 0 {
        writer.write(&batch.finish(&schema)?).map_err(to_io)?;
    }
    writer.close().map_err(to_io)?;
    Ok(())
}

/// Builders of one batch of ownership rows.
#[derive(Default)]
struct OwnershipBatch {
    rows: usize,
    protocol: StringBuilder,
    assignor: StringBuilder,
    static_membership: BooleanBuilder,
    topic: StringBuilder,
    partition: Int64Builder,
    start_s: Float64Builder,
    end_s: Float64Builder,
    owner: StringBuilder,
    state: StringBuilder,
}

impl OwnershipBatch {
    fn push(&mut self, row: &metrics::OwnershipRowRef<'_>) {
        self.protocol.append_value(row.protocol);
        self.assignor.append_value(row.assignor);
        self.static_membership.append_value(row.static_membership);
        self.topic.append_value(row.topic);
        self.partition.append_value(i64::from(row.partition));
        self.start_s.append_value(row.start_s);
        self.end_s.append_value(row.end_s);
        self.owner.append_value(row.owner);
        self.state.append_value(row.state);
        self.rows += 1;
    }

    /// The batch so far (the builders start again empty).
    fn finish(&mut self, schema: &Arc<Schema>) -> io::Result<RecordBatch> {
        self.rows = 0;
        let columns: Vec<ArrayRef> = vec![
            Arc::new(self.protocol.finish()),
            Arc::new(self.assignor.finish()),
            Arc::new(self.static_membership.finish()),
            Arc::new(self.topic.finish()),
            Arc::new(self.partition.finish()),
            Arc::new(self.start_s.finish()),
            Arc::new(self.end_s.finish()),
            Arc::new(self.owner.finish()),
            Arc::new(self.state.finish()),
        ];
        RecordBatch::try_new(Arc::clone(schema), columns).map_err(to_io)
    }
}
