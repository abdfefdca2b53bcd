//! End to end against REAL local models: llama.cpp's llama-server serving
//! Qwen2.5-Coder-1.5B (stages), Qwen2.5-Coder-0.5B (arbiter) and SmolLM2-135M (a candidate of
//! the parallel run), prepared by `scripts/local-models`.
//!
//! Asserts structure, not model quality: whatever the tiny models answer, the run ends in a
//! recorded, explained outcome; every stage commit exists; every note line parses as a
//! verdict; the run record is complete with tokens and latency from the real server; the
//! pre-push gate reads the outcome; a killed real run resumes to an outcome; a parallel
//! exploration of the two models records both branches and votes that are never for
//! oneself; a real chamber session on the local panel leaves its whole trace in git.
//!
//! This test fails loudly when the models are missing. `scripts/test` prepares them first;
//! set `GIT_TRIAD_SKIP_E2E=1` to leave it out on purpose (it then says so).

use std::path::{Path, PathBuf};
use std::time::Duration;

use git_triad::arbiter::ArbiterReview;
use git_triad::pipeline::RunStatus;
use serde_json::Value;

use crate::common::{bin, copy_dir, Run, TestEnv};

fn real_cache() -> PathBuf {
    if let Ok(c) = std::env::var("GIT_TRIAD_LOCAL_CACHE") {
        return PathBuf::from(c);
    }
    let home = std::env::var("HOME").expect("HOME");
    Path::new(&home).join(".cache/git-triad/local")
}

/// The user config of every command: calls may take as long as a loaded machine needs (the
/// local servers' providers set their own timeout, which a provider's setting overrides),
/// and `coder_url`, when given, is where the 1.5B coder's provider points instead.
fn slow_cpu(coder_url: Option<&str>) -> String {
    let mut text = String::from("[transport]\ntimeout_secs = 1800\n");
    for provider in [
        "triad-local-coder",
        "triad-local-small",
        "triad-local-coder-1-5b",
    ] {
        text.push_str(&format!("[providers.{provider}]\ntimeout_secs = 1800\n"));
        if let (Some(url), "triad-local-coder-1-5b") = (coder_url, provider) {
            text.push_str(&format!("base_url = \"{url}\"\n"));
        }
    }
    text
}

