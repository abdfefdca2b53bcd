//! What a stage model is given: role prompt, TaskSpec, repo map, files, previous diff,
//! flags and retry feedback.

use std::collections::BTreeMap;

use crate::code::{self, Lang};
use crate::config::{prompt, Config, EditFormat};
use crate::edit::grammar::whole_file_answer;
use crate::git::TreeFiles;
use crate::model::ChatRequest;
use crate::privacy::{Privacy, WITHHELD};
use crate::task::TaskSpec;

use super::stage::Stage;

/// Inputs of one stage request.
pub struct StageContext<'a> {
    /// The stage.
    pub stage: Stage,
    /// The TaskSpec.
    pub task: &'a TaskSpec,
    /// Files at the stage's starting point.
    pub files: &'a TreeFiles<'a>,
    /// Paths changed so far in the run (shown in full first).
    pub changed_so_far: &'a [String],
    /// The previous stage's diff (rendered).
    pub previous_diff: &'a str,
    /// FLAG block from the arbiter, if any.
    pub flags: &'a str,
    /// Feedback for this retry, if any.
    pub feedback: &'a str,
    /// Extra facts (the verify command's result, for the verifier).
    pub facts: &'a str,
    /// Character budget for file contents.
    pub char_budget: usize,
    /// Outlines already computed in this run, by blob id (most files do not change between
    /// stages, and parsing every file again was most of a stage's own overhead).
    pub outlines: &'a OutlineCache,
    /// Which files are private: listed as withheld, never shown.
    pub privacy: &'a Privacy,
}

/// Repository-map lines by blob id, shared by the stages of a run.
pub type OutlineCache = std::sync::Mutex<std::collections::HashMap<git2::Oid, String>>;

fn outline_line(path: &str, text: &str) -> String {
    Lang::from_path(path)
        .map(|lang| {
            code::outline(lang, text)
                .iter()
                .take(40)
                .map(|sym| {
                    format!(
                        "{} {} ({}-{})",
                        sym.kind, sym.name, sym.start_line, sym.end_line
                    )
                })
                .collect::<Vec<_>>()
                .join("; ")
        })
        .unwrap_or_default()
}

/// Builds the user message of a stage request.
pub fn stage_message(c: &StageContext<'_>) -> String {
    let mut s = context_message(c);
    s.push_str(&format!(
        "\n## Your stage: {}\nDo the work of the {} stage now, following the answer format.\n",
        c.stage.as_str().to_uppercase(),
        c.stage
    ));
    s
}

/// What a stage request shows before it asks for the stage's work: the TaskSpec, the
/// repository map, the files, the previous change, the facts, flags and feedback. A debate
/// shows its debaters the same, then asks its own question.
pub fn context_message(c: &StageContext<'_>) -> String {
    let mut s = c.task.render();
    let in_scope: Vec<String> = c
        .files
        .paths()
        .into_iter()
        .filter(|p| c.task.writable(p))
        .collect();

    s.push_str("\n## Repository map (files in scope)\n");
    let mut texts: BTreeMap<String, String> = BTreeMap::new();
    let mut withheld = 0;
    for p in &in_scope {
        let bytes = c.files.bytes(p);
        if c.privacy.check(p, bytes.as_deref()).is_some() {
            s.push_str(&format!("{p} {WITHHELD}\n"));
            withheld += 1;
            continue;
        }
        let Some(text) = bytes.and_then(|b| String::from_utf8(b).ok()) else {
            s.push_str(&format!("{p} (binary)\n"));
            continue;
        };
        let outline = match c.files.blob_id(p) {
            Some(id) => {
                let mut cache = c.outlines.lock().unwrap_or_else(|e| e.into_inner());
                cache
                    .entry(id)
                    .or_insert_with(|| outline_line(p, &text))
                    .clone()
            }
            None => outline_line(p, &text),
        };
        if outline.is_empty() {
            s.push_str(&format!("{p} ({} lines)\n", text.lines().count()));
        } else {
            s.push_str(&format!("{p}: {outline}\n"));
        }
        texts.insert(p.clone(), text);
    }
    if withheld > 0 {
        s.push_str(&format!(
            "(files marked {WITHHELD} hold secrets such as keys or credentials: their content is not shown and they cannot be edited)\n"
        ));
    }

    // Full text: files changed so far first, then the smallest, within the budget.
    let mut order: Vec<&String> = texts.keys().collect();
    order.sort_by_key(|p| (!c.changed_so_far.contains(p), texts[*p].len()));
    let mut budget = c.char_budget;
    let mut shown = Vec::new();
    let mut omitted = Vec::new();
    for p in order {
        let t = &texts[p];
        if t.len() <= budget {
            budget -= t.len();
            shown.push(p.clone());
        } else {
            omitted.push(p.clone());
        }
    }
    // The files the TaskSpec names come first: a small model writes the first file it was
    // shown (an empty `tests/__init__.py` got the new test).
    let task_text = c.task.render();
    shown.sort_by_key(|p| (!task_text.contains(p.as_str()), p.clone()));
    s.push_str("\n## Current files (full text, exactly as they are now)\n");
    for p in &shown {
        s.push_str(&format!("\n{p}\n```\n{}", texts[p]));
        if !texts[p].ends_with('\n') {
            s.push('\n');
        }
        s.push_str("```\n");
    }
    if !omitted.is_empty() {
        s.push_str(&format!(
            "\n(not shown for lack of room: {})\n",
            omitted.join(", ")
        ));
    }
    if !c.previous_diff.trim().is_empty() {
        s.push_str("\n## The previous stage's change\n");
        s.push_str(c.previous_diff);
    }
    if !c.facts.trim().is_empty() {
        s.push('\n');
        s.push_str(c.facts);
    }
    if !c.flags.trim().is_empty() {
        s.push('\n');
        s.push_str(c.flags);
    }
    if !c.feedback.trim().is_empty() {
        s.push('\n');
        s.push_str(c.feedback);
    }
    s
}

