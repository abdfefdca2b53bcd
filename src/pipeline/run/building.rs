//! What the facts make of a building stage's change (implement, refactor): the TaskSpec's
//! requirements it leaves undone, and the verify command it breaks. A change that made
//! progress is kept, and the next attempt builds on it; one that made none is asked again
//! from the stage's start; the last attempt goes on with the facts on its record, unless it
//! weakens a test or fails the verify command: that one is never accepted.

use git2::{Oid, Tree};

use super::facts::{run_diff, unmet};
use super::requirements::{advanced, unmet_feedback, Unmet};
use super::step::{Cx, Journal, RunError};
use super::verify;
use super::whole::rewritten_unnamed;
use crate::arbiter::gather::TreeFacts;
use crate::code::Finding;
use crate::git::{ObjectId, TreeFiles};
use crate::pipeline::record::AttemptResult;
use crate::pipeline::stage::Stage;
use crate::probe::ExampleRun;
use crate::sandbox::CommandOutcome;
use crate::task::TaskSpec;

/// The facts `commit` (with `new_tree`, whose tree facts are `facts`) passes, when it passes
/// every fact the run can check and at least one of them is real: the verify command, the
/// acceptance examples, no weakened test, the typed requirements (see
/// [`crate::pipeline::record::Evidenced`]). `None` when one fails or none exists.
pub(super) fn evidenced(
    cx: &Cx<'_>,
    commit: Oid,
    new_tree: &Tree<'_>,
    facts: &TreeFacts,
) -> Result<Option<Vec<String>>, RunError> {
    let mut passed = Vec::new();
    match verify::passes(cx, &ObjectId::from(commit)) {
        Some(false) => return Ok(None),
        Some(true) => passed.push("the verify command passes".to_string()),
        None => {}
    }
    if !facts.weakened.is_empty() || !facts.failing().is_empty() {
        return Ok(None);
    }
    let ran = facts
        .examples
        .iter()
        .filter(|e| e.result.outcome == crate::probe::ProbeOutcome::Refuted)
        .count();
    if ran > 0 {
        passed.push(format!("{ran} acceptance example(s) pass"));
    }
    if !unmet(cx, new_tree)?.is_empty() {
        return Ok(None);
    }
    let typed = super::requirements::checkable(&cx.spec).count();
    if typed > 0 {
        passed.push(format!("{typed} typed requirement(s) met"));
    }
    if passed.is_empty() {
        return Ok(None);
    }
    passed.push("no test the base had is weakened".into());
    Ok(Some(passed))
}

/// What becomes of a building stage's attempt.
pub(super) enum Held {
    /// It goes on: `notes` go on its record, `findings` travel as flags to later stages.
    GoesOn {
        /// What the facts say it leaves undone or breaks (empty when nothing).
        notes: String,
        /// The requirements it leaves undone, as findings.
        findings: Vec<Finding>,
    },
    /// Its retries ran out and it still breaks what the run's best evidenced commit
    /// passed: dropped, and the run goes on from that commit.
    Dropped {
        /// Why, for the stage's record and the run's end.
        why: String,
    },
    /// It is asked again.
    Again {
        /// How the attempt is recorded.
        result: AttemptResult,
        /// Its record's detail.
        detail: String,
        /// What the next attempt is told.
        feedback: String,
        /// Whether the next attempt builds on this change (it made progress, or only
        /// broke the command) rather than on the stage's start.
        keep: bool,
    },
}

