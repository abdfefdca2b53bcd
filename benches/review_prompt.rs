//! What a review costs in tokens: the arbiter's whole request for a 10-line change in a
//! 2,000-line file, against sending that file whole. The review shows the hunks with
//! new-side line numbers and their enclosing symbols, never the whole file; the target is at
//! most 25 % of the file's tokens (the request's fixed parts — the role prompt, the task,
//! the schema — included).
//!
//!     cargo bench --bench review_prompt

mod support;

use git_triad::arbiter::gather::{prepare, Subject};
use git_triad::arbiter::request::{build_request, Brief};
use git_triad::model::window::Estimator;
use git_triad::probe::ProbePolicy;

/// A 2,000-line Python module: 200 functions of ten lines.
fn module(changed: bool) -> String {
    let mut s = String::from("\"\"\"A large module.\"\"\"\n\n");
    for i in 0..200 {
        let body = if changed && (100..105).contains(&i) {
            format!("    total = value * {i} + offset  # changed\n")
        } else {
            format!("    total = value * {i}\n")
        };
        s.push_str(&format!(
            "def step_{i}(value, offset=0):\n    \"\"\"Step {i} of the computation.\"\"\"\n    if value is None:\n        return None\n{body}    if total < 0:\n        total = -total\n    return total\n\n\n"
        ));
    }
    s
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let repo = git2::Repository::init(dir.path()).unwrap();
    let sig = git2::Signature::now("bench", "bench@example.com").unwrap();
    let commit = |text: &str, parent: Option<&git2::Commit<'_>>| {
        let blob = repo.blob(text.as_bytes()).unwrap();
        let mut tb = repo.treebuilder(None).unwrap();
        tb.insert("big.py", blob, 0o100644).unwrap();
        let tree = repo.find_tree(tb.write().unwrap()).unwrap();
        let parents: Vec<&git2::Commit<'_>> = parent.into_iter().collect();
        let oid = repo.commit(None, &sig, &sig, "c", &tree, &parents).unwrap();
        repo.find_commit(oid).unwrap()
    };
    let before_text = module(false);
    let after_text = module(true);
    let before = commit(&before_text, None);
    let after = commit(&after_text, Some(&before));
    let (old, new) = (before.tree().unwrap(), after.tree().unwrap());
    let prepared = prepare(Subject {
        repo: &repo,
        old: Some(&old),
        new: &new,
        privacy: None,
        venv_root: None,
        probes: ProbePolicy::Off("not run: a bench".into()),
        not_run: None,
    })
    .unwrap();
    let task = "# Task t: change five steps\n\nAdd the offset to steps 100 to 104.\n";
    let brief = Brief {
        stage: "implement",
        reviewed_model: "model-a",
        task,
        stage_notes: "summary: added the offset",
        previous_flags: &[],
        verify: None,
        requirement_ids: &[],
    };
    let loaded = git_triad::config::LoadedConfig::load(&git_triad::config::LoadOptions {
        user_file: Some(dir.path().join("no-user-config.toml")),
        ..Default::default()
    })
    .unwrap();
    let system = git_triad::config::prompt(&loaded.config, "arbiter", None);
    let request = build_request(&system, &prepared.input(&brief));
    let est = Estimator::conservative();
    let review = est.request_tokens(&request);
    let whole = est.tokens(&after_text);
    let changed = after_text
        .lines()
        .filter(|l| l.contains("# changed"))
        .count()
        + before_text
            .lines()
            .zip(after_text.lines())
            .filter(|(a, b)| a != b)
            .count();
    println!("review_prompt: the arbiter's request for a change in a 2,000-line file");
    println!(
        "  {:<34}{:>10}",
        "lines in the file",
        after_text.lines().count()
    );
    println!("  {:<34}{:>10}", "lines changed (- and +)", changed);
    println!("  {:<34}{:>10}", "tokens of the whole file", whole);
    println!(
        "  {:<34}{:>10}",
        "tokens of the whole review request", review
    );
    support::verdict(
        "review request / whole file",
        review as f64 / whole as f64,
        0.25,
    );
}
