//! `review` as an operation: the arbiter, with the change's evidence, on any change —
//! a commit, a range, what is staged, the work tree, what came since the last verdict.
//!
//! The review is the pipeline's: the evidence is gathered by [`crate::arbiter::gather`]
//! with the behaviour diff taken through [`Behaviours`] (once per tree pair), and the
//! arbiter is asked through [`crate::arbiter::service::review_change`], the call every
//! stage review of a run makes. What is this operation's own: which trees a request names,
//! the tests run on both sides, which models may judge (no stage model to exclude: a flag,
//! the routes, else the arbiter role), and what an outcome means as an exit code.

use std::process::{Command, Stdio};

use git2::{Oid, Tree};

use super::exit::review_exit;
use super::Ops;
use crate::arbiter::evidence::Behaviours;
use crate::arbiter::gather::{commits_intent, prepare, Subject, TreeFacts};
use crate::arbiter::request::Brief;
use crate::arbiter::service::{facts_only, review_change};
use crate::arbiter::{ArbiterReview, Verdict};
use crate::config::{LoadedConfig, Role};
use crate::exit::ExitCode;
use crate::model::ModelError;
use crate::notes::{NotesError, Record, ReviewRecord};
use crate::pipeline::StartError;
use crate::privacy::Privacy;
use crate::probe::{Intent, ProbePolicy, ProbeSettings};

/// Which change a review is of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// A commit (its own change against its first parent) or a range `a..b`.
    Revisions(String),
    /// What changed since the last commit of this branch with a verdict.
    SinceLast,
    /// What is staged in the index, against HEAD.
    Staged,
    /// The working tree (tracked and untracked, not ignored), against HEAD.
    Worktree,
}

/// A review asked for, beside the change.
#[derive(Debug, Clone)]
pub struct ReviewRequest {
    /// The arbiter model; `None`: the routes', else the arbiter role's.
    pub arbiter_model: Option<String>,
    /// Record the verdict as a note on the change's tip commit.
    pub note: bool,
    /// Run the repository's tests on the base and on the change (in a trusted clone).
    pub tests: bool,
    /// The least verdict that fails the review (HALT always does).
    pub fail_at: Verdict,
}

/// The two trees of a change, its tip commit (for a note), and what its commits say they
/// do to behaviour (nothing, for the index or the work tree).
pub struct Target<'r> {
    /// The old side (`None`: a root commit, everything is new).
    pub old: Option<Tree<'r>>,
    /// The new side.
    pub new: Tree<'r>,
    /// The commit a note goes on; `None` for the index or the work tree.
    pub tip: Option<Oid>,
    /// What the commits reviewed say they do to behaviour.
    pub intent: Intent,
}

impl Target<'_> {
    /// Whether the change is empty: both sides are the same tree.
    pub fn unchanged(&self) -> bool {
        self.old.as_ref().map(|t| t.id()) == Some(self.new.id())
    }
}

/// How a review ended.
#[derive(Debug)]
pub struct Reviewed {
    /// The review: verdict after the floors, issues, the test runs.
    pub review: ArbiterReview,
    /// What its verdict means as an exit code, against the request's threshold.
    pub exit: ExitCode,
}

