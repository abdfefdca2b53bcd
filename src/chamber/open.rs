//! Opening and driving a session: the context it is given (a file, a commit, a TaskSpec,
//! each checked against the privacy rules), the session record itself, what it may cost at
//! worst (shown before a Level 3 session is approved), and the loop that advances it while
//! writing each phase to `refs/triad/chamber/<id>`.

use std::path::Path;

use git2::Repository;

use super::answer::{InitialAssessment, PanelAnswer, Synthesis};
use super::engine::{Chamber, EngineError};
use super::limits::{self, Used};
use super::store::{self, Store};
use super::{Assessment, ContextItem, FounderRole, Level, Session, Status};
use crate::config::schema::Config;
use crate::model::{structured, ChatRequest, ModelClient};
use crate::privacy::Privacy;

/// Bytes of one context item a session carries (a large diff is cut, and says so).
pub const MAX_CONTEXT_BYTES: usize = 12_000;

/// Resolves one `--context` value: a TaskSpec id (`.triad/tasks/<id>.toml` at HEAD), a file
/// of the working tree, or a revision (its message and diff). Private files are refused,
/// not sent.
pub fn context_item(repo: &Repository, config: &Config, spec: &str) -> Result<ContextItem, String> {
    let privacy = Privacy::from_config(config);
    if crate::task::spec::valid_slug(spec) {
        let path = crate::task::spec::spec_path(spec);
        if let Some(text) = head_file(repo, &path) {
            return Ok(ContextItem {
                label: format!("TaskSpec {spec} ({path} at HEAD)"),
                text: clip(&text),
            });
        }
    }
    if let Some(root) = repo.workdir() {
        if let Some(item) = file_item(root, spec, &privacy)? {
            return Ok(item);
        }
    }
    if let Ok(obj) = repo.revparse_single(spec) {
        if let Ok(commit) = obj.peel_to_commit() {
            return commit_item(repo, spec, &commit, &privacy);
        }
    }
    Err(format!(
        "--context `{spec}` is not a TaskSpec id, a file in this repository or a revision"
    ))
}

/// The sources a founder's claim is checked against, gathered by git triad itself: each
/// `--evidence` pointer that names a file (`calc.py:12` reads `calc.py`), a revision or a
/// TaskSpec, and the repository's tests run in the box at HEAD (the verify command, else one
/// found from the tree; only in a clone trusted here, as any code of the repository). A
/// pointer that names nothing readable is said so, never guessed at.
pub fn claim_sources(repo: &Repository, config: &Config, evidence: &[String]) -> Vec<ContextItem> {
    let mut out = Vec::new();
    for pointer in evidence {
        let path = pointer
            .split_once(':')
            .filter(|(_, line)| {
                !line.is_empty() && line.chars().all(|c| c.is_ascii_digit() || c == '-')
            })
            .map_or(pointer.as_str(), |(p, _)| p);
        match context_item(repo, config, path) {
            Ok(item) => out.push(item),
            Err(_) => out.push(ContextItem {
                label: format!("evidence `{pointer}`"),
                text: "names no file, revision or TaskSpec of this repository: nothing was read"
                    .into(),
            }),
        }
    }
    out.push(tests_at_head(repo, config));
    out
}

/// The repository's tests run in the box at HEAD, as a source.
fn tests_at_head(repo: &Repository, config: &Config) -> ContextItem {
    use crate::probe::{command_for, test_run, ProbePolicy, ProbeSettings};
    let verify = Some(config.verify.command.trim().to_string()).filter(|c| !c.is_empty());
    let policy = ProbePolicy::for_clone(
        crate::config::trusted_locally(repo),
        ProbeSettings::for_repo(repo, verify.clone(), config.sandbox.clone()),
    );
    let not_run = |why: String| ContextItem {
        label: "the tests at HEAD".into(),
        text: format!("not run: {why}"),
    };
    let settings = match policy {
        ProbePolicy::Run(settings) => settings,
        ProbePolicy::Off(why) => return not_run(why),
    };
    let Some(tree) = repo.head().ok().and_then(|h| h.peel_to_tree().ok()) else {
        return not_run("the repository has no commit".into());
    };
    let Some(command) = command_for(repo, &tree, verify.as_deref()) else {
        return not_run("no verify command is configured and no tests were found".into());
    };
    match test_run(repo, &tree, &command, &settings) {
        Ok(run) => {
            let failed = run.failed();
            ContextItem {
                label: format!("the tests at HEAD: `{}`, run in the box", run.command),
                text: format!(
                    "exit {}; {} test(s) passed{}\nThe end of its output:\n```\n{}\n```",
                    run.exit
                        .map_or("none (killed or timed out)".into(), |c| c.to_string()),
                    run.passed().map_or("?".into(), |n| n.to_string()),
                    if failed.is_empty() {
                        String::new()
                    } else {
                        format!("; failed: {}", failed.join(", "))
                    },
                    crate::bounded::clip(run.tail.trim_end(), 4000)
                ),
            }
        }
        Err(why) => not_run(why),
    }
}

