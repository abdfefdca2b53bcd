//! Every command in SHA-256 repositories (`git init --object-format=sha256`), checked against
//! the git CLI: ids are recorded at their full 64-digit width, notes are ones git reads, the
//! object database stays clean, and the gate blocks what it blocks in SHA-1 repositories.

use std::path::{Path, PathBuf};

use git_triad::testkit::fake_llm::{FakeServer, Reply, Rule, Script, WireProtocol};
use serde_json::{json, Value};

use crate::common::{fake_user_config, TestEnv};
use crate::notes_hooks::{add_origin, assert_says, bare_repo, refused_push};
use crate::pipeline::{arbiter, happy_rules, issue, review, run_json, Scenario};

const CALC: &str = "def add(a, b):\n    return a + b\n";

/// The TaskSpec of [`Scenario`]'s runs, trimmed to what these tests need.
const TASK: &str = r#"title = "Add subtraction"
description = "calc.py needs a sub function."
acceptance = ["sub(3, 1) == 2"]

[[requirements]]
id = "R1"
text = "sub(a, b) returns a - b"

[scope]
include = ["calc.py", "tests/**"]
exclude = [".triad/**"]
"#;

/// Creates a SHA-256 repository `name` with `files` committed on `main`.
fn sha256_repo(env: &TestEnv, name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = env.root().join(name);
    let path = dir.to_str().unwrap();
    env.git(
        env.root(),
        &["init", "-q", "-b", "main", "--object-format=sha256", path],
    )
    .ok();
    env.write_files(&dir, files);
    env.commit_all(&dir, "initial commit");
    dir
}

/// A [`Scenario`] whose repository is a SHA-256 one, with a bare SHA-256 `origin` and
/// `git triad init` done (hooks installed).
fn sha256_scenario(rules: Vec<Rule>) -> (Scenario, PathBuf) {
    let server = FakeServer::start_blocking(Script::new(rules)).expect("fake server");
    let mut env = TestEnv::new();
    env.write_user_config(&fake_user_config(&server.base_url()));
    env.set("FAKE_OPENAI_KEY", "sk-fake-openai-key-for-tests");
    let repo = sha256_repo(
        &env,
        "proj",
        &[("calc.py", CALC), (".triad/tasks/add-sub.toml", TASK)],
    );
    let bare = bare_repo(
        &env,
        "remote.git",
        &["--object-format=sha256", "-b", "main"],
    );
    add_origin(&env, &repo, &bare);
    env.triad(&repo, &["init", "--no-trust"]).ok();
    env.git(&repo, &["push", "-q", "origin", "main"]).ok();
    (Scenario { env, server, repo }, bare)
}

/// An arbiter (model-b) that approves any change it is shown, for `git triad review`.
fn approving_arbiter() -> Rule {
    Rule::named("arbiter")
        .protocol(WireProtocol::OpenAi)
        .model("model-b")
        .reply(Reply::json(json!({"verdict": "APPROVE", "confidence": 0.9,
            "reasoning": "fine", "issues": [], "alternatives": []})))
}

/// Whether `id` is a full SHA-256 object id.
fn is_sha256_hex(id: &str) -> bool {
    id.len() == 64 && id.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Asserts `git fsck --full --strict` finds nothing wrong in `dir`.
#[track_caller]
fn fsck_clean(env: &TestEnv, dir: &Path) {
    let fsck = env.git(dir, &["fsck", "--full", "--strict"]);
    fsck.ok();
    assert!(
        !fsck.all().contains("error") && !fsck.all().contains("warning"),
        "{}",
        fsck.all()
    );
}

/// Every value of an `id`-like key (`commit`, `base`, `task_blob`, ...) anywhere in `v`.
fn recorded_ids(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let is_id = ["commit", "base", "task_blob", "tip", "head"].contains(&k.as_str());
                match x {
                    Value::String(s) if is_id => out.push(s.clone()),
                    _ => recorded_ids(x, out),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| recorded_ids(x, out)),
        _ => {}
    }
}

