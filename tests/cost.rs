//! `git triad usage` and `git triad run --estimate`: the ledger summed per day, month,
//! model, role and run against the caps, and a run's expected cost in every arbiter mode
//! from measured figures, before any call.

use git_triad::testkit::fake_llm::{Rule, Usage};
use serde_json::Value;

use crate::pipeline::{arbiter, happy_rules, review, run_json, Scenario};

/// Every reply reports 1200 tokens in and 300 out: $0.0018 a call at $1/M in, $2/M out.
fn pinned(mut rules: Vec<Rule>) -> Vec<Rule> {
    for rule in &mut rules {
        for reply in &mut rule.responses {
            reply.usage = Some(Usage {
                input_tokens: 1200,
                output_tokens: 300,
            });
        }
    }
    rules
}

fn today() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    git_triad::routing::store::date_of(now)
}

fn runs(s: &Scenario) -> usize {
    s.git(&["for-each-ref", "refs/triad/runs/"]).lines().count()
}

#[test]
fn usage_sums_the_ledger_per_run_and_warns_near_a_cap() {
    let mut rules = happy_rules();
    rules.push(arbiter(
        "review",
        vec![review("APPROVE", serde_json::json!([]))],
    ));
    let s = Scenario::new(pinned(rules));
    let run = run_json(&s.run(&[]).ok().stdout);
    let id = run["run"].as_str().unwrap();
    s.env
        .triad(&s.repo, &["review", "--arbiter-model", "model-b"])
        .expect_code(0);

    let usage = s.env.triad(&s.repo, &["usage"]);
    usage.ok();
    let by_run = usage
        .stdout
        .lines()
        .find(|l| l.starts_with(id))
        .unwrap_or_else(|| panic!("no row for {id}:\n{}", usage.stdout));
    assert_eq!(
        by_run.split_whitespace().collect::<Vec<_>>(),
        [id, "6", "0", "7200", "1800", "$0.0108"]
    );
    let norm = s
        .env
        .normalizer()
        .literal(today(), "[DATE]")
        .literal(today()[..7].to_string(), "[MONTH]");
    crate::user_output::check("usage", &usage.transcript("git triad usage", &norm));

    // 7 calls of $0.0018: $0.0126 of a $0.015 daily cap is 84 %.
    let warned = s.env.triad(
        &s.repo,
        &["-c", "budget.daily_usd=0.015", "usage", "--json"],
    );
    warned.ok();
    assert!(
        warned
            .stderr
            .contains("has used 84 % of budget.daily_usd ($0.0126 of $0.0150)"),
        "{}",
        warned.stderr
    );
    let v: Value = serde_json::from_str(&warned.stdout).unwrap();
    assert_eq!(v["by_run"][id]["calls"], 6);
    assert_eq!(v["by_run"][""]["calls"], 1, "the review is outside any run");
    assert_eq!(v["by_role"]["arbiter"]["calls"], 3);
    assert_eq!(v["warnings"].as_array().unwrap().len(), 1);
    let calm = s.env.triad(&s.repo, &["-c", "budget.daily_usd=1", "usage"]);
    assert!(!calm.ok().stderr.contains("warning"), "{}", calm.stderr);
}

#[test]
fn an_estimate_calls_nothing_and_says_what_it_does_not_know() {
    let s = Scenario::new(pinned(happy_rules()));
    let before = s
        .env
        .triad(&s.repo, &["run", "--task", "add-sub", "--estimate"]);
    before.ok();
    let bookend = before
        .stdout
        .lines()
        .find(|l| l.starts_with("bookend (this run)"))
        .unwrap_or_else(|| panic!("{}", before.stdout));
    assert_eq!(
        bookend.split_whitespace().collect::<Vec<_>>().join(" "),
        "bookend (this run) 6 >= 0 >= 0 >= $0.0000 (6 call(s) not measured)"
    );
    assert!(before
        .stdout
        .contains("not measured: no ledger call, no bench as architect"));
    assert!(s.server.requests().is_empty(), "an estimate called a model");
    assert_eq!(runs(&s), 0, "an estimate recorded a run");

    s.run(&[]).ok();
    let calls = s.server.requests().len();
    let after = s.env.triad(
        &s.repo,
        &["run", "--task", "add-sub", "--estimate", "--reconcile"],
    );
    after.ok();
    assert_eq!(s.server.requests().len(), calls);
    assert_eq!(runs(&s), 1);
    crate::user_output::check(
        "estimate",
        &after.transcript(
            "git triad run --task add-sub --estimate --reconcile",
            &s.env.normalizer(),
        ),
    );
    let v: Value = serde_json::from_str(
        &s.env
            .triad(
                &s.repo,
                &["run", "--task", "add-sub", "--estimate", "--json"],
            )
            .ok()
            .stdout,
    )
    .unwrap();
    let full = &v["modes"][3];
    assert_eq!(full["mode"], "full");
    assert_eq!(full["calls"].as_array().unwrap().len(), 8);
    assert_eq!(full["calls"][4]["what"], "architect review");
    assert_eq!(full["calls"][4]["model"], "model-b");
    assert_eq!(full["calls"][4]["basis"]["source"], "ledger: 2 call(s)");
}
