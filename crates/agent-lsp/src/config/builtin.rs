//! The built-in server table: which servers serve which languages, how each starts, its root
//! markers and how to install it.

use crate::config::{ServerSpec, Untrusted};
use serde_json::{Value, json};
use std::collections::BTreeMap;
fn ext(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn spec(
    id: &str,
    language: &str,
    commands: Vec<Vec<String>>,
    extensions: BTreeMap<String, String>,
    markers: &[&str],
    install: &str,
) -> ServerSpec {
    ServerSpec {
        id: id.into(),
        language: language.into(),
        commands,
        extensions,
        root_markers: strs(markers),
        init_options: Value::Null,
        settings: Value::Null,
        env: BTreeMap::new(),
        install: install.into(),
        open_settle_ms: 0,
        untrusted: Default::default(),
    }
}

const PY_MARKERS: &[&str] = &[
    "pyproject.toml",
    "pyrightconfig.json",
    "setup.py",
    "setup.cfg",
    "requirements.txt",
    "Pipfile",
];

/// The built-in server table.
pub fn builtin_servers() -> Vec<ServerSpec> {
    let py = ext(&[("py", "python"), ("pyi", "python")]);
    let mut clangd_cmds = vec![strs(&["clangd"])];
    for v in (14..=22).rev() {
        clangd_cmds.push(vec![format!("clangd-{v}")]);
    }
    let mut v = vec![
        spec(
            "rust-analyzer",
            "rust",
            vec![strs(&["rust-analyzer"])],
            ext(&[("rs", "rust")]),
            &["Cargo.toml"],
            "rustup component add rust-analyzer",
        ),
        spec(
            "pyright",
            "python",
            vec![strs(&["pyright-langserver", "--stdio"])],
            py.clone(),
            PY_MARKERS,
            "npm install -g pyright",
        ),
        spec(
            "basedpyright",
            "python",
            vec![strs(&["basedpyright-langserver", "--stdio"])],
            py.clone(),
            PY_MARKERS,
            "pip install basedpyright",
        ),
        spec(
            "ty",
            "python",
            vec![strs(&["ty", "server"])],
            py.clone(),
            PY_MARKERS,
            "pip install ty",
        ),
        spec(
            "pylsp",
            "python",
            vec![strs(&["pylsp"])],
            py,
            PY_MARKERS,
            "pip install python-lsp-server",
        ),
        spec(
            "typescript-language-server",
            "typescript",
            vec![strs(&["typescript-language-server", "--stdio"])],
            ext(&[
                ("ts", "typescript"),
                ("tsx", "typescriptreact"),
                ("mts", "typescript"),
                ("cts", "typescript"),
                ("js", "javascript"),
                ("jsx", "javascriptreact"),
                ("mjs", "javascript"),
                ("cjs", "javascript"),
            ]),
            &["tsconfig.json", "jsconfig.json", "package.json"],
            "npm install -g typescript-language-server typescript@6",
        ),
        spec(
            "clangd",
            "c",
            clangd_cmds,
            ext(&[
                ("c", "c"),
                ("h", "c"),
                ("cc", "cpp"),
                ("cpp", "cpp"),
                ("cxx", "cpp"),
                ("hpp", "cpp"),
                ("hh", "cpp"),
                ("hxx", "cpp"),
            ]),
            &[
                "compile_commands.json",
                "compile_flags.txt",
                ".clangd",
                "CMakeLists.txt",
                "Makefile",
                "meson.build",
            ],
            "apt install clangd-19",
        ),
        spec(
            "gopls",
            "go",
            vec![strs(&["gopls"])],
            ext(&[("go", "go")]),
            &["go.work", "go.mod"],
            "apt install gopls golang-go",
        ),
        spec(
            "dart",
            "dart",
            vec![strs(&["dart", "language-server", "--protocol=lsp"])],
            ext(&[("dart", "dart")]),
            &["pubspec.yaml"],
            "install the Dart SDK (https://dart.dev/get-dart)",
        ),
    ];
    for s in &mut v {
        match s.id.as_str() {
            // Style checkers off: an agent wants errors, not 80 lines of E501.
            "pylsp" => {
                s.settings = json!({"pylsp": {"plugins": {
                    "pycodestyle": {"enabled": false},
                    "mccabe": {"enabled": false},
                    "pydocstyle": {"enabled": false}
                }}})
            }
            "pyright" | "basedpyright" => {
                s.settings = json!({"python": {"analysis": {
                    "autoSearchPaths": true,
                    "useLibraryCodeForTypes": true,
                    "diagnosticMode": "openFilesOnly"
                }}, "basedpyright": {"analysis": {"diagnosticMode": "openFilesOnly"}}})
            }
            // Workspace symbols list functions and methods too, not only types (its default):
            // a name alone is looked up there (`lsp` without `line`).
            "rust-analyzer" => {
                s.init_options =
                    json!({"workspace": {"symbol": {"search": {"kind": "all_symbols"}}}});
                // It compiles and runs the project's build scripts and proc macros when it
                // loads, `cargo check` (build scripts again) on save, and reads the toolchain
                // of whatever project it finds above the root.
                s.untrusted = Untrusted {
                    init_options: json!({"cargo": {"buildScripts": {"enable": false}},
                                         "procMacro": {"enable": false},
                                         "checkOnSave": false}),
                    withheld: Some("rust-analyzer's build scripts, proc macros and check on save (they run the project's code)".into()),
                    linked_cargo_project: true,
                    ..Untrusted::default()
                };
            }
            "typescript-language-server" => {
                s.init_options = json!({"preferences": {
                    "includeCompletionsForModuleExports": false,
                    // A rename at an import renames the symbol, not just the local alias.
                    "providePrefixAndSuffixTextForRename": false
                }});
                s.open_settle_ms = 2000;
                // Automatic type acquisition runs npm to download typings for the project's
                // packages: a program and the network (under Landlock the attempt took
                // tsserver down); and it prefers the project's own TypeScript.
                s.untrusted = Untrusted {
                    init_options: json!({"disableAutomaticTypingAcquisition": true}),
                    host_typescript: true,
                    ..Untrusted::default()
                };
            }
            _ => {}
        }
    }
    v
}

/// The built-in language preference: which server serves a language when several resolve.
///
/// Python: pyright, basedpyright, ty, pylsp — the most complete type-aware server first, the
/// young `ty` and the plugin-based `pylsp` last.
pub fn builtin_languages() -> BTreeMap<String, Vec<String>> {
    let mut m = BTreeMap::new();
    m.insert(
        "python".to_string(),
        strs(&["pyright", "basedpyright", "ty", "pylsp"]),
    );
    m
}
