//! Claims you can run: the arbiter's probes, the TaskSpec's examples and the repository's
//! tests as evidence, over real HTTP (the scripted server), real git and a real Python.

use git_triad::testkit::fake_llm::Reply;
use serde_json::{json, Value};

use crate::pipeline::{
    answer, arbiter, architect_answer, happy_rules, refactor_answer, review, run_json, stage,
    verify_answer, Scenario,
};

/// An implement answer that defines `sub` with `body`.
fn sub_answer(body: &str) -> String {
    answer(
        &format!("calc.py\n<<<<<<< SEARCH\n    raise NotImplementedError\n=======\n    {body}\n>>>>>>> REPLACE\n"),
        "implement sub()",
    )
}

/// A critical logic issue on `sub`'s body line with `probe`.
fn probed_issue(desc: &str, quote: &str, probe: &str) -> Value {
    json!({"severity": "critical", "category": "logic", "path": "calc.py", "start_line": 7,
           "end_line": 7, "quote": quote, "description": desc, "suggestion": "fix it",
           "evidence": "read the code", "probe": probe})
}

/// A scenario whose implement stage answers `implement` and is reviewed (`--arbiter full`)
/// with `reviews`; every other stage answers as the happy path and is approved.
fn reviewed_implement(implement: Vec<Reply>, reviews: Vec<Value>, trusted: bool) -> Scenario {
    let approve = || review("APPROVE", json!([]));
    let rules = vec![
        stage("architect", vec![Reply::text(architect_answer())]),
        stage("implement", implement),
        stage("refactor", vec![Reply::text(refactor_answer())]),
        stage("verify", vec![Reply::text(verify_answer())]),
        arbiter("architect", vec![approve()]),
        arbiter("implement", reviews),
        arbiter("refactor", vec![approve()]),
        arbiter("verify", vec![approve()]),
    ];
    let s = Scenario::new(rules);
    // No acceptance example: what is shown here is the arbiter's own probe.
    s.env.write_files(
        &s.repo,
        &[(
            ".triad/tasks/add-sub.toml",
            &crate::pipeline::TASK.replace("acceptance = [\"sub(3, 1) == 2\"]\n", ""),
        )],
    );
    s.env.commit_all(&s.repo, "the task without its example");
    if trusted {
        s.git(&["config", "triad.trusted", "true"]);
    }
    s
}

/// A correct `sub` reviewed once (`--arbiter full`) with `issue`: the scenario, the run's
/// JSON and the implement stage's note.
fn one_review(issue: Value, trusted: bool) -> (Scenario, Value, Value) {
    let s = reviewed_implement(
        vec![Reply::text(sub_answer("return a - b"))],
        vec![review("REJECT", json!([issue]))],
        trusted,
    );
    let out = run_json(&s.run(&["--arbiter", "full"]).ok().stdout);
    let note = notes(&s, &out)
        .into_iter()
        .find(|n| n["stage"] == "implement")
        .expect("the implement note");
    (s, out, note)
}

/// Every verdict note of the run `out`, accepted or rejected attempts alike.
fn notes(s: &Scenario, out: &Value) -> Vec<Value> {
    let list = s.git(&["notes", "--ref=triad", "list"]);
    let mut all = Vec::new();
    for line in list.lines() {
        let Some(object) = line.split_whitespace().nth(1) else {
            continue;
        };
        let text = s.git(&["notes", "--ref=triad", "show", object]);
        for l in text.lines().filter(|l| l.starts_with('{')) {
            let v: Value = serde_json::from_str(l).unwrap();
            if v["run"] == out["run"] {
                all.push(v);
            }
        }
    }
    all
}

