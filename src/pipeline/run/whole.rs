//! Whole-file answers (the format small models write) read by facts: what a file would lose
//! (definitions, imports still used), what is read as a partial answer instead, and the
//! functions a change rewrote that the task never names.

use std::collections::BTreeMap;

use crate::code::{outline, Lang};
use crate::edit::imports::{complete_from_imports, keep_used_imports};
use crate::edit::merge::merge_partial;
use crate::task::TaskSpec;

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
/// [`keep_used_imports`]), and a name used but never imported joins the import of the module
/// that defines it (see [`complete_from_imports`]). Returns what was read so, for the record.
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
    // A module's text as the answer leaves it: written by the answer, else as it was.
    let module = |m: &str| {
        let path = format!("{}.py", m.replace('.', "/"));
        after.get(&path).cloned().or_else(|| before(&path))
    };
    let completed: Vec<(String, String, Vec<String>)> = after
        .iter()
        .filter_map(|(path, text)| {
            let (text, names) = complete_from_imports(Lang::from_path(path)?, text, &module)?;
            Some((path.clone(), text, names))
        })
        .collect();
    for (path, text, names) in completed {
        read.push(format!(
            "{path} imports {} from the module it already imports from, as it uses it",
            names.join(", ")
        ));
        after.insert(path, text);
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
