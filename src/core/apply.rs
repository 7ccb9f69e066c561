//! The apply transaction: the heart of the article.
//!
//! ```text
//! BEGIN IMMEDIATE                      -- take the write lock first
//! INSERT INTO inbox ... ON CONFLICT(source, event_id) DO NOTHING
//!   1 row  -> new event:  UPDATE accounts (credit), store the receipt
//!   0 rows -> seen before: read the stored payload;
//!             same payload -> Duplicate(stored receipt), else PayloadConflict
//! COMMIT                               -- inbox row + credit + receipt, or nothing
//! ```
//!
//! Invariants:
//! * The unique key `(source, event_id)` decides which delivery is first.
//!   Nothing here reads "is it there?" and then acts: that is the race the
//!   article warns about.
//! * Registering the event, crediting the balance and storing the receipt
//!   commit in **one** transaction. Any error — invalid account, balance
//!   limit, busy, a fault point, a storage failure — rolls all of it back.
//! * `ON CONFLICT ... DO NOTHING` reacts only to the key. `INSERT OR IGNORE`
//!   would also swallow NOT NULL/CHECK failures and call them repeats;
//!   `INSERT OR REPLACE` would rewrite the first record. Neither is used.
//! * A lock timeout is [`Error::Busy`], never a duplicate.
//!
//! The transaction is written as a small state machine, [`Delivery`], so the
//! page can run it one step at a time (step mode: one statement each, the
//! receipt's two); [`apply`] simply runs
//! every step.

use rusqlite::{params, Connection, ErrorCode, OptionalExtension};

use crate::core::error::{Error, StorageCode};
use crate::core::event::Event;
use crate::core::fault::Fault;
use crate::core::outcome::{Outcome, Receipt};
use crate::core::schema::{MAX_BALANCE, MAX_RECEIPT};
use crate::core::trace::{Statements, Trace};

crate::core::named::named! {
    /// One step of the apply transaction, in the order they run.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
    #[serde(rename_all = "snake_case")]
    pub enum Step("step") {
        /// Take the write lock before reading anything.
        Begin => "begin",
        /// Try to register the event; the unique key decides.
        Insert => "insert",
        /// Only after a conflict: compare the stored payload with this one.
        ReadStored => "read_stored",
        /// Only for a new event: add the amount, guarded against the limit.
        Credit => "credit",
        /// Store the first result (receipt number, balance after) in the inbox row.
        StoreReceipt => "store_receipt",
        /// Make it all durable at once.
        Commit => "commit",
    }
}

impl Step {
    /// This step and the ones after it up to [`Step::Commit`], on the way
    /// the transaction takes from here (a stored payload is read, then
    /// committed; anything else goes on to the credit and the receipt).
    fn way_on(self) -> impl Iterator<Item = Step> {
        const NEW: [Step; 5] = [
            Step::Begin,
            Step::Insert,
            Step::Credit,
            Step::StoreReceipt,
            Step::Commit,
        ];
        let way: &[Step] = match self {
            Step::ReadStored => &[Step::ReadStored, Step::Commit],
            _ => &NEW[NEW.iter().position(|&s| s == self).unwrap_or(0)..],
        };
        way.iter().copied()
    }

    /// The SQL statements this step runs, as shown to readers.
    pub fn statements(self) -> Statements {
        match self {
            Step::Begin => &[SQL_BEGIN],
            Step::Insert => &[SQL_INSERT],
            Step::ReadStored => &[SQL_READ_STORED],
            Step::Credit => &[SQL_CREDIT],
            Step::StoreReceipt => &[SQL_BUMP_SEQ, SQL_WRITE_RECEIPT],
            Step::Commit => &[SQL_COMMIT],
        }
    }
}

const SQL_BEGIN: &str = "BEGIN IMMEDIATE";
const SQL_INSERT: &str = "INSERT INTO inbox(source, event_id, account_id, amount, received_at)
VALUES (?1, ?2, ?3, ?4, (SELECT now FROM lab_clock))
ON CONFLICT(source, event_id) DO NOTHING";
const SQL_READ_STORED: &str = "SELECT account_id, amount, receipt_seq, balance_after
FROM inbox WHERE source = ?1 AND event_id = ?2";
// The `balance <= limit - amount` guard keeps SQLite from ever computing a
// sum past the limit (an int64 overflow would silently turn into a REAL).
const SQL_CREDIT: &str = "UPDATE accounts SET balance = balance + ?1
WHERE id = ?2 AND balance <= ?3 - ?1
RETURNING balance";
// Receipt numbers stay below 2^53 like balances, so JavaScript shows them
// exactly; the guard keeps SQLite from ever computing past it.
const SQL_BUMP_SEQ: &str = "UPDATE receipt_counter SET last_seq = last_seq + 1
WHERE id = 1 AND last_seq < ?1 RETURNING last_seq";
const SQL_WRITE_RECEIPT: &str = "UPDATE inbox SET receipt_seq = ?1, balance_after = ?2
WHERE source = ?3 AND event_id = ?4";
const SQL_COMMIT: &str = "COMMIT";

