//! The built-in deny-list of private file names, and matching configured patterns.

use crate::glob;

/// File names (the last path segment, compared without case) that are always private.
/// `*` stands for any run of characters.
pub const BUILTIN_NAMES: &[&str] = &[
    // Environment files: `.env`, `.env.local`, `.env.production`, ...
    ".env",
    ".env.*",
    // Keys, certificates and key stores.
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.p8",
    "*.jks",
    "*.keystore",
    "*.ppk",
    "*.kdbx",
    // Credentials of package managers, git, databases and web servers.
    ".npmrc",
    ".yarnrc.yml",
    ".netrc",
    "_netrc",
    ".pypirc",
    ".git-credentials",
    ".pgpass",
    ".my.cnf",
    ".htpasswd",
    "credentials",
    "credentials.json",
    // Infrastructure state and variables, which hold secrets in clear.
    "*.tfstate",
    "*.tfvars",
];

/// Paths (their last segments, compared without case) that are always private.
pub const BUILTIN_PATHS: &[&str] = &[".aws/credentials", ".docker/config.json"];

/// Whether a file name is an SSH private key's: `id_rsa`, `id_ed25519`, `id_ecdsa_sk`, any
/// `id_<word>` without a dot (so `id_rsa.pub` and `id_generator.py` are not).
fn ssh_private_key(name: &str) -> bool {
    name.strip_prefix("id_")
        .is_some_and(|rest| !rest.is_empty() && !rest.contains('.'))
}

/// `*` (any run of characters) against a whole name.
fn name_match(pattern: &[u8], name: &[u8]) -> bool {
    match pattern.split_first() {
        None => name.is_empty(),
        Some((b'*', rest)) => (0..=name.len()).any(|i| name_match(rest, &name[i..])),
        Some((p, rest)) => name.first() == Some(p) && name_match(rest, &name[1..]),
    }
}

/// The built-in pattern `path` matches, if any.
pub fn builtin(path: &str) -> Option<&'static str> {
    let lower = path.to_lowercase();
    let name = lower.rsplit('/').next().unwrap_or(&lower);
    if ssh_private_key(name) {
        return Some("id_*");
    }
    if let Some(p) = BUILTIN_NAMES
        .iter()
        .find(|p| name_match(p.as_bytes(), name.as_bytes()))
    {
        return Some(p);
    }
    BUILTIN_PATHS
        .iter()
        .find(|p| lower == **p || lower.ends_with(&format!("/{p}")))
        .copied()
}

/// The configured pattern `path` matches, if any (TaskSpec scope globs: `*`, `**`, `?`; a
/// pattern without `/` matches a name at any depth).
pub fn configured<'p>(patterns: &'p [String], path: &str) -> Option<&'p str> {
    patterns
        .iter()
        .find(|p| glob::matches(p, path))
        .map(String::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_list_finds_private_files_at_any_depth() {
        for (path, pattern) in [
            (".env", ".env"),
            ("app/.env", ".env"),
            (".ENV", ".env"),
            (".env.local", ".env.*"),
            ("deploy/.env.production", ".env.*"),
            ("certs/server.pem", "*.pem"),
            ("tls/server.KEY", "*.key"),
            ("store.p12", "*.p12"),
            ("win.pfx", "*.pfx"),
            ("id_rsa", "id_*"),
            ("home/.ssh/id_ed25519", "id_*"),
            ("id_ecdsa_sk", "id_*"),
            ("id_dsa", "id_*"),
            (".npmrc", ".npmrc"),
            ("web/.npmrc", ".npmrc"),
            (".netrc", ".netrc"),
            (".pypirc", ".pypirc"),
            (".git-credentials", ".git-credentials"),
            ("config/credentials", "credentials"),
            ("home/.aws/credentials", "credentials"),
            ("gcp/credentials.json", "credentials.json"),
            ("home/.docker/config.json", ".docker/config.json"),
            (".docker/config.json", ".docker/config.json"),
            ("infra/prod.tfstate", "*.tfstate"),
        ] {
            assert_eq!(builtin(path), Some(pattern), "{path}");
        }
    }

    #[test]
    fn look_alikes_are_ordinary_files() {
        for path in [
            "id_rsa.pub",
            "keys/id_ed25519.pub",
            "src/id_generator.py",
            "id_",
            "environment.py",
            "src/env.rs",
            ".envrc",
            "docs/credentials.md",
            "src/credentials/mod.rs",
            "config.json",
            "app/docker/config.json",
            "keyboard.rs",
            "monkey.py",
            "README.md",
        ] {
            assert_eq!(builtin(path), None, "{path}");
        }
    }

    #[test]
    fn configured_patterns_are_globs() {
        let patterns = vec!["secrets/**".to_string(), "*.sqlite".to_string()];
        assert_eq!(configured(&patterns, "secrets/a/b.txt"), Some("secrets/**"));
        assert_eq!(configured(&patterns, "data/app.sqlite"), Some("*.sqlite"));
        assert_eq!(configured(&patterns, "src/secrets.rs"), None);
    }
}
