//! What a session's tools ask of git triad itself, typed: a tool call becomes a
//! [`Request`] here, once, with its arguments checked (a slug, a run id, a range, a
//! workflow by its registered name), and the [`Product`] does it in this process and
//! answers a typed [`Answer`]: the operation's outcome ([`Outcome`]: the runs, the review,
//! the chamber session, from [`crate::ops`]) or a typed [`Failure`], the exit code, and
//! what was printed for the model to read. The session never spawns its own program, never
//! reads an exit status as a number and never finds a failure in printed text; the command
//! layer implements [`Product`] (it alone loads a configuration from the user's layers and
//! `-c` overrides) by calling the operations through the same code every subcommand runs.

use std::path::Path;

use serde_json::Value;

use super::tools::{arg, args_list};
use crate::exit::ExitCode;
use crate::ops::tasks::Listed;
use crate::ops::{Chambered, Ran, Reviewed};
use crate::pipeline::{CorruptRun, RunState};
use crate::task::{spec, Task};
use crate::workflow_name::Workflow;

/// One thing a session asks git triad to do, on its worktree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// The TaskSpecs of the session branch and their state (`git triad task list`).
    ListTasks,
    /// The runs recorded in the repository (`git triad log`).
    ListRuns,
    /// One run in detail (`git triad log <run>`).
    ShowRun {
        /// The run id.
        run_id: String,
    },
    /// A run of the pipeline on a committed task (`git triad run`).
    RunPipeline {
        /// The task's slug.
        task: String,
        /// How the solution is made.
        workflow: Workflow,
    },
    /// A stopped run taken up (`git triad resume`).
    ResumeRun {
        /// The run id.
        run_id: String,
    },
    /// Answers to a waiting task's questions (`git triad task answer`).
    AnswerTask {
        /// The task's slug.
        task: String,
        /// Each question with its answer.
        answers: Vec<(String, String)>,
    },
    /// A review of commits (`git triad review <range>`).
    ReviewRange {
        /// A commit or a range.
        range: String,
    },
    /// A question for the deliberation chamber (`git triad chamber ask`).
    OpenChamber {
        /// The question.
        question: String,
        /// Files, revisions or tasks the panel reads.
        context: Vec<String>,
    },
}

impl Request {
    /// The request tool `name` makes with `args`; `Ok(None)` for a tool that is not one of
    /// git triad's commands (it reads the branch, or routes), `Err` for arguments a
    /// command would not take (the model is told why).
    pub fn of(name: &str, args: &Value) -> Result<Option<Request>, String> {
        Ok(Some(match name {
            "list_tasks" => Request::ListTasks,
            "list_runs" => Request::ListRuns,
            "show_run" => Request::ShowRun {
                run_id: run_id(args)?,
            },
            "run_pipeline" => Request::RunPipeline {
                task: slug(args)?,
                workflow: match args.get("workflow").and_then(Value::as_str) {
                    Some(w) => w.parse()?,
                    None => Workflow::default(),
                },
            },
            "resume_run" => Request::ResumeRun {
                run_id: run_id(args)?,
            },
            "answer_task" => Request::AnswerTask {
                task: slug(args)?,
                answers: answers(args),
            },
            "review_range" => {
                let range = arg(args, "range")?;
                if range.starts_with('-') || range.trim().is_empty() {
                    return Err(format!("`{range}` is not a commit or a range"));
                }
                Request::ReviewRange {
                    range: range.to_string(),
                }
            }
            "open_chamber" => Request::OpenChamber {
                question: arg(args, "question")?.to_string(),
                context: args_list(args, "context"),
            },
            _ => return Ok(None),
        }))
    }

    /// The command it is, as a person would type it (`run`, `task answer`): what an answer
    /// that failed names.
    pub fn command(&self) -> &'static str {
        match self {
            Request::ListTasks => "task list",
            Request::ListRuns | Request::ShowRun { .. } => "log",
            Request::RunPipeline { .. } => "run",
            Request::ResumeRun { .. } => "resume",
            Request::AnswerTask { .. } => "task answer",
            Request::ReviewRange { .. } => "review",
            Request::OpenChamber { .. } => "chamber ask",
        }
    }
}

