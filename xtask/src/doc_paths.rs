//! The lint that keeps the map true: every repository path README.md and ARCHITECTURE.md name
//! must exist.
//!
//! A path is named in a code span (`` `src/core/apply.rs` ``) or as a markdown link target
//! (`[...](src/core/apply.rs)`), and starts with one of [`PREFIXES`]. A glob in the last
//! component (`tests/*.rs`) must match at least one file. Generated directories
//! ([`GENERATED`]) are not in a fresh checkout and are allowed by name. Fenced code blocks are
//! left out: they hold commands and diagrams, not references.

use anyhow::{bail, Context, Result};
use std::path::Path;

/// The documents whose paths are checked.
pub const DOCUMENTS: [&str; 2] = ["README.md", "ARCHITECTURE.md"];

/// What a repository path starts with.
const PREFIXES: [&str; 6] = ["src/", "www/", "tests/", "xtask/", "bench/", "benches/"];

/// Built by `cargo xtask build`/`setup`, not committed: named in the documents, absent from a
/// fresh checkout.
const GENERATED: [&str; 3] = ["www/pkg", "www/pkg-bench", "tests/e2e/node_modules"];

/// Checks every document under `root`; the error lists each missing path with its document.
pub fn check(root: &Path) -> Result<usize> {
    let mut checked = 0;
    let mut missing = Vec::new();
    for doc in DOCUMENTS {
        let text =
            std::fs::read_to_string(root.join(doc)).with_context(|| format!("reading {doc}"))?;
        for path in paths_in(&text) {
            checked += 1;
            if !exists(root, &path) {
                missing.push(format!("{doc}: {path}"));
            }
        }
    }
    if !missing.is_empty() {
        bail!(
            "paths named in the documents do not exist:\n  {}",
            missing.join("\n  ")
        );
    }
    Ok(checked)
}

/// The repository paths `markdown` names, in order, duplicates kept.
fn paths_in(markdown: &str) -> Vec<String> {
    let mut prose = String::new();
    let mut fenced = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            prose.push_str(line);
            prose.push('\n');
        }
    }
    let mut candidates = Vec::new();
    // Code spans: the text between two backticks.
    let mut parts = prose.split('`');
    parts.next();
    while let Some(span) = parts.next() {
        candidates.push(span.to_string());
        parts.next();
    }
    // Link targets: `](target)`.
    let mut rest = prose.as_str();
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        if let Some(end) = rest.find(')') {
            candidates.push(rest[..end].to_string());
        }
    }
    candidates
        .into_iter()
        .filter_map(|c| {
            let c = c.split('#').next().unwrap_or_default().trim().to_string();
            let looks_like_path =
                PREFIXES.iter().any(|p| c.starts_with(p)) && !c.contains(char::is_whitespace);
            looks_like_path.then_some(c)
        })
        .collect()
}

fn exists(root: &Path, path: &str) -> bool {
    let trimmed = path.trim_end_matches('/');
    if GENERATED
        .iter()
        .any(|g| trimmed == *g || trimmed.starts_with(&format!("{g}/")))
    {
        return true;
    }
    match trimmed.rsplit_once('/') {
        Some((dir, last)) if last.contains('*') => {
            let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
                return false;
            };
            entries
                .filter_map(|e| e.ok())
                .any(|e| glob_matches(last, &e.file_name().to_string_lossy()))
        }
        _ => root.join(trimmed).exists(),
    }
}

/// `*` matches any run of characters; everything else matches itself.
fn glob_matches(pattern: &str, name: &str) -> bool {
    let mut pieces = pattern.split('*');
    let first = pieces.next().unwrap_or_default();
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    let pieces: Vec<&str> = pieces.collect();
    for (i, piece) in pieces.iter().enumerate() {
        if i + 1 == pieces.len() {
            return rest.ends_with(piece);
        }
        match rest.find(piece) {
            Some(at) => rest = &rest[at + piece.len()..],
            None => return false,
        }
    }
    rest.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_code_spans_and_link_targets_outside_fences() {
        let md = "See [`src/a.rs`](src/a.rs#L3) and `www/b.js`, not `cargo test`.\n\
                  ```text\nsrc/in_a_fence.rs `src/nor_this.rs`\n```\n\
                  A [link](ARCHITECTURE.md) and `tests/*.rs`.\n";
        assert_eq!(
            paths_in(md),
            ["src/a.rs", "www/b.js", "tests/*.rs", "src/a.rs"]
        );
    }

    #[test]
    fn globs_and_generated_paths() {
        assert!(glob_matches("*.rs", "apply.rs"));
        assert!(glob_matches(
            "hardening-*.test.mjs",
            "hardening-csp.test.mjs"
        ));
        assert!(!glob_matches("*.rs", "apply.rs.bak"));
        assert!(!glob_matches("a*b", "ac"));
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        assert!(exists(&root, "www/pkg/"));
        assert!(exists(&root, "xtask/src/*.rs"));
        assert!(exists(&root, "xtask/src/"));
        assert!(!exists(&root, "xtask/src/no_such_file.rs"));
        assert!(!exists(&root, "xtask/src/*.nothing"));
    }
}
