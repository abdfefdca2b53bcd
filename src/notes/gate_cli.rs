//! The pre-push gate through the git command line, for repositories libgit2 cannot open.
//!
//! The vendored libgit2 is built without its experimental SHA-256 support, so opening a
//! `--object-format=sha256` repository fails ("unknown object format 'sha256'"). The gate must
//! not fail open there, and should not block every push either, so it asks git itself:
//! `git notes list` once, one `git rev-list`, and one `git cat-file --batch` for the notes of
//! the pushed commits — the same plan as the libgit2 reader behind [`super::gate::check`].

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use super::format::Effective;
use super::gate::{Finding, Policy, RefUpdate};
use super::{NotesError, NOTES_REF};

/// Runs `git <args>` in `dir` and returns stdout; a failure carries git's stderr.
pub fn git_output(dir: &Path, args: &[&str]) -> Result<String, NotesError> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| cli_error(args, e.to_string()))?;
    if !out.status.success() {
        return Err(cli_error(
            args,
            String::from_utf8_lossy(&out.stderr).trim().to_string(),
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn cli_error(args: &[&str], message: String) -> NotesError {
    NotesError::GitCli {
        args: args.join(" "),
        message,
    }
}

/// The object format of the repository around `dir` (`sha1` or `sha256`).
pub fn object_format(dir: &Path) -> Result<String, NotesError> {
    Ok(git_output(dir, &["rev-parse", "--show-object-format"])?
        .trim()
        .to_string())
}

/// The commit an id names (peeling tags), if this repository has it.
fn peel_commit(dir: &Path, id: &str) -> Option<String> {
    git_output(
        dir,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{id}^{{commit}}"),
        ],
    )
    .ok()
    .map(|s| s.trim().to_string())
    .filter(|s| !s.is_empty())
}

/// Checks `pushed` (the updates [`super::gate::check`] kept) with the git CLI.
pub(crate) fn check(
    dir: &Path,
    remote: &str,
    pushed: &[&RefUpdate],
    policy: &Policy,
) -> Result<Vec<Finding>, NotesError> {
    let notes_ref = format!("--ref={NOTES_REF}");
    // `<note blob> <annotated object>` per line; nothing when the ref does not exist.
    let notes: HashMap<String, String> = git_output(dir, &["notes", &notes_ref, "list"])?
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(blob, annotated)| (annotated.to_string(), blob.to_string()))
        .collect();
    if notes.is_empty() && !policy.blocks_missing() {
        return Ok(Vec::new());
    }
    let mut args: Vec<String> = vec!["rev-list".into()];
    let mut hide = Vec::new();
    let mut hide_tracking = false;
    for u in pushed {
        let Some(local) = peel_commit(dir, &u.local_oid) else {
            continue;
        };
        args.push(local);
        match u
            .has_remote()
            .then(|| peel_commit(dir, &u.remote_oid))
            .flatten()
        {
            Some(remote_commit) => hide.push(format!("^{remote_commit}")),
            None => hide_tracking = true,
        }
    }
    if args.len() == 1 {
        return Ok(Vec::new());
    }
    args.extend(hide);
    if hide_tracking {
        args.push("--not".into());
        args.push(format!("--glob=refs/remotes/{remote}/*"));
    }
    let arg_refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let commits = git_output(dir, &arg_refs)?;
    let pushed: Vec<(&str, Option<&String>)> = commits
        .lines()
        .filter(|l| !l.is_empty())
        .map(|c| (c, notes.get(c)))
        .collect();
    let texts = read_blobs(
        dir,
        pushed.iter().filter_map(|(_, b)| b.map(String::as_str)),
    )?;
    let mut findings = Vec::new();
    for (commit, blob) in pushed {
        let text = blob.and_then(|b| texts.get(b));
        let texts: Vec<&str> = text.map(String::as_str).into_iter().collect();
        if let Some(effective) = policy.judge(&texts) {
            findings.push(describe(dir, commit, effective)?);
        }
    }
    Ok(findings)
}

/// Reads blobs with one `git cat-file --batch`.
fn read_blobs<'a>(
    dir: &Path,
    ids: impl Iterator<Item = &'a str>,
) -> Result<HashMap<String, String>, NotesError> {
    let args = ["cat-file", "--batch"];
    let input: String = ids.map(|id| format!("{id}\n")).collect();
    if input.is_empty() {
        return Ok(HashMap::new());
    }
    let mut child = Command::new("git")
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| cli_error(&args, e.to_string()))?;
    let mut stdin = child.stdin.take().expect("piped stdin");
    // Write from a thread: git answers while it reads, and both pipes could fill up.
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let mut out = BufReader::new(child.stdout.take().expect("piped stdout"));
    let mut texts = HashMap::new();
    let mut header = String::new();
    loop {
        header.clear();
        if out
            .read_line(&mut header)
            .map_err(|e| cli_error(&args, e.to_string()))?
            == 0
        {
            break;
        }
        let fields: Vec<&str> = header.split_whitespace().collect();
        let [id, _kind, size] = fields[..] else {
            return Err(cli_error(&args, format!("unexpected answer {header:?}")));
        };
        let size: usize = size
            .parse()
            .map_err(|_| cli_error(&args, format!("unexpected answer {header:?}")))?;
        let mut body = vec![0; size + 1]; // the content and its terminating newline
        out.read_exact(&mut body)
            .map_err(|e| cli_error(&args, e.to_string()))?;
        body.pop();
        texts.insert(id.to_string(), String::from_utf8_lossy(&body).into_owned());
    }
    let _ = writer.join();
    let status = child.wait().map_err(|e| cli_error(&args, e.to_string()))?;
    if !status.success() {
        return Err(cli_error(&args, format!("exited with {status}")));
    }
    Ok(texts)
}

fn describe(dir: &Path, commit: &str, effective: Option<Effective>) -> Result<Finding, NotesError> {
    let shown = git_output(dir, &["show", "-s", "--format=%h%x00%s", commit])?;
    let (short, subject) = shown.trim_end().split_once('\0').unwrap_or((commit, ""));
    Ok(Finding {
        commit: commit.to_string(),
        short: short.to_string(),
        subject: subject.to_string(),
        effective,
    })
}
