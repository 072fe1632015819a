//! Unit tests of the server table and the config files' merge.
use super::*;

#[test]
fn defaults_cover_the_issue_table() {
    let r = LspConfig {
        skip_config_files: true,
        ..Default::default()
    }
    .resolve(Path::new("/nonexistent"));
    for id in [
        "rust-analyzer",
        "pyright",
        "basedpyright",
        "pylsp",
        "ty",
        "typescript-language-server",
        "clangd",
        "gopls",
        "dart",
    ] {
        assert!(r.servers.contains_key(id), "{id}");
    }
    let py: Vec<&str> = r
        .servers_for_ext("py")
        .iter()
        .map(|s| s.id.as_str())
        .collect();
    assert_eq!(py, ["pyright", "basedpyright", "ty", "pylsp"]);
    assert!(
        r.servers["clangd"]
            .commands
            .iter()
            .any(|c| c[0] == "clangd-19")
    );
}

#[test]
fn patches_replace_named_fields_and_new_servers_need_the_basics() {
    let mut cfg = LspConfig {
        skip_config_files: true,
        ..Default::default()
    };
    cfg.overrides.servers.insert(
        "gopls".into(),
        ServerPatch {
            commands: Some(vec![vec!["my-gopls".into()]]),
            ..Default::default()
        },
    );
    cfg.overrides
        .servers
        .insert("half".into(), ServerPatch::default());
    cfg.overrides
        .languages
        .insert("python".into(), vec!["ty".into()]);
    let r = cfg.resolve(Path::new("/nonexistent"));
    assert_eq!(
        r.servers["gopls"].commands,
        vec![vec!["my-gopls".to_string()]]
    );
    assert_eq!(r.servers["gopls"].root_markers, vec!["go.work", "go.mod"]);
    assert!(!r.servers.contains_key("half"));
    assert!(
        r.warnings[0].contains("new server `half` needs"),
        "{:?}",
        r.warnings
    );
    let py: Vec<&str> = r
        .servers_for_ext("py")
        .iter()
        .map(|s| s.id.as_str())
        .collect();
    assert_eq!(py, ["ty"]);
}

#[test]
fn max_servers_from_the_user_file_and_lowered_only_by_the_project() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let user = home.path().join("lsp.json");
    let project = project_config_path(ws.path());
    std::fs::create_dir_all(project.parent().unwrap()).unwrap();
    let cfg = LspConfig {
        user_config: Some(user.clone()),
        ..Default::default()
    };
    let cap = |r: &Resolved| (r.max_servers, r.max_servers_from.clone());

    // No file: the default.
    let r = cfg.resolve(ws.path());
    assert_eq!(r.max_servers, DEFAULT_MAX_SERVERS);

    // The user's file sets it; the project's may lower it.
    std::fs::write(&user, r#"{"max_servers": 12}"#).unwrap();
    std::fs::write(&project, r#"{"max_servers": 2}"#).unwrap();
    let r = cfg.resolve(ws.path());
    assert_eq!(cap(&r), (2, format!("set in {}", project.display())));

    // ... never raise it.
    std::fs::write(&project, r#"{"max_servers": 50}"#).unwrap();
    let r = cfg.resolve(ws.path());
    assert_eq!(cap(&r), (12, format!("set in {}", user.display())));
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains("may lower the cap, never raise it")),
        "{:?}",
        r.warnings
    );

    // 0 is refused; the host's setting wins over both files.
    std::fs::write(&project, r#"{"max_servers": 0}"#).unwrap();
    let r = cfg.resolve(ws.path());
    assert_eq!(r.max_servers, 12);
    assert!(r.warnings.iter().any(|w| w.contains("at least 1")));
    let r = LspConfig {
        max_servers: Some(30),
        ..cfg.clone()
    }
    .resolve(ws.path());
    assert_eq!(cap(&r), (30, "set in LspConfig".to_string()));
}
