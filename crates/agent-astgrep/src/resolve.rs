//! `resolve`: accept (every file written, or none) or discard an edit that `ast_edit` staged,
//! as a [`ResolveReport`].

use crate::shown::escape;
use crate::staged::{self, Edits, Slot};
use crate::{AstGrepError, Shared, blocking};
use agent_tier::schemars::{self, JsonSchema};
use agent_tier::workspace::{FsError, apply_all};
use agent_tier::{BoxError, CallContext, ResourceKey, RoomId, Tier, Tool, ToolOutput};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

pub(crate) mod report;

use report::ResolveReport;

/// What `resolve` does with a staged edit: write every file of it (all or nothing), or drop it.
/// (The variants carry no doc comments: the tool's description says it, once.)
// missing_docs is allowed for that reason: the schema's description is written once, elsewhere.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ResolveAction {
    Accept,
    Discard,
}

/// Arguments of `resolve`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResolveArgs {
    /// From the ast_edit proposal (`edit_1`).
    pub edit_id: String,
    /// `accept` or `discard`. Alias: `action`.
    #[serde(alias = "action")]
    pub operation: ResolveAction,
    // accept: report the problems it would bring; write nothing, keep it staged.
    // (no doc comment: it would be the schema's description, which the instructions give once)
    #[allow(missing_docs)]
    #[serde(default)]
    pub dry_run: Option<bool>,
}

pub(crate) struct ResolveTool(pub(crate) Arc<Shared>);

impl Tool for ResolveTool {
    type Args = ResolveArgs;

    fn name(&self) -> &str {
        "resolve"
    }

    fn tier(&self) -> Tier {
        Tier::Write
    }

    fn description(&self) -> String {
        "Write or drop a change ast_edit staged. `accept` writes every file or none (none if \
         any changed since staging); `discard` drops it."
            .to_string()
    }

    fn resource_key(&self) -> ResourceKey {
        staged::RESOURCE
    }

    fn resource_per_room(&self) -> bool {
        true
    }

    async fn call(&self, args: ResolveArgs, cx: CallContext) -> Result<ToolOutput, BoxError> {
        let shared = self.0.clone();
        let room = cx.room();
        let out = blocking(&self.0.config, move |_| resolve(&shared, &room, args)).await?;
        Ok(out)
    }
}

fn pending_ids(edits: &Edits) -> String {
    let pending = edits.pending();
    if pending.is_empty() {
        "no edit is staged in this conversation; call ast_edit first".to_string()
    } else {
        format!("staged edits: {}", pending.join(", "))
    }
}

/// Write or drop the staged edit `args` names; an accepted edit's result records the files it
/// changed and what they held before.
fn resolve(shared: &Shared, room: &RoomId, args: ResolveArgs) -> Result<ToolOutput, AstGrepError> {
    if args.dry_run.unwrap_or(false) && matches!(args.operation, ResolveAction::Discard) {
        return Err(AstGrepError::DryDiscard);
    }
    let given = args.edit_id.trim().to_string();
    let room_edits = shared.edits.of(room);
    let mut edits = room_edits.lock();
    let number = given
        .strip_prefix("edit_")
        .and_then(|n| n.parse::<u64>().ok());
    let Some((n, slot)) = number.and_then(|n| edits.slots.get(&n).map(|s| (n, s))) else {
        return Err(AstGrepError::UnknownEdit {
            known: pending_ids(&edits),
            given,
        });
    };
    let staged = match slot {
        Slot::Accepted => {
            return Err(AstGrepError::AlreadyResolved {
                id: given,
                how: "accepted",
            });
        }
        Slot::Discarded => {
            return Err(AstGrepError::AlreadyResolved {
                id: given,
                how: "discarded",
            });
        }
        Slot::Pending(staged) => staged,
    };
    match args.operation {
        ResolveAction::Discard => {
            let report = ResolveReport {
                edit_id: given,
                operation: ResolveAction::Discard,
                changed_files: Vec::new(),
                staged_files: staged.files.len(),
                replacements: staged.replacements,
            };
            edits.slots.insert(n, Slot::Discarded);
            Ok(ToolOutput::report(&report))
        }
        // Checked as if written; the edit stays staged.
        ResolveAction::Accept if args.dry_run.unwrap_or(false) => Ok(ToolOutput::dry_run(
            "resolve",
            &shared.root,
            &staged.changes,
        )),
        ResolveAction::Accept => match apply_all(&shared.root, &staged.changes) {
            Ok(_) => {
                let written: Vec<_> = staged.changes.iter().map(|c| c.path.clone()).collect();
                shared.cache.changed(&written);
                let report = ResolveReport {
                    edit_id: given,
                    operation: ResolveAction::Accept,
                    changed_files: staged.files.clone(),
                    staged_files: staged.files.len(),
                    replacements: staged.replacements,
                };
                let out =
                    ToolOutput::report(&report).with_file_changes(&shared.root, &staged.changes);
                edits.slots.insert(n, Slot::Accepted);
                Ok(out)
            }
            Err(FsError::Stale { path }) => Err(AstGrepError::Stale {
                id: given,
                files: format!("`{}`", escape(&path)),
            }),
            Err(e) => Err(AstGrepError::WriteFailed {
                id: given,
                detail: escape(&e.to_string()).into_owned(),
            }),
        },
    }
}
