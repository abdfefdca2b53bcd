//! The verify command in a run (whether it runs is [`crate::pipeline::verify`]'s to say):
//! run in the box on a scratch copy of a commit of the run, its result recorded as a fact, and
//! where a failing one's output points among the task's files.

use git2::Tree;

use super::step::{Cx, Journal, RunError};
use crate::git::export::run_boxed;
use crate::git::{ObjectId, TreeFiles};
use crate::pipeline::observer::Progress;
use crate::pipeline::record::RunState;
use crate::pipeline::verify::VerifyPlan;
use crate::privacy::mask_key_shaped;
use crate::redact::redact;
use crate::sandbox::CommandOutcome;

/// Lines of the command's output kept for the record and the arbiter.
const TAIL_LINES: usize = 60;

/// What the verifier is told when the command fails: that is an outright defect, the one
/// thing its stage exists to fix, and nothing else makes the run pass.
const FAILING: &str =
    "\nThe command FAILS, so the run cannot pass as it is: no review can approve a failing \
command. This is an outright defect: fix it now by changing the file the output points at (the \
code, or a test this run added whose expected value contradicts the TaskSpec's acceptance \
criteria; the tests the repository already had are evidence and stay as they are), in your \
answer format, and say in `summary` what you fixed. The command runs again on your fix.\n";

/// Runs the verify command at `tip` and records its outcome (a fact for the verifier
/// and the arbiter).
pub(super) fn run(cx: &Cx<'_>, j: &mut Journal<'_>, tip: ObjectId) -> Result<(), RunError> {
    let Some(outcome) = command_at(cx, &tip) else {
        if let VerifyPlan::Skip(why) = &cx.env.verify {
            cx.progress(&Progress::VerifySkipped { why: *why });
        }
        return Ok(());
    };
    j.state.set_sandbox(outcome.layers.clone());
    j.state.record_verify(outcome, tip);
    j.event("verify command ran")?;
    Ok(())
}

/// Whether the verify command passes at `at` (run once per commit; `None` when no command
/// runs, or it is off while building).
pub(super) fn passes(cx: &Cx<'_>, at: &ObjectId) -> Option<bool> {
    if !cx.env.config.config.verify.while_building {
        return None;
    }
    command_at(cx, at).map(|o| o.exit_code == Some(0))
}

/// Whether the verify command passes at `at`, run even when it is off while building
/// (`None` when no command runs): a commit the run falls back to must pass it, whatever
/// the building stages were held to.
pub(super) fn passes_at(cx: &Cx<'_>, at: &ObjectId) -> Option<bool> {
    command_at(cx, at).map(|o| o.exit_code == Some(0))
}

/// The verify command's failure at a building stage's commit `at`, and whether the command passed at the run's base (asked once, the first time
/// a stage fails it). Every failure counts, however it fails (an exit, a crash, a timeout,
/// with or without a file named): when the base failed too, an attempt is measured against
/// that failure, and one that still fails has not fixed it. (A failure that names no file
/// used to be taken as outside the task and waved through: a test that hangs names none,
/// and a builder never shown it accepted a change that only moved a docstring.) `None`
/// when it passes, does not run, or is off while building (`verify.while_building`).
pub(super) fn fails(
    cx: &Cx<'_>,
    j: &mut Journal<'_>,
    at: &ObjectId,
) -> Result<Option<(CommandOutcome, bool)>, RunError> {
    if !cx.env.config.config.verify.while_building {
        return Ok(None);
    }
    let Some(outcome) = command_at(cx, at) else {
        return Ok(None);
    };
    j.state.set_sandbox(outcome.layers.clone());
    if outcome.exit_code == Some(0) {
        return Ok(None);
    }
    let passed_at_base = at_base(cx, j)?.is_none_or(|o| o.exit_code == Some(0));
    Ok(Some((outcome, passed_at_base)))
}

/// How the verify command failed at the run's base (`exits with 1`, `was killed after
/// 20 s: …`), when it runs while building and failed there: a bug fix's specification.
pub(super) fn failure_at_base(
    cx: &Cx<'_>,
    j: &mut Journal<'_>,
) -> Result<Option<String>, RunError> {
    if !cx.env.config.config.verify.while_building {
        return Ok(None);
    }
    Ok(at_base(cx, j)?
        .filter(|o| o.exit_code != Some(0))
        .map(|o| how_it_failed(&o, timeout(cx))))
}

