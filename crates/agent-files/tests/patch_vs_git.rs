//! `apply_patch` against real `git apply` (issue 22): random files and random edits, rendered as
//! unified diffs by the generator below, applied through the tool's public path (the registry's
//! `call`) and by git. With correct hunk counts the reference is `git apply`; with corrupted
//! counts it is `git apply --recount`. Every case must end with the same file bytes on both
//! sides, or be refused by both — never a silent difference. With corrupted counts the tool must
//! also name every recounted hunk.
//!
//! Where the generator stays away from inputs on purpose (each is explained where it is done):
//! - hunks without leading context not at the top of the file, or without trailing context not
//!   at its end, except with `-U0` (git then requires `--unidiff-zero`): git pins such hunks to the
//!   file's start or end, the tool does not (a model's context-free hunk is applied where it
//!   matches, nearest to its header line). The renderer only makes such hunks where git agrees.
//! - a `--- `/`+++ ` line pair inside a hunk whose counts are corrupted: `git apply --recount`
//!   counts it as a deleted and an added line; the tool takes it for the next file's header (a
//!   plain multi-file diff without `diff ` lines is what models write). With correct counts the
//!   pair stays a pair of hunk lines on both sides, unless the next line is an `@@`.
//! - an empty context line written without its space as the last line of a hunk whose counts are
//!   corrupted: blank lines after a complete hunk are separators for the tool, and blank lines at
//!   the end of the input are the patch's own trailing newlines, where git counts them.
//! - CRLF files: the tool deliberately matches lines without their terminator.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use agent_tier::{Registry, RunInfo, Surface};
use proptest::prelude::Rng as _;
use proptest::test_runner::{RngAlgorithm, TestRng};
use serde_json::json;
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

/// Cases in all (about half with corrupted counts).
const CASES: usize = 2400;
/// The seed of proptest's ChaCha generator: the same cases on every run.
const SEED: [u8; 32] = *b"agent-tools apply_patch vs git!!";

/// Draws from proptest's deterministic generator, in the shapes the case generator needs.
struct Rng(TestRng);

