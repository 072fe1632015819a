//! `grep`: text search with ripgrep's own crates (`grep-regex` compiles the pattern,
//! `grep-searcher` finds the lines, `ignore` walks the tree), its lines numbered as `read`
//! numbers them ([`agent_tier::lines`]: a line ends at `\n`, `\r\n` or a lone `\r`).
//!
//! ripgrep counts `\n` only, so the searcher is used to find the regions that match (its
//! matcher in CRLF mode: `^`, `$` and `.` treat `\r` as a line's end), each region is split
//! into lines by the shared definition and each line matched again, and a line's number comes
//! from its byte offset. The context lines around a match are found the same way.
//!
//! Bounded like `read`: a file is opened only if it is a regular file (never a FIFO or device,
//! never through a symlink), a file whose first 8 KiB hold a NUL byte is binary and skipped,
//! and at most the first [`SCAN_CAP`] bytes of a file are searched (held whole while they are).

use crate::read::{SCAN_CAP, SNIFF, is_binary};
use crate::walk::{self, Pattern, Skipped};
use agent_tier::display::{clip_path, escape};
use agent_tier::lines;
use agent_tier::workspace;
use agent_tier::{BoxError, CallContext, Hints, Report, Tier, Tool, ToolOutput};
use grep_matcher::{LineTerminator, Matcher};
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkMatch};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::io::Read;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// Matching lines shown when `limit` is not given.
const DEFAULT_LIMIT: u32 = 100;
/// The largest `limit` and `context`.
const MAX_LIMIT: u32 = 2000;
const MAX_CONTEXT: u32 = 50;
/// Most bytes of result text; matches past it are counted, not shown.
const BYTES_CAP: usize = 64 * 1024;
/// Characters of one line shown; a longer line is shown around its first match.
const LINE_SHOWN: usize = 300;

pub(crate) struct GrepTool;

/// Arguments of `grep`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GrepArgs {
    /// Regex, or plain text with `literal`.
    #[serde(alias = "regex", alias = "query")]
    pattern: String,
    /// File or folder (default: the root).
    #[serde(alias = "file", alias = "dir", alias = "directory")]
    path: Option<String>,
    /// Only matching files: `*.py`, `src/**/*.rs`.
    #[serde(alias = "include")]
    glob: Option<String>,
    #[serde(alias = "fixed_strings")]
    literal: Option<bool>,
    #[serde(alias = "-i", alias = "case_insensitive")]
    ignore_case: Option<bool>,
    /// Lines around each match.
    #[serde(alias = "-C")]
    context: Option<u32>,
    /// Matching lines shown (default 100).
    #[serde(alias = "head_limit", alias = "max_results")]
    limit: Option<u32>,
}

impl Tool for GrepTool {
    type Args = GrepArgs;
    fn name(&self) -> &str {
        "grep"
    }
    fn hints(&self) -> Hints {
        Hints::query()
    }
    fn tier(&self) -> Tier {
        Tier::Read
    }
    fn description(&self) -> String {
        "Search file text, comments and strings included (.gitignore'd, hidden and binary files skipped). Returns `path:line: text` lines numbered as read numbers them (context: `path-line- text`), with counts.".into()
    }
    fn parallel_safe(&self) -> bool {
        true
    }
    async fn call(&self, args: GrepArgs, cx: CallContext) -> Result<ToolOutput, BoxError> {
        let root = cx.run().root.clone();
        crate::off_thread(move || grep(&root, args)).await
    }
}

