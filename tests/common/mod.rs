//! Shared test harness: a hermetic environment, throwaway git repos, the real binary.
//!
//! Every command starts from an empty environment and gets its own HOME and config
//! directory, `GIT_CONFIG_GLOBAL=/dev/null`, pinned author/committer dates, time zone and
//! locale, and only the variables the test sets, so nothing on the machine (or in the
//! developer's own config) leaks in.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use tempfile::TempDir;

pub mod normalize;
pub mod pty;

pub use normalize::Normalizer;

/// Path of the `git-triad` binary under test.
pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_git-triad"))
}

/// Runs `cmd` to its end with `stdin` on its standard input.
fn with_stdin(cmd: &mut Command, stdin: &str) -> Run {
    use std::io::Write;
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the command");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    Run::from(child.wait_with_output().unwrap())
}

/// A hermetic environment: a temp HOME, a user config path, extra env vars.
pub struct TestEnv {
    /// Owns the temp directory (deleted on drop).
    pub tmp: TempDir,
    /// Extra environment variables for every command.
    pub vars: BTreeMap<String, String>,
}

/// The result of running a command.
#[derive(Debug)]
pub struct Run {
    /// Exit status code (-1 if killed by a signal).
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl Run {
    fn from(o: Output) -> Run {
        Run {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }

    /// Panics with both streams unless the exit code is `code`.
    #[track_caller]
    pub fn expect_code(&self, code: i32) -> &Run {
        assert_eq!(
            self.code, code,
            "expected exit {code}, got {}\n--- stdout\n{}\n--- stderr\n{}",
            self.code, self.stdout, self.stderr
        );
        self
    }

    /// Panics unless the command succeeded.
    #[track_caller]
    pub fn ok(&self) -> &Run {
        self.expect_code(0)
    }

    /// stdout and stderr together, for "never appears anywhere" checks.
    pub fn all(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }

    /// What a user saw, as one text for a snapshot: the command line, the exit status,
    /// stdout and stderr (each section ends with a newline, so a missing one is visible as
    /// `(no newline at end)`), normalized by `norm`.
    pub fn transcript(&self, command_line: &str, norm: &Normalizer) -> String {
        fn section(text: &str) -> String {
            match text {
                "" => "(empty)\n".to_string(),
                t if t.ends_with('\n') => t.to_string(),
                t => format!("{t}\n(no newline at end)\n"),
            }
        }
        norm.apply(&format!(
            "$ {command_line}\nexit: {}\n--- stdout\n{}--- stderr\n{}",
            self.code,
            section(&self.stdout),
            section(&self.stderr)
        ))
    }
}

impl Default for TestEnv {
    fn default() -> Self {
        Self::new()
    }
}

impl TestEnv {
    /// A fresh environment.
    pub fn new() -> TestEnv {
        let tmp = tempfile::Builder::new()
            .prefix("triad-test-")
            .tempdir()
            .expect("tempdir");
        std::fs::create_dir_all(tmp.path().join("home/.config/git-triad")).unwrap();
        TestEnv {
            tmp,
            vars: BTreeMap::new(),
        }
    }

    /// The temp root.
    pub fn root(&self) -> &Path {
        self.tmp.path()
    }

    /// A normalizer for this environment's output as it is now: its temp root becomes
    /// `[ROOT]`, and it knows the object ids of every repository directly under the root
    /// (make it after the commands whose output it normalizes).
    pub fn normalizer(&self) -> Normalizer {
        let mut ids = Vec::new();
        for entry in std::fs::read_dir(self.root()).unwrap().flatten() {
            let dir = entry.path();
            let is_repo = dir.join(".git").exists()
                || (dir.join("HEAD").is_file() && dir.join("objects").is_dir());
            if !is_repo {
                continue;
            }
            let listed = self.git(
                &dir,
                &[
                    "cat-file",
                    "--batch-all-objects",
                    "--batch-check=%(objectname)",
                ],
            );
            ids.extend(listed.ok().stdout.lines().map(str::to_string));
        }
        Normalizer::new()
            .path(self.root(), "[ROOT]")
            .object_ids(ids)
    }

    /// The HOME directory.
    pub fn home(&self) -> PathBuf {
        self.root().join("home")
    }

    /// The user config file (`GIT_TRIAD_CONFIG`).
    pub fn user_config(&self) -> PathBuf {
        self.home().join(".config/git-triad/config.toml")
    }

    /// Writes the user config file.
    pub fn write_user_config(&self, text: &str) {
        std::fs::write(self.user_config(), text).unwrap();
    }

    /// Sets an environment variable for later commands.
    pub fn set(&mut self, k: &str, v: &str) -> &mut Self {
        self.vars.insert(k.to_string(), v.to_string());
        self
    }

    /// A command with the hermetic environment applied.
    ///
    /// The child starts from an empty environment (`env_clear`), so nothing of the machine's
    /// or the developer's own (`GIT_*`, `*_API_KEY`, `RUST_LOG`, `XDG_*`, proxies, `COLUMNS`,
    /// `EDITOR`, `CI`, ...) reaches the binary. It gets exactly:
    /// - `PATH`, inherited: to find `git` and `sh` (verify commands, hooks, editors);
    /// - `HOME` and `GIT_TRIAD_CONFIG`: the test's own home and user config file;
    /// - `GIT_CONFIG_GLOBAL=/dev/null`, `GIT_CONFIG_NOSYSTEM=1`: no git config but the repo's;
    /// - `GIT_AUTHOR_*` / `GIT_COMMITTER_*` names, emails and dates: stable commit ids;
    /// - `TZ=UTC`, `LANG=C`, `LC_ALL=C`: stable dates and messages (git's included);
    /// - `NO_COLOR=1`: tracing-subscriber writes ANSI colours to a pipe unless told not to;
    /// - whatever the test itself set with [`TestEnv::set`] (keys, `GIT_TRIAD_*`, `EDITOR`,
    ///   `GIT_TRIAD_LOCAL_CACHE` for the end-to-end test's real models, ...).
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>, cwd: &Path) -> Command {
        let mut cmd = Command::new(program);
        cmd.current_dir(cwd).env_clear();
        if let Some(path) = std::env::var_os("PATH") {
            cmd.env("PATH", path);
        }
        cmd.env("HOME", self.home())
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_TRIAD_CONFIG", self.user_config())
            .env("GIT_AUTHOR_NAME", "Test Author")
            .env("GIT_AUTHOR_EMAIL", "author@example.com")
            .env("GIT_COMMITTER_NAME", "Test Committer")
            .env("GIT_COMMITTER_EMAIL", "committer@example.com")
            .env("GIT_AUTHOR_DATE", "2026-01-02T03:04:05Z")
            .env("GIT_COMMITTER_DATE", "2026-01-02T03:04:05Z")
            .env("TZ", "UTC")
            .env("LANG", "C")
            .env("LC_ALL", "C")
            .env("NO_COLOR", "1")
            .stdin(Stdio::null());
        // The machine's Rust toolchain, for what the binary runs (the Rust bench tasks'
        // hidden tests): rustup finds it through its home, not the test's HOME.
        let real_home = std::env::var_os("HOME").map(PathBuf::from);
        for (var, default) in [("RUSTUP_HOME", ".rustup"), ("CARGO_HOME", ".cargo")] {
            let value = std::env::var_os(var)
                .or_else(|| real_home.as_ref().map(|h| h.join(default).into_os_string()));
            if let Some(v) = value.filter(|v| Path::new(v).is_dir()) {
                cmd.env(var, v);
            }
        }
        if let Some(t) = std::env::var_os("RUSTUP_TOOLCHAIN") {
            cmd.env("RUSTUP_TOOLCHAIN", t);
        }
        for (k, v) in &self.vars {
            cmd.env(k, v);
        }
        cmd
    }

    /// Runs `git-triad` with arguments in `cwd`.
    pub fn triad(&self, cwd: &Path, args: &[&str]) -> Run {
        Run::from(
            self.command(bin(), cwd)
                .args(args)
                .output()
                .expect("run git-triad"),
        )
    }

    /// Runs `git-triad` with stdin.
    pub fn triad_stdin(&self, cwd: &Path, args: &[&str], stdin: &str) -> Run {
        with_stdin(self.command(bin(), cwd).args(args), stdin)
    }

    /// Runs the real `git` CLI with arguments in `cwd`, `stdin` on its standard input.
    pub fn git_stdin(&self, cwd: &Path, args: &[&str], stdin: &str) -> Run {
        with_stdin(self.command("git", cwd).args(args), stdin)
    }

    /// Runs the real `git` CLI with arguments in `cwd`; git-triad is on its PATH so
    /// `git triad ...` works.
    pub fn git(&self, cwd: &Path, args: &[&str]) -> Run {
        let bin_dir = bin().parent().unwrap().to_path_buf();
        let path = format!(
            "{}:{}",
            bin_dir.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        Run::from(
            self.command("git", cwd)
                .env("PATH", path)
                .args(args)
                .output()
                .expect("run git"),
        )
    }

    /// Creates a repository with `files` committed on `main`; returns its path.
    pub fn repo(&self, name: &str, files: &[(&str, &str)]) -> PathBuf {
        let dir = self.root().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        self.git(&dir, &["init", "-q", "-b", "main"]).ok();
        self.write_files(&dir, files);
        if !files.is_empty() {
            self.commit_all(&dir, "initial commit");
        }
        dir
    }

    /// Writes files (creating parent directories).
    pub fn write_files(&self, dir: &Path, files: &[(&str, &str)]) {
        for (path, text) in files {
            let p = dir.join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
    }

    /// `git add -A && git commit -m msg`.
    pub fn commit_all(&self, dir: &Path, msg: &str) {
        self.git(dir, &["add", "-A"]).ok();
        self.git(dir, &["commit", "-q", "-m", msg]).ok();
    }

    /// `git rev-parse <rev>`.
    pub fn rev_parse(&self, dir: &Path, rev: &str) -> String {
        self.git(dir, &["rev-parse", rev])
            .ok()
            .stdout
            .trim()
            .to_string()
    }
}

/// A user config registering providers and models served by a fake server at `base`.
///
/// Providers: `fake-openai` (`FAKE_OPENAI_KEY`), `fake-anthropic` (`FAKE_ANTHROPIC_KEY`),
/// `fake-gemini` (`FAKE_GEMINI_KEY`). Models: `model-a`, `model-b`, `model-c` on
/// fake-openai, `claude-fake` on fake-anthropic, `gemini-fake` on fake-gemini; all at
/// $1/M input and $2/M output. Roles use model-a (stages) and model-b (arbiter).
pub fn fake_user_config(base: &str) -> String {
    format!(
        r#"
[providers.fake-openai]
protocol = "openai"
base_url = "{base}/v1"
api_key_env = "FAKE_OPENAI_KEY"

[providers.fake-anthropic]
protocol = "anthropic"
base_url = "{base}/v1"
api_key_env = "FAKE_ANTHROPIC_KEY"

[providers.fake-gemini]
protocol = "gemini"
base_url = "{base}/v1beta"
api_key_env = "FAKE_GEMINI_KEY"

[models.model-a]
provider = "fake-openai"
context_window = 32000
max_output_tokens = 4000
price_in = 1.0
price_out = 2.0

[models.model-b]
provider = "fake-openai"
context_window = 32000
max_output_tokens = 4000
price_in = 1.0
price_out = 2.0

[models.model-c]
provider = "fake-openai"
context_window = 32000
max_output_tokens = 4000
price_in = 1.0
price_out = 2.0

[models.claude-fake]
provider = "fake-anthropic"
context_window = 32000
max_output_tokens = 4000
price_in = 1.0
price_out = 2.0

[models.gemini-fake]
provider = "fake-gemini"
context_window = 32000
max_output_tokens = 4000
price_in = 1.0
price_out = 2.0

[roles.architect]
models = ["model-a"]
[roles.implementer]
models = ["model-a"]
[roles.refactorer]
models = ["model-a"]
[roles.verifier]
models = ["model-a"]
[roles.arbiter]
models = ["model-b"]

[transport]
timeout_secs = 10
max_retries = 2
backoff_base_ms = 10
backoff_max_ms = 50
retry_after_max_secs = 5
"#
    )
}

/// Everything of the user's that no git triad command may change: every file outside
/// `.git/` (tracked, untracked, ignored; a symbolic link as its target), the index, HEAD (the
/// file and the commit) and the stash.
pub fn user_state(env: &TestEnv, repo: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![repo.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let rel = path
                .strip_prefix(repo)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if rel == ".git" {
                continue;
            }
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_symlink() {
                let target = std::fs::read_link(&path).unwrap();
                out.insert(rel, format!("-> {}", target.display()).into_bytes());
            } else {
                out.insert(rel, std::fs::read(&path).unwrap());
            }
        }
    }
    for file in [".git/index", ".git/HEAD"] {
        out.insert(
            file.into(),
            std::fs::read(repo.join(file)).unwrap_or_default(),
        );
    }
    for (key, rev) in [("HEAD-oid", "HEAD"), ("stash", "refs/stash")] {
        let r = env.git(repo, &["rev-parse", "-q", "--verify", rev]);
        out.insert(key.into(), r.stdout.into_bytes());
    }
    out
}

/// Copies the directory `from` into `to` (created), files and folders alike.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

/// The pids of processes whose command line is `sleep <seconds>`: what a test's job left
/// running (each test picks its own number of seconds, so tests never count each other's).
pub fn sleepers(seconds: &str) -> Vec<u32> {
    let want = format!("sleep\0{seconds}\0");
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c == want.as_bytes())
        })
        .collect()
}
