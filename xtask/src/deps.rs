//! The lint that keeps the folders layered: which `src/` folder uses which, read from the code,
//! must be an edge of [`ALLOWED`] — so a new dependency is a visible decision here — and the
//! graph must have no cycle. The same graph builder reads the page's panels
//! (`www/panels/<name>/`), where the contract is stricter: no panel imports another.
//!
//! A folder is `src/labs/<lab>` (a lab's folder, or its one file `src/labs/<lab>.rs`) inside the
//! labs, and `src/<name>` (folder or file) elsewhere: `core`, `storage`, `labs` (its `mod.rs`),
//! `cli` (`cli.rs` and `cli/`), `wasm`, and `lib` (`lib.rs`, the core's face re-exported, which a
//! `crate::Event` path reaches). An edge is a `crate::…` path in code (comments left out) naming
//! another folder; relative paths (`super::…`, a child module's name) stay inside a folder or
//! reach its own children. Tests are left out — a test may reach anything it checks: files named `tests.rs` or
//! `*_tests.rs`, and everything from a `#[cfg(…test…)]` `mod tests` to the end of its file.

use crate::util;
use anyhow::{bail, Context, Result};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every folder → folder dependency `src/` may have: each folder, a colon, the folders it may
/// use (`from: to to …`). Read top to bottom it is the layering: the core and the shims at the bottom, `handlers` under
/// everything that runs a handler, the CLI and the wasm facade on top.
pub const ALLOWED: &str = "
    core:
    lib: core
    storage: core
    labs: core
    labs/handlers: core lib
    labs/race: core lib labs/handlers
    labs/verdicts: core labs/handlers
    labs/scheme_ends: core lib
    labs/webhooks: core lib
    labs/tools: core lib
    labs/crash: core lib storage labs/scheme_ends
    labs/judge: core labs/handlers labs/race labs/crash labs/tools
    labs/bench: core lib storage
    cli: core lib storage labs/handlers labs/race labs/judge labs/verdicts labs/crash
         labs/scheme_ends labs/webhooks labs/tools
    wasm: core lib storage labs labs/handlers labs/race labs/judge labs/verdicts labs/crash
          labs/scheme_ends labs/webhooks labs/tools labs/bench
";

/// Folder → folder, each edge with the first file found making it.
#[derive(Debug, Default)]
pub struct Graph(BTreeMap<String, BTreeMap<String, PathBuf>>);

impl Graph {
    fn add(&mut self, from: &str, to: &str, file: &Path) {
        if from != to {
            let targets = self.0.entry(from.to_owned()).or_default();
            targets
                .entry(to.to_owned())
                .or_insert_with(|| file.to_owned());
        }
    }

    fn edges(&self) -> impl Iterator<Item = (&str, &str, &Path)> {
        self.0.iter().flat_map(|(from, targets)| {
            targets
                .iter()
                .map(move |(to, file)| (from.as_str(), to.as_str(), file.as_path()))
        })
    }

    /// A cycle, as the folders along it with the first repeated at the end; `None` if acyclic.
    pub fn cycle(&self) -> Option<Vec<String>> {
        let mut done = BTreeSet::new();
        for start in self.0.keys() {
            let mut path = Vec::new();
            if let Some(cycle) = self.walk(start, &mut path, &mut done) {
                return Some(cycle);
            }
        }
        None
    }

    /// Depth first from `node`; `path` holds the folders being walked (a cycle closes on one).
    fn walk<'a>(
        &'a self,
        node: &'a str,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| *n == node) {
            let mut cycle: Vec<String> = path[at..].iter().map(|n| n.to_string()).collect();
            cycle.push(node.to_owned());
            return Some(cycle);
        }
        if !done.insert(node) {
            return None;
        }
        path.push(node);
        for next in self.0.get(node).into_iter().flat_map(|t| t.keys()) {
            if let Some(cycle) = self.walk(next, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        None
    }
}

/// Checks `src/` under `root`: no cycle, and every edge in [`ALLOWED`]; and the panels. Returns
/// the number of edges checked.
pub fn check(root: &Path) -> Result<usize> {
    let graph = rust_graph(&root.join("src"))?;
    let mut allowed = Graph::default();
    let mut from = "";
    for word in ALLOWED.split_whitespace() {
        match word.strip_suffix(':') {
            Some(folder) => from = folder,
            None => allowed.add(from, word, Path::new("xtask/src/deps.rs")),
        }
    }
    if let Some(cycle) = allowed.cycle() {
        bail!(
            "the allowed edges in xtask/src/deps.rs form a cycle: {}",
            cycle.join(" → ")
        );
    }
    if let Some(cycle) = graph.cycle() {
        bail!(
            "src/ folders use each other in a cycle: {}",
            shown(&graph, &cycle)
        );
    }
    let new: Vec<String> = graph
        .edges()
        .filter(|(from, to, _)| !allowed.0.get(*from).is_some_and(|t| t.contains_key(*to)))
        .map(|(from, to, file)| format!("{from} → {to} ({})", file.display()))
        .collect();
    if !new.is_empty() {
        bail!(
            "src/ folders use folders ALLOWED in xtask/src/deps.rs does not list (add the edge \
             there if it is meant, and keep the table acyclic):\n  {}",
            new.join("\n  ")
        );
    }
    Ok(graph.edges().count() + check_panels(root)?)
}