/// Where a [`Delivery`] stands after a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// More steps to run; the transaction is open.
    Next(Step),
    /// Committed: the delivery's answer.
    Done(Outcome),
}

/// One delivery of one event, run as a sequence of [`Step`]s on one
/// connection, recording each in its [`Trace`].
///
/// After an `Err` from [`Delivery::step`] the transaction has been rolled
/// back and the delivery is finished. A delivery abandoned half-way must be
/// ended with [`Delivery::abort`], or its transaction stays open.
#[derive(Debug, Clone)]
pub struct Delivery {
    event: Event,
    fault: Option<Fault>,
    next: Option<Step>,
    /// Set once the outcome is known, committed by [`Step::Commit`].
    pending: Option<Outcome>,
    /// Balance after the credit, between [`Step::Credit`] and the receipt.
    balance_after: Option<i64>,
    /// What ran so far, and what became of it.
    trace: Trace,
}

impl Delivery {
    /// A delivery that has not started yet; its first step is [`Step::Begin`].
    pub fn new(event: Event, fault: Option<Fault>) -> Self {
        Delivery {
            event,
            fault,
            next: Some(Step::Begin),
            pending: None,
            balance_after: None,
            trace: Trace::default(),
        }
    }

    /// The steps that ran so far, each with its effect.
    pub fn trace(&self) -> &Trace {
        &self.trace
    }

    pub fn into_trace(self) -> Trace {
        self.trace
    }

    pub fn event(&self) -> &Event {
        &self.event
    }

    /// The outcome this delivery will commit, once it is known (before
    /// [`Step::Commit`] runs).
    pub fn pending(&self) -> Option<Outcome> {
        self.pending
    }

    /// The step the next call to [`Delivery::step`] runs; `None` when finished.
    pub fn next_step(&self) -> Option<Step> {
        self.next
    }

    /// Runs the next step.
    ///
    /// # Errors
    /// [`Error::Busy`]: the step could not get its lock and did nothing; the
    /// delivery stays where it was, so the step can be tried again later (the
    /// race lab does) or the delivery ended with [`Delivery::abort`] (what
    /// [`apply`] does). Any other [`Error`]: the transaction has been rolled
    /// back and the delivery is finished.
    pub fn step(&mut self, conn: &Connection) -> Result<Progress, Error> {
        let Some(step) = self.next.take() else {
            return Err(Error::storage("this delivery has already finished"));
        };
        match self.run(conn, step) {
            Ok((progress, rows)) => {
                if step == Step::Commit {
                    self.trace.committed(step.as_str(), step.statements());
                } else {
                    self.trace.ran(step.as_str(), step.statements(), rows);
                }
                // A fault point fires after its step's statements ran.
                if let Some(fault) = self.fault.filter(|&f| fires_after(f, step, progress)) {
                    self.trace.crashed();
                    if let Progress::Next(next) = progress {
                        self.trace
                            .not_reached(next.way_on().map(|s| (s.as_str(), s.statements())));
                    }
                    return Err(self.rollback(conn, fault.crash()));
                }
                if let Progress::Next(step) = progress {
                    self.next = Some(step);
                }
                Ok(progress)
            }
            Err(Error::Busy) => {
                self.next = Some(step);
                Err(Error::Busy)
            }
            Err(err) => {
                self.trace.failed(step.as_str(), step.statements(), 0);
                Err(self.rollback(conn, err))
            }
        }
    }

    /// Ends the delivery after `err` (an [`Error::Busy`] the caller will
    /// not wait out): the step that could not run is recorded as failed,
    /// the transaction rolled back. Returns `err`.
    pub fn give_up(&mut self, conn: &Connection, err: Error) -> Error {
        if let Some(step) = self.next.take() {
            self.trace.failed(step.as_str(), step.statements(), 0);
        }
        self.rollback(conn, err)
    }

