//! `git triad show`: the verdict history of one commit, for people.

use std::fmt::Write as _;

use clap::Args;

use super::{ok, out, CommandError, CommandResult, Context};
use crate::cli::helper::{need_repo, note_trust, resolve_commit, short_and_subject};
use crate::notes::{
    self, Answers, NoteLine, Problem, ReadIssue, ReadLine, Source, SourcedLine, Uncounted,
};

/// Show the verdicts recorded on a commit, oldest first, where each came from, and the one in
/// effect.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The commit (default: HEAD).
    pub rev: Option<String>,
    /// Print the records as a JSON array instead.
    #[arg(long)]
    pub json: bool,
}

/// Runs `git triad show`.
pub fn run(ctx: &Context, args: &ShowArgs) -> CommandResult {
    let repo = need_repo(ctx)?;
    let rev = args.rev.as_deref().unwrap_or("HEAD");
    let commit = resolve_commit(repo, rev)?;
    let trust = note_trust(ctx);
    let lines = notes::read_everywhere(repo, commit.id(), &trust)?;
    if args.json {
        let records: Vec<&serde_json::Value> =
            lines.iter().filter_map(|l| l.line.value()).collect();
        let text = serde_json::to_string_pretty(&records)
            .map_err(|e| CommandError::failure(format!("cannot print JSON: {e}")))?;
        out(&format!("{text}\n"))?;
        return ok();
    }
    let (short, subject) = short_and_subject(&commit);
    let mut s = format!("commit {} {subject}\n", commit.id());
    let effective = notes::effective(&lines);
    let (invalid, mut valid): (Vec<&SourcedLine>, Vec<&SourcedLine>) = lines
        .iter()
        .partition(|l| matches!(l.line, NoteLine::Invalid(_)));
    for l in &invalid {
        if let NoteLine::Invalid(bad) = &l.line {
            let mend = match &l.source {
                Source::Local => format!("`git notes --ref=triad edit {short}`"),
                Source::Remote { name, .. } => {
                    format!("it came from {name}: mend it there and `git triad notes fetch {name}`")
                }
            };
            let gate = match &bad.problem {
                Problem::NotJson => "the pre-push gate blocks the commit until it is mended".into(),
                _ if bad.mentions.is_empty() => {
                    "it mentions no verdict, so the pre-push gate passes it by".to_string()
                }
                _ => format!(
                    "the pre-push gate blocks the commit when hooks.pre_push.block_on holds a verdict it mentions ({})",
                    bad.mentions
                        .iter()
                        .map(|v| v.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            };
            let _ = writeln!(
                s,
                "\nunreadable  {}\n    {}: {gate} ({mend}); from {}",
                crate::bounded::clip(&bad.text, 200),
                problem_sentence(&bad.problem),
                l.source
            );
        }
    }
    if valid.is_empty() {
        if invalid.is_empty() {
            s.push_str("No verdicts are recorded on this commit.\n");
        }
        // Its change may have been reviewed as other commits (a squash, a cherry-pick).
        let index = notes::origin::NoteIndex::build(repo, &trust)?;
        if let Some(origin) = index.origin(repo, commit.id())? {
            let shorts: Vec<String> = origin
                .commits
                .iter()
                .map(|c| c.to_string()[..12].to_string())
                .collect();
            let how = match origin.squashed {
                1 => "the same change".to_string(),
                n => format!("a squash of {n} commits"),
            };
            let _ = writeln!(
                s,
                "Its change is {how} reviewed as {}: `git triad notes reattach {rev}` copies those verdicts here.",
                shorts.join(", ")
            );
        }
        if !index.absent().is_empty() {
            let _ = writeln!(
                s,
                "Skipped {} noted commit(s) this clone does not have (notes travel without their commits): a squash of them cannot be recognized here; fetch the branches they are on to look.",
                index.absent().len()
            );
        }
        out(&s)?;
        return ok();
    }
    // A record copied by git's notes.rewriteRef and by our post-rewrite hook is one record.
    let mut seen = std::collections::HashSet::new();
    valid.retain(|l| seen.insert(l.line.id().cloned()));
    valid.sort_by(|a, b| a.line.ts().cmp(b.line.ts()));
    for l in valid {
        let uncounted = effective.as_ref().and_then(|e| {
            e.uncounted
                .iter()
                .find(|(u, _)| u.line.id() == l.line.id())
                .map(|(_, why)| *why)
        });
        render_line(&mut s, l, uncounted);
    }
    if let Some(e) = &effective {
        let line = e.line.line.fields();
        let _ = writeln!(
            s,
            "\nEffective verdict of {short}: {} (from the {} of {}).",
            e.verdict,
            line.kind.as_deref().unwrap_or("?"),
            line.ts.as_deref().unwrap_or("?")
        );
    }
    out(&s)?;
    ok()
}

/// What is wrong with an unreadable line, as the start of a sentence.
fn problem_sentence(p: &Problem) -> String {
    match p {
        Problem::NotJson => "this text of the note is not a JSON record".into(),
        p => format!("this line is not one this git triad reads: {p}"),
    }
}

/// One valid line: what it says, then its id and where it came from.
fn render_line(s: &mut String, l: &SourcedLine, uncounted: Option<Uncounted>) {
    let r = l.line.fields();
    let or_q = |f: &Option<String>| f.clone().unwrap_or_else(|| "?".into());
    let verdict = l.line.verdict().map_or("?".to_string(), |v| v.to_string());
    let _ = write!(s, "\n{}  {}  {verdict}", or_q(&r.ts), or_q(&r.kind));
    if let NoteLine::Override(o) = &l.line {
        let overrides = match &o.answers {
            Answers::Unnamed(v) => v.to_string(),
            Answers::Named(_) => or_q(&r.overrides),
        };
        let _ = writeln!(s, "  (overrides {overrides}) by {}", or_q(&r.who));
        let _ = writeln!(s, "    reason: {}", or_q(&r.reason));
        match &o.answers {
            Answers::Named(keys) => {
                for key in keys {
                    let _ = writeln!(s, "    answers: {key}");
                }
            }
            Answers::Unnamed(_) => {
                let _ = writeln!(
                    s,
                    "    answers: no line by name (an older git triad wrote it)"
                );
            }
        }
    } else {
        render_verdict(s, &r);
    }
    if let Some(from) = &r.reattached_from {
        let _ = writeln!(s, "    (copied from {from})");
    }
    if let Some(id) = l.line.id() {
        let _ = writeln!(s, "    id {id}, from {}", l.source);
    }
    if let Some(why) = uncounted {
        let _ = writeln!(s, "    does not count: {}", why.describe());
    }
}

/// The body of a review or reconciliation line.
fn render_verdict(s: &mut String, r: &ReadLine) {
    if let Some(stage) = &r.stage {
        let _ = write!(s, "  stage {stage}");
        if let Some(a) = r.attempt {
            let _ = write!(s, " (attempt {a})");
        }
    }
    let _ = writeln!(s);
    let mut models = Vec::new();
    if let Some(m) = &r.arbiter_model {
        models.push(format!("arbiter {m}"));
    }
    if let Some(m) = &r.reviewed_model {
        models.push(format!("reviewing {m}"));
    }
    if let Some(c) = r.confidence {
        models.push(format!("confidence {c:.2}"));
    }
    if !models.is_empty() {
        let _ = writeln!(s, "    {}", models.join(", "));
    }
    if let Some(m) = r.model_verdict.filter(|m| Some(*m) != r.verdict) {
        let _ = writeln!(s, "    the model said {m}; a deterministic floor raised it");
    }
    if let Some(floor) = &r.floor {
        let _ = writeln!(
            s,
            "    floor: {} ({})",
            floor.verdict,
            floor.reasons.join("; ")
        );
    }
    if let Some(c) = r.coverage.as_ref().and_then(|c| c.describe()) {
        let _ = writeln!(s, "    coverage: {c}");
    }
    for issue in r.issues.iter().flatten() {
        render_issue(s, issue);
    }
    if let Some(reasoning) = r.reasoning.as_deref().filter(|t| !t.is_empty()) {
        let _ = writeln!(s, "    reasoning: {reasoning}");
    }
}

fn render_issue(s: &mut String, issue: &ReadIssue) {
    let or_q = |f: &Option<String>| f.clone().unwrap_or_else(|| "?".into());
    let at = match (&issue.path, issue.start_line, issue.end_line) {
        (Some(p), Some(a), Some(b)) if b != a => format!("{p}:{a}-{b}"),
        (Some(p), Some(a), _) => format!("{p}:{a}"),
        (Some(p), None, _) => p.to_string(),
        _ => "(no file)".into(),
    };
    let symbol = issue
        .symbol
        .as_ref()
        .map(|sym| format!(" ({} {})", sym.kind, sym.name))
        .unwrap_or_default();
    let _ = writeln!(
        s,
        "    - {} {} {at}{symbol} — {}",
        or_q(&issue.severity),
        or_q(&issue.category),
        or_q(&issue.description)
    );
}
