//! How results read: breakpoints as the adapter verified them, one variable, a capped value,
//! an output tail. Rendering only: nothing here sends a request.

use super::limits::MAX_VALUE;
use crate::protocol::{Breakpoint, Variable};
use crate::session::Session;
use crate::supervisor::Supervisor;
use agent_tier::lines;
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::path::Path;

pub(super) fn truncate(s: &str, max: usize) -> String {
    let count = s.chars().count();
    if count <= max {
        return s.to_string();
    }
    let kept: String = s.chars().take(max).collect();
    format!("{kept}… ({} more characters)", count - max)
}

/// The last `max` characters of `s`, saying how many came before.
pub(super) fn tail(s: &str, max: usize) -> String {
    let count = s.chars().count();
    if count <= max {
        return s.to_string();
    }
    let kept: String = s.chars().skip(count - max).collect();
    format!("({} earlier characters) …{kept}", count - max)
}

/// Characters of a breakpoint's source line echoed.
const ECHO_LINE: usize = 120;

/// One line per breakpoint of `file`, echoing the source line it landed on ("- a.py:4:
/// verified: `acc += i`", "- a.py:5 (asked 3, moved by the adapter): …"), and the rows.
/// `requested` are the lines asked for, in the order the adapter answers.
pub(super) fn breakpoint_lines(
    sup: &Supervisor,
    file: &Path,
    requested: &[u32],
    bps: &[Breakpoint],
) -> (String, Vec<Value>) {
    let mut text = String::new();
    let mut rows = Vec::new();
    let source = std::fs::read(file)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    let source_line = |l: u32| {
        usize::try_from(l)
            .ok()
            .and_then(|l| l.checked_sub(1))
            .and_then(|i| lines::lines(&source).nth(i))
            .map(|t| truncate(t.trim(), ECHO_LINE))
    };
    for (i, bp) in bps.iter().enumerate() {
        let asked = requested.get(i).copied();
        let line = bp.line.or(asked);
        let verified = bp.verified;
        let message = bp.message.as_deref();
        let moved = match (asked, line) {
            (Some(a), Some(l)) if a != l => Some(a),
            _ => None,
        };
        let mut at = match line {
            Some(l) => format!("{}:{l}", sup.shown(file)),
            None => sup.shown(file),
        };
        if let Some(a) = moved {
            let _ = write!(at, " (asked {a}, moved by the adapter)");
        }
        let _ = write!(
            text,
            "\n- {at}: {}",
            if verified { "verified" } else { "not verified" }
        );
        if let Some(m) = message {
            let _ = write!(text, " ({m})");
        }
        let echoed = line.and_then(source_line);
        if let Some(src) = echoed.as_deref().filter(|s| !s.is_empty()) {
            let _ = write!(text, ": `{src}`");
        }
        rows.push(json!({
            "file": sup.shown(file), "line": line, "requested_line": asked, "verified": verified,
            "message": message, "source": echoed,
        }));
    }
    (text, rows)
}

/// One line per function breakpoint, saying where the adapter verified it ("- function
/// main.helper: verified at main.go:21: `func helper(n int) int {`"), and the rows.
pub(super) fn function_lines(
    sup: &Supervisor,
    names: &[String],
    bps: &[Breakpoint],
) -> (String, Vec<Value>) {
    let mut text = String::new();
    let mut rows = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let bp = bps.get(i).cloned().unwrap_or_default();
        let verified = bp.verified;
        let message = bp.message.as_deref();
        let line = bp.line;
        let path = bp.source.as_ref().and_then(|s| s.path());
        let file = path.map(|p| sup.shown(Path::new(p)));
        let _ = write!(
            text,
            "\n- function {name}: {}",
            if verified { "verified" } else { "not verified" }
        );
        match (&file, line) {
            (Some(f), Some(l)) => {
                let _ = write!(text, " at {f}:{l}");
            }
            (Some(f), None) => {
                let _ = write!(text, " in {f}");
            }
            _ => {}
        }
        if let Some(m) = message {
            let _ = write!(text, " ({m})");
        }
        let echoed = path.zip(line).and_then(|(p, l)| {
            let source = std::fs::read(p).ok()?;
            let source = String::from_utf8_lossy(&source);
            let i = usize::try_from(l).ok()?.checked_sub(1)?;
            lines::lines(&source)
                .nth(i)
                .map(|t| truncate(t.trim(), ECHO_LINE))
        });
        if let Some(src) = echoed.as_deref().filter(|s| !s.is_empty()) {
            let _ = write!(text, ": `{src}`");
        }
        rows.push(json!({
            "function": name, "file": file, "line": line, "verified": verified,
            "message": message, "source": echoed,
        }));
    }
    (text, rows)
}

/// One variable (or an evaluation's result) as a line and a row, remembering its reference.
pub(super) fn variable_row(s: &Session, v: &Variable) -> (String, Value) {
    variable_row_capped(s, v, MAX_VALUE)
}

/// [`variable_row`] with the value cut at `max` characters.
pub(super) fn variable_row_capped(s: &Session, v: &Variable, max: usize) -> (String, Value) {
    let name = &v.name;
    let value = &v.value;
    let ty = v.ty.as_deref().filter(|t| !t.is_empty());
    let r = v.variables_reference;
    if r > 0 {
        s.known().refs.insert(r);
    }
    let value = truncate(value, max);
    let mut line = match ty {
        Some(t) => format!("{name}: {t} = {value}"),
        None => format!("{name} = {value}"),
    };
    if r > 0 {
        let _ = write!(line, " [reference {r}]");
    }
    (
        line,
        json!({"name": name, "type": ty, "value": value, "reference": r}),
    )
}
