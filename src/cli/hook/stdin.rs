//! What git hands a hook on stdin.

use std::io::{IsTerminal, Read};

/// All of stdin, or nothing when it is a terminal (someone ran the hook by hand, or a tool
/// like pre-commit that passes its input through the environment instead).
pub(super) fn read_stdin() -> std::io::Result<String> {
    let mut stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Ok(String::new());
    }
    let mut text = String::new();
    stdin.read_to_string(&mut text)?;
    Ok(text)
}
