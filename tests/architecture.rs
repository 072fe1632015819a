//! The architecture invariants of docs/ARCHITECTURE.md, checked against `cargo metadata` and the
//! sources — an ordinary test, so that breaking one fails CI.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

const FAMILIES: &[&str] = &[
    "agent-files",
    "agent-lsp",
    "agent-astgrep",
    "agent-dap",
    "agent-kernel",
    "agent-ask",
    "agent-vibe",
];
/// The floors a family may depend on: the registry floor, the process layer and the wire layer.
const FLOORS: &[&str] = &["agent-tier", "agent-proc", "agent-rpc"];
/// The dev-only test kit: allowed as a dev-dependency, nowhere else.
const TESTKIT: &str = "agent-testkit";
/// Crates that speak a protocol or parse code; the floor knows none of them.
const PROTOCOL_CRATES: &[&str] = &["lsp-types", "lsp-server", "tree-sitter", "ast-grep-core"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask sits in the workspace root")
        .to_path_buf()
}

fn metadata() -> Value {
    let out = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(root())
        .output()
        .expect("run cargo metadata");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("metadata is JSON")
}

fn package<'a>(meta: &'a Value, name: &str) -> &'a Value {
    meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("crate {name} is missing from the workspace"))
}

fn deps(pkg: &Value) -> Vec<(String, String)> {
    pkg["dependencies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["name"].as_str().unwrap().to_string(),
                d["kind"].as_str().unwrap_or("normal").to_string(),
            )
        })
        .collect()
}

#[test]
fn the_floor_depends_on_no_family_and_no_protocol() {
    let meta = metadata();
    for (dep, _) in deps(package(&meta, "agent-tier")) {
        assert!(!dep.starts_with("agent-"), "agent-tier depends on {dep}");
        assert!(
            !PROTOCOL_CRATES.contains(&dep.as_str()),
            "agent-tier depends on {dep}"
        );
    }
}

#[test]
fn no_family_crate_depends_on_another() {
    let meta = metadata();
    for fam in FAMILIES {
        for (dep, kind) in deps(package(&meta, fam)) {
            if dep.starts_with("agent-") && !(dep == TESTKIT && kind == "dev") {
                assert!(
                    FLOORS.contains(&dep.as_str()),
                    "{fam} depends on {dep} ({kind})"
                );
            }
        }
    }
}

#[test]
fn the_test_kit_is_a_dev_dependency_only() {
    let meta = metadata();
    let mut users = 0;
    for pkg in meta["packages"].as_array().unwrap() {
        let name = pkg["name"].as_str().unwrap();
        for (dep, kind) in deps(pkg) {
            if dep == TESTKIT {
                assert_eq!(kind, "dev", "{name} depends on the test kit as {kind}");
                users += 1;
            }
        }
    }
    assert!(users > 0, "no crate uses the test kit");
    // It sits on the floor only, and is never published.
    let kit = package(&meta, TESTKIT);
    for (dep, _) in deps(kit) {
        assert!(
            !dep.starts_with("agent-") || dep == "agent-tier",
            "the test kit depends on {dep}"
        );
    }
    assert_eq!(
        kit["publish"],
        serde_json::json!([]),
        "the test kit must not be published"
    );
}

#[test]
fn the_facade_holds_no_logic() {
    let meta = metadata();
    // Its library composes the floor and the families; its examples (the witness bench) may
    // use the test kit and a runtime as dev-dependencies.
    for (dep, kind) in deps(package(&meta, "agent-tools")) {
        assert!(
            dep == "agent-tier" || FAMILIES.contains(&dep.as_str()) || kind == "dev",
            "the facade depends on {dep} ({kind})"
        );
    }
    let src = std::fs::read_to_string(root().join("crates/agent-tools/src/lib.rs")).unwrap();
    for line in src.lines().map(str::trim) {
        let ok = line.is_empty()
            || line.starts_with("//")
            || line.starts_with("pub use ")
            || line.starts_with("#[cfg(");
        assert!(ok, "the facade holds more than re-exports: `{line}`");
    }
}

#[test]
fn every_crate_is_publishable_on_its_own() {
    let meta = metadata();
    // Every crate under crates/, whatever its room.
    let crates: Vec<&str> = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["manifest_path"].as_str().unwrap().contains("/crates/"))
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert!(crates.len() >= 10, "{crates:?}");
    for name in crates {
        let pkg = package(&meta, name);
        for field in ["version", "description", "license", "repository"] {
            assert!(pkg[field].is_string(), "{name} lacks `{field}`");
        }
        let manifest = PathBuf::from(pkg["manifest_path"].as_str().unwrap());
        let text = std::fs::read_to_string(&manifest).unwrap();
        assert!(
            text.lines().any(|l| l.starts_with("version = \""))
                && !text.lines().any(|l| l.starts_with("version.workspace")),
            "{name} must carry its own version"
        );
        assert!(
            text.contains("[lints]\nworkspace = true"),
            "{name} lacks `[lints] workspace = true`"
        );
        let dir = manifest.parent().unwrap();
        let entry = if dir.join("src/lib.rs").exists() {
            "src/lib.rs"
        } else {
            "src/main.rs"
        };
        let src = std::fs::read_to_string(dir.join(entry)).unwrap();
        assert!(
            src.starts_with("//! # "),
            "{name}/{entry} lacks a `//!` header"
        );
    }
}

