//! The rules of `rebalance-sim check` as an SLO gate: per metric, which direction is worse, how
//! much change is tolerated and optional absolute limits; and the verdict of one comparison.
//!
//! A check file sets rules for every baseline in a `[metrics]` table and per baseline in the
//! entry's `metrics` table (which replaces the file's rule of the same metric):
//!
//! ```toml
//! [metrics]
//! downtime_partition_s = { worse = "higher", relative = 0.05 }  # may not grow more than 5%
//! records_lost = { max = 0 }                                    # must stay 0
//! ```
//!
//! Rule keys: `worse` (`higher`, `lower` or `any`: any change beyond the tolerance fails),
//! `relative` and `absolute` (the tolerated change in the worse direction: `absolute +
//! relative * |baseline|`), `max` and `min` (limits on the new value, whatever the baseline),
//! `ignore` (not compared). Unset keys take the metric's default: bookkeeping and derived
//! columns are ignored (`events`: it counts the simulator's steps, not behaviour;
//! `records_processed` = produced - lost - final lag + reprocessed), the columns that describe
//! the input (`duration_s`, `partitions`, `records_produced`, `measure_from_s`) may not change at all (`any`),
//! and every other metric is worse when higher. The tolerance defaults to the baseline's: 0
//! for a run (the simulator is deterministic), the entry's or sweep file's for a sweep.
//! A change beyond the tolerance in the better direction is reported as `better` and passes.

use std::collections::BTreeMap;

/// Which direction of change is a regression.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Worse {
    /// Growing is worse (downtime, reprocessed records, latency, ...).
    Higher,
    /// Shrinking is worse.
    Lower,
    /// Any change beyond the tolerance fails (the input's own figures).
    Any,
}

impl Worse {
    const NAMES: &'static [&'static str] = &["higher", "lower", "any"];

    fn parse(text: &str) -> Option<Worse> {
        match text {
            "higher" => Some(Worse::Higher),
            "lower" => Some(Worse::Lower),
            "any" => Some(Worse::Any),
            _ => None,
        }
    }
}

/// One metric's rule as written (unset fields fall back to the defaults).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RuleSpec {
    /// `worse`.
    pub worse: Option<Worse>,
    /// `relative`.
    pub relative: Option<f64>,
    /// `absolute`.
    pub absolute: Option<f64>,
    /// `max`: the new value may not exceed it.
    pub max: Option<f64>,
    /// `min`: the new value may not fall below it.
    pub min: Option<f64>,
    /// `ignore`.
    pub ignore: Option<bool>,
}

/// The keys a rule accepts.
pub const RULE_KEYS: &[&str] = &["worse", "relative", "absolute", "max", "min", "ignore"];

/// The summary columns a rule may name (the metrics of `summary.csv`, without its key and
/// identity columns).
pub const METRIC_NAMES: &[&str] =
    <metrics::SummaryRow as metrics::Columns>::COLUMNS.split_at(IDENTITY_COLUMNS).1;

/// `summary.csv`'s leading columns that name a run rather than measure it (scenario,
/// protocol, assignor, static_membership, seed).
const IDENTITY_COLUMNS: usize = 5;

/// Columns ignored unless a rule names them: bookkeeping (`events`) and derived ones.
const IGNORED_BY_DEFAULT: &[&str] = &["events", "records_processed", "scenario", "seed"];
/// Columns that describe the input: any change means the scenario changed.
const ANY_BY_DEFAULT: &[&str] = &["duration_s", "partitions", "records_produced", "measure_from_s"];

/// A rule with every field decided.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rule {
    /// Which direction fails.
    pub worse: Worse,
    /// Tolerated relative change.
    pub relative: f64,
    /// Tolerated absolute change.
    pub absolute: f64,
    /// Upper limit on the new value.
    pub max: Option<f64>,
    /// Lower limit on the new value.
    pub min: Option<f64>,
}

/// Rules by metric name, as read from a check file (file-level merged with an entry's).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rules {
    /// Rules the file gives, by metric.
    pub given: BTreeMap<String, RuleSpec>,
}

