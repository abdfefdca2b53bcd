//! Paths of `git triad run` that only an option or a configuration reaches: the verify command
//! in the box on a copy of the tip and its trust gate, `on_exhausted = "rewind"`, `--arbiter off`,
//! per-stage model flags, and a runtime fallback onto the arbiter's own model.

use git_triad::testkit::fake_llm::{Reply, Rule, WireProtocol};
use serde_json::{json, Value};

use crate::pipeline::{
    arbiter, happy_rules, implement_answer, refactor_answer, review, run_json, stage, Scenario,
    TASK,
};

/// A `git triad run` of the scenario's task with global options before `run`.
fn run_with(s: &Scenario, global: &[&str], extra: &[&str]) -> crate::common::Run {
    let mut args: Vec<&str> = global.to_vec();
    args.extend(["run", "--task", "add-sub", "--json"]);
    args.extend_from_slice(extra);
    s.env.triad(&s.repo, &args)
}

/// The models the fake server was asked for, by rule name.
fn models_asked(s: &Scenario, rule: &str) -> Vec<String> {
    s.server
        .requests()
        .into_iter()
        .filter(|r| r.rule.as_deref() == Some(rule))
        .filter_map(|r| r.model)
        .collect()
}

/// Commits a TaskSpec whose `[verify]` command says where it ran and what it found there:
/// the tip's files, a clean repository of its own, a file it may write.
fn spec_with_verify(s: &Scenario) {
    let spec = format!(
        "{TASK}\n[verify]\ncommand = \"echo ran-in-$(pwd) && grep -q 'def sub' calc.py && test -z \\\"$(git status --porcelain)\\\" && touch verify-was-here && echo triad-verify-ok\"\n"
    );
    s.env
        .write_files(&s.repo, &[(".triad/tasks/add-sub.toml", spec.as_str())]);
    s.env.commit_all(&s.repo, "a verify command");
}

/// The files of the user's `.git` that a command running there could plant or change: its
/// config and hooks.
fn git_dir_state(s: &Scenario) -> (String, Vec<String>) {
    let config = std::fs::read_to_string(s.repo.join(".git/config")).unwrap();
    let mut hooks: Vec<String> = std::fs::read_dir(s.repo.join(".git/hooks"))
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    hooks.sort();
    (config, hooks)
}

#[test]
fn a_trusted_verify_command_runs_in_the_box_on_a_copy_of_the_tip() {
    let s = Scenario::new(happy_rules());
    spec_with_verify(&s);
    s.env
        .git(&s.repo, &["config", "triad.trusted", "true"])
        .ok();
    let before = git_dir_state(&s);
    let out = run_json(&s.run(&[]).ok().stdout);
    assert_eq!(out["status"], "approved", "{out}");

    let record = s.record(&out);
    let verify = &record["verify"];
    assert_eq!(verify["exit_code"], 0, "{verify}");
    let tail = verify["tail"].as_str().unwrap();
    assert!(tail.contains("triad-verify-ok"), "{tail}");
    let ran_in = tail
        .lines()
        .find_map(|l| l.strip_prefix("ran-in-"))
        .expect("where it ran");
    assert!(ran_in.contains("git-triad-verify-"), "{ran_in}");
    assert!(
        !std::path::Path::new(ran_in).exists(),
        "the copy was left behind"
    );
    assert!(!s.repo.join("verify-was-here").exists());
    assert_eq!(before, git_dir_state(&s), "the user's .git changed");
    let worktrees = s.git(&["worktree", "list", "--porcelain"]);
    assert_eq!(worktrees.matches("worktree ").count(), 1, "{worktrees}");
    // The record says which layers of the box held around it.
    let layers = &verify["layers"];
    assert_eq!(
        layers["filesystem"]["held"],
        git_triad::sandbox::found().landlock_abi > 0,
        "{layers}"
    );
    let found = git_triad::sandbox::found();
    assert_eq!(
        layers["network"]["held"],
        found.namespaces & libc::CLONE_NEWNET != 0 || found.landlock_abi >= 4,
        "{layers}"
    );
    // The verifier saw the command's outcome as a fact.
    let verifier = s.requests_for("verify");
    assert!(verifier[0].to_string().contains("triad-verify-ok"));
}

#[test]
fn an_untrusted_clone_never_runs_the_task_specs_verify_command() {
    let s = Scenario::new(happy_rules());
    spec_with_verify(&s);
    let r = s.run(&[]);
    let out = run_json(&r.ok().stdout);
    assert!(
        r.stderr.contains("not trusted"),
        "the skip is said: {}",
        r.stderr
    );
    let record = s.git(&[
        "show",
        &format!("refs/triad/runs/{}:run.json", out["run"].as_str().unwrap()),
    ]);
    let record: Value = serde_json::from_str(&record).unwrap();
    assert!(record["verify"].is_null(), "{}", record["verify"]);
    let verifier = s.requests_for("verify")[0].to_string();
    assert!(
        verifier.contains("verify command was not run: this clone is not trusted"),
        "{verifier}"
    );
    assert!(!verifier.contains("triad-verify-ok"), "{verifier}");
}

