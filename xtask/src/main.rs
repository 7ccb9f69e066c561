//! Build tooling for inbox-lab, run as `cargo xtask <command>` (alias in `.cargo/config.toml`).

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

use anyhow::{bail, Context, Result};
use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "\
cargo xtask <command> [options]      (more in xtask/README-setup.md and docs/)

commands:
  setup                         install what is missing (xtask/README-setup.md)
  build [--dev]                 the wasm modules: the page's start module into www/pkg and its
                                full module into www/pkg-full, the benchmark worker's (bench/)
                                into www/pkg-bench (release unless --dev)
  dist [--dev]                  the deployable site, dist/: any static host, any sub-path
                                (docs/hosting.md)
  serve [--port N] [--host H] [--dev] [--no-build] [--root DIR] [--with-source]
                                build dist/ and serve it at http://127.0.0.1:8080/ (--port 0:
                                a free port; --no-build: the dist/ that is there; --root DIR:
                                another directory; --with-source: the source's www/ under
                                /www/ too, as the e2e layer does), relaying POST
                                /hooks/{source} to the open page (docs/webhooks.md)
  test [--only LAYER]... [--changed]
                                every test layer: lint, native, browser, firefox, e2e, engines
                                (--only: these, repeatable; --changed: those the changes since
                                main touch, xtask/src/test/changed.rs) (docs/testing.md)
  bench [--events N] [--rounds N] [--loads N] [--burst N] [--profile-events N] [--no-build]
                                every benchmark side by side: prints the tables, writes
                                target/bench/latest.{json,md} (bench/RESULTS.md)
  bench --report FILE           the tables of an earlier run's JSON
  crash-lab [--mode delete|wal]... [--events 1|3] [--control] [--no-build] [--dev]
                                the crash lab's sweep on real OPFS in headless Chromium; exit 1
                                on any partial or lost commit (--control: unless partials are
                                found) (docs/crash.md)
  workshop [--handler FILE] [--deliveries 2|3] [--judge-only] [--port N] [--host H] [--dev]
                                judge the workshop's handler in Rust (workshop/handler.rs, or
                                FILE) natively, then serve the page built with it
                                (--judge-only: exit 0 correct, 1 broken, serve nothing)
  help                          this text
";

