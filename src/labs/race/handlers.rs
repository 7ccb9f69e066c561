//! The handlers that get it wrong, next to the one that does not.
//!
//! The article explains why "SELECT, then act" fails and why `INSERT OR
//! IGNORE` / `INSERT OR REPLACE` are wrong. Each mistake is real, runnable
//! code here, so a reader can watch it fail — and watch [`Handler::Atomic`]
//! (the article's handler, [`crate::apply`]) survive the same schedule.
//!
//! Every handler runs as a sequence of single SQL statements ([`Handler::run`]
//! gives a [`Run`]), so the race lab can interleave two handlers statement
//! by statement on two real connections. A statement that cannot get its
//! lock returns [`Error::Busy`] and stays pending ("waiting for the write
//! lock"); calling [`Run::step`] again retries it.
//!
//! Invariant: only [`Handler::Atomic`] may be used for real. The others
//! exist to be raced and to fail; each one's doc comment names its mistake.
//!
//! Invariant: validation runs before *every* handler. [`Handler::run`] turns
//! the sender's [`Payload`] into an [`Event`] (the rules of
//! [`crate::event`]) before any handler sees it, and the mistakes hold that
//! `Event`, so no handler can store a negative amount or a 300-byte key in
//! the live database. The mistakes are wrong about deduplication — they may
//! credit twice or lose a credit — and about nothing else: a lesson about
//! `INSERT OR IGNORE` must not be able to write a row that no rule allows.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use rusqlite::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};

use crate::core::apply::{is_foreign_key, Delivery, Progress};
use crate::core::error::Error;
use crate::core::event::{Event, Field};
use crate::core::fault::Fault;
use crate::core::trace::Trace;
use crate::labs::script::rust::StepHandler;
use crate::labs::script::{Program, Script};

/// The input naming the handler (the race lab, the handler selector).
pub const HANDLER: Field = Field::new("handler");

/// Which handler processes a delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Handler {
    /// The article's handler: unique key + one transaction. Correct.
    Atomic,
    /// Mistake: no deduplication at all — credits every delivery, so every
    /// retry of a lost response is paid again.
    NoDedup,
    /// Mistake: "SELECT, then act" — looks in the inbox, credits, then
    /// records, each its own autocommit statement. Two handlers can both see
    /// "not there yet" and both credit.
    CheckThenAct,
    /// Mistake: registers the event in one transaction and credits in a
    /// second. A crash between the two leaves the event "processed" without
    /// its credit, and a concurrent repeat answers "duplicate" before the
    /// money is there.
    TwoTransactions,
    /// Mistake: `INSERT OR IGNORE` — takes "no row inserted" for "seen
    /// before" and never compares payloads: a redelivery of a known key with
    /// another amount or account is answered "duplicate" (200) instead of
    /// `payload_conflict` (422), so the sender's different payload is
    /// silently accepted as a repeat. (It would swallow a CHECK failure the
    /// same way; validation first keeps such rows from reaching it.)
    InsertOrIgnore,
    /// Mistake: `INSERT OR REPLACE` — deletes the first record and writes the
    /// new one: every repeat is applied again, and a replay with another
    /// payload rewrites history.
    InsertOrReplace,
}

