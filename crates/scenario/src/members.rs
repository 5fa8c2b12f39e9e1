//! Member names and the rules that decide who a `scale` or `rolling-restart` touches.
//!
//! Validation and the model must agree on these, so they live here, public:
//! - initial members are `c0..c{members-1}` ([`initial_member_name`]);
//! - "name order" (rolling restarts, scale-down's "highest names first") is natural order:
//!   `c2` before `c10` ([`member_order`]);
//! - `scale` adds the lowest-numbered `cN` names that are neither live nor down, and removes
//!   live members highest name first ([`scale_plan`]).

use std::cmp::Ordering;
use std::collections::BTreeSet;

/// The name of initial member `index`: `c0`, `c1`, ...
pub fn initial_member_name(index: u32) -> String {
    format!("c{index}")
}

/// Natural order of member names: the text before a trailing number, then the number, then
/// the whole name (so `c2` < `c10` < `d1`, and `c01` and `c1` still differ).
pub fn member_order(a: &str, b: &str) -> Ordering {
    let (a_head, a_num) = split_number(a);
    let (b_head, b_num) = split_number(b);
    a_head.cmp(b_head).then(a_num.cmp(&b_num)).then(a.cmp(b))
}

/// `c12` -> (`c`, Some(12)); `worker` -> (`worker`, None).
pub(crate) fn split_number(name: &str) -> (&str, Option<u64>) {
    let digits = name.bytes().rev().take_while(u8::is_ascii_digit).count();
    let (head, tail) = name.split_at(name.len() - digits);
    (head, tail.parse().ok())
}

/// What a `scale` event does.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScalePlan {
    /// New members that start and join, in natural order.
    pub add: Vec<String>,
    /// Live members that close gracefully, highest name first.
    pub remove: Vec<String>,
}

/// The plan that takes the group from `live` + `down` members (down: crashed, waiting for
/// their restart; they count towards the size but cannot be removed gracefully) to `target`.
/// Fails when reaching `target` would need removing a down member.
pub fn scale_plan(
    live: &BTreeSet<String>,
    down: &BTreeSet<String>,
    target: usize,
) -> Result<ScalePlan, String> {
    let present = live.len() + down.len();
    if target >= present {
        return Ok(ScalePlan { add: new_names(live, down, target - present), remove: Vec::new() });
    }
    let excess = present - target;
    if excess > live.len() {
        return Err(format!(
            "cannot scale to {target}: only {} members are live and {} are down waiting for a restart",
            live.len(),
            down.len()
        ));
    }
    let mut by_name: Vec<&String> = live.iter().collect();
    by_name.sort_by(|a, b| member_order(b, a));
    let remove = by_name.into_iter().take(excess).cloned().collect();
    Ok(ScalePlan { add: Vec::new(), remove })
}

/// The `count` lowest-numbered `cN` names in neither set.
fn new_names(live: &BTreeSet<String>, down: &BTreeSet<String>, count: usize) -> Vec<String> {
    let mut names = Vec::with_capacity(count);
    let mut index: u32 = 0;
    while names.len() < count {
        let name = initial_member_name(index);
        if !live.contains(&name) && !down.contains(&name) {
            names.push(name);
        }
        index += 1;
    }
    names
}

/// Whether `name` is usable as a member name: 1 to 64 of `A-Z a-z 0-9 . _ -`.
pub(crate) fn valid_member_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn natural_order_puts_c2_before_c10() {
        let mut names = vec!["c10", "c2", "worker", "c1", "b7"];
        names.sort_by(|a, b| member_order(a, b));
        assert_eq!(names, ["b7", "c1", "c2", "c10", "worker"]);
    }

    #[test]
    fn scale_up_fills_the_lowest_free_names() {
        // c1 left earlier; c0, c2 live; c3 down. Target 6 = 3 present + 3 new: c1, c4, c5.
        let plan = scale_plan(&set(&["c0", "c2"]), &set(&["c3"]), 6).unwrap();
        assert_eq!(plan.add, ["c1", "c4", "c5"]);
        assert!(plan.remove.is_empty());
    }

    #[test]
    fn scale_down_removes_highest_live_names_first() {
        // Natural order: c10 is the highest, then c9.
        let plan = scale_plan(&set(&["c0", "c9", "c10", "c2"]), &set(&[]), 2).unwrap();
        assert_eq!(plan.remove, ["c10", "c9"]);
    }

    #[test]
    fn scale_down_cannot_remove_down_members() {
        let err = scale_plan(&set(&["c0"]), &set(&["c1", "c2"]), 1).unwrap_err();
        assert!(err.contains("only 1 members are live and 2 are down"), "{err}");
    }

    #[test]
    fn member_names() {
        assert!(valid_member_name("c0"));
        assert!(valid_member_name("worker-a.1_x"));
        assert!(!valid_member_name(""));
        assert!(!valid_member_name("c 1"));
    }
}