/// The run record `run.json` of run `id`, as stored under `refs/triad/runs/<id>`.
fn run_record(s: &Scenario, id: &str) -> Value {
    let text = s.git(&["show", &format!("refs/triad/runs/{id}:run.json")]);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("run.json is not JSON ({e}): {text}"))
}

/// `git diff-tree -p --no-renames <rev>~ <rev> | git patch-id --stable`: git's own patch id,
/// as wide as the repository's object ids.
fn git_patch_id(env: &TestEnv, dir: &Path, rev: &str) -> String {
    let script = format!("git diff-tree -p --no-renames {rev}~ {rev} | git patch-id --stable");
    let out = env
        .command("sh", dir)
        .args(["-c", &script])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let id = text.split_whitespace().next().expect("a patch id");
    assert!(is_sha256_hex(id), "{text}");
    id.to_string()
}

#[test]
fn init_and_task_new_work_in_a_sha256_repository() {
    let env = TestEnv::new();
    let work = sha256_repo(&env, "work", &[("a.txt", "a\n")]);
    let bare = bare_repo(&env, "remote.git", &["--object-format=sha256"]);
    add_origin(&env, &work, &bare);

    let init = env.triad(&work, &["init", "--no-trust"]);
    init.ok();
    let config = env
        .git(&work, &["config", "--local", "--list"])
        .ok()
        .stdout
        .clone();
    assert_says(
        &config,
        &[
            "notes.rewriteref=refs/notes/triad",
            "remote.origin.fetch=+refs/notes/triad*:refs/notes/remotes/origin/fetched/triad*",
        ],
    );
    assert_says(
        &std::fs::read_to_string(work.join(".git/hooks/pre-push")).unwrap(),
        &["git triad hook pre-push"],
    );

    let new = env.triad(&work, &["task", "new", "add-sub", "--title", "Add sub"]);
    new.ok();
    let spec = std::fs::read_to_string(work.join(".triad/tasks/add-sub.toml")).unwrap();
    assert_says(&spec, &["title = \"Add sub\"", "[scope]"]);
    env.commit_all(&work, "add the task");
    let list = env.triad(&work, &["task", "list", "--json"]);
    assert_says(&list.ok().stdout, &["add-sub"]);
    fsck_clean(&env, &work);
}

#[test]
fn an_approved_run_records_full_width_ids_that_git_reads() {
    let (s, _) = sha256_scenario(happy_rules());
    let r = s.run(&[]);
    r.ok();
    let out = run_json(&r.stdout);
    assert_eq!(out["status"], "approved", "{out}");
    let id = out["run"].as_str().unwrap().to_string();
    let branch = out["branch"].as_str().unwrap();

    // Four stage commits on the branch, in a SHA-256 object database git finds whole.
    let commits = s.git(&["rev-list", &format!("main..{branch}")]);
    assert_eq!(commits.lines().count(), 4, "{commits}");
    assert!(commits.lines().all(is_sha256_hex), "{commits}");
    let calc = s.git(&["show", &format!("{branch}:calc.py")]);
    assert!(calc.contains("return a - b"), "{calc}");
    fsck_clean(&s.env, &s.repo);

    // The record keeps every id at 64 digits, and they name the objects git has.
    let record = run_record(&s, &id);
    let mut ids = Vec::new();
    recorded_ids(&record, &mut ids);
    assert!(ids.len() >= 5, "{record}");
    for i in &ids {
        assert!(is_sha256_hex(i), "{i} in {record}");
        s.env.git(&s.repo, &["cat-file", "-e", i]).ok();
    }
    assert_eq!(
        record["base"].as_str().unwrap(),
        s.git(&["rev-parse", "main"]).trim()
    );

    // Verdict notes: plain git shows them, with the commit and patch id git itself computes.
    let arch = out["stages"][0]["commit"].as_str().unwrap();
    assert!(is_sha256_hex(arch), "{arch}");
    let shown = s.git(&["log", "--notes=triad", "-1", arch]);
    assert_says(&shown, &["Notes (triad):", "\"verdict\":\"APPROVE\""]);
    let note = s.git(&["notes", "--ref=triad", "show", arch]);
    let line: Value = serde_json::from_str(note.lines().next().unwrap()).unwrap();
    assert_eq!(line["commit"], arch);
    assert_eq!(
        line["patch_id"],
        git_patch_id(&s.env, &s.repo, arch).as_str()
    );

    // `git triad log`, as text and as JSON.
    let text = s.env.triad(&s.repo, &["log"]);
    assert_says(&text.ok().stdout, &[&id, "approved"]);
    let json = s.env.triad(&s.repo, &["log", &id, "--format", "json"]);
    let shown: Value = serde_json::from_str(json.ok().stdout.trim()).unwrap();
    assert_eq!(shown["run"], id.as_str());
    assert_eq!(shown["stages"][0]["commit"], arch);
    let list = s.env.triad(&s.repo, &["log", "--format", "json"]);
    let list: Value = serde_json::from_str(list.ok().stdout.trim()).unwrap();
    assert_eq!(list[0]["run"], id.as_str());

    // `git triad show` reads the verdicts back.
    let show = s.env.triad(&s.repo, &["show", arch]);
    assert_says(&show.ok().stdout, &["APPROVE"]);
    // An approved branch pushes through the gate.
    s.env.git(&s.repo, &["push", "-q", "origin", branch]).ok();
}

