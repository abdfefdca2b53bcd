//! Implementation Summary Reconciliation (`--reconcile`) over the scripted model server.

use git_triad::testkit::fake_llm::{Reply, Rule, WireProtocol};
use serde_json::{json, Value};

use crate::pipeline::{answer, architect_answer, happy_rules, run_json, stage, Scenario};
use crate::user_output::{check, json_transcript, pinned_usage, transcript};

const TASK2: &str = r#"title = "Add subtraction and negation"
description = "calc.py needs sub and neg."

[[requirements]]
id = "R1"
text = "sub(a, b) returns a - b"
functions = ["sub"]

[[requirements]]
id = "R2"
# In words, not as code: the implement stage's own facts would catch a function named as
# code and missing; these tests are about what only the reconciliation sees.
text = "negation returns -a for any number a"

[scope]
include = ["calc.py", "tests/**", "extra.py"]
"#;

fn verify_with(summary: Value) -> String {
    format!(
        "Verified.\n```json\n{}\n```\n",
        json!({"summary": "verified", "confidence": 0.9, "outcome": "APPROVE", "implementation_summary": summary})
    )
}

fn summary(reqs: Value, tests: Value, created: Value) -> Value {
    json!({"task_echo": "add sub and neg", "requirements": reqs, "files_created": created,
           "files_modified": ["calc.py"], "test_coverage": tests, "omissions": [], "deviations": []})
}

fn reconciler(replies: Vec<Value>) -> Rule {
    let mut r = Rule::named("reconcile")
        .protocol(WireProtocol::OpenAi)
        .model("model-b")
        .contains("RECONCILE: does the output match");
    for v in replies {
        r = r.reply(Reply::json(v));
    }
    r
}

fn rec_answer(verdict: &str, rewind_to: &str, gaps: Value) -> Value {
    json!({"verdict": verdict, "confidence": 0.8, "reasoning": format!("reconciled {verdict}"),
           "checks": [{"check": "completeness", "status": if verdict == "APPROVE" {"pass"} else {"gap"}, "detail": "checked"}],
           "requirements": [{"id": "R1", "status": "delivered", "evidence": "calc.py:sub"}],
           "rewind_to": rewind_to, "gaps": gaps})
}

fn scenario(verify_replies: Vec<Reply>, refactor: Option<String>, rec: Vec<Value>) -> Scenario {
    with_task2(Scenario::new(rules(verify_replies, refactor, rec)))
}

/// The happy rules with these verify and refactor answers, and the reconciler answering `rec`.
fn rules(verify_replies: Vec<Reply>, refactor: Option<String>, rec: Vec<Value>) -> Vec<Rule> {
    let mut rules = happy_rules();
    rules[3] = stage("verify", verify_replies);
    if let Some(r) = refactor {
        rules[2] = stage("refactor", vec![Reply::text(r)]);
    }
    rules.push(reconciler(rec));
    rules
}

/// `s` with TASK2 (two requirements) committed as add-sub.
fn with_task2(s: Scenario) -> Scenario {
    s.env
        .write_files(&s.repo, &[(".triad/tasks/add-sub.toml", TASK2)]);
    s.env.commit_all(&s.repo, "task with two requirements");
    s
}

fn refactor_with_test() -> String {
    answer(
        "tests/test_calc.py\n<<<<<<< SEARCH\n=======\nfrom calc import sub\n\n\ndef test_sub():\n    assert sub(3, 1) == 2\n>>>>>>> REPLACE\n",
        "add a test",
    )
}

/// A refactor answer that adds the test and a file nobody asked for (extra.py).
fn extra_feature() -> String {
    answer(
        "tests/test_calc.py\n<<<<<<< SEARCH\n=======\nfrom calc import sub\n\n\ndef test_sub():\n    assert sub(3, 1) == 2\n>>>>>>> REPLACE\n\nextra.py\n<<<<<<< SEARCH\n=======\ndef telemetry():\n    return 'phone home'\n>>>>>>> REPLACE\n",
        "tests, and a little extra",
    )
}

