//! The `git-triad` binary: parse, dispatch, map errors to exit codes. Nothing else.

use git_triad::cli;
use git_triad::exit::ExitCode;

fn main() -> std::process::ExitCode {
    let cli = cli::parse();
    init_tracing(cli.verbose, cli.quiet);
    match cli::run(cli) {
        Ok(code) => code.into(),
        Err(e) if e.broken_pipe => ExitCode::Ok.into(),
        Err(e) => {
            eprint!("{}", e.render());
            e.kind.into()
        }
    }
}

fn init_tracing(verbose: u8, quiet: bool) {
    use tracing_subscriber::EnvFilter;
    let level = match (quiet, verbose) {
        (true, _) => "error",
        (false, 0) => "warn",
        (false, 1) => "info",
        (false, 2) => "debug",
        _ => "trace",
    };
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new(format!("git_triad={level},warn")));
    // Colours only for a terminal that wants them: a log file gets plain text.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr())
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(ansi)
        .with_writer(git_triad::redact::RedactedStderr)
        .without_time()
        .with_target(false)
        .try_init();
}
