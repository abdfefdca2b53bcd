//! The operations every front end calls: run, resume and rewind, reconcile, review, chamber
//! ask and respond, compare, notes sync, and the task list and answers ([`tasks`]). Each is a typed call with a typed outcome; none
//! prints, reads a terminal or exits: what the user is told while it works goes through the
//! caller's [`Host`] (the same host a run already goes through), and what an outcome means
//! as an exit code is decided once, in [`exit`].
//!
//! In the spirit of jj-lib's operations: a front end parses its input, calls one operation
//! and renders what comes back. The front ends are the command line (`cli/*`: flags in,
//! text, JSON or SARIF out), a session's tools (typed outcomes, told to the model) and
//! `bench --compare` (the pipeline arms run in this process, their status read typed).
//!
//! ## Where the layer sits, and why
//!
//! Above `pipeline` and `bench` (it drives runs and reviews through them) and below
//! `report`, `tui` and `cli` (which render its outcomes). `session` was on the chamber's
//! line, below `pipeline`, and reached the product through a trait the command layer
//! implemented, getting back the command's printed text. A session is a front end like the
//! command line, and nothing below the pipeline uses it, so it moves up, right above this
//! layer: its tool calls name these operations' typed outcomes ([`Ran`], [`Reviewed`],
//! [`Chambered`]) and no longer scrape text. The command layer still implements the
//! session's `Product` trait, because only it loads a configuration from the user's layers
//! and `-c` overrides; it calls the operations and hands their outcomes back unrendered.
//!
//! ## Data paths
//!
//! - `git triad review`: `cli::review` parses the range and flags into a [`review::Change`]
//!   and a [`review::ReviewRequest`] → [`Ops::review_target`] resolves the two trees, the
//!   tip and what the commits say they do ([`review::Target`]; `--since-last` with nothing
//!   new stops here) → [`Ops::review`] gathers the change's evidence once
//!   ([`crate::arbiter::gather::prepare`]: the diff and code findings; the weakened tests;
//!   the behaviour diff through [`crate::arbiter::evidence::Behaviours`]; the test runs on
//!   both sides), picks who may judge (the flag, the routes, else the arbiter role), asks
//!   through the one review call the pipeline's stage review makes too
//!   ([`crate::arbiter::service::review_change`]), sets aside what a person overrode and,
//!   with `--note`, writes the verdict note → [`review::Reviewed`] (the review and its exit
//!   code) → `cli::review` renders text, markdown, JSON or SARIF and exits with the code.
//! - `git triad chamber ask`: `cli::chamber` parses the question, panel and level into a
//!   [`chamber::Ask`] → [`Ops::chamber_open`] checks the question, panel, context and caps
//!   and opens the session, unrecorded ([`chamber::Opened`]) → for a Level 3 session the
//!   command line shows [`Ops::chamber_estimate`] and asks for the approval on its terminal
//!   (or takes `--yes`) → [`Ops::chamber_drive`] runs its phases, each recorded, through
//!   [`crate::chamber::open::run`] (the way a run's stage runs one too) → [`Chambered`] (the
//!   session and its exit code) → `cli::chamber` prints the trace summary or JSON and the
//!   next step. `chamber respond` is [`Ops::chamber_respond`] (the input taken, a claim's
//!   evidence read), the approval, then [`Ops::chamber_go_on`] (recorded, then driven).
//! - `git triad bench --compare`: `cli::bench` parses the tasks and configurations and, for
//!   each pipeline arm, the request `run --task T --arbiter M` makes → [`Ops::compare_arm`]
//!   plans and drives that run in this process (never the program itself) and answers a
//!   [`compare::Arm`] built from the typed [`Ran`] (status, builder, branch, spend) and the
//!   ledger's calls under its run id → `cli::bench` judges the branches by the verify
//!   command, runs the plain loop and renders the comparison.

pub mod chamber;
pub mod compare;
pub mod exit;
pub mod notes;
pub mod review;
pub mod run;
pub mod tasks;

use git2::Repository;

use crate::config::LoadedConfig;
use crate::model::EnvLookup;
use crate::pipeline::Driver;

pub use crate::pipeline::Host;
pub use chamber::Chambered;
pub use review::Reviewed;
pub use run::{Ran, Reconciled};

/// What every operation works in: the repository, the environment, the keys, whether the
/// clone is trusted, and the caller's host.
pub struct Ops<'a> {
    /// The repository.
    pub repo: &'a Repository,
    /// The environment (the profile `auto` picks, the data and cache directories).
    pub env: &'a [(String, String)],
    /// Reads an API key's variable.
    pub keys: EnvLookup,
    /// Whether this clone is trusted to run its own commands (the verify command, probes).
    pub trusted: bool,
    /// The caller: where notes go and the eyes a run runs under.
    pub host: &'a dyn Host,
}

impl<'a> Ops<'a> {
    /// The pipeline's driver for runs under `loaded`.
    pub fn driver(&self, loaded: LoadedConfig) -> Driver<'a> {
        Driver {
            repo: self.repo,
            loaded,
            env: self.env,
            keys: self.keys.clone(),
            trusted: self.trusted,
            host: self.host,
        }
    }

    /// A client for `loaded`'s models whose calls are also appended to the repository's
    /// cost ledger (the daily and monthly caps read it).
    pub fn client(&self, loaded: &LoadedConfig) -> crate::model::ModelClient {
        let ledger = crate::model::budget::Ledger::new(crate::git::paths::ledger(self.repo));
        crate::model::ModelClient::new(&loaded.config, self.keys.clone())
            .with_ledger(ledger, &loaded.config)
    }
}

/// Runs `future` to its end on a small runtime of its own, from the synchronous code of an
/// operation; the error says why the runtime could not start.
pub(crate) fn block_on<F: std::future::Future>(future: F) -> std::io::Result<F::Output> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    Ok(rt.block_on(future))
}
