//! Retention: how long the inbox must remember.
//!
//! An inbox row is the only proof that an event was processed. Delete it
//! and the event is new again: a redelivery after the purge is **applied a
//! second time**. The rule the article gives: keep rows longer than the
//! sender's redelivery window *and* any manual resend an operator might do.
//!
//! The lab's time is a simulated clock (`lab_clock`, milliseconds), so a
//! reader can "wait three days" with a button. [`purge`] deletes in small
//! batches, each its own transaction: interrupting it at any point leaves a
//! consistent database (deleting inbox rows never touches a balance), just
//! with fewer rows purged.

use rusqlite::{params, Connection, OptionalExtension};

use crate::core::error::{Error, Reason};
use crate::core::event::Field;
use crate::core::schema;

/// The input naming the lab clock and the retention window.
const CLOCK: Field = Field::new("clock");

crate::core::error::code_enum! {
    /// The `code` of the retention refusals (field `clock`).
    RetentionCode {
        /// The lab clock was asked to go back.
        ClockBackwards => "clock_backwards",
        /// A retention window below 0 or an empty batch.
        BadWindow => "bad_window",
        /// The clock would pass its largest time. Params: `ms`, `now`, `max`.
        ClockLimit => "clock_limit",
    }
}

/// The lab clock's current time, in milliseconds.
///
/// # Errors
/// Storage errors.
pub fn now(conn: &Connection) -> Result<i64, Error> {
    Ok(conn.query_row("SELECT now FROM lab_clock", [], |r| r.get(0))?)
}

/// When the inbox row of `(source, event_id)` was received, on the lab
/// clock; `None` when there is none (never delivered, or purged).
///
/// # Errors
/// Storage errors.
pub fn received_at(conn: &Connection, source: &str, event_id: &str) -> Result<Option<i64>, Error> {
    Ok(conn
        .query_row(
            "SELECT received_at FROM inbox WHERE source = ?1 AND event_id = ?2",
            params![source, event_id],
            |r| r.get(0),
        )
        .optional()?)
}

/// Moves the lab clock forward by `ms` (never back, never past
/// [`schema::TIME`]'s end); returns the new time.
///
/// The clock stamps `received_at` and `sent_at`, so a time the health check
/// refuses to read would make the next delivery write a row that leaves the
/// database unusable: the guard sits in the UPDATE, like the credit's.
///
/// # Errors
/// [`Error::InvalidInput`] for a negative step or one past the clock's
/// largest time (nothing changes); storage errors.
pub fn advance(conn: &Connection, ms: i64) -> Result<i64, Error> {
    if ms < 0 {
        return Err(refuse(Reason::new(
            RetentionCode::ClockBackwards,
            "the clock only moves forward",
        )));
    }
    let max = *schema::TIME.end();
    let moved: Option<i64> = conn
        .query_row(
            "UPDATE lab_clock SET now = now + ?1 WHERE id = 1 AND now <= ?2 - ?1 RETURNING now",
            params![ms, max],
            |r| r.get(0),
        )
        .optional()?;
    match moved {
        Some(now) => Ok(now),
        None => {
            let now = self::now(conn)?;
            Err(refuse(
                Reason::new(
                    RetentionCode::ClockLimit,
                    format!("the clock is at {now} ms and cannot move {ms} ms more: its largest time is {max} ms"),
                )
                .with("ms", ms)
                .with("now", now)
                .with("max", max),
            ))
        }
    }
}

/// Deletes inbox rows received more than `keep_ms` ago, `batch` rows per
/// transaction; returns how many were deleted. A row whose event's
/// notification still waits in the outbox is kept until it is sent: the
/// message exists only because the inbox applied its event, and a database
/// holding it without that proof is one the import and the health check
/// refuse (`core::stored`).
///
/// # Errors
/// [`Error::InvalidInput`] for a negative window or an empty batch; busy and
/// storage errors (rows of finished batches stay deleted).
pub fn purge(conn: &Connection, keep_ms: i64, batch: usize) -> Result<usize, Error> {
    if keep_ms < 0 || batch == 0 {
        return Err(refuse(Reason::new(
            RetentionCode::BadWindow,
            "the window must be ≥ 0 and the batch ≥ 1",
        )));
    }
    let batch = i64::try_from(batch).unwrap_or(i64::MAX);
    let mut total = 0;
    loop {
        let deleted = conn.execute(
            "DELETE FROM inbox WHERE rowid IN (
                 SELECT rowid FROM inbox
                 WHERE received_at < (SELECT now FROM lab_clock) - ?1
                   AND NOT EXISTS (SELECT 1 FROM outbox
                                   WHERE outbox.sent_at IS NULL
                                     AND outbox.source = inbox.source
                                     AND outbox.event_id = inbox.event_id)
                 LIMIT ?2)",
            params![keep_ms, batch],
        )?;
        total += deleted;
        if deleted == 0 {
            return Ok(total);
        }
    }
}

fn refuse(reason: Reason) -> Error {
    Error::refused(CLOCK, reason)
}
