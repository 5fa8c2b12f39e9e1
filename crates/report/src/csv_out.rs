//! Writes and reads the run output CSV files. Every file is written to a temporary file in the
//! same folder and renamed into place, so a reader never sees half a file and an interrupted
//! run leaves no partial output.

use metrics::{
    Columns, OwnershipLog, OwnershipLogBuilder, OwnershipRow, PartitionRow, RebalanceRow,
    RunReport, SummaryRow, TimelineRow,
};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::collections::BTreeMap;
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
/// ownership timeline can hold tens of millions of rows, written from its compact log as
/// borrowed rows without allocating).
pub fn write_run_outputs(dir: &Path, reports: &[RunReport]) -> io::Result<()> {
    let summaries = reports.iter().filter_map(|r| r.summary.as_ref());
    write_rows_atomic(&dir.join(SUMMARY_CSV), summaries)?;
    write_rows_atomic(&dir.join(PARTITIONS_CSV), reports.iter().flat_map(|r| &r.partitions))?;
    write_rows_atomic(&dir.join(REBALANCES_CSV), reports.iter().flat_map(|r| &r.rebalances))?;
    write_rows_atomic(&dir.join(OWNERSHIP_CSV), reports.iter().flat_map(|r| r.ownership.iter()))?;
    write_rows_atomic(&dir.join(TIMELINE_CSV), reports.iter().flat_map(|r| &r.timeline))?;
    Ok(())
}

/// Writes `rows` (rows, references to rows or borrowed rows) as CSV with a header line to
/// `path` atomically (as [`write_atomic`]), serialising them one by one into the temporary file.
pub fn write_rows_atomic<T: Serialize + Columns>(
    path: &Path,
    rows: impl Iterator<Item = T>,
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

/// The labels that match rows to a summary row: protocol, assignor, static membership.
type RunKey = (String, String, bool);

/// Reads `ownership.csv` into one compact log per key in `keys`, streaming (rows of other keys
/// are skipped, as [`read_run_outputs`] matches every file's rows to the summaries).
fn read_ownership(path: &Path, keys: &[RunKey]) -> io::Result<BTreeMap<RunKey, OwnershipLog>> {
    let error = |e: &dyn std::fmt::Display| io::Error::other(format!("{}: {e}", path.display()));
    let mut builders: BTreeMap<RunKey, OwnershipLogBuilder> =
        keys.iter().map(|k| (k.clone(), OwnershipLogBuilder::default())).collect();
    let mut reader = csv::Reader::from_path(path).map_err(|e| error(&e))?;
    for row in reader.deserialize::<OwnershipRow>() {
        let row = row.map_err(|e| error(&e))?;
        // Looked up without allocating a key per row.
        let builder = builders.iter_mut().find(|((p, a, s), _)| {
            (p.as_str(), a.as_str(), *s)
                == (row.protocol.as_str(), row.assignor.as_str(), row.static_membership)
        });
        if let Some((_, builder)) = builder {
            builder.push(row).map_err(|e| error(&e))?;
        }
    }
    Ok(builders.into_iter().map(|(k, b)| (k, b.finish())).collect())
}

/// Reads back everything [`write_run_outputs`] wrote, grouped into one report per summary row
/// (matched by protocol, assignor and static membership). `ownership.csv` is streamed into
/// compact logs; a file whose rows cannot form one (see [`metrics::OwnershipLogError`]) is an
/// error naming the file.
pub fn read_run_outputs(dir: &Path) -> io::Result<Vec<RunReport>> {
    let summaries: Vec<SummaryRow> = read_rows(&dir.join(SUMMARY_CSV))?;
    let partitions: Vec<PartitionRow> = read_rows(&dir.join(PARTITIONS_CSV))?;
    let rebalances: Vec<RebalanceRow> = read_rows(&dir.join(REBALANCES_CSV))?;
    let keys: Vec<RunKey> = summaries
        .iter()
        .map(|s| (s.protocol.clone(), s.assignor.clone(), s.static_membership))
        .collect();
    let mut ownership = read_ownership(&dir.join(OWNERSHIP_CSV), &keys)?;
    let timeline: Vec<TimelineRow> = read_rows(&dir.join(TIMELINE_CSV))?;
    let reports = summaries
        .into_iter()
        .enumerate()
        .map(|(i, s)| {
            let key = (s.protocol.clone(), s.assignor.clone(), s.static_membership);
            // The last summary of a key takes its log; an earlier duplicate gets a copy.
            let log = if keys[i + 1..].contains(&key) {
                ownership.get(&key).cloned()
            } else {
                ownership.remove(&key)
            };
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
                ownership: log.unwrap_or_default(),
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
    use crate::test_rows::own;

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

    /// Borrowed rows from a log serialise to exactly the bytes of the owned rows.
    #[test]
    fn ownership_log_writes_the_bytes_of_its_rows() {
        let rows = vec![
            own(0, 0.0, 0.1, "c0", "consuming"),
            own(0, 0.1, 1.000_000_001, "", "stop-the-world"),
            own(1, 0.0, 1e-9, "c1,\"odd\"", "idle"),
        ];
        let owned = to_csv_bytes(&rows).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("o.csv");
        let log = OwnershipLog::from_rows(rows).unwrap();
        write_rows_atomic(&path, log.iter()).unwrap();
        assert_eq!(String::from_utf8(std::fs::read(&path).unwrap()).unwrap(), {
            String::from_utf8(owned).unwrap()
        });
    }

    #[test]
    fn ownership_rows_are_split_by_run_and_unknown_states_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let eager = RunReport {
            summary: Some(sample_summary()),
            ownership: OwnershipLog::from_rows(vec![
                own(0, 0.0, 2.5, "c0", "consuming"),
                own(0, 2.5, 3.0, "", "frozen-by-hand"),
            ])
            .unwrap(),
            ..RunReport::default()
        };
        let mut coop_summary = sample_summary();
        coop_summary.protocol = "cooperative".into();
        let mut coop_row = own(1, 0.0, 3.0, "c1", "revoked");
        coop_row.protocol = "cooperative".into();
        let coop = RunReport {
            summary: Some(coop_summary),
            ownership: OwnershipLog::from_rows(vec![coop_row]).unwrap(),
            ..RunReport::default()
        };
        let reports = vec![eager, coop];
        write_run_outputs(dir.path(), &reports).unwrap();
        let back = read_run_outputs(dir.path()).unwrap();
        assert_eq!(back, reports);
        assert_eq!(back[0].ownership.iter().last().unwrap().state, "frozen-by-hand");
        assert_eq!(back[1].ownership.len(), 1);
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
