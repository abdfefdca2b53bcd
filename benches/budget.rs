//! What the context budget adds to a run: the budgeter's own time against a bookend run's wall
//! time.
//!
//! The run is the pipeline bench's (`support::bookend`: the release binary against the
//! scripted server, 6 model calls of [`DELAY_MS`] each, 50 modules of about 330 lines in
//! scope); its wall time is the median of [`RUNS`]. The budgeter's share of a run is timed
//! in-process on the same repository, as the median of [`REPS`] repetitions of everything it
//! adds to one run, in its worst case:
//! - the 4 stage prompts fitted to a window small enough that every step of shrinking happens
//!   (full texts → hunks with their enclosing symbols → the previous diff's file list →
//!   outlines → paths), minus the same prompts built whole (what a prompt cost before there
//!   was a budget);
//! - the window check of the 6 requests (an estimate of each request's tokens);
//! - the calibration read from a ledger of [`LEDGER_LINES`] calls (a heavy year of use).
//!
//! Target: (wall time + the budgeter's time) / wall time ≤ [`MAX_RATIO`], i.e. the budgeter adds
//! under 5 %. Run with `cargo bench --bench budget`; exits 1 when the target is missed.

mod support;

use std::path::Path;
use std::time::{Duration, Instant};

use git_triad::config::{LoadOptions, LoadedConfig};
use git_triad::git::{self, TreeFiles};
use git_triad::model::budget::CallRecord;
use git_triad::model::window::{Calibration, Estimator, Room, Window};
use git_triad::model::ChatRequest;
use git_triad::pipeline::context::{
    file_char_budget, fitted_stage_request, stage_request, OutlineCache, StageContext,
};
use git_triad::pipeline::stage::Stage;
use git_triad::privacy::Privacy;
use git_triad::task::TaskSpec;
use support::bookend::{timed_run, CALLS, DELAY_MS, TASK};
use support::ms;

const RUNS: usize = 3;
const REPS: usize = 15;
const LEDGER_LINES: usize = 10_000;
const MAX_RATIO: f64 = 1.05;
/// A window every stage prompt of the bench repository must shrink to fit.
const SMALL_WINDOW: u64 = 20_000;

fn main() {
    let mut walls: Vec<Duration> = (1..=RUNS)
        .map(|i| {
            let wall = timed_run("budget", false);
            println!("run {i}/{RUNS}: {:>8.0} ms", ms(wall));
            wall
        })
        .collect();
    walls.sort();
    let wall = walls[RUNS / 2];

    let (_tmp, repo_dir) = support::bookend::setup("budget-inproc", "http://127.0.0.1:9");
    let parts = budgeter_parts(&repo_dir);
    let budgeter: Duration = parts.iter().map(|(_, d)| *d).sum();
    let ratio = (wall + budgeter).as_secs_f64() / wall.as_secs_f64();
    println!();
    println!("the context budget in a bookend run: {CALLS} model calls of {DELAY_MS} ms each (median of {RUNS} runs; budgeter median of {REPS})");
    println!("  {:<44}{:>10}", "measure", "value");
    println!("  {:<44}{:>7.0} ms", "run wall time", ms(wall));
    for (what, d) in &parts {
        println!("  {what:<44}{:>7.2} ms", ms(*d));
    }
    println!("  {:<44}{:>7.2} ms", "budgeter, all of it", ms(budgeter));
    support::verdict("ratio (wall + budgeter) / wall", ratio, MAX_RATIO);
}

/// The median time of `f` over [`REPS`] repetitions.
fn median(mut f: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..REPS)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    times.sort();
    times[REPS / 2]
}