/// The tool names each family registers: the literal returned by `fn name` in an `impl … Tool
/// for …` block of its sources.
fn tool_names(src: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut in_tool_impl = false;
    let mut lines = src.lines();
    while let Some(line) = lines.next() {
        let t = line.trim();
        if t.starts_with("impl") {
            in_tool_impl = t.contains("Tool for ");
        }
        if in_tool_impl
            && t.starts_with("fn name(&self) -> &str")
            && let Some(next) = lines.next()
        {
            let lit = next.trim();
            if lit.starts_with('"') && lit.ends_with('"') {
                names.push(lit.trim_matches('"').to_string());
            }
        }
    }
    names
}

/// Non-test source of a crate: every `src/**/*.rs`, each cut at its first `#[cfg(test)]`.
fn crate_sources(krate: &str) -> Vec<(PathBuf, String)> {
    fn walk(dir: &Path, out: &mut Vec<(PathBuf, String)>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs")
                && !p.to_string_lossy().ends_with("_tests.rs")
                && !p.ends_with("tests.rs")
            {
                let text = std::fs::read_to_string(&p).unwrap();
                let cut = text.find("#[cfg(test)]").unwrap_or(text.len());
                out.push((p, text[..cut].to_string()));
            }
        }
    }
    let mut out = Vec::new();
    walk(&root().join("crates").join(krate).join("src"), &mut out);
    out
}

/// Rooms talk through effects, not names: no family's logic names another family's tool as a
/// string literal (the wrapper selects by changed files, re-entrancy is seen through the call
/// context). Descriptions may mention other tools in prose (`` `vibe_wait` ``), which is not a
/// bare literal.
#[test]
fn no_tool_name_appears_in_another_crates_logic() {
    let owned: Vec<(&str, Vec<String>)> = FAMILIES
        .iter()
        .map(|f| {
            let names = crate_sources(f)
                .iter()
                .flat_map(|(_, s)| tool_names(s))
                .collect();
            (*f, names)
        })
        .collect();
    let all: Vec<&String> = owned.iter().flat_map(|(_, n)| n).collect();
    assert!(all.len() >= 17, "found only {all:?}");
    for (fam, names) in &owned {
        for (path, src) in crate_sources(fam) {
            for name in all.iter().filter(|n| !names.contains(n)) {
                assert!(
                    !src.contains(&format!("\"{name}\"")),
                    "{} names the tool `{name}` of another family",
                    path.display()
                );
            }
        }
    }
}

