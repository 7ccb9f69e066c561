//! `cargo xtask setup`: install what is missing, skip what is present.

use crate::util::{self, cmd, is_root, output_of, say, which};
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

/// How much to set up.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Scope {
    /// What `build` and `serve` need: the wasm target (with rustfmt and clippy), clang,
    /// wasm-bindgen, wasm-pack.
    Build,
    /// What the browser and end-to-end tests need as well: Chromium and its driver, Firefox ESR
    /// and geckodriver, WebKitGTK's driver and Xvfb, Node.js and the npm packages of the
    /// end-to-end and engine tests.
    Full,
}

/// The WebAssembly target the page is compiled for.
pub const WASM_TARGET: &str = "wasm32-unknown-unknown";
/// Where the tests expect Debian's Chromium.
pub const CHROMIUM: &str = "/usr/bin/chromium";
/// Where the tests expect Debian's Firefox ESR.
pub const FIREFOX: &str = "/usr/bin/firefox-esr";
/// The geckodriver `cargo install` builds (its lock file works here: `--locked`).
const GECKODRIVER_VERSION: &str = "0.37.1";
/// The oldest Node.js whose test runner has what the e2e layer uses.
const MIN_NODE_MAJOR: u32 = 20;

/// A program that comes from a Debian package.
struct AptPiece {
    /// How to tell it is present: a program name on PATH, or an absolute path.
    program: &'static str,
    package: &'static str,
    why: &'static str,
    scope: Scope,
}

const APT_REQUIRED: &[AptPiece] = &[
    AptPiece {
        program: "clang",
        package: "clang",
        why: "compiles SQLite's C code to wasm32 (gcc cannot)",
        scope: Scope::Build,
    },
    AptPiece {
        program: CHROMIUM,
        package: "chromium",
        why: "the browser the wasm and end-to-end tests run in",
        scope: Scope::Full,
    },
    AptPiece {
        program: "chromedriver",
        package: "chromium-driver",
        why: "lets `wasm-pack test --chrome` drive Chromium",
        scope: Scope::Full,
    },
    AptPiece {
        program: FIREFOX,
        package: "firefox-esr",
        why: "the second engine: `wasm-pack test --firefox` and the engine tests (tests/engines)",
        scope: Scope::Full,
    },
    AptPiece {
        program: "WebKitWebDriver",
        package: "webkit2gtk-driver",
        why: "drives WebKitGTK's MiniBrowser, the third engine of the engine tests",
        scope: Scope::Full,
    },
    AptPiece {
        program: "xvfb-run",
        package: "xvfb",
        why: "a virtual display for MiniBrowser, which has no headless mode",
        scope: Scope::Full,
    },
    AptPiece {
        program: "pg_ctlcluster",
        package: "postgresql",
        why:
            "the PostgreSQL server the probe's tests (tests/probe.rs) start a throwaway cluster of",
        scope: Scope::Full,
    },
    AptPiece {
        program: "/usr/lib/python3/dist-packages/psycopg2/__init__.py",
        package: "python3-psycopg2",
        why: "the PostgreSQL driver of the reference receivers (examples/receivers/)",
        scope: Scope::Full,
    },
];

fn present(piece: &AptPiece) -> bool {
    if piece.program.starts_with('/') {
        Path::new(piece.program).is_file()
    } else {
        which(piece.program).is_some()
    }
}

fn wanted(piece_scope: Scope, scope: Scope) -> bool {
    scope == Scope::Full || piece_scope == Scope::Build
}

