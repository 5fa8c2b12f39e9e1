//! Every malformed scenario under `tests/bad/` is rejected with exactly the messages its
//! opening `# expect: ...` lines give, in order (the file path prefix left out).
//!
//! The expected texts were checked by hand against each file: the line and column point at
//! the offending value (lines count the `# expect` lines themselves), the key is the dotted
//! path, and the message says what is wrong and what is allowed.

use std::path::{Path, PathBuf};

fn bad_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/bad exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    files
}

fn expectations(text: &str) -> Vec<&str> {
    text.lines().map_while(|line| line.strip_prefix("# expect: ")).collect()
}

#[test]
fn each_bad_file_gives_exactly_its_expected_messages() {
    let files = bad_files();
    assert!(files.len() >= 20, "only {} malformed files", files.len());
    let mut mismatches = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let expected = expectations(&text);
        assert!(!expected.is_empty(), "{} has no `# expect:` line", path.display());
        let prefix = format!("{}:", path.display());
        let actual: Vec<String> = match scenario::parse_str(&text, path) {
            Ok(_) => vec!["<valid>".to_string()],
            Err(errors) => errors
                .iter()
                .map(|e| e.to_string().trim_start_matches(&prefix).trim_start().to_string())
                .collect(),
        };
        if actual != expected {
            mismatches.push(format!(
                "{}\n  expected: {expected:#?}\n  actual:   {actual:#?}",
                path.display()
            ));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

#[test]
fn load_reads_the_same_file_and_names_it() {
    let path = bad_files().into_iter().find(|p| p.ends_with("zero-partitions.toml")).unwrap();
    let errors = scenario::load(&path).unwrap_err();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].file, path);
    assert_eq!(errors[0].key, "topic[0].partitions");
    // `partitions = 0` is on line 8 (one `# expect` line, then line 7 of the scenario); the
    // value starts after `partitions = `, column 14.
    assert_eq!((errors[0].line, errors[0].col), (Some(8), Some(14)));
}

#[test]
fn a_missing_file_is_an_error_not_a_panic() {
    let errors = scenario::load(Path::new("/nonexistent/scenario.toml")).unwrap_err();
    assert_eq!(errors.len(), 1);
    assert!(
        errors[0].to_string().starts_with("/nonexistent/scenario.toml: cannot read the file"),
        "{}",
        errors[0]
    );
}
