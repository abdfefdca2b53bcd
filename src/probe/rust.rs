//! Rust probes: each a `#[test]` function's body, compiled together as one integration test
//! of the crate under review and run with `cargo test`. A probe that does not compile is
//! broken and left out of a second build, so it cannot take the others down with it.

use super::result::{ProbeOutcome, ProbeResult};
use super::sandbox::{quote, Sandbox};
use super::settings::ProbeSettings;
use crate::git::export::{read_inside, write_inside};

/// The integration test the probes are written into.
const TEST_NAME: &str = "triad_probes";

/// What running one Rust probe showed, and where in its body it failed.
pub(super) struct Ran {
    /// The result.
    pub result: ProbeResult,
    /// The line of the probe's body whose assertion panicked (0-based), when one did.
    pub line: Option<u32>,
}

impl From<ProbeResult> for Ran {
    fn from(result: ProbeResult) -> Ran {
        Ran { result, line: None }
    }
}

/// Runs the Rust probes `codes` in `sb`; one result each, in order.
pub(super) fn run(sb: &Sandbox, settings: &ProbeSettings, codes: &[&str]) -> Vec<Ran> {
    let all = |r: ProbeResult| codes.iter().map(|_| Ran::from(r.clone())).collect();
    let cargo_based = settings
        .verify_command
        .as_deref()
        .is_some_and(|c| c.contains("cargo test") || c.contains("cargo nextest"));
    if !cargo_based {
        return all(ProbeResult::unprobed(
            "not run: Rust probes run where the verify command is `cargo test`-based",
        ));
    }
    let root = sb.root();
    let Some(krate) = library_name(&root) else {
        return all(ProbeResult::unprobed(
            "not run: the crate under review has no library target a probe can call",
        ));
    };
    let declared = read_inside(&root, "Cargo.toml").map(|m| {
        format!("{}\n\n[[test]]\nname = \"{TEST_NAME}\"\npath = \"tests/{TEST_NAME}.rs\"\nharness = true\n", String::from_utf8_lossy(&m))
    });
    if let Err(e) = declared.and_then(|m| write_inside(&root, "Cargo.toml", m.as_bytes())) {
        return all(ProbeResult::broken(format!(
            "the probes could not be written: {e}"
        )));
    }
    let mut results: Vec<Option<ProbeResult>> = vec![None; codes.len()];
    let mut lines: Vec<Option<u32>> = vec![None; codes.len()];
    // At most two builds: the second without the probes the first found broken.
    for _ in 0..2 {
        let pending: Vec<usize> = (0..codes.len()).filter(|&i| results[i].is_none()).collect();
        if pending.is_empty() {
            break;
        }
        let (file, spans) = test_file(&krate, codes, &pending);
        if let Err(e) = write_inside(&root, &format!("tests/{TEST_NAME}.rs"), file.as_bytes()) {
            return all(ProbeResult::broken(format!(
                "the probes could not be written: {e}"
            )));
        }
        let target = settings
            .cargo_target
            .as_ref()
            .map(|t| format!("CARGO_TARGET_DIR={} ", quote(&t.display().to_string())))
            .unwrap_or_default();
        let command =
            format!("{target}cargo test --offline --quiet --test {TEST_NAME} -- --test-threads=1");
        let out = sb.command(settings, &root, &command, settings.compile_timeout, &[]);
        if out.timed_out {
            for i in pending {
                results[i] = Some(ProbeResult::broken(format!(
                    "cut off: the probes did not build and run in {} s",
                    settings.compile_timeout.as_secs()
                )));
            }
            break;
        }
        let errors = compile_errors(&out.tail);
        if !errors.is_empty() {
            let mut blamed = false;
            for (line, message) in &errors {
                let owner =
                    line.and_then(|l| spans.iter().find(|(_, a, b)| (*a..=*b).contains(&l)));
                match owner {
                    Some((i, _, _)) if results[*i].is_none() => {
                        blamed = true;
                        results[*i] = Some(ProbeResult::broken(format!(
                            "the probe does not compile: {message}"
                        )));
                    }
                    Some(_) => {}
                    None => {
                        for &i in &pending {
                            results[i].get_or_insert_with(|| {
                                ProbeResult::broken(format!(
                                    "the crate does not build with the probes: {message}"
                                ))
                            });
                        }
                        blamed = true;
                    }
                }
            }
            if blamed {
                continue;
            }
        }
        for &i in &pending {
            results[i] = Some(outcome_of(&out.tail, i, out.exit_code, codes[i]));
            let first = spans.iter().find(|(j, _, _)| *j == i).map(|(_, a, _)| *a);
            lines[i] = first.and_then(|f| panic_line(&out.tail, i)?.checked_sub(f + 2));
        }
    }
    results
        .into_iter()
        .zip(lines)
        .map(|(r, line)| Ran {
            result: r.unwrap_or_else(|| ProbeResult::broken("the probe did not run")),
            line,
        })
        .collect()
}

