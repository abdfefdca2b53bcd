//! The box as a plain user meets it: every way out tried by real processes running as an
//! unprivileged uid (65534). Where the suite runs as root, the job is handed to this test
//! binary re-run under `setpriv --reuid=65534`; a suite already unprivileged runs it as
//! itself. It never skips: a root suite that cannot drop its uid fails and says why.
//!
//! Outside the box the test holds what must stay in: a key in the environment of the process
//! that runs the box, a private key, shell history and cargo credentials in the home,
//! another repository, a TCP and a UDP listener, a unix socket at a path and an abstract
//! one. Inside, the box's own totals are set low, and a fork past the count, files past the
//! disk total and processes past the memory total are tried.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};

/// The uid and gid the jobs run as.
const NOBODY: u32 = 65534;

/// The key the process running the box holds.
const KEY: &str = "sk-canary-box-user-6d1f";

/// The seconds of the `sleep` a job leaves behind (to find it afterwards).
const SURVIVOR: &str = "3337";

/// A world-traversable directory owned by the job's user, removed afterwards.
fn owned_dir() -> tempfile::TempDir {
    let d = tempfile::Builder::new()
        .prefix("triad-box-user-")
        .tempdir()
        .unwrap();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    d
}

/// Gives everything under `dir` to the job's user, when the suite is root.
fn give(dir: &Path) {
    if is_root() {
        let ok = Command::new("chown")
            .args(["-R", &format!("{NOBODY}:{NOBODY}")])
            .arg(dir)
            .status()
            .unwrap()
            .success();
        assert!(ok, "chown {}", dir.display());
    }
}

fn is_root() -> bool {
    // SAFETY: geteuid(2) reads nothing of ours.
    unsafe { libc::geteuid() == 0 }
}

/// `program` to be run as the unprivileged user: under `setpriv` where the suite is root,
/// as itself (and said) where the suite already is unprivileged.
fn as_nobody(program: &Path) -> Command {
    if is_root() {
        let mut c = Command::new("setpriv");
        c.args([
            &format!("--reuid={NOBODY}"),
            &format!("--regid={NOBODY}"),
            "--clear-groups",
            "--",
        ])
        .arg(program);
        c
    } else {
        eprintln!(
            "the suite runs unprivileged (uid {}): {} runs as it",
            unsafe { libc::geteuid() },
            program.display()
        );
        Command::new(program)
    }
}

