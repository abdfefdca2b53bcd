//! The standard task set of `git triad bench`, compiled in from `config/bench-tasks/`.
//!
//! Two kinds of task, each graded by facts:
//! - a [`BuildTask`] (architect, implementer, refactorer) is a small repository in Python or
//!   Rust, a TaskSpec and hidden tests (Python scripts; a Rust task's compiles the answer
//!   with its hidden tests by `rustc --test` and runs them): the model's answer goes through
//!   the edit parsing and applying of a run, then the tests must pass and the files it must
//!   (not) change must (not) change;
//! - a [`ReviewCase`] (arbiter, verifier) is a real change with one injected bug, or a clean
//!   control: a review catches the bug when it anchors an issue on the bug's lines, and
//!   rejecting a clean change is a false positive.
//!
//! Every task carries its own proof: a build task's `reference` answer passes its hidden
//! tests (and the starting files do not); a bug case's `check` fails on the change and passes
//! on its `fixed` version; a clean case's `check` passes on the change. The tests hold every
//! built-in task to that.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::config::{EditFormat, Role};
use crate::task::TaskSpec;

/// The version of the task set. Figures measured with another version are stale: bump it
/// whenever a task, a hidden test or a grading rule changes what a score means.
pub const TASK_SET_VERSION: u32 = 3;

/// The build tasks, by file name.
const BUILD: &[(&str, &str)] = &[
    (
        "arch-stack",
        include_str!("../../config/bench-tasks/build/arch-stack.toml"),
    ),
    (
        "arch-settings",
        include_str!("../../config/bench-tasks/build/arch-settings.toml"),
    ),
    (
        "impl-slugify",
        include_str!("../../config/bench-tasks/build/impl-slugify.toml"),
    ),
    (
        "impl-roman",
        include_str!("../../config/bench-tasks/build/impl-roman.toml"),
    ),
    (
        "impl-intervals",
        include_str!("../../config/bench-tasks/build/impl-intervals.toml"),
    ),
    (
        "refactor-prices",
        include_str!("../../config/bench-tasks/build/refactor-prices.toml"),
    ),
    (
        "refactor-words",
        include_str!("../../config/bench-tasks/build/refactor-words.toml"),
    ),
    (
        "arch-rust-queue",
        include_str!("../../config/bench-tasks/build/arch-rust-queue.toml"),
    ),
    (
        "impl-rust-rle",
        include_str!("../../config/bench-tasks/build/impl-rust-rle.toml"),
    ),
    (
        "refactor-rust-mean",
        include_str!("../../config/bench-tasks/build/refactor-rust-mean.toml"),
    ),
];

/// The review cases, by file name.
const REVIEW: &[(&str, &str)] = &[
    (
        "bug-page-offset",
        include_str!("../../config/bench-tasks/review/bug-page-offset.toml"),
    ),
    (
        "bug-discount-sign",
        include_str!("../../config/bench-tasks/review/bug-discount-sign.toml"),
    ),
    (
        "bug-median-even",
        include_str!("../../config/bench-tasks/review/bug-median-even.toml"),
    ),
    (
        "bug-json-parse",
        include_str!("../../config/bench-tasks/review/bug-json-parse.toml"),
    ),
    (
        "bug-sql-injection",
        include_str!("../../config/bench-tasks/review/bug-sql-injection.toml"),
    ),
    (
        "bug-window-end",
        include_str!("../../config/bench-tasks/review/bug-window-end.toml"),
    ),
    (
        "bug-leap-century",
        include_str!("../../config/bench-tasks/review/bug-leap-century.toml"),
    ),
    (
        "bug-batch-tail",
        include_str!("../../config/bench-tasks/review/bug-batch-tail.toml"),
    ),
    (
        "bug-shared-default",
        include_str!("../../config/bench-tasks/review/bug-shared-default.toml"),
    ),
    (
        "clean-clamp",
        include_str!("../../config/bench-tasks/review/clean-clamp.toml"),
    ),
    (
        "clean-leap",
        include_str!("../../config/bench-tasks/review/clean-leap.toml"),
    ),
    (
        "clean-batches",
        include_str!("../../config/bench-tasks/review/clean-batches.toml"),
    ),
    (
        "clean-tags",
        include_str!("../../config/bench-tasks/review/clean-tags.toml"),
    ),
    (
        "clean-chunks",
        include_str!("../../config/bench-tasks/review/clean-chunks.toml"),
    ),
    (
        "clean-median",
        include_str!("../../config/bench-tasks/review/clean-median.toml"),
    ),
    (
        "clean-sql-params",
        include_str!("../../config/bench-tasks/review/clean-sql-params.toml"),
    ),
];

