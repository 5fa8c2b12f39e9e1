//! The sweep journal (`journal.jsonl` in the out folder): one JSON line per finished run,
//! appended and flushed as soon as the run ends, so a killed sweep started again skips them.
//!
//! The first line is a header with the plan's fingerprint (inputs, version, commit, seeds); a
//! journal of another plan is refused rather than mixed in. On open, every line that does not
//! parse (a torn last line from a kill mid-write) is dropped and the journal is rewritten
//! atomically with the good lines, so new appends never follow a half line. The journal's own
//! line order depends on timing; the final files do not, since they are sorted by run key.
//! Once the final files are written, the journal is removed ([`remove`]).

use crate::sweep::LabError;
use metrics::SummaryRow;
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// File name of the journal in the out folder.
pub const JOURNAL: &str = "journal.jsonl";
const MAGIC: &str = "rebalance-sim sweep journal v1";

#[derive(Serialize, Deserialize)]
struct Header {
    journal: String,
    fingerprint: String,
}

/// One finished run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// Cell id.
    pub cell: String,
    /// Replication number.
    pub replication: u32,
    /// Protocol label.
    pub protocol: String,
    /// Run seed.
    pub seed: u64,
    /// The run's summary row.
    pub summary: SummaryRow,
}

/// An open journal, appending.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    file: File,
}

impl Journal {
    /// Opens (or creates) the journal in `dir` for the plan with `fingerprint`, returning the
    /// entries already finished.
    pub fn open(dir: &Path, fingerprint: &str) -> Result<(Journal, Vec<Entry>), LabError> {
        let path = dir.join(JOURNAL);
        let entries = match std::fs::read(&path) {
            Ok(bytes) => read_entries(&path, &bytes, fingerprint)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(LabError::io(&path, e)),
        };
        let mut text = header_line(fingerprint);
        for e in &entries {
            text.push_str(&entry_line(e));
        }
        report::csv_out::write_atomic(&path, text.as_bytes())
            .map_err(|e| LabError::io(&path, e))?;
        let file =
            OpenOptions::new().append(true).open(&path).map_err(|e| LabError::io(&path, e))?;
        Ok((Journal { path, file }, entries))
    }

    /// Appends one finished run and flushes it to the OS (one `write` of one whole line).
    pub fn append(&mut self, entry: &Entry) -> Result<(), LabError> {
        let line = entry_line(entry);
        self.file.write_all(line.as_bytes()).map_err(|e| LabError::io(&self.path, e))?;
        self.file.flush().map_err(|e| LabError::io(&self.path, e))
    }
}

fn header_line(fingerprint: &str) -> String {
    let h = Header { journal: MAGIC.to_string(), fingerprint: fingerprint.to_string() };
    format!("{}\n", serde_json::to_string(&h).expect("header serialises"))
}

fn entry_line(entry: &Entry) -> String {
    format!("{}\n", serde_json::to_string(entry).expect("entry serialises"))
}

fn read_entries(path: &Path, bytes: &[u8], fingerprint: &str) -> Result<Vec<Entry>, LabError> {
    let text = String::from_utf8_lossy(bytes);
    let mut lines = text.split('\n');
    let header: Option<Header> = lines.next().and_then(|l| serde_json::from_str(l).ok());
    match header {
        Some(h) if h.journal == MAGIC && h.fingerprint == fingerprint => {}
        Some(h) if h.journal == MAGIC => {
            return Err(LabError::input(format!(
                "{}: this journal belongs to another sweep (different sweep or base file, seeds, \
                 version or commit); delete it to start over, or choose another --out",
                path.display()
            )))
        }
        // An empty or torn header: nothing was recorded yet.
        _ => return Ok(Vec::new()),
    }
    // A line without its newline may be torn: only complete lines count.
    let complete = text.ends_with('\n');
    let all: Vec<&str> = lines.collect();
    let n = if complete { all.len() } else { all.len().saturating_sub(1) };
    Ok(all[..n].iter().filter_map(|l| serde_json::from_str(l).ok()).collect())
}

/// Removes the journal of `dir` (after the final files were written); absent is fine.
pub fn remove(dir: &Path) -> Result<(), LabError> {
    let path = dir.join(JOURNAL);
    match std::fs::remove_file(&path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(LabError::io(&path, e)),
    }
}

#[cfg(test)]
mod tests {
    /// A resumed sweep must read back the exact summary values it journaled (its final files
    /// are compared byte for byte with an uninterrupted sweep's): serde_json's default float
    /// parser can be one ULP off (20.227646189999998 read back as 20.22764619), so the
    /// workspace enables `float_roundtrip`.
    #[test]
    fn journaled_floats_read_back_exactly() {
        for x in [20.227646189999998_f64, 23.825200037000002, 0.1 + 0.2, 1e-310, 6001.5] {
            let text = serde_json::to_string(&x).expect("serialises");
            let back: f64 = serde_json::from_str(&text).expect("parses");
            assert_eq!(back.to_bits(), x.to_bits(), "{text}");
        }
    }
}
