//! `cargo xtask test [--only LAYER]... [--changed]`: every test layer, each required to run and
//! pass; `--changed` keeps the layers a change touches (changed.rs).

mod changed;

use crate::setup::{self, Scope, CHROMIUM, ENGINES_DIR, FIREFOX, WASM_TARGET};
use crate::util::{self, run_tee, say};
use crate::{build, deps, dist, doc_paths, serve, size};
use anyhow::{anyhow, bail, Context, Result};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Instant;

/// The package the layers test (the root crate).
const MAIN_PACKAGE: &str = "inbox-lab";
const XTASK_PACKAGE: &str = "xtask";
/// The benchmark (bench/), a crate of its own on top of the main one.
const BENCH_PACKAGE: &str = "inbox-lab-bench";
/// The native layer's build of the main crate, which the e2e layer's `inbox-lab` reuses.
const NATIVE_FEATURES: [&str; 2] = ["--features", "workshop"];
/// Seconds wasm-bindgen-test-runner waits for the browser tests, unless the caller set it.
const BROWSER_TEST_TIMEOUT_SECS: &str = "600";

#[derive(Clone, Copy, PartialEq, Eq, Debug, clap::ValueEnum)]
pub enum Layer {
    Lint,
    Native,
    Browser,
    Firefox,
    E2e,
    Engines,
}

use Layer::{Browser, E2e, Engines, Firefox, Lint, Native};

impl Layer {
    pub const ALL: [Layer; 6] = [Lint, Native, Browser, Firefox, E2e, Engines];

    pub fn name(self) -> &'static str {
        ["lint", "native", "browser", "firefox", "e2e", "engines"][self as usize]
    }
}

/// What one layer did.
struct Outcome {
    passed: u64,
    note: String,
}

pub fn run(only: &[Layer], changed: bool) -> Result<()> {
    let mut layers: Vec<Layer> = Layer::ALL
        .into_iter()
        .filter(|l| only.is_empty() || only.contains(l))
        .collect();
    let mut e2e_only = None;
    if changed {
        let paths = changed::changed_paths()?;
        let touched = changed::layers_for(&paths);
        layers.retain(|l| touched.contains(l));
        e2e_only = changed::e2e_files_only(&paths);
        let names: Vec<&str> = layers.iter().map(|l| l.name()).collect();
        let files = e2e_only
            .as_ref()
            .map(|f| format!(" (e2e: {} only)", f.join(", ")));
        say(format!(
            "--changed: {} paths changed → layers: {}{}",
            paths.len(),
            names.join(", "),
            files.unwrap_or_default()
        ));
        if layers.is_empty() {
            say("--changed: no layer to run");
            return Ok(());
        }
    }
    // lint and native need no browser or Node.js (clippy for wasm32 does need the target and
    // clang, which the Build scope has).
    let browsers = layers.iter().any(|l| !matches!(l, Lint | Native));
    let setup_scope = if browsers { Scope::Full } else { Scope::Build };
    setup::run(setup_scope).context("setup failed, so no test layer ran")?;

    // The site the e2e and engine layers serve builds while the layers before them run.
    let mut site = Site::start(layers.iter().any(|l| matches!(l, E2e | Engines)))?;
    // Runs started beside the browser layer, each printing its output when it ends, and joined
    // right after that layer (or the firefox layer, without it), so before the e2e layer:
    // * Firefox's wasm tests, when both browser layers run: the same test binary (built once),
    //   two browsers, one core each;
    // * the native tests: many of them wait for child processes, and Cargo holds no lock while
    //   test binaries run, so wasm-pack's build goes on.
    let both_browsers = layers.contains(&Browser) && layers.contains(&Firefox);
    let any_browser = layers.iter().any(|l| matches!(l, Browser | Firefox));
    let began = Instant::now();
    let mut rows = Vec::new();
    std::thread::scope(|scope| {
        let mut beside = Vec::new();
        for layer in layers.iter().copied() {
            if layer == Firefox && both_browsers {
                continue; // started beside the browser layer
            }
            say(format!("==== layer: {} ====", layer.name()));
            let (result, seconds) = match layer {
                Lint => timed(|| lint(&mut site)),
                Native if any_browser => {
                    beside.push((Native, scope.spawn(|| timed(|| native(false)))));
                    continue;
                }
                Native => timed(|| native(true)),
                Browser => {
                    if both_browsers {
                        say("==== layer: firefox, beside the browser layer ====");
                        let run = || timed(|| browser(WasmBrowser::Firefox, false));
                        beside.push((Firefox, scope.spawn(run)));
                    }
                    timed(|| browser(WasmBrowser::Chrome, true))
                }
                Firefox => timed(|| browser(WasmBrowser::Firefox, true)),
                E2e => timed(|| e2e(e2e_only.as_deref(), &mut site)),
                Engines => timed(|| engines(&mut site)),
            };
            report(layer, &result);
            rows.push((layer, result, seconds));
            if matches!(layer, Browser | Firefox) {
                for (layer, run) in beside.drain(..) {
                    let (result, seconds) = join_beside(layer, run);
                    report(layer, &result);
                    rows.push((layer, result, seconds));
                }
            }
        }
    });
    rows.sort_by_key(|(layer, ..)| Layer::ALL.iter().position(|l| l == layer));

    print_summary(&rows, began.elapsed().as_secs_f64());
    let failed: Vec<&str> = rows
        .iter()
        .filter(|(_, result, _)| result.is_err())
        .map(|(layer, ..)| layer.name())
        .collect();
    if !failed.is_empty() {
        bail!("test layers failed: {}", failed.join(", "));
    }
    Ok(())
}

/// A layer's result and the seconds it took.
type Timed = (Result<Outcome>, f64);

fn timed(layer: impl FnOnce() -> Result<Outcome>) -> Timed {
    let started = Instant::now();
    let result = layer();
    (result, started.elapsed().as_secs_f64())
}