/// The text of every built-in task file, build tasks first: what [`TASK_SET_VERSION`]
/// versions.
pub fn sources() -> impl Iterator<Item = (&'static str, &'static str)> {
    BUILD.iter().chain(REVIEW.iter()).copied()
}

/// A task that asks a stage model to change code.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BuildTask {
    /// Stable id (the file name).
    pub id: String,
    /// The role it measures: architect, implementer or refactorer.
    pub role: Role,
    /// Programs its hidden tests need besides python3 (`rustc`); without them on PATH the
    /// task is left out of a bench, and said so, rather than failed for every model.
    #[serde(default)]
    pub requires: Vec<String>,
    /// What the model is asked, as a run would show it.
    pub spec: TaskSpec,
    /// The repository before the previous stage, when the task continues one: the model is
    /// shown the change from here to `files` as the previous stage's diff.
    #[serde(default)]
    pub before: Option<BTreeMap<String, String>>,
    /// The repository the stage starts from: path → content.
    pub files: BTreeMap<String, String>,
    /// Paths the answer must change (or create).
    pub must_change: Vec<String>,
    /// Paths the answer must leave alone.
    #[serde(default)]
    pub must_not_change: Vec<String>,
    /// Hidden Python tests, file name → source, never shown to the model; each runs as
    /// `python3 -B <file> <repository>` and must exit 0.
    pub hidden: BTreeMap<String, String>,
    /// A known-good answer, path → whole new content: the proof the task can be passed.
    pub reference: BTreeMap<String, String>,
}

/// What kind of change a review case is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CaseClass {
    /// An index or bound one off.
    OffByOne,
    /// The wrong operator.
    WrongOperator,
    /// An edge case the requirements name, not handled.
    MissingEdgeCase,
    /// A call to an API that does not exist.
    HallucinatedApi,
    /// A security slip (injection, ...).
    Security,
    /// A correct change: the control.
    Clean,
}

impl CaseClass {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            CaseClass::OffByOne => "off_by_one",
            CaseClass::WrongOperator => "wrong_operator",
            CaseClass::MissingEdgeCase => "missing_edge_case",
            CaseClass::HallucinatedApi => "hallucinated_api",
            CaseClass::Security => "security",
            CaseClass::Clean => "clean",
        }
    }
}

/// Where a bug was injected: the lines of `quote` in `path` of the change.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BugSite {
    /// The file.
    pub path: String,
    /// The buggy line(s), verbatim; must occur exactly once in the changed file.
    pub quote: String,
}

/// A change to review.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReviewCase {
    /// Stable id (the file name).
    pub id: String,
    /// The injected bug's kind, or `clean`.
    pub class: CaseClass,
    /// What the change was for, as the reviewer is told.
    pub spec: TaskSpec,
    /// The files before the change.
    pub base: BTreeMap<String, String>,
    /// The changed files after the change (whole content).
    pub change: BTreeMap<String, String>,
    /// Where the bug is (bug cases only).
    #[serde(default)]
    pub bug: Option<BugSite>,
    /// The change with the bug fixed (bug cases only).
    #[serde(default)]
    pub fixed: BTreeMap<String, String>,
    /// Python that passes on correct code: it fails on a bug case's change.
    pub check: String,
}

impl ReviewCase {
    /// The 1-based first and last line of the bug in the changed file.
    pub fn bug_lines(&self) -> Option<(u32, u32)> {
        let bug = self.bug.as_ref()?;
        let text = self.change.get(&bug.path)?;
        let at = text.find(&bug.quote)?;
        let first = text[..at].matches('\n').count() as u32 + 1;
        Some((first, first + bug.quote.matches('\n').count() as u32))
    }
}

/// A selection of tasks to run.
#[derive(Debug, Clone)]
pub struct TaskSet {
    /// The name it was selected by (`standard`, `quick`, or the ids given).
    pub name: String,
    /// Build tasks.
    pub build: Vec<BuildTask>,
    /// Review cases.
    pub review: Vec<ReviewCase>,
}

/// The task-set names `--tasks` accepts besides task ids.
pub const SET_NAMES: &[&str] = &["standard", "quick"];

