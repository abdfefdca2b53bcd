//! Facts defined once in the library, read back from every place that states them: what
//! the exit codes mean (`git_triad::exit`) and which workflows exist (`git_triad::workflow_name`).
//! A place that is generated from the definition is checked to still be; one that cannot be
//! (the README, a prompt) is checked to agree with it.

use std::path::Path;

use clap::{CommandFactory, Parser};
use git_triad::cli::{Cli, Command};
use git_triad::exit::ExitCode;
use git_triad::workflow_name::Workflow;

/// A file of the package, as text.
fn read(rel: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `text` with every run of blanks and line breaks one space, as wrapped help reads.
fn unwrapped(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The help text of `git triad <path…>` (`-h`).
fn help(path: &[&str]) -> String {
    let mut cmd = Cli::command();
    cmd.build();
    let mut at = &mut cmd;
    for name in path {
        at = at
            .find_subcommand_mut(name)
            .unwrap_or_else(|| panic!("no subcommand {name}"));
    }
    at.render_help().to_string()
}

#[test]
fn exit_codes_mean_the_same_everywhere() {
    let each: Vec<String> = ExitCode::ALL
        .iter()
        .map(|c| format!("{} {}", c.code(), c.meaning()))
        .collect();

    // `git triad -h` ends with the summary; the man page is rendered from the same command.
    let summary = ExitCode::summary();
    let main = unwrapped(&help(&[]));
    assert!(main.contains(&summary), "{main}");
    let man = git_triad::cli::completions::man_pages(
        <git_triad::cli::Cli as clap::CommandFactory>::command,
    )
    .unwrap();
    let page = unwrapped(&String::from_utf8(man[0].1.clone()).unwrap());
    assert!(page.contains(&summary), "{page}");

    // The README's table: one row per code, its meaning word for word, in order.
    let readme = read("README.md");
    let table = readme
        .split("## Exit codes")
        .nth(1)
        .expect("README.md has an `## Exit codes` section");
    let rows: Vec<String> = table
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            cells[1]
                .parse::<i32>()
                .ok()
                .map(|code| format!("{code} {}", cells[2]))
        })
        .collect();
    assert_eq!(rows, each, "README.md's exit codes");
}

#[test]
fn every_workflow_is_accepted_everywhere() {
    for w in Workflow::ALL {
        let name = w.as_str();
        // The command line.
        let cli = Cli::try_parse_from(["git-triad", "run", "--task", "t", "--workflow", name])
            .unwrap_or_else(|e| panic!("--workflow {name}: {e}"));
        match cli.command {
            Command::Run(args) => assert_eq!(args.workflow, w),
            other => panic!("parsed as {other:?}"),
        }
    }
    // What `--workflow` defaults to, and the names it refuses.
    let cli = Cli::try_parse_from(["git-triad", "run", "--task", "t"]).unwrap();
    assert!(matches!(cli.command, Command::Run(args) if args.workflow == Workflow::default()));
    assert!(
        Cli::try_parse_from(["git-triad", "run", "--task", "t", "--workflow", "relay"]).is_err()
    );

    // The session tools: `run_pipeline` offers exactly the registered names.
    let tools = git_triad::session::tools::orchestrator_tools();
    let run = tools
        .iter()
        .find(|t| t.name == "run_pipeline")
        .expect("the orchestrator has run_pipeline");
    let offered: Vec<&str> = run.parameters["properties"]["workflow"]["enum"]
        .as_array()
        .expect("the workflow argument is an enum")
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(offered, Workflow::NAMES, "run_pipeline's workflows");
    // ... and a call with each becomes a typed request for that workflow.
    use git_triad::session::product::Request;
    for w in Workflow::ALL {
        let asked = serde_json::json!({"task": "t", "workflow": w.as_str()});
        assert_eq!(
            Request::of("run_pipeline", &asked),
            Ok(Some(Request::RunPipeline {
                task: "t".into(),
                workflow: w
            })),
            "run_pipeline with {w}"
        );
    }

    // No configuration setting names a workflow today, so configuration validation has
    // none to accept; the first that does reads `Workflow`'s `FromStr`.

    // What people and models read: `run -h`, the README's command table, the orchestrator's
    // prompt.
    let run_help = help(&["run"]);
    let readme = read("README.md");
    let listed: Vec<&str> = readme
        .split("`--workflow ")
        .nth(1)
        .and_then(|rest| rest.split([' ', '`']).next())
        .expect("README.md lists the workflows of `run`")
        .split("\\|")
        .collect();
    assert_eq!(listed, Workflow::NAMES, "README.md's `--workflow` list");
    let prompt = read("config/prompts/orchestrator.md");
    let run_pipeline = prompt
        .split("- `run_pipeline(")
        .nth(1)
        .and_then(|rest| rest.split("\n- ").next())
        .expect("the orchestrator's prompt explains run_pipeline");
    for name in Workflow::NAMES {
        assert!(run_help.contains(name), "`run -h` does not name {name}");
        assert!(
            run_pipeline.contains(name),
            "the orchestrator's prompt does not offer {name}"
        );
    }
}
