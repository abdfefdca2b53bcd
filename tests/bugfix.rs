//! A run on a bug fix whose failing test is its specification, over real HTTP (the scripted
//! model server) and real git: every failure of the verify command is a fact the builder
//! sees (a hang included), the stages with nothing to do are skipped and say why, and an
//! edit to a failing test is set aside however it was written.

use git_triad::testkit::fake_llm::Reply;
use serde_json::Value;

use crate::pipeline::{answer, happy_rules, run_json, stage, Scenario};

/// `total` with a loop that never ends on a non-empty list.
const HANGING: &str = "def total(xs):\n    \"\"\"The sum of xs.\"\"\"\n    i = 0\n    s = 0\n    while i < len(xs):\n        s += xs[i]\n    return s\n";

const TOTAL_TESTS: &str = "import unittest\n\nfrom sums import total\n\n\nclass T(unittest.TestCase):\n    def test_total(self):\n        self.assertEqual(total([1, 2]), 3)\n";

/// The task, with a verify command that a hang keeps past its 3 seconds.
const TOTAL_TASK: &str = r#"title = "total() never returns"
description = "total([1, 2]) in sums.py never returns; tests/test_sums.py hangs."

[[requirements]]
id = "R1"
text = "total returns the sum of the list"
files = ["sums.py"]
functions = ["total"]

[scope]
include = ["sums.py", "tests/**"]

[verify]
command = "python3 -m unittest discover -s tests -t . -q"
timeout_secs = 3
"#;

/// A trusted repository with the hanging `total`, its test and the task; stages answer as
/// `rules` says.
fn hang_scenario(rules: Vec<git_triad::testkit::fake_llm::Rule>) -> Scenario {
    let s = Scenario::new(rules);
    s.env.write_files(
        &s.repo,
        &[
            ("sums.py", HANGING),
            ("tests/__init__.py", ""),
            ("tests/test_sums.py", TOTAL_TESTS),
            (".triad/tasks/add-sub.toml", TOTAL_TASK),
        ],
    );
    s.env.commit_all(&s.repo, "total, its test and the task");
    s.git(&["config", "triad.trusted", "true"]);
    s
}

/// An implement answer that replaces `from` with `to` in sums.py.
fn sums_edit(from: &str, to: &str, summary: &str) -> String {
    answer(
        &format!("sums.py\n<<<<<<< SEARCH\n{from}\n=======\n{to}\n>>>>>>> REPLACE\n"),
        summary,
    )
}

