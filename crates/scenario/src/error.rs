//! `ScenarioError`: one problem found in a scenario file, with where it is and what is allowed.
//!
//! Display is `FILE:LINE:COL: KEY: what is wrong; allowed: ...`; the line and column are left
//! out when unknown (tables built in memory by sweeps), the `; allowed:` part when there is
//! nothing useful to list.

use std::fmt;
use std::ops::Range;
use std::path::PathBuf;

/// One problem in a scenario file. Loading collects all of them, not just the first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    /// The file the scenario came from.
    pub file: PathBuf,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// 1-based column (in characters), when known.
    pub col: Option<usize>,
    /// The dotted key the problem is about, e.g. `consumer.config."session.timeout.ms"` or
    /// `event[2].member`; empty for a problem with the file itself.
    pub key: String,
    /// What is wrong.
    pub message: String,
    /// What would be accepted, when that can be listed.
    pub allowed: Option<String>,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(col) = self.col {
                write!(f, ":{col}")?;
            }
        }
        f.write_str(": ")?;
        if !self.key.is_empty() {
            write!(f, "{}: ", self.key)?;
        }
        f.write_str(&self.message)?;
        if let Some(allowed) = &self.allowed {
            write!(f, "; allowed: {allowed}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ScenarioError {}

/// Maps byte offsets of one text to 1-based (line, column) pairs.
#[derive(Clone, Debug)]
pub(crate) struct LineIndex<'a> {
    text: &'a str,
}

impl<'a> LineIndex<'a> {
    /// An index over `text`.
    pub fn new(text: &'a str) -> LineIndex<'a> {
        LineIndex { text }
    }

    /// The 1-based line and character column of the start of `span`.
    pub fn position(&self, span: &Range<usize>) -> (usize, usize) {
        let offset = span.start.min(self.text.len());
        let before = self.text.get(..offset).unwrap_or(self.text);
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let col = before[line_start..].chars().count() + 1;
        (line, col)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_with_and_without_position() {
        let mut e = ScenarioError {
            file: PathBuf::from("sims/x.toml"),
            line: Some(4),
            col: Some(7),
            key: "group.members".into(),
            message: "expected an integer, found a string".into(),
            allowed: Some("0..=100000".into()),
        };
        assert_eq!(
            e.to_string(),
            "sims/x.toml:4:7: group.members: expected an integer, found a string; allowed: 0..=100000"
        );
        e.line = None;
        e.allowed = None;
        assert_eq!(
            e.to_string(),
            "sims/x.toml: group.members: expected an integer, found a string"
        );
    }

    #[test]
    fn positions_are_one_based_lines_and_char_columns() {
        let text = "a = 1\nbé = \"x\"\n";
        let index = LineIndex::new(text);
        assert_eq!(index.position(&(0..1)), (1, 1));
        // Line 2 starts at byte 6; `bé = ` is 6 bytes (é takes two) but 5 characters, so `"x"`
        // starts at byte 12, column 6.
        assert_eq!(index.position(&(12..15)), (2, 6));
    }
}
