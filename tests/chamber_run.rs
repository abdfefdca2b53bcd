//! The chamber inside a run (`git triad run --chamber auto`, seed 003 with seed 004's
//! outcomes): a stage answering LOW_CONFIDENCE, or an arbiter REJECT at a doubtful
//! confidence, opens a Level 2 session over real HTTP; its auto-accepted answer reaches
//! the stage's retry, its id is in the run record and the verdict note; a session not
//! confident enough stops the run for the founder (exit 6) until `chamber act` and
//! `resume`; `--chamber off` leaves the run as it was.
//!
//! Panel: model-a and model-c; the chamber's arbiter is model-b (also the stage arbiter).

use git_triad::testkit::fake_llm::{Reply, Rule};
use serde_json::{json, Value};

use crate::pipeline::{
    arbiter, architect_answer, happy_rules, implement_answer, issue, on, review, run_json,
    run_record, stage, verify_answer, Scenario,
};

const PANEL: &[&str] = &[
    "-c",
    "chamber.panel=model-a,model-c",
    "-c",
    "chamber.arbiter=model-b",
];

fn panelist(stance: &str) -> Reply {
    Reply::json(json!({
        "stance": stance,
        "reasoning": "the TaskSpec asks for sub(a, b) and nothing blocks it",
        "confidence": 8,
        "evidence": ["R1 in the TaskSpec: sub(a, b) returns a - b"],
    }))
}

fn synthesis(confidence: u8) -> Reply {
    Reply::json(json!({
        "consensus": true,
        "answer": "go ahead: write sub(a, b) returning a - b, as R1 says",
        "stance": "go ahead",
        "reasoning": "both panelists read R1 the same way",
        "disagreement": "none",
        "positions": [],
        "minority": [],
        "confidence": confidence,
        "self_check": "",
        "resolution": "none",
    }))
}

/// The chamber's rules: both panelists say go, the assessor sees no disagreement, the
/// arbiter synthesizes at `confidence`.
fn chamber_rules(confidence: u8) -> Vec<Rule> {
    let ask = "Answer with JSON only: `stance`, `reasoning`";
    vec![
        on("model-a", "panel-a", ask, vec![panelist("go ahead")]),
        on("model-c", "panel-c", ask, vec![panelist("go ahead")]),
        on(
            "model-b",
            "assessor",
            "making an initial assessment",
            vec![Reply::json(
                json!({"meaningful_disagreement": false, "why": "same reading"}),
            )],
        ),
        on(
            "model-b",
            "synthesis",
            "You synthesize; you do not vote.",
            vec![synthesis(confidence)],
        ),
    ]
}

fn low_confidence() -> String {
    format!(
        "I am not sure this is wanted.\n```json\n{}\n```\n",
        json!({"summary": "unsure whether sub() belongs in calc.py", "confidence": 0.4,
               "outcome": "LOW_CONFIDENCE", "evidence_needed": [], "suggestions": [], "objections": []})
    )
}

/// The happy run whose implement stage first answers LOW_CONFIDENCE.
fn unsure_implementer(confidence: u8) -> Vec<Rule> {
    let mut rules = chamber_rules(confidence);
    rules.push(stage(
        "implement",
        vec![
            Reply::text(low_confidence()),
            Reply::text(implement_answer()),
        ],
    ));
    rules.extend(happy_rules());
    rules
}

fn run(s: &Scenario, extra: &[&str]) -> crate::common::Run {
    let mut args = vec!["run", "--task", "add-sub", "--json"];
    args.extend_from_slice(PANEL);
    args.extend_from_slice(extra);
    s.env.triad(&s.repo, &args)
}

