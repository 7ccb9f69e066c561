//! `cargo xtask build [--dev]`: compile the crate to wasm for the page — its start module into
//! `www/pkg`, its full module into `www/pkg-full` — and the benchmark's crate (`bench/`,
//! `inbox-lab-bench`) for its worker, into `www/pkg-bench`.
//!
//! Three modules, so that what a reader fetches at start is only what the start needs: the
//! database worker (`www/db/worker.js`) loads the start module, the crate without its feature
//! `full`, and hands its database to the full one at the first op that needs it; the workers that run work of their own (`www/db/guest.js`: the judge, a console query
//! on a copy, an import's rebuild; the crash lab's worker) load the full one when that work
//! first starts; only `www/panels/bench/benchworker.js` loads `www/pkg-bench`. Every module keeps
//! the page's file names (`inbox_lab.js`, `inbox_lab_bg.wasm`), and the service worker caches
//! all of them for offline use.

use crate::setup::{self, Scope};
use crate::util::{self, say};
use anyhow::{bail, Context, Result};
use std::path::Path;

/// Where the database worker loads the start module from (`www/db/worker.js` imports
/// `../pkg/inbox_lab.js`); its gzip size has a budget (`xtask/src/size.rs`).
pub const OUT_DIR: &str = "www/pkg";

/// Which wasm module to build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Module {
    /// The page's start module: the core and the labs (`--no-default-features --features labs`).
    Start,
    /// The page's full module: the crate's default features (`full`: the judge, the console's
    /// copy, the import's rebuild, the crash lab as well).
    Full,
    /// The benchmark worker's: the `bench/` crate (the page's module and the benchmark).
    Bench,
}

impl Module {
    pub const ALL: [Module; 3] = [Module::Start, Module::Full, Module::Bench];

    /// Its place under the repository root: [`OUT_DIR`]; `../pkg-full/` for the workers that
    /// run work of their own; `./pkg-bench/inbox_lab.js` for the benchmark's worker.
    pub fn out_dir(self) -> &'static str {
        match self {
            Module::Start => OUT_DIR,
            Module::Full => "www/pkg-full",
            Module::Bench => "www/pkg-bench",
        }
    }

    /// What wasm-pack builds: the crate's folder, and what it passes on to `cargo build`;
    /// `workshop` adds the workshop's handler in Rust (`--features workshop`, `cargo xtask
    /// workshop`) to the page's modules.
    fn wasm_pack_args(self, workshop: bool) -> Vec<&'static str> {
        let mut args = match self {
            Module::Start => vec![".", "--", "--no-default-features", "--features", "labs"],
            Module::Full => vec![".", "--"],
            Module::Bench => return vec!["bench", "--out-name", "inbox_lab"],
        };
        if workshop {
            args.extend(["--features", "workshop"]);
        }
        args
    }
}

/// The Cargo profile of the release module (Cargo.toml: small first).
pub const RELEASE_PROFILE: &str = "wasm-release";

/// How `sqlite-wasm-rs` is told which SQLite to compile (its build script reads it and adds
/// the flags after its own).
const SQLITE_FLAGS_ENV: &str = "SQLITE_WASM_RS_FLAGS";

