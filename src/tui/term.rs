//! The terminal itself, through libc: whether a stream is one, its size, raw input for the
//! session screen, the keys people press, and the capture of stderr while a screen is
//! drawn (a warning printed in the middle of a frame would tear it; captured, it becomes a
//! line of the view). Whatever is changed is put back by a guard's `Drop` and, for a
//! panic, by a hook, so the user's terminal is never left raw or on the alternate screen.

use std::io::{BufRead, Read};
use std::os::fd::{AsRawFd, FromRawFd, RawFd};
use std::sync::Mutex;

/// Whether `fd` is a terminal.
pub fn is_tty(fd: RawFd) -> bool {
    // SAFETY: isatty only reads the descriptor's state.
    unsafe { libc::isatty(fd) == 1 }
}

/// Whether terminal drawing makes sense here: `TERM` is set and not `dumb`.
pub fn capable(env: &[(String, String)]) -> bool {
    env.iter()
        .find(|(k, _)| k == "TERM")
        .is_some_and(|(_, v)| !v.is_empty() && v != "dumb")
}

/// The size of the terminal on `fd` as (columns, rows), if it says.
pub fn size(fd: RawFd) -> Option<(usize, usize)> {
    // SAFETY: TIOCGWINSZ writes one winsize into the struct we own.
    let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
    let ok = unsafe { libc::ioctl(fd, libc::TIOCGWINSZ, &mut ws) } == 0;
    (ok && ws.ws_col > 0 && ws.ws_row > 0).then_some((ws.ws_col as usize, ws.ws_row as usize))
}

/// What must be undone when the program leaves: the saved terminal modes, the bytes that
/// leave the alternate screen, the saved stderr.
#[derive(Default)]
struct Undo {
    termios: Option<(RawFd, libc::termios)>,
    leave: Option<(RawFd, &'static str)>,
    stderr: Option<RawFd>,
}

static UNDO: Mutex<Option<Undo>> = Mutex::new(None);

fn with_undo(f: impl FnOnce(&mut Undo)) {
    let mut guard = UNDO.lock().unwrap_or_else(|e| e.into_inner());
    f(guard.get_or_insert_with(Undo::default));
}

/// Puts the terminal back as it was: modes, screen, stderr. Safe to call twice.
pub fn restore() {
    let undo = UNDO.lock().unwrap_or_else(|e| e.into_inner()).take();
    let Some(undo) = undo else { return };
    if let Some((fd, bytes)) = undo.leave {
        write_all(fd, bytes.as_bytes());
    }
    if let Some((fd, t)) = undo.termios {
        // SAFETY: restores the modes tcgetattr gave us for the same descriptor.
        unsafe { libc::tcsetattr(fd, libc::TCSANOW, &t) };
    }
    if let Some(saved) = undo.stderr {
        // SAFETY: saved is our duplicate of the original stderr; 2 is replaced by it.
        unsafe {
            libc::dup2(saved, 2);
            libc::close(saved);
        }
    }
}

/// Installs (once) a panic hook that restores the terminal before the panic is reported.
fn hook_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            default(info);
        }));
    });
}

/// Writes all of `bytes` to `fd`, ignoring errors (a terminal that went away).
pub fn write_all(fd: RawFd, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        // SAFETY: writes from a live slice.
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if n <= 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return;
        }
        bytes = &bytes[n as usize..];
    }
}