    /// Ends an unfinished delivery by rolling its transaction back (what
    /// "throw" does in step mode). Does nothing if it never began.
    ///
    /// # Errors
    /// Storage errors from `ROLLBACK`.
    pub fn abort(&mut self, conn: &Connection) -> Result<(), Error> {
        self.next = None;
        self.trace.abort(conn)
    }

    /// The crash point of step mode's "throw": the reader makes the handler
    /// fail wherever the delivery stands. It fires before `COMMIT` (a
    /// stepped delivery's transaction is still open), so it rolls back.
    pub const THROWN: &'static str = "step_throw";

    /// Step mode's "throw": the crash is recorded, then [`Delivery::abort`];
    /// returns the [`Error::SimulatedCrash`] at [`Delivery::THROWN`] a
    /// failing handler would answer.
    ///
    /// # Errors
    /// Storage errors from `ROLLBACK` (returned as `Err`; the crash itself
    /// is the `Ok` value, the error to answer with).
    pub fn throw(&mut self, conn: &Connection) -> Result<Error, Error> {
        self.trace.crashed();
        self.abort(conn)?;
        Ok(Error::SimulatedCrash {
            point: Self::THROWN,
        })
    }

    /// Finishes the delivery after `err`, rolling back (see [`Trace::roll_back`]).
    fn rollback(&mut self, conn: &Connection, err: Error) -> Error {
        self.next = None;
        self.trace.roll_back(conn, err)
    }

    // Every statement is compiled once per connection and then reused
    // (`prepare_cached`): compiling SQL costs more than running these small
    // statements, and a delivery runs up to seven of them.
    fn run(&mut self, conn: &Connection, step: Step) -> Result<(Progress, usize), Error> {
        let e = &self.event;
        match step {
            Step::Begin => {
                if !conn.is_autocommit() {
                    return Err(Error::storage(
                        "a transaction is already open on this connection",
                    ));
                }
                conn.prepare_cached(SQL_BEGIN)?.execute([])?;
                Ok((Progress::Next(Step::Insert), 0))
            }
            Step::Insert => {
                let inserted = conn
                    .prepare_cached(SQL_INSERT)
                    .and_then(|mut insert| {
                        insert.execute(params![
                            e.source(),
                            e.event_id(),
                            e.account_id(),
                            e.amount()
                        ])
                    })
                    .map_err(|err| match err.sqlite_error_code() {
                        // The foreign key refused the row: the account does not exist.
                        Some(ErrorCode::ConstraintViolation) if is_foreign_key(&err) => {
                            Error::UnknownAccount {
                                account_id: e.account_id(),
                            }
                        }
                        _ => Error::from(err),
                    })?;
                if inserted == 0 {
                    return Ok((Progress::Next(Step::ReadStored), 0));
                }
                Ok((Progress::Next(Step::Credit), inserted))
            }
            Step::ReadStored => {
                let (account_id, amount, seq, balance_after): (i64, i64, Option<i64>, Option<i64>) =
                    conn.prepare_cached(SQL_READ_STORED)?
                        .query_row(params![e.source(), e.event_id()], |r| {
                            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
                        })?;
                if (account_id, amount) != (e.account_id(), e.amount()) {
                    return Err(Error::payload_conflict(e, (account_id, amount)));
                }
                let (Some(seq), Some(balance_after)) = (seq, balance_after) else {
                    // Only the race lab's mistaken handlers write rows without
                    // a receipt; there is no first result to answer with, and
                    // a retry would meet the same row: not retryable.
                    return Err(Error::NoStoredResult {
                        event_source: e.source().to_owned(),
                        event_id: e.event_id().to_owned(),
                    });
                };
                self.pending = Some(Outcome::Duplicate(Receipt { seq, balance_after }));
                Ok((Progress::Next(Step::Commit), 0))
            }
            Step::Credit => {
                let credited: Option<i64> = conn
                    .prepare_cached(SQL_CREDIT)?
                    .query_row(params![e.amount(), e.account_id(), MAX_BALANCE], |r| {
                        r.get(0)
                    })
                    .optional()?;
                let balance = match credited {
                    // The Rust-side guard: SQLite's answer must itself be in range.
                    Some(b) if (0..=MAX_BALANCE).contains(&b) => b,
                    Some(b) => {
                        return Err(Error::storage(format!(
                            "balance {b} out of range after credit"
                        )))
                    }
                    None => return Err(self.why_not_credited(conn)),
                };
                self.balance_after = Some(balance);
                Ok((Progress::Next(Step::StoreReceipt), 1))
            }
            Step::StoreReceipt => {
                let balance_after = self
                    .balance_after
                    .ok_or_else(|| Error::storage("receipt stored before the credit"))?;
                let seq: Option<i64> = conn
                    .prepare_cached(SQL_BUMP_SEQ)?
                    .query_row(params![MAX_RECEIPT], |r| r.get(0))
                    .optional()?;
                let Some(seq) = seq else {
                    return Err(Error::storage_with(
                        StorageCode::Unusable,
                        format!("receipt numbers are exhausted (the counter is at {MAX_RECEIPT} or missing)"),
                    ));
                };
                let written = conn.prepare_cached(SQL_WRITE_RECEIPT)?.execute(params![
                    seq,
                    balance_after,
                    e.source(),
                    e.event_id()
                ])?;
                self.pending = Some(Outcome::Applied(Receipt { seq, balance_after }));
                // The counter row and the inbox row.
                Ok((Progress::Next(Step::Commit), 1 + written))
            }
            Step::Commit => {
                let outcome = self
                    .pending
                    .ok_or_else(|| Error::storage("commit before the outcome was known"))?;
                conn.prepare_cached(SQL_COMMIT)?.execute([])?;
                Ok((Progress::Done(outcome), 0))
            }
        }
    }

