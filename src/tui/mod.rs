//! Terminal renderers: the session screen (seed 002's layout) and the live run view, both
//! fed by the observers the engines already report to. Drawn with plain ANSI sequences on
//! libc's terminal calls (no toolkit to build): a line model measured in cells
//! ([`text`]), the terminal's modes, size, keys and stderr ([`term`]). They are used only
//! on a terminal that can draw (`TERM` set, not `dumb`) and never with `--no-tui`; the
//! plain renderers stay the default everywhere else.

pub mod run;
pub mod session;
pub mod term;
pub mod text;

/// Whether a live view may draw: not `--no-tui`, a capable `TERM`, and every one of `fds`
/// a terminal.
pub fn wanted(no_tui: bool, env: &[(String, String)], fds: &[i32]) -> bool {
    !no_tui && term::capable(env) && fds.iter().all(|&fd| term::is_tty(fd))
}
