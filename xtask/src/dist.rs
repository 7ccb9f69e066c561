//! `cargo xtask dist [--dev]`: the deployable site, `dist/`: every wasm module ([`build::run`]),
//! then `xtask/tools/dist.mjs` (esbuild from npm). What comes out and why: docs/hosting.md.

use crate::build;
use crate::serve::CONTENT_SECURITY_POLICY;
use crate::util::{self, say};
use anyhow::{bail, Context, Result};
use std::path::Path;

/// Where `cargo xtask dist` writes the site, under the repository root.
pub const DIST_DIR: &str = "dist";

/// `cargo xtask dist`: every wasm module, then the site.
pub fn run(dev: bool) -> Result<()> {
    build::run(dev)?;
    let root = util::root();
    assemble(&root, &root.join(DIST_DIR))
}

/// The site into `out` from what `www/pkg`, `www/pkg-full` and `www/pkg-bench` under `root`
/// hold now (no wasm build); `root` is the repository's, or another copy of its `index.html`
/// and `www/` (the benchmark's staged one).
pub fn assemble(root: &Path, out: &Path) -> Result<()> {
    let tools = util::root().join(build::TOOLS_DIR);
    if !tools.join("node_modules/esbuild").is_dir() {
        bail!(
            "esbuild is not installed in {}: run `cargo xtask setup` (it runs `npm ci` there)",
            build::TOOLS_DIR
        );
    }
    for module in build::Module::ALL {
        let wasm = format!("{}/inbox_lab_bg.wasm", module.out_dir());
        if !root.join(&wasm).is_file() {
            bail!("{wasm} is missing: run `cargo xtask build` first");
        }
    }
    // Run from `xtask/tools`, where esbuild is installed.
    let mut node = util::cmd("node");
    node.current_dir(&tools)
        .arg("dist.mjs")
        .arg(root)
        .arg(out)
        .env("INBOX_LAB_CSP", CONTENT_SECURITY_POLICY);
    util::run(&mut node).context("building dist/ with esbuild (xtask/tools/dist.mjs) failed")?;
    for file in ["index.html", "sw.js", "relay.json", "_headers"] {
        if !out.join(file).is_file() {
            bail!("xtask/tools/dist.mjs succeeded but wrote no {file}");
        }
    }
    say(format!("built {}", out.display()));
    Ok(())
}
