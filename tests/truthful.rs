//! Truthful outcomes: no stage passes on a claim, verdicts rest on evidence (scripted model
//! server over real HTTP, real git, the real binary).

use git_triad::testkit::fake_llm::Reply;
use serde_json::{json, Value};

use crate::common::fake_user_config;
use crate::pipeline::{
    answer, arbiter, happy_rules, implement_answer, issue, review, run_json, stage, verify_answer,
    Scenario,
};
use crate::reconcile::note_lines;

/// What the implementer answered when it described the change instead of making it.
/// Runs `s`, which must end approved with `stage` answered twice: the run's JSON and what
/// the stage was asked the second time.
fn approved_on_the_second_try(s: &Scenario, stage: &str) -> (Value, String) {
    let out = run_json(&s.run(&[]).ok().stdout);
    assert_eq!(out["status"], "approved", "{out}");
    let idx = ["architect", "implement", "refactor", "verify"]
        .iter()
        .position(|n| *n == stage)
        .unwrap();
    assert_eq!(out["stages"][idx]["attempts"], 2, "{out}");
    let asked = s.requests_for(stage)[1].to_string();
    (out, asked)
}

fn metadata_only() -> String {
    answer("", "Implemented sub(a, b) in calc.py and added a unit test")
}

#[test]
fn an_implementer_that_answers_metadata_only_is_retried_never_accepted() {
    let mut rules = happy_rules();
    rules[1] = stage(
        "implement",
        vec![
            Reply::text(metadata_only()),
            Reply::text(implement_answer()),
        ],
    );
    let s = Scenario::new(rules);
    let r = s.run(&[]);
    r.ok();
    let out = run_json(&r.stdout);
    assert_eq!(out["status"], "approved", "{out}");
    assert_eq!(out["stages"][1]["attempts"], 2, "{out}");
    // The retry told the model exactly what was wrong.
    let second = s.requests_for("implement")[1].to_string();
    assert!(second.contains("YOUR ANSWER CHANGED NOTHING"), "{second}");
    assert!(second.contains("R1: sub(a, b) returns a - b"), "{second}");
    let log = s.env.triad(&s.repo, &["log", out["run"].as_str().unwrap()]);
    assert!(
        log.stdout.contains("no_change — no edit changed a file"),
        "{}",
        log.stdout
    );

    // Always metadata only: the stage is never accepted, the run stops (exit 3).
    let mut rules = happy_rules();
    rules[1] = stage("implement", vec![Reply::text(metadata_only())]);
    let s = Scenario::new(rules);
    let r = s.run(&[]);
    r.expect_code(3);
    let out = run_json(&r.stdout);
    assert!(out["stages"][1]["commit"].is_null(), "{out}");
    assert_eq!(out["final_verdict"], "HALT", "{out}");
    assert!(s.requests_for("refactor").is_empty());
}

#[test]
fn an_implementer_that_writes_a_file_back_unchanged_is_told_it_by_name() {
    // The file as it is, written back as the "fix": no change, and the retry names it.
    let echo = crate::pipeline::answer(
        "calc.py\n<<<<<<< SEARCH\ndef add(a, b):\n=======\ndef add(a, b):\n>>>>>>> REPLACE\n",
        "fixed it",
    );
    let mut rules = happy_rules();
    rules[1] = stage(
        "implement",
        vec![Reply::text(echo), Reply::text(implement_answer())],
    );
    let s = Scenario::new(rules);
    let out = run_json(&s.run(&[]).ok().stdout);
    assert_eq!(out["stages"][1]["attempts"], 2, "{out}");
    let second = s.requests_for("implement")[1].to_string();
    assert!(
        second.contains("You wrote calc.py back exactly as it already is"),
        "{second}"
    );
}

#[test]
fn an_answer_cut_at_the_output_limit_is_told_so_not_only_that_its_metadata_is_missing() {
    // The server stopped at max_tokens in the middle of a file: no metadata block came.
    let cut = Reply {
        body: Some(json!({
            "id": "chatcmpl-cut", "object": "chat.completion", "created": 1_700_000_000u64,
            "model": "model-a",
            "choices": [{"index": 0, "finish_reason": "length", "logprobs": null,
                "message": {"role": "assistant", "refusal": null,
                    "content": "calc.py\n<<<<<<< SEARCH\ndef add(a, b):\n=======\ndef add(a, b):\n    return a + b\n\n\ndef sub(a"}}],
            "usage": {"prompt_tokens": 900, "completion_tokens": 4000, "total_tokens": 4900},
        })),
        ..Reply::text("")
    };
    let mut rules = happy_rules();
    rules[1] = stage("implement", vec![cut, Reply::text(implement_answer())]);
    let s = Scenario::new(rules);
    let out = run_json(&s.run(&[]).ok().stdout);
    assert_eq!(out["stages"][1]["attempts"], 2, "{out}");
    let second = s.requests_for("implement")[1].to_string();
    assert!(
        second.contains("your answer was cut at the output limit (")
            && second.contains("tokens) before it ended, so")
            && second.contains("Write less: only the files you change"),
        "{second}"
    );
}

#[test]
fn an_out_of_scope_that_names_no_one_else_is_retried_with_the_reason() {
    // The answer the local coder gave to the quickstart task: the outcome list copied, the
    // task restated as its summary, nobody named to do it instead.
    let refusal = format!(
        "```json\n{}\n```\n",
        json!({"summary": "Add sub to calc.py", "confidence": 0.8, "outcome": "OUT_OF_SCOPE",
               "questions": [], "suggestions": []})
    );
    let mut rules = happy_rules();
    rules[1] = stage(
        "implement",
        vec![Reply::text(refusal), Reply::text(implement_answer())],
    );
    let s = Scenario::new(rules);
    let (_, second) = approved_on_the_second_try(&s, "implement");
    assert!(second.contains("named no `suggested_role`"), "{second}");
    assert!(
        second.contains("gives this work to the implement stage"),
        "{second}"
    );
}

