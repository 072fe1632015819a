//! `output`: the debuggee's captured stdout/stderr, from where the last call stopped or from a
//! cursor, at most `MAX_OUTPUT` bytes per call.

use crate::DapError;
use crate::args::Op;
use crate::limits::MAX_OUTPUT;
use crate::report::Output;
use crate::supervisor::Supervisor;

pub(super) async fn run(sup: &Supervisor, cursor: Option<u64>) -> Result<Output, DapError> {
    let Some(s) = sup.current().await else {
        return Err(DapError::NoSession {
            ended: String::new(),
        });
    };
    let mut o = s.shared.output.lock();
    if let Some(c) = cursor
        && usize::try_from(c).map_or(true, |c| c > o.end())
    {
        let end = o.end();
        return Err(DapError::Argument {
            op: Op::Output.name(),
            arg: "cursor",
            detail: format!(
                "cursor {c} is past the end of the output ({end} bytes so far); pass a cursor from 0 to {end}: 0 or a previous result's `next_cursor`"
            ),
        });
    }
    let cursor = cursor
        .map(|c| usize::try_from(c).unwrap_or(usize::MAX))
        .unwrap_or(o.read_cursor);
    let (output, from, next) = o.read(cursor, MAX_OUTPUT);
    o.read_cursor = next;
    Ok(Output {
        output,
        cursor: from,
        next_cursor: next,
        remaining: o.end() - next,
        asked: cursor,
    })
}
