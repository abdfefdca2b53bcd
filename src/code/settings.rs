//! Configuration files read as settings: INI files (`setup.cfg`, `tox.ini`, `pytest.ini`)
//! entry by entry with their lines, and TOML tables by path.
//!
//! The dependency readers want the values; the test-weakening checks want the values and
//! the line each one is on, to point at it.

/// One `key = value` of an INI file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct IniEntry {
    /// The section it is in (`tool:pytest` for `[tool:pytest]`), empty before the first.
    pub(crate) section: String,
    /// The key, trimmed.
    pub(crate) key: String,
    /// The value's lines: the text after the delimiter, then each indented continuation
    /// line, trimmed, empty ones and comments left out.
    pub(crate) lines: Vec<String>,
    /// The 1-based line of the key.
    pub(crate) line: u32,
}

/// The entries of an INI file as Python's `configparser` and pytest's `iniconfig` read
/// them: `[section]` headers, `key = value` or `key: value`, indented continuation lines,
/// full-line `#` and `;` comments.
pub(crate) fn ini(text: &str) -> Vec<IniEntry> {
    let mut out: Vec<IniEntry> = Vec::new();
    let mut section = String::new();
    for (n, raw) in text.lines().enumerate() {
        let line = raw.trim_end();
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with(';') {
            continue;
        }
        if line.starts_with([' ', '\t']) {
            if let Some(last) = out.last_mut().filter(|e| e.section == section) {
                last.lines.push(trimmed.to_string());
            }
            continue;
        }
        if let Some(s) = trimmed.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
            section = s.trim().to_string();
            continue;
        }
        if let Some((k, v)) = trimmed.split_once(['=', ':']) {
            let v = v.trim();
            out.push(IniEntry {
                section: section.clone(),
                key: k.trim().to_string(),
                lines: if v.is_empty() {
                    Vec::new()
                } else {
                    vec![v.to_string()]
                },
                line: u32::try_from(n + 1).unwrap_or(u32::MAX),
            });
        }
    }
    out
}

/// The value at a dotted path of tables (`["tool", "pytest", "ini_options"]`).
pub(crate) fn toml_at<'v>(v: &'v toml::Value, path: &[&str]) -> Option<&'v toml::Value> {
    path.iter().try_fold(v, |cur, key| cur.get(key))
}

/// The 1-based line of `key` in the table `table` of a TOML text (`[a.b]` or the `n`th
/// `[[a.b]]` for `Some(n)`), or of the table's header when the key is not written there;
/// `None` when the table is not written either. A line scan, not a parse: the caller has
/// already parsed the file and only needs to point at the line.
pub(crate) fn toml_line(text: &str, table: &str, nth: Option<usize>, key: &str) -> Option<u32> {
    let mut header: Option<u32> = None;
    let mut inside = false;
    let mut seen = 0usize;
    for (n, raw) in text.lines().enumerate() {
        let line = u32::try_from(n + 1).unwrap_or(u32::MAX);
        let t = raw.trim();
        if t.starts_with('[') {
            if header.is_some() && inside {
                break;
            }
            let array = t.starts_with("[[");
            let name = t.trim_start_matches('[');
            let name = name.split(']').next().unwrap_or("").trim();
            let name: String = name.chars().filter(|c| !c.is_whitespace()).collect();
            inside = name == table
                && match nth {
                    Some(i) => {
                        let hit = array && seen == i;
                        if array && name == table {
                            seen += 1;
                        }
                        hit
                    }
                    None => !array,
                };
            if inside {
                header = Some(line);
            }
            continue;
        }
        if inside {
            let k = t.split('=').next().unwrap_or("").trim().trim_matches('"');
            if t.contains('=') && k == key {
                return Some(line);
            }
        }
    }
    header
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ini_entries_have_their_lines_and_continuations() {
        let text = "# top\n[tool:pytest]\naddopts = -q\n    -k 'not slow'\n; note\ntestpaths: tests\n[other]\nx=1\n";
        let e = ini(text);
        assert_eq!(e.len(), 3);
        assert_eq!(
            (e[0].section.as_str(), e[0].key.as_str(), e[0].line),
            ("tool:pytest", "addopts", 3)
        );
        assert_eq!(e[0].lines, ["-q", "-k 'not slow'"]);
        assert_eq!((e[1].key.as_str(), e[1].line), ("testpaths", 6));
        assert_eq!(e[2].section, "other");
    }

    #[test]
    fn toml_lines_point_at_keys_and_tables() {
        let text = "[package]\nname = \"a\"\n\n[[test]]\nname = \"x\"\n\n[[test]]\nname = \"y\"\nharness = false\n";
        assert_eq!(toml_line(text, "package", None, "name"), Some(2));
        assert_eq!(toml_line(text, "test", Some(1), "harness"), Some(9));
        assert_eq!(toml_line(text, "test", Some(0), "harness"), Some(4));
        assert_eq!(toml_line(text, "lib", None, "test"), None);
    }
}
