//! Which program serves a server: project-local folders (for a trusted project only), then
//! `$PATH` outside the workspace; a rustup proxy resolved to the real binary (asked from `/` for
//! a project that is not trusted, so its `rust-toolchain.toml` cannot choose); and, for an
//! untrusted project, the TypeScript installed beside typescript-language-server instead of the
//! workspace's own.
//!
//! Owns: binary resolution. Never: starts a server (that is [`crate::supervisor`]).

use crate::config::ServerSpec;
use agent_tier::process::resolve_binary;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Project-local binary folders, searched (in the server's root, then the workspace root) before
/// `$PATH`.
pub const LOCAL_DIRS: &[&str] = &["node_modules/.bin", ".venv/bin", "venv/bin"];

/// Whether `p` is a rustup proxy (same file as the `rustup` beside it).
fn is_rustup_proxy(p: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Some(dir) = p.parent() else { return false };
    let rustup = dir.join("rustup");
    match (std::fs::metadata(p), std::fs::metadata(&rustup)) {
        (Ok(a), Ok(b)) => {
            p.file_name().is_some_and(|n| n != "rustup") && a.ino() == b.ino() && a.dev() == b.dev()
        }
        _ => false,
    }
}

/// `rustup which <name>` run from `cwd`: the real binary behind a rustup proxy, or `None` when
/// the component is not installed.
fn rustup_which(rustup_dir: &Path, name: &str, cwd: &Path) -> Option<PathBuf> {
    let rustup = rustup_dir.join("rustup");
    let run = |args: &[&str]| crate::contain::run_blocking(&rustup, args, cwd);
    let found = |s: String| {
        let p = PathBuf::from(s.trim());
        p.is_file().then_some(p)
    };
    // The toolchain of `cwd` first, then any installed toolchain that has the component.
    if let Some(p) = run(&["which", name]).and_then(found) {
        return Some(p);
    }
    let list = run(&["toolchain", "list"])?;
    list.lines()
        .filter_map(|l| l.split_whitespace().next())
        .find_map(|t| run(&["which", "--toolchain", t, name]).and_then(found))
}

/// The binary the project itself supplies for a server (a relative command, or one in a
/// project-local folder of `root` or `ws`), whether or not it may be used.
pub fn project_binary(spec: &ServerSpec, root: &Path, ws: &Path) -> Option<PathBuf> {
    for cmd in &spec.commands {
        let Some(prog) = cmd.first() else { continue };
        if prog.contains('/') {
            let p = root.join(prog);
            if p.is_file() && p.starts_with(ws) {
                return Some(p);
            }
            continue;
        }
        for base in [root, ws] {
            if let Some(found) =
                resolve_binary(base, LOCAL_DIRS, &[prog.as_str()]).filter(|p| p.starts_with(base))
            {
                return Some(found);
            }
        }
    }
    None
}

/// Resolve a server's binary for a root: when `trusted`, project-local folders of `root`, then
/// of `ws`, then `$PATH`; otherwise `$PATH` only (and absolute commands outside the workspace:
/// the project's own programs are not run). Commands in order. A rustup proxy is resolved
/// through `rustup which`.
pub fn resolve_command(
    spec: &ServerSpec,
    root: &Path,
    ws: &Path,
    trusted: bool,
) -> Option<(PathBuf, Vec<String>)> {
    let finish = |p: PathBuf, cmd: &Vec<String>| -> Option<(PathBuf, Vec<String>)> {
        let args = cmd[1..].to_vec();
        if is_rustup_proxy(&p) {
            let dir = p.parent()?.to_path_buf();
            let name = p.file_name()?.to_string_lossy().to_string();
            // For a project that is not trusted, rustup is asked from outside it: run in the
            // project, it honours the project's `rust-toolchain.toml` (`path = "tc"` names the
            // project's own `tc/bin/rust-analyzer`).
            let cwd = if trusted { root } else { Path::new("/") };
            return rustup_which(&dir, &name, cwd).map(|real| (real, args));
        }
        Some((p, args))
    };
    for cmd in &spec.commands {
        let Some(prog) = cmd.first() else { continue };
        if prog.contains('/') {
            let p = if Path::new(prog).is_absolute() {
                PathBuf::from(prog)
            } else {
                root.join(prog)
            };
            let inside = p
                .canonicalize()
                .unwrap_or_else(|_| p.clone())
                .starts_with(ws);
            if p.is_file() && (trusted || !inside) {
                return Some((p, cmd[1..].to_vec()));
            }
            continue;
        }
        if !trusted {
            continue;
        }
        for base in [root, ws] {
            for dir in LOCAL_DIRS {
                let p = base.join(dir).join(prog);
                if p.is_file()
                    && let Some(found) = resolve_binary(base, &[dir], &[prog.as_str()])
                {
                    return finish(found, cmd);
                }
            }
        }
    }
    for cmd in &spec.commands {
        let Some(prog) = cmd.first() else { continue };
        if prog.contains('/') {
            continue;
        }
        // A `$PATH` entry inside the workspace is the project's folder too.
        if let Some(found) = resolve_binary(ws, &[], &[prog.as_str()])
            .filter(|p| trusted || !p.canonicalize().is_ok_and(|c| c.starts_with(ws)))
            && let Some(r) = finish(found, cmd)
        {
            return Some(r);
        }
    }
    None
}

/// For a project that is not trusted, what a server loads must come from the host too: a server
/// whose spec says [`Untrusted::host_typescript`](crate::config::Untrusted::host_typescript)
/// (typescript-language-server prefers the workspace's own `node_modules/typescript` unless
/// `tsserver.path` is given) is given the TypeScript installed beside the server.
pub(crate) fn host_only(spec: Arc<ServerSpec>, bin: &Path, trusted: bool) -> Arc<ServerSpec> {
    if trusted
        || !spec.untrusted.host_typescript
        || spec.init_options.pointer("/tsserver/path").is_some()
    {
        return spec;
    }
    // `<modules>/.bin/typescript-language-server` → `<modules>/typescript-language-server/lib/cli.mjs`
    let Some(pkg) = bin
        .canonicalize()
        .ok()
        .and_then(|p| p.parent()?.parent().map(Path::to_path_buf))
    else {
        return spec;
    };
    let found = [
        pkg.join("node_modules/typescript/lib/tsserver.js"),
        pkg.join("../typescript/lib/tsserver.js"),
    ]
    .into_iter()
    .find(|p| p.is_file())
    .and_then(|p| p.canonicalize().ok());
    let Some(tsserver) = found else {
        return spec;
    };
    let mut spec = (*spec).clone();
    if !spec.init_options.is_object() {
        spec.init_options = serde_json::json!({});
    }
    match spec.init_options.get_mut("tsserver") {
        Some(serde_json::Value::Object(o)) => {
            o.insert("path".into(), serde_json::json!(tsserver));
        }
        _ => spec.init_options["tsserver"] = serde_json::json!({"path": tsserver}),
    }
    Arc::new(spec)
}
