//! Hierarchical sessions (`git triad session`, seed 002) over real HTTP (the scripted
//! tool-calling server) and real git: the manager spawns an orchestrator, which writes a
//! TaskSpec on the session branch and runs the reviewed pipeline on it, reports, and is
//! disconnected (once per protocol); a human interjection reaches the manager as `Human:`;
//! the 70 % and 85 % warnings reach the orchestrator after the right tool result; a forced
//! hand-off gives the next orchestrator the facts; a full manager hands off to a fresh one;
//! and a session killed with SIGKILL continues with `--resume`, nothing lost.

use std::path::Path;
use std::time::{Duration, Instant};

use git_triad::testkit::fake_llm::{Reply, Rule, WireProtocol};
use serde_json::{json, Value};

use crate::common::fake_user_config;
use crate::pipeline::{happy_rules, Scenario};
use crate::user_output::{check, command_line, json_transcript, pinned_usage, transcript};

/// A needle only the manager's requests hold (its system prompt).
pub(crate) const MANAGER: &str = "MANAGER OF THAT WHICH WAS";
/// A needle only orchestrators' requests hold.
pub(crate) const ORCHESTRATOR: &str =
    "You are an orchestrator working under the direction of the manager";
const THINNING: &str = "Context thins. Begin concluding";
const CRITICAL: &str = "CONTEXT CRITICAL";

/// A rule for `model` speaking `protocol` whose requests hold `needle`, answering `replies`
/// in order and then nothing (an unexpected extra call fails the session loudly).
pub(crate) fn rule(
    name: &str,
    protocol: WireProtocol,
    model: &str,
    needle: &str,
    replies: Vec<Reply>,
) -> Rule {
    let mut r = Rule::named(name)
        .protocol(protocol)
        .model(model)
        .contains(needle)
        .repeat_last(false);
    for reply in replies {
        r = r.reply(reply);
    }
    r
}

/// An OpenAI rule of model-c (the model of the single-protocol tests).
fn c_rule(name: &str, needle: &str, replies: Vec<Reply>) -> Rule {
    rule(name, WireProtocol::OpenAi, "model-c", needle, replies)
}

/// The rules of a hand-off test: a manager that spawns orchestrator I, then II with
/// `second`, then disconnects; orchestrator II (known by the hand-off in its first message)
/// answers `ii_answer`; orchestrator I answers `i_replies`.
fn hand_off_rules(second: &str, ii_answer: &str, i_replies: Vec<Reply>) -> Vec<Rule> {
    vec![
        c_rule(
            "manager",
            MANAGER,
            vec![
                call("spawn_orchestrator", json!({"prompt": "Survey calc.py."})),
                call("spawn_orchestrator", json!({"prompt": second})),
                call("disconnect_orchestrators", json!({})),
                Reply::text("It is done."),
            ],
        ),
        c_rule(
            "orchestrator-2",
            "Hand-off from Orchestrator I",
            vec![Reply::text(ii_answer)],
        ),
        c_rule("orchestrator-1", ORCHESTRATOR, i_replies),
    ]
}

pub(crate) fn call(tool: &str, args: Value) -> Reply {
    Reply::tool_calls(vec![(tool, args)])
}

/// A scenario whose manager and orchestrators run on `model`, the pipeline on the usual
/// fake models (model-a builds, model-b reviews).
pub(crate) fn scenario(model: &str, rules: Vec<Rule>) -> Scenario {
    let mut s = Scenario::new(rules);
    s.env
        .set("FAKE_ANTHROPIC_KEY", "test-value-for-fake-anthropic");
    s.env.set("FAKE_GEMINI_KEY", "test-value-for-fake-gemini");
    s.env.write_user_config(&format!(
        "{}\n[roles.manager]\nmodels = [\"{model}\"]\n[roles.orchestrator]\nmodels = [\"{model}\"]\n",
        fake_user_config(&s.server.base_url())
    ));
    s
}

fn script(s: &Scenario, lines: &str) -> std::path::PathBuf {
    let path = s.env.root().join("script.txt");
    std::fs::write(&path, lines).unwrap();
    path
}

