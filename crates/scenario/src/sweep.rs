//! The sweep file format (DESIGN section 9): a base scenario, a grid over scenario keys and
//! Kafka properties, the protocols and a replication count.
//!
//! Lifecycle: [`parse_sweep`] checks the sweep file itself (keys, types, allowed values);
//! [`expand_grid`] applies every combination of grid values to the base scenario's TOML table,
//! giving one [`CellTable`] per cell; [`build_cells`] turns each table into a validated
//! [`Scenario`] with the parser it is handed (`scenario::from_table` in the binary), so every
//! cell gets exactly the scenario checks, reported against the sweep file and the grid key.
//!
//! A cell's identity is its parameter values, not its position: [`CellTable::canonical`] lists
//! `key=value` in key order, and both the cell id and each run seed ([`run_seed`]) are stable
//! hashes of it. Adding a value to the grid therefore changes no other cell's seeds.

use crate::limits::{MAX_NAME_CHARS, MAX_SEEDS};
use crate::Scenario;
use std::fmt;
use std::path::{Path, PathBuf};
use toml::{Table, Value};

/// Top-level keys of a sweep file.
const SWEEP_KEYS: &[&str] = &["name", "base", "seeds", "protocols", "grid", "check"];
/// Keys of the optional `[check]` table (tolerance of `rebalance-sim check` for this sweep).
const CHECK_KEYS: &[&str] = &["relative", "absolute"];
/// Scenario keys a grid may not vary: the sweep file owns them.
const RESERVED_GRID_KEYS: &[&str] = &["name", "seed", "protocols"];
/// Tables of the scenario schema (walked when resolving a dotted grid key), with their
/// sub-tables. Anything after the deepest known table is one key, dots included, so Kafka
/// properties keep their names: `consumer.config.session.timeout.ms`.
const SCHEMA_TABLES: &[(&str, &[&str])] = &[
    ("consumer", &["config"]),
    ("broker", &["config"]),
    ("network", &[]),
    ("group", &[]),
    ("tubemq", &["node_ids"]),
];
/// Arrays of tables in the scenario: `topic.rate` (every topic) or `topic.0.rate` (the first).
const SCHEMA_ARRAYS: &[&str] = &["topic", "event"];
/// Upper bound on cells x seeds (each cell's protocols not counted), so a typo cannot start
/// a billion runs ([`cell_count`] enforces it).
pub const MAX_RUNS: u64 = 1_000_000;
/// Default relative tolerance of `check` on a sweep's means.
pub const DEFAULT_TOLERANCE_RELATIVE: f64 = 0.05;
/// Default absolute tolerance of `check` on a sweep's means.
pub const DEFAULT_TOLERANCE_ABSOLUTE: f64 = 1e-9;

/// A problem in a sweep file: the file, the key, what is wrong and what is allowed.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepError {
    /// The sweep file.
    pub file: PathBuf,
    /// The key at fault (`grid."group.members"`, `seeds`, ...); empty for the whole file.
    pub key: String,
    /// What is wrong and what is allowed.
    pub message: String,
}

impl SweepError {
    fn new(file: &Path, key: &str, message: impl Into<String>) -> SweepError {
        SweepError { file: file.to_path_buf(), key: key.to_string(), message: message.into() }
    }
}

impl fmt::Display for SweepError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.key.is_empty() {
            write!(f, "{}: {}", self.file.display(), self.message)
        } else {
            write!(f, "{}: key `{}`: {}", self.file.display(), self.key, self.message)
        }
    }
}

/// Where a dotted grid key points in the scenario table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GridPath {
    /// Tables to walk from the root, e.g. `["consumer", "config"]`.
    pub tables: Vec<String>,
    /// `Some((array, index))` for `topic.N.key` / `event.N.key`; index `None` means every entry.
    pub array: Option<(String, Option<usize>)>,
    /// The final key, dots kept: `session.timeout.ms`.
    pub key: String,
}

/// One grid axis: a dotted key and its values, in file order.
#[derive(Clone, Debug, PartialEq)]
pub struct GridAxis {
    /// The key as written in `[grid]`.
    pub key: String,
    /// Where it points.
    pub path: GridPath,
    /// The values to try.
    pub values: Vec<Value>,
}

/// `check` tolerance for a sweep: a mean moved if `|new - old| > absolute + relative * |old|`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerance {
    /// Fraction of the baseline value.
    pub relative: f64,
    /// Absolute slack in the metric's unit.
    pub absolute: f64,
}

/// A parsed, checked sweep file.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepFile {
    /// `name` (default: the file stem): also the default output `results/sweeps/<name>/`.
    pub name: String,
    /// The sweep file.
    pub source: PathBuf,
    /// `base`, resolved against the sweep file's folder.
    pub base: PathBuf,
    /// `seeds`: replications per cell (default 1).
    pub seeds: u32,
    /// `protocols`: replaces the base's list when present.
    pub protocols: Option<Vec<String>>,
    /// `[grid]`, axes in key order (TOML tables are sorted).
    pub grid: Vec<GridAxis>,
    /// `[check]`.
    pub tolerance: Tolerance,
}

