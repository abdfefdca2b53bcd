//! Rendering runs: the list of runs, one run in detail (text and markdown), the end-of-run
//! summary, and the JSON object of `--json` and `log --format json`.

use git2::Repository;
use serde::Serialize;

use super::{location, standing};
use crate::arbiter::Verdict;
use crate::bounded::indented as line;
use crate::git::FileStat;
use crate::git::ObjectId;
use crate::notes::{self, NoteLine};
use crate::pipeline::record::{ChamberLink, FormatRecord, ReconcileState};
use crate::pipeline::workflow::debate::report::DebateReport;
use crate::pipeline::workflow::parallel::report::ParallelReport;
use crate::pipeline::{RunState, RunStatus, Stage, StopReason};
use crate::routing::route::Routing;

/// The status a person is shown: the recorded one, except `interrupted` for a run recorded
/// as running whose process is gone (killed, or its machine restarted).
pub fn shown_status(repo: &Repository, s: &RunState) -> &'static str {
    if interrupted(repo, s) {
        "interrupted"
    } else {
        s.status().as_str()
    }
}

/// Whether the run is recorded as running but no process works on it.
fn interrupted(repo: &Repository, s: &RunState) -> bool {
    s.status() == RunStatus::Running && !crate::pipeline::run_alive(repo, s.run_id())
}

/// [`message`], or for an interrupted run where it stopped and how it goes on.
fn shown_message(repo: &Repository, s: &RunState) -> String {
    if !interrupted(repo, s) {
        return message(s);
    }
    let at = s
        .current_stage()
        .map_or("after the last stage".to_string(), |st| {
            format!("at the {st} stage")
        });
    format!(
        "interrupted {at}: the process that ran it is gone; `git triad resume {}` continues it",
        s.run_id()
    )
}

/// What a run's state says about why it stands where it does.
pub fn message(s: &RunState) -> String {
    match (s.stop_reason(), s.status()) {
        (Some(reason), _) => reason.describe(),
        (None, RunStatus::Running) => match s.current_stage() {
            Some(stage) => format!("in progress at the {stage} stage (or killed there)"),
            None => "in progress after the last stage (or killed there)".into(),
        },
        (None, status) => status.as_str().to_string(),
    }
}

/// The verdict a run ended with; `None` while it has not ended with one (running,
/// interrupted, failed, over budget, waiting on you): the verdicts of the stages it did
/// finish are not the run's.
pub fn ended_verdict(s: &RunState) -> Option<Verdict> {
    match s.status() {
        RunStatus::Approved
        | RunStatus::Flagged
        | RunStatus::Halted
        | RunStatus::RetriesExhausted => s.final_verdict(),
        _ => None,
    }
}

/// One line per run, under a header: its id, its status as a person is shown it, its task,
/// cost and the verdict it ended with (`-` for a run that has not ended with one).
pub fn list(repo: &Repository, runs: &[RunState]) -> String {
    let row = |id: &str, status: &str, task: &str, cost: &str, verdict: &str| {
        format!("{id:<20}  {status:<17} {task:<20} {cost:>8}  {verdict}\n")
    };
    let mut s = row("RUN", "STATUS", "TASK", "COST", "VERDICT");
    for r in runs {
        s.push_str(&row(
            r.run_id(),
            shown_status(repo, r),
            r.task(),
            &format!("${:.4}", r.spend().cost_usd),
            &ended_verdict(r).map_or("-".to_string(), |v| v.to_string()),
        ));
    }
    s
}

/// The summary printed when `run`, `resume` or `reconcile` ends.
pub fn summary(state: &RunState) -> String {
    let mut s = format!(
        "run {}: {}\n{}\n",
        state.run_id(),
        state.status().as_str(),
        message(state)
    );
    for st in state.stages() {
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
    s.push_str(&crate::pipeline::workflow::summary(state.workflow()));
    for l in state.chamber().iter().flat_map(|c| &c.sessions) {
        s.push_str(&chamber_line(l));
    }
    if let Some(r) = state.reconcile() {
        s.push_str(&reconcile_line(r));
    }
    if let Some(f) = state.format().last() {
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
        state.spend().cost_usd,
        state.spend().input_tokens,
        state.spend().output_tokens,
        state.branch(),
    ));
    s
}

/// The summary's reconciliation line: its verdict, who gave it, and when the facts raised
/// the model's answer, what it answered and why (so the reason for a FLAG is on stdout and
/// in the JSON, not only in the progress lines of the run that wrote it).
fn reconcile_line(r: &ReconcileState) -> String {
    let Some(verdict) = r.verdict else {
        return String::new();
    };
    let by = r
        .arbiter_model
        .as_deref()
        .map_or("arbiter unknown".to_string(), |m| format!("arbiter {m}"));
    let raised = r
        .raised
        .as_ref()
        .map(|x| format!(": raised from {} by facts: {}", x.from, x.by.join("; ")))
        .unwrap_or_default();
    let rewound = if r.rewound {
        " (after its one rewind)"
    } else {
        ""
    };
    format!(
        "  reconcile  {:<8} {by}{rewound}{raised}\n",
        verdict.to_string()
    )
}

