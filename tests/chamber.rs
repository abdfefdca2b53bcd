//! The deliberation chamber (`git triad chamber`, seed 003) over real HTTP (the scripted
//! model server on 127.0.0.1) and real git: independent answers, the four divergence rules
//! and their single cross-examination, the checked synthesis (honest "no consensus", kept
//! minorities), a degraded panel, the caps, Level 2 auto-quorum and its escalation, the four
//! founder roles, a model answering under another id, and the arbiter-panelist review.
//!
//! Panelists are model-a and model-c (model-d joins in the degraded panel), the arbiter is
//! model-b. Each rule matches one model and one kind of call by a needle of its prompt.

use git_triad::testkit::fake_llm::{Reply, Rule};
use serde_json::{json, Value};

use crate::common::Run;
use crate::pipeline::{on, panel_scenario, Scenario};
use crate::user_output::{check, command_line, json_transcript, pinned_usage, transcript};

/// The phase-1 brief (also a challenge round's).
const PHASE1: &str = "Answer with JSON only: `stance`, `reasoning`";
const CROSS: &str = "one and only round of cross-examination";
const CHECK: &str = "# A claim to check";
const ASSESS: &str = "making an initial assessment";
const SYNTH: &str = "You synthesize; you do not vote.";

const QUESTION: &str = "Should calc.py grow a sub() function now?";
const EV: &str = "calc.py defines add(a, b) and nothing else, so subtraction is missing";
const OTHER_EV: &str = "customer interviews in docs/interviews.md ask for offline mode";
const INDEPENDENT: &str = "Your task is to provide your best independent answer. Do not \
                           moderate your view to match expected consensus.";
const NO_CONSENSUS: &str = "Chamber could not reach arbitrated consensus. Two qualified \
                            perspectives disagree substantively. Founder review recommended.";
const FOUNDER_CLAUSE: &str = include_str!("../config/prompts/chamber_founder.md");
const CONFLICT_CLAUSE: &str = include_str!("../config/prompts/chamber_conflict.md");

// --- Answers and rule sets ---

/// A panel answer; its reasoning names `who`, so a leak into another's prompt shows.
fn said(who: &str, stance: &str, confidence: u8, evidence: &str) -> Reply {
    Reply::json(json!({
        "stance": stance,
        "reasoning": format!("reasoning of {who}"),
        "confidence": confidence,
        "evidence": [evidence],
    }))
}

/// The arbiter's synthesis.
fn synthesis(consensus: bool, stance: &str, confidence: u8) -> Value {
    json!({
        "consensus": consensus,
        "answer": format!("Synthesized: {stance}."),
        "stance": stance,
        "reasoning": "weighed the evidence of each panelist",
        "disagreement": if consensus { "none" } else { "substantive" },
        "positions": [
            {"panelist": "model-a", "evidence_quality": "strong", "note": "cites calc.py"},
            {"panelist": "model-c", "evidence_quality": "moderate", "note": "plausible"},
        ],
        "minority": [],
        "confidence": confidence,
        "self_check": "",
        "resolution": "none",
    })
}

/// `base` with the fields of `patch` replaced.
fn with(mut base: Value, patch: Value) -> Value {
    for (k, v) in patch.as_object().unwrap() {
        base[k] = v.clone();
    }
    base
}

fn panelist(model: &str, replies: Vec<Reply>) -> Rule {
    on(model, &format!("p1-{model}"), PHASE1, replies)
}

/// A cross-examination that keeps the independent answer.
fn examinee(model: &str, reply: Reply) -> Rule {
    on(model, &format!("cross-{model}"), CROSS, vec![reply])
}

fn checker(model: &str, verdict: &str) -> Rule {
    let reply = said(model, verdict, 8, "calc.py line 1");
    on(model, &format!("check-{model}"), CHECK, vec![reply])
}

fn assessor(arbiter: &str, flag: bool) -> Rule {
    let why = if flag {
        "they read the risk differently"
    } else {
        "same substance"
    };
    let reply = json!({"meaningful_disagreement": flag, "why": why});
    on(arbiter, "assess", ASSESS, vec![Reply::json(reply)])
}

fn arbiter(arbiter: &str, replies: Vec<Value>) -> Rule {
    on(
        arbiter,
        "synth",
        SYNTH,
        replies.into_iter().map(Reply::json).collect(),
    )
}

/// Panelists model-a and model-c answering `a` and `c` (the same in cross-examination),
/// the assessor flagging `flag`, the arbiter model-b answering `synth` in order.
fn rules(a: Reply, c: Reply, flag: bool, synth: Vec<Value>) -> Vec<Rule> {
    vec![
        panelist("model-a", vec![a.clone()]),
        panelist("model-c", vec![c.clone()]),
        examinee("model-a", a),
        examinee("model-c", c),
        assessor("model-b", flag),
        arbiter("model-b", synth),
    ]
}

/// Two panelists who agree, and a confident consensus.
pub(crate) fn agreeing() -> Vec<Rule> {
    rules(
        said("model-a", "yes", 8, EV),
        said("model-c", "go", 7, EV),
        false,
        vec![synthesis(true, "yes", 9)],
    )
}

/// Two panelists who say yes at 8/10 on the same evidence, and `synth`.
fn both_yes(synth: Vec<Value>) -> Vec<Rule> {
    let (a, c) = (said("model-a", "yes", 8, EV), said("model-c", "yes", 8, EV));
    rules(a, c, false, synth)
}

/// Two panelists who disagree (stances), and `synth`.
fn disagreeing(conf_a: u8, conf_c: u8, synth: Vec<Value>) -> Vec<Rule> {
    rules(
        said("model-a", "yes", conf_a, EV),
        said("model-c", "no-go", conf_c, EV),
        false,
        synth,
    )
}

// --- Running and reading ---

fn triad(s: &Scenario, args: &[&str]) -> Run {
    s.env.triad(&s.repo, args)
}

/// The stdout of a command that must succeed.
fn ok_out(s: &Scenario, args: &[&str]) -> String {
    triad(s, args).ok().stdout.clone()
}

fn parse(text: &str) -> Value {
    serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("not JSON ({e}):\n{text}"))
}

