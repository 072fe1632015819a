//! Line + symbol addressing: which identifier on a line a call means.
//!
//! A wrong guess here "resolves to another symbol on the same line — an answer that looks right
//! but is about something else", so the rules are strict:
//!
//! - whole identifiers first (the language's identifier characters decide the boundaries); a
//!   match inside a longer identifier is used only when there is no whole one, and it is said;
//! - qualified forms a model writes (`Class.method`, `mod::func`, `obj->field`) resolve to their
//!   last segment; where the qualified text itself is on the line, that occurrence is used;
//! - `occurrence` (1-based) picks among several; without it a read uses the first and says so,
//!   and a write refuses and lists the candidates;
//! - a symbol not on the line is an error that quotes the line and lists the nearest lines
//!   (within ±5) where the identifier does occur.

/// Whether `c` may be part of an identifier (letters, digits, `_`, `$`, and any Unicode
/// alphanumeric).
pub fn is_ident(c: char) -> bool {
    c == '_' || c == '$' || c.is_alphanumeric()
}

/// Byte offsets of `needle` in `line` that are whole identifiers (not preceded or followed by an
/// identifier character).
pub(crate) fn whole_matches(line: &str, needle: &str) -> Vec<usize> {
    line.match_indices(needle)
        .map(|(i, _)| i)
        .filter(|&i| {
            let before = line[..i].chars().next_back().is_none_or(|c| !is_ident(c));
            let after = line[i + needle.len()..]
                .chars()
                .next()
                .is_none_or(|c| !is_ident(c));
            before && after
        })
        .collect()
}

/// The identifier of a possibly qualified symbol: its last segment after `.`, `::` or `->`.
pub fn identifier(symbol: &str) -> &str {
    let cut = [
        symbol.rfind("::").map(|i| i + 2),
        symbol.rfind("->").map(|i| i + 2),
        symbol.rfind('.').map(|i| i + 1),
    ]
    .into_iter()
    .flatten()
    .max()
    .unwrap_or(0);
    &symbol[cut..]
}

/// Where the addressed identifier is.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    /// Byte offset of the identifier on the line.
    pub byte: usize,
    /// The identifier itself (the last segment of a qualified symbol).
    pub ident: String,
    /// Which match was used, 1-based, and how many there are of the kind used.
    pub index: usize,
    pub count: usize,
    /// The match is inside a longer identifier (no whole match existed).
    pub inside: bool,
    /// Longer identifiers on the line that contain it, when whole matches were used.
    pub also_inside: Vec<String>,
}

/// Why a symbol could not be addressed.
#[derive(Debug, Clone, PartialEq)]
pub enum Miss {
    /// Not on the line; (1-based line, text) of nearby lines where the identifier occurs.
    NotOnLine { nearby: Vec<(usize, String)> },
    /// `occurrence` beyond the matches.
    OutOfRange { count: usize },
    /// Several matches and no `occurrence`, for a write: (occurrence, 1-based column).
    Ambiguous { candidates: Vec<(usize, usize)> },
}

/// The identifier around byte `at` of `line`.
fn enclosing_ident(line: &str, at: usize, len: usize) -> String {
    let start = line[..at]
        .char_indices()
        .rev()
        .take_while(|(_, c)| is_ident(*c))
        .last()
        .map_or(at, |(i, _)| i);
    let end = line[at + len..]
        .char_indices()
        .find(|(_, c)| !is_ident(*c))
        .map_or(line.len(), |(i, _)| at + len + i);
    line[start..end].to_string()
}