impl Rules {
    /// The rule for `metric` with the baseline's default tolerance; `None`: not compared.
    pub fn rule(&self, metric: &str, relative: f64, absolute: f64) -> Option<Rule> {
        let spec = self.given.get(metric).copied().unwrap_or_default();
        let ignored = spec.ignore.unwrap_or(IGNORED_BY_DEFAULT.contains(&metric));
        if ignored {
            return None;
        }
        let default_worse =
            if ANY_BY_DEFAULT.contains(&metric) { Worse::Any } else { Worse::Higher };
        Some(Rule {
            worse: spec.worse.unwrap_or(default_worse),
            relative: spec.relative.unwrap_or(relative),
            absolute: spec.absolute.unwrap_or(absolute),
            max: spec.max,
            min: spec.min,
        })
    }

    /// These rules with `entry`'s replacing those of the same metric.
    pub fn overridden_by(&self, entry: &Rules) -> Rules {
        let mut given = self.given.clone();
        given.extend(entry.given.iter().map(|(k, v)| (k.clone(), *v)));
        Rules { given }
    }
}

/// Parses a `metrics` table (`where_` names it in messages); errors say what is allowed.
pub fn parse_rules(value: &toml::Value, where_: &str) -> Result<Rules, Vec<String>> {
    let Some(table) = value.as_table() else {
        return Err(vec![format!(
            "{where_}: expected a table of metric = {{ rule }}, e.g. \
             downtime_partition_s = {{ worse = \"higher\", relative = 0.05 }}"
        )]);
    };
    let mut given = BTreeMap::new();
    let mut errors = Vec::new();
    for (metric, rule) in table {
        if !METRIC_NAMES.contains(&metric.as_str()) {
            errors.push(format!(
                "{where_}.{metric}: unknown metric; allowed: {}",
                METRIC_NAMES.join(", ")
            ));
            continue;
        }
        match parse_rule(rule) {
            Ok(spec) => {
                given.insert(metric.clone(), spec);
            }
            Err(e) => errors.push(format!("{where_}.{metric}: {e}")),
        }
    }
    if errors.is_empty() {
        Ok(Rules { given })
    } else {
        Err(errors)
    }
}

fn parse_rule(value: &toml::Value) -> Result<RuleSpec, String> {
    let table = value.as_table().ok_or_else(|| {
        format!("expected a table with some of {}, e.g. {{ max = 0 }}", RULE_KEYS.join(", "))
    })?;
    let mut spec = RuleSpec::default();
    for (key, v) in table {
        match key.as_str() {
            "worse" => {
                let text = v.as_str().unwrap_or_default();
                spec.worse =
                    Some(Worse::parse(text).ok_or_else(|| {
                        format!("worse = {v}: allowed: {}", Worse::NAMES.join(", "))
                    })?);
            }
            "relative" => spec.relative = Some(non_negative(v, key)?),
            "absolute" => spec.absolute = Some(non_negative(v, key)?),
            "max" => spec.max = Some(number(v, key)?),
            "min" => spec.min = Some(number(v, key)?),
            "ignore" => {
                spec.ignore =
                    Some(v.as_bool().ok_or_else(|| format!("ignore = {v}: true or false"))?)
            }
            _ => return Err(format!("unknown key `{key}`; allowed: {}", RULE_KEYS.join(", "))),
        }
    }
    Ok(spec)
}

fn number(v: &toml::Value, key: &str) -> Result<f64, String> {
    let x = match v {
        toml::Value::Float(f) => *f,
        toml::Value::Integer(i) => *i as f64,
        _ => return Err(format!("{key} = {v}: a number")),
    };
    if x.is_finite() {
        Ok(x)
    } else {
        Err(format!("{key} = {v}: a finite number"))
    }
}

fn non_negative(v: &toml::Value, key: &str) -> Result<f64, String> {
    let x = number(v, key)?;
    if x >= 0.0 {
        Ok(x)
    } else {
        Err(format!("{key} = {v}: a number >= 0"))
    }
}

/// The outcome of comparing one value.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// Within the tolerance and the limits: not listed.
    Same,
    /// Changed beyond the tolerance in the better direction: listed, passes.
    Better,
    /// Changed beyond the tolerance in the worse direction (or at all, for `any`): fails.
    Worse,
    /// The new value breaks the rule's `max` or `min` (the text says which): fails.
    Limit(String),
}