#[test]
fn rewind_redoes_the_previous_stage_with_its_next_model_then_exits_4() {
    let mut rules = happy_rules();
    // The verify stage is rejected every time, on a line that exists.
    let rejection = review(
        "REJECT",
        json!([{"severity": "critical", "category": "pattern", "path": "calc.py",
                "start_line": 7, "end_line": 7, "quote": "return a - b",
                "description": "sub must reject strings", "suggestion": "check types",
                "evidence": "calc.py"}]),
    );
    rules[5] = arbiter("verify", vec![rejection]);
    rules.push(
        Rule::named("refactor-c")
            .protocol(WireProtocol::OpenAi)
            .model("model-c")
            .contains("ROLE: refactorer")
            .reply(Reply::text(refactor_answer())),
    );
    let s = Scenario::new(rules);
    let r = run_with(
        &s,
        &[
            "-c",
            "arbiter.on_exhausted=rewind",
            "-c",
            "roles.refactorer.models=[\"model-a\", \"model-c\"]",
        ],
        &["--max-retries", "0"],
    );
    let out = run_json(&r.expect_code(4).stdout);
    assert_eq!(out["status"], "retries_exhausted", "{out}");
    assert_eq!(out["stop"]["reason"], "retries_exhausted", "{out}");
    // The refactor stage was redone once, by its next model, told why.
    let redo = s.requests_for("refactor-c");
    assert_eq!(redo.len(), 1);
    assert!(redo[0].to_string().contains("## REWIND"), "{}", redo[0]);
    assert_eq!(models_asked(&s, "refactor"), vec!["model-a"]);
    // Verify ran twice, both rejected; nothing else was asked.
    assert_eq!(s.requests_for("arbiter-verify").len(), 2);
}

#[test]
fn arbiter_off_asks_no_judge_and_writes_no_review() {
    let s = Scenario::new(happy_rules());
    let out = run_json(&s.run(&["--arbiter", "off"]).ok().stdout);
    assert_eq!(out["status"], "approved", "{out}");
    let judged = s
        .server
        .requests()
        .into_iter()
        .filter(|r| r.model.as_deref() == Some("model-b"))
        .count();
    assert_eq!(judged, 0, "the arbiter was asked");
    let notes = s.git(&["log", "--notes=triad", "--format=%N", "--all"]);
    assert!(!notes.contains("\"kind\":\"review\""), "{notes}");
    for st in out["stages"].as_array().unwrap() {
        assert!(st["arbiter_model"].is_null(), "{st}");
        assert!(st["commit"].is_string(), "{st}");
    }
}

#[test]
fn per_stage_model_flags_choose_the_stage_and_judge_models() {
    let mut rules = happy_rules();
    rules.push(
        Rule::named("implement-c")
            .protocol(WireProtocol::OpenAi)
            .model("model-c")
            .contains("ROLE: implementer")
            .reply(Reply::text(implement_answer())),
    );
    rules.push(
        Rule::named("arbiter-architect-c")
            .protocol(WireProtocol::OpenAi)
            .model("model-c")
            .contains("STAGE REVIEWED: architect")
            .reply(Reply::json(review("APPROVE", json!([])))),
    );
    let s = Scenario::new(rules);
    let out = run_json(
        &s.run(&["--implementer", "model-c", "--arbiter-architect", "model-c"])
            .ok()
            .stdout,
    );
    assert_eq!(out["status"], "approved", "{out}");
    assert_eq!(s.requests_for("implement-c").len(), 1);
    assert!(s.requests_for("implement").is_empty());
    assert_eq!(s.requests_for("arbiter-architect-c").len(), 1);
    assert!(s.requests_for("arbiter-architect").is_empty());
    assert_eq!(out["stages"][1]["model"], "model-c", "{out}");
    assert_eq!(out["stages"][0]["arbiter_model"], "model-c", "{out}");
    assert_eq!(out["stages"][3]["arbiter_model"], "model-b", "{out}");
}

#[test]
fn a_fallback_onto_the_judges_model_gets_another_judge() {
    let mut rules = happy_rules();
    // model-a cannot implement (the server refuses it); model-b, the arbiter's first model,
    // is the implementer's fallback.
    rules[1] = stage("implement", vec![Reply::status(404)]);
    rules.push(
        Rule::named("implement-b")
            .protocol(WireProtocol::OpenAi)
            .model("model-b")
            .contains("ROLE: implementer")
            .reply(Reply::text(implement_answer())),
    );
    rules.push(arbiter("refactor", vec![review("APPROVE", json!([]))]));
    rules.push(
        Rule::named("arbiter-implement-c")
            .protocol(WireProtocol::OpenAi)
            .model("model-c")
            .contains("STAGE REVIEWED: implement")
            .reply(Reply::json(review("APPROVE", json!([])))),
    );
    let s = Scenario::new(rules);
    let r = run_with(
        &s,
        &[
            "-c",
            "roles.implementer.models=[\"model-a\", \"model-b\"]",
            "-c",
            "roles.arbiter.models=[\"model-b\", \"model-c\"]",
        ],
        &["--arbiter", "full"],
    );
    let out = run_json(&r.ok().stdout);
    assert_eq!(out["status"], "approved", "{out}\n{}", r.stderr);
    assert_eq!(s.requests_for("implement-b").len(), 1);
    // model-b wrote the implementation, so model-b may not judge it.
    let judged_by_b = s
        .server
        .requests()
        .into_iter()
        .filter(|r| r.model.as_deref() == Some("model-b"))
        .filter(|r| r.body.contains("STAGE REVIEWED: implement"))
        .count();
    assert_eq!(judged_by_b, 0);
    assert_eq!(s.requests_for("arbiter-implement-c").len(), 1);
    let implement = out["stages"][1]["commit"].as_str().unwrap();
    let note = s.git(&["notes", "--ref=triad", "show", implement]);
    let line: Value = serde_json::from_str(note.lines().next().unwrap()).unwrap();
    assert_eq!(line["reviewed_model"], "model-b", "{line}");
    assert_eq!(line["arbiter_model"], "model-c", "{line}");
}
