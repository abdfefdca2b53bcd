//! Which models a configuration runs on: a user's own keyless servers are theirs, and the
//! built-in `local` profile only fills in what the user left unset.

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