fn grep(root: &Path, args: GrepArgs) -> Result<ToolOutput, BoxError> {
    let root = root
        .canonicalize()
        .map_err(|e| format!("cannot open the workspace root: {e}"))?;
    let limit = args.limit.unwrap_or(DEFAULT_LIMIT);
    let context = args.context.unwrap_or(0);
    if limit == 0 || limit > MAX_LIMIT {
        return Err(format!("`limit` counts matching lines shown: give 1 to {MAX_LIMIT}").into());
    }
    if context > MAX_CONTEXT {
        return Err(format!("`context` is at most {MAX_CONTEXT} lines").into());
    }
    if args.pattern.is_empty() {
        return Err("`pattern` is empty; give the text or regex to find".into());
    }
    let matcher = RegexMatcherBuilder::new()
        .case_insensitive(args.ignore_case.unwrap_or(false))
        .fixed_strings(args.literal.unwrap_or(false))
        .multi_line(true)
        .crlf(true)
        .build(&args.pattern)
        .map_err(|e| {
            format!(
                "`pattern` is not a valid regex (for the text itself, set `literal`: true; a match never spans lines): {e}"
            )
        })?;
    let given = args.path.as_deref().unwrap_or(".");
    let given = if given.trim().is_empty() { "." } else { given };
    let target = workspace::confine_existing(&root, "path", given)?;
    let glob = args
        .glob
        .as_deref()
        .map(|g| Pattern::new("glob", g, args.path.as_deref()))
        .transpose()?;
    let mut search = Search {
        root: &root,
        below: workspace::Beneath::open(&root)?,
        matcher,
        searcher: searcher(),
        context: context as usize,
        limit: limit as usize,
        text: String::new(),
        printed_any: false,
        total: 0,
        shown: 0,
        files: 0,
        searched: 0,
        binary: 0,
        cut: 0,
        unreadable: 0,
        first_error: None,
    };
    let meta = target.symlink_metadata()?;
    let skipped = if meta.is_dir() {
        let from = match &glob {
            Some(g) => walk::start(&target, g),
            None => Some(target.clone()),
        };
        match from {
            Some(from) => search.all(&from, &target, glob.as_ref()),
            None => Skipped::default(),
        }
    } else {
        // A file named by `path` is searched whatever the ignore files say, as ripgrep does.
        let (file, size) = workspace::open_regular(&root, &target)
            .map_err(|e| format!("`path` = `{}`: {e}", clip_path(given)))?;
        search.open_file(&target, file, size);
        Skipped::default()
    };
    Ok(ToolOutput::report(&search.finish(&args.pattern, &skipped)))
}

/// The result of `grep`.
#[derive(Serialize, JsonSchema)]
struct Found {
    /// Matching lines found.
    matches: usize,
    /// Matching lines shown.
    shown: usize,
    /// Files with a match.
    files: usize,
    /// Files searched.
    searched: usize,
    /// Files skipped as binary.
    binary: usize,
    /// The lines shown: `path:N: text`, context `path-N- text`.
    #[serde(skip)]
    lines: String,
    /// The pattern, as given.
    #[serde(skip)]
    pattern: String,
    /// What was skipped, cut or unreadable, one note each.
    #[serde(skip)]
    notes: Vec<String>,
}

impl Report for Found {
    fn text(&self) -> String {
        let notes = if self.notes.is_empty() {
            String::new()
        } else {
            format!("; {}", self.notes.join("; "))
        };
        let searched = self.searched;
        let summary = if self.matches == 0 {
            format!(
                "[no match for `{}` in {searched} file(s) searched{notes}; .gitignore'd and hidden files are not searched unless `path` names one]",
                clip_path(&self.pattern)
            )
        } else if self.shown == self.matches {
            format!(
                "[{} matching line(s) in {} file(s); {searched} file(s) searched{notes}]",
                self.matches, self.files
            )
        } else {
            format!(
                "[{} of {} matching lines shown, in {} file(s); {searched} file(s) searched{notes}; narrow `path` or `glob`, or raise `limit`]",
                self.shown, self.matches, self.files
            )
        };
        format!("{}{summary}", self.lines)
    }
}

