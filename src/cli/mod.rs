//! The command line: global options, one module per subcommand, dispatch.

pub mod bench;
mod capture;
pub mod chamber;
pub mod completions;
pub mod config;
mod context;
pub mod doctor;
pub mod error;
pub(crate) mod explain;
pub mod helper;
pub mod hook;
pub mod init;
pub mod local;
pub mod log;
pub mod models;
pub mod notes;
pub mod r#override;
mod progress;
pub mod reconcile;
pub mod review;
pub mod run;
pub mod session;
pub mod show;
pub mod task;
pub mod usage;

use std::path::{Path, PathBuf};

use clap::{CommandFactory, Parser, Subcommand};

pub use context::{ok, out, runtime, say, say_each, Context};
pub use error::{CommandError, CommandResult};

use crate::exit::ExitCode;
use crate::session::product::{answers_text, Answer, Failure, Heard, Outcome, Product, Request};

/// git triad: several AI models build your change; a different model reviews every stage.
///
/// Stages (architect, implement, refactor, verify) become commits on a scratch branch;
/// the arbiter's verdicts become git notes (`git log --notes=triad`). `git triad -h` prints
/// this help; `git triad --help` opens it as a man page (git turns it into `man git-triad`).
#[derive(Debug, Parser)]
#[command(
    name = "git-triad",
    bin_name = "git triad",
    version,
    propagate_version = true,
    max_term_width = 100,
    after_help = after_help()
)]
pub struct Cli {
    /// Run as if started in <PATH> (like `git -C`).
    #[arg(
        short = 'C',
        global = true,
        value_name = "PATH",
        help_heading = "Global options"
    )]
    pub dir: Option<PathBuf>,
    /// Set a config value for this command, e.g. `-c arbiter.mode=full` (repeatable).
    #[arg(
        short = 'c',
        long = "config",
        global = true,
        value_name = "KEY=VALUE",
        help_heading = "Global options"
    )]
    pub overrides: Vec<String>,
    /// More log output on stderr (-v info, -vv debug, -vvv trace); RUST_LOG also works.
    #[arg(short, long, global = true, action = clap::ArgAction::Count, help_heading = "Global options")]
    pub verbose: u8,
    /// Only errors on stderr.
    #[arg(short, long, global = true, help_heading = "Global options")]
    pub quiet: bool,
    /// Plain progress lines, not the live terminal view.
    #[arg(long, global = true, help_heading = "Global options")]
    pub no_tui: bool,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// What `git triad -h` and the man page end with: how to start, and what every exit code
