//! Build tooling for inbox-lab, run as `cargo xtask <command>` (alias in `.cargo/config.toml`);
//! `cargo xtask help` lists the commands and `cargo xtask help <command>` their options.

mod bench;
mod build;
mod crashlab;
mod deps;
mod dist;
mod doc_paths;
mod serve;
mod setup;
mod size;
mod test;
mod util;
mod workshop;

use anyhow::Result;
use clap::{Args, Parser};
use std::path::PathBuf;
use std::process::ExitCode;

/// Build tooling for inbox-lab (more in xtask/README-setup.md and docs/).
#[derive(Parser)]
#[command(bin_name = "cargo xtask")]
enum Command {
    /// Install what is missing (xtask/README-setup.md).
    Setup,
    /// The wasm modules: the page's start module into www/pkg and its full module into
    /// www/pkg-full, the benchmark worker's (bench/) into www/pkg-bench.
    Build {
        /// A debug build, not release.
        #[arg(long)]
        dev: bool,
    },
    /// The deployable site, dist/: any static host, any sub-path (docs/hosting.md).
    Dist {
        #[arg(long)]
        dev: bool,
    },
    /// Build dist/ and serve it, relaying POST /hooks/{source} to the open page
    /// (docs/webhooks.md).
    Serve {
        #[command(flatten)]
        address: Address,
        #[arg(long)]
        dev: bool,
        /// Serve the dist/ that is there.
        #[arg(long = "no-build", action = clap::ArgAction::SetFalse)]
        build: bool,
        /// Serve another directory.
        #[arg(long)]
        root: Option<PathBuf>,
        /// The source's www/ under /www/ too, as the e2e layer does.
        #[arg(long)]
        with_source: bool,
    },
    /// Every test layer: lint, native, browser, firefox, e2e, engines (docs/testing.md).
    Test {
        /// Only these layers (repeatable).
        #[arg(long, value_enum)]
        only: Vec<test::Layer>,
        /// The layers the changes since main touch (xtask/src/test/changed.rs).
        #[arg(long)]
        changed: bool,
    },
    /// Every benchmark side by side: prints the tables, writes target/bench/latest.{json,md}
    /// (bench/RESULTS.md).
    Bench(bench::Options),
    /// The crash lab's sweep on real OPFS in headless Chromium; exit 1 on any partial or lost
    /// commit (--control: unless partials are found) (docs/crash.md).
    CrashLab(crashlab::Options),
    /// Judge the workshop's handler in Rust (workshop/handler.rs, or --handler FILE) natively, then serve
    /// the page built with it (--judge-only: exit 0 correct, 1 broken, serve nothing).
    Workshop(workshop::Options),
}

/// `--host H` and `--port N` (0: any free port).
#[derive(Args)]
pub struct Address {
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    #[arg(long, default_value_t = 8080)]
    pub port: u16,
}

fn main() -> ExitCode {
    util::started();
    match run(Command::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(command: Command) -> Result<()> {
    match command {
        Command::Setup => setup::run(setup::Scope::Full),
        Command::Build { dev } => build::run(dev),
        Command::Dist { dev } => dist::run(dev),
        Command::Serve {
            address,
            dev,
            build,
            root,
            with_source,
        } => {
            if build {
                dist::run(dev)?;
            }
            let root = root.unwrap_or_else(|| util::root().join(dist::DIST_DIR));
            let source = with_source.then(util::root);
            let server = serve::start(&root, source.as_deref(), &address.host, address.port, true)?;
            println!("Serving inbox-lab at {}", server.reader_url());
            println!("{}", serve::READER_NOTE);
            server.wait();
            Ok(())
        }
        Command::Test { only, changed } => test::run(&only, changed),
        Command::Bench(options) => bench::run(&options),
        Command::CrashLab(options) => crashlab::run(&options),
        Command::Workshop(options) => workshop::run(&options),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_commands_are_well_formed() {
        Command::command().debug_assert();
    }

    #[test]
    fn parses_options() {
        let parse = |s: &str| Command::try_parse_from(s.split_whitespace());
        let Ok(Command::Serve {
            address,
            dev,
            build,
            ..
        }) = parse("xtask serve --port 0 --host=0.0.0.0 --dev --no-build")
        else {
            panic!("serve did not parse");
        };
        assert_eq!(
            (address.host.as_str(), address.port, dev, build),
            ("0.0.0.0", 0, true, false)
        );
        let Ok(Command::Serve { address, build, .. }) = parse("xtask serve") else {
            panic!("serve did not parse");
        };
        assert_eq!(
            (address.host.as_str(), address.port, build),
            ("127.0.0.1", 8080, true)
        );
        let layers = "xtask test --only lint --only=e2e --only firefox --only engines --only native --only browser";
        let Ok(Command::Test { only, .. }) = parse(layers) else {
            panic!("test did not parse");
        };
        use test::Layer::{Browser, E2e, Engines, Firefox, Lint, Native};
        assert_eq!(only, [Lint, E2e, Firefox, Engines, Native, Browser]);
        let Ok(Command::Bench(options)) = parse("xtask bench --events 300") else {
            panic!("bench did not parse");
        };
        assert_eq!(
            (options.events, options.rounds, options.build),
            (300, 3, true)
        );
        for bad in [
            "xtask serve --port",
            "xtask serve --bogus",
            "xtask test --only unit",
            "xtask bench --events 0",
        ] {
            assert!(parse(bad).is_err(), "{bad} was accepted");
        }
    }
}
