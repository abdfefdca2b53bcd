//! Grading by facts: a build answer is parsed and applied exactly as a run applies a stage
//! answer, in a throwaway git repository, and the task's hidden tests run on the result; a
//! review is held against the line the bug is really on.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use git2::{Oid, Repository};
use serde::{Deserialize, Serialize};
use tempfile::TempDir;

use crate::arbiter::gather::{prepare, Prepared, Subject, TreeFacts};
use crate::arbiter::{ArbiterReview, Severity, Verdict};
use crate::git::{self, Context as _, GitError, TreeFiles};
use crate::pipeline::answer::{apply_answer, read_answer, ReadAnswer};
use crate::privacy::Privacy;
use crate::probe::{ProbePolicy, ProbeSettings};
use crate::routing::tasks::{BuildTask, CaseClass, ReviewCase};
use crate::sandbox::{self, Job, Policy};
use crate::task::outcome::Outcome;

/// How long the hidden tests of one answer may run before they count as failed.
pub const HIDDEN_TEST_TIMEOUT: Duration = Duration::from_secs(30);

/// The interpreter the hidden tests run with.
pub const PYTHON: &str = "python3";

/// The executable [`PYTHON`] resolves to, asked once per process (`None`: it does not
/// start). Hidden tests run it directly: a version manager's shim (pyenv, asdf) costs about
/// a tenth of a second a start, which the bench would pay for every answer.
pub fn python() -> Option<&'static Path> {
    static RESOLVED: OnceLock<Option<PathBuf>> = OnceLock::new();
    RESOLVED
        .get_or_init(|| {
            let out = std::process::Command::new(PYTHON)
                .args(["-c", "import sys; print(sys.executable)"])
                .stdin(std::process::Stdio::null())
                .output()
                .ok()
                .filter(|o| o.status.success())?;
            let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
            // An embedded interpreter may not know its executable: the name then does.
            Some(if path.is_absolute() && path.exists() {
                path
            } else {
                PathBuf::from(PYTHON)
            })
        })
        .as_deref()
}

/// A throwaway repository holding one task's files.
pub struct Workspace {
    dir: TempDir,
    repo: Repository,
    /// The commit the model's change starts from (a review case: the change itself).
    head: Oid,
    /// The commit before it, when the task has one.
    before: Option<Oid>,
}

impl Workspace {
    /// A repository with `before` committed (when given), then `files` on top, and `files`
    /// written to the work tree.
    fn new(
        before: Option<&BTreeMap<String, String>>,
        files: &BTreeMap<String, String>,
    ) -> Result<Workspace, GitError> {
        let dir = tempfile::Builder::new()
            .prefix("triad-bench-")
            .tempdir()
            .map_err(|e| GitError::Command(format!("cannot make a temporary directory: {e}")))?;
        let repo = Repository::init(dir.path()).ctx("creating the task repository")?;
        let commit = |entries: &BTreeMap<String, String>, parents: &[Oid]| {
            let bytes = entries
                .iter()
                .map(|(p, t)| (p.clone(), t.clone().into_bytes()))
                .collect();
            let tree = git::tree_from_entries(&repo, &bytes)?;
            git::commit(&repo, tree, parents, "bench task")
        };
        let before = before.map(|b| commit(b, &[])).transpose()?;
        let head = commit(files, &before.into_iter().collect::<Vec<_>>())?;
        for (path, text) in files {
            write_file(dir.path(), path, text)?;
        }
        Ok(Workspace {
            dir,
            repo,
            head,
            before,
        })
    }

    /// The workspace of a build task.
    pub fn for_build(task: &BuildTask) -> Result<Workspace, GitError> {
        Workspace::new(task.before.as_ref(), &task.files)
    }

