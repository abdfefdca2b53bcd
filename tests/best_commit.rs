//! A run is never worse than its best evidenced commit, and stops only on grounds: a stage's
//! questions the task answers are answered there, and a later stage that would stop the run
//! or leave it waiting on you is dropped instead, over the scripted server and real git.

use git_triad::testkit::fake_llm::{Reply, Rule, WireProtocol};
use serde_json::{json, Value};

use crate::pipeline::{happy_rules, run_json, stage, Scenario};

/// A stage answer that asks `questions` instead of working.
fn needs_info(questions: &[&str]) -> String {
    format!(
        "I need to know more.\n```json\n{}\n```\n",
        json!({"summary": "need more", "confidence": 0.3, "outcome": "NEEDS_INFO",
               "questions": questions, "suggestions": [], "objections": []})
    )
}

/// The judge that checks questions against the task, answering `answers`.
fn answerer(answers: Value) -> Rule {
    Rule::named("answerer")
        .protocol(WireProtocol::OpenAi)
        .model("model-b")
        .contains("ANSWER FROM THE TASK")
        .reply(Reply::json(json!({ "answers": answers })))
}

#[test]
fn questions_the_task_answers_are_answered_there_not_sent_to_you() {
    let mut rules = happy_rules();
    rules[1] = stage(
        "implement",
        vec![
            Reply::text(needs_info(&["What should sub return?"])),
            Reply::text(crate::pipeline::implement_answer()),
        ],
    );
    rules.insert(
        0,
        answerer(
            json!([{"question": "What should sub return?", "answered": true,
                         "answer": "a minus b", "quote": "sub(a, b) returns a - b",
                         "source": "TaskSpec"}]),
        ),
    );
    let s = Scenario::new(rules);
    let out = run_json(&s.run(&[]).ok().stdout);
    assert_eq!(out["status"], "approved", "{out}");
    let retry = s.requests_for("implement")[1].to_string();
    assert!(
        retry.contains("YOUR QUESTIONS, ANSWERED FROM THE TASK AND THE CODE")
            && retry.contains("a minus b (from TaskSpec)"),
        "{retry}"
    );
    assert_eq!(s.requests_for("answerer").len(), 1, "one call");
}

#[test]
fn an_answer_that_quotes_nothing_real_leaves_the_question_to_you() {
    let mut rules = happy_rules();
    rules[1] = stage(
        "implement",
        vec![Reply::text(needs_info(&["Which rounding mode?"]))],
    );
    rules.insert(
        0,
        answerer(
            json!([{"question": "Which rounding mode?", "answered": true,
                         "answer": "banker's rounding", "quote": "round half to even everywhere",
                         "source": "TaskSpec"}]),
        ),
    );
    let s = Scenario::new(rules);
    let r = s.run(&[]);
    let out = run_json(&r.expect_code(6).stdout);
    assert_eq!(out["status"], "waiting_on_user", "{out}");
    assert!(
        out["message"]
            .as_str()
            .unwrap()
            .contains("Which rounding mode?"),
        "{out}"
    );
}

#[test]
fn a_later_stage_that_would_wait_on_you_is_dropped_when_the_fix_passes_every_fact() {
    // The implement and refactor commits pass the task's example (a trusted clone runs it):
    // the refactor's is the run's best evidenced commit. The verifier then asks what
    // nothing answers.
    let mut rules = happy_rules();
    rules[3] = stage(
        "verify",
        vec![Reply::text(needs_info(&[
            "What is the purpose of the function?",
        ]))],
    );
    rules.insert(
        0,
        answerer(
            json!([{"question": "What is the purpose of the function?", "answered": false,
                         "answer": "", "quote": "", "source": ""}]),
        ),
    );
    let s = Scenario::new(rules);
    s.git(&["config", "triad.trusted", "true"]);
    let r = s.run(&[]);
    let out = run_json(&r.ok().stdout);
    assert_eq!(out["status"], "flagged", "{out}");
    let message = out["message"].as_str().unwrap();
    assert!(
        message.contains("best evidenced commit")
            && message.contains("dropped: verify: it answered NEEDS_INFO"),
        "{message}"
    );
    let record: Value = serde_json::from_str(&s.git(&[
        "show",
        &format!("refs/triad/runs/{}:run.json", out["run"].as_str().unwrap()),
    ]))
    .unwrap();
    assert_eq!(record["best"]["stage"], "refactor", "{}", record["best"]);
    assert!(
        record["best"]["facts"]
            .to_string()
            .contains("acceptance example(s) pass"),
        "{}",
        record["best"]
    );
    // Nothing is left waiting on you.
    let task = s.env.triad(&s.repo, &["task", "show", "add-sub", "--json"]);
    assert!(
        !task.ok().stdout.contains("NEEDS_INFO\""),
        "{}",
        task.stdout
    );
}

