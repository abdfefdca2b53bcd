//! What the arbiter is shown about a change, prepared once for every kind of review: the
//! numbered diff with enclosing symbols, the deterministic findings (imports that do not
//! resolve, new syntax errors, tests the change weakens, acceptance examples its tree
//! fails), how to write probes for its files, and the probe runner for its tree.
//!
//! A run's stages, parallel candidates and their cross-review, the tournament,
//! `git triad review` and `git triad bench` all review through [`prepare`], so every
//! workflow's review gets the same evidence.

use std::path::PathBuf;

use git2::{Repository, Tree};

use super::request::{Brief, ReviewInput};
use super::review::{Checks, Probes};
use crate::code::{self, ChangedFile, EvidenceOptions, Finding, GitTreeSource};
use crate::git::{self, FileDiff, TreeFiles};
use crate::privacy::Privacy;
use crate::probe::{
    run_examples, ChangedLines, Decided, ExampleRun, Intent, ProbePolicy, ProbeRunner,
};
use crate::task::{TaskSpec, TestsPolicy};

/// The material of one review.
pub struct Gathered {
    /// Diff rendered with new-side line numbers and `in <symbol>` per hunk.
    pub diff_text: String,
    /// The same, file by file (path, rendered section), for a review in parts.
    pub sections: Vec<(String, String)>,
    /// The structured diff.
    pub files: Vec<FileDiff>,
    /// Deterministic findings.
    pub findings: Vec<Finding>,
}

/// Diffs `old` → `new` and runs the code evidence on the changed files.
///
/// `venv_root` lets installed Python packages of a work tree count as resolved imports.
/// With `privacy` (the diff and the findings go to a model), private files are listed as
/// withheld, without hunks or findings.
pub fn gather(
    repo: &Repository,
    old: Option<&Tree<'_>>,
    new: &Tree<'_>,
    venv_root: Option<PathBuf>,
    privacy: Option<&Privacy>,
) -> Result<Gathered, git2::Error> {
    let mut files = git::diff_trees(repo, old, new)?;
    if let Some(privacy) = privacy {
        privacy.mark_diff(repo, old, new, &mut files);
    }
    let old_files = old.map(|t| TreeFiles::new(repo, t.clone()));
    let new_files = TreeFiles::new(repo, new.clone());
    let label = |f: &FileDiff, h: &git::Hunk| {
        code::hunk_label(&f.path, &new_files.text(&f.path)?, h.new_start, h.new_lines)
    };
    let sections: Vec<(String, String)> = files
        .iter()
        .map(|f| {
            (
                f.path.clone(),
                git::render_diff(std::slice::from_ref(f), &label),
            )
        })
        .collect();
    let diff_text: String = sections.iter().map(|(_, t)| t.as_str()).collect();
    let changes: Vec<ChangedFile> = files
        .iter()
        .filter(|f| !f.binary && !f.withheld)
        .map(|f| ChangedFile {
            path: f.path.clone(),
            before: old_files.as_ref().and_then(|o| o.text(&f.path)),
            after: new_files.text(&f.path),
        })
        .collect();
    let source = GitTreeSource::new(repo, new.clone());
    let findings = code::evidence_with(&source, &changes, &EvidenceOptions { venv_root });
    Ok(Gathered {
        diff_text,
        sections,
        files,
        findings,
    })
}

/// Most assertion lines of the repository's tests shown as the style of a probe.
const STYLE_LINES: usize = 3;

