//! `git triad task new`: write a commented TaskSpec template for the user to fill in.

use clap::Args;

use crate::cli::run::need_repo;
use crate::cli::{ok, out, CommandError, CommandResult, Context};
use crate::task::spec::{self, template, valid_slug};

/// Write a TaskSpec template.
#[derive(Debug, Args)]
pub struct NewArgs {
    /// Short name: lowercase letters, digits, dashes (`add-login`).
    pub slug: String,
    /// One-line title.
    #[arg(long)]
    pub title: String,
    /// Replace an existing file.
    #[arg(long)]
    pub force: bool,
}

/// Runs `git triad task new`.
pub fn run(ctx: &Context, args: &NewArgs) -> CommandResult {
    let repo = need_repo(ctx)?;
    if !valid_slug(&args.slug) {
        return Err(
            CommandError::usage(format!("`{}` is not a valid task slug", args.slug))
                .hint("use lowercase letters, digits and dashes, e.g. `add-login`"),
        );
    }
    let root = repo
        .workdir()
        .ok_or_else(|| CommandError::usage("this repository has no work tree"))?;
    let rel = spec::spec_path(&args.slug);
    // A committed `.triad` that is a link must not make this write elsewhere.
    let path = crate::fsguard::inside_repo(root, &rel)?;
    if path.exists() {
        if !args.force {
            return Err(CommandError::usage(format!("{rel} already exists"))
                .hint("edit it, or pass --force to replace it with a fresh template"));
        }
        std::fs::remove_file(&path)?;
    }
    crate::fsguard::create_new(root, &rel, template(&args.slug, &args.title).as_bytes())?;
    out(&format!(
        "wrote {rel}\nnext: describe the task and its requirements, then `git add {rel} && git commit -m \"task: {}\"` and `git triad run --task {}`\n",
        args.slug, args.slug
    ))?;
    ok()
}
