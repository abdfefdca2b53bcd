//! A commit whose tree carries `.git/` (built with `git mktree`, as git itself refuses to
//! check such a tree out): its `.git/config` sets `core.fsmonitor` and its
//! `.git/hooks/post-commit` is a hook, each writing a canary file outside and saying so on
//! its output. A run with a verify command and a review with the repository's tests, in a
//! trusted and an untrusted clone: nothing of it runs, inside the box or out, and the run's
//! record and the review say the path was left out of the scratch copy.

use std::path::{Path, PathBuf};

use git_triad::testkit::fake_llm::{FakeServer, Reply, Rule, Script, WireProtocol};
use serde_json::{json, Value};

use crate::common::{fake_user_config, TestEnv};
use crate::pipeline::{happy_rules, run_json, Scenario};

/// What the tree's monitor and hook print when they run.
const RAN: &str = "TREE-GIT-RAN";

/// The canaries the tree's `.git` would write, outside every scratch copy.
struct Canaries {
    monitor: PathBuf,
    hook: PathBuf,
}

impl Canaries {
    fn under(root: &Path) -> Canaries {
        Canaries {
            monitor: root.join("canary-fsmonitor"),
            hook: root.join("canary-post-commit"),
        }
    }

    fn assert_absent(&self, what: &str) {
        for c in [&self.monitor, &self.hook] {
            assert!(!c.exists(), "{what}: the tree's .git ran: {}", c.display());
        }
    }
}

/// `git <args>` in `repo` (the test's hermetic environment) with `input` on its standard
/// input; its trimmed output.
fn git_in(env: &TestEnv, repo: &Path, args: &[&str], input: &str) -> String {
    let r = env.git_stdin(repo, args, input);
    r.ok();
    r.stdout.trim().to_string()
}

/// Makes `main` of `repo` a commit on top of it whose tree is HEAD's plus a `.git/` holding
/// a config with `core.fsmonitor` and a `post-commit` hook, built with `git mktree` and
/// `git commit-tree` (no checkout: git refuses one). Returns the commit.
fn commit_carrying_dotgit(env: &TestEnv, repo: &Path, canaries: &Canaries) -> String {
    let config = format!(
        "[core]\n\tfsmonitor = \"echo {RAN} >&2; touch {}\"\n",
        canaries.monitor.display()
    );
    let hook = format!(
        "#!/bin/sh\necho {RAN} >&2\ntouch {}\n",
        canaries.hook.display()
    );
    let config = git_in(env, repo, &["hash-object", "-w", "--stdin"], &config);
    let hook = git_in(env, repo, &["hash-object", "-w", "--stdin"], &hook);
    let hooks = git_in(
        env,
        repo,
        &["mktree"],
        &format!("100755 blob {hook}\tpost-commit\n"),
    );
    let dotgit = git_in(
        env,
        repo,
        &["mktree"],
        &format!("100644 blob {config}\tconfig\n040000 tree {hooks}\thooks\n"),
    );
    let head = git_in(env, repo, &["ls-tree", "HEAD"], "");
    let top = git_in(
        env,
        repo,
        &["mktree"],
        &format!("{head}\n040000 tree {dotgit}\t.git\n"),
    );
    let commit = git_in(
        env,
        repo,
        &[
            "commit-tree",
            &top,
            "-p",
            "HEAD",
            "-m",
            "carry a .git of its own",
        ],
        "",
    );
    git_in(env, repo, &["update-ref", "refs/heads/main", &commit], "");
    commit
}

/// The user's config with the scripted models and a verify command that runs git in the
/// scratch copy (status and a commit: what would fire the tree's monitor and hook there).
fn config_with_verify(base_url: &str) -> String {
    format!(
        "{}\n[verify]\ncommand = \"git status --porcelain; git -c user.name=t -c user.email=t@example.com commit -q --allow-empty -m boxed; echo verify-ran\"\ntimeout_secs = 120\n",
        fake_user_config(base_url)
    )
}

/// Whether an entry of a record's `left_out` names the tree's `.git`.
fn names_dotgit(left_out: &Value) -> bool {
    left_out.as_array().is_some_and(|l| {
        l.iter()
            .any(|p| p.as_str().is_some_and(|p| p.starts_with(".git")))
    })
}

