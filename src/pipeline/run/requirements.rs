//! Facts about the TaskSpec's requirements in a run's change: what the requirements name
//! (files to change, functions to define and use) that the change does not show. Every
//! building stage is held to them; the reconciliation reads them as facts.

use super::checks::{bare, names, push, Claims, FILE_ENDINGS};
use crate::code::{outline, Finding, Lang};
use crate::git::FileDiff;
use crate::task::TaskSpec;

/// A requirement of the TaskSpec that the run's change visibly leaves undone.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Unmet {
    /// The requirement's id.
    pub id: String,
    /// What is missing, as a sentence a model can act on.
    pub why: String,
    /// The function it names that no touched file defines (none: a file left as it was).
    pub undefined: Option<String>,
    /// The file it names that the change must still write: left as it was, or changed
    /// without what the requirement names.
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
/// base to the stage's tree, whose files `read` gives) does not show:
/// - a file in scope that a requirement names and the run leaves as it was;
/// - a function a requirement names as code (`char_count(text)`, `` `char_count` ``) that
///   no file the run changed, nor any file the requirements name, defines;
/// - a function of the task that a requirement names beside a file of its own (R2 "tests/
///   test_textstats.py has a test for char_count"), where that file neither defines nor uses
///   it: an import line is not a use, so a test file that only imports the function has no
///   test for it.
///
/// A requirement that asks to leave a file alone names no file to change.
pub(super) fn unmet_requirements(
    spec: &TaskSpec,
    run: &[FileDiff],
    read: &dyn Fn(&str) -> Option<String>,
) -> Vec<Unmet> {
    let changed: Vec<&str> = run.iter().map(|f| f.path.as_str()).collect();
    let named_files: Vec<String> = spec
        .requirements
        .iter()
        .flat_map(|r| Claims::of(&r.text).files)
        .collect();
    // A requirement naming one of the task's functions in plain words names it too.
    let functions = functions(spec);
    let defines = |path: &str, word: &str| {
        read(path).is_some_and(|text| match Lang::from_path(path) {
            Some(lang) => outline(lang, &text).iter().any(|s| s.name == word),
            None => text.contains(word),
        })
    };
    let mut unmet = Vec::new();
    for r in &spec.requirements {
        let claims = Claims::of(&r.text);
        let hands_off = hands_off(&r.text);
        let files: Vec<&String> = claims
            .files
            .iter()
            .filter(|f| !hands_off && spec.in_scope(f))
            .collect();
        for file in &files {
            if !changed.iter().any(|c| names(file, c)) {
                unmet.push(Unmet {
                    id: r.id.clone(),
                    why: format!("{} names {file}, which the change leaves as it was", r.id),
                    undefined: None,
                    untouched: Some(file.to_string()),
                });
            }
        }
        for word in &claims.symbols {
            let found = changed
                .iter()
                .map(|c| c.to_string())
                .chain(named_files.iter().cloned())
                .any(|path| defines(&path, word));
            if !found {
                let home = home(spec, &r.text, &files, word, read);
                let why = match &home {
                    Some(file) => format!(
                        "{} names {word}, which no file the change touches defines: define it in {file}",
                        r.id
                    ),
                    None => format!(
                        "{} names {word}, which no file the change touches defines",
                        r.id
                    ),
                };
                unmet.push(Unmet {
                    id: r.id.clone(),
                    why,
                    undefined: Some(word.clone()),
                    untouched: home,
                });
            }
        }
        let words = identifiers(&r.text);
        for word in functions.iter().filter(|f| words.contains(&f.as_str())) {
            for file in &files {
                let Some(path) = changed.iter().find(|c| names(file, c)) else {
                    continue; // already unmet: the file is left as it was
                };
                let used = read(path).is_some_and(|t| uses(&t, word));
                if !used && !defines(path, word) {
                    unmet.push(Unmet {
                        id: r.id.clone(),
                        why: format!(
                            "{} names {word} in {file}, which never uses it (an import is not a use)",
                            r.id
                        ),
                        undefined: None,
                        untouched: Some(file.to_string()),
                    });
                }
            }
        }
    }
    unmet
}

