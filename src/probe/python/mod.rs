//! Python probes: statements with `assert`, judged here from values the code under review
//! computed in another process.
//!
//! Three parties, two processes in the box and git triad: the planner
//! (`config/probe_planner.py`) reads the probe and never imports the code under review: it
//! says which statements run, which expressions are evaluated, and reads the literal values
//! the probe expects. The subject (`config/probe_runner.py`) imports the code and evaluates
//! what it is asked, answering plain values: it never sees an expected value, compares
//! nothing and has no verdict to give. git triad compares, outside both ([`super::value`]).
//! Code that walks the subject's frames to its channel can answer for its own evaluations
//! (as returning a value would), never learn what the probe expects or say "passed".
//!
//! A failure counts only when a value computed by changed code is in it: the failing
//! comparison's value came from a call whose function lines the change added or modified
//! (traced in function frames only: the `def` lines run at import are not running the
//! function), or names a changed function, or a name a statement set from one.

use serde_json::Value as Json;

use super::result::ProbeResult;
use super::sandbox::{quote, Sandbox};
use super::settings::ProbeSettings;
use crate::bounded::clip;
use judge::{Ran, Step};

mod judge;

use crate::code::test_path;
use crate::git::export::{read_inside, write_inside};
pub(super) use judge::About;

/// The subject, compiled in.
const RUNNER: &str = include_str!("../../../config/probe_runner.py");

/// The planner, compiled in.
const PLANNER: &str = include_str!("../../../config/probe_planner.py");

/// The plain-data reader the subject and the behaviour runner share, compiled in.
pub(super) const PLAIN: &str = include_str!("../../../config/triad_plain.py");

/// Runs one Python probe about `path` in `sb`; with `about`, a failure counts only when a
/// value changed code computed is in it ([`ProbeOutcome::Irrelevant`] otherwise).
pub(super) fn run(
    sb: &Sandbox,
    settings: &ProbeSettings,
    path: &str,
    code: &str,
    about: Option<&About<'_>>,
) -> ProbeResult {
    let scratch = sb.scratch();
    let n = std::fs::read_dir(&scratch).map_or(0, |d| d.count());
    let plan = match plan(sb, settings, code, n) {
        Ok(p) => p,
        Err(r) => return *r,
    };
    let mut ops: Vec<Json> = Vec::new();
    let module = module_of(path).filter(|_| !test_path(path));
    if let Some(m) = &module {
        ops.push(serde_json::json!({ "import": m }));
    }
    let imports = ops.len();
    let steps = plan
        .iter()
        .map(|s| Step::read(s, &mut ops))
        .collect::<Vec<_>>();
    let nonce = format!("{:032x}", rand::random::<u128>());
    let (ops_file, nonce_file, frames_file) = (
        format!("ops_{n}.json"),
        format!("nonce_{n}"),
        format!("answers_{n}"),
    );
    let written = write_inside(&scratch, "probe_runner.py", RUNNER.as_bytes())
        .and_then(|()| write_inside(&scratch, "triad_plain.py", PLAIN.as_bytes()))
        .and_then(|()| write_inside(&scratch, &ops_file, Json::Array(ops).to_string().as_bytes()))
        .and_then(|()| write_inside(&scratch, &nonce_file, nonce.as_bytes()));
    if let Err(e) = written {
        return ProbeResult::broken(format!("the probe could not be written: {e}"));
    }
    let command = format!(
        "{} {} {} {} {}",
        quote(&settings.python),
        quote(&scratch.join("probe_runner.py").display().to_string()),
        quote(&scratch.join(&ops_file).display().to_string()),
        quote(&scratch.join(&nonce_file).display().to_string()),
        quote(&scratch.join(&frames_file).display().to_string()),
    );
    let outcome = sb.command(
        settings,
        &sb.root(),
        &command,
        settings.timeout,
        &python_env(sb),
    );
    if outcome.refused() {
        return ProbeResult::unprobed(format!("not run: {}", outcome.tail));
    }
    if outcome.timed_out {
        return ProbeResult::broken(format!(
            "cut off: the probe did not finish in {} s",
            settings.timeout.as_secs()
        ));
    }
    let answers = match answers(
        &read_inside(&scratch, &frames_file).unwrap_or_default(),
        &nonce,
    ) {
        Ok(a) => a,
        Err(why) => return ProbeResult::broken(why),
    };
    let ended = outcome
        .exit_code
        .map_or("killed".to_string(), |c| format!("exit {c}"));
    let ran = Ran {
        answers: &answers,
        imports,
        ended: &ended,
        tail: &outcome.tail,
    };
    judge::decide(&steps, &ran, about, module.as_deref())
}

