//! Facts about the TaskSpec's requirements in a run's change: what the requirements name
//! (files to change, functions to define and use) that the change does not show. Every
//! building stage is held to them; the reconciliation reads them as facts.

use super::checks::{names, push};
use crate::code::{outline, test_path, Finding, Lang};
use crate::git::FileDiff;
use crate::task::TaskSpec;

/// The id an acceptance gap is recorded under: the task's examples missing from its tests
/// belong to no one requirement.
pub(super) const ACCEPTANCE: &str = "acceptance";

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

impl Unmet {
    /// Whether what it misses is a test (a test file the requirement names, or the task's
    /// examples no test checks): the refactor stage's work (seed 001 §3: refactoring is
    /// "code quality, optimization, testing, edge cases", its output "optimized code +
    /// tests"), so the implement stage is not held to it when a refactor stage follows.
    pub fn about_tests(&self) -> bool {
        self.id == ACCEPTANCE
            || (self.undefined.is_none()
                && self
                    .untouched
                    .as_deref()
                    .is_some_and(crate::code::test_path))
    }
}

/// What the TaskSpec's requirements state as facts (their `files` and `functions`) that the
/// run's change (`run`, the diff from the base to the stage's tree, whose files `read`
/// gives) does not show:
/// - a file in scope a requirement is delivered in, which the run leaves as it was;
/// - a function a requirement is about that no file the run changed, nor any file a
///   requirement names, defines;
/// - a function of a requirement that names files too, where such a file neither defines
///   nor uses it: an import line is not a use, so a test file that only imports the
///   function has no test for it.
///
/// Only the typed fields are read, never the requirement's sentence: words such as "keep
/// tests/x.py as it is" name a file without asking for a change, and no rule about English
/// holds for every repository.
pub(super) fn unmet_requirements(
    spec: &TaskSpec,
    run: &[FileDiff],
    read: &dyn Fn(&str) -> Option<String>,
) -> Vec<Unmet> {
    let changed: Vec<&str> = run.iter().map(|f| f.path.as_str()).collect();
    let named_files: Vec<&String> = spec.requirements.iter().flat_map(|r| &r.files).collect();
    let defines = |path: &str, word: &str| {
        read(path).is_some_and(|text| match Lang::from_path(path) {
            Some(lang) => outline(lang, &text).iter().any(|s| s.name == word),
            None => text.contains(word),
        })
    };
    let mut unmet = Vec::new();
    for r in &spec.requirements {
        let files: Vec<&String> = r.files.iter().filter(|f| spec.in_scope(f)).collect();
        for file in &files {
            if !changed.iter().any(|c| names(file, c)) {
                unmet.push(Unmet {
                    id: r.id.clone(),
                    why: format!(
                        "{} is delivered in {file}, which the change leaves as it was",
                        r.id
                    ),
                    undefined: None,
                    untouched: Some(file.to_string()),
                });
            }
        }
        for word in &r.functions {
            // Told once, under the first requirement that needs it.
            if unmet
                .iter()
                .any(|u: &Unmet| u.undefined.as_ref() == Some(word))
            {
                continue;
            }
            let found = changed
                .iter()
                .map(|c| c.to_string())
                .chain(named_files.iter().map(|f| f.to_string()))
                .any(|path| defines(&path, word));
            if !found {
                let home = home(spec, &files, word, read);
                let why = match &home {
                    Some(file) => format!(
                        "{} needs {word}, which no file the change touches defines: define it in {file}",
                        r.id
                    ),
                    None => format!(
                        "{} needs {word}, which no file the change touches defines",
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
        for word in &r.functions {
            // A function defined nowhere is told as such, not again as unused.
            if unmet
                .iter()
                .any(|u: &Unmet| u.undefined.as_ref() == Some(word))
            {
                continue;
            }
            for file in &files {
                let Some(path) = changed.iter().find(|c| names(file, c)) else {
                    continue; // already unmet: the file is left as it was
                };
                let used = read(path).is_some_and(|t| uses(&t, word));
                if !used && !defines(path, word) {
                    unmet.push(Unmet {
                        id: r.id.clone(),
                        why: format!(
                            "{} needs {word} in {file}, which never uses it (an import is not a use)",
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

/// The file where the function `word` belongs: the requirement's first file that is not a
/// test (`files`, in scope already), else the file or module an acceptance example of that
/// function names, when the tree has it. None when nothing typed says where.
fn home(
    spec: &TaskSpec,
    files: &[&String],
    word: &str,
    read: &dyn Fn(&str) -> Option<String>,
) -> Option<String> {
    if let Some(file) = files.iter().find(|f| !test_path(f)) {
        return Some(file.to_string());
    }
    let exists = |p: &String| spec.writable(p) && read(p).is_some();
    spec.examples
        .iter()
        .filter(|e| e.function() == Some(word))
        .find_map(|e| {
            if let Some(f) = e.file.as_ref().filter(|f| exists(f)) {
                return Some(f.clone());
            }
            let stem = e
                .module
                .as_deref()
                .or_else(|| e.dotted_module())?
                .replace('.', "/");
            [format!("{stem}.py"), format!("{stem}/__init__.py")]
                .into_iter()
                .find(|p| exists(p))
        })
}

/// The functions the task's requirements are about, each once.
pub(super) fn functions(spec: &TaskSpec) -> Vec<String> {
    let mut functions = Vec::new();
    for r in &spec.requirements {
        for s in &r.functions {
            push(&mut functions, s);
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
    /// As a tool finding: recorded, a flag for the next stage, and evidence for a review.
    /// A requirement the TaskSpec states as a typed fact (a file to change, a function to
    /// define) and the tree leaves undone is critical: the review cannot pass it (a verdict
    /// stands on such a fact). The task's examples missing from its tests are a warning.
    pub fn finding(&self) -> Finding {
        let severity = if self.id == ACCEPTANCE {
            "warning"
        } else {
            "critical"
        };
        Finding {
            kind: crate::arbiter::floor::UNMET_REQUIREMENT.into(),
            category: "completeness".into(),
            severity: severity.into(),
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

/// The requirements the facts can check: those with `functions`, or `files` in scope. A
/// task with none of them needs no run diff.
pub(super) fn checkable(spec: &TaskSpec) -> impl Iterator<Item = &crate::task::Requirement> {
    spec.requirements
        .iter()
        .filter(|r| !r.functions.is_empty() || r.files.iter().any(|f| spec.in_scope(f)))
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
                submodule: false,
                hunks: Vec::new(),
            })
            .collect()
    }

    #[test]
    fn requirements_name_files_to_change_and_functions_to_find() {
        let spec = TaskSpec::parse(
            "title = \"t\"\ndescription = \"d\"\n\
             [[requirements]]\nid = \"R1\"\ntext = \"textstats.char_count(text) counts characters\"\nfunctions = [\"char_count\"]\n\
             [[requirements]]\nid = \"R2\"\ntext = \"tests/test_textstats.py has a test for char_count\"\nfiles = [\"tests/test_textstats.py\"]\nfunctions = [\"char_count\"]\n\
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

    /// A spec of one requirement about `char_count` with the typed `extra` lines.
    fn one_requirement(extra: &str) -> TaskSpec {
        TaskSpec::parse(
            &format!(
                "title = \"t\"\ndescription = \"Add char_count to textstats.py.\"\n\
                 [[requirements]]\nid = \"R1\"\ntext = \"counts characters\"\nfunctions = [\"char_count\"]\n{extra}"
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
        // The requirement's own file that is not a test.
        let spec = one_requirement("files = [\"tests/test_textstats.py\", \"textstats.py\"]\n");
        let unmet = unmet_requirements(&spec, &tests_only, &tree);
        let undefined = unmet.iter().find(|u| u.undefined.is_some()).unwrap();
        assert_eq!(undefined.untouched.as_deref(), Some("textstats.py"));
        assert!(
            undefined.why.ends_with("define it in textstats.py"),
            "{unmet:?}"
        );
        // Else the module an example of the function names, when the tree has that file.
        let spec = one_requirement(
            "[[examples]]\ncall = \"textstats.char_count('a b')\"\nexpect = \"2\"\n",
        );
        let unmet = unmet_requirements(&spec, &tests_only, &tree);
        assert_eq!(unmet.len(), 1, "{unmet:?}");
        assert_eq!(unmet[0].undefined.as_deref(), Some("char_count"));
        assert_eq!(unmet[0].untouched.as_deref(), Some("textstats.py"));
        let kept = unmet_feedback(&unmet, &spec, true, true);
        assert!(
            kept.contains("Write textstats.py in full (only that"),
            "{kept}"
        );
        // A module the tree does not have is no home; nor is a sentence of the description.
        let spec =
            one_requirement("[[examples]]\ncall = \"stats.char_count('a b')\"\nexpect = \"2\"\n");
        let unmet = unmet_requirements(&spec, &tests_only, &tree);
        assert_eq!(unmet[0].untouched, None, "{unmet:?}");
        assert!(!unmet[0].why.contains("define it in"), "{unmet:?}");
    }

    #[test]
    fn a_requirement_s_sentence_is_never_read_as_a_fact() {
        // "keep X as it is" names a file without asking for a change: without typed fields,
        // a requirement states nothing the facts check.
        let spec = TaskSpec::parse(
            "title = \"t\"\n[[requirements]]\nid = \"R1\"\ntext = \"keep tests/test_a.py as it is; add f(x) to a.py\"\n",
            "t.toml",
            "t",
        )
        .unwrap();
        assert_eq!(
            unmet_requirements(&spec, &modified(&["b.py"]), &|_| None),
            []
        );
        assert_eq!(checkable(&spec).count(), 0);
    }

    #[test]
    fn a_test_file_that_only_imports_the_function_has_no_test_for_it() {
        let spec = TaskSpec::parse(
            "title = \"t\"\ndescription = \"d\"\n\
             [[requirements]]\nid = \"R1\"\ntext = \"textstats.char_count(text) counts characters\"\nfunctions = [\"char_count\"]\n\
             [[requirements]]\nid = \"R2\"\ntext = \"tests/test_textstats.py has a test for char_count\"\nfiles = [\"tests/test_textstats.py\"]\nfunctions = [\"char_count\"]\n",
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
