//! Where two features meet (issue 44), through real pushes to bare remotes: `git fetch` and
//! `git pull` after `git triad init`, a fork's note on a cherry-pick, a remote that rewrites
//! its notes or fast-forwards past a HALT, a remote named `team/origin`, an amend of a commit
//! a fork halted, and verdict words that only look like one.

use std::path::{Path, PathBuf};

use super::{
    add_origin, add_verdict, assert_never_says, assert_says, bare_repo, clone_of, commit_file,
    commit_with_verdict, git_stdout, override_head, path_with_triad, refused_push, remote_pair, T1,
};
use crate::common::TestEnv;

/// A plain clone `name` of `bare` (no `git triad init`): a teammate who does not use it.
fn plain_clone(env: &TestEnv, bare: &Path, name: &str) -> PathBuf {
    let dir = env.root().join(name);
    env.git(
        env.root(),
        &["clone", "-q", bare.to_str().unwrap(), dir.to_str().unwrap()],
    )
    .ok();
    dir
}

/// `git <args>` in `dir`, which must succeed without a word of error or warning.
#[track_caller]
fn git_quietly(env: &TestEnv, dir: &Path, args: &[&str]) {
    let run = env.git(dir, args);
    run.ok();
    assert_never_says(&run.stderr, &["fatal", "error", "warning", "rejected"]);
}

/// Writes `bytes` as the whole triad note on `rev` in `dir`, byte for byte (through a blob,
/// so git changes nothing of it).
fn raw_note(env: &TestEnv, dir: &Path, rev: &str, bytes: &[u8]) {
    let file = env.root().join("raw-note");
    std::fs::write(&file, bytes).unwrap();
    let blob = git_stdout(env, dir, &["hash-object", "-w", file.to_str().unwrap()]);
    env.git(
        dir,
        &["notes", "--ref=triad", "add", "-f", "-C", blob.trim(), rev],
    )
    .ok();
}

/// A review line as a fork writes it by hand on `commit`.
fn fork_line(commit: &str, verdict: &str) -> String {
    format!(
        r#"{{"commit":"{commit}","kind":"review","stage":"review","arbiter_model":"fork-model","ts":"9999-01-01T00:00:00.000Z","v":1,"verdict":"{verdict}","issues":[]}}"#
    )
}

/// A fork of `work` (bare `fork.git`, remote `fork` of `work`) holding `branch`, and a clone
/// of it where the fork writes notes.
fn fork_of(env: &TestEnv, work: &Path, branch: &str) -> (PathBuf, PathBuf) {
    let fork = bare_repo(env, "fork.git", &[]);
    let url = fork.to_str().unwrap();
    env.git(work, &["push", "-q", "--no-verify", url, branch])
        .ok();
    env.git(work, &["remote", "add", "fork", url]).ok();
    let forker = clone_of(env, &fork, "forker");
    (fork, forker)
}

/// In `forker`, writes `text` as the whole triad note on `commit` and pushes the notes to
/// its origin; with `rewrite`, on a new history of its notes, pushed by force (a fork may
/// rewrite its notes as it likes).
fn fork_notes(env: &TestEnv, forker: &Path, commit: &str, text: &str, rewrite: bool) {
    if rewrite {
        env.git(forker, &["update-ref", "-d", "refs/notes/triad"])
            .ok();
    }
    env.git(
        forker,
        &["notes", "--ref=triad", "add", "-f", "-m", text, commit],
    )
    .ok();
    let mut push = vec!["push", "-q", "--no-verify"];
    if rewrite {
        push.push("-f");
    }
    push.extend(["origin", "refs/notes/triad"]);
    env.git(forker, &push).ok();
}