impl Verdict {
    /// Whether this verdict fails the check.
    pub fn fails(&self) -> bool {
        matches!(self, Verdict::Worse | Verdict::Limit(_))
    }

    /// The table's verdict column.
    pub fn label(&self) -> String {
        match self {
            Verdict::Same => "same".to_string(),
            Verdict::Better => "better".to_string(),
            Verdict::Worse => "WORSE".to_string(),
            Verdict::Limit(text) => format!("WORSE ({text})"),
        }
    }
}

/// Judges `now` against `was` under `rule`. Values that are not numbers must be equal.
pub fn judge(was: &str, now: &str, rule: &Rule) -> Verdict {
    let (Ok(a), Ok(b)) = (was.parse::<f64>(), now.parse::<f64>()) else {
        return if was == now { Verdict::Same } else { Verdict::Worse };
    };
    if let Some(max) = rule.max.filter(|m| b > *m) {
        return Verdict::Limit(format!("above max {max}"));
    }
    if let Some(min) = rule.min.filter(|m| b < *m) {
        return Verdict::Limit(format!("below min {min}"));
    }
    let allowed = rule.absolute + rule.relative * a.abs();
    let grew = b - a;
    if a == b || grew.abs() <= allowed {
        return Verdict::Same;
    }
    match (rule.worse, grew > 0.0) {
        (Worse::Any, _) | (Worse::Higher, true) | (Worse::Lower, false) => Verdict::Worse,
        _ => Verdict::Better,
    }
}

/// The tolerance of `rule` as the table shows it: `exact`, `+5%`, `+0.001 +5%`, with limits.
pub fn describe(rule: &Rule) -> String {
    let sign = match rule.worse {
        Worse::Higher => "+",
        Worse::Lower => "-",
        Worse::Any => "±",
    };
    let mut parts = Vec::new();
    if rule.absolute > 0.0 {
        parts.push(format!("{sign}{}", rule.absolute));
    }
    if rule.relative > 0.0 {
        parts.push(format!("{sign}{}%", round6(rule.relative * 100.0)));
    }
    if parts.is_empty() {
        parts.push(if rule.worse == Worse::Any { "exact".into() } else { format!("{sign}0") });
    }
    if let Some(max) = rule.max {
        parts.push(format!("max {max}"));
    }
    if let Some(min) = rule.min {
        parts.push(format!("min {min}"));
    }
    parts.join(" ")
}

