//! `git triad bench` over real HTTP: scripted models answer the built-in tasks well or badly,
//! the facts grade them, the measurements land in the user's data directory, and `--report`
//! and `models list` show them.

use std::path::PathBuf;

use git_triad::config::EditFormat;
use git_triad::routing::tasks::{CaseClass, TaskSet};
use git_triad::testkit::fake_llm::{FakeServer, Reply, Rule, Script, WireProtocol};
use serde_json::{json, Value};

use crate::common::{fake_user_config, TestEnv};

/// A model writing whole files on a server that enforces a grammar, like the local ones.
const WHOLE_MODEL: &str = r#"
[models.model-w]
provider = "fake-openai"
context_window = 8192
max_output_tokens = 1024
price_in = 0.0
price_out = 0.0
capabilities = ["json_schema", "gbnf"]
edit_format = "whole"
"#;

/// The metadata block of an answer that did nothing.
const IDLE: &str =
    "I will do this later.\n```json\n{\"summary\": \"later\", \"outcome\": \"APPROVE\"}\n```\n";

fn rule(model: &str, name: &str, marker: &str) -> Rule {
    Rule::named(format!("{model}-{name}"))
        .protocol(WireProtocol::OpenAi)
        .model(model)
        .contains(marker)
}

/// `good` answers every build task with its reference and catches every bug; `idle`
/// changes nothing and approves every change.
fn rules(good: &str, format: EditFormat, idle: &str) -> Vec<Rule> {
    let set = TaskSet::standard();
    let mut rules = Vec::new();
    for t in &set.build {
        rules.push(
            rule(good, &t.id, &format!("# Task {}:", t.id))
                .reply(Reply::text(t.reference_answer(format)).usage(1000, 200)),
        );
        rules.push(
            rule(idle, &t.id, &format!("# Task {}:", t.id)).reply(Reply::text(IDLE).usage(900, 20)),
        );
    }
    for c in set.review.iter().filter(|c| c.class != CaseClass::Clean) {
        let bug = c.bug.as_ref().unwrap();
        let (first, last) = c.bug_lines().unwrap();
        let answer = json!({"verdict": "REJECT", "confidence": 0.9, "reasoning": "a bug",
            "issues": [{"severity": "critical", "category": "logic", "path": bug.path,
                "start_line": first, "end_line": last, "quote": bug.quote,
                "description": "this line is wrong", "suggestion": "fix it", "evidence": "the requirements"}],
            "alternatives": []});
        rules.push(
            rule(good, &c.id, "STAGE REVIEWED: implement")
                .contains(bug.quote.lines().next().unwrap().trim())
                .reply(Reply::json(answer).usage(1500, 150)),
        );
    }
    let approve = json!({"verdict": "APPROVE", "confidence": 0.9, "reasoning": "fine", "issues": [], "alternatives": []});
    for m in [good, idle] {
        rules.push(
            rule(m, "review", "STAGE REVIEWED: implement")
                .reply(Reply::json(approve.clone()).usage(1500, 50)),
        );
    }
    rules
}

struct Bench {
    env: TestEnv,
    server: FakeServer,
    repo: PathBuf,
}

impl Bench {
    fn new(rules: Vec<Rule>, extra_config: &str) -> Bench {
        let server = FakeServer::start_blocking(Script::new(rules)).expect("fake server");
        let mut env = TestEnv::new();
        env.write_user_config(&format!(
            "{}{extra_config}",
            fake_user_config(&server.base_url())
        ));
        env.set("FAKE_OPENAI_KEY", "sk-fake-openai-key-for-tests");
        let repo = env.repo("proj", &[("README.md", "# proj\n")]);
        Bench { env, server, repo }
    }

    fn triad(&self, args: &[&str]) -> crate::common::Run {
        self.env.triad(&self.repo, args)
    }

    fn store_path(&self) -> PathBuf {
        self.env.home().join(".local/share/git-triad/fitness.json")
    }

    fn store(&self) -> Value {
        let text = std::fs::read_to_string(self.store_path()).expect("fitness.json");
        serde_json::from_str(&text).unwrap()
    }
}

