//! Writes and reads the run output CSV files. Every file is written to a temporary file in the
//! same folder and renamed into place, so a reader never sees half a file and an interrupted
//! run leaves no partial output.

use metrics::{
    Columns, OwnershipRow, PartitionRow, RebalanceRow, RunReport, SummaryRow, TimelineRow,
};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::io::{self, Write};
use std::path::Path;

/// File names of the run outputs (DESIGN section 7).
pub const SUMMARY_CSV: &str = "summary.csv";
/// Per-partition totals.
pub const PARTITIONS_CSV: &str = "partitions.csv";
/// One row per rebalance.
pub const REBALANCES_CSV: &str = "rebalances.csv";
/// Ownership intervals.
pub const OWNERSHIP_CSV: &str = "ownership.csv";
/// Sampled time series.
pub const TIMELINE_CSV: &str = "timeline.csv";

/// Writes `bytes` to `path` atomically: a temporary file in the same folder, synced, renamed.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    set_readable_by_all(tmp.as_file())?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Temporary files are created owner-only (0600); outputs are ordinary files (0644).
#[cfg(unix)]
fn set_readable_by_all(file: &std::fs::File) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    file.set_permissions(std::fs::Permissions::from_mode(0o644))
}

#[cfg(not(unix))]
fn set_readable_by_all(_file: &std::fs::File) -> io::Result<()> {
    Ok(())
}

/// Serialises rows as CSV with a header line (the header is written even with no rows).
pub fn to_csv_bytes<T: Serialize + Columns>(rows: &[T]) -> io::Result<Vec<u8>> {
    let mut writer = csv::WriterBuilder::new().has_headers(false).from_writer(Vec::new());
    writer.write_record(T::COLUMNS)?;
    for row in rows {
        writer.serialize(row)?;
    }
    writer.into_inner().map_err(|e| io::Error::other(e.to_string()))
}

/// Writes the five CSV files of a `run` for all its protocol runs into `dir`. Rows are
/// streamed into each file (no copy of a report's rows, no whole file in memory: a large run's
/// ownership timeline can hold tens of millions of rows).
pub fn write_run_outputs(dir: &Path, reports: &[RunReport]) -> io::Result<()> {
    let summaries = reports.iter().filter_map(|r| r.summary.as_ref());
    write_rows_atomic(&dir.join(SUMMARY_CSV), summaries)?;
    write_rows_atomic(&dir.join(PARTITIONS_CSV), reports.iter().flat_map(|r| &r.partitions))?;
    write_rows_atomic(&dir.join(REBALANCES_CSV), reports.iter().flat_map(|r| &r.rebalances))?;
    write_rows_atomic(&dir.join(OWNERSHIP_CSV), reports.iter().flat_map(|r| &r.ownership))?;
    write_rows_atomic(&dir.join(TIMELINE_CSV), reports.iter().flat_map(|r| &r.timeline))?;
    Ok(())
}

/// Writes `rows` as CSV with a header line to `path` atomically (as [`write_atomic`]),
/// serialising them one by one into the temporary file.
pub fn write_rows_atomic<'a, T: Serialize + Columns + 'a>(
    path: &Path,
    rows: impl Iterator<Item = &'a T>,
) -> io::Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let tmp = tempfile::NamedTempFile::new_in(dir)?;
    let buffered = io::BufWriter::with_capacity(1 << 20, tmp);
    let mut writer = csv::WriterBuilder::new().has_headers(false).from_writer(buffered);
    writer.write_record(T::COLUMNS)?;
    for row in rows {
        writer.serialize(row)?;
    }
    let buffered = writer.into_inner().map_err(|e| io::Error::other(e.to_string()))?;
    let tmp = buffered.into_inner().map_err(|e| e.into_error())?;
    tmp.as_file().sync_all()?;
    set_readable_by_all(tmp.as_file())?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Reads rows of type `T` from a CSV file with a header.
pub fn read_rows<T: DeserializeOwned>(path: &Path) -> io::Result<Vec<T>> {
    let mut reader = csv::Reader::from_path(path)
        .map_err(|e| io::Error::other(format!("{}: {e}", path.display())))?;
    reader
        .deserialize()
        .collect::<Result<Vec<T>, _>>()
        .map_err(|e| io::Error::other(format!("{}: {e}", path.display())))
}

