//! Writes that cannot be redirected out of the root, and reads that cannot block.
//!
//! Every directory on the way to a written file is opened relative to the root's descriptor with
//! `O_NOFOLLOW | O_DIRECTORY`, so a symlink planted anywhere on the path (before or during the
//! write) makes the write fail instead of following it. The temp file gets an unpredictable name
//! and is created with `O_CREAT | O_EXCL | O_NOFOLLOW` in that directory; it is renamed only over
//! a regular file (or over nothing), and the directory is fsynced after the rename.
//!
//! Reads open with `O_NONBLOCK | O_NOFOLLOW` and check the opened descriptor is a regular file
//! before reading, and read at most what the caller asked for: a FIFO, a socket or a device in
//! the workspace is refused, never waited on, and a huge sparse file is never loaded whole.

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::{LazyLock, Mutex, MutexGuard};

fn io(e: rustix::io::Errno) -> std::io::Error {
    std::io::Error::from(e)
}

fn refused(msg: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidInput, msg)
}

/// The name of a file type, for errors.
fn kind(t: FileType) -> &'static str {
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

/// Write `contents` to `path` (strictly inside `root`) atomically: an exclusively created temp
/// file in the same directory, fsync, rename over the target, fsync of the directory. The
/// target's permission bits are kept; a read-only target is refused; a target that is not a
/// regular file (a symlink, a FIFO, a directory…) is refused; missing directories are created.
pub fn write_atomic(root: &Path, path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let (dir, name) = open_parent(root, path, true)?;
    let mode = match stat_in(&dir, &name)? {
        None => None,
        Some((FileType::RegularFile, mode)) => Some(mode),
        Some((t, _)) => {
            return Err(refused(format!(
                "`{}` is {}, not a regular file; nothing was written",
                path.display(),
                kind(t)
            )));
        }
    };
    if let Some(m) = mode
        && m & 0o222 == 0
    {
        return Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            "file is read-only",
        ));
    }
    let create =
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    // New files get the usual 0666 minus umask; an existing file's mode is set after creation.
    let initial = Mode::from_raw_mode(if mode.is_some() { 0o600 } else { 0o666 });
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
        if let Some(m) = mode {
            rustix::fs::fchmod(&fd, Mode::from_raw_mode(m)).map_err(io)?;
        }
        let mut file = std::fs::File::from(fd);
        file.write_all(contents)?;
        file.sync_all()?;
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

/// What [`read_regular`] read.
#[derive(Debug)]
pub struct ReadPrefix {
    /// At most the requested number of bytes, from the start of the file.
    pub bytes: Vec<u8>,
    /// The file's size when it was opened.
    pub size: u64,
}

/// Open the regular file `path` for reading, with its size. The last component is not followed
/// if it is a symlink, the open never blocks (`O_NONBLOCK`), and a FIFO, socket, device or
/// directory is refused with an error that names it. `ErrorKind::NotFound` when absent.
pub fn open_regular(path: &Path) -> std::io::Result<(std::fs::File, u64)> {
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = rustix::fs::open(path, flags, Mode::empty()).map_err(|e| match e {
        rustix::io::Errno::LOOP => refused(format!(
            "`{}` is a symlink that was not resolved inside the root; it is not read",
            path.display()
        )),
        e => io(e),
    })?;
    let st = rustix::fs::fstat(&fd).map_err(io)?;
    let t = FileType::from_raw_mode(st.st_mode);
    if t != FileType::RegularFile {
        return Err(refused(format!(
            "`{}` is {}, not a regular file; only regular files are read",
            path.display(),
            kind(t)
        )));
    }
    Ok((
        std::fs::File::from(fd),
        u64::try_from(st.st_size).unwrap_or(0),
    ))
}

/// Read at most `max` bytes of the regular file `path` (see [`open_regular`]).
pub fn read_regular(path: &Path, max: u64) -> std::io::Result<ReadPrefix> {
    let (file, size) = open_regular(path)?;
    let mut bytes = Vec::with_capacity(usize::try_from(size.min(max)).unwrap_or(0));
    file.take(max).read_to_end(&mut bytes)?;
    Ok(ReadPrefix { bytes, size })
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
        let mut table = LOCKS.lock().unwrap_or_else(|e| e.into_inner());
        sorted
            .into_iter()
            // One small leaked mutex per distinct path written in this process: bounded by the
            // files a run writes, and it makes the guard 'static without unsafe code.
            .map(|p| *table.entry(p).or_insert_with(|| Box::leak(Box::default())))
            .collect()
    };
    FileLocks {
        _guards: mutexes
            .into_iter()
            .map(|m| m.lock().unwrap_or_else(|e| e.into_inner()))
            .collect(),
    }
}

#[cfg(test)]
#[path = "atomic_tests.rs"]
mod tests;
