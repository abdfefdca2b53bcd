//! Minimal path globs, as TaskSpec scopes and the private-file patterns write them: `*` (within a
//! segment), `**` (any depth), `?`. A leaf: it imports nothing of the crate.

/// Whether `path` (repo-relative, `/`-separated) matches `pattern`.
///
/// A pattern without `/` matches a file or directory name at any depth (`*.py`, `tests`),
/// like gitignore.
/// A pattern ending in `/` or naming a directory matches everything below it (`src/`).
pub fn matches(pattern: &str, path: &str) -> bool {
    let pattern = pattern.trim().trim_start_matches("./");
    if pattern.is_empty() {
        return false;
    }
    if !pattern.contains('/') {
        // Like gitignore: a bare name matches a file or directory of that name at any depth.
        return path
            .split('/')
            .any(|seg| seg_match(pattern.as_bytes(), seg.as_bytes()));
    }
    let pattern = pattern.trim_start_matches('/');
    let pat: Vec<&str> = pattern.trim_end_matches('/').split('/').collect();
    let segs: Vec<&str> = path.split('/').collect();
    if path_match(&pat, &segs) {
        return true;
    }
    // A directory pattern matches everything below it.
    let mut with_rest = pat.clone();
    with_rest.push("**");
    path_match(&with_rest, &segs)
}

fn path_match(pat: &[&str], segs: &[&str]) -> bool {
    match pat.first() {
        None => segs.is_empty(),
        Some(&"**") => (0..=segs.len()).any(|i| path_match(&pat[1..], &segs[i..])),
        Some(p) => {
            !segs.is_empty()
                && seg_match(p.as_bytes(), segs[0].as_bytes())
                && path_match(&pat[1..], &segs[1..])
        }
    }
}

fn seg_match(p: &[u8], s: &[u8]) -> bool {
    match (p.first(), s.first()) {
        (None, None) => true,
        (Some(b'*'), _) => seg_match(&p[1..], s) || (!s.is_empty() && seg_match(p, &s[1..])),
        (Some(b'?'), Some(_)) => seg_match(&p[1..], &s[1..]),
        (Some(a), Some(b)) if a == b => seg_match(&p[1..], &s[1..]),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn globs() {
        assert!(matches("*.py", "a/b/c.py"));
        assert!(matches("src/**", "src/a/b.rs"));
        assert!(matches("src/", "src/a/b.rs"));
        assert!(matches("src", "src/a.rs"));
        assert!(matches("src/*.rs", "src/a.rs"));
        assert!(!matches("src/*.rs", "src/a/b.rs"));
        assert!(matches("**/test_*.py", "tests/test_x.py"));
        assert!(matches("tests/**/*.py", "tests/test_x.py"));
        assert!(!matches("docs/**", "src/docs.rs"));
        assert!(matches("a?c.txt", "abc.txt"));
    }
}
