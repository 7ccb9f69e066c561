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
//! inbox-lab crash-lab [--mode delete|wal] [--events N] [--control | --control-coalescing]
//!                     [--workload apply|dispatch] [--no-dedup]
//! inbox-lab judge --handler FILE [--deliveries 2|3] [--seed N] [--deadline SECONDS]
//! inbox-lab judge --workshop [--deliveries 2|3] [--seed N] [--deadline SECONDS]
//! inbox-lab judge --print-builtin NAME
//! inbox-lab probe URL... (--secret whsec_… | --unsigned) [--state …] [--json]
//! ```
//!
//! `judge` exits 0 for a correct handler, 1 for a broken one, 2 when the
//! file does not parse (the error on stderr, with line and column) or an
//! option is wrong, 3 for an error of the lab itself (as JSON: never a
//! verdict on the handler), 4 when the whole
//! run passed its deadline (`DEFAULT_DEADLINE` unless `--deadline`; a
//! message on stderr, nothing on stdout). `--seed` repeats the events of a
//! report's `seed` (a fresh one when not given). `--workshop` judges the
//! handler written in Rust in `workshop/handler.rs` (a binary built with
//! the feature `workshop`, as `cargo xtask workshop` does; without it,
//! exit 2).
//!
//! Exit codes: 0 success; 1 a reported error (JSON on stdout); 2 a usage
//! error (a missing or unknown option, from clap). Values arrive as text and
//! follow [`crate::core::event`]'s rules: `--amount 1.5` is present but invalid, so
//! it is an `invalid_input` error (exit 1), not a usage error.

mod probe;

use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use clap::{ArgGroup, Parser, Subcommand};
use serde::Serialize;

use crate::core::db::{self, Mode};
use crate::core::event::{parse_integer, Field};
use std::io::Write;

use crate::core::schema::{self, DEFAULT_BUSY_TIMEOUT};
use crate::core::tables;
use crate::labs::crash::{self, JournalMode, Workload};
use crate::labs::handlers::{self, Contender, Handler, Payload};
use crate::labs::judge::{self, sample};
use crate::labs::race;
use crate::labs::scheme_ends::outbox::{self, Receiver};
use crate::labs::tools::scenario;
use crate::storage::iolog::{self, IoOp};
use crate::{apply, Error, Event, Fault, Outcome};

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
    Apply(ApplyArgs),
    /// Print both tables as JSON.
    Show {
        #[arg(long, value_name = "PATH")]
        db: String,
    },
    /// Crash a child process at every storage operation of one apply (or a
    /// burst), recover, and check each outcome is atomic. Prints a table on
    /// stderr and one JSON summary line; exit 1 on any partial or lost.
    CrashLab(CrashLabArgs),
    /// One try of the crash lab (run by `crash-lab` as a child process).
    #[command(hide = true)]
    CrashChild(ChildRun),
    /// Judge a handler written in the handler language: the article's
    /// cases, a fault after every statement, every race interleaving, the
    /// crash sweep in DELETE and WAL mode. Prints one JSON line.
    #[command(group(ArgGroup::new("what").args(["handler", "workshop", "print_builtin"]).required(true)))]
    Judge {
        #[arg(long, value_name = "FILE")]
        handler: Option<String>,
        /// Judge the workshop's handler in Rust (`workshop/handler.rs`; a
        /// binary built with the feature `workshop`).
        #[arg(long)]
        workshop: bool,
        /// 2 or 3; both when not given.
        #[arg(long, allow_hyphen_values = true)]
        deliveries: Option<String>,
        /// Print a built-in handler's text instead.
        #[arg(long, value_name = "NAME")]
        print_builtin: Option<String>,
        /// The seed of the events delivered (a report's `seed`); fresh when
        /// not given.
        #[arg(long, allow_hyphen_values = true)]
        seed: Option<String>,
        /// Wall-clock limit of the whole run, in seconds (default 180):
        /// past it, exit 4.
        #[arg(long, allow_hyphen_values = true, value_name = "SECONDS")]
        deadline: Option<String>,
    },
    /// Check a webhook receiver from outside: repeats, races, lost answers,
    /// forgeries (src/cli/probe/). Exit 0 idempotent, 1 broken, 2 could not run.
    Probe(probe::Args),
    /// Explore every interleaving of K deliveries of one event by one
    /// handler, on real connections to a temporary file database.
    Race {
        #[arg(long)]
        handler: String,
        #[arg(long, default_value = "2", allow_hyphen_values = true)]
        deliveries: String,
    },
}

