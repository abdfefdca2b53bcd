//! The one integration test binary (`autotests = false`): every suite is a module here.

mod bench_cli;
mod cli_basics;
mod code_evidence;
mod common;
mod cost;
mod e2e_local;
mod fitness;
mod hostile;
mod hostile_keys;
mod limits;
mod notes_hooks;
mod pipeline;
mod providers;
mod reconcile;
mod review;
mod routing;
mod run_paths;
mod tasks;
mod truthful;
mod user_output;