/// The file in scope where the function `word`, which requirement `text` names, belongs:
/// - a file the requirement itself names (`files`, in scope already);
/// - else the module of its dotted name (`textstats.char_count(text)`: `textstats.py`, or
///   `textstats/__init__.py`), when the tree has that file;
/// - else the one file in scope that a sentence of the task's description names beside
///   the function ("Add a function char_count(text) to textstats.py").
///
/// None when nothing says where: the stage is then told only what is missing.
fn home(
    spec: &TaskSpec,
    text: &str,
    files: &[&String],
    word: &str,
    read: &dyn Fn(&str) -> Option<String>,
) -> Option<String> {
    if let Some(file) = files.first() {
        return Some(file.to_string());
    }
    let exists = |p: &String| spec.writable(p) && read(p).is_some();
    for raw in text.split_whitespace() {
        let call = bare(raw).split('(').next().unwrap_or("");
        let Some((module, head)) = call.rsplit_once('.') else {
            continue;
        };
        if head != word || module.is_empty() {
            continue;
        }
        let stem = module.replace('.', "/");
        let found = FILE_ENDINGS
            .iter()
            .map(|e| format!("{stem}.{e}"))
            .chain([format!("{stem}/__init__.py")])
            .find(exists);
        if found.is_some() {
            return found;
        }
    }
    let mut named: Vec<String> = Vec::new();
    for sentence in sentences(&spec.description) {
        if identifiers(&sentence).contains(&word) {
            for f in Claims::of(&sentence).files {
                if spec.in_scope(&f) && !named.contains(&f) {
                    named.push(f);
                }
            }
        }
    }
    match named.as_slice() {
        [one] => Some(one.clone()),
        _ => None,
    }
}

/// The sentences of a text: a word ending in `.`, `!` or `?` ends one (a file name such as
/// `textstats.py` does not).
fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current: Vec<&str> = Vec::new();
    for w in text.split_whitespace() {
        current.push(w);
        if w.ends_with(['.', '!', '?']) {
            out.push(current.join(" "));
            current.clear();
        }
    }
    if !current.is_empty() {
        out.push(current.join(" "));
    }
    out
}

/// The functions the task's requirements name as code, each once.
pub(super) fn functions(spec: &TaskSpec) -> Vec<String> {
    let mut functions = Vec::new();
    for r in &spec.requirements {
        for s in Claims::of(&r.text).symbols {
            push(&mut functions, &s);
        }
    }
    functions
}

/// The identifiers of a text, in order.
fn identifiers(text: &str) -> Vec<&str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect()
}

/// Whether `text` uses the identifier `word` on a line that is not an import (a Python
/// import in parentheses runs to its closing one).
fn uses(text: &str, word: &str) -> bool {
    const IMPORTS: &[&str] = &[
        "import ", "from ", "use ", "pub use ", "#include", "require",
    ];
    let mut in_import = false;
    for line in text.lines() {
        let l = line.trim_start();
        if in_import {
            in_import = !l.contains(')');
            continue;
        }
        if IMPORTS.iter().any(|i| l.starts_with(i)) {
            in_import = l.contains('(') && !l.contains(')');
            continue;
        }
        if identifiers(l).contains(&word) {
            return true;
        }
    }
    false
}