fn check_run(env: &TestEnv, repo: &Path, r: &Run) -> Value {
    assert!(
        [0, 3, 4, 5, 6].contains(&r.code),
        "the run did not end in a recorded outcome (exit {})\nstdout:\n{}\nstderr:\n{}",
        r.code,
        r.stdout,
        r.stderr
    );
    let out: Value = serde_json::from_str(r.stdout.trim()).unwrap_or_else(|e| {
        panic!(
            "--json output is not JSON ({e}): {}\n{}",
            r.stdout, r.stderr
        )
    });
    // An explained end: any status but still running or failed by an error.
    let status = RunStatus::parse(out["status"].as_str().unwrap_or_default());
    assert!(
        status.is_some_and(|s| s.ended() && s != RunStatus::Failed),
        "{out}"
    );
    assert!(
        !out["message"].as_str().unwrap_or("").is_empty(),
        "the outcome is explained"
    );
    let id = out["run"].as_str().unwrap();

    // Every recorded stage commit exists.
    for s in out["stages"].as_array().unwrap() {
        if let Some(c) = s["commit"].as_str() {
            env.git(repo, &["cat-file", "-e", &format!("{c}^{{commit}}")])
                .ok();
        }
    }
    // The run record is complete, with real tokens and latency in every transcript.
    let record = format!("refs/triad/runs/{id}");
    let files = env
        .git(repo, &["ls-tree", "-r", "--name-only", &record])
        .ok()
        .stdout
        .clone();
    assert!(files.lines().any(|f| f == "run.json"), "{files}");
    let state: Value = serde_json::from_str(
        &env.git(repo, &["show", &format!("{record}:run.json")])
            .ok()
            .stdout,
    )
    .unwrap();
    assert_eq!(state["status"], out["status"]);
    let transcripts: Vec<&str> = files
        .lines()
        .filter(|f| f.starts_with("transcript/"))
        .collect();
    assert_eq!(
        transcripts.len() as u64,
        state["transcripts"].as_u64().unwrap(),
        "{files}"
    );
    assert!(
        !transcripts.is_empty(),
        "no model call was recorded: {out}\nstderr:\n{}",
        r.stderr
    );
    for t in &transcripts {
        let body: Value = serde_json::from_str(
            &env.git(repo, &["show", &format!("{record}:{t}")])
                .ok()
                .stdout,
        )
        .unwrap();
        for call in body["calls"].as_array().unwrap() {
            if call["outcome"] != "ok" {
                continue;
            }
            assert!(call["input_tokens"].as_u64().unwrap() > 0, "{t}: {call}");
            assert!(call["latency_ms"].as_u64().unwrap() > 0, "{t}: {call}");
            assert!(call["reported_id"].is_string(), "{t}: {call}");
        }
    }
    // Every verdict line parses and follows the verdict schema.
    let list = env
        .git(repo, &["notes", "--ref=triad", "list"])
        .ok()
        .stdout
        .clone();
    for annotated in list.lines().filter_map(|l| l.split_whitespace().nth(1)) {
        let note = env
            .git(repo, &["notes", "--ref=triad", "show", annotated])
            .ok()
            .stdout
            .clone();
        for line in note.lines() {
            let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
            assert_eq!(v["v"], 1, "{line}");
            assert!(v["ts"].is_string(), "{line}");
            match v["kind"].as_str() {
                Some("review") => {
                    serde_json::from_value::<ArbiterReview>(v.clone())
                        .unwrap_or_else(|e| panic!("not a verdict ({e}): {line}"));
                }
                Some("reconciliation") => {
                    assert!(["APPROVE", "FLAG", "REJECT", "HALT"]
                        .contains(&v["verdict"].as_str().unwrap()));
                    assert!(
                        v["facts"].is_object() && v["requirements"].is_array(),
                        "{line}"
                    );
                }
                other => panic!("unexpected kind {other:?}: {line}"),
            }
        }
    }
    out
}

