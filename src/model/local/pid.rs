//! Pid files of the local servers, and whether the process behind a recorded pid is still
//! the llama-server this tool started.
//!
//! A pid outlives its process: after a reboot or a crash the number is handed to whatever
//! starts next, and signalling it would kill a stranger. So a pid file records, besides the
//! pid, the port the server was given and the process's start time (`/proc/<pid>/stat`,
//! field 22, in clock ticks since boot); a process is ours only while its command line names
//! `llama-server` with that port and its start time is the recorded one.

use std::path::Path;

use crate::process::start_time;

/// What a pid file says about one server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PidRecord {
    /// The process id.
    pub pid: u32,
    /// The `--port` it was started with (absent in files written before ports were kept).
    pub port: Option<u16>,
    /// Its start time in clock ticks since boot (absent where `/proc` was not readable).
    pub start: Option<u64>,
}

impl PidRecord {
    /// The record of the process `pid` just started on `port`.
    pub fn of_child(pid: u32, port: u16) -> PidRecord {
        PidRecord {
            pid,
            port: Some(port),
            start: start_time(pid),
        }
    }

    /// The file's text: the pid on the first line (what older builds wrote and read), then
    /// `port=` and `start=` lines.
    pub fn to_text(&self) -> String {
        let mut s = format!("{}\n", self.pid);
        if let Some(p) = self.port {
            s.push_str(&format!("port={p}\n"));
        }
        if let Some(t) = self.start {
            s.push_str(&format!("start={t}\n"));
        }
        s
    }

    /// Parses a pid file's text; `None` when its first line is not a pid.
    pub fn parse(text: &str) -> Option<PidRecord> {
        let mut lines = text.lines();
        let pid = lines.next()?.trim().parse().ok()?;
        let mut record = PidRecord {
            pid,
            port: None,
            start: None,
        };
        for line in lines {
            match line.trim().split_once('=') {
                Some(("port", v)) => record.port = v.parse().ok(),
                Some(("start", v)) => record.start = v.parse().ok(),
                _ => {}
            }
        }
        Some(record)
    }

    /// Reads the pid file at `path`.
    pub fn read(path: &Path) -> Option<PidRecord> {
        PidRecord::parse(&std::fs::read_to_string(path).ok()?)
    }

    /// Whether the process behind the pid is still the server this record describes.
    pub fn standing(&self) -> Standing {
        let Some(cmdline) = command_line(self.pid) else {
            return Standing::Gone;
        };
        match self.mismatch(&cmdline, start_time(self.pid)) {
            None => Standing::Ours,
            Some(why) => Standing::Reused(why),
        }
    }

    /// Why a process with `cmdline` (its argv) and start time `start` is not the recorded
    /// server, or `None` when it is.
    pub fn mismatch(&self, cmdline: &[String], start: Option<u64>) -> Option<String> {
        let program = cmdline.first().map(String::as_str).unwrap_or("");
        let name = Path::new(program)
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("");
        if name != "llama-server" {
            let shown = crate::bounded::clip(program, 80);
            return Some(format!("it now runs `{shown}`, not llama-server"));
        }
        if let Some(port) = self.port {
            let port = port.to_string();
            if !cmdline.windows(2).any(|w| w[0] == "--port" && w[1] == port) {
                return Some(format!(
                    "it is a llama-server, but not the one on port {port}"
                ));
            }
        }
        match (self.start, start) {
            (Some(recorded), Some(now)) if recorded != now => {
                Some("it started later than the recorded server: the pid was reused".into())
            }
            _ => None,
        }
    }
}

/// Whether a recorded server still runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Standing {
    /// The process is the recorded llama-server.
    Ours,
    /// No process has the pid.
    Gone,
    /// Another process has the pid now; why it is not ours.
    Reused(String),
}

/// The argv of process `pid`, `None` when there is no such process or it has none (a
/// zombie that died but was not reaped yet, a kernel thread).
fn command_line(pid: u32) -> Option<Vec<String>> {
    let bytes = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let argv: Vec<String> = bytes
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    (!argv.is_empty()).then_some(argv)
}

