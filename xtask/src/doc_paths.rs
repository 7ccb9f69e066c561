//! The lint that keeps the map true: every repository path the documents and the code comments
//! name must exist.
//!
//! What is read, in every file git knows (tracked or new, not ignored):
//! - markdown (`*.md`): the prose outside fenced code blocks (fences hold commands and diagrams)
//!   and the link targets `[...](target)`;
//! - comments: `//` (with `///`, `//!`) and `/* */` in Rust and JS, `/* */` in CSS, `#` in shell,
//!   Python, TOML and YAML, `<!-- -->` in HTML. A comment after code counts when the quotes before
//!   it are balanced, so `"a // b"` in a string is not read.
//!
//! What is a path: a run of path characters (letters, digits, `_ - . / *`) that starts with a
//! top-level folder of the repository ([`FOLDERS`]: `src/core/apply.rs`, `tests/e2e/`), read
//! from the root. A relative path in a comment (`./pkg/x.js`) is usually an example quoted from
//! another file, so it is not read; a markdown link target is, from the document's folder as
//! GitHub reads it (URLs and anchors aside), and must not climb out of the repository. A
//! trailing `.` ends a sentence, not the path; `:` ends it too (`apply.rs:42`,
//! `handlers.rs::Handler`). A `*` component is a glob that must match a file (`tests/*.rs`,
//! `src/**/*.rs`). Build outputs ([`GENERATED`]) are not in a fresh checkout and are allowed.

use crate::util;
use anyhow::{bail, Context, Result};
use std::collections::BTreeSet;
use std::path::Path;

/// The top-level folders a root-relative path starts with.
const FOLDERS: &str =
    "src/ www/ tests/ xtask/ bench/ benches/ docs/ workshop/ examples/ .github/ .ci/ .cargo/";

/// Built by `cargo xtask build`/`setup`/`bench`, not committed: named, but absent from a fresh
/// checkout (`www/official` exists only in the site the bench serves).
const GENERATED: &str = "www/pkg www/pkg-full www/pkg-bench www/official tests/e2e/node_modules \
    tests/e2e/.python xtask/tools/node_modules bench/node_modules";

/// Checks every file under `root`; the error lists each missing path with the file naming it.
/// Returns how many path mentions were checked.
pub fn check(root: &Path) -> Result<usize> {
    let repo = Repo::at(root)?;
    let mut checked = 0;
    let mut missing = Vec::new();
    for file in &repo.files {
        let Some(kind) = Kind::of(file) else { continue };
        let text = match std::fs::read_to_string(root.join(file)) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => continue, // not text
            Err(e) => return Err(e).with_context(|| format!("reading {file}")),
        };
        for path in repo.named_in(file, kind, &text) {
            checked += 1;
            if !repo.has(&path.resolved) {
                missing.push(format!("{file}: {}", path.written));
            }
        }
    }
    if !missing.is_empty() {
        bail!(
            "paths named in documents or comments do not exist:\n  {}",
            missing.join("\n  ")
        );
    }
    Ok(checked)
}

/// The files of the repository, as git lists them (tracked, or new and not ignored).
struct Repo {
    files: BTreeSet<String>,
}

/// One path mention: as written, and resolved to a root-relative path (`None`: outside the
/// repository).
struct Named {
    written: String,
    resolved: Option<String>,
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Kind {
    Markdown,
    /// `//` and `/* */`: Rust, JS.
    Slashes,
    Css,
    /// `#`: shell, Python, TOML, YAML.
    Hash,
    Html,
}

impl Kind {
    fn of(file: &str) -> Option<Kind> {
        let ext = file.rsplit_once('.').map(|(_, e)| e)?;
        Some(match ext {
            "md" => Kind::Markdown,
            "rs" | "js" | "mjs" => Kind::Slashes,
            "css" => Kind::Css,
            "sh" | "py" | "toml" | "yml" | "yaml" => Kind::Hash,
            "html" => Kind::Html,
            _ => return None,
        })
    }
}

impl Repo {
    fn at(root: &Path) -> Result<Repo> {
        let mut git = std::process::Command::new("git");
        git.args(["ls-files", "--cached", "--others", "--exclude-standard"]);
        let listed = util::output_of(git.current_dir(root))
            .with_context(|| format!("git ls-files failed in {}", root.display()))?;
        let files = listed
            .lines()
            // A file deleted in the work tree but not yet in the index is gone.
            .filter(|f| root.join(f).exists())
            .map(String::from)
            .collect();
        Ok(Repo { files })
    }

