//! The offline default: one llama.cpp `llama-server` per local model on 127.0.0.1, with pid
//! files and logs under the cache directory that `scripts/local-models` fills.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::config::Config;

mod pid;

pub use pid::{PidRecord, Standing};

/// One local server: which provider it serves, from which model file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalServer {
    /// Provider name in the registry (its base URL gives the port).
    pub provider: &'static str,
    /// Model file name under `<cache>/models/`.
    pub file: &'static str,
    /// Context size given to llama-server.
    pub context: u32,
    /// The server's default sampling, as the model's makers recommend it (a request that
    /// sets its own wins): llama-server's own defaults are not tuned to any model, and a
    /// small coder sampled at them loops and drifts more.
    pub sampling: &'static [&'static str],
}

/// Qwen2.5-Coder-Instruct's recommended sampling (its `generation_config.json`).
const QWEN_CODER_SAMPLING: &[&str] = &[
    "--temp",
    "0.7",
    "--top-p",
    "0.8",
    "--top-k",
    "20",
    "--repeat-penalty",
    "1.05",
];

/// The servers of the built-in `local` profile.
pub const SERVERS: &[LocalServer] = &[
    LocalServer {
        provider: "triad-local-coder-1-5b",
        file: "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        context: 8192,
        sampling: QWEN_CODER_SAMPLING,
    },
    LocalServer {
        provider: "triad-local-coder",
        file: "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        context: 8192,
        sampling: QWEN_CODER_SAMPLING,
    },
    LocalServer {
        provider: "triad-local-small",
        file: "smollm2-135m-instruct-q4_1.gguf",
        context: 8192,
        // SmolLM2-Instruct's model card samples at a low temperature.
        sampling: &["--temp", "0.2", "--top-p", "0.9"],
    },
];

/// Why a local server could not be managed.
#[derive(Debug, thiserror::Error)]
pub enum LocalError {
    /// The cache has no llama-server or model file.
    #[error("{0} is missing")]
    Missing(PathBuf),
    /// The registry does not have the provider or a model for it.
    #[error("the configuration has no provider `{0}` with a model")]
    NotConfigured(String),
    /// Starting failed.
    #[error("llama-server for {provider} did not answer within {secs} s (log: {log})")]
    NotAnswering {
        /// Provider.
        provider: String,
        /// Seconds waited.
        secs: u64,
        /// Log file.
        log: String,
    },
    /// The server process ended before it answered (a crash while loading or warming up).
    #[error("llama-server for {provider} stopped before it answered: {how} (log: {log})")]
    Exited {
        /// Provider.
        provider: String,
        /// How it ended, in words ([`ended_how`]).
        how: String,
        /// Log file.
        log: String,
    },
    /// I/O.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// How a process ended, in words a user can act on: the exit code, or the signal by name
/// with what it usually means for a freshly built llama-server.
pub fn ended_how(status: std::process::ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = status.signal() {
            return match sig {
                libc::SIGILL => "killed by SIGILL, an instruction this CPU refuses: the binary \
                                 was built for features this machine does not run"
                    .to_string(),
                libc::SIGKILL => "killed by SIGKILL (out of memory, or killed by hand)".to_string(),
                libc::SIGSEGV => "killed by SIGSEGV (a crash)".to_string(),
                libc::SIGBUS => "killed by SIGBUS (a damaged or truncated model file?)".to_string(),
                other => format!("killed by signal {other}"),
            };
        }
    }
    match status.code() {
        Some(code) => format!("exit status {code}"),
        None => "ended".to_string(),
    }
}

/// The cache directory: `$GIT_TRIAD_LOCAL_CACHE`, else `~/.cache/git-triad/local`.
pub fn cache_dir(env: &[(String, String)]) -> PathBuf {
    let get = |k: &str| {
        env.iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.clone())
            .filter(|v| !v.is_empty())
    };
    if let Some(d) = get("GIT_TRIAD_LOCAL_CACHE") {
        return PathBuf::from(d);
    }
    let base = get("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| get("HOME").map(|h| Path::new(&h).join(".cache")))
        .unwrap_or_else(|| PathBuf::from(".cache"));
    base.join("git-triad").join("local")
}

/// What `status` reports for one server.
#[derive(Debug, Clone)]
pub struct ServerStatus {
    /// The server.
    pub server: LocalServer,
    /// Its base URL.
    pub base_url: String,
    /// The model id served (the wire id of the model that uses the provider).
    pub model_id: String,
    /// Pid from the pid file, while that process is still the server started there.
    pub pid: Option<u32>,
    /// Whether `GET /models` answers.
    pub answering: bool,
}

