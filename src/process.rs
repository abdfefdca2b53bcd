//! The commands git triad starts (verify, format) never outlive it.
//!
//! Each runs in its own process group, so whatever it starts can be killed with it. While one
//! runs, its group is registered here: SIGTERM, SIGINT or SIGHUP to git triad kills every
//! registered group before git triad dies of the signal. On Linux the direct child also gets
//! SIGKILL when the thread that started it dies (`PR_SET_PDEATHSIG`), so a `SIGKILL` of git triad
//! takes at least the command itself along; what the command started is found later by its
//! record ([`Group`], kept beside the scratch copy it ran in) and killed by the next
//! `resume`, `local stop` or `init --uninstall`.
//!
//! A process group id outlives its group: [`Group`] keeps the leader's start time, and a group
//! whose leader now runs with another start time is a stranger's, left alone.

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Once;

use serde::{Deserialize, Serialize};

/// The start time of process `pid` in clock ticks since boot (`/proc/<pid>/stat` field 22;
/// the fields are counted after the command name, which may itself hold spaces and `)`);
/// `None` where there is no such process or no `/proc`.
pub fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(19)?.parse().ok()
}

/// A process group a command ran in: its id (its leader's pid) and the leader's start time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Group {
    /// The process group id.
    pub pgid: i32,
    /// The leader's start time ([`start_time`]), when it could be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<u64>,
}

impl Group {
    /// The group a child just started with `process_group(0)` leads.
    pub fn of_child(pid: u32) -> Option<Group> {
        Some(Group {
            pgid: i32::try_from(pid).ok().filter(|p| *p > 1)?,
            start: start_time(pid),
        })
    }

    /// Whether the group still has a running process (a zombie waiting to be reaped does not
    /// count), and it is this group, not a later one that was given the same id (its leader
    /// alive with another start time).
    pub fn alive(&self) -> bool {
        let exists = match running_members(self.pgid) {
            Some(members) => !members.is_empty(),
            // SAFETY: kill(2) with signal 0 only checks that the group exists; nothing is
            // sent.
            None => (unsafe { libc::kill(-self.pgid, 0) }) == 0,
        };
        if !exists {
            return false;
        }
        match (self.start, start_time(self.pgid as u32)) {
            (Some(recorded), Some(now)) => recorded == now,
            // The leader is gone (its group lives on in what it started; Linux gives no new
            // process an id that still names a group), or its start time was never known.
            _ => true,
        }
    }

    /// Kills every process of the group, if it is still [`alive`](Self::alive); says
    /// whether it was.
    pub fn kill(&self) -> bool {
        if !self.alive() {
            return false;
        }
        // SAFETY: kill(2) with a negative pid signals exactly the process group recorded for
        // a command this tool started; no memory is shared.
        unsafe { libc::kill(-self.pgid, libc::SIGKILL) };
        true
    }
}

/// The processes of group `pgid` that run (zombies left out), from `/proc`; `None` where
/// there is no `/proc`.
fn running_members(pgid: i32) -> Option<Vec<u32>> {
    let dir = std::fs::read_dir("/proc").ok()?;
    Some(
        dir.flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
            .filter(|pid| {
                let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                    return false;
                };
                let Some(after) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
                    return false;
                };
                let fields: Vec<&str> = after.split_whitespace().take(3).collect();
                // state, ppid, pgrp
                fields.len() == 3 && fields[0] != "Z" && fields[2].parse() == Ok(pgid)
            })
            .collect(),
    )
}

/// Process groups running now, for the signal handler (which may only touch atomics).
static LIVE: [AtomicI32; 32] = [const { AtomicI32::new(0) }; 32];

static INSTALL: Once = Once::new();

/// While it lives, a signal that kills git triad kills the group first.
#[derive(Debug)]
pub struct Registered {
    slot: Option<usize>,
}

impl Drop for Registered {
    fn drop(&mut self) {
        if let Some(i) = self.slot {
            LIVE[i].store(0, Ordering::SeqCst);
        }
    }
}