#[test]
fn a_critical_claim_whose_probe_fails_stands_and_the_retry_shows_the_counterexample() {
    let bug = probed_issue("sub adds", "    return a + b", "assert sub(3, 1) == 2");
    let s = reviewed_implement(
        vec![
            Reply::text(sub_answer("return a + b")),
            Reply::text(sub_answer("return a - b")),
        ],
        vec![review("REJECT", json!([bug])), review("APPROVE", json!([]))],
        true,
    );
    let out = run_json(&s.run(&["--arbiter", "full"]).ok().stdout);
    assert_eq!(out["status"], "approved", "{out}");
    assert_eq!(out["stages"][1]["attempts"], 2, "{out}");
    let retry = s.requests_for("implement")[1].to_string();
    assert!(
        retry.contains("COUNTEREXAMPLES (each was run against your code and fails)"),
        "{retry}"
    );
    assert!(retry.contains("sub(3, 1): expected 2, got 4"), "{retry}");
    let rejected = notes(&s, &out)
        .into_iter()
        .find(|n| n["verdict"] == "REJECT")
        .expect("the REJECT note");
    let probe = &rejected["issues"][0]["probe"];
    assert_eq!(probe["outcome"], "confirmed", "{rejected}");
    assert_eq!(probe["actual"], "4", "{rejected}");
    assert_eq!(probe["code"], "assert sub(3, 1) == 2", "{rejected}");
}

#[test]
fn a_claim_whose_probe_passes_is_refuted_and_the_verdict_is_derived_without_it() {
    // The claim is wrong: its probe (what sub should do) passes on the reviewed code.
    let wrong = probed_issue(
        "sub is wrong for 3 and 1",
        "    return a - b",
        "assert sub(3, 1) == 2",
    );
    let (s, out, note) = one_review(wrong, true);
    assert_eq!(out["status"], "approved", "{out}");
    assert_eq!(out["stages"][1]["attempts"], 1, "{out}");
    assert_eq!(note["model_verdict"], "REJECT", "{note}");
    assert_eq!(note["verdict"], "APPROVE", "{note}");
    assert_eq!(note["issues"][0]["probe"]["outcome"], "refuted", "{note}");
    assert!(
        note["issues"][0]["demoted"]
            .as_str()
            .unwrap()
            .starts_with("checked: its probe passes"),
        "{note}"
    );
    let reasons = note["derived"]["reasons"].to_string();
    assert!(
        reasons.contains("checked by their probes: not defects"),
        "{reasons}"
    );
    // `log` shows the derived verdict beside the model's.
    let log = s.env.triad(&s.repo, &["log", out["run"].as_str().unwrap()]);
    assert!(
        log.ok()
            .stdout
            .contains("[probe refuted: the probe passes: every assertion holds] [does not count]"),
        "{}",
        log.stdout
    );
}

#[test]
fn a_broken_probe_counts_for_nothing_and_an_unshown_claim_only_flags() {
    let broken = probed_issue(
        "sub is wrong",
        "    return a - b",
        "assert subtract(3, 1) == 2",
    );
    let (_s, out, note) = one_review(broken, true);
    assert_eq!(out["status"], "flagged", "{out}");
    assert_eq!(note["verdict"], "FLAG", "{note}");
    let probe = &note["issues"][0]["probe"];
    assert_eq!(probe["outcome"], "broken", "{note}");
    assert!(
        probe["detail"].as_str().unwrap().contains("NameError"),
        "{note}"
    );
    assert!(
        note["derived"]["reasons"]
            .to_string()
            .contains("without a confirmed probe support at most FLAG"),
        "{note}"
    );
}

#[test]
fn an_untrusted_clone_runs_no_probe_and_says_so() {
    let bug = probed_issue("sub is wrong", "    return a - b", "assert sub(3, 1) == 2");
    let (s, out, note) = one_review(bug, false);
    // The claim is not shown, so it flags and the run goes on; nothing was run.
    assert_eq!(out["stages"][1]["attempts"], 1, "{out}");
    assert_eq!(note["verdict"], "FLAG", "{note}");
    let probe = &note["issues"][0]["probe"];
    assert_eq!(probe["outcome"], "unprobed", "{note}");
    assert!(
        probe["detail"].as_str().unwrap().contains("not trusted"),
        "{note}"
    );
    // The arbiter was told probes are recorded, not run.
    let asked = s.requests_for("arbiter-implement")[0].to_string();
    assert!(asked.contains("Probes are recorded but not run"), "{asked}");
}

/// The task with an acceptance example written as `[[examples]]`.
const TASK_WITH_EXAMPLE: &str = r#"title = "Add subtraction"
description = "calc.py needs a sub function."

