//! The terminal commands' output. Everything `call`, `tools`, `doctor` and `repl` print passes
//! through here, so file and program text (a `read` of a hostile file, an `eval`'s output) reaches
//! the terminal as text: control characters, C1 and bidi overrides escaped visibly
//! ([`agent_tools::tier::display`]), in JSON as `\u` escapes of the same string. A reader that
//! goes away (`agent-tools call … | head`) ends the output quietly: the command keeps its own
//! exit status, and nothing panics on a broken pipe.

use agent_tools::tier::display::{escape_keeping_lines, needs_escape};
use serde::Serialize;
use std::fmt::Write as _;
use std::io::{ErrorKind, Write};
use std::process::ExitCode;

/// `text` as the terminal is given it: lines and tabs kept, every other character a terminal
/// would act on written as its visible escape (`\x1b`, `\u{202e}`).
pub fn shown(text: &str) -> std::borrow::Cow<'_, str> {
    escape_keeping_lines(text)
}

/// `value` as pretty JSON and a newline, every character a terminal would act on written as a
/// `\uXXXX` escape (serde writes DEL, C1 and the bidi overrides raw): the same JSON value.
pub fn json(value: &impl Serialize) -> String {
    let text = serde_json::to_string_pretty(value).unwrap_or_default();
    let mut out = String::with_capacity(text.len() + 1);
    for c in text.chars() {
        // Outside strings a JSON text holds only ASCII punctuation and whitespace, so every
        // such character is inside a string, where `\uXXXX` stands for it.
        if c != '\n' && needs_escape(c) {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                let _ = write!(out, "\\u{unit:04x}");
            }
        } else {
            out.push(c);
        }
    }
    out.push('\n');
    out
}

/// Write `text` to stdout, as [`shown`], and flush it.
pub fn stdout(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(shown(text).as_bytes())?;
    out.flush()
}

/// A line for the person on stderr, as [`shown`]; a stderr that is gone is not worth a panic.
pub fn stderr(line: &str) {
    let _ = writeln!(std::io::stderr(), "{}", shown(line));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_escapes_what_serde_writes_raw_and_keeps_the_value() {
        let value =
            serde_json::json!({"text": "a\u{1b}]0;t\u{7}\u{7f}\u{9b}\u{202e}\u{2066}\tb\nc"});
        let text = json(&value);
        assert!(
            !text.chars().any(|c| c != '\n' && needs_escape(c)),
            "{text:?}"
        );
        assert!(text.contains("\\u007f\\u009b\\u202e\\u2066"), "{text}");
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, value);
    }
}
