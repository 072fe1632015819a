//! Landlock confinement of a real child (`sh`), asserted from inside: it writes only beneath its
//! writable folder, runs programs only from the executable folders (a script it wrote itself,
//! or one in an outside folder, is refused), holds no capability, cannot signal the test
//! process (Landlock ABI 6) nor read its `/proc/<pid>/environ`, and has no controlling terminal.
//! The kernel here offers Landlock (ABI 7); a kernel without it fails the spawn, which is also
//! asserted to be an error rather than an unconfined child.
//!
//! The network (the seccomp filter beside Landlock), asserted from outside: a real child
//! (`python3`) tries a TCP connection and a UDP datagram, over IPv4 and IPv6, to sockets this
//! test opened on loopback, and the test's own sockets see nothing arrive; the same probe run
//! unconfined does arrive (so the assertion can fail). A Unix socket pair and a netlink socket
//! still work inside; `io_uring_setup` and an x32 system call are refused.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

use agent_proc::{Command, Confinement, Launcher};
use std::net::{TcpListener, UdpSocket};
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::time::Duration;

#[tokio::test]
async fn a_confined_child_writes_and_runs_only_where_it_may() {
    let abi = agent_proc::landlock_abi().expect("this machine's kernel offers Landlock");
    let private = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir_in("/var/tmp").unwrap();
    // A program outside every executable folder, runnable by its mode.
    let script = outside.path().join("run-me.sh");
    std::fs::write(&script, "#!/bin/sh\necho ran\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let confinement = Confinement {
        writable: vec![private.path().to_path_buf()],
        executable: ["/usr", "/bin", "/lib", "/lib64"]
            .iter()
            .map(std::path::PathBuf::from)
            .collect(),
    };
    let probe = format!(
        r#"
        echo x > "{private}/ok" && echo write_private=ok || echo write_private=denied
        echo x > "{outside}/escaped" 2>/dev/null && echo write_outside=ok || echo write_outside=denied
        "{script}" >/dev/null 2>&1 && echo exec_outside=ok || echo exec_outside=denied
        cp /bin/true "{private}/mine" && chmod +x "{private}/mine"
        "{private}/mine" 2>/dev/null && echo exec_own=ok || echo exec_own=denied
        /bin/true && echo exec_system=ok || echo exec_system=denied
        grep CapEff /proc/self/status
        kill -0 {me} 2>/dev/null && echo signal_outside=ok || echo signal_outside=denied
        cat /proc/{me}/environ >/dev/null 2>&1 && echo environ_outside=ok || echo environ_outside=denied
        (exec 3<>/dev/tty) 2>/dev/null && echo tty=ok || echo tty=none
        "#,
        private = private.path().display(),
        outside = outside.path().display(),
        script = script.display(),
        me = std::process::id(),
    );
    let out = Command::new(&Launcher::host(), "/bin/sh")
        .args(["-c", &probe])
        .confine(confinement)
        .output(Duration::from_secs(30))
        .await
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    for want in [
        "write_private=ok",
        "write_outside=denied",
        "exec_outside=denied",
        "exec_own=denied",
        "exec_system=ok",
        "CapEff:\t0000000000000000",
        "environ_outside=denied",
        "tty=none",
    ] {
        assert!(text.contains(want), "{want} in:\n{text}\n{}", out.stderr);
    }
    if abi >= 6 {
        assert!(text.contains("signal_outside=denied"), "{text}");
    }
    assert!(!outside.path().join("escaped").exists());
}

/// The probe: in `net` mode, a TCP connection and a UDP datagram to each `host port port` it is
/// given, then a Unix socket pair and a netlink socket; in `io_uring` mode, `io_uring_setup` and
/// (on x86_64) `socket` by its x32 number. It prints `what=result` lines; a refused call prints
/// the errno's name after the step that failed (`socket:EACCES`).
const PROBE: &str = r#"
import ctypes, errno, os, platform, socket, sys

def refused(step, e):
    return step + ":" + (errno.errorcode.get(e.errno, str(e.errno)) if e.errno else type(e).__name__)

def tcp(fam, host, port):
    try:
        s = socket.socket(fam, socket.SOCK_STREAM)
    except OSError as e:
        return refused("socket", e)
    try:
        s.settimeout(3)
        s.connect((host, port))
        s.sendall(b"x")
        return "connected"
    except OSError as e:
        return refused("connect", e)

def udp(fam, host, port):
    try:
        s = socket.socket(fam, socket.SOCK_DGRAM)
    except OSError as e:
        return refused("socket", e)
    try:
        s.sendto(b"probe", (host, port))
        return "sent"
    except OSError as e:
        return refused("sendto", e)

if sys.argv[1] == "net":
    args = sys.argv[2:]
    for i in range(0, len(args), 3):
        host, tport, uport = args[i], int(args[i + 1]), int(args[i + 2])
        fam = socket.AF_INET6 if ":" in host else socket.AF_INET
        v = "6" if fam == socket.AF_INET6 else "4"
        print("tcp%s=%s" % (v, tcp(fam, host, tport)))
        print("udp%s=%s" % (v, udp(fam, host, uport)))
    try:
        a, b = socket.socketpair()
        a.sendall(b"hi")
        print("socketpair=" + ("ok" if b.recv(2) == b"hi" else "wrong"))
    except OSError as e:
        print("socketpair=" + refused("socketpair", e))
    try:
        socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0).close()
        print("netlink=ok")
    except OSError as e:
        print("netlink=" + refused("socket", e))