/// Prompt characters per token of context window, roughly; file contents get half.
const CHARS_PER_TOKEN: usize = 2;

/// The characters of file text a stage prompt for `model` may carry: half of what its context
/// window holds at about two characters a token, kept between 2 000 and 100 000 (30 000 for
/// a model the registry does not know).
pub fn file_char_budget(config: &Config, model: &str) -> usize {
    let window = config.models.get(model).map_or(60_000, |m| {
        (m.window() as usize)
            .saturating_mul(CHARS_PER_TOKEN)
            .clamp(4_000, 200_000)
    });
    window / 2
}

/// The whole request of one stage attempt by `model`: the role prompt and the answer
/// protocol of the model's edit format as the system message, [`stage_message`] as the user
/// message, the role's output cap and temperature, and for a model writing whole files on a
/// server that enforces a grammar, the grammar of that format over the files it may write.
///
/// A run and `git triad bench` both ask through here, so a model is measured on exactly the
/// request it gets in a run. `root` is the work tree that prompt overrides are read from.
pub fn stage_request(
    config: &Config,
    root: Option<&std::path::Path>,
    model: &str,
    c: &StageContext<'_>,
) -> ChatRequest {
    let role = c.stage.role();
    let user = stage_message(c);
    let registered = config.models.get(model);
    let protocol = match registered.map(|m| m.edit_format) {
        Some(EditFormat::Whole) => "protocol-whole",
        _ => "protocol",
    };
    let system = format!(
        "{}\n\n{}",
        prompt(config, role.as_str(), root),
        prompt(config, protocol, root)
    );
    let role_cfg = config.roles.get(role);
    let mut req = ChatRequest::new(
        Some(system),
        user,
        role_cfg.max_output_tokens.unwrap_or(8192),
    );
    req.temperature = role_cfg.temperature;
    // A small model writing whole files, on a server that enforces a grammar, is held to the
    // format: the implement stage must write at least one file.
    if let Some(m) = registered {
        if m.edit_format == EditFormat::Whole && m.has("gbnf") {
            // Private files are not among the paths the grammar lets it write.
            let writable: Vec<String> = c
                .files
                .paths()
                .into_iter()
                .filter(|p| c.task.writable(p))
                .filter(|p| c.privacy.check(p, c.files.bytes(p).as_deref()).is_none())
                .collect();
            // The verifier's metadata must carry its implementation summary.
            let opens = (c.stage == Stage::Verify).then_some("implementation_summary");
            req.grammar = Some(whole_file_answer(
                &writable,
                c.stage == Stage::Implement,
                opens,
            ));
        }
    }
    req
}
