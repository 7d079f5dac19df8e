//! The docs name repository files and link to each other; these tests keep those names true
//! when files move. `docs/DESIGN.md`'s module map names `src/` paths in prose (it once named
//! `src/version.rs` and `src/cache.rs` long after they were gone); every doc (README.md and
//! docs/*.md) names paths in backticks and links to files and to headings.

use std::collections::BTreeSet;
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

/// The docs whose paths and links are checked: README.md and every docs/*.md.
fn docs(root: &Path) -> Vec<(String, String)> {
    let mut names = vec!["README.md".to_string()];
    let mut in_docs: Vec<String> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .flatten()
        .map(|e| format!("docs/{}", e.file_name().to_string_lossy()))
        .filter(|n| n.ends_with(".md"))
        .collect();
    in_docs.sort();
    names.extend(in_docs);
    names
        .into_iter()
        .map(|n| {
            let text = std::fs::read_to_string(root.join(&n)).unwrap();
            (n, text)
        })
        .collect()
}

/// The lines of `text` outside fenced code blocks.
fn prose_lines(text: &str) -> impl Iterator<Item = &str> {
    let mut fenced = false;
    text.lines().filter(move |l| {
        if l.trim_start().starts_with("```") {
            fenced = !fenced;
            return false;
        }
        !fenced
    })
}

/// The anchors GitHub gives `text`'s headings: lower case, punctuation dropped, spaces made
/// hyphens, a repeated one suffixed `-1`, `-2`...
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    for line in prose_lines(text) {
        let Some(title) = line.strip_prefix('#') else {
            continue;
        };
        let title = title.trim_start_matches('#').trim();
        let slug: String = title
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let mut unique = slug.clone();
        let mut n = 0;
        while seen.contains(&unique) {
            n += 1;
            unique = format!("{slug}-{n}");
        }
        seen.insert(unique);
    }
    seen
}

/// The targets of `text`'s Markdown links that point inside the repository (no scheme).
fn link_targets(text: &str) -> Vec<&str> {
    let mut targets = Vec::new();
    for line in prose_lines(text) {
        for (at, _) in line.match_indices("](") {
            let rest = &line[at + 2..];
            let Some(end) = rest.find(')') else { continue };
            let target = &rest[..end];
            if !target.contains("://") && !target.starts_with("mailto:") && !target.is_empty() {
                targets.push(target);
            }
        }
    }
    targets
}

/// The repository paths `text` names in backticks: each word of an inline code span whose
/// first component is one of `top` (the repository's top-level folders), cut at a `::` or a
/// `:line` suffix and stripped of closing punctuation; words holding placeholders (`<layer>`,
/// `$DIR`) are not paths.
fn backtick_paths<'a>(text: &'a str, top: &BTreeSet<String>) -> Vec<&'a str> {
    let mut paths = Vec::new();
    for line in prose_lines(text) {
        for span in line.split('`').skip(1).step_by(2) {
            for word in span.split_whitespace() {
                let word = word.split("::").next().unwrap_or_default();
                let word = word.trim_end_matches(['.', ',', ';', ')', '"', '\'']);
                let word = match word.split_once(':') {
                    Some((path, line)) if line.chars().all(|c| c.is_ascii_digit() || c == '-') => {
                        path
                    }
                    _ => word,
                };
                let Some((first, _)) = word.split_once('/') else {
                    continue;
                };
                if top.contains(first) && !word.contains(['<', '>', '{', '}', '$', '|', '=', '[']) {
                    paths.push(word);
                }
            }
        }
    }
    paths
}

/// The top-level folders .gitignore keeps out of the repository (`/target`, `/bench-out`):
/// a doc may name files the tools write there.
fn ignored(root: &Path) -> BTreeSet<String> {
    let gitignore = std::fs::read_to_string(root.join(".gitignore")).unwrap_or_default();
    gitignore
        .lines()
        .filter_map(|l| l.strip_prefix('/'))
        .filter(|l| !l.contains('/'))
        .map(String::from)
        .collect()
}

