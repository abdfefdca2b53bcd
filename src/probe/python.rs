//! Python probes: statements with `assert`, run by the embedded runner
//! (`config/probe_runner.py`), which evaluates each assertion part by part so a failing one
//! reports its call, the expected and the actual value.

use super::sandbox::{quote, Sandbox};
use super::{ProbeResult, ProbeSettings};
use crate::code::test_path;

/// The runner, compiled in.
const RUNNER: &str = include_str!("../../config/probe_runner.py");

/// Runs one Python probe about `path` in `sb`.
pub(super) fn run(sb: &Sandbox, settings: &ProbeSettings, path: &str, code: &str) -> ProbeResult {
    let scratch = sb.scratch();
    let n = std::fs::read_dir(&scratch).map_or(0, |d| d.count());
    let probe = scratch.join(format!("probe_{n}.py"));
    let runner = scratch.join("probe_runner.py");
    let result = scratch.join(format!("result_{n}.json"));
    let written = std::fs::write(&runner, RUNNER).and_then(|()| std::fs::write(&probe, code));
    if let Err(e) = written {
        return ProbeResult::broken(format!("the probe could not be written: {e}"));
    }
    let root = sb.root();
    let mut paths = vec![root.clone()];
    if root.join("src").is_dir() && !root.join("src").join("__init__.py").is_file() {
        paths.push(root.join("src"));
    }
    let pythonpath = paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(":");
    let module = module_of(path).filter(|_| !test_path(path));
    let command = format!(
        "PYTHONPATH={} PYTHONDONTWRITEBYTECODE=1 PYTHONIOENCODING=utf-8 {} {} {} {} {}",
        quote(&pythonpath),
        quote(&settings.python),
        quote(&runner.display().to_string()),
        quote(&probe.display().to_string()),
        quote(&result.display().to_string()),
        module.as_deref().map(quote).unwrap_or_default(),
    );
    let outcome = sb.command(settings, &root, &command, settings.timeout, &[]);
    match std::fs::read_to_string(&result) {
        Ok(json) => serde_json::from_str(&json).unwrap_or_else(|e| {
            ProbeResult::broken(format!("the probe's result does not read: {e}"))
        }),
        Err(_) if outcome.timed_out => ProbeResult::broken(format!(
            "cut off: the probe did not finish in {} s",
            settings.timeout.as_secs()
        )),
        Err(_) => ProbeResult::broken(format!(
            "the probe ended without a result ({}): {}",
            outcome
                .exit_code
                .map_or("killed".to_string(), |c| format!("exit {c}")),
            crate::bounded::clip(outcome.tail.trim(), 300)
        )),
    }
}

/// The import name of a Python file (`pkg/util.py` → `pkg.util`, `src/pkg/__init__.py` →
/// `pkg`), or `None` when its path cannot be one.
pub fn module_of(path: &str) -> Option<String> {
    let stem = path
        .strip_suffix(".py")
        .or_else(|| path.strip_suffix(".pyi"))?;
    let stem = stem.strip_prefix("src/").unwrap_or(stem);
    let stem = stem.strip_suffix("/__init__").unwrap_or(stem);
    let parts: Vec<&str> = stem.split('/').collect();
    let valid = parts.iter().all(|p| {
        !p.is_empty()
            && p.chars().all(|c| c.is_alphanumeric() || c == '_')
            && !p.starts_with(|c: char| c.is_ascii_digit())
    });
    valid.then(|| parts.join("."))
}