/// Why a review could not be made. Facts only: the command line adds what to do.
#[derive(Debug, thiserror::Error)]
pub enum ReviewError {
    /// The work tree was asked for in a bare repository.
    #[error("this repository has no working tree")]
    NoWorkTree,
    /// HEAD has no commit (an unborn branch) to compare the index or work tree with.
    #[error("HEAD has no commit to compare with: {0}")]
    NoHead(git2::Error),
    /// `SinceLast` on a branch none of whose commits has a verdict.
    #[error("no commit of this branch has a verdict yet")]
    NoVerdictYet,
    /// The revisions name no commit or range.
    #[error("`{spec}` is not a commit or range: {why}")]
    NotRevisions {
        /// What was given.
        spec: String,
        /// What git said.
        why: String,
    },
    /// A range with an end missing.
    #[error("`{0}` needs both ends")]
    OneEnded(String),
    /// Writing the work tree as a tree failed.
    #[error("git {args} failed: {stderr}")]
    WorktreeGit {
        /// The git command's arguments.
        args: String,
        /// What it said.
        stderr: String,
    },
    /// The verdict note could not be written.
    #[error("could not record the verdict note: {0}")]
    NoteNotWritten(NotesError),
    /// The routes of the roles cannot be worked out.
    #[error(transparent)]
    Routes(#[from] StartError),
    /// The arbiter could not be asked.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// The async runtime the call runs on could not start.
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
    /// The notes could not be read.
    #[error(transparent)]
    Notes(#[from] NotesError),
    /// The repository could not be read.
    #[error(transparent)]
    Git(#[from] git2::Error),
    /// A temporary file could not be written.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl<'a> Ops<'a> {
    /// The trees `change` names.
    pub fn review_target(&self, change: &Change) -> Result<Target<'a>, ReviewError> {
        let repo = self.repo;
        let head_tree = || {
            repo.head()
                .and_then(|h| h.peel_to_tree())
                .map_err(ReviewError::NoHead)
        };
        let uncommitted = |oid| -> Result<Target<'a>, ReviewError> {
            Ok(Target {
                old: Some(head_tree()?),
                new: repo.find_tree(oid)?,
                tip: None,
                intent: Intent::default(),
            })
        };
        let spec = match change {
            Change::Staged => return uncommitted(repo.index()?.write_tree()?),
            Change::Worktree => return uncommitted(worktree_tree(repo)?),
            Change::SinceLast => {
                let head = repo.head()?.peel_to_commit()?;
                let last = crate::notes::reviewed::last_reviewed_from_head(repo)?
                    .ok_or(ReviewError::NoVerdictYet)?;
                return Ok(Target {
                    old: Some(repo.find_commit(last)?.tree()?),
                    new: head.tree()?,
                    tip: Some(head.id()),
                    intent: commits_intent(repo, Some(last), head.id()),
                });
            }
            Change::Revisions(spec) => spec,
        };
        let bad = |e: git2::Error| ReviewError::NotRevisions {
            spec: spec.clone(),
            why: e.message().to_string(),
        };
        if spec.contains("..") {
            let rs = repo.revparse(spec).map_err(bad)?;
            let (Some(from), Some(to)) = (rs.from(), rs.to()) else {
                return Err(ReviewError::OneEnded(spec.clone()));
            };
            let old = from.peel_to_tree().map_err(bad)?;
            let new_commit = to.peel_to_commit().map_err(bad)?;
            let from = from.peel_to_commit().ok().map(|c| c.id());
            return Ok(Target {
                old: Some(old),
                new: new_commit.tree()?,
                tip: Some(new_commit.id()),
                intent: commits_intent(repo, from, new_commit.id()),
            });
        }
        let commit = repo
            .revparse_single(spec)
            .and_then(|o| o.peel_to_commit())
            .map_err(bad)?;
        let parent = commit.parent(0).ok();
        Ok(Target {
            old: parent.as_ref().map(|p| p.tree()).transpose()?,
            new: commit.tree()?,
            tip: Some(commit.id()),
            intent: commits_intent(repo, parent.map(|p| p.id()), commit.id()),
        })
    }

    /// Reviews `target` as `req` asks: with `loaded`, the arbiter judges the change and its
    /// evidence; without (`--no-model`), only the deterministic checks do.
    pub fn review(
        &self,
        target: Target<'_>,
        loaded: Option<&LoadedConfig>,
        req: &ReviewRequest,
    ) -> Result<Reviewed, ReviewError> {
        let repo = self.repo;
        let Target {
            old,
            new,
            tip,
            intent,
        } = target;
        // What no model sees needs nothing withheld; what the arbiter is sent does.
        let privacy = loaded.map(|l| Privacy::from_config(&l.config));
        let verify = loaded
            .map(|l| l.config.verify.command.trim().to_string())
            .filter(|c| !c.is_empty());
        // Probes run the reviewed code: only in a clone trusted locally.
        let policy = ProbePolicy::for_clone(
            crate::config::trusted_locally(repo),
            ProbeSettings::for_repo(
                repo,
                verify.clone(),
                loaded.map(|l| l.config.sandbox.clone()).unwrap_or_default(),
            )
            .with_test_timeout(std::time::Duration::from_secs(
                loaded.map_or(600, |l| l.config.verify.timeout_secs),
            )),
        );
        let mut prepared = prepare(Subject {
            repo,
            old: old.as_ref(),
            new: &new,
            privacy: privacy.as_ref(),
            venv_root: repo.workdir().map(|p| p.to_path_buf()),
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
        prepared.take_behaviour(&[], &intent, &Behaviours::default());
        if let (true, Some(why)) = (req.tests, prepared.runner.off()) {
            // Said, so that a review without them is never read as one whose tests passed.
            self.host.note(&format!("the repository's tests: {why}"));
        }
        let tests = match req.tests.then(|| prepared.runner.tests(verify.as_deref())) {
            Some(Some(Ok(runs))) => {
                prepared.add_findings(runs.findings());
                prepared.add_facts(&runs.render());
                Some(runs)
            }
            Some(Some(Err(why))) => {
                prepared.add_facts(&format!(
                    "## The repository's tests\nnot run: {}\n",
                    crate::bounded::clip(&why, 300)
                ));
                None
            }
            _ => None,
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
        let mut review = match loaded {
            None => prepared.with_checks(&brief, |c| {
                facts_only("review", prepared.gathered.files.len(), c)
            }),
            Some(loaded) => {
                let judges = self.judges(loaded, req.arbiter_model.as_deref())?;
                let client = self.client(loaded);
                let asked = review_change(
                    &client,
                    judges,
                    &loaded.config,
                    repo.workdir(),
                    &prepared,
                    &brief,
                );
                let mut reviewed = super::block_on(asked)
                    .map_err(ReviewError::Runtime)??
                    .review;
                reviewed.reviewed_model = "human".into();
                // What a person already overrode on the same lines is not raised again.
                crate::notes::reviewed::set_aside_overridden(
                    repo,
                    &mut reviewed,
                    prepared.findings(),
                )?;
                reviewed
            }
        };
        review.tests = tests;
        if let (true, Some(tip)) = (req.note, tip) {
            let record = Record::Review(Box::new(ReviewRecord {
                run: None,
                task: None,
                attempt: 1,
                stage_reviewed: "review".into(),
                chamber: None,
                review: review.clone(),
            }));
            crate::notes::record(repo, tip, record).map_err(ReviewError::NoteNotWritten)?;
        }
        let exit = review_exit(review.verdict, req.fail_at);
        Ok(Reviewed { review, exit })
    }

    /// The models that may judge a change no stage model made: the one asked for, else the
    /// routes' arbiter (said through the host), else the arbiter role's list.
    fn judges(
        &self,
        loaded: &LoadedConfig,
        asked: Option<&str>,
    ) -> Result<Vec<String>, ReviewError> {
        if let Some(m) = asked {
            return Ok(vec![m.to_string()]);
        }
        let profile = loaded.active_profile(self.env);
        let routed = crate::pipeline::plan::routes(loaded, self.env, profile.as_deref(), None)?;
        let route = routed
            .iter()
            .flat_map(|r| r.roles.iter())
            .find(|r| r.role == Role::Arbiter);
        Ok(match route {
            Some(route) => {
                self.host.note(&format!(
                    "arbiter -> {}: {}",
                    route.models.first().map_or("(none)", String::as_str),
                    route.reason
                ));
                route.models.clone()
            }
            None => loaded.role_models(Role::Arbiter, profile.as_deref()),
        })
    }
}

/// Writes the working tree (tracked + untracked, not ignored) as a tree, using a throwaway
/// index so the user's index is untouched.
fn worktree_tree(repo: &git2::Repository) -> Result<Oid, ReviewError> {
    let workdir = repo.workdir().ok_or(ReviewError::NoWorkTree)?;
    let tmp = tempfile::tempdir()?;
    let index = tmp.path().join("index");
    if let Ok(bytes) = std::fs::read(repo.path().join("index")) {
        std::fs::write(&index, bytes)?;
    }
    let git = |args: &[&str]| -> Result<String, ReviewError> {
        let out = Command::new("git")
            .current_dir(workdir)
            .env("GIT_INDEX_FILE", &index)
            .args(args)
            .stdin(Stdio::null())
            .output()?;
        if !out.status.success() {
            return Err(ReviewError::WorktreeGit {
                args: args.join(" "),
                stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            });
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    git(&["add", "-A"])?;
    let oid = git(&["write-tree"])?;
    Ok(crate::git::parse_oid(&oid)?)
}
