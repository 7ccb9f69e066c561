//! `cargo xtask crash-lab`: the crash lab's sweep on real OPFS, in headless Chromium.
//!
//! Builds the page (unless `--no-build`), serves it, and for each journal mode runs
//! `tests/e2e/crashlab-sweep.mjs`, which drives the page's "Crash lab" panel: a worker is
//! stopped at every storage operation of the workload, terminated, and a new worker reopens
//! the database from OPFS and checks what survived (see
//! `www/panels/crash-lab/crashdriver.js`). Prints, per mode, the same summary line as the
//! native `inbox-lab crash-lab`:
//!
//! ```text
//! {"mode":"delete","crash_points":11,"atomic":11,"partial":0,"lost_acknowledged":0}
//! ```
//!
//! Fails on any partial or lost-acknowledged crash point, or a sweep with no crash points.
//! With `--control` (recovery through a lock check that always answers "held", as OPFS
//! storage did before sqlite-wasm-vfs 0.3) it is the other way round: it fails unless the
//! sweep finds partial commits. The control only applies to DELETE mode (WAL recovery does
//! not ask), so `--control` sweeps DELETE unless a mode is given.

use crate::setup::CHROMIUM;
use crate::util::{self, say};
use crate::{build, serve};
use anyhow::{bail, Context, Result};
use serde_json::Value;

/// The node script that drives the panel (in `tests/e2e/`, next to playwright-core).
const SCRIPT: &str = "tests/e2e/crashlab-sweep.mjs";

#[derive(Debug, Clone, clap::Args)]
pub struct Options {
    /// `delete` and/or `wal` (repeatable); none means both (only `delete` with `--control`).
    #[arg(long = "mode")]
    pub modes: Vec<String>,
    /// 1 (one apply) or 3 (a burst).
    #[arg(long, default_value_t = 1)]
    pub events: u32,
    /// The control run: a stack without the guarantee, whose partials must be found.
    #[arg(long)]
    pub control: bool,
    /// Use the www/pkg and www/pkg-full that are there.
    #[arg(long = "no-build", action = clap::ArgAction::SetFalse)]
    pub build: bool,
    #[arg(long)]
    pub dev: bool,
}

pub fn run(options: &Options) -> Result<()> {
    let root = util::root();
    let modes: Vec<String> = if !options.modes.is_empty() {
        options.modes.clone()
    } else if options.control {
        vec!["delete".into()]
    } else {
        vec!["delete".into(), "wal".into()]
    };
    if let Some(mode) = modes.iter().find(|m| *m != "delete" && *m != "wal") {
        bail!("--mode {mode:?}: expected delete or wal");
    }
    if options.events != 1 && options.events != 3 {
        bail!(
            "--events {}: the page sweeps one event or a burst of 3",
            options.events
        );
    }
    if !root.join("tests/e2e/node_modules").is_dir() {
        bail!("tests/e2e/node_modules is missing: run `cargo xtask setup`");
    }
    if options.build {
        build::page(options.dev, false).context("building the page for the crash lab")?;
    }
    let server = serve::start(&root, None, "127.0.0.1", 0, false)?;
    say(format!("serving the page at {}", server.url()));
    let mut failures = Vec::new();
    for mode in &modes {
        match sweep(&server.url(), mode, options) {
            Ok((line, summary)) => {
                println!("{line}"); // as printed, keys in the native order
                if let Some(why) = judge(&summary, options.control) {
                    failures.push(format!("{mode}: {why}"));
                }
            }
            Err(e) => failures.push(format!("{mode}: {e:#}")),
        }
    }
    server.stop();
    if !failures.is_empty() {
        bail!("crash lab: {}", failures.join("; "));
    }
    Ok(())
}

/// Runs one sweep; returns its summary line, and parsed.
fn sweep(url: &str, mode: &str, options: &Options) -> Result<(String, Value)> {
    let mut cmd = util::cmd("node");
    cmd.arg(SCRIPT)
        .args(["--mode", mode, "--events", &options.events.to_string()])
        .env("INBOX_LAB_URL", url)
        .env("CHROMIUM", CHROMIUM);
    if options.control {
        cmd.arg("--control");
    }
    // Its stderr, the table, is shown; its stdout ends with the summary line.
    let stdout = util::stdout_of(&mut cmd)?;
    let line = stdout
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with('{'))
        .with_context(|| format!("{SCRIPT} printed no summary line"))?;
    let summary =
        serde_json::from_str(line.trim()).with_context(|| format!("not a JSON summary: {line}"))?;
    Ok((line.trim().to_owned(), summary))
}

/// Why a summary fails, or `None` when it passes.
fn judge(summary: &Value, control: bool) -> Option<String> {
    let count = |key: &str| summary[key].as_u64();
    let (Some(points), Some(atomic), Some(partial), Some(lost)) = (
        count("crash_points"),
        count("atomic"),
        count("partial"),
        count("lost_acknowledged"),
    ) else {
        return Some(format!("malformed summary {summary}"));
    };
    if points == 0 {
        return Some("no crash points: the workload did no storage operation".into());
    }
    if atomic + partial + lost != points {
        return Some(format!("the counts do not add up: {summary}"));
    }
    if control {
        (partial == 0).then(|| {
            "the control found no partial commit: the lab cannot see the bug it exists to catch"
                .into()
        })
    } else {
        (partial > 0 || lost > 0).then(|| format!("{partial} partial, {lost} lost acknowledged"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn summary(points: u64, atomic: u64, partial: u64, lost: u64) -> Value {
        json!({"mode": "delete", "crash_points": points, "atomic": atomic,
               "partial": partial, "lost_acknowledged": lost})
    }

    #[test]
    fn a_clean_sweep_passes_and_a_partial_one_fails() {
        assert_eq!(judge(&summary(35, 35, 0, 0), false), None);
        assert!(judge(&summary(35, 30, 5, 0), false).is_some());
        assert!(judge(&summary(35, 34, 0, 1), false).is_some());
        assert!(judge(&summary(0, 0, 0, 0), false).is_some());
    }

    #[test]
    fn the_control_passes_only_when_it_is_caught() {
        assert_eq!(judge(&summary(35, 30, 5, 0), true), None);
        assert!(judge(&summary(35, 35, 0, 0), true).is_some());
    }

    #[test]
    fn malformed_summaries_fail() {
        assert!(judge(&json!({"mode": "delete"}), false).is_some());
        assert!(judge(&summary(35, 30, 0, 0), false).is_some());
    }
}