/// A search in progress: the counts, and the text shown so far.
struct Search<'a> {
    root: &'a Path,
    /// Every file is opened below the root's descriptor, through no symlink.
    below: workspace::Beneath,
    matcher: RegexMatcher,
    searcher: Searcher,
    context: usize,
    limit: usize,
    text: String,
    /// Some line was printed (a `--` separates groups when there is context).
    printed_any: bool,
    /// Matching lines found, and shown.
    total: usize,
    shown: usize,
    /// Files with a match, searched, skipped as binary, searched in their first SCAN_CAP bytes.
    files: usize,
    searched: usize,
    binary: usize,
    cut: usize,
    unreadable: usize,
    first_error: Option<String>,
}

/// One matching line: its byte range (without the terminator) and where its first match starts
/// in it.
struct Hit {
    span: Range<usize>,
    at: usize,
}

/// The sink that re-splits each region the searcher found by the shared line definition.
struct Hits<'m> {
    matcher: &'m RegexMatcher,
    found: Vec<Hit>,
}

impl Sink for Hits<'_> {
    type Error = std::io::Error;
    fn matched(&mut self, _: &Searcher, m: &SinkMatch<'_>) -> Result<bool, std::io::Error> {
        let base = usize::try_from(m.absolute_byte_offset()).unwrap_or(usize::MAX);
        let bytes = m.bytes();
        for span in lines::line_spans(bytes) {
            if let Ok(Some(found)) = self.matcher.find(&bytes[span.clone()]) {
                self.found.push(Hit {
                    span: base + span.start..base + span.end,
                    at: found.start(),
                });
            }
        }
        Ok(true)
    }
}

