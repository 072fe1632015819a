//! Trust asked of the person when nothing can contain an untrusted project's servers (no
//! bubblewrap that works, no Landlock): the first call that needs a server asks, through the
//! run's [`agent_tier::person::PersonAsker`] (the terminal card or MCP elicitation, to the
//! caller's own client), whether to trust the folder — for this run, always (added to
//! `trusted_projects` in the user's own config file, whose path the question shows), or not. A "no" (or a declined question) is remembered
//! for the run: no later call asks again. Without anyone to ask (no asker in the run, a client
//! that cannot elicit) the call fails with the error that names the file and the line to
//! put in it, as before.
//!
//! Never: trusts on a guess (a skipped or unanswerable question is not a yes), or writes a
//! config file inside the workspace (such a file is the project's, and trusts nothing).

use crate::error::LspError;
use crate::supervisor::Supervisor;
use agent_tier::CallContext;
use agent_tier::person::{Question, Reply};
use serde_json::{Value, json};
use std::path::Path;

const THIS_RUN: &str = "Trust for this run";
const ALWAYS: &str = "Trust always";
const NO: &str = "Do not trust";

/// What the person decided, once per run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Decision {
    /// Trusted (for this run, or also in the user's file).
    Trusted,
    /// Refused, or declined to answer: the reason, repeated to every later call.
    Refused(String),
}

/// The run's one trust question: asked at most once; concurrent calls wait for its answer.
#[derive(Default)]
pub(crate) struct TrustQuestion {
    decided: tokio::sync::Mutex<Option<Decision>>,
}

/// Before a call that needs a server: when the project is untrusted and nothing can contain its
/// servers, ask the person (once per run). `Ok` when the call may go on (trusted, contained, or
/// nobody to ask: then the start fails with its own error, which names the file).
pub(crate) async fn settle(
    sup: &Supervisor,
    asked: &TrustQuestion,
    cx: &CallContext,
) -> Result<(), LspError> {
    let why = match sup.containment() {
        Some(Err(crate::contain::Uncontained(why))) => why.clone(),
        _ => return Ok(()),
    };
    let Some(asker) = cx.registry().person_asker() else {
        return Ok(());
    };
    let mut decided = asked.decided.lock().await;
    if let Some(d) = decided.as_ref() {
        return match d {
            Decision::Trusted => Ok(()),
            Decision::Refused(reason) => Err(refused(sup, reason)),
        };
    }
    let root = sup.root.display().to_string();
    let file = sup.cfg.user_file.clone();
    let shown_file = file
        .as_ref()
        .map(|f| f.display().to_string())
        .unwrap_or_else(|| "~/.config/agent-tools/lsp.json".to_string());
    let question = Question {
        question: format!("Trust the folder {root}?"),
        context: Some(format!(
            "Its language servers cannot be contained on this machine ({}). Trusting it lets the repository's own configuration run programs as you when a server starts (a build script, an interpreter or compiler it names). Not trusting it: no language server runs for it in this run.",
            reason_of(&why)
        )),
        options: vec![
            (THIS_RUN.to_string(), "until this host ends".to_string()),
            (
                ALWAYS.to_string(),
                format!("also adds it to `trusted_projects` in {shown_file}"),
            ),
            (
                NO.to_string(),
                "no language server starts for it in this run".to_string(),
            ),
        ],
    };
    let decision = match asker.ask(cx, question).await {
        Reply::Chose(label) if label == THIS_RUN => Decision::Trusted,
        Reply::Chose(label) if label == ALWAYS => {
            match file.filter(|f| !f.starts_with(&sup.root)) {
                Some(f) => {
                    if let Err(e) = add_trusted(&f, &sup.root) {
                        // Trusted for this run all the same: the person said yes.
                        tracing::warn!(target: "agent_lsp", file = %f.display(), error = %e, "could not record the trusted project");
                    }
                }
                None => {
                    tracing::warn!(target: "agent_lsp", "no user config file outside the workspace to record the trusted project in");
                }
            }
            Decision::Trusted
        }
        Reply::Chose(_) => Decision::Refused(format!("the person chose `{NO}`")),
        Reply::Declined => Decision::Refused("the person declined the question".to_string()),
        // Skipped, timed out, nobody to ask: not a yes, and not remembered.
        Reply::Unanswered(why) => {
            tracing::info!(target: "agent_lsp", root = %root, why = %why, "trust was asked, and not answered");
            return Ok(());
        }
    };
    tracing::info!(target: "agent_lsp", root = %root, decision = ?decision, "trust asked of the person");
    if decision == Decision::Trusted {
        sup.grant_trust();
    }
    *decided = Some(decision.clone());
    match decision {
        Decision::Trusted => Ok(()),
        Decision::Refused(reason) => Err(refused(sup, &reason)),
    }
}

fn refused(sup: &Supervisor, reason: &str) -> LspError {
    LspError::Untrusted(format!(
        "the project is not trusted ({reason}, asked once in this run) and its language servers cannot be contained here: no language server runs for it. {}",
        sup.cfg.how_to_trust()
    ))
}

/// The part of the uncontained reason that says why (what is missing).
fn reason_of(why: &str) -> &str {
    why.split_once('(')
        .and_then(|(_, r)| r.split_once(')'))
        .map(|(r, _)| r)
        .unwrap_or(why)
}

/// Add `root` to `trusted_projects` in the user's config `file` (made if missing), written
/// whole or not at all.
fn add_trusted(file: &Path, root: &Path) -> std::io::Result<()> {
    let mut cfg: Value = match std::fs::read_to_string(file) {
        Ok(text) => serde_json::from_str(&text).map_err(std::io::Error::other)?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => json!({}),
        Err(e) => return Err(e),
    };
    let Some(obj) = cfg.as_object_mut() else {
        return Err(std::io::Error::other("the file is not a JSON object"));
    };
    let list = obj
        .entry("trusted_projects")
        .or_insert_with(|| Value::Array(Vec::new()));
    let Some(list) = list.as_array_mut() else {
        return Err(std::io::Error::other("`trusted_projects` is not a list"));
    };
    let root = root.display().to_string();
    if !list.iter().any(|v| v.as_str() == Some(root.as_str())) {
        list.push(Value::String(root));
    }
    let dir = file
        .parent()
        .ok_or_else(|| std::io::Error::other("the file has no folder"))?;
    std::fs::create_dir_all(dir)?;
    let mut text = serde_json::to_string_pretty(&cfg).map_err(std::io::Error::other)?;
    text.push('\n');
    agent_tier::workspace::write_atomic(dir, file, text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn always_adds_the_root_once_and_keeps_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("agent-tools/lsp.json");
        add_trusted(&file, Path::new("/w/proj")).unwrap();
        add_trusted(&file, Path::new("/w/proj")).unwrap();
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(v["trusted_projects"], json!(["/w/proj"]));
        std::fs::write(&file, r#"{"max_servers": 3, "trusted_projects": ["/a"]}"#).unwrap();
        add_trusted(&file, Path::new("/w/proj")).unwrap();
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(v["trusted_projects"], json!(["/a", "/w/proj"]));
        assert_eq!(v["max_servers"], 3);
        std::fs::write(&file, "not json").unwrap();
        assert!(add_trusted(&file, Path::new("/w/proj")).is_err());
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "not json");
    }

    #[test]
    fn the_reason_is_the_parenthesis() {
        assert_eq!(
            reason_of("cannot be contained (bubblewrap is not installed, and no Landlock): x"),
            "bubblewrap is not installed, and no Landlock"
        );
    }
}