/// `chamber ask QUESTION --panel <panel> --arbiter model-b <extra>`.
fn ask_raw(s: &Scenario, panel: &str, extra: &[&str]) -> Run {
    let mut args = vec!["chamber", "ask", QUESTION, "--panel", panel];
    args.extend_from_slice(&["--arbiter", "model-b"]);
    args.extend_from_slice(extra);
    triad(s, &args)
}

/// `ask_raw` with `--json --yes`: the run and the session it printed.
fn ask(s: &Scenario, panel: &str, extra: &[&str]) -> (Run, Value) {
    let mut all = vec!["--json", "--yes"];
    all.extend_from_slice(extra);
    let r = ask_raw(s, panel, &all);
    let v = parse(&r.stdout);
    (r, v)
}

/// `chamber respond <id> --stance .. --reasoning .. --confidence N <extra>`.
fn respond(s: &Scenario, id: &str, stance: &str, why: &str, conf: &str, extra: &[&str]) -> Run {
    let mut args = vec!["chamber", "respond", id, "--stance", stance];
    args.extend_from_slice(&["--reasoning", why, "--confidence", conf]);
    args.extend_from_slice(extra);
    triad(s, &args)
}

fn id(session: &Value) -> String {
    session["id"].as_str().unwrap().to_string()
}

/// A file of the session's record in git: `session.json` or `trace.md`.
fn stored(s: &Scenario, id: &str, file: &str) -> String {
    s.git(&["show", &format!("refs/triad/chamber/{id}:{file}")])
}

fn record(s: &Scenario, id: &str) -> Value {
    parse(&stored(s, id, "session.json"))
}

fn show(s: &Scenario, id: &str) -> String {
    ok_out(s, &["chamber", "show", id, "--format", "text"])
}

fn list(s: &Scenario) -> Value {
    parse(&ok_out(s, &["chamber", "list", "--format", "json"]))
}

fn stats(s: &Scenario) -> Value {
    parse(&ok_out(s, &["chamber", "stats", "--json"]))
}

