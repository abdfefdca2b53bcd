//! Verdicts across history rewrites (amend, rebase, squash merge, cherry-pick) and clones.

use git_triad::notes::{self, REATTACHED_FROM};

use super::{add_verdict, commit_file, open, path_with_triad, remote_pair};
use crate::common::TestEnv;

const T1: &str = "2026-01-01T00:00:00.000Z";

fn records(dir: &std::path::Path, rev: &str) -> Vec<serde_json::Value> {
    let repo = open(dir);
    let oid = repo
        .revparse_single(rev)
        .unwrap()
        .peel_to_commit()
        .unwrap()
        .id();
    notes::read(&repo, oid).unwrap()
}

#[test]
fn amend_keeps_the_verdict_through_the_post_rewrite_hook() {
    let env = TestEnv::new();
    let (work, _) = remote_pair(&env);
    // Only our hook copies here: git's own notes.rewriteRef copy is switched off.
    env.git(&work, &["config", "--unset-all", "notes.rewriteRef"])
        .ok();
    commit_file(&env, &work, "a.txt", "a", "To be amended");
    let old = add_verdict(&work, "HEAD", "HALT", T1);
    env.write_files(&work, &[("a.txt", "a2")]);
    env.git(&work, &["commit", "-q", "-a", "--amend", "--no-edit"])
        .ok();
    let new = env.rev_parse(&work, "HEAD");
    assert_ne!(old, new);
    let lines = records(&work, "HEAD");
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0][REATTACHED_FROM], old.as_str());
    assert_eq!(lines[0]["verdict"], "HALT");
    assert_ne!(
        env.git(&work, &["push", "origin", "main"]).code,
        0,
        "the HALT still blocks"
    );
}

#[test]
fn rebase_keeps_verdicts_once_with_git_copying_too() {
    let env = TestEnv::new();
    let (work, _) = remote_pair(&env);
    env.git(&work, &["checkout", "-q", "-b", "topic"]).ok();
    commit_file(&env, &work, "t1.txt", "1", "Topic one");
    add_verdict(&work, "HEAD", "HALT", T1);
    commit_file(&env, &work, "t2.txt", "2", "Topic two");
    add_verdict(&work, "HEAD", "APPROVE", T1);
    env.git(&work, &["checkout", "-q", "main"]).ok();
    commit_file(&env, &work, "m.txt", "m", "Main moves on");
    env.git(&work, &["checkout", "-q", "topic"]).ok();
    let before = env.rev_parse(&work, "HEAD~1");

    let rebase = env.git(&work, &["rebase", "main"]);
    rebase.ok();
    assert_ne!(env.rev_parse(&work, "HEAD~1"), before);
    // git's notes.rewriteRef (set by init) copied the lines; the hook must not add them again.
    assert_eq!(records(&work, "HEAD~1").len(), 1);
    assert_eq!(records(&work, "HEAD").len(), 1);
    assert_eq!(
        notes::effective(&records(&work, "HEAD~1")).unwrap().verdict,
        "HALT"
    );
    let show = env.triad(&work, &["show", "HEAD~1"]);
    show.ok();
    assert_eq!(
        show.stdout.matches("  review  HALT").count(),
        1,
        "{}",
        show.stdout
    );

    // The same through an interactive rebase driven non-interactively.
    rebase_interactive(&env, &work);
    assert_eq!(records(&work, "HEAD~1").len(), 1);
    assert_eq!(
        notes::effective(&records(&work, "HEAD~1")).unwrap().verdict,
        "HALT"
    );
}

