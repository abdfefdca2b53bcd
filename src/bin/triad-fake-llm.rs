//! `triad-fake-llm`: the scripted fake model server as a process, for shell tests and
//! benchmarks that drive the real `git-triad` binary without touching the internet.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use git_triad::testkit::fake_llm::{FakeServer, Script, ServerOptions};

/// Shown by `-h`: enough of the script format to write one without reading the source.
const SCRIPT_HELP: &str = r#"SCRIPT FORMAT (TOML or JSON, chosen by extension)
  Rules are tried in order; the first whose protocol/model/contains all match and that still
  has a reply answers. Replies are used in order; the last repeats unless repeat_last = false.

  [[rules]]
  name = "arch"                  # reported in recorded requests
  protocol = "openai"            # openai | anthropic | gemini; omit for any
  model = "model-a"              # exact requested model id; omit for any
  contains = ["ROLE: architect"] # all must occur in the request body
  [[rules.responses]]
  status = 429
  headers = { "retry-after" = "0" }
  [[rules.responses]]
  text = "hello"                 # or json = {...}, body = {...} (verbatim), raw = "..."
  usage = { input_tokens = 12, output_tokens = 3 }
  # also: delay_ms = 500, fault = "reset"|"truncate"|"malformed"|"hang",
  #       model = "reported-id"

ROUTES
  POST /v1/chat/completions (OpenAI), POST /v1/messages (Anthropic),
  POST /v1beta/models/{model}:generateContent / :streamGenerateContent?alt=sse (Gemini),
  GET /v1/models. Unmatched requests get a 500 with error type "no_rule"."#;

/// Scripted fake OpenAI / Anthropic / Gemini server on 127.0.0.1.
#[derive(Debug, Parser)]
#[command(name = "triad-fake-llm", version, after_help = SCRIPT_HELP)]
struct Args {
    /// Script file (.toml or .json).
    #[arg(long, value_name = "FILE")]
    script: PathBuf,
    /// Port to listen on (0 = any free port).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Append every received request as a JSON line to this file.
    #[arg(long, value_name = "FILE")]
    record: Option<PathBuf>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let script = match Script::load(&args.script) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("triad-fake-llm: {e}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("triad-fake-llm: cannot start runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(async move {
        let options = ServerOptions {
            port: args.port,
            record: args.record,
        };
        let server = match FakeServer::start_with(script, options).await {
            Ok(s) => s,
            Err(e) => {
                eprintln!("triad-fake-llm: cannot start server: {e}");
                return ExitCode::FAILURE;
            }
        };
        // Callers wait for this exact line to learn the port; flush so they see it at once.
        let mut stdout = std::io::stdout();
        if writeln!(stdout, "listening on {}", server.base_url())
            .and_then(|()| stdout.flush())
            .is_err()
        {
            return ExitCode::FAILURE;
        }
        wait_for_signal().await;
        server.shutdown();
        ExitCode::SUCCESS
    })
}

/// Resolves on ctrl-c, or on SIGTERM where that exists (what `kill` and test harnesses send).
async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
