//! `cargo xtask build [--dev]`: compile the crate to wasm for the page, into `www/pkg`.

use crate::setup::{self, Scope};
use crate::util::{self, say, which};
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};

/// Where the page loads the module from (`www/*` imports `./pkg/inbox_lab.js`).
pub const OUT_DIR: &str = "www/pkg";

/// Features of the wasm that rustc emits for wasm32-unknown-unknown by default (LLVM's
/// "generic" CPU), which wasm-opt must be told to accept.
const WASM_OPT_FEATURES: &[&str] = &[
    "--enable-mutable-globals",
    "--enable-sign-ext",
    "--enable-nontrapping-float-to-int",
    "--enable-bulk-memory",
    "--enable-reference-types",
    "--enable-multivalue",
];

pub fn run(dev: bool) -> Result<()> {
    setup::run(Scope::Build)?;
    let root = util::root();
    let profile = if dev { "--dev" } else { "--release" };
    // --no-opt: wasm-pack would try to download its own binaryen; we run wasm-opt ourselves.
    util::run(util::cmd("wasm-pack").args([
        "build",
        "--target",
        "web",
        profile,
        "--no-typescript",
        "--no-opt",
        "--out-dir",
        OUT_DIR,
    ]))
    .context("building the page's wasm module failed")?;

    let wasm_files = bg_wasm_files(&root.join(OUT_DIR))?;
    if wasm_files.is_empty() {
        bail!("wasm-pack succeeded but {OUT_DIR} holds no *_bg.wasm file");
    }
    if dev {
        say("dev build: wasm-opt skipped");
    } else {
        match usable_wasm_opt() {
            Ok(program) => {
                for wasm in &wasm_files {
                    optimise(&program, wasm)?;
                }
            }
            Err(why) => say(format!("wasm-opt -Oz skipped (optional): {why}")),
        }
    }
    for wasm in &wasm_files {
        let size = std::fs::metadata(wasm).map(|m| m.len()).unwrap_or(0);
        say(format!("built {} ({})", rel(&root, wasm), human_size(size)));
    }
    Ok(())
}

fn bg_wasm_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let entries = std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
    for entry in entries {
        let path = entry
            .with_context(|| format!("reading {}", dir.display()))?
            .path();
        let is_bg_wasm = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.ends_with("_bg.wasm"));
        if is_bg_wasm {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// The wasm-opt to use: `$WASM_OPT` or `wasm-opt` on PATH, if it is binaryen 110 or newer.
/// Older ones write wasm-bindgen's exported externref table (`__wbindgen_externrefs`) as the
/// function table (binaryen issue #4711, fixed by PR #4736 in release 110), so the module fails to start with
/// "WebAssembly.Table.set(): Argument 1 is invalid for table"; Debian 12 ships 108.
fn usable_wasm_opt() -> std::result::Result<String, String> {
    let program = std::env::var("WASM_OPT").unwrap_or_else(|_| "wasm-opt".to_string());
    if !program.contains('/') && which(&program).is_none() {
        return Err(format!(
            "{program} (binaryen) not found; set WASM_OPT to a binaryen >= {MIN_BINARYEN} wasm-opt to shrink the module"
        ));
    }
    let version = util::output_of(std::process::Command::new(&program).arg("--version"))
        .ok_or_else(|| format!("`{program} --version` failed"))?;
    match binaryen_version(&version) {
        Some(v) if v >= MIN_BINARYEN => Ok(program),
        Some(v) => Err(format!(
            "{program} is binaryen {v}, older than {MIN_BINARYEN}: it breaks wasm-bindgen's \
             exported externref table (binaryen #4711); set WASM_OPT to a newer wasm-opt \
             (e.g. from the npm package `binaryen`)"
        )),
        None => Err(format!("cannot read a binaryen version from {version:?}")),
    }
}

/// The first binaryen release that writes exported non-first tables correctly (PR #4736).
const MIN_BINARYEN: u32 = 110;

/// "wasm-opt version 108 (version_108)" -> 108
fn binaryen_version(text: &str) -> Option<u32> {
    let rest = &text[text.find("version ")? + "version ".len()..];
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// `wasm-opt -Oz` into a temporary file, replacing the original only on success. A failure is
/// reported as a warning: the unoptimised module still works.
fn optimise(program: &str, wasm: &Path) -> Result<()> {
    let before = std::fs::metadata(wasm)
        .with_context(|| format!("reading {}", wasm.display()))?
        .len();
    let tmp = wasm.with_extension("opt.wasm");
    let mut cmd = util::cmd(program);
    cmd.arg("-Oz")
        .args(WASM_OPT_FEATURES)
        .arg(wasm)
        .arg("-o")
        .arg(&tmp);
    if let Err(e) = util::run(&mut cmd) {
        let _ = std::fs::remove_file(&tmp);
        say(format!(
            "warning: {e:#}; keeping the unoptimised {}",
            wasm.display()
        ));
        return Ok(());
    }
    std::fs::rename(&tmp, wasm)
        .with_context(|| format!("replacing {} with {}", wasm.display(), tmp.display()))?;
    let after = std::fs::metadata(wasm).map(|m| m.len()).unwrap_or(0);
    say(format!(
        "wasm-opt -Oz: {} -> {}",
        human_size(before),
        human_size(after)
    ));
    Ok(())
}

fn rel(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

fn human_size(bytes: u64) -> String {
    if bytes >= 1024 * 1024 {
        format!("{:.2} MB", bytes as f64 / (1024.0 * 1024.0))
    } else {
        format!("{:.1} KB", bytes as f64 / 1024.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_binaryen_versions() {
        assert_eq!(
            binaryen_version("wasm-opt version 108 (version_108)"),
            Some(108)
        );
        assert_eq!(
            binaryen_version("wasm-opt version 132 (version_132)"),
            Some(132)
        );
        assert_eq!(binaryen_version("wasm-opt 1.0"), None);
    }
}
