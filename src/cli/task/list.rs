//! `git triad task list`: every task, recorded or only specified, with its state, owner and
//! next action.

use clap::Args;
use serde_json::json;

use crate::cli::run::need_repo;
use crate::cli::{ok, out, CommandError, CommandResult, Context};
use crate::task::{store, workflow, Task, TaskState};

/// List tasks.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Print a JSON array instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Runs `git triad task list`.
pub fn run(ctx: &Context, args: &ListArgs) -> CommandResult {
    let repo = need_repo(ctx)?;
    let mut tasks: Vec<(Task, bool)> = Vec::new();
    for t in store::list(repo).map_err(CommandError::from)? {
        // A merged result marks its task EXECUTED before it is listed.
        let t = match t.state {
            TaskState::Approved => workflow::refresh(repo, &t.slug)
                .map_err(CommandError::from)?
                .unwrap_or(t),
            _ => t,
        };
        tasks.push((t, true));
    }
    let today = crate::notes::now_ts();
    for slug in workflow::spec_slugs(repo) {
        if !tasks.iter().any(|(t, _)| t.slug == slug) {
            tasks.push((Task::open(&slug, ""), false));
        }
    }
    tasks.sort_by(|a, b| a.0.slug.cmp(&b.0.slug));
    if args.json {
        let rows: Vec<_> = tasks
            .iter()
            .map(|(t, recorded)| {
                json!({
                    "slug": t.slug, "state": t.state, "owner": t.owner,
                    "next_action": t.next_action, "unblock_condition": t.unblock_condition,
                    "assigned_to": t.assigned_to, "run": t.run, "parent": t.parent,
                    "blocked_on": t.blocked_on, "recorded": recorded,
                    "revisit_at": t.revisit_at, "revisit_due": t.revisit_due(&today).is_some(),
                })
            })
            .collect();
        out(&format!("{}\n", serde_json::Value::Array(rows)))?;
        return ok();
    }
    if tasks.is_empty() {
        out("no tasks yet: write one with `git triad task new <slug> --title \"...\"`\n")?;
        return ok();
    }
    let w_slug = tasks
        .iter()
        .map(|(t, _)| t.slug.len())
        .max()
        .unwrap_or(4)
        .max(4);
    let w_owner = tasks
        .iter()
        .map(|(t, _)| t.owner.len())
        .max()
        .unwrap_or(5)
        .max(5);
    let mut s = format!(
        "{:<w_slug$}  {:<20}  {:<w_owner$}  NEXT ACTION\n",
        "TASK", "STATE", "OWNER"
    );
    for (t, _) in &tasks {
        let (state, next) = match t.revisit_due(&today) {
            Some(at) => (
                format!("{} (due)", t.state.as_str()),
                format!(
                    "revisit: its date {at} has come; reopen with `git triad run --task {}` or defer it again",
                    t.slug
                ),
            ),
            None => (t.state.as_str().to_string(), t.next_action.clone()),
        };
        s.push_str(&format!(
            "{:<w_slug$}  {state:<20}  {:<w_owner$}  {next}\n",
            t.slug, t.owner,
        ));
    }
    out(&s)?;
    ok()
}
