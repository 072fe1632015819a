//! The shipped drivers and the command lines that boot them: the Python package's modules, the
//! node script, and the per-user cache the Python package is imported from.
//!
//! The Python driver is a package, `agent_kernel_driver` (`src/driver/agent_kernel_driver/`), one
//! module per job; each file is a valid module on its own (the tests compile each one). It is
//! booted in one of two ways, and both give the same package layout:
//!
//! - on the host (no sandbox launcher): written once per user to a cache directory named by a hash
//!   of its sources, and imported from there, so that Python caches its bytecode and later kernels
//!   skip compiling it (most of a kernel's cold start otherwise);
//! - behind a sandbox launcher, where a file the host wrote may not be visible: each module's name
//!   and source are passed as arguments and executed, in import order, into modules registered
//!   under the same package. Not one concatenated file: that would need the modules' imports
//!   rewritten, and a module would then be valid only as part of the whole.
//!
//! The node driver is one script, passed to `node -e` (node starts no faster from a file).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The Python driver's package name.
const PYTHON_PACKAGE: &str = "agent_kernel_driver";

/// The Python driver's modules in import order (each imports only those before it); `__init__`
/// is the package itself and `main` is the entry point.
pub(crate) const PYTHON_MODULES: &[(&str, &str)] = &[
    (
        "__init__",
        include_str!("driver/agent_kernel_driver/__init__.py"),
    ),
    (
        "threads",
        include_str!("driver/agent_kernel_driver/threads.py"),
    ),
    ("wire", include_str!("driver/agent_kernel_driver/wire.py")),
    (
        "output",
        include_str!("driver/agent_kernel_driver/output.py"),
    ),
    (
        "bridge",
        include_str!("driver/agent_kernel_driver/bridge.py"),
    ),
    (
        "bounds",
        include_str!("driver/agent_kernel_driver/bounds.py"),
    ),
    (
        "display",
        include_str!("driver/agent_kernel_driver/display.py"),
    ),
    (
        "magics",
        include_str!("driver/agent_kernel_driver/magics.py"),
    ),
    ("cell", include_str!("driver/agent_kernel_driver/cell.py")),
    ("main", include_str!("driver/agent_kernel_driver/main.py")),
];

/// The node driver.
pub(crate) const NODE_DRIVER: &str = include_str!("driver/node.js");

/// `sh -c NODE_BOOT <node> <driver>`: moves the wire off fd 0, then becomes node.
const NODE_BOOT: &str = "exec \"$0\" -e \"$1\" 3<&0 </dev/null";

/// Builds the package from the (name, source) argument pairs that follow it, in order: each
/// module is registered before it runs, so that `from . import x` finds the ones before it. The
/// file names its code is compiled under start with `<agent-kernel` (the package's
/// `SOURCE_NAME`), which keeps the driver's frames out of a cell's traceback.
const PYTHON_BOOT_SOURCE: &str = "import sys
a=sys.argv[1:];del sys.argv[1:];P='agent_kernel_driver'
for i in range(0,len(a),2):
 n=a[i];q=P if n=='__init__' else P+'.'+n;m=type(sys)(q);m.__package__=P
 if n=='__init__':m.__path__=[]
 else:setattr(sys.modules[P],n,m)
 sys.modules[q]=m;exec(compile(a[i+1],'<agent-kernel '+n+'>','exec'),m.__dict__)
sys.modules[P+'.main'].run()";

/// Imports the driver from the cache directory passed as the next argument. Bytecode is written
/// for this one import even under `PYTHONDONTWRITEBYTECODE` (it goes to our own cache directory,
/// never the project); the setting is restored, and the directory taken off `sys.path`, before
/// any cell runs. Importing `main` imports every module.
const PYTHON_BOOT_CACHED: &str = "import sys;b=sys.dont_write_bytecode;sys.dont_write_bytecode=False;d=sys.argv.pop(1);sys.path.insert(0,d);import agent_kernel_driver.main as m;sys.dont_write_bytecode=b;sys.path.remove(d);m.run()";

