//! The probe runner against real trees: a real Python interpreter, a real cargo.

use std::time::Duration;

use super::*;

/// A repository whose HEAD tree holds `files`.
fn repo_with(files: &[(&str, &str)]) -> (tempfile::TempDir, Repository) {
    let dir = tempfile::tempdir().unwrap();
    let repo = Repository::init(dir.path()).unwrap();
    // Nested paths go through git's index so directories are built for us.
    let mut index = repo.index().unwrap();
    for (path, text) in files {
        let oid = repo.blob(text.as_bytes()).unwrap();
        let entry = git2::IndexEntry {
            ctime: git2::IndexTime::new(0, 0),
            mtime: git2::IndexTime::new(0, 0),
            dev: 0,
            ino: 0,
            mode: 0o100644,
            uid: 0,
            gid: 0,
            file_size: text.len() as u32,
            id: oid,
            flags: 0,
            flags_extended: 0,
            path: path.as_bytes().to_vec(),
        };
        index.add(&entry).unwrap();
    }
    let tree = index.write_tree().unwrap();
    let sig = git2::Signature::now("t", "t@localhost").unwrap();
    let tree = repo.find_tree(tree).unwrap();
    repo.commit(Some("HEAD"), &sig, &sig, "base", &tree, &[])
        .unwrap();
    drop(tree);
    (dir, repo)
}

fn settings(verify: Option<&str>) -> ProbeSettings {
    ProbeSettings {
        verify_command: verify.map(str::to_string),
        timeout: Duration::from_secs(20),
        compile_timeout: Duration::from_secs(600),
        test_timeout: None,
        cargo_target: None,
        python: "python3".into(),
        policy: crate::sandbox::Policy::default(),
    }
}

fn probe(path: &str, code: &str) -> ProbeSpec {
    ProbeSpec {
        path: path.into(),
        code: code.into(),
    }
}

const CALC: &str = "def add(a, b):\n    return a - b\n\n\ndef div(a, b):\n    return a / b\n\n\ndef spin():\n    while True:\n        pass\n";

#[test]
fn python_probes_confirm_refute_and_break() {
    let (_d, repo) = repo_with(&[("calc.py", CALC), ("pkg/__init__.py", "X = 1\n")]);
    let tree = repo.head().unwrap().peel_to_tree().unwrap();
    let runner = ProbeRunner::new(&repo, tree, ProbePolicy::Run(settings(None)));
    let results = runner.run(&[
        probe("calc.py", "assert add(2, 3) == 5"),
        probe("calc.py", "assert add(2, -3) == 5"),
        probe("calc.py", "assert div(1, 0) == 0"),
        probe("calc.py", "assert add(2 == 3"),
        probe("calc.py", "from calc import mul\nassert mul(2, 3) == 6"),
        probe("calc.py", "import calc\nassert calc.add(1, 1) == 2"),
        probe("pkg/__init__.py", "assert X == 2"),
        probe("calc.py", ""),
        probe("notes.txt", "anything"),
    ]);
    let outcomes: Vec<ProbeOutcome> = results.iter().map(|r| r.outcome).collect();
    use ProbeOutcome::*;
    assert_eq!(
        outcomes,
        [Confirmed, Refuted, Confirmed, Broken, Broken, Confirmed, Confirmed, Unprobed, Unprobed],
        "{results:#?}"
    );
    let add = &results[0];
    assert_eq!(
        (
            add.call.as_deref(),
            add.expected.as_deref(),
            add.actual.as_deref()
        ),
        (Some("add(2, 3)"), Some("5"), Some("-1"))
    );
    assert_eq!(add.counterexample(), "add(2, 3): expected 5, got -1");
    assert!(
        results[2]
            .actual
            .as_deref()
            .unwrap()
            .contains("ZeroDivisionError"),
        "{:?}",
        results[2]
    );
    assert!(
        results[2].detail.contains("(at calc.py:6)"),
        "{:?}",
        results[2]
    );
    assert!(
        results[4].detail.contains("cannot import name 'mul'"),
        "{:?}",
        results[4]
    );
    // No scratch path of this machine reaches the record.
    for r in &results {
        assert!(!r.detail.contains("git-triad-probe-"), "{r:?}");
    }
}

