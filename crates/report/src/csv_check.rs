//! Checks of a run's CSV files before `plot` draws them (issue 27 item 9): a time that is
//! infinite, not a number or negative cannot be drawn and is refused, naming the file, the line
//! and the column; an ownership state this program never writes is drawn in a colour of its
//! own and warned about, naming the first line that has it.

use crate::csv_out::{OWNERSHIP_CSV, REBALANCES_CSV, TIMELINE_CSV};
use std::path::Path;

/// The time columns of each file that `plot` reads.
const TIME_COLUMNS: &[(&str, &[&str])] = &[
    (OWNERSHIP_CSV, &["start_s", "end_s"]),
    (REBALANCES_CSV, &["start_s", "end_s"]),
    (TIMELINE_CSV, &["t_s"]),
];

/// Checks the time columns of the files in `dir` and the states of its `ownership.csv`:
/// `Err` names the first bad time (file, line, column, value); `Ok` holds one warning per
/// unknown state.
pub fn check_plot_inputs(dir: &Path) -> Result<Vec<String>, String> {
    let mut warnings = Vec::new();
    for (file, columns) in TIME_COLUMNS {
        let path = dir.join(file);
        let states = (*file == OWNERSHIP_CSV).then_some(&mut warnings);
        check_file(&path, columns, states)?;
    }
    Ok(warnings)
}

/// Reads `path` once: every `columns` value must be a finite time of at least 0 (and a row's
/// `end_s` at least its `start_s`); with `states`, each unknown `state` adds a warning.
fn check_file(
    path: &Path,
    columns: &[&str],
    mut states: Option<&mut Vec<String>>,
) -> Result<(), String> {
    let shown = path.display();
    let mut reader = csv::Reader::from_path(path).map_err(|e| format!("{shown}: {e}"))?;
    let headers = reader.headers().map_err(|e| format!("{shown}: {e}"))?.clone();
    let index_of = |name: &str| headers.iter().position(|h| h == name);
    let indices: Vec<(&str, usize)> =
        columns.iter().filter_map(|c| index_of(c).map(|i| (*c, i))).collect();
    let state_index = index_of("state");
    let mut unknown: Vec<String> = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| format!("{shown}: {e}"))?;
        let line = record.position().map_or(0, |p| p.line());
        let mut times = Vec::with_capacity(indices.len());
        for (column, index) in &indices {
            let text = record.get(*index).unwrap_or("");
            times.push(time_value(text).map_err(|why| {
                format!("{shown} line {line}: {column} = `{text}` {why}; charts need times of at least 0 s")
            })?);
        }
        if let [start, end] = times[..] {
            if end < start {
                return Err(format!(
                    "{shown} line {line}: end_s = {end} is before start_s = {start}"
                ));
            }
        }
        let (Some(out), Some(index)) = (states.as_deref_mut(), state_index) else { continue };
        let state = record.get(index).unwrap_or("");
        if !metrics::KNOWN_STATES.contains(&state) && !unknown.iter().any(|s| s == state) {
            unknown.push(state.to_string());
            out.push(format!(
                "{shown} line {line}: unknown state `{state}` (drawn in a colour of its own); \
                 this program writes {}",
                metrics::KNOWN_STATES.join(", ")
            ));
        }
    }
    Ok(())
}

/// A time in seconds, or why it is not one a chart can place.
fn time_value(text: &str) -> Result<f64, &'static str> {
    let value: f64 = text.trim().parse().map_err(|_| "is not a number")?;
    if !value.is_finite() {
        return Err("is not finite");
    }
    if value < 0.0 {
        return Err("is negative");
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_must_be_finite_and_not_negative() {
        assert_eq!(time_value("1.5"), Ok(1.5));
        assert_eq!(time_value("0"), Ok(0.0));
        assert_eq!(time_value("inf"), Err("is not finite"));
        assert_eq!(time_value("NaN"), Err("is not finite"));
        assert_eq!(time_value("-0.001"), Err("is negative"));
        assert_eq!(time_value("soon"), Err("is not a number"));
    }
}