#[test]
fn a_summary_that_claims_an_untouched_file_is_flagged() {
    let mut rules = happy_rules();
    rules[1] = stage(
        "implement",
        vec![Reply::text(answer(
            "calc.py\n<<<<<<< SEARCH\n    raise NotImplementedError\n=======\n    return a - b\n>>>>>>> REPLACE\n",
            "implemented sub in calc.py and documented it in docs/usage.md",
        ))],
    );
    rules[3] = stage(
        "verify",
        vec![Reply::text(
            verify_answer().replace("\"verified\"", "\"verified sub in calc.py\""),
        )],
    );
    rules.push(arbiter("implement", vec![review("APPROVE", json!([]))]));
    rules.push(arbiter("refactor", vec![review("APPROVE", json!([]))]));
    let s = Scenario::new(rules);
    let r = s.run(&["--arbiter", "full"]);
    r.ok();
    let out = run_json(&r.stdout);
    assert_eq!(out["stages"][1]["verdict"], "FLAG", "{out}");
    assert_eq!(out["status"], "flagged", "{out}");
    // The verifier names calc.py, which the run (not its own empty diff) changed: no claim.
    assert_eq!(out["stages"][3]["verdict"], "APPROVE", "{out}");
    let note = &note_lines(&s, out["stages"][1]["commit"].as_str().unwrap())[0];
    assert_eq!(note["model_verdict"], "APPROVE");
    assert_eq!(note["verdict"], "FLAG");
    assert!(
        note["floor"]["reasons"][0]
            .as_str()
            .unwrap()
            .contains("names docs/usage.md, which its diff does not touch"),
        "{note}"
    );
    // The next stage is told what to do about the claim, not about imports.
    let flagged = s.requests_for("refactor")[0].to_string();
    assert!(
        flagged.contains("make the change the summary describes"),
        "{flagged}"
    );
    assert!(!flagged.contains("import only modules"), "{flagged}");
}

/// A refactor that changed nothing while its summary claims changes: the claim is recorded
/// on the attempt beside what it did; the stage is not reviewed and flags nothing.
#[test]
fn an_unreviewed_stage_s_claim_is_recorded_beside_its_facts() {
    let mut rules = happy_rules();
    rules[2] = stage(
        "refactor",
        vec![Reply::text(answer(
            "",
            "Refactored calc.py and added a test in tests/test_calc.py",
        ))],
    );
    let s = Scenario::new(rules);
    let r = s.run(&[]);
    r.ok();
    let out = run_json(&r.stdout);
    assert!(out["stages"][2]["verdict"].is_null(), "unreviewed: {out}");
    let log = s.env.triad(&s.repo, &["log", out["run"].as_str().unwrap()]);
    let refactor = log
        .stdout
        .lines()
        .skip_while(|l| !l.starts_with("refactor"))
        .take(3)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        refactor.contains(
            "(facts: its summary names calc.py, tests/test_calc.py, which its diff does not touch)"
        ),
        "{}",
        log.stdout
    );
    assert!(refactor.contains("changed: no change"), "{}", log.stdout);
    // A stage that changed nothing is not reviewed, and its claim is kept on its record, not
    // carried to the verifier as a flag about a change that does not exist.
    assert!(
        refactor.contains("nothing refactored, no file changed: not reviewed"),
        "{}",
        log.stdout
    );
    let verify = s.requests_for("verify")[0].to_string();
    assert!(
        !verify.contains("which its diff does not touch"),
        "{verify}"
    );
}

#[test]
fn an_arbiter_reject_resting_on_fabricated_evidence_does_not_reject() {
    let fabricated = issue("sub() divides by zero", "return a / b  # unchecked");
    let mut elsewhere = issue("the helper is wrong", "def helper():");
    elsewhere["path"] = json!("helpers/nope.py");
    let mut rules = happy_rules();
    rules[4] = arbiter(
        "architect",
        vec![review(
            "REJECT",
            json!([
                fabricated.clone(),
                fabricated.clone(),
                fabricated,
                elsewhere
            ]),
        )],
    );
    let s = Scenario::new(rules);
    let r = s.run(&[]);
    r.ok();
    let out = run_json(&r.stdout);
    assert_eq!(out["stages"][0]["verdict"], "APPROVE", "{out}");
    assert_eq!(out["stages"][0]["attempts"], 1, "{out}");
    let note = &note_lines(&s, out["stages"][0]["commit"].as_str().unwrap())[0];
    // Both verdicts, and why they differ.
    assert_eq!(note["model_verdict"], "REJECT", "{note}");
    assert_eq!(note["verdict"], "APPROVE", "{note}");
    assert_eq!(note["derived"]["verdict"], "APPROVE", "{note}");
    let reasons = note["derived"]["reasons"].to_string();
    assert!(reasons.contains("2 issue(s) rest on nothing"), "{reasons}");
    assert!(reasons.contains("2 repeated issue(s) merged"), "{reasons}");
    // Repeats are merged in the note, and each survivor says why it does not count.
    let issues = note["issues"].as_array().unwrap();
    assert_eq!(issues.len(), 2, "{note}");
    assert!(issues[0]["demoted"]
        .as_str()
        .unwrap()
        .contains("quote is not in calc.py"));
    assert!(issues[1]["demoted"]
        .as_str()
        .unwrap()
        .contains("helpers/nope.py is not a file of the reviewed change"));
    // A quote that is really there still rejects.
    let mut rules = happy_rules();
    rules[4] = arbiter(
        "architect",
        vec![
            review(
                "REJECT",
                json!([issue("sub must not raise", "raise NotImplementedError")]),
            ),
            review("APPROVE", json!([])),
        ],
    );
    let s = Scenario::new(rules);
    let out = run_json(&s.run(&[]).ok().stdout);
    assert_eq!(out["stages"][0]["attempts"], 2, "{out}");
}

