//! Only the binary parses flags: no module of the library (`src/lib.rs` and the modules it
//! declares) uses `clap` or `shell_words`, and both are optional dependencies of the `cli`
//! feature that the binary requires, so a program that embeds the library builds neither.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

use std::path::{Path, PathBuf};

const CRATES: [&str; 2] = ["clap", "shell_words"];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The modules a crate root declares (`mod x;`, `pub mod x;`, cfg-gated or not).
fn declared(root: &str) -> Vec<String> {
    root.lines()
        .map(str::trim)
        .filter_map(|l| {
            let l = l.strip_prefix("pub ").unwrap_or(l);
            Some(l.strip_prefix("mod ")?.strip_suffix(';')?.to_string())
        })
        .collect()
}

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            rs_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The files of the library: `lib.rs`, and for each module it declares `m.rs` and `m/**`.
fn library_files() -> Vec<PathBuf> {
    let src = src();
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    let mut files = vec![src.join("lib.rs")];
    for m in declared(&lib) {
        let file = src.join(format!("{m}.rs"));
        if file.is_file() {
            files.push(file);
        }
        rs_files(&src.join(&m), &mut files);
    }
    files
}

/// The first line of `code` (comments aside) that names one of [`CRATES`] as a path, and the
/// crate it names.
fn flag_parsing(code: &str) -> Option<(&'static str, String)> {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    code.lines()
        .map(str::trim)
        .filter(|l| !l.starts_with("//"))
        .find_map(|l| {
            CRATES.into_iter().find_map(|krate| {
                l.match_indices(krate)
                    .any(|(i, _)| {
                        let before = l[..i].chars().last();
                        let after = &l[i + krate.len()..];
                        !before.is_some_and(ident)
                            && (after.starts_with("::") || after.starts_with(';'))
                    })
                    .then(|| (krate, l.to_string()))
            })
        })
}

#[test]
fn the_check_sees_a_use_and_a_path() {
    assert_eq!(
        flag_parsing("use clap::Parser;").map(|(k, _)| k),
        Some("clap")
    );
    assert_eq!(
        flag_parsing("let w = shell_words::split(t);").map(|(k, _)| k),
        Some("shell_words")
    );
    assert_eq!(
        flag_parsing("extern crate clap;").map(|(k, _)| k),
        Some("clap")
    );
    assert_eq!(flag_parsing("// clap::Parser in prose"), None);
    assert_eq!(flag_parsing("let no_clap::x = 1;"), None);
    assert_eq!(flag_parsing("`clap` and `shell-words` stay out"), None);
    assert_eq!(
        declared("#[cfg(feature = \"ask\")]\npub mod ask;\nmod error;\nuse x;"),
        ["ask", "error"]
    );
}

#[test]
fn no_library_module_uses_clap_or_shell_words() {
    let files = library_files();
    assert!(files.len() >= 8, "{files:?}");
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        if let Some((krate, line)) = flag_parsing(&text) {
            panic!(
                "{} uses `{krate}` (`{line}`): flags are parsed by the binary (src/main.rs and the modules it declares); give the library typed options",
                f.display()
            );
        }
    }
    // The binary's modules are its own: none is a module of the library too.
    let main = std::fs::read_to_string(src().join("main.rs")).unwrap();
    let lib = declared(&std::fs::read_to_string(src().join("lib.rs")).unwrap());
    for m in declared(&main) {
        assert!(
            !lib.contains(&m),
            "`{m}` is a module of the library and the binary"
        );
    }
}

#[test]
fn flag_parsing_crates_are_the_binarys_feature_only() {
    let manifest =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml")).unwrap();
    let section = |name: &str| -> String {
        let start = manifest
            .find(&format!("\n[{name}]\n"))
            .unwrap_or_else(|| panic!("no [{name}]"));
        let rest = &manifest[start + name.len() + 4..];
        rest[..rest.find("\n[").unwrap_or(rest.len())].to_string()
    };
    let deps = section("dependencies");
    for dep in ["clap", "shell-words"] {
        let line = deps
            .lines()
            .find(|l| l.starts_with(&format!("{dep} ")) || l.starts_with(&format!("{dep}.")))
            .unwrap_or_else(|| panic!("{dep} is not a dependency"));
        assert!(
            line.contains("optional = true"),
            "{dep} must be optional (the `cli` feature's): `{line}`"
        );
    }
    let features = section("features");
    let cli = features
        .lines()
        .find(|l| l.starts_with("cli = ["))
        .unwrap_or_else(|| panic!("no `cli` feature in {features}"));
    for dep in ["clap", "shell-words"] {
        assert!(
            cli.contains(&format!("\"dep:{dep}\"")),
            "the `cli` feature must enable {dep}: {cli}"
        );
    }
    assert!(
        section("[bin]").contains("required-features = [\"cli\"]"),
        "the binary must require `cli`"
    );
}
