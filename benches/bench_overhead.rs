//! Bench overhead: what `git triad bench` adds on top of the time spent waiting for models.
//!
//! The whole standard task set (`git-triad bench --models model-a`: 10 build tasks, 3 of them
//! in Rust, and 10 review cases in all five roles, so 20 model calls) of the real release
//! binary against the
//! scripted fake model server (`git_triad::testkit::fake_llm`), which waits [`DELAY_MS`]
//! before every answer. The answers are the tasks' reference answers and reviews that catch
//! every bug, so every grading step does its real work: the throwaway git repository of
//! each task, the stage request with its repository map, parsing and applying the edits,
//! the hidden tests (python3, and rustc for the Rust tasks), the arbiter's numbered diff and its deterministic
//! checks, re-anchoring the issues, and writing the fitness file.
//!
//! Target: wall time ≤ [`MAX_RATIO`] × the sum of the model latencies (20 × 1 s → ≤ 22 s),
//! median of [`RUNS`] runs; setup (server, home, config) is not timed. The bench exits with
//! status 1 if the target is missed or a run does not score 1.00 in every role after 20
//! calls.
//!
//! Run with `cargo bench --bench bench_overhead` (cargo builds the release `git-triad` that
//! is timed). `BENCH_OVERHEAD_VERBOSE=1` prints each run's progress lines, stamped with the
//! time since the start, to see where the overhead goes.

mod support;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use support::ms;

use git_triad::config::EditFormat;
use git_triad::routing::tasks::{CaseClass, TaskSet};
use git_triad::testkit::fake_llm::{FakeServer, Reply, Rule, Script, WireProtocol};
use serde_json::{json, Value};

const DELAY_MS: u64 = 1000;
const RUNS: usize = 3;
const MAX_RATIO: f64 = 1.10;

fn main() {
    let verbose = std::env::var_os("BENCH_OVERHEAD_VERBOSE").is_some();
    let calls = {
        let set = TaskSet::standard();
        set.build.len() + set.review.len()
    };
    let mut walls = Vec::new();
    for i in 1..=RUNS {
        let wall = one_run(verbose, calls);
        println!("run {i}/{RUNS}: {:>8.0} ms", ms(wall));
        walls.push(wall);
    }
    walls.sort();
    let wall = walls[RUNS / 2];
    let models = Duration::from_millis(DELAY_MS * calls as u64);
    let ratio = wall.as_secs_f64() / models.as_secs_f64();
    println!();
    println!(
        "git triad bench, standard task set, all roles, {calls} model calls of {DELAY_MS} ms each (median of {RUNS})"
    );
    println!("  {:<34}{:>10}", "measure", "value");
    println!("  {:<34}{:>7.0} ms", "wall time", ms(wall));
    println!("  {:<34}{:>7.0} ms", "sum of model latencies", ms(models));
    println!("  {:<34}{:>7.0} ms", "overhead", ms(wall) - ms(models));
    support::verdict("ratio wall / latencies", ratio, MAX_RATIO);
}

/// Sets up a fresh server, home and config, then times one `git triad bench`.
fn one_run(verbose: bool, calls: usize) -> Duration {
    let server = FakeServer::start_blocking(Script::new(rules())).expect("fake server");
    let tmp = tempfile::Builder::new()
        .prefix("triad-bench-overhead-")
        .tempdir()
        .expect("tempdir");
    let home = tmp.path();
    std::fs::write(home.join("config.toml"), user_config(&server.base_url())).unwrap();

    let bin = env!("CARGO_BIN_EXE_git-triad");
    let mut cmd = command(bin, home);
    cmd.args(["bench", "--models", "model-a", "--format", "json"]);
    let (out, stderr, wall) = support::run_stamped(cmd);

    if verbose {
        eprint!("{stderr}");
    }
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let entries = report["entries"].as_array().cloned().unwrap_or_default();
    let perfect = entries.len() == 5 && entries.iter().all(|e| e["figures"]["score"] == 1.0);
    let made = server
        .requests()
        .iter()
        .filter(|r| r.protocol.is_some())
        .count();
    if !out.status.success() || !perfect || made != calls {
        eprintln!(
            "FAIL: the bench did not go as scripted (exit {:?}, {} entries, {made} model calls)\n{stderr}",
            out.status.code(),
            entries.len()
        );
        std::process::exit(1);
    }
    wall
}

/// A hermetic command: no user or system git config, no inherited git/triad/proxy settings.
fn command(program: &str, home: &Path) -> Command {
    let mut cmd = Command::new(program);
    for (k, _) in std::env::vars() {
        let lower = k.to_ascii_lowercase();
        if k.starts_with("GIT_")
            || k.starts_with("XDG_")
            || k.ends_with("_API_KEY")
            || lower.contains("proxy")
        {
            cmd.env_remove(k);
        }
    }
    cmd.current_dir(home)
        .env_remove("RUST_LOG")
        .env("HOME", home)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_TRIAD_CONFIG", home.join("config.toml"))
        .env("FAKE_OPENAI_KEY", "sk-fake-bench-key");
    cmd
}

/// One fake OpenAI provider with `model-a`.
fn user_config(base: &str) -> String {
    format!(
        "[providers.fake-openai]\nprotocol = \"openai\"\nbase_url = \"{base}/v1\"\napi_key_env = \"FAKE_OPENAI_KEY\"\n\n[models.model-a]\nprovider = \"fake-openai\"\ncontext_window = 128000\nmax_output_tokens = 8000\nprice_in = 1.0\nprice_out = 2.0\n\n[transport]\ntimeout_secs = 30\n"
    )
}

/// `model-a` answers every build task with its reference answer and catches every bug.
fn rules() -> Vec<Rule> {
    let set = TaskSet::standard();
    let rule = |name: &str, marker: &str| {
        Rule::named(name)
            .protocol(WireProtocol::OpenAi)
            .model("model-a")
            .contains(marker)
    };
    let mut rules = Vec::new();
    for t in &set.build {
        rules.push(
            rule(&t.id, &format!("# Task {}:", t.id))
                .reply(Reply::text(t.reference_answer(EditFormat::Diff)).delay_ms(DELAY_MS)),
        );
    }
    for c in set.review.iter().filter(|c| c.class != CaseClass::Clean) {
        let bug = c.bug.as_ref().unwrap();
        let (first, last) = c.bug_lines().unwrap();
        let answer = json!({"verdict": "REJECT", "confidence": 0.9, "reasoning": "a bug",
            "issues": [{"severity": "critical", "category": "logic", "path": bug.path,
                "start_line": first, "end_line": last, "quote": bug.quote,
                "description": "wrong", "suggestion": "fix", "evidence": "requirements"}],
            "alternatives": []});
        rules.push(
            rule(&c.id, bug.quote.lines().next().unwrap().trim())
                .reply(Reply::json(answer).delay_ms(DELAY_MS)),
        );
    }
    let approve = json!({"verdict": "APPROVE", "confidence": 0.9, "reasoning": "fine",
        "issues": [], "alternatives": []});
    rules.push(rule("clean", "STAGE REVIEWED").reply(Reply::json(approve).delay_ms(DELAY_MS)));
    rules
}