pub fn note_lines(s: &Scenario, commit: &str) -> Vec<Value> {
    s.git(&["notes", "--ref=triad", "show", commit])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The reconciliation notes on the final commit of the run `out`.
fn reconciliation_notes(s: &Scenario, out: &Value) -> Vec<Value> {
    let final_commit = out["stages"][3]["commit"].as_str().unwrap();
    note_lines(s, final_commit)
        .into_iter()
        .filter(|l| l["kind"] == "reconciliation")
        .collect()
}

#[test]
fn a_silently_dropped_requirement_is_flagged_not_rewound_without_a_failing_fact() {
    let dropped = summary(
        json!([{"id": "R1", "evidence": "calc.py:sub"}]),
        json!(["test_sub"]),
        json!(["tests/test_calc.py"]),
    );
    let s = scenario(
        vec![Reply::text(verify_with(dropped))],
        Some(refactor_with_test()),
        // The model even approves: the summary's gap is a fact, but not a failing one.
        vec![rec_answer("APPROVE", "none", json!([]))],
    );
    let r = s.run(&["--reconcile"]);
    r.ok();
    let out: Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert_eq!(out["status"], "flagged", "{out}");
    assert_eq!(s.requests_for("implement").len(), 1, "no rewind: {out}");
    assert_eq!(s.requests_for("reconcile").len(), 1);
    let recon = reconciliation_notes(&s, &out);
    assert_eq!(recon.len(), 1, "{recon:?}");
    assert_eq!(recon[0]["model_verdict"], "APPROVE");
    assert_eq!(recon[0]["verdict"], "FLAG", "{recon:?}");
    assert!(
        recon[0]["floor"]["reasons"].to_string().contains("R2"),
        "{}",
        recon[0]
    );
    assert!(
        recon[0]["reasoning"]
            .as_str()
            .unwrap()
            .contains("REJECT acted on as FLAG: no failing fact of the final tree backs it"),
        "{}",
        recon[0]
    );
}

#[test]
fn a_reconciliation_reject_on_a_failing_fact_rewinds_once_then_passes() {
    // The verify command fails until `neg` exists; it does not run while building and the
    // Verify stage is not reviewed (`--arbiter off`), so the reconciliation is the first to
    // weigh the failing fact.
    let complete = summary(
        json!([{"id": "R1", "evidence": "calc.py:sub"}, {"id": "R2", "evidence": "calc.py:neg"}]),
        json!(["tests/test_calc.py::test_sub"]),
        json!(["tests/test_calc.py"]),
    );
    let mut rules = rules(
        vec![Reply::text(verify_with(complete))],
        Some(refactor_with_test()),
        vec![
            rec_answer("REJECT", "implement", json!(["R2 (neg) is missing"])),
            rec_answer("APPROVE", "none", json!([])),
        ],
    );
    rules[1] = stage(
        "implement",
        vec![
            Reply::text(crate::pipeline::implement_answer()),
            Reply::text(answer(
                "calc.py\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a - b\n\n\ndef neg(a):\n    return -a\n>>>>>>> REPLACE\n",
                "add neg()",
            )),
        ],
    );
    let s = with_task2(Scenario::new(rules));
    s.env.write_user_config(&format!(
        "{}\n[verify]\ncommand = \"grep -q 'def neg' calc.py\"\ntimeout_secs = 60\nwhile_building = false\n",
        crate::common::fake_user_config(&s.server.base_url())
    ));
    let r = s.run(&["--reconcile", "--arbiter", "off"]);
    r.ok();
    let out: Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert_eq!(out["status"], "approved", "{out}");
    let imp = s.requests_for("implement");
    assert_eq!(imp.len(), 2, "{out}");
    let fb = imp[1].to_string();
    assert!(
        fb.contains("RECONCILIATION FEEDBACK") && fb.contains("R2"),
        "{fb}"
    );
    let rejected: Vec<Value> = s
        .git(&["notes", "--ref=triad", "list"])
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1))
        .flat_map(|c| note_lines(&s, c))
        .filter(|l| l["kind"] == "reconciliation" && l["verdict"] == "REJECT")
        .collect();
    assert_eq!(rejected.len(), 1, "{rejected:?}");
}

