//! Side effects: where one transaction stops helping, and the transactional
//! outbox that takes over.
//!
//! A credit should "notify the user". The notification goes to another
//! system (a [`Receiver`]), which no SQLite transaction of ours can include.
//! Three ways to do it, each runnable ([`deliver`] with a [`Strategy`]):
//!
//! * [`Strategy::SendBeforeCommit`] — send, then commit. A failure before
//!   `COMMIT` rolls the credit back, but a rollback cannot unsend: the user
//!   is told about money that never arrived.
//! * [`Strategy::SendAfterCommit`] — commit, then send. A crash between the
//!   two loses the notification; the sender's retry is a duplicate, so it is
//!   never sent.
//! * [`Strategy::Outbox`] — write the notification into the `outbox` table
//!   in the **same** transaction as the credit and the inbox row; a separate
//!   dispatcher ([`dispatch_one`]) sends it later and then marks it sent.
//!   Nothing is lost and nothing is sent for a rolled-back credit — but a
//!   crash after sending and before marking sends it again: the outbox is
//!   **at-least-once**, so the receiver must deduplicate by message id,
//!   with the same pattern as our inbox ([`Receiver::open`] with `dedup`).
//!
//! Invariant: with [`Strategy::Outbox`] and a deduplicating receiver, the
//! user sees exactly one notification per committed credit, whatever the
//! crash schedule (`tests/scheme_ends.rs` checks it over random schedules).

use rusqlite::{params, Connection, OptionalExtension, Transaction, TransactionBehavior};
use serde::Serialize;

use crate::core::apply::{Delivery, Progress, Step};
use crate::core::error::{Error, StorageCode};
use crate::core::fault::Fault;
use crate::core::schema;
use crate::{Event, Outcome};

crate::core::named::named! {
    /// How the handler notifies the user of a credit.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum Strategy("strategy") {
        SendBeforeCommit => "send_before_commit",
        SendAfterCommit => "send_after_commit",
        Outbox => "outbox",
    }
}

/// One notification: "account A was credited N", as sent and as shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Notification {
    /// What the receiver deduplicates on: `outbox:<id>` for outbox messages,
    /// `event:<source>/<event_id>` for direct sends.
    pub message_id: String,
    pub account_id: i64,
    pub amount: i64,
}

/// The other system: it shows notifications to the user. It keeps them in
/// its own database — another connection, another file — because its state
/// is not ours to roll back.
pub struct Receiver {
    conn: Connection,
    dedup: bool,
}

