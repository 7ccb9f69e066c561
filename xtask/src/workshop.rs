//! `cargo xtask workshop`: the workshop's handler in Rust (`workshop/handler.rs`, or
//! `--handler FILE`), judged natively, then the page built with it and served.
//!
//! 1. The judge: `cargo run --features workshop -- judge --workshop`, the same judge and
//!    the same JSON line as `inbox-lab judge --handler FILE` (the article's cases, a fault
//!    after every statement, every race of 2 and 3 deliveries, the crash sweep in DELETE
//!    and WAL mode). The file is compiled into the crate (`build.rs` reads
//!    `INBOX_LAB_WORKSHOP`); a file that does not compile stops here with rustc's errors.
//! 2. Unless `--judge-only` (exit 0 correct, 1 broken): the page's two wasm modules with the
//!    feature `workshop` into `www/pkg` and `www/pkg-full`, `dist/`, and `cargo xtask serve`'s server, the
//!    handler listed as "workshop" in the race lab and the handler panel — also when the
//!    judge found it broken: watching it fail step by step is the point.

use std::path::{Path, PathBuf};

use anyhow::{bail, ensure, Context, Result};

use crate::util::{self, say};
use crate::{build, dist, serve};

/// The environment variable `build.rs` reads: the handler file, relative to the root.
pub const HANDLER_ENV: &str = "INBOX_LAB_WORKSHOP";

/// The starter a participant edits.
pub const STARTER: &str = "workshop/handler.rs";

#[derive(clap::Args)]
pub struct Options {
    /// The handler to judge (default: workshop/handler.rs).
    #[arg(long)]
    pub handler: Option<PathBuf>,
    /// 2 or 3 concurrent deliveries.
    #[arg(long)]
    pub deliveries: Option<String>,
    /// Judge only: exit 0 correct, 1 broken, serve nothing.
    #[arg(long)]
    pub judge_only: bool,
    #[arg(long)]
    pub dev: bool,
    #[command(flatten)]
    pub address: crate::Address,
}

/// What the judge said.
#[derive(Debug)]
pub struct Judged {
    /// The judge's JSON line.
    pub line: String,
    pub correct: bool,
}

pub fn run(options: &Options) -> Result<()> {
    let handler = handler_file(options.handler.as_deref())?;
    let judged = judge(&handler, options.deliveries.as_deref())?;
    println!("{}", judged.line);
    say(if judged.correct {
        "the workshop's handler is correct"
    } else {
        "the workshop's handler is broken: its first failure is in the line above"
    });
    if options.judge_only {
        ensure!(judged.correct, "the workshop's handler is broken");
        return Ok(());
    }
    // The page with it: the build script reads the same variable.
    std::env::set_var(HANDLER_ENV, &handler);
    build::page(options.dev, true)?;
    let bench = util::root().join(build::Module::Bench.out_dir());
    if !bench.join("inbox_lab_bg.wasm").is_file() {
        build::module(build::Module::Bench, options.dev, false, &bench)?;
    }
    let dist = util::root().join(dist::DIST_DIR);
    dist::assemble(&util::root(), &dist)?;
    let server = serve::start(
        &dist,
        None,
        &options.address.host,
        options.address.port,
        true,
    )?;
    println!(
        "Serving inbox-lab with the workshop's handler at {} (the race lab and \"Write your own handler\" list it as \"workshop\")",
        server.reader_url()
    );
    println!("{}", serve::READER_NOTE);
    server.wait();
    Ok(())
}

/// The handler file relative to the repository root (the starter when none is given); it
/// must exist.
pub fn handler_file(given: Option<&Path>) -> Result<PathBuf> {
    let root = util::root();
    let file = given.map_or_else(|| PathBuf::from(STARTER), Path::to_path_buf);
    let absolute = if file.is_absolute() {
        file.clone()
    } else {
        std::env::current_dir()
            .map(|d| d.join(&file))
            .ok()
            .filter(|p| p.is_file())
            .unwrap_or_else(|| root.join(&file))
    };
    if !absolute.is_file() {
        bail!("the workshop's handler {} does not exist", file.display());
    }
    Ok(absolute)
}

/// Judges the handler in `file` natively: `inbox-lab judge --workshop` built with it.
/// `Ok` with the verdict for a judged handler (exit 0 or 1 with a report); an error when it
/// does not compile or the judge could not run.
pub fn judge(file: &Path, deliveries: Option<&str>) -> Result<Judged> {
    let mut cmd = util::cargo();
    let args =
        "run --quiet --package inbox-lab --features workshop --bin inbox-lab -- judge --workshop";
    cmd.args(args.split(' ')).env(HANDLER_ENV, file);
    if let Some(d) = deliveries {
        cmd.args(["--deliveries", d]);
    }
    say(format!(
        "$ {HANDLER_ENV}={} {}",
        file.display(),
        util::show(&cmd)
    ));
    let out = cmd
        .stderr(std::process::Stdio::inherit())
        .output()
        .with_context(|| format!("could not start `{}`", util::show(&cmd)))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .rev()
        .find(|l| l.starts_with('{'))
        .unwrap_or("")
        .to_owned();
    let report = serde_json::from_str::<serde_json::Value>(&line).unwrap_or_default();
    let correct = match (out.status.code(), report["verdict"].as_str()) {
        (Some(0), Some("correct")) => true,
        (Some(1), Some("broken")) => false,
        (code, _) => bail!(
            "the judge did not judge the workshop's handler {} (exit {code:?}; it printed {line:?}): \
             see the compiler's or the judge's messages above",
            file.display()
        ),
    };
    Ok(Judged { line, correct })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The command's judge step on a deliberately broken handler (registers, commits, then
    /// credits in a second transaction): broken, for losing a credit to a fault, with the
    /// crash sweep run. Builds the crate with that file (a rebuild of `inbox-lab` alone).
    #[test]
    fn the_judge_step_reports_a_broken_handler_as_broken() {
        let file = handler_file(Some(Path::new(
            "tests/fixtures/workshop_two_transactions.rs",
        )))
        .expect("the fixture exists");
        let judged = judge(&file, Some("2")).expect("the judge runs");
        assert!(!judged.correct, "{}", judged.line);
        let report: serde_json::Value = serde_json::from_str(&judged.line).expect("JSON");
        assert_eq!(report["handler"], "workshop");
        assert_eq!(report["verdict"], "broken");
        assert!(
            report["faults"]["lost_credits"].as_u64() > Some(0),
            "{}",
            judged.line
        );
        assert!(
            report["crash"]["crash_points"].as_u64() > Some(0),
            "{}",
            judged.line
        );
    }

    #[test]
    fn a_missing_handler_file_is_refused_before_anything_is_built() {
        let err = handler_file(Some(Path::new("workshop/no-such-handler.rs"))).unwrap_err();
        assert!(err.to_string().contains("does not exist"), "{err}");
    }
}