/// Runs `job` in the box as an unprivileged user with `home` as its HOME and `path` as its
/// PATH, and returns the outcome the box recorded.
fn as_user(job: &Value, home: &Path, path: &str) -> git_triad::sandbox::CommandOutcome {
    let exe = std::env::current_exe().unwrap();
    let out = as_nobody(&exe)
        .args([
            "--exact",
            "box_user::helper_runs_a_job_in_the_box_when_asked",
            "--nocapture",
            "--test-threads=1",
        ])
        .env_clear()
        .env("HOME", home)
        .env("PATH", path)
        .env("CARGO_HOME", home.join(".cargo"))
        .env("TRIAD_BOX_JOB", job.to_string())
        .env("CANARY_API_KEY", KEY)
        .output()
        .unwrap_or_else(|e| panic!("cannot drop to uid {NOBODY} with setpriv: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find_map(|l| Some(&l[l.find("BOX-OUTCOME ")? + "BOX-OUTCOME ".len()..]))
        .unwrap_or_else(|| {
            panic!(
                "the job did not run as uid {NOBODY}: {stdout}\n{}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
    serde_json::from_str(line).unwrap()
}

/// Not a test of its own: the entry [`as_user`] re-runs this binary into, as the
/// unprivileged user, to run the job `TRIAD_BOX_JOB` names in the box and print what the
/// box recorded. Without the variable there is nothing to do.
#[test]
fn helper_runs_a_job_in_the_box_when_asked() {
    let Ok(job) = std::env::var("TRIAD_BOX_JOB") else {
        return;
    };
    let job: Value = serde_json::from_str(&job).unwrap();
    let dir = PathBuf::from(job["dir"].as_str().unwrap());
    let mut policy = git_triad::sandbox::Policy::default();
    if let Some(l) = job.get("limits") {
        policy.limits = serde_json::from_value(l.clone()).unwrap();
    }
    let mut j = git_triad::sandbox::Job::new(
        job["command"].as_str().unwrap(),
        &dir,
        Duration::from_secs(job["timeout"].as_u64().unwrap_or(60)),
    );
    j.tail_lines = 200;
    let out = git_triad::sandbox::run(&j, &policy, &|_| {});
    println!("BOX-OUTCOME {}", serde_json::to_string(&out).unwrap());
}

/// How many `sleep` processes a job left.
fn survivors() -> usize {
    crate::common::sleepers(SURVIVOR).len()
}

/// The attack: each way out tried, one line each (`what: got ...` or `what: refused ...`).
const ATTACK: &str = r#"
import json, os, socket, subprocess, sys
aim = json.load(open(sys.argv[1]))
def got(what, detail=''):
    print('%s: got %s' % (what, detail))
def refused(what, e):
    print('%s: refused %s' % (what, type(e).__name__))
for pid in os.listdir('/proc'):
    if pid.isdigit():
        try:
            if aim['key'].encode() in open('/proc/%s/environ' % pid, 'rb').read():
                got('environ', pid)
        except OSError as e:
            pass
for what in ['ssh', 'history', 'credentials', 'other']:
    try:
        open(aim[what], 'rb').read()
        got(what)
    except OSError as e:
        refused(what, e)
for what in ['home_write', 'hook_write', 'other_write']:
    try:
        open(aim[what], 'w').write('x')
        got(what)
    except OSError as e:
        refused(what, e)
for what, f in [('chmod', lambda p: os.chmod(p, 0o777)), ('utime', lambda p: os.utime(p, (0, 0))),
                ('setxattr', lambda p: os.setxattr(p, 'user.triad', b'1'))]:
    for target in ['tool', 'config']:
        try:
            f(aim[target])
            got('%s %s' % (what, target))
        except OSError as e:
            refused('%s %s' % (what, target), e)
try:
    socket.create_connection(('127.0.0.1', aim['tcp']), 3).sendall(b'tcp-canary')
    got('tcp')
except OSError as e:
    refused('tcp', e)
try:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.sendto(b'udp-canary', ('127.0.0.1', aim['udp']))
    got('udp')
except OSError as e:
    refused('udp', e)
for what, addr in [('unix', aim['unix']), ('abstract', '\0' + aim['abstract'])]:
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(addr)
        s.sendall(b'unix-canary')
        got(what)
    except OSError as e:
        refused(what, e)
subprocess.Popen(['sleep', '3337'], start_new_session=True)
print('done')
"#;

#[test]
fn nothing_leaves_the_box_of_a_plain_user() {
    let root = owned_dir();
    let r = root.path();
    let home = r.join("home");
    let other = r.join("other");
    let repo = r.join("repo");
    let work = r.join("work");
    for d in [
        home.join(".ssh"),
        home.join(".local/share"),
        home.join(".local/bin"),
        home.join(".cargo/bin"),
        other.join(".git"),
        other.join("bin"),
        repo.join(".git/hooks"),
        work.clone(),
    ] {
        std::fs::create_dir_all(d).unwrap();
    }
    let secret = |p: &Path, text: &str| std::fs::write(p, text).unwrap();
    secret(&home.join(".ssh/id_rsa"), "PRIVATE-canary-ssh");
    secret(&home.join(".local/share/history"), "history-canary");
    secret(
        &home.join(".cargo/credentials.toml"),
        "token = \"cargo-canary\"",
    );
    secret(&other.join("secret.txt"), "other-repo-canary");
    secret(&other.join("bin/tool"), "#!/bin/sh\necho tool\n");
    secret(&repo.join(".git/config"), "[core]\n");
    std::os::unix::fs::symlink(other.join("bin/tool"), home.join(".local/bin/tool")).unwrap();
    std::fs::write(work.join("attack.py"), ATTACK).unwrap();
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    tcp.set_nonblocking(true).unwrap();
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_nonblocking(true).unwrap();
    let unix_path = r.join("sock");
    let unix = std::os::unix::net::UnixListener::bind(&unix_path).unwrap();
    unix.set_nonblocking(true).unwrap();
    let abstract_name = format!("triad-abstract-{}", std::process::id());
    let abstract_sock = {
        use std::os::linux::net::SocketAddrExt;
        let addr =
            std::os::unix::net::SocketAddr::from_abstract_name(abstract_name.as_bytes()).unwrap();
        let l = std::os::unix::net::UnixListener::bind_addr(&addr).unwrap();
        l.set_nonblocking(true).unwrap();
        l
    };
    let aim = json!({
        "key": KEY,
        "ssh": home.join(".ssh/id_rsa"), "history": home.join(".local/share/history"),
        "credentials": home.join(".cargo/credentials.toml"), "other": other.join("secret.txt"),
        "home_write": home.join("pwned"), "hook_write": repo.join(".git/hooks/post-checkout"),
        "other_write": other.join("planted"),
        "tool": other.join("bin/tool"), "config": repo.join(".git/config"),
        "tcp": tcp.local_addr().unwrap().port(), "udp": udp.local_addr().unwrap().port(),
        "unix": unix_path, "abstract": abstract_name,
    });
    std::fs::write(work.join("aim.json"), aim.to_string()).unwrap();
    give(r);
    let meta = |p: &Path| {
        let m = std::fs::metadata(p).unwrap();
        (m.mode(), m.mtime(), m.mtime_nsec())
    };
    let before = (
        meta(&other.join("bin/tool")),
        meta(&repo.join(".git/config")),
    );
    let path = format!(
        "{}:/usr/local/bin:/usr/bin:/bin",
        home.join(".local/bin").display()
    );
    let out = as_user(
        &json!({"command": "python3 attack.py aim.json", "dir": work}),
        &home,
        &path,
    );
    let said = &out.tail;
    assert!(said.contains("done"), "{out:?}");
    // What it read, and what it changed of what it may read, is refused inside. (A write
    // or a datagram may seem to go, into the box's own tmpfs or its own loopback: what
    // counts for those is below, outside.)
    for what in [
        "environ",
        "ssh",
        "history",
        "credentials",
        "other",
        "chmod tool",
        "utime tool",
        "setxattr tool",
        "chmod config",
        "utime config",
        "setxattr config",
        "tcp",
        "unix",
        "abstract",
    ] {
        assert!(
            !said.contains(&format!("{what}: got")),
            "{what} got out:\n{said}"
        );
    }
    for what in [
        "ssh",
        "history",
        "credentials",
        "other",
        "tcp",
        "unix",
        "abstract",
    ] {
        assert!(
            said.contains(&format!("{what}: refused")),
            "{what}:\n{said}"
        );
    }
    // Nothing arrived, nothing changed, nothing was written.
    assert!(tcp.accept().is_err(), "a TCP connection arrived");
    assert!(udp.recv(&mut [0u8; 64]).is_err(), "a UDP datagram arrived");
    assert!(unix.accept().is_err(), "the unix socket was reached");
    assert!(
        abstract_sock.accept().is_err(),
        "the abstract socket was reached"
    );
    assert_eq!(
        (
            meta(&other.join("bin/tool")),
            meta(&repo.join(".git/config"))
        ),
        before,
        "metadata outside changed"
    );
    for p in [
        home.join("pwned"),
        repo.join(".git/hooks/post-checkout"),
        other.join("planted"),
    ] {
        assert!(!p.exists(), "{} was written", p.display());
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while survivors() > 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "a setsid child outlived the box"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // Every layer held, as the record says.
    let layers = out.layers.expect("the record keeps its layers");
    assert!(layers.whole(), "{layers}");
}

/// Runs `command` as the plain user with low totals; the outcome.
fn with_low_totals(command: &str) -> (tempfile::TempDir, git_triad::sandbox::CommandOutcome) {
    let root = owned_dir();
    let home = root.path().join("home");
    let work = root.path().join("work");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    give(root.path());
    let limits = json!({"cpu_secs": 120, "memory_mb": 256, "file_mb": 64, "processes": 64,
                        "disk_mb": 200});
    let out = as_user(
        &json!({"command": command, "dir": work, "limits": limits, "timeout": 120}),
        &home,
        "/usr/local/bin:/usr/bin:/bin",
    );
    (root, out)
}

#[test]
fn a_fork_past_the_process_total_is_refused_and_named() {
    let (_root, out) = with_low_totals(
        "python3 -c \"\nimport os, sys, time\nn = 0\ntry:\n    for _ in range(200):\n        if os.fork() == 0:\n            time.sleep(5)\n            os._exit(0)\n        n += 1\nexcept OSError as e:\n    print('forked', n, 'then', type(e).__name__)\n    sys.exit(1)\nprint('forked', n)\n\"",
    );
    let forked: usize = out
        .tail
        .lines()
        .find_map(|l| {
            l.strip_prefix("forked ")?
                .split_whitespace()
                .next()?
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("{out:?}"));
    assert!(
        forked < 64,
        "{forked} processes ran under a total of 64: {out:?}"
    );
    let by = out.stopped_by.as_deref().unwrap_or_default();
    assert!(by.starts_with("process total"), "{out:?}");
}

#[test]
fn files_past_the_disk_total_are_stopped_and_named() {
    // 2 GiB tried, in files under the per-file limit, where the copy lives (watched) and
    // in the box's own temporary directory (a tmpfs of the total).
    for dir in ["out", "$TMPDIR/out"] {
        let (root, out) = with_low_totals(&format!(
            "mkdir -p {dir} && python3 -c \"\nimport sys\nfor i in range(64):\n    with open('{dir}/f%d' % i, 'wb') as f:\n        for _ in range(8):\n            f.write(bytes(4 << 20))\n            f.flush()\nprint('wrote it all')\n\""
        ));
        assert!(!out.tail.contains("wrote it all"), "{dir}: {out:?}");
        let by = out.stopped_by.as_deref().unwrap_or_default();
        assert!(by.starts_with("disk total"), "{dir}: {out:?}");
        let left = dir_size(&root.path().join("work"));
        assert!(left < 1024 << 20, "{dir}: {left} bytes stayed");
    }
}

#[test]
fn processes_past_the_memory_total_are_stopped_and_named() {
    // Four processes of 100 MiB each: each under the per-process 256 MiB, together past
    // the box's 256 MiB.
    let (_root, out) = with_low_totals(
        "for i in 1 2 3 4; do python3 -c \"import time; b = bytearray(100 << 20); b[::4096] = b'x' * len(b[::4096]); time.sleep(20)\" & done; wait; echo all-held",
    );
    assert!(!out.tail.contains("all-held"), "{out:?}");
    let by = out.stopped_by.as_deref().unwrap_or_default();
    assert!(by.starts_with("memory total"), "{out:?}");
}

fn dir_size(dir: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let Ok(m) = e.metadata() else { continue };
            total += m.blocks() * 512;
            if m.is_dir() {
                stack.push(e.path());
            }
        }
    }
    total
}

/// A command as the unprivileged user (through `setpriv` where the suite is root), with
/// `home` as its HOME and a plain PATH; its exit code and output.
fn user_command(program: &str, args: &[&str], home: &Path) -> (Option<i32>, String, String) {
    let out = as_nobody(Path::new(program))
        .args(args)
        .current_dir(home)
        .env_clear()
        .env("HOME", home)
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("GIT_TRIAD_CONFIG", home.join("config.toml"))
        .env("LANG", "C")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program} as uid {NOBODY}: {e}"));
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The state a layer's line of `doctor` shows.
fn state_of(layer: &Value) -> &'static str {
    match (layer["held"].as_bool(), layer.get("gap")) {
        (Some(true), None) => "held",
        (Some(true), Some(_)) => "partly",
        _ => "missing",
    }
}

/// Checks `doctor`'s text against its JSON: each layer's line says what the JSON says, and
/// "runs in this box" is said exactly when every layer held whole.
fn text_says_what_json_says(text: &str, report: &Value) {
    for (name, layer) in report["layers"].as_object().unwrap() {
        let line = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name.as_str()))
            .unwrap_or_else(|| panic!("no line for {name}: {text}"));
        assert_eq!(
            line.split_whitespace().nth(1),
            Some(state_of(layer)),
            "{name}: {text}"
        );
    }
    assert_eq!(
        text.contains("Model-written code runs in this box."),
        report["whole"] == true,
        "{text}"
    );
}

/// `git triad doctor` as the plain user names exactly the layers that hold for that user:
/// the ones the kernel gives it, found here by other means (`unshare` as that user for the
/// namespaces, the Landlock ABI for the filesystem), and says the code "runs in this box"
/// only when every layer holds whole. Where the suite is root it then takes namespaces away
/// (a user namespace whose limit is 0, as a container or AppArmor leaves them): the layers
/// that rest on them are named missing or partly, the network is closed by the seccomp
/// filter, and doctor no longer says the code runs in this box.
#[test]
fn doctor_as_a_plain_user_names_exactly_the_layers_that_hold() {
    let home = owned_dir();
    give(home.path());
    let bin = crate::common::bin();
    let bin = bin.to_str().unwrap();
    let (code, json_out, err) = user_command(bin, &["doctor", "--json"], home.path());
    let report: Value = serde_json::from_str(&json_out)
        .unwrap_or_else(|e| panic!("doctor --json as uid {NOBODY}: {e}: {json_out}{err}"));
    let (_, text, _) = user_command(bin, &["doctor"], home.path());
    text_says_what_json_says(&text, &report);
    let landlock = git_triad::sandbox::landlock_abi() > 0;
    assert_eq!(code, Some(if landlock { 0 } else { 1 }), "{text}{err}");
    assert_eq!(report["layers"]["filesystem"]["held"], landlock, "{report}");
    let (namespaces, _, why) = user_command(
        "unshare",
        &[
            "--user",
            "--map-root-user",
            "--net",
            "--pid",
            "--fork",
            "--mount",
            "true",
        ],
        home.path(),
    );
    let namespaces = namespaces == Some(0);
    eprintln!("namespaces for uid {NOBODY}: {namespaces} {why}");
    for layer in ["processes", "privileges"] {
        assert_eq!(
            report["layers"][layer]["held"], namespaces,
            "{layer}: {report}"
        );
    }
    if namespaces {
        assert_eq!(report["layers"]["network"]["held"], true, "{report}");
        assert!(
            report["layers"]["network"]["detail"]
                .as_str()
                .unwrap()
                .starts_with("own network namespace"),
            "{report}"
        );
    }
    if !(is_root() && namespaces) {
        eprintln!("the suite is not root or the user has no namespaces: the case without them is the one above");
        return;
    }
    // Namespaces taken away: a user namespace of the suite's own whose limit of nested user
    // namespaces is 0, doctor run in it as its root without a capability.
    let (code, out, err) = user_command(
        "unshare",
        &[
            "--user",
            "--map-root-user",
            "sh",
            "-c",
            "echo 0 > /proc/sys/user/max_user_namespaces && exec setpriv --inh-caps=-all --bounding-set=-all --no-new-privs \"$0\" doctor --json",
            bin,
        ],
        home.path(),
    );
    let report: Value = serde_json::from_str(&out)
        .unwrap_or_else(|e| panic!("doctor without namespaces: {e}: {out}{err}"));
    assert_eq!(code, Some(if landlock { 0 } else { 1 }), "{out}{err}");
    let layers = &report["layers"];
    assert_eq!(layers["processes"]["held"], false, "{report}");
    assert_eq!(report["whole"], false, "{report}");
    if landlock {
        assert_eq!(state_of(&layers["filesystem"]), "partly", "{report}");
        let network = layers["network"]["detail"].as_str().unwrap();
        assert!(
            !layers["network"]["held"].as_bool().unwrap() || network.contains("seccomp"),
            "{report}"
        );
    }
    let (_, text, _) = user_command(
        "unshare",
        &[
            "--user",
            "--map-root-user",
            "sh",
            "-c",
            "echo 0 > /proc/sys/user/max_user_namespaces && exec setpriv --inh-caps=-all --bounding-set=-all --no-new-privs \"$0\" doctor",
            bin,
        ],
        home.path(),
    );
    text_says_what_json_says(&text, &report);
    assert!(
        !text.contains("runs in this box") && text.contains("less than the whole box"),
        "{text}"
    );
}
