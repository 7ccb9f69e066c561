//! What a crash-lab try runs under the crash point: a burst of applies, or
//! the outbox dispatcher, on a database in a chosen journal mode.

use rusqlite::Connection;
use serde::Serialize;

use crate::core::error::Error;
use crate::{apply, Event};

crate::core::named::named! {
    /// Journal modes the lab sweeps, always with `synchronous=FULL`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
    #[serde(rename_all = "snake_case")]
    pub enum JournalMode("journal mode") {
        /// Rollback journal: `journal_mode=DELETE`.
        Delete => "delete",
        /// `journal_mode=WAL` with `locking_mode=EXCLUSIVE` (no shared memory
        /// needed, which OPFS cannot offer).
        Wal => "wal",
    }
}

/// Sets the journal mode and durability on a connection, before it reads.
///
/// # Errors
/// Storage errors, or SQLite refusing the mode.
pub fn configure(conn: &Connection, mode: JournalMode) -> Result<(), Error> {
    if mode == JournalMode::Wal {
        conn.execute_batch("PRAGMA locking_mode = EXCLUSIVE")?;
    }
    let wanted = mode.as_str();
    let got: String =
        conn.query_row(&format!("PRAGMA journal_mode = {wanted}"), [], |r| r.get(0))?;
    if !got.eq_ignore_ascii_case(wanted) {
        return Err(Error::storage(format!(
            "journal_mode {wanted} refused (got {got})"
        )));
    }
    conn.execute_batch("PRAGMA synchronous = FULL")?;
    Ok(())
}

/// The workload's events: `crash-1`, `crash-2`, … with amounts 1, 2, 4, …
///
/// # Errors
/// [`Error::InvalidInput`] for more than 29 events (amounts must stay ≤ 10^9).
pub fn events(n: usize) -> Result<Vec<Event>, Error> {
    if !(1..=29).contains(&n) {
        return Err(Error::invalid(
            crate::Field::AMOUNT,
            "between 1 and 29 events",
        ));
    }
    (0..n)
        .map(|i| Event::new("crash-lab", format!("crash-{}", i + 1), 1, 1 << i))
        .collect()
}

/// Applies every event in order; `ack(i)` runs after event `i` committed —
/// the moment a real handler would answer 200.
///
/// # Errors
/// The first failing apply.
pub fn workload(
    conn: &Connection,
    events: &[Event],
    mut ack: impl FnMut(usize),
) -> Result<(), Error> {
    for (i, e) in events.iter().enumerate() {
        apply(conn, e, None)?;
        ack(i);
    }
    Ok(())
}

/// What a try runs under the crash point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Workload {
    /// One apply, or a burst of them ([`workload`]).
    Apply,
    /// The outbox dispatcher draining pending notifications to a receiver
    /// that deduplicates by message id, or not ([`crate::labs::scheme_ends::outbox`]).
    Dispatch { dedup: bool },
}