#[test]
fn a_run_whose_diff_is_empty_cannot_end_in_success() {
    let mut rules = happy_rules();
    // The refactor stage undoes the implementation: every stage answered, nothing changed.
    rules[2] = stage(
        "refactor",
        vec![Reply::text(answer(
            "calc.py\n<<<<<<< SEARCH\n    return a + b\n\n\ndef sub(a, b):\n    \"\"\"Return a minus b.\"\"\"\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE\n",
            "simplified calc.py",
        ))],
    );
    let s = Scenario::new(rules);
    let r = s.run(&[]);
    r.expect_code(3);
    let out = run_json(&r.stdout);
    assert_eq!(out["status"], "halted", "{out}");
    assert_eq!(out["stop"]["reason"], "nothing_changed", "{out}");
    assert_eq!(out["final_verdict"], "HALT", "{out}");
    // The verifier was told as a fact that the run changed nothing.
    let verify = s.requests_for("verify")[0].to_string();
    assert!(
        verify.contains("the run's diff against its base is empty"),
        "{verify}"
    );
}

#[test]
fn a_failing_verify_command_floors_the_verdict_at_reject() {
    let s = Scenario::new(happy_rules());
    let config = format!(
        "{}\n[verify]\ncommand = \"exit 3\"\ntimeout_secs = 60\nwhile_building = false\n",
        fake_user_config(&s.server.base_url())
    );
    s.env.write_user_config(&config);
    let r = s.run(&["--max-retries", "0"]);
    r.expect_code(3);
    let out = run_json(&r.stdout);
    assert_ne!(out["status"], "approved", "{out}");
    let list = s.git(&["notes", "--ref=triad", "list"]);
    let verify_notes: Vec<Value> = list
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1))
        .flat_map(|c| note_lines(&s, c))
        .filter(|n| n["stage"] == "verify")
        .collect();
    assert!(!verify_notes.is_empty(), "{list}");
    for n in &verify_notes {
        assert_eq!(n["model_verdict"], "APPROVE", "{n}");
        assert_eq!(n["verdict"], "REJECT", "{n}");
        assert!(n["floor"]["reasons"].to_string().contains("exit 3"), "{n}");
    }
}

fn task_json(s: &Scenario) -> Value {
    let r = s.env.triad(&s.repo, &["task", "show", "add-sub", "--json"]);
    serde_json::from_str(&r.ok().stdout).unwrap()
}

fn last_decision(task: &Value) -> Value {
    task["history"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|h| h["event"] == "decision")
        .cloned()
        .unwrap_or_else(|| panic!("no decision: {task}"))
}

#[test]
fn task_records_name_who_decided() {
    // A run with nothing reviewed ends by rule: the policy decided, not an arbiter.
    let s = Scenario::new(happy_rules());
    let out = run_json(&s.run(&["--arbiter", "off"]).ok().stdout);
    assert_eq!(out["status"], "approved", "{out}");
    let task = task_json(&s);
    assert_eq!(task["task"]["state"], "APPROVED", "{task}");
    assert_eq!(last_decision(&task)["actor"], "policy", "{task}");

    // A reviewed run: the arbiter's verdicts decided.
    let s = Scenario::new(happy_rules());
    s.run(&[]).ok();
    assert_eq!(last_decision(&task_json(&s))["actor"], "arbiter");

    // A person closing it is recorded as that person.
    s.env
        .triad(
            &s.repo,
            &["task", "close", "add-sub", "--reason", "done by hand"],
        )
        .ok();
    let task = task_json(&s);
    let d = last_decision(&task);
    assert_eq!(d["actor"], "user", "{task}");
    assert!(d["by"].as_str().unwrap().contains("Test"), "{d}");
}

#[test]
fn a_merged_result_makes_its_task_executed() {
    let s = Scenario::new(happy_rules());
    let out = run_json(&s.run(&[]).ok().stdout);
    let branch = out["branch"].as_str().unwrap();
    assert_eq!(task_json(&s)["task"]["state"], "APPROVED");
    s.git(&["merge", "-q", "--ff-only", branch]);
    let list = s.env.triad(&s.repo, &["task", "list"]);
    assert!(list.ok().stdout.contains("EXECUTED"), "{}", list.stdout);
    let task = task_json(&s);
    assert_eq!(task["task"]["state"], "EXECUTED", "{task}");
    let d = last_decision(&task);
    assert_eq!(d["actor"], "policy", "{d}");
    assert!(
        d["note"].as_str().unwrap().contains("merged into main"),
        "{d}"
    );
}

/// A run of a task deferred to a date still ahead reopens it and says so (a deferral whose
/// date has come was reopened before: `tasks::a_due_deferral_reopens_...`).
#[test]
fn a_run_of_a_deferred_task_says_it_reopens_it_before_its_date() {
    let s = Scenario::new(happy_rules());
    s.env
        .triad(
            &s.repo,
            &[
                "task",
                "defer",
                "add-sub",
                "--reason",
                "later",
                "--revisit-at",
                "2099-01-01",
            ],
        )
        .ok();
    let r = s.run(&[]);
    r.ok();
    assert!(
        r.stderr.contains(
            "was deferred (revisit at 2099-01-01); this run reopens it before its revisit date"
        ),
        "{}",
        r.stderr
    );
}

