//! `git triad override`: a human overrules the effective verdict of a commit, on the record.

use clap::{Args, ValueEnum};

use super::{ok, out, CommandError, CommandResult, Context};
use crate::arbiter::Verdict;
use crate::cli::helper::{need_repo, note_trust, resolve_commit, short_and_subject};
use crate::notes::{self, NoteLine, OverrideRecord, Record};

/// Record that a person overrules a commit's verdict (appended as a note; nothing is deleted).
#[derive(Debug, Args)]
pub struct OverrideArgs {
    /// The commit whose verdict you overrule.
    pub rev: String,
    /// The verdict that replaces the current one.
    #[arg(long, value_enum)]
    pub verdict: OverrideVerdict,
    /// Why; kept with the override for reviewers.
    #[arg(long)]
    pub reason: String,
}

/// Verdicts a human may set, named by the verdict's own word (`APPROVE`) or that word in
/// lowercase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OverrideVerdict {
    /// The change may go ahead.
    #[value(name = Verdict::Approve.as_str(), alias = Verdict::Approve.as_str().to_ascii_lowercase())]
    Approve,
    /// The change may go ahead, with concerns on record.
    #[value(name = Verdict::Flag.as_str(), alias = Verdict::Flag.as_str().to_ascii_lowercase())]
    Flag,
}

impl OverrideVerdict {
    fn verdict(self) -> Verdict {
        match self {
            OverrideVerdict::Approve => Verdict::Approve,
            OverrideVerdict::Flag => Verdict::Flag,
        }
    }
}

/// Runs `git triad override`.
pub fn run(ctx: &Context, args: &OverrideArgs) -> CommandResult {
    let reason = args.reason.trim();
    if reason.is_empty() {
        return Err(CommandError::usage("an override needs a reason")
            .hint("say why, e.g. --reason \"false positive: the index is checked on line 10\""));
    }
    let repo = need_repo(ctx)?;
    let commit = resolve_commit(repo, &args.rev)?;
    let (short, subject) = short_and_subject(&commit);
    // Every verdict on the commit, fetched ones too (a person may answer a teammate's HALT),
    // and those of other commits found by its patch id, which the pre-push gate counts as
    // its own (it is a cherry-pick, squash or rebase of what they reviewed).
    if let Err(e) = notes::fold::fold_all(repo) {
        tracing::warn!("the notes fetched from remotes are not all read: {e}");
    }
    let trust = note_trust(ctx);
    let mut lines = notes::read_everywhere(repo, commit.id(), &trust)?;
    let index = notes::origin::NoteIndex::build(repo, &trust)?;
    lines.extend(
        index
            .found_by_patch_id(repo, commit.id())?
            .into_iter()
            .map(|(_, l)| l),
    );
    let Some(current) = notes::effective(&lines) else {
        return Err(CommandError::usage(format!("{short} ({subject}) has no verdict to override"))
            .hint(format!("`git triad show {short}` lists its notes"))
            .hint("the pre-push gate blocks unreviewed commits only when \"missing\" is in hooks.pre_push.block_on"));
    };
    let verdict = args.verdict.verdict();
    if current.verdict == verdict {
        return Err(CommandError::usage(format!(
            "the verdict of {short} is already {verdict}"
        )));
    }
    let (name, email) = notes::identity(repo).ok_or_else(|| {
        CommandError::usage("an override records who made it, and no identity is configured")
            .hint("set it with `git config user.name \"Your Name\"` and `git config user.email you@example.com`")
    })?;
    let who = format!("{name} <{email}>");
    notes::record(
        repo,
        commit.id(),
        Record::Override(OverrideRecord {
            verdict: args.verdict.verdict(),
            overrides: current.verdict,
            // Every verdict line now on the commit, by id: the override answers exactly
            // these, and nothing written later.
            answers: Some(
                lines
                    .iter()
                    .filter(|l| matches!(l.line, NoteLine::Verdict(_)))
                    .filter_map(|l| l.line.id().map(ToString::to_string))
                    .collect(),
            ),
            reason: reason.to_string(),
            who,
        }),
    )?;
    let mut said = format!(
        "Recorded your override of {short} ({subject}): {} is now {verdict}.\n\
         Share it with `git triad notes push`.\n",
        current.verdict
    );
    if lines.iter().any(|l| matches!(l.line, NoteLine::Invalid(_))) {
        said.push_str(&format!(
            "Its note also holds a line this git triad does not read, which no override answers: \
             the pre-push gate still blocks on it if it mentions a blocking verdict (`git triad show {short}`).\n"
        ));
    }
    out(&said)?;
    ok()
}