/// means (from [`ExitCode::summary`]).
fn after_help() -> String {
    format!(
        "Start: git triad init; git triad task new <task> --title \"...\"; edit and commit \
.triad/tasks/<task>.toml; git triad run --task <task>; git log --notes=triad triad/<task>/<run>.\n\n{}",
        ExitCode::summary()
    )
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run Architect → Implement → Refactor → Verify on a committed TaskSpec.
    Run(Box<run::RunArgs>),
    /// Continue a run that stopped (crash, kill, provider down, budget, your answers).
    Resume(run::ResumeArgs),
    /// Check a finished run against its TaskSpec again (Implementation Summary Reconciliation).
    Reconcile(reconcile::ReconcileArgs),
    /// Review any change (a commit, a range, the index, the working tree) with the arbiter.
    Review(Box<review::ReviewArgs>),
    /// List runs, or show one run's stages, verdicts, issues and cost.
    Log(log::LogArgs),
    /// TaskSpecs and the task state machine: new, list, show, answer, defer, close.
    Task(task::TaskArgs),
    /// Start, stop or inspect the local llama.cpp servers (the offline default).
    Local(local::LocalArgs),
    /// Set up this repository: .triad/, verdict notes config, hook shims, trust.
    Init(init::InitArgs),
    /// Show the verdict history of a commit (default HEAD).
    Show(show::ShowArgs),
    /// Overrule a commit's verdict, on the record (appended; nothing is deleted).
    Override(r#override::OverrideArgs),
    /// Share verdict notes with a remote, or reattach them after a squash or cherry-pick.
    Notes(notes::NotesArgs),
    /// Entry points of the git hooks (run by the shims `git triad init` installs).
    #[command(hide = true)]
    Hook(hook::HookArgs),
    /// Show the effective configuration and where each value came from.
    Config(config::ConfigArgs),
    /// Ask a panel of models a decision with no single right answer; an arbiter synthesizes.
    Chamber(chamber::ChamberArgs),
    /// Talk to a manager that summons orchestrators to do long work through git triad.
    Session(session::SessionArgs),
    /// List the model registry, or check that a model answers.
    Models(models::ModelsArgs),
    /// Measure models on the built-in task set (graded by facts), or report their fitness.
    Bench(bench::BenchArgs),
    /// What the models cost, per day, month, model, role and run, against the caps.
    Usage(usage::UsageArgs),
    /// Show which layers of the box model-written code runs in hold on this machine.
    Doctor(doctor::DoctorArgs),
    /// Print a shell completion script.
    Completions(completions::CompletionsArgs),
    /// Write or install the man page (what `git triad --help` opens).
    Man(completions::ManArgs),
}

/// Parses the command line (clap prints `-h` and usage errors and exits). First, every
/// command but a hook's keeps the man pages where `man` finds them: `git triad --help` is
/// git's `man git-triad`, which never runs this binary, so the page must already be there
/// (the hooks, which git runs on every push and rewrite, do not pay for the check).
pub fn parse() -> Cli {
    if std::env::args_os().nth(1).is_none_or(|a| a != "hook") {
        completions::keep_man_pages(Cli::command);
    }
    Cli::parse()
}

/// Runs a parsed command line.
pub fn run(cli: Cli) -> CommandResult {
    // Before any key is read or any command started: no process of ours reads this one's
    // memory or environment through /proc.
    crate::sandbox::harden_self();
    // Started by git (`git triad ...`): end with it, however it ends.
    crate::process::end_with_git_parent();
    let cwd = match &cli.dir {
        Some(d) => std::fs::canonicalize(d)
            .map_err(|e| CommandError::usage(format!("cannot use -C {}: {e}", d.display())))?,
        None => std::env::current_dir()?,
    };
    let mut ctx = Context::new(cwd, cli.overrides.clone());
    ctx.quiet = cli.quiet;
    ctx.no_tui = cli.no_tui;
    dispatch(&ctx, &cli.command)
}

/// Runs one subcommand in `ctx`.
fn dispatch(ctx: &Context, command: &Command) -> CommandResult {
    match command {
        Command::Run(args) => run::run(ctx, args),
        Command::Resume(args) => run::resume(ctx, args),
        Command::Review(args) => review::run(ctx, args),
        Command::Reconcile(args) => reconcile::run(ctx, args),
        Command::Log(args) => log::run(ctx, args),
        Command::Task(args) => task::run(ctx, args),
        Command::Local(args) => local::run(ctx, args),
        Command::Init(args) => init::run(ctx, args),
        Command::Show(args) => show::run(ctx, args),
        Command::Override(args) => r#override::run(ctx, args),
        Command::Notes(args) => notes::run(ctx, args),
        Command::Hook(args) => hook::run(ctx, args),
        Command::Config(args) => config::run(ctx, args),
        Command::Chamber(args) => chamber::run(ctx, args),
        Command::Session(args) => session::run(
            ctx,
            args,
            std::sync::Arc::new(InProcess {
                overrides: ctx.overrides.clone(),
                env: ctx.env.clone(),
            }),
        ),
        Command::Models(args) => models::run(ctx, args),
        Command::Bench(args) => bench::run(ctx, args),
        Command::Usage(args) => usage::run(ctx, args),
        Command::Doctor(args) => doctor::run(ctx, args),
        Command::Completions(args) => completions::run_completions(ctx, args, Cli::command),
        Command::Man(args) => completions::run_man(args, Cli::command),
    }
}

/// The command layer as a session's [`Product`]: each request is the subcommand a person
/// would type, built as its typed arguments and run in this process on the session's
/// worktree, with no terminal (nothing is asked on it, nothing drawn) and its words kept
/// for the answer.
pub struct InProcess {
    /// The session's `-c` overrides, which every request runs under.
    pub overrides: Vec<String>,
    /// The session's environment, which every request runs under (its keys, its user
    /// configuration, its data directories).
    pub env: Vec<(String, String)>,
}

impl Product for InProcess {
    fn call(&self, worktree: &Path, req: &Request, heard: Heard) -> Answer {
        let mut ctx = Context::new(worktree.to_path_buf(), self.overrides.clone());
        ctx.env = self.env.clone();
        ctx.headless = true;
        ctx.no_tui = true;
        let command = command_of(req);
        let (result, out, mut said) = capture::during(heard, || typed(&ctx, command));
        match result {
            Ok((exit, outcome)) => Answer {
                exit,
                outcome: Ok(outcome),
                out,
                said,
            },
            Err(e) => {
                said.push_str(&e.render());
                let redacted = |t: &str| crate::safe::text(&crate::redact::redact(t)).into_owned();
                Answer {
                    exit: e.kind,
                    outcome: Err(Failure {
                        error: redacted(&e.error.to_string()),
                        causes: e.causes().iter().map(|c| redacted(c)).collect(),
                        hints: e.hints.iter().map(|h| redacted(h)).collect(),
                    }),
                    out,
                    said,
                }
            }
        }
    }
}

/// Runs `command` as its subcommand does, printing what it prints, and gives back the
/// operation's typed outcome: the runs of `run` and `resume`, the review of `review`, the
/// session of `chamber ask`, the tasks of `task list`, the runs of `log`, the task of
/// `task answer`.
fn typed(ctx: &Context, command: Command) -> CommandResult<(ExitCode, Outcome)> {
    match command {
        Command::Run(args) => {
            let done = run::run_typed(ctx, &args)?;
            Ok((done.exit, Outcome::Ran(done.runs)))
        }
        Command::Resume(args) => {
            let ran = run::resume_typed(ctx, &args)?;
            Ok((ran.exit, Outcome::Ran(vec![ran])))
        }
        Command::Review(args) => Ok(match review::reviewed(ctx, &args)? {
            Some(r) => (r.exit, Outcome::Reviewed(Box::new(r))),
            None => (ExitCode::Ok, Outcome::Nothing),
        }),
        Command::Log(args) => {
            let log::Logged { runs, corrupt } = log::logged(ctx, &args)?;
            Ok((ExitCode::Ok, Outcome::Runs { runs, corrupt }))
        }
        Command::Task(task::TaskArgs {
            command: task::TaskCommand::List(args),
        }) => Ok((
            ExitCode::Ok,
            Outcome::Tasks(task::list::listed(ctx, &args)?),
        )),
        Command::Task(task::TaskArgs {
            command: task::TaskCommand::Answer(args),
        }) => {
            let answered = task::answer::answered(ctx, &args)?;
            Ok((ExitCode::Ok, Outcome::Answered(Box::new(answered))))
        }
        Command::Chamber(chamber::ChamberArgs {
            command: chamber::ChamberCommand::Ask(args),
        }) => {
            let chambered = chamber::asked(ctx, &args)?;
            let exit = chamber::finish(&chambered, args.output.json())?;
            Ok((exit, Outcome::Chambered(Box::new(chambered))))
        }
        // command_of makes none other: every request of a session's tools is above.
        _ => Err(CommandError::failure(
            "this command is not one of a session's requests",
        )),
    }
}

/// The subcommand `req` is, with its typed arguments (every other flag at its default).
fn command_of(req: &Request) -> Command {
    let log = |run_id: Option<&String>| {
        Command::Log(log::LogArgs {
            run_id: run_id.cloned(),
            format: log::LogFormat::default(),
        })
    };
    match req {
        Request::ListTasks => Command::Task(task::TaskArgs {
            command: task::TaskCommand::List(task::list::ListArgs {
                output: helper::Output::default(),
            }),
        }),
        Request::ListRuns => log(None),
        Request::ShowRun { run_id } => log(Some(run_id)),
        Request::RunPipeline { task, workflow } => Command::Run(Box::new(run::RunArgs {
            task: task.clone(),
            workflow: *workflow,
            ..Default::default()
        })),
        Request::ResumeRun { run_id } => Command::Resume(run::ResumeArgs {
            run_id: run_id.clone(),
            ..Default::default()
        }),
        Request::AnswerTask { task, answers } => Command::Task(task::TaskArgs {
            command: task::TaskCommand::Answer(task::answer::AnswerArgs {
                slug: task.clone(),
                answer: Some(answers_text(answers)),
                file: None,
            }),
        }),
        Request::ReviewRange { range } => Command::Review(Box::new(review::ReviewArgs {
            range: Some(range.clone()),
            ..Default::default()
        })),
        Request::OpenChamber { question, context } => Command::Chamber(chamber::ChamberArgs {
            command: chamber::ChamberCommand::Ask(chamber::AskArgs {
                question: question.clone(),
                context: context.clone(),
                ..Default::default()
            }),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workflow_name::Workflow;

    /// A pipeline arm of `bench --compare`, run in this process, is the run `git triad run
    /// --task <slug> --arbiter <mode>` asks for, flag for flag (it used to be that command,
    /// spawned).
    #[test]
    fn a_compare_arm_is_the_run_a_person_types() {
        for mode in crate::config::ArbiterMode::ALL.map(crate::config::ArbiterMode::as_str) {
            let typed = Cli::try_parse_from(["git-triad", "run", "--task", "t", "--arbiter", mode])
                .unwrap();
            let Command::Run(args) = typed.command else {
                panic!("parsed as another command")
            };
            assert_eq!(
                format!("{:?}", bench::compare::arm_request("t", mode)),
                format!("{:?}", args.request()),
                "{mode}"
            );
        }
    }

    /// Each session request is exactly the command a person would type for it: its typed
    /// arguments, with every flag it does not set at the value clap gives when it is left
    /// out (so a default changed in one place cannot make a session's run differ).
    #[test]
    fn a_session_request_is_the_command_a_person_types() {
        let cases: Vec<(Request, Vec<&str>)> = vec![
            (Request::ListTasks, vec!["task", "list"]),
            (Request::ListRuns, vec!["log"]),
            (
                Request::ShowRun {
                    run_id: "r1".into(),
                },
                vec!["log", "r1"],
            ),
            (
                Request::RunPipeline {
                    task: "add-x".into(),
                    workflow: Workflow::Tournament,
                },
                vec!["run", "--task", "add-x", "--workflow", "tournament"],
            ),
            (
                Request::ResumeRun {
                    run_id: "r1".into(),
                },
                vec!["resume", "r1"],
            ),
            (
                Request::AnswerTask {
                    task: "add-x".into(),
                    answers: vec![("Which?\nThis one".into(), "B".into())],
                },
                vec!["task", "answer", "add-x", "Q: Which? This one\nA: B\n\n"],
            ),
            (
                Request::ReviewRange {
                    range: "HEAD~2..HEAD".into(),
                },
                vec!["review", "HEAD~2..HEAD"],
            ),
            (
                Request::OpenChamber {
                    question: "-why?".into(),
                    context: vec!["src/a.rs".into()],
                },
                vec!["chamber", "ask", "--context", "src/a.rs", "--", "-why?"],
            ),
        ];
        for (req, argv) in cases {
            let typed = Cli::try_parse_from(std::iter::once("git-triad").chain(argv.clone()))
                .unwrap_or_else(|e| panic!("{argv:?}: {e}"));
            assert_eq!(
                format!("{:?}", command_of(&req)),
                format!("{:?}", typed.command),
                "{req:?}"
            );
        }
    }
}