/// One cell of the grid before scenario validation.
#[derive(Clone, Debug, PartialEq)]
pub struct CellTable {
    /// Position in grid order (first axis slowest).
    pub index: usize,
    /// `(grid key, value)` in axis order.
    pub params: Vec<(String, Value)>,
    /// The base table with this cell's values (and the sweep's protocols) applied.
    pub table: Table,
}

/// One cell with its validated scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct Cell {
    /// Stable id: 8 hex digits of a hash of [`CellTable::canonical`] (see [`cell_ids`] for
    /// the rare cells of one grid that share them).
    pub id: String,
    /// Position in grid order.
    pub index: usize,
    /// `(grid key, value as written in CSV)` in axis order.
    pub params: Vec<(String, String)>,
    /// `key=value` lines in key order: the cell's identity.
    pub canonical: String,
    /// The cell's scenario TOML (what `rebalance-sim run` reproduces a row from).
    pub table: Table,
    /// The validated scenario.
    pub scenario: Scenario,
}

impl CellTable {
    /// `key=value` lines (TOML value syntax) in key order: the identity of the cell.
    pub fn canonical(&self) -> String {
        let mut lines: Vec<String> =
            self.params.iter().map(|(k, v)| format!("{k}={}", inline(v))).collect();
        lines.sort();
        lines.join("\n")
    }

    /// The stable cell id: 8 hex digits of the hash of [`CellTable::canonical`].
    pub fn id(&self) -> String {
        format!("{:08x}", mix64(fnv1a64(self.canonical().as_bytes(), FNV_OFFSET)) >> 32)
    }
}

/// A value as it appears in a CSV column: strings bare, everything else in TOML syntax.
pub fn value_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => inline(other),
    }
}