#[test]
fn a_real_local_run_ends_in_a_recorded_outcome_the_gate_reads_and_resume_completes() {
    if std::env::var("GIT_TRIAD_SKIP_E2E").is_ok_and(|v| v == "1") {
        eprintln!("e2e_local: skipped because GIT_TRIAD_SKIP_E2E=1");
        return;
    }
    let cache = real_cache();
    for needed in [
        "bin/llama-server",
        "models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        "models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        "models/smollm2-135m-instruct-q4_1.gguf",
    ] {
        assert!(
            cache.join(needed).exists(),
            "the local models are not prepared: {} is missing.\nRun `scripts/local-models` first (scripts/test does), or set GIT_TRIAD_SKIP_E2E=1 to leave this test out on purpose.",
            cache.join(needed).display()
        );
    }
    let mut env = TestEnv::new();
    env.set("GIT_TRIAD_LOCAL_CACHE", cache.to_str().unwrap());
    // Small models on a busy 2-core CPU can take minutes per answer: a timeout is a machine
    // fact, not what this test is about, so calls get all the time they need.
    env.write_user_config(&slow_cpu(None));
    let repo = env.root().join("textstats");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/textstats"),
        &repo,
    );
    env.git(&repo, &["init", "-q", "-b", "main"]).ok();
    env.commit_all(&repo, "textstats");
    env.triad(&repo, &["init", "--trust"]).ok();
    env.commit_all(&repo, "git triad init");

    // How long each step took, for a CI log that must stay within its time.
    let clock = std::time::Instant::now();
    let lap = |step: &str| eprintln!("e2e_local: {step} done at {:?}", clock.elapsed());
    // 1. A full bookend run with reconciliation on the real local servers.
    let r = env.triad(
        &repo,
        &[
            "-c",
            "profile=local",
            "run",
            "--task",
            "add-char-count",
            "--reconcile",
            "--json",
        ],
    );
    let out = check_run(&env, &repo, &r);
    // A run that ends APPROVE or FLAG built something real: a non-empty change on which the
    // task's verify command passes.
    if ["approved", "flagged"].contains(&out["status"].as_str().unwrap()) {
        let branch = out["branch"].as_str().unwrap();
        let diff = env
            .git(&repo, &["diff", "--stat", &format!("main..{branch}")])
            .ok()
            .stdout
            .clone();
        assert!(
            !diff.trim().is_empty(),
            "{} with an empty change: {out}",
            out["status"]
        );
        let wt = env.root().join("verify-wt");
        env.git(
            &repo,
            &[
                "worktree",
                "add",
                "-q",
                "--detach",
                wt.to_str().unwrap(),
                branch,
            ],
        )
        .ok();
        let verify = env
            .command("python3", &wt)
            .args(["-m", "unittest", "discover", "-s", "tests", "-t", ".", "-q"])
            .output()
            .unwrap();
        assert!(
            verify.status.success(),
            "{} with a failing change: {}\n{out}",
            out["status"],
            String::from_utf8_lossy(&verify.stderr)
        );
        env.git(
            &repo,
            &["worktree", "remove", "--force", wt.to_str().unwrap()],
        )
        .ok();
    }

    lap("1 (bookend run with reconciliation)");
    // 2. The pre-push gate reads the outcome.
    let remote = env.root().join("remote.git");
    env.git(
        env.root(),
        &["init", "-q", "--bare", remote.to_str().unwrap()],
    )
    .ok();
    env.git(
        &repo,
        &["remote", "add", "origin", remote.to_str().unwrap()],
    )
    .ok();
    env.triad(&repo, &["init", "--trust"]).ok();
    let branch = out["branch"].as_str().unwrap();
    let tip = env.rev_parse(&repo, branch);
    let base = env.rev_parse(&repo, "main");
    let push = env.git(
        &repo,
        &[
            "push",
            "-q",
            "origin",
            &format!("{branch}:refs/heads/{branch}"),
        ],
    );
    if out["status"] == "halted" && tip != base {
        assert_ne!(
            push.code, 0,
            "a halted run's branch must be blocked\n{}",
            push.stderr
        );
        assert!(push.stderr.contains("HALT"), "{}", push.stderr);
    } else {
        assert_eq!(push.code, 0, "push refused: {}", push.stderr);
    }

    // 3. Kill a real run mid-way, then resume it to an outcome. The kill must land while the
    //    run is under way, whatever the tiny models answer (a first answer can end a run at
    //    once), so the stage model's endpoint is pointed at a door that holds the first
    //    chat request open: the run is killed while that call is in flight.
    let door = HoldingDoor::open();
    env.write_user_config(&slow_cpu(Some(&door.base_url())));
    let mut child = env
        .command(bin(), &repo)
        .args([
            "-c",
            "profile=local",
            "run",
            "--task",
            "add-char-count",
            "--arbiter",
            "final",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let held = door.wait_for_chat(Duration::from_secs(300));
    let exited_early = child.try_wait().unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        held,
        "the second run never called its stage model (exited: {exited_early:?})"
    );
    let runs = env.triad(&repo, &["log", "--format", "json"]);
    let list: Value = serde_json::from_str(runs.ok().stdout.trim()).unwrap();
    let id = list
        .as_array()
        .and_then(|l| l.iter().find(|r| r["run"] != out["run"]).cloned())
        .expect("the killed run is listed")["run"]
        .as_str()
        .unwrap()
        .to_string();
    let state = env.triad(&repo, &["log", &id, "--format", "json"]);
    let before: Value = serde_json::from_str(state.ok().stdout.trim()).unwrap();
    // Killed during its first model call, the run is still recorded as running.
    assert_eq!(before["status"], "running", "{before}");
    // The endpoint is the real server again; resume carries the run to an outcome.
    env.write_user_config(&slow_cpu(None));
    let resumed = env.triad(&repo, &["resume", &id, "--json"]);
    let after = check_run(&env, &repo, &resumed);
    assert_eq!(after["run"], id.as_str());

    lap("3 (killed run resumed)");
    // 4. Parallel exploration on the two local models (in this test, so no other test stops
    //    the servers under it).
    parallel_on_local_models(&env, &repo);
    lap("4 (parallel)");
    // 5. One real chamber session on the local profile's panel.
    chamber_on_local_models(&env, &repo);
    lap("5 (chamber)");
    // 6. One headless manager session whose orchestrator creates a task and starts a run.
    session_on_local_models(&env, &repo);
    lap("6 (session)");
    env.triad(&repo, &["local", "stop"]);
}