impl Handler {
    /// Every handler, the correct one first.
    pub const ALL: [Handler; 6] = [
        Handler::Atomic,
        Handler::NoDedup,
        Handler::CheckThenAct,
        Handler::TwoTransactions,
        Handler::InsertOrIgnore,
        Handler::InsertOrReplace,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Handler::Atomic => "atomic",
            Handler::NoDedup => "no_dedup",
            Handler::CheckThenAct => "check_then_act",
            Handler::TwoTransactions => "two_transactions",
            Handler::InsertOrIgnore => "insert_or_ignore",
            Handler::InsertOrReplace => "insert_or_replace",
        }
    }

    /// A delivery of `payload` by this handler, not yet started. The payload
    /// is validated into an [`Event`] first, whichever the handler: the
    /// mistakes get their lesson wrong, not the input rules.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] if the payload is not a valid [`Event`]; then
    /// no handler runs and nothing is written.
    ///
    /// # Example
    /// ```
    /// use inbox_lab::labs::race::handlers::{Handler, Payload};
    ///
    /// let negative = Payload {
    ///     source: "provider-a".into(),
    ///     event_id: "evt-1".into(),
    ///     account_id: 1,
    ///     amount: -500,
    /// };
    /// for handler in Handler::ALL {
    ///     let refused = handler.run(&negative, None).map(|_| ()).unwrap_err();
    ///     assert_eq!(refused.kind(), "invalid_input");
    /// }
    /// ```
    pub fn run(self, payload: &Payload, fault: Option<Fault>) -> Result<Run, Error> {
        let event = payload.to_event()?;
        Ok(match self {
            Handler::Atomic => Run::Atomic(Delivery::new(event, fault)),
            mistake => Run::Mistake(Mistake {
                handler: mistake,
                event,
                fault,
                pc: 0,
                trace: Trace::default(),
            }),
        })
    }

    /// Runs one whole delivery. A busy statement gives up at once (SQLite
    /// already waited its timeout).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] before any SQL if the payload is not a valid
    /// [`Event`] (see [`Handler::run`]); otherwise whatever the handler
    /// answers; a busy statement is [`Error::Busy`].
    pub fn deliver(
        self,
        conn: &Connection,
        payload: &Payload,
        fault: Option<Fault>,
    ) -> Result<Answer, Error> {
        self.deliver_traced(conn, payload, fault).0
    }

    /// [`Handler::deliver`], and the [`Trace`] of what the handler ran (empty
    /// when the payload was refused before any SQL): what the page draws,
    /// so a mistake is shown failing in its own statements.
    pub fn deliver_traced(
        self,
        conn: &Connection,
        payload: &Payload,
        fault: Option<Fault>,
    ) -> (Result<Answer, Error>, Trace) {
        let mut run = match self.run(payload, fault) {
            Ok(run) => run,
            Err(refused) => return (Err(refused), Trace::default()),
        };
        let result = loop {
            match run.step(conn) {
                Ok(Some(answer)) => break Ok(answer),
                Ok(None) => {}
                Err(err) => break Err(run.give_up(conn, err)),
            }
        };
        (result, run.into_trace())
    }
}

impl fmt::Display for Handler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Handler {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Handler::ALL
            .into_iter()
            .find(|h| h.as_str() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Handler::ALL.iter().map(|h| h.as_str()).collect();
                format!(
                    "unknown handler {s:?}: expected one of {}",
                    names.join(", ")
                )
            })
    }
}

/// An event's four fields as the sender sent them, not yet validated.
/// [`Handler::run`] validates it into an [`Event`] before any handler —
/// careless or not — runs.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Payload {
    pub source: String,
    pub event_id: String,
    pub account_id: i64,
    pub amount: i64,
}

impl Payload {
    /// Validates into an [`Event`].
    ///
    /// # Errors
    /// [`Error::InvalidInput`].
    pub fn to_event(&self) -> Result<Event, Error> {
        Event::new(
            self.source.clone(),
            self.event_id.clone(),
            self.account_id,
            self.amount,
        )
    }
}

impl From<&Event> for Payload {
    fn from(e: &Event) -> Self {
        Payload {
            source: e.source().to_owned(),
            event_id: e.event_id().to_owned(),
            account_id: e.account_id(),
            amount: e.amount(),
        }
    }
}

/// What a handler answered, as the sender hears it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Answer {
    Applied,
    Duplicate,
}

impl Answer {
    pub fn as_str(self) -> &'static str {
        match self {
            Answer::Applied => "applied",
            Answer::Duplicate => "duplicate",
        }
    }
}

/// One delivery in progress, by any handler.
#[derive(Debug, Clone)]
pub enum Run {
    Atomic(Delivery),
    Mistake(Mistake),
    /// A handler written in the handler language ([`crate::labs::script`]).
    Script(Script),
}

/// Who handles a race's or a judge's deliveries: a built-in handler, a
/// handler program (with the name it is shown by), or a handler written in
/// Rust (the workshop's, [`crate::labs::workshop`]).
#[derive(Debug, Clone)]
pub enum Contender {
    Builtin(Handler),
    Script { name: String, program: Arc<Program> },
    Rust(&'static dyn StepHandler),
}

impl Contender {
    pub fn name(&self) -> String {
        match self {
            Contender::Builtin(h) => h.as_str().to_owned(),
            Contender::Script { name, .. } => name.clone(),
            Contender::Rust(h) => h.name().to_owned(),
        }
    }

    /// A delivery of `payload`, not yet started (validated first, as
    /// [`Handler::run`] does).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] if the payload is not a valid [`Event`].
    pub fn run(&self, payload: &Payload) -> Result<Run, Error> {
        match self {
            Contender::Builtin(h) => h.run(payload, None),
            Contender::Script { program, .. } => Ok(Run::Script(Script::new(
                program.clone(),
                payload.to_event()?,
            ))),
            Contender::Rust(h) => Ok(Run::Script(Script::rust(*h, payload.to_event()?)?)),
        }
    }
}

impl From<Handler> for Contender {
    fn from(h: Handler) -> Self {
        Contender::Builtin(h)
    }
}

impl Run {
    /// The SQL the next [`Run::step`] runs; `None` when finished.
    pub fn next_statements(&self) -> Option<&'static [&'static str]> {
        match self {
            Run::Atomic(d) => d.next_step().map(|s| s.statements()),
            Run::Mistake(m) => m.next_op().map(Op::statements),
            Run::Script(s) => s.next_statements(),
        }
    }

