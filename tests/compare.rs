//! `git triad bench --compare`: the plain test loop beside the pipeline on the repository's
//! own task, over real HTTP (the scripted server), real git and a real verify command.

use git_triad::testkit::fake_llm::Reply;
use serde_json::Value;

use crate::pipeline::{answer, arbiter, review, stage, verify_answer, Scenario};
use crate::probes::{BUGGY_CALC, FIX_TASK};

const TESTS: &str = "import unittest\n\nfrom calc import add\n\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n";

#[test]
fn the_plain_loop_and_the_pipeline_are_judged_by_the_same_facts() {
    let fix = answer(
        "calc.py\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE\n",
        "fixed add",
    );
    let nothing = |s: &str| Reply::text(answer("", s));
    let rules = vec![
        stage("architect", vec![nothing("nothing to scaffold")]),
        // The loop's first try changes nothing that helps; its second fixes it. The
        // pipeline's implement stage then fixes it at once.
        stage(
            "implement",
            vec![
                Reply::text(answer(
                    "calc.py\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a - b  # sum\n>>>>>>> REPLACE\n",
                    "looked at add",
                )),
                Reply::text(answer(
                    "calc.py\n<<<<<<< SEARCH\n    return a - b  # sum\n=======\n    return a + b\n>>>>>>> REPLACE\n",
                    "fixed add",
                )),
                Reply::text(fix),
            ],
        ),
        stage("refactor", vec![nothing("nothing to refactor")]),
        stage("verify", vec![Reply::text(verify_answer())]),
        arbiter("architect", vec![review("APPROVE", serde_json::json!([]))]),
        arbiter("verify", vec![review("APPROVE", serde_json::json!([]))]),
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
    let args = [
        "bench",
        "--compare",
        "--task",
        "fix-add",
        "--configs",
        "loop,off",
        "--format",
        "json",
    ];
    let r = s.env.triad(&s.repo, &args);
    let out: Value = serde_json::from_str(r.ok().stdout.trim()).unwrap();
    let runs = out["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "{out}");
    let (lp, off) = (&runs[0], &runs[1]);
    assert_eq!(lp["config"], "loop");
    assert_eq!(lp["status"], "passed", "{out}");
    assert_eq!(lp["completed"], true, "{out}");
    assert_eq!(off["config"], "off");
    assert_eq!(off["completed"], true, "{out}\n{}", r.stderr);
    assert_eq!(off["false_success"], false);
    // The loop was shown the command's failure on its second try.
    let asked = s.requests_for("implement")[1].to_string();
    assert!(asked.contains("THE VERIFY COMMAND FAILS"), "{asked}");
    assert!(asked.contains("AssertionError"), "{asked}");
    // Both results are branches; the user's tree is untouched.
    let branches = s.git(&["branch", "--list", "triad/fix-add/*"]);
    assert_eq!(branches.lines().count(), 2, "{branches}");
    assert!(s.git(&["status", "--porcelain"]).is_empty());
    let rows = out["configurations"].as_array().unwrap();
    assert_eq!(rows[0]["completed"], 1);
    assert!(
        r.stderr
            .contains("bench: loop: try 1: the verify command: exit 1"),
        "{}",
        r.stderr
    );
    let norm = s.env.normalizer().literal(s.server.base_url(), "[SERVER]");
    crate::user_output::check(
        "json-bench-compare",
        &crate::user_output::json_shown(&r, &args, &norm),
    );
    // Again as a table: the scripted implementer now fixes the bug at once for both.
    let text = &args[..args.len() - 2];
    let again = s.env.triad(&s.repo, text);
    crate::user_output::check(
        "bench-compare",
        &again.transcript(&crate::user_output::command_line(text), &norm),
    );
}