impl Unmet {
    /// As a tool finding: recorded, and a flag for the next stage.
    pub fn finding(&self) -> Finding {
        Finding {
            kind: crate::arbiter::review::UNMET_REQUIREMENT.into(),
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
    let mut left: Vec<&str> = Vec::new();
    for file in unmet.iter().filter_map(|u| u.untouched.as_deref()) {
        if !left.contains(&file) {
            left.push(file);
        }
    }
    let only = kept && !left.is_empty() && unmet.iter().all(|u| u.untouched.is_some());
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
    // An acceptance gap belongs to no requirement: its sentence says what to do.
    let todo = if texts.is_empty() {
        String::new()
    } else {
        format!("{todo}:\n{}\n\n", texts.join("\n"))
    };
    format!(
        "## YOUR CHANGE LEAVES THE TASK UNDONE\n\n{applied}:\n{}\n\n{todo}{how}, then the ```json metadata block.\n",
        unmet
            .iter()
            .map(|u| format!("- {}", u.why))
            .collect::<Vec<_>>()
            .join("\n"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run diff that modifies `paths`.
    fn modified(paths: &[&str]) -> Vec<FileDiff> {
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
        let diff = modified;
        let nothing = |_: &str| None;
        let unmet = unmet_requirements(&spec, &diff(&["textstats.py"]), &nothing);
        let ids: Vec<&str> = unmet.iter().map(|u| u.id.as_str()).collect();
        assert_eq!(ids, ["R1", "R2"], "{unmet:?}");
        assert!(unmet[0].why.contains("char_count"), "{unmet:?}");
        assert!(
            unmet[1].why.contains("tests/test_textstats.py"),
            "{unmet:?}"
        );
        let both = diff(&["textstats.py", "tests/test_textstats.py"]);
        let tested = |path: &str| {
            match path {
            "textstats.py" => Some("def char_count(text):\n    return 0\n".to_string()),
            "tests/test_textstats.py" => Some(
                "from textstats import char_count\n\ndef test_c():\n    assert char_count('') == 0\n"
                    .to_string(),
            ),
            _ => None,
        }
        };
        assert_eq!(unmet_requirements(&spec, &both, &tested), []);
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

    /// A spec of one requirement `r1` and the description `description`.
    fn one_requirement(r1: &str, description: &str) -> TaskSpec {
        TaskSpec::parse(
            &format!(
                "title = \"t\"\ndescription = \"{description}\"\n\
                 [[requirements]]\nid = \"R1\"\ntext = \"{r1}\"\n"
            ),
            "t.toml",
            "t",
        )
        .unwrap()
    }

    #[test]
    fn an_undefined_function_is_asked_for_in_the_file_it_belongs_in() {
        let tests_only = modified(&["tests/test_textstats.py"]);
        let tree = |path: &str| match path {
            "textstats.py" => Some("def word_count(text):\n    return 0\n".to_string()),
            "tests/test_textstats.py" => Some("import unittest\n".to_string()),
            _ => None,
        };
        // The module of its dotted name, when the tree has that file.
        let spec = one_requirement("textstats.char_count(text) counts characters", "d");
        let unmet = unmet_requirements(&spec, &tests_only, &tree);
        assert_eq!(unmet.len(), 1, "{unmet:?}");
        assert_eq!(unmet[0].undefined.as_deref(), Some("char_count"));
        assert_eq!(unmet[0].untouched.as_deref(), Some("textstats.py"));
        assert!(
            unmet[0].why.ends_with("define it in textstats.py"),
            "{unmet:?}"
        );
        let kept = unmet_feedback(&unmet, &spec, true, true);
        assert!(
            kept.contains("Write textstats.py in full (only that"),
            "{kept}"
        );
        // A module the tree does not have is no home.
        let spec = one_requirement("stats.char_count(text) counts characters", "d");
        assert_eq!(
            unmet_requirements(&spec, &tests_only, &tree)[0].untouched,
            None
        );
        // Else the one file a sentence of the description names beside it, new or not.
        let spec = one_requirement(
            "char_count(text) counts characters",
            "Add char_count(text) to lib/stats.py. Test it in tests/test_stats.py.",
        );
        let unmet = unmet_requirements(&spec, &tests_only, &tree);
        assert_eq!(unmet[0].untouched.as_deref(), Some("lib/stats.py"));
        // Two files beside it say nowhere in particular.
        let spec = one_requirement(
            "char_count(text) counts characters",
            "Add char_count(text) to a.py or b.py.",
        );
        let unmet = unmet_requirements(&spec, &tests_only, &tree);
        assert_eq!(unmet[0].untouched, None, "{unmet:?}");
        assert!(!unmet[0].why.contains("define it in"), "{unmet:?}");
    }

    #[test]
    fn a_test_file_that_only_imports_the_function_has_no_test_for_it() {
        let spec = TaskSpec::parse(
            "title = \"t\"\ndescription = \"d\"\n\
             [[requirements]]\nid = \"R1\"\ntext = \"textstats.char_count(text) counts characters\"\n\
             [[requirements]]\nid = \"R2\"\ntext = \"tests/test_textstats.py has a test for char_count\"\n",
            "t.toml",
            "t",
        )
        .unwrap();
        let run = modified(&["textstats.py", "tests/test_textstats.py"]);
        let with_test = |test: &'static str| {
            move |path: &str| match path {
                "textstats.py" => Some("def char_count(text):\n    return 0\n".to_string()),
                "tests/test_textstats.py" => Some(test.to_string()),
                _ => None,
            }
        };
        for imports_only in [
            "from textstats import char_count, word_count\n\ndef test_w():\n    assert word_count('') == 0\n",
            "from textstats import (\n    char_count,\n    word_count,\n)\n\ndef test_w():\n    assert word_count('') == 0\n",
        ] {
            let unmet = unmet_requirements(&spec, &run, &with_test(imports_only));
            assert_eq!(unmet.len(), 1, "{unmet:?}");
            assert_eq!(unmet[0].id, "R2");
            assert_eq!(unmet[0].untouched.as_deref(), Some("tests/test_textstats.py"));
            assert!(unmet[0].why.contains("never uses it"), "{unmet:?}");
            // Only that file is left to write: the kept change is asked for it alone.
            let kept = unmet_feedback(&unmet, &spec, true, true);
            assert!(kept.contains("Write tests/test_textstats.py in full"), "{kept}");
        }
        let called = "from textstats import char_count\n\nclass T:\n    def test_c(self):\n        self.assertEqual(char_count('a b'), 2)\n";
        assert_eq!(unmet_requirements(&spec, &run, &with_test(called)), []);
    }
}