#[test]
fn a_reconciliation_reject_with_no_failing_fact_neither_rewinds_nor_halts() {
    // The reconciler says R2 is missing and asks for the refactor stage again; no fact of
    // the final tree fails (no verify command fails, no typed requirement is undone), so a
    // model's word stops nothing: the run ends FLAG, with the reason on the record.
    let dropped = summary(
        json!([{"id": "R1", "evidence": "calc.py:sub"}]),
        json!(["test_sub"]),
        json!(["tests/test_calc.py"]),
    );
    let s = scenario(
        vec![Reply::text(verify_with(dropped))],
        Some(refactor_with_test()),
        vec![rec_answer(
            "REJECT",
            "refactor",
            json!(["R2 (neg) is missing"]),
        )],
    );
    let r = s.run(&["--reconcile"]);
    r.ok();
    let out: Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert_eq!(out["status"], "flagged", "{out}");
    assert_eq!(s.requests_for("refactor").len(), 1, "no rewind");
    let rec = reconciliation_notes(&s, &out);
    assert_eq!(rec[0]["model_verdict"], "REJECT", "{rec:?}");
    assert_eq!(rec[0]["verdict"], "FLAG", "{rec:?}");
    assert!(
        rec[0]["reasoning"]
            .as_str()
            .unwrap()
            .contains("acted on as FLAG: no failing fact"),
        "{rec:?}"
    );
    // Nothing HALTs the branch for the pre-push gate.
    let tip = s.git(&["rev-parse", out["branch"].as_str().unwrap()]);
    assert!(!note_lines(&s, tip.trim())
        .iter()
        .any(|l| l["verdict"] == "HALT"));
}

#[test]
fn an_undocumented_extra_feature_is_flagged() {
    let extra = extra_feature();
    let sum = summary(
        json!([{"id": "R1", "evidence": "calc.py:sub"}]),
        json!(["test_sub"]),
        json!(["tests/test_calc.py"]),
    );
    let mut sum = sum;
    sum["omissions"] = json!(["R2: neg was left for later"]);
    let s = scenario(
        vec![Reply::text(verify_with(sum))],
        Some(extra),
        vec![rec_answer("APPROVE", "none", json!([]))],
    );
    let r = s.run(&["--reconcile"]);
    r.ok();
    let out: Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert_eq!(out["final_verdict"], "FLAG", "{out}");
    let lines = note_lines(&s, out["stages"][3]["commit"].as_str().unwrap());
    let rec = lines
        .iter()
        .find(|l| l["kind"] == "reconciliation")
        .unwrap();
    assert_eq!(rec["verdict"], "FLAG");
    assert_eq!(rec["facts"]["unlisted_changes"], json!(["extra.py"]));
    assert_eq!(rec["facts"]["omitted_requirements"], json!(["R2"]));
}

/// What `git triad reconcile` reports on a finished run, as text and as JSON: here the
/// change has a file its summary does not list and leaves R2 out, on the record (FLAG).
#[test]
fn reconcile_reports_the_run_again_in_text_and_json() {
    let mut sum = summary(
        json!([{"id": "R1", "evidence": "calc.py:sub"}]),
        json!(["test_sub"]),
        json!(["tests/test_calc.py"]),
    );
    sum["omissions"] = json!(["R2: neg was left for later"]);
    let s = with_task2(Scenario::new(pinned_usage(rules(
        vec![Reply::text(verify_with(sum))],
        Some(extra_feature()),
        vec![rec_answer("APPROVE", "none", json!([]))],
    ))));
    let out = run_json(&s.run(&["--reconcile"]).ok().stdout);
    let id = out["run"].as_str().unwrap();
    check(
        "reconcile-text",
        &transcript(&s.env, Some(&s.server), &s.repo, &["reconcile", id]),
    );
    let args = ["reconcile", id, "--json"];
    check(
        "json-reconcile",
        &json_transcript(&s.env, Some(&s.server), &s.repo, &args, 0),
    );
    assert_eq!(s.requests_for("reconcile").len(), 3);
}

