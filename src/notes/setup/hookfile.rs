//! Installing git-triad's block into a hook file, and taking it out again byte for byte.
//!
//! A hook git-triad creates is the shipped shim (`hooks/<name>`): a shebang and our block,
//! which `exec`s the binary. In an existing hook the block goes right after the shebang line
//! and does not `exec`: it saves git's stdin, passes it to `git triad hook …`, stops the hook
//! if the gate fails, and hands the same stdin on to the rest of the hook. Appending at the
//! end instead would let an earlier command that reads stdin (git-lfs's `pre-push` does) eat
//! the pushed refs, and the gate would then see nothing and let everything through.

use std::fs;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// First line of our block.
pub const START: &str = "# >>> git-triad >>>";
/// Last line of our block.
pub const END: &str = "# <<< git-triad <<<";

/// The hooks git-triad installs, with their shipped shims.
pub const HOOKS: &[(&str, &str)] = &[
    ("pre-push", include_str!("../../../hooks/pre-push")),
    ("post-rewrite", include_str!("../../../hooks/post-rewrite")),
];

/// What installing or removing did to one hook file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// The file was created.
    Created,
    /// Our block was added to an existing hook.
    Added,
    /// An older version of our block was replaced.
    Updated,
    /// Our block was removed and the rest of the hook kept.
    Removed,
    /// The file held nothing but our block and was deleted.
    Deleted,
    /// Nothing to do.
    Unchanged,
    /// The hook is not a shell script, so it was left alone.
    NotShell,
}

/// The block of a shim: everything after its shebang line.
fn fresh_block(shim: &str) -> &str {
    shim.split_once('\n').map_or("", |(_, rest)| rest)
}

