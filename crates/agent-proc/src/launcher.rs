//! Where a child runs: on the host, or behind a sandbox prefix command.

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

/// How children are launched. Behind a prefix (`docker exec -i box`), program names are resolved
/// by the sandbox (its own `$PATH`), and pids a child reports (a debuggee's `process` event)
/// belong to another pid namespace: the host never signals them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Launcher {
    prefix: Vec<String>,
}

impl Launcher {
    /// Children run on the host.
    pub fn host() -> Self {
        Launcher::default()
    }

    /// Children run behind `prefix` (empty: on the host).
    pub fn prefixed(prefix: &[String]) -> Self {
        Launcher {
            prefix: prefix.to_vec(),
        }
    }

    /// Whether children run on the host.
    pub fn is_host(&self) -> bool {
        self.prefix.is_empty()
    }

    /// The prefix (empty on the host).
    pub fn prefix(&self) -> &[String] {
        &self.prefix
    }

    /// Whether a pid a child reports names a process the host can see and may signal (only on
    /// the host; it still has to carry the run's tag, see [`crate::sweep::kill_reported`]).
    pub fn owns_reported_pids(&self) -> bool {
        self.is_host()
    }

    /// The program to launch for `name`: on the host, the first executable `name` on `$PATH`, in
    /// `$PATH` order (`None` when there is none; a name with a `/` is that file, if it is
    /// executable); behind a prefix, `name` itself, for the sandbox to resolve. The lookup is the
    /// `which` crate's (a regular file the host may execute).
    pub fn which(&self, name: &str) -> Option<OsString> {
        if !self.is_host() {
            return Some(name.into());
        }
        let found = if name.contains('/') {
            let cwd = std::env::current_dir().ok()?;
            which::which_in(name, None::<&OsStr>, cwd)
        } else {
            which::which_in_global(name, Some(std::env::var_os("PATH")?))
                .and_then(|mut all| all.next().ok_or(which::Error::CannotFindBinaryPath))
        };
        found.ok().map(PathBuf::into_os_string)
    }

    /// The argv a program runs as: the prefix, then the program and its arguments.
    pub(crate) fn argv(&self, program: &OsStr) -> (OsString, Vec<OsString>) {
        match self.prefix.split_first() {
            Some((first, rest)) => {
                let mut args: Vec<OsString> = rest.iter().map(OsString::from).collect();
                args.push(program.to_owned());
                (first.into(), args)
            }
            None => (program.to_owned(), Vec::new()),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn names_resolve_on_the_right_side() {
        let host = Launcher::host();
        assert!(
            host.which("sh")
                .is_some_and(|p| Path::new(&p).is_absolute())
        );
        assert_eq!(host.which("no-such-program-here-xyz"), None);
        // A path: that file if it is executable, nothing otherwise.
        let dir = tempfile::tempdir().unwrap();
        let (exe, plain) = (dir.path().join("tool"), dir.path().join("data"));
        std::fs::write(&exe, "#!/bin/sh\n").unwrap();
        std::fs::write(&plain, "x").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(host.which(exe.to_str().unwrap()), Some(exe.clone().into()));
        assert_eq!(host.which(plain.to_str().unwrap()), None);
        assert_eq!(host.which(dir.path().to_str().unwrap()), None);
        let boxed = Launcher::prefixed(&["docker".into(), "exec".into(), "-i".into()]);
        assert_eq!(boxed.which("python3"), Some("python3".into()));
        assert!(!boxed.owns_reported_pids() && host.owns_reported_pids());
        let (p, a) = boxed.argv(OsStr::new("python3"));
        assert_eq!((p, a.len()), ("docker".into(), 3));
    }
}
