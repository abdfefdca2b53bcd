//! Parallel exploration's fan-out: three candidates answering together cost one model
//! latency, not three.
//!
//! A whole `git-triad run --workflow parallel --candidates model-a,model-c,model-d
//! --arbiter off` of the real release binary against the scripted fake model server
//! (`git_triad::testkit::fake_llm`), where every candidate's solution takes [`DELAY_MS`] to
//! arrive and every other call (cross-reviews, synthesis, verify) answers at once. The
//! candidate phase's wall time is what the run records in `run.json`
//! (`parallel.fanout_ms`: from the first candidate request sent to the last answer in).
//!
//! Target: median fan-out / [`DELAY_MS`] ≤ [`MAX_RATIO`] over [`RUNS`] runs (sequential calls
//! would be 3.0). The bench exits with status 1 if the target is missed or a run does not
//! end approved with model-c winning. Run with `cargo bench --bench parallel_fanout`.

mod support;

use std::process::Stdio;
use std::time::{Duration, Instant};

use support::command;

use git_triad::testkit::fake_llm::{FakeServer, Reply, Rule, Script, WireProtocol};
use serde_json::{json, Value};

const DELAY_MS: u64 = 1000;
const RUNS: usize = 3;
const MAX_RATIO: f64 = 1.15;
const CANDIDATES: [&str; 3] = ["model-a", "model-c", "model-d"];

const TASK: &str = r#"title = "Add subtraction"
description = "calc.py needs a sub function."
acceptance = ["sub(3, 1) == 2"]

[scope]
include = ["calc.py"]
"#;

fn main() {
    let mut fanouts = Vec::new();
    for i in 1..=RUNS {
        let (fanout, wall) = one_run();
        println!(
            "run {i}/{RUNS}: fan-out {:>6} ms   whole run {:>6.0} ms",
            fanout,
            wall.as_secs_f64() * 1000.0
        );
        fanouts.push(fanout);
    }
    fanouts.sort();
    let fanout = fanouts[RUNS / 2];
    let ratio = fanout as f64 / DELAY_MS as f64;
    println!();
    println!(
        "parallel exploration, {} candidates at {DELAY_MS} ms each (median of {RUNS})",
        CANDIDATES.len()
    );
    println!("  {:<34}{:>10}", "measure", "value");
    println!("  {:<34}{:>7} ms", "candidate phase wall time", fanout);
    println!("  {:<34}{:>7} ms", "one candidate's latency", DELAY_MS);
    println!(
        "  {:<34}{:>7} ms",
        "sum of candidate latencies",
        DELAY_MS * CANDIDATES.len() as u64
    );
    support::verdict("ratio wall / one latency", ratio, MAX_RATIO);
}

/// Sets up a fresh server, config and repository, runs once; the recorded fan-out time and
/// the whole run's wall time.
fn one_run() -> (u64, Duration) {
    let server = FakeServer::start_blocking(Script::new(rules())).expect("fake server");
    let tmp = tempfile::Builder::new()
        .prefix("triad-bench-parallel-")
        .tempdir()
        .expect("tempdir");
    let home = tmp.path();
    std::fs::write(home.join("config.toml"), user_config(&server.base_url())).unwrap();
    let repo = home.join("repo");
    std::fs::create_dir_all(repo.join(".triad/tasks")).unwrap();
    std::fs::write(repo.join(".triad/tasks/bench.toml"), TASK).unwrap();
    std::fs::write(repo.join("calc.py"), "def add(a, b):\n    return a + b\n").unwrap();
    for args in [
        &["init", "-q", "-b", "main"][..],
        &["add", "-A"],
        &["commit", "-q", "-m", "initial"],
    ] {
        let out = command("git", &repo, home).args(args).output().unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
    }
    let t = Instant::now();
    let out = command(env!("CARGO_BIN_EXE_git-triad"), &repo, home)
        .args([
            "run",
            "--task",
            "bench",
            "--workflow",
            "parallel",
            "--arbiter",
            "off",
            "--json",
        ])
        .args(["--candidates", &CANDIDATES.join(",")])
        .stdin(Stdio::null())
        .output()
        .expect("run git-triad");
    let wall = t.elapsed();
    let result: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    if !out.status.success()
        || result["status"] != "approved"
        || result["parallel"]["winner"] != "model-c"
    {
        eprintln!(
            "FAIL: the run did not go as scripted (exit {:?}): {result}\n{}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        );
        std::process::exit(1);
    }
    let fanout = result["parallel"]["fanout_ms"].as_u64().expect("fanout_ms");
    (fanout, wall)
}

fn on(model: &str, needle: &str, reply: Reply) -> Rule {
    Rule::named(format!("{model}: {needle}"))
        .protocol(WireProtocol::OpenAi)
        .model(model)
        .contains(needle)
        .reply(reply)
}

/// A stage answer: SEARCH/REPLACE blocks plus the JSON metadata block.
fn answer(blocks: &str) -> String {
    let meta = json!({"summary": "bench", "confidence": 0.8, "outcome": "APPROVE"});
    format!("{blocks}\n```json\n{meta}\n```\n")
}

/// Every candidate writes its own sub() after [`DELAY_MS`]; everyone votes for B (model-c),
/// and model-c for A; the synthesis takes nothing; the verifier approves.
fn rules() -> Vec<Rule> {
    let mut r = Vec::new();
    for (i, m) in CANDIDATES.iter().enumerate() {
        let sub = format!("calc.py\n<<<<<<< SEARCH\n    return a + b\n=======\n    return a + b\n\n\ndef sub(a, b):\n    \"\"\"by {m}\"\"\"\n    return a - b\n>>>>>>> REPLACE\n");
        r.push(on(
            m,
            "ROLE: candidate",
            Reply::text(answer(&sub)).delay_ms(DELAY_MS),
        ));
        let vote = if i == 1 { "A" } else { "B" };
        r.push(on(
            m,
            "ROLE: cross-reviewer",
            Reply::json(json!({"ratings": [], "vote": vote, "reason": "best"})),
        ));
    }
    r.push(on("model-c", "ROLE: synthesizer", Reply::text(answer(""))));
    r.push(on("model-a", "ROLE: verifier", Reply::text(answer(""))));
    r
}

/// One fake OpenAI provider with the three candidates and the arbiter model-b.
fn user_config(base: &str) -> String {
    let model = "provider = \"fake-openai\"\ncontext_window = 32000\nmax_output_tokens = 4000\nprice_in = 1.0\nprice_out = 2.0\n";
    let mut s = format!(
        "[providers.fake-openai]\nprotocol = \"openai\"\nbase_url = \"{base}/v1\"\napi_key_env = \"FAKE_OPENAI_KEY\"\n\n"
    );
    for m in ["model-a", "model-b", "model-c", "model-d"] {
        s.push_str(&format!("[models.{m}]\n{model}\n"));
    }
    for role in ["architect", "implementer", "refactorer", "verifier"] {
        s.push_str(&format!("[roles.{role}]\nmodels = [\"model-a\"]\n"));
    }
    s.push_str("[roles.arbiter]\nmodels = [\"model-b\"]\n\n[transport]\ntimeout_secs = 30\n");
    s
}