    /// The guarded UPDATE matched no row: the account is missing (only
    /// possible if foreign keys were off) or the credit would pass the limit.
    fn why_not_credited(&self, conn: &Connection) -> Error {
        let e = &self.event;
        let balance = conn
            .query_row(
                "SELECT balance FROM accounts WHERE id = ?1",
                params![e.account_id()],
                |r| r.get::<_, i64>(0),
            )
            .optional();
        match balance {
            Ok(Some(balance)) => Error::BalanceLimit {
                account_id: e.account_id(),
                balance,
                amount: e.amount(),
                limit: MAX_BALANCE,
            },
            Ok(None) => Error::UnknownAccount {
                account_id: e.account_id(),
            },
            Err(err) => Error::from(err),
        }
    }
}

/// Applies one delivery of `event` in one transaction.
///
/// `fault` makes the handler fail on purpose at that point (teaching); the
/// transaction then rolls back.
///
/// # Errors
/// Every [`Error`] except `InvalidInput` (the [`Event`] is already valid).
/// Whatever the error, nothing of this call was written.
///
/// # Example
/// ```
/// use inbox_lab::core::schema;
/// use inbox_lab::{apply, Event, Outcome};
/// let mut conn = rusqlite::Connection::open_in_memory().unwrap();
/// schema::prepare(&conn, schema::DEFAULT_BUSY_TIMEOUT).unwrap();
/// schema::init(&mut conn, &[1]).unwrap();
/// let e = Event::new("provider-a", "evt-1", 1, 500).unwrap();
/// let first = apply(&conn, &e, None).unwrap();
/// assert!(matches!(first, Outcome::Applied(_)));
/// assert_eq!(apply(&conn, &e, None).unwrap(), Outcome::Duplicate(first.receipt()));
/// ```
pub fn apply(conn: &Connection, event: &Event, fault: Option<Fault>) -> Result<Outcome, Error> {
    apply_traced(conn, event, fault).0
}

/// [`apply`], and the [`Trace`] of what it ran: every step with its effect
/// (what the page draws).
pub fn apply_traced(
    conn: &Connection,
    event: &Event,
    fault: Option<Fault>,
) -> (Result<Outcome, Error>, Trace) {
    let mut delivery = Delivery::new(event.clone(), fault);
    let result = loop {
        match delivery.step(conn) {
            Ok(Progress::Done(outcome)) => break Ok(outcome),
            Ok(Progress::Next(_)) => {}
            // SQLite already waited the busy timeout: give up, write nothing.
            Err(Error::Busy) => break Err(delivery.give_up(conn, Error::Busy)),
            Err(err) => break Err(err),
        }
    };
    (result, delivery.into_trace())
}

/// Whether `fault` fires after `step` ran and led to `progress`: after the
/// INSERT that registered a new event, or after the receipt (the last write
/// before `COMMIT`).
fn fires_after(fault: Fault, step: Step, progress: Progress) -> bool {
    match fault {
        Fault::AfterInsert => step == Step::Insert && progress == Progress::Next(Step::Credit),
        Fault::AfterUpdate => step == Step::StoreReceipt,
    }
}

/// Whether SQLite refused a statement because of a foreign key.
pub(crate) fn is_foreign_key(err: &rusqlite::Error) -> bool {
    matches!(
        err,
        rusqlite::Error::SqliteFailure(e, _)
            if e.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_FOREIGNKEY
    )
}
