//! What `cargo test --no-run --message-format=json` says, read through declared types: the test
//! executables it built, and the errors it rendered. A line of another shape (cargo's other
//! messages, a build script's output) is skipped.

use serde::Deserialize;
use std::path::PathBuf;

/// Characters of rendered errors kept (the first errors are the ones to fix).
const ERRORS_KEPT: usize = 2000;

/// One test executable cargo reported.
pub(super) struct Artifact {
    pub executable: PathBuf,
    /// `lib demo`, `test api`, `bin demo`.
    pub target: String,
}

/// One line of cargo's JSON output, of the kinds read here.
#[derive(Deserialize)]
#[serde(tag = "reason", rename_all = "kebab-case")]
enum Line {
    CompilerArtifact {
        profile: Profile,
        executable: Option<PathBuf>,
        target: Target,
    },
    CompilerMessage {
        message: Diagnostic,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct Profile {
    test: bool,
}

/// The target an artifact was built for: its kinds (`lib`, `test`, `bin`) and name.
#[derive(Deserialize)]
struct Target {
    kind: Vec<String>,
    name: String,
}

#[derive(Deserialize)]
struct Diagnostic {
    level: String,
    rendered: Option<String>,
}

/// The test executables and the rendered errors (the first [`ERRORS_KEPT`] characters or so)
/// of cargo's JSON output.
pub(super) fn read(stdout: &str) -> (Vec<Artifact>, String) {
    let mut artifacts = Vec::new();
    let mut errors = String::new();
    for msg in stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Line>(l).ok())
    {
        match msg {
            Line::CompilerArtifact {
                profile: Profile { test: true },
                executable: Some(executable),
                target,
            } => {
                let kind = target.kind.first().map_or("test", String::as_str);
                artifacts.push(Artifact {
                    executable,
                    target: format!("{kind} {}", target.name),
                });
            }
            Line::CompilerMessage { message } if message.level == "error" => {
                if errors.len() < ERRORS_KEPT
                    && let Some(r) = message.rendered
                {
                    errors.push_str(&r);
                }
            }
            _ => {}
        }
    }
    (artifacts, errors)
}

#[cfg(test)]
mod tests {
    use super::read;

    #[test]
    fn test_executables_and_errors_are_read_the_rest_skipped() {
        let out = [
            r#"{"reason":"compiler-artifact","package_id":"demo","profile":{"test":true,"opt_level":"0"},"target":{"kind":["lib"],"name":"demo"},"executable":"/t/deps/demo-1"}"#,
            r#"{"reason":"compiler-artifact","profile":{"test":false},"target":{"kind":["lib"],"name":"dep"},"executable":null}"#,
            r#"{"reason":"compiler-artifact","profile":{"test":true},"target":{"kind":["test"],"name":"api"},"executable":"/t/deps/api-2"}"#,
            r#"{"reason":"build-script-executed","package_id":"x"}"#,
            r#"{"reason":"compiler-message","message":{"level":"warning","rendered":"warning: unused\n"}}"#,
            r#"{"reason":"compiler-message","message":{"level":"error","rendered":"error[E0425]: x\n"}}"#,
            "not json",
            r#"{"reason":"build-finished","success":false}"#,
        ]
        .join("\n");
        let (artifacts, errors) = read(&out);
        let got: Vec<(String, String)> = artifacts
            .iter()
            .map(|a| (a.executable.display().to_string(), a.target.clone()))
            .collect();
        assert_eq!(
            got,
            [
                ("/t/deps/demo-1".to_string(), "lib demo".to_string()),
                ("/t/deps/api-2".to_string(), "test api".to_string())
            ]
        );
        assert_eq!(errors, "error[E0425]: x\n");
    }
}
