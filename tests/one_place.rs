//! Facts defined once in the library, read back from every place that states them: what
//! the exit codes mean (`git_triad::exit`).
//! A place that is generated from the definition is checked to still be; one that cannot be
//! (the README, a prompt) is checked to agree with it.

use std::path::Path;

use clap::CommandFactory;
use git_triad::cli::Cli;
use git_triad::exit::ExitCode;

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
    let man = git_triad::cli::completions::man_pages().unwrap();
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
