//! Keys never reach notes, records or logs; private files never leave the machine.
//!
//! The scripted server plays a provider that echoes the key it was sent in every shape it
//! can (error bodies in a 200, a non-JSON body, non-string content, a model answer, base64 and
//! percent-encodings, `\u` escapes), and a repository holds private files in a task's scope.
//! Every place git triad writes or prints is then searched for the canaries, and the user's
//! own tree, index and HEAD must be as they were.

use std::collections::BTreeMap;
use std::path::Path;

use git_triad::redact::encode::{base64_cores, json_unicode, percent};
use git_triad::testkit::fake_llm::{Reply, Rule, WireProtocol};
use serde_json::json;

use crate::common::{fake_user_config, Run, TestEnv};
use crate::pipeline::{
    answer, arbiter, architect_answer, implement_answer, refactor_answer, review, run_json, stage,
    verify_answer, Scenario,
};

/// The key of the provider every stage and arbiter model of the test config uses.
const KEY: &str = "sk-canary-7Qm2Xv9LpR4tZ8Wc1Nb6Yd3Hf5Jk0Ga";
/// The key of a configured provider that is never called: registered all the same. (Test
/// keys are written in two pieces so no scanner mistakes this file for a leak.)
const IDLE_KEY: &str = concat!("sk-ant-", "api03-idle9Kq3Vw7Zp2Lx8Rt4Yc6Nb1Md5Hs0");

/// Base64 with the standard alphabet and padding, written out here so the test does not
/// trust the encoder it checks.
fn b64(text: &str) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in text.as_bytes().chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(A[(n >> (18 - 6 * i)) as usize & 63] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// What of `key` `text` shows, if anything: the key, 8 characters of its random part, or a
/// base64, percent or `\u` form of it.
fn leak(text: &str, key: &str) -> Option<String> {
    let random = &key[key.rfind('-').unwrap() + 1..];
    let mut needles: Vec<String> = (0..=random.len() - 8)
        .map(|i| random[i..i + 8].to_string())
        .collect();
    needles.extend(base64_cores(key.as_bytes()));
    needles.push(percent(key, true, true));
    needles.push(json_unicode(key, false));
    needles.into_iter().find(|n| text.contains(n.as_str()))
}

#[track_caller]
fn assert_clean(what: &str, text: &str) {
    for key in [KEY, IDLE_KEY] {
        if let Some(n) = leak(text, key) {
            let at = text.find(&n).unwrap();
            let from = at.saturating_sub(200);
            panic!(
                "{what} shows `{n}` of a key: …{}…",
                &text[from..(at + 300).min(text.len())]
            );
        }
    }
}

/// Every file under `dir` as (relative path, lossy text), `.git/` included.
fn files_under(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let rel = p.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
            if e.file_type().unwrap().is_dir() {
                stack.push(p);
            } else if let Ok(bytes) = std::fs::read(&p) {
                out.insert(rel, String::from_utf8_lossy(&bytes).into_owned());
            }
        }
    }
    out
}

/// Asserts that nothing git triad could have written or printed shows a key: the commands'
/// output, every git object (reachable or not), every ref, every file under `.git/` and the
/// work tree, and `git triad log` of every run.
fn assert_nothing_leaked(env: &TestEnv, repo: &Path, runs: &[&Run]) {
    for (i, r) in runs.iter().enumerate() {
        assert_clean(&format!("stdout of command {i}"), &r.stdout);
        assert_clean(&format!("stderr of command {i}"), &r.stderr);
    }
    let objects = env.git(repo, &["cat-file", "--batch-all-objects", "--batch"]);
    objects.ok();
    assert!(
        objects.stdout.contains("triad run"),
        "no run record objects"
    );
    assert_clean("the git objects", &objects.stdout);
    assert_clean("the refs", &env.git(repo, &["for-each-ref"]).stdout);
    for (path, text) in files_under(repo) {
        assert_clean(&path, &text);
    }
    let ledger = std::fs::read_to_string(repo.join(".git/triad/ledger.jsonl")).unwrap();
    assert!(ledger.contains("\"outcome\":\"ok\""), "{ledger}");
    let list = env.triad(repo, &["log"]);
    assert_clean("git triad log", &list.ok().stdout);
    for id in env
        .git(
            repo,
            &[
                "for-each-ref",
                "--format=%(refname:strip=3)",
                "refs/triad/runs",
            ],
        )
        .stdout
        .lines()
    {
        for format in ["text", "json"] {
            let shown = env.triad(repo, &["log", id, "--format", format]);
            assert_clean(&format!("git triad log {id}"), &shown.ok().all());
        }
    }
}

