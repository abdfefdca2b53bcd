//! `git triad hook`: what the git hook shims call (hidden from help; users never type it).

pub mod post_rewrite;
pub mod pre_push;
mod stdin;

use clap::{Args, Subcommand};

use super::{CommandResult, Context};

/// Entry points of the git hooks installed by `git triad init`.
#[derive(Debug, Args)]
pub struct HookArgs {
    /// Which hook is running.
    #[command(subcommand)]
    pub hook: HookCommand,
}

/// The hooks git-triad installs.
#[derive(Debug, Subcommand)]
pub enum HookCommand {
    /// Block pushes of commits whose verdict the policy blocks on (reads git's stdin).
    PrePush(pre_push::PrePushArgs),
    /// Carry verdicts over to rewritten commits (reads git's `<old> <new>` lines on stdin).
    PostRewrite(post_rewrite::PostRewriteArgs),
}

/// Runs `git triad hook`.
pub fn run(ctx: &Context, args: &HookArgs) -> CommandResult {
    match &args.hook {
        HookCommand::PrePush(a) => pre_push::run(ctx, a),
        HookCommand::PostRewrite(a) => post_rewrite::run(ctx, a),
    }
}