/// `git triad session --headless` on the local profile (the 1.5B coder is manager and
/// orchestrator, acting through schema-constrained actions): the manager summons an
/// orchestrator, which writes a TaskSpec on the session branch and starts a real reviewed
/// run. What the tiny models make of it may be anything, but it must be explained and
/// recorded: the session ends answered (exit 0) or stopped with its reason (exit 1).
fn session_on_local_models(env: &TestEnv, repo: &Path) {
    let script = repo.join(".git").join("session-script.txt");
    std::fs::write(
        &script,
        "Summon an orchestrator now with spawn_orchestrator. Its prompt: Create the task \
         add-word-count with create_task (a function word_count(text) in textstats.py that \
         returns the number of words, and a test in tests; include textstats.py and tests/**), \
         then call run_pipeline with task add-word-count and report the verdict.\nSummon the orchestrator now.\n",
    )
    .unwrap();
    let r = env.triad(
        repo,
        &[
            "-c",
            "profile=local",
            "-c",
            "session.max_tool_calls=4",
            "-c",
            "session.max_exchanges=4",
            // Its run is the test's fourth full one: one retry a stage, shorter answers.
            "-c",
            "arbiter.max_retries=1",
            "-c",
            "roles.implementer.max_output_tokens=1024",
            "session",
            "--headless",
            "--script",
            script.to_str().unwrap(),
        ],
    );
    assert!(
        [0, 1].contains(&r.code),
        "the session ended unexplained (exit {})\nstdout:\n{}\nstderr:\n{}",
        r.code,
        r.stdout,
        r.stderr
    );
    if r.code == 1 {
        assert!(r.stdout.contains("git triad: stopped: "), "{}", r.stdout);
    }
    let id = r
        .stdout
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("git triad: session "))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_else(|| panic!("no session line: {}", r.stdout))
        .to_string();
    let shown = env.triad(repo, &["session", "show", &id, "--json"]);
    let events: Value = serde_json::from_str(shown.ok().stdout.trim()).unwrap();
    let results: Vec<&str> = events
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["event"] == "message" && e["message"]["tool_result"].is_object())
        .map(|e| e["message"]["content"].as_str().unwrap_or(""))
        .collect();
    assert!(
        results.iter().any(|c| c.starts_with("wrote .triad/tasks/")),
        "no task was created: {}",
        r.stdout
    );
    assert!(
        results.iter().any(|c| c.starts_with("exit ")),
        "no run was started: {}",
        r.stdout
    );
    // The task is on the session branch, never on the user's; the run is in the record.
    let tasks = env
        .git(
            repo,
            &[
                "ls-tree",
                "-r",
                "--name-only",
                &format!("triad/session/{id}"),
                ".triad/tasks",
            ],
        )
        .ok()
        .stdout
        .clone();
    assert!(tasks.lines().count() >= 2, "{tasks}");
    let mine = env
        .git(
            repo,
            &["ls-tree", "-r", "--name-only", "HEAD", ".triad/tasks"],
        )
        .ok()
        .stdout
        .clone();
    assert!(tasks.lines().count() > mine.lines().count());
    let usage = events
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["event"] == "usage")
        .count();
    assert!(usage >= 3, "the real server's usage is recorded per call");
}