#[test]
fn a_probe_that_loops_or_floods_is_cut_off_and_recorded() {
    let (_d, repo) = repo_with(&[("calc.py", CALC)]);
    let tree = repo.head().unwrap().peel_to_tree().unwrap();
    let mut quick = settings(None);
    quick.timeout = Duration::from_secs(2);
    let runner = ProbeRunner::new(&repo, tree, ProbePolicy::Run(quick));
    let results = runner.run(&[
        probe("calc.py", "spin()\nassert True"),
        probe(
            "calc.py",
            "import sys\nsys.stdout.write('x' * 50_000_000)\nassert add(1, 1) == 0",
        ),
    ]);
    assert_eq!(results[0].outcome, ProbeOutcome::Broken, "{:?}", results[0]);
    assert!(results[0].detail.starts_with("cut off"), "{:?}", results[0]);
    // 50 MB of output is read and dropped as it comes; the probe's result stands.
    assert_eq!(
        results[1].outcome,
        ProbeOutcome::Refuted,
        "{:?}",
        results[1]
    );
}

#[test]
fn an_untrusted_clone_runs_no_probe_and_says_so() {
    let (_d, repo) = repo_with(&[("calc.py", CALC)]);
    let tree = repo.head().unwrap().peel_to_tree().unwrap();
    let policy = ProbePolicy::for_clone(false, settings(None));
    let runner = ProbeRunner::new(&repo, tree, policy);
    let results = runner.run(&[probe("calc.py", "assert add(2, 3) == 5")]);
    assert_eq!(results[0].outcome, ProbeOutcome::Unprobed);
    assert!(
        results[0].detail.contains("not trusted"),
        "{:?}",
        results[0]
    );
}

#[test]
fn rust_probes_run_with_cargo_where_the_verify_command_does() {
    let manifest = "[package]\nname = \"tiny-calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n";
    let lib = "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n";
    let (_d, repo) = repo_with(&[("Cargo.toml", manifest), ("src/lib.rs", lib)]);
    let tree = repo.head().unwrap().peel_to_tree().unwrap();
    let target = tempfile::tempdir().unwrap();
    let mut s = settings(Some("cargo test -q"));
    s.cargo_target = Some(target.path().to_path_buf());
    let runner = ProbeRunner::new(&repo, tree.clone(), ProbePolicy::Run(s));
    let results = runner.run(&[
        probe("src/lib.rs", "assert_eq!(add(2, 3), 5);"),
        probe(
            "src/lib.rs",
            "#[test]\nfn t() { assert_eq!(add(2, -3), 5); }",
        ),
        probe("src/lib.rs", "assert_eq!(sub(2, 3), 5);"),
    ]);
    let outcomes: Vec<ProbeOutcome> = results.iter().map(|r| r.outcome).collect();
    assert_eq!(
        outcomes,
        [
            ProbeOutcome::Confirmed,
            ProbeOutcome::Refuted,
            ProbeOutcome::Broken
        ],
        "{results:#?}"
    );
    assert_eq!(results[0].actual.as_deref(), Some("-1"), "{:?}", results[0]);
    assert_eq!(results[0].expected.as_deref(), Some("5"));
    assert_eq!(results[0].call.as_deref(), Some("add(2, 3)"));
    assert!(
        results[2].detail.contains("does not compile"),
        "{:?}",
        results[2]
    );
    // Without a cargo-based verify command, Rust probes are not run.
    let runner = ProbeRunner::new(&repo, tree, ProbePolicy::Run(settings(Some("make check"))));
    let r = runner.run(&[probe("src/lib.rs", "assert_eq!(add(2, 3), 5);")]);
    assert_eq!(r[0].outcome, ProbeOutcome::Unprobed, "{r:?}");
}

/// `mul` that adds: the code under review, with whatever it does to escape its probe.
const MUL_ADDS: &str = "def mul(a, b):\n    return a + b\n";

