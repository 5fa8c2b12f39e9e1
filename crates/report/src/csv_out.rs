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
/// ownership timeline can hold tens of millions of rows, written from its compact log by
/// [`write_ownership_atomic`] without allocating per row).
pub fn write_run_outputs(dir: &Path, reports: &[RunReport]) -> io::Result<()> {
    let summaries = reports.iter().filter_map(|r| r.summary.as_ref());
    write_rows_atomic(&dir.join(SUMMARY_CSV), summaries)?;
    write_rows_atomic(&dir.join(PARTITIONS_CSV), reports.iter().flat_map(|r| &r.partitions))?;
    write_rows_atomic(&dir.join(REBALANCES_CSV), reports.iter().flat_map(|r| &r.rebalances))?;
    write_ownership_atomic(&dir.join(OWNERSHIP_CSV), reports)?;
    write_rows_atomic(&dir.join(TIMELINE_CSV), reports.iter().flat_map(|r| &r.timeline))?;
    Ok(())
}

/// Writes `rows` (rows, references to rows or borrowed rows) as CSV with a header line to
/// `path` atomically (as [`write_atomic`]), serialising them one by one into the temporary file.
pub fn write_rows_atomic<T: Serialize + Columns>(
    path: &Path,
    rows: impl Iterator<Item = T>,
) -> io::Result<()> {
    write_streamed_atomic(path, |out| {
        let mut writer = csv_writer(out);
        writer.write_record(T::COLUMNS)?;
        for row in rows {
            writer.serialize(row)?;
        }
        writer.flush()
    })
}

/// The configuration of every CSV writer here (csv's defaults: `,`, quotes only where needed,
/// `\n` after each record), with the header written by hand.
fn csv_writer<W: Write>(out: W) -> csv::Writer<W> {
    csv::WriterBuilder::new().has_headers(false).from_writer(out)
}

/// Writes a file atomically (as [`write_atomic`]) whose bytes `write` streams into a buffered
/// temporary file.
fn write_streamed_atomic(
    path: &Path,
    write: impl FnOnce(&mut io::BufWriter<tempfile::NamedTempFile>) -> io::Result<()>,
) -> io::Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let tmp = tempfile::NamedTempFile::new_in(dir)?;
    let mut buffered = io::BufWriter::with_capacity(1 << 20, tmp);
    write(&mut buffered)?;
    let tmp = buffered.into_inner().map_err(|e| e.into_error())?;
    tmp.as_file().sync_all()?;
    set_readable_by_all(tmp.as_file())?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Writes the ownership rows of all `reports` to `path` atomically (as [`write_atomic`]): the
/// bytes [`write_rows_atomic`] writes for `reports.iter().flat_map(|r| r.ownership.iter())`,
/// several times faster (see [`write_ownership_csv`]).
pub fn write_ownership_atomic(path: &Path, reports: &[RunReport]) -> io::Result<()> {
    write_streamed_atomic(path, |out| write_ownership_csv(out, reports))
}

/// Writes `ownership.csv` (header and the ownership rows of all `reports`) to `out`, byte for
/// byte as csv's serde path writes the borrowed rows, but several times faster (a large run
/// has tens of millions of rows). The labels, topic and partition of a segment are rendered
/// once by csv itself; each row adds its times, formatted as csv's serde serializer formats an
/// `f64` (`ryu::Buffer::format`, csv 1.4 `serializer.rs`), and its owner and state, copied
/// when csv would not quote them and rendered by csv otherwise.
pub fn write_ownership_csv(mut out: impl Write, reports: &[RunReport]) -> io::Result<()> {
    // The header and the rows are appended to `buf`, which goes to `out` in chunks of about
    // `CHUNK` bytes.
    const CHUNK: usize = 1 << 20;
    let mut header = csv_writer(Vec::with_capacity(CHUNK + (1 << 10)));
    header.write_record(OwnershipRow::COLUMNS)?;
    let mut buf = header.into_inner().map_err(|e| io::Error::other(e.to_string()))?;
    let mut times = TimeText::default();
    for log in reports.iter().map(|r| &r.ownership) {
        for segment in log.segments() {
            let mut rows = segment.iter().peekable();
            let Some(first) = rows.peek() else { continue };
            let prefix = segment_prefix(first)?;
            for row in rows {
                buf.extend_from_slice(&prefix);
                times.push_start(&mut buf, row.start_s);
                buf.push(b',');
                times.push_end(&mut buf, row.end_s);
                buf.push(b',');
                push_field(&mut buf, row.owner)?;
                buf.push(b',');
                push_field(&mut buf, row.state)?;
                buf.push(b'\n');
                if buf.len() >= CHUNK {
                    out.write_all(&buf)?;
                    buf.clear();
                }
            }
        }
    }
    out.write_all(&buf)
}

