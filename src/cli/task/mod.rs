//! `git triad task`: write TaskSpecs, and inspect and steer the arbiter-owned task state
//! machine (seed 004) recorded under `refs/triad/tasks/<slug>`.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use serde_json::json;

use super::run::need_repo;
use super::{ok, out, CommandError, CommandResult, Context};
use crate::task::response::{normalize_specialist, value_text};
use crate::task::spec::{self, template, valid_slug};
use crate::task::state::{EventKind, HistoryEntry};
use crate::task::{answers, store, workflow};
use crate::task::{ArbiterDecision, Decision, Task, TaskError, TaskState};

/// Write TaskSpecs and follow tasks through the arbiter's state machine.
///
/// Every task has a state, an owner (who acts next), a next action and an unblock condition.
/// Stages never drop work: a stage that cannot do it answers a structured outcome (NEEDS_INFO,
/// OUT_OF_SCOPE, BLOCKED, TOO_COSTLY, POLICY_VIOLATION, LOW_CONFIDENCE) and the arbiter routes
/// it. Only the arbiter closes, defers or approves a task; `close`, `defer` and `reassign` are
/// arbiter decisions you take on its behalf, recorded with your name.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  git triad task new add-login --title \"Add a login form\"
  git triad task list                      every task: state, owner, next action
  git triad task show add-login            its state and full history
  git triad task answer add-login          answer the questions a stage asked
  git triad task close add-login-dep-1 --reason done
  git triad task defer add-login --reason \"after the release\" --revisit-at 2026-09-01")]
pub struct TaskArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: TaskCommand,
}

/// `git triad task` subcommands.
#[derive(Debug, Subcommand)]
pub enum TaskCommand {
    /// Write a commented TaskSpec template to `.triad/tasks/<slug>.toml`.
    New(NewArgs),
    /// List every task: recorded ones and TaskSpecs not run yet (shown as OPEN).
    List(ListArgs),
    /// Show a task's state, what it waits for, and its full history.
    Show(ShowArgs),
    /// Answer the questions a stage asked (NEEDS_INFO); the task returns to that stage.
    Answer(AnswerArgs),
    /// Defer a task (an arbiter decision taken by you): parked, with a revisit trigger.
    Defer(DeferArgs),
    /// Close a task (an arbiter decision taken by you); a closed dependency unblocks its parent.
    Close(CloseArgs),
    /// Hand a task to another specialist (an arbiter decision taken by you).
    Reassign(ReassignArgs),
}

/// Write a TaskSpec template.
#[derive(Debug, Args)]
pub struct NewArgs {
    /// Short name: lowercase letters, digits, dashes (`add-login`).
    pub slug: String,
    /// One-line title.
    #[arg(long)]
    pub title: String,
    /// Replace an existing file.
    #[arg(long)]
    pub force: bool,
}

/// List tasks.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Print a JSON array instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Show one task.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The task's slug.
    pub slug: String,
    /// Print `{"task": ..., "history": [...]}` as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Answer a task's questions.
#[derive(Debug, Args)]
#[command(after_help = "Answers format (files and the editor alike):
  # comment lines are ignored
  Q: Which database should the cache use?
  A: Redis 7, the one in docker-compose.yml
     (an answer may go on over several lines)

  Q: Should the old endpoint stay?
  A: Yes, until v3

Every question the stage asked needs an answer; questions are matched by their text, or by
position when you reworded them. Without --file, $GIT_EDITOR, core.editor, $VISUAL or $EDITOR
(else vi) opens on a template listing the questions.")]
pub struct AnswerArgs {
    /// The task's slug.
    pub slug: String,
    /// Read the answers from this file (`-` for stdin) instead of opening an editor.
    #[arg(long, short = 'F', value_name = "FILE")]
    pub file: Option<PathBuf>,
}

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

/// Close a task.
#[derive(Debug, Args)]
pub struct CloseArgs {
    /// The task's slug.
    pub slug: String,
    /// Why (recorded with your name), e.g. `done` or `not allowed: POL-7`.
    #[arg(long)]
    pub reason: String,
}

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

