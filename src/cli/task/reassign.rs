//! `git triad task reassign`: hand a task to another specialist, as an arbiter decision the
//! user takes.

use clap::Args;

use super::record::decide;
use crate::cli::{CommandError, CommandResult, Context};
use crate::task::outcome::normalize_specialist;
use crate::task::{ArbiterDecision, Decision};

/// Reassign a task.
#[derive(Debug, Args)]
pub struct ReassignArgs {
    /// The task's slug.
    pub slug: String,
    /// The specialist: a stage (`architect`, `implement`, `refactor`, `verify`) or `operator`.
    #[arg(long, value_name = "SPECIALIST")]
    pub to: String,
    /// Why (recorded with your name), e.g. the compliant alternative to build.
    #[arg(long)]
    pub reason: String,
}

/// Runs `git triad task reassign`.
pub fn run(ctx: &Context, a: &ReassignArgs) -> CommandResult {
    let Some(to) = normalize_specialist(&a.to) else {
        return Err(CommandError::usage("--to names nobody")
            .hint("name a stage (architect, implement, refactor, verify) or `operator`"));
    };
    let d = ArbiterDecision::new(&a.slug, Decision::Reassign, "").to(to);
    decide(ctx, &a.slug, d, &a.reason)
}
