//! Reading typed values out of a [`Node`] tree while collecting every problem.
//!
//! A [`Ctx`] owns the error list and knows how to turn a node's span into a line and column.
//! [`Section`] is one table being read: it hands out its entries by key and, when done, reports
//! every key nobody asked for as unknown, with the nearest allowed key suggested (strsim).
//! Getters return `None` after recording an error, so validation continues past a bad value.

use crate::error::{LineIndex, ScenarioError};
use crate::limits::MAX_DURATION;
use crate::tree::{Kind, Node};
use sim_core::SimTime;
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;

/// Collects errors for one file.
pub(crate) struct Ctx<'t> {
    file: &'t Path,
    lines: Option<LineIndex<'t>>,
    /// Everything found so far, in the order found.
    pub errors: Vec<ScenarioError>,
}

impl<'t> Ctx<'t> {
    /// A context for `file`; `text` (when the tree came from text) gives lines and columns.
    pub fn new(file: &'t Path, text: Option<&'t str>) -> Ctx<'t> {
        Ctx { file, lines: text.map(LineIndex::new), errors: Vec::new() }
    }

    /// Records one problem at `span` (or without a position).
    pub fn error(
        &mut self,
        span: Option<&Range<usize>>,
        key: &str,
        message: impl Into<String>,
        allowed: Option<String>,
    ) {
        let position = match (&self.lines, span) {
            (Some(lines), Some(span)) => Some(lines.position(span)),
            _ => None,
        };
        self.errors.push(ScenarioError {
            file: self.file.to_path_buf(),
            line: position.map(|p| p.0),
            col: position.map(|p| p.1),
            key: key.to_string(),
            message: message.into(),
            allowed,
        });
    }

    /// Records one problem about `node`.
    pub fn at(
        &mut self,
        node: &Node,
        key: &str,
        message: impl Into<String>,
        allowed: Option<&str>,
    ) {
        self.error(node.span.as_ref(), key, message, allowed.map(str::to_string));
    }

    /// Records "expected X, found Y" about `node`.
    pub fn wrong_type(&mut self, node: &Node, key: &str, expected: &str) {
        let found = describe(node);
        self.at(node, key, format!("expected {expected}, found {found}"), None);
    }
}

/// `a string "x"`, `an integer 5`, `a table`: what a user wrote, for messages.
fn describe(node: &Node) -> String {
    match &node.kind {
        Kind::Str(s) => format!("the string {s:?}"),
        Kind::Int(i) => format!("the integer {i}"),
        Kind::Float(f) => format!("the float {f}"),
        Kind::Bool(b) => format!("the boolean {b}"),
        Kind::Datetime(d) => format!("the datetime {d}"),
        other => other.type_name().to_string(),
    }
}

/// The dotted path of `key` under `prefix`, quoting keys that contain dots or spaces.
pub(crate) fn join_key(prefix: &str, key: &str) -> String {
    let bare =
        !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    let key = if bare { key.to_string() } else { format!("{key:?}") };
    if prefix.is_empty() {
        key
    } else {
        format!("{prefix}.{key}")
    }
}

/// The candidate closest to `word`, when it is close enough to be a plausible typo.
pub(crate) fn suggest<'c>(
    word: &str,
    candidates: impl IntoIterator<Item = &'c str>,
) -> Option<&'c str> {
    let word_lower = word.to_ascii_lowercase();
    let limit = (word.chars().count() / 3).max(2);
    candidates
        .into_iter()
        .map(|c| (strsim::damerau_levenshtein(&word_lower, &c.to_ascii_lowercase()), c))
        .filter(|(distance, _)| *distance <= limit)
        .min()
        .map(|(_, c)| c)
}

/// "unknown X `word`; did you mean `y`?" with the suggestion when there is one.
pub(crate) fn unknown_message<'c>(
    what: &str,
    word: &str,
    candidates: impl IntoIterator<Item = &'c str>,
) -> String {
    match suggest(word, candidates) {
        Some(near) => format!("unknown {what} `{word}`; did you mean `{near}`?"),
        None => format!("unknown {what} `{word}`"),
    }
}

/// One table being read. Keys taken with [`Section::take`] are known; [`Section::finish`]
/// reports the rest.
pub(crate) struct Section<'n> {
    /// The dotted path of the table (`""` for the root).
    pub path: String,
    /// The table node itself.
    pub node: &'n Node,
    entries: BTreeMap<&'n str, (&'n Node, bool)>,
}

