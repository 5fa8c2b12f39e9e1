//! Fuzz target: a sweep file and its base scenario, separated by a line `---`. Parsing the
//! sweep, expanding its grid over the base and validating each cell must return results or
//! errors, never panic. Grids of more than 1,000 cells are counted but not expanded (each
//! cell is a whole scenario: the fuzzer would spend its time validating copies).
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::Path;

/// Cells expanded at most per input.
const MAX_CELLS: usize = 1_000;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (sweep_text, base_text) = text.split_once("\n---\n").unwrap_or((text, ""));
    let Ok(sweep) = scenario::sweep::parse_sweep(sweep_text, Path::new("s.toml")) else { return };
    let Ok(cells) = scenario::sweep::cell_count(&sweep) else { return };
    let Ok(base) = base_text.parse::<toml::Table>() else { return };
    if cells > MAX_CELLS {
        return;
    }
    let Ok(tables) = scenario::sweep::expand_grid(&sweep, &base) else { return };
    for cell in tables {
        let _ = cell.id();
        let _ = scenario::from_table(cell.table, Path::new("base.toml"));
    }
});
