//! The pre-push gate, through real `git push` to a local bare remote.

use std::path::Path;

use super::{
    add_origin, add_verdict, assert_never_says, assert_says, bare_repo, clone_of, commit_file,
    commit_with_verdict, override_head, refused_push, remote_pair, T1,
};
use crate::common::TestEnv;

const PUSH_MAIN: &[&str] = &["push", "origin", "main"];

/// A pre-push policy that blocks unreviewed commits as well as HALTs.
const BLOCK_MISSING: &str = "[hooks.pre_push]\nblock_on = [\"HALT\", \"missing\"]\n";

/// Writes `toml` as the repository config of `work`, where the pre-push policy lives.
fn set_repo_config(env: &TestEnv, work: &Path, toml: &str) {
    env.write_files(work, &[(".triad/config.toml", toml)]);
}

#[test]
fn halt_blocks_the_push_until_overridden() {
    let env = TestEnv::new();
    let (work, bare) = remote_pair(&env);
    let halted = commit_with_verdict(&env, &work, "src/a.rs", "a\n", "Add the parser", "HALT");

    let push = refused_push(&env, &work, PUSH_MAIN);
    assert_says(
        &push.stderr,
        &[
            &halted[..7],
            "Add the parser",
            "HALT at stage implement, arbiter model-b",
            "git triad override",
            "git push --no-verify",
        ],
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
        env.git(&bare, &["rev-parse", "--verify", "-q", "main"])
            .code
            != 0
    );

    override_head(&env, &work, "APPROVE", " ").expect_code(2);
    let o = override_head(&env, &work, "APPROVE", "checked by hand");
    assert_says(&o.ok().stdout, &["HALT is now APPROVE"]);
    env.git(&work, PUSH_MAIN).ok();
    assert_eq!(env.rev_parse(&bare, "main"), halted);

    let show = env.triad(&work, &["show"]);
    assert_says(
        &show.ok().stdout,
        &[
            "override  APPROVE  (overrides HALT) by Test Committer <committer@example.com>",
            "reason: checked by hand",
            "- critical correctness src/lib.rs:3-5 (function parse) — index can run past the end",
            ": APPROVE (from the override of",
        ],
    );
}

#[test]
fn override_needs_a_verdict_to_overrule() {
    let env = TestEnv::new();
    let (work, _) = remote_pair(&env);
    let r = override_head(&env, &work, "APPROVE", "why not");
    r.expect_code(2);
    assert_says(
        &r.stderr,
        &["has no verdict to override", "hint: `git triad show"],
    );
}

#[test]
fn several_refs_at_once_are_all_checked() {
    let env = TestEnv::new();
    let (work, _) = remote_pair(&env);
    for b in ["a", "b", "c"] {
        env.git(&work, &["checkout", "-q", "-b", b, "main"]).ok();
        commit_with_verdict(
            &env,
            &work,
            &format!("{b}.txt"),
            b,
            &format!("Work on {b}"),
            if b == "c" { "HALT" } else { "APPROVE" },
        );
    }
    let push = refused_push(&env, &work, &["push", "origin", "a", "b", "c"]);
    assert_says(&push.stderr, &["Work on c", "1 commit has a verdict"]);
    assert_never_says(&push.stderr, &["Work on a"]);
}

#[test]
fn new_branches_check_only_what_the_remote_lacks() {
    let env = TestEnv::new();
    let (work, _) = remote_pair(&env);
    // A halted commit that is already on the remote is not this push's business.
    commit_with_verdict(&env, &work, "old.txt", "old", "Old halted work", "HALT");
    env.git(&work, &["push", "--no-verify", "origin", "main"])
        .ok();

    env.git(&work, &["checkout", "-q", "-b", "feature"]).ok();
    commit_with_verdict(&env, &work, "f1.txt", "1", "Feature step one", "HALT");
    commit_with_verdict(&env, &work, "f2.txt", "2", "Feature step two", "APPROVE");

    let push = refused_push(&env, &work, &["push", "origin", "feature"]);
    assert_says(&push.stderr, &["Feature step one"]);
    assert_never_says(&push.stderr, &["Old halted work", "Feature step two"]);
}