impl<'n> Section<'n> {
    /// Opens `node` as a table at `path`; records an error and returns `None` if it is not one.
    pub fn open(ctx: &mut Ctx<'_>, node: &'n Node, path: &str) -> Option<Section<'n>> {
        let Kind::Table(table) = &node.kind else {
            ctx.wrong_type(node, path, "a table");
            return None;
        };
        let entries = table.iter().map(|(k, v)| (k.as_str(), (v, false))).collect();
        Some(Section { path: path.to_string(), node, entries })
    }

    /// The dotted path of one of this table's keys.
    pub fn key(&self, key: &str) -> String {
        join_key(&self.path, key)
    }

    /// Takes `key` (marking it known); `None` when absent.
    pub fn take(&mut self, key: &str) -> Option<&'n Node> {
        let entry = self.entries.get_mut(key)?;
        entry.1 = true;
        Some(entry.0)
    }

    /// Every entry not taken yet, in key order, marking them taken.
    pub fn take_rest(&mut self) -> Vec<(&'n str, &'n Node)> {
        let mut rest = Vec::new();
        for (key, entry) in self.entries.iter_mut() {
            if !entry.1 {
                entry.1 = true;
                rest.push((*key, entry.0));
            }
        }
        rest
    }

    /// Takes `key`, recording "missing" when absent.
    pub fn require(&mut self, ctx: &mut Ctx<'_>, key: &str, what: &str) -> Option<&'n Node> {
        let node = self.take(key);
        if node.is_none() {
            let path = self.key(key);
            // A missing root key has no better place than the whole file: no position then.
            let span = if self.path.is_empty() { None } else { self.node.span.as_ref() };
            ctx.error(span, &path, format!("missing; write {what}"), None);
        }
        node
    }

    /// Reports every key not taken as unknown, suggesting the nearest of `allowed`.
    pub fn finish(self, ctx: &mut Ctx<'_>, allowed: &[&str]) {
        for (key, (node, taken)) in &self.entries {
            if !taken {
                let message = unknown_message("key", key, allowed.iter().copied());
                ctx.at(node, &self.key(key), message, Some(&allowed.join(", ")));
            }
        }
    }
}

/// A human duration string (`"45s"`) of at most [`MAX_DURATION`], so that adding two never
/// overflows; bare numbers are rejected because they have no unit.
pub(crate) fn duration(ctx: &mut Ctx<'_>, node: &Node, key: &str) -> Option<SimTime> {
    match &node.kind {
        Kind::Str(text) => match text.parse::<SimTime>() {
            Ok(t) if t > MAX_DURATION => {
                let allowed = "at most 30 days (\"30days\")";
                ctx.at(node, key, format!("`{text}` is longer than the limit"), Some(allowed));
                None
            }
            Ok(t) => Some(t),
            Err(e) => {
                ctx.at(node, key, e.to_string(), None);
                None
            }
        },
        Kind::Int(_) | Kind::Float(_) => {
            let message = format!(
                "expected a duration string with a unit, found the number {}; write e.g. \"{}s\" or \"{}ms\"",
                describe_number(node),
                describe_number(node),
                describe_number(node)
            );
            ctx.at(node, key, message, None);
            None
        }
        _ => {
            ctx.wrong_type(node, key, "a duration string such as \"250ms\", \"45s\" or \"5m\"");
            None
        }
    }
}

fn describe_number(node: &Node) -> String {
    match node.kind {
        Kind::Int(i) => i.to_string(),
        Kind::Float(f) => f.to_string(),
        _ => String::new(),
    }
}

/// A duration that must be strictly positive.
pub(crate) fn positive_duration(ctx: &mut Ctx<'_>, node: &Node, key: &str) -> Option<SimTime> {
    let t = duration(ctx, node, key)?;
    if t.is_zero() {
        ctx.at(node, key, "must be longer than zero", Some("a duration > 0, e.g. \"1s\""));
        return None;
    }
    Some(t)
}

/// An integer in `min..=max`.
pub(crate) fn int_in(ctx: &mut Ctx<'_>, node: &Node, key: &str, min: i64, max: i64) -> Option<i64> {
    let Kind::Int(value) = node.kind else {
        ctx.wrong_type(node, key, "an integer");
        return None;
    };
    if value < min || value > max {
        let message = format!("{value} is out of range");
        ctx.at(node, key, message, Some(&format!("an integer from {min} to {max}")));
        return None;
    }
    Some(value)
}

