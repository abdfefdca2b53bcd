//! The bookend run the pipeline and budget benches time: a repository of [`MODULES`]
//! Python modules of about 330 lines each, all in the task's scope, and the scripted answers
//! of its 6 model calls (4 stages, the arbiter on architect and verify), each after
//! [`DELAY_MS`].

use std::path::{Path, PathBuf};
use std::time::Duration;

use git_triad::testkit::fake_llm::{FakeServer, Reply, Rule, Script, WireProtocol};
use serde_json::{json, Value};

use super::{command, run_stamped};

/// Modules in the repository.
pub const MODULES: usize = 50;
/// Functions per module.
pub const FUNCS_PER_MODULE: usize = 25;
/// How long the scripted server waits before every answer.
pub const DELAY_MS: u64 = 1000;
/// Model calls of one run.
pub const CALLS: usize = 6;

/// The committed TaskSpec.
pub const TASK: &str = r#"title = "Add a limit to the scaling helpers"
description = "The scaling helpers in pkg/ need an optional upper limit."
acceptance = ["func_00_00 accepts limit=None", "tests cover the limit"]

[[requirements]]
id = "R1"
text = "func_00_00, func_01_00 and func_02_00 accept an optional limit"

[scope]
include = ["pkg/**", "tests/**"]
"#;

/// One fake OpenAI provider; stages use `model-a`, the arbiter `model-b`.
pub fn user_config(base: &str) -> String {
    let model = "provider = \"fake-openai\"\ncontext_window = 128000\nmax_output_tokens = 8000\nprice_in = 1.0\nprice_out = 2.0\n";
    let mut s = format!(
        "[providers.fake-openai]\nprotocol = \"openai\"\nbase_url = \"{base}/v1\"\napi_key_env = \"FAKE_OPENAI_KEY\"\n\n[models.model-a]\n{model}\n[models.model-b]\n{model}\n"
    );
    for role in ["architect", "implementer", "refactorer", "verifier"] {
        s.push_str(&format!("[roles.{role}]\nmodels = [\"model-a\"]\n"));
    }
    s.push_str("[roles.arbiter]\nmodels = [\"model-b\"]\n\n[transport]\ntimeout_secs = 30\n");
    s
}

/// The modules, a README and the committed TaskSpec.
pub fn write_repo(repo: &Path) {
    std::fs::create_dir_all(repo.join("pkg")).unwrap();
    std::fs::create_dir_all(repo.join(".triad/tasks")).unwrap();
    std::fs::write(repo.join(".triad/tasks/bench.toml"), TASK).unwrap();
    std::fs::write(repo.join("README.md"), "# bench\n").unwrap();
    for m in 0..MODULES {
        let mut text = format!("\"\"\"Module {m:02}: scaling helpers.\"\"\"\n\nimport math\n");
        for f in 0..FUNCS_PER_MODULE {
            text.push_str(&format!(
                "\n\ndef func_{m:02}_{f:02}(values, factor={f}):\n    \"\"\"Scale the values by {f} and sum the ones above {m}.\"\"\"\n    total = 0\n    for v in values:\n        scaled = v * factor + {f}\n        if scaled > {m}:\n            total += scaled\n        else:\n            total -= math.sqrt(abs(scaled))\n    return total\n"
            ));
        }
        std::fs::write(repo.join(format!("pkg/mod_{m:02}.py")), text).unwrap();
    }
}

/// A stage answer: SEARCH/REPLACE blocks plus the JSON metadata block.
pub fn answer(blocks: &str, extra: Value) -> String {
    let mut meta = json!({"summary": "bench stage", "confidence": 0.8, "outcome": "APPROVE"});
    if let (Value::Object(m), Value::Object(e)) = (&mut meta, extra) {
        m.extend(e);
    }
    format!("{blocks}\n```json\n{meta}\n```\n")
}