/// Each part of what the budgeter adds to one run, timed on the repository at `repo_dir`.
fn budgeter_parts(repo_dir: &Path) -> Vec<(&'static str, Duration)> {
    let repo = git2::Repository::open(repo_dir).unwrap();
    let mut loaded = LoadedConfig::load(&LoadOptions {
        user_file: Some(repo_dir.parent().unwrap().join("config.toml")),
        ..LoadOptions::default()
    })
    .unwrap();
    let model = "model-a";
    loaded.config.models.get_mut(model).unwrap().context_window = Some(SMALL_WINDOW);
    let config = &loaded.config;
    let spec = TaskSpec::parse(TASK, ".triad/tasks/bench.toml", "bench").unwrap();

    // The run so far: the architect changed one function of the first module.
    let base = repo.head().unwrap().peel_to_tree().unwrap();
    let path = "pkg/mod_00.py";
    let text = TreeFiles::new(&repo, base.clone()).text(path).unwrap();
    let changed = text.replacen(
        "def func_00_12(values, factor=12):",
        "def func_00_12(values, factor=12, limit=None):",
        1,
    );
    let blob = repo.blob(changed.as_bytes()).unwrap();
    let mut builder = git2::build::TreeUpdateBuilder::new();
    builder.upsert(path, blob, git2::FileMode::Blob);
    let tip = repo
        .find_tree(builder.create_updated(&repo, &base).unwrap())
        .unwrap();
    let run_diff = git::diff_trees(&repo, Some(&base), &tip).unwrap();
    let previous_diff = git::render_diff(&run_diff, &|_, _| None);
    let files = TreeFiles::new(&repo, tip.clone());
    let changed_so_far = vec![path.to_string()];
    let hunks = |p: &str| {
        let f = run_diff.iter().find(|f| f.path == p)?;
        Some(git::render_diff(std::slice::from_ref(f), &|f, h| {
            git_triad::code::hunk_label(&f.path, &files.text(&f.path)?, h.new_start, h.new_lines)
        }))
    };
    let outlines = OutlineCache::default();
    let privacy = Privacy::new(vec![]);
    let budget = file_char_budget(config, model);
    let context = |stage: Stage| StageContext {
        changed_so_far: &changed_so_far,
        previous_diff: &previous_diff,
        hunks: &hunks,
        ..StageContext::new(stage, &spec, &files, budget, &outlines, &privacy)
    };
    let stages = [
        Stage::Architect,
        Stage::Implement,
        Stage::Refactor,
        Stage::Verify,
    ];
    let estimator = Estimator::conservative();
    // Outlines are cached by blob in a run: warm the cache once, as the first stage does.
    let _ = stage_request(config, None, model, &context(Stage::Architect));

    let mut requests: Vec<ChatRequest> = Vec::new();
    let fitted = median(|| {
        requests = stages
            .iter()
            .map(|s| fitted_stage_request(config, None, model, &context(*s), &estimator).0)
            .collect();
    });
    let left_out: Vec<String> = stages
        .iter()
        .map(|s| {
            fitted_stage_request(config, None, model, &context(*s), &estimator)
                .1
                .describe()
        })
        .collect();
    assert!(
        left_out.iter().all(|l| l.contains("hunks")),
        "every prompt must shrink to hunks: {left_out:?}"
    );
    let mut whole_config = loaded.config.clone();
    whole_config.models.get_mut(model).unwrap().context_window = Some(10_000_000);
    let whole = median(|| {
        for s in stages {
            let _ = fitted_stage_request(&whole_config, None, model, &context(s), &estimator);
        }
    });

    let window = Window::of(&config.models[model]);
    let mut sum = 0u64;
    let checks = median(|| {
        for r in requests.iter().cycle().take(CALLS) {
            sum += Room::measure(window, &estimator, r).input;
        }
    });
    assert!(sum > 0);

    let ledger: Vec<CallRecord> = (0..LEDGER_LINES)
        .map(|i| CallRecord {
            ts: i as u64,
            role: "implementer".into(),
            model: model.into(),
            provider: "fake-openai".into(),
            requested_id: if i % 2 == 0 {
                "gpt-5"
            } else {
                "claude-sonnet-4-5"
            }
            .into(),
            reported_id: None,
            model_mismatch: false,
            input_tokens: 4_000 + i as u64 % 700,
            output_tokens: 500,
            prompt_bytes: 14_000 + i as u64 % 900,
            cost_usd: 0.01,
            latency_ms: 900,
            attempts: 1,
            outcome: "ok".into(),
            run: None,
        })
        .collect();
    let calibration = median(|| {
        let c = Calibration::from_records(&ledger);
        assert!(c.estimator("gpt").bytes_per_token() > 3.0);
    });

    vec![
        (
            "4 stage prompts shrunk, less built whole",
            fitted.saturating_sub(whole),
        ),
        ("6 requests checked against the window", checks),
        ("calibration from a 10,000-call ledger", calibration),
    ]
}