/// `inbox-lab apply`'s options.
#[derive(clap::Args, Debug)]
#[command(group(ArgGroup::new("fault").args(["fail_after_insert", "fail_after_update"])))]
struct ApplyArgs {
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
}

/// `inbox-lab crash-lab`'s options.
#[derive(clap::Args, Debug)]
struct CrashLabArgs {
    #[arg(long, default_value = "delete")]
    mode: String,
    /// Events applied one after another by each try (a burst when > 1).
    #[arg(long, default_value = "1", allow_hyphen_values = true)]
    events: String,
    /// Recover with the broken lock check (sahpool before 0.3): the sweep
    /// must then find partial commits; exit 0 only if it does.
    #[arg(long)]
    control: bool,
    /// Write through the broken write coalescing, which lets a commit
    /// return with its last bytes held back: the sweep must then find
    /// acknowledged events lost (in WAL mode); exit 0 only if it does.
    #[arg(long, conflicts_with = "control")]
    control_coalescing: bool,
    /// `apply` (the handler's commit) or `dispatch` (the outbox
    /// dispatcher sending pending notifications to a receiver).
    #[arg(long, default_value = "apply")]
    workload: String,
    /// Dispatch to a receiver without its own dedup: a crash after
    /// sending and before marking then shows a notification twice.
    #[arg(long)]
    no_dedup: bool,
}

/// Runs the command line; the binary's `main`.
pub fn main() -> ExitCode {
    let cli = Cli::parse(); // usage errors exit 2 here
    match cli.command {
        Command::Demo => demo(),
        Command::Init { db, accounts } => {
            print_result(init(&db, &accounts).map(|()| serde_json::json!({ "ok": true })))
        }
        Command::Apply(args) => print_result(apply_one(&args)),
        Command::Show { db } => print_result(show(&db)),
        Command::Probe(args) => probe::main(args),
        Command::Race {
            handler,
            deliveries,
        } => print_result(race(&handler, &deliveries)),
        Command::Judge {
            handler,
            workshop,
            deliveries,
            print_builtin,
            seed,
            deadline,
        } => {
            let options =
                || judge_options(deliveries.as_deref(), seed.as_deref(), deadline.as_deref());
            match (handler, print_builtin) {
                (None, None) if workshop => options().map_or_else(usage, judge_workshop),
                (_, Some(name)) => match name.parse::<Handler>() {
                    Ok(h) => {
                        print!("{}", handlers::builtin(h));
                        ExitCode::SUCCESS
                    }
                    Err(reason) => usage(reason),
                },
                (Some(file), None) => judge_file(&file, options()),
                (None, None) => ExitCode::from(2),
            }
        }
        Command::CrashLab(args) => crash_lab(&args),
        Command::CrashChild(run) => match crash_child(&run) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("crash-child: {e}");
                ExitCode::from(3)
            }
        },
    }
}

