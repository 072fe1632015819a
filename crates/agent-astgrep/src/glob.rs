//! A `path` argument that is a glob (`src/**/*.py`): telling one, and where it starts.

/// Whether a `path` argument is a glob.
pub fn is_glob(path: &str) -> bool {
    path.contains(['*', '?', '[', '{'])
}

/// The directory a glob starts from (its components before the first one with a glob
/// character) and the glob itself, relative to the root.
pub fn split_glob(path: &str) -> (String, String) {
    let trimmed = path.trim_start_matches("./");
    let mut base = Vec::new();
    for part in trimmed.split('/') {
        if is_glob(part) {
            break;
        }
        base.push(part);
    }
    // A glob with no directory part (`*.py`) starts at the root.
    let base = if base.len() == trimmed.split('/').count() {
        base[..base.len().saturating_sub(1)].join("/")
    } else {
        base.join("/")
    };
    (
        if base.is_empty() { ".".into() } else { base },
        trimmed.to_string(),
    )
}
