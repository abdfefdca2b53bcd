//! The network closed by system-call filter, where the box has no network namespace of its
//! own (containers, Ubuntu's AppArmor rule against unprivileged user namespaces).
//!
//! Without a network namespace, Landlock refuses TCP `bind` and `connect`, and nothing
//! else: UDP, raw and netlink sockets, and unix sockets in the system's temporary and
//! runtime directories would still reach out. The filter refuses `socket(2)` for every
//! family but `AF_UNIX`; where the box also has no minimal root of its own (so the machine's
//! unix socket files are in reach), `AF_UNIX` too, leaving only `socketpair(2)` (pipes
//! between the box's own processes, which test runners use). `io_uring_setup(2)` is refused
//! either way: an io_uring can open sockets without passing through `socket(2)`. Built with
//! seccompiler in the parent; the child only installs the compiled program.

/// A compiled seccomp program, ready for `seccomp(SECCOMP_SET_MODE_FILTER)`.
pub(super) type Program = Vec<seccompiler::sock_filter>;

/// The filter for a box without a network namespace; `unix`: whether unix sockets may be
/// made (the box has a minimal root, so only its own socket files are in reach). The
/// error is a sentence.
pub(super) fn network(unix: bool) -> Result<Program, String> {
    use seccompiler::{
        SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
        SeccompRule, TargetArch,
    };
    use std::collections::BTreeMap;
    let arch: TargetArch = std::env::consts::ARCH
        .try_into()
        .map_err(|e| format!("no seccomp filter for this architecture: {e}"))?;
    let socket = if unix {
        // Any family but AF_UNIX.
        vec![SeccompRule::new(vec![SeccompCondition::new(
            0,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Ne,
            libc::AF_UNIX as u64,
        )
        .map_err(|e| e.to_string())?])
        .map_err(|e| e.to_string())?]
    } else {
        // Every family: an empty rule list matches the call whatever its arguments.
        Vec::new()
    };
    let rules: BTreeMap<i64, Vec<SeccompRule>> = [
        (libc::SYS_socket, socket),
        (libc::SYS_io_uring_setup, Vec::new()),
    ]
    .into_iter()
    .collect();
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EACCES as u32),
        arch,
    )
    .map_err(|e| e.to_string())?;
    filter
        .try_into()
        .map_err(|e: seccompiler::BackendError| e.to_string())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_filters_compile_for_this_machine() {
        for unix in [true, false] {
            let p = super::network(unix).unwrap();
            assert!(p.len() > 4, "{}", p.len());
        }
    }
}