#[test]
fn force_push_over_history_this_clone_never_saw() {
    let env = TestEnv::new();
    let (work, bare) = remote_pair(&env);
    env.git(&work, PUSH_MAIN).ok();
    let other = clone_of(&env, &bare, "other");
    // The first clone moves the remote on; the second never fetches it.
    let unseen = commit_file(&env, &work, "w.txt", "w", "Work the other clone never sees");
    env.git(&work, PUSH_MAIN).ok();

    commit_with_verdict(&env, &other, "x.txt", "x", "Rewritten history", "HALT");
    assert_ne!(env.git(&other, &["cat-file", "-e", &unseen]).code, 0);
    let force = ["push", "-f", "origin", "main"];
    let push = refused_push(&env, &other, &force);
    assert_says(&push.stderr, &["Rewritten history"]);
    assert_never_says(&push.stderr, &["fails closed"]);

    override_head(&env, &other, "FLAG", "known issue, ticket 12").ok();
    env.git(&other, &force).ok();
    assert_eq!(env.rev_parse(&bare, "main"), env.rev_parse(&other, "HEAD"));
}

#[test]
fn deletes_pass_even_when_everything_blocks() {
    let env = TestEnv::new();
    let (work, bare) = remote_pair(&env);
    set_repo_config(&env, &work, BLOCK_MISSING);
    env.git(&work, &["checkout", "-q", "-b", "doomed"]).ok();
    commit_with_verdict(&env, &work, "d.txt", "d", "Doomed", "HALT");
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
    set_repo_config(&env, &work, BLOCK_MISSING);
    add_verdict(&work, "HEAD", "APPROVE", T1);
    commit_file(&env, &work, "n.txt", "n", "Never reviewed");
    let push = refused_push(&env, &work, PUSH_MAIN);
    assert_says(
        &push.stderr,
        &[
            "Never reviewed",
            "no verdict from this clone or a trusted remote",
        ],
    );
    assert_never_says(&push.stderr, &["initial commit"]);
    add_verdict(&work, "HEAD", "FLAG", T1);
    env.git(&work, PUSH_MAIN).ok();
}

#[test]
fn the_gate_fails_closed_when_it_cannot_check() {
    let env = TestEnv::new();
    let (work, _) = remote_pair(&env);
    set_repo_config(&env, &work, "[hooks.pre_push\nblock_on = \n");
    let push = refused_push(&env, &work, PUSH_MAIN);
    assert_says(
        &push.stderr,
        &["fails closed", "is not valid TOML", "git push --no-verify"],
    );

    // A policy value the schema rejects fails closed too.
    set_repo_config(
        &env,
        &work,
        "[hooks.pre_push]\nblock_on = [\"HALT\", \"maybe\"]\n",
    );
    let push = refused_push(&env, &work, PUSH_MAIN);
    assert_says(&push.stderr, &["`maybe` is not one of"]);

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
    let push = refused_push(&env, &work, PUSH_MAIN);
    assert_says(&push.stderr, &["fails closed", "refs/notes/triad"]);
}

#[test]
fn pre_commit_framework_passes_the_range_in_the_environment() {
    let mut env = TestEnv::new();
    let (work, _) = remote_pair(&env);
    let base = env.rev_parse(&work, "HEAD");
    commit_with_verdict(
        &env,
        &work,
        "p.txt",
        "p",
        "Pushed through pre-commit",
        "HALT",
    );
    let args = ["hook", "pre-push"];
    env.set("PRE_COMMIT_REMOTE_NAME", "origin")
        .set("PRE_COMMIT_REMOTE_URL", "unused")
        .set("PRE_COMMIT_FROM_REF", &base)
        .set("PRE_COMMIT_TO_REF", "HEAD");
    let r = env.triad_stdin(&work, &args, "");
    r.expect_code(1);
    assert_says(&r.stderr, &["Pushed through pre-commit"]);
    env.set("PRE_COMMIT_TO_REF", &base);
    env.triad_stdin(&work, &args, "").ok();
}

