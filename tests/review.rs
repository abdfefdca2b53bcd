//! `git triad review`: the arbiter and the deterministic checks on any change.

use git_triad::testkit::fake_llm::{FakeServer, Reply, Rule, Script, WireProtocol};
use serde_json::{json, Value};

use crate::common::{fake_user_config, TestEnv};

const APP: &str = "import os\n\n\ndef main():\n    return os.getcwd()\n";

pub fn repo_with_bad_import(env: &TestEnv) -> std::path::PathBuf {
    let repo = env.repo(
        "proj",
        &[
            ("app.py", APP),
            (
                "pyproject.toml",
                "[project]\nname = \"app\"\ndependencies = [\"requests>=2\"]\n",
            ),
        ],
    );
    env.write_files(
        &repo,
        &[(
            "app.py",
            "import os\nimport requets\nimport requests\n\n\ndef main():\n    return os.getcwd()\n\n\ndef broken(:\n    pass\n",
        )],
    );
    env.commit_all(&repo, "add a typo import and a syntax error");
    repo
}

#[test]
fn no_model_review_finds_hallucinated_imports_and_new_syntax_errors() {
    let env = TestEnv::new();
    let repo = repo_with_bad_import(&env);
    let r = env.triad(&repo, &["review", "--no-model", "--format", "json"]);
    r.ok();
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["verdict"], "REJECT", "{v}");
    let issues = v["issues"].as_array().unwrap();
    assert!(
        issues.iter().any(|i| i["category"] == "hallucination"
            && i["quote"].as_str().unwrap().contains("requets")),
        "{v}"
    );
    assert!(
        !issues.iter().any(|i| i["quote"]
            .as_str()
            .unwrap_or("")
            .contains("import requests")),
        "declared dependency resolves: {v}"
    );
    assert!(
        issues
            .iter()
            .any(|i| i["evidence"].as_str().unwrap().contains("syntax_error")),
        "{v}"
    );
    // --fail-on reject turns the verdict into a failing exit code.
    env.triad(&repo, &["review", "--no-model", "--fail-on", "reject"])
        .expect_code(1);
    // The previous commit was clean.
    let clean = env.triad(
        &repo,
        &["review", "HEAD~1", "--no-model", "--format", "json"],
    );
    let v: Value = serde_json::from_str(&clean.ok().stdout).unwrap();
    assert_eq!(v["verdict"], "APPROVE", "{v}");
}