/// Raw input on `fd` (no echo, no line editing, no signals from keys: Ctrl-C arrives as
/// a key), and the alternate screen on `out`, until [`restore`].
pub fn enter_screen(fd: RawFd, out: RawFd) -> std::io::Result<()> {
    hook_panics();
    // SAFETY: tcgetattr fills a termios we own; tcsetattr applies a modified copy.
    let mut t: libc::termios = unsafe { std::mem::zeroed() };
    if unsafe { libc::tcgetattr(fd, &mut t) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let saved = t;
    t.c_lflag &= !(libc::ICANON | libc::ECHO | libc::ISIG | libc::IEXTEN);
    t.c_iflag &= !(libc::IXON | libc::ICRNL | libc::INLCR);
    t.c_cc[libc::VMIN] = 1;
    t.c_cc[libc::VTIME] = 0;
    if unsafe { libc::tcsetattr(fd, libc::TCSANOW, &t) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    with_undo(|u| {
        u.termios = Some((fd, saved));
        u.leave = Some((out, "\x1b[0m\x1b[?25h\x1b[?1049l"));
    });
    write_all(out, b"\x1b[?1049h\x1b[?25l\x1b[2J");
    Ok(())
}

/// Hands every line written to stderr (fd 2) from now on to `each` (until it returns
/// false), until [`restore`]; returns a descriptor of the original stderr to draw on, and
/// the thread that reads the capture (it ends once every writer let go of the pipe).
pub fn capture_stderr(
    mut each: impl FnMut(String) -> bool + Send + 'static,
) -> std::io::Result<(RawFd, std::thread::JoinHandle<()>)> {
    hook_panics();
    let mut fds = [0; 2];
    // SAFETY: pipe fills two descriptors; dup/dup2 only manipulate descriptors we hold.
    unsafe {
        if libc::pipe(fds.as_mut_ptr()) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let saved = libc::dup(2);
        if saved < 0 {
            libc::close(fds[0]);
            libc::close(fds[1]);
            return Err(std::io::Error::last_os_error());
        }
        libc::fcntl(saved, libc::F_SETFD, libc::FD_CLOEXEC);
        libc::fcntl(fds[0], libc::F_SETFD, libc::FD_CLOEXEC);
        libc::dup2(fds[1], 2);
        libc::close(fds[1]);
        with_undo(|u| u.stderr = Some(saved));
        // The reader owns the pipe's read end; it ends when every writer is gone.
        let reader = std::fs::File::from_raw_fd(fds[0]);
        let thread = std::thread::spawn(move || {
            for line in std::io::BufReader::new(reader)
                .lines()
                .map_while(Result::ok)
            {
                if !each(line) {
                    break;
                }
            }
        });
        Ok((saved, thread))
    }
}

/// A key the session screen understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    /// A printable character.
    Char(char),
    /// Enter.
    Enter,
    /// Backspace.
    Backspace,
    /// Ctrl-C.
    Interrupt,
    /// Ctrl-D.
    Eof,
    /// Ctrl-L: draw everything again.
    Redraw,
    /// Ctrl-U: clear the input line.
    Clear,
    /// Page Up (or Up): scroll the log back.
    PageUp,
    /// Page Down (or Down): scroll the log forward.
    PageDown,
}

/// Turns the bytes a terminal sends into keys; sequences it does not use are dropped.
#[derive(Default)]
pub struct Decoder {
    pending: Vec<u8>,
}

impl Decoder {
    /// The keys `bytes` completes (a sequence cut between two reads waits for the rest).
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<Key> {
        self.pending.extend_from_slice(bytes);
        let mut keys = Vec::new();
        let mut i = 0;
        let buf = std::mem::take(&mut self.pending);
        while i < buf.len() {
            let rest = &buf[i..];
            let (key, used) = match rest[0] {
                b'\r' | b'\n' => (Some(Key::Enter), 1),
                0x7f | 0x08 => (Some(Key::Backspace), 1),
                0x03 => (Some(Key::Interrupt), 1),
                0x04 => (Some(Key::Eof), 1),
                0x0c => (Some(Key::Redraw), 1),
                0x15 => (Some(Key::Clear), 1),
                0x1b => match escape(rest) {
                    Some(x) => x,
                    None => {
                        self.pending = rest.to_vec();
                        break;
                    }
                },
                b if b < 0x20 => (None, 1),
                _ => match utf8(rest) {
                    Some((c, n)) => (Some(Key::Char(c)), n),
                    None if rest.len() < 4 => {
                        self.pending = rest.to_vec();
                        break;
                    }
                    None => (None, 1),
                },
            };
            keys.extend(key);
            i += used;
        }
        keys
    }
}

/// An escape sequence at the start of `b`: the key and its length, or `None` when it is
/// not complete yet.
fn escape(b: &[u8]) -> Option<(Option<Key>, usize)> {
    match b.get(1) {
        None => None,
        Some(b'[') | Some(b'O') => {
            let end = b[2..].iter().position(|c| (0x40..=0x7e).contains(c))? + 2;
            let key = match &b[2..=end] {
                b"5~" | b"A" => Some(Key::PageUp),
                b"6~" | b"B" => Some(Key::PageDown),
                _ => None,
            };
            Some((key, end + 1))
        }
        Some(_) => Some((None, 2)),
    }
}

/// The character at the start of `b`, and its length, if it is complete UTF-8.
fn utf8(b: &[u8]) -> Option<(char, usize)> {
    (1..=b.len().min(4)).find_map(|n| {
        std::str::from_utf8(&b[..n])
            .ok()
            .and_then(|s| s.chars().next())
            .map(|c| (c, n))
    })
}

/// Reads keys from stdin on a thread of its own, handing each to `each`, until stdin ends
/// (a last [`Key::Eof`]) or `each` returns false.
pub fn read_keys(mut each: impl FnMut(Key) -> bool + Send + 'static) {
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        let fd = stdin.as_raw_fd();
        // SAFETY: a File over stdin's descriptor, never closed (ManuallyDrop).
        let mut file = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd) });
        let mut decoder = Decoder::default();
        let mut buf = [0u8; 256];
        loop {
            let n = match file.read(&mut buf) {
                Ok(0) => {
                    each(Key::Eof);
                    return;
                }
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => return,
            };
            for k in decoder.feed(&buf[..n]) {
                if !each(k) {
                    return;
                }
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_decoded_across_reads() {
        let mut d = Decoder::default();
        assert_eq!(
            d.feed(b"hi\r"),
            vec![Key::Char('h'), Key::Char('i'), Key::Enter]
        );
        // "é" split between two reads, then a Page Up split too.
        assert_eq!(d.feed(&[0xc3]), vec![]);
        assert_eq!(d.feed(&[0xa9, 0x1b, b'[']), vec![Key::Char('é')]);
        assert_eq!(
            d.feed(b"5~\x7f\x03"),
            vec![Key::PageUp, Key::Backspace, Key::Interrupt]
        );
        // Sequences it does not use are dropped whole.
        assert_eq!(d.feed(b"\x1b[1;5Cx"), vec![Key::Char('x')]);
    }

    #[test]
    fn capability_needs_a_real_term() {
        let env = |v: &str| vec![("TERM".to_string(), v.to_string())];
        assert!(capable(&env("xterm-256color")));
        assert!(!capable(&env("dumb")));
        assert!(!capable(&[]));
    }
}
