//! `git triad task new`: write a commented TaskSpec template for the user to fill in.

use clap::Args;

use crate::cli::helper::need_repo;
use crate::cli::{ok, out, CommandError, CommandResult, Context};
use crate::task::spec::{self, template, valid_slug};
use crate::task::Example;

/// `text` as a TOML basic string.
fn toml_string(text: &str) -> String {
    toml::Value::String(text.to_string()).to_string()
}

/// Write a TaskSpec template.
#[derive(Debug, Args)]
pub struct NewArgs {
    /// Short name: lowercase letters, digits, dashes (`add-login`).
    pub slug: String,
    /// One-line title.
    #[arg(long)]
    pub title: String,
    /// An acceptance example, `call == value` (repeatable): every building stage and
    /// Verify run it against the code, and a failing one is sent back with its actual value.
    /// Example: --example "slugify('A b') == 'a-b'".
    #[arg(long = "example", value_name = "CALL == VALUE", value_parser = parse_example)]
    pub examples: Vec<Example>,
    /// Replace an existing file.
    #[arg(long)]
    pub force: bool,
}

/// Reads `--example`: a call, `==`, and the value it must return.
fn parse_example(text: &str) -> Result<Example, String> {
    Example::from_criterion(text).ok_or_else(|| {
        format!("`{text}` is not an example: write a call, `==`, and its value, e.g. \"f(2) == 4\"")
    })
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
    let mut text = template(&args.slug, &args.title);
    for e in &args.examples {
        text.push_str(&format!(
            "\n[[examples]]\ncall = {}\nexpect = {}\n",
            toml_string(&e.call),
            toml_string(&e.expect)
        ));
    }
    crate::fsguard::create_new(root, &rel, text.as_bytes())?;
    out(&format!(
        "wrote {rel}\nnext: describe the task and its requirements, then `git add {rel} && git commit -m \"task: {}\"` and `git triad run --task {}`\n",
        args.slug, args.slug
    ))?;
    ok()
}