#[cfg(all(test, target_os = "linux"))]
pub(super) mod tests {
    use super::*;
    use std::process::{Child, Command, Stdio};

    fn argv(args: &[&str]) -> Vec<String> {
        args.iter().map(|a| a.to_string()).collect()
    }

    #[test]
    fn the_file_keeps_port_and_start_and_old_files_still_read() {
        let r = PidRecord {
            pid: 4242,
            port: Some(8091),
            start: Some(123_456),
        };
        assert_eq!(r.to_text(), "4242\nport=8091\nstart=123456\n");
        assert_eq!(PidRecord::parse(&r.to_text()), Some(r));
        let old = PidRecord::parse("4242\n").unwrap();
        assert_eq!((old.pid, old.port, old.start), (4242, None, None));
        assert_eq!(PidRecord::parse("not a pid\n"), None);
    }

    #[test]
    fn only_the_recorded_llama_server_is_ours() {
        let r = PidRecord {
            pid: 1,
            port: Some(8091),
            start: Some(500),
        };
        let server = argv(&["/c/bin/llama-server", "-m", "m.gguf", "--port", "8091"]);
        assert_eq!(r.mismatch(&server, Some(500)), None);
        let why = r.mismatch(&argv(&["/usr/bin/postgres", "-D", "x"]), Some(500));
        assert!(why
            .unwrap()
            .contains("`/usr/bin/postgres`, not llama-server"));
        let other_port = argv(&["/c/bin/llama-server", "--port", "9000"]);
        assert!(r
            .mismatch(&other_port, Some(500))
            .unwrap()
            .contains("port 8091"));
        assert!(r.mismatch(&server, Some(501)).unwrap().contains("reused"));
        // A file from before ports and start times were kept trusts the name alone.
        let old = PidRecord::parse("1\n").unwrap();
        assert_eq!(old.mismatch(&server, Some(9)), None);
        assert!(old.mismatch(&argv(&["sleep", "30"]), None).is_some());
    }

    /// `child` once its command line can be read: `spawn` may return while the kernel is
    /// still finishing the exec, when `/proc/<pid>/cmdline` reads empty.
    pub(in crate::model::local) fn execed(child: Child) -> Child {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while command_line(child.id()).is_none() {
            assert!(std::time::Instant::now() < deadline, "the child never ran");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        child
    }

    /// A process whose command line is `<dir>/llama-server -c 'read x' --port <port>`: a
    /// shell started through a link of that name, waiting on its stdin (no child to leak).
    pub(in crate::model::local) fn fake_server(dir: &Path, port: u16) -> Child {
        let link = dir.join("llama-server");
        if !link.exists() {
            std::os::unix::fs::symlink("/bin/sh", &link).unwrap();
        }
        execed(
            Command::new(&link)
                .args(["-c", "read x", "--port", &port.to_string()])
                .stdin(Stdio::piped())
                .spawn()
                .unwrap(),
        )
    }

    #[test]
    fn a_live_process_is_checked_by_name_port_and_start_time() {
        let dir = tempfile::tempdir().unwrap();
        let mut server = fake_server(dir.path(), 18_091);
        let ours = PidRecord::of_child(server.id(), 18_091);
        assert!(ours.start.is_some());
        assert_eq!(ours.standing(), Standing::Ours);
        let reused = PidRecord {
            start: ours.start.map(|t| t + 1),
            ..ours.clone()
        };
        assert!(matches!(reused.standing(), Standing::Reused(_)));
        let mut sleeper = execed(Command::new("sleep").arg("30").spawn().unwrap());
        let stranger = PidRecord::of_child(sleeper.id(), 18_091);
        assert!(matches!(stranger.standing(), Standing::Reused(ref w) if w.contains("sleep")));
        for child in [&mut server, &mut sleeper] {
            child.kill().unwrap();
            child.wait().unwrap();
        }
        assert_eq!(ours.standing(), Standing::Gone);
    }
}
