//! `git triad notes`: share verdict notes with a remote and find lost ones again.

pub mod reattach;
pub mod sync;

use clap::{Args, Subcommand};

use super::{CommandResult, Context};

/// Share verdicts (`refs/notes/triad`) with a remote, or reattach them after a squash.
#[derive(Debug, Args)]
pub struct NotesArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: NotesCommand,
}

/// `git triad notes` subcommands.
#[derive(Debug, Subcommand)]
pub enum NotesCommand {
    /// Push local verdicts to the remote (never forced; merges and retries when rejected).
    Push(sync::RemoteArgs),
    /// Fetch the remote's verdicts and merge them into yours (union of lines).
    Fetch(sync::RemoteArgs),
    /// Fetch, merge, then push: both sides end with every verdict.
    Sync(sync::RemoteArgs),
    /// Copy verdicts onto commits that lost them (squash merge, cherry-pick) by patch id.
    Reattach(reattach::ReattachArgs),
}

/// Runs `git triad notes`.
pub fn run(ctx: &Context, args: &NotesArgs) -> CommandResult {
    match &args.command {
        NotesCommand::Push(a) => sync::run(ctx, a, sync::Mode::Push),
        NotesCommand::Fetch(a) => sync::run(ctx, a, sync::Mode::Fetch),
        NotesCommand::Sync(a) => sync::run(ctx, a, sync::Mode::Sync),
        NotesCommand::Reattach(a) => reattach::run(ctx, a),
    }
}