    /// Runs the next statement: `Ok(None)` — more to run; `Ok(Some)` — the
    /// answer.
    ///
    /// # Errors
    /// [`Error::Busy`]: nothing happened, try the same statement later.
    /// Anything else: the delivery failed (an open transaction was rolled
    /// back) and is finished.
    pub fn step(&mut self, conn: &Connection) -> Result<Option<Answer>, Error> {
        match self {
            Run::Atomic(d) => Ok(match d.step(conn)? {
                Progress::Next(_) => None,
                Progress::Done(outcome) => Some(match outcome {
                    crate::Outcome::Applied(_) => Answer::Applied,
                    crate::Outcome::Duplicate(_) => Answer::Duplicate,
                }),
            }),
            Run::Mistake(m) => m.step(conn),
            Run::Script(s) => s.step(conn),
        }
    }

    /// The statements run so far, each with its effect.
    pub fn trace(&self) -> &Trace {
        match self {
            Run::Atomic(d) => d.trace(),
            Run::Mistake(m) => &m.trace,
            Run::Script(s) => s.trace(),
        }
    }

    pub fn into_trace(self) -> Trace {
        match self {
            Run::Atomic(d) => d.into_trace(),
            Run::Mistake(m) => m.trace,
            Run::Script(s) => s.into_trace(),
        }
    }

    /// Ends the delivery after `err` from [`Run::step`]. Only an
    /// [`Error::Busy`] leaves it unfinished: that statement is recorded as
    /// failed and the transaction rolled back. Returns `err`.
    pub fn give_up(&mut self, conn: &Connection, err: Error) -> Error {
        if self.finished() {
            return err;
        }
        match self {
            Run::Atomic(d) => d.give_up(conn, err),
            Run::Mistake(m) => {
                if let Some(op) = m.next_op() {
                    m.trace.failed(op.as_str(), op.statements(), 0);
                }
                m.end(conn, err)
            }
            Run::Script(s) => s.give_up(conn, err),
        }
    }

    /// The next statement waited past the lock timeout: the delivery ends.
    /// A built-in answers [`Error::Busy`] (503, never "duplicate"); a
    /// handler program answers what its `ON BUSY` line says, if it has one.
    ///
    /// # Errors
    /// [`Error::Busy`], or the error its `ON BUSY` answer means.
    pub fn time_out(&mut self, conn: &Connection) -> Result<Answer, Error> {
        match self {
            Run::Script(s) => s.time_out(conn),
            other => Err(other.give_up(conn, Error::Busy)),
        }
    }

    /// Whether the delivery has answered or failed.
    pub fn finished(&self) -> bool {
        match self {
            Run::Atomic(d) => d.next_step().is_none(),
            Run::Mistake(m) => m.next_op().is_none(),
            Run::Script(s) => s.finished(),
        }
    }

    /// Ends the delivery, rolling back an open transaction.
    ///
    /// # Errors
    /// Storage errors from `ROLLBACK`.
    pub fn abort(&mut self, conn: &Connection) -> Result<(), Error> {
        match self {
            Run::Atomic(d) => d.abort(conn),
            Run::Mistake(m) => {
                m.pc = FINISHED;
                m.trace.abort(conn)
            }
            Run::Script(s) => s.abort(conn),
        }
    }
}

/// One statement of a mistaken handler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Begin,
    Commit,
    /// `SELECT` the inbox row (check_then_act's "check").
    Check,
    /// Unconditional credit (no limit guard: the mistakes do not care).
    Credit,
    /// Plain `INSERT` (check_then_act's late "record").
    Insert,
    /// `INSERT ... ON CONFLICT DO NOTHING` (two_transactions' registration).
    InsertOnConflict,
    /// Read the stored payload after a conflict.
    ReadStored,
    InsertOrIgnore,
    InsertOrReplace,
}

