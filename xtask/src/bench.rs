//! `cargo xtask bench`: every benchmark in one run, side by side, on this machine.
//!
//! 1. **native**: `cargo bench --bench native` (benches/native.rs): the real apply path on
//!    rusqlite's bundled SQLite, on files under `target/bench/native/`.
//! 2. **python**: bench/python_bench.py: the article's `apply_credit` as written (a connection
//!    per call) and with one kept connection.
//! 3. **browser**: bench/run.mjs in the system Chromium, with a persistent profile under
//!    `target/bench/`: cold start, our build (www/panels/bench/benchworker.js) and the official
//!    `@sqlite.org/sqlite-wasm` build (bench/official-worker.mjs) per setting, interleaved, a
//!    burst of concurrent deliveries through the page's own worker, the bytes each side ships,
//!    and a profiled pass (where a commit's time goes).
//!
//! The browser part is served by the project's own server (`serve::start`, same CSP) from a
//! staged copy of the page in `target/bench/site/`, with the official build's files added
//! under `www/official/`, so nothing in the source tree changes.
//!
//! Prints the tables (Markdown) and writes the raw results to `target/bench/bench-<time>.json`
//! and `target/bench/latest.json`, the tables to `target/bench/latest.md`.

use crate::setup::{self, Scope, CHROMIUM};
use crate::util::{self, say};
use crate::{build, dist, serve};
use anyhow::{bail, Context, Result};
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The official build, pinned: the same SQLite version as `sqlite-wasm-rs` 0.6.3 (3.54.1).
pub const OFFICIAL_PACKAGE: &str = "@sqlite.org/sqlite-wasm";
pub const OFFICIAL_VERSION: &str = "3.54.1-build1";

/// The targets.
const TARGET_NATIVE_RATIO: f64 = 0.8;
const TARGET_OFFICIAL_RATIO: f64 = 1.5;
const TARGET_DUPLICATES_PER_S: f64 = 20_000.0;
const TARGET_BYTES_RATIO: f64 = 0.8;
const TARGET_COLD_START_MS: f64 = 250.0;
/// 10,000 different events through the page (issue 16), and no frame gap above this.
const TARGET_PAGE_MS: f64 = 10_000.0;
const TARGET_FRAME_GAP_MS: f64 = 100.0;

const SETTINGS: [&str; 3] = ["delete-full", "wal-full", "wal-normal"];

/// What to run; the defaults are the README's figures.
#[derive(Debug, Clone)]
pub struct Options {
    pub events: u32,
    pub rounds: u32,
    pub loads: u32,
    pub burst: u32,
    pub profile_events: u32,
    pub build: bool,
    /// Print the tables of an earlier run's JSON instead of running anything.
    pub report: Option<PathBuf>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            events: 2000,
            rounds: 3,
            loads: 7,
            burst: 1000,
            profile_events: 500,
            build: true,
            report: None,
        }
    }
}