fn entry<'a>(store: &'a Value, model: &str, role: &str) -> &'a Value {
    store["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["model"] == model && e["role"] == role)
        .unwrap_or_else(|| panic!("no entry for {model} as {role}: {store:#}"))
}

#[test]
fn bench_grades_by_facts_and_keeps_the_figures_per_user() {
    let b = Bench::new(rules("model-a", EditFormat::Diff, "model-b"), "");
    let run = b.triad(&["bench", "--models", "model-a,model-b,claude-fake"]);
    run.ok();
    assert!(
        run.stderr
            .contains("bench: skipping claude-fake: FAKE_ANTHROPIC_KEY is not set"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("bench: model-b implementer impl-roman: did not change roman.py"),
        "{}",
        run.stderr
    );
    assert!(
        run.stdout.contains("not measured: claude-fake"),
        "{}",
        run.stdout
    );

    let store = b.store();
    for role in [
        "architect",
        "implementer",
        "refactorer",
        "verifier",
        "arbiter",
    ] {
        let good = entry(&store, "model-a", role);
        assert_eq!(good["figures"]["score"], 1.0, "model-a as {role}: {good:#}");
        assert_eq!(good["task_set"], 3);
        assert_eq!(good["wire_id"], "model-a");
        let idle = entry(&store, "model-b", role);
        assert_eq!(idle["figures"]["score"], 0.0, "model-b as {role}: {idle:#}");
    }
    let implementer = &entry(&store, "model-a", "implementer")["figures"];
    assert_eq!(
        implementer["attempts"], 4,
        "three Python tasks and one Rust"
    );
    assert_eq!(implementer["passed"], 4);
    assert_eq!(implementer["input_tokens"], 4000);
    let arbiter = &entry(&store, "model-b", "arbiter")["figures"];
    assert_eq!(
        (
            &arbiter["bugs"],
            &arbiter["caught"],
            &arbiter["clean"],
            &arbiter["clean_ok"]
        ),
        (&json!(9), &json!(0), &json!(7), &json!(7)),
        "approving everything catches nothing: {arbiter:#}"
    );
    let results = entry(&store, "model-a", "arbiter")["results"]
        .as_array()
        .unwrap();
    assert_eq!(results.len(), 16);
    assert!(
        store["entries"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["model"] != "claude-fake"),
        "an unreachable model is not scored"
    );

    // A build task is asked as a run asks its stage; the hidden tests are never shown.
    let requests = b.server.requests();
    let roman = requests
        .iter()
        .find(|r| r.rule.as_deref() == Some("model-a-impl-roman"))
        .unwrap();
    assert!(roman.body.contains("ROLE: implementer") && roman.body.contains("SEARCH/REPLACE"));
    assert!(requests
        .iter()
        .all(|r| !r.body.contains("test_hidden") && !r.body.contains("MMMCMXCIX")));
    // The bench's calls are in the repository's ledger like any other.
    let ledger = std::fs::read_to_string(b.repo.join(".git/triad/ledger.jsonl")).unwrap();
    assert_eq!(ledger.lines().count(), 2 * (10 + 16));
}

#[test]
fn the_report_and_the_model_list_show_what_was_measured() {
    let b = Bench::new(rules("model-a", EditFormat::Diff, "model-b"), "");
    b.triad(&["bench", "--models", "model-a,model-b", "--tasks", "quick"])
        .ok();
    let report = b.triad(&["bench", "--report"]);
    report.ok();
    let today = &b.store()["entries"][0]["date"];
    let norm = b
        .env
        .normalizer()
        .literal(today.as_str().unwrap(), "[DATE]");
    crate::user_output::check(
        "bench-report",
        &report.transcript("git triad bench --report", &norm),
    );
    let json: Value = serde_json::from_str(
        &b.triad(&["bench", "--report", "--format", "json"])
            .ok()
            .stdout,
    )
    .unwrap();
    assert_eq!(json["task_set"], 3);
    assert_eq!(json["entries"].as_array().unwrap().len(), 10);
    assert!(json["entries"]
        .as_array()
        .unwrap()
        .iter()
        .all(|e| e["fresh"] == true && e["full"] == false));
    let md = b.triad(&["bench", "--report", "--format", "markdown"]);
    assert!(
        md.ok()
            .stdout
            .contains("| implementer | model-a | 1.00~ | 1/1 passed |"),
        "{}",
        md.stdout
    );

    let list = b.triad(&["models", "list", "--no-probe"]);
    let row = list
        .ok()
        .stdout
        .lines()
        .find(|l| l.starts_with("model-a "))
        .unwrap()
        .to_string();
    assert!(
        row.contains("arch 1.00~ impl 1.00~ refac 1.00~ verif 1.00~ arb 1.00~"),
        "{row}"
    );
    let other = list
        .stdout
        .lines()
        .find(|l| l.starts_with("model-c "))
        .unwrap();
    assert!(
        other.trim_end().ends_with(" -"),
        "an unmeasured model shows `-`: {other}"
    );
}

#[test]
fn a_whole_file_model_is_held_to_its_grammar_and_graded_the_same() {
    let b = Bench::new(rules("model-w", EditFormat::Whole, "model-b"), WHOLE_MODEL);
    b.triad(&[
        "bench",
        "--models",
        "model-w",
        "--roles",
        "implementer",
        "--tasks",
        "impl-slugify,impl-intervals",
    ])
    .ok();
    assert_eq!(
        entry(&b.store(), "model-w", "implementer")["figures"]["passed"],
        2
    );
    let asked = b
        .server
        .requests()
        .into_iter()
        .find(|r| r.rule.as_deref() == Some("model-w-impl-slugify"))
        .unwrap();
    let grammar = asked.json.unwrap()["grammar"].as_str().unwrap().to_string();
    assert!(
        grammar.contains("path ::= \"README.md\" | \"text.py\""),
        "{grammar}"
    );
}

#[test]
fn a_bench_stops_before_its_budget_and_keeps_nothing_partial() {
    let b = Bench::new(rules("model-a", EditFormat::Diff, "model-b"), "");
    let run = b.triad(&["bench", "--models", "model-a", "--budget", "0.0001"]);
    run.expect_code(5);
    assert!(
        run.stderr.contains("stopped before crossing its budget"),
        "{}",
        run.stderr
    );
    assert!(!b.store_path().exists(), "a partial measurement was kept");
    assert!(b.server.requests().is_empty());

    let all_auto: Vec<String> = [
        "architect",
        "implementer",
        "refactorer",
        "verifier",
        "arbiter",
    ]
    .iter()
    .map(|r| format!("roles.{r}.models=\"auto\""))
    .collect();
    let mut args: Vec<&str> = all_auto.iter().flat_map(|a| ["-c", a.as_str()]).collect();
    args.push("bench");
    let run = b.triad(&args);
    run.expect_code(2);
    assert!(run.stderr.contains("no model to measure"), "{}", run.stderr);

    let run = b.triad(&["bench", "--tasks", "impl-roman,nope"]);
    run.expect_code(2);
    assert!(
        run.stderr.contains("there is no task `nope`"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("impl-slugify"),
        "the hint lists the ids: {}",
        run.stderr
    );
}

#[test]
fn a_reviewer_kinder_to_its_own_failing_answers_shows_it() {
    let set = TaskSet::standard();
    let wrong = |id: &str, path: &str| {
        let t = set.build.iter().find(|t| t.id == id).unwrap();
        let files = std::collections::BTreeMap::from([(
            path.to_string(),
            "def broken(*args):\n    return 'WRONG'\n".to_string(),
        )]);
        t.answer_writing(&files, EditFormat::Diff)
    };
    let reject = json!({"verdict": "REJECT", "confidence": 0.9, "reasoning": "wrong",
        "issues": [{"severity": "critical", "category": "pattern", "path": "roman.py", "start_line": 2,
            "end_line": 2, "quote": "    return 'WRONG'", "description": "not the task",
            "suggestion": "implement it", "evidence": "the requirements"}], "alternatives": []});
    let approve = json!({"verdict": "APPROVE", "confidence": 0.9, "reasoning": "fine", "issues": [], "alternatives": []});
    let mut rules = Vec::new();
    for m in ["model-a", "model-b"] {
        for (id, path) in [("impl-roman", "roman.py"), ("impl-slugify", "text.py")] {
            rules.push(
                rule(m, id, &format!("# Task {id}:"))
                    .contains("ROLE: implementer")
                    .reply(Reply::text(wrong(id, path)).usage(1000, 100)),
            );
        }
    }
    // model-a approves its own failing work and rejects model-b's; model-b rejects all.
    rules.push(
        rule("model-a", "own", "(produced by model model-a)").reply(Reply::json(approve.clone())),
    );
    for m in ["model-a", "model-b"] {
        let mut r = reject.clone();
        r["issues"][0]["path"] = json!("roman.py");
        rules.push(rule(m, "failed", "# Task impl-roman:").reply(Reply::json(r.clone())));
        r["issues"][0]["path"] = json!("text.py");
        rules.push(rule(m, "failed2", "# Task impl-slugify:").reply(Reply::json(r)));
        rules.push(
            rule(m, "cases", "STAGE REVIEWED: implement").reply(Reply::json(approve.clone())),
        );
    }
    let b = Bench::new(rules, "");
    let run = b.triad(&[
        "bench",
        "--models",
        "model-a,model-b",
        "--roles",
        "implementer,arbiter",
        "--tasks",
        "impl-roman,impl-slugify,bug-page-offset,clean-clamp",
    ]);
    run.ok();
    assert!(
        run.stderr.contains(
            "bench: model-a reviewing failed answers: self-preference +100 pts (own 2/2, others 0/2 let through)"
        ),
        "{}",
        run.stderr
    );
    let store = b.store();
    let a = &entry(&store, "model-a", "arbiter")["figures"]["self_preference"];
    assert_eq!(a["own_let_through"], 2);
    let bp = &entry(&store, "model-b", "arbiter")["figures"]["self_preference"];
    assert_eq!(
        (&bp["own_let_through"], &bp["others_let_through"]),
        (&json!(0), &json!(0))
    );
    assert!(
        entry(&store, "model-a", "implementer")["figures"]
            .get("self_preference")
            .is_none(),
        "only reviewers have the figure"
    );
    // Not part of the score: model-a caught nothing and rejected nothing clean either way.
    assert_eq!(entry(&store, "model-a", "arbiter")["figures"]["score"], 0.0);
    let report = b.triad(&["bench", "--report"]);
    assert!(
        report.ok().stdout.contains("self-preference +100 pts"),
        "{}",
        report.stdout
    );
}

#[test]
fn a_task_whose_tests_cannot_run_here_is_left_out_and_said() {
    let mut b = Bench::new(rules("model-a", EditFormat::Diff, "model-b"), "");
    // A PATH with python3, sh and git but no rustc.
    let bin = b.env.root().join("bin-without-rustc");
    std::fs::create_dir_all(&bin).unwrap();
    // The interpreter itself (a pyenv shim would need pyenv on PATH), sh and git.
    std::os::unix::fs::symlink("/bin/sh", bin.join("sh")).unwrap();
    let python = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3");
    let python = String::from_utf8(python.stdout).unwrap().trim().to_string();
    std::os::unix::fs::symlink(python, bin.join("python3")).unwrap();
    let git = std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .map(|d| d.join("git"))
        .find(|p| p.is_file())
        .expect("git on PATH");
    std::os::unix::fs::symlink(git, bin.join("git")).unwrap();
    b.env.set("PATH", bin.to_str().unwrap());
    let run = b.triad(&["bench", "--models", "model-a", "--roles", "implementer"]);
    run.ok();
    assert!(
        run.stderr.contains(
            "bench: left out, as their tests cannot run here: arch-rust-queue (needs rustc), impl-rust-rle (needs rustc), refactor-rust-mean (needs rustc)"
        ),
        "{}",
        run.stderr
    );
    let store = b.store();
    let implementer = entry(&store, "model-a", "implementer");
    assert_eq!(
        implementer["tasks"], "standard without 3",
        "{implementer:#}"
    );
    assert_eq!(implementer["figures"]["attempts"], 3);
    assert_eq!(implementer["figures"]["score"], 1.0, "{implementer:#}");
}

#[test]
fn measurements_are_shared_through_a_ref_and_taken_in_only_on_import() {
    let b = Bench::new(rules("model-a", EditFormat::Diff, "model-b"), "");
    b.triad(&["bench", "--models", "model-a", "--roles", "implementer"])
        .ok();
    let shared = b.triad(&["bench", "--share"]);
    assert!(
        shared
            .ok()
            .stdout
            .contains("shared 1 measurement(s) on refs/triad/fitness"),
        "{}",
        shared.stdout
    );
    let held = b
        .env
        .git(&b.repo, &["show", "refs/triad/fitness:fitness.json"]);
    assert!(held.ok().stdout.contains("\"model-a\""), "{}", held.stdout);

    // Another user clones and fetches the ref: nothing of it counts until they import it.
    let other = TestEnv::new();
    other.write_user_config(&fake_user_config(&b.server.base_url()));
    let clone = other.root().join("clone");
    other
        .git(
            other.root(),
            &[
                "clone",
                "-q",
                b.repo.to_str().unwrap(),
                clone.to_str().unwrap(),
            ],
        )
        .ok();
    other
        .git(
            &clone,
            &[
                "fetch",
                "-q",
                "origin",
                "refs/triad/fitness:refs/triad/fitness",
            ],
        )
        .ok();
    let before = other.triad(&clone, &["bench", "--report"]);
    assert!(!before.ok().stdout.contains("model-a"), "{}", before.stdout);
    let imported = other.triad(&clone, &["bench", "--import"]);
    assert!(
        imported
            .ok()
            .stdout
            .contains("imported 1 of 1 measurement(s) from refs/triad/fitness at"),
        "{}",
        imported.stdout
    );
    let after = other.triad(&clone, &["bench", "--report"]);
    assert!(
        after.ok().stdout.contains("implementer  model-a  1.00"),
        "{}",
        after.stdout
    );
    // Nothing newer the second time; a repository without the ref says how to get it.
    let again = other.triad(&clone, &["bench", "--import"]);
    assert!(
        again.ok().stdout.contains("imported 0 of 1"),
        "{}",
        again.stdout
    );
    let bare = other.repo("bare", &[("README.md", "x\n")]);
    let none = other.triad(&bare, &["bench", "--import"]);
    none.expect_code(2);
    assert!(
        none.stderr
            .contains("git fetch <remote> refs/triad/fitness"),
        "{}",
        none.stderr
    );
}

#[test]
fn the_same_review_answers_are_scored_with_probes_and_without() {
    // model-a rejects both the buggy and the correct leap-year change with the same claim
    // and the same probe: it fails on the bug (confirmed) and passes on the correct code
    // (refuted), so only the probes tell the two apart.
    let claim = |quote: &str| {
        json!({"verdict": "REJECT", "confidence": 0.9, "reasoning": "2000 is a leap year",
            "issues": [{"severity": "critical", "category": "logic", "path": "calendar_util.py",
                "start_line": 8, "end_line": 8, "quote": quote,
                "description": "century years divisible by 400 are leap years",
                "suggestion": "add the 400 rule", "evidence": "the requirement",
                "probe": "assert is_leap(2000)"}],
            "alternatives": []})
    };
    let rules = vec![
        rule("model-a", "bug", "STAGE REVIEWED: implement")
            .contains("year % 100 != 0\n")
            .reply(Reply::json(claim(
                "    return year % 4 == 0 and year % 100 != 0",
            ))),
        rule("model-a", "clean", "STAGE REVIEWED: implement").reply(Reply::json(claim(
            "    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)",
        ))),
    ];
    // The bench's workspaces are its own: probes run there whatever the clone.
    let b = Bench::new(rules, "");
    b.triad(&[
        "bench",
        "--models",
        "model-a",
        "--roles",
        "arbiter",
        "--tasks",
        "bug-leap-century,clean-leap",
    ])
    .ok();
    let store = b.store();
    let f = &entry(&store, "model-a", "arbiter")["figures"];
    assert_eq!(
        (&f["caught"], &f["false_positives"]),
        (&json!(1), &json!(0)),
        "{f:#}"
    );
    assert_eq!(
        f["without_probes"],
        json!({"caught": 1, "false_positives": 1, "flagged_clean": 0}),
        "{f:#}"
    );
    let report = b.triad(&["bench", "--report"]);
    assert!(
        report
            .ok()
            .stdout
            .contains("caught 1/1, 1/1 clean rejected"),
        "{}",
        report.stdout
    );
}
