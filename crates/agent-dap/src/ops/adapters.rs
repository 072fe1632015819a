//! `adapters`: which debug adapters are usable in this workspace, and why not.

use crate::supervisor::Supervisor;
use agent_tier::ToolOutput;
use serde_json::json;
use std::fmt::Write as _;

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
            "- {}: {status}\n    marker ({}): {marker}\n    program: {binary}\n    install: {}",
            d.id.name(),
            d.id.markers().join(", "),
            d.id.install()
        );
        rows.push(json!({
            "id": d.id.name(),
            "usable": d.usable(),
            "marker": d.marker.as_ref().map(|m| sup.shown(m)),
            "markers": d.id.markers(),
            "binary": d.binary.as_ref().map(|b| b.display().to_string()),
            "problem": d.why_not(),
            "install": d.id.install(),
        }));
    }
    text.push_str("markers are looked for from the program's directory up to the workspace root; `launch` checks again for its program");
    ToolOutput::text(text).with_structured(json!({"adapters": rows}))
}
