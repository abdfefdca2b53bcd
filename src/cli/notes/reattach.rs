//! `git triad notes reattach`: give verdicts back to commits that lost them.

use clap::Args;
use git2::{Oid, Repository, RevparseMode};

use crate::cli::helper::{need_repo, note_trust, short_and_subject};
use crate::cli::{ok, out, CommandError, CommandResult, Context};
use crate::notes::rewrite::reattach;

/// How many commits back from HEAD (or a single revision) are looked at by default.
const DEFAULT_DEPTH: usize = 200;

/// Copy verdicts onto commits without one whose change (patch id) was reviewed elsewhere,
/// e.g. after `git merge --squash` or `git cherry-pick`.
#[derive(Debug, Args)]
pub struct ReattachArgs {
    /// Commits to look at: a range like `main..feature`, or a revision meaning its last 200
    /// commits (default: HEAD).
    pub range: Option<String>,
}

/// Runs `git triad notes reattach`.
pub fn run(ctx: &Context, args: &ReattachArgs) -> CommandResult {
    let repo = need_repo(ctx)?;
    let spec = args.range.as_deref().unwrap_or("HEAD");
    let candidates = candidates(repo, spec)?;
    // What `git fetch` landed from remotes is read in first (see notes::fold).
    if let Err(e) = crate::notes::fold::fold_all(repo) {
        tracing::warn!("the notes fetched from remotes are not all read: {e}");
    }
    let done = reattach(repo, &candidates, &note_trust(ctx))?;
    let mut text = String::new();
    if done.copied.is_empty() {
        text.push_str(&format!(
            "No verdicts to reattach: every commit of {spec} without a verdict has a change no noted commit reviewed.\n"
        ));
    }
    for c in &done.copied {
        let (short, subject) = short_and_subject(&repo.find_commit(c.commit)?);
        let from: Vec<String> = c
            .from
            .iter()
            .map(|o| o.to_string()[..12].to_string())
            .collect();
        text.push_str(&format!(
            "Reattached {} verdict line(s) to {short} ({subject}) from {}.\n",
            c.lines,
            from.join(", ")
        ));
    }
    if !done.copied.is_empty() {
        text.push_str("Share them with `git triad notes push`.\n");
    }
    if done.untrusted > 0 {
        text.push_str(&format!(
            "Left {} line(s) fetched from remotes your config does not trust where they are: they count there (the pre-push gate finds them by patch id), but only to add verdicts.\n",
            done.untrusted
        ));
    }
    if !done.absent.is_empty() {
        text.push_str(&format!(
            "Skipped {} noted commit(s) this clone does not have: their lines are found by patch id, but a squash of them cannot be recognized; fetch the branches they are on to look.\n",
            done.absent.len()
        ));
    }
    out(&text)?;
    ok()
}

/// The commits a range or revision names (a revision: its last [`DEFAULT_DEPTH`] commits).
fn candidates(repo: &Repository, spec: &str) -> CommandResult<Vec<Oid>> {
    let bad = |e: git2::Error| {
        CommandError::usage(format!(
            "`{spec}` is not a revision or range: {}",
            e.message()
        ))
        .hint("examples: HEAD, main..feature, HEAD~10..HEAD")
    };
    let revspec = repo.revparse(spec).map_err(bad)?;
    let mut walk = repo.revwalk()?;
    let mode = revspec.mode();
    let to_commit = |o: &git2::Object<'_>| o.peel_to_commit().map(|c| c.id()).map_err(bad);
    let limit = if mode.contains(RevparseMode::SINGLE) {
        let from = revspec
            .from()
            .ok_or_else(|| CommandError::usage(format!("`{spec}` names nothing")))?;
        walk.push(to_commit(from)?)?;
        DEFAULT_DEPTH
    } else {
        let (Some(from), Some(to)) = (revspec.from(), revspec.to()) else {
            return Err(
                CommandError::usage(format!("`{spec}` is an incomplete range"))
                    .hint("examples: main..feature, HEAD~10..HEAD"),
            );
        };
        let (from, to) = (to_commit(from)?, to_commit(to)?);
        walk.push(to)?;
        if mode.contains(RevparseMode::MERGE_BASE) {
            walk.push(from)?;
            walk.hide(repo.merge_base(from, to)?)?;
        } else {
            walk.hide(from)?;
        }
        usize::MAX
    };
    Ok(walk.take(limit).collect::<Result<Vec<_>, _>>()?)
}
