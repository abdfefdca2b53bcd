//! Rendering runs: the list of runs, one run in detail (text and markdown), the end-of-run
//! summary, and the JSON object of `--json` and `log --format json`.

use git2::Repository;
use serde_json::{json, Value};

use super::{location, standing};
use crate::git::FileStat;
use crate::notes::{self, Record, VerdictLine};
use crate::pipeline::{RunState, RunStatus};

/// What a run's state says about why it stands where it does.
pub fn message(s: &RunState) -> String {
    match (&s.stop, s.status) {
        (Some(reason), _) => reason.describe(),
        (None, RunStatus::Running) => match s.current_stage() {
            Some(stage) => format!("in progress at the {stage} stage (or killed there)"),
            None => "in progress after the last stage (or killed there)".into(),
        },
        (None, status) => status.as_str().to_string(),
    }
}

/// One line per run.
pub fn list(runs: &[RunState]) -> String {
    let mut s = String::new();
    for r in runs {
        s.push_str(&format!(
            "{}  {:<17} {:<20} ${:.4}  {}\n",
            r.run_id,
            r.status.as_str(),
            r.task,
            r.spend.cost_usd,
            r.final_verdict().map_or("-".to_string(), |v| v.to_string())
        ));
    }
    s
}

/// The summary printed when `run`, `resume` or `reconcile` ends.
pub fn summary(state: &RunState) -> String {
    let mut s = format!(
        "run {}: {}\n{}\n",
        state.run_id,
        state.status.as_str(),
        message(state)
    );
    for st in &state.stages {
        let accepted = st
            .attempts
            .iter()
            .rev()
            .find(|a| a.commit == st.commit && a.commit.is_some());
        s.push_str(&format!(
            "  {:<10} {:<8} {} attempt(s){}{}{}\n",
            st.stage.as_str(),
            st.verdict.map_or("-".to_string(), |v| v.to_string()),
            st.attempts.len(),
            st.commit
                .as_ref()
                .map(|c| format!(", commit {}", c.short()))
                .unwrap_or_default(),
            st.arbiter_model
                .as_deref()
                .map(|a| format!(", arbiter {a}"))
                .unwrap_or_default(),
            accepted
                .map(|a| format!(": {}", FileStat::describe(&a.changed)))
                .unwrap_or_default()
        ));
    }
    if let Some(p) = &state.parallel {
        s.push_str(&parallel_line(p));
    }
    if let Some(d) = &state.debate {
        s.push_str(&debate_line(d));
    }
    for l in state.chamber.iter().flat_map(|c| &c.sessions) {
        s.push_str(&chamber_line(l));
    }
    if let Some(f) = state.format.last() {
        s.push_str(&format!(
            "  format     {}: {}\n",
            f.commit
                .as_ref()
                .map_or("no commit".to_string(), |c| format!("commit {}", c.short())),
            f.detail
        ));
    }
    s.push_str(&format!(
        "cost ${:.4}, {} tokens in, {} out\nbranch: {}\n",
        state.spend.cost_usd, state.spend.input_tokens, state.spend.output_tokens, state.branch,
    ));
    s
}