    /// The paths `text` (the content of `file`) names.
    fn named_in(&self, file: &str, kind: Kind, text: &str) -> Vec<Named> {
        let folder = file.rsplit_once('/').map_or("", |(dir, _)| dir);
        let mut named = Vec::new();
        let (prose, links) = readable_text(kind, text);
        for token in prose.split(|c: char| !is_path_char(c)) {
            let token = token.trim_end_matches('.');
            if FOLDERS.split(' ').any(|f| token.starts_with(f)) {
                named.push(Named {
                    written: token.to_string(),
                    resolved: normalize("", token),
                });
            }
        }
        for link in links {
            let target = link.split('#').next().unwrap_or_default();
            if target.is_empty() || target.contains(':') || target.contains(char::is_whitespace) {
                continue; // an anchor, a URL, or not a link at all
            }
            named.push(Named {
                resolved: normalize(folder, target),
                written: link,
            });
        }
        named
    }

    /// Whether `path` is a file, a folder of files, or a glob matching a file of the repository.
    fn has(&self, path: &Option<String>) -> bool {
        let Some(path) = path else { return false };
        let path = path.trim_end_matches('/');
        if path.is_empty()
            || GENERATED
                .split_whitespace()
                .any(|g| path == g || path.starts_with(&format!("{g}/")))
        {
            return true;
        }
        let pattern: Vec<&str> = path.split('/').collect();
        self.files.iter().any(|f| {
            let parts: Vec<&str> = f.split('/').collect();
            (0..=parts.len()).any(|n| path_matches(&pattern, &parts[..n]))
        })
    }
}

fn is_path_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "_-./*".contains(c)
}

/// `base/path` with `.` and `..` resolved; `None` when it climbs out of the repository.
fn normalize(base: &str, path: &str) -> Option<String> {
    let mut parts: Vec<&str> = base.split('/').filter(|p| !p.is_empty()).collect();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            _ => parts.push(part),
        }
    }
    Some(parts.join("/"))
}

/// The text a reader sees as prose in a file of `kind` — comments, or markdown outside fences —
/// one line per source line, and (markdown only) the link targets.
fn readable_text(kind: Kind, text: &str) -> (String, Vec<String>) {
    let (line_marker, block) = match kind {
        Kind::Slashes => (Some("//"), Some(("/*", "*/"))),
        Kind::Css => (None, Some(("/*", "*/"))),
        Kind::Hash => (Some("#"), None),
        Kind::Html => (None, Some(("<!--", "-->"))),
        Kind::Markdown => (None, None),
    };
    let (open, close) = block.unwrap_or_default();
    let mut prose = String::new();
    let mut in_block = false; // inside a fenced block (markdown) or a block comment
    for line in text.lines() {
        if kind == Kind::Markdown {
            if line.trim_start().starts_with("```") {
                in_block = !in_block;
            } else if !in_block {
                prose.push_str(line);
            }
            prose.push('\n');
            continue;
        }
        let mut rest = line;
        loop {
            if in_block {
                let Some(end) = rest.find(close) else {
                    prose.push_str(rest);
                    break;
                };
                prose.push_str(&rest[..end]);
                prose.push(' ');
                rest = &rest[end + close.len()..];
                in_block = false;
            }
            let comment_at =
                |marker: &str| comment_start(rest, marker, matches!(kind, Kind::Css | Kind::Html));
            let line_comment = line_marker.and_then(comment_at);
            match (line_comment, block.and_then(|(open, _)| comment_at(open))) {
                (Some(at), b) if b.is_none_or(|b| at < b) => {
                    prose.push_str(&rest[at..]);
                    break;
                }
                (_, Some(at)) => {
                    rest = &rest[at + open.len()..];
                    in_block = true;
                }
                _ => break,
            }
        }
        prose.push('\n');
    }
    let links = if kind == Kind::Markdown {
        prose
            .split("](")
            .skip(1)
            .filter_map(|rest| rest.split_once(')').map(|(target, _)| target.to_string()))
            .collect()
    } else {
        Vec::new()
    };
    (prose, links)
}

/// Where a comment opened by `marker` starts in a line of code: at the start of the line, or
/// after whitespace with balanced quotes before it (so not inside a string). In CSS and HTML,
/// where quotes are rare and `/*` is never code, anywhere.
fn comment_start(line: &str, marker: &str, anywhere: bool) -> Option<usize> {
    let mut from = 0;
    while let Some(found) = line[from..].find(marker) {
        let at = from + found;
        let before = &line[..at];
        let starts_word = before.is_empty() || before.ends_with(char::is_whitespace);
        if anywhere || (starts_word && quotes_balanced(before)) {
            return Some(at);
        }
        from = at + marker.len();
    }
    None
}

