//! Writes that cannot be redirected out of the root.
//!
//! Every directory on the way to a written file is opened relative to the root's descriptor with
//! `O_NOFOLLOW | O_DIRECTORY`, so a symlink planted anywhere on the path (before or during the
//! write) makes the write fail instead of following it. The temp file gets an unpredictable name
//! and is created with `O_CREAT | O_EXCL | O_NOFOLLOW` in that directory; it is renamed only over
//! a regular file (or over nothing), and the directory is fsynced after the rename. The file it
//! replaces keeps its owner, group, permission bits and extended attributes, or the write is
//! refused (see [`write_atomic`]).
//!
//! Reads are [`super::read`]'s.

use parking_lot::{Mutex, MutexGuard};
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use std::collections::HashMap;
use std::ffi::{CStr, CString};
use std::io::Write;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::LazyLock;

pub(super) fn io(e: rustix::io::Errno) -> std::io::Error {
    std::io::Error::from(e)
}

pub(super) fn refused(msg: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidInput, msg)
}

/// The name of a file type, for errors.
pub(super) fn kind(t: FileType) -> &'static str {
    match t {
        FileType::RegularFile => "a regular file",
        FileType::Directory => "a directory",
        FileType::Symlink => "a symlink",
        FileType::Fifo => "a FIFO (named pipe)",
        FileType::Socket => "a socket",
        FileType::CharacterDevice => "a character device",
        FileType::BlockDevice => "a block device",
        FileType::Unknown => "a special file",
    }
}

/// The directory holding `path` (which must lie strictly inside `root`), opened by walking from
/// the root one component at a time without following any symlink. `create` makes missing
/// directories on the way.
fn open_parent(root: &Path, path: &Path, create: bool) -> std::io::Result<(OwnedFd, PathBuf)> {
    let root = root.canonicalize()?;
    let rel = path.strip_prefix(&root).map_err(|_| {
        refused(format!(
            "`{}` is outside the workspace root {}",
            path.display(),
            root.display()
        ))
    })?;
    let mut parts: Vec<&std::ffi::OsStr> = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(p) => parts.push(p),
            _ => {
                return Err(refused(format!(
                    "`{}` is not a plain path below the root",
                    path.display()
                )));
            }
        }
    }
    let Some(name) = parts.pop() else {
        return Err(refused(format!(
            "`{}` is the workspace root itself, not a file",
            path.display()
        )));
    };
    let dir_flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let mut dir = rustix::fs::open(&root, dir_flags, Mode::empty()).map_err(io)?;
    let mut walked = root.clone();
    for part in parts {
        walked.push(part);
        let next = match rustix::fs::openat(&dir, part, dir_flags | OFlags::NOFOLLOW, Mode::empty())
        {
            Err(rustix::io::Errno::NOENT) if create => {
                match rustix::fs::mkdirat(&dir, part, Mode::from_raw_mode(0o777)) {
                    Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                    Err(e) => return Err(io(e)),
                }
                rustix::fs::openat(&dir, part, dir_flags | OFlags::NOFOLLOW, Mode::empty())
            }
            other => other,
        };
        dir = next.map_err(|e| match e {
            rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR => refused(format!(
                "`{}` is not a real directory inside the root (a symlink or a file); nothing is written through it",
                walked.display()
            )),
            e => io(e),
        })?;
    }
    Ok((dir, PathBuf::from(name)))
}

/// The type and mode of `name` in `dir`, without following a symlink; `None` when absent.
fn stat_in(dir: &OwnedFd, name: &Path) -> std::io::Result<Option<(FileType, u32)>> {
    match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => Ok(Some((
            FileType::from_raw_mode(st.st_mode),
            st.st_mode & 0o7777,
        ))),
        Err(rustix::io::Errno::NOENT) => Ok(None),
        Err(e) => Err(io(e)),
    }
}

