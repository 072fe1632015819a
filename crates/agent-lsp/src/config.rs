//! The server table: built-in defaults, then the user's file, then the project's file, then the
//! [`LspConfig`] the host passes to [`crate::attach`].
//!
//! Config files (JSON, every key optional):
//!
//! - user: `$XDG_CONFIG_HOME/agent-tools/lsp.json` (else `~/.config/agent-tools/lsp.json`);
//! - project: `<workspace root>/.agent-tools/lsp.json`.
//!
//! ```json
//! {
//!   "servers": {
//!     "pyright": { "settings": { "python": { "analysis": { "typeCheckingMode": "strict" } } } },
//!     "my-lsp": { "language": "zig", "commands": [["zls"]], "extensions": { "zig": "zig" },
//!                 "root_markers": ["build.zig"] }
//!   },
//!   "languages": { "python": ["basedpyright", "pyright"] },
//!   "disable": ["pylsp"],
//!   "max_servers": 8
//! }
//! ```
//!
//! A server entry whose id exists replaces only the fields it names; a new id must name
//! `language`, `commands`, `extensions` and `root_markers`. `languages` maps a language to the
//! server ids that may serve it, in order of preference: the first whose root marker AND binary
//! are both present serves the file.
//!
//! `max_servers` caps how many language servers run at once (default [`DEFAULT_MAX_SERVERS`];
//! one runs per server and project root). When a new one would pass it, the least recently used
//! idle server is shut down; it starts again at its next use. The project's file may lower the
//! cap, never raise it.
//!
//! ## Trust
//!
//! A checkout does not choose what runs. Programs the project supplies — the server entries of
//! its own `.agent-tools/lsp.json` (their commands, environment and settings) and binaries found
//! inside the workspace (`node_modules/.bin`, `.venv/bin`, `venv/bin`, a relative command) — are
//! used only when the project is trusted: its root (or a folder above it) is listed in
//! `trusted_projects` of the *user's* file, or the host sets [`LspConfig::trust_project`]. A
//! project file cannot trust itself. Otherwise they are ignored, servers resolve on `$PATH`, and
//! `lsp status` names what was ignored and how to trust the project.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How one language server is found and started.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerSpec {
    /// The server's id (`pyright`, `rust-analyzer`, …).
    pub id: String,
    /// The language it serves (`python`, `rust`, …); see [`ConfigFile::languages`].
    pub language: String,
    /// Commands to try in order (program and arguments); the first whose program resolves is used.
    pub commands: Vec<Vec<String>>,
    /// File extensions (without the dot) and the LSP `languageId` of each.
    pub extensions: BTreeMap<String, String>,
    /// Files or folders whose presence marks a project root.
    pub root_markers: Vec<String>,
    /// `initializationOptions` sent with `initialize`.
    pub init_options: Value,
    /// Settings answered to `workspace/configuration` (by dotted section) and sent with
    /// `workspace/didChangeConfiguration`.
    pub settings: Value,
    /// Extra environment variables for the server process.
    pub env: BTreeMap<String, String>,
    /// The command that installs it (shown by `status` and `doctor`).
    pub install: String,
    /// For servers that start loading only when the first file is opened and announce it late
    /// (typescript-language-server, ≈ 0.7 s): how long after the first didOpen to wait for
    /// their work-done progress to begin before answering. 0: do not wait.
    #[serde(default)]
    pub open_settle_ms: u64,
    /// What the server needs when the project is not trusted, beyond containment.
    #[serde(default)]
    pub untrusted: Untrusted,
}

/// A server's needs for a project that is not trusted, beyond its containment: part of the
/// server's entry, so that a server's quirks are data of the table (or of a config file) and
/// never its id matched in code.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Untrusted {
    /// Merged into `initializationOptions` (rust-analyzer: no build scripts, proc macros or
    /// check on save; typescript-language-server: no automatic type acquisition, which runs
    /// npm).
    pub init_options: Value,
    /// What the server is then not allowed to do, as `lsp status` says it.
    pub withheld: Option<String>,
    /// The server loads the project's own `node_modules/typescript` unless told otherwise: it is
    /// given the TypeScript installed beside it (`tsserver.path`).
    pub host_typescript: bool,
    /// The server looks for its project above the root and runs that project's toolchain: it is
    /// given the root's `Cargo.toml` (`linkedProjects`), and a root without one is refused.
    pub linked_cargo_project: bool,
}

