//! `rebalance-sim merge DIR... --out DIR`: joins the outputs of `sweep --shard K/N` into the
//! files one unsharded sweep writes, byte for byte.
//!
//! Every shard folder holds a `manifest.json` with its `shard` and a `runs.csv` of its runs.
//! Merge checks that the manifests agree on everything but the shard (same inputs, version,
//! commit and seeds), that shards 0..N-1 are each present once, and that every run of the plan
//! appears exactly once; then it sorts the rows by run key and writes `runs.csv`,
//! `aggregate.csv`, the cell files and the unsharded manifest with the same writer as `sweep`.

use crate::sweep::{all_runs, LabError};
use crate::sweep_manifest::{Manifest, MANIFEST_JSON};
use crate::sweep_output::{read_runs_csv, write_outputs, CellFile, RunRecord, CELLS_DIR, RUNS_CSV};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What a merge did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MergeOutcome {
    /// Shards merged.
    pub shards: usize,
    /// Runs in the merged output.
    pub runs: usize,
    /// Files written.
    pub files: Vec<PathBuf>,
}

/// Merges the shard folders `dirs` into `out`.
pub fn merge(dirs: &[PathBuf], out: &Path) -> Result<MergeOutcome, LabError> {
    if dirs.is_empty() {
        return Err(LabError::input("merge: name the shard folders to merge"));
    }
    let manifest = check_manifests(dirs)?;
    let mut by_key = BTreeMap::new();
    for dir in dirs {
        for r in read_runs_csv(&dir.join(RUNS_CSV), &manifest)? {
            let key = r.key;
            if by_key.insert(key, r).is_some() {
                let c = &manifest.cells[key.cell];
                return Err(LabError::input(format!(
                    "{}: run cell {} replication {} protocol {} appears in two shards",
                    dir.display(),
                    c.cell,
                    key.replication,
                    c.protocols[key.protocol]
                )));
            }
        }
    }
    let missing = all_runs(&manifest).into_iter().filter(|k| !by_key.contains_key(k)).count();
    if missing > 0 {
        return Err(LabError::input(format!(
            "merge: {missing} of {} runs are missing: is a shard unfinished? (run it again: it resumes)",
            manifest.runs
        )));
    }
    let records: Vec<RunRecord> = by_key.into_values().collect();
    let cells = read_cell_files(&dirs[0], &manifest)?;
    let files = write_outputs(out, &manifest, &records, &cells)?;
    Ok(MergeOutcome { shards: dirs.len(), runs: records.len(), files })
}

/// Reads every shard's manifest; returns the common unsharded manifest.
fn check_manifests(dirs: &[PathBuf]) -> Result<Manifest, LabError> {
    let mut common: Option<(PathBuf, Manifest)> = None;
    let mut seen = BTreeMap::new();
    let mut count = None;
    for dir in dirs {
        let m = Manifest::read(&dir.join(MANIFEST_JSON)).map_err(LabError::input)?;
        let shard = m.shard.ok_or_else(|| {
            LabError::input(format!("{}: not a shard (its manifest has no `shard`)", dir.display()))
        })?;
        if *count.get_or_insert(shard.count) != shard.count {
            return Err(LabError::input(format!(
                "{}: shard {shard} is from a split into a different number of shards",
                dir.display()
            )));
        }
        if let Some(other) = seen.insert(shard.index, dir.clone()) {
            return Err(LabError::input(format!(
                "shard {shard} given twice: {} and {}",
                other.display(),
                dir.display()
            )));
        }
        match &common {
            None => common = Some((dir.clone(), m.unsharded())),
            Some((first, c)) if *c != m.unsharded() => {
                return Err(LabError::input(format!(
                    "{} and {}: the shards come from different sweeps ({} differs)",
                    first.display(),
                    dir.display(),
                    first_difference(c, &m.unsharded())
                )))
            }
            Some(_) => {}
        }
    }
    let count = count.expect("at least one dir");
    let absent: Vec<String> =
        (0..count).filter(|k| !seen.contains_key(k)).map(|k| format!("{k}/{count}")).collect();
    if !absent.is_empty() {
        return Err(LabError::input(format!("merge: shards missing: {}", absent.join(", "))));
    }
    Ok(common.expect("at least one dir").1)
}

fn first_difference(a: &Manifest, b: &Manifest) -> &'static str {
    if a.sweep_sha256 != b.sweep_sha256 {
        "sweep_sha256"
    } else if a.base_sha256 != b.base_sha256 {
        "base_sha256"
    } else if a.git_commit != b.git_commit {
        "git_commit"
    } else if a.version != b.version {
        "version"
    } else if a.cells != b.cells {
        "cells (seeds or grid)"
    } else {
        "a manifest field"
    }
}

fn read_cell_files(dir: &Path, manifest: &Manifest) -> Result<Vec<CellFile>, LabError> {
    manifest
        .cells
        .iter()
        .map(|c| {
            let path = dir.join(CELLS_DIR).join(format!("{}.toml", c.cell));
            let bytes = std::fs::read(&path).map_err(|e| LabError::io(&path, e))?;
            Ok(CellFile { id: c.cell.clone(), bytes })
        })
        .collect()
}
