//! `docs/DESIGN.md` names the files that hold each part of the engine; this test keeps those
//! names true when files move (the module map once named `src/version.rs` and `src/cache.rs`
//! long after they were gone).

use std::path::Path;

const DESIGN: &str = include_str!("../docs/DESIGN.md");

/// Every `src/...` path in `text`: a run of path characters that starts with `src/` where no
/// path character precedes it (so `kvctl/src/main.rs` is not taken for `src/main.rs`), cut at
/// a `::` that names an item inside the file and stripped of the punctuation that ends a
/// sentence.
fn src_paths(text: &str) -> Vec<&str> {
    let is_path_char = |c: char| c.is_ascii_alphanumeric() || "_-./*:".contains(c);
    let mut paths = Vec::new();
    for (at, _) in text.match_indices("src/") {
        if text[..at].chars().next_back().is_some_and(is_path_char) {
            continue;
        }
        let rest = &text[at..];
        let end = rest.find(|c: char| !is_path_char(c)).unwrap_or(rest.len());
        let path = rest[..end].split("::").next().unwrap_or_default();
        paths.push(path.trim_end_matches(['.', ',', ':', ';']));
    }
    paths
}

/// Whether `path` (relative to the package root) exists; a `*` in its last component matches
/// any run of characters, as in `src/db/secondary*.rs`.
fn exists(root: &Path, path: &str) -> bool {
    let (dir, last) = path.rsplit_once('/').unwrap_or(("", path));
    if last.is_empty() {
        return root.join(dir).is_dir();
    }
    match last.split_once('*') {
        None => root.join(path).exists(),
        Some((prefix, suffix)) => std::fs::read_dir(root.join(dir)).is_ok_and(|entries| {
            entries.flatten().any(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                name.len() >= prefix.len() + suffix.len()
                    && name.starts_with(prefix)
                    && name.ends_with(suffix)
            })
        }),
    }
}

#[test]
fn every_src_path_in_design_md_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let paths = src_paths(DESIGN);
    // The module map alone names more than twenty; far fewer means the parsing broke.
    assert!(
        paths.len() >= 20,
        "only {} src/ paths found: {paths:?}",
        paths.len()
    );
    let missing: Vec<&str> = paths.iter().copied().filter(|p| !exists(root, p)).collect();
    assert!(
        missing.is_empty(),
        "docs/DESIGN.md names paths that do not exist: {missing:?}"
    );
}

#[test]
fn paths_are_read_as_written() {
    let text = "see `src/db/` and src/a.rs::f, not kvctl/src/main.rs; also (src/db/secondary*.rs).";
    assert_eq!(
        src_paths(text),
        ["src/db/", "src/a.rs", "src/db/secondary*.rs"]
    );
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    assert!(exists(root, "src/db/secondary*.rs"));
    assert!(exists(root, "src/db/"));
    assert!(!exists(root, "src/version.rs"));
    assert!(!exists(root, "src/db/nothing*.rs"));
}
