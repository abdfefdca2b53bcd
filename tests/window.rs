//! Every prompt fits its window: a request that cannot fit is refused before it is sent, with
//! the figures; a stage whose files do not fit is sent shrunk (full texts → hunks with their
//! enclosing symbols → outlines) and says what it left out; servers' usage calibrates the
//! estimate, kept in the local ledger.

use std::path::PathBuf;
use std::sync::Arc;

use git_triad::config::{LoadOptions, LoadedConfig, Role};
use git_triad::model::budget::{CallRecord, Ledger};
use git_triad::model::{ChatRequest, ModelClient, ModelError};
use git_triad::testkit::fake_llm::{FakeServer, Reply, Rule, Script};
use serde_json::Value;

use crate::common::{fake_user_config, TestEnv};
use crate::pipeline::{answer, happy_rules, run_json, stage, TASK};

/// A repository with `files` and the add-sub TaskSpec, against a server following `script`,
/// the models as the fake user config has them, changed by `-c` `overrides`.
struct Setup {
    env: TestEnv,
    server: FakeServer,
    repo: PathBuf,
    overrides: Vec<String>,
}

impl Setup {
    fn new(script: Script, files: &[(&str, &str)], overrides: &[&str]) -> Setup {
        let server = FakeServer::start_blocking(script).expect("fake server");
        let mut env = TestEnv::new();
        env.write_user_config(&fake_user_config(&server.base_url()));
        env.set("FAKE_OPENAI_KEY", "sk-fake-openai-key-for-tests");
        let repo = env.repo("proj", files);
        Setup {
            env,
            server,
            repo,
            overrides: overrides.iter().map(|s| s.to_string()).collect(),
        }
    }

    fn triad(&self, args: &[&str]) -> crate::common::Run {
        let mut all: Vec<&str> = Vec::new();
        for o in &self.overrides {
            all.extend(["-c", o.as_str()]);
        }
        all.extend_from_slice(args);
        self.env.triad(&self.repo, &all)
    }

    fn record(&self, run: &str) -> Value {
        let text = self
            .env
            .git(
                &self.repo,
                &["show", &format!("refs/triad/runs/{run}:run.json")],
            )
            .ok()
            .stdout
            .clone();
        serde_json::from_str(&text).unwrap()
    }
}

#[test]
fn a_task_too_large_for_the_window_is_refused_before_any_request_with_the_figures() {
    let mut task = String::from(
        "title = \"Everything at once\"\ndescription = \"calc.py needs many functions.\"\n",
    );
    for i in 0..20_000 {
        task.push_str(&format!(
            "\n[[requirements]]\nid = \"R{i}\"\ntext = \"f{i}(x) returns x plus {i}, documented and tested\"\n"
        ));
    }
    let s = Setup::new(
        Script::new(happy_rules()),
        &[
            ("calc.py", "def add(a, b):\n    return a + b\n"),
            (".triad/tasks/huge.toml", &task),
        ],
        &["models.model-a.context_window=10000"],
    );
    let run = s.triad(&["run", "--task", "huge", "--json"]);
    run.expect_code(1);
    assert_eq!(
        s.server.requests().len(),
        0,
        "nothing may reach the server: {:?}",
        s.server.requests().first().map(|r| &r.path)
    );
    let all = run.all();
    assert!(
        all.contains("does not fit the context window")
            && all.contains("10000-token window of model-a"),
        "{all}"
    );
    // The figures: the prompt's estimated tokens, far over the window.
    let tokens: u64 = all
        .split("about ")
        .skip(1)
        .find_map(|rest| rest.split(' ').next()?.parse().ok())
        .unwrap_or_else(|| panic!("no token figure in {all}"));
    assert!(tokens > 200_000, "{tokens}: {all}");
    assert!(all.contains("make the input smaller"), "{all}");
    // Nothing was sent, so nothing is kept: no run record, no branch (issue #45).
    assert!(
        run.stdout.is_empty() && all.contains("nothing was kept (no run, no branch)"),
        "{all}"
    );
    let runs = s.triad(&["log"]);
    assert!(runs.ok().stdout.contains("no runs yet"), "{}", runs.stdout);
}

