//! The task state machine (seed 004): the four acceptance scenarios, storage in git, the
//! `git triad task` commands, and a property test over random event sequences.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use git_triad::task::machine::allowed;
use git_triad::task::outcome::{Outcome, StageMeta};
use git_triad::task::state::{parse_history, EventKind};
use git_triad::task::{
    lifecycle, store, Actor, Answer, ArbiterDecision, Decision, Machine, RunStatus, TaskError,
    TaskState,
};
use serde_json::{json, Value};

use crate::common::{Run, TestEnv};
use crate::user_output::{check, json_transcript, transcript};

const TASK: &str = "title = \"Add subtraction\"\ndescription = \"calc.py needs sub.\"\n";

/// A repository with one committed TaskSpec (`add-sub`), opened with libgit2 too.
fn setup() -> (TestEnv, std::path::PathBuf, git2::Repository) {
    let env = TestEnv::new();
    let dir = env.repo(
        "proj",
        &[
            ("calc.py", "def add(a, b):\n    return a + b\n"),
            (".triad/tasks/add-sub.toml", TASK),
        ],
    );
    let repo = git2::Repository::open(&dir).unwrap();
    (env, dir, repo)
}

fn meta(v: Value) -> StageMeta {
    serde_json::from_value(v).unwrap()
}

fn task(repo: &git2::Repository, slug: &str) -> git_triad::task::Task {
    store::load_task(repo, slug).unwrap().expect("task record")
}

fn history(repo: &git2::Repository, slug: &str) -> Vec<git_triad::task::HistoryEntry> {
    store::load(repo, slug)
        .unwrap()
        .expect("task record")
        .history
}

fn show_json(env: &TestEnv, dir: &Path, slug: &str) -> Value {
    let run = env.triad(dir, &["task", "show", slug, "--json"]);
    serde_json::from_str(run.ok().stdout.trim()).unwrap()
}

/// Reports `outcome` (a StageMeta as JSON) for `stage` of run `r1` of `add-sub`.
fn stage_outcome(repo: &git2::Repository, stage: &str, outcome: Value) -> ArbiterDecision {
    lifecycle::on_stage_outcome(repo, "add-sub", "r1", stage, &meta(outcome)).unwrap()
}

/// Ends run `r1` of `add-sub` halted, as the arbiter; answers the task after it.
fn halted(repo: &git2::Repository) -> git_triad::task::Task {
    lifecycle::on_run_end(
        repo,
        "add-sub",
        "r1",
        RunStatus::Halted,
        None,
        Actor::Arbiter,
    )
    .unwrap()
}

/// Starts run `r1` of `add-sub` at `stage`, then reports the stage's `outcome`.
fn run_to_outcome(repo: &git2::Repository, stage: &str, outcome: Value) -> ArbiterDecision {
    lifecycle::on_run_start(repo, "add-sub", "r1", stage).unwrap();
    stage_outcome(repo, stage, outcome)
}

/// `git triad task <verb> <slug> --reason <reason>`.
fn task_decision(env: &TestEnv, dir: &Path, verb: &str, slug: &str, reason: &str) -> Run {
    env.triad(dir, &["task", verb, slug, "--reason", reason])
}

/// `git triad task answer add-sub --file F`, with `text` in F.
fn answer_from_file(env: &TestEnv, dir: &Path, text: &str) -> Run {
    let file = env.root().join("answers.txt");
    std::fs::write(&file, text).unwrap();
    env.triad(
        dir,
        &[
            "task",
            "answer",
            "add-sub",
            "--file",
            file.to_str().unwrap(),
        ],
    )
}

#[track_caller]
fn assert_contains(text: &str, part: &str) {
    assert!(text.contains(part), "missing {part:?} in:\n{text}");
}

/// A person defers add-sub until a date.
const DEFER: [&str; 7] = [
    "task",
    "defer",
    "add-sub",
    "--reason",
    "after the release",
    "--revisit-at",
    "2099-09-01",
];

/// Seed 004 scenario 1: three questions → WAITING_ON_USER (owner user); answers → ASSIGNED to
/// the same specialist, and the resumed stage gets them in its prompt.
#[test]
fn needs_info_waits_on_the_user_and_answers_return_it_to_the_same_stage() {
    let (env, dir, repo) = setup();
    lifecycle::on_run_start(&repo, "add-sub", "r1", "architect").unwrap();
    let t = lifecycle::on_stage_start(&repo, "add-sub", "r1", "implement").unwrap();
    assert_eq!(
        (t.state, t.assigned_to.as_str()),
        (TaskState::InReview, "implement")
    );
    let d = stage_outcome(
        &repo,
        "implement",
        json!({"outcome": "NEEDS_INFO", "summary": "unclear",
            "questions": ["Which module?", "Integers only?", "Name of the function?"]}),
    );
    assert_eq!(d.decision, Decision::WaitingOnUser);
    let t = task(&repo, "add-sub");
    assert_eq!(
        (t.state, t.owner.as_str()),
        (TaskState::WaitingOnUser, "user")
    );
    assert_eq!(t.questions.len(), 3);
    assert_contains(&t.next_action, "git triad task answer add-sub");
    // The run's end does not move it: the outcome already routed it.
    lifecycle::on_run_end(
        &repo,
        "add-sub",
        "r1",
        RunStatus::WaitingOnUser,
        None,
        Actor::Arbiter,
    )
    .unwrap();
    assert_eq!(task(&repo, "add-sub").state, TaskState::WaitingOnUser);
    assert_eq!(lifecycle::answers_for(&repo, "add-sub").unwrap(), None);

    let run = answer_from_file(
        &env,
        &dir,
        "# my answers\nQ: Which module?\nA: calc.py\n\nQ: Integers only?\nA: no, floats too\n\
         Q: Name of the function?\nA: sub\n",
    );
    assert_contains(&run.ok().stdout, "git triad resume r1");
    let t = task(&repo, "add-sub");
    assert_eq!(
        (t.state, t.assigned_to.as_str(), t.owner.as_str()),
        (TaskState::Assigned, "implement", "implement")
    );
    assert_eq!(t.answers[1].answer, "no, floats too");
    let block = lifecycle::answers_for(&repo, "add-sub")
        .unwrap()
        .expect("answers");
    assert!(block.starts_with("## ANSWERS FROM THE USER"), "{block}");
    assert!(
        block.contains("Integers only?") && block.contains("floats too"),
        "{block}"
    );
    let last = history(&repo, "add-sub").pop().unwrap();
    assert_eq!((last.actor, last.event), (Actor::User, EventKind::Answers));
    assert_eq!(
        last.by.as_deref(),
        Some("Test Committer <committer@example.com>")
    );
    // Resuming the run puts the same stage back to work.
    let t = lifecycle::on_run_start(&repo, "add-sub", "r1", "implement").unwrap();
    assert_eq!(
        (t.state, t.assigned_to.as_str()),
        (TaskState::InReview, "implement")
    );
}