else:
    libc = ctypes.CDLL(None, use_errno=True)
    params = ctypes.create_string_buffer(120)
    r = libc.syscall(425, 1, ctypes.byref(params))
    print("io_uring_setup=" + ("ok" if r >= 0 else errno.errorcode[ctypes.get_errno()]))
    if platform.machine() == "x86_64":
        r = libc.syscall(41 | 0x40000000, socket.AF_INET, socket.SOCK_STREAM, 0)
        print("x32_socket=" + ("ok" if r >= 0 else errno.errorcode[ctypes.get_errno()]))
print("done")
"#;

/// The real interpreter behind `python3` on PATH (not a version manager's shim script).
fn python3() -> PathBuf {
    let out = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 is on PATH");
    let exe = String::from_utf8(out.stdout).unwrap();
    std::fs::canonicalize(exe.trim()).unwrap()
}

/// The system's program folders and the interpreter's own.
fn confinement(python: &std::path::Path) -> Confinement {
    let mut executable: Vec<PathBuf> = ["/usr", "/bin", "/lib", "/lib64"]
        .iter()
        .map(PathBuf::from)
        .collect();
    executable.push(python.parent().unwrap().to_path_buf());
    Confinement {
        writable: Vec::new(),
        executable,
    }
}

/// Run the probe, confined or not; its printed lines.
async fn probe(python: &std::path::Path, confined: bool, args: &[String]) -> String {
    let mut cmd = Command::new(&Launcher::host(), python)
        .args(["-c", PROBE])
        .args(args.iter().map(String::as_str));
    if confined {
        cmd = cmd.confine(confinement(python));
    }
    let out = cmd.output(Duration::from_secs(30)).await.unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success() && text.contains("done"),
        "the probe ran to its end (refusals are errors, never a kill): {:?}\n{text}\n{}",
        out.status,
        out.stderr
    );
    text
}

/// Sockets the test opens on one loopback address, and what reached them.
struct Listening {
    host: &'static str,
    tcp: TcpListener,
    udp: UdpSocket,
}

impl Listening {
    fn open(host: &'static str) -> Option<Self> {
        let tcp = TcpListener::bind((host, 0)).ok()?;
        let udp = UdpSocket::bind((host, 0)).ok()?;
        tcp.set_nonblocking(true).unwrap();
        udp.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
        Some(Self { host, tcp, udp })
    }

    fn args(&self) -> [String; 3] {
        [
            self.host.to_string(),
            self.tcp.local_addr().unwrap().port().to_string(),
            self.udp.local_addr().unwrap().port().to_string(),
        ]
    }

    /// Whether a TCP connection is waiting to be accepted (a connection completes in the
    /// kernel, and is queued, before the child's `connect` returns), and whether a datagram
    /// arrives within a second.
    fn arrived(&self) -> (bool, bool) {
        let tcp = match self.tcp.accept() {
            Ok(_) => true,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => false,
            Err(e) => panic!("accept on {}: {e}", self.host),
        };
        let mut buf = [0u8; 16];
        let udp = self.udp.recv_from(&mut buf).is_ok();
        (tcp, udp)
    }
}

/// Every loopback address this machine has: 127.0.0.1, and ::1 where IPv6 is up.
fn listen_everywhere() -> Vec<Listening> {
    let v4 = Listening::open("127.0.0.1").expect("127.0.0.1 is up");
    std::iter::once(v4).chain(Listening::open("::1")).collect()
}

#[tokio::test]
async fn a_confined_child_reaches_no_network_socket_but_local_ones() {
    assert!(
        agent_proc::landlock_abi().is_some(),
        "this machine's kernel offers Landlock"
    );
    let described = confinement(std::path::Path::new("/usr/bin/python3")).describe();
    assert!(
        described.contains("no network but local sockets (seccomp)"),
        "{described}"
    );
    let python = python3();

    // The control: unconfined, the same probe's connection and datagram do arrive.
    let open = listen_everywhere();
    let args: Vec<String> = std::iter::once("net".to_string())
        .chain(open.iter().flat_map(Listening::args))
        .collect();
    let text = probe(&python, false, &args).await;
    for l in &open {
        assert_eq!(
            l.arrived(),
            (true, true),
            "unconfined to {}:\n{text}",
            l.host
        );
    }

    let open = listen_everywhere();
    let args: Vec<String> = std::iter::once("net".to_string())
        .chain(open.iter().flat_map(Listening::args))
        .collect();
    let text = probe(&python, true, &args).await;
    for l in &open {
        assert_eq!(
            l.arrived(),
            (false, false),
            "confined to {}: nothing may arrive:\n{text}",
            l.host
        );
    }
    // Refused at `socket` itself (seccomp), not only at `connect` (Landlock's TCP rule).
    for l in &open {
        let v = if l.host.contains(':') { "6" } else { "4" };
        for want in [
            format!("tcp{v}=socket:EACCES"),
            format!("udp{v}=socket:EACCES"),
        ] {
            assert!(text.contains(&want), "{want} in:\n{text}");
        }
    }
    for want in ["socketpair=ok", "netlink=ok"] {
        assert!(text.contains(want), "{want} in:\n{text}");
    }
}

#[tokio::test]
async fn a_confined_child_cannot_set_up_io_uring_or_call_by_x32_numbers() {
    let python = python3();
    let control = probe(&python, false, &["io_uring".to_string()]).await;
    let text = probe(&python, true, &["io_uring".to_string()]).await;
    // Unconfined, this machine's kernel sets an io_uring up (`io_uring_setup=ok`); x32 is off
    // in most kernels, so there the control's ENOSYS is the kernel's own.
    assert!(
        text.contains("io_uring_setup=ENOSYS"),
        "confined:\n{text}\nunconfined:\n{control}"
    );
    if std::env::consts::ARCH == "x86_64" {
        assert!(
            text.contains("x32_socket=ENOSYS"),
            "confined:\n{text}\nunconfined:\n{control}"
        );
    }
}