#[test]
fn sarif_output_is_a_valid_2_1_0_log() {
    let env = TestEnv::new();
    let repo = repo_with_bad_import(&env);
    let r = env.triad(&repo, &["review", "--no-model", "--format", "sarif"]);
    r.ok();
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["version"], "2.1.0");
    let run = &v["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    assert_eq!(run["tool"]["driver"]["name"], "git-triad");
    let results = run["results"].as_array().unwrap();
    assert!(results.len() >= 2);
    for res in results {
        let id = res["ruleId"].as_str().unwrap();
        let idx = res["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[idx]["id"], id, "ruleIndex points at the rule");
        assert!(["error", "warning", "note"].contains(&res["level"].as_str().unwrap()));
        assert!(!res["message"]["text"].as_str().unwrap().is_empty());
        let loc = &res["locations"][0]["physicalLocation"];
        assert_eq!(loc["artifactLocation"]["uri"], "app.py");
        let region = &loc["region"];
        assert!(region["startLine"].as_u64().unwrap() >= 1);
        assert!(region["endLine"].as_u64().unwrap() >= region["startLine"].as_u64().unwrap());
    }
}

#[test]
fn staged_and_worktree_reviews_leave_the_index_alone() {
    let env = TestEnv::new();
    let repo = env.repo("proj", &[("app.py", APP)]);
    env.write_files(&repo, &[("new.py", "import nosuchmodule_xyz\n")]);
    let index_before = std::fs::read(repo.join(".git/index")).unwrap();
    let r = env.triad(
        &repo,
        &["review", "--worktree", "--no-model", "--format", "json"],
    );
    let v: Value = serde_json::from_str(&r.ok().stdout).unwrap();
    assert_eq!(v["verdict"], "REJECT", "{v}");
    assert_eq!(
        std::fs::read(repo.join(".git/index")).unwrap(),
        index_before
    );
    // Nothing staged yet: the staged review sees no change.
    let r = env.triad(
        &repo,
        &["review", "--staged", "--no-model", "--format", "json"],
    );
    let v: Value = serde_json::from_str(&r.ok().stdout).unwrap();
    assert_eq!(v["verdict"], "APPROVE", "{v}");
    env.git(&repo, &["add", "new.py"]).ok();
    let r = env.triad(
        &repo,
        &["review", "--staged", "--no-model", "--format", "json"],
    );
    let v: Value = serde_json::from_str(&r.ok().stdout).unwrap();
    assert_eq!(v["verdict"], "REJECT", "{v}");
}

/// A repository with a bad import and a scripted arbiter (model-b) that approves with one
/// warning; `adjust` may change the rules (e.g. pin the reported usage).
pub fn scripted_review(
    adjust: impl FnOnce(Vec<Rule>) -> Vec<Rule>,
) -> (FakeServer, TestEnv, std::path::PathBuf) {
    let issue = json!({"severity": "warning", "category": "edge_case", "path": "app.py", "start_line": 1, "end_line": 1,
                       "quote": "def main():", "description": "no docstring", "suggestion": "add one", "evidence": "style"});
    let server = FakeServer::start_blocking(Script::new(adjust(vec![Rule::named("arbiter")
        .protocol(WireProtocol::OpenAi)
        .model("model-b")
        .reply(Reply::json(
            json!({"verdict": "APPROVE", "confidence": 0.9, "reasoning": "fine",
                                  "issues": [issue], "alternatives": []}),
        ))])))
    .unwrap();
    let mut env = TestEnv::new();
    env.write_user_config(&fake_user_config(&server.base_url()));
    env.set("FAKE_OPENAI_KEY", "sk-fake-openai-key-for-tests");
    let repo = repo_with_bad_import(&env);
    (server, env, repo)
}

#[test]
fn a_model_review_is_floored_and_recorded_as_a_note() {
    let (server, env, repo) = scripted_review(|r| r);
    let r = env.triad(&repo, &["review", "--note", "--format", "markdown"]);
    r.ok();
    assert!(
        r.stdout.contains("**REJECT**") && r.stdout.contains("Raised from APPROVE"),
        "{}",
        r.stdout
    );
    // The model's issue was re-anchored by its quote (line 6) and snapped to the function.
    assert!(
        r.stdout.contains("`app.py:6 (function main)`"),
        "{}",
        r.stdout
    );
    let note = env
        .git(&repo, &["notes", "--ref=triad", "show", "HEAD"])
        .ok()
        .stdout
        .clone();
    let line: Value = serde_json::from_str(note.lines().next().unwrap()).unwrap();
    assert_eq!(line["verdict"], "REJECT");
    assert_eq!(line["model_verdict"], "APPROVE");
    assert!(
        line["floor"]["reasons"].to_string().contains("requets"),
        "{line}"
    );
    // The arbiter saw the deterministic findings as facts.
    let req = server.requests()[0].body.clone();
    assert!(
        req.contains("Deterministic findings") && req.contains("requets"),
        "{req}"
    );
}

/// `--since-last` reviews only what changed since the last commit with a verdict, and a
/// finding a person overrode on the same lines is not raised again (it stays in the review,
/// marked as not counting), though the lines moved.
#[test]
fn since_last_reviews_only_the_new_change_and_keeps_an_overridden_finding_quiet() {
    let critical = json!({"severity": "critical", "category": "logic", "path": "calc.py",
        "start_line": 1, "end_line": 1, "quote": "return a + b", "description": "should subtract",
        "suggestion": "use -", "evidence": "name says sub"});
    let server = FakeServer::start_blocking(Script::new(vec![Rule::named("arbiter")
        .protocol(WireProtocol::OpenAi)
        .model("model-b")
        .reply(Reply::json(
            json!({"verdict": "REJECT", "confidence": 0.9, "reasoning": "wrong operator",
                   "issues": [critical], "alternatives": []}),
        ))]))
    .unwrap();
    let mut env = TestEnv::new();
    env.write_user_config(&fake_user_config(&server.base_url()));
    env.set("FAKE_OPENAI_KEY", "sk-fake-openai-key-for-tests");
    let repo = env.repo("proj", &[("base.txt", "base\n")]);
    // Nothing reviewed yet: --since-last says how to start.
    let none = env.triad(&repo, &["review", "--since-last"]);
    none.expect_code(2);
    assert!(
        none.stderr
            .contains("no commit of this branch has a verdict yet"),
        "{}",
        none.stderr
    );

    env.write_files(&repo, &[("calc.py", "def sub(a, b):\n    return a + b\n")]);
    env.commit_all(&repo, "sub");
    let first = env.triad(&repo, &["review", "--note", "--format", "json"]);
    let v: Value = serde_json::from_str(&first.ok().stdout).unwrap();
    // A behavioural claim without a confirmed probe supports at most FLAG.
    assert_eq!(v["verdict"], "FLAG", "{v}");
    assert_eq!(v["issues"][0]["demoted"], Value::Null, "{v}");
    let overrule = [
        "override",
        "HEAD",
        "--verdict",
        "APPROVE",
        "--reason",
        "sub adds on purpose here",
    ];
    insta::assert_snapshot!(crate::user_output::transcript(&env, Some(&server), &repo, &overrule), @r"
    $ git triad override HEAD --verdict APPROVE --reason 'sub adds on purpose here'
    exit: 0
    --- stdout
    Recorded your override of [OID-1] (sub): FLAG is now APPROVE.
    Share it with `git triad notes push`.
    --- stderr
    (empty)
    ");

    // New work: a file of its own, and lines above the overridden one (it moves down).
    env.write_files(
        &repo,
        &[
            (
                "calc.py",
                "\"\"\"Calc.\"\"\"\n\n\ndef sub(a, b):\n    return a + b\n",
            ),
            ("notes.md", "why sub adds\n"),
        ],
    );
    env.commit_all(&repo, "docs");
    let r = env.triad(&repo, &["review", "--since-last", "--format", "json"]);
    let v: Value = serde_json::from_str(&r.ok().stdout).unwrap();
    assert_eq!(v["verdict"], "APPROVE", "{v}");
    assert_eq!(v["model_verdict"], "REJECT", "{v}");
    let issue = &v["issues"][0];
    assert_eq!(issue["start_line"], 5, "{v}");
    assert!(
        issue["demoted"]
            .as_str()
            .unwrap()
            .contains("a person overrode it")
            && issue["demoted"]
                .as_str()
                .unwrap()
                .contains("sub adds on purpose here"),
        "{v}"
    );
    // The arbiter was shown only the new change.
    let req = server.requests().last().unwrap().body.clone();
    assert!(req.contains("notes.md") && req.contains("Calc."), "{req}");
    assert!(!req.contains("base.txt"), "{req}");
    assert!(
        !req.contains("+def sub(a, b):"),
        "the old change was shown again: {req}"
    );

    // Recorded, --since-last moves the mark: nothing new to review.
    env.triad(&repo, &["review", "--since-last", "--note"]).ok();
    let calls = server.requests().len();
    let empty = env.triad(&repo, &["review", "--since-last"]);
    assert!(
        empty.ok().stdout.starts_with("Nothing changed since"),
        "{}",
        empty.stdout
    );
    assert_eq!(
        server.requests().len(),
        calls,
        "no model is asked about nothing"
    );
}

/// A repository with a tested, documented `mean`, and HEAD changing it as `change` does;
/// trusted, so its code may run.
fn mean_change(env: &TestEnv, change: impl Fn(&str) -> String) -> std::path::PathBuf {
    const MEAN: &str = "def mean(xs):\n    \"\"\"The mean of xs.\n\n    >>> mean([1, 2])\n    1.5\n    \"\"\"\n    total = 0\n    for x in xs:\n        total += x\n    return total / len(xs)\n";
    let repo = env.repo(
        "proj",
        &[
            ("stats.py", MEAN),
            (
                "tests/test_stats.py",
                "from stats import mean\n\n\ndef test_mean():\n    assert mean([2, 4]) == 3\n\n\ndef test_one():\n    assert mean([5]) == 5\n",
            ),
        ],
    );
    env.write_files(&repo, &[("stats.py", &change(MEAN))]);
    env.commit_all(&repo, "simplify the loop");
    env.git(&repo, &["config", "triad.trusted", "true"]).ok();
    repo
}

#[test]
fn review_runs_the_tests_on_both_sides_and_shows_what_the_change_does() {
    let env = TestEnv::new();
    // A one-line bug that reads like a cleanup.
    let buggy = mean_change(&env, |m| m.replace("for x in xs:", "for x in xs[1:]:"));
    let r = env.triad(
        &buggy,
        &["review", "HEAD", "--no-model", "--format", "json"],
    );
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["verdict"], "REJECT", "{v}");
    let regressed = v["tests"]["regressed"].to_string();
    assert!(regressed.contains("test_mean"), "{v}");
    assert!(
        v["issues"]
            .to_string()
            .contains("passed at the base and fails with the change"),
        "{v}"
    );
    let diffs = v["behaviour"]["differences"].as_array().unwrap();
    assert!(
        diffs
            .iter()
            .any(|d| d["call"] == "mean([2, 4])" && d["before"] == "3.0" && d["after"] == "2.0"),
        "{v}"
    );
    let text = env.triad(&buggy, &["review", "HEAD", "--no-model"]);
    assert!(text.stdout.contains("REGRESSED:"), "{}", text.stdout);
    assert!(
        text.stdout
            .contains("These inputs give different results now"),
        "{}",
        text.stdout
    );

    // A rename: the same results, every test passing on both sides.
    let env = TestEnv::new();
    let renamed = mean_change(&env, |m| m.replace("total", "acc"));
    let r = env.triad(
        &renamed,
        &["review", "HEAD", "--no-model", "--format", "json"],
    );
    r.ok();
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["verdict"], "APPROVE", "{v}");
    assert_eq!(v["tests"]["regressed"], json!([]), "{v}");
    assert_eq!(v["behaviour"]["differences"], json!([]), "{v}");
    assert!(v["behaviour"]["compared"].as_u64().unwrap() >= 3, "{v}");
    // --no-tests skips them.
    let r = env.triad(
        &renamed,
        &[
            "review",
            "HEAD",
            "--no-model",
            "--no-tests",
            "--format",
            "json",
        ],
    );
    let v: Value = serde_json::from_str(&r.ok().stdout).unwrap();
    assert!(v["tests"].is_null(), "{v}");
}

