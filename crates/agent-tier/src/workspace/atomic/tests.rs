//! Hostile cases for the write and read paths: planted symlinks, swapped directories, FIFOs,
//! huge sparse files, and concurrent writers of one file.

use super::*;
use crate::workspace::{FileChange, FsError, apply_all, read_regular};
use std::os::unix::fs::symlink;

fn root() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let canon = dir.path().canonicalize().unwrap();
    (dir, canon)
}

fn mkfifo(path: &Path) {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        FileType::Fifo,
        Mode::from_raw_mode(0o644),
        0,
    )
    .unwrap();
}

/// Every name a temp file of the old, predictable scheme could take is a planted symlink out
/// of the root: the write must still land on the target and leave the outside file alone.
#[test]
fn planted_symlinks_at_temp_names_do_not_redirect_the_write() {
    let (_d, root) = root();
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim.txt");
    std::fs::write(&victim, "precious").unwrap();
    let target = root.join("a.txt");
    std::fs::write(&target, "old").unwrap();
    for n in 0..64 {
        let name = format!(".a.txt.agent-tools-{}-{n}.tmp", std::process::id());
        symlink(&victim, root.join(name)).unwrap();
    }
    write_atomic(&root, &target, b"new").unwrap();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
    assert!(!target.symlink_metadata().unwrap().file_type().is_symlink());
}

/// The target itself became a symlink out of the root after it was confined: refused, the
/// outside file untouched.
#[test]
fn a_target_swapped_for_a_symlink_is_refused() {
    let (_d, root) = root();
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim.txt");
    std::fs::write(&victim, "precious").unwrap();
    let target = root.join("a.txt");
    symlink(&victim, &target).unwrap();
    let err = write_atomic(&root, &target, b"pwned").unwrap_err();
    assert!(
        err.to_string().contains("a symlink, not a regular file"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    let err = remove_file(&root, &target).unwrap_err();
    assert!(err.to_string().contains("symlink"), "{err}");
    assert!(victim.exists());
}

/// A directory on the way was swapped for a symlink out of the root after confinement.
#[test]
fn a_directory_swapped_for_a_symlink_is_refused() {
    let (_d, root) = root();
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir(root.join("sub")).unwrap();
    let target = root.join("sub/deeper/x.txt");
    std::fs::remove_dir(root.join("sub")).unwrap();
    symlink(outside.path(), root.join("sub")).unwrap();
    let err = write_atomic(&root, &target, b"pwned").unwrap_err();
    assert!(err.to_string().contains("not a real directory"), "{err}");
    assert!(std::fs::read_dir(outside.path()).unwrap().next().is_none());
}

#[test]
fn paths_outside_the_root_are_refused() {
    let (_d, root) = root();
    let outside = tempfile::tempdir().unwrap();
    let err = write_atomic(&root, &outside.path().join("x"), b"x").unwrap_err();
    assert!(
        err.to_string().contains("outside the workspace root"),
        "{err}"
    );
    let err = write_atomic(&root, &root, b"x").unwrap_err();
    assert!(err.to_string().contains("root itself"), "{err}");
}

/// A FIFO is refused at once by reads and writes (before, a read blocked a runtime thread).
#[test]
fn fifos_are_refused_not_waited_on() {
    let (_d, root) = root();
    let fifo = root.join("pipe");
    mkfifo(&fifo);
    let err = read_regular(&root, &fifo, 10).unwrap_err();
    assert!(err.to_string().contains("FIFO"), "{err}");
    let err = write_atomic(&root, &fifo, b"x").unwrap_err();
    assert!(err.to_string().contains("FIFO"), "{err}");
    let change = FileChange {
        path: fifo.clone(),
        expected: Some(Vec::new()),
        new: Some(b"x".to_vec()),
    };
    let err = apply_all(&root, &[change]).unwrap_err();
    assert!(matches!(err, FsError::Io { .. }), "{err}");
}

/// A 1 GiB sparse file: only what was asked for is read.
#[test]
fn a_huge_sparse_file_is_read_only_as_far_as_asked() {
    let (_d, root) = root();
    let big = root.join("big.bin");
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(1 << 30).unwrap();
    let r = read_regular(&root, &big, 4096).unwrap();
    assert_eq!(r.bytes.len(), 4096);
    assert_eq!(r.size, 1 << 30);
}

/// Eight threads each read a file and append to it through `apply_all` with what they read as
/// the expectation. Every success must be visible in the end: no update is lost.
#[test]
fn concurrent_writers_of_one_file_lose_no_update() {
    let (_d, root) = root();
    let path = root.join("counter.txt");
    std::fs::write(&path, "").unwrap();
    let successes = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| {
                for _ in 0..50 {
                    let old = std::fs::read(&path).unwrap();
                    let new = [old.as_slice(), b"x"].concat();
                    let change = FileChange {
                        path: path.clone(),
                        expected: Some(old),
                        new: Some(new),
                    };
                    match apply_all(&root, &[change]) {
                        Ok(_) => {
                            successes.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        }
                        Err(FsError::Stale { .. }) => {}
                        Err(e) => panic!("{e}"),
                    }
                }
            });
        }
    });
    let len = std::fs::read(&path).unwrap().len();
    assert_eq!(len, successes.into_inner());
    assert!(len > 0);
}

