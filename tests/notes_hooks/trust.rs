//! Verdicts that travel between clones, through real pushes to bare remotes: lines fetched
//! from a remote only tighten unless the user trusts it, an override answers the lines it
//! names and nothing else, and a teammate's clone without some noted commits still works.

use std::path::{Path, PathBuf};

use git_triad::notes::{self, NoteLine};
use git_triad::verdict::Verdict;

use super::{
    add_verdict, assert_never_says, assert_says, bare_repo, clone_of, commit_with_verdict, open,
    override_head, refused_push, remote_pair, T1,
};
use crate::common::TestEnv;

const PUSH_MAIN: &[&str] = &["push", "origin", "main"];

/// The id of the HALT line on `rev` of `dir` (from the note of this clone); with `ts`, the
/// one written then.
fn halt_id(dir: &Path, rev: &str, ts: Option<&str>) -> String {
    let repo = open(dir);
    let oid = super::commit_id(&repo, rev);
    notes::read(&repo, oid)
        .unwrap()
        .iter()
        .find(|l| {
            matches!(&l.line, NoteLine::Verdict(v)
                if v.verdict == Verdict::Halt && ts.is_none_or(|ts| v.ts == ts))
        })
        .and_then(|l| l.line.id())
        .expect("a HALT line")
        .to_string()
}

