//! `git triad review`: the arbiter, with its hard evidence, on any change. The flags become
//! a [`ReviewRequest`] on a [`Change`]; [`crate::ops::Ops::review`] reviews it; this module
//! renders the review as text, markdown, JSON or SARIF and exits with the code it means.

use super::{out, CommandError, CommandResult, Context};
use crate::arbiter::Verdict;
use crate::cli::helper::{need_repo, ops, Terminal};
use crate::exit::ExitCode;
use crate::ops::review::{Change, ReviewError, ReviewRequest};
use crate::ops::Reviewed;
use clap::{Args, ValueEnum};

/// Output formats.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum ReviewFormat {
    /// For the terminal.
    #[default]
    Text,
    /// The review object.
    Json,
    /// For a pull request.
    Markdown,
    /// SARIF 2.1.0, for code-scanning tools.
    Sarif,
}

/// The verdict from which the exit code signals failure.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum FailOn {
    /// Only HALT fails (exit 3).
    #[default]
    Halt,
    /// REJECT (exit 1) or HALT (exit 3).
    Reject,
    /// FLAG or REJECT (exit 1), HALT (exit 3).
    Flag,
}

/// Review any change with the arbiter and the deterministic checks, human-written too.
///
/// Without a range, reviews the last commit (HEAD^..HEAD). Unresolved imports and new
/// syntax errors make the verdict at least REJECT whatever the model says; `--no-model`
/// runs only those checks (no key needed: for CI and hooks).
///
/// Examples: `git triad review main..HEAD --format sarif > triad.sarif`,
/// `git triad review --staged --no-model --fail-on reject`.
#[derive(Debug, Default, Args)]
pub struct ReviewArgs {
    /// A commit (`abc123`: its own change) or a range (`main..HEAD`).
    #[arg(conflicts_with_all = ["staged", "worktree", "since_last"])]
    pub range: Option<String>,
    /// Only what changed since the last commit of this branch with a verdict (add `--note`
    /// to move that mark to HEAD).
    #[arg(long, conflicts_with_all = ["staged", "worktree"])]
    pub since_last: bool,
    /// Review what is staged in the index against HEAD.
    #[arg(long, conflicts_with = "worktree")]
    pub staged: bool,
    /// Review the working tree (tracked and untracked, not ignored) against HEAD.
    #[arg(long)]
    pub worktree: bool,
    /// The arbiter model (default: the first model of the arbiter role).
    #[arg(long, value_name = "MODEL")]
    pub arbiter_model: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ReviewFormat::Text)]
    pub format: ReviewFormat,
    /// Which verdict makes the exit code non-zero.
    #[arg(long, value_enum, default_value_t = FailOn::Halt)]
    pub fail_on: FailOn,
    /// Record the verdict as a note on the range's tip commit (like a pipeline review).
    #[arg(long, conflicts_with_all = ["staged", "worktree"])]
    pub note: bool,
    /// Do not run the repository's tests on the base and on the change.
    ///
    /// They run by default in a trusted clone, in the box: the verify command, else `cargo
    /// test`, pytest or git triad's runner as the tree calls for; a test the change makes
    /// fail floors the review at REJECT.
    #[arg(long)]
    pub no_tests: bool,
    /// Only the deterministic checks; no model is called.
    #[arg(long)]
    pub no_model: bool,
}

impl ReviewArgs {
    /// The change these arguments name.
    pub fn change(&self) -> Change {
        if self.staged {
            Change::Staged
        } else if self.worktree {
            Change::Worktree
        } else if self.since_last {
            Change::SinceLast
        } else {
            Change::Revisions(self.range.clone().unwrap_or_else(|| "HEAD".into()))
        }
    }

    /// The review these arguments ask for, beside the change.
    pub fn request(&self) -> ReviewRequest {
        ReviewRequest {
            arbiter_model: self.arbiter_model.clone(),
            note: self.note,
            tests: !self.no_tests,
            fail_at: match self.fail_on {
                FailOn::Halt => Verdict::Halt,
                FailOn::Reject => Verdict::Reject,
                FailOn::Flag => Verdict::Flag,
            },
        }
    }
}

/// Runs `git triad review`.
pub fn run(ctx: &Context, args: &ReviewArgs) -> CommandResult {
    Ok(reviewed(ctx, args)?.map_or(ExitCode::Ok, |r| r.exit))
}

/// [`run`], with the review as its typed outcome (a session's tool reads it); `None` when
/// nothing changed since the last commit with a verdict.
pub fn reviewed(ctx: &Context, args: &ReviewArgs) -> CommandResult<Option<Reviewed>> {
    let repo = need_repo(ctx)?;
    let host = Terminal { ctx };
    let ops = ops(ctx, repo, &host);
    let target = ops.review_target(&args.change())?;
    if args.since_last && target.unchanged() {
        out("Nothing changed since the last commit with a verdict.\n")?;
        return Ok(None);
    }
    let loaded = if args.no_model {
        None
    } else {
        Some(ctx.load_config()?)
    };
    let reviewed = ops.review(target, loaded.as_ref(), &args.request())?;
    let review = &reviewed.review;
    let text = match args.format {
        ReviewFormat::Text => crate::report::text(review),
        ReviewFormat::Markdown => crate::report::markdown(review),
        ReviewFormat::Json => format!(
            "{}\n",
            serde_json::to_string_pretty(review).unwrap_or_default()
        ),
        ReviewFormat::Sarif => format!(
            "{}\n",
            serde_json::to_string_pretty(&crate::report::sarif(review)).unwrap_or_default()
        ),
    };
    out(&text)?;
    Ok(Some(reviewed))
}

impl From<ReviewError> for CommandError {
    fn from(e: ReviewError) -> Self {
        match e {
            ReviewError::NoWorkTree | ReviewError::NoHead(_) | ReviewError::OneEnded(_) => {
                CommandError::usage(e.to_string())
            }
            ReviewError::NoVerdictYet => CommandError::usage(e.to_string())
                .hint("review the branch once with `git triad review main..HEAD --note`"),
            ReviewError::NotRevisions { .. } => {
                CommandError::usage(e.to_string()).hint("examples: HEAD, abc123, main..HEAD")
            }
            ReviewError::Routes(e) => e.into(),
            ReviewError::Model(e) => e.into(),
            ReviewError::Notes(e) => e.into(),
            ReviewError::Git(e) => e.into(),
            ReviewError::Io(e) => e.into(),
            e @ (ReviewError::WorktreeGit { .. }
            | ReviewError::NoteNotWritten(_)
            | ReviewError::Runtime(_)) => CommandError::failure(e.to_string()),
        }
    }
}