#[test]
fn git_fetch_and_pull_work_right_after_init_against_a_remote_without_verdicts() {
    let env = TestEnv::new();
    let bare = bare_repo(&env, "remote.git", &["-b", "main"]);
    let seed = env.repo("seed", &[("a.txt", "a\n")]);
    add_origin(&env, &seed, &bare);
    env.git(&seed, &["push", "-q", "origin", "main"]).ok();
    // A clone whose user ran `git triad init`, and a remote named team/origin beside origin.
    let work = plain_clone(&env, &bare, "work");
    let team = bare_repo(&env, "team.git", &["-b", "main"]);
    env.git(&seed, &["push", "-q", team.to_str().unwrap(), "main"])
        .ok();
    env.git(
        &work,
        &["remote", "add", "team/origin", team.to_str().unwrap()],
    )
    .ok();
    let init = env.triad(&work, &["init", "--no-trust"]);
    assert_says(
        &init.ok().stdout,
        &[
            "Added `remote.origin.fetch = +refs/notes/triad*:refs/notes/remotes/origin/fetched/triad*`",
            "Added `remote.team/origin.fetch = +refs/notes/triad*:refs/notes/remotes/team%2Forigin/fetched/triad*`",
        ],
    );
    // Neither remote has any verdict; a teammate who does not use git triad pushes work.
    let mate = plain_clone(&env, &bare, "mate");
    let theirs = commit_file(&env, &mate, "b.txt", "b\n", "Teammate work");
    env.git(&mate, &["push", "-q", "origin", "main"]).ok();
    git_quietly(&env, &work, &["fetch"]);
    git_quietly(&env, &work, &["fetch", "--all"]);
    git_quietly(&env, &work, &["pull", "-q", "--ff-only"]);
    assert_eq!(env.rev_parse(&work, "HEAD"), theirs);
    git_quietly(&env, &work, &["fetch", "team/origin"]);

    // Uninstall takes the refspecs out again, as it does the rest.
    env.triad(&work, &["init", "--uninstall"]).ok();
    assert_eq!(
        git_stdout(&env, &work, &["config", "--get-all", "remote.origin.fetch"]),
        "+refs/heads/*:refs/remotes/origin/*\n"
    );
    assert_eq!(
        git_stdout(
            &env,
            &work,
            &["config", "--get-all", "remote.team/origin.fetch"]
        ),
        "+refs/heads/*:refs/remotes/team/origin/*\n"
    );

    // The refspec an earlier version added (not a glob: `git fetch` failed on it) is taken
    // out by init, recorded or not.
    env.git(
        &work,
        &[
            "config",
            "--add",
            "remote.origin.fetch",
            "refs/notes/triad:refs/notes/remotes/origin/triad",
        ],
    )
    .ok();
    let broken = env.git(&work, &["fetch", "origin"]);
    assert_says(
        &broken.stderr,
        &["couldn't find remote ref refs/notes/triad"],
    );
    let again = env.triad(&work, &["init", "--no-trust"]);
    assert_says(
        &again.ok().stdout,
        &["Removed `remote.origin.fetch = refs/notes/triad:refs/notes/remotes/origin/triad`"],
    );
    git_quietly(&env, &work, &["fetch", "origin"]);
    git_quietly(&env, &work, &["pull", "-q", "--ff-only"]);
}

#[test]
fn a_forks_approve_or_comment_on_a_cherry_pick_still_blocks_after_notes_fetch() {
    let env = TestEnv::new();
    let (work, bare) = remote_pair(&env);
    env.git(&work, &["checkout", "-q", "-b", "topic"]).ok();
    let halted = commit_with_verdict(&env, &work, "src/a.rs", "a\n", "Halted work", "HALT");
    env.git(&work, &["checkout", "-q", "-b", "pick", "main"])
        .ok();
    commit_file(&env, &work, "src/other.rs", "o\n", "Other work");
    env.git(&work, &["cherry-pick", &halted]).ok();
    let picked = env.rev_parse(&work, "HEAD");
    assert_ne!(picked, halted);
    let push_pick = ["push", "origin", "pick"];
    let push = refused_push(&env, &work, &push_pick);
    assert_says(&push.stderr, &[&picked[..7], "HALT at stage implement"]);

    // A fork approves the cherry-pick; the note is fetched (its remote is not trusted).
    let (_, forker) = fork_of(&env, &work, "pick");
    fork_notes(
        &env,
        &forker,
        &picked,
        &fork_line(&picked, "APPROVE"),
        false,
    );
    env.triad(&work, &["notes", "fetch", "fork"]).ok();
    let push = refused_push(&env, &work, &push_pick);
    assert_says(
        &push.stderr,
        &[
            &picked[..7],
            "HALT at stage implement",
            &format!("the verdict of {}", &halted[..12]),
        ],
    );
    // A comment instead of a verdict changes nothing either.
    fork_notes(&env, &forker, &picked, "Looked at it, approve.", true);
    env.triad(&work, &["notes", "fetch", "fork"]).ok();
    let push = refused_push(&env, &work, &push_pick);
    assert_says(&push.stderr, &["HALT at stage implement"]);
    assert_ne!(
        env.git(&bare, &["rev-parse", "--verify", "-q", "pick"])
            .code,
        0
    );
    // `show` says why, and an override on the cherry-pick answers the HALT found there.
    let show = env.triad(&work, &["show", "pick"]);
    assert_says(
        &show.ok().stdout,
        &[
            "review  HALT",
            &format!("(on {}, the same change by patch id", &halted[..12]),
            ": HALT",
        ],
    );
    let o = override_head(&env, &work, "APPROVE", "checked the cherry-pick by hand");
    assert_says(&o.ok().stdout, &["HALT is now APPROVE"]);
    // The fork's comment is a line the gate cannot read: it still blocks, and says so.
    let push = refused_push(&env, &work, &push_pick);
    assert_says(
        &push.stderr,
        &["not a JSON record", "Looked at it, approve."],
    );
    assert_never_says(&push.stderr, &["HALT at stage"]);
}

