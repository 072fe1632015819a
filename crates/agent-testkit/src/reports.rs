//! How a test sees that a contained program ran: the program sends its name to a Unix socket
//! the test listens on.
//!
//! A marker file cannot show it. A program contained by bubblewrap or Landlock may write only
//! beneath its private folders, so a marker it tried to leave anywhere the test could look is
//! refused, and the test that looks for it cannot fail. A path socket is reached by `connect`,
//! which neither wall refuses (bubblewrap binds `/` read-only, and a socket on a read-only mount
//! still takes connections; Landlock rules no `connect`; the seccomp filter lets `AF_UNIX`
//! through), so a program that ran is heard from wherever it ran. The socket must lie where the
//! program sees it: not under `/tmp` or the home folder, which bubblewrap covers (a folder under
//! `/var/tmp` is seen), or mounted into a container.

use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A listener on a Unix socket, read by a thread of the test: every connection's whole text is
/// one report.
pub struct Reports {
    sock: PathBuf,
    seen: Arc<Mutex<Vec<String>>>,
}

/// The end of what was reported before it (the listener takes connections one at a time, in
/// the order they were made).
const END: &str = "--end--";

impl Reports {
    /// A listener on `dir/sock` (the folder is made).
    pub fn listen(dir: &Path) -> Reports {
        std::fs::create_dir_all(dir).unwrap();
        let sock = dir.join("sock");
        let listener = UnixListener::bind(&sock).unwrap();
        // A contained program keeps no capability (and may be another uid inside a container):
        // the mode lets it in.
        std::fs::set_permissions(&sock, std::fs::Permissions::from_mode(0o777)).unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let into = seen.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(mut conn) = conn else { continue };
                let _ = conn.set_read_timeout(Some(Duration::from_secs(5)));
                let mut name = String::new();
                let _ = conn.read_to_string(&mut name);
                into.lock().unwrap().push(name);
            }
        });
        Reports { sock, seen }
    }

    /// The socket's path on the host.
    pub fn sock(&self) -> &Path {
        &self.sock
    }

    /// Everything reported since the last `take`, in order.
    pub fn take(&self) -> Vec<String> {
        let mut end = UnixStream::connect(&self.sock).unwrap();
        end.write_all(END.as_bytes()).unwrap();
        drop(end);
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            {
                let mut seen = self.seen.lock().unwrap();
                if let Some(i) = seen.iter().position(|n| n == END) {
                    let mut out: Vec<String> = seen.drain(..=i).collect();
                    out.pop();
                    return out;
                }
            }
            assert!(Instant::now() < deadline, "the report listener is stuck");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// The `RAN-*` files in `dir`, sorted: the marks [`sh_reporter`] and [`rust_reporter`] leave
/// when `mark` names `dir/RAN-`.
pub fn marks(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("RAN-"))
        .collect();
    out.sort();
    out
}

/// A POSIX shell function `report NAME` (for a hostile script to call): it creates the file
/// `{mark}NAME` if it may, and sends NAME to the socket `sock` (paths as the program sees them)
/// with `/usr/bin/python3`.
pub fn sh_reporter(sock: &str, mark: &str) -> String {
    format!(
        "report() {{\n  touch \"{mark}$1\" 2>/dev/null\n  /usr/bin/python3 -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[2]); s.sendall(sys.argv[1].encode())' \"$1\" '{sock}' 2>/dev/null\n}}\n"
    )
}

/// A Rust function `fn report(name: &str)` (for a hostile `build.rs` or proc macro), doing what
/// [`sh_reporter`]'s does with the standard library alone.
pub fn rust_reporter(sock: &str, mark: &str) -> String {
    format!(
        "fn report(name: &str) {{\n    let _ = std::fs::write(format!(\"{mark}{{name}}\"), \"\");\n    if let Ok(mut s) = std::os::unix::net::UnixStream::connect({sock:?}) {{\n        let _ = std::io::Write::write_all(&mut s, name.as_bytes());\n    }}\n}}\n"
    )
}

/// A Python program that stands as a language server of the user's own config, to show what a
/// program contained beside the servers can do: it tries to create `write_at` (in the
/// workspace), then reports `probe: write refused` or `probe: wrote in the workspace` to `sock`
/// and ends.
pub fn probe_script(sock: &str, write_at: &str) -> String {
    format!(
        "import socket\ntry:\n    open({write_at:?}, 'w').close()\n    wrote = 'probe: wrote in the workspace'\nexcept OSError:\n    wrote = 'probe: write refused'\ns = socket.socket(socket.AF_UNIX)\ns.connect({sock:?})\ns.sendall(wrote.encode())\n"
    )
}