/// Waits for a layer run in a thread beside the others.
fn join_beside(layer: Layer, beside: std::thread::ScopedJoinHandle<'_, Timed>) -> Timed {
    let name = layer.name();
    say(format!(
        "{name}: waiting for the run started beside the browser layer"
    ));
    beside
        .join()
        .unwrap_or_else(|_| (Err(anyhow!("the {name} run panicked")), 0.0))
}

/// Says how a layer ended.
fn report(layer: Layer, result: &Result<Outcome>) {
    let name = layer.name();
    match result {
        Ok(o) => {
            let unit = if layer == Lint { "checks" } else { "tests" };
            say(format!("layer {name} passed: {} {unit}", o.passed));
        }
        Err(e) => say(format!("layer {name} FAILED: {e:#}")),
    }
}

/// Where the background site build writes its output.
const SITE_LOG: &str = "target/test-site.log";

/// What the e2e and engine layers serve, as it deploys: `xtask dist` (all three modules release, then
/// dist/), in a child started before the other layers run, beside them (other Cargo profiles: no
/// build lock in common); none unless `wanted`. [`Site::ready`] waits for it.
#[derive(Default)]
struct Site {
    child: Option<std::process::Child>,
    ok: bool,
}

impl Site {
    fn start(wanted: bool) -> Result<Site> {
        let mut site = Site::default();
        if wanted {
            let out = std::fs::create_dir_all(util::root().join("target"))
                .and_then(|()| std::fs::File::create(util::root().join(SITE_LOG)))
                .with_context(|| format!("creating {SITE_LOG}"))?;
            let child = Command::new(std::env::current_exe()?)
                .arg("dist")
                .stdin(std::process::Stdio::null())
                .stdout(out.try_clone()?)
                .stderr(out)
                .spawn()
                .context("starting `xtask dist`")?;
            site.child = Some(child);
            say(format!(
                "building the site for e2e and engines in the background (output: {SITE_LOG})"
            ));
        }
        Ok(site)
    }

    /// Whether a site build was started (it may have finished).
    fn building(&self) -> bool {
        self.child.is_some() || self.ok
    }

    /// Waits until the start module is built: the background build's log says so (it builds
    /// the start module first, build::page), or the build ended.
    fn start_module_built(&mut self) -> Result<()> {
        let built = format!("built {}/inbox_lab_bg.wasm", build::OUT_DIR);
        while let Some(child) = &mut self.child {
            let log = std::fs::read_to_string(util::root().join(SITE_LOG)).unwrap_or_default();
            if log.contains(&built) {
                return Ok(());
            }
            if child.try_wait()?.is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(250));
        }
        self.ready()
    }

    fn ready(&mut self) -> Result<()> {
        if let Some(mut child) = self.child.take() {
            self.ok = child.wait().is_ok_and(|s| s.success());
            let log = std::fs::read_to_string(util::root().join(SITE_LOG)).unwrap_or_default();
            print!("{log}");
        }
        if !self.ok {
            bail!("building the site failed (its output: {SITE_LOG})");
        }
        Ok(())
    }
}

