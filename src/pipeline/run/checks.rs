//! Facts about a stage's own answer, checked on every stage, reviewed or not: what its edits
//! changed, whether it changed anything where it must, and whether its summary claims files
//! or functions its diff does not show. A model's word is not evidence.

use std::collections::BTreeMap;

use crate::code::{outline, Finding, Lang};
use crate::edit::imports::keep_used_imports;
use crate::edit::merge::merge_partial;
use crate::git::{FileDiff, FileStat};
use crate::pipeline::stage::Stage;
use crate::task::TaskSpec;

/// File endings a summary's word must have to count as naming a file.
const FILE_ENDINGS: &[&str] = &[
    "py", "rs", "js", "ts", "tsx", "jsx", "go", "java", "kt", "c", "h", "cc", "cpp", "hpp", "rb",
    "php", "cs", "swift", "toml", "json", "yaml", "yml", "md", "txt", "cfg", "ini", "sh", "html",
    "css", "sql",
];

/// What a stage summary says it touched.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Claims {
    /// Words that name files (`textstats.py`, `src/lib.rs`).
    pub files: Vec<String>,
    /// Functions it names as code (`char_count(text)`, `` `char_count` ``).
    pub symbols: Vec<String>,
}

impl Claims {
    /// Reads the claims of a summary.
    pub fn of(summary: &str) -> Claims {
        let mut c = Claims::default();
        for raw in summary.split_whitespace() {
            let backticked = raw.contains('`');
            let word = raw.trim_matches(|ch: char| "`'\".,;:!?[]{}".contains(ch));
            // `textstats.char_count(text)` names `char_count`.
            let call = word.split('(').next().unwrap_or("");
            let head = call.rsplit('.').next().unwrap_or(call);
            let is_ident = |t: &str| {
                t.len() >= 2
                    && t.chars().all(|ch| ch.is_alphanumeric() || ch == '_')
                    && !t.chars().next().is_some_and(|ch| ch.is_ascii_digit())
            };
            if let Some((stem, ending)) = word.rsplit_once('.') {
                if !stem.is_empty() && FILE_ENDINGS.contains(&ending) && !word.contains('(') {
                    push(&mut c.files, word);
                    continue;
                }
            }
            if (word.contains('(') || backticked) && is_ident(head) {
                push(&mut c.symbols, head);
            }
        }
        c
    }
}

fn push(list: &mut Vec<String>, word: &str) {
    if !list.iter().any(|w| w == word) {
        list.push(word.to_string());
    }
}

/// A requirement of the TaskSpec that the run's change visibly leaves undone.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Unmet {
    /// The requirement's id.
    pub id: String,
    /// What is missing, as a sentence a model can act on.
    pub why: String,
    /// The function it names that no touched file defines (none: a file left as it was).
    pub undefined: Option<String>,
    /// The file it names that the change leaves as it was.
    pub untouched: Option<String>,
}

/// Words that make a requirement about leaving a file alone rather than changing it.
const HANDS_OFF: &[&str] = &["not", "never", "unchanged", "untouched", "keep", "preserve"];

/// Whether a requirement asks to leave its files alone.
fn hands_off(text: &str) -> bool {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .any(|w| HANDS_OFF.contains(&w))
}

