//! The one integration test binary (`autotests = false`): every suite is a module here.

mod bench_cli;
mod cli_basics;
mod code_evidence;
mod common;
mod consensus;
mod cost;
mod debate;
mod e2e_local;
mod fitness;
mod hostile;
mod hostile_keys;
mod limits;
mod notes_hooks;
mod parallel;
mod pipeline;
mod providers;
mod reconcile;
mod resume_kill;
mod review;
mod routing;
mod run_paths;
mod sha256;
mod tasks;
mod truthful;
mod user_output;
