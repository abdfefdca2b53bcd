//! `git triad run` end to end over real HTTP (the scripted model server) and real git.

use std::path::PathBuf;

use git_triad::testkit::fake_llm::{FakeServer, Reply, Rule, Script, WireProtocol};
use serde_json::{json, Value};

use crate::common::{fake_user_config, TestEnv};

const CALC: &str = "def add(a, b):\n    return a + b\n";

pub const TASK: &str = r#"title = "Add subtraction"
description = "calc.py needs a sub function."
acceptance = ["sub(3, 1) == 2"]

[[requirements]]
id = "R1"
text = "sub(a, b) returns a - b"

[scope]
include = ["calc.py", "tests/**", "docs/**", "link/**", "../**", "/etc/**"]
exclude = [".triad/**"]
"#;

/// An answer with edit blocks and a metadata block.
pub fn answer(blocks: &str, summary: &str) -> String {
    format!(
        "{blocks}\n```json\n{}\n```\n",
        json!({"summary": summary, "confidence": 0.8, "outcome": "APPROVE", "suggestions": [], "objections": []})
    )
}

pub fn architect_answer() -> String {
    answer(
        "calc.py\n<<<<<<< SEARCH\ndef add(a, b):\n    return a + b\n=======\ndef add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    \"\"\"Return a minus b.\"\"\"\n    raise NotImplementedError\n>>>>>>> REPLACE\n",
        "scaffold sub()",
    )
}

pub fn implement_answer() -> String {
    answer(
        "calc.py\n<<<<<<< SEARCH\n    raise NotImplementedError\n=======\n    return a - b\n>>>>>>> REPLACE\n",
        "implement sub()",
    )
}

pub fn refactor_answer() -> String {
    answer(
        "tests/test_calc.py\n<<<<<<< SEARCH\n=======\nfrom calc import sub\n\n\ndef test_sub():\n    assert sub(3, 1) == 2\n>>>>>>> REPLACE\n",
        "add a test for sub()",
    )
}

pub fn verify_answer() -> String {
    format!(
        "Looks complete.\n```json\n{}\n```\n",
        json!({"summary": "verified", "confidence": 0.9, "outcome": "APPROVE",
               "implementation_summary": {"task_echo": "add sub", "requirements": [{"id": "R1", "evidence": "calc.py:sub"}],
               "files_created": ["tests/test_calc.py"], "files_modified": ["calc.py"], "test_coverage": ["test_sub"],
               "omissions": [], "deviations": []}})
    )
}

/// An arbiter answer with a verdict and optional issues.
pub fn review(verdict: &str, issues: Value) -> Value {
    json!({"verdict": verdict, "confidence": 0.9, "reasoning": format!("reasoned {verdict}"),
           "issues": issues, "alternatives": []})
}

pub fn issue(desc: &str, quote: &str) -> Value {
    json!({"severity": "critical", "category": "pattern", "path": "calc.py", "start_line": 99, "end_line": 99,
           "quote": quote, "description": desc, "suggestion": "fix it", "evidence": "read the code"})
}

/// A stage rule for model-a.
pub fn stage(name: &str, replies: Vec<Reply>) -> Rule {
    let mut r = Rule::named(name)
        .protocol(WireProtocol::OpenAi)
        .model("model-a")
        .contains(format!("ROLE: {}", role_of(name)));
    for reply in replies {
        r = r.reply(reply);
    }
    r
}

fn role_of(stage: &str) -> &str {
    match stage {
        "architect" => "architect",
        "implement" => "implementer",
        "refactor" => "refactorer",
        _ => "verifier",
    }
}

/// An arbiter rule for model-b reviewing `stage`.
pub fn arbiter(stage: &str, replies: Vec<Value>) -> Rule {
    let mut r = Rule::named(format!("arbiter-{stage}"))
        .protocol(WireProtocol::OpenAi)
        .model("model-b")
        .contains(format!("STAGE REVIEWED: {stage}"));
    for v in replies {
        r = r.reply(Reply::json(v));
    }
    r
}

