//! `git triad hook pre-push`: refuse to push commits whose verdict the policy blocks on.
//!
//! It calls no model: it reads the verdict notes already recorded. If it cannot do its job
//! (bad config, unreadable notes), it fails closed — the push is blocked and the message says
//! how to get past it on purpose (`git push --no-verify`).

use std::fmt::Write as _;
use std::path::PathBuf;

use clap::Args;

use super::stdin::read_stdin;
use crate::cli::{ok, CommandError, CommandResult, Context};
use crate::config::{LoadOptions, LoadedConfig, PrePushConfig};
use crate::exit::ExitCode;
use crate::notes::display::visible;
use crate::notes::gate::git_output;
use crate::notes::gate::{self, parse_updates, Backend, Blocked, Finding, Policy, RefUpdate};
use crate::notes::{NoteLine, ReadIssue, Trust};

/// How many blocked commits the message describes in full.
const SHOWN: usize = 10;
/// How many issues of one verdict the message lists.
const TOP_ISSUES: usize = 3;

/// Check the pushed commits' verdicts (git passes `<remote> <url>`, and the refs on stdin).
#[derive(Debug, Args)]
pub struct PrePushArgs {
    /// The remote's name, or its URL when pushing to a URL (pre-commit passes
    /// `PRE_COMMIT_REMOTE_NAME` instead).
    pub remote: Option<String>,
    /// The remote's URL.
    pub url: Option<String>,
}

/// The push is blocked because the gate itself failed, not because of a verdict.
#[derive(Debug, thiserror::Error)]
#[error(
    "git-triad could not check this push, so the push is blocked (the pre-push gate fails closed)"
)]
struct FailedClosed(#[source] Box<dyn std::error::Error + Send + Sync>);

/// Runs the pre-push gate.
pub fn run(ctx: &Context, args: &PrePushArgs) -> CommandResult {
    match check(ctx, args) {
        Ok((findings, _)) if findings.is_empty() => ok(),
        Ok((findings, block_on)) => {
            // The verdicts quote models: shown as text, never obeyed.
            let text = crate::redact::redact(&render(&findings, &block_on)).into_owned();
            eprint!("{}", crate::safe::text(&text));
            Ok(ExitCode::Error)
        }
        Err(e) => {
            let mut err = CommandError::failure(FailedClosed(e.error));
            err.hints = e.hints;
            err.hints.push(
                "fix the problem above and push again, or skip the check for this push with `git push --no-verify`"
                    .into(),
            );
            Err(err)
        }
    }
}

/// How the gate reads the repository: libgit2 when it opened it (SHA-1 or SHA-256), else
/// the git CLI when git itself reads it (an extension libgit2 lacks, such as reftable refs).
///
/// The CLI check is as strict as the libgit2 one and fails closed on its own errors, so
/// falling back never opens the gate; refusing instead would block every push there.
fn backend(ctx: &Context) -> CommandResult<Backend<'_>> {
    if let Some(repo) = &ctx.repo {
        return Ok(Backend::Git2(repo));
    }
    let format = gate::object_format(&ctx.cwd).map_err(|e| {
        CommandError::failure(format!(
            "{} is not inside a git repository ({e})",
            ctx.cwd.display()
        ))
    })?;
    let why = git2::Repository::discover(&ctx.cwd)
        .err()
        .map_or_else(String::new, |e| format!(" ({})", e.message()));
    tracing::info!("libgit2 cannot open this {format} repository{why}; using the git CLI");
    Ok(Backend::Cli(&ctx.cwd))
}

/// The policy settings of the layered configuration: `hooks.pre_push.block_on` and the
/// remotes the user trusts (`notes.trusted_remotes`).
fn settings(ctx: &Context, backend: &Backend<'_>) -> CommandResult<(PrePushConfig, Trust)> {
    let loaded = match backend {
        Backend::Git2(_) => ctx.load_config()?,
        Backend::Cli(dir) => {
            // Context::load_config needs libgit2 for the repo root and git config; ask git.
            let top = git_output(dir, &["rev-parse", "--show-toplevel"]).ok();
            let entries =
                git_output(dir, &["config", "--get-regexp", "^triad\\."]).unwrap_or_default();
            let git_config: Vec<(String, String)> = entries
                .lines()
                .filter_map(|l| l.split_once(' '))
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            // Only this clone's own config file may trust it, never a global setting.
            let trusted = git_output(
                dir,
                &[
                    "config",
                    "--local",
                    "--type=bool",
                    crate::config::TRUSTED_GIT_KEY,
                ],
            )
            .is_ok_and(|v| v.trim() == "true");
            LoadedConfig::load(&LoadOptions {
                user_file: None,
                repo_root: top.map(|t| PathBuf::from(t.trim())),
                git_config,
                trusted,
                env: ctx.env.clone(),
                overrides: ctx.overrides.clone(),
            })?
        }
    };
    let trust = Trust::new(&loaded.config.notes.trusted_remotes);
    Ok((loaded.config.hooks.pre_push, trust))
}

