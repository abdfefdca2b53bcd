//! How probes run: the interpreter, the timeouts, the build cache and the box, for one
//! repository. Below the runners and the sandbox they share, which all read it.

use std::path::PathBuf;
use std::time::Duration;

use git2::Repository;

/// How probes run.
#[derive(Debug, Clone)]
pub struct ProbeSettings {
    /// The repository's verify command: Rust probes run only where it is
    /// `cargo test`-based (the project builds with cargo and has tests to stand beside).
    pub verify_command: Option<String>,
    /// How long one Python probe may take before it is cut off.
    pub timeout: Duration,
    /// How long a Rust probe run (which compiles the crate) may take.
    pub compile_timeout: Duration,
    /// How long one run of the repository's tests may take (the verify command's timeout,
    /// when it is known; else [`Self::compile_timeout`]): a suite that hangs costs no more
    /// here than in the run.
    pub test_timeout: Option<Duration>,
    /// Where Rust probes keep their build between runs (the repository's build cache,
    /// outside it: [`crate::sandbox::build_cache`]), so only the first compiles the whole
    /// crate; `None` builds in the scratch copy.
    pub cargo_target: Option<PathBuf>,
    /// The Python interpreter (a virtualenv's of the work tree when it has one).
    pub python: String,
    /// The box the probes run in.
    pub policy: crate::sandbox::Policy,
}

impl ProbeSettings {
    /// Settings for a repository: its virtualenv's interpreter (when it has one), its build
    /// cache, its verify command, and the box `policy`.
    pub fn for_repo(
        repo: &Repository,
        verify_command: Option<String>,
        policy: crate::sandbox::Policy,
    ) -> ProbeSettings {
        let python = repo
            .workdir()
            .and_then(|w| {
                [".venv", "venv"]
                    .iter()
                    .map(|v| w.join(v).join("bin").join("python3"))
                    .find(|p| p.is_file())
            })
            .map_or_else(|| "python3".to_string(), |p| p.display().to_string());
        ProbeSettings {
            verify_command,
            timeout: Duration::from_secs(20),
            compile_timeout: Duration::from_secs(300),
            test_timeout: None,
            cargo_target: Some(crate::sandbox::build_cache(repo.commondir()).join("target")),
            python,
            policy,
        }
    }

    /// These settings with the repository's tests cut off after `timeout`.
    pub fn with_test_timeout(mut self, timeout: Duration) -> ProbeSettings {
        self.test_timeout = Some(timeout);
        self
    }

    /// How long one run of the repository's tests may take.
    pub fn tests_timeout(&self) -> Duration {
        self.test_timeout.unwrap_or(self.compile_timeout)
    }
}