/// Resolve `symbol` on `lines[line0]`. `for_write`: several matches without `occurrence` are a
/// refusal, not a guess.
pub fn resolve(
    lines: &[&str],
    line0: usize,
    symbol: &str,
    occurrence: Option<u32>,
    for_write: bool,
) -> Result<Resolved, Miss> {
    let line = lines[line0];
    let ident = identifier(symbol);
    let ident = if ident.is_empty() { symbol } else { ident };
    // A qualified symbol written out on the line: its occurrences, positioned at the identifier.
    let qualified: Vec<usize> = if ident.len() < symbol.len() {
        whole_matches(line, symbol)
            .into_iter()
            .map(|i| i + symbol.len() - ident.len())
            .collect()
    } else {
        Vec::new()
    };
    let whole = if qualified.is_empty() {
        whole_matches(line, ident)
    } else {
        qualified
    };
    let (hits, inside) = if whole.is_empty() {
        (
            line.match_indices(ident)
                .map(|(i, _)| i)
                .collect::<Vec<_>>(),
            true,
        )
    } else {
        (whole, false)
    };
    if hits.is_empty() {
        let nearby = (line0.saturating_sub(5)..(line0 + 6).min(lines.len()))
            .filter(|&i| i != line0 && !whole_matches(lines[i], ident).is_empty())
            .map(|i| (i + 1, lines[i].trim().to_string()))
            .collect();
        return Err(Miss::NotOnLine { nearby });
    }
    let count = hits.len();
    let index = match occurrence {
        Some(k) if k == 0 || k as usize > count => return Err(Miss::OutOfRange { count }),
        Some(k) => k as usize,
        None if count > 1 && for_write => {
            return Err(Miss::Ambiguous {
                candidates: hits
                    .iter()
                    .enumerate()
                    .map(|(k, &b)| (k + 1, line[..b].chars().count() + 1))
                    .collect(),
            });
        }
        None => 1,
    };
    let byte = hits[index - 1];
    let also_inside = if inside {
        Vec::new()
    } else {
        let mut longer: Vec<String> = line
            .match_indices(ident)
            .map(|(i, _)| enclosing_ident(line, i, ident.len()))
            .filter(|w| w != ident)
            .collect();
        longer.dedup();
        longer
    };
    Ok(Resolved {
        byte,
        ident: ident.to_string(),
        index,
        count,
        inside,
        also_inside,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(line: &str, symbol: &str, occ: Option<u32>, write: bool) -> Result<Resolved, Miss> {
        resolve(&[line], 0, symbol, occ, write)
    }

    #[test]
    fn whole_identifiers_win_over_substrings() {
        let r = one("int add_result = add(1, 2);", "add", None, true).unwrap();
        assert_eq!((r.byte, r.index, r.count, r.inside), (17, 1, 1, false));
        assert_eq!(r.also_inside, vec!["add_result".to_string()]);
        // Only a substring exists: used, and said.
        let r = one("int add_result = 3;", "add", None, false).unwrap();
        assert_eq!((r.byte, r.inside), (4, true));
        let r = one("x_y = x + 1", "x", None, false).unwrap();
        assert_eq!(r.byte, 6);
    }

    #[test]
    fn qualified_names_resolve_to_their_last_segment() {
        assert_eq!(identifier("Class.method"), "method");
        assert_eq!(identifier("std::mem::swap"), "swap");
        assert_eq!(identifier("p->next"), "next");
        let r = one("    self.total = other.total", "self.total", None, true).unwrap();
        assert_eq!((r.byte, r.ident.as_str(), r.count), (9, "total", 1));
        let r = one("def method(self):", "Widget.method", None, true).unwrap();
        assert_eq!(r.byte, 4);
    }

    #[test]
    fn writes_refuse_ambiguity_and_reads_take_the_first() {
        let line = "a = a + a_b";
        let err = one(line, "a", None, true).unwrap_err();
        assert_eq!(
            err,
            Miss::Ambiguous {
                candidates: vec![(1, 1), (2, 5)]
            }
        );
        assert_eq!(one(line, "a", None, false).unwrap().byte, 0);
        assert_eq!(one(line, "a", Some(2), true).unwrap().byte, 4);
        assert_eq!(
            one(line, "a", Some(3), true).unwrap_err(),
            Miss::OutOfRange { count: 2 }
        );
    }

    #[test]
    fn a_missing_symbol_lists_the_nearest_lines_with_it() {
        let lines = [
            "x = 1",
            "def helper():",
            "    pass",
            "y = helper()",
            "z = 2",
        ];
        let err = resolve(&lines, 4, "helper", None, false).unwrap_err();
        assert_eq!(
            err,
            Miss::NotOnLine {
                nearby: vec![(2, "def helper():".into()), (4, "y = helper()".into())]
            }
        );
    }
}
