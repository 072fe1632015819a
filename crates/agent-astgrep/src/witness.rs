//! The run's identifier witness ([`agent_tier::witness::IdentifierWitness`]): where a name occurs
//! as an identifier token, from the same grammars `ast_grep` parses with.
//!
//! Which files may hold a name comes from the run's token index (`tokens`, shared with
//! `ast_grep`'s prefilter): per file the sorted hashes of its word tokens, with the fingerprint
//! (size, mtime, ctime) it was read at — a few bytes per distinct word, not trees. A query
//! walks the language family's files (the walk `ast_grep` makes: `.gitignore` honoured, `.git`
//! skipped, symlinks not followed), indexes the files that are new or changed (in parallel, a lexical scan), and
//! parses only the files whose tokens hold the name, to give each occurrence's position. An
//! identifier token is a named leaf whose kind is one of the grammar's identifier kinds (its
//! entry in the grammar table: `identifier`, `type_identifier`, `field_identifier`, …): never a
//! string or a comment (an f-string's `{name}` is code, and counts); a file whose tokens hold
//! the name only in a comment is parsed and yields nothing.
//!
//! Owns: the walk per language family and the answers. Never: decides which occurrence is
//! which symbol (that is the language server's answer, asked by the family that uses the
//! witness).

use crate::error::WitnessError;
use crate::fingerprint::Fingerprint;
use crate::lang::Lang;
use crate::memo::MatchMemo;
use crate::tokens::{self, TokenHash, TokenIndex};
use agent_tier::witness::{IdentifierWitness, Occurrence, Sightings, UNREAD_SHOWN};
use agent_tier::workspace::Beneath;
use parking_lot::Mutex;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

/// A file bigger than this is not indexed (and is counted as skipped).
const MAX_FILE_BYTES: u64 = 16 << 20;

/// The identifier witness of one workspace root.
pub struct Witness {
    root: PathBuf,
    /// The run's token index (past its bound, new files are looked at for each query instead
    /// of kept, and the answer stays complete).
    index: Arc<TokenIndex>,
    /// The run's memo of finished searches, told of the run's own writes with the index.
    memo: Option<Arc<MatchMemo>>,
    /// The last walk per language family: every directory it entered with its mtime, and the
    /// files it found. While no directory's mtime moved (a file created, removed or renamed
    /// moves its directory's), the file list stands and only the files are looked at again.
    walks: Mutex<HashMap<Vec<Lang>, Walked>>,
    /// The last answers (name and family → occurrences, with the files they came from as they
    /// were), reused while those files and the file list are unchanged.
    answers: Mutex<Vec<Answer>>,
    /// The byte screen's verdicts per name ([`Screened`]), the last [`SCREENS`] names.
    screens: Mutex<Vec<Screened>>,
    /// The number the next walk gets.
    walks_made: std::sync::atomic::AtomicU64,
}

/// What the byte screen said of each file of one walk for one name (by the file's place in the
/// walk's list), with the fingerprint it was read at: past the index's bound a file is not
/// kept, and without this every repeated query read every such file again (1.1–1.8 s at
/// Linux's `drivers/` and whole tree, against 48 ms in `drivers/net`).
struct Screened {
    key: (Vec<Lang>, String),
    walk: u64,
    verdicts: Vec<Option<(Fingerprint, bool)>>,
}

/// How many names' screens are kept (each a few bytes per file of the walk).
const SCREENS: usize = 4;

struct Walked {
    /// Which walk this is ([`Screened`] verdicts hold for its list only).
    number: u64,
    dirs: Vec<(PathBuf, Option<SystemTime>)>,
    files: Vec<(PathBuf, Lang)>,
    /// Symlinks named as files of the family: never followed. Those whose target is not one of
    /// `files` are files the witness cannot look at.
    links: Vec<PathBuf>,
}

struct Answer {
    key: (Vec<Lang>, String),
    holders: Vec<(PathBuf, Option<Fingerprint>)>,
    /// The files that could not be read then (too big, unreadable, links out of the walk).
    unread: Vec<PathBuf>,
    sightings: Sightings,
}