/// The happy path: every stage answers well, the arbiter approves.
pub fn happy_rules() -> Vec<Rule> {
    vec![
        stage("architect", vec![Reply::text(architect_answer())]),
        stage("implement", vec![Reply::text(implement_answer())]),
        stage("refactor", vec![Reply::text(refactor_answer())]),
        stage("verify", vec![Reply::text(verify_answer())]),
        arbiter("architect", vec![review("APPROVE", json!([]))]),
        arbiter("verify", vec![review("APPROVE", json!([]))]),
    ]
}

/// A repo with calc.py and a committed TaskSpec, a fake server with `rules`.
pub struct Scenario {
    pub env: TestEnv,
    pub server: FakeServer,
    pub repo: PathBuf,
}

impl Scenario {
    pub fn new(rules: Vec<Rule>) -> Scenario {
        let server = FakeServer::start_blocking(Script::new(rules)).expect("fake server");
        let mut env = TestEnv::new();
        env.write_user_config(&fake_user_config(&server.base_url()));
        env.set("FAKE_OPENAI_KEY", "sk-fake-openai-key-for-tests");
        let repo = env.repo(
            "proj",
            &[
                ("calc.py", CALC),
                (".triad/tasks/add-sub.toml", TASK),
                (".gitignore", "*.log\n"),
            ],
        );
        Scenario { env, server, repo }
    }

    pub fn run(&self, extra: &[&str]) -> crate::common::Run {
        let mut args = vec!["run", "--task", "add-sub", "--json"];
        args.extend_from_slice(extra);
        self.env.triad(&self.repo, &args)
    }

    pub fn requests_for(&self, rule: &str) -> Vec<Value> {
        self.server
            .requests()
            .into_iter()
            .filter(|r| r.rule.as_deref() == Some(rule))
            .filter_map(|r| r.json)
            .collect()
    }

    pub fn git(&self, args: &[&str]) -> String {
        self.env.git(&self.repo, args).ok().stdout.clone()
    }

    /// The record of the run `out` (a run's `--json` output) names: its `run.json`.
    pub fn record(&self, out: &Value) -> Value {
        let id = out["run"].as_str().expect("a run id");
        let text = self.git(&["show", &format!("refs/triad/runs/{id}:run.json")]);
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("run.json ({e}): {text}"))
    }
}

pub fn run_json(stdout: &str) -> Value {
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"))
}

