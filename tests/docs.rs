//! The documentation's commands, run: every ```` ```sh checked ```` block of `docs/*.md` runs
//! under `sh -e` in a fresh repository (calc.py and the committed task `add-sub`, after
//! `git triad init --trust`) against the scripted model server, with the real binary and real
//! git, so a page cannot teach a command that no longer works. Every page has such a block.

use std::path::{Path, PathBuf};

use git_triad::testkit::fake_llm::{FakeServer, Reply, Rule, Script};
use serde_json::json;

use crate::common::{fake_user_config, TestEnv};
use crate::pipeline::{answer, happy_rules, on, review, MODEL_D, TASK};
use crate::session::work_rules;

/// The pages, from the crate's root.
fn pages() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs");
    let mut pages: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    pages.sort();
    pages
}

/// The `sh checked` blocks of a page, with the line each starts on.
fn checked_blocks(text: &str) -> Vec<(usize, String)> {
    let mut blocks = Vec::new();
    let mut open: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        match &mut open {
            None if line.trim() == "```sh checked" => open = Some((i + 1, String::new())),
            None => {}
            Some(_) if line.trim() == "```" => blocks.extend(open.take()),
            Some((_, body)) => {
                body.push_str(line);
                body.push('\n');
            }
        }
    }
    blocks
}

/// Every answer the pages' commands need: the pipeline's stages and reviews, a review of
/// any change, the reconciliation, a parallel exploration of model-a and model-c settled
/// by model-b, the chamber's panel and arbiter, and a session's manager and orchestrator.
fn rules() -> Vec<Rule> {
    let solution = |tag: &str| {
        Reply::text(answer(
            &format!("calc.py\n<<<<<<< SEARCH\ndef add(a, b):\n    return a + b\n=======\ndef add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    \"\"\"sub by {tag}\"\"\"\n    return a - b\n>>>>>>> REPLACE\n"),
            &format!("sub() by {tag}"),
        ))
    };
    let ballot = |letter: &str| {
        Reply::json(
            json!({"ratings": [{"candidate": letter, "score": 7, "reason": "sound"}],
            "vote": letter, "reason": "the better one"}),
        )
    };
    let mut r = vec![
        on(
            "model-a",
            "build-a",
            "ROLE: candidate",
            vec![solution("model-a")],
        ),
        on(
            "model-c",
            "build-c",
            "ROLE: candidate",
            vec![solution("model-c")],
        ),
        on(
            "model-a",
            "review-a",
            "ROLE: cross-reviewer",
            vec![ballot("B")],
        ),
        on(
            "model-c",
            "review-c",
            "ROLE: cross-reviewer",
            vec![ballot("A")],
        ),
        on(
            "model-b",
            "tie",
            "choose the best solution among the tied ones",
            vec![Reply::json(
                json!({"winner": "A", "justification": "simpler"}),
            )],
        ),
        on(
            "model-a",
            "synthesis",
            "ROLE: synthesizer",
            vec![Reply::text(answer("", "nothing to take from B"))],
        ),
        on(
            "model-b",
            "reconcile",
            "RECONCILE: does the output match",
            vec![Reply::json(json!({"verdict": "APPROVE", "confidence": 0.8,
                "reasoning": "matches", "checks": [],
                "requirements": [{"id": "R1", "status": "delivered", "evidence": "calc.py:sub"}],
                "rewind_to": "refactor", "gaps": []}))],
        ),
        crate::pipeline::arbiter("review", vec![review("APPROVE", json!([]))]),
    ];
    r.extend(happy_rules());
    r.extend(crate::chamber::agreeing());
    r.extend(work_rules(
        git_triad::testkit::fake_llm::WireProtocol::OpenAi,
        "model-c",
        Reply::text("It is done."),
        Reply::text("Complete. The run of add-sub2 is approved."),
    ));
    r
}

/// A fresh repository for one page, its user config naming the scripted models.
fn repo_for(env: &TestEnv, server: &FakeServer) -> PathBuf {
    env.write_user_config(&format!(
        "{}{MODEL_D}\n[roles.manager]\nmodels = [\"model-c\"]\n[roles.orchestrator]\nmodels = [\"model-c\"]\n[chamber]\npanel = [\"model-a\", \"model-c\"]\narbiter = \"model-b\"\n",
        fake_user_config(&server.base_url())
    ));
    let repo = env.repo(
        "proj",
        &[
            ("calc.py", "def add(a, b):\n    return a + b\n"),
            (".triad/tasks/add-sub.toml", TASK),
        ],
    );
    env.triad(&repo, &["init", "--trust"]).ok();
    env.commit_all(&repo, "git triad init");
    repo
}

/// The README's first screen points at every page.
#[test]
fn the_readme_links_every_page() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    for page in pages() {
        let name = page.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            readme.contains(&format!("(docs/{name})")),
            "README.md does not link docs/{name}"
        );
    }
}

#[test]
fn every_pages_checked_commands_run() {
    let pages = pages();
    assert!(pages.len() >= 6, "the docs pages: {pages:?}");
    for page in pages {
        let text = std::fs::read_to_string(&page).unwrap();
        let blocks = checked_blocks(&text);
        let name = page.file_name().unwrap().to_string_lossy().into_owned();
        assert!(!blocks.is_empty(), "{name} has no ```sh checked block");
        let server = FakeServer::start_blocking(Script::new(rules())).expect("fake server");
        let mut env = TestEnv::new();
        env.set("FAKE_OPENAI_KEY", "sk-fake-openai-key-for-tests");
        let repo = repo_for(&env, &server);
        for (line, body) in blocks {
            let path = format!(
                "{}:{}",
                crate::common::bin().parent().unwrap().display(),
                std::env::var("PATH").unwrap_or_default()
            );
            let out = env
                .command("sh", &repo)
                .env("PATH", path)
                .args(["-e", "-c", &body])
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{name}:{line}: the block failed ({}):\n{body}\n--- stdout\n{}\n--- stderr\n{}",
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}