/// The happy path, with the architect and implementer answering whole files.
fn whole_file_rules() -> Vec<git_triad::testkit::fake_llm::Rule> {
    let whole = |file: &str, text: &str, summary: &str| {
        answer(&format!("{file}\n```python\n{text}```\n"), summary)
    };
    let mut rules = happy_rules();
    rules[0] = stage(
        "architect",
        vec![Reply::text(whole(
            "calc.py",
            "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    raise NotImplementedError\n",
            "scaffold sub()",
        ))],
    );
    rules[1] = stage(
        "implement",
        vec![Reply::text(whole(
            "calc.py",
            "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n",
            "implement sub()",
        ))],
    );
    rules
}

#[test]
fn a_model_set_to_whole_files_writes_them_whole_and_is_asked_to() {
    let s = Scenario::new(whole_file_rules());
    let r = s.run(&["-c", "models.model-a.edit_format=whole"]);
    r.ok();
    let out = run_json(&r.stdout);
    assert_eq!(out["status"], "approved", "{out}");
    let branch = out["branch"].as_str().unwrap();
    assert!(s
        .git(&["show", &format!("{branch}:calc.py")])
        .contains("return a - b"));
    // The model was told the whole-file format, not SEARCH/REPLACE; a server that does not
    // enforce grammars never gets one.
    let asked = &s.requests_for("implement")[0];
    assert!(
        asked.to_string().contains("COMPLETE new content"),
        "{asked}"
    );
    assert!(!asked.to_string().contains("<<<<<<< SEARCH"), "{asked}");
    assert!(asked.get("grammar").is_none(), "{asked}");

    // On a server that enforces a grammar, the answer is held to the format, and the
    // implement stage must write a file.
    let s = Scenario::new(whole_file_rules());
    let r = s.run(&[
        "-c",
        "models.model-a.edit_format=whole",
        "-c",
        r#"models.model-a.capabilities=["gbnf"]"#,
    ]);
    r.ok();
    let grammar = s.requests_for("implement")[0]["grammar"]
        .as_str()
        .unwrap()
        .to_string();
    // At least one file, and no file more than once.
    assert!(grammar.starts_with("root ::= file{1,1} meta"), "{grammar}");
    assert!(grammar.contains("\"calc.py\""), "{grammar}");
    let architect = s.requests_for("architect")[0]["grammar"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        architect.starts_with("root ::= file{0,1} meta"),
        "{architect}"
    );
    assert!(!architect.contains("implementation_summary"), "{architect}");
    // The verifier's metadata opens with its implementation summary, an object.
    let verify = s.requests_for("verify")[0]["grammar"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        verify.contains(r#"meta ::= "```json\n{" [ \n]* "\"implementation_summary\"" [ \n]* ":" [ \n]* "{" [^`]*"#),
        "{verify}"
    );
}

/// A task with a function the architect does not scaffold and a test file to change.
const TASK_WITH_TEST: &str = r#"title = "Add multiplication"
description = "calc.py needs a mul function, with a test."

[[requirements]]
id = "R1"
text = "mul(a, b) returns a * b"
files = ["calc.py"]
functions = ["mul"]

[[requirements]]
id = "R2"
text = "tests/test_calc.py has a test for mul"
files = ["tests/test_calc.py"]
functions = ["mul"]

[scope]
include = ["calc.py", "tests/**"]
"#;

/// An implement answer that adds `mul` to calc.py (after the architect's scaffold).
fn mul_answer(summary: &str) -> String {
    answer(
        "calc.py\n<<<<<<< SEARCH\n    raise NotImplementedError\n=======\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n>>>>>>> REPLACE\n",
        summary,
    )
}

fn test_answer() -> String {
    answer(
        "tests/test_calc.py\n<<<<<<< SEARCH\n=======\nfrom calc import mul\n\n\ndef test_mul():\n    assert mul(3, 2) == 6\n>>>>>>> REPLACE\n",
        "add a test for mul()",
    )
}

fn mul_scenario(implement: Vec<Reply>, refactor: Vec<Reply>) -> Scenario {
    let mut rules = happy_rules();
    rules[1] = stage("implement", implement);
    rules[2] = stage("refactor", refactor);
    let s = Scenario::new(rules);
    s.env
        .write_files(&s.repo, &[(".triad/tasks/add-sub.toml", TASK_WITH_TEST)]);
    s.env
        .commit_all(&s.repo, "task naming its function and test file");
    s
}

#[test]
fn a_building_stage_whose_change_leaves_a_named_requirement_undone_is_asked_again() {
    // The implement stage first turns add into mul (no requirement met: asked again from
    // the start, told what it rewrote instead), then adds mul (R1 met: accepted; the test
    // R2 asks for is the refactor stage's to write). The refactor stage first changes
    // nothing (asked for R2), then adds the test.
    let scaffold_only = answer(
        "calc.py\n<<<<<<< SEARCH\n    return a + b\n=======\n    return a * b\n>>>>>>> REPLACE\n",
        "implemented mul() and added a test in tests/test_calc.py",
    );
    let s = mul_scenario(
        vec![
            Reply::text(scaffold_only),
            Reply::text(mul_answer("implemented mul()")),
        ],
        vec![
            Reply::text(answer("", "nothing to refactor")),
            Reply::text(test_answer()),
        ],
    );
    let r = s.run(&[]);
    let out = run_json(&r.ok().stdout);
    assert_eq!(out["status"], "approved", "{out}");
    assert_eq!(out["stages"][1]["attempts"], 2, "{out}");
    assert_eq!(out["stages"][2]["attempts"], 2, "{out}");
    let asked = s.requests_for("implement");
    let second = asked[1].to_string();
    assert!(
        second.contains("YOUR CHANGE LEAVES THE TASK UNDONE"),
        "{second}"
    );
    assert!(
        second.contains("R1 needs mul, which no file the change touches defines"),
        "{second}"
    );
    // The test is not the implement stage's to write when a refactor stage follows.
    assert!(
        !second.contains("R2 is delivered in tests/test_calc.py"),
        "{second}"
    );
    assert!(
        second.contains("Instead, your change rewrote add in calc.py, which the task does not name. Leave it as it was, and add mul as a new definition of its own."),
        "{second}"
    );
    assert!(!second.contains("def mul"), "started over: {second}");
    let refactor = s.requests_for("refactor")[1].to_string();
    assert!(
        refactor
            .contains("R2 is delivered in tests/test_calc.py, which the change leaves as it was"),
        "{refactor}"
    );
    let branch = out["branch"].as_str().unwrap();
    s.git(&["cat-file", "-e", &format!("{branch}:tests/test_calc.py")]);
    let log = s.env.triad(&s.repo, &["log", out["run"].as_str().unwrap()]);
    assert!(
        log.stdout
            .contains("incomplete — R1 needs mul, which no file the change touches defines"),
        "{}",
        log.stdout
    );
}

#[test]
fn a_needs_info_that_asks_nothing_is_retried_not_sent_to_the_user() {
    // What the local 1.5B coder answered at the verify stage of the quickstart task.
    let silent = format!(
        "```json\n{}\n```\n",
        json!({"summary": "The verify stage needs information", "confidence": 0.6,
               "outcome": "NEEDS_INFO", "questions": []})
    );
    let mut rules = happy_rules();
    rules[3] = stage(
        "verify",
        vec![Reply::text(silent), Reply::text(verify_answer())],
    );
    let s = Scenario::new(rules);
    let (_, second) = approved_on_the_second_try(&s, "verify");
    assert!(
        second.contains("NEEDS_INFO but asked no question"),
        "{second}"
    );
}

#[test]
fn a_whole_file_answer_that_would_delete_code_is_refused_and_retried() {
    let mut rules = whole_file_rules();
    // What the local 1.5B coder wrote for every file once: a placeholder instead of the file.
    let placeholder = answer(
        "calc.py\n```python\nobj['path']\n```\n",
        "implemented sub()",
    );
    rules[1] = stage(
        "implement",
        vec![
            Reply::text(placeholder),
            Reply::text(answer(
                "calc.py\n```python\ndef add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n```\n",
                "implement sub()",
            )),
        ],
    );
    let s = Scenario::new(rules);
    let r = s.run(&["-c", "models.model-a.edit_format=whole"]);
    let out = run_json(&r.ok().stdout);
    assert_eq!(out["status"], "approved", "{out}");
    assert_eq!(out["stages"][1]["attempts"], 2, "{out}");
    let second = s.requests_for("implement")[1].to_string();
    assert!(second.contains("YOUR ANSWER WOULD DELETE CODE"), "{second}");
    assert!(second.contains("- calc.py: add"), "{second}");
    let branch = out["branch"].as_str().unwrap();
    assert!(s
        .git(&["show", &format!("{branch}:calc.py")])
        .contains("def add(a, b)"));
    let log = s.env.triad(&s.repo, &["log", out["run"].as_str().unwrap()]);
    assert!(
        log.stdout
            .contains("edits_failed — would delete add from calc.py"),
        "{}",
        log.stdout
    );
}

#[test]
fn a_whole_file_answer_with_only_the_new_function_is_read_by_definitions() {
    let mut rules = whole_file_rules();
    // The function alone, as small models write it when asked for the whole file.
    rules[1] = stage(
        "implement",
        vec![Reply::text(answer(
            "calc.py\n```python\ndef sub(a, b):\n    return a - b\n```\n",
            "implement sub()",
        ))],
    );
    let s = Scenario::new(rules);
    let r = s.run(&["-c", "models.model-a.edit_format=whole"]);
    let out = run_json(&r.ok().stdout);
    assert_eq!(out["status"], "approved", "{out}");
    assert_eq!(out["stages"][1]["attempts"], 1, "{out}");
    let branch = out["branch"].as_str().unwrap();
    let calc = s.git(&["show", &format!("{branch}:calc.py")]);
    assert_eq!(
        calc,
        "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
    );
    let log = s.env.triad(&s.repo, &["log", out["run"].as_str().unwrap()]);
    assert!(
        log.stdout
            .contains("implement sub() (calc.py read as a partial answer, keeping add)"),
        "{}",
        log.stdout
    );
}

/// A whole-file refactor answer of tests/test_calc.py (whose import line is `import`) over a
/// committed test of add: the test file on the run's branch, and `git triad log` of the run.
fn test_file_answered(import: &str) -> (String, String) {
    let mut rules = whole_file_rules();
    rules[2] = stage(
        "refactor",
        vec![Reply::text(answer(
            &format!("tests/test_calc.py\n```python\n{import}\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\ndef test_sub():\n    assert sub(3, 1) == 2\n```\n"),
            "add a test for sub()",
        ))],
    );
    let s = Scenario::new(rules);
    s.env.write_files(
        &s.repo,
        &[(
            "tests/test_calc.py",
            "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
        )],
    );
    s.env.commit_all(&s.repo, "a test for add");
    let r = s.run(&["-c", "models.model-a.edit_format=whole"]);
    let out = run_json(&r.ok().stdout);
    assert_eq!(out["status"], "approved", "{out}");
    let branch = out["branch"].as_str().unwrap();
    let test = s.git(&["show", &format!("{branch}:tests/test_calc.py")]);
    let log = s.env.triad(&s.repo, &["log", out["run"].as_str().unwrap()]);
    (test, log.stdout)
}

#[test]
fn a_whole_file_answer_that_drops_an_import_it_still_uses_keeps_it() {
    // The import line rewritten for the new name instead of extended, as small models do.
    let (test, log) = test_file_answered("from calc import sub");
    assert!(test.starts_with("from calc import sub, add\n"), "{test}");
    assert!(
        log.contains(
            "add a test for sub() (tests/test_calc.py kept the import of add, which it still uses)"
        ),
        "{log}"
    );
    // A new test that calls the new function without importing it: the module the file
    // already imports from defines it, so the import line gets it.
    let (test, log) = test_file_answered("from calc import add");
    assert!(test.starts_with("from calc import add, sub\n"), "{test}");
    assert!(
        log.contains(
            "(tests/test_calc.py imports sub from the module it already imports from, as it uses it)"
        ),
        "{log}"
    );
}

#[test]
fn a_verifier_that_fixes_the_failing_command_is_judged_by_the_command_at_its_fix() {
    let mut rules = happy_rules();
    rules[2] = stage(
        "refactor",
        vec![Reply::text(answer(
            "tests/test_calc.py\n<<<<<<< SEARCH\n=======\nfrom calc import sub\n\n\ndef test_sub():\n    assert sub(3, 1) == 2  # BROKEN\n>>>>>>> REPLACE\n",
            "add a test for sub()",
        ))],
    );
    // The verifier sees the command fail and fixes the defect with an edit block.
    let fixed = verify_answer().replacen(
        "Looks complete.",
        "tests/test_calc.py\n<<<<<<< SEARCH\n    assert sub(3, 1) == 2  # BROKEN\n=======\n    assert sub(3, 1) == 2\n>>>>>>> REPLACE\n",
        1,
    );
    rules[3] = stage("verify", vec![Reply::text(fixed)]);
    let s = Scenario::new(rules);
    let config = format!(
        // Off while building: the refactor stage's broken test reaches the verifier.
        "{}\n[verify]\ncommand = \"! grep -rn BROKEN tests\"\ntimeout_secs = 60\nwhile_building = false\n",
        fake_user_config(&s.server.base_url())
    );
    s.env.write_user_config(&config);
    let r = s.run(&[]);
    let out = run_json(&r.ok().stdout);
    assert_eq!(out["status"], "approved", "{out}\n{}", r.stderr);
    // The command ran before the verifier (failing) and again at its fix (passing).
    let runs: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.contains("verify: exit"))
        .collect();
    assert_eq!(runs.len(), 2, "{}", r.stderr);
    assert!(
        runs[0].contains("exit 1") && runs[1].contains("exit 0"),
        "{runs:?}"
    );
    let branch = out["branch"].as_str().unwrap();
    assert!(!s
        .git(&["show", &format!("{branch}:tests/test_calc.py")])
        .contains("BROKEN"));
    // The verifier was told the failing command is its defect to fix.
    let asked = s.requests_for("verify")[0].to_string();
    assert!(
        asked.contains("The command FAILS, so the run cannot pass"),
        "{asked}"
    );
    assert!(
        asked.contains("The output points at:\\n- tests/test_calc.py line 5: `assert sub(3, 1) == 2  # BROKEN`"),
        "{asked}"
    );
    // The arbiter was shown the result at the fix.
    let review = s.requests_for("arbiter-verify")[0].to_string();
    assert!(review.contains("exit code: 0"), "{review}");
}