impl TaskSet {
    /// Every built-in task. A task file that does not parse is a bug the tests catch.
    pub fn standard() -> TaskSet {
        let build = BUILD
            .iter()
            .map(|(name, text)| {
                let mut t: BuildTask =
                    toml::from_str(text).unwrap_or_else(|e| panic!("bench task {name}: {e}"));
                t.spec.id = t.id.clone();
                t
            })
            .collect();
        let review = REVIEW
            .iter()
            .map(|(name, text)| {
                let mut c: ReviewCase =
                    toml::from_str(text).unwrap_or_else(|e| panic!("bench case {name}: {e}"));
                c.spec.id = c.id.clone();
                c
            })
            .collect();
        TaskSet {
            name: "standard".into(),
            build,
            review,
        }
    }

    /// The tasks `--tasks` names: `standard` (all), `quick` (the first build task of each
    /// role, the first bug case and the first clean case), or task ids separated by commas.
    pub fn select(which: &str) -> Result<TaskSet, String> {
        let all = TaskSet::standard();
        match which.trim() {
            "" | "standard" => Ok(all),
            "quick" => {
                let mut build: Vec<BuildTask> = Vec::new();
                for t in all.build {
                    if !build.iter().any(|b| b.role == t.role) {
                        build.push(t);
                    }
                }
                let mut review: Vec<ReviewCase> = Vec::new();
                for c in all.review {
                    let clean = c.class == CaseClass::Clean;
                    if !review
                        .iter()
                        .any(|r| (r.class == CaseClass::Clean) == clean)
                    {
                        review.push(c);
                    }
                }
                Ok(TaskSet {
                    name: "quick".into(),
                    build,
                    review,
                })
            }
            ids => {
                let wanted: Vec<&str> = ids
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .collect();
                for id in &wanted {
                    let known = all.build.iter().any(|t| t.id == *id)
                        || all.review.iter().any(|c| c.id == *id);
                    if !known {
                        return Err(format!("there is no task `{id}`"));
                    }
                }
                Ok(TaskSet {
                    name: wanted.join(","),
                    build: all
                        .build
                        .into_iter()
                        .filter(|t| wanted.contains(&t.id.as_str()))
                        .collect(),
                    review: all
                        .review
                        .into_iter()
                        .filter(|c| wanted.contains(&c.id.as_str()))
                        .collect(),
                })
            }
        }
    }

    /// Every task id, build tasks first.
    pub fn ids(&self) -> Vec<String> {
        self.build
            .iter()
            .map(|t| t.id.clone())
            .chain(self.review.iter().map(|c| c.id.clone()))
            .collect()
    }
}

/// The fenced JSON metadata block that ends an answer doing the stage's work.
fn approve_meta(summary: &str) -> String {
    format!(
        "```json\n{}\n```\n",
        serde_json::json!({"summary": summary, "confidence": 0.9, "outcome": "APPROVE",
            "questions": [], "suggestions": [], "objections": []})
    )
}

impl BuildTask {
    /// The programs of [`BuildTask::requires`] that are not on PATH.
    pub fn missing(&self) -> Vec<&str> {
        let path = std::env::var_os("PATH").unwrap_or_default();
        self.requires
            .iter()
            .filter(|p| !std::env::split_paths(&path).any(|d| d.join(p.as_str()).is_file()))
            .map(String::as_str)
            .collect()
    }

    /// An answer writing `files` (path → whole new content) in `format`: whole files, or
    /// SEARCH/REPLACE blocks replacing each file's whole text (an empty SEARCH for a new one).
    pub fn answer_writing(&self, files: &BTreeMap<String, String>, format: EditFormat) -> String {
        let mut answer = String::new();
        for (path, new) in files {
            match format {
                EditFormat::Whole => {
                    let lang = match path.rsplit('.').next() {
                        Some("rs") => "rust",
                        Some("toml") => "toml",
                        _ => "python",
                    };
                    answer.push_str(&format!("{path}\n```{lang}\n{new}"));
                    if !new.ends_with('\n') {
                        answer.push('\n');
                    }
                    answer.push_str("```\n\n");
                }
                EditFormat::Diff => {
                    let old = self.files.get(path).map(String::as_str).unwrap_or("");
                    answer.push_str(&format!(
                        "{path}\n<<<<<<< SEARCH\n{old}{}=======\n{new}{}>>>>>>> REPLACE\n\n",
                        if old.is_empty() || old.ends_with('\n') {
                            ""
                        } else {
                            "\n"
                        },
                        if new.is_empty() || new.ends_with('\n') {
                            ""
                        } else {
                            "\n"
                        },
                    ));
                }
            }
        }
        answer.push_str(&approve_meta(&format!("the {} task", self.id)));
        answer
    }

    /// The known-good answer in `format`.
    pub fn reference_answer(&self, format: EditFormat) -> String {
        self.answer_writing(&self.reference, format)
    }
}
