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
