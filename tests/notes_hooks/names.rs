//! Whoever commits a file chooses its name: an arbiter's HALT on a file whose name git allows
//! but the rules for paths a model may write to refuse (`~evil.py`, a line break, a tab, ESC,
//! a backslash, blanks around it, `a:b.py`, `GIT~1/`) stays a HALT, recorded by
//! `git triad review --note` and enforced by the pre-push gate on a real push.

use git_triad::testkit::fake_llm::{FakeServer, Reply, Rule, Script, WireProtocol};
use serde_json::{json, Value};

use super::{add_origin, assert_says, bare_repo, refused_push};
use crate::common::{fake_user_config, TestEnv};

/// The line every file holds, which each HALT quotes.
const DANGER: &str = "os.system(input())";

/// A name, and how the arbiter writes it in its issue.
struct Case {
    name: &'static str,
    written: &'static str,
}

const CASES: &[Case] = &[
    Case {
        name: "~evil.py",
        written: "~evil.py",
    },
    Case {
        name: "a\nb.py",
        written: "a\nb.py",
    },
    // As the diff it was shown spells it (git's quoted form).
    Case {
        name: "c\nd.py",
        written: "\"c\\nd.py\"",
    },
    Case {
        name: "a\tb.py",
        written: "a\tb.py",
    },
    Case {
        name: "esc\u{1b}.py",
        written: "esc\u{1b}.py",
    },
    Case {
        name: "back\\slash.py",
        written: "back\\slash.py",
    },
    Case {
        name: " lead.py",
        written: " lead.py",
    },
    Case {
        name: "trail.py ",
        written: "trail.py ",
    },
    Case {
        name: "a:b.py",
        written: "a:b.py",
    },
    Case {
        name: "GIT~1/x.py",
        written: "GIT~1/x.py",
    },
];

/// The arbiter's HALT for case `i`: one critical security issue on the case's file, quoting
/// its dangerous line; the rule answers only the review of that case (its marker).
fn halting_rule(i: usize, case: &Case) -> Rule {
    let issue = json!({"severity": "critical", "category": "security", "path": case.written,
        "start_line": 2, "end_line": 2, "quote": DANGER,
        "description": "runs whatever the user types", "suggestion": "do not", "evidence": "line 2"});
    Rule::named(format!("case-{i}"))
        .protocol(WireProtocol::OpenAi)
        .model("model-b")
        .contains(format!("marker-{i}-"))
        .reply(Reply::json(json!({"verdict": "HALT", "confidence": 0.9,
            "reasoning": "a shell runs user input", "issues": [issue], "alternatives": []})))
}

/// Commits `dir/file` holding `text` on top of HEAD with git's plumbing (`git mktree`,
/// `git commit-tree`), for a name git's index refuses; the branch moves, the work tree not.
fn commit_by_mktree(
    env: &TestEnv,
    work: &std::path::Path,
    dir: &str,
    file: &str,
    text: &str,
    message: &str,
) {
    let run = |args: &[&str], stdin: &str| {
        let out = env
            .command("git", work)
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .and_then(|mut c| {
                use std::io::Write;
                c.stdin.take().unwrap().write_all(stdin.as_bytes())?;
                c.wait_with_output()
            })
            .unwrap();
        assert!(out.status.success(), "git {args:?}");
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    let blob = run(&["hash-object", "-w", "--stdin"], text);
    let sub = run(&["mktree"], &format!("100644 blob {blob}\t{file}\n"));
    let mut top = run(&["ls-tree", "HEAD"], "");
    top.push_str(&format!("\n040000 tree {sub}\t{dir}\n"));
    let tree = run(&["mktree"], &top);
    let commit = run(&["commit-tree", &tree, "-p", "HEAD", "-m", message], "");
    run(&["update-ref", "HEAD", &commit], "");
}

#[test]
fn a_halt_on_any_name_git_allows_stays_a_halt() {
    let rules = CASES
        .iter()
        .enumerate()
        .map(|(i, c)| halting_rule(i, c))
        .collect();
    let server = FakeServer::start_blocking(Script::new(rules)).unwrap();
    let mut env = TestEnv::new();
    env.write_user_config(&fake_user_config(&server.base_url()));
    env.set("FAKE_OPENAI_KEY", "sk-fake-openai-key-for-tests");
    let bare = bare_repo(&env, "remote.git", &["-b", "main"]);
    let work = env.repo("work", &[("README.md", "a project\n")]);
    add_origin(&env, &work, &bare);
    env.triad(&work, &["init", "--no-trust"]).ok();
    env.git(&work, &["push", "-q", "origin", "main"]).ok();

    for (i, case) in CASES.iter().enumerate() {
        let text = format!("import os  # marker-{i}-\n{DANGER}\n");
        let message = format!("Add case {i}");
        match case.name.split_once('/') {
            // git refuses `GIT~1/` in its index (it is `.git` on NTFS): built with mktree.
            Some((dir, file)) => commit_by_mktree(&env, &work, dir, file, &text, &message),
            None => {
                std::fs::write(work.join(case.name), text).unwrap();
                env.git(&work, &["add", "--", case.name]).ok();
                env.git(&work, &["commit", "-q", "-m", &message]).ok();
            }
        }
        let r = env.triad(&work, &["review", "--note", "--format", "json"]);
        // A HALT exits 3, with the review on stdout.
        let v: Value = serde_json::from_str(&r.expect_code(3).stdout).unwrap();
        assert_eq!(v["verdict"], "HALT", "{:?}: {v}", case.name);
        let issue = v["issues"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["source"] == "model")
            .unwrap_or_else(|| panic!("{v}"));
        assert_eq!(issue["path"], case.name, "{v}");
        assert_eq!(issue["demoted"], Value::Null, "{v}");
        assert_eq!(issue["start_line"], 2, "{v}");
        let note = env.git(&work, &["notes", "--ref=triad", "show", "HEAD"]);
        assert!(
            note.ok().stdout.contains("\"verdict\":\"HALT\""),
            "{}",
            note.stdout
        );
    }
    let push = refused_push(&env, &work, &["push", "origin", "main"]);
    assert_says(
        &push.stderr,
        &[
            &format!("{} commits have a verdict", CASES.len()),
            "Add case 0",
            "critical ~evil.py:2",
            "critical a^Jb.py:2",
        ],
    );
    assert_eq!(
        env.git(&bare, &["rev-parse", "main"]).ok().stdout.trim(),
        env.git(&work, &["rev-parse", "origin/main"])
            .ok()
            .stdout
            .trim()
    );
}