/// An OpenAI chat completion whose assistant content is `content` (any JSON value), written
/// as raw text so its escapes are the server's choice.
fn completion_raw(content: &str) -> String {
    format!(
        "{{\"model\":\"model-c\",\"choices\":[{{\"message\":{{\"role\":\"assistant\",\"content\":{content}}},\"finish_reason\":\"stop\"}}],\"usage\":{{\"prompt_tokens\":9,\"completion_tokens\":9}}}}"
    )
}

/// A rule for model-c (the fallback of architect and implementer) answering `role`.
fn fallback(name: &str, role: &str, replies: Vec<Reply>) -> Rule {
    let mut r = Rule::named(name)
        .protocol(WireProtocol::OpenAi)
        .model("model-c")
        .contains(format!("ROLE: {role}"));
    for reply in replies {
        r = r.reply(reply);
    }
    r
}

#[test]
fn a_provider_echoing_keys_leaves_no_trace_of_them() {
    // The key as a hostile server echoes it, JSON-escaped on the wire: `\u0073k-…`.
    let escaped_key = format!("\\u0073{}", &KEY[1..]);
    let basic = b64(&format!(":{KEY}"));
    let bearer = b64(&format!("Bearer {KEY}"));
    let echoed_answer = answer(
        &format!(
            "calc.py\n<<<<<<< SEARCH\ndef add(a, b):\n    return a + b\n=======\ndef add(a, b):\n    return a + b\n\n\nAPI_KEY = \"{KEY}\"\nTOKEN = \"{bearer}\"\n\n\ndef sub(a, b):\n    \"\"\"Return a minus b.\"\"\"\n    raise NotImplementedError\n>>>>>>> REPLACE\n"
        ),
        &format!("scaffold sub() for {KEY} ({basic}, {})", percent(KEY, true, false)),
    );
    let rules = vec![
        // A 200 whose body is an error naming the key: the architect fails over to model-c.
        stage(
            "architect",
            vec![Reply {
                body: Some(json!({"error": {"message": format!("Incorrect API key: Bearer {KEY}")}})),
                ..Reply::default()
            }],
        ),
        fallback(
            "architect-fallback",
            "architect",
            vec![
                // Not JSON at all, then non-string content with an escaped key, then an answer
                // whose edit and summary carry the key in several forms.
                Reply {
                    raw: Some(format!("<html>proxy refused key {KEY} / {basic}</html>")),
                    ..Reply::default()
                },
                Reply {
                    raw: Some(completion_raw(&format!("{{\"echo\":\"{escaped_key}\"}}"))),
                    ..Reply::default()
                },
                Reply::text(echoed_answer),
            ],
        ),
        // A refused key, described in base64 and percent-encoding, in an error status.
        stage(
            "implement",
            vec![Reply {
                status: 401,
                raw: Some(format!(
                    "{{\"error\":{{\"message\":\"invalid credentials {bearer} for {}; also {}\"}}}}",
                    percent(KEY, true, true),
                    json_unicode(KEY, true).replace('\\', "\\\\"),
                )),
                ..Reply::default()
            }],
        ),
        fallback(
            "implement-fallback",
            "implementer",
            vec![Reply::text(implement_answer())],
        ),
        stage("refactor", vec![Reply::text(refactor_answer())]),
        stage("verify", vec![Reply::text(verify_answer())]),
        // The arbiter's reasoning echoes both keys, the one never used included.
        arbiter(
            "architect",
            vec![json!({"verdict": "APPROVE", "confidence": 0.9,
                "reasoning": format!("the key {KEY} and {IDLE_KEY} look fine"),
                "issues": [], "alternatives": []})],
        ),
        arbiter("verify", vec![review("APPROVE", json!([]))]),
    ];
    let mut s = Scenario::new(rules);
    s.env.set("FAKE_OPENAI_KEY", KEY);
    s.env.set("FAKE_ANTHROPIC_KEY", IDLE_KEY);
    // The verify command cannot get a key from its environment; it reads one from a file.
    std::fs::write(s.env.home().join("key.txt"), format!("{KEY}\n")).unwrap();
    std::fs::write(s.env.home().join("key.b64"), format!("{}\n", b64(KEY))).unwrap();
    s.env.write_user_config(&format!(
        "{}\n[verify]\ncommand = \"cat \\\"$HOME/key.txt\\\" \\\"$HOME/key.b64\\\"; echo verified\"\ntimeout_secs = 60\n",
        fake_user_config(&s.server.base_url())
            .replace(
                "[roles.architect]\nmodels = [\"model-a\"]",
                "[roles.architect]\nmodels = [\"model-a\", \"model-c\"]"
            )
            .replace(
                "[roles.implementer]\nmodels = [\"model-a\"]",
                "[roles.implementer]\nmodels = [\"model-a\", \"model-c\"]"
            )
    ));
    let before = crate::common::user_state(&s.env, &s.repo);

    let r = s.run(&[]);
    r.ok();
    let out = run_json(&r.stdout);
    assert_eq!(out["status"], "approved", "{out}");
    // Every echo was met: the fallbacks answered, the malformed bodies were retried.
    assert_eq!(s.requests_for("architect-fallback").len(), 3);
    assert_eq!(s.requests_for("implement-fallback").len(), 1);
    // The key went out only where it belongs: in the header, never in a body.
    let requests = s.server.requests();
    let bearer_header = format!("Bearer {KEY}");
    assert!(requests
        .iter()
        .all(|q| q.headers.get("authorization") == Some(&bearer_header)));
    for q in &requests {
        assert_clean("a request body", &q.body);
    }
    // The verifier and the arbiter saw that the command ran, not what it printed.
    let verify_prompt = s.requests_for("verify")[0].to_string();
    assert!(verify_prompt.contains("verified"), "{verify_prompt}");
    assert!(verify_prompt.contains("[redacted]"), "{verify_prompt}");
    // What the model wrote was committed with the key taken out.
    let branch = out["branch"].as_str().unwrap();
    let calc = s.git(&["show", &format!("{branch}:calc.py")]);
    assert!(calc.contains("API_KEY = \"[redacted]\""), "{calc}");

    assert_nothing_leaked(&s.env, &s.repo, &[&r]);
    assert_eq!(crate::common::user_state(&s.env, &s.repo), before);
}