/// The panel contract: no panel folder imports another (they talk through `services.panels`).
fn check_panels(root: &Path) -> Result<usize> {
    let graph = js_graph(&root.join("www/panels"))?;
    if let Some(cycle) = graph.cycle() {
        bail!(
            "www/panels/ folders import each other in a cycle: {}",
            shown(&graph, &cycle)
        );
    }
    let imports: Vec<String> = graph
        .edges()
        .map(|(from, to, file)| format!("{from} → {to} ({})", file.display()))
        .collect();
    if !imports.is_empty() {
        bail!(
            "a panel imports another panel's module (use `services.panels.<name>` instead):\n  {}",
            imports.join("\n  ")
        );
    }
    Ok(graph.0.len())
}

/// A cycle with the file making each of its edges.
fn shown(graph: &Graph, cycle: &[String]) -> String {
    let steps: Vec<String> = cycle
        .windows(2)
        .map(|w| {
            let file = &graph.0[&w[0]][&w[1]];
            format!("{} → {} ({})", w[0], w[1], file.display())
        })
        .collect();
    steps.join(", ")
}

/// The folder graph of the Rust crate whose `src/` is `src`.
pub fn rust_graph(src: &Path) -> Result<Graph> {
    let mut graph = Graph::default();
    for file in util::files_under(src, |p| p.extension().is_some_and(|e| e == "rs"))? {
        let rel = file.strip_prefix(src).unwrap_or(&file);
        let name = rel.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name == "tests.rs" || name.ends_with("_tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&file)
            .with_context(|| format!("reading {}", file.display()))?;
        let from = rust_folder(rel);
        for path in crate_paths(&code_of(&text)) {
            graph.add(&from, &rust_target(src, &path), rel);
        }
    }
    Ok(graph)
}

/// The folder a file under `src/` belongs to.
fn rust_folder(rel: &Path) -> String {
    let parts: Vec<&str> = rel
        .iter()
        .filter_map(|p| p.to_str())
        .map(|p| p.strip_suffix(".rs").unwrap_or(p))
        .collect();
    match parts.as_slice() {
        ["labs", "mod"] => "labs".to_owned(),
        ["labs", lab, ..] => format!("labs/{lab}"),
        [first, ..] => (*first).to_owned(),
        [] => String::new(),
    }
}

/// The folder a `crate::` path (its segments) names.
fn rust_target(src: &Path, path: &[String]) -> String {
    let is_module = |rel: &str| src.join(rel).is_dir() || src.join(format!("{rel}.rs")).is_file();
    match path {
        [labs, lab, ..] if labs == "labs" && is_module(&format!("labs/{lab}")) => {
            format!("labs/{lab}")
        }
        [first, ..] if is_module(first) => first.clone(),
        // An item of the crate's root: a re-export in lib.rs.
        _ => "lib".to_owned(),
    }
}

/// The text without line comments (`//`, `//!`, `///`) and without the inline test module.
fn code_of(text: &str) -> String {
    let mut code = String::new();
    let mut cfg_test = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("#[cfg(") && trimmed.contains("test") {
            cfg_test = true;
            continue;
        }
        if cfg_test && trimmed.starts_with("mod tests") {
            break;
        }
        cfg_test = false;
        if !trimmed.starts_with("//") {
            code.push_str(line);
            code.push('\n');
        }
    }
    code
}

/// Every `crate::a::b…` path in `code`, as its segments; `crate::{a, b::c}` gives one path per
/// item.
fn crate_paths(code: &str) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue; // `$crate::`, `my_crate::`
        }
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let segments = segments(item.trim());
                if !segments.is_empty() {
                    paths.push(segments);
                }
            }
        } else {
            paths.push(segments(rest));
        }
    }
    paths
}

/// The `a::b::c` segments at the start of `text`.
fn segments(text: &str) -> Vec<String> {
    let mut segments = Vec::new();
    for piece in text.split("::") {
        let end = piece
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(piece.len());
        if end > 0 {
            segments.push(piece[..end].to_owned());
        }
        if end < piece.len() || end == 0 {
            break;
        }
    }
    segments
}

