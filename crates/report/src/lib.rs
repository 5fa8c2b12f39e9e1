//! Reports: the CSV files of DESIGN section 7 (written atomically) and the charts.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod charts;
pub mod csv_out;
mod direct_write;
mod row_buffer;
pub mod run_folder;
pub mod sweep_charts;
#[cfg(test)]
mod test_rows;