/// A temp-file name nobody can predict: the target's name (shortened) and 64 random bits.
fn temp_name(target: &Path, attempt: u32) -> PathBuf {
    use std::hash::BuildHasher;
    let salt = std::collections::hash_map::RandomState::new().hash_one((
        std::process::id(),
        attempt,
        std::time::SystemTime::now(),
    ));
    let bytes = target.as_os_str().as_bytes();
    let short = String::from_utf8_lossy(&bytes[..bytes.len().min(100)]).into_owned();
    PathBuf::from(format!(".{short}.{salt:016x}.agent-tools.tmp"))
}

/// What a replaced file keeps: its owner, group, permission bits and extended attributes.
struct Kept {
    uid: u32,
    gid: u32,
    mode: u32,
    /// Every extended attribute this process can list, with its value (ACLs, SELinux labels and
    /// file capabilities are extended attributes too).
    xattrs: Vec<(CString, Vec<u8>)>,
}

/// Retries of a listing or a value that grew between asking its size and reading it.
const XATTR_RETRIES: usize = 4;

/// The value of the extended attribute `name` of `fd`; `None` when it went away meanwhile.
fn xattr_value(fd: &OwnedFd, name: &CStr) -> std::io::Result<Option<Vec<u8>>> {
    for _ in 0..XATTR_RETRIES {
        let size = match rustix::fs::fgetxattr_query(fd, name) {
            Ok(n) => n,
            Err(rustix::io::Errno::NODATA) => return Ok(None),
            Err(e) => return Err(io(e)),
        };
        let mut value = vec![0u8; size];
        match rustix::fs::fgetxattr(fd, name, &mut value[..]) {
            Ok(n) => {
                value.truncate(n);
                return Ok(Some(value));
            }
            Err(rustix::io::Errno::RANGE) => continue,
            Err(rustix::io::Errno::NODATA) => return Ok(None),
            Err(e) => return Err(io(e)),
        }
    }
    Err(io(rustix::io::Errno::RANGE))
}

/// Every extended attribute of `fd` with its value (none on a filesystem without them).
fn xattrs_of(fd: &OwnedFd) -> std::io::Result<Vec<(CString, Vec<u8>)>> {
    for _ in 0..XATTR_RETRIES {
        let size = match rustix::fs::flistxattr_query(fd) {
            Ok(n) => n,
            Err(rustix::io::Errno::NOTSUP) => return Ok(Vec::new()),
            Err(e) => return Err(io(e)),
        };
        let mut names = vec![0u8; size];
        match rustix::fs::flistxattr(fd, &mut names[..]) {
            Ok(n) => names.truncate(n),
            Err(rustix::io::Errno::RANGE) => continue,
            Err(e) => return Err(io(e)),
        }
        let mut out = Vec::new();
        for name in names.split(|b| *b == 0).filter(|n| !n.is_empty()) {
            let name = CString::new(name).map_err(|_| io(rustix::io::Errno::INVAL))?;
            if let Some(value) = xattr_value(fd, &name)? {
                out.push((name, value));
            }
        }
        return Ok(out);
    }
    Err(io(rustix::io::Errno::RANGE))
}

/// What the regular file `name` in `dir` (shown as `path`) has to keep when it is replaced.
fn kept_of(dir: &OwnedFd, name: &Path, path: &Path) -> std::io::Result<Kept> {
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let cannot = |what: &str, e: std::io::Error| {
        std::io::Error::new(
            e.kind(),
            format!(
                "cannot read the {what} of `{}` to keep them: {e}; nothing was written",
                path.display()
            ),
        )
    };
    let fd = rustix::fs::openat(dir, name, flags, Mode::empty())
        .map_err(|e| cannot("owner and extended attributes", io(e)))?;
    let st = rustix::fs::fstat(&fd).map_err(|e| cannot("owner", io(e)))?;
    let t = FileType::from_raw_mode(st.st_mode);
    if t != FileType::RegularFile {
        return Err(refused(format!(
            "`{}` is {}, not a regular file; nothing was written",
            path.display(),
            kind(t)
        )));
    }
    Ok(Kept {
        uid: st.st_uid,
        gid: st.st_gid,
        mode: st.st_mode & 0o7777,
        xattrs: xattrs_of(&fd).map_err(|e| cannot("extended attributes", e))?,
    })
}

