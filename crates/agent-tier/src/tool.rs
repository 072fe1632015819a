//! What a tool is — the [`Tool`] trait (its name, tier, description, typed arguments, and the
//! [`Effects`] one call declares before it runs) and what a listing shows of it ([`ToolInfo`],
//! [`Hints`]) — and what a call returns: a [`ToolOutput`] (text, structured content rendered
//! from a [`Report`], images, and the typed effects wrappers select on: the changed files,
//! their previous content, a [`DryRun`]'s proposed change).

use crate::{CallContext, ResourceKey, Tier};
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::future::Future;

/// The error type a tool returns; the registry renders it as an error result.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// A PNG image in a tool result (a matplotlib figure, for example).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Image {
    /// Always `image/png` for now.
    pub mime_type: String,
    /// The encoded bytes.
    #[serde(skip)]
    pub data: Vec<u8>,
}

impl Image {
    /// A PNG image from its encoded bytes.
    pub fn png(data: Vec<u8>) -> Self {
        Image {
            mime_type: "image/png".to_string(),
            data,
        }
    }
}

/// What a tool call returns: text for the model, optional structured JSON, images, and whether
/// it is an error.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ToolOutput {
    /// Plain text a model can act on.
    pub text: String,
    /// The same result as structured data, when the tool has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub structured: Option<serde_json::Value>,
    /// Images (PNG).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<Image>,
    /// Whether the call failed.
    pub is_error: bool,
    /// The files this call wrote or deleted, relative to the run's root: the typed effect that
    /// wrappers select on (diagnostics on write covers every tool that fills it, a harness's own
    /// write tool included — fill it with [`ToolOutput::with_changed_files`]).
    #[serde(skip)]
    pub changed_files: Vec<String>,
    /// What each changed file held before this call (keyed like `changed_files`; a file that
    /// did not exist has no entry), so a wrapper can tell what the call introduced from what was
    /// already there.
    #[serde(skip)]
    pub previous: std::collections::BTreeMap<String, Vec<u8>>,
    /// A dry run's change, not written: each file it would change (keyed like
    /// `changed_files`) and its new content (`None`: it would be deleted). What each held is in
    /// `previous`. Wrappers check the change as if it were written, and write nothing.
    #[serde(skip)]
    pub proposed: std::collections::BTreeMap<String, Option<Vec<u8>>>,
}

/// A tool's result as a value of its own type. The text a model reads and the structured content
/// a client reads are both rendered from it, in one place: [`ToolOutput::report`]. Its
/// `JsonSchema` is the result's documented shape (`cargo xtask codegen` writes it to
/// docs/tools.md); it is not served as `outputSchema` (docs/decisions.md says why).
pub trait Report: Serialize + JsonSchema {
    /// The text a model reads.
    fn text(&self) -> String;
    /// Whether the result is an error (a refusal or a failed run that still has a shape).
    fn is_error(&self) -> bool {
        false
    }
}

impl ToolOutput {
    /// A result rendered from its typed value: [`Report::text`] as the text and the value's JSON
    /// as the structured content.
    pub fn report<R: Report + ?Sized>(report: &R) -> Self {
        match serde_json::to_value(report) {
            Ok(structured) => ToolOutput {
                text: report.text(),
                structured: Some(structured),
                is_error: report.is_error(),
                ..Default::default()
            },
            // Only a hand-written `Serialize` can fail here (derived ones cannot): say so rather
            // than hand out text without its structured half.
            Err(e) => ToolOutput::error(format!(
                "{}\n\n(internal error: the structured result could not be written: {e})",
                report.text()
            )),
        }
    }

    /// A successful text result.
    pub fn text(text: impl Into<String>) -> Self {
        ToolOutput {
            text: text.into(),
            ..Default::default()
        }
    }

    /// An error result.
    pub fn error(text: impl Into<String>) -> Self {
        ToolOutput {
            text: text.into(),
            is_error: true,
            ..Default::default()
        }
    }

    /// Attach structured data.
    pub fn with_structured(mut self, value: serde_json::Value) -> Self {
        self.structured = Some(value);
        self
    }

    /// Record the files this call changed (relative to the root).
    pub fn with_changed_files(
        mut self,
        files: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        self.changed_files.extend(files.into_iter().map(Into::into));
        self
    }

