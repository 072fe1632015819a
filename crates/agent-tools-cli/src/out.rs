//! The terminal commands' output. A reader that goes away (`agent-tools call … | head`) ends the
//! output quietly: the command keeps its own exit status, and nothing panics on a broken pipe.

use std::io::{ErrorKind, Write};
use std::process::ExitCode;

/// Write `text` to stdout and flush it.
pub fn stdout(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()
}

/// A line for the person on stderr; a stderr that is gone is not worth a panic.
pub fn stderr(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Whether a write failed because the reader went away.
pub fn reader_gone(e: &std::io::Error) -> bool {
    e.kind() == ErrorKind::BrokenPipe
}

/// The exit status once the output is written: the command's own `code` when it was written or
/// its reader went away; 1, said on stderr, when stdout failed otherwise (a full disk).
pub fn finish(written: std::io::Result<()>, code: ExitCode) -> ExitCode {
    match written {
        Ok(()) => code,
        Err(e) if reader_gone(&e) => code,
        Err(e) => {
            stderr(&format!("agent-tools: cannot write the output: {e}"));
            ExitCode::from(1)
        }
    }
}