/// Give the temp file `fd` the owner and group of the file it replaces (before its content is
/// written: a process that may not do so learns it first). An owner this process may not give
/// (`EPERM`: not root, and not the owner, or not in the group) refuses the write.
fn keep_owner(fd: &OwnedFd, kept: &Kept, path: &Path) -> std::io::Result<()> {
    let st = rustix::fs::fstat(fd).map_err(io)?;
    if (st.st_uid, st.st_gid) == (kept.uid, kept.gid) {
        return Ok(());
    }
    let (uid, gid) = (kept.uid, kept.gid);
    rustix::fs::fchown(
        fd,
        Some(rustix::fs::Uid::from_raw_unchecked(uid)),
        Some(rustix::fs::Gid::from_raw_unchecked(gid)),
    )
    .map_err(|e| {
        std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!(
                "`{}` is owned by {uid}:{gid}, and this process ({}:{}) cannot give its replacement that owner and group ({e}); nothing was written, since replacing it would change its owner",
                path.display(),
                st.st_uid,
                st.st_gid
            ),
        )
    })
}

/// Give the temp file `fd` the extended attributes and permission bits of the file it
/// replaces, after its content is written (a write clears file capabilities). An attribute the
/// temp file already has with the same value (a default SELinux label) is left alone; one that
/// cannot be set refuses the write.
fn keep_attributes(fd: &OwnedFd, kept: &Kept, path: &Path) -> std::io::Result<()> {
    for (name, value) in &kept.xattrs {
        if xattr_value(fd, name)?.as_ref() == Some(value) {
            continue;
        }
        rustix::fs::fsetxattr(fd, name.as_c_str(), value, rustix::fs::XattrFlags::empty())
            .map_err(|e| {
                std::io::Error::new(
                    io(e).kind(),
                    format!(
                        "cannot keep the extended attribute `{}` of `{}` ({e}); nothing was written",
                        name.to_string_lossy(),
                        path.display()
                    ),
                )
            })?;
    }
    rustix::fs::fchmod(fd, Mode::from_raw_mode(kept.mode)).map_err(io)
}

/// Write `contents` to `path` (strictly inside `root`) atomically: an exclusively created temp
/// file in the same directory, fsync, rename over the target, fsync of the directory. A missing
/// target is created (and missing directories with it); a target that is not a regular file (a
/// symlink, a FIFO, a directory…) or is read-only is refused.
///
/// A replaced file keeps its owner, group, permission bits and extended attributes (ACLs and
/// labels included). When this process cannot give the new copy the same owner and group (it is
/// not root and the file is someone else's, or its group is not one of the process's) or cannot
/// set one of the attributes, the write is refused with an error naming the file and why:
/// silently handing a file to another owner, or dropping its attributes, is never done.
pub fn write_atomic(root: &Path, path: &Path, contents: &[u8]) -> std::io::Result<()> {
    write_atomic_mode(root, path, contents, None)
}

