//! `git triad init`: idempotent, honours core.hooksPath, shares existing hooks, uninstalls exactly.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::{
    add_origin, assert_never_says, assert_says, bare_repo, commit_with_verdict, git_stdout,
    refused_push,
};
use crate::common::TestEnv;

fn local_config(env: &TestEnv, dir: &Path) -> String {
    git_stdout(env, dir, &["config", "--local", "--list"])
}

fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    for sub in [
        ".triad/config.toml",
        ".triad/tasks/.gitkeep",
        "githooks/pre-push",
        "githooks/post-rewrite",
    ] {
        files.push((
            sub.to_string(),
            std::fs::read(dir.join(sub)).unwrap_or_default(),
        ));
    }
    files
}

const TEAM_HOOK: &str = "#!/bin/sh\n# the team's own pre-push hook\ncat > \"$(git rev-parse --git-dir)/stdin-seen\"\necho team hook ran >&2\n";

#[test]
fn init_is_idempotent_shares_hooks_and_uninstalls_exactly() {
    let env = TestEnv::new();
    let bare = bare_repo(&env, "remote.git", &[]);
    let work = env.repo("work", &[("a.txt", "a\n")]);
    add_origin(&env, &work, &bare);
    for (key, value) in [
        ("core.hooksPath", "githooks"),
        ("notes.rewriteRef", "refs/notes/commits"),
        ("notes.rewriteMode", "concatenate"),
    ] {
        env.git(&work, &["config", key, value]).ok();
    }
    env.write_files(&work, &[("githooks/pre-push", TEAM_HOOK)]);
    let hook = work.join("githooks/pre-push");
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    let config_before = local_config(&env, &work);

    let init = env.triad(&work, &["init", "--no-trust"]);
    assert_says(
        &init.ok().stdout,
        &[
            "Created .triad/config.toml",
            "Created .triad/tasks/",
            "Added `notes.rewriteRef = refs/notes/triad`",
            "Set `notes.rewriteMode = cat_sort_uniq` in the local git config (it was `concatenate`).",
            "Set `notes.triad.mergeStrategy = cat_sort_uniq`",
            "Added `notes.displayRef = refs/notes/triad-verdicts`",
            "Created refs/notes/triad-verdicts, one line per verdict for `git log`",
            "Added `remote.origin.fetch = +refs/notes/triad*:refs/notes/remotes/origin/fetched/triad*`",
            "Added git-triad to your existing pre-push hook",
            "Installed the post-rewrite hook",
            "Left this clone untrusted, as asked",
        ],
    );
    assert!(
        !work.join(".git/hooks/pre-push").exists(),
        "core.hooksPath is honoured"
    );
    let text = std::fs::read_to_string(&hook).unwrap();
    assert!(
        text.starts_with("#!/bin/sh\n# >>> git-triad >>>\n"),
        "{text}"
    );
    assert!(text.ends_with(&TEAM_HOOK["#!/bin/sh\n".len()..]), "{text}");
    assert!(
        !text.contains("exec git triad"),
        "no exec in a shared hook: {text}"
    );
    let post = work.join("githooks/post-rewrite");
    assert_eq!(
        std::fs::read_to_string(&post).unwrap(),
        include_str!("../../hooks/post-rewrite")
    );
    assert_eq!(
        std::fs::metadata(&post).unwrap().permissions().mode() & 0o777,
        0o755
    );
    let rewrite_refs = git_stdout(&env, &work, &["config", "--get-all", "notes.rewriteRef"]);
    assert_eq!(rewrite_refs, "refs/notes/commits\nrefs/notes/triad\n");
    let fetch = git_stdout(&env, &work, &["config", "--get-all", "remote.origin.fetch"]);
    assert_eq!(
        fetch,
        "+refs/heads/*:refs/remotes/origin/*\n+refs/notes/triad*:refs/notes/remotes/origin/fetched/triad*\n"
    );
    assert_never_says(
        &local_config(&env, &work),
        &["remote.origin.push", "triad.trusted"],
    );

    // Twice changes nothing.
    let files = snapshot(&work);
    let config = local_config(&env, &work);
    let again = env.triad(&work, &["init", "--no-trust"]);
    again.ok();
    assert!(
        again
            .stdout
            .starts_with("git triad is already set up in this repository; nothing changed.\n"),
        "{}",
        again.stdout
    );
    assert_never_says(&again.stdout, &["Added", "Created"]);
    assert_eq!(snapshot(&work), files);
    assert_eq!(local_config(&env, &work), config);

    // The team's hook still runs after ours and still reads git's stdin.
    let head = env.rev_parse(&work, "HEAD");
    let push = env.git(&work, &["push", "origin", "main"]);
    assert_says(&push.ok().stderr, &["team hook ran"]);
    let seen = std::fs::read_to_string(work.join(".git/stdin-seen")).unwrap();
    assert_eq!(
        seen,
        format!(
            "refs/heads/main {head} refs/heads/main {}\n",
            "0".repeat(40)
        )
    );
    // A HALT stops the push before the team's hook runs.
    commit_with_verdict(&env, &work, "b.txt", "b", "Halted", "HALT");
    let push = refused_push(&env, &work, &["push", "origin", "main"]);
    assert_never_says(&push.stderr, &["team hook ran"]);

    let un = env.triad(&work, &["init", "--uninstall"]);
    assert_says(
        &un.ok().stdout,
        &[
            "Removed git-triad from the pre-push hook",
            "Deleted the post-rewrite hook",
            "Restored `notes.rewriteMode = concatenate`",
            "Left .triad/ alone",
        ],
    );
    assert_eq!(
        std::fs::read_to_string(&hook).unwrap(),
        TEAM_HOOK,
        "byte for byte"
    );
    assert!(!post.exists());
    assert_eq!(local_config(&env, &work), config_before);
    assert!(work.join(".triad/config.toml").exists());
    let twice = env.triad(&work, &["init", "--uninstall"]);
    assert_says(&twice.ok().stdout, &["nothing changed"]);
}