#[test]
fn a_bookend_run_approves_with_stage_commits_notes_and_an_untouched_tree() {
    let s = Scenario::new(happy_rules());
    // Untracked, ignored and modified files, and a stash, that the run must not touch.
    s.env.write_files(
        &s.repo,
        &[("notes.txt", "mine\n"), ("debug.log", "ignored\n")],
    );
    s.env.write_files(&s.repo, &[("calc.py", "# stashed\n")]);
    s.git(&["stash", "-q"]);
    s.env
        .write_files(&s.repo, &[("calc.py", "# work in progress\n")]);
    let before = crate::common::user_state(&s.env, &s.repo);

    let r = s.run(&[]);
    r.ok();
    let out = run_json(&r.stdout);
    assert_eq!(out["status"], "approved", "{out}");
    assert_eq!(out["final_verdict"], "APPROVE");
    let branch = out["branch"].as_str().unwrap().to_string();
    assert!(branch.starts_with("triad/add-sub/"), "{branch}");
    assert_eq!(
        crate::common::user_state(&s.env, &s.repo),
        before,
        "the run touched the user's tree, index, HEAD or stash"
    );

    // One commit per stage on the branch, with trailers.
    let log = s.git(&[
        "log",
        "--format=%s%n%(trailers:only,unfold)%x00",
        &format!("main..{branch}"),
    ]);
    let commits: Vec<&str> = log
        .split('\0')
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    assert_eq!(commits.len(), 4, "{log}");
    for (c, stage) in commits
        .iter()
        .zip(["verify", "refactor", "implement", "architect"])
    {
        assert!(c.starts_with(&format!("triad({stage}): ")), "{c}");
        assert!(c.contains(&format!("Triad-Stage: {stage}")), "{c}");
        assert!(
            c.contains("Triad-Model: model-a") && c.contains("Triad-Attempt: 1"),
            "{c}"
        );
        assert!(
            c.contains(&format!("Triad-Run: {}", out["run"].as_str().unwrap())),
            "{c}"
        );
    }
    let final_calc = s.git(&["show", &format!("{branch}:calc.py")]);
    assert!(final_calc.contains("return a - b"), "{final_calc}");
    s.git(&["show", &format!("{branch}:tests/test_calc.py")]);

    // Verdict notes on the reviewed commits, readable by plain git.
    let arch = out["stages"][0]["commit"].as_str().unwrap();
    let note = s.git(&["notes", "--ref=triad", "show", arch]);
    let raw = note.lines().next().unwrap();
    let line: Value = serde_json::from_str(raw).unwrap();
    // Canonical JSON: one line, keys sorted.
    let keys: Vec<&str> = line
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let positions: Vec<usize> = keys
        .iter()
        .map(|k| raw.find(&format!("\"{k}\":")).unwrap())
        .collect();
    let mut sorted = keys.clone();
    sorted.sort();
    let mut by_position = keys.clone();
    by_position.sort_by_key(|k| positions[keys.iter().position(|x| x == k).unwrap()]);
    assert_eq!(by_position, sorted, "{raw}");
    assert_eq!(line["v"], 1);
    assert_eq!(line["kind"], "review");
    assert_eq!(line["verdict"], "APPROVE");
    assert_eq!(line["stage"], "architect");
    assert_eq!(line["arbiter_model"], "model-b");
    assert_eq!(line["reviewed_model"], "model-a");
    assert!(
        line["patch_id"].as_str().is_some_and(|p| p.len() >= 40),
        "{line}"
    );
    let shown = s.git(&["log", "--notes=triad", "-1", arch]);
    assert!(
        shown.contains("Notes (triad):") && shown.contains("\"verdict\":\"APPROVE\""),
        "{shown}"
    );
    let verify = out["stages"][3]["commit"].as_str().unwrap();
    assert!(s
        .git(&["notes", "--ref=triad", "show", verify])
        .contains("\"stage\":\"verify\""));
    // Implement and refactor are not reviewed in bookend mode.
    let imp = out["stages"][1]["commit"].as_str().unwrap();
    assert!(
        s.env
            .git(&s.repo, &["notes", "--ref=triad", "show", imp])
            .code
            != 0
    );

    // Exactly six model calls, each for the right role.
    assert_eq!(s.server.requests().len(), 6);
    // The arbiter saw numbered diffs and the TaskSpec.
    let arb = &s.requests_for("arbiter-architect")[0];
    let text = arb.to_string();
    assert!(
        text.contains("def sub(a, b):") && text.contains("STAGE REVIEWED: architect"),
        "{text}"
    );

    // The run record is complete and readable.
    let runs = s.env.triad(&s.repo, &["log"]);
    runs.ok();
    assert!(runs.stdout.contains(out["run"].as_str().unwrap()));
    let md = s.env.triad(
        &s.repo,
        &["log", out["run"].as_str().unwrap(), "--format", "markdown"],
    );
    md.ok();
    assert!(
        md.stdout
            .contains("| architect | model-a | 1 | APPROVE | model-b |"),
        "{}",
        md.stdout
    );
    let files = s.git(&[
        "ls-tree",
        "-r",
        "--name-only",
        &format!("refs/triad/runs/{}", out["run"].as_str().unwrap()),
    ]);
    assert!(
        files.contains("run.json") && files.contains("transcript/001-architect-architect.json"),
        "{files}"
    );
}

