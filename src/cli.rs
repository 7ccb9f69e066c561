//! The native command line, used by workshop scripts and outside checks.
//! Its interface is a contract; keep it exactly:
//!
//! ```text
//! inbox-lab demo
//! inbox-lab init  --db PATH [--account ID]...
//! inbox-lab apply --db PATH --source S --event-id E --account A --amount N
//!                 [--fail-after-insert | --fail-after-update]
//! inbox-lab show  --db PATH
//! inbox-lab race  --handler NAME [--deliveries K]
//! ```
//!
//! Exit codes: 0 success; 1 a reported error (JSON on stdout); 2 a usage
//! error (a missing or unknown option, from clap). Values arrive as text and
//! follow [`crate::event`]'s rules: `--amount 1.5` is present but invalid, so
//! it is an `invalid_input` error (exit 1), not a usage error.

use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use clap::{ArgGroup, Parser, Subcommand};
use serde::Serialize;

use crate::db::{self, Mode};
use crate::event::{parse_integer, Field};
use crate::handlers::Handler;
use crate::schema::{self, DEFAULT_BUSY_TIMEOUT};
use crate::{apply, race, scenario, tables, Error, Event, Fault, Outcome};

#[derive(Parser, Debug)]
#[command(
    name = "inbox-lab",
    version,
    about = "Idempotent event processing with an inbox table and one SQLite transaction"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

// Values are taken as plain strings (hyphens allowed, empty allowed) so that
// every present value reaches the crate's own validation.
#[derive(Subcommand, Debug)]
enum Command {
    /// Run the article's scenario on a temporary database, with 20 concurrent
    /// deliveries from 8 threads; prints `OK: ...` or what differed.
    Demo,
    /// Create the schema and accounts (account 1 when none given). Idempotent.
    Init {
        #[arg(long, value_name = "PATH")]
        db: String,
        #[arg(long = "account", value_name = "ID", allow_hyphen_values = true)]
        accounts: Vec<String>,
    },
    /// Deliver one event; prints one JSON line.
    #[command(group(ArgGroup::new("fault").args(["fail_after_insert", "fail_after_update"])))]
    Apply {
        #[arg(long, value_name = "PATH")]
        db: String,
        #[arg(long, allow_hyphen_values = true)]
        source: String,
        #[arg(long, allow_hyphen_values = true)]
        event_id: String,
        #[arg(long, value_name = "ID", allow_hyphen_values = true)]
        account: String,
        #[arg(long, value_name = "N", allow_hyphen_values = true)]
        amount: String,
        /// Fail after the INSERT, before the credit (rolls back).
        #[arg(long)]
        fail_after_insert: bool,
        /// Fail after the credit, just before COMMIT (rolls back).
        #[arg(long)]
        fail_after_update: bool,
    },
    /// Print both tables as JSON.
    Show {
        #[arg(long, value_name = "PATH")]
        db: String,
    },
    /// Explore every interleaving of K deliveries of one event by one
    /// handler, on real connections to a temporary file database.
    Race {
        #[arg(long)]
        handler: String,
        #[arg(long, default_value = "2", allow_hyphen_values = true)]
        deliveries: String,
    },
}

/// Runs the command line; the binary's `main`.
pub fn main() -> ExitCode {
    let cli = Cli::parse(); // usage errors exit 2 here
    match cli.command {
        Command::Demo => demo(),
        Command::Init { db, accounts } => {
            print_result(init(&db, &accounts).map(|()| Done { ok: true }))
        }
        Command::Apply {
            db,
            source,
            event_id,
            account,
            amount,
            fail_after_insert,
            fail_after_update,
        } => {
            let fault = if fail_after_insert {
                Some(Fault::AfterInsert)
            } else if fail_after_update {
                Some(Fault::AfterUpdate)
            } else {
                None
            };
            print_result(apply_one(&db, &source, &event_id, &account, &amount, fault))
        }
        Command::Show { db } => print_result(show(&db)),
        Command::Race {
            handler,
            deliveries,
        } => print_result(race(&handler, &deliveries)),
    }
}

#[derive(Serialize)]
struct Done {
    ok: bool,
}

#[derive(Serialize)]
struct ErrorLine {
    error: crate::ErrorReport,
}

/// Prints `value` as one JSON line (exit 0) or `{"error": {...}}` (exit 1).
fn print_result<T: Serialize>(result: Result<T, Error>) -> ExitCode {
    let (line, code) = match result {
        Ok(value) => (serde_json::to_string(&value), ExitCode::SUCCESS),
        Err(err) => (
            serde_json::to_string(&ErrorLine {
                error: err.report(),
            }),
            ExitCode::FAILURE,
        ),
    };
    match line {
        Ok(line) => {
            println!("{line}");
            code
        }
        Err(e) => {
            eprintln!("inbox-lab: cannot encode the answer as JSON: {e}");
            ExitCode::FAILURE
        }
    }
}

