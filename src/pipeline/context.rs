//! What a stage model is given: role prompt, TaskSpec, repo map, files, previous diff,
//! flags and retry feedback.

use std::collections::BTreeMap;

use crate::code::{self, Lang};
use crate::config::{prompt, Config, EditFormat};
use crate::edit::grammar::whole_file_answer;
use crate::git::TreeFiles;
use crate::model::window::{Estimator, Room, Window};
use crate::model::ChatRequest;
use crate::privacy::{Privacy, WITHHELD};
use crate::task::TaskSpec;

use super::fit::{self, Item, LeftOut, Level};
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
    /// Most bytes of full file text, whatever the window allows.
    pub char_budget: usize,
    /// The hunks the run changed in a file so far, rendered with new-side line numbers and
    /// their enclosing symbols: what a changed file too large to show in full is shown as
    /// (`None`: not changed, or not known to this caller). Asked only for such files.
    pub hunks: &'a dyn Fn(&str) -> Option<String>,
    /// Outlines already computed in this run, by blob id (most files do not change between
    /// stages, and parsing every file again was most of a stage's own overhead).
    pub outlines: &'a OutlineCache,
    /// Which files are private: listed as withheld, never shown.
    pub privacy: &'a Privacy,
    /// Globs of the files this stage may read but not write (the tests that fail at the
    /// run's base): shown in a section of their own, after the files it may change.
    pub read_only: &'a [String],
}