/// How many answers are kept.
const ANSWERS: usize = 64;

fn mtime_of(p: &Path) -> Option<SystemTime> {
    std::fs::symlink_metadata(p).ok()?.modified().ok()
}

fn name_hash(name: &[u8]) -> TokenHash {
    tokens::token_hash(name)
}

/// Every identifier leaf of `text` parsed as `lang`: `(byte range start, byte range end)`.
/// Iterative (a tree-cursor walk): a deeply nested file cannot overflow a stack.
fn identifier_spans(text: &str, lang: Lang) -> Option<Vec<(usize, usize)>> {
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&lang.ts_language()).ok()?;
    let tree = parser.parse(text, None)?;
    let mut out = Vec::new();
    let mut cursor = tree.walk();
    loop {
        let node = cursor.node();
        if node.child_count() == 0 {
            if node.is_named() && lang.is_identifier_kind(node.kind()) {
                out.push((node.start_byte(), node.end_byte()));
            }
        } else if cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return Some(out);
            }
        }
    }
}

/// A file's occurrences of a name: (line, byte in the line).
type Sites = Vec<(u32, u32)>;

/// Where `name` is an identifier in `text` parsed as `lang`: (line, byte in the line), lines as
/// the language servers count them (`\n`, `\r\n` or a lone `\r`); `None` when it cannot be
/// parsed.
fn sites_in(text: &str, lang: Lang, name: &str) -> Option<Sites> {
    let spans = identifier_spans(text, lang)?;
    let bytes = text.as_bytes();
    let mut cursor = agent_tier::lines::Cursor::new(bytes);
    let mut out = Vec::new();
    for (a, b) in spans {
        if &bytes[a..b] != name.as_bytes() {
            continue;
        }
        let (line, line_start) = cursor.seek(a);
        out.push((
            u32::try_from(line).unwrap_or(u32::MAX),
            (a - line_start) as u32,
        ));
    }
    Some(out)
}

/// A file's text, read below the root through no symlink (`None`: unreadable, too large, not
/// UTF-8, or the root itself could not be opened).
fn read_text(below: Option<&Beneath>, path: &Path) -> Option<String> {
    let read = below?.read_regular(path, MAX_FILE_BYTES + 1).ok()?;
    if read.bytes.len() as u64 > MAX_FILE_BYTES {
        return None;
    }
    String::from_utf8(read.bytes).ok()
}

/// One file of the family, as the walk found it.
struct Found {
    /// Its place in the walk's list.
    at: usize,
    path: PathBuf,
    lang: Lang,
    len: u64,
    print: Option<Fingerprint>,
}

