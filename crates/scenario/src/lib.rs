//! Scenario and sweep file formats: TOML parsed with serde, validated into typed structures.
//!
//! `types` holds the validated result every later crate consumes; parsing and validation turn a
//! file into it or into a list of errors that name the file, line, key and what is allowed.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod types;

pub use types::*;
