//! The TaskSpec: what the developer asked for, committed at `.triad/tasks/<slug>.toml`.

use serde::{Deserialize, Serialize};

use super::glob;

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
}

/// A task's own verify command.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskVerify {
    /// Shell command run in a temporary worktree.
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
        if !self.requirements.is_empty() {
            s.push_str("\n## Requirements\n");
            for r in &self.requirements {
                s.push_str(&format!("- {}: {}\n", r.id, r.text.trim()));
            }
        }
        if !self.acceptance.is_empty() {
            s.push_str("\n## Acceptance criteria\n");
            for a in &self.acceptance {
                s.push_str(&format!("- {}\n", a.trim()));
            }
        }
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

# Acceptance criteria for the whole task.
acceptance = []

# Each requirement gets an id; the verifier maps every id to evidence (or lists it as omitted).
[[requirements]]
id = "R1"
text = ""

# Files the stages may see and change (globs; empty include = whole repository).
[scope]
include = []
exclude = [".triad/**"]

# A command that proves the change works, run in a temporary worktree at the refactor commit.
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
    fn rejects_duplicate_requirement_ids_and_bad_slugs() {
        let text =
            "title='t'\n[[requirements]]\nid='R1'\ntext='a'\n[[requirements]]\nid='R1'\ntext='b'";
        assert!(TaskSpec::parse(text, "t", "t").is_err());
        assert!(!valid_slug("../x"));
        assert!(valid_slug("add-login-2"));
    }
}