/// Whether each kind of quote in `code` is closed (a quote after `\\` is escaped, not one).
fn quotes_balanced(code: &str) -> bool {
    let mut open = [false; 3];
    let mut chars = code.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            chars.next();
        } else if let Some(i) = ['"', '\'', '`'].iter().position(|q| *q == c) {
            open[i] = !open[i];
        }
    }
    open == [false; 3]
}

/// Whether the file path `parts` matches the glob `pattern`, component by component: `*`
/// matches a run of characters in one component, a `**` component any number of components.
fn path_matches(pattern: &[&str], parts: &[&str]) -> bool {
    match (pattern.split_first(), parts.split_first()) {
        (None, None) => true,
        (Some((&"**", rest)), _) => {
            path_matches(rest, parts) || (!parts.is_empty() && path_matches(pattern, &parts[1..]))
        }
        (Some((p, rest)), Some((part, parts))) => {
            glob_matches(p, part) && path_matches(rest, parts)
        }
        _ => false,
    }
}

/// `*` matches any run of characters; everything else matches itself.
fn glob_matches(pattern: &str, name: &str) -> bool {
    let Some((head, tail)) = pattern.split_once('*') else {
        return pattern == name;
    };
    let Some(rest) = name.strip_prefix(head) else {
        return false;
    };
    rest.char_indices()
        .map(|(at, _)| at)
        .chain([rest.len()])
        .any(|at| glob_matches(tail, &rest[at..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo() -> Repo {
        let files = [
            "src/core/apply.rs",
            "www/lib/i18n.js",
            "docs/probe.md",
            "tests/a.rs",
        ];
        Repo {
            files: files.into_iter().map(String::from).collect(),
        }
    }

    /// The mentions in `text` (the content of `file`) that name no file of [`repo`].
    fn missing(file: &str, text: &str) -> Vec<String> {
        let repo = repo();
        let kind = Kind::of(file).expect("a known kind");
        repo.named_in(file, kind, text)
            .into_iter()
            .filter(|n| !repo.has(&n.resolved))
            .map(|n| n.written)
            .collect()
    }

    #[test]
    fn a_comment_naming_a_missing_path_fails_and_an_existing_one_passes() {
        assert_eq!(
            missing("src/x.rs", "//! See src/budget.rs.\n"),
            ["src/budget.rs"]
        );
        assert!(missing("src/x.rs", "//! See src/core/apply.rs:42.\n").is_empty());
        assert_eq!(
            missing("src/x.rs", "let a = 1; // as in www/worker.js\n"),
            ["www/worker.js"]
        );
        assert_eq!(
            missing(
                "www/a/b.js",
                "/**\n * from www/lib/i18n.js and www/errors.js\n */\n"
            ),
            ["www/errors.js"]
        );
        assert_eq!(
            missing("www/s.css", "a { } /* www/gone.css */\n"),
            ["www/gone.css"]
        );
        assert_eq!(
            missing(".ci/x.sh", "run # see tests/gone.rs\n"),
            ["tests/gone.rs"]
        );
        assert_eq!(
            missing("index.html", "<!-- www/gone.js -->\n"),
            ["www/gone.js"]
        );
        // Climbing out of the repository is missing too.
        assert_eq!(
            missing("www/a.js", "// www/../../x.js\n"),
            ["www/../../x.js"]
        );
        // A relative path in a comment is an example from elsewhere: not read.
        assert!(missing("www/a.js", "// import('./x.js')\n").is_empty());
    }

    #[test]
    fn code_and_strings_are_not_comments() {
        let rust = "let url = \"http://x/www/gone.js\";\nlet s = \"a // src/gone.rs\";\n";
        assert!(missing("src/x.rs", rust).is_empty());
        assert!(missing("www/x.js", "const g = 'src/**/*.rs'; x = a / b;\n").is_empty());
        assert!(missing("src/x.rs", "use crate::src::gone; // not a path: src\n").is_empty());
    }

    #[test]
    fn markdown_reads_prose_and_links_outside_fences() {
        let md = "See [`src/core/apply.rs`](../src/core/apply.rs#L3), `www/gone.js`.\n\
                  ```text\nsrc/in_a_fence.rs\n```\n\
                  A [link](probe.md), [web](https://x.org/src/y), [bad](nope.md) \
                  and [out](../../x.md).\n";
        assert_eq!(
            missing("docs/a.md", md),
            ["www/gone.js", "nope.md", "../../x.md"]
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
        let repo = repo();
        let has = |p: &str| repo.has(&Some(p.to_string()));
        assert!(has("www/pkg/inbox_lab.js"));
        assert!(has("src/**/*.rs"));
        assert!(has("tests/*.rs"));
        assert!(has("src/core/"));
        assert!(!has("src/core/no_such_file.rs"));
        assert!(!has("src/*.nothing"));
        assert!(!has("src/cor"));
    }
}