[[requirements]]
id = "R1"
text = "sub(a, b) returns a - b"
functions = ["sub"]

[[examples]]
call = "sub(10, 4)"
expect = "6"

[scope]
include = ["calc.py", "tests/**"]
"#;

#[test]
fn an_acceptance_example_failing_at_the_implement_stage_is_fed_back_with_its_actual_value() {
    let mut rules = happy_rules();
    rules[1] = stage(
        "implement",
        vec![
            Reply::text(sub_answer("return a + b")),
            // The failing change is kept: the fix is an edit on top of it.
            Reply::text(answer(
                "calc.py\n<<<<<<< SEARCH\n    \"\"\"Return a minus b.\"\"\"\n    return a + b\n=======\n    \"\"\"Return a minus b.\"\"\"\n    return a - b\n>>>>>>> REPLACE\n",
                "fix sub()",
            )),
        ],
    );
    let s = Scenario::new(rules);
    s.env
        .write_files(&s.repo, &[(".triad/tasks/add-sub.toml", TASK_WITH_EXAMPLE)]);
    s.env.commit_all(&s.repo, "a task with an example");
    s.git(&["config", "triad.trusted", "true"]);
    let out = run_json(&s.run(&[]).ok().stdout);
    assert_eq!(out["status"], "approved", "{out}");
    assert_eq!(out["stages"][1]["attempts"], 2, "{out}");
    let retry = s.requests_for("implement")[1].to_string();
    assert!(
        retry.contains("THE TASK'S ACCEPTANCE EXAMPLES FAIL WITH YOUR CHANGE"),
        "{retry}"
    );
    assert!(retry.contains("sub(10, 4): expected 6, got 14"), "{retry}");
    let log = s.env.triad(&s.repo, &["log", out["run"].as_str().unwrap()]);
    assert!(
        log.ok()
            .stdout
            .contains("1 acceptance example(s) fail: sub(10, 4): expected 6, got 14"),
        "{}",
        log.stdout
    );
}

/// A repository whose `add` has a bug its test catches, and a task to fix it.
pub(crate) const BUGGY_CALC: &str = "def add(a, b):\n    return a - b\n";
const CALC_TESTS: &str = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n";
pub(crate) const FIX_TASK: &str = r#"title = "Fix add"
description = "add(a, b) must return a + b; tests/test_calc.py fails."

[[requirements]]
id = "R1"
text = "add returns the sum"
files = ["calc.py"]

[scope]
include = ["calc.py", "tests/**"]
"#;

#[test]
fn a_stage_that_rewrites_an_expected_value_or_deletes_a_test_is_refused_with_the_old_assertion() {
    let tampered = answer(
        "tests/test_calc.py\n<<<<<<< SEARCH\n    assert add(2, 3) == 5\n=======\n    assert add(2, 3) == -1\n>>>>>>> REPLACE\n\ntests/test_calc.py\n<<<<<<< SEARCH\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n=======\n>>>>>>> REPLACE\n\ncalc.py\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a - b  # checked\n>>>>>>> REPLACE\n",
        "made the tests pass",
    );
    let fixed = answer(
        "tests/test_calc.py\n<<<<<<< SEARCH\n    assert add(2, 3) == -1\n=======\n    assert add(2, 3) == 5\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n>>>>>>> REPLACE\n\ncalc.py\n<<<<<<< SEARCH\n    return a - b  # checked\n=======\n    return a + b\n>>>>>>> REPLACE\n",
        "restored the tests and fixed add",
    );
    let mut rules = happy_rules();
    rules[0] = stage(
        "architect",
        vec![Reply::text(answer(
            "",
            "nothing to scaffold: a one-line fix",
        ))],
    );
    rules[1] = stage("implement", vec![Reply::text(tampered), Reply::text(fixed)]);
    rules[2] = stage(
        "refactor",
        vec![Reply::text(answer("", "nothing to refactor"))],
    );
    let s = Scenario::new(rules);
    s.env.write_files(
        &s.repo,
        &[
            ("calc.py", BUGGY_CALC),
            ("tests/test_calc.py", CALC_TESTS),
            (".triad/tasks/add-sub.toml", FIX_TASK),
        ],
    );
    s.env.commit_all(&s.repo, "a bug and its test");
    let out = run_json(&s.run(&[]).ok().stdout);
    assert_eq!(out["stages"][1]["attempts"], 2, "{out}");
    let retry = s.requests_for("implement")[1].to_string();
    assert!(
        retry.contains("YOUR CHANGE WEAKENS THE REPOSITORY'S TESTS"),
        "{retry}"
    );
    assert!(
        retry.contains("rewrites the expected value of `add(2, 3)` from 5 to -1 (the base had `assert add(2, 3) == 5`)"),
        "{retry}"
    );
    assert!(retry.contains("deletes the test `test_zero`"), "{retry}");
    let branch = out["branch"].as_str().unwrap();
    let tests = s.git(&["show", &format!("{branch}:tests/test_calc.py")]);
    assert!(
        tests.contains("assert add(2, 3) == 5") && tests.contains("def test_zero"),
        "the tests end as the base had them: {tests}"
    );
}

