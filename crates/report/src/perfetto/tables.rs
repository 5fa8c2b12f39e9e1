//! The tables of a run folder read row by row for a trace ([`super::files`]), from CSV or
//! from Parquet alike: each row comes as a `csv::StringRecord` with the table's header, the
//! Parquet values written as the CSV writes them (a float as its shortest round-trip text,
//! an empty cell for a null), so one typed reading (serde, by column name) serves both. Each
//! row carries its place for messages: the CSV line, or the Parquet row (1 for the first).
//! Nothing is kept: a table of tens of millions of rows streams through.

use super::files::FileTraceError;
use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type, UInt64Type};
use arrow_array::{Array, ArrayRef};
use arrow_schema::DataType;
use csv::StringRecord;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use serde::Deserialize;
use std::fmt;
use std::path::{Path, PathBuf};

/// Where the tables are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `<table>.csv`.
    Csv,
    /// `<table>.parquet` (the run wrote no CSV).
    Parquet,
}

/// Where a row is in its file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// A CSV line (the header is line 1).
    Line(u64),
    /// A Parquet row (the first is 1).
    Row(u64),
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Place::Line(n) => write!(f, "line {n}"),
            Place::Row(n) => write!(f, "row {n}"),
        }
    }
}

/// One row of a table being read.
pub(super) struct Row<'a> {
    path: &'a Path,
    headers: &'a StringRecord,
    record: &'a StringRecord,
    /// Where it is.
    pub(super) place: Place,
}

impl<'a> Row<'a> {
    /// The row as a `T`, by column name (extra columns are ignored).
    pub(super) fn get<T: Deserialize<'a>>(&self) -> Result<T, FileTraceError> {
        self.record.deserialize(Some(self.headers)).map_err(|e| {
            let what = match e.kind() {
                csv::ErrorKind::Deserialize { err, .. } => {
                    let column = err.field().and_then(|i| self.headers.get(i as usize));
                    match column {
                        Some(column) => format!("column `{column}`: {}", err.kind()),
                        None => err.kind().to_string(),
                    }
                }
                _ => e.to_string(),
            };
            self.malformed(what)
        })
    }

    /// An error naming this row.
    pub(super) fn malformed(&self, what: impl Into<String>) -> FileTraceError {
        FileTraceError::Malformed {
            path: self.path.to_path_buf(),
            place: Some(self.place),
            what: what.into(),
        }
    }
}

/// Calls `each` with every row of the table at `path`, in order; stops at its first error.
pub(super) fn for_each_row(
    path: &Path,
    format: Format,
    each: &mut dyn FnMut(&Row<'_>) -> Result<(), FileTraceError>,
) -> Result<(), FileTraceError> {
    match format {
        Format::Csv => csv_rows(path, each),
        Format::Parquet => parquet_rows(path, each),
    }
}

fn io_error(path: &Path, error: std::io::Error) -> FileTraceError {
    FileTraceError::Io { path: path.to_path_buf(), error }
}

fn whole_file(path: &Path, what: impl Into<String>) -> FileTraceError {
    FileTraceError::Malformed { path: path.to_path_buf(), place: None, what: what.into() }
}

fn csv_rows(
    path: &Path,
    each: &mut dyn FnMut(&Row<'_>) -> Result<(), FileTraceError>,
) -> Result<(), FileTraceError> {
    let file = std::fs::File::open(path).map_err(|e| io_error(path, e))?;
    let mut reader = csv::Reader::from_reader(std::io::BufReader::with_capacity(1 << 20, file));
    let headers = reader.headers().map_err(|e| csv_error(path, e))?.clone();
    let mut record = StringRecord::new();
    loop {
        match reader.read_record(&mut record) {
            Ok(false) => return Ok(()),
            Ok(true) => {
                let line = record.position().map_or(0, |p| p.line());
                let row =
                    Row { path, headers: &headers, record: &record, place: Place::Line(line) };
                each(&row)?;
            }
            Err(e) => return Err(csv_error(path, e)),
        }
    }
}

/// A CSV reading error, naming its line where it has one.
fn csv_error(path: &Path, e: csv::Error) -> FileTraceError {
    let place = e.position().map(|p| Place::Line(p.line()));
    let what = match e.kind() {
        csv::ErrorKind::UnequalLengths { expected_len, len, .. } => {
            format!("{len} fields where the rows before have {expected_len}")
        }
        csv::ErrorKind::Utf8 { .. } => "not UTF-8 text".to_string(),
        _ => e.to_string(),
    };
    if let csv::ErrorKind::Io(_) = e.kind() {
        return io_error(path, e.into());
    }
    FileTraceError::Malformed { path: path.to_path_buf(), place, what }
}

fn parquet_rows(
    path: &Path,
    each: &mut dyn FnMut(&Row<'_>) -> Result<(), FileTraceError>,
) -> Result<(), FileTraceError> {
    let file = std::fs::File::open(path).map_err(|e| io_error(path, e))?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file)
        .map_err(|e| whole_file(path, format!("not a Parquet table: {e}")))?;
    let headers: StringRecord = builder.schema().fields().iter().map(|f| f.name()).collect();
    let reader =
        builder.build().map_err(|e| whole_file(path, format!("not a Parquet table: {e}")))?;
    let mut record = StringRecord::new();
    let mut number = 0u64;
    for batch in reader {
        let batch = batch.map_err(|e| whole_file(path, format!("cannot read: {e}")))?;
        let columns: Vec<(&str, &ArrayRef)> = headers.iter().zip(batch.columns()).collect();
        for r in 0..batch.num_rows() {
            number += 1;
            record.clear();
            for (name, column) in &columns {
                let cell = cell_text(column, r).ok_or_else(|| {
                    let kind = column.data_type();
                    let what = format!("column `{name}` has type {kind}");
                    FileTraceError::Malformed {
                        path: path.to_path_buf(),
                        place: Some(Place::Row(number)),
                        what: format!("{what}; a run writes text, integers, floats and booleans"),
                    }
                })?;
                record.push_field(&cell);
            }
            let row = Row { path, headers: &headers, record: &record, place: Place::Row(number) };
            each(&row)?;
        }
    }
    Ok(())
}

/// Row `r` of `column` as the CSV writes it (`None`: a type no run writes).
fn cell_text(column: &ArrayRef, r: usize) -> Option<String> {
    if column.is_null(r) {
        return Some(String::new());
    }
    Some(match column.data_type() {
        DataType::Utf8 => column.as_string::<i32>().value(r).to_string(),
        DataType::LargeUtf8 => column.as_string::<i64>().value(r).to_string(),
        DataType::Boolean => column.as_boolean().value(r).to_string(),
        DataType::Int64 => column.as_primitive::<Int64Type>().value(r).to_string(),
        DataType::UInt64 => column.as_primitive::<UInt64Type>().value(r).to_string(),
        DataType::Float64 => {
            ryu::Buffer::new().format(column.as_primitive::<Float64Type>().value(r)).to_string()
        }
        _ => return None,
    })
}

/// The file of table `csv_name` (`ownership.csv`) in `dir` in `format`.
pub(super) fn table_path(dir: &Path, csv_name: &str, format: Format) -> PathBuf {
    match format {
        Format::Csv => dir.join(csv_name),
        Format::Parquet => dir.join(crate::parquet_out::parquet_name(csv_name)),
    }
}
