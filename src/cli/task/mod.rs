//! `git triad task`: write TaskSpecs, and inspect and steer the arbiter-owned task state
//! machine (seed 004) recorded under `refs/triad/tasks/<slug>`.

pub mod answer;
pub mod close;
pub mod defer;
pub mod list;
pub mod new;
pub mod reassign;
mod record;
pub mod show;

use clap::{Args, Subcommand};

use super::{CommandResult, Context};

/// Write TaskSpecs and follow tasks through the arbiter's state machine.
///
/// Every task has a state, an owner (who acts next), a next action and an unblock condition.
/// Stages never drop work: a stage that cannot do it answers a structured outcome (NEEDS_INFO,
/// OUT_OF_SCOPE, BLOCKED, TOO_COSTLY, POLICY_VIOLATION, LOW_CONFIDENCE) and the arbiter routes
/// it. Only the arbiter closes, defers or approves a task; `close`, `defer` and `reassign` are
/// arbiter decisions you take on its behalf, recorded with your name.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  git triad task new add-login --title \"Add a login form\"
  git triad task list                      every task: state, owner, next action
  git triad task show add-login            its state and latest history (--all: all of it)
  git triad task answer add-login          answer the questions a stage asked
  git triad task close add-login-dep-1 --reason done
  git triad task defer add-login --reason \"after the release\" --revisit-at 2099-09-01")]
pub struct TaskArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: TaskCommand,
}

/// `git triad task` subcommands.
#[derive(Debug, Subcommand)]
pub enum TaskCommand {
    /// Write a commented TaskSpec template to `.triad/tasks/<slug>.toml`.
    New(new::NewArgs),
    /// List every task: recorded ones and TaskSpecs not run yet (shown as OPEN).
    List(list::ListArgs),
    /// Show a task's state, what it waits for, and its last ten history entries (`--all`:
    /// every one).
    Show(show::ShowArgs),
    /// Answer the questions a stage asked (NEEDS_INFO); the task returns to that stage.
    Answer(answer::AnswerArgs),
    /// Defer a task (an arbiter decision taken by you): parked, with a revisit trigger.
    Defer(defer::DeferArgs),
    /// Close a task (an arbiter decision taken by you); a closed dependency unblocks its parent.
    Close(close::CloseArgs),
    /// Hand a task to another specialist (an arbiter decision taken by you).
    Reassign(reassign::ReassignArgs),
}

/// Runs `git triad task`.
pub fn run(ctx: &Context, args: &TaskArgs) -> CommandResult {
    // Every task command reads the task list: a deferral whose date has come reopens first.
    if let Some(repo) = &ctx.repo {
        crate::cli::helper::reopen_due(ctx, repo)?;
    }
    match &args.command {
        TaskCommand::New(a) => new::run(ctx, a),
        TaskCommand::List(a) => list::run(ctx, a),
        TaskCommand::Show(a) => show::run(ctx, a),
        TaskCommand::Answer(a) => answer::run(ctx, a),
        TaskCommand::Defer(a) => defer::run(ctx, a),
        TaskCommand::Close(a) => close::run(ctx, a),
        TaskCommand::Reassign(a) => reassign::run(ctx, a),
    }
}
