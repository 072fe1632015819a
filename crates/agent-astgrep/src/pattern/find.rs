//! Where in a parsed file a compiled pattern matches: a pre-order walk, as ast-grep-core's
//! `find_all` walks, that enters only the nodes whose text holds the pattern's anchor.
//!
//! The anchor is, of the tokens that appear verbatim wherever the pattern matches (its words,
//! [`Compiled::literals`], and its other verbatim tokens, [`Compiled::texts`]), the one with
//! the fewest occurrences in the file. A match's node encloses the token that matched the
//! anchor, and a node's range encloses its descendants' ranges, so a node whose range holds no
//! occurrence of the anchor cannot match, nor can any node under it: neither is visited. This
//! is the reasoning of the file prefilter (a file lacking a word cannot match) applied to each
//! subtree, and it stands on the same ground: a word is matched against a node of that text,
//! and a verbatim token is a kind the grammar lexes only from its own spelling
//! (`LangSpec::lexed_otherwise` lists the others, which are in neither list). Occurrences are
//! found as `needle.rs` finds them: by substring, overlapping ones too (`aa` twice in `aaa`),
//! so an occurrence inside a longer word only lets a node be visited; a keyword of a grammar
//! whose keywords are whole words, only where no word byte follows it.
//!
//! Measured (docs/benchmarks.md, "a walk that enters only the nodes holding the anchor"):
//! visiting every node of a tree was about a sixth of a parse-bound search's CPU.
//!
//! Owns: the choice of the anchor and the walk. Never: decides a match (the matcher does).

use super::Compiled;
use crate::lang::Lang;
use crate::needle::Needle;
use ast_grep_core::matcher::{Matcher, MatcherExt};
use ast_grep_core::tree_sitter::StrDoc;
use ast_grep_core::{AstGrep, Node, NodeMatch};
use bit_set::BitSet;
use std::ops::Range;

type D = StrDoc<Lang>;

/// Every occurrence (start offsets, ascending) of one token in a file's bytes.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Anchor {
    starts: Vec<usize>,
    len: usize,
}

impl Anchor {
    /// Of `needles`, the one with the fewest occurrences in `text`, or `None` when there is
    /// none to anchor on.
    pub(crate) fn rarest(needles: &[Needle], text: &[u8]) -> Option<Self> {
        let mut best: Option<Anchor> = None;
        for needle in needles {
            if needle.len() == 0 {
                continue;
            }
            let limit = best.as_ref().map_or(usize::MAX, |b| b.starts.len());
            let starts = needle.occurrences(text, limit);
            if starts.len() < limit {
                best = Some(Anchor {
                    starts,
                    len: needle.len(),
                });
            }
        }
        best
    }

    /// Whether `range` holds a whole occurrence.
    fn within(&self, range: &Range<usize>) -> bool {
        let i = self.starts.partition_point(|&s| s < range.start);
        self.starts
            .get(i)
            .is_some_and(|&s| s + self.len <= range.end)
    }
}

impl Compiled {
    /// The pattern's matches in `ast`, in pre-order (by start, an enclosing node before the
    /// nodes it encloses), as `find_all` lists them.
    pub fn find_all<'t>(
        &'t self,
        ast: &'t AstGrep<D>,
    ) -> impl Iterator<Item = NodeMatch<'t, D>> + 't {
        self.walk(ast)
    }

    fn walk<'t>(&'t self, ast: &'t AstGrep<D>) -> Walk<'t> {
        let (mut needles, texts) = self.needles();
        needles.extend(texts);
        let anchor = Anchor::rarest(&needles, ast.get_text().as_bytes());
        Walk {
            stack: vec![ast.root()],
            anchor,
            kinds: self.pattern.potential_kinds(),
            compiled: self,
            visited: 0,
        }
    }
}

/// The pruned pre-order walk: a node is taken off the stack, its children go on (last first),
/// and it is offered to the matcher when its kind can match.
struct Walk<'t> {
    stack: Vec<Node<'t, D>>,
    anchor: Option<Anchor>,
    kinds: Option<BitSet>,
    compiled: &'t Compiled,
    /// Nodes taken off the stack so far (what the tests read).
    visited: usize,
}

impl<'t> Iterator for Walk<'t> {
    type Item = NodeMatch<'t, D>;