/// Installs what `scope` needs and is missing. Fails, naming every missing piece and how to
/// install it, when something could not be installed.
pub fn run(scope: Scope) -> Result<()> {
    let root = util::root();
    let mut problems: Vec<String> = Vec::new();
    let mut apt = Apt::default();

    // 1. Rust: the wasm target, rustfmt and clippy.
    if let Err(e) = rust_pieces() {
        problems.push(format!("{e:#}"));
    }

    // 2. Debian packages.
    let missing: Vec<&AptPiece> = APT_REQUIRED
        .iter()
        .filter(|p| wanted(p.scope, scope) && !present(p))
        .collect();
    if !missing.is_empty() {
        let packages: Vec<&str> = missing.iter().map(|p| p.package).collect();
        let what = missing
            .iter()
            .map(|p| format!("{} (package {}: {})", p.program, p.package, p.why))
            .collect::<Vec<_>>()
            .join(", ");
        say(format!("missing: {what}"));
        match apt.install(&packages) {
            Ok(()) => {
                for p in missing.iter().filter(|p| !present(p)) {
                    problems.push(format!(
                        "{} is still missing after installing package {}",
                        p.program, p.package
                    ));
                }
            }
            Err(e) => problems.push(format!(
                "{e:#}\nmissing: {what}\ninstall with: sudo apt-get update && sudo apt-get install -y {}",
                packages.join(" ")
            )),
        }
    }
    // The build's npm tools, into xtask/tools: binaryen (wasm-opt) does not come from Debian,
    // whose version 108 breaks wasm-bindgen output (see build.rs), so the npm package `binaryen`
    // (JS + wasm, nothing downloaded at run time) is used; and esbuild (its platform binary is
    // a package of the registry), which `cargo xtask dist` (and so `serve` and the e2e layer)
    // bundles the page with. wasm-opt is optional — the module works unoptimised, only larger
    // — so a failure here is a warning; `dist` stops and names this step if esbuild is missing.
    if let Err(e) = build_tools(&root) {
        say(format!(
            "warning: the build's npm tools (wasm-opt, esbuild) not installed ({e:#}); release \
             builds stay unoptimised and `cargo xtask dist` cannot run"
        ));
    }

    // 3. wasm-bindgen CLI, exactly the version of the `wasm-bindgen` crate, then wasm-pack.
    if let Err(e) = wasm_bindgen_cli(&root) {
        problems.push(format!("{e:#}"));
    }
    if let Err(e) = cargo_install("wasm-pack", None) {
        problems.push(format!("{e:#}"));
    }
    if scope == Scope::Full {
        if let Err(e) = cargo_install("geckodriver", Some(GECKODRIVER_VERSION)) {
            problems.push(format!("{e:#}"));
        }
    }

    // 4. Node.js, npm and the end-to-end tests' packages; the Python package
    //    a webhook test sends with.
    if scope == Scope::Full {
        if let Err(e) = node_pieces(&root) {
            problems.push(format!("{e:#}"));
        }
        if let Err(e) = python_packages(&root, &mut apt) {
            problems.push(format!("{e:#}"));
        }
    }

    if !problems.is_empty() {
        let list: Vec<String> = problems.iter().map(|p| p.replace('\n', "\n  ")).collect();
        bail!("setup is incomplete:\n- {}", list.join("\n- "));
    }
    say(match scope {
        Scope::Build => "setup: everything the build needs is present",
        Scope::Full => "setup: everything the build and the tests need is present",
    });
    Ok(())
}

fn rust_pieces() -> Result<()> {
    let rustup = which("rustup").is_some();
    let target_installed = if rustup {
        output_of(cmd("rustup").args(["target", "list", "--installed"]))
            .map(|out| out.lines().any(|l| l.trim() == WASM_TARGET))
            .unwrap_or(false)
    } else {
        sysroot_has_target()
    };
    if !target_installed {
        if !rustup {
            bail!(
                "the Rust target {WASM_TARGET} is missing and rustup is not on PATH to add it; \
                 install it with `rustup target add {WASM_TARGET}`"
            );
        }
        say(format!("Rust target {WASM_TARGET} missing: adding it"));
        util::run(cmd("rustup").args(["target", "add", WASM_TARGET]))?;
    }
    // rustfmt and clippy: the lint layer needs them; cheap to check, so always checked.
    let mut missing = Vec::new();
    for (sub, component) in [("fmt", "rustfmt"), ("clippy", "clippy")] {
        if output_of(util::cargo().args([sub, "--version"])).is_none() {
            missing.push(component);
        }
    }
    if !missing.is_empty() {
        if !rustup {
            bail!(
                "cargo components missing: {}; install them with `rustup component add {}`",
                missing.join(", "),
                missing.join(" ")
            );
        }
        say(format!(
            "Rust components missing: {}: adding them",
            missing.join(", ")
        ));
        util::run(cmd("rustup").arg("component").arg("add").args(&missing))?;
    }
    Ok(())
}

