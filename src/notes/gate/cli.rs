//! The pre-push gate through the git command line, for repositories libgit2 cannot open.
//!
//! libgit2 reads SHA-1 and (built with its experimental support) SHA-256 repositories, but not
//! every repository git does: one with reftable refs (`git init --ref-format=reftable`) fails
//! with "unsupported extension name extensions.refstorage". The gate must not fail open
//! there, and should not block every push either, so it asks git itself:
//! `git notes list` once, one `git rev-list`, and one `git cat-file --batch` for the notes of
//! the pushed commits — the same plan as the libgit2 reader behind [`super::check`].

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use super::index::{lines_carrying, PatchIndex};
use super::policy::{Blocked, Finding, Push};
use super::summary::{patch_key, Summary};
use crate::notes::{NotesError, Source};

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

/// Checks `pushed` (the updates [`super::check`] kept) with the git CLI.
pub(crate) fn check(dir: &Path, push: Push<'_>) -> Result<Vec<Finding>, NotesError> {
    // The local notes ref and teammates' copies, as the libgit2 reader does.
    let refs: Vec<(String, Source)> =
        git_output(dir, &["for-each-ref", "--format=%(refname)", "refs/notes/"])?
            .lines()
            .filter_map(|r| push.trust.source_of(r).map(|s| (r.to_string(), s)))
            .collect();
    let mut maps: Vec<(Source, HashMap<String, String>)> = Vec::new();
    for (r, source) in refs {
        // `<note blob> <annotated object>` per line.
        let notes_ref = format!("--ref={r}");
        maps.push((
            source,
            git_output(dir, &["notes", &notes_ref, "list"])?
                .lines()
                .filter_map(|l| l.split_once(' '))
                .map(|(blob, annotated)| (annotated.to_string(), blob.to_string()))
                .collect(),
        ));
    }
    if maps.iter().all(|(_, m)| m.is_empty()) && !push.policy.blocks_missing() {
        return Ok(Vec::new());
    }
    let mut args: Vec<String> = vec!["rev-list".into()];
    let mut hide = Vec::new();
    let mut hide_tracking = false;
    for u in push.pushed {
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
        // `refs/remotes/team/*` holds the branches of a remote `team/origin` too.
        for other in git_output(dir, &["remote"])?.lines() {
            if other.starts_with(&format!("{}/", push.remote)) {
                args.push(format!("--exclude=refs/remotes/{other}/*"));
            }
        }
        args.push(format!("--glob=refs/remotes/{}/*", push.remote));
    }
    let arg_refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let commits = git_output(dir, &arg_refs)?;
    let pushed: Vec<(&str, Vec<(&Source, &String)>)> = commits
        .lines()
        .filter(|l| !l.is_empty())
        .map(|c| {
            let blobs = maps.iter().filter_map(|(s, m)| Some((s, m.get(c)?)));
            (c, blobs.collect())
        })
        .collect();
    // Every note is read when commits are matched by patch id (lines of any note may carry a
    // pushed commit's), else only the pushed commits' own.
    let texts = match push.scope.by_patch_id {
        true => read_blobs(
            dir,
            maps.iter()
                .flat_map(|(_, m)| m.values().map(String::as_str)),
        )?,
        false => read_blobs(
            dir,
            pushed
                .iter()
                .flat_map(|(_, b)| b.iter().map(|(_, b)| b.as_str())),
        )?,
    };
    let mut index = PatchIndex::default();
    if push.scope.by_patch_id {
        for (source, (_, m)) in maps.iter().enumerate() {
            for (annotated, blob) in m {
                if let Some(text) = texts.get(blob) {
                    index.add(
                        source,
                        annotated.as_str(),
                        blob.as_str(),
                        &Summary::of(text).patch_ids,
                    );
                }
            }
        }
    }
    // Patch ids cost a diff each: only when some line carries one.
    let patch_ids = match index.is_empty() {
        true => HashMap::new(),
        false => patch_ids(dir, &pushed.iter().map(|(c, _)| *c).collect::<Vec<_>>())?,
    };
    let text_of = |blob: &str| texts.get(blob).map_or("", String::as_str);
    let patch_ids: HashMap<String, _> = patch_ids
        .into_iter()
        .filter_map(|(c, p)| Some((c, patch_key(&p)?)))
        .collect();
    let mut findings = Vec::new();
    for (commit, blobs) in pushed {
        let own: Vec<(&Source, &str)> = blobs.iter().map(|(s, b)| (*s, text_of(b))).collect();
        let found = match patch_ids.get(commit) {
            Some(pid) => {
                let theirs: Vec<(&Source, &str)> = index
                    .others(pid, &commit)
                    .into_iter()
                    .map(|(s, blob)| (&maps[s].0, text_of(blob)))
                    .collect();
                lines_carrying(&theirs, pid)
            }
            None => Vec::new(),
        };
        if let Some(why) = push.policy.judge_with(&own, found) {
            findings.push(describe(dir, commit, why)?);
        }
    }
    Ok(findings)
}

/// The stable patch ids of `commits` (diff against the first parent, the empty tree for a
/// root), as `git diff-tree --stdin -p | git patch-id --stable`: commit → patch id. Commits
/// with an empty diff have none.
fn patch_ids(dir: &Path, commits: &[&str]) -> Result<HashMap<String, String>, NotesError> {
    let diff_args = [
        "diff-tree",
        "--stdin",
        "-p",
        "--no-renames",
        "--root",
        "--diff-merges=first-parent",
    ];
    let mut diff = Command::new("git")
        .args(diff_args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| cli_error(&diff_args, e.to_string()))?;
    let mut stdin = diff.stdin.take().expect("piped stdin");
    let input: String = commits.iter().map(|c| format!("{c}\n")).collect();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let pid_args = ["patch-id", "--stable"];
    let out = Command::new("git")
        .args(pid_args)
        .current_dir(dir)
        .stdin(diff.stdout.take().expect("piped stdout"))
        .output()
        .map_err(|e| cli_error(&pid_args, e.to_string()))?;
    let _ = writer.join();
    let status = diff
        .wait()
        .map_err(|e| cli_error(&diff_args, e.to_string()))?;
    if !status.success() || !out.status.success() {
        return Err(cli_error(&pid_args, "could not compute patch ids".into()));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(pid, commit)| (commit.to_string(), pid.to_string()))
        .collect())
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

fn describe(dir: &Path, commit: &str, blocked: Blocked) -> Result<Finding, NotesError> {
    let shown = git_output(dir, &["show", "-s", "--format=%h%x00%s", commit])?;
    let (short, subject) = shown.trim_end().split_once('\0').unwrap_or((commit, ""));
    Ok(Finding {
        commit: commit.to_string(),
        short: short.to_string(),
        subject: subject.to_string(),
        blocked,
    })
}
