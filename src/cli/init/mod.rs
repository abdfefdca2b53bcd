//! `git triad init`: set a repository up for git-triad (and `--uninstall` to undo it).
//!
//! Creates `.triad/` (a commented config template, a tasks directory), configures git so
//! verdict notes survive rebases and merges, installs the pre-push and post-rewrite hook
//! shims, and asks whether to trust the clone. Every step is skipped when already done.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

use clap::Args;

use super::{ok, out, CommandError, CommandResult, Context};
use crate::cli::helper::need_repo;
use crate::exit::ExitCode;
use crate::fsguard;
use crate::notes::display::DISPLAY_REF;
use crate::notes::setup::gitconfig::{self, Entry};
use crate::notes::setup::hookfile::{self, Change};
use crate::notes::setup::{checked_hook_path, hooks_dir, is_executable};

/// The commented template written to `.triad/config.toml`.
pub const REPO_CONFIG_TEMPLATE: &str = include_str!("repo_config.toml");

/// Set up git-triad here: `.triad/`, notes config, hook shims, trust.
#[derive(Debug, Args)]
pub struct InitArgs {
    /// Remove the hooks and git config that init added (`.triad/` is left alone).
    #[arg(long, conflicts_with_all = ["trust", "no_trust"])]
    pub uninstall: bool,
    /// Mark this clone trusted: its `.triad/config.toml` may set endpoints, key variables and commands.
    #[arg(long, conflicts_with = "no_trust")]
    pub trust: bool,
    /// Do not mark this clone trusted, and do not ask.
    #[arg(long)]
    pub no_trust: bool,
}

/// Runs `git triad init`.
pub fn run(ctx: &Context, args: &InitArgs) -> CommandResult {
    let repo = need_repo(ctx)?;
    if args.uninstall {
        return uninstall(repo);
    }
    let hooks_dir = hooks_dir(repo)?;
    // Refuse before changing anything.
    for (name, _) in hookfile::HOOKS {
        checked_hook_path(repo, &hooks_dir.join(name)).map_err(CommandError::from)?;
    }
    // What changed, and what is worth knowing but changed nothing.
    let (mut said, mut info) = (Vec::new(), Vec::new());
    if let Some(root) = repo.workdir() {
        create_triad_dir(root, &mut said)?;
    } else {
        info.push("This is a bare repository, so no .triad/ directory was created.".to_string());
    }
    let mut record = gitconfig::load_record(repo);
    // What an earlier init set that this one replaces (recorded or not: the fetch refspec
    // of earlier versions made `git fetch` fail).
    let mut replaced: Vec<Entry> = record
        .iter()
        .filter(|e| gitconfig::superseded(e))
        .cloned()
        .collect();
    replaced.extend(gitconfig::leftovers(repo)?);
    replaced.dedup();
    for entry in &replaced {
        if let Some(sentence) = gitconfig::revert(repo, entry)? {
            said.push(sentence);
        }
    }
    record.retain(|e| !gitconfig::superseded(e));
    for (key, value, multi) in gitconfig::wanted(repo)? {
        if let Some(entry) = gitconfig::apply(repo, &key, &value, multi)? {
            said.push(entry.describe());
            record.push(entry);
        }
    }
    if crate::notes::start::create_empty(repo)? {
        said.push("Created refs/notes/triad, empty until the first verdict, so `git log` shows verdicts without a warning.".into());
    }
    let existed = crate::git::ref_target(repo, DISPLAY_REF).is_some();
    let shown = crate::notes::display::rebuild(repo)?;
    if !existed {
        said.push(format!(
            "Created {DISPLAY_REF}, one line per verdict for `git log` ({shown} commit(s) so far); tools read the JSON of refs/notes/triad (`git log --notes=triad`)."
        ));
    }
    let mut not_installed = Vec::new();
    for (name, shim) in hookfile::HOOKS {
        let path = hooks_dir.join(name);
        let shown = path.display();
        checked_hook_path(repo, &path).map_err(CommandError::from)?;
        let change = hookfile::install(&path, shim).map_err(|e| {
            CommandError::failure(format!("cannot install the {name} hook at {shown}: {e}"))
        })?;
        match change {
            Change::Created => said.push(format!("Installed the {name} hook at {shown}.")),
            Change::Added => {
                said.push(format!("Added git-triad to your existing {name} hook at {shown} (your lines are kept)."));
                if !is_executable(&path) {
                    info.push(format!("{shown} is not executable, so git does not run it; `chmod +x` it to turn the hook on."));
                }
            }
            Change::Updated => said.push(format!("Updated the git-triad part of the {name} hook at {shown}.")),
            Change::NotShell => not_installed.push(format!(
                "{shown} is not a shell script, so it was left alone; call `git triad hook {name} \"$@\"` from it, passing its stdin"
            )),
            _ => {}
        }
    }
    trust(ctx, repo, args, &mut record, &mut said, &mut info)?;
    gitconfig::save_record(repo, &record)?;
    if said.is_empty() && not_installed.is_empty() {
        said.push("git triad is already set up in this repository; nothing changed.".into());
    }
    said.extend(info);
    out(&lines(&said))?;
    if let Some(first) = not_installed.first() {
        let mut err = CommandError::failure(format!("a hook could not be installed: {first}"));
        err.hints.extend(not_installed.iter().skip(1).cloned());
        return Err(err);
    }
    ok()
}

