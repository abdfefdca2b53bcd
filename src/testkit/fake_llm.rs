//! A scripted fake model server speaking the OpenAI chat-completions, Anthropic Messages and
//! Gemini generateContent wire formats on `127.0.0.1`.
//!
//! Tests must never touch the internet, yet the model clients deserve to meet real HTTP: real
//! sockets, real framing, real SSE, and real failures (resets, short bodies, garbage, hangs).
//! So this is an actual HTTP/1.1 server, hand-written on tokio so it can break on purpose,
//! that answers according to a [`Script`].
//!
//! Routes (base URLs: OpenAI and Anthropic `{base_url}/v1`, Gemini `{base_url}/v1beta`):
//!
//! | route | protocol |
//! |---|---|
//! | `POST /v1/chat/completions` | OpenAI (SSE when `"stream": true`) |
//! | `POST /v1/messages` | Anthropic (SSE when `"stream": true`) |
//! | `POST /v1beta/models/{model}:generateContent` | Gemini |
//! | `POST /v1beta/models/{model}:streamGenerateContent?alt=sse` | Gemini SSE (JSON array without `alt=sse`) |
//! | `GET /v1/models`, `GET /v1beta/models` | model ids named by the script (with the limits of [`Script::models`]) |
//! | `GET /props` | llama.cpp's server properties ([`Served::LlamaCpp`]) |
//! | `POST /api/show` | Ollama's model details ([`Served::Ollama`]) |
//!
//! A reply can be text, a structured answer, or tool calls ([`Reply::tool_calls`]), each shaped
//! as the protocol's real service sends it, whole or streamed. Every request is recorded
//! before any scripted delay, its JSON kept, so a test can check the tools and tool results
//! a client sent. A request no rule matches gets a 500
//! with `{"error":{"message":"fake-llm: no rule matched <protocol> model=<m>","type":"no_rule"}}`;
//! an unknown route gets a 404. Each response carries `Connection: close` and the connection
//! is closed after it.
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use git_triad::testkit::fake_llm::{FakeServer, Reply, Rule, Script, WireProtocol};
//! let script = Script::default().rule(
//!     Rule::named("arch")
//!         .protocol(WireProtocol::OpenAi)
//!         .model("model-a")
//!         .contains("ROLE: architect")
//!         .reply(Reply::status(429).header("retry-after", "0"))
//!         .reply(Reply::text("hello").usage(12, 3)),
//! );
//! let server = FakeServer::start(script).await?;
//! let openai_base = server.openai_base_url(); // http://127.0.0.1:PORT/v1
//! # let _ = openai_base;
//! # Ok(()) }
//! ```

mod answer;
mod http;
mod recorded;
mod script;
mod serve;
mod wire;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_faults;
#[cfg(test)]
mod tests_tools;

use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use tokio::net::TcpListener;
use tokio::sync::watch;

pub use recorded::RecordedRequest;
pub use script::{
    Fault, ModelInfo, Reply, Rule, Script, ScriptError, ScriptedCall, Served, Usage, WireProtocol,
};

/// Server settings beyond the script, mostly for the `triad-fake-llm` binary.
#[derive(Debug, Clone, Default)]
pub struct ServerOptions {
    /// Port on 127.0.0.1; 0 picks a free one.
    pub port: u16,
    /// Append every [`RecordedRequest`] as a JSON line to this file.
    pub record: Option<PathBuf>,
}

/// A running fake server; dropping it (or [`FakeServer::shutdown`]) stops it.
pub struct FakeServer {
    addr: SocketAddr,
    shared: serve::Shared,
    stop: watch::Sender<bool>,
    /// The runtime thread of [`FakeServer::start_blocking`]; `None` when running on the
    /// caller's runtime.
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for FakeServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeServer")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

/// Validation errors become `InvalidInput` so both constructors keep the `io::Result` shape.
fn prepare(script: Script, options: &ServerOptions) -> std::io::Result<serve::Shared> {
    script
        .validate()
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    let record = match &options.record {
        Some(path) => Some(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)?,
        ),
        None => None,
    };
    Ok(Arc::new(Mutex::new(serve::State::new(script, record))))
}

impl FakeServer {
    /// Starts the server on the current tokio runtime, bound to `127.0.0.1:0`.
    pub async fn start(script: Script) -> std::io::Result<FakeServer> {
        FakeServer::start_with(script, ServerOptions::default()).await
    }

    /// Starts the server on the current tokio runtime with explicit options.
    pub async fn start_with(script: Script, options: ServerOptions) -> std::io::Result<FakeServer> {
        let shared = prepare(script, &options)?;
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, options.port)).await?;
        let addr = listener.local_addr()?;
        let (stop, stop_rx) = watch::channel(false);
        tokio::spawn(serve::accept_loop(listener, shared.clone(), stop_rx));
        Ok(FakeServer {
            addr,
            shared,
            stop,
            thread: None,
        })
    }

    /// Starts the server on its own runtime in a background thread, for synchronous tests
    /// (e.g. ones that spawn the real binary). Safe to call from inside a runtime too.
    pub fn start_blocking(script: Script) -> std::io::Result<FakeServer> {
        FakeServer::start_blocking_with(script, ServerOptions::default())
    }

    /// [`FakeServer::start_blocking`] with explicit options.
    pub fn start_blocking_with(
        script: Script,
        options: ServerOptions,
    ) -> std::io::Result<FakeServer> {
        let shared = prepare(script, &options)?;
        // Bind with std in the caller's thread so bind errors and the port are known before
        // returning, without needing a runtime here.
        let std_listener = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, options.port))?;
        std_listener.set_nonblocking(true)?;
        let addr = std_listener.local_addr()?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let (stop, stop_rx) = watch::channel(false);
        let thread_shared = shared.clone();
        let thread = std::thread::Builder::new()
            .name(format!("fake-llm-{}", addr.port()))
            .spawn(move || {
                runtime.block_on(async move {
                    match TcpListener::from_std(std_listener) {
                        Ok(listener) => serve::accept_loop(listener, thread_shared, stop_rx).await,
                        Err(e) => tracing::error!("fake-llm: cannot adopt listener: {e}"),
                    }
                });
                // Dropping the runtime here cancels every connection task still running.
            })?;
        Ok(FakeServer {
            addr,
            shared,
            stop,
            thread: Some(thread),
        })
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`, without a trailing slash.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Base URL for OpenAI-compatible clients: `{base_url}/v1`.
    pub fn openai_base_url(&self) -> String {
        format!("{}/v1", self.base_url())
    }

    /// Base URL for Anthropic clients: `{base_url}/v1`.
    pub fn anthropic_base_url(&self) -> String {
        format!("{}/v1", self.base_url())
    }

    /// Base URL for Gemini clients: `{base_url}/v1beta`.
    pub fn gemini_base_url(&self) -> String {
        format!("{}/v1beta", self.base_url())
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        serve::lock(&self.shared).requests.clone()
    }

    /// Stops accepting, aborts hanging and delayed answers, and (for
    /// [`FakeServer::start_blocking`]) waits for the server thread to finish. A server from
    /// [`FakeServer::start`] stops on the caller's runtime at its next poll, i.e. right after
    /// the current task yields. Dropping the server does the same.
    pub fn shutdown(mut self) {
        self.stop_now();
    }

    fn stop_now(&mut self) {
        // `send_replace` works even with no receiver left, unlike `send`.
        self.stop.send_replace(true);
        if let Some(thread) = self.thread.take() {
            if thread.join().is_err() {
                tracing::warn!("fake-llm: server thread panicked");
            }
        }
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        self.stop_now();
    }
}