impl Witness {
    pub fn new(root: PathBuf, index: Arc<TokenIndex>) -> Self {
        Witness {
            root: root.canonicalize().unwrap_or(root),
            index,
            walks: Mutex::new(HashMap::new()),
            answers: Mutex::new(Vec::new()),
            memo: None,
            screens: Mutex::new(Vec::new()),
            walks_made: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// Tell `memo` too when the run changes a file (the witness is what the run tells).
    pub fn forgetting_in(mut self, memo: Arc<MatchMemo>) -> Self {
        self.memo = Some(memo);
        self
    }

    /// The files of `langs` under the root, with their fingerprints now: the last walk's
    /// list while no directory changed, else a new walk. Also the symlinks of the family whose
    /// target is not a walked file (outside the root, ignored, dangling): never read. And
    /// the walk's number.
    fn walk(&self, langs: &[Lang]) -> (Vec<Found>, Vec<PathBuf>, u64) {
        let listed = {
            let walks = self.walks.lock();
            walks.get(langs).and_then(|w| {
                w.dirs
                    .iter()
                    .all(|(d, m)| mtime_of(d) == *m)
                    .then(|| (w.files.clone(), w.links.clone(), w.number))
            })
        };
        let (files, links, number) = match listed {
            Some(listed) => listed,
            None => {
                let walked = self.walk_tree(langs);
                let listed = (walked.files.clone(), walked.links.clone(), walked.number);
                self.walks.lock().insert(langs.to_vec(), walked);
                listed
            }
        };
        let walked: HashSet<&PathBuf> = files.iter().map(|(p, _)| p).collect();
        let unreached: Vec<PathBuf> = links
            .into_iter()
            .filter(|l| l.canonicalize().map_or(true, |t| !walked.contains(&t)))
            .collect();
        let found = files
            .into_iter()
            .enumerate()
            .filter_map(|(at, (path, lang))| {
                let meta = std::fs::symlink_metadata(&path).ok()?;
                meta.is_file().then(|| Found {
                    at,
                    len: meta.len(),
                    print: Fingerprint::of(&meta),
                    path,
                    lang,
                })
            })
            .collect();
        (found, unreached, number)
    }

    /// Walk the tree (the walk `ast_grep` makes): the directories entered and the files of
    /// `langs`, sorted.
    fn walk_tree(&self, langs: &[Lang]) -> Walked {
        let found: Mutex<Walked> = Mutex::new(Walked {
            number: self
                .walks_made
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            dirs: vec![(self.root.clone(), mtime_of(&self.root))],
            files: Vec::new(),
            links: Vec::new(),
        });
        let builder = agent_tier::ignore_rules::walker(&self.root, true);
        builder.build_parallel().run(|| {
            let found = &found;
            Box::new(move |entry| {
                let Ok(entry) = entry else {
                    return ignore::WalkState::Continue;
                };
                let Some(t) = entry.file_type() else {
                    return ignore::WalkState::Continue;
                };
                if t.is_dir() && entry.depth() > 0 {
                    let m = entry.metadata().ok().and_then(|m| m.modified().ok());
                    let mut f = found.lock();
                    f.dirs.push((entry.path().to_path_buf(), m));
                } else if t.is_file()
                    && let Some(lang) = Lang::from_file(entry.path()).filter(|l| langs.contains(l))
                {
                    let mut f = found.lock();
                    f.files.push((entry.path().to_path_buf(), lang));
                } else if t.is_symlink()
                    && Lang::from_file(entry.path()).is_some_and(|l| langs.contains(&l))
                {
                    found.lock().links.push(entry.path().to_path_buf());
                }
                ignore::WalkState::Continue
            })
        });
        let mut out = found.into_inner();
        out.files.sort();
        out.links.sort();
        out
    }

    /// The files that may hold the name of `key` (a superset: their positions are parsed next), and the
    /// files that could not be read. A file the index holds is screened by its tokens; a stale
    /// one is read (in parallel), tokenized and offered to the index while the index keeps what
    /// it is offered — once it refuses one for its bound the rest are screened by a byte search for the name where it may be a token ([`may_hold`]),
    /// which costs a pass over bytes already read instead of a tokenization that would be
    /// thrown away (a tree the size of Linux's `drivers/net` is past the bound).
    /// A file the screen read before for this name and walk, unchanged since (and not changed
    /// within [`RACY`](crate::fingerprint::RACY) of that read), is judged as then ([`Screened`]).
    fn refresh(
        &self,
        found: &[Found],
        key: &(Vec<Lang>, String),
        walk: u64,
    ) -> (HashSet<PathBuf>, HashSet<PathBuf>) {
        let name = key.1.as_str();
        let want = name_hash(name.as_bytes());
        let mut holders = HashSet::new();
        let mut stale = Vec::new();
        let before = {
            let mut screens = self.screens.lock();
            screens
                .iter()
                .position(|s| s.key == *key && s.walk == walk)
                .map(|i| screens.remove(i).verdicts)
        };
        let mut verdicts = before.unwrap_or_default();
        verdicts.resize(found.iter().map(|f| f.at + 1).max().unwrap_or(0), None);
        for f in found {
            match f.print.and_then(|p| self.index.tokens_of(&f.path, p)) {
                Some(t) => {
                    if t.binary_search(&want).is_ok() {
                        holders.insert(f.path.clone());
                    }
                }
                None => match (f.print, verdicts[f.at]) {
                    (Some(now), Some((then, holds))) if now == then => {
                        if holds {
                            holders.insert(f.path.clone());
                        }
                    }
                    _ => stale.push(f),
                },
            }
        }
        let screened = Mutex::new(Vec::new());
        let skipped = Mutex::new(HashSet::new());
        let holders = Mutex::new(holders);
        let refused = std::sync::atomic::AtomicBool::new(false);
        let finder = memchr::memmem::Finder::new(name.as_bytes());
        let below = Beneath::open(&self.root).ok();
        let next = std::sync::atomic::AtomicUsize::new(0);
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(stale.len().max(1));
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| {
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(f) = stale.get(i) else { break };
                        let text = (f.len <= MAX_FILE_BYTES)
                            .then(|| read_text(below.as_ref(), &f.path))
                            .flatten();
                        let Some(text) = text else {
                            skipped.lock().insert(f.path.clone());
                            continue;
                        };
                        // Read as it was when stat'ed, and settled.
                        let settled = f.print.filter(|p| {
                            p.len == text.len() as u64 && !p.recent(crate::fingerprint::RACY)
                        });
                        let holds = if refused.load(std::sync::atomic::Ordering::Relaxed) {
                            let holds = may_hold(&finder, text.as_bytes());
                            if let Some(print) = settled {
                                screened.lock().push((f.at, print, holds));
                            }
                            holds
                        } else {
                            let toks = tokens::tokens(&text);
                            let (holds, n) = (toks.binary_search(&want).is_ok(), toks.len());
                            let kept = f.print.filter(|p| p.len == text.len() as u64).is_some_and(
                                |print| self.index.note(&f.path, print, Some(toks), false),
                            );
                            // Refused for the bound (not for being too recent): the rest would
                            // be refused too.
                            if !kept && self.index.room() < n {
                                refused.store(true, std::sync::atomic::Ordering::Relaxed);
                            }
                            // Not kept: judged from its tokens now, and as then next time.
                            if let Some(print) = settled.filter(|_| !kept) {
                                screened.lock().push((f.at, print, holds));
                            }
                            holds
                        };
                        if holds {
                            holders.lock().insert(f.path.clone());
                        }
                    }
                });
            }
        });
        for (at, print, holds) in screened.into_inner() {
            verdicts[at] = Some((print, holds));
        }
        let mut screens = self.screens.lock();
        if screens.len() >= SCREENS {
            screens.remove(0);
        }
        screens.push(Screened {
            key: key.clone(),
            walk,
            verdicts,
        });
        (skipped.into_inner(), holders.into_inner())
    }
}