#[test]
fn missing_directories_are_created_and_new_files_get_a_normal_mode() {
    use std::os::unix::fs::PermissionsExt;
    let (_d, root) = root();
    let target = root.join("a/b/c.txt");
    write_atomic(&root, &target, b"hi").unwrap();
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "hi");
    let mode = std::fs::metadata(&target).unwrap().permissions().mode() & 0o777;
    assert_ne!(mode & 0o600, 0, "{mode:o}");
    // No temp file is left behind.
    let names: Vec<_> = std::fs::read_dir(root.join("a/b")).unwrap().collect();
    assert_eq!(names.len(), 1);
}

/// A directory on the filesystem of the target dir (where this test binary lives), not a tmpfs
/// `/tmp` that may lack user extended attributes: the tests below fail, not skip, without them.
fn xattr_root() -> (tempfile::TempDir, PathBuf) {
    let exe = std::env::current_exe().unwrap();
    let dir = tempfile::tempdir_in(exe.parent().unwrap()).unwrap();
    let canon = dir.path().canonicalize().unwrap();
    (dir, canon)
}

fn xattrs(path: &Path) -> Vec<(String, Vec<u8>)> {
    let mut names = vec![0u8; 4096];
    let n = rustix::fs::llistxattr(path, &mut names[..]).unwrap();
    let mut out: Vec<(String, Vec<u8>)> = names[..n]
        .split(|b| *b == 0)
        .filter(|n| !n.is_empty())
        .map(|name| {
            let name = String::from_utf8(name.to_vec()).unwrap();
            let mut value = vec![0u8; 4096];
            let len = rustix::fs::lgetxattr(path, name.as_str(), &mut value[..]).unwrap();
            value.truncate(len);
            (name, value)
        })
        .collect();
    out.sort();
    out
}

/// Issue 23: the temp file + rename handed the file to the writing user and dropped its
/// extended attributes. Now owner, group, mode (set-uid bit included: it is set after the
/// chown and the write, which clear it) and every extended attribute are kept.
#[test]
fn a_replaced_file_keeps_owner_group_mode_and_extended_attributes() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt, chown};
    let (_d, root) = xattr_root();
    for (name, mode) in [("a.txt", 0o640), ("run.sh", 0o4750)] {
        let target = root.join(name);
        std::fs::write(&target, "old\n").unwrap();
        chown(&target, Some(1234), Some(1234))
            .expect("chown to 1234:1234 (this test runs as root)");
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(mode)).unwrap();
        rustix::fs::setxattr(&target, "user.tag", b"v", rustix::fs::XattrFlags::empty())
            .expect("the target dir's filesystem supports user extended attributes");
        rustix::fs::setxattr(&target, "user.empty", b"", rustix::fs::XattrFlags::empty()).unwrap();
        let before = xattrs(&target);
        assert!(
            before.contains(&("user.tag".into(), b"v".to_vec())),
            "{before:?}"
        );

        write_atomic(&root, &target, b"new\n").unwrap();

        let meta = std::fs::metadata(&target).unwrap();
        assert_eq!(
            (meta.uid(), meta.gid()),
            (1234, 1234),
            "{name}: owner and group"
        );
        assert_eq!(meta.mode() & 0o7777, mode, "{name}: mode");
        assert_eq!(xattrs(&target), before, "{name}: extended attributes");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new\n");
    }
    // No temp file is left behind.
    let mut left: Vec<String> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["a.txt", "run.sh"]);
}

/// A process that cannot give the replacement the file's owner (not root, and the file is
/// someone else's) refuses the write, naming the file and why, and leaves it as it was. The test
/// runs its second half as uid/gid 65534 in a child (this same test binary).
#[test]
fn an_owner_that_cannot_be_kept_refuses_the_write() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    const CHILD: &str = "AGENT_TIER_TEST_UNPRIVILEGED_ROOT";
    if let Ok(root) = std::env::var(CHILD) {
        let root = PathBuf::from(root);
        let target = root.join("theirs.txt");
        let err = write_atomic(&root, &target, b"new\n").unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::PermissionDenied, "{err}");
        let msg = err.to_string();
        assert!(
            msg.contains("theirs.txt")
                && msg.contains("is owned by 0:0")
                && msg.contains("nothing was written"),
            "{msg}"
        );
        return;
    }
    let (_d, root) = xattr_root();
    std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o777)).unwrap();
    let target = root.join("theirs.txt");
    std::fs::write(&target, "old\n").unwrap();
    std::os::unix::fs::chown(&target, Some(0), Some(0))
        .expect("chown to 0:0 (this test runs as root)");
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o666)).unwrap();
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "workspace::atomic::tests::an_owner_that_cannot_be_kept_refuses_the_write",
            "--nocapture",
        ])
        .env(CHILD, &root)
        .uid(65534)
        .gid(65534)
        .output()
        .expect("run this test as uid 65534 (this test runs as root)");
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success() && log.contains("1 passed"), "{log}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "old\n");
    let left = std::fs::read_dir(&root).unwrap().count();
    assert_eq!(left, 1, "the temp file was removed");
}