pub fn run(options: &Options) -> Result<()> {
    if let Some(path) = &options.report {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let report: Value = serde_json::from_str(&text)
            .with_context(|| format!("{} is not a benchmark's JSON", path.display()))?;
        print!("{}", tables(&report));
        return Ok(());
    }
    let root = util::root();
    setup::run(Scope::Full).context("setup failed, so no benchmark ran")?;
    setup::npm_packages(&root.join("bench"), "bench")?;
    let out = root.join("target/bench");
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;

    // Our modules, release: the page's (its cold start is measured) and the benchmark
    // worker's (`--features bench`; it runs the real apply path). Built for the benchmark
    // alone (so nothing else rebuilding www/pkg meanwhile can change what is measured), or
    // with --no-build the ones in www/. The page is staged with them at once.
    let (pkg, pkg_bench) = if options.build {
        let pkg = out.join("pkg");
        build::module(build::Module::Page, false, &pkg)
            .context("building the page's module for the benchmark")?;
        let pkg_bench = out.join("pkg-bench");
        build::module(build::Module::Bench, false, &pkg_bench)
            .context("building the benchmark worker's module")?;
        (pkg, pkg_bench)
    } else {
        (root.join(build::OUT_DIR), root.join(build::BENCH_OUT_DIR))
    };
    let site = stage_site(&root, &pkg, &pkg_bench, &out.join("site"))?;
    say("==== bench: the native bench binary (cargo bench --no-run --bench native --features bench) ====");
    let native_bin = native_binary()?;

    let mut environment = environment(&root, options);
    say("==== bench: every engine, interleaved (headless Chromium, native, Python) ====");
    let browser = browser(&out, &site, &native_bin, options)?;
    environment["load_average_end"] = json!(load_average());
    let report = json!({
        "environment": environment,
        "browser": browser,
    });
    let tables = tables(&report);
    print!("{tables}");

    let stamp = util::output_of(Command::new("date").args(["-u", "+%Y%m%dT%H%M%SZ"]))
        .unwrap_or_else(|| "unknown-time".into());
    let text = serde_json::to_string_pretty(&report)?;
    for name in [format!("bench-{stamp}.json"), "latest.json".to_string()] {
        std::fs::write(out.join(&name), &text)
            .with_context(|| format!("writing target/bench/{name}"))?;
    }
    std::fs::write(out.join("latest.md"), &tables).context("writing target/bench/latest.md")?;
    say(format!(
        "raw results: target/bench/bench-{stamp}.json (and latest.json); tables: target/bench/latest.md"
    ));
    Ok(())
}

fn environment(root: &Path, options: &Options) -> Value {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into());
    let cmd_out = |program: &str, args: &[&str]| {
        util::output_of(Command::new(program).args(args).current_dir(root))
            .unwrap_or_else(|| "unknown".into())
    };
    json!({
        "date": cmd_out("date", &["-u", "+%Y-%m-%d %H:%M UTC"]),
        "cpu": cpu,
        "cpus": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
        "kernel": cmd_out("uname", &["-sr"]),
        "load_average_start": load_average(),
        "filesystem": cmd_out("stat", &["-f", "-c", "%T", "target"]),
        "chromium": cmd_out(CHROMIUM, &["--version"]),
        "rustc": cmd_out("rustc", &["--version"]),
        "node": cmd_out("node", &["--version"]),
        "python": cmd_out("python3", &["--version"]),
        "official_package": format!("{OFFICIAL_PACKAGE}@{OFFICIAL_VERSION}"),
        "our_build": if options.build {
            format!(
                "cargo profile {} (opt-level z, LTO, 1 codegen unit), wasm-opt {}, SQLite flags {}",
                build::RELEASE_PROFILE,
                build::WASM_OPT_LEVEL,
                build::SQLITE_FLAGS.join(" ")
            )
        } else {
            format!(
                "whatever {} and {} held (--no-build)",
                build::OUT_DIR,
                build::BENCH_OUT_DIR
            )
        },
        "events": options.events,
        "rounds": options.rounds,
        "cold_start_loads": options.loads,
        "burst": options.burst,
        "profile_events": options.profile_events,
    })
}

/// `/proc/loadavg`'s 1, 5 and 15 minute figures: other work on the machine shows here.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// Builds benches/native.rs with the `bench` profile and returns the executable's path, as
/// cargo reports it (`--message-format=json`).
fn native_binary() -> Result<PathBuf> {
    let mut cmd = util::cargo();
    cmd.args([
        "bench",
        "--no-run",
        "--package",
        "inbox-lab",
        "--bench",
        "native",
        "--features",
        "bench",
        "--message-format=json",
    ]);
    say(format!("$ {}", util::show(&cmd)));
    let out = cmd
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .with_context(|| format!("could not start `{}`", util::show(&cmd)))?;
    if !out.status.success() {
        bail!("`{}` failed ({})", util::show(&cmd), out.status);
    }
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == "native")
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .context("cargo built no executable for the `native` bench target")
}