/// What a request came to, typed: the operation's own outcome ([`crate::ops`]), never
/// read back from what the command printed.
#[derive(Debug)]
pub enum Outcome {
    /// The runs the pipeline drove (`run_pipeline`, `resume_run`): the one asked for, then
    /// the run it unblocked, if it finished that run's last dependency.
    Ran(Vec<Ran>),
    /// A review (`review_range`).
    Reviewed(Box<Reviewed>),
    /// A chamber session (`open_chamber`), as it stands.
    Chambered(Box<Chambered>),
    /// The tasks (`list_tasks`), by slug.
    Tasks(Vec<Listed>),
    /// Runs (`list_runs`: every run, newest first, and the records that do not load;
    /// `show_run`: the one asked for).
    Runs {
        /// The runs whose record loads.
        runs: Vec<RunState>,
        /// The runs whose record does not load.
        corrupt: Vec<CorruptRun>,
    },
    /// The task a person's answers were recorded on (`answer_task`), back at the stage
    /// that asked.
    Answered(Box<Task>),
    /// Nothing was done (`review_range` with nothing new to review).
    Nothing,
}

impl Outcome {
    /// The outcome in a sentence, for an answer whose exit code says it failed without an
    /// error (a run that ended `failed`, a review at its failing threshold).
    pub fn described(&self) -> String {
        match self {
            Outcome::Ran(runs) => match runs.last() {
                Some(ran) => format!(
                    "run {} ended {}{}",
                    ran.state.run_id(),
                    ran.state.status().as_str(),
                    ran.state
                        .stop_reason()
                        .map(|r| format!(": {}", r.describe()))
                        .unwrap_or_default()
                ),
                None => "no run was driven".into(),
            },
            Outcome::Reviewed(r) => format!("the review's verdict is {}", r.review.verdict),
            Outcome::Chambered(c) => format!(
                "chamber session {} is {}",
                c.session.id,
                c.session.status.as_str()
            ),
            Outcome::Tasks(tasks) => format!("{} task(s)", tasks.len()),
            Outcome::Runs { runs, corrupt } => {
                format!("{} run(s), {} unreadable", runs.len(), corrupt.len())
            }
            Outcome::Answered(task) => format!("task {} is {}", task.slug, task.state),
            Outcome::Nothing => "there was nothing to do".into(),
        }
    }
}

/// Why a request failed, as the command line would show it: the error, its causes and
/// what to do next, each typed, never read back from printed text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// What went wrong.
    pub error: String,
    /// Its causes, outermost first.
    pub causes: Vec<String>,
    /// What to do next, one line each.
    pub hints: Vec<String>,
}

impl Failure {
    /// The failure as `error: …`, `caused by: …` and `hint: …` lines.
    pub fn lines(&self) -> Vec<String> {
        std::iter::once(format!("error: {}", self.error))
            .chain(self.causes.iter().map(|c| format!("caused by: {c}")))
            .chain(self.hints.iter().map(|h| format!("hint: {h}")))
            .collect()
    }
}

/// What git triad answered a request.
#[derive(Debug)]
pub struct Answer {
    /// How the command ended.
    pub exit: ExitCode,
    /// What it came to, or why it failed.
    pub outcome: Result<Outcome, Failure>,
    /// What it printed for its caller (a run's report, a list).
    pub out: String,
    /// What it said while it worked.
    pub said: String,
}

impl Answer {
    /// The answer as the model is told it: the outcome with what was printed, or, for a
    /// failure (an error, or an outcome whose exit code says it failed), why (`Err`).
    pub fn told(&self, command: &str) -> Result<String, String> {
        let why = match (&self.outcome, self.exit.outcome()) {
            (Ok(_), Some(meaning)) => {
                return Ok(format!(
                    "exit {} ({meaning})\n{}",
                    self.exit.code(),
                    self.out.trim()
                ))
            }
            (Ok(outcome), None) => outcome.described(),
            (Err(failure), _) => failure
                .lines()
                .into_iter()
                .take(12)
                .collect::<Vec<_>>()
                .join("\n"),
        };
        Err(format!(
            "git triad {command} failed (exit {}): {why}\n{}",
            self.exit.code(),
            self.out.trim()
        )
        .trim_end()
        .to_string())
    }
}

