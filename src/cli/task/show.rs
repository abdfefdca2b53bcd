//! `git triad task show`: one task's state, what it waits for, and its latest history in
//! words (all of it with `--all`).

use clap::Args;
use serde::Serialize;

use super::record::find;
use crate::cli::helper::need_repo;
use crate::cli::{ok, out, CommandError, CommandResult, Context};
use crate::task::response::value_text;
use crate::task::state::{EventKind, HistoryEntry};
use crate::task::{Task, TaskError};

/// How many of the latest history entries `task show` prints without `--all`.
pub const RECENT: usize = 10;

/// Show one task.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The task's slug.
    pub slug: String,
    /// Every history entry, not only the last ten.
    #[arg(long)]
    pub all: bool,
    /// How to print it (`--format json` or `--json`).
    #[command(flatten)]
    pub output: crate::cli::helper::Output,
}

/// What `task show --json` prints.
#[derive(Serialize)]
struct Shown<'a> {
    task: &'a Task,
    history: &'a [HistoryEntry],
    /// The task has a record (it is not only specified).
    recorded: bool,
}

/// Runs `git triad task show`.
pub fn run(ctx: &Context, args: &ShowArgs) -> CommandResult {
    let repo = need_repo(ctx)?;
    let Some((task, history)) = find(repo, &args.slug)? else {
        return Err(CommandError::from(TaskError::Unknown(args.slug.clone())));
    };
    if args.output.json() {
        let shown = Shown {
            task: &task,
            history: &history,
            recorded: !history.is_empty(),
        };
        let json =
            serde_json::to_string(&shown).map_err(|e| CommandError::failure(e.to_string()))?;
        out(&format!("{json}\n"))?;
        return ok();
    }
    let mut s = format!("task {}  {}\n", task.slug, task.state);
    let mut field = |name: &str, value: &str| {
        if !value.is_empty() {
            s.push_str(&format!("  {name:<18} {value}\n"));
        }
    };
    field("owner:", &task.owner);
    field("next action:", &task.next_action);
    field("unblock condition:", &task.unblock_condition);
    field("assigned to:", &task.assigned_to);
    field("run:", task.run.as_deref().unwrap_or_default());
    field("parent:", task.parent.as_deref().unwrap_or_default());
    field("blocked on:", &task.blocked_on.join(", "));
    field("dependencies:", &task.dependencies.join(", "));
    field(
        "revisit at:",
        task.revisit_at.as_deref().unwrap_or_default(),
    );
    if !task.questions.is_empty() {
        s.push_str("  questions:\n");
        for (i, q) in task.questions.iter().enumerate() {
            s.push_str(&format!("    {}. {q}\n", i + 1));
        }
    }
    if !task.answers.is_empty() {
        s.push_str("  answers:\n");
        for a in &task.answers {
            s.push_str(&format!("    Q: {}\n    A: {}\n", a.question, a.answer));
        }
    }
    if history.is_empty() {
        s.push_str("\nno history yet: the task has a TaskSpec but no run has touched it\n");
    } else {
        let shown = if args.all {
            &history[..]
        } else {
            &history[history.len().saturating_sub(RECENT)..]
        };
        let left_out = history.len() - shown.len();
        if left_out == 0 {
            s.push_str(&format!(
                "\nhistory ({} entries, oldest first):\n",
                history.len()
            ));
        } else {
            s.push_str(&format!(
                "\nhistory (the last {} of {} entries, oldest first; {left_out} earlier left out, `git triad task show {} --all` shows every one):\n",
                shown.len(),
                history.len(),
                task.slug
            ));
        }
        for e in shown {
            s.push_str(&history_line(e));
        }
    }
    out(&s)?;
    ok()
}

/// One history entry for people: when, the transition, who, why, and the details.
fn history_line(e: &HistoryEntry) -> String {
    let from = e.from.map_or("(new)".to_string(), |f| f.to_string());
    let arrow = if e.from == Some(e.to) && e.event == EventKind::Note {
        format!("{} (note)", e.to)
    } else {
        format!("{from} -> {}", e.to)
    };
    let who = match &e.by {
        Some(by) => format!("{} ({by})", e.actor.as_str()),
        None => e.actor.as_str().to_string(),
    };
    let mut s = format!("  {}  {arrow}  {who}: {}\n", e.ts, e.note);
    if let Some(r) = &e.response {
        let mut detail = |label: &str, items: Vec<String>| {
            if !items.is_empty() {
                s.push_str(&format!("      {label}: {}\n", items.join("; ")));
            }
        };
        detail("outcome", vec![r.outcome.as_str().to_string()]);
        detail(
            "summary",
            [r.summary.clone()]
                .into_iter()
                .filter(|x| !x.is_empty())
                .collect(),
        );
        detail("questions", r.requests.clone());
        detail("suggested", r.suggested_specialists.clone());
        detail(
            "dependencies",
            r.dependencies
                .iter()
                .map(|d| {
                    format!(
                        "{} (owner: {})",
                        d.task,
                        if d.owner.is_empty() {
                            "operator"
                        } else {
                            &d.owner
                        }
                    )
                })
                .collect(),
        );
        detail(
            "alternatives",
            r.alternatives.iter().map(value_text).collect(),
        );
        detail("policy", r.policy_refs.iter().map(value_text).collect());
        detail("evidence needed", r.evidence_needed.clone());
        detail("conditions", r.conditions.clone());
    }
    if let Some(d) = &e.decision {
        let mut line = format!("      decision: {}", d.decision);
        if let Some(to) = &d.assigned_to {
            line.push_str(&format!(" (to {to})"));
        }
        if !d.created_tasks.is_empty() {
            line.push_str(&format!("; created {}", d.created_tasks.join(", ")));
        }
        if let Some(at) = &d.revisit_at {
            line.push_str(&format!("; revisit at {at}"));
        }
        s.push_str(&line);
        s.push('\n');
    }
    for a in &e.answers {
        s.push_str(&format!(
            "      Q: {}\n      A: {}\n",
            a.question,
            a.answer.replace('\n', "\n         ")
        ));
    }
    s
}
