//! The plain renderer of a run's progress: one `triad: …` line on stderr per event.

use crate::pipeline::{Observer, Progress};

/// Prints progress lines on stderr, secrets redacted (nothing with `--quiet`).
pub struct Lines {
    /// Whether anything is printed.
    pub enabled: bool,
}

impl Lines {
    fn say(&self, msg: &str) {
        if self.enabled {
            super::say(&format!("triad: {msg}"));
        }
    }
}

impl Observer for Lines {
    fn progress(&self, event: &Progress<'_>) {
        if !self.enabled {
            return;
        }
        if let Some(line) = crate::report::progress::line(event) {
            self.say(&line);
        }
    }
}