impl Drop for Site {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Each layer run: what it did, in how many seconds; then the wall time of them all (layers
/// run beside others overlap).
fn print_summary(rows: &[(Layer, Result<Outcome>, f64)], total: f64) {
    println!();
    println!(
        "{:<8}  {:<6}  {:>6}  {:>8}  note",
        "layer", "result", "passed", "seconds"
    );
    println!("{}", "-".repeat(60));
    for (layer, result, seconds) in rows {
        let (result, passed, note) = match result {
            Ok(o) => ("ok", o.passed.to_string(), o.note.clone()),
            Err(e) => {
                let first = format!("{e:#}").lines().next().unwrap_or("").to_string();
                ("FAILED", "-".to_string(), first)
            }
        };
        let name = layer.name();
        println!("{name:<8}  {result:<6}  {passed:>6}  {seconds:>8.1}  {note}");
    }
    println!(
        "{:<8}  {:<6}  {:>6}  {total:>8.1}  wall, from the first layer to the last",
        "all", "", ""
    );
    println!();
}

// ---- lint -------------------------------------------------------------------------------------

/// The release start module's gzip size, checked against its budget: the one the background
/// site build makes (waiting for that module only: the full and bench modules go on building
/// beside the next layers), or, when no layer asked for the site, one built here.
fn start_module_size(site: &mut Site) -> Result<u64> {
    if site.building() {
        site.start_module_built()?;
    } else {
        build::module(
            build::Module::Start,
            false,
            false,
            &util::root().join(build::OUT_DIR),
        )?;
    }
    size::check(&util::root())
}

/// One lint check: a command, or a check written here.
type Check = Box<dyn FnOnce() -> Result<()>>;

fn lint(site: &mut Site) -> Result<Outcome> {
    let clippy = |package: &str, extra: &[&str]| -> Vec<String> {
        ["clippy", "--package", package, "--all-targets"]
            .iter()
            .chain(extra)
            .chain(&["--", "-D", "warnings"])
            .map(|a| a.to_string())
            .collect()
    };
    let bench = ["--package", BENCH_PACKAGE];
    let commands = [
        (
            "rustfmt",
            ["fmt", "--all", "--", "--check"].map(String::from).to_vec(),
        ),
        ("clippy native (+ bench)", clippy(MAIN_PACKAGE, &bench)),
        (
            "clippy native + workshop",
            clippy(MAIN_PACKAGE, &["--features", "workshop"]),
        ),
        (
            "clippy native, core alone",
            clippy(MAIN_PACKAGE, &["--no-default-features"]),
        ),
        (
            "clippy wasm32 (+ bench)",
            clippy(MAIN_PACKAGE, &["--target", WASM_TARGET, bench[0], bench[1]]),
        ),
        (
            "clippy wasm32 start module + workshop",
            clippy(
                MAIN_PACKAGE,
                &[
                    "--target",
                    WASM_TARGET,
                    "--no-default-features",
                    "--features",
                    "workshop",
                ],
            ),
        ),
        ("clippy xtask", clippy(XTASK_PACKAGE, &[])),
    ];
    let mut checks: Vec<(&str, Check)> = commands
        .into_iter()
        .map(|(name, args)| {
            let run: Check = Box::new(move || util::run(util::cargo().args(args)));
            (name, run)
        })
        .collect();
    // Every intra-doc link resolves to a public item: rustdoc's warnings are errors, natively
    // (the three crates) and for wasm32 (which documents src/wasm/).
    checks.push((
        "rustdoc -D warnings (native and wasm32)",
        Box::new(|| {
            let doc = |args: &[&str]| {
                util::run(
                    util::cargo()
                        .args(["doc", "--no-deps"])
                        .args(args)
                        .env("RUSTDOCFLAGS", "-D warnings"),
                )
            };
            doc(&[
                "--package",
                MAIN_PACKAGE,
                "--package",
                BENCH_PACKAGE,
                "--package",
                XTASK_PACKAGE,
            ])?;
            doc(&["--package", MAIN_PACKAGE, "--target", WASM_TARGET])
        }),
    ));
    // The core compiles and its tests pass without the labs.
    checks.push((
        "core alone: cargo test --no-default-features",
        Box::new(core_alone),
    ));
    // Documents and code comments name only paths that exist.
    checks.push((
        "paths named in documents and comments",
        Box::new(|| {
            let n = doc_paths::check(&util::root())?;
            say(format!("{n} paths named in documents and comments exist"));
            Ok(())
        }),
    ));
    // src/ folders depend on each other only along deps::ALLOWED, without a cycle.
    checks.push((
        "folder dependencies (xtask/src/deps.rs)",
        Box::new(|| {
            let n = deps::check(&util::root())?;
            say(format!("{n} folder dependencies, acyclic and allowed"));
            Ok(())
        }),
    ));

    let total = checks.len() + 1;
    let mut failed = Vec::new();
    for (name, check) in checks {
        if let Err(e) = check() {
            say(format!("lint check {name} failed: {e:#}"));
            failed.push(name);
        }
    }
    // The start module within its budget (xtask/src/size.rs), last: it waits for the release
    // build of the site the later layers serve, or builds the start module when none is made.
    match start_module_size(site) {
        Ok(n) => say(format!(
            "the start module is {n} bytes of gzip, within its budget of {}",
            size::START_BUDGET
        )),
        Err(e) => {
            say(format!("lint check start module size failed: {e:#}"));
            failed.push("start module size (xtask/src/size.rs)");
        }
    }
    if !failed.is_empty() {
        bail!(
            "{} of {total} checks failed: {}",
            failed.len(),
            failed.join(", ")
        );
    }
    Ok(Outcome {
        passed: total as u64,
        note: "rustfmt; clippy -D warnings: native (default and bench, +workshop, core alone), \
               wasm32 (default and bench, start module +workshop), xtask; \
               rustdoc -D warnings (native, wasm32); core tests without labs; doc paths; \
               folder dependencies; start module size"
            .into(),
    })
}

/// The core alone (`--no-default-features`): every test target builds without the labs, and the
/// core's unit and doc tests pass. Its integration tests (tests/differential.rs, hostile.rs,
/// model.rs) run once, in the native layer: no code in `src/core/` depends on a feature (checked
/// here), so a second run without the labs would test the same code again.
fn core_alone() -> Result<()> {
    for file in util::files_under(&util::root().join("src/core"), |_| true)? {
        let text = std::fs::read_to_string(&file)?;
        // A `cfg_attr(…, allow(…))` silences a lint without the labs: no behaviour changes.
        let lint_only = |l: &str| l.contains("cfg_attr(") && l.contains("allow(");
        if let Some(line) = text
            .lines()
            .find(|l| l.contains("feature =") && !lint_only(l))
        {
            bail!(
                "{} compiles differently with a feature ({}): the core is the same with or \
                 without the labs",
                file.display(),
                line.trim()
            );
        }
    }
    let no_labs = ["test", "--package", MAIN_PACKAGE, "--no-default-features"];
    util::run(util::cargo().args(no_labs).arg("--no-run"))?;
    let mut passed = 0;
    for only in ["--lib", "--doc"] {
        passed += run_libtest(util::cargo().args(no_labs).arg(only), true)?.passed;
    }
    if passed == 0 {
        bail!("`cargo test --no-default-features --lib/--doc` ran 0 tests");
    }
    say(format!(
        "the core alone: {passed} unit and doc tests passed"
    ));
    Ok(())
}

// ---- native -----------------------------------------------------------------------------------

/// The native tests of the three crates: the main one with the workshop's handler in Rust (the
/// starter as shipped is judged), the benchmark's (its settings and shims have unit tests) and
/// xtask's. Their test binaries are built first (`cargo test --no-run`), then run
/// [`NATIVE_AT_ONCE`] at a time beside the doc tests: one `cargo test` runs its binaries one
/// after another, and most of them keep one core busy (the crash sweeps and probes wait for
/// child processes). Each run's output is printed when it ends; `live` also shows the builds'.
fn native(live: bool) -> Result<Outcome> {
    // The benchmark's tests link the main crate built with the same features as the main
    // crate's own tests, so it is compiled once, not twice.
    let crates: [(&'static str, &[&str]); 2] = [
        (MAIN_PACKAGE, &NATIVE_FEATURES),
        (BENCH_PACKAGE, &["--features", "inbox-lab/workshop"]),
    ];
    // A job: commands one thread runs in order. Each test binary of the main crate and the
    // benchmark is one; the doc tests are one job of their own, because each `cargo test --doc`
    // may rebuild the main crate's rlib with its crate's features, under a name without a hash
    // (the crate is also a cdylib), which a doc test of the other crate linking at the same
    // moment would read half written. xtask's tests run last, alone: one of them rebuilds the
    // `inbox-lab` binary with a broken workshop handler, which the main crate's tests run.
    let mut jobs = Vec::new();
    let mut docs = Vec::new();
    for (package, extra) in crates {
        jobs.extend(
            test_binaries(package, extra, live)?
                .into_iter()
                .map(|run| vec![run]),
        );
        let mut doc = util::cargo();
        doc.args(["test", "--package", package, "--doc"])
            .args(extra);
        docs.push((package, doc));
    }
    jobs.insert(0, docs);
    let xtask_job = test_binaries(XTASK_PACKAGE, &[], live)?;
    let run = |job: Vec<(&'static str, Command)>| -> Vec<_> {
        (job.into_iter())
            .map(|(package, mut cmd)| (package, run_libtest(&mut cmd, false)))
            .collect()
    };
    let per_worker = in_parallel(jobs, NATIVE_AT_ONCE, |next| {
        std::iter::from_fn(next).flat_map(run).collect::<Vec<_>>()
    })?;
    let mut done: Vec<_> = per_worker.into_iter().flatten().collect();
    done.extend(run(xtask_job));
    let mut passed = std::collections::BTreeMap::<&str, u64>::new();
    let mut failed = Vec::new();
    for (package, result) in done {
        match result {
            Ok(counts) => *passed.entry(package).or_default() += counts.passed,
            Err(e) => failed.push(format!("{e:#}")),
        }
    }
    if !failed.is_empty() {
        bail!("{}", failed.join("; "));
    }
    let count = |package| passed.get(package).copied().unwrap_or(0);
    let (main, bench, xtask) = (
        count(MAIN_PACKAGE),
        count(BENCH_PACKAGE),
        count(XTASK_PACKAGE),
    );
    if main == 0 {
        bail!("`cargo test --package {MAIN_PACKAGE}` ran 0 tests");
    }
    Ok(Outcome {
        passed: main + bench + xtask,
        note: format!(
            "{MAIN_PACKAGE} --features workshop {main} (unit, integration, doc), \
             {BENCH_PACKAGE} {bench}, xtask {xtask}; {NATIVE_AT_ONCE} test binaries at once"
        ),
    })
}

/// Native test binaries run at once (each also runs its tests on threads of its own).
const NATIVE_AT_ONCE: usize = 2;

/// Builds `package`'s test binaries (`cargo test --no-run`) and returns a command for each, run
/// as `cargo test` runs it: from the package's folder.
fn test_binaries<'a>(
    package: &'a str,
    extra: &[&str],
    live: bool,
) -> Result<Vec<(&'a str, Command)>> {
    let mut build = util::cargo();
    build
        .args(["test", "--package", package, "--no-run"])
        .args(extra)
        .arg("--message-format=json-render-diagnostics");
    say(format!("$ {}", util::show(&build)));
    // Cargo's messages on stderr: shown as they come when `live`, else after the build.
    let stderr = if live {
        Stdio::inherit()
    } else {
        Stdio::piped()
    };
    let out = build
        .stdin(Stdio::null())
        .stderr(stderr)
        .output()
        .with_context(|| format!("could not start `{}`", util::show(&build)))?;
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    if !out.status.success() {
        bail!("`{}` failed ({})", util::show(&build), out.status);
    }
    let mut runs = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if message["reason"] != "compiler-artifact" || message["profile"]["test"] != true {
            continue;
        }
        let (Some(exe), Some(manifest)) = (
            message["executable"].as_str(),
            message["manifest_path"].as_str(),
        ) else {
            continue;
        };
        let mut cmd = Command::new(exe);
        cmd.current_dir(
            std::path::Path::new(manifest)
                .parent()
                .unwrap_or(&util::root()),
        );
        runs.push((package, cmd));
    }
    if runs.is_empty() {
        bail!("`{}` built no test binary", util::show(&build));
    }
    Ok(runs)
}

/// Runs a command that prints libtest summaries (`cargo test`, `wasm-pack test`) and
/// counts them; fails when the command fails or any test failed.
fn run_libtest(cmd: &mut Command, live: bool) -> Result<LibtestCounts> {
    let out = run_tee(cmd, live)?;
    let counts = libtest_counts(&out.text());
    let (shown, status, passed, failed) =
        (util::show(cmd), out.status, counts.passed, counts.failed);
    if !status.success() {
        bail!("`{shown}` failed ({status}): {passed} passed, {failed} failed");
    }
    if failed > 0 {
        bail!("`{shown}` reported {failed} failed tests");
    }
    Ok(counts)
}

// ---- browser ----------------------------------------------------------------------------------

/// The browsers `wasm-pack test` runs the wasm tests in: the same tests, each a layer.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum WasmBrowser {
    /// Chromium, through chromedriver (found on PATH).
    Chrome,
    /// Firefox ESR, through geckodriver (found on PATH; `cargo xtask setup` installs it).
    Firefox,
}

