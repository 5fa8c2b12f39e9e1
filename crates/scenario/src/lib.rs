//! Scenario and sweep file formats: TOML parsed with serde, validated into typed structures.
//!
//! `types` holds the validated result every later crate consumes; parsing and validation turn a
//! file into it or into a list of errors that name the file, line, key and what is allowed.
//! Entry points: [`load()`] (a file), [`parse_str`] (text), [`from_table`] (a sweep cell's table),
//! [`Scenario::parse_protocol`] (`--protocol`), [`warnings()`] (with [`overload_warnings`]) and
//! [`load_timeline`] (the group's estimated utilisation); [`scale_plan`] and
//! [`member_order`] are the membership rules validation and the model share; [`to_toml`] writes
//! a scenario back out as a file.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod config;
mod error;
pub mod estimate;
mod events;
mod kafka_props;
pub mod limits;
mod load;
mod members;
mod protocol;
mod reader;
mod roster;
pub mod sweep;
mod tree;
mod tubemq;
mod types;
mod utilisation;
mod warnings;
mod write;

pub use config::{default_broker_config, default_consumer_config};
pub use error::ScenarioError;
pub use load::{from_table, load, parse_str};
pub use members::{initial_member_name, member_order, scale_plan, ScalePlan};
pub use protocol::PROTOCOL_FORMS;
pub use tubemq::default_tubemq;
pub use types::*;
pub use utilisation::{load_timeline, overload_warnings, peak_utilisation, LoadPoint};
pub use warnings::warnings;
pub use write::to_toml;