/// Whether `bytes` may hold `finder`'s name as a word token: some occurrence starts or ends a
/// word run (the token index holds a run's prefixes and suffixes), or lies in a run that starts
/// with a digit (the index holds such a run's pieces). Bytes past ASCII count as a run's end, so
/// this admits every file the index would, and maybe more.
fn may_hold(finder: &memchr::memmem::Finder<'_>, bytes: &[u8]) -> bool {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let len = finder.needle().len();
    finder.find_iter(bytes).any(|a| {
        let b = a + len;
        if a == 0 || !word(bytes[a - 1]) || b >= bytes.len() || !word(bytes[b]) {
            return true;
        }
        let run = bytes[..a]
            .iter()
            .rposition(|&c| !word(c))
            .map_or(0, |k| k + 1);
        bytes[run].is_ascii_digit()
    })
}

impl IdentifierWitness for Witness {
    fn occurrences(
        &self,
        near: &Path,
        name: &str,
        limit: usize,
    ) -> Result<Sightings, Box<dyn std::error::Error + Send + Sync>> {
        Ok(self.sightings(near, name, limit)?)
    }

    fn changed(&self, paths: &[PathBuf]) {
        self.index.changed(paths);
        if let Some(memo) = &self.memo {
            memo.changed(paths);
        }
        // A file the run rewrote in the same clock tick may keep its fingerprint: answers from it
        // are not reused, and a created or removed file means a new walk.
        let mut answers = self.answers.lock();
        answers.retain(|a| !a.holders.iter().any(|(p, _)| paths.contains(p)));
        drop(answers);
        // Likewise the screen's verdicts (kept by place in the walk's list: cleared whole).
        self.screens.lock().clear();
        self.walks.lock().retain(|_, w| {
            paths
                .iter()
                .all(|p| w.files.iter().any(|(f, _)| f == p) == p.is_file())
        });
    }
}