#[test]
fn the_files_the_task_names_are_shown_first() {
    let s = mul_scenario(
        vec![Reply::text(mul_answer("implemented mul()"))],
        vec![Reply::text(test_answer())],
    );
    s.env.write_files(
        &s.repo,
        &[("tests/__init__.py", ""), ("tests/test_calc.py", "\n")],
    );
    s.env.commit_all(&s.repo, "a test package");
    let r = s.run(&[]);
    r.ok();
    let asked = s.requests_for("implement")[0]["messages"][1]["content"]
        .as_str()
        .unwrap()
        .to_string();
    let named = asked
        .find("\ntests/test_calc.py\n```")
        .expect("test file shown");
    let other = asked
        .find("\ntests/__init__.py\n```")
        .expect("package file shown");
    assert!(named < other, "{asked}");
}

#[test]
fn a_test_file_that_only_imports_the_function_is_asked_for_its_test() {
    // The implement stage adds mul and a test file that imports it and tests nothing (seen
    // on the local coder: the import line was its whole "unit test"). R1 is met, the change
    // is kept, and the next attempt is asked for that file alone.
    let imports_only = answer(
        "calc.py\n<<<<<<< SEARCH\n    raise NotImplementedError\n=======\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n>>>>>>> REPLACE\n\ntests/test_calc.py\n<<<<<<< SEARCH\n=======\nfrom calc import mul\n>>>>>>> REPLACE\n",
        "implemented mul() and added a unit test for it",
    );
    let the_test = answer(
        "tests/test_calc.py\n<<<<<<< SEARCH\nfrom calc import mul\n=======\nfrom calc import mul\n\n\ndef test_mul():\n    assert mul(3, 2) == 6\n>>>>>>> REPLACE\n",
        "added the test for mul()",
    );
    let s = mul_scenario(
        vec![Reply::text(imports_only)],
        vec![
            Reply::text(answer("", "nothing to refactor")),
            Reply::text(the_test),
        ],
    );
    // The test is the refactor stage's to write: it is the one asked for it.
    let (out, asked) = approved_on_the_second_try(&s, "refactor");
    assert!(
        asked.contains(
            "R2 needs mul in tests/test_calc.py, which never uses it (an import is not a use)"
        ),
        "{asked}"
    );
    assert!(
        asked.contains("Write SEARCH/REPLACE edit blocks for every file the task needs"),
        "{asked}"
    );
    let branch = out["branch"].as_str().unwrap();
    assert!(s
        .git(&["show", &format!("{branch}:tests/test_calc.py")])
        .contains("def test_mul"));
}