impl Rng {
    fn seeded() -> Rng {
        Rng(TestRng::from_seed(RngAlgorithm::ChaCha, &SEED))
    }
    fn next(&mut self) -> u64 {
        self.0.next_u64()
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// Few lines, so they repeat; some look like diff syntax once prefixed (`-- sql` deleted is
/// `--- sql`, `- ` deleted is `-- `, `\ tail` looks like a no-newline marker).
const VOCAB: &[&str] = &[
    "a",
    "b",
    "c",
    "a",
    "",
    "}",
    "    x += 1;",
    "-- sql",
    "++ inc",
    "- ",
    "\\ tail",
    "@@ at",
];

/// A file's text: lines without terminators, and whether the last one has one.
#[derive(Clone, PartialEq, Debug)]
struct Text {
    lines: Vec<String>,
    eol: bool,
}

impl Text {
    fn bytes(&self) -> Vec<u8> {
        let mut s = self.lines.join("\n");
        if self.eol && !self.lines.is_empty() {
            s.push('\n');
        }
        s.into_bytes()
    }
    /// A last line that is empty and unterminated would not exist: such a file ends with `\n`.
    fn normalised(mut self) -> Text {
        if self.lines.last().is_none_or(|l| l.is_empty()) {
            self.eol = true;
        }
        self
    }
    /// Line `i` is the last one and has no terminator.
    fn unterminated(&self, i: usize) -> bool {
        !self.eol && i + 1 == self.lines.len()
    }
}

fn random_lines(rng: &mut Rng, n: usize) -> Vec<String> {
    (0..n)
        .map(|_| VOCAB[rng.below(VOCAB.len())].to_string())
        .collect()
}

/// One step of the edit script, by line index in the old and the new text.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Op {
    Keep(usize, usize),
    Del(usize),
    Add(usize),
}

/// A random edit of `old`: the new text and the script from one to the other.
fn edit(rng: &mut Rng, old: &Text) -> (Text, Vec<Op>) {
    let mut new = Vec::new();
    let mut ops = Vec::new();
    let add = |rng: &mut Rng, new: &mut Vec<String>, ops: &mut Vec<Op>| {
        let n = 1 + rng.below(2);
        for l in random_lines(rng, n) {
            ops.push(Op::Add(new.len()));
            new.push(l);
        }
    };
    for (i, line) in old.lines.iter().enumerate() {
        if rng.chance(10) {
            add(rng, &mut new, &mut ops);
        }
        match rng.below(100) {
            0..70 => {
                ops.push(Op::Keep(i, new.len()));
                new.push(line.clone());
            }
            70..85 => ops.push(Op::Del(i)),
            _ => {
                ops.push(Op::Del(i));
                add(rng, &mut new, &mut ops);
            }
        }
    }
    if old.lines.is_empty() || rng.chance(15) {
        add(rng, &mut new, &mut ops);
    }
    let eol = if rng.chance(85) { old.eol } else { !old.eol };
    let new = Text { lines: new, eol }.normalised();
    // A kept line must keep its terminator too: an old last line without one that gains one (or
    // the reverse) is a changed line.
    let ops = ops
        .into_iter()
        .flat_map(|op| match op {
            Op::Keep(i, j) if old.unterminated(i) != new.unterminated(j) => {
                vec![Op::Del(i), Op::Add(j)]
            }
            op => vec![op],
        })
        .collect();
    (new, ops)
}

/// One rendered hunk: its true header ranges and its body lines.
struct RenderedHunk {
    old: (usize, usize),
    new: (usize, usize),
    body: Vec<String>,
}

/// `l,s`, or `l` when s is 1, as diff writes it.
fn range((start, count): (usize, usize)) -> String {
    if count == 1 {
        format!("{start}")
    } else {
        format!("{start},{count}")
    }
}

/// The hunks of `ops` with `context` lines of context. `strip` says whether an empty context
/// line may lose its space (`last` tells it whether the line ends its hunk).
fn hunks(
    ops: &[Op],
    old: &Text,
    new: &Text,
    context: usize,
    strip: &mut dyn FnMut(bool) -> bool,
) -> Vec<RenderedHunk> {
    let changes: Vec<usize> = (0..ops.len())
        .filter(|&p| !matches!(ops[p], Op::Keep(..)))
        .collect();
    let mut groups: Vec<(usize, usize)> = Vec::new();
    for &p in &changes {
        match groups.last_mut() {
            Some((_, last)) if p - *last - 1 <= 2 * context => *last = p,
            _ => groups.push((p, p)),
        }
    }
    let sides = |op: &Op| match op {
        Op::Keep(..) => (1, 1),
        Op::Del(_) => (1, 0),
        Op::Add(_) => (0, 1),
    };
    groups
        .into_iter()
        .map(|(first, last)| {
            let from = first.saturating_sub(context);
            let to = (last + context + 1).min(ops.len());
            let before = ops[..from]
                .iter()
                .map(sides)
                .fold((0, 0), |a, s| (a.0 + s.0, a.1 + s.1));
            let count = ops[from..to]
                .iter()
                .map(sides)
                .fold((0, 0), |a, s| (a.0 + s.0, a.1 + s.1));
            let start = |before: usize, count: usize| before + usize::from(count > 0);
            let mut body = Vec::new();
            for (n, op) in ops[from..to].iter().enumerate() {
                let (line, no_eol) = match *op {
                    Op::Keep(i, _) => {
                        let text = &old.lines[i];
                        let bare = text.is_empty() && strip(n + 1 == to - from);
                        (
                            if bare {
                                String::new()
                            } else {
                                format!(" {text}")
                            },
                            old.unterminated(i),
                        )
                    }
                    Op::Del(i) => (format!("-{}", old.lines[i]), old.unterminated(i)),
                    Op::Add(j) => (format!("+{}", new.lines[j]), new.unterminated(j)),
                };
                body.push(line);
                if no_eol {
                    body.push("\\ No newline at end of file".into());
                }
            }
            RenderedHunk {
                old: (start(before.0, count.0), count.0),
                new: (start(before.1, count.1), count.1),
                body,
            }
        })
        .collect()
}

/// One generated case.
struct Case {
    /// (path, old text, new text).
    files: Vec<(String, Text, Text)>,
    patch: String,
    /// Counts corrupted: compare with `git apply --recount`.
    wrong: bool,
    /// `-U0`: git needs `--unidiff-zero`.
    zero: bool,
    /// `hunk k of path` for every hunk whose counts were corrupted.
    recounted: Vec<String>,
    /// A hunk's start line was moved: both sides search for it, and may find it elsewhere.
    shifted: bool,
    /// A hunk expects a line no file has: both sides must refuse.
    broken: bool,
}

/// The body lines of a patch are those of its hunks; whether a `--- `/`+++ ` pair sits among
/// them where the two sides read it differently (see the module doc).
fn ambiguous(body: &[String], next_is_hunk: bool, wrong: bool) -> bool {
    (0..body.len().saturating_sub(1)).any(|i| {
        body[i].starts_with("--- ")
            && body[i + 1].starts_with("+++ ")
            && (wrong || (i + 2 == body.len() && next_is_hunk))
    })
}

/// A random case, or `None` when the draw is one the generator stays away from.
fn case(rng: &mut Rng) -> Option<Case> {
    let wrong = rng.chance(50);
    let context = match rng.below(10) {
        0 => 0,
        n => 1 + n % 3,
    };
    let n_files = 1 + rng.below(3);
    // `git apply --recount` reads up to the next `@@` or `diff ` line: a multi-file patch with
    // corrupted counts needs `diff --git` lines for git to see where a file ends.
    let git_lines = (wrong && n_files > 1) || rng.chance(60);
    let mut files = Vec::new();
    let mut patch = String::new();
    let mut recounted = Vec::new();
    let (mut shifted, mut broken) = (false, false);
    for f in 0..n_files {
        let path = if f == 2 {
            "sub/f2.txt".to_string()
        } else {
            format!("f{f}.txt")
        };
        let n = if rng.chance(10) { 0 } else { rng.below(13) };
        let eol = rng.chance(80);
        let old = Text {
            lines: random_lines(rng, n),
            eol,
        }
        .normalised();
        let (new, ops) = edit(rng, &old);
        if new.bytes() == old.bytes() {
            files.push((path, old, new));
            continue;
        }
        let strip_percent = if rng.chance(50) { 40 } else { 0 };
        let mut strip = |last: bool| !(wrong && last) && rng.next() % 100 < strip_percent;
        let mut rendered = hunks(&ops, &old, &new, context, &mut strip);
        let is_context = |l: &String| l.is_empty() || l.starts_with(' ');
        // A wrong start line, as models write: only for a file's one hunk with context on both
        // sides, not moved to line 1 or 0. Git pins a hunk at line 1, or one without trailing
        // context, to the file's start or end, and searches each hunk from its own header where
        // the tool carries the offset the previous hunk was found at; the tool searches near
        // the header's line only. Where both search alike, they must find the same place.
        if let [h] = rendered.as_mut_slice()
            && rng.chance(12)
            && h.body.first().is_some_and(is_context)
            && h.body
                .iter()
                .rev()
                .find(|l| !l.starts_with('\\'))
                .is_some_and(is_context)
        {
            let d = 1 + rng.below(3);
            if rng.chance(50) && h.old.0 > d + 1 {
                h.old.0 -= d;
                h.new.0 -= d;
            } else {
                h.old.0 += d;
                h.new.0 += d;
            }
            shifted = true;
        }
        // A line the file does not have: the patch does not apply.
        if rng.chance(8) {
            let k = rng.below(rendered.len());
            let h = &mut rendered[k];
            let old_side: Vec<usize> = (0..h.body.len())
                .filter(|&i| is_context(&h.body[i]) || h.body[i].starts_with('-'))
                .collect();
            if !old_side.is_empty() {
                let i = old_side[rng.below(old_side.len())];
                let kind = if h.body[i].starts_with('-') { '-' } else { ' ' };
                h.body[i] = format!("{kind}~absent~");
                broken = true;
            }
        }
        if git_lines {
            writeln!(patch, "diff --git a/{path} b/{path}").unwrap();
        }
        writeln!(patch, "--- a/{path}\n+++ b/{path}").unwrap();
        let count = rendered.len();
        for (k, h) in rendered.iter().enumerate() {
            if ambiguous(&h.body, k + 1 < count, wrong) {
                return None;
            }
            let (mut old_r, mut new_r) = (h.old, h.new);
            if wrong && (rng.chance(50) || (k + 1 == count && recounted.is_empty())) {
                let bend = |c: usize, rng: &mut Rng| {
                    let d = 1 + rng.below(3);
                    if rng.chance(50) && c >= d {
                        c - d
                    } else {
                        c + d
                    }
                };
                match rng.below(3) {
                    0 => old_r.1 = bend(old_r.1, rng),
                    1 => new_r.1 = bend(new_r.1, rng),
                    _ => {
                        old_r.1 = bend(old_r.1, rng);
                        new_r.1 = bend(new_r.1, rng);
                    }
                }
                recounted.push(format!("hunk {} of {path}:", k + 1));
            }
            writeln!(patch, "@@ -{} +{} @@", range(old_r), range(new_r)).unwrap();
            for l in &h.body {
                writeln!(patch, "{l}").unwrap();
            }
        }
        files.push((path, old, new));
    }
    if patch.is_empty() {
        return None;
    }
    Some(Case {
        files,
        patch,
        wrong,
        zero: context == 0,
        recounted,
        shifted,
        broken,
    })
}

fn write_tree(dir: &Path, files: &[(String, Text, Text)]) {
    for (path, old, _) in files {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, old.bytes()).unwrap();
    }
}

