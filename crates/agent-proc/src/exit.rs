//! The one wording of how a child ended.

use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

/// `exited with status 3`, `killed by signal 9 (SIGKILL: often the out-of-memory killer)`; a
/// status above 128 from a launcher (a shell, `docker exec`) is explained as the signal it
/// usually stands for.
pub fn describe_exit(s: ExitStatus) -> String {
    if let Some(sig) = s.signal() {
        return format!("killed by signal {sig} ({})", signal_name(sig));
    }
    match s.code() {
        Some(c) if c > 128 && c < 160 => format!(
            "exited with status {c}, which usually means a process under the launcher was killed by signal {} ({})",
            c - 128,
            signal_name(c - 128)
        ),
        Some(c) => format!("exited with status {c}"),
        None => "ended without an exit status".to_string(),
    }
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGSEGV => "SIGSEGV: a segmentation fault",
        libc::SIGKILL => "SIGKILL: often the out-of-memory killer",
        libc::SIGABRT => "SIGABRT: the process aborted",
        libc::SIGBUS => "SIGBUS: a bus error",
        libc::SIGFPE => "SIGFPE",
        libc::SIGILL => "SIGILL",
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGHUP => "SIGHUP",
        _ => "a signal",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wording() {
        assert_eq!(
            describe_exit(ExitStatus::from_raw(3 << 8)),
            "exited with status 3"
        );
        assert_eq!(
            describe_exit(ExitStatus::from_raw(9)),
            "killed by signal 9 (SIGKILL: often the out-of-memory killer)"
        );
        assert!(describe_exit(ExitStatus::from_raw(137 << 8)).contains("killed by signal 9"));
    }
}
