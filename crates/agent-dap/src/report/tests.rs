//! Unit tests of `report`: values render as the text a model reads, and as the structured
//! content a client reads.

use super::*;
use agent_tier::{Report, ToolOutput};
use std::time::Duration;

fn frame(index: usize, at: &str) -> FrameRow {
    FrameRow {
        index,
        frame_id: 10 + index as i64,
        at: at.to_string(),
    }
}

#[test]
fn a_stop_reads_as_one_answer() {
    let snapshot = Snapshot {
        reason: "exception".into(),
        description: String::new(),
        thread_id: 1,
        at: "boom (lib.py:3) in thread 1".into(),
        exception: Some(Raised {
            id: "ValueError".into(),
            message: "bad".into(),
        }),
        listing: Some(Listing {
            file: "app.py".into(),
            line: 9,
            source: (7..=9)
                .map(|line| SourceLine {
                    line,
                    text: format!("line {line}"),
                })
                .collect(),
            frame_index: 1,
        }),
        frames: vec![frame(0, "boom (lib.py:3)"), frame(1, "main (app.py:9)")],
        more_frames: 2,
        locals: Some(Locals {
            scope: "Locals".into(),
            frame: 11,
            reference: 5,
            rows: vec![VariableRow {
                name: "n".into(),
                ty: Some("int".into()),
                value: "3".into(),
                masked: false,
                reference: 0,
            }],
            not_shown: 1,
        }),
        locals_unavailable: None,
    };
    let out = ToolOutput::report(&Moved::Stopped(Box::new(snapshot)));
    assert_eq!(
        out.text,
        "stopped (exception) at boom (lib.py:3) in thread 1\n\
         exception ValueError: bad\n\
         app.py:9 (frame #1, the first in the workspace)\n\
         \x20  7 | line 7\n\
         \x20  8 | line 8\n\
         >  9 | line 9\n\
         frames:\n\
         #0 frame_id 10: boom (lib.py:3)\n\
         #1 frame_id 11: main (app.py:9)\n\
         … 2 more frame(s) (`stack`)\n\
         Locals of frame 11 (reference 5):\n\
         - n: int = 3\n\
         … 1 more not shown (`variables` reference 5)"
    );
    assert_eq!(
        out.structured.unwrap().to_string(),
        r#"{"at":"boom (lib.py:3) in thread 1","exception":{"id":"ValueError","message":"bad"},"file":"app.py","frames":[{"at":"boom (lib.py:3)","frame_id":10},{"at":"main (app.py:9)","frame_id":11}],"line":9,"locals":[{"name":"n","reference":0,"type":"int","value":"3"}],"locals_not_shown":1,"reason":"exception","source":[{"line":7,"text":"line 7"},{"line":8,"text":"line 8"},{"line":9,"text":"line 9"}],"state":"stopped","thread_id":1}"#
    );
}

#[test]
fn other_moves_say_where_the_debuggee_went() {
    let cases = [
        (
            Moved::Unseen(Unseen {
                reason: "pause".into(),
                description: ", paused".into(),
                thread_id: Some(4),
                why: "in thread 4, which has no frames".into(),
            }),
            "stopped (pause, paused) in thread 4, which has no frames",
            r#"{"reason":"pause","state":"stopped","thread_id":4}"#,
        ),
        (
            Moved::Exited(Exited {
                exit_code: Some(0),
                output: format!("{}tail\n", "x".repeat(3000)),
            }),
            "the program exited with code 0; new output (also in `output`):\n(1005 earlier characters) …",
            r#"{"exit_code":0,"state":"exited"}"#,
        ),
        (
            Moved::Running(Running {
                waited: Duration::from_secs(10),
            }),
            "still running after 10s; call `status` to see where it stops, or `pause`",
            r#"{"state":"running"}"#,
        ),
        (
            Moved::AdapterGone(AdapterGone {
                stderr: "panic".into(),
            }),
            "the debug adapter exited unexpectedly; the session is over; its stderr ends with: panic",
            r#"{"state":"adapter gone"}"#,
        ),
    ];
    for (moved, text, structured) in cases {
        let out = ToolOutput::report(&moved);
        assert!(out.text.starts_with(text), "{}", out.text);
        assert_eq!(out.structured.unwrap().to_string(), structured);
    }
}

#[test]
fn a_moved_breakpoint_says_the_line_asked_for() {
    let row = BreakpointRow {
        file: "a.py".into(),
        line: Some(5),
        requested_line: Some(3),
        verified: true,
        message: None,
        source: Some("x = 1".into()),
    };
    assert_eq!(
        row.line_text(),
        "- a.py:5 (asked 3, moved by the adapter): verified: `x = 1`"
    );
    let set = FileBreakpointsSet::Set(FileSet {
        file: "a.py".into(),
        breakpoints: vec![row],
        pending: false,
        unsupported: vec!["hit_count"],
    });
    assert_eq!(
        set.text(),
        "breakpoints in a.py:\n- a.py:5 (asked 3, moved by the adapter): verified: `x = 1`\nthis adapter does not support hit_count; it is ignored"
    );
}
