//! The terminal views, driven in a pseudo-terminal of 80×24 and read back through an
//! independent terminal emulator (vt100), over real HTTP (the scripted server) and real
//! git: the live run view while a stage works and after the run; plain lines with
//! `--no-tui` on the same terminal; the session screen with its context bars, the tool
//! counter, tagged speakers, an interjection typed while the models work, scrolling back,
//! and leaving with the terminal as it was.

use std::time::Duration;

use git_triad::testkit::fake_llm::Reply;
use serde_json::json;

use crate::common::bin;
use crate::common::pty::Pty;
use crate::pipeline::{
    arbiter, architect_answer, happy_rules, implement_answer, issue, refactor_answer, review,
    stage, verify_answer, Scenario,
};
use crate::session::{rule, scenario, work_rules, MANAGER};

const LIMIT: Duration = Duration::from_secs(120);

/// The happy rules with the implement stage slow (so its live row can be seen) and
/// reporting its usage.
fn slow_implement_rules() -> Vec<git_triad::testkit::fake_llm::Rule> {
    vec![
        stage("architect", vec![Reply::text(architect_answer())]),
        stage(
            "implement",
            vec![Reply::text(implement_answer())
                .delay_ms(4000)
                .usage(1200, 340)],
        ),
        stage("refactor", vec![Reply::text(refactor_answer())]),
        stage("verify", vec![Reply::text(verify_answer())]),
        arbiter("architect", vec![review("APPROVE", json!([]))]),
        arbiter("verify", vec![review("APPROVE", json!([]))]),
    ]
}

/// The screen row holding every one of `needles`, if any.
fn row<'a>(screen: &'a str, needles: &[&str]) -> Option<&'a str> {
    screen
        .lines()
        .find(|l| needles.iter().all(|n| l.contains(n)))
}

#[test]
fn live_run_view_shows_each_stage_as_it_works_and_the_result_after() {
    let s = Scenario::new(slow_implement_rules());
    let mut cmd = s.env.command(bin(), &s.repo);
    cmd.args(["run", "--task", "add-sub"]);
    let mut pty = Pty::spawn(cmd, 80, 24);

    // While the implementer thinks: its row says so, the architect's shows its verdict.
    let during = pty.wait_for("the implement stage at work", LIMIT, |sc| {
        row(sc, &["implement", "model-a", "answering"]).is_some()
    });
    assert!(
        row(&during, &["✓ architect", "APPROVE by model-b"]).is_some(),
        "{during}"
    );
    assert!(
        row(&during, &["· refactor"]).is_some() && row(&during, &["· verify"]).is_some(),
        "the stages to come are listed: {during}"
    );
    assert!(
        row(&during, &["task add-sub", "arbiter bookend"]).is_some(),
        "{during}"
    );
    assert!(row(&during, &[" tokens · $"]).is_some(), "{during}");
    // What concluded is kept above the live lines, as the plain renderer says it.
    assert!(
        during.contains("triad: [architect] arbiter model-b: APPROVE"),
        "{during}"
    );

    let status = pty.wait(LIMIT);
    let end = pty.screen();
    assert!(status.success(), "{status}: {end}");
    for stage in ["architect", "implement", "refactor", "verify"] {
        assert!(
            row(&end, &[&format!("✓ {stage}")]).is_some(),
            "{stage} is not shown done: {end}"
        );
    }
    assert!(
        row(&end, &["✓ verify", "APPROVE by model-b"]).is_some(),
        "{end}"
    );
    assert!(!end.contains("answering"), "nothing still at work: {end}");
    assert!(row(&end, &["done in"]).is_some(), "{end}");
    // The tokens are the run's: at least the implementer's 1540.
    let tokens: u64 = row(&end, &[" tokens · $"])
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no token count: {end}"));
    assert!(tokens >= 1540, "{tokens}: {end}");
    // The summary follows on stdout, below the last frame.
    assert!(end.contains("see: git log --notes=triad"), "{end}");
    let raw = pty.raw();
    assert!(
        !raw.contains("\x1b[?1049h"),
        "the run view never takes the screen"
    );
}

#[test]
fn no_tui_on_a_terminal_prints_the_plain_lines() {
    let s = Scenario::new(happy_rules());
    let mut cmd = s.env.command(bin(), &s.repo);
    cmd.args(["run", "--task", "add-sub", "--no-tui"]);
    let mut pty = Pty::spawn(cmd, 80, 24);
    let status = pty.wait(LIMIT);
    let raw = pty.raw();
    assert!(status.success(), "{status}: {raw}");
    assert!(
        raw.contains("triad: [1/4 architect] model-a, attempt 1 of"),
        "{raw}"
    );
    assert!(
        raw.contains("triad: [verify] arbiter model-b: APPROVE"),
        "{raw}"
    );
    for seq in ["\x1b[J", "\x1b[?1049h", "\x1b[?25l"] {
        assert!(!raw.contains(seq), "{seq:?} drawn with --no-tui: {raw:?}");
    }
}

