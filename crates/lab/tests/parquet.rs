//! `--format parquet` (report::parquet_out): every table of a run read back with the parquet
//! crate holds the value of every cell of the CSV file of the same run, with the column types
//! of the module doc; a sweep's table converts with its empty cells null.

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type, UInt64Type};
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use report::parquet_out::{csv_to_parquet, write_run_parquet};
use std::path::Path;

fn batches(path: &Path) -> Vec<RecordBatch> {
    let file = std::fs::File::open(path).unwrap();
    let reader = ParquetRecordBatchReaderBuilder::try_new(file).unwrap().build().unwrap();
    reader.collect::<Result<Vec<_>, _>>().unwrap()
}

/// Every cell of the CSV at `csv` equals the Parquet file's value; returns the column types.
fn assert_same_table(csv: &Path, parquet: &Path) -> Vec<(String, DataType)> {
    let mut reader = csv::Reader::from_path(csv).unwrap();
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let batches = batches(parquet);
    let schema = batches.first().map(|b| b.schema()).expect("a batch");
    let names: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
    assert_eq!(names, header, "{}", parquet.display());
    let mut row = 0;
    for batch in &batches {
        for r in 0..batch.num_rows() {
            for (c, column) in batch.columns().iter().enumerate() {
                let cell = &rows[row][c];
                let at = || format!("{} row {row} column {}", csv.display(), header[c]);
                match column.data_type() {
                    DataType::Int64 => {
                        let v = column.as_primitive::<Int64Type>().value(r);
                        assert_eq!(cell.parse::<i64>().unwrap(), v, "{}", at());
                    }
                    DataType::UInt64 => {
                        let v = column.as_primitive::<UInt64Type>().value(r);
                        assert_eq!(cell.parse::<u64>().unwrap(), v, "{}", at());
                    }
                    DataType::Float64 if column.is_null(r) => assert_eq!(cell, "", "{}", at()),
                    DataType::Float64 => {
                        let v = column.as_primitive::<Float64Type>().value(r);
                        assert_eq!(cell.parse::<f64>().unwrap().to_bits(), v.to_bits(), "{}", at());
                    }
                    DataType::Boolean => {
                        let v = column.as_boolean().value(r);
                        assert_eq!(cell.parse::<bool>().unwrap(), v, "{}", at());
                    }
                    DataType::Utf8 => {
                        assert_eq!(column.as_string::<i32>().value(r), cell, "{}", at())
                    }
                    other => panic!("unexpected type {other} at {}", at()),
                }
            }
            row += 1;
        }
    }
    assert_eq!(row, rows.len(), "rows of {}", parquet.display());
    schema.fields().iter().map(|f| (f.name().clone(), f.data_type().clone())).collect()
}

fn type_of(types: &[(String, DataType)], column: &str) -> DataType {
    types.iter().find(|(n, _)| n == column).map(|(_, t)| t.clone()).expect(column)
}

#[test]
fn every_table_of_a_run_reads_back_equal_to_its_csv() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../sims/crash.toml");
    let scenario = scenario::load(&path).unwrap();
    let reports: Vec<_> = scenario
        .protocols
        .iter()
        .map(|p| lab::run_protocol(&scenario, *p, scenario.seed).unwrap())
        .collect();
    let dir = tempfile::tempdir().unwrap();
    report::csv_out::write_run_outputs(dir.path(), &reports).unwrap();
    let written = write_run_parquet(dir.path(), &reports).unwrap();
    assert_eq!(written.len(), 5);
    let table = |name: &str| {
        assert_same_table(
            &dir.path().join(format!("{name}.csv")),
            &dir.path().join(format!("{name}.parquet")),
        )
    };
    let summary = table("summary");
    assert_eq!(type_of(&summary, "protocol"), DataType::Utf8);
    assert_eq!(type_of(&summary, "static_membership"), DataType::Boolean);
    assert_eq!(type_of(&summary, "seed"), DataType::UInt64);
    assert_eq!(type_of(&summary, "records_produced"), DataType::Int64);
    assert_eq!(type_of(&summary, "duration_s"), DataType::Float64);
    assert_eq!(type_of(&summary, "downtime_episode_ms_p99"), DataType::Float64);
    let partitions = table("partitions");
    assert_eq!(type_of(&partitions, "partition"), DataType::Int64);
    assert_eq!(type_of(&partitions, "downtime_s"), DataType::Float64);
    let rebalances = table("rebalances");
    assert_eq!(type_of(&rebalances, "trigger"), DataType::Utf8);
    assert_eq!(type_of(&rebalances, "duration_ms"), DataType::Float64);
    table("timeline");
    let ownership = table("ownership");
    assert_eq!(type_of(&ownership, "start_s"), DataType::Float64);
    assert_eq!(type_of(&ownership, "owner"), DataType::Utf8);
    let rows: usize = reports.iter().map(|r| r.ownership.len()).sum();
    let read: usize =
        batches(&dir.path().join("ownership.parquet")).iter().map(|b| b.num_rows()).sum();
    assert_eq!(read, rows);
}

#[test]
fn a_sweep_table_keeps_its_grid_types_and_empty_cells_are_null() {
    let text = "cell,consumer.config.session.timeout.ms,static_membership,runs,records_lost_mean,records_lost_std,label,seed\n\
                c000,10000,false,1,3,,a,1\n\
                c001,30000,true,2,2.5,0.5,b,11622622109843216886\n";
    let dir = tempfile::tempdir().unwrap();
    let (csv_path, parquet_path) = (dir.path().join("t.csv"), dir.path().join("t.parquet"));
    std::fs::write(&csv_path, text).unwrap();
    let mut bytes = Vec::new();
    csv_to_parquet(text.as_bytes(), &mut bytes).unwrap();
    std::fs::write(&parquet_path, bytes).unwrap();
    let types = assert_same_table(&csv_path, &parquet_path);
    assert_eq!(type_of(&types, "consumer.config.session.timeout.ms"), DataType::Int64);
    assert_eq!(type_of(&types, "records_lost_mean"), DataType::Float64, "a mean of 3 is a float");
    assert_eq!(type_of(&types, "runs"), DataType::Int64);
    assert_eq!(type_of(&types, "label"), DataType::Utf8);
    assert_eq!(type_of(&types, "seed"), DataType::UInt64, "run seeds use all 64 bits");
    let batch = &batches(&parquet_path)[0];
    assert!(batch.column(5).is_null(0), "an empty std is null");
    let bad = "runs\nx\n";
    let e = csv_to_parquet(bad.as_bytes(), Vec::new()).unwrap_err();
    assert!(e.to_string().contains("column `runs`, row 1: `x`"), "{e}");
}
