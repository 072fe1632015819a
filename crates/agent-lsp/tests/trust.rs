//! Issue 11 item 2: a read-tier call never runs code the repository supplies. A project's own
//! `.agent-tools/lsp.json` and binaries inside the root (`node_modules/.bin`, `.venv/bin`) are used
//! only when the user's own config trusts the project; `diagnostics "*"` (which runs the
//! project's build) is an exec-tier call: refused on the plan and read-only surfaces, asked about
//! under an exec approval policy, and launched through the sandbox prefix. Against pyright.
#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod common;
use agent_tier::{ApprovalPolicy, Registry, RunInfo, Surface, Tier};
use common::*;
use serde_json::json;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

fn exe(path: &Path, body: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, body).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A registry on `root` reading the config files, with `user` as the user's own file.
fn attach(root: &Path, user: &Path, prefix: Vec<String>) -> Registry {
    attach_with(root, user, prefix, config("python", "pyright"))
}

fn attach_with(
    root: &Path,
    user: &Path,
    prefix: Vec<String>,
    mut cfg: agent_lsp::LspConfig,
) -> Registry {
    let reg = Registry::new(RunInfo {
        root: root.to_path_buf(),
        sandbox_prefix: prefix,
    });
    cfg.skip_config_files = false;
    cfg.trust_project = false;
    cfg.user_config = Some(user.to_path_buf());
    agent_lsp::attach(&reg, cfg);
    reg
}

