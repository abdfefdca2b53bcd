//! `git triad hook post-rewrite`: keep verdicts on commits that `git commit --amend` or
//! `git rebase` rewrote.

use clap::Args;

use super::stdin::read_stdin;
use crate::cli::helper::need_repo;
use crate::cli::{ok, CommandResult, Context};
use crate::notes::rewrite::{copy_for_rewrite, parse_rewrites};

/// Copy verdicts from rewritten commits to their new versions (git passes `<old> <new>` lines
/// on stdin).
#[derive(Debug, Args)]
pub struct PostRewriteArgs {
    /// What rewrote the commits: `amend` or `rebase` (git passes it; it does not change what
    /// is copied).
    pub command: Option<String>,
}

/// Runs the post-rewrite hook.
pub fn run(ctx: &Context, _args: &PostRewriteArgs) -> CommandResult {
    let input = read_stdin()?;
    let pairs = parse_rewrites(&input)?;
    if pairs.is_empty() {
        return ok();
    }
    let repo = need_repo(ctx)?;
    let copied = copy_for_rewrite(repo, &pairs).map_err(|e| {
        crate::cli::CommandError::from(e)
            .hint("`git triad notes reattach` finds lost verdicts again by patch id")
    })?;
    // git's own notes.rewriteRef may have copied the JSON notes without us: the lines people
    // read follow every rewritten commit either way.
    let rewritten: Vec<git2::Oid> = pairs.iter().map(|(_, new)| *new).collect();
    crate::notes::display::refresh(repo, &rewritten)?;
    if !copied.is_empty() {
        let lines: usize = copied.iter().map(|c| c.lines).sum();
        super::super::say(&format!(
            "git triad: carried {lines} verdict line(s) over to {} rewritten commit(s).",
            copied.len()
        ));
    }
    ok()
}