#[test]
fn a_halted_run_is_blocked_at_push_until_overridden() {
    let mut rules = happy_rules();
    rules[5] = arbiter(
        "verify",
        vec![review("HALT", json!([issue("unsafe", "return a - b")]))],
    );
    let (s, bare) = sha256_scenario(rules);
    let r = s.run(&[]);
    r.expect_code(3);
    let out = run_json(&r.stdout);
    assert_eq!(out["status"], "halted", "{out}");
    let branch = out["branch"].as_str().unwrap();
    let tip = s.git(&["rev-parse", branch]).trim().to_string();
    assert!(is_sha256_hex(&tip), "{tip}");
    let note = s.git(&["notes", "--ref=triad", "show", &tip]);
    let line: Value = serde_json::from_str(note.lines().last().unwrap()).unwrap();
    assert_eq!(line["verdict"], "HALT");
    assert_eq!(line["commit"], tip.as_str());
    fsck_clean(&s.env, &s.repo);

    // Packed objects and a commit-graph, as long-lived repositories have, read the same.
    s.env.git(&s.repo, &["gc", "-q"]).ok();
    assert!(s.repo.join(".git/objects/info/commit-graph").exists());

    // The hook `git triad init` installed refuses the halted branch.
    let push = refused_push(&s.env, &s.repo, &["push", "origin", branch]);
    assert_says(&push.stderr, &[&tip[..7], "HALT"]);
    let on_remote = s
        .env
        .git(&bare, &["cat-file", "-e", &format!("{tip}^{{commit}}")]);
    assert_ne!(on_remote.code, 0, "the halted commit reached the remote");

    // An override answers the HALT; then the branch goes.
    let o = s.env.triad(
        &s.repo,
        &[
            "override",
            branch,
            "--verdict",
            "APPROVE",
            "--reason",
            "checked by hand",
        ],
    );
    assert_says(&o.ok().stdout, &["HALT is now APPROVE"]);
    let shown = s.git(&["log", "--notes=triad", "-1", &tip]);
    assert_says(&shown, &["\"kind\":\"override\"", "checked by hand"]);
    s.env.git(&s.repo, &["push", "-q", "origin", branch]).ok();
    assert_eq!(s.env.rev_parse(&bare, branch), tip);
    fsck_clean(&s.env, &s.repo);
}