#[test]
fn the_code_under_review_cannot_forge_its_outcome() {
    let forgers = [
        // Writes a verdict wherever it can and leaves before any probe runs.
        "import os, sys, glob\nfor f in glob.glob(os.path.join(os.path.dirname(sys.argv[0]), '*')):\n    try:\n        open(f, 'a').write('{\"kind\": \"done\"}\\n')\n    except OSError:\n        pass\nprint('{\"outcome\": \"refuted\"}')\nos._exit(0)\n",
        // A return value equal to everything.
        "class Always:\n    def __eq__(self, other):\n        return True\n    def __bool__(self):\n        return True\n\n\ndef mul(a, b):\n    return Always()\n",
        // An int whose equality is its own.
        "class Evil(int):\n    def __eq__(self, other):\n        return True\n\n\ndef mul(a, b):\n    return Evil(a + b)\n",
    ];
    for (n, module) in forgers.iter().enumerate() {
        let body = if n == 0 {
            format!("{module}{MUL_ADDS}")
        } else {
            module.to_string()
        };
        let (_d, repo) = repo_with(&[("calc.py", &body)]);
        let tree = repo.head().unwrap().peel_to_tree().unwrap();
        let runner = ProbeRunner::new(&repo, tree, ProbePolicy::Run(settings(None)));
        let r = &runner.run(&[probe("calc.py", "assert mul(2, 3) == 6")])[0];
        assert_ne!(r.outcome, ProbeOutcome::Refuted, "forger {n}: {r:?}");
        if n > 0 {
            assert_eq!(r.outcome, ProbeOutcome::Confirmed, "forger {n}: {r:?}");
            // Compared outside as data: a foreign object is not the 6 the probe expects.
            assert_ne!(r.actual.as_deref(), Some("6"), "{r:?}");
        }
    }
}

#[test]
fn a_probe_that_proves_nothing_about_the_change_is_irrelevant() {
    let (_d, repo) = repo_with(&[(
        "calc.py",
        "def mul(a, b):\n    return a * b\n\n\ndef other():\n    return 1\n",
    )]);
    let tree = repo.head().unwrap().peel_to_tree().unwrap();
    let changed: ChangedLines = [("calc.py".to_string(), [2u32].into_iter().collect())].into();
    let runner =
        ProbeRunner::new(&repo, tree, ProbePolicy::Run(settings(None))).about_change(changed, None);
    let results = runner.run(&[
        probe("calc.py", "assert False"),
        probe("calc.py", "assert 1 == 2"),
        probe(
            "calc.py",
            "import calc\ncalc.mul = lambda a, b: 0\nassert calc.mul(2, 3) == 6",
        ),
        probe("calc.py", "assert other() == 2"),
        probe("calc.py", "assert mul(2, 3) == 5"),
        probe("calc.py", "x = mul(2, 3)\nassert x == 5"),
    ]);
    let outcomes: Vec<ProbeOutcome> = results.iter().map(|r| r.outcome).collect();
    use ProbeOutcome::*;
    assert_eq!(
        outcomes,
        [Irrelevant, Irrelevant, Irrelevant, Irrelevant, Confirmed, Confirmed],
        "{results:#?}"
    );
    assert!(
        results[0].detail.starts_with("irrelevant:"),
        "{:?}",
        results[0]
    );
}

#[test]
fn a_probe_that_fails_the_same_way_at_the_base_says_so() {
    let (_d, repo) = repo_with(&[("calc.py", "def first(xs):\n    return xs[:0]\n")]);
    let base = repo.head().unwrap().peel_to_tree().unwrap();
    // The change only respaces the line: the base returns [] for [1] just the same.
    let blob = repo.blob(b"def first(xs):\n    return  xs[:0]\n").unwrap();
    let mut builder = repo.treebuilder(Some(&base)).unwrap();
    builder.insert("calc.py", blob, 0o100644).unwrap();
    let head = repo.find_tree(builder.write().unwrap()).unwrap();
    let changed: ChangedLines = [("calc.py".to_string(), [2u32].into_iter().collect())].into();
    let runner = ProbeRunner::new(&repo, head, ProbePolicy::Run(settings(None)))
        .about_change(changed, Some(base));
    let r = &runner.run(&[probe("calc.py", "assert first([1]) == [1]")])[0];
    assert_eq!(r.outcome, ProbeOutcome::Confirmed, "{r:?}");
    assert!(r.same_at_base(), "{r:?}");
    assert_eq!(r.base.as_ref().unwrap().actual.as_deref(), Some("[]"));
}

/// `mean` as the base has it, and the tree of a change to it (its text `after`), in one
/// repository whose tests call it.
fn changed_mean(after: &str) -> (tempfile::TempDir, Repository, git2::Oid, git2::Oid) {
    const MEAN: &str = "def mean(xs):\n    \"\"\"The mean of xs.\n\n    >>> mean([1, 2])\n    1.5\n    \"\"\"\n    total = 0\n    for x in xs:\n        total += x\n    return total / len(xs)\n";
    let (d, repo) = repo_with(&[
        ("stats.py", MEAN),
        (
            "tests/test_stats.py",
            "from stats import mean\n\n\ndef test_mean():\n    assert mean([2, 4]) == 3\n",
        ),
    ]);
    let (base_id, new) = {
        let base = repo.head().unwrap().peel_to_tree().unwrap();
        let blob = repo.blob(after.as_bytes()).unwrap();
        let mut b = repo.treebuilder(Some(&base)).unwrap();
        b.insert("stats.py", blob, 0o100644).unwrap();
        (base.id(), b.write().unwrap())
    };
    (d, repo, base_id, new)
}

