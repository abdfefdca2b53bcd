//! The stages a task leaves nothing to do, skipped before they are asked: a bug fix whose
//! failing test is its specification needs no plan (the test says what to build) and, once
//! the implement stage's change passes every fact, no refactor. Asking them anyway costs the
//! most calls of a run and changes nothing (seen on the offline default: an architect that
//! planned a change it did not make, a refactor that changed nothing). `run_idle_stages =
//! true` asks every stage.

use super::facts::unmet;
use super::step::{Cx, Journal, RunError};
use super::verify;
use crate::git::TreeFiles;
use crate::pipeline::stage::Stage;
use crate::workflow_name::Workflow;

/// Why `stage`, the stage in progress, has nothing to do in this run, or `None` when it is
/// to be asked: it was asked before in this run (a resumed or rewound stage is the user's
/// or the run's choice), the workflow is not the plain sequence, or the user asked for
/// every stage.
pub(super) fn why_idle(
    cx: &Cx<'_>,
    j: &mut Journal<'_>,
    stage: Stage,
) -> Result<Option<String>, RunError> {
    let record = &j.state.stages()[j.state.current()];
    if cx.env.config.config.run_idle_stages
        || !record.attempts.is_empty()
        || j.state.workflow().kind() != Workflow::Sequential
    {
        return Ok(None);
    }
    if !matches!(stage, Stage::Architect | Stage::Refactor) {
        return Ok(None);
    }
    let Some(failed) = verify::failure_at_base(cx, j)? else {
        return Ok(None);
    };
    let bug_fix = format!(
        "a bug fix: the verify command {failed} at the run's base, so its failing test is the task's specification"
    );
    match stage {
        Stage::Architect => {
            // A function the task names that the base lacks is new code to plan.
            let base = cx.base_tree()?;
            let typed_new = unmet(cx, &base)?.iter().any(|u| u.undefined.is_some());
            if typed_new || !named_calls_exist(cx, &base) {
                return Ok(None);
            }
            Ok(Some(format!(
                "{bug_fix}, and every function it names exists: nothing to plan"
            )))
        }
        Stage::Refactor => {
            let implement = &j.state.stages()[Stage::Implement.index()];
            let passed = j.state.best().filter(|b| {
                b.stage == Stage::Implement && implement.commit.as_ref() == Some(&b.commit)
            });
            Ok(passed.map(|b| {
                format!(
                    "{bug_fix}, and the implement stage's change passes every fact ({}): nothing to refactor",
                    b.facts.join(", ")
                )
            }))
        }
        _ => Ok(None),
    }
}

/// Whether every function the task's text calls by name (`parse_duration("1h30m")`,
/// `sub(a, b)`) is defined in a source file of the task's scope at `base`: a task that names
/// a function the code lacks asks for new code, which is the architect's to plan.
fn named_calls_exist(cx: &Cx<'_>, base: &git2::Tree<'_>) -> bool {
    let spec = &cx.spec;
    let mut text = format!("{}\n{}\n", spec.title, spec.description);
    for r in &spec.requirements {
        text.push_str(&r.text);
        text.push('\n');
    }
    for a in &spec.acceptance {
        text.push_str(a);
        text.push('\n');
    }
    for e in spec.example_calls() {
        text.push_str(&e);
        text.push('\n');
    }
    let called = called_names(&text);
    if called.is_empty() {
        return true;
    }
    let files = TreeFiles::new(cx.repo(), base.clone());
    let mut defined = std::collections::BTreeSet::new();
    for path in files.paths() {
        let Some(lang) = crate::code::Lang::from_path(&path) else {
            continue;
        };
        if !spec.writable(&path) {
            continue;
        }
        if let Some(source) = files.text(&path) {
            defined.extend(
                crate::code::outline(lang, &source)
                    .into_iter()
                    .map(|s| s.name),
            );
        }
    }
    called.iter().all(|c| defined.contains(c))
}

/// The names `text` calls: an identifier (or the last part of a dotted one) right before
/// an opening parenthesis.
fn called_names(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (at, _) in text.match_indices('(') {
        let name: String = text[..at]
            .chars()
            .rev()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect::<Vec<char>>()
            .into_iter()
            .rev()
            .collect();
        let starts_alpha = name
            .chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_');
        if starts_alpha && !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_names_a_task_calls_are_read_from_its_text() {
        assert_eq!(
            called_names(
                "parse_duration(\"1h30m\") raises; textstats.char_count(text) and f (x) (see R1)"
            ),
            ["parse_duration", "char_count"]
        );
    }
}
