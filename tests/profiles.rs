//! Which models a configuration runs on: a user's own keyless servers are theirs, and the
//! built-in `local` profile only fills in what the user left unset.

use std::collections::BTreeSet;
use std::path::PathBuf;

use git_triad::testkit::fake_llm::{FakeServer, Script};

use crate::common::TestEnv;
use crate::pipeline::{happy_rules, run_json, TASK};

/// A user config in the style of an Ollama or vLLM setup: one keyless provider marked
/// `local = true` (pointing at the scripted server), two models on it, every role on them.
fn keyless_config(base: &str, roles: bool) -> String {
    let mut text = format!(
        r#"
[providers.my-ollama]
protocol = "openai"
base_url = "{base}/v1"
local = true

[models.model-a]
provider = "my-ollama"

[models.model-b]
provider = "my-ollama"

[transport]
timeout_secs = 10
max_retries = 1
backoff_base_ms = 10
backoff_max_ms = 50
"#
    );
    if roles {
        text.push_str(
            "[roles.architect]\nmodels = [\"model-a\"]\n[roles.implementer]\nmodels = [\"model-a\"]\n\
             [roles.refactorer]\nmodels = [\"model-a\"]\n[roles.verifier]\nmodels = [\"model-a\"]\n\
             [roles.arbiter]\nmodels = [\"model-b\"]\n",
        );
    }
    text
}

fn setup(roles: bool) -> (TestEnv, FakeServer, std::path::PathBuf) {
    let server = FakeServer::start_blocking(Script::new(happy_rules())).expect("fake server");
    let env = TestEnv::new();
    env.write_user_config(&keyless_config(&server.base_url(), roles));
    let repo = env.repo(
        "proj",
        &[
            ("calc.py", "def add(a, b):\n    return a + b\n"),
            (".triad/tasks/add-sub.toml", TASK),
        ],
    );
    (env, server, repo)
}

/// No key set, `profile = "auto"` (the default), every role on the user's own keyless
/// server: the run is planned, estimated and run on those models, never on the built-in
/// local profile's, and `config show --origin` says why.
#[test]
fn keyless_local_provider_roles_run_on_the_users_own_models_under_auto() {
    let (env, server, repo) = setup(true);
    let shown = env.triad(&repo, &["config", "show", "--origin", "profile"]);
    let text = shown.ok().stdout.clone();
    assert!(
        text.contains("# profile in effect: none (auto: you configured roles.architect"),
        "{text}"
    );

    let est = env.triad(&repo, &["run", "--task", "add-sub", "--estimate"]);
    let est_text = est.ok().stdout.clone();
    assert!(est_text.contains("model-a"), "{est_text}");
    assert!(!est_text.contains("local-qwen"), "{est_text}");

    let r = env.triad(&repo, &["run", "--task", "add-sub", "--json"]);
    let out = run_json(&r.ok().stdout);
    assert_eq!(out["status"], "approved", "{out}");
    assert!(!r.stderr.contains("llama-server"), "{}", r.stderr);
    assert!(!r.stderr.contains("`local` profile"), "{}", r.stderr);
    let models: Vec<String> = server
        .requests()
        .iter()
        .filter_map(|q| q.json.as_ref()?["model"].as_str().map(str::to_string))
        .collect();
    assert!(!models.is_empty());
    assert!(
        models.iter().all(|m| m == "model-a" || m == "model-b"),
        "{models:?}"
    );
}

/// The models registered but no roles configured: the models named on the command line
/// are the user's choice, and `auto` does not swap the rest for the local profile.
#[test]
fn explicit_model_flags_keep_auto_off_the_local_profile() {
    let (env, _server, repo) = setup(false);
    let shown = env.triad(&repo, &["config", "show", "--origin", "profile"]);
    assert!(
        shown
            .ok()
            .stdout
            .contains("# profile in effect: local (auto: no API key"),
        "{}",
        shown.stdout
    );
    let flags = [
        "run",
        "--task",
        "add-sub",
        "--json",
        "--architect",
        "model-a",
        "--implementer",
        "model-a",
        "--refactorer",
        "model-a",
        "--verifier",
        "model-a",
        "--arbiter-model",
        "model-b",
    ];
    let r = env.triad(&repo, &flags);
    let out = run_json(&r.ok().stdout);
    assert_eq!(out["status"], "approved", "{out}");
    assert!(!r.stderr.contains("llama-server"), "{}", r.stderr);
}

// ---------------------------------------------------------------------------------------
// Issue #38: roles from what the user has
// ---------------------------------------------------------------------------------------

/// The happy path's rules with the stages answered by `stages` and the reviews by `arbiter`.
fn rules_for(stages: &str, arbiter: &str) -> Vec<git_triad::testkit::fake_llm::Rule> {
    happy_rules()
        .into_iter()
        .map(|mut r| {
            let judge = r.name.as_deref().is_some_and(|n| n.starts_with("arbiter"));
            r.model = Some(if judge { arbiter } else { stages }.to_string());
            r
        })
        .collect()
}

