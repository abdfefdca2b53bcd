//! `git triad bench --compare`: the pipeline beside the plain test loop on the repository's
//! own task, over real HTTP (the scripted server), real git, a real verify command and a real
//! check: the same model, the same information and as many calls for both, and a claimed
//! success the check fails counted as a false success.

use git_triad::testkit::fake_llm::Reply;
use serde_json::Value;

use crate::common::Run;
use crate::pipeline::{answer, stage, verify_answer, Scenario};
use crate::probes::{BUGGY_CALC, FIX_TASK};

const TESTS: &str = "import unittest\n\nfrom calc import add\n\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n";

/// The check the models never see: `add` adds, on a value the tests do not use.
const CHECK: &str = "python3 -c 'from calc import add; assert add(4, 5) == 9'";

/// A repository with the bug, its failing test and the task; the scripted implementer
/// answers `implement` in order (the pipeline runs before the loop on each task).
fn scenario(implement: Vec<Reply>) -> Scenario {
    let nothing = |s: &str| Reply::text(answer("", s));
    let rules = vec![
        stage("architect", vec![nothing("nothing to scaffold")]),
        stage("implement", implement),
        stage("refactor", vec![nothing("nothing to refactor")]),
        stage("verify", vec![Reply::text(verify_answer())]),
    ];
    let s = Scenario::new(crate::user_output::pinned_usage(rules));
    let task = format!(
        "{FIX_TASK}\n[verify]\ncommand = \"python3 -m unittest discover -s tests -t . -q\"\n"
    );
    s.env.write_files(
        &s.repo,
        &[
            ("calc.py", BUGGY_CALC),
            ("tests/test_calc.py", TESTS),
            ("tests/__init__.py", ""),
            (".triad/tasks/fix-add.toml", &task),
        ],
    );
    s.env.commit_all(&s.repo, "a bug, its test and the task");
    s.git(&["config", "triad.trusted", "true"]);
    s
}

fn fix() -> Reply {
    Reply::text(answer(
        "calc.py\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE\n",
        "fixed add",
    ))
}

/// `run` with each `wall_vs_loop` replaced: a ratio of two wall times varies run to run.
fn without_ratios(run: &Run) -> Run {
    let mut out: Value = serde_json::from_str(run.stdout.trim()).unwrap();
    for section in ["tasks", "configurations"] {
        for row in out[section].as_array_mut().unwrap() {
            if let Some(r) = row.get_mut("wall_vs_loop") {
                assert!(r.as_f64().is_some_and(|x| x > 0.0), "{row}");
                *r = "[RATIO]".into();
            }
        }
    }
    Run {
        code: run.code,
        stdout: out.to_string(),
        stderr: run.stderr.clone(),
    }
}