/// libgit2 opens SHA-1 and SHA-256 repositories but not reftable ones; the gate must still
/// work there, through the git CLI. Both widths of object id go that way too.
#[test]
fn repositories_libgit2_cannot_open_are_checked_through_the_git_cli() {
    for format in ["sha1", "sha256"] {
        gate_through_the_git_cli(format);
    }
}

/// The gate through the git CLI in a reftable repository of object format `format`.
fn gate_through_the_git_cli(format: &str) {
    let env = TestEnv::new();
    let object_format = format!("--object-format={format}");
    let bare = bare_repo(&env, "remote.git", &[&object_format]);
    let work = env.root().join("work");
    env.git(
        env.root(),
        &[
            "init",
            "-q",
            "-b",
            "main",
            &object_format,
            "--ref-format=reftable",
            work.to_str().unwrap(),
        ],
    )
    .ok();
    add_origin(&env, &work, &bare);
    commit_file(&env, &work, "a.txt", "a", &format!("A {format} commit"));

    // What really happens with libgit2 here: every other command says why it cannot work.
    let init = env.triad(&work, &["init", "--no-trust"]);
    assert_ne!(init.code, 0);
    assert_says(
        &init.stderr,
        &[
            "cannot open the repository",
            "refstorage",
            "pre-push gate still works",
        ],
    );

    // Install the shipped shim by hand, as pre-commit or a copy would.
    let hook = work.join(".git/hooks/pre-push");
    std::fs::write(&hook, include_str!("../../hooks/pre-push")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();

    let head = env.rev_parse(&work, "HEAD");
    let width = if format == "sha256" { 64 } else { 40 };
    assert_eq!(head.len(), width);
    let line = format!(
        r#"{{"commit":"{head}","kind":"review","stage":"verify","arbiter_model":"model-b","ts":"{T1}","v":1,"verdict":"HALT","issues":[]}}"#
    );
    env.git(&work, &["notes", "--ref=triad", "add", "-m", &line])
        .ok();
    let push = refused_push(&env, &work, PUSH_MAIN);
    assert_says(
        &push.stderr,
        &[&format!("A {format} commit"), "HALT at stage verify"],
    );

    // The zero ids are as wide as the object ids: a delete must pass.
    let zero = "0".repeat(width);
    let input = format!("(delete) {zero} refs/heads/gone {head}\n");
    env.triad_stdin(&work, &["hook", "pre-push", "origin", "url"], &input)
        .ok();
    let input = format!("refs/heads/main {head} refs/heads/main {zero}\n");
    env.triad_stdin(&work, &["hook", "pre-push", "origin", "url"], &input)
        .expect_code(1);

    // An override that names no line (as older versions wrote them) is later in time, and
    // that alone never clears a HALT.
    let unnamed = format!(
        r#"{{"commit":"{head}","kind":"override","overrides":"HALT","reason":"ok","ts":"2026-01-02T00:00:00.000Z","v":1,"verdict":"APPROVE","who":"T <t@e>"}}"#
    );
    env.git(&work, &["notes", "--ref=triad", "append", "-m", &unnamed])
        .ok();
    let push = refused_push(&env, &work, PUSH_MAIN);
    assert_says(&push.stderr, &["does not count", "names no lines"]);
    // One naming the HALT by its id does.
    let id = git_triad::notes::read_note(&line)[0]
        .id()
        .unwrap()
        .to_string();
    let named = unnamed.replace(r#""commit""#, &format!(r#""answers":["{id}"],"commit""#));
    env.git(&work, &["notes", "--ref=triad", "append", "-m", &named])
        .ok();
    env.git(&work, PUSH_MAIN).ok();
    assert_eq!(env.rev_parse(&bare, "main"), head);
}

/// Writes `text` as the whole triad note on HEAD of `work`, byte for byte, with git itself:
/// what a hand edit (or a hostile clone) may leave there.
fn hand_note(env: &TestEnv, work: &Path, text: &str) {
    let file = env.root().join("note.txt");
    std::fs::write(&file, text).unwrap();
    env.git(
        work,
        &[
            "notes",
            "--ref=triad",
            "add",
            "-f",
            "-F",
            file.to_str().unwrap(),
            "HEAD",
        ],
    )
    .ok();
}

#[test]
fn hand_written_verdicts_are_read_in_any_case_with_a_bom_or_spread_over_lines() {
    let env = TestEnv::new();
    let (work, bare) = remote_pair(&env);
    let cases = [
        format!(r#"{{"v":1,"kind":"review","ts":"{T1}","verdict":"halt"}}"#),
        format!("\u{feff}{{\"v\":1,\"kind\":\"review\",\"ts\":\"{T1}\",\"verdict\":\"Halt\"}}\n"),
        format!("{{\n  \"v\": 1,\n  \"kind\": \"review\",\n  \"ts\": \"{T1}\",\n  \"verdict\": \"HALT\"\n}}\n"),
    ];
    for (i, note) in cases.iter().enumerate() {
        commit_file(
            &env,
            &work,
            &format!("src/h{i}.rs"),
            "x\n",
            &format!("Hand note {i}"),
        );
        hand_note(&env, &work, note);
        let show = env.triad(&work, &["show"]);
        assert_says(
            &show.ok().stdout,
            &[&format!("{T1}  review  HALT"), ": HALT (from the review"],
        );
        let push = refused_push(&env, &work, PUSH_MAIN);
        assert_says(
            &push.stderr,
            &["push blocked", &format!("Hand note {i}"), "HALT"],
        );
        assert!(
            env.git(&bare, &["rev-parse", "--verify", "-q", "main"])
                .code
                != 0
        );
        // The commit is mended for the next case: approved by an override on the record.
        override_head(&env, &work, "APPROVE", "checked by hand").ok();
    }
    env.git(&work, PUSH_MAIN).ok();
}

#[test]
fn a_note_line_the_gate_cannot_read_blocks_the_push_and_says_how_to_go_on() {
    let env = TestEnv::new();
    let (work, bare) = remote_pair(&env);
    let head = commit_file(&env, &work, "src/a.rs", "a\n", "Add a");
    let approve = format!(r#"{{"v":1,"kind":"review","ts":"{T1}","verdict":"APPROVE"}}"#);
    hand_note(
        &env,
        &work,
        &format!("{approve}\nverdict: fine, honestly\n"),
    );

    let push = refused_push(&env, &work, PUSH_MAIN);
    assert_says(
        &push.stderr,
        &[
            &head[..7],
            "not a JSON record",
            "verdict: fine, honestly",
            "git notes --ref=triad edit",
            "git push --no-verify",
        ],
    );
    assert_never_says(&push.stderr, &["git triad override"]);
    assert!(
        env.git(&bare, &["rev-parse", "--verify", "-q", "main"])
            .code
            != 0
    );
    let show = env.triad(&work, &["show"]);
    assert_says(
        &show.ok().stdout,
        &[
            "unreadable  verdict: fine, honestly",
            "pre-push gate blocks",
            "APPROVE",
        ],
    );

    // The documented way past it once: git's own --no-verify; mending the note lets the
    // push through on its own.
    env.git(&work, &["push", "--no-verify", "origin", "main"])
        .ok();
    let next = commit_file(&env, &work, "src/b.rs", "b\n", "Add b");
    hand_note(&env, &work, "{\"v\":1,\"kind\":\"review\",\n");
    refused_push(&env, &work, PUSH_MAIN);
    hand_note(&env, &work, &format!("{approve}\n"));
    env.git(&work, PUSH_MAIN).ok();
    assert_eq!(env.rev_parse(&bare, "main"), next);
}

/// The gate prints the verdict it blocks on, which quotes a model: as text, never obeyed.
#[test]
fn a_blocked_push_shows_the_verdicts_model_text_escaped() {
    let env = TestEnv::new();
    let (work, _bare) = remote_pair(&env);
    commit_file(&env, &work, "src/a.rs", "a\n", "Add the parser");
    let repo = git2::Repository::open(&work).unwrap();
    let oid = repo.head().unwrap().peel_to_commit().unwrap().id();
    let hostile = "wrong\u{1b}]0;pwned\u{7} \u{202e}txt.exe\u{1b}[2J";
    let mut line = super::review(&oid.to_string(), None, "HALT", T1);
    line["reasoning"] = hostile.into();
    line["issues"][1]["description"] = hostile.into();
    git_triad::notes::append(&repo, oid, &[line]).unwrap();
    let push = refused_push(&env, &work, PUSH_MAIN);
    let raw = push
        .stderr
        .chars()
        .find(|c| (c.is_control() && *c != '\n' && *c != '\t') || *c == '\u{202e}');
    assert_eq!(raw, None, "{}", push.stderr);
    assert_says(&push.stderr, &["wrong^[]0;pwned^G <U+202E>txt.exe^[[2J"]);
}

/// Lines of shapes this git triad does not read that mention HALT: each blocks the push of
/// its commit, naming the commit and the line, until the note is mended.
#[test]
fn unknown_shapes_and_a_repeated_key_that_mention_halt_block_the_push() {
    let env = TestEnv::new();
    let (work, bare) = remote_pair(&env);
    let shapes = [
        (
            r#"{"v":1,"kind":"Review","verdict":"HALT"}"#,
            "its kind \"Review\"",
        ),
        (
            r#"{"v":"1","kind":"review","verdict":"HALT"}"#,
            "its \"v\" is \"1\"",
        ),
        (
            r#"{"v":1.0,"kind":"review","verdict":"HALT"}"#,
            "its \"v\" is 1.0",
        ),
        (
            r#"{"v":2,"kind":"review","verdict":"HALT"}"#,
            "its \"v\" is 2",
        ),
        (r#"{"kind":"review","verdict":"HALT"}"#, "it has no \"v\""),
        (
            r#"{"v":1,"kind":"review","verdict":"HALT","verdict":"APPROVE"}"#,
            "the key \"verdict\" is written twice",
        ),
    ];
    let approve = format!(r#"{{"v":1,"kind":"review","ts":"{T1}","verdict":"APPROVE"}}"#);
    for (i, (line, problem)) in shapes.iter().enumerate() {
        let head = commit_file(
            &env,
            &work,
            &format!("src/s{i}.rs"),
            "x\n",
            &format!("Shape {i}"),
        );
        hand_note(&env, &work, &format!("{approve}\n{line}\n"));
        let push = refused_push(&env, &work, PUSH_MAIN);
        assert_says(
            &push.stderr,
            &[
                &head[..7],
                &format!("Shape {i}"),
                problem,
                "that mentions",
                line,
            ],
        );
        assert!(
            env.git(&bare, &["rev-parse", "--verify", "-q", "main"])
                .code
                != 0
        );
        let show = env.triad(&work, &["show"]);
        assert_says(&show.ok().stdout, &["unreadable", problem]);
        // An override answers verdict lines, never a line that cannot be read.
        override_head(&env, &work, "FLAG", "looked at it").ok();
        refused_push(&env, &work, PUSH_MAIN);
        hand_note(&env, &work, &format!("{approve}\n"));
    }
    env.git(&work, PUSH_MAIN).ok();
}