#[test]
fn an_amend_keeps_a_halt_fetched_from_a_fork() {
    let env = TestEnv::new();
    let (work, _) = remote_pair(&env);
    let commit = commit_file(&env, &work, "src/a.rs", "a\n", "Work the fork halted");
    let (_, forker) = fork_of(&env, &work, "main");
    fork_notes(&env, &forker, &commit, &fork_line(&commit, "HALT"), false);
    env.triad(&work, &["notes", "fetch", "fork"]).ok();
    refused_push(&env, &work, &["push", "origin", "main"]);
    // Amended (the change changes, so its patch id does too): the fork's HALT comes along,
    // kept as the fork's.
    env.write_files(&work, &[("src/a.rs", "a2\n")]);
    env.git(&work, &["commit", "-q", "-a", "--amend", "--no-edit"])
        .ok();
    let amended = env.rev_parse(&work, "HEAD");
    assert_ne!(amended, commit);
    let push = refused_push(&env, &work, &["push", "origin", "main"]);
    assert_says(&push.stderr, &[&amended[..7], "HALT at stage review"]);
    let show = env.triad(&work, &["show"]);
    assert_says(
        &show.ok().stdout,
        &[
            &format!("(copied from {commit})"),
            "from fork (not trusted: only tightens)",
        ],
    );
    // Nothing of the fork entered this clone's own notes.
    assert_eq!(
        env.git(&work, &["notes", "--ref=triad", "show", &amended])
            .code,
        1
    );
}

#[test]
fn an_untrusted_remotes_forced_rewrite_keeps_the_halt() {
    let env = TestEnv::new();
    let bare = bare_repo(&env, "remote.git", &["-b", "main"]);
    let work = env.repo("work", &[("src/lib.rs", "fn parse() {}\n")]);
    add_origin(&env, &work, &bare);
    let commit = commit_file(&env, &work, "src/a.rs", "a\n", "Work the fork halted");
    let fork = bare_repo(&env, "fork.git", &[]);
    env.git(
        &work,
        &["push", "-q", "--no-verify", fork.to_str().unwrap(), "main"],
    )
    .ok();
    env.git(&work, &["remote", "add", "fork", fork.to_str().unwrap()])
        .ok();
    // init after the remotes: git's own fetch brings every remote's notes.
    env.triad(&work, &["init", "--no-trust"]).ok();
    let forker = clone_of(&env, &fork, "forker");
    fork_notes(&env, &forker, &commit, &fork_line(&commit, "HALT"), false);
    git_quietly(&env, &work, &["fetch", "fork"]);
    // The fork rewrites its notes without the HALT, and git fetches twice before git triad
    // looks: the second fetch replaced what the first landed.
    fork_notes(&env, &forker, &commit, &fork_line(&commit, "FLAG"), true);
    let fetched = env.git(&work, &["fetch", "fork"]);
    assert_says(&fetched.ok().stderr, &["(forced update)"]);
    let forked = git_stdout(
        &env,
        &work,
        &["notes", "--ref=remotes/fork/fetched/triad", "show", &commit],
    );
    assert!(!forked.contains("HALT"), "{forked}");
    let push = refused_push(&env, &work, &["push", "origin", "main"]);
    assert_says(&push.stderr, &[&commit[..7], "HALT at stage review"]);
    // git triad's own fetch of the rewrite keeps it too.
    fork_notes(&env, &forker, &commit, &fork_line(&commit, "APPROVE"), true);
    env.triad(&work, &["notes", "fetch", "fork"]).ok();
    refused_push(&env, &work, &["push", "origin", "main"]);
    let show = env.triad(&work, &["show", &commit]);
    assert_says(
        &show.ok().stdout,
        &["review  HALT", "review  FLAG", "review  APPROVE", ": HALT"],
    );
}

