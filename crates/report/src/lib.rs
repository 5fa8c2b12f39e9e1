//! Reports: the CSV files of DESIGN section 7 (written atomically), the same tables as
//! Parquet (`--format parquet`), a run's Perfetto trace (`run --trace`, or `trace RUN_DIR`
//! from its files) and the charts.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod charts;
pub mod csv_check;
pub mod csv_out;
mod direct_write;
pub mod parquet_out;
pub mod perfetto;
mod row_buffer;
pub mod run_folder;
pub mod sweep_charts;
#[cfg(test)]
mod test_rows;