#[test]
fn a_rejection_the_facts_decide_is_explained_by_the_facts_not_the_model_s_prose() {
    // The verify command fails at every commit; the arbiter approves with "fine".
    let mut rules = happy_rules();
    rules[5] = arbiter(
        "verify",
        vec![
            json!({"verdict": "APPROVE", "confidence": 0.9, "reasoning": "fine",
                    "issues": [], "alternatives": []}),
        ],
    );
    let s = Scenario::new(rules);
    s.env.write_files(
        &s.repo,
        &[(
            ".triad/tasks/add-sub.toml",
            &format!(
                "{}\n[verify]\ncommand = \"exit 7\"\n",
                crate::pipeline::TASK
            ),
        )],
    );
    s.env.commit_all(&s.repo, "a task whose command fails");
    s.git(&["config", "triad.trusted", "true"]);
    // Only the Verify stage runs it (the building stages would be held to it first).
    let r = s.run(&["--max-retries", "0", "-c", "verify.while_building=false"]);
    let out = run_json(&r.stdout);
    let message = out["message"].as_str().unwrap();
    assert!(
        message.contains(
            "failed 1 attempt (the last: the facts: verify command `exit 7` exited with 7)"
        ),
        "{out}"
    );
    assert!(!message.contains("the last: fine"), "{out}");
    let log = s.env.triad(&s.repo, &["log", out["run"].as_str().unwrap()]);
    assert!(
        log.stdout
            .contains("rejected REJECT — the facts: verify command `exit 7` exited with 7"),
        "{}",
        log.stdout
    );
}

#[test]
fn task_new_writes_examples_a_run_reads_back_as_typed_facts() {
    let s = Scenario::new(happy_rules());
    let r = s.env.triad(
        &s.repo,
        &[
            "task",
            "new",
            "add-mul",
            "--title",
            "Add mul",
            "--example",
            "mul(3, 2) == 6",
            "--example",
            "mul('a', 2) == 'aa'",
        ],
    );
    r.ok();
    let text = std::fs::read_to_string(s.repo.join(".triad/tasks/add-mul.toml")).unwrap();
    let spec = git_triad::task::TaskSpec::parse(&text, "add-mul.toml", "add-mul").unwrap();
    let examples: Vec<String> = spec.examples.iter().map(|e| e.text()).collect();
    assert_eq!(examples, ["mul(3, 2) == 6", "mul('a', 2) == 'aa'"]);
    let bad = s.env.triad(
        &s.repo,
        &["task", "new", "x", "--title", "X", "--example", "it works"],
    );
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert!(bad.stderr.contains("is not an example"), "{}", bad.stderr);
}