fn init(path: &str, accounts: &[String]) -> Result<(), Error> {
    let ids = accounts
        .iter()
        .map(|a| parse_integer(Field::AccountId, a).and_then(crate::event::check_account_id))
        .collect::<Result<Vec<_>, _>>()?;
    let mut conn = db::open(path, Mode::Create, DEFAULT_BUSY_TIMEOUT)?;
    schema::init(&mut conn, &ids)
}

fn apply_one(
    path: &str,
    source: &str,
    event_id: &str,
    account: &str,
    amount: &str,
    fault: Option<Fault>,
) -> Result<Outcome, Error> {
    // Validate before touching the database: bad input writes nothing.
    let event = Event::from_text(source, event_id, account, amount)?;
    let conn = db::open(path, Mode::Existing, DEFAULT_BUSY_TIMEOUT)?;
    apply(&conn, &event, fault)
}

fn show(path: &str) -> Result<tables::Tables, Error> {
    let conn = db::open(path, Mode::Existing, DEFAULT_BUSY_TIMEOUT)?;
    tables::snapshot(&conn)
}

/// `{"handler":…,"interleavings":N,"double_credits":…,"lost_credits":…,"wrong_answers":…}`
#[derive(Serialize)]
struct RaceLine {
    handler: Handler,
    interleavings: u64,
    double_credits: u64,
    lost_credits: u64,
    wrong_answers: u64,
}

fn race(handler: &str, deliveries: &str) -> Result<RaceLine, Error> {
    let handler: Handler = handler
        .parse()
        .map_err(|reason: String| Error::invalid(Field::Handler, reason))?;
    let k = parse_integer(Field::Deliveries, deliveries)?;
    let k = usize::try_from(k)
        .ok()
        .filter(|k| (1..=race::MAX_DELIVERIES).contains(k))
        .ok_or_else(|| {
            Error::invalid(
                Field::Deliveries,
                format!("must be between 1 and {}", race::MAX_DELIVERIES),
            )
        })?;
    let dir = temp_dir()?;
    let path = dir.path().join("race.sqlite3");
    let path = utf8(&path)?;
    let arena = race::Arena::new(k, || {
        let conn = db::open(path, Mode::Create, DEFAULT_BUSY_TIMEOUT)?;
        // Thousands of replays: durability does not matter for this scratch file.
        conn.execute_batch("PRAGMA synchronous = OFF")?;
        Ok(conn)
    })?;
    let s = race::explore(&arena, handler)?;
    Ok(RaceLine {
        handler: s.handler,
        interleavings: s.interleavings,
        double_credits: s.double_credits,
        lost_credits: s.lost_credits,
        wrong_answers: s.wrong_answers,
    })
}

fn temp_dir() -> Result<tempfile::TempDir, Error> {
    tempfile::tempdir().map_err(|e| Error::storage(format!("temporary directory: {e}")))
}

fn utf8(path: &Path) -> Result<&str, Error> {
    path.to_str()
        .ok_or_else(|| Error::storage("temporary path is not UTF-8"))
}

/// Worker threads for the demo's burst, as in the article's script.
pub const DEMO_THREADS: usize = 8;

fn demo() -> ExitCode {
    match run_demo() {
        Ok(report) => {
            println!("{}", report.summary());
            if report.passed() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(err) => {
            println!("FAILED: {err}");
            ExitCode::FAILURE
        }
    }
}

/// The article's scenario on a temporary file database (not `:memory:`:
/// the threads need real locks on a real file).
///
/// # Errors
/// If the temporary database cannot be created or read.
pub fn run_demo() -> Result<scenario::Report, Error> {
    let dir =
        tempfile::tempdir().map_err(|e| Error::storage(format!("temporary directory: {e}")))?;
    let path = dir.path().join("demo.sqlite3");
    let path = path
        .to_str()
        .ok_or_else(|| Error::storage("temporary path is not UTF-8"))?;
    let mut conn = db::open(path, Mode::Create, DEFAULT_BUSY_TIMEOUT)?;
    schema::init(&mut conn, &[1])?;
    scenario::run(&conn, |event| {
        deliver_concurrently(Path::new(path), event, scenario::BURST, DEMO_THREADS)
    })
}

/// Delivers `event` `times` times from `threads` threads, each delivery on
/// its own new connection (as the article's script does), and returns every
/// answer.
pub fn deliver_concurrently(
    path: &Path,
    event: &Event,
    times: usize,
    threads: usize,
) -> Vec<Result<Outcome, Error>> {
    let next = AtomicUsize::new(0);
    let results = Mutex::new(Vec::with_capacity(times));
    let path = path.to_string_lossy();
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                while next.fetch_add(1, Ordering::SeqCst) < times {
                    let result = db::open(&path, Mode::Existing, DEFAULT_BUSY_TIMEOUT)
                        .and_then(|conn| apply(&conn, event, None));
                    // A poisoned lock means another thread panicked; keep its results.
                    results
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .push(result);
                }
            });
        }
    });
    results.into_inner().unwrap_or_else(|p| p.into_inner())
}