/// Formats times as csv's serde serializer does (`ryu::Buffer::format`), remembering the text
/// of the last end time: a row usually starts where the one before it ended, and the same bits
/// format to the same text, so most start times are copied instead of formatted again.
#[derive(Default)]
struct TimeText {
    ryu: ryu::Buffer,
    /// The bits of the last end time and its text (`None` before the first row).
    last_end: Option<(u64, Vec<u8>)>,
}

impl TimeText {
    /// Appends the text of a start time to `buf`.
    fn push_start(&mut self, buf: &mut Vec<u8>, start_s: f64) {
        match &self.last_end {
            Some((bits, text)) if *bits == start_s.to_bits() => buf.extend_from_slice(text),
            _ => buf.extend_from_slice(self.ryu.format(start_s).as_bytes()),
        }
    }

    /// Appends the text of an end time to `buf` and remembers it.
    fn push_end(&mut self, buf: &mut Vec<u8>, end_s: f64) {
        let text = self.ryu.format(end_s).as_bytes();
        buf.extend_from_slice(text);
        let (bits, last) = self.last_end.get_or_insert_with(|| (0, Vec::new()));
        *bits = end_s.to_bits();
        last.clear();
        last.extend_from_slice(text);
    }
}

/// The bytes csv writes for the first five columns of `row` and the delimiter after them:
/// csv serialises the five and a sixth field `x` (no lone empty field can occur), and the `x`
/// and the terminator are cut off.
fn segment_prefix(row: &metrics::OwnershipRowRef<'_>) -> io::Result<Vec<u8>> {
    let mut writer = csv_writer(Vec::new());
    writer.serialize((
        row.protocol,
        row.assignor,
        row.static_membership,
        row.topic,
        row.partition,
        "x",
    ))?;
    let bytes = writer.into_inner().map_err(|e| io::Error::other(e.to_string()))?;
    bytes
        .strip_suffix(b"x\n")
        .map(<[u8]>::to_vec)
        .ok_or_else(|| io::Error::other("csv wrote an unexpected record terminator"))
}

/// Appends `field` as csv writes it inside a record of several fields: a field of bytes csv
/// never quotes is copied (a conservative set: csv quotes only fields holding `,`, `"`, `\r`
/// or `\n`), any other is rendered by csv ([`push_rendered_field`]).
#[inline]
fn push_field(buf: &mut Vec<u8>, field: &str) -> io::Result<()> {
    if field.bytes().all(|b| b.is_ascii_alphanumeric() || b"._:/@+-".contains(&b)) {
        buf.extend_from_slice(field.as_bytes());
        Ok(())
    } else {
        push_rendered_field(buf, field)
    }
}