impl Search<'_> {
    fn unreadable(&mut self, abs: &Path, e: &std::io::Error) {
        self.unreadable += 1;
        if self.first_error.is_none() {
            self.first_error = Some(format!("{}: {e}", escape(&self.rel(abs))));
        }
    }

    fn rel(&self, abs: &Path) -> String {
        abs.strip_prefix(self.root)
            .unwrap_or(abs)
            .display()
            .to_string()
    }

    fn open_file(&mut self, abs: &Path, file: std::fs::File, size: u64) {
        match load(file, size) {
            Loaded::Unreadable(e) => self.unreadable(abs, &e),
            Loaded::Binary => self.binary += 1,
            Loaded::Text { bytes, cut } => {
                let found = match hits(&mut self.searcher, &self.matcher, &bytes) {
                    Ok(found) => found,
                    Err(e) => return self.unreadable(abs, &e),
                };
                self.tally(&Scanned::Searched {
                    cut,
                    hits: found.len(),
                });
                self.show(abs, &bytes, &found);
            }
        }
    }

    /// Every file of the walk from `from` (paths matched by `glob` relative to `base`): counted
    /// by a thread per core, each walking folders and reading the files it finds (each read
    /// once, through a bounded buffer), then the first files with matches in walk order read
    /// again to show their lines, until the limit.
    fn all(&mut self, from: &Path, base: &Path, glob: Option<&Pattern>) -> Skipped {
        let (scan, skipped) =
            scan_parallel(self.root, &self.below, &self.matcher, from, base, glob);
        self.searched += scan.quiet.searched;
        self.binary += scan.quiet.binary;
        self.cut += scan.quiet.cut;
        for (abs, s) in scan.found {
            self.tally(&s);
            if let Scanned::Unreadable(e) = &s {
                self.unreadable(&abs, e);
            }
            let Scanned::Searched { hits: 1.., .. } = s else {
                continue;
            };
            if self.full() {
                continue;
            }
            // Shown as it is now (a file changed since it was counted shows its new lines).
            if let Ok((file, size)) = self.below.open_regular(&abs)
                && let Loaded::Text { bytes, .. } = load(file, size)
                && let Ok(found) = hits(&mut self.searcher, &self.matcher, &bytes)
            {
                self.show(&abs, &bytes, &found);
            }
        }
        skipped
    }

    /// Count one file's outcome.
    fn tally(&mut self, s: &Scanned) {
        match s {
            Scanned::Unreadable(_) => {}
            Scanned::Binary => self.binary += 1,
            Scanned::Searched { cut, hits } => {
                self.searched += 1;
                self.cut += usize::from(*cut);
                if *hits > 0 {
                    self.files += 1;
                    self.total += hits;
                }
            }
        }
    }

    /// The lines of `found` in `bytes` (the file at `abs`), with their context, up to the
    /// limit.
    fn show(&mut self, abs: &Path, bytes: &[u8], found: &[Hit]) {
        if found.is_empty() || self.full() {
            return;
        }
        let rel = escape(&self.rel(abs)).into_owned();
        let mut cursor = lines::Cursor::new(bytes);
        let mut last_printed = 0usize;
        for (i, hit) in found.iter().enumerate() {
            if self.full() {
                break;
            }
            let n = cursor.seek(hit.span.start).0 + 1;
            // Context before: back to the line after the last one printed.
            let mut before = Vec::new();
            let mut start = hit.span.start;
            while before.len() < self.context && n - before.len() > last_printed + 1 {
                let Some(prev) = prev_line(bytes, start) else {
                    break;
                };
                start = prev.start;
                before.push(prev);
            }
            let first = n - before.len();
            if self.context > 0
                && self.printed_any
                && (last_printed == 0 || first > last_printed + 1)
            {
                self.text.push_str("--\n");
            }
            for (k, span) in before.iter().enumerate().rev() {
                let line = n - k - 1;
                self.line(&rel, '-', line, &bytes[span.clone()], None);
            }
            self.line(&rel, ':', n, &bytes[hit.span.clone()], Some(hit.at));
            self.shown += 1;
            last_printed = n;
            // Context after: up to the next matching line, which is printed as a match.
            let next_hit = found.get(i + 1).map(|h| h.span.start);
            let mut end = hit.span.end;
            for k in 1..=self.context {
                let Some(next) = next_line(bytes, end) else {
                    break;
                };
                if next_hit.is_some_and(|h| next.start >= h) {
                    break;
                }
                end = next.end;
                self.line(&rel, '-', n + k, &bytes[next], None);
                last_printed = n + k;
            }
        }
    }

    /// Whether no more lines are shown.
    fn full(&self) -> bool {
        self.shown >= self.limit || self.text.len() >= BYTES_CAP
    }

    /// One line of output: `path:N: text` for a match, `path-N- text` for context.
    fn line(&mut self, rel: &str, sep: char, n: usize, line: &[u8], at: Option<usize>) {
        self.printed_any = true;
        self.text.push_str(rel);
        self.text.push(sep);
        self.text.push_str(&n.to_string());
        self.text.push(sep);
        self.text.push(' ');
        self.text.push_str(&shown(line, at));
        self.text.push('\n');
    }

    fn finish(self, pattern: &str, skipped: &Skipped) -> Found {
        let mut notes = Vec::new();
        if self.binary > 0 {
            notes.push(format!("{} binary file(s) skipped", self.binary));
        }
        if self.cut > 0 {
            notes.push(format!(
                "{} file(s) over {} MiB searched in their first {} MiB only",
                self.cut,
                SCAN_CAP >> 20,
                SCAN_CAP >> 20
            ));
        }
        notes.extend(skipped.describe());
        if self.total == 0 {
            notes.extend(skipped.left_out_note());
        }
        if self.unreadable > 0 {
            notes.push(format!(
                "{} file(s) unreadable (first: {})",
                self.unreadable,
                self.first_error.as_deref().unwrap_or("?")
            ));
        }
        Found {
            matches: self.total,
            shown: self.shown,
            files: self.files,
            searched: self.searched,
            binary: self.binary,
            lines: self.text,
            pattern: pattern.to_string(),
            notes,
        }
    }
}

/// A file read for searching.
enum Loaded {
    Unreadable(std::io::Error),
    Binary,
    /// Its first [`SCAN_CAP`] bytes, and whether it is longer.
    Text {
        bytes: Vec<u8>,
        cut: bool,
    },
}