const HOVER: &str =
    r#"{"operation": "hover", "file": "main.py", "line": 4, "symbol": "make_greeter"}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn project_supplied_programs_run_only_when_the_user_trusts_the_project() {
    require("pyright-langserver");
    let fx = fixture("python", config("python", "pyright"));
    let home = tempfile::tempdir().unwrap();
    let user = home.path().join("lsp.json");
    std::fs::write(&user, "{}").unwrap();
    let ran_config = fx.root.join("ran-config");
    let ran_local = fx.root.join("ran-local");
    // The project's config names a shell command; its node_modules/.bin holds a wrapper. Both
    // leave a mark, then start the real server.
    std::fs::create_dir_all(fx.root.join(".agent-tools")).unwrap();
    std::fs::write(
        fx.root.join(".agent-tools/lsp.json"),
        json!({"servers": {"pyright": {"commands": [["sh", "-c",
            format!("touch '{}'; exec pyright-langserver --stdio", ran_config.display())]]}}})
        .to_string(),
    )
    .unwrap();
    let real = std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .map(|d| d.join("pyright-langserver"))
        .find(|p| p.is_file())
        .unwrap();
    exe(
        &fx.root.join("node_modules/.bin/pyright-langserver"),
        &format!(
            "#!/bin/sh\ntouch '{}'\nexec '{}' \"$@\"\n",
            ran_local.display(),
            real.display()
        ),
    );

    // Not trusted: a read-only hover answers with the server from $PATH and runs neither.
    let reg = attach(&fx.root, &user, Vec::new());
    let hover: serde_json::Value = serde_json::from_str(HOVER).unwrap();
    let out = reg.call("lsp", hover.clone(), Surface::ReadOnly).await;
    assert!(!out.is_error, "{}", out.text);
    assert!(out.text.contains("def make_greeter"), "{}", out.text);
    assert!(!ran_config.exists(), "the project's command ran");
    assert!(!ran_local.exists(), "the project's node_modules/.bin ran");
    let out = reg
        .call("lsp", json!({"operation": "status"}), Surface::ReadOnly)
        .await;
    let text = fx.red(&out.text);
    assert!(
        text.contains("ignored because this project is not trusted:\n- server `pyright` of <root>/.agent-tools/lsp.json (its commands, environment and settings)\n- node_modules/.bin/pyright-langserver for pyright"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "add \"<root>\" to `trusted_projects` in your own {}",
            user.display()
        )),
        "{text}"
    );
    assert!(!text.contains("binary <root>/node_modules"), "{text}");
    drop(reg);

    // A project file cannot trust itself.
    std::fs::write(
        fx.root.join(".agent-tools/lsp.json"),
        json!({"trusted_projects": [fx.root],
               "servers": {"pyright": {"commands": [["sh", "-c",
            format!("touch '{}'; exec pyright-langserver --stdio", ran_config.display())]]}}})
        .to_string(),
    )
    .unwrap();
    let reg = attach(&fx.root, &user, Vec::new());
    let out = reg.call("lsp", hover.clone(), Surface::ReadOnly).await;
    assert!(!out.is_error, "{}", out.text);
    assert!(!ran_config.exists(), "the project trusted itself");
    let out = reg
        .call("lsp", json!({"operation": "status"}), Surface::Full)
        .await;
    assert!(
        out.text.contains("a project cannot trust itself"),
        "{}",
        out.text
    );
    drop(reg);

    // Trusted in the user's own file: the project's command is the server.
    std::fs::write(&user, json!({"trusted_projects": [fx.root]}).to_string()).unwrap();
    let reg = attach(&fx.root, &user, Vec::new());
    let out = reg.call("lsp", hover.clone(), Surface::ReadOnly).await;
    assert!(!out.is_error, "{}", out.text);
    assert!(
        ran_config.exists(),
        "a trusted project's command did not run"
    );
    drop(reg);

    // Trusted, without the config file: the project's node_modules/.bin is preferred.
    std::fs::remove_file(fx.root.join(".agent-tools/lsp.json")).unwrap();
    let reg = attach(&fx.root, &user, Vec::new());
    let out = reg.call("lsp", hover, Surface::ReadOnly).await;
    assert!(!out.is_error, "{}", out.text);
    assert!(
        ran_local.exists(),
        "a trusted project's own binary was not used"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_project_checker_is_an_exec_call_launched_through_the_sandbox() {
    require("pyright");
    let fx = fixture("python", config("python", "pyright"));
    std::fs::write(fx.root.join("bad.py"), "value: int = \"text\"\n").unwrap();
    let all = json!({"operation": "diagnostics", "file": "*"});

    // Refused on the surfaces that allow read-tier calls only, saying why and what to do.
    for surface in [Surface::Plan, Surface::ReadOnly] {
        let out = fx.reg.call("lsp", all.clone(), surface).await;
        assert!(out.is_error, "{surface}: {}", out.text);
        assert!(
            out.text.starts_with("this `lsp` call is exec-tier: `diagnostics` with `\"*\"` runs the project's own code"),
            "{}",
            out.text
        );
        assert!(
            out.text.contains("ask `diagnostics` with a `file` instead"),
            "{}",
            out.text
        );
    }
    // Per-file diagnostics stay a read call.
    let out = fx
        .reg
        .call(
            "lsp",
            json!({"operation": "diagnostics", "file": "bad.py"}),
            Surface::ReadOnly,
        )
        .await;
    assert!(!out.is_error, "{}", out.text);
    assert!(out.text.contains("reportAssignmentType"), "{}", out.text);

    // An exec approval policy asks about it: with nobody to ask, it fails closed.
    fx.reg.set_policy(ApprovalPolicy::tiers([Tier::Exec]));
    let out = fx.reg.call("lsp", all.clone(), Surface::Full).await;
    assert!(
        out.is_error && out.text.contains("needs approval"),
        "{}",
        out.text
    );
    fx.reg.set_policy(ApprovalPolicy::none());

    // On the full surface it runs, through the sandbox prefix.
    let box_dir = tempfile::tempdir().unwrap();
    let log = box_dir.path().join("launched.log");
    let launcher = box_dir.path().join("sandbox.sh");
    exe(
        &launcher,
        &format!(
            "#!/bin/sh\necho \"$1\" >> '{}'\nexec \"$@\"\n",
            log.display()
        ),
    );
    let home = tempfile::tempdir().unwrap();
    let user = home.path().join("lsp.json");
    let reg = attach(
        &fx.root,
        &user,
        vec![launcher.to_string_lossy().to_string()],
    );
    let out = reg.call("lsp", all, Surface::Full).await;
    let text = fx.red(&out.text);
    assert!(!out.is_error, "{text}");
    assert!(
        text.contains("pyright in . (ran in ") && text.contains("): 1 error(s), 0 warning(s)"),
        "{text}"
    );
    let logged =
        std::fs::read_to_string(&log).expect("the checker was not launched through the prefix");
    assert!(logged.contains("pyright"), "{logged}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rust_analyzer_runs_no_build_script_of_an_untrusted_project() {
    require("rust-analyzer");
    let fx = fixture("rust", config("rust", "rust-analyzer"));
    let marker = fx.root.join("build-script-ran");
    std::fs::write(
        fx.root.join("build.rs"),
        format!(
            "fn main() {{\n    std::fs::write({:?}, \"ran\").unwrap();\n}}\n",
            marker
        ),
    )
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let user = home.path().join("lsp.json");
    std::fs::write(&user, "{}").unwrap();
    let hover =
        json!({"operation": "hover", "file": "src/lib.rs", "line": 28, "symbol": "make_greeter"});

    let reg = attach_with(&fx.root, &user, Vec::new(), config("rust", "rust-analyzer"));
    let out = reg.call("lsp", hover.clone(), Surface::ReadOnly).await;
    assert!(!out.is_error, "{}", out.text);
    assert!(out.text.contains("make_greeter"), "{}", out.text);
    let out = reg
        .call("lsp", json!({"operation": "status"}), Surface::ReadOnly)
        .await;
    assert!(
        out.text
            .contains("- rust-analyzer's build scripts, proc macros and check on save"),
        "{}",
        out.text
    );
    drop(reg);
    assert!(!marker.exists(), "an untrusted project's build script ran");

    // Trusted: rust-analyzer runs it (so the check above could have seen it).
    std::fs::write(&user, json!({"trusted_projects": [fx.root]}).to_string()).unwrap();
    let reg = attach_with(&fx.root, &user, Vec::new(), config("rust", "rust-analyzer"));
    let out = reg.call("lsp", hover, Surface::ReadOnly).await;
    assert!(!out.is_error, "{}", out.text);
    for _ in 0..120 {
        if marker.exists() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
    assert!(
        marker.exists(),
        "a trusted project's build script did not run"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_server_loads_no_typescript_of_an_untrusted_project() {
    require("typescript-language-server");
    let fx = fixture("ts", config("typescript", "typescript-language-server"));
    let marker = fx.root.join("workspace-tsserver-ran");
    let real = std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .map(|d| d.join("typescript-language-server"))
        .find(|p| p.is_file())
        .unwrap()
        .canonicalize()
        .unwrap();
    // <modules>/typescript-language-server/lib/cli.mjs → <modules>/typescript/lib/tsserver.js
    let real_ts = real
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("../typescript/lib/tsserver.js");
    assert!(real_ts.is_file(), "{}", real_ts.display());
    // The project's own `typescript`: leaves a mark, then is the real one.
    let ts = fx.root.join("node_modules/typescript");
    std::fs::create_dir_all(ts.join("lib")).unwrap();
    std::fs::write(
        ts.join("package.json"),
        r#"{"name": "typescript", "version": "6.0.0"}"#,
    )
    .unwrap();
    std::fs::write(
        ts.join("lib/tsserver.js"),
        format!(
            "require('fs').writeFileSync({:?}, 'ran');\nmodule.exports = require({:?});\n",
            marker,
            real_ts.canonicalize().unwrap()
        ),
    )
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let user = home.path().join("lsp.json");
    std::fs::write(&user, "{}").unwrap();
    let hover =
        json!({"operation": "hover", "file": "src/main.ts", "line": 4, "symbol": "makeGreeter"});
    let cfg = || config("typescript", "typescript-language-server");

    let reg = attach_with(&fx.root, &user, Vec::new(), cfg());
    let out = reg.call("lsp", hover.clone(), Surface::ReadOnly).await;
    assert!(
        !out.is_error && out.text.contains("makeGreeter"),
        "{}",
        out.text
    );
    let out = reg
        .call("lsp", json!({"operation": "status"}), Surface::ReadOnly)
        .await;
    assert!(
        out.text
            .contains("- node_modules/typescript for typescript-language-server"),
        "{}",
        out.text
    );
    drop(reg);
    assert!(!marker.exists(), "an untrusted project's typescript ran");

    // Trusted: the project's typescript is the one loaded (so the check above could see it).
    std::fs::write(&user, json!({"trusted_projects": [fx.root]}).to_string()).unwrap();
    let reg = attach_with(&fx.root, &user, Vec::new(), cfg());
    let out = reg.call("lsp", hover, Surface::ReadOnly).await;
    assert!(!out.is_error, "{}", out.text);
    assert!(
        marker.exists(),
        "a trusted project's typescript was not loaded"
    );
}