/// An edit adding a `limit` parameter to `func_<m>_00`.
pub fn add_limit(m: usize) -> String {
    format!(
        "pkg/mod_{m:02}.py\n<<<<<<< SEARCH\ndef func_{m:02}_00(values, factor=0):\n=======\ndef func_{m:02}_00(values, factor=0, limit=None):\n>>>>>>> REPLACE\n"
    )
}

pub fn rules() -> Vec<Rule> {
    let test_file = "tests/test_limits.py\n<<<<<<< SEARCH\n=======\nfrom pkg.mod_00 import func_00_00\n\n\ndef test_limit():\n    assert func_00_00([1, 2], limit=3) == func_00_00([1, 2])\n>>>>>>> REPLACE\n";
    let summary = json!({"implementation_summary": {"task_echo": "limits", "requirements": [{"id": "R1", "evidence": "pkg/mod_00.py:func_00_00"}],
        "files_created": ["tests/test_limits.py"], "files_modified": ["pkg/mod_00.py"], "test_coverage": ["test_limit"],
        "omissions": [], "deviations": []}});
    let stages = [
        ("architect", answer(&add_limit(0), json!({}))),
        (
            "implementer",
            answer(&(add_limit(1) + &add_limit(2)), json!({})),
        ),
        ("refactorer", answer(test_file, json!({}))),
        ("verifier", answer("Looks complete.", summary)),
    ];
    let review = json!({"verdict": "APPROVE", "confidence": 0.9, "reasoning": "fine",
                        "issues": [], "alternatives": []});
    let mut rules: Vec<Rule> = stages
        .into_iter()
        .map(|(role, text)| {
            Rule::named(role)
                .protocol(WireProtocol::OpenAi)
                .model("model-a")
                .contains(format!("ROLE: {role}"))
                .reply(Reply::text(text).delay_ms(DELAY_MS))
        })
        .collect();
    for stage in ["architect", "verify"] {
        rules.push(
            Rule::named(format!("arbiter-{stage}"))
                .protocol(WireProtocol::OpenAi)
                .model("model-b")
                .contains(format!("STAGE REVIEWED: {stage}"))
                .reply(Reply::json(review.clone()).delay_ms(DELAY_MS)),
        );
    }
    rules
}

/// A fresh home (its `config.toml` pointing at the server at `base`) and, in it, the
/// repository with one commit.
pub fn setup(name: &str, base: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::Builder::new()
        .prefix(&format!("triad-bench-{name}-"))
        .tempdir()
        .expect("tempdir");
    let home = tmp.path();
    std::fs::write(home.join("config.toml"), user_config(base)).unwrap();
    let repo = home.join("repo");
    write_repo(&repo);
    for args in [
        &["init", "-q", "-b", "main"][..],
        &["add", "-A"],
        &["commit", "-q", "-m", "initial"],
    ] {
        let out = command("git", &repo, home).args(args).output().unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
    }
    (tmp, repo)
}

/// Sets up a fresh server, config and repository, then times one `git triad run`; exits 1
/// when the run does not end approved after [`CALLS`] calls. `verbose` prints its progress,
/// stamped with the time since its start.
pub fn timed_run(name: &str, verbose: bool) -> Duration {
    let server = FakeServer::start_blocking(Script::new(rules())).expect("fake server");
    let (tmp, repo) = setup(name, &server.base_url());
    let home = tmp.path();
    let bin = env!("CARGO_BIN_EXE_git-triad");
    let mut cmd = command(bin, &repo, home);
    cmd.args(["run", "--task", "bench", "--arbiter", "bookend", "--json"]);
    let (out, stderr, wall) = run_stamped(cmd);

    if verbose {
        eprint!("{stderr}");
    }
    let result: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let calls = server
        .requests()
        .iter()
        .filter(|r| r.protocol.is_some())
        .count();
    if !out.status.success() || result["status"] != "approved" || calls != CALLS {
        eprintln!(
            "FAIL: the run did not go as scripted (exit {:?}, status {}, {calls} model calls)\n{stderr}",
            out.status.code(),
            result["status"]
        );
        std::process::exit(1);
    }
    wall
}