    /// The change a build answer made: the task's files committed, the answer's `files`
    /// (path → whole new content) on top.
    pub fn for_answer(
        task: &BuildTask,
        files: &BTreeMap<String, String>,
    ) -> Result<Workspace, GitError> {
        let mut after = task.files.clone();
        after.extend(files.clone());
        Workspace::new(Some(&task.files), &after)
    }

    /// The workspace of a review case: the base committed, the change on top.
    pub fn for_review(case: &ReviewCase) -> Result<Workspace, GitError> {
        let mut after = case.base.clone();
        after.extend(case.change.clone());
        Workspace::new(Some(&case.base), &after)
    }

    /// The repository.
    pub fn repo(&self) -> &Repository {
        &self.repo
    }

    /// The work tree.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The files at the head commit.
    pub fn files(&self) -> Result<TreeFiles<'_>, GitError> {
        let tree = self.tree(self.head)?;
        Ok(TreeFiles::new(&self.repo, tree))
    }

    fn tree(&self, commit: Oid) -> Result<git2::Tree<'_>, GitError> {
        self.repo
            .find_commit(commit)
            .and_then(|c| c.tree())
            .ctx("reading a task tree")
    }

    /// The change from the commit before the head to the head, rendered as a run shows the
    /// previous stage's diff, and the paths it changed (empty without a commit before).
    pub fn previous_change(&self) -> Result<(String, Vec<String>), GitError> {
        let Some(before) = self.before else {
            return Ok((String::new(), Vec::new()));
        };
        let (old, new) = (self.tree(before)?, self.tree(self.head)?);
        let d = git::diff_trees(&self.repo, Some(&old), &new).ctx("diffing the task")?;
        let paths = d.iter().map(|f| f.path.clone()).collect();
        Ok((git::render_diff(&d, &|_, _| None), paths))
    }

    /// A review of the head commit's change, prepared as for a reviewed stage of a run
    /// (the numbered diff, the deterministic findings, the tests it weakens, probes run
    /// against its tree: the bench's workspaces are its own, so probes run).
    pub fn prepared(&self, privacy: &Privacy) -> Result<Prepared<'_>, GitError> {
        let new = self.tree(self.head)?;
        let old = self.before.map(|b| self.tree(b)).transpose()?;
        let settings = ProbeSettings::for_repo(&self.repo, None, Policy::default());
        let mut prepared = prepare(Subject {
            repo: &self.repo,
            old: old.as_ref(),
            new: &new,
            privacy: Some(privacy),
            venv_root: None,
            probes: ProbePolicy::Run(settings),
            not_run: None,
        })
        .ctx("diffing the case")?;
        let facts = TreeFacts::of(
            &self.repo,
            old.as_ref(),
            &new,
            None,
            &prepared.runner,
            false,
        )
        .ctx("diffing the case")?;
        prepared.add_findings(facts.findings());
        Ok(prepared)
    }
}

fn write_file(root: &Path, path: &str, text: &str) -> Result<(), GitError> {
    let p = root.join(path);
    let io = |e: std::io::Error| GitError::Command(format!("cannot write {path}: {e}"));
    if let Some(parent) = p.parent() {
        std::fs::create_dir_all(parent).map_err(io)?;
    }
    std::fs::write(&p, text).map_err(io)
}

/// The facts of one answer to a build task.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BuildOutcome {
    /// Every check held.
    pub passed: bool,
    /// The metadata block and the edits could be read, and the outcome was APPROVE.
    pub answer_read: bool,
    /// Every edit applied.
    pub edits_applied: bool,
    /// The files that had to change did, and the ones to leave alone were.
    pub scope_ok: bool,
    /// The hidden tests exited 0.
    pub tests_passed: bool,
    /// Files the answer changed.
    pub changed: Vec<String>,
    /// The new content of every file its edits wrote (kept to review the change later).
    #[serde(skip)]
    pub written: BTreeMap<String, String>,
    /// `passed`, or the first check that failed and why.
    pub detail: String,
}