/// The JSON object describing a run.
pub fn json(state: &RunState) -> Value {
    let mut v = json!({
        "run": state.run_id,
        "task": state.task,
        "branch": state.branch,
        "base": state.base,
        "status": state.status.as_str(),
        "message": message(state),
        "stop": state.stop,
        "stages": state.stages.iter().map(|s| json!({
            "stage": s.stage,
            "commit": s.commit,
            "model": s.last_model(),
            "attempts": s.attempts.len(),
            "verdict": s.verdict,
            "arbiter_model": s.arbiter_model,
        })).collect::<Vec<_>>(),
        "final_verdict": state.final_verdict(),
        "parallel": state.parallel.as_ref().map(|p| json!({
            "candidates": p.models,
            "present": p.present().map(|c| &c.model).collect::<Vec<_>>(),
            "degraded": p.degraded(),
            "winner": p.winner.as_ref().map(|w| &w.model),
            "won_by": p.winner.as_ref().map(|w| w.by.as_str()),
            "branches": p.candidates.iter().map(|c| &c.branch).collect::<Vec<_>>(),
            "fanout_ms": p.fanout_ms,
        })),
        "chamber": state.chamber.as_ref().map(|c| json!({
            "panel": c.panel,
            "arbiter": c.arbiter,
            "sessions": c.sessions,
        })),
        "debate": state.debate.as_ref().map(|d| json!({
            "debaters": d.models,
            "standing": d.standing().map(|x| &x.model).collect::<Vec<_>>(),
            "degraded": d.degraded(),
            "tiebreaker": d.tiebreaker,
            "winner": d.judgment.as_ref().map(|j| &j.winner),
            "position": d.judgment.as_ref().map(|j| &j.label),
            "cost_usd": d.spend().cost_usd,
        })),
        "format": state.format.last().map(|f| json!({
            "command": f.outcome.command,
            "exit_code": f.outcome.exit_code,
            "commit": f.commit,
            "detail": f.detail,
        })),
        "cost_usd": state.spend.cost_usd,
        "tokens": {"input": state.spend.input_tokens, "output": state.spend.output_tokens},
    });
    // Only a run that routed roles by measured fitness says how.
    if let Some(routing) = &state.routing {
        v["routing"] = json!(routing);
    }
    v
}

/// One run in detail: stages, attempts, and the issues of every verdict note; `md` renders
/// markdown for a pull request.
pub fn detail(repo: &Repository, s: &RunState, md: bool) -> String {
    let message = message(s);
    let (id, task, status) = (&s.run_id, &s.task, s.status.as_str());
    let (branch, base, mode) = (&s.branch, s.base.short(), mode_name(s));
    let (cost, tin, tout) = (
        s.spend.cost_usd,
        s.spend.input_tokens,
        s.spend.output_tokens,
    );
    let mut o = if md {
        let verdict = s
            .final_verdict()
            .map_or("none".to_string(), |v| v.to_string());
        let first = message.lines().next().unwrap_or("");
        format!(
            "## git triad run `{id}` — task `{task}`\n\n\
             **Status:** {status} — {first}  \n**Final verdict:** {verdict}  \n\
             **Branch:** `{branch}` (base `{base}`)  \n**Arbiter mode:** {mode}  \n\
             **Cost:** ${cost:.4} ({tin} tokens in, {tout} out)\n\n\
             | Stage | Model | Attempts | Verdict | Arbiter | Commit |\n|---|---|---|---|---|---|\n"
        )
    } else {
        format!(
            "run {id}  task {task}  status {status}\n{message}\n\
             branch {branch}  base {base}  mode {mode}  cost ${cost:.4}  tokens {tin} in / {tout} out\n\n"
        )
    };
    for st in &s.stages {
        let commit = st.commit.as_ref().map_or("-", |c| c.short());
        let verdict = st.verdict.map_or("-".to_string(), |v| v.to_string());
        let arbiter = st.arbiter_model.as_deref().unwrap_or("-");
        if md {
            o.push_str(&format!(
                "| {} | {} | {} | {verdict} | {arbiter} | `{commit}` |\n",
                st.stage.as_str(),
                st.last_model(),
                st.attempts.len(),
            ));
            continue;
        }
        o.push_str(&format!(
            "{:<10} {:<8} model {}  arbiter {arbiter}  commit {commit}\n",
            st.stage.as_str(),
            verdict,
            st.last_model(),
        ));
        for a in &st.attempts {
            o.push_str(&format!(
                "    attempt {} ({}): {}{} — {} [${:.4}, {} ms]\n",
                a.n,
                a.model,
                a.result.as_str(),
                a.verdict.map(|v| format!(" {v}")).unwrap_or_default(),
                a.detail,
                a.spend.cost_usd,
                a.spend.latency_ms
            ));
            if a.commit.is_some() {
                o.push_str(&format!(
                    "      changed: {}\n",
                    FileStat::describe(&a.changed)
                ));
            }
            if !a.left_out.is_empty() {
                o.push_str(&format!("      prompt: {}\n", a.left_out.describe()));
            }
        }
    }
    if let Some(p) = &s.parallel {
        o.push_str(&super::parallel::render(p, md));
    }
    if let Some(d) = &s.debate {
        o.push_str(&super::debate::render(d, md));
    }
    if let Some(c) = &s.consensus {
        o.push_str(&super::deliberation::render(c, md));
    }
    for l in s.chamber.iter().flat_map(|c| &c.sessions) {
        o.push_str(&chamber_line(l));
    }
    o.push_str(&super::debate::format_section(&s.format, md));
    let issues = issues(repo, s, md);
    if !issues.is_empty() {
        o.push_str(if md {
            "\n### Issues\n\n"
        } else {
            "\nissues:\n"
        });
        o.push_str(&issues);
    }
    o
}