/// How to write a probe for the files of a change (`files`, read in `tree`), as the
/// arbiter is told: per changed source file, what the probe runs after; then a few real
/// assertions of the repository's tests as the style to copy. `off`: why probes are not
/// run here (they are still asked for and recorded).
pub fn probe_guide(files: &[FileDiff], tree: &TreeFiles<'_>, off: Option<&str>) -> String {
    let sources: Vec<&FileDiff> = files
        .iter()
        .filter(|f| !f.binary && !f.withheld && !code::test_path(&f.path))
        .filter(|f| code::Lang::from_path(&f.path).is_some() && tree.text(&f.path).is_some())
        .collect();
    if sources.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "Give every issue about what the code DOES a `probe`: a few lines of code that FAIL on the reviewed code if the defect is real. Probes are run: an issue whose probe passes does not count, and a claim about behaviour without a failing probe supports at most FLAG. Use real calls with concrete values, and expect what the task says the code must do.\n",
    );
    let krate = tree.text("Cargo.toml").and_then(|m| {
        let v: toml::Value = m.parse().ok()?;
        let name = v.get("package")?.get("name")?.as_str()?.replace('-', "_");
        Some(name)
    });
    for f in sources.iter().take(8) {
        match code::Lang::from_path(&f.path) {
            Some(code::Lang::Python) => {
                if let Some(m) = crate::probe::module_of(&f.path) {
                    s.push_str(&format!(
                        "- {} (Python): the probe runs after `import {m}` and `from {m} import *`; write statements with `assert`.\n",
                        f.path
                    ));
                }
            }
            Some(code::Lang::Rust) => s.push_str(&format!(
                "- {} (Rust): the probe is the body of a `#[test]` function after `use {}::*;`; write `assert_eq!(call, expected);`.\n",
                f.path,
                krate.as_deref().unwrap_or("the_crate")
            )),
            None => {}
        }
    }
    let mut style = Vec::new();
    let tests: Vec<String> = files
        .iter()
        .map(|f| f.path.clone())
        .filter(|p| code::test_path(p))
        .chain(
            tree.paths()
                .into_iter()
                .filter(|p| code::test_path(p))
                .take(50),
        )
        .collect();
    for path in tests {
        let (Some(lang), Some(text)) = (code::Lang::from_path(&path), tree.text(&path)) else {
            continue;
        };
        for a in code::assertions(lang, &text) {
            if a.call.is_some() && a.text.len() <= 120 && !style.contains(&a.text) {
                style.push(a.text);
            }
            if style.len() >= STYLE_LINES {
                break;
            }
        }
        if style.len() >= STYLE_LINES {
            break;
        }
    }
    if !style.is_empty() {
        s.push_str("This repository's tests assert like this (copy the style):\n");
        for line in style {
            s.push_str(&format!("    {line}\n"));
        }
    }
    if let Some(why) = off {
        s.push_str(&format!("(Probes are recorded but {why}.)\n"));
    }
    s
}

/// What is reviewed: a change between two trees of a repository.
pub struct Subject<'r, 'a> {
    /// The repository.
    pub repo: &'r Repository,
    /// The old side (`None`: everything is new).
    pub old: Option<&'a Tree<'r>>,
    /// The new side.
    pub new: &'a Tree<'r>,
    /// With privacy (the review goes to a model), private files are listed as withheld.
    pub privacy: Option<&'a Privacy>,
    /// A work tree whose virtualenvs count as installed Python packages.
    pub venv_root: Option<PathBuf>,
    /// Whether probes may run here.
    pub probes: ProbePolicy,
    /// Why the reviewed code is not run even where probes may run (an architect's
    /// scaffold is not meant to behave yet); `None` when it is.
    pub not_run: Option<&'static str>,
}

/// One review, prepared: the diff and findings, the reviewed tree's files, and its probe
/// runner.
pub struct Prepared<'r> {
    /// The diff and the deterministic findings.
    pub gathered: Gathered,
    /// The new side's files.
    pub files: TreeFiles<'r>,
    /// Runs probes against the new side.
    pub runner: ProbeRunner<'r>,
    /// How to write probes for this change, for the prompt.
    pub probe_guide: String,
    /// The change's behaviour diff, when its code could be run (see
    /// [`ProbeRunner::behaviour`]).
    pub behaviour: Option<crate::probe::BehaviourDiff>,
    /// More facts of the change the reviewer is shown, as sections.
    pub facts: String,
    not_run: Option<&'static str>,
}