#[test]
fn trust_is_set_on_request_and_removed_on_uninstall() {
    let env = TestEnv::new();
    let work = env.repo("work", &[("a.txt", "a\n")]);
    env.write_files(
        &work,
        &[(".triad/config.toml", "[arbiter]\nmode = \"full\"\n")],
    );
    let init = env.triad(&work, &["init", "--trust"]);
    assert_says(&init.ok().stdout, &["Marked this clone trusted"]);
    assert_eq!(
        std::fs::read_to_string(work.join(".triad/config.toml")).unwrap(),
        "[arbiter]\nmode = \"full\"\n",
        "an existing config is never overwritten"
    );
    assert_eq!(
        env.git(&work, &["config", "triad.trusted"]).ok().stdout,
        "true\n"
    );
    assert!(work.join(".git/hooks/pre-push").exists());
    // Without a terminal and without a flag, init does not ask and does not trust.
    let other = env.repo("other", &[("a.txt", "a\n")]);
    let quiet = env.triad(&other, &["init"]);
    assert_says(
        &quiet.ok().stdout,
        &["no terminal to ask on", "git config triad.trusted true"],
    );

    env.triad(&work, &["init", "--uninstall"]).ok();
    assert_ne!(env.git(&work, &["config", "triad.trusted"]).code, 0);
    assert!(!work.join(".git/hooks/pre-push").exists());
}

#[test]
fn hooks_in_other_languages_are_left_alone() {
    let env = TestEnv::new();
    let work = env.repo("work", &[("a.txt", "a\n")]);
    let py = "#!/usr/bin/env python3\nprint('hi')\n";
    env.write_files(&work, &[(".git/hooks/pre-push", py)]);
    let init = env.triad(&work, &["init", "--no-trust"]);
    init.expect_code(1);
    assert_says(
        &init.stderr,
        &["is not a shell script", "git triad hook pre-push"],
    );
    assert_eq!(
        std::fs::read_to_string(work.join(".git/hooks/pre-push")).unwrap(),
        py
    );
    assert!(work.join(".git/hooks/post-rewrite").exists());
}