/// Holds the building stage's attempt `epoch_n`, committed as `commit` with `new_tree`,
/// to the facts. `whole`: the model writes whole files (the feedback says how to answer);
/// `noop`: the answer changed nothing in the files it was shown.
#[allow(clippy::too_many_arguments)]
pub(super) fn hold(
    cx: &Cx<'_>,
    j: &mut Journal<'_>,
    stage: Stage,
    commit: Oid,
    new_tree: &Tree<'_>,
    facts: &TreeFacts,
    whole: bool,
    noop: bool,
    epoch_n: u32,
) -> Result<Held, RunError> {
    let mut unmet = unmet(cx, new_tree)?;
    if stage == Stage::Implement && refactor_follows(j) {
        // Tests are the refactor stage's to write: the implement stage builds the code.
        unmet.retain(|u| !u.about_tests());
    }
    let failing = facts.failing();
    let gaps = unmet
        .iter()
        .map(|u| u.why.as_str())
        .collect::<Vec<_>>()
        .join("; ");
    let retries_left = epoch_n <= j.state.retries_at(j.state.current());
    let progressed = stage == Stage::Implement && advanced(&cx.spec, &unmet);
    if !unmet.is_empty() && !progressed && retries_left {
        let feedback =
            unmet_feedback(&unmet, &cx.spec, whole, false) + &instead(cx, new_tree, &unmet)?;
        return Ok(Held::Again {
            result: AttemptResult::Incomplete,
            detail: gaps,
            feedback,
            keep: false,
        });
    }
    let broken = verify::fails(cx, j, &ObjectId::from(commit))?;
    let status = broken.as_ref().map(|(b, _)| {
        b.exit_code
            .map_or("killed".to_string(), |c| format!("exit {c}"))
    });
    let shown = !failing.is_empty() || !facts.weakened.is_empty();
    // A refactor keeps what the code does: its changed functions, run on the stage's start
    // and on its change with the same inputs, must give the same results.
    let since_start = behaviour_since_start(cx, j, new_tree)?;
    let altered = since_start.clone().filter(|_| stage == Stage::Refactor);
    // A building stage changes what the requirements ask: a function none of them names
    // that now gives other results on the same inputs is a change nobody asked for.
    let named = cx.spec.named_functions();
    let unasked = since_start
        .as_ref()
        .filter(|_| stage == Stage::Implement)
        .and_then(|d| Some((d.outside(&named), d.unasked(&named)?)));
    // And a call that returned at the stage's start and now raises or never returns is a
    // regression, whatever the task asked.
    let regressions: Vec<&crate::probe::Difference> = since_start
        .iter()
        .filter(|_| stage == Stage::Implement)
        .flat_map(|d| d.differences.iter().filter(|d| d.regression))
        .collect();
    // An attempt that weakens a test, fails the verify command or (a refactor) changes what
    // the code does is never accepted, however many attempts it took: the facts say it is
    // broken, and a later stage would spend its calls on a broken tree. Once retries run
    // out the run escalates (or goes on from its best evidenced commit) instead.
    let never = !facts.weakened.is_empty() || broken.is_some() || altered.is_some();
    let asked_again = retries_left && (!unmet.is_empty() || broken.is_some() || shown);
    let behaviour_against = unasked.is_some() || !regressions.is_empty();
    if asked_again || never || (retries_left && behaviour_against) {
        let mut feedback = String::new();
        let mut detail = Vec::new();
        let mut result = AttemptResult::Failing;
        if !regressions.is_empty() {
            feedback.push_str(&regressed_feedback(&regressions));
            detail.push(format!(
                "{} call(s) that returned before now raise or never return ({}: before {}, now {})",
                regressions.len(),
                regressions[0].call,
                regressions[0].before,
                regressions[0].after
            ));
        }
        if let Some((diff, f)) = &unasked {
            feedback.push_str(&unasked_feedback(&cx.spec, diff));
            detail.push(f.reason.clone());
        }
        if let Some(diff) = &altered {
            feedback.push_str(&format!(
                "## YOUR REFACTOR CHANGES WHAT THE CODE DOES\n\nA refactor keeps behaviour. Your changed functions were run before and after your change on the same inputs:\n{}\nKeep the results the same.\n",
                diff.render().unwrap_or_default()
            ));
            detail.push(format!(
                "it changes what the code does: {} input(s) give other results ({}: before {}, now {})",
                diff.differences.len(),
                diff.differences[0].call,
                diff.differences[0].before,
                diff.differences[0].after
            ));
        }
        if !facts.weakened.is_empty() {
            feedback.push_str(&weakened_feedback(&facts.weakened));
            detail.push(format!(
                "it weakens {} test(s) the base had",
                facts.weakened.len()
            ));
        }
        if !failing.is_empty() {
            feedback.push_str(&failing_examples_feedback(&failing));
            detail.push(format!(
                "{} acceptance example(s) fail: {}",
                failing.len(),
                failing[0].result.counterexample()
            ));
        }
        if !unmet.is_empty() {
            feedback.push_str(&unmet_feedback(&unmet, &cx.spec, whole, true));
            feedback.push_str(&instead(cx, new_tree, &unmet)?);
            detail.push(gaps.clone());
            result = AttemptResult::Incomplete;
        }
        if let (Some((b, passed_at_base)), Some(status)) = (&broken, &status) {
            let before = if *passed_at_base {
                Before::Passed
            } else {
                Before::Failed
            };
            feedback.push_str(&failing_feedback(
                b,
                &cx.spec,
                noop,
                before,
                verify::timeout(cx),
            ));
            detail.push(format!("the verify command fails with it ({status})"));
        }
        detail.push("kept for the next attempt".into());
        return Ok(Held::Again {
            result,
            detail: detail.join("; "),
            feedback,
            keep: true,
        });
    }
    if j.state.best().is_some() && (!unmet.is_empty() || !failing.is_empty()) {
        let mut why = Vec::new();
        if !failing.is_empty() {
            why.push(format!(
                "{} acceptance example(s) fail ({})",
                failing.len(),
                failing[0].result.counterexample()
            ));
        }
        if !unmet.is_empty() {
            why.push(gaps.clone());
        }
        return Ok(Held::Dropped {
            why: format!(
                "its change still breaks what the best evidenced commit passed after its retries: {}",
                why.join("; ")
            ),
        });
    }
    let mut notes = String::new();
    if !unmet.is_empty() {
        notes.push_str(&format!(" (facts: {gaps})"));
    }
    for f in facts.findings() {
        notes.push_str(&format!(" (facts: {})", f.reason));
    }
    if let Some(status) = status {
        notes.push_str(&format!(
            " (facts: the verify command fails with this change, {status})"
        ));
    }
    let mut findings: Vec<Finding> = unmet.iter().map(Unmet::finding).collect();
    findings.extend(facts.findings());
    if let Some((_, f)) = &unasked {
        // Retries ran out: it goes on, said in its record; the review's own behaviour diff
        // makes it a finding.
        notes.push_str(&format!(" (facts: {})", f.reason));
    }
    if let Some(d) = regressions.first() {
        notes.push_str(&format!(
            " (facts: {}: before {}, now {})",
            d.call, d.before, d.after
        ));
    }
    Ok(Held::GoesOn { notes, findings })
}

