//! The run's token index (issue 26): per file, the sorted 32-bit hashes of its word tokens,
//! with the [`Fingerprint`] (size, mtime, ctime) it was read at. `ast_grep` asks it whether a
//! file can hold a pattern's literals before reading the file; the identifier witness asks it
//! which files may hold a name before parsing them. Built once, for both.
//!
//! A word token is a maximal run of word characters (`_` and what `char::is_alphanumeric`
//! takes), found by a lexical scan, never a parse: it costs a pass over the bytes already read,
//! and a few bytes per distinct word. It must hold every text a pattern's literal can be
//! matched against: a literal is a word (`pattern::collect`), matched against a node whose
//! text is that word. Where a node's text is not a whole run, the lexer started or stopped
//! inside one: it starts inside a run after an escape (`"\nabc"`: a string fragment `abc`) or
//! when error recovery skipped characters (tree-sitter's C# grammar lexed `wrap` out of
//! `unwrap`), and it stops inside one where a number ends (`10px`, `1if`) or where a grammar
//! lexes a keyword without reading the whole word (Swift's `break` out of `breakpoint`). So
//! every run yields itself, its suffixes and its prefixes (up to [`MAX_SUFFIX`] bytes; a
//! longer literal never rules a file out), and a run that starts with a digit also yields its
//! pieces between digit/non-digit boundaries (`1u32`: `u`). A text that both starts and stops
//! inside a run otherwise (error recovery that skips into a word, then lexes a keyword prefix
//! of the rest) is not held: `examples/bench` counts such nodes over its corpora. A hash that
//! collides only lets a file through to be parsed, never keeps a match out.
//!
//! What the index admits: a file is indexed on the second read of it in the run (the first
//! search pays nothing for the second: it only notes what it read and parsed), and its tree
//! goes to the parse cache on its second parse. A file changed (by its ctime) in the last few
//! seconds is never indexed (a later write may not yet tell itself apart: `fingerprint.rs`),
//! and the run's own writes take their files out (`changed`).
//!
//! Owns: the per-file entries and their bound. Never: parses, or decides a match.

use crate::fingerprint::{Fingerprint, RACY};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The most token hashes the index keeps over all files (4 bytes each, 32 MiB): past it, new
/// files are not indexed, and are read again by each search (answers stay complete).
pub const MAX_TOKENS: usize = 8 << 20;

/// Suffixes of a run longer than this are not kept; a longer literal does not rule files out.
pub const MAX_SUFFIX: usize = 64;

/// More pieces than this in a run that starts with a digit: only its prefixes and suffixes.
const MAX_PIECES: usize = 8;

/// A token's hash. 32 bits: a file with 10,000 distinct tokens lets a literal it lacks through
/// once in ~430,000 files (to be parsed, and found not to match), at half the memory of 64.
pub type TokenHash = u32;

/// The hash of a token's bytes: a multiply-rotate over 8-byte words, a final mix, folded to
/// 32 bits.
pub fn token_hash(bytes: &[u8]) -> TokenHash {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut h = (bytes.len() as u64).wrapping_mul(K);
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        h = (h.rotate_left(23) ^ u64::from_le_bytes(w)).wrapping_mul(K);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut w = [0u8; 8];
        w[..rest.len()].copy_from_slice(rest);
        h = (h.rotate_left(23) ^ u64::from_le_bytes(w)).wrapping_mul(K);
    }
    h ^= h >> 32;
    h = h.wrapping_mul(K);
    h ^= h >> 29;
    (h ^ (h >> 32)) as TokenHash
}

/// The length in bytes of the word character at `i`, or 0 when it is not one.
fn word_char(text: &str, i: usize) -> usize {
    let b = text.as_bytes()[i];
    if b < 0x80 {
        usize::from(b.is_ascii_alphanumeric() || b == b'_')
    } else {
        text[i..]
            .chars()
            .next()
            .filter(|c| c.is_alphanumeric())
            .map_or(0, char::len_utf8)
    }
}