#[test]
fn a_test_that_checks_other_cases_than_the_tasks_examples_is_asked_for_them() {
    // The task gives two examples as calls and values; the first test checks one of them.
    let task = TASK_WITH_TEST.replacen(
        "[[requirements]]",
        "acceptance = [\"mul(3, 2) == 6\", \"mul(0, 5) == 0 (zero times anything)\", \"the tests pass\"]\n\n[[requirements]]",
        1,
    );
    let one_case = answer(
        "calc.py\n<<<<<<< SEARCH\n    raise NotImplementedError\n=======\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n>>>>>>> REPLACE\n\ntests/test_calc.py\n<<<<<<< SEARCH\n=======\nfrom calc import mul\n\n\ndef test_mul():\n    assert mul(3, 2) == 6\n>>>>>>> REPLACE\n",
        "implemented mul() and tested it",
    );
    let both = answer(
        "tests/test_calc.py\n<<<<<<< SEARCH\n    assert mul(3, 2) == 6\n=======\n    assert mul(3, 2) == 6\n    assert mul(0, 5) == 0\n>>>>>>> REPLACE\n",
        "tested the second example",
    );
    let mut rules = happy_rules();
    rules[1] = stage("implement", vec![Reply::text(one_case)]);
    rules[2] = stage(
        "refactor",
        vec![
            Reply::text(answer("", "nothing to refactor")),
            Reply::text(both),
        ],
    );
    let s = Scenario::new(rules);
    s.env
        .write_files(&s.repo, &[(".triad/tasks/add-sub.toml", task.as_str())]);
    s.env.commit_all(&s.repo, "task with examples");
    let (_, asked) = approved_on_the_second_try(&s, "refactor");
    assert!(
        asked.contains("the tests never check the task's examples mul(0, 5) == 0: assert each exactly as written, in tests/test_calc.py"),
        "{asked}"
    );
    assert!(!asked.contains("examples mul(3, 2)"), "{asked}");
    assert!(
        asked.contains("Write SEARCH/REPLACE edit blocks for every file the task needs"),
        "{asked}"
    );
}