/// Fields of a server entry in a config file or [`ConfigFile::servers`]; each given field replaces
/// the default's.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerPatch {
    /// The language it serves.
    pub language: Option<String>,
    /// Commands to try in order.
    pub commands: Option<Vec<Vec<String>>>,
    /// Extension → `languageId`.
    pub extensions: Option<BTreeMap<String, String>>,
    /// Root markers.
    pub root_markers: Option<Vec<String>>,
    /// `initializationOptions`.
    pub init_options: Option<Value>,
    /// Settings.
    pub settings: Option<Value>,
    /// Extra environment variables.
    pub env: Option<BTreeMap<String, String>>,
    /// Install hint.
    pub install: Option<String>,
    /// See [`ServerSpec::open_settle_ms`].
    pub open_settle_ms: Option<u64>,
    /// See [`ServerSpec::untrusted`] (replaces the default's whole).
    pub untrusted: Option<Untrusted>,
}

/// One config file's content.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// Server entries by id.
    #[serde(default)]
    pub servers: BTreeMap<String, ServerPatch>,
    /// Language → server ids in order of preference.
    #[serde(default)]
    pub languages: BTreeMap<String, Vec<String>>,
    /// Server ids to leave out.
    #[serde(default)]
    pub disable: Vec<String>,
    /// Workspace roots (absolute; a folder trusts every root below it) whose project-supplied
    /// programs may run; see the module docs. Honoured in the user's file only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trusted_projects: Vec<PathBuf>,
    /// How the servers of a project that is not trusted are contained (default: inside
    /// bubblewrap where it works, else under Landlock; see [`crate::contain`]). Honoured in the
    /// user's file only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub untrusted_sandbox: Option<UntrustedSandbox>,
    /// How many language servers may run at once (at least 1; default
    /// [`DEFAULT_MAX_SERVERS`]). A project's file may lower it, never raise it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_servers: Option<usize>,
}

/// How many language servers run at once unless a config says otherwise.
pub const DEFAULT_MAX_SERVERS: usize = 8;

/// What the host passes to [`crate::attach`]. `LspConfig::default()` is the normal choice: the
/// built-in table plus the user's and the project's config files.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LspConfig {
    /// Applied after both config files (same shape as a file).
    pub overrides: ConfigFile,
    /// Do not read the user and project config files (tests).
    pub skip_config_files: bool,
    /// Use this user config file instead of the default location.
    pub user_config: Option<PathBuf>,
    /// The host trusts this workspace: its own config file and the binaries inside it may run
    /// (an explicit host setting; the other way is `trusted_projects` in the user's file).
    pub trust_project: bool,
    /// Timeout of one request to a server (default 30 s).
    pub request_timeout_ms: Option<u64>,
    /// How long a call waits for a server to finish loading (default 60 s); after that the
    /// answer is given and marked as possibly partial.
    pub ready_timeout_ms: Option<u64>,
    /// How long the write wrapper waits for diagnostics of the new content (default 15 s,
    /// including a server start).
    pub write_diagnostics_timeout_ms: Option<u64>,
    /// Timeout of a project checker run by `diagnostics` with `"*"` (default 300 s).
    pub checker_timeout_ms: Option<u64>,
    /// How many language servers may run at once (default [`DEFAULT_MAX_SERVERS`], else the
    /// config files' `max_servers`); this host setting wins over both files.
    pub max_servers: Option<usize>,
}

/// The effective table and timeouts of this run.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// The servers by id: the built-in table after the config files and overrides.
    pub servers: BTreeMap<String, ServerSpec>,
    /// For each language, the ids of its servers in order of preference.
    pub languages: BTreeMap<String, Vec<String>>,
    /// Timeout of one request to a server.
    pub request_timeout: Duration,
    /// How long a call waits for a server to finish loading.
    pub ready_timeout: Duration,
    /// How long the write wrapper waits for diagnostics of the new content.
    pub write_timeout: Duration,
    /// Timeout of a project checker run.
    pub checker_timeout: Duration,
    /// How many servers may run at once (at least 1).
    pub max_servers: usize,
    /// Where the cap came from, for messages (`max_servers` in which file or setting).
    pub max_servers_from: String,
    /// Problems met while reading config files (shown by `status`).
    pub warnings: Vec<String>,
    /// Whether the project's own programs may run (see the module docs).
    pub trusted: bool,
    /// How the servers are contained when the project is not trusted.
    pub untrusted_sandbox: UntrustedSandbox,
    /// What of the project's own config was ignored because the project is not trusted.
    pub ignored: Vec<String>,
    /// The user config file that can trust the project (shown in the advice).
    pub user_file: Option<PathBuf>,
    /// The workspace root, as the advice names it.
    pub root: PathBuf,
}

mod builtin;
pub use crate::contain::UntrustedSandbox;
pub use builtin::{builtin_languages, builtin_servers};

/// The default location of the user config file.
pub fn user_config_path() -> Option<PathBuf> {
    if let Some(x) = std::env::var_os("XDG_CONFIG_HOME").filter(|x| !x.is_empty()) {
        return Some(PathBuf::from(x).join("agent-tools/lsp.json"));
    }
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config/agent-tools/lsp.json"))
}

