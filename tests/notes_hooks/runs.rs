//! A halted run is blocked at push however its change travels: squashed into one commit
//! (`git merge --squash`, no `notes reattach`), and that squash rebased by a teammate, found
//! by the patch id of the run's whole change its outcome records.

use serde_json::{json, Value};

use super::{add_origin, assert_says, bare_repo, clone_of, refused_push};
use crate::pipeline::{arbiter, happy_rules, issue, review, run_json, Scenario};

#[test]
fn a_squash_of_a_halted_run_and_a_teammates_rebase_of_it_are_blocked() {
    let mut rules = happy_rules();
    rules[5] = arbiter(
        "verify",
        vec![review("HALT", json!([issue("unsafe", "return a - b")]))],
    );
    let mut s = Scenario::new(rules);
    // `git push` run by git-triad runs the pre-push hook, which needs `git triad` on PATH.
    s.env.set("PATH", &super::path_with_triad());
    let (env, work) = (&s.env, &s.repo);
    let bare = bare_repo(env, "remote.git", &["-b", "main"]);
    add_origin(env, work, &bare);
    env.triad(work, &["init", "--no-trust"]).ok();
    env.git(work, &["push", "-q", "origin", "main"]).ok();
    let base = env.rev_parse(work, "main");
    let r = s.run(&[]);
    r.expect_code(3);
    let out = run_json(&r.stdout);
    assert_eq!(out["status"], "halted", "{out}");
    let branch = out["branch"].as_str().unwrap().to_string();
    let tip = env.rev_parse(work, &branch);
    // The outcome on the tip records the patch id of the whole change from the run's base.
    let note = s.git(&["notes", "--ref=triad", "show", &tip]);
    let outcome: Value = note
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|l| l["stage"] == "run")
        .unwrap_or_else(|| panic!("no run outcome on the tip: {note}"));
    assert_eq!(outcome["verdict"], "HALT");
    let whole = git_patch_id(env, work, &base, &tip);
    assert_eq!(outcome["change_patch_id"], whole.as_str(), "{outcome}");

    // Squashed into main without `notes reattach`: the gate finds the run's HALT.
    env.git(work, &["merge", "-q", "--squash", &branch]).ok();
    env.git(work, &["commit", "-q", "-m", "Add subtraction"])
        .ok();
    let squash = env.rev_parse(work, "HEAD");
    let push = refused_push(env, work, &["push", "origin", "main"]);
    assert_says(
        &push.stderr,
        &[
            &squash[..7],
            "HALT at stage run",
            &format!("the verdict of {}", &tip[..12]),
        ],
    );
    assert_eq!(env.rev_parse(&bare, "main"), base);

    // The squash gets out past the gate (--no-verify), the notes are shared, and a teammate
    // rebases the squash onto newer work: their own gate blocks it.
    env.git(
        work,
        &["push", "-q", "--no-verify", "origin", "main:refs/heads/wip"],
    )
    .ok();
    env.triad(work, &["notes", "push"]).ok();
    let mate = clone_of(env, &bare, "mate");
    env.triad(&mate, &["notes", "fetch"]).ok();
    super::commit_file(env, &mate, "NEWS.md", "news\n", "Say what is new");
    env.git(&mate, &["push", "-q", "origin", "main"]).ok();
    env.git(&mate, &["checkout", "-q", "-b", "feature", "origin/wip"])
        .ok();
    env.git(&mate, &["rebase", "-q", "main"]).ok();
    let rebased = env.rev_parse(&mate, "HEAD");
    assert_ne!(rebased, squash);
    let push = refused_push(env, &mate, &["push", "origin", "feature"]);
    assert_says(&push.stderr, &[&rebased[..7], "HALT at stage run"]);
    let show = env.triad(&mate, &["show"]);
    assert_says(
        &show.ok().stdout,
        &[
            "review  HALT",
            "the same change by patch id",
            "from origin (not trusted: only tightens)",
        ],
    );
}

/// `git diff-tree -p --no-renames <from> <to> | git patch-id --stable`.
fn git_patch_id(
    env: &crate::common::TestEnv,
    dir: &std::path::Path,
    from: &str,
    to: &str,
) -> String {
    let script = format!("git diff-tree -p --no-renames {from} {to} | git patch-id --stable");
    let out = env
        .command("sh", dir)
        .args(["-c", &script])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .expect("a patch id")
        .to_string()
}
