//! A run's cap across `git triad resume`: an answer paid for before the budget stopped the
//! run is reviewed, never asked again; the cap and what was spent carry over, so a plain
//! resume of a run at its cap stops again before any call; `resume --budget` raises it.

use git_triad::testkit::fake_llm::Reply;
use serde_json::json;

use crate::pipeline::{arbiter, architect_answer, happy_rules, review, run_json, stage, Scenario};

/// The happy path, but the architect's answer reports 10,000 tokens in and out ($0.03 at
/// model-a's $1/M in, $2/M out), three times the $0.01 cap: its worst case was under the
/// cap when it was asked, what it really cost is over it.
fn dear_architect() -> Scenario {
    let mut rules = happy_rules();
    rules[0] = stage(
        "architect",
        vec![
            Reply::text(architect_answer()).usage(10_000, 10_000),
            Reply::text(architect_answer()),
        ],
    );
    rules[4] = arbiter(
        "architect",
        vec![review("APPROVE", json!([])), review("APPROVE", json!([]))],
    );
    Scenario::new(rules)
}

#[test]
fn resume_never_pays_twice_and_keeps_the_cap_until_it_is_raised() {
    let s = dear_architect();
    let cheap = [
        "-c",
        "models.model-a.max_output_tokens=500",
        "--budget",
        "0.01",
    ];
    let first = s.run(&cheap);
    let out = run_json(&first.expect_code(5).stdout);
    assert_eq!(out["status"], "budget_exceeded", "{out:#}");
    let id = out["run"].as_str().unwrap().to_string();
    assert_eq!(s.requests_for("architect").len(), 1);
    assert!(
        s.requests_for("arbiter-architect").is_empty(),
        "the review would cross the cap"
    );
    let calls = s.server.requests().len();

    // A plain resume carries the cap and the $0.03 spent over: the review is refused
    // before it is sent, and nothing else is asked.
    let plain = s.env.triad(&s.repo, &["resume", &id, "--json"]);
    let out = run_json(&plain.expect_code(5).stdout);
    assert_eq!(out["status"], "budget_exceeded", "{out:#}");
    assert_eq!(
        s.server.requests().len(),
        calls,
        "a resume at its cap sends nothing"
    );
    let why = out.to_string();
    assert!(
        why.contains("budget of $0.01") && why.contains("spent so far: $0.0300"),
        "the refusal counts what the run spent before: {out:#}"
    );

    // Raised explicitly, the run goes on from the recorded answer: it is reviewed, and the
    // architect is not asked again.
    let raised = s
        .env
        .triad(&s.repo, &["resume", &id, "--budget", "1", "--json"]);
    let out = run_json(&raised.expect_code(0).stdout);
    assert_eq!(out["status"], "approved", "{out:#}");
    assert_eq!(
        s.requests_for("architect").len(),
        1,
        "the paid answer is reviewed, not asked for again"
    );
    assert_eq!(s.requests_for("arbiter-architect").len(), 1);
    assert_eq!(s.requests_for("implement").len(), 1);
    let attempts = out["stages"][0]["attempts"].as_u64();
    assert!(
        attempts.is_none() || attempts == Some(1),
        "one architect attempt: {out:#}"
    );
}