#[test]
fn session_screen_shows_bars_the_tool_counter_and_tagged_speakers() {
    let mut rules = work_rules(
        git_triad::testkit::fake_llm::WireProtocol::OpenAi,
        "model-c",
        Reply::text("It is done. Run approved.").usage(3000, 40),
        // Slow, so the screen can be read (and typed into) while it works.
        Reply::text("Complete. The run of add-sub2 is approved.")
            .delay_ms(4000)
            .usage(5000, 20),
    );
    rules.extend(happy_rules());
    let s = scenario("model-c", rules);
    let before = crate::common::user_state(&s.env, &s.repo);
    let mut cmd = s.env.command(bin(), &s.repo);
    cmd.arg("session");
    let mut pty = Pty::spawn(cmd, 80, 24);

    let first = pty.wait_for("the first turn", LIMIT, |sc| {
        sc.contains("Awaiting your command.")
    });
    assert!(pty.on_alternate_screen());
    let rows: Vec<&str> = first.lines().collect();
    assert!(rows[0].contains("GIT TRIAD · SESSION"), "{first}");
    assert!(rows[23].starts_with('╚'), "the frame fits 80×24: {first}");
    assert!(
        row(&first, &["Manager ─", "░", "0 %"]).is_some(),
        "the manager's bar: {first}"
    );

    pty.send("Add subtraction to calc.py.\r");
    let working = pty.wait_for("the orchestrator at work", LIMIT, |sc| {
        sc.contains("◈ run_pipeline (2)") && row(sc, &["Orchestrator I ─", "%"]).is_some()
    });
    // Its context bar beside the manager's.
    assert!(row(&working, &["Manager ─", "%"]).is_some(), "{working}");
    assert!(
        row(&working, &["You:", "Add subtraction to calc.py."]).is_some(),
        "{working}"
    );
    assert!(
        row(&working, &["◈ Orchestrator I: create_task (1)"]).is_some(),
        "{working}"
    );
    // Typed while the orchestrator works: an interjection.
    pty.send("focus on negative numbers\r");

    let done = pty.wait_for("the manager's answer", LIMIT, |sc| {
        sc.contains("Manager: It is done. Run approved.") && sc.contains("Awaiting your command.")
    });
    assert!(
        row(&done, &["Orchestrator I:", "Complete."]).is_some(),
        "{done}"
    );
    assert!(
        row(&done, &["You (interjecting): focus on negative numbers"]).is_some(),
        "{done}"
    );
    assert!(
        !done.contains("Orchestrator I ─"),
        "no orchestrator bar once released: {done}"
    );
    let manager: Vec<String> = s
        .requests_for("manager")
        .iter()
        .map(|v| v.to_string())
        .collect();
    assert!(
        manager[1].contains("Orchestrator I: Complete.")
            && manager[1].contains("Human: focus on negative numbers"),
        "the interjection reached the manager tagged Human: {}",
        manager[1]
    );

    // Page Up shows the start again, and says how much is below.
    pty.send("\x1b[5~");
    let back = pty.wait_for("the log scrolled back", LIMIT, |sc| {
        sc.contains("more (PgDn)")
    });
    assert!(back.contains("git triad: session"), "{back}");

    // A bigger window: the frame follows it.
    pty.resize(100, 30);
    let wide = pty.wait_for("the frame at 100×30", LIMIT, |sc| {
        sc.lines().nth(29).is_some_and(|l| l.starts_with('╚'))
    });
    assert!(
        wide.lines()
            .next()
            .is_some_and(|l| l.chars().count() == 100),
        "{wide}"
    );

    pty.send("/quit\r");
    let status = pty.wait(LIMIT);
    let after = pty.screen();
    assert!(status.success(), "{status}: {after}");
    assert!(!pty.on_alternate_screen(), "the screen is given back");
    assert!(after.contains("is recorded"), "{after}");
    assert!(pty.raw().contains("\x1b[?1049l"));
    assert_eq!(crate::common::user_state(&s.env, &s.repo), before);
}