/// What the TaskSpec's requirements name that the run's change (`run`, the diff from the
/// base to the stage's tree) does not show: a file in scope that a requirement names and
/// the run leaves as it was, or a function a requirement names as code
/// (`char_count(text)`, `` `char_count` ``) that no file the run changed, nor any file the
/// requirements name, defines (`contains(path, word)` reads the stage's tree). A
/// requirement that asks to leave a file alone names no file to change.
pub(super) fn unmet_requirements(
    spec: &TaskSpec,
    run: &[FileDiff],
    contains: &dyn Fn(&str, &str) -> bool,
) -> Vec<Unmet> {
    let changed: Vec<&str> = run.iter().map(|f| f.path.as_str()).collect();
    let mut named_files: Vec<String> = Vec::new();
    for r in &spec.requirements {
        named_files.extend(Claims::of(&r.text).files);
    }
    let mut unmet = Vec::new();
    for r in &spec.requirements {
        let claims = Claims::of(&r.text);
        let hands_off = hands_off(&r.text);
        for file in claims.files.iter().filter(|f| spec.in_scope(f)) {
            if !hands_off && !changed.iter().any(|c| names(file, c)) {
                unmet.push(Unmet {
                    id: r.id.clone(),
                    why: format!("{} names {file}, which the change leaves as it was", r.id),
                    undefined: None,
                    untouched: Some(file.clone()),
                });
            }
        }
        for word in &claims.symbols {
            let found = changed
                .iter()
                .map(|c| c.to_string())
                .chain(named_files.iter().cloned())
                .any(|path| contains(&path, word));
            if !found {
                unmet.push(Unmet {
                    id: r.id.clone(),
                    why: format!(
                        "{} names {word}, which no file the change touches defines",
                        r.id
                    ),
                    undefined: Some(word.clone()),
                    untouched: None,
                });
            }
        }
    }
    unmet
}

/// The finding kind of a requirement a building stage's accepted change still leaves undone.
pub(super) const UNMET_REQUIREMENT: &str = "unmet_requirement";

impl Unmet {
    /// As a tool finding: recorded, and a flag for the next stage.
    pub fn finding(&self) -> Finding {
        Finding {
            kind: UNMET_REQUIREMENT.into(),
            category: "completeness".into(),
            severity: "warning".into(),
            path: String::new(),
            line: 0,
            end_line: 0,
            symbol: None,
            import: None,
            reason: format!("the requirements are not all met: {}", self.why),
        }
    }
}

/// Whether a change met at least one requirement the facts can check (one that names a
/// file in scope to change or a function as code), given what it left `unmet`.
pub(super) fn advanced(spec: &TaskSpec, unmet: &[Unmet]) -> bool {
    checkable(spec).any(|r| !unmet.iter().any(|u| u.id == r.id))
}

/// The requirements the facts can check: those naming a function as code, or a file in
/// scope to change. A task with none of them needs no run diff.
pub(super) fn checkable(spec: &TaskSpec) -> impl Iterator<Item = &crate::task::Requirement> {
    spec.requirements.iter().filter(|r| {
        let c = Claims::of(&r.text);
        !c.symbols.is_empty() || (!hands_off(&r.text) && c.files.iter().any(|f| spec.in_scope(f)))
    })
}

/// The retry feedback for a building stage whose change leaves requirements undone;
/// `kept`: the change stays, and the next attempt is shown it and builds on it.
pub(super) fn unmet_feedback(unmet: &[Unmet], spec: &TaskSpec, whole: bool, kept: bool) -> String {
    // With the change kept and only named files left to change, the answer is those files.
    let left: Vec<&str> = unmet
        .iter()
        .filter_map(|u| u.untouched.as_deref())
        .collect();
    let only = kept && !left.is_empty() && left.len() == unmet.len();
    let how = match (whole, only) {
        (true, true) => format!(
            "Write {} in full (only that; the other files keep your change): its path on a line by itself, then a fenced block with its complete new content, keeping every line that must stay",
            left.join(" and ")
        ),
        (true, false) => "Write each file you change in full: its path on a line by itself, then a fenced block with its complete new content, keeping every line that must stay".to_string(),
        (false, true) => format!("Write SEARCH/REPLACE edit blocks for {}", left.join(" and ")),
        (false, false) => "Write SEARCH/REPLACE edit blocks for every file the task needs".to_string(),
    };
    let texts: Vec<String> = spec
        .requirements
        .iter()
        .filter(|r| unmet.iter().any(|u| u.id == r.id))
        .map(|r| format!("- {}: {}", r.id, r.text))
        .collect();
    let applied = if kept {
        "Your answer was applied and is kept: the files below include it. The facts show what it leaves undone"
    } else {
        "Your answer was applied, but the facts show requirements it does not meet"
    };
    let todo = if kept {
        "Do that now"
    } else {
        "The requirements"
    };
    format!(
        "## YOUR CHANGE LEAVES THE TASK UNDONE\n\n{applied}:\n{}\n\n{todo}:\n{}\n\n{how}, then the ```json metadata block.\n",
        unmet
            .iter()
            .map(|u| format!("- {}", u.why))
            .collect::<Vec<_>>()
            .join("\n"),
        texts.join("\n")
    )
}