/// `live`: its output streams as it runs (else it is printed when the run ends).
fn browser(which: WasmBrowser, live: bool) -> Result<Outcome> {
    let flag = match which {
        WasmBrowser::Chrome => "--chrome",
        WasmBrowser::Firefox => "--firefox",
    };
    let mut cmd = util::cmd("wasm-pack");
    // `--lib --test *` (passed on to cargo): the unit and integration tests, which run in
    // the browser; not the doc tests, which cargo would run for wasm32 outside any browser
    // (the native layer runs them). Their summary would otherwise be counted here: cargo
    // writes its "Doc-tests" heading to stderr and the summaries to stdout, so the captured
    // output cannot tell them apart. (Not `--tests`: wasm-pack already passes it to its build.)
    cmd.args(["test", "--headless", flag, "--lib", "--test", "*"]);
    if which == WasmBrowser::Firefox {
        // geckodriver starts `firefox` from PATH unless told otherwise; name the ESR the
        // setup installed (on Debian `firefox` is a wrapper script around it).
        cmd.env("GECKODRIVER_ARGS", format!("--binary={FIREFOX}"));
    }
    if std::env::var_os("WASM_BINDGEN_TEST_TIMEOUT").is_none() {
        cmd.env("WASM_BINDGEN_TEST_TIMEOUT", BROWSER_TEST_TIMEOUT_SECS);
    }
    let counts = run_libtest(&mut cmd, live)?;
    if counts.passed == 0 {
        bail!(
            "wasm-pack test ran 0 tests in the browser ({} `test result` lines seen)",
            counts.results
        );
    }
    Ok(Outcome {
        passed: counts.passed,
        note: format!(
            "wasm-pack test --headless {flag} --lib --test '*' (doc tests: native layer)"
        ),
    })
}

