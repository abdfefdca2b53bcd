//! `git triad completions` and `git triad man`.

use std::path::{Path, PathBuf};

use clap::Args;
use clap_complete::Shell;

use super::{ok, out, CommandError, CommandResult, Context};

/// The shape of the whole command line (`Cli::command`), which the completion scripts and
/// man pages are generated from; made only when one is written.
pub type Shape = fn() -> clap::Command;

/// Print a completion script for a shell, or install bash's.
///
/// The bash script completes `git triad <TAB>` through git's own completion (which calls
/// `_git_triad`) and `git-triad <TAB>`. `--install` writes it where bash-completion loads it
/// on demand, creating the directory:
/// `${BASH_COMPLETION_USER_DIR:-${XDG_DATA_HOME:-~/.local/share}/bash-completion}/completions/git-triad`.
///
/// Example: git triad completions bash --install
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: Shell,
    /// Write the script where the shell's completion loads it (bash), instead of printing it.
    #[arg(long)]
    pub install: bool,
}

/// Write the man page, generated from this command line's own definitions.
///
/// `git triad --help` makes git look up the `git-triad` man page (git triad itself is not
/// run). Every git triad command keeps the pages beside its binary, where `man` finds them
/// for a binary on your PATH (`<bin>/../share/man/man1`); `--install` writes them there
/// now, `--output` elsewhere.
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
pub fn run_completions(ctx: &Context, args: &CompletionsArgs, cli: Shape) -> CommandResult {
    let script = completion_script(cli, args.shell);
    if !args.install {
        out(&script)?;
        return ok();
    }
    if args.shell != Shell::Bash {
        return Err(CommandError::usage(format!(
            "--install knows where bash loads completions, not {}",
            args.shell
        ))
        .hint(format!(
            "print the script with `git triad completions {}` and put it where your shell reads completions",
            args.shell
        )));
    }
    let dir = bash_completion_dir(&|k| ctx.env_var(k)).ok_or_else(|| {
        CommandError::usage("neither HOME, XDG_DATA_HOME nor BASH_COMPLETION_USER_DIR is set, so there is no completion directory of yours")
            .hint("print the script with `git triad completions bash` and source it from your ~/.bashrc")
    })?;
    std::fs::create_dir_all(&dir).map_err(|e| {
        CommandError::failure(format!("cannot create {}: {e}", dir.display())).hint(
            "print the script with `git triad completions bash` and put it where you can write",
        )
    })?;
    let file = dir.join("git-triad");
    std::fs::write(&file, script)
        .map_err(|e| CommandError::failure(format!("cannot write {}: {e}", file.display())))?;
    out(&format!(
        "wrote {}
bash-completion loads it the first time you complete `git triad <TAB>` in a new shell; without bash-completion, add `source {}` to your ~/.bashrc\n",
        file.display(),
        file.display()
    ))?;
    ok()
}

