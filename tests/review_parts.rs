//! A change larger than the reviewer's window is reviewed in parts, each request within the
//! window (the scripted server refuses any that is not, as providers do), and the verdict
//! carries a coverage receipt saying what it saw and what it left out.

use git_triad::testkit::fake_llm::{FakeServer, Reply, Rule, Script, WireProtocol};
use serde_json::{json, Value};

use crate::common::{fake_user_config, TestEnv};

const WINDOW: u64 = 8000;

fn approve() -> Value {
    json!({"verdict": "APPROVE", "confidence": 0.9, "reasoning": "fine", "issues": [], "alternatives": []})
}

#[test]
fn a_three_thousand_file_change_is_reviewed_in_parts_within_the_window_with_a_receipt() {
    let script = Script::new(vec![Rule::named("arbiter")
        .protocol(WireProtocol::OpenAi)
        .model("model-b")
        .reply(Reply::json(approve()))])
    .window("model-b", WINDOW);
    let server = FakeServer::start_blocking(script).expect("fake server");
    let mut env = TestEnv::new();
    env.write_user_config(&fake_user_config(&server.base_url()));
    env.set("FAKE_OPENAI_KEY", "sk-fake-openai-key-for-tests");
    let repo = env.repo("proj", &[("README.md", "# proj\n")]);
    let mut files: Vec<(String, String)> = (0..3000)
        .map(|i| (format!("data/f{i:04}.txt"), format!("value {i}\n")))
        .collect();
    // One file whose diff alone is larger than the window.
    files.push(("data/huge.txt".into(), "a line of text\n".repeat(4000)));
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    env.write_files(&repo, &refs);
    env.commit_all(&repo, "three thousand files");
    let window = format!("models.model-b.context_window={WINDOW}");
    // SARIF carries the receipt and the verdict for code-scanning tools.
    let r = env.triad(
        &repo,
        &[
            "-c",
            &window,
            "review",
            "--arbiter-model",
            "model-b",
            "--format",
            "sarif",
        ],
    );
    let sarif: Value = serde_json::from_str(r.ok().stdout.trim())
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", r.stdout, r.stderr));
    let properties = &sarif["runs"][0]["properties"];
    let coverage = &properties["coverage"];
    let parts = coverage["parts"].as_u64().unwrap();
    assert!(parts > 1, "{coverage}");
    assert_eq!(coverage["reviewed"].as_array().unwrap().len(), 3000);
    assert_eq!(
        coverage["left_out"][0]["path"], "data/huge.txt",
        "{coverage}"
    );
    // It did not see every file, so it does not approve.
    assert_eq!(properties["verdict"], "FLAG", "{properties}");
    // One request per part, each within the window (the server would have refused it).
    let requests = server.requests();
    assert_eq!(requests.len() as u64, parts);
    for q in &requests {
        assert!(
            q.body.chars().count() as u64 / 4 < WINDOW,
            "{} chars",
            q.body.len()
        );
    }
    // Every file is in exactly one part.
    let shown: usize = requests
        .iter()
        .map(|q| q.body.matches("=== data/f").count())
        .sum();
    assert_eq!(shown, 3000);
    // The text report says it too (the part count may differ: each answer's usage
    // calibrates the next estimate).
    let text = env.triad(
        &repo,
        &["-c", &window, "review", "--arbiter-model", "model-b"],
    );
    let out = &text.ok().stdout;
    assert!(
        out.contains("coverage: reviewed 3000 of 3001 file(s) in "),
        "{out}"
    );
    assert!(
        out.contains(" part(s); not reviewed: data/huge.txt (its diff alone is about"),
        "{out}"
    );
    assert!(
        out.contains("the model said APPROVE; the issues that count support FLAG: ")
            && out.contains("1 file(s) not reviewed: it is at most FLAG"),
        "{out}"
    );
}

/// A script with one NUL byte is binary to git: the arbiter is shown `(binary file, not
/// shown)`, so the receipt says it was not reviewed and the verdict is at most FLAG, on the
/// note the pre-push gate reads as on the report.
#[test]
fn a_file_with_a_nul_byte_is_not_reviewed_and_keeps_the_verdict_from_approving() {
    let script = Script::new(vec![Rule::named("arbiter")
        .protocol(WireProtocol::OpenAi)
        .model("model-b")
        .reply(Reply::json(approve()))]);
    let server = FakeServer::start_blocking(script).expect("fake server");
    let mut env = TestEnv::new();
    env.write_user_config(&fake_user_config(&server.base_url()));
    env.set("FAKE_OPENAI_KEY", "sk-fake-openai-key-for-tests");
    let bare = crate::notes_hooks::bare_repo(&env, "remote.git", &["-b", "main"]);
    let repo = env.repo("proj", &[("README.md", "# proj\n")]);
    crate::notes_hooks::add_origin(&env, &repo, &bare);
    env.triad(&repo, &["init", "--no-trust"]).ok();
    env.git(&repo, &["push", "-q", "origin", "main"]).ok();
    env.write_files(
        &repo,
        &[
            ("run.sh", "echo building\n\0\nrm -rf \"$HOME/.cache\"\n"),
            ("notes.md", "How to build.\n"),
        ],
    );
    env.commit_all(&repo, "Add a build script");
    let r = env.triad(
        &repo,
        &[
            "review",
            "HEAD",
            "--arbiter-model",
            "model-b",
            "--note",
            "--format",
            "json",
        ],
    );
    let review: Value = serde_json::from_str(r.ok().stdout.trim())
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", r.stdout, r.stderr));
    let request = &server.requests()[0].body;
    assert!(request.contains("(binary file, not shown)"), "{request}");
    let coverage = &review["coverage"];
    let reviewed = coverage["reviewed"].as_array().unwrap();
    assert!(reviewed.contains(&json!("notes.md")), "{review}");
    assert!(!reviewed.contains(&json!("run.sh")), "{review}");
    assert_eq!(coverage["left_out"][0]["path"], "run.sh", "{review}");
    assert!(
        coverage["left_out"][0]["why"]
            .as_str()
            .unwrap()
            .contains("NUL byte"),
        "{coverage}"
    );
    assert_eq!(review["verdict"], "FLAG", "{review}");
    assert_eq!(review["model_verdict"], "APPROVE", "{review}");
    let show = env.triad(&repo, &["show"]);
    crate::notes_hooks::assert_says(
        &show.ok().stdout,
        &[
            "review  FLAG",
            "not reviewed: run.sh (git reads it as binary",
            ": FLAG",
        ],
    );
    // A team that blocks on FLAG does not push it unseen.
    env.write_files(
        &repo,
        &[(
            ".triad/config.toml",
            "[hooks.pre_push]\nblock_on = [\"HALT\", \"FLAG\"]\n",
        )],
    );
    let push = crate::notes_hooks::refused_push(&env, &repo, &["push", "origin", "main"]);
    crate::notes_hooks::assert_says(
        &push.stderr,
        &["Add a build script", "FLAG at stage review"],
    );
}
