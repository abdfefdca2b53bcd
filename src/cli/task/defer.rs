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
    /// When to look at it again (`YYYY-MM-DD`, or a full RFC 3339 time).
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