/// Runs the gate; the findings are the blocked commits.
fn check(ctx: &Context, args: &PrePushArgs) -> CommandResult<(Vec<Finding>, Vec<String>)> {
    let input = read_stdin()?;
    let backend = backend(ctx)?;
    let (pre_push, trust) = settings(ctx, &backend)?;
    let blockers = pre_push
        .blockers()
        .map_err(|why| CommandError::failure(format!("hooks.pre_push.block_on: {why}")))?;
    let remote = args
        .remote
        .clone()
        .or_else(|| ctx.env_var("PRE_COMMIT_REMOTE_NAME"))
        .unwrap_or_default();
    let mut updates = parse_updates(&input)?;
    if updates.is_empty() {
        updates = pre_commit_updates(ctx, &backend)?;
    }
    let policy = Policy::new(&blockers);
    let findings = gate::check(backend, &remote, &updates, &policy, &trust)?;
    Ok((findings, pre_push.block_on))
}

/// The push as the pre-commit framework describes it: it consumes git's stdin itself and
/// passes `PRE_COMMIT_FROM_REF..PRE_COMMIT_TO_REF` (older versions: `PRE_COMMIT_SOURCE` /
/// `PRE_COMMIT_ORIGIN`) in the environment; when the push includes a root commit it sets
/// neither, only `PRE_COMMIT_LOCAL_BRANCH`.
fn pre_commit_updates(ctx: &Context, backend: &Backend<'_>) -> CommandResult<Vec<RefUpdate>> {
    let var = |names: &[&str]| {
        names
            .iter()
            .find_map(|n| ctx.env_var(n).filter(|v| !v.is_empty()))
    };
    let local_branch = var(&["PRE_COMMIT_LOCAL_BRANCH"]);
    let Some(to) =
        var(&["PRE_COMMIT_TO_REF", "PRE_COMMIT_ORIGIN"]).or_else(|| local_branch.clone())
    else {
        return Ok(Vec::new());
    };
    let resolve = |rev: &str| -> Option<String> {
        match backend {
            Backend::Git2(repo) => repo
                .revparse_single(rev)
                .and_then(|o| o.peel_to_commit())
                .ok()
                .map(|c| c.id().to_string()),
            Backend::Cli(dir) => git_output(
                dir,
                &[
                    "rev-parse",
                    "--verify",
                    "--quiet",
                    &format!("{rev}^{{commit}}"),
                ],
            )
            .ok()
            .map(|s| s.trim().to_string()),
        }
    };
    let local_oid = resolve(&to).ok_or_else(|| {
        CommandError::failure(format!(
            "pre-commit passed `{to}` as the pushed commit, which is not a commit here"
        ))
    })?;
    let zero = "0".repeat(local_oid.len());
    let remote_oid = var(&["PRE_COMMIT_FROM_REF", "PRE_COMMIT_SOURCE"])
        .and_then(|from| resolve(&from))
        .unwrap_or(zero);
    Ok(vec![RefUpdate {
        local_ref: local_branch.unwrap_or(to),
        local_oid,
        remote_ref: var(&["PRE_COMMIT_REMOTE_BRANCH"]).unwrap_or_else(|| "(pre-commit)".into()),
        remote_oid,
    }])
}

/// The abbreviated commit a finding's verdict was written on, when that is another commit
/// (the gate found it by patch id: a cherry-pick or squash of a reviewed commit).
fn copied_from(f: &Finding) -> Option<String> {
    let line = f.blocked.effective()?.line.line.fields();
    let from = line.commit.filter(|c| *c != f.commit)?;
    Some(visible(from.get(..12).unwrap_or(&from)))
}