fn run_on_a_tree_carrying_dotgit(trusted: bool) {
    let s = Scenario::new(happy_rules());
    s.env
        .write_user_config(&config_with_verify(&s.server.base_url()));
    if trusted {
        s.env
            .git(&s.repo, &["config", "triad.trusted", "true"])
            .ok();
    }
    let canaries = Canaries::under(s.env.root());
    commit_carrying_dotgit(&s.env, &s.repo, &canaries);

    let r = s.run(&[]);
    r.ok();
    canaries.assert_absent("run");
    assert!(!r.all().contains(RAN), "{}", r.all());
    let out = run_json(&r.stdout);
    assert_eq!(out["status"], "approved", "{out}");
    assert!(
        r.stderr
            .contains("left out of its scratch copy (never written, never run): .git"),
        "the run says what it left out: {}",
        r.stderr
    );
    let record = s.record(&out);
    let verify = &record["verify"];
    assert_eq!(verify["exit_code"], 0, "{verify}");
    let tail = verify["tail"].as_str().unwrap();
    assert!(tail.contains("verify-ran"), "{tail}");
    assert!(!tail.contains(RAN), "{tail}");
    assert!(
        names_dotgit(&verify["left_out"]),
        "the record names the path: {verify}"
    );
    // The user's own .git is as it was: no hook planted, no monitor set.
    assert!(!s.repo.join(".git/hooks/post-commit").exists());
    let config = std::fs::read_to_string(s.repo.join(".git/config")).unwrap();
    assert!(!config.contains("fsmonitor"), "{config}");
}

#[test]
fn a_run_in_a_trusted_clone_runs_nothing_of_a_tree_s_dotgit_and_says_so() {
    run_on_a_tree_carrying_dotgit(true);
}

#[test]
fn a_run_in_an_untrusted_clone_runs_nothing_of_a_tree_s_dotgit_and_says_so() {
    run_on_a_tree_carrying_dotgit(false);
}

/// A review of the commit (`git triad review <commit> --note`): its tests run on the base
/// and on the commit where the clone is trusted, and nothing of the tree's `.git` runs.
fn review_of_a_tree_carrying_dotgit(trusted: bool) -> (TestEnv, crate::common::Run, Value) {
    let server = FakeServer::start_blocking(Script::new(vec![Rule::named("arbiter")
        .protocol(WireProtocol::OpenAi)
        .model("model-b")
        .reply(Reply::json(
            json!({"verdict": "APPROVE", "confidence": 0.9, "reasoning": "fine",
                   "issues": [], "alternatives": []}),
        ))]))
    .unwrap();
    let mut env = TestEnv::new();
    env.write_user_config(&config_with_verify(&server.base_url()));
    env.set("FAKE_OPENAI_KEY", "sk-fake-openai-key-for-tests");
    let repo = env.repo(
        "proj",
        &[
            ("calc.py", "def add(a, b):\n    return a + b\n"),
            (
                "tests/test_calc.py",
                "import unittest\n\nfrom calc import add\n\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(1, 2), 3)\n",
            ),
        ],
    );
    if trusted {
        env.git(&repo, &["config", "triad.trusted", "true"]).ok();
    }
    let canaries = Canaries::under(env.root());
    let commit = commit_carrying_dotgit(&env, &repo, &canaries);
    let r = env.triad(&repo, &["review", &commit, "--note"]);
    r.ok();
    canaries.assert_absent("review");
    assert!(!r.all().contains(RAN), "{}", r.all());
    let shown = env.triad(&repo, &["show", &commit, "--json"]);
    shown.ok();
    let records: Value = serde_json::from_str(&shown.stdout).unwrap();
    let record = records.as_array().and_then(|a| a.last()).cloned().unwrap();
    (env, r, record)
}

#[test]
fn a_review_in_a_trusted_clone_runs_the_tests_without_the_tree_s_dotgit_and_says_so() {
    let (_env, r, record) = review_of_a_tree_carrying_dotgit(true);
    assert!(
        r.stdout
            .contains("left out of the scratch copies (never written, never run): .git"),
        "the review says what it left out: {}",
        r.stdout
    );
    let tests = &record["tests"];
    assert_eq!(tests["exit"], json!([0, 0]), "{record}");
    assert!(
        names_dotgit(&tests["left_out"]),
        "the note names the path: {record}"
    );
}

#[test]
fn a_review_in_an_untrusted_clone_runs_nothing_of_the_tree() {
    let (_env, r, record) = review_of_a_tree_carrying_dotgit(false);
    // No scratch copy is made: the clone's code runs nowhere, and the review says why.
    assert!(record["tests"].is_null(), "{record}");
    assert!(r.all().contains("not trusted"), "{}", r.all());
}
