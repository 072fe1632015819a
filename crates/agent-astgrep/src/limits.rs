//! What untrusted input may cost the host (issue 23): how deep a pattern may nest (matching
//! recurses once per level of the pattern, so its depth bounds the stack a search uses; the
//! crate's own walks over source trees are iterative, however deep the file), how large a
//! result's text may grow, and the bounded collection of the matches a result will show, so
//! that a pattern matching every node of a file costs what is shown, not what is found.

use parking_lot::Mutex;
use std::collections::BTreeMap;

/// Levels of syntax tree a pattern may nest (its accepted node, counted down to its deepest
/// token). Real patterns nest a few dozen at most. Compiling and matching take a few stack
/// frames per level: on a 2 MiB thread stack, unoptimised, 512 levels passed and 1,024
/// overflowed (2026-12, a JSON pattern over a 20,000-deep file), so this leaves a factor of 4.
pub const MAX_PATTERN_DEPTH: usize = 128;

/// Bytes of matches an `ast_grep` result's text lists; matches past it are counted, not shown.
pub const RESULT_TEXT_BYTES: usize = 32 * 1024;

/// Levels below and including `node`: 1 for a leaf. Walked with a cursor, never recursively.
pub fn tree_depth(node: tree_sitter::Node<'_>) -> usize {
    let mut cursor = node.walk();
    let (mut depth, mut deepest) = (1, 1);
    loop {
        if cursor.goto_first_child() {
            depth += 1;
            deepest = deepest.max(depth);
            continue;
        }
        loop {
            if depth == 1 {
                return deepest;
            }
            if cursor.goto_next_sibling() {
                break;
            }
            cursor.goto_parent();
            depth -= 1;
        }
    }
}

/// The first `limit` matches of a walk in file order, whichever order its parallel threads
/// offer them in: a file's matches are kept while they can still be among the first `limit`,
/// so what is held never exceeds `limit` (plus one file's offer at a time).
pub struct Kept<T> {
    limit: usize,
    held: Mutex<FirstMatches<T>>,
}

struct FirstMatches<T> {
    files: BTreeMap<String, Vec<T>>,
    count: usize,
}

impl<T> Kept<T> {
    pub fn new(limit: usize) -> Self {
        Kept {
            limit,
            held: Mutex::new(FirstMatches {
                files: BTreeMap::new(),
                count: 0,
            }),
        }
    }

    /// How many of `file`'s first matches (in position order) could be kept: `limit`, or none
    /// once `limit` matches of files sorting before it are held.
    pub fn room(&self, file: &str) -> usize {
        let held = self.held.lock();
        let full = held.count >= self.limit
            && held
                .files
                .last_key_value()
                .is_none_or(|(last, _)| last.as_str() <= file);
        if full { 0 } else { self.limit }
    }

    /// Offer `file`'s first matches, in position order.
    pub fn offer(&self, file: String, mut matches: Vec<T>) {
        matches.truncate(self.limit);
        if matches.is_empty() {
            return;
        }
        let mut held = self.held.lock();
        held.count += matches.len();
        held.files.insert(file, matches);
        if held.count <= self.limit {
            return;
        }
        // Keep the first `limit` in file order; drop the rest.
        let mut count = 0;
        let mut cut = None;
        for (name, m) in held.files.iter_mut() {
            if count >= self.limit {
                cut = Some(name.clone());
                break;
            }
            m.truncate(self.limit - count);
            count += m.len();
        }
        if let Some(name) = cut {
            drop(held.files.split_off(&name));
        }
        held.count = count;
    }

    /// What was kept, in file order.
    pub fn into_sorted(self) -> Vec<T> {
        let held = self.held.into_inner();
        held.files.into_values().flatten().collect()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
    use super::*;

    #[test]
    fn the_first_matches_in_file_order_are_kept_whatever_order_they_come_in() {
        let kept = Kept::new(3);
        kept.offer("c".into(), vec!["c1", "c2"]);
        kept.offer("d".into(), vec!["d1", "d2"]);
        assert_eq!(kept.room("e"), 0);
        assert_eq!(kept.room("b"), 3);
        kept.offer("a".into(), vec!["a1", "a2"]);
        kept.offer("b".into(), vec![]);
        assert_eq!(kept.room("b"), 3);
        assert_eq!(kept.room("c"), 0);
        assert_eq!(kept.into_sorted(), vec!["a1", "a2", "c1"]);
    }

    #[test]
    fn depth_counts_levels_without_recursion() {
        let lang: tree_sitter::Language = tree_sitter_json::LANGUAGE.into();
        let mut parser = tree_sitter::Parser::new();
        parser.set_language(&lang).unwrap();
        let deep = format!("{}1{}", "[".repeat(100_000), "]".repeat(100_000));
        let tree = parser.parse(&deep, None).unwrap();
        // document → 100,000 arrays → the number.
        assert_eq!(tree_depth(tree.root_node()), 100_002);
        let flat = parser.parse("[1, 2]", None).unwrap();
        assert_eq!(tree_depth(flat.root_node()), 3);
    }
}