#[test]
fn a_bug_fix_whose_tests_still_fail_is_shown_the_failure_like_a_test_loop() {
    // The base's test fails in the task's own files: the task is to make it pass, so an
    // implement stage that leaves it failing is asked again with the command's output.
    let unfixed = answer(
        "calc.py\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a - b  # looked\n>>>>>>> REPLACE\n",
        "looked at add",
    );
    let fixed = answer(
        "calc.py\n<<<<<<< SEARCH\n    return a - b  # looked\n=======\n    return a + b\n>>>>>>> REPLACE\n",
        "fixed add",
    );
    let mut rules = happy_rules();
    rules[0] = stage(
        "architect",
        vec![Reply::text(answer("", "nothing to scaffold"))],
    );
    rules[1] = stage("implement", vec![Reply::text(unfixed), Reply::text(fixed)]);
    rules[2] = stage(
        "refactor",
        vec![Reply::text(answer("", "nothing to refactor"))],
    );
    let s = Scenario::new(rules);
    let task = format!(
        "{FIX_TASK}\n[verify]\ncommand = \"python3 -m unittest discover -s tests -t . -q\"\n"
    );
    s.env.write_files(
        &s.repo,
        &[
            ("calc.py", BUGGY_CALC),
            (
                "tests/test_calc.py",
                "import unittest\n\nfrom calc import add\n\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n",
            ),
            ("tests/__init__.py", ""),
            (".triad/tasks/add-sub.toml", &task),
        ],
    );
    s.env
        .commit_all(&s.repo, "a bug, its failing test and the task");
    s.git(&["config", "triad.trusted", "true"]);
    let out = run_json(&s.run(&[]).ok().stdout);
    assert_eq!(out["status"], "approved", "{out}");
    assert_eq!(out["stages"][1]["attempts"], 2, "{out}");
    // The first attempt is shown the failure it must fix, as a fact, before it starts.
    let first = s.requests_for("implement")[0].to_string();
    assert!(
        first.contains("The verify command fails before any change (a fact)"),
        "{first}"
    );
    assert!(first.contains("AssertionError: -1 != 5"), "{first}");
    let retry = s.requests_for("implement")[1].to_string();
    assert!(
        retry.contains("THE VERIFY COMMAND STILL FAILS WITH YOUR CHANGE"),
        "{retry}"
    );
    assert!(retry.contains("AssertionError: -1 != 5"), "{retry}");
}

#[test]
fn an_example_is_not_passed_by_a_forged_result_or_an_always_equal_value() {
    let forgers = [
        // A value equal to everything.
        "class Same:\n        def __eq__(self, other):\n            return True\n    return Same()",
        // A module that writes a passing verdict wherever it can and ends the process on
        // import, before any example runs.
        "return a + b\n\n\nimport glob, os\nfor f in glob.glob('../work/*'):\n    open(f, 'a').write('{\"kind\": \"done\"}\\n')\nos._exit(0)",
    ];
    for forger in forgers {
        let mut rules = happy_rules();
        rules[1] = stage(
            "implement",
            vec![Reply::text(answer(
                &format!("calc.py\n<<<<<<< SEARCH\n    raise NotImplementedError\n=======\n    {forger}\n>>>>>>> REPLACE\n"),
                "implement sub()",
            ))],
        );
        let s = Scenario::new(rules);
        s.env
            .write_files(&s.repo, &[(".triad/tasks/add-sub.toml", TASK_WITH_EXAMPLE)]);
        s.env.commit_all(&s.repo, "a task with an example");
        s.git(&["config", "triad.trusted", "true"]);
        let r = s.run(&[]);
        let out = run_json(&r.stdout);
        assert_ne!(out["status"], "approved", "{forger}: {out}");
        let retry = s.requests_for("implement")[1].to_string();
        assert!(
            retry.contains("THE TASK'S ACCEPTANCE EXAMPLES FAIL WITH YOUR CHANGE"),
            "{forger}: {retry}"
        );
    }
}