/// The project config file of a workspace.
pub fn project_config_path(root: &Path) -> PathBuf {
    root.join(".agent-tools/lsp.json")
}

fn apply(
    servers: &mut BTreeMap<String, ServerSpec>,
    languages: &mut BTreeMap<String, Vec<String>>,
    file: &ConfigFile,
    origin: &str,
    warnings: &mut Vec<String>,
) {
    for (id, p) in &file.servers {
        let base = servers.get(id).cloned();
        let mut s = match base {
            Some(s) => s,
            None => {
                let (Some(language), Some(commands), Some(extensions), Some(markers)) = (
                    p.language.clone(),
                    p.commands.clone(),
                    p.extensions.clone(),
                    p.root_markers.clone(),
                ) else {
                    warnings.push(format!(
                        "{origin}: new server `{id}` needs `language`, `commands`, `extensions` and `root_markers`; it was ignored"
                    ));
                    continue;
                };
                ServerSpec {
                    id: id.clone(),
                    language,
                    commands,
                    extensions,
                    root_markers: markers,
                    init_options: Value::Null,
                    settings: Value::Null,
                    env: BTreeMap::new(),
                    install: String::new(),
                    open_settle_ms: 0,
                    untrusted: Untrusted::default(),
                }
            }
        };
        if let Some(v) = &p.language {
            s.language = v.clone();
        }
        if let Some(v) = &p.commands {
            s.commands = v.clone();
        }
        if let Some(v) = &p.extensions {
            s.extensions = v.clone();
        }
        if let Some(v) = &p.root_markers {
            s.root_markers = v.clone();
        }
        if let Some(v) = &p.init_options {
            s.init_options = v.clone();
        }
        if let Some(v) = &p.settings {
            s.settings = v.clone();
        }
        if let Some(v) = &p.env {
            s.env = v.clone();
        }
        if let Some(v) = &p.install {
            s.install = v.clone();
        }
        if let Some(v) = p.open_settle_ms {
            s.open_settle_ms = v;
        }
        if let Some(v) = &p.untrusted {
            s.untrusted = v.clone();
        }
        servers.insert(id.clone(), s);
    }
    for (lang, ids) in &file.languages {
        languages.insert(lang.clone(), ids.clone());
    }
    for id in &file.disable {
        servers.remove(id);
    }
}

fn read_file(path: &Path, warnings: &mut Vec<String>) -> Option<ConfigFile> {
    let text = std::fs::read_to_string(path).ok()?;
    match serde_json::from_str(&text) {
        Ok(f) => Some(f),
        Err(e) => {
            warnings.push(format!(
                "{}: not a valid lsp config ({e}); it was ignored — fix it or remove it",
                path.display()
            ));
            None
        }
    }
}

/// Deep-merge `patch` into `base` (objects merge key by key; anything else replaces).
pub(crate) fn merge(base: &mut Value, patch: Value) {
    match (base, patch) {
        (Value::Object(b), Value::Object(p)) => {
            for (k, v) in p {
                merge(b.entry(k).or_insert(Value::Null), v);
            }
        }
        (b, p) => *b = p,
    }
}

/// Whether `root` is one of `trusted` or below one of them (compared canonically).
fn trusts(trusted: &[PathBuf], root: &Path) -> bool {
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    trusted.iter().any(|t| {
        t.is_absolute() && root.starts_with(t.canonicalize().unwrap_or_else(|_| t.to_path_buf()))
    })
}

/// The cap on running servers while the config is resolved, and where it came from.
struct Cap {
    value: usize,
    from: String,
}

impl Cap {
    /// Apply a `max_servers` from `origin`; a project's (`lower_only`) may only lower the cap.
    fn set(
        &mut self,
        v: Option<usize>,
        origin: &str,
        lower_only: bool,
        warnings: &mut Vec<String>,
    ) {
        let Some(v) = v else { return };
        if v == 0 {
            warnings.push(format!(
                "{origin}: `max_servers` must be at least 1; it was ignored (the cap stays {})",
                self.value
            ));
        } else if lower_only && v > self.value {
            warnings.push(format!(
                "{origin}: `max_servers` {v} is above the cap of {}; a project's file may lower the cap, never raise it (raise it in your own config file)",
                self.value
            ));
        } else {
            self.value = v;
            self.from = format!("set in {origin}");
        }
    }
}

