//! Landlock confinement of a child, for where bubblewrap is missing or cannot make its
//! namespaces (most containers): unprivileged, no namespace, Linux ≥ 5.13; with a seccomp
//! filter beside it for the network ([`crate::seccomp`]).
//!
//! A [`Confinement`] is plain data — which folders the child may write beneath and which it may
//! run programs from. [`Command::confine`](crate::Command::confine) builds the Landlock ruleset
//! and the seccomp filter in the parent (it opens the folders) and, between fork and exec, the
//! child drops every capability it could use (the bounding and ambient sets, then its own: as
//! root it is root of nothing), sets `no_new_privs`, restricts itself and installs the filter.
//! From then on the child and everything it starts may read the whole file system but write
//! only beneath [`Confinement::writable`], run programs only from beneath
//! [`Confinement::executable`], open no socket but a Unix or netlink one (seccomp: no TCP, no
//! UDP, no raw socket, no io_uring), connect or bind no TCP port (Landlock ABI 4 on, a second
//! wall), and neither signal nor reach an abstract socket of a process outside its domain
//! (ABI 6 on); `/proc/<pid>` of a process outside (its `environ`, `root`, `fd`, `mem`) is
//! refused by Landlock's ptrace rule. A Unix socket by path (a daemon's, where the file system
//! lets the child reach it) is not refused. What the running kernel lacks is left out, and
//! [`Confinement::describe`] says what holds.

use crate::seccomp::NetFilter;
use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd,
    Ruleset, RulesetAttr, RulesetCreated, RulesetCreatedAttr, Scope,
};
use std::io;
use std::path::PathBuf;

/// The newest Landlock ABI these rules are written for.
const TARGET: ABI = ABI::V6;

/// What a confined child may do besides reading.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Confinement {
    /// Folders (or files) the child may write beneath: its private temp and cache folders.
    pub writable: Vec<PathBuf>,
    /// Folders (or files) the child may run programs from: the toolchains the host resolved.
    pub executable: Vec<PathBuf>,
}

/// The Landlock ABI version the running kernel offers, or `None` where it has none (not built
/// in, or not enabled), or the person turned it off (`AGENT_TOOLS_LANDLOCK=off`: what a machine
/// without Landlock does, for trying that path; it never lets anything run uncontained that
/// would not be asked about first).
pub fn landlock_abi() -> Option<i32> {
    if std::env::var("AGENT_TOOLS_LANDLOCK").is_ok_and(|v| v == "off") {
        return None;
    }
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    #[allow(unsafe_code)]
    // SAFETY: landlock_create_ruleset with a null attribute, size 0 and the VERSION flag only
    // returns the ABI version (or an error); it reads and writes no memory of ours.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    (v >= 1).then_some(v as i32)
}

impl Confinement {
    /// What the confinement holds on this kernel, in words (for `status` and `doctor`).
    pub fn describe(&self) -> String {
        match landlock_abi() {
            None => "Landlock is not available on this kernel".to_string(),
            Some(abi) => {
                let mut held = vec![
                    "host and workspace read-only",
                    "writes only to a private folder",
                    "programs only from the toolchain folders",
                    "no capability",
                    "no access to other processes' /proc entries",
                ];
                if crate::seccomp::available() {
                    held.push("no network but local sockets (seccomp)");
                }
                if abi >= 4 {
                    held.push("no TCP");
                }
                if abi >= 6 {
                    held.push("no signal or abstract socket outside");
                }
                format!("Landlock ABI {abi} ({})", held.join(", "))
            }
        }
    }

    /// The ruleset and the network filter, built in the parent (it opens the named folders; one
    /// that does not exist is left out; no filter where the kernel has no seccomp filters). An
    /// error when the kernel has no Landlock.
    pub(crate) fn prepare(&self) -> io::Result<(RulesetCreated, Option<NetFilter>)> {
        if landlock_abi().is_none() {
            return Err(io::Error::other(
                "Landlock is not available on this kernel (Linux 5.13 or later with Landlock enabled is needed)",
            ));
        }
        let err = |e: landlock::RulesetError| io::Error::other(format!("Landlock: {e}"));
        let read = AccessFs::ReadFile | AccessFs::ReadDir;
        let mut rules: Vec<PathBeneath<PathFd>> = Vec::new();
        let mut rule = |path: &std::path::Path, access: BitFlags<AccessFs>| {
            // A folder that does not exist (or cannot be opened) is left out: nothing beneath it
            // is allowed.
            if let Ok(fd) = PathFd::new(path) {
                let access = if path.is_dir() {
                    access
                } else {
                    access & AccessFs::from_file(TARGET)
                };
                rules.push(PathBeneath::new(fd, access));
            }
        };
        rule(std::path::Path::new("/"), read);
        for dir in &self.executable {
            rule(dir, read | AccessFs::Execute);
        }
        for dir in &self.writable {
            rule(dir, AccessFs::from_all(TARGET) & !AccessFs::Execute);
        }
        // What every program writes to without it being a file of anyone's.
        for dev in ["/dev/null", "/dev/zero", "/dev/full"] {
            rule(
                std::path::Path::new(dev),
                read | AccessFs::WriteFile | AccessFs::Truncate,
            );
        }
        let ruleset = Ruleset::default()
            .set_compatibility(CompatLevel::BestEffort)
            .handle_access(AccessFs::from_all(TARGET))
            .map_err(err)?
            .handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)
            .map_err(err)?
            .scope(Scope::from_all(TARGET))
            .map_err(err)?
            .create()
            .map_err(err)?
            .no_new_privs(true)
            .add_rules(rules.into_iter().map(Ok::<_, landlock::RulesetError>))
            .map_err(err)?;
        Ok((ruleset, NetFilter::build()?))
    }
}

/// In the child, between fork and exec: drop every capability (the bounding and ambient sets
/// first, then the effective, permitted and inheritable ones), restrict the child with
/// `ruleset` (which sets `no_new_privs`), then install `net`. Only async-signal-safe calls:
/// prctl, capset, the Landlock and seccomp system calls; `net` is only read (freeing it here
/// could take the allocator's lock).
pub(crate) fn apply_in_child(ruleset: RulesetCreated, net: Option<&NetFilter>) -> io::Result<()> {
    drop_capabilities();
    ruleset
        .restrict_self()
        .map_err(|e| io::Error::other(format!("Landlock: {e}")))?;
    match net {
        Some(net) => net.install_in_child(),
        None => Ok(()),
    }
}

/// Drop what capabilities the process has: nothing for an ordinary user, everything for root
/// (who stays uid 0 but can no longer override a permission or signal another user's process).
fn drop_capabilities() {
    #[allow(unsafe_code)]
    // SAFETY: prctl and capset take plain integers and a pointer to our own stack structs;
    // failures (an ordinary user cannot change the bounding set) are ignored on purpose.
    unsafe {
        for cap in 0..64 {
            libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0);
        }
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        );
        #[repr(C)]
        struct Header {
            version: u32,
            pid: i32,
        }
        #[repr(C)]
        struct Data {
            effective: u32,
            permitted: u32,
            inheritable: u32,
        }
        let mut header = Header {
            version: 0x2008_0522, // _LINUX_CAPABILITY_VERSION_3
            pid: 0,
        };
        let data = [
            Data {
                effective: 0,
                permitted: 0,
                inheritable: 0,
            },
            Data {
                effective: 0,
                permitted: 0,
                inheritable: 0,
            },
        ];
        libc::syscall(libc::SYS_capset, &mut header as *mut Header, data.as_ptr());
    }
}
