//! The review bench (`scripts/bench-review` on `examples/review-bench`, written before any
//! tuning, issue 42) measures what it says: its repository has no tests, every bug commit
//! changes what its function does on a normal input, no clean commit changes what any
//! function does (run by python3 on the base and on each commit, over inputs of the bench's
//! own in `probe.py`, never in the repository a review sees), and its totals are the verdicts
//! `git triad review` printed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use git_triad::testkit::fake_llm::{FakeServer, Reply, Rule, Script, WireProtocol};
use serde_json::{json, Value};

use crate::common::{bin, fake_user_config, TestEnv};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/review-bench")
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/bench-review")
}

/// One commit of the corpus, as its manifest says.
struct Entry {
    branch: String,
    kind: String,
    function: String,
}

fn manifest() -> Vec<Entry> {
    let text = std::fs::read_to_string(corpus().join("manifest.json")).unwrap();
    let entries: Vec<Value> = serde_json::from_str(&text).unwrap();
    entries
        .iter()
        .map(|e| Entry {
            branch: e["branch"].as_str().unwrap().into(),
            kind: e["kind"].as_str().unwrap().into(),
            function: e["function"].as_str().unwrap().into(),
        })
        .collect()
}

fn git(repo: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// The files of `rev`, written into `dest` (`git archive` into `tar`).
fn checkout(repo: &Path, rev: &str, dest: &Path) {
    std::fs::create_dir_all(dest).unwrap();
    let mut archive = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["archive", "--format=tar", rev])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let tar = Command::new("tar")
        .arg("-x")
        .arg("-C")
        .arg(dest)
        .stdin(archive.stdout.take().unwrap())
        .status()
        .unwrap();
    assert!(archive.wait().unwrap().success() && tar.success());
}

/// Each call of `probe.py` and its outcome in the project at `tree`.
fn probe(tree: &Path) -> BTreeMap<String, String> {
    let out = Command::new("python3")
        .arg(corpus().join("probe.py"))
        .arg(tree)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "probe.py: {out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn the_review_bench_is_ten_bugs_that_change_a_result_and_ten_clean_commits_that_change_none() {
    let entries = manifest();
    assert_eq!(entries.iter().filter(|e| e.kind == "bug").count(), 10);
    assert_eq!(entries.iter().filter(|e| e.kind == "clean").count(), 10);

    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("toolbox");
    let list = Command::new("bash")
        .arg(script())
        .args(["--list", "--repo"])
        .arg(&repo)
        .output()
        .unwrap();
    assert!(list.status.success(), "{list:?}");
    let listing = String::from_utf8(list.stdout).unwrap();

    // The repository a review sees: the project, no tests, nothing of the bench's own.
    let files = git(&repo, &["ls-files"]);
    assert!(files.lines().any(|f| f == "toolbox/stats.py"), "{files}");
    for file in files.lines() {
        assert!(
            !file.contains("test") && !file.ends_with("manifest.json") && file != "probe.py",
            "{file} is in the reviewed repository"
        );
    }

    let main = git(&repo, &["rev-parse", "main"]);
    let base = probe(&corpus().join("base"));
    for e in &entries {
        let commit = git(&repo, &["rev-parse", &e.branch]);
        assert!(
            listing.contains(&format!("{} {commit} {}", e.branch, e.kind)),
            "{listing}"
        );
        assert_eq!(git(&repo, &["rev-parse", &format!("{commit}^")]), main);
        assert!(
            base.keys()
                .any(|call| call.starts_with(&format!("{}(", e.function))),
            "probe.py calls no {}",
            e.function
        );
        let tree = tmp.path().join(&e.branch);
        checkout(&repo, &commit, &tree);
        let now = probe(&tree);
        assert_eq!(now.len(), base.len(), "{}", e.branch);
        let changed: Vec<String> = base
            .iter()
            .filter(|(call, outcome)| now[*call] != **outcome)
            .map(|(call, outcome)| format!("{call}: {outcome} -> {}", now[call]))
            .collect();
        if e.kind == "bug" {
            assert!(
                !changed.is_empty(),
                "{}: no input changes {}'s result",
                e.branch,
                e.function
            );
            assert!(
                changed
                    .iter()
                    .all(|c| c.starts_with(&format!("{}(", e.function))),
                "{}: a function beside {} changed: {changed:?}",
                e.branch,
                e.function
            );
        } else {
            assert!(
                changed.is_empty(),
                "{}, a clean commit, changes {changed:?}",
                e.branch
            );
        }
    }
}

#[test]
fn bench_review_sums_the_verdicts_git_triad_review_printed() {
    let server = FakeServer::start_blocking(Script::new(vec![Rule::named("arbiter")
        .protocol(WireProtocol::OpenAi)
        .model("model-b")
        .reply(Reply::json(json!({
            "verdict": "REJECT", "confidence": 0.6, "reasoning": "looks risky",
            "issues": [], "alternatives": []
        })))]))
    .unwrap();
    let mut env = TestEnv::new();
    env.write_user_config(&fake_user_config(&server.base_url()));
    let path = format!(
        "{}:{}",
        bin().parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    env.set("FAKE_OPENAI_KEY", "sk-fake-openai-key-for-tests")
        .set("PATH", &path);
    let out = env.root().join("results");
    let run = env
        .command("bash", env.root())
        .arg(script())
        .args(["--no-build", "--models", "configured"])
        .args(["--only", "change-04,change-02", "--repo"])
        .arg(env.root().join("toolbox"))
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{run:?}");

    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let rows = summary["commits"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{summary}");
    let mut blocked = BTreeMap::new();
    for row in rows {
        let branch = row["branch"].as_str().unwrap();
        let review: Value = serde_json::from_str(
            &std::fs::read_to_string(out.join(format!("{branch}.json"))).unwrap(),
        )
        .unwrap();
        assert_eq!(row["verdict"], review["verdict"], "{summary}");
        assert_eq!(row["model_verdict"], "REJECT", "{summary}");
        assert!(row["seconds"].is_number(), "{summary}");
        let verdict = review["verdict"].as_str().unwrap();
        blocked.insert(
            row["kind"].as_str().unwrap().to_string(),
            usize::from(verdict == "REJECT" || verdict == "HALT"),
        );
    }
    let totals = &summary["totals"];
    assert_eq!(totals["bug_commits"], 1);
    assert_eq!(totals["clean_commits"], 1);
    assert_eq!(totals["bugs_caught"], blocked["bug"]);
    assert_eq!(totals["clean_blocked"], blocked["clean"]);
    assert_eq!(totals["errors"], 0);
    assert!(
        stdout.contains(&format!(
            "bug commits caught (REJECT or HALT): {}/1",
            blocked["bug"]
        )),
        "{stdout}"
    );
    // The arbiter asked is the fake server, for each reviewed commit.
    assert!(server.requests().len() >= 2);
}