/// The names of every file under the folders `top`, for file names a doc gives alone.
fn file_names(root: &Path, top: &BTreeSet<String>) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut dirs: Vec<std::path::PathBuf> = top.iter().map(|t| root.join(t)).collect();
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                if name != "target" && !name.starts_with('.') {
                    dirs.push(path);
                }
            } else {
                names.insert(name);
            }
        }
    }
    names
}

/// File names a doc gives alone in backticks (`filter_reads.rs`, no folder): Rust sources and
/// shell scripts, which some folder must hold.
fn backtick_file_names(text: &str) -> Vec<&str> {
    let mut names = Vec::new();
    for line in prose_lines(text) {
        for span in line.split('`').skip(1).step_by(2) {
            for word in span.split_whitespace() {
                let word = word.trim_end_matches(['.', ',', ';', ')', ':']);
                let is_name = word
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c));
                if is_name && (word.ends_with(".rs") || word.ends_with(".sh")) {
                    names.push(word);
                }
            }
        }
    }
    names
}

#[test]
fn every_path_and_link_in_the_docs_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let top: BTreeSet<String> = std::fs::read_dir(root)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != ".git" && !ignored(root).contains(n))
        .collect();
    let file_names = file_names(root, &top);
    let docs = docs(root);
    let mut broken = Vec::new();
    let (mut links, mut named) = (0, 0);
    for (name, text) in &docs {
        let dir = Path::new(name).parent().unwrap_or(Path::new(""));
        for target in link_targets(text) {
            links += 1;
            let (file, anchor) = target.split_once('#').unwrap_or((target, ""));
            let (file_text, shown) = if file.is_empty() {
                (Some(text.clone()), name.clone())
            } else {
                let path = root.join(dir).join(file);
                if !path.exists() {
                    broken.push(format!("{name}: link to {target}: no such file"));
                    continue;
                }
                let text = file
                    .ends_with(".md")
                    .then(|| std::fs::read_to_string(&path).ok());
                (text.flatten(), file.to_string())
            };
            if let (false, Some(file_text)) = (anchor.is_empty(), file_text)
                && !anchors(&file_text).contains(anchor)
            {
                broken.push(format!(
                    "{name}: link to {target}: {shown} has no heading #{anchor}"
                ));
            }
        }
        for path in backtick_paths(text, &top) {
            named += 1;
            if !exists(root, path) {
                broken.push(format!("{name}: names `{path}`, which does not exist"));
            }
        }
        for file in backtick_file_names(text) {
            named += 1;
            if !file_names.contains(file) {
                broken.push(format!("{name}: names `{file}`, which no folder holds"));
            }
        }
    }
    // README and the docs link and name hundreds; far fewer means the parsing broke.
    assert!(
        links >= 50 && named >= 50,
        "{links} links, {named} paths found"
    );
    assert!(
        broken.is_empty(),
        "{} broken:\n{}",
        broken.len(),
        broken.join("\n")
    );
}

#[test]
fn links_paths_and_anchors_are_read_as_written() {
    let text = "## The `kvctl bench` runner (W1)\n\n## Reads: seek, reverse\n## Reads: seek, reverse\n\
                see [x](docs/A.md#b), [y](https://e.org) and `src/db/mod.rs:137`, \
                `tests/common::fault_env`, `kvctl/tests/<layer>.rs` and `cargo test`.\n\
                ```sh\n# not a heading [z](nope.md)\n```\n";
    let got = anchors(text);
    let want: BTreeSet<String> = [
        "the-kvctl-bench-runner-w1",
        "reads-seek-reverse",
        "reads-seek-reverse-1",
    ]
    .map(String::from)
    .into();
    assert_eq!(got, want);
    assert_eq!(link_targets(text), ["docs/A.md#b"]);
    let top: BTreeSet<String> = ["src", "tests", "kvctl"].map(String::from).into();
    assert_eq!(
        backtick_paths(text, &top),
        ["src/db/mod.rs", "tests/common"]
    );
}