fn main() -> ExitCode {
    util::started();
    match run(std::env::args().skip(1).collect()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: Vec<String>) -> Result<()> {
    let mut args = Args { rest: args };
    let Some(command) = args.next_positional() else {
        eprint!("{USAGE}");
        bail!("no command given");
    };
    match command.as_str() {
        "setup" => {
            args.finish()?;
            setup::run(setup::Scope::Full)
        }
        "build" => {
            let dev = args.flag("--dev");
            args.finish()?;
            build::run(dev)
        }
        "dist" => {
            let dev = args.flag("--dev");
            args.finish()?;
            dist::run(dev)
        }
        "serve" => {
            let (host, port) = args.address()?;
            let dev = args.flag("--dev");
            let no_build = args.flag("--no-build");
            let root = args.value("--root")?.map(PathBuf::from);
            let root = root.unwrap_or_else(|| util::root().join(dist::DIST_DIR));
            let with_source = args.flag("--with-source");
            args.finish()?;
            if !no_build {
                dist::run(dev)?;
            }
            let source = with_source.then(util::root);
            let server = serve::start(&root, source.as_deref(), &host, port, true)?;
            println!("Serving inbox-lab at {}", server.reader_url());
            println!("{}", serve::READER_NOTE);
            server.wait();
            Ok(())
        }
        "test" => {
            let mut only = Vec::new();
            while let Some(layer) = args.value("--only")? {
                only.push(test::Layer::parse(&layer)?);
            }
            let changed = args.flag("--changed");
            args.finish()?;
            test::run(&only, changed)
        }
        "bench" => {
            let mut options = bench::Options::default();
            for (name, field) in [
                ("--events", &mut options.events),
                ("--rounds", &mut options.rounds),
                ("--loads", &mut options.loads),
                ("--burst", &mut options.burst),
                ("--profile-events", &mut options.profile_events),
            ] {
                if let Some(v) = args.value(name)? {
                    *field = v
                        .parse::<u32>()
                        .ok()
                        .filter(|&n| n > 0)
                        .with_context(|| format!("{name} {v:?} is not a positive integer"))?;
                }
            }
            options.build = !args.flag("--no-build");
            options.report = args.value("--report")?.map(PathBuf::from);
            args.finish()?;
            bench::run(&options)
        }
        "crash-lab" => {
            let mut modes = Vec::new();
            while let Some(mode) = args.value("--mode")? {
                modes.push(mode);
            }
            let events = args.value("--events")?.map_or(Ok(1), |v| {
                v.parse()
                    .with_context(|| format!("--events {v:?} is not a number"))
            })?;
            let options = crashlab::Options {
                modes,
                events,
                control: args.flag("--control"),
                build: !args.flag("--no-build"),
                dev: args.flag("--dev"),
            };
            args.finish()?;
            crashlab::run(&options)
        }
        "workshop" => {
            let (host, port) = args.address()?;
            let options = workshop::Options {
                handler: args.value("--handler")?.map(PathBuf::from),
                deliveries: args.value("--deliveries")?,
                judge_only: args.flag("--judge-only"),
                dev: args.flag("--dev"),
                host,
                port,
            };
            args.finish()?;
            workshop::run(&options)
        }
        "help" | "--help" | "-h" => {
            print!("{USAGE}");
            Ok(())
        }
        other => {
            eprint!("{USAGE}");
            bail!("unknown command {other:?}")
        }
    }
}

/// Hand-rolled argument parsing: flags, `--name value` / `--name=value`, no positionals after
/// the command.
struct Args {
    rest: Vec<String>,
}

impl Args {
    fn next_positional(&mut self) -> Option<String> {
        let first = self.rest.first();
        let command = first.is_some_and(|a| !a.starts_with('-') || a == "-h" || a == "--help");
        command.then(|| self.rest.remove(0))
    }

    fn flag(&mut self, name: &str) -> bool {
        let at = self.rest.iter().position(|a| a == name);
        at.map(|i| self.rest.remove(i)).is_some()
    }

    /// Takes the first `--name value` or `--name=value`; call again for repeated options.
    fn value(&mut self, name: &str) -> Result<Option<String>> {
        let prefix = format!("{name}=");
        let at = self
            .rest
            .iter()
            .position(|a| a == name || a.starts_with(&prefix));
        let Some(i) = at else { return Ok(None) };
        let arg = self.rest.remove(i);
        if let Some(value) = arg.strip_prefix(&prefix) {
            return Ok(Some(value.to_string()));
        }
        if i >= self.rest.len() {
            bail!("{name} needs a value");
        }
        Ok(Some(self.rest.remove(i)))
    }

    /// `--host H` and `--port N` (0: any free port), by default 127.0.0.1 and 8080.
    fn address(&mut self) -> Result<(String, u16)> {
        let host = self.value("--host")?.unwrap_or_else(|| "127.0.0.1".into());
        let port = self.value("--port")?.map_or(Ok(8080), |p| {
            p.parse()
                .with_context(|| format!("--port {p:?} is not a port number"))
        })?;
        Ok((host, port))
    }

    fn finish(self) -> Result<()> {
        if !self.rest.is_empty() {
            bail!(
                "unexpected arguments: {} (see `cargo xtask help`)",
                self.rest.join(" ")
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Args {
        let rest = s.split_whitespace().map(String::from).collect();
        Args { rest }
    }

    #[test]
    fn parses_options() -> Result<()> {
        let mut a = args("serve --port 0 --host=0.0.0.0 --dev");
        assert_eq!(a.next_positional().as_deref(), Some("serve"));
        assert_eq!(a.value("--port")?.as_deref(), Some("0"));
        assert_eq!(a.value("--host")?.as_deref(), Some("0.0.0.0"));
        assert!(a.flag("--dev"));
        assert!(!a.flag("--no-build"));
        a.finish()
    }

    #[test]
    fn repeated_and_bad_options() -> Result<()> {
        let mut a = args("--only lint --only=e2e");
        assert_eq!(a.value("--only")?.as_deref(), Some("lint"));
        assert_eq!(a.value("--only")?.as_deref(), Some("e2e"));
        assert_eq!(a.value("--only")?, None);
        assert!(args("--port").value("--port").is_err());
        assert!(args("--bogus").finish().is_err());
        Ok(())
    }
}