/// FNV-1a: a stable hash of the driver, naming its cache directory.
fn stable_hash(data: impl IntoIterator<Item = u8>) -> u64 {
    data.into_iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The hash of every module's name and source.
fn python_hash() -> u64 {
    stable_hash(
        PYTHON_MODULES
            .iter()
            .flat_map(|(name, source)| name.bytes().chain([0]).chain(source.bytes()).chain([0])),
    )
}

/// The directory holding this build's Python driver package, written once per user
/// (`$XDG_CACHE_HOME` or `~/.cache`, under `agent-tools/`). `None` when it cannot be written;
/// the driver is then passed as source.
///
/// Each module is written to a temporary name and renamed into place, and the directory is named
/// by the hash of all of them, so kernels starting at once never see a half-written module: a
/// file is either missing (and written again by whoever needs it) or complete.
fn cached_python_driver() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache")))?;
    let dir = base
        .join("agent-tools")
        .join(format!("kernel-driver-{:016x}", python_hash()));
    let package = dir.join(PYTHON_PACKAGE);
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    for (name, source) in PYTHON_MODULES {
        let file = package.join(format!("{name}.py"));
        if std::fs::read(&file).ok().as_deref() == Some(source.as_bytes()) {
            continue;
        }
        std::fs::create_dir_all(&package).ok()?;
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tmp = package.join(format!("{name}.{}.{n}.tmp", std::process::id()));
        std::fs::write(&tmp, source).ok()?;
        std::fs::rename(&tmp, &file).ok()?;
    }
    Some(dir)
}

/// The kernel languages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Lang {
    Python,
    Javascript,
}

impl Lang {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Lang::Python => "python",
            Lang::Javascript => "javascript",
        }
    }
}

/// The program to spawn and its arguments, for a kernel of `lang` run by `program`. `sandboxed`:
/// there is a launcher in front, so nothing the host writes is assumed visible.
pub(crate) fn boot_command(
    lang: Lang,
    program: &OsString,
    sandboxed: bool,
) -> (OsString, Vec<OsString>) {
    match lang {
        Lang::Python => {
            let cached = if sandboxed {
                None
            } else {
                cached_python_driver()
            };
            let args = match cached {
                Some(dir) => vec!["-c".into(), PYTHON_BOOT_CACHED.into(), dir.into()],
                None => {
                    let mut args: Vec<OsString> = vec!["-c".into(), PYTHON_BOOT_SOURCE.into()];
                    for (name, source) in PYTHON_MODULES {
                        args.push(name.into());
                        args.push(source.into());
                    }
                    args
                }
            };
            (program.clone(), args)
        }
        // node cannot move its own descriptors, so `sh` does it before exec'ing node: the wire
        // comes in on fd 3 and fd 0 is /dev/null, so that a child started with inherited stdio
        // (`execSync(cmd, {stdio: 'inherit'})`) cannot read the host's messages.
        Lang::Javascript => (
            OsString::from("sh"),
            vec![
                "-c".into(),
                NODE_BOOT.into(),
                program.clone(),
                NODE_DRIVER.into(),
            ],
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_modules_are_listed_once_each_with_the_package_first_and_main_last() {
        let names: Vec<&str> = PYTHON_MODULES.iter().map(|(n, _)| *n).collect();
        assert_eq!(names.first(), Some(&"__init__"));
        assert_eq!(names.last(), Some(&"main"));
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len());
        // every module imports only modules listed before it (the source boot runs them in order)
        for (i, (name, source)) in PYTHON_MODULES.iter().enumerate() {
            for line in source.lines() {
                let Some(rest) = line.strip_prefix("from .") else {
                    continue;
                };
                let imported: Vec<&str> = match rest.strip_prefix(" import ") {
                    Some(list) => list
                        .split(',')
                        .map(|s| s.split_whitespace().next().unwrap_or(""))
                        .collect(),
                    None => vec![rest.split_whitespace().next().unwrap_or("")],
                };
                let package = PYTHON_MODULES[0].1;
                for m in imported {
                    // a name defined by the package itself (`from . import public`) is __init__'s
                    let defined_by_package = package.contains(&format!("\n{m} ="))
                        || package.contains(&format!("\ndef {m}("));
                    let pos = names
                        .iter()
                        .position(|n| *n == m)
                        .or(defined_by_package.then_some(0));
                    assert!(
                        pos.is_some_and(|p| p < i),
                        "{name}.py imports `{m}`, which is not a module listed before it: {line}"
                    );
                }
            }
        }
        // every file in the package directory is listed
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/driver/agent_kernel_driver");
        let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| {
                let name = e.unwrap().file_name().into_string().unwrap();
                name.strip_suffix(".py").map(str::to_string)
            })
            .collect();
        on_disk.sort_unstable();
        let mut listed: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        listed.sort_unstable();
        assert_eq!(on_disk, listed);
    }
}
