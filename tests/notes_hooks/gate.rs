//! The pre-push gate, through real `git push` to a local bare remote.

use super::{add_verdict, commit_file, remote_pair};
use crate::common::TestEnv;

const T1: &str = "2026-01-01T00:00:00.000Z";

#[test]
fn halt_blocks_the_push_until_overridden() {
    let env = TestEnv::new();
    let (work, bare) = remote_pair(&env);
    let halted = commit_file(&env, &work, "src/a.rs", "a\n", "Add the parser");
    add_verdict(&work, "HEAD", "HALT", T1);

    let push = env.git(&work, &["push", "origin", "main"]);
    assert_ne!(push.code, 0, "{}", push.stderr);
    assert!(push.stderr.contains(&halted[..7]), "{}", push.stderr);
    assert!(push.stderr.contains("Add the parser"), "{}", push.stderr);
    assert!(
        push.stderr
            .contains("HALT at stage implement, arbiter model-b"),
        "{}",
        push.stderr
    );
    // Top issues, most serious first, with path:line.
    let critical = push
        .stderr
        .find("critical src/lib.rs:3")
        .expect(&push.stderr);
    let suggestion = push
        .stderr
        .find("suggestion src/lib.rs:7")
        .expect(&push.stderr);
    assert!(critical < suggestion);
    assert!(
        push.stderr.contains("git triad override"),
        "{}",
        push.stderr
    );
    assert!(
        push.stderr.contains("git push --no-verify"),
        "{}",
        push.stderr
    );
    assert!(
        env.git(&bare, &["rev-parse", "--verify", "-q", "main"])
            .code
            != 0
    );

    env.triad(
        &work,
        &["override", "HEAD", "--verdict", "APPROVE", "--reason", " "],
    )
    .expect_code(2);
    let o = env.triad(
        &work,
        &[
            "override",
            "HEAD",
            "--verdict",
            "APPROVE",
            "--reason",
            "checked by hand",
        ],
    );
    o.ok();
    assert!(o.stdout.contains("HALT is now APPROVE"), "{}", o.stdout);
    env.git(&work, &["push", "origin", "main"]).ok();
    assert_eq!(env.rev_parse(&bare, "main"), halted);

    let show = env.triad(&work, &["show"]);
    show.ok();
    assert!(
        show.stdout.contains(
            "override  APPROVE  (overrides HALT) by Test Committer <committer@example.com>"
        ),
        "{}",
        show.stdout
    );
    assert!(
        show.stdout.contains("reason: checked by hand"),
        "{}",
        show.stdout
    );
    assert!(
        show.stdout.contains(
            "- critical correctness src/lib.rs:3-5 (function parse) — index can run past the end"
        ),
        "{}",
        show.stdout
    );
    assert!(
        show.stdout.contains(": APPROVE (from the override of"),
        "{}",
        show.stdout
    );
}

