//! `agent-tools hook CLIENT`: a client's own hook. Claude Code runs it after its own `Edit`,
//! `MultiEdit` or `Write` with the call on stdin (the file, and `originalFile`: what it held
//! before); this reports that change to the host the same Claude Code started, through the
//! host's control socket ([`agent_tools_cli::control`]), and prints the problems the change
//! introduced as the hook's `additionalContext`, which Claude Code hands to the model right
//! after its tool's result.
//!
//! A hook never gets in the client's way: whatever fails (no host, no server for the file, bad
//! input), it prints nothing on stdout, says why on stderr, and exits 0.

use crate::args::HookClient;
use agent_tools_cli::control::{self, Request, WireBefore};
use serde_json::{Value, json};
use std::io::Read;
use std::process::ExitCode;
use std::time::Duration;

/// How long the host may take to check (a language server may have to start).
const WAIT: Duration = Duration::from_secs(110);

pub fn run(client: HookClient) -> ExitCode {
    match client {
        HookClient::ClaudeCode => match claude_code() {
            Ok(Some(text)) => {
                let out = json!({
                    "hookSpecificOutput": {
                        "hookEventName": "PostToolUse",
                        "additionalContext": text,
                    }
                });
                println!("{out}");
            }
            Ok(None) => {}
            Err(e) => eprintln!("agent-tools hook claude-code: {e}"),
        },
    }
    ExitCode::SUCCESS
}

/// The request Claude Code's `PostToolUse` input describes: `tool_input.file_path`, and
/// `tool_response.originalFile` (a string: the old content; `null` with `type: "create"`: a
/// new file). `None` for a tool that changed no file.
pub fn request_of(input: &Value) -> Option<Request> {
    let file = input["tool_input"]["file_path"]
        .as_str()
        .or_else(|| input["tool_response"]["filePath"].as_str())?;
    let response = &input["tool_response"];
    let before = match &response["originalFile"] {
        Value::String(old) => WireBefore::Content(old.clone()),
        Value::Null if response["type"] == "create" => WireBefore::Absent,
        _ => WireBefore::Unknown,
    };
    Some(Request {
        file: file.into(),
        before,
    })
}

fn claude_code() -> Result<Option<String>, String> {
    let mut text = String::new();
    std::io::stdin()
        .take(256 << 20)
        .read_to_string(&mut text)
        .map_err(|e| format!("cannot read the hook's input: {e}"))?;
    let input: Value =
        serde_json::from_str(&text).map_err(|e| format!("the hook's input is not JSON: {e}"))?;
    let Some(req) = request_of(&input) else {
        return Ok(None);
    };
    let socket = control::find_host()
        .ok_or("no agent-tools host started by this client is running (serve over stdio)")?;
    let answer = control::ask(&socket, &req, WAIT)
        .map_err(|e| format!("the host at {} did not answer: {e}", socket.display()))?;
    Ok((!answer.text.is_empty()).then_some(answer.text))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shapes Claude Code 2.1.332 sends (recorded by a hook that saved its stdin).
    #[test]
    fn claude_codes_shapes_become_requests() {
        let edit = json!({"tool_name": "Edit",
            "tool_input": {"file_path": "/w/app.py", "old_string": "a", "new_string": "b"},
            "tool_response": {"filePath": "/w/app.py", "originalFile": "a\n", "structuredPatch": []}});
        let r = request_of(&edit).unwrap();
        assert_eq!(r.file, std::path::PathBuf::from("/w/app.py"));
        assert_eq!(r.before, WireBefore::Content("a\n".into()));
        let create = json!({"tool_name": "Write",
            "tool_input": {"file_path": "/w/new.py", "content": "x"},
            "tool_response": {"type": "create", "filePath": "/w/new.py", "originalFile": null}});
        assert_eq!(request_of(&create).unwrap().before, WireBefore::Absent);
        let update = json!({"tool_name": "Write",
            "tool_input": {"file_path": "/w/app.py", "content": "y"},
            "tool_response": {"type": "update", "filePath": "/w/app.py", "originalFile": "old"}});
        assert_eq!(
            request_of(&update).unwrap().before,
            WireBefore::Content("old".into())
        );
        let unknown = json!({"tool_name": "MultiEdit", "tool_input": {"file_path": "/w/a.py"}});
        assert_eq!(request_of(&unknown).unwrap().before, WireBefore::Unknown);
        assert!(
            request_of(&json!({"tool_name": "Bash", "tool_input": {"command": "ls"}})).is_none()
        );
    }
}