impl Witness {
    /// Where `name` occurs as an identifier in the files of `near`'s language family, at most
    /// `limit` occurrences: [`IdentifierWitness::occurrences`].
    fn sightings(&self, near: &Path, name: &str, limit: usize) -> Result<Sightings, WitnessError> {
        let lang = Lang::from_file(near).ok_or_else(|| WitnessError::NoGrammar {
            path: near.to_path_buf(),
        })?;
        let langs = lang.server_family();
        if langs.is_empty() {
            return Err(WitnessError::NoIdentifiers {
                language: lang.id(),
            });
        }
        let (found, links, walk) = self.walk(langs);
        let key = (langs.to_vec(), name.to_string());
        let (skipped, may) = self.refresh(&found, &key, walk);
        let mut unread: Vec<PathBuf> = links.iter().chain(&skipped).cloned().collect();
        unread.sort();
        let holders: Vec<&Found> = found.iter().filter(|f| may.contains(&f.path)).collect();
        let held: Vec<(PathBuf, Option<Fingerprint>)> =
            holders.iter().map(|f| (f.path.clone(), f.print)).collect();
        // Reused while the holders are unchanged and the same files could not be read (a file
        // too big to read stays so until it changes; with one in `drivers/`, every repeated
        // query there parsed its holders again: 1.1 s).
        {
            let answers = self.answers.lock();
            if let Some(a) = answers
                .iter()
                .find(|a| a.key == key && a.holders == held && a.unread == unread)
                && a.sightings.files == found.len() - skipped.len()
                && (a.sightings.occurrences.len() <= limit)
            {
                return Ok(a.sightings.clone());
            }
        }
        let mut out = Sightings {
            files: found.len() - skipped.len(),
            skipped: unread.len(),
            unread: unread.iter().take(UNREAD_SHOWN).cloned().collect(),
            languages: langs.iter().map(|l| l.id().to_string()).collect(),
            ..Default::default()
        };
        out.languages.dedup();
        if let Some(stop) = self.positions(&holders, name, limit, &mut out) {
            return Ok(stop);
        }
        // Kept unless a holder could not be parsed now (perhaps a passing fault).
        if out.skipped == unread.len() {
            let mut answers = self.answers.lock();
            answers.retain(|a| a.key != key);
            if answers.len() >= ANSWERS {
                answers.remove(0);
            }
            answers.push(Answer {
                key,
                holders: held,
                unread,
                sightings: out.clone(),
            });
        }
        Ok(out)
    }