fn sysroot_has_target() -> bool {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    output_of(Command::new(rustc).args(["--print", "sysroot"]))
        .map(|sysroot| {
            PathBuf::from(sysroot)
                .join("lib/rustlib")
                .join(WASM_TARGET)
                .is_dir()
        })
        .unwrap_or(false)
}

/// apt-get, run at most once with `update` first, and only as root.
#[derive(Default)]
struct Apt {
    updated: bool,
}

impl Apt {
    fn install(&mut self, packages: &[&str]) -> Result<()> {
        if which("apt-get").is_none() {
            bail!("apt-get is not available on this machine");
        }
        if !is_root() {
            bail!("not running as root, so apt-get was not used");
        }
        if !self.updated {
            say("apt-get update (once, before installing)");
            util::run(
                Command::new("apt-get")
                    .arg("update")
                    .env("DEBIAN_FRONTEND", "noninteractive"),
            )?;
            self.updated = true;
        }
        say(format!(
            "installing Debian packages: {}",
            packages.join(" ")
        ));
        util::run(
            Command::new("apt-get")
                .args(["install", "-y"])
                .args(packages)
                .env("DEBIAN_FRONTEND", "noninteractive"),
        )
    }
}

/// The exact `wasm-bindgen` version the crate pins: `wasm-bindgen = "=X"` in the root
/// Cargo.toml, else the version Cargo.lock resolved.
pub fn wasm_bindgen_version(root: &Path) -> Result<String> {
    let manifest_path = root.join("Cargo.toml");
    let manifest = std::fs::read_to_string(&manifest_path)
        .with_context(|| format!("reading {}", manifest_path.display()))?;
    if let Some(v) = pinned_in_manifest(&manifest, "wasm-bindgen") {
        return Ok(v);
    }
    let lock_path = root.join("Cargo.lock");
    if let Ok(lock) = std::fs::read_to_string(&lock_path) {
        if let Some(v) = locked_version(&lock, "wasm-bindgen") {
            return Ok(v);
        }
    }
    bail!(
        "cannot tell which wasm-bindgen CLI to install: no `wasm-bindgen = \"=X\"` pin in {} \
         and no wasm-bindgen package in {}",
        manifest_path.display(),
        lock_path.display()
    )
}

/// Finds `name = "=X"` or `name = { version = "=X", ... }` and returns X when pinned with `=`.
fn pinned_in_manifest(manifest: &str, name: &str) -> Option<String> {
    for line in manifest.lines() {
        let line = line.trim();
        let Some(rest) = line.strip_prefix(name) else {
            continue;
        };
        let Some(value) = rest.trim_start().strip_prefix('=') else {
            continue; // e.g. `wasm-bindgen-futures = ...`
        };
        let value = value.trim_start();
        let value = match value.strip_prefix('{') {
            Some(table) => {
                let at = table.find("version")?;
                table[at + "version".len()..]
                    .trim_start()
                    .strip_prefix('=')?
            }
            None => value,
        };
        let quoted = value.trim_start().strip_prefix('"')?;
        let version = &quoted[..quoted.find('"')?];
        if let Some(exact) = version.trim().strip_prefix('=') {
            return Some(exact.trim().to_string());
        }
    }
    None
}

fn locked_version(lock: &str, name: &str) -> Option<String> {
    let wanted = format!("name = \"{name}\"");
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line.trim() == wanted {
            let next = lines.next()?.trim();
            let v = next.strip_prefix("version = \"")?.strip_suffix('"')?;
            return Some(v.to_string());
        }
    }
    None
}

