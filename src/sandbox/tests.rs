//! The box against real processes: each way out tried, and the layer that stopped it named
//! in the record.

use super::detect::found;
use super::layers::Found;
use super::run::run_with;
use super::*;

/// Runs `command` in the box with `policy` in a fresh directory (which it may write).
fn boxed_with(policy: &Policy, command: &str) -> (tempfile::TempDir, CommandOutcome) {
    let dir = tempfile::tempdir().unwrap();
    let job = Job::new(command, dir.path(), Duration::from_secs(60));
    let out = run(&job, policy, &|_| {});
    (dir, out)
}

fn boxed(command: &str) -> (tempfile::TempDir, CommandOutcome) {
    boxed_with(&Policy::default(), command)
}

/// The layer named `name` of an outcome's record.
fn layer<'a>(out: &'a CommandOutcome, name: &str) -> &'a Layer {
    out.layers
        .as_ref()
        .expect("a boxed command records its layers")
        .named()
        .into_iter()
        .find(|(n, _)| *n == name)
        .unwrap()
        .1
}

/// This machine's layers, said once in the test output: the assertions below hold for the
/// layers it gives, and a missing one is asserted as recorded missing.
fn machine() -> &'static Found {
    let f = found();
    eprintln!(
        "box on this machine: namespaces {:#x}, user {}, Landlock ABI {}, missing {:?}",
        f.namespaces, f.user, f.landlock_abi, f.why_not
    );
    f
}

#[test]
fn files_outside_the_allow_list_are_neither_read_nor_written() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("id_rsa"), "PRIVATE KEY canary-7f3a").unwrap();
    let o = outside.path().display();
    let (dir, out) = boxed(&format!(
        "cat {o}/id_rsa; echo planted > {o}/hook; mkdir {o}/.git; touch inside; echo $HOME; touch \"$HOME/own\" && echo home-ok; touch \"$TMPDIR/t\" && echo tmp-ok"
    ));
    let fs = layer(&out, "filesystem");
    if machine().landlock_abi > 0 {
        assert!(fs.held, "{fs:?}");
        assert!(!out.tail.contains("canary-7f3a"), "{}", out.tail);
        assert!(!outside.path().join("hook").exists(), "{}", out.tail);
        assert!(!outside.path().join(".git").exists());
        // Refused (Landlock), or not there at all (the box's own root).
        assert!(
            out.tail.contains("Permission denied") || out.tail.contains("No such file"),
            "{}",
            out.tail
        );
    } else {
        assert!(!fs.held);
        assert!(out.refused(), "{out:?}");
    }
    if !out.refused() {
        assert!(
            dir.path().join("inside").exists(),
            "its own directory is writable"
        );
        assert!(
            out.tail.contains("home-ok") && out.tail.contains("tmp-ok"),
            "{}",
            out.tail
        );
        // Its home is its own, not the user's.
        let home = out.tail.lines().find(|l| l.starts_with('/')).unwrap();
        assert_ne!(Some(home), std::env::var("HOME").ok().as_deref());
    }
}