#[test]
fn a_listed_test_that_does_not_exist_is_flagged_and_reconcile_reruns() {
    let lying = summary(
        json!([{"id": "R1", "evidence": "calc.py:sub"}, {"id": "R2", "evidence": "calc.py:neg"}]),
        json!(["tests/test_calc.py::test_sub", "test_neg_handles_zero"]),
        json!(["tests/test_calc.py"]),
    );
    let s = scenario(
        vec![Reply::text(verify_with(lying))],
        Some(refactor_with_test()),
        vec![rec_answer("APPROVE", "implement", json!([]))],
    );
    // A summary that names a test that does not exist is a fact against the summary, not a
    // failing fact of the tree: the run ends FLAG, the lie on the record.
    let r = s.run(&["--reconcile", "--max-retries", "0"]);
    r.ok();
    let out: Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert_eq!(out["status"], "flagged", "{out}");
    let runs = s.git(&["notes", "--ref=triad", "list"]);
    let floors: Vec<Value> = runs
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1))
        .flat_map(|c| note_lines(&s, c))
        .filter(|l| l["kind"] == "reconciliation")
        .collect();
    assert!(!floors.is_empty());
    assert!(
        floors
            .iter()
            .all(|l| l["facts"]["missing_tests"] == json!(["test_neg_handles_zero"])),
        "{floors:?}"
    );
    // `git triad reconcile` re-runs on the finished run and records another line.
    let id = out["run"].as_str().unwrap();
    let again = s.env.triad(&s.repo, &["reconcile", id, "--json"]);
    again.ok();
    assert_eq!(
        s.requests_for("reconcile").len(),
        2,
        "once in the run, once again"
    );
}

#[test]
fn the_reconciliation_model_must_differ_from_the_verifier() {
    let s = scenario(
        vec![Reply::text(architect_answer())],
        None,
        vec![rec_answer("APPROVE", "none", json!([]))],
    );
    let r = s.run(&["--reconcile", "--reconcile-model", "model-a"]);
    r.expect_code(2);
    assert!(r.stderr.contains("verifier"), "{}", r.stderr);
    assert!(s.server.requests().is_empty());
    // --reconcile-model without --reconcile is a usage error too.
    s.run(&["--reconcile-model", "model-b"]).expect_code(2);
}

#[test]
fn a_verifier_that_leaves_out_its_summary_is_asked_for_it_not_the_change_sent_back() {
    let complete = summary(
        json!([{"id": "R1", "evidence": "calc.py:sub"}, {"id": "R2", "evidence": "calc.py:neg"}]),
        json!(["tests/test_calc.py::test_sub"]),
        json!(["tests/test_calc.py"]),
    );
    let bare = answer("", "verified");
    let s = scenario(
        vec![Reply::text(bare), Reply::text(verify_with(complete))],
        Some(refactor_with_test()),
        vec![rec_answer("APPROVE", "none", json!([]))],
    );
    let r = s.run(&["--reconcile"]);
    let out: Value = serde_json::from_str(r.ok().stdout.trim()).unwrap();
    assert_eq!(out["status"], "approved", "{out}");
    assert_eq!(out["stages"][3]["attempts"], 2, "{out}");
    assert_eq!(
        s.requests_for("implement").len(),
        1,
        "nothing was sent back"
    );
    let second = s.requests_for("verify")[1].to_string();
    assert!(
        second.contains("YOUR ANSWER HAS NO IMPLEMENTATION SUMMARY")
            && second.contains("it has no `implementation_summary`"),
        "{second}"
    );
    let log = s.env.triad(&s.repo, &["log", out["run"].as_str().unwrap()]);
    assert!(
        log.stdout
            .contains("bad_answer — it has no `implementation_summary`"),
        "{}",
        log.stdout
    );
}

#[test]
fn a_reconciliation_reject_that_found_nothing_is_acted_on_as_a_flag() {
    let complete = summary(
        json!([{"id": "R1", "evidence": "calc.py:sub"}, {"id": "R2", "evidence": "calc.py:neg"}]),
        json!(["tests/test_calc.py::test_sub"]),
        json!(["tests/test_calc.py"]),
    );
    // REJECT, with every check passed or not applicable and no requirement missing.
    let unfounded = json!({"verdict": "REJECT", "confidence": 0.5,
        "reasoning": "The output does not match the TaskSpec.",
        "checks": [{"check": "completeness", "status": "not_applicable", "detail": "x"}],
        "requirements": [], "rewind_to": "implement", "gaps": ["does not match"]});
    let s = scenario(
        vec![Reply::text(verify_with(complete))],
        Some(refactor_with_test()),
        vec![unfounded],
    );
    let r = s.run(&["--reconcile"]);
    let out: Value = serde_json::from_str(r.ok().stdout.trim()).unwrap();
    assert_eq!(out["status"], "flagged", "{out}");
    assert_eq!(
        s.requests_for("implement").len(),
        1,
        "nothing was sent back"
    );
    let rec = reconciliation_notes(&s, &out);
    assert_eq!(rec[0]["model_verdict"], "REJECT", "{rec:?}");
    assert_eq!(rec[0]["verdict"], "FLAG", "{rec:?}");
    assert!(
        rec[0]["reasoning"]
            .as_str()
            .unwrap()
            .contains("acted on as FLAG: no check marked gap and no requirement marked missing"),
        "{rec:?}"
    );
}