/// A repository without tests: documented functions, trusted so their code may run.
const CALC: &str = "def total(xs):\n    \"\"\"The sum of xs.\n\n    >>> total([3, 4])\n    7\n    \"\"\"\n    if not xs:\n        return 0\n    return xs[0] + total(xs[1:])\n\n\ndef scale(x, factor=2):\n    \"\"\"x times factor.\n\n    >>> scale(3)\n    6\n    \"\"\"\n    return x * factor\n\n\ndef clamp(x: int, low: int, high: int) -> int:\n    \"\"\"x kept between low and high.\"\"\"\n    if x < low:\n        return low\n    if x > high:\n        return high\n    return x\n\n\ndef countdown(n):\n    \"\"\"The numbers from n down to 1.\n\n    >>> countdown(3)\n    [3, 2, 1]\n    \"\"\"\n    out = []\n    while n > 0:\n        out.append(n)\n        n -= 1\n    return out\n";

/// The arbiter's answers a review of the behaviour diff's floors must not depend on: it
/// approves with nothing to say, or rejects with an issue whose quote is nowhere.
fn arbiter_answers() -> Vec<(&'static str, Value)> {
    let unfounded = json!({"severity": "critical", "category": "logic", "path": "calc.py",
        "start_line": 2, "end_line": 2, "quote": "this line is not in the file",
        "description": "the logic is wrong", "suggestion": "fix it", "evidence": "reading"});
    vec![
        (
            "APPROVE",
            json!({"verdict": "APPROVE", "confidence": 0.9, "reasoning": "fine", "issues": [], "alternatives": []}),
        ),
        (
            "REJECT",
            json!({"verdict": "REJECT", "confidence": 0.9, "reasoning": "bad", "issues": [unfounded], "alternatives": []}),
        ),
    ]
}