#[test]
fn a_behaviour_diff_shows_a_one_line_bug_and_nothing_for_a_rename() {
    let base_text = "def mean(xs):\n    \"\"\"The mean of xs.\n\n    >>> mean([1, 2])\n    1.5\n    \"\"\"\n    total = 0\n    for x in xs:\n        total += x\n    return total / len(xs)\n";
    let buggy = base_text.replace("for x in xs:", "for x in xs[1:]:");
    let renamed = base_text.replace("total", "acc");
    let changed: ChangedLines = [("stats.py".to_string(), (7..=10).collect())].into();
    for (after, differs) in [(buggy, true), (renamed, false)] {
        let (_d, repo, base, new) = changed_mean(&after);
        let (base, new) = (repo.find_tree(base).unwrap(), repo.find_tree(new).unwrap());
        let runner = ProbeRunner::new(&repo, new, ProbePolicy::Run(settings(None)))
            .about_change(changed.clone(), Some(base));
        let diff = runner.behaviour(&[]).unwrap().unwrap();
        assert_eq!(diff.functions, ["stats.py:mean"]);
        assert!(diff.compared >= 3, "{diff:?}");
        assert_eq!(!diff.differences.is_empty(), differs, "{diff:?}");
        if differs {
            // The tests' own call and the docstring's example are among the inputs shown.
            let calls: Vec<&str> = diff.differences.iter().map(|d| d.call.as_str()).collect();
            assert!(calls.contains(&"mean([2, 4])"), "{calls:?}");
            let d = diff
                .differences
                .iter()
                .find(|d| d.call == "mean([2, 4])")
                .unwrap();
            assert_eq!((d.before.as_str(), d.after.as_str()), ("3.0", "2.0"));
            assert!(diff
                .render()
                .unwrap()
                .contains("These inputs give different results now"));
        }
    }
}

#[test]
fn the_repository_s_tests_run_on_both_sides_and_a_regression_is_named() {
    let base_text = "def mean(xs):\n    total = 0\n    for x in xs:\n        total += x\n    return total / len(xs)\n";
    let buggy = base_text.replace("for x in xs:", "for x in xs[1:]:");
    let (_d, repo, base, new) = changed_mean(&buggy);
    let (base, new) = (repo.find_tree(base).unwrap(), repo.find_tree(new).unwrap());
    let runner = ProbeRunner::new(&repo, new, ProbePolicy::Run(settings(None)))
        .about_change(ChangedLines::new(), Some(base));
    let runs = runner.tests(None).unwrap().unwrap();
    assert_eq!(runs.regressed.len(), 1, "{runs:?}");
    assert!(runs.regressed[0].0.contains("test_mean"), "{runs:?}");
    assert!(runs.fixed.is_empty());
    assert_eq!(runs.findings()[0].kind, REGRESSED_TEST);
}

/// A correct `mul` in a new file: every line of it is added.
fn new_mul() -> (tempfile::TempDir, Repository, ChangedLines) {
    let text = "def mul(a, b):\n    return a * b\n";
    let (d, repo) = repo_with(&[("calc.py", text), ("src/impl.py", text)]);
    let changed: ChangedLines = [
        ("calc.py".to_string(), [1u32, 2].into_iter().collect()),
        ("src/impl.py".to_string(), [1u32, 2].into_iter().collect()),
    ]
    .into();
    (d, repo, changed)
}