/// Runs bench/run.mjs, which drives Chromium and, between the browser's runs, the native bench
/// binary and the Python runner, and returns its JSON.
fn browser(out: &Path, site: &Path, native_bin: &Path, options: &Options) -> Result<Value> {
    let profile = out.join(format!("profile-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&profile);
    std::fs::create_dir_all(&profile)?;
    let server = serve::start(site, "127.0.0.1", 0, false)?;
    // The cold start is measured on the built site, as deployed (with the caching of a static
    // host: see serve.rs); the rest of the benchmark on the staged source tree.
    let dist_server = serve::start(&site.join(dist::DIST_DIR), "127.0.0.1", 0, false)?;
    say(format!(
        "serving the staged page at {}, its dist/ at {} (profile {})",
        server.url(),
        dist_server.url(),
        profile.display()
    ));
    let mut cmd = util::cmd("node");
    cmd.arg("bench/run.mjs")
        .args(["--url", &server.url()])
        .args(["--cold-url", &dist_server.url()])
        .arg("--site")
        .arg(site)
        .arg("--profile")
        .arg(&profile)
        .arg("--native-bin")
        .arg(native_bin)
        .arg("--native-dir")
        .arg(out.join("native"))
        .arg("--python-dir")
        .arg(out.join("python"))
        .args(["--events", &options.events.to_string()])
        .args(["--rounds", &options.rounds.to_string()])
        .args(["--loads", &options.loads.to_string()])
        .args(["--burst", &options.burst.to_string()])
        .args(["--profile-events", &options.profile_events.to_string()])
        .args(["--chromium", CHROMIUM]);
    say(format!("$ {}", util::show(&cmd)));
    let result = cmd
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .with_context(|| format!("could not start `{}`", util::show(&cmd)));
    server.stop();
    dist_server.stop();
    let _ = std::fs::remove_dir_all(&profile);
    let result = result?;
    if !result.status.success() {
        bail!("`{}` failed ({})", util::show(&cmd), result.status);
    }
    serde_json::from_slice(&result.stdout).context("bench/run.mjs did not print one JSON document")
}

/// Copies the page (index.html, www/ with `pkg` and `pkg_bench` as our modules) into `site`
/// and adds the official build under `www/official/`: its ES module, its wasm, and our worker
/// around them.
fn stage_site(root: &Path, pkg: &Path, pkg_bench: &Path, site: &Path) -> Result<PathBuf> {
    for dir in [pkg, pkg_bench] {
        if !dir.join("inbox_lab_bg.wasm").is_file() {
            bail!(
                "{} holds no build: run `cargo xtask build` first",
                dir.display()
            );
        }
    }
    let _ = std::fs::remove_dir_all(site);
    std::fs::create_dir_all(site)?;
    std::fs::copy(root.join("index.html"), site.join("index.html"))?;
    copy_dir(&root.join("www"), &site.join("www"), &|p| {
        p.ends_with("pkg") || p.ends_with("pkg-bench")
    })?;
    copy_dir(pkg, &site.join("www/pkg"), &|_| false)?;
    copy_dir(pkg_bench, &site.join("www/pkg-bench"), &|_| false)?;
    let dist = root
        .join("bench/node_modules")
        .join(OFFICIAL_PACKAGE)
        .join("dist");
    let official = site.join("www/official");
    std::fs::create_dir_all(&official)?;
    for file in ["index.mjs", "sqlite3.wasm"] {
        std::fs::copy(dist.join(file), official.join(file)).with_context(|| {
            format!(
                "copying {} (is {OFFICIAL_PACKAGE}@{OFFICIAL_VERSION} installed in bench/?)",
                dist.join(file).display()
            )
        })?;
    }
    std::fs::copy(
        root.join("bench/official-worker.mjs"),
        official.join("worker.mjs"),
    )?;
    // The built site from these modules, for the cold start.
    dist::assemble_from(site, &site.join(dist::DIST_DIR))?;
    site.canonicalize()
        .with_context(|| format!("staging {}", site.display()))
}

/// Copies `from` into `to`, leaving out directories for which `skip` says so.
fn copy_dir(from: &Path, to: &Path, skip: &dyn Fn(&Path) -> bool) -> Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from).with_context(|| format!("reading {}", from.display()))? {
        let entry = entry?;
        let path = entry.path();
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            if !skip(&path) {
                copy_dir(&path, &target, skip)?;
            }
        } else {
            std::fs::copy(&path, &target).with_context(|| format!("copying {}", path.display()))?;
        }
    }
    Ok(())
}

