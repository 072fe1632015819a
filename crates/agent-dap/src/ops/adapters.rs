//! `adapters`: which debug adapters are usable in this workspace, and why not.

use crate::adapters::AdapterId;
use crate::args::Exceptions;
use crate::supervisor::Supervisor;
use agent_tier::ToolOutput;
use serde_json::json;
use std::fmt::Write as _;

/// "raised, uncaught, userUnhandled (uncaught → uncaught; all → raised, uncaught)".
fn exception_line(id: AdapterId) -> String {
    let a = id.adapter();
    let advertised = a.exception_filters();
    let mapped = |e: Exceptions| {
        let f = e.filters(advertised);
        if f.is_empty() {
            "none".to_string()
        } else {
            f.join(", ")
        }
    };
    let mut line = if advertised.is_empty() {
        "none advertised".to_string()
    } else {
        format!(
            "{} (uncaught → {}; all → {})",
            advertised.join(", "),
            mapped(Exceptions::Uncaught),
            mapped(Exceptions::All)
        )
    };
    if let Some(native) = a.native_exception_stops() {
        line.push_str("; ");
        line.push_str(native);
    }
    line
}

pub(super) fn run(sup: &Supervisor) -> ToolOutput {
    let found = sup.detect_all(&sup.root);
    let mut text = String::from("debug adapters for this workspace (root marker AND binary):\n");
    let mut rows = Vec::new();
    for d in &found {
        let status = match d.why_not() {
            None => "usable".to_string(),
            Some(why) => format!("not usable: {why}"),
        };
        let binary = d
            .binary
            .as_ref()
            .map(|b| b.display().to_string())
            .unwrap_or_else(|| "missing".into());
        let marker = d
            .marker
            .as_ref()
            .map(|m| format!("{} found", sup.shown(m)))
            .unwrap_or_else(|| "missing".into());
        let _ = writeln!(
            text,
            "- {}: {status}\n    marker ({}): {marker}\n    program: {binary}\n    install: {}\n    exception filters: {}",
            d.id.name(),
            d.id.markers().join(", "),
            d.id.install(),
            exception_line(d.id),
        );
        rows.push(json!({
            "id": d.id.name(),
            "usable": d.usable(),
            "marker": d.marker.as_ref().map(|m| sup.shown(m)),
            "markers": d.id.markers(),
            "binary": d.binary.as_ref().map(|b| b.display().to_string()),
            "problem": d.why_not(),
            "install": d.id.install(),
            "exception_filters": d.id.adapter().exception_filters(),
        }));
    }
    text.push_str("markers are looked for from the program's directory up to the workspace root; `launch` checks again for its program");
    ToolOutput::text(text).with_structured(json!({"adapters": rows}))
}
