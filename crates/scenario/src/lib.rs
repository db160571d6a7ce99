//! `scenario`: sctpsim's scenario files.
//!
//! Text in, world out: [`parse`] reads TOML (plus `--set` overrides), validates it against the
//! [`schema`] with an exact key path in every error, and yields a [`Scenario`];
//! [`Scenario::build`] turns it into a runnable `netsim` world. [`schema::reference`] lists every
//! key for `sctpsim params` and the generated reference page.

#![cfg_attr(test, allow(clippy::unwrap_used))]

mod absent;
pub mod build;
pub mod error;
pub mod mobility;
pub mod model;
pub mod overrides;
mod queues;
pub mod reader;
pub mod real;
pub mod schema;
pub mod units;
pub mod wlan;

pub use error::ScenarioError;
pub use model::{parse, Scenario};
