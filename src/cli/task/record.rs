//! What the task subcommands share: finding a task, who the person at the keyboard is, and
//! recording a decision they take.

use crate::cli::helper::need_repo;
use crate::cli::{ok, out, CommandError, CommandResult, Context};
use crate::task::lifecycle;
use crate::task::state::HistoryEntry;
use crate::task::{ArbiterDecision, Task, TaskError};

/// The task's record, or an OPEN view of a TaskSpec that has none; `None` for neither.
pub(super) fn find(
    repo: &git2::Repository,
    slug: &str,
) -> CommandResult<Option<(Task, Vec<HistoryEntry>)>> {
    crate::ops::tasks::find(repo, slug).map_err(CommandError::from)
}

/// Who takes a decision or answers, for the record.
pub(super) fn who(repo: &git2::Repository) -> CommandResult<String> {
    let (name, email) = crate::notes::identity(repo).ok_or_else(|| {
        CommandError::usage("this is recorded with your name, and no git identity is configured")
            .hint("set it with `git config user.name \"Your Name\"` and `git config user.email you@example.com`")
    })?;
    Ok(format!("{name} <{email}>"))
}

/// Records an arbiter decision taken by the user and says what follows.
pub(super) fn decide(
    ctx: &Context,
    slug: &str,
    mut d: ArbiterDecision,
    reason: &str,
) -> CommandResult {
    let reason = reason.trim();
    if reason.is_empty() {
        return Err(CommandError::usage("a decision needs a reason")
            .hint("say why, e.g. --reason \"done: logs attached to the ticket\""));
    }
    let repo = need_repo(ctx)?;
    if find(repo, slug)?.is_none() {
        return Err(CommandError::from(TaskError::Unknown(slug.to_string())));
    }
    let by = who(repo)?;
    d.note = format!("by {by}: {reason}");
    let (task, parent) = lifecycle::decide(repo, slug, &d, &by).map_err(CommandError::from)?;
    let mut s = format!(
        "Task `{}` is now {} (an arbiter decision, taken by you): {reason}\nnext: {}\n",
        task.slug, task.state, task.next_action
    );
    // What ends the state (a deferral's revisit date, how to reopen): the decision's
    // other half, which `task show` lists and a confirmation should not hide.
    if !task.unblock_condition.is_empty() {
        s.push_str(&format!("until: {}\n", task.unblock_condition));
    }
    if let Some(p) = parent {
        s.push_str(&format!(
            "Its parent `{}` has every dependency done and is {} to the {} stage again.\nnext: {}\n",
            p.slug, p.state, p.assigned_to, p.next_action
        ));
    }
    out(&s)?;
    crate::cli::helper::continue_unblocked(ctx, slug, ok(), false)
}