/// `calc.py` committed, then changed as `change` does in a commit saying `message`; the
/// arbiter answers `answer`. Trusted: the code runs in the box.
fn calc_review(
    answer: Value,
    message: &str,
    change: impl Fn(&str) -> String,
) -> (FakeServer, TestEnv, std::path::PathBuf) {
    let server = FakeServer::start_blocking(Script::new(vec![Rule::named("arbiter")
        .protocol(WireProtocol::OpenAi)
        .model("model-b")
        .reply(Reply::json(answer))]))
    .unwrap();
    let mut env = TestEnv::new();
    env.write_user_config(&fake_user_config(&server.base_url()));
    env.set("FAKE_OPENAI_KEY", "sk-fake-openai-key-for-tests");
    let repo = env.repo("calc", &[("calc.py", CALC)]);
    env.write_files(&repo, &[("calc.py", &change(CALC))]);
    env.commit_all(&repo, message);
    env.git(&repo, &["config", "triad.trusted", "true"]).ok();
    (server, env, repo)
}

fn review_json(env: &TestEnv, repo: &std::path::Path) -> Value {
    let r = env.triad(repo, &["review", "HEAD", "--format", "json"]);
    serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {}", r.all()))
}

/// The behaviour diff counts: with no test in the repository and whatever the arbiter
/// answers, a commit that makes a function recurse without end is REJECT, one that changes
/// a docstring example's result while saying it only tidies is REJECT, one that changes a
/// result only on an input nothing documents is FLAG, and a rename is APPROVE.
#[test]
fn the_behaviour_diff_floors_a_review_whatever_the_arbiter_answers() {
    for (said, answer) in arbiter_answers() {
        // Recursion without end: a regression, whatever the message.
        let (_s, env, repo) = calc_review(answer.clone(), "update total", |c| {
            c.replace("xs[0] + total(xs[1:])", "xs[0] + total(xs)")
        });
        let v = review_json(&env, &repo);
        assert_eq!(v["verdict"], "REJECT", "arbiter {said}: {v}");
        let issues = v["issues"].to_string();
        assert!(
            issues.contains("behaviour_regression") && issues.contains("RecursionError"),
            "arbiter {said}: {v}"
        );
        let d = &v["behaviour"]["differences"][0];
        assert_eq!(d["regression"], true, "{v}");
        assert_eq!(d["path"], "calc.py", "{v}");

        // A documented result changed by a change that says it tidies.
        let (_s, env, repo) = calc_review(answer.clone(), "tidy up scale", |c| {
            c.replace("return x * factor", "return x + factor")
        });
        let v = review_json(&env, &repo);
        assert_eq!(v["verdict"], "REJECT", "arbiter {said}: {v}");
        let issues = v["issues"].to_string();
        assert!(
            issues.contains("behaviour_changed") && issues.contains("scale(3)"),
            "arbiter {said}: {v}"
        );

        // Only an input nothing documents differs: at least FLAG.
        let (_s, env, repo) = calc_review(answer.clone(), "simplify clamp", |c| {
            c.replace("    if x < low:\n        return low\n", "")
        });
        let v = review_json(&env, &repo);
        let verdict = v["verdict"].as_str().unwrap();
        assert!(["FLAG", "REJECT"].contains(&verdict), "arbiter {said}: {v}");
        assert!(
            v["issues"].to_string().contains("behaviour_changed"),
            "arbiter {said}: {v}"
        );

        // A rename: the same results, and the arbiter's unfounded issue does not count.
        let (_s, env, repo) = calc_review(answer.clone(), "rename out to found", |c| {
            c.replace("out", "found")
        });
        let v = review_json(&env, &repo);
        assert_eq!(v["verdict"], "APPROVE", "arbiter {said}: {v}");
        assert_eq!(v["behaviour"]["differences"], json!([]), "{v}");
        assert!(v["behaviour"]["compared"].as_u64().unwrap() >= 3, "{v}");
    }
}

