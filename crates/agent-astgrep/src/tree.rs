//! `ast_grep` with `tree: true`: the syntax a pattern is matched against, so a model fixes a
//! pattern that finds nothing instead of guessing — how the pattern itself parsed (the context
//! that accepted it and its node kinds, metavariables marked) and, when `path` names one file,
//! that file's tree. Named nodes only (anonymous tokens are spelled in their parents' text),
//! each with its field name, kind and `line:col` span; a leaf shows its text, escaped and
//! clipped. At most [`MAX_NODES`] nodes per tree: the rest are counted.

use crate::engine::Scope;
use crate::error::AstGrepError;
use crate::lang::Lang;
use crate::pattern::{Compiled, Scaffolded};
use agent_tier::Report;
use agent_tier::schemars::{self, JsonSchema};
use ast_grep_core::Language;
use serde::Serialize;

/// Most nodes shown per tree.
pub const MAX_NODES: usize = 400;
/// Most characters of a leaf's text shown.
const LEAF_CHARS: usize = 60;
/// Most bytes of a file read for its tree.
const MAX_FILE_BYTES: u64 = 4 << 20;

/// One rendered tree.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Tree {
    /// What was parsed (`pattern` or the file's path).
    pub of: String,
    /// The indented tree, a node a line.
    pub text: String,
    /// Nodes shown.
    pub shown: usize,
    /// Named nodes in all.
    pub total: usize,
}

/// The result of `ast_grep` with `tree: true`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TreeReport {
    /// The language.
    pub language: String,
    /// The context that accepted the pattern (and the kind of its root node).
    pub context: String,
    /// The pattern's own tree.
    pub pattern: Tree,
    /// The tree of `path`, when it names one file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<Tree>,
    /// Why the file's tree is not shown (too large, not text), when `path` names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_note: Option<String>,
}

impl Report for TreeReport {
    fn text(&self) -> String {
        let mut out = format!(
            "pattern `{}` ({}), parsed in context `{}`:\n{}",
            crate::shown::escape(self.pattern.of.as_str()),
            self.language,
            self.context,
            self.pattern.text
        );
        if self.pattern.shown < self.pattern.total {
            out.push_str(&format!(
                "\n({} more nodes not shown)",
                self.pattern.total - self.pattern.shown
            ));
        }
        if let Some(f) = &self.file {
            out.push_str(&format!(
                "\n\n{} ({}), {} of {} named nodes:\n{}",
                f.of, self.language, f.shown, f.total, f.text
            ));
        }
        if let Some(n) = &self.file_note {
            out.push_str(&format!("\n\n{n}"));
        }
        out.push_str(
            "\n\nA pattern matches a node of the same kind with the same children; metavariables stand for one node (`$X`) or a run of siblings (`$$$X`).",
        );
        out
    }
}

/// Render the named nodes below (and including) `node`, depth first.
/// `base`: added to a row to give the line shown (1 for a file; for a pattern, so that its
/// first line is 1).
fn render(
    lang: Lang,
    node: tree_sitter::Node<'_>,
    src: &str,
    base: isize,
) -> (String, usize, usize) {
    let mut out = String::new();
    let mut shown = 0;
    let mut total = 0;
    let mut cursor = node.walk();
    let mut depth = 0usize;
    // Iterative pre-order over named nodes (a deep file must not overflow the stack).
    loop {
        let n = cursor.node();
        if n.is_named() {
            total += 1;
            if shown < MAX_NODES {
                shown += 1;
                let s = n.start_position();
                let e = n.end_position();
                // Columns in characters, as the person reads the line (tree-sitter's are bytes).
                let col = |byte: usize, row_col: usize| {
                    let line_start = byte - row_col;
                    src.get(line_start..byte)
                        .map_or(row_col, |t| t.chars().count())
                        + 1
                };
                let field = cursor
                    .field_name()
                    .map(|f| format!("{f}: "))
                    .unwrap_or_default();
                out.push_str(&"  ".repeat(depth.min(40)));
                out.push_str(&format!(
                    "{field}{} [{}:{}-{}:{}]",
                    n.kind(),
                    s.row as isize + base,
                    col(n.start_byte(), s.column),
                    e.row as isize + base,
                    col(n.end_byte(), e.column)
                ));
                if n.named_child_count() == 0 {
                    let raw = src.get(n.byte_range()).unwrap_or("");
                    // A metavariable as written (the grammar saw it through the expando).
                    let text = raw.replace(lang.expando_char(), "$");
                    let clipped: String = text.chars().take(LEAF_CHARS).collect();
                    let more = if text.chars().count() > LEAF_CHARS {
                        "…"
                    } else {
                        ""
                    };
                    out.push_str(&format!(" `{}{more}`", crate::shown::escape(&clipped)));
                    if lang.extract_meta_var(raw).is_some() {
                        out.push_str("  ← metavariable");
                    }
                }
                out.push('\n');
            }
        }
        if cursor.goto_first_child() {
            depth += 1;
            continue;
        }
        loop {
            if cursor.node() == node {
                return (out.trim_end().to_string(), shown, total);
            }
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return (out.trim_end().to_string(), shown, total);
            }
            depth = depth.saturating_sub(1);
        }
    }
}

