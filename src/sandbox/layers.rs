//! Which layers of the box this machine gives, found by trying them (never assumed), and the
//! record a boxed command keeps of the layers that held around it.

use std::fmt;

use serde::{Deserialize, Serialize};

/// One layer of the box: whether it held, and how (or why not).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Layer {
    /// Whether it held around the command.
    pub held: bool,
    /// How it held (`Landlock ABI 7`), or why it did not.
    pub detail: String,
}

impl Layer {
    /// A layer that held, and how.
    pub fn held(detail: impl Into<String>) -> Layer {
        Layer {
            held: true,
            detail: detail.into(),
        }
    }

    /// A layer that did not hold, and why.
    pub fn missing(why: impl Into<String>) -> Layer {
        Layer {
            held: false,
            detail: why.into(),
        }
    }
}

/// The layers around one boxed command, as its record keeps them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Layers {
    /// Reads and writes by allow-list (Landlock): no home, no user repository, no `.git`.
    pub filesystem: Layer,
    /// No network: its own network namespace, else TCP refused by Landlock.
    pub network: Layer,
    /// Its own PID namespace: it sees none of git triad's processes, and nothing it starts
    /// outlives it.
    pub processes: Layer,
    /// Its own user namespace and no capability: nothing it does acts with the user's
    /// privileges outside the box.
    pub privileges: Layer,
    /// CPU time, memory, file size and process count limits.
    pub limits: Layer,
    /// What it can learn of git triad: a scrubbed environment, and git triad non-dumpable,
    /// so no process reads its environment through `/proc`.
    pub environment: Layer,
}

impl Layers {
    /// The layers in order, with their names.
    pub fn named(&self) -> [(&'static str, &Layer); 6] {
        [
            ("filesystem", &self.filesystem),
            ("network", &self.network),
            ("processes", &self.processes),
            ("privileges", &self.privileges),
            ("limits", &self.limits),
            ("environment", &self.environment),
        ]
    }

    /// The names of the layers that did not hold.
    pub fn missing(&self) -> Vec<&'static str> {
        self.named()
            .into_iter()
            .filter(|(_, l)| !l.held)
            .map(|(n, _)| n)
            .collect()
    }
}

impl fmt::Display for Layers {
    /// One line: the layers that held (by name; `git triad doctor` says how), then those
    /// that did not and why.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let held: Vec<&str> = self
            .named()
            .into_iter()
            .filter(|(_, l)| l.held)
            .map(|(n, _)| n)
            .collect();
        let missing: Vec<String> = self
            .named()
            .into_iter()
            .filter(|(_, l)| !l.held)
            .map(|(n, l)| format!("{n}: {}", l.detail))
            .collect();
        write!(f, "{} held", held.join(", "))?;
        if !missing.is_empty() {
            write!(f, "; missing: {}", missing.join("; "))?;
        }
        Ok(())
    }
}

/// The namespaces this machine lets git triad make, found once per process by starting a
/// command in them.
#[derive(Debug, Clone)]
pub struct Found {
    /// `CLONE_NEW*` flags that work together (user, PID, network, mount, IPC), or 0.
    pub namespaces: i32,
    /// Whether a user namespace is among them.
    pub user: bool,
    /// The Landlock ABI (0: none), and whether a ruleset could be applied.
    pub landlock_abi: u32,
    /// Why a layer is missing, per layer, from the attempts.
    pub why_not: Vec<(&'static str, String)>,
}

/// Makes git triad non-dumpable (`PR_SET_DUMPABLE` 0): a process it starts, even one of the
/// same user, cannot read its memory or `/proc/<pid>/environ` (where the API keys are).
/// Idempotent; says whether it holds.
pub fn harden_self() -> bool {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl(2) with PR_SET_DUMPABLE/PR_GET_DUMPABLE touches no memory of ours.
    unsafe {
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
        libc::prctl(libc::PR_GET_DUMPABLE, 0, 0, 0, 0) == 0
    }
    #[cfg(not(target_os = "linux"))]
    false
}