#[test]
fn flag_items_reach_the_next_stage() {
    let mut rules = happy_rules();
    rules[4] = arbiter(
        "architect",
        vec![review(
            "FLAG",
            json!([issue(
                "FLAGGED-ISSUE-XYZ needs a docstring",
                "def sub(a, b):"
            )]),
        )],
    );
    let s = Scenario::new(rules);
    let r = s.run(&[]);
    r.ok();
    assert_eq!(run_json(&r.stdout)["final_verdict"], "FLAG");
    let imp = s.requests_for("implement");
    assert_eq!(imp.len(), 1);
    let text = imp[0].to_string();
    assert!(
        text.contains("FLAGGED BY THE ARBITER") && text.contains("FLAGGED-ISSUE-XYZ"),
        "{text}"
    );
    // The issue was re-anchored by its quote (line 5), not the claimed line 99.
    assert!(text.contains("calc.py:5"), "{text}");
}

/// The happy path, but the arbiter rejects the architect's first answer once.
pub fn reject_once_rules() -> Vec<Rule> {
    let mut rules = happy_rules();
    rules[0] = stage(
        "architect",
        vec![
            Reply::text(architect_answer()),
            Reply::text(architect_answer()),
        ],
    );
    rules[4] = arbiter(
        "architect",
        vec![
            review(
                "REJECT",
                json!([issue(
                    "sub must validate its inputs",
                    "raise NotImplementedError"
                )]),
            ),
            review("APPROVE", json!([])),
        ],
    );
    rules
}

#[test]
fn reject_retries_with_the_feedback_block_then_approves() {
    let s = Scenario::new(reject_once_rules());
    let r = s.run(&[]);
    r.ok();
    let out = run_json(&r.stdout);
    assert_eq!(out["stages"][0]["attempts"], 2);
    let arch = s.requests_for("architect");
    assert_eq!(arch.len(), 2);
    let retry = arch[1].to_string();
    assert!(retry.contains("ARBITER FEEDBACK (Retry 1 of 2)"), "{retry}");
    assert!(
        retry.contains("CRITICAL ISSUES (must fix)")
            && retry.contains("sub must validate its inputs")
    );
    assert!(!arch[0].to_string().contains("ARBITER FEEDBACK"));
}

#[test]
fn three_rejects_halt_with_exit_3() {
    let mut rules = happy_rules();
    rules[4] = arbiter(
        "architect",
        vec![review(
            "REJECT",
            json!([issue("still wrong", "def sub(a, b):")]),
        )],
    );
    let s = Scenario::new(rules);
    let r = s.run(&[]);
    r.expect_code(3);
    let out = run_json(&r.stdout);
    assert_eq!(out["status"], "halted");
    assert_eq!(out["stages"][0]["attempts"], 3);
    assert_eq!(s.requests_for("architect").len(), 3);
    assert!(s.requests_for("implement").is_empty());
}