    fn next(&mut self) -> Option<Self::Item> {
        while let Some(node) = self.stack.pop() {
            self.visited += 1;
            if let Some(anchor) = &self.anchor
                && !anchor.within(&node.range())
            {
                continue;
            }
            let first = self.stack.len();
            self.stack.extend(node.children());
            self.stack[first..].reverse();
            if self
                .kinds
                .as_ref()
                .is_some_and(|k| !k.contains(node.kind_id().into()))
            {
                continue;
            }
            if let Some(found) = self.compiled.pattern.match_node(node) {
                return Some(found);
            }
        }
        None
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod tests {
    use super::*;
    use crate::pattern::compile;

    #[test]
    fn the_rarest_token_is_the_anchor_and_overlapping_occurrences_count() {
        let needles = |tokens: &[&str]| -> Vec<Needle> {
            tokens.iter().map(|t| Needle::new(t, false)).collect()
        };
        let text = b"raise f(x); raise g(h(y)); raise k() aaa";
        let a = Anchor::rarest(&needles(&["(", "raise", "aa"]), text).unwrap();
        assert_eq!(
            a,
            Anchor {
                starts: vec![text.len() - 3, text.len() - 2],
                len: 2
            }
        );
        let a = Anchor::rarest(&needles(&["(", "raise"]), b"raise f(x); raise g(y)").unwrap();
        assert_eq!(a.len, 1);
        assert_eq!(a.starts, [7, 19]);
        assert!(Anchor::rarest(&[], b"x").is_none());
        let none = Anchor::rarest(&needles(&["zz"]), b"x").unwrap();
        assert!(none.starts.is_empty() && !none.within(&(0..1)));
    }

    #[test]
    fn a_range_holds_an_occurrence_only_whole() {
        let a = Anchor::rarest(&[Needle::new("===", false)], b"a === b").unwrap();
        assert!(a.within(&(0..7)));
        assert!(a.within(&(2..5)));
        assert!(!a.within(&(2..4)), "the occurrence ends past the range");
        assert!(!a.within(&(3..7)), "the occurrence starts before the range");
    }

    /// The pruned walk finds what ast-grep-core's walk of every node finds, in the same order,
    /// over patterns with and without an anchor, nested matches, an anchor inside longer words
    /// and in comments and strings, and a file that does not parse cleanly.
    #[test]
    fn the_pruned_walk_finds_what_a_walk_of_every_node_finds() {
        let python = "\
def f(x):
    # raise Fake(1) in a comment; raised, braise
    if x == x:
        raise ValueError(g(h(x)), 'raise Quoted(2)')
    raise
    raise Error
    y = [g(g(1)) for g in gs if g == g]
    return f(x) == f(x)
def broken(:
    raise Late(3)
";
        let javascript =
            "a === a; f(a === a ? b : c); s = 'x === x'; // y === y\nconsole.log(console.log(1));";
        let rust = "fn main() { let a = 1; let b: u8 = 2; impl_it(); for x in xs { let c = x; } }\nimpl A for B { fn f() { let d = Some(Some(1)); } }";
        let cases: &[(Lang, &str, &[&str])] = &[
            (
                Lang::Python,
                python,
                &[
                    "raise $E($$$ARGS)",
                    "$A == $A",
                    "$F($X)",
                    "g($$$)",
                    "$X",
                    "raise",
                ],
            ),
            (
                Lang::JavaScript,
                javascript,
                &["$A === $A", "console.log($$$A)", "$F($$$)", "$A ? $B : $C"],
            ),
            (
                Lang::Rust,
                rust,
                &["let $A = $B;", "impl $T for $U { $$$ }", "Some($X)", "$X"],
            ),
        ];
        for (lang, text, patterns) in cases {
            let ast = AstGrep::<D>::try_new(text, *lang).unwrap();
            for p in *patterns {
                let c = compile(*lang, p).unwrap();
                let every: Vec<_> = ast
                    .root()
                    .find_all(&c.pattern)
                    .map(|m| (m.range(), m.text().to_string()))
                    .collect();
                let pruned: Vec<_> = c
                    .find_all(&ast)
                    .map(|m| (m.range(), m.text().to_string()))
                    .collect();
                assert_eq!(pruned, every, "{lang:?} `{p}`");
                if *p != "$X" {
                    assert!(
                        !every.is_empty() || *p == "raise",
                        "{lang:?} `{p}` found nothing"
                    );
                }
            }
        }
    }

    #[test]
    fn a_subtree_without_the_anchor_is_not_entered() {
        let mut text = String::new();
        for i in 0..200 {
            text.push_str(&format!(
                "def f{i}(x):\n    return g(x, [y for y in x if y])\n"
            ));
        }
        text.push_str("raise Only(1)\n");
        let ast = AstGrep::<D>::try_new(&text, Lang::Python).unwrap();
        let c = compile(Lang::Python, "raise $E($$$ARGS)").unwrap();
        let every = ast.root().dfs().count();
        let mut walk = c.walk(&ast);
        assert_eq!(walk.by_ref().count(), 1);
        // The module, its 201 statements, and the raise statement's subtree (a dozen nodes).
        assert!(
            walk.visited < 250,
            "{} of {every} nodes visited",
            walk.visited
        );
        assert!(every > 20 * walk.visited, "{} of {every}", walk.visited);
        // Without an anchor every node is visited.
        let c = compile(Lang::Python, "$X").unwrap();
        let mut walk = c.walk(&ast);
        walk.by_ref().for_each(drop);
        assert_eq!(walk.visited, every);
    }
}