/// While `run_pipeline` works, the screen shows the run's stages beside the tool; what the
/// orchestrator says beside a tool call is shown; once the orchestrators are released, no
/// tool stays shown as at work.
#[test]
fn session_screen_shows_the_orchestrators_words_and_a_runs_stages_while_it_works() {
    let mut rules = work_rules(
        git_triad::testkit::fake_llm::WireProtocol::OpenAi,
        "model-c",
        Reply::text("It is done."),
        Reply::text("Complete. add-sub2 is approved."),
    );
    // The orchestrator says why beside its run_pipeline call.
    let orch = rules
        .iter_mut()
        .find(|r| r.name.as_deref() == Some("orchestrator"))
        .unwrap();
    orch.responses[1] = crate::session::call("run_pipeline", json!({"task": "add-sub2"}))
        .with_text("Now the reviewed pipeline on add-sub2.");
    rules.extend(slow_implement_rules());
    let s = scenario("model-c", rules);
    let mut cmd = s.env.command(bin(), &s.repo);
    cmd.arg("session");
    let mut pty = Pty::spawn(cmd, 80, 24);
    pty.wait_for("the first turn", LIMIT, |sc| {
        sc.contains("Awaiting your command.")
    });
    pty.send("Add subtraction to calc.py.\r");
    let working = pty.wait_for("the run's implement stage on the screen", LIMIT, |sc| {
        row(sc, &["◈ run_pipeline (2)", "2/4 implement"]).is_some()
    });
    assert!(
        row(
            &working,
            &["Orchestrator I: Now the reviewed pipeline on add-sub2."]
        )
        .is_some(),
        "{working}"
    );
    let done = pty.wait_for("the manager's answer", LIMIT, |sc| {
        sc.contains("Manager: It is done.") && sc.contains("Awaiting your command.")
    });
    assert!(
        !done.lines().any(|l| l.starts_with("║ ◈")),
        "a tool is still shown at work after the release: {done}"
    );
    assert!(
        row(&done, &["Manager: disconnect_orchestrators"]).is_some(),
        "{done}"
    );
    pty.send("/quit\r");
    let status = pty.wait(LIMIT);
    assert!(status.success(), "{status}: {}", pty.screen());
}

#[test]
fn a_models_escape_sequences_are_drawn_as_text_and_ctrl_c_at_your_turn_leaves() {
    let hostile = "Heed\u{1b}]0;pwned\u{7} this\u{1b}[2J now.";
    let s = scenario(
        "model-c",
        vec![rule(
            "manager",
            git_triad::testkit::fake_llm::WireProtocol::OpenAi,
            "model-c",
            MANAGER,
            vec![Reply::text(hostile)],
        )],
    );
    let mut cmd = s.env.command(bin(), &s.repo);
    cmd.arg("session");
    let mut pty = Pty::spawn(cmd, 80, 24);
    pty.wait_for("the first turn", LIMIT, |sc| {
        sc.contains("Awaiting your command.")
    });
    pty.send("hello\r");
    let said = pty.wait_for("the manager's answer", LIMIT, |sc| {
        sc.contains("Manager: Heed")
    });
    assert!(
        said.contains("Manager: Heed^[]0;pwned^G this^[[2J now."),
        "{said}"
    );
    let raw = pty.raw();
    assert!(
        !raw.contains("\u{1b}]0;") && !raw.contains('\u{7}'),
        "a sequence from the model reached the terminal: {raw:?}"
    );
    // Ctrl-C while it is your turn: the session ends, recorded, the terminal given back.
    pty.wait_for("your turn again", LIMIT, |sc| {
        sc.contains("Awaiting your command.")
    });
    pty.send("\u{3}");
    let status = pty.wait(LIMIT);
    assert!(status.success(), "{status}: {}", pty.screen());
    assert!(!pty.on_alternate_screen());
    assert!(pty.screen().contains("is recorded"), "{}", pty.screen());
}

#[test]
fn a_halt_whose_reasons_hold_escape_sequences_reaches_the_terminal_as_text() {
    let halt = review(
        "HALT",
        json!([issue("Stop.\u{1b}]0;pwned\u{7}\rAPPROVE", "def sub(a, b):")]),
    );
    let s = Scenario::new(vec![
        stage("architect", vec![Reply::text(architect_answer())]),
        arbiter("architect", vec![halt]),
    ]);
    for extra in [&[][..], &["--no-tui"][..]] {
        let mut cmd = s.env.command(bin(), &s.repo);
        cmd.args(["run", "--task", "add-sub"]).args(extra);
        let mut pty = Pty::spawn(cmd, 100, 30);
        let status = pty.wait(LIMIT);
        let (raw, screen) = (pty.raw(), pty.screen());
        assert_eq!(status.code(), Some(3), "{extra:?}: {screen}");
        assert!(
            !raw.contains("\u{1b}]0;") && !raw.contains('\u{7}') && !raw.contains("\rAPPROVE"),
            "{extra:?}: a sequence from the model reached the terminal: {raw:?}"
        );
        assert!(
            screen.contains("Stop.^[]0;pwned^G^MAPPROVE"),
            "{extra:?}: {screen}"
        );
    }
}
