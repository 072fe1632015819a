//! A token that every match of a pattern holds verbatim, looked for in a file's bytes: by the
//! file prefilter (is it there at all) and by the match walk (where is it).
//!
//! An occurrence is found by substring, overlapping ones too (`aa` twice in `aaa`): an
//! occurrence inside a longer token only lets a file be parsed, or a node be visited. One
//! thing is known of a keyword of a grammar whose keywords are whole words
//! (`LangSpec::keywords_whole`): the lexer reads a whole run of its word token and only then
//! asks whether it is a keyword, so a keyword token is never followed by an ASCII letter, digit
//! or `_`. An occurrence of its spelling that is (`raise` in `raised`, `let` in `delete`) is not
//! it, and does not count.
//!
//! Owns: finding occurrences. Never: decides which tokens a pattern's matches hold
//! (`pattern::collect` does).

use memchr::memmem;

/// One token to look for.
#[derive(Clone, Debug)]
pub struct Needle {
    finder: memmem::Finder<'static>,
    /// A keyword lexed only as a whole word: an occurrence followed by a word byte is not it.
    whole: bool,
}

/// Whether `b` continues a word token in every grammar whose keywords are whole words.
fn continues_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

impl Needle {
    /// A needle for `token`; `whole` when it is a keyword lexed only as a whole word.
    pub fn new(token: &str, whole: bool) -> Self {
        Needle {
            finder: memmem::Finder::new(token.as_bytes()).into_owned(),
            whole,
        }
    }

    /// The token's length in bytes.
    pub fn len(&self) -> usize {
        self.finder.needle().len()
    }

    /// Whether this is a keyword lexed only as a whole word.
    pub fn is_whole(&self) -> bool {
        self.whole
    }

    /// Whether the occurrence at `at` counts.
    fn counts(&self, bytes: &[u8], at: usize) -> bool {
        !self.whole
            || bytes
                .get(at + self.len())
                .is_none_or(|&b| !continues_word(b))
    }

    /// Whether `bytes` hold an occurrence that counts.
    pub fn occurs_in(&self, bytes: &[u8]) -> bool {
        if !self.whole {
            return self.finder.find(bytes).is_some();
        }
        // Overlapping occurrences too: of `aa` in `aaa`, only the second counts.
        !self.occurrences(bytes, 1).is_empty()
    }

    /// The starts of the occurrences that count, ascending, overlapping ones too; at most
    /// `limit` of them.
    pub fn occurrences(&self, bytes: &[u8], limit: usize) -> Vec<usize> {
        let mut starts = Vec::new();
        let mut from = 0;
        while starts.len() < limit
            && let Some(i) = self.finder.find(&bytes[from..])
        {
            let at = from + i;
            if self.counts(bytes, at) {
                starts.push(at);
            }
            // The next search starts one byte on: occurrences may overlap.
            from = at + 1;
        }
        starts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_whole_keyword_counts_only_where_no_word_byte_follows() {
        let text = b"raised; braise x; raise_all; raise2; raise(x); raise";
        let whole = Needle::new("raise", true);
        let any = Needle::new("raise", false);
        // `braise x`: what precedes is not looked at (a lexer may start inside a run).
        assert_eq!(whole.occurrences(text, usize::MAX), [9, 37, 47]);
        assert_eq!(any.occurrences(text, usize::MAX).len(), 6);
        assert!(!whole.occurs_in(b"raised raises raise_ raise9"));
        assert!(any.occurs_in(b"raised"));
        // At the end of the file, and before a byte of another script (a grammar's word token
        // may or may not continue over it: it counts).
        assert!(whole.occurs_in(b"x raise"));
        assert!(whole.occurs_in("raiseé".as_bytes()));
    }

    #[test]
    fn occurrences_overlap_and_stop_at_the_limit() {
        let aa = Needle::new("aa", false);
        assert_eq!(aa.occurrences(b"aaaa", usize::MAX), [0, 1, 2]);
        assert_eq!(aa.occurrences(b"aaaa", 2), [0, 1]);
        assert!(aa.occurrences(b"a", usize::MAX).is_empty());
        let whole = Needle::new("aa", true);
        assert_eq!(whole.occurrences(b"aaa", usize::MAX), [1]);
        assert!(whole.occurs_in(b"aaa"));
        assert_eq!(aa.len(), 2);
    }
}
