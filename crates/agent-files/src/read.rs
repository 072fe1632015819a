//! `read`: a window of a file's lines, numbered the way every position-taking tool counts them
//! ([`agent_tier::lines`]: a line ends at `\n`, `\r\n` or a lone `\r`).
//!
//! The file is streamed line by line: memory is bounded by what is returned, whatever the file's
//! size, and the time by the bytes one call may scan ([`SCAN_CAP`], from the file's start),
//! however far the window lies or however long a line runs (a sparse file's hole is one line of
//! NUL bytes). A call that reaches the cap stops and says where.

use agent_tier::display::clip_path;
use agent_tier::lines;
use agent_tier::workspace;
use agent_tier::{BoxError, CallContext, Hints, Report, Tier, Tool, ToolOutput};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// Most bytes of text one call returns.
const BYTES_CAP: usize = 256 * 1024;
/// Lines returned when `limit` is not given.
const DEFAULT_LIMIT: u32 = 2000;
/// Longest line shown whole; longer lines are cut with a note.
const LINE_CAP: usize = 2000;
/// Most bytes of the file one call scans, from its start: lines past it are out of reach.
pub(crate) const SCAN_CAP: u64 = 64 * 1024 * 1024;
/// The bytes of a file's start looked at to tell a binary file: one with a NUL byte there.
pub(crate) const SNIFF: u64 = 8192;
/// How many directory entries the refusal of a directory lists.
const LISTING: usize = 50;

pub(crate) struct ReadTool;

/// Arguments of `read`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReadArgs {
    /// Workspace-relative file.
    #[serde(alias = "file", alias = "file_path")]
    path: String,
    /// First line, 1-based (default 1).
    #[schemars(range(min = 1))]
    offset: Option<u64>,
    /// Lines to return (default 2000).
    #[schemars(range(min = 1))]
    limit: Option<u32>,
}

impl Tool for ReadTool {
    type Args = ReadArgs;
    fn name(&self) -> &str {
        "read"
    }
    fn hints(&self) -> Hints {
        Hints::query()
    }
    fn tier(&self) -> Tier {
        Tier::Read
    }
    fn description(&self) -> String {
        "Look at a text file. Lines come numbered `N| text`, 1-based as lsp, debug and ast_grep count them; `offset` and `limit` count lines. At most 2000 lines or 256 KiB a call; the end says how many lines remain and the `offset` to continue from.".into()
    }
    fn parallel_safe(&self) -> bool {
        true
    }
    async fn call(&self, args: ReadArgs, cx: CallContext) -> Result<ToolOutput, BoxError> {
        let root = cx.run().root.clone();
        crate::off_thread(move || read(&root, args)).await
    }
}

fn read(root: &Path, args: ReadArgs) -> Result<ToolOutput, BoxError> {
    let path = workspace::confine_existing(root, "path", &args.path)?;
    if path.is_dir() {
        return Err(directory(root, &path, &args.path).into());
    }
    let offset = args.offset.unwrap_or(1);
    let limit = args.limit.unwrap_or(DEFAULT_LIMIT);
    if offset == 0 || limit == 0 {
        return Err(
            "`offset` and `limit` count lines from 1; give `offset` >= 1 and `limit` >= 1".into(),
        );
    }
    // Regular files only, and the open never blocks (a FIFO is refused, not waited on).
    let (file, size) = workspace::open_regular(root, &path)
        .map_err(|e| format!("`path` = `{}`: {e}", clip_path(&args.path)))?;
    let mut reader = BufReader::new(file);
    let mut head = Vec::new();
    (&mut reader).take(SNIFF).read_to_end(&mut head)?;
    if is_binary(&head) {
        return Ok(ToolOutput::text(format!(
            "{} is a binary file ({size} bytes); not shown",
            clip_path(&args.path)
        )));
    }
    let mut reader = BufReader::new(std::io::Cursor::new(head).chain(reader)).take(SCAN_CAP);
    let window = Window::collect(&mut reader, offset, limit)?;
    let report = ReadReport {
        path: workspace::display_path(root, &path),
        offset,
        lines: window.shown,
        more: window.more,
        size,
        stopped_at_byte: window.stopped.map(|_| SCAN_CAP),
        numbered: window.text,
        lines_seen: window.lines_seen,
        stopped: window.stopped,
    };
    Ok(ToolOutput::report(&report))
}

/// The result of `read` of a text file (a binary file's is a line of text only).
#[derive(Serialize, JsonSchema)]
struct ReadReport {
    /// The file, relative to the root.
    path: String,
    /// The first line shown, 1-based.
    offset: u64,
    /// How many lines are shown.
    lines: u64,
    /// Whether more lines follow the window.
    more: bool,
    /// The file's size in bytes.
    size: u64,
    /// Where the scan stopped, when a line had not ended by the most bytes one call scans.
    #[serde(skip_serializing_if = "Option::is_none")]
    stopped_at_byte: Option<u64>,
    /// The lines shown, numbered `N| text`.
    #[serde(skip)]
    numbered: String,
    /// Lines read before the window ended.
    #[serde(skip)]
    lines_seen: u64,
    /// The line the scan stopped in, unfinished.
    #[serde(skip)]
    stopped: Option<u64>,
}