// ---- e2e --------------------------------------------------------------------------------------

/// `only`: run just these files (by name), as `--changed` asks when only they changed.
fn e2e(only: Option<&[String]>, site: &mut Site) -> Result<Outcome> {
    let root = util::root();
    let dir = root.join("tests/e2e");
    let mut files = e2e_test_files(&dir)?;
    if let Some(only) = only {
        files.retain(|f| only.iter().any(|name| f.ends_with(name)));
    }
    if files.is_empty() {
        bail!(
            "no end-to-end tests: {} has no *.test.mjs files (this layer never passes empty)",
            dir.display()
        );
    }
    if dir.join("package.json").is_file() && !dir.join("node_modules").is_dir() {
        bail!("tests/e2e/node_modules is missing: run `cargo xtask setup`");
    }

    // The native `inbox-lab`, whose `probe` hooks.test.mjs runs against the lab
    // (`INBOX_LAB_BIN`): the native layer's build (NATIVE_FEATURES), so after that layer there
    // is nothing to compile.
    let build = ["build", "--package", MAIN_PACKAGE, "--bin", "inbox-lab"];
    util::run(util::cargo().args(build).args(NATIVE_FEATURES))
        .context("building inbox-lab for the end-to-end tests")?;
    site.ready()?;
    let dist = root.join(dist::DIST_DIR);
    let switches = test_switches_in(&dist)?;
    if !switches.is_empty() {
        bail!(
            "dist/ holds test switches, which the page a reader gets must not: {}",
            switches.join(", ")
        );
    }

    // Every file on the project's own server (`cargo xtask serve`'s: the webhook relay, the CSP
    // as a header), and the files in ON_STATIC_HOST again on a static host under a sub-path.
    let host = StaticHost::start(&dist)?;
    let again = files.iter().filter(|f| named_in(f, ON_STATIC_HOST));
    let jobs: Vec<E2eJob> = (files.iter().map(|f| (f, false)))
        .chain(again.map(|f| (f, true)))
        .map(|(file, on_static)| E2eJob {
            file: file.clone(),
            on_static,
        })
        .collect();
    std::fs::create_dir_all(root.join(E2E_TAP)).with_context(|| format!("creating {E2E_TAP}"))?;
    let workers = e2e_workers();
    say(format!(
        "e2e: {} files on the project's server, {} again on `python3 -m http.server` at {}; \
         {workers} at once",
        files.len(),
        jobs.len() - files.len(),
        host.url,
    ));
    let mut done = run_e2e_jobs(jobs, workers, &host.url, &dist)?;
    drop(host);

    done.sort_by(|a, b| b.seconds.total_cmp(&a.seconds));
    say("e2e files, slowest first (seconds, tests, host):");
    for d in &done {
        say(format!(
            "  {:>6.1}  {:>3}  {}  {}",
            d.seconds, d.passed, d.host, d.name
        ));
    }
    let failed: Vec<String> = done
        .iter()
        .filter_map(|d| {
            d.failure
                .as_ref()
                .map(|f| format!("{} on {}: {f}", d.name, d.host))
        })
        .collect();
    if !failed.is_empty() {
        bail!("{} e2e files failed: {}", failed.len(), failed.join("; "));
    }
    let passed_on = |host| -> u64 {
        done.iter()
            .filter(|d| d.host == host)
            .map(|d| d.passed)
            .sum()
    };
    let (own, on_static) = (passed_on(OWN), passed_on(STATIC));
    if own == 0 {
        bail!("the end-to-end files passed 0 tests");
    }
    Ok(Outcome {
        passed: own + on_static,
        note: format!(
            "node --test, Chromium via playwright-core, {workers} files at once: {own} on `serve` \
             ({} files) + {on_static} on python3 http.server under {STATIC_SUB_PATH} ({} files)",
            files.len(),
            ON_STATIC_HOST.len(),
        ),
    })
}

/// The e2e files that run a second time on a static host (`python3 -m http.server`, the page
/// under [`STATIC_SUB_PATH`]), because what they test is what differs there:
/// * `offline`: the service worker's scope is the sub-path, and a host without the relay
///   (the Signed webhooks panel says so);
/// * `share-links`: a share link and its "back" link are built from the page's own address
///   (the other share tests, `share.test.mjs`, replay and refuse links the same on any host);
/// * `bench`: the benchmark's worker and wasm (`pkg-bench`), from their own relative URLs.
///
/// The page, its start module and its database worker loading from relative URLs under the
/// sub-path, and the full module's guest worker with the console's lazily loaded editor, are the
/// engines layer's subject: it runs the core path and a console query from this static host in
/// Chromium, Firefox and WebKit, so `page.test.mjs` and `console-editor.test.mjs` run once, here
/// on the project's server. The rest is the same on any host: no COOP/COEP on either (sahpool
/// needs none), the `<meta>` CSP holds on both (a violation is a console error, which fails
/// every file), and OPFS, tabs and workers belong to the origin, not to the server.
pub const ON_STATIC_HOST: &[&str] = &["offline.test.mjs", "share-links.test.mjs", "bench.test.mjs"];