#[test]
fn halt_at_the_architect_stops_before_implement() {
    let mut rules = happy_rules();
    rules[4] = arbiter(
        "architect",
        vec![review(
            "HALT",
            json!([issue("wrong task entirely", "def sub(a, b):")]),
        )],
    );
    let s = Scenario::new(rules);
    let r = s.env.triad(&s.repo, &["run", "--task", "add-sub"]);
    r.expect_code(3);
    assert!(
        r.stdout.contains("halted") && r.stdout.contains("wrong task entirely"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains(
            "next: redo the architect stage on model-c, reviewed by model-b: git triad resume"
        ),
        "{}",
        r.stdout
    );
    assert!(s.requests_for("implement").is_empty());
    // The halted attempt carries a HALT note.
    let commits = s.git(&["notes", "--ref=triad", "list"]);
    assert_eq!(commits.lines().count(), 1);
}

#[test]
fn a_cross_model_violation_is_refused_before_any_request() {
    let s = Scenario::new(happy_rules());
    let r = s.run(&["--arbiter-model", "model-a"]);
    r.expect_code(2);
    assert!(
        r.stderr.contains("architect") && r.stderr.contains("model-a"),
        "{}",
        r.stderr
    );
    assert!(s.server.requests().is_empty());
    let r = s.run(&["--arbiter", "full", "--arbiter-refactor", "model-a"]);
    r.expect_code(2);
    assert!(r.stderr.contains("refactor stage"), "{}", r.stderr);
    assert!(s.server.requests().is_empty());
}

#[test]
fn non_applying_and_malformed_blocks_get_structured_feedback() {
    let bad = answer(
        "calc.py\n<<<<<<< SEARCH\ndef add(a, b):\n    return a + c\n=======\nx\n>>>>>>> REPLACE\n",
        "oops",
    );
    let malformed = "calc.py\n<<<<<<< SEARCH\ndef add(a, b):\n".to_string();
    let mut rules = happy_rules();
    rules[0] = stage(
        "architect",
        vec![
            Reply::text(malformed),
            Reply::text(bad),
            Reply::text(architect_answer()),
        ],
    );
    let s = Scenario::new(rules);
    let r = s.run(&[]);
    r.ok();
    let arch = s.requests_for("architect");
    assert_eq!(arch.len(), 3);
    let second = arch[1].to_string();
    assert!(second.contains("COULD NOT BE USED"), "{second}");
    let third = arch[2].to_string();
    assert!(third.contains("EDIT BLOCKS THAT DID NOT APPLY"), "{third}");
    assert!(
        third.contains("def add(a, b):") && third.contains("closest lines"),
        "{third}"
    );
}

#[test]
fn refused_paths_never_reach_the_tree() {
    for (path, why) in [
        ("/etc/passwd", "absolute"),
        ("../outside.py", "escapes"),
        (".git/hooks/pre-push", ".git"),
        ("notes/secret.py", "scope"),
        ("link/evil.py", "symbolic link"),
    ] {
        let evil = answer(
            &format!("{path}\n<<<<<<< SEARCH\n=======\nboom\n>>>>>>> REPLACE\n"),
            "evil",
        );
        let mut rules = happy_rules();
        rules[0] = stage(
            "architect",
            vec![Reply::text(evil), Reply::text(architect_answer())],
        );
        let s = Scenario::new(rules);
        // A committed symlink to outside the repository.
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("/tmp", s.repo.join("link")).unwrap();
            s.env.commit_all(&s.repo, "add link");
        }
        let r = s.run(&[]);
        r.ok();
        let arch = s.requests_for("architect");
        assert_eq!(arch.len(), 2, "{path}");
        let fb = arch[1].to_string();
        assert!(fb.contains(why), "{path}: {fb}");
        let out = run_json(&r.stdout);
        let files = s.git(&[
            "ls-tree",
            "-r",
            "--name-only",
            out["branch"].as_str().unwrap(),
        ]);
        assert!(
            !files.contains("boom") && !files.contains("evil") && !files.contains("passwd"),
            "{files}"
        );
    }
}