fn head_file(repo: &Repository, path: &str) -> Option<String> {
    let tree = repo.head().ok()?.peel_to_tree().ok()?;
    let blob = tree.get_path(Path::new(path)).ok()?.to_object(repo).ok()?;
    let blob = blob.as_blob()?;
    std::str::from_utf8(blob.content()).ok().map(str::to_string)
}

fn file_item(root: &Path, spec: &str, privacy: &Privacy) -> Result<Option<ContextItem>, String> {
    let rel = match Path::new(spec).strip_prefix(root) {
        Ok(r) => r.to_path_buf(),
        Err(_) => Path::new(spec).to_path_buf(),
    };
    let text = match crate::fsguard::read_to_string(root, &rel) {
        Ok(t) => t,
        Err(e) if e.is_not_found() => return Ok(None),
        Err(e) => return Err(format!("--context `{spec}`: {e}")),
    };
    let shown = rel.to_string_lossy().replace('\\', "/");
    if let Some(why) = privacy.check(&shown, Some(text.as_bytes())) {
        return Err(format!(
            "--context `{shown}` is not sent to any model: {why} (privacy.withhold)"
        ));
    }
    Ok(Some(ContextItem {
        label: format!("file {shown}"),
        text: clip(&text),
    }))
}

fn commit_item(
    repo: &Repository,
    spec: &str,
    commit: &git2::Commit<'_>,
    privacy: &Privacy,
) -> Result<ContextItem, String> {
    let new = commit.tree().map_err(|e| e.message().to_string())?;
    let old = commit.parent(0).ok().and_then(|p| p.tree().ok());
    let mut files = crate::git::diff_trees(repo, old.as_ref(), &new)
        .map_err(|e| format!("cannot diff `{spec}`: {}", e.message()))?;
    privacy.mark_diff(repo, old.as_ref(), &new, &mut files);
    let diff = crate::git::render_diff(&files, &|_, _| None);
    let short = commit.id().to_string();
    Ok(ContextItem {
        label: format!("commit {} ({spec})", &short[..12.min(short.len())]),
        text: clip(&format!(
            "{}\n\n{diff}",
            commit.message().unwrap_or("").trim_end()
        )),
    })
}

fn clip(text: &str) -> String {
    crate::bounded::clip(text, MAX_CONTEXT_BYTES)
}

/// Everything a new session is opened with.
pub struct Opening {
    /// The decision asked about.
    pub question: String,
    /// Resolved context items.
    pub context: Vec<ContextItem>,
    /// Level 2 (auto-quorum) or 3 (founder).
    pub level: Level,
    /// Which criteria put it at that level.
    pub criteria: Vec<String>,
    /// Who assessed the level (`founder`, `run <id>`).
    pub source: String,
    /// The founder's role (Level 3; approver when not given).
    pub founder_role: Option<FounderRole>,
    /// The panel (2-3 distinct models).
    pub panel: Vec<String>,
    /// The arbiter.
    pub arbiter: String,
    /// The run or command that opened it.
    pub opened_by: Option<String>,
}

/// A new session, not yet asked anything.
pub fn new_session(o: Opening) -> Session {
    let id = crate::clock::new_run_id();
    let founder_role = match o.level {
        Level::Three => Some(o.founder_role.unwrap_or(FounderRole::Approver)),
        Level::Two => None,
    };
    Session {
        id,
        created: crate::clock::now_ts(),
        created_unix: crate::clock::now_unix(),
        question: o.question,
        context: o.context,
        assessment: Assessment {
            level: o.level,
            criteria: o.criteria,
            source: o.source,
        },
        founder_role,
        arbiter_is_panelist: o.panel.contains(&o.arbiter),
        panel: o.panel,
        arbiter: o.arbiter,
        rounds: Vec::new(),
        founder_input: None,
        challenges: Vec::new(),
        verification: None,
        founder_action: None,
        actions: Vec::new(),
        resolution: None,
        status: Status::Open,
        stop_reason: None,
        notices: Vec::new(),
        opened_by: o.opened_by,
        duration_ms: 0,
        discarded: Vec::new(),
    }
}

