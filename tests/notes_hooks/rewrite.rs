//! Verdicts across history rewrites (amend, rebase, squash merge, cherry-pick) and clones.

use git_triad::notes::{self, REATTACHED_FROM};

use super::{
    add_verdict, assert_says, clone_of, commit_file, commit_id, commit_with_verdict, git_stdout,
    open, path_with_triad, refused_push, remote_pair, T1,
};
use crate::common::TestEnv;

/// The records of the local note on `rev`, as stored.
fn records(dir: &std::path::Path, rev: &str) -> Vec<serde_json::Value> {
    let repo = open(dir);
    notes::read(&repo, commit_id(&repo, rev))
        .unwrap()
        .into_iter()
        .filter_map(|l| l.line.value().cloned())
        .collect()
}

/// The verdict that counts on `rev`, from its local notes.
fn effective_verdict(dir: &std::path::Path, rev: &str) -> String {
    let repo = open(dir);
    let lines = notes::read(&repo, commit_id(&repo, rev)).unwrap();
    notes::effective(&lines).unwrap().verdict.to_string()
}

#[test]
fn amend_keeps_the_verdict_through_the_post_rewrite_hook() {
    let env = TestEnv::new();
    let (work, _) = remote_pair(&env);
    // Only our hook copies here: git's own notes.rewriteRef copy is switched off.
    env.git(&work, &["config", "--unset-all", "notes.rewriteRef"])
        .ok();
    let old = commit_with_verdict(&env, &work, "a.txt", "a", "To be amended", "HALT");
    env.write_files(&work, &[("a.txt", "a2")]);
    env.git(&work, &["commit", "-q", "-a", "--amend", "--no-edit"])
        .ok();
    let new = env.rev_parse(&work, "HEAD");
    assert_ne!(old, new);
    let lines = records(&work, "HEAD");
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0][REATTACHED_FROM], old.as_str());
    assert_eq!(lines[0]["verdict"], "HALT");
    // The line people read in `git log` followed it.
    let log = git_stdout(&env, &work, &["log", "-1", "--format=%N"]);
    assert!(log.starts_with("HALT     stage implement"), "{log}");
    assert!(
        log.contains(&format!("(copied from {})", &old[..12])),
        "{log}"
    );
    // The HALT still blocks.
    refused_push(&env, &work, &["push", "origin", "main"]);
}