/// SQLite as the page needs it. `sqlite-wasm-rs` compiles in, and registers at start-up,
/// extensions and functions nothing here uses; left out, they are bytes nobody has to fetch
/// and compile (measured: about 90 KB of gzip for the extensions, mostly FTS5, and 27 KB for
/// the rest):
/// * extensions: full-text search (FTS5), R-trees, the session extension and its pre-update
///   hook, the dbstat/dbpage/bytecode/stmt virtual tables, unlock-notify, column metadata,
///   `sqlite_offset()`;
/// * SQL functions: JSON (`json_*`, `->`, `->>`) and math (`sin`, `pow`, ...);
/// * C APIs nothing calls (the link fails if something does): UTF-16 text (so UTF-16 database
///   files cannot be opened; ours are UTF-8), `sqlite3_complete`, `sqlite3_get_table`,
///   incremental blob I/O, tracing.
///
/// Kept on purpose although SQLite recommends leaving them out: the progress callback (the
/// budget of a console query, `src/labs/tools/budget.rs`) and memory statistics (no
/// `-DSQLITE_DEFAULT_MEMSTATUS=0`): without them SQLite does not enforce its hard heap limit,
/// which keeps one console query from growing the worker's memory until it traps. They cost a
/// counter update per allocation. The SQL console keeps the whole core language (dates, window
/// functions, `EXPLAIN`, pragmas). Only the release module uses these flags: dev builds and
/// `wasm-pack test` compile `sqlite-wasm-rs`'s full default set, so a test of one of these
/// features would pass there and fail in the page.
pub const SQLITE_FLAGS: &str = "\
    -USQLITE_ENABLE_FTS5 -USQLITE_ENABLE_RTREE -USQLITE_ENABLE_SESSION \
    -USQLITE_ENABLE_PREUPDATE_HOOK -USQLITE_ENABLE_DBSTAT_VTAB -USQLITE_ENABLE_DBPAGE_VTAB \
    -USQLITE_ENABLE_BYTECODE_VTAB -USQLITE_ENABLE_STMTVTAB -USQLITE_ENABLE_UNLOCK_NOTIFY \
    -USQLITE_ENABLE_COLUMN_METADATA -USQLITE_ENABLE_OFFSET_SQL_FUNC \
    -USQLITE_ENABLE_MATH_FUNCTIONS -DSQLITE_OMIT_JSON -DSQLITE_OMIT_UTF16 \
    -DSQLITE_OMIT_COMPLETE -DSQLITE_OMIT_GET_TABLE -DSQLITE_OMIT_INCRBLOB -DSQLITE_OMIT_TRACE";

/// How wasm-opt optimises the release module. `-O1`, not `-Oz`: what a reader fetches is gzip,
/// and binaryen's size passes shrink the raw module but make it compress worse. The start
/// module, gzip -9: unoptimised 542,623 B (wasm-opt drops the names section), `-Oz` 552,401 B
/// in 21.5 s, `-O1` 537,504 B in 6.7 s (binaryen 132 from npm; bench/RESULTS.md).
pub const WASM_OPT_LEVEL: &str = "-O1";

/// Features of the wasm that rustc emits for wasm32-unknown-unknown by default (LLVM's
/// "generic" CPU), which wasm-opt must be told to accept.
const WASM_OPT_FEATURES: &str = "--enable-mutable-globals --enable-sign-ext \
    --enable-nontrapping-float-to-int --enable-bulk-memory --enable-reference-types \
    --enable-multivalue";

/// `cargo xtask build`: every module, in the same profile.
pub fn run(dev: bool) -> Result<()> {
    page(dev, false)?;
    let bench = util::root().join(Module::Bench.out_dir());
    module(Module::Bench, dev, false, &bench)
}

/// The page's two modules, into their places (what the crash lab and the workshop need).
pub fn page(dev: bool, workshop: bool) -> Result<()> {
    for which in [Module::Start, Module::Full] {
        module(which, dev, workshop, &util::root().join(which.out_dir()))?;
    }
    Ok(())
}

/// Builds `which` into `out_dir` (the benchmark builds its own copies).
pub fn module(which: Module, dev: bool, workshop: bool, out_dir: &Path) -> Result<()> {
    setup::run(Scope::Build)?;
    let root = util::root();
    let profile: &[&str] = if dev {
        &["--dev"]
    } else {
        &["--profile", RELEASE_PROFILE]
    };
    // --no-opt: wasm-pack would try to download its own binaryen; we run wasm-opt ourselves.
    let mut wasm_pack = util::cmd("wasm-pack");
    wasm_pack
        .args(["build", "--target", "web"])
        .args(profile)
        .args(["--no-typescript", "--no-opt", "--out-dir"])
        .arg(out_dir)
        .args(which.wasm_pack_args(workshop));
    if !dev {
        wasm_pack.env(SQLITE_FLAGS_ENV, SQLITE_FLAGS);
    }
    util::run(&mut wasm_pack)
        .with_context(|| format!("building the {which:?} wasm module failed"))?;

    // Every module keeps the page's file names (wasm_pack_args).
    let wasm = out_dir.join("inbox_lab_bg.wasm");
    if !wasm.is_file() {
        bail!("wasm-pack succeeded but wrote no {}", wasm.display());
    }
    if dev {
        say("dev build: wasm-opt skipped");
    } else {
        match usable_wasm_opt() {
            Ok((program, version)) => optimise(&program, &version, &wasm)?,
            Err(why) => say(format!("wasm-opt skipped (optional): {why}")),
        }
    }
    say(format!("built {} ({})", rel(&root, &wasm), size_of(&wasm)));
    Ok(())
}