// ---- the tables -------------------------------------------------------------------------------

fn num(v: &Value, path: &str) -> Option<f64> {
    path.split('.')
        .try_fold(v, |v, key| match key.parse::<usize>() {
            Ok(i) => v.get(i),
            Err(_) => v.get(key),
        })
        .and_then(Value::as_f64)
}

fn text<'a>(v: &'a Value, path: &str) -> &'a str {
    path.split('.')
        .try_fold(v, |v, key| v.get(key))
        .and_then(Value::as_str)
        .unwrap_or("?")
}

/// The result for `setting` among `results` (an array of RESULT objects).
fn find<'a>(results: &'a Value, engine: Option<&str>, setting: &str) -> Option<&'a Value> {
    results.as_array()?.iter().find(|r| {
        r.get("setting").and_then(Value::as_str) == Some(setting)
            && engine.is_none_or(|e| r.get("engine").and_then(Value::as_str) == Some(e))
    })
}

fn rate(v: Option<f64>) -> String {
    match v {
        Some(x) => group_digits(x.round() as i64),
        None => "–".into(),
    }
}

fn group_digits(n: i64) -> String {
    let digits = n.abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 {
        format!("-{out}")
    } else {
        out
    }
}

fn ms(v: Option<f64>) -> String {
    match v {
        Some(x) if x >= 100.0 => format!("{x:.0}"),
        Some(x) if x >= 10.0 => format!("{x:.1}"),
        Some(x) => format!("{x:.2}"),
        None => "–".into(),
    }
}

/// The browser's timer step if `result` was timed in the page (performance.now() is coarsened
/// outside cross-origin isolation); native and Python clocks are fine-grained.
fn browser_step(result: &Value) -> Option<f64> {
    match result.get("engine").and_then(Value::as_str) {
        Some("inbox-lab" | "official") => Some(BROWSER_TIMER_STEP_MS),
        _ => None,
    }
}

/// Chromium's `performance.now()` step outside a cross-origin-isolated page.
const BROWSER_TIMER_STEP_MS: f64 = 0.1;

/// A latency, or "< step" when it is below what the clock that took it can tell.
fn latency(v: Option<f64>, step: Option<f64>) -> String {
    match (v, step) {
        (Some(x), Some(step)) if x < step => format!("< {}", ms(Some(step))),
        _ => ms(v),
    }
}

fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    }
}

/// `0.93× ✔ (≥ 0.8)` or `0.61× ✘ (≥ 0.8)`.
fn verdict(value: Option<f64>, target: f64, at_least: bool, unit: &str) -> String {
    match value {
        Some(v) => {
            let met = if at_least { v >= target } else { v <= target };
            let sign = if at_least { "≥" } else { "≤" };
            let shown = if unit == "×" {
                format!("{v:.2}×")
            } else {
                format!("{}{unit}", rate(Some(v)))
            };
            let target = if unit == "×" {
                format!("{target}")
            } else {
                rate(Some(target))
            };
            format!(
                "{shown} {} (target {sign} {target}{})",
                if met { "met" } else { "MISSED" },
                if unit == "×" { "" } else { unit }
            )
        }
        None => "–".into(),
    }
}