/// Read an opened file as a search reads it: binary when its first [`SNIFF`] bytes hold a NUL,
/// else up to [`SCAN_CAP`] bytes.
fn load(file: std::fs::File, size: u64) -> Loaded {
    let mut bytes = Vec::with_capacity(size.min(SCAN_CAP) as usize);
    let mut reader = file.take(SCAN_CAP);
    if let Err(e) = (&mut reader).take(SNIFF).read_to_end(&mut bytes) {
        return Loaded::Unreadable(e);
    }
    if is_binary(&bytes) {
        return Loaded::Binary;
    }
    if let Err(e) = reader.read_to_end(&mut bytes) {
        return Loaded::Unreadable(e);
    }
    let cut = size > SCAN_CAP || bytes.len() as u64 >= SCAN_CAP;
    Loaded::Text { bytes, cut }
}

/// The matching lines of `bytes`, by the shared line definition.
fn hits(
    searcher: &mut Searcher,
    matcher: &RegexMatcher,
    bytes: &[u8],
) -> Result<Vec<Hit>, std::io::Error> {
    let mut hits = Hits {
        matcher,
        found: Vec::new(),
    };
    searcher.search_slice(matcher, bytes, &mut hits)?;
    Ok(hits.found)
}

/// What counting one file found.
enum Scanned {
    Unreadable(std::io::Error),
    Binary,
    Searched { cut: bool, hits: usize },
}

/// A searcher as every file is searched.
fn searcher() -> Searcher {
    SearcherBuilder::new()
        .line_terminator(LineTerminator::crlf())
        .binary_detection(BinaryDetection::none())
        .bom_sniffing(false)
        .line_number(false)
        .build()
}

/// What the threads of a scan counted.
#[derive(Default)]
struct Scan {
    /// The files with a match and the unreadable ones, in walk order.
    found: Vec<(PathBuf, Scanned)>,
    /// The rest, counted only.
    quiet: Quiet,
}

/// Files searched without a match, or skipped as binary.
#[derive(Default)]
struct Quiet {
    searched: usize,
    binary: usize,
    cut: usize,
}

/// One thread's part of a [`Scan`], added to the whole when the thread ends.
struct Part<'a> {
    scan: Scan,
    whole: &'a std::sync::Mutex<Scan>,
}

impl Drop for Part<'_> {
    fn drop(&mut self) {
        let mut whole = self.whole.lock().unwrap_or_else(|e| e.into_inner());
        let part = std::mem::take(&mut self.scan);
        whole.found.extend(part.found);
        whole.quiet.searched += part.quiet.searched;
        whole.quiet.binary += part.quiet.binary;
        whole.quiet.cut += part.quiet.cut;
    }
}

/// Count the matching lines of every file of the walk from `from`, a thread per core (up to 8)
/// walking and reading as ripgrep does, so that no thread hands files to another (handed one at
/// a time, every file cost a lock and a wake-up: strace counted 84,663 futex calls for the
/// 31,625 files of Linux's `drivers/`, against ripgrep's 107); what was found and what the walk
/// skipped.
fn scan_parallel(
    root: &Path,
    below: &workspace::Beneath,
    matcher: &RegexMatcher,
    from: &Path,
    base: &Path,
    glob: Option<&Pattern>,
) -> (Scan, Skipped) {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 8);
    let whole = std::sync::Mutex::new(Scan::default());
    let skipped = walk::files_parallel(root, from, base, glob, threads, || {
        let mut searcher = searcher();
        let mut part = Part {
            scan: Scan::default(),
            whole: &whole,
        };
        move |abs: &Path| match count(&mut searcher, below, matcher, abs) {
            Scanned::Binary => part.scan.quiet.binary += 1,
            Scanned::Searched { cut, hits: 0 } => {
                part.scan.quiet.searched += 1;
                part.scan.quiet.cut += usize::from(cut);
            }
            s => part.scan.found.push((abs.to_path_buf(), s)),
        }
    });
    let mut scan = whole.into_inner().unwrap_or_else(|e| e.into_inner());
    scan.found.sort_by(|a, b| walk::walk_order(&a.0, &b.0));
    (scan, skipped)
}