#[test]
fn rebase_keeps_verdicts_once_with_git_copying_too() {
    let env = TestEnv::new();
    let (work, _) = remote_pair(&env);
    env.git(&work, &["checkout", "-q", "-b", "topic"]).ok();
    commit_with_verdict(&env, &work, "t1.txt", "1", "Topic one", "HALT");
    commit_with_verdict(&env, &work, "t2.txt", "2", "Topic two", "APPROVE");
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
    assert_eq!(effective_verdict(&work, "HEAD~1"), "HALT");
    let show = env.triad(&work, &["show", "HEAD~1"]);
    show.ok();
    assert_eq!(
        show.stdout.matches("  review  HALT").count(),
        1,
        "{}",
        show.stdout
    );
    // git copied the JSON; the hook brought the lines people read along.
    let log = git_stdout(&env, &work, &["log", "-2", "--format=%s: %N"]);
    assert!(log.contains("Topic one: HALT     stage implement"), "{log}");
    assert!(log.contains("Topic two: APPROVE  stage implement"), "{log}");

    // The same through an interactive rebase driven non-interactively.
    rebase_interactive(&env, &work);
    assert_eq!(records(&work, "HEAD~1").len(), 1);
    assert_eq!(effective_verdict(&work, "HEAD~1"), "HALT");
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
    let reviewed = commit_with_verdict(&env, &work, "f.txt", "feature\n", "Feature", "FLAG");
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
    assert_says(
        &r.ok().stdout,
        &["Reattached 1 verdict line(s) to", "(Squashed feature)"],
    );
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

/// Three reviewed commits squashed into one (`git merge --squash` of a branch that also
/// touches a file twice): no single patch id matches, so the squash is found as the combined
/// change of the three; `show` points at `notes reattach` first, which brings all their
/// verdicts over, the worst one in effect.
#[test]
fn a_squash_of_three_reviewed_commits_gets_their_verdicts_back() {
    let env = TestEnv::new();
    let (work, _) = remote_pair(&env);
    env.git(&work, &["checkout", "-q", "-b", "feature"]).ok();
    let a = commit_with_verdict(&env, &work, "a.txt", "one\n", "A", "APPROVE");
    let b = commit_with_verdict(&env, &work, "b.txt", "two\n", "B", "FLAG");
    let c = commit_with_verdict(&env, &work, "a.txt", "one\nmore\n", "C", "APPROVE");
    // Something reviewed that is not part of it, touching the same file.
    env.git(&work, &["checkout", "-q", "-b", "other", "main"])
        .ok();
    commit_with_verdict(&env, &work, "a.txt", "else\n", "Other", "HALT");
    env.git(&work, &["checkout", "-q", "main"]).ok();
    env.git(&work, &["merge", "-q", "--squash", "feature"]).ok();
    env.git(&work, &["commit", "-q", "-m", "Squashed A B C"])
        .ok();
    assert!(records(&work, "main").is_empty());

    let shown = env.triad(&work, &["show", "main"]);
    assert_says(
        &shown.ok().stdout,
        &[
            "No verdicts are recorded on this commit.",
            "a squash of 3 commits reviewed as",
            "`git triad notes reattach main`",
        ],
    );
    let r = env.triad(&work, &["notes", "reattach"]);
    assert_says(
        &r.ok().stdout,
        &["Reattached 3 verdict line(s) to", "(Squashed A B C)"],
    );
    let lines = records(&work, "main");
    let from: Vec<&str> = lines
        .iter()
        .map(|l| l[REATTACHED_FROM].as_str().unwrap())
        .collect();
    assert_eq!(from, [a.as_str(), b.as_str(), c.as_str()]);
    assert_eq!(effective_verdict(&work, "main"), "FLAG");
    let shown = env.triad(&work, &["show", "main"]);
    assert!(
        !shown.ok().stdout.contains("notes reattach"),
        "{}",
        shown.stdout
    );
}

#[test]
fn sync_between_two_clones_that_trust_their_origin_ends_with_the_union() {
    let mut env = TestEnv::new();
    // `git push` run by git-triad runs the pre-push hook, which needs `git triad` on PATH.
    env.set("PATH", &path_with_triad());
    // Both clones' user trusts origin: fetched notes are merged into each clone's own.
    env.write_user_config("[notes]\ntrusted_remotes = [\"origin\"]\n");
    let (one, bare) = remote_pair(&env);
    env.git(&one, &["push", "-q", "origin", "main"]).ok();
    let two = clone_of(&env, &bare, "two");

    add_verdict(&one, "HEAD", "HALT", T1);
    add_verdict(&two, "HEAD", "APPROVE", "2026-01-05T00:00:00.000Z");
    // Pushing notes is never blocked by a verdict: they are not code.
    let s1 = env.triad(&one, &["notes", "sync"]);
    assert_says(
        &s1.ok().stdout,
        &[
            "origin has no verdicts yet.",
            "Pushed refs/notes/triad to origin.",
        ],
    );

    // A plain push from the second clone is rejected, merged and retried.
    let p2 = env.triad(&two, &["notes", "push"]);
    assert_says(
        &p2.ok().stdout,
        &[
            "fetching them first and pushing the union of both",
            "Merged the verdicts of origin",
        ],
    );
    let parents = git_stdout(
        &env,
        &two,
        &["rev-list", "--parents", "-1", "refs/notes/triad"],
    );
    assert_eq!(parents.split_whitespace().count(), 3);

    let f1 = env.triad(&one, &["notes", "fetch"]);
    assert_says(&f1.ok().stdout, &["fast-forward"]);
    // What the merge brought shows in `git log` too.
    let log = git_stdout(&env, &one, &["log", "-1", "--format=%N"]);
    assert!(
        log.contains("HALT     stage implement") && log.contains("APPROVE  stage implement"),
        "{log}"
    );
    for clone in [&one, &two] {
        let lines = records(clone, "HEAD");
        assert_eq!(lines.len(), 2, "{lines:?}");
        // A later review does not clear a HALT; only an override naming it does.
        assert_eq!(effective_verdict(clone, "HEAD"), "HALT");
    }
    assert_eq!(
        env.rev_parse(&one, "refs/notes/triad"),
        env.rev_parse(&bare, "refs/notes/triad")
    );
    let again = env.triad(&two, &["notes", "sync"]);
    assert_says(
        &again.ok().stdout,
        &["You already have every verdict origin has."],
    );

    // git's own fetch, with the refspec init added, lands origin's notes beside ours, never
    // in them; git triad folds them into the ref it keeps for origin when it next reads.
    add_verdict(&one, "HEAD", "FLAG", "2026-01-06T00:00:00.000Z");
    env.triad(&one, &["notes", "push"]).ok();
    let ours = env.rev_parse(&two, "refs/notes/triad");
    env.git(&two, &["fetch", "-q", "origin"]).ok();
    let theirs = env.rev_parse(&bare, "refs/notes/triad");
    assert_eq!(
        env.rev_parse(&two, "refs/notes/remotes/origin/fetched/triad"),
        theirs
    );
    assert_eq!(env.rev_parse(&two, "refs/notes/triad"), ours);
    let show = env.triad(&two, &["show"]);
    assert_says(
        &show.ok().stdout,
        &["review  FLAG", "from origin (trusted)"],
    );
    let kept = env.rev_parse(&two, "refs/notes/remotes/origin/triad");
    assert!(
        env.git(&two, &["merge-base", "--is-ancestor", &theirs, &kept])
            .code
            == 0,
        "the tracking ref holds what landed"
    );
    assert_eq!(env.rev_parse(&two, "refs/notes/triad"), ours);
}