/// Reads back everything [`write_run_outputs`] wrote, grouped into one report per summary row
/// (matched by protocol, assignor and static membership).
pub fn read_run_outputs(dir: &Path) -> io::Result<Vec<RunReport>> {
    let summaries: Vec<SummaryRow> = read_rows(&dir.join(SUMMARY_CSV))?;
    let partitions: Vec<PartitionRow> = read_rows(&dir.join(PARTITIONS_CSV))?;
    let rebalances: Vec<RebalanceRow> = read_rows(&dir.join(REBALANCES_CSV))?;
    let ownership: Vec<OwnershipRow> = read_rows(&dir.join(OWNERSHIP_CSV))?;
    let timeline: Vec<TimelineRow> = read_rows(&dir.join(TIMELINE_CSV))?;
    let reports = summaries
        .into_iter()
        .map(|s| {
            let key = (s.protocol.clone(), s.assignor.clone(), s.static_membership);
            let same =
                |p: &str, a: &str, st: bool| (p, a, st) == (key.0.as_str(), key.1.as_str(), key.2);
            RunReport {
                partitions: partitions
                    .iter()
                    .filter(|r| same(&r.protocol, &r.assignor, r.static_membership))
                    .cloned()
                    .collect(),
                rebalances: rebalances
                    .iter()
                    .filter(|r| same(&r.protocol, &r.assignor, r.static_membership))
                    .cloned()
                    .collect(),
                ownership: ownership
                    .iter()
                    .filter(|r| same(&r.protocol, &r.assignor, r.static_membership))
                    .cloned()
                    .collect(),
                timeline: timeline
                    .iter()
                    .filter(|r| same(&r.protocol, &r.assignor, r.static_membership))
                    .cloned()
                    .collect(),
                summary: Some(s),
            }
        })
        .collect();
    Ok(reports)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample_summary() -> SummaryRow {
        SummaryRow {
            scenario: "s".into(),
            protocol: "eager".into(),
            assignor: "range".into(),
            static_membership: false,
            seed: 1,
            duration_s: 60.0,
            partitions: 3,
            records_produced: 10,
            records_processed: 12,
            records_reprocessed: 2,
            records_lost: 0,
            final_lag: 0,
            downtime_partition_s: 1.5,
            downtime_episode_ms_p50: 500.0,
            downtime_episode_ms_p99: 700.0,
            downtime_episode_ms_max: 700.0,
            stop_the_world_s: 0.25,
            rebalances: 1,
            rebalance_ms_p50: 30.0,
            rebalance_ms_max: 30.0,
            partitions_moved: 2,
            e2e_latency_ms_p50: 1.0,
            e2e_latency_ms_p99: 2.0,
            e2e_latency_ms_max: 3.0,
            events: 99,
        }
    }

    /// The fixed header must be exactly what serde would write for the struct, so the two
    /// cannot drift apart.
    #[test]
    fn fixed_header_matches_serde_header() {
        let mut w = csv::Writer::from_writer(Vec::new());
        w.serialize(sample_summary()).unwrap();
        let serde_bytes = w.into_inner().unwrap();
        let ours = to_csv_bytes(&[sample_summary()]).unwrap();
        assert_eq!(String::from_utf8(ours).unwrap(), String::from_utf8(serde_bytes).unwrap());
    }

    #[test]
    fn empty_rows_still_write_a_header() {
        let bytes = to_csv_bytes::<RebalanceRow>(&[]).unwrap();
        assert_eq!(
            String::from_utf8(bytes).unwrap(),
            "protocol,assignor,static_membership,index,trigger,start_s,end_s,duration_ms,rounds,members,partitions_moved\n"
        );
    }

    #[test]
    fn outputs_round_trip_through_files() {
        let dir = tempfile::tempdir().unwrap();
        let report = RunReport { summary: Some(sample_summary()), ..RunReport::default() };
        write_run_outputs(dir.path(), std::slice::from_ref(&report)).unwrap();
        let back = read_run_outputs(dir.path()).unwrap();
        assert_eq!(back, vec![report]);
    }
}