#[test]
fn a_function_only_called_by_a_test_is_not_the_function() {
    // The implement stage writes a test that calls mul and never defines mul.
    let s = mul_scenario(
        vec![Reply::text(test_answer())],
        vec![Reply::text(answer("", "nothing to refactor"))],
    );
    let r = s.run(&[]);
    let out = run_json(&r.stdout);
    let log = s.env.triad(&s.repo, &["log", out["run"].as_str().unwrap()]);
    assert!(
        log.stdout.contains(
            "accepted — add a test for mul() (facts: R1 needs mul, which no file the change touches defines: define it in calc.py)"
        ),
        "{}",
        log.stdout
    );
    // The verify review answers for the whole run: a typed requirement left undone is a
    // fact it cannot pass, so the verifier is asked again and the run stops, saying why.
    assert_eq!(out["status"], "halted", "{out}");
    assert!(
        out["message"]
            .as_str()
            .unwrap()
            .contains("(the last: the facts: unmet_requirement: the requirements are not all met: R1 needs mul"),
        "{out}"
    );
}

/// How many times the verify command ran, by the run's progress lines.
fn verify_runs(stderr: &str) -> usize {
    stderr
        .lines()
        .filter(|l| l.contains("verify: exit"))
        .count()
}

/// The refactor answer that adds a test the verify command fails on (`BROKEN`).
fn broken_test_answer() -> String {
    answer(
        "tests/test_calc.py\n<<<<<<< SEARCH\n=======\nfrom calc import sub\n\n\ndef test_sub():\n    assert sub(3, 1) == 2  # BROKEN\n>>>>>>> REPLACE\n",
        "add a test for sub()",
    )
}

/// A scenario whose verify command fails on any `BROKEN` under tests/ (`extra` goes into
/// the user's `[verify]` table).
fn breaking_scenario(refactor: Vec<Reply>, command: &str, extra: &str) -> Scenario {
    let mut rules = happy_rules();
    rules[2] = stage("refactor", refactor);
    let s = Scenario::new(rules);
    let config = format!(
        "{}\n[verify]\ncommand = \"{command}\"\ntimeout_secs = 60\n{extra}",
        fake_user_config(&s.server.base_url())
    );
    s.env.write_user_config(&config);
    s
}