/// What a whole-file answer would delete without being asked: per file it rewrote, the
/// definitions the file had (`before`) that its new text (`after`) no longer defines and
/// that the TaskSpec's words (`spec`: its title, description, requirements and acceptance)
/// never name. Small models asked for whole files
/// often write only what they added, or a placeholder.
fn dropped_definitions(
    before: &dyn Fn(&str) -> Option<String>,
    after: &BTreeMap<String, String>,
    spec: &str,
) -> Vec<(String, Vec<String>)> {
    let named: Vec<&str> = spec
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    let mut dropped = Vec::new();
    for (path, new) in after {
        let (Some(lang), Some(old)) = (Lang::from_path(path), before(path)) else {
            continue;
        };
        let kept: Vec<String> = outline(lang, new).into_iter().map(|s| s.name).collect();
        let mut gone: Vec<String> = Vec::new();
        for sym in outline(lang, &old) {
            let name = sym.name.as_str();
            if !kept.contains(&sym.name) && !named.contains(&name) && !gone.contains(&sym.name) {
                gone.push(sym.name);
            }
        }
        if !gone.is_empty() {
            dropped.push((path.clone(), gone));
        }
    }
    dropped
}

/// Every word of the TaskSpec a model reads: its title, description, requirements and
/// acceptance criteria.
fn spec_words(spec: &TaskSpec) -> String {
    [&spec.title, &spec.description]
        .into_iter()
        .chain(spec.requirements.iter().map(|r| &r.text))
        .chain(&spec.acceptance)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The functions and methods a change rewrote that the TaskSpec never names: defined in
/// both `before` and `after` (one file's texts), with different text. A small model asked for
/// a new function often turns the nearest existing one into it instead.
pub(super) fn rewritten_unnamed(
    path: &str,
    before: &str,
    after: &str,
    spec: &TaskSpec,
) -> Vec<String> {
    let Some(lang) = Lang::from_path(path) else {
        return Vec::new();
    };
    let words = spec_words(spec);
    let named: Vec<&str> = words
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .collect();
    let body = |text: &str, s: &crate::code::Symbol| -> String {
        text.lines()
            .skip(s.start_line.saturating_sub(1) as usize)
            .take((s.end_line + 1).saturating_sub(s.start_line) as usize)
            .collect::<Vec<_>>()
            .join("\n")
    };
    let callable =
        |s: &crate::code::Symbol| ["function", "method", "fn"].contains(&s.kind.as_str());
    let old = outline(lang, before);
    let mut out = Vec::new();
    for new in outline(lang, after).iter().filter(|s| callable(s)) {
        let Some(was) = old
            .iter()
            .find(|o| o.name == new.name && o.kind == new.kind)
        else {
            continue;
        };
        let changed = body(before, was) != body(after, new);
        if changed && !named.contains(&new.name.as_str()) && !out.contains(&new.name) {
            out.push(new.name.clone());
        }
    }
    out
}

/// Settles a whole-file answer's files (`after`, by path): a file that would lose
/// definitions the TaskSpec never names is read by definitions instead (see
/// [`merge_partial`]) where that gives a file that parses; what would still lose
/// definitions is the error, for the retry. An import dropped but still used is kept (see
/// [`keep_used_imports`]). Returns what was read so, for the record.
pub(super) fn settle_whole_files(
    before: &dyn Fn(&str) -> Option<String>,
    after: &mut BTreeMap<String, String>,
    spec: &TaskSpec,
) -> Result<Vec<String>, Vec<(String, Vec<String>)>> {
    let words = spec_words(spec);
    let mut read = Vec::new();
    let mut dropped = dropped_definitions(before, after, &words);
    dropped.retain(|(path, _)| {
        let (Some(lang), Some(old)) = (Lang::from_path(path), before(path)) else {
            return true;
        };
        match merge_partial(lang, &old, &after[path]) {
            Some(m) => {
                read.push(format!(
                    "{path} read as a partial answer, keeping {}",
                    if m.kept.is_empty() {
                        "the members it left out".to_string()
                    } else {
                        m.kept.join(", ")
                    }
                ));
                after.insert(path.clone(), m.text);
                false
            }
            None => true,
        }
    });
    if !dropped.is_empty() {
        return Err(dropped);
    }
    for (path, text) in after.iter_mut() {
        let (Some(lang), Some(old)) = (Lang::from_path(path), before(path)) else {
            continue;
        };
        if let Some((kept, names)) = keep_used_imports(lang, &old, text) {
            read.push(format!(
                "{path} kept the import of {}, which it still uses",
                names.join(", ")
            ));
            *text = kept;
        }
    }
    Ok(read)
}

/// The retry feedback for a whole-file answer that would delete code.
pub(super) fn dropped_feedback(dropped: &[(String, Vec<String>)]) -> String {
    let lines: Vec<String> = dropped
        .iter()
        .map(|(path, names)| format!("- {path}: {}", names.join(", ")))
        .collect();
    format!(
        "## YOUR ANSWER WOULD DELETE CODE\n\nA whole-file answer replaces each file with exactly what you write. Yours would delete these definitions, which the task does not ask to remove:\n{}\n\nWrite each file you change in full: every line you keep, then the lines you add, exactly as the file must be after your change. Then the ```json metadata block.\n",
        lines.join("\n")
    )
}

/// Whether `claim` names `path` (`textstats.py` names `src/textstats.py`).
fn names(claim: &str, path: &str) -> bool {
    path == claim || path.ends_with(&format!("/{claim}"))
}

/// The facts of one stage's edits.
pub(super) struct StageFacts {
    /// What changed, file by file.
    pub changed: Vec<FileStat>,
    /// Files the summary names that the diff does not touch.
    pub unsupported_files: Vec<String>,
    /// Functions the summary names that no added line mentions.
    pub unsupported_symbols: Vec<String>,
}

impl StageFacts {
    /// Compares the stage's `diff` with what its `summary` says.
    pub fn of(diff: &[FileDiff], summary: &str) -> StageFacts {
        let claims = Claims::of(summary);
        let changed = FileStat::of(diff);
        let added: String = diff
            .iter()
            .flat_map(|f| &f.hunks)
            .flat_map(|h| &h.lines)
            .filter(|l| l.origin == '+')
            .map(|l| l.text.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        StageFacts {
            unsupported_files: claims
                .files
                .iter()
                .filter(|c| !changed.iter().any(|f| names(c, &f.path)))
                .cloned()
                .collect(),
            unsupported_symbols: claims
                .symbols
                .iter()
                .filter(|s| !added.contains(s.as_str()))
                .cloned()
                .collect(),
            changed,
        }
    }

    /// Why the answer cannot be used, when it changes nothing where the stage must: the
    /// implement stage must change the code. (Another stage that changes nothing may say so;
    /// if its summary claims changes, that claim is a finding, see [`Self::claim_findings`].)
    pub fn no_change(&self, stage: Stage, spec: &TaskSpec, whole: bool) -> Option<String> {
        if !self.changed.is_empty() || stage != Stage::Implement {
            return None;
        }
        let how = if whole {
            "Write each file you change in full: its path on a line by itself, then a fenced block with its complete new content"
        } else {
            "Write SEARCH/REPLACE edit blocks for the files in scope"
        };
        let wanted: Vec<String> = spec
            .requirements
            .iter()
            .map(|r| format!("- {}: {}", r.id, r.text))
            .collect();
        Some(format!(
            "## YOUR ANSWER CHANGED NOTHING\n\nYour answer contains no edit that changes a file; a summary or an outcome is not a change. The implement stage must change the code: the task requires\n{}\n{how}, then the ```json metadata block.\n",
            if wanted.is_empty() {
                format!("- {}", spec.title)
            } else {
                wanted.join("\n")
            }
        ))
    }

    /// Tool findings for a summary that names files the diff does not touch, or, when the
    /// stage changed nothing, functions it says it wrote: claims without evidence, recorded
    /// beside what the stage really did.
    pub fn claim_findings(&self, stage: Stage) -> Vec<Finding> {
        let symbols = if self.changed.is_empty() {
            &self.unsupported_symbols[..]
        } else {
            &[]
        };
        self.unsupported_files
            .iter()
            .chain(symbols)
            .map(|f| Finding {
                kind: crate::arbiter::review::UNSUPPORTED_CLAIM.into(),
                category: "hallucination".into(),
                severity: "warning".into(),
                path: f.clone(),
                line: 0,
                end_line: 0,
                symbol: None,
                import: None,
                reason: format!(
                    "the {stage} stage's summary names {f}, which its diff does not touch (a claim without evidence)"
                ),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_are_files_and_functions_named_as_code() {
        let c = Claims::of(
            "Added a function char_count(text) to textstats.py and a test in tests/test_textstats.py; see `word_count`. Version 1.2, e.g. fine.",
        );
        assert_eq!(c.files, ["textstats.py", "tests/test_textstats.py"]);
        assert_eq!(c.symbols, ["char_count", "word_count"]);
        assert_eq!(Claims::of("No refactoring was needed."), Claims::default());
    }

    #[test]
    fn only_the_implement_stage_must_change_code_other_claims_are_findings() {
        let spec = TaskSpec::parse("title = \"t\"\ndescription = \"d\"\n", "t.toml", "t").unwrap();
        let facts = StageFacts::of(&[], "planned char_count(text) in textstats.py");
        assert!(facts.no_change(Stage::Implement, &spec, true).is_some());
        assert!(facts.no_change(Stage::Architect, &spec, true).is_none());
        assert!(facts.no_change(Stage::Refactor, &spec, false).is_none());
        let findings = facts.claim_findings(Stage::Refactor);
        assert_eq!(findings.len(), 2, "{findings:?}");
        assert!(findings
            .iter()
            .all(|f| f.kind == crate::arbiter::review::UNSUPPORTED_CLAIM));
    }

    #[test]
    fn requirements_name_files_to_change_and_functions_to_find() {
        let spec = TaskSpec::parse(
            "title = \"t\"\ndescription = \"d\"\n\
             [[requirements]]\nid = \"R1\"\ntext = \"textstats.char_count(text) counts characters\"\n\
             [[requirements]]\nid = \"R2\"\ntext = \"tests/test_textstats.py has a test for char_count\"\n\
             [[requirements]]\nid = \"R3\"\ntext = \"README.md is not changed\"\n",
            "t.toml",
            "t",
        )
        .unwrap();
        let diff = |paths: &[&str]| -> Vec<FileDiff> {
            paths
                .iter()
                .map(|p| FileDiff {
                    path: p.to_string(),
                    status: "modified".into(),
                    binary: false,
                    withheld: false,
                    hunks: Vec::new(),
                })
                .collect()
        };
        let nowhere = |_: &str, _: &str| false;
        let unmet = unmet_requirements(&spec, &diff(&["textstats.py"]), &nowhere);
        let ids: Vec<&str> = unmet.iter().map(|u| u.id.as_str()).collect();
        assert_eq!(ids, ["R1", "R2"], "{unmet:?}");
        assert!(unmet[0].why.contains("char_count"), "{unmet:?}");
        assert!(
            unmet[1].why.contains("tests/test_textstats.py"),
            "{unmet:?}"
        );
        let in_textstats = |path: &str, word: &str| path == "textstats.py" && word == "char_count";
        let both = diff(&["textstats.py", "tests/test_textstats.py"]);
        assert_eq!(unmet_requirements(&spec, &both, &in_textstats), []);
        assert!(advanced(&spec, &unmet[1..]), "R1 met, R2 not");
        assert!(!advanced(&spec, &unmet));
        let feedback = unmet_feedback(&unmet, &spec, true, false);
        assert!(
            feedback.contains("R2: tests/test_textstats.py has a test"),
            "{feedback}"
        );
        assert!(!feedback.contains("R3"), "{feedback}");
        assert!(feedback.contains("The requirements:"), "{feedback}");
        let kept = unmet_feedback(&unmet[1..], &spec, true, true);
        assert!(
            kept.contains("is kept: the files below include it"),
            "{kept}"
        );
        assert!(
            kept.contains("Do that now:\n- R2: tests/test_textstats.py has a test"),
            "{kept}"
        );
    }

    #[test]
    fn a_rewritten_function_the_task_never_names_is_found() {
        let spec = TaskSpec::parse(
            "title = \"Add char_count\"\n[[requirements]]\nid = \"R1\"\ntext = \"char_count(text) counts; line_count stays\"\n",
            ".triad/tasks/t.toml",
            "t",
        )
        .unwrap();
        let before =
            "def word_count(t):\n    return len(t.split())\n\n\ndef line_count(t):\n    return 1\n";
        let after = "def word_count(t):\n    return len(t)\n\n\ndef line_count(t):\n    return 2\n\n\ndef new(t):\n    return 0\n";
        // line_count is named by the task; `new` did not exist before.
        assert_eq!(
            rewritten_unnamed("textstats.py", before, after, &spec),
            ["word_count"]
        );
        assert!(rewritten_unnamed("textstats.py", before, before, &spec).is_empty());
        assert!(rewritten_unnamed("notes.txt", before, after, &spec).is_empty());
    }

    #[test]
    fn a_whole_file_that_loses_definitions_is_caught_unless_the_task_names_them() {
        let old = "def word_count(t):\n    return 1\n\n\ndef line_count(t):\n    return 2\n";
        let before = |p: &str| (p == "textstats.py").then(|| old.to_string());
        let mut after = BTreeMap::new();
        after.insert(
            "textstats.py".to_string(),
            "def char_count(t):\n    return 0\n\n\ndef line_count(t):\n    return 2\n".to_string(),
        );
        after.insert("new.py".to_string(), "x = 1\n".to_string());
        let dropped = dropped_definitions(&before, &after, "add char_count");
        assert_eq!(
            dropped,
            [("textstats.py".to_string(), vec!["word_count".to_string()])]
        );
        assert!(dropped_feedback(&dropped).contains("- textstats.py: word_count"));
        assert_eq!(
            dropped_definitions(&before, &after, "replace word_count by char_count"),
            []
        );
        after.insert("textstats.py".to_string(), "obj['path']\n".to_string());
        let placeholder = dropped_definitions(&before, &after, "");
        assert_eq!(placeholder[0].1, ["word_count", "line_count"]);
    }

    #[test]
    fn a_claimed_file_matches_by_its_path_or_its_tail() {
        assert!(names("textstats.py", "src/textstats.py"));
        assert!(names("src/textstats.py", "src/textstats.py"));
        assert!(!names("stats.py", "src/textstats.py"));
    }
}
