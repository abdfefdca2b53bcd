//! `git triad show`: the verdict history of one commit, for people.

use std::collections::HashSet;
use std::fmt::Write as _;

use clap::Args;
use serde_json::Value;

use super::{ok, out, CommandError, CommandResult, Context};
use crate::cli::helper::{need_repo, resolve_commit, short_and_subject};
use crate::notes::{self, canonical_json, without_reattached, ReadIssue, ReadLine};

/// Show the verdicts recorded on a commit, oldest first, and the one in effect.
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
    let note = notes::read_all(repo, commit.id())?;
    let lines = note.records;
    if args.json {
        let text = serde_json::to_string_pretty(&lines)
            .map_err(|e| CommandError::failure(format!("cannot print JSON: {e}")))?;
        out(&format!("{text}\n"))?;
        return ok();
    }
    let (short, subject) = short_and_subject(&commit);
    let mut s = format!("commit {} {subject}\n", commit.id());
    // A record copied by git's notes.rewriteRef and by our post-rewrite hook is one record.
    let mut seen = HashSet::new();
    let records: Vec<&Value> = lines
        .iter()
        .filter(|l| seen.insert(canonical_json(&without_reattached(l))))
        .collect();
    for text in &note.unreadable {
        let _ = writeln!(
            s,
            "\nunreadable  {}\n    this text of the note is not a JSON record: the pre-push gate blocks the commit until it is mended (`git notes --ref=triad edit {short}`)",
            crate::bounded::clip(text, 200)
        );
    }
    if records.is_empty() {
        if note.unreadable.is_empty() {
            s.push_str("No verdicts are recorded on this commit.\n");
        }
        // Its change may have been reviewed as other commits (a squash, a cherry-pick).
        let index = notes::origin::NoteIndex::build(repo, &notes::note_map(repo)?)?;
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
        out(&s)?;
        return ok();
    }
    let mut records: Vec<ReadLine> = records.into_iter().map(ReadLine::of).collect();
    records.sort_by(|a, b| a.ts.cmp(&b.ts));
    for r in &records {
        render_record(&mut s, r);
    }
    if let Some(e) = notes::effective(&lines) {
        let line = ReadLine::of(&e.line);
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

fn render_record(s: &mut String, r: &ReadLine) {
    let or_q = |f: &Option<String>| f.clone().unwrap_or_else(|| "?".into());
    let verdict = r.verdict.map_or("?".to_string(), |v| v.to_string());
    let _ = write!(s, "\n{}  {}  {verdict}", or_q(&r.ts), or_q(&r.kind));
    if r.is_override() {
        let _ = writeln!(
            s,
            "  (overrides {}) by {}",
            or_q(&r.overrides),
            or_q(&r.who)
        );
        let _ = writeln!(s, "    reason: {}", or_q(&r.reason));
        for key in r.answers.iter().flatten() {
            let _ = writeln!(s, "    answers: {key}");
        }
    } else {
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
        for issue in r.issues.iter().flatten() {
            render_issue(s, issue);
        }
        if let Some(reasoning) = r.reasoning.as_deref().filter(|t| !t.is_empty()) {
            let _ = writeln!(s, "    reasoning: {reasoning}");
        }
    }
    if let Some(from) = &r.reattached_from {
        let _ = writeln!(s, "    (copied from {from})");
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