/// `answers` as `git triad task answer` reads them: a `Q:` line (the question on one line)
/// and an `A:` line for each.
pub fn answers_text(answers: &[(String, String)]) -> String {
    let mut text = String::new();
    for (q, a) in answers {
        let q = q.split_whitespace().collect::<Vec<_>>().join(" ");
        text.push_str(&format!("Q: {q}\nA: {a}\n\n"));
    }
    text
}

/// A listener for each line a command says while it works (a run's stage lines among them).
pub type Heard = std::sync::Arc<dyn Fn(&str) + Send + Sync>;

/// git triad, as a session's tools reach it: the command layer, in this process.
pub trait Product: Send + Sync {
    /// Does `req` on the session worktree `worktree`, blocking until it is done; `heard`
    /// gets each line the command says while it works.
    fn call(&self, worktree: &Path, req: &Request, heard: Heard) -> Answer;
}

/// The `task` argument, a valid slug.
fn slug(args: &Value) -> Result<String, String> {
    let task = arg(args, "task")?;
    if !spec::valid_slug(task) {
        return Err(format!(
            "`{task}` is not a task slug (lowercase letters, digits and dashes)"
        ));
    }
    Ok(task.to_string())
}

/// The `run_id` argument: letters, digits, `-`, `_` and `.`, not starting with `-`.
fn run_id(args: &Value) -> Result<String, String> {
    let id = arg(args, "run_id")?;
    let ok = !id.is_empty()
        && !id.starts_with('-')
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !ok {
        return Err(format!("`{id}` is not a run id (list_runs shows them)"));
    }
    Ok(id.to_string())
}

/// The `answers` argument: each question with its answer.
fn answers(args: &Value) -> Vec<(String, String)> {
    args.get("answers")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .map(|a| {
                    let text = |k: &str| a.get(k).and_then(Value::as_str).unwrap_or("").to_string();
                    (text("question"), text("answer"))
                })
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_tool_call_becomes_a_typed_request_or_is_refused_with_why() {
        assert_eq!(
            Request::of(
                "run_pipeline",
                &json!({"task": "add-x", "workflow": "debate"})
            ),
            Ok(Some(Request::RunPipeline {
                task: "add-x".into(),
                workflow: Workflow::Debate
            }))
        );
        assert_eq!(
            Request::of("run_pipeline", &json!({"task": "add-x"})),
            Ok(Some(Request::RunPipeline {
                task: "add-x".into(),
                workflow: Workflow::Sequential
            }))
        );
        // A model's text never becomes an option of the command it is passed to.
        assert!(
            Request::of("run_pipeline", &json!({"task": "-F /etc/passwd"}))
                .unwrap_err()
                .contains("is not a task slug")
        );
        assert!(
            Request::of("run_pipeline", &json!({"task": "a", "workflow": "vote"}))
                .unwrap_err()
                .contains("`vote` is not a workflow")
        );
        assert!(Request::of("show_run", &json!({"run_id": "--all"}))
            .unwrap_err()
            .contains("is not a run id"));
        assert!(Request::of("review_range", &json!({"range": "--staged"}))
            .unwrap_err()
            .contains("is not a commit or a range"));
        assert_eq!(Request::of("read_file", &json!({"path": "a"})), Ok(None));
    }

    #[test]
    fn an_answer_tells_an_outcome_or_the_failure_with_its_error_first() {
        let done = Answer {
            exit: ExitCode::Ok,
            outcome: Ok(Outcome::Runs {
                runs: Vec::new(),
                corrupt: Vec::new(),
            }),
            out: "No runs yet.\n".into(),
            said: String::new(),
        };
        assert_eq!(done.told("log").unwrap(), "exit 0 (done)\nNo runs yet.");
        // The failure is told from its typed parts, whatever else was said while it worked
        // (a line of it that starts with "error" included).
        let usage = Answer {
            exit: ExitCode::Usage,
            outcome: Err(Failure {
                error: "there is no task `x`".into(),
                causes: vec![],
                hints: vec!["create it".into()],
            }),
            out: String::new(),
            said: "triad: note\nerrors: 3 seen in the log\n".into(),
        };
        assert_eq!(
            usage.told("run").unwrap_err(),
            "git triad run failed (exit 2): error: there is no task `x`\nhint: create it"
        );
    }
}
