//! What this machine gives the box: each layer tried once per process by starting a
//! trivial command with every layer, then with fewer, and why each one missing is missing.

use std::time::Duration;

use super::allow;
use super::layers::Found;
use super::plan::{plan, Private};
use super::spawn::execute;
use super::totals;
use super::{env, Job, Policy};

/// What this machine gives, tried once per process.
pub fn found() -> &'static Found {
    static FOUND: std::sync::OnceLock<Found> = std::sync::OnceLock::new();
    FOUND.get_or_init(detect)
}

/// Finds what this machine gives by starting a trivial command with every layer, then with
/// fewer, and keeps the first set that works.
fn detect() -> Found {
    let abi = allow::landlock_abi();
    let mut why_not: Vec<(&'static str, String)> = Vec::new();
    if abi == 0 {
        why_not.push((
            "filesystem",
            "this kernel has no Landlock (Linux 5.13 or later, with Landlock enabled)".into(),
        ));
    }
    #[cfg(target_os = "linux")]
    {
        let totals = totals::find();
        let all = libc::CLONE_NEWPID | libc::CLONE_NEWNET | libc::CLONE_NEWNS | libc::CLONE_NEWIPC;
        // SAFETY: geteuid(2) reads nothing of ours.
        let root = unsafe { libc::geteuid() } == 0;
        // An explicit user namespace even for root (its capabilities stay outside), a root
        // of its own where a mount namespace allows one.
        let mut tries = vec![
            (libc::CLONE_NEWUSER | all, true, true),
            (libc::CLONE_NEWUSER | all, true, false),
        ];
        if root {
            tries.push((all, false, true));
            tries.push((all, false, false));
        }
        tries.push((
            libc::CLONE_NEWUSER | libc::CLONE_NEWNET | libc::CLONE_NEWIPC,
            true,
            false,
        ));
        tries.push((0, false, false));
        let mut landlock_abi = abi;
        let mut seccomp = true;
        let mut first_failure: Option<String> = None;
        let mut last_failure: Option<String> = None;
        for (ns, user, view) in tries {
            loop {
                let found = Found {
                    namespaces: ns,
                    user,
                    view,
                    seccomp,
                    landlock_abi,
                    totals: totals.clone(),
                    why_not: why_not.clone(),
                };
                match try_layers(&found) {
                    Ok(()) => {
                        let mut found = found;
                        let why = first_failure
                            .clone()
                            .unwrap_or_else(|| "the kernel refused it".into());
                        if ns & libc::CLONE_NEWPID == 0 {
                            why_not.push(("processes", format!("no PID namespace here ({why})")));
                        }
                        if ns & libc::CLONE_NEWNET == 0 {
                            why_not.push(("network", format!("no network namespace ({why})")));
                        }
                        if !user {
                            why_not.push(("privileges", format!("no user namespace here ({why})")));
                        }
                        if !view {
                            why_not.push((
                                "view",
                                format!("no mount namespace to build it in ({why})"),
                            ));
                        }
                        found.why_not = why_not;
                        return found;
                    }
                    Err((Some(super::child::Step::Landlock), e)) if landlock_abi > 0 => {
                        why_not.push((
                            "filesystem",
                            format!("Landlock is present but refused the rules: {e}"),
                        ));
                        landlock_abi = 0;
                    }
                    Err((Some(super::child::Step::Seccomp), e)) if seccomp => {
                        tracing::debug!("no seccomp filter here: {e}");
                        seccomp = false;
                    }
                    Err((step, e)) => {
                        tracing::debug!(
                            ?step,
                            "box layers {ns:#x} (view {view}) not available: {e}"
                        );
                        first_failure.get_or_insert(e.clone());
                        last_failure = Some(e);
                        break;
                    }
                }
            }
        }
        // Not even a bare start worked: every layer says why, not "not available".
        let why = format!(
            "no command could start in the box here ({})",
            last_failure.unwrap_or_else(|| "no reason given".into())
        );
        for layer in ["filesystem", "network", "processes", "privileges", "view"] {
            if !why_not.iter().any(|(l, _)| *l == layer) {
                why_not.push((layer, why.clone()));
            }
        }
        Found {
            namespaces: 0,
            user: false,
            view: false,
            seccomp: false,
            landlock_abi: 0,
            totals,
            why_not,
        }
    }
    #[cfg(not(target_os = "linux"))]
    Found {
        namespaces: 0,
        user: false,
        view: false,
        seccomp: false,
        landlock_abi: abi,
        totals: Default::default(),
        why_not: vec![
            ("filesystem", "the box's layers are Linux features".into()),
            ("network", "the box's layers are Linux features".into()),
            ("processes", "the box's layers are Linux features".into()),
            ("privileges", "the box's layers are Linux features".into()),
            ("view", "the box's layers are Linux features".into()),
        ],
    }
}

/// Starts `sh -c true` with the layers of `found`; the step that failed, and why, if one
/// did.
#[cfg(target_os = "linux")]
fn try_layers(found: &Found) -> Result<(), (Option<super::child::Step>, String)> {
    let private = Private::new(None).map_err(|e| (None, e.to_string()))?;
    let dir = tempfile::tempdir().map_err(|e| (None, e.to_string()))?;
    let job = Job::new("true", dir.path(), Duration::from_secs(30));
    let planned = plan(&job, &Policy::default(), found, &private);
    if found.landlock_abi > 0 && planned.ruleset.is_none() {
        return Err((
            Some(super::child::Step::Landlock),
            planned.layers.filesystem.detail.clone(),
        ));
    }
    if found.view && found.namespaces & libc::CLONE_NEWNS != 0 && planned.view_about.is_none() {
        return Err((
            Some(super::child::Step::View),
            "its root could not be planned".into(),
        ));
    }
    let vars = env::boxed(&planned.home, &planned.tmp, &[]);
    let ran = execute(
        &job,
        &vars,
        planned.setup,
        planned.report.as_ref(),
        None,
        &|_| {},
    );
    match ran.outcome.exit_code {
        Some(0) => Ok(()),
        _ => {
            let what = ran
                .failed_part
                .zip(planned.view_about.as_ref())
                .and_then(|(n, about)| about.get(n))
                .map(|w| format!(" ({w})"))
                .unwrap_or_default();
            Err((ran.failed_step, format!("{}{what}", ran.outcome.tail)))
        }
    }
}
