//! A circuit breaker per model: after repeated failures, stop calling it for a while. Per
//! model, not per provider: one model failing on a server (a broken quantization, a model
//! the server cannot load) says nothing of the other models it serves.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::cause::Cause;

#[derive(Debug, Clone, Copy)]
enum State {
    Closed {
        failures: u32,
    },
    Open {
        until: Instant,
    },
    /// The open period ended and one probe call is under way.
    Probing,
}

/// What the breaker says about calling a model now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Permit {
    /// Call normally.
    Allowed,
    /// The circuit was open and this call is the one probe.
    Probe,
    /// Do not call; the circuit opens again for at most this long.
    Refused(Duration),
}

/// Breakers for every model of a process, by registry name.
#[derive(Debug)]
pub struct Breakers {
    threshold: u32,
    open_for: Duration,
    state: Mutex<HashMap<String, State>>,
    /// Each model's last failure, so a call the open circuit refuses still says the cause.
    last: Mutex<HashMap<String, (String, Cause)>>,
}

impl Breakers {
    /// `threshold` consecutive failures open a circuit for `open_for`.
    pub fn new(threshold: u32, open_for: Duration) -> Self {
        Breakers {
            threshold: threshold.max(1),
            open_for,
            state: Mutex::new(HashMap::new()),
            last: Mutex::new(HashMap::new()),
        }
    }

    /// How long a circuit stays open once it opens.
    pub fn open_for(&self) -> Duration {
        self.open_for
    }

    /// Keeps why `model`'s last call failed, and its kind (see [`Breakers::last_failure`]).
    pub fn note_failure(&self, model: &str, why: &str, cause: &Cause) {
        self.last
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(model.to_string(), (why.to_string(), cause.clone()));
    }

    /// Why `model`'s last failed call failed, if one did: what an open circuit says instead
    /// of only that it is open.
    pub fn last_failure(&self, model: &str) -> Option<(String, Cause)> {
        self.last
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(model)
            .cloned()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, State>> {
        // A panic while holding the lock leaves plain data behind; keep using it.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Asks to call `model` now.
    pub fn permit(&self, model: &str) -> Permit {
        let mut map = self.lock();
        let state = map
            .entry(model.to_string())
            .or_insert(State::Closed { failures: 0 });
        match *state {
            State::Closed { .. } => Permit::Allowed,
            State::Open { until } => {
                let now = Instant::now();
                if now >= until {
                    *state = State::Probing;
                    Permit::Probe
                } else {
                    Permit::Refused(until - now)
                }
            }
            // Another call is probing; wait for its result.
            State::Probing => Permit::Refused(self.open_for),
        }
    }

    /// Records a successful call: the circuit closes.
    pub fn success(&self, model: &str) {
        self.lock()
            .insert(model.to_string(), State::Closed { failures: 0 });
    }

    /// Records a failed attempt; returns true when this failure opened the circuit.
    pub fn failure(&self, model: &str) -> bool {
        let mut map = self.lock();
        let state = map
            .entry(model.to_string())
            .or_insert(State::Closed { failures: 0 });
        let next = match *state {
            State::Closed { failures } if failures + 1 < self.threshold => State::Closed {
                failures: failures + 1,
            },
            State::Open { until } => State::Open { until },
            _ => State::Open {
                until: Instant::now() + self.open_for,
            },
        };
        let opened = matches!(next, State::Open { .. }) && !matches!(*state, State::Open { .. });
        *state = next;
        opened
    }

    /// Whether the circuit of `model` is open right now (for listings).
    pub fn is_open(&self, model: &str) -> bool {
        matches!(self.lock().get(model), Some(State::Open { until }) if Instant::now() < *until)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_after_threshold_then_probes_once_and_closes() {
        let b = Breakers::new(3, Duration::from_millis(30));
        assert!(!b.failure("p"));
        assert!(!b.failure("p"));
        assert_eq!(b.permit("p"), Permit::Allowed);
        assert!(b.failure("p"));
        assert!(matches!(b.permit("p"), Permit::Refused(_)));
        assert_eq!(b.permit("other"), Permit::Allowed);
        std::thread::sleep(Duration::from_millis(40));
        assert_eq!(b.permit("p"), Permit::Probe);
        assert!(
            matches!(b.permit("p"), Permit::Refused(_)),
            "one probe at a time"
        );
        b.success("p");
        assert_eq!(b.permit("p"), Permit::Allowed);
    }

    #[test]
    fn a_failed_probe_reopens() {
        let b = Breakers::new(1, Duration::from_millis(10));
        assert!(b.failure("p"));
        std::thread::sleep(Duration::from_millis(15));
        assert_eq!(b.permit("p"), Permit::Probe);
        assert!(b.failure("p"));
        assert!(matches!(b.permit("p"), Permit::Refused(_)));
    }

    #[test]
    fn success_resets_the_count() {
        let b = Breakers::new(2, Duration::from_secs(60));
        b.failure("p");
        b.success("p");
        assert!(!b.failure("p"));
        assert_eq!(b.permit("p"), Permit::Allowed);
    }
}
