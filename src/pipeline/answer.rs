//! The stage service: reading a stage model's answer (its metadata block, then its edits in
//! the model's answer format, whole files or SEARCH/REPLACE blocks) and applying the edits to
//! a tree behind the guard (scope, private files, paths).
//!
//! Every place that turns a model's answer into files goes through here: a run's stages, the
//! parallel candidates and their synthesis, the plain test loop and the bench's build tasks,
//! so what a bench measures is what a run does.

use crate::config::{Config, EditFormat};
use crate::edit::{
    apply_blocks, parse_edit_blocks, parse_whole_files, Applied, BlockFailure, EditBlock,
};
use crate::git::TreeFiles;
use crate::privacy::{Guard, Privacy};
use crate::task::outcome::{parse_meta, StageMeta};
use crate::task::TaskSpec;

/// A stage answer, read: its metadata and its edits.
#[derive(Debug, Clone)]
pub struct ReadAnswer {
    /// The metadata block (summary, outcome, …).
    pub meta: StageMeta,
    /// The edits, in order.
    pub blocks: Vec<EditBlock>,
}

/// Whether `model` answers in whole files (a per-model setting: small models do).
pub fn writes_whole_files(config: &Config, model: &str) -> bool {
    config
        .models
        .get(model)
        .is_some_and(|m| m.edit_format == EditFormat::Whole)
}

/// Reads `text` as a stage answer; `whole`: its edits are whole files. The error says what
/// could not be read, as feedback a model can act on.
pub fn read_answer(text: &str, whole: bool) -> Result<ReadAnswer, String> {
    let meta = parse_meta(text)?;
    let parsed = if whole {
        parse_whole_files(text)
    } else {
        parse_edit_blocks(text)
    };
    let blocks = parsed.map_err(|e| format!("an edit block could not be read: {e}"))?;
    Ok(ReadAnswer { meta, blocks })
}

/// Applies `blocks` to `files` (every block is checked before any is applied): only paths
/// the task lets a stage write, never a private file, and none of `read_only` (globs; an
/// answer that touches one is refused whole, before any check runs).
pub fn apply_answer(
    files: &TreeFiles<'_>,
    privacy: &Privacy,
    spec: &TaskSpec,
    blocks: &[EditBlock],
    read_only: &[String],
) -> Result<Applied, Vec<BlockFailure>> {
    // Refused before anything is applied or checked: a read-only file is not the stage's.
    let refused: Vec<BlockFailure> = blocks
        .iter()
        .filter(|b| {
            crate::edit::check_path(&b.path)
                .is_ok_and(|p| read_only.iter().any(|r| crate::glob::matches(r, &p)))
        })
        .map(|b| {
            BlockFailure::of(
                b,
                "read-only in this run: it is a test that fails at the run's base, and the failing tests are the specification; change the code so it passes".into(),
            )
        })
        .collect();
    if !refused.is_empty() {
        return Err(refused);
    }
    let guarded = Guard { files, privacy };
    apply_blocks(&guarded, blocks, &|p| spec.writable(p))
}