/// The line of the probe file where probe `i` panicked (`panicked at tests/…rs:L:C`).
fn panic_line(output: &str, i: usize) -> Option<u32> {
    let header = format!("---- triad_probe_{i} stdout ----");
    let section = &output[output.find(&header)? + header.len()..];
    let at = section.find(&format!("tests/{TEST_NAME}.rs:"))?;
    let rest = &section[at + TEST_NAME.len() + 10..];
    rest.split(':').next()?.parse().ok()
}

/// Whether the failing assertion of a Rust probe (at `line` of its body) holds a value a
/// function the change added or modified computed: it names one, or a `let` binding made
/// from one (directly or through other bindings). `assert!(false)` after `let _ =
/// mul(2, 3);` holds none. Without a known line, any mention in the probe counts.
pub(super) fn about_change(
    code: &str,
    line: Option<u32>,
    functions: &std::collections::BTreeSet<String>,
) -> bool {
    let words = |t: &str| -> Vec<String> {
        t.split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .map(str::to_string)
            .collect()
    };
    let body = body(code);
    let lines: Vec<&str> = body.lines().collect();
    let Some(at) = line
        .and_then(|l| usize::try_from(l).ok())
        .filter(|l| *l < lines.len())
    else {
        return words(body).iter().any(|w| functions.contains(w));
    };
    // The statement from the failing line to its `;`.
    let mut failing = String::new();
    for l in &lines[at..] {
        failing.push_str(l);
        failing.push('\n');
        if l.trim_end().ends_with(';') {
            break;
        }
    }
    // Names bound from changed functions, to a fixed point.
    let mut tainted: std::collections::BTreeSet<String> = functions.clone();
    loop {
        let before = tainted.len();
        for l in &lines[..at] {
            let Some(rest) = l.trim_start().strip_prefix("let ") else {
                continue;
            };
            let Some((pattern, value)) = rest.split_once('=') else {
                continue;
            };
            if words(value).iter().any(|w| tainted.contains(w)) {
                tainted.extend(
                    words(pattern)
                        .into_iter()
                        .filter(|w| w != "mut" && w != "_"),
                );
            }
        }
        if tainted.len() == before {
            break;
        }
    }
    words(&failing).iter().any(|w| tainted.contains(w))
}

/// The crate's library name (`my-crate` → `my_crate`), when it has a library target.
fn library_name(root: &std::path::Path) -> Option<String> {
    let manifest: toml::Value = String::from_utf8(read_inside(root, "Cargo.toml").ok()?)
        .ok()?
        .parse()
        .ok()?;
    let lib_path = manifest
        .get("lib")
        .and_then(|l| l.get("path"))
        .and_then(|p| p.as_str())
        .unwrap_or("src/lib.rs");
    if crate::fsguard::inside_repo(root, lib_path).map_or(true, |p| !p.is_file()) {
        return None;
    }
    let name = manifest
        .get("lib")
        .and_then(|l| l.get("name"))
        .or_else(|| manifest.get("package").and_then(|p| p.get("name")))?
        .as_str()?;
    Some(name.replace('-', "_"))
}

/// The body of a probe: the model may write the whole `#[test] fn …() { … }`; only what is
/// between its outer braces is kept then.
fn body(code: &str) -> &str {
    let t = code.trim();
    let t = t.strip_prefix("#[test]").map_or(t, str::trim_start);
    if t.starts_with("fn ") {
        if let (Some(open), Some(close)) = (t.find('{'), t.rfind('}')) {
            if open < close {
                return &t[open + 1..close];
            }
        }
    }
    t
}