fn provider_info(config: &Config, provider: &str) -> Result<(String, String, u16), LocalError> {
    let p = config
        .providers
        .get(provider)
        .ok_or_else(|| LocalError::NotConfigured(provider.into()))?;
    let (name, m) = config
        .models
        .iter()
        .find(|(_, m)| m.provider == provider)
        .ok_or_else(|| LocalError::NotConfigured(provider.into()))?;
    let port = reqwest::Url::parse(&p.base_url)
        .ok()
        .and_then(|u| u.port_or_known_default())
        .unwrap_or(8080);
    Ok((p.base_url.clone(), m.wire_id(name).to_string(), port))
}

/// Where the pid file of `provider`'s server is.
fn pid_file(cache: &Path, provider: &str) -> PathBuf {
    cache.join("run").join(format!("{provider}.pid"))
}

/// Whether a server answers `GET {base}/models` with a 2xx within about a second.
///
/// A plain blocking probe over TCP: this runs outside any async runtime and never goes
/// through a proxy (the servers are on this machine).
pub fn answering(base_url: &str) -> bool {
    use std::io::{Read, Write};
    use std::net::{TcpStream, ToSocketAddrs};
    let url = format!("{}/models", base_url.trim_end_matches('/'));
    let Ok(u) = reqwest::Url::parse(&url) else {
        return false;
    };
    let (Some(host), Some(port)) = (u.host_str(), u.port_or_known_default()) else {
        return false;
    };
    let Some(addr) = (host, port)
        .to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
    else {
        return false;
    };
    let Ok(mut s) = TcpStream::connect_timeout(&addr, Duration::from_millis(500)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(1)));
    let req = format!(
        "GET {} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n",
        u.path()
    );
    if s.write_all(req.as_bytes()).is_err() {
        return false;
    }
    let mut buf = [0u8; 16];
    let n = s.read(&mut buf).unwrap_or(0);
    let head = String::from_utf8_lossy(&buf[..n]);
    head.starts_with("HTTP/1.1 2") || head.starts_with("HTTP/1.0 2")
}

/// Statuses of every local server.
pub fn status(config: &Config, cache: &Path) -> Vec<ServerStatus> {
    SERVERS
        .iter()
        .filter_map(|s| {
            let (base_url, model_id, _) = provider_info(config, s.provider).ok()?;
            let pid = PidRecord::read(&pid_file(cache, s.provider))
                .filter(|r| r.standing() == Standing::Ours)
                .map(|r| r.pid);
            Some(ServerStatus {
                server: s.clone(),
                answering: answering(&base_url),
                base_url,
                model_id,
                pid,
            })
        })
        .collect()
}

/// Starts every local server that is not answering; returns what was started.
pub fn start(
    config: &Config,
    cache: &Path,
    providers: &[String],
) -> Result<Vec<String>, LocalError> {
    let bin = cache.join("bin").join("llama-server");
    let run_dir = cache.join("run");
    let mut started = Vec::new();
    let mut waiting = Vec::new();
    for s in SERVERS
        .iter()
        .filter(|s| providers.is_empty() || providers.iter().any(|p| p == s.provider))
    {
        let (base_url, model_id, port) = provider_info(config, s.provider)?;
        // A server that answers already is used as it is: the binary and the model files
        // are needed only to start one.
        if answering(&base_url) {
            continue;
        }
        if !bin.exists() {
            return Err(LocalError::Missing(bin));
        }
        std::fs::create_dir_all(&run_dir)?;
        let model = cache.join("models").join(s.file);
        if !model.exists() {
            return Err(LocalError::Missing(model));
        }
        let log_path = run_dir.join(format!("{}.log", s.provider));
        let log = std::fs::File::create(&log_path)?;
        let mut cmd = Command::new(&bin);
        cmd.arg("-m")
            .arg(&model)
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .args(["--alias", &model_id])
            .args(["-c", &s.context.to_string(), "-np", "1", "-t", "2"])
            .args(s.sampling)
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log);
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            // Its own process group: the server outlives this command and ignores our ^C.
            cmd.process_group(0);
        }
        let child = cmd.spawn()?;
        std::fs::write(
            pid_file(cache, s.provider),
            PidRecord::of_child(child.id(), port).to_text(),
        )?;
        started.push(format!(
            "{} ({model_id}) on port {port}, pid {}",
            s.provider,
            child.id()
        ));
        waiting.push((s.provider.to_string(), base_url, log_path, child));
    }
    let deadline = Instant::now() + Duration::from_secs(120);
    for (provider, base_url, log, mut child) in waiting {
        while !answering(&base_url) {
            // A server that died is not waited for: its end says more than a timeout would.
            if let Ok(Some(status)) = child.try_wait() {
                let _ = std::fs::remove_file(pid_file(cache, &provider));
                return Err(LocalError::Exited {
                    provider,
                    how: ended_how(status),
                    log: log.display().to_string(),
                });
            }
            if Instant::now() > deadline {
                return Err(LocalError::NotAnswering {
                    provider,
                    secs: 120,
                    log: log.display().to_string(),
                });
            }
            std::thread::sleep(Duration::from_millis(250));
        }
    }
    Ok(started)
}

