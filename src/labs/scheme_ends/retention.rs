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

use rusqlite::{params, Connection};

use crate::core::error::{Error, Reason};
use crate::core::event::Field;

/// The input naming the lab clock and the retention window.
pub const CLOCK: Field = Field::new("clock");

crate::core::error::code_enum! {
    /// The `code` of the retention refusals (field `clock`).
    RetentionCode {
        /// The lab clock was asked to go back.
        ClockBackwards => "clock_backwards",
        /// A retention window below 0 or an empty batch.
        BadWindow => "bad_window",
    }
}

/// The lab clock's current time, in milliseconds.
///
/// # Errors
/// Storage errors.
pub fn now(conn: &Connection) -> Result<i64, Error> {
    Ok(conn.query_row("SELECT now FROM lab_clock", [], |r| r.get(0))?)
}

/// Moves the lab clock forward by `ms` (never back); returns the new time.
///
/// # Errors
/// [`Error::InvalidInput`] for a negative step; storage errors.
pub fn advance(conn: &Connection, ms: i64) -> Result<i64, Error> {
    if ms < 0 {
        return Err(Error::refused(
            CLOCK,
            Reason::new(
                RetentionCode::ClockBackwards,
                "the clock only moves forward",
            ),
        ));
    }
    Ok(conn.query_row(
        "UPDATE lab_clock SET now = now + ?1 WHERE id = 1 RETURNING now",
        params![ms],
        |r| r.get(0),
    )?)
}

/// Deletes inbox rows received more than `keep_ms` ago, `batch` rows per
/// transaction; returns how many were deleted.
///
/// # Errors
/// [`Error::InvalidInput`] for a negative window or an empty batch; busy and
/// storage errors (rows of finished batches stay deleted).
pub fn purge(conn: &Connection, keep_ms: i64, batch: usize) -> Result<usize, Error> {
    if keep_ms < 0 || batch == 0 {
        return Err(Error::refused(
            CLOCK,
            Reason::new(
                RetentionCode::BadWindow,
                "the window must be ≥ 0 and the batch ≥ 1",
            ),
        ));
    }
    let batch = i64::try_from(batch).unwrap_or(i64::MAX);
    let mut total = 0;
    loop {
        let deleted = conn.execute(
            "DELETE FROM inbox WHERE rowid IN (
                 SELECT rowid FROM inbox
                 WHERE received_at < (SELECT now FROM lab_clock) - ?1
                 LIMIT ?2)",
            params![keep_ms, batch],
        )?;
        total += deleted;
        if deleted == 0 {
            return Ok(total);
        }
    }
}
