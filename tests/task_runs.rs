//! Seed 004 through real runs: a BLOCKED stage waits for its dependency tasks and its run
//! continues where it stopped when they close; an OUT_OF_SCOPE answer runs the stage the
//! arbiter gave the work to. Scripted models, real git, the real binary.

use git_triad::task::{lifecycle, ArbiterDecision, Decision};
use git_triad::testkit::fake_llm::Reply;
use serde_json::{json, Value};

use crate::common::user_state;
use crate::pipeline::{happy_rules, implement_answer, run_json, stage, Scenario};

fn outcome(v: Value) -> Reply {
    Reply::text(format!("```json\n{v}\n```\n"))
}

fn blocked() -> Reply {
    outcome(
        json!({"summary": "need the logs", "confidence": 0.5, "outcome": "BLOCKED",
        "dependencies": [{"task": "gather the crash logs", "owner": "operator"}]}),
    )
}

/// A run whose implement stage answers BLOCKED first, then does the work.
fn blocked_scenario() -> Scenario {
    let mut rules = vec![stage(
        "implement",
        vec![blocked(), Reply::text(implement_answer())],
    )];
    rules.extend(happy_rules());
    Scenario::new(rules)
}

fn task_show(s: &Scenario) -> String {
    s.env
        .triad(&s.repo, &["task", "show", "add-sub", "--all"])
        .ok()
        .stdout
        .clone()
}

/// BLOCKED waits (exit 6) with its dependency recorded on the task ref only; `resume` while
/// it is open says what it waits for; closing it continues the run from the blocked stage
/// (the stage is told what was done), and the run finishes. Nothing is ever written into
/// the working tree.
#[test]
fn a_blocked_run_waits_then_continues_when_its_dependency_closes() {
    let s = blocked_scenario();
    let before = user_state(&s.env, &s.repo);
    let r = s.run(&[]);
    r.expect_code(6);
    let out = run_json(&r.stdout);
    assert_eq!(out["status"], "waiting_on_user", "{out}");
    let run = out["run"].as_str().unwrap().to_string();
    assert!(
        out["hints"][0]
            .as_str()
            .unwrap()
            .contains("git triad task close <dep>"),
        "{out}"
    );
    assert_eq!(s.git(&["status", "--porcelain"]), "");
    assert_eq!(user_state(&s.env, &s.repo), before);
    // The dependency lives on its own task ref, saying what it is.
    let dep = s
        .env
        .triad(&s.repo, &["task", "show", "add-sub-dep-1"])
        .ok()
        .stdout
        .clone();
    assert!(dep.contains("gather the crash logs"), "{dep}");
    assert!(dep.contains("parent:            add-sub"), "{dep}");

    let early = s.env.triad(&s.repo, &["resume", &run]);
    early.expect_code(6);
    assert!(
        early.stderr.contains("waits for the dependency task(s)")
            && early.stderr.contains("add-sub-dep-1"),
        "{}",
        early.stderr
    );

    let closed = s.env.triad(
        &s.repo,
        &[
            "task",
            "close",
            "add-sub-dep-1",
            "--reason",
            "logs attached",
        ],
    );
    closed.ok();
    assert!(
        closed.stderr.contains(&format!("run {run} continues")),
        "{}",
        closed.stderr
    );
    assert!(closed.stdout.contains("approved"), "{}", closed.stdout);
    // The blocked stage went on where it stopped, told what its dependency became.
    let implement = s.requests_for("implement");
    assert_eq!(implement.len(), 2);
    let prompt = implement[1].to_string();
    assert!(
        prompt.contains("YOUR DEPENDENCIES ARE DONE")
            && prompt.contains("gather the crash logs (task add-sub-dep-1): closed"),
        "{prompt}"
    );
    assert_eq!(
        s.requests_for("architect").len(),
        1,
        "the architect is not paid twice"
    );
    let log = s.env.triad(&s.repo, &["log", &run, "--format", "json"]);
    let v: Value = serde_json::from_str(log.ok().stdout.trim()).unwrap();
    assert_eq!(v["status"], "approved", "{v}");
    assert_eq!(s.git(&["status", "--porcelain"]), "");
    assert_eq!(user_state(&s.env, &s.repo), before);
    let show = task_show(&s);
    assert_eq!(show.matches("(new) -> OPEN").count(), 1, "{show}");
    assert!(show.contains("task add-sub  APPROVED"), "{show}");
}

