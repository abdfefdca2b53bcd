//! The environment a boxed command gets: enough for a build or a test run to find its
//! programs, never a key or a token of the user's, and a home and temporary directory of
//! its own.

use std::ffi::OsString;
use std::path::Path;

/// Environment variables a boxed command gets, when they are set: enough for a build or a
/// test run to find programs (rustup's toolchain included), a locale and a terminal.
/// (`LC_*` are passed too.) `HOME` and `TMPDIR` are the box's own. Whatever else the user
/// needs is written into the command itself.
pub const PASSED_ENV: &[&str] = &[
    "PATH",
    "LANG",
    "TERM",
    "USER",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "CARGO_HOME",
    "PYENV_ROOT",
];

/// The variables of `vars` a command that runs code a model wrote may see: the
/// [`PASSED_ENV`] names and `LC_*`, and never a name that looks like it holds a secret
/// (`*KEY*`, `*TOKEN*`, `*SECRET*`, `*PASSWORD*`, `*CREDENTIAL*`), whatever the list says.
pub fn command_env(
    vars: impl IntoIterator<Item = (OsString, OsString)>,
) -> Vec<(OsString, OsString)> {
    vars.into_iter()
        .filter(|(name, _)| {
            let Some(name) = name.to_str() else {
                return false;
            };
            let upper = name.to_ascii_uppercase();
            let secret = ["KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL"]
                .iter()
                .any(|s| upper.contains(s));
            !secret && (PASSED_ENV.contains(&name) || name.starts_with("LC_"))
        })
        .collect()
}

/// The whole environment of a boxed command: [`command_env`] of git triad's own, the
/// toolchain homes a changed `HOME` would hide (`CARGO_HOME`, `RUSTUP_HOME`, `PYENV_ROOT`
/// where they exist under the real home), the box's own `home` and `tmp`, then `extra`.
pub(super) fn boxed(home: &Path, tmp: &Path, extra: &[(String, String)]) -> Vec<(String, String)> {
    let mut vars: Vec<(String, String)> = command_env(std::env::vars_os())
        .into_iter()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect();
    if let Some(real_home) = std::env::var_os("HOME").map(std::path::PathBuf::from) {
        for (var, dir) in [
            ("CARGO_HOME", ".cargo"),
            ("RUSTUP_HOME", ".rustup"),
            ("PYENV_ROOT", ".pyenv"),
        ] {
            let path = real_home.join(dir);
            if !vars.iter().any(|(k, _)| k == var) && path.is_dir() {
                vars.push((var.into(), path.display().to_string()));
            }
        }
    }
    let own = [
        ("HOME", home),
        ("TMPDIR", tmp),
        ("XDG_CACHE_HOME", &home.join(".cache")),
    ];
    for (k, v) in own {
        vars.push((k.into(), v.display().to_string()));
    }
    for (k, v) in extra {
        vars.retain(|(name, _)| name != k);
        vars.push((k.clone(), v.clone()));
    }
    vars
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_never_reach_the_command_environment() {
        let vars = [
            ("PATH", "/bin"),
            ("HOME", "/h"),
            ("LC_ALL", "C"),
            ("RUSTUP_HOME", "/r"),
            ("OPENAI_API_KEY", "sk-1"),
            ("LC_API_KEY", "sk-2"),
            ("GITHUB_TOKEN", "t"),
            ("AWS_SECRET_ACCESS_KEY", "s"),
            ("PGPASSWORD", "p"),
            ("GIT_DIR", "/elsewhere"),
            ("SSH_AUTH_SOCK", "/tmp/agent"),
        ]
        .map(|(k, v)| (OsString::from(k), OsString::from(v)));
        let kept: Vec<String> = command_env(vars)
            .into_iter()
            .map(|(k, _)| k.into_string().unwrap())
            .collect();
        assert_eq!(kept, ["PATH", "LC_ALL", "RUSTUP_HOME"]);
    }
}