/// Scenario 2: OUT_OF_SCOPE suggesting "refactor" → REASSIGNED to it, never closed.
#[test]
fn out_of_scope_reassigns_to_the_suggested_specialist() {
    let (_env, _dir, repo) = setup();
    let d = run_to_outcome(
        &repo,
        "implement",
        json!({"outcome": "OUT_OF_SCOPE", "summary": "a cleanup", "suggested_role": "refactor"}),
    );
    assert_eq!(
        (d.decision, d.assigned_to.as_deref()),
        (Decision::Reassign, Some("refactor"))
    );
    // The pipeline halts on a non-APPROVE outcome; the task keeps its routing.
    let t = halted(&repo);
    assert_eq!(
        (t.state, t.assigned_to.as_str(), t.owner.as_str()),
        (TaskState::Reassigned, "refactor", "refactor")
    );
    let h = history(&repo, "add-sub");
    let kinds: Vec<_> = h.iter().map(|e| (e.event, e.to)).collect();
    assert!(kinds.contains(&(EventKind::Response, TaskState::RejectedWithReason)));
    assert!(kinds.contains(&(EventKind::Decision, TaskState::Reassigned)));
    assert_eq!(h.last().unwrap().event, EventKind::Note);
}

/// Scenario 3: BLOCKED → dependency task (a record, no file), parent BLOCKED; closing the
/// dependency resumes the parent, assigned to the original specialist.
#[test]
fn blocked_creates_a_dependency_and_closing_it_resumes_the_parent() {
    let (env, dir, repo) = setup();
    let d = run_to_outcome(
        &repo,
        "implement",
        json!({"outcome": "BLOCKED", "summary": "need the logs",
            "dependencies": [{"task": "gather logs", "owner": "operator"}]}),
    );
    assert_eq!(d.decision, Decision::CreateDependency);
    assert_eq!(d.created_tasks, ["add-sub-dep-1"]);
    let parent = task(&repo, "add-sub");
    assert_eq!(parent.state, TaskState::Blocked);
    assert_eq!(parent.blocked_on, ["add-sub-dep-1"]);
    assert_eq!(parent.owner, "operator");
    let dep = task(&repo, "add-sub-dep-1");
    assert_eq!(
        (dep.state, dep.owner.as_str(), dep.parent.as_deref()),
        (TaskState::Assigned, "operator", Some("add-sub"))
    );
    assert!(
        dep.next_action.contains("gather logs"),
        "{}",
        dep.next_action
    );
    // The dependency is a record on its own ref; the working tree is never touched.
    assert!(!dir.join(".triad/tasks/add-sub-dep-1.toml").exists());
    let status = env
        .git(&dir, &["status", "--porcelain"])
        .ok()
        .stdout
        .clone();
    assert_eq!(status, "");

    let close = ["task", "close", "add-sub-dep-1", "--reason", "done"];
    insta::assert_snapshot!(transcript(&env, None, &dir, &close), @r"
    $ git triad task close add-sub-dep-1 --reason done
    exit: 0
    --- stdout
    Task `add-sub-dep-1` is now CLOSED (an arbiter decision, taken by you): done
    next: none: closed (by Test Committer <committer@example.com>: done)
    until: reopen with `git triad run --task add-sub-dep-1`
    Its parent `add-sub` has every dependency done and is ASSIGNED to the implement stage again.
    next: the implement stage continues: start a run with `git triad run --task add-sub`
    --- stderr
    (empty)
    ");
    let parent = task(&repo, "add-sub");
    assert_eq!(
        (
            parent.state,
            parent.assigned_to.as_str(),
            parent.owner.as_str()
        ),
        (TaskState::Assigned, "implement", "implement")
    );
    let last = history(&repo, "add-sub").pop().unwrap();
    assert_eq!(
        (last.event, last.actor),
        (EventKind::Resumed, Actor::Arbiter)
    );
    let closed = history(&repo, "add-sub-dep-1").pop().unwrap();
    let decision = closed.decision.unwrap();
    assert_eq!(decision.decision, Decision::Close);
    assert_eq!(
        decision.note,
        "by Test Committer <committer@example.com>: done"
    );
}

/// Each decision and the answers confirm, in a line or two, the task's new state, the reason
/// given and what comes next.
#[test]
fn answers_and_decisions_say_the_new_state_and_what_follows() {
    let (env, dir, repo) = setup();
    run_to_outcome(
        &repo,
        "implement",
        json!({"outcome": "NEEDS_INFO", "questions": ["Which module?", "Floats?"]}),
    );
    let file = env.root().join("answers.txt");
    std::fs::write(&file, "Q: Which module?\nA: calc.py\nQ: Floats?\nA: yes\n").unwrap();
    let answer = [
        "task",
        "answer",
        "add-sub",
        "--file",
        file.to_str().unwrap(),
    ];
    insta::assert_snapshot!(transcript(&env, None, &dir, &answer), @r"
    $ git triad task answer add-sub --file [ROOT]/answers.txt
    exit: 0
    --- stdout
    Recorded 2 answer(s) for task `add-sub`: it is ASSIGNED to the implement stage again.
    next: `git triad resume r1` continues the run with your answers
    --- stderr
    (empty)
    ");
    let reassign = [
        "task",
        "reassign",
        "add-sub",
        "--to",
        "refactor",
        "--reason",
        "the tests belong to the refactor stage",
    ];
    insta::assert_snapshot!(transcript(&env, None, &dir, &reassign), @r"
    $ git triad task reassign add-sub --to refactor --reason 'the tests belong to the refactor stage'
    exit: 0
    --- stdout
    Task `add-sub` is now REASSIGNED (an arbiter decision, taken by you): the tests belong to the refactor stage
    next: refactor takes it over: start a run (`git triad run --task add-sub`) or do it by hand and close it
    until: refactor picks it up
    --- stderr
    (empty)
    ");
    insta::assert_snapshot!(transcript(&env, None, &dir, &DEFER), @r"
    $ git triad task defer add-sub --reason 'after the release' --revisit-at 2099-09-01
    exit: 0
    --- stdout
    Task `add-sub` is now DEFERRED (an arbiter decision, taken by you): after the release
    next: none: deferred (by Test Committer <committer@example.com>: after the release)
    until: revisit at 2099-09-01: reopen with `git triad run --task add-sub`
    --- stderr
    (empty)
    ");
    let close = ["task", "close", "add-sub", "--reason", "dropped"];
    insta::assert_snapshot!(transcript(&env, None, &dir, &close), @r"
    $ git triad task close add-sub --reason dropped
    exit: 0
    --- stdout
    Task `add-sub` is now CLOSED (an arbiter decision, taken by you): dropped
    next: none: closed (by Test Committer <committer@example.com>: dropped)
    until: reopen with `git triad run --task add-sub`
    --- stderr
    (empty)
    ");
}

/// Two dependencies: the parent waits for both; the name of an existing TaskSpec is not reused
/// and the file is left as it was.
#[test]
fn a_parent_waits_for_every_dependency_and_names_are_never_reused() {
    let (env, dir, repo) = setup();
    env.write_files(
        &dir,
        &[(".triad/tasks/add-sub-dep-1.toml", "title = \"mine\"\n")],
    );
    let d = run_to_outcome(
        &repo,
        "architect",
        json!({"outcome": "BLOCKED", "dependencies": [
            {"task": "a \"quoted\"\nmulti-line task", "owner": ""}, {"task": "b", "owner": "ops"}]}),
    );
    assert_eq!(d.created_tasks, ["add-sub-dep-2", "add-sub-dep-3"]);
    let mine = std::fs::read_to_string(dir.join(".triad/tasks/add-sub-dep-1.toml")).unwrap();
    assert_eq!(mine, "title = \"mine\"\n");
    assert!(!dir.join(".triad/tasks/add-sub-dep-2.toml").exists());
    let dep2 = task(&repo, "add-sub-dep-2");
    assert!(
        dep2.next_action.contains("a \"quoted\"\nmulti-line task"),
        "{}",
        dep2.next_action
    );
    assert_eq!(task(&repo, "add-sub-dep-3").owner, "ops");

    task_decision(&env, &dir, "close", "add-sub-dep-2", "done").ok();
    assert_eq!(task(&repo, "add-sub").state, TaskState::Blocked);
    // A deferred dependency is not done.
    task_decision(&env, &dir, "defer", "add-sub-dep-3", "later").ok();
    assert_eq!(task(&repo, "add-sub").state, TaskState::Blocked);
    // Approved by its own run counts as done.
    lifecycle::on_run_start(&repo, "add-sub-dep-3", "r2", "architect").unwrap();
    lifecycle::on_run_end(
        &repo,
        "add-sub-dep-3",
        "r2",
        RunStatus::Approved,
        Some("APPROVE"),
        Actor::Arbiter,
    )
    .unwrap();
    let parent = task(&repo, "add-sub");
    assert_eq!(
        (parent.state, parent.assigned_to.as_str()),
        (TaskState::Assigned, "architect")
    );
}

/// Scenario 4: POLICY_VIOLATION → ESCALATED; the arbiter either closes it "not allowed" or
/// routes the compliant alternative. Both paths leave a decision; nothing is dropped.
#[test]
fn policy_violation_escalates_then_closes_or_routes_the_alternative() {
    for path in ["close", "route"] {
        let (env, dir, repo) = setup();
        let d = run_to_outcome(
            &repo,
            "implement",
            json!({"outcome": "POLICY_VIOLATION", "summary": "would log secrets",
                "policy_refs": [{"id": "POL-7", "reason": "no secrets in logs"}],
                "alternatives": [{"option": "redact before logging", "delta": "+10 lines"}]}),
        );
        assert_eq!(d.decision, Decision::Escalate);
        let t = halted(&repo);
        assert_eq!(
            (t.state, t.owner.as_str()),
            (TaskState::Escalated, "arbiter")
        );
        for part in [
            "POL-7",
            "redact before logging",
            "git triad task close add-sub",
        ] {
            assert_contains(&t.next_action, part);
        }
        if path == "close" {
            task_decision(&env, &dir, "close", "add-sub", "not allowed: POL-7").ok();
            let t = task(&repo, "add-sub");
            assert_eq!(t.state, TaskState::Closed);
            assert_contains(&t.next_action, "not allowed: POL-7");
        } else {
            let run = env.triad(
                &dir,
                &[
                    "task",
                    "reassign",
                    "add-sub",
                    "--to",
                    "implementer",
                    "--reason",
                    "redact before logging",
                ],
            );
            run.ok();
            let t = task(&repo, "add-sub");
            assert_eq!(
                (t.state, t.assigned_to.as_str()),
                (TaskState::Reassigned, "implement")
            );
        }
        let decisions: Vec<_> = history(&repo, "add-sub")
            .into_iter()
            .filter_map(|e| e.decision.map(|d| (d.decision, e.actor)))
            .collect();
        let last = if path == "close" {
            Decision::Close
        } else {
            Decision::Reassign
        };
        assert_eq!(
            decisions,
            // The pipeline's arbiter escalated; the person decided.
            [(Decision::Escalate, Actor::Arbiter), (last, Actor::User)]
        );
    }
}

#[test]
fn too_costly_and_low_confidence_route_as_the_seed_says() {
    let (_env, _dir, repo) = setup();
    let outcome = |m: Value| run_to_outcome(&repo, "implement", m);
    let d = outcome(json!({"outcome": "TOO_COSTLY", "alternatives": ["an MVP without floats"]}));
    assert_eq!(d.decision, Decision::Escalate);
    let t = task(&repo, "add-sub");
    assert_eq!(t.state, TaskState::Escalated);
    for word in ["defer", "MVP", "review"] {
        assert!(t.next_action.contains(word), "{word}: {}", t.next_action);
    }
    let d = outcome(json!({"outcome": "LOW_CONFIDENCE", "evidence_needed": ["run the tests"]}));
    assert_eq!(
        (d.decision, d.assigned_to.as_deref()),
        (Decision::Reassign, Some("verify"))
    );
    let d = outcome(json!({"outcome": "LOW_CONFIDENCE"}));
    assert_eq!(d.decision, Decision::Escalate);
    let e = lifecycle::on_stage_outcome(
        &repo,
        "add-sub",
        "r1",
        "x",
        &meta(json!({"outcome": "APPROVE"})),
    )
    .unwrap_err();
    assert!(matches!(e, TaskError::ApproveNotRouted { .. }), "{e}");
}

#[test]
fn run_ends_say_who_acts_next() {
    let (_env, _dir, repo) = setup();
    let end = |status: &str| {
        lifecycle::on_run_start(&repo, "add-sub", "r1", "verify").unwrap();
        let status = RunStatus::parse(status).unwrap();
        lifecycle::on_run_end(&repo, "add-sub", "r1", status, Some("FLAG"), Actor::Arbiter).unwrap()
    };
    let t = end("halted");
    assert_eq!((t.state, t.owner.as_str()), (TaskState::Escalated, "user"));
    assert_contains(&t.next_action, "git triad override");
    let t = end("budget_exceeded");
    assert_eq!(t.state, TaskState::Escalated);
    assert_contains(&t.next_action, "git triad resume r1");
    let t = end("failed");
    assert_contains(&t.next_action, "git triad resume r1");
    let t = end("flagged");
    assert_eq!(t.state, TaskState::Approved);
    assert_contains(&t.next_action, "FLAG");
    let last = history(&repo, "add-sub").pop().unwrap();
    assert_eq!(
        (last.actor, last.decision.unwrap().decision),
        (Actor::Arbiter, Decision::Approve)
    );
    // Reopened by a new run.
    let t = lifecycle::on_run_start(&repo, "add-sub", "r2", "architect").unwrap();
    assert_eq!(t.state, TaskState::InReview);
    assert_eq!(RunStatus::parse("exploded"), None);
    assert!(matches!(
        lifecycle::on_run_end(
            &repo,
            "add-sub",
            "r2",
            RunStatus::Running,
            None,
            Actor::Arbiter
        ),
        Err(TaskError::NotEnded(_))
    ));
}

/// Each event is one commit; `history.jsonl` only grows and earlier bytes never change;
/// readers skip lines they cannot parse.
#[test]
fn history_is_an_append_only_commit_chain() {
    let (env, dir, repo) = setup();
    let mut before = Vec::new();
    let mut events = 0;
    let mut step = |f: &dyn Fn()| {
        f();
        events += 1;
        let now = store::history_bytes(&repo, "add-sub").unwrap();
        assert!(
            now.len() > before.len() && now.starts_with(&before),
            "history was rewritten"
        );
        before = now;
    };
    step(&|| drop(lifecycle::on_run_start(&repo, "add-sub", "r1", "architect").unwrap()));
    step(&|| drop(lifecycle::on_stage_start(&repo, "add-sub", "r1", "implement").unwrap()));
    step(&|| {
        stage_outcome(
            &repo,
            "implement",
            json!({"outcome": "NEEDS_INFO", "questions": ["q?"]}),
        );
    });
    step(&|| {
        lifecycle::answer(
            &repo,
            "add-sub",
            vec![Answer {
                question: "q?".into(),
                answer: "a".into(),
            }],
            "me",
        )
        .unwrap();
    });
    let count = env
        .git(&dir, &["rev-list", "--count", "refs/triad/tasks/add-sub"])
        .ok()
        .stdout
        .clone();
    assert_eq!(count.trim(), events.to_string());
    let raw = env
        .git(&dir, &["show", "refs/triad/tasks/add-sub:history.jsonl"])
        .ok()
        .stdout
        .clone();
    let lines: Vec<Value> = raw
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(lines.iter().all(|l| l["v"] == 1));
    let state: Value = serde_json::from_str(
        &env.git(&dir, &["show", "refs/triad/tasks/add-sub:state.json"])
            .ok()
            .stdout,
    )
    .unwrap();
    assert_eq!(state["state"], "ASSIGNED");
    assert_eq!(state["v"], 1);

    // A foreign writer appends garbage and a future version: readers skip both, and the
    // next event appends after them without touching them.
    let rec = store::load(&repo, "add-sub").unwrap().unwrap();
    let mut bytes = store::history_bytes(&repo, "add-sub").unwrap();
    bytes.extend_from_slice(b"not json\n{\"v\":2,\"future\":true}\n");
    let tip = repo.find_commit(rec.tip).unwrap();
    let mut tb = repo.treebuilder(Some(&tip.tree().unwrap())).unwrap();
    tb.insert("history.jsonl", repo.blob(&bytes).unwrap(), 0o100644)
        .unwrap();
    let tree = repo.find_tree(tb.write().unwrap()).unwrap();
    let sig = git2::Signature::now("x", "x@example.com").unwrap();
    let c = repo
        .commit(None, &sig, &sig, "foreign", &tree, &[&tip])
        .unwrap();
    repo.reference("refs/triad/tasks/add-sub", c, true, "foreign")
        .unwrap();
    assert_eq!(history(&repo, "add-sub").len(), rec.history.len());
    lifecycle::on_run_start(&repo, "add-sub", "r1", "implement").unwrap();
    let after = store::history_bytes(&repo, "add-sub").unwrap();
    assert!(after.starts_with(&bytes));
    assert_eq!(history(&repo, "add-sub").len(), rec.history.len() + 1);
}

/// A writer that loses the compare-and-swap race re-applies its change on the new state.
#[test]
fn a_lost_race_is_retried_on_the_new_state() {
    let (_env, _dir, repo) = setup();
    lifecycle::on_run_start(&repo, "add-sub", "r1", "implement").unwrap();
    let mut calls = 0;
    let t = store::update(&repo, "add-sub", "test", |cur| {
        calls += 1;
        if calls == 1 {
            // Someone else moves the ref between our read and our write.
            stage_outcome(
                &repo,
                "implement",
                json!({"outcome": "OUT_OF_SCOPE", "suggested_role": "verify"}),
            );
        }
        let mut m = Machine::load(cur.unwrap(), "now");
        m.note(Actor::Pipeline, None, None, &format!("attempt {calls}"));
        Ok(Some(m))
    })
    .unwrap()
    .unwrap();
    assert_eq!(calls, 2);
    assert_eq!(t.state, TaskState::Reassigned);
    let h = history(&repo, "add-sub");
    assert_eq!(h.last().unwrap().note, "attempt 2");
    assert!(h.iter().any(|e| e.to == TaskState::Reassigned));
}

#[test]
fn a_malformed_task_spec_lists_as_invalid_with_its_error() {
    let (env, dir, _repo) = setup();
    env.write_files(
        &dir,
        &[
            (".triad/tasks/broken.toml", "title = \"unclosed\n"),
            (".triad/tasks/untitled.toml", "description = \"no title\"\n"),
        ],
    );
    let run = env.triad(&dir, &["task", "list"]);
    run.ok();
    let broken = run
        .stdout
        .lines()
        .find(|l| l.starts_with("broken"))
        .unwrap();
    assert_contains(broken, "INVALID");
    assert_contains(
        broken,
        "fix the TaskSpec, then commit it: .triad/tasks/broken.toml",
    );
    let untitled = run
        .stdout
        .lines()
        .find(|l| l.starts_with("untitled"))
        .unwrap();
    assert_contains(untitled, "missing field `title`");
    assert_contains(&run.stdout, "add-sub   OPEN");
    let rows: Value =
        serde_json::from_str(&env.triad(&dir, &["task", "list", "--json"]).ok().stdout).unwrap();
    let broken = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["slug"] == "broken")
        .unwrap();
    assert_eq!(broken["state"], "INVALID");
    assert!(broken["spec_error"]
        .as_str()
        .unwrap()
        .contains("broken.toml"));
    let ok = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["slug"] == "add-sub")
        .unwrap();
    assert_eq!(ok["state"], "OPEN");
    assert!(ok["spec_error"].is_null());
}

#[test]
fn list_shows_records_and_specs_without_one() {
    let (env, dir, repo) = setup();
    env.write_files(&dir, &[(".triad/tasks/later.toml", "title = \"later\"\n")]);
    let run = env.triad(&dir, &["task", "list"]);
    run.ok();
    assert!(run.stdout.starts_with("TASK"), "{}", run.stdout);
    assert_contains(&run.stdout, "add-sub  OPEN");
    assert_contains(&run.stdout, "later    OPEN");
    lifecycle::on_run_start(&repo, "add-sub", "r1", "implement").unwrap();
    let rows: Value =
        serde_json::from_str(&env.triad(&dir, &["task", "list", "--json"]).ok().stdout).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["slug"], "add-sub");
    assert_eq!(rows[0]["state"], "IN_REVIEW");
    assert_eq!(rows[0]["owner"], "implement");
    assert_eq!(rows[0]["recorded"], true);
    assert_eq!(
        (rows[1]["state"].as_str(), rows[1]["recorded"].as_bool()),
        (Some("OPEN"), Some(false))
    );
    assert!(rows
        .iter()
        .all(|r| !r["next_action"].as_str().unwrap().is_empty()));
    let empty = env.repo("empty", &[("a", "b")]);
    assert!(env
        .triad(&empty, &["task", "list"])
        .ok()
        .stdout
        .contains("no tasks yet"));
}

#[test]
fn show_prints_state_and_full_history() {
    let (env, dir, repo) = setup();
    run_to_outcome(
        &repo,
        "implement",
        json!({"outcome": "BLOCKED", "dependencies": [{"task": "gather logs", "owner": "operator"}]}),
    );
    check(
        "task-show-blocked",
        &transcript(&env, None, &dir, &["task", "show", "add-sub"]),
    );
    let show = ["task", "show", "add-sub", "--json"];
    check(
        "json-task-show-blocked",
        &json_transcript(&env, None, &dir, &show, 0),
    );
    let v = show_json(&env, &dir, "add-sub");
    assert_eq!(v["task"]["state"], "BLOCKED");
    assert_eq!(v["history"].as_array().unwrap().len(), 5);
    assert_eq!(v["history"][3]["response"]["outcome"], "BLOCKED");
    // A TaskSpec without a record shows as OPEN with no history.
    env.write_files(&dir, &[(".triad/tasks/new-one.toml", "title = \"n\"\n")]);
    insta::assert_snapshot!(transcript(&env, None, &dir, &["task", "show", "new-one"]), @r"
    $ git triad task show new-one
    exit: 0
    --- stdout
    task new-one  OPEN
      owner:             user
      next action:       start a run: `git triad run --task new-one`
      unblock condition: a run starts and assigns it to a stage

    no history yet: the task has a TaskSpec but no run has touched it
    --- stderr
    (empty)
    ");
}

#[test]
fn answer_through_the_editor() {
    let (mut env, dir, repo) = setup();
    run_to_outcome(
        &repo,
        "implement",
        json!({"outcome": "NEEDS_INFO", "questions": ["Which module?", "Floats?"]}),
    );
    let script = env.root().join("editor.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\ncp \"$1\" \"$1.seen\"\nsed -i 's/^A: $/A: forty-two/' \"$1\"\n",
    )
    .unwrap();
    std::process::Command::new("chmod")
        .arg("+x")
        .arg(&script)
        .status()
        .unwrap();
    env.set("GIT_EDITOR", script.to_str().unwrap());
    let run = env.triad(&dir, &["task", "answer", "add-sub"]);
    assert_contains(&run.ok().stdout, "git triad resume r1");
    let seen = std::fs::read_to_string(dir.join(".git/TRIAD_ANSWERS.seen")).unwrap();
    assert!(
        seen.contains("Q: Which module?\nA: \n") && seen.contains("Q: Floats?"),
        "{seen}"
    );
    let t = task(&repo, "add-sub");
    assert_eq!(t.state, TaskState::Assigned);
    assert_eq!(
        t.answers
            .iter()
            .map(|a| a.answer.as_str())
            .collect::<Vec<_>>(),
        ["forty-two", "forty-two"]
    );
}

#[test]
fn errors_say_what_to_do() {
    let (mut env, dir, repo) = setup();
    let refused = |run: Run, parts: &[&str]| {
        run.expect_code(2);
        for part in parts {
            assert_contains(&run.stderr, part);
        }
    };
    refused(
        env.triad(&dir, &["task", "show", "nope"]),
        &["there is no task `nope`", "hint: `git triad task list`"],
    );
    task_decision(&env, &dir, "close", "nope", "x").expect_code(2);
    // Not waiting: refused before any editor opens.
    env.set("GIT_EDITOR", "false");
    refused(
        env.triad(&dir, &["task", "answer", "add-sub"]),
        &[
            "is OPEN, not WAITING_ON_USER",
            "hint: only a WAITING_ON_USER task",
        ],
    );
    // An unanswered question changes nothing.
    run_to_outcome(
        &repo,
        "implement",
        json!({"outcome": "NEEDS_INFO", "questions": ["a?", "b?"]}),
    );
    refused(
        answer_from_file(&env, &dir, "Q: a?\nA: yes\nQ: b?\nA:\n"),
        &["no answer for \"b?\""],
    );
    assert_eq!(task(&repo, "add-sub").state, TaskState::WaitingOnUser);
    // A failing editor records nothing.
    let run = env.triad(&dir, &["task", "answer", "add-sub"]);
    run.expect_code(1);
    assert_contains(&run.stderr, "hint: pass the answers with --file");
    // Decisions need a reason, a real date, and a legal transition.
    task_decision(&env, &dir, "close", "add-sub", " ").expect_code(2);
    refused(
        env.triad(
            &dir,
            &[
                "task",
                "defer",
                "add-sub",
                "--reason",
                "x",
                "--revisit-at",
                "soon",
            ],
        ),
        &["YYYY-MM-DD"],
    );
    task_decision(&env, &dir, "close", "add-sub", "won't do").ok();
    refused(
        task_decision(&env, &dir, "close", "add-sub", "again"),
        &[
            "cannot go from CLOSED to CLOSED",
            "hint: `git triad task show add-sub`",
        ],
    );
}

#[test]
fn defer_and_close_are_recorded_as_the_persons_decisions() {
    let (env, dir, repo) = setup();
    let run = env.triad(&dir, &DEFER);
    // What it says is snapshotted in answers_and_decisions_say_the_new_state_and_what_follows.
    run.ok();
    let t = task(&repo, "add-sub");
    assert_eq!(
        (t.state, t.owner.as_str()),
        (TaskState::Deferred, "arbiter")
    );
    assert_eq!(t.revisit_at.as_deref(), Some("2099-09-01"));
    assert_contains(&t.unblock_condition, "2099-09-01");
    task_decision(&env, &dir, "close", "add-sub", "dropped").ok();
    let h = history(&repo, "add-sub");
    let entered: Vec<_> = h
        .iter()
        .filter(|e| e.enters_terminal())
        .map(|e| (e.to, e.actor))
        .collect();
    assert_eq!(
        entered,
        [
            (TaskState::Deferred, Actor::User),
            (TaskState::Closed, Actor::User)
        ]
    );
    assert_eq!(
        h[1].decision.as_ref().unwrap().revisit_at.as_deref(),
        Some("2099-09-01")
    );
    let help = env.triad(&dir, &["task", "answer", "-h"]);
    assert_contains(&help.ok().stdout, "Q: Which database");
}

/// xorshift64*: a deterministic PRNG, so a failing sequence can be replayed by its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

const STAGES: [&str; 4] = ["architect", "implement", "refactor", "verify"];

fn random_meta(rng: &mut Rng) -> StageMeta {
    let outcome = rng
        .pick(&[
            Outcome::NeedsInfo,
            Outcome::OutOfScope,
            Outcome::Blocked,
            Outcome::TooCostly,
            Outcome::PolicyViolation,
            Outcome::LowConfidence,
        ])
        .as_str();
    let n = rng.below(4);
    let words: Vec<String> = (0..n).map(|i| format!("item {i}?")).collect();
    let deps: Vec<Value> = (0..n).map(|i| json!({"task": format!("dep work {i}"), "owner": if i % 2 == 0 { "" } else { "ops" }})).collect();
    let role = [None, Some("refactorer"), Some("verify"), Some("")][rng.below(4)];
    meta(
        json!({"outcome": outcome, "summary": "s", "questions": words, "dependencies": deps,
        "suggested_role": role, "evidence_needed": words, "alternatives": ["cheaper"],
        "policy_refs": [{"id": "POL-1"}]}),
    )
}

/// One random step; errors are allowed only where the machine is meant to refuse.
fn random_step(rng: &mut Rng, repo: &git2::Repository, known: &[String], seq: usize) {
    let mut pool: Vec<String> = vec!["a".into(), "b".into()];
    pool.extend(known.iter().cloned());
    let slug = rng.pick(&pool).clone();
    let run = format!("r{seq}-{}", rng.below(3));
    let stage = *rng.pick(&STAGES);
    let result: Result<(), TaskError> = match rng.below(9) {
        0 => lifecycle::on_run_start(repo, &slug, &run, stage).map(drop),
        1 | 2 => lifecycle::on_stage_outcome(repo, &slug, &run, stage, &random_meta(rng)).map(drop),
        3 => {
            let questions = store::load_task(repo, &slug)
                .ok()
                .flatten()
                .map(|t| t.questions)
                .unwrap_or_default();
            let mut given: Vec<Answer> = questions
                .iter()
                .map(|q| Answer {
                    question: q.clone(),
                    answer: "yes".into(),
                })
                .collect();
            if given.is_empty() || rng.below(5) == 0 {
                given.push(Answer {
                    question: "extra".into(),
                    answer: "context".into(),
                });
            }
            lifecycle::answer(repo, &slug, given, "tester").map(drop)
        }
        4 | 5 => {
            let d = *rng.pick(&[
                Decision::Close,
                Decision::Close,
                Decision::Defer,
                Decision::Reassign,
                Decision::Escalate,
                Decision::Approve,
                Decision::Execute,
            ]);
            let mut d = ArbiterDecision::new(&slug, d, "by tester: random");
            if rng.below(2) == 0 {
                d = d.to(*rng.pick(&STAGES));
            }
            lifecycle::decide(repo, &slug, &d, "tester").map(drop)
        }
        _ => {
            let status = *rng.pick(&[
                "approved",
                "flagged",
                "halted",
                "retries_exhausted",
                "budget_exceeded",
                "failed",
                "waiting_on_user",
            ]);
            let status = RunStatus::parse(status).unwrap();
            lifecycle::on_run_end(repo, &slug, &run, status, Some("APPROVE"), Actor::Arbiter)
                .map(drop)
        }
    };
    if let Err(e) = result {
        assert!(
            matches!(
                e,
                TaskError::IllegalTransition { .. }
                    | TaskError::NotWaiting { .. }
                    | TaskError::Unknown(_)
                    | TaskError::InvalidDecision { .. }
                    | TaskError::BadAnswers(_)
            ),
            "unexpected error: {e}"
        );
    }
}

/// What the checker remembers of each task between steps.
#[derive(Default)]
struct Seen {
    tip: Option<git2::Oid>,
    history: Vec<u8>,
}

/// After every step of ≥ 500 random sequences of ≥ 30 steps: every task keeps an owner, a
/// next action and an unblock condition; only the arbiter entered terminal states; every
/// transition is in the table; no task disappears; histories only grow, byte for byte; a
/// BLOCKED task always has an unfinished dependency.
#[test]
fn property_no_task_is_dropped_and_only_deciders_terminate() {
    let mut transitions = BTreeSet::new();
    // Thousands of tiny commits: file creation dominates, so prefer a RAM disk when there is one.
    let shm = Path::new("/dev/shm");
    let base = if shm.is_dir() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    for seq in 0..500 {
        let tmp = tempfile::Builder::new()
            .prefix("triad-prop-")
            .tempdir_in(&base)
            .unwrap();
        let repo = git2::Repository::init(tmp.path()).unwrap();
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ (seq as u64 + 1).wrapping_mul(0x1000_0001));
        let mut seen: BTreeMap<String, Seen> = BTreeMap::new();
        for step in 0..30 {
            let known: Vec<String> = seen.keys().cloned().collect();
            random_step(&mut rng, &repo, &known, seq);
            let slugs = store::slugs(&repo).unwrap();
            for k in &known {
                assert!(
                    slugs.contains(k),
                    "seq {seq} step {step}: task {k} disappeared"
                );
            }
            for slug in &slugs {
                let tip = git_triad::git::ref_target(&repo, &store::refname(slug));
                let s = seen.entry(slug.clone()).or_default();
                if tip == s.tip {
                    continue;
                }
                let bytes = store::history_bytes(&repo, slug).unwrap();
                assert!(
                    bytes.len() > s.history.len() && bytes.starts_with(&s.history),
                    "seq {seq} step {step}: history of {slug} was rewritten"
                );
                let history = parse_history(&String::from_utf8(bytes.clone()).unwrap());
                assert_eq!(history.len(), bytes.iter().filter(|b| **b == b'\n').count());
                let t = store::load_task(&repo, slug).unwrap().unwrap();
                assert_eq!(
                    t.invariant_violation(),
                    None,
                    "seq {seq} step {step}: {t:?}"
                );
                assert_eq!(history.last().unwrap().to, t.state);
                for e in &history {
                    if e.enters_terminal() {
                        // Only a decider (arbiter, person, policy), and a person's decision
                        // names them.
                        assert!(e.actor.decides(), "seq {seq} step {step}: {e:?}");
                        if e.actor == Actor::User {
                            assert!(e.by.is_some(), "seq {seq} step {step}: {e:?}");
                        }
                    }
                    if let Some(from) = e.from {
                        if from != e.to || e.event != EventKind::Note {
                            assert!(allowed(from, e.to), "seq {seq}: {from} -> {}", e.to);
                            transitions.insert((from, e.to));
                        }
                    }
                }
                s.tip = tip;
                s.history = bytes;
            }
            for slug in &slugs {
                let t = store::load_task(&repo, slug).unwrap().unwrap();
                if t.state == TaskState::Blocked {
                    let open = t.blocked_on.iter().any(|d| {
                        store::load_task(&repo, d)
                            .unwrap()
                            .is_none_or(|d| !d.state.is_done())
                    });
                    assert!(
                        open,
                        "seq {seq} step {step}: {slug} is BLOCKED on finished work"
                    );
                }
            }
        }
    }
    // The random walk reached every kind of state.
    let reached: BTreeSet<_> = transitions.iter().map(|(_, to)| *to).collect();
    assert_eq!(reached.len(), TaskState::ALL.len() - 1, "{reached:?}");
}

#[test]
fn a_task_spec_whose_id_is_not_its_file_name_is_refused_naming_both() {
    let (env, dir, _repo) = setup();
    env.write_files(
        &dir,
        &[(
            ".triad/tasks/add-mul.toml",
            "id = \"add-div\"\ntitle = \"Add mul\"\ndescription = \"calc.py needs mul.\"\n",
        )],
    );
    env.commit_all(&dir, "task: add-mul");
    let run = env.triad(&dir, &["run", "--task", "add-mul"]);
    run.expect_code(2);
    assert_contains(
        &run.stderr,
        ".triad/tasks/add-mul.toml says `id = \"add-div\"`, but its file name makes the task `add-mul`",
    );
    assert_contains(&run.stderr, "rename the file to add-div.toml");
    assert!(
        !dir.join(".git/refs/triad/runs").exists(),
        "no run was started"
    );
    let list = env.triad(&dir, &["task", "list"]);
    list.ok();
    let row = list
        .stdout
        .lines()
        .find(|l| l.starts_with("add-mul"))
        .unwrap();
    assert_contains(row, "INVALID");
    assert_contains(row, "says `id = \"add-div\"`");
}

// ---------------------------------------------------------------------------------------
// Issue #38: task flows without traps
// ---------------------------------------------------------------------------------------

/// Today's date as the binary reads it, for the messages that quote it.
fn today() -> String {
    git_triad::clock::now_ts()[..10].to_string()
}

/// A deferral recorded as if it was made when its revisit date was still ahead (the command
/// refuses a date that is not after today).
fn deferred_until(repo: &git2::Repository, date: &str) {
    let mut d = ArbiterDecision::new("add-sub", Decision::Defer, "after the release");
    d.revisit_at = Some(date.to_string());
    lifecycle::decide(repo, "add-sub", &d, "Ann <ann@example.com>").unwrap();
}

/// Seed 004: DEFERRED is "parked with revisit trigger". When the date has come, the next
/// command that reads the task list reopens the task (ASSIGNED, by policy) and says so once.
#[test]
fn a_due_deferral_reopens_at_the_next_read_of_the_task_list_and_says_so_once() {
    let (env, dir, repo) = setup();
    lifecycle::on_run_start(&repo, "add-sub", "r1", "implement").unwrap();
    deferred_until(&repo, "2020-01-01");
    assert_eq!(task(&repo, "add-sub").state, TaskState::Deferred);
    check(
        "task-list-reopens-due-deferral",
        &transcript(&env, None, &dir, &["task", "list"]),
    );
    let t = task(&repo, "add-sub");
    assert_eq!(
        (t.state, t.assigned_to.as_str(), t.revisit_at.as_deref()),
        (TaskState::Assigned, "implement", None)
    );
    let last = history(&repo, "add-sub").pop().unwrap();
    assert_eq!(
        (last.actor, last.from, last.to),
        (
            Actor::Policy,
            Some(TaskState::Deferred),
            TaskState::Assigned
        )
    );
    // Said once: the task is no longer deferred.
    let again = env.triad(&dir, &["task", "show", "add-sub"]);
    assert_eq!(again.ok().stderr, "");
    // A deferral that is not due stays parked.
    task_decision(&env, &dir, "defer", "add-sub", "later").ok();
    let list = env.triad(&dir, &["task", "list"]);
    assert_eq!(list.ok().stderr, "");
    assert_contains(&list.stdout, "DEFERRED");
}

/// A revisit date that is not after today is refused with the reason; a deferral can be
/// deferred again to a new date (it could not: "cannot go from DEFERRED to DEFERRED").
#[test]
fn a_past_revisit_date_is_refused_and_a_deferral_can_be_deferred_again() {
    let (env, dir, repo) = setup();
    let args = [
        "task",
        "defer",
        "add-sub",
        "--reason",
        "later",
        "--revisit-at",
        "2020-01-01",
    ];
    let run = env.triad(&dir, &args);
    let norm = env.normalizer().literal(today(), "[TODAY]");
    check(
        "task-defer-past-date",
        &run.transcript(&crate::user_output::command_line(&args), &norm),
    );
    assert!(
        store::load(&repo, "add-sub").unwrap().is_none(),
        "nothing recorded"
    );

    for date in ["2099-01-01", "2099-06-01"] {
        let run = env.triad(
            &dir,
            &[
                "task",
                "defer",
                "add-sub",
                "--reason",
                "later",
                "--revisit-at",
                date,
            ],
        );
        assert_contains(&run.ok().stdout, &format!("until: revisit at {date}"));
    }
    let t = task(&repo, "add-sub");
    assert_eq!(
        (t.state, t.revisit_at.as_deref()),
        (TaskState::Deferred, Some("2099-06-01"))
    );
    let decisions: Vec<(Option<TaskState>, TaskState)> = history(&repo, "add-sub")
        .iter()
        .filter(|e| e.event == EventKind::Decision)
        .map(|e| (e.from, e.to))
        .collect();
    assert_eq!(
        decisions,
        [
            (Some(TaskState::Open), TaskState::Deferred),
            (Some(TaskState::Deferred), TaskState::Deferred)
        ]
    );
}

/// One question takes a plain answer (on the command line, in a file or the editor); with
/// several, plain text is refused with what to write instead; `-h` shows both forms.
#[test]
fn one_question_takes_a_plain_answer_and_help_shows_how() {
    let (env, dir, repo) = setup();
    run_to_outcome(
        &repo,
        "implement",
        json!({"outcome": "NEEDS_INFO", "questions": ["Which cache should it use?"]}),
    );
    check(
        "task-answer-plain-text",
        &transcript(
            &env,
            None,
            &dir,
            &[
                "task",
                "answer",
                "add-sub",
                "Redis 7, the one in docker-compose.yml",
            ],
        ),
    );
    let t = task(&repo, "add-sub");
    assert_eq!(t.state, TaskState::Assigned);
    assert_eq!(
        t.answers,
        [Answer {
            question: "Which cache should it use?".into(),
            answer: "Redis 7, the one in docker-compose.yml".into()
        }]
    );

    // Two questions: plain text cannot say which it answers.
    let (env, dir, repo) = setup();
    run_to_outcome(
        &repo,
        "implement",
        json!({"outcome": "NEEDS_INFO", "questions": ["a?", "b?"]}),
    );
    check(
        "task-answer-plain-text-two-questions",
        &transcript(&env, None, &dir, &["task", "answer", "add-sub", "yes"]),
    );
    assert_eq!(task(&repo, "add-sub").state, TaskState::WaitingOnUser);
    let help = env.triad(&dir, &["task", "answer", "-h"]);
    assert_contains(
        &help.ok().stdout,
        "When the stage asked one question, the answer may be plain text:",
    );
}

/// `task show` prints the last ten history entries and says how many it left out; `--all`
/// prints every one.
#[test]
fn task_show_prints_the_last_ten_entries_unless_asked_for_all() {
    let (env, dir, repo) = setup();
    for n in 1..=12 {
        lifecycle::on_run_start(&repo, "add-sub", &format!("r{n}"), "implement").unwrap();
    }
    let total = history(&repo, "add-sub").len();
    assert!(total > 10, "{total}");
    check(
        "task-show-last-ten",
        &transcript(&env, None, &dir, &["task", "show", "add-sub"]),
    );
    let all = env.triad(&dir, &["task", "show", "add-sub", "--all"]);
    let text = all.ok().stdout.clone();
    assert_contains(&text, &format!("history ({total} entries, oldest first):"));
    let entries = |t: &str| t.lines().filter(|l| l.starts_with("  20")).count();
    assert_eq!(entries(&text), total);
    let recent = env.triad(&dir, &["task", "show", "add-sub"]);
    assert_eq!(entries(&recent.ok().stdout), 10);
    // JSON keeps the whole history.
    assert_eq!(
        show_json(&env, &dir, "add-sub")["history"]
            .as_array()
            .unwrap()
            .len(),
        total
    );
}
