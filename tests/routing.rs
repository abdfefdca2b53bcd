//! Routing by measured fitness in `git triad run`: roles set to `auto` (or every role with
//! `--routing`) take the models the user's measurements rank first under the mode, the
//! cross-model rule still holds on the ranked lists, missing or stale figures are said and
//! never guessed, and the run records how each role was chosen.

use git_triad::clock::date_of;
use git_triad::config::Role;
use git_triad::routing::store::{Figures, FitnessEntry, FitnessStore};
use git_triad::routing::TASK_SET_VERSION;
use git_triad::testkit::fake_llm::{Reply, Rule, WireProtocol};
use serde_json::{json, Value};

use crate::common::fake_user_config;
use crate::pipeline::{
    architect_answer, happy_rules, implement_answer, refactor_answer, review, run_json,
    verify_answer, Scenario,
};

/// One measurement: model, role, score, USD a task, task set.
pub(crate) type Fig = (&'static str, Role, f64, f64, u32);

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// Writes the user's fitness file as `git triad bench` would have.
pub(crate) fn measured(s: &Scenario, figures: &[Fig]) {
    measured_on(s, figures, "standard");
}

/// [`measured`], by a bench of the task set `tasks` (`standard`, `quick`, or ids).
fn measured_on(s: &Scenario, figures: &[Fig], tasks: &str) {
    let mut store = FitnessStore::default();
    for &(model, role, score, cost, task_set) in figures {
        store.record(FitnessEntry {
            model: model.into(),
            provider: "fake-openai".into(),
            wire_id: if model == "model-a2" {
                "model-a"
            } else {
                model
            }
            .into(),
            role,
            task_set,
            tasks: tasks.into(),
            repeat: 1,
            measured_at: now(),
            date: date_of(now()),
            figures: Figures {
                attempts: 4,
                // As a bench counts them: the score is the share of the 4 answers that passed.
                passed: (score * 4.0).round() as u32,
                score,
                cost_usd: cost * 4.0,
                latency_ms: 4000,
                ..Figures::default()
            },
            results: vec![],
        });
    }
    store
        .save(&s.env.home().join(".local/share/git-triad/fitness.json"))
        .unwrap();
}

/// Stage rules for `model` (any stage), answering the happy path.
fn stages_of(model: &str) -> Vec<Rule> {
    [
        ("architect", architect_answer()),
        ("implementer", implement_answer()),
        ("refactorer", refactor_answer()),
        ("verifier", verify_answer()),
    ]
    .into_iter()
    .map(|(role, answer)| {
        Rule::named(format!("{model}-{role}"))
            .protocol(WireProtocol::OpenAi)
            .model(model)
            .contains(format!("ROLE: {role}"))
            .reply(Reply::text(answer))
    })
    .collect()
}

/// An arbiter rule for `model` approving every stage.
fn approving(model: &str) -> Rule {
    Rule::named(format!("{model}-judge"))
        .protocol(WireProtocol::OpenAi)
        .model(model)
        .contains("STAGE REVIEWED")
        .reply(Reply::json(review("APPROVE", json!([]))))
}

fn record(s: &Scenario, out: &Value) -> Value {
    let id = out["run"].as_str().unwrap();
    serde_json::from_str(&s.git(&["show", &format!("refs/triad/runs/{id}:run.json")])).unwrap()
}

#[test]
fn an_auto_role_takes_the_best_measured_model_and_the_run_records_why() {
    let mut rules = happy_rules();
    rules.insert(0, stages_of("model-c").remove(1));
    let s = Scenario::new(rules);
    measured(
        &s,
        &[
            ("model-a", Role::Implementer, 0.5, 0.001, TASK_SET_VERSION),
            ("model-c", Role::Implementer, 0.9, 0.002, TASK_SET_VERSION),
        ],
    );
    let run = s.run(&[
        "-c",
        r#"roles.implementer.models=["auto", "model-a", "model-c"]"#,
    ]);
    run.ok();
    let out = run_json(&run.stdout);
    assert_eq!(out["stages"][1]["model"], "model-c");
    assert_eq!(
        out["stages"][0]["model"], "model-a",
        "an unrouted role keeps its list"
    );
    assert!(
        run.stderr.contains("triad: implementer -> model-c: quality: model-c has the best score (score 0.90 over 4 answer(s), $0.0020 and 1.0 s a task"),
        "{}",
        run.stderr
    );
    let route = &record(&s, &out)["routing"];
    assert_eq!(route["mode"], "quality");
    assert_eq!(route["roles"][0]["role"], "implementer");
    assert_eq!(route["roles"][0]["models"], json!(["model-c", "model-a"]));
    assert_eq!(route["roles"][0]["measured"][1]["model"], "model-a");
    assert_eq!(route["roles"][0]["fell_back"], false);
    assert_eq!(out["routing"], *route, "--json says it too");
    assert_eq!(s.requests_for("model-c-implementer").len(), 1);
}

/// Issue #38: routing picked a model that scored 0.00 on every bench task and that the
/// role does not list. A model outside the role's list never competes, one that passed
/// nothing is never picked and the route says why.
#[test]
fn routing_never_picks_a_model_outside_the_list_or_one_that_passed_nothing() {
    let mut rules = happy_rules();
    rules.insert(0, stages_of("model-c").remove(1));
    let s = Scenario::new(rules);
    measured(
        &s,
        &[
            ("model-a", Role::Implementer, 0.5, 0.001, TASK_SET_VERSION),
            ("model-b", Role::Implementer, 0.0, 0.0, TASK_SET_VERSION),
            ("model-c", Role::Implementer, 0.99, 0.0, TASK_SET_VERSION),
        ],
    );
    let run = s.run(&[
        "-c",
        r#"roles.implementer.models=["auto", "model-b", "model-a"]"#,
    ]);
    run.ok();
    let out = run_json(&run.stdout);
    assert_eq!(out["stages"][1]["model"], "model-a", "{out:#}");
    let line = run
        .stderr
        .lines()
        .find(|l| l.starts_with("triad: implementer -> "))
        .unwrap_or_else(|| panic!("{}", run.stderr));
    assert!(
        line.starts_with("triad: implementer -> model-a: quality: model-a has the best score (score 0.50 over 4 answer(s), $0.0010 and 1.0 s a task, measured ")
            && line.ends_with("); not used: model-b (passed none of its 4 answer(s) as implementer)"),
        "{line}"
    );
    assert!(!line.contains("model-c"), "{line}");
    assert!(s.requests_for("model-c-implementer").is_empty());
}

/// A bench on part of the task set (`--tasks quick`) is not a full score: it is said, and
/// routing does not pick by it.
#[test]
fn a_bench_on_some_tasks_is_not_a_full_score_and_is_not_routed_on() {
    let s = Scenario::new(happy_rules());
    measured_on(
        &s,
        &[("model-c", Role::Implementer, 1.0, 0.0, TASK_SET_VERSION)],
        "quick",
    );
    let run = s.run(&[
        "-c",
        r#"roles.implementer.models=["auto", "model-a", "model-c"]"#,
    ]);
    run.ok();
    let out = run_json(&run.stdout);
    assert_eq!(out["stages"][1]["model"], "model-a");
    assert!(
        run.stderr.contains("triad: implementer -> model-a: no model that can be called now has a fresh measurement as implementer (model-c (measured on 4 tasks (`--tasks quick`), not the whole set: not a full score)), so the listed order is used: model-a, model-c"),
        "{}",
        run.stderr
    );
    let report = s.env.triad(&s.repo, &["bench", "--report"]);
    let text = report.ok().stdout.clone();
    assert!(text.contains(" 1.00~ "), "{text}");
    assert!(
        text.contains("~ not a full score, never used for routing (`git triad bench` without --tasks measures every task):\n  model-c as implementer: measured on 4 tasks (`--tasks quick`), not the whole set: not a full score\n"),
        "{text}"
    );
}

#[test]
fn the_best_measured_arbiter_never_reviews_its_own_model_even_under_another_name() {
    let mut rules = happy_rules();
    rules.insert(0, approving("model-c"));
    let s = Scenario::new(rules);
    // model-a2 is model-a on the wire: ranked first, it is still the same model.
    s.env.write_user_config(&format!(
        "{}\n[models.model-a2]\nprovider = \"fake-openai\"\nid = \"model-a\"\ncontext_window = 32000\nmax_output_tokens = 4000\nprice_in = 1.0\nprice_out = 2.0\n",
        fake_user_config(&s.server.base_url())
    ));
    measured(
        &s,
        &[
            ("model-a2", Role::Arbiter, 1.0, 0.001, TASK_SET_VERSION),
            ("model-a", Role::Arbiter, 0.95, 0.001, TASK_SET_VERSION),
            ("model-c", Role::Arbiter, 0.9, 0.001, TASK_SET_VERSION),
            ("model-b", Role::Arbiter, 0.5, 0.001, TASK_SET_VERSION),
        ],
    );
    let run = s.run(&["-c", r#"roles.arbiter.models="auto""#]);
    run.ok();
    let out = run_json(&run.stdout);
    assert_eq!(out["stages"][0]["arbiter_model"], "model-c");
    assert_eq!(out["stages"][3]["arbiter_model"], "model-c");
    let judged_by_a = s
        .server
        .requests()
        .into_iter()
        .filter(|r| r.model.as_deref() == Some("model-a") && r.body.contains("STAGE REVIEWED"))
        .count();
    assert_eq!(judged_by_a, 0, "model-a reviewed its own stages");
    assert_eq!(
        record(&s, &out)["routing"]["roles"][0]["models"],
        json!([
            "model-a2",
            "model-a",
            "model-c",
            "model-b",
            "gpt-5",
            "gemini-2.5-pro",
            "claude-sonnet-4-5"
        ]),
        "plain auto falls back to the built-in order after the measured models"
    );
}

#[test]
fn missing_or_stale_figures_are_said_and_the_listed_order_is_used() {
    let s = Scenario::new(happy_rules());
    measured(
        &s,
        &[(
            "model-c",
            Role::Implementer,
            0.99,
            0.001,
            TASK_SET_VERSION - 1,
        )],
    );
    let run = s.run(&[
        "-c",
        r#"roles.implementer.models=["auto", "model-a", "model-c"]"#,
    ]);
    run.ok();
    let out = run_json(&run.stdout);
    assert_eq!(out["stages"][1]["model"], "model-a");
    assert!(
        run.stderr.contains(&format!(
            "triad: implementer -> model-a: no model that can be called now has a fresh measurement as implementer (model-c (measured with task set {}, the current one is {TASK_SET_VERSION})), so the listed order is used: model-a, model-c (`git triad bench --roles implementer` measures)",
            TASK_SET_VERSION - 1
        )),
        "{}",
        run.stderr
    );
    assert_eq!(record(&s, &out)["routing"]["roles"][0]["fell_back"], true);

    // The report shows the stale measurement and why it is not used.
    let report = s.env.triad(&s.repo, &["bench", "--report"]);
    let row = report
        .ok()
        .stdout
        .lines()
        .find(|l| l.starts_with("implementer  model-c"))
        .unwrap_or_else(|| panic!("{}", report.stdout))
        .to_string();
    assert!(row.contains(" 0.99* "), "{row}");
    assert!(
        report.stdout.contains(&format!(
            "  model-c as implementer: measured with task set {}, the current one is {TASK_SET_VERSION}\n",
            TASK_SET_VERSION - 1
        )),
        "{}",
        report.stdout
    );
    let list = s.env.triad(&s.repo, &["models", "list", "--no-probe"]);
    let model_c = list
        .ok()
        .stdout
        .lines()
        .find(|l| l.starts_with("model-c "))
        .unwrap()
        .to_string();
    assert!(model_c.ends_with("impl 0.99*"), "{model_c}");
}

#[test]
fn git_triad_review_asks_the_best_measured_arbiter() {
    let (server, env, repo) = crate::review::scripted_review(|mut rules| {
        rules.insert(0, approving("model-c"));
        rules
    });
    let s = Scenario { env, server, repo };
    measured(
        &s,
        &[
            ("model-c", Role::Arbiter, 0.9, 0.001, TASK_SET_VERSION),
            ("model-b", Role::Arbiter, 0.6, 0.001, TASK_SET_VERSION),
        ],
    );
    let run = s.env.triad(
        &s.repo,
        &[
            "-c",
            r#"roles.arbiter.models=["auto", "model-b", "model-c"]"#,
            "review",
            "--format",
            "json",
        ],
    );
    let review: Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", run.stdout, run.stderr));
    assert_eq!(review["arbiter_model"], "model-c");
    assert!(
        run.stderr
            .contains("triad: arbiter -> model-c: quality: model-c has the best score"),
        "{}",
        run.stderr
    );
}

#[test]
fn routing_every_role_by_cost_stays_within_the_quality_band() {
    let mut rules = stages_of("model-c");
    rules.push(approving("model-b"));
    let s = Scenario::new(rules);
    let mut figs = Vec::new();
    for role in [
        Role::Architect,
        Role::Implementer,
        Role::Refactorer,
        Role::Verifier,
    ] {
        figs.push(("model-a", role, 0.90, 0.050, TASK_SET_VERSION));
        figs.push(("model-c", role, 0.85, 0.001, TASK_SET_VERSION));
        // Free but failing: outside 90 % of the best score, never the cheap choice.
        figs.push(("model-b", role, 0.10, 0.0, TASK_SET_VERSION));
    }
    figs.push(("model-c", Role::Arbiter, 0.9, 0.0001, TASK_SET_VERSION));
    figs.push(("model-b", Role::Arbiter, 0.9, 0.01, TASK_SET_VERSION));
    measured(&s, &figs);
    // Routing picks among each role's own models.
    let mut lists: Vec<String> = ["architect", "implementer", "refactorer", "verifier"]
        .iter()
        .map(|r| format!(r#"roles.{r}.models=["model-a", "model-c", "model-b"]"#))
        .collect();
    lists.push(r#"roles.arbiter.models=["model-b", "model-c"]"#.to_string());
    let mut args: Vec<&str> = lists.iter().flat_map(|l| ["-c", l.as_str()]).collect();
    args.extend(["--routing", "cost"]);
    let run = s.run(&args);
    run.ok();
    let out = run_json(&run.stdout);
    for stage in 0..4 {
        assert_eq!(out["stages"][stage]["model"], "model-c", "{out:#}");
    }
    assert_eq!(out["stages"][0]["arbiter_model"], "model-b");
    assert_eq!(out["routing"]["mode"], "cost");
    assert_eq!(out["routing"]["roles"].as_array().unwrap().len(), 5);

    let bad = s.run(&["--routing", "cheapest"]);
    bad.expect_code(2);
    assert!(
        bad.stderr.contains(
            "`cheapest` is not a routing mode (quality, cost, speed, hybrid, tournament)"
        ),
        "{}",
        bad.stderr
    );
}

#[test]
fn auto_comes_first_or_not_at_all() {
    let s = Scenario::new(happy_rules());
    let run = s.run(&["-c", r#"roles.architect.models=["model-a", "auto"]"#]);
    run.expect_code(2);
    assert!(
        run.stderr.contains("`auto` must come first"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_model_holds_at_most_max_stages_per_model_while_its_role_lists_another() {
    let mut rules = stages_of("model-a");
    rules.extend(stages_of("model-c"));
    rules.push(approving("model-b"));
    let s = Scenario::new(rules);
    let lists: Vec<String> = ["architect", "implementer", "refactorer", "verifier"]
        .iter()
        .map(|r| format!(r#"roles.{r}.models=["model-a", "model-c"]"#))
        .collect();
    let models_with = |limit: Option<&str>| -> Vec<String> {
        let mut args: Vec<&str> = lists.iter().flat_map(|l| ["-c", l.as_str()]).collect();
        if let Some(l) = limit {
            args.extend(["-c", l]);
        }
        let out = run_json(&s.run(&args).ok().stdout);
        (0..4)
            .map(|i| out["stages"][i]["model"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(models_with(None), ["model-a"; 4], "no limit by default");
    assert_eq!(
        models_with(Some("max_stages_per_model=2")),
        ["model-a", "model-a", "model-c", "model-c"]
    );
    // One each while both can; then model-a, first listed, as there is no third model.
    assert_eq!(
        models_with(Some("max_stages_per_model=1")),
        ["model-a", "model-c", "model-a", "model-a"]
    );
    // model-c really built what it was given: refactor and verify once, implement once.
    for (role, n) in [
        ("architect", 0),
        ("implementer", 1),
        ("refactorer", 1),
        ("verifier", 1),
    ] {
        assert_eq!(
            s.requests_for(&format!("model-c-{role}")).len(),
            n,
            "{role}"
        );
    }
}