/// The folder graph of the panels under `panels` (`www/panels`): a folder per panel, an edge
/// for each `import … from '…'`, `export … from '…'` or `import('…')` whose relative path
/// lands in another panel's folder.
pub fn js_graph(panels: &Path) -> Result<Graph> {
    let mut graph = Graph::default();
    for file in util::files_under(panels, |p| p.extension().is_some_and(|e| e == "js"))? {
        let rel = file.strip_prefix(panels).unwrap_or(&file);
        let Some(from) = rel.iter().next().and_then(|p| p.to_str()) else {
            continue;
        };
        if rel.components().count() < 2 {
            continue; // a file beside the panel folders
        }
        let text = std::fs::read_to_string(&file)
            .with_context(|| format!("reading {}", file.display()))?;
        let dir = rel.parent().unwrap_or(Path::new(""));
        for spec in import_specifiers(&text) {
            if let Some(to) = js_target(dir, &spec) {
                graph.add(from, &to, rel);
            }
        }
    }
    Ok(graph)
}

/// The quoted module specifiers after `from` or `import(` in `text`.
fn import_specifiers(text: &str) -> Vec<String> {
    let mut specs = Vec::new();
    for key in ["from", "import("] {
        for (at, _) in text.match_indices(key) {
            let rest = text[at + key.len()..].trim_start();
            let Some(quote) = rest
                .chars()
                .next()
                .filter(|c| matches!(c, '\'' | '"' | '`'))
            else {
                continue;
            };
            if let Some(end) = rest[1..].find(quote) {
                specs.push(rest[1..1 + end].to_owned());
            }
        }
    }
    specs
}

/// The panel folder a relative specifier imported from `dir` (relative to the panels) lands
/// in; `None` for a bare specifier or a path outside the panels.
fn js_target(dir: &Path, spec: &str) -> Option<String> {
    if !spec.starts_with('.') {
        return None;
    }
    let mut parts: Vec<&str> = dir.iter().filter_map(|p| p.to_str()).collect();
    for part in spec.split('/') {
        match part {
            "." | "" => {}
            ".." => {
                parts.pop()?; // leaves the panels
            }
            name => parts.push(name),
        }
    }
    (parts.len() >= 2).then(|| parts[0].to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, rel: &str, text: &str) {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }

    #[test]
    fn a_constructed_cycle_between_labs_is_found_and_named() {
        let dir = std::env::temp_dir().join(format!("deps-cycle-{}", std::process::id()));
        let src = dir.join("src");
        write(&src, "lib.rs", "pub mod core;\npub mod labs;\n");
        write(&src, "core/mod.rs", "pub fn apply() {}\n");
        write(&src, "labs/mod.rs", "pub mod race;\npub mod judge;\n");
        write(
            &src,
            "labs/race/mod.rs",
            "use crate::labs::judge::Report;\nuse crate::core::apply;\n",
        );
        write(
            &src,
            "labs/judge/mod.rs",
            "//! Not an edge: crate::labs::tools\nuse crate::{labs::race::Race, apply};\n",
        );
        write(
            &src,
            "labs/judge/tests.rs",
            "use crate::labs::webhooks::Secret;\n",
        );
        let graph = rust_graph(&src).expect("the graph");
        std::fs::remove_dir_all(&dir).expect("cleanup");
        let edges: Vec<(&str, &str)> = graph.edges().map(|(f, t, _)| (f, t)).collect();
        assert_eq!(
            edges,
            [
                ("labs/judge", "labs/race"),
                ("labs/judge", "lib"),
                ("labs/race", "core"),
                ("labs/race", "labs/judge"),
            ]
        );
        let cycle = graph.cycle().expect("a cycle");
        assert_eq!(cycle, ["labs/judge", "labs/race", "labs/judge"]);
        let message = shown(&graph, &cycle);
        assert!(
            message.contains("labs/race → labs/judge (labs/race/mod.rs)"),
            "{message}"
        );
    }

    #[test]
    fn a_panel_importing_another_panel_is_an_edge_and_its_own_files_are_not() {
        let dir = std::env::temp_dir().join(format!("deps-panels-{}", std::process::id()));
        write(
            &dir,
            "sender/sender.js",
            "import { t } from '../../lib/i18n.js';\nimport { x } from './model.js';\n\
             import * as tables from \"../tables/tables.js\";\n",
        );
        write(
            &dir,
            "tables/tables.js",
            "const s = await import('../sender/sender.js');\n",
        );
        write(
            &dir,
            "share/replay.js",
            "export { a } from '../share/strings.js';\n",
        );
        let graph = js_graph(&dir).expect("the graph");
        std::fs::remove_dir_all(&dir).expect("cleanup");
        let edges: Vec<(&str, &str)> = graph.edges().map(|(f, t, _)| (f, t)).collect();
        assert_eq!(edges, [("sender", "tables"), ("tables", "sender")]);
        assert_eq!(
            graph.cycle().expect("a cycle"),
            ["sender", "tables", "sender"]
        );
    }
}