/// The block for an existing hook: no `exec`, stdin saved and handed on.
fn shared_block(shim: &str) -> String {
    let mut out = String::new();
    for line in fresh_block(shim).lines() {
        match line.strip_prefix("exec ") {
            Some(call) => {
                out.push_str("# git's stdin is saved and handed on, so the rest of this hook still reads it.\n");
                out.push_str("triad_input=$(cat; echo x); triad_input=${triad_input%x}\n");
                out.push_str(&format!(
                    "printf '%s' \"$triad_input\" | {call} || exit $?\n"
                ));
                out.push_str("if [ -z \"$triad_input\" ]; then exec 0</dev/null; else exec 0<<triad_input_end\n");
                out.push_str("${triad_input%?}\ntriad_input_end\nfi\nunset triad_input\n");
            }
            None => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}

/// Whether a hook with this first line is run by a POSIX-style shell (no shebang counts too:
/// git falls back to `sh`).
fn is_shell(first_line: &str) -> bool {
    let Some(cmd) = first_line.strip_prefix("#!") else {
        return true;
    };
    let mut words = cmd.split_whitespace();
    let mut prog = words.next().unwrap_or("");
    if prog.rsplit('/').next() == Some("env") {
        prog = words.find(|w| !w.starts_with('-')).unwrap_or("");
    }
    matches!(
        prog.rsplit('/').next().unwrap_or(""),
        "sh" | "bash" | "dash" | "zsh" | "ksh" | "ash" | "mksh"
    )
}

/// Byte range of our block in `text`: from the start of the START line through the newline
/// that ends the END line (or the end of the text).
fn find_block(text: &str) -> Option<(usize, usize)> {
    let start = line_start_of(text, START)?;
    let end_line = start + line_start_of(&text[start..], END)?;
    let end = text[end_line..]
        .find('\n')
        .map_or(text.len(), |i| end_line + i + 1);
    Some((start, end))
}

/// Offset of the first line equal to `line`.
fn line_start_of(text: &str, line: &str) -> Option<usize> {
    let mut offset = 0;
    for l in text.split_inclusive('\n') {
        if l.trim_end_matches(['\n', '\r']) == line {
            return Some(offset);
        }
        offset += l.len();
    }
    None
}

/// `text` with our block inserted after the shebang line (exact inverse of [`without_block`]).
fn with_block(text: &str, block: &str) -> String {
    if !text.starts_with("#!") {
        return format!("{block}{text}");
    }
    match text.find('\n') {
        Some(i) => format!("{}{block}{}", &text[..=i], &text[i + 1..]),
        // A lone shebang without a newline: the newline we need goes before the block, and
        // the block then ends without one, which tells removal to take that newline back.
        None => format!("{text}\n{}", block.trim_end_matches('\n')),
    }
}

/// `text` without our block, or `None` if there is none.
fn without_block(text: &str) -> Option<String> {
    let (mut start, end) = find_block(text)?;
    if end == text.len() && !text.ends_with('\n') && start > 0 {
        start -= 1;
    }
    Some(format!("{}{}", &text[..start], &text[end..]))
}

/// Whether what is left of a hook is nothing but a shebang (or nothing at all).
fn is_only_shebang(text: &str) -> bool {
    let rest = text.trim();
    rest.is_empty() || (rest.starts_with("#!") && !rest.contains('\n'))
}

/// Installs the block of `shim` into the hook at `path`.
pub fn install(path: &Path, shim: &str) -> io::Result<Change> {
    let existing = match fs::read_to_string(path) {
        Ok(t) if !t.trim().is_empty() => Some(t),
        Ok(_) => None,
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    let Some(text) = existing else {
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir)?;
        }
        fs::write(path, shim)?;
        fs::set_permissions(path, fs::Permissions::from_mode(0o755))?;
        return Ok(Change::Created);
    };
    let fresh = fresh_block(shim);
    let shared = shared_block(shim);
    if let (Some((s, e)), Some(rest)) = (find_block(&text), without_block(&text)) {
        let current = &text[s..e];
        let alone = is_only_shebang(&rest);
        let wanted = if alone { fresh } else { shared.as_str() };
        if current.trim_end() == wanted.trim_end() {
            return Ok(Change::Unchanged);
        }
        fs::write(path, with_block(&rest, wanted))?;
        return Ok(Change::Updated);
    }
    if !is_shell(text.lines().next().unwrap_or("")) {
        return Ok(Change::NotShell);
    }
    fs::write(path, with_block(&text, &shared))?;
    Ok(Change::Added)
}

/// Removes our block from the hook at `path`; deletes the file if nothing else is left.
pub fn uninstall(path: &Path) -> io::Result<Change> {
    let text = match fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Change::Unchanged),
        Err(e) => return Err(e),
    };
    let Some(rest) = without_block(&text) else {
        return Ok(Change::Unchanged);
    };
    if is_only_shebang(&rest) {
        fs::remove_file(path)?;
        return Ok(Change::Deleted);
    }
    fs::write(path, rest)?;
    Ok(Change::Removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHIM: &str = include_str!("../../../hooks/pre-push");

    #[test]
    fn insertion_is_undone_exactly() {
        let shared = shared_block(SHIM);
        for original in [
            "#!/bin/sh\necho hi\n",
            "#!/bin/sh\necho no newline",
            "#!/bin/sh",
            "#!/bin/sh\n",
            "echo no shebang\n",
            "#!/usr/bin/env bash\r\nset -e\r\n",
        ] {
            let with = with_block(original, &shared);
            assert!(find_block(&with).is_some(), "{with:?}");
            assert_eq!(without_block(&with).as_deref(), Some(original), "{with:?}");
        }
    }

    #[test]
    fn shared_block_does_not_exec_and_keeps_stdin() {
        let b = shared_block(SHIM);
        assert!(!b.contains("\nexec git"));
        assert!(b.contains("| git triad hook pre-push \"$@\" || exit $?"));
        assert!(b.starts_with(START) && b.trim_end().ends_with(END));
    }

    #[test]
    fn only_shell_hooks_are_edited() {
        assert!(is_shell("#!/bin/sh"));
        assert!(is_shell("#!/usr/bin/env bash"));
        assert!(is_shell("#!/usr/bin/env -S bash -e"));
        assert!(is_shell("echo"));
        assert!(!is_shell("#!/usr/bin/env python3"));
        assert!(!is_shell("#!/usr/bin/perl -w"));
    }
}