/// binaryen's wasm-opt from the npm registry (JS + wasm, no native download), installed by
/// `cargo xtask setup` into this directory from `xtask/tools/package.json` and its lock file.
pub const TOOLS_DIR: &str = "xtask/tools";

/// The wasm-opt to use: `$WASM_OPT`, else the npm package's in `xtask/tools`, else `wasm-opt`
/// on PATH — the first that is binaryen 110 or newer. Older ones write wasm-bindgen's exported
/// externref table (`__wbindgen_externrefs`) as the function table (binaryen issue #4711, fixed
/// by PR #4736 in release 110), so the module fails to start with
/// "WebAssembly.Table.set(): Argument 1 is invalid for table"; Debian 12 ships 108.
/// Returns the program and what it says its version is.
fn usable_wasm_opt() -> std::result::Result<(String, String), String> {
    let npm = format!(
        "{}/{TOOLS_DIR}/node_modules/.bin/wasm-opt",
        util::root().display()
    );
    let candidates = match std::env::var("WASM_OPT") {
        Ok(program) => vec![program],
        Err(_) => vec![npm, "wasm-opt".to_string()],
    };
    let mut why = Vec::new();
    for program in candidates {
        let Some(version) = util::output_of(std::process::Command::new(&program).arg("--version"))
        else {
            why.push(format!(
                "`{program} --version` did not run (`cargo xtask setup` installs binaryen from npm into {TOOLS_DIR})"
            ));
            continue;
        };
        match binaryen_version(&version) {
            Some(v) if v >= MIN_BINARYEN => return Ok((program, version)),
            Some(v) => why.push(format!(
                "{program} is binaryen {v}, older than {MIN_BINARYEN}: it breaks wasm-bindgen's \
                 exported externref table (binaryen #4711)"
            )),
            None => why.push(format!("cannot read a binaryen version from {version:?}")),
        }
    }
    Err(why.join("; "))
}

/// The first binaryen release that writes exported non-first tables correctly (PR #4736).
const MIN_BINARYEN: u32 = 110;

/// "wasm-opt version 108 (version_108)" -> 108
fn binaryen_version(text: &str) -> Option<u32> {
    let rest = &text[text.find("version ")? + "version ".len()..];
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// `wasm-opt` into a temporary file, replacing the original only on success. A failure is
/// reported as a warning: the unoptimised module still works.
///
/// wasm-opt takes tens of seconds, so its output is kept in `target/wasm-opt/`, named by a
/// hash of its input and arguments: rebuilding an unchanged module (every `cargo xtask test`)
/// reuses it.
fn optimise(program: &str, version: &str, wasm: &Path) -> Result<()> {
    let input = std::fs::read(wasm).with_context(|| format!("reading {}", wasm.display()))?;
    let cache_dir = util::root().join("target/wasm-opt");
    let key = cache_key(&input, version);
    let cached = cache_dir.join(format!("{key:016x}.wasm"));
    let reused = if cached.is_file() {
        std::fs::copy(&cached, wasm)
            .with_context(|| format!("copying {} to {}", cached.display(), wasm.display()))?;
        format!(
            " (unchanged module: reused {})",
            rel(&util::root(), &cached)
        )
    } else {
        let tmp = wasm.with_extension("opt.wasm");
        let mut cmd = util::cmd(program);
        cmd.arg(WASM_OPT_LEVEL)
            .args(WASM_OPT_FEATURES.split(' '))
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
        // The cache is only a shortcut: failing to fill it changes nothing.
        if std::fs::create_dir_all(&cache_dir).is_ok() {
            let _ = std::fs::copy(wasm, &cached);
        }
        String::new()
    };
    let (before, after) = (human_size(input.len() as u64), size_of(wasm));
    say(format!(
        "wasm-opt {WASM_OPT_LEVEL}: {before} -> {after}{reused}"
    ));
    Ok(())
}

/// A hash of the module and of everything that decides wasm-opt's output.
fn cache_key(input: &[u8], version: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    input.hash(&mut h);
    version.hash(&mut h);
    WASM_OPT_LEVEL.hash(&mut h);
    WASM_OPT_FEATURES.hash(&mut h);
    h.finish()
}

fn rel(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

fn size_of(file: &Path) -> String {
    human_size(std::fs::metadata(file).map_or(0, |m| m.len()))
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