/// The sorted, deduplicated hashes of `text`'s word tokens (see the module's documentation).
pub fn tokens(text: &str) -> Box<[TokenHash]> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len() / 8);
    // A whole run is a token (the witness is asked for names such as `x`); its pieces from
    // two bytes on (a literal is never shorter).
    let mut push = |a: usize, b: usize, whole: bool| {
        if b >= a + 2 || (whole && b > a) {
            out.push(token_hash(&bytes[a..b]));
        }
    };
    let mut i = 0;
    while i < bytes.len() {
        let n = word_char(text, i);
        if n == 0 {
            // Not a word character: skip it whole (a UTF-8 sequence is skipped byte by byte;
            // its continuation bytes are never word starts on their own).
            i += 1;
            while i < bytes.len() && bytes[i] & 0xC0 == 0x80 {
                i += 1;
            }
            continue;
        }
        let start = i;
        i += n;
        loop {
            if i >= bytes.len() {
                break;
            }
            let n = word_char(text, i);
            if n == 0 {
                break;
            }
            i += n;
        }
        let end = i;
        // The run, its suffixes and its prefixes (up to `MAX_SUFFIX` bytes long).
        for (at, c) in text[start..end].char_indices() {
            let k = start + at;
            if k == start || end - k <= MAX_SUFFIX {
                push(k, end, k == start);
            }
            let k = k + c.len_utf8();
            if k < end && k - start <= MAX_SUFFIX {
                push(start, k, false);
            }
        }
        if bytes[start].is_ascii_digit() {
            // Boundaries where a digit meets a non-digit: where a number token may end.
            let mut cuts = vec![start];
            for k in start + 1..end {
                if bytes[k].is_ascii_digit() != bytes[k - 1].is_ascii_digit()
                    && text.is_char_boundary(k)
                {
                    cuts.push(k);
                }
            }
            cuts.push(end);
            let pieces = cuts.len() - 1;
            for a in 0..cuts.len() {
                for b in a + 1..cuts.len() - 1 {
                    if pieces <= MAX_PIECES || a == 0 {
                        push(cuts[a], cuts[b], false);
                    }
                }
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out.into_boxed_slice()
}

/// The hashes a file's tokens must hold for a pattern with these literals to match in it (a
/// literal longer than [`MAX_SUFFIX`] is not asked for).
pub fn wanted(literals: &[String]) -> Vec<TokenHash> {
    literals
        .iter()
        .filter(|l| l.len() <= MAX_SUFFIX)
        .map(|l| token_hash(l.as_bytes()))
        .collect()
}

/// Whether sorted `tokens` hold every hash of `wanted`.
pub fn holds_all(tokens: &[TokenHash], wanted: &[TokenHash]) -> bool {
    wanted.iter().all(|w| tokens.binary_search(w).is_ok())
}

struct Entry {
    print: Fingerprint,
    tokens: Option<Box<[TokenHash]>>,
    /// Whether a search parsed the file as it is.
    parsed: bool,
}

/// What the index knows of a file as it is now (its fingerprint).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Known {
    /// Nothing: no search of this run read it as it is.
    New,
    /// A search read it (and parsed it, when `parsed`), but it is not indexed yet.
    Seen { parsed: bool },
    /// Indexed: whether its tokens hold every wanted literal, and whether a search parsed it.
    Indexed { admits: bool, parsed: bool },
}

#[derive(Default)]
struct Inner {
    files: HashMap<PathBuf, Entry>,
    /// Token hashes held over all files.
    held: usize,
}

/// The token index of one run: see the module's documentation.
pub struct TokenIndex {
    inner: Mutex<Inner>,
    max_tokens: usize,
    /// A file changed (by its ctime) more recently than this is not indexed.
    racy: Duration,
}

impl Default for TokenIndex {
    fn default() -> Self {
        TokenIndex::new(MAX_TOKENS)
    }
}

impl TokenIndex {
    pub fn new(max_tokens: usize) -> Self {
        TokenIndex {
            inner: Mutex::new(Inner::default()),
            max_tokens,
            racy: RACY,
        }
    }

    /// An index that takes files changed just now too: for tests that write a file and search
    /// it at once (the racy rule has its own test).
    #[cfg(test)]
    pub fn indexing_recent(max_tokens: usize) -> Self {
        TokenIndex {
            racy: Duration::ZERO,
            ..TokenIndex::new(max_tokens)
        }
    }

    /// What is known of `path` as `print`, its tokens checked against `wanted`.
    pub fn known(&self, path: &Path, print: Fingerprint, wanted: &[TokenHash]) -> Known {
        let inner = self.inner.lock();
        match inner.files.get(path) {
            Some(e) if e.print == print => match &e.tokens {
                Some(t) => Known::Indexed {
                    admits: holds_all(t, wanted),
                    parsed: e.parsed,
                },
                None => Known::Seen { parsed: e.parsed },
            },
            _ => Known::New,
        }
    }

    /// The tokens of `path` when it is indexed as `print`.
    pub fn tokens_of(&self, path: &Path, print: Fingerprint) -> Option<Box<[TokenHash]>> {
        let inner = self.inner.lock();
        let e = inner.files.get(path)?;
        (e.print == print).then(|| e.tokens.clone()).flatten()
    }

    /// Note that a search read `path` as `print` (and parsed it, when `parsed`), with its
    /// tokens when it computed them. Tokens are kept unless the file is too recent or the index
    /// is full; returns whether they were.
    pub fn note(
        &self,
        path: &Path,
        print: Fingerprint,
        tokens: Option<Box<[TokenHash]>>,
        parsed: bool,
    ) -> bool {
        let recent = print.recent(self.racy);
        let mut inner = self.inner.lock();
        let (old_tokens, was_parsed) = match inner.files.get(path) {
            Some(e) if e.print == print => (e.tokens.as_ref().map_or(0, |t| t.len()), e.parsed),
            Some(e) => (e.tokens.as_ref().map_or(0, |t| t.len()), false),
            None => (0, false),
        };
        let held = inner.held - old_tokens;
        let tokens = tokens.filter(|t| !recent && held + t.len() <= self.max_tokens);
        let kept = tokens.is_some();
        let keep_old = !kept
            && inner
                .files
                .get(path)
                .is_some_and(|e| e.print == print && e.tokens.is_some());
        if keep_old {
            if let Some(e) = inner.files.get_mut(path) {
                e.parsed |= parsed;
            }
            return true;
        }
        inner.held = held + tokens.as_ref().map_or(0, |t| t.len());
        inner.files.insert(
            path.to_path_buf(),
            Entry {
                print,
                tokens,
                parsed: parsed || was_parsed,
            },
        );
        kept
    }

    /// The run changed these files: what was known of them is dropped (a rewrite in the same
    /// clock tick may keep every field of the fingerprint).
    pub fn changed(&self, paths: &[PathBuf]) {
        let mut inner = self.inner.lock();
        for p in paths {
            if let Some(e) = inner.files.remove(p) {
                inner.held -= e.tokens.map_or(0, |t| t.len());
            }
        }
    }

    /// How many more token hashes the index would keep before its bound.
    pub fn room(&self) -> usize {
        self.max_tokens.saturating_sub(self.inner.lock().held)
    }

    /// (files known, files indexed, token hashes held).
    #[cfg(test)]
    pub fn size(&self) -> (usize, usize, usize) {
        let inner = self.inner.lock();
        let indexed = inner.files.values().filter(|e| e.tokens.is_some()).count();
        (inner.files.len(), indexed, inner.held)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod tests {
    use super::*;
    use crate::lang::Lang;

    fn has(text: &str, word: &str) -> bool {
        tokens(text)
            .binary_search(&token_hash(word.as_bytes()))
            .is_ok()
    }

    #[test]
    fn words_and_the_pieces_a_tokenizer_may_split_them_into() {
        let text = "def print_all(x): sprint(x) # 10px 1if 0x1F \"\\nabc\" é_ok naïve—dash";
        for w in [
            "def",
            "print_all",
            "sprint",
            "10px",
            "px",
            "10",
            "if",
            "x1F",
            "nabc",
            "abc",
            "é_ok",
            "naïve",
            "dash",
            "int",
            "all",
        ] {
            assert!(has(text, w), "{w}");
        }
        for w in ["pri_all", "naïve—dash", "sprint_", "ab", "rint_"] {
            assert!(!has(text, w), "{w}");
        }
    }

    /// Every node of a parse whose text is a word is a token: the property the prefilter
    /// relies on, over the test corpora of every language.
    #[test]
    fn every_word_node_of_the_test_corpora_is_a_token() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
        let mut checked = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            let stem = path.file_stem().unwrap().to_string_lossy().to_string();
            // Each file as the language it holds cases of (`general`, `web` and `data` hold
            // several; parsed as another language, a file is mostly error recovery).
            if let Some(lang) = Lang::from_id(&stem) {
                let mut parser = tree_sitter::Parser::new();
                parser.set_language(&lang.ts_language()).unwrap();
                let tree = parser.parse(&text, None).unwrap();
                let toks = tokens(&text);
                let mut cursor = tree.walk();
                'walk: loop {
                    let node = cursor.node();
                    let t = &text[node.byte_range()];
                    if t.len() >= 2 && t.chars().all(|c| c.is_alphanumeric() || c == '_') {
                        assert!(
                            toks.binary_search(&token_hash(t.as_bytes())).is_ok(),
                            "{lang:?} node {} `{t}` is not a token",
                            node.kind()
                        );
                        checked += 1;
                    }
                    if cursor.goto_first_child() {
                        continue;
                    }
                    loop {
                        if cursor.goto_next_sibling() {
                            break;
                        }
                        if !cursor.goto_parent() {
                            break 'walk;
                        }
                    }
                }
            }
        }
        assert!(checked > 1000, "{checked}");
    }

    #[test]
    fn a_file_is_known_by_its_fingerprint_and_forgotten_when_the_run_changes_it() {
        let index = TokenIndex::new(100);
        let p = Path::new("/x/a.py");
        let old = Fingerprint::aged(5, Duration::from_secs(100));
        assert_eq!(index.known(p, old, &[]), Known::New);
        assert!(!index.note(p, old, None, false));
        assert_eq!(index.known(p, old, &[]), Known::Seen { parsed: false });
        assert!(index.note(p, old, Some(tokens("print(x)")), true));
        let want = [token_hash(b"print")];
        assert_eq!(
            index.known(p, old, &want),
            Known::Indexed {
                admits: true,
                parsed: true
            }
        );
        assert_eq!(
            index.known(p, old, &[token_hash(b"len")]),
            Known::Indexed {
                admits: false,
                parsed: true
            }
        );
        // Another size; the same size and mtime with another ctime (`touch -d`, `cp -p`).
        assert_eq!(
            index.known(p, Fingerprint { len: 6, ..old }, &want),
            Known::New
        );
        let rewritten = Fingerprint {
            ctime: (old.ctime.0 + 1, old.ctime.1),
            ..old
        };
        assert_eq!(index.known(p, rewritten, &want), Known::New);
        assert_eq!(index.tokens_of(p, rewritten), None);
        assert!(index.tokens_of(p, old).is_some());
        // Too recent to index, by its ctime whatever its mtime; and the bound.
        let q = Path::new("/x/b.py");
        let touched = Fingerprint {
            mtime: old.mtime,
            ..Fingerprint::aged(5, Duration::ZERO)
        };
        assert!(!index.note(q, touched, Some(tokens("a bb")), false));
        assert!(TokenIndex::indexing_recent(100).note(q, touched, Some(tokens("a bb")), false));
        let big: String = (0..200).map(|i| format!("w{i} ")).collect();
        assert!(!index.note(Path::new("/x/c.py"), old, Some(tokens(&big)), false));
        index.changed(&[p.to_path_buf()]);
        assert_eq!(index.known(p, old, &want), Known::New);
        assert!(index.size().2 <= 100);
    }
}