/// Files a task's scope names that must never reach a model, each with a canary.
const PRIVATE: &[(&str, &str)] = &[
    (".env", "SECRET_TOKEN=env-canary-5be81f0c2d\n"),
    (
        "id_rsa",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nssh-canary-0a7d3c9e41\n-----END OPENSSH PRIVATE KEY-----\n",
    ),
    (
        "config/credentials",
        "[default]\naws_secret_access_key = cred-canary-91ad3e\n",
    ),
    (".npmrc", "//registry.npmjs.org/:_authToken=npm-canary-4c7e22\n"),
    (
        "settings.py",
        "# settings-canary-1d9f\nAWS_ACCESS_KEY_ID = \"AKIAIOSFODNN7EXAMPLE\"\n",
    ),
    ("private-notes/plan.md", "notes-canary-62b0f3\n"),
];

/// The canaries of [`PRIVATE`] (and the AWS-shaped key) one text must not hold.
fn private_leak(text: &str) -> Option<&'static str> {
    [
        "env-canary-5be81f0c2d",
        "ssh-canary-0a7d3c9e41",
        "cred-canary-91ad3e",
        "npm-canary-4c7e22",
        "settings-canary-1d9f",
        "AKIAIOSFODNN7EXAMPLE",
        "notes-canary-62b0f3",
    ]
    .into_iter()
    .find(|c| text.contains(c))
}

const PRIVATE_TASK: &str = r#"title = "Add subtraction"
description = "calc.py needs a sub function."

[[requirements]]
id = "R1"
text = "sub(a, b) returns a - b"

[scope]
include = ["calc.py", "tests/**", ".env", "id_rsa", "config/**", ".npmrc", "settings.py", "private-notes/**"]
"#;