/// Count the matching lines of the file at `abs`, streaming it through the searcher's own
/// bounded buffer: binary when its first [`SNIFF`] bytes hold a NUL, else its first
/// [`SCAN_CAP`] bytes.
fn count(
    searcher: &mut Searcher,
    below: &workspace::Beneath,
    matcher: &RegexMatcher,
    abs: &Path,
) -> Scanned {
    let (file, size) = match below.open_regular(abs) {
        Ok(f) => f,
        Err(e) => return Scanned::Unreadable(e),
    };
    let mut head = Vec::with_capacity(SNIFF as usize);
    let mut reader = file.take(SCAN_CAP);
    if let Err(e) = (&mut reader).take(SNIFF).read_to_end(&mut head) {
        return Scanned::Unreadable(e);
    }
    if is_binary(&head) {
        return Scanned::Binary;
    }
    let mut counted = Counted { matcher, lines: 0 };
    if let Err(e) = searcher.search_reader(
        matcher,
        std::io::Cursor::new(head).chain(reader),
        &mut counted,
    ) {
        return Scanned::Unreadable(e);
    }
    Scanned::Searched {
        cut: size > SCAN_CAP,
        hits: counted.lines,
    }
}

/// The sink that counts the lines of each matching region, by the shared line definition.
struct Counted<'m> {
    matcher: &'m RegexMatcher,
    lines: usize,
}

impl Sink for Counted<'_> {
    type Error = std::io::Error;
    fn matched(&mut self, _: &Searcher, m: &SinkMatch<'_>) -> Result<bool, std::io::Error> {
        let bytes = m.bytes();
        for span in lines::line_spans(bytes) {
            if let Ok(Some(_)) = self.matcher.find(&bytes[span]) {
                self.lines += 1;
            }
        }
        Ok(true)
    }
}

/// The line before the one starting at byte `start`, if any.
fn prev_line(bytes: &[u8], start: usize) -> Option<Range<usize>> {
    if start == 0 {
        return None;
    }
    let term = if start >= 2 && bytes[start - 1] == b'\n' && bytes[start - 2] == b'\r' {
        2
    } else {
        1
    };
    let end = start - term;
    Some(lines::line_start(bytes, end)..end)
}

/// The line after the one ending (without its terminator) at byte `end`, if any: a final
/// terminator starts no line.
fn next_line(bytes: &[u8], end: usize) -> Option<Range<usize>> {
    let term = lines::terminator_at(bytes, end);
    let start = end + term;
    if term == 0 || start >= bytes.len() {
        return None;
    }
    let stop = lines::next_terminator(bytes, start).map_or(bytes.len(), |(at, _)| at);
    Some(start..stop)
}

/// A line as shown: escaped, and a line over [`LINE_SHOWN`] characters cut to a window around
/// byte `at` (its first match), saying how long it is.
fn shown(line: &[u8], at: Option<usize>) -> String {
    let text = String::from_utf8_lossy(line);
    let total = text.chars().count();
    if total <= LINE_SHOWN {
        return escape(&text).into_owned();
    }
    let at_char = at.map_or(0, |b| {
        String::from_utf8_lossy(&line[..b.min(line.len())])
            .chars()
            .count()
    });
    let from = if at_char + LINE_SHOWN / 2 < LINE_SHOWN {
        0
    } else {
        (at_char - LINE_SHOWN / 3).min(total - LINE_SHOWN)
    };
    let kept: String = text.chars().skip(from).take(LINE_SHOWN).collect();
    format!(
        "{}{}{} [line cut: {total} characters, shown from character {}]",
        if from > 0 { "…" } else { "" },
        escape(&kept),
        if from + LINE_SHOWN < total { "…" } else { "" },
        from + 1
    )
}
