//! Seeded parameter sweeps: the plan (cells x replications x protocols), parallel execution
//! on a rayon pool, sharding, resume from the journal, and the final files.
//!
//! Lifecycle of `rebalance-sim sweep`: [`SweepPlan::load`] reads the sweep and base files and
//! validates every cell's scenario; [`run_sweep`] opens the out folder's journal (resuming what
//! a killed sweep finished), runs the missing runs of its shard in parallel, appending each to
//! the journal as it finishes, then writes `cells/*.toml`, `runs.csv`, `aggregate.csv` (not for
//! a shard: `merge` writes it) and `manifest.json` atomically, and removes the journal (the
//! final files are then the whole record; a finished sweep started again runs again). Rows are sorted by run key
//! (cell in grid order, replication, protocol in file order), so the bytes do not depend on
//! `--jobs`, on interruptions or on sharding.
//!
//! The run function is injected (`lab::run_protocol` in the binary), so all of this is tested
//! with a fake model.

use crate::sweep_journal::{Entry, Journal};
use crate::sweep_manifest::{
    sha256_hex, Manifest, ManifestCell, Shard, ToleranceJson, MANIFEST_FORMAT,
};
use crate::sweep_output::{write_outputs, CellFile, RunRecord};
use metrics::{RunReport, SummaryRow};
use rayon::prelude::*;
use scenario::sweep::{build_cells, expand_grid, parse_sweep, run_seed, Cell, SweepFile};
use scenario::{ProtocolSpec, Scenario};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// What can go wrong in a sweep, merge or check.
#[derive(Clone, Debug, PartialEq)]
pub enum LabError {
    /// Bad input (files, arguments, mismatched shards): exit 2. Each line is one message.
    Input(Vec<String>),
    /// Reading or writing a file failed.
    Io(String),
    /// A run failed (the message names the run and how to replay it).
    Run(String),
}

impl LabError {
    pub(crate) fn input(message: impl Into<String>) -> LabError {
        LabError::Input(vec![message.into()])
    }

    pub(crate) fn io(path: &Path, err: impl fmt::Display) -> LabError {
        LabError::Io(format!("{}: {err}", path.display()))
    }
}

impl fmt::Display for LabError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LabError::Input(lines) => f.write_str(&lines.join("\n")),
            LabError::Io(m) | LabError::Run(m) => f.write_str(m),
        }
    }
}

/// A run's position in the plan: cell (grid order), replication, protocol (the cell's order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct RunKey {
    /// Index into the plan's cells.
    pub cell: usize,
    /// Replication number, from 0.
    pub replication: u32,
    /// Index into the cell's protocols.
    pub protocol: usize,
}

/// The signature of one protocol run (`lab::run_protocol` adapted to return a `Result`).
pub trait RunFn: Fn(&Scenario, ProtocolSpec, u64) -> Result<RunReport, String> + Sync {}
impl<F: Fn(&Scenario, ProtocolSpec, u64) -> Result<RunReport, String> + Sync> RunFn for F {}

/// A validated sweep: the manifest (ids, seeds, protocols) and each cell's scenario.
#[derive(Clone, Debug)]
pub struct SweepPlan {
    /// The manifest this sweep writes (without shard).
    pub manifest: Manifest,
    /// The cells, in grid order.
    pub cells: Vec<Cell>,
}

/// The bytes of the two input files, for the manifest's hashes.
#[derive(Clone, Copy, Debug)]
pub struct Inputs<'a> {
    /// The sweep file.
    pub sweep: &'a [u8],
    /// The base scenario file.
    pub base: &'a [u8],
}

impl SweepPlan {
    /// Reads the sweep file at `path` and its base, expands the grid and validates every cell
    /// with `parse` (`scenario::from_table`). `seeds` overrides the file's replication count.
    pub fn load<E, P>(
        path: &Path,
        seeds: Option<u32>,
        git_commit: &str,
        parse: P,
    ) -> Result<SweepPlan, LabError>
    where
        E: fmt::Display,
        P: Fn(toml::Table, &Path) -> Result<Scenario, Vec<E>>,
    {
        let sweep_bytes = read_input(path, "sweep file")?;
        let text = String::from_utf8_lossy(&sweep_bytes);
        let mut sweep = parse_sweep(&text, path).map_err(messages)?;
        if let Some(n) = seeds {
            if n == 0 || n > scenario::limits::MAX_SEEDS {
                let allowed = scenario::sweep::seeds_allowed();
                return Err(LabError::input(format!("--seeds {n} is not allowed: {allowed}")));
            }
            sweep.seeds = n;
        }
        let base_bytes = read_input(&sweep.base, "base scenario (key `base` of the sweep file)")?;
        let base: toml::Table = String::from_utf8_lossy(&base_bytes)
            .parse()
            .map_err(|e| LabError::input(format!("{}: {e}", sweep.base.display())))?;
        let tables = expand_grid(&sweep, &base).map_err(messages)?;
        let cells = build_cells(&sweep, tables, parse).map_err(messages)?;
        let inputs = Inputs { sweep: &sweep_bytes, base: &base_bytes };
        Ok(SweepPlan::from_cells(&sweep, inputs, cells, git_commit))
    }