/// Whether a refactor stage comes after the stage in progress in this run (it writes the
/// tests the implement stage leaves).
fn refactor_follows(j: &Journal<'_>) -> bool {
    j.state.stages()[j.state.current() + 1..]
        .iter()
        .any(|s| s.stage == Stage::Refactor)
}

/// What an attempt is told when a call that returned at the stage's start now raises or
/// never returns with its change.
fn regressed_feedback(regressions: &[&crate::probe::Difference]) -> String {
    let mut s = "## YOUR CHANGE MAKES CALLS THAT RETURNED CRASH OR HANG\n\nThe functions you changed were run before and after your change on the same inputs:\n".to_string();
    for d in regressions.iter().take(crate::bounded::LIST_ITEMS) {
        s.push_str(&format!("- {}\n", d.shown()));
    }
    s.push_str("A call that returned before must still return: fix the code so it does.\n");
    s
}

/// What an attempt is told when it changed functions no requirement names.
fn unasked_feedback(spec: &TaskSpec, diff: &crate::probe::BehaviourDiff) -> String {
    format!(
        "## YOUR CHANGE ALTERS FUNCTIONS THE TASK DOES NOT ASK TO CHANGE\n\nThe requirements name {}. Other functions you changed were run before and after your change on the same inputs:\n{}\nKeep what they do as it was: change only what a requirement asks.\n",
        spec.named_functions().join(", "),
        diff.render().unwrap_or_default()
    )
}