/// Where each e2e file's TAP output stays, as `<host>-<file>.tap`.
const E2E_TAP: &str = "target/e2e-tap";

/// Started first, so that no worker is left running a long file while the others idle (a name
/// missing here only costs time). `isolation` leads: most of its time is foreign work waiting
/// for its deadline, which the others' browsers fill; its claim is causal (each delivery is
/// answered before the foreign work ends), so it holds on busy cores too.
const LONGEST_FIRST: &[&str] = &[
    "isolation.test.mjs",
    "crashlab.test.mjs",
    "share.test.mjs",
    "navigation.test.mjs",
    "playground-verdicts.test.mjs",
    "levels.test.mjs",
    "hooks.test.mjs",
    "playground-data.test.mjs",
    "playground-burst.test.mjs",
    "schemeends.test.mjs",
    "page.test.mjs",
];

const OWN: &str = "serve";
const STATIC: &str = "static";

fn named_in(file: &std::path::Path, names: &[&str]) -> bool {
    file.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| names.contains(&n))
}

/// How many e2e files run at once (`INBOX_LAB_E2E_WORKERS`, else 3: on 2 cores the pages wait
/// on timers and storage often enough that a third browser keeps both busy; five at once made
/// each file about twice as slow and the layer no faster).
fn e2e_workers() -> usize {
    std::env::var("INBOX_LAB_E2E_WORKERS")
        .ok()
        .and_then(|n| n.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(3)
}

struct E2eJob {
    file: PathBuf,
    on_static: bool,
}

struct E2eDone {
    name: String,
    host: &'static str,
    passed: u64,
    seconds: f64,
    failure: Option<String>,
}

/// Runs `jobs` on `workers` threads, each with its own `cargo xtask serve` server (its own relay,
/// so one file's pages never receive another's webhooks) and one `node --test` per file, which
/// starts its own Chromium with its own profile.
fn run_e2e_jobs(
    mut jobs: Vec<E2eJob>,
    workers: usize,
    static_url: &str,
    dist: &std::path::Path,
) -> Result<Vec<E2eDone>> {
    let rank = |job: &E2eJob| {
        LONGEST_FIRST
            .iter()
            .position(|n| named_in(&job.file, &[n]))
            .unwrap_or(LONGEST_FIRST.len())
    };
    jobs.sort_by_key(rank);
    let root = util::root();
    let per_worker = in_parallel(jobs, workers, |next| -> Result<Vec<E2eDone>> {
        let server = serve::start(dist, Some(&root), "127.0.0.1", 0, false)?;
        let own_url = server.reader_url();
        let mut done = Vec::new();
        while let Some(job) = next() {
            let url = if job.on_static { static_url } else { &own_url };
            done.push(node_test_file(&job, url, dist));
        }
        server.stop();
        Ok(done)
    })?;
    let mut all = Vec::new();
    for done in per_worker {
        all.extend(done?);
    }
    Ok(all)
}

/// Runs `worker` on `workers` threads and returns what each returned. A worker's `next()` hands
/// it the next of `jobs`, in their order, until none is left; the queue is locked only while one
/// is taken, not while it runs.
fn in_parallel<J: Send, R: Send>(
    jobs: Vec<J>,
    workers: usize,
    worker: impl Fn(&dyn Fn() -> Option<J>) -> R + Sync,
) -> Result<Vec<R>> {
    let queue = std::sync::Mutex::new(jobs.into_iter().rev().collect::<Vec<_>>());
    let next = || queue.lock().ok().and_then(|mut jobs| jobs.pop());
    std::thread::scope(|scope| {
        let threads: Vec<_> = (0..workers)
            .map(|_| scope.spawn(|| worker(&next)))
            .collect();
        threads
            .into_iter()
            .map(|t| t.join().map_err(|_| anyhow!("a worker thread panicked")))
            .collect()
    })
}

/// `node --test` on one file against the page at `url`: its output is shown when it fails.
fn node_test_file(job: &E2eJob, url: &str, dist: &std::path::Path) -> E2eDone {
    let root = util::root();
    let name = job
        .file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let host = if job.on_static { STATIC } else { OWN };
    let started = Instant::now();
    let mut cmd = node_test(url);
    cmd.arg(job.file.strip_prefix(&root).unwrap_or(&job.file))
        .env("INBOX_LAB_DIST", dist)
        .env("INBOX_LAB_BIN", native_bin())
        .stdin(std::process::Stdio::null());
    let result = cmd
        .output()
        .with_context(|| format!("could not start `{}`", util::show(&cmd)));
    let seconds = started.elapsed().as_secs_f64();
    let (passed, failure) = match result {
        Err(e) => (0, Some(format!("{e:#}"))),
        Ok(out) => {
            let text = util::strip_ansi(&format!(
                "{}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
            // Kept for reading each test's `duration_ms` afterwards (best effort).
            let _ = std::fs::write(root.join(E2E_TAP).join(format!("{host}-{name}.tap")), &text);
            let counts = tap_counts(&text);
            let failure = tap_failure(out.status, &counts);
            if failure.is_some() {
                println!("{text}");
            }
            (counts.pass, failure)
        }
    };
    say(format!(
        "e2e {name} on {host}: {passed} passed in {seconds:.1} s{}",
        if failure.is_some() { ", FAILED" } else { "" }
    ));
    E2eDone {
        name,
        host,
        passed,
        seconds,
        failure,
    }
}

/// The native `inbox-lab` that [`e2e`] builds, where Cargo puts it.
fn native_bin() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| util::root().join("target"), PathBuf::from)
        .join("debug/inbox-lab")
}

/// `node --test` against the page at `url`, reporting in TAP on stdout ([`tap_counts`]).
fn node_test(url: &str) -> Command {
    let mut cmd = util::cmd("node");
    let args = "--test --test-reporter=tap --test-reporter-destination=stdout";
    cmd.args(args.split(' '))
        .env("INBOX_LAB_URL", url)
        .env("CHROMIUM", CHROMIUM);
    cmd
}

/// Why a `node --test` run did not pass, or None.
fn tap_failure(status: std::process::ExitStatus, c: &TapCounts) -> Option<String> {
    if !status.success() || c.fail > 0 || c.cancelled > 0 {
        return Some(format!(
            "{status}: {} passed, {} failed, {} cancelled",
            c.pass, c.fail, c.cancelled
        ));
    }
    if !c.files_without_tests.is_empty() {
        return Some(format!(
            "registers no test() (node counts the file as one passing test): {}",
            c.files_without_tests.join(", ")
        ));
    }
    if c.pass == 0 {
        return Some("passed 0 tests (no `# pass N` summary with N > 0)".into());
    }
    None
}

/// What marks a test switch: the e2e tests start test-only modules from the source tree
/// (`www/db/opfs-refused.js`) and plant files themselves, and `?simulate=...` is gone. The
/// page's own texts say "simulated" (a simulated crash, clock): a word that goes on is not a
/// switch.
const TEST_SWITCHES: [&str; 3] = ["simulate", "testPlant", "opfs-refused"];

/// Every `file: word` of dist/ (the page a reader gets, its wasm included) that names a
/// test switch.
fn test_switches_in(dir: &std::path::Path) -> Result<Vec<String>> {
    let mut found = Vec::new();
    for path in util::files_under(dir, |_| true)? {
        let bytes = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
        for word in TEST_SWITCHES {
            let named = bytes.windows(word.len()).enumerate().any(|(at, w)| {
                let next = bytes.get(at + word.len()).copied().unwrap_or(b' ');
                w == word.as_bytes() && !(next.is_ascii_alphanumeric() || next == b'_')
            });
            if named {
                found.push(format!("{}: {word}", path.display()));
            }
        }
    }
    found.sort();
    Ok(found)
}

/// Where run 2 puts the page: the static server serves a parent folder.
const STATIC_SUB_PATH: &str = "/sub/path/inbox-lab/";

/// `python3 -m http.server` serving a folder in which `dist/` sits at [`STATIC_SUB_PATH`];
/// stopped when dropped.
struct StaticHost {
    child: std::process::Child,
    top: PathBuf,
    url: String,
}

impl StaticHost {
    fn start(dist: &std::path::Path) -> Result<StaticHost> {
        let top = util::root().join("target/e2e-static");
        let _ = std::fs::remove_dir_all(&top);
        let link = top.join(STATIC_SUB_PATH.trim_matches('/'));
        let parent = link.parent().context("the sub-path has a parent")?;
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
        std::os::unix::fs::symlink(dist, &link)
            .context("linking dist/ under the static server's folder")?;
        // A free port: the kernel picks one, then it is handed to Python.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .context("finding a free port")?
            .port();
        let child = Command::new("python3")
            .args(["-m", "http.server", "--bind", "127.0.0.1", "--directory"])
            .arg(&top)
            .arg(port.to_string())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .context("starting python3 -m http.server")?;
        let host = StaticHost {
            child,
            top,
            url: format!("http://127.0.0.1:{port}{STATIC_SUB_PATH}"),
        };
        let deadline = Instant::now() + std::time::Duration::from_secs(15);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if Instant::now() > deadline {
                bail!("python3 -m http.server did not start listening on port {port}");
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        Ok(host)
    }
}

impl Drop for StaticHost {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.top);
    }
}

