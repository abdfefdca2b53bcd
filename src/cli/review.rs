//! `git triad review`: the arbiter, with its hard evidence, on any change.

use std::process::{Command, Stdio};

use super::{out, CommandError, CommandResult, Context};
use crate::arbiter::gather::{commits_intent, prepare, Subject, TreeFacts};
use crate::arbiter::request::Brief;
use crate::arbiter::service::{facts_only, Arbiter};
use crate::arbiter::{ArbiterReview, Verdict};
use crate::cli::helper::need_repo;
use crate::config::Role;
use crate::exit::ExitCode;
use crate::notes::{Record, ReviewRecord};
use crate::privacy::Privacy;
use crate::probe::{Intent, ProbePolicy, ProbeSettings};
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

/// Writes the working tree (tracked + untracked, not ignored) as a tree, using a throwaway
/// index so the user's index is untouched.
fn worktree_tree(repo: &git2::Repository) -> CommandResult<git2::Oid> {
    let workdir = repo
        .workdir()
        .ok_or_else(|| CommandError::usage("this repository has no working tree"))?;
    let tmp = tempfile::tempdir()?;
    let index = tmp.path().join("index");
    if let Ok(bytes) = std::fs::read(repo.path().join("index")) {
        std::fs::write(&index, bytes)?;
    }
    let git = |args: &[&str]| -> CommandResult<String> {
        let out = Command::new("git")
            .current_dir(workdir)
            .env("GIT_INDEX_FILE", &index)
            .args(args)
            .stdin(Stdio::null())
            .output()?;
        if !out.status.success() {
            return Err(CommandError::failure(format!(
                "git {} failed: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    git(&["add", "-A"])?;
    let oid = git(&["write-tree"])?;
    crate::git::parse_oid(&oid).map_err(|e| CommandError::failure(e.to_string()))
}

/// What is reviewed: the two trees, the tip commit (for `--note`), and what the commits
/// reviewed say they do to behaviour (nothing, for the index or the work tree).
struct Reviewed<'r> {
    old: Option<git2::Tree<'r>>,
    new: git2::Tree<'r>,
    tip: Option<git2::Oid>,
    intent: Intent,
}

/// Resolves what to review.
fn trees<'r>(repo: &'r git2::Repository, args: &ReviewArgs) -> CommandResult<Reviewed<'r>> {
    let head_tree = || -> CommandResult<git2::Tree<'r>> {
        repo.head()
            .and_then(|h| h.peel_to_tree())
            .map_err(|e| CommandError::usage(format!("HEAD has no commit to compare with: {e}")))
    };
    let uncommitted = |oid| -> CommandResult<Reviewed<'r>> {
        Ok(Reviewed {
            old: Some(head_tree()?),
            new: repo.find_tree(oid)?,
            tip: None,
            intent: Intent::default(),
        })
    };
    if args.staged {
        return uncommitted(repo.index()?.write_tree()?);
    }
    if args.worktree {
        return uncommitted(worktree_tree(repo)?);
    }
    if args.since_last {
        let head = repo.head()?.peel_to_commit()?;
        let last = crate::notes::reviewed::last_reviewed_from_head(repo)?.ok_or_else(|| {
            CommandError::usage("no commit of this branch has a verdict yet")
                .hint("review the branch once with `git triad review main..HEAD --note`")
        })?;
        return Ok(Reviewed {
            old: Some(repo.find_commit(last)?.tree()?),
            new: head.tree()?,
            tip: Some(head.id()),
            intent: commits_intent(repo, Some(last), head.id()),
        });
    }
    let spec = args.range.clone().unwrap_or_else(|| "HEAD".into());
    let bad = |e: git2::Error| {
        CommandError::usage(format!(
            "`{spec}` is not a commit or range: {}",
            e.message()
        ))
        .hint("examples: HEAD, abc123, main..HEAD")
    };
    if spec.contains("..") {
        let rs = repo.revparse(&spec).map_err(bad)?;
        let (Some(from), Some(to)) = (rs.from(), rs.to()) else {
            return Err(CommandError::usage(format!("`{spec}` needs both ends")));
        };
        let old = from.peel_to_tree().map_err(bad)?;
        let new_commit = to.peel_to_commit().map_err(bad)?;
        let from = from.peel_to_commit().ok().map(|c| c.id());
        return Ok(Reviewed {
            old: Some(old),
            new: new_commit.tree()?,
            tip: Some(new_commit.id()),
            intent: commits_intent(repo, from, new_commit.id()),
        });
    }
    let commit = repo
        .revparse_single(&spec)
        .and_then(|o| o.peel_to_commit())
        .map_err(bad)?;
    let parent = commit.parent(0).ok();
    Ok(Reviewed {
        old: parent.as_ref().map(|p| p.tree()).transpose()?,
        new: commit.tree()?,
        tip: Some(commit.id()),
        intent: commits_intent(repo, parent.map(|p| p.id()), commit.id()),
    })
}

