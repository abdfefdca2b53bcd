//! What the end-to-end benches share: a hermetic command and the ratio verdict they print.
//!
//! Each bench is its own crate and uses only part of this module.
#![allow(dead_code)]

pub mod bookend;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A hermetic command: no user or system git config, no inherited git/triad/proxy settings,
/// the bench's own home and the fake provider's key.
pub fn command(program: &str, dir: &Path, home: &Path) -> Command {
    let mut cmd = Command::new(program);
    for (k, _) in std::env::vars() {
        let lower = k.to_ascii_lowercase();
        if k.starts_with("GIT_") || k.ends_with("_API_KEY") || lower.contains("proxy") {
            cmd.env_remove(k);
        }
    }
    cmd.current_dir(dir)
        .env_remove("RUST_LOG")
        .env("HOME", home)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_TRIAD_CONFIG", home.join("config.toml"))
        .env("FAKE_OPENAI_KEY", "sk-fake-bench-key")
        .env("GIT_AUTHOR_NAME", "Bench")
        .env("GIT_AUTHOR_EMAIL", "bench@example.com")
        .env("GIT_COMMITTER_NAME", "Bench")
        .env("GIT_COMMITTER_EMAIL", "bench@example.com");
    cmd
}

/// Runs `cmd` to its end with no stdin: its output (stdout kept), its stderr with each line
/// stamped by the milliseconds since the start (where the time between model calls goes),
/// and the wall time.
pub fn run_stamped(mut cmd: Command) -> (Output, String, Duration) {
    let t = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run git-triad");
    let mut stderr = String::new();
    for line in BufReader::new(child.stderr.take().unwrap()).lines() {
        stderr.push_str(&format!("{:>7.0} ms  {}\n", ms(t.elapsed()), line.unwrap()));
    }
    let out = child.wait_with_output().expect("wait for git-triad");
    (out, stderr, t.elapsed())
}

/// Milliseconds, for the tables.
pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Prints the ratio, its target and PASS/FAIL; a miss exits 1.
pub fn verdict(label: &str, ratio: f64, max: f64) {
    let pass = ratio <= max;
    println!("  {:<34}{:>10.3}", label, ratio);
    println!("  {:<34}{:>10.2}", "target ratio (max)", max);
    println!(
        "  {:<34}{:>10}",
        "result",
        if pass { "PASS" } else { "FAIL" }
    );
    if !pass {
        std::process::exit(1);
    }
}
