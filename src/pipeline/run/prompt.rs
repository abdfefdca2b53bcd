//! The request of one stage attempt: the role prompt and protocol, and the stage context
//! assembled from the run's state (previous diff, what changed so far, flags, feedback,
//! the verify command's result).

use git2::Tree;

use super::format;
use super::step::{Cx, Journal, RunError};
use super::suggest;
use super::verify;
use crate::arbiter::feedback;
use crate::git::{self, Context as _, TreeFiles};
use crate::model::ChatRequest;
use crate::pipeline::context::{file_char_budget, fitted_stage_request, StageContext};
use crate::pipeline::fit::LeftOut;
use crate::pipeline::stage::Stage;

/// The request for the current stage, whose files are those of `parent_tree`, fitted to
/// the window of the stage's model, and what it left out to fit.
pub(super) fn stage_request(
    cx: &Cx<'_>,
    j: &mut Journal<'_>,
    parent_tree: &Tree<'_>,
    files: &TreeFiles<'_>,
) -> Result<(ChatRequest, LeftOut), RunError> {
    let repo = cx.repo();
    let idx = j.state.current();
    let stage = j.state.stages()[idx].stage;
    let previous_diff = if idx > 0 {
        // The previous stage's own change: from the commit before it to the tip. A stage
        // a parallel exploration stood in for has no commit and is passed over.
        let before = j.state.stages()[..idx]
            .iter()
            .rev()
            .filter_map(|s| s.commit.as_ref())
            .nth(1)
            .unwrap_or(j.state.base());
        let t = repo
            .find_commit(before.oid()?)
            .and_then(|c| c.tree())
            .ctx("reading a tree")?;
        let mut d = git::diff_trees(repo, Some(&t), parent_tree).ctx("diffing")?;
        cx.privacy.mark_diff(repo, Some(&t), parent_tree, &mut d);
        git::render_diff(&d, &|_, _| None)
    } else {
        String::new()
    };
    let base_tree = cx.base_tree()?;
    let run_diff = git::diff_trees(repo, Some(&base_tree), parent_tree).ctx("diffing")?;
    let changed_so_far: Vec<String> = run_diff.iter().map(|f| f.path.clone()).collect();
    let run_tree = TreeFiles::new(repo, parent_tree.clone());
    let hunks = |path: &str| {
        let f = run_diff.iter().find(|f| f.path == path)?;
        Some(git::render_diff(std::slice::from_ref(f), &|f, h| {
            crate::code::hunk_label(&f.path, &run_tree.text(&f.path)?, h.new_start, h.new_lines)
        }))
    };
    let flags = feedback::flag_block(
        idx.checked_sub(1)
            .map_or("previous", |p| j.state.stages()[p].stage.as_str()),
        j.state.pending_flags(),
    ) + &suggest::block(&j.state, stage);
    let facts = if stage == Stage::Verify {
        let stats = git::FileStat::of(&run_diff);
        format!(
            "## What the whole run changed (a fact)\n{}\n{}",
            if stats.is_empty() {
                "nothing: the run's diff against its base is empty".to_string()
            } else {
                git::FileStat::describe(&stats)
            },
            verify::shown(cx, &j.state)
        ) + &format::shown(&j.state)
    } else if stage == Stage::Architect {
        // What the workflow decided (a debate's winning position) is what the architect
        // builds.
        cx.env.workflows.architect_input(&j.state)
    } else {
        skipped_before(&j.state, idx) + &verify::last_failure(cx, j)?
    };
    let read_only = if matches!(stage, Stage::Implement | Stage::Refactor) {
        verify::read_only(cx, j)?
    } else {
        Vec::new()
    };
    let config = &cx.env.config.config;
    let model = j.state.stages()[idx].model();
    let root = cx.env.repo_root();
    let estimator = cx.env.client.estimator(model).unwrap_or_default();
    Ok(fitted_stage_request(
        config,
        Some(&root),
        model,
        &StageContext {
            stage,
            task: &cx.spec,
            files,
            changed_so_far: &changed_so_far,
            previous_diff: &previous_diff,
            flags: &flags,
            feedback: j.state.feedback(),
            facts: &facts,
            char_budget: file_char_budget(config, model),
            hunks: &hunks,
            outlines: &cx.outlines,
            privacy: &cx.privacy,
            read_only: &read_only,
        },
        &estimator,
    ))
}

/// What a building stage is told of the stages skipped before it (the role prompts speak of
/// a plan and a scaffold, which a skipped architect never made), empty when none was.
fn skipped_before(state: &crate::pipeline::record::RunState, idx: usize) -> String {
    let skipped: Vec<String> = state.stages()[..idx]
        .iter()
        .filter_map(|s| Some(format!("- {}: {}\n", s.stage, s.skipped.as_ref()?)))
        .collect();
    if skipped.is_empty() {
        return String::new();
    }
    format!(
        "## Stages skipped (a fact)\nThere is no plan or scaffold to follow; change the code itself.\n{}",
        skipped.concat()
    )
}