#[test]
fn override_needs_a_verdict_to_overrule() {
    let env = TestEnv::new();
    let (work, _) = remote_pair(&env);
    let r = env.triad(
        &work,
        &[
            "override",
            "HEAD",
            "--verdict",
            "APPROVE",
            "--reason",
            "why not",
        ],
    );
    r.expect_code(2);
    assert!(
        r.stderr.contains("has no verdict to override"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("hint: `git triad show"), "{}", r.stderr);
}

#[test]
fn several_refs_at_once_are_all_checked() {
    let env = TestEnv::new();
    let (work, _) = remote_pair(&env);
    for b in ["a", "b", "c"] {
        env.git(&work, &["checkout", "-q", "-b", b, "main"]).ok();
        commit_file(&env, &work, &format!("{b}.txt"), b, &format!("Work on {b}"));
        add_verdict(&work, "HEAD", if b == "c" { "HALT" } else { "APPROVE" }, T1);
    }
    let push = env.git(&work, &["push", "origin", "a", "b", "c"]);
    assert_ne!(push.code, 0);
    assert!(push.stderr.contains("Work on c"), "{}", push.stderr);
    assert!(!push.stderr.contains("Work on a"), "{}", push.stderr);
    assert!(
        push.stderr.contains("1 commit has a verdict"),
        "{}",
        push.stderr
    );
}

#[test]
fn new_branches_check_only_what_the_remote_lacks() {
    let env = TestEnv::new();
    let (work, _) = remote_pair(&env);
    // A halted commit that is already on the remote is not this push's business.
    commit_file(&env, &work, "old.txt", "old", "Old halted work");
    add_verdict(&work, "HEAD", "HALT", T1);
    env.git(&work, &["push", "--no-verify", "origin", "main"])
        .ok();

    env.git(&work, &["checkout", "-q", "-b", "feature"]).ok();
    commit_file(&env, &work, "f1.txt", "1", "Feature step one");
    add_verdict(&work, "HEAD", "HALT", T1);
    commit_file(&env, &work, "f2.txt", "2", "Feature step two");
    add_verdict(&work, "HEAD", "APPROVE", T1);

    let push = env.git(&work, &["push", "origin", "feature"]);
    assert_ne!(push.code, 0);
    assert!(push.stderr.contains("Feature step one"), "{}", push.stderr);
    assert!(!push.stderr.contains("Old halted work"), "{}", push.stderr);
    assert!(!push.stderr.contains("Feature step two"), "{}", push.stderr);
}

#[test]
fn force_push_over_history_this_clone_never_saw() {
    let env = TestEnv::new();
    let (work, bare) = remote_pair(&env);
    env.git(&work, &["push", "origin", "main"]).ok();
    let other = env.root().join("other");
    env.git(
        env.root(),
        &[
            "clone",
            "-q",
            bare.to_str().unwrap(),
            other.to_str().unwrap(),
        ],
    )
    .ok();
    env.triad(&other, &["init", "--no-trust"]).ok();
    // The first clone moves the remote on; the second never fetches it.
    let unseen = commit_file(&env, &work, "w.txt", "w", "Work the other clone never sees");
    env.git(&work, &["push", "origin", "main"]).ok();

    commit_file(&env, &other, "x.txt", "x", "Rewritten history");
    add_verdict(&other, "HEAD", "HALT", T1);
    assert_ne!(env.git(&other, &["cat-file", "-e", &unseen]).code, 0);
    let push = env.git(&other, &["push", "-f", "origin", "main"]);
    assert_ne!(push.code, 0);
    assert!(push.stderr.contains("Rewritten history"), "{}", push.stderr);
    assert!(!push.stderr.contains("fails closed"), "{}", push.stderr);

    env.triad(
        &other,
        &[
            "override",
            "HEAD",
            "--verdict",
            "FLAG",
            "--reason",
            "known issue, ticket 12",
        ],
    )
    .ok();
    env.git(&other, &["push", "-f", "origin", "main"]).ok();
    assert_eq!(env.rev_parse(&bare, "main"), env.rev_parse(&other, "HEAD"));
}

#[test]
fn deletes_pass_even_when_everything_blocks() {
    let env = TestEnv::new();
    let (work, bare) = remote_pair(&env);
    env.write_files(
        &work,
        &[(
            ".triad/config.toml",
            "[hooks.pre_push]\nblock_on = [\"HALT\", \"missing\"]\n",
        )],
    );
    env.git(&work, &["checkout", "-q", "-b", "doomed"]).ok();
    commit_file(&env, &work, "d.txt", "d", "Doomed");
    add_verdict(&work, "HEAD", "HALT", T1);
    env.git(&work, &["push", "--no-verify", "origin", "doomed"])
        .ok();
    env.git(&work, &["push", "origin", ":doomed"]).ok();
    assert_ne!(
        env.git(&bare, &["rev-parse", "--verify", "-q", "doomed"])
            .code,
        0
    );
}

#[test]
fn missing_in_the_policy_blocks_unreviewed_commits() {
    let env = TestEnv::new();
    let (work, _) = remote_pair(&env);
    env.write_files(
        &work,
        &[(
            ".triad/config.toml",
            "[hooks.pre_push]\nblock_on = [\"HALT\", \"missing\"]\n",
        )],
    );
    add_verdict(&work, "HEAD", "APPROVE", T1);
    commit_file(&env, &work, "n.txt", "n", "Never reviewed");
    let push = env.git(&work, &["push", "origin", "main"]);
    assert_ne!(push.code, 0);
    assert!(push.stderr.contains("Never reviewed"), "{}", push.stderr);
    assert!(push.stderr.contains("no verdict at all"), "{}", push.stderr);
    assert!(!push.stderr.contains("initial commit"), "{}", push.stderr);
    add_verdict(&work, "HEAD", "FLAG", T1);
    env.git(&work, &["push", "origin", "main"]).ok();
}

#[test]
fn the_gate_fails_closed_when_it_cannot_check() {
    let env = TestEnv::new();
    let (work, _) = remote_pair(&env);
    env.write_files(
        &work,
        &[(".triad/config.toml", "[hooks.pre_push\nblock_on = \n")],
    );
    let push = env.git(&work, &["push", "origin", "main"]);
    assert_ne!(push.code, 0);
    assert!(push.stderr.contains("fails closed"), "{}", push.stderr);
    assert!(push.stderr.contains("is not valid TOML"), "{}", push.stderr);
    assert!(
        push.stderr.contains("git push --no-verify"),
        "{}",
        push.stderr
    );

    // A policy value the schema rejects fails closed too.
    env.write_files(
        &work,
        &[(
            ".triad/config.toml",
            "[hooks.pre_push]\nblock_on = [\"HALT\", \"maybe\"]\n",
        )],
    );
    let push = env.git(&work, &["push", "origin", "main"]);
    assert_ne!(push.code, 0);
    assert!(
        push.stderr.contains("`maybe` is not one of"),
        "{}",
        push.stderr
    );

    // So does a notes ref that is not a notes commit.
    std::fs::remove_file(work.join(".triad/config.toml")).unwrap();
    let blob = env
        .git(&work, &["hash-object", "-w", "src/lib.rs"])
        .ok()
        .stdout
        .trim()
        .to_string();
    env.git(&work, &["update-ref", "refs/notes/triad", &blob])
        .ok();
    let push = env.git(&work, &["push", "origin", "main"]);
    assert_ne!(push.code, 0);
    assert!(push.stderr.contains("fails closed"), "{}", push.stderr);
    assert!(push.stderr.contains("refs/notes/triad"), "{}", push.stderr);
}

#[test]
fn pre_commit_framework_passes_the_range_in_the_environment() {
    let mut env = TestEnv::new();
    let (work, _) = remote_pair(&env);
    let base = env.rev_parse(&work, "HEAD");
    commit_file(&env, &work, "p.txt", "p", "Pushed through pre-commit");
    add_verdict(&work, "HEAD", "HALT", T1);
    let args = ["hook", "pre-push"];
    env.set("PRE_COMMIT_REMOTE_NAME", "origin")
        .set("PRE_COMMIT_REMOTE_URL", "unused")
        .set("PRE_COMMIT_FROM_REF", &base)
        .set("PRE_COMMIT_TO_REF", "HEAD");
    let r = env.triad_stdin(&work, &args, "");
    r.expect_code(1);
    assert!(
        r.stderr.contains("Pushed through pre-commit"),
        "{}",
        r.stderr
    );
    env.set("PRE_COMMIT_TO_REF", &base);
    env.triad_stdin(&work, &args, "").ok();
}

/// libgit2 (vendored, without its experimental SHA-256 support) cannot open SHA-256
/// repositories; the gate must still work there, through the git CLI.
#[test]
fn sha256_repositories_are_checked_through_the_git_cli() {
    let env = TestEnv::new();
    let bare = env.root().join("remote256.git");
    env.git(
        env.root(),
        &[
            "init",
            "-q",
            "--bare",
            "--object-format=sha256",
            bare.to_str().unwrap(),
        ],
    )
    .ok();
    let work = env.root().join("work256");
    env.git(
        env.root(),
        &[
            "init",
            "-q",
            "-b",
            "main",
            "--object-format=sha256",
            work.to_str().unwrap(),
        ],
    )
    .ok();
    env.git(&work, &["remote", "add", "origin", bare.to_str().unwrap()])
        .ok();
    commit_file(&env, &work, "a.txt", "a", "A sha256 commit");

    // What really happens with libgit2 here: every other command says why it cannot work.
    let init = env.triad(&work, &["init", "--no-trust"]);
    assert_ne!(init.code, 0);
    assert!(
        init.stderr.contains("sha256 object format"),
        "{}",
        init.stderr
    );

    // Install the shipped shim by hand, as pre-commit or a copy would.
    let hook = work.join(".git/hooks/pre-push");
    std::fs::write(&hook, include_str!("../../hooks/pre-push")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();

    let head = env.rev_parse(&work, "HEAD");
    assert_eq!(head.len(), 64);
    let line = format!(
        r#"{{"commit":"{head}","kind":"review","stage":"verify","arbiter_model":"model-b","ts":"{T1}","v":1,"verdict":"HALT","issues":[]}}"#
    );
    env.git(&work, &["notes", "--ref=triad", "add", "-m", &line])
        .ok();
    let push = env.git(&work, &["push", "origin", "main"]);
    assert_ne!(push.code, 0, "{}", push.stderr);
    assert!(push.stderr.contains("A sha256 commit"), "{}", push.stderr);
    assert!(
        push.stderr.contains("HALT at stage verify"),
        "{}",
        push.stderr
    );

    // The zero ids of a SHA-256 push are 64 characters: a delete must pass.
    let zero = "0".repeat(64);
    let input = format!("(delete) {zero} refs/heads/gone {head}\n");
    env.triad_stdin(&work, &["hook", "pre-push", "origin", "url"], &input)
        .ok();
    let input = format!("refs/heads/main {head} refs/heads/main {zero}\n");
    env.triad_stdin(&work, &["hook", "pre-push", "origin", "url"], &input)
        .expect_code(1);

    let over = format!(
        r#"{{"commit":"{head}","kind":"override","overrides":"HALT","reason":"ok","ts":"2026-01-02T00:00:00.000Z","v":1,"verdict":"APPROVE","who":"T <t@e>"}}"#
    );
    env.git(&work, &["notes", "--ref=triad", "append", "-m", &over])
        .ok();
    env.git(&work, &["push", "origin", "main"]).ok();
    assert_eq!(env.rev_parse(&bare, "main"), head);
}
