//! git triad: several AI models build code together, and the builder never grades its own work.
//!
//! The library holds all the logic; `src/main.rs` only parses the command line, dispatches to
//! [`cli::run`] and maps errors to the exit codes of [`exit::ExitCode`].

pub mod arbiter;
pub mod bounded;
pub mod chamber;
pub mod cli;
pub mod code;
pub mod config;
pub mod consensus;
pub mod edit;
pub mod exit;
pub mod fsguard;
pub mod git;
pub mod model;
pub mod notes;
pub mod pipeline;
pub mod privacy;
pub mod probe;
pub mod process;
pub mod redact;
pub mod report;
pub mod routing;
pub mod safe;
pub mod session;
pub mod task;
pub mod tui;
// Test support only: the tests and benches get it through the self dev-dependency in
// Cargo.toml, so the shipped library and binary never contain the fake server.
#[cfg(feature = "test-fakes")]
pub mod testkit;