    /// Builds the plan of already validated cells.
    pub fn from_cells(
        sweep: &SweepFile,
        inputs: Inputs<'_>,
        cells: Vec<Cell>,
        git_commit: &str,
    ) -> SweepPlan {
        assert!(!cells.is_empty(), "a grid always has at least one cell");
        let base_seed = cells[0].scenario.seed;
        let manifest_cells: Vec<ManifestCell> =
            cells.iter().map(|c| manifest_cell(c, base_seed, sweep.seeds)).collect();
        let runs = manifest_cells.iter().map(|c| c.protocols.len() * c.seeds.len()).sum();
        let manifest = Manifest {
            format: MANIFEST_FORMAT,
            name: sweep.name.clone(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            git_commit: git_commit.to_string(),
            sweep_file: sweep.source.display().to_string(),
            sweep_sha256: sha256_hex(inputs.sweep),
            base_file: sweep.base.display().to_string(),
            base_sha256: sha256_hex(inputs.base),
            base_seed,
            replications: sweep.seeds,
            grid_keys: sweep.grid.iter().map(|a| a.key.clone()).collect(),
            runs,
            tolerance: ToleranceJson { relative: sweep.tolerance.relative, absolute: sweep.tolerance.absolute },
            reproduce: "from this folder: rebalance-sim run cells/<cell>.toml --seed <cells[].seeds[replication]> \
                        --protocol <protocol>; its summary row equals the row's summary columns"
                .to_string(),
            cells: manifest_cells,
            shard: None,
        };
        SweepPlan { manifest, cells }
    }

    /// Every run of the sweep, in run-key order.
    pub fn runs(&self) -> Vec<RunKey> {
        all_runs(&self.manifest)
    }

    /// The protocol of a run.
    pub fn protocol(&self, key: RunKey) -> ProtocolSpec {
        self.cells[key.cell].scenario.protocols[key.protocol]
    }

    /// The seed of a run.
    pub fn seed(&self, key: RunKey) -> u64 {
        self.manifest.cells[key.cell].seeds[key.replication as usize]
    }
}

fn manifest_cell(cell: &Cell, base_seed: u64, replications: u32) -> ManifestCell {
    ManifestCell {
        cell: cell.id.clone(),
        params: cell.params.iter().cloned().collect(),
        scenario: format!("cells/{}.toml", cell.id),
        protocols: cell.scenario.protocols.iter().map(ToString::to_string).collect(),
        seeds: (0..replications).map(|r| run_seed(base_seed, &cell.canonical, r)).collect(),
    }
}

/// Every run a manifest describes, in run-key order.
pub fn all_runs(manifest: &Manifest) -> Vec<RunKey> {
    let mut keys = Vec::with_capacity(manifest.runs);
    for (cell, c) in manifest.cells.iter().enumerate() {
        for replication in 0..c.seeds.len() as u32 {
            for protocol in 0..c.protocols.len() {
                keys.push(RunKey { cell, replication, protocol });
            }
        }
    }
    keys
}

fn read_input(path: &Path, what: &str) -> Result<Vec<u8>, LabError> {
    scenario::limits::read_capped(path).map_err(|e| {
        let e = e.replacen("the file", &format!("the {what}"), 1);
        LabError::input(format!("{}: {e}", path.display()))
    })
}

fn messages<E: fmt::Display>(errors: Vec<E>) -> LabError {
    LabError::Input(errors.iter().map(ToString::to_string).collect())
}

/// How to run a sweep.
#[derive(Clone, Debug)]
pub struct SweepOptions {
    /// Output folder.
    pub out_dir: PathBuf,
    /// Worker threads (>= 1).
    pub jobs: usize,
    /// Run only this shard.
    pub shard: Option<Shard>,
}

/// What a sweep did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SweepOutcome {
    /// Runs of this shard (all runs when unsharded).
    pub runs: usize,
    /// Of these, found finished in the journal.
    pub resumed: usize,
    /// Of these, run now.
    pub ran: usize,
    /// Files written.
    pub files: Vec<PathBuf>,
}