fn mode_name(s: &RunState) -> String {
    serde_json::to_value(s.mode)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// The issues of the review lines on every attempt commit of the run.
fn issues(repo: &Repository, s: &RunState, md: bool) -> String {
    let (bullet, strong, code) = if md {
        ("- ", "**", "`")
    } else {
        ("  ", "", "")
    };
    let mut out = String::new();
    for st in &s.stages {
        for a in &st.attempts {
            let Some(commit) = a.commit.as_ref().and_then(|c| c.oid().ok()) else {
                continue;
            };
            let lines = notes::read(repo, commit).unwrap_or_default();
            for line in lines.iter().filter_map(VerdictLine::from_value) {
                let Record::Review(r) = &line.record else {
                    continue;
                };
                for i in &r.review.issues {
                    out.push_str(&format!(
                        "{bullet}{strong}{}{strong} {} {code}{}{code} — {}{} (stage {}, attempt {}, {})\n",
                        i.severity.as_str(),
                        i.category.as_str(),
                        location(i),
                        i.description,
                        standing(i),
                        st.stage.as_str(),
                        a.n,
                        r.review.verdict
                    ));
                }
            }
        }
    }
    out
}

/// The end-of-run line of a parallel exploration: who won among how many, and whether the
/// panel was complete (a degraded one is never presented as the full panel).
fn parallel_line(p: &crate::pipeline::record::ParallelState) -> String {
    let present = p.present().count();
    let panel = if p.degraded() {
        let missing: Vec<&str> = p
            .candidates
            .iter()
            .filter(|c| c.commit.is_none())
            .map(|c| c.model.as_str())
            .collect();
        format!(
            "DEGRADED: {present} of {} candidates (left out: {})",
            p.models.len(),
            missing.join(", ")
        )
    } else {
        format!("{present} candidates")
    };
    match &p.winner {
        Some(w) => format!(
            "  parallel   winner {} ({}) among {panel}\n",
            w.model,
            w.by.as_str()
        ),
        None => format!("  parallel   no winner among {panel}\n"),
    }
}

/// One chamber session of a run: what opened it, what became of it, where to read it.
fn chamber_line(l: &crate::pipeline::record::ChamberLink) -> String {
    let id = if l.session.is_empty() {
        "-".to_string()
    } else {
        l.session.clone()
    };
    format!(
        "  chamber    {} at {}: session {id}, {}\n",
        l.trigger, l.stage, l.outcome
    )
}

/// The end-of-run line of a debate: which position won among how many debaters, and
/// whether the panel was complete.
fn debate_line(d: &crate::pipeline::record::DebateState) -> String {
    let standing = d.standing().count();
    let panel = if d.degraded() {
        let gone: Vec<&str> = d
            .debaters
            .iter()
            .filter(|x| x.absent.is_some())
            .map(|x| x.model.as_str())
            .collect();
        format!(
            "DEGRADED: {standing} of {} debaters (dropped out: {})",
            d.models.len(),
            gone.join(", ")
        )
    } else {
        format!("{standing} debaters")
    };
    match &d.judgment {
        Some(j) => format!(
            "  debate     position {} ({}) won, judged by {}, among {panel}\n",
            j.label, j.winner, j.model
        ),
        None => format!("  debate     no judgment among {panel}\n"),
    }
}
