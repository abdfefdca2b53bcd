//! What `git triad chamber` and each of its subcommands take.

use clap::{Args, Subcommand, ValueEnum};

use crate::chamber::FounderRole;

/// Ask two or three models a question that has no single right answer, and let a
/// different arbiter synthesize (seed 003).
///
/// The panel answers independently (none sees another); written rules decide whether it
/// disagrees, and only then is there one round of cross-examination; the arbiter weighs
/// the evidence, keeps the minority and signs its name, or says honestly that there is no
/// consensus. Every phase is a commit under refs/triad/chamber/<id>
/// (`git show refs/triad/chamber/<id>:trace.md`).
///
/// Use it for a design choice, a scope cut, whether a flagged risk is real, an estimate.
/// A session costs about two calls per panelist and two for the arbiter; the caps are
/// chamber.sessions_per_day (10), chamber.session_usd ($3.00, checked before every call)
/// and chamber.monthly_usd ($100).
///
/// Example: git triad chamber ask "Split the parser into its own crate now?" --context src/parse.rs
#[derive(Debug, Args)]
pub struct ChamberArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: ChamberCommand,
}

/// The chamber's subcommands.
#[derive(Debug, Subcommand)]
pub enum ChamberCommand {
    /// Open a session on a question and run it to its synthesis.
    Ask(AskArgs),
    /// List the sessions, newest first.
    List(ListArgs),
    /// Show one session's whole trace: every answer, rule, round, action and cost.
    Show(ShowArgs),
    /// Give the founder's structured input (contributor, verifier, challenger) and go on.
    Respond(RespondArgs),
    /// Record the founder's action on a synthesis: accepted, revised or rejected.
    Act(ActArgs),
    /// Run the remaining phases of a session that stopped (a kill, a cap since raised).
    Resume(ResumeArgs),
    /// What the chamber decided and spent, and whether an arbiter-panelist wins too often.
    Stats(StatsArgs),
}

/// Criticality of a session you open (Level 1 needs no chamber).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum LevelArg {
    /// Auto-quorum, for reversible decisions: arbiter confidence 8/10 or more accepts,
    /// less escalates to Level 3.
    #[value(name = "2")]
    Two,
    /// With the founder: the estimated cost is shown and approved first.
    #[value(name = "3")]
    #[default]
    Three,
}

/// Open a session and run it.
#[derive(Debug, Default, Args)]
pub struct AskArgs {
    /// The decision to deliberate, as a question.
    pub question: String,
    /// Context every panelist reads: a TaskSpec id, a file, or a revision (repeatable).
    /// Private files (privacy.withhold, key-shaped content) are refused.
    #[arg(long, value_name = "FILE|REV|TASK")]
    pub context: Vec<String>,
    /// The panel: two or three distinct registry models (default chamber.panel, else the
    /// distinct models of the roles).
    #[arg(long, value_name = "M1,M2[,M3]", value_delimiter = ',')]
    pub panel: Vec<String>,
    /// The arbiter (default chamber.arbiter, else the first arbiter-role model).
    #[arg(long, value_name = "M")]
    pub arbiter: Option<String>,
    /// Criticality: 2 (auto-quorum) or 3 (with you).
    #[arg(long, value_enum, default_value_t = LevelArg::Three)]
    pub level: LevelArg,
    /// Your part at Level 3: approver (act on the synthesis), challenger (challenge it, up
    /// to two rounds), contributor (your input is weighed), verifier (your claim is checked).
    #[arg(long, value_enum, value_name = "ROLE")]
    pub founder_role: Option<FounderRole>,
    /// Approve a Level 3 session's estimated cost without asking (for scripts).
    #[arg(long)]
    pub yes: bool,
    /// How to print it (`--format json` or `--json`).
    #[command(flatten)]
    pub output: crate::cli::helper::Output,
}

/// Output formats of `chamber show` and `chamber list`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TraceFormat {
    /// For the terminal.
    Text,
    /// For a pull request or a decision record.
    Markdown,
    /// The session record itself.
    Json,
}

/// List the sessions.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = TraceFormat::Text)]
    pub format: TraceFormat,
}

/// Show one session.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The session id (a unique prefix is enough).
    pub id: String,
    /// Output format.
    #[arg(long, value_enum, default_value_t = TraceFormat::Text)]
    pub format: TraceFormat,
}

/// The founder's structured input.
#[derive(Debug, Args)]
pub struct RespondArgs {
    /// The session id.
    pub id: String,
    /// Your position in a few words.
    #[arg(long)]
    pub stance: String,
    /// Why.
    #[arg(long)]
    pub reasoning: String,
    /// How sure you are, 1 to 10.
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=10))]
    pub confidence: u8,
    /// What you want weighed: a file, a measurement, a link (repeatable, at most five).
    #[arg(long, value_name = "POINTER")]
    pub evidence: Vec<String>,
    /// More context for a challenge round: a TaskSpec id, a file or a revision (repeatable).
    #[arg(long, value_name = "FILE|REV|TASK")]
    pub context: Vec<String>,
    /// Approve the next phases' cost without asking.
    #[arg(long)]
    pub yes: bool,
}

/// The founder's action on a synthesis.
#[derive(Debug, Args)]
pub struct ActArgs {
    /// The session id.
    pub id: String,
    /// What you did with the synthesis.
    #[arg(value_enum)]
    pub action: ActionArg,
    /// Why, or what you changed.
    #[arg(long)]
    pub note: Option<String>,
}

/// Actions on a synthesis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ActionArg {
    /// Taken as it is.
    Accepted,
    /// Taken with changes (say which with --note).
    Revised,
    /// Not taken.
    Rejected,
}

/// Resume a session.
#[derive(Debug, Args)]
pub struct ResumeArgs {
    /// The session id.
    pub id: String,
    /// Approve the remaining phases' cost without asking.
    #[arg(long)]
    pub yes: bool,
}

/// The chamber's figures.
#[derive(Debug, Args)]
pub struct StatsArgs {
    /// How to print it (`--format json` or `--json`).
    #[command(flatten)]
    pub output: crate::cli::helper::Output,
}
