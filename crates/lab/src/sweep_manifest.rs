//! `manifest.json` of a sweep: what was run, by which version, from which inputs (sha256), with
//! which seeds: enough to reproduce any row of `runs.csv` with `rebalance-sim run --seed`.
//!
//! The manifest is also the plan that `merge` and `check` read back: cell ids and order, the
//! protocols of each cell, and the `check` tolerance. Its bytes depend only on the inputs, the
//! version and the commit, never on `--jobs`, timing or the shard (a shard's manifest adds a
//! `shard` field that the merged manifest drops).

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

/// The manifest's format version.
pub const MANIFEST_FORMAT: u32 = 1;
/// File name of the manifest in a sweep's output folder.
pub const MANIFEST_JSON: &str = "manifest.json";

/// `--shard K/N`: this process runs the runs whose position in run-key order is `K mod N`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// K: 0-based, below `count` (Kubernetes' `JOB_COMPLETION_INDEX`, Slurm `--array=0-(N-1)`).
    pub index: u32,
    /// N: number of shards (>= 1).
    pub count: u32,
}

impl Shard {
    /// Parses `K/N` with `0 <= K < N`.
    pub fn parse(text: &str) -> Result<Shard, String> {
        let bad = || format!("--shard `{text}`: expected K/N with 0 <= K < N, e.g. 0/4 .. 3/4");
        let (k, n) = text.split_once('/').ok_or_else(bad)?;
        let index: u32 = k.trim().parse().map_err(|_| bad())?;
        let count: u32 = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    /// Whether the run at `position` (in run-key order) belongs to this shard.
    pub fn owns(&self, position: usize) -> bool {
        position % self.count as usize == self.index as usize
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// `check` tolerance recorded with the baseline.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToleranceJson {
    /// Fraction of the baseline mean.
    pub relative: f64,
    /// Absolute slack.
    pub absolute: f64,
}

/// One cell of the sweep.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ManifestCell {
    /// Stable cell id (the `cell` column).
    pub cell: String,
    /// Grid key -> value as in the CSV columns.
    pub params: BTreeMap<String, String>,
    /// The cell's scenario file in the output folder (`cells/<id>.toml`).
    pub scenario: String,
    /// Protocol labels, in run order (`eager:range`, `cooperative:cooperative-sticky+static`).
    pub protocols: Vec<String>,
    /// Run seed of each replication, by replication number.
    pub seeds: Vec<u64>,
}

/// The whole manifest.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`MANIFEST_FORMAT`].
    pub format: u32,
    /// Sweep name.
    pub name: String,
    /// `rebalance-sim` version.
    pub version: String,
    /// `git rev-parse HEAD` when available, else `unknown`.
    pub git_commit: String,
    /// The sweep file as named on the command line.
    pub sweep_file: String,
    /// sha256 of the sweep file's bytes.
    pub sweep_sha256: String,
    /// The base scenario file.
    pub base_file: String,
    /// sha256 of the base file's bytes.
    pub base_sha256: String,
    /// The base scenario's seed (from which run seeds derive).
    pub base_seed: u64,
    /// Replications per cell.
    pub replications: u32,
    /// Grid keys, in column order.
    pub grid_keys: Vec<String>,
    /// Total runs of the whole (unsharded) sweep.
    pub runs: usize,
    /// `check` tolerance on aggregate means.
    pub tolerance: ToleranceJson,
    /// How to reproduce one row.
    pub reproduce: String,
    /// The cells, in grid order.
    pub cells: Vec<ManifestCell>,
    /// Present in a shard's output only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
}

impl Manifest {
    /// Pretty JSON with a final newline: the bytes of `manifest.json`.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = serde_json::to_vec_pretty(self).expect("a manifest always serialises");
        bytes.push(b'\n');
        bytes
    }

    /// Reads a `manifest.json`.
    pub fn read(path: &Path) -> Result<Manifest, String> {
        let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        serde_json::from_slice(&bytes)
            .map_err(|e| format!("{}: not a sweep manifest: {e}", path.display()))
    }

    /// The manifest without its shard field (what an unsharded sweep writes).
    pub fn unsharded(&self) -> Manifest {
        Manifest { shard: None, ..self.clone() }
    }

    /// A fingerprint of everything that determines the results (used by the journal so a
    /// resumed sweep never mixes rows of different inputs or versions).
    pub fn fingerprint(&self) -> String {
        sha256_hex(&self.unsharded().to_bytes())
    }
}

/// Lower-case hex sha256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// The commit the binary was built from (embedded by `build.rs` with `git rev-parse HEAD` at
/// build time; `unknown` when built outside a git checkout). The same binary gives the same
/// value from any folder, so shards run elsewhere merge.
pub fn git_commit() -> String {
    GIT_COMMIT.to_string()
}

/// The embedded commit (see [`git_commit`]).
pub const GIT_COMMIT: &str = env!("REBALANCE_SIM_GIT_COMMIT");
/// `<version> (<commit>)`, as `rebalance-sim --version` prints it.
pub const VERSION_AND_COMMIT: &str =
    concat!(env!("CARGO_PKG_VERSION"), " (", env!("REBALANCE_SIM_GIT_COMMIT"), ")");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_parse_and_ownership() {
        let s = Shard::parse("1/3").unwrap();
        assert_eq!(s, Shard { index: 1, count: 3 });
        // Positions 1, 4, 7 belong to shard 1 of 3.
        let owned: Vec<usize> = (0..9).filter(|&p| s.owns(p)).collect();
        assert_eq!(owned, vec![1, 4, 7]);
        for bad in ["3/3", "1", "a/2", "0/0", "-1/2"] {
            let e = Shard::parse(bad).unwrap_err();
            assert!(e.contains("expected K/N with 0 <= K < N"), "{bad}: {e}");
        }
    }

    #[test]
    fn sha256_of_abc() {
        // FIPS 180-2 appendix B.1 test vector.
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
