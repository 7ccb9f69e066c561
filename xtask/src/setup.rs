//! `cargo xtask setup`: install what is missing, skip what is present.

use crate::util::{self, cmd, is_root, output_of, say, which};
use anyhow::{anyhow, bail, Context, Result};
use std::path::Path;
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
use Scope::{Build, Full};

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

/// The programs that come from Debian packages: who needs it, how to tell it is present (a
/// program name on PATH, or an absolute path), its package, and why it is needed.
const APT_REQUIRED: &[(Scope, &str, &str, &str)] = &[
    (
        Build,
        "clang",
        "clang",
        "compiles SQLite's C code to wasm32 (gcc cannot)",
    ),
    (
        Full,
        CHROMIUM,
        "chromium",
        "the browser the wasm and end-to-end tests run in",
    ),
    (
        Full,
        "chromedriver",
        "chromium-driver",
        "lets `wasm-pack test --chrome` drive Chromium",
    ),
    (
        Full,
        FIREFOX,
        "firefox-esr",
        "the second engine: `wasm-pack test --firefox` and the engine tests (tests/engines)",
    ),
    (
        Full,
        "WebKitWebDriver",
        "webkit2gtk-driver",
        "drives WebKitGTK's MiniBrowser, the third engine of the engine tests",
    ),
    (
        Full,
        "xvfb-run",
        "xvfb",
        "a virtual display for MiniBrowser, which has no headless mode",
    ),
    (
        Full,
        "pg_ctlcluster",
        "postgresql",
        "the PostgreSQL server the probe's tests (tests/probe.rs) start a throwaway cluster of",
    ),
    (
        Full,
        "/usr/lib/python3/dist-packages/psycopg2/__init__.py",
        "python3-psycopg2",
        "the PostgreSQL driver of the reference receivers (examples/receivers/)",
    ),
];

fn present(program: &str) -> bool {
    if program.starts_with('/') {
        Path::new(program).is_file()
    } else {
        which(program).is_some()
    }
}

/// Installs what `scope` needs and is missing. Fails, naming every missing piece and how to
/// install it, when something could not be installed.
pub fn run(scope: Scope) -> Result<()> {
    let root = util::root();
    let mut problems: Vec<String> = Vec::new();
    let mut note = |result: Result<()>| {
        if let Err(e) = result {
            problems.push(format!("{e:#}"));
        }
    };
    let mut apt = Apt::default();

    // 1. Rust: the wasm target, rustfmt and clippy.
    note(rust_pieces());

    // 2. Debian packages.
    let missing: Vec<_> = APT_REQUIRED
        .iter()
        .filter(|(needed_by, program, ..)| {
            (scope == Full || *needed_by == Build) && !present(program)
        })
        .collect();
    if !missing.is_empty() {
        let packages: Vec<&str> = missing.iter().map(|(_, _, package, _)| *package).collect();
        let what = missing
            .iter()
            .map(|(_, program, package, why)| format!("{program} (package {package}: {why})"))
            .collect::<Vec<_>>()
            .join(", ");
        say(format!("missing: {what}"));
        match apt.install(&packages) {
            Ok(()) => {
                for (_, program, package, _) in missing.iter().filter(|p| !present(p.1)) {
                    note(Err(anyhow!(
                        "{program} is still missing after installing package {package}"
                    )));
                }
            }
            Err(e) => note(Err(anyhow!(
                "{e:#}\nmissing: {what}\ninstall with: sudo apt-get update && sudo apt-get install -y {}",
                packages.join(" ")
            ))),
        }
    }
    // The build's npm tools, into xtask/tools: binaryen (wasm-opt) does not come from Debian,
    // whose version 108 breaks wasm-bindgen output (see build.rs), so the npm package `binaryen`
    // (JS + wasm, nothing downloaded at run time) is used; and esbuild (its platform binary is
    // a package of the registry), which `cargo xtask dist` (and so `serve` and the e2e layer)
    // bundles the page with. wasm-opt is optional — the module works unoptimised, only larger
    // — so a failure here is a warning; `dist` stops and names this step if esbuild is missing.
    let tools = match output_of(Command::new("npm").arg("--version")) {
        None => Err(anyhow!(
            "npm is missing (install Node.js {MIN_NODE_MAJOR}+ with npm)"
        )),
        Some(_) => npm_packages(&root.join(crate::build::TOOLS_DIR), crate::build::TOOLS_DIR),
    };
    if let Err(e) = tools {
        say(format!(
            "warning: the build's npm tools (wasm-opt, esbuild) not installed ({e:#}); release \
             builds stay unoptimised and `cargo xtask dist` cannot run"
        ));
    }

    // 3. wasm-bindgen CLI, exactly the version of the `wasm-bindgen` crate, then wasm-pack.
    note(
        wasm_bindgen_version()
            .and_then(|v| cargo_install("wasm-bindgen", "wasm-bindgen-cli", Some(&v), true)),
    );
    note(cargo_install("wasm-pack", "wasm-pack", None, false));

    // 4. geckodriver, Node.js, npm and the end-to-end tests' packages; the Python package a
    //    webhook test sends with.
    if scope == Full {
        note(cargo_install(
            "geckodriver",
            "geckodriver",
            Some(GECKODRIVER_VERSION),
            false,
        ));
        note(node_pieces(&root));
        note(python_packages(&root, &mut apt));
    }

    if !problems.is_empty() {
        let list: Vec<String> = problems.iter().map(|p| p.replace('\n', "\n  ")).collect();
        bail!("setup is incomplete:\n- {}", list.join("\n- "));
    }
    say(match scope {
        Build => "setup: everything the build needs is present",
        Full => "setup: everything the build and the tests need is present",
    });
    Ok(())
}