/// The wire layer knows no family (and no tool), and it is the only Content-Length framing: no
/// other crate reads or writes the header itself.
#[test]
fn the_wire_layer_is_the_only_framing_and_depends_on_no_agent_crate() {
    let meta = metadata();
    for (dep, kind) in deps(package(&meta, "agent-rpc")) {
        assert!(
            !dep.starts_with("agent-"),
            "agent-rpc depends on {dep} ({kind})"
        );
    }
    let framing = |src: &str| {
        let s = src.to_ascii_lowercase();
        s.contains("\"content-length") || s.contains("content-length: {")
    };
    let mut offenders = Vec::new();
    for krate in FAMILIES
        .iter()
        .chain(&["agent-tier", "agent-proc", "agent-tools-cli"])
    {
        for (path, src) in crate_sources(krate) {
            if framing(&src) {
                offenders.push(path.display().to_string());
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "only agent-rpc may frame messages with Content-Length; these do it themselves: {offenders:#?}"
    );
    assert!(
        crate_sources("agent-rpc").iter().any(|(_, s)| framing(s)),
        "the check no longer sees agent-rpc's own framing"
    );
}

/// One typed call in the workspace (issue 43): a family sends a typed request through
/// `Connection::call_within`/`send` and maps agent-rpc's `CallError` to its own error; none
/// writes a request's params or reads its reply and outcome itself (`start_request`,
/// `request::reply`, `request::params`, `.outcome(`), which is how the LSP client and the DAP
/// transport each had a copy of the typed call.
#[test]
fn the_typed_call_is_agent_rpcs_alone() {
    let spellings = [
        "start_request(",
        "request::reply::<",
        "request::params::<",
        ".outcome(",
    ];
    let mut offenders = Vec::new();
    for krate in FAMILIES
        .iter()
        .chain(&["agent-tier", "agent-proc", "agent-tools-cli"])
    {
        for (path, src) in crate_sources(krate) {
            for s in spellings.iter().filter(|s| src.contains(*s)) {
                offenders.push(format!("{}: {s}", path.display()));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "only agent-rpc's Connection::call_within/send may write a typed request or read its reply: {offenders:#?}"
    );
    let rpc: String = crate_sources("agent-rpc")
        .into_iter()
        .map(|(_, s)| s)
        .collect();
    for s in spellings {
        assert!(
            rpc.contains(s),
            "the check no longer sees agent-rpc's own `{s}`"
        );
    }
}

/// Services wired once (issue 43): a family takes another family's witness or locator when the
/// registry is sealed (`Registry::on_seal`), never from each call's registry, which is how the
/// lsp family re-supplied its witness on every call and the dap family kept the first call's
/// locator.
#[test]
fn services_are_wired_at_the_seal_not_per_call() {
    let per_call = ["cx.registry().witness()", "cx.registry().locator()"];
    let mut offenders = Vec::new();
    let mut wired = 0;
    for krate in FAMILIES {
        for (path, src) in crate_sources(krate) {
            for s in per_call.iter().filter(|s| src.contains(*s)) {
                offenders.push(format!("{}: {s}", path.display()));
            }
            wired += src.matches(".on_seal(").count();
        }
    }
    assert!(
        offenders.is_empty(),
        "take services in Registry::on_seal, not per call: {offenders:#?}"
    );
    assert!(
        wired >= 2,
        "the check no longer sees the lsp and dap families' wiring"
    );
}

/// The run carries no family's switch (issue 43): `RunInfo` is the root and the sandbox prefix
/// that every family needs; a debug conversation, vibe mode or an ask space is in the family's
/// own config.
#[test]
fn the_run_carries_no_family_switch() {
    let src =
        std::fs::read_to_string(root().join("crates/agent-tier/src/registry/context.rs")).unwrap();
    let start = src
        .find("pub struct RunInfo {")
        .expect("RunInfo is declared in registry/context.rs");
    let body = &src[start..start + src[start..].find("\n}").unwrap()];
    let fields: Vec<&str> = body
        .lines()
        .skip(1)
        .map(str::trim)
        .filter(|l| l.starts_with("pub "))
        .filter_map(|l| l.strip_prefix("pub ")?.split(':').next())
        .collect();
    assert_eq!(fields, ["root", "sandbox_prefix"], "RunInfo's fields");
}

/// Each module imports what it uses (issue 43): no `use super::*` outside tests, which made
/// agent-lsp's `tools.rs` a hub every operation reached through.
#[test]
fn no_module_imports_its_parent_whole() {
    let mut offenders = Vec::new();
    let mut seen = 0;
    for entry in std::fs::read_dir(root().join("crates")).unwrap().flatten() {
        let src = entry.path().join("src");
        if !src.is_dir() {
            continue;
        }
        let mut files = Vec::new();
        rs_files(&src, &mut files);
        for path in files {
            if path.file_name().is_some_and(|n| n == "tests.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            // Test modules may take their parent whole.
            let code = &text[..text.find("#[cfg(test)]").unwrap_or(text.len())];
            seen += 1;
            if code.lines().any(|l| l.trim() == "use super::*;") {
                offenders.push(path.display().to_string());
            }
        }
    }
    assert!(seen > 100, "the check read only {seen} files");
    assert!(
        offenders.is_empty(),
        "import what the module uses, not its parent whole: {offenders:#?}"
    );
}

/// An enum's name is derived, not written out (issue 43): no `fn …(self) -> &'static str` is a
/// `match self` whose every arm returns the variant's own name in snake case — `strum`'s
/// `IntoStaticStr` says that once, beside serde's `rename_all`. A table that maps to other words
/// (a DAP request's method, a description) is not such a table.
#[test]
fn no_enum_name_table_is_written_by_hand() {
    fn snake(variant: &str) -> String {
        let mut out = String::new();
        for (i, c) in variant.chars().enumerate() {
            if c.is_ascii_uppercase() && i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        }
        out
    }
    let mut offenders = Vec::new();
    let mut tables = 0;
    for entry in std::fs::read_dir(root().join("crates")).unwrap().flatten() {
        let mut files = Vec::new();
        let src = entry.path().join("src");
        if src.is_dir() {
            rs_files(&src, &mut files);
        }
        for path in files {
            let text = std::fs::read_to_string(&path).unwrap();
            let lines: Vec<&str> = text.lines().collect();
            for (i, l) in lines.iter().enumerate() {
                if !(l.contains("(self) -> &'static str {")
                    && lines.get(i + 1).is_some_and(|n| n.trim() == "match self {"))
                {
                    continue;
                }
                tables += 1;
                let arms: Vec<(&str, &str)> = lines[i + 2..]
                    .iter()
                    .map(|a| a.trim())
                    .take_while(|a| *a != "}")
                    .filter_map(|a| {
                        let (lhs, rhs) = a.split_once(" => ")?;
                        let variant = lhs.rsplit("::").next()?;
                        Some((
                            variant,
                            rhs.strip_suffix(',')?
                                .strip_prefix('"')?
                                .strip_suffix('"')?,
                        ))
                    })
                    .collect();
                if arms.len() > 1 && arms.iter().all(|(v, name)| snake(v) == *name) {
                    offenders.push(format!("{}:{}", path.display(), i + 1));
                }
            }
        }
    }
    assert!(
        tables > 0,
        "the check found no `match self` name function at all"
    );
    assert!(
        offenders.is_empty(),
        "derive the names (`strum::IntoStaticStr` with `serialize_all`): {offenders:#?}"
    );
}

/// agent-lsp's operations are free functions over its state, each in the module named for it
/// (issue 43): the state's own `impl` is its one block (`state.rs`: the root, a confined read, the
/// ledger, the witness), so following a call never means finding which of many files extends
/// the type.
#[test]
fn agent_lsp_state_is_extended_in_one_place() {
    let mut files = Vec::new();
    rs_files(&root().join("crates/agent-lsp/src"), &mut files);
    assert!(files.len() > 40, "read only {} files", files.len());
    let mut blocks = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        for (n, l) in text.lines().enumerate() {
            if l.trim_start().starts_with("impl State") {
                blocks.push(format!("{}:{}", path.display(), n + 1));
            }
        }
    }
    assert_eq!(
        blocks.len(),
        1,
        "one `impl State`, in state.rs; an operation is a free function taking `st: &State`: {blocks:#?}"
    );
    assert!(blocks[0].contains("agent-lsp/src/state.rs:"), "{blocks:?}");
}

/// A new server is one entry (issue 43): agent-lsp's code never matches a server's id — what a
/// server needs is a field of its spec (`ServerSpec::untrusted`, `open_settle_ms`), set in the
/// table (`config/builtin.rs`) or a config file; the checkers' table (`checker.rs`) names the
/// server binaries that run each checker. Comments and tests may name servers.
#[test]
fn no_server_quirk_is_matched_by_its_id() {
    let ids = [
        "\"rust-analyzer\"",
        "\"typescript-language-server\"",
        "\"gopls\"",
        "\"clangd\"",
        "\"pylsp\"",
        "\"basedpyright\"",
        "\"ty\"",
    ];
    let mut offenders = Vec::new();
    let mut table = 0;
    for (path, src) in crate_sources("agent-lsp") {
        let code: String = src
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        let hits = ids.iter().filter(|id| code.contains(*id)).count();
        if path.ends_with("config/builtin.rs") {
            table += hits;
        } else if hits > 0 && !path.ends_with("src/checker.rs") {
            offenders.push(path.display().to_string());
        }
    }
    assert!(table >= 5, "the check no longer sees the server table");
    assert!(
        offenders.is_empty(),
        "a server's quirk belongs in its spec, not in code matching its id: {offenders:#?}"
    );
}

#[test]
fn the_process_layer_depends_on_no_agent_crate_and_no_protocol() {
    let meta = metadata();
    for (dep, kind) in deps(package(&meta, "agent-proc")) {
        assert!(
            !dep.starts_with("agent-"),
            "agent-proc depends on {dep} ({kind})"
        );
        assert!(
            !PROTOCOL_CRATES.contains(&dep.as_str()),
            "agent-proc depends on {dep}"
        );
    }
}

/// The ways to start a process without agent-proc, in source with whitespace removed.
fn spawns(code: &str) -> Vec<&'static str> {
    let flat: String = code.chars().filter(|c| !c.is_whitespace()).collect();
    let mut found: Vec<&'static str> = [
        "process::Command",
        "CommandExt",
        "libc::fork",
        "posix_spawn",
        "libc::exec",
    ]
    .into_iter()
    .filter(|needle| flat.contains(needle))
    .collect();
    // `use std::process::{Child, Command, Stdio}` and the like.
    for (i, _) in flat.match_indices("process::{") {
        let end = flat[i..].find('}').map_or(flat.len(), |j| i + j);
        let group = flat[i..end].trim_start_matches("process::{");
        if group
            .split(',')
            .any(|item| item == "Command" || item.starts_with("Commandas"))
        {
            found.push("process::{Command}");
        }
    }
    found
}

/// agent-proc is the only code that starts a process: no other crate's library or binary source
/// (unit tests, tests/, examples, the dev-only test kit and xtask aside) names `std::process::Command`,
/// `tokio::process::Command`, `CommandExt`, `fork` or `exec`. This covers the floor too:
/// agent-tier spawns nothing.
#[test]
fn only_the_process_layer_spawns() {
    let meta = metadata();
    let crates: Vec<&str> = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["manifest_path"].as_str().unwrap().contains("/crates/"))
        .map(|p| p["name"].as_str().unwrap())
        .filter(|n| *n != "agent-proc")
        // The test kit is test code (a dev-dependency only): it starts the binary under test.
        .filter(|n| *n != TESTKIT)
        .collect();
    assert!(
        crates.contains(&"agent-tier") && crates.len() >= 10,
        "{crates:?}"
    );
    let mut offenders = Vec::new();
    for krate in crates {
        for (path, src) in crate_sources(krate) {
            for how in spawns(&src) {
                offenders.push(format!("{} ({how})", path.display()));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "only agent-proc may start a process; these do it themselves: {offenders:#?}"
    );
    assert!(
        !spawns(
            &crate_sources("agent-proc")
                .into_iter()
                .map(|(_, s)| s)
                .collect::<String>()
        )
        .is_empty(),
        "the check no longer sees agent-proc's own spawning"
    );
}

#[test]
fn the_spawn_check_sees_every_spelling() {
    let cases = [
        ("let c = std::process::Command::new(\"x\");", true),
        ("use tokio::process::{Child, Command};", true),
        ("use std::process::{\n    Command as C,\n};", true),
        ("use std::os::unix::process::CommandExt;", true),
        ("unsafe { libc::fork() }", true),
        ("use std::process::{ExitCode, Stdio};", false),
        (
            "agent_proc::Command::new(&launcher, \"x\").spawn().await",
            false,
        ),
    ];
    for (code, bad) in cases {
        assert_eq!(!spawns(code).is_empty(), bad, "{code}");
    }
}

/// Invariant 8: a tool is registered by the code that attaches its resource. Every
/// `.register(` in a family's library sits inside a function named `attach…`, the one entry
/// point that also creates the resource the tool is bound to, so the registry never lists a tool
/// whose resource is missing.
#[test]
fn tools_are_registered_only_where_their_resource_is_attached() {
    let mut found = 0;
    for fam in FAMILIES {
        for (path, src) in crate_sources(fam) {
            let mut current_fn = String::new();
            for line in src.lines() {
                let t = line.trim_start();
                // The function a line belongs to: the last `fn` opened at the item level.
                if !line.starts_with(' ')
                    && let Some(rest) = t
                        .strip_prefix("pub fn ")
                        .or_else(|| t.strip_prefix("pub(crate) fn "))
                        .or_else(|| t.strip_prefix("fn "))
                {
                    current_fn = rest.split(['(', '<']).next().unwrap_or("").to_string();
                }
                if t.contains(".register(") && !t.starts_with("//") {
                    found += 1;
                    assert!(
                        current_fn.starts_with("attach"),
                        "{}: a tool is registered in `{current_fn}`, not in the family's attach: `{t}`",
                        path.display()
                    );
                }
            }
        }
    }
    assert!(found >= FAMILIES.len(), "found only {found} registrations");
}

/// Invariant 5: protocol types stay inside the crate that speaks them. The crates that define a
/// protocol's or a parser's types are dependencies of that one crate only: MCP (`rmcp`) of the
/// host, the parsers (`tree-sitter*`, `ast-grep-core`) of agent-astgrep. LSP and DAP have no
/// type crates here (each family's own client reads JSON); the rendering rule — results are
/// text plus the fields a model needs — is held by each family's snapshots of its results.
#[test]
fn protocol_crates_stay_in_the_crate_that_speaks_them() {
    let meta = metadata();
    let owner = |dep: &str| -> Option<&str> {
        if dep == "rmcp" {
            Some("agent-tools-cli")
        } else if dep.starts_with("tree-sitter") || dep.starts_with("ast-grep") {
            Some("agent-astgrep")
        } else if PROTOCOL_CRATES.contains(&dep) {
            Some("nobody")
        } else {
            None
        }
    };
    let mut seen = 0;
    for pkg in meta["packages"].as_array().unwrap() {
        let name = pkg["name"].as_str().unwrap();
        for (dep, kind) in deps(pkg) {
            if kind == "dev" {
                continue;
            }
            if let Some(o) = owner(&dep) {
                seen += 1;
                assert_eq!(o, name, "{name} depends on {dep}, which only {o} may use");
            }
        }
    }
    assert!(seen >= 3, "the protocol crates were not found ({seen})");
}

// ---- no module cycles -------------------------------------------------------------------------

/// The modules a crate root declares (`mod x;`, `pub mod x;`, cfg-gated or not).
fn declared(root: &str) -> BTreeSet<String> {
    root.lines()
        .map(str::trim)
        .filter_map(|l| {
            let l = l.strip_prefix("pub ").unwrap_or(l);
            l.strip_prefix("mod ")?
                .strip_suffix(';')
                .map(str::to_string)
        })
        .collect()
}

/// The modules of `mods` that `src` names through `crate::` in code (a doc link to a module is
/// no import).
fn imports(src: &str, mods: &BTreeSet<String>) -> BTreeSet<String> {
    let flat: String = src
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .flat_map(str::chars)
        .filter(|c| !c.is_whitespace())
        .collect();
    let mut out = BTreeSet::new();
    for (i, _) in flat.match_indices("crate::") {
        let rest = &flat[i + "crate::".len()..];
        let names: Vec<&str> = match rest.strip_prefix('{') {
            Some(group) => group
                .split('}')
                .next()
                .unwrap_or_default()
                .split(',')
                .collect(),
            None => vec![rest],
        };
        for name in names {
            let name: String = name
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if mods.contains(&name) {
                out.insert(name);
            }
        }
    }
    out
}

/// A cycle in `graph`, if there is one, as the path around it.
fn cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut c = path[at..].to_vec();
            c.push(node.to_string());
            return Some(c);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(c) = visit(next, graph, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|n| visit(n, graph, &mut Vec::new(), &mut done))
}

/// Every `.rs` file under `dir`, at any depth.
fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            rs_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The files of top-level module `m` of a crate: `m.rs` and everything under `m/`.
fn module_files(src: &Path, m: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let file = src.join(format!("{m}.rs"));
    if file.is_file() {
        out.push(file);
    }
    rs_files(&src.join(m), &mut out);
    out
}

/// No two modules of a crate import each other, directly or around a loop (each top-level
/// module with its child files counts as one room; unit tests aside); and no file of the host is compiled as a
/// module of both its library and its binary.
#[test]
fn no_module_imports_one_that_imports_it_back() {
    let meta = metadata();
    let mut checked = 0;
    for pkg in meta["packages"].as_array().unwrap() {
        let manifest = PathBuf::from(pkg["manifest_path"].as_str().unwrap());
        if !manifest.to_string_lossy().contains("/crates/") {
            continue;
        }
        let src = manifest.parent().unwrap().join("src");
        let roots: Vec<&str> = ["lib.rs", "main.rs"]
            .into_iter()
            .filter(|r| src.join(r).is_file())
            .collect();
        let mut decl = Vec::new();
        for r in &roots {
            let mods = declared(&std::fs::read_to_string(src.join(r)).unwrap());
            let graph: BTreeMap<String, BTreeSet<String>> = mods
                .iter()
                .map(|m| {
                    let mut deps = BTreeSet::new();
                    // Unit tests aside (a `#[cfg(test)]` tail, a `_tests.rs` file): a test may
                    // drive a neighbour without the code depending on it.
                    for f in module_files(&src, m) {
                        if f.to_string_lossy().ends_with("_tests.rs") || f.ends_with("tests.rs") {
                            continue;
                        }
                        let text = std::fs::read_to_string(&f).unwrap();
                        let code = &text[..text.find("#[cfg(test)]").unwrap_or(text.len())];
                        deps.extend(imports(code, &mods));
                    }
                    deps.remove(m);
                    (m.clone(), deps)
                })
                .collect();
            if let Some(c) = cycle(&graph) {
                panic!(
                    "{} {r}: modules import each other: {}",
                    pkg["name"].as_str().unwrap(),
                    c.join(" → ")
                );
            }
            checked += 1;
            decl.push(mods);
        }
        if let [lib, bin] = decl.as_slice() {
            let both: Vec<_> = lib.intersection(bin).collect();
            assert!(
                both.is_empty(),
                "{}: modules of both the library and the binary: {both:?}",
                pkg["name"].as_str().unwrap()
            );
        }
    }
    assert!(checked >= 10, "only {checked} crate roots checked");
}

#[test]
fn the_cycle_check_sees_imports_and_cycles() {
    let mods: BTreeSet<String> = ["a", "b", "c"].map(String::from).into();
    assert_eq!(
        imports(
            "/// see [`crate::b`]\nuse crate::{a::X,\n  b};\nlet y = crate::c::f();",
            &mods
        ),
        mods
    );
    let g = |edges: &[(&str, &str)]| {
        let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (from, to) in edges {
            g.entry(from.to_string())
                .or_default()
                .insert(to.to_string());
        }
        g
    };
    assert!(cycle(&g(&[("a", "b"), ("b", "c")])).is_none());
    assert_eq!(
        cycle(&g(&[("a", "b"), ("b", "a")])).unwrap(),
        ["a", "b", "a"]
    );
    assert!(cycle(&g(&[("a", "b"), ("b", "c"), ("c", "a")])).is_some());
}

// ---- every file is a room ---------------------------------------------------------------------

/// A crate's source files as module paths (`ops/render.rs` → `ops::render`, `ops/mod.rs` →
/// `ops`, `lib.rs` → ``), unit-test files aside.
fn file_modules(src: &Path) -> BTreeMap<String, PathBuf> {
    let mut files = Vec::new();
    rs_files(src, &mut files);
    files
        .into_iter()
        .filter(|f| !f.to_string_lossy().ends_with("_tests.rs") && !f.ends_with("tests.rs"))
        .map(|f| {
            let rel = f.strip_prefix(src).unwrap().with_extension("");
            let mut parts: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if matches!(
                parts.last().map(String::as_str),
                Some("mod" | "lib" | "main")
            ) {
                parts.pop();
            }
            (parts.join("::"), f)
        })
        .collect()
}

/// The module paths `code` (of the file whose module is `me`) names through `crate::`,
/// `super::` or `self::`, resolved to the longest known module (`crate::ops::stop::snapshot` →
/// `ops::stop`).
fn file_imports(code: &str, me: &str, known: &BTreeMap<String, PathBuf>) -> BTreeSet<String> {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    // Whitespace goes, except one space between two words (`use super` stays two words, so
    // `super::` is not read as part of `usesuper::`).
    let text: String = code
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join(" ");
    let mut flat = String::new();
    let mut pending_space = false;
    for c in text.chars() {
        if c.is_whitespace() {
            pending_space = true;
            continue;
        }
        if pending_space && ident(c) && flat.chars().last().is_some_and(ident) {
            flat.push(' ');
        }
        pending_space = false;
        flat.push(c);
    }
    let mine: Vec<&str> = me.split("::").filter(|s| !s.is_empty()).collect();
    // `super::` is the parent module (for `x.rs` and `x/mod.rs` alike); `self::` the module.
    let parent: Vec<&str> = mine[..mine.len().saturating_sub(1)].to_vec();
    let self_base: Vec<&str> = mine.clone();
    let mut out = BTreeSet::new();
    for (prefix, base) in [
        ("crate::", Vec::new()),
        ("super::", parent.clone()),
        ("self::", self_base),
    ] {
        for (i, _) in flat.match_indices(prefix) {
            if i > 0 && flat[..i].chars().last().is_some_and(ident) {
                continue; // `xsuper::` is another name
            }
            let rest = &flat[i + prefix.len()..];
            let paths: Vec<String> = match rest.strip_prefix('{') {
                Some(group) => {
                    let inner = group.split('}').next().unwrap_or_default();
                    inner.split(',').map(str::to_string).collect()
                }
                None => vec![rest.to_string()],
            };
            for p in paths {
                let segs: Vec<String> = p
                    .split("::")
                    .map(|s| s.chars().take_while(|c| ident(*c)).collect::<String>())
                    .take_while(|s| !s.is_empty())
                    .collect();
                let mut full: Vec<String> = base.iter().map(|s| s.to_string()).collect();
                full.extend(segs);
                // the longest prefix that is a module file
                for n in (1..=full.len()).rev() {
                    let m = full[..n].join("::");
                    if known.contains_key(&m) {
                        out.insert(m);
                        break;
                    }
                }
            }
        }
    }
    out
}

/// No two files of a crate import each other, directly or around a loop: every file is a room
/// (a module and the modules nested in it aside — a parent and its children are one module
/// tree). Rendering that sends requests, or a helper that calls back into its caller, fails here.
#[test]
fn no_file_imports_one_that_imports_it_back() {
    let meta = metadata();
    let mut checked = 0;
    let nested = |a: &str, b: &str| {
        a.is_empty()
            || b.is_empty()
            || a.starts_with(&format!("{b}::"))
            || b.starts_with(&format!("{a}::"))
    };
    let mut found = Vec::new();
    for pkg in meta["packages"].as_array().unwrap() {
        let manifest = PathBuf::from(pkg["manifest_path"].as_str().unwrap());
        if !manifest.to_string_lossy().contains("/crates/") {
            continue;
        }
        let src = manifest.parent().unwrap().join("src");
        let known = file_modules(&src);
        let graph: BTreeMap<String, BTreeSet<String>> = known
            .iter()
            .map(|(m, f)| {
                let text = std::fs::read_to_string(f).unwrap();
                let code = &text[..text.find("#[cfg(test)]").unwrap_or(text.len())];
                let deps = file_imports(code, m, &known)
                    .into_iter()
                    .filter(|d| !nested(m, d))
                    .collect();
                (m.clone(), deps)
            })
            .collect();
        if let Some(c) = cycle(&graph) {
            found.push(format!(
                "{}: {}",
                pkg["name"].as_str().unwrap(),
                c.join(" → ")
            ));
        }
        checked += 1;
    }
    assert!(
        found.is_empty(),
        "files import each other:\n{}",
        found.join("\n")
    );
    assert!(checked >= 10, "only {checked} crates checked");
}

#[test]
fn the_file_check_sees_super_crate_and_self_paths() {
    let known: BTreeMap<String, PathBuf> = ["ops", "ops::render", "ops::stop", "state"]
        .map(|m| (m.to_string(), PathBuf::new()))
        .into();
    assert_eq!(
        file_imports(
            "use super::stop::snapshot;\nuse crate::{state::lock, ops::render::tail};\n// crate::nope",
            "ops::render",
            &known
        ),
        ["ops::render", "ops::stop", "state"]
            .map(String::from)
            .into()
    );
    // The cycle this check was written for: rendering that took a stop snapshot (which sends
    // requests), while the snapshot renders through it.
    let render = file_imports("super::stop::snapshot(sup, s).await", "ops::render", &known);
    let stop = file_imports("use super::render::{truncate, tail};", "ops::stop", &known);
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("ops::render".to_string(), render),
        ("ops::stop".to_string(), stop),
    ]
    .into();
    assert!(cycle(&graph).is_some());
}

/// The accessor chains that turn a peer's missing or mistyped field into a made-up value: an
/// empty or `?` string, a zero, an empty default. Each returns the offending chain.
fn silent_defaults(line: &str) -> Option<&'static str> {
    const READS: &[&str] = &[
        "as_str)",
        "as_str()",
        "as_i64)",
        "as_i64()",
        "as_u64)",
        "as_u64()",
        "as_f64)",
        "as_f64()",
        "as_array)",
        "as_array()",
        "as_object)",
        "as_object()",
    ];
    const DEFAULTS: &[&str] = &[
        ".unwrap_or(\"\")",
        ".unwrap_or(\"?\")",
        ".unwrap_or(0)",
        ".unwrap_or(0.0)",
        ".unwrap_or(-1)",
        ".unwrap_or_default()",
        ".cloned().unwrap_or_default()",
    ];
    let code = line.split("//").next().unwrap_or(line);
    for read in READS {
        if let Some(at) = code.find(read)
            && !code[..at].ends_with("String::")
        {
            let rest = &code[at + read.len()..];
            for d in DEFAULTS {
                if rest.starts_with(d) {
                    return Some(d);
                }
            }
        }
    }
    if code.contains("json!({\"type\": \"object\"})") && code.contains("unwrap_or") {
        return Some("a schema replaced by {\"type\": \"object\"}");
    }
    None
}

