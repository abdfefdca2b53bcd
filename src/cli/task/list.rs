//! `git triad task list`: every task, recorded or only specified, with its state, owner and
//! next action.

use clap::Args;
use serde::Serialize;

use crate::cli::helper::need_repo;
use crate::cli::{ok, out, CommandError, CommandResult, Context};
use crate::task::{lifecycle, store, Task, TaskState};

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
    let repo = need_repo(ctx)?;
    // (task, recorded, why its TaskSpec cannot be used)
    let mut tasks: Vec<(Task, bool, Option<String>)> = Vec::new();
    for t in store::list(repo).map_err(CommandError::from)? {
        // A merged result marks its task EXECUTED before it is listed.
        let t = match t.state {
            TaskState::Approved => lifecycle::refresh(repo, &t.slug)
                .map_err(CommandError::from)?
                .unwrap_or(t),
            _ => t,
        };
        tasks.push((t, true, None));
    }
    for slug in lifecycle::spec_slugs(repo) {
        if !tasks.iter().any(|(t, _, _)| t.slug == slug) {
            let problem = spec_problem(repo, &slug);
            tasks.push((Task::open(&slug, ""), false, problem));
        }
    }
    tasks.sort_by(|a, b| a.0.slug.cmp(&b.0.slug));
    if args.output.json() {
        let rows: Vec<Row<'_>> = tasks
            .iter()
            .map(|(t, recorded, problem)| Row {
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
            })
            .collect();
        let json =
            serde_json::to_string(&rows).map_err(|e| CommandError::failure(e.to_string()))?;
        out(&format!("{json}\n"))?;
        return ok();
    }
    if tasks.is_empty() {
        out("no tasks yet: write one with `git triad task new <slug> --title \"...\"`\n")?;
        return ok();
    }
    let w_slug = tasks
        .iter()
        .map(|(t, _, _)| t.slug.len())
        .max()
        .unwrap_or(4)
        .max(4);
    let w_owner = tasks
        .iter()
        .map(|(t, _, _)| t.owner.len())
        .max()
        .unwrap_or(5)
        .max(5);
    let mut s = format!(
        "{:<w_slug$}  {:<20}  {:<w_owner$}  NEXT ACTION\n",
        "TASK", "STATE", "OWNER"
    );
    for (t, _, problem) in &tasks {
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
    out(&s)?;
    ok()
}

/// Why the TaskSpec of an unrecorded task cannot start a run, if it cannot: the work tree's
/// copy is what the user edits, so it is read first, then HEAD's.
fn spec_problem(repo: &git2::Repository, slug: &str) -> Option<String> {
    let path = crate::task::spec::spec_path(slug);
    let from_tree = repo
        .workdir()
        .and_then(|root| crate::fsguard::read_to_string(root, &path).ok());
    let text = match from_tree {
        Some(text) => text,
        None => {
            let tree = repo.head().ok()?.peel_to_tree().ok()?;
            let entry = tree.get_path(std::path::Path::new(&path)).ok()?;
            let blob = repo.find_blob(entry.id()).ok()?;
            match std::str::from_utf8(blob.content()) {
                Ok(t) => t.to_string(),
                Err(_) => return Some("it is not UTF-8 text".into()),
            }
        }
    };
    crate::task::TaskSpec::parse(&text, &path, slug)
        .err()
        .map(|e| crate::bounded::clip(&e.to_string(), 300))
}

/// The next action for a task whose TaskSpec does not parse (the problem names the file).
fn fix_action(problem: &str) -> String {
    format!("fix the TaskSpec, then commit it: {problem}")
}