#[test]
fn a_trusted_remotes_fast_forward_past_your_halt_keeps_it() {
    let mut env = TestEnv::new();
    env.set("PATH", &path_with_triad());
    env.write_user_config("[notes]\ntrusted_remotes = [\"origin\"]\n");
    let (work, bare) = remote_pair(&env);
    env.git(&work, &["push", "-q", "origin", "main"]).ok();
    let base = env.rev_parse(&work, "HEAD");
    let halted = commit_with_verdict(&env, &work, "src/a.rs", "a\n", "Halted work", "HALT");
    env.triad(&work, &["notes", "push"]).ok();
    // A teammate takes the notes, removes the HALT, and pushes: a fast-forward of origin's.
    let mate = clone_of(&env, &bare, "mate");
    env.triad(&mate, &["notes", "fetch"]).ok();
    env.git(
        &mate,
        &[
            "fetch",
            "-q",
            env.root().join("work").to_str().unwrap(),
            "main",
        ],
    )
    .ok();
    env.git(&mate, &["notes", "--ref=triad", "remove", &halted])
        .ok();
    add_verdict(&mate, &base, "APPROVE", T1);
    env.git(&mate, &["push", "-q", "origin", "refs/notes/triad"])
        .ok();
    let theirs = env.rev_parse(&bare, "refs/notes/triad");
    let fetch = env.triad(&work, &["notes", "fetch"]);
    assert_says(&fetch.ok().stdout, &["the verdicts of origin"]);
    let show = env.triad(&work, &["show", &halted]);
    assert_says(&show.ok().stdout, &["review  HALT", ": HALT"]);
    refused_push(&env, &work, &["push", "origin", "main"]);
    // Both sides are on the record: ours holds the teammate's notes, and the HALT.
    let ours = env.rev_parse(&work, "refs/notes/triad");
    assert_ne!(ours, theirs, "the removal was not taken as it is");
    let is_ancestor = env.git(&work, &["merge-base", "--is-ancestor", &theirs, &ours]);
    assert_eq!(is_ancestor.code, 0);
    let on_base = git_stdout(&env, &work, &["notes", "--ref=triad", "show", &base]);
    assert_says(&on_base, &["\"verdict\":\"APPROVE\""]);
}

#[test]
fn a_remote_named_team_slash_origin_is_fetched_read_and_shown() {
    let env = TestEnv::new();
    let (work, bare) = remote_pair(&env);
    env.git(&work, &["push", "-q", "origin", "main"]).ok();
    let team = bare_repo(&env, "team.git", &["-b", "main"]);
    env.git(&work, &["push", "-q", team.to_str().unwrap(), "main"])
        .ok();
    env.git(
        &work,
        &["remote", "add", "team/origin", team.to_str().unwrap()],
    )
    .ok();
    env.triad(&work, &["init", "--no-trust"]).ok();
    // A teammate on team/origin halts a commit there.
    let mate = plain_clone(&env, &team, "mate");
    let commit = commit_with_verdict(&env, &mate, "src/t.rs", "t\n", "Team work", "HALT");
    env.git(&mate, &["push", "-q", "origin", "main", "refs/notes/triad"])
        .ok();
    git_quietly(&env, &work, &["fetch", "team/origin"]);
    env.git(&work, &["merge", "-q", "--ff-only", "team/origin/main"])
        .ok();
    let show = env.triad(&work, &["show", &commit]);
    assert_says(
        &show.ok().stdout,
        &[
            "review  HALT",
            "from team/origin (not trusted: only tightens)",
        ],
    );
    let push = refused_push(&env, &work, &["push", "origin", "main"]);
    assert_says(&push.stderr, &[&commit[..7], "HALT"]);
    assert_ne!(env.rev_parse(&bare, "main"), commit);
    let fetch = env.triad(&work, &["notes", "fetch", "team/origin"]);
    assert_says(
        &fetch.ok().stdout,
        &["the verdicts of team/origin in refs/notes/remotes/team%2Forigin/triad"],
    );
}