impl LspConfig {
    /// The effective table for the workspace at `root`.
    pub fn resolve(&self, root: &Path) -> Resolved {
        let mut servers: BTreeMap<String, ServerSpec> = builtin_servers()
            .into_iter()
            .map(|s| (s.id.clone(), s))
            .collect();
        let mut languages = builtin_languages();
        let mut warnings = Vec::new();
        let mut trusted = self.trust_project || trusts(&self.overrides.trusted_projects, root);
        let mut ignored = Vec::new();
        let mut sandbox = self.overrides.untrusted_sandbox;
        let mut cap = Cap {
            value: DEFAULT_MAX_SERVERS,
            from: "default".to_string(),
        };
        let user = self.user_config.clone().or_else(user_config_path);
        if !self.skip_config_files {
            let canon_root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
            // A "user" file inside the workspace is the project's: it trusts nothing.
            let user_inside = user.as_ref().is_some_and(|u| {
                u.canonicalize()
                    .unwrap_or_else(|_| u.clone())
                    .starts_with(&canon_root)
            });
            if let Some(path) = &user
                && let Some(f) = read_file(path, &mut warnings)
            {
                let origin = path.display().to_string();
                if user_inside {
                    warnings.push(format!(
                        "{origin} is inside the workspace, so it is the project's file: its `trusted_projects` was ignored"
                    ));
                } else {
                    trusted |= trusts(&f.trusted_projects, root);
                    sandbox = sandbox.or(f.untrusted_sandbox);
                }
                cap.set(f.max_servers, &origin, user_inside, &mut warnings);
                apply(&mut servers, &mut languages, &f, &origin, &mut warnings);
            }
            let path = project_config_path(root);
            if let Some(mut f) = read_file(&path, &mut warnings) {
                let origin = path.display().to_string();
                if !f.trusted_projects.is_empty() {
                    warnings.push(format!(
                        "{origin}: `trusted_projects` is honoured in the user's own file only; a project cannot trust itself"
                    ));
                    f.trusted_projects.clear();
                }
                if f.untrusted_sandbox.take().is_some() {
                    warnings.push(format!(
                        "{origin}: `untrusted_sandbox` is honoured in the user's own file only; a project cannot choose its own containment"
                    ));
                }
                cap.set(f.max_servers.take(), &origin, true, &mut warnings);
                if !trusted {
                    // Its server entries choose what runs (commands, environment, settings
                    // that name programs): ignored. Choosing among the servers stays.
                    for id in std::mem::take(&mut f.servers).into_keys() {
                        ignored.push(format!(
                            "server `{id}` of {origin} (its commands, environment and settings)"
                        ));
                    }
                }
                apply(&mut servers, &mut languages, &f, &origin, &mut warnings);
            }
        }
        apply(
            &mut servers,
            &mut languages,
            &self.overrides,
            "LspConfig",
            &mut warnings,
        );
        cap.set(
            self.overrides.max_servers,
            "LspConfig.overrides",
            false,
            &mut warnings,
        );
        cap.set(self.max_servers, "LspConfig", false, &mut warnings);
        if !trusted {
            for s in servers.values_mut() {
                if !s.untrusted.init_options.is_null() {
                    merge(&mut s.init_options, s.untrusted.init_options.clone());
                }
            }
        }
        let ms = |v: Option<u64>, d: u64| Duration::from_millis(v.unwrap_or(d));
        Resolved {
            servers,
            languages,
            request_timeout: ms(self.request_timeout_ms, 30_000),
            ready_timeout: ms(self.ready_timeout_ms, 60_000),
            write_timeout: ms(self.write_diagnostics_timeout_ms, 15_000),
            checker_timeout: ms(self.checker_timeout_ms, 300_000),
            max_servers: cap.value,
            max_servers_from: cap.from,
            warnings,
            trusted,
            untrusted_sandbox: sandbox.unwrap_or_default(),
            ignored,
            user_file: user,
            root: root.to_path_buf(),
        }
    }
}

impl Resolved {
    /// How to trust this project, for messages about what was ignored.
    pub fn how_to_trust(&self) -> String {
        let file = self
            .user_file
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "~/.config/agent-tools/lsp.json".to_string());
        format!(
            "programs the project supplies run only when you trust it: add {:?} to `trusted_projects` in your own {file}",
            self.root.display().to_string()
        )
    }

    /// The servers that may serve a file with this extension, in order of preference.
    pub fn servers_for_ext(&self, ext: &str) -> Vec<&ServerSpec> {
        let mut langs: Vec<&str> = self
            .servers
            .values()
            .filter(|s| s.extensions.contains_key(ext))
            .map(|s| s.language.as_str())
            .collect();
        langs.sort();
        langs.dedup();
        let mut out = Vec::new();
        for lang in langs {
            match self.languages.get(lang) {
                Some(ids) => {
                    for id in ids {
                        if let Some(s) = self.servers.get(id)
                            && s.extensions.contains_key(ext)
                            && s.language == lang
                        {
                            out.push(s);
                        }
                    }
                }
                None => out.extend(
                    self.servers
                        .values()
                        .filter(|s| s.language == lang && s.extensions.contains_key(ext)),
                ),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests;