/// calc.py with `sub` to be implemented, a function long enough that a change inside it
/// makes a hunk it wholly contains, and `n` helpers after it (about 90 bytes each).
fn big_module(n: usize) -> String {
    let mut text = String::from(
        "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    \"\"\"Return a minus b.\"\"\"\n    checked = (a, b)\n    first = checked[0]\n    second = checked[1]\n    raise NotImplementedError\n    step_one = first\n    step_two = second\n    step_three = None\n    step_four = None\n    return None\n",
    );
    for i in 0..n {
        text.push_str(&format!(
            "\n\ndef helper_{i:03}(values):\n    \"\"\"Sum of the values plus {i}.\"\"\"\n    return sum(values) + {i}\n"
        ));
    }
    text
}

#[test]
fn a_stage_whose_files_do_not_fit_is_sent_shrunk_within_the_window_and_says_what_it_left_out() {
    // The server enforces model-a's window as a real one does (its own count: a quarter of
    // the request's characters, plus max_tokens): a request over it would get a 400 and the
    // run would fail.
    let window = 5000;
    let architect = answer(
        "calc.py\n<<<<<<< SEARCH\n    step_two = second\n=======\n    step_two = second  # the subtrahend\n>>>>>>> REPLACE\n",
        "name the subtrahend",
    );
    let implement = answer(
        "calc.py\n<<<<<<< SEARCH\n    raise NotImplementedError\n=======\n    return first - second\n>>>>>>> REPLACE\n",
        "implement sub()",
    );
    let mut rules = happy_rules();
    rules[0] = stage("architect", vec![Reply::text(architect)]);
    rules[1] = stage("implement", vec![Reply::text(implement)]);
    let script = Script::new(rules).window("model-a", window);
    let calc = big_module(150);
    let notes = "A line of project notes that nobody needs for this task.\n".repeat(150);
    let s = Setup::new(
        script,
        &[
            ("calc.py", &calc),
            ("docs/notes.md", &notes),
            ("docs/more.md", &notes),
            (".triad/tasks/add-sub.toml", TASK),
        ],
        &[
            &format!("models.model-a.context_window={window}"),
            "models.model-a.max_output_tokens=1000",
        ],
    );
    assert!(
        calc.len() + 2 * notes.len() > 3 * window as usize,
        "the files must not fit"
    );
    let run = s.triad(&["run", "--task", "add-sub", "--json"]);
    run.ok();
    let asked: Vec<_> = s
        .server
        .requests()
        .into_iter()
        .filter(|r| r.model.as_deref() == Some("model-a"))
        .collect();
    assert_eq!(asked.len(), 4, "one request per stage");
    for r in &asked {
        let json = r.json.as_ref().unwrap();
        let max_tokens = json["max_tokens"].as_u64().unwrap();
        assert_eq!(max_tokens, 1000, "the whole answer cap was kept");
        let prompt = r.body.chars().count() as u64 / 4;
        assert!(
            prompt + max_tokens <= window,
            "{}: {prompt} + {max_tokens} over {window}",
            r.rule.as_deref().unwrap_or("?")
        );
    }
    let user = |rule: &str| -> String {
        let r = asked
            .iter()
            .find(|r| r.rule.as_deref() == Some(rule))
            .unwrap();
        r.json.as_ref().unwrap()["messages"][1]["content"]
            .as_str()
            .unwrap()
            .to_string()
    };
    // The architect sees the big module by its outline only; the implementer sees the hunk
    // the architect changed in it, labelled with the function it sits in.
    let architect = user("architect");
    assert!(
        architect.contains("## Left out for lack of room"),
        "{architect}"
    );
    assert!(!architect.contains("Sum of the values plus 149"));
    assert!(
        architect.contains("calc.py: function add (1-2); function sub (5-15); function helper_000"),
        "{architect}"
    );
    let implement = user("implement");
    assert!(
        implement.contains("=== calc.py (modified)")
            && implement.contains("in function sub (lines 5-15)"),
        "{implement}"
    );
    assert!(!implement.contains("Sum of the values plus 149"));
    assert!(
        implement.contains("1 file shown as the hunks this run changed, not in full: calc.py"),
        "{implement}"
    );

    let out = run_json(&run.stdout);
    let id = out["run"].as_str().unwrap();
    let record = s.record(id);
    let implement_attempt = &record["stages"][1]["attempts"][0];
    assert_eq!(
        implement_attempt["left_out"]["as_hunks"],
        serde_json::json!(["calc.py"]),
        "{implement_attempt:#}"
    );
    let log = s.triad(&["log", id]);
    assert!(
        log.stdout
            .contains("prompt: left out for lack of room: 1 file shown as the hunks"),
        "{}",
        log.stdout
    );
}