/// An override line on `commit` dated in the far future, as a fork would write it by hand;
/// with `answers`, naming those lines.
fn forged_override(commit: &str, answers: Option<&str>) -> String {
    let named = answers.map_or(String::new(), |id| format!(r#""answers":["{id}"],"#));
    format!(
        r#"{{{named}"commit":"{commit}","kind":"override","overrides":"HALT","reason":"fine by us","ts":"9999-12-31T23:59:59.999Z","v":1,"verdict":"APPROVE","who":"Fork <fork@example.com>"}}"#
    )
}

/// A fork of `work`'s history (a bare repository `fork.git`, remote `fork` of `work`) whose
/// notes hold `line` on `commit`, written there in a clone of it.
fn fork_with_note(env: &TestEnv, work: &Path, commit: &str, line: &str) -> PathBuf {
    let fork = bare_repo(env, "fork.git", &[]);
    let url = fork.to_str().unwrap();
    env.git(work, &["push", "-q", "--no-verify", url, "main"])
        .ok();
    let forker = clone_of(env, &fork, "forker");
    env.git(
        &forker,
        &["notes", "--ref=triad", "add", "-m", line, commit],
    )
    .ok();
    env.git(&forker, &["push", "-q", "origin", "refs/notes/triad"])
        .ok();
    env.git(work, &["remote", "add", "fork", url]).ok();
    fork
}

#[test]
fn a_forks_override_does_not_clear_a_halt() {
    let env = TestEnv::new();
    let (work, bare) = remote_pair(&env);
    let halted = commit_with_verdict(&env, &work, "src/a.rs", "a\n", "Halted work", "HALT");
    // Dated last, naming no line: what the issue saw clear every HALT before it.
    fork_with_note(&env, &work, &halted, &forged_override(&halted, None));

    let fetch = env.triad(&work, &["notes", "fetch", "fork"]);
    assert_says(
        &fetch.ok().stdout,
        &[
            "Fetched the verdicts of fork in refs/notes/remotes/fork/triad",
            "does not trust fork",
            "its overrides do not",
        ],
    );
    let push = refused_push(&env, &work, PUSH_MAIN);
    assert_says(
        &push.stderr,
        &[
            &halted[..7],
            "HALT at stage implement",
            "an override by Fork <fork@example.com> does not count",
            "does not trust",
        ],
    );
    assert_ne!(
        env.git(&bare, &["rev-parse", "--verify", "-q", "main"])
            .code,
        0
    );
    let show = env.triad(&work, &["show"]);
    assert_says(
        &show.ok().stdout,
        &[
            "from fork (not trusted: only tightens)",
            "does not count: it was fetched from a remote",
            ": HALT (from the review of",
        ],
    );
    // Nothing of the fork entered this clone's own notes.
    assert_eq!(
        notes::read(&open(&work), super::commit_id(&open(&work), "HEAD"))
            .unwrap()
            .len(),
        1
    );

    // Naming the HALT by its id does not make a fork's override count either.
    let named = forged_override(&halted, Some(&halt_id(&work, "HEAD", None)));
    let forker = env.root().join("forker");
    env.git(
        &forker,
        &["notes", "--ref=triad", "add", "-f", "-m", &named, &halted],
    )
    .ok();
    env.git(&forker, &["push", "-q", "-f", "origin", "refs/notes/triad"])
        .ok();
    env.triad(&work, &["notes", "fetch", "fork"]).ok();
    refused_push(&env, &work, PUSH_MAIN);
}

#[test]
fn a_trusted_remotes_override_counts() {
    let env = TestEnv::new();
    let (work, bare) = remote_pair(&env);
    let halted = commit_with_verdict(&env, &work, "src/a.rs", "a\n", "Halted work", "HALT");
    let named = forged_override(&halted, Some(&halt_id(&work, "HEAD", None)));
    fork_with_note(&env, &work, &halted, &named);
    // The user's own config trusts the fork.
    env.write_user_config("[notes]\ntrusted_remotes = [\"fork\"]\n");
    let fetch = env.triad(&work, &["notes", "fetch", "fork"]);
    assert_says(&fetch.ok().stdout, &["verdicts of fork"]);
    assert_never_says(&fetch.stdout, &["does not trust"]);
    // Merged into this clone's notes, and counted.
    let show = env.triad(&work, &["show"]);
    assert_says(&show.ok().stdout, &[": APPROVE (from the override of"]);
    env.git(&work, PUSH_MAIN).ok();
    assert_eq!(env.rev_parse(&bare, "main"), halted);

    // A repository cannot trust a remote for you.
    let again = commit_with_verdict(&env, &work, "src/b.rs", "b\n", "More work", "HALT");
    env.write_user_config("");
    env.write_files(
        &work,
        &[(
            ".triad/config.toml",
            "[notes]\ntrusted_remotes = [\"fork\"]\n",
        )],
    );
    let named = forged_override(&again, Some(&halt_id(&work, "HEAD", None)));
    let forker = env.root().join("forker");
    env.git(
        &forker,
        &[
            "fetch",
            "-q",
            env.root().join("work").to_str().unwrap(),
            "main",
        ],
    )
    .ok();
    env.git(
        &forker,
        &["notes", "--ref=triad", "add", "-m", &named, &again],
    )
    .ok();
    env.git(&forker, &["push", "-q", "origin", "refs/notes/triad"])
        .ok();
    env.triad(&work, &["notes", "fetch", "fork"]).ok();
    refused_push(&env, &work, PUSH_MAIN);
}

#[test]
fn an_override_answers_the_line_it_names_and_a_later_halt_stands() {
    let env = TestEnv::new();
    let (work, bare) = remote_pair(&env);
    let halted = commit_with_verdict(&env, &work, "src/a.rs", "a\n", "Halted work", "HALT");
    override_head(&env, &work, "APPROVE", "checked by hand").ok();
    // The same commit is reviewed again later, and halted again.
    add_verdict(&work, "HEAD", "HALT", "2026-01-03T00:00:00.000Z");
    let push = refused_push(&env, &work, PUSH_MAIN);
    assert_says(
        &push.stderr,
        &[
            &halted[..7],
            "HALT at stage implement",
            "(2026-01-03T00:00:00.000Z)",
        ],
    );
    let show = env.triad(&work, &["show"]);
    assert_says(
        &show.ok().stdout,
        &[
            &format!("answers: {}", halt_id(&work, "HEAD", Some(T1))),
            ": HALT (from the review of 2026-01-03T00:00:00.000Z)",
        ],
    );
    // Answering it too lets the push go.
    override_head(&env, &work, "FLAG", "the second one was checked as well").ok();
    env.git(&work, PUSH_MAIN).ok();
    assert_eq!(env.rev_parse(&bare, "main"), halted);
}

#[test]
fn a_teammates_clone_without_the_reviewed_commits_still_shows_and_checks() {
    let mut env = TestEnv::new();
    // `git push` run by git-triad runs the pre-push hook, which needs `git triad` on PATH.
    env.set("PATH", &super::path_with_triad());
    let (one, bare) = remote_pair(&env);
    let base = add_verdict(&one, "HEAD", "FLAG", T1);
    env.git(&one, PUSH_MAIN).ok();
    // Two reviewed commits on a scratch branch that is never pushed, squashed into main.
    env.git(&one, &["checkout", "-q", "-b", "scratch"]).ok();
    commit_with_verdict(&env, &one, "src/s1.rs", "1\n", "Scratch one", "APPROVE");
    commit_with_verdict(&env, &one, "src/s2.rs", "2\n", "Scratch two", "APPROVE");
    env.git(&one, &["checkout", "-q", "main"]).ok();
    env.git(&one, &["merge", "-q", "--squash", "scratch"]).ok();
    env.commit_all(&one, "Squashed scratch");
    env.git(&one, PUSH_MAIN).ok();
    env.triad(&one, &["notes", "push"]).ok();

    let two = clone_of(&env, &bare, "two");
    let fetch = env.triad(&two, &["notes", "fetch"]);
    assert_says(&fetch.ok().stdout, &["Fetched the verdicts of origin"]);
    // A commit it has: its verdict, said to come from origin.
    let show = env.triad(&two, &["show", &base]);
    assert_says(
        &show.ok().stdout,
        &[
            "review  FLAG",
            "from origin (not trusted: only tightens)",
            ": FLAG",
        ],
    );
    // The squash: its reviewed commits are not here; they are skipped, and said so.
    let show = env.triad(&two, &["show", "main"]);
    assert_says(
        &show.ok().stdout,
        &[
            "No verdicts are recorded on this commit.",
            "Skipped 2 noted commit(s) this clone does not have",
        ],
    );
    let reattach = env.triad(&two, &["notes", "reattach", "main"]);
    assert_says(
        &reattach.ok().stdout,
        &["Skipped 2 noted commit(s) this clone does not have"],
    );
    env.triad(&two, &["log"]).ok();
    // The gate reads the notes of commits it lacks without failing; this team also blocks
    // unreviewed commits.
    env.write_files(
        &two,
        &[(
            ".triad/config.toml",
            "[hooks.pre_push]\nblock_on = [\"HALT\", \"missing\"]\n",
        )],
    );
    commit_with_verdict(&env, &two, "src/t.rs", "t\n", "Teammate work", "APPROVE");
    env.git(&two, PUSH_MAIN).ok();
    // Its notes go to origin as the union with origin's, which stay out of its own ref.
    let ours_before = env.rev_parse(&two, "refs/notes/triad");
    let push = env.triad(&two, &["notes", "push"]);
    assert_says(
        &push.ok().stdout,
        &[
            "pushing the union of both",
            "Pushed refs/notes/triad to origin.",
        ],
    );
    assert_eq!(env.rev_parse(&two, "refs/notes/triad"), ours_before);
    let on_origin = super::git_stdout(&env, &bare, &["notes", "--ref=triad", "list"]);
    let teammate = env.rev_parse(&two, "HEAD");
    for commit in [&base, &teammate] {
        assert!(on_origin.contains(commit.as_str()), "{on_origin}");
    }
    // And in the first clone, where the commits are, the squash is recognized.
    let show = env.triad(&one, &["show", "main"]);
    assert_says(&show.ok().stdout, &["a squash of 2 commits"]);
}