fn rust_pieces() -> Result<()> {
    let rustup = which("rustup").is_some();
    // A target is installed when the compiler's sysroot holds its library (rustup's or not).
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let sysroot = output_of(cmd(rustc).args(["--print", "sysroot"]));
    let target = sysroot.map(|s| Path::new(&s).join("lib/rustlib").join(WASM_TARGET));
    if !target.is_some_and(|dir| dir.is_dir()) {
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
        let apt_get = |args: &[&str]| {
            let mut apt_get = Command::new("apt-get");
            util::run(apt_get.args(args).env("DEBIAN_FRONTEND", "noninteractive"))
        };
        if !self.updated {
            say("apt-get update (once, before installing)");
            apt_get(&["update"])?;
            self.updated = true;
        }
        say(format!(
            "installing Debian packages: {}",
            packages.join(" ")
        ));
        apt_get(&[&["install", "-y"], packages].concat())
    }
}

/// The `wasm-bindgen` crate's version as Cargo resolved it (`=X` in Cargo.toml, so X):
/// `cargo pkgid` prints `registry+…#wasm-bindgen@X`.
fn wasm_bindgen_version() -> Result<String> {
    let id = output_of(util::cargo().args(["pkgid", "wasm-bindgen"]))
        .context("`cargo pkgid wasm-bindgen` failed: which wasm-bindgen CLI to install?")?;
    Ok(id.rsplit(['@', ':']).next().unwrap_or_default().to_string())
}

/// `cargo install`s `krate` (at `version`, else the newest) unless `program` is on PATH or,
/// when `exact`, reports `version` (the wasm-bindgen CLI must be the crate's version). Also
/// wasm-pack, and geckodriver, which `wasm-pack test --firefox` and the engine tests drive
/// Firefox with (Debian has no package, and its npm package downloads a binary).
fn cargo_install(program: &str, krate: &str, version: Option<&str>, exact: bool) -> Result<()> {
    let present = || match exact {
        true => output_of(Command::new(program).arg("--version"))
            .is_some_and(|out| out.split_whitespace().nth(1) == version),
        false => which(program).is_some(),
    };
    if present() {
        return Ok(());
    }
    say(format!(
        "{program} missing or not {version:?}: installing {krate} (takes minutes)"
    ));
    let mut install = util::cargo();
    install.args(["install", krate]);
    // Not --locked for the wasm-bindgen CLI: its lock file names a webpki-roots release the
    // registry lacks.
    if krate != "wasm-bindgen-cli" {
        install.arg("--locked");
    }
    if let Some(version) = version {
        install.args(["--version", version]);
    }
    util::run(&mut install)?;
    if !present() {
        bail!("installed {krate}, but {program} is not on PATH or not {version:?}: is ~/.cargo/bin on PATH, before any other {program}?");
    }
    Ok(())
}

fn node_pieces(root: &Path) -> Result<()> {
    let Some(node) = output_of(Command::new("node").arg("--version")) else {
        bail!(
            "Node.js is missing (the end-to-end tests run with `node --test`): install Node.js \
             {MIN_NODE_MAJOR} or newer with npm, e.g. `sudo apt-get install -y nodejs npm`"
        );
    };
    let major = node
        .trim_start_matches('v')
        .split('.')
        .next()
        .and_then(|m| m.parse().ok());
    if major.is_none_or(|m: u32| m < MIN_NODE_MAJOR) {
        bail!("Node.js {node} is too old: the end-to-end tests need {MIN_NODE_MAJOR} or newer")
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
    let pip = "-m pip install --quiet --disable-pip-version-check --root-user-action=ignore";
    util::run(
        Command::new("python3")
            .args(pip.split(' '))
            .arg("--target")
            .arg(&target)
            .arg(PYTHON_PACKAGE),
    )
}

/// `npm ci` in `dir` unless its node_modules is newer than its package.json and lock file.
/// `name` is how messages call the directory.
pub fn npm_packages(dir: &Path, name: &str) -> Result<()> {
    let installed = modified(&dir.join("node_modules/.package-lock.json"));
    let stale = ["package.json", "package-lock.json"]
        .iter()
        .any(|f| modified(&dir.join(f)) > installed);
    if stale {
        say(format!(
            "{name}: node_modules missing or older than the lock file: npm ci"
        ));
        util::run(
            Command::new("npm")
                .current_dir(dir)
                .args(["ci", "--no-audit", "--no-fund"]),
        )?;
    }
    Ok(())
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

#[cfg(test)]
mod tests {
    /// The CLI installed is the crate's exact pin in Cargo.toml.
    #[test]
    fn the_cli_version_is_the_crates_pin() {
        let version = super::wasm_bindgen_version().unwrap();
        let manifest = std::fs::read_to_string(crate::util::root().join("Cargo.toml")).unwrap();
        assert!(
            manifest.contains(&format!("\nwasm-bindgen = \"={version}\"")),
            "{version}"
        );
    }
}
