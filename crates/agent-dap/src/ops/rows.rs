//! The rows of results, built from what the adapter answered: a line breakpoint with the source
//! line it landed on, a function breakpoint with where it landed, a frame, a variable with its
//! value cut (its reference remembered for `variables`). How they read is `report`'s.

use super::inspect::frame_text;
use crate::protocol::{Breakpoint, StackFrame, Variable};
use crate::report::{BreakpointRow, FrameRow, FunctionBreakpointRow, VariableRow};
use crate::session::Session;
use crate::supervisor::Supervisor;
use agent_tier::display::clip_chars;
use agent_tier::lines;
use std::path::Path;

/// Characters of a breakpoint's source line echoed.
const ECHO_LINE: usize = 120;

/// Line `line` (1-based) of `source`, trimmed and cut.
fn echoed(source: &str, line: u32) -> Option<String> {
    let i = usize::try_from(line).ok()?.checked_sub(1)?;
    lines::lines(source)
        .nth(i)
        .map(|t| clip_chars(t.trim(), ECHO_LINE).into_owned())
}

fn read_text(path: &Path) -> Option<String> {
    std::fs::read(path)
        .ok()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// One row per breakpoint of `file`, echoing the source line it landed on. `requested` are the
/// lines asked for, in the order the adapter answers.
pub(super) fn breakpoint_rows(
    sup: &Supervisor,
    file: &Path,
    requested: &[u32],
    bps: &[Breakpoint],
) -> Vec<BreakpointRow> {
    let source = read_text(file).unwrap_or_default();
    bps.iter()
        .enumerate()
        .map(|(i, bp)| {
            let asked = requested.get(i).copied();
            let line = bp.line.or(asked);
            BreakpointRow {
                file: sup.shown(file),
                line,
                requested_line: asked,
                verified: bp.verified,
                message: bp.message.clone(),
                source: line.and_then(|l| echoed(&source, l)),
            }
        })
        .collect()
}

/// One row per function breakpoint asked for (`names`, in order), saying where the adapter
/// verified it.
pub(super) fn function_rows(
    sup: &Supervisor,
    names: &[String],
    bps: &[Breakpoint],
) -> Vec<FunctionBreakpointRow> {
    names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let Some(bp) = bps.get(i) else {
                return FunctionBreakpointRow {
                    function: name.clone(),
                    file: None,
                    line: None,
                    verified: false,
                    message: Some(format!(
                        "the adapter answered for {} of {} function breakpoints",
                        bps.len(),
                        names.len()
                    )),
                    source: None,
                };
            };
            let path = bp.source.as_ref().and_then(|s| s.path());
            let source = path
                .zip(bp.line)
                .and_then(|(p, l)| echoed(&read_text(Path::new(p))?, l));
            FunctionBreakpointRow {
                function: name.clone(),
                file: path.map(|p| sup.shown(Path::new(p))),
                line: bp.line,
                verified: bp.verified,
                message: bp.message.clone(),
                source,
            }
        })
        .collect()
}

/// The row of frame `f`, `index` from the top.
pub(super) fn frame_row(sup: &Supervisor, index: usize, f: &StackFrame) -> FrameRow {
    FrameRow {
        index,
        frame_id: f.id,
        at: frame_text(sup, f),
    }
}

/// One variable (or an evaluation's result), its value cut at `max` characters (or masked when
/// it looks like a secret: [`crate::mask`]), remembering its reference.
pub(super) fn variable_row(s: &Session, v: &Variable, max: usize) -> VariableRow {
    let r = v.variables_reference;
    if r > 0 {
        s.known().refs.insert(r);
    }
    let (value, masked) = crate::mask::shown(&v.name, &v.value);
    VariableRow {
        name: v.name.clone(),
        ty: v.ty.clone().filter(|t| !t.is_empty()),
        value: if masked {
            value
        } else {
            clip_chars(&value, max).into_owned()
        },
        masked,
        reference: r,
    }
}