/// The behaviour diff of a building stage's change (from the stage's start to `new_tree`)
/// when it shows inputs whose results differ; `None` when it changes nothing that was run,
/// or the code cannot run here (an untrusted clone).
fn behaviour_since_start(
    cx: &Cx<'_>,
    j: &Journal<'_>,
    new_tree: &Tree<'_>,
) -> Result<Option<crate::probe::BehaviourDiff>, RunError> {
    let start = cx.tree(j.state.tip(), "reading the stage's start")?;
    let repo = cx.repo();
    let diff = crate::git::diff_trees(repo, Some(&start), new_tree).map_err(|source| {
        crate::git::GitError::Git {
            what: "diffing the stage".into(),
            source,
        }
    })?;
    let changed = crate::arbiter::gather::changed_lines(&diff);
    let runner = crate::probe::ProbeRunner::new(repo, new_tree.clone(), cx.probe_policy())
        .about_change(changed, Some(start));
    let examples = cx.spec.example_calls();
    // Taken once per tree pair: the review of this attempt reads the same diff.
    Ok(match cx.behaviours.of(&runner, &examples) {
        Some(Ok(diff)) if !diff.differences.is_empty() => Some(diff),
        Some(Err(why)) => {
            tracing::warn!("the stage's behaviour could not be compared: {why}");
            None
        }
        _ => None,
    })
}

/// When the change leaves functions the requirements name undefined, what it rewrote
/// instead: the functions of the run's change, up to `new_tree`, that the TaskSpec never
/// names, as a sentence for the retry (empty when none).
fn instead(cx: &Cx<'_>, new_tree: &Tree<'_>, unmet: &[Unmet]) -> Result<String, RunError> {
    let missing: Vec<&str> = unmet
        .iter()
        .filter_map(|u| u.undefined.as_deref())
        .collect();
    if missing.is_empty() {
        return Ok(String::new());
    }
    let repo = cx.repo();
    let base = cx.base_tree()?;
    let (before, after) = (
        TreeFiles::new(repo, base),
        TreeFiles::new(repo, new_tree.clone()),
    );
    let mut rewritten = Vec::new();
    for file in run_diff(cx, new_tree)? {
        if let (Some(old), Some(new)) = (before.text(&file.path), after.text(&file.path)) {
            for name in rewritten_unnamed(&file.path, &old, &new, &cx.spec) {
                rewritten.push(format!("{name} in {}", file.path));
            }
        }
    }
    if rewritten.is_empty() {
        return Ok(String::new());
    }
    Ok(format!(
        "Instead, your change rewrote {}, which the task does not name. Leave {} as it was, \
and add {} as a new definition of its own.\n",
        rewritten.join(", "),
        if rewritten.len() == 1 { "it" } else { "them" },
        missing.join(", ")
    ))
}

/// How the verify command fared at the run's base.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Before {
    /// It passed: the change broke it.
    Passed,
    /// It failed too: the task is to make it pass.
    Failed,
}

/// What a building stage is told when the verify command fails with its work: how it fails
/// (its output and the files it points at are the request's own section, on the files the
/// next attempt is shown), that the work so far is kept in the files shown, that the tests
/// the repository had are evidence to satisfy (only a test the run added may be wrong), and
/// the TaskSpec's acceptance criteria to check such a test against. `noop`: the answer
/// changed nothing; `timeout`: the command's, for a failure that is a timeout.
fn failing_feedback(
    outcome: &CommandOutcome,
    spec: &TaskSpec,
    noop: bool,
    before: Before,
    timeout: Option<std::time::Duration>,
) -> String {
    let status = verify::how_it_failed(outcome, timeout);
    let (heading, opening) = if noop {
        (
            "THE VERIFY COMMAND FAILS, AND YOUR ANSWER CHANGED NOTHING",
            "Your answer changed no file, so the command still fails. ",
        )
    } else if before == Before::Failed {
        ("THE VERIFY COMMAND STILL FAILS WITH YOUR CHANGE", "")
    } else {
        ("YOUR CHANGE MAKES THE VERIFY COMMAND FAIL", "")
    };
    let base = match before {
        Before::Passed => "at the run's base it passed",
        Before::Failed => "it failed at the run's base too: making it pass is the task",
    };
    let mut s = format!(
        "## {heading}\n\n{opening}The files above hold the stage's work so far (your previous \
answers' changes are kept). With them, `{}` {status}; {base}. Its output is shown above, under \
\"The verify command on the files below\".\n",
        outcome.command
    );
    s.push_str(
        "Fix the code. A test the repository already had is evidence: never delete it or change \
what it expects. A test this run added may itself be wrong: check its expected value against \
the task",
    );
    let examples = spec.all_examples();
    if examples.is_empty() && spec.acceptance.is_empty() {
        s.push_str(".\n");
    } else {
        s.push_str("'s acceptance criteria:\n");
        for e in &examples {
            s.push_str(&format!("- {}\n", e.text()));
        }
        for a in spec
            .acceptance
            .iter()
            .filter(|a| crate::task::Example::from_criterion(a).is_none())
        {
            s.push_str(&format!("- {a}\n"));
        }
    }
    s.push_str("Write the corrected files in your answer format; keep the rest of the change.\n");
    s
}

