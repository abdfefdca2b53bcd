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
    git_triad::clock::date_of(now)
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
    let args = ["-c", "budget.daily_usd=0.015", "usage", "--json"];
    let warned = s.env.triad(&s.repo, &args);
    warned.ok();
    crate::user_output::check(
        "json-usage",
        &crate::user_output::json_shown(&warned, &args, &norm),
    );
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

/// Cost routing under budget pressure: model-a is dear ($100/M, and its architect answer
/// reports 2500 tokens: $0.25 of a $0.30 budget), model-c cheap ($0.10/M). In bookend mode
/// implement and refactor are not reviewed: they switch to model-c; the reviewed verify
/// stage keeps model-a, and the budget stops it. Without cost routing nothing switches.
#[test]
fn under_cost_routing_and_budget_pressure_unreviewed_stages_take_the_cheapest_model() {
    use crate::pipeline::{architect_answer, implement_answer, on, refactor_answer, stage};
    use git_triad::testkit::fake_llm::Reply;
    let rules = vec![
        stage(
            "architect",
            vec![Reply::text(architect_answer()).usage(1000, 1500)],
        ),
        stage("implement", vec![Reply::text(implement_answer())]),
        on(
            "model-c",
            "c-implement",
            "ROLE: implementer",
            vec![Reply::text(implement_answer())],
        ),
        on(
            "model-c",
            "c-refactor",
            "ROLE: refactorer",
            vec![Reply::text(refactor_answer())],
        ),
        arbiter("architect", vec![review("APPROVE", serde_json::json!([]))]),
    ];
    let s = Scenario::new(rules);
    let setting = [
        "-c",
        "models.model-a.price_in=100",
        "-c",
        "models.model-a.price_out=100",
        "-c",
        "models.model-a.max_output_tokens=500",
        "-c",
        "models.model-c.price_in=0.1",
        "-c",
        "models.model-c.price_out=0.1",
        "-c",
        r#"roles.implementer.models=["model-a", "model-c"]"#,
        "-c",
        r#"roles.refactorer.models=["model-a", "model-c"]"#,
        "--budget",
        "0.3",
    ];
    let mut args = setting.to_vec();
    args.extend(["-c", "routing=cost"]);
    let r = s.run(&args);
    let out = run_json(&r.expect_code(5).stdout);
    assert_eq!(out["stages"][0]["model"], "model-a", "{out:#}");
    assert_eq!(out["stages"][1]["model"], "model-c", "{out:#}");
    assert_eq!(out["stages"][2]["model"], "model-c", "{out:#}");
    assert_eq!(
        out["stages"][3]["model"], "model-a",
        "verify is reviewed: {out:#}"
    );
    assert_eq!(s.requests_for("c-implement").len(), 1);
    assert_eq!(s.requests_for("c-refactor").len(), 1);
    assert!(s.requests_for("implement").is_empty());
    assert!(
        r.stderr.contains("[implement] cost routing: $0.25")
            && r.stderr
                .contains("asks the cheaper model-c instead of model-a"),
        "{}",
        r.stderr
    );

    // The same run routed by quality: implement keeps model-a, and the budget stops it.
    let r = s.run(&setting);
    let out = run_json(&r.expect_code(5).stdout);
    assert_eq!(out["stages"][1]["model"], "model-a", "{out:#}");
    assert_eq!(
        s.requests_for("c-implement").len(),
        1,
        "no new call to model-c"
    );
}