#[test]
fn private_files_never_reach_a_model_and_cannot_be_edited() {
    let env_edit = answer(
        "calc.py\n<<<<<<< SEARCH\n    raise NotImplementedError\n=======\n    return a - b\n>>>>>>> REPLACE\n\n.env\n<<<<<<< SEARCH\nSECRET_TOKEN=env-canary-5be81f0c2d\n=======\nSECRET_TOKEN=stolen\n>>>>>>> REPLACE\n",
        "implement sub() and tidy .env",
    );
    let rules = vec![
        stage("architect", vec![Reply::text(architect_answer())]),
        stage(
            "implement",
            vec![Reply::text(env_edit), Reply::text(implement_answer())],
        ),
        stage("refactor", vec![Reply::text(refactor_answer())]),
        stage("verify", vec![Reply::text(verify_answer())]),
        arbiter("architect", vec![review("APPROVE", json!([]))]),
        arbiter("verify", vec![review("APPROVE", json!([]))]),
        arbiter("review", vec![review("APPROVE", json!([]))]),
    ];
    let s = Scenario::new(rules);
    // The user withholds a folder of their own; the clone's committed config tries to drop
    // that pattern (built-in ones it cannot even name).
    s.env.write_user_config(&format!(
        "{}\n[privacy]\nwithhold = [\"private-notes/**\"]\n",
        fake_user_config(&s.server.base_url())
    ));
    s.env.write_files(&s.repo, PRIVATE);
    s.env.write_files(
        &s.repo,
        &[
            (".triad/tasks/private.toml", PRIVATE_TASK),
            (".triad/config.toml", "[privacy]\nwithhold = []\n"),
        ],
    );
    s.env.commit_all(&s.repo, "private files in scope");
    let before = crate::common::user_state(&s.env, &s.repo);

    let shown = s
        .env
        .triad(&s.repo, &["config", "show", "--origin", "privacy"]);
    shown.ok();
    assert!(
        shown
            .stdout
            .starts_with("privacy.withhold = [\"private-notes/**\"]  # "),
        "{}",
        shown.stdout
    );
    assert!(
        shown
            .stdout
            .contains("# ignored `privacy.withhold = []` from "),
        "{}",
        shown.stdout
    );

    let r = s
        .env
        .triad(&s.repo, &["run", "--task", "private", "--json"]);
    r.ok();
    let out = run_json(&r.stdout);
    assert_eq!(out["status"], "approved", "{out}");
    assert!(
        r.stderr.contains("may only add private-file patterns"),
        "{}",
        r.stderr
    );

    // The prompt lists every private file as withheld, and shows calc.py.
    let architect = s.requests_for("architect")[0].to_string();
    for (path, _) in PRIVATE {
        assert!(
            architect.contains(&format!("{path} [withheld: private file]")),
            "{path} not withheld: {architect}"
        );
    }
    assert!(architect.contains("def add(a, b):"), "{architect}");
    // The edit to .env was refused with the reason, and nothing was applied.
    let retry = s.requests_for("implement")[1].to_string();
    assert!(
        retry.contains(
            "a private file (its name matches the private-file pattern `.env`), withheld from models and never edited: leave it out of your answer: `.env`"
        ),
        "{retry}"
    );
    let branch = out["branch"].as_str().unwrap();
    assert_eq!(
        s.git(&["rev-parse", &format!("{branch}:.env")]),
        s.git(&["rev-parse", "main:.env"])
    );
    // The attempt is on the record.
    let id = out["run"].as_str().unwrap();
    let log = s.env.triad(&s.repo, &["log", id]);
    assert!(
        log.ok()
            .stdout
            .contains("edits_failed — refused edits to private files: .env"),
        "{}",
        log.stdout
    );

    // `git triad review` of a commit touching private files shows the arbiter no content.
    s.env.write_files(
        &s.repo,
        &[
            (
                ".env",
                "SECRET_TOKEN=env-canary-5be81f0c2d\nMORE=env-canary-5be81f0c2d\n",
            ),
            (
                "settings.py",
                "AWS_ACCESS_KEY_ID = \"AKIAIOSFODNN7EXAMPLE\"\nDEBUG = 1\n",
            ),
            (
                "calc.py",
                "def add(a, b):\n    return a + b\n\n# reviewed\n",
            ),
        ],
    );
    s.env.commit_all(&s.repo, "touch private files");
    let reviewed = s.env.triad(&s.repo, &["review", "HEAD"]);
    reviewed.ok();
    let asked = s.requests_for("arbiter-review")[0].to_string();
    assert!(
        asked.contains("=== .env (modified)\\n[withheld: private file]"),
        "{asked}"
    );
    assert!(
        asked.contains("=== settings.py (modified)\\n[withheld: private file]"),
        "{asked}"
    );
    assert!(asked.contains("# reviewed"), "{asked}");

    for q in s.server.requests() {
        assert_eq!(private_leak(&q.body), None, "a request body: {}", q.body);
    }
    let after = crate::common::user_state(&s.env, &s.repo);
    let changed: Vec<&String> = after
        .iter()
        .filter(|(k, v)| before.get(*k) != Some(v))
        .map(|(k, _)| k)
        .collect();
    // Only the commit this test made itself moved HEAD and the files it wrote.
    assert!(
        changed.iter().all(|k| [
            ".env",
            "settings.py",
            "calc.py",
            ".git/index",
            ".git/HEAD",
            "HEAD-oid"
        ]
        .contains(&k.as_str())),
        "{changed:?}"
    );
}