    /// Record one changed file (relative to the root) and what it held before (`None`: it did
    /// not exist).
    pub fn with_previous(mut self, file: impl Into<String>, before: Option<Vec<u8>>) -> Self {
        let file = file.into();
        if let Some(b) = before {
            self.previous.insert(file.clone(), b);
        }
        if !self.changed_files.contains(&file) {
            self.changed_files.push(file);
        }
        self
    }

    /// Record the files of an applied all-or-nothing change, with what each held before.
    pub fn with_file_changes(
        mut self,
        root: &std::path::Path,
        changes: &[crate::workspace::FileChange],
    ) -> Self {
        for c in changes {
            self = self.with_previous(
                crate::workspace::display_path(root, &c.path),
                c.expected.clone(),
            );
        }
        self
    }

    /// A dry run of an all-or-nothing change: nothing is written; the result says which files
    /// the change would write or delete, and carries their new content for wrappers
    /// ([`ToolOutput::proposed`]).
    pub fn dry_run(
        tool: &str,
        root: &std::path::Path,
        changes: &[crate::workspace::FileChange],
    ) -> Self {
        let mut would = DryRun {
            dry_run: true,
            would_write: Vec::new(),
            would_delete: Vec::new(),
            tool: tool.to_string(),
        };
        let mut proposed = std::collections::BTreeMap::new();
        let mut previous = std::collections::BTreeMap::new();
        for c in changes {
            let file = crate::workspace::display_path(root, &c.path);
            match &c.new {
                Some(_) => would.would_write.push(file.clone()),
                None => would.would_delete.push(file.clone()),
            }
            if let Some(b) = &c.expected {
                previous.insert(file.clone(), b.clone());
            }
            proposed.insert(file, c.new.clone());
        }
        ToolOutput {
            proposed,
            previous,
            ..ToolOutput::report(&would)
        }
    }

    /// Attach an image.
    pub fn with_image(mut self, image: Image) -> Self {
        self.images.push(image);
        self
    }
}

/// The result of a write tool's dry run: what it would change; nothing was written.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DryRun {
    /// Always true: nothing was written.
    pub dry_run: bool,
    /// The files the change would write, relative to the root.
    pub would_write: Vec<String>,
    /// The files it would delete.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub would_delete: Vec<String>,
    /// The tool.
    #[serde(skip)]
    pub tool: String,
}

impl Report for DryRun {
    fn text(&self) -> String {
        let mut s = format!(
            "dry run: nothing was written. `{}` would write {}",
            self.tool,
            if self.would_write.is_empty() {
                "no file".to_string()
            } else {
                self.would_write.join(", ")
            }
        );
        if !self.would_delete.is_empty() {
            s.push_str(&format!(" and delete {}", self.would_delete.join(", ")));
        }
        s.push_str("; call it again without `dry_run` to write.");
        s
    }
}

/// What one call does, declared by its tool before it runs ([`Tool::effects`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Effects {
    /// The tier of this call; never less than the tool's.
    pub tier: Tier,
    /// Calls holding the same resource run one at a time; `None`: this call runs beside any.
    pub resource: Option<ResourceKey>,
    /// The resource is each room's own ([`Tool::resource_per_room`]): calls from different
    /// rooms hold different locks.
    pub per_room: bool,
    /// The call runs code the project supplies (build scripts and proc macros under `cargo
    /// check`, the project's toolchain, a project-local binary). Such a call is `exec` tier, and
    /// it is the only kind of call for which a family may start a project-supplied executable
    /// of an untrusted project.
    pub runs_project_code: bool,
    /// Why the call is more than the tool's tier (shown when a surface refuses it).
    pub reason: Option<String>,
}

impl Effects {
    /// The effects every call of `tool` has: its tier, and its resource key unless it is
    /// parallel-safe.
    pub fn of<T: Tool + ?Sized>(tool: &T) -> Effects {
        Effects {
            tier: tool.tier(),
            resource: (!tool.parallel_safe()).then(|| tool.resource_key()),
            per_room: tool.resource_per_room(),
            runs_project_code: false,
            reason: None,
        }
    }

    /// This call runs the project's own code, for `reason`: it becomes `exec` tier.
    pub fn running_project_code(mut self, reason: impl Into<String>) -> Effects {
        self.tier = Tier::Exec;
        self.runs_project_code = true;
        self.reason = Some(reason.into());
        self
    }
}

