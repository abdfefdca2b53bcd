//! `git triad doctor`: which layers of the box hold on this machine.

use clap::Args;
use serde::Serialize;

use super::{out, CommandError, CommandResult, Context};
use crate::sandbox::{self, Job, Layers};

/// Show which layers of the box hold on this machine.
///
/// Everything that runs code a model wrote or chose (the verify and format commands,
/// probes, acceptance examples, bench tasks) runs in one box: reads and writes by allow-list
/// (Landlock), its own network, PID and user namespaces, no capabilities, limits, and git
/// triad non-dumpable. Each layer is found by trying it: this command starts a command in
/// the box and reports what held. It exits 1 when the filesystem layer is missing and your
/// configuration requires it (sandbox.require), since model-written code will not run then.
///
/// Example: git triad doctor --json
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Print the layers as one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// What `doctor --json` prints.
#[derive(Serialize)]
struct Report<'a> {
    /// Whether model-written code can run here under the configuration.
    runs: bool,
    /// Whether every layer of the box held whole around the trial command.
    whole: bool,
    /// Whether the configuration requires the filesystem layer.
    require: bool,
    /// The layers, as a boxed command's record keeps them.
    layers: &'a Layers,
}

/// Runs `git triad doctor`.
pub fn run(ctx: &Context, args: &DoctorArgs) -> CommandResult {
    let policy = ctx.load_config()?.config.sandbox;
    let dir = tempfile::tempdir()
        .map_err(|e| CommandError::failure(format!("cannot make a temporary directory: {e}")))?;
    let ran = sandbox::run(
        &Job::new("true", dir.path(), std::time::Duration::from_secs(30)),
        &policy,
        &|_| {},
    );
    let layers = ran
        .layers
        .as_ref()
        .ok_or_else(|| CommandError::failure(format!("the box did not start: {}", ran.tail)))?;
    let runs = layers.filesystem.held || !policy.require;
    let text = if args.json {
        let report = Report {
            runs,
            whole: layers.whole(),
            require: policy.require,
            layers,
        };
        format!("{}\n", serde_json::to_string(&report).unwrap_or_default())
    } else {
        render(layers, &policy, &ran)
    };
    out(&text)?;
    if runs {
        super::ok()
    } else {
        Err(CommandError::failure(
            "model-written code will not run here: the box has no filesystem layer",
        )
        .hint("a kernel with Landlock (Linux 5.13 or later, enabled at boot) gives it; or, knowing the risk, set sandbox.require = false in your own config (~/.config/git-triad/config.toml)"))
    }
}

/// The layers as lines, then what the configuration makes of them.
fn render(layers: &Layers, policy: &sandbox::Policy, ran: &sandbox::CommandOutcome) -> String {
    let width = layers
        .named()
        .iter()
        .map(|(n, _)| n.len())
        .max()
        .unwrap_or(0);
    let mut s = String::from("The box model-written code runs in, on this machine:\n");
    for (name, layer) in layers.named() {
        let state = match (layer.held, &layer.gap) {
            (true, None) => "held",
            (true, Some(_)) => "partly",
            (false, _) => "missing",
        };
        s.push_str(&format!("  {name:<width$}  {state:<7}  {}\n", layer.detail));
        if let (true, Some(gap)) = (layer.held, &layer.gap) {
            s.push_str(&format!("  {:<width$}  {:<7}  but {gap}\n", "", ""));
        }
    }
    let short: Vec<&str> = layers
        .named()
        .into_iter()
        .filter(|(_, l)| !l.whole())
        .map(|(n, _)| n)
        .collect();
    let verdict = match (layers.filesystem.held, policy.require) {
        (true, _) if ran.exit_code == Some(0) && short.is_empty() => {
            "Model-written code runs in this box.".to_string()
        }
        (true, _) if ran.exit_code == Some(0) => format!(
            "Model-written code runs here with less than the whole box: {} {} not hold whole (see above); its records say so.",
            short.join(", "),
            if short.len() == 1 { "does" } else { "do" }
        ),
        (true, _) => format!("The box could not run a command: {}", ran.tail),
        (false, true) => {
            "Model-written code does not run here (sandbox.require = true).".to_string()
        }
        (false, false) => "Model-written code runs without the filesystem layer (sandbox.require = false in your config); verdicts that rest on it are at most FLAG.".to_string(),
    };
    s.push_str(&verdict);
    s.push('\n');
    s
}
