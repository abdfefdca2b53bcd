//! `git triad task defer`: park a task with a reason and a revisit date, as an arbiter decision
//! the user takes.

use clap::Args;

use super::decide;
use crate::cli::{CommandError, CommandResult, Context};
use crate::task::{ArbiterDecision, Decision};

/// Defer a task.
#[derive(Debug, Args)]
pub struct DeferArgs {
    /// The task's slug.
    pub slug: String,
    /// Why (recorded with your name).
    #[arg(long)]
    pub reason: String,
    /// When to look at it again (`YYYY-MM-DD`, or a full RFC 3339 time), after today: on
    /// that date the next command that reads the task list reopens it (ASSIGNED). A task
    /// already deferred may be deferred again, to a new date.
    #[arg(long, value_name = "DATE")]
    pub revisit_at: Option<String>,
}

/// Runs `git triad task defer`.
pub fn run(ctx: &Context, a: &DeferArgs) -> CommandResult {
    if let Some(at) = &a.revisit_at {
        if !looks_like_date(at) {
            return Err(CommandError::usage(format!("`{at}` is not a date"))
                .hint("use YYYY-MM-DD, e.g. --revisit-at 2026-09-01"));
        }
        let today = &crate::clock::now_ts()[..10];
        if &at[..10] <= today {
            return Err(CommandError::usage(format!(
                "the revisit date {at} is not after today ({today}): a deferral until then would be due at once, and the next command that reads the task list would reopen it"
            ))
            .hint("give a later date, e.g. --revisit-at <YYYY-MM-DD>, or leave --revisit-at out to park it without one"));
        }
    }
    let mut d = ArbiterDecision::new(&a.slug, Decision::Defer, "");
    d.revisit_at = a.revisit_at.clone();
    decide(ctx, &a.slug, d, &a.reason)
}

fn looks_like_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 10
        && b[..10].iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            _ => c.is_ascii_digit(),
        })
}