/// The test file holding the probes `pending`, and the lines each occupies (index, first,
/// last; 1-based).
fn test_file(krate: &str, codes: &[&str], pending: &[usize]) -> (String, Vec<(usize, u32, u32)>) {
    let mut file = format!(
        "#![allow(unused_imports, unused_variables, unused_mut, dead_code, clippy::all)]\nuse {krate}::*;\n"
    );
    let mut spans = Vec::new();
    for &i in pending {
        let first = file.lines().count() as u32 + 1;
        file.push_str(&format!(
            "#[test]\nfn triad_probe_{i}() {{\n{}\n}}\n",
            body(codes[i])
        ));
        spans.push((i, first, file.lines().count() as u32));
    }
    (file, spans)
}

/// The compile errors in cargo's output: the line of the probe file each points at (when
/// it points there) and the error's message.
fn compile_errors(output: &str) -> Vec<(Option<u32>, String)> {
    let lines: Vec<&str> = output.lines().collect();
    let mut errors = Vec::new();
    for (n, line) in lines.iter().enumerate() {
        let Some(message) = line.strip_prefix("error") else {
            continue;
        };
        if !(message.starts_with('[') || message.starts_with(':')) {
            continue;
        }
        let message = message
            .split_once(": ")
            .map_or(message, |(_, m)| m)
            .trim()
            .to_string();
        let at = lines[n + 1..]
            .iter()
            .take(3)
            .find_map(|l| l.trim_start().strip_prefix("--> "))
            .map(str::trim);
        let probe_line = at.and_then(|a| {
            let rest = a.strip_prefix(&format!("tests/{TEST_NAME}.rs:"))?;
            rest.split(':').next()?.parse().ok()
        });
        // A message with no place is cargo's own summary ("test failed", "aborting").
        match (at, probe_line) {
            (Some(_), Some(l)) => errors.push((Some(l), message)),
            (Some(a), None) => errors.push((None, format!("{message} (at {a})"))),
            (None, _) => {}
        }
    }
    errors
}

/// What the test run says of probe `i`: its panic as a counterexample, or that it passed.
fn outcome_of(output: &str, i: usize, exit: Option<i32>, code: &str) -> ProbeResult {
    let name = format!("triad_probe_{i}");
    let header = format!("---- {name} stdout ----");
    let Some(at) = output.find(&header) else {
        return if exit == Some(0) || output.contains("test result: ") {
            ProbeResult {
                outcome: ProbeOutcome::Refuted,
                detail: "the probe passes".into(),
                call: None,
                expected: None,
                actual: None,
                base: None,
            }
        } else {
            ProbeResult::broken(format!(
                "the probes did not run: {}",
                crate::bounded::clip(output.trim(), 300)
            ))
        };
    };
    let section = &output[at + header.len()..];
    let section = section.split("\n---- ").next().unwrap_or(section);
    let section = section.split("\nfailures:").next().unwrap_or(section);
    let value = |label: &str| {
        section
            .lines()
            .find_map(|l| l.trim_start().strip_prefix(label))
            .map(|v| v.trim().to_string())
    };
    let message = section
        .lines()
        .skip_while(|l| !l.contains("panicked at"))
        .nth(1)
        .unwrap_or("the probe panics")
        .trim()
        .to_string();
    ProbeResult {
        outcome: ProbeOutcome::Confirmed,
        detail: message,
        call: asserted_call(body(code)),
        expected: value("right:"),
        actual: value("left:"),
        base: None,
    }
}

/// The first argument of the probe's first `assert_eq!` (the call it checks).
fn asserted_call(body: &str) -> Option<String> {
    let start = body.find("assert_eq!(")? + "assert_eq!(".len();
    let mut depth = 0i32;
    let mut quoted = false;
    for (n, c) in body[start..].char_indices() {
        match c {
            '"' => quoted = !quoted,
            '(' | '[' | '{' if !quoted => depth += 1,
            ')' | ']' | '}' if !quoted => depth -= 1,
            ',' if !quoted && depth == 0 => return Some(body[start..start + n].trim().to_string()),
            _ => {}
        }
    }
    None
}