/// The explanation printed on stderr when the push is blocked.
fn render(findings: &[Finding], block_on: &[String]) -> String {
    let mut s = String::new();
    let n = findings.len();
    let _ = writeln!(
        s,
        "git triad: push blocked: {n} commit{} {} a verdict that hooks.pre_push.block_on = [{}] blocks.\n",
        if n == 1 { "" } else { "s" },
        if n == 1 { "has" } else { "have" },
        block_on.iter().map(|v| format!("\"{v}\"")).collect::<Vec<_>>().join(", ")
    );
    for f in findings.iter().take(SHOWN) {
        let _ = writeln!(s, "  {} {}", f.short, f.subject);
        let e = match &f.blocked {
            Blocked::Verdict(e) => e,
            Blocked::Missing => {
                let _ = writeln!(
                    s,
                    "      no verdict from this clone or a trusted remote (\"missing\" is in the policy)"
                );
                continue;
            }
            Blocked::Invalid { line, source } => {
                let why = match (&line.problem, &line.odd_verdict) {
                    (crate::notes::Problem::NotJson, _) => {
                        "holds text that is not a JSON record, so what it says is unknown".into()
                    }
                    (_, Some(odd)) => format!(
                        "holds a line whose verdict {} is not exactly a verdict word ({} in ASCII), so it cannot tell what it says",
                        visible(odd),
                        crate::verdict::Verdict::choices()
                    ),
                    (p, None) if line.fails_closed() => format!(
                        "holds a line this git triad does not read ({}), so it cannot tell what it says",
                        visible(&p.to_string())
                    ),
                    (p, None) => format!(
                        "holds a line this git triad does not read ({}) that mentions {}, so it cannot tell what it says",
                        visible(&p.to_string()),
                        mentioned(&line.mentions)
                    ),
                };
                let _ = writeln!(
                    s,
                    "      its verdict note (from {source}) {why}:\n        {}",
                    visible(&crate::bounded::clip(&line.text, 200))
                );
                continue;
            }
        };
        let line = e.line.line.fields();
        let field = |f: &Option<String>| visible(f.as_deref().unwrap_or("?"));
        if let Some(from) = copied_from(f) {
            let _ = writeln!(
                s,
                "      (the verdict of {from}, the same change by patch id)"
            );
        }
        for (o, why) in &e.uncounted {
            let o = o.line.fields();
            let _ = writeln!(
                s,
                "      (an override by {} does not count: {})",
                field(&o.who),
                why.describe()
            );
        }
        if let NoteLine::Override(_) = &e.line.line {
            let _ = writeln!(
                s,
                "      {} by override of {}: {}",
                e.verdict,
                field(&line.who),
                field(&line.reason)
            );
            continue;
        }
        let mut head = format!("      {}", e.verdict);
        if let Some(stage) = &line.stage {
            let _ = write!(head, " at stage {}", visible(stage));
        }
        if let Some(model) = &line.arbiter_model {
            let _ = write!(head, ", arbiter {}", visible(model));
        }
        if let Some(ts) = &line.ts {
            let _ = write!(head, " ({})", visible(ts));
        }
        let _ = writeln!(s, "{head}");
        let mut issues: Vec<&ReadIssue> = line.issues.iter().flatten().collect();
        issues.sort_by_key(|i| i.rank());
        for issue in issues.iter().take(TOP_ISSUES) {
            let _ = writeln!(
                s,
                "      - {} {} — {}",
                visible(issue.severity.as_deref().unwrap_or("issue")),
                visible(&issue.place()),
                visible(issue.description.as_deref().unwrap_or(""))
            );
        }
        if issues.len() > TOP_ISSUES {
            let _ = writeln!(
                s,
                "      ({} more: git triad show {})",
                issues.len() - TOP_ISSUES,
                f.short
            );
        }
    }
    if n > SHOWN {
        let _ = writeln!(s, "  … and {} more", n - SHOWN);
    }
    let rev = &findings[0].short;
    let _ = writeln!(s, "\nTo go on:");
    let _ = writeln!(s, "  read the verdict:        git triad show {rev}");
    if let Some(source) = findings.iter().find_map(|f| match &f.blocked {
        Blocked::Invalid { source, .. } => Some(source),
        _ => None,
    }) {
        let _ = match source {
            crate::notes::Source::Local => writeln!(
                s,
                "  mend the note by hand:   git notes --ref=triad edit {rev}   (each record one JSON object, \"v\":1)"
            ),
            crate::notes::Source::Remote { name, .. } => writeln!(
                s,
                "  it came from {name}, and fetches only add lines; to stop reading {name}'s notes here:\n                           {}",
                crate::notes::source::forget_command(name)
            ),
        };
    }
    if findings.iter().any(|f| f.blocked.effective().is_some()) {
        let _ = writeln!(
            s,
            "  overrule it (recorded):  git triad override {rev} --verdict APPROVE --reason \"…\""
        );
    }
    if findings.iter().any(|f| copied_from(f).is_some()) {
        let _ = writeln!(
            s,
            "  copy the verdicts here:  git triad notes reattach   (then override if you must)"
        );
    }
    if findings.iter().any(|f| f.blocked == Blocked::Missing) {
        let _ = writeln!(s, "  review unreviewed work:  git triad review <range>");
    }
    let _ = writeln!(s, "  skip this check once:    git push --no-verify");
    s
}

/// The verdicts a line mentions, for a sentence: `HALT`, `REJECT and HALT`.
fn mentioned(verdicts: &[crate::verdict::Verdict]) -> String {
    let words: Vec<&str> = verdicts.iter().map(|v| v.as_str()).collect();
    match words.split_last() {
        None => "no verdict".into(),
        Some((last, [])) => (*last).to_string(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}