impl Report for ReadReport {
    fn text(&self) -> String {
        let (rel, offset, size) = (&self.path, self.offset, self.size);
        let last = offset + self.lines.saturating_sub(1);
        let tail = match (self.stopped, self.lines, self.more) {
            (Some(line), 0, _) => format!(
                "[stopped: read scans at most {SCAN_CAP} bytes of a file from its start ({}), and line {line} of {rel} had not ended by then ({size} bytes in all), so `offset` {offset} is out of reach; nothing past byte {SCAN_CAP} can be read with `read` (a sparse or binary file's rest has no lines to show)]",
                mib(SCAN_CAP)
            ),
            (Some(line), _, _) => format!(
                "[lines {offset}–{last} of {rel} shown; stopped: line {line} had not ended when {} ({SCAN_CAP} bytes, the most read scans from a file's start) were read, of {size} bytes; nothing past byte {SCAN_CAP} can be read with `read` (a sparse or binary file's rest has no lines to show)]",
                mib(SCAN_CAP)
            ),
            (None, 0, _) => format!(
                "[{rel} has {} line(s); `offset` {offset} is past its end]",
                self.lines_seen
            ),
            (None, _, false) if offset == 1 => format!("[{rel}: all {last} line(s)]"),
            (None, _, false) => format!("[end of {rel}: lines {offset}–{last} of {last}]"),
            (None, _, true) => format!(
                "[lines {offset}–{last} of {rel} shown; more follow: continue with `offset` {}]",
                last + 1
            ),
        };
        let mut text = self.numbered.clone();
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&tail);
        text
    }
}

/// Whether a file whose first [`SNIFF`] bytes are `head` is binary (`read` does not show it,
/// `grep` does not search it).
pub(crate) fn is_binary(head: &[u8]) -> bool {
    head.contains(&0)
}

/// `n` bytes in MiB, for a note.
fn mib(n: u64) -> String {
    format!("{} MiB", n >> 20)
}

/// The numbered lines of one window.
struct Window {
    text: String,
    shown: u64,
    more: bool,
    /// Lines read before the window ended (all of them when the window starts past the end).
    lines_seen: u64,
    /// The line the scan cap ended in, unfinished (none shown of it): the call stopped there.
    stopped: Option<u64>,
}

impl Window {
    /// The window of `limit` lines from line `offset`, read from `reader`, which ends at the
    /// scan cap: a line it ends in the middle of is not shown, and the window says it stopped.
    fn collect<R: BufRead>(
        reader: &mut std::io::Take<R>,
        offset: u64,
        limit: u32,
    ) -> std::io::Result<Window> {
        let mut window = Window {
            text: String::new(),
            shown: 0,
            more: false,
            lines_seen: 0,
            stopped: None,
        };
        let mut line = Vec::new();
        let mut n = 0u64;
        loop {
            line.clear();
            // A line is read whole only inside the window; before it, it is skipped in chunks.
            let (read, ended) = if n + 1 < offset {
                lines::skip_line(reader)?
            } else {
                lines::read_line(reader, &mut line, LINE_CAP * 4 + 1)?
            };
            if read == 0 {
                if capped(reader)? {
                    window.stopped = Some(n + 1);
                }
                window.lines_seen = n;
                return Ok(window);
            }
            n += 1;
            let cut_whole_line = !ended && line.len() > LINE_CAP * 4;
            // The rest of an over-long line is skipped, not held.
            let ended = ended || (cut_whole_line && lines::skip_line(reader)?.1);
            if !ended && capped(reader)? {
                window.stopped = Some(n);
                window.lines_seen = n - 1;
                return Ok(window);
            }
            if n < offset {
                continue;
            }
            if window.shown == u64::from(limit) || window.text.len() >= BYTES_CAP {
                window.more = true;
                window.lines_seen = n;
                return Ok(window);
            }
            let body = String::from_utf8_lossy(&line);
            let chars = body.chars().count();
            if chars > LINE_CAP || cut_whole_line {
                let kept: String = body.chars().take(LINE_CAP).collect();
                window.text.push_str(&format!(
                    "{n}| {kept} […line cut at {LINE_CAP} characters]\n"
                ));
            } else {
                window.text.push_str(&format!("{n}| {body}\n"));
            }
            window.shown += 1;
        }
    }
}

/// Whether the scan stopped at the cap with more of the file after it.
fn capped<R: BufRead>(reader: &mut std::io::Take<R>) -> std::io::Result<bool> {
    Ok(reader.limit() == 0 && !reader.get_mut().fill_buf()?.is_empty())
}

/// The refusal of a directory, with a listing so the next call can name a file.
fn directory(root: &Path, path: &Path, arg: &str) -> String {
    let mut names: Vec<String> = std::fs::read_dir(path)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| {
                    let mut name = e.file_name().to_string_lossy().into_owned();
                    if e.file_type().is_ok_and(|t| t.is_dir()) {
                        name.push('/');
                    }
                    name
                })
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let total = names.len();
    names.truncate(LISTING);
    let rel = workspace::display_path(root, path);
    let more = if total > LISTING {
        format!(" … and {} more", total - LISTING)
    } else {
        String::new()
    };
    format!(
        "`path` = `{}` is a directory; give a file in it. {rel}/ holds: {}{more}",
        clip_path(arg),
        if names.is_empty() {
            "nothing".to_string()
        } else {
            names.join(", ")
        }
    )
}