#[test]
fn git_triad_is_not_visible_and_nothing_outlives_the_command() {
    let token = format!("triad-outlive-{}", std::process::id());
    let scripts = tempfile::tempdir().unwrap();
    let script = scripts.path().join(&token);
    std::fs::write(&script, "#!/bin/sh\nsleep 60\n").unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let me = std::process::id();
    let policy = Policy {
        read: vec![scripts.path().to_path_buf()],
        ..Policy::default()
    };
    let (_dir, out) = boxed_with(
        &policy,
        &format!(
            "cat /proc/{me}/environ | tr '\\0' '\\n' | head -3; ls /proc | grep -c '^[0-9]'; setsid {} & sleep 0.2; echo started",
            script.display()
        ),
    );
    assert!(out.tail.contains("started"), "{out:?}");
    let processes = layer(&out, "processes");
    if machine().namespaces & libc::CLONE_NEWPID != 0 {
        assert!(processes.held);
        assert!(
            !out.tail.contains("PATH="),
            "git triad's environment was read: {}",
            out.tail
        );
    } else {
        assert!(!processes.held, "{processes:?}");
    }
    // The setsid child left the process group; with a PID namespace it dies with the box.
    let alive = || {
        std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
            std::fs::read(e.path().join("cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(&token))
        })
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while processes.held && alive() {
        assert!(
            std::time::Instant::now() < deadline,
            "a setsid child outlived the box"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // Without the layer the record says so; its straggler is cleaned here.
    if !processes.held {
        let _ = std::process::Command::new("pkill")
            .args(["-f", &token])
            .status();
    }
}

#[test]
fn no_network_reaches_out_of_the_box() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    let (_dir, out) = boxed(&format!(
        "python3 -c \"import socket\ntry:\n socket.create_connection(('127.0.0.1', {port}), 3)\n print('reached')\nexcept OSError as e:\n print('refused', e)\ns = socket.socket()\ns.bind(('127.0.0.1', 0))\ns.listen()\nprint('own', s.getsockname()[1])\""
    ));
    let network = layer(&out, "network");
    let f = machine();
    if f.namespaces & libc::CLONE_NEWNET == 0 && f.landlock_abi < 4 {
        // Neither layer here: the record says so, and that is all the box can promise.
        assert!(!network.held, "{network:?}");
        return;
    }
    assert!(network.held, "{network:?}");
    assert!(!out.tail.contains("reached"), "{}", out.tail);
    assert!(listener.accept().is_err(), "nothing connected from the box");
    if machine().namespaces & libc::CLONE_NEWNET != 0 {
        // Its own loopback works (a test suite may talk to itself), and is not ours.
        let own: u16 = out
            .tail
            .lines()
            .find_map(|l| l.strip_prefix("own "))
            .and_then(|p| p.trim().parse().ok())
            .unwrap_or_else(|| panic!("{}", out.tail));
        assert!(std::net::TcpStream::connect(("127.0.0.1", own)).is_err() || own == port);
    }
}

#[test]
fn a_file_larger_than_the_limit_is_cut_and_the_limit_named() {
    let policy = Policy {
        limits: Limits {
            file_mb: 4,
            ..Limits::default()
        },
        ..Policy::default()
    };
    let (dir, out) = boxed_with(&policy, "head -c 1073741824 /dev/zero > big; echo after");
    let size = std::fs::metadata(dir.path().join("big")).unwrap().len();
    assert!(size <= 4 * 1024 * 1024, "{size}");
    assert!(
        out.stopped_by
            .as_deref()
            .is_some_and(|s| s.starts_with("file size limit")),
        "{out:?}"
    );
    assert!(layer(&out, "limits").held);
}

#[test]
fn a_timeout_is_named_and_its_processes_die() {
    let dir = tempfile::tempdir().unwrap();
    let job = Job::new("sleep 30", dir.path(), Duration::from_millis(300));
    let out = run(&job, &Policy::default(), &|_| {});
    assert!(out.timed_out);
    assert_eq!(out.stopped_by.as_deref(), Some("wall clock (300 ms)"));
}

#[test]
fn without_the_filesystem_layer_code_runs_only_when_the_user_allows_it() {
    let without = Found {
        landlock_abi: 0,
        why_not: vec![("filesystem", "this kernel has no Landlock".into())],
        ..found().clone()
    };
    let dir = tempfile::tempdir().unwrap();
    let job = Job::new("touch ran", dir.path(), Duration::from_secs(30));
    let refused = run_with(&job, &Policy::default(), &without, &|_| {});
    assert!(refused.refused(), "{refused:?}");
    assert!(!dir.path().join("ran").exists());
    assert!(
        refused.tail.contains("sandbox.require = false"),
        "{}",
        refused.tail
    );
    assert!(refused.unguarded().is_some());
    let allowed = Policy {
        require: false,
        ..Policy::default()
    };
    let ran = run_with(&job, &allowed, &without, &|_| {});
    assert_eq!(ran.exit_code, Some(0), "{ran:?}");
    assert!(dir.path().join("ran").exists());
    let why = ran.unguarded().expect("the record says what was missing");
    assert!(why.contains("no Landlock"), "{why}");
}

#[test]
fn the_box_costs_little_over_running_bare() {
    // Not a timing assert: the same command gives the same answer both ways.
    let dir = tempfile::tempdir().unwrap();
    let job = Job::new("echo $((6 * 7))", dir.path(), Duration::from_secs(30));
    assert_eq!(run(&job, &Policy::default(), &|_| {}).tail, "42");
    assert_eq!(run_bare(&job).tail, "42");
}