/// Runs `git triad task`.
pub fn run(ctx: &Context, args: &TaskArgs) -> CommandResult {
    match &args.command {
        TaskCommand::New(a) => new(ctx, a),
        TaskCommand::List(a) => list(ctx, a),
        TaskCommand::Show(a) => show(ctx, a),
        TaskCommand::Answer(a) => answer(ctx, a),
        TaskCommand::Defer(a) => {
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
        TaskCommand::Close(a) => decide(
            ctx,
            &a.slug,
            ArbiterDecision::new(&a.slug, Decision::Close, ""),
            &a.reason,
        ),
        TaskCommand::Reassign(a) => {
            let Some(to) = normalize_specialist(&a.to) else {
                return Err(CommandError::usage("--to names nobody")
                    .hint("name a stage (architect, implement, refactor, verify) or `operator`"));
            };
            let d = ArbiterDecision::new(&a.slug, Decision::Reassign, "").to(to);
            decide(ctx, &a.slug, d, &a.reason)
        }
    }
}

fn new(ctx: &Context, args: &NewArgs) -> CommandResult {
    let repo = need_repo(ctx)?;
    if !valid_slug(&args.slug) {
        return Err(
            CommandError::usage(format!("`{}` is not a valid task slug", args.slug))
                .hint("use lowercase letters, digits and dashes, e.g. `add-login`"),
        );
    }
    let root = repo
        .workdir()
        .ok_or_else(|| CommandError::usage("this repository has no work tree"))?;
    let rel = spec::spec_path(&args.slug);
    let path = root.join(&rel);
    if path.exists() && !args.force {
        return Err(CommandError::usage(format!("{rel} already exists"))
            .hint("edit it, or pass --force to replace it with a fresh template"));
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(&path, template(&args.slug, &args.title))?;
    out(&format!(
        "wrote {rel}\nnext: describe the task and its requirements, then `git add {rel} && git commit -m \"task: {}\"` and `git triad run --task {}`\n",
        args.slug, args.slug
    ))?;
    ok()
}

/// Turns a task error into a message with what to do next.
fn task_error(e: TaskError) -> CommandError {
    match &e {
        TaskError::Unknown(_) => CommandError::usage(e)
            .hint("`git triad task list` shows the known tasks; `git triad task new <slug>` writes a TaskSpec"),
        TaskError::BadSlug(_) => CommandError::usage(e)
            .hint("`git triad task list` shows the known tasks"),
        TaskError::NotWaiting { slug, .. } => {
            let hint = format!("only a WAITING_ON_USER task has questions to answer; `git triad task show {slug}` says what it waits for");
            CommandError::usage(e).hint(hint)
        }
        TaskError::IllegalTransition { slug, .. } => {
            let hint = format!("`git triad task show {slug}` shows its state and who acts next");
            CommandError::usage(e).hint(hint)
        }
        TaskError::BadAnswers(_) => CommandError::usage(e)
            .hint("write each question as `Q: ...` followed by `A: <your answer>`; `git triad task answer -h` shows the format"),
        TaskError::InvalidDecision { .. } => CommandError::usage(e),
        TaskError::Contended(_) => {
            CommandError::failure(e).hint("another git triad process is updating it; try again")
        }
        _ => CommandError::failure(e),
    }
}

/// The task's record, or an OPEN view of a TaskSpec that has none; `None` for neither.
fn find(repo: &git2::Repository, slug: &str) -> CommandResult<Option<(Task, Vec<HistoryEntry>)>> {
    if let Some(rec) = store::load(repo, slug).map_err(task_error)? {
        return Ok(Some((rec.task, rec.history)));
    }
    Ok(workflow::spec_exists(repo, slug).then(|| (Task::open(slug, ""), Vec::new())))
}

fn list(ctx: &Context, args: &ListArgs) -> CommandResult {
    let repo = need_repo(ctx)?;
    let mut tasks: Vec<(Task, bool)> = store::list(repo)
        .map_err(task_error)?
        .into_iter()
        .map(|t| (t, true))
        .collect();
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
        s.push_str(&format!(
            "{:<w_slug$}  {:<20}  {:<w_owner$}  {}\n",
            t.slug,
            t.state.as_str(),
            t.owner,
            t.next_action
        ));
    }
    out(&s)?;
    ok()
}

fn show(ctx: &Context, args: &ShowArgs) -> CommandResult {
    let repo = need_repo(ctx)?;
    let Some((task, history)) = find(repo, &args.slug)? else {
        return Err(task_error(TaskError::Unknown(args.slug.clone())));
    };
    if args.json {
        out(&format!(
            "{}\n",
            json!({"task": task, "history": history, "recorded": !history.is_empty()})
        ))?;
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
        s.push_str(&format!(
            "\nhistory ({} entries, oldest first):\n",
            history.len()
        ));
        for e in &history {
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

/// Who takes a decision or answers, for the record.
fn who(repo: &git2::Repository) -> CommandResult<String> {
    let (name, email) = crate::notes::identity(repo).ok_or_else(|| {
        CommandError::usage("this is recorded with your name, and no git identity is configured")
            .hint("set it with `git config user.name \"Your Name\"` and `git config user.email you@example.com`")
    })?;
    Ok(format!("{name} <{email}>"))
}

fn answer(ctx: &Context, args: &AnswerArgs) -> CommandResult {
    let repo = need_repo(ctx)?;
    let Some((task, _)) = find(repo, &args.slug)? else {
        return Err(task_error(TaskError::Unknown(args.slug.clone())));
    };
    if task.state != TaskState::WaitingOnUser {
        return Err(task_error(TaskError::NotWaiting {
            slug: task.slug,
            state: task.state,
        }));
    }
    let by = who(repo)?;
    let text = match &args.file {
        Some(p) if p.as_os_str() == "-" => std::io::read_to_string(std::io::stdin())?,
        Some(p) => std::fs::read_to_string(p).map_err(|e| {
            CommandError::usage(format!("cannot read {}: {e}", p.display()))
                .hint("pass the path of a file with `Q:`/`A:` lines, or leave out --file to use your editor")
        })?,
        None => edit_answers(ctx, repo, &task)?,
    };
    let given = answers::parse(&text).map_err(task_error)?;
    let task = workflow::answer(repo, &args.slug, given, &by).map_err(task_error)?;
    let next = match &task.run {
        Some(run) => format!("next: `git triad resume {run}` continues the run with your answers"),
        None => format!(
            "next: `git triad run --task {}` starts a run with your answers",
            task.slug
        ),
    };
    out(&format!(
        "Recorded {} answer(s) for task `{}`: it is {} to the {} stage again.\n{next}\n",
        task.answers.len(),
        task.slug,
        task.state,
        task.assigned_to
    ))?;
    ok()
}

/// Opens the user's editor on the answers template and returns what was saved.
fn edit_answers(ctx: &Context, repo: &git2::Repository, task: &Task) -> CommandResult<String> {
    let path = repo.path().join("TRIAD_ANSWERS");
    std::fs::write(
        &path,
        answers::template(&task.slug, &task.assigned_to, &task.questions),
    )?;
    let editor = ctx
        .env_var("GIT_EDITOR")
        .or_else(|| {
            repo.config()
                .ok()
                .and_then(|c| c.get_string("core.editor").ok())
        })
        .or_else(|| ctx.env_var("VISUAL"))
        .or_else(|| ctx.env_var("EDITOR"))
        .filter(|e| !e.trim().is_empty())
        .unwrap_or_else(|| "vi".to_string());
    // Like git: the editor value is a shell snippet, the file its last argument.
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$@\""))
        .arg(&editor)
        .arg(&path)
        .current_dir(&ctx.cwd)
        .status()
        .map_err(|e| {
            CommandError::failure(format!("cannot start the editor `{editor}`: {e}"))
                .hint("set $GIT_EDITOR or $EDITOR, or pass the answers with --file")
        })?;
    if !status.success() {
        return Err(CommandError::failure(format!(
            "the editor `{editor}` exited with {status}; no answers were recorded"
        ))
        .hint("pass the answers with --file instead"));
    }
    Ok(std::fs::read_to_string(&path)?)
}

fn looks_like_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 10
        && b[..10].iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            _ => c.is_ascii_digit(),
        })
}

/// Records an arbiter decision taken by the user and says what follows.
fn decide(ctx: &Context, slug: &str, mut d: ArbiterDecision, reason: &str) -> CommandResult {
    let reason = reason.trim();
    if reason.is_empty() {
        return Err(CommandError::usage("a decision needs a reason")
            .hint("say why, e.g. --reason \"done: logs attached to the ticket\""));
    }
    let repo = need_repo(ctx)?;
    if find(repo, slug)?.is_none() {
        return Err(task_error(TaskError::Unknown(slug.to_string())));
    }
    let by = who(repo)?;
    d.note = format!("by {by}: {reason}");
    let (task, parent) = workflow::decide(repo, slug, &d, &by).map_err(task_error)?;
    let mut s = format!(
        "Task `{}` is now {} (an arbiter decision, taken by you): {reason}\nnext: {}\n",
        task.slug, task.state, task.next_action
    );
    if let Some(p) = parent {
        s.push_str(&format!(
            "Its parent `{}` has every dependency done and is {} to the {} stage again.\nnext: {}\n",
            p.slug, p.state, p.assigned_to, p.next_action
        ));
    }
    out(&s)?;
    ok()
}
