//! Running the `ast-grep` CLI and reading its `--json=stream` output.

use crate::Key;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

/// What ast-grep printed: its matches as the same keys (its lines and columns, in characters,
/// are 0-based), and the lines of its `--json=stream` output that are not a match we could
/// read (counted, never dropped silently: a row with any is not "same").
#[derive(Default)]
pub(crate) struct SgOut {
    pub(crate) keys: BTreeSet<Key>,
    /// Lines that are not JSON, or JSON without a file and a start position.
    pub(crate) unparsed: usize,
    /// The first of them, shortened.
    pub(crate) first_unparsed: Option<String>,
}

pub(crate) fn parse_stream(out: &[u8]) -> SgOut {
    let mut sg = SgOut::default();
    for line in out.split(|&b| b == b'\n') {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let key = serde_json::from_slice::<Value>(line).ok().and_then(|v| {
            let file = v["file"].as_str()?.trim_start_matches("./").to_string();
            let row = v["range"]["start"]["line"].as_u64()? as usize;
            let col = v["range"]["start"]["column"].as_u64()? as usize;
            Some((file, row + 1, col + 1))
        });
        match key {
            Some(k) => {
                sg.keys.insert(k);
            }
            None => {
                sg.unparsed += 1;
                sg.first_unparsed.get_or_insert_with(|| {
                    let text = String::from_utf8_lossy(line);
                    let head: String = text.chars().take(100).collect();
                    format!("{} bytes: {head}", line.len())
                });
            }
        }
    }
    sg
}

/// Run ast-grep to completion, reading all of its stdout. (`agent_proc`'s `output` keeps only
/// the first 32 MiB of stdout and then closes the pipe; ast-grep then stops quietly with
/// status 0. Its stream for `let $A = $B;` on the cargo registry is ~49 MB, so the last line
/// kept was cut in the middle: that was the bench's "truncated line", and ast-grep's time for
/// that row was the time to write 32 MiB, not the whole search.)
pub(crate) async fn run_sg(sg: &Path, args: &[&str], cwd: &Path) -> Result<Vec<u8>, String> {
    use tokio::io::AsyncReadExt;
    let what = || format!("`{} {}`", sg.display(), args.join(" "));
    let child = agent_proc::Command::new(&agent_proc::Launcher::host(), sg)
        .args(args)
        .current_dir(cwd)
        .spawn()
        .await
        .map_err(|e| format!("{}: {e}", what()))?;
    let mut stdout = child.take_stdout().ok_or("no stdout pipe")?;
    let mut out = Vec::new();
    let read = stdout.read_to_end(&mut out).await;
    let status = child.wait_exit().await.map_err(|e| e.to_string())?;
    child.stderr_closed(Duration::from_secs(2)).await;
    let stderr = child.stderr().text();
    read.map_err(|e| format!("{}: reading its stdout: {e}", what()))?;
    // ast-grep, like grep, exits 1 when nothing matched.
    let no_match = status.code() == Some(1) && stderr.trim().is_empty();
    if !status.success() && !no_match {
        return Err(format!("{} exited with {status}: {stderr}", what()));
    }
    Ok(out)
}
