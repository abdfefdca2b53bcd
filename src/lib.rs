//! git triad: several AI models build code together, and the builder never grades its own work.
//!
//! The library holds all the logic; `src/main.rs` only parses the command line, dispatches to
//! [`cli::run`] and maps errors to the exit codes of [`exit::ExitCode`].
//!
//! ## Layers
//!
//! Imports point down. Each line below is a layer, the lowest first; a module imports only
//! modules of the lines above its own, never one of its own line or below. The test
//! `tests/layers.rs` reads this block and every import of `src/`, with no exceptions.
//!
//! ```text
//! names — below everything: a fact's names declared once (the `named!` macro)
//! safe process — leaves below the leaves: model text made terminal-safe, the processes a run started
//! exit bounded redact fsguard clock glob verdict workflow_name — leaves: exit codes, bounds, redaction, guarded reads, time and ids, globs, verdict words, workflow names
//! sandbox — the box every command that runs model-written code runs in
//! code — tree-sitter facts about source files
//! edit — edit blocks: parsing and applying them safely
//! config — layered configuration
//! git — repository access
//! task — TaskSpecs and the task state machine
//! privacy — private files, withheld from every model
//! model — providers, transport, budgets
//! probe — claims about code, made runnable
//! arbiter — reviews and verdicts
//! notes — verdicts as git notes, the pre-push gate
//! consensus — votes, objections, suggestions
//! routing — measured fitness kept and used to pick models
//! chamber — deliberation
//! pipeline — the run
//! bench — measuring fitness with the pipeline's own code
//! ops — the operations every front end calls, typed outcomes, exit codes decided once
//! session — hierarchical sessions: a front end over the operations
//! report — rendering for people and machines
//! tui — terminal views
//! cli — the commands
//! testkit — test support (the scripted model server)
//! ```

pub mod arbiter;
pub mod bench;
pub mod bounded;
pub mod chamber;
pub mod cli;
pub mod clock;
pub mod code;
pub mod config;
pub mod consensus;
pub mod edit;
pub mod exit;
pub mod fsguard;
pub mod git;
pub mod glob;
pub mod model;
pub mod names;
pub mod notes;
pub mod ops;
pub mod pipeline;
pub mod privacy;
pub mod probe;
pub mod process;
pub mod redact;
pub mod report;
pub mod routing;
pub mod safe;
pub mod sandbox;
pub mod session;
pub mod task;
pub mod tui;
pub mod verdict;
pub mod workflow_name;
// Test support only: the tests and benches get it through the self dev-dependency in
// Cargo.toml, so the shipped library and binary never contain the fake server.
#[cfg(feature = "test-fakes")]
pub mod testkit;
