//! What the run's tree shows, whatever anyone says: the whole run's change, the TaskSpec's
//! requirements it visibly leaves undone, the tests of the base it weakens and the task's
//! examples run against it, what a stage's summary claims that its diff does not show, and
//! the change with its deterministic findings as the deliberations and the candidates'
//! judges see it.

use super::checks::StageFacts;
use super::examples::untested;
use super::requirements::{checkable, functions, unmet_requirements, Unmet};
use super::step::{Cx, Journal, RunError};
use crate::arbiter::gather::{gather, prepare, Prepared, Subject, TreeFacts};
use crate::code::Finding;
use crate::git::{self, Context as _, ObjectId, TreeFiles};
use crate::pipeline::stage::Stage;
use crate::probe::ProbeRunner;

/// The TaskSpec's requirements that the run's change up to `new_tree` visibly leaves
/// undone (see [`unmet_requirements`]), and the acceptance examples its tests never
/// check (see [`untested`]).
pub(super) fn unmet(cx: &Cx<'_>, new_tree: &git2::Tree<'_>) -> Result<Vec<Unmet>, RunError> {
    if checkable(&cx.spec).next().is_none() {
        return Ok(Vec::new());
    }
    let run = run_diff(cx, new_tree)?;
    let files = TreeFiles::new(cx.repo(), new_tree.clone());
    let read = |p: &str| files.text(p);
    let mut unmet = unmet_requirements(&cx.spec, &run, &read);
    // The tree is listed only for a task with examples to look for.
    if !cx.spec.all_examples().is_empty() {
        let tests: Vec<String> = files
            .paths()
            .into_iter()
            .filter(|p| cx.spec.writable(p) && crate::code::test_path(p))
            .collect();
        unmet.extend(untested(&cx.spec, &functions(&cx.spec), &tests, &read));
    }
    Ok(unmet)
}

/// The facts of the run's tree at `new_tree` (see [`TreeFacts`]): the tests of the
/// run's base it weakens, and, from the implement stage on, the task's acceptance
/// examples run against it.
pub(super) fn tree_facts(
    cx: &Cx<'_>,
    stage: Stage,
    new_tree: &git2::Tree<'_>,
) -> Result<TreeFacts, RunError> {
    let repo = cx.repo();
    let base = cx.base_tree()?;
    let runner = ProbeRunner::new(repo, new_tree.clone(), cx.probe_policy());
    let run = stage != Stage::Architect;
    Ok(
        TreeFacts::of(repo, Some(&base), new_tree, Some(&cx.spec), &runner, run)
            .ctx("reading the stage's tree")?,
    )
}

/// What the stage's summary claims that its diff does not show (`facts`, the stage's
/// own diff to `new_tree`); the verifier reports on the whole run, so its claims are
/// held against the run's diff, not against its own (empty) one.
pub(super) fn claims(
    cx: &Cx<'_>,
    stage: Stage,
    facts: &StageFacts,
    new_tree: &git2::Tree<'_>,
    summary: &str,
) -> Result<Vec<Finding>, RunError> {
    if stage != Stage::Verify {
        return Ok(facts.claim_findings(stage));
    }
    let run = run_diff(cx, new_tree)?;
    Ok(StageFacts::of(&run, summary).claim_findings(stage))
}

/// The whole run's change: the diff from the run's base to `new_tree`.
pub(super) fn run_diff(
    cx: &Cx<'_>,
    new_tree: &git2::Tree<'_>,
) -> Result<Vec<git::FileDiff>, RunError> {
    let repo = cx.repo();
    let base = cx.base_tree()?;
    Ok(git::diff_trees(repo, Some(&base), new_tree).ctx("diffing the run")?)
}

/// The change and the evidence every call of the deliberation is shown.
pub(super) struct Shown {
    pub(super) task: String,
    pub(super) diff: String,
    pub(super) evidence: Vec<String>,
}

/// The run's change, base to tip, with the deterministic findings on it.
pub(super) fn shown(cx: &Cx<'_>, j: &Journal<'_>) -> Result<Shown, RunError> {
    let repo = cx.repo();
    let base = cx.base_tree()?;
    let tip = cx.tree(j.state.tip(), "reading a tree for the consensus")?;
    let gathered = gather(repo, Some(&base), &tip, None, Some(&cx.privacy))
        .ctx("diffing the run for the consensus")?;
    let evidence = gathered
        .findings
        .iter()
        .map(|f| format!("{} {}:{} {}", f.severity, f.path, f.line, f.reason))
        .collect();
    Ok(Shown {
        task: cx.spec.render(),
        diff: gathered.diff_text,
        evidence,
    })
}

/// A candidate's solution (`commit`) prepared for review against the run's base, with
/// the tree's facts (weakened tests, the task's examples) among its findings.
pub(in crate::pipeline) fn candidate_review<'a>(
    cx: &Cx<'a>,
    commit: &ObjectId,
) -> Result<Prepared<'a>, RunError> {
    let repo = cx.repo();
    let base = cx.base_tree()?;
    let tree = cx.tree(commit, "reading a candidate's tree")?;
    let mut prepared = prepare(Subject {
        repo,
        old: Some(&base),
        new: &tree,
        privacy: Some(&cx.privacy),
        venv_root: None,
        probes: cx.probe_policy(),
        not_run: None,
    })
    .ctx("diffing a candidate")?;
    let facts = TreeFacts::of(
        repo,
        Some(&base),
        &tree,
        Some(&cx.spec),
        &prepared.runner,
        true,
    )
    .ctx("diffing a candidate")?;
    prepared.add_findings(facts.findings());
    Ok(prepared)
}