fn read_tree(dir: &Path, files: &[(String, Text, Text)]) -> Vec<Option<Vec<u8>>> {
    files
        .iter()
        .map(|(path, ..)| std::fs::read(dir.join(path)).ok())
        .collect()
}

/// What one side did: `None` when it refused, else the files' bytes after.
type Outcome = Option<Vec<Option<Vec<u8>>>>;

/// `git apply` in `dir` (not inside any repository: the discovery stops at `ceiling`).
fn git_apply(dir: &Path, ceiling: &Path, patch: &Path, c: &Case) -> Outcome {
    let mut cmd = Command::new("git");
    cmd.current_dir(dir)
        .env("GIT_CEILING_DIRECTORIES", ceiling)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .arg("apply");
    if c.wrong {
        cmd.arg("--recount");
    }
    if c.zero {
        cmd.arg("--unidiff-zero");
    }
    let out = cmd.arg(patch).output().expect("run git apply");
    out.status.success().then(|| read_tree(dir, &c.files))
}

/// Runs one case on both sides; an error describes a difference.
fn run(rt: &tokio::runtime::Runtime, scratch: &Path, n: usize, c: &Case) -> Result<bool, String> {
    let ours_dir = scratch.join(format!("ours/{n}"));
    let git_dir = scratch.join(format!("git/{n}"));
    write_tree(&ours_dir, &c.files);
    write_tree(&git_dir, &c.files);
    let patch_file = scratch.join(format!("patches/{n}.diff"));
    std::fs::write(&patch_file, &c.patch).unwrap();
    let registry = Registry::new(RunInfo {
        root: ours_dir.clone(),
        ..Default::default()
    });
    agent_files::attach(&registry);
    let out = rt.block_on(registry.call("apply_patch", json!({"patch": c.patch}), Surface::Full));
    let ours: Outcome = (!out.is_error).then(|| read_tree(&ours_dir, &c.files));
    let theirs = git_apply(&git_dir, scratch, &patch_file, c);
    let describe = |why: &str| {
        let olds: Vec<String> = c
            .files
            .iter()
            .map(|(p, old, _)| format!("{p}: {:?}", String::from_utf8_lossy(&old.bytes())))
            .collect();
        format!(
            "case {n} ({}{}): {why}\nfiles before:\n{}\npatch:\n{}\ntool said: {}\nours: {:?}\ngit:  {:?}",
            if c.wrong {
                "corrupted counts, --recount"
            } else {
                "correct counts"
            },
            if c.zero { ", -U0" } else { "" },
            olds.join("\n"),
            c.patch,
            out.text,
            ours.as_ref().map(|t| t
                .iter()
                .map(|b| b.as_ref().map(|b| String::from_utf8_lossy(b).into_owned()))
                .collect::<Vec<_>>()),
            theirs.as_ref().map(|t| t
                .iter()
                .map(|b| b.as_ref().map(|b| String::from_utf8_lossy(b).into_owned()))
                .collect::<Vec<_>>()),
        )
    };
    if ours != theirs {
        return Err(describe("the tool and git disagree"));
    }
    if c.broken && ours.is_some() {
        return Err(describe("a hunk with a line no file has was applied"));
    }
    let Some(after) = &ours else {
        if read_tree(&ours_dir, &c.files)
            != c.files
                .iter()
                .map(|(_, o, _)| Some(o.bytes()))
                .collect::<Vec<_>>()
        {
            return Err(describe("the tool refused but changed a file"));
        }
        return Ok(false);
    };
    let expected: Vec<Option<Vec<u8>>> = c
        .files
        .iter()
        .map(|(_, _, new)| Some(new.bytes()))
        .collect();
    if !c.shifted && *after != expected {
        return Err(describe(
            "both applied, but not to the new text the diff was made from",
        ));
    }
    for r in &c.recounted {
        if !out.text.contains(r) || !out.text.contains("recounted") {
            return Err(describe(&format!(
                "the result does not say `{r} … recounted`"
            )));
        }
    }
    if c.recounted.is_empty() && out.text.contains("recounted") {
        return Err(describe("a correct patch was reported as recounted"));
    }
    Ok(true)
}

