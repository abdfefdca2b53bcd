//! Merging TOML tables layer over layer while remembering where every value came from.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use toml::{Table, Value};

use super::error::ConfigError;

/// Where a configuration value came from, lowest precedence first.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Layer {
    /// Compiled into the binary from `config/*.toml`.
    Default,
    /// The user's own file (`~/.config/git-triad/config.toml`).
    User(PathBuf),
    /// The repository's committed `.triad/config.toml`.
    Repo(PathBuf),
    /// `git config triad.<key>` (local, global or system git config; never cloned).
    GitConfig(String),
    /// An environment variable `GIT_TRIAD_<KEY>`.
    Env(String),
    /// `-c key=value` on the command line.
    CommandLine,
}

impl fmt::Display for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Layer::Default => f.write_str("default"),
            Layer::User(p) => write!(f, "user {}", p.display()),
            Layer::Repo(p) => write!(f, "repo {}", p.display()),
            Layer::GitConfig(k) => write!(f, "git config {k}"),
            Layer::Env(v) => write!(f, "env {v}"),
            Layer::CommandLine => f.write_str("command line -c"),
        }
    }
}

/// The dotted path of every leaf value, mapped to the layer that set it last.
pub type Origins = BTreeMap<String, Layer>;

/// Splits a dotted key (`models."gpt-4.1".price_in`) into its segments.
pub fn split_key(key: &str) -> Result<Vec<String>, ConfigError> {
    let mut parts = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut was_quoted = false;
    for c in key.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                was_quoted = true;
            }
            '.' if !quoted => {
                if cur.is_empty() && !was_quoted {
                    return Err(ConfigError::BadKey(key.to_string()));
                }
                parts.push(std::mem::take(&mut cur));
                was_quoted = false;
            }
            _ => cur.push(c),
        }
    }
    if quoted || (cur.is_empty() && !was_quoted) {
        return Err(ConfigError::BadKey(key.to_string()));
    }
    parts.push(cur);
    Ok(parts)
}

/// Renders segments back into a dotted key, quoting segments that need it.
pub fn join_key(parts: &[String]) -> String {
    parts
        .iter()
        .map(|p| {
            let bare = !p.is_empty()
                && p.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            if bare {
                p.clone()
            } else {
                format!("\"{p}\"")
            }
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// Parses a value given as text (`-c`, env, git config): TOML if it parses, else a string.
pub fn parse_value(text: &str) -> Value {
    let probe = format!("v = {text}");
    match probe.parse::<Table>() {
        Ok(mut t) => t
            .remove("v")
            .unwrap_or_else(|| Value::String(text.to_string())),
        Err(_) => Value::String(text.to_string()),
    }
}

/// Builds a one-key table `{a = {b = {c = value}}}` from a dotted key.
pub fn table_from_key(key: &str, value: Value) -> Result<Table, ConfigError> {
    let parts = split_key(key)?;
    let mut value = value;
    for part in parts.iter().skip(1).rev() {
        let mut t = Table::new();
        t.insert(part.clone(), value);
        value = Value::Table(t);
    }
    let mut root = Table::new();
    root.insert(parts[0].clone(), value);
    Ok(root)
}

/// Merges `overlay` into `base`: tables merge key by key, every other value replaces.
pub fn merge(base: &mut Table, overlay: Table, layer: &Layer, origins: &mut Origins) {
    merge_at(base, overlay, layer, origins, &mut Vec::new());
}

fn merge_at(
    base: &mut Table,
    overlay: Table,
    layer: &Layer,
    origins: &mut Origins,
    path: &mut Vec<String>,
) {
    for (key, value) in overlay {
        path.push(key.clone());
        match (base.get_mut(&key), value) {
            (Some(Value::Table(existing)), Value::Table(incoming)) => {
                merge_at(existing, incoming, layer, origins, path);
            }
            (_, value) => {
                // A replaced subtree loses the origins of its old leaves.
                let prefix = join_key(path);
                origins.retain(|k, _| !(k == &prefix || k.starts_with(&format!("{prefix}."))));
                record_origins(&value, layer, origins, path);
                base.insert(key, value);
            }
        }
        path.pop();
    }
}

fn record_origins(value: &Value, layer: &Layer, origins: &mut Origins, path: &mut Vec<String>) {
    match value {
        Value::Table(t) => {
            for (k, v) in t {
                path.push(k.clone());
                record_origins(v, layer, origins, path);
                path.pop();
            }
        }
        _ => {
            origins.insert(join_key(path), layer.clone());
        }
    }
}

/// Every leaf of a table as (dotted key, value), in key order.
pub fn leaves(table: &Table) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    collect_leaves(table, &mut Vec::new(), &mut out);
    out
}

fn collect_leaves(table: &Table, path: &mut Vec<String>, out: &mut Vec<(String, Value)>) {
    for (k, v) in table {
        path.push(k.clone());
        match v {
            Value::Table(t) => collect_leaves(t, path, out),
            other => out.push((join_key(path), other.clone())),
        }
        path.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_split_and_join_with_quotes() {
        assert_eq!(
            split_key("models.\"gpt-4.1\".price_in").unwrap(),
            vec!["models", "gpt-4.1", "price_in"]
        );
        assert_eq!(
            join_key(&["models".into(), "gpt-4.1".into()]),
            "models.\"gpt-4.1\""
        );
        assert!(split_key("a..b").is_err());
        assert!(split_key("a.\"b").is_err());
    }

    #[test]
    fn values_parse_as_toml_or_string() {
        assert_eq!(parse_value("3"), Value::Integer(3));
        assert_eq!(parse_value("true"), Value::Boolean(true));
        assert_eq!(parse_value("full"), Value::String("full".into()));
        assert_eq!(
            parse_value("[\"a\", \"b\"]"),
            Value::Array(vec!["a".into(), "b".into()])
        );
    }

    #[test]
    fn merge_tracks_the_last_layer_per_leaf() {
        let mut base: Table = "[a]\nx = 1\ny = 2".parse().unwrap();
        let mut origins = Origins::new();
        record_origins(
            &Value::Table(base.clone()),
            &Layer::Default,
            &mut origins,
            &mut Vec::new(),
        );
        merge(
            &mut base,
            "[a]\ny = 3".parse().unwrap(),
            &Layer::CommandLine,
            &mut origins,
        );
        assert_eq!(base["a"]["y"].as_integer(), Some(3));
        assert_eq!(origins["a.x"], Layer::Default);
        assert_eq!(origins["a.y"], Layer::CommandLine);
    }
}