/// The pattern's tree, as the context that accepted it parsed it.
fn pattern_tree(compiled: &Compiled, snippet: &str) -> Tree {
    let lang = compiled.lang;
    let first_context = compiled
        .context
        .split(" (also as")
        .next()
        .unwrap_or(&compiled.context);
    let body = lang.pre_process_pattern(snippet.trim());
    let of = snippet.trim().to_string();
    let Some(ctx) = lang.contexts().iter().find(|c| c.name == first_context) else {
        return Tree {
            of,
            text: format!("{} (its context is not known)", compiled.kind),
            shown: 0,
            total: 0,
        };
    };
    let sc = Scaffolded::new(&body, ctx);
    let mut parser = tree_sitter::Parser::new();
    let parsed = parser
        .set_language(&lang.ts_language())
        .ok()
        .and_then(|()| parser.parse(&sc.src, None));
    let Some(tree) = parsed else {
        return Tree {
            of,
            text: "the parser failed".into(),
            shown: 0,
            total: 0,
        };
    };
    // The node spanning the snippet (with the context's terminator, when it was supplied).
    let root = tree.root_node();
    let spans = |n: &tree_sitter::Node<'_>| {
        n.start_byte() == sc.first && (n.end_byte() == sc.end || n.end_byte() == sc.end_term)
    };
    let mut cursor = root.walk();
    let mut found = None;
    'walk: loop {
        let n = cursor.node();
        if n != root && spans(&n) && n.kind() == compiled.kind {
            found = Some(n);
            break;
        }
        if n.start_byte() <= sc.first && n.end_byte() >= sc.end && cursor.goto_first_child() {
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
    let node = found.unwrap_or(root);
    // Lines counted in the snippet: the scaffolding's lines before it are not the model's.
    let before = sc.src[..sc.start].matches('\n').count();
    let (text, shown, total) = render(lang, node, &sc.src, 1 - before as isize);
    Tree {
        of,
        text,
        shown,
        total,
    }
}

/// `ast_grep` with `tree: true` over one compiled scope.
pub(crate) fn tree(
    scope: &Scope,
    compiled: &Compiled,
    snippet: &str,
) -> Result<TreeReport, AstGrepError> {
    let pattern = pattern_tree(compiled, snippet);
    let (mut file, mut file_note) = (None, None);
    if scope.single_file {
        let shown_path = crate::shown::relative(&scope.root, &scope.target);
        match agent_tier::workspace::read_regular(&scope.root, &scope.target, MAX_FILE_BYTES) {
            Ok(read) if read.size > MAX_FILE_BYTES => {
                file_note = Some(format!(
                    "`{shown_path}` is {} bytes, past the {} MiB a tree is shown for: name a smaller file",
                    read.size,
                    MAX_FILE_BYTES >> 20
                ));
            }
            Ok(read) => match String::from_utf8(read.bytes) {
                Ok(src) => {
                    let mut parser = tree_sitter::Parser::new();
                    let parsed = parser
                        .set_language(&compiled.lang.ts_language())
                        .ok()
                        .and_then(|()| parser.parse(&src, None));
                    match parsed {
                        Some(t) => {
                            let (text, shown, total) =
                                render(compiled.lang, t.root_node(), &src, 1);
                            file = Some(Tree {
                                of: shown_path,
                                text,
                                shown,
                                total,
                            });
                        }
                        None => file_note = Some(format!("`{shown_path}` could not be parsed")),
                    }
                }
                Err(_) => file_note = Some(format!("`{shown_path}` is not UTF-8 text")),
            },
            Err(e) => file_note = Some(format!("`{shown_path}` could not be read: {e}")),
        }
    }
    Ok(TreeReport {
        language: compiled.lang.id().to_string(),
        context: format!("{} → {}", compiled.context, compiled.kind),
        pattern,
        file,
        file_note,
    })
}