#[test]
fn a_confirmed_probe_makes_an_approve_or_a_flag_a_reject() {
    for model_verdict in ["APPROVE", "FLAG"] {
        let bug = json!({"severity": "warning", "category": "logic", "path": "calc.py",
                         "start_line": 7, "end_line": 7, "quote": "    return a + b",
                         "description": "sub adds", "suggestion": "subtract",
                         "evidence": "read it", "probe": "assert sub(3, 1) == 2"});
        let s = reviewed_implement(
            vec![
                Reply::text(sub_answer("return a + b")),
                Reply::text(sub_answer("return a - b")),
            ],
            vec![
                review(model_verdict, json!([bug])),
                review("APPROVE", json!([])),
            ],
            true,
        );
        let out = run_json(&s.run(&["--arbiter", "full"]).ok().stdout);
        assert_eq!(out["stages"][1]["attempts"], 2, "{model_verdict}: {out}");
        let rejected = notes(&s, &out)
            .into_iter()
            .find(|n| n["attempt"] == 1 && n["stage"] == "implement")
            .expect("the first implement note");
        assert_eq!(rejected["verdict"], "REJECT", "{rejected}");
        assert_eq!(rejected["issues"][0]["probe"]["outcome"], "confirmed");
        assert!(
            rejected["floor"]["reasons"]
                .to_string()
                .contains("its probe confirms it"),
            "{rejected}"
        );
    }
}

#[test]
fn a_probe_that_proves_nothing_about_the_change_does_not_count() {
    for probe in [
        "assert False",
        "assert 1 == 2",
        "import calc\ncalc.sub = lambda a, b: 0\nassert calc.sub(3, 1) == 2",
    ] {
        let claim = probed_issue("sub is wrong", "    return a - b", probe);
        let (_s, out, note) = one_review(claim, true);
        // Unshown, the claim supports a FLAG at most; it is never a REJECT.
        assert_eq!(out["status"], "flagged", "{probe}: {out}");
        assert_eq!(
            note["issues"][0]["probe"]["outcome"], "irrelevant",
            "{probe}: {note}"
        );
        assert_eq!(note["verdict"], "FLAG", "{probe}: {note}");
    }
}

/// A repository whose `add` subtracts, its failing unittest, and the fix task with its
/// verify command; stages answer as `rules` says.
fn bug_fix_scenario(rules: Vec<git_triad::testkit::fake_llm::Rule>) -> Scenario {
    let s = Scenario::new(rules);
    let task = format!(
        "{FIX_TASK}\n[verify]\ncommand = \"python3 -m unittest discover -s tests -t . -q\"\n"
    );
    s.env.write_files(
        &s.repo,
        &[
            ("calc.py", BUGGY_CALC),
            (
                "tests/test_calc.py",
                "import unittest\n\nfrom calc import add\n\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n",
            ),
            ("tests/__init__.py", ""),
            (".triad/tasks/add-sub.toml", &task),
        ],
    );
    s.env
        .commit_all(&s.repo, "a bug, its failing test and the task");
    s.git(&["config", "triad.trusted", "true"]);
    s
}

#[test]
fn a_test_that_fails_at_the_base_is_read_only_for_the_building_stages() {
    // The implementer edits the failing test instead of the code, then fixes the code.
    let edits_the_test = answer(
        "tests/test_calc.py\n<<<<<<< SEARCH\n        self.assertEqual(add(2, 3), 5)\n=======\n        self.assertEqual(add(2, 3), -1)\n>>>>>>> REPLACE\n",
        "made the test agree",
    );
    let fixed = answer(
        "calc.py\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE\n",
        "fixed add",
    );
    let mut rules = happy_rules();
    rules[0] = stage(
        "architect",
        vec![Reply::text(answer("", "nothing to scaffold"))],
    );
    rules[1] = stage(
        "implement",
        vec![Reply::text(edits_the_test), Reply::text(fixed)],
    );
    rules[2] = stage(
        "refactor",
        vec![Reply::text(answer("", "nothing to refactor"))],
    );
    let s = bug_fix_scenario(rules);
    let out = run_json(&s.run(&[]).ok().stdout);
    assert_eq!(out["status"], "approved", "{out}");
    // The stage was told before it started, and its edit was refused before any check ran
    // (no verify command ran on it: it was never committed).
    let first = s.requests_for("implement")[0].to_string();
    assert!(
        first.contains("Read-only in this run (an edit to them is refused): tests/test_calc.py"),
        "{first}"
    );
    let retry = s.requests_for("implement")[1].to_string();
    assert!(
        retry.contains("read-only in this run: it is a test that fails at the run's base"),
        "{retry}"
    );
    let log = s.env.triad(&s.repo, &["log", out["run"].as_str().unwrap()]);
    assert!(log.ok().stdout.contains("edits_failed"), "{}", log.stdout);
    // A TaskSpec that lets the stages change that test says so: `[scope] read_only = []`.
    let spec = s.git(&["show", "HEAD:.triad/tasks/add-sub.toml"]);
    assert!(!spec.contains("read_only"), "{spec}");
    // The test is shown apart from the files the stage may change, after them.
    let current = first
        .split("## Current files")
        .nth(1)
        .and_then(|t| t.split("## Read-only files").next())
        .unwrap_or_default();
    assert!(current.contains("calc.py"), "{first}");
    assert!(!current.contains("tests/test_calc.py"), "{first}");
    let locked = first.split("## Read-only files").nth(1).unwrap_or_default();
    assert!(locked.contains("tests/test_calc.py"), "{first}");
}

