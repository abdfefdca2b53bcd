//! The local git config `git triad init` sets, and a record of it so `--uninstall` removes
//! exactly what was added and puts back what was replaced.

use std::path::PathBuf;

use git2::{ConfigLevel, Repository};
use serde::{Deserialize, Serialize};

use crate::notes::display::DISPLAY_REF;
use crate::notes::NOTES_REF;

/// One change to the local git config.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Entry {
    /// A value added to a multi-valued key.
    Added {
        /// The key.
        key: String,
        /// The value added.
        value: String,
    },
    /// A single-valued key set, with what it was before (`None`: unset).
    Set {
        /// The key.
        key: String,
        /// The previous value.
        old: Option<String>,
        /// The value set.
        new: String,
    },
}

impl Entry {
    /// One sentence saying what this change did.
    pub fn describe(&self) -> String {
        match self {
            Entry::Added { key, value } => {
                format!("Added `{key} = {value}` to the local git config.")
            }
            Entry::Set {
                key,
                old: None,
                new,
            } => format!("Set `{key} = {new}` in the local git config."),
            Entry::Set {
                key,
                old: Some(old),
                new,
            } => {
                format!("Set `{key} = {new}` in the local git config (it was `{old}`).")
            }
        }
    }
}

/// Where init records its config changes (inside the git dir: never committed or cloned).
fn record_path(repo: &Repository) -> PathBuf {
    crate::git::paths::init_record(repo)
}

/// The changes recorded by earlier `init` runs.
pub fn load_record(repo: &Repository) -> Vec<Entry> {
    std::fs::read_to_string(record_path(repo))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

/// Saves the record; an empty record removes the file.
pub fn save_record(repo: &Repository, entries: &[Entry]) -> std::io::Result<()> {
    let path = record_path(repo);
    if entries.is_empty() {
        return match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        };
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let text = serde_json::to_string_pretty(entries).map_err(std::io::Error::other)?;
    std::fs::write(path, text + "\n")
}

fn local(repo: &Repository) -> Result<git2::Config, git2::Error> {
    repo.config()?.open_level(ConfigLevel::Local)
}

/// `s` as a regular expression matching itself (libgit2 matches multivar values by regex).
fn regex_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if "\\^$.|?*+()[]{}".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

fn exact(value: &str) -> String {
    format!("^{}$", regex_escape(value))
}

fn has_value(cfg: &git2::Config, key: &str, value: &str) -> Result<bool, git2::Error> {
    let mut found = false;
    let mut entries = cfg.multivar(key, None)?;
    while let Some(e) = entries.next() {
        found |= e?.value().is_ok_and(|v| v == value);
    }
    Ok(found)
}

/// The fetch refspec earlier versions of `init` added: not a glob, so `git fetch` failed on
/// a remote without verdicts ("couldn't find remote ref refs/notes/triad"), and not forced,
/// so it failed on one that rewrote them. `init` takes it out again.
fn legacy_refspec(remote: &str) -> String {
    format!("{NOTES_REF}:refs/notes/remotes/{remote}/triad")
}

/// The settings init wants: (key, value, multi-valued).
pub fn wanted(repo: &Repository) -> Result<Vec<(String, String, bool)>, git2::Error> {
    let mut want = vec![
        ("notes.rewriteRef".to_string(), NOTES_REF.to_string(), true),
        ("notes.rewriteMode".into(), "cat_sort_uniq".into(), false),
        (
            "notes.triad.mergeStrategy".into(),
            "cat_sort_uniq".into(),
            false,
        ),
        // `git log` shows the lines people read; tools read refs/notes/triad.
        ("notes.displayRef".into(), DISPLAY_REF.into(), true),
    ];
    for remote in repo.remotes()?.iter().flatten().flatten() {
        want.push((
            format!("remote.{remote}.fetch"),
            crate::notes::source::fetch_refspec(remote),
            true,
        ));
    }
    Ok(want)
}

/// Applies one setting if it is not in place yet; returns the change made.
pub fn apply(
    repo: &Repository,
    key: &str,
    value: &str,
    multi: bool,
) -> Result<Option<Entry>, git2::Error> {
    let mut cfg = local(repo)?;
    if multi {
        if has_value(&cfg, key, value)? {
            return Ok(None);
        }
        // A pattern that matches no existing value makes libgit2 add a new one.
        cfg.set_multivar(key, &exact(value), value)?;
        return Ok(Some(Entry::Added {
            key: key.into(),
            value: value.into(),
        }));
    }
    let old = match cfg.get_string(key) {
        Ok(v) => Some(v),
        Err(e) if e.code() == git2::ErrorCode::NotFound => None,
        Err(e) => return Err(e),
    };
    if old.as_deref() == Some(value) {
        return Ok(None);
    }
    cfg.set_str(key, value)?;
    Ok(Some(Entry::Set {
        key: key.into(),
        old,
        new: value.into(),
    }))
}

/// Whether `entry` is one an earlier `init` made that this one no longer wants:
/// `notes.displayRef = refs/notes/triad`, which made `git log` print the JSON tools read, and
/// the fetch refspec that made `git fetch` fail ([`legacy_refspec`]).
pub fn superseded(entry: &Entry) -> bool {
    let Entry::Added { key, value } = entry else {
        return false;
    };
    if key == "notes.displayRef" {
        return value == NOTES_REF;
    }
    key.strip_prefix("remote.")
        .and_then(|k| k.strip_suffix(".fetch"))
        .is_some_and(|remote| *value == legacy_refspec(remote))
}

/// The settings earlier versions of `init` made that are still in the local config, as
/// entries to undo, for a config without a record of them (it was deleted, or a version
/// before the record wrote them).
pub fn leftovers(repo: &Repository) -> Result<Vec<Entry>, git2::Error> {
    let cfg = local(repo)?;
    let mut found = Vec::new();
    for remote in repo.remotes()?.iter().flatten().flatten() {
        let key = format!("remote.{remote}.fetch");
        let value = legacy_refspec(remote);
        if has_value(&cfg, &key, &value)? {
            found.push(Entry::Added { key, value });
        }
    }
    Ok(found)
}

/// Undoes one recorded change if the value is still the one init wrote; returns a sentence.
pub fn revert(repo: &Repository, entry: &Entry) -> Result<Option<String>, git2::Error> {
    let mut cfg = local(repo)?;
    match entry {
        Entry::Added { key, value } => {
            if !has_value(&cfg, key, value)? {
                return Ok(None);
            }
            cfg.remove_multivar(key, &exact(value))?;
            Ok(Some(format!(
                "Removed `{key} = {value}` from the local git config."
            )))
        }
        Entry::Set { key, old, new } => {
            if cfg.get_string(key).ok().as_deref() != Some(new.as_str()) {
                return Ok(None); // changed since by someone else: theirs now
            }
            match old {
                Some(old) => {
                    cfg.set_str(key, old)?;
                    Ok(Some(format!(
                        "Restored `{key} = {old}` in the local git config."
                    )))
                }
                None => {
                    cfg.remove(key)?;
                    Ok(Some(format!("Removed `{key}` from the local git config.")))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::regex_escape;

    #[test]
    fn escapes_regex_metacharacters() {
        assert_eq!(
            regex_escape("refs/notes/triad:a.b"),
            "refs/notes/triad:a\\.b"
        );
        assert_eq!(regex_escape("+x*"), "\\+x\\*");
    }
}