/// How a failed command ended, in words a builder can act on: its exit code, or that it was
/// killed by its timeout (`timeout`), which for a test suite usually means a call that never
/// returns.
pub(super) fn how_it_failed(
    outcome: &CommandOutcome,
    timeout: Option<std::time::Duration>,
) -> String {
    match (outcome.exit_code, outcome.timed_out) {
        (_, true) => format!(
            "was killed after {}: it did not finish, so something it runs never returns (an endless loop or recursion?)",
            timeout.map_or("its time limit".to_string(), |t| format!("{} s", t.as_secs()))
        ),
        (Some(c), _) => format!("exits with {c}"),
        (None, _) => match &outcome.stopped_by {
            Some(by) => format!("was stopped by the box's {by}"),
            None => "was killed".to_string(),
        },
    }
}

/// The end of a failed command's output as a builder is shown it: its last `lines`, or a
/// note that it printed nothing.
pub(super) fn output_end(outcome: &CommandOutcome, lines: usize) -> String {
    let all: Vec<&str> = outcome.tail.lines().collect();
    if all.iter().all(|l| l.trim().is_empty()) {
        return "(it printed nothing)".to_string();
    }
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// The verify command's timeout in this run, when it runs.
pub(super) fn timeout(cx: &Cx<'_>) -> Option<std::time::Duration> {
    match &cx.env.verify {
        VerifyPlan::Run { timeout, .. } => Some(*timeout),
        VerifyPlan::Skip(_) => None,
    }
}

/// Runs the verify command in the box on a scratch copy of `at`, with progress; `None`
/// when the run's plan is not to run one. Its output is masked: the command runs code a
/// model wrote, which may have read a key from a file, and the output goes to records and
/// models.
fn command_at(cx: &Cx<'_>, at: &ObjectId) -> Option<CommandOutcome> {
    let VerifyPlan::Run { command, timeout } = &cx.env.verify else {
        return None;
    };
    if let Some(known) = cx.verified.borrow().get(at) {
        return Some(known.clone());
    }
    cx.progress(&Progress::VerifyStarted { command, at });
    let mut outcome = match cx.tree(at, "reading the commit the verify command runs at") {
        Ok(tree) => {
            let policy = &cx.env.config.config.sandbox;
            run_boxed(cx.repo(), &tree, command, *timeout, TAIL_LINES, policy).1
        }
        Err(e) => CommandOutcome::not_run(command, format!("cannot read the commit: {e}")),
    };
    outcome.tail = mask_key_shaped(&outcome.tail).into_owned();
    outcome.command = redact(&outcome.command).into_owned();
    cx.progress(&Progress::VerifyFinished { outcome: &outcome });
    // A command killed by its timeout may pass on a quieter machine: only an exit is kept.
    if outcome.exit_code.is_some() {
        cx.verified.borrow_mut().insert(at.clone(), outcome.clone());
    }
    Some(outcome)
}

/// The verify command's outcome at the run's base (run once per process, see
/// [`Cx::verified`]; recorded in the state as whether it passed). `None` when no command
/// runs.
fn at_base(cx: &Cx<'_>, j: &mut Journal<'_>) -> Result<Option<CommandOutcome>, RunError> {
    let base = j.state.base().clone();
    let asked = cx.verified.borrow().contains_key(&base);
    let outcome = command_at(cx, &base);
    if let (false, Some(o)) = (asked, &outcome) {
        // Asked once however it ended: the base is only what the stages are measured from.
        cx.verified.borrow_mut().insert(base, o.clone());
        j.state.set_base_verify(o.exit_code == Some(0));
        j.event("verify command ran at the run's base")?;
    }
    Ok(outcome)
}

/// The paths (globs) the building stages may not change in this run: the TaskSpec's
/// `[scope] read_only` when it sets one; else the tests that fail at the run's base (the test
/// files the verify command's failure there points at; every test file of the base when it
/// points at none, as a suite that hangs does), less the files a requirement names.
/// A failing test at the base is the specification of a bug fix: a stage that edits it
/// instead of the code (seen three times in a row on a small model) proves nothing.
pub(super) fn read_only(cx: &Cx<'_>, j: &mut Journal<'_>) -> Result<Vec<String>, RunError> {
    if let Some(list) = &cx.spec.scope.read_only {
        return Ok(list.clone());
    }
    if !cx.env.config.config.verify.while_building {
        return Ok(Vec::new());
    }
    let Some(outcome) = at_base(cx, j)?.filter(|o| o.exit_code != Some(0)) else {
        return Ok(Vec::new());
    };
    let named: Vec<&String> = cx.spec.requirements.iter().flat_map(|r| &r.files).collect();
    let base = cx.base_tree()?;
    let pointed: Vec<String> = pointed(cx, &outcome.tail, &base)
        .into_iter()
        .map(|p| p.path)
        .filter(|p| crate::code::test_path(p) && !named.contains(&p))
        .collect();
    if !pointed.is_empty() {
        return Ok(pointed);
    }
    // A failure that names no test (a suite killed by its timeout prints nothing) leaves
    // every test the base has as the specification.
    Ok(TreeFiles::new(cx.repo(), base)
        .paths()
        .into_iter()
        .filter(|p| {
            crate::code::test_path(p)
                && crate::code::Lang::from_path(p).is_some()
                && cx.spec.writable(p)
                && !named.contains(&p)
        })
        .collect())
}

/// What a building stage is told before it starts when the verify command already fails
/// at the run's base (a bug fix's failing test, a test that hangs): the command, how it
/// failed and the end of its output, as a fact. A builder that is not shown the failure it
/// must fix guesses (seen: a small model wrote the test file back unchanged three times); a
/// test loop shows it. Empty when the command passes, does not run, or is off while
/// building.
pub(super) fn base_failure(cx: &Cx<'_>, j: &mut Journal<'_>) -> Result<String, RunError> {
    if !cx.env.config.config.verify.while_building {
        return Ok(String::new());
    }
    let base_tree = cx.base_tree()?;
    let Some(outcome) = at_base(cx, j)? else {
        return Ok(String::new());
    };
    if outcome.exit_code == Some(0) {
        return Ok(String::new());
    }
    let pointed = pointed(cx, &outcome.tail, &base_tree);
    let read_only = read_only(cx, j)?;
    let locked = if read_only.is_empty() {
        String::new()
    } else {
        format!(
            "Read-only in this run (an edit to them is refused): {}.\n",
            read_only.join(", ")
        )
    };
    Ok(format!(
        "## The verify command fails before any change (a fact)\n`{}` {} at the run's base. The end of its output:\n```\n{}\n```\n{}Make it pass by fixing the code; the tests the repository already has are evidence and stay as they are.\n{locked}",
        outcome.command,
        how_it_failed(&outcome, timeout(cx)),
        output_end(&outcome, 30),
        points_at(&pointed)
    ))
}

/// What a building stage's attempt is told of the verify command before it answers: how it
/// failed on the files the attempt is shown, as a test loop shows the last run. On the
/// stage's draft (an earlier attempt's change, kept because it failed the command) that is
/// the draft's run; else the failure at the run's base ([`base_failure`]).
pub(super) fn last_failure(cx: &Cx<'_>, j: &mut Journal<'_>) -> Result<String, RunError> {
    let draft = j.state.stages()[j.state.current()].draft.clone();
    let Some(draft) = draft.filter(|_| cx.env.config.config.verify.while_building) else {
        return base_failure(cx, j);
    };
    let Some(outcome) = command_at(cx, &draft).filter(|o| o.exit_code != Some(0)) else {
        return base_failure(cx, j);
    };
    let tree = cx.tree(&draft, "reading the stage's draft")?;
    Ok(format!(
        "## The verify command on the files below, as they are now (a fact)\n`{}` {}. The end of its output:\n```\n{}\n```\n{}",
        outcome.command,
        how_it_failed(&outcome, timeout(cx)),
        output_end(&outcome, 30),
        points_at(&pointed(cx, &outcome.tail, &tree))
    ))
}

/// Where the failing command's output `tail` points, in the tree it ran at.
fn pointed_at_verify(cx: &Cx<'_>, state: &RunState, tail: &str) -> String {
    let tree = (state.verify_at()).and_then(|at| cx.tree(at, "").ok());
    tree.map_or_else(String::new, |t| points_at(&pointed(cx, tail, &t)))
}

/// The verify command's result as the verifier is shown it.
pub(super) fn shown(cx: &Cx<'_>, state: &RunState) -> String {
    match (state.verify(), &cx.env.verify) {
        (Some(v), _) => {
            let mut s = format!(
                "## Verify command result (a fact)\ncommand: {}\nexit code: {}\noutput tail:\n{}\n",
                v.command,
                v.exit_code
                    .map_or("none (killed)".to_string(), |c| c.to_string()),
                v.tail
            );
            if v.exit_code != Some(0) {
                s.push_str(&pointed_at_verify(cx, state, &v.tail));
                s.push_str(FAILING);
            }
            s
        }
        (None, VerifyPlan::Skip(why)) => {
            format!("## Verify command\nnot run: {}\n", why.describe())
        }
        (None, VerifyPlan::Run { .. }) => {
            "## Verify command\nnot run: no verify command is configured\n".into()
        }
    }
}

/// A place a failing command's output names: a file of the task, the line it gives, and
/// that line's text (when the file may be shown to a model).
pub(super) struct Pointed {
    /// The file, from the repository's root.
    pub path: String,
    /// The 1-based line the output gives.
    pub line: Option<u32>,
    /// The line's text, trimmed.
    pub text: Option<String>,
}

/// Where a failing command's `output` points among the task's files of `tree`.
pub(super) fn pointed(cx: &Cx<'_>, output: &str, tree: &Tree<'_>) -> Vec<Pointed> {
    let files = TreeFiles::new(cx.repo(), tree.clone());
    pointed_at(output, &scope_paths(cx, tree))
        .into_iter()
        .map(|(path, line)| {
            let text = line.and_then(|n| {
                let body = files.text(&path)?;
                if cx.privacy.check(&path, Some(body.as_bytes())).is_some() {
                    return None;
                }
                let at = (n as usize).checked_sub(1)?;
                body.lines().nth(at).map(|l| l.trim().to_string())
            });
            Pointed { path, line, text }
        })
        .collect()
}

/// Where a failing command's output points, as lines for a model (empty when nowhere).
pub(super) fn points_at(pointed: &[Pointed]) -> String {
    if pointed.is_empty() {
        return String::new();
    }
    let mut s = "The output points at:\n".to_string();
    for p in pointed {
        match (p.line, &p.text) {
            (Some(n), Some(text)) => s.push_str(&format!("- {} line {n}: `{text}`\n", p.path)),
            (Some(n), None) => s.push_str(&format!("- {} line {n}\n", p.path)),
            _ => s.push_str(&format!("- {}\n", p.path)),
        }
    }
    s
}

/// The files of `paths` a command's output names, in the order it first names them, each
/// with the line it gives (`File "…/x.py", line 8` as Python prints it, `x.rs:8:` as
/// compilers and most runners do). A path counts only whole: `textstats.py` is not named by
/// `test_textstats.py`.
fn pointed_at(output: &str, paths: &[String]) -> Vec<(String, Option<u32>)> {
    let mut found: Vec<(usize, String, Option<u32>)> = Vec::new();
    for path in paths {
        let hit = output.match_indices(path.as_str()).find(|(at, _)| {
            let before = output[..*at].chars().next_back();
            let after = output[at + path.len()..].chars().next();
            let edge =
                |c: Option<char>| !c.is_some_and(|c| c.is_alphanumeric() || "_.-".contains(c));
            edge(before) && edge(after)
        });
        if let Some((at, _)) = hit {
            let rest = &output[at + path.len()..];
            let digits = |s: &str| {
                let n: String = s.chars().take_while(char::is_ascii_digit).collect();
                n.parse().ok()
            };
            let line = rest
                .strip_prefix("\", line ")
                .or_else(|| rest.strip_prefix(':'))
                .and_then(digits);
            found.push((at, path.clone(), line));
        }
    }
    found.sort();
    found.into_iter().map(|(_, p, l)| (p, l)).collect()
}

/// The files of `tree` the TaskSpec lets the stages change.
fn scope_paths(cx: &Cx<'_>, tree: &Tree<'_>) -> Vec<String> {
    TreeFiles::new(cx.repo(), tree.clone())
        .paths()
        .into_iter()
        .filter(|p| cx.spec.writable(p) && cx.privacy.by_name(p).is_none())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths() -> Vec<String> {
        ["textstats.py", "tests/test_textstats.py", "src/lib.rs"]
            .map(String::from)
            .to_vec()
    }

    #[test]
    fn the_end_of_a_failed_command_is_its_last_lines_or_that_it_printed_nothing() {
        let outcome = |tail: &str| CommandOutcome {
            timed_out: true,
            ..CommandOutcome::ended("make test", None, tail)
        };
        let long: String = (1..=50).map(|i| format!("line {i}\n")).collect();
        let end = output_end(&outcome(&long), 30);
        assert!(
            end.starts_with("line 21\n") && end.ends_with("line 50"),
            "{end}"
        );
        assert_eq!(output_end(&outcome("\n  \n"), 30), "(it printed nothing)");
        assert_eq!(
            how_it_failed(&outcome(""), Some(std::time::Duration::from_secs(3))),
            "was killed after 3 s: it did not finish, so something it runs never returns (an endless loop or recursion?)"
        );
    }

    #[test]
    fn the_files_a_failure_names_are_found_whole_with_their_lines() {
        let python = "Traceback (most recent call last):\n  File \"/tmp/git-triad-verify-x/wt/tests/test_textstats.py\", line 8, in test_word_count\nNameError: name 'word_count' is not defined\n";
        assert_eq!(
            pointed_at(python, &paths()),
            [("tests/test_textstats.py".to_string(), Some(8))]
        );
        let rust = "error[E0425]: cannot find value `x`\n --> src/lib.rs:12:5\n";
        assert_eq!(
            pointed_at(rust, &paths()),
            [("src/lib.rs".to_string(), Some(12))]
        );
        let both = "FAIL textstats.py\nsee ./tests/test_textstats.py\n";
        assert_eq!(
            pointed_at(both, &paths()),
            [
                ("textstats.py".to_string(), None),
                ("tests/test_textstats.py".to_string(), None)
            ]
        );
        assert!(pointed_at("all my_textstats.py.bak broke", &paths()).is_empty());
    }
}
