//! `agent-tools repl`: an interactive console on a root. It prints what is attached (as
//! `doctor`), then reads tool calls `name {json}` line by line, runs them through the registry
//! and prints the results, escaped for the terminal as every command's output is. With stdin not
//! a TTY it reads calls line by line (for scripts). When its reader goes away (`… | head`) it
//! stops quietly.

use crate::args::Common;
use crate::out;
use agent_tools_cli::host;
use serde_json::Value;
use std::io::IsTerminal;
use std::process::ExitCode;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// A call line whose arguments are not JSON.
#[derive(Debug, thiserror::Error)]
#[error(
    "the arguments of `{name}` are not valid JSON ({source}); write `{name} {{\"key\": \"value\"}}`"
)]
pub struct NotJson {
    name: String,
    source: serde_json::Error,
}

/// Split `name {json}` into the tool name and its arguments.
pub fn parse_line(line: &str) -> Result<(String, Value), NotJson> {
    let line = line.trim();
    let (name, rest) = match line.find(char::is_whitespace) {
        Some(i) => (&line[..i], line[i..].trim()),
        None => (line, ""),
    };
    let args = if rest.is_empty() {
        Value::Object(Default::default())
    } else {
        serde_json::from_str(rest).map_err(|source| NotJson {
            name: name.to_string(),
            source,
        })?
    };
    Ok((name.to_string(), args))
}

pub async fn run(common: Common) -> ExitCode {
    let registry = host::terminal_registry(&common.host());
    let interactive = std::io::stdin().is_terminal();
    let mut stdout = tokio::io::stdout();
    let banner = format!(
        "{}surface: {}; tools: {}\ntype `TOOL {{json}}` (e.g. `read {{\"path\": \"README.md\"}}`), `tools`, or `quit`\n",
        host::doctor_text(&common.root),
        common.surface,
        registry
            .list(common.surface)
            .iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut written = write(&mut stdout, &banner).await;
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    let mut failures = 0u32;
    while written.is_ok() {
        if interactive {
            written = write(&mut stdout, "> ").await;
        }
        let Ok(Some(line)) = lines.next_line().await else {
            break;
        };
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if trimmed == "quit" || trimmed == "exit" {
            break;
        }
        if trimmed == "tools" {
            let names: Vec<String> = registry
                .list(common.surface)
                .into_iter()
                .map(|t| format!("{} ({})", t.name, t.tier))
                .collect();
            written = write(&mut stdout, &format!("{}\n", names.join(", "))).await;
            continue;
        }
        let text = match parse_line(trimmed) {
            Ok((name, args)) => {
                let res = registry.call(&name, args, common.surface).await;
                if res.is_error {
                    failures += 1;
                    format!("error: {}\n", res.text)
                } else {
                    format!("{}\n", res.text)
                }
            }
            Err(e) => {
                failures += 1;
                format!("error: {e}\n")
            }
        };
        written = write(&mut stdout, &text).await;
    }
    let code = if failures > 0 && !interactive {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    };
    out::finish(written, code)
}

/// Write as the terminal is given it ([`out::shown`]: control characters, C1 and bidi overrides
/// escaped) and flush; the caller stops at the first failure (a reader gone away included).
async fn write(stdout: &mut tokio::io::Stdout, text: &str) -> std::io::Result<()> {
    stdout.write_all(out::shown(text).as_bytes()).await?;
    stdout.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_calls() {
        assert_eq!(
            parse_line("read {\"path\": \"a\"}").unwrap(),
            ("read".to_string(), serde_json::json!({"path": "a"}))
        );
        assert_eq!(
            parse_line("vibe_list").unwrap(),
            ("vibe_list".to_string(), serde_json::json!({}))
        );
        assert!(
            parse_line("read {oops")
                .unwrap_err()
                .to_string()
                .contains("not valid JSON")
        );
    }
}
