//! The engine under `ast_grep`, `ast_edit` and `resolve`: which files a search takes
//! ([`scope`]), and the walk that reads them in parallel, rules out those lacking the pattern's
//! literals, and parses the rest (or takes a tree, or a remembered answer, from the run's
//! cache). What is done with each parsed file is its caller's: [`search()`] (`engine/search.rs`)
//! lists and counts matches, [`rewrite()`] (`engine/rewrite.rs`) computes a file's new text.

mod retire;
mod rewrite;
pub mod search;

pub use crate::shown::Match;
pub use rewrite::{FileRewrite, RewriteBound, rewrite};
pub use search::search;

use crate::AstGrepConfig;
use crate::cache::ParseCache;
use crate::error::AstGrepError;
use crate::fingerprint::Fingerprint;
use crate::glob::{is_glob, split_glob};
use crate::lang::Lang;
use crate::needle::Needle;
use crate::pattern::Compiled;
use crate::stats::{Counters, Stats};
use crate::tokens::{self, Known};
use agent_tier::workspace::{Beneath, confine_existing};
use ast_grep_core::AstGrep;
use ast_grep_core::tree_sitter::StrDoc;
use parking_lot::Mutex;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

/// `Scope::lang_from` of a search with no language given: one walk per language present.
pub const DIRECTORY_SCAN: &str = "directory scan";

/// What to search: the confined target, whether it is one file, the grammar, and the glob a
/// file's path (relative to the root) must match when `path` was a glob.
#[derive(Debug, Clone)]
pub struct Scope {
    pub root: PathBuf,
    pub target: PathBuf,
    pub single_file: bool,
    pub lang: Lang,
    /// How the language was chosen: `argument`, `extension` or [`DIRECTORY_SCAN`].
    pub lang_from: &'static str,
    pub glob: Option<globset::GlobMatcher>,
}

impl Scope {
    /// Whether the walk takes this file (the glob, when there is one, admits it).
    pub fn admits(&self, path: &Path) -> bool {
        match &self.glob {
            None => true,
            Some(g) => g.is_match(path.strip_prefix(&self.root).unwrap_or(path)),
        }
    }

    /// Whether this search visits `path` as `lang`: what its walk takes, and whose cached
    /// tree it never evicts for its own. A search by directory scan walks once per language
    /// present, so there a file of any language is the search's own (else each language's
    /// walk would evict the others' trees, every time).
    pub fn reaches(&self, path: &Path, lang: Lang) -> bool {
        if self.single_file {
            lang == self.lang && path == self.target
        } else {
            (lang == self.lang || self.lang_from == DIRECTORY_SCAN)
                && lang.owns(path)
                && path.starts_with(&self.target)
                && self.admits(path)
        }
    }
}

/// Resolve `path` and `language` arguments into a scope.
pub fn scope(
    root: &Path,
    path: Option<&str>,
    language: Option<&str>,
) -> Result<Scope, AstGrepError> {
    let given = path.unwrap_or(".");
    let given = if given.trim().is_empty() { "." } else { given };
    let (given, glob) = if is_glob(given) {
        let (base, pattern) = split_glob(given);
        let glob = globset::GlobBuilder::new(&pattern)
            .literal_separator(true)
            .build()
            .map_err(|e| AstGrepError::BadGlob {
                glob: given.to_string(),
                detail: e.kind().to_string(),
            })?
            .compile_matcher();
        (base, Some((glob, pattern)))
    } else {
        (given.to_string(), None)
    };
    let given = given.as_str();
    let target = confine_existing(root, "path", given)?;
    let root = root.canonicalize().map_err(|e| AstGrepError::Walk {
        path: root.display().to_string(),
        detail: e.to_string(),
    })?;
    let lang = match language {
        Some(id) if !id.trim().is_empty() => {
            Some(
                Lang::from_id(id).ok_or_else(|| AstGrepError::UnknownLanguage {
                    given: id.to_string(),
                    valid: Lang::ids(),
                })?,
            )
        }
        _ => None,
    };
    let single_file = target.is_file() && glob.is_none();
    // A glob ending in an extension (`**/*.py`) names its language.
    let from_glob = glob
        .as_ref()
        .and_then(|(_, p)| Lang::from_file(Path::new(p)));
    let lang_from = if lang.is_some() {
        "argument"
    } else {
        "extension"
    };
    let lang = match (lang.or(from_glob), single_file) {
        (Some(l), _) => l,
        (None, true) => Lang::from_file(&target).ok_or_else(|| AstGrepError::CannotInfer {
            path: given.to_string(),
            valid: Lang::ids(),
        })?,
        (None, false) => {
            return Err(AstGrepError::NeedLanguage {
                path: given.to_string(),
                valid: Lang::ids(),
            });
        }
    };
    Ok(Scope {
        root,
        target,
        single_file,
        lang,
        lang_from,
        glob: glob.map(|(g, _)| g),
    })
}