impl Op {
    /// The op's stable name (in a [`Trace`]; the timeline labels it).
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Begin => "begin",
            Op::Commit => "commit",
            Op::Check => "check",
            Op::Credit => "credit",
            Op::Insert | Op::InsertOnConflict => "insert",
            Op::ReadStored => "read_stored",
            Op::InsertOrIgnore => "insert_or_ignore",
            Op::InsertOrReplace => "insert_or_replace",
        }
    }

    /// The statement, as shown to readers.
    pub fn statements(self) -> &'static [&'static str] {
        match self {
            Op::Begin => &["BEGIN IMMEDIATE"],
            Op::Commit => &["COMMIT"],
            Op::Check | Op::ReadStored => {
                &["SELECT account_id, amount FROM inbox WHERE source = ?1 AND event_id = ?2"]
            }
            Op::Credit => &["UPDATE accounts SET balance = balance + ?1 WHERE id = ?2"],
            Op::Insert => &["INSERT INTO inbox(source, event_id, account_id, amount) \
                 VALUES (?1, ?2, ?3, ?4)"],
            Op::InsertOnConflict => &["INSERT INTO inbox(source, event_id, account_id, amount) \
                 VALUES (?1, ?2, ?3, ?4) ON CONFLICT(source, event_id) DO NOTHING"],
            Op::InsertOrIgnore => &[
                "INSERT OR IGNORE INTO inbox(source, event_id, account_id, amount) \
                 VALUES (?1, ?2, ?3, ?4)",
            ],
            Op::InsertOrReplace => &[
                "INSERT OR REPLACE INTO inbox(source, event_id, account_id, amount) \
                 VALUES (?1, ?2, ?3, ?4)",
            ],
        }
    }

    fn sql(self) -> &'static str {
        self.statements()[0]
    }
}

/// A mistaken handler's delivery: a program of [`Op`]s and a program
/// counter `pc` into it ([`FINISHED`] once finished), recording each op in
/// its [`Trace`]. It holds a validated [`Event`]: whatever it gets wrong, it
/// writes only values the rules allow.
#[derive(Debug, Clone)]
pub struct Mistake {
    handler: Handler,
    event: Event,
    fault: Option<Fault>,
    pc: usize,
    trace: Trace,
}

/// The program counter of a finished [`Mistake`].
const FINISHED: usize = usize::MAX;

/// The straight-line programs. When an INSERT finds the row already there,
/// the run jumps to [`DUPLICATE_TAIL`] instead.
fn program(handler: Handler) -> &'static [Op] {
    use Op::*;
    match handler {
        Handler::NoDedup => &[Credit],
        Handler::CheckThenAct => &[Check, Credit, Insert],
        Handler::TwoTransactions => &[Begin, InsertOnConflict, Commit, Begin, Credit, Commit],
        Handler::InsertOrIgnore => &[Begin, Op::InsertOrIgnore, Credit, Commit],
        Handler::InsertOrReplace => &[Begin, Op::InsertOrReplace, Credit, Commit],
        Handler::Atomic => &[],
    }
}

/// What a mistaken handler runs after it decided "duplicate" inside an open
/// transaction: read (two_transactions compares) and commit.
const DUPLICATE_TAIL: usize = 1000;

impl Mistake {
    fn next_op(&self) -> Option<Op> {
        match self.pc {
            DUPLICATE_TAIL => Some(Op::ReadStored),
            pc if pc == DUPLICATE_TAIL + 1 => Some(Op::Commit),
            pc => program(self.handler).get(pc).copied(),
        }
    }

    fn step(&mut self, conn: &Connection) -> Result<Option<Answer>, Error> {
        let Some(op) = self.next_op() else {
            return Err(Error::storage("this delivery has already finished"));
        };
        let pc = self.pc;
        match self.run_op(conn, op) {
            Ok((answer, rows)) => {
                if op == Op::Commit {
                    self.trace.committed(op.as_str(), op.statements());
                } else if conn.is_autocommit() {
                    // No transaction: the statement is kept the moment it ran.
                    self.trace.autocommitted(op.as_str(), op.statements(), rows);
                } else {
                    self.trace.ran(op.as_str(), op.statements(), rows);
                }
                if let Some(fault) = self.fault.filter(|&f| self.fires_after(f, op, pc, rows)) {
                    self.trace.crashed();
                    return Err(self.end(conn, fault.crash()));
                }
                Ok(answer)
            }
            Err(Error::Busy) => Err(Error::Busy), // retry the same op later
            Err(err) => {
                self.trace.failed(op.as_str(), op.statements(), 0);
                Err(self.end(conn, err))
            }
        }
    }