#[test]
fn the_loop_gets_the_pipelines_model_base_failure_and_calls_and_the_check_finds_its_false_success()
{
    // The pipeline fixes the code; the loop, on its first try, makes the failing test agree
    // with the bug: its command passes, so it claims success, and only the check says no.
    let weaken = Reply::text(answer(
        "tests/test_calc.py\n<<<<<<< SEARCH\n        self.assertEqual(add(2, 3), 5)\n=======\n        self.assertEqual(add(2, 3), -1)\n>>>>>>> REPLACE\n",
        "the test expected the wrong value",
    ));
    let s = scenario(vec![fix(), weaken]);
    let args = [
        "bench",
        "--compare",
        "--task",
        "fix-add",
        "--configs",
        "loop,off",
        "--check",
        CHECK,
        "--format",
        "json",
    ];
    let r = s.env.triad(&s.repo, &args);
    let out: Value = serde_json::from_str(r.ok().stdout.trim()).unwrap();
    let runs = out["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "{out}");
    let (lp, off) = (&runs[0], &runs[1]);
    assert_eq!(lp["config"], "loop");
    assert_eq!(off["config"], "off");
    // The same model, and as many calls as the pipeline made (implement and verify: a bug
    // fix whose failing test is its specification has nothing to plan or refactor): the
    // loop needed one.
    assert_eq!(off["builder"], "model-a", "{out}");
    assert_eq!(lp["builder"], "model-a", "{out}");
    assert_eq!(lp["models"], serde_json::json!(["model-a"]));
    assert_eq!(off["calls"], 2, "{out}");
    assert_eq!(lp["call_budget"], 2, "{out}");
    assert_eq!(lp["calls"], 1, "{out}");
    // The pipeline fixed it; the loop claimed a success its own tests agree with and the
    // check does not.
    assert_eq!(
        (&off["claimed"], &off["fixed"], &off["false_success"]),
        (&Value::Bool(true), &Value::Bool(true), &Value::Bool(false)),
        "{out}\n{}",
        r.stderr
    );
    assert_eq!(off["check_passes"], true);
    assert_eq!(
        (&lp["claimed"], &lp["fixed"], &lp["false_success"]),
        (&Value::Bool(true), &Value::Bool(false), &Value::Bool(true)),
        "{out}"
    );
    assert_eq!(
        (&lp["verify_passes"], &lp["check_passes"]),
        (&Value::Bool(true), &Value::Bool(false))
    );
    // The loop's first try was shown the failure at the base, as the implement stage was.
    let implement = s.requests_for("implement");
    for asked in [implement[0].to_string(), implement[1].to_string()] {
        assert!(
            asked.contains("The verify command fails before any change (a fact)"),
            "{asked}"
        );
        assert!(asked.contains("AssertionError"), "{asked}");
    }
    let rows = out["tasks"].as_array().unwrap();
    assert_eq!(
        (
            &rows[0]["config"],
            &rows[0]["false_success"],
            &rows[0]["fixed"]
        ),
        (&Value::from("loop"), &Value::from(1), &Value::from(0))
    );
    assert!(out["configurations"][1]["wall_vs_loop"].as_f64().unwrap() > 0.0);
    assert!(
        r.stderr
            .contains("bench: fix-add: loop: FALSE SUCCESS (passed, 1 file(s) changed, verify passes, the check fails"),
        "{}",
        r.stderr
    );
    // Both results are branches; the user's tree is untouched.
    let branches = s.git(&["branch", "--list", "triad/fix-add/*"]);
    assert_eq!(branches.lines().count(), 2, "{branches}");
    assert!(s.git(&["status", "--porcelain"]).is_empty());
    let norm = s.env.normalizer().literal(s.server.base_url(), "[SERVER]");
    crate::user_output::check(
        "json-bench-compare",
        &crate::user_output::json_shown(&without_ratios(&r), &args, &norm),
    );
}

#[test]
fn the_table_shows_per_task_what_each_arm_fixed_claimed_and_called() {
    // The loop's first try changes nothing that helps; it is shown the command's failure and
    // fixes it on its second, within the pipeline's two calls.
    let noop = Reply::text(answer(
        "calc.py\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a - b  # sum\n>>>>>>> REPLACE\n",
        "looked at add",
    ));
    let second = Reply::text(answer(
        "calc.py\n<<<<<<< SEARCH\n    return a - b  # sum\n=======\n    return a + b\n>>>>>>> REPLACE\n",
        "fixed add",
    ));
    let s = scenario(vec![fix(), noop, second]);
    let args = [
        "bench",
        "--compare",
        "--task",
        "fix-add",
        "--configs",
        "loop,off",
        "--check",
        CHECK,
    ];
    let r = s.env.triad(&s.repo, &args);
    let retry = s.requests_for("implement")[2].to_string();
    assert!(retry.contains("THE VERIFY COMMAND FAILS"), "{retry}");
    let ratio = r
        .ok()
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("wall time of the pipeline, arbiter off: "))
        .and_then(|l| l.split(' ').next())
        .unwrap_or_else(|| panic!("no wall time ratio in\n{}", r.stdout));
    let norm = s
        .env
        .normalizer()
        .literal(s.server.base_url(), "[SERVER]")
        .literal(
            format!("{ratio} × the plain loop's"),
            "[RATIO] × the plain loop's",
        );
    crate::user_output::check(
        "bench-compare",
        &r.transcript(&crate::user_output::command_line(&args), &norm),
    );
}