fn client_for(server: &FakeServer, overrides: &[&str]) -> (ModelClient, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(&path, fake_user_config(&server.base_url())).unwrap();
    let loaded = LoadedConfig::load(&LoadOptions {
        user_file: Some(path),
        overrides: overrides.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    })
    .unwrap();
    let env =
        Arc::new(|name: &str| (name == "FAKE_OPENAI_KEY").then(|| "zqWI-key-3k9".to_string()));
    (ModelClient::new(&loaded.config, env), dir)
}

#[test]
fn a_request_too_large_for_one_model_goes_to_the_next_whose_window_holds_it() {
    let server = FakeServer::start_blocking(Script::new(vec![Rule::named("any")
        .reply(Reply::text("done"))
        .repeat_last(true)]))
    .unwrap();
    let (client, _dir) = client_for(
        &server,
        &[
            "models.model-a.context_window=2000",
            "models.model-b.context_window=8000",
        ],
    );
    let req = ChatRequest::new(None, "word ".repeat(3_000), 500);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let models = vec!["model-a".to_string(), "model-b".to_string()];
    let c = rt
        .block_on(client.chat(Role::Implementer, &models, &req))
        .unwrap();
    assert_eq!(c.model, "model-b");
    let sent = server.requests();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].model.as_deref(), Some("model-b"));
    // Room the lead's review splitting asks for: what is left for more input.
    let room = client.room("model-b", &req).unwrap();
    assert!(room.fits());
    assert_eq!(room.left(), 8000 - room.input - 500);

    let err = rt
        .block_on(client.chat(Role::Implementer, &models[..1], &req))
        .unwrap_err();
    match &err {
        ModelError::TooLarge { overflows, .. } => {
            assert_eq!(overflows[0].window, 2000);
            assert!(overflows[0].input_tokens > 4_000, "{overflows:?}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        server.requests().len(),
        1,
        "the refused request was not sent"
    );
}

#[test]
fn reported_usage_calibrates_the_estimate_and_the_ledger_keeps_it() {
    let server = FakeServer::start_blocking(Script::new(vec![Rule::named("any")
        .reply(Reply::text("done").usage(1_000, 5))
        .repeat_last(true)]))
    .unwrap();
    let (client, dir) = client_for(&server, &[]);
    let ledger = Ledger::new(dir.path().join("ledger.jsonl"));
    let config = LoadedConfig::load(&LoadOptions {
        user_file: Some(dir.path().join("config.toml")),
        ..Default::default()
    })
    .unwrap()
    .config;
    let client = client.with_ledger(ledger.clone(), &config);
    let before = client.estimator("model-a").unwrap();
    assert_eq!(before.bytes_per_token(), 3.0);
    // 4,000 bytes counted as 1,000 tokens: 4 bytes a token, 3.6 with the margin.
    let req = ChatRequest::new(None, "x".repeat(4_000), 100);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(client.chat(Role::Implementer, &["model-a".to_string()], &req))
        .unwrap();
    let after = client.estimator("model-a").unwrap();
    assert!((after.bytes_per_token() - 3.6).abs() < 1e-9, "{after:?}");
    // The same family learns too; the ledger line carries the prompt's bytes.
    assert_eq!(client.estimator("model-c").unwrap(), after);
    let lines: Vec<CallRecord> = ledger.read().unwrap();
    assert_eq!(lines[0].prompt_bytes, 4_000);
    // A new process starts from what the ledger holds.
    let (fresh, _d) = client_for(&server, &[]);
    let fresh = fresh.with_ledger(ledger, &config);
    assert_eq!(fresh.estimator("model-a").unwrap(), after);
}