/// The three ways to write a verdict that only looks like one, and a record that swallows
/// the HALT after it: each blocks the push, naming the line.
#[test]
fn confusable_verdicts_and_a_swallowing_record_block_the_push() {
    let env = TestEnv::new();
    let (work, bare) = remote_pair(&env);
    let approve = format!(r#"{{"v":1,"kind":"review","ts":"{T1}","verdict":"APPROVE"}}"#);
    let review =
        |word: &str| format!(r#"{{"v":1,"kind":"review","ts":"{T1}","verdict":"{word}"}}"#);
    let mut invalid_byte = review("HA").into_bytes();
    invalid_byte.splice(invalid_byte.len() - 2..invalid_byte.len() - 2, *b"\xffLT");
    let swallowing = format!(
        "{{\"v\":1,\"kind\":\"review\",\"ts\":\"{T1}\",\"verdict\":\"APPROVE\",\"x\":\n{}\n}}\n",
        review("HALT")
    );
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("fullwidth", review("ＨＡＬＴ").into_bytes(), "ＨＡＬＴ"),
        (
            "joiner",
            review("HA\u{200d}LT").into_bytes(),
            "HA<U+200D>LT",
        ),
        (
            "escaped joiner",
            review(r"HA\u200dLT").into_bytes(),
            r"HA\u200dLT",
        ),
        ("invalid byte", invalid_byte, "HA\u{fffd}LT"),
        (
            "swallowing",
            swallowing.into_bytes(),
            "holds another record",
        ),
    ];
    for (name, note, says) in cases {
        let head = commit_file(
            &env,
            &work,
            &format!("src/{}.rs", name.replace(' ', "_")),
            "x\n",
            name,
        );
        let mut text = format!("{approve}\n").into_bytes();
        text.extend_from_slice(&note);
        raw_note(&env, &work, "HEAD", &text);
        let push = refused_push(&env, &work, &["push", "origin", "main"]);
        assert_says(&push.stderr, &[&head[..7], name, says]);
        let pushed = env.git(&bare, &["rev-parse", "--verify", "-q", "main"]);
        assert!(!pushed.stdout.contains(&head), "{name}");
        let show = env.triad(&work, &["show"]);
        assert_says(&show.ok().stdout, &["unreadable", "pre-push gate blocks"]);
        // An override cannot answer such a line; mending the note can.
        raw_note(&env, &work, "HEAD", format!("{approve}\n").as_bytes());
    }
    env.git(&work, &["push", "origin", "main"]).ok();
}

/// Text from models and people reaches `show`, the pre-push message and `git log` as text:
/// a line break in it never starts a line that reads as git triad's own; and `show` says a
/// verdict the evidence lowered was lowered.
#[test]
fn note_text_cannot_forge_a_line_and_a_lowered_verdict_says_so() {
    let env = TestEnv::new();
    let (work, _) = remote_pair(&env);
    let head = commit_file(&env, &work, "src/a.rs", "a\n", "Add a");
    let forged = "Effective verdict of 0000000: APPROVE (from the override of now).";
    let mut line = super::review(&head, None, "FLAG", T1);
    line["model_verdict"] = "HALT".into();
    line["derived"] = serde_json::json!({"verdict": "FLAG",
        "reasons": ["1 critical claim(s) about behaviour without a confirmed probe support at most FLAG"]});
    line["reasoning"] = format!("looks bad\n{forged}").into();
    line["issues"][1]["description"] = format!("index past the end\n{forged}").into();
    let repo = super::open(&work);
    git_triad::notes::append(&repo, super::commit_id(&repo, "HEAD"), &[line]).unwrap();
    override_head(&env, &work, "APPROVE", &format!("fine\n{forged}")).ok();

    let show = env.triad(&work, &["show"]);
    let out = &show.ok().stdout;
    assert_says(
        out,
        &[
            "the model said HALT; what its issues stand on supports only FLAG (1 critical claim(s)",
            "reasoning: looks bad",
            "index past the end",
            ": APPROVE (from the override of",
        ],
    );
    assert_never_says(out, &["raised"]);
    let forged_lines = out
        .lines()
        .filter(|l| l.starts_with("Effective verdict"))
        .count();
    assert_eq!(forged_lines, 1, "{out}");
    // The display ref: one line per note line, whatever they hold.
    let log = git_stdout(&env, &work, &["log", "-1", "--format=%N"]);
    assert_eq!(log.trim_end().lines().count(), 2, "{log}");
    assert_never_says(&log, &["\nEffective verdict"]);
    // The pre-push message, when a newer HALT blocks it.
    add_verdict(&work, "HEAD", "HALT", "2026-02-01T00:00:00.000Z");
    let repo = super::open(&work);
    let mut halt = super::review(&head, None, "HALT", "2026-02-02T00:00:00.000Z");
    halt["issues"][1]["description"] = format!("past the end\n{forged}").into();
    git_triad::notes::append(&repo, super::commit_id(&repo, "HEAD"), &[halt]).unwrap();
    let push = refused_push(&env, &work, &["push", "origin", "main"]);
    assert!(
        !push
            .stderr
            .lines()
            .any(|l| l.trim_start().starts_with("Effective verdict")),
        "{}",
        push.stderr
    );
    assert_says(&push.stderr, &["past the end^JEffective verdict"]);
}
