//! The short table `rebalance-sim sweep` and `merge` print: per cell and protocol, the mean
//! and 95% CI half-width of the headline metrics, read back from `aggregate.csv` bytes.

use crate::check::TextTable;
use crate::sweep::LabError;

/// The metrics shown, in order, with their column titles.
const SHOWN: &[(&str, &str)] = &[
    ("records_reprocessed", "reprocessed"),
    ("records_lost", "lost"),
    ("downtime_partition_s", "downtime_s"),
    ("stop_the_world_s", "stw_s"),
    ("rebalances", "rebalances"),
];

/// Formats `aggregate.csv` bytes as an aligned text table; `grid_keys` are shown as columns.
pub fn format_aggregate(aggregate: &[u8], grid_keys: &[String]) -> Result<String, LabError> {
    let t = TextTable::parse(aggregate, "aggregate.csv")?;
    let col = |name: &str| t.header.iter().position(|h| h == name);
    let mut head: Vec<String> = grid_keys.to_vec();
    head.extend(["protocol".to_string(), "runs".to_string()]);
    head.extend(SHOWN.iter().map(|(_, title)| title.to_string()));
    let mut rows = vec![head];
    for r in &t.rows {
        let get = |name: &str| col(name).map(|i| r[i].clone()).unwrap_or_default();
        let mut row: Vec<String> = grid_keys.iter().map(|k| get(k)).collect();
        let static_suffix = if get("static_membership") == "true" { "+static" } else { "" };
        row.push(format!("{}:{}{static_suffix}", get("protocol"), get("assignor")));
        row.push(get("runs"));
        for (metric, _) in SHOWN {
            row.push(mean_pm(&get(&format!("{metric}_mean")), &get(&format!("{metric}_ci95_hi"))));
        }
        rows.push(row);
    }
    Ok(align(&rows) + LEGEND)
}

/// The line under the table saying what its cells are.
const LEGEND: &str = "(each metric: mean over the cell's runs ± half-width of its 95% confidence \
                      interval; no ± when the runs agree)\n";

/// `mean ± half-width` with 3 significant decimals; just the mean when there is no interval.
fn mean_pm(mean: &str, hi: &str) -> String {
    match (mean.parse::<f64>(), hi.parse::<f64>()) {
        (Ok(m), Ok(h)) if h > m => format!("{} ± {}", short(m), short(h - m)),
        (Ok(m), _) => short(m),
        _ => mean.to_string(),
    }
}

fn short(x: f64) -> String {
    let s = format!("{x:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

fn align(rows: &[Vec<String>]) -> String {
    let n = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..n)
        .map(|i| rows.iter().map(|r| r.get(i).map_or(0, |c| c.chars().count())).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for r in rows {
        let cells: Vec<String> = r
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c}{}", " ".repeat(w - c.chars().count())))
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_shows_mean_and_half_width() {
        let csv = "cell,group.members,protocol,assignor,static_membership,runs,\
                   records_reprocessed_mean,records_reprocessed_ci95_hi,records_lost_mean,records_lost_ci95_hi,\
                   downtime_partition_s_mean,downtime_partition_s_ci95_hi,stop_the_world_s_mean,stop_the_world_s_ci95_hi,\
                   rebalances_mean,rebalances_ci95_hi\n\
                   ab12cd34,3,eager,range,false,3,30.5,32.75,0,0,20,20,0.5,0.5,2,\n\
                   ab12cd34,3,cooperative,cooperative-sticky,true,3,1,1.5,0,0,1.25,2,0,0,4,\n";
        let t = format_aggregate(csv.as_bytes(), &["group.members".to_string()]).unwrap();
        // 32.75 - 30.5 = 2.25 half-width; equal mean and hi print the mean alone.
        let expected = "\
group.members  protocol                               runs  reprocessed  lost  downtime_s   stw_s  rebalances
3              eager:range                            3     30.5 ± 2.25  0     20           0.5    2
3              cooperative:cooperative-sticky+static  3     1 ± 0.5      0     1.25 ± 0.75  0      4
(each metric: mean over the cell's runs ± half-width of its 95% confidence interval; no ± when the runs agree)
";
        assert_eq!(t, expected);
    }
}