/// Right after `git triad init`, before any verdict exists, `git log` (which reads the notes
/// ref through `notes.displayRef`) and `git log --notes=triad` print no warning; uninstall
/// removes the empty notes ref again.
#[test]
fn git_log_is_silent_right_after_init() {
    let env = TestEnv::new();
    let dir = env.repo("proj", &[("a.txt", "a\n")]);
    env.triad(&dir, &["init", "--no-trust"]).ok();
    for args in [&["log"][..], &["log", "--notes=triad"], &["show", "HEAD"]] {
        let r = env.git(&dir, args);
        r.ok();
        assert_eq!(r.stderr, "", "git {args:?} warned");
    }
    let listed = env.git(&dir, &["notes", "--ref", "triad", "list"]);
    assert_eq!((listed.stdout.as_str(), listed.stderr.as_str()), ("", ""));
    // The first verdict lands on top of it: tools read the JSON, `git log` shows one line.
    super::add_verdict(&dir, "HEAD", "FLAG", super::T1);
    let shown = env.git(&dir, &["log", "-1", "--notes=triad"]);
    assert!(
        shown.ok().stdout.contains("\"verdict\":\"FLAG\""),
        "{}",
        shown.stdout
    );
    let log = env.git(&dir, &["log", "-1"]);
    assert_says(
        &log.ok().stdout,
        &[
            "Notes (triad-verdicts):",
            "FLAG     stage implement · arbiter model-b · 2 issues · top: critical src/lib.rs:3",
        ],
    );
    assert_never_says(&log.stdout, &["\"verdict\""]);
    // An empty notes ref is taken out again by uninstall; one with verdicts never is.
    let other = env.repo("other", &[("a.txt", "a\n")]);
    env.triad(&other, &["init", "--no-trust"]).ok();
    let gone = env.triad(&other, &["init", "--uninstall"]);
    assert!(
        gone.ok().stdout.contains("Removed refs/notes/triad"),
        "{}",
        gone.stdout
    );
    assert_eq!(env.git(&other, &["log"]).ok().stderr, "");
    env.triad(&dir, &["init", "--uninstall"]).ok();
    assert!(!env
        .git(&dir, &["notes", "--ref", "triad", "list"])
        .ok()
        .stdout
        .is_empty());
}

/// An earlier `git triad init` pointed `notes.displayRef` at the JSON ref; running init again
/// replaces it with the display ref, builds that from the verdicts already there, and
/// uninstall removes both.
#[test]
fn init_again_replaces_the_json_display_ref_of_an_earlier_version() {
    let env = TestEnv::new();
    let dir = env.repo("proj", &[("a.txt", "a\n")]);
    env.git(
        &dir,
        &["config", "--add", "notes.displayRef", "refs/notes/triad"],
    )
    .ok();
    std::fs::create_dir_all(dir.join(".git/triad")).unwrap();
    std::fs::write(
        dir.join(".git/triad/init-config.json"),
        r#"[{"op":"added","key":"notes.displayRef","value":"refs/notes/triad"}]"#,
    )
    .unwrap();
    super::add_verdict(&dir, "HEAD", "HALT", super::T1);
    let init = env.triad(&dir, &["init", "--no-trust"]);
    assert_says(
        &init.ok().stdout,
        &[
            "Removed `notes.displayRef = refs/notes/triad` from the local git config.",
            "Added `notes.displayRef = refs/notes/triad-verdicts`",
            "Created refs/notes/triad-verdicts, one line per verdict for `git log` (1 commit(s) so far)",
        ],
    );
    assert_eq!(
        git_stdout(&env, &dir, &["config", "--get-all", "notes.displayRef"]),
        "refs/notes/triad-verdicts\n"
    );
    let log = env.git(&dir, &["log", "-1"]);
    assert_says(&log.ok().stdout, &["HALT     stage implement"]);
    let un = env.triad(&dir, &["init", "--uninstall"]);
    assert_says(&un.ok().stdout, &["Removed refs/notes/triad-verdicts"]);
    assert_ne!(
        env.git(
            &dir,
            &["rev-parse", "--verify", "-q", "refs/notes/triad-verdicts"]
        )
        .code,
        0
    );
    assert_eq!(
        env.git(&dir, &["config", "--get-all", "notes.displayRef"])
            .code,
        1
    );
}