#[test]
fn a_fix_written_beside_an_edit_of_a_read_only_test_is_tried_without_it() {
    // One answer rewrites the failing test's expectation and fixes the code: the test edit is
    // set aside (told, on the record), the fix applies and the facts judge it.
    let both = answer(
        "tests/test_calc.py\n<<<<<<< SEARCH\n        self.assertEqual(add(2, 3), 5)\n=======\n        self.assertEqual(add(2, 3), -1)\n>>>>>>> REPLACE\n\ncalc.py\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE\n",
        "fixed add and its test",
    );
    let mut rules = happy_rules();
    rules[0] = stage(
        "architect",
        vec![Reply::text(answer("", "nothing to scaffold"))],
    );
    rules[1] = stage("implement", vec![Reply::text(both)]);
    rules[2] = stage(
        "refactor",
        vec![Reply::text(answer("", "nothing to refactor"))],
    );
    let s = bug_fix_scenario(rules);
    let out = run_json(&s.run(&[]).ok().stdout);
    assert_eq!(out["status"], "approved", "{out}");
    assert_eq!(s.requests_for("implement").len(), 1, "one call: {out}");
    let log = s.env.triad(&s.repo, &["log", out["run"].as_str().unwrap()]);
    assert!(
        log.ok()
            .stdout
            .contains("set aside, read-only: tests/test_calc.py"),
        "{}",
        log.stdout
    );
    // The result holds the fix and the test as it was.
    let branch = out["branch"].as_str().unwrap();
    let test = s.git(&["show", &format!("{branch}:tests/test_calc.py")]);
    assert!(test.contains("add(2, 3), 5)"), "{test}");
    let code = s.git(&["show", &format!("{branch}:calc.py")]);
    assert!(code.contains("return a + b"), "{code}");
}

#[test]
fn an_answer_that_writes_a_read_only_test_back_unchanged_is_not_refused() {
    // A small model's habit: the failing test written back as it is, beside the fix. The
    // echo changes nothing, so nothing is refused or set aside.
    let echo_and_fix = answer(
        "tests/test_calc.py\n<<<<<<< SEARCH\n        self.assertEqual(add(2, 3), 5)\n=======\n        self.assertEqual(add(2, 3), 5)\n>>>>>>> REPLACE\n\ncalc.py\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE\n",
        "fixed add",
    );
    let mut rules = happy_rules();
    rules[0] = stage(
        "architect",
        vec![Reply::text(answer("", "nothing to scaffold"))],
    );
    rules[1] = stage("implement", vec![Reply::text(echo_and_fix)]);
    rules[2] = stage(
        "refactor",
        vec![Reply::text(answer("", "nothing to refactor"))],
    );
    let s = bug_fix_scenario(rules);
    let out = run_json(&s.run(&[]).ok().stdout);
    assert_eq!(out["status"], "approved", "{out}");
    assert_eq!(s.requests_for("implement").len(), 1, "one call: {out}");
    let log = s.env.triad(&s.repo, &["log", out["run"].as_str().unwrap()]);
    assert!(!log.ok().stdout.contains("set aside"), "{}", log.stdout);
}