fn lines(sentences: &[String]) -> String {
    sentences.iter().map(|s| format!("{s}\n")).collect()
}

/// Creates `.triad/config.toml` and `.triad/tasks/` when absent; never overwrites, and never
/// writes through a symbolic link (a clone may commit `.triad -> ~/somewhere`).
fn create_triad_dir(root: &Path, said: &mut Vec<String>) -> CommandResult<()> {
    let config = guarded(root, ".triad/config.toml")?;
    if std::fs::symlink_metadata(&config).is_err() {
        fsguard::create_new(root, ".triad/config.toml", REPO_CONFIG_TEMPLATE.as_bytes())
            .map_err(CommandError::from)?;
        said.push(
            "Created .triad/config.toml, a commented template of what a repository may configure."
                .into(),
        );
    }
    let tasks = guarded(root, ".triad/tasks/.gitkeep")?;
    if tasks
        .parent()
        .is_some_and(|t| std::fs::symlink_metadata(t).is_err())
    {
        fsguard::create_new(root, ".triad/tasks/.gitkeep", b"").map_err(CommandError::from)?;
        said.push("Created .triad/tasks/ for task specs (commit it with the config).".into());
    }
    Ok(())
}

/// `root/rel` when no symbolic link is on the way, else the refusal.
fn guarded(root: &Path, rel: &str) -> CommandResult<PathBuf> {
    fsguard::inside_repo(root, rel).map_err(CommandError::from)
}

/// Marks the clone trusted on `--trust`, or on a yes at the terminal prompt.
fn trust(
    ctx: &Context,
    repo: &git2::Repository,
    args: &InitArgs,
    record: &mut Vec<Entry>,
    said: &mut Vec<String>,
    info: &mut Vec<String>,
) -> CommandResult<()> {
    let later = "`git config triad.trusted true` trusts it later";
    if ctx.trusted() {
        return Ok(());
    }
    let yes = if args.trust {
        true
    } else if args.no_trust {
        info.push(format!("Left this clone untrusted, as asked; {later}."));
        return Ok(());
    } else if std::io::stdin().is_terminal() {
        ask()?
    } else {
        info.push(format!(
            "Did not mark this clone trusted (no terminal to ask on); {later}."
        ));
        return Ok(());
    };
    if !yes {
        info.push(format!("Left this clone untrusted; {later}."));
        return Ok(());
    }
    if let Some(entry) = gitconfig::apply(repo, "triad.trusted", "true", false)? {
        said.push(
            "Marked this clone trusted: its .triad/config.toml may now set endpoints, key variables and commands."
                .into(),
        );
        record.push(entry);
    }
    Ok(())
}

