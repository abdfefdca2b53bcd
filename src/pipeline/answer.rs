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
        .is_some_and(|m| m.edits(model) == EditFormat::Whole)
}

/// Why an answer could not be read, said as what happened when the server cut it at the
/// request's output limit: a model that writes more than fits (whole files, every test
/// again) loses its metadata block at the end, and "no metadata block" alone would send it
/// to write the same too-long answer again.
pub fn cut_short(why: String, response: &crate::model::ChatResponse, max_tokens: u32) -> String {
    if !response.truncated() {
        return why;
    }
    format!(
        "your answer was cut at the output limit ({max_tokens} tokens) before it ended, so {why}. Write less: only the files you change, only what the task needs, then the metadata block"
    )
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

/// The complete file blocks of a whole-file answer the server cut at its output limit, as
/// an answer: each file's first block (a small model cut mid-answer was seen writing one file
/// again and again after a complete fix of another), and a metadata that says it was cut.
/// `None` when no block is complete. The facts judge what it wrote, as any answer's.
pub fn read_cut_answer(text: &str) -> Option<ReadAnswer> {
    // The answer up to a closing fence, tried from the last one back: a later fence may open
    // the block the cut left unclosed.
    let ends: Vec<usize> = text
        .match_indices("\n```\n")
        .map(|(at, _)| at + 5)
        .collect();
    let blocks = ends.iter().rev().take(4).find_map(|&end| {
        parse_whole_files(&text[..end])
            .ok()
            .filter(|b| !b.is_empty())
    })?;
    let mut first: Vec<EditBlock> = Vec::new();
    for b in blocks {
        if !first.iter().any(|f| f.path == b.path) {
            first.push(b);
        }
    }
    let summary = format!(
        "(the answer was cut at the output limit before its metadata; its {} complete file(s) were used)",
        first.len()
    );
    let meta =
        serde_json::from_value(serde_json::json!({"outcome": "APPROVE", "summary": summary}))
            .ok()?;
    Some(ReadAnswer {
        meta,
        blocks: first,
    })
}

/// Why a block that would change a read-only file is set aside.
pub const READ_ONLY: &str = "read-only in this run: it is a test that fails at the run's base, and the failing tests are the specification; change the code so it passes";

/// Applies `blocks` to `files` (every block is checked before any is applied): only paths
/// the task lets a stage write, never a private file, and none of `read_only` (globs).
///
/// A block on a read-only file never applies, and is judged before any check runs. One
/// that writes the file back as it is (a small model echoes the test it was shown beside the
/// code, seen in most of its answers on bug fixes) changes nothing and is dropped unsaid;
/// one that would change it is set aside ([`Applied::set_aside`], told to the model) and
/// the rest of the answer applies, so a code fix written beside a test edit is still tried
/// by the facts. An answer whose only edits are to read-only files is refused whole.
pub fn apply_answer(
    files: &TreeFiles<'_>,
    privacy: &Privacy,
    spec: &TaskSpec,
    blocks: &[EditBlock],
    read_only: &[String],
) -> Result<Applied, Vec<BlockFailure>> {
    let locked = |b: &EditBlock| {
        crate::edit::check_path(&b.path)
            .is_ok_and(|p| read_only.iter().any(|r| crate::glob::matches(r, &p)))
    };
    let (locked, open): (Vec<&EditBlock>, Vec<&EditBlock>) = blocks.iter().partition(|b| locked(b));
    let set_aside: Vec<BlockFailure> = locked
        .into_iter()
        .filter(|b| !writes_back(files, b))
        .map(|b| BlockFailure::of(b, READ_ONLY.into()))
        .collect();
    if open.is_empty() && !set_aside.is_empty() {
        return Err(set_aside);
    }
    let open: Vec<EditBlock> = open.into_iter().cloned().collect();
    let guarded = Guard { files, privacy };
    match apply_blocks(&guarded, &open, &|p| spec.writable(p)) {
        Ok(mut applied) => {
            applied.set_aside = set_aside;
            Ok(applied)
        }
        Err(mut failures) => {
            failures.extend(set_aside);
            Err(failures)
        }
    }
}

/// Whether `block` leaves its file as it is: a whole file equal to the current text but for
/// trailing white space, or a SEARCH/REPLACE whose two sides are the same.
fn writes_back(files: &TreeFiles<'_>, block: &EditBlock) -> bool {
    if !block.whole {
        return block.search == block.replace;
    }
    let Ok(path) = crate::edit::check_path(&block.path) else {
        return false;
    };
    let Some(now) = files.text(&path) else {
        return false;
    };
    let lines = |t: &str| -> Vec<String> {
        let mut v: Vec<String> = t.lines().map(|l| l.trim_end().to_string()).collect();
        while v.last().is_some_and(String::is_empty) {
            v.pop();
        }
        v
    };
    lines(&now) == lines(&block.replace)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_answer_keeps_each_file_s_first_complete_block() {
        let cut = "calc.py\n```python\ndef add(a, b):\n    return a + b\n```\n\ntests/__init__.py\n```python\n# one\n```\n\ntests/__init__.py\n```python\n\n```\n\ntests/__init__.py\n```python\n\n";
        let read = read_cut_answer(cut).unwrap();
        let paths: Vec<&str> = read.blocks.iter().map(|b| b.path.as_str()).collect();
        assert_eq!(paths, ["calc.py", "tests/__init__.py"]);
        assert_eq!(read.blocks[0].replace, "def add(a, b):\n    return a + b\n");
        assert_eq!(read.blocks[1].replace, "# one\n");
        assert!(read.meta.summary.contains("cut at the output limit"));
        assert!(read_cut_answer("calc.py\n```python\ndef add(a, b):\n").is_none());
    }
}
