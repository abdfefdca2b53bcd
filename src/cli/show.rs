//! `git triad show`: the verdict history of one commit, for people.

use std::fmt::Write as _;

use clap::Args;

use super::{ok, out, CommandError, CommandResult, Context};
use crate::cli::helper::{need_repo, note_trust, resolve_commit, short_and_subject};
use crate::notes::{
    self, Answers, InvalidLine, NoteLine, Problem, ReadIssue, ReadLine, Source, SourcedLine,
    Uncounted,
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
    // What `git fetch` landed from remotes is read in first (see notes::fold).
    if let Err(e) = notes::fold::fold_all(repo) {
        tracing::warn!("the notes fetched from remotes are not all read: {e}");
    }
    let own = notes::read_everywhere(repo, commit.id(), &trust)?;
    if args.json {
        let records: Vec<&serde_json::Value> = own.iter().filter_map(|l| l.line.value()).collect();
        let text = serde_json::to_string_pretty(&records)
            .map_err(|e| CommandError::failure(format!("cannot print JSON: {e}")))?;
        out(&format!("{text}\n"))?;
        return ok();
    }
    // Lines of other commits that carry this commit's patch id count here, as the pre-push
    // gate counts them: it is a cherry-pick, squash or rebase of what they reviewed.
    let index = notes::origin::NoteIndex::build(repo, &trust)?;
    let found = index.found_by_patch_id(repo, commit.id())?;
    let mut lines: Vec<(Option<git2::Oid>, SourcedLine)> =
        own.into_iter().map(|l| (None, l)).collect();
    lines.extend(found.into_iter().map(|(on, l)| (Some(on), l)));
    let all: Vec<SourcedLine> = lines.iter().map(|(_, l)| l.clone()).collect();
    let (short, subject) = short_and_subject(&commit);
    let mut s = format!("commit {} {}\n", commit.id(), inline(&subject));
    let effective = notes::effective(&all);
    let (invalid, mut valid): (Vec<_>, Vec<_>) = lines
        .iter()
        .partition(|(_, l)| matches!(l.line, NoteLine::Invalid(_)));
    for (on, l) in &invalid {
        if let NoteLine::Invalid(bad) = &l.line {
            let mend = match (&l.source, on) {
                (Source::Local, None) => format!("`git notes --ref=triad edit {short}`"),
                (Source::Local, Some(on)) => {
                    format!("`git notes --ref=triad edit {}`", &on.to_string()[..12])
                }
                (Source::Remote { name, .. }, _) => format!(
                    "it came from {name}, and fetches only add lines; to stop reading {name}'s notes: `{}`",
                    crate::notes::source::forget_command(name)
                ),
            };
            let gate = match &bad.problem {
                _ if bad.fails_closed() => {
                    "the pre-push gate blocks the commit until it is mended".into()
                }
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
                inline(&crate::bounded::clip(&bad.text, 200)),
                problem_sentence(bad),
                l.source
            );
            if let Some(on) = on {
                let _ = writeln!(s, "{}", found_here(*on));
            }
        }
    }
    if valid.is_empty() {
        if invalid.is_empty() {
            s.push_str("No verdicts are recorded on this commit.\n");
        }
        // Its change may have been reviewed as several commits (a squash).
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
    valid.retain(|(_, l)| seen.insert(l.line.id().cloned()));
    valid.sort_by(|a, b| a.1.line.ts().cmp(b.1.line.ts()));
    for (on, l) in valid {
        let uncounted = effective.as_ref().and_then(|e| {
            e.uncounted
                .iter()
                .find(|(u, _)| u.line.id() == l.line.id())
                .map(|(_, why)| *why)
        });
        render_line(&mut s, l, uncounted);
        if let Some(on) = on {
            let _ = writeln!(s, "{}", found_here(*on));
        }
    }
    if let Some(e) = &effective {
        let line = e.line.line.fields();
        let _ = writeln!(
            s,
            "\nEffective verdict of {short}: {} (from the {} of {}).",
            e.verdict,
            inline(line.kind.as_deref().unwrap_or("?")),
            inline(line.ts.as_deref().unwrap_or("?"))
        );
    }
    if lines.iter().any(|(on, _)| on.is_some()) {
        let _ = writeln!(
            s,
            "Lines found by patch id count here as on the commit they were written on; `git triad notes reattach {rev}` copies them here, and `git triad override {rev}` answers them."
        );
    }
    out(&s)?;
    ok()
}

/// Where a line found by patch id was written.
fn found_here(on: git2::Oid) -> String {
    format!(
        "    (on {}, the same change by patch id: it counts here)",
        &on.to_string()[..12]
    )
}

/// Text from a note (a model's, a person's, a fork's) on one line of the output: every
/// character a terminal would obey, a line break too, and every one that shows as nothing,
/// is shown as text ([`notes::display::visible`]), so it can never start a line of its own
/// that reads as this command's.
fn inline(text: &str) -> String {
    notes::display::visible(text)
}

/// Text from a note that may run over several lines, each after the first indented by
/// `indent`, so none starts where this command's own lines start.
fn block(text: &str, indent: &str) -> String {
    text.trim_end()
        .split('\n')
        .map(inline)
        .collect::<Vec<_>>()
        .join(&format!("\n{indent}"))
}

/// What is wrong with an unreadable line, as the start of a sentence.
fn problem_sentence(bad: &InvalidLine) -> String {
    let mut said = match &bad.problem {
        Problem::NotJson => "this text of the note is not a JSON record".into(),
        p => format!(
            "this line is not one this git triad reads: {}",
            inline(&p.to_string())
        ),
    };
    if let Some(odd) = &bad.odd_verdict {
        said.push_str(&format!(
            ", and its verdict {} is not exactly a verdict word",
            inline(odd)
        ));
    }
    said
}

/// One valid line: what it says, then its id and where it came from.
fn render_line(s: &mut String, l: &SourcedLine, uncounted: Option<Uncounted>) {
    let r = l.line.fields();
    let or_q = |f: &Option<String>| inline(f.as_deref().unwrap_or("?"));
    let verdict = l.line.verdict().map_or("?".to_string(), |v| v.to_string());
    let _ = write!(s, "\n{}  {}  {verdict}", or_q(&r.ts), or_q(&r.kind));
    if let NoteLine::Override(o) = &l.line {
        let overrides = match &o.answers {
            Answers::Unnamed(v) => v.to_string(),
            Answers::Named(_) => or_q(&r.overrides),
        };
        let _ = writeln!(s, "  (overrides {overrides}) by {}", or_q(&r.who));
        let _ = writeln!(
            s,
            "    reason: {}",
            block(r.reason.as_deref().unwrap_or("?"), "            ")
        );
        match &o.answers {
            Answers::Named(keys) => {
                for key in keys {
                    let _ = writeln!(s, "    answers: {}", inline(key));
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
        let _ = writeln!(s, "    (copied from {})", inline(from));
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
        let _ = write!(s, "  stage {}", inline(stage));
        if let Some(a) = r.attempt {
            let _ = write!(s, " (attempt {a})");
        }
    }
    let _ = writeln!(s);
    let mut models = Vec::new();
    if let Some(m) = &r.arbiter_model {
        models.push(format!("arbiter {}", inline(m)));
    }
    if let Some(m) = &r.reviewed_model {
        models.push(format!("reviewing {}", inline(m)));
    }
    if let Some(c) = r.confidence {
        models.push(format!("confidence {c:.2}"));
    }
    if !models.is_empty() {
        let _ = writeln!(s, "    {}", models.join(", "));
    }
    let reasons = |f: &crate::arbiter::Floor| inline(&f.reasons.join("; "));
    match (r.model_verdict, r.verdict) {
        (Some(m), Some(v)) if v > m => {
            let _ = writeln!(
                s,
                "    the model said {m}; a deterministic floor raised it to {v}"
            );
        }
        (Some(m), Some(v)) if v < m => {
            let why = r.derived.as_ref().map(reasons).unwrap_or_default();
            let _ = writeln!(
                s,
                "    the model said {m}; what its issues stand on supports only {v} ({why})"
            );
        }
        _ => {}
    }
    if let Some(floor) = &r.floor {
        let _ = writeln!(s, "    floor: {} ({})", floor.verdict, reasons(floor));
    }
    if let Some(c) = r.coverage.as_ref().and_then(|c| c.describe()) {
        let _ = writeln!(s, "    coverage: {}", inline(&c));
    }
    for issue in r.issues.iter().flatten() {
        render_issue(s, issue);
    }
    if let Some(reasoning) = r.reasoning.as_deref().filter(|t| !t.is_empty()) {
        let _ = writeln!(s, "    reasoning: {}", block(reasoning, "               "));
    }
}

fn render_issue(s: &mut String, issue: &ReadIssue) {
    let or_q = |f: &Option<String>| inline(f.as_deref().unwrap_or("?"));
    let at = match (&issue.path, issue.start_line, issue.end_line) {
        (Some(p), Some(a), Some(b)) if b != a => format!("{}:{a}-{b}", inline(p)),
        (Some(p), Some(a), _) => format!("{}:{a}", inline(p)),
        (Some(p), None, _) => inline(p),
        _ => "(no file)".into(),
    };
    let symbol = issue
        .symbol
        .as_ref()
        .map(|sym| format!(" ({} {})", inline(&sym.kind), inline(&sym.name)))
        .unwrap_or_default();
    let _ = writeln!(
        s,
        "    - {} {} {at}{symbol} — {}",
        or_q(&issue.severity),
        or_q(&issue.category),
        block(issue.description.as_deref().unwrap_or("?"), "        ")
    );
    if let Some(why) = &issue.demoted {
        let _ = writeln!(s, "      (does not count: {})", inline(why));
    }
}
