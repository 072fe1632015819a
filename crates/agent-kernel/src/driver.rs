//! The shipped drivers and the command lines that boot them: the modules of the Python package
//! and of the node package, and the per-user cache they are loaded from.
//!
//! Each driver is a package of modules, one per job (the wire, the cell's output, the `tool()`
//! bridge, bounds, display, running a cell, ...): the Python package `agent_kernel_driver`
//! (`src/driver/agent_kernel_driver/`) and the node package of CommonJS modules
//! (`src/driver/node/`). Each file is a valid module on its own (the tests compile each one with
//! `python3 -m py_compile` and `node --check`). Both are booted in one of two ways, and both give
//! the same package layout:
//!
//! - on the host (no sandbox launcher): written once per user to a cache directory named by a hash
//!   of its sources, and imported (`require`d) from there, so that Python caches its bytecode and
//!   later kernels skip compiling it (most of a kernel's cold start otherwise);
//! - behind a sandbox launcher, where a file the host wrote may not be visible: each module's name
//!   and source are passed as arguments and executed, in import order, into modules registered
//!   under the same package (node: each compiled with the CommonJS wrapper's parameters, its
//!   `require('./x')` answered with the module `x` built before it). Not one concatenated file:
//!   that would need the modules' imports rewritten, and a module would then be valid only as
//!   part of the whole.

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

/// The node driver's modules in load order (each `require`s only those before it); `main` is the
/// entry point.
pub(crate) const NODE_MODULES: &[(&str, &str)] = &[
    ("bounds", include_str!("driver/node/bounds.js")),
    ("wire", include_str!("driver/node/wire.js")),
    ("output", include_str!("driver/node/output.js")),
    ("bridge", include_str!("driver/node/bridge.js")),
    ("display", include_str!("driver/node/display.js")),
    ("rewrite", include_str!("driver/node/rewrite.js")),
    ("cell", include_str!("driver/node/cell.js")),
    ("main", include_str!("driver/node/main.js")),
];

/// The node package's folder name (in the cache, as in `src/driver/`).
const NODE_PACKAGE: &str = "node";

/// `sh -c NODE_BOOT <node> <boot script> <args…>`: moves the wire off fd 0, then becomes
/// `node -e <boot script> -- <args…>`.
const NODE_BOOT: &str = "b=$1; shift; exec \"$0\" -e \"$b\" -- \"$@\" 3<&0 </dev/null";

/// Builds the node package from the (name, source) argument pairs that follow it, in order: each
/// module is compiled with the CommonJS wrapper's parameters under the file name
/// `<agent-kernel NAME>` (which keeps the driver's frames out of a cell's traceback), its
/// `require('./x')` answered with the module `x` built before it and any other name with node's
/// own `require`. The arguments are taken off `process.argv` before any cell runs. Both boot
/// scripts are a function's body: a name declared at a script's top level would be a global
/// binding every cell shares (a cell's `const r` would then fail).
const NODE_BOOT_SOURCE: &str = "(()=>{const a=process.argv.splice(1),vm=require('vm'),m={};
const r=(n)=>{if(!n.startsWith('./'))return require(n);const d=m[n.slice(2)];if(!d)throw new Error('agent-kernel driver: '+n+' is not built yet');return d.exports};
for(let i=0;i<a.length;i+=2){const f='<agent-kernel '+a[i]+'>',d={exports:{}};m[a[i]]=d;vm.compileFunction(a[i+1],['exports','require','module','__filename','__dirname'],{filename:f})(d.exports,r,d,f,'<agent-kernel>')}
m.main.exports.run()})()";

/// Requires the driver's `main` from the cache directory passed as the next argument (taken off
/// `process.argv` before any cell runs).
const NODE_BOOT_CACHED: &str =
    "(()=>{const[d]=process.argv.splice(1);require(require('path').join(d,'main.js')).run()})()";

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

