//! A pseudo-terminal for tests that drive the real binary's terminal views: the child gets
//! a pty of a given size as its controlling terminal (stdin, stdout, stderr); everything
//! it writes is fed to `vt100`, an independent terminal emulator, so a test reads the
//! screen a user would see, not the bytes the program meant to send.

use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A child process on a pseudo-terminal, and the screen it drew.
pub struct Pty {
    child: Child,
    master: std::fs::File,
    parser: Arc<Mutex<vt100::Parser>>,
    raw: Arc<Mutex<Vec<u8>>>,
    reader: std::thread::JoinHandle<()>,
}

impl Pty {
    /// Starts `cmd` on a `cols`×`rows` terminal with `TERM=xterm-256color`.
    pub fn spawn(mut cmd: Command, cols: u16, rows: u16) -> Pty {
        let ws = libc::winsize {
            ws_row: rows,
            ws_col: cols,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        let (mut master, mut slave) = (0, 0);
        // SAFETY: openpty fills two descriptors; the winsize is ours.
        let rc = unsafe {
            libc::openpty(
                &mut master,
                &mut slave,
                std::ptr::null_mut(),
                std::ptr::null(),
                &ws,
            )
        };
        assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
        // SAFETY: both descriptors are fresh and owned here.
        let slave = unsafe { OwnedFd::from_raw_fd(slave) };
        let master = unsafe { std::fs::File::from_raw_fd(master) };
        cmd.env("TERM", "xterm-256color")
            .stdin(slave.try_clone().unwrap())
            .stdout(slave.try_clone().unwrap())
            .stderr(slave);
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY as _, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd.spawn().expect("spawn on the pty");
        drop(cmd);
        let parser = Arc::new(Mutex::new(vt100::Parser::new(
            rows.try_into().expect("rows"),
            cols.try_into().expect("cols"),
            0,
        )));
        let raw = Arc::new(Mutex::new(Vec::new()));
        let mut reader = master.try_clone().unwrap();
        let (p, r) = (Arc::clone(&parser), Arc::clone(&raw));
        let reader = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            // The read fails (EIO) once the child and its children closed the terminal.
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                p.lock().unwrap().process(&buf[..n]);
                r.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        Pty {
            child,
            master,
            parser,
            raw,
            reader,
        }
    }

    /// The screen's text now, row by row.
    pub fn screen(&self) -> String {
        self.parser.lock().unwrap().screen().contents()
    }

    /// Every byte the child wrote so far.
    pub fn raw(&self) -> String {
        String::from_utf8_lossy(&self.raw.lock().unwrap()).into_owned()
    }

    /// Whether the child switched to the alternate screen and is on it now.
    pub fn on_alternate_screen(&self) -> bool {
        self.parser.lock().unwrap().screen().alternate_screen()
    }

    /// Resizes the terminal to `cols`×`rows`, as a window manager would (the child is told
    /// by SIGWINCH), and the emulator with it.
    pub fn resize(&mut self, cols: u16, rows: u16) {
        use std::os::fd::AsRawFd;
        let ws = libc::winsize {
            ws_row: rows,
            ws_col: cols,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        self.parser.lock().unwrap().screen_mut().set_size(
            rows.try_into().expect("rows"),
            cols.try_into().expect("cols"),
        );
        // SAFETY: TIOCSWINSZ reads the winsize we own.
        let rc = unsafe { libc::ioctl(self.master.as_raw_fd(), libc::TIOCSWINSZ as _, &ws) };
        assert_eq!(rc, 0, "TIOCSWINSZ: {}", std::io::Error::last_os_error());
    }

    /// Types `keys`.
    pub fn send(&mut self, keys: &str) {
        self.master.write_all(keys.as_bytes()).unwrap();
        self.master.flush().unwrap();
    }

    /// Waits (up to `limit`) until `ok` holds for the screen; returns the screen then.
    /// Panics with the screen when it never does, or when the child exits first.
    pub fn wait_for(&mut self, what: &str, limit: Duration, ok: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if ok(&screen) {
                return screen;
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                // What it wrote last may still be on its way.
                std::thread::sleep(Duration::from_millis(300));
                let screen = self.screen();
                if ok(&screen) {
                    return screen;
                }
                panic!("exited ({status}) before {what}; the screen:\n{screen}");
            }
            assert!(
                start.elapsed() < limit,
                "no {what} after {limit:?}; the screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits for the child to exit (killing it after `limit`) and for its last output.
    pub fn wait(&mut self, limit: Duration) -> ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                // Everything it wrote is read once the terminal reports its end (the
                // reader stops), or after a generous moment if a grandchild holds it.
                let drained = Instant::now();
                while !self.reader.is_finished() && drained.elapsed() < Duration::from_secs(5) {
                    std::thread::sleep(Duration::from_millis(20));
                }
                return status;
            }
            if start.elapsed() > limit {
                let _ = self.child.kill();
                panic!(
                    "still running after {limit:?}; the screen:\n{}",
                    self.screen()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Pty {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