/// A test that hangs at the base is the task's specification: the builder is shown the
/// timeout before its first attempt, an attempt after which it still hangs is not accepted
/// and is shown the timeout again, and the fix is. The architect and refactor stages have
/// nothing to do on such a bug fix and are skipped, each with why, their attempts going to
/// the implement stage.
#[test]
fn a_hanging_test_is_shown_to_the_builder_and_an_attempt_that_still_hangs_is_not_accepted() {
    let moves_the_docstring = sums_edit(
        "    \"\"\"The sum of xs.\"\"\"",
        "    \"\"\"The sum of the numbers in xs.\"\"\"",
        "clarified total",
    );
    let fixes = sums_edit(
        "        s += xs[i]",
        "        s += xs[i]\n        i += 1",
        "total moves on",
    );
    let mut rules = happy_rules();
    rules[1] = stage(
        "implement",
        vec![Reply::text(moves_the_docstring), Reply::text(fixes)],
    );
    let s = hang_scenario(rules);
    let r = s.run(&[]);
    let out = run_json(&r.ok().stdout);
    assert_eq!(out["status"], "approved", "{out}\n{}", r.stderr);
    assert_eq!(out["stages"][1]["attempts"], 2, "{out}");

    // Shown before the first attempt: the timeout, as a fact.
    let asked = s.requests_for("implement");
    let first = asked[0].to_string();
    assert!(
        first.contains("The verify command fails before any change")
            && first.contains("was killed after 3 s: it did not finish"),
        "{first}"
    );
    // The docstring alone leaves it hanging: not accepted, and the timeout is shown again.
    let second = asked[1].to_string();
    assert!(
        second.contains("THE VERIFY COMMAND STILL FAILS WITH YOUR CHANGE")
            && second.contains("was killed after 3 s"),
        "{second}"
    );
    let branch = out["branch"].as_str().unwrap();
    let code = s.git(&["show", &format!("{branch}:sums.py")]);
    assert!(code.contains("i += 1"), "{code}");

    // Nothing to plan, nothing to refactor: skipped, said, never asked.
    assert!(s.requests_for("architect").is_empty());
    assert!(s.requests_for("refactor").is_empty());
    assert!(
        r.stderr.contains("[architect] skipped: a bug fix")
            && r.stderr.contains("[refactor] skipped: a bug fix"),
        "{}",
        r.stderr
    );
    let record = s.git(&[
        "show",
        &format!("refs/triad/runs/{}:run.json", out["run"].as_str().unwrap()),
    ]);
    let record: Value = serde_json::from_str(&record).unwrap();
    let skipped = |i: usize| {
        record["stages"][i]["skipped"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    assert!(skipped(0).contains("nothing to plan"), "{record}");
    assert!(skipped(2).contains("nothing to refactor"), "{record}");
    // The verifier was asked once.
    assert_eq!(s.requests_for("verify").len(), 1, "{out}");

    // Asked for every stage, they are asked.
    let mut rules = happy_rules();
    rules[0] = stage(
        "architect",
        vec![Reply::text(answer("", "nothing to scaffold"))],
    );
    rules[1] = stage(
        "implement",
        vec![Reply::text(sums_edit(
            "        s += xs[i]",
            "        s += xs[i]\n        i += 1",
            "total moves on",
        ))],
    );
    rules[2] = stage(
        "refactor",
        vec![Reply::text(answer("", "nothing to refactor"))],
    );
    let s = hang_scenario(rules);
    let out = run_json(&s.run(&["-c", "run_idle_stages=true"]).ok().stdout);
    assert_eq!(out["status"], "approved", "{out}");
    assert_eq!(s.requests_for("architect").len(), 1);
    assert_eq!(s.requests_for("refactor").len(), 1);
}

/// A repository whose `add` subtracts, its failing test, and a task to fix it.
const BUGGY: &str = "def add(a, b):\n    return a - b\n";

const ADD_TESTS: &str = "import unittest\n\nfrom calc import add\n\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(*[2, 3]), 5)\n";

const FIX_TASK: &str = r#"title = "Fix add"
description = "add(a, b) must return a + b; tests/test_calc.py fails."

[[requirements]]
id = "R1"
text = "add returns the sum"
files = ["calc.py"]

[scope]
include = ["calc.py", "tests/**"]

[verify]
command = "python3 -m unittest discover -s tests -t . -q"
"#;

/// A trusted repository with the buggy `add`, its failing test and the task to fix it;
/// stages answer as `rules` says.
fn fix_add_scenario(rules: Vec<git_triad::testkit::fake_llm::Rule>) -> Scenario {
    let s = Scenario::new(rules);
    s.env.write_files(
        &s.repo,
        &[
            ("calc.py", BUGGY),
            ("tests/__init__.py", ""),
            ("tests/test_calc.py", ADD_TESTS),
            (".triad/tasks/add-sub.toml", FIX_TASK),
        ],
    );
    s.env
        .commit_all(&s.repo, "a bug, its failing test and the task");
    s.git(&["config", "triad.trusted", "true"]);
    s
}

/// A whole-file answer that rewrites the failing test beside the fix: the test is read-only
/// in the run, so its new text is set aside (told, on the record) and the fix is applied and
/// judged by the facts.
#[test]
fn a_whole_file_answer_that_rewrites_a_read_only_test_is_set_aside_and_the_fix_applied() {
    let whole = "calc.py\n```python\ndef add(a, b):\n    return a + b\n```\n\ntests/test_calc.py\n```python\nimport unittest\n\nfrom calc import add\n\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), -1)\n```\n\n```json\n{\"summary\": \"fixed add and its test\", \"confidence\": 0.8, \"outcome\": \"APPROVE\"}\n```\n";
    let mut rules = happy_rules();
    rules[1] = stage("implement", vec![Reply::text(whole.to_string())]);
    let s = fix_add_scenario(rules);
    let r = s.run(&[
        "-c",
        "models.model-a.edit_format=whole",
        "-c",
        "models.model-a.capabilities=[\"gbnf\"]",
    ]);
    let out = run_json(&r.ok().stdout);
    assert_eq!(out["status"], "approved", "{out}\n{}", r.stderr);
    let asked = s.requests_for("implement");
    assert_eq!(asked.len(), 1, "one call: {out}");
    // On a server that enforces it, the answer's grammar names the files the stage may
    // write, and the read-only test is not one of them.
    let grammar = asked[0]["grammar"].as_str().unwrap_or_default();
    assert!(
        grammar.contains("\"calc.py\"") && !grammar.contains("test_calc.py"),
        "{grammar}"
    );
    let log = s.env.triad(&s.repo, &["log", out["run"].as_str().unwrap()]);
    assert!(
        log.ok()
            .stdout
            .contains("set aside, read-only: tests/test_calc.py"),
        "{}",
        log.stdout
    );
    let branch = out["branch"].as_str().unwrap();
    let test = s.git(&["show", &format!("{branch}:tests/test_calc.py")]);
    assert_eq!(test, ADD_TESTS);
    let code = s.git(&["show", &format!("{branch}:calc.py")]);
    assert!(code.contains("return a + b"), "{code}");
}

/// A fix that makes a call which returned before crash is a regression, whatever the task
/// asked: the attempt is sent back with the call, and the next one is judged again.
#[test]
fn an_implement_attempt_that_makes_a_returning_call_crash_is_sent_back_with_it() {
    let crashes = answer(
        "calc.py\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b if a else 1 // a\n>>>>>>> REPLACE\n",
        "fixed add",
    );
    let fixes = answer(
        "calc.py\n<<<<<<< SEARCH\n    return a + b if a else 1 // a\n=======\n    return a + b\n>>>>>>> REPLACE\n",
        "fixed add for zero too",
    );
    let mut rules = happy_rules();
    rules[1] = stage("implement", vec![Reply::text(crashes), Reply::text(fixes)]);
    let s = fix_add_scenario(rules);
    let r = s.run(&[]);
    let out = run_json(&r.ok().stdout);
    assert_eq!(out["status"], "approved", "{out}\n{}", r.stderr);
    let asked = s.requests_for("implement");
    assert_eq!(asked.len(), 2, "{out}");
    let retry = asked[1].to_string();
    assert!(
        retry.contains("YOUR CHANGE MAKES CALLS THAT RETURNED CRASH OR HANG")
            && retry.contains("add(0, ")
            && retry.contains("raises ZeroDivisionError"),
        "{retry}"
    );
    let branch = out["branch"].as_str().unwrap();
    let code = s.git(&["show", &format!("{branch}:calc.py")]);
    assert!(code.contains("    return a + b\n"), "{code}");
}

/// The verifier of a run whose every fact holds has nothing to fix: an answer of its that
/// cannot be used (here a NEEDS_INFO that asks nothing) is set aside, said on the record, and
/// the stage is asked once.
#[test]
fn a_verifier_with_nothing_to_fix_is_asked_once_and_an_unusable_answer_set_aside() {
    let fixes = answer(
        "calc.py\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE\n",
        "fixed add",
    );
    let asks_nothing = answer("", "not sure").replace("\"APPROVE\"", "\"NEEDS_INFO\"");
    let mut rules = happy_rules();
    rules[1] = stage("implement", vec![Reply::text(fixes)]);
    rules[3] = stage("verify", vec![Reply::text(asks_nothing)]);
    let s = fix_add_scenario(rules);
    let r = s.run(&[]);
    let out = run_json(&r.ok().stdout);
    assert_eq!(out["status"], "approved", "{out}\n{}", r.stderr);
    assert_eq!(s.requests_for("verify").len(), 1, "{out}");
    let log = s.env.triad(&s.repo, &["log", out["run"].as_str().unwrap()]);
    assert!(
        log.ok()
            .stdout
            .contains("the verifier's answer was set aside (You answered NEEDS_INFO but"),
        "{}",
        log.stdout
    );
}

/// A whole-file answer the server cut at its output limit still carries the files it wrote
/// whole: the fix in its first complete block is applied and judged, not asked again.
#[test]
fn a_whole_file_answer_cut_at_the_output_limit_keeps_its_complete_files() {
    let repeats = "tests/__init__.py\n```python\n\n```\n\n".repeat(20);
    let cut = Reply {
        body: Some(serde_json::json!({
            "id": "chatcmpl-cut", "object": "chat.completion", "created": 1_700_000_000u64,
            "model": "model-a",
            "choices": [{"index": 0, "finish_reason": "length", "logprobs": null,
                "message": {"role": "assistant", "refusal": null,
                    "content": format!("calc.py\n```python\ndef add(a, b):\n    return a + b\n```\n\n{repeats}tests/__init__.py\n```python\n")}}],
            "usage": {"prompt_tokens": 900, "completion_tokens": 4000, "total_tokens": 4900},
        })),
        ..Reply::text("")
    };
    let mut rules = happy_rules();
    rules[1] = stage("implement", vec![cut]);
    let s = fix_add_scenario(rules);
    let r = s.run(&["-c", "models.model-a.edit_format=whole"]);
    let out = run_json(&r.ok().stdout);
    assert_eq!(out["status"], "approved", "{out}\n{}", r.stderr);
    assert_eq!(s.requests_for("implement").len(), 1, "{out}");
    let branch = out["branch"].as_str().unwrap();
    let code = s.git(&["show", &format!("{branch}:calc.py")]);
    assert!(code.contains("return a + b"), "{code}");
}