fn wasm_bindgen_cli(root: &Path) -> Result<()> {
    let want = wasm_bindgen_version(root)?;
    let have = || {
        output_of(Command::new("wasm-bindgen").arg("--version"))
            .and_then(|out| out.split_whitespace().nth(1).map(str::to_string))
    };
    match have() {
        Some(v) if v == want => return Ok(()),
        Some(v) => say(format!(
            "wasm-bindgen CLI is {v}, the crate pins {want}: installing {want} (takes minutes)"
        )),
        None => say(format!(
            "wasm-bindgen CLI not found: installing {want} (takes minutes)"
        )),
    }
    // Not --locked: the CLI's own lock file names a webpki-roots release the registry lacks.
    util::run(util::cargo().args(["install", "wasm-bindgen-cli", "--version", &want]))?;
    match have() {
        Some(v) if v == want => Ok(()),
        other => bail!(
            "installed wasm-bindgen-cli {want}, but `wasm-bindgen --version` now reports {:?}: \
             is ~/.cargo/bin on PATH, before any other wasm-bindgen?",
            other.unwrap_or_else(|| "nothing".into())
        ),
    }
}

/// `cargo install`s `tool` (at `version`, else the newest) unless it is on `PATH`: wasm-pack,
/// and geckodriver, which `wasm-pack test --firefox` and the engine tests drive Firefox with (it
/// comes from crates.io: Debian has no package, and its npm package downloads a binary).
fn cargo_install(tool: &str, version: Option<&str>) -> Result<()> {
    if which(tool).is_some() {
        return Ok(());
    }
    say(format!("{tool} not found: installing it (takes minutes)"));
    let mut install = util::cargo();
    install.args(["install", tool, "--locked"]);
    if let Some(version) = version {
        install.args(["--version", version]);
    }
    util::run(&mut install)?;
    if which(tool).is_none() {
        bail!("installed {tool} but it is not on PATH: add ~/.cargo/bin to PATH");
    }
    Ok(())
}

fn node_pieces(root: &Path) -> Result<()> {
    let node = output_of(Command::new("node").arg("--version"));
    let Some(node) = node else {
        bail!(
            "Node.js is missing (the end-to-end tests run with `node --test`): install Node.js \
             {MIN_NODE_MAJOR} or newer with npm, e.g. `sudo apt-get install -y nodejs npm`"
        );
    };
    let major = node
        .trim_start_matches('v')
        .split('.')
        .next()
        .and_then(|m| m.parse::<u32>().ok());
    match major {
        Some(m) if m >= MIN_NODE_MAJOR => {}
        _ => {
            bail!("Node.js {node} is too old: the end-to-end tests need {MIN_NODE_MAJOR} or newer")
        }
    }
    if output_of(Command::new("npm").arg("--version")).is_none() {
        bail!("npm is missing: install it with Node.js (e.g. `sudo apt-get install -y npm`)");
    }

    npm_packages(&root.join("tests/e2e"), "tests/e2e")?;
    npm_packages(&root.join(ENGINES_DIR), ENGINES_DIR)
}

/// The engine tests (selenium-webdriver, the one WebDriver client for all three engines).
pub const ENGINES_DIR: &str = "tests/engines";

/// The Python package of the end-to-end tests: the official Standard Webhooks
/// library from PyPI (a real client nobody here wrote signs and sends to the
/// relay, tests/e2e/hooks.test.mjs), installed into `tests/e2e/.python`
/// (`pip install --target`: no system or user site-packages touched).
pub const PYTHON_DIR: &str = "tests/e2e/.python";
const PYTHON_PACKAGE: &str = "standardwebhooks==1.1.0";

