//! What a session's tools ask of git triad itself, typed: a tool call becomes a
//! [`Request`] here, once, with its arguments checked (a slug, a run id, a range, a
//! workflow by its registered name), and the [`Product`] does it in this process and
//! answers a typed [`Answer`] (the exit code, what it printed). The session never spawns
//! its own program and never reads an exit status as a number; the command layer that
//! implements [`Product`] is the same code every subcommand runs.

use std::path::Path;

use serde_json::Value;

use super::tools::{arg, args_list};
use crate::exit::ExitCode;
use crate::task::spec;
use crate::workflow::Workflow;

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

/// What git triad answered a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// How the command ended.
    pub exit: ExitCode,
    /// What it printed for its caller (a run's report, a list).
    pub out: String,
    /// What it said while it worked, and its error with hints when it failed.
    pub said: String,
}

impl Answer {
    /// The answer as the model is told it: the outcome with what was printed, or, for an
    /// error or a usage error, the failure with its error line and hints (`Err`).
    pub fn told(&self, command: &str) -> Result<String, String> {
        if let Some(meaning) = self.exit.outcome() {
            return Ok(format!(
                "exit {} ({meaning})\n{}",
                self.exit.code(),
                self.out.trim()
            ));
        }
        let lines: Vec<&str> = self.said.lines().filter(|l| !l.trim().is_empty()).collect();
        // The error line first (what a transcript shows), then its hints.
        let first = lines
            .iter()
            .position(|l| l.starts_with("error"))
            .unwrap_or(lines.len().saturating_sub(12));
        Err(format!(
            "git triad {command} failed (exit {}): {}\n{}",
            self.exit.code(),
            lines[first..]
                .iter()
                .take(12)
                .cloned()
                .collect::<Vec<_>>()
                .join("\n"),
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
        let halted = Answer {
            exit: ExitCode::Halt,
            out: "run r1: HALT\n".into(),
            said: "triad: [1/4 architect] ...\n".into(),
        };
        assert_eq!(
            halted.told("run").unwrap(),
            "exit 3 (HALT: the arbiter stopped the run for a human)\nrun r1: HALT"
        );
        let usage = Answer {
            exit: ExitCode::Usage,
            out: String::new(),
            said: "triad: note\nerror: there is no task `x`\nhint: create it\n".into(),
        };
        assert_eq!(
            usage.told("run").unwrap_err(),
            "git triad run failed (exit 2): error: there is no task `x`\nhint: create it"
        );
    }
}