/// `git rebase -i --force-rebase main` with `GIT_SEQUENCE_EDITOR=true` (keeps the todo list).
fn rebase_interactive(env: &TestEnv, dir: &std::path::Path) {
    let before = env.rev_parse(dir, "HEAD");
    let out = env
        .command("git", dir)
        .env("PATH", path_with_triad())
        .env("GIT_SEQUENCE_EDITOR", "true")
        .env("GIT_COMMITTER_DATE", "2026-01-03T00:00:00Z")
        .args(["rebase", "-q", "-i", "--force-rebase", "main"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_ne!(
        env.rev_parse(dir, "HEAD"),
        before,
        "the commits were rewritten"
    );
}

#[test]
fn squash_merge_and_cherry_pick_get_verdicts_back_by_patch_id() {
    let env = TestEnv::new();
    let (work, _) = remote_pair(&env);
    env.git(&work, &["checkout", "-q", "-b", "feature"]).ok();
    commit_file(&env, &work, "f.txt", "feature\n", "Feature");
    let reviewed = add_verdict(&work, "HEAD", "FLAG", T1);
    env.git(&work, &["checkout", "-q", "-b", "pick", "main"])
        .ok();
    commit_file(&env, &work, "other.txt", "other\n", "Unrelated work");
    env.git(&work, &["checkout", "-q", "main"]).ok();
    env.git(&work, &["merge", "-q", "--squash", "feature"]).ok();
    env.git(&work, &["commit", "-q", "-m", "Squashed feature"])
        .ok();
    env.git(&work, &["checkout", "-q", "pick"]).ok();
    env.git(&work, &["cherry-pick", "feature"]).ok();
    assert_ne!(env.rev_parse(&work, "pick"), reviewed);
    env.git(&work, &["checkout", "-q", "main"]).ok();
    assert!(records(&work, "main").is_empty());

    let r = env.triad(&work, &["notes", "reattach"]);
    r.ok();
    assert!(
        r.stdout.contains("Reattached 1 verdict line(s) to"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("(Squashed feature)"), "{}", r.stdout);
    let lines = records(&work, "main");
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0][REATTACHED_FROM], reviewed.as_str());
    assert_eq!(
        lines[0]["commit"],
        reviewed.as_str(),
        "the record still names the reviewed commit"
    );

    env.triad(&work, &["notes", "reattach", "main..pick"]).ok();
    let picked = records(&work, "pick");
    assert_eq!(picked.len(), 1);
    assert_eq!(picked[0][REATTACHED_FROM], reviewed.as_str());

    let again = env.triad(&work, &["notes", "reattach"]);
    again.ok();
    assert!(
        again.stdout.starts_with("No verdicts to reattach"),
        "{}",
        again.stdout
    );
}

#[test]
fn sync_between_two_clones_ends_with_the_union() {
    let mut env = TestEnv::new();
    // `git push` run by git-triad runs the pre-push hook, which needs `git triad` on PATH.
    env.set("PATH", &path_with_triad());
    let (one, bare) = remote_pair(&env);
    env.git(&one, &["push", "-q", "origin", "main"]).ok();
    let two = env.root().join("two");
    env.git(
        env.root(),
        &["clone", "-q", bare.to_str().unwrap(), two.to_str().unwrap()],
    )
    .ok();
    env.triad(&two, &["init", "--no-trust"]).ok();

    add_verdict(&one, "HEAD", "HALT", T1);
    add_verdict(&two, "HEAD", "APPROVE", "2026-01-05T00:00:00.000Z");
    // Pushing notes is never blocked by a verdict: they are not code.
    let s1 = env.triad(&one, &["notes", "sync"]);
    s1.ok();
    assert!(
        s1.stdout.contains("origin has no verdicts yet."),
        "{}",
        s1.stdout
    );
    assert!(
        s1.stdout.contains("Pushed refs/notes/triad to origin."),
        "{}",
        s1.stdout
    );

    // A plain push from the second clone is rejected, merged and retried.
    let p2 = env.triad(&two, &["notes", "push"]);
    p2.ok();
    assert!(
        p2.stdout.contains("fetching and merging them first"),
        "{}",
        p2.stdout
    );
    assert!(
        p2.stdout.contains("Merged the verdicts of origin"),
        "{}",
        p2.stdout
    );
    let parents = env
        .git(&two, &["rev-list", "--parents", "-1", "refs/notes/triad"])
        .ok()
        .stdout
        .clone();
    assert_eq!(parents.split_whitespace().count(), 3);

    let f1 = env.triad(&one, &["notes", "fetch"]);
    f1.ok();
    assert!(f1.stdout.contains("fast-forward"), "{}", f1.stdout);
    for clone in [&one, &two] {
        let lines = records(clone, "HEAD");
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert_eq!(notes::effective(&lines).unwrap().verdict, "APPROVE");
    }
    assert_eq!(
        env.rev_parse(&one, "refs/notes/triad"),
        env.rev_parse(&bare, "refs/notes/triad")
    );
    let again = env.triad(&two, &["notes", "sync"]);
    again.ok();
    assert!(
        again
            .stdout
            .contains("You already have every verdict origin has."),
        "{}",
        again.stdout
    );

    // git's own fetch, with the refspec init added, fills the tracking ref, never ours.
    add_verdict(&one, "HEAD", "FLAG", "2026-01-06T00:00:00.000Z");
    env.triad(&one, &["notes", "push"]).ok();
    let ours = env.rev_parse(&two, "refs/notes/triad");
    env.git(&two, &["fetch", "-q", "origin"]).ok();
    assert_eq!(
        env.rev_parse(&two, "refs/notes/remotes/origin/triad"),
        env.rev_parse(&bare, "refs/notes/triad")
    );
    assert_eq!(env.rev_parse(&two, "refs/notes/triad"), ours);
}