/// The worst case of a whole session in USD: every panelist twice (independent answer and
/// cross-examination) and the arbiter twice (assessment and synthesis), each at the output
/// cap, the later prompts carrying the earlier answers.
pub fn estimate_usd(client: &ModelClient, config: &Config, session: &Session) -> f64 {
    let max = config.chamber.max_tokens;
    let question = super::brief::question(session, &super::Round::default());
    // The later phases carry every answer: at most the output cap each.
    let answers = "x".repeat(4 * max as usize * session.panel.len());
    let ask = |model: &str, user: String, schema: crate::model::OutputSchema| {
        let mut req = ChatRequest::new(Some(String::new()), user, max);
        req.schema = Some(schema);
        client.worst_case_usd(model, &req).unwrap_or(0.0)
    };
    let panel: f64 = session
        .panel
        .iter()
        .map(|m| {
            ask(
                m,
                question.clone(),
                structured::schema_for::<PanelAnswer>("panelist"),
            ) + ask(
                m,
                format!("{question}{answers}"),
                structured::schema_for::<PanelAnswer>("examinee"),
            )
        })
        .sum();
    let arbiter = ask(
        &session.arbiter,
        format!("{question}{answers}"),
        structured::schema_for::<InitialAssessment>("assessor"),
    ) + ask(
        &session.arbiter,
        format!("{question}{answers}{answers}"),
        structured::schema_for::<Synthesis>("arbiter"),
    );
    panel + arbiter
}

/// Runs `session`'s remaining phases with `client` under the caps of `config`, given what
/// the other sessions `used`, every phase recorded; its progress lines go to `progress`.
/// The one way a session runs, whoever opened it: a run's stage (Level 2), or the founder
/// with `git triad chamber`.
pub async fn run(
    repo: &Repository,
    client: &ModelClient,
    config: &Config,
    repo_root: Option<&Path>,
    used: Used,
    progress: &dyn Fn(&str),
    session: &mut Session,
) -> Result<(), EngineError> {
    let chamber = Chamber {
        client,
        config,
        repo_root,
        guard: limits::Guard::new(&config.chamber, used.month_usd),
        progress,
    };
    drive(repo, &chamber, session).await
}

/// Advances `session` with the caps of `config`, writing every phase to its ref.
pub async fn drive(
    repo: &Repository,
    chamber: &Chamber<'_>,
    session: &mut Session,
) -> Result<(), EngineError> {
    let mut store = Store::open(repo, &session.id);
    let mut save = |s: &Session, what: &str| store.phase(s, what);
    chamber.advance(session, &mut save).await
}

/// What the sessions recorded in this repository used of today's and this month's limits,
/// leaving out `except` (the session being resumed, whose own spending its guard counts).
pub fn used(repo: &Repository, except: Option<&str>) -> Used {
    let others: Vec<Session> = store::list(repo)
        .into_iter()
        .filter(|s| Some(s.id.as_str()) != except)
        .collect();
    limits::used(&others, crate::clock::now_unix())
}

/// The synthesis as a block of the stage's prompt.
pub fn answer_block(session: &Session) -> String {
    let Some(s) = session.synthesis() else {
        return String::new();
    };
    let mut out = format!(
        "## THE CHAMBER'S DECISION (session {})\n\nA panel of {} deliberated this decision; {} \
         synthesized it with confidence {}/10.\n\nDecision: {}\nReasoning: {}\n",
        session.id,
        session.panel.join(", "),
        session.arbiter,
        s.confidence,
        s.answer.trim(),
        s.reasoning.trim()
    );
    for m in &s.minority {
        out.push_str(&format!(
            "Minority view ({}): {}\n",
            m.panelist,
            m.view.trim()
        ));
    }
    if let Some(a) = session.actions.last() {
        out.push_str(&format!(
            "The founder {} it{}.\n",
            a.action.as_str(),
            a.note
                .as_ref()
                .map(|n| format!(": {n}"))
                .unwrap_or_default()
        ));
    }
    out.push_str("\nAct on this decision in this attempt.\n");
    out
}
