//! Verdict notes where pushes and reviewers meet them: the note format and store, the
//! pre-push gate through real `git push`, rewrites, sharing, and `git triad init`.

mod gate;
mod install;
mod rewrite;
mod store;

use std::path::{Path, PathBuf};

use git_triad::notes;
use serde_json::{json, Value};

use crate::common::TestEnv;

/// A full review line as the pipeline writes it.
pub fn review(commit: &str, patch_id: Option<&str>, verdict: &str, ts: &str) -> Value {
    json!({
        "v": 1, "kind": "review", "ts": ts, "run": "run-1", "stage": "implement", "attempt": 1,
        "verdict": verdict, "model_verdict": verdict, "floor": null,
        "reviewed_model": "model-a", "arbiter_model": "model-b",
        "issues": [
            {"severity": "suggestion", "category": "style", "path": "src/lib.rs", "start_line": 7,
             "end_line": 7, "quote": "y", "description": "naming", "suggestion": "", "evidence": "",
             "anchored": true, "symbol": null},
            {"severity": "critical", "category": "correctness", "path": "src/lib.rs", "start_line": 3,
             "end_line": 5, "quote": "x[i]", "description": "index can run past the end",
             "suggestion": "check the length", "evidence": "", "anchored": true,
             "symbol": {"kind": "function", "name": "parse", "start_line": 1, "end_line": 9}}
        ],
        "alternatives": [], "confidence": 0.9, "reasoning": "the loop bound is wrong",
        "token_cost": 1234, "patch_id": patch_id, "commit": commit
    })
}

/// Opens a repository in the test process.
pub fn open(dir: &Path) -> git2::Repository {
    git2::Repository::open(dir).expect("open repo")
}

/// Records a review verdict on `rev` with the library; returns the full commit id.
pub fn add_verdict(dir: &Path, rev: &str, verdict: &str, ts: &str) -> String {
    let repo = open(dir);
    let oid = repo
        .revparse_single(rev)
        .unwrap()
        .peel_to_commit()
        .unwrap()
        .id();
    let pid = notes::patch_id(&repo, oid).unwrap();
    let hex = oid.to_string();
    notes::append(&repo, oid, &[review(&hex, pid.as_deref(), verdict, ts)]).unwrap();
    hex
}

/// A work clone with `origin` pointing at a fresh bare repository, set up by `git triad init`.
pub fn remote_pair(env: &TestEnv) -> (PathBuf, PathBuf) {
    let bare = env.root().join("remote.git");
    env.git(
        env.root(),
        &["init", "-q", "--bare", "-b", "main", bare.to_str().unwrap()],
    )
    .ok();
    let work = env.repo("work", &[("src/lib.rs", "fn parse() {}\n")]);
    env.git(&work, &["remote", "add", "origin", bare.to_str().unwrap()])
        .ok();
    env.triad(&work, &["init", "--no-trust"]).ok();
    (work, bare)
}

/// Commits a new file on the current branch; returns the commit id.
pub fn commit_file(env: &TestEnv, dir: &Path, path: &str, text: &str, msg: &str) -> String {
    env.write_files(dir, &[(path, text)]);
    env.commit_all(dir, msg);
    env.rev_parse(dir, "HEAD")
}

/// PATH with the git-triad binary's directory first, as `env.git` uses, for commands that
/// run git hooks from inside git-triad (`git triad notes push`).
pub fn path_with_triad() -> String {
    let bin = crate::common::bin();
    format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    )
}