#[test]
fn a_stopped_run_resumes_to_approval() {
    let (s, _) = sha256_scenario(happy_rules());
    // A stale lock on the notes ref: the first verdict cannot be written, the run stops.
    let lock = s.repo.join(".git/refs/notes/triad.lock");
    std::fs::create_dir_all(lock.parent().unwrap()).unwrap();
    std::fs::write(&lock, "").unwrap();
    let r = s.run(&[]);
    r.expect_code(1);
    let out = run_json(&r.stdout);
    assert_eq!(out["stop"]["reason"], "note_not_written", "{out}");
    let id = out["run"].as_str().unwrap().to_string();

    std::fs::remove_file(&lock).unwrap();
    let r = s.env.triad(&s.repo, &["resume", &id, "--json"]);
    r.ok();
    let out = run_json(&r.stdout);
    assert_eq!(out["status"], "approved", "{out}");
    for stage in out["stages"].as_array().unwrap() {
        let commit = stage["commit"].as_str().unwrap();
        assert!(is_sha256_hex(commit), "{stage}");
        if stage["verdict"].is_string() {
            assert!(!s.git(&["notes", "--ref=triad", "show", commit]).is_empty());
        }
    }
    fsck_clean(&s.env, &s.repo);
}

#[test]
fn review_note_and_rewrites_keep_verdicts_on_sha256_commits() {
    let (s, _) = sha256_scenario(vec![approving_arbiter()]);
    s.env.write_files(
        &s.repo,
        &[(
            "calc.py",
            "import requets\n\n\ndef add(a, b):\n    return a + b\n",
        )],
    );
    s.env.commit_all(&s.repo, "A typo import");
    let head = s.env.rev_parse(&s.repo, "HEAD");
    // The work tree is reviewed through a throwaway index; its tree id is a 64-digit one.
    s.env
        .write_files(&s.repo, &[("tests/new.py", "import nosuchmodule_xyz\n")]);
    let wt = s.env.triad(
        &s.repo,
        &["review", "--worktree", "--no-model", "--format", "json"],
    );
    let wt: Value = serde_json::from_str(&wt.ok().stdout).unwrap();
    assert_eq!(wt["verdict"], "REJECT", "{wt}");
    std::fs::remove_file(s.repo.join("tests/new.py")).unwrap();

    let r = s
        .env
        .triad(&s.repo, &["review", "--note", "--format", "json"]);
    r.ok();
    let note = s.git(&["notes", "--ref=triad", "show", "HEAD"]);
    let line: Value = serde_json::from_str(note.lines().next().unwrap()).unwrap();
    assert_eq!(line["verdict"], "REJECT", "{line}");
    assert_eq!(line["commit"], head.as_str());
    assert_eq!(
        line["patch_id"],
        git_patch_id(&s.env, &s.repo, "HEAD").as_str()
    );

    // Amending runs the post-rewrite hook, which reads git's 64-digit ids.
    s.env
        .git(&s.repo, &["config", "--unset-all", "notes.rewriteRef"])
        .ok();
    s.env
        .git(
            &s.repo,
            &["commit", "-q", "--amend", "-m", "A typo import, amended"],
        )
        .ok();
    let amended = s.env.rev_parse(&s.repo, "HEAD");
    assert_ne!(amended, head);
    let note = s.git(&["notes", "--ref=triad", "show", "HEAD"]);
    let line: Value = serde_json::from_str(note.lines().next().unwrap()).unwrap();
    assert_eq!(line["reattached_from"], head.as_str(), "{line}");

    // A cherry-pick loses the note; `notes reattach` finds it again by patch id.
    s.env
        .git(&s.repo, &["checkout", "-q", "-b", "copy", "origin/main"])
        .ok();
    // `-x` changes the message, so the copy is a new commit even at pinned dates.
    s.env.git(&s.repo, &["cherry-pick", "-x", &amended]).ok();
    let copy = s.env.rev_parse(&s.repo, "HEAD");
    assert_ne!(copy, amended);
    let reattach = s.env.triad(&s.repo, &["notes", "reattach", "HEAD"]);
    reattach.ok();
    let note = s.git(&["notes", "--ref=triad", "show", "HEAD"]);
    assert_says(&note, &["\"verdict\":\"REJECT\""]);
    fsck_clean(&s.env, &s.repo);
}