#[test]
fn an_attempt_that_still_weakens_a_test_is_never_accepted() {
    // Every answer rewrites the expected value; retries run out with nothing to go back to.
    let weakens = answer(
        "tests/test_calc.py\n<<<<<<< SEARCH\n    assert add(2, 3) == 5\n=======\n    assert add(2, 3) == -1\n>>>>>>> REPLACE\n",
        "made the test pass",
    );
    let mut rules = happy_rules();
    rules[0] = stage(
        "architect",
        vec![Reply::text(answer("", "nothing to scaffold"))],
    );
    rules[1] = stage("implement", vec![Reply::text(weakens)]);
    let s = Scenario::new(rules);
    s.env.write_files(
        &s.repo,
        &[
            ("calc.py", BUGGY_CALC),
            ("tests/test_calc.py", CALC_TESTS),
            (".triad/tasks/add-sub.toml", FIX_TASK),
        ],
    );
    s.env.commit_all(&s.repo, "a bug and the task");
    let r = s.run(&["--max-retries", "1"]);
    let out = run_json(&r.stdout);
    assert_ne!(out["status"], "approved", "{out}");
    assert_ne!(out["status"], "flagged", "{out}");
    assert!(
        out["stages"][1]["commit"].is_null(),
        "never accepted: {out}"
    );
    assert_eq!(out["stages"][1]["attempts"], 2, "{out}");
    assert_eq!(
        s.requests_for("refactor").len(),
        0,
        "no later stage spent a call"
    );
}

#[test]
fn a_fix_that_also_changes_a_function_no_requirement_names_is_retried_then_flagged() {
    // The fix is right, but the answer also changes `clamp`, which the task never mentions:
    // run before and after on the same inputs, it gives other results.
    let calc = "def add(a, b):\n    return a - b\n\n\ndef clamp(x):\n    return max(x, 0)\n";
    let fix_and_more = answer(
        "calc.py\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE\n\ncalc.py\n<<<<<<< SEARCH\n    return max(x, 0)\n=======\n    return abs(x)\n>>>>>>> REPLACE\n",
        "fixed add, tidied clamp",
    );
    let mut rules = happy_rules();
    rules[0] = stage(
        "architect",
        vec![Reply::text(answer("", "nothing to scaffold"))],
    );
    rules[1] = stage("implement", vec![Reply::text(fix_and_more)]);
    rules[2] = stage(
        "refactor",
        vec![Reply::text(answer("", "nothing to refactor"))],
    );
    let s = bug_fix_scenario(rules);
    let task = format!(
        "{}functions = [\"add\"]\n{}",
        &FIX_TASK[..FIX_TASK.find("\n[scope]").unwrap() + 1],
        "\n[scope]\ninclude = [\"calc.py\", \"tests/**\"]\n[verify]\ncommand = \"python3 -m unittest discover -s tests -t . -q\"\n"
    );
    s.env.write_files(
        &s.repo,
        &[("calc.py", calc), (".triad/tasks/add-sub.toml", &task)],
    );
    s.env
        .commit_all(&s.repo, "a second function the task does not name");
    let out = run_json(&s.run(&["--max-retries", "1"]).ok().stdout);
    // Retried with the inputs that differ (once, and twice more for the architect stage the
    // bug fix skipped), then it goes on flagged: the fix holds.
    assert_eq!(s.requests_for("implement").len(), 4, "{out}");
    let retry = s.requests_for("implement")[1].to_string();
    assert!(
        retry.contains("YOUR CHANGE ALTERS FUNCTIONS THE TASK DOES NOT ASK TO CHANGE"),
        "{retry}"
    );
    assert!(retry.contains("clamp("), "{retry}");
    assert_eq!(out["status"], "flagged", "{out}");
    let branch = out["branch"].as_str().unwrap();
    assert!(s
        .git(&["show", &format!("{branch}:calc.py")])
        .contains("return a + b"));
    let log = s.env.triad(&s.repo, &["log", out["run"].as_str().unwrap()]);
    assert!(
        log.ok()
            .stdout
            .contains("it changes what clamp does, which no requirement names"),
        "{}",
        log.stdout
    );
    let notes = notes(&s, &out);
    assert!(
        notes
            .iter()
            .any(|n| n.to_string().contains("unasked_behaviour_change")),
        "{notes:?}"
    );
}