/// `git triad chamber ask` at Level 2 on the local profile's panel (the two coders; the
/// larger also arbitrates): the panel answers, the rules decide on cross-examination, the
/// arbiter synthesizes or says there is no consensus, and the whole trace is in git with
/// the real server's ids, tokens and latency.
fn chamber_on_local_models(env: &TestEnv, repo: &Path) {
    let question = "Should char_count count whitespace characters?";
    let r = env.triad(
        repo,
        &[
            "-c",
            "profile=local",
            "-c",
            "chamber.max_tokens=384",
            "chamber",
            "ask",
            question,
            "--context",
            "add-char-count",
            "--level",
            "2",
            "--json",
        ],
    );
    assert!(
        [0, 6].contains(&r.code),
        "the chamber session gave no synthesis (exit {})\nstdout:\n{}\nstderr:\n{}",
        r.code,
        r.stdout,
        r.stderr
    );
    let session: Value = serde_json::from_str(r.stdout.trim()).unwrap();
    let id = session["id"].as_str().unwrap();
    assert_eq!(session["arbiter"], "local-qwen-coder-1-5b");
    assert_eq!(
        session["panel"],
        serde_json::json!(["local-qwen-coder-1-5b", "local-qwen-coder"])
    );
    assert_eq!(session["arbiter_is_panelist"], true);
    let round = &session["rounds"][0];
    let answers = round["answers"].as_array().unwrap();
    assert_eq!(answers.len(), 2, "{session}");
    let answered: Vec<&str> = answers.iter().filter_map(|a| a["model"].as_str()).collect();
    assert_eq!(
        answered,
        ["local-qwen-coder-1-5b", "local-qwen-coder"],
        "{session}"
    );
    for t in answers.iter().chain([&round["synthesis"]]) {
        assert!(t["answer"].is_object(), "a turn without an answer: {t}");
        assert!(t["spend"]["latency_ms"].as_u64().unwrap() > 0, "{t}");
        assert!(t["spend"]["output_tokens"].as_u64().unwrap() > 0, "{t}");
    }
    let rules = round["divergence"].as_array().unwrap();
    assert_eq!(rules.len(), 4, "{session}");
    // Exactly one cross-examination when a rule fired, none otherwise.
    let fired = rules.iter().any(|r| r["fired"] == true);
    let cross = round["cross"].as_array().map_or(0, Vec::len);
    assert_eq!(cross, if fired { 2 } else { 0 }, "{session}");
    assert!(["auto_accepted", "awaiting_action"].contains(&session["status"].as_str().unwrap()));

    // The trace, with plain git: one commit per phase, and the answers verbatim.
    let refname = format!("refs/triad/chamber/{id}");
    let phases = env
        .git(repo, &["log", "--format=%s", &refname])
        .ok()
        .stdout
        .clone();
    assert!(phases.lines().count() >= 4, "{phases}");
    assert!(phases.contains("phase 1: independent answers"), "{phases}");
    let trace = env
        .git(repo, &["show", &format!("{refname}:trace.md")])
        .ok()
        .stdout
        .clone();
    assert!(trace.contains(question), "{trace}");
    assert!(
        trace.contains("Synthesized by local-qwen-coder-1-5b (arbiter)"),
        "{trace}"
    );
    assert!(trace.contains("Divergence detection"), "{trace}");
}

