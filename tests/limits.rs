//! Adding a model is two lines: `provider` and `id`. Its limits come from the server where
//! the server says them (llama.cpp, Ollama, OpenAI-style lists), else from stated defaults;
//! prices default to 0 only on local providers. `models check` says what it found and what
//! it assumed, and a run uses what was found.

use git_triad::testkit::fake_llm::{FakeServer, ModelInfo, Reply, Rule, Script, Served};
use serde_json::Value;

use crate::common::{fake_user_config, TestEnv};
use crate::pipeline::{happy_rules, implement_answer, run_json, TASK};

fn info(served: Served, context_length: u64) -> ModelInfo {
    ModelInfo {
        served,
        context_length,
        max_output_tokens: None,
        num_ctx: None,
    }
}

fn ok_rule(id: &str) -> Rule {
    Rule::named(id).model(id).reply(Reply::text("ok"))
}

/// A local provider on the fake server, and `extra` model tables.
fn env_with(server: &FakeServer, extra: &str) -> TestEnv {
    let mut env = TestEnv::new();
    env.write_user_config(&format!(
        "{}\n[providers.box]\nprotocol = \"openai\"\nbase_url = \"{}/v1\"\nlocal = true\n{extra}",
        fake_user_config(&server.base_url()),
        server.base_url()
    ));
    env.set("FAKE_OPENAI_KEY", "sk-fake-openai-key-for-tests");
    env
}

fn check(env: &TestEnv, model: &str) -> String {
    let dir = env.root().join("plain");
    std::fs::create_dir_all(&dir).unwrap();
    env.triad(&dir, &["models", "check", model])
        .ok()
        .stdout
        .clone()
}

#[test]
fn a_two_line_local_model_reads_its_window_from_the_server() {
    // A llama.cpp server serves one model; an Ollama server answers for each of its own.
    let llama =
        Script::new(vec![ok_rule("tiny-1")]).model_info("tiny-1", info(Served::LlamaCpp, 16384));
    let ollama = Script::new(vec![ok_rule("qwen2.5-coder:7b")]).model_info(
        "qwen2.5-coder:7b",
        ModelInfo {
            num_ctx: Some(4096),
            ..info(Served::Ollama, 32768)
        },
    );
    let server = FakeServer::start_blocking(llama).unwrap();
    let other = FakeServer::start_blocking(ollama).unwrap();
    let env = env_with(
        &server,
        &format!(
            "[models.tiny]\nprovider = \"box\"\nid = \"tiny-1\"\n\n[providers.ollama-box]\nprotocol = \"openai\"\nbase_url = \"{}/v1\"\nlocal = true\n\n[models.coder]\nprovider = \"ollama-box\"\nid = \"qwen2.5-coder:7b\"\n",
            other.base_url()
        ),
    );
    let out = check(&env, "tiny");
    assert!(
        out.contains("    context window 16384 tokens: from the server (GET /props: default_generation_settings.n_ctx)\n"),
        "{out}"
    );
    assert!(
        out.contains("    max output 4096 tokens: assumed (the server does not say; set models.tiny.max_output_tokens)\n"),
        "{out}"
    );
    assert!(
        out.contains("    prices: 0: not set, and a local provider costs nothing\n"),
        "{out}"
    );
    let out = check(&env, "coder");
    assert!(
        out.contains(
            "context window 4096 tokens: from the server (POST /api/show: parameters num_ctx)"
        ),
        "Ollama's num_ctx is the window it runs with: {out}"
    );

    let list = env.triad(&env.root().join("plain"), &["models", "list", "--no-probe"]);
    let row = list
        .ok()
        .stdout
        .lines()
        .find(|l| l.starts_with("tiny "))
        .unwrap()
        .to_string();
    assert_eq!(
        row.split_whitespace().take(5).collect::<Vec<_>>(),
        ["tiny", "box", "0.00", "0.00", "server"],
        "{row}"
    );
}

