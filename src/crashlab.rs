//! The crash lab: kill the handler at every storage operation of a commit,
//! reopen, and prove the recovery is atomic.
//!
//! One *try* runs a workload — [`workload`]: one apply, or a burst of
//! several — through the [`iolog`](crate::storage::iolog) shim armed to
//! crash after k operations. The process (natively) or the worker (in the
//! browser) dies right there. A fresh connection then reopens the database,
//! letting SQLite recover it, and [`classify`] checks:
//! * `PRAGMA integrity_check` is `ok`;
//! * the state is exactly "before" or "after" each event: an inbox row
//!   exists **if and only if** its credit does (amounts are distinct powers
//!   of two, so the balance says exactly which events were credited);
//! * no event whose success was acknowledged to the sender is missing.
//!
//! Invariant: the checks only read. A try's verdict never depends on how
//! the database was written, only on what survived.

use rusqlite::Connection;
use serde::Serialize;

use crate::error::Error;
use crate::{apply, tables, Event};

/// Journal modes the lab sweeps, always with `synchronous=FULL`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum JournalMode {
    /// Rollback journal: `journal_mode=DELETE`.
    Delete,
    /// `journal_mode=WAL` with `locking_mode=EXCLUSIVE` (no shared memory
    /// needed, which OPFS cannot offer).
    Wal,
}

impl JournalMode {
    pub fn as_str(self) -> &'static str {
        match self {
            JournalMode::Delete => "delete",
            JournalMode::Wal => "wal",
        }
    }
}

impl std::str::FromStr for JournalMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "delete" => Ok(JournalMode::Delete),
            "wal" => Ok(JournalMode::Wal),
            other => Err(format!(
                "unknown journal mode {other:?}: expected delete or wal"
            )),
        }
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
    let wanted = match mode {
        JournalMode::Delete => "delete",
        JournalMode::Wal => "wal",
    };
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
            crate::Field::Amount,
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

/// What a recovered database looked like.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Recovered {
    pub integrity: String,
    /// Events whose inbox row exists.
    pub registered: Vec<usize>,
    /// Events whose credit is in the balance (decoded from its bits).
    pub credited: Vec<usize>,
    /// How many events were acknowledged before the crash.
    pub acknowledged: usize,
}

/// The verdict of one try.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Integrity ok and every event entirely there or entirely absent.
    Atomic,
    /// Something half-done survived (or integrity failed).
    Partial,
    /// Atomic, but an acknowledged event is missing.
    LostAcknowledged,
}

impl Recovered {
    pub fn outcome(&self) -> Outcome {
        let prefix = |v: &[usize]| v.iter().enumerate().all(|(i, &e)| i == e);
        if self.integrity != "ok" || self.registered != self.credited || !prefix(&self.registered) {
            Outcome::Partial
        } else if self.registered.len() < self.acknowledged {
            Outcome::LostAcknowledged
        } else {
            Outcome::Atomic
        }
    }
}

/// Reads a recovered database (opening it has already run SQLite's
/// recovery) and describes what survived of `events`.
///
/// # Errors
/// Storage errors while reading.
pub fn classify(
    conn: &Connection,
    events: &[Event],
    acknowledged: usize,
) -> Result<Recovered, Error> {
    let integrity = integrity(conn)?;
    let t = tables::snapshot(conn)?;
    let balance = t.balance(1).unwrap_or(-1);
    let registered = events
        .iter()
        .enumerate()
        .filter(|(_, e)| {
            t.inbox
                .iter()
                .any(|r| r.source == e.source() && r.event_id == e.event_id())
        })
        .map(|(i, _)| i)
        .collect();
    let credited = (0..events.len())
        .filter(|i| balance >= 0 && balance & (1 << i) != 0)
        .collect();
    Ok(Recovered {
        integrity,
        registered,
        credited,
        acknowledged,
    })
}

/// What a try runs under the crash point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Workload {
    /// One apply, or a burst of them ([`workload`]).
    Apply,
    /// The outbox dispatcher draining pending notifications to a receiver
    /// that deduplicates by message id, or not ([`crate::outbox`]).
    Dispatch { dedup: bool },
}

/// What a receiver saw after a dispatcher crash and the restarted
/// dispatcher's run: how many times each message was shown to the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Delivered {
    pub integrity: String,
    /// `shown[i]`: times message `outbox:<i+1>` was shown.
    pub shown: Vec<usize>,
}

impl Delivered {
    /// [`Outcome::Atomic`]: every message shown exactly once;
    /// [`Outcome::Partial`]: one shown twice (or integrity failed);
    /// [`Outcome::LostAcknowledged`]: one never shown.
    pub fn outcome(&self) -> Outcome {
        if self.integrity != "ok" || self.shown.iter().any(|&n| n > 1) {
            Outcome::Partial
        } else if self.shown.contains(&0) {
            Outcome::LostAcknowledged
        } else {
            Outcome::Atomic
        }
    }
}

/// After a dispatcher crash: restarts the dispatcher (drains the outbox)
/// and counts what the receiver showed for each of `messages` messages.
///
/// # Errors
/// Storage errors.
pub fn classify_dispatch(
    conn: &Connection,
    receiver: &crate::outbox::Receiver,
    messages: usize,
) -> Result<Delivered, Error> {
    let integrity = integrity(conn)?;
    crate::outbox::dispatch_all(conn, receiver)?;
    let shown = receiver.shown()?;
    let counts = (1..=messages)
        .map(|id| {
            let message_id = format!("outbox:{id}");
            shown.iter().filter(|s| s.message_id == message_id).count()
        })
        .collect();
    Ok(Delivered {
        integrity,
        shown: counts,
    })
}

/// `PRAGMA integrity_check`'s answer: `"ok"`, or its findings joined.
///
/// # Errors
/// Storage errors.
pub fn integrity(conn: &Connection) -> Result<String, Error> {
    let lines: Vec<String> = conn
        .prepare("PRAGMA integrity_check")?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    Ok(lines.join("; "))
}

/// What a try found after recovery.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Recovery {
    Apply(Recovered),
    Dispatch(Delivered),
}

impl Recovery {
    pub fn outcome(&self) -> Outcome {
        match self {
            Recovery::Apply(r) => r.outcome(),
            Recovery::Dispatch(d) => d.outcome(),
        }
    }
}

/// One row of the sweep's table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Row {
    /// Crash after this many operations.
    pub k: usize,
    /// The last operation that reached storage (`None` for k = 0).
    pub last: Option<crate::storage::iolog::IoOp>,
    pub outcome: Outcome,
    pub recovered: Recovery,
}

/// The sweep's summary line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Summary {
    pub mode: JournalMode,
    pub crash_points: usize,
    pub atomic: usize,
    pub partial: usize,
    pub lost_acknowledged: usize,
}

impl Summary {
    pub fn of(mode: JournalMode, rows: &[Row]) -> Summary {
        let count = |o: Outcome| rows.iter().filter(|r| r.outcome == o).count();
        Summary {
            mode,
            crash_points: rows.len(),
            atomic: count(Outcome::Atomic),
            partial: count(Outcome::Partial),
            lost_acknowledged: count(Outcome::LostAcknowledged),
        }
    }
}
