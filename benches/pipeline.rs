//! Pipeline overhead: what `git triad run` adds on top of the time spent waiting for models.
//!
//! A whole bookend run (`git-triad run --task <t> --arbiter bookend`: architect, implement,
//! refactor and verify, with the arbiter reviewing architect and verify, so 6 model calls)
//! of the real release binary against the scripted fake model server
//! (`git_triad::testkit::fake_llm`), which waits [`DELAY_MS`] before every answer. The
//! repository is realistic: [`MODULES`] Python modules of about 330 lines each, all in the
//! task's scope, so the stage context (repository map with tree-sitter outlines, full file
//! texts), the edits, the in-memory stage commits and the arbiter's diffs do real work.
//!
//! Target: wall time ≤ [`MAX_RATIO`] × the sum of the model latencies (6 × 1 s → ≤ 6.6 s),
//! median of [`RUNS`] runs; setup (server, repository, config) is not timed. The bench exits
//! with status 1 if the target is missed or a run does not end approved after 6 calls.
//!
//! Run with `cargo bench --bench pipeline`. Cargo builds the release `git-triad` binary for
//! benches and hands its path over as `CARGO_BIN_EXE_git-triad`, which is what is timed.
//! `PIPELINE_BENCH_VERBOSE=1` also prints each run's progress lines, stamped with the time since
//! the start of the run, to see where the overhead goes.

mod support;

use std::time::Duration;

use support::bookend::{timed_run, CALLS, DELAY_MS, MODULES};
use support::ms;

const RUNS: usize = 3;
const MAX_RATIO: f64 = 1.10;

fn main() {
    let verbose = std::env::var_os("PIPELINE_BENCH_VERBOSE").is_some();
    let mut walls = Vec::new();
    for i in 1..=RUNS {
        let wall = timed_run("pipeline", verbose);
        println!("run {i}/{RUNS}: {:>8.0} ms", ms(wall));
        walls.push(wall);
    }
    walls.sort();
    let wall = walls[RUNS / 2];
    let models = Duration::from_millis(DELAY_MS * CALLS as u64);
    let ratio = wall.as_secs_f64() / models.as_secs_f64();
    println!();
    println!("git triad run, bookend mode, {MODULES} modules, {CALLS} model calls of {DELAY_MS} ms each (median of {RUNS})");
    println!("  {:<34}{:>10}", "measure", "value");
    println!("  {:<34}{:>7.0} ms", "wall time", ms(wall));
    println!("  {:<34}{:>7.0} ms", "sum of model latencies", ms(models));
    println!("  {:<34}{:>7.0} ms", "overhead", ms(wall) - ms(models));
    support::verdict("ratio wall / latencies", ratio, MAX_RATIO);
}