impl<'a> StageContext<'a> {
    /// The request of a stage with nothing before it: no change so far, no previous diff,
    /// no flags, feedback or facts, no hunks known. Callers that have some set them on top
    /// (`StageContext { feedback, ..StageContext::new(…) }`).
    pub fn new(
        stage: Stage,
        task: &'a TaskSpec,
        files: &'a TreeFiles<'a>,
        char_budget: usize,
        outlines: &'a OutlineCache,
        privacy: &'a Privacy,
    ) -> Self {
        StageContext {
            stage,
            task,
            files,
            changed_so_far: &[],
            previous_diff: "",
            flags: "",
            feedback: "",
            facts: "",
            char_budget,
            hunks: &|_| None,
            outlines,
            privacy,
            read_only: &[],
        }
    }
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

/// Builds the user message of a stage request, whatever its size (see
/// [`fitted_stage_message`]).
pub fn stage_message(c: &StageContext<'_>) -> String {
    fitted_stage_message(c, usize::MAX).0
}

/// The user message of a stage request in at most `limit` bytes where it can shrink that
/// far ([`crate::pipeline::fit`]), and what it left out.
pub fn fitted_stage_message(c: &StageContext<'_>, limit: usize) -> (String, LeftOut) {
    let ask = format!(
        "\n## Your stage: {}\nDo the work of the {} stage now, following the answer format.\n",
        c.stage.as_str().to_uppercase(),
        c.stage
    );
    let (mut s, left_out) = fitted_context(c, limit.saturating_sub(ask.len()));
    s.push_str(&ask);
    (s, left_out)
}

/// What a stage request shows before it asks for the stage's work: the TaskSpec, the
/// repository map, the files, the previous change, the facts, flags and feedback. A debate
/// shows its debaters the same, then asks its own question.
pub fn context_message(c: &StageContext<'_>) -> String {
    fitted_context(c, usize::MAX).0
}

/// [`context_message`] in at most `limit` bytes where it can shrink that far, and what it
/// left out.
pub fn fitted_context(c: &StageContext<'_>, limit: usize) -> (String, LeftOut) {
    let task = c.task.render();
    let mut withheld = 0;
    let mut items: Vec<Item> = Vec::new();
    for p in c.files.paths().into_iter().filter(|p| c.task.writable(p)) {
        let bytes = c.files.bytes(&p);
        if c.privacy.check(&p, bytes.as_deref()).is_some() {
            withheld += 1;
            items.push(Item {
                map_line: format!("{p} {WITHHELD}\n"),
                path: p,
                full: None,
                hunks: None,
                important: false,
            });
            continue;
        }
        let Some(text) = bytes.and_then(|b| String::from_utf8(b).ok()) else {
            items.push(Item {
                map_line: format!("{p} (binary)\n"),
                path: p,
                full: None,
                hunks: None,
                important: false,
            });
            continue;
        };
        let outline = match c.files.blob_id(&p) {
            Some(id) => {
                let mut cache = c.outlines.lock().unwrap_or_else(|e| e.into_inner());
                cache
                    .entry(id)
                    .or_insert_with(|| outline_line(&p, &text))
                    .clone()
            }
            None => outline_line(&p, &text),
        };
        let map_line = if outline.is_empty() {
            format!("{p} ({} lines)\n", text.lines().count())
        } else {
            format!("{p}: {outline}\n")
        };
        // The fence names the file's language, as the answer's must (see [`system_message`]).
        let tag = Lang::from_path(&p).map_or("", Lang::name);
        let mut full = format!("\n{p}\n```{tag}\n{text}");
        if !text.ends_with('\n') {
            full.push('\n');
        }
        full.push_str("```\n");
        items.push(Item {
            important: c.changed_so_far.contains(&p) || task.contains(p.as_str()),
            path: p,
            map_line,
            full: Some(full),
            hunks: None,
        });
    }

    // Most important first: files changed so far, then files the TaskSpec names, then the
    // smaller. (The map keeps path order.)
    let changed = |p: &str| c.changed_so_far.iter().any(|q| q == p);
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by_key(|&i| {
        let it = &items[i];
        (
            !changed(&it.path),
            !task.contains(it.path.as_str()),
            it.full.as_ref().map_or(0, String::len),
        )
    });
    let mut ranked: Vec<Item> = order.iter().map(|&i| items[i].clone()).collect();

    let withheld_note = if withheld > 0 {
        format!("(files marked {WITHHELD} hold secrets such as keys or credentials: their content is not shown and they cannot be edited)\n")
    } else {
        String::new()
    };
    let previous = if c.previous_diff.trim().is_empty() {
        String::new()
    } else {
        format!("\n## The previous stage's change\n{}", c.previous_diff)
    };
    let previous_files = if previous.is_empty() {
        String::new()
    } else {
        let files: String = c
            .previous_diff
            .lines()
            .filter(|l| l.starts_with("=== "))
            .map(|l| format!("{}\n", &l[4..]))
            .collect();
        format!("\n## The previous stage's change (its files only, for lack of room)\n{files}")
    };
    let mut tail = String::new();
    for part in [c.facts, c.flags, c.feedback] {
        if !part.trim().is_empty() {
            tail.push('\n');
            tail.push_str(part);
        }
    }
    let fixed = task.len() + withheld_note.len() + tail.len() + HEADINGS;
    let diff = (previous.len(), previous_files.len());
    let mut plan = fit::plan(&ranked, fixed, diff, limit, c.char_budget);
    // Hunks are worked out only for a changed file that is not shown in full.
    let needs_hunks = ranked
        .iter()
        .zip(&plan.levels)
        .any(|(it, l)| *l != Level::Full && it.full.is_some() && changed(&it.path));
    if needs_hunks {
        for it in ranked
            .iter_mut()
            .filter(|it| it.full.is_some() && changed(&it.path))
        {
            it.hunks = (c.hunks)(&it.path).map(|h| format!("\n{h}"));
        }
        plan = fit::plan(&ranked, fixed, diff, limit, c.char_budget);
    }
    let left_out = LeftOut::of(&ranked, &plan);
    let level_of: BTreeMap<&str, Level> = ranked
        .iter()
        .zip(&plan.levels)
        .map(|(it, l)| (it.path.as_str(), *l))
        .collect();

    let mut s = task.clone();
    s.push_str("\n## Repository map (files in scope)\n");
    for it in &items {
        match level_of[it.path.as_str()] {
            Level::Full | Level::Hunks | Level::Outline => s.push_str(&it.map_line),
            Level::Path => {
                s.push_str(&it.path);
                s.push('\n');
            }
            Level::Dropped => {}
        }
    }
    s.push_str(&withheld_note);
    // The files the TaskSpec names come first: a small model writes the first file it was
    // shown (an empty `tests/__init__.py` got the new test).
    let mut shown: Vec<&Item> = ranked
        .iter()
        .filter(|it| level_of[it.path.as_str()] == Level::Full)
        .collect();
    shown.sort_by_key(|it| (!task.contains(it.path.as_str()), it.path.clone()));
    // The files the stage may only read come after the ones it may change, under their own
    // heading: shown among the files to change, a failing test was written back, unchanged
    // or "fixed", by a small model in most of its answers to a bug fix.
    let (locked, open): (Vec<&Item>, Vec<&Item>) = shown.into_iter().partition(|it| {
        c.read_only
            .iter()
            .any(|g| crate::glob::matches(g, &it.path))
    });
    s.push_str("\n## Current files (full text, exactly as they are now)\n");
    for it in open {
        s.push_str(it.full.as_deref().unwrap_or_default());
    }
    if !locked.is_empty() {
        s.push_str("\n## Read-only files (full text, for reference: never write them)\n");
        for it in locked {
            s.push_str(it.full.as_deref().unwrap_or_default());
        }
    }
    let mut hunked: Vec<&Item> = ranked
        .iter()
        .filter(|it| level_of[it.path.as_str()] == Level::Hunks)
        .collect();
    if !hunked.is_empty() {
        hunked.sort_by_key(|it| it.path.clone());
        s.push_str("\n## What this run changed in files too large to show in full (hunks with new-side line numbers and their enclosing symbols)\n");
        for it in hunked {
            s.push_str(it.hunks.as_deref().unwrap_or_default());
        }
    }
    s.push_str(&left_out.section());
    s.push_str(if plan.diff_as_files {
        &previous_files
    } else {
        &previous
    });
    s.push_str(&tail);
    (s, left_out)
}

/// Bytes of the headings a context message always has, and of the one for hunks.
const HEADINGS: usize = 300;

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

/// The whole request of one stage attempt by `model`, as [`fitted_stage_request`] makes it
/// with the estimate of a model no server has reported on.
pub fn stage_request(
    config: &Config,
    root: Option<&std::path::Path>,
    model: &str,
    c: &StageContext<'_>,
) -> ChatRequest {
    fitted_stage_request(config, root, model, c, &Estimator::conservative()).0
}

/// The system message of a stage request for `model`: the role's prompt, then the answer
/// protocol of the model's edit format, its example written as a file of the task's language
/// ([`task_language`]). A small model copies the example's language into the file it writes:
/// seen on a Rust task, a whole `src/lib.rs` answered in a Python fence with its `//!` line
/// rewritten as `# ...`, in the plain loop and the pipeline alike. A protocol override
/// without the `{{file}}` and `{{lang}}` placeholders is sent as written.
pub fn system_message(
    config: &Config,
    root: Option<&std::path::Path>,
    role: &str,
    model: &str,
    c: &StageContext<'_>,
) -> String {
    let protocol = match config.models.get(model).map(|m| m.edits(model)) {
        Some(EditFormat::Whole) => "protocol-whole",
        _ => "protocol",
    };
    let (file, lang) = match task_language(c) {
        Some(Lang::Rust) => ("path/to/file.rs", "rust"),
        Some(Lang::Python) => ("path/to/file.py", "python"),
        None => ("path/to/file", ""),
    };
    let protocol = prompt(config, protocol, root)
        .replace("{{file}}", file)
        .replace("{{lang}}", lang);
    format!("{}\n\n{protocol}", prompt(config, role, root))
}

/// The language the stage writes in: that of the first file a requirement names whose
/// language is known, else the most common among the files in scope (none when no file of
/// a known language is in scope).
pub fn task_language(c: &StageContext<'_>) -> Option<Lang> {
    let named = c
        .task
        .requirements
        .iter()
        .flat_map(|r| r.files.iter())
        .find_map(|f| Lang::from_path(f));
    if named.is_some() {
        return named;
    }
    let mut count: BTreeMap<Lang, usize> = BTreeMap::new();
    for p in c.files.paths().iter().filter(|p| c.task.writable(p)) {
        if let Some(lang) = Lang::from_path(p) {
            *count.entry(lang).or_default() += 1;
        }
    }
    count
        .into_iter()
        .max_by_key(|&(lang, n)| (n, std::cmp::Reverse(lang)))
        .map(|(lang, _)| lang)
}

/// For a small model writing whole files on a server that enforces a grammar, the grammar
/// of that format over the files the stage may write (never a private one, never one
/// read-only in the run: seen, a 1.5B model wrote the failing test it was shown last back
/// in three answers in a row instead of the code beside it): an implement
/// stage, or a parallel candidate, must write at least one file, and the verifier's metadata
/// must carry its implementation summary. Held to nothing, the local models answer a
/// building request with the metadata alone (seen on parallel candidates: three answers of
/// each model, none with a file). `None` for every other model.
pub fn answer_grammar(config: &Config, model: &str, c: &StageContext<'_>) -> Option<String> {
    let m = config.models.get(model)?;
    if m.edits(model) != EditFormat::Whole || !m.has("gbnf") {
        return None;
    }
    let writable: Vec<String> = c
        .files
        .paths()
        .into_iter()
        .filter(|p| c.task.writable(p))
        .filter(|p| !c.read_only.iter().any(|g| crate::glob::matches(g, p)))
        .filter(|p| c.privacy.check(p, c.files.bytes(p).as_deref()).is_none())
        .collect();
    let opens = (c.stage == Stage::Verify).then_some("implementation_summary");
    Some(whole_file_answer(
        &writable,
        c.stage == Stage::Implement,
        opens,
    ))
}

/// The most a whole-file answer needs: every file the stage may write, twice over (a file
/// may grow), and room for the metadata and a new file. A runaway answer (one file written
/// again and again, seen on the local models) is cut there instead of at the role's cap,
/// which on a small CPU costs minutes per answer.
fn whole_answer_cap(c: &StageContext<'_>, estimator: &Estimator) -> u32 {
    let bytes: usize = c
        .files
        .paths()
        .into_iter()
        .filter(|p| c.task.writable(p))
        .filter_map(|p| c.files.bytes(&p).map(|b| b.len()))
        .sum();
    let tokens = estimator.tokens_of_bytes(bytes).saturating_mul(2) + 1024;
    u32::try_from(tokens).unwrap_or(u32::MAX)
}

/// The output cap of `model`'s answer to a request of `c`, at most `role_cap`: for a model
/// writing whole files, the files it may write twice over and room for the metadata
/// ([`whole_answer_cap`]), so a runaway answer is cut where the task ends, not at the
/// role's cap; the role's cap for a model writing edit blocks.
pub fn answer_cap(
    config: &Config,
    model: &str,
    c: &StageContext<'_>,
    estimator: &Estimator,
    role_cap: u32,
) -> u32 {
    match config.models.get(model).map(|m| m.edits(model)) {
        Some(EditFormat::Whole) => whole_answer_cap(c, estimator).min(role_cap),
        _ => role_cap,
    }
}

/// The whole request of one stage attempt by `model`: the role prompt and the answer
/// protocol of the model's edit format as the system message, [`fitted_stage_message`] as
/// the user message, the role's output cap and temperature, and for a model writing whole
/// files on a server that enforces a grammar, the grammar of that format over the files it
/// may write. The user message shrinks to what the model's window leaves after the system
/// prompt and the whole answer cap, counted with `estimator`; what it left out comes back
/// too.
///
/// A run and `git triad bench` both ask through here, so a model is measured on exactly the
/// request it gets in a run. `root` is the work tree that prompt overrides are read from.
pub fn fitted_stage_request(
    config: &Config,
    root: Option<&std::path::Path>,
    model: &str,
    c: &StageContext<'_>,
    estimator: &Estimator,
) -> (ChatRequest, LeftOut) {
    let role = c.stage.role();
    let registered = config.models.get(model);
    let system = system_message(config, root, role.as_str(), model, c);
    let role_cfg = config.roles.get(role);
    let max_tokens = role_cfg.max_output_tokens.unwrap_or(8192);
    let limit = registered.map_or(usize::MAX, |m| {
        let probe = ChatRequest::new(Some(system.clone()), String::new(), max_tokens);
        let room = Room::measure(Window::of(m), estimator, &probe);
        estimator.bytes_for(room.left())
    });
    let (user, left_out) = fitted_stage_message(c, limit);
    let max_tokens = answer_cap(config, model, c, estimator, max_tokens);
    let mut req = ChatRequest::new(Some(system), user, max_tokens);
    req.temperature = role_cfg.temperature;
    req.grammar = answer_grammar(config, model, c);
    (req, left_out)
}