    /// The positions of `name` in `holders` (parsed again, a chunk of files at a time on every
    /// core, in the holders' order), into `out`; `Some` with the truncated answer when `limit`
    /// is reached.
    fn positions(
        &self,
        holders: &[&Found],
        name: &str,
        limit: usize,
        out: &mut Sightings,
    ) -> Option<Sightings> {
        let below = Beneath::open(&self.root).ok();
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        for chunk in holders.chunks(threads * 8) {
            let next = std::sync::atomic::AtomicUsize::new(0);
            let found: Mutex<Vec<(usize, Option<Sites>)>> = Mutex::new(Vec::new());
            std::thread::scope(|s| {
                for _ in 0..threads.min(chunk.len()) {
                    s.spawn(|| {
                        loop {
                            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            let Some(f) = chunk.get(i) else { break };
                            let sites = read_text(below.as_ref(), &f.path)
                                .and_then(|text| sites_in(&text, f.lang, name));
                            found.lock().push((i, sites));
                        }
                    });
                }
            });
            let mut found = found.into_inner();
            found.sort_by_key(|(i, _)| *i);
            for (i, sites) in found {
                let f = chunk[i];
                let Some(sites) = sites else {
                    out.skipped += 1;
                    if out.unread.len() < UNREAD_SHOWN {
                        out.unread.push(f.path.clone());
                    }
                    continue;
                };
                for (line, byte) in sites {
                    if out.occurrences.len() >= limit {
                        out.truncated = true;
                        return Some(out.clone());
                    }
                    out.occurrences.push(Occurrence {
                        path: f.path.clone(),
                        line,
                        byte,
                    });
                }
            }
        }
        None
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod tests {
    use super::*;

    fn write(root: &Path, rel: &str, text: &str) -> PathBuf {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p
    }

    fn sites(w: &Witness, near: &Path, name: &str) -> Vec<(String, u32, u32)> {
        w.occurrences(near, name, 1000)
            .unwrap()
            .occurrences
            .into_iter()
            .map(|o| {
                let rel = o.path.strip_prefix(&w.root).unwrap().display().to_string();
                (rel, o.line, o.byte)
            })
            .collect()
    }

    /// A file the token index would admit for a name, the byte screen admits too: every
    /// substring of every line of real and hostile text, as a name.
    #[test]
    fn the_byte_screen_admits_every_file_the_index_would() {
        let texts = [
            "def fetch_all(x): return fetch(x) + prefetch(x) + fetcher",
            "1u32 0x1f 12ab34cd _x9 x_9_ a1b2 3d __init__",
            "café naïve → arrow αβγ_δ x→y",
            "kfree(p); kfree_skb(s); dev_kfree_skb_any(s); skb_kfree",
            "",
        ];
        let (mut checked, mut admitted_more) = (0, 0);
        for text in texts {
            let toks = tokens::tokens(text);
            for a in 0..text.len() {
                for b in a + 1..=text.len().min(a + 24) {
                    let (Some(name), true) = (text.get(a..b), text.is_char_boundary(a)) else {
                        continue;
                    };
                    let finder = memchr::memmem::Finder::new(name.as_bytes());
                    let by_bytes = may_hold(&finder, text.as_bytes());
                    if toks.binary_search(&name_hash(name.as_bytes())).is_ok() {
                        checked += 1;
                        assert!(by_bytes, "{name:?} in {text:?}: the index holds it");
                    } else if by_bytes {
                        admitted_more += 1;
                    }
                }
            }
        }
        assert!(checked > 200, "{checked}");
        // It is a screen, not the index: it lets some more through (to be parsed, and found not
        // to be identifiers).
        assert!(admitted_more > 0);
        // A name only inside words is ruled out.
        let finder = memchr::memmem::Finder::new(b"ree");
        assert!(!may_hold(&finder, b"kfree_x(a) xkfreex"));
    }

    /// A tree past the index's bound (here a bound of 0: nothing is kept) gets the same answers
    /// as one the index holds, query after query.
    #[test]
    fn a_full_index_answers_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let a = write(
            &root,
            "a.c",
            "void kfree(void *p);\nvoid f(void *p) { kfree(p); kfree_skb(p); }\n",
        );
        write(
            &root,
            "b.c",
            "/* kfree */ int g(void) { return kfreed + 1; }\n",
        );
        write(
            &root,
            "c/d.c",
            "#define K kfree\nint h(int kfree) { return kfree; }\n",
        );
        let roomy = Witness::new(root.clone(), Arc::new(TokenIndex::indexing_recent(1 << 20)));
        let full = Witness::new(root.clone(), Arc::new(TokenIndex::indexing_recent(0)));
        for name in ["kfree", "kfree_skb", "p", "h", "kfreed", "ree"] {
            let want = sites(&roomy, &a, name);
            for _ in 0..2 {
                assert_eq!(sites(&full, &a, name), want, "{name}");
            }
        }
        // The macro's body is not parsed as code: its `kfree` is not an identifier there.
        assert_eq!(
            sites(&full, &a, "kfree"),
            vec![
                ("a.c".into(), 0, 5),
                ("a.c".into(), 1, 18),
                ("c/d.c".into(), 1, 10),
                ("c/d.c".into(), 1, 26),
            ]
        );
        // A limit cuts at the same occurrence, in the holders' order.
        let cut = full.occurrences(&a, "kfree", 3).unwrap();
        assert!(cut.truncated);
        let cut: Vec<(u32, u32)> = cut.occurrences.iter().map(|o| (o.line, o.byte)).collect();
        assert_eq!(cut, [(0, 5), (1, 18), (1, 10)]);
    }

    /// Past the index's bound, a repeated query judges a file the screen read before, unchanged
    /// and settled since, as then; a file changed since is read again. (The files are aged past
    /// the racy window first: a file changed within it is never judged from before.)
    #[test]
    fn the_screen_keeps_its_verdicts_until_a_file_changes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let a = write(&root, "a.c", "void f(void *p) { kfree(p); }\n");
        write(&root, "b.c", "int g(void) { return 1; }\n");
        write(&root, "c.c", "/* kfree */ int h;\n");
        let full = Witness::new(root.clone(), Arc::new(TokenIndex::indexing_recent(0)));
        // Within the racy window nothing is kept.
        assert_eq!(sites(&full, &a, "kfree"), vec![("a.c".into(), 0, 18)]);
        let kept = |w: &Witness| -> Vec<bool> {
            let screens = w.screens.lock();
            screens
                .iter()
                .flat_map(|s| s.verdicts.iter().flatten().map(|(_, holds)| *holds))
                .collect()
        };
        assert!(kept(&full).is_empty());
        std::thread::sleep(crate::fingerprint::RACY + std::time::Duration::from_millis(200));
        assert_eq!(sites(&full, &a, "kfree"), vec![("a.c".into(), 0, 18)]);
        // a.c and c.c may hold it (c.c in a comment, which the parse then rules out), b.c not.
        assert_eq!(kept(&full), [true, false, true]);
        assert_eq!(sites(&full, &a, "kfree"), vec![("a.c".into(), 0, 18)]);
        // Changed (same length, so only the times tell): read again, and found.
        write(&root, "b.c", "int g(void) { kfree(0); }\n");
        assert_eq!(
            sites(&full, &a, "kfree"),
            vec![("a.c".into(), 0, 18), ("b.c".into(), 0, 14)]
        );
        // Another name has its own verdicts.
        assert_eq!(sites(&full, &a, "g"), vec![("b.c".into(), 0, 4)]);
    }

