//! `git triad task answer`: record the user's answers to the questions a stage asked, from a
//! file or the editor, and send the task back to that stage.

use std::path::PathBuf;

use clap::Args;

use super::record::{find, who};
use crate::cli::helper::need_repo;
use crate::cli::{out, CommandError, CommandResult, Context};
use crate::exit::ExitCode;
use crate::task::{answers, Task, TaskError, TaskState};

/// Answer a task's questions.
#[derive(Debug, Args)]
#[command(
    after_help = "When the stage asked one question, the answer may be plain text:
  git triad task answer add-login \"Redis 7, the one in docker-compose.yml\"

Answers format (files and the editor alike; plain text, too, for one question):
  # comment lines are ignored
  Q: Which database should the cache use?
  A: Redis 7, the one in docker-compose.yml
     (an answer may go on over several lines)

  Q: Should the old endpoint stay?
  A: Yes, until v3

Every question the stage asked needs an answer; questions are matched by their text, or by
position when you reworded them. Without --file, $GIT_EDITOR, core.editor, $VISUAL or $EDITOR
(else vi) opens on a template listing the questions."
)]
pub struct AnswerArgs {
    /// The task's slug.
    pub slug: String,
    /// The answer itself, when the stage asked one question (several questions: use --file
    /// or the editor, with `Q:`/`A:` lines).
    #[arg(value_name = "ANSWER", conflicts_with = "file")]
    pub answer: Option<String>,
    /// Read the answers from this file (`-` for stdin) instead of opening an editor.
    #[arg(long, short = 'F', value_name = "FILE")]
    pub file: Option<PathBuf>,
}

/// Runs `git triad task answer`.
pub fn run(ctx: &Context, args: &AnswerArgs) -> CommandResult {
    answered(ctx, args).map(|_| ExitCode::Ok)
}

/// Records the answers as `git triad task answer` does, says what comes next and answers
/// the task, typed.
pub fn answered(ctx: &Context, args: &AnswerArgs) -> CommandResult<Task> {
    let repo = need_repo(ctx)?;
    let Some((task, _)) = find(repo, &args.slug)? else {
        return Err(CommandError::from(TaskError::Unknown(args.slug.clone())));
    };
    if task.state != TaskState::WaitingOnUser {
        return Err(CommandError::from(TaskError::NotWaiting {
            slug: task.slug,
            state: task.state,
        }));
    }
    let by = who(repo)?;
    let text = match &args.file {
        None if args.answer.is_some() => args.answer.clone().unwrap_or_default(),
        Some(p) if p.as_os_str() == "-" => std::io::read_to_string(std::io::stdin())?,
        Some(p) => std::fs::read_to_string(p).map_err(|e| {
            CommandError::usage(format!("cannot read {}: {e}", p.display()))
                .hint("pass the path of a file with `Q:`/`A:` lines, or leave out --file to use your editor")
        })?,
        None => edit_answers(ctx, repo, &task)?,
    };
    let task =
        crate::ops::tasks::answer(repo, &args.slug, &text, &by).map_err(CommandError::from)?;
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
    Ok(task)
}

/// Opens the user's editor on the answers template and returns what was saved.
fn edit_answers(ctx: &Context, repo: &git2::Repository, task: &Task) -> CommandResult<String> {
    let path = crate::git::paths::answers_draft(repo);
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
