//! The display ref: one line per verdict that a person reads first, beside the JSON that
//! tools read.
//!
//! `git log` shows the notes of `notes.displayRef`, and a verdict line of
//! [`super::NOTES_REF`] is a 1–2 KB JSON object with `verdict` last among its sorted keys.
//! `git triad init` points `notes.displayRef` at [`DISPLAY_REF`] instead, whose note on a
//! commit has one line per line of its JSON note: the verdict, the stage (or `review`), the
//! arbiter, the issues that count and where the first of them is. It is derived data, never
//! shared: every write to the JSON note refreshes it ([`refresh`]), and a merge or `init`
//! rebuilds it whole ([`rebuild`]). Without `init` it does not exist and nothing writes it.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use git2::{Oid, Repository};

use super::line::{read_note, NoteLine, ReadIssue};
use super::merge::write_notes_tree;
use super::store::{
    backoff, blob_text, compare_and_swap, note_map, read_text, ref_target, ScratchRef,
    MAX_APPEND_TRIES,
};
use super::{NotesError, NOTES_REF};

/// The notes ref `git log` shows after `git triad init`.
pub const DISPLAY_REF: &str = "refs/notes/triad-verdicts";

/// The display note for a commit whose JSON note holds `lines`: one line per line, oldest
/// first; `None` when there are none.
pub fn text(lines: &[NoteLine]) -> Option<String> {
    let mut sorted: Vec<&NoteLine> = lines.iter().collect();
    sorted.sort_by(|a, b| a.ts().cmp(b.ts()));
    let mut s = String::new();
    for line in sorted {
        let _ = writeln!(s, "{}", one(line));
    }
    // The lines quote models and people: as text, never obeyed by the terminal.
    (!s.is_empty()).then(|| crate::safe::text(&s).into_owned())
}

/// Text from a note (a model's, a person's, a fork's) as one line a person reads: a line
/// break, a tab or any other character a terminal would obey shown as text (`^J`), and the
/// characters that show as nothing (a zero-width joiner, a soft hyphen, a byte order mark)
/// shown as `<U+200D>`, so `HA<U+200D>LT` does not read as `HALT` and no text of a note
/// starts a line of its own.
pub fn visible(text: &str) -> String {
    let shown: String = text
        .chars()
        .map(|c| match invisible(c) {
            true => format!("<U+{:04X}>", c as u32),
            false => c.to_string(),
        })
        .collect();
    crate::safe::line(&shown)
}

/// Whether `c` is a format character a terminal shows as nothing.
fn invisible(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{034F}'
            | '\u{061C}'
            | '\u{115F}'
            | '\u{1160}'
            | '\u{180E}'
            | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{206F}'
            | '\u{3164}'
            | '\u{FE00}'..='\u{FE0F}'
            | '\u{FEFF}'
            | '\u{FFA0}'
            | '\u{FFF9}'..='\u{FFFB}'
    )
}

/// One line for `line`.
fn one(line: &NoteLine) -> String {
    let f = line.fields();
    let verdict = line.verdict().map_or("?", |v| v.as_str());
    let mut s = format!("{verdict:<7}  ");
    match line {
        NoteLine::Verdict(_) => {
            match f.stage.as_deref() {
                Some("review") | None => s.push_str("review"),
                Some(stage) => {
                    let _ = write!(s, "stage {}", visible(stage));
                }
            }
            if let Some(model) = &f.arbiter_model {
                let _ = write!(s, " · arbiter {}", visible(model));
            }
            let mut counted: Vec<&ReadIssue> =
                f.issues.iter().flatten().filter(|i| i.counts()).collect();
            counted.sort_by_key(|i| i.rank());
            match counted.first() {
                None => s.push_str(" · no issues"),
                Some(top) => {
                    let n = counted.len();
                    let _ = write!(
                        s,
                        " · {n} issue{} · top: {} {}",
                        if n == 1 { "" } else { "s" },
                        visible(top.severity.as_deref().unwrap_or("issue")),
                        visible(&top.place())
                    );
                }
            }
        }
        NoteLine::Override(o) => {
            let _ = write!(
                s,
                "override by {}: {}",
                visible(f.who.as_deref().unwrap_or("?")),
                visible(f.reason.as_deref().unwrap_or(""))
            );
            if let super::Answers::Named(ids) = &o.answers {
                let _ = write!(s, " (answers {} line(s))", ids.len());
            }
        }
        NoteLine::Invalid(bad) => {
            let _ = write!(
                s,
                "a line git triad does not read ({}): `git triad show` says more",
                visible(&bad.problem.to_string())
            );
        }
    }
    if let Some(from) = &f.reattached_from {
        let _ = write!(
            s,
            " (copied from {})",
            visible(from.get(..12).unwrap_or(from))
        );
    }
    s
}

/// The display note `commit` should have, from its JSON note at the tip of `notes_ref`.
fn wanted(repo: &Repository, notes_ref: &str, commit: Oid) -> Result<Option<String>, NotesError> {
    Ok(read_text(repo, notes_ref, commit)?.and_then(|t| text(&read_note(&t))))
}