fn round6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(text: &str) -> Result<Rules, Vec<String>> {
        let value: toml::Value = toml::Value::Table(text.parse().unwrap());
        parse_rules(&value, "check.toml: metrics")
    }

    #[test]
    fn defaults_ignore_bookkeeping_and_call_growth_worse() {
        let r = Rules::default();
        assert_eq!(r.rule("events", 0.0, 0.0), None);
        assert_eq!(r.rule("records_processed", 0.0, 0.0), None);
        let downtime = r.rule("downtime_partition_s", 0.05, 0.001).unwrap();
        assert_eq!(downtime.worse, Worse::Higher);
        assert_eq!((downtime.relative, downtime.absolute), (0.05, 0.001));
        assert_eq!(r.rule("records_produced", 0.0, 0.0).unwrap().worse, Worse::Any);
    }

    #[test]
    fn growth_beyond_the_tolerance_is_worse_and_shrinking_is_better() {
        let rule = Rules::default().rule("downtime_partition_s", 0.05, 0.0).unwrap();
        assert_eq!(judge("100", "105", &rule), Verdict::Same);
        assert_eq!(judge("100", "105.5", &rule), Verdict::Worse);
        assert_eq!(judge("100", "90", &rule), Verdict::Better);
        assert!(!Verdict::Better.fails());
        assert!(Verdict::Worse.fails());
    }

    #[test]
    fn lower_is_worse_when_the_rule_says_so() {
        let r = rules("records_produced = { worse = \"lower\", relative = 0.01 }").unwrap();
        let rule = r.rule("records_produced", 0.0, 0.0).unwrap();
        assert_eq!(judge("1000", "980", &rule), Verdict::Worse);
        assert_eq!(judge("1000", "1020", &rule), Verdict::Better);
        assert_eq!(judge("1000", "995", &rule), Verdict::Same);
    }

    #[test]
    fn any_fails_both_ways() {
        let rule = Rules::default().rule("partitions", 0.0, 0.0).unwrap();
        assert_eq!(judge("12", "13", &rule), Verdict::Worse);
        assert_eq!(judge("12", "11", &rule), Verdict::Worse);
        assert_eq!(judge("12", "12", &rule), Verdict::Same);
    }

    #[test]
    fn an_absolute_tolerance_adds_to_the_relative_one() {
        let r = rules("final_lag = { absolute = 10, relative = 0.1 }").unwrap();
        let rule = r.rule("final_lag", 0.0, 0.0).unwrap();
        // allowed: 10 + 0.1 * 100 = 20.
        assert_eq!(judge("100", "120", &rule), Verdict::Same);
        assert_eq!(judge("100", "121", &rule), Verdict::Worse);
    }

    #[test]
    fn limits_hold_whatever_the_baseline() {
        let r = rules("records_lost = { max = 0 }\nrebalances = { min = 1 }").unwrap();
        let lost = r.rule("records_lost", 0.0, 0.0).unwrap();
        // The baseline had 5 lost records too: unchanged, but above the limit.
        assert_eq!(judge("5", "5", &lost), Verdict::Limit("above max 0".into()));
        assert_eq!(judge("5", "0", &lost), Verdict::Better);
        let rebalances = r.rule("rebalances", 0.0, 0.0).unwrap();
        assert_eq!(judge("1", "0", &rebalances), Verdict::Limit("below min 1".into()));
        assert_eq!(Verdict::Limit("above max 0".into()).label(), "WORSE (above max 0)");
    }

    #[test]
    fn ignore_turns_a_metric_off_or_on() {
        let r = rules("events = { ignore = false }\nfinal_lag = { ignore = true }").unwrap();
        assert!(r.rule("events", 0.0, 0.0).is_some());
        assert_eq!(r.rule("final_lag", 0.0, 0.0), None);
    }

    #[test]
    fn an_entrys_rule_replaces_the_files() {
        let file = rules("final_lag = { relative = 0.5 }").unwrap();
        let entry = rules("final_lag = { max = 3 }").unwrap();
        let rule = file.overridden_by(&entry).rule("final_lag", 0.0, 0.0).unwrap();
        assert_eq!((rule.relative, rule.max), (0.0, Some(3.0)));
    }

    #[test]
    fn unknown_metrics_keys_and_values_name_what_is_allowed() {
        let e = rules("downtime = { max = 1 }").unwrap_err();
        assert_eq!(e.len(), 1);
        assert!(e[0].starts_with("check.toml: metrics.downtime: unknown metric; allowed: duration_s, partitions, records_produced,"), "{}", e[0]);
        let e = rules("final_lag = { maximum = 1 }").unwrap_err();
        assert_eq!(
            e,
            ["check.toml: metrics.final_lag: unknown key `maximum`; allowed: worse, relative, absolute, max, min, ignore"]
        );
        let e = rules("final_lag = { worse = \"up\" }").unwrap_err();
        assert_eq!(
            e,
            ["check.toml: metrics.final_lag: worse = \"up\": allowed: higher, lower, any"]
        );
        let e = rules("final_lag = { relative = -1 }").unwrap_err();
        assert_eq!(e, ["check.toml: metrics.final_lag: relative = -1: a number >= 0"]);
        let e = rules("final_lag = 3").unwrap_err();
        assert!(e[0].contains("expected a table with some of worse, relative"), "{}", e[0]);
    }

    #[test]
    fn the_tolerance_is_described_in_the_table() {
        let r = rules("final_lag = { absolute = 0.001, relative = 0.05, max = 9 }").unwrap();
        assert_eq!(describe(&r.rule("final_lag", 0.0, 0.0).unwrap()), "+0.001 +5% max 9");
        assert_eq!(describe(&Rules::default().rule("partitions", 0.0, 0.0).unwrap()), "exact");
        assert_eq!(describe(&Rules::default().rule("final_lag", 0.0, 0.0).unwrap()), "+0");
    }
}
