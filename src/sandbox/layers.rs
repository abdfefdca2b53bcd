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
    /// What of a layer that held does not hold here (Landlock without a root of the box's
    /// own leaves file metadata unprotected), if anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gap: Option<String>,
}

impl Layer {
    /// A layer that held, and how.
    pub fn held(detail: impl Into<String>) -> Layer {
        Layer {
            held: true,
            detail: detail.into(),
            gap: None,
        }
    }

    /// A layer that held, except for `gap`.
    pub fn held_but(detail: impl Into<String>, gap: impl Into<String>) -> Layer {
        Layer {
            held: true,
            detail: detail.into(),
            gap: Some(gap.into()),
        }
    }

    /// Whether it held whole (no gap).
    pub fn whole(&self) -> bool {
        self.held && self.gap.is_none()
    }

    /// A layer that did not hold, and why.
    pub fn missing(why: impl Into<String>) -> Layer {
        Layer {
            held: false,
            detail: why.into(),
            gap: None,
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
    /// CPU time, memory and file size limits per process.
    pub limits: Layer,
    /// Totals for the whole box: processes at once, memory, disk.
    #[serde(default = "unrecorded")]
    pub totals: Layer,
    /// What it can learn of git triad: a scrubbed environment, and git triad non-dumpable,
    /// so no process reads its environment through `/proc`.
    pub environment: Layer,
}

/// The totals of a record older than them.
fn unrecorded() -> Layer {
    Layer::missing("not recorded (a record made before the box kept totals)")
}

impl Layers {
    /// The layers in order, with their names.
    pub fn named(&self) -> [(&'static str, &Layer); 7] {
        [
            ("filesystem", &self.filesystem),
            ("network", &self.network),
            ("processes", &self.processes),
            ("privileges", &self.privileges),
            ("limits", &self.limits),
            ("totals", &self.totals),
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

    /// The layers that held with a gap, and the gap.
    pub fn gaps(&self) -> Vec<(&'static str, &str)> {
        self.named()
            .into_iter()
            .filter(|(_, l)| l.held)
            .filter_map(|(n, l)| Some((n, l.gap.as_deref()?)))
            .collect()
    }

    /// Whether every layer held whole.
    pub fn whole(&self) -> bool {
        self.named().iter().all(|(_, l)| l.whole())
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
        let gaps: Vec<String> = self
            .gaps()
            .into_iter()
            .map(|(n, g)| format!("{n}: {g}"))
            .collect();
        if !gaps.is_empty() {
            write!(f, "; with gaps: {}", gaps.join("; "))?;
        }
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
    /// Whether the box gets a root of its own (a mount namespace where it can be built).
    pub view: bool,
    /// Whether the network filter (seccomp) can be installed.
    pub seccomp: bool,
    /// Where the box's totals can be kept by a control group.
    pub totals: super::totals::TotalsFound,
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