/// A TaskSpec as every review of a change to it is told it: its text and its requirement
/// ids (owned, for a [`Brief`] to borrow).
pub struct TaskBrief {
    /// The TaskSpec as prompt text.
    pub text: String,
    /// Its requirement ids.
    pub requirement_ids: Vec<String>,
}

impl TaskBrief {
    /// `spec` as a review is told it.
    pub fn of(spec: &TaskSpec) -> TaskBrief {
        TaskBrief {
            text: spec.render(),
            requirement_ids: spec.requirement_ids(),
        }
    }

    /// The brief of `reviewed_model`'s change at `stage`, with nothing else known (no notes,
    /// no earlier flags, no verify result): what the caller knows it sets on top.
    pub fn brief<'a>(&'a self, stage: &'a str, reviewed_model: &'a str) -> Brief<'a> {
        Brief {
            stage,
            reviewed_model,
            task: &self.text,
            stage_notes: "",
            previous_flags: &[],
            verify: None,
            requirement_ids: &self.requirement_ids,
        }
    }
}

/// Prepares the review of `subject`: diff, code findings, probe guide and runner.
pub fn prepare<'r>(subject: Subject<'r, '_>) -> Result<Prepared<'r>, git2::Error> {
    let gathered = gather(
        subject.repo,
        subject.old,
        subject.new,
        subject.venv_root,
        subject.privacy,
    )?;
    let files = TreeFiles::new(subject.repo, subject.new.clone());
    let off = match (&subject.probes, subject.not_run) {
        (ProbePolicy::Off(why), _) => Some(why.as_str()),
        (_, Some(why)) => Some(why),
        _ => None,
    };
    let probe_guide = probe_guide(&gathered.files, &files, off);
    let runner = ProbeRunner::new(subject.repo, subject.new.clone(), subject.probes)
        .about_change(changed_lines(&gathered.files), subject.old.cloned());
    Ok(Prepared {
        gathered,
        files,
        runner,
        probe_guide,
        behaviour: None,
        facts: String::new(),
        not_run: subject.not_run,
    })
}

/// What the commits from `from` (exclusive; `None`: from the root) to `to` say they do to
/// behaviour: they keep it when every one of their messages says so (a refactor, a rename, a
/// simplification: see [`crate::probe::keeps_behaviour`]); a range that mixes a fix with a
/// cleanup means to change it. A commit that cannot be read says nothing.
pub fn commits_intent(repo: &Repository, from: Option<git2::Oid>, to: git2::Oid) -> Intent {
    let said = || -> Result<Option<String>, git2::Error> {
        let mut walk = repo.revwalk()?;
        walk.push(to)?;
        if let Some(from) = from {
            walk.hide(from)?;
        }
        let mut first = None;
        for (n, oid) in walk.enumerate() {
            if n >= 1000 {
                return Ok(None);
            }
            let commit = repo.find_commit(oid?)?;
            let message = String::from_utf8_lossy(commit.message_bytes()).into_owned();
            match crate::probe::keeps_behaviour(&message) {
                Some(w) => {
                    first.get_or_insert(format!(
                        "the commit message of {} ({w})",
                        crate::git::ObjectId::from(commit.id()).short()
                    ));
                }
                None => return Ok(None),
            }
        }
        Ok(first)
    };
    Intent {
        keeps: said().ok().flatten(),
        named: Vec::new(),
    }
}

/// The lines a change added or modified, per file, on the new side; a deletion counts as a
/// change of the line that now stands where it was.
pub fn changed_lines(files: &[FileDiff]) -> ChangedLines {
    let mut changed = ChangedLines::new();
    for f in files.iter().filter(|f| !f.binary && !f.withheld) {
        let set = changed.entry(f.path.clone()).or_default();
        for h in &f.hunks {
            let mut deleted = false;
            for l in &h.lines {
                match (l.origin, l.new_line) {
                    ('+', Some(n)) => {
                        set.insert(n);
                    }
                    ('-', _) => deleted = true,
                    (_, Some(n)) if deleted => {
                        set.insert(n);
                        deleted = false;
                    }
                    _ => {}
                }
            }
        }
    }
    changed
}