impl BuildOutcome {
    fn failed(mut self, detail: impl Into<String>) -> BuildOutcome {
        self.detail = crate::bounded::clip(&detail.into(), 400);
        self
    }
}

/// Grades an answer to `task`: read it (whole files when `whole`, else SEARCH/REPLACE
/// blocks), apply it to the workspace's files with the run's rules (scope, private files),
/// check the files it had to change and leave, write the result and run the hidden tests.
pub fn grade_build(
    ws: &Workspace,
    task: &BuildTask,
    answer: &str,
    whole: bool,
    privacy: &Privacy,
    policy: &Policy,
) -> Result<BuildOutcome, GitError> {
    let out = BuildOutcome::default();
    let ReadAnswer { meta, blocks } = match read_answer(answer, whole) {
        Ok(a) => a,
        Err(why) => return Ok(out.failed(format!("answer not read: {why}"))),
    };
    if meta.outcome != Outcome::Approve {
        return Ok(out.failed(format!(
            "answered {} instead of doing the work",
            meta.outcome.as_str()
        )));
    }
    let mut out = BuildOutcome {
        answer_read: true,
        ..out
    };
    let files = ws.files()?;
    let applied = match apply_answer(&files, privacy, &task.spec, &blocks, &[]) {
        Ok(a) => a,
        Err(failures) => {
            let first = failures
                .first()
                .map(|f| format!("{}: {}", f.path, f.reason))
                .unwrap_or_default();
            return Ok(out.failed(format!(
                "{} of {} edit block(s) did not apply; first: {first}",
                failures.len(),
                blocks.len()
            )));
        }
    };
    out.edits_applied = true;
    out.written = applied.files.clone();
    let new_tree = git::build_tree(ws.repo(), files.tree(), &applied.files)?;
    let new_tree = ws
        .repo()
        .find_tree(new_tree)
        .ctx("reading the answer's tree")?;
    out.changed = git::diff_trees(ws.repo(), Some(files.tree()), &new_tree)
        .ctx("diffing the answer")?
        .into_iter()
        .map(|f| f.path)
        .collect();
    let missing: Vec<&String> = task
        .must_change
        .iter()
        .filter(|p| !out.changed.contains(p))
        .collect();
    let touched: Vec<&String> = task
        .must_not_change
        .iter()
        .filter(|p| out.changed.contains(p))
        .collect();
    if !missing.is_empty() || !touched.is_empty() {
        let mut why = Vec::new();
        if !missing.is_empty() {
            why.push(format!("did not change {}", join(&missing)));
        }
        if !touched.is_empty() {
            why.push(format!(
                "changed {}, which it had to leave alone",
                join(&touched)
            ));
        }
        return Ok(out.failed(why.join("; ")));
    }
    out.scope_ok = true;
    for (path, text) in &applied.files {
        write_file(ws.dir(), path, text)?;
    }
    match run_hidden(ws.dir(), &task.hidden, policy)? {
        None => {
            out.tests_passed = true;
            out.passed = true;
            out.detail = "passed".into();
            Ok(out)
        }
        Some(why) => Ok(out.failed(format!("hidden tests failed: {why}"))),
    }
}

