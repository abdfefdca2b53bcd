//! `git triad notes`: share verdict notes with a remote and find lost ones again.

pub mod reattach;
pub mod sync;

use clap::{Args, Subcommand};

use super::{CommandError, CommandResult, Context};

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

/// The repository of the command, or an error that says why there is none.
pub(crate) fn require_repo(ctx: &Context) -> CommandResult<&git2::Repository> {
    if let Some(repo) = &ctx.repo {
        return Ok(repo);
    }
    Err(ctx.unopenable_repo().unwrap_or_else(|| {
        CommandError::usage(format!(
            "{} is not inside a git repository",
            ctx.cwd.display()
        ))
        .hint("run this inside a clone, or point at one with `git triad -C <path> …`")
    }))
}

/// The commit a revision names, with a usage error that says how to name one.
pub(crate) fn resolve_commit<'r>(
    repo: &'r git2::Repository,
    rev: &str,
) -> CommandResult<git2::Commit<'r>> {
    repo.revparse_single(rev)
        .and_then(|o| o.peel_to_commit())
        .map_err(|e| {
            CommandError::usage(format!("`{rev}` does not name a commit: {}", e.message()))
                .hint("use a commit id, a branch, a tag or an expression like HEAD~2")
        })
}

/// The abbreviated id and subject of a commit, for messages.
pub(crate) fn short_and_subject(commit: &git2::Commit<'_>) -> (String, String) {
    let short = commit
        .as_object()
        .short_id()
        .ok()
        .and_then(|b| b.as_str().ok().map(str::to_string))
        .unwrap_or_else(|| commit.id().to_string()[..12].to_string());
    (
        short,
        commit.summary().ok().flatten().unwrap_or("").to_string(),
    )
}