    /// A file too big to read leaves the answer reusable: it is kept with the files that could
    /// not be read and reused while they are the same; once the big file shrinks, it is read.
    #[test]
    fn an_answer_with_an_unread_file_is_reused_while_the_same_files_are_unread() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let a = write(&root, "a.c", "void f(void *p) { kfree(p); }\n");
        let big = write(&root, "big.c", "");
        std::fs::File::options()
            .write(true)
            .open(&big)
            .unwrap()
            .set_len(MAX_FILE_BYTES + 1)
            .unwrap();
        let w = Witness::new(root.clone(), Arc::new(TokenIndex::indexing_recent(1 << 20)));
        let first = w.occurrences(&a, "kfree", 100).unwrap();
        assert_eq!((first.files, first.skipped), (1, 1));
        assert_eq!(first.unread, std::slice::from_ref(&big));
        assert_eq!(w.answers.lock().len(), 1, "the answer was kept");
        let again = w.occurrences(&a, "kfree", 100).unwrap();
        assert_eq!(again.occurrences, first.occurrences);
        std::fs::write(&big, "int g(void) { kfree(0); }\n").unwrap();
        let after = w.occurrences(&a, "kfree", 100).unwrap();
        assert_eq!((after.files, after.skipped), (2, 0));
        assert_eq!(after.occurrences.len(), 2);
    }

    #[test]
    fn identifiers_only_never_strings_or_comments() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let a = write(
            &root,
            "a.py",
            "def fetch(x):\n    return x\n# fetch in a comment\ns = \"fetch in a string\"\n",
        );
        write(
            &root,
            "pkg/b.py",
            "from a import fetch\nprint(fetch(1), f\"{fetch}\")\nobj.fetch = 2\n",
        );
        write(&root, "c.js", "fetch(1)\n");
        let w = Witness::new(root.clone(), Default::default());
        assert_eq!(
            sites(&w, &a, "fetch"),
            vec![
                ("a.py".into(), 0, 4),
                ("pkg/b.py".into(), 0, 14),
                ("pkg/b.py".into(), 1, 6),
                ("pkg/b.py".into(), 1, 19),
                ("pkg/b.py".into(), 2, 4),
            ]
        );
        // The JavaScript file is another language family.
        let js = root.join("c.js");
        assert_eq!(sites(&w, &js, "fetch"), vec![("c.js".into(), 0, 0)]);
    }

    #[test]
    fn a_file_without_identifiers_to_witness_is_an_error_saying_why() {
        let dir = tempfile::tempdir().unwrap();
        let w = Witness::new(dir.path().to_path_buf(), Default::default());
        let err = w
            .occurrences(Path::new("notes.cobol"), "x", 10)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "no grammar for `notes.cobol`; the witness knows {}",
                Lang::ids()
            )
        );
        let err = w.occurrences(Path::new("a.json"), "x", 10).unwrap_err();
        assert_eq!(err.to_string(), "json files have no identifiers to witness");
    }

    /// Lines as the language servers number them: a lone `\r` ends one too.
    #[test]
    fn lines_end_at_lf_crlf_and_lone_cr() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let js = write(&root, "c.js", "x = 1;\rfetch(1);\r\n\r  fetch(2);\n");
        assert_eq!(
            sites(
                &Witness::new(root.clone(), Default::default()),
                &js,
                "fetch"
            ),
            vec![("c.js".into(), 1, 0), ("c.js".into(), 3, 2)]
        );
    }

    #[test]
    fn changes_on_disk_and_by_the_run_are_seen() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let a = write(&root, "a.py", "def old():\n    pass\n");
        let w = Witness::new(root.clone(), Default::default());
        assert_eq!(sites(&w, &a, "old").len(), 1);
        // A new file, and the same size with another name (mtime may not move): the run says
        // it changed it.
        write(&root, "b.py", "old()\n");
        std::fs::write(&a, "def new():\n    pass\n").unwrap();
        w.changed(std::slice::from_ref(&a));
        assert_eq!(sites(&w, &a, "old"), vec![("b.py".into(), 0, 0)]);
        assert_eq!(sites(&w, &a, "new"), vec![("a.py".into(), 0, 4)]);
        std::fs::remove_file(root.join("b.py")).unwrap();
        assert!(sites(&w, &a, "old").is_empty());
    }

    #[test]
    fn other_families_and_hostile_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let rs = write(
            &root,
            "src/lib.rs",
            "pub struct Greeter { name: String }\nfn f(g: Greeter) -> String { println!(\"{}\", g.name); g.name }\n",
        );
        assert_eq!(
            sites(&Witness::new(root.clone(), Default::default()), &rs, "name").len(),
            3,
            "field declaration, macro argument, field access"
        );
        let ts = write(
            &root,
            "a.ts",
            "export interface Shape { area(): number }\nconst s: Shape = null!;\n",
        );
        write(
            &root,
            "b.tsx",
            "import { Shape } from './a';\nlet t: Shape;\n",
        );
        assert_eq!(
            sites(
                &Witness::new(root.clone(), Default::default()),
                &ts,
                "Shape"
            )
            .len(),
            4
        );
        // Not UTF-8, a FIFO, deeply nested: skipped or searched, never a hang or a crash.
        std::fs::write(root.join("bad.py"), b"x = '\xff'\n").unwrap();
        let fifo = root.join("pipe.py");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        let deep = format!("x = {}1{}\n", "[".repeat(50_000), "]".repeat(50_000));
        let py = write(&root, "deep.py", &deep);
        let s = Witness::new(root.clone(), Default::default())
            .occurrences(&py, "x", 10)
            .unwrap();
        assert_eq!(s.occurrences.len(), 1);
        assert_eq!(s.skipped, 1, "the file that is not UTF-8");
    }
}