/// Brings the display notes of `commits` in step with their JSON notes; nothing when the
/// display ref does not exist (`init` was not run). The JSON notes are read again on every
/// try, so of two writers racing the later one always writes what is there.
pub fn refresh(repo: &Repository, commits: &[Oid]) -> Result<(), NotesError> {
    if commits.is_empty() || ref_target(repo, DISPLAY_REF)?.is_none() {
        return Ok(());
    }
    let sig = crate::git::signature(repo);
    let scratch = ScratchRef::new(repo, "display");
    for attempt in 0..MAX_APPEND_TRIES {
        let tip = ref_target(repo, DISPLAY_REF)?;
        scratch.set(tip)?;
        let mut changed = false;
        for commit in commits {
            let want = wanted(repo, NOTES_REF, *commit)?;
            if want == read_text(repo, &scratch.name, *commit)? {
                continue;
            }
            let failed =
                |e| NotesError::git(format!("cannot write the display note on {commit}"), e);
            match &want {
                Some(t) => repo
                    .note(&sig, &sig, Some(&scratch.name), *commit, t, true)
                    .map(|_| ())
                    .map_err(failed)?,
                None => repo
                    .note_delete(*commit, Some(&scratch.name), &sig, &sig)
                    .map_err(failed)?,
            }
            changed = true;
        }
        if !changed {
            return Ok(());
        }
        let built = repo
            .refname_to_id(&scratch.name)
            .map_err(|e| NotesError::git("cannot read the new display notes commit", e))?;
        if compare_and_swap(repo, DISPLAY_REF, tip, built, "git-triad: display verdicts")? {
            return Ok(());
        }
        backoff(attempt);
    }
    Err(NotesError::Contended {
        tries: MAX_APPEND_TRIES,
    })
}

/// Writes the display note of every commit with a JSON note, creating the display ref when
/// it does not exist; returns how many notes it holds.
pub fn rebuild(repo: &Repository) -> Result<usize, NotesError> {
    for attempt in 0..MAX_APPEND_TRIES {
        let tip = ref_target(repo, DISPLAY_REF)?;
        let mut notes = BTreeMap::new();
        for (commit, blob) in note_map(repo)? {
            if let Some(t) = text(&read_note(&blob_text(repo, blob)?)) {
                let blob = repo
                    .blob(t.as_bytes())
                    .map_err(|e| NotesError::git("cannot write a display note", e))?;
                notes.insert(commit.to_string(), blob);
            }
        }
        let tree = write_notes_tree(repo, &notes)?;
        let same = tip.is_some_and(|t| repo.find_commit(t).is_ok_and(|c| c.tree_id() == tree));
        if same {
            return Ok(notes.len());
        }
        let parents: Vec<Oid> = tip.into_iter().collect();
        let commit = crate::git::commit(
            repo,
            tree,
            &parents,
            "Verdicts for people, written by 'git triad' from refs/notes/triad\n",
        )?;
        if compare_and_swap(
            repo,
            DISPLAY_REF,
            tip,
            commit,
            "git-triad: display verdicts",
        )? {
            return Ok(notes.len());
        }
        backoff(attempt);
    }
    Err(NotesError::Contended {
        tries: MAX_APPEND_TRIES,
    })
}

/// Deletes the display ref (it is derived, and `init` builds it again); returns whether it
/// existed.
pub fn remove(repo: &Repository) -> Result<bool, NotesError> {
    match repo.find_reference(DISPLAY_REF) {
        Ok(mut r) => {
            r.delete()
                .map_err(|e| NotesError::git(format!("cannot delete {DISPLAY_REF}"), e))?;
            Ok(true)
        }
        Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(false),
        Err(e) => Err(NotesError::git(format!("cannot read {DISPLAY_REF}"), e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_per_verdict_with_what_a_person_reads_first() {
        let note = concat!(
            r#"{"v":1,"kind":"review","ts":"2","stage":"implement","arbiter_model":"model-b","verdict":"HALT","#,
            r#""issues":[{"severity":"suggestion","path":"a.rs","start_line":9},"#,
            r#"{"severity":"critical","path":"src/lib.rs","start_line":3},"#,
            r#"{"severity":"critical","path":"x.rs","start_line":1,"demoted":"refuted"}]}"#,
            "\n",
            r#"{"v":1,"kind":"override","ts":"3","verdict":"APPROVE","answers":["x"],"who":"Ann <a@b>","reason":"checked"}"#,
            "\n",
            r#"{"v":1,"kind":"review","ts":"1","stage":"review","arbiter_model":"m","verdict":"approve","issues":[]}"#,
            "\n",
            r#"{"v":2,"kind":"review","verdict":"HALT"}"#,
            "\n"
        );
        let shown = text(&read_note(note)).unwrap();
        let lines: Vec<&str> = shown.lines().collect();
        assert_eq!(
            lines,
            [
                "?        a line git triad does not read (its \"v\" is 2, and this git triad reads only the integer 1): `git triad show` says more",
                "APPROVE  review · arbiter m · no issues",
                "HALT     stage implement · arbiter model-b · 2 issues · top: critical src/lib.rs:3",
                "APPROVE  override by Ann <a@b>: checked (answers 1 line(s))",
            ]
        );
        assert_eq!(text(&[]), None);
    }

    #[test]
    fn what_shows_as_nothing_or_breaks_a_line_is_shown_as_text() {
        assert_eq!(visible("HA\u{200d}LT"), "HA<U+200D>LT");
        assert_eq!(visible("a\nb\x1b[2J"), "a^Jb^[[2J");
        assert_eq!(visible("ＨＡＬＴ"), "ＨＡＬＴ");
    }
}
