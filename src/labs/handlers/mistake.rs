//! The built-in mistakes as a step machine: a straight-line program of
//! [`Op`]s per handler, run one statement per step ([`Mistake`]).

use rusqlite::{params, Connection, OptionalExtension};

use super::{Answer, Handler};
use crate::core::apply::is_foreign_key;
use crate::core::error::Error;
use crate::core::event::Event;
use crate::core::fault::Fault;
use crate::core::trace::Trace;

/// One statement of a mistaken handler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Op {
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
    /// A delivery of `event` by the mistaken `handler`, not yet started.
    pub(super) fn new(handler: Handler, event: Event, fault: Option<Fault>) -> Mistake {
        Mistake {
            handler,
            event,
            fault,
            pc: 0,
            trace: Trace::default(),
        }
    }

    pub(super) fn next_statements(&self) -> Option<&'static [&'static str]> {
        self.next_op().map(Op::statements)
    }

    pub(super) fn finished(&self) -> bool {
        self.next_op().is_none()
    }

    pub(super) fn trace(&self) -> &Trace {
        &self.trace
    }

    pub(super) fn into_trace(self) -> Trace {
        self.trace
    }

    /// Ends the delivery after `err`: the statement that could not run is
    /// recorded as failed, the transaction rolled back.
    pub(super) fn give_up(&mut self, conn: &Connection, err: Error) -> Error {
        if let Some(op) = self.next_op() {
            self.trace.failed(op.as_str(), op.statements(), 0);
        }
        self.end(conn, err)
    }

    pub(super) fn abort(&mut self, conn: &Connection) -> Result<(), Error> {
        self.pc = FINISHED;
        self.trace.abort(conn)
    }

    fn next_op(&self) -> Option<Op> {
        match self.pc {
            DUPLICATE_TAIL => Some(Op::ReadStored),
            pc if pc == DUPLICATE_TAIL + 1 => Some(Op::Commit),
            pc => program(self.handler).get(pc).copied(),
        }
    }

    pub(super) fn step(&mut self, conn: &Connection) -> Result<Option<Answer>, Error> {
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
