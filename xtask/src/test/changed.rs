//! `cargo xtask test --changed`: the layers a change touches, for the inner loop. The change is
//! what differs from where this branch left `main` (`git merge-base HEAD main`): commits since
//! then, staged and unstaged edits, and new files git does not ignore.

use super::Layer::{self, Browser, E2e, Engines, Firefox, Lint, Native};
use crate::util;
use anyhow::{Context, Result};

/// Which layers a change to a path can break: the first rule whose prefix the path starts
/// with decides, and a path no rule names (Cargo.toml, build.rs, src/, .ci/, ...) runs every
/// layer. The one place this mapping is written.
const TOUCHES: &[(&str, &[Layer])] = &[
    ("tests/e2e/", &[E2e]),
    ("tests/engines/", &[Engines]),
    ("tests/oracle/", &[Native]),
    // The wasm tests, and what they share with the native ones.
    ("tests/browser", &[Lint, Browser, Firefox]),
    ("tests/support/", &[Lint, Native, Browser, Firefox]),
    ("tests/", &[Lint, Native]),
    // The page: what the e2e and engine layers drive.
    ("www/", &[E2e, Engines]),
    ("index.html", &[E2e, Engines]),
    ("xtask/tools/", &[E2e, Engines]),
    ("xtask/src/dist.rs", &[Lint, Native, E2e, Engines]),
    ("xtask/src/build.rs", &[Lint, Native, E2e, Engines]),
    ("xtask/src/serve", &[Lint, Native, E2e]),
    ("xtask/", &[Lint, Native]),
    ("workshop/", &[Lint, Native, E2e]),
    ("examples/", &[Lint, Native]),
    ("benches/", &[Lint, Native]),
    ("bench/", &[Lint, Native]),
    // Documents: the lint checks the paths they name.
    ("docs/", &[Lint]),
    ("README.md", &[Lint]),
    ("ARCHITECTURE.md", &[Lint]),
];

/// The layers `paths` touch, in the order they run.
pub fn layers_for(paths: &[String]) -> Vec<Layer> {
    let touched: Vec<Layer> = paths.iter().flat_map(|p| touches(p).to_vec()).collect();
    Layer::ALL
        .into_iter()
        .filter(|l| touched.contains(l))
        .collect()
}

fn touches(path: &str) -> &'static [Layer] {
    TOUCHES
        .iter()
        .find(|(prefix, _)| path.starts_with(prefix))
        .map_or(&Layer::ALL, |(_, layers)| layers)
}

/// When every changed path the e2e layer cares about is one of its test files, those files'
/// names (the layer then runs only them); otherwise None (the whole layer).
pub fn e2e_files_only(paths: &[String]) -> Option<Vec<String>> {
    let mut files = Vec::new();
    for path in paths.iter().filter(|p| touches(p).contains(&E2e)) {
        let name = path.strip_prefix("tests/e2e/")?;
        if !name.ends_with(".test.mjs") || name.contains('/') {
            return None;
        }
        if util::root().join(path).is_file() {
            files.push(name.to_string());
        }
    }
    (!files.is_empty()).then_some(files)
}

/// The paths changed since this branch left `main` (or `origin/main`; with neither, since
/// HEAD), the working tree and new files included.
pub fn changed_paths() -> Result<Vec<String>> {
    let base = ["main", "origin/main"]
        .into_iter()
        .find_map(|branch| git(&["merge-base", "HEAD", branch]).ok())
        .unwrap_or_else(|| "HEAD".to_string());
    let mut paths: Vec<String> = git(&["diff", "--name-only", base.trim()])?
        .lines()
        .chain(git(&["ls-files", "--others", "--exclude-standard"])?.lines())
        .map(str::to_string)
        .collect();
    paths.sort();
    paths.dedup();
    Ok(paths)
}

fn git(args: &[&str]) -> Result<String> {
    let mut cmd = util::cmd("git");
    util::output_of(cmd.args(args)).with_context(|| format!("`{}` failed", util::show(&cmd)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(p: &[&str]) -> Vec<String> {
        p.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_change_runs_the_layers_its_paths_touch() {
        assert_eq!(layers_for(&paths(&["www/app.js"])), [E2e, Engines]);
        assert_eq!(
            layers_for(&paths(&["tests/browser/main.rs", "README.md"])),
            [Lint, Browser, Firefox]
        );
        assert_eq!(layers_for(&paths(&["tests/apply.rs"])), [Lint, Native]);
        assert_eq!(layers_for(&paths(&["src/core/apply.rs"])), Layer::ALL);
        assert_eq!(layers_for(&paths(&["Cargo.toml"])), Layer::ALL);
        assert_eq!(layers_for(&[]), []);
    }

    #[test]
    fn only_the_changed_e2e_files_when_nothing_else_reaches_the_page() {
        let share = "tests/e2e/share.test.mjs";
        assert_eq!(
            e2e_files_only(&paths(&[share, "tests/apply.rs"])),
            Some(vec!["share.test.mjs".to_string()])
        );
        assert_eq!(e2e_files_only(&paths(&[share, "www/app.js"])), None);
        assert_eq!(
            e2e_files_only(&paths(&[share, "tests/e2e/browser.mjs"])),
            None
        );
        assert_eq!(e2e_files_only(&paths(&["tests/e2e/gone.test.mjs"])), None);
    }
}
