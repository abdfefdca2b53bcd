//! What every subcommand works with: its [`Context`] (where it runs, the repository, the
//! configuration, the environment) and how it speaks (stdout through [`out`], stderr through
//! [`say`], both redacted and made terminal-safe, kept instead when a session captures
//! them).

use std::io::Write;
use std::path::PathBuf;

use super::capture;
use super::error::{CommandError, CommandResult};
use crate::config::{LoadOptions, LoadedConfig};
use crate::exit::ExitCode;

/// Everything a subcommand needs: where it runs, the repository, the configuration.
pub struct Context {
    /// The working directory.
    pub cwd: PathBuf,
    /// The repository containing `cwd`, if any.
    pub repo: Option<git2::Repository>,
    /// The process environment, captured once.
    pub env: Vec<(String, String)>,
    /// `-c` overrides.
    pub overrides: Vec<String>,
    /// `--quiet`: no progress on stderr.
    pub quiet: bool,
    /// `--no-tui`: plain lines even on a terminal.
    pub no_tui: bool,
    /// No person at this command's terminal (a session's tool call): nothing is asked on
    /// it and nothing draws on it.
    pub headless: bool,
}

impl Context {
    /// Discovers the repository around `cwd`.
    pub fn new(cwd: PathBuf, overrides: Vec<String>) -> Self {
        // Inside a git hook (or with --git-dir) GIT_DIR names the repository; honour it
        // like git does, else look upwards from the working directory.
        let repo = if std::env::var_os("GIT_DIR").is_some()
            && cwd == std::env::current_dir().unwrap_or_default()
        {
            git2::Repository::open_from_env().ok()
        } else {
            git2::Repository::discover(&cwd).ok()
        };
        Context {
            cwd,
            repo,
            env: std::env::vars().collect(),
            overrides,
            quiet: false,
            no_tui: false,
            headless: false,
        }
    }

    /// Whether `triad.trusted` is true in this clone's own git config (`$GIT_DIR/config`).
    ///
    /// Only the repository's local file counts: a `triad.trusted` in the global or system
    /// config would trust every clone on the machine, including the next hostile one.
    pub fn trusted(&self) -> bool {
        self.repo
            .as_ref()
            .is_some_and(crate::config::trusted_locally)
    }

    /// Loads the layered configuration.
    pub fn load_config(&self) -> CommandResult<LoadedConfig> {
        let mut git_config = Vec::new();
        if let Some(repo) = &self.repo {
            let cfg = repo.config()?;
            let mut entries = cfg.entries(Some("triad\\..*"))?;
            while let Some(entry) = entries.next() {
                let entry = entry?;
                if let (Ok(name), Ok(value)) = (entry.name(), entry.value()) {
                    git_config.push((name.to_string(), value.to_string()));
                }
            }
        }
        let opts = LoadOptions {
            user_file: None,
            repo_root: self
                .repo
                .as_ref()
                .and_then(|r| r.workdir())
                .map(|p| p.to_path_buf()),
            git_config,
            trusted: self.trusted(),
            env: self.env.clone(),
            overrides: self.overrides.clone(),
        };
        Ok(LoadedConfig::load(&opts)?)
    }

    /// Why there is no repository although git sees one here: libgit2 refused to open it (an
    /// extension it lacks, such as reftable refs, or a broken config). `None` when there is no
    /// repository at all, so callers keep their own "not inside a repository" error.
    pub fn unopenable_repo(&self) -> Option<CommandError> {
        let e = git2::Repository::discover(&self.cwd).err()?;
        if e.code() == git2::ErrorCode::NotFound {
            return None;
        }
        let err = CommandError::failure(format!("cannot open the repository: {}", e.message()));
        Some(match crate::notes::gate::object_format(&self.cwd).is_ok() {
            // git reads it, so the gate's git-CLI fallback does too.
            true => err
                .hint("the pre-push gate still works here (it falls back to the git command line)"),
            false => err,
        })
    }

    /// Looks up an environment variable captured at start.
    pub fn env_var(&self, name: &str) -> Option<String> {
        self.env
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    }

    /// An environment lookup for the model client.
    pub fn env_lookup(&self) -> crate::model::EnvLookup {
        let env = self.env.clone();
        std::sync::Arc::new(move |name: &str| {
            env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
        })
    }
}

/// Writes to stdout, secrets redacted, turning a closed pipe into a quiet exit. Control
/// and bidirectional characters (from model text) are shown, never obeyed, on a terminal and
/// in a pipe alike (the pipe may end in `less -R` or a terminal later); JSON keeps its data
/// exact, as `\u` escapes ([`crate::safe::output`]).
pub fn out(text: &str) -> CommandResult<()> {
    let text = crate::redact::redact(text);
    let text = crate::safe::output(&text);
    if capture::out(&text) {
        return Ok(());
    }
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(text.as_bytes())?;
    stdout.flush()?;
    Ok(())
}

/// Writes one line to stderr, secrets redacted and control characters shown, not obeyed
/// (progress, notes to the user; errors go through [`CommandError::render`]).
pub fn say(line: &str) {
    let text = format!("{}\n", crate::tui::text::clean_text(line));
    let text = crate::redact::redact(&text);
    if capture::said(&text) {
        return;
    }
    // Like eprintln!, but a closed stderr is not worth a panic.
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

/// Says each of `done` on stderr as `triad: …`, unless `quiet`.
pub fn say_each(done: &[String], quiet: bool) {
    if !quiet {
        for d in done {
            say(&format!("triad: {d}"));
        }
    }
}

/// A tokio runtime for the async parts of a command.
pub fn runtime() -> CommandResult<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| CommandError::failure(format!("cannot start the async runtime: {e}")))
}

impl Context {
    /// Whether a live terminal view may draw on the given descriptors (see
    /// [`crate::tui::wanted`]); never with `--quiet`.
    pub fn tui(&self, fds: &[i32]) -> bool {
        if self
            .env
            .iter()
            .any(|(k, v)| k == "NO_COLOR" && !v.is_empty())
        {
            crate::tui::text::no_color();
        }
        !self.quiet && !self.headless && crate::tui::wanted(self.no_tui, &self.env, fds)
    }
}

/// Exit code for a finished command.
pub fn ok() -> CommandResult {
    Ok(ExitCode::Ok)
}