#[test]
fn a_vacuous_probe_never_confirms_against_a_new_file() {
    let (_d, repo, changed) = new_mul();
    let tree = repo.head().unwrap().peel_to_tree().unwrap();
    let runner =
        ProbeRunner::new(&repo, tree, ProbePolicy::Run(settings(None))).about_change(changed, None);
    let results = runner.run(&[
        probe("calc.py", "import src.impl\nassert False"),
        probe("calc.py", "x = mul(2, 3)\nassert False"),
        probe("calc.py", "assert mul(2, 3) == 6 and False"),
        probe("calc.py", "y = 5\nassert mul(2, 3) == y"),
        // What a probe about the change looks like: a value mul computed, compared.
        probe("calc.py", "assert mul(2, 3) == 7"),
        probe("calc.py", "x = mul(2, 3)\nassert x == 7"),
        probe("calc.py", "assert not mul(2, 3) == 6"),
    ]);
    let outcomes: Vec<ProbeOutcome> = results.iter().map(|r| r.outcome).collect();
    use ProbeOutcome::*;
    assert_eq!(
        outcomes,
        [Irrelevant, Irrelevant, Irrelevant, Confirmed, Confirmed, Confirmed, Confirmed],
        "{results:#?}"
    );
    assert_eq!(results[4].actual.as_deref(), Some("6"), "{:?}", results[4]);
    assert_eq!(
        results[4].expected.as_deref(),
        Some("7"),
        "{:?}",
        results[4]
    );
}

#[test]
fn code_that_walks_to_the_runner_cannot_answer_for_the_probe() {
    // `mul` adds; when called it climbs the stack to every function of the runner it can
    // find and calls each the ways a result could be forged: a "done", a passing answer
    // for the question being asked, and the old runner's `finish`.
    let forger = "import sys\n\n\ndef mul(a, b):\n    f = sys._getframe()\n    while f is not None:\n        for scope in (f.f_locals, f.f_globals):\n            for name, value in list(scope.items()):\n                if callable(value) and name in ('answer', 'emit', 'finish'):\n                    for kw in ({'kind': 'done'}, {'k': f.f_locals.get('k', 0), 'kind': 'value', 'value': {'t': 'int', 'v': '6'}, 'lines': []}):\n                        try:\n                            value(**kw)\n                        except BaseException:\n                            pass\n        f = f.f_back\n    return a + b\n";
    let (_d, repo) = repo_with(&[("calc.py", forger)]);
    let tree = repo.head().unwrap().peel_to_tree().unwrap();
    let changed: ChangedLines = [("calc.py".to_string(), (1..=16).collect())].into();
    for runner in [
        ProbeRunner::new(&repo, tree.clone(), ProbePolicy::Run(settings(None))),
        ProbeRunner::new(&repo, tree.clone(), ProbePolicy::Run(settings(None)))
            .about_change(changed.clone(), None),
    ] {
        let r = &runner.run(&[probe("calc.py", "assert mul(2, 3) == 6")])[0];
        assert_ne!(r.outcome, ProbeOutcome::Refuted, "{r:?}");
        assert!(
            matches!(r.outcome, ProbeOutcome::Confirmed | ProbeOutcome::Broken),
            "{r:?}"
        );
    }
}

#[test]
fn a_vacuous_rust_probe_never_confirms() {
    let manifest = "[package]\nname = \"tiny-mul\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n";
    let lib = "pub fn mul(a: i32, b: i32) -> i32 {\n    a * b\n}\n";
    let (_d, repo) = repo_with(&[("Cargo.toml", manifest), ("src/lib.rs", lib)]);
    let tree = repo.head().unwrap().peel_to_tree().unwrap();
    let target = tempfile::tempdir().unwrap();
    let mut s = settings(Some("cargo test -q"));
    s.cargo_target = Some(target.path().to_path_buf());
    let changed: ChangedLines = [("src/lib.rs".to_string(), (1..=3).collect())].into();
    let runner = ProbeRunner::new(&repo, tree, ProbePolicy::Run(s)).about_change(changed, None);
    let results = runner.run(&[
        probe("src/lib.rs", "let _ = mul(2, 3);\nassert!(false);"),
        probe("src/lib.rs", "assert!(mul(2, 3) == 6 && false);"),
        probe("src/lib.rs", "let x = mul(2, 3);\nassert_eq!(x, 7);"),
    ]);
    let outcomes: Vec<ProbeOutcome> = results.iter().map(|r| r.outcome).collect();
    use ProbeOutcome::*;
    assert_eq!(outcomes[0], Irrelevant, "{results:#?}");
    assert_eq!(outcomes[2], Confirmed, "{results:#?}");
    // `mul(2, 3) == 6 && false` names mul on the failing line: the text cannot tell the
    // constant from the call, so it is kept as the change's (a Rust probe is compiled, not
    // traced).
    assert_ne!(outcomes[1], Refuted, "{results:#?}");
}
