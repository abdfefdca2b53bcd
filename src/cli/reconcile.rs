//! `git triad reconcile`: check a finished run against its TaskSpec again.

use clap::Args;

use super::helper::{need_repo, ops, report, Terminal};
use super::{CommandResult, Context};

/// Re-run the Implementation Summary Reconciliation on a finished run.
///
/// Checks the verifier's summary against the final commit (files, tests, requirement ids),
/// asks a reconciliation arbiter (never the verifier's model) to apply the five checks of
/// seed 000 §B11.4 against the TaskSpec recorded at the run's start, and appends a
/// `reconciliation` line to the note on the final commit. Nothing is rewound.
#[derive(Debug, Args)]
pub struct ReconcileArgs {
    /// The run id (`git triad log` lists them).
    pub run_id: String,
    /// The reconciliation arbiter (must differ from the verifier's model).
    #[arg(long, value_name = "MODEL")]
    pub reconcile_model: Option<String>,
    /// How to print it (`--format json` or `--json`).
    #[command(flatten)]
    pub output: crate::cli::helper::Output,
}

/// Runs `git triad reconcile`.
pub fn run(ctx: &Context, args: &ReconcileArgs) -> CommandResult {
    let repo = need_repo(ctx)?;
    let loaded = ctx.load_config()?;
    let host = Terminal { ctx };
    let reconciled =
        ops(ctx, repo, &host).reconcile(loaded, &args.run_id, args.reconcile_model.as_deref())?;
    report(ctx, &reconciled.ran.state, args.output.json())?;
    Ok(reconciled.ran.exit)
}