/// When a walk must stop: a deadline, and a flag set when the caller stops waiting.
#[derive(Debug, Clone)]
pub struct Budget {
    pub deadline: std::time::Instant,
    pub cancelled: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Budget {
    fn exhausted(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed) || std::time::Instant::now() >= self.deadline
    }
}

/// What a file's bytes must hold for the pattern to match in it.
struct Prefilter {
    /// The literal words (what the token index knows of a file, when it knows it); a keyword
    /// that is only ever a whole word is one such needle.
    words: Vec<Needle>,
    /// The other verbatim tokens ([`Compiled::texts`]), which the index does not hold.
    texts: Vec<Needle>,
}

impl Prefilter {
    fn new(compiled: &Compiled) -> Self {
        let (words, texts) = compiled.needles();
        Prefilter { words, texts }
    }

    /// Whether `bytes` hold every literal word and verbatim token.
    fn may_match(&self, bytes: &[u8]) -> bool {
        self.words.iter().all(|n| n.occurs_in(bytes))
            && self.texts.iter().all(|n| n.occurs_in(bytes))
    }

    /// Whether `bytes` hold what the index cannot tell (for a file whose words it admitted):
    /// every whole keyword (the index holds a word's prefixes too: `raise` in `raised` admits a
    /// file there) and every verbatim token.
    fn holds_unindexed(&self, bytes: &[u8]) -> bool {
        self.words
            .iter()
            .filter(|n| n.is_whole())
            .all(|n| n.occurs_in(bytes))
            && self.texts.iter().all(|n| n.occurs_in(bytes))
    }
}