/// `--workflow parallel` with the two local models as candidates: each builds on its own
/// branch `triad/<task>/<run>-<model>`, each rates the other and votes, never for itself.
/// Two candidates can each vote only for the other, and no model outside them can break
/// the tie (the local profile has two models), so the solutions' own checks choose, then the
/// ratings; the run ends with a winner, or stopped with the tie or the degradation,
/// explained; whichever happens must be recorded as it happened.
fn parallel_on_local_models(env: &TestEnv, repo: &Path) {
    const MODELS: [&str; 2] = ["local-qwen-coder", "local-smollm2"];
    let r = env.triad(
        repo,
        &[
            "-c",
            "profile=local",
            // As cheap as it can be: short answers, no arbiter.
            "-c",
            "roles.implementer.max_output_tokens=768",
            "-c",
            "roles.verifier.max_output_tokens=512",
            "run",
            "--task",
            "add-char-count",
            "--workflow",
            "parallel",
            "--candidates",
            &MODELS.join(","),
            "--arbiter",
            "off",
            "--json",
        ],
    );
    let out = check_run(env, repo, &r);
    let p = &out["parallel"];
    assert_eq!(p["candidates"], serde_json::json!(MODELS), "{out}");
    let id = out["run"].as_str().unwrap();
    let state: Value = serde_json::from_str(
        &env.git(repo, &["show", &format!("refs/triad/runs/{id}:run.json")])
            .ok()
            .stdout,
    )
    .unwrap();
    let rec = &state["parallel"];
    let candidates = rec["candidates"].as_array().unwrap();
    assert_eq!(candidates.len(), 2, "{rec}");
    let mut built = Vec::new();
    for (c, model) in candidates.iter().zip(MODELS) {
        assert_eq!(c["model"], model, "{c}");
        assert_eq!(
            c["branch"].as_str().unwrap(),
            format!("{}-{model}", out["branch"].as_str().unwrap()),
            "{c}"
        );
        match c["commit"].as_str() {
            // A candidate that built: its branch exists at its commit, on top of the base.
            Some(commit) => {
                let branch = c["branch"].as_str().unwrap();
                assert_eq!(env.rev_parse(repo, branch), commit, "{c}");
                assert_eq!(
                    env.rev_parse(repo, &format!("{branch}^")),
                    env.rev_parse(repo, "main"),
                    "{c}"
                );
                built.push(model);
            }
            // One that did not says why, and the panel says it is degraded.
            None => {
                assert!(!c["detail"].as_str().unwrap_or("").is_empty(), "{c}");
                assert_eq!(p["degraded"], true, "{out}");
            }
        }
    }
    // No vote for oneself, ever; every reviewer voted, was refused, or was absent.
    for review in rec["reviews"].as_array().into_iter().flatten() {
        assert_ne!(review["vote"], review["reviewer"], "{review}");
        let settled = review["vote"].is_string()
            || review["absent"].is_string()
            || review["refused"].as_array().is_some_and(|r| r.len() >= 2);
        assert!(settled, "{review}");
    }
    match (&rec["winner"], built.len()) {
        (Value::Object(w), 2) => {
            // A winner is one of the candidates, with the votes as they were cast.
            assert!(MODELS.contains(&w["model"].as_str().unwrap()), "{rec}");
            assert_eq!(p["winner"], w["model"]);
            let cast = |m: &str| {
                rec["reviews"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|r| r["vote"] == m)
                    .count() as u64
            };
            for pair in w["votes"].as_array().unwrap() {
                assert_eq!(pair[1].as_u64().unwrap(), cast(pair[0].as_str().unwrap()));
            }
        }
        (Value::Object(w), 1) => {
            // One usable solution goes on alone: a degraded panel, never approved.
            assert_eq!(w["by"], "alone", "{rec}");
            assert_eq!(w["model"], built[0], "{rec}");
            assert_eq!(p["degraded"], true, "{out}");
            assert_ne!(out["status"], "approved", "{out}");
        }
        (Value::Null, _) => {
            // No winner: the run stopped saying why (a tie nobody outside the candidates can
            // break, or no candidate built), never presented as decided.
            assert_eq!(out["stop"]["reason"], "parallel", "{out}");
            assert!(
                ["waiting_on_user", "halted"].contains(&out["status"].as_str().unwrap()),
                "{out}"
            );
            let message = out["message"].as_str().unwrap();
            assert!(
                message.contains("tied") || message.contains("candidates built a solution"),
                "{message}"
            );
        }
        (w, n) => panic!("a winner {w} with {n} candidate(s) built: {rec}"),
    }
    eprintln!(
        "e2e_local: parallel run {id}: {} ({}); built: {built:?}; winner: {}",
        out["status"], out["message"], rec["winner"]
    );
    // `log` tells the same story.
    let log = env.triad(repo, &["log", id]).ok().stdout.clone();
    assert!(log.contains("parallel exploration:"), "{log}");
}

/// An OpenAI-style endpoint on 127.0.0.1 that says it is up (`GET .../models`) and holds
/// every chat request open without answering, so a test can kill a run mid-call.
struct HoldingDoor {
    port: u16,
    chats: std::sync::mpsc::Receiver<()>,
}

impl HoldingDoor {
    fn open() -> HoldingDoor {
        use std::io::{BufRead, BufReader, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let (tx, chats) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut held = Vec::new();
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut line = String::new();
                if BufReader::new(&stream).read_line(&mut line).is_err() {
                    continue;
                }
                if line.starts_with("GET ") {
                    let body = r#"{"object":"list","data":[]}"#;
                    let _ = write!(
                        stream,
                        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    );
                } else {
                    let _ = tx.send(());
                    held.push(stream);
                }
            }
        });
        HoldingDoor { port, chats }
    }

    fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// Whether a chat request arrived within `limit`.
    fn wait_for_chat(&self, limit: Duration) -> bool {
        self.chats.recv_timeout(limit).is_ok()
    }
}