/// Prints `value` as one JSON line (exit 0) or `{"error": {...}}` (exit 1).
fn print_result<T: Serialize>(result: Result<T, Error>) -> ExitCode {
    let (line, code) = match result {
        Ok(value) => (serde_json::to_string(&value), ExitCode::SUCCESS),
        Err(err) => (
            serde_json::to_string(&serde_json::json!({ "error": err.report() })),
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

/// Prints `value` as [`print_result`] does: exit 0 only if it printed and `passed`.
fn print_verdict<T: Serialize>(value: &T, passed: bool) -> ExitCode {
    let printed = print_result(Ok::<_, Error>(value)) == ExitCode::SUCCESS;
    if printed && passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn init(path: &str, accounts: &[String]) -> Result<(), Error> {
    let ids = accounts
        .iter()
        .map(|a| parse_integer(Field::ACCOUNT_ID, a).and_then(crate::core::event::check_account_id))
        .collect::<Result<Vec<_>, _>>()?;
    let mut conn = db::open(path, Mode::Create, DEFAULT_BUSY_TIMEOUT)?;
    schema::init(&mut conn, &ids)
}

fn apply_one(args: &ApplyArgs) -> Result<Outcome, Error> {
    let fault = (args.fail_after_insert.then_some(Fault::AfterInsert))
        .or(args.fail_after_update.then_some(Fault::AfterUpdate));
    // Validate before touching the database: bad input writes nothing.
    let event = Event::from_text(&args.source, &args.event_id, &args.account, &args.amount)?;
    let conn = db::open(&args.db, Mode::Existing, DEFAULT_BUSY_TIMEOUT)?;
    apply(&conn, &event, fault)
}

fn show(path: &str) -> Result<tables::Tables, Error> {
    let conn = db::open(path, Mode::Existing, DEFAULT_BUSY_TIMEOUT)?;
    tables::snapshot(&conn)
}

/// `{"handler":…,"interleavings":N,"double_credits":…,"lost_credits":…,"wrong_answers":…}`
#[derive(Serialize)]
struct RaceLine {
    handler: String,
    interleavings: u64,
    double_credits: u64,
    lost_credits: u64,
    wrong_answers: u64,
}

fn race(handler: &str, deliveries: &str) -> Result<RaceLine, Error> {
    let handler: Handler = handler
        .parse()
        .map_err(|reason: String| Error::invalid(handlers::HANDLER, reason))?;
    let k = parse_integer(race::DELIVERIES, deliveries)?;
    let k = usize::try_from(k)
        .ok()
        .filter(|k| (1..=race::MAX_DELIVERIES).contains(k))
        .ok_or_else(|| {
            Error::invalid(
                race::DELIVERIES,
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

/// The exit status of a child killed by the crash hook.
const CRASHED: i32 = 86;

fn die(_: &IoOp) -> ! {
    // Nothing after the k-th operation may reach storage: leave at once,
    // without unwinding, closing or flushing anything of SQLite's.
    std::process::exit(CRASHED)
}

/// Opens a try's database through `vfs`: the counting shim under write
/// coalescing (or under a control's variant), or the VFS it recovers with.
fn open_counted(path: &str, mode: JournalMode, vfs: &str) -> Result<rusqlite::Connection, Error> {
    db::open_with(
        &format!("file:{path}?vfs={vfs}"),
        Mode::Existing,
        DEFAULT_BUSY_TIMEOUT,
        |c| crash::configure(c, mode),
    )
}

/// The receiver of the dispatch workload: another system, so its own file,
/// opened with the plain VFS — its writes are not ours to count or crash.
fn open_receiver(path: &str, dedup: bool) -> Result<Receiver, Error> {
    let conn = rusqlite::Connection::open(path)?;
    Receiver::open(conn, dedup)
}

/// Runs `workload` on `conn`; `ack(i)` after event `i` committed or message
/// `i` was marked sent.
fn run_workload(
    conn: &rusqlite::Connection,
    workload: Workload,
    n: usize,
    receiver_path: &str,
    handler: Option<&Contender>,
    mut ack: impl FnMut(usize),
) -> Result<(), Error> {
    match workload {
        Workload::Apply => match handler {
            None => crash::workload(conn, &crash::events(n)?, ack),
            Some(h) => {
                for (i, e) in crash::events(n)?.iter().enumerate() {
                    // A handler's refusal or mistake is its answer: no ACK.
                    if judge::deliver(conn, h, &Payload::from(e)).is_ok() {
                        ack(i);
                    }
                }
                Ok(())
            }
        },
        Workload::Dispatch { dedup } => {
            let receiver = open_receiver(receiver_path, dedup)?;
            let mut i = 0;
            while outbox::dispatch_one(conn, &receiver, None)?.is_some() {
                ack(i);
                i += 1;
            }
            Ok(())
        }
    }
}

/// The workload named `name`: `apply`, or `dispatch` (to a receiver
/// deduplicating unless `no_dedup`).
fn workload(name: &str, no_dedup: bool) -> Option<Workload> {
    match name {
        "apply" => Some(Workload::Apply),
        "dispatch" => Some(Workload::Dispatch { dedup: !no_dedup }),
        _ => None,
    }
}

/// One try of the sweep, as its parent process asked for it (`crash-child`).
#[derive(clap::Args, Debug)]
struct ChildRun {
    #[arg(long)]
    db: String,
    #[arg(long)]
    mode: String,
    #[arg(long)]
    events: usize,
    #[arg(long)]
    crash_after: Option<usize>,
    #[arg(long, default_value = "apply")]
    workload: String,
    #[arg(long, default_value = "")]
    receiver: String,
    #[arg(long)]
    no_dedup: bool,
    #[arg(long, default_value = "none")]
    control: String,
    /// Deliver with this handler program instead of the article's.
    #[arg(long)]
    handler_file: Option<String>,
    /// Deliver with the workshop's handler (feature `workshop`).
    #[arg(long)]
    workshop: bool,
    /// End (exit 4) after this many milliseconds: the judge's deadline.
    // Passed on, so that a child delivering with a slow handler ends with its parent.
    #[arg(long)]
    deadline_ms: Option<u64>,
}

fn crash_child(run: &ChildRun) -> Result<(), Error> {
    if let Some(ms) = run.deadline_ms {
        watchdog(Duration::from_millis(ms), String::new(), None);
    }
    let mode: JournalMode = run.mode.parse().map_err(Error::storage)?;
    let control: crash::Control = run.control.parse().map_err(Error::storage)?;
    let workload = workload(&run.workload, run.no_dedup).unwrap_or(Workload::Apply);
    let handler = (run.handler_file.as_deref().map(Judged::File))
        .or(run.workshop.then_some(Judged::Workshop))
        .map(Judged::contender)
        .transpose()?;
    iolog::install()?;
    let conn = open_counted(&run.db, mode, control.write_vfs())?;
    iolog::arm(run.crash_after, die);
    let mut out = std::io::stdout().lock();
    run_workload(
        &conn,
        workload,
        run.events,
        &run.receiver,
        handler.as_ref(),
        |i| {
            // The sender hears "200" only once this line is out of the process.
            let _ = writeln!(out, "ACK {i}").and_then(|()| out.flush());
        },
    )
}

/// A handler the judge's crash sweep delivers with, as its children find
/// it: a handler program's file (each child reads and parses it again), or
/// the workshop's handler compiled into this binary.
#[derive(Debug, Clone, Copy)]
enum Judged<'a> {
    File(&'a str),
    Workshop,
}

impl Judged<'_> {
    /// The handler, a file read and parsed again by each child.
    fn contender(self) -> Result<Contender, Error> {
        let Judged::File(path) = self else {
            return handlers::workshop::contender();
        };
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::invalid(handlers::HANDLER, format!("cannot read {path}: {e}")))?;
        let program =
            handlers::parse(&text).map_err(|e| Error::invalid(handlers::HANDLER, e.to_string()))?;
        Ok(Contender::Script {
            name: path.to_owned(),
            program,
        })
    }
}

/// Runs the native sweep on the page's stack (write coalescing over the
/// counting shim), delivering with `judged` (the atomic one when `None`);
/// `control` says how recovery runs. Returns the table and the summary.
///
/// # Errors
/// Storage or process errors of the lab itself (not of a try); the file not
/// parsing is an `invalid_input` error.
fn crash_sweep(
    mode: JournalMode,
    n: usize,
    control: crash::Control,
    workload: Workload,
    judged: Option<Judged<'_>>,
) -> Result<(Vec<crash::Row>, crash::Summary), Error> {
    let handler = judged.map(Judged::contender).transpose()?;
    let events = crash::events(n)?;
    let dir = temp_dir()?;
    let path = |name: &str| utf8(&dir.path().join(name)).map(str::to_owned);
    let (template, trial, receiver) = (
        path("template.sqlite3")?,
        path("try.sqlite3")?,
        path("receiver.sqlite3")?,
    );
    {
        let mut conn = db::open_with(&template, Mode::Create, DEFAULT_BUSY_TIMEOUT, |c| {
            crash::configure(c, mode)
        })
        .map_err(|e| Error::storage(format!("creating the template: {e}")))?;
        schema::init(&mut conn, &[1])?;
        if let Workload::Dispatch { .. } = workload {
            // Pending notifications for the dispatcher to send.
            let scratch = Receiver::open(rusqlite::Connection::open_in_memory()?, true)?;
            for e in &events {
                outbox::deliver(&conn, &scratch, e, outbox::Strategy::Outbox, None)?;
            }
        }
    }
    let exe =
        std::env::current_exe().map_err(|e| Error::storage(format!("own executable: {e}")))?;
    let fresh_copy = || -> Result<(), Error> {
        for file in [
            format!("{trial}-journal"),
            format!("{trial}-wal"),
            format!("{trial}-shm"),
            receiver.clone(),
            format!("{receiver}-journal"),
        ] {
            let _ = std::fs::remove_file(file);
        }
        std::fs::copy(&template, &trial).map_err(|e| Error::storage(format!("copy: {e}")))?;
        Ok(())
    };
    let (workload_name, dedup) = match workload {
        Workload::Apply => ("apply", true),
        Workload::Dispatch { dedup } => ("dispatch", dedup),
    };
    let run_child = |k: usize| -> Result<(usize, Option<i32>), Error> {
        let mut cmd = std::process::Command::new(&exe);
        cmd.args([
            "crash-child",
            "--db",
            &trial,
            "--mode",
            mode.as_str(),
            "--events",
            &n.to_string(),
            "--crash-after",
            &k.to_string(),
            "--workload",
            workload_name,
            "--receiver",
            &receiver,
            "--control",
            control.as_str(),
        ]);
        if !dedup {
            cmd.arg("--no-dedup");
        }
        cmd.args(match judged {
            Some(Judged::File(file)) => vec!["--handler-file", file],
            Some(Judged::Workshop) => vec!["--workshop"],
            None => vec![],
        });
        if let Some(at) = DEADLINE.get() {
            let left = at.saturating_duration_since(Instant::now());
            cmd.args(["--deadline-ms", &left.as_millis().to_string()]);
        }
        let out = cmd
            .output()
            .map_err(|e| Error::storage(format!("child: {e}")))?;
        let acks = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| l.starts_with("ACK "))
            .count();
        Ok((acks, out.status.code()))
    };
    // A run without a crash counts the operations (the log is deterministic).
    fresh_copy()?;
    iolog::install()?;
    let log = {
        let conn = open_counted(&trial, mode, control.write_vfs())?;
        iolog::arm(None, die);
        let result = run_workload(&conn, workload, n, &receiver, handler.as_ref(), |_| {})
            .map_err(|e| Error::storage(format!("counting the operations: {e}")));
        let log = iolog::disarm();
        result?;
        log
    };
    let recover_vfs = control.recover_vfs();
    let mut rows = Vec::new();
    for k in 1..=log.len() {
        fresh_copy()?;
        let (acks, status) = run_child(k)?;
        if status != Some(CRASHED) && status != Some(0) {
            return Err(Error::storage(format!(
                "try k={k}: child ended with {status:?}"
            )));
        }
        let conn = open_counted(&trial, mode, recover_vfs)?;
        let recovered =
            match workload {
                Workload::Apply => crash::Recovery::Apply(crash::classify(&conn, &events, acks)?),
                Workload::Dispatch { dedup } => crash::Recovery::Dispatch(
                    crash::classify_dispatch(&conn, &open_receiver(&receiver, dedup)?, n)?,
                ),
            };
        rows.push(crash::Row {
            k,
            last: log.get(k - 1).cloned(),
            outcome: recovered.verdict(),
            recovered,
        });
    }
    let summary = crash::Summary::of(mode, &rows);
    Ok((rows, summary))
}

fn crash_lab(args: &CrashLabArgs) -> ExitCode {
    let control = if args.control {
        crash::Control::BrokenLock
    } else if args.control_coalescing {
        crash::Control::HoldsCommits
    } else {
        crash::Control::None
    };
    let run = || -> Result<(Vec<crash::Row>, crash::Summary), Error> {
        let mode: JournalMode = args
            .mode
            .parse()
            .map_err(|reason: String| Error::invalid(Field::EVENT, reason))?;
        let n = parse_integer(Field::EVENT, &args.events)?;
        let n = usize::try_from(n)
            .map_err(|_| Error::invalid(Field::EVENT, "events must be positive"))?;
        let workload = workload(&args.workload, args.no_dedup).ok_or_else(|| {
            Error::invalid(
                Field::EVENT,
                format!(
                    "unknown workload {:?}: expected apply or dispatch",
                    args.workload
                ),
            )
        })?;
        crash_sweep(mode, n, control, workload, None)
    };
    match run() {
        Ok((rows, summary)) => {
            eprintln!(
                "{:>4}  {:<8} {:<9} {:>8} {:>6}  result",
                "k", "file", "op", "offset", "len"
            );
            for r in &rows {
                if let Some(op) = &r.last {
                    eprintln!(
                        "{:>4}  {:<8} {:<9} {:>8} {:>6}  {:?}",
                        r.k,
                        format!("{:?}", op.file).to_lowercase(),
                        format!("{:?}", op.op).to_lowercase(),
                        op.offset,
                        op.len,
                        r.outcome
                    );
                }
            }
            print_verdict(&summary, control.passed(&summary))
        }
        Err(e) => print_result(Err::<(), _>(e)),
    }
}

/// `inbox-lab judge --handler FILE` (its exit codes: the module doc). The
/// options are refused only after the file parsed.
fn judge_file(path: &str, options: Result<JudgeOptions, String>) -> ExitCode {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => return usage(format!("cannot read {path}: {e}")),
    };
    let program = match handlers::parse(&text) {
        Ok(p) => p,
        Err(e) => {
            eprintln!(
                "{path}:{}:{}: {}",
                e.line,
                e.column,
                e.text(handlers::Lang::En)
            );
            return ExitCode::from(2);
        }
    };
    let options = match options {
        Ok(options) => options,
        Err(reason) => return usage(reason),
    };
    let name = Path::new(path)
        .file_name()
        .map_or_else(|| path.to_owned(), |n| n.to_string_lossy().into_owned());
    judge_contender(
        &Contender::Script { name, program },
        &options,
        Judged::File(path),
    )
}

/// The judge's options, checked: exit 2 with the reason otherwise.
struct JudgeOptions {
    deliveries: Vec<usize>,
    seed: u64,
    deadline: Duration,
}

/// The whole run's wall-clock limit when `--deadline` is not given: above
/// the in-process budget ([`judge::JUDGE_BUDGET`], 120 s), so a handler the
/// budget stops still gets its report; the deadline is for what the budget
/// cannot stop (one slow SQLite step, the crash sweep's children).
const DEFAULT_DEADLINE: Duration = Duration::from_secs(180);

/// The exit code of a judge run the lab itself failed (its error as JSON):
/// never a verdict on the handler.
const EXIT_INTERNAL: u8 = 3;

/// The exit code of a judge run that passed its deadline.
const EXIT_DEADLINE: u8 = 4;

fn judge_options(
    deliveries: Option<&str>,
    seed: Option<&str>,
    deadline: Option<&str>,
) -> Result<JudgeOptions, String> {
    let deliveries = match deliveries {
        None => vec![2, 3],
        Some("2") => vec![2],
        Some("3") => vec![3],
        Some(other) => return Err(format!("--deliveries must be 2 or 3, got {other:?}")),
    };
    let seed = match seed {
        None => fresh_seed(),
        Some(text) => parse_integer(sample::SEED, text)
            .and_then(sample::seed)
            .map_err(|e| format!("--seed {e}"))?,
    };
    let deadline = match deadline {
        None => DEFAULT_DEADLINE,
        Some(text) => match parse_integer(Field::new("deadline"), text) {
            Ok(n @ 1..=86_400) => Duration::from_secs(n.unsigned_abs()),
            _ => {
                return Err(format!(
                    "--deadline must be a whole number of seconds from 1 to 86400, got {text:?}"
                ))
            }
        },
    };
    Ok(JudgeOptions {
        deliveries,
        seed,
        deadline,
    })
}

/// A seed no run has chosen: std's per-process random hash keys.
fn fresh_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let bits = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    bits & sample::MAX_SEED
}

/// Says `reason` on stderr: exit 2.
fn usage(reason: String) -> ExitCode {
    eprintln!("inbox-lab: {reason}");
    ExitCode::from(2)
}

/// `inbox-lab judge --workshop`: as `--handler FILE`; exit 2 without the feature `workshop`.
fn judge_workshop(options: JudgeOptions) -> ExitCode {
    match handlers::workshop::contender() {
        Ok(contender) => judge_contender(&contender, &options, Judged::Workshop),
        Err(_) => usage(crate::labs::handlers::workshop::MISSING.to_owned()),
    }
}

/// When the judge's deadline passes (set once, read by the crash sweep to
/// give its children what is left).
static DEADLINE: OnceLock<Instant> = OnceLock::new();
/// Set by whoever ends the run first: the judge printing its report, or
/// the watchdog at the deadline (the other then does nothing).
static ENDED: Mutex<bool> = Mutex::new(false);

/// Ends the process `after` from now unless it [`ended`] first: says
/// `message` on stderr (none for a crash child), removes `scratch`, exits
/// [`EXIT_DEADLINE`]. A thread of its own, so that nothing the judge runs —
/// a single SQLite call included, which no progress handler interrupts —
/// can hold the run past it.
fn watchdog(after: Duration, message: String, scratch: Option<std::path::PathBuf>) {
    std::thread::spawn(move || {
        std::thread::sleep(after);
        let mut ended = ENDED.lock().unwrap_or_else(PoisonError::into_inner);
        if *ended {
            return;
        }
        *ended = true;
        if !message.is_empty() {
            eprintln!("{message}");
        }
        if let Some(dir) = scratch {
            let _ = std::fs::remove_dir_all(dir);
        }
        std::process::exit(i32::from(EXIT_DEADLINE));
    });
}

/// Claims the end of the run for the report; `false` if the watchdog
/// already has it (the process is exiting).
fn ended() -> bool {
    let mut ended = ENDED.lock().unwrap_or_else(PoisonError::into_inner);
    !std::mem::replace(&mut *ended, true)
}

/// Judges `contender` (the crash sweep's children deliver with `judged`) and
/// prints the report.
fn judge_contender(contender: &Contender, options: &JudgeOptions, judged: Judged<'_>) -> ExitCode {
    let internal = |e| {
        print_result(Err::<(), _>(e));
        ExitCode::from(EXIT_INTERNAL)
    };
    let dir = match temp_dir() {
        Ok(dir) => dir,
        Err(e) => return internal(e),
    };
    let _ = DEADLINE.set(Instant::now() + options.deadline);
    watchdog(
        options.deadline,
        format!(
            "inbox-lab: judge stopped: the deadline of {} s passed before the judge finished \
             (seed {}): the handler takes too long to judge",
            options.deadline.as_secs(),
            options.seed
        ),
        Some(dir.path().to_owned()),
    );
    let sweep = || -> Result<Option<(judge::CrashCounts, Option<judge::Explained>)>, Error> {
        let mut counts = judge::CrashCounts::default();
        let mut failure = None;
        for mode in [JournalMode::Delete, JournalMode::Wal] {
            let (rows, summary) =
                crash_sweep(mode, 1, crash::Control::None, Workload::Apply, Some(judged))?;
            counts.add(&summary);
            if failure.is_none() {
                failure = rows
                    .iter()
                    .position(|r| r.outcome != crash::Verdict::Atomic)
                    .map(|at| judge::explain::crash(mode.as_str(), &rows, at));
            }
        }
        Ok(Some((counts, failure)))
    };
    let run = || -> Result<judge::Report, Error> {
        let db = dir.path().join("judge.sqlite3");
        let db = utf8(&db)?;
        judge::judge(
            contender,
            &options.deliveries,
            || judge::open_scratch(db),
            judge::JUDGE_BUDGET,
            options.seed,
            sweep,
        )
    };
    let result = run();
    if !ended() {
        // The watchdog is ending the process: block until it has.
        loop {
            std::thread::park();
        }
    }
    match result {
        Ok(report) => print_verdict(&report, report.verdict == "correct"),
        // The lab's own failure, never the handler's verdict.
        Err(e) => internal(e),
    }
}

fn temp_dir() -> Result<tempfile::TempDir, Error> {
    tempfile::tempdir().map_err(|e| Error::storage(format!("temporary directory: {e}")))
}

fn utf8(path: &Path) -> Result<&str, Error> {
    path.to_str()
        .ok_or_else(|| Error::storage("temporary path is not UTF-8"))
}

/// Worker threads for the demo's burst, as in the article's script.
const DEMO_THREADS: usize = 8;

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
    let dir = temp_dir()?;
    let path = dir.path().join("demo.sqlite3");
    let path = utf8(&path)?;
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
