//! `git triad completions` and `git triad man`.

use std::path::PathBuf;

use clap::{Args, CommandFactory};
use clap_complete::Shell;

use super::{ok, out, Cli, CommandError, CommandResult};

/// Print a completion script for a shell.
///
/// Example: `git triad completions bash > ~/.local/share/bash-completion/completions/git-triad`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: Shell,
}

/// Write the man page, generated from this command line's own definitions.
///
/// `git triad --help` makes git look up the `git-triad` man page: `--install` puts it where
/// `man` finds it for a binary installed by cargo (`<bin>/../share/man/man1`).
#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write `git-triad.1` (and one page per subcommand) into this directory.
    #[arg(long, value_name = "DIR", conflicts_with = "install")]
    pub output: Option<PathBuf>,
    /// Install into `<dir of git-triad>/../share/man/man1`.
    #[arg(long)]
    pub install: bool,
}

/// Runs `git triad completions`.
pub fn run_completions(args: &CompletionsArgs) -> CommandResult {
    let mut cmd = Cli::command();
    let mut buf = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "git-triad", &mut buf);
    out(&String::from_utf8_lossy(&buf))?;
    ok()
}

/// Renders the man pages: the main page and one per subcommand, as (file name, roff).
pub fn man_pages() -> Result<Vec<(String, Vec<u8>)>, std::io::Error> {
    let cmd = Cli::command().name("git-triad");
    let mut pages = Vec::new();
    let mut buf = Vec::new();
    clap_mangen::Man::new(cmd.clone()).render(&mut buf)?;
    pages.push(("git-triad.1".to_string(), buf));
    for sub in cmd.get_subcommands() {
        if sub.is_hide_set() {
            continue;
        }
        let name = format!("git-triad-{}", sub.get_name());
        let mut buf = Vec::new();
        clap_mangen::Man::new(sub.clone().name(name.clone())).render(&mut buf)?;
        pages.push((format!("{name}.1"), buf));
    }
    Ok(pages)
}

/// Runs `git triad man`.
pub fn run_man(args: &ManArgs) -> CommandResult {
    let pages = man_pages()?;
    let dir = if args.install {
        let exe = std::env::current_exe()?;
        let bin_dir = exe
            .parent()
            .ok_or_else(|| CommandError::failure("cannot tell where git-triad is installed"))?;
        Some(bin_dir.join("..").join("share").join("man").join("man1"))
    } else {
        args.output.clone()
    };
    let Some(dir) = dir else {
        // No directory: print the main page, e.g. for `git triad man | man -l -`.
        out(&String::from_utf8_lossy(&pages[0].1))?;
        return ok();
    };
    std::fs::create_dir_all(&dir).map_err(|e| {
        CommandError::failure(format!("cannot create {}: {e}", dir.display()))
            .hint("pass --output <DIR> to write the pages somewhere you can write")
    })?;
    for (name, roff) in &pages {
        std::fs::write(dir.join(name), roff)?;
    }
    let dir = std::fs::canonicalize(&dir).unwrap_or(dir);
    out(&format!(
        "wrote {} man pages to {}\n",
        pages.len(),
        dir.display()
    ))?;
    if args.install {
        out("`git triad --help` now opens the man page (if that directory's parent is not on your MANPATH, add it).\n")?;
    }
    ok()
}