fn python_packages(root: &Path, apt: &mut Apt) -> Result<()> {
    let target = root.join(PYTHON_DIR);
    if target.join("standardwebhooks").is_dir() {
        return Ok(());
    }
    let has_pip = || output_of(Command::new("python3").args(["-m", "pip", "--version"])).is_some();
    if !has_pip() {
        apt.install(&["python3-pip"]).with_context(|| {
            format!(
                "pip is missing, needed for {PYTHON_PACKAGE} (tests/e2e): install it, e.g. \
                 `sudo apt-get install -y python3-pip`"
            )
        })?;
        if !has_pip() {
            bail!("python3-pip was installed, but `python3 -m pip` still does not run");
        }
    }
    say(format!("{PYTHON_DIR}: pip install {PYTHON_PACKAGE}"));
    let mut pip = Command::new("python3");
    pip.args([
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "--root-user-action=ignore",
        "--target",
    ])
    .arg(&target)
    .arg(PYTHON_PACKAGE);
    util::run(&mut pip)
}

/// The npm tools of the build (`xtask/tools`: binaryen's wasm-opt, esbuild), if Node.js and npm
/// are here.
fn build_tools(root: &Path) -> Result<()> {
    if output_of(Command::new("npm").arg("--version")).is_none() {
        bail!("npm is missing (install Node.js {MIN_NODE_MAJOR}+ with npm)");
    }
    npm_packages(&root.join(crate::build::TOOLS_DIR), crate::build::TOOLS_DIR)
}

/// Installs the npm packages of `dir` (its package.json and lock file) unless node_modules
/// is already newer than both: `npm ci` with a lock file, `npm install` without one. `name`
/// is how messages call the directory.
pub fn npm_packages(dir: &Path, name: &str) -> Result<()> {
    if !dir.join("package.json").is_file() {
        say(format!(
            "note: {name}/package.json does not exist yet: no npm packages to install"
        ));
        return Ok(());
    }
    let lock = dir.join("package-lock.json");
    let installed_marker = dir.join("node_modules/.package-lock.json");
    let stale = match modified(&installed_marker) {
        None => true,
        Some(installed) => [dir.join("package.json"), lock.clone()]
            .iter()
            .filter_map(|p| modified(p))
            .any(|m| m > installed),
    };
    if !stale {
        return Ok(());
    }
    let mut npm = Command::new("npm");
    npm.current_dir(dir);
    if lock.is_file() {
        say(format!(
            "{name}: node_modules missing or older than the lock file: npm ci"
        ));
        npm.args(["ci", "--no-audit", "--no-fund"]);
    } else {
        say(format!("{name}: no package-lock.json yet: npm install"));
        npm.args(["install", "--no-audit", "--no-fund"]);
    }
    util::run(&mut npm)
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_exact_pin_from_manifest() {
        let toml = r#"
[target.'cfg(target_family = "wasm")'.dependencies]
wasm-bindgen-futures = "0.4"
wasm-bindgen = "=0.2.130"
"#;
        assert_eq!(
            pinned_in_manifest(toml, "wasm-bindgen").as_deref(),
            Some("0.2.130")
        );
    }

    #[test]
    fn reads_exact_pin_from_table() {
        let toml = r#"wasm-bindgen = { version = "= 0.2.131", default-features = false }"#;
        assert_eq!(
            pinned_in_manifest(toml, "wasm-bindgen").as_deref(),
            Some("0.2.131")
        );
    }

    #[test]
    fn ignores_unpinned_and_similar_names() {
        let toml = "wasm-bindgen-test = \"=0.3.80\"\nwasm-bindgen = \"0.2\"\n";
        assert_eq!(pinned_in_manifest(toml, "wasm-bindgen"), None);
    }

    #[test]
    fn reads_version_from_lock() {
        let lock = "[[package]]\nname = \"wasm-bindgen-futures\"\nversion = \"0.4.1\"\n\n\
                    [[package]]\nname = \"wasm-bindgen\"\nversion = \"0.2.130\"\n";
        assert_eq!(
            locked_version(lock, "wasm-bindgen").as_deref(),
            Some("0.2.130")
        );
    }
}
