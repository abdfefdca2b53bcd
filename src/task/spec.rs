//! The TaskSpec: what the developer asked for, committed at `.triad/tasks/<slug>.toml`.

use serde::{Deserialize, Serialize};

use super::example::Example;
use crate::glob;

/// Directory of TaskSpecs inside the repository.
pub const TASKS_DIR: &str = ".triad/tasks";

/// A task as committed in the repository.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskSpec {
    /// Stable identifier (defaults to the file's slug).
    #[serde(default)]
    pub id: String,
    /// One-line title.
    pub title: String,
    /// What to build and why.
    #[serde(default)]
    pub description: String,
    /// Numbered requirements (`R1`, `R2`, ...).
    #[serde(default)]
    pub requirements: Vec<Requirement>,
    /// Acceptance criteria for the whole task.
    #[serde(default)]
    pub acceptance: Vec<String>,
    /// Acceptance examples: calls and the values they must return, run as facts.
    #[serde(default)]
    pub examples: Vec<Example>,
    /// Files the stages may see and change.
    #[serde(default)]
    pub scope: Scope,
    /// Verify command (runs only in trusted clones).
    #[serde(default)]
    pub verify: Option<TaskVerify>,
}

/// One requirement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Requirement {
    /// `R1`, `R2`, ...
    pub id: String,
    /// What must be true.
    pub text: String,
    /// The files this requirement is delivered in: the run must change each of them (and,
    /// with `functions`, each must define or use those functions).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    /// The functions this requirement is about: the run's tree must define each of them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub functions: Vec<String>,
}

/// Include/exclude globs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scope {
    /// Paths the stages may see and change; empty means the whole repository.
    #[serde(default)]
    pub include: Vec<String>,
    /// Paths excluded even if included.
    #[serde(default)]
    pub exclude: Vec<String>,
    /// What the stages may do to the tests the repository already has.
    #[serde(default)]
    pub tests: TestsPolicy,
    /// Paths (globs) the building stages may not change. Unset, a run makes the tests that
    /// fail at its base read-only (the failing tests are the specification: a bug fix
    /// changes the code, not the test), less the files a requirement names; `[]` makes none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only: Option<Vec<String>>,
}

/// What the stages may do to the tests the repository already has. Tests are evidence: a
/// change that deletes one, or rewrites what it expects, could make a failing test agree
/// with a bug.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TestsPolicy {
    /// Add tests, never delete a test or an assertion or change an expected value (the
    /// default).
    #[default]
    Keep,
    /// The task itself is to change the tests: anything goes.
    Rewrite,
}

/// A task's own verify command.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskVerify {
    /// Shell command run in the box, on a scratch copy of the commit.
    pub command: String,
    /// Seconds before it is killed.
    pub timeout_secs: Option<u64>,
}

/// Why a TaskSpec is not usable.
#[derive(Debug, thiserror::Error)]
pub enum TaskSpecError {
    /// Not TOML, or not the schema.
    #[error("{path} is not a valid TaskSpec: {message}")]
    Invalid {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// The file says one id and is named for another: runs, branches, notes and the task's
    /// state would disagree about which task it is.
    #[error("{path} says `id = \"{id}\"`, but its file name makes the task `{slug}`: a task's id is its file name; set `id = \"{slug}\"` (or leave it out), or rename the file to {id}.toml")]
    IdMismatch {
        /// The file.
        path: String,
        /// The id it says.
        id: String,
        /// The slug its file name gives.
        slug: String,
    },
    /// A slug that cannot be a file name.
    #[error("`{0}` is not a valid task slug (use lowercase letters, digits and dashes, e.g. `add-login`)")]
    BadSlug(String),
}

/// Whether a slug is safe as a file and ref name.
pub fn valid_slug(slug: &str) -> bool {
    !slug.is_empty()
        && slug.len() <= 64
        && slug
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
        && !slug.starts_with('-')
}

/// The repo-relative path of a task's spec.
pub fn spec_path(slug: &str) -> String {
    format!("{TASKS_DIR}/{slug}.toml")
}

impl TaskSpec {
    /// Parses and checks a TaskSpec.
    pub fn parse(text: &str, path: &str, slug: &str) -> Result<TaskSpec, TaskSpecError> {
        let invalid = |message: String| TaskSpecError::Invalid {
            path: path.to_string(),
            message,
        };
        let mut spec: TaskSpec =
            toml::from_str(text).map_err(|e| invalid(e.message().to_string()))?;
        if spec.id.is_empty() {
            spec.id = slug.to_string();
        } else if spec.id != slug {
            return Err(TaskSpecError::IdMismatch {
                path: path.to_string(),
                id: crate::bounded::clip(&spec.id, 80),
                slug: slug.to_string(),
            });
        }
        if spec.title.trim().is_empty() {
            return Err(invalid("`title` is empty".into()));
        }
        let mut seen = std::collections::BTreeSet::new();
        for r in &spec.requirements {
            if r.id.trim().is_empty() || !seen.insert(r.id.clone()) {
                return Err(invalid(format!(
                    "requirement ids must be unique and non-empty (`{}`)",
                    r.id
                )));
            }
        }
        Ok(spec)
    }

