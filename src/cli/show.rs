//! `git triad show`: the verdict history of one commit, for people.

use std::collections::HashSet;
use std::fmt::Write as _;

use clap::Args;
use serde_json::Value;

use super::{ok, out, CommandError, CommandResult, Context};
use crate::cli::helper::{need_repo, resolve_commit, short_and_subject};
use crate::notes::{self, canonical_json, str_field, without_reattached, REATTACHED_FROM};

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
    let mut records: Vec<&Value> = lines
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
        out(&s)?;
        return ok();
    }
    records.sort_by(|a, b| str_field(a, "ts").cmp(&str_field(b, "ts")));
    for r in records {
        render_record(&mut s, r);
    }
    if let Some(e) = notes::effective(&lines) {
        let kind = str_field(&e.line, "kind").unwrap_or("?");
        let _ = writeln!(
            s,
            "\nEffective verdict of {short}: {} (from the {kind} of {}).",
            e.verdict,
            str_field(&e.line, "ts").unwrap_or("?")
        );
    }
    out(&s)?;
    ok()
}

fn render_record(s: &mut String, r: &Value) {
    let f = |k: &str| str_field(r, k).unwrap_or("?");
    let _ = write!(s, "\n{}  {}  {}", f("ts"), f("kind"), f("verdict"));
    if str_field(r, "kind") == Some("override") {
        let _ = writeln!(s, "  (overrides {}) by {}", f("overrides"), f("who"));
        let _ = writeln!(s, "    reason: {}", f("reason"));
        if let Some(keys) = r.get(notes::ANSWERS).and_then(Value::as_array) {
            for key in keys.iter().filter_map(Value::as_str) {
                let _ = writeln!(s, "    answers: {key}");
            }
        }
    } else {
        if let Some(stage) = str_field(r, "stage") {
            let _ = write!(s, "  stage {stage}");
            if let Some(a) = r.get("attempt").and_then(Value::as_u64) {
                let _ = write!(s, " (attempt {a})");
            }
        }
        let _ = writeln!(s);
        let mut models = Vec::new();
        if let Some(m) = str_field(r, "arbiter_model") {
            models.push(format!("arbiter {m}"));
        }
        if let Some(m) = str_field(r, "reviewed_model") {
            models.push(format!("reviewing {m}"));
        }
        if let Some(c) = r.get("confidence").and_then(Value::as_f64) {
            models.push(format!("confidence {c:.2}"));
        }
        if !models.is_empty() {
            let _ = writeln!(s, "    {}", models.join(", "));
        }
        if let Some(m) =
            str_field(r, "model_verdict").filter(|m| Some(*m) != str_field(r, "verdict"))
        {
            let _ = writeln!(s, "    the model said {m}; a deterministic floor raised it");
        }
        if let Some(floor) = r.get("floor").filter(|v| !v.is_null()) {
            let reasons: Vec<&str> = floor
                .get("reasons")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let _ = writeln!(
                s,
                "    floor: {} ({})",
                str_field(floor, "verdict").unwrap_or("?"),
                reasons.join("; ")
            );
        }
        for issue in r
            .get("issues")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            render_issue(s, issue);
        }
        if let Some(reasoning) = str_field(r, "reasoning").filter(|t| !t.is_empty()) {
            let _ = writeln!(s, "    reasoning: {reasoning}");
        }
    }
    if let Some(from) = str_field(r, REATTACHED_FROM) {
        let _ = writeln!(s, "    (copied from {from})");
    }
}

fn render_issue(s: &mut String, issue: &Value) {
    let f = |k: &str| str_field(issue, k).unwrap_or("?");
    let line = |k: &str| issue.get(k).and_then(Value::as_u64);
    let at = match (
        str_field(issue, "path"),
        line("start_line"),
        line("end_line"),
    ) {
        (Some(p), Some(a), Some(b)) if b != a => format!("{p}:{a}-{b}"),
        (Some(p), Some(a), _) => format!("{p}:{a}"),
        (Some(p), None, _) => p.to_string(),
        _ => "(no file)".into(),
    };
    let symbol = issue
        .get("symbol")
        .filter(|v| !v.is_null())
        .map(|sym| {
            format!(
                " ({} {})",
                str_field(sym, "kind").unwrap_or("?"),
                str_field(sym, "name").unwrap_or("?")
            )
        })
        .unwrap_or_default();
    let _ = writeln!(
        s,
        "    - {} {} {at}{symbol} — {}",
        f("severity"),
        f("category"),
        f("description")
    );
}