#[test]
fn apply_patch_agrees_with_git_apply() {
    let version = Command::new("git").arg("--version").output();
    assert!(
        version.as_ref().is_ok_and(|o| o.status.success()),
        "this test needs git on PATH (it compares with `git apply`): {version:?}"
    );
    let started = Instant::now();
    let mut rng = Rng::seeded();
    let mut cases = Vec::new();
    let mut avoided = 0;
    while cases.len() < CASES {
        match case(&mut rng) {
            Some(c) => cases.push(c),
            None => avoided += 1,
        }
    }
    let scratch = tempfile::tempdir().unwrap();
    std::fs::create_dir(scratch.path().join("patches")).unwrap();
    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(4);
    let results: Vec<(usize, Result<bool, String>)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let cases = &cases;
                let scratch = scratch.path();
                s.spawn(move || {
                    let rt = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .unwrap();
                    (w..cases.len())
                        .step_by(workers)
                        .map(|n| (n, run(&rt, scratch, n, &cases[n])))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    let failures: Vec<&String> = results
        .iter()
        .filter_map(|(_, r)| r.as_ref().err())
        .collect();
    let refused_by_both = results
        .iter()
        .filter(|(_, r)| matches!(r, Ok(false)))
        .count();
    let wrong = cases.iter().filter(|c| c.wrong).count();
    let shifted = cases.iter().filter(|c| c.shifted).count();
    let broken = cases.iter().filter(|c| c.broken).count();
    let recounted: usize = cases.iter().map(|c| c.recounted.len()).sum();
    println!(
        "apply_patch vs git apply: {} cases ({} with correct counts, {wrong} with corrupted counts: {recounted} hunks recounted), {shifted} with a moved hunk, {broken} with a line no file has; {refused_by_both} refused by both, {} differences; {avoided} draws avoided; {:.1?}",
        cases.len(),
        cases.len() - wrong,
        failures.len(),
        started.elapsed()
    );
    assert!(
        failures.is_empty(),
        "{} of {} cases differ; the first:\n\n{}",
        failures.len(),
        cases.len(),
        failures
            .iter()
            .take(3)
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n\n")
    );
}