#[test]
fn a_killed_run_resumes_to_completion() {
    let mut rules = happy_rules();
    rules[1] = stage(
        "implement",
        vec![
            Reply::text(implement_answer()).delay_ms(30_000),
            Reply::text(implement_answer()),
        ],
    );
    let s = Scenario::new(rules);
    let mut child = s
        .env
        .command(crate::common::bin(), &s.repo)
        .args(["run", "--task", "add-sub"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait until the implement request is in flight, then kill -9.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while s.requests_for("implement").is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "implement never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let runs = s.env.triad(&s.repo, &["log", "--format", "json"]);
    let list: Value = serde_json::from_str(runs.ok().stdout.trim()).unwrap();
    let id = list[0]["run"].as_str().unwrap().to_string();
    assert_eq!(list[0]["status"], "running");
    let r = s.env.triad(&s.repo, &["resume", &id, "--json"]);
    r.ok();
    let out = run_json(&r.stdout);
    assert_eq!(out["status"], "approved", "{out}");
    assert_eq!(s.requests_for("implement").len(), 2);
    assert_eq!(
        s.requests_for("architect").len(),
        1,
        "the architect stage is not redone"
    );
    // Resuming a finished run is refused.
    s.env.triad(&s.repo, &["resume", &id]).expect_code(2);
}

#[test]
fn an_uncommitted_task_spec_is_refused() {
    let s = Scenario::new(happy_rules());
    s.env.write_files(
        &s.repo,
        &[(".triad/tasks/add-sub.toml", "title = \"changed\"\n")],
    );
    let r = s.run(&[]);
    r.expect_code(1);
    assert!(
        r.stderr.contains("uncommitted changes") && r.stderr.contains("commit it first"),
        "{}",
        r.stderr
    );
    s.env
        .write_files(&s.repo, &[(".triad/tasks/new-one.toml", "title = \"x\"\n")]);
    let r = s.env.triad(&s.repo, &["run", "--task", "new-one"]);
    r.expect_code(1);
    assert!(r.stderr.contains("not committed"), "{}", r.stderr);
    assert!(s.server.requests().is_empty());
}

#[test]
fn task_new_writes_a_template_that_runs_after_commit() {
    let s = Scenario::new(happy_rules());
    let r = s
        .env
        .triad(&s.repo, &["task", "new", "other-task", "--title", "Other"]);
    r.ok();
    let text = std::fs::read_to_string(s.repo.join(".triad/tasks/other-task.toml")).unwrap();
    assert!(text.contains("title = \"Other\"") && text.contains("[scope]"));
    s.env
        .triad(&s.repo, &["task", "new", "other-task", "--title", "Other"])
        .expect_code(2);
}

#[test]
fn a_halted_run_marks_its_branch_tip_for_the_pre_push_gate() {
    let mut rules = happy_rules();
    rules[5] = arbiter(
        "verify",
        vec![review("HALT", json!([issue("unsafe", "return a - b")]))],
    );
    let s = Scenario::new(rules);
    let r = s.run(&[]);
    r.expect_code(3);
    let out = run_json(&r.stdout);
    let branch = out["branch"].as_str().unwrap();
    let tip = s.git(&["rev-parse", branch]).trim().to_string();
    assert_eq!(
        Some(tip.as_str()),
        out["stages"][2]["commit"].as_str(),
        "branch ends at refactor"
    );
    let note = s.git(&["notes", "--ref=triad", "show", &tip]);
    let line: Value = serde_json::from_str(note.lines().last().unwrap()).unwrap();
    assert_eq!(line["verdict"], "HALT");
    assert_eq!(line["stage"], "run");
    // The user's base commit is never marked.
    assert!(
        s.env
            .git(&s.repo, &["notes", "--ref=triad", "show", "main"])
            .code
            != 0
    );
}

fn outcome_answer(outcome: &str, extra: Value) -> String {
    let mut meta = json!({"summary": "cannot proceed", "confidence": 0.4, "outcome": outcome});
    if let (Value::Object(m), Value::Object(e)) = (&mut meta, extra) {
        m.extend(e);
    }
    format!("I need to stop here.\n```json\n{meta}\n```\n")
}

#[test]
fn needs_info_waits_exit_6_then_answers_resume_the_same_stage() {
    let mut rules = happy_rules();
    rules[0] = stage(
        "architect",
        vec![
            Reply::text(outcome_answer(
                "NEEDS_INFO",
                json!({"questions": ["Should sub accept floats?", "Name of the module?"]}),
            )),
            Reply::text(architect_answer()),
        ],
    );
    let s = Scenario::new(rules);
    let r = s.run(&[]);
    r.expect_code(6);
    let out = run_json(&r.stdout);
    assert_eq!(out["status"], "waiting_on_user");
    assert!(
        out["hints"][0]
            .as_str()
            .unwrap()
            .contains("git triad task answer add-sub"),
        "{out}"
    );
    let id = out["run"].as_str().unwrap().to_string();
    // The task is WAITING_ON_USER, owned by the user, with the questions recorded.
    let show = s.env.triad(&s.repo, &["task", "show", "add-sub", "--json"]);
    show.ok();
    assert!(
        show.stdout.contains("WAITING_ON_USER")
            && show.stdout.contains("Should sub accept floats?"),
        "{}",
        show.stdout
    );
    // Resuming before answering is refused with exit 6 and a hint.
    let early = s.env.triad(&s.repo, &["resume", &id]);
    early.expect_code(6);
    assert!(
        early.stderr.contains("git triad task answer"),
        "{}",
        early.stderr
    );
    std::fs::write(
        s.env.root().join("answers.txt"),
        "Q: Should sub accept floats?\nA: Yes, ints and floats.\nQ: Name of the module?\nA: calc.py\n",
    )
    .unwrap();
    let answers = s.env.root().join("answers.txt");
    s.env
        .triad(
            &s.repo,
            &[
                "task",
                "answer",
                "add-sub",
                "--file",
                answers.to_str().unwrap(),
            ],
        )
        .ok();
    let r = s.env.triad(&s.repo, &["resume", &id, "--json"]);
    r.ok();
    assert_eq!(run_json(&r.stdout)["status"], "approved");
    let arch = s.requests_for("architect");
    assert_eq!(arch.len(), 2);
    let second = arch[1].to_string();
    assert!(
        second.contains("ANSWERS FROM THE USER") && second.contains("ints and floats"),
        "{second}"
    );
    let show = s.env.triad(&s.repo, &["task", "show", "add-sub", "--json"]);
    assert!(show.stdout.contains("APPROVED"), "{}", show.stdout);
}

#[test]
fn a_blocked_stage_waits_with_a_routed_task_and_a_dependency_record() {
    let mut rules = happy_rules();
    rules[1] = stage(
        "implement",
        vec![Reply::text(outcome_answer(
            "BLOCKED",
            json!({"dependencies": [{"task": "vendor the math library", "owner": "operator"}]}),
        ))],
    );
    let s = Scenario::new(rules);
    let r = s.run(&[]);
    r.expect_code(6);
    let out = run_json(&r.stdout);
    assert!(
        out["message"]
            .as_str()
            .unwrap()
            .contains("waits for its dependencies"),
        "{out}"
    );
    let list = s.env.triad(&s.repo, &["task", "list", "--json"]);
    list.ok();
    assert!(list.stdout.contains("BLOCKED"), "{}", list.stdout);
    assert!(
        list.stdout.contains("add-sub-dep-1") && list.stdout.contains("vendor the math library"),
        "{}",
        list.stdout
    );
    assert!(!s.repo.join(".triad/tasks/add-sub-dep-1.toml").exists());
}

#[test]
fn a_verdict_note_that_cannot_be_written_stops_the_run_and_resume_recovers() {
    let s = Scenario::new(happy_rules());
    // A stale lock on the notes ref: every verdict write fails until it is gone.
    let lock = s.repo.join(".git/refs/notes/triad.lock");
    std::fs::create_dir_all(lock.parent().unwrap()).unwrap();
    std::fs::write(&lock, "").unwrap();
    let r = s.run(&[]);
    r.expect_code(1);
    let out = run_json(&r.stdout);
    assert_eq!(out["status"], "failed", "{out}");
    assert_eq!(out["stop"]["reason"], "note_not_written", "{out}");
    assert!(
        out["message"]
            .as_str()
            .unwrap()
            .contains("could not be written"),
        "{out}"
    );
    let hints = out["hints"].to_string();
    assert!(
        hints.contains("git triad resume") && hints.contains("refs/notes/triad"),
        "{hints}"
    );
    // The stage was not accepted without its note: the branch has not moved.
    let branch = out["branch"].as_str().unwrap();
    assert_eq!(s.git(&["rev-parse", branch]), s.git(&["rev-parse", "main"]));

    std::fs::remove_file(&lock).unwrap();
    let id = out["run"].as_str().unwrap();
    let r = s.env.triad(&s.repo, &["resume", id, "--json"]);
    r.ok();
    let out = run_json(&r.stdout);
    assert_eq!(out["status"], "approved", "{out}");
    // Every accepted stage that was reviewed carries its note now.
    for stage in out["stages"].as_array().unwrap() {
        if stage["verdict"].is_string() {
            let commit = stage["commit"].as_str().unwrap();
            assert!(
                !s.git(&["notes", "--ref=triad", "show", commit]).is_empty(),
                "{stage}"
            );
        }
    }
}

/// A fourth model on the fake OpenAI provider, for panels of three distinct models.
pub const MODEL_D: &str = r#"
[models.model-d]
provider = "fake-openai"
context_window = 32000
max_output_tokens = 4000
price_in = 1.0
price_out = 2.0
"#;

/// A rule named `name` for `model`, matching requests that contain `needle`, answering
/// `replies` in order.
pub fn on(model: &str, name: &str, needle: &str, replies: Vec<Reply>) -> Rule {
    let mut r = Rule::named(name)
        .protocol(WireProtocol::OpenAi)
        .model(model)
        .contains(needle);
    for reply in replies {
        r = r.reply(reply);
    }
    r
}

/// `git triad log <run>` of the run `out` describes, as text and as markdown, after
/// checking the text holds every one of `needles`.
pub fn log_with(s: &Scenario, out: &Value, needles: &[&str]) -> (String, String) {
    let id = out["run"].as_str().unwrap();
    let text = s.env.triad(&s.repo, &["log", id]).ok().stdout.clone();
    for needle in needles {
        assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
    }
    let md = s
        .env
        .triad(&s.repo, &["log", id, "--format", "markdown"])
        .ok()
        .stdout
        .clone();
    (text, md)
}

/// The `type` of every message a run record holds, in order.
pub fn message_kinds(rec: &Value) -> Vec<String> {
    rec["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["type"].as_str().unwrap().to_string())
        .collect()
}

/// A [`Scenario`] whose registry also has `model-d`, so a panel can hold model-a, model-c
/// and model-d with model-b judging.
pub fn panel_scenario(rules: Vec<Rule>) -> Scenario {
    let s = Scenario::new(rules);
    s.env.write_user_config(&format!(
        "{}{MODEL_D}",
        fake_user_config(&s.server.base_url())
    ));
    s
}

/// The `run.json` of the run `out` describes.
pub fn run_record(s: &Scenario, out: &Value) -> Value {
    let text = s.git(&[
        "show",
        &format!("refs/triad/runs/{}:run.json", out["run"].as_str().unwrap()),
    ]);
    serde_json::from_str(&text).unwrap()
}

/// Issue #38: `task new`'s template, committed unfilled (an empty description, `R1 text =
/// ""`), called the models and ended HALT twice. It is refused before any call, naming the
/// empty fields, and leaves no run behind.
#[test]
fn an_unfilled_task_spec_is_refused_before_any_model_call() {
    let s = Scenario::new(happy_rules());
    s.env
        .triad(&s.repo, &["task", "new", "blank", "--title", "Blank"])
        .ok();
    s.env.commit_all(&s.repo, "task: blank");
    let args = ["run", "--task", "blank"];
    let r = s.env.triad(&s.repo, &args);
    crate::user_output::check(
        "error-unfilled-task-spec",
        &r.transcript(
            &crate::user_output::command_line(&args),
            &s.env.normalizer(),
        ),
    );
    assert!(s.server.requests().is_empty(), "a model was called");
    let log = s.env.triad(&s.repo, &["log"]);
    assert!(log.ok().stdout.starts_with("no runs yet"), "{}", log.stdout);
}
