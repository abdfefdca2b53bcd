//! What the pre-push gate works out once and keeps: the patch id of a commit, and the
//! [`Summary`] of a note blob, each by object id, in `$GIT_COMMON_DIR/triad/gate-cache`.
//!
//! Neither can go stale: an object id names its content, a commit's patch id is a function
//! of its tree and its first parent's, and a note blob's summary is a function of its text
//! and of how this build reads notes, which the file's first line names ([`HEADER`]: a file
//! written by a build that reads differently is thrown away whole). So a push of 10 000 noted
//! commits computes 10 000 diffs once, and afterwards looks them up.
//!
//! The file is text, one fact a line (`c <commit> <patch id or ->`,
//! `b <blob> <class> <patch ids or ->`), and only grows: new facts are appended in one
//! write, so two gates running at once lose nothing, and a line that does not read (a write
//! cut short) is skipped. It lives in the git directory: never committed, pushed or cloned.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;

use git2::Oid;

use super::summary::{Class, Summary};
use crate::git::parse_oid;
use crate::verdict::Verdict;

/// The first line of the file: its format, and the build and reading rules its summaries
/// were made with.
static HEADER: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!(
        "git-triad gate cache 1 {} rules {}",
        env!("CARGO_PKG_VERSION"),
        crate::notes::READ_RULES
    )
});

/// The facts kept, and those learned since they were read.
#[derive(Debug, Default)]
pub(crate) struct GateCache {
    path: Option<PathBuf>,
    patch_ids: HashMap<Oid, Option<String>>,
    summaries: HashMap<Oid, Summary>,
    /// Lines to add to the file.
    learned: String,
    /// Whether the file must be written anew (absent, or from another build).
    fresh: bool,
}

impl GateCache {
    /// Reads the cache at `path`; an absent, unreadable or foreign file is an empty cache.
    pub fn load(path: PathBuf) -> GateCache {
        let mut cache = GateCache {
            fresh: true,
            ..GateCache::default()
        };
        if let Ok(text) = std::fs::read_to_string(&path) {
            let mut lines = text.split('\n');
            if lines.next() == Some(HEADER.as_str()) {
                cache.fresh = false;
                for line in lines {
                    cache.read_line(line);
                }
            }
        }
        cache.path = Some(path);
        cache
    }

    /// Takes one line of the file in; a line that does not read is skipped.
    fn read_line(&mut self, line: &str) -> Option<()> {
        let mut fields = line.split(' ');
        let kind = fields.next()?;
        let id = parse_oid(fields.next()?).ok()?;
        match kind {
            "c" => {
                let pid = fields.next()?;
                self.patch_ids
                    .insert(id, (pid != "-").then(|| pid.to_string()));
            }
            "b" => {
                let class = match fields.next()? {
                    "x" => Class::Other,
                    "-" => Class::Plain(None),
                    w => Class::Plain(Some(Verdict::from_word(w)?)),
                };
                let patch_ids = match fields.next()? {
                    "-" => Vec::new(),
                    ids => ids.split(',').map(str::to_string).collect(),
                };
                self.summaries.insert(id, Summary { class, patch_ids });
            }
            _ => return None,
        }
        Some(())
    }

    /// The patch id of `commit`, when known (`Some(None)`: its diff is empty).
    pub fn patch_id(&self, commit: Oid) -> Option<&Option<String>> {
        self.patch_ids.get(&commit)
    }

    /// Keeps the patch id of `commit`.
    pub fn learn_patch_id(&mut self, commit: Oid, pid: Option<String>) {
        let _ = writeln!(self.learned, "c {commit} {}", pid.as_deref().unwrap_or("-"));
        self.patch_ids.insert(commit, pid);
    }

    /// The summary of note blob `blob`, when known.
    pub fn summary(&self, blob: Oid) -> Option<&Summary> {
        self.summaries.get(&blob)
    }

    /// Keeps the summary of note blob `blob`.
    pub fn learn_summary(&mut self, blob: Oid, summary: Summary) {
        let class = match summary.class {
            Class::Other => "x",
            Class::Plain(None) => "-",
            Class::Plain(Some(v)) => v.as_str(),
        };
        let ids = match summary.patch_ids.is_empty() {
            true => "-".to_string(),
            false => summary.patch_ids.join(","),
        };
        let _ = writeln!(self.learned, "b {blob} {class} {ids}");
        self.summaries.insert(blob, summary);
    }

    /// Adds what was learned to the file (or writes it anew, atomically, when it was absent or
    /// from another build). Nothing to add writes nothing.
    pub fn save(&mut self) -> std::io::Result<()> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        if self.learned.is_empty() {
            return Ok(());
        }
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        if self.fresh {
            let dir = path.parent().unwrap_or(std::path::Path::new("."));
            let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
            tmp.write_all(format!("{}\n{}", *HEADER, self.learned).as_bytes())?;
            tmp.persist(path).map_err(|e| e.error)?;
            self.fresh = false;
        } else {
            // One write of whole lines: appends of two gates at once do not interleave.
            let mut file = std::fs::OpenOptions::new().append(true).open(path)?;
            file.write_all(self.learned.as_bytes())?;
        }
        self.learned.clear();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn oid(n: u8) -> Oid {
        Oid::from_bytes(&[n; 20]).unwrap()
    }

    #[test]
    fn facts_survive_a_save_and_a_foreign_or_torn_file_is_not_believed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("triad/gate-cache");
        let mut c = GateCache::load(path.clone());
        c.learn_patch_id(oid(1), Some("p1".into()));
        c.learn_patch_id(oid(2), None);
        c.learn_summary(
            oid(3),
            Summary {
                class: Class::Plain(Some(Verdict::Flag)),
                patch_ids: vec!["p1".into(), "p2".into()],
            },
        );
        c.save().unwrap();
        let mut again = GateCache::load(path.clone());
        assert_eq!(again.patch_id(oid(1)), Some(&Some("p1".to_string())));
        assert_eq!(again.patch_id(oid(2)), Some(&None));
        assert_eq!(
            again.summary(oid(3)).unwrap().class,
            Class::Plain(Some(Verdict::Flag))
        );
        again.learn_summary(
            oid(4),
            Summary {
                class: Class::Other,
                patch_ids: vec![],
            },
        );
        again.save().unwrap();
        // A write cut short leaves a line that does not read: it is skipped.
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("b 0505");
        std::fs::write(&path, &text).unwrap();
        let read = GateCache::load(path.clone());
        assert_eq!(read.summary(oid(4)).unwrap().class, Class::Other);
        assert_eq!(read.summaries.len(), 2);
        // Another build's file is not read at all.
        std::fs::write(&path, text.replacen("cache 1", "cache 0", 1)).unwrap();
        let foreign = GateCache::load(path);
        assert!(foreign.patch_id(oid(1)).is_none() && foreign.fresh);
    }
}