/// The dependency closed without the command that continues runs (by another tool, here the
/// library): `git triad resume` takes the run up from the blocked stage.
#[test]
fn resume_continues_a_blocked_run_whose_dependency_closed_elsewhere() {
    let s = blocked_scenario();
    let r = s.run(&[]);
    let run = run_json(&r.expect_code(6).stdout)["run"]
        .as_str()
        .unwrap()
        .to_string();
    let repo = git2::Repository::open(&s.repo).unwrap();
    let d = ArbiterDecision::new("add-sub-dep-1", Decision::Close, "done by hand");
    lifecycle::decide(&repo, "add-sub-dep-1", &d, "Ann <ann@example.com>").unwrap();
    let resumed = s.env.triad(&s.repo, &["resume", &run, "--json"]);
    let out = run_json(&resumed.ok().stdout);
    assert_eq!(out["status"], "approved", "{out}");
    assert_eq!(s.requests_for("implement").len(), 2);
    assert_eq!(s.git(&["status", "--porcelain"]), "");
}

/// OUT_OF_SCOPE naming another stage runs that stage: implement gives the work back to the
/// architect, which redoes its stage told why, and the run goes on to the end.
#[test]
fn out_of_scope_runs_the_stage_the_work_was_given_to() {
    let mut rules = vec![stage(
        "implement",
        vec![
            outcome(
                json!({"summary": "sub() needs a different interface first", "confidence": 0.6,
                "outcome": "OUT_OF_SCOPE", "suggested_role": "architect"}),
            ),
            Reply::text(implement_answer()),
        ],
    )];
    rules.extend(happy_rules());
    let s = Scenario::new(rules);
    let r = s.run(&[]);
    let out = run_json(&r.ok().stdout);
    assert_eq!(out["status"], "approved", "{out}");
    let arch = s.requests_for("architect");
    assert_eq!(arch.len(), 2, "the architect takes the work over");
    let prompt = arch[1].to_string();
    assert!(
        prompt.contains("REASSIGNED TO YOU")
            && prompt.contains("sub() needs a different interface first"),
        "{prompt}"
    );
    assert!(
        r.stderr.contains(
            "[implement] out of its scope: the arbiter gave the work to the architect stage"
        ),
        "{}",
        r.stderr
    );
    let show = task_show(&s);
    assert!(show.contains("-> REASSIGNED"), "{show}");
    assert!(
        show.contains("the architect stage takes the work over"),
        "{show}"
    );
}

/// Two stages that keep handing the work to each other stop after a bounded number of
/// hand-overs and wait for a person (exit 6), who can give it to a stage and resume.
#[test]
fn stages_handing_work_back_and_forth_stop_for_a_person() {
    let away = |to: &str| {
        outcome(
            json!({"summary": format!("this is for {to}"), "confidence": 0.6,
            "outcome": "OUT_OF_SCOPE", "suggested_role": to}),
        )
    };
    let mut rules = vec![
        stage("implement", vec![away("refactor")]),
        stage("refactor", vec![away("implement")]),
    ];
    rules.extend(happy_rules());
    let s = Scenario::new(rules);
    let r = s.run(&[]);
    let out = run_json(&r.expect_code(6).stdout);
    assert_eq!(out["status"], "waiting_on_user", "{out}");
    let hints = out["hints"].to_string();
    assert!(
        hints.contains("git triad task reassign add-sub --to <stage>"),
        "{hints}"
    );
    let moves = s.requests_for("implement").len() + s.requests_for("refactor").len();
    assert_eq!(moves, 3, "two hand-overs, then a person");
}