impl<'r> Prepared<'r> {
    /// Adds findings the caller established (a stage's claims, requirement facts, tree
    /// facts computed at the attempt).
    pub fn add_findings(&mut self, more: impl IntoIterator<Item = Finding>) {
        for f in more {
            if !self.gathered.findings.contains(&f) {
                self.gathered.findings.push(f);
            }
        }
    }

    /// The deterministic findings.
    pub fn findings(&self) -> &[Finding] {
        &self.gathered.findings
    }

    /// The model's input for `brief`.
    pub fn input<'s>(&'s self, brief: &'s Brief<'s>) -> ReviewInput<'s> {
        ReviewInput {
            brief,
            diff: &self.gathered.diff_text,
            findings: &self.gathered.findings,
            probe_guide: &self.probe_guide,
            facts: &self.facts,
        }
    }

    /// Runs the change's changed functions on both sides ([`ProbeRunner::behaviour`], with
    /// the TaskSpec's `examples` among the inputs) and keeps the diff, for the reviewer's
    /// facts and the review's record, and its findings for what the change says it does
    /// (`intent`): regressions, changes where behaviour was to stay, changes no requirement
    /// asked for (see [`crate::probe::BehaviourDiff::findings`]). Nothing where probes do
    /// not run or the code is a scaffold. A diff that could not be taken is said in the
    /// facts. `behaviours` holds what was taken of the same tree pair before (a building
    /// stage's check of the attempt under review): it is taken once.
    pub fn take_behaviour(
        &mut self,
        examples: &[String],
        intent: &Intent,
        behaviours: &super::evidence::Behaviours,
    ) {
        if self.not_run.is_some() {
            return;
        }
        match behaviours.of(&self.runner, examples) {
            Some(Ok(diff)) => {
                if let Some(text) = diff.render() {
                    self.add_facts(&text);
                }
                self.add_findings(diff.findings(intent));
                self.behaviour = Some(diff);
            }
            Some(Err(why)) => self.add_facts(&format!(
                "## Behaviour diff\nnot taken: {}\n",
                crate::bounded::clip(&why, 300)
            )),
            None => {}
        }
    }

    /// Adds a section of facts the reviewer is shown.
    pub fn add_facts(&mut self, section: &str) {
        if !self.facts.is_empty() && !self.facts.ends_with('\n') {
            self.facts.push('\n');
        }
        self.facts.push_str(section);
    }

    /// Runs `check` with the [`Checks`] of this review.
    pub fn with_checks<T>(&self, brief: &Brief<'_>, check: impl FnOnce(&Checks<'_>) -> T) -> T {
        self.with_checks_as(brief, None, check)
    }

    /// [`Self::with_checks`] for a part of the review: only `findings` (those of the part's
    /// files) are its deterministic evidence.
    pub fn with_findings<T>(
        &self,
        brief: &Brief<'_>,
        findings: &[Finding],
        check: impl FnOnce(&Checks<'_>) -> T,
    ) -> T {
        self.checks_of(brief, findings, None, check)
    }

    /// [`Self::with_checks`], with the probes used as `probes` says instead of as the
    /// review's policy does (`git triad bench` derives each answer both ways).
    pub fn with_checks_as<T>(
        &self,
        brief: &Brief<'_>,
        probes: Option<Probes<'_>>,
        check: impl FnOnce(&Checks<'_>) -> T,
    ) -> T {
        self.checks_of(brief, &self.gathered.findings, probes, check)
    }

    fn checks_of<T>(
        &self,
        brief: &Brief<'_>,
        findings: &[Finding],
        probes: Option<Probes<'_>>,
        check: impl FnOnce(&Checks<'_>) -> T,
    ) -> T {
        let read = |p: &str| self.files.text(p);
        let default = match (self.not_run, self.runner.off()) {
            (Some(why), _) | (None, Some(why)) => Probes::NotRun(why),
            (None, None) => Probes::Run(&self.runner),
        };
        check(&Checks {
            read: &read,
            findings,
            verify: brief.verify,
            requirement_ids: brief.requirement_ids,
            probes: probes.unwrap_or(default),
            behaviour: self.behaviour.as_ref(),
        })
    }
}

/// What a change does to what the repository already shows about its code: the tests its
/// base had that it weakens (see [`code::weakened_tests`]; none when the TaskSpec says
/// `tests = "rewrite"`), and the TaskSpec's acceptance examples run against its tree.
pub struct TreeFacts {
    /// The tests the change weakens, as findings.
    pub weakened: Vec<Finding>,
    /// What running the changed tests showed of the pattern rules' signals, when they were
    /// run: why they were set aside (an equivalent rewrite), or why they stand.
    pub weakening_checked: Option<String>,
    /// Every example with what it showed.
    pub examples: Vec<ExampleRun>,
}

impl TreeFacts {
    /// The facts of `new` against `base` (a run's base, or the old side of a reviewed
    /// change), with the examples of `spec` run by `runner` when `run_examples` (a
    /// building stage, Verify, a candidate: code meant to behave).
    pub fn of(
        repo: &Repository,
        base: Option<&Tree<'_>>,
        new: &Tree<'_>,
        spec: Option<&TaskSpec>,
        runner: &ProbeRunner<'_>,
        run: bool,
    ) -> Result<TreeFacts, git2::Error> {
        let diff = git::diff_trees(repo, base, new)?;
        let (before, after) = (
            base.map(|t| TreeFiles::new(repo, t.clone())),
            TreeFiles::new(repo, new.clone()),
        );
        let rewrite = spec.is_some_and(|s| s.scope.tests == TestsPolicy::Rewrite);
        let weakened = if rewrite {
            Vec::new()
        } else {
            let changes: Vec<ChangedFile> = diff
                .iter()
                .filter(|f| !f.binary && code::weakening_reads(&f.path))
                .map(|f| ChangedFile {
                    path: f.path.clone(),
                    before: before.as_ref().and_then(|b| b.text(&f.path)),
                    after: after.text(&f.path),
                })
                .collect();
            code::weakened_tests(&changes)
        };
        // The rules point; running the changed tests against code the originals rejected
        // decides.
        let mut weakened = weakened;
        let mut weakening_checked = None;
        if let (false, Some(base)) = (weakened.is_empty(), base) {
            match runner.weakening(base, &weakened) {
                Some(Decided::Kept(why)) => {
                    weakened.clear();
                    weakening_checked = Some(format!("not weakened: {why}"));
                }
                Some(Decided::Weakened(why)) => {
                    for f in &mut weakened {
                        f.reason = format!("{} (checked by running: {why})", f.reason);
                    }
                    weakening_checked = Some(format!("weakened: {why}"));
                }
                Some(Decided::Undecided(why)) => {
                    weakening_checked = Some(format!("not decided by running: {why}"));
                }
                None => {}
            }
        }
        let examples = match spec {
            Some(spec) if run => {
                let all = spec.all_examples();
                if all.is_empty() {
                    Vec::new()
                } else {
                    let changed: Vec<String> = diff.iter().map(|f| f.path.clone()).collect();
                    run_examples(&all, &after, &changed, runner)
                }
            }
            _ => Vec::new(),
        };
        Ok(TreeFacts {
            weakened,
            weakening_checked,
            examples,
        })
    }

    /// Every finding: the weakened tests, then the examples that fail or cannot run.
    pub fn findings(&self) -> Vec<Finding> {
        self.weakened
            .iter()
            .cloned()
            .chain(self.examples.iter().filter_map(ExampleRun::finding))
            .collect()
    }

    /// The examples that fail.
    pub fn failing(&self) -> Vec<&ExampleRun> {
        self.examples
            .iter()
            .filter(|e| e.result.outcome == crate::probe::ProbeOutcome::Confirmed)
            .collect()
    }
}
