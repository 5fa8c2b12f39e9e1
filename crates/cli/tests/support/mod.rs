//! Shared by the sweep and check tests: a tiny scenario whose debug-build runs take
//! milliseconds, and the binary run in a folder.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

/// A tiny scenario (30 s, 2 partitions, 2 records/s, one crash).
pub const TINY: &str = r#"name = "tiny"
duration = "30s"
seed = 3
protocols = ["eager:range", "cooperative:cooperative-sticky"]
[[topic]]
name = "t"
partitions = 2
rate = 2.0
arrival = "poisson"
[consumer.config]
"session.timeout.ms" = 10000
"heartbeat.interval.ms" = 1000
[group]
members = 2
[[event]]
at = "10s"
kind = "crash"
member = "c1"
"#;

/// Runs `rebalance-sim ARGS` with `dir` as the working folder.
pub fn sim(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rebalance-sim")).current_dir(dir).args(args).output().unwrap()
}
