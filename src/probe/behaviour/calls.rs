//! The calls of a behaviour diff, made in the box: the runner that calls each function on
//! one tree and reports plain data, what each call gave, and when a difference is a
//! regression (a return that now crashes by accident or never returns).

use git2::{Repository, Tree};
use serde::Serialize;

use super::inputs::InputSource;
use crate::bounded::clip;
use crate::probe::python::PLAIN;
use crate::probe::sandbox::{quote, Sandbox};
use crate::probe::settings::ProbeSettings;
use crate::probe::value::Value;

/// The runner, compiled in.
const RUNNER: &str = include_str!("../../../config/behaviour_runner.py");

/// A call that did not return within the runner's limit counts as one that never returns
/// only when the base returned it within this many milliseconds: a call that was slow at
/// the base may only be slower on a busy machine.
const QUICK_MS: u64 = 1000;

/// A call to make on both trees.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(super) struct Call {
    pub(super) module: String,
    pub(super) function: String,
    pub(super) args: Vec<String>,
    /// Where the input came from (not sent to the runner).
    #[serde(skip)]
    pub(super) input: InputSource,
    /// The function's file and lines in the new tree (not sent to the runner).
    #[serde(skip)]
    pub(super) at: (String, u32, u32),
}

impl Call {
    pub(super) fn shown(&self) -> String {
        format!("{}({})", self.function, self.args.join(", "))
    }
}

/// What one call gave on one tree.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Got {
    /// It returned this value, in this many milliseconds.
    Value(Value, u64),
    /// It raised an exception of this type.
    Raised(String),
    /// It did not return within the runner's limit.
    Hung(String),
}

impl Got {
    pub(super) fn shown(&self) -> String {
        match self {
            Got::Value(v, _) => clip(&v.render(), 200),
            Got::Raised(e) => format!("raises {e}"),
            Got::Hung(why) => format!("raises {why}"),
        }
    }

    pub(super) fn same(&self, other: &Got) -> bool {
        match (self, other) {
            // Equal as data, or shown alike (`nan`, an object of one type on both sides).
            (Got::Value(a, _), Got::Value(b, _)) => a.equals(b) || a.render() == b.render(),
            (Got::Raised(a), Got::Raised(b)) => a == b,
            (Got::Hung(_), Got::Hung(_)) => true,
            _ => false,
        }
    }

    /// Whether the base's answer says the input is not one the function takes: it
    /// rejected the argument's type (`TypeError`; for a made-up input also an
    /// `AttributeError`, a method the value's type lacks).
    pub(super) fn rejects_type(&self, input: InputSource) -> bool {
        matches!(self, Got::Raised(e) if e == "TypeError"
            || (input == InputSource::MadeUp && e == "AttributeError"))
    }
}

/// Whether `after` on a call that gave `before` at the base is a regression: it returned
/// (quickly) and now never returns, or now raises an error the changed code does not raise
/// on purpose (`deliberate`: the exception types raised in its changed lines or its own
/// body).
pub(super) fn regressed(before: &Got, after: &Got, deliberate: &[String]) -> bool {
    match (before, after) {
        (Got::Value(_, ms), Got::Hung(_)) => *ms < QUICK_MS,
        (Got::Value(..), Got::Raised(e)) => !deliberate.iter().any(|d| d == e),
        _ => false,
    }
}

/// The exception types `source` raises on purpose in `lines` (1-based): the last name of
/// each `raise X` / `raise X(...)`, and `AssertionError` for an `assert`.
pub(super) fn raised_on_purpose(source: &str, lines: impl Fn(u32) -> bool) -> Vec<String> {
    let mut found = Vec::new();
    for (i, line) in source.lines().enumerate() {
        if !lines(i as u32 + 1) {
            continue;
        }
        let t = line.trim_start();
        if let Some(rest) = t.strip_prefix("raise ") {
            let name: String = rest
                .trim_start()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '.')
                .collect();
            if let Some(last) = name.rsplit('.').next().filter(|n| !n.is_empty()) {
                found.push(last.to_string());
            }
        } else if t.starts_with("assert ") || t.starts_with("assert(") {
            found.push("AssertionError".into());
        }
    }
    found
}

