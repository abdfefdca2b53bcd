//! `git triad reconcile`: check a finished run against its TaskSpec again.

use clap::Args;

use super::helper::{driver, load_run, lock_run, need_repo, recorded_spec, report, Terminal};
use super::{CommandError, CommandResult, Context};
use crate::arbiter::Verdict;
use crate::exit::ExitCode;
use crate::pipeline::RunStatus;

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
    /// Print one JSON object describing the run on stdout.
    #[arg(long)]
    pub json: bool,
}

/// Runs `git triad reconcile`.
pub fn run(ctx: &Context, args: &ReconcileArgs) -> CommandResult {
    let repo = need_repo(ctx)?;
    let loaded = ctx.load_config()?;
    let _lock = lock_run(repo, &args.run_id)?;
    let mut state = load_run(repo, &args.run_id)?;
    if !matches!(
        state.status(),
        RunStatus::Approved | RunStatus::Flagged | RunStatus::Halted
    ) || state.stages().iter().any(|s| s.commit.is_none())
    {
        return Err(CommandError::usage(format!(
            "run {} has not finished all its stages ({})",
            state.run_id(),
            state.status().as_str()
        ))
        .hint(format!(
            "finish it first: `git triad resume {}`",
            state.run_id()
        )));
    }
    if let Some(m) = &args.reconcile_model {
        state.reconcile_mut().model = Some(m.clone());
    }
    let spec = recorded_spec(repo, &state)?;
    let host = Terminal { ctx };
    let (verdict, state) =
        driver(ctx, repo, loaded, &host).drive(state, spec, |run| run.reconcile_again())?;
    report(&state, args.json)?;
    Ok(match verdict {
        Some(Verdict::Halt) => ExitCode::Halt,
        Some(Verdict::Reject) => ExitCode::Error,
        Some(_) => ExitCode::Ok,
        None => crate::cli::helper::status_exit(state.status()),
    })
}
