//! `edit` replaces a file atomically (temp file + rename) and the file keeps its owner, group,
//! mode and extended attributes (issue 23: it was handed to the writing user, without its
//! extended attributes). Runs as root, to give the file another owner; in the cargo target dir,
//! whose filesystem has user extended attributes (a tmpfs `/tmp` may not): the test fails, not
//! skips, without either.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use agent_tier::{Registry, RunInfo, Surface};
use serde_json::json;
use std::os::unix::fs::{MetadataExt, PermissionsExt};

fn xattr(path: &std::path::Path, name: &str) -> Option<Vec<u8>> {
    let mut value = vec![0u8; 256];
    let n = rustix::fs::getxattr(path, name, &mut value[..]).ok()?;
    value.truncate(n);
    Some(value)
}

#[tokio::test]
async fn edit_keeps_owner_group_mode_and_extended_attributes() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let target = dir.path().join("conf.ini");
    std::fs::write(&target, "level = 1\n").unwrap();
    std::os::unix::fs::chown(&target, Some(1234), Some(1234))
        .expect("chown to 1234:1234 (this test runs as root)");
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o640)).unwrap();
    rustix::fs::setxattr(&target, "user.tag", b"v", rustix::fs::XattrFlags::empty())
        .expect("the target dir's filesystem supports user extended attributes");

    let r = Registry::new(RunInfo {
        root: dir.path().to_path_buf(),
        ..Default::default()
    });
    agent_files::attach(&r);
    let out = r
        .call(
            "edit",
            json!({"path": "conf.ini", "old_string": "level = 1", "new_string": "level = 2"}),
            Surface::Full,
        )
        .await;
    assert!(!out.is_error, "{}", out.text);

    let meta = std::fs::metadata(&target).unwrap();
    assert_eq!((meta.uid(), meta.gid()), (1234, 1234), "owner and group");
    assert_eq!(meta.mode() & 0o7777, 0o640, "mode");
    assert_eq!(
        xattr(&target, "user.tag").as_deref(),
        Some(&b"v"[..]),
        "user.tag"
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "level = 2\n");
}