fn session(s: &Scenario, script_path: &Path, extra: &[&str]) -> crate::common::Run {
    let mut args = vec![
        "session",
        "--headless",
        "--script",
        script_path.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    s.env.triad(&s.repo, &args)
}

/// Runs a headless session on `script_path`, which must succeed and say every one of
/// `needles`.
fn session_saying(s: &Scenario, script_path: &Path, needles: &[&str]) -> crate::common::Run {
    let r = session(s, script_path, &[]);
    r.ok();
    for needle in needles {
        says(&r.stdout, needle);
    }
    r
}

/// Checks the transcript `out` holds `needle`, showing it whole when not.
fn says(out: &str, needle: &str) {
    assert!(out.contains(needle), "{needle:?} missing from:\n{out}");
}

/// The JSON bodies of the requests rule `name` answered.
fn bodies(s: &Scenario, name: &str) -> Vec<String> {
    s.requests_for(name).iter().map(Value::to_string).collect()
}

/// The first user message of the first request rule `name` answered.
fn first_user(s: &Scenario, name: &str) -> String {
    let reqs = s.requests_for(name);
    let msgs = reqs[0]["messages"].as_array().cloned().unwrap_or_default();
    msgs.iter()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string()
}

/// The session id the transcript's first line names.
fn session_id(stdout: &str) -> String {
    let first = stdout.lines().next().unwrap_or_default();
    first
        .strip_prefix("git triad: session ")
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or_else(|| panic!("no session line: {stdout}"))
        .to_string()
}

/// The rules of a session that works: the manager spawns an orchestrator and disconnects
/// it when it reported, then says `manager_end`; the orchestrator writes the add-sub2 task,
/// runs the pipeline on it and answers `orchestrator_end`.
pub(crate) fn work_rules(
    protocol: WireProtocol,
    model: &str,
    manager_end: Reply,
    orchestrator_end: Reply,
) -> Vec<Rule> {
    vec![
        rule(
            "manager",
            protocol,
            model,
            MANAGER,
            vec![
                call(
                    "spawn_orchestrator",
                    json!({"prompt": "Add sub(a, b) to calc.py, with a task and a reviewed run."}),
                ),
                call("disconnect_orchestrators", json!({})),
                manager_end,
            ],
        ),
        rule(
            "orchestrator",
            protocol,
            model,
            ORCHESTRATOR,
            vec![
                call(
                    "create_task",
                    json!({"slug": "add-sub2", "title": "Add subtraction",
                           "description": "calc.py needs sub(a, b).",
                           "requirements": ["sub(a, b) returns a - b"],
                           "include": ["calc.py", "tests/**"]}),
                ),
                call("run_pipeline", json!({"task": "add-sub2"})),
                orchestrator_end,
            ],
        ),
    ]
}

/// A session whose orchestrator writes add-sub2 and runs it to an approval, and whose
/// manager then says it is done, with the pipeline's own models scripted behind it.
fn approved_session_rules(protocol: WireProtocol, model: &str) -> Vec<Rule> {
    let mut rules = work_rules(
        protocol,
        model,
        Reply::text("It is done. Run approved."),
        Reply::text("Complete. The run of add-sub2 is approved."),
    );
    rules.extend(happy_rules());
    rules
}

fn spawn_to_disconnect(protocol: WireProtocol, model: &str) {
    let rules = approved_session_rules(protocol, model);
    let s = scenario(model, rules);
    let before = crate::common::user_state(&s.env, &s.repo);
    let script_path = script(&s, "# the whole request\nAdd subtraction to calc.py.\n");
    let r = session_saying(
        &s,
        &script_path,
        &[
            "You: Add subtraction to calc.py.",
            "◈ Manager: spawn_orchestrator (1)",
            "git triad: Orchestrator I awakens",
            "◈ Orchestrator I: create_task (1)",
            "◈ Orchestrator I: run_pipeline (2)",
            "→ exit 0 (done)",
            "Orchestrator I: Complete.",
            "◈ Manager: disconnect_orchestrators (2)",
            "Orchestrator I is released (the manager disconnected)",
            "Manager: It is done. Run approved.",
        ],
    );
    let out = &r.stdout;

    // The orchestrator got the spawn prompt as its first message and worked before the
    // manager spoke again; the run's verdict came back as the tool's answer.
    let orch = bodies(&s, "orchestrator");
    assert_eq!(orch.len(), 3, "{orch:#?}");
    assert!(orch[0].contains("Add sub(a, b) to calc.py"));
    assert!(orch[0].contains("run_pipeline"), "the tools are offered");
    assert!(
        !orch[0].contains("spawn_orchestrator"),
        "an orchestrator summons nobody"
    );
    assert!(
        orch[1].contains("committed on the session branch"),
        "{}",
        orch[1]
    );
    assert!(
        orch[2].contains("APPROVE"),
        "the run's verdict: {}",
        orch[2]
    );
    let manager = bodies(&s, "manager");
    assert_eq!(manager.len(), 3);
    assert!(
        manager[1].contains("Orchestrator I awakens. Your words now reach them.")
            && manager[1].contains("Orchestrator I: Complete."),
        "the spawn's result and the orchestrator's first answer arrive together: {}",
        manager[1]
    );

    // The task is committed on the session branch, the run is recorded, the user's branch,
    // index and files are untouched.
    let id = session_id(out);
    let branch = format!("triad/session/{id}");
    let task = s.git(&["show", &format!("{branch}:.triad/tasks/add-sub2.toml")]);
    assert!(
        task.contains("sub(a, b) returns a - b") && task.contains("id = \"R1\""),
        "{task}"
    );
    let runs = s.env.triad(&s.repo, &["log"]);
    assert!(runs.ok().stdout.contains("add-sub2"), "{}", runs.stdout);
    assert_eq!(crate::common::user_state(&s.env, &s.repo), before);

    // The record replays whatever the protocol (what list and show print is snapshotted in
    // a_session_its_list_and_its_record_as_printed).
    let show = s.env.triad(&s.repo, &["session", "show", &id]);
    assert!(
        show.ok()
            .stdout
            .contains("Manager: It is done. Run approved."),
        "{}",
        show.stdout
    );
    assert!(show.stdout.contains("◈ Orchestrator I: run_pipeline (2)"));
    let log = s.git(&["log", "--format=%s", &format!("refs/triad/sessions/{id}")]);
    assert!(
        log.contains("orchestrator 1 summoned") && log.contains("runs run_pipeline"),
        "one commit per event: {log}"
    );
}

/// What a headless session prints, and what `session list` and `session show` (text and
/// `--json`) print of its record: a manager that summons an orchestrator, which writes a
/// task and runs the reviewed pipeline on it.
#[test]
fn a_session_its_list_and_its_record_as_printed() {
    let rules = approved_session_rules(WireProtocol::OpenAi, "model-c");
    let s = scenario("model-c", pinned_usage(rules));
    let script_path = script(&s, "Add subtraction to calc.py.\n");
    let args = [
        "session",
        "--headless",
        "--script",
        script_path.to_str().unwrap(),
    ];
    let r = s.env.triad(&s.repo, &args);
    r.ok();
    let id = session_id(&r.stdout);
    let norm = s.env.normalizer().literal(s.server.base_url(), "[SERVER]");
    check(
        "session-headless",
        &r.transcript(&command_line(&args), &norm),
    );
    let shown = |args: &[&str]| transcript(&s.env, Some(&s.server), &s.repo, args);
    check("session-list", &shown(&["session", "list"]));
    check("session-show", &shown(&["session", "show", &id]));
    let json = ["session", "show", &id, "--json"];
    check(
        "json-session-show",
        &json_transcript(&s.env, Some(&s.server), &s.repo, &json, 0),
    );
}

#[test]
fn openai_a_manager_spawns_an_orchestrator_that_runs_the_reviewed_pipeline_then_disconnects() {
    spawn_to_disconnect(WireProtocol::OpenAi, "model-c");
}

#[test]
fn anthropic_a_manager_spawns_an_orchestrator_that_runs_the_reviewed_pipeline_then_disconnects() {
    spawn_to_disconnect(WireProtocol::Anthropic, "claude-fake");
}

#[test]
fn gemini_a_manager_spawns_an_orchestrator_that_runs_the_reviewed_pipeline_then_disconnects() {
    spawn_to_disconnect(WireProtocol::Gemini, "gemini-fake");
}

#[test]
fn a_human_interjection_reaches_the_manager_tagged_human_while_an_orchestrator_works() {
    let s = scenario(
        "model-c",
        vec![
            c_rule(
                "manager",
                MANAGER,
                vec![
                    call(
                        "spawn_orchestrator",
                        json!({"prompt": "Add sub to calc.py."}),
                    ),
                    Reply::text("The mortal speaks. Heed: negatives too."),
                    call("disconnect_orchestrators", json!({})),
                    Reply::text("It is done."),
                ],
            ),
            c_rule(
                "orchestrator",
                ORCHESTRATOR,
                vec![
                    Reply::text("Clarifying: integers only?"),
                    Reply::text("Understood. Nothing more to do."),
                ],
            ),
        ],
    );
    let path = script(&s, "Add sub to calc.py.\n+ Handle negative numbers too.\n");
    let r = session(&s, &path, &[]);
    r.ok();
    says(
        &r.stdout,
        "You (interjecting): Handle negative numbers too.",
    );
    let manager = bodies(&s, "manager");
    // The orchestrator's question and the interjection arrive together, each tagged.
    assert!(
        manager[1].contains("Orchestrator I: Clarifying: integers only?")
            && manager[1].contains("Human: Handle negative numbers too."),
        "{}",
        manager[1]
    );
    assert!(
        !manager[0].contains("Handle negative"),
        "not before the exchange"
    );
    let orch = bodies(&s, "orchestrator");
    assert!(orch[1].contains("The mortal speaks. Heed: negatives too."));
    assert!(
        !orch[1].contains("Human:"),
        "the human speaks to the manager only"
    );
}

/// A session whose orchestrator fills its window step by step: 71 % after its first call,
/// 87 % after its second; it then reports, and the manager spawns the next one.
#[test]
fn context_warnings_come_after_the_tool_result_at_70_and_85_percent_and_the_report_is_handed_on() {
    let s = scenario(
        "model-c",
        hand_off_rules(
            "Continue the survey.",
            "Finished the survey.",
            vec![
                call("list_files", json!({})).usage(22_800, 10),
                call("grep", json!({"pattern": "def "})).usage(27_900, 10),
                Reply::text(
                    "Accomplished: listed files, found add(). Remaining: sub(). Key: calc.py only.",
                )
                .usage(28_100, 20),
            ],
        ),
    );
    let path = script(&s, "Survey calc.py.\n");
    let r = session(&s, &path, &[]);
    r.ok();
    let o1 = bodies(&s, "orchestrator-1");
    assert_eq!(o1.len(), 3, "{o1:#?}");
    assert!(!o1[0].contains(THINNING) && !o1[0].contains(CRITICAL));
    assert!(o1[1].contains(THINNING), "71 % after list_files: {}", o1[1]);
    assert!(!o1[1].contains(CRITICAL));
    assert!(o1[2].contains(CRITICAL), "87 % after grep: {}", o1[2]);
    // The warning follows the tool result in the conversation.
    let msgs = s.requests_for("orchestrator-1")[1]["messages"].clone();
    let n = msgs.as_array().unwrap().len();
    assert_eq!(msgs[n - 2]["role"], "tool");
    assert!(msgs[n - 1]["content"].as_str().unwrap().contains(THINNING));
    says(&r.stdout, "Orchestrator I is at 71 % of its context window");
    says(&r.stdout, "Orchestrator I hands off with its report");

    let o2 = bodies(&s, "orchestrator-2");
    assert!(
        o2[0].contains("Continue the survey.") && o2[0].contains("Remaining: sub()"),
        "the report goes into the next orchestrator's first message: {}",
        o2[0]
    );
    let first = first_user(&s, "orchestrator-2");
    assert!(
        first.contains("What the record shows Orchestrator I did (2 tool calls)")
            && first.contains("- grep {\"pattern\":\"def \"} → calc.py:1: def add(a, b):"),
        "with the facts of its record to check the report by: {first}"
    );
    says(
        &r.stdout,
        "Orchestrator I is released (Orchestrator II was summoned)",
    );
    says(&r.stdout, "Manager: It is done.");
}

#[test]
fn at_the_hard_limit_the_hand_off_is_forced_with_the_facts_of_the_record() {
    let s = scenario(
        "model-c",
        hand_off_rules(
            "Continue from the hand-off.",
            "Finished.",
            vec![
                call("read_file", json!({"path": "calc.py"})).usage(5_000, 10),
                // 97 % of 32000: past the 95 % hard limit, whatever it says.
                call("grep", json!({"pattern": "x"}))
                    .with_text("Still working…")
                    .usage(31_000, 10),
            ],
        ),
    );
    let path = script(&s, "Survey calc.py.\n");
    let r = session(&s, &path, &[]);
    r.ok();
    assert_eq!(
        bodies(&s, "orchestrator-1").len(),
        2,
        "no call after the hard limit"
    );
    says(
        &r.stdout,
        "Orchestrator I hands off, forced at the hard limit",
    );
    let manager = bodies(&s, "manager");
    assert!(
        manager[1].contains("filled 96 % of its context window"),
        "{}",
        manager[1]
    );
    let o2 = bodies(&s, "orchestrator-2");
    assert!(o2[0].contains("Continue from the hand-off."));
    let first = first_user(&s, "orchestrator-2");
    assert!(
        first.contains(r#"read_file {"path":"calc.py"} → def add(a, b):"#),
        "the facts of what it did: {first}"
    );
    assert!(
        first.contains(r#"grep {"pattern":"x"} → no answer"#),
        "the call it never got an answer to: {first}"
    );
    assert!(first.contains("Its last words: Still working"));
}

#[test]
fn a_full_manager_hands_off_to_a_fresh_one_with_its_summary_and_the_waiting_message() {
    let s = scenario(
        "model-c",
        vec![c_rule(
            "manager",
            MANAGER,
            vec![
                // 29000 of 32000: past 85 %.
                Reply::text("Speak, seeker.").usage(29_000, 5),
                Reply::text("SUMMARY: the human greets; wants sub() in calc.py later."),
                Reply::text("So it shall be.").usage(900, 5),
            ],
        )],
    );
    let path = script(&s, "Greetings, oracle.\nNow build sub().\n");
    let r = session(&s, &path, &[]);
    r.ok();
    let m = bodies(&s, "manager");
    assert_eq!(m.len(), 3, "{m:#?}");
    assert!(
        m[1].contains("Your context window is nearly full"),
        "{}",
        m[1]
    );
    assert!(
        m[1].contains("Now build sub()."),
        "the waiting line is in what it summarizes"
    );
    let fresh = &m[2];
    assert!(
        fresh.contains("You take over as the manager from Manager"),
        "{fresh}"
    );
    assert!(fresh.contains("SUMMARY: the human greets"));
    assert!(
        fresh.contains("What was waiting for an answer:") && fresh.contains("Now build sub().")
    );
    assert!(
        !fresh.contains("Speak, seeker.") && !fresh.contains("Greetings, oracle."),
        "a fresh conversation: only the hand-off: {fresh}"
    );
    says(&r.stdout, "Manager II takes over");
    says(&r.stdout, "Manager: So it shall be.");
    let list = s.env.triad(&s.repo, &["session", "list"]);
    assert!(list.ok().stdout.contains("2 manager(s)"), "{}", list.stdout);
}

#[test]
fn a_session_killed_mid_call_resumes_with_nothing_lost() {
    let s = scenario(
        "model-c",
        vec![
            c_rule(
                "manager",
                MANAGER,
                vec![
                    call("spawn_orchestrator", json!({"prompt": "Survey calc.py."})),
                    call("disconnect_orchestrators", json!({})),
                    Reply::text("It is done."),
                    Reply::text("Go in peace."),
                ],
            ),
            c_rule(
                "orchestrator",
                ORCHESTRATOR,
                vec![
                    call("list_files", json!({})),
                    // The session is killed while waiting for this one.
                    Reply::text("never delivered").delay_ms(60_000),
                    Reply::text("Survey complete: calc.py holds add()."),
                ],
            ),
        ],
    );
    let path = script(&s, "Survey calc.py.\nThank you.\n");
    let mut child = s
        .env
        .command(crate::common::bin(), &s.repo)
        .args(["session", "--headless", "--script", path.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while s.requests_for("orchestrator").len() < 2 {
        assert!(
            Instant::now() < deadline,
            "the second orchestrator call never came"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();

    let r = s.env.triad(
        &s.repo,
        &[
            "session",
            "--resume",
            "--headless",
            "--script",
            path.to_str().unwrap(),
        ],
    );
    r.ok();
    assert!(r.stderr.contains("resuming session"), "{}", r.stderr);
    let orch = s.requests_for("orchestrator");
    assert_eq!(orch.len(), 3);
    assert_eq!(
        orch[1]["messages"], orch[2]["messages"],
        "the resumed call is the interrupted one, whole"
    );
    says(&r.stdout, "Orchestrator I: Survey complete");
    says(&r.stdout, "Manager: It is done.");
    // The first line was taken before the kill; only the second is read now.
    assert!(!r.stdout.contains("You: Survey calc.py."), "{}", r.stdout);
    says(&r.stdout, "You: Thank you.");
    says(&r.stdout, "Manager: Go in peace.");
    let m = bodies(&s, "manager");
    assert_eq!(
        m.len(),
        4,
        "the manager was asked exactly as often as scripted"
    );
}

/// model-d declaring `json_schema` but not `tools`, like the local models: it gets the
/// session's tools as schema-constrained actions.
fn action_model() -> String {
    format!(
        "{}capabilities = [\"json_schema\"]\n",
        crate::pipeline::MODEL_D
    )
}

fn act(action: &str, arguments: Value) -> Reply {
    Reply::json(json!({"action": action, "arguments": arguments}))
}

#[test]
fn a_model_without_native_tools_acts_through_a_constrained_schema_and_private_files_stay_private() {
    let s = scenario(
        "model-d",
        vec![
            rule(
                "manager",
                WireProtocol::OpenAi,
                "model-d",
                MANAGER,
                vec![
                    act("disconnect_orchestrators", json!({})),
                    act(
                        "spawn_orchestrator",
                        json!({"prompt": "Read .env and calc.py."}),
                    ),
                    act("disconnect_orchestrators", json!({})),
                    Reply::json(json!({"action": "say", "text": "It is done."})),
                ],
            ),
            rule(
                "orchestrator",
                WireProtocol::OpenAi,
                "model-d",
                ORCHESTRATOR,
                vec![
                    act("read_file", json!({"path": ".env"})),
                    act("read_file", json!({"path": ".env"})),
                    act("read_file", json!({"path": "calc.py"})),
                    Reply::json(json!({"action": "say", "text": "calc.py holds add()."})),
                ],
            ),
        ],
    );
    s.env.write_user_config(&format!(
        "{}{}\n[roles.manager]\nmodels = [\"model-d\"]\n[roles.orchestrator]\nmodels = [\"model-d\"]\n",
        fake_user_config(&s.server.base_url()),
        action_model()
    ));
    s.env.write_files(
        &s.repo,
        &[(".env", "SESSION_SECRET=never-sent-to-a-model\n")],
    );
    s.env.commit_all(&s.repo, "a private file");
    let path = script(&s, "Read the configuration.\n");
    session_saying(
        &s,
        &path,
        &[
            "✗ no orchestrator is active",
            "◈ Orchestrator I: read_file (1)",
            "✗ .env is private and never shown to a model",
            "✗ not run again: identical to your previous call, which failed",
            "→ def add(a, b):",
            "Orchestrator I: calc.py holds add().",
            "Manager: It is done.",
        ],
    );
    for rule_name in ["manager", "orchestrator"] {
        for req in s.requests_for(rule_name) {
            assert_eq!(
                req["response_format"]["json_schema"]["name"],
                "session_action"
            );
            assert!(req.get("tools").is_none(), "no native tools: {req}");
            assert!(!req.to_string().contains("never-sent-to-a-model"));
        }
    }
    let orch = bodies(&s, "orchestrator");
    assert!(
        orch[3].contains("Result of `read_file`: def add(a, b):"),
        "{}",
        orch[3]
    );
}

#[test]
fn a_model_s_arguments_never_become_options_of_the_commands_its_tools_run() {
    let s = scenario(
        "model-c",
        vec![
            c_rule(
                "manager",
                MANAGER,
                vec![
                    call("spawn_orchestrator", json!({"prompt": "Probe."})),
                    call("disconnect_orchestrators", json!({})),
                    Reply::text("It is done."),
                ],
            ),
            c_rule(
                "orchestrator",
                ORCHESTRATOR,
                vec![
                    call(
                        "answer_task",
                        json!({"task": "-F/etc/passwd", "answers": []}),
                    ),
                    call("show_run", json!({"run_id": "--format=json"})),
                    call("review_range", json!({"range": "--note"})),
                    call("read_file", json!({"path": "../../etc/passwd"})),
                    call(
                        "create_task",
                        json!({"slug": "same", "title": "Same", "requirements": ["x"]}),
                    ),
                    call(
                        "create_task",
                        json!({"slug": "same", "title": "Same", "requirements": ["x"]}),
                    ),
                    Reply::text("Nothing worked."),
                ],
            ),
        ],
    );
    let path = script(&s, "Probe.\n");
    session_saying(
        &s,
        &path,
        &[
            "✗ `-F/etc/passwd` is not a task slug",
            "✗ `--format=json` is not a run id",
            "✗ `--note` is not a commit or a range",
            "→ wrote .triad/tasks/same.toml with 1 requirement(s)",
            "→ .triad/tasks/same.toml already says exactly this on the session branch",
            "Orchestrator I: Nothing worked.",
        ],
    );
    let last = s.requests_for("orchestrator").last().cloned().unwrap();
    let text = last.to_string();
    assert!(!text.contains("root:"), "nothing of /etc/passwd: {text}");
    assert!(
        s.git(&["notes", "--ref=triad", "list"]).trim().is_empty(),
        "no note was written by a smuggled --note"
    );
}

/// Resuming a session that ended at the human's turn says where it stands and what was
/// said last, and asks no model anything until the human speaks.
#[test]
fn resuming_a_finished_session_says_where_it_stands() {
    let rules = approved_session_rules(WireProtocol::OpenAi, "model-c");
    let s = scenario("model-c", rules);
    let script_path = script(&s, "Add subtraction to calc.py.\n");
    let id = session_id(&session(&s, &script_path, &[]).ok().stdout);
    let calls = s.server.requests().len();
    let r = s
        .env
        .triad(&s.repo, &["session", "--headless", "--resume", &id]);
    r.ok();
    says(&r.stderr, "it waits for you: the manager had answered");
    says(
        &r.stderr,
        "│ Orchestrator I: Complete. The run of add-sub2 is approved.",
    );
    says(&r.stderr, "│ Manager: It is done. Run approved.");
    assert_eq!(
        s.server.requests().len(),
        calls,
        "no model was asked anything"
    );
}

/// What the manager says reaches the transcript, `session show` and `session list` as text:
/// an escape sequence or a right-to-left override is shown, never obeyed.
#[test]
fn session_output_shows_model_text_escaped() {
    let hostile = "Done\u{1b}]0;pwned\u{7} \u{202e}txt.exe\u{1b}[2J";
    let escaped = "Done^[]0;pwned^G <U+202E>txt.exe^[[2J";
    let s = scenario(
        "model-c",
        vec![c_rule("manager", MANAGER, vec![Reply::text(hostile)])],
    );
    let script_path = script(&s, "Say something.\n");
    let r = session(&s, &script_path, &[]);
    r.ok();
    let obeyed = |t: &str| {
        t.chars()
            .any(|c| (c.is_control() && c != '\n' && c != '\t') || c == '\u{202e}')
    };
    assert!(!obeyed(&r.stdout) && !obeyed(&r.stderr), "{}", r.stdout);
    says(&r.stdout, escaped);
    let id = session_id(&r.stdout);
    let show = s.env.triad(&s.repo, &["session", "show", &id]);
    assert!(!obeyed(&show.ok().stdout), "{}", show.stdout);
    says(&show.stdout, escaped);
    let list = s.env.triad(&s.repo, &["session", "list"]);
    assert!(!obeyed(&list.ok().stdout), "{}", list.stdout);
}

/// A session's tool call gets the operation's typed outcome back, never text to read a
/// status or a failure from: `run_pipeline` answers the run the pipeline drove (its status,
/// its exit code, the run id its report names), and a request that fails answers its
/// error and hints as fields, whatever lines its command said while it worked.
#[test]
fn a_tool_call_gets_a_typed_outcome() {
    use git_triad::exit::ExitCode;
    use git_triad::pipeline::RunStatus;
    use git_triad::session::product::{Outcome, Product, Request};

    let s = Scenario::new(happy_rules());
    // The session's environment is the hermetic one every test command gets.
    let env: Vec<(String, String)> = s
        .env
        .command("git-triad", &s.repo)
        .get_envs()
        .filter_map(|(k, v)| Some((k.to_str()?.to_string(), v?.to_str()?.to_string())))
        .collect();
    let product = git_triad::cli::InProcess {
        overrides: vec![],
        env,
    };
    let heard: git_triad::session::product::Heard = std::sync::Arc::new(|_: &str| {});
    let run = Request::RunPipeline {
        task: "add-sub".into(),
        workflow: Default::default(),
    };
    let answer = product.call(&s.repo, &run, heard.clone());
    let Ok(Outcome::Ran(runs)) = &answer.outcome else {
        panic!("run_pipeline did not answer a run: {answer:?}")
    };
    assert_eq!(runs.len(), 1, "no run was unblocked: {answer:?}");
    let ran = &runs[0];
    assert_eq!(ran.state.status(), RunStatus::Approved, "{answer:?}");
    assert_eq!((ran.exit, answer.exit), (ExitCode::Ok, ExitCode::Ok));
    assert!(answer.out.contains(ran.state.run_id()), "{}", answer.out);
    // The run it names is the one recorded.
    let log = s
        .env
        .triad(&s.repo, &["log", ran.state.run_id(), "--format", "json"]);
    log.ok();
    assert!(log.stdout.contains("\"approved\""), "{}", log.stdout);

    // The reads answer typed too: the runs as recorded, the tasks as the list has them.
    let shown = product.call(
        &s.repo,
        &Request::ShowRun {
            run_id: ran.state.run_id().into(),
        },
        heard.clone(),
    );
    let Ok(Outcome::Runs {
        runs: shown,
        corrupt,
    }) = &shown.outcome
    else {
        panic!("show_run did not answer the run: {shown:?}")
    };
    assert_eq!(
        (
            shown.len(),
            shown[0].run_id(),
            shown[0].status(),
            corrupt.len()
        ),
        (1, ran.state.run_id(), RunStatus::Approved, 0)
    );
    let listed = product.call(&s.repo, &Request::ListRuns, heard.clone());
    let Ok(Outcome::Runs { runs: all, .. }) = &listed.outcome else {
        panic!("list_runs did not answer runs: {listed:?}")
    };
    assert_eq!(
        all.iter().map(|r| r.run_id()).collect::<Vec<_>>(),
        [ran.state.run_id()]
    );
    let tasks = product.call(&s.repo, &Request::ListTasks, heard.clone());
    let Ok(Outcome::Tasks(tasks)) = &tasks.outcome else {
        panic!("list_tasks did not answer tasks: {tasks:?}")
    };
    let add_sub = tasks
        .iter()
        .find(|l| l.task.slug == "add-sub")
        .unwrap_or_else(|| panic!("add-sub is not listed: {tasks:?}"));
    assert!(add_sub.recorded && add_sub.problem.is_none(), "{add_sub:?}");
    assert_eq!(add_sub.task.run.as_deref(), Some(ran.state.run_id()));

    let missing = Request::ShowRun {
        run_id: "no-such-run".into(),
    };
    let answer = product.call(&s.repo, &missing, heard);
    let Err(failure) = &answer.outcome else {
        panic!("a run that does not exist was shown: {answer:?}")
    };
    assert_eq!(answer.exit, ExitCode::Usage);
    assert!(failure.error.contains("no-such-run"), "{failure:?}");
    assert!(!failure.hints.is_empty(), "{failure:?}");
    assert!(
        answer.told("log").unwrap_err().contains(&failure.error),
        "{answer:?}"
    );
}
