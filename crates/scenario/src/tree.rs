//! A TOML value tree that remembers where each value was written.
//!
//! `toml::Value` drops positions, so [`parse_text`] deserializes the document into [`Node`]s
//! through `toml::Spanned` at every level (toml 0.8 honours `Spanned` inside `deserialize_any`),
//! and [`from_value`] turns an already-built `toml::Table` (a sweep after its overrides) into the
//! same tree without positions. Validation then reads one tree type either way.

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;

/// The key serde uses to smuggle a TOML datetime through `deserialize_any`.
const DATETIME_KEY: &str = "$__toml_private_datetime";

/// One TOML value and the byte range of its text, when it came from text.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Node {
    /// Byte range in the source text; `None` for tables built in memory.
    pub span: Option<Range<usize>>,
    /// The value.
    pub kind: Kind,
}

/// The TOML value kinds.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Kind {
    /// A string.
    Str(String),
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A boolean.
    Bool(bool),
    /// A datetime, as written (never valid in a scenario, kept for the message).
    Datetime(String),
    /// An array (also an array of tables).
    Array(Vec<Node>),
    /// A table; keys in sorted order (validation order does not depend on file order).
    Table(BTreeMap<String, Node>),
}

impl Node {
    /// The entry `key` when this node is a table that has it.
    pub fn get(&self, key: &str) -> Option<&Node> {
        match &self.kind {
            Kind::Table(t) => t.get(key),
            _ => None,
        }
    }
}

impl Kind {
    /// The TOML type name, for "expected X, found Y" messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Kind::Str(_) => "a string",
            Kind::Int(_) => "an integer",
            Kind::Float(_) => "a float",
            Kind::Bool(_) => "a boolean",
            Kind::Datetime(_) => "a datetime",
            Kind::Array(_) => "an array",
            Kind::Table(_) => "a table",
        }
    }
}

/// Parses TOML text into a positioned tree, or returns toml's message and the error's span.
pub(crate) fn parse_text(text: &str) -> Result<Node, (String, Option<Range<usize>>)> {
    let root: Spannable = toml::from_str(text).map_err(|e| (e.message().to_string(), e.span()))?;
    Ok(root.0)
}

/// Converts an in-memory TOML table (no positions) into a tree.
pub(crate) fn from_table(table: toml::Table) -> Node {
    from_value(toml::Value::Table(table))
}

/// Converts an in-memory TOML value (no positions) into a tree.
pub(crate) fn from_value(value: toml::Value) -> Node {
    let kind = match value {
        toml::Value::String(s) => Kind::Str(s),
        toml::Value::Integer(i) => Kind::Int(i),
        toml::Value::Float(f) => Kind::Float(f),
        toml::Value::Boolean(b) => Kind::Bool(b),
        toml::Value::Datetime(d) => Kind::Datetime(d.to_string()),
        toml::Value::Array(items) => Kind::Array(items.into_iter().map(from_value).collect()),
        toml::Value::Table(t) => {
            Kind::Table(t.into_iter().map(|(k, v)| (k, from_value(v))).collect())
        }
    };
    Node { span: None, kind }
}

// serde_spanned's protocol (serde_spanned 0.6 `spanned.rs`): a deserializer that knows spans
// answers `deserialize_struct(NAME, [START, END, VALUE])` with a three-entry map. Implicit
// tables (`[a.b]` creates `a` without writing it) have no span and answer with their entries,
// so `toml::Spanned<T>` fails on them; `Spannable` accepts both answers.
const SPANNED_NAME: &str = "$__serde_spanned_private_Spanned";
const SPANNED_START: &str = "$__serde_spanned_private_start";
const SPANNED_END: &str = "$__serde_spanned_private_end";
const SPANNED_VALUE: &str = "$__serde_spanned_private_value";
const SPANNED_FIELDS: &[&str] = &[SPANNED_START, SPANNED_END, SPANNED_VALUE];

/// A node deserialized with its span when the deserializer has one.
struct Spannable(Node);

/// A node deserialized without asking for a span (the value inside a spanned wrapper).
struct Plain(Node);