/// A call that returned at the base and now never returns is a regression; the builder of
/// the fix and the reviewer see it as a fact, and an arbiter's issue that cites it by its
/// label stands on it, anchored to the function.
#[test]
fn a_hang_is_a_regression_and_an_issue_citing_it_anchors_to_its_function() {
    let cites = json!({"verdict": "REJECT", "confidence": 0.9, "reasoning": "it hangs",
        "issues": [{"severity": "critical", "category": "logic", "path": "nowhere.py",
            "start_line": 99, "end_line": 99, "quote": "not a line of the file",
            "description": "countdown never ends", "suggestion": "decrement n",
            "evidence": "behaviour diff B1"}],
        "alternatives": []});
    let (server, env, repo) = calc_review(cites, "simplify the loop", |c| {
        c.replace("        n -= 1\n", "")
    });
    let v = review_json(&env, &repo);
    assert_eq!(v["verdict"], "REJECT", "{v}");
    let diffs = v["behaviour"]["differences"].as_array().unwrap();
    assert!(
        diffs.iter().any(|d| d["call"] == "countdown(3)"
            && d["after"].as_str().unwrap().contains("did not return")
            && d["regression"] == true),
        "{v}"
    );
    let model_issue = v["issues"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["source"] == "model")
        .unwrap()
        .clone();
    assert_eq!(model_issue["path"], "calc.py", "{v}");
    assert_eq!(model_issue["symbol"]["name"], "countdown", "{v}");
    assert!(model_issue["demoted"].is_null(), "{v}");
    assert!(
        model_issue["fact"].as_str().unwrap().contains("countdown("),
        "{v}"
    );
    // The arbiter was shown the differences as labelled facts.
    let req = server.requests()[0].body.clone();
    assert!(req.contains("B1: `countdown("), "{req}");
}