/// No library code defaults a missing protocol field silently: a peer's message is read through
/// a declared type (agent-rpc's `Request`/`Notification`), where a field that may be absent is
/// an `Option` and a field that must be there fails as `Malformed`, naming it.
#[test]
fn no_library_code_defaults_a_missing_protocol_field() {
    let mut found = Vec::new();
    let crates = FAMILIES
        .iter()
        .copied()
        .chain(["agent-rpc", "agent-tier", "agent-tools-cli"]);
    for krate in crates {
        for (path, src) in crate_sources(krate) {
            for (n, line) in src.lines().enumerate() {
                if let Some(what) = silent_defaults(line) {
                    let rel = path
                        .strip_prefix(root())
                        .unwrap_or(&path)
                        .display()
                        .to_string();
                    found.push(format!("{rel}:{}: {what}: {}", n + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "a peer's field read with a made-up default (declare it in a type instead):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_default_check_sees_every_spelling() {
    let cases = [
        (
            "let id = v.get(\"id\").and_then(Value::as_i64).unwrap_or(0);",
            true,
        ),
        ("let n = f[\"name\"].as_str().unwrap_or(\"?\");", true),
        (
            "let s = v.get(\"source\").and_then(Value::as_str).unwrap_or(\"\");",
            true,
        ),
        (
            "let l = v[\"items\"].as_array().cloned().unwrap_or_default();",
            true,
        ),
        (
            "let s = schema.unwrap_or_else(|_| json!({\"type\": \"object\"}));",
            true,
        ),
        ("let n = frame.line.unwrap_or(0); // shown as `?`", false),
        ("let s = opt.as_deref().unwrap_or(\"\");", false),
        (
            "let id = reply.id.ok_or(Malformed::missing(\"id\"))?;",
            false,
        ),
        (
            "let a = args.get(1).map(String::as_str).unwrap_or(\"\");",
            false,
        ),
    ];
    for (code, bad) in cases {
        assert_eq!(silent_defaults(code).is_some(), bad, "{code}");
    }
}