/// Runs `calls` on a scratch copy of `tree` in the box: what each gave, by index (`None`:
/// it could not be called there).
pub(super) fn run(
    repo: &Repository,
    tree: &Tree<'_>,
    calls: &[Call],
    settings: &ProbeSettings,
) -> Result<Vec<Option<Got>>, String> {
    let sb = Sandbox::export(repo, tree)?;
    let scratch = sb.scratch();
    let runner = scratch.join("behaviour_runner.py");
    let calls_file = scratch.join("calls.json");
    let nonce_file = scratch.join("nonce");
    let frames_file = scratch.join("frames");
    let nonce = format!("{:032x}", rand::random::<u128>());
    let json = serde_json::to_string(calls).map_err(|e| e.to_string())?;
    std::fs::write(&runner, RUNNER)
        .and_then(|()| std::fs::write(scratch.join("triad_plain.py"), PLAIN))
        .and_then(|()| std::fs::write(&calls_file, json))
        .and_then(|()| std::fs::write(&nonce_file, &nonce))
        .map_err(|e| format!("the behaviour runner could not be written: {e}"))?;
    let root = sb.root();
    let mut paths = vec![root.display().to_string()];
    if root.join("src").is_dir() && !root.join("src").join("__init__.py").is_file() {
        paths.push(root.join("src").display().to_string());
    }
    let command = format!(
        "{} {} {} {} {}",
        quote(&settings.python),
        quote(&runner.display().to_string()),
        quote(&calls_file.display().to_string()),
        quote(&nonce_file.display().to_string()),
        quote(&frames_file.display().to_string()),
    );
    let env = [
        ("PYTHONPATH", paths.join(":")),
        ("PYTHONDONTWRITEBYTECODE", "1".into()),
        ("PYTHONIOENCODING", "utf-8".into()),
    ]
    .map(|(k, v)| (k.to_string(), v));
    let timeout = settings
        .timeout
        .max(std::time::Duration::from_secs(4 * calls.len() as u64 + 10));
    let out = sb.command(settings, &root, &command, timeout, &env);
    if out.refused() {
        return Err(out.tail);
    }
    let written = std::fs::read(&frames_file).unwrap_or_default();
    let mut got: Vec<Option<Got>> = vec![None; calls.len()];
    for frame in String::from_utf8_lossy(&written)
        .lines()
        .filter_map(|l| l.strip_prefix(nonce.as_str())?.strip_prefix(' '))
        .filter_map(|f| serde_json::from_str::<serde_json::Value>(f).ok())
    {
        let Some(i) = frame["i"].as_u64().and_then(|i| usize::try_from(i).ok()) else {
            continue;
        };
        let Some(slot) = got.get_mut(i) else {
            continue;
        };
        if frame.get("value").is_some() {
            let ms = frame["ms"].as_u64().unwrap_or(0);
            *slot = Some(Got::Value(Value::from_json(&frame["value"]), ms));
        } else if let Some(e) = frame["raised"].as_str() {
            *slot = Some(if e.starts_with("did not return") {
                Got::Hung(e.to_string())
            } else {
                Got::Raised(e.to_string())
            });
        }
    }
    Ok(got)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_regression_is_a_return_that_now_crashes_by_accident_or_hangs() {
        let value = |ms| Got::Value(Value::Int("7".into()), ms);
        let hung = Got::Hung("did not return in 3 s".into());
        assert!(regressed(&value(2), &hung, &[]));
        // Slow at the base: slower now may be the machine.
        assert!(!regressed(&value(2500), &hung, &[]));
        let raised = Got::Raised("ValueError".into());
        assert!(regressed(&value(2), &raised, &[]));
        assert!(!regressed(&value(2), &raised, &["ValueError".into()]));
        assert!(!regressed(&raised, &value(2), &[]));
        assert!(!regressed(&Got::Raised("KeyError".into()), &raised, &[]));
        let src = "def f(x):\n    if x < 0:\n        raise errors.ValueError('no')\n    assert x\n    raise KeyError\n";
        assert_eq!(
            raised_on_purpose(src, |l| l <= 4),
            ["ValueError", "AssertionError"]
        );
        // What the base refuses by type is outside the function's domain.
        assert!(Got::Raised("TypeError".into()).rejects_type(InputSource::Test));
        assert!(Got::Raised("AttributeError".into()).rejects_type(InputSource::MadeUp));
        assert!(!Got::Raised("AttributeError".into()).rejects_type(InputSource::Docstring));
    }
}
