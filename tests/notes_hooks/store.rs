//! The note store: what git shows, what the library reads, concurrent appends, fanout trees.

use std::io::Write;
use std::path::Path;
use std::process::Stdio;

use git_triad::notes::{self, merge::merge_notes, NOTES_REF};
use serde_json::json;

use super::{add_verdict, assert_says, git_stdout, open, review, T1};
use crate::common::TestEnv;

/// The triad note on `rev`, as `git notes show` prints it.
fn note_text(env: &TestEnv, dir: &Path, rev: &str) -> String {
    git_stdout(env, dir, &["notes", "--ref=triad", "show", rev])
}

/// Asserts every entry of the `ls-tree` listing of the notes ref is a subtree.
#[track_caller]
fn assert_fanned_out(env: &TestEnv, dir: &Path, what: &str) {
    let top = git_stdout(env, dir, &["ls-tree", NOTES_REF]);
    assert!(top.lines().all(|l| l.contains(" tree ")), "{what}: {top}");
}

#[test]
fn git_and_the_library_read_and_write_the_same_notes() {
    let env = TestEnv::new();
    let dir = env.repo("r", &[("a.txt", "a\n")]);
    let head = add_verdict(&dir, "HEAD", "REJECT", T1);

    // What reviewers see.
    let log = env.git(&dir, &["log", "--notes=triad", "-1"]);
    assert_says(&log.ok().stdout, &["Notes (triad):", r#""kind":"review""#]);
    let shown = note_text(&env, &dir, "HEAD");
    let first = shown.lines().next().unwrap();
    let parsed: serde_json::Value = serde_json::from_str(first).unwrap();
    assert_eq!(
        first,
        notes::canonical_json(&parsed),
        "lines are canonical JSON"
    );
    assert!(first.starts_with(r#"{"alternatives":[],"arbiter_model":"model-b","attempt":1,"#));
    assert!(shown.ends_with("}\n"));

    // Lines appended by hand with git (which puts a blank line between paragraphs), in any
    // key order, with junk and unknown versions around them.
    let by_hand = r#"{"verdict":"APPROVE","v":1,"ts":"2026-01-02T00:00:00.000Z","kind":"review","stage":"verify"}"#;
    for line in [
        by_hand,
        "not json at all",
        r#"{"v":2,"kind":"review","verdict":"HALT"}"#,
    ] {
        env.git(&dir, &["notes", "--ref=triad", "append", "-m", line])
            .ok();
    }
    let repo = open(&dir);
    let oid = git2::Oid::from_str(&head).unwrap();
    let lines = notes::read(&repo, oid).unwrap();
    let valid: Vec<&serde_json::Value> = lines.iter().filter_map(|l| l.line.value()).collect();
    assert_eq!(valid.len(), 2, "{lines:?}");
    // The junk and the unknown version are read too, as lines the gate may block on.
    let invalid: Vec<&str> = lines
        .iter()
        .filter_map(|l| match &l.line {
            notes::NoteLine::Invalid(bad) => Some(bad.text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(invalid.len(), 2, "{lines:?}");
    // The worst verdict no override answers is in force, whatever the timestamps.
    assert_eq!(
        notes::effective(&lines).unwrap().verdict,
        git_triad::verdict::Verdict::Reject
    );

    // Appending again what is there adds nothing; git still reads the note.
    notes::append(&repo, oid, &[valid[0].clone()]).unwrap();
    let after = note_text(&env, &dir, "HEAD");
    assert!(
        after.starts_with(&shown),
        "existing text is never rewritten"
    );
    assert_eq!(after.matches(r#""kind":"review""#).count(), 3);

    let json = env.triad(&dir, &["show", "--json"]);
    json.ok();
    let arr: Vec<serde_json::Value> = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(arr.len(), 2);
}

#[test]
fn patch_id_is_git_patch_id_stable() {
    let env = TestEnv::new();
    let dir = env.repo("r", &[("a.txt", "one\ntwo\n"), ("b.txt", "b\n")]);
    env.write_files(&dir, &[("a.txt", "one\n2\nthree\n"), ("c/d.txt", "new\n")]);
    std::fs::remove_file(dir.join("b.txt")).unwrap();
    env.commit_all(&dir, "change");
    let repo = open(&dir);
    for rev in ["HEAD", "HEAD~1"] {
        let oid = repo.revparse_single(rev).unwrap().id();
        let ours = notes::patch_id(&repo, oid).unwrap().unwrap();
        let diff = git_stdout(
            &env,
            &dir,
            &["diff-tree", "-p", "--root", "--no-renames", rev],
        );
        let mut child = env
            .command("git", &dir)
            .args(["patch-id", "--stable"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(diff.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let theirs = String::from_utf8(out.stdout).unwrap();
        assert_eq!(
            theirs.split_whitespace().next(),
            Some(ours.as_str()),
            "{rev}"
        );
    }
    // An empty commit has no patch id.
    env.git(&dir, &["commit", "-q", "--allow-empty", "-m", "empty"])
        .ok();
    let repo = open(&dir);
    let head = repo.head().unwrap().target().unwrap();
    assert_eq!(notes::patch_id(&repo, head).unwrap(), None);
}

#[test]
fn eight_concurrent_writers_lose_nothing() {
    let env = TestEnv::new();
    let dir = env.repo("r", &[("a.txt", "a\n")]);
    let head = env.rev_parse(&dir, "HEAD");
    let threads: Vec<_> = (0..8)
        .map(|w| {
            let dir = dir.clone();
            let head = head.clone();
            std::thread::spawn(move || {
                let repo = open(&dir);
                let oid = git2::Oid::from_str(&head).unwrap();
                for i in 0..50 {
                    let mut line = review(
                        &head,
                        None,
                        "APPROVE",
                        &format!("2026-01-01T00:{w:02}:{i:02}.000Z"),
                    );
                    line["run"] = json!(format!("writer-{w}-line-{i}"));
                    notes::append(&repo, oid, &[line]).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let repo = open(&dir);
    let lines = notes::read(&repo, git2::Oid::from_str(&head).unwrap()).unwrap();
    assert_eq!(lines.len(), 400);
    let shown = note_text(&env, &dir, &head);
    assert_eq!(shown.lines().count(), 400);
    // No scratch refs are left behind.
    let refs = git_stdout(&env, &dir, &["for-each-ref", "refs/triad/"]);
    assert_eq!(refs, "");
}

/// `n` commits on main, each with a note on `notes_ref`, written by `git fast-import` (which
/// fans the notes tree out once there are more than 255 notes).
pub fn fast_import_noted(
    env: &TestEnv,
    dir: &Path,
    n: usize,
    notes_ref: &str,
    note: impl Fn(usize) -> String,
) {
    let mut s = String::new();
    let data = |s: &mut String, text: &str| s.push_str(&format!("data {}\n{text}\n", text.len()));
    for i in 1..=n {
        s.push_str(&format!(
            "commit refs/heads/main\nmark :{i}\ncommitter T <t@example.com> {} +0000\n",
            1_700_000_000 + i
        ));
        data(&mut s, &format!("commit {i}"));
        s.push_str("M 100644 inline file.txt\n");
        data(&mut s, &format!("line {i}\n"));
    }
    s.push_str(&format!(
        "commit {notes_ref}\ncommitter T <t@example.com> 1700000000 +0000\n"
    ));
    data(&mut s, "notes");
    for i in 1..=n {
        s.push_str(&format!("N inline :{i}\n"));
        data(&mut s, &note(i));
    }
    let mut child = env
        .command("git", dir)
        .args(["fast-import", "--quiet"])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(s.as_bytes()).unwrap();
    assert!(child.wait().unwrap().success());
}

#[test]
fn append_and_merge_keep_fanout_trees_correct() {
    let env = TestEnv::new();
    let dir = env.repo("r", &[]);
    let line = |i: usize, who: &str| {
        let mut l = review(
            "",
            None,
            "APPROVE",
            &format!("2026-01-01T00:00:{:02}.000Z", i % 60),
        );
        l["run"] = json!(format!("{who}-{i}"));
        notes::canonical_json(&l) + "\n"
    };
    fast_import_noted(&env, &dir, 300, NOTES_REF, |i| line(i, "ours"));
    assert_fanned_out(&env, &dir, "fanned out");

    let repo = open(&dir);
    let map = notes::note_map(&repo).unwrap();
    assert_eq!(map.len(), 300);
    let tip = repo.revparse_single("main").unwrap().id();
    assert_eq!(notes::read(&repo, tip).unwrap().len(), 1);
    add_verdict(&dir, "main", "HALT", "2026-02-01T00:00:00.000Z");
    let shown = note_text(&env, &dir, "main");
    assert_eq!(shown.lines().count(), 2);
    assert_eq!(
        git_stdout(&env, &dir, &["notes", "--ref=triad", "list"])
            .lines()
            .count(),
        300
    );
    assert_fanned_out(&env, &dir, "still fanned out");

    // Another copy of the notes (same commits, other lines on some) merges by union.
    fast_import_noted(&env, &dir, 300, "refs/notes/theirs", |i| {
        if i % 3 == 0 {
            line(i, "theirs")
        } else {
            line(i, "ours")
        }
    });
    let repo = open(&dir);
    let outcome = merge_notes(&repo, NOTES_REF, "refs/notes/theirs").unwrap();
    assert!(
        matches!(outcome, notes::merge::MergeOutcome::Merged { .. }),
        "{outcome:?}"
    );
    let merged = notes::note_map(&repo).unwrap();
    assert_eq!(merged.len(), 300);
    let mut total = 0;
    for commit in merged.keys() {
        total += notes::read(&repo, *commit).unwrap().len();
    }
    // 300 "ours" lines, 100 "theirs" lines, and the HALT appended above.
    assert_eq!(total, 401);
    let parents = git_stdout(&env, &dir, &["rev-list", "--parents", "-1", NOTES_REF]);
    assert_eq!(
        parents.split_whitespace().count(),
        3,
        "a merge commit with both tips"
    );
    let fsck = env.git(&dir, &["fsck", "--no-progress"]);
    fsck.ok();
}

/// Processes (not threads) appending at once: the in-process turn-taking does not apply,
/// so this is the compare-and-swap on `refs/notes/triad` alone. Each process records
/// `git triad review --note` verdicts on its own commits; all land on the one notes ref.
#[test]
fn concurrent_processes_lose_no_verdict() {
    let env = TestEnv::new();
    let dir = env.repo("r", &[("a.txt", "a\n")]);
    let mut commits = Vec::new();
    for i in 0..24 {
        env.write_files(&dir, &[(&format!("f{i}.txt"), "x\n")]);
        env.commit_all(&dir, &format!("c{i}"));
        commits.push(env.rev_parse(&dir, "HEAD"));
    }
    let children: Vec<_> = commits
        .chunks(4)
        .map(|mine| {
            let script = mine
                .iter()
                .map(|c| {
                    format!(
                        "\"{}\" review {c} --no-model --note >/dev/null || exit 1",
                        crate::common::bin().display()
                    )
                })
                .collect::<Vec<_>>()
                .join("\n");
            env.command("sh", &dir)
                .args(["-c", &script])
                .spawn()
                .expect("spawn a writer")
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success(), "a writer failed");
    }
    let repo = open(&dir);
    for c in &commits {
        let lines = notes::read(&repo, git2::Oid::from_str(c).unwrap()).unwrap();
        assert_eq!(lines.len(), 1, "the verdict on {c} was lost");
    }
}
