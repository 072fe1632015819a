//! Reads that cannot be raced out of the root, and cannot block.
//!
//! A path is checked by [`super::confine`] and then opened; between the two, a directory on the
//! way may be swapped for a symlink to a folder outside (`renameat2` with `RENAME_EXCHANGE`).
//! Opening the checked path by its absolute name would follow that symlink. So every read opens
//! its file relative to the root's directory descriptor with `openat2(RESOLVE_BENEATH |
//! RESOLVE_NO_SYMLINKS)`: the kernel refuses a symlink anywhere on the way, and any step out of
//! the root. Where `openat2` is missing (Linux < 5.6, or a seccomp filter that denies it) the
//! same walk is done one component at a time with `O_NOFOLLOW`, as writes do.
//!
//! The open never blocks (`O_NONBLOCK`), the descriptor must be a regular file, and at most what
//! the caller asked for is read: a FIFO, a socket or a device in the workspace is refused, never
//! waited on, and a huge sparse file is never loaded whole.

use super::atomic::{io, kind, refused};
use rustix::fs::{FileType, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;
use std::io::Read;
use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};

/// What [`read_regular`] read.
#[derive(Debug)]
pub struct ReadPrefix {
    /// At most the requested number of bytes, from the start of the file.
    pub bytes: Vec<u8>,
    /// The file's size when it was opened.
    pub size: u64,
}

/// A workspace root opened once, so that many reads below it (a search over a tree) each cost
/// one `openat2`.
#[derive(Debug)]
pub struct Beneath {
    dir: OwnedFd,
    /// The root as given, and canonical: a path below either is accepted.
    given: PathBuf,
    canon: PathBuf,
}

/// How a file below the root is opened.
const READ: OFlags = OFlags::RDONLY
    .union(OFlags::NONBLOCK)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

impl Beneath {
    /// Open the root `root` (a directory; symlinks above and in it are resolved once, here).
    pub fn open(root: &Path) -> std::io::Result<Self> {
        let canon = root.canonicalize()?;
        let dir = rustix::fs::open(
            &canon,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(io)?;
        Ok(Self {
            dir,
            given: root.to_path_buf(),
            canon,
        })
    }

    /// `path` relative to the root, refused when it is not below it or not a plain path.
    fn relative<'p>(&self, path: &'p Path) -> std::io::Result<&'p Path> {
        let rel = path
            .strip_prefix(&self.canon)
            .or_else(|_| path.strip_prefix(&self.given))
            .map_err(|_| {
                refused(format!(
                    "`{}` is outside the workspace root {}; it is not read",
                    path.display(),
                    self.canon.display()
                ))
            })?;
        if rel.as_os_str().is_empty() {
            return Err(refused(format!(
                "`{}` is the workspace root itself, not a file",
                path.display()
            )));
        }
        if !rel.components().all(|c| matches!(c, Component::Normal(_))) {
            return Err(refused(format!(
                "`{}` is not a plain path below the root; it is not read",
                path.display()
            )));
        }
        Ok(rel)
    }

    /// Open `path` (below the root) with `flags`, following no symlink on the way.
    fn open_below(&self, path: &Path, flags: OFlags) -> std::io::Result<OwnedFd> {
        let rel = self.relative(path)?;
        let how = ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS;
        let mut tries = 0;
        let opened = loop {
            match rustix::fs::openat2(&self.dir, rel, flags, Mode::empty(), how) {
                // The kernel asks for a retry when a rename raced the lookup.
                Err(Errno::AGAIN) if tries < 8 => tries += 1,
                Err(Errno::NOSYS | Errno::PERM) => break self.walk(rel, flags),
                other => break other,
            }
        };
        opened.map_err(|e| match e {
            Errno::LOOP | Errno::XDEV => refused(format!(
                "`{}` has a symlink on its way below the root (placed there after the path was \
                 checked, or the file itself); it is not followed",
                path.display()
            )),
            Errno::NOTDIR => refused(format!(
                "`{}`: a component on its way is not a directory; it is not read",
                path.display()
            )),
            e => io(e),
        })
    }

    /// The walk `openat2` does, one component at a time with `O_NOFOLLOW`.
    fn walk(&self, rel: &Path, flags: OFlags) -> rustix::io::Result<OwnedFd> {
        let parts: Vec<&std::ffi::OsStr> = rel.iter().collect();
        let Some((last, dirs)) = parts.split_last() else {
            return Err(Errno::INVAL);
        };
        let dir_flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let mut dir = rustix::fs::openat(&self.dir, ".", dir_flags, Mode::empty())?;
        for part in dirs {
            dir = rustix::fs::openat(&dir, *part, dir_flags, Mode::empty())?;
        }
        rustix::fs::openat(&dir, *last, flags | OFlags::NOFOLLOW, Mode::empty())
    }

    /// Open the regular file `path` (below the root) for reading, with its size. No symlink is
    /// followed on the way or at the end, the open never blocks, and a FIFO, socket, device or
    /// directory is refused with an error that names it. `ErrorKind::NotFound` when absent.
    pub fn open_regular(&self, path: &Path) -> std::io::Result<(std::fs::File, u64)> {
        let fd = self.open_below(path, READ)?;
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

    /// Read at most `max` bytes of the regular file `path` (see [`Beneath::open_regular`]).
    pub fn read_regular(&self, path: &Path, max: u64) -> std::io::Result<ReadPrefix> {
        let (file, size) = self.open_regular(path)?;
        let mut bytes = Vec::with_capacity(usize::try_from(size.min(max)).unwrap_or(0));
        file.take(max).read_to_end(&mut bytes)?;
        Ok(ReadPrefix { bytes, size })
    }

    /// Whether `path` names something below the root reached without any symlink on the way
    /// (the last component may itself be a symlink: `O_PATH | O_NOFOLLOW` opens the link). A
    /// listing that raced a swap shows only names this holds for.
    pub fn reaches(&self, path: &Path) -> bool {
        self.open_below(path, OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC)
            .is_ok()
    }
}

/// Open the regular file `path` below `root` for reading; see [`Beneath::open_regular`].
pub fn open_regular(root: &Path, path: &Path) -> std::io::Result<(std::fs::File, u64)> {
    Beneath::open(root)?.open_regular(path)
}

/// Read at most `max` bytes of the regular file `path` below `root`; see
/// [`Beneath::read_regular`].
pub fn read_regular(root: &Path, path: &Path, max: u64) -> std::io::Result<ReadPrefix> {
    Beneath::open(root)?.read_regular(path, max)
}
