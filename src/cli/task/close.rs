//! `git triad task close`: close a task as an arbiter decision the user takes; a closed
//! dependency unblocks its parent.

use clap::Args;

use super::record::decide;
use crate::cli::{CommandResult, Context};
use crate::task::{ArbiterDecision, Decision};

/// Close a task.
#[derive(Debug, Args)]
pub struct CloseArgs {
    /// The task's slug.
    pub slug: String,
    /// Why (recorded with your name), e.g. `done` or `not allowed: POL-7`.
    #[arg(long)]
    pub reason: String,
}

/// Runs `git triad task close`.
pub fn run(ctx: &Context, a: &CloseArgs) -> CommandResult {
    decide(
        ctx,
        &a.slug,
        ArbiterDecision::new(&a.slug, Decision::Close, ""),
        &a.reason,
    )
}
