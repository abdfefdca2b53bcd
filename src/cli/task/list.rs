//! `git triad task list`: every task, recorded or only specified, with its state, owner and
//! next action.

use clap::Args;
use serde::Serialize;

use crate::cli::helper::need_repo;
use crate::cli::{out, CommandError, CommandResult, Context};
use crate::exit::ExitCode;
use crate::ops::tasks::Listed;

/// List tasks.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// How to print it (`--format json` or `--json`).
    #[command(flatten)]
    pub output: crate::cli::helper::Output,
}

/// One task of `task list --json`.
#[derive(Serialize)]
struct Row<'a> {
    slug: &'a str,
    /// The recorded state, or `INVALID` when the TaskSpec cannot be used.
    state: &'a str,
    owner: &'a str,
    /// What to do next; for an unusable TaskSpec, how to fix it.
    next_action: String,
    /// Why the TaskSpec cannot be used.
    spec_error: Option<&'a str>,
    unblock_condition: &'a str,
    assigned_to: &'a str,
    run: Option<&'a str>,
    parent: Option<&'a str>,
    blocked_on: &'a [String],
    /// The task has a record (it is not only specified).
    recorded: bool,
    revisit_at: Option<&'a str>,
}

/// Runs `git triad task list`.
pub fn run(ctx: &Context, args: &ListArgs) -> CommandResult {
    listed(ctx, args).map(|_| ExitCode::Ok)
}

/// Prints the task list as `git triad task list` does and answers it, typed.
pub fn listed(ctx: &Context, args: &ListArgs) -> CommandResult<Vec<Listed>> {
    let repo = need_repo(ctx)?;
    let tasks = crate::ops::tasks::list(repo).map_err(CommandError::from)?;
    print(&tasks, args)?;
    Ok(tasks)
}

/// Prints `tasks` as a table, or as JSON rows with `--json`.
fn print(tasks: &[Listed], args: &ListArgs) -> CommandResult<()> {
    if args.output.json() {
        let rows: Vec<Row<'_>> = tasks
            .iter()
            .map(
                |Listed {
                     task: t,
                     recorded,
                     problem,
                 }| Row {
                    slug: &t.slug,
                    state: match problem {
                        Some(_) => "INVALID",
                        None => t.state.as_str(),
                    },
                    owner: &t.owner,
                    next_action: match problem {
                        Some(p) => fix_action(p),
                        None => t.next_action.clone(),
                    },
                    spec_error: problem.as_deref(),
                    unblock_condition: &t.unblock_condition,
                    assigned_to: &t.assigned_to,
                    run: t.run.as_deref(),
                    parent: t.parent.as_deref(),
                    blocked_on: &t.blocked_on,
                    recorded: *recorded,
                    revisit_at: t.revisit_at.as_deref(),
                },
            )
            .collect();
        let json =
            serde_json::to_string(&rows).map_err(|e| CommandError::failure(e.to_string()))?;
        return out(&format!("{json}\n"));
    }
    if tasks.is_empty() {
        return out("no tasks yet: write one with `git triad task new <slug> --title \"...\"`\n");
    }
    let w_slug = tasks
        .iter()
        .map(|l| l.task.slug.len())
        .max()
        .unwrap_or(4)
        .max(4);
    let w_owner = tasks
        .iter()
        .map(|l| l.task.owner.len())
        .max()
        .unwrap_or(5)
        .max(5);
    let mut s = format!(
        "{:<w_slug$}  {:<20}  {:<w_owner$}  NEXT ACTION\n",
        "TASK", "STATE", "OWNER"
    );
    for Listed {
        task: t, problem, ..
    } in tasks
    {
        // A deferral whose date has come was reopened before the list was read.
        let (state, next) = match problem {
            Some(p) => ("INVALID".to_string(), fix_action(p)),
            None => (t.state.as_str().to_string(), t.next_action.clone()),
        };
        s.push_str(&format!(
            "{:<w_slug$}  {state:<20}  {:<w_owner$}  {next}\n",
            t.slug, t.owner,
        ));
    }
    out(&s)
}

/// The next action for a task whose TaskSpec does not parse (the problem names the file).
fn fix_action(problem: &str) -> String {
    format!("fix the TaskSpec, then commit it: {problem}")
}