/// Appends `field` as csv writes it inside a record of several fields: csv writes a record of
/// a field `x` and `field`, and the `x`, the delimiter and the terminator are cut off.
#[cold]
#[inline(never)]
fn push_rendered_field(buf: &mut Vec<u8>, field: &str) -> io::Result<()> {
    let mut writer = csv_writer(Vec::new());
    writer.write_record(["x", field])?;
    let bytes = writer.into_inner().map_err(|e| io::Error::other(e.to_string()))?;
    let rendered = bytes
        .strip_prefix(b"x,")
        .and_then(|b| b.strip_suffix(b"\n"))
        .ok_or_else(|| io::Error::other("csv wrote an unexpected record"))?;
    buf.extend_from_slice(rendered);
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

    /// The bytes of `reports`' ownership rows written by `write_ownership_atomic` and by the
    /// serde path (`write_rows_atomic` on the borrowed rows), as text.
    fn both_ownership_writers(reports: &[RunReport]) -> (String, String) {
        let dir = tempfile::tempdir().unwrap();
        let (fast, serde) = (dir.path().join("fast.csv"), dir.path().join("serde.csv"));
        write_ownership_atomic(&fast, reports).unwrap();
        write_rows_atomic(&serde, reports.iter().flat_map(|r| r.ownership.iter())).unwrap();
        let text = |p: &Path| String::from_utf8(std::fs::read(p).unwrap()).unwrap();
        (text(&fast), text(&serde))
    }

    /// A report holding only the ownership rows `rows`.
    fn ownership_report(rows: Vec<OwnershipRow>) -> RunReport {
        RunReport { ownership: OwnershipLog::from_rows(rows).unwrap(), ..RunReport::default() }
    }

    /// The fast ownership writer writes the serde path's bytes, for fields csv must quote,
    /// empty owners, both static values, awkward times and two protocol runs in one file.
    #[test]
    fn fast_ownership_writer_writes_the_serde_bytes() {
        let on = |topic: &str, mut row: OwnershipRow| {
            row.topic = topic.into();
            row
        };
        let eager = ownership_report(vec![
            on("t,1", own(0, 0.0, 5.0, "c0", "consuming")),
            on("t,1", own(0, 5.0, 123_456.789, "", "stop-the-world")),
            on("t,1", own(0, 123_456.789, 1e21, "c\"1", "frozen by hand")),
            on("t,1", own(0, 1e21, 1e21, "c2", "odd,state")),
            own(1, 0.0, 1e-7, "c-0.x:y/z@h+1", "idle"),
        ]);
        let mut coop_rows = vec![own(2, 0.0, 0.5, "c3", "revoked"), own(2, 0.5, 2.0, "", "idle")];
        for row in &mut coop_rows {
            (row.protocol, row.assignor, row.static_membership) =
                ("cooperative".into(), "sticky".into(), true);
        }
        let reports = [eager, RunReport::default(), ownership_report(coop_rows)];
        let (fast, serde) = both_ownership_writers(&reports);
        assert_eq!(fast, serde);
        // Derived by hand from csv's rules (quote a field holding `,`, `"`, CR or LF, doubling
        // its quotes; a space needs none; an empty field among others is written empty) and
        // ryu's shortest round-trip format (5.0 -> `5.0`, 1e-7 -> `1e-7`, 1e21 -> `1e21`). A
        // writer formatting times with `{}` (`5`, `0.0000001`, `1000000000000000000000`) or
        // quoting differently fails here even if the serde path changed with it.
        let expected = "\
protocol,assignor,static_membership,topic,partition,start_s,end_s,owner,state
eager,range,false,\"t,1\",0,0.0,5.0,c0,consuming
eager,range,false,\"t,1\",0,5.0,123456.789,,stop-the-world
eager,range,false,\"t,1\",0,123456.789,1e21,\"c\"\"1\",frozen by hand
eager,range,false,\"t,1\",0,1e21,1e21,c2,\"odd,state\"
eager,range,false,t,1,0.0,1e-7,c-0.x:y/z@h+1,idle
cooperative,sticky,true,t,2,0.0,0.5,c3,revoked
cooperative,sticky,true,t,2,0.5,2.0,,idle
";
        assert_eq!(fast, expected);
    }

    /// The next number of a fixed xorshift64 sequence (deterministic test data).
    fn scramble(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    /// The fast writer matches the serde path on many pseudo-random times (any bit pattern,
    /// NaN and infinities included, and multiples of 1/8) and names mixing bytes csv quotes
    /// with ones it does not, and on an empty first field and a quoted topic.
    #[test]
    fn fast_ownership_writer_matches_serde_on_scrambled_rows() {
        let pieces = ["", "a", " ", ",", "\"", "\r", "\n", "\\", "#", "é", "x-1", "'", "\t"];
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        // Up to `most` pieces: state names have at most 2 (1 + 13 + 13^2 = 183 distinct, within
        // the log's 248 unknown state names).
        let name = |state: &mut u64, most: u64| -> String {
            let n = scramble(state) % (most + 1);
            (0..n).map(|_| pieces[(scramble(state) % pieces.len() as u64) as usize]).collect()
        };
        let time = |bits: u64| match bits % 3 {
            0 => (bits % 100_000) as f64 / 8.0,
            _ => f64::from_bits(bits),
        };
        let mut rows = Vec::new();
        for i in 0..2_000u32 {
            let (start_s, end_s) = (time(scramble(&mut state)), time(scramble(&mut state)));
            let (owner, state_name) = (name(&mut state, 3), name(&mut state, 2));
            rows.push(own(i / 7, start_s, end_s, &owner, &state_name));
        }
        let mut odd = own(0, 1.0, 2.0, "c", "idle");
        (odd.protocol, odd.topic) = (String::new(), "\"q\"".into());
        let reports = [ownership_report(rows), ownership_report(vec![odd])];
        let (fast, serde) = both_ownership_writers(&reports);
        assert_eq!(fast, serde);
        // The empty protocol is written empty (not `""`) and the topic quoted.
        assert!(fast.ends_with("\n,range,false,\"\"\"q\"\"\",0,1.0,2.0,c,idle\n"));
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