#[test]
fn without_a_passing_commit_a_stage_still_stops_the_run() {
    // No fact passes anywhere (untrusted: the example is not run; no verify command): the
    // verifier's question goes to you as before.
    let mut rules = happy_rules();
    rules[3] = stage("verify", vec![Reply::text(needs_info(&["Which version?"]))]);
    rules.insert(
        0,
        answerer(
            json!([{"question": "Which version?", "answered": false, "answer": "",
                         "quote": "", "source": ""}]),
        ),
    );
    let s = Scenario::new(rules);
    let r = s.run(&[]);
    let out = run_json(&r.expect_code(6).stdout);
    assert_eq!(out["status"], "waiting_on_user", "{out}");
}

#[test]
fn a_stage_that_changes_nothing_costs_no_review() {
    // The architect plans without a file; bookend would review the architect stage.
    let mut rules = happy_rules();
    rules[0] = stage(
        "architect",
        vec![Reply::text(crate::pipeline::answer(
            "",
            "plan: add sub next to add in calc.py",
        ))],
    );
    rules[1] = stage(
        "implement",
        vec![Reply::text(crate::pipeline::answer(
            "calc.py\n<<<<<<< SEARCH\ndef add(a, b):\n    return a + b\n=======\ndef add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n>>>>>>> REPLACE\n",
            "implement sub()",
        ))],
    );
    let s = Scenario::new(rules);
    let out = run_json(&s.run(&[]).ok().stdout);
    assert_eq!(out["status"], "approved", "{out}");
    assert_eq!(
        s.requests_for("arbiter-architect").len(),
        0,
        "no review of a plan"
    );
    let log = s.env.triad(&s.repo, &["log", out["run"].as_str().unwrap()]);
    assert!(
        log.ok()
            .stdout
            .contains("(a plan, no file changed: not reviewed, there is no change)"),
        "{}",
        log.stdout
    );
}

#[test]
fn a_refactor_that_changes_what_the_code_does_is_dropped_with_the_inputs_that_differ() {
    // `abs(a - b)` still gives the task's example (sub(3, 1) == 2), but not sub(0, 1).
    let mut rules = happy_rules();
    rules[2] = stage(
        "refactor",
        vec![Reply::text(crate::pipeline::answer(
            "calc.py\n<<<<<<< SEARCH\n    return a - b\n=======\n    return abs(a - b)\n>>>>>>> REPLACE\n",
            "simplify sub()",
        ))],
    );
    let s = Scenario::new(rules);
    s.git(&["config", "triad.trusted", "true"]);
    let r = s.run(&["--max-retries", "1"]);
    let out = run_json(&r.ok().stdout);
    assert_eq!(out["status"], "flagged", "{out}");
    assert!(out["stages"][2]["commit"].is_null(), "{out}");
    assert!(
        out["message"]
            .as_str()
            .unwrap()
            .contains("dropped: refactor"),
        "{out}"
    );
    let retry = s.requests_for("refactor")[1].to_string();
    assert!(
        retry.contains("YOUR REFACTOR CHANGES WHAT THE CODE DOES"),
        "{retry}"
    );
    assert!(retry.contains("sub(0, 1)`: before -1, now 1"), "{retry}");
    let log = s.env.triad(&s.repo, &["log", out["run"].as_str().unwrap()]);
    assert!(
        log.ok().stdout.contains("it changes what the code does"),
        "{}",
        log.stdout
    );
    let branch = out["branch"].as_str().unwrap();
    assert!(!s
        .git(&["show", &format!("{branch}:calc.py")])
        .contains("abs("));
}

#[test]
fn a_halted_run_is_taken_up_by_rewinding_it_with_another_model() {
    // The implementer (model-a) never changes a file: the run halts with its retries out.
    let mut rules = happy_rules();
    rules[1] = stage(
        "implement",
        vec![Reply::text(crate::pipeline::answer(
            "",
            "described, not done",
        ))],
    );
    rules.push(crate::pipeline::on(
        "model-c",
        "implement-c",
        "ROLE: implementer",
        vec![Reply::text(crate::pipeline::implement_answer())],
    ));
    let s = Scenario::new(rules);
    let r = s.run(&[]);
    let out = run_json(&r.expect_code(3).stdout);
    let id = out["run"].as_str().unwrap().to_string();
    // A plain resume says what can be done about a HALT.
    let plain = s.env.triad(&s.repo, &["resume", &id]);
    assert!(
        plain
            .stderr
            .contains(&format!("git triad resume {id} --rewind N [--model M]")),
        "{}",
        plain.stderr
    );
    let bad = s.env.triad(&s.repo, &["resume", &id, "--rewind", "4"]);
    bad.expect_code(2);
    assert!(
        bad.stderr.contains("--rewind takes 1 to 2 here"),
        "{}",
        bad.stderr
    );
    let resumed = s.env.triad(
        &s.repo,
        &[
            "resume", &id, "--rewind", "1", "--model", "model-c", "--json",
        ],
    );
    let out = run_json(&resumed.ok().stdout);
    assert_eq!(out["status"], "approved", "{out}");
    assert_eq!(out["stages"][1]["model"], "model-c", "{out}");
    let told = s.requests_for("implement-c")[0].to_string();
    assert!(
        told.contains("THE RUN HALTED, AND YOU ARE ASKED AGAIN"),
        "{told}"
    );
}
