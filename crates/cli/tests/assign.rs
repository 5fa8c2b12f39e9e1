//! Integration tests of `rebalance-sim assign`: the binary is run on files and on stdin.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn run_stdin(json: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rebalance-sim"))
        .args(["assign", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn rebalance-sim");
    child.stdin.take().expect("stdin").write_all(json.as_bytes()).expect("write stdin");
    child.wait_with_output().expect("wait")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).trim_end().to_string()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

const DESIGN_EXAMPLE: &str = r#"{"assignor": "range",
 "topics": {"t1": 3, "t2": 2},
 "members": [{"id": "c1", "topics": ["t1", "t2"], "owned": [["t1", 0]], "generation": 1},
             {"id": "c2", "topics": ["t1"]}]}"#;

#[test]
fn design_example_from_a_file() {
    // Range: t1 (3) over c1, c2 -> c1 t1-0, t1-1; c2 t1-2. t2 (2) only c1 -> both.
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("group.json");
    std::fs::write(&path, DESIGN_EXAMPLE).expect("write");
    let o = Command::new(env!("CARGO_BIN_EXE_rebalance-sim"))
        .arg("assign")
        .arg(&path)
        .output()
        .expect("run");
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        r#"{"c1": [["t1", 0], ["t1", 1], ["t2", 0], ["t2", 1]], "c2": [["t1", 2]]}"#
    );
}

#[test]
fn keys_in_member_id_order_and_empty_members_listed() {
    // Roundrobin, 1 partition over members listed as z, a: sorted a, z -> a gets t-0; z is
    // still printed, with an empty list, after a.
    let json = r#"{"assignor": "roundrobin", "topics": {"t": 1},
        "members": [{"id": "z", "topics": ["t"]}, {"id": "a", "topics": ["t"]}]}"#;
    let o = run_stdin(json);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), r#"{"a": [["t", 0]], "z": []}"#);
    // Nothing owned in the input: no count of moves.
    assert!(!stderr(&o).contains("moved"), "{}", stderr(&o));
}

#[test]
fn cooperative_withholds_and_kip848_alias_is_accepted() {
    // c0 owned t-0..t-2 (gen 1), c1 joins. 3 over 2: min 1, max 2. HashMap order: "c0" bucket
    // 13, "c1" 14 -> c0 keeps t-0, t-1 (at max), revokes t-2; c1 (under min) gets t-2, which
    // changes owner and is withheld in round 1.
    let json = r#"{"assignor": "cooperative-sticky", "topics": {"t": 3},
        "members": [{"id": "c0", "topics": ["t"], "owned": [["t", 0], ["t", 1], ["t", 2]], "generation": 1},
                    {"id": "c1", "topics": ["t"]}]}"#;
    let o = run_stdin(json);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), r#"{"c0": [["t", 0], ["t", 1]], "c1": []}"#);
    // Round 1 moves nothing yet: t-2 is revoked and left unassigned.
    assert!(
        stderr(&o).contains("<stdin>: 0 partitions moved against `owned` (2 kept by their owner, 1 owned ones left unassigned)"),
        "{}",
        stderr(&o)
    );
    let eager = run_stdin(&json.replace("cooperative-sticky", "sticky"));
    assert_eq!(stdout(&eager), r#"{"c0": [["t", 0], ["t", 1]], "c1": [["t", 2]]}"#);
    // Eager sticky gives t-2 to c1 at once: one partition moved.
    assert!(
        stderr(&eager).contains("<stdin>: 1 partitions moved against `owned` (2 kept by their owner, 0 owned ones left unassigned)"),
        "{}",
        stderr(&eager)
    );
    // KIP-848 range via "consumer:range": c0 keeps its lowest, t-0, plus the one extra (t-1);
    // c1 gets t-2.
    let kip848 = run_stdin(&json.replace("cooperative-sticky", "consumer:range"));
    assert!(kip848.status.success(), "{}", stderr(&kip848));
    assert_eq!(stdout(&kip848), r#"{"c0": [["t", 0], ["t", 1]], "c1": [["t", 2]]}"#);
}

#[test]
fn output_is_deterministic_for_modulo_with_a_seed() {
    let json = r#"{"assignor": "modulo", "seed": 9, "topics": {"t": 6},
        "members": [{"id": "a", "topics": ["t"], "owned": [["t", 0]]}, {"id": "b", "topics": ["t"]}]}"#;
    let first = run_stdin(json);
    assert!(first.status.success(), "{}", stderr(&first));
    assert_eq!(stdout(&first), stdout(&run_stdin(json)));
}

#[test]
fn a_topic_without_metadata_is_skipped_with_a_warning() {
    // RangeAssignorTest.testOneConsumerNonexistentTopic: Kafka skips the topic. c2 subscribes
    // only to t9 (absent) -> nothing; c1's claim on `nope` is ignored; range as in the design
    // example otherwise (t1 now only c1's: all three).
    let json = DESIGN_EXAMPLE
        .replace("[\"t1\"]}", "[\"t9\"]}")
        .replace("[[\"t1\", 0]]", "[[\"nope\", 0]]");
    let o = run_stdin(&json);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        r#"{"c1": [["t1", 0], ["t1", 1], ["t1", 2], ["t2", 0], ["t2", 1]], "c2": []}"#
    );
    let err = stderr(&o);
    for needle in
        ["warning: <stdin>: members[0].owned[0]: topic `nope`", "members[1].topics[0]: topic `t9`"]
    {
        assert!(err.contains(needle), "stderr {err:?} lacks {needle:?}");
    }
}

fn assert_bad(json: &str, needles: &[&str]) {
    let o = run_stdin(json);
    assert_eq!(o.status.code(), Some(2), "stdout: {}", stdout(&o));
    let err = stderr(&o);
    for needle in needles {
        assert!(err.contains(needle), "stderr {err:?} lacks {needle:?}");
    }
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn bad_input_exits_2_with_a_clear_message() {
    assert_bad("{\"assignor\": ", &["<stdin>", "invalid JSON", "line"]);
    assert_bad(
        &DESIGN_EXAMPLE.replace("\"range\"", "\"stiky\""),
        &["unknown assignor `stiky`", "cooperative-sticky"],
    );
    assert_bad(
        &DESIGN_EXAMPLE.replace("[[\"t1\", 0]]", "[[\"t2\", 5]]"),
        &["members[0].owned[0]", "0 to 1"],
    );
    assert_bad(&DESIGN_EXAMPLE.replace("\"c2\"", "\"c1\""), &["members[1].id", "duplicate"]);
    assert_bad(
        &DESIGN_EXAMPLE.replace("\"generation\": 1", "\"gen\": 1"),
        &["members[0].gen", "unknown key"],
    );
}

#[test]
fn missing_file_exits_2() {
    let o = Command::new(env!("CARGO_BIN_EXE_rebalance-sim"))
        .args(["assign", "/nonexistent/group.json"])
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("cannot read /nonexistent/group.json"));
}
