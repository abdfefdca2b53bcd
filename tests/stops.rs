//! From a stop to a push (issue #45), over the scripted server, real git and the real
//! pre-push hook: an error says its cause on its main line, a failed start leaves nothing
//! behind, one model is a setup, every stop says its next command, and a rescued run pushes.

use std::path::Path;

use crate::common::{Run, TestEnv};

/// A port on 127.0.0.1 that nothing listens on: bound once, then let go.
fn dead_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// The refs a run leaves behind: its record and its branches.
fn run_refs(env: &TestEnv, repo: &Path) -> Vec<String> {
    env.git(
        repo,
        &[
            "for-each-ref",
            "--format=%(refname)",
            "refs/triad/runs",
            "refs/heads/triad",
        ],
    )
    .ok()
    .stdout
    .lines()
    .map(str::to_string)
    .collect()
}

/// The lines of stderr that start with `hint: `.
fn hints(run: &Run) -> Vec<&str> {
    run.stderr
        .lines()
        .filter_map(|l| l.strip_prefix("hint: "))
        .collect()
}

#[test]
fn nothing_listening_is_said_on_the_main_line_and_a_failed_start_leaves_nothing() {
    let port = dead_port();
    let mut env = TestEnv::new();
    env.write_user_config(&format!(
        r#"
[providers.my-server]
protocol = "openai"
base_url = "http://127.0.0.1:{port}/v1"
api_key_env = "MY_KEY"

[models.my-coder]
provider = "my-server"
context_window = 32000
max_output_tokens = 4000
price_in = 1.0
price_out = 2.0

[models.my-judge]
provider = "my-server"
context_window = 32000
max_output_tokens = 4000
price_in = 1.0
price_out = 2.0

[roles.architect]
models = ["my-coder"]
[roles.implementer]
models = ["my-coder"]
[roles.refactorer]
models = ["my-coder"]
[roles.verifier]
models = ["my-coder"]
[roles.arbiter]
models = ["my-judge"]

[transport]
max_retries = 1
backoff_base_ms = 1
backoff_max_ms = 2
"#
    ));
    env.set("MY_KEY", "sk-test-key-for-a-dead-port");
    let repo = env.repo(
        "proj",
        &[
            ("calc.py", "def add(a, b):\n    return a + b\n"),
            (".triad/tasks/add-sub.toml", crate::pipeline::TASK),
        ],
    );
    let task_before = env.git(&repo, &["for-each-ref", "refs/triad/tasks"]).stdout;

    // -q: the warnings are gone, and the cause must still be said.
    let r = env.triad(&repo, &["-q", "run", "--task", "add-sub"]);
    r.expect_code(1);
    let main = r.stderr.lines().next().unwrap_or_default();
    assert!(
        main.starts_with("error: the run could not start"),
        "{}",
        r.stderr
    );
    for part in [
        "architect role",
        "my-coder",
        &format!("connection refused: nothing listens at 127.0.0.1:{port}"),
    ] {
        assert!(
            main.contains(part),
            "missing {part:?} in the main line: {main}"
        );
    }
    let h = hints(&r);
    assert!(
        h.iter().any(|h| h.contains(&format!(
            "nothing listens at http://127.0.0.1:{port}/v1: start the server there, or point `providers.my-server.base_url`"
        ))),
        "{h:?}"
    );
    assert!(
        !r.stderr.contains("when the provider is back"),
        "{}",
        r.stderr
    );
    // Nothing was built, so nothing is left: no run record, no branch, the task as it was.
    assert!(
        run_refs(&env, &repo).is_empty(),
        "{:?}",
        run_refs(&env, &repo)
    );
    assert_eq!(
        env.git(&repo, &["for-each-ref", "refs/triad/tasks"]).stdout,
        task_before
    );
    let log = env.triad(&repo, &["log"]);
    assert!(log.ok().stdout.contains("no runs yet"), "{}", log.stdout);

    // `models check` says the same cause, and does not suggest running itself.
    let check = env.triad(&repo, &["-q", "models", "check", "my-coder"]);
    check.expect_code(1);
    assert!(
        check.stderr.contains(&format!(
            "connection refused: nothing listens at 127.0.0.1:{port}"
        )),
        "{}",
        check.stderr
    );
    assert!(
        !hints(&check).iter().any(|h| h.contains("models check")),
        "{}",
        check.stderr
    );
}