#[test]
fn a_server_that_says_nothing_gets_the_stated_defaults() {
    let server = FakeServer::start_blocking(Script::new(vec![ok_rule("mute")])).unwrap();
    let env = env_with(&server, "[models.mute]\nprovider = \"box\"\n");
    let out = check(&env, "mute");
    assert!(
        out.contains("context window 8192 tokens: assumed (the server does not say; set models.mute.context_window)"),
        "{out}"
    );
}

#[test]
fn a_hosted_model_needs_its_prices_and_reads_its_limits_from_the_list() {
    let script = Script::new(vec![ok_rule("q/coder")]).model_info(
        "q/coder",
        ModelInfo {
            max_output_tokens: Some(65536),
            ..info(Served::OpenRouter, 262144)
        },
    );
    let server = FakeServer::start_blocking(script).unwrap();
    let env = env_with(
        &server,
        "[models.router]\nprovider = \"fake-openai\"\nid = \"q/coder\"\n",
    );
    let dir = env.root().join("plain");
    std::fs::create_dir_all(&dir).unwrap();
    let run = env.triad(&dir, &["models", "check", "router"]);
    run.expect_code(2);
    assert!(
        run.stderr.contains("`models.router`")
            && run.stderr.contains("set price_in and price_out (USD per million tokens): `fake-openai` is a hosted provider, and a model without prices would count as free against every budget cap (only `local = true` providers default to 0)"),
        "{}",
        run.stderr
    );

    let env = env_with(
        &server,
        "[models.router]\nprovider = \"fake-openai\"\nid = \"q/coder\"\nprice_in = 0.22\nprice_out = 0.95\n",
    );
    let out = check(&env, "router");
    assert!(
        out.contains("context window 262144 tokens: from the server (GET /models: context_length)"),
        "{out}"
    );
    assert!(
        out.contains("max output 65536 tokens: from the server (GET /models: top_provider.max_completion_tokens)"),
        "{out}"
    );
    assert!(
        out.contains("prices: $0.22 in, $0.95 out per million tokens: configured"),
        "{out}"
    );
}

#[test]
fn a_run_uses_the_limits_the_server_reported() {
    let mut rules = happy_rules();
    rules.insert(
        0,
        Rule::named("small-implement")
            .model("small-1")
            .contains("ROLE: implementer")
            .reply(Reply::text(implement_answer())),
    );
    let script = Script::new(rules).model_info(
        "small-1",
        ModelInfo {
            max_output_tokens: Some(512),
            ..info(Served::OpenRouter, 65536)
        },
    );
    let server = FakeServer::start_blocking(script).unwrap();
    let env = env_with(
        &server,
        "[models.small]\nprovider = \"box\"\nid = \"small-1\"\n",
    );
    let repo = env.repo(
        "proj",
        &[
            ("calc.py", "def add(a, b):\n    return a + b\n"),
            (".triad/tasks/add-sub.toml", TASK),
        ],
    );
    let run = env.triad(
        &repo,
        &[
            "run",
            "--task",
            "add-sub",
            "--implementer",
            "small",
            "--json",
        ],
    );
    run.ok();
    assert!(
        run.stderr.contains("triad: small: context window 65536 tokens: from the server (GET /models: context_length); max output 512 tokens: from the server"),
        "{}",
        run.stderr
    );
    let asked = server
        .requests()
        .into_iter()
        .find(|r| r.rule.as_deref() == Some("small-implement"))
        .unwrap();
    assert_eq!(
        asked.json.unwrap()["max_tokens"],
        512,
        "the stage asked for more than the server allows"
    );
    let out = run_json(&run.stdout);
    let id = out["run"].as_str().unwrap();
    let record: Value = serde_json::from_str(
        &env.git(&repo, &["show", &format!("refs/triad/runs/{id}:run.json")])
            .ok()
            .stdout,
    )
    .unwrap();
    assert_eq!(record["config"]["models"]["small"]["context_window"], 65536);
}