/// [`write_atomic`], and a file it creates gets the permission bits `mode` when given (an undo
/// making a deleted `0755` script again); a replaced file keeps its own.
pub fn write_atomic_mode(
    root: &Path,
    path: &Path,
    contents: &[u8],
    mode: Option<u32>,
) -> std::io::Result<()> {
    let (dir, name) = open_parent(root, path, true)?;
    let kept = match stat_in(&dir, &name)? {
        None => None,
        Some((FileType::RegularFile, _)) => Some(kept_of(&dir, &name, path)?),
        Some((t, _)) => {
            return Err(refused(format!(
                "`{}` is {}, not a regular file; nothing was written",
                path.display(),
                kind(t)
            )));
        }
    };
    if let Some(k) = &kept
        && k.mode & 0o222 == 0
    {
        return Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            "file is read-only",
        ));
    }
    let create =
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    // New files get the usual 0666 minus umask; an existing file's mode is set after writing.
    let initial = Mode::from_raw_mode(if kept.is_some() { 0o600 } else { 0o666 });
    let mut attempt = 0;
    let (fd, tmp) = loop {
        let tmp = temp_name(&name, attempt);
        match rustix::fs::openat(&dir, &tmp, create, initial) {
            Ok(fd) => break (fd, tmp),
            Err(rustix::io::Errno::EXIST) if attempt < 8 => attempt += 1,
            Err(e) => return Err(io(e)),
        }
    };
    let result = (|| {
        if let Some(k) = &kept {
            keep_owner(&fd, k, path)?;
        } else if let Some(mode) = mode {
            rustix::fs::fchmod(&fd, Mode::from_raw_mode(mode & 0o7777)).map_err(io)?;
        }
        let mut file = std::fs::File::from(fd);
        file.write_all(contents)?;
        let fd = OwnedFd::from(file);
        if let Some(k) = &kept {
            keep_attributes(&fd, k, path)?;
        }
        rustix::fs::fsync(&fd).map_err(io)?;
        // The target may have been swapped since the first look: rename only over a regular
        // file or over nothing.
        match stat_in(&dir, &name)? {
            None | Some((FileType::RegularFile, _)) => {}
            Some((t, _)) => {
                return Err(refused(format!(
                    "`{}` became {} during the write; nothing was written",
                    path.display(),
                    kind(t)
                )));
            }
        }
        // Recorded before the rename: a check that sees the new bytes knows they are ours.
        super::own_writes::wrote(path, contents);
        rustix::fs::renameat(&dir, &tmp, &dir, &name).map_err(io)?;
        rustix::fs::fsync(&dir).map_err(io)
    })();
    if result.is_err() {
        let _ = rustix::fs::unlinkat(&dir, &tmp, AtFlags::empty());
    }
    result
}

/// Remove the regular file `path` (strictly inside `root`) without following any symlink on the
/// way; anything but a regular file is refused.
pub fn remove_file(root: &Path, path: &Path) -> std::io::Result<()> {
    let (dir, name) = open_parent(root, path, false)?;
    match stat_in(&dir, &name)? {
        Some((FileType::RegularFile, _)) => {}
        None => return Err(std::io::ErrorKind::NotFound.into()),
        Some((t, _)) => {
            return Err(refused(format!(
                "`{}` is {}, not a regular file; it was not deleted",
                path.display(),
                kind(t)
            )));
        }
    }
    rustix::fs::unlinkat(&dir, &name, AtFlags::empty()).map_err(io)?;
    rustix::fs::fsync(&dir).map_err(io)
}

/// Held while a set of files is checked and written; see [`lock_files`].
#[derive(Debug)]
pub struct FileLocks {
    _guards: Vec<MutexGuard<'static, ()>>,
}

type LockTable = Mutex<HashMap<PathBuf, &'static Mutex<()>>>;
static LOCKS: LazyLock<LockTable> = LazyLock::new(Mutex::default);

/// Take the write lock of every path (in sorted order, so two callers never deadlock). Every
/// tool that writes files in this process goes through [`super::apply_all`], which takes these
/// locks around its staleness check and its writes, so concurrent writers of one file serialize
/// and a stale expectation is always seen. A harness's own write tool can take them too.
pub fn lock_files<'a>(paths: impl IntoIterator<Item = &'a Path>) -> FileLocks {
    let mut sorted: Vec<PathBuf> = paths.into_iter().map(Path::to_path_buf).collect();
    sorted.sort();
    sorted.dedup();
    let mutexes: Vec<&'static Mutex<()>> = {
        let mut table = LOCKS.lock();
        sorted
            .into_iter()
            // One small leaked mutex per distinct path written in this process: bounded by the
            // files a run writes, and it makes the guard 'static without unsafe code.
            .map(|p| *table.entry(p).or_insert_with(|| Box::leak(Box::default())))
            .collect()
    };
    FileLocks {
        _guards: mutexes.into_iter().map(|m| m.lock()).collect(),
    }
}

#[cfg(test)]
mod tests;
