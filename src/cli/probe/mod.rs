//! `inbox-lab probe URL...`: is *your* webhook receiver idempotent?
//!
//! The labs judge handlers written in the lab's own language. A reader's
//! real receiver is a service in another language on another database; the
//! probe checks it from the outside, the way a provider's deliveries would
//! hit it: it sends Standard Webhooks requests (signed with the lab's own
//! [`sign`](crate::labs::webhooks::sign)) and runs the situations a real
//! provider produces — a repeat, twenty copies at once, a lost answer and
//! its retry, a forgery sent first, a stale timestamp, a stripped id — see
//! [`scenarios`]. It judges from the answers and, given `--state`, from the
//! receiver's balance read after each scenario ([`state`]): an answer says
//! what the receiver *claims*, the balance says what it *did*.
//!
//! ```text
//! inbox-lab probe URL [URL...] --secret whsec_… | --unsigned
//!     [--state sqlite:FILE | --state postgres://… [--balance-sql SQL] | --state-url URL]
//!     [--account ID] [--body-template FILE] [--concurrency N]
//!     [--timeout SECS] [--deadline SECS] [--allow-remote] [--json]
//! ```
//!
//! Exit codes: 0 idempotent, 1 broken (the first failing scenario is named,
//! with its history), 2 could not run (bad arguments, the receiver or its
//! state unreachable, the run's deadline passed). Every request has a
//! timeout and the whole run a deadline, so it never hangs. It sends only to
//! the URLs given, and only to loopback ones unless `--allow-remote`.
//!
//! Native only: `cli` is not compiled for wasm, so the page carries none of
//! this (nor its HTTP and PostgreSQL clients).

mod deliver;
mod report;
mod scenarios;
mod state;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use crate::labs::webhooks::Secret;
use deliver::{Sender, Target};
use report::{Outcome, Run};
use state::State;

/// The body a delivery carries unless `--body-template` says otherwise: the
/// lab's own event shape.
const DEFAULT_TEMPLATE: &str = r#"{"account_id": {account_id}, "amount": {amount}}"#;

/// The arguments of `inbox-lab probe`.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// The receiver's URL; with several (instances of one receiver), the
    /// deliveries are spread over them in turn, as a load balancer would.
    #[arg(required = true, value_name = "URL")]
    urls: Vec<String>,
    /// The signing secret the receiver checks, `whsec_<base64>`.
    #[arg(long, value_name = "whsec_…", required_unless_present = "unsigned")]
    secret: Option<String>,
    /// Send unsigned requests (the forged and stale scenarios are not run).
    #[arg(long, conflicts_with = "secret")]
    unsigned: bool,
    /// The account every event credits.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(i64).range(1..))]
    account: i64,
    /// The body to send, with `{account_id}` and `{amount}` in it.
    #[arg(long, value_name = "FILE")]
    body_template: Option<PathBuf>,
    /// Where to read the receiver's balance: `sqlite:FILE` or `postgres://…`.
    #[arg(long, value_name = "sqlite:FILE|postgres://…")]
    state: Option<String>,
    /// The query that returns the balance as one integer (default: the
    /// lab's `SELECT balance FROM accounts WHERE id = <account>`).
    #[arg(long, value_name = "SQL", requires = "state")]
    balance_sql: Option<String>,
    /// A URL that answers GET with the balance (a JSON number or `{"balance": N}`).
    #[arg(long, value_name = "URL", conflicts_with = "state")]
    state_url: Option<String>,
    /// How many identical deliveries the concurrent scenario sends at once.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u16).range(2..=200))]
    concurrency: u16,
    /// Seconds each request may take.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=600))]
    timeout: u64,
    /// Seconds the whole run may take.
    #[arg(long, default_value_t = 120, value_parser = clap::value_parser!(u64).range(1..=3600))]
    deadline: u64,
    /// Allow URLs that are not on this machine (loopback).
    #[arg(long)]
    allow_remote: bool,
    /// Print one JSON document (every request, answer and balance read, and
    /// the verdict) instead of the report.
    #[arg(long)]
    json: bool,
}

/// Runs the probe; the exit code is the verdict (0, 1 or 2).
pub(crate) fn main(args: Args) -> ExitCode {
    let started = Instant::now();
    let run = match prepare(&args, started) {
        Ok((sender, state)) => scenarios::run_all(&sender, state),
        Err(message) => Run::could_not_start(message),
    };
    report::print(&run, args.json);
    ExitCode::from(match run.outcome() {
        Outcome::Idempotent => 0,
        Outcome::Broken => 1,
        Outcome::CouldNotRun => 2,
    })
}

/// Checks every argument before anything is sent: a bad one sends nothing.
fn prepare(args: &Args, started: Instant) -> Result<(Sender, State), String> {
    let targets = args
        .urls
        .iter()
        .map(|url| Target::parse(url, args.allow_remote))
        .collect::<Result<Vec<_>, _>>()?;
    let secret = args.secret.as_deref().map(Secret::parse).transpose();
    let secret = secret.map_err(|e| format!("--secret: {e}"))?;
    let template = match &args.body_template {
        Some(path) => read_template(path)?,
        None => DEFAULT_TEMPLATE.to_owned(),
    };
    let timeout = Duration::from_secs(args.timeout);
    let deadline = started + Duration::from_secs(args.deadline);
    let state = State::open(
        args.state.as_deref(),
        args.balance_sql.as_deref(),
        args.state_url.as_deref(),
        args.account,
        args.allow_remote,
        timeout,
    )?;
    let sender = Sender {
        targets,
        secret,
        template,
        account: args.account,
        concurrency: usize::from(args.concurrency),
        timeout,
        started,
        deadline,
        next: Default::default(),
    };
    Ok((sender, state))
}

fn read_template(path: &std::path::Path) -> Result<String, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("--body-template {}: {e}", path.display()))?;
    for placeholder in ["{account_id}", "{amount}"] {
        if !text.contains(placeholder) {
            return Err(format!(
                "--body-template {}: it has no {placeholder}; the probe fills it in for each event",
                path.display()
            ));
        }
    }
    Ok(text)
}