/// A user with only `OPENAI_API_KEY` and no configuration but where the OpenAI provider is
/// (the scripted server): a repository with the task, and the user config pointing there.
fn openai_only(rules: Vec<git_triad::testkit::fake_llm::Rule>) -> (TestEnv, FakeServer, PathBuf) {
    let server = FakeServer::start_blocking(Script::new(rules)).expect("fake server");
    let mut env = TestEnv::new();
    env.write_user_config(&format!(
        "[providers.openai]\nbase_url = \"{}/v1\"\n[transport]\nmax_retries = 0\n",
        server.base_url()
    ));
    env.set("OPENAI_API_KEY", "sk-test-openai-only-key");
    let repo = env.repo(
        "proj",
        &[
            ("calc.py", "def add(a, b):\n    return a + b\n"),
            (".triad/tasks/add-sub.toml", TASK),
        ],
    );
    (env, server, repo)
}

/// Issue #38: with only OPENAI_API_KEY, `run` failed at the architect stage asking for the
/// Anthropic and Gemini keys and left a failed run behind. The roles whose defaults need
/// those keys now run on OpenAI models, said once on stderr, and the run is approved.
#[test]
fn with_one_providers_key_the_roles_run_on_its_models_and_say_so_once() {
    let (env, server, repo) = openai_only(rules_for("gpt-5", "gpt-4.1"));
    let r = env.triad(&repo, &["run", "--task", "add-sub", "--json"]);
    let out = run_json(&r.ok().stdout);
    assert_eq!(out["status"], "approved", "{out}");
    assert_eq!(out["stages"][0]["model"], "gpt-5");
    assert_eq!(out["stages"][0]["arbiter_model"], "gpt-4.1");
    let notice: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.contains("so these roles use models you can call"))
        .collect();
    insta::assert_snapshot!(notice.join("\n"), @"triad: ANTHROPIC_API_KEY and GEMINI_API_KEY are not set, so these roles use models you can call: architect gpt-5, gpt-4.1; implementer gpt-5, gpt-4.1; refactorer gpt-5, gpt-4.1; verifier gpt-5, gpt-4.1; arbiter gpt-5, gpt-4.1, gpt-5-mini (`git triad config show --origin roles` shows every role and why)");
    let models: BTreeSet<String> = server
        .requests()
        .iter()
        .filter_map(|q| q.json.as_ref()?["model"].as_str().map(str::to_string))
        .collect();
    assert_eq!(
        models,
        BTreeSet::from(["gpt-5".to_string(), "gpt-4.1".to_string()])
    );
    // Said once: the next run does not repeat it.
    let again = env.triad(&repo, &["run", "--task", "add-sub", "--json"]);
    again.ok();
    assert!(
        !again
            .stderr
            .contains("so these roles use models you can call"),
        "{}",
        again.stderr
    );
    // `config show --origin roles` prints the roles in effect and where each came from.
    let shown = env.triad(&repo, &["config", "show", "--origin", "roles"]);
    crate::user_output::check(
        "config-show-origin-roles-one-key",
        &shown.transcript(
            "git triad config show --origin roles",
            &env.normalizer().literal(server.base_url(), "[SERVER]"),
        ),
    );
}

/// A role the user set to models they cannot call is refused before any call, naming the
/// role, the model and the key; no run is left behind.
#[test]
fn a_role_the_user_cannot_call_stops_the_run_before_it_starts() {
    let (env, server, repo) = openai_only(rules_for("gpt-5", "gpt-4.1"));
    let args = [
        "-c",
        r#"roles.architect.models=["claude-sonnet-4-5"]"#,
        "run",
        "--task",
        "add-sub",
    ];
    let r = env.triad(&repo, &args);
    crate::user_output::check(
        "error-role-cannot-be-called",
        &r.transcript(&crate::user_output::command_line(&args), &env.normalizer()),
    );
    assert!(server.requests().is_empty(), "a model was called");
    let log = env.triad(&repo, &["log"]);
    assert!(log.ok().stdout.starts_with("no runs yet"), "{}", log.stdout);
}

/// Models declared with a provider and no role: `config show` offers them, and with no key
/// `profile = "auto"` puts them first in every role, before the built-in local models, so a
/// run uses them (and needs no llama-server).
#[test]
fn models_declared_without_a_role_are_offered_and_used_before_the_built_in_ones() {
    let (env, server, repo) = setup(false);
    let shown = env.triad(&repo, &["config", "show", "--origin", "roles"]);
    crate::user_output::check(
        "config-show-origin-roles-declared",
        &shown.transcript(
            "git triad config show --origin roles",
            &env.normalizer().literal(server.base_url(), "[SERVER]"),
        ),
    );
    let r = env.triad(&repo, &["run", "--task", "add-sub", "--json"]);
    let out = run_json(&r.ok().stdout);
    assert_eq!(out["status"], "approved", "{out}");
    assert_eq!(out["stages"][0]["model"], "model-a");
    assert_eq!(out["stages"][0]["arbiter_model"], "model-b");
    assert!(!r.stderr.contains("llama-server"), "{}", r.stderr);
}
