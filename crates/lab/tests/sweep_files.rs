//! The committed sweep files in sims/sweeps/ load and validate: every cell is a valid scenario
//! and the grid has the size the file promises.

use lab::sweep::SweepPlan;
use std::path::Path;

fn plan(name: &str) -> SweepPlan {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../sims/sweeps").join(name);
    SweepPlan::load(&path, None, "test", scenario::from_table)
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn committed_sweeps_are_valid() {
    // (file, cells, protocols): runs = cells x 10 seeds x protocols.
    for (file, cells, protocols) in [
        ("session-timeout-vs-protocol.toml", 5, 5),
        ("auto-commit-vs-protocol.toml", 5, 5),
        ("group-size-vs-protocol.toml", 4, 5),
    ] {
        let p = plan(file);
        assert_eq!(p.cells.len(), cells, "{file}");
        assert_eq!(p.manifest.cells[0].protocols.len(), protocols, "{file}");
        assert_eq!(p.runs().len(), cells * 10 * protocols, "{file}");
    }
    let p = plan("group-size-vs-protocol.toml");
    assert_eq!(p.manifest.cells[3].protocols[2], "cooperative:cooperative-sticky");
    assert_eq!(p.cells[3].scenario.group.members, 8);
}