    /// Whether `fault` fires after `op` (run at program counter `pc`,
    /// changing `rows`): "after insert" right after the statement that
    /// registered the event inserted its row — for two_transactions, after
    /// the transaction holding that INSERT committed, between its two
    /// transactions (its lesson); "after update" right after the credit.
    fn fires_after(&self, fault: Fault, op: Op, pc: usize, rows: usize) -> bool {
        match fault {
            Fault::AfterInsert if self.handler == Handler::TwoTransactions => {
                op == Op::Commit && pc == 2
            }
            Fault::AfterInsert => {
                matches!(op, Op::Insert | Op::InsertOrIgnore | Op::InsertOrReplace) && rows > 0
            }
            Fault::AfterUpdate => op == Op::Credit,
        }
    }

    /// Finishes the delivery after `err`, rolling back (see [`Trace::roll_back`]).
    fn end(&mut self, conn: &Connection, err: Error) -> Error {
        self.pc = FINISHED;
        self.trace.roll_back(conn, err)
    }

    /// Runs one op: the answer if it ends the delivery, and the rows it
    /// changed. Moves the program counter.
    fn run_op(&mut self, conn: &Connection, op: Op) -> Result<(Option<Answer>, usize), Error> {
        let e = &self.event;
        let key = params![e.source(), e.event_id()];
        let row = params![e.source(), e.event_id(), e.account_id(), e.amount()];
        match op {
            Op::Begin => {
                conn.execute_batch(op.sql())?;
                Ok((self.advance(), 0))
            }
            Op::Commit if self.pc == DUPLICATE_TAIL + 1 => {
                conn.execute_batch(op.sql())?;
                self.pc = FINISHED;
                Ok((Some(Answer::Duplicate), 0))
            }
            Op::Commit => {
                conn.execute_batch(op.sql())?;
                Ok((self.advance(), 0))
            }
            Op::Check => {
                let stored: Option<(i64, i64)> = conn
                    .query_row(op.sql(), key, |r| Ok((r.get(0)?, r.get(1)?)))
                    .optional()?;
                match stored {
                    None => Ok((self.advance(), 0)),
                    Some(stored) => {
                        self.pc = FINISHED;
                        Ok((Some(self.compare(stored)?), 0))
                    }
                }
            }
            Op::Credit => {
                let changed = conn.execute(op.sql(), params![e.amount(), e.account_id()])?;
                if changed == 0 {
                    return Err(Error::UnknownAccount {
                        account_id: e.account_id(),
                    });
                }
                Ok((self.advance(), changed))
            }
            Op::Insert | Op::InsertOrReplace => {
                let inserted = conn
                    .execute(op.sql(), row)
                    .map_err(|err| insert_failed(e, err))?;
                Ok((self.advance(), inserted))
            }
            Op::InsertOnConflict | Op::InsertOrIgnore => {
                let inserted = conn
                    .execute(op.sql(), row)
                    .map_err(|err| insert_failed(e, err))?;
                if inserted == 0 {
                    // two_transactions compares the stored payload; INSERT OR
                    // IGNORE's handler just believes it saw a repeat — with
                    // another amount too (its lesson).
                    self.pc = if op == Op::InsertOnConflict {
                        DUPLICATE_TAIL
                    } else {
                        DUPLICATE_TAIL + 1
                    };
                    return Ok((None, 0));
                }
                Ok((self.advance(), inserted))
            }
            Op::ReadStored => {
                let stored: (i64, i64) =
                    conn.query_row(op.sql(), key, |r| Ok((r.get(0)?, r.get(1)?)))?;
                self.compare(stored)?;
                self.pc = DUPLICATE_TAIL + 1;
                Ok((None, 0))
            }
        }
    }

    /// Moves to the next op; reaching the end of the program means applied.
    fn advance(&mut self) -> Option<Answer> {
        self.pc += 1;
        (self.pc == program(self.handler).len()).then_some(Answer::Applied)
    }

    fn compare(&self, (account_id, amount): (i64, i64)) -> Result<Answer, Error> {
        let e = &self.event;
        if (account_id, amount) == (e.account_id(), e.amount()) {
            Ok(Answer::Duplicate)
        } else {
            Err(Error::payload_conflict(e, (account_id, amount)))
        }
    }
}

/// A mistake's INSERT refused by a constraint, in its own words. The foreign
/// key means the account does not exist (as in [`crate::apply`]). Any other
/// constraint — check_then_act's INSERT meeting the key another delivery
/// registered after its check — is SQLite's own message, not a damaged
/// database: the database is fine, the handler is wrong.
fn insert_failed(e: &Event, err: rusqlite::Error) -> Error {
    if is_foreign_key(&err) {
        return Error::UnknownAccount {
            account_id: e.account_id(),
        };
    }
    match err.sqlite_error_code() {
        Some(rusqlite::ErrorCode::ConstraintViolation) => Error::storage(err.to_string()),
        _ => Error::from(err),
    }
}
