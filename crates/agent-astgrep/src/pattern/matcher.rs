//! How a compiled pattern matches: ast-grep-core's match, plus the check that a metavariable
//! written more than once captured the same code each time (spacing and comments aside).
//! Each repeated occurrence is renamed apart before matching, so ast-grep-core binds them
//! separately, and [`SgMatcher`] compares what they bound.

use ast_grep_core::matcher::{Matcher, PatternNode};
use ast_grep_core::meta_var::{MetaVarEnv, MetaVariable};
use ast_grep_core::{Doc, Node, Pattern};
use bit_set::BitSet;
use std::borrow::Cow;
use std::collections::BTreeMap;

fn prepare(pattern: Pattern) -> (Pattern, BTreeMap<String, Repeat>) {
    let mut pattern = pattern;
    let mut seen = BTreeMap::new();
    rename_repeats(&mut pattern.node, &mut seen);
    seen.retain(|_, r: &mut Repeat| !r.aliases.is_empty());
    (pattern, seen)
}

/// A metavariable bound more than once in one pattern.
#[derive(Debug, Clone, Default)]
pub struct Repeat {
    multi: bool,
    aliases: Vec<String>,
}

/// Give every repeated occurrence of a metavariable its own name, so that ast-grep-core binds
/// each occurrence separately; [`SgMatcher`] then checks that they captured the same code.
fn rename_repeats(node: &mut PatternNode, seen: &mut BTreeMap<String, Repeat>) {
    match node {
        PatternNode::MetaVar { meta_var } => {
            let (name, multi) = match meta_var {
                MetaVariable::Capture(name, _) => (name.clone(), false),
                MetaVariable::MultiCapture(name) => (name.clone(), true),
                _ => return,
            };
            match seen.get_mut(&name) {
                None => {
                    seen.insert(
                        name,
                        Repeat {
                            multi,
                            aliases: Vec::new(),
                        },
                    );
                }
                Some(r) => {
                    let alias = format!("{name}__SG_REPEAT{}", r.aliases.len() + 1);
                    r.aliases.push(alias.clone());
                    *meta_var = match meta_var {
                        MetaVariable::Capture(_, named) => MetaVariable::Capture(alias, *named),
                        _ => MetaVariable::MultiCapture(alias),
                    };
                }
            }
        }
        PatternNode::Terminal { .. } => {}
        PatternNode::Internal { children, .. } => {
            for c in children {
                rename_repeats(c, seen);
            }
        }
    }
}

/// The node kinds of a grammar's comments (`Lang::comment_kinds`).
type Comments = &'static [&'static str];

fn is_comment<D: Doc>(n: &Node<'_, D>, comments: Comments) -> bool {
    comments.contains(&n.kind().as_ref())
}

/// The tokens of `n` but its comments, in order. Walked with an explicit stack: a capture can
/// be as deep as the file (issue 23).
fn tokens<'t, D: Doc>(
    n: &Node<'t, D>,
    comments: Comments,
    out: &mut Vec<std::borrow::Cow<'t, str>>,
) {
    let mut stack = vec![n.clone()];
    while let Some(n) = stack.pop() {
        if is_comment(&n, comments) {
            continue;
        }
        if n.is_leaf() {
            out.push(n.text());
        } else {
            let first = stack.len();
            stack.extend(n.children());
            stack[first..].reverse();
        }
    }
}

/// Whether two nodes are the same code, spacing and comments aside: the same tokens.
fn same_code<D: Doc>(a: &Node<'_, D>, b: &Node<'_, D>, comments: Comments) -> bool {
    let (mut x, mut y) = (Vec::new(), Vec::new());
    tokens(a, comments, &mut x);
    tokens(b, comments, &mut y);
    x == y
}

fn same_run<D: Doc>(a: &[Node<'_, D>], b: &[Node<'_, D>], comments: Comments) -> bool {
    let a: Vec<_> = a
        .iter()
        .filter(|n| n.is_named() && !is_comment(n, comments))
        .collect();
    let b: Vec<_> = b
        .iter()
        .filter(|n| n.is_named() && !is_comment(n, comments))
        .collect();
    a.len() == b.len() && a.iter().zip(&b).all(|(x, y)| same_code(x, y, comments))
}

/// The compiled pattern as an ast-grep-core matcher: the pattern, plus the check that a
/// repeated metavariable captured the same code every time (spacing and comments aside).
#[derive(Clone)]
pub struct SgMatcher {
    alts: Vec<(Pattern, BTreeMap<String, Repeat>)>,
    /// What "the same code" leaves out besides spacing: the grammar's comments.
    comments: Comments,
}

impl SgMatcher {
    /// A matcher of any of `alts` (the contexts that accepted the snippet), each with its
    /// repeated metavariables renamed apart; `comments` are the grammar's comment kinds.
    pub fn new(alts: impl IntoIterator<Item = Pattern>, comments: Comments) -> Self {
        SgMatcher {
            alts: alts.into_iter().map(prepare).collect(),
            comments,
        }
    }
}

impl std::fmt::Debug for SgMatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let alts: Vec<&Pattern> = self.alts.iter().map(|(p, _)| p).collect();
        write!(f, "{alts:?}")
    }
}

fn match_one<'tree, D: Doc>(
    pattern: &Pattern,
    repeats: &BTreeMap<String, Repeat>,
    comments: Comments,
    node: Node<'tree, D>,
    env: &mut Cow<MetaVarEnv<'tree, D>>,
) -> Option<Node<'tree, D>> {
    if repeats.is_empty() {
        return pattern.match_node_with_env(node, env);
    }
    let mut local = Cow::Borrowed(env.as_ref());
    let matched = pattern.match_node_with_env(node, &mut local)?;
    for (name, repeat) in repeats {
        for alias in &repeat.aliases {
            let same = if repeat.multi {
                same_run(
                    &local.get_multiple_matches(name),
                    &local.get_multiple_matches(alias),
                    comments,
                )
            } else {
                match (local.get_match(name), local.get_match(alias)) {
                    (Some(a), Some(b)) => same_code(a, b, comments),
                    (None, None) => true,
                    _ => false,
                }
            };
            if !same {
                return None;
            }
        }
    }
    let owned = local.into_owned();
    *env = Cow::Owned(owned);
    Some(matched)
}

impl Matcher for SgMatcher {
    fn match_node_with_env<'tree, D: Doc>(
        &self,
        node: Node<'tree, D>,
        env: &mut Cow<MetaVarEnv<'tree, D>>,
    ) -> Option<Node<'tree, D>> {
        self.alts
            .iter()
            .find_map(|(p, r)| match_one(p, r, self.comments, node.clone(), env))
    }

    fn potential_kinds(&self) -> Option<BitSet> {
        let mut all = BitSet::new();
        for (p, _) in &self.alts {
            all.union_with(&p.potential_kinds()?);
        }
        Some(all)
    }

    fn get_match_len<D: Doc>(&self, node: Node<'_, D>) -> Option<usize> {
        self.alts
            .iter()
            .find_map(|(p, _)| p.get_match_len(node.clone()))
    }
}