fn prompt_of(req: &Value) -> String {
    req["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn a_low_confidence_stage_gets_the_chambers_answer_in_its_retry() {
    let s = Scenario::new(unsure_implementer(9));
    let r = run(&s, &[]);
    let out = run_json(&r.ok().stdout);
    assert_eq!(out["status"], "approved", "{out}\n{}", r.stderr);
    let sessions = &out["chamber"]["sessions"];
    assert_eq!(sessions.as_array().unwrap().len(), 1, "{out}");
    assert_eq!(sessions[0]["trigger"], "LOW_CONFIDENCE");
    assert_eq!(sessions[0]["stage"], "implement");
    assert_eq!(sessions[0]["outcome"], "auto-accepted");
    let id = sessions[0]["session"].as_str().unwrap().to_string();

    // The retry's prompt carries the decision, with the session named.
    let implement = s.requests_for("implement");
    assert_eq!(implement.len(), 2);
    let retry = prompt_of(&implement[1]);
    assert!(retry.contains("THE CHAMBER'S DECISION"), "{retry}");
    assert!(retry.contains(&id), "{retry}");
    assert!(retry.contains("write sub(a, b) returning a - b"), "{retry}");
    // The panel was asked about the stage's own words, with the TaskSpec.
    let asked = prompt_of(&s.requests_for("panel-a")[0]);
    assert!(asked.contains("answered LOW_CONFIDENCE"), "{asked}");
    assert!(asked.contains("sub(a, b) returns a - b"), "{asked}");

    // The run record and the session point at each other.
    let record = run_record(&s, &out);
    assert_eq!(record["chamber"]["sessions"][0]["session"], id.as_str());
    let shown = s
        .env
        .triad(&s.repo, &["chamber", "show", &id, "--format", "json"]);
    let session: Value = serde_json::from_str(&shown.ok().stdout).unwrap();
    assert_eq!(session["status"], "auto_accepted");
    assert_eq!(session["assessment"]["level"], "2");
    let by = session["opened_by"].as_str().unwrap();
    assert!(by.contains(out["run"].as_str().unwrap()), "{by}");
    // `log` says it too.
    let log = s.env.triad(&s.repo, &["log", out["run"].as_str().unwrap()]);
    assert!(
        log.ok().stdout.contains(&format!("session {id}")),
        "{}",
        log.stdout
    );
}

#[test]
fn an_escalated_session_stops_the_run_until_the_founder_acts_and_resumes() {
    let s = Scenario::new(unsure_implementer(6));
    let r = run(&s, &[]);
    assert_eq!(r.code, 6, "{}\n{}", r.stdout, r.stderr);
    let out = run_json(&r.stdout);
    assert_eq!(out["status"], "waiting_on_user", "{out}");
    assert_eq!(out["stop"]["reason"], "chamber", "{out}");
    let id = out["stop"]["session"].as_str().unwrap().to_string();
    let hints = out["hints"].to_string();
    assert!(
        hints.contains(&format!("git triad chamber act {id}")),
        "{hints}"
    );
    let run_id = out["run"].as_str().unwrap().to_string();

    // Resuming before acting waits still, and asks nothing.
    let before = s.server.requests().len();
    let early = s.env.triad(&s.repo, &["resume", &run_id]);
    assert_eq!(early.code, 6, "{}", early.stderr);
    assert!(
        early.stderr.contains("waits on your action"),
        "{}",
        early.stderr
    );
    assert_eq!(s.server.requests().len(), before);

    let act = s.env.triad(
        &s.repo,
        &["chamber", "act", &id, "accepted", "--note", "fine by me"],
    );
    act.ok();
    let resumed = s.env.triad(&s.repo, &["resume", &run_id, "--json"]);
    let done = run_json(&resumed.ok().stdout);
    assert_eq!(done["status"], "approved", "{done}\n{}", resumed.stderr);
    let retry = prompt_of(&s.requests_for("implement")[1]);
    assert!(retry.contains("THE CHAMBER'S DECISION"), "{retry}");
    assert!(
        retry.contains("The founder accepted it: fine by me"),
        "{retry}"
    );
    assert_eq!(
        done["chamber"]["sessions"][0]["outcome"],
        "applied: the founder took it"
    );
}

#[test]
fn a_doubtful_rejection_is_deliberated_and_its_note_names_the_session() {
    let mut doubtful = review(
        "REJECT",
        json!([issue(
            "sub must validate its inputs",
            "raise NotImplementedError"
        )]),
    );
    doubtful["confidence"] = json!(0.7);
    doubtful["reasoning"] = json!("the scaffold may be the wrong shape");
    let mut rules = chamber_rules(9);
    rules.push(stage(
        "architect",
        vec![
            Reply::text(architect_answer()),
            Reply::text(architect_answer()),
        ],
    ));
    rules.push(arbiter(
        "architect",
        vec![doubtful, review("APPROVE", json!([]))],
    ));
    rules.extend(happy_rules());
    let s = Scenario::new(rules);
    let r = run(&s, &[]);
    let out = run_json(&r.ok().stdout);
    assert_eq!(out["status"], "approved", "{out}\n{}", r.stderr);
    let link = &out["chamber"]["sessions"][0];
    assert_eq!(link["trigger"], "arbiter REJECT at 0.70", "{out}");
    let id = link["session"].as_str().unwrap();
    let asked = prompt_of(&s.requests_for("panel-c")[0]);
    assert!(asked.contains("the wrong shape"), "{asked}");

    // The rejected attempt's note carries the session id; the retry has both blocks.
    let notes = s.git(&["log", "--all", "--notes=triad", "--format=%N"]);
    assert!(notes.contains(&format!("\"chamber\":\"{id}\"")), "{notes}");
    let architect: Vec<Value> = s
        .server
        .requests()
        .into_iter()
        .filter(|q| q.rule.as_deref() == Some("architect"))
        .filter_map(|q| q.json)
        .collect();
    let retry = prompt_of(&architect[1]);
    assert!(retry.contains("THE CHAMBER'S DECISION"), "{retry}");
}

#[test]
fn a_rejection_the_facts_decided_is_not_deliberated() {
    // The verify command fails (at the Verify stage only: the building stages do not run
    // it). Once the arbiter approves, unsure (0.70), and the facts floor the verdict at
    // REJECT; once it rejects, unsure, as the facts do: no panel is asked whether failing
    // tests fail.
    let mut unsure = review("APPROVE", json!([]));
    unsure["confidence"] = json!(0.7);
    let mut agrees = review(
        "REJECT",
        json!([issue("sub must validate its inputs", "return a - b")]),
    );
    agrees["confidence"] = json!(0.8);
    let mut rules = chamber_rules(9);
    rules.push(stage(
        "verify",
        vec![Reply::text(verify_answer()), Reply::text(verify_answer())],
    ));
    rules.push(arbiter("verify", vec![unsure, agrees]));
    rules.extend(happy_rules());
    let s = Scenario::new(rules);
    s.env.write_user_config(&format!(
        "{}\n[verify]\ncommand = \"exit 3\"\ntimeout_secs = 60\nwhile_building = false\n",
        crate::common::fake_user_config(&s.server.base_url())
    ));
    let r = run(&s, &["--max-retries", "1"]);
    let out = run_json(&r.stdout);
    assert_ne!(out["status"], "approved", "{out}");
    assert_eq!(out["stages"][3]["attempts"], 2, "{out}");
    assert_eq!(out["chamber"]["sessions"], json!([]), "{out}");
    assert!(s.requests_for("panel-a").is_empty());
}

#[test]
fn with_the_chamber_off_a_low_confidence_stage_stops_as_before() {
    let s = Scenario::new(unsure_implementer(9));
    let r = run(&s, &["--chamber", "off"]);
    let out = run_json(&r.stdout);
    assert_ne!(out["status"], "approved", "{out}");
    assert_eq!(out["stop"]["reason"], "outcome", "{out}");
    assert!(out["chamber"].is_null(), "{out}");
    assert!(s.requests_for("panel-a").is_empty());
}

#[test]
fn the_chamber_is_off_without_a_panel_and_a_bad_panel_is_refused() {
    let s = Scenario::new(unsure_implementer(9));
    // No panel configured: off by default, nothing deliberated.
    let plain = s
        .env
        .triad(&s.repo, &["run", "--task", "add-sub", "--json"]);
    assert!(
        run_json(&plain.stdout)["chamber"].is_null(),
        "{}",
        plain.stdout
    );
    assert!(s.requests_for("panel-a").is_empty());
    // Asked for with a panel of one: a usage error before anything runs.
    let bad = s.env.triad(
        &s.repo,
        &[
            "run",
            "--task",
            "add-sub",
            "--chamber",
            "auto",
            "-c",
            "chamber.panel=model-a",
        ],
    );
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert!(bad.stderr.contains("--chamber auto"), "{}", bad.stderr);
    assert!(
        bad.stderr.contains("two or three distinct models"),
        "{}",
        bad.stderr
    );
}
