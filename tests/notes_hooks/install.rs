//! `git triad init`: idempotent, honours core.hooksPath, shares existing hooks, uninstalls exactly.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::{add_verdict, commit_file};
use crate::common::TestEnv;

fn local_config(env: &TestEnv, dir: &Path) -> String {
    env.git(dir, &["config", "--local", "--list"])
        .ok()
        .stdout
        .clone()
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
    let bare = env.root().join("remote.git");
    env.git(
        env.root(),
        &["init", "-q", "--bare", bare.to_str().unwrap()],
    )
    .ok();
    let work = env.repo("work", &[("a.txt", "a\n")]);
    env.git(&work, &["remote", "add", "origin", bare.to_str().unwrap()])
        .ok();
    env.git(&work, &["config", "core.hooksPath", "githooks"])
        .ok();
    env.git(&work, &["config", "notes.rewriteRef", "refs/notes/commits"])
        .ok();
    env.git(&work, &["config", "notes.rewriteMode", "concatenate"])
        .ok();
    env.write_files(&work, &[("githooks/pre-push", TEAM_HOOK)]);
    let hook = work.join("githooks/pre-push");
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    let config_before = local_config(&env, &work);

    let init = env.triad(&work, &["init", "--no-trust"]);
    init.ok();
    let said = &init.stdout;
    for sentence in [
        "Created .triad/config.toml",
        "Created .triad/tasks/",
        "Added `notes.rewriteRef = refs/notes/triad`",
        "Set `notes.rewriteMode = cat_sort_uniq` in the local git config (it was `concatenate`).",
        "Set `notes.triad.mergeStrategy = cat_sort_uniq`",
        "Added `notes.displayRef = refs/notes/triad`",
        "Added `remote.origin.fetch = refs/notes/triad:refs/notes/remotes/origin/triad`",
        "Added git-triad to your existing pre-push hook",
        "Installed the post-rewrite hook",
        "Left this clone untrusted, as asked",
    ] {
        assert!(said.contains(sentence), "missing {sentence:?} in:\n{said}");
    }
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
    let rewrite_refs = env
        .git(&work, &["config", "--get-all", "notes.rewriteRef"])
        .ok()
        .stdout
        .clone();
    assert_eq!(rewrite_refs, "refs/notes/commits\nrefs/notes/triad\n");
    let fetch = env
        .git(&work, &["config", "--get-all", "remote.origin.fetch"])
        .ok()
        .stdout
        .clone();
    assert_eq!(
        fetch,
        "+refs/heads/*:refs/remotes/origin/*\nrefs/notes/triad:refs/notes/remotes/origin/triad\n"
    );
    assert!(!local_config(&env, &work).contains("remote.origin.push"));
    assert!(!local_config(&env, &work).contains("triad.trusted"));

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
    assert!(
        !again.stdout.contains("Added") && !again.stdout.contains("Created"),
        "{}",
        again.stdout
    );
    assert_eq!(snapshot(&work), files);
    assert_eq!(local_config(&env, &work), config);

    // The team's hook still runs after ours and still reads git's stdin.
    let head = env.rev_parse(&work, "HEAD");
    let push = env.git(&work, &["push", "origin", "main"]);
    push.ok();
    assert!(push.stderr.contains("team hook ran"), "{}", push.stderr);
    let seen = std::fs::read_to_string(work.join(".git/stdin-seen")).unwrap();
    assert_eq!(
        seen,
        format!(
            "refs/heads/main {head} refs/heads/main {}\n",
            "0".repeat(40)
        )
    );
    // A HALT stops the push before the team's hook runs.
    commit_file(&env, &work, "b.txt", "b", "Halted");
    add_verdict(&work, "HEAD", "HALT", "2026-01-01T00:00:00.000Z");
    let push = env.git(&work, &["push", "origin", "main"]);
    assert_ne!(push.code, 0);
    assert!(!push.stderr.contains("team hook ran"), "{}", push.stderr);

    let un = env.triad(&work, &["init", "--uninstall"]);
    un.ok();
    assert!(
        un.stdout
            .contains("Removed git-triad from the pre-push hook"),
        "{}",
        un.stdout
    );
    assert!(
        un.stdout.contains("Deleted the post-rewrite hook"),
        "{}",
        un.stdout
    );
    assert!(
        un.stdout
            .contains("Restored `notes.rewriteMode = concatenate`"),
        "{}",
        un.stdout
    );
    assert!(un.stdout.contains("Left .triad/ alone"), "{}", un.stdout);
    assert_eq!(
        std::fs::read_to_string(&hook).unwrap(),
        TEAM_HOOK,
        "byte for byte"
    );
    assert!(!post.exists());
    assert_eq!(local_config(&env, &work), config_before);
    assert!(work.join(".triad/config.toml").exists());
    let twice = env.triad(&work, &["init", "--uninstall"]);
    twice.ok();
    assert!(twice.stdout.contains("nothing changed"), "{}", twice.stdout);
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
    init.ok();
    assert!(
        init.stdout.contains("Marked this clone trusted"),
        "{}",
        init.stdout
    );
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
    quiet.ok();
    assert!(
        quiet.stdout.contains("no terminal to ask on"),
        "{}",
        quiet.stdout
    );
    assert!(
        quiet.stdout.contains("git config triad.trusted true"),
        "{}",
        quiet.stdout
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
    assert!(
        init.stderr.contains("is not a shell script"),
        "{}",
        init.stderr
    );
    assert!(
        init.stderr.contains("git triad hook pre-push"),
        "{}",
        init.stderr
    );
    assert_eq!(
        std::fs::read_to_string(work.join(".git/hooks/pre-push")).unwrap(),
        py
    );
    assert!(work.join(".git/hooks/post-rewrite").exists());
}
