//! Verdict notes where pushes and reviewers meet them: the note format and store, the
//! pre-push gate through real `git push`, rewrites, sharing, and `git triad init`.

mod gate;
mod install;
mod names;
mod rewrite;
mod runs;
mod seams;
mod store;
mod trust;
mod unseen;

use std::path::{Path, PathBuf};

use git_triad::notes;
use serde_json::{json, Value};

use crate::common::{Run, TestEnv};

/// When the verdicts of these tests were given, unless a test says otherwise.
pub const T1: &str = "2026-01-01T00:00:00.000Z";

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

/// The commit `rev` names.
pub fn commit_id(repo: &git2::Repository, rev: &str) -> git2::Oid {
    repo.revparse_single(rev)
        .unwrap()
        .peel_to_commit()
        .unwrap()
        .id()
}

/// Records a review verdict on `rev` with the library; returns the full commit id.
pub fn add_verdict(dir: &Path, rev: &str, verdict: &str, ts: &str) -> String {
    let repo = open(dir);
    let oid = commit_id(&repo, rev);
    let pid = notes::patch_id(&repo, oid).unwrap();
    let hex = oid.to_string();
    notes::append(&repo, oid, &[review(&hex, pid.as_deref(), verdict, ts)]).unwrap();
    hex
}

/// A fresh bare repository `name` in the test's root, made by `git init --bare <init_args>`.
pub fn bare_repo(env: &TestEnv, name: &str, init_args: &[&str]) -> PathBuf {
    let bare = env.root().join(name);
    let mut args = vec!["init", "-q", "--bare"];
    args.extend_from_slice(init_args);
    args.push(bare.to_str().unwrap());
    env.git(env.root(), &args).ok();
    bare
}

/// Points `origin` of `work` at `bare`.
pub fn add_origin(env: &TestEnv, work: &Path, bare: &Path) {
    env.git(work, &["remote", "add", "origin", bare.to_str().unwrap()])
        .ok();
}

/// A work clone with `origin` pointing at a fresh bare repository, set up by `git triad init`.
pub fn remote_pair(env: &TestEnv) -> (PathBuf, PathBuf) {
    let bare = bare_repo(env, "remote.git", &["-b", "main"]);
    let work = env.repo("work", &[("src/lib.rs", "fn parse() {}\n")]);
    add_origin(env, &work, &bare);
    env.triad(&work, &["init", "--no-trust"]).ok();
    (work, bare)
}

/// Another clone `name` of `bare`, set up by `git triad init`.
pub fn clone_of(env: &TestEnv, bare: &Path, name: &str) -> PathBuf {
    let clone = env.root().join(name);
    env.git(
        env.root(),
        &[
            "clone",
            "-q",
            bare.to_str().unwrap(),
            clone.to_str().unwrap(),
        ],
    )
    .ok();
    env.triad(&clone, &["init", "--no-trust"]).ok();
    clone
}

/// Commits a new file on the current branch; returns the commit id.
pub fn commit_file(env: &TestEnv, dir: &Path, path: &str, text: &str, msg: &str) -> String {
    env.write_files(dir, &[(path, text)]);
    env.commit_all(dir, msg);
    env.rev_parse(dir, "HEAD")
}

/// Commits a new file on the current branch and records a review `verdict` on it at [`T1`];
/// returns the commit id.
pub fn commit_with_verdict(
    env: &TestEnv,
    dir: &Path,
    path: &str,
    text: &str,
    msg: &str,
    verdict: &str,
) -> String {
    commit_file(env, dir, path, text, msg);
    add_verdict(dir, "HEAD", verdict, T1)
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

/// The standard output of `git <args>` in `dir`, which must succeed.
pub fn git_stdout(env: &TestEnv, dir: &Path, args: &[&str]) -> String {
    env.git(dir, args).ok().stdout.clone()
}

/// `git <args>` in `dir` (a push), which the pre-push gate must refuse; returns the run.
#[track_caller]
pub fn refused_push(env: &TestEnv, dir: &Path, args: &[&str]) -> Run {
    let push = env.git(dir, args);
    assert_ne!(push.code, 0, "the push went through:\n{}", push.stderr);
    push
}

/// `git triad override HEAD --verdict <verdict> --reason <reason>` in `dir`.
pub fn override_head(env: &TestEnv, dir: &Path, verdict: &str, reason: &str) -> Run {
    env.triad(
        dir,
        &["override", "HEAD", "--verdict", verdict, "--reason", reason],
    )
}

/// Asserts `text` contains every one of `parts`.
#[track_caller]
pub fn assert_says(text: &str, parts: &[&str]) {
    for part in parts {
        assert!(text.contains(part), "missing {part:?} in:\n{text}");
    }
}

/// Asserts `text` contains none of `parts`.
#[track_caller]
pub fn assert_never_says(text: &str, parts: &[&str]) {
    for part in parts {
        assert!(!text.contains(part), "unexpected {part:?} in:\n{text}");
    }
}