/// Registers `group` to be killed if git triad gets SIGTERM, SIGINT or SIGHUP while the
/// returned guard lives.
pub fn register(group: &Group) -> Registered {
    INSTALL.call_once(install);
    let slot = LIVE.iter().position(|s| {
        s.compare_exchange(0, group.pgid, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    });
    if slot.is_none() {
        tracing::warn!(
            "more than {} commands at once: process group {} is not killed on a signal",
            LIVE.len(),
            group.pgid
        );
    }
    Registered { slot }
}

fn install() {
    for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
        // SAFETY: sigaction(2) with a handler that only calls async-signal-safe functions
        // (kill, signal, raise) and reads atomics.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(sig, &action, std::ptr::null_mut());
        }
    }
}

extern "C" fn on_signal(sig: libc::c_int) {
    for slot in &LIVE {
        let pgid = slot.load(Ordering::SeqCst);
        if pgid > 1 {
            // SAFETY: kill(2) is async-signal-safe; the group is one this process started.
            unsafe { libc::kill(-pgid, libc::SIGKILL) };
        }
    }
    // Die of the signal as if it had not been caught.
    // SAFETY: signal(2) and raise(3) are async-signal-safe.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}

/// When git started git triad (`git triad ...` runs `git-triad` as git's child), makes git
/// triad end with git, however git ends: git passes on a SIGTERM or SIGHUP it handles, but
/// a git killed outright (SIGKILL, or a git that does not pass signals on) leaves its child
/// running with nobody to read its output. Linux's `PR_SET_PDEATHSIG` sends SIGTERM when git
/// dies, and the handler of [`register`] kills the commands git triad started before it dies
/// of it. A git gone before this ran ends git triad at once. Other parents (a shell, a test)
/// are left as they are.
pub fn end_with_git_parent() {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: getppid(2) touches no memory.
        let parent = unsafe { libc::getppid() };
        let is_git = std::fs::read_to_string(format!("/proc/{parent}/comm"))
            .is_ok_and(|comm| comm.trim_end() == "git");
        if !is_git {
            return;
        }
        INSTALL.call_once(install);
        // SAFETY: prctl(2) with PR_SET_PDEATHSIG, getppid(2) and raise(3) touch no memory of
        // ours.
        unsafe {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
            // git may have died before the prctl: then nobody would send the signal.
            if libc::getppid() != parent {
                libc::raise(libc::SIGTERM);
            }
        }
    }
}

/// Makes `cmd`'s process die with the thread that starts it (Linux's `PR_SET_PDEATHSIG`):
/// a git triad killed with SIGKILL takes the command along.
pub fn die_with_parent(cmd: &mut std::process::Command) {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt;
        let parent = std::process::id();
        // SAFETY: the closure runs in the child between fork and exec and calls only
        // async-signal-safe functions (prctl, getppid).
        unsafe {
            cmd.pre_exec(move || {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                // The parent may have died before the prctl: then nobody would kill us.
                if libc::getppid() as u32 != parent {
                    return Err(std::io::Error::other(
                        "git triad ended before the command started",
                    ));
                }
                Ok(())
            });
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = cmd;
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;
    use std::process::Command;

    #[test]
    fn a_group_is_killed_whole_and_a_reused_id_is_left_alone() {
        let mut child = Command::new("sh")
            .args(["-c", "sleep 30 & sleep 30; wait"])
            .process_group(0)
            .spawn()
            .unwrap();
        let group = Group::of_child(child.id()).unwrap();
        assert!(group.start.is_some());
        assert!(group.alive());
        let stranger = Group {
            start: group.start.map(|s| s + 1),
            ..group
        };
        assert!(!stranger.alive(), "another start time: not ours");
        assert!(!stranger.kill());
        assert!(group.kill());
        child.wait().unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while group.alive() {
            assert!(std::time::Instant::now() < deadline, "the group lives on");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}