fn inline(value: &Value) -> String {
    value.to_string()
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a 64 (stable across platforms and Rust versions, unlike `std`'s hashers).
pub fn fnv1a64(bytes: &[u8], mut hash: u64) -> u64 {
    for b in bytes {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// The SplitMix64 finaliser: spreads FNV's weak low bits over the whole word.
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The run seed of replication `replication` of the cell whose identity is `canonical`, from
/// the base scenario's seed. Depends on nothing else: not on the cell's position, the other
/// cells, the protocol (protocols of one replication share the seed, so they are compared on
/// the same workload) or the shard.
pub fn run_seed(base_seed: u64, canonical: &str, replication: u32) -> u64 {
    let mut h = fnv1a64(b"rebalance-sim/sweep-seed/v1", FNV_OFFSET);
    h = fnv1a64(&base_seed.to_le_bytes(), h);
    h = fnv1a64(canonical.as_bytes(), h);
    h = fnv1a64(&replication.to_le_bytes(), h);
    mix64(h)
}

/// Resolves a dotted grid key against the scenario schema (see `SCHEMA_TABLES`). An array
/// index may also be written as in validation messages: `event[0].duration` is
/// `event.0.duration`.
pub fn resolve_grid_key(key: &str) -> Result<GridPath, String> {
    let dotted = brackets_as_dots(key);
    let key = dotted.as_str();
    let segments: Vec<&str> = key.split('.').collect();
    if segments.iter().any(|s| s.is_empty()) {
        return Err("a grid key is a dotted path such as `group.members` or \
                    `consumer.config.session.timeout.ms`; it has an empty segment"
            .into());
    }
    if SCHEMA_ARRAYS.contains(&segments[0]) {
        return resolve_array_key(&segments);
    }
    let mut tables = Vec::new();
    let mut known: &[&str] = &[];
    let mut rest = &segments[..];
    if let Some((name, subs)) = SCHEMA_TABLES.iter().find(|(n, _)| *n == segments[0]) {
        tables.push(name.to_string());
        known = subs;
        rest = &segments[1..];
    }
    while rest.len() > 1 && known.contains(&rest[0]) {
        tables.push(rest[0].to_string());
        known = &[];
        rest = &rest[1..];
    }
    if rest.is_empty() {
        return Err(format!("`{key}` is a table; name a key inside it"));
    }
    if tables.is_empty() && RESERVED_GRID_KEYS.contains(&key) {
        return Err(format!(
            "`{key}` cannot be swept: the sweep file sets it (use `seeds`, `protocols`, `name`)"
        ));
    }
    Ok(GridPath { tables, array: None, key: rest.join(".") })
}

/// `event[0].duration` -> `event.0.duration`; other text unchanged.
fn brackets_as_dots(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    let mut rest = key;
    while let Some(open) = rest.find('[') {
        let after = &rest[open + 1..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && after[digits..].starts_with(']') {
            out.push_str(&rest[..open]);
            out.push('.');
            out.push_str(&after[..digits]);
            rest = &after[digits + 1..];
        } else {
            out.push_str(&rest[..=open]);
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

fn resolve_array_key(segments: &[&str]) -> Result<GridPath, String> {
    let array = segments[0].to_string();
    let (index, rest) = match segments.get(1).and_then(|s| s.parse::<usize>().ok()) {
        Some(i) => (Some(i), &segments[2..]),
        None => (None, &segments[1..]),
    };
    if rest.is_empty() {
        return Err(format!(
            "name a key of `[[{array}]]`, e.g. `{array}.0.<key>` or `{array}.<key>`"
        ));
    }
    Ok(GridPath { tables: vec![], array: Some((array, index)), key: rest.join(".") })
}

/// Parses and checks a sweep file's text. `source` is its path (for messages and `base`).
pub fn parse_sweep(text: &str, source: &Path) -> Result<SweepFile, Vec<SweepError>> {
    let table: Table = text
        .parse()
        .map_err(|e: toml::de::Error| vec![SweepError::new(source, "", e.to_string())])?;
    let mut errors = unknown_keys(&table, SWEEP_KEYS, "", source);
    let name = parse_name(&table, source, &mut errors);
    let base = parse_base(&table, source, &mut errors);
    let seeds = parse_seeds(&table, source, &mut errors);
    let protocols = parse_protocols(&table, source, &mut errors);
    let grid = parse_grid(&table, source, &mut errors);
    let tolerance = parse_tolerance(&table, source, &mut errors);
    if !errors.is_empty() {
        return Err(errors);
    }
    let source = source.to_path_buf();
    Ok(SweepFile { name, source, base, seeds, protocols, grid, tolerance })
}

fn unknown_keys(table: &Table, allowed: &[&str], prefix: &str, file: &Path) -> Vec<SweepError> {
    let mut errors = Vec::new();
    for key in table.keys().filter(|k| !allowed.contains(&k.as_str())) {
        let near = allowed.iter().find(|a| strsim::levenshtein(a, key) <= 2);
        let hint = near.map(|n| format!(" (did you mean `{n}`?)")).unwrap_or_default();
        let msg = format!("unknown key{hint}; allowed: {}", allowed.join(", "));
        errors.push(SweepError::new(file, &format!("{prefix}{key}"), msg));
    }
    errors
}

fn parse_name(table: &Table, file: &Path, errors: &mut Vec<SweepError>) -> String {
    let stem = file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    match table.get("name") {
        None => stem,
        Some(Value::String(s)) if valid_name(s) => s.clone(),
        Some(_) => {
            let msg = format!(
                "a non-empty string of at most {MAX_NAME_CHARS} letters, digits, `-`, `_` or \
                 `.` (a folder name)"
            );
            errors.push(SweepError::new(file, "name", msg));
            stem
        }
    }
}

fn valid_name(s: &str) -> bool {
    !s.is_empty()
        && s != "."
        && s != ".."
        && s.chars().count() <= MAX_NAME_CHARS
        && s.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
}

fn parse_base(table: &Table, file: &Path, errors: &mut Vec<SweepError>) -> PathBuf {
    let dir = file.parent().unwrap_or(Path::new(""));
    match table.get("base") {
        Some(Value::String(s)) if !s.is_empty() => dir.join(s),
        Some(_) => {
            errors.push(SweepError::new(
                file,
                "base",
                "a path to a scenario file, relative to this file",
            ));
            PathBuf::new()
        }
        None => {
            errors.push(SweepError::new(
                file,
                "base",
                "missing: name the base scenario file, e.g. base = \"../crash.toml\"",
            ));
            PathBuf::new()
        }
    }
}

/// What `seeds` (and `--seeds`) may be, for messages.
pub fn seeds_allowed() -> String {
    format!("an integer from 1 to {MAX_SEEDS} (replications per cell)")
}

fn parse_seeds(table: &Table, file: &Path, errors: &mut Vec<SweepError>) -> u32 {
    match table.get("seeds") {
        None => 1,
        Some(Value::Integer(n)) if (1..=i64::from(MAX_SEEDS)).contains(n) => *n as u32,
        Some(v) => {
            let msg = format!("{v} is not allowed: {}", seeds_allowed());
            errors.push(SweepError::new(file, "seeds", msg));
            1
        }
    }
}

fn parse_protocols(
    table: &Table,
    file: &Path,
    errors: &mut Vec<SweepError>,
) -> Option<Vec<String>> {
    let value = table.get("protocols")?;
    let list: Option<Vec<String>> =
        value.as_array().and_then(|a| a.iter().map(|v| v.as_str().map(str::to_string)).collect());
    match list {
        Some(l) if !l.is_empty() => Some(l),
        _ => {
            let msg =
                "a non-empty list of protocol names such as [\"eager:range\", \"cooperative\"]";
            errors.push(SweepError::new(file, "protocols", msg));
            None
        }
    }
}

fn parse_grid(table: &Table, file: &Path, errors: &mut Vec<SweepError>) -> Vec<GridAxis> {
    let grid = match table.get("grid") {
        None => return Vec::new(),
        Some(Value::Table(t)) => t,
        Some(_) => {
            errors.push(SweepError::new(file, "grid", "a table of dotted keys to lists of values"));
            return Vec::new();
        }
    };
    let mut axes = Vec::new();
    for (key, values) in grid {
        let at = format!("grid.\"{key}\"");
        match (resolve_grid_key(key), values) {
            (Err(msg), _) => errors.push(SweepError::new(file, &at, msg)),
            (Ok(_), Value::Array(a)) if a.is_empty() => {
                errors.push(SweepError::new(file, &at, "an empty list: give at least one value"))
            }
            (Ok(path), Value::Array(a)) => match duplicate(a) {
                Some(d) => {
                    errors.push(SweepError::new(file, &at, format!("value {d} is listed twice")))
                }
                None => axes.push(GridAxis { key: key.clone(), path, values: a.clone() }),
            },
            (Ok(_), v) => {
                let msg =
                    format!("{v} is not a list: write the values to try as a list, e.g. [3, 6]");
                errors.push(SweepError::new(file, &at, msg));
            }
        }
    }
    errors.extend(conflicting_axes(&axes, file));
    axes
}

/// Two grid keys that set the same value (`topic.rate` and `topic.0.rate`, `topic.0.rate` and
/// `topic.00.rate`) or a value and a table around it (`consumer.config` and
/// `consumer.config.session.timeout.ms`): the later axis would overwrite the earlier one, and
/// the rows would be labelled with a value the runs did not use. O(n log n) in the axes.
fn conflicting_axes(axes: &[GridAxis], file: &Path) -> Vec<SweepError> {
    use std::collections::BTreeMap;
    let mut errors = Vec::new();
    // Plain keys: a full path (tables then key) conflicts with an equal path or a prefix.
    let mut full: BTreeMap<Vec<&str>, &str> = BTreeMap::new();
    let mut prefixes: BTreeMap<Vec<&str>, &str> = BTreeMap::new();
    // Array keys: (array, key) -> the `every entry` axis, and (array, key, index) -> axis.
    let mut every: BTreeMap<(&str, &str), &str> = BTreeMap::new();
    let mut first: BTreeMap<(&str, &str), &str> = BTreeMap::new();
    let mut indexed: BTreeMap<(&str, &str, usize), &str> = BTreeMap::new();
    for axis in axes {
        let path = &axis.path;
        let clash = match &path.array {
            Some((array, index)) => {
                let slot = (array.as_str(), path.key.as_str());
                let clash = match index {
                    None => first.get(&slot).copied(),
                    Some(i) => every.get(&slot).or(indexed.get(&(slot.0, slot.1, *i))).copied(),
                };
                first.entry(slot).or_insert(&axis.key);
                match index {
                    None => every.entry(slot).or_insert(&axis.key),
                    Some(i) => indexed.entry((slot.0, slot.1, *i)).or_insert(&axis.key),
                };
                clash
            }
            None => {
                let mut segments: Vec<&str> = path.tables.iter().map(String::as_str).collect();
                segments.push(&path.key);
                let clash = full
                    .get(&segments)
                    .or(prefixes.get(&segments))
                    .or((1..segments.len()).find_map(|n| full.get(&segments[..n])))
                    .copied();
                for n in 1..segments.len() {
                    prefixes.entry(segments[..n].to_vec()).or_insert(&axis.key);
                }
                full.entry(segments).or_insert(&axis.key);
                clash
            }
        };
        if let Some(other) = clash {
            let msg = format!(
                "conflicts with `{other}`: both set the same scenario value; keep one of the two"
            );
            errors.push(SweepError::new(file, &format!("grid.\"{}\"", axis.key), msg));
        }
    }
    errors
}

fn duplicate(values: &[Value]) -> Option<String> {
    let mut seen: Vec<String> = values.iter().map(inline).collect();
    seen.sort();
    seen.windows(2).find(|w| w[0] == w[1]).map(|w| w[0].clone())
}

fn parse_tolerance(table: &Table, file: &Path, errors: &mut Vec<SweepError>) -> Tolerance {
    let mut tol =
        Tolerance { relative: DEFAULT_TOLERANCE_RELATIVE, absolute: DEFAULT_TOLERANCE_ABSOLUTE };
    let check = match table.get("check") {
        None => return tol,
        Some(Value::Table(t)) => t,
        Some(_) => {
            errors.push(SweepError::new(
                file,
                "check",
                "a table with `relative` and/or `absolute`",
            ));
            return tol;
        }
    };
    errors.extend(unknown_keys(check, CHECK_KEYS, "check.", file));
    for (key, slot) in [("relative", &mut tol.relative), ("absolute", &mut tol.absolute)] {
        match check.get(key).map(number) {
            None => {}
            Some(Some(x)) if x >= 0.0 && x.is_finite() => *slot = x,
            Some(_) => errors.push(SweepError::new(file, &format!("check.{key}"), "a number >= 0")),
        }
    }
    tol
}

fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Integer(i) => Some(*i as f64),
        Value::Float(f) => Some(*f),
        _ => None,
    }
}

/// The number of cells of the grid, in checked arithmetic: an error when cells x seeds
/// exceeds [`MAX_RUNS`] (or overflows on the way there).
pub fn cell_count(sweep: &SweepFile) -> Result<usize, String> {
    let too_many = |cells: &str| {
        format!(
            "{cells} cells x {} seeds is more than {MAX_RUNS} runs: remove values from the grid \
             or lower `seeds`",
            sweep.seeds
        )
    };
    let cells = sweep.grid.iter().try_fold(1u64, |cells, axis| {
        u64::try_from(axis.values.len()).ok().and_then(|n| cells.checked_mul(n))
    });
    let Some(cells) = cells else {
        return Err(too_many(&format!("more than {}", u64::MAX)));
    };
    if cells.saturating_mul(u64::from(sweep.seeds)) > MAX_RUNS {
        return Err(too_many(&cells.to_string()));
    }
    usize::try_from(cells).map_err(|_| too_many(&cells.to_string()))
}

/// Applies every combination of grid values (first axis slowest) and the sweep's protocols to
/// the base scenario table.
pub fn expand_grid(sweep: &SweepFile, base: &Table) -> Result<Vec<CellTable>, Vec<SweepError>> {
    let total =
        cell_count(sweep).map_err(|msg| vec![SweepError::new(&sweep.source, "grid", msg)])?;
    let mut base = base.clone();
    if let Some(protocols) = &sweep.protocols {
        let list = protocols.iter().map(|p| Value::String(p.clone())).collect();
        base.insert("protocols".into(), Value::Array(list));
    }
    let mut cells = Vec::new();
    let mut errors = Vec::new();
    for index in 0..total {
        match cell_table(sweep, &base, index) {
            Ok(cell) => cells.push(cell),
            Err(e) => errors.push(e),
        }
        if !errors.is_empty() {
            break; // the same key fails in every cell: report it once
        }
    }
    if errors.is_empty() {
        Ok(cells)
    } else {
        Err(errors)
    }
}

fn cell_table(sweep: &SweepFile, base: &Table, index: usize) -> Result<CellTable, SweepError> {
    let mut table = base.clone();
    let mut params = Vec::new();
    let mut rest = index;
    let mut picks = vec![0; sweep.grid.len()];
    for (i, axis) in sweep.grid.iter().enumerate().rev() {
        picks[i] = rest % axis.values.len();
        rest /= axis.values.len();
    }
    for (axis, pick) in sweep.grid.iter().zip(picks) {
        let value = axis.values[pick].clone();
        set_path(&mut table, &axis.path, value.clone())
            .map_err(|m| SweepError::new(&sweep.source, &format!("grid.\"{}\"", axis.key), m))?;
        params.push((axis.key.clone(), value));
    }
    Ok(CellTable { index, params, table })
}

/// Sets the value a grid path points at, creating missing tables of the schema.
pub fn set_path(root: &mut Table, path: &GridPath, value: Value) -> Result<(), String> {
    let mut table = root;
    for name in &path.tables {
        let entry = table.entry(name.clone()).or_insert_with(|| Value::Table(Table::new()));
        table =
            entry.as_table_mut().ok_or_else(|| format!("`{name}` in the base is not a table"))?;
    }
    let Some((array, index)) = &path.array else {
        table.insert(path.key.clone(), value);
        return Ok(());
    };
    let entries = match table.get_mut(array).and_then(Value::as_array_mut) {
        Some(a) => a,
        None => return Err(format!("the base scenario has no [[{array}]] entries")),
    };
    let count = entries.len();
    let chosen: Vec<&mut Value> = match index {
        Some(i) if *i < count => vec![&mut entries[*i]],
        Some(i) => {
            return Err(format!(
                "index {i} is out of range: the base has {count} [[{array}]] entries (0 to {})",
                count.saturating_sub(1)
            ))
        }
        None => entries.iter_mut().collect(),
    };
    for entry in chosen {
        let t =
            entry.as_table_mut().ok_or_else(|| format!("[[{array}]] entries must be tables"))?;
        t.insert(path.key.clone(), value.clone());
    }
    Ok(())
}

/// The cells' ids, in their order: [`CellTable::id`] (8 hex digits) where no other cell of
/// the grid has the same one, which is nearly always; the cells sharing one get it followed by
/// `-` and their rank in the sorted order of their canonical texts (`63eb95e1-0`,
/// `63eb95e1-1`). Distinct by construction: a suffixed id has a `-`, a plain one has not, and
/// two cells of a grid never have the same canonical text (a grid lists no value twice).
pub fn cell_ids(cells: &[CellTable]) -> Vec<String> {
    use std::collections::BTreeMap;
    let canonicals: Vec<String> = cells.iter().map(CellTable::canonical).collect();
    let short: Vec<String> = cells.iter().map(CellTable::id).collect();
    let mut sharing: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (id, canonical) in short.iter().zip(&canonicals) {
        sharing.entry(id).or_default().push(canonical);
    }
    for group in sharing.values_mut() {
        group.sort_unstable();
    }
    short
        .iter()
        .zip(&canonicals)
        .map(|(id, canonical)| match &sharing[id.as_str()][..] {
            [_] => id.clone(),
            group => {
                let rank = group.binary_search(&canonical.as_str()).unwrap_or_default();
                format!("{id}-{rank}")
            }
        })
        .collect()
}

/// Validates every cell's table with `parse` (`scenario::from_table` in the binary). Scenario
/// errors are reported against the sweep file, naming the cell's grid values.
pub fn build_cells<E, P>(
    sweep: &SweepFile,
    cells: Vec<CellTable>,
    parse: P,
) -> Result<Vec<Cell>, Vec<SweepError>>
where
    E: fmt::Display,
    P: Fn(Table, &Path) -> Result<Scenario, Vec<E>>,
{
    let mut out = Vec::new();
    let ids = cell_ids(&cells);
    for (cell, id) in cells.into_iter().zip(ids) {
        let canonical = cell.canonical();
        let scenario = parse(cell.table.clone(), &sweep.base).map_err(|errs| {
            let at = if canonical.is_empty() {
                "base".to_string()
            } else {
                canonical.replace('\n', ", ")
            };
            errs.iter()
                .map(|e| SweepError::new(&sweep.source, "grid", format!("cell {at}: {e}")))
                .collect::<Vec<_>>()
        })?;
        let params = cell.params.iter().map(|(k, v)| (k.clone(), value_text(v))).collect();
        out.push(Cell { id, index: cell.index, params, canonical, table: cell.table, scenario });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sweep(text: &str) -> SweepFile {
        parse_sweep(text, Path::new("sims/sweeps/s.toml")).unwrap()
    }

    fn errors(text: &str) -> Vec<String> {
        let e = parse_sweep(text, Path::new("s.toml")).unwrap_err();
        e.iter().map(ToString::to_string).collect()
    }

    const BASE: &str = r#"
        name = "crash"
        seed = 7
        [[topic]]
        name = "a"
        partitions = 3
        [[topic]]
        name = "b"
        partitions = 2
        [group]
        members = 3
    "#;

    #[test]
    fn fnv_matches_published_vectors() {
        // FNV-1a 64 test vectors from the FNV reference (isthe.com/chongo/tech/comp/fnv).
        assert_eq!(fnv1a64(b"", FNV_OFFSET), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a", FNV_OFFSET), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar", FNV_OFFSET), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn kafka_properties_keep_their_dots() {
        let p = resolve_grid_key("consumer.config.session.timeout.ms").unwrap();
        assert_eq!(p.tables, vec!["consumer", "config"]);
        assert_eq!(p.key, "session.timeout.ms");
        let p = resolve_grid_key("broker.config.group.initial.rebalance.delay.ms").unwrap();
        assert_eq!(p.tables, vec!["broker", "config"]);
        assert_eq!(p.key, "group.initial.rebalance.delay.ms");
        let p = resolve_grid_key("group.members").unwrap();
        assert_eq!((p.tables, p.key), (vec!["group".to_string()], "members".to_string()));
        let p = resolve_grid_key("duration").unwrap();
        assert_eq!((p.tables.len(), p.key.as_str()), (0, "duration"));
        let p = resolve_grid_key("topic.1.rate").unwrap();
        assert_eq!(p.array, Some(("topic".to_string(), Some(1))));
        let p = resolve_grid_key("topic.rate").unwrap();
        assert_eq!(p.array, Some(("topic".to_string(), None)));
        assert!(resolve_grid_key("seed").is_err());
        assert!(resolve_grid_key("group..members").is_err());
    }

    #[test]
    fn grid_expands_first_axis_slowest() {
        let s = sweep(
            r#"base = "../crash.toml"
               seeds = 4
               protocols = ["eager", "cooperative"]
               [grid]
               "consumer.config.session.timeout.ms" = [10000, 30000, 45000]
               "group.members" = [3, 6]"#,
        );
        assert_eq!(s.name, "s");
        assert_eq!(s.base, Path::new("sims/sweeps/../crash.toml"));
        let cells = expand_grid(&s, &BASE.parse().unwrap()).unwrap();
        // 3 x 2 = 6 cells; keys sorted: consumer... before group..., so index 1 = (10000, 6).
        assert_eq!(cells.len(), 6);
        let c = &cells[1];
        assert_eq!(c.canonical(), "consumer.config.session.timeout.ms=10000\ngroup.members=6");
        assert_eq!(c.table["consumer"]["config"]["session.timeout.ms"].as_integer(), Some(10000));
        assert_eq!(c.table["group"]["members"].as_integer(), Some(6));
        assert_eq!(c.table["protocols"].as_array().unwrap().len(), 2);
        assert_eq!(
            cells[5].canonical(),
            "consumer.config.session.timeout.ms=45000\ngroup.members=6"
        );
    }

    #[test]
    fn array_keys_set_one_or_every_entry() {
        let s = sweep(
            "base = \"b.toml\"\n[grid]\n\"topic.rate\" = [5.0]\n\"topic.1.partitions\" = [9]",
        );
        let cells = expand_grid(&s, &BASE.parse().unwrap()).unwrap();
        let topics = cells[0].table["topic"].as_array().unwrap();
        assert_eq!(topics[0]["rate"].as_float(), Some(5.0));
        assert_eq!(topics[1]["rate"].as_float(), Some(5.0));
        assert_eq!(topics[0]["partitions"].as_integer(), Some(3));
        assert_eq!(topics[1]["partitions"].as_integer(), Some(9));
        let s = sweep("base = \"b.toml\"\n[grid]\n\"topic.2.rate\" = [5.0]");
        let err = expand_grid(&s, &BASE.parse().unwrap()).unwrap_err();
        assert!(err[0].to_string().contains("index 2 is out of range: the base has 2 [[topic]]"));
    }

    #[test]
    fn seeds_depend_on_cell_values_not_position() {
        let small = sweep("base = \"b\"\n[grid]\n\"group.members\" = [3, 6]");
        let big = sweep("base = \"b\"\n[grid]\n\"group.members\" = [1, 6, 3]");
        let base: Table = BASE.parse().unwrap();
        let a = expand_grid(&small, &base).unwrap();
        let b = expand_grid(&big, &base).unwrap();
        // members=6 is index 1 in both; members=3 is index 0 in `small`, index 2 in `big`.
        assert_eq!(a[0].id(), b[2].id());
        assert_eq!(a[1].id(), b[1].id());
        assert_ne!(a[0].id(), a[1].id());
        let seed = |c: &CellTable, r| run_seed(7, &c.canonical(), r);
        assert_eq!(seed(&a[0], 3), seed(&b[2], 3));
        assert_ne!(seed(&a[0], 0), seed(&a[0], 1));
        assert_ne!(run_seed(7, "x=1", 0), run_seed(8, "x=1", 0));
    }

    #[test]
    fn bad_files_name_file_key_and_allowed_values() {
        let e = errors("base = \"b\"\nseed = 3");
        assert_eq!(e, vec!["s.toml: key `seed`: unknown key (did you mean `seeds`?); allowed: name, base, seeds, protocols, grid, check"]);
        let e = errors("base = \"b\"\nseeds = 0");
        assert_eq!(e, vec!["s.toml: key `seeds`: 0 is not allowed: an integer from 1 to 100000 (replications per cell)"]);
        let e = errors("seeds = 2");
        assert!(e[0].starts_with("s.toml: key `base`: missing"), "{e:?}");
        let e = errors("base = \"b\"\n[grid]\n\"group.members\" = 3");
        assert!(e[0].contains("key `grid.\"group.members\"`: 3 is not a list"), "{e:?}");
        let e = errors("base = \"b\"\n[grid]\n\"seed\" = [1, 2]");
        assert!(e[0].contains("cannot be swept"), "{e:?}");
        let e = errors("base = \"b\"\n[grid]\n\"group.members\" = [3, 3]");
        assert!(e[0].contains("value 3 is listed twice"), "{e:?}");
        let e = errors("base = \"b\"\n[check]\nrelative = -1");
        assert_eq!(e, vec!["s.toml: key `check.relative`: a number >= 0"]);
        let e = errors("base = \"b\"\nname = \"a/b\"");
        assert!(e[0].contains("key `name`"), "{e:?}");
    }

    #[test]
    fn bracketed_indexes_are_the_dotted_form() {
        assert_eq!(brackets_as_dots("event[0].duration"), "event.0.duration");
        assert_eq!(brackets_as_dots("topic[12].rate"), "topic.12.rate");
        assert_eq!(brackets_as_dots("a[x].b"), "a[x].b");
        assert_eq!(
            resolve_grid_key("event[0].duration").unwrap(),
            resolve_grid_key("event.0.duration").unwrap()
        );
    }

    #[test]
    fn no_grid_means_one_cell() {
        let s = sweep("base = \"b\"\nseeds = 3\n[check]\nrelative = 0.1");
        assert_eq!(s.tolerance, Tolerance { relative: 0.1, absolute: DEFAULT_TOLERANCE_ABSOLUTE });
        let cells = expand_grid(&s, &BASE.parse().unwrap()).unwrap();
        assert_eq!(cells.len(), 1);
        assert_eq!(cells[0].canonical(), "");
    }

    #[test]
    fn strings_are_bare_in_csv_columns() {
        assert_eq!(value_text(&Value::String("45s".into())), "45s");
        assert_eq!(value_text(&Value::Integer(45000)), "45000");
        assert_eq!(value_text(&Value::Float(0.5)), "0.5");
        assert_eq!(value_text(&Value::Boolean(true)), "true");
    }

    fn grid_of(axes: &[(&str, usize)]) -> String {
        let mut text = String::from("base = \"b\"\n[grid]\n");
        for (key, n) in axes {
            let values: Vec<String> = (0..*n).map(|v| v.to_string()).collect();
            text.push_str(&format!("\"{key}\" = [{}]\n", values.join(", ")));
        }
        text
    }

    #[test]
    fn cell_counts_that_overflow_are_refused_not_wrapped() {
        let base: Table = BASE.parse().unwrap();
        // 64 keys x 2 values: 2^64 cells, which a wrapping product made 0.
        let keys: Vec<String> = (0..64).map(|i| format!("consumer.config.k{i}")).collect();
        let axes: Vec<(&str, usize)> = keys.iter().map(|k| (k.as_str(), 2)).collect();
        let err = expand_grid(&sweep(&grid_of(&axes)), &base).unwrap_err();
        assert_eq!(
            err[0].to_string(),
            "sims/sweeps/s.toml: key `grid`: more than 18446744073709551615 cells x 1 seeds is more than 1000000 \
             runs: remove values from the grid or lower `seeds`"
        );
        // 2^64 x 101 cells (a wrapping product: 0).
        let mut axes = axes.clone();
        axes.push(("consumer.config.x", 101));
        let err = expand_grid(&sweep(&grid_of(&axes)), &base).unwrap_err();
        assert!(err[0].message.starts_with("more than 18446744073709551615 cells"), "{err:?}");
        let err = expand_grid(&sweep(&grid_of(&axes[40..])), &base).unwrap_err();
        assert!(err[0].message.starts_with("1694498816 cells x 1 seeds"), "{err:?}");
        // Cells within the limit, seeds past it.
        let text = grid_of(&[("consumer.config.a", 1000), ("consumer.config.b", 100)]);
        let mut s = sweep(&text);
        assert_eq!(cell_count(&s), Ok(100_000));
        s.seeds = 11;
        assert!(cell_count(&s).unwrap_err().starts_with("100000 cells x 11 seeds"));
        s.seeds = 10;
        assert_eq!(cell_count(&s), Ok(100_000));
    }

    #[test]
    fn cells_whose_short_ids_collide_get_distinct_ids() {
        // Two cells of this grid hash to the same 8 hex digits (63eb95e1).
        let s = sweep(
            "base = \"b\"\n[grid]\n\"group.members\" = [24, 40]\n\"topic.rate\" = [67.0, 660.0]",
        );
        let cells = expand_grid(&s, &BASE.parse().unwrap()).unwrap();
        let short: Vec<String> = cells.iter().map(CellTable::id).collect();
        let ids = cell_ids(&cells);
        let colliding: Vec<usize> = (0..4).filter(|&i| short[i] == "63eb95e1").collect();
        assert_eq!(colliding.len(), 2, "{short:?}");
        let mut distinct = ids.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), 4, "{ids:?}");
        for i in 0..4 {
            if colliding.contains(&i) {
                assert!(ids[i].starts_with("63eb95e1-"), "{ids:?}");
            } else {
                assert_eq!(ids[i], short[i], "cells that do not collide keep their id");
            }
        }
        // The suffix ranks the canonical texts, so it does not depend on the grid's order.
        let reversed = sweep(
            "base = \"b\"\n[grid]\n\"group.members\" = [40, 24]\n\"topic.rate\" = [660.0, 67.0]",
        );
        let again = expand_grid(&reversed, &BASE.parse().unwrap()).unwrap();
        let by_canonical = |cs: &[CellTable], ids: &[String]| {
            let mut v: Vec<(String, String)> =
                cs.iter().map(CellTable::canonical).zip(ids.iter().cloned()).collect();
            v.sort();
            v
        };
        assert_eq!(by_canonical(&cells, &ids), by_canonical(&again, &cell_ids(&again)));
    }

    #[test]
    fn conflicting_grid_keys_are_refused() {
        let e = errors("base = \"b\"\n[grid]\n\"topic.rate\" = [1.0]\n\"topic.0.rate\" = [2.0]");
        assert_eq!(
            e,
            vec![
                "s.toml: key `grid.\"topic.rate\"`: conflicts with `topic.0.rate`: both set \
                  the same scenario value; keep one of the two"
            ]
        );
        let e = errors("base = \"b\"\n[grid]\n\"topic.0.rate\" = [1.0]\n\"topic.00.rate\" = [2.0]");
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(e[0].contains("`grid.\"topic.00.rate\"`: conflicts with `topic.0.rate`"), "{e:?}");
        let e = errors(
            "base = \"b\"\n[grid]\n\"consumer.config\" = [1]\n\"consumer.config.a.b\" = [2]",
        );
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(e[0].contains("conflicts with `consumer.config`"), "{e:?}");
        // Different entries, different keys: no conflict.
        sweep("base = \"b\"\n[grid]\n\"topic.0.rate\" = [1.0]\n\"topic.1.rate\" = [2.0]\n\"topic.partitions\" = [3]");
    }
}