fn messages(req: &Value, role: &str) -> String {
    let all = req["messages"].as_array().unwrap();
    all.iter()
        .filter(|m| m["role"] == role)
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn user(req: &Value) -> String {
    messages(req, "user")
}

fn system(req: &Value) -> String {
    messages(req, "system")
}

fn notices(session: &Value) -> String {
    let all = session["notices"].as_array().unwrap();
    all.iter()
        .map(|n| format!("{}\n", n.as_str().unwrap()))
        .collect()
}

/// Asserts that `text` contains every needle.
#[track_caller]
fn has(text: &str, needles: &[&str]) {
    for n in needles {
        assert!(text.contains(n), "missing {n:?} in:\n{text}");
    }
}

/// The divergence rules that fired in round `at`, by name (all four must be recorded).
fn fired(session: &Value, at: usize) -> Vec<String> {
    let rules = session["rounds"][at]["divergence"].as_array().unwrap();
    let names: Vec<&str> = rules.iter().map(|r| r["rule"].as_str().unwrap()).collect();
    assert_eq!(names, ["stances", "confidence", "evidence", "arbiter"]);
    let fired = rules.iter().filter(|r| r["fired"] == true);
    fired
        .map(|r| r["rule"].as_str().unwrap().to_string())
        .collect()
}

fn count(s: &Scenario, rule: &str) -> usize {
    s.requests_for(rule).len()
}

// --- 1. Agreement ---

#[test]
fn agreement_needs_no_cross_examination_and_every_phase_is_a_commit() {
    let s = Scenario::new(agreeing());
    let (r, out) = ask(&s, "model-a,model-c", &["--context", "calc.py"]);
    r.expect_code(6);
    assert_eq!(out["status"], "awaiting_action", "{out}");
    assert_eq!(
        (&out["arbiter"], &out["arbiter_is_panelist"]),
        (&json!("model-b"), &json!(false))
    );

    // Every rule evaluated, none fired: no cross-examination.
    assert!(
        fired(&out, 0).is_empty(),
        "{}",
        out["rounds"][0]["divergence"]
    );
    assert_eq!(count(&s, "cross-model-a") + count(&s, "cross-model-c"), 0);
    assert_eq!(out["rounds"][0]["cross"], json!([]));
    assert_eq!(out["rounds"][0]["cross_done"], true);

    // The identical question and context, alone, with the independence instruction.
    let (a, c) = (&s.requests_for("p1-model-a"), &s.requests_for("p1-model-c"));
    assert_eq!((a.len(), c.len()), (1, 1));
    let brief = user(&a[0]);
    assert_eq!(brief, user(&c[0]), "both panelists read the same message");
    has(
        &brief,
        &[QUESTION, "## file calc.py", "def add(a, b):", PHASE1],
    );
    assert!(!brief.contains("reasoning of model-"), "{brief}");
    has(&system(&a[0]), &[INDEPENDENT]);
    assert_eq!(system(&a[0]), system(&c[0]));
    // The arbiter synthesized once, from both answers and the quiet rules.
    let synth = s.requests_for("synth");
    assert_eq!(synth.len(), 1);
    has(
        &user(&synth[0]),
        &[
            "reasoning of model-a",
            "reasoning of model-c",
            "- stances: quiet",
        ],
    );
    has(
        &user(&synth[0]),
        &["Arbiter: model-b (not a panelist). You are the arbiter, model-b."],
    );

    // The record: one commit per phase, the trace readable with plain git.
    let sid = id(&out);
    let log = s.git(&[
        "log",
        "--reverse",
        "--format=%s",
        &format!("refs/triad/chamber/{sid}"),
    ]);
    let phases: Vec<String> = [
        "phase 1: independent answers",
        "divergence detection",
        "cross-examination",
        "arbiter's synthesis",
        "status: awaiting action",
    ]
    .iter()
    .map(|p| format!("triad chamber {sid}: {p}"))
    .collect();
    assert_eq!(log.lines().collect::<Vec<_>>(), phases, "{log}");
    has(
        &stored(&s, &sid, "trace.md"),
        &[
            QUESTION,
            "reasoning of model-a",
            "reasoning of model-c",
            "Not held: no divergence rule fired.",
            "Synthesized by model-b (arbiter)",
        ],
    );
    assert_eq!(record(&s, &sid), out, "the record is what was printed");
    // What `show` and `list` print: the_chamber_commands_print_the_session_its_trace_and_the_stats.
}

/// What the chamber commands print on an agreeing session: `ask --json` (the session and
/// the hint on stderr), `list`, `show` as text, `act`, `show --format json` once closed,
/// and `stats`, as text and JSON.
#[test]
fn the_chamber_commands_print_the_session_its_trace_and_the_stats() {
    let s = Scenario::new(pinned_usage(agreeing()));
    let shown = |args: &[&str]| transcript(&s.env, Some(&s.server), &s.repo, args);
    let json = |args: &[&str]| json_transcript(&s.env, Some(&s.server), &s.repo, args, 0);
    let ask = [
        "chamber",
        "ask",
        QUESTION,
        "--panel",
        "model-a,model-c",
        "--arbiter",
        "model-b",
        "--context",
        "calc.py",
        "--json",
        "--yes",
    ];
    let asked = triad(&s, &ask);
    asked.expect_code(6);
    let sid = id(&parse(&asked.stdout));
    let norm = s.env.normalizer().literal(s.server.base_url(), "[SERVER]");
    check(
        "chamber-ask-json",
        &asked.transcript(&command_line(&ask), &norm),
    );
    check("chamber-list", &shown(&["chamber", "list"]));
    assert_eq!(
        list(&s),
        json!([parse(&asked.stdout)]),
        "the JSON list is the sessions"
    );
    check("chamber-show", &shown(&["chamber", "show", &sid]));
    check(
        "chamber-act",
        &shown(&[
            "chamber",
            "act",
            &sid,
            "accepted",
            "--note",
            "sub() ships now",
        ]),
    );
    check(
        "json-chamber-show-closed",
        &json(&["chamber", "show", &sid, "--format", "json"]),
    );
    check("chamber-stats", &shown(&["chamber", "stats"]));
    check("json-chamber-stats", &json(&["chamber", "stats", "--json"]));
}

// --- 2. Divergence, rule by rule ---

#[test]
fn each_divergence_rule_alone_triggers_exactly_one_cross_examination() {
    let cases = [
        ("stances", ("yes", 8, EV), ("no-go", 8, EV), false),
        ("confidence", ("yes", 9, EV), ("yes", 5, EV), false),
        ("evidence", ("yes", 8, EV), ("yes", 8, OTHER_EV), false),
        ("arbiter", ("yes", 8, EV), ("yes", 8, EV), true),
    ];
    for (rule, (sa, ca, ea), (sc, cc, ec), flag) in cases {
        let (a, c) = (said("model-a", sa, ca, ea), said("model-c", sc, cc, ec));
        let s = Scenario::new(rules(a, c, flag, vec![synthesis(true, "yes", 7)]));
        let (r, out) = ask(&s, "model-a,model-c", &[]);
        r.expect_code(6);
        assert_eq!(fired(&out, 0), [rule], "{}", out["rounds"][0]["divergence"]);
        // One cross-examination request per panelist, never a second round.
        assert_eq!(count(&s, "cross-model-a"), 1, "{rule}");
        assert_eq!(count(&s, "cross-model-c"), 1, "{rule}");
        assert_eq!(count(&s, "p1-model-a") + count(&s, "p1-model-c"), 2);
        assert_eq!((count(&s, "assess"), count(&s, "synth")), (1, 1), "{rule}");
        assert_eq!(out["rounds"][0]["cross"].as_array().unwrap().len(), 2);
        // Each examinee sees its own answer and the other's.
        has(
            &user(&s.requests_for("cross-model-a")[0]),
            &[
                "# Your independent answer",
                "reasoning of model-a",
                "## model-c",
                "reasoning of model-c",
            ],
        );
        let dossier = user(&s.requests_for("synth")[0]);
        has(
            &dossier,
            &[
                &format!("- {rule}: fired"),
                "model-c — after cross-examination",
            ],
        );
        has(&r.stderr, &["one round of cross-examination"]);
    }
}

// --- 3. No consensus, an overruled consensus claim, a kept minority ---

#[test]
fn no_consensus_is_the_seeds_honest_answer_and_waits_for_the_founder() {
    let s = Scenario::new(disagreeing(9, 9, vec![synthesis(false, "", 4)]));
    let r = ask_raw(&s, "model-a,model-c", &["--yes"]);
    r.expect_code(6);
    has(
        &r.stdout,
        &[
            NO_CONSENSUS,
            "no consensus, a valid outcome",
            "Synthesized by model-b (arbiter)",
        ],
    );
    let rec = record(&s, &id(&list(&s)[0]));
    assert_eq!(rec["rounds"][0]["effective"]["consensus"], false);
    assert_eq!(rec["rounds"][0]["effective"]["answer"], NO_CONSENSUS);
    assert_eq!(stats(&s)["no_consensus"], 1);
}

#[test]
fn a_claimed_consensus_over_a_confident_split_is_overruled_and_minorities_are_kept() {
    // Both still disagree at 9/10 and 8/10: the claimed consensus is not one.
    let s = Scenario::new(disagreeing(9, 8, vec![synthesis(true, "yes", 9)]));
    let (r, out) = ask(&s, "model-a,model-c", &[]);
    r.expect_code(6);
    let eff = &out["rounds"][0]["effective"];
    assert_eq!(eff["consensus"], false, "{eff}");
    assert_eq!(eff["disagreement"], "substantive");
    assert_eq!(eff["answer"], NO_CONSENSUS);
    let verbatim = &out["rounds"][0]["synthesis"]["answer"];
    assert_eq!(verbatim["consensus"], true, "the claim is kept verbatim");
    has(
        &notices(&out),
        &[
            "the arbiter claimed a consensus, but the panelists still disagree",
            "model-c: no-go at 8/10",
            "recorded as no consensus",
        ],
    );

    // A dissent at 6/10 is not a confident split: the consensus stands, and the minority
    // the arbiter left out is kept.
    let s = Scenario::new(disagreeing(8, 6, vec![synthesis(true, "yes", 8)]));
    let (r, out) = ask(&s, "model-a,model-c", &[]);
    r.expect_code(6);
    let eff = &out["rounds"][0]["effective"];
    assert_eq!(eff["consensus"], true, "{eff}");
    assert_eq!(eff["minority"][0]["panelist"], "model-c", "{eff}");
    assert_eq!(eff["minority"][0]["view"], "no-go: reasoning of model-c");
    assert_eq!(
        out["rounds"][0]["synthesis"]["answer"]["minority"],
        json!([])
    );
    has(
        &notices(&out),
        &["model-c's view differs from the synthesis and the arbiter did not list it"],
    );
    has(
        &show(&s, &id(&out)),
        &["Minority views:\n- model-c: no-go: reasoning of model-c"],
    );
}

// --- 4. A degraded panel ---

/// One model of a provider that keeps failing takes only itself offline: the circuit breaker
/// is per model, so the healthy arbiter on the same server still synthesizes, and the failure
/// names the part the model played (a chamber panelist), not the role its calls go through.
#[test]
fn a_failing_panelist_leaves_its_providers_other_models_in_service() {
    let mut r = disagreeing(9, 9, vec![synthesis(false, "", 4)]);
    r.push(
        Rule::named("p1-model-d")
            .model("model-d")
            .reply(Reply::status(500))
            .repeat_last(true),
    );
    let s = panel_scenario(r);
    let run = triad(
        &s,
        &[
            "-c",
            "breaker.failure_threshold=2",
            "-c",
            "transport.max_retries=3",
            "chamber",
            "ask",
            QUESTION,
            "--panel",
            "model-a,model-c,model-d",
            "--arbiter",
            "model-b",
            "--json",
            "--yes",
        ],
    );
    // Synthesized, it waits for the founder's action.
    run.expect_code(6);
    let out = parse(&run.stdout);
    assert!(count(&s, "p1-model-d") >= 2, "model-d was asked and failed");
    assert!(
        count(&s, "synth") >= 1,
        "the arbiter on the same server answered"
    );
    let degraded = "degraded panel: 2 of 3 panelists answered; did not answer: model-d";
    has(&notices(&out), &[degraded]);
    let stored = stored(&s, &id(&out), "session.json");
    has(
        &stored,
        &["no model could answer for the chamber panelist: model-d"],
    );
    assert!(
        !stored.contains("for the arbiter role"),
        "the panelist's failure names the wrong role: {stored}"
    );
}

#[test]
fn a_panelist_that_fails_degrades_the_panel_and_says_so() {
    let mut r = disagreeing(9, 9, vec![synthesis(false, "", 4)]);
    r.push(panelist("model-d", vec![Reply::status(400)]));
    r.push(examinee("model-d", said("model-d", "yes", 8, EV)));
    let s = panel_scenario(r);
    let (run, out) = ask(&s, "model-a,model-c,model-d", &[]);
    run.expect_code(6);
    assert_eq!(count(&s, "p1-model-d"), 1, "a 400 is not retried");
    assert_eq!(
        count(&s, "cross-model-d"),
        0,
        "who did not answer is not examined"
    );
    assert_eq!(count(&s, "cross-model-a") + count(&s, "cross-model-c"), 2);
    let degraded = "degraded panel: 2 of 3 panelists answered; did not answer: model-d";
    has(&notices(&out), &[degraded]);
    has(&run.stdout, &[degraded]);
    has(
        &show(&s, &id(&out)),
        &[degraded, "Degraded panel: 2 of 3 panelists answered."],
    );
    has(
        &user(&s.requests_for("synth")[0]),
        &["## model-d — no answer (did not take part)"],
    );
    assert!(!user(&s.requests_for("assess")[0]).contains("## model-d"));
    // The honest outcome counts the perspectives that answered, not the panel asked.
    assert_eq!(out["rounds"][0]["effective"]["answer"], NO_CONSENSUS);

    // Two asked, one failed: no synthesis from a single voice.
    let mut rules = agreeing();
    rules.insert(0, panelist("model-c", vec![Reply::status(400)]));
    let s = Scenario::new(rules);
    let (run, out) = ask(&s, "model-a,model-c", &[]);
    run.expect_code(1);
    assert_eq!(out["status"], "stopped", "{out}");
    has(
        out["stop_reason"].as_str().unwrap(),
        &["only 1 of 2 panelists answered"],
    );
    assert_eq!(
        count(&s, "assess") + count(&s, "synth"),
        0,
        "no arbiter request"
    );
    has(
        &run.stderr,
        &["has no synthesis", "git triad chamber resume"],
    );
    assert_eq!(record(&s, &id(&out))["status"], "stopped");
    // Nothing to act on: refused, and the session stays as it was.
    let act = triad(&s, &["chamber", "act", &id(&out), "accepted"]);
    act.expect_code(2);
    has(&act.stderr, &["has no synthesis to act on"]);
    assert_eq!(record(&s, &id(&out))["status"], "stopped");
}

// --- 5-6. Caps ---

#[test]
fn the_session_hard_stop_records_the_figures_and_resume_finishes_with_a_raised_cap() {
    // Each independent answer reports 100k tokens in, 50k out: $0.20 at $1/M in, $2/M out.
    let costly = |who: &str| said(who, "yes", 8, EV).usage(100_000, 50_000);
    let synth = vec![synthesis(true, "yes", 9)];
    let s = Scenario::new(rules(costly("model-a"), costly("model-c"), false, synth));
    let r = ask_raw(
        &s,
        "model-a,model-c",
        &["--yes", "-c", "chamber.session_usd=0.3"],
    );
    r.expect_code(5);
    has(
        &r.stderr,
        &[
            "hard stop",
            "$0.4000 spent",
            "the cap is $0.30",
            "chamber resume",
        ],
    );
    assert_eq!(
        count(&s, "assess") + count(&s, "synth"),
        0,
        "nothing after the stop"
    );
    let sid = id(&list(&s)[0]);
    let rec = record(&s, &sid);
    assert_eq!(rec["status"], "stopped");
    has(rec["stop_reason"].as_str().unwrap(), &["$0.4000 spent"]);
    has(
        &show(&s, &sid),
        &["Stopped: the session's hard stop", "- model-a: $0.2000"],
    );

    let raised = ["-c", "chamber.session_usd=5"];
    let mut args = vec!["chamber", "resume", &sid, "--yes"];
    args.extend_from_slice(&raised);
    triad(&s, &args).expect_code(6);
    let rec = record(&s, &sid);
    assert_eq!(rec["status"], "awaiting_action", "{rec}");
    assert_eq!(rec["stop_reason"], Value::Null);
    assert_eq!((count(&s, "assess"), count(&s, "synth")), (1, 1));
    assert_eq!(
        count(&s, "p1-model-a") + count(&s, "p1-model-c"),
        2,
        "not asked again"
    );
    // A cap under a cent is written as it is, not rounded up past what it refuses.
    let tiny = ask_raw(
        &s,
        "model-a,model-c",
        &["--yes", "-c", "chamber.session_usd=0.005"],
    );
    tiny.expect_code(5);
    has(&tiny.stderr, &["the cap is $0.005 (chamber.session_usd)"]);
}

#[test]
fn the_daily_limit_refuses_a_second_session_with_the_figures_and_sends_nothing() {
    let s = Scenario::new(agreeing());
    let cap = ["-c", "chamber.sessions_per_day=1"];
    let (r, _) = ask(&s, "model-a,model-c", &cap);
    r.expect_code(6);
    has(&r.stderr, &["this is session 1 of the 1 allowed today"]);
    let before = s.server.requests().len();
    let r = ask_raw(&s, "model-a,model-c", &["--yes", cap[0], cap[1]]);
    r.expect_code(5);
    has(
        &r.stderr,
        &["daily limit is reached: 1 of 1 sessions today"],
    );
    assert_eq!(s.server.requests().len(), before, "nothing was sent");
    assert_eq!(
        list(&s).as_array().unwrap().len(),
        1,
        "no session was opened"
    );
}

/// A session that stopped before any model answered (the providers refused every call) is
/// not one of the day's sessions: the next one still may start under a cap of one.
#[test]
fn a_session_no_model_answered_does_not_count_against_the_daily_limit() {
    let mut rules = agreeing();
    for m in ["model-a", "model-c"] {
        let first = rules
            .iter()
            .position(|r| r.name.as_deref() == Some(&format!("p1-{m}")))
            .unwrap();
        let answer = said(m, "yes", 8, EV);
        rules[first] = panelist(m, vec![Reply::status(400), answer]);
    }
    let s = Scenario::new(rules);
    let cap = ["-c", "chamber.sessions_per_day=1"];
    let r = ask_raw(&s, "model-a,model-c", &["--yes", cap[0], cap[1]]);
    r.expect_code(1);
    let r = ask_raw(&s, "model-a,model-c", &["--yes", cap[0], cap[1]]);
    r.expect_code(6);
    has(&r.stderr, &["this is session 1 of the 1 allowed today"]);
    assert_eq!(list(&s).as_array().unwrap().len(), 2);
}

// --- 7. Levels ---

#[test]
fn level_two_accepts_itself_at_eight_and_escalates_below() {
    let s = Scenario::new(agreeing());
    let r = ask_raw(&s, "model-a,model-c", &["--level", "2", "--json"]);
    let out = parse(&r.ok().stdout);
    assert_eq!(out["status"], "auto_accepted", "{out}");
    assert_eq!(out["assessment"]["level"], "2");
    assert_eq!(out["founder_role"], Value::Null);
    assert!(
        !r.stderr.contains("approved with --yes"),
        "no approval asked"
    );

    let s = Scenario::new(both_yes(vec![synthesis(true, "yes", 6)]));
    let r = ask_raw(&s, "model-a,model-c", &["--level", "2", "--json"]);
    let out = parse(&r.expect_code(6).stdout);
    assert_eq!(out["status"], "awaiting_action");
    assert_eq!(out["assessment"]["level"], "3");
    has(
        &out["assessment"]["criteria"].to_string(),
        &[
            "arbiter confidence 6/10 is below the auto-accept threshold of 8/10",
            "escalated to Level 3",
        ],
    );
    has(&r.stderr, &["escalated to Level 3: git triad chamber act"]);
    let sid = id(&out);
    let act = ok_out(&s, &["chamber", "act", &sid, "accepted"]);
    has(&act, &["accepted by the founder; closed."]);
    let rec = record(&s, &sid);
    assert_eq!(
        (&rec["status"], &rec["founder_action"]),
        (&json!("closed"), &json!("accepted"))
    );
    assert_eq!(stats(&s)["escalated"], 1);
}

/// Seed 003: an arbiter that is also a panelist must self-check; a confident consensus
/// without one is not accepted by itself at Level 2 but escalated (exit 6), and the same
/// synthesis with the self-check is.
#[test]
fn an_arbiter_panelist_without_a_self_check_is_not_auto_accepted() {
    let panel = |self_check: &str| {
        let (a, b) = (said("model-a", "yes", 8, EV), said("model-b", "yes", 8, EV));
        Scenario::new(vec![
            panelist("model-a", vec![a.clone()]),
            panelist("model-b", vec![b.clone()]),
            examinee("model-a", a),
            examinee("model-b", b),
            assessor("model-b", false),
            arbiter(
                "model-b",
                vec![with(
                    synthesis(true, "yes", 9),
                    json!({"self_check": self_check}),
                )],
            ),
        ])
    };
    let s = panel("");
    let r = ask_raw(&s, "model-a,model-b", &["--level", "2", "--json"]);
    let out = parse(&r.expect_code(6).stdout);
    assert_eq!(out["arbiter_is_panelist"], true);
    assert_eq!(out["status"], "awaiting_action", "{out}");
    assert_eq!(out["assessment"]["level"], "3");
    has(
        &out["assessment"]["criteria"].to_string(),
        &[
            "is also a panelist and gave no self-check",
            "escalated to Level 3",
        ],
    );

    let s = panel("I checked model-a's evidence first; my own view got no extra weight");
    let r = ask_raw(&s, "model-a,model-b", &["--level", "2", "--json"]);
    let out = parse(&r.ok().stdout);
    assert_eq!(out["status"], "auto_accepted", "{out}");
}

#[test]
fn level_three_without_yes_and_without_a_terminal_is_refused_before_anything_is_sent() {
    let s = Scenario::new(agreeing());
    let r = ask_raw(&s, "model-a,model-c", &[]);
    r.expect_code(2);
    has(
        &r.stderr,
        &[
            "estimated cost at most $",
            "a Level 3 session needs your approval and there is no terminal",
        ],
    );
    assert!(s.server.requests().is_empty());
    assert_eq!(s.git(&["for-each-ref", "refs/triad/chamber/"]), "");
}

// --- 8. Founder roles ---

#[test]
fn an_approver_revises_the_synthesis_and_the_trace_says_so() {
    let s = Scenario::new(agreeing());
    let (r, out) = ask(&s, "model-a,model-c", &["--founder-role", "approver"]);
    r.expect_code(6);
    assert_eq!(out["founder_role"], "approver");
    let sid = id(&out);
    ok_out(
        &s,
        &[
            "chamber",
            "act",
            &sid,
            "revised",
            "--note",
            "only behind a flag",
        ],
    );
    has(
        &stored(&s, &sid, "trace.md"),
        &[
            "founder_role: approver",
            "founder_action: revised",
            "revised: only behind a flag",
        ],
    );
    let again = triad(&s, &["chamber", "act", &sid, "accepted"]);
    has(&again.expect_code(2).stderr, &["is closed"]);
}

#[test]
fn a_challenger_gets_two_rounds_that_resolve_and_no_third() {
    let s = Scenario::new(both_yes(vec![
        synthesis(true, "yes", 8),
        with(synthesis(true, "no-go", 7), json!({"resolution": "NO-GO"})),
        with(
            synthesis(true, "defer", 5),
            json!({"resolution": "NEED MORE DATA"}),
        ),
    ]));
    let (r, out) = ask(&s, "model-a,model-c", &["--founder-role", "challenger"]);
    has(&r.expect_code(6).stderr, &["or challenge it"]);
    let sid = id(&out);
    let challenge = |stance: &str, why: &str| respond(&s, &sid, stance, why, "7", &["--yes"]);
    challenge("no-go", "sub() would break the frozen calc API").expect_code(6);
    // The panel answered again, with the challenge in its brief.
    let again = s.requests_for("p1-model-a");
    assert_eq!(again.len(), 2);
    let brief = user(&again[1]);
    has(
        &brief,
        &[
            QUESTION,
            "# Added for this round (challenge 1)",
            "The founder challenges the synthesis",
            "sub() would break the frozen calc API",
        ],
    );
    assert_eq!(user(&s.requests_for("p1-model-c")[1]), brief);
    // The arbiter is told a resolution is required, and weighs the founder as an expert.
    let synth = s.requests_for("synth");
    assert_eq!(synth.len(), 2);
    has(
        &user(&synth[1]),
        &["`resolution` must be GO, NO-GO or NEED MORE DATA"],
    );
    assert!(!user(&synth[0]).contains("Resolution required"));
    has(&system(&synth[1]), &[FOUNDER_CLAUSE.trim()]);
    let rec = record(&s, &sid);
    assert_eq!(rec["resolution"], "NO-GO", "{rec}");
    assert_eq!(rec["rounds"][1]["kind"], "challenge 1");
    assert_eq!(rec["founder_action"], "challenged");
    assert_eq!(rec["challenges"][0]["stance"], "no-go");
    assert_eq!(rec["status"], "awaiting_action");

    challenge("no-go", "the benchmark is still missing").expect_code(6);
    let rec = record(&s, &sid);
    assert_eq!(rec["resolution"], "NEED MORE DATA");
    assert_eq!(rec["rounds"][2]["kind"], "challenge 2");
    has(
        &stored(&s, &sid, "trace.md"),
        &[
            "Resolution: NEED MORE DATA",
            "challenge 2:\n- stance: no-go",
        ],
    );

    let before = s.server.requests().len();
    let third = challenge("go", "one more time");
    has(
        &third.expect_code(2).stderr,
        &["already had 2 challenge rounds"],
    );
    assert_eq!(
        s.server.requests().len(),
        before,
        "a third round asks nobody"
    );
    assert_eq!(record(&s, &sid)["challenges"].as_array().unwrap().len(), 2);
}

#[test]
fn a_contributor_is_heard_before_the_synthesis_with_the_founder_clause_verbatim() {
    let s = Scenario::new(agreeing());
    let (r, out) = ask(&s, "model-a,model-c", &["--founder-role", "contributor"]);
    has(
        &r.expect_code(6).stderr,
        &["give your input as contributor"],
    );
    assert_eq!(out["status"], "awaiting_input", "{out}");
    assert_eq!(
        count(&s, "synth"),
        0,
        "no synthesis before the founder's input"
    );
    let sid = id(&out);
    triad(&s, &["chamber", "act", &sid, "accepted"]).expect_code(2);

    let why = "users keep asking for subtraction";
    let input = |extra: &[&str]| {
        let mut all = vec!["--evidence", "issue 12"];
        all.extend_from_slice(extra);
        respond(&s, &sid, "lean go", why, "6", &all)
    };
    // Without --yes and without a terminal: refused, and the session is as it was, so the
    // same command with --yes works.
    has(&input(&[]).expect_code(2).stderr, &["needs your approval"]);
    let rec = record(&s, &sid);
    assert_eq!(rec["status"], "awaiting_input", "{rec}");
    assert_eq!(rec["founder_input"], Value::Null);
    assert_eq!(count(&s, "synth"), 0);
    input(&["--yes"]).expect_code(6);
    let synth = s.requests_for("synth");
    assert_eq!(synth.len(), 1);
    has(&system(&synth[0]), &[FOUNDER_CLAUSE.trim()]);
    has(&user(&synth[0]), &["# Founder's input", why]);
    assert_eq!(count(&s, "p1-model-a"), 1, "the panel is not asked again");
    let rec = record(&s, &sid);
    assert_eq!(
        rec["founder_input"],
        json!({"stance": "lean go", "reasoning": why, "confidence": 6, "evidence": ["issue 12"]})
    );
    assert_eq!(rec["founder_role"], "contributor");
    assert_eq!(rec["founder_action"], "contributed");
    assert_eq!(rec["status"], "awaiting_action");
    has(
        &stored(&s, &sid, "trace.md"),
        &["founder_input:\n- stance: lean go"],
    );
}

#[test]
fn a_verifiers_claim_is_checked_by_the_panel_and_kept_with_its_outcome() {
    let mut r = agreeing();
    r.push(checker("model-a", "verified"));
    r.push(checker("model-c", "verified"));
    let s = Scenario::new(r);
    let (r, out) = ask(&s, "model-a,model-c", &["--founder-role", "verifier"]);
    r.expect_code(6);
    assert_eq!(count(&s, "synth"), 0);
    let sid = id(&out);
    let claim = "calc.py has no sub function";
    respond(&s, &sid, claim, "I read it this morning", "9", &["--yes"]).expect_code(6);
    for m in ["model-a", "model-c"] {
        let checks = s.requests_for(&format!("check-{m}"));
        assert_eq!(checks.len(), 1, "{m}");
        has(
            &user(&checks[0]),
            &[claim, "Treat it as a hypothesis to verify"],
        );
    }
    let rec = record(&s, &sid);
    assert_eq!(rec["verification"]["claim"]["stance"], claim);
    assert_eq!(rec["verification"]["outcome"], "verified");
    assert_eq!(rec["founder_action"], "verified");
    assert_eq!(rec["rounds"][0]["checks"].as_array().unwrap().len(), 2);
    let synth = s.requests_for("synth");
    assert_eq!(synth.len(), 1);
    has(
        &user(&synth[0]),
        &[
            "# Verification of a claim (evidence, not the founder's voice)",
            "Outcome of the panel's checks: verified",
        ],
    );
    assert!(
        !system(&synth[0]).contains(FOUNDER_CLAUSE.trim()),
        "a checked claim is evidence, not the founder's voice"
    );
    has(
        &stored(&s, &sid, "trace.md"),
        &[
            &format!("claim checked:\n- stance: {claim}"),
            "outcome: verified",
        ],
    );
}

#[test]
fn a_verifiers_claim_is_checked_against_the_files_it_names_and_the_tests_run_at_head() {
    let mut r = agreeing();
    r.push(checker("model-a", "falsified"));
    r.push(checker("model-c", "falsified"));
    let s = Scenario::new(r);
    s.git(&["config", "triad.trusted", "true"]);
    let (r, out) = ask(&s, "model-a,model-c", &["--founder-role", "verifier"]);
    r.expect_code(6);
    let sid = id(&out);
    let claim = "calc.py has no add function";
    let responded = triad(
        &s,
        &[
            "-c",
            "verify.command=python3 -c 'import calc; assert calc.add(2, 3) == 5'",
            "chamber",
            "respond",
            &sid,
            "--stance",
            claim,
            "--reasoning",
            "I read it",
            "--confidence",
            "9",
            "--evidence",
            "calc.py:1",
            "--evidence",
            "nowhere.py:3",
            "--yes",
        ],
    );
    responded.expect_code(6);
    has(
        &responded.stderr,
        &["reading the claim's evidence and running the tests at HEAD in the box"],
    );
    // Every checker is shown what git triad read and ran, as facts, and asked to cite them.
    for m in ["model-a", "model-c"] {
        let shown = user(&s.requests_for(&format!("check-{m}"))[0]);
        has(
            &shown,
            &[
                "# Sources (read and run by git triad, not by a model: facts)",
                "## file calc.py",
                "def add(a, b):",
                "## evidence `nowhere.py:3`",
                "names no file, revision or TaskSpec of this repository",
                "## the tests at HEAD: `python3 -c 'import calc; assert calc.add(2, 3) == 5'`, run in the box",
                "exit 0",
                "naming each source by its label",
            ],
        );
    }
    // The record keeps the sources; the trace cites them.
    let rec = record(&s, &sid);
    let sources = rec["verification"]["sources"].as_array().unwrap();
    assert_eq!(sources.len(), 3, "{rec}");
    assert_eq!(rec["verification"]["outcome"], "falsified");
    has(
        &stored(&s, &sid, "trace.md"),
        &[
            "source: file calc.py",
            "source: the tests at HEAD: `python3 -c 'import calc; assert calc.add(2, 3) == 5'`, run in the box (exit 0;",
        ],
    );
}

#[test]
fn an_untrusted_clone_checks_a_claim_without_running_its_tests() {
    let mut r = agreeing();
    r.push(checker("model-a", "verified"));
    r.push(checker("model-c", "verified"));
    let s = Scenario::new(r);
    s.git(&["config", "triad.trusted", "false"]);
    let (_, out) = ask(&s, "model-a,model-c", &["--founder-role", "verifier"]);
    let sid = id(&out);
    respond(
        &s,
        &sid,
        "calc.py adds",
        "read it",
        "9",
        &["--evidence", "calc.py", "--yes"],
    )
    .expect_code(6);
    let shown = user(&s.requests_for("check-model-a")[0]);
    has(
        &shown,
        &["## file calc.py", "## the tests at HEAD\n\nnot run: "],
    );
}

// --- 9. A model answering under another id ---

#[test]
fn a_panelist_answering_as_another_model_is_shown_never_silently_taken() {
    let a = said("model-a", "yes", 8, EV).reported_model("impostor-model");
    let c = said("model-c", "yes", 8, EV);
    let s = Scenario::new(rules(a, c, false, vec![synthesis(true, "yes", 9)]));
    let (r, out) = ask(&s, "model-a,model-c", &[]);
    r.expect_code(6);
    let line = "model-a was asked for `model-a` but the server answered as `impostor-model`";
    has(&notices(&out), &[line]);
    has(&r.stderr, &[&format!("chamber: warning: {line}")]);
    let turn = &out["rounds"][0]["answers"][0];
    assert_eq!(turn["model_mismatch"], true, "{turn}");
    assert_eq!(turn["reported_id"], "impostor-model");
    assert_eq!(out["rounds"][0]["answers"][1]["model_mismatch"], false);
    has(
        &show(&s, &id(&out)),
        &["[asked for model-a, the server answered as impostor-model]"],
    );
}

// --- 10. The arbiter is also a panelist ---

#[test]
fn an_arbiter_panelist_gets_the_conflict_clause_and_stats_warn_when_its_view_wins() {
    let (a, b) = (
        said("model-a", "no-go", 7, EV),
        said("model-b", "yes", 7, EV),
    );
    let synth = with(
        synthesis(true, "yes", 7),
        json!({
            "positions": [],
            "minority": [{"panelist": "model-a", "view": "no-go for now"}],
            "self_check": "I weighed model-a's frozen-API point against my own view",
        }),
    );
    let s = Scenario::new(vec![
        panelist("model-a", vec![a.clone()]),
        panelist("model-b", vec![b.clone()]),
        examinee("model-a", a),
        examinee("model-b", b),
        assessor("model-b", true),
        arbiter("model-b", vec![synth]),
    ]);
    let (r, out) = ask(&s, "model-a,model-b", &[]);
    r.expect_code(6);
    assert_eq!(out["arbiter_is_panelist"], true);
    assert!(fired(&out, 0).contains(&"stances".to_string()));
    assert_eq!(out["rounds"][0]["arbiter_view_won"], true, "{out}");
    let synth = s.requests_for("synth");
    assert_eq!(synth.len(), 1);
    has(&system(&synth[0]), &[CONFLICT_CLAUSE.trim()]);
    has(
        &user(&synth[0]),
        &["Arbiter: model-b (also a panelist). You are the arbiter, model-b."],
    );
    has(
        &show(&s, &id(&out)),
        &[
            "Arbiter: model-b (also a panelist).",
            "Self-check: I weighed model-a's",
        ],
    );

    let st = triad(&s, &["chamber", "stats"]);
    has(
        &st.ok().stderr,
        &[
            "warning: model-b's own panelist view won 1 of the 1 arbitrated sessions it judged \
           as arbiter and panelist (100 % > 50 %)",
        ],
    );
    has(
        &st.stdout,
        &["Arbiter model-b as panelist: own view won 1 of 1 arbitrated session(s)"],
    );
    let won = json!({"arbitrated": 1, "own_view_won": 1});
    assert_eq!(stats(&s)["arbiters"]["model-b"], won);
}

// --- Resume after the arbiter failed ---

#[test]
fn resume_asks_an_arbiter_that_gave_no_synthesis_again() {
    let mut rules = agreeing();
    rules.pop();
    let (fail, ok) = (Reply::status(400), Reply::json(synthesis(true, "yes", 9)));
    rules.push(on("model-b", "synth", SYNTH, vec![fail, ok]));
    let s = Scenario::new(rules);
    let (r, out) = ask(&s, "model-a,model-c", &[]);
    r.expect_code(1);
    assert_eq!(out["status"], "stopped");
    assert_eq!(out["stop_reason"], "the arbiter gave no synthesis");
    has(
        &notices(&out),
        &["the arbiter model-b could not synthesize"],
    );
    let sid = id(&out);
    triad(&s, &["chamber", "resume", &sid, "--yes"]).expect_code(6);
    assert_eq!(count(&s, "synth"), 2, "the arbiter was asked again");
    assert_eq!(
        count(&s, "p1-model-a") + count(&s, "assess"),
        2,
        "nothing else was"
    );
    let rec = record(&s, &sid);
    assert_eq!(rec["status"], "awaiting_action", "{rec}");
    assert_eq!(rec["rounds"][0]["effective"]["stance"], "yes");
    has(
        &notices(&rec),
        &["resumed after the arbiter gave no synthesis"],
    );
}

/// A panelist's and the arbiter's text reach `chamber ask`, `show` and `list` as text: an
/// escape sequence or a right-to-left override is shown, never obeyed.
#[test]
fn chamber_output_shows_model_text_escaped() {
    let hostile = "go\u{1b}]0;pwned\u{7} \u{202e}txt.exe\u{1b}[2J";
    let escaped = "go^[]0;pwned^G <U+202E>txt.exe^[[2J";
    let s = Scenario::new(rules(
        said("model-a", hostile, 8, EV),
        said("model-c", hostile, 8, EV),
        false,
        vec![synthesis(true, hostile, 9)],
    ));
    let run = ask_raw(&s, "model-a,model-c", &["--yes"]);
    run.expect_code(6);
    let obeyed = |t: &str| {
        t.chars()
            .any(|c| (c.is_control() && c != '\n' && c != '\t') || c == '\u{202e}')
    };
    for (what, text) in [
        ("ask", run.stdout.clone()),
        ("ask's stderr", run.stderr.clone()),
        ("list", ok_out(&s, &["chamber", "list"])),
    ] {
        assert!(!obeyed(&text), "chamber {what} printed raw text:\n{text}");
    }
    let id = list(&s)[0]["id"].as_str().unwrap().to_string();
    let shown = show(&s, &id);
    assert!(!obeyed(&shown), "{shown}");
    has(&shown, &[escaped]);
}

/// Issue #38: a small model's stored reasoning was cut mid-word with no marker. A server
/// that enforces the schema stops a text at the length the schema sent it allows; an answer
/// that reached it is stored with a marker saying so, and one shorter is stored as given.
#[test]
fn a_reasoning_cut_at_its_length_limit_is_stored_with_a_marker() {
    use git_triad::chamber::answer::PanelAnswer;
    use git_triad::model::structured::{fit_to_budget, schema_for};
    // The limit the panelists' schema carries at the chamber's default 1024 output tokens.
    let mut schema = schema_for::<PanelAnswer>("panelist").schema;
    fit_to_budget(&mut schema, 1024);
    let max = schema["properties"]["reasoning"]["maxLength"]
        .as_u64()
        .unwrap() as usize;
    let cut = "word ".repeat(max).chars().take(max).collect::<String>();
    let a =
        Reply::json(json!({"stance": "yes", "reasoning": cut, "confidence": 8, "evidence": [EV]}));
    let s = panel_scenario(rules(
        a,
        said("model-c", "yes", 8, EV),
        false,
        vec![synthesis(true, "yes", 9)],
    ));
    let (r, out) = ask(&s, "model-a,model-c", &[]);
    // Synthesized; it waits on the user's act.
    r.expect_code(6);
    // The server was sent that limit: the answer reached it.
    let asked = s.requests_for("p1-model-a")[0].to_string();
    assert!(asked.contains(&format!("\"maxLength\":{max}")), "{asked}");
    let answers = &record(&s, &id(&out))["rounds"][0]["answers"];
    let of = |model: &str| {
        answers
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["model"] == model)
            .unwrap()["answer"]["reasoning"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(
        of("model-a"),
        format!("{cut}… [cut at its {max}-character limit]")
    );
    assert_eq!(of("model-c"), "reasoning of model-c");
}