fn e2e_test_files(dir: &std::path::Path) -> Result<Vec<PathBuf>> {
    util::files_under(dir, |p| p.to_string_lossy().ends_with(".test.mjs"))
}

// ---- engines ----------------------------------------------------------------------------------

/// The engines of the engine layer, as `INBOX_LAB_ENGINE` names them (tests/engines/engines.mjs).
const ENGINES: [&str; 3] = ["chromium", "firefox", "webkit"];

/// The page's core path in Chromium, Firefox ESR and WebKitGTK through WebDriver
/// (tests/engines): one `node --test` run per engine against the page served here, each
/// counted on its own. Every engine runs even after one fails; an engine whose browser cannot
/// start fails its run (the test file's `before` throws, so its tests are cancelled).
fn engines(site: &mut Site) -> Result<Outcome> {
    let root = util::root();
    let dir = root.join(ENGINES_DIR);
    let files = e2e_test_files(&dir)?;
    if files.is_empty() {
        bail!("no engine tests: {ENGINES_DIR} has no *.test.mjs files (this layer never passes empty)");
    }
    if !dir.join("node_modules").is_dir() {
        bail!("{ENGINES_DIR}/node_modules is missing: run `cargo xtask setup`");
    }

    // What a reader of a static host gets: dist/ on `python3 -m http.server`, under a
    // sub-path (issue: "`cargo xtask dist` followed by any static server ... in all three").
    site.ready()?;
    let dist = root.join(dist::DIST_DIR);
    let host = StaticHost::start(&dist)?;
    say(format!(
        "serving dist/ for the engine tests on `python3 -m http.server` at {}",
        host.url
    ));

    // The three at once, each with its own browser and driver (about a core each at most);
    // each one's output shown when it ends.
    let run = |engine: &str| -> Result<u64, String> {
        let mut cmd = node_test(&host.url);
        cmd.arg("--test-concurrency=1")
            .args(files.iter().map(|f| f.strip_prefix(&root).unwrap_or(f)))
            .env("INBOX_LAB_ENGINE", engine)
            .env("FIREFOX", FIREFOX);
        let out = run_tee(&mut cmd, false).map_err(|e| format!("{e:#}"))?;
        let c = tap_counts(&out.text());
        tap_failure(out.status, &c).map_or(Ok(c.pass), Err)
    };
    let (mut passed, mut per_engine, mut failures) = (0, Vec::new(), Vec::new());
    std::thread::scope(|scope| {
        let threads = ENGINES.map(|engine| (engine, scope.spawn(move || run(engine))));
        for (engine, t) in threads {
            match t.join().unwrap_or(Err("panicked".into())) {
                Ok(n) => {
                    passed += n;
                    per_engine.push(format!("{engine} {n}"));
                }
                Err(failure) => failures.push(format!("{engine} ({failure})")),
            }
        }
    });
    drop(host);
    if !failures.is_empty() {
        bail!("engines failed: {}", failures.join("; "));
    }
    Ok(Outcome {
        passed,
        note: format!(
            "WebDriver (selenium-webdriver): {}; WebKit on its memory fallback",
            per_engine.join(", ")
        ),
    })
}