/// Runs the sweep (or its shard) into `opts.out_dir`, resuming from the journal there.
/// `progress(done, total)` is called once at the start and after every finished run.
pub fn run_sweep<F: RunFn>(
    plan: &SweepPlan,
    opts: &SweepOptions,
    run: &F,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<SweepOutcome, LabError> {
    let mine: Vec<RunKey> = plan
        .runs()
        .into_iter()
        .enumerate()
        .filter(|(pos, _)| opts.shard.is_none_or(|s| s.owns(*pos)))
        .map(|(_, k)| k)
        .collect();
    std::fs::create_dir_all(&opts.out_dir).map_err(|e| LabError::io(&opts.out_dir, e))?;
    let (journal, entries) = Journal::open(&opts.out_dir, &plan.manifest.fingerprint())?;
    let mut done = resumed_records(&plan.manifest, entries);
    done.retain(|k, _| mine.binary_search(k).is_ok());
    let resumed = done.len();
    let todo: Vec<RunKey> = mine.iter().copied().filter(|k| !done.contains_key(k)).collect();
    progress(resumed, mine.len());
    let journal = Mutex::new(journal);
    let count = AtomicUsize::new(resumed);
    let tick = || progress(count.fetch_add(1, Ordering::SeqCst) + 1, mine.len());
    let fresh = execute(plan, &todo, opts.jobs, Some(&journal), run, &tick)?;
    done.extend(fresh.into_iter().map(|r| (r.key, r.summary)));
    let records: Vec<RunRecord> =
        done.into_iter().map(|(key, summary)| RunRecord { key, summary }).collect();
    let manifest = Manifest { shard: opts.shard, ..plan.manifest.clone() };
    let cell_files = cell_files(plan)?;
    let files = write_outputs(&opts.out_dir, &manifest, &records, &cell_files)?;
    drop(journal);
    crate::sweep_journal::remove(&opts.out_dir)?;
    Ok(SweepOutcome { runs: mine.len(), resumed, ran: todo.len(), files })
}

fn cell_files(plan: &SweepPlan) -> Result<Vec<CellFile>, LabError> {
    plan.cells
        .iter()
        .map(|c| {
            let text = toml::to_string(&c.table).map_err(|e| {
                LabError::Io(format!("cell {}: cannot write its scenario: {e}", c.id))
            })?;
            Ok(CellFile { id: c.id.clone(), bytes: text.into_bytes() })
        })
        .collect()
}

/// Journal entries that belong to this plan (same cell id, protocol label, replication and
/// seed), keyed by run key. Entries of other plans cannot be present: the journal header's
/// fingerprint was checked.
fn resumed_records(manifest: &Manifest, entries: Vec<Entry>) -> BTreeMap<RunKey, SummaryRow> {
    let mut done = BTreeMap::new();
    for e in entries {
        if let Some(key) = key_of(manifest, &e.cell, e.replication, &e.protocol, e.seed) {
            done.insert(key, e.summary);
        }
    }
    done
}

/// The run key of (cell id, replication, protocol label) in `manifest`, if the seed matches.
pub fn key_of(
    manifest: &Manifest,
    cell: &str,
    replication: u32,
    protocol: &str,
    seed: u64,
) -> Option<RunKey> {
    let index = manifest.cells.iter().position(|c| c.cell == cell)?;
    let c = &manifest.cells[index];
    let p = c.protocols.iter().position(|l| l == protocol)?;
    (c.seeds.get(replication as usize) == Some(&seed)).then_some(RunKey {
        cell: index,
        replication,
        protocol: p,
    })
}

/// Runs `todo` on a pool of `jobs` threads; each finished run goes to the journal (if any)
/// before `tick` is called. Returns the records in run-key order.
pub fn execute<F: RunFn>(
    plan: &SweepPlan,
    todo: &[RunKey],
    jobs: usize,
    journal: Option<&Mutex<Journal>>,
    run: &F,
    tick: &(dyn Fn() + Sync),
) -> Result<Vec<RunRecord>, LabError> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.max(1))
        .build()
        .map_err(|e| LabError::Io(format!("cannot start {jobs} worker threads: {e}")))?;
    let mut records: Vec<RunRecord> = pool.install(|| {
        todo.par_iter()
            .map(|&key| {
                let summary = run_one(plan, key, run)?;
                if let Some(j) = journal {
                    let entry = entry_of(plan, key, &summary);
                    j.lock().expect("journal lock").append(&entry)?;
                }
                tick();
                Ok(RunRecord { key, summary })
            })
            .collect::<Result<Vec<_>, LabError>>()
    })?;
    records.sort_by_key(|r| r.key);
    Ok(records)
}

fn entry_of(plan: &SweepPlan, key: RunKey, summary: &SummaryRow) -> Entry {
    let cell = &plan.manifest.cells[key.cell];
    Entry {
        cell: cell.cell.clone(),
        replication: key.replication,
        protocol: cell.protocols[key.protocol].clone(),
        seed: plan.seed(key),
        summary: summary.clone(),
    }
}

fn run_one<F: RunFn>(plan: &SweepPlan, key: RunKey, run: &F) -> Result<SummaryRow, LabError> {
    let cell = &plan.cells[key.cell];
    let (protocol, seed) = (plan.protocol(key), plan.seed(key));
    let replay = || {
        format!(
            "cell {} ({}), replication {}, protocol {protocol}, seed {seed}; replay: \
             rebalance-sim run <out>/cells/{}.toml --seed {seed} --protocol {protocol}",
            cell.id,
            cell.canonical.replace('\n', ", "),
            key.replication,
            cell.id
        )
    };
    let report = run(&cell.scenario, protocol, seed)
        .map_err(|e| LabError::Run(format!("{e}: {}", replay())))?;
    report
        .summary
        .ok_or_else(|| LabError::Run(format!("the run reported no summary row: {}", replay())))
}

/// The real model as a [`RunFn`] (`crate::run_protocol`), for the binary.
pub fn model_run(
    scenario: &Scenario,
    protocol: ProtocolSpec,
    seed: u64,
) -> Result<RunReport, String> {
    crate::run_protocol(scenario, protocol, seed).map_err(|e| e.to_string())
}