/// FNV-1a: a stable hash of a driver, naming its cache directory.
fn stable_hash(data: impl IntoIterator<Item = u8>) -> u64 {
    data.into_iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A driver package as it is written to the cache: its folder's name, its modules (name,
/// source) and their files' extension.
struct Package {
    name: &'static str,
    modules: &'static [(&'static str, &'static str)],
    extension: &'static str,
}

const PYTHON: Package = Package {
    name: PYTHON_PACKAGE,
    modules: PYTHON_MODULES,
    extension: "py",
};

const NODE: Package = Package {
    name: NODE_PACKAGE,
    modules: NODE_MODULES,
    extension: "js",
};

impl Package {
    /// The hash of the package's name and every module's name and source.
    fn hash(&self) -> u64 {
        stable_hash(self.name.bytes().chain([0]).chain(
            self.modules.iter().flat_map(|(name, source)| {
                name.bytes().chain([0]).chain(source.bytes()).chain([0])
            }),
        ))
    }

    /// The package's folder in this build's cache directory, written once per user
    /// (`$XDG_CACHE_HOME` or `~/.cache`, under `agent-tools/`). `None` when it cannot be written;
    /// the driver is then passed as source.
    ///
    /// Each module is written to a temporary name and renamed into place, and the directory is
    /// named by the hash of all of them, so kernels starting at once never see a half-written
    /// module: a file is either missing (and written again by whoever needs it) or complete.
    fn cached(&self) -> Option<PathBuf> {
        let base = std::env::var_os("XDG_CACHE_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache")))?;
        let package = base
            .join("agent-tools")
            .join(format!("kernel-driver-{:016x}", self.hash()))
            .join(self.name);
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        for (name, source) in self.modules {
            let file = package.join(format!("{name}.{}", self.extension));
            if std::fs::read(&file).ok().as_deref() == Some(source.as_bytes()) {
                continue;
            }
            std::fs::create_dir_all(&package).ok()?;
            let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let tmp = package.join(format!("{name}.{}.{n}.tmp", std::process::id()));
            std::fs::write(&tmp, source).ok()?;
            std::fs::rename(&tmp, &file).ok()?;
        }
        Some(package)
    }

    /// The (name, source) argument pairs that pass the package as source, in load order.
    fn as_arguments(&self) -> Vec<OsString> {
        self.modules
            .iter()
            .flat_map(|(name, source)| [OsString::from(name), OsString::from(source)])
            .collect()
    }
}

/// The kernel languages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::IntoStaticStr)]
#[strum(serialize_all = "snake_case")]
pub(crate) enum Lang {
    Python,
    Javascript,
}

impl Lang {
    pub(crate) fn as_str(self) -> &'static str {
        self.into()
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
            let cached = if sandboxed { None } else { PYTHON.cached() };
            // the package's parent folder goes on `sys.path`
            let args = match cached.as_deref().and_then(Path::parent) {
                Some(dir) => vec!["-c".into(), PYTHON_BOOT_CACHED.into(), dir.into()],
                None => {
                    let mut args: Vec<OsString> = vec!["-c".into(), PYTHON_BOOT_SOURCE.into()];
                    args.extend(PYTHON.as_arguments());
                    args
                }
            };
            (program.clone(), args)
        }
        // node cannot move its own descriptors, so `sh` does it before exec'ing node: the wire
        // comes in on fd 3 and fd 0 is /dev/null, so that a child started with inherited stdio
        // (`execSync(cmd, {stdio: 'inherit'})`) cannot read the host's messages.
        Lang::Javascript => {
            let cached = if sandboxed { None } else { NODE.cached() };
            let mut args: Vec<OsString> = vec!["-c".into(), NODE_BOOT.into(), program.clone()];
            match cached {
                Some(dir) => {
                    args.push(NODE_BOOT_CACHED.into());
                    args.push(dir.into());
                }
                None => {
                    args.push(NODE_BOOT_SOURCE.into());
                    args.extend(NODE.as_arguments());
                }
            }
            (OsString::from("sh"), args)
        }
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

    #[test]
    fn the_node_modules_are_listed_once_each_in_load_order_with_main_last() {
        let names: Vec<&str> = NODE_MODULES.iter().map(|(n, _)| *n).collect();
        assert_eq!(names.last(), Some(&"main"));
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len());
        // every module requires only modules listed before it (the source boot builds them in
        // order), and each names its job in its first line
        for (i, (name, source)) in NODE_MODULES.iter().enumerate() {
            assert!(
                source.starts_with("// ") && source.lines().next().unwrap_or("").len() > 20,
                "{name}.js: the first line should be a comment saying its job"
            );
            for (at, _) in source.match_indices("require('./") {
                let rest = &source[at + "require('./".len()..];
                let m = rest.split('\'').next().unwrap_or("");
                let pos = names.iter().position(|n| *n == m);
                assert!(
                    pos.is_some_and(|p| p < i),
                    "{name}.js requires `./{m}`, which is not a module listed before it"
                );
            }
        }
        // every file in the package directory is listed
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/driver/node");
        let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| {
                let name = e.unwrap().file_name().into_string().unwrap();
                name.strip_suffix(".js").map(str::to_string)
            })
            .collect();
        on_disk.sort_unstable();
        let mut listed: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        listed.sort_unstable();
        assert_eq!(on_disk, listed);
    }
}
