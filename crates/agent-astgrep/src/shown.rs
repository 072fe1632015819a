//! How a match is shown: its path relative to the root, its line clipped to a readable width,
//! columns counted in characters.

use std::path::Path;

const MAX_LINE_CHARS: usize = 240;

pub fn clip(line: &str) -> String {
    if line.chars().count() <= MAX_LINE_CHARS {
        line.to_string()
    } else {
        let mut s: String = line.chars().take(MAX_LINE_CHARS).collect();
        s.push('…');
        s
    }
}

pub fn column_of(text: &str, offset: usize) -> usize {
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    text[line_start..offset].chars().count() + 1
}

/// `path` relative to the (canonical) root, for display.
pub fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}
