//! Running one command in the box: its plan of layers on this machine, the refusal when
//! the filesystem layer is missing and required, and what stopped it when a limit did.
//! (Which layers the machine gives is [`super::detect`]; how a plan is made,
//! [`super::plan`]; how the command is started and watched, [`super::spawn`].)

use std::time::Duration;

use super::detect::found;
use super::layers::{self, Found};
use super::plan::{plan, Private};
use super::spawn::{execute, WatchPlan};
use super::totals;
use super::{env, CommandOutcome, Job, Limits, Policy, REFUSED};
use crate::process::Group;

/// Runs `job` in the box `policy` asks for, telling `started_in` the command's process
/// group once it runs (to record it for a cleanup after a kill).
///
/// The command gets the layers this machine gives ([`found`]); they are in the
/// outcome. Without the filesystem layer it runs only when `policy.require` is off, and
/// otherwise is refused with the reason.
pub fn run(job: &Job<'_>, policy: &Policy, started_in: &dyn Fn(Group)) -> CommandOutcome {
    run_with(job, policy, found(), started_in)
}

/// [`run`] with the layers `found` (what this machine gives, or less, in tests).
pub(super) fn run_with(
    job: &Job<'_>,
    policy: &Policy,
    found: &Found,
    started_in: &dyn Fn(Group),
) -> CommandOutcome {
    layers::harden_self();
    let private = match Private::new(job.private_in.as_deref()) {
        Ok(p) => p,
        Err(e) => {
            return CommandOutcome::not_run(
                job.command,
                format!("the box has no private directory: {e}"),
            )
        }
    };
    let planned = plan(job, policy, found, &private);
    if !planned.layers.filesystem.held && policy.require {
        let mut out = CommandOutcome::not_run(
            job.command,
            format!(
                "not run: the box has no filesystem layer here ({}), and model-written code runs only inside it; your own configuration may allow it with `sandbox.require = false` (git triad doctor shows the layers)",
                planned.layers.filesystem.detail
            ),
        );
        out.layers = Some(planned.layers);
        out.stopped_by = Some(REFUSED.into());
        return out;
    }
    let vars = env::boxed(&planned.home, &planned.tmp, &job.env);
    // Each part is moved out when it is used up: the seccomp ruleset is dropped once the
    // command ran, the cgroups once their totals were read.
    let mut planned = planned;
    let watch = WatchPlan {
        limits: &policy.limits,
        memory: !found.totals.memory_by_cgroup(),
        dirs: planned.watched,
        share: planned.share.as_ref().map(|(read, _)| read),
    };
    let ran = execute(
        job,
        &vars,
        planned.setup,
        planned.report.as_ref(),
        Some(watch),
        started_in,
    );
    drop(planned.ruleset);
    let mut out = ran.outcome;
    #[cfg(target_os = "linux")]
    if let (Some(step), Some(about)) = (ran.failed_step, &planned.view_about) {
        if step == super::child::Step::View {
            let what = ran
                .failed_part
                .and_then(|n| about.get(n))
                .map_or("building it", String::as_str);
            out.tail = format!("{} ({what})", out.tail);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = &planned.view_about;
    let by_cgroup = planned
        .cgroups
        .as_ref()
        .and_then(|c| c.stopped(&policy.limits));
    drop(planned.cgroups);
    out.stopped_by = ran
        .stopped
        .or(by_cgroup)
        .or_else(|| stopped_by(&out, ran.signal, &policy.limits, job.timeout))
        .or_else(|| {
            let refused = [
                "Resource temporarily unavailable",
                "BlockingIOError",
                "Cannot fork",
            ]
            .iter()
            .any(|s| out.tail.contains(s));
            let counted = found.user || found.totals.pids_by_cgroup();
            (out.exit_code != Some(0)
                && counted
                && (ran.peak >= policy.limits.processes as usize || refused))
                .then(|| totals::process_stop(&policy.limits, "a fork past it was refused"))
        });
    if let Some(by) = &out.stopped_by {
        if by.starts_with("memory total")
            || by.starts_with("disk total")
            || by.starts_with("process total")
        {
            planned.layers.totals.detail =
                format!("{}; it stopped this command", planned.layers.totals.detail);
        }
    }
    out.layers = Some(planned.layers);
    out
}

/// What stopped the command, when a limit of the box did: its wall clock, or the signal a
/// limit sends (`signal`, the shell's exit code 128 + that signal, or the line a shell
/// prints when it sees one of its commands killed by it), or the box's tmpfs full.
fn stopped_by(
    out: &CommandOutcome,
    signal: Option<i32>,
    limits: &Limits,
    timeout: Duration,
) -> Option<String> {
    if out.timed_out {
        return Some(match timeout.as_secs() {
            0 => format!("wall clock ({} ms)", timeout.as_millis()),
            s => format!("wall clock ({s} s)"),
        });
    }
    let by = signal.or(out.exit_code.map(|c| c - 128));
    let said = |line: &str| out.tail.lines().any(|l| l.trim_end().ends_with(line));
    if by == Some(libc::SIGXFSZ) || said("File size limit exceeded") {
        return Some(format!(
            "file size limit ({} MiB): a process was stopped writing a larger file",
            limits.file_mb
        ));
    }
    if by == Some(libc::SIGXCPU) || said("CPU time limit exceeded") {
        return Some(format!(
            "CPU time limit ({} s): a process was stopped",
            limits.cpu_secs
        ));
    }
    if out.exit_code != Some(0) && out.tail.contains("No space left on device") {
        return Some(totals::disk_stop(
            limits,
            "a write was refused: its own home and temporary directory are full",
        ));
    }
    None
}
