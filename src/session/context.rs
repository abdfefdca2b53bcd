//! Context accounting (seed 002, Context Management): how much of a model's context window
//! a conversation fills, from the usage the server reported (input + cache read + cache
//! creation, [`Usage::context_tokens`]), never from an estimate of the text. Past 70 % the
//! seed's "context thins" warning is due, past 85 % its "context critical" one, each once;
//! at the hard limit (95 % unless configured) the hand-off is forced, whatever the model
//! says.

use crate::model::Usage;

/// Share of the window past which the model is told to begin concluding.
pub const THINNING: f64 = 0.70;

/// Share of the window past which the model is told to stop and report.
pub const CRITICAL: f64 = 0.85;

/// The seed's warning at [`THINNING`], injected after the next tool result.
pub const THINNING_MESSAGE: &str =
    "Context thins. Begin concluding your current thread. Prepare to hand off.";

/// The seed's warning at [`CRITICAL`] (its "Arbiter" is the manager here).
pub const CRITICAL_MESSAGE: &str = "CONTEXT CRITICAL. Cease new work. Report your progress and remaining tasks to the manager immediately.";

/// How full a window is, in the steps that change what the session does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Pressure {
    /// Below 70 %: work on.
    Fine,
    /// Past 70 %: conclude the current thread.
    Thinning,
    /// Past 85 %: report now.
    Critical,
    /// At the hard limit: the hand-off happens without waiting for the report.
    HandOff,
}

/// One model conversation's window and how much of it the last answer's prompt filled.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextMeter {
    window: u64,
    hard_limit: f64,
    used: u64,
    warned: Pressure,
}

impl ContextMeter {
    /// A meter for a window of `window` tokens, forcing the hand-off at `hard_limit` (a
    /// share, clamped between [`CRITICAL`] and 1.0 so the warnings always come first).
    pub fn new(window: u64, hard_limit: f64) -> ContextMeter {
        ContextMeter {
            window: window.max(1),
            hard_limit: hard_limit.clamp(CRITICAL, 1.0),
            used: 0,
            warned: Pressure::Fine,
        }
    }

    /// Records the usage of the latest answer: its prompt is the whole conversation so far,
    /// so it replaces (does not add to) what was used.
    pub fn observe(&mut self, usage: &Usage) {
        self.used = usage.context_tokens();
    }

    /// The window's size in tokens.
    pub fn window(&self) -> u64 {
        self.window
    }

    /// The same meter for a window of another size (the conversation moved to a model
    /// with a different window), keeping what was used and warned about.
    pub fn resized(&self, window: u64, hard_limit: f64) -> ContextMeter {
        ContextMeter {
            window: window.max(1),
            hard_limit: hard_limit.clamp(CRITICAL, 1.0),
            ..self.clone()
        }
    }

    /// Tokens of the window in use.
    pub fn used(&self) -> u64 {
        self.used
    }

    /// The share of the window in use, 0.0 to 1.0 (more when a server counted past it).
    pub fn share(&self) -> f64 {
        self.used as f64 / self.window as f64
    }

    /// The share as a whole percentage, for a status bar.
    pub fn percent(&self) -> u32 {
        (self.share() * 100.0).floor() as u32
    }

    /// Where the window stands.
    pub fn pressure(&self) -> Pressure {
        let s = self.share();
        if s >= self.hard_limit {
            Pressure::HandOff
        } else if s > CRITICAL {
            Pressure::Critical
        } else if s > THINNING {
            Pressure::Thinning
        } else {
            Pressure::Fine
        }
    }

    /// The warning to inject after the next tool result, if one is due: each level's
    /// message once, the critical one also when the window jumped straight past 85 %.
    pub fn warning_due(&mut self) -> Option<&'static str> {
        let now = self.pressure().min(Pressure::Critical);
        if now <= self.warned {
            return None;
        }
        self.warned = now;
        match now {
            Pressure::Thinning => Some(THINNING_MESSAGE),
            Pressure::Critical => Some(CRITICAL_MESSAGE),
            Pressure::Fine | Pressure::HandOff => None,
        }
    }

    /// Whether the hand-off must happen now, report or not.
    pub fn must_hand_off(&self) -> bool {
        self.pressure() == Pressure::HandOff
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::DEFAULT_HARD_LIMIT;

    fn usage(input: u64, read: u64, created: u64) -> Usage {
        Usage {
            input_tokens: input,
            output_tokens: 10,
            cache_read_input_tokens: read,
            cache_creation_input_tokens: created,
        }
    }

    #[test]
    fn each_warning_comes_once_past_its_threshold() {
        let mut m = ContextMeter::new(1000, DEFAULT_HARD_LIMIT);
        m.observe(&usage(700, 0, 0));
        assert_eq!(
            (m.percent(), m.pressure()),
            (70, Pressure::Fine),
            "70 % is not past 70 %"
        );
        assert_eq!(m.warning_due(), None);
        m.observe(&usage(701, 0, 0));
        assert_eq!(m.warning_due(), Some(THINNING_MESSAGE));
        assert_eq!(m.warning_due(), None, "once");
        m.observe(&usage(860, 0, 0));
        assert_eq!(m.warning_due(), Some(CRITICAL_MESSAGE));
        assert_eq!(m.warning_due(), None);
        assert!(!m.must_hand_off());
        m.observe(&usage(950, 0, 0));
        assert!(m.must_hand_off());
        assert_eq!(
            m.warning_due(),
            None,
            "the hand-off is forced, not warned about"
        );
    }

    #[test]
    fn a_jump_past_both_thresholds_gives_the_critical_warning() {
        let mut m = ContextMeter::new(1000, DEFAULT_HARD_LIMIT);
        m.observe(&usage(900, 0, 0));
        assert_eq!(m.warning_due(), Some(CRITICAL_MESSAGE));
        assert_eq!(m.warning_due(), None);
    }

    #[test]
    fn the_window_is_filled_by_the_latest_prompt_not_the_sum() {
        let mut m = ContextMeter::new(200_000, DEFAULT_HARD_LIMIT);
        m.observe(&usage(100_000, 60_000, 0));
        m.observe(&usage(120_000, 90_000, 0));
        assert_eq!(m.used(), 120_000);
        assert_eq!(m.percent(), 60);
    }

    #[test]
    fn a_hard_limit_below_the_critical_warning_is_raised_to_it() {
        let mut m = ContextMeter::new(100, 0.5);
        m.observe(&usage(80, 0, 0));
        assert!(!m.must_hand_off(), "the warnings come first");
        m.observe(&usage(85, 0, 0));
        assert!(m.must_hand_off());
        let empty = ContextMeter::new(0, 2.0);
        assert_eq!(empty.share(), 0.0, "a zero window does not divide by zero");
    }
}