fn ask() -> CommandResult<bool> {
    let mut err = std::io::stderr().lock();
    write!(
        err,
        "Trust this clone? A trusted clone's .triad/config.toml may choose model endpoints, \
         the environment variables API keys are read from, and commands to run. [y/N] "
    )?;
    err.flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(matches!(
        answer.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    ))
}

/// Removes the hook blocks and the git config init added; leaves `.triad/` alone.
fn uninstall(repo: &git2::Repository) -> CommandResult {
    // What killed runs left (scratch copies, commands still running) goes first.
    let mut said: Vec<String> = crate::git::leftover::clean(repo.commondir())
        .into_iter()
        .map(|d| format!("{}{}.", d[..1].to_ascii_uppercase(), &d[1..]))
        .collect();
    let hooks_dir = hooks_dir(repo)?;
    for (name, _) in hookfile::HOOKS {
        let path = hooks_dir.join(name);
        let shown = path.display();
        match hookfile::uninstall(&path)
            .map_err(|e| CommandError::failure(format!("cannot edit {shown}: {e}")))?
        {
            Change::Deleted => said.push(format!(
                "Deleted the {name} hook at {shown} (it held only git-triad)."
            )),
            Change::Removed => said.push(format!(
                "Removed git-triad from the {name} hook at {shown}; your lines are kept."
            )),
            _ => {}
        }
    }
    let mut record = gitconfig::load_record(repo);
    if record.is_empty() {
        // No record (it was deleted, or init ran elsewhere): undo what init would have set.
        record = gitconfig::wanted(repo)?
            .into_iter()
            .map(|(key, value, multi)| match multi {
                true => Entry::Added { key, value },
                false => Entry::Set {
                    key,
                    old: None,
                    new: value,
                },
            })
            .collect();
    }
    // What earlier versions set that is still there.
    record.extend(gitconfig::leftovers(repo)?);
    for entry in record.iter().rev() {
        if let Some(sentence) = gitconfig::revert(repo, entry)? {
            said.push(sentence);
        }
    }
    gitconfig::save_record(repo, &[])?;
    if crate::notes::start::remove_empty(repo)? {
        said.push("Removed refs/notes/triad, which held no verdicts.".into());
    }
    if crate::notes::display::remove(repo)? {
        said.push(format!(
            "Removed {DISPLAY_REF}, the lines `git log` showed (refs/notes/triad keeps every verdict)."
        ));
    }
    if said.is_empty() {
        said.push("git triad was not installed here; nothing changed.".into());
    }
    if repo.workdir().is_some_and(|w| w.join(".triad").exists()) {
        said.push("Left .triad/ alone: it holds your committed config and tasks.".into());
    }
    out(&lines(&said))?;
    Ok(ExitCode::Ok)
}

#[cfg(test)]
mod tests {
    use super::REPO_CONFIG_TEMPLATE;

    #[test]
    fn the_template_is_a_valid_untrusted_repo_config() {
        let table: toml::Table = REPO_CONFIG_TEMPLATE.parse().expect("valid TOML");
        assert!(crate::config::restricted_keys(&table).is_empty());
        // Uncommenting the examples gives a config the schema accepts in a trusted clone.
        let uncommented: String = REPO_CONFIG_TEMPLATE
            .lines()
            .filter_map(|l| {
                l.strip_prefix("# ")
                    .filter(|r| r.starts_with('[') || r.contains(" = "))
            })
            .map(|l| format!("{l}\n"))
            .collect();
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".triad")).unwrap();
        std::fs::write(dir.path().join(".triad/config.toml"), &uncommented).unwrap();
        let loaded = crate::config::LoadedConfig::load(&crate::config::LoadOptions {
            repo_root: Some(dir.path().to_path_buf()),
            trusted: true,
            ..Default::default()
        })
        .unwrap_or_else(|e| panic!("{e}\n{uncommented}"));
        assert_eq!(loaded.config.hooks.pre_push.block_on, ["HALT"]);
    }
}
