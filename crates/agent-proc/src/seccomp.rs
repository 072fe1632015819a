//! The network half of a confined child's containment: a seccomp-bpf filter, built in the
//! parent and installed in the child beside Landlock, between fork and exec. Landlock stops only
//! TCP (and only from ABI 4); this filter lets the child and everything it starts open no socket
//! but a local one, on every kernel with seccomp filters (Linux 4.14 on, x86_64 and aarch64).
//!
//! Owns: the policy and its installation. `socket` and `socketpair` of any domain but `AF_UNIX`
//! and `AF_NETLINK` fail with `EACCES`; `io_uring_setup`, `io_uring_enter` and
//! `io_uring_register` fail with `ENOSYS` (an io_uring opens sockets without the `socket` system
//! call, out of a filter's sight); on x86_64 every x32 system call fails with `ENOSYS` (its
//! numbers are not the ones the filter matches). Everything else is allowed: a refused call is an
//! error the program sees, never a kill — except a system call of another architecture (a 32-bit
//! x86 program, whose `socketcall` would pass), which kills the process, as seccompiler's
//! architecture check does.
//!
//! Never: decides whether a child is confined (the caller's [`crate::Confinement`]), closes a
//! socket the child inherited or received over a Unix socket, or allocates in the child (the
//! programs are built in the parent; the child makes one `prctl` and one `seccomp` call each).

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch, sock_filter,
};
use std::collections::BTreeMap;
use std::io;

/// x32 system calls carry this bit in their number (and the x86_64 audit architecture).
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// The filters for one child, built in the parent by [`NetFilter::build`].
#[derive(Debug)]
pub(crate) struct NetFilter {
    programs: [BpfProgram; 2],
}

/// The architecture the filters are written for, when seccompiler knows this one.
fn target_arch() -> Option<TargetArch> {
    match std::env::consts::ARCH {
        "x86_64" | "aarch64" => TargetArch::try_from(std::env::consts::ARCH).ok(),
        _ => None,
    }
}

/// Whether the filter can be installed here: an architecture it is written for, and a kernel
/// with seccomp filters that can return an errno (the probe asks the kernel, installs nothing).
pub(crate) fn available() -> bool {
    if target_arch().is_none() {
        return false;
    }
    let action: u32 = libc::SECCOMP_RET_ERRNO;
    #[allow(unsafe_code)]
    // SAFETY: seccomp(SECCOMP_GET_ACTION_AVAIL) only reads the u32 it is pointed to, which lives
    // on our stack for the whole call.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_GET_ACTION_AVAIL,
            0,
            &action as *const u32,
        )
    };
    rc == 0
}

impl NetFilter {
    /// The filters, or `None` where [`available`] says the kernel or architecture has none.
    pub(crate) fn build() -> io::Result<Option<Self>> {
        let Some(arch) = target_arch() else {
            return Ok(None);
        };
        if !available() {
            return Ok(None);
        }
        let err = |e: seccompiler::BackendError| io::Error::other(format!("seccomp: {e}"));
        // The domain (argument 0, an int: its low 32 bits) is neither AF_UNIX nor AF_NETLINK.
        let not_local = SeccompRule::new(vec![
            SeccompCondition::new(
                0,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::Ne,
                libc::AF_UNIX as u64,
            )
            .map_err(err)?,
            SeccompCondition::new(
                0,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::Ne,
                libc::AF_NETLINK as u64,
            )
            .map_err(err)?,
        ])
        .map_err(err)?;
        let sockets: BTreeMap<i64, Vec<SeccompRule>> = [
            (libc::SYS_socket, vec![not_local.clone()]),
            (libc::SYS_socketpair, vec![not_local]),
        ]
        .into_iter()
        .collect();
        let sockets = SeccompFilter::new(
            sockets,
            SeccompAction::Allow,
            SeccompAction::Errno(libc::EACCES as u32),
            arch,
        )
        .map_err(err)?;
        // An empty rule list matches on the number alone.
        let io_uring: BTreeMap<i64, Vec<SeccompRule>> = [
            libc::SYS_io_uring_setup,
            libc::SYS_io_uring_enter,
            libc::SYS_io_uring_register,
        ]
        .into_iter()
        .map(|nr| (nr, Vec::new()))
        .collect();
        let io_uring = SeccompFilter::new(
            io_uring,
            SeccompAction::Allow,
            SeccompAction::Errno(libc::ENOSYS as u32),
            arch,
        )
        .map_err(err)?;
        let sockets = BpfProgram::try_from(sockets).map_err(err)?;
        let mut io_uring = BpfProgram::try_from(io_uring).map_err(err)?;
        if arch == TargetArch::x86_64 {
            // Before everything else (jumps are relative, so a prefix leaves them right).
            io_uring.splice(0..0, x32_guard());
        }
        Ok(Some(Self {
            programs: [sockets, io_uring],
        }))
    }

    /// In the child, between fork and exec: install the filters (each sets `no_new_privs` first,
    /// which Landlock has set already). No allocation: an error is the call's own errno.
    pub(crate) fn install_in_child(&self) -> io::Result<()> {
        for program in &self.programs {
            seccompiler::apply_filter(program).map_err(|e| match e {
                seccompiler::Error::Prctl(e) | seccompiler::Error::Seccomp(e) => e,
                _ => io::Error::from_raw_os_error(libc::EINVAL),
            })?;
        }
        Ok(())
    }
}

/// x86_64 only: a system call numbered with the x32 bit fails with `ENOSYS`, as on a kernel
/// built without x32 (most are; where one is not, `socket` with that bit would pass the filter).
fn x32_guard() -> [sock_filter; 3] {
    let stmt = |code: u32, k: u32| sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    };
    [
        // The system call's number: offset 0 of `struct seccomp_data`.
        stmt(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, 0),
        sock_filter {
            code: (libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K) as u16,
            jt: 0,
            jf: 1,
            k: X32_SYSCALL_BIT,
        },
        stmt(
            libc::BPF_RET | libc::BPF_K,
            libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32,
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filters_build_here_and_x86_64_starts_with_the_x32_guard() {
        assert!(available(), "this machine's kernel offers seccomp filters");
        let f = NetFilter::build().unwrap().expect("built on this machine");
        assert!(f.programs.iter().all(|p| !p.is_empty()));
        if std::env::consts::ARCH == "x86_64" {
            assert_eq!(f.programs[1][..3], x32_guard());
        }
    }
}