impl<'de> Deserialize<'de> for Spannable {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Spannable, D::Error> {
        deserializer
            .deserialize_struct(SPANNED_NAME, SPANNED_FIELDS, NodeVisitor { spanned: true })
            .map(Spannable)
    }
}

impl<'de> Deserialize<'de> for Plain {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Plain, D::Error> {
        deserializer.deserialize_any(NodeVisitor { spanned: false }).map(Plain)
    }
}

/// Builds a [`Node`]; with `spanned`, a map may be serde_spanned's wrapper.
struct NodeVisitor {
    spanned: bool,
}

fn bare(kind: Kind) -> Node {
    Node { span: None, kind }
}

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any TOML value")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Node, E> {
        Ok(bare(Kind::Bool(v)))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Node, E> {
        Ok(bare(Kind::Int(v)))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Node, E> {
        i64::try_from(v).map(|i| bare(Kind::Int(i))).map_err(|_| E::custom("integer out of range"))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Node, E> {
        Ok(bare(Kind::Float(v)))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Node, E> {
        Ok(bare(Kind::Str(v.to_string())))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Node, E> {
        Ok(bare(Kind::Str(v)))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(Spannable(item)) = seq.next_element::<Spannable>()? {
            items.push(item);
        }
        Ok(bare(Kind::Array(items)))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut entries = BTreeMap::new();
        while let Some(key) = map.next_key::<String>()? {
            if key == DATETIME_KEY {
                let text: String = map.next_value()?;
                return Ok(bare(Kind::Datetime(text)));
            }
            if self.spanned && key == SPANNED_START && entries.is_empty() {
                return read_spanned(map);
            }
            let Spannable(value) = map.next_value::<Spannable>()?;
            entries.insert(key, value);
        }
        Ok(bare(Kind::Table(entries)))
    }
}

/// The rest of serde_spanned's wrapper after its start key: start, end, value.
fn read_spanned<'de, A: MapAccess<'de>>(mut map: A) -> Result<Node, A::Error> {
    let start: usize = map.next_value()?;
    let end_key = map.next_key::<String>()?;
    if end_key.as_deref() != Some(SPANNED_END) {
        return Err(de::Error::custom("malformed spanned value"));
    }
    let end: usize = map.next_value()?;
    let value_key = map.next_key::<String>()?;
    if value_key.as_deref() != Some(SPANNED_VALUE) {
        return Err(de::Error::custom("malformed spanned value"));
    }
    let Plain(mut node) = map.next_value::<Plain>()?;
    node.span = Some(start..end);
    Ok(node)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(node: &Node) -> &BTreeMap<String, Node> {
        match &node.kind {
            Kind::Table(t) => t,
            other => panic!("not a table: {other:?}"),
        }
    }

    #[test]
    fn keeps_spans_of_nested_values() {
        let text = "name = \"x\"\n[consumer.config]\n\"session.timeout.ms\" = 10000\n";
        let root = parse_text(text).unwrap();
        let consumer = table(&table(&root)["consumer"]);
        let value = &table(&consumer["config"])["session.timeout.ms"];
        assert_eq!(value.kind, Kind::Int(10000));
        // "10000" starts after `"session.timeout.ms" = ` on line 3: 11 + 18 + 22 bytes.
        let span = value.span.clone().unwrap();
        assert_eq!(&text[span], "10000");
    }

    #[test]
    fn keeps_spans_inside_arrays_of_tables() {
        let text = "[[event]]\nat = \"1m\"\n[[event]]\nat = \"2m\"\n";
        let root = parse_text(text).unwrap();
        let Kind::Array(events) = &table(&root)["event"].kind else { panic!("no array") };
        let at = &table(&events[1])["at"];
        assert_eq!(&text[at.span.clone().unwrap()], "\"2m\"");
    }

    #[test]
    fn datetimes_are_recognised() {
        let root = parse_text("at = 1979-05-27T07:32:00Z\n").unwrap();
        assert_eq!(table(&root)["at"].kind, Kind::Datetime("1979-05-27T07:32:00Z".into()));
    }

    #[test]
    fn syntax_errors_carry_a_span() {
        let (message, span) = parse_text("a = \n").unwrap_err();
        assert!(!message.is_empty());
        assert!(span.is_some());
    }
}