/// The environment of the probe's processes: the tree (and its `src/`) importable.
fn python_env(sb: &Sandbox) -> Vec<(String, String)> {
    let root = sb.root();
    let mut paths = vec![root.display().to_string()];
    if root.join("src").is_dir() && !root.join("src").join("__init__.py").is_file() {
        paths.push(root.join("src").display().to_string());
    }
    [
        ("PYTHONPATH", paths.join(":")),
        ("PYTHONDONTWRITEBYTECODE", "1".to_string()),
        ("PYTHONIOENCODING", "utf-8".to_string()),
    ]
    .map(|(k, v)| (k.to_string(), v))
    .to_vec()
}

/// The probe's steps as the planner read them (in the box, without the code under
/// review); the probe's text is gone from the scratch directory before the subject starts.
fn plan(
    sb: &Sandbox,
    settings: &ProbeSettings,
    code: &str,
    n: usize,
) -> Result<Vec<Json>, Box<ProbeResult>> {
    let scratch = sb.scratch();
    let nonce = format!("{:032x}", rand::random::<u128>());
    let (probe, nonce_file, frames) = (
        format!("probe_{n}.py"),
        format!("plan_nonce_{n}"),
        format!("plan_{n}"),
    );
    let written = write_inside(&scratch, "probe_planner.py", PLANNER.as_bytes())
        .and_then(|()| write_inside(&scratch, "triad_plain.py", PLAIN.as_bytes()))
        .and_then(|()| write_inside(&scratch, &probe, code.as_bytes()))
        .and_then(|()| write_inside(&scratch, &nonce_file, nonce.as_bytes()));
    if let Err(e) = written {
        return Err(Box::new(ProbeResult::broken(format!(
            "the probe could not be written: {e}"
        ))));
    }
    let command = format!(
        "{} {} {} {} {}",
        quote(&settings.python),
        quote(&scratch.join("probe_planner.py").display().to_string()),
        quote(&scratch.join(&nonce_file).display().to_string()),
        quote(&scratch.join(&frames).display().to_string()),
        quote(&scratch.join(&probe).display().to_string()),
    );
    let out = sb.command(settings, &scratch, &command, settings.timeout, &[]);
    let read = read_inside(&scratch, &frames).unwrap_or_default();
    for gone in [&probe, &frames, &nonce_file] {
        let _ = std::fs::remove_file(scratch.join(gone));
    }
    if out.refused() {
        return Err(Box::new(ProbeResult::unprobed(format!(
            "not run: {}",
            out.tail
        ))));
    }
    let text = String::from_utf8_lossy(&read);
    let frame = text
        .lines()
        .find_map(|l| l.strip_prefix(nonce.as_str())?.strip_prefix(' '))
        .and_then(|f| serde_json::from_str::<Json>(f).ok());
    match frame {
        Some(f) if f["broken"].is_string() => Err(Box::new(ProbeResult::broken(
            f["broken"].as_str().unwrap_or("broken").to_string(),
        ))),
        Some(f) => Ok(f["steps"].as_array().cloned().unwrap_or_default()),
        None => Err(Box::new(ProbeResult::broken(format!(
            "the probe could not be read: {}",
            clip(out.tail.trim(), 300)
        )))),
    }
}

/// The subject's answers marked with `nonce`, one per operation in order; a second answer
/// to one operation, or one out of order, is the code under review writing into the
/// channel.
fn answers(written: &[u8], nonce: &str) -> Result<Vec<Json>, String> {
    let mut found = Vec::new();
    for frame in String::from_utf8_lossy(written)
        .lines()
        .filter_map(|l| l.strip_prefix(nonce)?.strip_prefix(' '))
        .filter_map(|f| serde_json::from_str::<Json>(f).ok())
    {
        if frame["k"].as_u64() != Some(found.len() as u64) {
            return Err(
                "the probe's answers are not one per question in order: the code under review wrote into its channel".into(),
            );
        }
        found.push(frame);
    }
    Ok(found)
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