/// What `stop` did about one recorded server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StopOutcome {
    /// The provider whose server it was.
    pub provider: &'static str,
    /// The recorded pid.
    pub pid: u32,
    /// What the pid was when `stop` looked: [`Standing::Ours`] means it was signalled.
    pub standing: Standing,
}

/// Stops the servers this tool started (by pid file) and removes their pid files. A pid
/// that is no longer the recorded llama-server (gone, or reused by another process after a
/// crash or a reboot) is never signalled; its pid file is removed all the same.
pub fn stop(cache: &Path) -> Vec<StopOutcome> {
    let mut outcomes = Vec::new();
    for s in SERVERS {
        let path = pid_file(cache, s.provider);
        let Some(record) = PidRecord::read(&path) else {
            continue;
        };
        let standing = record.standing();
        if standing == Standing::Ours {
            if let Ok(p) = i32::try_from(record.pid) {
                // SAFETY: kill(2) on the pid of the llama-server we started, checked just
                // above by its command line, port and start time; no memory involved.
                unsafe {
                    libc::kill(p, libc::SIGTERM);
                }
                let deadline = Instant::now() + Duration::from_secs(5);
                while record.standing() == Standing::Ours && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
        }
        let _ = std::fs::remove_file(&path);
        outcomes.push(StopOutcome {
            provider: s.provider,
            pid: record.pid,
            standing,
        });
    }
    outcomes
}

/// The local providers that the given models use.
pub fn providers_of(config: &Config, models: &[String]) -> Vec<String> {
    let mut out: Vec<String> = models
        .iter()
        .filter_map(|m| config.models.get(m))
        .map(|m| m.provider.clone())
        .filter(|p| SERVERS.iter().any(|s| s.provider == p))
        .collect();
    out.sort();
    out.dedup();
    out
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::pid::tests::{execed, fake_server};
    use super::*;

    #[test]
    fn stop_signals_its_server_and_never_a_stranger_with_a_recorded_pid() {
        let cache = tempfile::tempdir().unwrap();
        let run = cache.path().join("run");
        std::fs::create_dir_all(&run).unwrap();
        let [coder, small] = [&SERVERS[0], &SERVERS[1]];
        let mut server = fake_server(cache.path(), 18_092);
        let mut stranger = execed(Command::new("sleep").arg("30").spawn().unwrap());
        let pid_file = |provider: &str| run.join(format!("{provider}.pid"));
        let write = |provider: &str, r: PidRecord| std::fs::write(pid_file(provider), r.to_text());
        write(coder.provider, PidRecord::of_child(server.id(), 18_092)).unwrap();
        write(small.provider, PidRecord::of_child(stranger.id(), 18_093)).unwrap();

        let outcomes = stop(cache.path());
        let stopped = &outcomes[0];
        assert_eq!(
            (stopped.provider, stopped.pid),
            (coder.provider, server.id())
        );
        assert_eq!(stopped.standing, Standing::Ours);
        // The server died of the signal; the stranger lives and only its record is gone.
        assert!(server.wait().unwrap().code().is_none());
        assert!(
            matches!(outcomes[1].standing, Standing::Reused(_)),
            "{outcomes:?}"
        );
        assert!(
            stranger.try_wait().unwrap().is_none(),
            "the stranger was signalled"
        );
        assert!(!pid_file(coder.provider).exists() && !pid_file(small.provider).exists());
        stranger.kill().unwrap();
        stranger.wait().unwrap();
    }
}
