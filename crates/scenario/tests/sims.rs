//! Every scenario file under `sims/` (recursively) must validate: they are the project's
//! documented examples and the inputs of `run` and `check`.

use std::path::{Path, PathBuf};

/// All `*.toml` files under `dir`, sorted.
fn toml_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).expect("readable folder") {
            let path = entry.expect("readable entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "toml") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// Sweep files (DESIGN section 9) name a `base` scenario; they are checked by the sweep tests.
fn is_sweep(text: &str) -> bool {
    text.parse::<toml::Table>().is_ok_and(|t| t.contains_key("base") && t.contains_key("grid"))
}

#[test]
fn every_scenario_in_sims_validates() {
    let sims = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../sims");
    let mut checked = 0;
    let mut failures = Vec::new();
    for path in toml_files(&sims) {
        let text = std::fs::read_to_string(&path).expect("readable file");
        if is_sweep(&text) {
            continue;
        }
        match scenario::load(&path) {
            Ok(s) => {
                assert!(!s.protocols.is_empty(), "{}", path.display());
                checked += 1;
            }
            Err(errors) => failures.extend(errors.iter().map(ToString::to_string)),
        }
    }
    assert!(failures.is_empty(), "invalid files in sims/:\n{}", failures.join("\n"));
    // The six main examples of issue 2 at least.
    assert!(checked >= 6, "only {checked} scenario files found under {}", sims.display());
}

#[test]
fn the_main_examples_exist_and_open_with_their_question() {
    let sims = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../sims");
    for name in ["scale-out", "crash", "crash-restart", "rolling-restart", "stall", "gc-pause"] {
        let path = sims.join(format!("{name}.toml"));
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(
            text.starts_with("# Question"),
            "{} must open with the question it answers",
            path.display()
        );
        let scenario = scenario::load(&path).unwrap();
        assert_eq!(scenario.name, name);
        let protocols: Vec<String> = scenario.protocols.iter().map(ToString::to_string).collect();
        assert_eq!(
            protocols,
            [
                "eager:range",
                "cooperative:cooperative-sticky",
                "eager:range+static",
                "consumer:uniform"
            ],
            "{name}"
        );
    }
}