impl Receiver {
    /// A receiver on `conn` (its own database), with an inbox of message ids
    /// that counts every arrival. With `dedup`, it shows each message once.
    ///
    /// # Errors
    /// Storage errors.
    pub fn open(conn: Connection, dedup: bool) -> Result<Receiver, Error> {
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS shown (
                 seq        INTEGER PRIMARY KEY,
                 message_id TEXT    NOT NULL,
                 account_id INTEGER NOT NULL,
                 amount     INTEGER NOT NULL
             );
             CREATE TABLE IF NOT EXISTS receiver_inbox (
                 message_id TEXT    PRIMARY KEY,
                 times      INTEGER NOT NULL
             );",
        )?;
        Ok(Receiver { conn, dedup })
    }

    pub fn dedups(&self) -> bool {
        self.dedup
    }

    /// Receives one message; returns whether the user was shown it (false:
    /// a repeat the dedup caught).
    ///
    /// # Errors
    /// Storage errors.
    pub fn receive(&self, n: &Notification) -> Result<bool, Error> {
        let tx = Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)?;
        // Every arrival is counted; only the deduplicating receiver lets
        // the count decide, as our inbox's unique key does.
        let times: u32 = tx.query_row(
            "INSERT INTO receiver_inbox(message_id, times) VALUES (?1, 1)
             ON CONFLICT(message_id) DO UPDATE SET times = times + 1 RETURNING times",
            params![n.message_id],
            |r| r.get(0),
        )?;
        if self.dedup && times > 1 {
            tx.commit()?;
            return Ok(false);
        }
        tx.execute(
            "INSERT INTO shown(message_id, account_id, amount) VALUES (?1, ?2, ?3)",
            params![n.message_id, n.account_id, n.amount],
        )?;
        tx.commit()?;
        Ok(true)
    }

    /// Everything shown so far, in order.
    ///
    /// # Errors
    /// Storage errors.
    pub fn shown(&self) -> Result<Vec<Notification>, Error> {
        let mut stmt = self
            .conn
            .prepare("SELECT message_id, account_id, amount FROM shown ORDER BY seq")?;
        let rows = stmt.query_map([], |r| {
            Ok(Notification {
                message_id: r.get(0)?,
                account_id: r.get(1)?,
                amount: r.get(2)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// How many times each message arrived, shown or not: `(message_id,
    /// times)`, in the order they first arrived.
    pub(crate) fn arrivals(&self) -> Result<Vec<(String, u32)>, Error> {
        let mut stmt = self
            .conn
            .prepare("SELECT message_id, times FROM receiver_inbox ORDER BY rowid")?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Forgets everything (the lab's reset).
    ///
    /// # Errors
    /// Storage errors.
    pub fn clear(&self) -> Result<(), Error> {
        self.conn
            .execute_batch("DELETE FROM shown; DELETE FROM receiver_inbox;")?;
        Ok(())
    }
}

/// Where the side-effect lab fails on purpose: the handler's own fault
/// points, or one of this lab's three around the notification. A crash
/// fires as [`Error::SimulatedCrash`] with [`Crash::as_str`] as the point.
///
/// Unlike the handler's, two of this lab's points fire **after** `COMMIT`:
/// what committed stays committed, and only what follows is lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Crash {
    /// One of the handler's own fault points, inside the transaction
    /// (before `COMMIT`: rolled back).
    Handler(Fault),
    /// Before `COMMIT`: the notification was sent, then the transaction
    /// failed. The credit is rolled back; the notification cannot be.
    AfterSendBeforeCommit,
    /// After `COMMIT`: the credit is kept, the handler died before sending
    /// the notification, which is never sent.
    AfterCommitBeforeSend,
    /// After `COMMIT` (the dispatcher's own, long after the credit): the
    /// message was sent, then the dispatcher died before marking it sent,
    /// so the next round sends it again.
    AfterSendBeforeMark,
}

impl Crash {
    /// The points [`deliver`] accepts: the handler's two, then the two
    /// around the side effect.
    pub const DELIVER: [Crash; 4] = [
        Crash::Handler(Fault::AfterInsert),
        Crash::Handler(Fault::AfterUpdate),
        Crash::AfterSendBeforeCommit,
        Crash::AfterCommitBeforeSend,
    ];

    /// The point [`dispatch_one`] accepts.
    pub const DISPATCH: [Crash; 1] = [Crash::AfterSendBeforeMark];

    /// The stable name used by the worker protocol and the page.
    pub fn as_str(self) -> &'static str {
        match self {
            Crash::Handler(fault) => fault.as_str(),
            Crash::AfterSendBeforeCommit => "after_send_before_commit",
            Crash::AfterCommitBeforeSend => "after_commit_before_send",
            Crash::AfterSendBeforeMark => "after_send_before_mark",
        }
    }

    /// The error this crash point fires as.
    pub fn crash(self) -> Error {
        Error::SimulatedCrash {
            point: self.as_str(),
        }
    }
}

/// Delivers `event` with the atomic handler and notifies by `strategy`.
/// `crash` may be [`Crash::AfterSendBeforeCommit`] (the transaction fails
/// after the send) or [`Crash::AfterCommitBeforeSend`]; the handler's own
/// fault points ([`Crash::Handler`]) are passed to the handler itself.
///
/// # Errors
/// As [`crate::apply()`]; a crash is [`Error::SimulatedCrash`].
pub fn deliver(
    conn: &Connection,
    receiver: &Receiver,
    event: &Event,
    strategy: Strategy,
    crash: Option<Crash>,
) -> Result<Outcome, Error> {
    let handler_fault = match crash {
        Some(Crash::Handler(fault)) => Some(fault),
        _ => None,
    };
    let mut delivery = Delivery::new(event.clone(), handler_fault);
    // Run the transaction up to, not including, COMMIT.
    while delivery.next_step() != Some(Step::Commit) {
        if let Err(err) = delivery.step(conn) {
            delivery.abort(conn)?;
            return Err(err);
        }
    }
    let credited = matches!(delivery.pending(), Some(Outcome::Applied(_)));
    let notification = Notification {
        message_id: direct_id(event.source(), event.event_id()),
        account_id: event.account_id(),
        amount: event.amount(),
    };
    match strategy {
        Strategy::SendBeforeCommit if credited => {
            receiver.receive(&notification)?; // out of our hands now
        }
        Strategy::Outbox if credited => {
            conn.execute(
                SQL_ENQUEUE,
                params![
                    event.source(),
                    event.event_id(),
                    event.account_id(),
                    event.amount()
                ],
            )
            .map_err(|e| rollback(conn, &mut delivery, e.into()))?;
            // AUTOINCREMENT counts on past 2^53-1 (an imported sequence may
            // sit at it): an id the page could not read back is refused.
            if !schema::MESSAGE_ID.contains(&conn.last_insert_rowid()) {
                let end = schema::MESSAGE_ID.end();
                let exhausted = Error::storage_with(
                    StorageCode::Unusable,
                    format!("outbox message ids are exhausted (the outbox's sequence is at {end})"),
                );
                return Err(rollback(conn, &mut delivery, exhausted));
            }
        }
        _ => {}
    }
    if crash == Some(Crash::AfterSendBeforeCommit) {
        delivery.abort(conn)?;
        return Err(Crash::AfterSendBeforeCommit.crash());
    }
    let outcome = match delivery.step(conn)? {
        Progress::Done(outcome) => outcome,
        Progress::Next(_) => return Err(Error::storage("the transaction did not end at COMMIT")),
    };
    if strategy == Strategy::SendAfterCommit && credited {
        if crash == Some(Crash::AfterCommitBeforeSend) {
            return Err(Crash::AfterCommitBeforeSend.crash());
        }
        receiver.receive(&notification)?;
    }
    Ok(outcome)
}

/// Written in the credit's transaction: the notification, to be sent later.
const SQL_ENQUEUE: &str = "INSERT INTO outbox(source, event_id, account_id, amount)
VALUES (?1, ?2, ?3, ?4)";

fn rollback(conn: &Connection, delivery: &mut Delivery, err: Error) -> Error {
    match delivery.abort(conn) {
        Ok(()) => err,
        Err(rb) => Error::storage(format!("{err}; then ROLLBACK failed: {rb}")),
    }
}

/// The id the receiver deduplicates a direct send by.
pub(crate) fn direct_id(source: &str, event_id: &str) -> String {
    format!("event:{source}/{event_id}")
}

/// The id the receiver deduplicates an outbox message by.
pub(crate) fn outbox_id(message_id: i64) -> String {
    format!("{OUTBOX_ID}{message_id}")
}

/// How the id of an outbox message starts.
pub(crate) const OUTBOX_ID: &str = "outbox:";

/// The dispatcher's unit of work: take the oldest unsent message, send it,
/// mark it sent. `crash = Some(Crash::AfterSendBeforeMark)` dies between
/// sending and marking, so the next round sends it again.
///
/// Returns the message id sent, or `None` when the outbox is drained.
///
/// # Errors
/// Storage errors; the crash as [`Error::SimulatedCrash`].
pub fn dispatch_one(
    conn: &Connection,
    receiver: &Receiver,
    crash: Option<Crash>,
) -> Result<Option<i64>, Error> {
    let Some(id) = send_next(conn, receiver)? else {
        return Ok(None);
    };
    if crash == Some(Crash::AfterSendBeforeMark) {
        return Err(Crash::AfterSendBeforeMark.crash());
    }
    conn.execute(
        "UPDATE outbox SET sent_at = (SELECT now FROM lab_clock) WHERE message_id = ?1",
        params![id],
    )?;
    Ok(Some(id))
}

/// The first half of a round: sends the oldest unsent message and returns
/// its id, without marking it sent.
pub(crate) fn send_next(conn: &Connection, receiver: &Receiver) -> Result<Option<i64>, Error> {
    let next: Option<(i64, i64, i64)> = conn
        .query_row(
            "SELECT message_id, account_id, amount FROM outbox
             WHERE sent_at IS NULL ORDER BY message_id LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()?;
    let Some((id, account_id, amount)) = next else {
        return Ok(None);
    };
    receiver.receive(&Notification {
        message_id: outbox_id(id),
        account_id,
        amount,
    })?;
    Ok(Some(id))
}

/// Dispatches until the outbox is drained; returns how many were sent.
///
/// # Errors
/// As [`dispatch_one`].
pub fn dispatch_all(conn: &Connection, receiver: &Receiver) -> Result<usize, Error> {
    let mut sent = 0;
    while dispatch_one(conn, receiver, None)?.is_some() {
        sent += 1;
    }
    Ok(sent)
}

/// One outbox row, for display.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OutboxRow {
    pub message_id: i64,
    pub source: String,
    pub event_id: String,
    pub account_id: i64,
    pub amount: i64,
    pub sent_at: Option<i64>,
}

/// The outbox, oldest first.
///
/// # Errors
/// Storage errors.
pub fn rows(conn: &Connection) -> Result<Vec<OutboxRow>, Error> {
    let mut stmt = conn.prepare(
        "SELECT message_id, source, event_id, account_id, amount, sent_at FROM outbox ORDER BY message_id",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok(OutboxRow {
            message_id: r.get(0)?,
            source: r.get(1)?,
            event_id: r.get(2)?,
            account_id: r.get(3)?,
            amount: r.get(4)?,
            sent_at: r.get(5)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}