/// A built-in tool bound to a live resource of this run.
///
/// The argument type's JSON Schema is the tool's input schema (generated, never hand-written);
/// argument types should use `#[serde(deny_unknown_fields)]` so that a misspelt argument is an
/// error rather than silently ignored.
pub trait Tool: Send + Sync + 'static {
    /// The deserialised arguments.
    type Args: DeserializeOwned + JsonSchema + Send + 'static;

    /// The name the model calls.
    fn name(&self) -> &str;

    /// What the tool may do.
    fn tier(&self) -> Tier;

    /// The description shown to the model.
    fn description(&self) -> String;

    /// What *this* call does, decided from its parsed arguments before it runs: its tier (an
    /// operation of a read tool that runs the project's own code is `exec`), the resource it
    /// holds, whether it runs code the project supplies. The registry's surface check, approval
    /// and lock use it, never the tool's name. Default: [`Effects::of`] the tool. When in doubt,
    /// declare more, not less.
    fn effects(&self, _args: &Self::Args) -> Effects {
        Effects::of(self)
    }

    /// Whether calls may run concurrently. When in doubt, `false`.
    fn parallel_safe(&self) -> bool {
        false
    }

    /// The key under which non-parallel-safe calls are serialised: tools that share one
    /// resource (a debug session, a kernel, the workspace's files) share a key, the registry
    /// holding it as a [`ResourceKey`](crate::ResourceKey) (a key several tools share is a
    /// constant, such as [`ResourceKey::FILES`](crate::ResourceKey::FILES)). Defaults to the
    /// tool's name.
    fn resource_key(&self) -> ResourceKey {
        ResourceKey::from(self.name().to_string())
    }

    /// Whether the resource is each room's own (a kernel, a debug session, staged edits kept in
    /// [`Rooms`](crate::Rooms)): then calls are serialised per room, not across the run.
    /// Default `false`.
    fn resource_per_room(&self) -> bool {
        false
    }

    /// What a call of this tool may do to the world beyond its tier, for clients (MCP tool
    /// annotations). Defaults from the tier; a tool that starts or stops processes, reaches the
    /// network or is a pure query says so. When in doubt, claim more effect, not less.
    fn hints(&self) -> Hints {
        Hints::from_tier(self.tier())
    }

    /// Whether a call puts a question to a person (`ask_user`): a host whose client cannot
    /// reach one (an MCP client without elicitation) leaves such a tool out and refuses its
    /// calls, by this flag, never by the tool's name. Default `false`.
    fn asks_a_person(&self) -> bool {
        false
    }

    /// Run the tool. A returned error becomes an error result.
    fn call(
        &self,
        args: Self::Args,
        cx: CallContext,
    ) -> impl Future<Output = Result<ToolOutput, BoxError>> + Send;
}

/// What a surface sees of a tool.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolInfo {
    /// The tool's name.
    pub name: String,
    /// The tool's tier.
    pub tier: Tier,
    /// The description shown to the model.
    pub description: String,
    /// Whether calls may run concurrently.
    pub parallel_safe: bool,
    /// The JSON schema of the tool's arguments: always an object schema (`"type": "object"`),
    /// checked when the tool was registered.
    pub input_schema: serde_json::Map<String, serde_json::Value>,
    /// What a call may do, for clients.
    pub hints: Hints,
    /// A call puts a question to a person ([`Tool::asks_a_person`]).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub asks_a_person: bool,
}

/// What a call may do, as clients are told (MCP's tool annotations).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Hints {
    /// Changes nothing: no file, no process started or stopped.
    pub read_only: bool,
    /// May destroy or overwrite something (a file's content, a running process).
    pub destructive: bool,
    /// Calling it twice with the same arguments has no further effect.
    pub idempotent: bool,
    /// May reach beyond the workspace (the network, a package index).
    pub open_world: bool,
}

impl Hints {
    /// The defaults of a tier: read tools change nothing; write tools may overwrite files;
    /// exec tools run code, which may reach the network.
    pub fn from_tier(tier: Tier) -> Self {
        Hints {
            read_only: tier == Tier::Read,
            destructive: tier != Tier::Read,
            idempotent: false,
            open_world: tier == Tier::Exec,
        }
    }

    /// A pure query: read-only and idempotent.
    pub fn query() -> Self {
        Hints {
            idempotent: true,
            ..Hints::from_tier(Tier::Read)
        }
    }
}
