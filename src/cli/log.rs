//! `git triad log`: the runs of this repository, or one run in detail.

use clap::{Args, ValueEnum};

use super::run::{need_repo, run_json};
use super::{ok, out, CommandError, CommandResult, Context};
use crate::pipeline::{list_runs, Recorder, RunState};

/// Output formats of `git triad log`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// For the terminal.
    Text,
    /// A report to paste into a pull request.
    Markdown,
    /// Machine-readable.
    Json,
}

/// List runs, or show one run's stages, attempts, verdicts, issues and cost.
#[derive(Debug, Args)]
pub struct LogArgs {
    /// A run id; without it, every run is listed.
    pub run_id: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    pub format: LogFormat,
}

/// Runs `git triad log`.
pub fn run(ctx: &Context, args: &LogArgs) -> CommandResult {
    let repo = need_repo(ctx)?;
    let Some(id) = &args.run_id else {
        let runs = list_runs(repo);
        let text = match args.format {
            LogFormat::Json => format!(
                "{}\n",
                serde_json::Value::Array(runs.iter().map(run_json).collect())
            ),
            _ => {
                if runs.is_empty() {
                    "no runs yet: start one with `git triad run --task <slug>`\n".to_string()
                } else {
                    let mut s = String::new();
                    for r in &runs {
                        s.push_str(&format!(
                            "{}  {:<17} {:<20} ${:.4}  {}\n",
                            r.run_id,
                            r.status.as_str(),
                            r.task,
                            r.cost_usd,
                            r.final_verdict().map_or("-".to_string(), |v| v.to_string())
                        ));
                    }
                    s
                }
            }
        };
        out(&text)?;
        return ok();
    };
    let state = Recorder::open(repo, id)
        .load()
        .map_err(CommandError::failure)?
        .ok_or_else(|| {
            CommandError::usage(format!("there is no run `{id}`"))
                .hint("`git triad log` lists the runs of this repository")
        })?;
    let text = match args.format {
        LogFormat::Json => format!("{}\n", run_json(&state)),
        LogFormat::Text => render(repo, &state, false),
        LogFormat::Markdown => render(repo, &state, true),
    };
    out(&text)?;
    ok()
}

fn review_lines(repo: &git2::Repository, commit: &str) -> Vec<serde_json::Value> {
    git2::Oid::from_str(commit)
        .ok()
        .and_then(|o| crate::notes::read(repo, o).ok())
        .unwrap_or_default()
}

fn render(repo: &git2::Repository, s: &RunState, md: bool) -> String {
    let mut o = String::new();
    if md {
        o.push_str(&format!(
            "## git triad run `{}` — task `{}`\n\n",
            s.run_id, s.task
        ));
        o.push_str(&format!(
            "**Status:** {} — {}  \n**Final verdict:** {}  \n**Branch:** `{}` (base `{}`)  \n**Arbiter mode:** {}  \n**Cost:** ${:.4} ({} tokens in, {} out)\n\n",
            s.status.as_str(),
            s.message.lines().next().unwrap_or(""),
            s.final_verdict().map_or("none".to_string(), |v| v.to_string()),
            s.branch,
            &s.base[..10.min(s.base.len())],
            s.mode,
            s.cost_usd,
            s.tokens[0],
            s.tokens[1]
        ));
        o.push_str("| Stage | Model | Attempts | Verdict | Arbiter | Commit |\n|---|---|---|---|---|---|\n");
    } else {
        o.push_str(&format!(
            "run {}  task {}  status {}\n{}\nbranch {}  base {}  mode {}  cost ${:.4}  tokens {} in / {} out\n\n",
            s.run_id,
            s.task,
            s.status.as_str(),
            s.message,
            s.branch,
            &s.base[..10.min(s.base.len())],
            s.mode,
            s.cost_usd,
            s.tokens[0],
            s.tokens[1]
        ));
    }
    for st in &s.stages {
        let model = st
            .attempts
            .last()
            .map_or(st.model().to_string(), |a| a.model.clone());
        let commit = st.commit.as_deref().map_or("-", |c| &c[..10.min(c.len())]);
        let verdict = st.verdict.map_or("-".to_string(), |v| v.to_string());
        if md {
            o.push_str(&format!(
                "| {} | {} | {} | {} | {} | `{}` |\n",
                st.stage.as_str(),
                model,
                st.attempts.len(),
                verdict,
                st.arbiter_model.as_deref().unwrap_or("-"),
                commit
            ));
        } else {
            o.push_str(&format!(
                "{:<10} {:<8} model {}  arbiter {}  commit {}\n",
                st.stage.as_str(),
                verdict,
                model,
                st.arbiter_model.as_deref().unwrap_or("-"),
                commit
            ));
            for a in &st.attempts {
                o.push_str(&format!(
                    "    attempt {} ({}): {}{} — {} [${:.4}, {} ms]\n",
                    a.n,
                    a.model,
                    a.result,
                    a.verdict.map(|v| format!(" {v}")).unwrap_or_default(),
                    a.detail,
                    a.cost_usd,
                    a.latency_ms
                ));
            }
        }
    }
    // Issues from the verdict notes of every attempt commit.
    let mut issues = String::new();
    for st in &s.stages {
        for a in &st.attempts {
            let Some(c) = &a.commit else { continue };
            for line in review_lines(repo, c) {
                let Some(list) = line.get("issues").and_then(|v| v.as_array()) else {
                    continue;
                };
                for i in list {
                    let g = |k: &str| i.get(k).and_then(|v| v.as_str()).unwrap_or("").to_string();
                    let lines = match (
                        i.get("start_line").and_then(|v| v.as_u64()),
                        i.get("end_line").and_then(|v| v.as_u64()),
                    ) {
                        (Some(a), Some(b)) if a != b => format!(":{a}-{b}"),
                        (Some(a), _) => format!(":{a}"),
                        _ => String::new(),
                    };
                    let sym = i
                        .get("symbol")
                        .filter(|v| !v.is_null())
                        .map(|v| {
                            format!(
                                " ({} {})",
                                v.get("kind").and_then(|x| x.as_str()).unwrap_or(""),
                                v.get("name").and_then(|x| x.as_str()).unwrap_or("")
                            )
                        })
                        .unwrap_or_default();
                    let verdict = line.get("verdict").and_then(|v| v.as_str()).unwrap_or("");
                    let (bullet, strong, code) = if md {
                        ("- ", "**", "`")
                    } else {
                        ("  ", "", "")
                    };
                    issues.push_str(&format!(
                        "{bullet}{strong}{}{strong} {} {code}{}{}{code}{} — {} (stage {}, attempt {}, {})\n",
                        g("severity"),
                        g("category"),
                        g("path"),
                        lines,
                        sym,
                        g("description"),
                        st.stage.as_str(),
                        a.n,
                        verdict
                    ));
                }
            }
        }
    }
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
