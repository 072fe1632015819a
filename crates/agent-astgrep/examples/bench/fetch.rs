//! Fetching the corpora (cached under `<workspace>/target/bench-astgrep/`), and running a
//! command to completion.

use std::path::{Path, PathBuf};
use std::time::Duration;

pub(crate) const DJANGO: &str = "django==5.1.4";
pub(crate) const TYPESCRIPT: &str = "typescript@5.6.3";

pub(crate) fn workspace() -> PathBuf {
    // Set by `cargo run` for this run; the compile-time value names the checkout that built the
    // binary, another one when two checkouts share a target directory.
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from)
        .join("../..")
        .canonicalize()
        .unwrap()
}

pub(crate) async fn run(program: &str, args: &[&str], cwd: &Path) -> Result<Vec<u8>, String> {
    let out = agent_proc::Command::new(&agent_proc::Launcher::host(), program)
        .args(args)
        .current_dir(cwd)
        .output(Duration::from_secs(900))
        .await
        .map_err(|e| format!("`{program} {}`: {e}", args.join(" ")))?;
    // ast-grep, like grep, exits 1 when nothing matched.
    let no_match = out.status.code() == Some(1) && out.stderr.is_empty();
    if !out.status.success() && !no_match {
        return Err(format!(
            "`{program} {}` exited with {}: {}",
            args.join(" "),
            out.status,
            out.stderr
                .lines()
                .rev()
                .take(5)
                .collect::<Vec<_>>()
                .join(" | ")
        ));
    }
    Ok(out.stdout)
}

pub(crate) fn find_program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .chain([workspace().join(".tools/node/node_modules/.bin").join(name)])
        .find(|p| p.is_file())
}

pub(crate) fn untar(
    archive: &Path,
    into: &Path,
) -> impl std::future::Future<Output = Result<Vec<u8>, String>> {
    let archive = archive.display().to_string();
    let into = into.to_path_buf();
    async move {
        std::fs::create_dir_all(&into).map_err(|e| e.to_string())?;
        run(
            "tar",
            &["xzf", &archive, "-C", &into.display().to_string()],
            &into,
        )
        .await
    }
}

pub(crate) async fn fetch_django(cache: &Path) -> Result<PathBuf, String> {
    // `cargo xtask setup`'s copy, when there is one.
    if let Ok(dir) = first_subdir(&workspace().join(".tools/corpora"))
        && dir.join("django").is_dir()
    {
        return Ok(dir);
    }
    let dest = cache.join("django");
    if dest.join(".done").exists() {
        return first_subdir(&dest);
    }
    let dl = cache.join("download");
    std::fs::create_dir_all(&dl).map_err(|e| e.to_string())?;
    let python = std::env::var_os("AGENT_TOOLS_VENV")
        .map(|v| PathBuf::from(v).join("bin/python"))
        .filter(|p| p.is_file())
        .or_else(|| {
            let p = workspace().join(".tools/venv/bin/python");
            p.is_file().then_some(p)
        })
        .unwrap_or_else(|| PathBuf::from("python3"));
    eprintln!("fetching {DJANGO} (sdist) from PyPI …");
    run(
        &python.display().to_string(),
        &[
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--no-binary",
            ":all:",
            DJANGO,
            "-d",
            &dl.display().to_string(),
        ],
        cache,
    )
    .await?;
    let archive = std::fs::read_dir(&dl)
        .map_err(|e| e.to_string())?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().to_lowercase().starts_with("django-"))
        })
        .ok_or("pip downloaded no django archive")?;
    untar(&archive, &dest).await?;
    std::fs::write(dest.join(".done"), "").map_err(|e| e.to_string())?;
    first_subdir(&dest)
}

pub(crate) async fn fetch_typescript(cache: &Path) -> Result<PathBuf, String> {
    // The typescript package `cargo xtask setup` installed, when there is one.
    let local = workspace().join(".tools/node/node_modules/typescript");
    if local.join("lib").is_dir() {
        return Ok(local);
    }
    let dest = cache.join("typescript");
    if dest.join(".done").exists() {
        return Ok(dest.join("package"));
    }
    let dl = cache.join("download");
    std::fs::create_dir_all(&dl).map_err(|e| e.to_string())?;
    let npm = find_program("npm").ok_or("`npm` is not on PATH")?;
    eprintln!("fetching {TYPESCRIPT} from npm …");
    let out = run(
        &npm.display().to_string(),
        &[
            "pack",
            "--silent",
            TYPESCRIPT,
            "--pack-destination",
            &dl.display().to_string(),
        ],
        &dl,
    )
    .await?;
    let name = String::from_utf8_lossy(&out)
        .trim()
        .lines()
        .last()
        .unwrap_or("")
        .to_string();
    untar(&dl.join(name), &dest).await?;
    std::fs::write(dest.join(".done"), "").map_err(|e| e.to_string())?;
    Ok(dest.join("package"))
}

pub(crate) fn cargo_registry() -> Result<PathBuf, String> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .ok_or("neither CARGO_HOME nor HOME is set")?;
    // crates.io's sources (another registry's folder, such as a local one, may sort first).
    let src = home.join("registry/src");
    let index = std::fs::read_dir(&src)
        .map_err(|e| format!("{}: {e}", src.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("index.crates.io-"))
        });
    index.map_or_else(|| first_subdir(&src), Ok)
}

pub(crate) fn first_subdir(dir: &Path) -> Result<PathBuf, String> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs.into_iter()
        .next()
        .ok_or_else(|| format!("nothing under {}", dir.display()))
}