/// An integer in `min..=max` as `u32` (the range must fit).
pub(crate) fn u32_in(ctx: &mut Ctx<'_>, node: &Node, key: &str, min: u32, max: u32) -> Option<u32> {
    int_in(ctx, node, key, i64::from(min), i64::from(max)).and_then(|v| u32::try_from(v).ok())
}

/// A finite, non-negative number (integer or float).
pub(crate) fn non_negative(ctx: &mut Ctx<'_>, node: &Node, key: &str) -> Option<f64> {
    let value = match node.kind {
        Kind::Int(i) => i as f64,
        Kind::Float(f) => f,
        _ => {
            ctx.wrong_type(node, key, "a number");
            return None;
        }
    };
    if !value.is_finite() || value < 0.0 {
        ctx.at(node, key, format!("{value} is not allowed"), Some("a finite number >= 0"));
        return None;
    }
    Some(value)
}

/// A boolean.
pub(crate) fn boolean(ctx: &mut Ctx<'_>, node: &Node, key: &str) -> Option<bool> {
    match node.kind {
        Kind::Bool(b) => Some(b),
        _ => {
            ctx.wrong_type(node, key, "true or false");
            None
        }
    }
}

/// A string.
pub(crate) fn string<'n>(ctx: &mut Ctx<'_>, node: &'n Node, key: &str) -> Option<&'n str> {
    match &node.kind {
        Kind::Str(s) => Some(s),
        _ => {
            ctx.wrong_type(node, key, "a string");
            None
        }
    }
}

/// One of `choices` (a string); returns its index.
pub(crate) fn choice(ctx: &mut Ctx<'_>, node: &Node, key: &str, choices: &[&str]) -> Option<usize> {
    let text = string(ctx, node, key)?;
    if let Some(index) = choices.iter().position(|c| *c == text) {
        return Some(index);
    }
    let message = unknown_message("value", text, choices.iter().copied());
    ctx.at(node, key, message, Some(&choices.join(", ")));
    None
}

/// An array; records an error when `node` is something else.
pub(crate) fn array<'n>(ctx: &mut Ctx<'_>, node: &'n Node, key: &str) -> Option<&'n [Node]> {
    match &node.kind {
        Kind::Array(items) => Some(items),
        _ => {
            ctx.wrong_type(node, key, "an array");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::parse_text;
    use std::path::PathBuf;

    #[test]
    fn suggestions_pick_the_nearest_plausible_name() {
        let keys = ["duration", "seed", "protocols", "name"];
        assert_eq!(suggest("duraton", keys), Some("duration"));
        assert_eq!(suggest("protocol", keys), Some("protocols"));
        assert_eq!(suggest("completely-different", keys), None);
    }

    #[test]
    fn keys_with_dots_are_quoted() {
        assert_eq!(
            join_key("consumer.config", "session.timeout.ms"),
            "consumer.config.\"session.timeout.ms\""
        );
        assert_eq!(join_key("", "group"), "group");
        assert_eq!(join_key("event[2]", "restart_after"), "event[2].restart_after");
    }

    #[test]
    fn unknown_keys_are_reported_with_position_and_suggestion() {
        let text = "name = \"x\"\nduraton = \"5m\"\n";
        let root = parse_text(text).unwrap();
        let file = PathBuf::from("f.toml");
        let mut ctx = Ctx::new(&file, Some(text));
        let mut section = Section::open(&mut ctx, &root, "").unwrap();
        assert!(section.take("name").is_some());
        section.finish(&mut ctx, &["name", "duration"]);
        assert_eq!(ctx.errors.len(), 1);
        assert_eq!(
            ctx.errors[0].to_string(),
            "f.toml:2:11: duraton: unknown key `duraton`; did you mean `duration`?; allowed: name, duration"
        );
    }

    #[test]
    fn bare_numbers_are_not_durations() {
        let root = parse_text("d = 45\n").unwrap();
        let Kind::Table(t) = &root.kind else { panic!() };
        let file = PathBuf::from("f.toml");
        let mut ctx = Ctx::new(&file, None);
        assert_eq!(duration(&mut ctx, &t["d"], "d"), None);
        assert!(ctx.errors[0].message.contains("write e.g. \"45s\""), "{}", ctx.errors[0]);
    }
}