    /// The fields a run needs that are still empty, as the TaskSpec names them
    /// (`description`, `R1 text`): every requirement's text, and the description when
    /// nothing else (a requirement, an acceptance criterion, an example) says what to build.
    /// Empty for a TaskSpec that can be run; `task new`'s template, unfilled, names both.
    pub fn unfilled(&self) -> Vec<String> {
        let mut empty: Vec<String> = self
            .requirements
            .iter()
            .filter(|r| r.text.trim().is_empty())
            .map(|r| format!("{} text", r.id))
            .collect();
        let said = self.requirements.iter().any(|r| !r.text.trim().is_empty())
            || self.acceptance.iter().any(|a| !a.trim().is_empty())
            || !self.examples.is_empty();
        if self.description.trim().is_empty() && (!said || !empty.is_empty()) {
            empty.insert(0, "description".to_string());
        }
        empty
    }

    /// The acceptance examples: the `[[examples]]`, then the `acceptance` criteria written
    /// as a call and its value (see [`Example::from_criterion`]), each once.
    pub fn all_examples(&self) -> Vec<Example> {
        let mut out = self.examples.clone();
        for ex in self
            .acceptance
            .iter()
            .filter_map(|c| Example::from_criterion(c))
        {
            if !out.iter().any(|e| e.text() == ex.text()) {
                out.push(ex);
            }
        }
        out
    }

    /// The calls of its examples, as code (`char_count('a b')`): inputs a behaviour diff
    /// tries on the functions they call.
    pub fn example_calls(&self) -> Vec<String> {
        self.all_examples().into_iter().map(|e| e.call).collect()
    }

    /// The functions the requirements name (`functions = [...]`), each once: what a change
    /// is asked to alter; a behaviour change outside them was not asked for.
    pub fn named_functions(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for f in self.requirements.iter().flat_map(|r| &r.functions) {
            if !out.contains(f) {
                out.push(f.clone());
            }
        }
        out
    }

    /// The requirements' ids (`R1`, `R2`, …), which a review's issue may name instead of
    /// quoting code.
    pub fn requirement_ids(&self) -> Vec<String> {
        self.requirements.iter().map(|r| r.id.clone()).collect()
    }

    /// Whether a path is inside the task's scope.
    pub fn in_scope(&self, path: &str) -> bool {
        let included = self.scope.include.is_empty()
            || self.scope.include.iter().any(|p| glob::matches(p, path));
        included && !self.scope.exclude.iter().any(|p| glob::matches(p, path))
    }

    /// Whether a stage may see and change `path`: inside the task's scope, and not the
    /// project's own `.triad/` records (TaskSpecs, config), whatever the scope says.
    pub fn writable(&self, path: &str) -> bool {
        self.in_scope(path) && !path.starts_with(".triad/")
    }