/// Read, filter and hand each candidate file to `f` (with its fingerprint, when it has one);
/// results come back sorted by path. `recall` may answer a file from its fingerprint alone:
/// `Some(answer)` and the file is neither read nor parsed (it counts as remembered).
fn walk<T: Send>(
    scope: &Scope,
    compiled: &Compiled,
    config: &AstGrepConfig,
    cache: &ParseCache,
    budget: &Budget,
    recall: impl Fn(&Path, Fingerprint) -> Option<Option<T>> + Sync,
    f: impl Fn(&Path, &AstGrep<StrDoc<Lang>>, Option<Fingerprint>) -> Option<T> + Sync,
) -> (Vec<(PathBuf, T)>, Stats) {
    let counters = Counters::default();
    let prefilter = Prefilter::new(compiled);
    let wanted = tokens::wanted(&compiled.literals);
    let index = cache.index();
    let cached = cache.visit(|path: &Path, lang: Lang| scope.reaches(path, lang));
    let results: Mutex<Vec<(PathBuf, T)>> = Mutex::new(Vec::new());
    let below = Beneath::open(&scope.root);
    let visit = |path: &Path, meta: Option<std::fs::Metadata>| {
        counters.searched.fetch_add(1, Ordering::Relaxed);
        let len = meta.as_ref().map(|m| m.len());
        if len.is_some_and(|l| l > config.max_file_bytes) {
            counters.skip(&counters.large, path, "too large");
            return;
        }
        let print = meta.as_ref().and_then(Fingerprint::of);
        if let Some(print) = print
            && let Some(answer) = recall(path, print)
        {
            counters.remembered.fetch_add(1, Ordering::Relaxed);
            if let Some(t) = answer {
                results.lock().push((path.to_path_buf(), t));
            }
            return;
        }
        // What the run's token index knows of the file as it is now: an indexed file whose
        // tokens lack a literal is ruled out unread.
        let known = match (index, print) {
            (Some(index), Some(print)) => index.known(path, print, &wanted),
            _ => Known::New,
        };
        let (indexed, parsed_before) = match known {
            Known::Indexed { admits: false, .. } => {
                counters.prefiltered.fetch_add(1, Ordering::Relaxed);
                return;
            }
            Known::Indexed { parsed, .. } => (true, parsed),
            Known::Seen { parsed } => (false, parsed),
            Known::New => (false, false),
        };
        let handle = |ast: &AstGrep<StrDoc<Lang>>, print: Option<Fingerprint>| {
            if let Some(t) = f(path, ast, print) {
                results.lock().push((path.to_path_buf(), t));
            }
        };
        if let Some(print) = print
            && let Some(ast) = cached.get(path, compiled.lang, print)
        {
            let text = ast.get_text().as_bytes();
            if (indexed && prefilter.holds_unindexed(text)) || prefilter.may_match(text) {
                handle(&ast, Some(print));
            } else {
                counters.prefiltered.fetch_add(1, Ordering::Relaxed);
            }
            return;
        }
        // Below the root's descriptor, through no symlink: a folder swapped for a link to the
        // outside since the walk is refused, never read.
        let read = below
            .as_ref()
            .map_err(|e| std::io::Error::new(e.kind(), e.to_string()))
            .and_then(|b| b.read_regular(path, config.max_file_bytes + 1));
        let bytes = match read {
            Ok(read) => read.bytes,
            Err(e) => {
                counters.skip(&counters.unreadable, path, crate::stats::why_unreadable(&e));
                return;
            }
        };
        if bytes.len() as u64 > config.max_file_bytes {
            counters.skip(&counters.large, path, "too large");
            return;
        }
        let head = &bytes[..bytes.len().min(8192)];
        if memchr::memchr(0, head).is_some() {
            counters.skip(&counters.binary, path, "binary");
            return;
        }
        let read_len = bytes.len() as u64;
        // Only a file read whole at the size its fingerprint belongs to is noted, cached or
        // remembered.
        let whole = print.filter(|p| p.len == read_len);
        // The second read of a file in the run indexes it (the first only notes it).
        let new_tokens = match (index, whole, known) {
            (Some(_), Some(_), Known::Seen { .. }) => {
                std::str::from_utf8(&bytes).ok().map(tokens::tokens)
            }
            _ => None,
        };
        let admits = match &new_tokens {
            Some(t) => tokens::holds_all(t, &wanted) && prefilter.holds_unindexed(&bytes),
            None if indexed => prefilter.holds_unindexed(&bytes),
            None => prefilter.may_match(&bytes),
        };
        if !admits {
            counters.prefiltered.fetch_add(1, Ordering::Relaxed);
            if let (Some(index), Some(whole)) = (index, whole) {
                index.note(path, whole, new_tokens, false);
            }
            return;
        }
        let Ok(text) = String::from_utf8(bytes) else {
            counters.skip(&counters.not_utf8, path, "not UTF-8");
            return;
        };
        let Ok(ast) = AstGrep::<StrDoc<Lang>>::try_new(&text, compiled.lang) else {
            counters.skip(&counters.unparseable, path, "unparseable");
            return;
        };
        drop(text);
        let ast = std::sync::Arc::new(ast);
        handle(&ast, whole);
        let len = ast.get_text().len();
        if let (Some(index), Some(whole)) = (index, whole) {
            index.note(path, whole, new_tokens, true);
            // A tree is worth keeping from its second parse in the run: a search that is not
            // repeated keeps nothing.
            if parsed_before {
                cached.put(path, compiled.lang, whole, ast.clone());
            }
        }
        retire::retire(ast, len);
    };

    if scope.single_file {
        visit(&scope.target, std::fs::metadata(&scope.target).ok());
    } else {
        let threads = if config.threads == 0 {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            config.threads
        };
        // The run's ignore rules (`agent_tier::ignore_rules`: `.gitignore` inside a git
        // repository, `.ignore` and `.rgignore` always); hidden files are searched
        // (`.github/workflows/*.yml` is code too), but never the `.git` directory.
        let mut builder = agent_tier::ignore_rules::walker(&scope.target, true);
        builder.threads(threads);
        builder.build_parallel().run(|| {
            let visit = &visit;
            let counters = &counters;
            Box::new(move |entry| {
                if budget.exhausted() {
                    counters.stopped.store(true, Ordering::Relaxed);
                    return ignore::WalkState::Quit;
                }
                let entry = match entry {
                    Ok(entry) => entry,
                    Err(e) => {
                        counters.unvisited(&e);
                        return ignore::WalkState::Continue;
                    }
                };
                if entry.file_type().is_some_and(|t| t.is_file())
                    && scope.reaches(entry.path(), scope.lang)
                {
                    visit(entry.path(), entry.metadata().ok());
                }
                ignore::WalkState::Continue
            })
        });
    }
    let mut out = results.into_inner();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    (out, counters.stats(&scope.root))
}