/// What `run --json`, `resume --json` and `log --format json` print about one run: one
/// Serialize type, so the shape is written once and every field has a type.
#[derive(Debug, Serialize)]
pub struct RunReport<'a> {
    /// The run id.
    pub run: &'a str,
    /// Its task.
    pub task: &'a str,
    /// Its scratch branch.
    pub branch: &'a str,
    /// The commit it started from.
    pub base: &'a ObjectId,
    /// Where it stands (`approved`, `halted`, `budget_exceeded`, …).
    pub status: &'static str,
    /// Why, in a sentence.
    pub message: String,
    /// Why it stopped, as recorded.
    pub stop: Option<&'a StopReason>,
    /// Each stage.
    pub stages: Vec<StageReport<'a>>,
    /// The verdict in force at its end.
    pub final_verdict: Option<Verdict>,
    /// The parallel exploration or tournament, if it followed one (see
    /// [`crate::pipeline::workflow::WorkflowReport`]).
    pub parallel: Option<ParallelReport<'a>>,
    /// The chamber sessions it opened, if any.
    pub chamber: Option<ChamberReport<'a>>,
    /// The debate, if it had one.
    pub debate: Option<DebateReport<'a>>,
    /// The last formatter run.
    pub format: Option<FormatReport<'a>>,
    /// The reconciliation against the TaskSpec, if the run had one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reconciliation: Option<ReconcileReport<'a>>,
    /// USD spent.
    #[serde(serialize_with = "crate::model::usage::rounded_usd")]
    pub cost_usd: f64,
    /// Tokens spent.
    pub tokens: Tokens,
    /// How its roles were routed by measured fitness; only a routed run says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub routing: Option<&'a Routing>,
    /// What to do next (`run` and `resume` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hints: Option<Vec<String>>,
}

/// One stage of a [`RunReport`].
#[derive(Debug, Serialize)]
pub struct StageReport<'a> {
    /// Which.
    pub stage: Stage,
    /// Its accepted commit.
    pub commit: &'a Option<ObjectId>,
    /// The model of its last attempt.
    pub model: &'a str,
    /// Attempts made.
    pub attempts: usize,
    /// Its verdict.
    pub verdict: Option<Verdict>,
    /// Its arbiter.
    pub arbiter_model: &'a Option<String>,
}

/// The chamber of a [`RunReport`].
#[derive(Debug, Serialize)]
pub struct ChamberReport<'a> {
    /// The panel.
    pub panel: &'a [String],
    /// The arbiter.
    pub arbiter: &'a str,
    /// The sessions the run opened.
    pub sessions: &'a [ChamberLink],
}

/// The last formatter run of a [`RunReport`].
#[derive(Debug, Serialize)]
pub struct FormatReport<'a> {
    /// The command.
    pub command: &'a str,
    /// How it exited.
    pub exit_code: Option<i32>,
    /// The commit it made, if any.
    pub commit: &'a Option<ObjectId>,
    /// What it did.
    pub detail: &'a str,
}

/// The reconciliation of a [`RunReport`].
#[derive(Debug, Serialize)]
pub struct ReconcileReport<'a> {
    /// Its last verdict.
    pub verdict: Verdict,
    /// The model that gave it.
    pub arbiter_model: Option<&'a str>,
    /// What the model answered, when the facts raised it.
    pub model_verdict: Option<Verdict>,
    /// The facts that raised it.
    pub raised_by: &'a [String],
    /// Whether its one REJECT rewind was used.
    pub rewound: bool,
}

/// Input and output tokens.
#[derive(Debug, Serialize)]
pub struct Tokens {
    /// Prompt tokens.
    pub input: u64,
    /// Completion tokens.
    pub output: u64,
}