    /// The TaskSpec as prompt text.
    pub fn render(&self) -> String {
        let mut s = format!(
            "# Task {}: {}\n\n{}\n",
            self.id,
            self.title,
            self.description.trim()
        );
        section(
            &mut s,
            "Requirements",
            self.requirements
                .iter()
                .map(|r| format!("{}: {}", r.id, r.text.trim())),
        );
        section(
            &mut s,
            "Acceptance criteria",
            self.acceptance.iter().map(|a| a.trim().to_string()),
        );
        section(
            &mut s,
            "Acceptance examples (each call must return its value)",
            self.examples.iter().map(|e| e.text()),
        );
        if !self.scope.include.is_empty() || !self.scope.exclude.is_empty() {
            s.push_str(&format!(
                "\n## Scope\ninclude: {}\nexclude: {}\n",
                if self.scope.include.is_empty() {
                    "(everything)".to_string()
                } else {
                    self.scope.include.join(", ")
                },
                if self.scope.exclude.is_empty() {
                    "(nothing)".to_string()
                } else {
                    self.scope.exclude.join(", ")
                },
            ));
        }
        s
    }
}

/// Appends a `## heading` section with one bullet per item, or nothing when there are no
/// items (a prompt with empty headings invites a small model to fill them in).
fn section(s: &mut String, heading: &str, items: impl Iterator<Item = String>) {
    let mut items = items.peekable();
    if items.peek().is_some() {
        s.push_str(&format!("\n## {heading}\n"));
        for item in items {
            s.push_str(&format!("- {item}\n"));
        }
    }
}

/// The commented template `git triad task new` writes.
pub fn template(slug: &str, title: &str) -> String {
    let title = title.replace('\\', "\\\\").replace('"', "\\\"");
    format!(
        r#"# TaskSpec for `git triad run --task {slug}`. Commit this file before running:
# the run is reconciled against the committed version.

id = "{slug}"
title = "{title}"

# What to build and why, in plain words. The stages see this text.
description = """
"""

# Acceptance criteria for the whole task, in words.
acceptance = []

# Each requirement gets an id; the verifier maps every id to evidence (or lists it as omitted).
# `files` (the files it is delivered in) and `functions` (the functions it defines) are facts
# the run checks on every building stage; leave them out where they do not apply.
[[requirements]]
id = "R1"
text = ""
# files = ["src/app.py", "tests/test_app.py"]
# functions = ["parse_login"]

# Acceptance examples: every building stage and Verify run each call and check its value
# (Python: the module that defines the function is imported for you; Rust: the call as a
# user of the crate writes it after `use the_crate::*;`). `module` or `file` say where the
# function lives when the tree cannot tell.
# [[examples]]
# call = "parse_login('a@b.c')"
# expect = "('a', 'b.c')"
# file = "src/app.py"

# Files the stages may see and change (globs; empty include = whole repository).
[scope]
include = []
exclude = [".triad/**"]
# The stages may add tests but never delete one or change what an existing assertion
# expects; `tests = "rewrite"` allows it, for a task that is about the tests themselves.
# tests = "keep"

# A command that proves the change works, run in the box on a scratch copy of the refactor commit.
# Commands only run in clones you trust (`git config triad.trusted true`).
# [verify]
# command = "python -m pytest -q"
# timeout_secs = 300
"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_parses_and_scopes() {
        let spec = TaskSpec::parse(&template("add-x", "Add \"x\""), "t.toml", "add-x").unwrap();
        assert_eq!(spec.id, "add-x");
        assert_eq!(spec.title, "Add \"x\"");
        assert!(spec.in_scope("src/a.py"));
        assert!(!spec.in_scope(".triad/tasks/add-x.toml"));
    }

    #[test]
    fn the_unfilled_template_names_its_empty_fields_and_a_filled_one_none() {
        let blank = TaskSpec::parse(&template("add-x", "Add x"), "t.toml", "add-x").unwrap();
        assert_eq!(blank.unfilled(), ["description", "R1 text"]);
        let filled = template("add-x", "Add x")
            .replace(
                "description = \"\"\"\n\"\"\"",
                "description = \"x() returns 1\"",
            )
            .replace("text = \"\"", "text = \"x() returns 1\"");
        let spec = TaskSpec::parse(&filled, "t.toml", "add-x").unwrap();
        assert!(spec.unfilled().is_empty(), "{:?}", spec.unfilled());
        // Requirements alone say what to build; a title alone does not.
        let reqs = "title = 't'\n[[requirements]]\nid = 'R1'\ntext = 'x() returns 1'\n";
        assert!(TaskSpec::parse(reqs, "t", "t")
            .unwrap()
            .unfilled()
            .is_empty());
        let title = TaskSpec::parse("title = 't'\n", "t", "t").unwrap();
        assert_eq!(title.unfilled(), ["description"]);
    }

    #[test]
    fn an_id_other_than_the_file_name_is_an_error_naming_both() {
        let text = "id = \"add-y\"\ntitle = \"t\"\n";
        let err = TaskSpec::parse(text, ".triad/tasks/add-x.toml", "add-x").unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, TaskSpecError::IdMismatch { .. }), "{err:?}");
        assert!(
            msg.contains(".triad/tasks/add-x.toml says `id = \"add-y\"`")
                && msg.contains("makes the task `add-x`")
                && msg.contains("rename the file to add-y.toml"),
            "{msg}"
        );
        let same = "id = \"add-x\"\ntitle = \"t\"\n";
        assert_eq!(TaskSpec::parse(same, "p", "add-x").unwrap().id, "add-x");
    }

    #[test]
    fn rejects_duplicate_requirement_ids_and_bad_slugs() {
        let text =
            "title='t'\n[[requirements]]\nid='R1'\ntext='a'\n[[requirements]]\nid='R1'\ntext='b'";
        assert!(TaskSpec::parse(text, "t", "t").is_err());
        assert!(!valid_slug("../x"));
        assert!(valid_slug("add-login-2"));
    }
}