#[test]
fn a_requirement_marked_missing_that_the_facts_show_delivered_is_no_finding() {
    let complete = || {
        summary(
            json!([{"id": "R1", "evidence": "calc.py:sub"}, {"id": "R2", "evidence": "calc.py:neg"}]),
            json!(["tests/test_calc.py::test_sub"]),
            json!(["tests/test_calc.py"]),
        )
    };
    // The local reconciler's answer: R1 "missing", with evidence pointing at where it is.
    let missing = |id: &str| {
        json!({"verdict": "REJECT", "confidence": 0.5,
            "reasoning": "The output does not match the TaskSpec.",
            "checks": [{"check": "test_to_spec", "status": "not_applicable", "detail": "x"}],
            "requirements": [{"id": id, "status": "missing", "evidence": "file:calc.py:1-3"}],
            "rewind_to": "implement", "gaps": [format!("requirement {id} is missing")]})
    };
    // R1 names sub(a, b): the final tree defines it, so "missing" is contradicted.
    let s = scenario(
        vec![Reply::text(verify_with(complete()))],
        Some(refactor_with_test()),
        vec![missing("R1")],
    );
    let r = s.run(&["--reconcile"]);
    let out: Value = serde_json::from_str(r.ok().stdout.trim()).unwrap();
    assert_eq!(out["status"], "flagged", "{out}");
    assert_eq!(s.requests_for("implement").len(), 1, "nothing sent back");
    let rec = reconciliation_notes(&s, &out);
    assert_eq!(rec[0]["model_verdict"], "REJECT", "{rec:?}");
    assert_eq!(rec[0]["verdict"], "FLAG", "{rec:?}");
    assert_eq!(
        rec[0]["facts"]["requirements_met"],
        json!(["R1"]),
        "{rec:?}"
    );
    assert!(
        rec[0]["reasoning"].as_str().unwrap().contains(
            "[acted on as FLAG: no check marked gap, and R1 marked missing, which the facts show delivered]"
        ),
        "{rec:?}"
    );

    // R2 is in words: no fact checks it, so the judge's "missing" stands as its finding, but
    // with no failing fact of the tree it is a FLAG, not a stage sent back.
    let s = scenario(
        vec![
            Reply::text(verify_with(complete())),
            Reply::text(verify_with(complete())),
        ],
        Some(refactor_with_test()),
        vec![missing("R2"), rec_answer("APPROVE", "none", json!([]))],
    );
    let r = s.run(&["--reconcile"]);
    let out: Value = serde_json::from_str(r.ok().stdout.trim()).unwrap();
    assert_eq!(out["status"], "flagged", "{out}");
    assert_eq!(s.requests_for("implement").len(), 1, "{out}");
    let rec = reconciliation_notes(&s, &out);
    assert!(
        rec[0]["reasoning"].to_string().contains("R2")
            || rec[0]["requirements"].to_string().contains("R2"),
        "{rec:?}"
    );
}

#[test]
fn reconciling_a_run_that_did_not_finish_its_stages_is_refused_with_how_to_finish_it() {
    let s = Scenario::new(happy_rules());
    // A cap below the first call's estimate: the run stops before any stage is done.
    let r = s.run(&["--budget", "0.000001"]);
    let out = run_json(&r.stdout);
    assert_eq!(out["status"], "budget_exceeded", "{}", r.stderr);
    let id = out["run"].as_str().unwrap();
    let calls = s.server.requests().len();
    let again = s.env.triad(&s.repo, &["reconcile", id]);
    assert_eq!(again.code, 2, "{}", again.stderr);
    assert!(
        again.stderr.contains(&format!(
            "run {id} has not finished all its stages (budget_exceeded)"
        )),
        "{}",
        again.stderr
    );
    assert!(
        again
            .stderr
            .contains(&format!("hint: finish it first: `git triad resume {id}`")),
        "{}",
        again.stderr
    );
    assert_eq!(s.server.requests().len(), calls, "no model was asked");
}