// ---- parsing test runner output ---------------------------------------------------------------

#[derive(Debug, Default, PartialEq, Eq)]
struct LibtestCounts {
    passed: u64,
    failed: u64,
    /// How many `test result:` lines were seen (one per test binary / doc-test run).
    results: u64,
}

/// Sums libtest's `test result: ok. N passed; M failed; ...` lines (cargo test, and
/// wasm-bindgen-test-runner, which prints the same summary).
fn libtest_counts(text: &str) -> LibtestCounts {
    let mut counts = LibtestCounts::default();
    for line in text.lines() {
        let Some(at) = line.find("test result:") else {
            continue;
        };
        let summary = &line[at..];
        counts.results += 1;
        counts.passed += number_before(summary, " passed").unwrap_or(0);
        counts.failed += number_before(summary, " failed").unwrap_or(0);
    }
    counts
}

/// In "ok. 12 passed; 0 failed", `number_before(s, " passed")` is 12.
fn number_before(s: &str, word: &str) -> Option<u64> {
    let at = s.find(word)?;
    s[..at].split_whitespace().last()?.parse().ok()
}

#[derive(Debug, Default, PartialEq, Eq)]
struct TapCounts {
    pass: u64,
    fail: u64,
    cancelled: u64,
    /// Top-level tests named after a test file: files that registered no test() of their own.
    files_without_tests: Vec<String>,
}

/// Reads node's TAP summary (`# pass N`, `# fail N`, `# cancelled N`); the last one wins.
fn tap_counts(text: &str) -> TapCounts {
    let mut counts = TapCounts::default();
    for line in text.lines() {
        if let Some(name) = line.strip_prefix("# Subtest: ").map(str::trim_end) {
            if name.ends_with(".test.mjs") {
                counts.files_without_tests.push(name.to_string());
            }
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        let ["#", key, value] = words[..] else {
            continue;
        };
        let Ok(n) = value.parse::<u64>() else {
            continue;
        };
        match key {
            "pass" => counts.pass = n,
            "fail" => counts.fail = n,
            "cancelled" => counts.cancelled = n,
            _ => {}
        }
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_cargo_test_results() {
        let out = "\
running 3 tests
test a ... ok
test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s

     Running tests/flow.rs (target/debug/deps/flow-1)
test result: ok. 12 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.20s

   Doc-tests inbox_lab
test result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
";
        assert_eq!(
            libtest_counts(out),
            LibtestCounts {
                passed: 15,
                failed: 0,
                results: 3
            }
        );
    }

    #[test]
    fn counts_failures() {
        let out = "test result: FAILED. 2 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out";
        assert_eq!(
            libtest_counts(out),
            LibtestCounts {
                passed: 2,
                failed: 1,
                results: 1
            }
        );
    }

    #[test]
    fn no_summary_means_zero() {
        assert_eq!(libtest_counts("error: could not compile").passed, 0);
    }

    #[test]
    fn reads_tap_summary() {
        let out = "\
TAP version 13
# Subtest: page loads
ok 1 - page loads
1..1
# tests 4
# suites 1
# pass 3
# fail 1
# cancelled 0
# skipped 0
# todo 0
# duration_ms 1234.5
";
        assert_eq!(
            tap_counts(out),
            TapCounts {
                pass: 3,
                fail: 1,
                cancelled: 0,
                files_without_tests: vec![],
            }
        );
    }

    #[test]
    fn notices_files_without_tests() {
        let out = "\
TAP version 13
# Subtest: /repo/tests/e2e/empty.test.mjs
ok 1 - /repo/tests/e2e/empty.test.mjs
1..1
# pass 1
# fail 0
";
        let counts = tap_counts(out);
        assert_eq!(counts.pass, 1);
        assert_eq!(
            counts.files_without_tests,
            vec!["/repo/tests/e2e/empty.test.mjs".to_string()]
        );
    }

    /// A switch is found in any file, binary too; "simulated" (the page's own word) is not one.
    #[test]
    fn finds_test_switches_not_words_that_go_on() {
        let dir = std::env::temp_dir().join(format!("xtask-switches-{}", std::process::id()));
        let assets = dir.join("assets");
        std::fs::create_dir_all(&assets).unwrap();
        std::fs::write(dir.join("index.html"), "a simulated crash; simulated_crash").unwrap();
        std::fs::write(assets.join("w.js"), "get('simulate')").unwrap();
        std::fs::write(assets.join("m.wasm"), b"\0lab_testPlant\0").unwrap();
        let found = test_switches_in(&dir).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let names: Vec<&str> = found
            .iter()
            .map(|f| f.rsplit(['/', '\\']).next().unwrap())
            .collect();
        assert_eq!(names, ["m.wasm: testPlant", "w.js: simulate"]);
    }
}