impl<'a> RunReport<'a> {
    /// The report of `state`, without hints.
    pub fn of(state: &'a RunState) -> RunReport<'a> {
        let workflow = crate::pipeline::workflow::report(state.workflow());
        RunReport {
            run: state.run_id(),
            task: state.task(),
            branch: state.branch(),
            base: state.base(),
            status: state.status().as_str(),
            message: message(state),
            stop: state.stop_reason(),
            stages: state
                .stages()
                .iter()
                .map(|s| StageReport {
                    stage: s.stage,
                    commit: &s.commit,
                    model: s.last_model(),
                    attempts: s.attempts.len(),
                    verdict: s.verdict,
                    arbiter_model: &s.arbiter_model,
                })
                .collect(),
            final_verdict: ended_verdict(state),
            parallel: workflow.parallel,
            chamber: state.chamber().map(|c| ChamberReport {
                panel: &c.panel,
                arbiter: &c.arbiter,
                sessions: &c.sessions,
            }),
            debate: workflow.debate,
            format: state.format().last().map(|f| FormatReport {
                command: &f.outcome.command,
                exit_code: f.outcome.exit_code,
                commit: &f.commit,
                detail: &f.detail,
            }),
            reconciliation: state.reconcile().and_then(|r| {
                Some(ReconcileReport {
                    verdict: r.verdict?,
                    arbiter_model: r.arbiter_model.as_deref(),
                    model_verdict: r.raised.as_ref().map(|x| x.from),
                    raised_by: r.raised.as_ref().map_or(&[], |x| &x.by[..]),
                    rewound: r.rewound,
                })
            }),
            cost_usd: state.spend().cost_usd,
            tokens: Tokens {
                input: state.spend().input_tokens,
                output: state.spend().output_tokens,
            },
            routing: state.routing(),
            hints: None,
        }
    }

    /// The report with what to do next.
    pub fn with_hints(mut self, hints: Vec<String>) -> Self {
        self.hints = Some(hints);
        self
    }

    /// The report as one line of JSON.
    pub fn to_json(&self) -> String {
        // Strings, numbers and enums with string names: serde_json always serializes them.
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// One run in detail: stages, attempts, and the issues of every verdict note; `md` renders
/// markdown for a pull request.
pub fn detail(repo: &Repository, s: &RunState, md: bool) -> String {
    let message = shown_message(repo, s);
    let (id, task, status) = (s.run_id(), s.task(), shown_status(repo, s));
    let (branch, base, mode) = (s.branch(), s.base().short(), s.mode().as_str());
    let (cost, tin, tout) = (
        s.spend().cost_usd,
        s.spend().input_tokens,
        s.spend().output_tokens,
    );
    let mut o = if md {
        let verdict = ended_verdict(s).map_or("none".to_string(), |v| v.to_string());
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
    for st in s.stages() {
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
    o.push_str(&crate::pipeline::workflow::render(s.workflow(), md));
    if let Some(c) = s.consensus() {
        o.push_str(&super::deliberation::render(c, md));
    }
    for l in s.chamber().iter().flat_map(|c| &c.sessions) {
        o.push_str(&chamber_line(l));
    }
    o.push_str(&format_section(s.format(), md));
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

/// The issues of the review lines on every attempt commit of the run.
fn issues(repo: &Repository, s: &RunState, md: bool) -> String {
    let (bullet, strong, code) = if md {
        ("- ", "**", "`")
    } else {
        ("  ", "", "")
    };
    let mut out = String::new();
    for st in s.stages() {
        for a in &st.attempts {
            let Some(commit) = a.commit.as_ref().and_then(|c| c.oid().ok()) else {
                continue;
            };
            let lines = notes::read(repo, commit).unwrap_or_default();
            let reviews = lines.iter().filter_map(|l| match &l.line {
                NoteLine::Verdict(v) => v.review(),
                _ => None,
            });
            for review in reviews {
                if let Some(c) = review.coverage.as_ref().and_then(|c| c.describe()) {
                    out.push_str(&format!(
                        "{bullet}coverage of the review (stage {}, attempt {}): {c}\n",
                        st.stage.as_str(),
                        a.n
                    ));
                }
                for i in &review.issues {
                    out.push_str(&format!(
                        "{bullet}{strong}{}{strong} {} {code}{}{code} — {}{} (stage {}, attempt {}, {})\n",
                        i.severity.as_str(),
                        i.category.as_str(),
                        location(i),
                        i.description,
                        standing(i),
                        st.stage.as_str(),
                        a.n,
                        review.verdict
                    ));
                }
            }
        }
    }
    out
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

/// The formatter section of a run's detail: every time it ran, how, and its commit.
fn format_section(runs: &[FormatRecord], md: bool) -> String {
    if runs.is_empty() {
        return String::new();
    }
    let mut o = String::from(if md {
        "\n### Formatter\n\n"
    } else {
        "\nformatter:\n"
    });
    for f in runs {
        let at = f.commit.as_ref().map_or(String::from("no commit"), |c| {
            format!("commit {}", c.short())
        });
        let exit = f
            .outcome
            .exit_code
            .map_or("killed".to_string(), |c| format!("exit {c}"));
        o.push_str(&line(
            md,
            1,
            &format!(
                "`{}` on {} ({exit}, {} ms): {at} — {}",
                f.outcome.command,
                f.input.short(),
                f.outcome.duration_ms,
                f.detail
            ),
        ));
        if f.failed() && !f.outcome.tail.trim().is_empty() {
            o.push_str(&line(
                md,
                2,
                &format!(
                    "output: {}",
                    crate::bounded::clip(f.outcome.tail.trim(), 500)
                ),
            ));
        }
    }
    o
}
