//! What `git triad bench` takes: its flags and report formats, read by the measuring and
//! the comparison alike.

use clap::{Args, ValueEnum};

use crate::config::Role;

/// Output formats of the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    /// A table for the terminal.
    Text,
    /// A markdown table.
    Markdown,
    /// Every measurement with its raw figures.
    Json,
}

/// Measure models on the built-in task set, graded by facts, for routing by fitness.
///
/// Build tasks (architect, implementer, refactorer) are asked exactly as a run asks its
/// stage; each answer is applied in a temporary git repository and graded by hidden Python
/// tests and by the files it must and must not change. The tests run the models' code with
/// python3 on this machine, in a temporary directory, without your keys in its environment.
/// Review cases (arbiter and verifier, graded alike) are real diffs with an injected bug
/// (off-by-one, wrong operator, missing edge case, hallucinated API, security slip) or clean
/// controls: a bug counts as caught when an issue is anchored on its lines, a clean change
/// rejected is a false positive. With two or more models, each reviewer also judges failed
/// build answers, its own and others': the self-preference figure is how much more often it
/// lets its own through.
///
/// Results are kept per user in $XDG_DATA_HOME/git-triad/fitness.json (else
/// ~/.local/share/git-triad/) with model, date, task-set version and raw figures; they stay
/// fresh for 30 days. `git triad models list` shows them; roles set to "auto" and
/// `git triad run --routing` pick models by them.
///
/// Examples: git triad bench --models gpt-5,claude-sonnet-4-5 --repeat 2;
/// git triad -c profile=local bench --tasks quick; git triad bench --report --format markdown;
/// git triad bench --compare --task fix-login --configs loop,bookend --repeat 3
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Models to measure, comma-separated (default: the models of the active profile's roles).
    #[arg(long, value_delimiter = ',', value_name = "M1,M2")]
    pub models: Vec<String>,
    /// Roles to measure, comma-separated: architect, implementer, refactorer, verifier, arbiter
    /// (default: all).
    #[arg(long, value_delimiter = ',', value_name = "ROLE,...")]
    pub roles: Vec<Role>,
    /// `standard` (every task), `quick` (one build task per role, one bug and one clean
    /// review), or task ids, comma-separated.
    #[arg(long, value_name = "SET", default_value = "standard")]
    pub tasks: String,
    /// Answers per task; repeats steady the figures of models that do not answer the same
    /// way twice.
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=20))]
    pub repeat: u32,
    /// Spending cap for the whole bench in USD (default: budget.run_usd).
    #[arg(long, value_name = "USD", value_parser = crate::cli::helper::parse_budget)]
    pub budget: Option<f64>,
    /// Show the stored measurements instead of measuring; no model is called.
    #[arg(long, conflicts_with_all = ["share", "import"])]
    pub report: bool,
    /// Commit your measurements to refs/triad/fitness in this repository, to push and share;
    /// no model is called.
    #[arg(long, conflicts_with = "import")]
    pub share: bool,
    /// Take the measurements of this repository's refs/triad/fitness (fetched from a
    /// teammate) into your own where they are newer; never done without you asking.
    #[arg(long)]
    pub import: bool,
    /// Format of the report, and of the summary printed after measuring.
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = ReportFormat::Text)]
    pub format: ReportFormat,
    /// Instead of measuring the built-in tasks: run this repository's committed tasks as the
    /// pipeline under each arbiter mode and as a plain test loop given the same model (the
    /// pipeline's implement stage's), the same information (the task, the files, the verify
    /// command's failure at the base) and as many model calls as the pipeline made, and show
    /// per task what each fixed and claimed, its false successes, calls and wall time. Each
    /// run leaves its branch; a result is judged by facts (a non-empty change the verify
    /// command and `--check` pass), never by a model's word.
    #[arg(long, conflicts_with_all = ["report", "share", "import"])]
    pub compare: bool,
    /// With `--compare`: the task to run (repeatable; default: every committed TaskSpec).
    #[arg(long, value_name = "SLUG", requires = "compare")]
    pub task: Vec<String>,
    /// With `--compare`: the configurations, comma-separated, from loop, off, final,
    /// bookend, full (default: all).
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "C1,C2",
        requires = "compare"
    )]
    pub configs: Vec<String>,
    /// With `--compare`: a command of yours that checks a result beyond the task's own
    /// tests (hidden from the models), run in the box on a scratch copy of each result with
    /// the verify command's timeout; exit 0 means right. A claimed success it fails is a
    /// false success.
    #[arg(long, value_name = "COMMAND", requires = "compare")]
    pub check: Option<String>,
}