#[test]
fn a_building_stage_that_breaks_the_verify_command_is_asked_again_on_its_change() {
    // The fix is an edit of the line the failing attempt wrote: it applies only if the
    // second attempt works on the first one's change.
    let fix = answer(
        "tests/test_calc.py\n<<<<<<< SEARCH\n    assert sub(3, 1) == 2  # BROKEN\n=======\n    assert sub(3, 1) == 2\n>>>>>>> REPLACE\n",
        "fixed the test",
    );
    // Between them, an answer that changes nothing is told so.
    let s = breaking_scenario(
        vec![
            Reply::text(broken_test_answer()),
            Reply::text(answer("", "the code is clean")),
            Reply::text(fix),
        ],
        "! grep -rn BROKEN tests",
        "",
    );
    let r = s.run(&[]);
    let out = run_json(&r.ok().stdout);
    assert_eq!(out["status"], "approved", "{out}\n{}", r.stderr);
    assert_eq!(out["stages"][2]["attempts"], 3, "{out}");
    let asked = s.requests_for("refactor");
    let third = asked[2].to_string();
    assert!(
        third.contains("THE VERIFY COMMAND FAILS, AND YOUR ANSWER CHANGED NOTHING"),
        "{third}"
    );
    let second = asked[1].to_string();
    assert!(
        second.contains("The output points at:\\n- tests/test_calc.py line 5: `assert sub(3, 1) == 2  # BROKEN`"),
        "{second}"
    );
    assert!(
        second.contains("YOUR CHANGE MAKES THE VERIFY COMMAND FAIL"),
        "{second}"
    );
    assert!(
        second.contains("exits with 1; at the run's base it passed"),
        "{second}"
    );
    assert!(
        second.contains("# BROKEN"),
        "the failing change is shown: {second}"
    );
    // One commit per stage on the branch: the failing attempt is on the record, not in the
    // history, and the accepted one's diff is the whole stage's.
    let branch = out["branch"].as_str().unwrap();
    let subjects = s.git(&["log", "--format=%s", &format!("main..{branch}")]);
    assert_eq!(subjects.matches("triad(refactor)").count(), 1, "{subjects}");
    let test = s.git(&["show", &format!("{branch}:tests/test_calc.py")]);
    assert!(
        test.contains("def test_sub") && !test.contains("BROKEN"),
        "{test}"
    );
    let log = s.env.triad(&s.repo, &["log", out["run"].as_str().unwrap()]);
    assert!(
        log.stdout.contains(
            "failing — the verify command fails with it (exit 1); kept for the next attempt"
        ),
        "{}",
        log.stdout
    );
    // At the base once (it passed) and at each building commit; the Verify stage, at the
    // last refactor commit, reuses that commit's run instead of running it again.
    let runs = verify_runs(&r.stderr);
    assert_eq!(runs, 5, "{}", r.stderr);

    // Never fixed: an attempt that fails the verify command is never accepted, however
    // many it took. The implement stage's commit passed every fact, so the refactor stage
    // is dropped and the run ends FLAG on that commit, saying which stage and why.
    let s = breaking_scenario(
        vec![Reply::text(broken_test_answer())],
        "! grep -rq BROKEN tests",
        "",
    );
    let r = s.run(&["--max-retries", "1"]);
    let out = run_json(&r.stdout);
    assert_eq!(out["status"], "flagged", "{out}");
    assert_eq!(out["stages"][2]["attempts"], 2, "{out}");
    assert!(out["stages"][2]["commit"].is_null(), "{out}");
    let message = out["message"].as_str().unwrap();
    assert!(
        message.contains("best evidenced commit") && message.contains("dropped: refactor"),
        "{message}"
    );
    let branch = out["branch"].as_str().unwrap();
    // The result builds on the implement stage's commit; the refactor's is not in it.
    let implement = out["stages"][1]["commit"].as_str().unwrap();
    s.env
        .git(&s.repo, &["merge-base", "--is-ancestor", implement, branch])
        .ok();
    let tree = |rev: &str| s.git(&["rev-parse", &format!("{rev}^{{tree}}")]);
    assert_eq!(
        tree(branch),
        tree(implement),
        "only the implement stage's change"
    );
    let log = s.env.triad(&s.repo, &["log", out["run"].as_str().unwrap()]);
    assert!(
        !log.stdout.contains("accepted — add a test for sub()"),
        "{}",
        log.stdout
    );
}

#[test]
fn a_command_that_failed_before_the_run_holds_every_building_attempt_to_it_unless_off() {
    // Failing at the base, with no output that points at any file: the failure is still the
    // task's, so an attempt after which it still fails is not accepted, and the builder is
    // told how it fails (a failure used to be waved through as outside the task when it
    // named no file).
    let s = breaking_scenario(vec![Reply::text(broken_test_answer())], "exit 3", "");
    let r = s.run(&["--max-retries", "1"]);
    let out = run_json(&r.stdout);
    assert_ne!(out["status"], "approved", "{out}");
    assert!(out["stages"][1]["commit"].is_null(), "{out}");
    assert_eq!(out["stages"][1]["attempts"], 2, "{out}");
    let retry = s.requests_for("implement")[1].to_string();
    assert!(
        retry.contains("THE VERIFY COMMAND STILL FAILS WITH YOUR CHANGE")
            && retry.contains("exits with 3; it failed at the run's base too"),
        "{retry}"
    );
    // Turned off: only the Verify stage runs it.
    let s = breaking_scenario(
        vec![Reply::text(broken_test_answer())],
        "! grep -rq BROKEN tests",
        "while_building = false\n",
    );
    let r = s.run(&["--max-retries", "0"]);
    let out = run_json(&r.stdout);
    assert_eq!(out["stages"][2]["attempts"], 1, "{out}");
    let runs = verify_runs(&r.stderr);
    assert_eq!(runs, 1, "{}", r.stderr);
}