/// What a building stage is told when its change weakens tests the base had: each one,
/// with what the base asserted, to restore.
fn weakened_feedback(weakened: &[Finding]) -> String {
    let mut s = "## YOUR CHANGE WEAKENS THE REPOSITORY'S TESTS\n\nTests are evidence: a change may add tests, but never delete one or change what an existing assertion expects. Restore these as the base had them, and fix the code instead:\n".to_string();
    for f in weakened {
        s.push_str(&format!("- {}:{}: {}\n", f.path, f.line, f.reason));
    }
    s
}

/// What a building stage is told when the task's acceptance examples fail against its
/// change: each as a counterexample (call, expected, actual), run against its code.
fn failing_examples_feedback(failing: &[&ExampleRun]) -> String {
    let mut s = "## THE TASK'S ACCEPTANCE EXAMPLES FAIL WITH YOUR CHANGE\n\nEach was run against your code (call: expected, got):\n".to_string();
    for e in failing {
        s.push_str(&format!("- {}\n", e.result.counterexample()));
    }
    s.push_str("Fix the code so that each call returns the value the task gives.\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_is_told_with_how_it_failed_and_what_the_task_accepts() {
        let outcome = CommandOutcome::ended(
            "python3 -m unittest",
            Some(1),
            (1..=50).map(|i| format!("line {i}\n")).collect::<String>(),
        );
        let spec = TaskSpec::parse(
            "title = \"t\"\nacceptance = [\"f('a b') == 2\"]\n",
            ".triad/tasks/t.toml",
            "t",
        )
        .unwrap();
        let text = failing_feedback(&outcome, &spec, false, Before::Passed, None);
        assert!(
            text.starts_with("## YOUR CHANGE MAKES THE VERIFY COMMAND FAIL"),
            "{text}"
        );
        assert!(
            text.contains("exits with 1; at the run's base it passed"),
            "{text}"
        );
        assert!(
            text.contains("never delete it or change what it expects"),
            "{text}"
        );
        assert!(
            text.contains("acceptance criteria:\n- f('a b') == 2\n"),
            "{text}"
        );
        let noop = failing_feedback(&outcome, &spec, true, Before::Passed, None);
        let still = failing_feedback(&outcome, &spec, false, Before::Failed, None);
        assert!(
            still.starts_with("## THE VERIFY COMMAND STILL FAILS WITH YOUR CHANGE")
                && still.contains("it failed at the run's base too: making it pass is the task"),
            "{still}"
        );
        let hung = CommandOutcome {
            exit_code: None,
            timed_out: true,
            tail: String::new(),
            ..outcome.clone()
        };
        let hung = failing_feedback(
            &hung,
            &spec,
            false,
            Before::Failed,
            Some(std::time::Duration::from_secs(20)),
        );
        assert!(
            hung.contains("was killed after 20 s: it did not finish"),
            "{hung}"
        );
        assert!(noop.contains("YOUR ANSWER CHANGED NOTHING"), "{noop}");
    }
}
