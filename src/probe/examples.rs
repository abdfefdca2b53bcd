//! The TaskSpec's acceptance examples, run as facts: each becomes a probe (`assert call ==
//! expect` in Python, `assert_eq!(call, expect);` in Rust) against the file that defines its
//! function, and what it shows is the example's outcome. A failing example is a
//! deterministic finding with its actual value; one whose function no file defines cannot
//! run, and says so.

use super::{ProbeOutcome, ProbeResult, ProbeRunner, ProbeSpec};
use crate::code::{outline, test_path, Finding, Lang};
use crate::git::TreeFiles;
use crate::task::Example;

/// The finding kind of an acceptance example the tree fails.
pub const FAILING_EXAMPLE: &str = "failing_example";

/// The finding kind of an acceptance example that cannot run against the tree.
pub const UNRUNNABLE_EXAMPLE: &str = "unrunnable_example";

/// The finding kind of model-written code that ran without the box's filesystem layer, or
/// was not run for want of it: a fact no verdict may approve on (at least FLAG).
pub const UNGUARDED: &str = "unguarded_execution";

/// Most source files read while looking for the file that defines an example's function.
const MAX_FILES_SEARCHED: usize = 2000;

/// One example and what running it showed.
#[derive(Debug, Clone, PartialEq)]
pub struct ExampleRun {
    /// The example.
    pub example: Example,
    /// The file its function was found in, when it was.
    pub file: Option<String>,
    /// What running it showed.
    pub result: ProbeResult,
    /// Why it ran without the box's filesystem layer, or did not run for want of it.
    pub unguarded: Option<String>,
}

impl ExampleRun {
    /// The finding this run makes: a failing example is critical (the tree does not do
    /// what the task's own example says), one that cannot run is a warning; a passing or
    /// unprobed one is none.
    pub fn finding(&self) -> Option<Finding> {
        let text = self.example.text();
        let (kind, severity, reason) = match self.result.outcome {
            ProbeOutcome::Confirmed => (
                FAILING_EXAMPLE,
                "critical",
                format!(
                    "acceptance example `{text}` fails: {}",
                    self.result.counterexample()
                ),
            ),
            ProbeOutcome::Broken => (
                UNRUNNABLE_EXAMPLE,
                "warning",
                format!(
                    "acceptance example `{text}` cannot run: {}",
                    self.result.detail
                ),
            ),
            ProbeOutcome::Refuted | ProbeOutcome::Unprobed | ProbeOutcome::Irrelevant => {
                let why = self.unguarded.as_ref()?;
                (
                    UNGUARDED,
                    "warning",
                    format!("acceptance example `{text}` is no evidence here: {why}"),
                )
            }
        };
        Some(Finding {
            kind: kind.into(),
            category: "logic".into(),
            severity: severity.into(),
            path: self.file.clone().unwrap_or_default(),
            line: 0,
            end_line: 0,
            symbol: None,
            import: None,
            reason,
        })
    }
}

/// Runs `examples` against `tree` (whose files `changed` lists first, where a new function
/// most likely is) with `runner`.
pub fn run_examples(
    examples: &[Example],
    tree: &TreeFiles<'_>,
    changed: &[String],
    runner: &ProbeRunner<'_>,
) -> Vec<ExampleRun> {
    let mut located = Vec::new();
    let mut probes = Vec::new();
    for ex in examples {
        let file = locate(ex, tree, changed);
        if let Some(path) = &file {
            let code = match Lang::from_path(path) {
                Some(Lang::Rust) => {
                    format!("assert_eq!({}, {});", ex.call.trim(), ex.expect.trim())
                }
                _ => format!("assert {} == {}", ex.call.trim(), ex.expect.trim()),
            };
            probes.push(ProbeSpec {
                path: path.clone(),
                code,
            });
        }
        located.push(file);
    }
    let mut results = runner.run(&probes).into_iter();
    let unguarded = runner
        .layers()
        .filter(|l| !l.filesystem.held)
        .map(|l| format!("the box has no filesystem layer ({})", l.filesystem.detail));
    examples
        .iter()
        .zip(located)
        .map(|(ex, file)| {
            let result = match &file {
                Some(_) => results
                    .next()
                    .unwrap_or_else(|| ProbeResult::broken("the example did not run")),
                None => ProbeResult::broken(match ex.function() {
                    Some(f) => format!("no file of the tree defines `{f}`"),
                    None => "its call names no function".to_string(),
                }),
            };
            ExampleRun {
                example: ex.clone(),
                file,
                result,
                unguarded: unguarded.clone(),
            }
        })
        .collect()
}

/// The file that defines the example's function: the one it names (`file`, or its
/// `module`, or the module of a dotted call), else the one source file that defines the
/// function at top level — the changed files first, then the rest of the tree; a test file
/// only when nothing else does.
fn locate(ex: &Example, tree: &TreeFiles<'_>, changed: &[String]) -> Option<String> {
    if let Some(f) = &ex.file {
        return tree.text(f).map(|_| f.clone());
    }
    let module = ex.module.as_deref().or_else(|| ex.dotted_module());
    if let Some(m) = module {
        let stem = m.replace('.', "/");
        let found = [
            format!("{stem}.py"),
            format!("{stem}/__init__.py"),
            format!("src/{stem}.py"),
            format!("src/{stem}/__init__.py"),
        ]
        .into_iter()
        .find(|p| tree.text(p).is_some());
        if found.is_some() {
            return found;
        }
    }
    let function = ex.function()?;
    let defines = |path: &str| {
        let (Some(lang), Some(text)) = (Lang::from_path(path), tree.text(path)) else {
            return false;
        };
        outline(lang, &text)
            .iter()
            .any(|s| s.name == function && matches!(s.kind.as_str(), "function" | "fn"))
    };
    let mut rest: Vec<String> = tree
        .paths()
        .into_iter()
        .filter(|p| Lang::from_path(p).is_some() && !changed.contains(p))
        .take(MAX_FILES_SEARCHED)
        .collect();
    rest.sort_by_key(|p| test_path(p));
    let mut order: Vec<&String> = changed.iter().filter(|p| !test_path(p)).collect();
    order.extend(rest.iter().filter(|p| !test_path(p)));
    order.extend(changed.iter().chain(rest.iter()).filter(|p| test_path(p)));
    order.into_iter().find(|p| defines(p)).cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_example_run_without_the_box_is_no_evidence_and_says_so() {
        let run = |outcome, unguarded: Option<&str>| ExampleRun {
            example: Example {
                call: "f(1)".into(),
                expect: "2".into(),
                module: None,
                file: None,
            },
            file: Some("m.py".into()),
            result: ProbeResult::unprobed("x").with(outcome),
            unguarded: unguarded.map(str::to_string),
        };
        assert_eq!(run(ProbeOutcome::Refuted, None).finding(), None);
        let f = run(
            ProbeOutcome::Refuted,
            Some("the box has no filesystem layer"),
        )
        .finding()
        .unwrap();
        assert_eq!(
            (f.kind.as_str(), f.severity.as_str()),
            (UNGUARDED, "warning")
        );
        assert!(f.reason.contains("no filesystem layer"), "{}", f.reason);
        // A failing example fails, box or not.
        let f = run(ProbeOutcome::Confirmed, Some("x")).finding().unwrap();
        assert_eq!(f.kind, FAILING_EXAMPLE);
    }
}