/// Runs `git triad review`.
pub fn run(ctx: &Context, args: &ReviewArgs) -> CommandResult {
    let repo = need_repo(ctx)?;
    let Reviewed {
        old,
        new,
        tip,
        intent,
    } = trees(repo, args)?;
    if args.since_last && old.as_ref().map(|t| t.id()) == Some(new.id()) {
        out("Nothing changed since the last commit with a verdict.\n")?;
        return Ok(ExitCode::Ok);
    }
    let venv_root = repo.workdir().map(|p| p.to_path_buf());
    let loaded = if args.no_model {
        None
    } else {
        Some(ctx.load_config()?)
    };
    // What no model sees needs nothing withheld; what the arbiter is sent does.
    let privacy = loaded.as_ref().map(|l| Privacy::from_config(&l.config));
    // Probes run the reviewed code: only in a clone trusted locally.
    let verify = loaded
        .as_ref()
        .map(|l| l.config.verify.command.trim().to_string())
        .filter(|c| !c.is_empty());
    let policy = ProbePolicy::for_clone(
        crate::config::trusted_locally(repo),
        ProbeSettings::for_repo(
            repo,
            verify.clone(),
            loaded
                .as_ref()
                .map(|l| l.config.sandbox.clone())
                .unwrap_or_default(),
        )
        .with_test_timeout(std::time::Duration::from_secs(
            loaded
                .as_ref()
                .map_or(600, |l| l.config.verify.timeout_secs),
        )),
    );
    let mut prepared = prepare(Subject {
        repo,
        old: old.as_ref(),
        new: &new,
        privacy: privacy.as_ref(),
        venv_root,
        probes: policy,
        not_run: None,
    })?;
    let facts = TreeFacts::of(repo, old.as_ref(), &new, None, &prepared.runner, false)?;
    prepared.add_findings(facts.findings());
    if let Some(checked) = &facts.weakening_checked {
        prepared.add_facts(&format!(
            "## The changed tests, run against code the original tests reject (a fact)\n{checked}\n"
        ));
    }
    // The code run, not only read: the changed functions on both sides, and the tests.
    prepared.take_behaviour(
        &[],
        &intent,
        &crate::arbiter::evidence::Behaviours::default(),
    );
    let tests = if args.no_tests {
        None
    } else {
        prepared.runner.tests(verify.as_deref())
    };
    let tests = match tests {
        Some(Ok(runs)) => {
            prepared.add_findings(runs.findings());
            prepared.add_facts(&runs.render());
            Some(runs)
        }
        Some(Err(why)) => {
            prepared.add_facts(&format!(
                "## The repository's tests\nnot run: {}\n",
                crate::bounded::clip(&why, 300)
            ));
            None
        }
        None => None,
    };
    let brief = Brief {
        stage: "review",
        reviewed_model: "a human or another tool",
        task: "## Task\nReview this change as it stands; no TaskSpec was given.",
        stage_notes: "",
        previous_flags: &[],
        verify: None,
        requirement_ids: &[],
    };

    let review: ArbiterReview = match &loaded {
        None => prepared.with_checks(&brief, |c| {
            facts_only("review", prepared.gathered.files.len(), c)
        }),
        Some(loaded) => {
            let profile = loaded.active_profile(&ctx.env);
            let routed = match &args.arbiter_model {
                Some(_) => None,
                None => crate::cli::helper::routes(ctx, loaded, profile.as_deref(), None)?,
            };
            let arbiter_route = routed
                .iter()
                .flat_map(|r| r.roles.iter())
                .find(|r| r.role == Role::Arbiter);
            let candidates = match (&args.arbiter_model, arbiter_route) {
                (Some(m), _) => vec![m.clone()],
                (None, Some(route)) => {
                    if !ctx.quiet {
                        super::say(&format!(
                            "triad: arbiter -> {}: {}",
                            route.models.first().map_or("(none)", String::as_str),
                            route.reason
                        ));
                    }
                    route.models.clone()
                }
                (None, None) => loaded.role_models(Role::Arbiter, profile.as_deref()),
            };
            let client = crate::cli::helper::client_for(ctx, repo, loaded);
            let system = crate::config::prompt(&loaded.config, "arbiter", repo.workdir());
            let rt = super::runtime()?;
            let arbiter = Arbiter::new(&client, candidates);
            let mut reviewed = rt
                .block_on(arbiter.review(&system, &prepared, &brief))?
                .review;
            reviewed.reviewed_model = "human".into();
            // What a person already overrode on the same lines is not raised again.
            crate::notes::reviewed::set_aside_overridden(repo, &mut reviewed, prepared.findings())?;
            reviewed
        }
    };

    let mut review = review;
    review.tests = tests;
    if args.note {
        if let Some(tip) = tip {
            let record = Record::Review(Box::new(ReviewRecord {
                run: None,
                task: None,
                attempt: 1,
                stage_reviewed: "review".into(),
                chamber: None,
                review: review.clone(),
            }));
            crate::notes::record(repo, tip, record).map_err(|e| {
                CommandError::failure(format!("could not record the verdict note: {e}"))
            })?;
        }
    }

    let text = match args.format {
        ReviewFormat::Text => crate::report::text(&review),
        ReviewFormat::Markdown => crate::report::markdown(&review),
        ReviewFormat::Json => format!(
            "{}\n",
            serde_json::to_string_pretty(&review).unwrap_or_default()
        ),
        ReviewFormat::Sarif => format!(
            "{}\n",
            serde_json::to_string_pretty(&crate::report::sarif(&review)).unwrap_or_default()
        ),
    };
    out(&text)?;
    let threshold = match args.fail_on {
        FailOn::Halt => Verdict::Halt,
        FailOn::Reject => Verdict::Reject,
        FailOn::Flag => Verdict::Flag,
    };
    Ok(if review.verdict == Verdict::Halt {
        ExitCode::Halt
    } else if review.verdict >= threshold {
        ExitCode::Error
    } else {
        ExitCode::Ok
    })
}