/// The completion script for `shell`. Bash's also defines `_git_triad`, the function git's
/// own completion (`git-completion.bash`) calls for `git triad …`: it hands the words after
/// `triad` to the generated completer as if `git-triad` had been typed.
pub fn completion_script(cli: Shape, shell: Shell) -> String {
    // clap_complete names bash's states inconsistently for a binary name with a `-` (its
    // subcommands' arguments are then never completed), so the script is generated for a
    // name without one and its `complete` lines are pointed at `git-triad`.
    let name = match shell {
        Shell::Bash => BASH_NAME,
        _ => "git-triad",
    };
    let mut cmd = cli().name(name).bin_name(name);
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, name, &mut buf);
    let mut script = String::from_utf8_lossy(&buf).into_owned();
    if shell == Shell::Bash {
        script = script
            .lines()
            .map(|l| match l.trim_start().starts_with("complete -F ") {
                true => l.replace(&format!(" {BASH_NAME}"), " git-triad"),
                false => l.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n");
        script.push('\n');
        script.push_str(GIT_SUBCOMMAND_BASH);
    }
    script
}

/// The name bash's completer is generated for: its function is `_git_triad_words`.
const BASH_NAME: &str = "git_triad_words";

/// What git's completion calls for `git triad …` (it looks for `_git_<command>`, loading
/// `completions/git-<command>` through bash-completion first). git has set `words`,
/// `cword` and `cur`, and `words` may hold git's own options before `triad` (`git -C dir
/// triad run`); the generated completer reads `COMP_WORDS` and `COMP_CWORD` from the word
/// its first argument names, so they are narrowed to `git-triad` and what follows.
const GIT_SUBCOMMAND_BASH: &str = r#"
_git_triad() {
    local i=1
    while [[ $i -lt $cword && ${words[i]} != triad ]]; do
        i=$((i + 1))
    done
    local COMP_WORDS=(git-triad "${words[@]:i+1}")
    local COMP_CWORD=$((cword - i))
    local prev_word=""
    if [[ $COMP_CWORD -gt 0 ]]; then
        prev_word=${COMP_WORDS[COMP_CWORD-1]}
    fi
    _git_triad_words git-triad "${cur}" "${prev_word}"
}
"#;

/// Where bash-completion looks for a user's completions, as it does:
/// `$BASH_COMPLETION_USER_DIR/completions`, else `$XDG_DATA_HOME/bash-completion/completions`,
/// else `$HOME/.local/share/bash-completion/completions`.
pub fn bash_completion_dir(var: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let set = |k: &str| var(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    // bash-completion reads it as a list, like PATH: the first directory is the user's own.
    let user_dir = set("BASH_COMPLETION_USER_DIR").and_then(|d| {
        d.to_str()?
            .split(':')
            .find(|p| !p.is_empty())
            .map(PathBuf::from)
    });
    if let Some(d) = user_dir {
        return Some(d.join("completions"));
    }
    let data = set("XDG_DATA_HOME").or_else(|| set("HOME").map(|h| h.join(".local/share")))?;
    Some(data.join("bash-completion").join("completions"))
}

/// Renders the man pages: the main page and one per subcommand, as (file name, roff).
pub fn man_pages(cli: Shape) -> Result<Vec<(String, Vec<u8>)>, std::io::Error> {
    let cmd = cli().name("git-triad");
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

/// Where `man` finds the pages of a binary at `exe` with no configuration: man-db derives
/// its search path from `PATH`, and for a directory it has no mapping for (`~/.cargo/bin`,
/// `/usr/local/bin`) it searches `<dir>/../share/man` among others.
pub fn man_dir_beside(exe: &Path) -> Option<PathBuf> {
    let prefix = exe.parent()?.parent()?;
    Some(prefix.join("share").join("man").join("man1"))
}

/// Keeps the man pages beside the running binary, so that `git triad --help` (which git
/// turns into `man git-triad` without running git triad at all) finds them from the first
/// command on: written when missing or older than the binary (a new build or install), as
/// one file each renamed into place; nothing is said, and a directory that cannot be
/// written is left alone (`git triad man --output DIR` writes them elsewhere).
pub fn keep_man_pages(cli: Shape) {
    let Some(exe) = std::env::current_exe().ok() else {
        return;
    };
    let Some(dir) = man_dir_beside(&exe) else {
        return;
    };
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let (Some(built), page) = (modified(&exe), modified(&dir.join("git-triad.1"))) else {
        return;
    };
    if page.is_some_and(|p| p >= built) {
        return;
    }
    let _ = write_pages(cli, &dir);
}

/// Writes every man page into `dir` (created), each to a temporary file renamed over the
/// old one, so a reader or a second writer never sees half a page.
fn write_pages(cli: Shape, dir: &Path) -> std::io::Result<usize> {
    let pages = man_pages(cli)?;
    std::fs::create_dir_all(dir)?;
    for (name, roff) in &pages {
        let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
        std::io::Write::write_all(&mut tmp, roff)?;
        tmp.persist(dir.join(name)).map_err(|e| e.error)?;
    }
    Ok(pages.len())
}

/// Runs `git triad man`.
pub fn run_man(args: &ManArgs, cli: Shape) -> CommandResult {
    let pages = man_pages(cli)?;
    let dir = if args.install {
        let exe = std::env::current_exe()?;
        Some(man_dir_beside(&exe).ok_or_else(|| {
            CommandError::failure("cannot tell where git-triad is installed")
                .hint("write the pages with `git triad man --output <DIR>`")
        })?)
    } else {
        args.output.clone()
    };
    let Some(dir) = dir else {
        // No directory: print the main page, e.g. for `git triad man | man -l -`.
        out(&String::from_utf8_lossy(&pages[0].1))?;
        return ok();
    };
    write_pages(cli, &dir).map_err(|e| {
        CommandError::failure(format!(
            "cannot write the man pages into {}: {e}",
            dir.display()
        ))
        .hint("pass --output <DIR> to write the pages somewhere you can write")
    })?;
    let dir = std::fs::canonicalize(&dir).unwrap_or(dir);
    out(&format!(
        "wrote {} man pages to {}\n",
        pages.len(),
        dir.display()
    ))?;
    if args.install {
        out("`git triad --help` opens the man page (if you set MANPATH, add that directory's parent to it).\n")?;
    }
    ok()
}