fn label(setting: &str) -> &'static str {
    match setting {
        "delete-full" => "DELETE / FULL",
        "wal-full" => "WAL (exclusive) / FULL",
        "wal-normal" => "WAL (exclusive) / NORMAL",
        _ => "?",
    }
}

fn tables(r: &Value) -> String {
    let env = &r["environment"];
    let engines = &r["browser"]["engines"];
    let ours = &engines["ours"];
    let coalesced = &engines["coalesce"];
    let official = &engines["official"];
    let native = &engines["native"];
    let python_kept = &engines["python-kept"];
    let python_as_written = &engines["python-as-written"];
    let mut s = String::new();
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "### Apply throughput: {} distinct events, one transaction each (median of {} rounds)\n",
        env["events"], env["rounds"]
    );
    let _ = writeln!(
        s,
        "| setting | ours, browser OPFS, no coalescing (the page before) | ours + write coalescing (as the page runs) | official WASM, browser OPFS | native rusqlite | Python, kept connection | Python as written | ours (as the page runs) / native | ours (as the page runs) / official |"
    );
    let _ = writeln!(s, "|---|---:|---:|---:|---:|---:|---:|---|---|");
    for setting in SETTINGS {
        let o = find(ours, None, setting);
        let c = find(coalesced, None, setting);
        let f = find(official, None, setting);
        let n = find(native, None, setting);
        let pk = find(python_kept, None, setting);
        let pw = find(python_as_written, None, setting);
        let cell = |v: Option<&Value>| match v {
            Some(v) => {
                let lat = |key: &str| latency(num(v, key), browser_step(v));
                format!(
                    "{}/s<br>p50 {} · p99 {} ms",
                    rate(num(v, "apply.events_per_s")),
                    lat("apply.p50_ms"),
                    lat("apply.p99_ms")
                )
            }
            None => "–".into(),
        };
        let as_written = match pw {
            Some(v) => format!(
                "{}/s ({} locking)",
                rate(num(v, "apply.events_per_s")),
                text(v, "settings.locking_mode")
            ),
            None => "–".into(),
        };
        let o_rate = o.and_then(|v| num(v, "apply.events_per_s"));
        let c_rate = c.and_then(|v| num(v, "apply.events_per_s"));
        let n_rate = n.and_then(|v| num(v, "apply.events_per_s"));
        let f_rate = f.and_then(|v| num(v, "apply.events_per_s"));
        let uncoalesced_ratio = |other: Option<f64>| match ratio(o_rate, other) {
            Some(x) => format!("<br>no coalescing: {x:.2}×"),
            None => String::new(),
        };
        let writes = c
            .and_then(|v| Some((num(v, "writes.writes_in")?, num(v, "writes.writes_out")?)))
            .map(|(i, o)| format!("<br>writes/event {i:.1} → {o:.1}"))
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "| {} | {} | {}{} | {} | {} | {} | {} | {}{} | {}{} |",
            label(setting),
            cell(o),
            cell(c),
            writes,
            cell(f),
            cell(n),
            cell(pk),
            as_written,
            verdict(ratio(c_rate, n_rate), TARGET_NATIVE_RATIO, true, "×"),
            uncoalesced_ratio(n_rate),
            verdict(ratio(c_rate, f_rate), TARGET_OFFICIAL_RATIO, true, "×"),
            uncoalesced_ratio(f_rate),
        );
    }

    let _ = writeln!(
        s,
        "\n### Duplicate path: the same events delivered again (each answered from the stored receipt)\n"
    );
    let _ = writeln!(
        s,
        "| setting | ours, no coalescing (the page before) | ours + write coalescing (as the page runs) | official WASM | native rusqlite | Python, kept connection | Python as written | ours (as the page runs): target ≥ 20,000/s |"
    );
    let _ = writeln!(s, "|---|---:|---:|---:|---:|---:|---:|---|");
    for setting in SETTINGS {
        let o = find(ours, None, setting);
        let cell = |v: Option<&Value>| match v {
            Some(v) => {
                let lat = |key: &str| latency(num(v, key), browser_step(v));
                format!(
                    "{}/s<br>p50 {} · p99 {} ms",
                    rate(num(v, "duplicate.events_per_s")),
                    lat("duplicate.p50_ms"),
                    lat("duplicate.p99_ms")
                )
            }
            None => "–".into(),
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            label(setting),
            cell(o),
            cell(find(coalesced, None, setting)),
            cell(find(official, None, setting)),
            cell(find(native, None, setting)),
            cell(find(python_kept, None, setting)),
            find(python_as_written, None, setting)
                .map(|v| format!("{}/s", rate(num(v, "duplicate.events_per_s"))))
                .unwrap_or_else(|| "–".into()),
            verdict(
                find(coalesced, None, setting).and_then(|v| num(v, "duplicate.events_per_s")),
                TARGET_DUPLICATES_PER_S,
                true,
                "/s"
            ),
        );
    }

    let burst = &r["browser"]["burst"];
    let _ = writeln!(
        s,
        "\n### Burst: {} concurrent deliveries of one event through the page's worker (`inboxLab.deliver`, DELETE / FULL)\n",
        rate(num(burst, "events"))
    );
    let _ = writeln!(
        s,
        "{}/s in all ({} ms for the burst; 1 applied, {} duplicates); answered after p50 {} ms, p99 {} ms (median of 3 bursts)",
        rate(num(burst, "events_per_s")),
        ms(num(burst, "total_ms")),
        rate(num(burst, "duplicates")),
        ms(num(burst, "p50_ms")),
        ms(num(burst, "p99_ms"))
    );

    for (journal, mode) in [
        (
            "wal",
            "WAL, exclusive locking, synchronous FULL — every commit flushed",
        ),
        ("delete", "a rollback journal (DELETE), synchronous FULL"),
    ] {
        let page = &r["browser"]["through_page"][journal];
        // Which one the page opens by default: the run says (`query`); runs
        // before 2026-12-03 20:00 opened in DELETE mode and asked for WAL.
        let query = page["query"].as_str().unwrap_or(match journal {
            "delete" => "",
            _ => "?journal=wal",
        });
        let why = if query.is_empty() {
            format!("as the page opens by default: {mode}")
        } else {
            format!("with `{query}`: {mode}")
        };
        let _ = writeln!(
            s,
            "\n### {} different events through the page, {why} (the Burst panel's \"N different events\" on OPFS, each its own durable transaction)\n",
            rate(num(page, "events"))
        );
        let _ = writeln!(
            s,
            "press → result drawn: {} ({}/s; the burst's own figure {} ms); longest gap between two frames: {} ({} gaps over 100 ms in {} frames); the accounts table redrawn {} times while it ran. The status line said: “{}” The page said: “{}” “{}”",
            verdict(num(page, "ms"), TARGET_PAGE_MS, false, " ms"),
            rate(ratio(num(page, "events"), num(page, "ms").map(|v| v / 1000.0))),
            rate(num(page, "burst_ms")),
            verdict(
                num(page, "longest_frame_gap_ms"),
                TARGET_FRAME_GAP_MS,
                false,
                " ms"
            ),
            rate(num(page, "frame_gaps_over_100ms")),
            rate(num(page, "frames")),
            rate(num(page, "table_redraws")),
            text(page, "stack"),
            text(page, "summary"),
            text(page, "balance_line"),
        );
    }

    let cold = &r["browser"]["cold_start"];
    let _ = writeln!(
        s,
        "\n### Cold start: navigation → `inboxLab.ready` (wasm fetched and compiled, OPFS pool installed, schema checked)\n"
    );
    let loads: Vec<String> = cold["loads_ms"]
        .as_array()
        .map(|a| a.iter().map(|v| ms(v.as_f64())).collect())
        .unwrap_or_default();
    let _ = writeln!(
        s,
        "on dist/, cached as a static host does (assets `immutable`, index.html `no-cache`): \
         first load (empty cache) {} ms; cached loads (HTTP cache and the service worker): \
         median of {} {} ms — {} (each load: {} ms)",
        ms(num(cold, "first_ms")),
        loads.len().saturating_sub(1),
        ms(num(cold, "median_ms")),
        verdict(num(cold, "median_ms"), TARGET_COLD_START_MS, false, " ms"),
        loads.join(", ")
    );

    let sizes = &r["browser"]["sizes"];
    let _ = writeln!(s, "\n### Bytes shipped (gzip -9)\n");
    let _ = writeln!(s, "| | wasm | JS and the rest | total raw | total gzip |");
    let _ = writeln!(s, "|---|---:|---:|---:|---:|");
    for (name, key) in [
        (
            "ours, engine: inbox_lab_bg.wasm + inbox_lab.js (its glue)",
            "ours",
        ),
        (
            "official, engine: sqlite3.wasm + index.mjs (loader and JS API)",
            "official",
        ),
        ("ours + www/worker.js + www/client.js", "ours_with_worker"),
        (
            "ours, the whole page: HTML, CSS, every module, wasm",
            "ours_page",
        ),
    ] {
        let g = &sizes[key];
        let kb = |v: Option<f64>| v.map_or("–".into(), |b| format!("{:.0} KB", b / 1024.0));
        let js_raw = ratio_sub(num(g, "raw"), num(g, "wasm_raw"));
        let js_gz = ratio_sub(num(g, "gzip"), num(g, "wasm_gzip"));
        let _ = writeln!(
            s,
            "| {name} | {} raw, {} gz | {} raw, {} gz | {} | {} |",
            kb(num(g, "wasm_raw")),
            kb(num(g, "wasm_gzip")),
            kb(js_raw),
            kb(js_gz),
            kb(num(g, "raw")),
            kb(num(g, "gzip")),
        );
    }
    let _ = writeln!(
        s,
        "\nengines, ours / official, gzip: {} (with our worker and client: {:.2}×)",
        verdict(
            ratio(num(sizes, "ours.gzip"), num(sizes, "official.gzip")),
            TARGET_BYTES_RATIO,
            false,
            "×"
        ),
        ratio(
            num(sizes, "ours_with_worker.gzip"),
            num(sizes, "official.gzip")
        )
        .unwrap_or(0.0)
    );

    let _ = writeln!(
        s,
        "\n### Where a new event's time goes (profiled pass, {} events, per event)\n",
        env["profile_events"]
    );
    let _ = writeln!(
        s,
        "| setting | where | per event | sync (flush) | write | read | open/close/delete | the rest (SQLite + Rust) | flush / total: the distance to the limit (one flush per durable commit = 100%) |"
    );
    let _ = writeln!(s, "|---|---|---:|---:|---:|---:|---:|---:|---:|");
    for setting in SETTINGS {
        for (where_, profiles) in [
            ("browser", &r["browser"]["profiles"]["browser"]),
            ("native", &r["browser"]["profiles"]["native"]),
        ] {
            let Some(p) = find(profiles, None, setting) else {
                continue;
            };
            let events = num(p, "events").unwrap_or(1.0).max(1.0);
            let rows = p["rows"].as_array().cloned().unwrap_or_default();
            let sum = |ops: &[&str]| -> (f64, f64) {
                rows.iter()
                    .filter(|row| ops.contains(&row["op"].as_str().unwrap_or("")))
                    .fold((0.0, 0.0), |(c, t), row| {
                        (
                            c + row["calls"].as_f64().unwrap_or(0.0),
                            t + row["total_ms"].as_f64().unwrap_or(0.0),
                        )
                    })
            };
            let total = num(p, "total_ms").unwrap_or(0.0);
            let parts = [
                sum(&["sync"]),
                sum(&["write"]),
                sum(&["read", "size"]),
                sum(&["open", "close", "delete", "truncate"]),
            ];
            let storage: f64 = parts.iter().map(|(_, t)| t).sum();
            let cell = |(calls, t): (f64, f64)| {
                format!("{} ms ({:.1} calls)", ms(Some(t / events)), calls / events)
            };
            // A durable commit cannot be faster than its flush: the share of the
            // time spent flushing says how far the rest is from that limit
            // (a setting that does not flush every commit has no such limit).
            let flush_share = if parts[0].0 > 0.0 && total > 0.0 {
                format!("{:.0}%", 100.0 * parts[0].1 / total)
            } else {
                "– (commits not flushed)".to_owned()
            };
            let _ = writeln!(
                s,
                "| {} | {where_} | {} ms | {} | {} | {} | {} | {} ms | {flush_share} |",
                label(setting),
                ms(Some(total / events)),
                cell(parts[0]),
                cell(parts[1]),
                cell(parts[2]),
                cell(parts[3]),
                ms(Some((total - storage) / events)),
            );
        }
    }

    let settings = find(ours, None, "delete-full").map(|v| &v["settings"]);
    let _ = writeln!(
        s,
        "\n### Environment\n\nOur module: {}.\n\n{}, {} CPUs (load average {} at the start, {} at the end); {}; filesystem {}; {}; {}; {}; {}; {}.\nSQLite: ours {} (sqlite-wasm-rs), official {} ({}), native {} (rusqlite bundled), Python {}. Page size {} everywhere; {}; timer step in the page {} ms.\n",
        text(env, "our_build"),
        text(env, "cpu"),
        env["cpus"],
        text(env, "load_average_start"),
        text(env, "load_average_end"),
        text(env, "kernel"),
        text(env, "filesystem"),
        text(env, "chromium"),
        text(env, "rustc"),
        format_args!("Node.js {}", text(env, "node")),
        text(env, "python"),
        text(env, "date"),
        settings.map_or("?", |v| text(v, "sqlite_version")),
        find(official, None, "delete-full").map_or("?", |v| text(v, "settings.sqlite_version")),
        text(env, "official_package"),
        find(native, None, "delete-full").map_or("?", |v| text(v, "settings.sqlite_version")),
        find(python_kept, None, "delete-full").map_or("?", |v| text(v, "settings.sqlite_version")),
        settings.and_then(|v| num(v, "page_size")).unwrap_or(0.0),
        text(&r["browser"]["environment"], "user_agent"),
        ms(num(ours, "0.timer_resolution_ms")),
    );
    s
}

fn ratio_sub(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    Some(a? - b?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_numbers() {
        assert_eq!(group_digits(1_234_567), "1,234,567");
        assert_eq!(group_digits(999), "999");
        assert_eq!(ms(Some(0.123)), "0.12");
        assert_eq!(ms(Some(12.34)), "12.3");
        assert_eq!(
            verdict(Some(0.91), 0.8, true, "×"),
            "0.91× met (target ≥ 0.8)"
        );
        assert_eq!(
            verdict(Some(300.0), 250.0, false, " ms"),
            "300 ms MISSED (target ≤ 250 ms)"
        );
    }

    #[test]
    fn finds_results_by_setting_and_engine() {
        let results = json!([
            {"engine": "python-kept", "setting": "wal-full", "apply": {"events_per_s": 5.0}},
            {"engine": "python-as-written", "setting": "wal-full", "apply": {"events_per_s": 2.0}},
        ]);
        let r = find(&results, Some("python-as-written"), "wal-full").unwrap();
        assert_eq!(num(r, "apply.events_per_s"), Some(2.0));
        assert!(find(&results, None, "delete-full").is_none());
    }
}