fn join(paths: &[&String]) -> String {
    paths
        .iter()
        .map(|p| p.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Runs each hidden test file on the repository at `repo_dir` with [`python`]; `None` when
/// all exit 0, else why the first one failed (its last output line). The code under test is
/// a model's: it runs in the box (`policy`), which writes only the workspace, killed after
/// [`HIDDEN_TEST_TIMEOUT`].
pub fn run_hidden(
    repo_dir: &Path,
    tests: &BTreeMap<String, String>,
    policy: &Policy,
) -> Result<Option<String>, GitError> {
    let hidden = tempfile::Builder::new()
        .prefix("triad-hidden-")
        .tempdir()
        .map_err(|e| GitError::Command(format!("cannot make a temporary directory: {e}")))?;
    for (name, source) in tests {
        write_file(hidden.path(), name, source)?;
        let python = python().unwrap_or(Path::new(PYTHON));
        let command = format!(
            "{} -B {} {}",
            shell_quote(&python.display().to_string()),
            shell_quote(&hidden.path().join(name).display().to_string()),
            shell_quote(&repo_dir.display().to_string())
        );
        let mut job = Job::new(&command, repo_dir, HIDDEN_TEST_TIMEOUT);
        job.tail_lines = 3;
        job.read.push(hidden.path().to_path_buf());
        let outcome = sandbox::run(&job, policy, &|_| {});
        if outcome.refused() {
            return Ok(Some(format!("{name} did not run: {}", outcome.tail)));
        }
        if outcome.timed_out {
            return Ok(Some(format!(
                "{name} ran longer than {} s",
                HIDDEN_TEST_TIMEOUT.as_secs()
            )));
        }
        if outcome.exit_code != Some(0) {
            let last = outcome
                .tail
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("no output")
                .trim()
                .to_string();
            return Ok(Some(format!(
                "{name} exited with {}: {last}",
                outcome
                    .exit_code
                    .map_or("a signal".to_string(), |c| c.to_string())
            )));
        }
    }
    Ok(None)
}

/// `s` quoted for `sh`.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// The facts of one review of a case.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReviewOutcome {
    /// The verdict the pipeline would act on; `None` when the answer was not usable.
    pub verdict: Option<Verdict>,
    /// A bug case: an issue of warning or critical severity, anchored on lines that overlap
    /// the bug's, with a verdict of FLAG or worse.
    pub caught: bool,
    /// A clean case: the verdict was REJECT or HALT (the pipeline would redo or stop
    /// correct work).
    pub false_positive: bool,
    /// A clean case: the verdict was FLAG (reported, not scored).
    pub flagged_clean: bool,
    /// Issues from the model that count (anchored, not demoted).
    pub counted_issues: usize,
    /// Why, in one line.
    pub detail: String,
}

/// Grades a finished review of `case` (`None`: the model gave no usable answer, `why`).
pub fn grade_review(case: &ReviewCase, review: Result<&ArbiterReview, &str>) -> ReviewOutcome {
    let review = match review {
        Ok(r) => r,
        Err(why) => {
            return ReviewOutcome {
                detail: crate::bounded::clip(&format!("no usable review: {why}"), 400),
                ..ReviewOutcome::default()
            }
        }
    };
    let counted: Vec<_> = review
        .issues
        .iter()
        .filter(|i| i.source == "model" && i.demoted.is_none() && i.anchored)
        .collect();
    let mut out = ReviewOutcome {
        verdict: Some(review.verdict),
        counted_issues: counted.len(),
        ..ReviewOutcome::default()
    };
    match (&case.bug, case.bug_lines()) {
        (Some(bug), Some((first, last))) => {
            let on_bug = counted.iter().any(|i| {
                i.path == bug.path
                    && i.severity != Severity::Suggestion
                    && i.start_line.unwrap_or(0) <= last
                    && i.end_line.unwrap_or(0) >= first
            });
            out.caught = on_bug && review.verdict >= Verdict::Flag;
            out.detail = if out.caught {
                format!(
                    "caught: {} with an issue on lines {first}-{last}",
                    review.verdict
                )
            } else if on_bug {
                format!(
                    "an issue on the bug's lines, but the verdict was {}",
                    review.verdict
                )
            } else {
                format!(
                    "missed: {} with no warning or critical issue on lines {first}-{last}",
                    review.verdict
                )
            };
        }
        _ if case.class != CaseClass::Clean => {
            out.detail = format!("the case's bug quote is not in {}", case.id);
        }
        _ => {
            out.false_positive = review.verdict >= Verdict::Reject;
            out.flagged_clean = review.verdict == Verdict::Flag;
            out.detail = format!("clean change, verdict {}", review.verdict);
        }
    }
    out
}
